#!/usr/bin/env python3
"""Seed inputs for fuzz_pgoutput: one file per scenario, named by its SHA-1,
in tests/fuzz/corpus/pgoutput/ (or the directory given).

An input is a version byte (1 + byte % 4), then messages, each a 2-byte
big-endian length and its bytes (see fuzz_pgoutput.c). The scenarios cover
every message kind of protocol versions 1-4 with the relation they need
first, as the server writes them (src/backend/replication/logical/proto.c).
Run it again after changing it; the corpus also holds streams captured from a PostgreSQL 15
server with pg_logical_slot_peek_binary_changes (--server, with PG* set).
"""
import hashlib
import os
import struct
import sys

REL = 16384


def u8(v): return struct.pack(">B", v)
def u16(v): return struct.pack(">H", v)
def u32(v): return struct.pack(">I", v & 0xFFFFFFFF)
def u64(v): return struct.pack(">Q", v & 0xFFFFFFFFFFFFFFFF)
def cstr(s): return s.encode() + b"\0"


def relation(xid=None, oid=REL):
    cols = [(1, "id", 23), (0, "name", 25), (0, "data", 17), (0, "ts", 1184)]
    body = b"R" + (u32(xid) if xid else b"") + u32(oid) + cstr("public") + cstr("t")
    body += b"d" + u16(len(cols))
    for flags, name, typ in cols:
        body += u8(flags) + cstr(name) + u32(typ) + u32(-1)
    return body


def text(s): return b"t" + u32(len(s)) + s
def binary(s): return b"b" + u32(len(s)) + s


def tuple_text(i):
    return u16(4) + text(str(i).encode()) + text(b"name") + b"u" + text(b"2024-02-29 13:45:30+00")


def tuple_binary(i):
    return u16(4) + binary(u32(i)) + b"n" + binary(b"\xde\xad") + binary(u64(762444330000000))


def change(kind, tup, xid=None, old=None):
    """An Insert/Update/Delete of REL: old is its marker and tuple, if any."""
    body = kind + (u32(xid) if xid else b"") + u32(REL) + (old or b"")
    return body if kind == b"D" else body + b"N" + tup


BEGIN = b"B" + u64(0x1000) + u64(1) + u32(700)
COMMIT = b"C" + u8(0) + u64(0x1000) + u64(0x1010) + u64(1)


def scenarios():
    yield 1, [BEGIN, relation(), change(b"I", tuple_text(1)), change(b"I", tuple_binary(2)),
              change(b"U", tuple_text(1)), change(b"U", tuple_text(1), old=b"K" + tuple_text(1)),
              change(b"U", tuple_text(1), old=b"O" + tuple_binary(1)),
              change(b"D", tuple_text(1), old=b"K" + tuple_text(1)),
              b"T" + u32(2) + u8(3) + u32(REL) + u32(REL + 1), COMMIT]
    yield 1, [BEGIN, b"O" + u64(5) + cstr("pg_1"), b"Y" + u32(16390) + cstr("s") + cstr("mood"),
              b"M" + u8(1) + u64(9) + cstr("prefix") + u32(3) + b"abc", relation(),
              relation(oid=REL + 1), COMMIT]
    # streamed: xids inside the blocks, commit and aborts after
    yield 2, [b"S" + u32(800) + u8(1), relation(800), change(b"I", tuple_text(3), 800),
              b"T" + u32(800) + u32(1) + u8(0) + u32(REL),
              b"M" + u32(800) + u8(1) + u64(9) + cstr("p") + u32(0), b"E",
              b"S" + u32(800) + u8(0), change(b"D", b"", 801, old=b"K" + tuple_text(3)), b"E",
              b"A" + u32(800) + u32(801),
              b"c" + u32(800) + u8(0) + u64(1) + u64(2) + u64(3)]
    # two-phase
    tail = u64(0x2000) + u64(0x2010) + u64(3) + u32(900) + cstr("gid-1")
    yield 3, [b"b" + tail, relation(), change(b"I", tuple_text(4)), b"P" + u8(0) + tail,
              b"K" + u8(0) + tail,
              b"r" + u8(0) + u64(1) + u64(2) + u64(3) + u64(4) + u32(900) + cstr("gid-1"),
              b"S" + u32(901) + u8(1), b"E", b"p" + u8(0) + tail]
    # v4: a stream abort with its LSN and time
    yield 4, [b"S" + u32(902) + u8(1), relation(902), change(b"I", tuple_binary(5), 902), b"E",
              b"A" + u32(902) + u32(902) + u64(0x3000) + u64(77)]


# Captured from a real server: each scenario's SQL, then the slot read in
# each mode (proto_version, binary, streaming).
SERVER_SETUP = """
SET synchronous_commit = on;
DROP TABLE IF EXISTS pgo_seed; DROP PUBLICATION IF EXISTS pgo_seed_pub;
CREATE TABLE pgo_seed (id int PRIMARY KEY, t text, n numeric, ts timestamptz, a int4[],
                       j jsonb, b bytea, big text);
CREATE PUBLICATION pgo_seed_pub FOR TABLE pgo_seed;
SELECT 1 FROM pg_create_logical_replication_slot('pgo_seed_slot', 'pgoutput', true);
INSERT INTO pgo_seed VALUES (1, 'a', 1.5, now(), '{1,NULL}', '{"k": [1]}', '\\x00ff',
    (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 150) i)), (2, NULL, 'NaN',
    'infinity', '{}', 'null', '', 'x');
UPDATE pgo_seed SET t = 'b' WHERE id = 1;
UPDATE pgo_seed SET id = 3 WHERE id = 2;
ALTER TABLE pgo_seed REPLICA IDENTITY FULL;
UPDATE pgo_seed SET n = 2 WHERE id = 1;
DELETE FROM pgo_seed WHERE id = 3;
SELECT 1 FROM pg_logical_emit_message(true, 'pfx', 'hello');
TRUNCATE pgo_seed;
SET logical_decoding_work_mem = '64kB';
INSERT INTO pgo_seed (id, t) SELECT i, repeat('y', 40) FROM generate_series(10, 1500) i;
"""
SERVER_READS = [(1, "false", ""), (1, "true", ""), (2, "false", ", 'streaming', 'on'"),
                (2, "true", ", 'streaming', 'on', 'messages', 'true'")]


def server_scenarios():
    import subprocess
    script = SERVER_SETUP
    for version, binary, extra in SERVER_READS:
        script += ("\\echo ===\nSELECT encode(data, 'hex') FROM pg_logical_slot_peek_binary_changes("
                   "'pgo_seed_slot', NULL, NULL, 'proto_version', '%d', 'publication_names', "
                   "'pgo_seed_pub', 'binary', '%s'%s);\n" % (version, binary, extra))
    script += "DROP PUBLICATION pgo_seed_pub; DROP TABLE pgo_seed;\n"
    out = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"], input=script,
                         capture_output=True, text=True, check=True).stdout
    parts = out.split("===\n")[1:]
    for (version, _, _), part in zip(SERVER_READS, parts):
        msgs = [bytes.fromhex(line) for line in part.split() if line]
        # small seeds: the first messages (every kind of the small
        # transactions, up to 16 kB), and with them the last stream block
        # of the big transaction without its inserts (Stream Start, Stop,
        # Commit)
        head, size = [], 0
        for m in msgs:
            if size + len(m) > 16384:
                break
            head.append(m)
            size += len(m)
        yield version, head
        starts = [i for i, m in enumerate(msgs) if m[:1] == b"S"]
        if starts:
            yield version, head + [m for m in msgs[starts[-1]:] if m[:1] != b"I"]


def encode(version, msgs):
    return u8(version - 1) + b"".join(u16(len(m)) + m for m in msgs)


def main():
    args = [a for a in sys.argv[1:] if a != "--server"]
    out = args[0] if args else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus", "pgoutput")
    os.makedirs(out, exist_ok=True)
    server = "--server" in sys.argv
    for version, msgs in server_scenarios() if server else scenarios():
        data = encode(version, [m for m in msgs if len(m) < 65536])
        with open(os.path.join(out, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
