/*
 * RELIABILITY case 14, the rows themselves (the streaming half, a slow
 * consumer holding memory flat, is test_cursor_backpressure.c):
 *   - one row holding a 200 MiB bytea arrives whole, its view valid for as
 *     long as the caller keeps the result, across later queries on the
 *     same connection (the read chunk it lives in is not reused: ASan
 *     would see it);
 *   - a row larger than max_message_size fails cleanly: the request and
 *     the one queued behind it with PGW_ETOOBIG, on_lost once, the
 *     connection refused afterwards, and nothing near the row's size ever
 *     allocated (the allocator records the largest request).
 * Scaled down to 20 MiB under valgrind (or PGW_TEST_SLOW=1).
 */
#define _POSIX_C_SOURCE 200809L /* uv.h */
#include "deadline_conn.h"
#include "failalloc.h"
#include "pgtest.h"

#include <valgrind/valgrind.h>

static size_t big_size(void)
{
    const char *s = getenv("PGW_TEST_SLOW");
    int slow = RUNNING_ON_VALGRIND || (s && *s && strcmp(s, "0") != 0);
    return (slow ? 20u : 200u) * 1024u * 1024u;
}

typedef struct kept {
    int calls, status;
    pgw_result_t *res;
} kept_t;

static void keep(int status, pgw_result_t *res, void *ud)
{
    kept_t *k = ud;
    k->calls++;
    k->status = status;
    k->res = res;
}

static void open_with(dl_conn_t *x, uv_loop_t *loop, uint32_t max_message,
                      const pgw_allocator_t *alloc)
{
    char ci[512];
    memset(x, 0, sizeof *x);
    x->loop = loop;
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.on_lost = dl_lost;
    cfg.ud = x;
    cfg.max_message_size = max_message;
    cfg.alloc = alloc;
    assert_int_equal(pgw_conn_new(&x->conn, loop, &cfg), 0);
    assert_int_equal(pgw_conn_connect(x->conn, pgt_conninfo(ci, sizeof ci, NULL), dl_connected, x),
                     0);
    dl_spin(x, &x->connected, 20000);
    assert_int_equal(x->connect_status, 0);
}

static void test_huge_row_whole(void **state)
{
    (void)state;
    size_t n = big_size();
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    dl_conn_t x;
    open_with(&x, &loop, (uint32_t)(n + (16u << 20)), NULL);
    char sql[160];
    snprintf(sql, sizeof sql,
             "SELECT convert_to(repeat('x', %zu) || 'end', 'UTF8') AS big, %zu::int8 AS n", n - 3,
             n);
    kept_t big = {0};
    assert_int_equal(pgw_conn_query(x.conn, sql, NULL, 0, keep, &big), 0);
    dl_spin(&x, &big.calls, 300000);
    assert_int_equal(big.status, 0);
    pgw_view_t v;
    assert_int_equal(pgw_result_bytea(big.res, 0, 0, &v), 0);
    assert_int_equal((size_t)v.len, n);
    /* Later queries on the connection reuse its read chunks: the kept
     * result's chunk must not be one of them. */
    for (int i = 0; i < 20; i++) {
        kept_t more = {0};
        assert_int_equal(pgw_conn_query(x.conn,
                                        "SELECT repeat('y', 100000) FROM generate_series(1, 10)",
                                        NULL, 0, keep, &more),
                         0);
        dl_spin(&x, &more.calls, 60000);
        assert_int_equal(more.status, 0);
        pgw_result_free(more.res);
    }
    assert_int_equal(v.p[0], 'x');
    assert_int_equal(v.p[n / 2], 'x');
    assert_memory_equal(v.p + n - 3, "end", 3);
    for (size_t i = 0; i < n - 3; i += 4096)
        if (v.p[i] != 'x') fail_msg("byte %zu changed: %d", i, v.p[i]);
    pgw_result_free(big.res);
    dl_close(&x);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static pgt_alloc_t fa = PGT_ALLOC_INITIALIZER(fa);

static void test_row_over_the_limit(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    dl_conn_t x;
    open_with(&x, &loop, 1u << 20, &fa.base);
    fa.biggest = 0;
    kept_t over = {0}, behind = {0};
    assert_int_equal(
        pgw_conn_query(x.conn, "SELECT repeat('x', 4 * 1024 * 1024)", NULL, 0, keep, &over), 0);
    assert_int_equal(pgw_conn_query(x.conn, "SELECT 1", NULL, 0, keep, &behind), 0);
    dl_spin(&x, &behind.calls, 60000);
    assert_int_equal(over.calls, 1);
    assert_int_equal(over.status, PGW_ETOOBIG);
    assert_int_equal(behind.status, PGW_ETOOBIG);
    assert_null(over.res);
    assert_int_equal(x.lost, 1);
    assert_int_equal(x.lost_err, PGW_ETOOBIG);
    kept_t late = {0};
    assert_int_equal(pgw_conn_query(x.conn, "SELECT 1", NULL, 0, keep, &late), PGW_ECLOSED);
    print_message("largest allocation while refusing a 4 MiB row: %zu bytes\n", fa.biggest);
    assert_true(fa.biggest < (2u << 20));
    dl_close(&x);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(fa.blocks, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_huge_row_whole),
        cmocka_unit_test(test_row_over_the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
