#!/usr/bin/env python3
"""xprobe_compare.py -- checks xprobes against a program that measures itself (issue 5).

Runs `dwarftrace -c "xwork ROUNDS DIR MS"` with one xprobe per xwork function summing wall, oncpu,
runq, blocked, iowait and nswitch per function, and compares the totals with xwork's own
(CLOCK_MONOTONIC and CLOCK_THREAD_CPUTIME_ID from the first to the last line of each function):

  * the number of calls is exact (doomed, which longjmps out, and exiter, whose thread exits inside
    it, are never measured: they never return);
  * wall and on-CPU totals agree within 5 % plus 1 ms per call (the probes' own traps, and the
    return path, are inside the xprobe's interval and outside the program's);
  * every call's buckets add up: wall == oncpu + runq + blocked + iowait, exactly;
  * the right bucket dominates: runq for contend (two busy threads pinned to its CPU), blocked for
    nap (nanosleep) and lockwait (a futex wait), iowait for syncwrite (fsync waits in
    uninterruptible sleep on this ext4/virtio disk), on-CPU for rec's and outer's nesting checks.

Prints a table, then `xprobe totals agree with the program's own` or one FAIL line per problem
(exit status 1). Usage: xprobe_compare.py DWARFTRACE XWORK DIR [ROUNDS [MS]]
"""
import re
import subprocess
import sys

FUNCS = ["burn", "nap", "contend", "lockwait", "syncwrite", "outer", "rec", "jumper"]
NEVER = ["doomed", "exiter"]
MAPS = {"n": "calls", "wall": "wall", "on": "oncpu", "rq": "runq", "bl": "blocked",
        "io": "iowait", "sw": "nswitch", "bad": "unaccounted"}


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    dt, xwork, d = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    ms = int(sys.argv[5]) if len(sys.argv) > 5 else 20
    points = ",".join(f"xprobe:{xwork}:{f}" for f in FUNCS + NEVER)
    prog = (points + " { @n[func] = count(); @wall[func] = sum(wall); @on[func] = sum(oncpu); "
            "@rq[func] = sum(runq); @bl[func] = sum(blocked); @io[func] = sum(iowait); "
            "@sw[func] = sum(nswitch); @bad[func] = sum(wall - oncpu - runq - blocked - iowait); "
            "@off[func] = sum(offcpu - runq - blocked - iowait); }")
    r = subprocess.run([dt, "-e", prog, "-c", f"{xwork} {rounds} {d} {ms}"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    out = r.stdout
    if r.returncode != 0:
        print(out)
        print(f"FAIL: dwarftrace exited with {r.returncode}")
        return 1
    own = {}
    for m in re.finditer(r"^xwork (\w+) calls=(\d+) wall_ns=(\d+) cpu_ns=(\d+)$", out, re.M):
        own[m.group(1)] = tuple(int(x) for x in m.group(2, 3, 4))
    xp = {}
    for m in re.finditer(r"^@(\w+)\[(\w+)\]: (-?\d+)$", out, re.M):
        xp.setdefault(m.group(2), {})[m.group(1)] = int(m.group(3))
    fails = []

    print(f"{'function':<10} {'calls':>5} {'own wall ms':>11} {'xp wall ms':>10} {'own cpu ms':>10} "
          f"{'xp oncpu ms':>11} {'runq ms':>8} {'blocked ms':>10} {'iowait ms':>9} {'nswitch':>7}")
    for f in FUNCS:
        if f not in own or f not in xp:
            fails.append(f"{f}: missing from the {'program' if f not in own else 'tracer'}'s output")
            continue
        calls, wall, cpu = own[f]
        x = xp[f]
        g = lambda k: x.get(k, 0)
        print(f"{f:<10} {calls:>5} {wall / 1e6:>11.2f} {g('wall') / 1e6:>10.2f} {cpu / 1e6:>10.2f} "
              f"{g('on') / 1e6:>11.2f} {g('rq') / 1e6:>8.2f} {g('bl') / 1e6:>10.2f} "
              f"{g('io') / 1e6:>9.2f} {g('sw'):>7}")
        if g("n") != calls:
            fails.append(f"{f}: {g('n')} calls measured, the program made {calls}")
        tol = lambda ref: 0.05 * ref + 1e6 * calls
        if abs(g("wall") - wall) > tol(wall):
            fails.append(f"{f}: wall {g('wall')} ns vs the program's {wall} ns")
        if abs(g("on") - cpu) > tol(cpu):
            fails.append(f"{f}: oncpu {g('on')} ns vs the program's CPU time {cpu} ns")
        if g("bad") != 0 or g("off") != 0:
            fails.append(f"{f}: buckets do not add up to wall ({g('bad')} ns, {g('off')} ns)")
        buckets = {"oncpu": g("on"), "runq": g("rq"), "blocked": g("bl"), "iowait": g("io")}
        top = max(buckets, key=buckets.get)
        want = {"contend": "runq", "nap": "blocked", "lockwait": "blocked"}.get(f)
        if want and top != want:
            fails.append(f"{f}: {top} dominates, expected {want} ({buckets})")
        if f == "syncwrite" and not (g("io") > 0 and g("io") > g("bl")):
            fails.append(f"syncwrite: iowait {g('io')} ns is not above blocked {g('bl')} ns")
        if f in ("nap", "lockwait") and g("sw") < calls:
            fails.append(f"{f}: {g('sw')} context switches for {calls} sleeping calls")
    for f in NEVER:
        if f in xp:
            fails.append(f"{f}: never returns, yet {xp[f].get('n')} calls were measured")
    for msg in fails:
        print("FAIL: " + msg)
    if not fails:
        print("xprobe totals agree with the program's own")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
