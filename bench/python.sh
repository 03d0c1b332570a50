#!/bin/bash
# bench/python.sh [BUILD] [SECS] [ROUNDS] — ustack_dwarf's CPython frames (bpf-lib/dt_python.h) on
# Debian 12's python3.11, beside native-only ustack_dwarf(native) on the same workload (a -> b -> c,
# CPU-bound, one thread), made to hold on a machine shared with other work:
#   - runs are interleaved (no tracing, then each of 99/999 Hz x native/Python, ROUNDS times) and
#     every figure is the median over rounds;
#   - the workload measures itself with its own CPU clock (time.process_time): CPU µs per call of
#     a(), which other processes' load does not change the way wall-clock throughput does;
#   - the BPF cost comes from the kernel's run-time stats (kernel.bpf_stats_enabled): run_time_ns
#     of the probe's program, which include every tail call it makes (walker runs, the Python
#     step), over the walks the walker counted (-v; the runs the pid predicate ends early are in
#     the time too); and as a share of the workload's CPU time (the direct overhead);
#   - dwarftrace's own CPU time (user+sys, from /proc) over the workload's run, as a share of the
#     workload's CPU time (its start-up is not in it);
#   - the share of samples whose Python part is complete (ustack_dwarf at 999 Hz, last round).
# No hardware PMU here, so no instruction counts. Needs root and bpftool.
set -u
BUILD=${1:-build}
SECS=${2:-5}
ROUNDS=${3:-5}
DT=$BUILD/runtime/dwarftrace
PY=/usr/bin/python3.11
TMP=$(mktemp -d)
OLDSTATS=$(sysctl -n kernel.bpf_stats_enabled)
trap 'rm -rf "$TMP"; sysctl -q kernel.bpf_stats_enabled=$OLDSTATS' EXIT
sysctl -q kernel.bpf_stats_enabled=1

cat > "$TMP/work.py" <<'PY'
import sys, time
def c(n):
    x = 0
    for i in range(n):
        x += i * i
    return x
def b(n):
    return c(n)
def a(n):
    return b(n)
def main():
    mark = sys.argv[2] if len(sys.argv) > 2 else None
    if mark:
        open(mark + ".start", "w").close()
    end = time.monotonic() + float(sys.argv[1])
    calls = 0
    cpu0 = time.process_time()
    while time.monotonic() < end:
        a(2000)
        calls += 1
    cpu = time.process_time() - cpu0
    print(f"work calls {calls} cpu_s {cpu:.6f}", file=sys.stderr)
    if mark:  # the tracer's figures are read now, while its programs are still loaded
        open(mark + ".end", "w").close()
        time.sleep(1.5)
main()
PY

# dwarftrace's CPU time so far (user + sys), in clock ticks.
ticks_of() {
	awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0
}

# Waits for file $1 (at most 120 s).
wait_for() {
	local i
	for i in $(seq 2400); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# One run: prints "calls cpu_s bpf_ns bpf_cnt walks dt_cpu_s" (bpf and dt fields 0 untraced):
# the BPF stats and dwarftrace's CPU time over the workload's own run (it marks its start and
# end, and waits after its end while the programs are read). Folded stacks in $TMP/out.TAG, -v
# in $TMP/err.TAG.
run() {
	local tag=$1 hz=$2 stack=$3 dtpid ticks t0
	if [ "$hz" = 0 ]; then
		$PY "$TMP/work.py" "$SECS" 2>&1 | awk '/^work/ {print $3, $5, 0, 0, 0, 0}'
		return
	fi
	rm -f "$TMP/mark.start" "$TMP/mark.end"
	$DT -v -f folded -e "profile:hz:$hz /pid == cpid/ { @[$stack] = count(); }" \
		-c "$PY $TMP/work.py $SECS $TMP/mark" >"$TMP/out.$tag" 2>"$TMP/err.$tag" &
	dtpid=$!
	wait_for "$TMP/mark.start"
	t0=$(ticks_of $dtpid)
	wait_for "$TMP/mark.end"
	bpftool -j prog show >"$TMP/bpf.$tag" 2>/dev/null
	# This dwarftrace's programs (other sessions may run on the machine): its fds' prog ids.
	cat /proc/$dtpid/fdinfo/* 2>/dev/null | awk '/^prog_id:/ {print $2}' | sort -u >"$TMP/ids.$tag"
	ticks=$(( $(ticks_of $dtpid) - t0 ))
	wait $dtpid
	python3 - "$TMP/ids.$tag" "$TMP/bpf.$tag" "$TMP/err.$tag" "$ticks" "$(getconf CLK_TCK)" <<'PY'
import json, re, sys
mine = {int(l) for l in open(sys.argv[1]) if l.strip()}
progs = [p for p in json.load(open(sys.argv[2])) if p["id"] in mine and
         p.get("type") == "perf_event" and not p.get("name", "").startswith("dt_walk")]
ns = sum(p.get("run_time_ns", 0) for p in progs)
cnt = sum(p.get("run_cnt", 0) for p in progs)
err = open(sys.argv[3]).read()
w = re.search(r"^walker walks (\d+)$", err, re.M)
m = re.search(r"^work calls (\d+) cpu_s ([\d.]+)$", err, re.M)
print(m.group(1), m.group(2), ns, cnt, w.group(1) if w else 0,
      int(sys.argv[4]) / int(sys.argv[5]))
PY
}

CONFIGS=("0 none" "99 ustack_dwarf(native)" "99 ustack_dwarf" "999 ustack_dwarf(native)" "999 ustack_dwarf")
echo "# bench/python.sh: python3.11, a -> b -> c, $SECS s per run, $ROUNDS interleaved rounds," \
     "$(nproc) CPUs (shared; load $(cut -d' ' -f1-3 /proc/loadavg))"
: >"$TMP/results"
for r in $(seq "$ROUNDS"); do
	for cfg in "${CONFIGS[@]}"; do
		read -r hz stack <<<"$cfg"
		tag="$hz.${stack//[()]/_}"
		echo "$hz $stack $(run "$tag" "$hz" "$stack")" >>"$TMP/results"
	done
done
python3 - "$TMP/results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    hz, stack, calls, cpu, ns, cnt, walks, dtcpu = line.split()
    rows.setdefault((hz, stack), []).append(
        (int(calls), float(cpu), int(ns), int(cnt), int(walks), float(dtcpu)))
med = statistics.median
base = med(r[1] * 1e6 / r[0] for r in rows[("0", "none")])
print(f"{'run':<26} {'CPU us/call':>11} {'vs none':>8} {'BPF ns/walk':>11} {'BPF % of':>9} "
      f"{'dwarftrace':>10} {'walks':>6}")
print(f"{'':<26} {'(median)':>11} {'':>8} {'(median)':>11} {'work CPU':>9} {'% of work':>10} "
      f"{'':>6}")
print(f"{'no tracing':<26} {base:>11.2f} {'1.000':>8} {'-':>11} {'-':>9} {'-':>10} {'-':>6}")
for (hz, stack), rs in rows.items():
    if hz == "0":
        continue
    us = med(r[1] * 1e6 / r[0] for r in rs)
    per_walk = med(r[2] / max(r[4], 1) for r in rs)  # all runs' time over the walks
    share = med(100 * r[2] / 1e9 / r[1] for r in rs)
    dt = med(100 * r[5] / r[1] for r in rs)
    walks = med(r[4] for r in rs)
    print(f"{hz + ' Hz ' + stack:<26} {us:>11.2f} {us / base:>8.3f} {per_walk:>11.0f} "
          f"{share:>8.2f}% {dt:>9.2f}% {walks:>6.0f}")
PY

python3 - "$TMP/out.999.ustack_dwarf" "$TMP/err.999.ustack_dwarf" <<'PY'
import re, sys
tot = ok = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip().rpartition(" ")
    if not n.isdigit():
        continue
    tot += int(n)
    if "<module> (" in stack and "_PyEval_EvalFrameDefault" not in stack:
        ok += int(n)
w = dict(re.findall(r"^walker (python_walks|python_partial) (\d+)$", open(sys.argv[2]).read(), re.M))
print(f"\n# completeness (ustack_dwarf at 999 Hz, last round): {100 * ok / max(tot, 1):.2f}% of "
      f"{tot} samples with <module> and no evaluation-loop frame left; walker python_walks "
      f"{w.get('python_walks', '?')}, python_partial {w.get('python_partial', '?')}")
PY
