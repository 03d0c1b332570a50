#!/usr/bin/env bash
# bench/unwind_real.sh — ustack_dwarf on programs no one here wrote: Debian's own python3, perl,
# bash, and g++ (cc1plus) compiling a template-heavy file, each profiled at 999 Hz while it works
# (system-wide dwarftrace, filtered by comm, started before the program). Prints one table row per
# program: samples, the share whose stack reaches the true root (_start, or clone3 for threads),
# the share that ended "no tables yet" (a single frame of a library not yet known) and the
# deepest stack seen. Not a test: nothing here passes or fails on a number.
#
#   bash bench/unwind_real.sh [DWARFTRACE]
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DT=${1:-$ROOT/build/runtime/dwarftrace}
[ -x "$DT" ] || { echo "unwind_real.sh: $DT is not built" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "unwind_real.sh: run as root (BPF)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat >"$TMP/work.cpp" <<'CPP'
#include <algorithm>
#include <map>
#include <regex>
#include <string>
#include <vector>
#include <functional>
#include <iostream>
template <int N> struct F { static int v() { return F<N - 1>::v() + N; } };
template <> struct F<0> { static int v() { return 0; } };
int main() {
	std::map<std::string, std::vector<int>> m;
	std::regex re("([a-z]+)=([0-9]+)");
	std::vector<std::function<int(int)>> fs;
	for (int i = 0; i < 10; i++) fs.push_back([i](int x) { return x * i; });
	std::sort(fs.begin(), fs.end(), [](auto &a, auto &b) { return a(1) < b(1); });
	return F<300>::v() + (int)m.size();
}
CPP

# profile COMM CMD...: runs CMD under a system-wide ustack_dwarf profile filtered on COMM.
profile() {
	local comm=$1
	shift
	"$DT" -e "profile:hz:999 /comm == \"$comm\"/ { @[ustack_dwarf] = count(); }" \
		>"$TMP/out" 2>"$TMP/err" &
	local dp=$!
	for _ in $(seq 200); do
		ls -l /proc/$dp/fd 2>/dev/null | grep -q perf_event && break
		sleep 0.05
	done
	sleep 0.3
	"$@" >/dev/null 2>&1
	kill -INT "$dp"
	wait "$dp"
	/usr/bin/python3 - "$comm" "$TMP/out" <<'PY'
import re, sys
comm, path = sys.argv[1], sys.argv[2]
ents = re.findall(r"@\[\n(.*?)\]: (\d+)", open(path).read(), re.S)
tot = rooted = single = 0
deepest = 0
for body, c in ents:
    lines = [l.strip() for l in body.split("\n") if l.strip()]
    c = int(c)
    tot += c
    if lines and re.match(r"(_start|__GI___clone3|__clone3|clone3)(\+\d+)?$", lines[-1]):
        rooted += c
    if len(lines) == 1:
        single += c
    deepest = max(deepest, len(lines))
if tot:
    print("%-10s %8d %9.1f%% %11.1f%% %8d" % (comm, tot, 100.0 * rooted / tot, 100.0 * single / tot,
                                             deepest))
else:
    print("%-10s %8d %10s %12s %8s" % (comm, 0, "n/a", "n/a", "n/a"))
PY
}

printf "%-10s %8s %10s %12s %8s\n" program samples "to root" "one frame" deepest
profile python3 /usr/bin/python3 -c '
import json, re, time
t = time.time() + 3
d = {}
while time.time() < t:
    s = json.dumps({str(i): [i, str(i) * 3] for i in range(300)})
    d = json.loads(s)
    sorted(d, key=lambda k: re.sub(r"[0-9]", "x", k))
'
profile perl /usr/bin/perl -e '
my $t = time + 3; my %h;
while (time < $t) { for my $i (1 .. 20000) { $h{$i % 997} .= chr(65 + $i % 26); }
	my @k = sort { $h{$a} cmp $h{$b} } keys %h; %h = (); }'
profile bash /bin/bash -c 'i=0; s=; end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do
	i=$((i + 1)); s="${s:0:100}$i"; case $s in *9*) : ;; esac; done'
profile cc1plus /usr/bin/g++ -O2 -std=c++17 -c "$TMP/work.cpp" -o "$TMP/work.o"
