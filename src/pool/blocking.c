/*
 * The blocking pool (pool.h, pgw_client_pool_t): pgw_client_t connections
 * shared by threads under one mutex and condition variable. Connecting and
 * cleaning run outside the lock; the lock only guards the lists and counts.
 */
#define _DEFAULT_SOURCE /* pthread_condattr_setclock */
#include "pgwire/pool.h"
#include "util/internal.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

typedef struct bwait {
    struct bwait *next;
} bwait_t;

typedef struct bslot {
    pgw_client_t *c;
    struct bslot *next;
    int out;
} bslot_t;

struct pgw_client_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const pgw_allocator_t *alloc;
    pgw_pool_config_t cfg;
    char *conninfo;
    char *reset_sql;
    bslot_t *slots; /* every client, idle or out */
    uint32_t size;  /* clients, those being connected included */
    uint32_t out;
    uint32_t waiters;
    struct bwait *head, *tail; /* waiters, first come first served */
    int closing;
    pgw_pool_stats_t st;
};

static uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static char *dup_str(const pgw_allocator_t *a, const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = pgw__malloc(a, n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Connect one more client (the caller reserved its place in size). */
static int connect_one(pgw_client_pool_t *p, bslot_t **out)
{
    bslot_t *s = pgw__calloc(p->alloc, 1, sizeof *s);
    if (!s) return PGW_ENOMEM;
    int rc = pgw_client_connect(&s->c, p->conninfo, &p->cfg.conn);
    if (rc < 0) {
        pgw__free(p->alloc, s);
        return rc;
    }
    *out = s;
    return 0;
}

static void slot_free(pgw_client_pool_t *p, bslot_t *s)
{
    pgw_client_close(s->c);
    pgw__free(p->alloc, s);
}

static void destroy(pgw_client_pool_t *p)
{
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    pgw__free(p->alloc, p->conninfo);
    pgw__free(p->alloc, p->reset_sql);
    pgw__free(p->alloc, p);
}

int pgw_client_pool_new(pgw_client_pool_t **out, const char *conninfo, const pgw_pool_config_t *cfg)
{
    if (out) *out = NULL;
    if (!out || !conninfo) return PGW_EINVAL;
    pgw_pool_config_t c;
    pgw_pool_config_init(&c);
    if (cfg) pgw__copy_sized(&c, sizeof c, cfg);
    c.size = sizeof c;
    if (c.max_size == 0) c.max_size = 10;
    if (c.min_size > c.max_size) c.min_size = c.max_size;
    pgw_client_pool_t *p = pgw__calloc(c.conn.alloc, 1, sizeof *p);
    if (!p) return PGW_ENOMEM;
    p->alloc = c.conn.alloc;
    p->cfg = c;
    p->conninfo = dup_str(p->alloc, conninfo);
    p->reset_sql = dup_str(p->alloc, c.reset_sql);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&p->mu, NULL);
    if (!p->conninfo || (c.reset_sql && !p->reset_sql)) {
        destroy(p);
        return PGW_ENOMEM;
    }
    for (uint32_t i = 0; i < c.min_size; i++) {
        bslot_t *s;
        int rc = connect_one(p, &s);
        if (rc < 0) {
            pgw_client_pool_free(p);
            return rc;
        }
        s->next = p->slots;
        p->slots = s;
        p->size++;
        p->st.opened++;
    }
    *out = p;
    return 0;
}

static bslot_t *take_idle(pgw_client_pool_t *p)
{
    for (bslot_t *s = p->slots; s; s = s->next)
        if (!s->out) return s;
    return NULL;
}

static void unlink_slot(pgw_client_pool_t *p, bslot_t *s)
{
    for (bslot_t **pp = &p->slots; *pp; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            return;
        }
    }
}

static void wait_unlink(pgw_client_pool_t *p, bwait_t *w)
{
    bwait_t *prev = NULL;
    for (bwait_t *x = p->head; x; prev = x, x = x->next) {
        if (x != w) continue;
        if (prev)
            prev->next = x->next;
        else
            p->head = x->next;
        if (p->tail == x) p->tail = prev;
        return;
    }
}

int pgw_client_pool_acquire(pgw_client_pool_t *p, uint32_t timeout_ms, pgw_client_t **out)
{
    if (out) *out = NULL;
    if (!p || !out) return PGW_EINVAL;
    uint32_t t =
        timeout_ms ? timeout_ms : (p->cfg.acquire_timeout_ms ? p->cfg.acquire_timeout_ms : 30000);
    uint64_t start = mono_us();
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += t / 1000;
    dl.tv_nsec += (long)(t % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&p->mu);
    bwait_t me = {NULL};
    if (p->tail)
        p->tail->next = &me;
    else
        p->head = &me;
    p->tail = &me;
    p->waiters++;
    int rc = 0;
    bslot_t *s = NULL;
    for (;;) {
        if (p->closing) {
            rc = PGW_ECLOSED;
            break;
        }
        if (p->head == &me) { /* our turn */
            if ((s = take_idle(p))) break;
            if (p->size < p->cfg.max_size) {
                p->size++; /* reserved: connect outside the lock */
                pthread_mutex_unlock(&p->mu);
                rc = connect_one(p, &s);
                pthread_mutex_lock(&p->mu);
                if (rc < 0) {
                    p->size--;
                    p->st.open_failures++;
                    s = NULL;
                    break;
                }
                p->st.opened++;
                s->next = p->slots;
                p->slots = s;
                break;
            }
        }
        int w = t == PGW_TIMEOUT_NONE ? pthread_cond_wait(&p->cv, &p->mu)
                                      : pthread_cond_timedwait(&p->cv, &p->mu, &dl);
        if (w == ETIMEDOUT) {
            rc = PGW_EPOOLTIMEOUT;
            p->st.timeouts++;
            break;
        }
    }
    wait_unlink(p, &me);
    p->waiters--;
    if (s) {
        s->out = 1;
        p->out++;
        uint64_t waited = mono_us() - start;
        p->st.acquires++;
        p->st.acquire_wait_us += waited;
        if (waited > p->st.acquire_wait_max_us) p->st.acquire_wait_max_us = waited;
        *out = s->c;
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* Whether c may be used again, and the cleaning it needs first (outside
 * the lock: the ROLLBACK or reset runs on the caller's thread). */
static int clean(pgw_client_pool_t *p, pgw_client_t *c)
{
    pgw_session_t *s = pgw_client_session(c);
    if (!s || pgw_session_state(s) != PGW_SESSION_READY) return 0;
    if (pgw_session_pending(s) || pgw_session_group_open(s)) return 0;
    char txn = pgw_session_txn_status(s);
    const char *sql = NULL;
    if (txn == 'T' || txn == 'E')
        sql = "ROLLBACK";
    else if (txn != 'I')
        return 0;
    else
        sql = p->reset_sql;
    if (!sql) return 1;
    pgw_request_t r = PGW_SIMPLE(sql, NULL, NULL);
    if (pgw_client_run(c, &r, NULL) != 0) return 0;
    return pgw_session_txn_status(s) == 'I';
}

int pgw_client_pool_release(pgw_client_pool_t *p, pgw_client_t *c)
{
    if (!p || !c) return PGW_EINVAL;
    pthread_mutex_lock(&p->mu);
    bslot_t *s = p->slots;
    while (s && s->c != c)
        s = s->next;
    int ok = s && s->out;
    pthread_mutex_unlock(&p->mu);
    if (!ok) return PGW_EINVAL;
    int keep = clean(p, c);
    pthread_mutex_lock(&p->mu);
    s->out = 0;
    p->out--;
    int last = 0;
    if (!keep || p->closing) {
        unlink_slot(p, s);
        p->size--;
        p->st.closed++;
        last = p->closing && p->size == 0;
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (!keep || p->closing) slot_free(p, s);
    if (last) destroy(p);
    return 0;
}

void pgw_client_pool_stats(pgw_client_pool_t *p, pgw_pool_stats_t *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    *out = p->st;
    out->size = p->size;
    out->in_use = p->out;
    uint32_t n = 0;
    for (bslot_t *s = p->slots; s; s = s->next)
        n += !s->out;
    out->idle = n;
    out->waiters = p->waiters;
    pthread_mutex_unlock(&p->mu);
}

void pgw_client_pool_free(pgw_client_pool_t *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->closing = 1;
    bslot_t *keep = NULL, *s = p->slots;
    bslot_t *idle = NULL;
    while (s) {
        bslot_t *nx = s->next;
        if (s->out) {
            s->next = keep;
            keep = s;
        } else {
            s->next = idle;
            idle = s;
            p->size--;
            p->st.closed++;
        }
        s = nx;
    }
    p->slots = keep;
    int last = p->size == 0 && p->waiters == 0;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    while (idle) {
        bslot_t *nx = idle->next;
        slot_free(p, idle);
        idle = nx;
    }
    if (last) destroy(p);
}
