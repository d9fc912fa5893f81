/*
 * What the deadline tests (test_deadline*.c) share: a connection on a loop
 * of its own or a shared one, recording its connect, loss and close; a
 * request outcome with the time its callback fired; a loop runner bounded
 * in time; the work a deadline cuts short. Header-only (static functions):
 * each test is its own program.
 */
#ifndef PGW_TESTS_DEADLINE_CONN_H
#define PGW_TESTS_DEADLINE_CONN_H

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

/* The work the deadline tests cut short: it ends on its own after DL_WORK_MS,
 * long after any deadline of theirs can fire (pgtime.h). */
#define DL_WORK_SQL "SELECT pg_sleep(30)"
#define DL_WORK_MS  30000.0

/* How long a test waits for a callback: until the work would have ended. */
#define DL_WAIT_MS 30000u

typedef struct outcome {
    int calls;
    int status;
    int32_t value; /* first column of row 0 as int4, when there is one */
    char sqlstate[6];
    int had_res;
    uint64_t at_ns; /* when the callback fired */
} outcome_t;

static inline void record(int status, pgw_result_t *res, void *ud)
{
    outcome_t *o = ud;
    o->calls++;
    o->status = status;
    o->at_ns = uv_hrtime();
    o->had_res = res != NULL;
    if (res && pgw_result_nrows(res) > 0) pgw_result_int4(res, 0, 0, &o->value);
    const pgw_error_t *e = res ? pgw_result_error(res) : NULL;
    if (e && e->sqlstate) snprintf(o->sqlstate, sizeof o->sqlstate, "%s", e->sqlstate);
    pgw_result_free(res);
}

typedef struct dl_conn {
    uv_loop_t own; /* used when no loop is given */
    uv_loop_t *loop;
    pgw_conn_t *conn;
    int connected, connect_status;
    int lost, lost_err;
    int closed;
} dl_conn_t;

static inline void dl_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    dl_conn_t *x = ud;
    (void)conn, (void)err;
    x->connected = 1;
    x->connect_status = status;
}

static inline void dl_lost(pgw_conn_t *conn, int err, void *ud)
{
    dl_conn_t *x = ud;
    (void)conn;
    x->lost++;
    x->lost_err = err;
}

static inline void dl_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    ((dl_conn_t *)ud)->closed = 1;
}

static inline void dl_tick(uv_timer_t *t)
{
    (void)t; /* only wakes the loop, so that the time limit is checked */
}

/* Run loop until *a and (b NULL or) *b are set, or limit_ms passed. */
static inline void dl_run(uv_loop_t *loop, const int *a, const int *b, unsigned limit_ms)
{
    uint64_t end = uv_hrtime() + (uint64_t)limit_ms * 1000000u;
    uv_timer_t t;
    uv_timer_init(loop, &t);
    uv_timer_start(&t, dl_tick, 20, 20);
    while (!(*a && (!b || *b)) && uv_hrtime() < end)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
}

/* dl_run for one flag, failing the test when the limit passed first. */
static inline void dl_spin(dl_conn_t *x, const int *flag, unsigned limit_ms)
{
    dl_run(x->loop, flag, NULL, limit_ms);
    assert_true(*flag);
}

/* Connect x (on loop, or on a loop of its own when NULL) with conninfo and
 * these config values; the connect must succeed. */
static inline void dl_open(dl_conn_t *x, uv_loop_t *loop, const char *conninfo, uint32_t default_ms,
                           uint32_t grace_ms)
{
    memset(x, 0, sizeof *x);
    x->loop = loop;
    if (!loop) {
        assert_int_equal(uv_loop_init(&x->own), 0);
        x->loop = &x->own;
    }
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.on_lost = dl_lost;
    cfg.ud = x;
    cfg.request_timeout_ms = default_ms;
    cfg.cancel_grace_ms = grace_ms;
    assert_int_equal(pgw_conn_new(&x->conn, x->loop, &cfg), 0);
    assert_int_equal(pgw_conn_connect(x->conn, conninfo, dl_connected, x), 0);
    dl_spin(x, &x->connected, 20000);
    assert_int_equal(x->connect_status, 0);
}

/* Close x (and its own loop, if it has one). */
static inline void dl_close(dl_conn_t *x)
{
    assert_int_equal(pgw_conn_close(x->conn, dl_closed, x), 0);
    dl_spin(x, &x->closed, DL_WAIT_MS);
    if (x->loop == &x->own) {
        assert_int_equal(uv_run(&x->own, UV_RUN_NOWAIT), 0);
        assert_int_equal(uv_loop_close(&x->own), 0);
    }
}

#endif
