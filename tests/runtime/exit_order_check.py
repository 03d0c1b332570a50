#!/usr/bin/env python3
"""exit_order_check.py — shows, without timing, that dwarftrace prints its maps before it detaches
its probes: detaching can take long (thousands of perf events) and nothing must wait for it.

dwarftrace runs a wildcard tracepoint set (the sched:sched_w* tracepoints count into @a[probe];
a few, since each takes a while to detach, and not syscalls ones, which raw_syscalls serves) and a map @z whose printing is far larger than what a pipe and a stdio buffer can hold.
Its output goes into a pipe of one page that this script reads only up to the first line of @a:
from then on dwarftrace is stuck writing @z until we read on, so it cannot have reached the detach
yet, whatever the timing. While it is held there, its perf events (or BPF links) are counted in
/proc/PID/fd: the probes must still be attached, one perf event (or link) per attach point. Then the rest is read and checked: @a counted
tracepoints and @z printed to its end.

    exit_order_check.py DWARFTRACE

Prints "tracepoints attached while the maps print: yes|no (N)", "tracepoints counted: K" and
"maps complete: yes|no"; exits 1 on any problem. Python 3 stdlib only."""
import fcntl
import os
import re
import subprocess
import sys
import tempfile

F_SETPIPE_SZ = 1031
# 2 x 1000 lhist rows of ~80 bytes: ~160 KB after the first line of @a, far past a one-page pipe
# and any stdio buffer.
PROG = ("tracepoint:sched:sched_w* { @a[probe] = count(); } "
        "BEGIN { @z[1] = lhist(0, 0, 1000, 1); @z[1] = lhist(999, 0, 1000, 1); "
        "@z[2] = lhist(0, 0, 1000, 1); @z[2] = lhist(999, 0, 1000, 1); } "
        "interval:ms:300 { exit(); }")


def attached_fds(pid):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        n += link in ("anon_inode:[perf_event]", "anon_inode:bpf_link")
    return n


def main():
    r, w = os.pipe()
    fcntl.fcntl(r, F_SETPIPE_SZ, 4096)
    err = tempfile.TemporaryFile()
    p = subprocess.Popen([sys.argv[1], "-e", PROG], stdout=w, stderr=err)
    os.close(w)
    out = os.fdopen(r, "rb", buffering=0)
    head = b""
    # Byte by byte: read nothing past the first line of @a.
    while not re.search(rb"^@a\[[^\n]*\n", head, re.MULTILINE):
        c = out.read(1)
        if not c:
            break
        head += c
    held = p.poll() is None
    n = attached_fds(p.pid) if held else 0
    m = re.search(rb"Attaching (\d+) probes", head)
    # Every tracepoint of the set and the interval timer (BEGIN has none); the old order had
    # detached them all before the first map line.
    want = int(m.group(1)) - 1 if m else 1 << 30
    ok = held and want > 2 and n >= want
    print(f"tracepoints attached while the maps print: {'yes' if ok else 'no'} ({n} of {want})")
    text = (head + out.read()).decode(errors="replace")
    p.wait()
    err.seek(0)
    counted = re.findall(r"^@a\[tracepoint:sched:sched_w\w*\]: \d+$", text, re.MULTILINE)
    print(f"tracepoints counted: {len(counted)}")
    complete = "@z[2]:" in text and re.search(r"^\[999, 1000\)\s+1 ", text.split("@z[2]:")[-1],
                                             re.MULTILINE) is not None
    print(f"maps complete: {'yes' if complete else 'no'}")
    if not (ok and counted and complete and p.returncode == 0):
        sys.stdout.write(text[-2000:] + err.read().decode(errors="replace"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
