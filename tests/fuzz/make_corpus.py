#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seed corpus for fuzz_parse: one file per frame of the committed pcaps.

Usage: /usr/bin/python3 tests/fuzz/make_corpus.py
Reads tests/data/*.pcap, writes tests/fuzz/corpus/parse/<sha1>.
"""
import glob
import hashlib
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus", "parse")


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        yield data[off:off + incl]
        off += incl


def main():
    os.makedirs(OUT, exist_ok=True)
    n = 0
    for pcap in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "*.pcap"))):
        for frame in frames(pcap):
            name = hashlib.sha1(frame).hexdigest()
            with open(os.path.join(OUT, name), "wb") as f:
                f.write(frame)
            n += 1
    print("%d frames written to %s" % (n, OUT))


if __name__ == "__main__":
    main()
