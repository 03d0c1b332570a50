#!/usr/bin/env python3
"""ustack_dwarf_compare.py -- profiles one target program twice, under dwarftrace's ustack_dwarf
and under `perf record --call-graph dwarf`, and compares the stacks as lists of function names
(leaf first; inlined frames and symbol versions dropped, since the two symbolizers spell those
differently). Prints one line per check, for ustack_dwarf.test to EXPECT:

  root: dwarftrace OK      at least MIN% of dwarftrace's samples reach the stack's true root
  root: perf OK            the same for perf (the oracle itself is sane)
  same stacks: OK          every stack perf saw in >= 2% of its samples, dwarftrace saw too

or the numbers when a check fails. Usage: ustack_dwarf_compare.py DWARFTRACE COMM SECS CMD...
"""

import collections
import re
import subprocess
import sys
import tempfile

# After norm() and lstrip("_"). dl_start_user: the dynamic loader's own entry frame, the root of
# a sample taken while ld.so loads the program (before _start runs).
ROOTS = {"start", "clone3", "clone", "dl_start_user"}
MIN_ROOT = 99.0


def norm(name):
    name = re.sub(r"@@?GLIBC.*$", "", name)
    name = re.sub(r"^_+(GI_+)?", "", name)  # __clock_gettime vs clock_gettime (aliases)
    if name == "[unknown]" or re.search(r"\+0x[0-9a-f]+$", name) or name.startswith("0x"):
        return "?"  # a frame one symbolizer cannot name: the unwind, not the name, is compared
    if name.endswith("@plt") or name == "init":
        return "<plt>"  # perf names a PLT stub NAME@plt, dwarftrace the symbol before it (_init)
    name = re.sub(r"_impl$", "", name)  # __libc_start_main_impl (static glibc) = alias
    name = re.sub(r" \[clone [^]]*\]$", "", name)
    name = re.sub(r"\.(isra|constprop|part)\.\d+$", "", name)
    # C++: perf prints the bare name, dwarftrace the signature; compare bare names.
    if not name.startswith("operator") and "(" in name:
        name = re.sub(r"\((?:[^()]|\([^()]*\))*\)( const)?$", "", name)
    return name


def dwarftrace_stacks(dt, comm, cmd):
    prog = 'profile:hz:499 /comm == "%s"/ { @[ustack_dwarf] = count(); }' % comm
    out = subprocess.run([dt, "-e", prog, "-c", cmd], capture_output=True, text=True,
                         timeout=60).stdout
    stacks = collections.Counter()
    for body, count in re.findall(r"@\[\n(.*?)\]: (\d+)", out, re.S):
        frames = []
        for line in body.strip().split("\n"):
            line = line.strip()
            if not line or line.endswith("[inlined]"):
                continue
            frames.append(norm(re.sub(r"\+\d+$", "", line)))
        stacks[tuple(frames)] += int(count)
    return stacks


def perf_stacks(comm, cmd):
    with tempfile.NamedTemporaryFile(suffix=".data") as f:
        subprocess.run(["perf", "record", "-q", "-F", "499", "--call-graph", "dwarf", "-o",
                        f.name, "--"] + cmd.split(), capture_output=True, timeout=60)
        out = subprocess.run(["perf", "script", "-i", f.name, "-F", "comm,ip,sym",
                              "--no-inline"], capture_output=True, text=True,
                             timeout=120).stdout
    stacks = collections.Counter()
    for block in out.split("\n\n"):
        lines = [l for l in block.split("\n") if l.strip()]
        if not lines or lines[0].strip() != comm:
            continue
        frames = []
        for l in lines[1:]:
            parts = l.split(None, 1)
            frames.append(norm(parts[1].strip()) if len(parts) > 1 else "?")
        stacks[tuple(frames)] += 1
    return stacks


def same(a, b):
    return len(a) == len(b) and all(x == y or "?" in (x, y) for x, y in zip(a, b))


def root_share(stacks):
    total = sum(stacks.values())
    rooted = sum(c for s, c in stacks.items() if s and s[-1].lstrip("_") in ROOTS)
    return total, (100.0 * rooted / total if total else 0.0)


def main():
    dt, comm, cmd = sys.argv[1], sys.argv[2][:15], " ".join(sys.argv[3:])
    d = dwarftrace_stacks(dt, comm, cmd)
    p = perf_stacks(comm, cmd)
    for who, st in (("dwarftrace", d), ("perf", p)):
        total, share = root_share(st)
        ok = total > 0 and share >= MIN_ROOT
        print("root: %s %s" % (who, "OK" if ok else "FAIL (%.1f%% of %d)" % (share, total)))
    ptotal = sum(p.values())
    missing = [s for s, c in p.items() if c >= 0.02 * ptotal and not any(same(s, t) for t in d)]
    print("same stacks: %s" % ("OK" if ptotal and not missing else "FAIL"))
    for s in missing:
        print("  only perf: " + " / ".join(s))
    if missing:
        for s, c in d.most_common(5):
            print("  dwarftrace %d: %s" % (c, " / ".join(s)))


if __name__ == "__main__":
    main()
