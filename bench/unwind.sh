#!/usr/bin/env bash
# bench/unwind.sh — ustack_dwarf against the tools that exist, measured in the same run, printed as
# one table: completeness (share of samples whose stack reaches the ABI's root) for dwarftrace's
# ustack_dwarf, bpftrace's ustack and perf's --call-graph dwarf on the no-frame-pointer targets;
# overhead on a fixed-work program (medians of N runs, wall-time ratios to the program alone); BPF
# ns per stack and per frame (kernel.bpf_stats_enabled); table build speed on libLLVM and
# libclang-cpp; kernel bytes per row all-in; bytes per sample against perf.data's; latency from a
# new process's first sample to its first complete stack. The work is in bench/unwind_bench.py.
#
#   bash bench/unwind.sh [BUILD_DIR (default build)] [N runs (default 5)]
#
# Needs root; bpftrace and perf columns are left out when they are not installed.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
N=${2:-5}
[ "$(id -u)" -eq 0 ] || { echo "unwind.sh: run as root (BPF)" >&2; exit 1; }
[ -x "$BUILD/runtime/dwarftrace" ] || { echo "unwind.sh: $BUILD/runtime/dwarftrace not built" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# The table-build probe links the build's unwinder library.
cc -O2 -I"$ROOT" -o "$TMP/unwind_build_speed" "$ROOT/bench/unwind_build_speed.c" \
	"$BUILD/unwind/libdt_unwind.a" "$BUILD/elfproc/libdt_elfproc.a" "$BUILD/common/libdt_common.a" \
	-lelf -ldw -lz -lbpf
exec /usr/bin/python3 "$ROOT/bench/unwind_bench.py" "$BUILD" "$N" "$TMP"
