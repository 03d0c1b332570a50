#!/usr/bin/env bash
# bootstrap.sh — one entry point that sets up, builds, demonstrates and tests dwarftrace on a fresh
# Debian 12 machine, as root:
#
#   bash bootstrap.sh deps    install every Debian package the build, tests, VM and bench need
#   bash bootstrap.sh build   deps, then configure and build into ./build (BUILD_DIR to change)
#   bash bootstrap.sh demo    build, then profile a bundled program built without frame pointers
#                             with ustack_dwarf and print its full stacks
#   bash bootstrap.sh fuzz    build the libFuzzer harnesses (clang, ASan+UBSan; fuzz_codegen UBSan)
#                             into BUILD_DIR-fuzz and run each for FUZZ_SECONDS (default 50) from
#                             its seed corpus: fuzz_lang, fuzz_codegen, fuzz_unwind
#   bash bootstrap.sh test    build, run the fuzzers for a bounded time, then every test layer with
#                             ctest (unit, golden, runtime, vm); the last line is ctest's
#                             "N% tests passed, N tests failed out of N"
#
# Everything is idempotent: packages already installed are not fetched again, the build directory
# is reused. Non-interactive and quiet, so CI can run it with no terminal.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}

# What each group of packages is for; all from Debian 12's archive.
PKGS_BUILD="build-essential cmake pkg-config clang llvm-dev libbpf-dev libelf-dev libdw-dev
	libreadline-dev zlib1g-dev binutils libiberty-dev liblzma-dev libdebuginfod-dev
	libprotobuf-c-dev protobuf-c-compiler libclang-14-dev systemtap-sdt-dev libpcap-dev"
PKGS_TEST="python3 python3.11 python3.11-dev python3.11-dbg libc6-dbg bpftrace bpftool linux-perf time procps debuginfod golang-go chromium xz-utils rustc tmux"
PKGS_VM="qemu-system-x86 cpio busybox-static"

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'bootstrap.sh: %s\n' "$*" >&2; exit 1; }

need_root() {
	[ "$(id -u)" -eq 0 ] || die "run me as root (apt-get, and loading BPF programs, need it)"
}

# deps [build|all]: the packages to build (and run the demo), or everything the tests, the VM and
# the benchmarks need too (the default).
deps() {
	need_root
	local scope=${1:-all} missing=() p pkgs=$PKGS_BUILD
	[ "$scope" = build ] || pkgs="$PKGS_BUILD $PKGS_TEST $PKGS_VM"
	for p in $pkgs; do
		# dpkg-query tells "install ok installed" only for packages that are fully there.
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
			missing+=("$p")
		fi
	done
	export DEBIAN_FRONTEND=noninteractive
	if [ ${#missing[@]} -eq 0 ]; then
		say "all packages present"
	else
		say "installing: ${missing[*]}"
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
	# The folded output is checked by a real flame-graph tool: speedscope, from the npm registry
	# (Debian packages none). Without it that one test is skipped and says why.
	if [ "$scope" = all ] && ! command -v speedscope >/dev/null; then
		command -v npm >/dev/null ||
			apt-get install -y -qq --no-install-recommends npm >/dev/null 2>&1 || true
		npm install -g --silent speedscope@1.25.0 >/dev/null 2>&1 ||
			say "could not install speedscope from npm (its test will be skipped)"
	fi
}

# BPF tracepoints and uprobes need tracefs; a fresh container or VM often lacks the mount.
mount_tracefs() {
	if [ ! -e /sys/kernel/tracing/events ] && [ ! -e /sys/kernel/debug/tracing/events ]; then
		mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
			say "could not mount tracefs at /sys/kernel/tracing (tracepoint tests will fail)"
	fi
	# debugf() writes to the kernel's trace buffer, which tools (and bpftrace's tests) read at
	# /sys/kernel/debug/tracing: debugfs mounted there gives that path (tracefs automounts).
	if [ -d /sys/kernel/debug ] && ! mountpoint -q /sys/kernel/debug; then
		mount -t debugfs nodev /sys/kernel/debug 2>/dev/null ||
			say "could not mount debugfs at /sys/kernel/debug (debugf's trace at /sys/kernel/tracing only)"
	fi
}

build() {
	deps "${DEPS_SCOPE:-all}"
	say "building into $BUILD_DIR ($BUILD_TYPE)"
	mkdir -p "$BUILD_DIR"
	# The full log goes to a file; a failure shows its end, success stays quiet.
	if ! { cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" &&
		cmake --build "$BUILD_DIR" -j"$(nproc)"; } >"$BUILD_DIR/build.log" 2>&1; then
		tail -n 40 "$BUILD_DIR/build.log" >&2
		die "the build failed (full log: $BUILD_DIR/build.log)"
	fi
}

demo() {
	DEPS_SCOPE=build build
	mount_tracefs
	local dt="$BUILD_DIR/runtime/dwarftrace" target="$BUILD_DIR/tests/targets/chain_nofp"
	[ -x "$dt" ] || dt=$(find "$BUILD_DIR" -name dwarftrace -type f -perm -u+x | head -n1)
	[ -x "$dt" ] || die "the build produced no dwarftrace binary"
	say "chain_nofp was built with -O2 -fomit-frame-pointer: main -> a -> b -> c -> d burns CPU in d"
	say "$dt -c '$target 2' -e 'profile:hz:99 < @[ustack_dwarf] = count(); >'"
	"$dt" -c "$target 2" -e 'profile:hz:99 < @[ustack_dwarf] = count(); >'
	say "a comparator called back from libc's qsort (libc has no frame pointers either);"
	say "also written as a flame graph: $BUILD_DIR/demo-flamegraph.svg"
	"$dt" -c "$BUILD_DIR/tests/targets/qsort_cb_nofp 1" --flamegraph "$BUILD_DIR/demo-flamegraph.svg" \
		-e 'profile:hz:49 { @[ustack_dwarf] = count(); }'
}

# The fuzzers need clang as the compiler of the whole (separate) build, so they get their own
# directory; only the harness targets are built. New inputs go to a scratch corpus, never into
# the tree; a crash leaves its reproducer in BUILD_DIR-fuzz/artifacts and fails the run. Three
# harnesses of FUZZ_SECONDS each plus the build stay under four minutes: fuzz_lang (script text,
# no LLVM: thousands of inputs a second), fuzz_codegen (generated scripts through LLVM: a hundred
# or more a second; its last line says how many passed the checker) and fuzz_unwind (CFI and ELF).
fuzz() {
	deps
	local fdir=${BUILD_DIR}-fuzz secs=${FUZZ_SECONDS:-50} h corpus extra
	mkdir -p "$fdir/artifacts"
	say "building the fuzzers into $fdir"
	if ! { CC=clang CXX=clang++ cmake -S "$ROOT" -B "$fdir" -DCMAKE_BUILD_TYPE=Debug -DDT_FUZZ=ON &&
		cmake --build "$fdir" -j"$(nproc)" --target fuzz_lang fuzz_codegen fuzz_unwind; } \
		>"$fdir/build.log" 2>&1; then
		tail -n 40 "$fdir/build.log" >&2
		die "the fuzzer build failed (full log: $fdir/build.log)"
	fi
	for h in lang codegen unwind; do
		corpus="$ROOT/tests/fuzz/corpus_$h"
		# The generator needs no long inputs: a script's size is bounded inside gen.c.
		extra=
		[ "$h" = codegen ] && extra=-max_len=1024
		rm -rf "$fdir/corpus_$h.new" && mkdir -p "$fdir/corpus_$h.new"
		say "fuzz_$h for ${secs}s"
		"$fdir/tests/fuzz_$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 $extra \
			-print_final_stats=0 -artifact_prefix="$fdir/artifacts/$h-" \
			"$fdir/corpus_$h.new" "$corpus" >"$fdir/fuzz_$h.log" 2>&1 || {
			tail -n 60 "$fdir/fuzz_$h.log" >&2
			die "fuzz_$h found a problem (reproducer in $fdir/artifacts/)"
		}
		grep -E '^#[0-9]+.*DONE|^fuzz_codegen:' "$fdir/fuzz_$h.log" >&2 ||
			tail -n 1 "$fdir/fuzz_$h.log" >&2
	done
}

run_tests() {
	build
	mount_tracefs
	fuzz
	say "running every test layer (ctest)"
	cd "$BUILD_DIR"
	ctest --output-on-failure
}

case "${1:-}" in
deps) deps ;;
build) build ;;
demo) demo ;;
fuzz) fuzz ;;
test) run_tests ;;
*)
	sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
