#!/bin/bash
# Run bpftrace's *current* runtime suite (its tests/runtime at the newest commit of a bpftrace git
# tree) with dwarftrace in bpftrace's place: issue 14's measure. A developer tool, not a test layer.
#
#   bash tests/tools/bpftrace-head-suite.sh BUILD/runtime/dwarftrace [--filter RE] [-j N] [--json F]
#
#   BT_GIT       bpftrace's git directory (default: the mirror the `fetch` tool writes,
#                /work/.mirror/bpftrace+bpftrace/repo)
#   BT_HEAD_DIR  work directory (default /tmp/bthead): tests/{runtime,testprogs,testlibs}, tools/
#   SUITE_PY     the runner (default ../shared/tools/bpftrace_suite.py beside this checkout)
#   DWARFTRACE_LANGUAGE  passed on to every command (the runner gives commands a fixed
#                environment): `current` reads every program as current bpftrace's, as this
#                suite means them (dwarftrace --language)
#
# The test programs and libraries are built with bpftrace's own CMakeLists (testlibs, testprogs)
# under a two-line top-level project, so their flags (-no-pie/-pie pairs, split DWARF, .dwp, the
# flat binary, the zip) are bpftrace's. The runner is bpftrace_suite.py with three changes, made in
# memory, that bring it to bpftrace's current engine (tests/runtime/engine/runner.py):
#   - AFTER and the TIMEOUT clock start on __BPFTRACE_NOTIFY_PROBES_ATTACHED only (dwarftrace
#     prints it when that variable is set, as bpftrace does), not on "Attaching N probes";
#   - a BEFORE is waited for under its command's last word (`mountns_wrapper usdt_test`), among
#     the BEFORE's process and its children;
#   - the tool runs through a symlink named `bpftrace`, as `pidof bpftrace` in signal tests needs.
set -eu
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOOL=$(realpath "${1:?usage: bpftrace-head-suite.sh PATH_TO_DWARFTRACE [runner options]}"); shift
BT_GIT=${BT_GIT:-/work/.mirror/bpftrace+bpftrace/repo}
W=${BT_HEAD_DIR:-/tmp/bthead}
SUITE_PY=${SUITE_PY:-$HERE/../../../shared/tools/bpftrace_suite.py}
[ -f "$SUITE_PY" ] || { echo "bpftrace-head-suite.sh: no runner at $SUITE_PY (set SUITE_PY)" >&2; exit 2; }

if [ ! -f "$W/.built" ]; then
	[ -d "$BT_GIT" ] || { echo "bpftrace-head-suite.sh: no bpftrace git tree at $BT_GIT (set BT_GIT)" >&2; exit 2; }
	rm -rf "$W"; mkdir -p "$W/src"
	git --git-dir="$BT_GIT" archive HEAD tests tools | tar -x -C "$W/src"
	git --git-dir="$BT_GIT" log -1 --format='%H %cs %s' > "$W/COMMIT"
	cat > "$W/src/CMakeLists.txt" <<-'EOF'
	cmake_minimum_required(VERSION 3.16)
	project(bpftrace_testprogs C CXX)
	add_subdirectory(tests/testlibs)
	add_subdirectory(tests/testprogs)
	EOF
	objcopy=$(command -v llvm-objcopy || command -v llvm-objcopy-14)
	dwp=$(command -v llvm-dwp || command -v llvm-dwp-14)
	cmake -S "$W/src" -B "$W" -DLLVM_OBJCOPY="$objcopy" -DLLVM_DWP="$dwp" >/dev/null
	make -C "$W" -j2 -k all testlibs >"$W/build.log" 2>&1 ||
		echo "bpftrace-head-suite.sh: some test programs did not build (see $W/build.log); their tests fail" >&2
	cp -r "$W/src/tests/runtime" "$W/tests/"
	cp -r "$W/src/tools" "$W/tools"
	touch "$W/.built"
fi
mkdir -p "$W/bin"
ln -sfn "$TOOL" "$W/bin/bpftrace"

exec python3 - "$SUITE_PY" --tool "$W/bin/bpftrace" --tests "$W/tests/runtime" -j 2 "$@" <<'PY'
import os, sys
path = sys.argv[1]
sys.argv = [path] + sys.argv[2:]
src = open(path).read()

def swap(old, new, count=1):
    global src
    if src.count(old) < count:
        sys.exit("bpftrace-head-suite.sh: the runner changed; cannot patch %r" % old)
    src = src.replace(old, new)

# AFTER and the clock start on bpftrace's private marker only.
swap('ATTACH_RE = re.compile(r"^(__BPFTRACE_NOTIFY_PROBES_ATTACHED|Attaching \\d+ probe|\\{\\"type\\": ?\\"attached_probes\\")")',
     'ATTACH_RE = re.compile(r"^__BPFTRACE_NOTIFY_PROBES_ATTACHED")')
# A BEFORE is found under its last word, as the process or one of its children.
swap('''                    cn = os.path.basename(b.strip().split()[0])[:15]
                    waited = 0.0''',
     '''                    cn = os.path.basename(b.strip().split()[-1])[:15]
                    waited = 0.0''')
swap('''                            comm = open("/proc/%d/comm" % bp.pid).read().strip()''',
     '''                            comm = open("/proc/%d/comm" % bp.pid).read().strip()
                            if comm != cn:
                                kids = subprocess.run(["ps", "--ppid", str(bp.pid), "--no-headers", "-o", "comm"],
                                                      stdout=subprocess.PIPE, text=True).stdout.split()
                                comm = cn if cn in kids else comm''')
# The commands' environment is the runner's own; --language's variable goes through.
if os.environ.get("DWARFTRACE_LANGUAGE"):
    swap('''"__BPFTRACE_NOTIFY_AOT_PORTABILITY_DISABLED": "1", "PATH"''',
         '''"__BPFTRACE_NOTIFY_AOT_PORTABILITY_DISABLED": "1",
               "DWARFTRACE_LANGUAGE": os.environ["DWARFTRACE_LANGUAGE"], "PATH"''')
g = {"__name__": "__main__", "__file__": path}
exec(compile(src, path, "exec"), g)
PY
