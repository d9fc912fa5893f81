/*
 * An open-addressing index over an array the caller keeps: slots hold entry
 * numbers (plus one; 0 is empty) found by a 32-bit hash with linear
 * probing, and deletion shifts the following run back (no tombstones), so
 * every operation is O(1) amortised whatever the server or the caller
 * inserts. The caller says which entry matches a key (eq) and tells the
 * index when an entry moves in its array.
 */
#include "session_internal.h"

/* The slot where entry i (with hash h) sits. */
static size_t slot_of(const pgw__idx_t *x, uint32_t h, size_t i)
{
    size_t at = h & x->mask;
    while (x->slot[at] != i + 1)
        at = (at + 1) & x->mask;
    return at;
}

static void put(pgw__idx_t *x, uint32_t h, size_t i)
{
    size_t at = h & x->mask;
    while (x->slot[at])
        at = (at + 1) & x->mask;
    x->slot[at] = (uint32_t)(i + 1);
    x->hash[at] = h;
    x->n++;
}

int pgw__idx_reserve(pgw__idx_t *x, const pgw_allocator_t *a, size_t n)
{
    if (n > UINT32_MAX / 4) return PGW_ENOMEM;
    size_t cap = x->slot ? x->mask + 1 : 0;
    if (2 * n <= cap) return 0; /* at most half full */
    size_t ncap = cap ? cap : 16;
    while (ncap < 2 * n)
        ncap *= 2;
    uint32_t *slot = pgw__calloc(a, ncap, sizeof *slot);
    uint32_t *hash = pgw__malloc(a, ncap * sizeof *hash);
    if (!slot || !hash) {
        pgw__free(a, slot);
        pgw__free(a, hash);
        return PGW_ENOMEM;
    }
    pgw__idx_t old = *x;
    x->slot = slot;
    x->hash = hash;
    x->mask = ncap - 1;
    x->n = 0;
    for (size_t k = 0; k < cap; k++)
        if (old.slot[k]) put(x, old.hash[k], old.slot[k] - 1);
    pgw__free(a, old.slot);
    pgw__free(a, old.hash);
    return 0;
}

size_t pgw__idx_find(const pgw__idx_t *x, uint32_t h, bool (*eq)(const void *ctx, size_t i),
                     const void *ctx)
{
    if (!x->slot) return SIZE_MAX;
    for (size_t at = h & x->mask; x->slot[at]; at = (at + 1) & x->mask)
        if (x->hash[at] == h && eq(ctx, x->slot[at] - 1)) return x->slot[at] - 1;
    return SIZE_MAX;
}

void pgw__idx_put(pgw__idx_t *x, uint32_t h, size_t i)
{
    put(x, h, i);
}

void pgw__idx_del(pgw__idx_t *x, uint32_t h, size_t i)
{
    size_t hole = slot_of(x, h, i);
    x->slot[hole] = 0;
    x->n--;
    /* Shift back every entry of the run after the hole that may sit there:
     * one whose home slot is not between the hole and where it is. */
    for (size_t at = (hole + 1) & x->mask; x->slot[at]; at = (at + 1) & x->mask) {
        size_t home = x->hash[at] & x->mask;
        bool stays = hole <= at ? (hole < home && home <= at) : (hole < home || home <= at);
        if (stays) continue;
        x->slot[hole] = x->slot[at];
        x->hash[hole] = x->hash[at];
        x->slot[at] = 0;
        hole = at;
    }
}

void pgw__idx_move(pgw__idx_t *x, uint32_t h, size_t from, size_t to)
{
    x->slot[slot_of(x, h, from)] = (uint32_t)(to + 1);
}

void pgw__idx_free(pgw__idx_t *x, const pgw_allocator_t *a)
{
    pgw__free(a, x->slot);
    pgw__free(a, x->hash);
    memset(x, 0, sizeof *x);
}

uint32_t pgw__hash_bytes(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}
