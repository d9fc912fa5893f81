/*
 * The blocking client: a pgw_conn_t on a private uv loop. Every call
 * queues its requests and runs the loop until their callbacks fired.
 */
#define _POSIX_C_SOURCE 200809L
#include "pgwire/client.h"
#include "conn/conn_internal.h"

#include <stdio.h>
#include <string.h>

#define PGW__CANCEL_TIMEOUT_MS 10000

struct pgw_client {
    uv_loop_t loop;
    pgw_conn_t *conn;
    const pgw_allocator_t *alloc;
    /* Copied at connect, read by pgw_client_cancel from any thread. */
    struct sockaddr_storage peer;
    int peer_is_pipe;
    char peer_path[256];
    int32_t pid;
    uint8_t key[256];
    size_t key_len;
    int have_key;
};

typedef struct waiter {
    int done;
    int status;
    pgw_result_t *res;
} waiter_t;

static void on_done(int status, pgw_result_t *res, void *ud)
{
    waiter_t *w = ud;
    w->done = 1;
    w->status = status;
    w->res = res;
}

/* Run the loop until *done. */
static void run_until(pgw_client_t *c, const int *done)
{
    while (!*done)
        if (uv_run(&c->loop, UV_RUN_ONCE) == 0 && !*done) break; /* nothing can complete it */
}

/* Hand a finished request's result to the caller. */
static int deliver(waiter_t *w, pgw_result_t **res)
{
    if (!w->done) w->status = PGW_ECONNLOST;
    int keep = res && (w->status == 0 || w->status == PGW_ESERVER);
    if (res) *res = keep ? w->res : NULL;
    if (!keep) pgw_result_free(w->res);
    return w->status;
}

/* Issue-then-wait for the request functions. rc is what the issuing call
 * returned. */
static int finish(pgw_client_t *c, int rc, waiter_t *w, pgw_result_t **res)
{
    if (rc < 0) {
        if (res) *res = NULL;
        return rc;
    }
    run_until(c, &w->done);
    return deliver(w, res);
}

/* ---------------------------------------------------------------- connect */

typedef struct connect_wait {
    int done;
    int status;
    char *errbuf;
    size_t errlen;
} connect_wait_t;

static void on_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    connect_wait_t *w = ud;
    w->done = 1;
    w->status = status;
    if (status < 0 && w->errbuf && w->errlen) {
        const char *msg = err && err->message ? err->message : pgw_strerror(status);
        snprintf(w->errbuf, w->errlen, "%s", msg);
    }
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    *(int *)ud = 1;
}

/* Keep what pgw_client_cancel needs, so that it never touches the conn. */
static void copy_cancel_info(pgw_client_t *c)
{
    pgw_conn_t *conn = c->conn;
    c->peer = conn->peer;
    c->peer_is_pipe = conn->peer_is_pipe;
    memcpy(c->peer_path, conn->peer_path, sizeof(c->peer_path));
    const uint8_t *key;
    if (conn->s && pgw_session_backend_key(conn->s, &c->pid, &key, &c->key_len) == 0 &&
        c->key_len <= sizeof(c->key)) {
        memcpy(c->key, key, c->key_len);
        c->have_key = 1;
    }
}

static void client_free(pgw_client_t *c)
{
    if (c->conn) {
        int closed = 0;
        if (pgw_conn_close(c->conn, on_closed, &closed) == 0) run_until(c, &closed);
        c->conn = NULL;
    }
    uv_run(&c->loop, UV_RUN_DEFAULT); /* anything left closing */
    uv_loop_close(&c->loop);
    pgw__free(c->alloc, c);
}

int pgw_client_connect_err(pgw_client_t **out, const char *conninfo, const pgw_conn_config_t *cfg,
                           char *errbuf, size_t errlen)
{
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (errbuf && errlen) errbuf[0] = 0;
    const pgw_allocator_t *a = pgw__alloc_or_default(cfg ? cfg->alloc : NULL);
    pgw_client_t *c = pgw__calloc(a, 1, sizeof(*c));
    if (!c) return PGW_ENOMEM;
    c->alloc = a;
    int rc = uv_loop_init(&c->loop);
    if (rc < 0) {
        pgw__free(a, c);
        return rc;
    }
    connect_wait_t w = {0, 0, errbuf, errlen};
    rc = pgw_conn_new(&c->conn, &c->loop, cfg);
    if (rc == 0) {
        rc = pgw_conn_connect(c->conn, conninfo, on_connected, &w);
        if (rc == 0) {
            run_until(c, &w.done);
            rc = w.done ? w.status : PGW_ECONNECT;
        } else if (errbuf && errlen) {
            snprintf(errbuf, errlen, "%s", pgw_strerror(rc));
        }
    }
    if (rc < 0) {
        client_free(c);
        return rc;
    }
    copy_cancel_info(c);
    *out = c;
    return 0;
}

int pgw_client_connect(pgw_client_t **out, const char *conninfo, const pgw_conn_config_t *cfg)
{
    return pgw_client_connect_err(out, conninfo, cfg, NULL, 0);
}

/* --------------------------------------------------------------- requests */

int pgw_client_exec(pgw_client_t *c, const char *sql, pgw_result_t **res)
{
    waiter_t w = {0, 0, NULL};
    if (!c) return PGW_EINVAL;
    return finish(c, pgw_conn_simple_query(c->conn, sql, on_done, &w), &w, res);
}

int pgw_client_query_flags(pgw_client_t *c, const char *sql, const pgw_param_t *params,
                           uint16_t nparams, unsigned flags, pgw_result_t **res)
{
    waiter_t w = {0, 0, NULL};
    if (!c) return PGW_EINVAL;
    return finish(c, pgw_conn_query_flags(c->conn, sql, params, nparams, flags, on_done, &w), &w,
                  res);
}

int pgw_client_query(pgw_client_t *c, const char *sql, const pgw_param_t *params, uint16_t nparams,
                     pgw_result_t **res)
{
    return pgw_client_query_flags(c, sql, params, nparams, 0, res);
}

/* The session gives one userdata to both callbacks of a streamed request:
 * the waiter comes first so on_done can take the same pointer. */
typedef struct rows_ctx {
    waiter_t w;
    pgw_row_cb row_cb;
    void *ud;
} rows_ctx_t;

static int rows_trampoline(const pgw_row_t *row, void *ud)
{
    rows_ctx_t *x = ud;
    return x->row_cb(row, x->ud);
}

int pgw_client_query_rows(pgw_client_t *c, const char *sql, const pgw_param_t *params,
                          uint16_t nparams, unsigned flags, pgw_row_cb row_cb, void *ud,
                          pgw_result_t **res)
{
    if (!c || !row_cb) return PGW_EINVAL;
    rows_ctx_t x = {{0, 0, NULL}, row_cb, ud};
    int rc =
        pgw_conn_query_rows(c->conn, sql, params, nparams, flags, rows_trampoline, on_done, &x);
    return finish(c, rc, &x.w, res);
}

int pgw_client_prepare(pgw_client_t *c, const char *name, const char *sql, const uint32_t *oids,
                       uint16_t nparams, pgw_result_t **res)
{
    waiter_t w = {0, 0, NULL};
    if (!c) return PGW_EINVAL;
    return finish(c, pgw_conn_prepare(c->conn, name, sql, oids, nparams, on_done, &w), &w, res);
}

int pgw_client_execute(pgw_client_t *c, const char *name, const pgw_param_t *params,
                       uint16_t nparams, pgw_result_t **res)
{
    waiter_t w = {0, 0, NULL};
    if (!c) return PGW_EINVAL;
    return finish(c, pgw_conn_execute(c->conn, name, params, nparams, 0, on_done, &w), &w, res);
}

/* Queue items[0..n) inside an open batch; returns how many were accepted
 * and sets *err to the first refusal. */
static size_t batch_queue(pgw_client_t *c, const pgw_client_batch_item_t *items, size_t n,
                          waiter_t *ws, int *err)
{
    for (size_t i = 0; i < n; i++) {
        const pgw_client_batch_item_t *it = &items[i];
        int rc = it->stmt ? pgw_conn_execute(c->conn, it->stmt, it->params, it->nparams, it->flags,
                                             on_done, &ws[i])
                          : pgw_conn_query_flags(c->conn, it->sql, it->params, it->nparams,
                                                 it->flags, on_done, &ws[i]);
        if (rc < 0) {
            *err = rc;
            return i;
        }
    }
    return n;
}

int pgw_client_batch(pgw_client_t *c, const pgw_client_batch_item_t *items, size_t n,
                     unsigned flags, pgw_result_t **results, int *statuses)
{
    if (!c || (n && (!items || !results))) return PGW_EINVAL;
    for (size_t i = 0; i < n; i++)
        results[i] = NULL;
    if (n == 0) return 0;
    waiter_t *ws = pgw__calloc(c->alloc, n, sizeof(*ws));
    if (!ws) return PGW_ENOMEM;
    int rc = pgw_conn_batch_begin(c->conn, flags);
    if (rc < 0) {
        pgw__free(c->alloc, ws);
        return rc;
    }
    int err = 0;
    size_t queued = batch_queue(c, items, n, ws, &err);
    waiter_t end = {0, 0, NULL};
    if (pgw_conn_batch_end(c->conn, on_done, &end) == 0) run_until(c, &end.done);
    pgw_result_free(end.res);
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        int st = i < queued ? deliver(&ws[i], &results[i]) : err;
        if (statuses) statuses[i] = st;
        if (st < 0 && !first) first = st;
    }
    pgw__free(c->alloc, ws);
    return first;
}

/* ----------------------------------------------------------------- cancel */

typedef struct blocking_cancel {
    pgw__sock_handle_t h;
    uv_timer_t timer;
    uv_connect_t creq;
    uv_write_t wreq;
    pgw_buf_t pkt;
    char rbuf[64];
    int status;
    int finished;
} blocking_cancel_t;

static void bc_finish(blocking_cancel_t *x, int status)
{
    if (x->finished) return;
    x->finished = 1;
    x->status = status;
    uv_close(&x->h.handle, NULL);
    uv_close((uv_handle_t *)&x->timer, NULL);
}

static void bc_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    blocking_cancel_t *x = h->data;
    *buf = uv_buf_init(x->rbuf, sizeof(x->rbuf));
}

static void bc_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    if (n < 0) bc_finish(st->data, n == UV_EOF || n == UV_ECONNRESET ? 0 : PGW_ECONNECT);
}

static void bc_written(uv_write_t *req, int status)
{
    if (status < 0) bc_finish(req->data, PGW_ECONNECT);
}

static void bc_connected(uv_connect_t *req, int status)
{
    blocking_cancel_t *x = req->data;
    if (status < 0) {
        bc_finish(x, PGW_ECONNECT);
        return;
    }
    uv_buf_t b = uv_buf_init((char *)x->pkt.data, (unsigned)x->pkt.len);
    if (uv_write(&x->wreq, &x->h.stream, &b, 1, bc_written) < 0 ||
        uv_read_start(&x->h.stream, bc_alloc, bc_read) < 0)
        bc_finish(x, PGW_ECONNECT);
}

static void bc_timeout(uv_timer_t *t)
{
    bc_finish(t->data, PGW_ETIMEDOUT);
}

int pgw_client_cancel(pgw_client_t *c)
{
    if (!c) return PGW_EINVAL;
    if (!c->have_key) return PGW_ENOTSUP;
    uv_loop_t loop;
    int rc = uv_loop_init(&loop);
    if (rc < 0) return rc;
    blocking_cancel_t x;
    memset(&x, 0, sizeof(x));
    pgw_buf_init(&x.pkt, c->alloc);
    rc = pgw_enc_cancel_request(&x.pkt, c->pid, c->key, c->key_len);
    if (rc == 0)
        rc = c->peer_is_pipe ? uv_pipe_init(&loop, &x.h.pipe, 0) : uv_tcp_init(&loop, &x.h.tcp);
    if (rc == 0) {
        x.h.handle.data = &x;
        x.creq.data = &x;
        x.wreq.data = &x;
        uv_timer_init(&loop, &x.timer);
        x.timer.data = &x;
        uv_timer_start(&x.timer, bc_timeout, PGW__CANCEL_TIMEOUT_MS, 0);
        if (c->peer_is_pipe) {
            uv_pipe_connect(&x.creq, &x.h.pipe, c->peer_path, bc_connected);
        } else {
            int crc =
                uv_tcp_connect(&x.creq, &x.h.tcp, (const struct sockaddr *)&c->peer, bc_connected);
            if (crc < 0) bc_finish(&x, PGW_ECONNECT);
        }
        uv_run(&loop, UV_RUN_DEFAULT);
        rc = x.status;
    }
    pgw_buf_free(&x.pkt);
    uv_loop_close(&loop);
    return rc;
}

/* -------------------------------------------------------------- accessors */

pgw_conn_t *pgw_client_conn(pgw_client_t *c)
{
    return c ? c->conn : NULL;
}

pgw_session_t *pgw_client_session(pgw_client_t *c)
{
    return c ? pgw_conn_session(c->conn) : NULL;
}

void pgw_client_close(pgw_client_t *c)
{
    if (c) client_free(c);
}
