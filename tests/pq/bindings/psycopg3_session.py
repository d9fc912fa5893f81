"""Debian's psycopg 3 (python3-psycopg: its libpq wrapper through ctypes)
through one session of what a Python program asks of it. psycopg 3 drives
libpq non-blocking everywhere, with its own waits on the socket: connect
(PQconnectStart + PQconnectPoll), queries with server-side parameters in
text and binary, statements it prepares after repeated use, executemany
and explicit pipelines (pipeline mode), stream() (single-row mode), COPY
both ways in text and binary, named cursors, transactions and savepoints,
errors and their diagnostics, notices, notifications, cancel, the asyncio
API, and failed connects.

Run by run-bindings.sh on libpq and on libpgwire-pq: everything printed must
be identical. Nothing printed depends on time, process ids or the run.
"""
import asyncio
import functools
import logging
import datetime
import decimal
import threading
import uuid

import psycopg
from psycopg import pq, sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.types.json import Jsonb
from psycopg.types.range import Range

import pysession
from pysession import out, section

# psycopg warns when it ends a pipeline whose block an error ended, which
# depends on whether the error arrived before the block's end: on timing,
# not on the library.
logging.getLogger("psycopg").disabled = True

fails = functools.partial(pysession.fails, psycopg.Error)


conn = psycopg.connect("", autocommit=True)
section("info")
i = conn.info
out(i.status.name, i.transaction_status.name, i.server_version // 10000, i.vendor, i.encoding,
    i.parameter_status("integer_datetimes"), i.parameter_status("nosuch"), i.port, i.host == i.get_parameters()["host"])
out(sorted(i.get_parameters()))
out(conninfo_to_dict("host=a port=5 dbname='x y'"), make_conninfo("dbname=a", user="b c"))
fails(conninfo_to_dict, "host=a bogus=1")
out(pq.version() // 10000, pq.PGconn.__module__)

section("types")
cur = conn.cursor()
cur.execute("CREATE TEMP TABLE t (i int PRIMARY KEY, f float8, n numeric, s text, b bytea, d date, ts timestamptz,"
            " iv interval, u uuid, j jsonb, a int[], r int4range, bo bool)")
vals = (1, 1.5, decimal.Decimal("12345678901234567890.123"), "h\u00e9llo 'q'", b"\x00\x01\xff'\\",
        datetime.date(2020, 2, 29), datetime.datetime(2021, 3, 4, 5, 6, 7, 890123, tzinfo=datetime.timezone.utc),
        datetime.timedelta(days=3, seconds=7), uuid.UUID(int=12345), Jsonb({"a": [1, "x", None]}), [1, None, 3],
        Range(1, 10), True)
cur.execute("INSERT INTO t VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", vals)
out(cur.rowcount, cur.statusmessage)
cur.execute("SET TIME ZONE 'UTC'")
for binary in (False, True):
    c2 = conn.cursor(binary=binary)
    c2.execute("SELECT * FROM t")
    out(binary, [(d.name, d.type_code) for d in c2.description], c2.pgresult.fformat(0))
    out(c2.fetchone())
cur.execute("SELECT %(a)s::text || %(b)s", {"a": "x", "b": "y"})
out(cur.fetchone())
out(sql.SQL("SELECT {} FROM {}").format(sql.Identifier('we"ird'), sql.Identifier("s", "t")).as_string(conn))
out(sql.Literal("it's").as_string(conn), sql.Literal(b"\x00'").as_string(conn))
for k in range(8):  # prepared after prepare_threshold uses
    cur.execute("SELECT %s::int * 2", (k,))
out(cur.fetchone(), conn.prepare_threshold)
bcur = conn.cursor(binary=True)
for k in range(3):  # binary results of a statement prepared now, then of a text-prepared one
    bcur.execute("SELECT %s::int * 3, %s::text, %s::numeric", (k, "b%d" % k, decimal.Decimal("1.5")), prepare=True)
    out(bcur.fetchone(), bcur.pgresult.fformat(0))
    bcur.execute("SELECT %s::int * 2", (k,))
    out(bcur.fetchone(), bcur.pgresult.fformat(0))
    cur.execute("SELECT %s::int * 3, %s::text, %s::numeric", (k, "t%d" % k, decimal.Decimal("2.5")))
    out(cur.fetchone(), cur.pgresult.fformat(0))

section("pipeline")
cur.execute("CREATE TEMP TABLE p (a int, b text)")
cur.executemany("INSERT INTO p VALUES (%s, %s)", [(k, "v%d" % k) for k in range(500)])
out(cur.rowcount)
with conn.pipeline() as pl:
    c1 = conn.execute("SELECT count(*) FROM p")
    c2 = conn.execute("SELECT %s::text", ["piped"])
    pl.sync()
    c3 = conn.execute("UPDATE p SET b = 'w' WHERE a < %s", [10])
out(c1.fetchone(), c2.fetchone(), c3.rowcount)
try:
    with conn.pipeline():
        conn.execute("SELECT 1")
        conn.execute("SELECT 1/0")
        conn.execute("SELECT 2")
except psycopg.Error as e:
    out(type(e).__name__, e.sqlstate)
out(conn.execute("SELECT 'after'").fetchone(), conn.info.transaction_status.name)

section("stream")
total, n = 0, 0
for row in conn.cursor().stream("SELECT g, repeat('r', g % 7) FROM generate_series(1, 3000) g"):
    total += row[0]
    n += 1
out(n, total)
try:
    for row in conn.cursor().stream("SELECT 10 / (3 - g) FROM generate_series(1, 5) g"):
        out(row)
except psycopg.Error as e:
    out(type(e).__name__, e.sqlstate)

section("errors")
pysession.each_error(
    psycopg.Error, conn.execute,
    ["SELECT 1/0", "SELECT * FROM nosuch", "SELEC 1", "INSERT INTO t (i) VALUES (1)"],
    lambda e: (type(e).__name__, e.sqlstate, e.diag.severity, e.diag.severity_nonlocalized, e.diag.message_primary,
               e.diag.message_detail, e.diag.statement_position, e.diag.constraint_name, e.diag.table_name,
               e.diag.source_function is not None))
with psycopg.connect("") as tc:
    try:
        with tc.transaction():
            tc.execute("CREATE TEMP TABLE tx (a int)")
            with tc.transaction():
                tc.execute("INSERT INTO tx VALUES (1)")
            try:
                with tc.transaction():
                    tc.execute("INSERT INTO tx VALUES ('x')")
            except psycopg.Error as e:
                out("savepoint rolled back:", type(e).__name__)
            out(tc.execute("SELECT count(*) FROM tx").fetchone(), tc.info.transaction_status.name)
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    out(tc.info.transaction_status.name)

section("notices")
notes = []
conn.add_notice_handler(lambda d: notes.append((d.severity, d.message_primary)))
conn.execute("DO $$ BEGIN RAISE NOTICE 'n1 %', 1; RAISE WARNING 'w2'; END $$")
out(notes)

section("notify")
conn.execute("LISTEN ch")
with psycopg.connect("", autocommit=True) as c2:
    c2.execute("NOTIFY ch, 'p1'")
    c2.execute("NOTIFY ch, 'p2'")
    pid2 = c2.info.backend_pid
got = []
for n in conn.notifies():
    got.append((n.channel, n.payload, n.pid == pid2))
    if len(got) == 2:
        break
out(got)

section("copy")
cur.execute("CREATE TEMP TABLE cp (a int, b text)")
with cur.copy("COPY cp FROM STDIN") as cp:
    cp.write_row((1, "one"))
    cp.write_row((2, None))
    cp.write_row((3, "th\u00e9 \t x"))
    for k in range(4, 20001):
        cp.write_row((k, "x" * (k % 50)))
out(cur.rowcount)
with cur.copy("COPY (SELECT a, b FROM cp ORDER BY a LIMIT 3) TO STDOUT") as cp:
    out(list(cp.rows()))
size = 0
with cur.copy("COPY cp TO STDOUT") as cp:
    for data in cp:
        size += len(data)
out(size)
with cur.copy("COPY (SELECT 1::int4, 'x'::text) TO STDOUT (FORMAT BINARY)") as cp:
    cp.set_types(["int4", "text"])
    out(list(cp.rows()))
try:
    with cur.copy("COPY cp FROM STDIN") as cp:
        cp.write("1\tok\nbad\trow\n")
except psycopg.Error as e:
    out(type(e).__name__, e.sqlstate)
try:
    with cur.copy("COPY cp FROM STDIN") as cp:
        cp.write("1\tok\n")
        raise ValueError("the caller's own error")
except (ValueError, psycopg.Error) as e:
    out(type(e).__name__)
out(conn.execute("SELECT count(*) FROM cp").fetchone())

section("named cursor")
with conn.transaction():
    with conn.cursor("nc") as nc:
        nc.itersize = 7
        nc.execute("SELECT g, repeat('y', g % 5) FROM generate_series(1, 30) g")
        rows = list(nc)
        out(len(rows), rows[0], rows[-1])
    with conn.cursor("nc2", scrollable=True) as nc:
        nc.execute("SELECT g FROM generate_series(1, 10) g")
        out(nc.fetchmany(3), nc.fetchone())
        nc.scroll(-2)
        out(nc.fetchone())

section("cancel")
probe = psycopg.connect("", autocommit=True)
pid = conn.info.backend_pid


def canceller():
    pysession.wait_active(lambda q, a: probe.execute(q, a).fetchone()[0], pid, "SELECT pg_sleep(30)%")
    conn.cancel()


th = threading.Thread(target=canceller)
th.start()
fails(conn.execute, "SELECT pg_sleep(30)")
th.join()
probe.close()
out(conn.execute("SELECT 42").fetchone())
conn.execute("SET statement_timeout = '100ms'")
fails(conn.execute, "SELECT pg_sleep(5)")
conn.execute("RESET statement_timeout")

section("asyncio")


async def main():
    a = await psycopg.AsyncConnection.connect("", autocommit=True)
    ac = a.cursor()
    await ac.execute("SELECT pg_sleep(0.1), %s", ["async"])
    out(await ac.fetchone())
    async with a.pipeline():
        r1 = await a.execute("SELECT 1")
        r2 = await a.execute("SELECT %s::int + 1", [2])
    out(await r1.fetchone(), await r2.fetchone())
    try:
        await a.execute("SELECT 1/0")
    except psycopg.Error as e:
        out(type(e).__name__, e.sqlstate)
    n = 0
    async for row in ac.stream("SELECT generate_series(1, 1000)"):
        n += row[0]
    out(n)
    await a.close()


asyncio.run(main())

section("terminate")
v = psycopg.connect("", autocommit=True)
out(conn.execute("SELECT pg_terminate_backend(%s, 60000)", [v.info.backend_pid]).fetchone())
# (whether the server's FATAL or the close is seen first depends on when
# they are read, src/pq/README.md: the class is not compared)
try:
    v.execute("SELECT 1")
    out("alive")
except psycopg.OperationalError:
    out("OperationalError", v.closed, v.broken)

section("bad connect")
# A TCP port that refuses at once: "connection failed" (PQconnectPoll
# failed), not "connection is bad" (PQconnectStart did).
for dsn in ["host=/nonexistent port=1", "host=127.0.0.1 port=1", "dbname=nosuch_db_here", "bogus=1"]:
    try:
        psycopg.connect(dsn)
    except psycopg.Error as e:
        out(type(e).__name__, str(e).strip().replace("\n", "|"))
conn.close()
out(conn.closed)
out("done")
