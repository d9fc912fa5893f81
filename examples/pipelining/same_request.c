/*
 * One request described once (pgw_request_t) and handed to two layers: a
 * pgw_conn_t on a libuv loop (pgw_conn_submit, the answer arrives in
 * on_result) and the blocking pgw_client_t (pgw_client_run, the answer is
 * returned). Then one batch array, run as a unit of work with one Sync.
 * Prints what each layer got; exits 1 if they differ or anything failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <pgwire.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

typedef struct app {
    pgw_conn_t *conn;
    const pgw_request_t *req; /* submitted once connected */
    pgw_result_t *res;        /* what the connection answered */
    int status;
} app_t;

static void print_rows(const char *who, const pgw_result_t *res)
{
    for (size_t i = 0; i < pgw_result_nrows(res); i++) {
        int32_t n = 0;
        pgw_str_t bar = {NULL, 0}; /* points into res: valid until pgw_result_free */
        pgw_result_int4(res, i, 0, &n);
        pgw_result_text(res, i, 1, &bar);
        printf("%s: %d %.*s\n", who, (int)n, (int)bar.len, bar.p);
    }
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    (void)ud;
}

/* The connection's answer: keep it (the result outlives the connection). */
static void on_result(int status, pgw_result_t *res, void *ud)
{
    app_t *app = ud;
    app->status = status;
    app->res = res;
    pgw_conn_close(app->conn, on_closed, NULL);
}

static void on_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    app_t *app = ud;
    if (status == 0) status = pgw_conn_submit(conn, app->req); /* on_result fires once */
    if (status < 0) {
        fprintf(stderr, "connect or submit: %s %s\n", pgw_strerror(status),
                err && err->message ? err->message : "");
        app->status = status;
        pgw_conn_close(conn, on_closed, NULL);
    }
}

/* Same columns and bytes in every row. */
static int same_rows(const pgw_result_t *a, const pgw_result_t *b)
{
    if (pgw_result_nrows(a) != pgw_result_nrows(b) || pgw_result_ncols(a) != pgw_result_ncols(b))
        return 0;
    for (size_t i = 0; i < pgw_result_nrows(a); i++)
        for (size_t j = 0; j < pgw_result_ncols(a); j++) {
            pgw_value_t va, vb;
            if (pgw_result_value(a, i, j, &va) < 0 || pgw_result_value(b, i, j, &vb) < 0 ||
                va.len != vb.len || (va.len > 0 && memcmp(va.p, vb.p, (size_t)va.len) != 0))
                return 0;
        }
    return 1;
}

int main(void)
{
    app_t app = {NULL, NULL, NULL, 0};
    /* The descriptor: its SQL and parameters are read during each submit
     * call only, so it can be submitted again, anywhere. */
    pgw_param_t p[] = {pgw_int4(3)};
    pgw_request_t req =
        PGW_QUERY("SELECT g AS n, repeat('*', g) AS bar FROM generate_series(1, $1) g", p, 1,
                  on_result, &app);
    app.req = &req;

    /* 1. Asynchronously, on the caller's loop. */
    uv_loop_t *loop = uv_default_loop();
    if (pgw_conn_new(&app.conn, loop, NULL) < 0 ||
        pgw_conn_connect(app.conn, "", on_connected, &app) < 0) {
        fprintf(stderr, "cannot start the connection\n");
        return 1;
    }
    uv_run(loop, UV_RUN_DEFAULT); /* returns once the connection is closed */
    uv_loop_close(loop);
    if (app.status != 0) {
        fprintf(stderr, "connection: %s\n", pgw_strerror(app.status));
        pgw_result_free(app.res);
        return 1;
    }
    print_rows("conn", app.res);

    /* 2. The same descriptor, blocking (its on_result is not called: the
     * answer is returned). */
    pgw_client_t *db;
    int rc = pgw_client_connect(&db, "", NULL);
    if (rc < 0) {
        fprintf(stderr, "connect: %s\n", pgw_strerror(rc));
        pgw_result_free(app.res);
        return 1;
    }
    pgw_result_t *res = NULL;
    rc = pgw_client_run(db, &req, &res);
    int ok = rc == 0 && same_rows(app.res, res);
    if (rc == 0) print_rows("client", res);
    pgw_result_free(res);
    pgw_result_free(app.res);

    /* 3. A batch array: one Sync, one implicit transaction. The same array
     * could go to pgw_conn_submit_batch. */
    pgw_param_t two[] = {pgw_int4(2)};
    pgw_request_t batch[] = {
        req,
        PGW_QUERY("SELECT $1::int4 * 10", two, 1, NULL, NULL),
    };
    pgw_result_t *results[2] = {NULL, NULL};
    int statuses[2];
    rc = pgw_client_run_batch(db, batch, 2, 0, results, statuses);
    int32_t twenty = 0;
    ok = ok && rc == 0 && pgw_result_nrows(results[0]) == 3 &&
         pgw_result_int4(results[1], 0, 0, &twenty) == 0 && twenty == 20;
    printf("batch: %s, %zu rows, then %d\n", rc == 0 ? "ok" : pgw_strerror(rc),
           pgw_result_nrows(results[0]), (int)twenty);
    for (int i = 0; i < 2; i++)
        pgw_result_free(results[i]);
    pgw_client_close(db);
    printf("%s\n", ok ? "same rows on both layers" : "MISMATCH");
    return ok ? 0 : 1;
}
