/*
 * Streamed batches (PGW_BATCH_STREAM, session.h "Streamed batches") and
 * executions of named statements whose description is taken when their
 * answer begins, against the real server:
 *   - a streamed batch is written while pgw_conn_submit_batch encodes it
 *     (bytes are out before the call returns, with a write threshold far
 *     above the batch's size), and every answer is its own;
 *   - refused part way, a streamed batch runs exactly the requests of the
 *     parts already written (pgw_session_batch_accepted of them: rows
 *     inserted, results delivered) and gives the rest the refusal's code,
 *     the refused one named; an atomic batch refused the same way runs
 *     nothing; the connection goes on either way;
 *   - an execution queued before its statement is closed and prepared
 *     again with another query keeps the description it was bound with.
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

#include <cmocka.h>

#define N       20000 /* executions: about 900 KB of Bind/Execute */
#define REFUSED 15000 /* the request of the refusal tests that cannot be encoded */

typedef struct batch {
    pgw_request_t reqs[N];
    pgw_param_t params[N];
    pgw_result_t *res[N];
    int st[N];
} batch_t;

static batch_t *batch_new(const char *stmt)
{
    batch_t *b = calloc(1, sizeof *b);
    assert_non_null(b);
    for (int i = 0; i < N; i++) {
        b->params[i] = pgw_int4(i + 1);
        b->reqs[i] = PGW_EXECUTE(stmt, &b->params[i], 1, NULL, NULL);
    }
    return b;
}

static void batch_free(batch_t *b)
{
    for (int i = 0; i < N; i++)
        pgw_result_free(b->res[i]);
    free(b);
}

static void prepare_int4(pgw_client_t *c, const char *name, const char *sql)
{
    static const uint32_t int4 = 23;
    assert_int_equal(pgw_client_prepare(c, name, sql, &int4, 1, NULL), 0);
}

/* Done of a batch on a pgw_conn_t. */
static void on_done(int status, pgw_result_t *res, void *ud)
{
    int *done = ud;
    pgw_result_free(res);
    *done = status == 0 ? 1 : -1;
}

static void test_streamed_batch_written_while_encoded(void **state)
{
    (void)state;
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.write_threshold = 64u << 20; /* no flush past the threshold */
    pgt_conn_t f;
    pgt_conn_open(&f, &cfg);
    pgw_request_t prep = PGW_PREPARE("s", "SELECT $1::int4", NULL, 0, NULL, NULL);
    assert_int_equal(pgt_conn_request(&f, prep, NULL), 0);
    pgw_request_t desc = PGW_DESCRIBE("s", NULL, NULL);
    assert_int_equal(pgt_conn_request(&f, desc, NULL), 0);

    for (int streamed = 0; streamed <= 1; streamed++) {
        batch_t *b = batch_new("s");
        int done = 0, answered = 0;
        for (int i = 0; i < N; i++)
            b->reqs[i].ud = &answered;
        pgw_conn_stats_t before, after;
        pgw_conn_stats(f.conn, &before);
        assert_int_equal(pgw_conn_submit_batch(f.conn, b->reqs, N, streamed ? PGW_BATCH_STREAM : 0,
                                               on_done, &done),
                         0);
        pgw_conn_stats(f.conn, &after);
        if (streamed)
            assert_true(after.bytes_out - before.bytes_out >= 64u * 1024u);
        else
            assert_int_equal(after.bytes_out, before.bytes_out); /* at the loop's turn */
        assert_int_equal(pgw_session_batch_accepted(pgw_conn_session(f.conn)), N);
        pgt_conn_run(&f, &done, 1);
        assert_int_equal(done, 1);
        batch_free(b);
    }
    pgt_conn_close(&f);
}

static void test_streamed_batch_answers(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    prepare_int4(c, "s", "SELECT $1::int4 AS v");
    batch_t *b = batch_new("s");
    assert_int_equal(pgw_client_run_batch(c, b->reqs, N, PGW_BATCH_STREAM, b->res, b->st), 0);
    for (int i = 0; i < N; i++) {
        int32_t v = 0;
        assert_int_equal(b->st[i], 0);
        assert_int_equal(pgw_result_int4(b->res[i], 0, 0, &v), 0);
        assert_int_equal(v, i + 1);
        assert_string_equal(pgw_result_field(b->res[i], 0)->name.p, "v");
    }
    batch_free(b);
    pgw_client_close(c);
}

/* N inserts of 1..N as one batch, request REFUSED given an int8 its int4
 * parameter cannot take (PGW_ERANGE, refused before it is encoded). */
static size_t insert_refused_part_way(pgw_client_t *c, unsigned flags, batch_t *b)
{
    b->params[REFUSED] = pgw_int8(INT64_C(1) << 40);
    int rc = pgw_client_run_batch(c, b->reqs, N, flags, b->res, b->st);
    assert_int_equal(rc, PGW_ERANGE);
    assert_non_null(strstr(pgw_client_refusal(c), "request 15000"));
    return pgw_session_batch_accepted(pgw_conn_session(pgw_client_conn(c)));
}

static void test_refused_part_way(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgt_client_exec_ok(c, "CREATE TEMP TABLE stream_rows (v int4)");
    prepare_int4(c, "ins", "INSERT INTO stream_rows VALUES ($1)");

    /* Atomic: nothing runs. */
    batch_t *b = batch_new("ins");
    assert_int_equal(insert_refused_part_way(c, 0, b), 0);
    for (int i = 0; i < N; i++) {
        assert_null(b->res[i]);
        assert_int_equal(b->st[i], PGW_ERANGE);
    }
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM stream_rows"), 0);
    batch_free(b);

    /* Streamed: the parts written before the refusal run, whole. */
    b = batch_new("ins");
    size_t k = insert_refused_part_way(c, PGW_BATCH_STREAM, b);
    assert_true(k > 0 && k <= REFUSED);
    for (size_t i = 0; i < N; i++) {
        if (i < k) {
            assert_int_equal(b->st[i], 0);
            assert_int_equal(pgw_result_rows_affected(b->res[i]), 1);
        } else {
            assert_null(b->res[i]);
            assert_int_equal(b->st[i], PGW_ERANGE);
        }
    }
    assert_int_equal(pgt_client_int8(c, "SELECT count(*) FROM stream_rows"), (int64_t)k);
    assert_int_equal(pgt_client_int8(c, "SELECT max(v) FROM stream_rows"), (int64_t)k);
    batch_free(b);
    assert_int_equal(pgt_client_int8(c, "SELECT 7"), 7);
    pgw_client_close(c);
}

/* The first execution was bound with d's first description (int4 "a"),
 * the last with its second (text "b"). */
static void test_description_outlives_close(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    assert_int_equal(pgw_client_prepare(c, "d", "SELECT 1::int4 AS a", NULL, 0, NULL), 0);
    pgw_request_t reqs[] = {
        PGW_EXECUTE("d", NULL, 0, NULL, NULL),
        PGW_CLOSE("d", NULL, NULL),
        PGW_PREPARE("d", "SELECT 'x'::text AS b", NULL, 0, NULL, NULL),
        PGW_EXECUTE("d", NULL, 0, NULL, NULL),
    };
    pgw_result_t *res[4];
    int st[4];
    assert_int_equal(pgw_client_run_batch(c, reqs, 4, 0, res, st), 0);
    int32_t a = 0;
    assert_string_equal(pgw_result_field(res[0], 0)->name.p, "a");
    assert_int_equal(pgw_result_int4(res[0], 0, 0, &a), 0);
    assert_int_equal(a, 1);
    pgw_str_t t;
    assert_string_equal(pgw_result_field(res[3], 0)->name.p, "b");
    assert_int_equal(pgw_result_text(res[3], 0, 0, &t), 0);
    assert_int_equal(t.len, 1);
    assert_memory_equal(t.p, "x", 1);
    for (int i = 0; i < 4; i++)
        pgw_result_free(res[i]);
    pgw_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streamed_batch_written_while_encoded),
        cmocka_unit_test(test_streamed_batch_answers),
        cmocka_unit_test(test_refused_part_way),
        cmocka_unit_test(test_description_outlives_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
