/* The growable output buffer. Grows geometrically and keeps its capacity
 * across resets, so steady-state encoding does not allocate. */
#include "internal.h"

void pgw_buf_init(pgw_buf_t *b, const pgw_allocator_t *alloc)
{
    memset(b, 0, sizeof *b);
    b->alloc = alloc;
}

int pgw_buf_reserve(pgw_buf_t *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len) return PGW_ETOOBIG;
    size_t need = b->len + extra;
    if (b->max && need > b->max) return PGW_ETOOBIG;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (b->max && cap > b->max) cap = b->max;
    uint8_t *p = pgw__realloc(b->alloc, b->data, cap);
    if (!p) return PGW_ENOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

int pgw_buf_append(pgw_buf_t *b, const void *p, size_t n)
{
    int rc = pgw_buf_reserve(b, n);
    if (rc < 0) return rc;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

void pgw_buf_consume(pgw_buf_t *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

void pgw_buf_reset(pgw_buf_t *b)
{
    b->len = 0;
}

void pgw_buf_free(pgw_buf_t *b)
{
    pgw__free(b->alloc, b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
