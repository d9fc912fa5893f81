/*
 * libpgwire-pq's single-row mode and libpq 17's chunked mode
 * (PQsetChunkedRowsMode), against the real server: rows in
 * PGRES_TUPLES_CHUNK results, a chunk an error cuts short dropped; and
 * single-row mode's rows handed out while the statement still runs, in
 * bounded memory. Debian's libpq 15 has no chunked mode, so it cannot be
 * compared with it as tests/pq/diff does: the test asserts what libpq 17's
 * documentation says.
 */
#define _POSIX_C_SOURCE 200809L
#include "pgtest.h"

#include <errno.h>
#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <valgrind/valgrind.h>

#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif
#ifndef ASAN
#define ASAN 0
#endif

static PGconn *connect_db(const char *extra)
{
    pgt_require_server();
    char ci[1024];
    PGconn *conn = PQconnectdb(pgt_conninfo(ci, sizeof ci, extra));
    assert_non_null(conn);
    if (PQstatus(conn) != CONNECTION_OK) fail_msg("connect: %s", PQerrorMessage(conn));
    return conn;
}

static void exec_ok(PGconn *conn, const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
}

/* The next result has status st (and, for an error, SQLSTATE state);
 * returns it for more checks. */
static PGresult *expect(PGconn *conn, ExecStatusType st, const char *state)
{
    PGresult *r = PQgetResult(conn);
    assert_non_null(r);
    if (PQresultStatus(r) != st)
        fail_msg("%s where %s was expected: %s", PQresStatus(PQresultStatus(r)), PQresStatus(st),
                 PQresultErrorMessage(r));
    if (state) assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), state);
    return r;
}

static void expect_end(PGconn *conn)
{
    assert_null(PQgetResult(conn));
}

/* A chunk's status, size and values (first, first + 1, ...). */
static void expect_chunk(PGconn *conn, int rows, int first)
{
    PGresult *r = expect(conn, PGRES_TUPLES_CHUNK, NULL);
    assert_int_equal(PQntuples(r), rows);
    assert_int_equal(PQnfields(r), 1);
    assert_string_equal(PQfname(r, 0), "g");
    for (int i = 0; i < rows; i++)
        assert_int_equal(atoi(PQgetvalue(r, i, 0)), first + i);
    assert_string_equal(PQcmdStatus(r), "");
    PQclear(r);
}

static void test_chunked_rows(void **state)
{
    (void)state;
    PGconn *conn = connect_db(NULL);
    assert_string_equal(PQresStatus(PGRES_TUPLES_CHUNK), "PGRES_TUPLES_CHUNK");
    assert_int_equal(PQsetChunkedRowsMode(conn, 3), 0); /* nothing was sent */

    const char *sql = "SELECT g FROM generate_series(1, 7) g";
    for (int simple = 0; simple < 2; simple++) {
        int sent = simple ? PQsendQuery(conn, sql)
                          : PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0);
        assert_int_equal(sent, 1);
        assert_int_equal(PQsetChunkedRowsMode(conn, 0), 0);
        assert_int_equal(PQsetChunkedRowsMode(conn, 3), 1);
        expect_chunk(conn, 3, 1);
        expect_chunk(conn, 3, 4);
        expect_chunk(conn, 1, 7);
        PGresult *r = expect(conn, PGRES_TUPLES_OK, NULL);
        assert_int_equal(PQntuples(r), 0);
        assert_int_equal(PQnfields(r), 1);
        assert_string_equal(PQcmdStatus(r), "SELECT 7");
        PQclear(r);
        expect_end(conn);

        /* An error after four rows: the full chunk went out, the chunk it
         * cut short is dropped. */
        const char *bad = "SELECT 10 / (5 - g) AS g FROM generate_series(1, 7) g";
        sent = simple ? PQsendQuery(conn, bad)
                      : PQsendQueryParams(conn, bad, 0, NULL, NULL, NULL, NULL, 0);
        assert_int_equal(sent, 1);
        assert_int_equal(PQsetChunkedRowsMode(conn, 3), 1);
        r = expect(conn, PGRES_TUPLES_CHUNK, NULL);
        assert_int_equal(PQntuples(r), 3);
        assert_string_equal(PQgetvalue(r, 2, 0), "5");
        PQclear(r);
        PQclear(expect(conn, PGRES_FATAL_ERROR, "22012"));
        expect_end(conn);

        /* no rows: only the row-less result */
        const char *none = "SELECT g FROM generate_series(1, 0) g";
        sent = simple ? PQsendQuery(conn, none)
                      : PQsendQueryParams(conn, none, 0, NULL, NULL, NULL, NULL, 0);
        assert_int_equal(PQsetChunkedRowsMode(conn, 2), 1);
        r = expect(conn, PGRES_TUPLES_OK, NULL);
        assert_int_equal(PQntuples(r), 0);
        assert_string_equal(PQcmdStatus(r), "SELECT 0");
        PQclear(r);
        expect_end(conn);
    }
    PQfinish(conn);
}

/* The peak resident set so far, in KiB. */
static long peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    assert_non_null(f);
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) kb = atol(line + 6);
    fclose(f);
    assert_true(kb > 0);
    return kb;
}

/* Takes the single-row results of rows from, from + 1, ..., to. */
static void take_rows(PGconn *conn, long from, long to)
{
    for (long i = from; i <= to; i++) {
        PGresult *r = expect(conn, PGRES_SINGLE_TUPLE, NULL);
        assert_int_equal(PQntuples(r), 1);
        assert_int_equal(atol(PQgetvalue(r, 0, 0)), i);
        PQclear(r);
    }
}

/* Single-row mode hands out the rows as they arrive, while the statement
 * still runs: this one stops at its 20000th row on an advisory lock the
 * test holds, after the server sent the rows before (it flushes its output
 * every 8 kB), and the test takes 10000 of them before it lets the lock
 * go. A library that held the rows until the statement's end would wait
 * here until statement_timeout cancelled it. */
static void test_single_row_before_the_end(void **state)
{
    (void)state;
    PGconn *holder = connect_db(NULL);
    exec_ok(holder, "SELECT pg_advisory_lock(727301)");
    PGconn *conn = connect_db(NULL);
    exec_ok(conn, "SET statement_timeout = '30s'");
    const char *sql = "SELECT g, CASE WHEN g = 20000 THEN pg_advisory_lock(727301)::text END"
                      " FROM generate_series(1, 20001) g";
    assert_int_equal(PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0), 1);
    assert_int_equal(PQsetSingleRowMode(conn), 1);
    take_rows(conn, 1, 10000);
    exec_ok(holder, "SELECT pg_advisory_unlock(727301)");
    take_rows(conn, 10001, 20001);
    PGresult *r = expect(conn, PGRES_TUPLES_OK, NULL);
    assert_string_equal(PQcmdStatus(r), "SELECT 20001");
    PQclear(r);
    expect_end(conn);
    exec_ok(conn, "SELECT pg_advisory_unlock_all()");
    PQfinish(conn);
    PQfinish(holder);
}

/* ... so that, taken one by one, a result of 3 million rows (about 300 MB
 * as one PGresult) is read while the process grows by less than a tenth of
 * that. (Under ASan or valgrind the resident set is the tool's: fewer rows,
 * and no bound on it.) */
static void test_single_row_memory(void **state)
{
    (void)state;
    PGconn *conn = connect_db(NULL);
    int tool = ASAN || RUNNING_ON_VALGRIND;
    const long rows = tool ? 100000 : 3000000;
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT g, repeat('x', 40) FROM generate_series(1, %ld) g", rows);
    long before = peak_rss_kb();
    assert_int_equal(PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0), 1);
    assert_int_equal(PQsetSingleRowMode(conn), 1);
    take_rows(conn, 1, rows);
    PGresult *r = expect(conn, PGRES_TUPLES_OK, NULL);
    assert_int_equal(PQntuples(r), 0);
    PQclear(r);
    expect_end(conn);
    long grown = peak_rss_kb() - before;
    if (!tool && grown > 30 * 1024) fail_msg("single-row mode grew the process by %ld KiB", grown);
    PQfinish(conn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunked_rows),
        cmocka_unit_test(test_single_row_before_the_end),
        cmocka_unit_test(test_single_row_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
