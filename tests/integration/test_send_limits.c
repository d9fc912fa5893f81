/*
 * RELIABILITY case 3 on a live connection (the size arithmetic past
 * INT32_MAX is test_proto_encode.c's test_bind_too_big, over a fake
 * buffer): a request whose Bind exceeds the connection's max_message_size
 * is refused by the submit itself with PGW_ETOOBIG, before a byte of it
 * reaches the socket (the connection's counters do not move, the trace
 * shows no message), and the connection goes on: the next request runs.
 * The escape helpers refuse invalid UTF-8 with an error and no string (the
 * CVE-2025-1094 class), and so does the one helper that builds SQL from a
 * name, pgw_listen_sql.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h */
#include "deadline_conn.h"
#include "pgtest.h"
#include "pgwire/listen.h"
#include "pgwire/types_container.h"

static int traced;

static void count_front(pgw_conn_t *c, char dir, const uint8_t *m, size_t n, void *ud)
{
    (void)c, (void)m, (void)n, (void)ud;
    if (dir == 'F') traced++;
}

static void test_oversized_bind_refused_before_writing(void **state)
{
    (void)state;
    char ci[512];
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    dl_conn_t x;
    memset(&x, 0, sizeof x);
    x.loop = &loop;
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.max_message_size = 1u << 20;
    cfg.on_trace = count_front;
    cfg.on_lost = dl_lost;
    cfg.ud = &x;
    assert_int_equal(pgw_conn_new(&x.conn, &loop, &cfg), 0);
    assert_int_equal(pgw_conn_connect(x.conn, pgt_conninfo(ci, sizeof ci, NULL), dl_connected, &x),
                     0);
    dl_spin(&x, &x.connected, 20000);
    assert_int_equal(x.connect_status, 0);
    int never = 0;
    dl_run(&loop, &never, NULL, 20); /* nothing left to write */

    size_t big = 2u << 20;
    uint8_t *blob = malloc(big);
    assert_non_null(blob);
    memset(blob, 'b', big);
    pgw_conn_stats_t before, after;
    pgw_conn_stats(x.conn, &before);
    int traced_before = traced;
    outcome_t o = {0};
    pgw_param_t p[2] = {pgw_bytea(blob, (int32_t)big), pgw_int4(1)};
    assert_int_equal(pgw_conn_query(x.conn, "SELECT length($1), $2", p, 2, record, &o),
                     PGW_ETOOBIG);
    /* Several parameters that pass the limit only together. */
    pgw_param_t halves[3] = {pgw_bytea(blob, 400000), pgw_bytea(blob, 400000),
                             pgw_bytea(blob, 400000)};
    assert_int_equal(pgw_conn_query(x.conn, "SELECT $1, $2, $3", halves, 3, record, &o),
                     PGW_ETOOBIG);
    /* In a batch: all or nothing. */
    pgw_request_t batch[2] = {PGW_QUERY("SELECT 1", NULL, 0, record, &o),
                              PGW_QUERY("SELECT length($1), $2", p, 2, record, &o)};
    assert_int_equal(pgw_conn_submit_batch(x.conn, batch, 2, 0, record, &o), PGW_ETOOBIG);
    dl_run(&loop, &never, NULL, 50);
    pgw_conn_stats(x.conn, &after);
    assert_int_equal(after.bytes_out, before.bytes_out);
    assert_int_equal(after.writes, before.writes);
    assert_int_equal(traced, traced_before);
    assert_int_equal(o.calls, 0);
    assert_int_equal(x.lost, 0);
    /* The connection goes on; a parameter under the limit passes. */
    pgw_param_t ok[2] = {pgw_bytea(blob, 500000), pgw_int4(1)};
    assert_int_equal(pgw_conn_query(x.conn, "SELECT length($1), $2", ok, 2, record, &o), 0);
    dl_spin(&x, &o.calls, 20000);
    assert_int_equal(o.status, 0);
    assert_int_equal(o.value, 500000);
    free(blob);
    dl_close(&x);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_sql_builders_refuse_invalid_utf8(void **state)
{
    (void)state;
    static const char *const bad[] = {"\xC0'; DROP TABLE x; --", "a\xFF", "\xE2\x82",
                                      "\xED\xA0\x80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out = (char *)1;
        assert_int_equal(pgw_escape_literal(NULL, bad[i], strlen(bad[i]), &out), PGW_EENCODING);
        assert_null(out);
        out = (char *)1;
        assert_int_equal(pgw_escape_identifier(NULL, bad[i], strlen(bad[i]), &out), PGW_EENCODING);
        assert_null(out);
        out = (char *)1;
        assert_int_equal(pgw_listen_sql(NULL, bad[i], 0, &out), PGW_EENCODING);
        assert_null(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oversized_bind_refused_before_writing),
        cmocka_unit_test(test_sql_builders_refuse_invalid_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
