#!/usr/bin/env bash
# bench/symbols.sh — symbolization throughput and output writing time (bench_symbols.c), with
# llvm-symbolizer and addr2line timed on the same 100,000 libLLVM addresses in the same run.
#
#   bash bench/symbols.sh [BUILD_DIR]
#
# bench_symbols is compiled here against the build's static libraries (BUILD_DIR, default ./build:
# run `bash bootstrap.sh build` first). Needs root for the pprof/flame graph rows (they read a BPF
# map) and llvm-14 (libLLVM-14.so.1). Prints tables; a measurement, not a test.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${1:-$ROOT/build}
[ -f "$B/runtime/libdt_runtime.a" ] || { echo "symbols.sh: $B is not built" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

LIBS=()
for l in runtime/libdt_runtime.a output/libdt_output.a symbols/libdt_symbols.a codegen/libdt_codegen.a unwind/libdt_unwind.a elfproc/libdt_elfproc.a lang/libdt_lang.a \
	bpf-lib/libdt_bpflib.a common/libdt_common.a; do
	[ -f "$B/$l" ] && LIBS+=("$B/$l")
done
cc -O2 -D_GNU_SOURCE -I"$ROOT" -o "$TMP/bench_symbols" \
	"$ROOT/bench/bench_symbols.c" "${LIBS[@]}" "${LIBS[@]}" \
	/usr/lib/x86_64-linux-gnu/libiberty.a $(pkg-config --libs libbpf libelf libdw liblzma \
	libdebuginfod libprotobuf-c zlib) $(llvm-config-14 --ldflags --libs 2>/dev/null || true) \
	-lreadline -lpthread -ldl -lstdc++ -lm

"$TMP/bench_symbols" "$TMP" >"$TMP/out"
LIB=$(head -n 1 "$TMP/out")
tail -n +2 "$TMP/out"
echo
printf '| %-22s | %13s | %12s |\n' "same 100k, other tools" "time" "vs cold"
printf '|------------------------|---------------|--------------|\n'
cold=$(awk -F'|' '/100k distinct, cold/ { gsub(/[^0-9.]/, "", $3); print $3 }' "$TMP/out")
for tool in llvm-symbolizer-14 addr2line; do
	command -v $tool >/dev/null || continue
	t0=$(date +%s%N)
	if [ $tool = addr2line ]; then
		addr2line -f -e "$LIB" <"$TMP/addrs.txt" >/dev/null
	else
		llvm-symbolizer-14 --obj="$LIB" --functions=linkage --no-inlines <"$TMP/addrs.txt" >/dev/null
	fi
	t1=$(date +%s%N)
	awk -v t=$(( (t1 - t0) / 1000 )) -v c="$cold" -v n="$tool" \
		'BEGIN { printf "| %-22s | %10.1f ms | %10.1fx |\n", n, t / 1000, (t / 1000) / c }'
done
