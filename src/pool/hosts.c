/*
 * The hosts and servers the pool's connections are up on
 * (driver_internal.h): per-host totals for pgw_pool_hosts, and the
 * servers the core knows by id, told going down when they refuse a
 * connect.
 */
#define _DEFAULT_SOURCE /* uv.h needs POSIX types */
#include "pool/driver_internal.h"

#include <string.h>

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
    h->lag_bytes = h->lag_ms = -1;
    h->behind = 1;
    return (int32_t)p->nhosts++;
}

phost_t *pgw__host_of(const pconn_t *pc)
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

void pgw__hosts_up(pconn_t *pc)
{
    pgw__member_t *m = pc->m;
    pc->host = host_index(pc->p, pc, m->role);
    phost_t *h = pgw__host_of(pc);
    if (h) {
        h->opened++;
        h->submitted += pc->early;
    }
    pc->early = 0;
    m->server = server_of(pc);
    if (m->role == PGW__ROLE_RO) pgw__lag_member_up(pc);
}

/* The attempt found nothing listening, or a server refusing connections
 * because it is starting up or shutting down (57P03). */
static int attempt_refused(const pgw_conn_attempt_t *a)
{
    return a->status == UV_ECONNREFUSED || a->status == UV_ENOENT ||
           (a->status == PGW_ESERVER && a->sqlstate &&
            pgw_sqlstate_is(a->sqlstate, strlen(a->sqlstate), PGW_SQLSTATE_CANNOT_CONNECT_NOW));
}

void pgw__hosts_note_refusals(pconn_t *pc)
{
    pgw_pool_t *p = pc->p;
    size_t n = 0;
    const pgw_conn_attempt_t *a = pgw_conn_attempts(pc->conn, &n);
    for (size_t i = pc->attempts_seen; i < n && a[i].status != 0; i++) {
        pc->attempts_seen = i + 1;
        uint32_t s = attempt_refused(&a[i]) ? server_id(p, a[i].host, a[i].port, 0) : 0;
        if (s) pgw__core_server_down(&p->core, s, 0, pgw__pool_now_us());
    }
}

void pgw__host_sent(pconn_t *pc)
{
    phost_t *h = pgw__host_of(pc);
    if (h)
        h->submitted++;
    else
        pc->early++;
}

void pgw__host_done(pconn_t *pc, int status)
{
    phost_t *h = pgw__host_of(pc);
    if (!h) {
        if (pc->early) pc->early--;
        return;
    }
    h->completed++;
    if (status == PGW_ERETRY) h->retried++;
}

void pgw__host_reclassify(pconn_t *pc, uint8_t role)
{
    phost_t *from = pgw__host_of(pc);
    int32_t to = host_index(pc->p, pc, role);
    if (!from || to < 0) return; /* no memory: the totals stay where they were */
    /* host_index may have moved the array: look the old entry up again. */
    from = pgw__host_of(pc);
    /* The one-shot requests in flight (a lag measure counts in the core's
     * inflight but in no host entry). */
    uint32_t inflight = pc->m ? pc->m->inflight : 0;
    if (pc->lag_probing && inflight) inflight--;
    from->submitted -= inflight;
    pc->host = to;
    phost_t *h = pgw__host_of(pc);
    h->submitted += inflight;
    h->promoted++;
}
