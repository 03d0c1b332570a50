#!/bin/sh
# readme_options.sh — README.md's option table is the CLI's own (runtime/cli.c's cli_opts, which
# -h prints): the lines between `<!-- options:begin -->` and `<!-- options:end -->` must be what
# dt-options-md prints. Usage: readme_options.sh BUILD_DIR [--update] (--update rewrites them).
# Exit status: 0 when they agree (or were updated), 1 otherwise, with the diff.
set -u
build=${1:?usage: readme_options.sh BUILD_DIR [--update]}
here=$(cd "$(dirname "$0")/.." && pwd)
readme=$here/README.md
gen=$build/tests/tools/dt-options-md
[ -x "$gen" ] || { echo "readme_options.sh: $gen not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" >"$tmp/table" || exit 1
grep -q '^<!-- options:begin -->$' "$readme" && grep -q '^<!-- options:end -->$' "$readme" ||
	{ echo "readme_options.sh: README.md has no <!-- options:begin/end --> markers" >&2; exit 1; }
awk -v t="$tmp/table" '
	/^<!-- options:begin -->$/ { print; while ((getline l < t) > 0) print l; skip = 1; next }
	/^<!-- options:end -->$/ { skip = 0 }
	!skip { print }' "$readme" >"$tmp/readme"
if cmp -s "$readme" "$tmp/readme"; then
	echo "README.md's option table is the CLI's"
	exit 0
fi
if [ "${2:-}" = --update ]; then
	cp "$tmp/readme" "$readme"
	echo "README.md's option table updated"
	exit 0
fi
echo "README.md's option table differs from the CLI's (runtime/cli.c); run: sh tests/readme_options.sh $build --update" >&2
diff -u "$readme" "$tmp/readme" >&2
exit 1
