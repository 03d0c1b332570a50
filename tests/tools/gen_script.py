#!/usr/bin/env python3
"""gen_script.py -- writes large dwarftrace scripts for the scale tests and for timing the compiler.

  gen_script.py stmts N [--probes K]   N statements of mixed kinds (maps with keys, aggregations,
                                       variables, if/else, strings) in K BEGIN probes (default 1),
                                       then exit(); over a fixed set of 12 maps
  gen_script.py maps N [--probes K]    K BEGIN probes that write N distinct maps, then exit()
  gen_script.py tuple W                one BEGIN probe with a W-element tuple key, then exit()
  gen_script.py bytes B [--probes K]   like `stmts`, as many statements as fit in B bytes

  --attach A   the probes' attach point (and predicate) instead of BEGIN; they do not exit then
  --head S     a statement each probe starts with (e.g. '@st[ustack_dwarf] = count();')
  --foot S     a statement each probe ends with
  --tail T     text after the probes (e.g. 'interval:s:1 { exit(); }')

The output is deterministic (no randomness), so a failure reproduces from the command line. A
`stmts` script prints `done N` from its last probe; a `maps` script prints `maps N`, and the map
printer then shows @m0: 0 ... @m<N-1>: N-1; a `tuple` script stores one element with a W-element
key.
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


def probes_of(stmts, opts, setup=("$x = 0;", "$s = \"\";"), done="done"):
    """Spreads the statements over opts.probes blocks; the last one prints and (BEGIN) exits."""
    out = []
    nprobes = opts.probes
    per = (len(stmts) + nprobes - 1) // nprobes if stmts else 0
    for p in range(nprobes):
        body = stmts[p * per:(p + 1) * per]
        lines = [opts.attach + " {"]
        lines += ["\t" + s for s in ([opts.head] if opts.head else []) + list(setup) + body]
        if opts.foot:
            lines.append("\t" + opts.foot)
        if p == nprobes - 1:
            lines.append("\tprintf(\"%s %d\\n\");" % (done, len(stmts)))
            if opts.attach == "BEGIN":
                lines.append("\texit();")
        lines.append("}")
        out.append("\n".join(lines))
    return "\n".join(out) + "\n" + (opts.tail + "\n" if opts.tail else "")


def gen_stmts(n, opts):
    return probes_of([statement(i) for i in range(n)], opts)


def gen_bytes(size, opts):
    stmts, total = [], 0
    while True:
        s = statement(len(stmts))
        if total + len(s) + 2 > size - 64 * opts.probes:
            break
        stmts.append(s)
        total += len(s) + 2
    return probes_of(stmts, opts)


def gen_maps(n, opts):
    return probes_of(["@m%d = %d;" % (i, i) for i in range(n)], opts, setup=(), done="maps")


def gen_tuple(w):
    key = ", ".join(str(i) for i in range(w))
    return "BEGIN {\n\t@wide[%s] = 1;\n\texit();\n}\n" % key


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["stmts", "maps", "tuple", "bytes"])
    ap.add_argument("n", type=int)
    ap.add_argument("--probes", type=int, default=1)
    ap.add_argument("--attach", default="BEGIN")
    ap.add_argument("--head", default="")
    ap.add_argument("--foot", default="")
    ap.add_argument("--tail", default="")
    a = ap.parse_args()
    if a.n < 0 or a.probes < 1:
        ap.error("N must be >= 0 and --probes >= 1")
    if a.what == "stmts":
        text = gen_stmts(a.n, a)
    elif a.what == "bytes":
        text = gen_bytes(a.n, a)
    elif a.what == "maps":
        text = gen_maps(a.n, a)
    else:
        text = gen_tuple(a.n)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
