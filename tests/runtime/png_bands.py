#!/usr/bin/env python3
"""png_bands.py — says whether text was drawn in horizontal bands of a screenshot, for the flame
graph test: a band (rows Y0..Y1) "has ink" when enough of its pixels are dark, as the glyphs of a
title, subtitle or details line are on the flame graph's light background. Decodes 8-bit RGB/RGBA
PNGs (what headless Chromium writes) with the standard library only.

    png_bands.py FILE NAME:Y0:Y1 ...      prints "NAME ink" or "NAME blank" per band"""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("png_bands: %s is not a PNG" % path)
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6) or body[12] != 0:
                sys.exit("png_bands: only 8-bit RGB/RGBA, not interlaced")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, bpp, rows


def main():
    w, bpp, rows = decode(sys.argv[1])
    for spec in sys.argv[2:]:
        name, y0, y1 = spec.split(":")
        dark = sum(1 for y in range(int(y0), min(int(y1), len(rows))) for x in range(w)
                   if sum(rows[y][x * bpp:x * bpp + 3]) < 400)
        print(name, "ink" if dark >= 20 else "blank")


main()
