#!/usr/bin/env python3
"""py_fake_version.py SRC DST HEX [--no-build-id] -- copies a CPython executable or library SRC to
DST with its Py_Version word (PY_VERSION_HEX, 3.11+) set to HEX: an interpreter of a version
dwarftrace has no structure offsets for, to check that it says so in one line and keeps the native
frames (python.test). --no-build-id also zeroes its GNU build-id, so that no separate debug file
(and no DWARF) is found for the copy. Reads the ELF64 sections with the standard library only."""
import shutil
import struct
import sys


def main():
    src, dst, hexv = sys.argv[1], sys.argv[2], int(sys.argv[3], 16)
    data = bytearray(open(src, "rb").read())
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_off = secs[shstrndx][4]

    def name(off, base):
        return data[base + off:data.index(b"\0", base + off)].decode()
    by_name = {name(s[0], names_off): s for s in secs}
    dynsym, dynstr = by_name[".dynsym"], by_name[".dynstr"]
    for k in range(dynsym[5] // 24):
        st_name, _, _, shndx, value, _ = struct.unpack_from("<IBBHQQ", data, dynsym[4] + k * 24)
        if name(st_name, dynstr[4]) == "Py_Version":
            sec = secs[shndx]
            struct.pack_into("<I", data, value - sec[3] + sec[4], hexv)
            break
    else:
        sys.exit(f"{src}: no Py_Version")
    if "--no-build-id" in sys.argv[4:]:
        note = by_name.get(".note.gnu.build-id")
        if not note:
            sys.exit(f"{src}: no build-id note")
        namesz, descsz, _ = struct.unpack_from("<III", data, note[4])
        desc = note[4] + 12 + (namesz + 3) // 4 * 4
        data[desc:desc + descsz] = bytes(descsz)
    open(dst, "wb").write(data)
    shutil.copymode(src, dst)


if __name__ == "__main__":
    main()
