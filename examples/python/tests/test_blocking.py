"""The blocking path (pgwire.connect over client.h) against the cluster."""
import datetime
import decimal
import threading
import time
import unittest

from common import pgwire, tls_conninfo


class BlockingTest(unittest.TestCase):
    def setUp(self):
        self.conn = pgwire.connect()

    def tearDown(self):
        self.conn.close()

    def test_parameters_and_values(self):
        tz = datetime.timezone(datetime.timedelta(hours=2))
        when = datetime.datetime(2024, 2, 29, 13, 45, 1, 250000, tzinfo=tz)
        row = self.conn.fetch(
            "SELECT $1::int8 + 1, $2::float8 * 2, $3::numeric + 0.005, $4::text || '!', "
            "$5::bytea, NOT $6::bool, $7::timestamptz, $8::date, $9::time, $10::int4, "
            "$11::int4[], NULL::text",
            41, 1.25, decimal.Decimal("12345678901234567890.125"), "héllo", b"\x00\xff", False,
            when, datetime.date(1999, 12, 31), datetime.time(23, 59, 58, 5), None, [1, None, 3])[0]
        self.assertEqual(row[0], 42)
        self.assertEqual(row[1], 2.5)
        self.assertEqual(row[2], decimal.Decimal("12345678901234567890.130"))
        self.assertEqual(row[3], "héllo!")
        self.assertEqual(row[4], b"\x00\xff")
        self.assertIs(row[5], True)
        self.assertEqual(row[6], when)
        self.assertIsNotNone(row[6].tzinfo)
        self.assertEqual(row[7], datetime.date(1999, 12, 31))
        self.assertEqual(row[8], datetime.time(23, 59, 58, 5))
        self.assertIsNone(row[9])
        self.assertEqual(row[10], [1, None, 3])
        self.assertIsNone(row[11])

    def test_more_types(self):
        row = self.conn.fetch(
            "SELECT '-0.0100'::numeric, 'NaN'::numeric, 1e30::numeric, "
            "ARRAY[['a','b'],['c',NULL]]::text[], '12:30:00+05:30'::timetz, "
            "'2001-02-03 04:05:06'::timestamp, '{}'::int4[], 'infinity'::timestamptz, "
            "'(1,2)'::point, '1 day 2 hours'::interval, 3::int2, "
            "ARRAY['1 mon'::interval, '1 day'], '1 mon'::interval")[0]
        self.assertEqual(str(row[0]), "-0.0100")
        self.assertTrue(row[1].is_nan())
        self.assertEqual(row[2], decimal.Decimal(10) ** 30)
        self.assertEqual(row[3], [["a", "b"], ["c", None]])
        self.assertEqual(row[4].utcoffset(), datetime.timedelta(hours=5, minutes=30))
        self.assertEqual(row[5], datetime.datetime(2001, 2, 3, 4, 5, 6))
        self.assertEqual(row[6], [])
        self.assertEqual(row[7], "infinity")
        self.assertEqual(row[8], "(1,2)")  # no decoder here: the server's text
        self.assertEqual(row[9], datetime.timedelta(days=1, hours=2))
        self.assertEqual(row[10], 3)
        # No timedelta holds a month: the server's text, never a wrong value.
        self.assertEqual(row[11], '{"1 mon","1 day"}')
        self.assertEqual(row[12], "1 mon")

    def test_columns_of_many_rows(self):
        # Each column is decoded as a whole: fixed-width ones with and
        # without NULLs, all-NULL ones, text, a value read as the server's
        # text in the middle of a column, empty values, void (no text).
        rows = self.conn.fetch(
            "SELECT i::int4, CASE WHEN i % 3 = 0 THEN NULL ELSE i::int8 END, i * 0.5::float8, "
            "CASE WHEN i = 2 THEN NULL ELSE repeat('é', i) END, NULL::int4, "
            "CASE WHEN i = 4 THEN 'infinity' ELSE '2000-01-01 UTC'::timestamptz + i * "
            "interval '1 second' END, i % 2 = 0, "
            "CASE WHEN i = 3 THEN '1 mon' ELSE i * interval '1 day' END, ''::text, ''::bytea, "
            "'(1,2)'::point, pg_sleep(0) FROM generate_series(1, 5) i")
        epoch = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
        expected = [(i, None if i % 3 == 0 else i, i * 0.5, None if i == 2 else "é" * i, None,
                     "infinity" if i == 4 else epoch + datetime.timedelta(seconds=i),
                     i % 2 == 0, "1 mon" if i == 3 else datetime.timedelta(days=i), "", b"",
                     "(1,2)", None) for i in range(1, 6)]
        self.assertEqual(rows, expected)
        # Cells of 4 KiB and more on average are read one by one: the same values.
        self.assertEqual(self.conn.fetch(
            "SELECT i, repeat('ab', 20000), NULL::text, pg_sleep(0), '1 mon'::interval, "
            "decode(repeat('ff', 9000), 'hex') FROM generate_series(1, 2) i"),
            [(i, "ab" * 20000, None, None, "1 mon", b"\xff" * 9000) for i in (1, 2)])
        self.assertEqual(self.conn.fetch("SELECT FROM generate_series(1, 3)"), [(), (), ()])
        self.assertEqual(self.conn.fetch("SELECT 1 WHERE false"), [])

    def test_listen_notify(self):
        # As on the asyncio path, through the client's queue.
        with pgwire.connect() as other:
            self.conn.listen("Chan nel")
            self.assertIsNone(self.conn.wait_notification(timeout=0))
            other.execute("SELECT pg_notify('Chan nel', 'héllo')")
            other.execute("SELECT pg_notify('elsewhere', 'x')")
            self.conn.execute("NOTIFY \"Chan nel\"")
            other_pid = other.fetchval("SELECT pg_backend_pid()")
            self.assertEqual(self.conn.wait_notification(timeout=60),
                             pgwire.Notification(other_pid, "Chan nel", "héllo", 0))
            own_pid = self.conn.fetchval("SELECT pg_backend_pid()")
            self.assertEqual(self.conn.wait_notification(timeout=60),
                             (own_pid, "Chan nel", "", 0))
            self.conn.unlisten()
            other.execute("SELECT pg_notify('Chan nel', 'late')")
            self.conn.execute("SELECT 1")
            self.assertIsNone(self.conn.wait_notification(timeout=0))

    def test_server_error_fields(self):
        with self.assertRaises(pgwire.ServerError) as cm:
            self.conn.execute("SELECT 1 FROM FROM")
        e = cm.exception
        self.assertEqual(e.sqlstate, "42601")
        self.assertEqual(e.severity, "ERROR")
        self.assertIn("syntax error", e.message)
        self.assertEqual(e.position, "15")
        self.assertEqual(e.fields["C"], "42601")
        self.conn.execute("CREATE TEMP TABLE t_err (id int PRIMARY KEY)")
        self.conn.execute("INSERT INTO t_err VALUES (1)")
        with self.assertRaises(pgwire.ServerError) as cm:
            self.conn.execute("INSERT INTO t_err VALUES ($1)", 1)
        e = cm.exception
        self.assertEqual(e.sqlstate, "23505")
        self.assertEqual(e.detail, "Key (id)=(1) already exists.")
        self.assertEqual(e.table_name, "t_err")
        self.assertEqual(e.constraint_name, "t_err_pkey")
        with self.assertRaises(pgwire.ServerError) as cm:
            self.conn.simple("DO $$BEGIN RAISE EXCEPTION 'boom' USING HINT = 'try again'; END$$")
        self.assertEqual(cm.exception.hint, "try again")
        self.assertEqual(cm.exception.sqlstate, "P0001")
        self.assertEqual(self.conn.fetchval("SELECT 7"), 7)  # still usable

    def test_copy_in_and_out(self):
        self.conn.execute("CREATE TEMP TABLE t_copy (a int, b text)")
        n = self.conn.copy_in("COPY t_copy FROM STDIN",
                              (f"{i}\tline {i}\n" for i in range(1000)))
        self.assertEqual(n, 1000)
        out = self.conn.copy_out("COPY (SELECT * FROM t_copy ORDER BY a LIMIT 3) TO STDOUT "
                                 "WITH (FORMAT csv)")
        self.assertEqual(out, b"0,line 0\n1,line 1\n2,line 2\n")

    def test_deadline(self):
        started = time.monotonic()
        with self.assertRaises(pgwire.TimeoutError) as cm:
            self.conn.execute("SELECT pg_sleep(60)", timeout=0.2)
        self.assertLess(time.monotonic() - started, 50)
        # The server was running it: cancelled there, its answer kept.
        self.assertEqual(cm.exception.__cause__.sqlstate, "57014")
        self.assertEqual(self.conn.fetchval("SELECT 1"), 1)

    def test_cancel_from_another_thread(self):
        timer = threading.Timer(0.3, self.conn.cancel)
        timer.start()
        try:
            with self.assertRaises(pgwire.ServerError) as cm:
                self.conn.execute("SELECT pg_sleep(60)")
        finally:
            timer.join()
        self.assertEqual(cm.exception.sqlstate, "57014")

    def test_connect_error(self):
        with self.assertRaises(pgwire.Error) as cm:
            pgwire.connect("host=127.0.0.1 port=1 connect_timeout=5")
        self.assertIn("127.0.0.1", str(cm.exception))


class BlockingTlsTest(unittest.TestCase):
    def test_scram_over_verified_tls(self):
        with pgwire.connect(tls_conninfo("scram", extra="channel_binding=require")) as c:
            self.assertTrue(c.fetchval("SELECT ssl FROM pg_stat_ssl WHERE pid = "
                                       "pg_backend_pid()"))

    def test_client_certificate(self):
        with pgwire.connect(tls_conninfo("cert")) as c:
            self.assertEqual(c.fetchval("SELECT current_user"),
                             __import__("os").environ["PGW_TEST_CERT_USER"])


if __name__ == "__main__":
    unittest.main()
