"""The asyncio path (pgwire.connect_async: the sans-IO session on asyncio's
loop) against the cluster."""
import asyncio
import datetime
import decimal
import os
import time
import unittest

from common import pgwire, tls_conninfo


class AsyncioTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        self.conn = await pgwire.connect_async()

    async def asyncTearDown(self):
        await self.conn.close()

    async def test_parameters_and_values(self):
        when = datetime.datetime(2030, 1, 2, 3, 4, 5, 6, tzinfo=datetime.timezone.utc)
        row = (await self.conn.fetch(
            "SELECT $1::int4 * 2, $2::numeric, $3::timestamptz, $4::bytea, $5::text[], $6::bool",
            21, decimal.Decimal("-1.50"), when, b"abc", ["x", "y,z"], None))[0]
        self.assertEqual(row, (42, decimal.Decimal("-1.50"), when, b"abc", ["x", "y,z"], None))

    async def test_pipelining_through_gather(self):
        values = await asyncio.gather(*(self.conn.fetchval("SELECT $1::int8 * 10", i)
                                        for i in range(200)))
        self.assertEqual(values, [i * 10 for i in range(200)])

    async def test_error_in_a_pipeline_fails_only_its_request(self):
        results = await asyncio.gather(self.conn.fetchval("SELECT 1"),
                                       self.conn.fetchval("SELECT 1/0"),
                                       self.conn.fetchval("SELECT 3"), return_exceptions=True)
        self.assertEqual(results[0], 1)
        self.assertIsInstance(results[1], pgwire.ServerError)
        self.assertEqual(results[1].sqlstate, "22012")
        self.assertEqual(results[1].message, "division by zero")
        self.assertEqual(results[2], 3)

    async def test_listen_notify(self):
        # A channel whose name needs quoting, a notification from another
        # connection (its pid) and from this one, in order; none after
        # UNLISTEN.
        other = await pgwire.connect_async()
        try:
            await self.conn.listen("Chan nel")
            self.assertIsNone(await self.conn.notification(timeout=0.05))
            await other.execute("SELECT pg_notify('Chan nel', 'héllo')")
            await other.execute("SELECT pg_notify('elsewhere', 'x')")
            await self.conn.execute("NOTIFY \"Chan nel\"")
            await self.conn.execute("SELECT 1")  # its answer comes after both NOTIFYs
            first = await self.conn.notification(timeout=0)  # already queued
            self.assertEqual(first, pgwire.Notification(other.backend_pid, "Chan nel", "héllo",
                                                        0))
            second = await self.conn.notification(timeout=60)
            self.assertEqual(second, (self.conn.backend_pid, "Chan nel", "", 0))
            await self.conn.unlisten()
            await other.execute("SELECT pg_notify('Chan nel', 'late')")
            await self.conn.execute("SELECT 1")  # its answer comes after any NOTIFY
            self.assertIsNone(await self.conn.notification(timeout=0))
        finally:
            await other.close()

    async def test_server_error_fields(self):
        with self.assertRaises(pgwire.ServerError) as cm:
            await self.conn.simple(
                "DO $$BEGIN RAISE EXCEPTION USING MESSAGE = 'm', DETAIL = 'd', HINT = 'h', "
                "ERRCODE = '22023', SCHEMA = 'sc', TABLE = 'tb', COLUMN = 'co', "
                "DATATYPE = 'dt', CONSTRAINT = 'cn'; END$$")
        e = cm.exception
        self.assertEqual((e.sqlstate, e.message, e.detail, e.hint, e.schema_name, e.table_name,
                          e.column_name, e.data_type_name, e.constraint_name),
                         ("22023", "m", "d", "h", "sc", "tb", "co", "dt", "cn"))
        self.assertIn("PL/pgSQL", e.where)
        self.assertEqual(e.routine, "exec_stmt_raise")

    async def test_copy_in_and_out(self):
        await self.conn.execute("CREATE TEMP TABLE t_copy (a int, b text)")
        n = await self.conn.copy_in("COPY t_copy FROM STDIN WITH (FORMAT csv)",
                                    (f"{i},\"r {i}\"\n".encode() for i in range(5000)))
        self.assertEqual(n, 5000)
        out = await self.conn.copy_out("COPY (SELECT sum(a), count(*) FROM t_copy) TO STDOUT")
        self.assertEqual(out, b"12497500\t5000\n")

    async def test_deadline_cancels_on_the_server(self):
        started = time.monotonic()
        with self.assertRaises(pgwire.TimeoutError) as cm:
            await self.conn.execute("SELECT pg_sleep(60)", timeout=0.2)
        self.assertLess(time.monotonic() - started, 50)
        # The server was running it: cancelled there, its answer kept.
        self.assertEqual(cm.exception.__cause__.sqlstate, "57014")
        self.assertEqual(await self.conn.fetchval("SELECT 2"), 2)

    async def test_cancel(self):
        sleeper = asyncio.ensure_future(self.conn.execute("SELECT pg_sleep(60)"))
        await asyncio.sleep(0.3)
        await self.conn.cancel()
        with self.assertRaises(pgwire.ServerError) as cm:
            await sleeper
        self.assertEqual(cm.exception.sqlstate, "57014")
        self.assertEqual(await self.conn.fetchval("SELECT 3"), 3)

    async def test_hosts_tried_in_order(self):
        env = os.environ
        # Nothing listens on port 1: the second host (the cluster) serves.
        conn = await pgwire.connect_async(
            f"host=127.0.0.1,{env['PGHOST']} port=1,{env['PGPORT']} connect_timeout=5")
        try:
            self.assertEqual(await conn.fetchval("SELECT 5"), 5)
        finally:
            await conn.close()
        with self.assertRaises(pgwire.Error) as cm:
            await pgwire.connect_async("host=127.0.0.1 port=1")
        self.assertEqual(cm.exception.code, -1021)  # PGW_ECONNECT, every attempt's reason
        # libpq's words for the attempt
        self.assertIn('connection to server at "127.0.0.1", port 1 failed: Connection refused',
                      str(cm.exception))

    async def test_connect_error(self):
        env = os.environ
        with self.assertRaises(pgwire.ServerError) as cm:
            await pgwire.connect_async(f"dbname=no_such_db_here user={env['PGUSER']}")
        self.assertEqual(cm.exception.sqlstate, "3D000")


class AsyncioTlsTest(unittest.IsolatedAsyncioTestCase):
    async def test_scram_channel_binding_over_verified_tls(self):
        conn = await pgwire.connect_async(
            tls_conninfo("scram", extra="channel_binding=require require_auth=scram-sha-256"))
        try:
            self.assertTrue(await conn.fetchval(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"))
            values = await asyncio.gather(*(conn.fetchval("SELECT $1::int4", i)
                                            for i in range(50)))
            self.assertEqual(values, list(range(50)))
        finally:
            await conn.close()

    async def test_client_certificate_and_cancel_over_tls(self):
        conn = await pgwire.connect_async(tls_conninfo("cert"))
        try:
            self.assertEqual(await conn.fetchval("SELECT current_user"),
                             os.environ["PGW_TEST_CERT_USER"])
            with self.assertRaises(pgwire.TimeoutError) as cm:
                await conn.execute("SELECT pg_sleep(60)", timeout=0.2)
            # The cancel, sent over TLS as the connection is, reached the
            # server: 57014.
            self.assertEqual(cm.exception.__cause__.sqlstate, "57014")
            self.assertEqual(await conn.fetchval("SELECT 4"), 4)
        finally:
            await conn.close()

    async def test_sslmode_retries_as_libpq(self):
        # prefer: a role the server takes only without TLS is refused over
        # TLS, then logs in in plaintext; allow: one it takes only over TLS
        # is refused in plaintext, then logs in over TLS.
        env = os.environ
        base = (f"host={env['PGW_TEST_TCP_HOST']} port={env['PGPORT']} "
                f"dbname={env['PGDATABASE']}")
        for user, sslmode, over_tls in ((env["PGW_TEST_NOSSL_USER"], "prefer", False),
                                        (env["PGW_TEST_SSLONLY_USER"], "allow", True)):
            conn = await pgwire.connect_async(f"{base} user={user} sslmode={sslmode}")
            try:
                self.assertEqual(await conn.fetchval(
                    "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"), over_tls)
            finally:
                await conn.close()
        with self.assertRaises(pgwire.ServerError):
            await pgwire.connect_async(
                f"{base} user={env['PGW_TEST_NOSSL_USER']} sslmode=require")

    async def test_refused_ssl_request_ends_the_connect(self):
        # A server that answers SSLRequest with 'E' (one failing before it
        # negotiates) ends the connect: its unauthenticated error is not
        # shown and the next host is not tried, as in libpq
        # (CVE-2024-10977). The real server never answers so: a listener
        # of the test's own does.
        async def answer_e(reader, writer):
            await reader.readexactly(8)
            writer.write(b"E")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(answer_e, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        env = os.environ
        try:
            with self.assertRaises(pgwire.Error) as cm:
                await pgwire.connect_async(
                    f"host=127.0.0.1,{env['PGW_TEST_TCP_HOST']} port={port},{env['PGPORT']} "
                    f"user={env['PGUSER']} dbname={env['PGDATABASE']} sslmode=prefer")
            self.assertIn("error response during SSL exchange", str(cm.exception))
        finally:
            server.close()
            await server.wait_closed()

    async def test_verify_full_refuses_a_wrong_host_name(self):
        env = os.environ
        bad = tls_conninfo("scram").replace(f"host={env['PGW_TEST_TCP_HOST']}",
                                            f"host=localhost hostaddr={env['PGW_TEST_TCP_HOST']}")
        # The cluster's certificate names 127.0.0.1 / localhost; a name it
        # does not carry must be refused before any password is sent.
        bad = bad.replace("host=localhost", "host=not-the-server.invalid")
        with self.assertRaises(pgwire.Error) as cm:
            await pgwire.connect_async(bad)
        self.assertIn('does not match host name "not-the-server.invalid"', str(cm.exception))


if __name__ == "__main__":
    unittest.main()
