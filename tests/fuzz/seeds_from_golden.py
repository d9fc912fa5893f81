#!/usr/bin/env python3
"""Seed inputs for the fuzz targets from the golden traces.

tests/golden/*.server are the bytes a real PostgreSQL 15 sent in the
recorded sessions. This writes, into OUT/<target>/, inputs in each target's
layout built from them, so a long fuzzing run starts from real sessions:

  frame          every .server stream whole
  msg            every backend message alone (type byte + body)
  session        the stream after its startup (fuzz_session does its own),
                 at a few split points (the first byte)
  session_struct the same messages in the structure-aware target's layout
  scram          server-first and server-final of the SCRAM trace
  types_scalar   every DataRow value of a column whose type the target
                 knows, in the column's format

Usage: seeds_from_golden.py GOLDEN_DIR OUT_DIR
"""
import hashlib
import os
import struct
import sys

# fuzz_types_scalar.c's oid table, in its order (input[0] indexes it).
SCALAR_OIDS = [16, 17, 18, 19, 20, 21, 23, 25, 26, 114, 650, 700, 701, 774, 790, 829,
               869, 1042, 1043, 1082, 1083, 1114, 1184, 1186, 1266, 1700, 2950, 3802,
               4072, 142, 600]


def messages(data):
    """(type, body) of every complete backend message in data."""
    out, off = [], 0
    while off + 5 <= len(data):
        t = data[off:off + 1]
        n = struct.unpack(">I", data[off + 1:off + 5])[0]
        if n < 4 or off + 1 + n > len(data):
            break
        out.append((t, data[off + 5:off + 1 + n]))
        off += 1 + n
    return out


def frame(t, body):
    return t + struct.pack(">I", len(body) + 4) + body


def after_startup(msgs):
    for i, (t, _) in enumerate(msgs):
        if t == b"Z":
            return msgs[i + 1:]
    return []


def datarow_values(msgs):
    """(oid, format, value) of every non-NULL DataRow field."""
    cols, out = [], []
    for t, b in msgs:
        if t == b"T":
            n = struct.unpack(">H", b[:2])[0]
            off, cols = 2, []
            for _ in range(n):
                off = b.index(b"\0", off) + 1
                _tab, _att, oid, _sz, _mod, fmt = struct.unpack(">IhIhih", b[off:off + 18])
                cols.append((oid, fmt))
                off += 18
        elif t == b"D" and cols:
            n = struct.unpack(">H", b[:2])[0]
            off = 2
            for i in range(min(n, len(cols))):
                ln = struct.unpack(">i", b[off:off + 4])[0]
                off += 4
                if ln >= 0:
                    out.append((cols[i][0], cols[i][1], b[off:off + ln]))
                    off += ln
    return out


def write(out_dir, target, data):
    d = os.path.join(out_dir, target)
    os.makedirs(d, exist_ok=True)
    name = "golden-" + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    golden, out = sys.argv[1], sys.argv[2]
    for name in sorted(os.listdir(golden)):
        if not name.endswith(".server"):
            continue
        with open(os.path.join(golden, name), "rb") as f:
            data = f.read()
        msgs = messages(data)
        write(out, "frame", data)
        for t, b in msgs:
            write(out, "msg", t + b)
        rest = b"".join(frame(t, b) for t, b in after_startup(msgs))
        if rest:
            for split in (0, 7, 64, 200):
                write(out, "session", bytes([split]) + rest)
            write(out, "session_struct", b"".join(
                t + struct.pack(">H", len(b)) + b for t, b in after_startup(msgs)))
        for oid, fmt, v in datarow_values(msgs):
            if oid in SCALAR_OIDS:
                write(out, "types_scalar", bytes([SCALAR_OIDS.index(oid), fmt & 1]) + v)
        sasl = [b for t, b in msgs if t == b"R" and b[:4] in (b"\0\0\0\x0b", b"\0\0\0\x0c")]
        if len(sasl) == 2:
            write(out, "scram", b"\0" + sasl[0][4:] + b"\0" + sasl[1][4:])


if __name__ == "__main__":
    main()
