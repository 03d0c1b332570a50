#!/usr/bin/env python3
"""py_cold_addr.py PYTHON FUNC -- the address (0x…, an ELF vaddr of PYTHON) of the local function
FUNC, from the full symbol table of PYTHON's separate debug file (/usr/lib/debug/.build-id/, as
Debian's python3.11-dbg installs it): for a uprobe on a function that only the debug file names
(python.test's .cold case). Exits non-zero, saying why, when there is no debug file or no FUNC."""
import subprocess
import sys


def main():
    exe, func = sys.argv[1], sys.argv[2]
    notes = subprocess.run(["readelf", "-n", exe], capture_output=True, text=True).stdout
    bid = next((l.split()[-1] for l in notes.splitlines() if "Build ID:" in l), None)
    if not bid:
        sys.exit(f"{exe}: no build-id")
    dbg = f"/usr/lib/debug/.build-id/{bid[:2]}/{bid[2:]}.debug"
    syms = subprocess.run(["nm", dbg], capture_output=True, text=True)
    if syms.returncode:
        sys.exit(f"{exe}: no debug file {dbg}: {syms.stderr.strip()}")
    for line in syms.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == func:
            print("0x" + parts[0].lstrip("0"))
            return
    sys.exit(f"{dbg}: no symbol {func}")


if __name__ == "__main__":
    main()
