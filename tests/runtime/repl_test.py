#!/usr/bin/env python3
"""repl_test.py — drives the dwarftrace REPL in a real terminal (tmux) and asserts what the screen
shows: a probe typed over several lines attaches and runs, statements act on live maps, errors
leave the session as it was, Tab completes, output from running probes does not garble the line
being typed, Ctrl-C cancels an entry, .probes/.maps/.detach/.save/.load work, a map used with
another type is refused, Ctrl-D ends the session printing the maps, SIGUSR1 prints them while it
goes on and SIGHUP, SIGTERM and SIGQUIT end it as Ctrl-D does. A saved session runs as a script. The rough edges:
a multi-line entry is one history item (Up, and Ctrl-R in the next session), .probes shows whole
bodies, probe ids are consecutive, .detach without an id says how to use it, completion adds no
space inside an expression, .save writes an executable file. Needs root (BPF) and tmux.

usage: repl_test.py PATH/TO/dwarftrace
Prints PASS/FAIL per case and "N passed, N failed"; exits non-zero on failure."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

DT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "build/runtime/dwarftrace"
SESSION = "dtrepl%d" % os.getpid()
results = []


def tmux(*args, check=True):
    return subprocess.run(["tmux"] + list(args), check=check, capture_output=True, text=True)


def start_session(cmd):
    """A fresh tmux session running cmd; the pane stays after it exits so that its exit output
    can still be read."""
    tmux("kill-session", "-t", SESSION, check=False)
    tmux("new-session", "-d", "-s", SESSION, "-x", "150", "-y", "50")
    tmux("set-option", "-t", SESSION, "remain-on-exit", "on")
    tmux("respawn-pane", "-k", "-t", SESSION, cmd)


def screen():
    return tmux("capture-pane", "-t", SESSION, "-p", "-S", "-200").stdout


def typed(text):
    # tmux reads an argument ending in ';' as a command separator: send ';' as a hex key.
    parts = text.split(";")
    for i, part in enumerate(parts):
        if part:
            tmux("send-keys", "-t", SESSION, "-l", part)
        if i < len(parts) - 1:
            tmux("send-keys", "-t", SESSION, "-H", "3b")


def key(*keys):
    tmux("send-keys", "-t", SESSION, *keys)


def line(text):
    typed(text)
    key("Enter")


def wait_for(pred, timeout=8.0):
    end = time.time() + timeout
    while time.time() < end:
        s = screen()
        if pred(s):
            return s
        time.sleep(0.1)
    return screen()


def case(name, ok, detail=""):
    results.append(ok)
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, "" if ok else "\n" + detail))
    sys.stdout.flush()


def last_line(s):
    lines = [l.rstrip() for l in s.rstrip().split("\n")]
    return lines[-1] if lines else ""


def main():
    if os.geteuid() != 0:
        print("SKIP repl: needs root")
        return 77
    if not shutil.which("tmux"):
        print("FAIL repl: tmux is not installed (bootstrap.sh deps installs it)")
        print("0 passed, 1 failed")
        return 1
    home = tempfile.mkdtemp(prefix="dtrepl.")
    saved = os.path.join(home, "session.dt")
    env_cmd = "env HOME=%s TERM=xterm %s" % (home, DT)
    start_session(env_cmd)
    try:
        s = wait_for(lambda s: "dt>" in s)
        case("prompt", "dt>" in s, s)

        # A probe typed over three lines: continuation prompt, then attach.
        line("interval:ms:200 {")
        s = wait_for(lambda s: last_line(s) == "..>")
        case("continuation prompt while a block is open", last_line(s) == "..>", s)
        line('  @n = count(); @t[comm] = count();')
        line('  printf("tick %d\\n", 7); }')
        s = wait_for(lambda s: "probe 1 attached" in s and "tick 7" in s)
        case("multi-line probe attaches and runs", "probe 1 attached" in s and "tick 7" in s, s)

        # One Up recalls the whole three-line entry, not its last physical line.
        key("Up")
        s = wait_for(lambda s: last_line(s).endswith('printf("tick %d\\n", 7); }') and
                     "dt> interval:ms:200 {" in s.split("probe 1 attached")[-1])
        case("Up recalls a multi-line entry whole",
             last_line(s).endswith('printf("tick %d\\n", 7); }') and
             "dt> interval:ms:200 {" in s.split("probe 1 attached")[-1], s)
        key("C-u")
        time.sleep(0.3)

        # Output from the running probe must not garble a half-typed line.
        typed("print(@")
        time.sleep(1.0)
        s = screen()
        case("probe output keeps the typed line intact", last_line(s) == "dt> print(@", s)
        key("Tab")
        key("Tab")
        s = wait_for(lambda s: any(l.split() == ["@n", "@t"] for l in s.split("\n")))
        case("Tab lists the maps defined so far",
             any(l.split() == ["@n", "@t"] for l in s.split("\n")), s)
        typed("n)")
        key("Enter")
        s = wait_for(lambda s: "@n: " in s)
        case("print(@n) on the live map", "@n: " in s, s)

        line(".probes")
        s = wait_for(lambda s: "interval:ms:200 {" in s.split(".probes")[-1])
        after = s.split(".probes")[-1]
        case(".probes lists the live probe with its hits",
             "interval:ms:200 {" in after and " hits" in after, s)
        case(".probes shows the whole body",
             re.search(r"^ {22}  @n = count\(\); @t\[comm\] = count\(\);$", after, re.M) is not None and
             re.search(r'^ {22}  printf\("tick %d\\n", 7\); }$', after, re.M) is not None, s)

        line(".maps")
        s = wait_for(lambda s: "@t" in s.split(".maps")[-1])
        after = s.split(".maps")[-1]
        case(".maps shows maps with types", "@n" in after and "@t" in after and "count" in after, s)

        # Errors: diagnostics, and the session goes on unchanged.
        line("print(@nope)")
        s = wait_for(lambda s: "ERROR:" in s.split("dt> print(@nope)")[-1])
        after = s.split("dt> print(@nope)")[-1]
        case("unknown map is a diagnostic", "repl:1:7-12: ERROR:" in after, s)
        line('interval:s:1 { @n = "a string"; }')
        s = wait_for(lambda s: "error" in s.split('dt> interval:s:1 { @n = "a string"')[-1])
        case("a map used with another type is refused",
             "ERROR: the value type of @n" in s.split('dt> interval:s:1 { @n = "a string"')[-1], s)
        line(".probes")
        s = wait_for(lambda s: s.count(".probes") >= 2)
        after = s.split(".probes")[-1]
        case("session unchanged after errors", "interval:ms:200" in after and "   2 " not in after, s)

        # Completion of probe types, tracepoints, meta-commands.
        typed("interv")
        key("Tab")
        s = wait_for(lambda s: last_line(s) == "dt> interval:")
        case("Tab completes probe types", last_line(s) == "dt> interval:", s)
        key("C-u")
        typed("tracepoint:sche")
        key("Tab")
        s = wait_for(lambda s: last_line(s).startswith("dt> tracepoint:sched:"))
        case("Tab completes tracepoint subsystems", last_line(s).startswith("dt> tracepoint:sched:"), s)
        key("C-u")
        typed(".pro")
        key("Tab")
        s = wait_for(lambda s: last_line(s).startswith("dt> .probes"))
        case("Tab completes meta-commands", last_line(s).startswith("dt> .probes"), s)
        key("C-u")
        typed("uprobe:/bin/bash:readl")
        key("Tab")
        s = wait_for(lambda s: "readline" in last_line(s))
        case("Tab completes symbols of a binary", "uprobe:/bin/bash:readline" in last_line(s), s)
        key("C-u")
        typed("BEGIN { @x[com")
        key("Tab")
        s = wait_for(lambda s: "comm" in last_line(s))
        case("completion adds no space inside an expression",
             screen().rstrip("\n").split("\n")[-1] == "dt> BEGIN { @x[comm", repr(last_line(s)))
        key("C-u")

        line(".detach")
        s = wait_for(lambda s: ".detach: give" in s)
        case(".detach without an id says how", ".detach: give a probe id, e.g. .detach 1" in s, s)

        # Ctrl-C cancels an open entry, not the session.
        line("interval:s:1 {")
        wait_for(lambda s: last_line(s) == "..>")
        key("C-c")
        s = wait_for(lambda s: last_line(s) == "dt>")
        case("Ctrl-C cancels the entry", last_line(s) == "dt>" and "^C" in s, s)

        # .save, .detach, .load
        line(".save " + saved)
        s = wait_for(lambda s: "saved 1 probe block" in s)
        text = open(saved).read() if os.path.exists(saved) else ""
        case(".save writes the live probes", "interval:ms:200 {" in text and "saved 1" in s, s + text)
        case(".save writes an executable script", os.access(saved, os.X_OK), oct(os.stat(saved).st_mode))
        line(".detach 1")
        s = wait_for(lambda s: "probe 1 detached" in s)
        case(".detach", "probe 1 detached" in s, s)
        line(".load " + saved)
        s = wait_for(lambda s: re.search(r"probe \d+ attached", s.split("dt> .load")[-1]))
        case(".load attaches a saved session",
             re.search(r"probe \d+ attached", s.split("dt> .load")[-1]) is not None, s)
        # Statements and errors ran in between: the next probe is still number 2.
        case("probe ids are consecutive", "probe 2 attached" in s.split("dt> .load")[-1], s)
        line("clear(@t)")
        time.sleep(0.5)

        # Ctrl-D: END, maps printed, the process ends.
        key("C-d")
        s = wait_for(lambda s: "@n: " in s.split("clear(@t)")[-1], timeout=10)
        case("Ctrl-D prints the maps at exit", "@n: " in s.split("clear(@t)")[-1], s)
        hist = os.path.join(home, ".dwarftrace_history")
        htext = open(hist).read() if os.path.exists(hist) else ""
        case("history is kept", "interval:ms:200 {" in htext, htext)
        case("a multi-line entry is one line of the history file",
             any(l.startswith("interval:ms:200 {\x1e") for l in htext.split("\n")), repr(htext))
    finally:
        tmux("kill-session", "-t", SESSION, check=False)

    # Signals: SIGUSR1 prints every map and the REPL goes on; SIGHUP (as SIGTERM and SIGQUIT)
    # ends it as Ctrl-D does, END and maps included, where it used to die with nothing printed.
    start_session(env_cmd)
    try:
        wait_for(lambda s: "dt>" in s)
        # The last session's multi-line entry comes back whole through Ctrl-R.
        key("C-r")
        typed("tick")
        s = wait_for(lambda s: "@n = count(); @t[comm] = count();" in s)
        case("Ctrl-R in a new session recalls a multi-line entry whole",
             "interval:ms:200 {" in s and "@n = count(); @t[comm] = count();" in s, s)
        key("C-g")
        key("C-u")
        time.sleep(0.3)
        line('interval:ms:100 { @u = count(); } END { printf("end ran\\n"); }')
        s = wait_for(lambda s: "probe 1 attached" in s)
        pid = int(tmux("display-message", "-p", "-t", SESSION, "#{pane_pid}").stdout.strip())
        time.sleep(0.5)
        os.kill(pid, 10)  # SIGUSR1
        s = wait_for(lambda s: "@u: " in s)
        line('printf("alive %d\\n", 6 * 7)')
        s = wait_for(lambda s: "alive 42" in s)
        case("SIGUSR1 prints the maps and the REPL goes on",
             "@u: " in s.split("alive 42")[0] and "alive 42" in s, s)
        os.kill(pid, 1)  # SIGHUP
        s = wait_for(lambda s: "end ran" in s and "@u: " in s.split("alive 42")[-1])
        dead = tmux("display-message", "-p", "-t", SESSION, "#{pane_dead}").stdout.strip()
        case("SIGHUP ends the REPL with END and the maps",
             "end ran" in s and "@u: " in s.split("alive 42")[-1] and dead == "1", s)
    finally:
        tmux("kill-session", "-t", SESSION, check=False)

    # SIGTERM and SIGQUIT end the REPL as SIGHUP does: END runs and the maps print.
    for signame, signo in (("SIGTERM", 15), ("SIGQUIT", 3)):
        start_session(env_cmd)
        try:
            wait_for(lambda s: "dt>" in s)
            line('interval:ms:100 { @v = count(); } END { printf("end ran\\n"); }')
            wait_for(lambda s: "probe 1 attached" in s)
            pid = int(tmux("display-message", "-p", "-t", SESSION, "#{pane_pid}").stdout.strip())
            time.sleep(0.5)
            os.kill(pid, signo)
            s = wait_for(lambda s: "end ran" in s and "@v: " in s)
            time.sleep(0.3)
            dead = tmux("display-message", "-p", "-t", SESSION, "#{pane_dead}").stdout.strip()
            case("%s ends the REPL with END and the maps" % signame,
                 "end ran" in s and "@v: " in s and dead == "1", s)
        finally:
            tmux("kill-session", "-t", SESSION, check=False)

    # The saved session runs as a script.
    p = subprocess.Popen([DT, saved], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    p.send_signal(2)
    try:
        out, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    case("a saved session runs with `dwarftrace FILE`", "tick 7" in out and "@n: " in out, out + err)
    shutil.rmtree(home, ignore_errors=True)

    passed = sum(1 for r in results if r)
    failed = len(results) - passed
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
