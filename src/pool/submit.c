/*
 * The pool's one-shot requests and batches (driver_internal.h): sent on
 * the connection route.c picks, the caller's descriptors as they are,
 * their completions heard through driver hooks (session.h, "Driver
 * completions") to count them and to tell the caller PGW_ERETRY when the
 * request never ran or its connection died.
 */
#define _DEFAULT_SOURCE /* uv.h needs POSIX types */
#include "pool/driver_internal.h"

#include <string.h>

static int retry_status(const pconn_t *pc, int status, const pgw_result_t *res)
{
    if (status == PGW_ECONNLOST) return PGW_ERETRY;
    if (status == PGW_ESERVER && res) {
        const pgw_error_t *e = pgw_result_error(res);
        if (e && pgw_sqlstate_server_going_away(e->sqlstate)) return PGW_ERETRY;
    }
    /* The connection it waited on never came up: it never ran. That
     * includes a server of the host list that was reached but left for
     * not matching target_session_attrs (a standby before the primary, or
     * no primary yet during a failover), a connect_timeout, and the pool
     * closing a connection whose connect failed (not the pool closing). */
    if (!pc->was_ready && status < 0 &&
        (pgw_is_system_error(status) || status == PGW_ECONNECT || status == PGW_EDNS ||
         status == PGW_ETLS || status == PGW_ETARGET || status == PGW_ETIMEDOUT ||
         (status == PGW_ECANCELED && !pc->p->closing)))
        return PGW_ERETRY;
    return status;
}

/* One request (or a batch) of pc finished: count it and map its status. */
static int finish(pconn_t *pc, int status, const pgw_result_t *res)
{
    pgw_pool_t *p = pc->p;
    status = retry_status(pc, status, res);
    if (status == PGW_ERETRY) p->retried++;
    pgw__host_done(pc, status);
    return status;
}

static void done_on(pconn_t *pc)
{
    if (!pc->m) return;
    pgw__core_done(&pc->p->core, pc->m, pgw__pool_now_us());
    /* A connection that just became free starts its idle clock (and may
     * serve a waiter): the core's next deadline moved. */
    if (pc->m && pc->m->inflight == 0) pgw__pool_kick(pc->p);
}

/* The driver hooks of the pool's one-shot requests and batches: the pool
 * hears each completion just before the caller's callback, in time to
 * take a dead connection out of the rotation and to tell the caller
 * PGW_ERETRY. A batch counts once, at its end. */
static int on_request_done(void *ctx, size_t index, int status, pgw_result_t **res)
{
    (void)index;
    pconn_t *pc = ctx;
    pgw__pconn_before_callback(pc, status, *res);
    status = finish(pc, status, *res);
    done_on(pc);
    return status;
}

static int on_batch_done(void *ctx, size_t index, int status, pgw_result_t **res)
{
    if (index == PGW_DRIVER_BATCH) return on_request_done(ctx, index, status, res);
    pconn_t *pc = ctx;
    pgw__pconn_before_callback(pc, status, *res);
    return retry_status(pc, status, *res);
}

static void sent_on(pconn_t *pc)
{
    pgw__core_sent(&pc->p->core, pc->m);
    pgw__host_sent(pc);
    pc->p->submitted++;
}

/* Whether req may share a sync group with a statement before it (a batch
 * takes it). */
static int batchable(const pgw_request_t *req)
{
    return req->kind != PGW_REQ_SIMPLE && req->kind != PGW_REQ_FUNCTION_CALL &&
           req->kind != PGW_REQ_SYNC;
}

/* The connection for a one-shot request or batch of route
 * (read_your_writes set: every read-only one is; ryw: this one is).
 * *wait_lsn: see pgw__route_pick_ryw; with can_wait 0 (a request that
 * cannot wait in its own sync group: not batchable, or a batch), the
 * primary serves it instead of a standby it would wait on. */
static pconn_t *pick_for(pgw_pool_t *p, uint32_t route, int ryw, int can_wait, uint64_t *wait_lsn,
                         int *err)
{
    if (route == PGW_ROUTE_READ_ONLY && p->cfg.route && (ryw || p->cfg.read_your_writes == 1) &&
        p->cfg.read_your_writes) {
        int fail = p->cfg.ryw_fail;
        if (fail == PGW__RYW_WAIT && !can_wait) fail = PGW__RYW_PRIMARY;
        return pgw__route_pick_ryw(p, fail, wait_lsn, err);
    }
    *wait_lsn = 0;
    return pgw__route_pick(p, route, err);
}

/* A one-shot request or batch of route was sent on pc. */
static void sent_routed(pconn_t *pc, uint32_t route)
{
    sent_on(pc);
    if (route != PGW_ROUTE_READ_ONLY) pgw__ryw_after_write(pc);
}

/*
 * Waiting on a standby for the pool's commit LSN (ryw_fail 2): this
 * statement runs just before the request, in the request's own sync
 * group. It returns once the standby has replayed $1 (a position in bytes
 * from 0/0) or is no longer in recovery, polling every millisecond on the
 * server (no round trip), and fails with division_by_zero (PGW_SQLSTATE_DIVISION_BY_ZERO) once $2
 * ms have passed first: the request then never runs (the server skips it
 * to the Sync), and its caller hears PGW_ETIMEDOUT. Its text is constant,
 * so the statement cache prepares it once per connection.
 */
static const char wait_sql[] =
    "WITH RECURSIVE w(caught) AS ("
    "SELECT coalesce(NOT pg_is_in_recovery() OR "
    "pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0') >= $1::int8, false) "
    "UNION ALL "
    "SELECT coalesce(NOT pg_is_in_recovery() OR "
    "pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0') >= $1::int8, false) "
    "FROM w WHERE NOT caught "
    "AND clock_timestamp() < statement_timestamp() + $2::int4 * interval '1 millisecond' "
    "AND pg_sleep(0.001) IS NOT NULL) "
    "SELECT 1 / max(caught::int) FROM w";

typedef struct waited {
    pconn_t *pc;
    int status;           /* the wait's (PGW_ETIMEDOUT for division_by_zero) */
    pgw_result_t *error;  /* the wait's error result, taken, or NULL */
    pgw_driver_hook hook; /* the submitter's (pgw__pool_submit_driven), or NULL */
    void *ctx;
} waited_t;

/* The driver hook of a request sent behind the wait (a batch of two):
 * index 0 is the wait, 1 the caller's request, counted as a one-shot
 * request of pc; a request the wait's failure skipped gets the wait's
 * status (and its error result when the server sent one). */
static int on_waited(void *ctx, size_t index, int status, pgw_result_t **res)
{
    waited_t *w = ctx;
    if (index == 0) {
        if (status == 0) return status;
        const pgw_error_t *e = status == PGW_ESERVER ? pgw_result_error(*res) : NULL;
        if (e && e->sqlstate &&
            pgw_sqlstate_is(e->sqlstate, strlen(e->sqlstate), PGW_SQLSTATE_DIVISION_BY_ZERO)) {
            w->status = PGW_ETIMEDOUT;
            return status;
        }
        w->status = status;
        w->error = *res;
        return PGW_DRIVER_TAKEN;
    }
    if (index == PGW_DRIVER_BATCH) {
        pgw_result_free(w->error);
        pgw__free(w->pc->p->alloc, w);
        return status;
    }
    if (status == PGW_EABORTED && w->status) {
        status = w->status;
        pgw_result_free(*res);
        *res = w->error;
        w->error = NULL;
    }
    status = on_request_done(w->pc, 0, status, res);
    return w->hook ? w->hook(w->ctx, 0, status, res) : status;
}

static void drop_result(int status, pgw_result_t *res, void *ud)
{
    (void)status;
    (void)ud;
    pgw_result_free(res);
}

/* Send req on pc behind a wait for lsn; hook (may be NULL) hears its
 * completion after the pool, with ctx. */
static int submit_waiting(pconn_t *pc, const pgw_request_t *req, uint64_t lsn, pgw_driver_hook hook,
                          void *ctx)
{
    pgw_pool_t *p = pc->p;
    uint32_t wait_ms = p->cfg.ryw_wait_ms ? p->cfg.ryw_wait_ms : 1000;
    if (wait_ms > INT32_MAX) wait_ms = INT32_MAX;
    pgw_param_t params[2] = {pgw_int8((int64_t)lsn), pgw_int4((int32_t)wait_ms)};
    pgw_request_t two[2];
    two[0] = pgw_request_make(PGW_REQ_QUERY, wait_sql, NULL, params, 2, NULL, 0, drop_result, NULL);
    int rc = pgw_request_copy(&two[1], req);
    if (rc < 0) return rc;
    /* The wait has the request's deadline: both end by it. */
    two[0].timeout_ms = two[1].timeout_ms;
    waited_t *w = pgw__malloc(p->alloc, sizeof *w);
    if (!w) return PGW_ENOMEM;
    *w = (waited_t){pc, 0, NULL, hook, ctx};
    rc = pgw_conn_submit_batch_driven(pc->conn, two, 2, 0, NULL, NULL, on_waited, w);
    if (rc < 0) pgw__free(p->alloc, w);
    return rc;
}

static int submit_one(pgw_pool_t *p, const pgw_request_t *req, int ryw)
{
    int rc = 0;
    uint32_t route = pgw__route_of(req);
    uint64_t wait_lsn;
    pconn_t *pc = pick_for(p, route, ryw, batchable(req), &wait_lsn, &rc);
    if (!pc) return rc;
    rc = wait_lsn ? submit_waiting(pc, req, wait_lsn, NULL, NULL)
                  : pgw_conn_submit_driven(pc->conn, req, on_request_done, pc);
    if (rc == 0) sent_routed(pc, route);
    return rc;
}

int pgw_pool_submit(pgw_pool_t *p, const pgw_request_t *req)
{
    if (!p || !req || req->size == 0) return PGW_EINVAL;
    return submit_one(p, req, 0);
}

/* A one-shot request whose submitter hears its completion too (after the
 * pool, with the pool's status). */
typedef struct relay {
    pconn_t *pc;
    pgw_driver_hook hook;
    void *ctx;
} relay_t;

static int on_relayed_done(void *ctx, size_t index, int status, pgw_result_t **res)
{
    relay_t r = *(relay_t *)ctx;
    pgw__free(r.pc->p->alloc, ctx);
    status = on_request_done(r.pc, index, status, res);
    return r.hook(r.ctx, index, status, res);
}

int pgw__pool_submit_driven(void *pool, const pgw_request_t *req, pgw_driver_hook hook, void *ctx)
{
    pgw_pool_t *p = pool;
    if (!p || !req || req->size == 0 || !hook) return PGW_EINVAL;
    int rc = 0;
    uint32_t route = pgw__route_of(req);
    uint64_t wait_lsn;
    pconn_t *pc = pick_for(p, route, 0, batchable(req), &wait_lsn, &rc);
    if (!pc) return rc;
    if (wait_lsn) {
        rc = submit_waiting(pc, req, wait_lsn, hook, ctx);
        if (rc == 0) sent_routed(pc, route);
        return rc;
    }
    relay_t *r = pgw__malloc(p->alloc, sizeof *r);
    if (!r) return PGW_ENOMEM;
    *r = (relay_t){pc, hook, ctx};
    rc = pgw_conn_submit_driven(pc->conn, req, on_relayed_done, r);
    if (rc == 0)
        sent_routed(pc, route);
    else
        pgw__free(p->alloc, r);
    return rc;
}

int pgw_pool_submit_flags(pgw_pool_t *p, const pgw_request_t *req, unsigned flags)
{
    const unsigned known = PGW_POOL_READ_ONLY | PGW_POOL_READ_YOUR_WRITES;
    if (!p || !req || req->size == 0 || (flags & ~known)) return PGW_EINVAL;
    if ((flags & PGW_POOL_READ_YOUR_WRITES) && !(flags & PGW_POOL_READ_ONLY)) return PGW_EINVAL;
    if (!(flags & PGW_POOL_READ_ONLY)) return pgw_pool_submit(p, req);
    pgw_request_t r;
    int rc = pgw_request_copy(&r, req);
    if (rc < 0) return rc;
    r.route = PGW_ROUTE_READ_ONLY;
    return submit_one(p, &r, (flags & PGW_POOL_READ_YOUR_WRITES) != 0);
}

int pgw_pool_submit_batch(pgw_pool_t *p, const pgw_request_t *reqs, size_t n, unsigned flags,
                          pgw_result_cb done, void *ud)
{
    if (!p || !reqs || n == 0 || reqs[0].size == 0) return PGW_EINVAL;
    /* Routing is the descriptors' (pgw_request_t.route): one batch, one
     * connection, one route. */
    if (flags & ~(unsigned)PGW_BATCH_SYNC_EACH) return PGW_EINVAL;
    uint32_t route = pgw__route_of(reqs);
    for (size_t i = 1; i < n; i++)
        if (pgw__route_of(pgw_request_nth(reqs, i)) != route) return PGW_EINVAL;
    int rc = 0;
    uint64_t wait_lsn;
    pconn_t *pc = pick_for(p, route, 0, 0, &wait_lsn, &rc);
    if (!pc) return rc;
    rc = pgw_conn_submit_batch_driven(pc->conn, reqs, n, flags, done, ud, on_batch_done, pc);
    if (rc == 0) sent_routed(pc, route);
    return rc;
}
