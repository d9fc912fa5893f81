/*
 * connect_timeout bounds the whole connect attempt (conn.h, CONNECT
 * TIMEOUT): a server that accepts and then only sends NoticeResponses,
 * before authentication or after it (while the client waits for
 * ReadyForQuery), fails the connect with PGW_ETIMEDOUT when the bound has
 * passed, long before the notices stop (pgtime.h). A real server cannot be
 * made to do that, hence the fake one.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h needs POSIX types under -std=c11 */
#include "fakepg.h"
#include "pgtime.h"

#include "pgwire/conn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

/* 20 ms apart for 30 s (the work): far longer than the 2 s connect_timeout. */
#define FLOOD_NOTICES 1500
#define FLOOD_MS      (FLOOD_NOTICES * 20.0)

typedef struct flood {
    uv_loop_t loop;
    pgw_conn_t *conn;
    int done, status, closed;
    int notices;
    uint64_t t0, t_done;
    pgw_buf_t notice, auth_ok;
    fakepg_step_t steps[2 + 2 * FLOOD_NOTICES];
} flood_t;

static void on_notice(pgw_conn_t *conn, const pgw_error_t *n, void *ud)
{
    ((flood_t *)ud)->notices++;
}

static void on_connect(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    flood_t *x = ud;
    x->done = 1;
    x->status = status;
    x->t_done = uv_hrtime();
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    ((flood_t *)ud)->closed = 1;
}

/* The script: read the startup packet, optionally accept the login, then
 * send a notice every 20 ms. */
static size_t flood_script(flood_t *x, int authenticated)
{
    pgw_buf_init(&x->notice, NULL);
    pgw_buf_init(&x->auth_ok, NULL);
    pgt_msg_notice(&x->notice, "still starting, please wait");
    pgt_msg_auth(&x->auth_ok, 0, NULL, 0);
    size_t n = 0;
    x->steps[n++] = (fakepg_step_t){FAKEPG_EXPECT_STARTUP, 0, NULL, 0};
    if (authenticated)
        x->steps[n++] = (fakepg_step_t){FAKEPG_SEND, 0, x->auth_ok.data, x->auth_ok.len};
    for (int i = 0; i < FLOOD_NOTICES; i++) {
        x->steps[n++] = (fakepg_step_t){FAKEPG_SEND, 0, x->notice.data, x->notice.len};
        x->steps[n++] = (fakepg_step_t){FAKEPG_SLEEP, 0, NULL, 20};
    }
    return n;
}

static void run_flood(int authenticated, int want_phase)
{
    flood_t *x = calloc(1, sizeof *x);
    assert_non_null(x);
    size_t nsteps = flood_script(x, authenticated);
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, x->steps, nsteps), 0);
    assert_int_equal(uv_loop_init(&x->loop), 0);
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.on_notice = on_notice;
    cfg.ud = x;
    assert_int_equal(pgw_conn_new(&x->conn, &x->loop, &cfg), 0);
    char ci[256];
    snprintf(ci, sizeof ci,
             "host=127.0.0.1 port=%u user=fake dbname=fake sslmode=disable connect_timeout=2",
             (unsigned)fakepg_port(f));
    x->t0 = uv_hrtime();
    assert_int_equal(pgw_conn_connect(x->conn, ci, on_connect, x), 0);
    while (!x->done && pgt_ms_since(x->t0) < FLOOD_MS + 5000)
        uv_run(&x->loop, UV_RUN_ONCE);
    print_message("notice flood (%s): %d notices read\n",
                  authenticated ? "after AuthenticationOk" : "before authentication", x->notices);
    assert_true(x->done);
    assert_int_equal(x->status, PGW_ETIMEDOUT);
    assert_true(x->notices > 10); /* the notices did arrive all along */
    pgt_assert_in_time("connect_timeout=2 under a notice flood", pgt_ms_between(x->t0, x->t_done),
                       1990, FLOOD_MS);
    size_t na = 0;
    const pgw_conn_attempt_t *a = pgw_conn_attempts(x->conn, &na);
    assert_int_equal(na, 1);
    assert_int_equal(a[0].status, PGW_ETIMEDOUT);
    assert_int_equal(a[0].phase, want_phase);
    assert_int_equal(pgw_conn_close(x->conn, on_closed, x), 0);
    while (!x->closed)
        uv_run(&x->loop, UV_RUN_ONCE);
    assert_int_equal(uv_loop_close(&x->loop), 0);
    fakepg_free(f); /* its sends fail once the client is gone: not checked */
    pgw_buf_free(&x->notice);
    pgw_buf_free(&x->auth_ok);
    free(x);
}

static void test_notice_flood_before_auth(void **state)
{
    run_flood(0, PGW_PHASE_STARTUP);
}

static void test_notice_flood_after_auth(void **state)
{
    run_flood(1, PGW_PHASE_SETUP);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notice_flood_before_auth),
        cmocka_unit_test(test_notice_flood_after_auth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
