#!/usr/bin/python3
"""asyncpg, and libpgwire's own Python package, in the scenario harness: one
(library, scenario) pair per process.

    /usr/bin/python3 bench/python/driver.py --lib asyncpg|asyncpg-uvloop|pgwire-py \
        --scenario ID [--scale S]

pgwire-py is examples/python's package on its asyncio path (the sans-IO
session driven by asyncio's loop, ctypes over libpgwire.so, found through
PGWIRE_LIB as the package documents): standard library only, so it runs
wherever Debian's python3 does. Same scenarios, same verification; where
its API differs (no prepare(): the session's statement cache prepares a
statement at its second use; calls in flight together are pipelined on the
one connection) the note of the row says so.

Debian's python3-asyncpg (and python3-uvloop for the second row), so run it
with Debian's /usr/bin/python3. Prints one JSON object in bench/driver.c's
format (see bench/runner.py) with what this runtime can measure: latency
(perf_counter_ns around every operation), CPU (getrusage user+sys over the
timed loop), GC (time inside the cyclic collector, from gc.callbacks), socket
bytes (asyncio: a count at the connection's transport; uvloop: /proc/self/io,
libuv reading and writing with read()/write()), peak RSS (VmHWM);
allocations are not counted (null: "n/a (GC runtime)").

Each scenario uses asyncpg's own conventions: prepared statements
(conn.prepare), its statement cache for one-shot calls, copy_to_table and
copy_records_to_table for COPY, conn.cursor() for cursors, create_pool for
pooling. asyncpg runs one operation at a time per connection, so the
scenarios defined as calls in flight together on one connection say so
instead of running. Every answer is verified: row counts, values against
setup.sql's formulas or against the first call's, checksums in bench.h's
formulas. BENCH_CORRUPT_EXPECT=1 makes every expected value wrong (off by
one), so bench/selftest.py can show that a wrong answer fails the run.

Exit status: 0 ok or unsupported, 1 a failed verification or error, 2 usage.
"""
import argparse
import asyncio
import datetime
import gc
import json
import math
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = json.load(open(os.path.join(HERE, "..", "node", "scenarios.json")))
CORRUPT = os.environ.get("BENCH_CORRUPT_EXPECT") == "1"
M64 = (1 << 64) - 1


class Failure(Exception):
    pass


def want(v):
    return v + 1 if CORRUPT else v


def expect_eq(got, expected, what):
    if got != want(expected):
        raise Failure("%s: got %r, expected %r" % (what, got, want(expected)))


def expect_rows(rows, n, what):
    if len(rows) != want(n):
        raise Failure("%s: %d rows, expected %d" % (what, len(rows), want(n)))


def sizes(scale):
    sz = dict(TABLE["sizes"])
    for k, least in TABLE["scaled_sizes"].items():
        sz[k] = max(least, int(TABLE["sizes"][k] * scale))
    return sz


# ---- bench.h's checksums ---------------------------------------------------------
def mix(h, v):
    return h ^ ((v + 0x9E3779B97F4A7C15 + (h << 6) + (h >> 2)) & M64)


def fold_f(d):
    return int(d * 1000.0)  # truncation toward zero, as C's (int64_t) cast


EPOCH = datetime.datetime(2000, 1, 1)
EPOCH_TZ = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)


def micros(dt):
    d = dt - (EPOCH_TZ if dt.tzinfo else EPOCH)
    return (d.days * 86400 + d.seconds) * 1000000 + d.microseconds


def mixed_checksum(rows):
    """drv_libpq.c's decode_mixed_*: json/jsonb arrive as text, so their
    lengths are folded exactly as the C drivers fold them."""
    h = 0
    for r in rows:
        i2, i4, f4, f8, vc, js, jb, ts, tz, b = r
        if not js.startswith("{") or not jb.startswith("{") or not b:
            raise Failure("mixed row: bad json/jsonb/bytea")
        h = mix(h, i2 & M64)
        h = mix(h, i4 & M64)
        h = mix(h, fold_f(f4) & M64)
        h = mix(h, fold_f(f8) & M64)
        h = mix(h, len(vc) + len(js) * 1000 + len(jb) * 1000000)
        h = mix(h, micros(ts) & M64)
        h = mix(h, micros(tz) & M64)
        h = mix(h, len(b) * 65536 + b[0] * 256 + b[-1])
    return "%016x" % h


class SameAsFirst:
    """Verifies a result that must be the same on every call: the first call's
    rows get the full checksum (compared across libraries by the runner), every
    later call must return rows equal to them (compared in C by Record ==)."""

    def __init__(self, checksum):
        self.checksum = checksum
        self.ref = None
        self.sum = None

    def check(self, rows):
        if self.ref is None:
            self.ref, self.sum = rows, self.checksum(rows)
        elif rows != self.ref:
            raise Failure("the answer changed between calls")
        return self.sum


def array_expect(sz):
    out = {}
    for i in range(1, sz["array_rows"] + 1):
        out[i] = [want(2147483647 - j - i) if j % 2 == 0 else want(-2147483647 + j + i)
                  for j in range(sz["array_elems"])]
    return out


def copy_rows(n):
    """common.c's bench_copy_rows (xorshift64), materialised once."""
    x = 88172645463325252
    rows = []
    for i in range(n):
        x ^= (x << 13) & M64
        x ^= x >> 7
        x ^= (x << 17) & M64
        i4 = 1000000000 + x % 1147483647
        if i & 1:
            i4 = -i4
        i8 = 1000000000000000000 + x % 8000000000000000000
        f8 = (x >> 11) / 9007199254740993.0 * 1.0e15 + 0.1234567890123
        vc = "".join(chr(97 + (x >> (c % 60)) % 26) for c in range(40))
        rows.append((i4, i8, f8, vc))
    return rows


def csv_chunks_sync(rows):
    """CSV formatted inside the timed call, in chunks of about 256 KiB, as
    they are pulled (a COPY source that is a plain iterable: pgwire-py)."""
    parts, size = [], 0
    for i4, i8, f8, vc in rows:
        line = "%d,%d,%r,%s\n" % (i4, i8, f8, vc)
        parts.append(line)
        size += len(line)
        if size > 256 * 1024 - 256:
            yield "".join(parts).encode()
            parts, size = [], 0
    if parts:
        yield "".join(parts).encode()


async def csv_chunks(rows):
    """The same chunks from an async iterator (asyncpg's copy_to_table)."""
    for chunk in csv_chunks_sync(rows):
        yield chunk


def copied(status, n):
    expect_eq(int(status.split()[-1]), n, "copy rows")


SQL_MIXED = ("select c_int2, c_int4, c_float4, c_float8, c_varchar, c_json, c_jsonb, c_ts, c_tstz, "
             "c_bytea from bench_mixed order by id limit $1")
SQL_PREP = "select id, c_int4, c_float8, c_varchar from bench_mixed where id = $1"
SQL_CURSOR = ("select i::int4 as i, 'row ' || i as t, i * 0.5::float8 as f "
              "from generate_series(1, %d) i")
SQL_B = "SELECT * FROM benchmark_rows ORDER BY id LIMIT %d"

NO_SIMPLE = ("No row-returning Simple Query: execute() sends one but discards its rows, "
             "fetch() always uses the extended protocol")
ONE_AT_A_TIME = "Not Supported: asyncpg runs one operation at a time per connection"


# ---- the scenarios -------------------------------------------------------------------
class Scenarios:
    def __init__(self, env, sz):
        self.env, self.sz, self.conn, self.counter = env, sz, None, 0

    async def connect(self, **kw):
        import asyncpg
        args = dict(host=self.env["host"], port=self.env["port"], user=self.env["user"],
                    database=self.env["db"], ssl=False)
        args.update(kw)
        return await asyncpg.connect(**args)

    async def open(self):
        self.conn = await self.connect()

    async def close(self):
        if self.conn is not None:
            await self.conn.close()

    # Connect
    async def connect_op(self):
        c = await self.connect(host=self.env["tcp_host"])
        await c.close()

    # Extended Query
    async def ext_seq_op(self):
        self.counter += 1
        expect_eq(await self.conn.fetchval("select $1::int4", self.counter), self.counter, "ext seq")
        return "%016x" % 0

    async def mixed_binary_setup(self):
        await self.open()
        self.same = SameAsFirst(mixed_checksum)

    async def mixed_binary_op(self):
        rows = await self.conn.fetch(SQL_MIXED, 1000)
        expect_rows(rows, 1000, "mixed")
        return self.same.check(rows)

    async def blob_fetch_op(self):
        rows = await self.conn.fetch("select id, b from bench_blob order by id limit $1", 10)
        expect_rows(rows, self.sz["blob_rows"], "blob")
        h = 0
        for i, (_, b) in enumerate(rows):
            if len(b) != want(self.sz["blob_bytes"]):
                raise Failure("blob row %d: %d bytes" % (i, len(b)))
            for k in range(0, len(b), 4093):
                if b[k] != b[k % 16]:
                    raise Failure("blob row %d: wrong byte at %d" % (i, k))
            h = mix(h, len(b) + b[0] + b[-1] * 256)
        return "%016x" % h

    async def array_fetch_setup(self):
        await self.open()
        self.expect = array_expect(self.sz)

    async def array_fetch_op(self):
        rows = await self.conn.fetch("select id, a from bench_array order by id limit $1", 10)
        expect_rows(rows, self.sz["array_rows"], "array")
        h = 0
        for rid, a in rows:
            if a != self.expect[rid]:  # every element, compared in C
                raise Failure("array row %d: wrong elements" % rid)
            h = mix(h, (sum(a) + len(a)) & M64)
        return "%016x" % h

    async def prep_seq_setup(self):
        await self.open()
        self.stmt = await self.conn.prepare(SQL_PREP)

    async def prep_seq_op(self):
        h = 0
        for i in range(1, self.sz["prep_reuse"] + 1):
            r = await self.stmt.fetchrow(i)
            expect_eq(r[0], i, "prepared id")
            h = mix(h, (r[1] + fold_f(r[2]) + len(r[3])) & M64)
        return "%016x" % h

    # Bulk Load
    async def copy_text_setup(self):
        await self.open()
        self.rows = copy_rows(self.sz["copy_rows"])

    async def copy_text_op(self):
        await self.conn.execute("TRUNCATE bench_copy")
        st = await self.conn.copy_to_table("bench_copy", source=csv_chunks(self.rows), format="csv")
        copied(st, self.sz["copy_rows"])

    copy_binary_setup = copy_text_setup

    async def copy_binary_op(self):
        await self.conn.execute("TRUNCATE bench_copy")
        st = await self.conn.copy_records_to_table("bench_copy", records=self.rows)
        copied(st, self.sz["copy_rows"])

    # Cursor Streaming
    async def cursor_op(self):
        s = n = 0
        async with self.conn.transaction():
            async for r in self.conn.cursor(SQL_CURSOR % self.sz["cursor_rows"],
                                            prefetch=self.sz["cursor_batch"]):
                s += r[0] + len(r[1]) + int(r[2] * 1000.0)
                n += 1
        expect_eq(n, self.sz["cursor_rows"], "cursor rows")
        return "%016x" % (s & M64)

    # Connection Pooling
    async def pool_ext_setup(self):
        import asyncpg
        n = self.sz["pool_size"]
        self.pool = await asyncpg.create_pool(
            host=self.env["host"], port=self.env["port"], user=self.env["user"],
            database=self.env["db"], ssl=False, min_size=n, max_size=n)

    async def pool_ext_op(self):
        n = self.sz["pool_conc"]
        got = await asyncio.gather(*[self.pool.fetchval("select $1::int4 as one", i)
                                     for i in range(n)])
        for i, v in enumerate(got):
            expect_eq(v, i, "pooled")

    async def pool_ext_teardown(self):
        await self.pool.close()

    # Suite B
    def b_setup(self, limit):
        async def setup():
            await self.open()
            self.stmt = await self.conn.prepare(SQL_B % limit)
            self.expect = [(i, want(1337), "wat", None, False) for i in range(1, limit + 1)]
            self.bsum = "%016x" % sum(i + 1337 + 3 for i in range(1, limit + 1))

        async def op():
            rows = await self.stmt.fetch()
            if rows != self.expect:  # every value of every row, compared in C
                raise Failure("suite B: wrong rows (%d rows)" % len(rows))
            return self.bsum
        return setup, op


NOTES = {
    "connect": "asyncpg.connect(ssl=False) over TCP, close()",
    "ext_seq": "fetchval(sql, value): its statement cache prepares the text once (its default)",
    "mixed_binary": "fetch(sql, 1000): binary results (its choice for every type it has a codec "
                    "for; json/jsonb come back as str, its default)",
    "blob_fetch": "fetch(sql, 10), binary bytea",
    "array_fetch": "fetch(sql, 10), binary int4[] decoded to a list",
    "prep_seq": "conn.prepare() once, PreparedStatement.fetchrow() 50 times",
    "copy_text": "TRUNCATE, copy_to_table(format='csv') from an async iterator of ~256 KiB CSV "
                 "chunks formatted in the timed call",
    "copy_binary": "TRUNCATE, copy_records_to_table(): asyncpg's binary COPY encoder",
    "cursor": "conn.cursor(sql, prefetch=500) in a transaction, iterated row by row",
    "pool_ext": "create_pool(min_size=10, max_size=10), 1000 pool.fetchval() in asyncio.gather",
}
for _n in (1, 100, 500):
    NOTES["b_seq_%d" % _n] = "conn.prepare() once, PreparedStatement.fetch() one at a time"
REASONS = {
    "simple_seq": NO_SIMPLE, "simple_conc": NO_SIMPLE, "simple_fetch": NO_SIMPLE,
    "pool_simple": NO_SIMPLE, "c_rtt": NO_SIMPLE,
    "ext_conc": ONE_AT_A_TIME, "prep_conc": ONE_AT_A_TIME, "unit_of_work": ONE_AT_A_TIME,
    "b_pipe_1": ONE_AT_A_TIME, "b_pipe_100": ONE_AT_A_TIME, "b_pipe_500": ONE_AT_A_TIME,
    "mixed_text": "Not Controllable: asyncpg requests binary for every type it has a codec for",
    "c_speed": "suite C is run for the C libraries only",
    "ceiling": ONE_AT_A_TIME + "; executemany(), its one pipelined call, discards the rows, so "
               "no answer could be checked (a later asyncpg's fetchmany() returns them)",
}


# ---- libpgwire's Python package (examples/python), asyncio path ---------------------
class PgwireScenarios(Scenarios):
    async def connect(self, host=None):
        import pgwire
        return await pgwire.connect_async(
            "host=%s port=%d user=%s dbname=%s sslmode=disable" % (
                host or self.env["host"], self.env["port"], self.env["user"], self.env["db"]))

    async def connect_op(self):
        c = await self.connect(host=self.env["tcp_host"])
        await c.close()

    async def ext_conc_op(self):
        first = self.counter + 1
        self.counter += self.sz["ext_conc"]
        got = await asyncio.gather(*[self.conn.fetchval("select $1::int4", first + i)
                                     for i in range(self.sz["ext_conc"])])
        for i, v in enumerate(got):
            expect_eq(v, first + i, "ext concurrent")

    async def prep_seq_setup(self):
        await self.open()

    async def prep_seq_op(self):
        h = 0
        for i in range(1, self.sz["prep_reuse"] + 1):
            r = (await self.conn.fetch(SQL_PREP, i))[0]
            expect_eq(r[0], i, "prepared id")
            h = mix(h, (r[1] + fold_f(r[2]) + len(r[3])) & M64)
        return "%016x" % h

    async def copy_text_op(self):
        await self.conn.execute("TRUNCATE bench_copy")
        n = await self.conn.copy_in("COPY bench_copy FROM STDIN WITH (FORMAT csv)",
                                    csv_chunks_sync(self.rows))
        expect_eq(n, self.sz["copy_rows"], "copy rows")

    copy_binary_op = cursor_op = pool_ext_op = None

    # Per-Connection Ceiling: no batch call in the package; calls in flight
    # together are pipelined, each with its own Sync.
    async def ceiling_setup(self):
        await self.open()
        for v in (1, 2):  # the statement cache prepares the text at its second use
            await self.conn.fetch("select $1::int4", v)

    async def ceiling_op(self):
        n = self.sz["ceiling"]
        results = await asyncio.gather(*[self.conn.fetch("select $1::int4", i)
                                         for i in range(1, n + 1)])
        s = 0
        for i, rows in enumerate(results):
            expect_rows(rows, 1, "ceiling %d" % i)
            expect_eq(rows[0][0], i + 1, "ceiling %d" % i)
            s += rows[0][0]
        return "%016x" % (s & M64)

    def b_setup(self, limit, calls=1):
        async def setup():
            await self.open()
            await self.conn.fetch(SQL_B % limit)  # as asyncpg's prepare(): parsed before timing
            self.expect = [(i, want(1337), "wat", None, False) for i in range(1, limit + 1)]
            self.bsum = "%016x" % (calls * sum(i + 1337 + 3 for i in range(1, limit + 1)))

        async def op():
            results = await asyncio.gather(*[self.conn.fetch(SQL_B % limit)
                                             for _ in range(calls)])
            for rows in results:
                if rows != self.expect:  # every value of every row, compared in C
                    raise Failure("suite B: wrong rows (%d rows)" % len(rows))
            return self.bsum
        return setup, op


PGWIRE_NOTES = dict(NOTES)
PGWIRE_NOTES.update({
    "connect": "pgwire.connect_async(sslmode=disable) over TCP, close()",
    "ext_seq": "fetchval(sql, value): the session's statement cache prepares the text at its "
               "second use",
    "ext_conc": "50 fetchval(sql, value) in asyncio.gather: pipelined on the one connection",
    "mixed_binary": "fetch(sql, 1000): binary results decoded in Python (struct); json/jsonb "
                    "as str",
    "prep_seq": "fetch(sql, id) 50 times: the statement cache's prepared statement (no "
                "prepare() in the package)",
    "copy_text": "TRUNCATE, copy_in(COPY ... FORMAT csv) from a generator of ~256 KiB CSV "
                 "chunks formatted in the timed call",
})
for _n in (1, 100, 500):
    PGWIRE_NOTES["b_seq_%d" % _n] = ("fetch(sql) one at a time (the statement cache's "
                                    "prepared statement)")
    PGWIRE_NOTES["b_pipe_%d" % _n] = "10 fetch(sql) in asyncio.gather: pipelined"
PGWIRE_NOTES["ceiling"] = ("10,000 fetch(sql, value) in asyncio.gather: all in flight on the one "
                           "connection, each with its own Sync (the package has no batch call); "
                           "the statement cache's prepared statement, primed before timing")
PGWIRE_REASONS = dict(REASONS)
for _k in ("ext_conc", "b_pipe_1", "b_pipe_100", "b_pipe_500", "ceiling"):
    del PGWIRE_REASONS[_k]
PGWIRE_REASONS.update({
    "copy_binary": "Not Supported: the package has no binary COPY encoder",
    "cursor": "Not Supported: the package has no cursor API",
    "pool_ext": "Not Supported: the package has no pool",
    "prep_conc": "Not Supported: the package has no prepare()",
    "unit_of_work": "Not in this harness for the package",
    "simple_seq": "Not in this harness for the package (simple() returns text rows)",
    "simple_conc": "Not in this harness for the package (simple() returns text rows)",
    "simple_fetch": "Not in this harness for the package (simple() returns text rows)",
})


def lookup(sc, scenario):
    """(setup, op, teardown) of a scenario, or None."""
    if scenario.startswith("b_seq_"):
        setup, op = sc.b_setup(int(scenario[6:]))
        return setup, op, sc.close
    if scenario.startswith("b_pipe_") and isinstance(sc, PgwireScenarios):
        setup, op = sc.b_setup(int(scenario[7:]), calls=10)
        return setup, op, sc.close
    op = getattr(sc, scenario + "_op", None)
    if op is None:
        return None
    if scenario == "connect":
        async def nothing():
            pass
        return nothing, op, nothing
    setup = getattr(sc, scenario + "_setup", sc.open)
    return setup, op, getattr(sc, scenario + "_teardown", sc.close)


# ---- measurement -------------------------------------------------------------------------
class GcTimer:
    def __init__(self):
        self.ns, self.t0, self.on = 0, 0, False

    def __call__(self, phase, info):
        if phase == "start":
            self.t0 = time.perf_counter_ns()
        elif self.on:
            self.ns += time.perf_counter_ns() - self.t0


class Counted:
    """Counts the bytes through an asyncio transport: its protocol's
    data_received and its write/writelines."""

    def __init__(self, transport):
        self.inb = self.outb = 0
        proto = transport._protocol
        outer = self

        class Proxy:
            def data_received(self, data):
                outer.inb += len(data)
                proto.data_received(data)

            def __getattr__(self, name):
                return getattr(proto, name)

        transport._protocol = Proxy()
        write, writelines = transport.write, transport.writelines

        def counted_write(data):
            outer.outb += len(data)
            write(data)

        def counted_writelines(seq):
            seq = list(seq)
            outer.outb += sum(len(d) for d in seq)
            writelines(seq)

        transport.write, transport.writelines = counted_write, counted_writelines

    def read(self):
        return self.inb, self.outb


class ProcIo:
    """rchar/wchar of this process (uvloop reads and writes sockets with
    read()/write()), less what reading /proc/self/io itself adds."""

    def __init__(self):
        a = self._raw()
        b = self._raw()
        self.own = b[0] - a[0]

    @staticmethod
    def _raw():
        d = {}
        with open("/proc/self/io") as f:
            for line in f:
                k, v = line.split(":")
                d[k] = int(v)
        return d["rchar"], d["wchar"]

    def read(self):
        r, w = self._raw()
        return r - self.own, w


def peak_rss_kb():
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def cpu_ns():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return int((ru.ru_utime + ru.ru_stime) * 1e9)


async def run(lib, scenario, scale, uvloop_used):
    pgwire_py = lib == "pgwire-py"
    head = {"lib": lib, "scenario": scenario}
    row = TABLE["scenarios"].get(scenario)
    if row is None:
        return dict(head, status="failed", reason="unknown scenario")
    sz = sizes(scale)
    env = {"host": os.environ["PGHOST"], "port": int(os.environ["PGPORT"]),
           "user": os.environ["PGUSER"], "db": os.environ["PGDATABASE"],
           "tcp_host": os.environ.get("PGW_TEST_TCP_HOST", "127.0.0.1")}
    sc = (PgwireScenarios if pgwire_py else Scenarios)(env, sz)
    found = lookup(sc, scenario)
    if found is None:
        reason = (PGWIRE_REASONS if pgwire_py else REASONS).get(scenario) or TABLE["peer_reasons"].get(scenario, "not in this harness")
        return dict(head, status="unsupported", reason=reason)
    setup, op, teardown = found
    base, payload, stable = row
    iters = max(3, math.ceil(base * scale))
    warm = min(300, max(1, iters // 10))
    cap_s = 4.0 * (max(0.25, scale) if scale < 1 else scale)
    if os.environ.get("BENCH_TIME_CAP"):
        cap_s = float(os.environ["BENCH_TIME_CAP"])
    await setup()
    try:
        ref = None
        for i in range(warm):
            s = await op()
            if i == 0:
                ref = s
            elif stable and s != ref:
                raise Failure("checksum changed between calls")
        if uvloop_used:
            io = ProcIo()
        elif sc.conn is not None:
            io = Counted(sc.conn._wire.transport if pgwire_py else sc.conn._transport)
        else:
            io = None
        in0, out0 = io.read() if io else (0, 0)
        gct = GcTimer()
        gc.callbacks.append(gct)
        gct.on = True
        samples = []
        cap_ns = cap_s * 1e9
        c0 = cpu_ns()
        start = time.perf_counter_ns()
        while len(samples) < iters:
            t0 = time.perf_counter_ns()
            s = await op()
            t1 = time.perf_counter_ns()
            if stable and s != ref:
                raise Failure("checksum changed between calls")
            samples.append(t1 - t0)
            if t1 - start > cap_ns and len(samples) >= 5:
                break
        wall = time.perf_counter_ns() - start
        cpu = cpu_ns() - c0
        gct.on = False
        gc.callbacks.remove(gct)
        in1, out1 = io.read() if io else (0, 0)
    finally:
        await teardown()
    done = len(samples)
    out = dict(head, status="ok", ops=done, planned_ops=iters, warmup=warm, wall_ns=wall,
               cpu_ns_per_op=cpu / done, allocs_per_op=None, alloc_bytes_per_op=None,
               gc_ns_per_op=gct.ns / done,
               net_in_per_op=(in1 - in0) / done if io else None,
               net_out_per_op=(out1 - out0) / done if io else None,
               payload=bool(payload), peak_rss_kb=peak_rss_kb())
    if stable:
        out["checksum"] = ref
    out["note"] = (PGWIRE_NOTES if pgwire_py else NOTES).get(scenario, "")
    out["sizes"] = {"copy_rows": sz["copy_rows"], "cursor_rows": sz["cursor_rows"]}
    if pgwire_py:
        out["runtime"] = "Python %s, libpgwire through ctypes (%s)" % (
            sys.version.split()[0], os.environ.get("PGWIRE_LIB", "default search"))
    else:
        import asyncpg
        out["runtime"] = "Python %s, asyncpg %s%s" % (
            sys.version.split()[0], asyncpg.__version__,
            ", uvloop %s" % __import__("uvloop").__version__ if uvloop_used else "")
    out["samples_ns"] = samples
    out["p50_ns"] = sorted(samples)[done // 2]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True, choices=["asyncpg", "asyncpg-uvloop", "pgwire-py"])
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    if a.scale <= 0:
        ap.error("--scale must be positive")
    for k in ("PGHOST", "PGPORT", "PGUSER", "PGDATABASE"):
        if not os.environ.get(k):
            print("driver.py: PGHOST, PGPORT, PGUSER and PGDATABASE must be set", file=sys.stderr)
            return 2
    head = {"lib": a.lib, "scenario": a.scenario}
    try:
        if a.lib == "pgwire-py":
            sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python"))
            import pgwire  # noqa: F401
        else:
            import asyncpg  # noqa: F401
        if a.lib == "asyncpg-uvloop":
            import uvloop
            uvloop.install()
    except ImportError as e:
        print(json.dumps(dict(head, status="unsupported", reason="not installed here (%s)" % e)))
        return 0
    try:
        res = asyncio.run(run(a.lib, a.scenario, a.scale, a.lib == "asyncpg-uvloop"))
    except Failure as e:
        res = dict(head, status="failed", reason=str(e))
    except Exception as e:  # a library error is a failed run, reported, never a traceback only
        res = dict(head, status="failed", reason="%s: %s" % (type(e).__name__, e))
    print(json.dumps(res))
    return 1 if res["status"] == "failed" else 0


if __name__ == "__main__":
    sys.exit(main())
