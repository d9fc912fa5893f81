/*
 * COPY at its edges, against the real server:
 *   - a COPY statement sent as an ordinary request (PGW_REQ_SIMPLE, QUERY,
 *     an EXECUTE of a prepared COPY, a COPY among the statements of one
 *     simple query, in a pipeline on a connection, a CopyBoth from
 *     START_REPLICATION on a replication connection): that request fails
 *     with PGW_ECOPY (CopyFail naming PGW_REQ_COPY, or the data drained),
 *     the statements after it run as the protocol says, and the connection
 *     goes on;
 *   - BASE_BACKUP as a simple query: its archive, a COPY TO that ends
 *     without a CommandComplete, drained or given to on_copy_data;
 *   - COPY TO STDOUT of every small size, from no rows and one byte up,
 *     blocking and five pipelined on a connection: each completes with its
 *     data (the server sends a small COPY's output only when asked to
 *     flush);
 *   - a COPY FROM whose source is slow: its deadline fires long before the
 *     source would have finished, and the loop's other handles keep their
 *     turn meanwhile;
 *   - a COPY FROM that fails inside a transaction block: when the call
 *     returns, the session already reports the failed block.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include <cmocka.h>

static void fresh_table(pgw_client_t *c)
{
    pgt_client_exec_ok(c, "DROP TABLE IF EXISTS copy_edges; CREATE TABLE copy_edges (a int4)");
}

/* The connection goes on: a query after the refused COPY gets its answer,
 * outside any transaction block. */
static void assert_usable(pgw_client_t *c)
{
    assert_int_equal(pgt_client_int8(c, "SELECT 41::int8 + 1"), 42);
    assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), 'I');
}

/* A refused COPY FROM: the server's echo of our CopyFail, which names the
 * request kind to use. */
static void assert_copy_in_refused(int rc, pgw_result_t *res)
{
    assert_int_equal(rc, PGW_ECOPY);
    assert_non_null(res);
    const pgw_result_t *x = res;
    while (x && !pgw_result_error(x))
        x = pgw_result_next(x);
    assert_non_null(x);
    assert_string_equal(pgw_result_error(x)->sqlstate, "57014");
    assert_non_null(strstr(pgw_result_error(x)->message, "PGW_REQ_COPY"));
    assert_int_equal(pgw_result_copy_direction(x), PGW_COPY_IN);
}

/* ------------------------------------------------- COPY in other kinds */

static void test_copy_in_as_simple_query(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c);
    pgw_result_t *res = NULL;
    int rc = pgw_client_exec(c, "COPY copy_edges FROM STDIN", &res);
    assert_copy_in_refused(rc, res);
    pgw_result_free(res);
    assert_usable(c);
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM copy_edges"), 0);
    pgw_client_close(c);
}

static void test_copy_in_as_query(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c);
    pgw_result_t *res = NULL;
    int rc = pgw_client_query(c, "COPY copy_edges FROM STDIN", NULL, 0, &res);
    assert_copy_in_refused(rc, res);
    pgw_result_free(res);
    assert_usable(c);
    pgw_client_close(c);
}

static void test_copy_in_as_execute(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c);
    assert_int_equal(
        pgw_client_prepare(c, "copy_in_stmt", "COPY copy_edges FROM STDIN", NULL, 0, NULL), 0);
    for (int i = 0; i < 2; i++) {
        pgw_result_t *res = NULL;
        int rc = pgw_client_execute(c, "copy_in_stmt", NULL, 0, &res);
        assert_copy_in_refused(rc, res);
        pgw_result_free(res);
        assert_usable(c);
    }
    pgw_client_close(c);
}

static void assert_copy_out_drained(int rc, pgw_result_t *res, int64_t rows)
{
    assert_int_equal(rc, PGW_ECOPY);
    assert_non_null(res);
    assert_int_equal(pgw_result_copy_direction(res), PGW_COPY_OUT);
    assert_int_equal(pgw_result_rows_affected(res), rows);
    assert_null(pgw_result_error(res));
}

static void test_copy_out_as_other_kinds(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    static const char sql[] = "COPY (SELECT g FROM generate_series(1, 3) g) TO STDOUT";
    pgw_result_t *res = NULL;
    int rc = pgw_client_exec(c, sql, &res);
    assert_copy_out_drained(rc, res, 3);
    pgw_result_free(res);
    assert_usable(c);
    rc = pgw_client_query(c, sql, NULL, 0, &res);
    assert_copy_out_drained(rc, res, 3);
    pgw_result_free(res);
    assert_usable(c);
    assert_int_equal(pgw_client_prepare(c, "copy_out_stmt", sql, NULL, 0, NULL), 0);
    rc = pgw_client_execute(c, "copy_out_stmt", NULL, 0, &res);
    assert_copy_out_drained(rc, res, 3);
    pgw_result_free(res);
    assert_usable(c);
    pgw_client_close(c);
}

/* One simple query: the statement before the COPY ran; after a refused
 * COPY FROM the server skips the rest of the query string (its error ends
 * it), after a drained COPY TO it runs the rest. */
static void test_copy_among_simple_statements(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c);
    pgw_result_t *res = NULL;
    int rc = pgw_client_exec(
        c, "INSERT INTO copy_edges VALUES (1); COPY copy_edges FROM STDIN; SELECT 2", &res);
    assert_copy_in_refused(rc, res);
    assert_string_equal(pgw_result_command_tag(res), "INSERT 0 1");
    const pgw_result_t *copy = pgw_result_next(res);
    assert_non_null(copy);
    assert_non_null(pgw_result_error(copy));
    assert_null(pgw_result_next(copy)); /* SELECT 2 did not run */
    pgw_result_free(res);
    assert_usable(c);
    /* The whole query string was one implicit transaction: rolled back. */
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM copy_edges"), 0);

    rc = pgw_client_exec(c, "SELECT 1; COPY (SELECT 7) TO STDOUT; SELECT 2 AS two", &res);
    assert_int_equal(rc, PGW_ECOPY);
    const pgw_result_t *r1 = res, *r2 = pgw_result_next(r1), *r3 = pgw_result_next(r2);
    assert_non_null(r3);
    assert_int_equal(pgw_result_nrows(r1), 1);
    assert_int_equal(pgw_result_copy_direction(r2), PGW_COPY_OUT);
    assert_int_equal(pgw_result_rows_affected(r2), 1);
    assert_string_equal(pgw_result_fname(r3, 0), "two");
    assert_int_equal(pgw_result_nrows(r3), 1);
    pgw_result_free(res);
    assert_usable(c);
    pgw_client_close(c);
}

/* Pipelined on a connection: what follows a refused COPY runs in order. */
typedef struct done {
    int n, status[11];
    int64_t value[11];
} done_t;

static done_t g_done;

static void on_done(int status, pgw_result_t *res, void *ud)
{
    int i = (int)(intptr_t)ud;
    g_done.status[i] = status;
    if (status == 0 && pgw_result_ncols(res) == 1 && pgw_result_nrows(res) == 1)
        assert_int_equal(pgw_result_int8(res, 0, 0, &g_done.value[i]), 0);
    pgw_result_free(res);
    assert_int_equal(i, g_done.n); /* in order */
    g_done.n++;
}

static void test_copy_in_pipeline(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c);
    pgw_client_close(c);
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    memset(&g_done, 0, sizeof g_done);
    pgw_request_t reqs[] = {
        PGW_QUERY("SELECT 10::int8", NULL, 0, on_done, (void *)0),
        PGW_QUERY("COPY copy_edges FROM STDIN", NULL, 0, on_done, (void *)1),
        PGW_QUERY("SELECT 12::int8", NULL, 0, on_done, (void *)2),
        PGW_SIMPLE("SELECT 1; COPY copy_edges FROM STDIN", on_done, (void *)3),
        PGW_SIMPLE("SELECT 14::int8", on_done, (void *)4),
        PGW_QUERY("SELECT 15::int8", NULL, 0, on_done, (void *)5),
        /* A Parse's COPY after white space or a comment is held too. */
        PGW_QUERY("\n\tCoPy copy_edges FROM STDIN", NULL, 0, on_done, (void *)6),
        PGW_QUERY("-- load\n/* a /* nested */ one */ COPY copy_edges FROM STDIN", NULL, 0, on_done,
                  (void *)7),
        PGW_QUERY("SELECT 18::int8", NULL, 0, on_done, (void *)8),
        /* and a simple query's, after a ';' in a literal and a comment */
        PGW_SIMPLE("SELECT ';'; /* then */ COPY copy_edges FROM STDIN", on_done, (void *)9),
        PGW_QUERY("SELECT 20::int8", NULL, 0, on_done, (void *)10),
    };
    for (size_t i = 0; i < sizeof reqs / sizeof *reqs; i++)
        assert_int_equal(pgw_conn_submit(f.conn, &reqs[i]), 0);
    pgt_conn_run(&f, &g_done.n, 11);
    int want[11] = {0, PGW_ECOPY, 0, PGW_ECOPY, 0, 0, PGW_ECOPY, PGW_ECOPY, 0, PGW_ECOPY, 0};
    for (int i = 0; i < 11; i++)
        assert_int_equal(g_done.status[i], want[i]);
    assert_int_equal(g_done.value[0], 10);
    assert_int_equal(g_done.value[2], 12);
    assert_int_equal(g_done.value[4], 14);
    assert_int_equal(g_done.value[5], 15);
    assert_int_equal(g_done.value[8], 18);
    assert_int_equal(g_done.value[10], 20);
    pgt_conn_close(&f);
}

/* CopyBoth: START_REPLICATION on a replication connection. The session ends
 * the stream with CopyDone; the connection goes on. */
static void test_copy_both_refused(void **state)
{
    (void)state;
    char ci[512];
    pgt_conninfo(ci, sizeof ci, "replication=true");
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect(&c, ci, NULL), 0);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_exec(c, "IDENTIFY_SYSTEM", &res), 0);
    pgw_str_t pos;
    assert_int_equal(pgw_result_text(res, 0, 2, &pos), 0); /* xlogpos */
    char sql[96];
    snprintf(sql, sizeof sql, "START_REPLICATION %.*s", (int)pos.len, pos.p);
    pgw_result_free(res);
    int rc = pgw_client_exec(c, sql, &res);
    assert_int_equal(rc, PGW_ECOPY);
    assert_int_equal(pgw_result_copy_direction(res), PGW_COPY_BOTH);
    pgw_result_free(res);
    assert_int_equal(pgw_client_exec(c, "IDENTIFY_SYSTEM", &res), 0);
    assert_int_equal(pgw_result_nrows(res), 1);
    pgw_result_free(res);
    pgw_client_close(c);
}

typedef struct sink {
    size_t bytes;
    int calls;
} sink_t;

static int sink_data(const uint8_t *data, size_t len, void *ud)
{
    (void)data;
    sink_t *k = ud;
    k->bytes += len;
    k->calls++;
    return 0;
}

/* BASE_BACKUP's results: the start position, the tablespaces, the archive
 * as a COPY TO that ends without a CommandComplete of its own, the end
 * position, then the command's CommandComplete. */
static void assert_base_backup_chain(const pgw_result_t *res)
{
    const pgw_result_t *start = res, *spaces = pgw_result_next(start);
    const pgw_result_t *copy = pgw_result_next(spaces), *end = pgw_result_next(copy);
    const pgw_result_t *done = pgw_result_next(end);
    assert_non_null(done);
    assert_null(pgw_result_next(done));
    assert_string_equal(pgw_result_fname(start, 0), "recptr");
    assert_string_equal(pgw_result_fname(spaces, 0), "spcoid");
    assert_int_equal(pgw_result_copy_direction(copy), PGW_COPY_OUT);
    assert_true(pgw_result_copy_bytes(copy) > 0);
    assert_string_equal(pgw_result_command_tag(copy), "");
    assert_string_equal(pgw_result_fname(end, 0), "recptr");
    assert_int_equal(pgw_result_nrows(end), 1);
    assert_string_equal(pgw_result_command_tag(done), "BASE_BACKUP");
}

/* BASE_BACKUP as a simple query on a replication connection: its archive
 * is a COPY TO no statement of the query foresaw (none starts with COPY).
 * Without COPY callbacks the data is drained (PGW_ECOPY); with them it
 * reaches on_copy_data; the connection goes on either way. */
static void test_base_backup_as_simple_query(void **state)
{
    (void)state;
    char ci[512];
    pgt_conninfo(ci, sizeof ci, "replication=true");
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect(&c, ci, NULL), 0);
    static const char sql[] = "BASE_BACKUP (LABEL 'copy_edges', CHECKPOINT 'fast', WAIT 0, "
                              "MANIFEST 'no', TARGET 'client')";
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_exec(c, sql, &res), PGW_ECOPY);
    assert_base_backup_chain(res);
    pgw_result_free(res);

    sink_t k = {0, 0};
    pgw_request_t r = PGW_SIMPLE(sql, NULL, &k);
    r.on_copy_data = sink_data;
    r.timeout_ms = 60000; /* a hang fails the test instead of the suite */
    assert_int_equal(pgw_client_run(c, &r, &res), 0);
    assert_base_backup_chain(res);
    assert_int_equal(k.bytes, pgw_result_copy_bytes(pgw_result_next(pgw_result_next(res))));
    assert_true(k.calls > 1);
    pgw_result_free(res);
    assert_int_equal(pgw_client_exec(c, "IDENTIFY_SYSTEM", &res), 0);
    assert_int_equal(pgw_result_nrows(res), 1);
    pgw_result_free(res);
    pgw_client_close(c);
}

/* ------------------------------------------------- small COPY TO sizes */

/* COPY of a text column of width w in n rows: n * (w + 1) bytes. */
static void copy_out_sized(pgw_client_t *c, int n, int w)
{
    char sql[160];
    snprintf(sql, sizeof sql, "COPY (SELECT repeat('x', %d) FROM generate_series(1, %d)) TO STDOUT",
             w, n);
    sink_t k = {0, 0};
    pgw_request_t r = PGW_COPY_OUT_REQ(sql, sink_data, NULL, &k);
    r.timeout_ms = 20000; /* a hang fails the test instead of the suite */
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_run(c, &r, &res), 0);
    assert_int_equal(pgw_result_rows_affected(res), n);
    assert_int_equal(k.bytes, (size_t)n * (size_t)(w + 1));
    assert_int_equal(k.calls, n);
    pgw_result_free(res);
}

static void test_small_copy_out(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    sink_t k = {0, 0};
    pgw_result_t *res = NULL;
    pgw_request_t r =
        PGW_COPY_OUT_REQ("COPY (SELECT 1 WHERE false) TO STDOUT", sink_data, NULL, &k);
    r.timeout_ms = 20000;
    assert_int_equal(pgw_client_run(c, &r, &res), 0); /* no rows */
    assert_int_equal(pgw_result_rows_affected(res), 0);
    assert_int_equal(k.bytes, 0);
    pgw_result_free(res);
    copy_out_sized(c, 1, 0); /* one byte: "\n" */
    static const int widths[] = {1, 7, 100, 1000, 4000, 8190, 8191, 8192, 8193, 20000};
    for (size_t i = 0; i < sizeof widths / sizeof *widths; i++)
        copy_out_sized(c, 1, widths[i]);
    for (int n = 2; n <= 256; n *= 2)
        copy_out_sized(c, n, 3);
    assert_usable(c);
    pgw_client_close(c);
}

/* A request's one ud goes to its data and result callbacks alike: the
 * pipelined COPYs count into g_sinks by index. */
static sink_t g_sinks[5];

static int sink_nth(const uint8_t *data, size_t len, void *ud)
{
    return sink_data(data, len, &g_sinks[(intptr_t)ud]);
}

static void test_small_copy_out_pipelined(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    memset(&g_done, 0, sizeof g_done);
    memset(g_sinks, 0, sizeof g_sinks);
    for (int i = 0; i < 5; i++) {
        char sql[96];
        snprintf(sql, sizeof sql, "COPY (SELECT %d) TO STDOUT", 10 * i);
        pgw_request_t r = PGW_COPY_OUT_REQ(sql, sink_nth, on_done, (void *)(intptr_t)i);
        assert_int_equal(pgw_conn_submit(f.conn, &r), 0);
    }
    pgt_conn_run(&f, &g_done.n, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(g_done.status[i], 0);
        assert_int_equal(g_sinks[i].calls, 1);
        assert_int_equal(g_sinks[i].bytes, i ? 3u : 2u); /* "0\n", "10\n", ... */
    }
    pgt_conn_close(&f);
}

/* ---------------------------------------------- a slow COPY FROM source */

typedef struct slow {
    int calls;
    int ticks_at_end;
} slow_t;

static int g_ticks;

static void on_tick(uv_timer_t *t)
{
    (void)t;
    g_ticks++;
}

/* One row per call after waiting 5 ms: 100,000 rows would take over 8
 * minutes. */
static int slow_source(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room;
    slow_t *x = ud;
    x->calls++;
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
    char row[16];
    int n = snprintf(row, sizeof row, "%d\n", x->calls);
    pgw_buf_append(out, row, (size_t)n);
    return x->calls < 100000 ? PGW_COPY_MORE : PGW_COPY_END;
}

typedef struct slow_done {
    int done, status;
} slow_done_t;

static slow_done_t g_slow;

static void on_slow_done(int status, pgw_result_t *res, void *ud)
{
    (void)ud;
    g_slow.done = 1;
    g_slow.status = status;
    pgw_result_free(res);
}

static void test_slow_source_deadline(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c);
    pgw_client_close(c);
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    uv_timer_t timer;
    uv_timer_init(&f.loop, &timer);
    g_ticks = 0;
    uv_timer_start(&timer, on_tick, 5, 5);
    slow_t x = {0, 0};
    memset(&g_slow, 0, sizeof g_slow);
    pgw_request_t r = PGW_COPY_IN_REQ("COPY copy_edges FROM STDIN", slow_source, on_slow_done, &x);
    r.timeout_ms = 300;
    uint64_t t0 = uv_hrtime();
    assert_int_equal(pgw_conn_submit(f.conn, &r), 0);
    pgt_conn_run(&f, &g_slow.done, 1);
    uint64_t ms = (uv_hrtime() - t0) / 1000000u;
    uv_timer_stop(&timer);
    uv_close((uv_handle_t *)&timer, NULL);
    print_message("slow source: deadline after %llu ms, %d source calls, %d timer ticks\n",
                  (unsigned long long)ms, x.calls, g_ticks);
    assert_int_equal(g_slow.status, PGW_ETIMEDOUT);
    /* Long before the source would have ended (100,000 calls of 5 ms). */
    assert_true(x.calls < 20000);
    /* The timer had its turn between the source's calls, not once per
     * pump of 256 KiB. */
    assert_true(g_ticks > 0);
    assert_true(x.calls <= 8 * g_ticks + 8);
    pgt_conn_close(&f);
    c = pgt_client_open();
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM copy_edges"), 0);
    pgw_client_close(c);
}

/* -------------------------------------- a failed COPY in a transaction */

static int bad_rows(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room;
    (void)ud;
    pgw_buf_append(out, "1\nnot a number\n", 16);
    return PGW_COPY_END;
}

static void test_failed_copy_in_block_status(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    fresh_table(c);
    for (int i = 0; i < 50; i++) {
        pgt_client_exec_ok(c, "BEGIN");
        pgw_result_t *res = NULL;
        assert_int_equal(pgw_client_copy_in(c, "COPY copy_edges FROM STDIN", bad_rows, NULL, &res),
                         PGW_ESERVER);
        assert_string_equal(pgw_result_error(res)->sqlstate, "22P02");
        pgw_result_free(res);
        /* Already known when the call returns: the block has failed. */
        assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), 'E');
        pgt_client_exec_ok(c, "ROLLBACK");
        assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), 'I');
    }
    /* Any failing request: the same. */
    pgt_client_exec_ok(c, "BEGIN");
    assert_int_equal(pgw_client_query(c, "SELECT 1/0", NULL, 0, NULL), PGW_ESERVER);
    assert_int_equal(pgw_session_txn_status(pgw_client_session(c)), 'E');
    pgt_client_exec_ok(c, "ROLLBACK");
    pgw_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_in_as_simple_query),
        cmocka_unit_test(test_copy_in_as_query),
        cmocka_unit_test(test_copy_in_as_execute),
        cmocka_unit_test(test_copy_out_as_other_kinds),
        cmocka_unit_test(test_copy_among_simple_statements),
        cmocka_unit_test(test_copy_in_pipeline),
        cmocka_unit_test(test_copy_both_refused),
        cmocka_unit_test(test_base_backup_as_simple_query),
        cmocka_unit_test(test_small_copy_out),
        cmocka_unit_test(test_small_copy_out_pipelined),
        cmocka_unit_test(test_slow_source_deadline),
        cmocka_unit_test(test_failed_copy_in_block_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
