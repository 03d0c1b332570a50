#!/bin/sh
# run.sh — golden tests of the language front end. For each tests/golden/lang/NAME.dt and each
# expected file next to it (NAME.tokens, NAME.ast, NAME.checked, NAME.types, NAME.diag), runs
# `dt-langdump --MODE` on the script against the fake tracefs in tests/golden/lang/tracefs and
# diffs the output with the expected file. NAME.args, if present, holds positional parameters.
# Usage: run.sh BUILD_DIR [--update]. Exit status: 0 when every output matches, 1 otherwise.
set -u
build=${1:?usage: run.sh BUILD_DIR [--update]}
update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
dump=$build/tests/tools/dt-langdump
[ -x "$dump" ] || dump=$build/dt-langdump
if [ ! -x "$dump" ]; then
	echo "run.sh: dt-langdump not found under $build" >&2
	exit 1
fi
# Absolute: the loop runs in lang/ (a relative BUILD_DIR made every output "not found", and
# --update then wrote that into every expected file).
dump=$(cd "$(dirname "$dump")" && pwd)/$(basename "$dump")
dir=$here/lang
cd "$dir" || exit 1
pass=0 fail=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for dt in *.dt; do
	name=${dt%.dt}
	args=
	[ -f "$name.args" ] && args=$(cat "$name.args")
	opts=
	[ -f "$name.opts" ] && opts=$(cat "$name.opts") # dt-langdump options: --test, --bench
	for mode in tokens ast checked types diag; do
		exp=$name.$mode
		[ -f "$exp" ] || continue
		# shellcheck disable=SC2086
		"$dump" --$mode $opts --tracefs tracefs --name "$dt" "$dt" $args >"$tmp" 2>&1
		if [ "$update" = "--update" ]; then
			cp "$tmp" "$exp"
			continue
		fi
		if diff -u "$exp" "$tmp" >/dev/null; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL: $exp"
			diff -u "$exp" "$tmp" | head -40
		fi
	done
done
[ "$update" = "--update" ] && { echo "updated"; exit 0; }
echo "golden/lang: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
