# pyedge.py -- CPython edge cases for ustack_dwarf's Python frames (tests/runtime/python.test).
# Usage: python3.11 pyedge.py MODE [SECS]; each mode runs for SECS seconds (default 1).
#   long   long_fn, a generated function whose line table is longer than 2 KiB (several of the
#          walker's records), calls os.umask() on its line LONG_LINE of the file "pylong_gen.py"
#   cold   delg deletes an undefined global: the NameError is made in the evaluation loop's
#          .cold part (GCC's unlikely blocks) of Debian's python3.11, which calls
#          format_exc_check_arg from there
import os
import sys
import time

SECS = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
END = time.monotonic() + SECS
LONG_STATEMENTS = 600


def make_long():
    lines = ["def long_fn(n):", "    x = 0"]
    for k in range(LONG_STATEMENTS):
        lines.append(f"    x = (x + n * {k}) % 1000003")
    lines.append("    os.umask(0o022)")
    lines.append("    return x")
    ns = {"os": os}
    exec(compile("\n".join(lines) + "\n", "pylong_gen.py", "exec"), ns)
    fn = ns["long_fn"]
    size = len(fn.__code__.co_linetable)
    if size <= 2048:
        sys.exit(f"pyedge.py: long_fn's line table is {size} bytes, not over 2 KiB")
    return fn


def main_long():
    fn = make_long()
    while time.monotonic() < END:
        fn(3)


def delg():
    global never_defined
    try:
        del never_defined
    except NameError:
        pass


def main_cold():
    while time.monotonic() < END:
        delg()


if __name__ == "__main__":
    {"long": main_long, "cold": main_cold}[sys.argv[1]]()
