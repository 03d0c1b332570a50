#!/usr/bin/env python3
"""py_maps_memory.py DWARFTRACE PYTHON SRC -- the kernel memory of the walker's Python maps
(dt_python.h, "Lazy maps"). Runs `ustack_dwarf` on a profile probe twice, on a command that is no
CPython (sleep) and on python3.11 (pyprog.py), and while each runs reads dwarftrace's own
/proc/PID/fdinfo: each BPF map's type, value size, max_entries and memlock. Prints one line a run:
the memlock of every map the process holds, and of the Python code-object map (the LRU hash of
dt_py_code records), which should exist only in the second run."""
import os
import subprocess
import sys
import time

LRU_HASH = 9
PY_CODE_SIZE = 24 + 128 + 256 + 1024  # sizeof(struct dt_py_code)


def maps_of(pid):
    """(type, value_size, max_entries, memlock) of each BPF map fd of pid, once per map id."""
    seen, out = set(), []
    fddir = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(fddir):
        try:
            info = dict(l.split(":", 1) for l in open(f"{fddir}/{fd}") if ":" in l)
        except OSError:
            continue
        if "map_type" not in info or info["map_id"].strip() in seen:
            continue
        seen.add(info["map_id"].strip())
        out.append(tuple(int(info[k]) for k in ("map_type", "value_size", "max_entries",
                                                 "memlock")))
    return out


def run(dwarftrace, cmd):
    p = subprocess.Popen([dwarftrace, "-q", "-e",
                          "profile:hz:49 /pid == cpid/ { @[ustack_dwarf] = count(); }",
                          "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    best = None
    deadline = time.monotonic() + 60
    # Sample while it runs; the last reading with the most maps is the one kept.
    while p.poll() is None and time.monotonic() < deadline:
        try:
            m = maps_of(p.pid)
        except OSError:
            break
        if best is None or len(m) >= len(best):
            best = m
        time.sleep(0.2)
    err = p.communicate(timeout=60)[1]
    if p.returncode:
        sys.exit(f"dwarftrace failed ({p.returncode}): {err}")
    return best or []


def main():
    dwarftrace, python, src = sys.argv[1:4]
    for name, cmd in (("sleep", "sleep 4"),
                      ("python", f"{python} {src}/tests/targets/python/pyprog.py chain 4")):
        m = run(dwarftrace, cmd)
        total = sum(x[3] for x in m)
        code = [x for x in m if x[0] == LRU_HASH and x[1] == PY_CODE_SIZE]
        print(f"{name}: maps {len(m)} memlock {total} pycode "
              + (f"{code[0][2]} entries memlock {code[0][3]}" if code else "none"))


if __name__ == "__main__":
    main()
