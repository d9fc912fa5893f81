"""Debian's psycopg2 (python3-psycopg2, built on libpq) through one session
of most of what a Python program asks of it: connection info, conninfo
parsing, password encryption, every common type both ways, errors and their
fields, transactions, notices, LISTEN/NOTIFY, COPY both ways, named and
scrollable cursors, large objects, client encodings, cancel, a statement
timeout, the asynchronous API with its own select() loop, a wait callback
(green mode), the extras helpers, a terminated backend and failed connects.

Run by run-bindings.sh on libpq and on libpgwire-pq: everything printed must
be identical. Nothing printed depends on time, process ids or the run.
"""
import functools
import io
import os
import select
import threading
import datetime
import decimal
import uuid

import psycopg2
import psycopg2.errors
import psycopg2.extensions as ext
import psycopg2.extras as extras
from psycopg2 import sql

import pysession
from pysession import out, section

fails = functools.partial(pysession.fails, psycopg2.Error)

extras.register_uuid()


def take_notifies(c, n):
    """At least n notifications of c, waiting on its socket."""
    got = []
    while len(got) < n:
        select.select([c], [], [], 1)
        c.poll()
        got.extend(c.notifies)
        del c.notifies[:]
    return got


conn = psycopg2.connect("")
conn.autocommit = True
cur = conn.cursor()
section("info")
i = conn.info
out(i.dbname == os.environ.get("PGDATABASE", i.dbname), i.transaction_status, i.protocol_version,
    i.server_version // 10000, i.status, i.ssl_in_use, i.needs_password, i.used_password)
out(sorted(k for k in conn.get_dsn_parameters()))
out(i.parameter_status("client_encoding"), i.parameter_status("server_encoding"),
    i.parameter_status("integer_datetimes"), i.parameter_status("nosuch"))
out(ext.parse_dsn("host=a port=5 dbname='x y' user=u connect_timeout=3"))
out(ext.parse_dsn("postgresql://u:p@h1:5,h2/db?sslmode=disable&application_name=z"))
try:
    ext.parse_dsn("host=a bogus=1")
except Exception as e:
    out(type(e).__name__, e)
try:
    ext.parse_dsn("host='unterminated")
except Exception as e:
    out(type(e).__name__, e)
out(ext.encrypt_password("secret", "alice", conn, "md5"))
out(ext.encrypt_password("secret", "alice", algorithm="md5"))
out(ext.encrypt_password("secret", "alice", conn, "scram-sha-256")[:14])
out(ext.libpq_version() // 10000)

section("types")
cur.execute("CREATE TEMP TABLE t (i int, f float8, n numeric, s text, b bytea, d date, ts timestamptz,"
            " iv interval, u uuid, j jsonb, a int[], ta text[], bo bool)")
vals = (1, 1.5, decimal.Decimal("12345678901234567890.123"), "h\u00e9llo 'q' \\ \"", b"\x00\x01\xff'\\",
        datetime.date(2020, 2, 29), datetime.datetime(2021, 3, 4, 5, 6, 7, 890123, tzinfo=datetime.timezone.utc),
        datetime.timedelta(days=3, seconds=7), uuid.UUID(int=12345), extras.Json({"a": [1, "x", None]}),
        [1, None, 3], ["a", "b c", None, "\"q\""], True)
cur.execute("INSERT INTO t VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)", vals)
out(cur.rowcount, cur.statusmessage)
cur.execute("INSERT INTO t (i) SELECT g FROM generate_series(2, 5) g")
out(cur.rowcount, cur.statusmessage)
cur.execute("SET TIME ZONE 'UTC'")
cur.execute("SELECT * FROM t ORDER BY i")
out([(d.name, d.type_code, d.internal_size, d.precision, d.scale, d.null_ok, d.table_oid is not None, d.table_column) for d in cur.description])
for r in cur.fetchall():
    out(tuple(bytes(x) if isinstance(x, memoryview) else x for x in r))
out(cur.mogrify("SELECT %s, %s, %s, %s", ("it's", b"\x00'", None, [1, 2])))
out(sql.SQL("SELECT {} FROM {}").format(sql.Identifier('we"ird'), sql.Identifier("s", "t")).as_string(conn))
out(ext.quote_ident('a"b', conn))
cur.execute("SELECT %(a)s::text || %(b)s", {"a": "x", "b": "y"})
out(cur.fetchone())
cur.execute("SELECT 1 WHERE false")
out(cur.fetchall(), cur.rowcount, cur.description[0].name)

section("errors")
pysession.each_error(
    psycopg2.Error, cur.execute,
    ["SELECT 1/0", "SELECT * FROM nosuch", "SELEC 1", "INSERT INTO t (i) VALUES ('x')"],
    lambda e: (type(e).__name__, e.pgcode, repr(e.pgerror), e.diag.severity, e.diag.severity_nonlocalized,
               e.diag.sqlstate, e.diag.message_primary, e.diag.statement_position,
               e.diag.source_function is not None))
conn.autocommit = False
cur.execute("SELECT 1")
out(conn.info.transaction_status)
try:
    cur.execute("SELECT 1/0")
except psycopg2.Error as e:
    out(type(e).__name__, conn.info.transaction_status)
fails(cur.execute, "SELECT 1")
conn.rollback()
out(conn.info.transaction_status)
conn.autocommit = True

section("notices")
cur.execute("DO $$ BEGIN RAISE NOTICE 'n1 %', 1; RAISE WARNING 'w2'; RAISE INFO 'i3'; END $$")
out(conn.notices)
del conn.notices[:]
cur.execute("SET client_min_messages = debug1")
cur.execute("DO $$ BEGIN RAISE DEBUG 'dbg'; END $$")
out([n for n in conn.notices if "dbg" in n])
cur.execute("RESET client_min_messages")

section("notify")
cur.execute("LISTEN ch")
c2 = psycopg2.connect("")
c2.autocommit = True
c2.cursor().execute("NOTIFY ch, 'p1'; NOTIFY ch, 'p2'; NOTIFY ch")
out([(n.channel, n.payload, n.pid == c2.info.backend_pid) for n in take_notifies(conn, 3)])
c2.close()

section("copy")
f = io.StringIO()
cur.copy_expert("COPY (SELECT i, s FROM t ORDER BY i) TO STDOUT WITH (FORMAT csv, HEADER)", f)
out(repr(f.getvalue()))
cur.execute("CREATE TEMP TABLE c (a int, b text)")
cur.copy_from(io.StringIO("1\tone\n2\t\\N\n3\tth\u00e9 \\t x\n"), "c")
out(cur.rowcount)
f = io.StringIO()
cur.copy_to(f, "c", sep="|", null="NULL")
out(repr(f.getvalue()))
big = "".join("%d\t%s\n" % (k, "x" * (k % 50)) for k in range(20000))
cur.copy_expert("COPY c FROM STDIN", io.StringIO(big))
out(cur.rowcount)
f = io.StringIO()
cur.copy_expert("COPY c TO STDOUT", f)
out(len(f.getvalue()), f.getvalue().count("\n"))
try:
    cur.copy_expert("COPY c FROM STDIN", io.StringIO("1\tok\nbad\trow\n"))
except psycopg2.Error as e:
    out(type(e).__name__, e.pgcode, e.diag.context)
try:
    cur.copy_expert("COPY nosuch TO STDOUT", io.StringIO())
except psycopg2.Error as e:
    out(type(e).__name__, e.pgcode)
f = io.BytesIO()
cur.copy_expert("COPY (SELECT 1::int4, 'x'::text) TO STDOUT (FORMAT binary)", f)
out(f.getvalue())

section("named cursor")
conn.autocommit = False
nc = conn.cursor("nc")
nc.itersize = 7
nc.execute("SELECT g, repeat('y', g % 5) FROM generate_series(1, 30) g")
rows = list(nc)
out(len(rows), rows[0], rows[-1])
nc.close()
nc = conn.cursor("nc2", scrollable=True)
nc.execute("SELECT g FROM generate_series(1, 10) g")
out(nc.fetchmany(3), nc.fetchone())
nc.scroll(-2)
out(nc.fetchone())
nc.scroll(0, "absolute")
out(nc.fetchone())
nc.close()
conn.commit()

section("large objects")
lo = conn.lobject(0, "wb")
lo.write(b"large " * 1000)
oid = lo.oid
lo.close()
lo = conn.lobject(oid, "rb")
data = lo.read()
out(len(data), data[:12], lo.tell())
lo.seek(6)
out(lo.read(6))
lo.close()
lo = conn.lobject(oid, "wb")
lo.truncate(10)
lo.close()
out(conn.lobject(oid, "rb").read())
conn.lobject(oid).unlink()
try:
    conn.lobject(oid, "rb")
except psycopg2.Error as e:
    out(type(e).__name__, e.pgcode)
conn.rollback()
conn.autocommit = True

section("encoding")
conn.set_client_encoding("LATIN1")
out(conn.encoding)
cur.execute("SELECT %s", ("caf\u00e9",))
out(cur.fetchone())
try:
    cur.execute("SELECT %s", ("\u20ac",))
except Exception as e:
    out(type(e).__name__)
conn.set_client_encoding("UTF8")
cur.execute("SELECT convert_from('\\xe282ac', 'UTF8')")
out(cur.fetchone())
try:
    cur.execute("SELECT %s", (b"\xff\xfe".decode("latin1"),))
    out(cur.fetchone())
except Exception as e:
    out(type(e).__name__)

section("cancel")
probe = psycopg2.connect("")
probe.autocommit = True


def canceller():
    pc = probe.cursor()
    pysession.wait_active(lambda q, a: (pc.execute(q, a), pc.fetchone()[0])[1], conn.info.backend_pid,
                          "SELECT pg_sleep(30)%")
    conn.cancel()


th = threading.Thread(target=canceller)
th.start()
fails(cur.execute, "SELECT pg_sleep(30)")
th.join()
cur.execute("SELECT 42")
out(cur.fetchone())
cur.execute("SET statement_timeout = '100ms'")
fails(cur.execute, "SELECT pg_sleep(5)")
cur.execute("RESET statement_timeout")

section("async")
def wait(c):
    while True:
        st = c.poll()
        if st == ext.POLL_OK:
            return
        if st == ext.POLL_READ:
            select.select([c.fileno()], [], [], 10)
        elif st == ext.POLL_WRITE:
            select.select([], [c.fileno()], [], 10)
a = psycopg2.connect("", async_=1)
wait(a)
out(a.status, a.isexecuting())
ac = a.cursor()
ac.execute("SELECT pg_sleep(0.2), %s", ("async",))
out(a.isexecuting())
wait(a)
out(ac.fetchone())
ac.execute("SELECT repeat('z', 200000)")
wait(a)
out(len(ac.fetchone()[0]))
ac.execute("SELECT 1/0")
try:
    wait(a)
except psycopg2.Error as e:
    out(type(e).__name__, e.pgcode)
ac.execute("LISTEN ach")
wait(a)
cur.execute("NOTIFY ach, 'async-note'")
out([(n.channel, n.payload) for n in take_notifies(a, 1)])
a.close()

section("green")
ext.set_wait_callback(extras.wait_select)
g = psycopg2.connect("")
gc = g.cursor()
gc.execute("SELECT count(*) FROM generate_series(1, 100000)")
out(gc.fetchone())
fails(gc.execute, "SELEC")
g.rollback()
gc.execute("SELECT pg_sleep(0.1)")
g.close()
ext.set_wait_callback(None)

section("extras")
cur.execute("CREATE TEMP TABLE ex (a int, b text)")
extras.execute_values(cur, "INSERT INTO ex VALUES %s", [(k, "v%d" % k) for k in range(1000)], page_size=300)
extras.execute_batch(cur, "UPDATE ex SET b = %s WHERE a = %s", [("w%d" % k, k) for k in range(0, 1000, 7)])
cur.execute("SELECT count(*), count(*) FILTER (WHERE b LIKE 'w%%') FROM ex")
out(cur.fetchone())
dc = conn.cursor(cursor_factory=extras.RealDictCursor)
dc.execute("SELECT 1 AS one, 'two' AS two")
out(dc.fetchall())
cur.executemany("INSERT INTO ex VALUES (%s, %s)", [(2000 + k, None) for k in range(50)])
out(cur.rowcount)
cur.callproc("upper", ("abc",))
out(cur.fetchall())

section("terminate")
v = psycopg2.connect("")
v.autocommit = True
pid = v.info.backend_pid
cur.execute("SELECT pg_terminate_backend(%s, 60000)", (pid,))
out(cur.fetchone())
try:
    v.cursor().execute("SELECT 1")
except psycopg2.Error as e:
    out(type(e).__name__, e.pgcode, v.closed)
out(v.closed)

section("bad connect")
for dsn in ["host=/nonexistent port=1", "port=1 host=127.0.0.1", "dbname=nosuch_db_here", "user=nosuch_user_x", "bogus=1", "sslmode=require host=/nonexistent"]:
    try:
        psycopg2.connect(dsn)
    except psycopg2.Error as e:
        out(type(e).__name__, str(e).strip())

conn.close()
probe.close()
out(conn.closed)
out("done")
