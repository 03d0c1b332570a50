#!/usr/bin/env python3
"""gen_script.py -- writes large dwarftrace scripts for the scale tests and for timing the compiler.

  gen_script.py stmts N [--probes K]   N statements of mixed kinds (maps with keys, aggregations,
                                       variables, if/else, strings) in K BEGIN probes (default 1),
                                       then exit(); over a fixed set of 12 maps
  gen_script.py maps N                 one BEGIN probe that writes N distinct maps, then exit()
  gen_script.py tuple W                one BEGIN probe with a W-element tuple key, then exit()
  gen_script.py bytes B [--probes K]   like `stmts`, as many statements as fit in B bytes

The output is deterministic (no randomness), so a failure reproduces from the command line. A
`stmts` script prints `done N` from its last probe, after which it exits; a `maps` script prints
`maps N` and the values of its first and last maps at exit (@m0: 0, @m<N-1>: N-1) come from the
map printer; a `tuple` script stores one element with a W-wide key.
"""

import argparse
import sys


def statement(i):
    """The i-th statement: a cycle of kinds that exercises every part of the compiler."""
    k = i % 10
    if k == 0:
        return "@cnt[%d] = count();" % (i % 50)
    if k == 1:
        return "$x = $x + %d;" % i
    if k == 2:
        return "if ($x > %d) { @big = %d; } else { @small[%d, \"s%d\"] = $x; }" % (i, i, i % 7, i)
    if k == 3:
        return "@h = hist($x + %d);" % i
    if k == 4:
        return "@sum[comm] = sum(%d);" % i
    if k == 5:
        return "@mx[pid, %d] = max($x - %d);" % (i % 10, i)
    if k == 6:
        return "$s = \"str%d\";" % i
    if k == 7:
        return "@str[$s] = %d;" % i
    if k == 8:
        return "@l = lhist($x % 100, 0, 100, 10);"
    return "@t[tid, %d] = $x * %d + (pid > %d ? 1 : 2);" % (i % 3, i, i)


def probes_of(stmts, nprobes):
    """Spreads the statements over nprobes BEGIN blocks; the last one prints and exits."""
    out = []
    per = (len(stmts) + nprobes - 1) // nprobes if stmts else 0
    for p in range(nprobes):
        body = stmts[p * per:(p + 1) * per]
        lines = ["BEGIN {", "\t$x = 0;", "\t$s = \"\";"]
        lines += ["\t" + s for s in body]
        if p == nprobes - 1:
            lines.append("\tprintf(\"done %d\\n\");" % len(stmts))
            lines.append("\texit();")
        lines.append("}")
        out.append("\n".join(lines))
    return "\n".join(out) + "\n"


def gen_stmts(n, nprobes):
    return probes_of([statement(i) for i in range(n)], nprobes)


def gen_bytes(size, nprobes):
    stmts, total = [], 0
    while True:
        s = statement(len(stmts))
        if total + len(s) + 2 > size - 64 * nprobes:
            break
        stmts.append(s)
        total += len(s) + 2
    return probes_of(stmts, nprobes)


def gen_maps(n):
    lines = ["BEGIN {"]
    lines += ["\t@m%d = %d;" % (i, i) for i in range(n)]
    lines.append("\tprintf(\"maps %d\\n\");" % n)
    lines.append("\texit();")
    lines.append("}")
    return "\n".join(lines) + "\n"


def gen_tuple(w):
    key = ", ".join(str(i) for i in range(w))
    return "BEGIN {\n\t@wide[%s] = 1;\n\texit();\n}\n" % key


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["stmts", "maps", "tuple", "bytes"])
    ap.add_argument("n", type=int)
    ap.add_argument("--probes", type=int, default=1)
    a = ap.parse_args()
    if a.n < 0 or a.probes < 1:
        ap.error("N must be >= 0 and --probes >= 1")
    if a.what == "stmts":
        text = gen_stmts(a.n, a.probes)
    elif a.what == "bytes":
        text = gen_bytes(a.n, a.probes)
    elif a.what == "maps":
        text = gen_maps(a.n)
    else:
        text = gen_tuple(a.n)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
