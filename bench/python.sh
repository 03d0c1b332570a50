#!/bin/bash
# bench/python.sh [BUILD] [SECS] — ustack_dwarf's CPython frames (bpf-lib/dt_python.h) on Debian
# 12's python3.11, beside native-only ustack_dwarf(native) on the same workload:
#   - the share of samples whose Python part is complete: the main thread's stacks (a → b → c
#     under <module>) holding <module> and no evaluation-loop frame left unreplaced, and the
#     walker's own count of partial Python walks (-v: python_walks, python_partial);
#   - the per-sample BPF cost: kernel run-time stats (kernel.bpf_stats_enabled) of the probe's
#     program, which include every tail call it makes (walker runs, the Python step), per walk;
#   - overhead at 99 and 999 Hz: the workload's own throughput (calls of a() per second) with no
#     tracing, with ustack_dwarf(native) and with ustack_dwarf, as ratios to no tracing.
# Needs root and bpftool. The machine is shared: overhead figures carry its noise (run twice).
set -u
BUILD=${1:-build}
SECS=${2:-8}
DT=$BUILD/runtime/dwarftrace
PY=/usr/bin/python3.11
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; sysctl -q kernel.bpf_stats_enabled=$OLDSTATS' EXIT
OLDSTATS=$(sysctl -n kernel.bpf_stats_enabled)
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
    end = time.monotonic() + float(sys.argv[1])
    calls = 0
    while time.monotonic() < end:
        a(2000)
        calls += 1
    print(f"calls_per_s {calls / float(sys.argv[1]):.1f}", file=sys.stderr)
main()
PY

# rate of the workload alone, or under dwarftrace with STACK at HZ; prints calls/s and leaves
# the folded stacks in $TMP/out.$tag, -v in $TMP/err.$tag, the BPF stats in $TMP/bpf.$tag and the
# ids of programs loaded before the run in $TMP/ids.$tag
run() {
	local tag=$1 hz=$2 stack=$3
	if [ "$hz" = 0 ]; then
		$PY "$TMP/work.py" "$SECS" 2>&1 | awk '/calls_per_s/ {print $2}'
		return
	fi
	bpftool -j prog show >"$TMP/ids.$tag" 2>/dev/null
	$DT -v -f folded -e "profile:hz:$hz /pid == cpid/ { @[$stack] = count(); }" \
		-c "$PY $TMP/work.py $SECS" >"$TMP/out.$tag" 2>"$TMP/err.$tag" &
	local dtpid=$!
	sleep $((SECS - 1))
	bpftool -j prog show >"$TMP/bpf.$tag" 2>/dev/null
	wait $dtpid
	awk '/calls_per_s/ {print $2}' "$TMP/err.$tag"
}

# BPF ns per walk: the kernel's run-time stats count a program run from its attach point through
# every tail call (walker runs, the Python step, the continuation), so the probe's program holds
# the whole cost; divided by the walks the walker counted (-v). Programs of this run: those
# loaded after it started, perf_event, with a run count.
bpf_cost() {
	python3 - "$TMP/ids.$1" "$TMP/bpf.$1" "$TMP/err.$1" <<'PY'
import json, re, sys
before = {p["id"] for p in json.load(open(sys.argv[1]))}
progs = [p for p in json.load(open(sys.argv[2])) if p["id"] not in before and
         p.get("type") == "perf_event" and not p.get("name", "").startswith("dt_walk")]
ns = sum(p.get("run_time_ns", 0) for p in progs)
m = re.search(r"^walker walks (\d+)$", open(sys.argv[3]).read(), re.M)
walks = int(m.group(1)) if m else 0
print(f"{ns / max(walks, 1):.0f} {walks}")
PY
}

complete_share() {
	python3 - "$TMP/out.$1" "$TMP/err.$1" <<'PY'
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
print(f"{100 * ok / max(tot, 1):.2f} {tot} {w.get('python_walks', '?')} {w.get('python_partial', '?')}")
PY
}

echo "# bench/python.sh: python3.11, a -> b -> c, $SECS s per run, $(nproc) CPUs (shared)"
base=$(run base 0 x)
base2=$(run base 0 x)
base=$(python3 -c "print(max($base, $base2))")
printf "%-28s %12s %8s %14s %8s\n" "run" "calls/s" "ratio" "BPF ns/walk" "walks"
printf "%-28s %12s %8s %14s %8s\n" "no tracing" "$base" "1.000" "-" "-"
for hz in 99 999; do
	for stack in "ustack_dwarf(native)" "ustack_dwarf"; do
		tag="$hz.${stack//[()]/_}"
		rate=$(run "$tag" "$hz" "$stack")
		read -r ns walks <<<"$(bpf_cost "$tag")"
		printf "%-28s %12s %8s %14s %8s\n" "$hz Hz $stack" "$rate" \
			"$(python3 -c "print(f'{$rate / $base:.3f}')" 2>/dev/null)" "$ns" "$walks"
	done
done
echo
echo "# completeness (ustack_dwarf at 999 Hz): share of main-thread samples with <module> and no"
echo "# evaluation-loop frame left, samples, walker python_walks, python_partial"
complete_share "999.ustack_dwarf"
