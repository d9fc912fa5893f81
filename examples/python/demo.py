#!/usr/bin/python3
"""libpgwire from Python, both paths: a blocking query, then pipelined
asyncio queries, a server error, COPY and a deadline. Connects as the
environment says (PGHOST, PGPORT, PGUSER, PGDATABASE, ...) or with the
connection string given as the first argument. Exits 1 if an answer is
wrong.

    PGWIRE_LIB=build/libpgwire.so python3 examples/python/demo.py "dbname=postgres"
"""
import asyncio
import decimal
import sys

import pgwire


def blocking(conninfo):
    with pgwire.connect(conninfo) as conn:
        row = conn.fetch("SELECT $1::int + 1, $2::numeric * 2, now()", 41,
                         decimal.Decimal("1.25"))[0]
        print("blocking:", row)
        return row[0] == 42 and row[1] == decimal.Decimal("2.50")


async def with_asyncio(conninfo):
    conn = await pgwire.connect_async(conninfo)
    try:
        # Ten queries in flight at once: one write, answers in order.
        squares = await asyncio.gather(*(conn.fetchval("SELECT $1::int8 * $1", i)
                                         for i in range(10)))
        print("pipelined:", squares)
        try:
            await conn.execute("SELECT 1/0")
        except pgwire.ServerError as e:
            print("server error:", e.sqlstate, e.message)
        await conn.execute("CREATE TEMP TABLE demo (n int, word text)")
        copied = await conn.copy_in("COPY demo FROM STDIN", [b"1\tone\n", b"2\ttwo\n"])
        print("copied", copied, "rows; out:", await conn.copy_out("COPY demo TO STDOUT"))
        try:
            await conn.execute("SELECT pg_sleep(10)", timeout=0.1)
        except pgwire.Error as e:
            print("deadline:", e)
        return squares == [i * i for i in range(10)] and copied == 2
    finally:
        await conn.close()


def main():
    conninfo = sys.argv[1] if len(sys.argv) > 1 else ""
    ok = blocking(conninfo) and asyncio.run(with_asyncio(conninfo))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
