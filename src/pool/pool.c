/*
 * The pool on a libuv loop (pool.h): the core's decisions (core.c)
 * carried out over pgw_conn_t. Each member is a pconn (its connection);
 * one-shot requests are wrapped so that their completion is counted
 * against their connection and a connection's death is reported as
 * PGW_ERETRY; checkouts are waiters of the core, answered from the loop.
 */
#define _DEFAULT_SOURCE /* uv.h needs POSIX types */
#include "pgwire/pool.h"
#include "pgwire/conninfo.h"
#include "pool/pool_internal.h"
#include "util/internal.h"

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#define PCONN_MAGIC 0x706f6f6cu

typedef struct pconn pconn_t;
typedef struct pacq pacq_t;

struct pconn {
    uint32_t magic;
    pgw_pool_t *p;
    pgw_conn_t *conn;
    pgw__member_t *m; /* NULL once the core dropped it */
    pconn_t *next, *prev;
    uint8_t was_ready;
    uint8_t out;     /* checked out */
    uint8_t closing; /* pgw_conn_close called */
    int32_t host;    /* index in p->hosts once up; -1 before (or no memory) */
    uint32_t early;  /* requests sent before it was up, still pending */
};

/* Per-server totals (pgw_pool_hosts); live counts are taken from the
 * connections when asked. */
typedef struct phost {
    char host[256];
    char port[16];
    uint8_t role;
    uint64_t opened, lost, acquires, submitted, completed, retried;
} phost_t;

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

/* A one-shot request's wrapper: the caller's callbacks. */
typedef struct preq {
    pconn_t *pc;
    pgw_result_cb on_result;
    pgw_row_cb on_row;
    pgw_copy_source_cb copy_source;
    pgw_copy_data_cb on_copy_data;
    pgw_copy_start_cb on_copy_start;
    void *ud;
    struct preq *next_free;
} preq_t;

typedef struct pbatch {
    pconn_t *pc;
    pgw_result_cb done;
    void *ud;
    size_t n;
    preq_t items[];
} pbatch_t;

struct pgw_pool {
    uv_loop_t *loop;
    const pgw_allocator_t *alloc;
    pgw_pool_config_t cfg;  /* the caller's, copied */
    pgw_conn_config_t conn; /* what pooled connections get */
    char *conninfo;
    char *ci_role[PGW__NROLES];
    char *reset_sql;
    pgw__core_t core;
    uv_timer_t timer; /* the core's tick */
    uv_timer_t defer; /* acquire callbacks, from the loop */
    pacq_t *defer_head, *defer_tail;
    pconn_t *pconns; /* every connection not yet closed (circular) */
    size_t nconns;   /* pconns not yet freed */
    preq_t *free_reqs;
    size_t nfree_reqs;
    phost_t *hosts;
    size_t nhosts, caphosts;
    int closing;
    int handles_open;
    uint64_t retried, submitted;
};

static uint64_t now_us(void)
{
    return uv_hrtime() / 1000;
}

/* ------------------------------------------------------------ conn list */

static void pconn_link(pgw_pool_t *p, pconn_t *pc)
{
    if (!p->pconns) {
        pc->next = pc->prev = pc;
        p->pconns = pc;
    } else {
        pc->prev = p->pconns->prev;
        pc->next = p->pconns;
        pc->prev->next = pc;
        p->pconns->prev = pc;
    }
    p->nconns++;
}

static void pconn_unlink(pgw_pool_t *p, pconn_t *pc)
{
    if (pc->next == pc) {
        p->pconns = NULL;
    } else {
        pc->prev->next = pc->next;
        pc->next->prev = pc->prev;
        if (p->pconns == pc) p->pconns = pc->next;
    }
    pc->next = pc->prev = NULL;
}

/* ------------------------------------------------------------ per host */

static void copy_cut(char *dst, size_t n, const char *src)
{
    size_t len = src ? strlen(src) : 0;
    if (len >= n) len = n - 1;
    if (len) memcpy(dst, src, len);
    dst[len] = 0;
}

/* The entry of pc's server and role, made if new; -1 without memory. */
static int32_t host_index(pgw_pool_t *p, const pconn_t *pc, uint8_t role)
{
    char host[sizeof p->hosts->host], port[sizeof p->hosts->port];
    copy_cut(host, sizeof host, pgw_conn_host(pc->conn));
    copy_cut(port, sizeof port, pgw_conn_port(pc->conn));
    for (size_t i = 0; i < p->nhosts; i++) {
        const phost_t *h = &p->hosts[i];
        if (h->role == role && strcmp(h->host, host) == 0 && strcmp(h->port, port) == 0)
            return (int32_t)i;
    }
    if (p->nhosts == p->caphosts) {
        size_t cap = p->caphosts ? p->caphosts * 2 : 4;
        if (cap > INT32_MAX) return -1;
        phost_t *n = pgw__realloc(p->alloc, p->hosts, cap * sizeof *n);
        if (!n) return -1;
        p->hosts = n;
        p->caphosts = cap;
    }
    phost_t *h = &p->hosts[p->nhosts];
    memset(h, 0, sizeof *h);
    memcpy(h->host, host, sizeof host);
    memcpy(h->port, port, sizeof port);
    h->role = role;
    return (int32_t)p->nhosts++;
}

static phost_t *host_of(const pconn_t *pc)
{
    return pc->host >= 0 ? &pc->p->hosts[pc->host] : NULL;
}

/* A one-shot request (or batch) was sent on pc / completed with status. */
static void host_sent(pconn_t *pc)
{
    phost_t *h = host_of(pc);
    if (h)
        h->submitted++;
    else
        pc->early++;
}

static void host_done(pconn_t *pc, int status)
{
    phost_t *h = host_of(pc);
    if (!h) {
        if (pc->early) pc->early--;
        return;
    }
    h->completed++;
    if (status == PGW_ERETRY) h->retried++;
}

static void maybe_free(pgw_pool_t *p);

static void on_conn_closed(pgw_conn_t *conn, void *ud)
{
    pconn_t *pc = ud;
    pgw_pool_t *p = pc->p;
    pc->magic = 0;
    pgw__free(p->alloc, pc);
    p->nconns--;
    maybe_free(p);
}

/* Close pc's connection (once); pc stays until its close callback. */
static void pconn_close(pconn_t *pc)
{
    if (pc->closing) return;
    pc->closing = 1;
    pconn_unlink(pc->p, pc);
    pgw_conn_close(pc->conn, on_conn_closed, pc);
}

/* ----------------------------------------------------------------- timer */

static void on_timer(uv_timer_t *t);

/* Run the core's timers now and arm ours for the next. */
static void kick(pgw_pool_t *p)
{
    if (p->closing) return;
    uint64_t now = now_us();
    uint64_t next = pgw__core_tick(&p->core, now);
    if (next == PGW__NEVER) {
        uv_timer_stop(&p->timer);
        return;
    }
    uint64_t ms = next > now ? (next - now + 999) / 1000 : 0;
    uv_timer_start(&p->timer, on_timer, ms, 0);
}

static void on_timer(uv_timer_t *t)
{
    kick(t->data);
}

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
        pgw__core_acquire(&p->core, &a->w, now_us());
        kick(p);
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
    maybe_free(p);
}

/* ------------------------------------------------------ connection hooks */

static void hook_notice(pgw_conn_t *conn, const pgw_error_t *n, void *ud)
{
    pconn_t *pc = ud;
    pc->p->cfg.conn.on_notice(conn, n, pc->p->cfg.conn.ud);
}

static void hook_parameter(pgw_conn_t *conn, pgw_str_t name, pgw_str_t value, void *ud)
{
    pconn_t *pc = ud;
    pc->p->cfg.conn.on_parameter(conn, name, value, pc->p->cfg.conn.ud);
}

static void hook_trace(pgw_conn_t *conn, char dir, const uint8_t *msg, size_t len, void *ud)
{
    pconn_t *pc = ud;
    pc->p->cfg.conn.on_trace(conn, dir, msg, len, pc->p->cfg.conn.ud);
}

static void hook_lost(pgw_conn_t *conn, int err, void *ud)
{
    pconn_t *pc = ud;
    pgw_pool_t *p = pc->p;
    phost_t *h = host_of(pc);
    if (h && pc->m) h->lost++;
    if (pc->m) {
        pgw__member_t *m = pc->m;
        pc->m = NULL;
        pgw__core_lost(&p->core, m, now_us());
    }
    /* A checked-out connection stays until its holder releases it. */
    if (!pc->out) pconn_close(pc);
    kick(p);
}

static void on_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    pconn_t *pc = ud;
    pgw_pool_t *p = pc->p;
    if (!pc->m) return; /* dropped meanwhile (the pool closes) */
    pgw__member_t *m = pc->m;
    if (status == 0) {
        pc->was_ready = 1;
        pc->host = host_index(p, pc, m->role);
        phost_t *h = host_of(pc);
        if (h) {
            h->opened++;
            h->submitted += pc->early;
        }
        pc->early = 0;
        pgw__core_opened(&p->core, m, 0, now_us());
    } else {
        pc->m = NULL;
        pgw__core_opened(&p->core, m, status, now_us());
        pconn_close(pc);
    }
    kick(p);
}

/* ------------------------------------------------------------- core ops */

static int op_open(void *ud, pgw__member_t *m)
{
    pgw_pool_t *p = ud;
    pconn_t *pc = pgw__calloc(p->alloc, 1, sizeof *pc);
    if (!pc) return PGW_ENOMEM;
    pc->magic = PCONN_MAGIC;
    pc->p = p;
    pc->m = m;
    pc->host = -1;
    pgw_conn_config_t cc = p->conn;
    cc.ud = pc;
    int rc = pgw_conn_new(&pc->conn, p->loop, &cc);
    if (rc < 0) {
        pgw__free(p->alloc, pc);
        return rc;
    }
    pconn_link(p, pc);
    m->h = pc;
    rc = pgw_conn_connect(pc->conn, p->ci_role[m->role], on_connected, pc);
    if (rc < 0) {
        pc->m = NULL;
        m->h = NULL;
        pconn_close(pc);
        return rc;
    }
    return 0;
}

static void op_close(void *ud, pgw__member_t *m, int reason)
{
    pconn_t *pc = m->h;
    if (!pc) return;
    pc->m = NULL;
    pc->out = 0;
    pconn_close(pc);
}

static void on_checked(int status, pgw_result_t *res, void *ud)
{
    pconn_t *pc = ud;
    pgw_result_free(res);
    if (!pc->m) return;
    pgw__core_checked(&pc->p->core, pc->m, status == 0, now_us());
    kick(pc->p);
}

static void op_check(void *ud, pgw__member_t *m)
{
    pconn_t *pc = m->h;
    pgw_request_t r = PGW_SIMPLE("SELECT 1", on_checked, pc);
    if (pgw_conn_submit(pc->conn, &r) < 0) pgw__core_checked(&pc->p->core, m, 0, now_us());
}

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

static void op_grant(void *ud, pgw__waiter_t *w, pgw__member_t *m)
{
    pgw_pool_t *p = ud;
    pacq_t *a = (pacq_t *)w;
    a->pc = m->h;
    a->pc->out = 1;
    a->status = 0;
    phost_t *h = host_of(a->pc);
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

static void op_fail(void *ud, pgw__waiter_t *w, int err)
{
    pgw_pool_t *p = ud;
    pacq_t *a = (pacq_t *)w;
    a->pc = NULL;
    a->status = err;
    defer_push(p, a);
}

static const pgw__core_ops_t pool_ops = {op_open, op_close, op_check, op_grant, op_fail};

/* ------------------------------------------------------------------- new */

void pgw_pool_config_init(pgw_pool_config_t *cfg)
{
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    pgw_conn_config_init(&cfg->conn);
}

static int is_uri(const char *ci)
{
    return strncmp(ci, "postgresql://", 13) == 0 || strncmp(ci, "postgres://", 11) == 0;
}

/* conninfo with target_session_attrs=attrs appended (a later keyword
 * replaces an earlier one), or a copy when attrs is NULL. */
static char *conninfo_with(const pgw_allocator_t *a, const char *ci, const char *attrs)
{
    size_t n = strlen(ci), extra = attrs ? strlen(attrs) + 32 : 0;
    char *s = pgw__malloc(a, n + extra + 1);
    if (!s) return NULL;
    memcpy(s, ci, n + 1);
    if (!attrs) return s;
    if (is_uri(ci))
        strcat(s, strchr(ci, '?') ? "&" : "?");
    else
        strcat(s, " ");
    strcat(s, "target_session_attrs=");
    strcat(s, attrs);
    return s;
}

static char *dup_str(const pgw_allocator_t *a, const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = pgw__malloc(a, n);
    if (d) memcpy(d, s, n);
    return d;
}

static void pool_free_now(pgw_pool_t *p)
{
    while (p->free_reqs) {
        preq_t *r = p->free_reqs;
        p->free_reqs = r->next_free;
        pgw__free(p->alloc, r);
    }
    for (int i = 0; i < PGW__NROLES; i++)
        pgw__free(p->alloc, p->ci_role[i]);
    pgw__free(p->alloc, p->conninfo);
    pgw__free(p->alloc, p->reset_sql);
    pgw__free(p->alloc, p->hosts);
    pgw__free(p->alloc, p);
}

static void on_handle_closed(uv_handle_t *h)
{
    pgw_pool_t *p = h->data;
    if (--p->handles_open == 0) pool_free_now(p);
}

static void maybe_free(pgw_pool_t *p)
{
    if (!p->closing || p->nconns || p->defer_head || p->handles_open != 2) return;
    uv_close((uv_handle_t *)&p->timer, on_handle_closed);
    uv_close((uv_handle_t *)&p->defer, on_handle_closed);
}

int pgw_pool_new(pgw_pool_t **out, uv_loop_t *loop, const char *conninfo,
                 const pgw_pool_config_t *cfg)
{
    if (out) *out = NULL;
    if (!out || !loop || !conninfo) return PGW_EINVAL;
    pgw_pool_config_t c;
    pgw_pool_config_init(&c);
    if (cfg) pgw__copy_sized(&c, sizeof c, cfg);
    c.size = sizeof c;
    const pgw_allocator_t *a = c.conn.alloc;
    pgw_conninfo_t *parsed = NULL;
    int rc = pgw_conninfo_parse(&parsed, conninfo, a, NULL, 0);
    pgw_conninfo_free(parsed);
    if (rc < 0) return rc == PGW_ENOMEM ? rc : PGW_ECONNINFO;

    pgw_pool_t *p = pgw__calloc(a, 1, sizeof *p);
    if (!p) return PGW_ENOMEM;
    p->loop = loop;
    p->alloc = a;
    p->cfg = c;
    p->conninfo = dup_str(a, conninfo);
    p->ci_role[PGW__ROLE_RW] = conninfo_with(a, conninfo, c.route ? "read-write" : NULL);
    p->ci_role[PGW__ROLE_RO] = conninfo_with(a, conninfo, c.route ? "prefer-standby" : NULL);
    p->reset_sql = dup_str(a, c.reset_sql);
    p->cfg.reset_sql = p->reset_sql;
    if (!p->conninfo || !p->ci_role[0] || !p->ci_role[1] || (c.reset_sql && !p->reset_sql)) {
        pool_free_now(p);
        return PGW_ENOMEM;
    }
    /* Pooled connections: the pool's own hooks around the caller's. */
    p->conn = c.conn;
    p->conn.on_notice = c.conn.on_notice ? hook_notice : NULL;
    p->conn.on_parameter = c.conn.on_parameter ? hook_parameter : NULL;
    p->conn.on_trace = c.conn.on_trace ? hook_trace : NULL;
    p->conn.on_notification = NULL;
    p->conn.on_drain = NULL;
    p->conn.on_lost = hook_lost;

    pgw__core_cfg_t cc = {0};
    cc.min_size = c.min_size;
    cc.max_size = c.max_size;
    cc.max_connecting = c.max_connecting;
    cc.pipeline_target = c.pipeline_target;
    cc.backoff_min_us = (uint64_t)(c.backoff_min_ms ? c.backoff_min_ms : 50) * 1000;
    cc.backoff_max_us = (uint64_t)(c.backoff_max_ms ? c.backoff_max_ms : 5000) * 1000;
    cc.max_lifetime_us = (uint64_t)c.max_lifetime_ms * 1000;
    cc.lifetime_jitter_us = (uint64_t)c.lifetime_jitter_ms * 1000;
    cc.idle_timeout_us = (uint64_t)c.idle_timeout_ms * 1000;
    cc.liveness_after_us = (uint64_t)c.liveness_after_ms * 1000;
    cc.route = c.route;
    cc.reset_on_release = p->reset_sql != NULL;
    cc.seed = uv_hrtime() | 1;
    pgw__core_init(&p->core, &cc, &pool_ops, p, a);

    uv_timer_init(loop, &p->timer);
    uv_timer_init(loop, &p->defer);
    p->timer.data = p->defer.data = p;
    p->handles_open = 2;
    kick(p); /* opens min_size (their connects run on the loop) */
    *out = p;
    return 0;
}

void pgw_pool_close(pgw_pool_t *p)
{
    if (!p || p->closing) return;
    p->closing = 1;
    uv_timer_stop(&p->timer);
    pgw__core_shutdown(&p->core); /* waiters: ECLOSED (deferred); members closed */
    while (p->pconns) {
        pconn_t *pc = p->pconns;
        pc->m = NULL;
        pc->out = 0;
        pconn_close(pc);
    }
    maybe_free(p);
}

/* --------------------------------------------------------------- one-shot */

static int retry_status(const pconn_t *pc, int status, const pgw_result_t *res)
{
    if (status == PGW_ECONNLOST) return PGW_ERETRY;
    if (status == PGW_ESERVER && res) {
        const pgw_error_t *e = pgw_result_error(res);
        if (e && e->sqlstate && strncmp(e->sqlstate, "57P0", 4) == 0 && e->sqlstate[4] >= '1' &&
            e->sqlstate[4] <= '3' && e->sqlstate[5] == 0)
            return PGW_ERETRY;
    }
    /* The connection it waited on never came up: it never ran. That
     * includes a server of the host list that was reached but left for
     * not matching target_session_attrs (a standby before the primary, or
     * no primary yet during a failover), a connect_timeout, and the pool
     * closing a connection whose connect failed (not the pool closing). */
    if (!pc->was_ready && status < 0 &&
        (status > -1000 || status == PGW_ECONNECT || status == PGW_EDNS || status == PGW_ETLS ||
         status == PGW_ETARGET || status == PGW_ETIMEDOUT ||
         (status == PGW_ECANCELED && !pc->p->closing)))
        return PGW_ERETRY;
    return status;
}

static preq_t *preq_get(pgw_pool_t *p)
{
    preq_t *r = p->free_reqs;
    if (r) {
        p->free_reqs = r->next_free;
        p->nfree_reqs--;
        return r;
    }
    return pgw__malloc(p->alloc, sizeof *r);
}

static void preq_put(pgw_pool_t *p, preq_t *r)
{
    if (p->nfree_reqs >= 4096 || p->closing) {
        pgw__free(p->alloc, r);
        return;
    }
    r->next_free = p->free_reqs;
    p->free_reqs = r;
    p->nfree_reqs++;
}

static int w_row(const pgw_row_t *row, void *ud)
{
    preq_t *r = ud;
    return r->on_row(row, r->ud);
}

static int w_copy_source(pgw_buf_t *out, size_t room, void *ud)
{
    preq_t *r = ud;
    return r->copy_source(out, room, r->ud);
}

static int w_copy_data(const uint8_t *data, size_t len, void *ud)
{
    preq_t *r = ud;
    return r->on_copy_data(data, len, r->ud);
}

static int w_copy_start(const pgw_copy_info_t *info, void *ud)
{
    preq_t *r = ud;
    return r->on_copy_start(info, r->ud);
}

/* One request of pc finished: count it and map its status. */
static int finish(pconn_t *pc, int status, const pgw_result_t *res)
{
    pgw_pool_t *p = pc->p;
    status = retry_status(pc, status, res);
    if (status == PGW_ERETRY) p->retried++;
    host_done(pc, status);
    return status;
}

static void done_on(pconn_t *pc)
{
    if (!pc->m) return;
    pgw__core_done(&pc->p->core, pc->m, now_us());
    /* A connection that just became free starts its idle clock (and may
     * serve a waiter): the core's next deadline moved. */
    if (pc->m && pc->m->inflight == 0) kick(pc->p);
}

static void w_result(int status, pgw_result_t *res, void *ud)
{
    preq_t *r = ud;
    pconn_t *pc = r->pc;
    pgw_pool_t *p = pc->p;
    pgw_result_cb cb = r->on_result;
    void *cud = r->ud;
    preq_put(p, r);
    status = finish(pc, status, res);
    done_on(pc);
    if (cb)
        cb(status, res, cud);
    else
        pgw_result_free(res);
}

/* Point a copy of a caller's descriptor at the wrapper w. */
static void wrap(pgw_request_t *out, const pgw_request_t *in, preq_t *w, pconn_t *pc)
{
    pgw_request_copy(out, in);
    w->pc = pc;
    w->on_result = out->on_result;
    w->on_row = out->on_row;
    w->copy_source = out->copy_source;
    w->on_copy_data = out->on_copy_data;
    w->on_copy_start = out->on_copy_start;
    w->ud = out->ud;
    out->ud = w;
    out->on_result = w_result;
    if (out->on_row) out->on_row = w_row;
    if (out->copy_source) out->copy_source = w_copy_source;
    if (out->on_copy_data) out->on_copy_data = w_copy_data;
    if (out->on_copy_start) out->on_copy_start = w_copy_start;
}

static pconn_t *pick(pgw_pool_t *p, unsigned flags, int *err)
{
    if (p->closing) {
        *err = PGW_ECLOSED;
        return NULL;
    }
    int role = (flags & PGW_POOL_READ_ONLY) ? PGW__ROLE_RO : PGW__ROLE_RW;
    pgw__member_t *m = pgw__core_pick(&p->core, now_us(), role, err);
    return m ? m->h : NULL;
}

/* pc refused a request with rc: a connection still opening refuses while
 * it moves from an abandoned attempt (a host that did not match
 * target_session_attrs) to the next host, which is when the requests it
 * carried complete with PGW_ERETRY; a request resubmitted from such a
 * callback then goes to another connection (reserved from one-shot work
 * for the time of the pick, as for a waiter). */
static pconn_t *pick_other(pgw_pool_t *p, pconn_t *pc, int rc, unsigned flags, int *err)
{
    if (rc != PGW_ECLOSED || pc->was_ready || !pc->m || pc->closing) return NULL;
    uint8_t drain = pc->m->drain;
    pc->m->drain = 1;
    pconn_t *alt = pick(p, flags, err);
    if (pc->m) pc->m->drain = drain;
    return alt != pc ? alt : NULL;
}

int pgw_pool_submit_flags(pgw_pool_t *p, const pgw_request_t *req, unsigned flags)
{
    if (!p || !req || req->size == 0) return PGW_EINVAL;
    int rc = 0;
    pconn_t *pc = pick(p, flags, &rc);
    if (!pc) return rc;
    preq_t *w = preq_get(p);
    if (!w) return PGW_ENOMEM;
    pgw_request_t r;
    wrap(&r, req, w, pc);
    rc = pgw_conn_submit(pc->conn, &r);
    pconn_t *alt;
    if (rc < 0 && (alt = pick_other(p, pc, rc, flags, &(int){0})) != NULL) {
        pc = alt;
        w->pc = pc;
        rc = pgw_conn_submit(pc->conn, &r);
    }
    if (rc < 0) {
        preq_put(p, w);
        return rc;
    }
    pgw__core_sent(&p->core, pc->m);
    host_sent(pc);
    p->submitted++;
    return 0;
}

int pgw_pool_submit(pgw_pool_t *p, const pgw_request_t *req)
{
    return pgw_pool_submit_flags(p, req, 0);
}

static void b_item(int status, pgw_result_t *res, void *ud)
{
    preq_t *r = ud;
    status = retry_status(r->pc, status, res);
    if (r->on_result)
        r->on_result(status, res, r->ud);
    else
        pgw_result_free(res);
}

static void b_done(int status, pgw_result_t *res, void *ud)
{
    pbatch_t *b = ud;
    pconn_t *pc = b->pc;
    pgw_pool_t *p = pc->p;
    pgw_result_cb cb = b->done;
    void *cud = b->ud;
    pgw__free(p->alloc, b);
    status = finish(pc, status, res);
    done_on(pc);
    if (cb)
        cb(status, res, cud);
    else
        pgw_result_free(res);
}

int pgw_pool_submit_batch(pgw_pool_t *p, const pgw_request_t *reqs, size_t n, unsigned flags,
                          pgw_result_cb done, void *ud)
{
    if (!p || !reqs || n == 0 || reqs[0].size == 0 || n > SIZE_MAX / 2 / sizeof(pgw_request_t))
        return PGW_EINVAL;
    int rc = 0;
    pconn_t *pc = pick(p, 0, &rc);
    if (!pc) return rc;
    pbatch_t *b = pgw__malloc(p->alloc, sizeof *b + n * sizeof(preq_t));
    pgw_request_t *rs = pgw__malloc(p->alloc, n * sizeof *rs);
    if (!b || !rs) {
        pgw__free(p->alloc, b);
        pgw__free(p->alloc, rs);
        return PGW_ENOMEM;
    }
    b->pc = pc;
    b->done = done;
    b->ud = ud;
    b->n = n;
    for (size_t i = 0; i < n; i++) {
        wrap(&rs[i], pgw_request_nth(reqs, i), &b->items[i], pc);
        rs[i].on_result = b_item;
    }
    rc = pgw_conn_submit_batch(pc->conn, rs, n, flags, b_done, b);
    pconn_t *alt;
    if (rc < 0 && (alt = pick_other(p, pc, rc, 0, &(int){0})) != NULL) {
        pc = alt;
        b->pc = pc;
        for (size_t i = 0; i < n; i++)
            b->items[i].pc = pc;
        rc = pgw_conn_submit_batch(pc->conn, rs, n, flags, b_done, b);
    }
    pgw__free(p->alloc, rs);
    if (rc < 0) {
        pgw__free(p->alloc, b);
        return rc;
    }
    pgw__core_sent(&p->core, pc->m);
    host_sent(pc);
    p->submitted++;
    return 0;
}

/* ---------------------------------------------------------------- checkout */

static int acquire(pgw_pool_t *p, unsigned flags, uint32_t timeout_ms, const char *begin_sql,
                   pgw_pool_acquire_cb cb, void *ud)
{
    if (!p || !cb) return PGW_EINVAL;
    if (p->closing) return PGW_ECLOSED;
    pacq_t *a = pgw__calloc(p->alloc, 1, sizeof *a);
    if (!a) return PGW_ENOMEM;
    if (begin_sql && !(a->begin_sql = dup_str(p->alloc, begin_sql))) {
        pgw__free(p->alloc, a);
        return PGW_ENOMEM;
    }
    a->p = p;
    a->cb = cb;
    a->ud = ud;
    uint32_t t =
        timeout_ms ? timeout_ms : (p->cfg.acquire_timeout_ms ? p->cfg.acquire_timeout_ms : 30000);
    uint64_t now = now_us();
    a->w.deadline_us = t == PGW_TIMEOUT_NONE ? PGW__NEVER : now + (uint64_t)t * 1000;
    a->w.role = (flags & PGW_POOL_READ_ONLY) ? PGW__ROLE_RO : PGW__ROLE_RW;
    pgw__core_acquire(&p->core, &a->w, now);
    kick(p);
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

static pconn_t *checked_out(pgw_pool_t *p, pgw_conn_t *conn)
{
    if (!p || !conn) return NULL;
    pconn_t *pc = pgw_conn_userdata(conn);
    if (!pc || pc->magic != PCONN_MAGIC || pc->p != p || !pc->out) return NULL;
    return pc;
}

static void on_cleaned(int status, pgw_result_t *res, void *ud)
{
    pconn_t *pc = ud;
    pgw_pool_t *p = pc->p;
    pgw_session_t *s = pgw_conn_session(pc->conn);
    int ok = status == 0 && pgw_session_txn_status(s) == 'I';
    pgw_result_free(res);
    if (!pc->m) return;
    pgw__core_cleaned(&p->core, pc->m, ok, now_us());
    kick(p);
}

int pgw_pool_release(pgw_pool_t *p, pgw_conn_t *conn)
{
    pconn_t *pc = checked_out(p, conn);
    if (!pc) return PGW_EINVAL;
    pc->out = 0;
    /* The user's notification callback leaves with the user. */
    pgw_conn_set_notification_cb(conn, NULL, NULL);
    if (!pc->m) { /* lost while checked out */
        pconn_close(pc);
        return 0;
    }
    pgw_session_t *s = pgw_conn_session(conn);
    int group_open = pgw_session_group_open(s);
    int action = pgw__core_release_action(&p->core, pgw_session_txn_status(s),
                                          pgw_session_pending(s) != 0, group_open);
    pgw__member_t *m = pc->m;
    const char *sql = action == PGW__REL_ROLLBACK ? "ROLLBACK" : p->reset_sql;
    pgw__core_release(&p->core, m, action, now_us());
    if (action == PGW__REL_ROLLBACK || action == PGW__REL_RESET) {
        pgw_request_t r = PGW_SIMPLE(sql, on_cleaned, pc);
        if (pgw_conn_submit(conn, &r) < 0 && pc->m) pgw__core_cleaned(&p->core, m, 0, now_us());
    }
    kick(p);
    return 0;
}

typedef struct txend {
    pgw_pool_t *p;
    pgw_conn_t *conn;
    pgw_result_cb cb;
    void *ud;
} txend_t;

static void on_tx_end(int status, pgw_result_t *res, void *ud)
{
    txend_t *t = ud;
    txend_t c = *t;
    pgw__free(c.p->alloc, t);
    pgw_pool_release(c.p, c.conn);
    if (c.cb)
        c.cb(status, res, c.ud);
    else
        pgw_result_free(res);
}

int pgw_pool_tx_end(pgw_pool_t *p, pgw_conn_t *conn, int commit, pgw_result_cb cb, void *ud)
{
    if (!checked_out(p, conn)) return PGW_EINVAL;
    txend_t *t = pgw__malloc(p->alloc, sizeof *t);
    if (!t) return PGW_ENOMEM;
    *t = (txend_t){p, conn, cb, ud};
    pgw_request_t r = PGW_SIMPLE(commit ? "COMMIT" : "ROLLBACK", on_tx_end, t);
    int rc = pgw_conn_submit(conn, &r);
    if (rc < 0) pgw__free(p->alloc, t);
    return rc;
}

/* ------------------------------------------------------------------ stats */

void pgw_pool_stats(const pgw_pool_t *p, pgw_pool_stats_t *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!p) return;
    const pgw__core_t *c = &p->core;
    pgw__core_counts(c, &out->idle, &out->in_use, &out->opening);
    out->size = c->size;
    out->waiters = c->nwaiters;
    out->acquires = c->st.acquires;
    out->acquire_wait_us = c->st.acquire_wait_us;
    out->acquire_wait_max_us = c->st.acquire_wait_max_us;
    out->timeouts = c->st.timeouts;
    out->opened = c->st.opened;
    out->closed = c->st.closed;
    out->open_failures = c->st.open_failures;
    out->lost = c->st.lost;
    out->retried = p->retried;
    out->submitted = p->submitted;
}

size_t pgw_pool_inflight(const pgw_pool_t *p, uint32_t *out, size_t cap)
{
    if (!p) return 0;
    size_t n = 0;
    const pgw__member_t *m = p->core.members;
    if (!m) return 0;
    do {
        if (out && n < cap) out[n] = m->inflight;
        n++;
        m = m->next;
    } while (m != p->core.members);
    return n;
}

size_t pgw_pool_hosts(const pgw_pool_t *p, pgw_pool_host_stats_t *out, size_t cap)
{
    if (!p) return 0;
    size_t n = p->nhosts < cap ? p->nhosts : cap;
    if (!out) n = 0;
    for (size_t i = 0; i < n; i++) {
        const phost_t *h = &p->hosts[i];
        pgw_pool_host_stats_t *o = &out[i];
        memset(o, 0, sizeof *o);
        memcpy(o->host, h->host, sizeof o->host);
        memcpy(o->port, h->port, sizeof o->port);
        o->flags = h->role == PGW__ROLE_RO ? PGW_POOL_READ_ONLY : 0;
        o->opened = h->opened;
        o->lost = h->lost;
        o->acquires = h->acquires;
        o->submitted = h->submitted;
        o->completed = h->completed;
        o->retried = h->retried;
    }
    const pconn_t *pc = p->pconns;
    if (pc && n) {
        do {
            const pgw__member_t *m = pc->m;
            if (m && pc->host >= 0 && (size_t)pc->host < n) {
                pgw_pool_host_stats_t *o = &out[pc->host];
                o->open++;
                o->inflight += m->inflight;
                if (m->state != PGW__M_READY || m->inflight) o->in_use++;
            }
            pc = pc->next;
        } while (pc != p->pconns);
    }
    return p->nhosts;
}

int pgw_pool_listener(pgw_pool_t *p, pgw_listener_t **out, const pgw_listener_config_t *cfg)
{
    if (!p) {
        if (out) *out = NULL;
        return PGW_EINVAL;
    }
    pgw_listener_config_t lc;
    pgw_listener_config_init(&lc);
    if (cfg) pgw__copy_sized(&lc, sizeof lc, cfg);
    lc.size = sizeof lc;
    lc.conn = &p->cfg.conn;
    return pgw_listener_new(out, p->loop, p->conninfo, &lc);
}
