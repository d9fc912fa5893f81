/*
 * A pool on a libuv loop: 200 one-shot queries spread over its
 * connections without any checkout, then one transaction on a checked-out
 * connection. Prints the pool's counters; exits 1 if a request failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <pgwire.h>
#include <stdio.h>
#include <uv.h>

#define N 200

typedef struct app {
    pgw_pool_t *pool;
    int done, failed;
    int64_t expect[N];
} app_t;

static app_t app;

/* Everything finished: read the counters and close (the loop then ends). */
static void maybe_finish(void)
{
    if (app.done < N + 1) return;
    pgw_pool_stats_t st;
    pgw_pool_stats(app.pool, &st);
    printf("%d requests, %d failed; %u connections, %llu opened, %llu checkouts, %llu retried\n",
           app.done, app.failed, st.size, (unsigned long long)st.opened,
           (unsigned long long)st.acquires, (unsigned long long)st.retried);
    pgw_pool_close(app.pool);
}

static void on_result(int status, pgw_result_t *res, void *ud)
{
    int64_t *expect = ud, v = -1;
    /* PGW_ERETRY: the connection died under the request, which may or may
     * not have run; submit it again if it is safe to repeat. */
    if (status != 0 || pgw_result_int8(res, 0, 0, &v) != 0 || v != *expect) app.failed++;
    pgw_result_free(res);
    app.done++;
    maybe_finish();
}

static void on_committed(int status, pgw_result_t *res, void *ud)
{
    (void)ud;
    if (status != 0) app.failed++;
    printf("transaction: %s\n", status == 0 ? pgw_result_command_tag(res) : pgw_strerror(status));
    pgw_result_free(res);
    app.done++;
    maybe_finish();
}

/* Inside the transaction: the connection is ours until pgw_pool_tx_end. */
static void on_insert(int status, pgw_result_t *res, void *ud)
{
    pgw_conn_t *conn = ud;
    if (status != 0) app.failed++;
    pgw_result_free(res);
    pgw_pool_tx_end(app.pool, conn, status == 0, on_committed, NULL); /* COMMIT or ROLLBACK */
}

static void on_begun(pgw_pool_t *pool, int status, pgw_conn_t *conn, void *ud)
{
    (void)pool;
    (void)ud;
    if (status != 0) { /* no connection: nothing to release */
        fprintf(stderr, "tx_begin: %s\n", pgw_strerror(status));
        app.failed++;
        app.done++;
        maybe_finish();
        return;
    }
    pgw_conn_simple_query(conn,
                          "CREATE TEMP TABLE t (x int) ON COMMIT DROP; INSERT INTO t VALUES (1)",
                          on_insert, conn);
}

int main(void)
{
    uv_loop_t *loop = uv_default_loop();
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 2;
    cfg.max_size = 4;
    int rc = pgw_pool_new(&app.pool, loop, "", &cfg);
    if (rc < 0) {
        fprintf(stderr, "pool: %s\n", pgw_strerror(rc));
        return 1;
    }
    for (int i = 0; i < N; i++) {
        app.expect[i] = (int64_t)i * 3;
        pgw_param_t p[] = {pgw_int8(i)};
        if (pgw_pool_query(app.pool, "SELECT $1::int8 * 3", p, 1, on_result, &app.expect[i]) < 0) {
            app.failed++; /* refused: no callback will come */
            app.done++;
        }
    }
    if (pgw_pool_tx_begin(app.pool, 0, 0, NULL, on_begun, NULL) < 0) {
        app.failed++;
        app.done++;
    }
    maybe_finish();
    uv_run(loop, UV_RUN_DEFAULT); /* returns once the pool is closed */
    uv_loop_close(loop);
    return app.failed == 0 && app.done == N + 1 ? 0 : 1;
}
