#!/usr/bin/env bash
# bench/xprobe_overhead.sh — what an xprobe costs, measured in the same run as what it competes with.
#
#   bash bench/xprobe_overhead.sh [DWARFTRACE] [RUNS] [CALLS] [ROUNDTRIPS]
#
# Per call: tests/targets/xwork_nofp `calls CALLS` calls an empty function in a loop and prints the
# mean ns per call. It runs untraced, under a plain uprobe+uretprobe pair that measures only the
# wall time (`@s[tid] = nsecs` / `hist(nsecs - @s[tid])`, the usual way, in dwarftrace and — as a
# reference — in bpftrace), under an xprobe (`hist(wall)`: entry + return programs, the per-thread
# clock and the block), and under an xprobe sampling one call in 100 (`:100`).
# Per context switch: `pingpong ROUNDTRIPS` bounces a byte between two threads pinned to one CPU
# (two switches per round trip, counted from getrusage) and prints ns per switch. It runs
# untraced, with an xprobe attached elsewhere (the scheduler hooks run but return after one hash
# lookup: the cost every other thread pays), and with an xprobe on pp_worker, the function both
# threads are inside all along (every switch is accounted: the cost inside a watched call).
# The xprobe runs use -v, which also prints the kernel's run-time statistics of the precompiled
# programs (ns per run of the entry and return programs and of the scheduler hooks): the BPF part
# of the cost, without the uprobe traps and the noise of the neighbours.
# Each case runs RUNS times (default 5), interleaved so that a noisy neighbour hurts all alike;
# the table shows medians, the cost over untraced, and ratios. A measurement, not a test. Needs
# root (BPF) and a build (bash bootstrap.sh build, or cmake --build BUILD).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DT=${1:-$ROOT/build/runtime/dwarftrace}
RUNS=${2:-5}
CALLS=${3:-20000}
TRIPS=${4:-100000}
X=$(dirname "$(dirname "$DT")")/tests/targets/xwork_nofp
[ -x "$DT" ] || { echo "xprobe_overhead.sh: $DT is not built" >&2; exit 1; }
[ -x "$X" ] || { echo "xprobe_overhead.sh: $X is not built (target xwork_nofp)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "xprobe_overhead.sh: run as root (BPF)" >&2; exit 1; }
BT=$(command -v bpftrace || true)

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

PAIR="uprobe:$X:tiny { @s[tid] = nsecs; } uretprobe:$X:tiny { @w = hist(nsecs - @s[tid]); delete(@s[tid]); }"
CALL_CASES=(base pair xprobe sampled)
CALL_LABELS=("no tracing" "uprobe+uretprobe pair, wall only" "xprobe (full breakdown)"
	"xprobe :100 (one call in 100)")
CALL_PROGS=("" "$PAIR" "xprobe:$X:tiny { @w = hist(wall); }" "xprobe:$X:tiny:100 { @w = hist(wall); }")
if [ -n "$BT" ]; then
	CALL_CASES+=(bpftrace)
	CALL_LABELS+=("bpftrace uprobe+uretprobe pair")
	CALL_PROGS+=("$PAIR")
fi
SW_CASES=(base idle inside)
SW_LABELS=("no tracing" "xprobe elsewhere (hook returns early)"
	"xprobe around both threads (hook accounts)")
SW_PROGS=("" "xprobe:$X:tiny { @w = hist(wall); }" "xprobe:$X:pp_worker { @w = hist(wall); }")

# run TOOL PROG CMD KEY OUT: runs CMD (under TOOL -e PROG -c CMD unless PROG is empty) and appends
# the number after KEY= in its output to OUT. A failed run is reported, not hidden.
run() {
	local tool=$1 prog=$2 cmd=$3 key=$4 out=$5 log=$TMP/log
	if [ -z "$prog" ]; then
		$cmd >"$log" 2>&1 || { echo "xprobe_overhead.sh: '$cmd' failed" >&2; cat "$log" >&2; return 1; }
	else
		local v=()
		[ "$tool" = "$DT" ] && v=(-v)
		"$tool" "${v[@]}" -e "$prog" -c "$cmd" >"$log" 2>&1 ||
			{ echo "xprobe_overhead.sh: $tool -e '$prog' failed:" >&2; tail -n 5 "$log" >&2; return 1; }
		# "xprobe program dt_xp_switch: 210279 runs, 135 ns per run"
		sed -n 's/^xprobe program \(dt_xp_[a-z]*\): .* \([0-9.]*\) ns per run$/\1 \2/p' "$log" |
			while read -r pn ns; do echo "$ns" >>"$out.$pn"; done
	fi
	grep -o "$key=[0-9.]*" "$log" | head -n 1 | cut -d= -f2 >>"$out"
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "nan" }'; }

for r in $(seq "$RUNS"); do
	for i in "${!CALL_CASES[@]}"; do
		tool=$DT
		[ "${CALL_CASES[$i]}" = bpftrace ] && tool=$BT
		run "$tool" "${CALL_PROGS[$i]}" "$X calls $CALLS" ns_per_call "$TMP/c_${CALL_CASES[$i]}"
	done
	for i in "${!SW_CASES[@]}"; do
		run "$DT" "${SW_PROGS[$i]}" "$X pingpong $TRIPS" ns_per_switch "$TMP/s_${SW_CASES[$i]}"
	done
done

printf 'xprobe overhead, median of %d runs each (%s, %d CPUs)\n\n' "$RUNS" "$(uname -r)" "$(nproc)"
printf 'per call: an empty function called %d times\n' "$CALLS"
printf '%-36s %12s %14s %14s\n' case "ns/call" "cost ns/call" "cost / pair"
cbase=$(median <"$TMP/c_base")
cpair=$(median <"$TMP/c_pair")
for i in "${!CALL_CASES[@]}"; do
	m=$(median <"$TMP/c_${CALL_CASES[$i]}")
	awk -v l="${CALL_LABELS[$i]}" -v m="$m" -v b="$cbase" -v p="$cpair" 'BEGIN {
		c = m - b; pc = p - b
		printf "%-36s %12.1f %14.1f %14s\n", l, m, c, (pc > 0 ? sprintf("%.2f", c / pc) : "-") }'
done
printf '\nper context switch: two threads on one CPU, %d round trips\n' "$TRIPS"
printf '%-44s %12s %16s\n' case "ns/switch" "cost ns/switch"
sbase=$(median <"$TMP/s_base")
for i in "${!SW_CASES[@]}"; do
	m=$(median <"$TMP/s_${SW_CASES[$i]}")
	awk -v l="${SW_LABELS[$i]}" -v m="$m" -v b="$sbase" 'BEGIN {
		printf "%-44s %12.1f %16.1f\n", l, m, m - b }'
done
printf '\nBPF time per program run (kernel run_time_ns / run_cnt, median over runs)\n'
printf '%-44s %10s %10s %10s %10s\n' case entry return switch wakeup
for f in "$TMP"/c_xprobe "$TMP"/c_sampled "$TMP"/s_idle "$TMP"/s_inside; do
	case $(basename "$f") in
	c_xprobe) l="calls, xprobe" ;; c_sampled) l="calls, xprobe :100" ;;
	s_idle) l="ping-pong, xprobe elsewhere" ;; s_inside) l="ping-pong, xprobe around threads" ;;
	esac
	row=()
	for pn in dt_xp_entry dt_xp_return dt_xp_switch dt_xp_wakeup; do
		if [ -s "$f.$pn" ]; then row+=("$(median <"$f.$pn")"); else row+=("-"); fi
	done
	printf '%-44s %10s %10s %10s %10s\n' "$l" "${row[@]}"
done
