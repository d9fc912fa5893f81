/*
 * The pool's life (driver_internal.h, where the pool's files are listed):
 * made with its configuration copied and the core set up, the core's
 * timer armed, closed and freed once its connections, deliveries and
 * handles are gone.
 */
#define _DEFAULT_SOURCE /* uv.h needs POSIX types */
#include "pgwire/conninfo.h"
#include "pool/driver_internal.h"

#include <string.h>

/* ----------------------------------------------------------------- timer */

static void on_timer(uv_timer_t *t);

void pgw__pool_kick(pgw_pool_t *p)
{
    if (p->closing) return;
    uint64_t now = pgw__pool_now_us();
    uint64_t next = pgw__core_tick(&p->core, now);
    uint64_t lag_next = pgw__lag_tick(p, now);
    if (lag_next < next) next = lag_next;
    if (next == PGW__NEVER) {
        uv_timer_stop(&p->timer);
        return;
    }
    uint64_t ms = next > now ? (next - now + 999) / 1000 : 0;
    uv_timer_start(&p->timer, on_timer, ms, 0);
}

static void on_timer(uv_timer_t *t)
{
    pgw__pool_kick(t->data);
}

/* ------------------------------------------------------------------- free */

static void pool_free_now(pgw_pool_t *p)
{
    for (int i = 0; i < PGW__NROLES; i++)
        pgw__free(p->alloc, p->ci_role[i]);
    pgw_conninfo_free(p->ci_hosts);
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

void pgw__pool_maybe_free(pgw_pool_t *p)
{
    if (!p->closing || p->nconns || p->defer_head || p->handles_open != 2) return;
    uv_close((uv_handle_t *)&p->timer, on_handle_closed);
    uv_close((uv_handle_t *)&p->defer, on_handle_closed);
}

/* -------------------------------------------------------------------- new */

static const pgw__core_ops_t pool_ops = {pgw__pool_open_member,  pgw__pool_close_member,
                                         pgw__pool_check_member, pgw__pool_grant,
                                         pgw__pool_fail_waiter,  pgw__route_standby_left};

void pgw_pool_config_init(pgw_pool_config_t *cfg)
{
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    pgw_conn_config_init(&cfg->conn);
}

/* The core's configuration from the caller's. */
static pgw__core_cfg_t core_cfg(const pgw_pool_config_t *c)
{
    pgw__core_cfg_t cc = {0};
    cc.min_size = c->min_size;
    cc.max_size = c->max_size;
    cc.max_connecting = c->max_connecting;
    cc.pipeline_target = c->pipeline_target;
    cc.backoff_min_us = (uint64_t)c->backoff_min_ms * 1000; /* 0: the default */
    cc.backoff_max_us = (uint64_t)c->backoff_max_ms * 1000;
    cc.max_lifetime_us = (uint64_t)c->max_lifetime_ms * 1000;
    cc.lifetime_jitter_us = (uint64_t)c->lifetime_jitter_ms * 1000;
    cc.idle_timeout_us = (uint64_t)c->idle_timeout_ms * 1000;
    cc.liveness_after_us = (uint64_t)c->liveness_after_ms * 1000;
    cc.route = c->route;
    cc.standby_lag = c->route && (c->max_standby_lag_bytes || c->max_standby_lag_ms);
    cc.standby_lag_fail = c->standby_lag_fail;
    cc.reset_on_release = c->reset_sql != NULL;
    cc.seed = uv_hrtime() | 1;
    return cc;
}

/* The strings p keeps of its configuration: its own copies. 0 or
 * PGW_ENOMEM. */
static int copy_strings(pgw_pool_t *p, const char *conninfo)
{
    const char *reset = p->cfg.reset_sql;
    p->conninfo = pgw__strdup(p->alloc, conninfo);
    if (!p->conninfo) return PGW_ENOMEM;
    int rc = pgw__route_conninfo(p);
    p->reset_sql = reset ? pgw__strdup(p->alloc, reset) : NULL;
    p->cfg.reset_sql = p->reset_sql;
    return rc < 0 || (reset && !p->reset_sql) ? PGW_ENOMEM : 0;
}

/* The caller's configuration (NULL: the defaults), checked. */
static int config_of(pgw_pool_config_t *c, const char *conninfo, const pgw_pool_config_t *cfg)
{
    pgw_pool_config_init(c);
    if (cfg) pgw__copy_sized(c, sizeof *c, cfg);
    c->size = sizeof *c;
    if (c->ryw_fail < 0 || c->ryw_fail > 2) return PGW_EINVAL;
    pgw_conninfo_t *parsed = NULL;
    int rc = pgw_conninfo_parse(&parsed, conninfo, c->conn.alloc, NULL, 0);
    pgw_conninfo_free(parsed);
    if (rc < 0) return rc == PGW_ENOMEM ? rc : PGW_ECONNINFO;
    return 0;
}

int pgw_pool_new(pgw_pool_t **out, uv_loop_t *loop, const char *conninfo,
                 const pgw_pool_config_t *cfg)
{
    if (out) *out = NULL;
    if (!out || !loop || !conninfo) return PGW_EINVAL;
    pgw_pool_config_t c;
    int rc = config_of(&c, conninfo, cfg);
    if (rc < 0) return rc;
    const pgw_allocator_t *a = c.conn.alloc;
    pgw_pool_t *p = pgw__calloc(a, 1, sizeof *p);
    if (!p) return PGW_ENOMEM;
    p->loop = loop;
    p->alloc = a;
    p->cfg = c;
    p->primary_lsn = -1;
    if (copy_strings(p, conninfo) < 0) {
        pool_free_now(p);
        return PGW_ENOMEM;
    }
    pgw__core_cfg_t cc = core_cfg(&p->cfg);
    pgw__core_init(&p->core, &cc, &pool_ops, p, a);
    uv_timer_init(loop, &p->timer);
    uv_timer_init(loop, &p->defer);
    p->timer.data = p->defer.data = p;
    p->handles_open = 2;
    pgw__pool_kick(p); /* opens min_size (their connects run on the loop) */
    *out = p;
    return 0;
}

/* ------------------------------------------------------------------ close */

void pgw_pool_close(pgw_pool_t *p)
{
    if (!p || p->closing) return;
    p->closing = 1;
    uv_timer_stop(&p->timer);
    pgw__core_shutdown(&p->core); /* waiters: ECLOSED (deferred); members closed */
    while (p->pconns)
        pgw__pconn_drop(p->pconns);
    pgw__pool_maybe_free(p);
}

/* --------------------------------------------------------------- listener */

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
