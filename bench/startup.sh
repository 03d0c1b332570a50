#!/usr/bin/env bash
# bench/startup.sh — start-up to exit, dwarftrace against bpftrace, measured in the same run.
#
#   bash bench/startup.sh [DWARFTRACE] [N]
#
# Four programs: `BEGIN { exit(); }` (compile, load, run BEGIN, exit), a small profile one-liner
# that runs one second (`profile:hz:99 { @[comm] = count(); } interval:s:1 { exit(); }`), whose
# wall time is the one second plus start-up and teardown, and two with C types (below). Each tool runs each program N times
# (default 11), interleaved so that a noisy neighbour hurts both alike; the table shows the median
# wall time, the median peak RSS (from GNU time's %M), and dwarftrace / bpftrace ratios. It is a
# measurement, not a test: nothing here passes or fails on a number. Needs root (BPF) and
# /usr/bin/time (package `time`); bpftrace's column is left out when it is not installed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DT=${1:-$ROOT/build/runtime/dwarftrace}
N=${2:-11}
[ -x "$DT" ] || { echo "startup.sh: $DT is not built (bash bootstrap.sh build)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "startup.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "startup.sh: run as root (BPF)" >&2; exit 1; }
BT=$(command -v bpftrace || true)

# The last two measure C types: a kernel struct from BTF, and a script definition with a system
# header through clang (dwarftrace loads libclang only for a program that has definitions).
PROGS=("BEGIN { exit(); }"
	"profile:hz:99 { @[comm] = count(); } interval:s:1 { exit(); }"
	'BEGIN { printf("%d\n", curtask->pid); exit(); }'
	$'#include <sys/socket.h>\nstruct x { int a; struct sockaddr sa; };\nBEGIN { printf("%d\\n", sizeof(struct x)); exit(); }')
LABELS=("BEGIN { exit(); }" "profile 99 Hz, 1 s" "curtask->pid (BTF)" "#include + struct")

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# measure TOOL PROG OUTFILE: appends "seconds kib" for one run; a failed run is reported, not hidden.
measure() {
	local tool=$1 prog=$2 out=$3 t0 t1
	# Wall time in ns from date (time's %e has 10 ms steps, too coarse for BEGIN { exit(); });
	# the peak RSS (KiB) from GNU time.
	t0=$(date +%s%N)
	if ! /usr/bin/time -f '%M' -o "$TMP/t" "$tool" -e "$prog" >/dev/null 2>"$TMP/err"; then
		echo "startup.sh: '$tool -e \"$prog\"' failed:" >&2
		tail -n 5 "$TMP/err" >&2
		return 1
	fi
	t1=$(date +%s%N)
	echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }') $(tail -n 1 "$TMP/t")" >>"$out"
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "nan" }'; }

printf 'start-up to exit, median of %d runs each (%s)\n' "$N" "$(uname -r)"
printf '%-22s %12s %12s %8s %12s %12s %8s\n' program "dwarftrace s" "bpftrace s" ratio \
	"dt RSS MiB" "bt RSS MiB" ratio
for i in "${!PROGS[@]}"; do
	prog=${PROGS[$i]}
	: >"$TMP/dt" ; : >"$TMP/bt"
	for _ in $(seq "$N"); do
		measure "$DT" "$prog" "$TMP/dt"
		[ -z "$BT" ] || measure "$BT" "$prog" "$TMP/bt"
	done
	dts=$(cut -d' ' -f1 "$TMP/dt" | median)
	dtm=$(cut -d' ' -f2 "$TMP/dt" | median)
	if [ -n "$BT" ]; then
		bts=$(cut -d' ' -f1 "$TMP/bt" | median)
		btm=$(cut -d' ' -f2 "$TMP/bt" | median)
	else
		bts=nan btm=nan
	fi
	awk -v l="${LABELS[$i]}" -v ds="$dts" -v bs="$bts" -v dm="$dtm" -v bm="$btm" 'BEGIN {
		rs = (bs > 0) ? sprintf("%.2f", ds / bs) : "-"
		rm = (bm > 0) ? sprintf("%.2f", dm / bm) : "-"
		printf "%-22s %12.3f %12s %8s %12.1f %12s %8s\n", l, ds, \
			(bs > 0 ? sprintf("%.3f", bs) : "-"), rs, dm / 1024, \
			(bm > 0 ? sprintf("%.1f", bm / 1024) : "-"), rm
	}'
done
echo "ratio = dwarftrace / bpftrace (lower is better for dwarftrace); RSS is peak resident memory"
