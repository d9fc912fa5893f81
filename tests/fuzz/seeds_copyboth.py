#!/usr/bin/env python3
"""Seed inputs for fuzz_copyboth: one file per scenario, named by its SHA-1,
in tests/fuzz/corpus/copyboth/ (or the directory given).

An input is steps, each an op byte, a 2-byte big-endian length and that many
bytes fed to the session as server bytes (see fuzz_copyboth.c). The
scenarios are what a walsender sends during START_REPLICATION
(src/backend/replication/walsender.c: XLogData 'w', keepalive 'k', CopyDone,
then CommandComplete and ReadyForQuery) with the client's confirm, status
and stop steps between them, and a few malformed stream messages.
"""
import hashlib
import os
import struct
import sys


def u64(v): return struct.pack(">Q", v & 0xFFFFFFFFFFFFFFFF)


def msg(t, body=b""): return t + struct.pack(">I", len(body) + 4) + body


def copy_data(body): return msg(b"d", body)
def xlog(start, end, t, payload): return copy_data(b"w" + u64(start) + u64(end) + u64(t) + payload)
def keepalive(end, t, reply): return copy_data(b"k" + u64(end) + u64(t) + bytes([reply]))


END = msg(b"c") + msg(b"C", b"COPY 0\0") + msg(b"C", b"START_REPLICATION\0") + msg(b"Z", b"I")
BEGIN = b"B" + u64(0x2000) + u64(1) + struct.pack(">I", 7)


def step(op, data): return bytes([op]) + struct.pack(">H", len(data)) + data


SCENARIOS = {
    "stream-and-server-end": step(0, xlog(0x1000, 0x3000, 5, BEGIN) + keepalive(0x3000, 6, 0))
    + step(0, keepalive(0x3000, 7, 1)) + step(0, END),
    "confirm-then-stop": step(0, xlog(0x1000, 0x3000, 5, BEGIN)) + step(1, b"")
    + step(2, keepalive(0x3000, 7, 1)) + step(3, xlog(0x1100, 0x3000, 8, b"late")) + step(0, END),
    "bytewise": step(4, xlog(0x1000, 0x3000, 5, b"payload") + keepalive(1, 2, 1) + END),
    "server-error": step(0, xlog(1, 2, 3, b"x"))
    + step(0, msg(b"E", b"SERROR\0C58P01\0Mrequested WAL segment has been removed\0\0")
           + msg(b"Z", b"I")),
    "malformed": step(0, copy_data(b"w" + b"\0" * 10)) + step(0, END),
    "abandon": step(0, xlog(1, 2, 3, b"thirteen byte")) + step(0, END),
    "unknown-kind": step(0, copy_data(b"zzz")) + step(3, b"") + step(0, END),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus", "copyboth")
    os.makedirs(out, exist_ok=True)
    for data in SCENARIOS.values():
        with open(os.path.join(out, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
