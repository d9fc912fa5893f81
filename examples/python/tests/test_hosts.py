"""The asyncio path's choice of server among several (the library's
multi-host plan, hostplan.h, driven over asyncio's sockets) against a real
primary, its streaming standby and PgBouncer in front of the primary (which
reports neither in_hot_standby nor default_transaction_read_only, so the
plan asks with a query), beside libpq's choice (libpq.so.5 through ctypes)
for the same connection string."""
import asyncio
import ctypes
import ctypes.util
import os
import unittest

from common import pgwire

TARGETS = ("any", "read-write", "read-only", "primary", "standby", "prefer-standby")
WHO = "SELECT pg_catalog.pg_is_in_recovery()::text, pg_catalog.inet_server_port()::text"


def _libpq():
    lib = ctypes.CDLL(ctypes.util.find_library("pq") or "libpq.so.5")
    for name, res, args in (("PQconnectdb", ctypes.c_void_p, [ctypes.c_char_p]),
                            ("PQstatus", ctypes.c_int, [ctypes.c_void_p]),
                            ("PQerrorMessage", ctypes.c_char_p, [ctypes.c_void_p]),
                            ("PQexec", ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]),
                            ("PQgetvalue", ctypes.c_char_p,
                             [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]),
                            ("PQntuples", ctypes.c_int, [ctypes.c_void_p]),
                            ("PQclear", None, [ctypes.c_void_p]),
                            ("PQfinish", None, [ctypes.c_void_p])):
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


def libpq_choice(pq, conninfo):
    """(True, (in_recovery, port)) for the server libpq connected to, or
    (False, its error message)."""
    c = pq.PQconnectdb(conninfo.encode())
    try:
        if pq.PQstatus(c) != 0:
            return False, pq.PQerrorMessage(c).decode()
        r = pq.PQexec(c, WHO.encode())
        try:
            assert pq.PQntuples(r) == 1
            return True, (pq.PQgetvalue(r, 0, 0).decode(), pq.PQgetvalue(r, 0, 1).decode())
        finally:
            pq.PQclear(r)
    finally:
        pq.PQfinish(c)


async def pgwire_choice(conninfo):
    try:
        conn = await pgwire.connect_async(conninfo)
    except pgwire.ServerError as e:
        return False, e.message  # the server's own words end the connect
    except pgwire.Error as e:
        return False, str(e)
    try:
        rows = await conn.simple(WHO)
        return True, tuple("" if v is None else v for v in rows.rows[0])  # libpq: NULL is ""
    finally:
        await conn.close()


class HostsTest(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls):
        env = os.environ
        cls.pq = _libpq()
        cls.servers = {
            "P": (env["PGW_TEST_TCP_HOST"], env["PGPORT"]),
            "S": (env["PGW_STANDBY_HOST"], env["PGW_STANDBY_PORT"]),
            "B": (env["PGW_PGBOUNCER_HOST"], env["PGW_PGBOUNCER_PORT"]),
        }
        cls.login = (f"user={env['PGW_PGBOUNCER_USER']} password={env['PGW_PGBOUNCER_PASSWORD']} "
                     f"dbname={env['PGW_PGBOUNCER_DB']} sslmode=disable connect_timeout=10")

    def conninfo(self, names, extra=""):
        hosts = ",".join(self.servers[n][0] for n in names)
        ports = ",".join(self.servers[n][1] for n in names)
        return f"host={hosts} port={ports} {self.login} {extra}"

    async def same_as_libpq(self, conninfo):
        want = libpq_choice(self.pq, conninfo)
        got = await pgwire_choice(conninfo)
        self.assertEqual(got[0], want[0], f"{conninfo}\nlibpq: {want[1]}\npgwire: {got[1]}")
        if want[0]:
            self.assertEqual(got[1], want[1], conninfo)
        elif " failed: " in got[1]:
            # Each server left, in libpq's words.
            lines = [ln.strip() for ln in want[1].splitlines() if " failed: " in ln]
            self.assertTrue(lines, want[1])
            for ln in lines:
                self.assertIn(ln, got[1], conninfo)
        else:
            # The server refused the login: its message ends libpq's.
            self.assertIn(got[1], want[1].splitlines()[-1], conninfo)
            self.assertEqual(len([ln for ln in want[1].splitlines() if " failed: " in ln]), 1)
        return got

    async def test_every_target_and_host_order(self):
        chosen = {}
        for names in ("PS", "SP", "P", "S", "B", "BS", "SB"):
            for target in TARGETS:
                ci = self.conninfo(names, f"target_session_attrs={target}")
                with self.subTest(hosts=names, target=target):
                    chosen[names, target] = await self.same_as_libpq(ci)
        # The rules themselves, not only agreement: a standby where one is
        # wanted, the primary (directly or through PgBouncer) where a
        # read-write server is.
        standby_port = self.servers["S"][1]
        self.assertEqual(chosen["PS", "standby"][1], ("true", standby_port))
        self.assertEqual(chosen["SP", "read-write"][1][0], "false")
        self.assertEqual(chosen["SB", "primary"][1][0], "false")
        self.assertEqual(chosen["P", "prefer-standby"][1][0], "false")  # the second pass
        self.assertFalse(chosen["B", "read-only"][0])  # asked with a query: not read-only
        self.assertFalse(chosen["P", "standby"][0])

    async def test_load_balance_hosts(self):
        ports = set()
        for _ in range(30):
            ok, who = await pgwire_choice(self.conninfo("PS", "load_balance_hosts=random"))
            self.assertTrue(ok, who)
            ports.add(who[1])
            # whichever comes first, read-write lands on the primary
            ok, who = await pgwire_choice(
                self.conninfo("SP", "load_balance_hosts=random target_session_attrs=read-write"))
            self.assertEqual((ok, who[0]), (True, "false"))
        self.assertEqual(ports, {self.servers["P"][1], self.servers["S"][1]})

    async def test_a_refused_login_ends_the_connect(self):
        # A wrong password at PgBouncer, the first host: no other host is
        # tried, though the primary behind it would let the login in.
        bad = self.conninfo("BP").replace(
            f"password={os.environ['PGW_PGBOUNCER_PASSWORD']}", "password=wrong")
        ok, why = await self.same_as_libpq(bad)
        self.assertFalse(ok)


if __name__ == "__main__":
    unittest.main()
