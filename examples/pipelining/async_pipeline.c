/*
 * 100 queries issued in one loop turn on a libuv loop: they leave in one
 * write and their answers come back in order. Prints a summary; exits 1 if
 * any answer is wrong.
 */
#define _POSIX_C_SOURCE 200809L
#include <pgwire.h>
#include <stdio.h>
#include <uv.h>

#define N 100

typedef struct app {
    pgw_conn_t *conn;
    int answered;
    int wrong;
    pgw_conn_stats_t stats; /* taken when the last answer arrived */
} app_t;

typedef struct query {
    app_t *app;
    int64_t expect;
} query_t;

static query_t queries[N];

static void on_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    (void)ud;
}

static void on_result(int status, pgw_result_t *res, void *ud)
{
    query_t *q = ud;
    int64_t v = -1;
    if (status != 0 || pgw_result_int8(res, 0, 0, &v) != 0 || v != q->expect) q->app->wrong++;
    pgw_result_free(res);
    if (++q->app->answered == N) {
        pgw_conn_stats(q->app->conn, &q->app->stats);
        pgw_conn_close(q->app->conn, on_closed, NULL);
    }
}

static void on_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    app_t *app = ud;
    if (status < 0) {
        fprintf(stderr, "connect: %s %s\n", pgw_strerror(status), err ? err->message : "");
        app->wrong = N;
        pgw_conn_close(conn, on_closed, NULL);
        return;
    }
    for (int i = 0; i < N; i++) {
        queries[i].app = app;
        queries[i].expect = (int64_t)i * i;
        pgw_param_t p[] = {pgw_int8(i)};
        if (pgw_conn_query(conn, "SELECT $1::int8 * $1::int8", p, 1, on_result, &queries[i]) < 0)
            app->wrong++;
    }
}

int main(void)
{
    uv_loop_t *loop = uv_default_loop();
    app_t app = {NULL, 0, 0, {0, 0, 0, 0}};
    if (pgw_conn_new(&app.conn, loop, NULL) < 0 ||
        pgw_conn_connect(app.conn, "", on_connected, &app) < 0) {
        fprintf(stderr, "cannot start the connection\n");
        return 1;
    }
    uv_run(loop, UV_RUN_DEFAULT); /* returns once the connection is closed */
    /* writes: the startup packet, the password (if any), then the 100
     * queries together */
    printf("%d answers, %d wrong, %llu writes, %llu bytes out, %llu bytes in\n", app.answered,
           app.wrong, (unsigned long long)app.stats.writes, (unsigned long long)app.stats.bytes_out,
           (unsigned long long)app.stats.bytes_in);
    uv_loop_close(loop);
    return app.wrong == 0 && app.answered == N ? 0 : 1;
}
