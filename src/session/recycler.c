/*
 * The recycler shared by a session and its results: the memory they reuse
 * instead of allocating again, read chunks with reference counts and
 * recycled results (not a pool of connections). A session reads into chunks; a
 * buffered result keeps references to the chunks holding its DataRows, so
 * rows are never copied. When the last reference to a chunk goes, the chunk
 * returns to a free list: default-size chunks to a LIFO list, larger chunks
 * (each sized for one big message) to a best-fit list. Four default-size
 * chunks are always kept; past those, chunks of both kinds are kept within
 * one byte budget (chunk_cache_bytes), so a steady stream of large rows, or
 * of buffered results that span many chunks, reuses memory that is already
 * mapped instead of faulting fresh pages in on every query. Past those
 * bounds a chunk goes back to the allocator.
 *
 * The recycler itself is reference-counted because results may outlive the
 * session: it is freed when the session and its last result are gone.
 *
 * Threads (results_any_thread): results freed on other threads than the
 * session's touch the free lists and reference counts the session uses,
 * so each entry point below holds the recycler's lock (a spin lock: its
 * sections are a few instructions and an allocator call). The static
 * helpers run with the lock held.
 */
#include "session_internal.h"

#include <sched.h>

int pgw__recycler_new(pgw__recycler_t **out, const pgw_allocator_t *alloc, size_t chunk_size,
                      size_t big_budget)
{
    alloc = pgw__alloc_or_default(alloc);
    pgw__recycler_t *p = pgw__calloc(alloc, 1, sizeof *p);
    if (!p) return PGW_ENOMEM;
    p->alloc = *alloc;
    atomic_flag_clear(&p->lock);
    p->refs = 1;
    p->chunk_size = chunk_size;
    p->big_budget = big_budget;
    *out = p;
    return 0;
}

void pgw__recycler_lock(pgw__recycler_t *p)
{
    if (!p->shared) return;
    for (unsigned spins = 0; atomic_flag_test_and_set_explicit(&p->lock, memory_order_acquire);)
        if (++spins % 64 == 0) sched_yield(); /* its holder may not be running */
}

void pgw__recycler_unlock(pgw__recycler_t *p)
{
    if (p->shared) atomic_flag_clear_explicit(&p->lock, memory_order_release);
}

void pgw__recycler_ref(pgw__recycler_t *p)
{
    pgw__recycler_lock(p);
    p->refs++;
    pgw__recycler_unlock(p);
}

static void result_destroy(pgw__recycler_t *p, pgw_result_t *r)
{
    pgw__arena_block_t *b = r->arena;
    while (b) {
        pgw__arena_block_t *next = b->next;
        pgw__free(&p->alloc, b);
        b = next;
    }
    pgw__free(&p->alloc, r->cells);
    pgw__free(&p->alloc, r->chunks);
    pgw__free(&p->alloc, r);
}

/* The last reference went: nobody else can reach p. */
static void recycler_destroy(pgw__recycler_t *p)
{
    pgw__text_settings_unref(p, p->text_settings);
    pgw_allocator_t a = p->alloc;
    pgw__chunk_t *lists[] = {p->free_chunks, p->free_big};
    for (size_t i = 0; i < PGW__ARRAY_LEN(lists); i++) {
        while (lists[i]) {
            pgw__chunk_t *c = lists[i];
            lists[i] = c->next;
            pgw__free(&a, c);
        }
    }
    while (p->free_results) {
        pgw_result_t *r = p->free_results;
        p->free_results = r->next;
        result_destroy(p, r);
    }
    pgw__free(&a, p);
}

void pgw__recycler_unref(pgw__recycler_t *p)
{
    pgw__recycler_lock(p);
    bool last = --p->refs == 0;
    pgw__recycler_unlock(p);
    if (last) recycler_destroy(p);
}

/* Unlink and return the smallest kept big chunk of at least cap bytes. */
static pgw__chunk_t *take_big(pgw__recycler_t *p, size_t cap)
{
    pgw__chunk_t **best = NULL;
    for (pgw__chunk_t **at = &p->free_big; *at; at = &(*at)->next)
        if ((*at)->cap >= cap && (!best || (*at)->cap < (*best)->cap)) best = at;
    if (!best) return NULL;
    pgw__chunk_t *c = *best;
    *best = c->next;
    p->nfree_big--;
    p->free_bytes -= c->cap;
    return c;
}

static pgw__chunk_t *chunk_get(pgw__recycler_t *p, size_t cap)
{
    pgw__chunk_t *c = NULL;
    if (cap <= p->chunk_size && p->free_chunks) {
        c = p->free_chunks;
        p->free_chunks = c->next;
        p->nfree_chunks--;
        p->free_bytes -= c->cap;
    } else if (cap > p->chunk_size) {
        c = take_big(p, cap);
    }
    if (!c) {
        if (cap < p->chunk_size) cap = p->chunk_size;
        if (cap > SIZE_MAX - sizeof *c) return NULL;
        c = pgw__malloc(&p->alloc, sizeof *c + cap);
        if (!c) return NULL;
        c->recycler = p;
        c->cap = cap;
        c->data = (uint8_t *)(c + 1);
    }
    c->next = NULL;
    c->refs = 1;
    return c;
}

pgw__chunk_t *pgw__chunk_get(pgw__recycler_t *p, size_t cap)
{
    pgw__recycler_lock(p);
    pgw__chunk_t *c = chunk_get(p, cap);
    pgw__recycler_unlock(p);
    return c;
}

void pgw__chunk_ref(pgw__chunk_t *c)
{
    pgw__recycler_lock(c->recycler);
    c->refs++;
    pgw__recycler_unlock(c->recycler);
}

bool pgw__chunk_sole(pgw__chunk_t *c)
{
    pgw__recycler_lock(c->recycler);
    bool sole = c->refs == 1;
    pgw__recycler_unlock(c->recycler);
    return sole;
}

/* Is there room in the budget for keeping cap more bytes of chunks? */
static bool budget_fits(const pgw__recycler_t *p, size_t cap)
{
    return p->free_bytes <= p->big_budget && cap <= p->big_budget - p->free_bytes;
}

static void chunk_unref(pgw__chunk_t *c)
{
    if (--c->refs > 0) return;
    pgw__recycler_t *p = c->recycler;
    if (c->cap == p->chunk_size &&
        (p->nfree_chunks < PGW__RECYCLE_MAX_FREE_CHUNKS || budget_fits(p, c->cap))) {
        c->next = p->free_chunks;
        p->free_chunks = c;
        p->nfree_chunks++;
        p->free_bytes += c->cap;
        return;
    }
    if (c->cap > p->chunk_size && p->nfree_big < PGW__RECYCLE_MAX_FREE_BIG &&
        budget_fits(p, c->cap)) {
        c->next = p->free_big;
        p->free_big = c;
        p->nfree_big++;
        p->free_bytes += c->cap;
        return;
    }
    pgw__free(&p->alloc, c);
}

void pgw__chunk_unref(pgw__chunk_t *c)
{
    pgw__recycler_t *p = c->recycler;
    pgw__recycler_lock(p);
    chunk_unref(c);
    pgw__recycler_unlock(p);
}

/* ------------------------------------------------------------------ results */

/* The storage a recycled result keeps (what reusing it saves). */
static size_t kept_bytes(const pgw_result_t *r)
{
    return sizeof *r + (r->arena ? sizeof *r->arena + r->arena->size : 0) +
           r->cells_cap * sizeof *r->cells + r->chunks_cap * sizeof *r->chunks;
}

static pgw_result_t *result_new(pgw__recycler_t *rec)
{
    pgw_result_t *r = rec->free_results;
    if (r) {
        rec->free_results = r->next;
        rec->nfree_results--;
        rec->free_result_bytes -= kept_bytes(r);
    } else {
        r = pgw__calloc(&rec->alloc, 1, sizeof *r);
        if (!r) return NULL;
        r->recycler = rec;
    }
    r->next = NULL;
    r->tag = "";
    r->rows_affected = -1;
    r->text_settings = pgw__text_settings_capture(rec);
    rec->refs++;
    return r;
}

pgw_result_t *pgw__result_new(pgw__recycler_t *rec)
{
    pgw__recycler_lock(rec);
    pgw_result_t *r = result_new(rec);
    pgw__recycler_unlock(rec);
    return r;
}

/* Drop everything the result refers to but keep its reusable storage. */
static void result_reset(pgw_result_t *r)
{
    pgw__recycler_t *p = r->recycler;
    pgw__text_settings_unref(p, r->text_settings);
    for (size_t i = 0; i < r->nchunks; i++)
        chunk_unref(r->chunks[i]);
    r->nchunks = 0;
    /* Keep the first arena block (the largest ever needed, see
     * pgw__result_alloc), free the rest. */
    pgw__arena_block_t *b = r->arena;
    if (b) {
        pgw__arena_block_t *rest = b->next;
        while (rest) {
            pgw__arena_block_t *next = rest->next;
            pgw__free(&p->alloc, rest);
            rest = next;
        }
        b->next = NULL;
        b->used = 0;
        if (b->size > PGW__RESULT_KEEP_ARENA) {
            pgw__free(&p->alloc, b);
            r->arena = NULL;
        }
    }
    if (r->cells_cap > PGW__RESULT_KEEP_CELL_BYTES / sizeof *r->cells) {
        pgw__free(&p->alloc, r->cells);
        r->cells = NULL;
        r->cells_cap = 0;
    }
    pgw_value_t *cells = r->cells;
    size_t cells_cap = r->cells_cap;
    pgw__chunk_t **chunks = r->chunks;
    size_t chunks_cap = r->chunks_cap;
    pgw__arena_block_t *arena = r->arena;
    memset(r, 0, sizeof *r);
    r->recycler = p;
    r->cells = cells;
    r->cells_cap = cells_cap;
    r->chunks = chunks;
    r->chunks_cap = chunks_cap;
    r->arena = arena;
}

void pgw__result_recycle(pgw_result_t *r)
{
    pgw__recycler_t *p = r->recycler;
    pgw__recycler_lock(p);
    result_reset(r);
    size_t kb = kept_bytes(r);
    if (p->nfree_results < PGW__RECYCLE_MAX_FREE_RESULTS ||
        p->free_result_bytes + kb <= PGW__RECYCLE_FREE_RESULT_BYTES) {
        r->next = p->free_results;
        p->free_results = r;
        p->nfree_results++;
        p->free_result_bytes += kb;
    } else {
        result_destroy(p, r);
    }
    bool last = --p->refs == 0;
    pgw__recycler_unlock(p);
    if (last) recycler_destroy(p);
}
