#!/bin/sh
# readme_options.sh — README.md's option and environment tables are the CLI's own (runtime/cli.c's
# cli_opts and cli_env, which -h prints): the lines between `<!-- options:begin -->` and
# `<!-- options:end -->` (and `<!-- env:begin -->`/`<!-- env:end -->`) must be what dt-options-md
# prints. Usage: readme_options.sh BUILD_DIR [--update] (--update rewrites them).
# Exit status: 0 when they agree (or were updated), 1 otherwise, with the diff.
set -u
build=${1:?usage: readme_options.sh BUILD_DIR [--update]}
here=$(cd "$(dirname "$0")/.." && pwd)
readme=$here/README.md
gen=$build/tests/tools/dt-options-md
[ -x "$gen" ] || { echo "readme_options.sh: $gen not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$readme" "$tmp/readme"
for part in options env; do
	"$gen" "$part" >"$tmp/table" || exit 1
	grep -q "^<!-- $part:begin -->\$" "$tmp/readme" && grep -q "^<!-- $part:end -->\$" "$tmp/readme" ||
		{ echo "readme_options.sh: README.md has no <!-- $part:begin/end --> markers" >&2; exit 1; }
	awk -v t="$tmp/table" -v b="<!-- $part:begin -->" -v e="<!-- $part:end -->" '
		$0 == b { print; while ((getline l < t) > 0) print l; skip = 1; next }
		$0 == e { skip = 0 }
		!skip { print }' "$tmp/readme" >"$tmp/next"
	mv "$tmp/next" "$tmp/readme"
done
if cmp -s "$readme" "$tmp/readme"; then
	echo "README.md's option table is the CLI's"
	exit 0
fi
if [ "${2:-}" = --update ]; then
	cp "$tmp/readme" "$readme"
	echo "README.md's option table updated"
	exit 0
fi
echo "README.md's option tables differ from the CLI's (runtime/cli.c); run: sh tests/readme_options.sh $build --update" >&2
diff -u "$readme" "$tmp/readme" >&2
exit 1
