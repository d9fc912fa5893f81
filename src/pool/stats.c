/*
 * The pool's counters, as the caller reads them (pool.h: pgw_pool_stats,
 * pgw_pool_inflight, pgw_pool_hosts): the core's totals, the driver's,
 * and live counts taken from the connections when asked.
 */
#define _DEFAULT_SOURCE /* uv.h needs POSIX types */
#include "pool/driver_internal.h"

#include <string.h>

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

/* The totals of host h, live counts left 0. */
static void host_totals(pgw_pool_host_stats_t *o, const pgw_pool_t *p, const phost_t *h)
{
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
    o->promoted = h->promoted;
    int lag = h->role == PGW__ROLE_RO && p->core.cfg.standby_lag;
    o->lag_bytes = lag ? h->lag_bytes : -1;
    o->lag_ms = lag ? h->lag_ms : -1;
    o->lag_checks = h->lag_checks;
    o->behind = lag && h->behind;
}

/* Add the live counts of the connections up on out[0..n). */
static void host_live_counts(const pgw_pool_t *p, pgw_pool_host_stats_t *out, size_t n)
{
    const pconn_t *pc = p->pconns;
    if (!pc || !n) return;
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

size_t pgw_pool_hosts(const pgw_pool_t *p, pgw_pool_host_stats_t *out, size_t cap)
{
    if (!p) return 0;
    size_t n = p->nhosts < cap ? p->nhosts : cap;
    if (!out) n = 0;
    for (size_t i = 0; i < n; i++)
        host_totals(&out[i], p, &p->hosts[i]);
    host_live_counts(p, out, n);
    return p->nhosts;
}

int pgw__pool_open_error(const pgw_pool_t *p)
{
    return p->core.last_open_error;
}
