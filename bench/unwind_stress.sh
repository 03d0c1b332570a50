#!/usr/bin/env bash
# bench/unwind_stress.sh — ustack_dwarf under churn: dwarftrace profiles the whole system at 999 Hz
# with ustack_dwarf while hundreds of short processes exec and exit (C targets, shells, python)
# and a python process dlopens and dlcloses libraries in a loop. It checks, and prints one line
# per check, then "stress: PASS" or "stress: FAIL":
#   - dwarftrace exits 0 at the end (no crash, no hang) and printed its maps;
#   - bounded memory: its RSS in the second half never exceeds the first half's peak by more than
#     25% + 16 MiB, and the unwinder's kernel tables (-v "unwind row_pages") stay within budget;
#   - no leaked fds: its open fds in the second half stay within 8 of the first half's peak;
#   - no leaked probes: every BPF program and link id it held (read from /proc/PID/fdinfo) is
#     gone from the kernel once it exited.
#
#   bash bench/unwind_stress.sh [SECONDS (default 120)] [DWARFTRACE] [BUILD_DIR]
#
# The runtime test suite runs it for 25 s (tests/runtime/ustack_dwarf.test).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECS=${1:-120}
DT=${2:-$ROOT/build/runtime/dwarftrace}
BUILD=${3:-$(dirname "$(dirname "$DT")")}
T=$BUILD/tests/targets
PY=/usr/bin/python3
[ -x "$DT" ] || { echo "unwind_stress.sh: $DT is not built" >&2; exit 1; }
[ -x "$T/chain_nofp" ] || { echo "unwind_stress.sh: targets missing in $T" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "unwind_stress.sh: run as root (BPF)" >&2; exit 1; }

TMP=$(mktemp -d)
LOADPIDS=()
cleanup() {
	for p in "${LOADPIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# The tracer: every user stack on the machine, the map cleared every second so that the script's
# own map does not grow with every distinct stack; it stops itself half a second after SECS, so
# that a clear at the same moment cannot leave nothing to print at exit.
"$DT" -v -e "profile:hz:999 { @[ustack_dwarf] = count(); }
	interval:s:1 { clear(@); }
	interval:ms:$((SECS * 1000 + 500)) { exit(); }" >"$TMP/out" 2>"$TMP/err" &
DTPID=$!
for _ in $(seq 100); do grep -q Attaching "$TMP/out" "$TMP/err" 2>/dev/null && break; sleep 0.1; done

# Load 1: short processes (40 ms C chains, static-pie, C++, shells, true) forever.
(
	while :; do
		"$T/chain_nofp" 0.04; "$T/chain_static_nofp" 0.02; "$T/cxx_nofp" virtual 0.02
		/bin/sh -c 'true'; /bin/true; "$T/qsort_cb_nofp" 0.03 & "$T/threads_nofp" 0.03; wait
	done
) >/dev/null 2>&1 &
LOADPIDS+=($!)
# Load 2: dlopen/dlclose of libraries in one long-lived process, burning CPU in between.
"$PY" - "$T/libdlt.so" >/dev/null 2>&1 <<'PYEOF' &
import ctypes, _ctypes, sys, time
libs = [sys.argv[1], "libm.so.6", "libz.so.1", "libbz2.so.1.0", "libexpat.so.1"]
while True:
    for name in libs:
        try:
            h = ctypes.CDLL(name)
        except OSError:
            continue
        s = 0
        for i in range(20000):
            s += i * i
        _ctypes.dlclose(h._handle)
PYEOF
LOADPIDS+=($!)
# Load 3: python processes exec'ing and exiting (a big interpreter with many libraries).
(
	while :; do "$PY" -c 'sum(i*i for i in range(300000))'; done
) >/dev/null 2>&1 &
LOADPIDS+=($!)

# Watch dwarftrace: RSS (KiB), fd count, and the BPF prog/link ids it holds.
: >"$TMP/samples"
: >"$TMP/ids"
start=$(date +%s)
while kill -0 "$DTPID" 2>/dev/null; do
	rss=$(awk '/^VmRSS/{print $2}' /proc/$DTPID/status 2>/dev/null)
	nfd=$(ls /proc/$DTPID/fd 2>/dev/null | wc -l)
	[ -n "$rss" ] && echo "$(( $(date +%s) - start )) $rss $nfd" >>"$TMP/samples"
	grep -hE '^(prog_id|link_id):' /proc/$DTPID/fdinfo/* 2>/dev/null >>"$TMP/ids"
	ls -l /proc/$DTPID/fd 2>/dev/null | awk 'NR > 1 {print $NF}' | sed 's/[0-9]//g' |
		sort | uniq -c >"$TMP/fdkinds.$(( $(date +%s) - start ))"
	sleep 1
done
wait "$DTPID"
status=$?
for p in "${LOADPIDS[@]}"; do kill "$p" 2>/dev/null; done
sleep 0.5

fail=0
check() { # check OK|FAIL TEXT
	echo "stress: $1 $2"
	[ "$1" = OK ] || fail=1
}
nproc_exec=$(grep -c . "$TMP/samples")
[ "$status" -eq 0 ] && grep -q '^@\[' "$TMP/out" && check OK "dwarftrace exited 0 after ${SECS}s" ||
	check FAIL "dwarftrace exit status $status (tail of stderr: $(tail -n 3 "$TMP/err" | tr '\n' ' '))"
# While tracing only: from SECS on, dwarftrace is ending and symbolizing every stack it prints,
# which opens objects and their DWARF — memory for the output, not growth under churn.
read -r rss1 fd1 rss2 fd2 <<<"$(awk -v h=$((SECS / 2)) -v e="$SECS" '
	$1 < h  { if ($2 > r1) r1 = $2; if ($3 > f1) f1 = $3 }
	$1 >= h && $1 < e { if ($2 > r2) r2 = $2; if ($3 > f2) f2 = $3 }
	END { print r1 + 0, f1 + 0, r2 + 0, f2 + 0 }' "$TMP/samples")"
lim=$((rss1 * 125 / 100 + 16384))
[ "$rss2" -le "$lim" ] && check OK "RSS bounded: peak ${rss1} KiB first half, ${rss2} KiB second half" ||
	check FAIL "RSS grew: ${rss1} KiB first half, ${rss2} KiB second half (limit $lim)"
[ "$fd2" -le $((fd1 + 8)) ] && check OK "fds bounded: peak $fd1 first half, $fd2 second half" ||
	{ check FAIL "fds grew: $fd1 first half, $fd2 second half"; ls "$TMP"/fdkinds.* |
	  sort -t. -k2 -n | sed -n '2p;$p' | xargs -I{} sh -c 'echo {}; cat {}'; }
pages=$(sed -n 's/^unwind row_pages \([0-9]*\)\/\([0-9]*\).*/\1 \2/p' "$TMP/err")
read -r used total <<<"${pages:-0 0}"
[ "$total" -gt 0 ] && [ "$used" -le "$total" ] &&
	check OK "unwind tables within budget: $used of $total row pages" ||
	check FAIL "unwind row pages: '$pages'"
leaked=0
for id in $(awk '/^prog_id/{print $2}' "$TMP/ids" | sort -u); do
	bpftool prog show id "$id" >/dev/null 2>&1 && leaked=$((leaked + 1))
done
for id in $(awk '/^link_id/{print $2}' "$TMP/ids" | sort -u); do
	bpftool link show id "$id" >/dev/null 2>&1 && leaked=$((leaked + 1))
done
nids=$(sort -u "$TMP/ids" | wc -l)
[ "$leaked" -eq 0 ] && check OK "no leaked BPF programs or links ($nids ids held, all gone)" ||
	check FAIL "$leaked BPF programs/links still loaded after exit"
grep -E '^(walker (walks|complete|walks_no_tables|requests_sent|requests_lost|stacks_dropped_map_full)|unwind (objects|procs|evictions|requests_served|build_errors)) ' "$TMP/err" |
	tr '\n' ';' | sed 's/;$/\n/; s/^/stress: totals: /'
[ "$fail" -eq 0 ] && echo "stress: PASS" || echo "stress: FAIL"
exit "$fail"
