#!/usr/bin/env python3
"""selftest.py -- checks run.py's own logic (no root, no BPF): the directive parser, stack frame
extraction and EXPECT_ORDER / EXPECT_STACK matching, and the output checks, on canned text. A
runner that accepted everything would make every runtime test pass; this is what keeps it honest.
Exit status 0 when every check holds."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL {what}")


STACK_OUT = """Attaching 2 probes...
@[
    d+98
    c+9
    b+9
    a+9
    main+357
    __libc_start_call_main+122
]: 8
@[
    0x7f00aa
]: 1
@[
\t55d0c0 Square::area(double) const+63 (/x/cxx)
\t55d0c1 main+12 (/x/cxx)
    msort_with_tmp [inlined]
]: 2
@n: 3
"""

blocks = run.stack_blocks(STACK_OUT)
check(blocks[0] == ["d", "c", "b", "a", "main", "__libc_start_call_main"], "stack_blocks: first")
check(blocks[1] == ["0x7f00aa"], "stack_blocks: bare address kept")
check(blocks[2] == ["Square::area(double) const", "main"],
      "stack_blocks: perf mode, C++ name, inline frame skipped")
check(run.frame_name("    msort_with_tmp [inlined]") == "msort_with_tmp", "frame_name: inline marker")
check(run.frame_name("    c (pyprog.py:27)") == "c", "frame_name: a Python frame whose name reads as hex")
check(run.order_in(blocks[0], ["d", "b", "main"], False), "order: subsequence")
check(not run.order_in(blocks[0], ["d", "b", "main"], True), "stack: gap rejected")
check(run.order_in(blocks[0], ["c", "b", "a"], True), "stack: adjacent run")
check(not run.order_in(blocks[0], ["main", "d"], False), "order: wrong order rejected")
check(run.order_in(blocks[2], [r"~Square::area(\(double\) const)?", "main"], True), "regex frame")

t = {"NAME": "x", "EXPECT": ["@n: 3"], "EXPECT_NONE": ["@n: 4"], "EXPECT_REGEX": [r"^\s+d\+\d+$"],
     "EXPECT_ORDER": ["d / a / main"], "EXPECT_STACK": ["a / main"]}
ident = run.Runner.__new__(run.Runner)
ident.dt, ident.targets, ident.build, ident.src = "/dt", "/t", "/b", "/s"
subst = ident.subst_fn("/tmp/x", "42")
check(run.check_output(t, STACK_OUT, 0, subst) == [], "check_output: all hold")
check(len(run.check_output(t, STACK_OUT, 1, subst)) == 1, "check_output: exit status")
t2 = dict(t, EXPECT=["@n: 4"], EXPECT_STACK=["d / main"])
check(len(run.check_output(t2, STACK_OUT, 0, subst)) == 2, "check_output: two failures")
check(run.check_output({"EXPECT_EXIT": "nonzero"}, "", 0, subst) != [], "nonzero exit expected")
check(run.check_output({"EXPECT_EXIT": "nonzero"}, "", 139, subst) != [], "crash is no failure")
check(run.check_output({"EXPECT_EXIT": "nonzero"}, "", -11, subst) != [], "signal is no failure")
check(subst("$DWARFTRACE -p $PID $x $1 $TARGETS/a") == "/dt -p 42 $x $1 /t/a", "substitution")

with tempfile.NamedTemporaryFile("w", suffix=".test", delete=False) as f:
    f.write("NAME a\nPROG BEGIN {\n  exit();\n  }\nEXPECT x\nEXPECT y\nNAME b\nRUN true\n")
tests = run.parse_file(f.name)
check(len(tests) == 2 and tests[0]["PROG"] == "BEGIN {\n  exit();\n  }", "multi-line PROG")
check(tests[0]["EXPECT"] == ["x", "y"], "repeated EXPECT")
for bad in ("PROG x\n", "NAME a\nBOGUS x\n", "NAME a\nPROG x\nRUN y\n", "NAME a\n"):
    with open(f.name, "w") as g:
        g.write(bad)
    try:
        run.parse_file(f.name)
        check(False, f"malformed file accepted: {bad!r}")
    except run.TestError:
        pass
os.unlink(f.name)

# *.table cases: the first stderr line, and what no bad input may give.
with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "t.table"), "w") as g:
        g.write("# comment\n\nnope !kprobes | 1 | ^-e:1:1-2: error: x | $DWARFTRACE -e 'a | b'\n")
    tests = run.parse_table(os.path.join(tmp, "t.table"))
    check(len(tests) == 1 and tests[0]["NAME"] == "bad_nope" and
          tests[0]["REQUIRES"] == ["!kprobes"] and "'a | b'" in tests[0]["RUN"], "table row")
    tsub = ident.subst_fn(tmp, "")
    with open(os.path.join(tmp, ".stderr"), "w") as g:
        g.write("\n-e:1:1-2: error: x y\nlater\n")
    check(run.check_output(tests[0], "", 1, tsub) == [], "table: first error line matches")
    check(run.check_output(tests[0], "", 2, tsub) != [], "table: exit status")
    with open(os.path.join(tmp, ".stderr"), "w") as g:
        g.write("warning: w\n-e:1:1-2: error: x\n")
    check(run.check_output(tests[0], "", 1, tsub) != [], "table: only the first line counts")
    # Who speaks: the regex alone matching is not enough.
    with open(os.path.join(tmp, "t.table"), "w") as g:
        g.write("sp | 1 | cannot read | $DWARFTRACE x\n")
    speaker = run.parse_table(os.path.join(tmp, "t.table"))[0]
    # bpftrace's own `ERROR: ` speaks for the lines that are bpftrace's words (run.py).
    for line, ok in (("dwarftrace: cannot read x\n", True), ("x.dt:3:4-9: cannot read\n", True),
                     ("x.dt:3-5: cannot read\n", True), ("x.dt:3:4: cannot read\n", False),
                     ("cannot read x\n", False), ("ERROR: cannot read x\n", True),
                     ("error: cannot read x\n", False)):
        with open(os.path.join(tmp, ".stderr"), "w") as g:
            g.write(line)
        check((run.check_output(speaker, "", 1, tsub) == []) == ok,
              f"table: speaker of {line.strip()!r}")
    with open(os.path.join(tmp, ".stderr"), "w") as g:
        g.write("-e:1:1-2: error: x\n")
    for never in ("unwind: unwind: x", "Unknown error 524", "internal error: y",
                  "processed 12 insns (limit 1000000)"):
        check(run.check_output(tests[0], never, 1, tsub) != [], f"table: never {never!r}")
    check(run.check_output(tests[0], "uprobe:/x:main: /x: truncated", 1, tsub) == [],
          "table: different prefixes are no doubling")
    for bad in ("a | 1 | x\n", "a | z | x | cmd\n", "a | 1 | ( | cmd\n"):
        with open(os.path.join(tmp, "t.table"), "w") as g:
            g.write(bad)
        try:
            run.parse_table(os.path.join(tmp, "t.table"))
            check(False, f"malformed table accepted: {bad!r}")
        except run.TestError:
            pass

check(run.missing_requirement("bogus", False) is not None, "unknown requirement is a skip reason")
check(run.missing_requirement("!root", False) != run.missing_requirement("root", False),
      "negated requirement")

print("runner self-test: " + ("ok" if not failures else f"{failures} failed"))
sys.exit(1 if failures else 0)
