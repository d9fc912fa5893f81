/* Blocking-client helpers for integration tests (pgclient.h). */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"

#include "pgtest.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

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
