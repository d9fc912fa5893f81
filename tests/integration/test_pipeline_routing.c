/*
 * RELIABILITY case 1 through the libuv connection (test_session_live.c
 * runs the same shape on the bare session): 10,000 pipelined requests
 * `SELECT $1::int8 AS tag`, each with its own tag, in sync groups of 1 to
 * 50 (a random k per group), 5% replaced by a failing statement (1/0, a
 * unique violation, a syntax error), 100 seeds (3 under valgrind or
 * PGW_TEST_SLOW=1; PGW_TEST_ROUTING_SEEDS sets the count).
 *   - every successful callback gets exactly its own tag;
 *   - a request after an error in its group completes with PGW_EABORTED
 *     and never ran: half of the requests also insert their tag into a
 *     table, and the table ends up holding exactly the tags of the groups
 *     without an error (a failed group's implicit transaction is rolled
 *     back, its aborted requests never ran at all);
 *   - the requests after the next Sync succeed;
 *   - each callback fires exactly once, the batches' too;
 *   - nothing is left pending on the connection afterwards.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h */
#include "deadline_conn.h"
#include "pgtest.h"

#include <valgrind/valgrind.h>

#define NREQ   10000
#define MAXGRP 50

enum { EXPECT_OK, EXPECT_FAIL, EXPECT_ABORTED };

typedef struct req {
    int calls, status, expect, writes;
    int64_t tag;
} req_t;

static req_t R[NREQ];
static int batch_calls, nbatches, ndone;

static void on_req(int status, pgw_result_t *res, void *ud)
{
    req_t *r = ud;
    r->calls++;
    r->status = status;
    r->tag = -1;
    if (status == 0 && pgw_result_nrows(res) == 1) {
        int64_t v;
        if (pgw_result_int8(res, 0, 0, &v) == 0) r->tag = v;
    }
    pgw_result_free(res);
    ndone++;
}

static void on_batch(int status, pgw_result_t *res, void *ud)
{
    (void)status, (void)ud;
    pgw_result_free(res);
    batch_calls++;
}

static int seeds(void)
{
    int n = pgt_env_int("PGW_TEST_ROUTING_SEEDS", 0);
    if (n > 0) return n;
    const char *s = getenv("PGW_TEST_SLOW");
    return RUNNING_ON_VALGRIND || (s && *s && strcmp(s, "0") != 0) ? 3 : 100;
}

typedef struct sql_out {
    int done, status;
    int64_t count, sum;
} sql_out_t;

static void on_counts(int status, pgw_result_t *res, void *ud)
{
    sql_out_t *o = ud;
    o->done = 1;
    o->status = status;
    if (status == 0) {
        pgw_result_int8(res, 0, 0, &o->count);
        pgw_result_int8(res, 0, 1, &o->sum);
    }
    pgw_result_free(res);
}

static void exec_ok(dl_conn_t *x, const char *sql)
{
    outcome_t o = {0};
    assert_int_equal(pgw_conn_simple_query(x->conn, sql, record, &o), 0);
    dl_spin(x, &o.calls, 60000);
    if (o.status != 0) fail_msg("%s: %s", sql, pgw_err_name(o.status));
}

static void run_seed(dl_conn_t *x, unsigned seed)
{
    static const char *const bad[] = {"SELECT 1/0", "INSERT INTO uv VALUES (1)", "SELEC 1"};
    static pgw_param_t ps[MAXGRP];
    pgw_request_t reqs[MAXGRP];
    exec_ok(x, "TRUNCATE ran");
    srand(seed);
    memset(R, 0, sizeof R);
    batch_calls = nbatches = ndone = 0;
    int64_t want_count = 0, want_sum = 0;
    for (int i = 0; i < NREQ;) {
        int k = 1 + rand() % MAXGRP, failed = 0, first = i;
        size_t n = 0;
        for (; n < (size_t)k && i < NREQ; n++, i++) {
            int roll = rand() % 100;
            if (roll < 5) {
                reqs[n] = PGW_QUERY(bad[roll % 3], NULL, 0, on_req, &R[i]);
                R[i].expect = failed ? EXPECT_ABORTED : EXPECT_FAIL;
                failed = 1;
                continue;
            }
            ps[n] = pgw_int8(i);
            R[i].writes = rand() % 2;
            reqs[n] = PGW_QUERY(R[i].writes ? "WITH w AS (INSERT INTO ran VALUES ($1)) "
                                              "SELECT $1::int8 AS tag"
                                            : "SELECT $1::int8 AS tag",
                                &ps[n], 1, on_req, &R[i]);
            R[i].expect = failed ? EXPECT_ABORTED : EXPECT_OK;
        }
        /* a failed group's writes are rolled back with it */
        for (int j = first; !failed && j < i; j++)
            if (R[j].writes) want_count++, want_sum += j;
        assert_int_equal(pgw_conn_submit_batch(x->conn, reqs, n, 0, on_batch, NULL), 0);
        nbatches++;
    }
    uint64_t end = pgt_now_ns() + 120000000000ull;
    while ((ndone < NREQ || batch_calls < nbatches) && pgt_now_ns() < end)
        uv_run(x->loop, UV_RUN_ONCE);
    assert_int_equal(batch_calls, nbatches);
    for (int i = 0; i < NREQ; i++) {
        if (R[i].calls != 1)
            fail_msg("seed %u: request %d completed %d times", seed, i, R[i].calls);
        switch (R[i].expect) {
        case EXPECT_OK:
            if (R[i].status != 0 || R[i].tag != i)
                fail_msg("seed %u: request %d: %s, tag %lld", seed, i, pgw_err_name(R[i].status),
                         (long long)R[i].tag);
            break;
        case EXPECT_FAIL:
            if (R[i].status != PGW_ESERVER)
                fail_msg("seed %u: request %d: %s, not the server's error", seed, i,
                         pgw_err_name(R[i].status));
            break;
        default:
            if (R[i].status != PGW_EABORTED)
                fail_msg("seed %u: request %d: %s, not EABORTED", seed, i,
                         pgw_err_name(R[i].status));
        }
    }
    assert_int_equal(pgw_session_pending(pgw_conn_session(x->conn)), 0);
    sql_out_t o = {0};
    assert_int_equal(pgw_conn_query(x->conn, "SELECT count(*), coalesce(sum(k), 0)::int8 FROM ran",
                                    NULL, 0, on_counts, &o),
                     0);
    dl_spin(x, &o.done, 60000);
    assert_int_equal(o.status, 0);
    assert_int_equal(o.count, want_count);
    assert_int_equal(o.sum, want_sum);
}

static void test_routing_under_errors(void **state)
{
    (void)state;
    char ci[512];
    dl_conn_t x;
    dl_open(&x, NULL, pgt_conninfo(ci, sizeof ci, NULL), 0, 0);
    exec_ok(&x, "CREATE TEMP TABLE uv(k int PRIMARY KEY); INSERT INTO uv VALUES (1); "
                "CREATE TEMP TABLE ran(k int8 PRIMARY KEY)");
    int n = seeds();
    uint64_t t0 = pgt_now_ns();
    for (int s = 1; s <= n; s++)
        run_seed(&x, (unsigned)s * 2654435761u);
    print_message("%d seeds of %d requests in %.1f s\n", n, NREQ, pgt_ms_since(t0) / 1000);
    dl_close(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routing_under_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
