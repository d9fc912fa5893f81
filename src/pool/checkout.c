/*
 * The pool's checkouts (driver_internal.h): each pgw_pool_acquire or
 * pgw_pool_tx_begin is a waiter of the core, answered from the loop (a
 * deferred delivery, never inside the caller's call); a released
 * connection is cleaned (ROLLBACK, or the reset statement) or closed as
 * the core decides.
 */
#define _DEFAULT_SOURCE /* uv.h needs POSIX types */
#include "pool/driver_internal.h"

struct pacq {
    pgw__waiter_t w;
    pgw_pool_t *p;
    pgw_pool_acquire_cb cb;
    void *ud;
    pconn_t *pc; /* granted */
    int status;
    char *begin_sql; /* tx_begin: NULL for a plain acquire */
    pacq_t *next;    /* deferred delivery */
};

/* ------------------------------------------------------- acquire delivery */

static void on_defer(uv_timer_t *t);

static void defer_push(pgw_pool_t *p, pacq_t *a)
{
    a->next = NULL;
    if (p->defer_tail)
        p->defer_tail->next = a;
    else
        p->defer_head = a;
    p->defer_tail = a;
    uv_timer_start(&p->defer, on_defer, 0, 0);
}

static void pacq_free(pgw_pool_t *p, pacq_t *a)
{
    pgw__free(p->alloc, a->begin_sql);
    pgw__free(p->alloc, a);
}

static void deliver(pacq_t *a)
{
    pgw_pool_t *p = a->p;
    if (a->status == 0 && a->pc && !a->pc->m && !a->begin_sql && !p->closing) {
        /* Lost between its grant and this delivery: never hand out a dead
         * connection; the waiter queues again (same deadline). */
        pconn_t *pc = a->pc;
        a->pc = NULL;
        pgw_pool_release(p, pc->conn);
        pgw__core_acquire(&p->core, &a->w, pgw__pool_now_us());
        pgw__pool_kick(p);
        return;
    }
    if (a->status != 0 && a->pc) { /* granted, but its BEGIN was refused */
        pgw_pool_release(p, a->pc->conn);
        a->pc = NULL;
    }
    if (a->status == 0 && a->pc)
        a->cb(p, 0, a->pc->conn, a->ud);
    else
        a->cb(p, a->status ? a->status : PGW_ECLOSED, NULL, a->ud);
    pacq_free(p, a);
}

static void on_defer(uv_timer_t *t)
{
    pgw_pool_t *p = t->data;
    pacq_t *a = p->defer_head;
    p->defer_head = p->defer_tail = NULL;
    while (a) {
        pacq_t *next = a->next;
        deliver(a);
        a = next;
    }
    pgw__pool_maybe_free(p);
}

/* ------------------------------------------------------ grant and failure */

static void on_begin(int status, pgw_result_t *res, void *ud)
{
    pacq_t *a = ud;
    pgw_pool_t *p = a->p;
    pgw_result_free(res);
    if (status == 0) {
        a->status = 0;
        deliver(a);
        return;
    }
    pgw_pool_release(p, a->pc->conn);
    a->pc = NULL;
    a->status = status;
    deliver(a);
}

void pgw__pool_grant(void *ud, pgw__waiter_t *w, pgw__member_t *m)
{
    pgw_pool_t *p = ud;
    pacq_t *a = (pacq_t *)w;
    a->pc = m->h;
    a->pc->out = 1;
    a->status = 0;
    phost_t *h = pgw__host_of(a->pc);
    if (h) h->acquires++;
    if (a->begin_sql) {
        pgw_request_t r = PGW_SIMPLE(a->begin_sql, on_begin, a);
        int rc = pgw_conn_submit(a->pc->conn, &r);
        if (rc == 0) return;
        /* Not accepted: back to the pool (the core is inside its serve:
         * the release is deferred with the failure). */
        a->status = rc;
    }
    defer_push(p, a);
}

void pgw__pool_fail_waiter(void *ud, pgw__waiter_t *w, int err)
{
    pgw_pool_t *p = ud;
    pacq_t *a = (pacq_t *)w;
    a->pc = NULL;
    a->status = err;
    defer_push(p, a);
}

/* ---------------------------------------------------------------- acquire */

static int acquire(pgw_pool_t *p, unsigned flags, uint32_t timeout_ms, const char *begin_sql,
                   pgw_pool_acquire_cb cb, void *ud)
{
    if (!p || !cb) return PGW_EINVAL;
    if (p->closing) return PGW_ECLOSED;
    pacq_t *a = pgw__calloc(p->alloc, 1, sizeof *a);
    if (!a) return PGW_ENOMEM;
    if (begin_sql && !(a->begin_sql = pgw__strdup(p->alloc, begin_sql))) {
        pgw__free(p->alloc, a);
        return PGW_ENOMEM;
    }
    a->p = p;
    a->cb = cb;
    a->ud = ud;
    uint32_t t =
        timeout_ms ? timeout_ms : (p->cfg.acquire_timeout_ms ? p->cfg.acquire_timeout_ms : 30000);
    uint64_t now = pgw__pool_now_us();
    a->w.deadline_us = t == PGW_TIMEOUT_NONE ? PGW__NEVER : now + (uint64_t)t * 1000;
    a->w.role = pgw__route_role_of_flags(flags);
    pgw__core_acquire(&p->core, &a->w, now);
    pgw__pool_kick(p);
    return 0;
}

int pgw_pool_acquire(pgw_pool_t *p, unsigned flags, uint32_t timeout_ms, pgw_pool_acquire_cb cb,
                     void *ud)
{
    return acquire(p, flags, timeout_ms, NULL, cb, ud);
}

int pgw_pool_tx_begin(pgw_pool_t *p, unsigned flags, uint32_t timeout_ms, const char *begin_sql,
                      pgw_pool_acquire_cb cb, void *ud)
{
    return acquire(p, flags, timeout_ms, begin_sql ? begin_sql : "BEGIN", cb, ud);
}

/* ---------------------------------------------------------------- release */

static pconn_t *checked_out(pgw_pool_t *p, pgw_conn_t *conn)
{
    if (!p || !conn) return NULL;
    pconn_t *pc = pgw_conn_driver_userdata(conn);
    if (!pc || pc->magic != PCONN_MAGIC || pc->p != p || !pc->out) return NULL;
    return pc;
}

/* pc's release is over (clean, cleaned, or closed): its waiter (the
 * blocking pool) looks again, after this turn of the loop. */
static void settle(pconn_t *pc)
{
    if (!pc->settled) return;
    /* Atomic: a blocking caller sleeping on the shared loop reads it
     * (pool/blocking.c). */
    __atomic_store_n(pc->settled, 1, __ATOMIC_RELEASE);
    pc->settled = NULL;
    uv_stop(pc->p->loop);
}

static void on_cleaned(int status, pgw_result_t *res, void *ud)
{
    pconn_t *pc = ud;
    pgw_pool_t *p = pc->p;
    settle(pc);
    pgw_session_t *s = pgw_conn_session(pc->conn);
    int ok = status == 0 && pgw_session_txn_status(s) == 'I';
    pgw_result_free(res);
    if (!pc->m) return;
    pgw__core_cleaned(&p->core, pc->m, ok, pgw__pool_now_us());
    pgw__pool_kick(p);
}

int pgw_pool_release(pgw_pool_t *p, pgw_conn_t *conn)
{
    return pgw__pool_release_settled(p, conn, NULL);
}

/* Clean pc (released, state CLEANING) with sql; the core hears how it went. */
static void clean(pconn_t *pc, const char *sql)
{
    pgw__member_t *m = pc->m;
    pgw_request_t r = PGW_SIMPLE(sql, on_cleaned, pc);
    if (pgw_conn_submit(pc->conn, &r) < 0) {
        settle(pc);
        if (pc->m) pgw__core_cleaned(&pc->p->core, m, 0, pgw__pool_now_us());
    }
}

/* A release with this action cleans the connection before it is kept. */
static int sends_first(int action)
{
    return action == PGW__REL_ROLLBACK || action == PGW__REL_RESET;
}

int pgw__pool_release_settled(pgw_pool_t *p, pgw_conn_t *conn, int *settled)
{
    pconn_t *pc = checked_out(p, conn);
    if (!pc) return PGW_EINVAL;
    pc->out = 0;
    /* The user's notification callback leaves with the user. */
    pgw_conn_set_notification_cb(conn, NULL, NULL);
    if (settled) *settled = 0;
    pc->settled = settled;
    if (!pc->m) { /* lost while checked out */
        settle(pc);
        pgw__pconn_close(pc);
        return 0;
    }
    pgw_session_t *s = pgw_conn_session(conn);
    int group_open = pgw_session_group_open(s);
    int action = pgw__core_release_action(&p->core, pgw_session_txn_status(s),
                                          pgw_session_pending(s) != 0, group_open);
    const char *sql = action == PGW__REL_ROLLBACK ? "ROLLBACK" : p->reset_sql;
    pgw__core_release(&p->core, pc->m, action, pgw__pool_now_us());
    if (sends_first(action))
        clean(pc, sql);
    else
        settle(pc);
    pgw__pool_kick(p);
    return 0;
}

int pgw__pool_release_waits(const pgw_pool_t *p, char txn, int pending, int group_open)
{
    return sends_first(pgw__core_release_action(&p->core, txn, pending, group_open));
}

/* ------------------------------------------------------------ transactions */

typedef struct txend {
    pgw_pool_t *p;
    pgw_conn_t *conn;
    pgw_result_cb cb;
    void *ud;
    int status;        /* the COMMIT's, once it completed */
    pgw_result_t *res; /* its result, held while its position is read */
    int tracked;       /* its position query follows: it finishes there */
} txend_t;

static void tx_finish(void *ud)
{
    txend_t *t = ud;
    txend_t c = *t;
    pgw__free(c.p->alloc, t);
    pgw_pool_release(c.p, c.conn);
    if (c.cb)
        c.cb(c.status, c.res, c.ud);
    else
        pgw_result_free(c.res);
}

static void on_tx_end(int status, pgw_result_t *res, void *ud)
{
    txend_t *t = ud;
    t->status = status;
    t->res = res;
    /* With read your writes, the COMMIT's position query was sent right
     * behind it: the connection is released once it answered. */
    if (!t->tracked) tx_finish(t);
}

int pgw_pool_tx_end(pgw_pool_t *p, pgw_conn_t *conn, int commit, pgw_result_cb cb, void *ud)
{
    if (!checked_out(p, conn)) return PGW_EINVAL;
    txend_t *t = pgw__malloc(p->alloc, sizeof *t);
    if (!t) return PGW_ENOMEM;
    *t = (txend_t){p, conn, cb, ud, 0, NULL, 0};
    pgw_request_t r = PGW_SIMPLE(commit ? "COMMIT" : "ROLLBACK", on_tx_end, t);
    int rc = pgw_conn_submit(conn, &r);
    if (rc < 0) {
        pgw__free(p->alloc, t);
        return rc;
    }
    if (commit) t->tracked = pgw__ryw_after_commit(p, conn, tx_finish, t) == 0;
    return 0;
}
