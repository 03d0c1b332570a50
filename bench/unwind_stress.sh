#!/usr/bin/env bash
# bench/unwind_stress.sh — ustack_dwarf under churn: dwarftrace profiles the whole system at 999 Hz
# with ustack_dwarf while short processes exec and exit at a steady rate (C targets, one of them
# dlopening a library, static-pie, C++, threads, shells, python) and two python processes dlopen
# and dlclose libraries in a loop. It prints dwarftrace's RSS, open fds and BPF fds over time, the
# BPF objects on the system before and after, the exec rate the tracer itself counted, and one
# line per check, then "stress: PASS" or "stress: FAIL":
#   - dwarftrace exits 0 at the end (no crash, no hang), printed its maps, and a sanitizer build
#     reported nothing;
#   - bounded memory: its RSS grows over the second half of tracing by less than 1 KiB per
#     process exec'd in that half (state kept per exited process was ~5 KiB: issue 10; not judged
#     for an ASan build, whose quarantine keeps freed memory), and the
#     unwinder's kernel tables (-v "unwind row_pages") stay within budget;
#   - no leaked fds: its open fds in the second half stay within 8 of the first half's peak;
#   - nothing left behind: every BPF program, map and link id it held (from /proc/PID/fdinfo) is
#     gone from the kernel once it has exited.
# The RSS while dwarftrace prints at exit (naming the stacks of the last second) is shown too.
#
#   bash bench/unwind_stress.sh [SECONDS (default 600)] [DWARFTRACE] [BUILD_DIR]
#   RATE=N (default 80): processes started per second by the load.
#
# The runtime test suite runs it for 25 s (tests/runtime/ustack_dwarf.test); the bench is the
# 10-minute run, under nice: `nice -n 5 bash bench/unwind_stress.sh`.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECS=${1:-600}
DT=${2:-$ROOT/build/runtime/dwarftrace}
BUILD=${3:-$(dirname "$(dirname "$DT")")}
RATE=${RATE:-80}
T=$BUILD/tests/targets
PY=/usr/bin/python3
[ -x "$DT" ] || { echo "unwind_stress.sh: $DT is not built" >&2; exit 1; }
[ -x "$T/chain_nofp" ] || { echo "unwind_stress.sh: targets missing in $T" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "unwind_stress.sh: run as root (BPF)" >&2; exit 1; }
command -v bpftool >/dev/null || { echo "unwind_stress.sh: bpftool is needed" >&2; exit 1; }

TMP=$(mktemp -d)
LOADPIDS=()
cleanup() {
	for p in "${LOADPIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# BPF objects on the system: "progs maps links".
bpf_objects() {
	local k n out=""
	for k in prog map link; do
		n=$(bpftool -j "$k" show 2>/dev/null | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>/dev/null)
		out="$out ${n:-?}"
	done
	echo "${out# }"
}
before=$(bpf_objects)

# The tracer: every user stack on the machine, the map cleared every second so that the script's
# own map does not grow with every distinct stack, and every exec counted (the churn achieved);
# it stops itself half a second after SECS, so that a clear at the same moment cannot leave
# nothing to print at exit.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$DT" -v -e "profile:hz:999 { @[ustack_dwarf] = count(); }
	tracepoint:sched:sched_process_exec { @execs = count(); }
	interval:s:1 { clear(@); }
	interval:ms:$((SECS * 1000 + 500)) { exit(); }" >"$TMP/out" 2>"$TMP/err" &
DTPID=$!
for _ in $(seq 100); do grep -q Attaching "$TMP/out" "$TMP/err" 2>/dev/null && break; sleep 0.1; done
# The clock of the samples starts here, before the tracer has attached and its exit timer runs:
# a sample before SECS is one taken while tracing. (Started after the load was launched, it ran
# late by the launch, on a loaded machine by a second or more, and a sample "at SECS - 1" was one
# of the exit's printing: CI once judged that growth.)
start=$(date +%s)

# Load 1: RATE processes a second, started in batches every 100 ms: short C chains (one dlopens
# libdlt.so), static-pie, C++, threads, qsort callbacks, shells, true; python every 2 s.
(
	per=$(( (RATE + 9) / 10 )); tick=0
	cmds=("$T/chain_nofp 0.005" "$T/dlopen_main_nofp 0.005" "$T/chain_static_nofp 0.003"
	      "$T/cxx_nofp virtual 0.003" "$T/threads_nofp 0.003" "$T/qsort_cb_nofp 0.003"
	      "/bin/sh -c true" "/bin/true")
	while :; do
		for ((i = 0; i < per; i++)); do
			${cmds[(tick * per + i) % ${#cmds[@]}]} &
		done
		((tick % 20 == 0)) && "$PY" -c 'sum(i*i for i in range(30000))' &
		sleep 0.1
		wait
		tick=$((tick + 1))
	done
) >/dev/null 2>&1 &
LOADPIDS+=($!)
# Load 2: dlopen/dlclose of libraries in two long-lived processes, burning CPU in between.
for libs in "$T/libdlt.so libm.so.6 libz.so.1 libbz2.so.1.0 libexpat.so.1" "libexpat.so.1 libz.so.1"; do
	# shellcheck disable=SC2086
	"$PY" - $libs >/dev/null 2>&1 <<'PYEOF' &
import ctypes, _ctypes, sys
while True:
    for name in sys.argv[1:]:
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
done

# Watch dwarftrace each second: RSS (KiB), open fds, BPF fds, and the BPF ids it holds.
: >"$TMP/samples"
: >"$TMP/ids"
every=$(( SECS >= 40 ? SECS / 20 : 2 ))
echo "stress: ${SECS}s, load $RATE processes/s + dlopen churn; BPF objects before (progs maps links): $before"
echo "stress: t(s)  RSS(KiB)  fds  bpf-fds"
while kill -0 "$DTPID" 2>/dev/null; do
	t=$(( $(date +%s) - start ))
	rss=$(awk '/^VmRSS/{print $2}' /proc/$DTPID/status 2>/dev/null)
	nfd=$(ls /proc/$DTPID/fd 2>/dev/null | wc -l)
	nbpf=$(ls -l /proc/$DTPID/fd 2>/dev/null | grep -c 'anon_inode:bpf')
	if [ -n "$rss" ]; then
		echo "$t $rss $nfd $nbpf" >>"$TMP/samples"
		[ $((t % every)) -eq 0 ] && [ "$t" != "${last:-}" ] &&
			printf 'stress: %5d  %8d  %4d  %4d%s\n' "$t" "$rss" "$nfd" "$nbpf" \
				"$([ "$t" -gt "$SECS" ] && echo '  (printing at exit)')" && last=$t
	fi
	grep -hE '^(prog_id|map_id|link_id):' /proc/$DTPID/fdinfo/* 2>/dev/null >>"$TMP/ids"
	ls -l /proc/$DTPID/fd 2>/dev/null | awk 'NR > 1 {print $NF}' | sed 's/[0-9]//g' |
		sort | uniq -c >"$TMP/fdkinds.$t"
	sleep 1
done
wait "$DTPID"
status=$?
for p in "${LOADPIDS[@]}"; do kill "$p" 2>/dev/null; done
wait 2>/dev/null
LOADPIDS=()
sleep 0.5

fail=0
check() { # check OK|FAIL TEXT
	echo "stress: $1 $2"
	[ "$1" = OK ] || fail=1
}
[ "$status" -eq 0 ] && grep -q '^@\[' "$TMP/out" && check OK "dwarftrace exited 0 after ${SECS}s" ||
	check FAIL "dwarftrace exit status $status (tail of stderr: $(tail -n 3 "$TMP/err" | tr '\n' ' '))"
if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$TMP/err"; then
	check FAIL "sanitizer report: $(grep -m1 -E 'SUMMARY|runtime error:' "$TMP/err")"
	# The report outlives the scratch directory, to be read.
	kept=${TMPDIR:-/tmp}/unwind_stress.$$.stderr
	cp "$TMP/err" "$kept" && echo "stress: dwarftrace's stderr (the report) kept in $kept"
fi
execs=$(sed -n 's/^@execs: \([0-9]*\)$/\1/p' "$TMP/out")
execs=${execs:-0}
echo "stress: execs counted by the tracer: $execs in ${SECS}s ($((execs / SECS)) per second)"
# While tracing only: from SECS on, dwarftrace is ending and symbolizing every stack it prints.
# The second half's growth: its last RSS against the first sample of the half (the peak of a few
# samples each, so that one sample taken while a table is built does not decide it).
h=$((SECS / 2))
read -r rss1 fd1 rssmid rssend fd2 rssexit <<<"$(awk -v h=$h -v e="$SECS" '
	$1 < h  { if ($2 > r1) r1 = $2; if ($3 > f1) f1 = $3 }
	$1 >= h && $1 < h + 3 { if ($2 > rm) rm = $2 }
	$1 >= e - 3 && $1 < e { if ($2 > re) re = $2 }
	$1 >= h && $1 < e { if ($3 > f2) f2 = $3 }
	$1 >= e { if ($2 > rx) rx = $2 }
	END { print r1 + 0, f1 + 0, rm + 0, re + 0, f2 + 0, rx + 0 }' "$TMP/samples")"
# Execs in the second half, taken as half of all (the load runs at a steady rate).
execs2=$((execs / 2))
growth=$((rssend - rssmid))
# (grep reads all of nm's output: with -q it would quit early, nm would die of SIGPIPE and
# pipefail would call an ASan build a normal one.)
if nm -D "$DT" 2>/dev/null | grep ' __asan_init' >/dev/null; then
	# ASan keeps freed memory in quarantine (256 MiB by default): its RSS says nothing here.
	echo "stress: RSS not judged (an ASan build): ${rssmid} KiB at ${h}s, ${rssend} KiB at ${SECS}s"
elif [ "$execs" -lt $((SECS * 10)) ]; then
	check FAIL "churn too low to judge memory: $execs execs in ${SECS}s"
elif [ "$growth" -le "$execs2" ]; then
	check OK "RSS bounded: ${rssmid} KiB at ${h}s, ${rssend} KiB at ${SECS}s (+${growth} KiB for ~${execs2} execs; first-half peak ${rss1} KiB)"
else
	check FAIL "RSS grew: ${rssmid} KiB at ${h}s, ${rssend} KiB at ${SECS}s (+${growth} KiB, more than 1 KiB for each of ~${execs2} execs)"
fi
echo "stress: RSS while printing at exit: peak ${rssexit} KiB"
[ "$fd2" -le $((fd1 + 8)) ] && check OK "fds bounded: peak $fd1 first half, $fd2 second half" ||
	{ check FAIL "fds grew: $fd1 first half, $fd2 second half"; ls "$TMP"/fdkinds.* |
	  sort -t. -k2 -n | sed -n '2p;$p' | xargs -I{} sh -c 'echo {}; cat {}'; }
pages=$(sed -n 's/^unwind row_pages \([0-9]*\)\/\([0-9]*\).*/\1 \2/p' "$TMP/err")
read -r used total <<<"${pages:-0 0}"
[ "$total" -gt 0 ] && [ "$used" -le "$total" ] &&
	check OK "unwind tables within budget: $used of $total row pages" ||
	check FAIL "unwind row pages: '$pages'"
leaked=0
for k in prog map link; do
	for id in $(awk -v k="${k}_id:" '$1 == k {print $2}' "$TMP/ids" | sort -u); do
		bpftool "$k" show id "$id" >/dev/null 2>&1 && leaked=$((leaked + 1))
	done
done
nids=$(sort -u "$TMP/ids" | wc -l)
[ "$leaked" -eq 0 ] && check OK "no BPF program, map or link left ($nids ids held, all gone)" ||
	check FAIL "$leaked BPF programs/maps/links still loaded after exit"
echo "stress: BPF objects on the system (progs maps links): before $before, after $(bpf_objects)"
grep -E '^(walker (walks|complete|walks_no_tables|requests_lost|stacks_dropped_map_full)|unwind (objects|procs|evictions|build_errors)|symbols (procs|procs_released|objects|dwarf_open|dwarf_opens|dwarf_closes)) ' "$TMP/err" |
	tr '\n' ';' | sed 's/;$/\n/; s/^/stress: totals: /'
[ "$fail" -eq 0 ] && echo "stress: PASS" || echo "stress: FAIL"
exit "$fail"
