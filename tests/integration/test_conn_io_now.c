/*
 * pgw_conn_flush and pgw_conn_read_now against the real server: a driver
 * with its own poll loop (the libpq-compatible layer's PQflush and
 * PQconsumeInput) writes and reads on the socket without a turn of the
 * loop. Every request here completes with no uv_run between its submit and
 * its callback; a parameter larger than the socket buffers, sent while the
 * server sleeps, needs several flushes; a connection the server ends is reported from inside
 * pgw_conn_read_now; a pgw_conn_read_now from a callback is refused and
 * leaves the connection as it was.
 */
#define _DEFAULT_SOURCE
#include "pgtest.h"
#include "pgwire/conn.h"

#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

typedef struct ctx {
    uv_loop_t loop;
    pgw_conn_t *conn;
    int connected, connect_status;
    int lost, lost_err;
    int calls, status;
    int64_t value;
} ctx_t;

static void on_connect(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)conn;
    (void)err;
    ctx_t *x = ud;
    x->connected++;
    x->connect_status = status;
}

static void on_lost(pgw_conn_t *conn, int err, void *ud)
{
    (void)conn;
    ctx_t *x = ud;
    x->lost++;
    x->lost_err = err;
}

static void on_result(int status, pgw_result_t *res, void *ud)
{
    ctx_t *x = ud;
    x->calls++;
    x->status = status;
    if (status == 0 && pgw_result_nrows(res) > 0) pgw_result_int8(res, 0, 0, &x->value);
    pgw_result_free(res);
}

static void open_conn(ctx_t *x)
{
    memset(x, 0, sizeof *x);
    assert_int_equal(uv_loop_init(&x->loop), 0);
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.on_lost = on_lost;
    cfg.ud = x;
    assert_int_equal(pgw_conn_new(&x->conn, &x->loop, &cfg), 0);
    /* Not connected yet: nothing to read or write. */
    assert_int_equal(pgw_conn_flush(x->conn), PGW_ECLOSED);
    assert_int_equal(pgw_conn_read_now(x->conn), PGW_ECLOSED);
    char ci[1024];
    assert_int_equal(pgw_conn_connect(x->conn, pgt_conninfo(ci, sizeof ci, NULL), on_connect, x),
                     0);
    while (!x->connected && uv_run(&x->loop, UV_RUN_ONCE)) {
    }
    assert_int_equal(x->connect_status, 0);
    /* Settle what the connect left for the loop (its timers, the prepare). */
    uv_run(&x->loop, UV_RUN_NOWAIT);
}

static void close_conn(ctx_t *x)
{
    pgw_conn_close(x->conn, NULL, NULL);
    uv_run(&x->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&x->loop), 0);
}

/* Waits (up to 10 s) for the socket, as a program's own poll loop does. */
static void wait_socket(ctx_t *x, short events)
{
    struct pollfd p = {.fd = pgw_conn_fd(x->conn), .events = events};
    assert_true(p.fd >= 0);
    assert_int_equal(poll(&p, 1, 10000), 1);
}

/* Until the request completed: write what is left, wait, read. */
static void drive(ctx_t *x)
{
    for (int i = 0; i < 100000 && !x->calls; i++) {
        int left = pgw_conn_flush(x->conn);
        assert_true(left == 0 || left == 1);
        wait_socket(x, left ? POLLIN | POLLOUT : POLLIN);
        assert_int_equal(pgw_conn_read_now(x->conn), 0);
    }
}

static void test_invalid(void **state)
{
    (void)state;
    assert_int_equal(pgw_conn_flush(NULL), PGW_EINVAL);
    assert_int_equal(pgw_conn_read_now(NULL), PGW_EINVAL);
}

static void test_query_without_loop(void **state)
{
    (void)state;
    ctx_t x;
    open_conn(&x);
    for (int i = 0; i < 50; i++) {
        x.calls = 0;
        pgw_param_t p = pgw_int8(1000 + i);
        pgw_request_t r = PGW_QUERY("SELECT $1::int8 * 2", &p, 1, on_result, &x);
        assert_int_equal(pgw_conn_submit(x.conn, &r), 0);
        /* A small request: the socket takes it at once. */
        assert_int_equal(pgw_conn_flush(x.conn), 0);
        drive(&x);
        assert_int_equal(x.calls, 1);
        assert_int_equal(x.status, 0);
        assert_int_equal(x.value, 2 * (1000 + i));
    }
    close_conn(&x);
}

static void on_sleep(int status, pgw_result_t *res, void *ud)
{
    *(int *)ud = status == 0 ? 1 : -1;
    pgw_result_free(res);
}

static void test_large_parameter_flushes(void **state)
{
    (void)state;
    ctx_t x;
    open_conn(&x);
    /* The server sleeps before it reads the large request, so the socket
     * fills whatever the machine's speed: flushes must be resumed. */
    int slept = 0;
    pgw_request_t sleep = PGW_QUERY("SELECT pg_sleep(2)", NULL, 0, on_sleep, &slept);
    assert_int_equal(pgw_conn_submit(x.conn, &sleep), 0);
    size_t big = 16u << 20; /* more than the socket buffers hold */
    char *s = malloc(big + 1);
    assert_non_null(s);
    memset(s, 'x', big);
    s[big] = 0;
    pgw_param_t p = pgw_text(s);
    pgw_request_t r = PGW_QUERY("SELECT length($1::text)::int8", &p, 1, on_result, &x);
    assert_int_equal(pgw_conn_submit(x.conn, &r), 0);
    int waited = 0;
    int left;
    while ((left = pgw_conn_flush(x.conn)) == 1 && waited < 100000) {
        waited++;
        wait_socket(&x, POLLOUT);
    }
    assert_int_equal(left, 0);
    assert_true(waited > 0);
    drive(&x);
    assert_int_equal(x.calls, 1);
    assert_int_equal(x.status, 0);
    assert_int_equal(x.value, (int64_t)big);
    assert_int_equal(slept, 1);
    free(s);
    close_conn(&x);
}

static void test_loss_inside_read_now(void **state)
{
    (void)state;
    ctx_t x;
    open_conn(&x);
    pgw_request_t r =
        PGW_QUERY("SELECT pg_terminate_backend(pg_backend_pid())", NULL, 0, on_result, &x);
    assert_int_equal(pgw_conn_submit(x.conn, &r), 0);
    assert_int_equal(pgw_conn_flush(x.conn), 0);
    int rc = 0;
    for (int i = 0; i < 1000 && rc == 0; i++) {
        wait_socket(&x, POLLIN);
        rc = pgw_conn_read_now(x.conn);
    }
    assert_int_equal(rc, PGW_ECLOSED);
    assert_int_equal(x.calls, 1);
    assert_true(x.status < 0);
    assert_int_equal(x.lost, 1);
    assert_int_equal(pgw_conn_flush(x.conn), PGW_ECLOSED);
    close_conn(&x);
}

static void on_result_reading(int status, pgw_result_t *res, void *ud)
{
    ctx_t *x = ud;
    x->value = pgw_conn_read_now(x->conn);
    x->calls++;
    x->status = status;
    pgw_result_free(res);
}

static void test_read_now_in_callback(void **state)
{
    (void)state;
    ctx_t x;
    open_conn(&x);
    pgw_request_t r = PGW_QUERY("SELECT 1", NULL, 0, on_result_reading, &x);
    assert_int_equal(pgw_conn_submit(x.conn, &r), 0);
    drive(&x);
    assert_int_equal(x.status, 0);
    assert_int_equal(x.value, PGW_ERECURSIVE);
    assert_int_equal(x.lost, 0);
    x.calls = 0;
    pgw_param_t p = pgw_int8(21);
    pgw_request_t r2 = PGW_QUERY("SELECT $1::int8 * 2", &p, 1, on_result, &x);
    assert_int_equal(pgw_conn_submit(x.conn, &r2), 0);
    drive(&x);
    assert_int_equal(x.status, 0);
    assert_int_equal(x.value, 42);
    close_conn(&x);
}

int main(void)
{
    pgt_require_server();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_query_without_loop),
        cmocka_unit_test(test_large_parameter_flushes),
        cmocka_unit_test(test_loss_inside_read_now),
        cmocka_unit_test(test_read_now_in_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
