/*
 * The pool on a libuv loop (pool.h): the core's decisions (core.c)
 * carried out over pgw_conn_t. Each member is a pconn (its connection);
 * one-shot requests are wrapped so that their completion is counted
 * against their connection and a connection's death is reported as
 * PGW_ERETRY; checkouts are waiters of the core, answered from the loop.
 *
 * A connection's death reaches the pool first through the completions of
 * its requests (the session fails them before the connection reports
 * on_lost; a FATAL error completes the request it interrupted before
 * that): the wrapper takes a dead connection out of the core before the
 * caller's callback runs, so that what the callback resubmits goes to
 * another connection. The way it died (and a refused connect) tells the
 * core which server is going down.
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
    uint8_t out;          /* checked out */
    uint8_t closing;      /* pgw_conn_close called */
    int32_t host;         /* index in p->hosts once up; -1 before (or no memory) */
    int *settled;         /* released: set to 1 once it is back or closed */
    uint32_t early;       /* requests sent before it was up, still pending */
    size_t attempts_seen; /* connect attempts already looked at for refusals */
};

/* A server connections were made to, as the connect attempts name it
 * (pgw_conn_attempt_t host and port): the core knows it by its index + 1. */
typedef struct pserver {
    char host[256];
    uint16_t port;
} pserver_t;

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

struct pgw_pool {
    uv_loop_t *loop;
    const pgw_allocator_t *alloc;
    pgw_pool_config_t cfg; /* the caller's, copied */
    char *conninfo;
    char *ci_role[PGW__NROLES];
    char *reset_sql;
    pgw__core_t core;
    uv_timer_t timer; /* the core's tick */
    uv_timer_t defer; /* acquire callbacks, from the loop */
    pacq_t *defer_head, *defer_tail;
    pconn_t *pconns; /* every connection not yet closed (circular) */
    size_t nconns;   /* pconns not yet freed */
    phost_t *hosts;
    size_t nhosts, caphosts;
    pserver_t *servers;
    size_t nservers, capservers;
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

/* Room for one more element in *arr (of elem bytes, n used, *cap
 * allocated). Returns 0, or -1 without memory. */
static int grow(pgw_pool_t *p, void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap) return 0;
    size_t c = *cap ? *cap * 2 : 4;
    if (c > INT32_MAX) return -1;
    void *a = pgw__realloc(p->alloc, *arr, c * elem);
    if (!a) return -1;
    *arr = a;
    *cap = c;
    return 0;
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
    if (grow(p, (void **)&p->hosts, &p->caphosts, p->nhosts, sizeof *p->hosts) < 0) return -1;
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

/* The core's id of a server (0: none yet, or no memory to add it). */
static uint32_t server_id(pgw_pool_t *p, const char *host, uint16_t port, int add)
{
    if (!host) return 0;
    for (size_t i = 0; i < p->nservers; i++)
        if (p->servers[i].port == port && strcmp(p->servers[i].host, host) == 0)
            return (uint32_t)i + 1;
    if (!add || grow(p, (void **)&p->servers, &p->capservers, p->nservers, sizeof *p->servers) < 0)
        return 0;
    pserver_t *s = &p->servers[p->nservers];
    copy_cut(s->host, sizeof s->host, host);
    s->port = port;
    return (uint32_t)++p->nservers;
}

/* The server pc's connection is up on (the attempt that connected). */
static uint32_t server_of(pconn_t *pc)
{
    size_t n = 0;
    const pgw_conn_attempt_t *a = pgw_conn_attempts(pc->conn, &n);
    return n ? server_id(pc->p, a[n - 1].host, a[n - 1].port, 1) : 0;
}

/* The attempt found nothing listening, or a server refusing connections
 * because it is starting up or shutting down (57P03). */
static int attempt_refused(const pgw_conn_attempt_t *a)
{
    return a->status == UV_ECONNREFUSED || a->status == UV_ENOENT ||
           (a->status == PGW_ESERVER && a->sqlstate &&
            pgw_sqlstate_is(a->sqlstate, strlen(a->sqlstate), PGW_SQLSTATE_CANNOT_CONNECT_NOW));
}

/* The servers that refused pc's connect attempts since last looked at are
 * going down (an attempt still in progress is looked at next time). */
static void note_refusals(pconn_t *pc)
{
    pgw_pool_t *p = pc->p;
    size_t n = 0;
    const pgw_conn_attempt_t *a = pgw_conn_attempts(pc->conn, &n);
    for (size_t i = pc->attempts_seen; i < n && a[i].status != 0; i++) {
        pc->attempts_seen = i + 1;
        uint32_t s = attempt_refused(&a[i]) ? server_id(p, a[i].host, a[i].port, 0) : 0;
        if (s) pgw__core_server_down(&p->core, s, 0, now_us());
    }
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

/* pc's connection is gone: out of the core (if still in it). down: the
 * way it went says its server is going down. */
static void pconn_lost(pconn_t *pc, int down)
{
    pgw_pool_t *p = pc->p;
    pgw__member_t *m = pc->m;
    if (!m) return;
    uint32_t server = m->server;
    phost_t *h = host_of(pc);
    if (h) h->lost++;
    pc->m = NULL;
    uint64_t now = now_us();
    pgw__core_lost(&p->core, m, now);
    if (down) pgw__core_server_down(&p->core, server, 1, now);
    kick(p);
}

/* The server closes the connection after a FATAL error (1), and every
 * connection after a PANIC (2); 0 for any other error. */
static int fatal_level(const pgw_error_t *e)
{
    const char *sev = e->severity_nonlocal ? e->severity_nonlocal : e->severity;
    if (!sev || !pgw_severity_ends_connection(sev, strlen(sev))) return 0;
    return strcmp(sev, "PANIC") == 0 ? 2 : 1;
}

enum { CONN_ALIVE = 0, CONN_GONE, CONN_GONE_SERVER_DOWN };

/* What a completion (status, res) on pc says of its connection: alive;
 * gone (the session broke, or the server sent a FATAL error); gone in a
 * way that says the server is going down (a shutdown error, a PANIC, or
 * the connection closed under the request without a word). */
static int conn_fate(pconn_t *pc, int status, const pgw_result_t *res)
{
    const pgw_error_t *e = status == PGW_ESERVER && res ? pgw_result_error(res) : NULL;
    int fatal = e ? fatal_level(e) : 0;
    if (fatal)
        return fatal == 2 || pgw_sqlstate_server_going_away(e->sqlstate) ? CONN_GONE_SERVER_DOWN
                                                                         : CONN_GONE;
    pgw_session_t *s = pgw_conn_session(pc->conn);
    if (s && pgw_session_state(s) != PGW_SESSION_BROKEN) return CONN_ALIVE;
    return status == PGW_ECONNLOST ? CONN_GONE_SERVER_DOWN : CONN_GONE;
}

/* A request of pc completed and its caller's callback is about to run: a
 * connection that is gone leaves the rotation first, so that what the
 * callback resubmits goes elsewhere (never to the dying connection, and
 * never refused for it). A connection still opening that fails what it
 * carried has left a server and refuses requests until its next attempt
 * starts, right after these callbacks: it takes none meanwhile (its
 * connection's driver hears the next attempt begin: on_attempt). */
static void before_callback(pconn_t *pc, int status, const pgw_result_t *res)
{
    pgw__member_t *m = pc->m;
    if (!m) return;
    if (m->state == PGW__M_OPENING) {
        if (pgw_conn_session(pc->conn)) return;
        pgw__core_between_attempts(&pc->p->core, m, 1);
        note_refusals(pc);
        return;
    }
    int fate = conn_fate(pc, status, res);
    if (fate != CONN_ALIVE) pconn_lost(pc, fate == CONN_GONE_SERVER_DOWN);
}

/* The connection's next attempt has its session: it takes requests again. */
static void on_attempt(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    pconn_t *pc = ud;
    if (pc->m) pgw__core_between_attempts(&pc->p->core, pc->m, 0);
}

/* The established connection broke. When requests were in flight their
 * completions have already taken it out (before_callback). */
static void on_lost(pgw_conn_t *conn, int err, void *ud)
{
    pconn_t *pc = ud;
    pconn_lost(pc, 0);
    /* A checked-out connection stays until its holder releases it. */
    if (!pc->out) pconn_close(pc);
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
        m->server = server_of(pc);
        pgw__core_opened(&p->core, m, 0, now_us());
        note_refusals(pc); /* hosts tried before this one */
    } else {
        /* Before the requests it carried complete (after this call). */
        note_refusals(pc);
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
    /* The caller's options as they are (its hooks with its ud); the pool
     * hears the connection through a driver of its own. */
    int rc = pgw_conn_new(&pc->conn, p->loop, &p->cfg.conn);
    if (rc < 0) {
        pgw__free(p->alloc, pc);
        return rc;
    }
    const pgw_conn_driver_t driver = {on_lost, on_attempt, pc};
    pgw_conn_set_driver(pc->conn, &driver);
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
    int fate = pc->m ? conn_fate(pc, status, res) : CONN_ALIVE;
    pgw_result_free(res);
    if (!pc->m) return;
    if (fate != CONN_ALIVE) {
        pconn_lost(pc, fate == CONN_GONE_SERVER_DOWN);
        return;
    }
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
    for (int i = 0; i < PGW__NROLES; i++)
        pgw__free(p->alloc, p->ci_role[i]);
    pgw__free(p->alloc, p->conninfo);
    pgw__free(p->alloc, p->reset_sql);
    pgw__free(p->alloc, p->hosts);
    pgw__free(p->alloc, p->servers);
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
    pgw__core_cfg_t cc = {0};
    cc.min_size = c.min_size;
    cc.max_size = c.max_size;
    cc.max_connecting = c.max_connecting;
    cc.pipeline_target = c.pipeline_target;
    cc.backoff_min_us = (uint64_t)c.backoff_min_ms * 1000; /* 0: the default */
    cc.backoff_max_us = (uint64_t)c.backoff_max_ms * 1000;
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

/* The driver hooks of the pool's one-shot requests and batches (session.h,
 * "Driver completions"): the caller's descriptors go to the connection as
 * they are, and the pool hears each completion just before the caller's
 * callback, in time to take a dead connection out of the rotation and to
 * tell the caller PGW_ERETRY. A batch counts once, at its end. */
static int on_request_done(void *ctx, size_t index, int status, pgw_result_t **res)
{
    (void)index;
    pconn_t *pc = ctx;
    before_callback(pc, status, *res);
    status = finish(pc, status, *res);
    done_on(pc);
    return status;
}

static int on_batch_done(void *ctx, size_t index, int status, pgw_result_t **res)
{
    if (index == PGW_DRIVER_BATCH) return on_request_done(ctx, index, status, res);
    pconn_t *pc = ctx;
    before_callback(pc, status, *res);
    return retry_status(pc, status, *res);
}

static pconn_t *pick(pgw_pool_t *p, uint32_t route, int *err)
{
    if (p->closing) {
        *err = PGW_ECLOSED;
        return NULL;
    }
    int role = route == PGW_ROUTE_READ_ONLY ? PGW__ROLE_RO : PGW__ROLE_RW;
    pgw__member_t *m = pgw__core_pick(&p->core, now_us(), role, err);
    return m ? m->h : NULL;
}

/* The route a descriptor asks (0 for one whose caller's header predates
 * the field). */
static uint32_t route_of(const pgw_request_t *req)
{
    return req->size >= offsetof(pgw_request_t, route) + sizeof req->route ? req->route : 0;
}

static void sent_on(pconn_t *pc)
{
    pgw__core_sent(&pc->p->core, pc->m);
    host_sent(pc);
    pc->p->submitted++;
}

int pgw_pool_submit(pgw_pool_t *p, const pgw_request_t *req)
{
    if (!p || !req || req->size == 0) return PGW_EINVAL;
    int rc = 0;
    pconn_t *pc = pick(p, route_of(req), &rc);
    if (!pc) return rc;
    rc = pgw_conn_submit_driven(pc->conn, req, on_request_done, pc);
    if (rc == 0) sent_on(pc);
    return rc;
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
    pconn_t *pc = pick(p, route_of(req), &rc);
    if (!pc) return rc;
    relay_t *r = pgw__malloc(p->alloc, sizeof *r);
    if (!r) return PGW_ENOMEM;
    *r = (relay_t){pc, hook, ctx};
    rc = pgw_conn_submit_driven(pc->conn, req, on_relayed_done, r);
    if (rc == 0)
        sent_on(pc);
    else
        pgw__free(p->alloc, r);
    return rc;
}

int pgw__pool_open_error(const pgw_pool_t *p)
{
    return p->core.last_open_error;
}

int pgw_pool_submit_flags(pgw_pool_t *p, const pgw_request_t *req, unsigned flags)
{
    if (!p || !req || req->size == 0 || (flags & ~(unsigned)PGW_POOL_READ_ONLY)) return PGW_EINVAL;
    if (!(flags & PGW_POOL_READ_ONLY)) return pgw_pool_submit(p, req);
    pgw_request_t r;
    int rc = pgw_request_copy(&r, req);
    if (rc < 0) return rc;
    r.route = PGW_ROUTE_READ_ONLY;
    return pgw_pool_submit(p, &r);
}

int pgw_pool_submit_batch(pgw_pool_t *p, const pgw_request_t *reqs, size_t n, unsigned flags,
                          pgw_result_cb done, void *ud)
{
    if (!p || !reqs || n == 0 || reqs[0].size == 0) return PGW_EINVAL;
    /* Routing is the descriptors' (pgw_request_t.route): one batch, one
     * connection, one route. */
    if (flags & ~(unsigned)PGW_BATCH_SYNC_EACH) return PGW_EINVAL;
    uint32_t route = route_of(reqs);
    for (size_t i = 1; i < n; i++)
        if (route_of(pgw_request_nth(reqs, i)) != route) return PGW_EINVAL;
    int rc = 0;
    pconn_t *pc = pick(p, route, &rc);
    if (!pc) return rc;
    rc = pgw_conn_submit_batch_driven(pc->conn, reqs, n, flags, done, ud, on_batch_done, pc);
    if (rc == 0) sent_on(pc);
    return rc;
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
    pconn_t *pc = pgw_conn_driver_userdata(conn);
    if (!pc || pc->magic != PCONN_MAGIC || pc->p != p || !pc->out) return NULL;
    return pc;
}

/* pc's release is over (clean, cleaned, or closed): its waiter (the
 * blocking pool) looks again, after this turn of the loop. */
static void settle(pconn_t *pc)
{
    if (!pc->settled) return;
    *pc->settled = 1;
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
    pgw__core_cleaned(&p->core, pc->m, ok, now_us());
    kick(p);
}

int pgw_pool_release(pgw_pool_t *p, pgw_conn_t *conn)
{
    return pgw__pool_release_settled(p, conn, NULL);
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
        if (pgw_conn_submit(conn, &r) < 0) {
            settle(pc);
            if (pc->m) pgw__core_cleaned(&p->core, m, 0, now_us());
        }
    } else {
        settle(pc);
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
