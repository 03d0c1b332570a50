#!/usr/bin/env python3
"""python_compare.py DWARFTRACE PYPROG TMPDIR [SECS] -- ustack_dwarf's Python frames against the
program's own view of itself. pyprog.py's `shares` mode runs main -> work -> f_half / f_third /
f_sixth while a thread of its own samples sys._current_frames() of the main thread and writes
folded stacks; dwarftrace samples the same main thread with profile:hz:199 and writes folded
stacks. For each f_* function, the share of samples under it must agree between the two within
sampling error: a two-proportion z-test, |z| < 4.5 (a false alarm about once in 150,000 runs), and
each tool must have put at least 100 samples under work() so that the test has power: a walker that
lost or misplaced a function would move its share by far more than the tolerance. Prints the table
and exits 1 on a disagreement."""
import math
import re
import subprocess
import sys

PY = "/usr/bin/python3.11"
FUNCS = ("f_half", "f_third", "f_sixth")
PYFRAME = re.compile(r"^(\S+) \(([^()]*\.py):\d+\)$")


def shares_of(lines, name_of):
    """{f: samples} for the f_* frame directly under work(), and the total under work()."""
    counts, total = {f: 0 for f in FUNCS}, 0
    for line in lines:
        stack, _, n = line.rstrip().rpartition(" ")
        if not n.isdigit():
            continue
        names = [name_of(fr) for fr in stack.split(";")]
        names = [x for x in names if x]
        if "work" not in names:
            continue
        total += int(n)
        k = names.index("work")
        if k + 1 < len(names) and names[k + 1] in counts:
            counts[names[k + 1]] += int(n)
    return counts, total


def dt_name(frame):
    m = PYFRAME.match(frame)
    return m.group(1) if m else None


def main():
    dt, prog, tmp = sys.argv[1:4]
    secs = sys.argv[4] if len(sys.argv) > 4 else "6"
    own = f"{tmp}/own.folded"
    r = subprocess.run([dt, "-f", "folded", "-e",
                        "profile:hz:199 /pid == cpid && tid == pid/ { @[ustack_dwarf] = count(); }",
                        "-c", f"{PY} {prog} shares {secs} {own}"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        print(f"dwarftrace failed ({r.returncode}): {r.stderr}")
        return 1
    dtc, dtn = shares_of(r.stdout.splitlines(), dt_name)
    with open(own) as f:
        ownc, ownn = shares_of(f.read().splitlines(), lambda x: x)
    print(f"{'function':10} {'dwarftrace':>16} {'self-sampling':>16} {'z':>6}")
    bad = []
    for fn in FUNCS:
        p1, p2 = dtc[fn] / max(dtn, 1), ownc[fn] / max(ownn, 1)
        p = (dtc[fn] + ownc[fn]) / max(dtn + ownn, 1)
        se = math.sqrt(max(p * (1 - p), 1e-9) * (1 / max(dtn, 1) + 1 / max(ownn, 1)))
        z = (p1 - p2) / se
        print(f"{fn:10} {dtc[fn]:6} {100 * p1:7.1f}% {ownc[fn]:6} {100 * p2:7.1f}% {z:6.2f}")
        if abs(z) >= 4.5:
            bad.append(f"{fn}: {100 * p1:.1f}% against {100 * p2:.1f}% (z = {z:.2f})")
    print(f"{'work()':10} {dtn:6} samples    {ownn:6} samples")
    if dtn < 100 or ownn < 100:
        bad.append(f"too few samples under work(): dwarftrace {dtn}, self-sampling {ownn}")
    for b in bad:
        print("DISAGREE", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
