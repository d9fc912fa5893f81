/*
 * The pool's one-shot requests and batches (driver_internal.h): sent on
 * the connection route.c picks, the caller's descriptors as they are,
 * their completions heard through driver hooks (session.h, "Driver
 * completions") to count them and to tell the caller PGW_ERETRY when the
 * request never ran or its connection died.
 */
#define _DEFAULT_SOURCE /* uv.h needs POSIX types */
#include "pool/driver_internal.h"

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

/* The connection for a one-shot request of route (read_your_writes set:
 * every read-only one is; ryw: this one is). */
static pconn_t *pick_for(pgw_pool_t *p, uint32_t route, int ryw, int *err)
{
    if (route == PGW_ROUTE_READ_ONLY && p->cfg.route && (ryw || p->cfg.read_your_writes == 1) &&
        p->cfg.read_your_writes)
        return pgw__route_pick_ryw(p, err);
    return pgw__route_pick(p, route, err);
}

/* A one-shot request or batch of route was sent on pc. */
static void sent_routed(pconn_t *pc, uint32_t route)
{
    sent_on(pc);
    if (route != PGW_ROUTE_READ_ONLY) pgw__ryw_after_write(pc);
}

static int submit_one(pgw_pool_t *p, const pgw_request_t *req, int ryw)
{
    int rc = 0;
    uint32_t route = pgw__route_of(req);
    pconn_t *pc = pick_for(p, route, ryw, &rc);
    if (!pc) return rc;
    rc = pgw_conn_submit_driven(pc->conn, req, on_request_done, pc);
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
    pconn_t *pc = pick_for(p, route, 0, &rc);
    if (!pc) return rc;
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
    pconn_t *pc = pick_for(p, route, 0, &rc);
    if (!pc) return rc;
    rc = pgw_conn_submit_batch_driven(pc->conn, reqs, n, flags, done, ud, on_batch_done, pc);
    if (rc == 0) sent_routed(pc, route);
    return rc;
}
