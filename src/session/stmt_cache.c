/*
 * The statement cache (session.h, "Statement cache"): cached statements by
 * key in a chained hash table, most recent first in an LRU list, and a
 * direct-mapped table of keys seen once, so a query is prepared only when
 * it comes back. What the cache decides is applied where the requests are
 * encoded (requests.c) and where their replies arrive (dispatch.c); this
 * file only keeps the entries.
 *
 * Memory: one allocation per cached statement (the entry with its SQL and
 * parameter types), plus its description block once known. Nothing is
 * allocated on a hit.
 */
#include "auth/auth.h"
#include "session_internal.h"

#include <stdio.h>

#define DEFAULT_ENTRIES 256u
#define DEFAULT_BYTES   (1024u * 1024u)
#define MAX_BUCKETS     65536u
#define MAX_SEEN        65536u

int pgw__cache_configure(pgw_session_t *s, const pgw_session_config_t *cfg)
{
    if (cfg->stmt_cache_mode > PGW_STMT_UNNAMED) return PGW_EINVAL;
    s->cache.mode = (uint8_t)cfg->stmt_cache_mode;
    s->cache.max = cfg->stmt_cache_size ? cfg->stmt_cache_size : DEFAULT_ENTRIES;
    s->cache.max_bytes = cfg->stmt_cache_bytes ? cfg->stmt_cache_bytes : DEFAULT_BYTES;
    return 0;
}

bool pgw__cache_applies(const pgw_session_t *s, const pgw_request_t *rq)
{
    return s->cache.mode == PGW_STMT_CACHE_AUTO && rq->kind == PGW_REQ_QUERY &&
           rq->cache != PGW_CACHE_SKIP && !rq->param_types;
}

/* A word at a time: the SQL is hashed on every cacheable query. */
static uint64_t mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15u;
    return h ^ (h >> 29);
}

uint64_t pgw__cache_key(const char *sql, size_t len, const pgw_param_t *params, size_t n)
{
    uint64_t h = 0x243f6a8885a308d3u ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, sql + i, 8);
        h = mix(h, w);
    }
    uint64_t tail = 0;
    memcpy(&tail, sql + i, len - i);
    h = mix(h, tail ^ ((uint64_t)n << 56));
    for (size_t k = 0; k < n; k++)
        h = mix(h, params[k].oid);
    return h;
}

static bool same_query(const pgw__cached_t *ce, const char *sql, size_t len,
                       const pgw_param_t *params, size_t n)
{
    if (ce->sql_len != len || ce->noids != n || memcmp(ce->sql, sql, len) != 0) return false;
    for (size_t i = 0; i < n; i++)
        if (ce->oids[i] != params[i].oid) return false;
    return true;
}

/* ------------------------------------------------------------ LRU list */

static void lru_unlink(pgw_session_t *s, pgw__cached_t *ce)
{
    if (ce->newer)
        ce->newer->older = ce->older;
    else
        s->cache.newest = ce->older;
    if (ce->older)
        ce->older->newer = ce->newer;
    else
        s->cache.oldest = ce->newer;
    ce->newer = ce->older = NULL;
}

static void lru_push(pgw_session_t *s, pgw__cached_t *ce)
{
    ce->older = s->cache.newest;
    ce->newer = NULL;
    if (s->cache.newest)
        s->cache.newest->newer = ce;
    else
        s->cache.oldest = ce;
    s->cache.newest = ce;
}

static pgw__cached_t **bucket(const pgw_session_t *s, uint64_t key)
{
    return &s->cache.buckets[key & (s->cache.nbuckets - 1)];
}

pgw__cached_t *pgw__cache_find(pgw_session_t *s, uint64_t key, const char *sql, size_t len,
                               const pgw_param_t *params, size_t n)
{
    if (!s->cache.nbuckets) return NULL;
    for (pgw__cached_t *ce = *bucket(s, key); ce; ce = ce->hnext)
        if (ce->key == key && same_query(ce, sql, len, params, n)) {
            if (s->cache.newest != ce) {
                lru_unlink(s, ce);
                lru_push(s, ce);
            }
            return ce;
        }
    return NULL;
}

/* ------------------------------------------------------------- entries */

void pgw__cache_unref(pgw_session_t *s, pgw__cached_t *ce)
{
    if (--ce->refs) return;
    pgw__stmt_block_free(s, &ce->st);
    pgw__free(s->alloc, ce);
}

static void owe_close(pgw_session_t *s, uint64_t id)
{
    if (s->cache.ncloses == s->cache.closes_cap) {
        size_t cap = s->cache.closes_cap ? s->cache.closes_cap * 2 : 16;
        uint64_t *a = pgw__realloc(s->alloc, s->cache.closes, cap * sizeof *a);
        /* Without memory the statement stays on the server until the
         * connection ends: its name is never used again. */
        if (!a) return;
        s->cache.closes = a;
        s->cache.closes_cap = cap;
    }
    s->cache.closes[s->cache.ncloses++] = id;
}

void pgw__cache_close_owed(pgw_session_t *s, uint64_t id)
{
    owe_close(s, id);
}

bool pgw__cache_next_close(pgw_session_t *s, uint64_t *id)
{
    if (!s->cache.ncloses) return false;
    *id = s->cache.closes[--s->cache.ncloses];
    return true;
}

static void remember(pgw_session_t *s, uint64_t key)
{
    if (s->cache.seen) s->cache.seen[key & s->cache.seen_mask] = key;
}

static void remove_entry(pgw_session_t *s, pgw__cached_t *ce, bool close)
{
    pgw__cached_t **p = bucket(s, ce->key);
    while (*p != ce)
        p = &(*p)->hnext;
    *p = ce->hnext;
    ce->hnext = NULL;
    lru_unlink(s, ce);
    ce->in_cache = false;
    s->cache.stats.entries--;
    s->cache.stats.bytes -= ce->bytes;
    remember(s, ce->key);
    if (close) owe_close(s, ce->id);
    pgw__cache_unref(s, ce);
}

void pgw__cache_drop(pgw_session_t *s, pgw__cached_t *ce, bool close)
{
    if (ce->in_cache) remove_entry(s, ce, close);
}

void pgw__cache_cancel(pgw_session_t *s, pgw__cached_t *ce)
{
    if (!ce->in_cache) return;
    s->cache.stats.prepares--;
    remove_entry(s, ce, false);
}

void pgw__cache_flush(pgw_session_t *s)
{
    while (s->cache.oldest)
        remove_entry(s, s->cache.oldest, true);
}

/* Evict the least recently used until one more entry of extra bytes fits
 * (never keep: the entry that is being made to fit). */
static void make_room(pgw_session_t *s, size_t extra, const pgw__cached_t *keep)
{
    while (s->cache.oldest && s->cache.oldest != keep &&
           (s->cache.stats.entries + (keep ? 0 : 1) > s->cache.max ||
            s->cache.stats.bytes + extra > s->cache.max_bytes)) {
        s->cache.stats.evictions++;
        remove_entry(s, s->cache.oldest, true);
    }
}

static size_t pow2_at_least(size_t n, size_t cap)
{
    size_t p = 16;
    while (p < n && p < cap)
        p *= 2;
    return p;
}

/* The tables and the session's name nonce, at the first use. */
static int cache_init(pgw_session_t *s)
{
    if (s->cache.nbuckets) return 0;
    size_t nb = pow2_at_least(s->cache.max, MAX_BUCKETS);
    size_t ns = pow2_at_least((size_t)s->cache.max * 4, MAX_SEEN);
    s->cache.buckets = pgw__calloc(s->alloc, nb, sizeof *s->cache.buckets);
    s->cache.seen = pgw__calloc(s->alloc, ns, sizeof *s->cache.seen);
    if (!s->cache.buckets || !s->cache.seen) {
        pgw__free(s->alloc, s->cache.buckets);
        pgw__free(s->alloc, s->cache.seen);
        s->cache.buckets = NULL;
        s->cache.seen = NULL;
        return PGW_ENOMEM;
    }
    s->cache.nbuckets = nb;
    s->cache.seen_mask = ns - 1;
    uint8_t raw[8];
    if (pgw__nonce_bytes(raw, sizeof raw) < 0) {
        /* Still unique per server connection: the backend key. */
        uint64_t k = (uint64_t)(uint32_t)s->server.backend_pid;
        for (size_t i = 0; i < s->server.backend_key_len; i++)
            k = mix(k, s->server.backend_key[i]);
        memcpy(raw, &k, sizeof raw);
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(s->cache.nonce + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

void pgw__cache_name(const pgw_session_t *s, uint64_t id, char *out)
{
    snprintf(out, PGW__CACHE_NAME_MAX, "pgw_%s_%llx", s->cache.nonce, (unsigned long long)id);
}

static pgw__cached_t *new_entry(pgw_session_t *s, uint64_t key, const char *sql, size_t len,
                                const uint32_t *oids, const pgw_param_t *params, size_t n)
{
    size_t size = sizeof(pgw__cached_t) + n * sizeof(uint32_t) + len + 1;
    make_room(s, size, NULL);
    pgw__cached_t *ce = pgw__malloc(s->alloc, size);
    if (!ce) return NULL;
    memset(ce, 0, sizeof *ce);
    uint32_t *o = (uint32_t *)(void *)(ce + 1);
    for (size_t i = 0; i < n; i++)
        o[i] = oids ? oids[i] : params[i].oid;
    char *q = (char *)(o + n);
    memcpy(q, sql, len);
    q[len] = '\0';
    ce->key = key;
    ce->id = ++s->cache.seq;
    ce->refs = 1; /* the cache's own */
    ce->in_cache = true;
    ce->noids = (uint16_t)n;
    ce->sql_len = len;
    ce->sql = q;
    ce->oids = o;
    ce->bytes = size;
    pgw__cache_name(s, ce->id, ce->name);
    ce->st.name = ce->name;
    pgw__cached_t **b = bucket(s, key);
    ce->hnext = *b;
    *b = ce;
    lru_push(s, ce);
    s->cache.stats.entries++;
    s->cache.stats.bytes += size;
    s->cache.stats.prepares++;
    return ce;
}

pgw__cached_t *pgw__cache_admit(pgw_session_t *s, uint64_t key, const char *sql, size_t len,
                                const pgw_param_t *params, size_t n, bool now)
{
    if (cache_init(s) < 0) return NULL;
    uint64_t *seen = &s->cache.seen[key & s->cache.seen_mask];
    if (!now && *seen != key) {
        *seen = key;
        return NULL;
    }
    return new_entry(s, key, sql, len, NULL, params, n);
}

pgw__cached_t *pgw__cache_readmit(pgw_session_t *s, const pgw__cached_t *old)
{
    if (cache_init(s) < 0) return NULL;
    return new_entry(s, old->key, old->sql, old->sql_len, old->oids, NULL, old->noids);
}

void pgw__cache_learned(pgw_session_t *s, pgw__cached_t *ce, const pgw_result_t *desc)
{
    /* An entry dropped while its first execution was in flight stays out. */
    if (!ce->in_cache || ce->st.known) return;
    if (pgw__stmt_fill(s, &ce->st, desc, ce->oids, ce->noids) < 0) return; /* stays pending */
    ce->bytes += ce->st.block_size;
    s->cache.stats.bytes += ce->st.block_size;
    if (ce->bytes > s->cache.max_bytes) {
        /* Larger than the whole budget: not kept. */
        s->cache.stats.evictions++;
        remove_entry(s, ce, true);
        return;
    }
    make_room(s, 0, ce);
}

void pgw__cache_free_all(pgw_session_t *s)
{
    while (s->cache.oldest) {
        pgw__cached_t *ce = s->cache.oldest;
        lru_unlink(s, ce);
        ce->in_cache = false;
        pgw__cache_unref(s, ce);
    }
    pgw__free(s->alloc, s->cache.buckets);
    pgw__free(s->alloc, s->cache.seen);
    pgw__free(s->alloc, s->cache.closes);
    s->cache.buckets = NULL;
    s->cache.seen = NULL;
    s->cache.closes = NULL;
    s->cache.nbuckets = 0;
    s->cache.ncloses = s->cache.closes_cap = 0;
}

PGW_EXTERN void pgw_session_stmt_cache_stats(const pgw_session_t *s, pgw_stmt_cache_stats_t *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (s) *out = s->cache.stats;
}
