#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Convert a binary PPM (P6, maxval 255) to PNG, with nothing but the
standard library: zlib for the deflate stream, binascii for the CRC-32.
Used once to make docs/img/mandelbrot.png:

    build/examples/mandelbrot /tmp/m.ppm 800
    scripts/ppm2png.py /tmp/m.ppm docs/img/mandelbrot.png
"""
import binascii
import struct
import sys
import zlib


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:  # magic, width, height, maxval; '#' comments
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    magic, width, height, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    if magic != b"P6" or maxval != 255:
        sys.exit(f"{path}: not a P6 PPM with maxval 255")
    pixels = data[pos + 1:pos + 1 + width * height * 3]
    if len(pixels) != width * height * 3:
        sys.exit(f"{path}: truncated")
    return width, height, pixels


def chunk(kind, body):
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", binascii.crc32(kind + body) & 0xFFFFFFFF))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: ppm2png.py in.ppm out.png")
    width, height, pixels = read_ppm(sys.argv[1])
    stride = width * 3
    # Each row: filter type 1 (Sub: each byte minus the byte 3 to its left),
    # which turns the smooth colour ramps into runs that deflate well.
    raw = bytearray()
    for y in range(height):
        row = pixels[y * stride:(y + 1) * stride]
        raw.append(1)
        raw += bytes(row[i] if i < 3 else (row[i] - row[i - 3]) & 0xFF for i in range(stride))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
           + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b""))
    with open(sys.argv[2], "wb") as f:
        f.write(png)


if __name__ == "__main__":
    main()
