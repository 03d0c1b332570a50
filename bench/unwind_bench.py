#!/usr/bin/env python3
"""unwind_bench.py -- the measurements behind bench/unwind.sh (see there); prints one table.

Usage: unwind_bench.py BUILD_DIR N TMPDIR (TMPDIR holds the compiled unwind_build_speed probe).
Every figure is measured in this run; a tool that is missing prints "n/a", a run that fails
prints "fail" -- nothing is filled in from elsewhere.
"""

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

BUILD, N, TMP = sys.argv[1], int(sys.argv[2]), sys.argv[3]
DT = os.path.join(BUILD, "runtime", "dwarftrace")
T = os.path.join(BUILD, "tests", "targets")
BPFTRACE = shutil.which("bpftrace")
PERF = shutil.which("perf")
ROOT_RE = re.compile(r"^\s*(_start|__GI___clone3|__clone3|clone3)(\+\d+)?(\s|$)")

# (label, argv): no-frame-pointer targets, each running long enough for one 1.5 s profile.
TARGETS = [
    ("C chain", ["chain_nofp", "3"]),
    ("qsort callback", ["qsort_cb_nofp", "3"]),
    ("C++ virtual", ["cxx_nofp", "virtual", "3"]),
    ("C++ exceptions", ["cxx_nofp", "except", "3"]),
    ("C++ sort lambda", ["cxx_nofp", "sort", "3"]),
    ("signal handler", ["sig_nofp", "3"]),
    ("sigaltstack", ["sig_nofp", "3", "alt"]),
    ("threads", ["threads_nofp", "3"]),
    ("dlopen", ["dlopen_main_nofp", "3", "0"]),
    ("static-pie", ["chain_static_nofp", "3"]),
    ("asm without CFI", ["asm_nocfi_nofp", "3"]),
    ("vDSO", ["pltvdso_nofp", "vdso", "3"]),
    ("PLT", ["pltvdso_nofp", "plt", "3"]),
]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def bt_stacks(text):
    """(count, last frame line) of every @[...]: N entry in bpftrace-style text output."""
    out = []
    for body, count in re.findall(r"@\[\n(.*?)\]: (\d+)", text, re.S):
        lines = [l for l in body.split("\n") if l.strip()]
        out.append((int(count), lines))
    return out


def root_share(stacks):
    total = sum(c for c, _ in stacks)
    rooted = sum(c for c, l in stacks if l and ROOT_RE.match(l[-1].split("(")[0]))
    return (100.0 * rooted / total) if total else None, total


def profile_target(argv, tool):
    """Share of complete stacks (%, samples) of one target under one tool, 1.5 s at 499 Hz."""
    p = subprocess.Popen([os.path.join(T, argv[0])] + argv[1:], stdout=subprocess.DEVNULL)
    time.sleep(0.3)
    try:
        if tool == "dwarftrace":
            prog = ("profile:hz:499 /pid == %d/ { @[ustack_dwarf(1024)] = count(); } "
                    "interval:ms:1500 { exit(); }" % p.pid)
            r = run([DT, "-e", prog], timeout=60)
            return root_share(bt_stacks(r.stdout))
        if tool == "bpftrace":
            prog = ("profile:hz:499 /pid == %d/ { @[ustack] = count(); } "
                    "interval:ms:1500 { exit(); }" % p.pid)
            r = run([BPFTRACE, "-e", prog], timeout=60)
            return root_share(bt_stacks(r.stdout))
        data = os.path.join(TMP, "perf.data")
        run([PERF, "record", "-q", "-F", "499", "--call-graph", "dwarf", "-p", str(p.pid),
             "-o", data, "--", "sleep", "1.5"], timeout=60)
        r = run([PERF, "script", "-i", data, "-F", "ip,sym", "--no-inline"], timeout=300)
        stacks = []
        for block in r.stdout.split("\n\n"):
            lines = [l.split(None, 1)[1] if len(l.split(None, 1)) > 1 else "?"
                     for l in block.split("\n") if l.strip()]
            if lines:
                stacks.append((1, [re.sub(r"@@?GLIBC.*", "", l) for l in lines]))
        size = os.path.getsize(data)
        share = root_share(stacks)
        profile_target.perf_bytes.append((size, share[1]))
        return share
    finally:
        p.kill()
        p.wait()


profile_target.perf_bytes = []


def fmt_share(x):
    share, total = x
    return "n/a" if share is None else "%.1f%% (%d)" % (share, total)


def completeness(rows):
    tools = ["dwarftrace"] + (["bpftrace"] if BPFTRACE else []) + (["perf"] if PERF else [])
    sums = {t: [0.0, 0] for t in tools}
    for label, argv in TARGETS:
        cells = []
        for t in tools:
            share, total = profile_target(argv, t)
            cells.append(fmt_share((share, total)))
            if share is not None:
                sums[t][0] += share * total / 100.0
                sums[t][1] += total
        rows.append(("completeness: " + label, " | ".join("%s %s" % (t, c) for t, c in
                                                          zip(tools, cells))))
    rows.append(("completeness: all targets", " | ".join(
        "%s %.1f%%" % (t, 100.0 * s[0] / s[1]) if s[1] else "%s n/a" % t for t, s in sums.items())))


def timed_work(rounds):
    env = dict(os.environ, PV_TIME="1")
    r = run([os.path.join(T, "pltvdso_nofp"), "work", str(rounds)], env=env, timeout=300)
    m = re.search(r"pv_time ([\d.]+)", r.stderr)
    return float(m.group(1)) if m else None


def wait_attached(p, path):
    """Until the tracer holds perf event fds (its profile probe is attached); its "Attaching"
    line may sit in a stdio buffer while its output is a file."""
    for _ in range(400):
        if p.poll() is not None:
            return False
        try:
            fds = os.listdir("/proc/%d/fd" % p.pid)
            if any("perf_event" in os.readlink("/proc/%d/fd/%s" % (p.pid, fd))
                   for fd in fds if os.path.exists("/proc/%d/fd/%s" % (p.pid, fd))):
                time.sleep(0.2)  # the other CPUs' events, and BEGIN
                return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def under_tracer(kind, rounds):
    """The work's own wall time while `kind` profiles it at 999 Hz with user stacks."""
    log = os.path.join(TMP, kind + ".log")
    if kind == "perf":
        env = dict(os.environ, PV_TIME="1")
        r = run([PERF, "record", "-q", "-F", "999", "--call-graph", "dwarf", "-o",
                 os.path.join(TMP, "ovh.data"), "--", os.path.join(T, "pltvdso_nofp"), "work",
                 str(rounds)], env=env, timeout=600)
        m = re.search(r"pv_time ([\d.]+)", r.stderr)
        return float(m.group(1)) if m else None
    if kind == "dwarftrace":
        cmd = [DT, "-e", 'profile:hz:999 /comm == "pltvdso_nofp"/ { @[ustack_dwarf] = count(); }']
    else:
        cmd = [BPFTRACE, "-e", 'profile:hz:999 /comm == "pltvdso_nofp"/ { @[ustack] = count(); }']
    with open(log, "w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
    try:
        if not wait_attached(p, log):
            return None
        return timed_work(rounds)
    finally:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def overhead(rows):
    rounds = 2500
    kinds = ["alone", "dwarftrace"] + (["perf"] if PERF else []) + (["bpftrace"] if BPFTRACE else [])
    times = {k: [] for k in kinds}
    for _ in range(N):  # interleaved, so a noisy neighbour hurts every column alike
        for k in kinds:
            t = timed_work(rounds) if k == "alone" else under_tracer(k, rounds)
            if t is not None:
                times[k].append(t)
    base = statistics.median(times["alone"])
    cells = ["alone %.3f s" % base]
    for k in kinds[1:]:
        if times[k]:
            med = statistics.median(times[k])
            cells.append("%s %.3f s (x%.3f, +%.1f%%)" % (k, med, med / base,
                                                         100.0 * (med / base - 1)))
        else:
            cells.append("%s fail" % k)
    rows.append(("overhead: fixed work, 999 Hz, median of %d" % N, " | ".join(cells)))


def fd_ids(pid, what):
    ids = set()
    d = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(d):
        try:
            for line in open(os.path.join(d, fd)):
                if line.startswith(what + ":"):
                    ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def prog_ids(pid):
    return fd_ids(pid, "prog_id")


def map_ids(pid):
    return fd_ids(pid, "map_id")


def probe_stats(prog, tgt_pid, secs=4):
    """(run_time_ns, run_cnt) of the probe's entry program and the -v text, for `prog` run
    against the target for `secs`. Tail calls are not counted separately by the kernel: the
    entry program's run time covers the walker runs and the continuation it tail-calls."""
    log = os.path.join(TMP, "cost.log")
    with open(log, "w") as f:
        p = subprocess.Popen([DT, "-v", "-e", prog % tgt_pid + " interval:s:%d { exit(); }" % secs],
                             stdout=f, stderr=subprocess.STDOUT)
    wait_attached(p, log)
    time.sleep(secs - 1.5)
    ns = cnt = 0
    walks = frames = None
    for i in map_ids(p.pid):
        r = run(["bpftool", "map", "show", "id", str(i)])
        if "name wstats" not in r.stdout:
            continue
        vals = []
        for k in (0, 1):  # DT_WSTAT_WALKS, DT_WSTAT_FRAMES
            r = run(["bpftool", "map", "lookup", "id", str(i), "key", str(k), "0", "0", "0",
                     "-j"])
            vals.append(sum(v["value"] for v in json.loads(r.stdout)["formatted"]["values"]))
        walks, frames = vals
    for i in prog_ids(p.pid):
        r = run(["bpftool", "prog", "show", "id", str(i), "-j"])
        try:
            info = json.loads(r.stdout)
        except ValueError:
            continue
        if info.get("name", "").endswith("_profile"):
            ns += info.get("run_time_ns", 0)
            cnt += info.get("run_cnt", 0)
    p.wait(timeout=60)
    return ns, cnt, walks, frames


def bpf_cost(rows):
    """Per stack and per frame, on an 11-frame stack (qsort callback: fixed per-stack costs
    -- tail calls, storing, the probe's map update -- weigh in) and on a 505-frame one
    (recursion: the per-frame cost alone). Returns the frames per stack of the first."""
    old = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    open("/proc/sys/kernel/bpf_stats_enabled", "w").write("1")
    fpw0 = 0
    try:
        for label, argv, depth in (("qsort callback", ["qsort_cb_nofp", "12"], ""),
                                   ("recursion 500", ["recurse_nofp", "12"], "(1024)")):
            tgt = subprocess.Popen([os.path.join(T, argv[0])] + argv[1:])
            time.sleep(0.3)
            try:
                # The same probe without the stack: what a sample costs before unwinding.
                bns, bcnt, _, _ = probe_stats("profile:hz:999 /pid == %d/ { @[pid] = count(); }",
                                              tgt.pid)
                ns, cnt, walks, frames = probe_stats(
                    "profile:hz:999 /pid == %%d/ { @[ustack_dwarf%s] = count(); }" % depth,
                    tgt.pid)
            finally:
                tgt.kill()
                tgt.wait()
            fpw = frames / walks if walks else 0
            fpw0 = fpw0 or fpw
            if cnt and bcnt and walks:
                # Program stats and walker counters are read at the same moment; samples of
                # other processes cost what they cost without the stack and are taken out.
                per = (ns - cnt * bns / bcnt) / walks
                rows.append(("BPF cost: %s, %.1f frames/stack" % (label, fpw),
                             "%.0f ns per stack, %.0f ns per frame (entry+walker+continuation "
                             "minus the same probe without the stack; bpf_prog_info)"
                             % (per, per / fpw if fpw else 0)))
            else:
                rows.append(("BPF cost: " + label, "fail (no run counted)"))
        return fpw0
    finally:
        open("/proc/sys/kernel/bpf_stats_enabled", "w").write(old)


def build_speed(rows):
    libs = ["/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
            "/usr/lib/x86_64-linux-gnu/libclang-cpp.so.14"]
    r = run([os.path.join(TMP, "unwind_build_speed")] + [l for l in libs if os.path.exists(l)],
            timeout=600)
    for line in r.stdout.splitlines():
        path, nrows, nrules, secs, rps, kbytes = line.split()
        rows.append(("table build: " + os.path.basename(path),
                     "%s rows, %s rules in %.0f ms: %.2fM rows/s; rows+rules %.2f B/row"
                     % (nrows, nrules, float(secs) * 1e3, float(rps) / 1e6,
                        int(kbytes) / int(nrows))))


def bytes_per_row(rows):
    # A process that maps libLLVM and libclang-cpp: a dwarftrace idling 4 s.
    holder = subprocess.Popen([DT, "-e", "interval:s:4 { exit(); }"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    time.sleep(1)
    r = run([DT, "-v", "-p", str(holder.pid), "-e", "profile:hz:99 { @[ustack_dwarf] = count(); }"
             " interval:ms:500 { exit(); }"], timeout=60)
    holder.wait()
    tb = re.search(r"^unwind table_bytes (\d+)", r.stderr, re.M)
    nr = re.search(r"^unwind rows (\d+)", r.stderr, re.M)
    if tb and nr and int(nr.group(1)):
        rows.append(("kernel bytes per row, all-in",
                     "%.2f B (%s rows of every object dwarftrace maps; row pages + index + "
                     "rules, page-rounded)" % (int(tb.group(1)) / int(nr.group(1)), nr.group(1))))
    else:
        rows.append(("kernel bytes per row, all-in", "fail"))


def bytes_per_sample(rows, fpw):
    cell = "dwarftrace %.0f B (the walker's %.1f frames x 8 + a 24 B map update; identical " \
           "stacks share one frames entry)" % (fpw * 8 + 24, fpw)
    if profile_target.perf_bytes:
        size = sum(s for s, _ in profile_target.perf_bytes)
        n = sum(c for _, c in profile_target.perf_bytes)
        cell += " | perf.data %.0f B" % (size / n if n else 0)
    rows.append(("bytes per sample", cell))


def latency(rows):
    log = os.path.join(TMP, "lat.log")
    prog = ('profile:hz:999 /comm == "chain_nofp"/ { printf("S %d %lld\\n%s\\n", pid, nsecs, '
            'ustack_dwarf); }')
    with open(log, "w") as f:
        p = subprocess.Popen([DT, "-e", prog], stdout=f, stderr=subprocess.STDOUT)
    wait_attached(p, log)
    for _ in range(30):
        run([os.path.join(T, "chain_nofp"), "0.1"])
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    p.wait(timeout=30)
    first, firstok = {}, {}
    cur = None
    for line in open(log):
        m = re.match(r"S (\d+) (\d+)", line)
        if m:
            cur = (int(m.group(1)), int(m.group(2)))
            first.setdefault(cur[0], cur[1])
        elif cur and ROOT_RE.match(line) and cur[0] not in firstok:
            firstok[cur[0]] = cur[1]
    lat = sorted((firstok[p] - first[p]) / 1e6 for p in first if p in firstok)
    immediate = sum(1 for x in lat if x == 0)
    if lat:
        rows.append(("latency: first sample -> first complete stack",
                     "%d new processes: median %.2f ms, max %.2f ms; first sample already "
                     "complete in %d; never complete in %d" % (len(first), statistics.median(lat),
                                                              lat[-1], immediate,
                                                              len(first) - len(lat))))
    else:
        rows.append(("latency", "fail"))


def main():
    rows = []
    completeness(rows)
    overhead(rows)
    fpw = bpf_cost(rows)
    build_speed(rows)
    bytes_per_row(rows)
    bytes_per_sample(rows, fpw)
    latency(rows)
    w = max(len(r[0]) for r in rows)
    print("%-*s  %s" % (w, "measure", "result (this machine, this run)"))
    print("%s  %s" % ("-" * w, "-" * 60))
    for k, v in rows:
        print("%-*s  %s" % (w, k, v))


if __name__ == "__main__":
    main()
