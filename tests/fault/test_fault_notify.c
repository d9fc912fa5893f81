/*
 * The listener's event order, which a real server produces only by
 * timing: notifications that arrive between the LISTENs of a re-listen
 * are held and delivered after the READY event, in order; a connection
 * lost with held notifications reports a gap on the next one.
 */
#define _POSIX_C_SOURCE 200809L
#include "fakepg.h"
#include "pgwire/listen.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

typedef struct rec {
    int ready, lost, gap, retry, closed;
    int n, n_at_ready, n_at_gap;
    char payload[8][16];
} rec_t;

static void on_note(pgw_listener_t *l, int32_t pid, pgw_str_t ch, pgw_str_t pl, void *ud)
{
    rec_t *r = ud;
    assert_true(r->n < 8);
    snprintf(r->payload[r->n++], sizeof r->payload[0], "%.*s", (int)pl.len, pl.p);
}

static void on_event(pgw_listener_t *l, pgw_listener_event_t ev, int status, void *ud)
{
    rec_t *r = ud;
    if (ev == PGW_LISTENER_READY) r->ready++, r->n_at_ready = r->n;
    if (ev == PGW_LISTENER_LOST) r->lost++;
    if (ev == PGW_LISTENER_GAP) r->gap++, r->n_at_gap = r->n;
    if (ev == PGW_LISTENER_RETRY) r->retry++;
}

static void on_closed(pgw_listener_t *l, void *ud)
{
    ((rec_t *)ud)->closed++;
}

static void on_expire(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

static void spin(uv_loop_t *loop, const int *v, int want)
{
    int expired = 0;
    uv_timer_t t;
    uv_timer_init(loop, &t);
    t.data = &expired;
    uv_timer_start(&t, on_expire, 10000, 0);
    while (*v < want && !expired)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    assert_true(*v >= want);
}

/* The answer to one LISTEN simple query. */
static void listen_ok(pgw_buf_t *b)
{
    pgt_msg_command_complete(b, "LISTEN");
    pgt_msg_ready(b, 'I');
}

/* A listener on a and b (b may be NULL: a only) listening on a, b, c. */
static pgw_listener_t *open_listener(uv_loop_t *loop, fakepg_t *a, fakepg_t *b, rec_t *r)
{
    char ci[256];
    if (b)
        snprintf(ci, sizeof ci,
                 "host=127.0.0.1,127.0.0.1 port=%u,%u user=fake dbname=fake sslmode=disable",
                 (unsigned)fakepg_port(a), (unsigned)fakepg_port(b));
    else
        snprintf(ci, sizeof ci, "host=127.0.0.1 port=%u user=fake dbname=fake sslmode=disable",
                 (unsigned)fakepg_port(a));
    pgw_listener_config_t cfg;
    pgw_listener_config_init(&cfg);
    cfg.backoff_min_ms = 10;
    cfg.on_notification = on_note;
    cfg.on_event = on_event;
    cfg.ud = r;
    pgw_listener_t *l;
    assert_int_equal(pgw_listener_new(&l, loop, ci, &cfg), 0);
    assert_int_equal(pgw_listener_listen(l, "a", NULL, NULL), 0);
    assert_int_equal(pgw_listener_listen(l, "b", NULL, NULL), 0);
    assert_int_equal(pgw_listener_listen(l, "c", NULL, NULL), 0);
    return l;
}

static void test_held_until_ready(void **state)
{
    pgw_buf_t hello, answers, after;
    pgw_buf_init(&hello, NULL);
    pgw_buf_init(&answers, NULL);
    pgw_buf_init(&after, NULL);
    pgt_msg_startup_ok(&hello, "15.0", 4242, 7);
    listen_ok(&answers);
    pgt_msg_notification(&answers, 99, "a", "held1");
    listen_ok(&answers);
    pgt_msg_notification(&answers, 99, "b", "held2");
    listen_ok(&answers);
    pgt_msg_notification(&after, 99, "c", "after");
    fakepg_step_t steps[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0}, {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_EXPECT_UNTIL, 'Q', NULL, 3}, {FAKEPG_SEND, 0, answers.data, answers.len},
        {FAKEPG_SLEEP, 0, NULL, 50},         {FAKEPG_SEND, 0, after.data, after.len},
        {FAKEPG_EXPECT, 'X', NULL, 0},       {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f;
    assert_int_equal(fakepg_start(&f, steps, ARRAY_LEN(steps)), 0);
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec_t r;
    memset(&r, 0, sizeof r);
    pgw_listener_t *l = open_listener(&loop, f, NULL, &r);
    spin(&loop, &r.n, 3);
    assert_int_equal(r.ready, 1);
    assert_int_equal(r.n_at_ready, 0); /* READY came first */
    assert_string_equal(r.payload[0], "held1");
    assert_string_equal(r.payload[1], "held2");
    assert_string_equal(r.payload[2], "after");
    assert_int_equal(pgw_listener_close(l, on_closed, &r), 0);
    spin(&loop, &r.closed, 1);
    assert_int_equal(fakepg_wait(f), 0);
    fakepg_free(f);
    uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(uv_loop_close(&loop), 0);
    pgw_buf_free(&hello);
    pgw_buf_free(&answers);
    pgw_buf_free(&after);
}

/* The connection dies after one LISTEN and one held notification: the
 * notification is dropped with it, so the next connection (the second
 * fake server of the host list) reports a gap, never a clean READY. */
static void test_lost_with_held_is_a_gap(void **state)
{
    pgw_buf_t hello, cut, answers;
    pgw_buf_init(&hello, NULL);
    pgw_buf_init(&cut, NULL);
    pgw_buf_init(&answers, NULL);
    pgt_msg_startup_ok(&hello, "15.0", 4242, 7);
    listen_ok(&cut);
    pgt_msg_notification(&cut, 99, "a", "held1");
    for (int i = 0; i < 3; i++)
        listen_ok(&answers);
    pgt_msg_notification(&answers, 98, "b", "after-gap");
    fakepg_step_t first[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0},
        {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_EXPECT_UNTIL, 'Q', NULL, 3},
        {FAKEPG_SEND_CUT, 0, cut.data, cut.len},
    };
    fakepg_step_t second[] = {
        {FAKEPG_EXPECT_STARTUP, 0, NULL, 0}, {FAKEPG_SEND, 0, hello.data, hello.len},
        {FAKEPG_EXPECT_UNTIL, 'Q', NULL, 3}, {FAKEPG_SEND, 0, answers.data, answers.len},
        {FAKEPG_EXPECT, 'X', NULL, 0},       {FAKEPG_EXPECT_EOF, 0, NULL, 0},
    };
    fakepg_t *f1, *f2;
    assert_int_equal(fakepg_start(&f1, first, ARRAY_LEN(first)), 0);
    assert_int_equal(fakepg_start(&f2, second, ARRAY_LEN(second)), 0);
    uv_loop_t loop;
    uv_loop_init(&loop);
    rec_t r;
    memset(&r, 0, sizeof r);
    pgw_listener_t *l = open_listener(&loop, f1, f2, &r);
    spin(&loop, &r.lost, 1);
    /* The first server goes away for good (its port now refuses), before
     * the loop runs the reconnect. */
    assert_int_equal(fakepg_wait(f1), 0);
    fakepg_free(f1);
    spin(&loop, &r.n, 1);
    assert_int_equal(r.gap, 1);
    assert_int_equal(r.n_at_gap, 0);
    assert_int_equal(r.ready, 0);
    assert_string_equal(r.payload[0], "after-gap");
    assert_int_equal(pgw_listener_gaps(l), 1);
    assert_true(pgw_listener_is_ready(l));
    assert_int_equal(pgw_listener_close(l, on_closed, &r), 0);
    spin(&loop, &r.closed, 1);
    assert_int_equal(fakepg_wait(f2), 0);
    fakepg_free(f2);
    uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(uv_loop_close(&loop), 0);
    pgw_buf_free(&hello);
    pgw_buf_free(&cut);
    pgw_buf_free(&answers);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_held_until_ready),
        cmocka_unit_test(test_lost_with_held_is_a_gap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
