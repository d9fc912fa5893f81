/*
 * A deadline's cancel that the server never confirms (conn.h, DEADLINES):
 * a request with a 100 ms deadline, a second request submitted behind it
 * (held: written only once the first completed and no cancel is in
 * flight). The fake server leaves the cancel's connection in its listen
 * backlog, so the CancelRequest is sent and nothing ever closes it; it
 * answers the timed-out request itself (57014) well before the cancel's
 * timeout (connect_timeout=3). When that timeout ends the cancel, its
 * signal could still land on whatever the backend runs next: the held
 * request must never be written. The connection is closed instead: the
 * held request completes with PGW_ECONNLOST (it never ran: safe to retry),
 * on_lost fires once, and the connection is closed (the fake sees EOF
 * with no second query).
 */
#define _POSIX_C_SOURCE 200809L /* uv.h */
#include "fakepg.h"
#include "pgtest.h"
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

/* How long the test waits for the connection to give up: the cancel's
 * timeout (3 s) with ample room; a held request written instead is never
 * answered, so nothing else would end the wait. */
#define WAIT_MS 15000u

typedef struct outcome {
    int calls, status;
} outcome_t;

typedef struct ctx {
    uv_loop_t loop;
    pgw_conn_t *conn;
    int connected, connect_status, lost, lost_err, closed, cancel_status;
    outcome_t timed, held;
} ctx_t;

static void on_req(int status, pgw_result_t *res, void *ud)
{
    outcome_t *o = ud;
    o->calls++;
    o->status = status;
    pgw_result_free(res);
}

static void on_connect(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)conn, (void)err;
    ctx_t *x = ud;
    x->connected = 1;
    x->connect_status = status;
}

static void on_lost(pgw_conn_t *conn, int err, void *ud)
{
    (void)conn;
    ctx_t *x = ud;
    x->lost++;
    x->lost_err = err;
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    ((ctx_t *)ud)->closed = 1;
}

static void on_tick(uv_timer_t *t)
{
    (void)t; /* wakes the loop so that the time limit is checked */
}

static void run_until(ctx_t *x, const int *flag, unsigned ms)
{
    uint64_t end = pgt_now_ns() + (uint64_t)ms * 1000000u;
    uv_timer_t t;
    uv_timer_init(&x->loop, &t);
    uv_timer_start(&t, on_tick, 20, 20);
    while (!*flag && pgt_now_ns() < end)
        uv_run(&x->loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(&x->loop, UV_RUN_NOWAIT);
}

static size_t count_char(const char *s, char c)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

static void test_unconfirmed_cancel_closes(void **state)
{
    (void)state;
    pgw_buf_t hello = {0}, answer = {0};
    pgt_msg_startup_ok(&hello, "17.0", 91, 0x01020304u);
    pgt_msg_error(&answer, "ERROR", "57014", "canceling statement due to user request");
    pgt_msg_ready(&answer, 'I');
    fakepg_step_t steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},
        {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_EXPECT_UNTIL, 'S', NULL, 1}, /* the timed request */
        {FAKEPG_SLEEP, 0, NULL, 500},        /* its deadline passes, the cancel goes out */
        {FAKEPG_SEND, 0, answer.data, answer.len},
        {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, steps, sizeof steps / sizeof steps[0]), 0);

    ctx_t x;
    memset(&x, 0, sizeof x);
    x.cancel_status = 1;
    assert_int_equal(uv_loop_init(&x.loop), 0);
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.on_lost = on_lost;
    cfg.ud = &x;
    cfg.cancel_grace_ms = 10000; /* the fake answers well within it */
    assert_int_equal(pgw_conn_new(&x.conn, &x.loop, &cfg), 0);
    char ci[256];
    snprintf(ci, sizeof ci,
             "host=127.0.0.1 port=%u user=fake dbname=fake sslmode=disable connect_timeout=3",
             (unsigned)fakepg_port(f));
    assert_int_equal(pgw_conn_connect(x.conn, ci, on_connect, &x), 0);
    run_until(&x, &x.connected, WAIT_MS);
    assert_int_equal(x.connect_status, 0);

    pgw_param_t p = pgw_int4(1);
    pgw_request_t r = PGW_QUERY("SELECT pg_sleep(30), $1::int4", &p, 1, on_req, &x.timed);
    r.timeout_ms = 100;
    assert_int_equal(pgw_conn_submit(x.conn, &r), 0);
    r = PGW_QUERY("SELECT $1::int4", &p, 1, on_req, &x.held);
    assert_int_equal(pgw_conn_submit(x.conn, &r), 0);

    run_until(&x, &x.held.calls, WAIT_MS);
    assert_int_equal(x.timed.calls, 1);
    assert_int_equal(x.timed.status, PGW_ETIMEDOUT);
    if (!x.held.calls) fail_msg("the request behind never completed (it was written?)");
    assert_int_equal(x.held.calls, 1);
    assert_int_equal(x.held.status, PGW_ECONNLOST);
    assert_int_equal(x.lost, 1);
    assert_int_equal(x.lost_err, PGW_ECONNLOST);
    char why[512];
    snprintf(why, sizeof why, "%s", pgw_conn_error_message(x.conn));

    assert_int_equal(pgw_conn_close(x.conn, on_closed, &x), 0);
    run_until(&x, &x.closed, WAIT_MS);
    assert_true(x.closed);
    assert_int_equal(uv_loop_close(&x.loop), 0);
    int script = fakepg_wait(f);
    /* The client closed the connection: had it written the held request,
     * it would wait for its answer, and the fake's EOF step give up. */
    if (script != 0) fail_msg("%s", fakepg_error(f));
    assert_int_equal(count_char(fakepg_received_types(f), 'S'), 1);
    if (!strstr(why, "cancel")) fail_msg("the connection closed for another reason: %s", why);
    fakepg_free(f);
    pgw_buf_free(&hello);
    pgw_buf_free(&answer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unconfirmed_cancel_closes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
