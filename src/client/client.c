/*
 * The blocking client: a pgw_conn_t on a private uv loop. Every call
 * queues its requests and runs the loop until their callbacks fired.
 * Written against the public API only (conn.h and libuv), as any program
 * could write it. A client of the blocking pool is attached to a pooled
 * connection on the pool's shared loop instead (shared_loop.c): its calls
 * are jobs posted to whoever runs that loop (see call), or hold the loop
 * while they run and wait.
 */
#define _POSIX_C_SOURCE 200809L
#include "pgwire/client.h"
#include "client/client_internal.h"
#include "client/client_notify.h"
#include "conn/loop.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

struct pgw_client {
    uv_loop_t *loop;                 /* its own, pgw__loop_take's (NULL when attached) */
    pgw__shared_loop_t *shared;      /* attached: the loop it runs on, else NULL */
    int depth;                       /* calls in progress (they nest) */
    pgw_notification_cb user_notify; /* attached: the connection's own hook */
    void *user_notify_ud;
    pgw_conn_t *conn;
    const pgw_allocator_t *alloc;
    /* Taken at connect, sent by pgw_client_cancel from any thread. */
    pgw_cancel_token_t *cancel;
    /* Notifications received during calls (notify.c). */
    pgw__notify_queue_t *notifies;
    /* Attached: the connection when the last call ended, and the job of
     * its release (client_internal.h). */
    pgw__client_rest_t rest;
    pgw__shared_job_t job;
};

/* Memory from the client's allocator (zeroed, with an overflow check). */
static void *client_calloc(const pgw_allocator_t *a, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) return NULL;
    size_t n = count * size;
    void *p = a->malloc(n ? n : 1, a->ud);
    if (p) memset(p, 0, n);
    return p;
}

static void client_dealloc(const pgw_allocator_t *a, void *p)
{
    if (p) a->free(p, a->ud);
}

typedef struct waiter {
    int done;
    int status;
    pgw_result_t *res;
    int keep_any; /* a COPY: its result goes out with any status it has one for */
} waiter_t;

/* A wait's flag: set by a callback on the loop, read by a thread of a
 * shared loop that may not be running it (shared_loop.c). */
static void mark_done(int *flag)
{
    __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
}

static void on_done(int status, pgw_result_t *res, void *ud)
{
    waiter_t *w = ud;
    w->status = status;
    w->res = res;
    mark_done(&w->done);
}

int pgw__client_turn(pgw_client_t *c, uv_run_mode mode)
{
    return c->shared ? pgw__shared_loop_turn(c->shared, mode) : uv_run(c->loop, mode);
}

void pgw__client_enter(pgw_client_t *c)
{
    if (c && c->shared && c->depth++ == 0) pgw__shared_loop_enter(c->shared);
}

/* Holding the loop, at the end of a call of an attached client. */
static void note_rest(pgw_client_t *c)
{
    pgw_session_t *s = pgw_conn_session(c->conn);
    c->rest = (pgw__client_rest_t){pgw_session_txn_status(s), pgw_session_pending(s) != 0,
                                   pgw_session_group_open(s)};
}

void pgw__client_leave(pgw_client_t *c)
{
    if (c && c->shared && --c->depth == 0) {
        note_rest(c);
        pgw__shared_loop_leave(c->shared);
    }
}

/* A blocking call waits anyway: a row callback's pause (PGW_ROW_PAUSE)
 * would only stall it, so reading goes on. */
static void keep_reading(void *client)
{
    pgw_client_t *c = client;
    if (pgw_conn_reading_paused(c->conn)) pgw_conn_resume_reading(c->conn);
}

/* Run the loop until *done. */
static void run_until(pgw_client_t *c, const int *done)
{
    if (c->shared) {
        (void)pgw__shared_loop_wait(c->shared, done, keep_reading, c);
        return;
    }
    while (!*done) {
        keep_reading(c);
        if (pgw__client_turn(c, UV_RUN_ONCE) == 0 && !*done) break; /* nothing can complete it */
    }
}

/* 1 if a result of the chain answers a COPY (one the request could not
 * carry: PGW_ECOPY, with the server's error or the COPY's tag). */
static int chain_has_copy(const pgw_result_t *r)
{
    for (; r; r = pgw_result_next(r))
        if (pgw_result_copy_direction(r)) return 1;
    return 0;
}

/* Hand a finished request's result to the caller. */
static int deliver(waiter_t *w, pgw_result_t **res)
{
    if (!w->done) w->status = PGW_ECONNLOST;
    int keep =
        res && (w->status == 0 || w->status == PGW_ESERVER || w->status == PGW_ESTMTINVALID ||
                w->status == PGW_ETIMEDOUT || (w->keep_any && w->res) || chain_has_copy(w->res));
    if (res) *res = keep ? w->res : NULL;
    if (!keep) pgw_result_free(w->res);
    return w->status;
}

/* ---------------------------------------------------------------- connect */

typedef struct connect_wait {
    int done;
    int status;
    char *errbuf;
    size_t errlen;
} connect_wait_t;

/* The connect's failure in errbuf: pgw_conn_error_message (libpq's
 * words for every attempt), else the code's description. */
static void connect_error(pgw_conn_t *conn, int status, char *errbuf, size_t errlen)
{
    if (!errbuf || !errlen) return;
    const char *why = pgw_conn_error_message(conn);
    snprintf(errbuf, errlen, "%s", why && *why ? why : pgw_strerror(status));
}

static void on_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    connect_wait_t *w = ud;
    (void)err; /* its text is in the connection's error message */
    w->status = status;
    if (status < 0) connect_error(conn, status, w->errbuf, w->errlen);
    mark_done(&w->done);
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    mark_done(ud);
}

static void client_free(pgw_client_t *c)
{
    if (c->conn) {
        int closed = 0;
        if (pgw_conn_close(c->conn, on_closed, &closed) == 0) run_until(c, &closed);
        c->conn = NULL;
    }
    /* Anything left closing; a uv_stop made outside a turn (a completion
     * while closing) ends a run early: run until none is left. */
    while (uv_run(c->loop, UV_RUN_DEFAULT) != 0)
        ;
    pgw__loop_give(c->loop);
    pgw_cancel_token_free(c->cancel);
    pgw__notify_queue_free(c->notifies);
    client_dealloc(c->alloc, c);
}

int pgw_client_connect_err(pgw_client_t **out, const char *conninfo, const pgw_conn_config_t *cfg,
                           char *errbuf, size_t errlen)
{
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (errbuf && errlen) errbuf[0] = 0;
    const pgw_allocator_t *a = cfg && cfg->alloc ? cfg->alloc : pgw_allocator_default();
    pgw_client_t *c = client_calloc(a, 1, sizeof(*c));
    if (!c) return PGW_ENOMEM;
    c->alloc = a;
    int rc = 0;
    c->loop = pgw__loop_take(&rc);
    if (!c->loop) {
        client_dealloc(a, c);
        return rc;
    }
    connect_wait_t w = {0, 0, errbuf, errlen};
    rc = pgw_conn_new(&c->conn, c->loop, cfg);
    if (rc == 0) rc = pgw__notify_queue_new(&c->notifies, a, c->conn, cfg);
    if (rc == 0) {
        rc = pgw_conn_connect(c->conn, conninfo, on_connected, &w);
        if (rc == 0) {
            run_until(c, &w.done);
            rc = w.done ? w.status : PGW_ECONNECT;
        } else {
            connect_error(c->conn, rc, errbuf, errlen);
        }
    }
    if (rc < 0) {
        client_free(c);
        return rc;
    }
    /* Without BackendKeyData (PGW_ENOTSUP) there is nothing to cancel with;
     * pgw_client_cancel says so. */
    rc = pgw_conn_cancel_token(c->conn, &c->cancel);
    if (rc < 0 && rc != PGW_ENOTSUP) {
        client_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int pgw_client_connect(pgw_client_t **out, const char *conninfo, const pgw_conn_config_t *cfg)
{
    return pgw_client_connect_err(out, conninfo, cfg, NULL, 0);
}

/* --------------------------------------------------------------- requests */

/* The client takes every completion of its requests through the driver
 * hook (session.h, "Driver completions"): the caller's descriptors go to the
 * connection unchanged, their on_row and COPY callbacks run with the
 * caller's ud, and their on_result is not called. */
typedef struct waits {
    waiter_t *each;  /* one per request */
    waiter_t end;    /* the batch's */
    uv_loop_t *loop; /* stopped at each completion: see take */
    /* A posted call (call_t, NULL otherwise): its last completion (the
     * batch's, or the one request's) ends it. */
    struct call *call;
} waits_t;

/*
 * A call of an attached client that is not inside another of its calls
 * goes to the shared loop as a job (shared_loop.c), as the pool's one-shot
 * requests do: whoever holds the loop submits it at its next turn, and the
 * calling thread sleeps until the last completion wakes it, once, without
 * taking the loop's ticket (no hand-over of the loop to submit, none to
 * return). The job is finished when both the submission has returned and
 * the last completion has come (holds), which may happen in either order.
 */
typedef struct call {
    pgw__shared_job_t job; /* first: the job is the call */
    pgw__shared_loop_t *s;
    pgw_client_t *c;
    const pgw_request_t *reqs;
    size_t n; /* requests of a batch; 0: one request */
    unsigned flags;
    waits_t *ws;
    int rc;
    size_t accepted; /* requests the session took */
    int holds;       /* on the loop: the submission and the last completion */
} call_t;

/* On the loop: one of the call's holds ends; the last finishes the job,
 * after which nothing touches it. */
static void call_drop(call_t *k)
{
    if (--k->holds) return;
    note_rest(k->c);
    pgw__shared_loop_finish(k->s, &k->job);
}

static int take(void *ctx, size_t index, int status, pgw_result_t **res)
{
    waits_t *ws = ctx;
    on_done(status, *res, index == PGW_DRIVER_BATCH ? &ws->end : &ws->each[index]);
    /* The loop's turn ends here (a completion from a timer would otherwise
     * be followed by a blocking poll): its waiter looks again. */
    uv_stop(ws->loop);
    call_t *k = ws->call;
    if (k && (index == PGW_DRIVER_BATCH || k->n == 0)) call_drop(k); /* last: may free ws */
    return PGW_DRIVER_TAKEN;
}

/* A COPY's result goes out with any status it has one for. */
static void expect(waiter_t *w, const pgw_request_t *req)
{
    memset(w, 0, sizeof *w);
    w->keep_any = req && req->size && req->kind == PGW_REQ_COPY;
}

/* Submit a batch of n requests (n 0: the one request reqs). Returns what
 * the connection returned; *accepted is how many requests the session
 * took (their completions will come). */
static int submit_requests(pgw_client_t *c, const pgw_request_t *reqs, size_t n, unsigned flags,
                           waits_t *ws, size_t *accepted)
{
    int rc;
    if (n == 0) {
        rc = pgw_conn_submit_driven(c->conn, reqs, take, ws);
        *accepted = rc == 0;
        return rc;
    }
    rc = pgw_conn_submit_batch_driven(c->conn, reqs, n, flags, NULL, NULL, take, ws);
    /* PGW_EBUSY and PGW_ECLOSED come from the connection before the
     * session saw the batch (or from a session that accepted none). */
    if (rc == 0)
        *accepted = n;
    else if (rc != PGW_EBUSY && rc != PGW_ECLOSED)
        *accepted = pgw_session_batch_accepted(pgw_conn_session(c->conn));
    else
        *accepted = 0;
    return rc;
}

/* On the loop: the posted call's submission. */
static int call_run(pgw__shared_job_t *job)
{
    call_t *k = (call_t *)job;
    k->holds = 2;
    size_t accepted = 0;
    int rc = submit_requests(k->c, k->reqs, k->n, k->flags, k->ws, &accepted);
    k->rc = rc;
    k->accepted = accepted;
    if (accepted == 0) k->holds--; /* no completion will come */
    call_drop(k);
    return 0;
}

/* 1 if no request of the call has a callback of the caller's (rows, COPY
 * data): nothing the loop's holder runs for it can pause the input
 * (PGW_ROW_PAUSE) or wait for the caller, which only a thread that runs
 * the loop while it waits takes care of (keep_reading). */
static int buffered(const pgw_request_t *reqs, size_t n)
{
/* The field is inside the caller's descriptor (an older header's is
 * shorter: pgw_request_copy) and set. */
#define SET_IN(r, f) ((r)->size >= offsetof(pgw_request_t, f) + sizeof((r)->f) && (r)->f)
    for (size_t i = 0; i < (n ? n : 1); i++) {
        const pgw_request_t *r = n ? pgw_request_nth(reqs, i) : reqs;
        if (!r || SET_IN(r, on_row) || SET_IN(r, copy_source) || SET_IN(r, on_copy_data) ||
            SET_IN(r, on_copy_start))
            return 0;
    }
    return 1;
#undef SET_IN
}

/* Submit and wait: as a posted job for an attached client outside its
 * own calls (buffered requests), else holding the loop (the client's, or
 * the shared one by pgw__client_enter) and running it until the last
 * completion. */
static int call(pgw_client_t *c, const pgw_request_t *reqs, size_t n, unsigned flags, waits_t *ws,
                size_t *accepted)
{
    if (c->shared && c->depth == 0 && buffered(reqs, n)) {
        call_t k = {.job = {.run = call_run},
                    .s = c->shared,
                    .c = c,
                    .reqs = reqs,
                    .n = n,
                    .flags = flags,
                    .ws = ws};
        ws->call = &k;
        pgw__shared_loop_post(k.s, &k.job);
        ws->call = NULL;
        *accepted = k.accepted;
        return k.rc;
    }
    pgw__client_enter(c);
    int rc = submit_requests(c, reqs, n, flags, ws, accepted);
    if (*accepted) run_until(c, n ? &ws->end.done : &ws->each[0].done);
    pgw__client_leave(c);
    return rc;
}

static int run_one(pgw_client_t *c, const pgw_request_t *req, pgw_result_t **res)
{
    if (!c) {
        if (res) *res = NULL;
        return PGW_EINVAL;
    }
    waiter_t w;
    expect(&w, req);
    waits_t ws = {&w, {0, 0, NULL, 0}, pgw_conn_loop(c->conn), NULL};
    size_t accepted;
    int rc = call(c, req, 0, 0, &ws, &accepted);
    if (rc < 0) {
        if (res) *res = NULL;
        return rc;
    }
    return deliver(&w, res);
}

int pgw_client_run(pgw_client_t *c, const pgw_request_t *req, pgw_result_t **res)
{
    return run_one(c, req, res);
}

/* A one-shot request of another thread, posted to a shared loop. */
typedef struct posted {
    pgw__shared_job_t job; /* first: the job is the call */
    pgw__shared_loop_t *s;
    pgw__driven_submit_fn submit;
    void *sctx;
    const pgw_request_t *req;
    waiter_t w;
} posted_t;

/* The request completed (on the loop): its thread returns. */
static int posted_take(void *ctx, size_t index, int status, pgw_result_t **res)
{
    posted_t *ps = ctx;
    (void)index; /* one request: 0 */
    on_done(status, *res, &ps->w);
    pgw__shared_loop_finish(ps->s, &ps->job);
    return PGW_DRIVER_TAKEN;
}

/* On the loop: submit the request (again at the next turn while no
 * connection can take it). Once submitted, its completion may already
 * have finished the job, whose memory is then gone. */
static int posted_run(pgw__shared_job_t *job)
{
    posted_t *ps = (posted_t *)job;
    int rc = ps->submit(ps->sctx, ps->req, posted_take, ps);
    if (rc == PGW_ECONNECT) return 1;
    if (rc < 0) {
        ps->w.status = rc;
        pgw__shared_loop_finish(ps->s, job);
    }
    return 0;
}

int pgw__client_run_posted(pgw__shared_loop_t *s, pgw__driven_submit_fn submit, void *sctx,
                           const pgw_request_t *req, pgw_result_t **res)
{
    posted_t ps = {.job = {.run = posted_run}, .s = s, .submit = submit, .sctx = sctx, .req = req};
    expect(&ps.w, req);
    pgw__shared_loop_post(s, &ps.job);
    if (!ps.w.done) { /* refused: never submitted */
        if (res) *res = NULL;
        return ps.w.status;
    }
    return deliver(&ps.w, res);
}

static int run_batch(pgw_client_t *c, const pgw_request_t *reqs, size_t n, unsigned flags,
                     pgw_result_t **results, int *statuses)
{
    if (!c || !n || !reqs || !results) return PGW_EINVAL;
    for (size_t i = 0; i < n; i++)
        results[i] = NULL;
    waits_t ws = {
        client_calloc(c->alloc, n, sizeof *ws.each), {0, 0, NULL, 0}, pgw_conn_loop(c->conn), NULL};
    int rc = ws.each ? 0 : PGW_ENOMEM;
    for (size_t i = 0; i < n && rc == 0; i++)
        expect(&ws.each[i], pgw_request_nth(reqs, i));
    size_t accepted = 0; /* a streamed batch refused part way ran these */
    if (rc == 0) rc = call(c, reqs, n, flags, &ws, &accepted);
    pgw_result_free(ws.end.res);
    int first = rc;
    for (size_t i = 0; i < n; i++) {
        int st = i >= accepted ? rc : deliver(&ws.each[i], &results[i]);
        if (statuses) statuses[i] = st;
        if (st < 0 && !first) first = st;
    }
    client_dealloc(c->alloc, ws.each);
    return first;
}

int pgw_client_run_batch(pgw_client_t *c, const pgw_request_t *reqs, size_t n, unsigned flags,
                         pgw_result_t **results, int *statuses)
{
    return run_batch(c, reqs, n, flags, results, statuses);
}

const pgw_allocator_t *pgw__client_alloc(const pgw_client_t *c)
{
    return c->alloc;
}

int32_t pgw_client_backend_pid(pgw_client_t *c)
{
    return c ? pgw_conn_backend_pid(c->conn) : 0;
}

void pgw_client_stmt_cache_stats(pgw_client_t *c, pgw_stmt_cache_stats_t *out)
{
    pgw__client_enter(c);
    pgw_conn_stmt_cache_stats(c ? c->conn : NULL, out);
    pgw__client_leave(c);
}

const char *pgw_client_refusal(const pgw_client_t *c)
{
    return c ? pgw_session_refusal(pgw_conn_session(c->conn)) : "";
}

/* ----------------------------------------------------------------- cancel */

int pgw_client_cancel(pgw_client_t *c)
{
    if (!c) return PGW_EINVAL;
    if (!c->cancel) return PGW_ENOTSUP;
    return pgw_cancel_token_send(c->cancel, 0); /* connect_timeout, as the conn's cancel */
}

/* -------------------------------------------------------------- accessors */

pgw__notify_queue_t *pgw__client_notify_queue(const pgw_client_t *c)
{
    return c->notifies;
}

pgw_conn_t *pgw_client_conn(pgw_client_t *c)
{
    return c ? c->conn : NULL;
}

pgw_session_t *pgw_client_session(pgw_client_t *c)
{
    return c ? pgw_conn_session(c->conn) : NULL;
}

int pgw_client_tls_info(const pgw_client_t *c, pgw_tls_info_t *out)
{
    if (!c) {
        if (out) memset(out, 0, sizeof *out);
        return PGW_EINVAL;
    }
    return pgw_conn_tls_info(c->conn, out);
}

void pgw_client_close(pgw_client_t *c)
{
    if (c && !c->shared) client_free(c); /* a pooled one goes back with its release */
}

/* --------------------------------------------------------------- attached */

int pgw__client_attach(pgw_client_t **out, pgw_conn_t *conn, pgw__shared_loop_t *s,
                       const pgw_conn_config_t *cfg)
{
    *out = NULL;
    const pgw_allocator_t *a = cfg && cfg->alloc ? cfg->alloc : pgw_allocator_default();
    pgw_client_t *c = client_calloc(a, 1, sizeof(*c));
    if (!c) return PGW_ENOMEM;
    c->alloc = a;
    c->conn = conn;
    c->shared = s;
    if (cfg) {
        c->user_notify = cfg->on_notification;
        c->user_notify_ud = cfg->ud;
    }
    int rc = pgw__notify_queue_new(&c->notifies, a, conn, cfg);
    if (rc == 0) rc = pgw_conn_cancel_token(conn, &c->cancel);
    if (rc < 0 && rc != PGW_ENOTSUP) {
        pgw__client_detach(c);
        return rc;
    }
    note_rest(c);
    *out = c;
    return 0;
}

void pgw__client_detach(pgw_client_t *c)
{
    if (c->notifies) pgw_conn_set_notification_cb(c->conn, c->user_notify, c->user_notify_ud);
    pgw_cancel_token_free(c->cancel);
    pgw__notify_queue_free(c->notifies);
    client_dealloc(c->alloc, c);
}

pgw__shared_loop_t *pgw__client_shared(const pgw_client_t *c)
{
    return c ? c->shared : NULL;
}

pgw__client_rest_t pgw__client_rest(const pgw_client_t *c)
{
    return c->rest;
}

pgw__shared_job_t *pgw__client_job(pgw_client_t *c)
{
    return &c->job;
}

pgw_client_t *pgw__client_of_job(pgw__shared_job_t *job)
{
    return (pgw_client_t *)(void *)((char *)job - offsetof(pgw_client_t, job));
}
