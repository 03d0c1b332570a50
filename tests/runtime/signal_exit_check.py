#!/usr/bin/env python3
"""signal_exit_check.py -- one way out of a -c run, checked for any probe type (issue 10's rules).

Runs `dwarftrace -c CMD -e PROG`, waits until a process named COMM runs in the command's cgroup
(dwarftrace.PID under the cgroup v2 mount) and the probes are attached, sends SIGNAL to dwarftrace
alone, and prints what must hold after it exits, one line each:
  status=N                dwarftrace's exit status (0: a stop signal ends the run as Ctrl-C does)
  cgroup gone|left        the command's cgroup
  command gone|left       the command (not a zombie)
then dwarftrace's output (END's lines and the maps). With `--twice`, the signal is sent again as
soon as the first map line is out (a second Ctrl-C while detaching ends it at once).

usage: signal_exit_check.py [--twice] DWARFTRACE SIGNAL COMM CMD PROG
"""
import os
import signal
import subprocess
import sys
import tempfile
import time


def cgroup2_mount():
    with open("/proc/mounts") as f:
        for ln in f:
            parts = ln.split()
            if parts[2] == "cgroup2":
                return parts[1]
    return None


def alive(pid):
    """Whether pid runs (exists and is no zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def main():
    args = sys.argv[1:]
    twice = "--twice" in args
    args = [a for a in args if a != "--twice"]
    if len(args) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    dt, sig, comm, cmd, prog = args
    signo = getattr(signal, "SIG" + sig)
    cg = cgroup2_mount()
    if not cg:
        print("no cgroup v2 mount")
        return 1
    out = tempfile.TemporaryFile(mode="w+")
    p = subprocess.Popen([dt, "-c", cmd, "-e", prog], stdout=out, stderr=subprocess.STDOUT)
    procs = os.path.join(cg, f"dwarftrace.{p.pid}", "cgroup.procs")
    child = None
    deadline = time.time() + 20
    while time.time() < deadline and p.poll() is None:
        try:
            with open(procs) as f:
                for pid in f.read().split():
                    with open(f"/proc/{pid}/comm") as c:
                        if c.read().strip() == comm:
                            child = int(pid)
        except OSError:
            pass
        out.seek(0)
        if child and "Attaching" in out.read():
            break
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(signo)
    if twice:
        while p.poll() is None and time.time() < deadline:
            out.seek(0)
            if any(ln.startswith("@") for ln in out.read().splitlines()):
                p.send_signal(signo)
                break
            time.sleep(0.01)
    try:
        status = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        status = p.wait()
        print("dwarftrace did not exit within 30 s of the signal")
    print(f"status={status}")
    print("cgroup left" if os.path.isdir(os.path.dirname(procs)) else "cgroup gone")
    # The command may take the end of the run's grace to go; it is gone when dwarftrace exits.
    print("command left" if child and alive(child) else
          "command gone" if child else f"command {comm} never seen in the cgroup")
    out.seek(0)
    sys.stdout.write(out.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
