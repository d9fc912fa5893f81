/*
 * failalloc: the counting, failing test allocator (see failalloc.h).
 */
#include "failalloc.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The header in front of every block: its size, padded so the block
 * keeps malloc's alignment. */
typedef union header {
    size_t size;
    max_align_t align;
} header_t;

const pgw_allocator_t *pgt_alloc_init(pgt_alloc_t *fa)
{
    memset(fa, 0, sizeof *fa);
    fa->base.ud = fa;
    fa->base.malloc = pgt__alloc_malloc;
    fa->base.realloc = pgt__alloc_realloc;
    fa->base.free = pgt__alloc_free;
    return &fa->base;
}

void pgt_alloc_reset(pgt_alloc_t *fa)
{
    fa->fail_at = 0;
    fa->fail_rest = 0;
    fa->calls = 0;
    fa->failures = 0;
    fa->peak = fa->bytes;
    fa->biggest = 0;
}

/* Count one call of n bytes; true if it must fail. */
static int must_fail(pgt_alloc_t *fa, size_t n)
{
    fa->calls++;
    if (n > fa->biggest) fa->biggest = n;
    int fail =
        fa->fail_at && (fa->calls == fa->fail_at || (fa->fail_rest && fa->calls > fa->fail_at));
    if (fail) fa->failures++;
    return fail;
}

static void grew(pgt_alloc_t *fa, size_t n)
{
    fa->bytes += n;
    if (fa->bytes > fa->peak) fa->peak = fa->bytes;
}

void *pgt__alloc_malloc(size_t n, void *ud)
{
    pgt_alloc_t *fa = ud;
    if (must_fail(fa, n) || n > SIZE_MAX - sizeof(header_t)) return NULL;
    header_t *h = malloc(sizeof *h + n);
    if (!h) return NULL;
    h->size = n;
    fa->blocks++;
    grew(fa, n);
    return h + 1;
}

void *pgt__alloc_realloc(void *p, size_t n, void *ud)
{
    pgt_alloc_t *fa = ud;
    if (!p) return pgt__alloc_malloc(n, ud);
    if (must_fail(fa, n) || n > SIZE_MAX - sizeof(header_t)) return NULL;
    header_t *h = (header_t *)p - 1;
    size_t old = h->size;
    header_t *q = realloc(h, sizeof *q + n);
    if (!q) return NULL;
    q->size = n;
    fa->bytes -= old;
    grew(fa, n);
    return q + 1;
}

void pgt__alloc_free(void *p, void *ud)
{
    pgt_alloc_t *fa = ud;
    if (!p) return;
    header_t *h = (header_t *)p - 1;
    fa->blocks--;
    fa->bytes -= h->size;
    free(h);
}
