#!/usr/bin/env python3
"""speedscope_check.py — feeds a folded profile (dwarftrace -f folded) to speedscope, a real
flame-graph tool (npm's speedscope, installed with `npm install -g speedscope`), and checks that it
read every stack: speedscope's page and the profile are served on loopback (its profileURL import
needs http, not file://), headless Chromium renders the sandwich view, and each function's total
and self counts in that table must equal what the folded lines say.

    speedscope_check.py FOLDED_FILE WORK_DIR

Prints "speedscope rows: N", then "speedscope agrees" or each disagreement; exits 1 on any
problem. Python 3 stdlib only."""
import functools
import html
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def release_dir():
    root = subprocess.run(["npm", "root", "-g"], capture_output=True, text=True).stdout.strip()
    d = os.path.join(root, "speedscope", "dist", "release")
    if not os.path.isfile(os.path.join(d, "index.html")):
        sys.exit("speedscope_check: no speedscope under %s (npm install -g speedscope)" % root)
    return d


def expected(lines):
    """name -> [total, self] from folded lines: a name counts once per stack for its total."""
    want = {}
    for line in lines:
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        n = int(count)
        for name in set(frames):
            want.setdefault(name, [0, 0])[0] += n
        want[frames[-1]][1] += n
    return want


def main():
    folded, work = sys.argv[1], sys.argv[2]
    lines = [l.rstrip("\n") for l in open(folded) if re.match(r"^\S.* \d+$", l) and ";" in l]
    if not lines:
        sys.exit("speedscope_check: no folded stacks in %s" % folded)
    www = os.path.join(work, "www")
    shutil.copytree(release_dir(), www)
    with open(os.path.join(www, "prof.folded"), "w") as f:
        f.write("\n".join(lines) + "\n")
    handler = functools.partial(Quiet, directory=www)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d" % srv.server_address[1]
    url = "%s/index.html#profileURL=%s/prof.folded&title=dwarftrace&view=sandwich" % (base, base)
    # A headless page that has not finished its import when the DOM is dumped shows no rows
    # (seen now and then on a busy machine): try again with a longer budget before judging.
    got = {}
    for attempt, budget in enumerate((5000, 15000, 30000)):
        dom = subprocess.run(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update", "--no-first-run",
             "--disable-sync", "--user-data-dir=" + os.path.join(work, "chrome-ss%d" % attempt),
             "--window-size=1600,4000", "--virtual-time-budget=%d" % budget, "--dump-dom",
             url],
            capture_output=True, text=True, timeout=120).stdout
        # Sandwich rows read "TOTAL (P%) SELF (P%) NAME" once the markup is stripped.
        text = html.unescape(re.sub(r"<[^>]*>", "\n", dom))
        cells = [c.strip() for c in text.split("\n") if c.strip()]
        for i in range(len(cells) - 2):
            t = re.fullmatch(r"(\d+) \([^)]*\)", cells[i])
            s = re.fullmatch(r"(\d+) \([^)]*\)", cells[i + 1])
            if t and s and not re.fullmatch(r"\d+ \([^)]*\)", cells[i + 2]):
                got.setdefault(cells[i + 2], [int(t.group(1)), int(s.group(1))])
        if got:
            break
    srv.shutdown()
    print("speedscope rows: %d" % len(got))
    want = expected(lines)
    bad = 0
    for name, tw in sorted(want.items()):
        if got.get(name) != tw:
            print("disagree: %s: folded says total/self %s, speedscope %s" % (name, tw, got.get(name)))
            bad += 1
    if not bad and got:
        print("speedscope agrees")
    return 1 if bad or not got else 0


if __name__ == "__main__":
    sys.exit(main())
