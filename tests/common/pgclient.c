/* Blocking-client helpers for integration tests (pgclient.h). */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"

#include "pgtest.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

pgw_client_t *pgt_client_open(void)
{
    char ci[512];
    pgt_require_server();
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect(&c, pgt_conninfo(ci, sizeof ci, NULL), NULL), 0);
    return c;
}

void pgt_client_exec_ok(pgw_client_t *c, const char *sql)
{
    pgw_result_t *res = NULL;
    int rc = pgw_client_exec(c, sql, &res);
    if (rc != 0)
        fail_msg("%s: %s %s", sql, pgw_err_name(rc),
                 res && pgw_result_error(res) ? pgw_result_error(res)->message : "");
    pgw_result_free(res);
}

int64_t pgt_client_int8(pgw_client_t *c, const char *sql)
{
    pgw_result_t *res = NULL;
    int rc = pgw_client_query(c, sql, NULL, 0, &res);
    if (rc != 0) fail_msg("%s: %s", sql, pgw_err_name(rc));
    int64_t v = -1;
    assert_int_equal(pgw_result_int8(res, 0, 0, &v), 0);
    pgw_result_free(res);
    return v;
}

static void on_deadline(uv_timer_t *t)
{
    *(int *)t->data = 1;
}

int pgt_loop_run_until(void *loop, const int *flag, int want, unsigned timeout_ms)
{
    int expired = 0;
    uv_timer_t t;
    uv_timer_init(loop, &t);
    t.data = &expired;
    uv_timer_start(&t, on_deadline, timeout_ms, 0);
    while (*flag < want && !expired)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *)&t, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    return *flag >= want;
}

static void conn_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)conn, (void)err;
    pgt_conn_t *f = ud;
    f->connected++;
    f->connect_status = status;
}

static void conn_trace(pgw_conn_t *conn, char dir, const uint8_t *msg, size_t len, void *ud)
{
    (void)conn;
    if (dir == 'F' && len > 0 && msg[0] == 'S') ((pgt_conn_t *)ud)->syncs_sent++;
}

static void conn_drained(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    ((pgt_conn_t *)ud)->drains++;
}

static void conn_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    ((pgt_conn_t *)ud)->closed++;
}

void pgt_conn_open(pgt_conn_t *f, const pgw_conn_config_t *given)
{
    char ci[512];
    pgt_require_server();
    memset(f, 0, sizeof *f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    pgw_conn_config_t cfg;
    if (given)
        cfg = *given;
    else
        pgw_conn_config_init(&cfg);
    if (!cfg.on_trace) cfg.on_trace = conn_trace;
    if (!cfg.on_drain) cfg.on_drain = conn_drained;
    cfg.ud = f;
    assert_int_equal(pgw_conn_new(&f->conn, &f->loop, &cfg), 0);
    assert_int_equal(
        pgw_conn_connect(f->conn, pgt_conninfo(ci, sizeof ci, NULL), conn_connected, f), 0);
    pgt_conn_run(f, &f->connected, 1);
    assert_int_equal(f->connect_status, 0);
}

void pgt_conn_run(pgt_conn_t *f, const int *flag, int want)
{
    assert_true(pgt_loop_run_until(&f->loop, flag, want, 60000));
}

typedef struct request_done {
    int done, status;
    pgw_result_t *res;
} request_done_t;

static void request_done(int status, pgw_result_t *res, void *ud)
{
    request_done_t *d = ud;
    d->status = status;
    d->res = res;
    d->done++;
}

int pgt_conn_request(pgt_conn_t *f, pgw_request_t r, pgw_result_t **res)
{
    request_done_t d = {0, 0, NULL};
    r.on_result = request_done;
    r.ud = &d;
    assert_int_equal(pgw_conn_submit(f->conn, &r), 0);
    pgt_conn_run(f, &d.done, 1);
    if (res)
        *res = d.res;
    else
        pgw_result_free(d.res);
    return d.status;
}

int pgt_conn_start_close(pgt_conn_t *f)
{
    return pgw_conn_close(f->conn, conn_closed, f);
}

void pgt_conn_close(pgt_conn_t *f)
{
    if (f->closed == 0) {
        assert_int_equal(pgt_conn_start_close(f), 0);
        pgt_conn_run(f, &f->closed, 1);
    }
    assert_int_equal(uv_run(&f->loop, UV_RUN_NOWAIT), 0);
    assert_int_equal(uv_loop_close(&f->loop), 0);
}
