/*
 * Requests without a result object (PGW_Q_NO_RESULT) and the memory of
 * pending requests, on a pgw_conn_t against the real server:
 *   - on success on_result gets status 0 and no result; rows go to on_row;
 *     a failure still gets the result holding the server's error, a
 *     request the error aborted PGW_EABORTED;
 *   - once warm, a batch of 10,000 such requests, and 10,000 of them
 *     submitted one by one (each with its own Sync), allocate nothing per
 *     request (the connection's allocator counts every allocation);
 *   - a cache hit whose result is made when its answer begins (not when
 *     it is queued) still gets its columns' description and formats.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/conn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

/* The connection's allocator: counts allocations (malloc and realloc). */
static size_t nallocs;

static void *count_malloc(size_t n, void *ud)
{
    (void)ud;
    nallocs++;
    return malloc(n);
}

static void *count_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    nallocs++;
    return realloc(p, n);
}

static void count_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

static const pgw_allocator_t counting = {NULL, count_malloc, count_realloc, count_free};

typedef struct tally {
    int done;       /* on_result calls */
    int ok_null;    /* ... with status 0 and no result */
    int other;      /* ... anything else */
    int batch_done; /* the batch's done */
    int batch_status;
    int64_t row_sum; /* values seen by on_row */
    int rows;
} tally_t;

static void on_result(int status, pgw_result_t *res, void *ud)
{
    tally_t *t = ud;
    t->done++;
    if (status == 0 && !res)
        t->ok_null++;
    else
        t->other++;
    pgw_result_free(res);
}

static void on_batch(int status, pgw_result_t *res, void *ud)
{
    tally_t *t = ud;
    t->batch_done++;
    t->batch_status = status;
    pgw_result_free(res);
}

static int on_row(const pgw_row_t *row, void *ud)
{
    tally_t *t = ud;
    int32_t v = 0;
    assert_int_equal(row->ncols, 1);
    assert_int_equal(pgw_get_int4(&row->values[0], &v), 0);
    t->row_sum += v;
    t->rows++;
    return 0;
}

static pgw_request_t no_result_query(const char *sql, const pgw_param_t *p, size_t n, tally_t *t)
{
    pgw_request_t r = PGW_QUERY(sql, p, n, on_result, t);
    r.flags = PGW_Q_NO_RESULT;
    return r;
}

enum { BATCH = 10000 };

/* One batch of BATCH `SELECT $1::int4` with PGW_Q_NO_RESULT and one Sync,
 * run to its end; returns the allocations it made. */
static size_t run_batch(pgt_conn_t *f, pgw_request_t *reqs, pgw_param_t *params)
{
    tally_t t = {0};
    for (int i = 0; i < BATCH; i++) {
        params[i] = pgw_int4(i);
        reqs[i] = no_result_query("SELECT $1::int4", &params[i], 1, &t);
    }
    size_t before = nallocs;
    assert_int_equal(pgw_conn_submit_batch(f->conn, reqs, BATCH, 0, on_batch, &t), 0);
    pgt_conn_run(f, &t.batch_done, 1);
    size_t made = nallocs - before;
    assert_int_equal(t.batch_status, 0);
    assert_int_equal(t.done, BATCH);
    assert_int_equal(t.ok_null, BATCH);
    return made;
}

/* BATCH requests submitted one by one (each its own Sync), all pending
 * before the loop runs; returns the allocations they made. */
static size_t run_singles(pgt_conn_t *f)
{
    tally_t t = {0};
    size_t before = nallocs;
    for (int i = 0; i < BATCH; i++) {
        pgw_param_t p = pgw_int4(i);
        pgw_request_t r = no_result_query("SELECT $1::int4", &p, 1, &t);
        assert_int_equal(pgw_conn_submit(f->conn, &r), 0);
    }
    assert_int_equal(pgw_session_pending(pgw_conn_session(f->conn)), BATCH);
    pgt_conn_run(f, &t.done, BATCH);
    size_t made = nallocs - before;
    assert_int_equal(t.ok_null, BATCH);
    return made;
}

static void test_steady_state_allocates_nothing(void **state)
{
    (void)state;
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.alloc = &counting;
    pgt_conn_t f;
    pgt_conn_open(&f, &cfg);
    pgw_request_t *reqs = calloc(BATCH, sizeof *reqs);
    pgw_param_t *params = calloc(BATCH, sizeof *params);
    assert_non_null(reqs);
    assert_non_null(params);
    /* Warm: the statement cache, the entries, the buffers. */
    run_batch(&f, reqs, params);
    run_batch(&f, reqs, params);
    run_singles(&f);
    /* Nothing per request: at most a handful for the whole run (a buffer
     * that grows), far under one per request. */
    size_t batch = run_batch(&f, reqs, params);
    size_t singles = run_singles(&f);
    print_message("allocations: batch of %d: %zu; %d single requests: %zu\n", BATCH, batch, BATCH,
                  singles);
    assert_true(batch <= 2);
    assert_true(singles <= 2);
    free(reqs);
    free(params);
    pgt_conn_close(&f);
}

static void test_rows_and_failures(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    /* Rows go to on_row; on_result gets 0 and no result. */
    tally_t t = {0};
    pgw_request_t r = no_result_query("SELECT generate_series(1, 100)::int4", NULL, 0, &t);
    r.on_row = on_row;
    assert_int_equal(pgw_conn_submit(f.conn, &r), 0);
    /* Without on_row the rows are dropped. */
    pgw_request_t q = no_result_query("SELECT generate_series(1, 100)::int4", NULL, 0, &t);
    assert_int_equal(pgw_conn_submit(f.conn, &q), 0);
    pgt_conn_run(&f, &t.done, 2);
    assert_int_equal(t.ok_null, 2);
    assert_int_equal(t.rows, 100);
    assert_int_equal(t.row_sum, 5050);

    /* A failure still hands out the server's error. */
    pgw_result_t *res = NULL;
    pgw_request_t e = PGW_QUERY("SELECT 1 / 0", NULL, 0, NULL, NULL);
    e.flags = PGW_Q_NO_RESULT;
    assert_int_equal(pgt_conn_request(&f, e, &res), PGW_ESERVER);
    assert_non_null(res);
    const pgw_error_t *err = pgw_result_error(res);
    assert_non_null(err);
    assert_string_equal(err->sqlstate, "22012");
    pgw_result_free(res);

    /* In a one-Sync batch: the error, then an aborted request; done gets
     * the first failure. */
    tally_t b = {0};
    pgw_request_t reqs[3] = {no_result_query("SELECT 1", NULL, 0, &b),
                             no_result_query("SELECT 1 / 0", NULL, 0, &b),
                             no_result_query("SELECT 2", NULL, 0, &b)};
    assert_int_equal(pgw_conn_submit_batch(f.conn, reqs, 3, 0, on_batch, &b), 0);
    pgt_conn_run(&f, &b.batch_done, 1);
    assert_int_equal(b.done, 3);
    assert_int_equal(b.ok_null, 1);
    assert_int_equal(b.batch_status, PGW_ESERVER);
    pgt_conn_close(&f);
}

/* A statement-cache hit's result is made when its answer begins, from the
 * cached statement's description: columns, types and the formats its Bind
 * asked (binary by the rule; text for every column with PGW_Q_TEXT), while
 * many such requests are pending. */
typedef struct kept {
    int done;
    int status[64];
    pgw_result_t *res[64];
} kept_t;

static int slot_of(kept_t *k, void *ud)
{
    return (int)((int *)ud - k->status);
}

static kept_t *the_kept;

static void keep_result(int status, pgw_result_t *res, void *ud)
{
    int i = slot_of(the_kept, ud);
    the_kept->status[i] = status;
    the_kept->res[i] = res;
    the_kept->done++;
}

static void test_cache_hit_description(void **state)
{
    (void)state;
    pgt_conn_t f;
    pgt_conn_open(&f, NULL);
    static const char sql[] = "SELECT $1::int4 AS n, 'x' || $1::text AS s";
    enum { N = 64 };
    kept_t k;
    the_kept = &k;
    for (int round = 0; round < 3; round++) {
        for (int text = 0; text < 2; text++) {
            memset(&k, 0, sizeof k);
            for (int i = 0; i < N; i++) {
                pgw_param_t p = pgw_int4(i);
                pgw_request_t r = PGW_QUERY(sql, &p, 1, keep_result, &k.status[i]);
                if (text) r.flags = PGW_Q_TEXT;
                assert_int_equal(pgw_conn_submit(f.conn, &r), 0);
            }
            pgt_conn_run(&f, &k.done, N);
            for (int i = 0; i < N; i++) {
                assert_int_equal(k.status[i], 0);
                assert_int_equal(pgw_result_ncols(k.res[i]), 2);
                assert_string_equal(pgw_result_fname(k.res[i], 0), "n");
                assert_string_equal(pgw_result_fname(k.res[i], 1), "s");
                assert_int_equal(pgw_result_ftype(k.res[i], 0), 23);
                assert_int_equal(pgw_result_fformat(k.res[i], 0),
                                 text ? PGW_FORMAT_TEXT : PGW_FORMAT_BINARY);
                int32_t v = -1;
                assert_int_equal(pgw_result_int4(k.res[i], 0, 0, &v), 0);
                assert_int_equal(v, i);
                pgw_str_t sv;
                assert_int_equal(pgw_result_text(k.res[i], 0, 1, &sv), 0);
                char want[16];
                snprintf(want, sizeof want, "x%d", i);
                assert_int_equal(sv.len, strlen(want));
                assert_memory_equal(sv.p, want, sv.len);
                pgw_result_free(k.res[i]);
            }
        }
    }
    pgw_stmt_cache_stats_t st;
    pgw_conn_stmt_cache_stats(f.conn, &st);
    assert_true(st.hits >= 4 * N);
    pgt_conn_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_and_failures),
        cmocka_unit_test(test_steady_state_allocates_nothing),
        cmocka_unit_test(test_cache_hit_description),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
