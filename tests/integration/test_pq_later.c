/*
 * libpgwire-pq's additions of libpq 16, 17 and 18 (libpq-fe.h's last
 * section), against the real server. Debian's libpq 15 has none of them,
 * so they cannot be compared with it as tests/pq/diff does: each test
 * asserts what libpq's documentation of that version says the call does.
 *
 *   - PQclosePrepared / PQclosePortal and their PQsend* forms (16);
 *   - PQsendPipelineSync (17): a Sync queued without a flush;
 *   - PQsetChunkedRowsMode (17): rows in PGRES_TUPLES_CHUNK results, a
 *     chunk an error cuts short dropped (also in pipeline mode); and
 *     single-row mode's rows handed out while the statement still runs, in
 *     bounded memory, alone and in pipeline mode;
 *   - PQchangePassword (17): the verifier made on the client;
 *   - PQsocketPoll, PQgetCurrentTimeUSec (17), PQfullProtocolVersion (18),
 *     PQconnectionUsedGSSAPI (16);
 *   - the cancel connection (17): PQcancelCreate ... PQcancelFinish.
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

static void expect_state(PGresult *r, ExecStatusType st, const char *state)
{
    assert_int_equal(PQresultStatus(r), st);
    if (state) assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), state);
    PQclear(r);
}

/* ------------------------------------------------------------- libpq 16 */

static void test_close_prepared_and_portal(void **state)
{
    (void)state;
    PGconn *conn = connect_db(NULL);
    const char *one[] = {"41"};

    expect_state(PQprepare(conn, "later_s1", "SELECT $1::int + 1", 1, NULL), PGRES_COMMAND_OK,
                 NULL);
    PGresult *r = PQclosePrepared(conn, "later_s1");
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    assert_string_equal(PQcmdStatus(r), "");
    PQclear(r);
    expect_state(PQexecPrepared(conn, "later_s1", 1, one, NULL, NULL, 0), PGRES_FATAL_ERROR,
                 "26000");
    /* the server closes a name it does not have without complaint */
    expect_state(PQclosePrepared(conn, "later_none"), PGRES_COMMAND_OK, NULL);

    /* the same without waiting */
    expect_state(PQprepare(conn, "later_s2", "SELECT 2", 0, NULL), PGRES_COMMAND_OK, NULL);
    assert_int_equal(PQsendClosePrepared(conn, "later_s2"), 1);
    PQclear(expect(conn, PGRES_COMMAND_OK, NULL));
    expect_end(conn);
    expect_state(PQexecPrepared(conn, "later_s2", 0, NULL, NULL, NULL, 0), PGRES_FATAL_ERROR,
                 "26000");

    /* a cursor is a portal */
    exec_ok(conn, "BEGIN");
    exec_ok(conn, "DECLARE later_c CURSOR FOR SELECT 1");
    expect_state(PQclosePortal(conn, "later_c"), PGRES_COMMAND_OK, NULL);
    expect_state(PQexec(conn, "FETCH 1 FROM later_c"), PGRES_FATAL_ERROR, "34000");
    exec_ok(conn, "ROLLBACK");
    exec_ok(conn, "BEGIN");
    exec_ok(conn, "DECLARE later_d CURSOR FOR SELECT 1");
    assert_int_equal(PQsendClosePortal(conn, "later_d"), 1);
    PQclear(expect(conn, PGRES_COMMAND_OK, NULL));
    expect_end(conn);
    expect_state(PQexec(conn, "FETCH 1 FROM later_d"), PGRES_FATAL_ERROR, "34000");
    exec_ok(conn, "ROLLBACK");

    /* in a pipeline, among the others */
    assert_int_equal(PQenterPipelineMode(conn), 1);
    assert_int_equal(PQsendPrepare(conn, "later_s3", "SELECT 3", 0, NULL), 1);
    assert_int_equal(PQsendClosePrepared(conn, "later_s3"), 1);
    assert_int_equal(PQsendQueryPrepared(conn, "later_s3", 0, NULL, NULL, NULL, 0), 1);
    assert_int_equal(PQpipelineSync(conn), 1);
    PQclear(expect(conn, PGRES_COMMAND_OK, NULL));
    expect_end(conn);
    PQclear(expect(conn, PGRES_COMMAND_OK, NULL));
    expect_end(conn);
    PQclear(expect(conn, PGRES_FATAL_ERROR, "26000"));
    expect_end(conn);
    PQclear(expect(conn, PGRES_PIPELINE_SYNC, NULL));
    assert_int_equal(PQexitPipelineMode(conn), 1);

    /* no connection */
    assert_null(PQclosePrepared(NULL, "x"));
    assert_int_equal(PQsendClosePortal(NULL, "x"), 0);
    assert_int_equal(PQconnectionUsedGSSAPI(conn), 0);
    assert_int_equal(PQconnectionUsedGSSAPI(NULL), 0);
    PQfinish(conn);
}

/* ------------------------------------------------------------- libpq 17 */

static void test_send_pipeline_sync(void **state)
{
    (void)state;
    PGconn *conn = connect_db(NULL);
    assert_int_equal(PQsendPipelineSync(conn), 0);
    assert_non_null(strstr(PQerrorMessage(conn), "not in pipeline mode"));

    assert_int_equal(PQenterPipelineMode(conn), 1);
    assert_int_equal(PQsendQueryParams(conn, "SELECT 7", 0, NULL, NULL, NULL, NULL, 0), 1);
    assert_int_equal(PQsendPipelineSync(conn), 1);
    assert_int_equal(PQsendQueryParams(conn, "SELECT 8", 0, NULL, NULL, NULL, NULL, 0), 1);
    assert_int_equal(PQsendPipelineSync(conn), 1);
    /* queued, not sent: PQflush sends them (0: all of it) */
    assert_int_equal(PQflush(conn), 0);
    PGresult *r = expect(conn, PGRES_TUPLES_OK, NULL);
    assert_string_equal(PQgetvalue(r, 0, 0), "7");
    PQclear(r);
    expect_end(conn);
    PQclear(expect(conn, PGRES_PIPELINE_SYNC, NULL));
    r = expect(conn, PGRES_TUPLES_OK, NULL);
    assert_string_equal(PQgetvalue(r, 0, 0), "8");
    PQclear(r);
    expect_end(conn);
    PQclear(expect(conn, PGRES_PIPELINE_SYNC, NULL));
    assert_int_equal(PQexitPipelineMode(conn), 1);
    PQfinish(conn);
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

/* Sends sql as a query with parameters (how 0), a simple query (1) or a
 * query with parameters in pipeline mode, then its sync (2). */
static void send_how(PGconn *conn, int how, const char *sql)
{
    int sent = how == 1 ? PQsendQuery(conn, sql)
                        : PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0);
    assert_int_equal(sent, 1);
    if (how == 2) assert_int_equal(PQpipelineSync(conn), 1);
}

/* The NULL after a query's results (and in pipeline mode its sync's). */
static void end_how(PGconn *conn, int how)
{
    expect_end(conn);
    if (how == 2) PQclear(expect(conn, PGRES_PIPELINE_SYNC, NULL));
}

static void test_chunked_rows(void **state)
{
    (void)state;
    PGconn *conn = connect_db(NULL);
    assert_string_equal(PQresStatus(PGRES_TUPLES_CHUNK), "PGRES_TUPLES_CHUNK");
    assert_int_equal(PQsetChunkedRowsMode(conn, 3), 0); /* nothing was sent */

    const char *sql = "SELECT g FROM generate_series(1, 7) g";
    for (int how = 0; how < 3; how++) {
        if (how == 2) assert_int_equal(PQenterPipelineMode(conn), 1);
        send_how(conn, how, sql);
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
        end_how(conn, how);

        /* An error after four rows: the full chunk went out, the chunk it
         * cut short is dropped. */
        send_how(conn, how, "SELECT 10 / (5 - g) AS g FROM generate_series(1, 7) g");
        assert_int_equal(PQsetChunkedRowsMode(conn, 3), 1);
        r = expect(conn, PGRES_TUPLES_CHUNK, NULL);
        assert_int_equal(PQntuples(r), 3);
        assert_string_equal(PQgetvalue(r, 2, 0), "5");
        PQclear(r);
        PQclear(expect(conn, PGRES_FATAL_ERROR, "22012"));
        end_how(conn, how);

        /* no rows: only the row-less result */
        send_how(conn, how, "SELECT g FROM generate_series(1, 0) g");
        assert_int_equal(PQsetChunkedRowsMode(conn, 2), 1);
        r = expect(conn, PGRES_TUPLES_OK, NULL);
        assert_int_equal(PQntuples(r), 0);
        assert_string_equal(PQcmdStatus(r), "SELECT 0");
        PQclear(r);
        end_how(conn, how);
    }
    assert_int_equal(PQexitPipelineMode(conn), 1);
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

/* Takes the `rows` rows of a query that stops at row rows - 1 on
 * advisory lock `lock` held by holder, letting the lock go half way, then
 * the query's end. */
static void take_rows_around(PGconn *conn, PGconn *holder, int lock, long rows)
{
    take_rows(conn, 1, rows / 2);
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT pg_advisory_unlock(%d)", lock);
    exec_ok(holder, sql);
    take_rows(conn, rows / 2 + 1, rows);
    PGresult *r = expect(conn, PGRES_TUPLES_OK, NULL);
    snprintf(sql, sizeof sql, "SELECT %ld", rows);
    assert_string_equal(PQcmdStatus(r), sql);
    PQclear(r);
    expect_end(conn);
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
    take_rows_around(conn, holder, 727301, 20001);
    exec_ok(conn, "SELECT pg_advisory_unlock_all()");
    PQfinish(conn);
    PQfinish(holder);
}

/* Returns once the backend pid waits on a lock. */
static void await_lock_wait(PGconn *holder, int pid)
{
    char sql[128];
    snprintf(sql, sizeof sql,
             "SELECT 1 FROM pg_stat_activity WHERE pid = %d AND wait_event_type = 'Lock'", pid);
    const struct timespec ms = {0, 1000000};
    for (int waiting = 0; !waiting; nanosleep(&ms, NULL)) {
        PGresult *r = PQexec(holder, sql);
        waiting = PQntuples(r) == 1;
        PQclear(r);
    }
}

/* The same in pipeline mode, for the query at the head of the queue: set
 * while it waits in the pipeline (before the sync sends it), and set once
 * the results of the query before it were taken (its request went out
 * with the sync, and its first row waits on a second lock until then; the
 * query before asks the server to flush, which holds its answer until a
 * Sync or a full buffer otherwise), and set once the query's rows up to
 * the lock came with the result before it (the layer reads ahead, where
 * libpq parses only what the caller asks for). */
static void test_single_row_pipeline_before_the_end(void **state)
{
    (void)state;
    PGconn *holder = connect_db(NULL);
    exec_ok(holder, "SELECT pg_advisory_lock(727302), pg_advisory_lock(727303),"
                    " pg_advisory_lock(727304), pg_advisory_lock(727305)");
    PGconn *conn = connect_db(NULL);
    exec_ok(conn, "SET statement_timeout = '30s'");
    const char *held = "SELECT g, CASE WHEN g = 20000 THEN pg_advisory_lock(727302)::text END"
                       " FROM generate_series(1, 20001) g";
    const char *late = "SELECT g, CASE WHEN g = 1 THEN pg_advisory_lock(727303)::text"
                       " WHEN g = 20000 THEN pg_advisory_lock(727304)::text END"
                       " FROM generate_series(1, 20001) g";
    /* (its rows up to the lock, 30 kB, fit in the socket's buffers) */
    const char *early = "SELECT g, CASE WHEN g = 2000 THEN pg_advisory_lock(727305)::text END"
                        " FROM generate_series(1, 2001) g";
    assert_int_equal(PQenterPipelineMode(conn), 1);

    assert_int_equal(PQsendQueryParams(conn, held, 0, NULL, NULL, NULL, NULL, 0), 1);
    assert_int_equal(PQsetSingleRowMode(conn), 1);
    assert_int_equal(PQpipelineSync(conn), 1);
    take_rows_around(conn, holder, 727302, 20001);
    PQclear(expect(conn, PGRES_PIPELINE_SYNC, NULL));

    assert_int_equal(PQsendQueryParams(conn, "SELECT 1", 0, NULL, NULL, NULL, NULL, 0), 1);
    assert_int_equal(PQsendFlushRequest(conn), 1); /* its answer comes before the sync's */
    assert_int_equal(PQsendQueryParams(conn, late, 0, NULL, NULL, NULL, NULL, 0), 1);
    assert_int_equal(PQpipelineSync(conn), 1);
    PQclear(expect(conn, PGRES_TUPLES_OK, NULL));
    expect_end(conn);
    assert_int_equal(PQsetSingleRowMode(conn), 1);
    exec_ok(holder, "SELECT pg_advisory_unlock(727303)");
    take_rows_around(conn, holder, 727304, 20001);
    PQclear(expect(conn, PGRES_PIPELINE_SYNC, NULL));

    /* set once the query's first rows came with the result before it */
    assert_int_equal(PQsendQueryParams(conn, "SELECT 1", 0, NULL, NULL, NULL, NULL, 0), 1);
    assert_int_equal(PQsendFlushRequest(conn), 1);
    assert_int_equal(PQsendQueryParams(conn, early, 0, NULL, NULL, NULL, NULL, 0), 1);
    assert_int_equal(PQpipelineSync(conn), 1);
    await_lock_wait(holder, PQbackendPID(conn));
    PQclear(expect(conn, PGRES_TUPLES_OK, NULL));
    expect_end(conn);
    assert_int_equal(PQsetSingleRowMode(conn), 1);
    take_rows_around(conn, holder, 727305, 2001);
    PQclear(expect(conn, PGRES_PIPELINE_SYNC, NULL));
    assert_int_equal(PQexitPipelineMode(conn), 1);
    exec_ok(conn, "SELECT pg_advisory_unlock_all()");
    PQfinish(conn);
    PQfinish(holder);
}

/* ... so that, taken one by one, a result of 3 million rows (about 300 MB
 * as one PGresult) is read while the process grows by less than a tenth of
 * that. (Under ASan or valgrind the resident set is the tool's: fewer rows,
 * and no bound on it.) */
static void single_row_memory(int pipeline)
{
    PGconn *conn = connect_db(NULL);
    int tool = ASAN || RUNNING_ON_VALGRIND;
    const long rows = tool ? 100000 : 3000000;
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT g, repeat('x', 40) FROM generate_series(1, %ld) g", rows);
    long before = peak_rss_kb();
    if (pipeline) assert_int_equal(PQenterPipelineMode(conn), 1);
    assert_int_equal(PQsendQueryParams(conn, sql, 0, NULL, NULL, NULL, NULL, 0), 1);
    assert_int_equal(PQsetSingleRowMode(conn), 1);
    if (pipeline) assert_int_equal(PQpipelineSync(conn), 1);
    take_rows(conn, 1, rows);
    PGresult *r = expect(conn, PGRES_TUPLES_OK, NULL);
    assert_int_equal(PQntuples(r), 0);
    PQclear(r);
    expect_end(conn);
    if (pipeline) PQclear(expect(conn, PGRES_PIPELINE_SYNC, NULL));
    long grown = peak_rss_kb() - before;
    if (!tool && grown > 30 * 1024)
        fail_msg("single-row mode%s grew the process by %ld KiB", pipeline ? " in a pipeline" : "",
                 grown);
    PQfinish(conn);
}

static void test_single_row_memory(void **state)
{
    (void)state;
    single_row_memory(0);
}

static void test_single_row_pipeline_memory(void **state)
{
    (void)state;
    single_row_memory(1);
}

static void test_change_password(void **state)
{
    (void)state;
    PGconn *conn = connect_db(NULL);
    /* a name that needs quoting, and a password that would */
    const char *role = "pgw later \"pw\"";
    const char *pw = "it's n3w";
    exec_ok(conn, "DROP ROLE IF EXISTS \"pgw later \"\"pw\"\"\"");
    exec_ok(conn, "CREATE ROLE \"pgw later \"\"pw\"\"\"");

    /* md5: the verifier is exactly md5(password || user) */
    exec_ok(conn, "SET password_encryption = 'md5'");
    PGresult *r = PQchangePassword(conn, role, pw);
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    assert_string_equal(PQcmdStatus(r), "ALTER ROLE");
    PQclear(r);
    const char *params[] = {role, pw};
    r = PQexecParams(conn,
                     "SELECT rolpassword = 'md5' || md5($2 || $1) FROM pg_authid"
                     " WHERE rolname = $1",
                     2, NULL, params, NULL, NULL, 0);
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    assert_int_equal(PQntuples(r), 1);
    assert_string_equal(PQgetvalue(r, 0, 0), "t");
    PQclear(r);

    /* scram-sha-256: a SCRAM verifier, never the password */
    exec_ok(conn, "SET password_encryption = 'scram-sha-256'");
    r = PQchangePassword(conn, role, pw);
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    r = PQexecParams(conn, "SELECT rolpassword FROM pg_authid WHERE rolname = $1", 1, NULL, params,
                     NULL, NULL, 0);
    assert_int_equal(PQntuples(r), 1);
    assert_memory_equal(PQgetvalue(r, 0, 0), "SCRAM-SHA-256$4096:", 19);
    assert_null(strstr(PQgetvalue(r, 0, 0), pw));
    PQclear(r);

    /* a role that does not exist: the ALTER's error */
    r = PQchangePassword(conn, "pgw later none", pw);
    assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42704");
    PQclear(r);
    /* failing before sending anything: NULL and why */
    exec_ok(conn, "SET password_encryption = 'md5'");
    assert_null(PQchangePassword(conn, NULL, pw));
    assert_non_null(strstr(PQerrorMessage(conn), "null pointer"));
    assert_null(PQchangePassword(NULL, role, pw));
    exec_ok(conn, "DROP ROLE \"pgw later \"\"pw\"\"\"");
    PQfinish(conn);
}

static void test_socket_poll_and_versions(void **state)
{
    (void)state;
    PGconn *conn = connect_db(NULL);
    int sock = PQsocket(conn);
    /* idle: writable at once, nothing to read */
    assert_int_equal(PQsocketPoll(sock, 0, 1, 0), 1);
    assert_int_equal(PQsocketPoll(sock, 1, 0, 0), 0);
    assert_int_equal(PQsocketPoll(sock, 0, 0, -1), 0);
    /* a deadline 50 ms ahead passes with nothing to read */
    pg_usec_time_t start = PQgetCurrentTimeUSec();
    assert_int_equal(PQsocketPoll(sock, 1, 0, start + 50000), 0);
    assert_true(PQgetCurrentTimeUSec() >= start + 49000);
    /* the answer makes it readable */
    assert_int_equal(PQsendQuery(conn, "SELECT 1"), 1);
    assert_int_equal(PQsocketPoll(sock, 1, 0, -1), 1);
    PQclear(expect(conn, PGRES_TUPLES_OK, NULL));
    expect_end(conn);
    errno = 0;
    assert_int_equal(PQsocketPoll(-1, 1, 0, 0), -1);
    assert_int_equal(errno, EBADF);

    /* microseconds since the epoch */
    pg_usec_time_t now = PQgetCurrentTimeUSec();
    time_t t = time(NULL);
    assert_true(now / 1000000 >= (pg_usec_time_t)t - 2 && now / 1000000 <= (pg_usec_time_t)t + 2);

    /* the server speaks 3.0 */
    assert_int_equal(PQfullProtocolVersion(conn), 30000);
    assert_int_equal(PQprotocolVersion(conn), 3);
    assert_int_equal(PQfullProtocolVersion(NULL), 0);
    PQfinish(conn);
}

/* A cancel of the sleep conn runs, through cc; the sleep fails with 57014. */
static void cancel_sleep(PGconn *conn, PGcancelConn *cc, int blocking)
{
    assert_int_equal(PQsendQuery(conn, "SELECT pg_sleep(30)"), 1);
    /* the sleep has begun once the server says the backend is active */
    PGconn *watch = connect_db(NULL);
    char q[128];
    snprintf(q, sizeof q,
             "SELECT 1 FROM pg_stat_activity WHERE pid = %d AND state = 'active'"
             " AND query LIKE 'SELECT pg_sleep%%'",
             PQbackendPID(conn));
    for (;;) {
        PGresult *r = PQexec(watch, q);
        int active = PQntuples(r) == 1;
        PQclear(r);
        if (active) break;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    PQfinish(watch);
    if (blocking) {
        assert_int_equal(PQcancelBlocking(cc), 1);
    } else {
        assert_int_equal(PQcancelStart(cc), 1);
        PostgresPollingStatusType p;
        while ((p = PQcancelPoll(cc)) != PGRES_POLLING_OK)
            assert_int_not_equal(p, PGRES_POLLING_FAILED);
    }
    assert_int_equal(PQcancelStatus(cc), CONNECTION_OK);
    assert_string_equal(PQcancelErrorMessage(cc), "");
    PQclear(expect(conn, PGRES_FATAL_ERROR, "57014"));
    expect_end(conn);
}

static void test_cancel_connection(void **state)
{
    (void)state;
    for (int tls = 0; tls < 2; tls++) {
        char ci[1024];
        PGconn *conn = tls ? PQconnectdb(pgt_conninfo_tcp(ci, sizeof ci, pgt_env_required("PGUSER"),
                                                          NULL, "sslmode=require"))
                           : connect_db(NULL);
        assert_int_equal(PQstatus(conn), CONNECTION_OK);
        assert_int_equal(PQsslInUse(conn), tls);
        PGcancelConn *cc = PQcancelCreate(conn);
        assert_non_null(cc);
        assert_int_equal(PQcancelStatus(cc), CONNECTION_ALLOCATED);
        cancel_sleep(conn, cc, 1);
        /* once used, it must be reset before it sends again */
        assert_int_equal(PQcancelStart(cc), 0);
        assert_int_equal(PQcancelStatus(cc), CONNECTION_BAD);
        assert_string_not_equal(PQcancelErrorMessage(cc), "");
        PQcancelReset(cc);
        assert_int_equal(PQcancelStatus(cc), CONNECTION_ALLOCATED);
        cancel_sleep(conn, cc, 0);
        PQcancelFinish(cc);
        /* the connection goes on */
        PGresult *r = PQexec(conn, "SELECT 1");
        assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
        PQclear(r);
        PQfinish(conn);
    }

    /* nothing to cancel through */
    PGcancelConn *cc = PQcancelCreate(NULL);
    assert_non_null(cc);
    assert_int_equal(PQcancelStatus(cc), CONNECTION_BAD);
    assert_string_not_equal(PQcancelErrorMessage(cc), "");
    assert_int_equal(PQcancelBlocking(cc), 0);
    PQcancelFinish(cc);
    PQcancelFinish(NULL);
    assert_int_equal(PQcancelStatus(NULL), CONNECTION_BAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_close_prepared_and_portal),
        cmocka_unit_test(test_send_pipeline_sync),
        cmocka_unit_test(test_chunked_rows),
        cmocka_unit_test(test_single_row_before_the_end),
        cmocka_unit_test(test_single_row_memory),
        cmocka_unit_test(test_single_row_pipeline_before_the_end),
        cmocka_unit_test(test_single_row_pipeline_memory),
        cmocka_unit_test(test_change_password),
        cmocka_unit_test(test_socket_poll_and_versions),
        cmocka_unit_test(test_cancel_connection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
