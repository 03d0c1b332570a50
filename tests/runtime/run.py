#!/usr/bin/env python3
"""run.py -- runs dwarftrace's runtime tests: *.test files in a directive format (bpftrace's).

Each test is a block of directive lines; blocks are separated by a NAME line. Lines starting with
'#' are comments. Directives:

  NAME n            the test's name (required, starts a block)
  (an indented line continues the previous directive: multi-line programs)
  PROG text         run `dwarftrace -e text` (no shell: quotes are part of the program)
  RUN cmd           run `cmd` under /bin/sh (use $DWARFTRACE for the binary); one of PROG/RUN
  ARGS a b          extra dwarftrace arguments placed before -e (PROG only), shell-split
  BEFORE cmd        started (under /bin/sh) before the tracer; $PID is the first one's pid
  AFTER cmd         started once the tracer printed "Attaching" (or after 3 s)
  SIGNAL SIG SECS   send SIGINT/SIGTERM/... to the tracer SECS seconds after it attached
  EXPECT line       some output line equals `line` (trailing blanks ignored)
  EXPECT_NONE line  no output line equals `line`
  EXPECT_REGEX re   `re` matches somewhere in the output (re.MULTILINE)
  EXPECT_REGEX_NONE re   `re` matches nowhere
  EXPECT_ORDER a / b / c  one stack (a run of indented lines) has frames a, b, c in this order,
                    from leaf to root, maybe with other frames between them; `~re` matches a
                    frame name by regex; `NAME [inlined]` lines are not frames here
  EXPECT_STACK a / b / c  the same, but the frames are adjacent
  EXPECT_EXIT n     the tracer's exit status (default 0); `nonzero` accepts any failure
  TIMEOUT secs      hard limit; the whole process group is killed (default 10)
  REQUIRES what     root | bpftrace | kprobes | hardware | fentry | cmd:NAME | file:PATH, or !what
                    (the test is about the feature being absent); `a | b` needs all of them.
                    Skips with the reason -- only for what the machine lacks, never a bug
  ENV K=V           environment for every command of the test
  SETUP cmd / CLEANUP cmd   run before / after (shell); a failing SETUP fails the test
  RETRY n           run a failed test again, up to n times (not under --vm): only for tests
                    whose outcome rests on scheduling; a pass on retry is printed with the first
                    failure's reason and listed after the summary line

A *.table file holds bad-input cases, one a line (`#` comments, blank lines skipped):

  NAME [REQ...] | EXIT | FIRST_ERROR | COMMAND

COMMAND runs under /bin/sh ($DWARFTRACE and the rest substituted; it may prepare files in
$TMP first); its exit status must be EXIT and the first non-blank line it writes on stderr
must match the regex FIRST_ERROR (re.search). REQ words are REQUIRES items (`!kprobes`).
Every case also holds what any bad input must: done within 5 s, no crash, no verifier dump,
no "internal error", no raw "Unknown error N", no prefix said twice ("unwind: unwind:"), and
the first error line says who speaks: `dwarftrace: `, `FILE:LINE:COL: ` or bpftrace's `ERROR: `
(BAD_INPUT_SPEAKER).
A case's test name is `bad_NAME`.

In every command and expectation, $DWARFTRACE, $TARGETS (the target programs' directory), $BUILD,
$SRC (the source tree), $TMP (a fresh directory for this test) and $PID are substituted; other
`$names` (script variables, $1) are left alone. Output is stdout and stderr interleaved.

Usage: run.py --dwarftrace BIN --build-dir DIR [--filter RE] [--vm RUNVM] [-v] PATH...
PATH is a .test or .table file or a directory of them. Exit status: 0 all passed, 1 a failure, 77 nothing
could run (not root).

With --vm RUNVM, the tests run inside one VM booted by RUNVM (tests/vm/run-vm.sh): each test is
turned into a shell script (BEFORE in the background, $PID a shell variable) that the guest runs
under `timeout`, between markers; AFTER and SIGNAL are not available there.
"""

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

DIRECTIVES = {
    "NAME", "PROG", "RUN", "ARGS", "BEFORE", "AFTER", "SIGNAL", "EXPECT", "EXPECT_NONE",
    "EXPECT_REGEX", "EXPECT_REGEX_NONE", "EXPECT_ORDER", "EXPECT_STACK", "EXPECT_EXIT",
    "TIMEOUT", "REQUIRES", "ENV", "SETUP", "CLEANUP", "RETRY",
}
# What no bad input may ever give (a *.table case checks each): a verifier log, an internal
# error, an errno glibc cannot name, a prefix said twice ("unwind: unwind: ...").
BAD_INPUT_NEVER = [
    r"processed \d+ insns",
    r"(?i)internal (code generation )?error",
    r"Unknown error -?\d+",
    r"(?:^|\s)([A-Za-z@][\w@.-]*: )\1",
]
# Who speaks, at the start of a bad input's first error line: `dwarftrace: ...` or a place in
# the program, `FILE:LINE:COL-END: ...` or `FILE:LINE-LINE: ...` (bpftrace's shape; issue 13: a
# line in a script's log says whose it is), or
# bpftrace's own `ERROR: ...` for the lines that are bpftrace's words exactly (a program file
# that cannot be read, -p's number, named options after `--`): scripts around bpftrace and its
# tests match those whole lines.
BAD_INPUT_SPEAKER = re.compile(r"^(?:dwarftrace: |ERROR: |[^\s:][^:]*:\d+(?::\d+)?-\d+: )")
BAD_INPUT_TIMEOUT = "5"
# The command's stderr goes to a file (for FIRST_ERROR) and then to the test's output.
STDERR_FILE = "$TMP/.stderr"
MULTI = {"BEFORE", "AFTER", "EXPECT", "EXPECT_NONE", "EXPECT_REGEX", "EXPECT_REGEX_NONE",
         "EXPECT_ORDER", "EXPECT_STACK", "REQUIRES", "ENV", "SETUP", "CLEANUP"}
CRASH_STATUSES = {128 + s for s in (signal.SIGILL, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE,
                                    signal.SIGSEGV)}
VAR_RE = re.compile(r"\$(DWARFTRACE|TARGETS|BUILD|SRC|TMP|PID)\b")


class TestError(Exception):
    pass


def parse_file(path):
    """Returns a list of dicts, one per test; raises TestError on a malformed file."""
    tests, cur, last = [], None, None
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if line[0] in " \t":
                # An indented line continues the previous directive (multi-line programs).
                if cur is None or last is None:
                    raise TestError(f"{path}:{lineno}: continuation line without a directive")
                if last in MULTI:
                    cur[last][-1] += "\n" + line
                else:
                    cur[last] += "\n" + line
                continue
            word, _, rest = line.partition(" ")
            last = word
            if word not in DIRECTIVES:
                raise TestError(f"{path}:{lineno}: unknown directive '{word}'")
            if word == "NAME":
                cur = {"NAME": rest.strip(), "file": path, "line": lineno}
                tests.append(cur)
                continue
            if cur is None:
                raise TestError(f"{path}:{lineno}: '{word}' before the first NAME")
            if word in MULTI:
                cur.setdefault(word, []).append(rest)
            elif word in cur:
                raise TestError(f"{path}:{lineno}: '{word}' given twice in {cur['NAME']}")
            else:
                cur[word] = rest
    for t in tests:
        if ("PROG" in t) == ("RUN" in t):
            raise TestError(f"{t['file']}:{t['line']}: {t['NAME']}: exactly one of PROG or RUN")
        if "ARGS" in t and "RUN" in t:
            raise TestError(f"{t['file']}:{t['line']}: {t['NAME']}: ARGS goes with PROG; "
                            "put the options in the RUN command line")
    return tests


def parse_table(path):
    """The cases of a *.table file as tests (see the docstring); raises TestError."""
    tests = []
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" | ", 3)]
            if len(parts) != 4 or not all(parts):
                raise TestError(f"{path}:{lineno}: want 'NAME | EXIT | FIRST_ERROR | COMMAND'")
            words, want_exit, first, cmd = parts
            name, *reqs = words.split()
            if not re.fullmatch(r"\d+", want_exit):
                raise TestError(f"{path}:{lineno}: {name}: EXIT must be a number")
            try:
                re.compile(first)
            except re.error as e:
                raise TestError(f"{path}:{lineno}: {name}: bad FIRST_ERROR regex: {e}")
            t = {"NAME": f"bad_{name}", "file": path, "line": lineno,
                 "RUN": f"{{ {cmd}\n}} 2>{STDERR_FILE}; st=$?; cat {STDERR_FILE} >&2; exit $st",
                 "EXPECT_EXIT": want_exit, "FIRST_ERROR": first,
                 "EXPECT_REGEX_NONE": list(BAD_INPUT_NEVER), "TIMEOUT": BAD_INPUT_TIMEOUT}
            if reqs:
                t["REQUIRES"] = reqs
            tests.append(t)
    return tests


ATTACHED = re.compile(r"^Attached \d+ probes?$")


def first_error_line(path):
    """The first non-blank line of a file that is not the "Attached N probes" announcement
    (a run that fails after attaching says that first), or None."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return next((l.rstrip("\n") for l in f
                         if l.strip() and not ATTACHED.match(l.rstrip("\n"))), None)
    except OSError:
        return None


def have_kprobes():
    return os.path.isdir("/sys/bus/event_source/devices/kprobe")


def have_hardware():
    # A hardware PMU registers itself as the "cpu" event source (or cpu_core/cpu_atom).
    return any(os.path.isdir(f"/sys/bus/event_source/devices/{d}")
               for d in ("cpu", "cpu_core", "cpu_atom"))


FENTRY = {}


def have_fentry(dt):
    # Whether this kernel lets fentry programs load (some refuse them with EPERM even to
    # root): asked once of dwarftrace's dry run, which loads one.
    if dt not in FENTRY:
        r = subprocess.run([dt, "--dry-run", "-e", "fentry:vfs_read { }"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        FENTRY[dt] = r.returncode == 0
    return FENTRY[dt]


def have_write_user(dt):
    # Whether this kernel gives a tracepoint program bpf_probe_write_user (some withhold it
    # even from root): asked once of dwarftrace's dry run.
    if ("write_user", dt) not in FENTRY:
        r = subprocess.run([dt, "--unsafe", "--dry-run", "-e",
                            "tracepoint:syscalls:sys_enter_getpid { write_user(0, 1, 1); }"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        FENTRY[("write_user", dt)] = r.returncode == 0
    return FENTRY[("write_user", dt)]


def missing_requirement(req, vm, dt=None):
    """None if `req` holds here, else the reason to skip."""
    req = req.strip()
    if req.startswith("!"):
        # The path tested is the one where the feature is absent (a clear error).
        return None if missing_requirement(req[1:], vm, dt) else f"this machine has {req[1:]}"
    if req == "root":
        return None if os.geteuid() == 0 else "needs root"
    if req == "bpftrace":
        return None if shutil.which("bpftrace") else "bpftrace is not installed"
    if req == "kprobes":
        # The VM kernel has kprobes; the runner only learns that by booting it.
        return None if vm or have_kprobes() else "this kernel has no kprobes (see tests/vm)"
    if req == "hardware":
        return None if have_hardware() else "no hardware PMU on this machine"
    if req == "fentry":
        # The VM kernel allows them; the runner only learns that by booting it.
        return None if vm or (dt and have_fentry(dt)) else "this kernel refuses fentry (see tests/vm)"
    if req == "write_user":
        # The VM kernel gives it; the runner only learns that by booting it.
        return None if vm or (dt and have_write_user(dt)) else "this kernel withholds bpf_probe_write_user (see tests/vm)"
    if req.startswith("cmd:"):
        return None if shutil.which(req[4:]) else f"{req[4:]} is not installed"
    if req.startswith("file:"):
        return None if os.path.exists(req[5:]) else f"{req[5:]} does not exist"
    return f"unknown requirement '{req}'"


def reader(stream, sink):
    """Collects a process's output in a thread so the runner can watch it while it runs."""
    for chunk in iter(lambda: stream.read1(65536), b""):
        sink.append(chunk)
    stream.close()


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def stack_blocks(out):
    """Runs of consecutive indented lines: stacks in bpftrace's text format."""
    blocks, cur = [], []
    for line in out.splitlines():
        if line.startswith((" ", "\t")) and line.strip():
            # Inline frames are the symbolizer's extra detail, not frames the unwinder found:
            # EXPECT_ORDER / EXPECT_STACK look at real frames only (EXPECT_REGEX sees them all).
            if line.rstrip().endswith("[inlined]"):
                continue
            cur.append(frame_name(line))
        else:
            if cur:
                blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    return blocks


def frame_name(line):
    """`    d+98`, `\t55d0c0 d+98 (/path/x)` (perf mode), `Square::area(double) const+63`,
    `    msort_with_tmp [inlined]` -> the symbol alone; an unsymbolized address stays as it is."""
    s = line.strip()
    # Only perf mode's tab-indented lines lead with an address: a Python frame "c (x.py:3)"
    # must not lose its name because "c" reads as hex.
    m = re.match(r"(0x)?[0-9a-fA-F]+\s+(\S.*)$", s) if line.startswith("\t") else None
    if m:
        s = m.group(2)
    s = re.sub(r"\s+\([^()]*\)$", "", s)
    s = re.sub(r"\s+\[inlined\]$", "", s)
    return re.sub(r"\+(0x)?[0-9a-fA-F]+$", "", s)


def order_in(frames, want, adjacent):
    """Whether `want` is a subsequence of `frames` (a contiguous run when `adjacent`)."""
    def match(f, w):
        return re.fullmatch(w[1:], f) is not None if w.startswith("~") else f == w
    if adjacent:
        n = len(want)
        return any(all(match(f, w) for f, w in zip(frames[k:k + n], want))
                   for k in range(len(frames) - n + 1))
    it = iter(frames)
    return all(any(match(f, w) for f in it) for w in want)


def check_output(t, out, status, subst):
    """A list of failure reasons (empty when the test passed)."""
    fails = []
    lines = [l.rstrip() for l in out.splitlines()]
    want_exit = t.get("EXPECT_EXIT", "0").strip()
    if status is not None and status < 0:
        # A crash is never the expected failure, whatever EXPECT_EXIT says.
        fails.append(f"killed by {signal.Signals(-status).name}")
    elif status in CRASH_STATUSES:
        # The shell of a RUN test reports a crashed child as 128 + the signal.
        fails.append(f"exit status {status}: killed by {signal.Signals(status - 128).name}")
    elif want_exit == "nonzero":
        if status == 0:
            fails.append("exit status 0, expected a failure")
    elif status != int(want_exit):
        fails.append(f"exit status {status}, expected {want_exit}")
    for e in t.get("EXPECT", []):
        e = subst(e).rstrip()
        if e not in lines:
            fails.append(f"no line equal to: {e}")
    for e in t.get("EXPECT_NONE", []):
        e = subst(e).rstrip()
        if e in lines:
            fails.append(f"unexpected line: {e}")
    for e in t.get("EXPECT_REGEX", []):
        if not re.search(subst(e), out, re.MULTILINE):
            fails.append(f"no match for regex: {e}")
    for e in t.get("EXPECT_REGEX_NONE", []):
        m = re.search(subst(e), out, re.MULTILINE)
        if m:
            fails.append(f"unexpected match for regex {e}: {m.group(0)!r}")
    if "FIRST_ERROR" in t:
        first = first_error_line(subst(STDERR_FILE))
        if first is None:
            fails.append(f"nothing on stderr; expected a line matching {t['FIRST_ERROR']}")
        elif not re.search(t["FIRST_ERROR"], first):
            fails.append(f"first error line {first!r} does not match {t['FIRST_ERROR']}")
        elif not BAD_INPUT_SPEAKER.match(first):
            fails.append(f"first error line {first!r} does not say who speaks "
                         "('dwarftrace: ' or 'FILE:LINE:COL: ')")
    blocks = None
    for key, adjacent in (("EXPECT_ORDER", False), ("EXPECT_STACK", True)):
        for e in t.get(key, []):
            want = [w.strip() for w in e.split("/") if w.strip()]
            blocks = blocks if blocks is not None else stack_blocks(out)
            if not any(order_in(b, want, adjacent) for b in blocks):
                fails.append(f"no stack with frames {' / '.join(want)}"
                             f"{' (adjacent)' if adjacent else ''}")
    return fails


class Runner:
    def __init__(self, args):
        self.args = args
        self.dt = os.path.abspath(args.dwarftrace)
        self.build = os.path.abspath(args.build_dir)
        self.src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self.targets = os.path.join(self.build, "tests", "targets")
        self.vm_results = {}

    def subst_fn(self, tmp, pid):
        vals = {"DWARFTRACE": self.dt, "TARGETS": self.targets, "BUILD": self.build,
                "SRC": self.src, "TMP": tmp, "PID": pid}
        return lambda s: VAR_RE.sub(lambda m: vals[m.group(1)], s)

    def env_for(self, t):
        env = dict(os.environ)
        for kv in t.get("ENV", []):
            k, _, v = kv.strip().partition("=")
            env[k] = v
        return env

    def sh(self, cmd, env, timeout):
        return subprocess.run(["/bin/sh", "-c", cmd], env=env, cwd=self.build, timeout=timeout,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def tracer_argv(self, t, subst):
        if "RUN" in t:
            return ["/bin/sh", "-c", subst(t["RUN"])]
        return [self.dt] + [subst(a) for a in shlex.split(t.get("ARGS", ""))] + \
            ["-e", subst(t["PROG"])]

    def run_host(self, t, tmp):
        """Runs one test here; returns (output, exit status, [failure reasons])."""
        timeout = float(t.get("TIMEOUT", "10"))
        env = self.env_for(t)
        deadline = time.monotonic() + timeout
        procs, pid = [], ""
        out_chunks = []
        status = None
        fails = []
        subst = self.subst_fn(tmp, pid)
        try:
            for cmd in t.get("SETUP", []):
                r = self.sh(subst(cmd), env, max(1, deadline - time.monotonic()))
                if r.returncode != 0:
                    return r.stdout.decode(errors="replace"), None, \
                        [f"SETUP failed ({r.returncode}): {cmd}"]
            for cmd in t.get("BEFORE", []):
                p = subprocess.Popen(["/bin/sh", "-c", "exec " + subst(cmd)], env=env,
                                     cwd=self.build, start_new_session=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                procs.append(p)
                if not pid:
                    pid = str(p.pid)
            if pid:
                subst = self.subst_fn(tmp, pid)
                # Let the program get past the dynamic loader so its mappings are final.
                time.sleep(0.2)
            tr = subprocess.Popen(self.tracer_argv(t, subst), env=env, cwd=self.build,
                                  start_new_session=True, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            procs.append(tr)
            th = threading.Thread(target=reader, args=(tr.stdout, out_chunks), daemon=True)
            th.start()
            start = time.monotonic()
            attached_at = None
            after = list(t.get("AFTER", []))
            sig = t.get("SIGNAL", "").split()
            sent = False
            while tr.poll() is None:
                now = time.monotonic()
                if now > deadline:
                    kill_group(tr)
                    fails.append(f"timed out after {timeout:g} s (process group killed)")
                    break
                if attached_at is None and (b"Attaching" in b"".join(out_chunks)
                                            or now - start > 3):
                    attached_at = now
                if attached_at is not None and after:
                    for cmd in after:
                        procs.append(subprocess.Popen(
                            ["/bin/sh", "-c", "exec " + subst(cmd)], env=env, cwd=self.build,
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL))
                    after = []
                if sig and not sent and attached_at is not None and \
                        now - attached_at >= float(sig[1] if len(sig) > 1 else 1):
                    os.kill(tr.pid, getattr(signal, "SIG" + sig[0].upper().removeprefix("SIG")))
                    sent = True
                time.sleep(0.02)
            status = tr.wait()
            th.join(timeout=2)
        except subprocess.TimeoutExpired:
            fails.append("timed out in SETUP")
        finally:
            for p in procs:
                if p.poll() is None:
                    kill_group(p)
                    p.wait()
            for cmd in t.get("CLEANUP", []):
                try:
                    self.sh(subst(cmd), env, 10)
                except subprocess.TimeoutExpired:
                    pass
        return b"".join(out_chunks).decode(errors="replace"), status, fails

    def vm_script(self, t, tmp):
        """The test as one shell script for the guest: the guest has no Python."""
        subst = self.subst_fn(tmp, "$PID")
        s = ["PID=", f"mkdir -p {shlex.quote(tmp)}"]
        for k, v in (kv.strip().partition("=")[::2] for kv in t.get("ENV", [])):
            s.append(f"export {k}={shlex.quote(v)}")
        s += [subst(c) + " || exit 99" for c in t.get("SETUP", [])]
        for i, c in enumerate(t.get("BEFORE", [])):
            s.append(f"{subst(c)} >/dev/null 2>&1 &")
            if i == 0:
                s.append("PID=$!")
        if t.get("BEFORE"):
            s.append("sleep 0.2")
        if "RUN" in t:
            s.append(subst(t["RUN"]))
        else:
            s.append(" ".join(shlex.quote(a) for a in self.tracer_argv(t, subst)))
        s += ["st=$?", "[ -n \"$PID\" ] && kill $PID 2>/dev/null"]
        s += [subst(c) for c in t.get("CLEANUP", [])]
        s.append("exit $st")
        return "\n".join(s) + "\n"

    def run_vm_batch(self, tests):
        """Runs every test in one guest boot (a boot costs more than most tests): the guest runs
        each test's script under busybox `timeout` between markers. Returns {name: (output,
        status, [failure reasons])}."""
        parts, total = [], 0.0
        for i, t in enumerate(tests):
            secs = int(float(t.get("TIMEOUT", "10")))
            total += secs
            script = self.vm_script(t, f"/tmp/dt-test-{i}")
            parts.append(f"echo '@@DT-TEST-BEGIN {i}@@'\n"
                         f"timeout -s KILL {secs} /bin/sh -c {shlex.quote(script)} 2>&1\n"
                         f"echo \"@@DT-TEST-END {i} $?@@\"\n")
        env = dict(os.environ, VM_TIMEOUT=str(int(total) + 180))
        p = subprocess.Popen([self.args.vm, "--build-dir", self.build, "--", "/bin/sh", "-c",
                              "".join(parts)], cwd=self.build, start_new_session=True, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            out, err = p.communicate(timeout=total + 240)
        except subprocess.TimeoutExpired:
            kill_group(p)
            out, err = p.communicate()
        out, err = out.decode(errors="replace"), err.decode(errors="replace")
        results = {}
        for i, t in enumerate(tests):
            m = re.search(rf"^@@DT-TEST-BEGIN {i}@@\n(.*?)^@@DT-TEST-END {i} (\d+)@@$", out,
                          re.MULTILINE | re.DOTALL)
            if not m:
                results[t["NAME"]] = (out[-2000:] + err[-2000:], None,
                                      ["no result from the VM (the harness or the guest failed)"])
                continue
            status = int(m.group(2))
            fails = []
            if status == 137:
                fails.append(f"timed out after {t.get('TIMEOUT', '10')} s in the guest (killed)")
            results[t["NAME"]] = (m.group(1), status, fails)
        return results

    def skip_reason(self, t):
        for req in t.get("REQUIRES", []):
            for alt in req.split("|"):
                why = missing_requirement(alt, bool(self.args.vm), self.dt)
                if why:
                    return why
        return None

    def run_one(self, t):
        why = self.skip_reason(t)
        if why:
            return "SKIP", why, ""
        tmp = tempfile.mkdtemp(prefix="dt-test-")
        try:
            if self.args.vm:
                out, status, fails = self.vm_results[t["NAME"]]
            else:
                out, status, fails = self.run_host(t, tmp)
            if not fails:
                fails = check_output(t, out, status, self.subst_fn(tmp, ""))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return ("FAIL" if fails else "PASS"), "; ".join(fails), out


def collect(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p)
                            if f.endswith((".test", ".table")))
        else:
            files.append(p)
    return files


def main():
    ap = argparse.ArgumentParser(description="dwarftrace runtime tests")
    ap.add_argument("--dwarftrace", required=True, help="the dwarftrace binary")
    ap.add_argument("--build-dir", required=True, help="build dir (tests/targets lives there)")
    ap.add_argument("--filter", default="", help="regex: run the tests whose name matches")
    ap.add_argument("--vm", help="run each test in a VM started by this script (run-vm.sh)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print output of passing tests")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()

    if os.geteuid() != 0:
        print("runtime tests need root (BPF programs are loaded); skipping them all")
        return 77
    if args.vm and not shutil.which("qemu-system-x86_64"):
        print("qemu-system-x86_64 is not installed; skipping the VM tests")
        return 77
    if not os.access(args.dwarftrace, os.X_OK):
        print(f"{args.dwarftrace}: not an executable (build the dwarftrace target)")
        return 1
    # A malformed file fails (it is counted and named) without hiding the other files' results.
    tests, bad_files = [], []
    for f in collect(args.paths):
        try:
            tests += parse_table(f) if f.endswith(".table") else parse_file(f)
        except (TestError, OSError) as e:
            print(f"FAIL {f}: {e}", flush=True)
            bad_files.append(f)
    names = [t["NAME"] for t in tests]
    dups = {n for n in names if names.count(n) > 1}
    if dups:
        print(f"error: duplicate test names: {', '.join(sorted(dups))}")
        return 1
    flt = re.compile(args.filter) if args.filter else None
    runner = Runner(args)
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    failed = []
    t0 = time.monotonic()
    tests = [t for t in tests if not flt or flt.search(t["NAME"])]
    if args.vm:
        runnable = [t for t in tests if not runner.skip_reason(t)]
        for t in runnable:
            if "AFTER" in t or "SIGNAL" in t:
                # The guest has no runner to watch the tracer: say so rather than ignore them.
                runner.vm_results[t["NAME"]] = ("", None, ["AFTER and SIGNAL do not work in --vm"])
        runnable = [t for t in runnable if t["NAME"] not in runner.vm_results]
        print(f"booting one VM for {len(runnable)} tests", flush=True)
        if runnable:
            runner.vm_results.update(runner.run_vm_batch(runnable))
    retried = []
    for t in tests:
        start = time.monotonic()
        verdict, why, out = runner.run_one(t)
        # RETRY N: a test whose outcome rests on scheduling (samples landing before an exec,
        # counts from a busy machine) may run again; a pass on retry is shown as such and listed.
        first_why, tries = why, 0
        while verdict == "FAIL" and not args.vm and tries < int(t.get("RETRY", "0")):
            tries += 1
            verdict, why, out = runner.run_one(t)
        if verdict == "PASS" and tries:
            retried.append(t["NAME"])
        counts[verdict] += 1
        took = time.monotonic() - start
        if verdict == "PASS" and tries:
            print(f"PASS {t['NAME']} ({took:.1f}s, on retry {tries}; first try: {first_why})",
                  flush=True)
        elif verdict == "PASS":
            print(f"PASS {t['NAME']} ({took:.1f}s)", flush=True)
        elif verdict == "SKIP":
            print(f"SKIP {t['NAME']}: {why}", flush=True)
        else:
            failed.append(t["NAME"])
            print(f"FAIL {t['NAME']} ({took:.1f}s): {why}", flush=True)
        if verdict == "FAIL" or (args.verbose and verdict == "PASS"):
            shown = out if len(out) < 4000 else out[:2000] + "\n[...]\n" + out[-2000:]
            print("  | " + shown.rstrip().replace("\n", "\n  | "), flush=True)
    counts["FAIL"] += len(bad_files)
    failed += bad_files
    print(f"{counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped "
          f"({time.monotonic() - t0:.0f}s)")
    if retried:
        print("passed on retry: " + " ".join(retried))
    if failed:
        print("failed: " + " ".join(failed))
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
