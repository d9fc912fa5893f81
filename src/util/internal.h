/*
 * Internal helpers shared by every layer: allocation through a
 * pgw_allocator_t, big-endian loads and stores, and small utilities.
 * Not installed; never include from a public header.
 */
#ifndef PGW_UTIL_INTERNAL_H
#define PGW_UTIL_INTERNAL_H

#include "pgwire/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PGW__UNUSED(x)    ((void)(x))
#define PGW__ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Reconnect backoff, one rule for every layer that retries a connect (the
 * pool, the listener): the first wait is min, each failure doubles it up to
 * max, a success starts over. In whatever unit the caller keeps (ms, us).
 * The defaults, in milliseconds, of the options that set min and max.
 */
#define PGW__BACKOFF_MIN_MS 50u
#define PGW__BACKOFF_MAX_MS 5000u

typedef struct pgw__backoff {
    uint64_t min, max; /* max >= min */
    uint64_t cur;      /* the last wait (0: none since the last success) */
} pgw__backoff_t;

/* min and max from options (0: the defaults, scaled by unit_per_ms). */
static inline void pgw__backoff_init(pgw__backoff_t *b, uint64_t min, uint64_t max,
                                     uint64_t unit_per_ms)
{
    b->min = min ? min : PGW__BACKOFF_MIN_MS * unit_per_ms;
    b->max = max ? max : PGW__BACKOFF_MAX_MS * unit_per_ms;
    if (b->max < b->min) b->max = b->min;
    b->cur = 0;
}

/* A try failed: the wait before the next one. */
static inline uint64_t pgw__backoff_next(pgw__backoff_t *b)
{
    b->cur = !b->cur ? b->min : b->cur >= b->max / 2 ? b->max : b->cur * 2;
    return b->cur;
}

static inline void pgw__backoff_reset(pgw__backoff_t *b)
{
    b->cur = 0;
}

static inline const pgw_allocator_t *pgw__alloc_or_default(const pgw_allocator_t *a)
{
    return a ? a : pgw_allocator_default();
}

static inline void *pgw__malloc(const pgw_allocator_t *a, size_t n)
{
    a = pgw__alloc_or_default(a);
    return a->malloc(n ? n : 1, a->ud);
}

static inline void *pgw__realloc(const pgw_allocator_t *a, void *p, size_t n)
{
    a = pgw__alloc_or_default(a);
    return a->realloc(p, n ? n : 1, a->ud);
}

static inline void pgw__free(const pgw_allocator_t *a, void *p)
{
    if (!p) return;
    a = pgw__alloc_or_default(a);
    a->free(p, a->ud);
}

/* Copy a caller's versioned struct (its first member a size_t size) into
 * this library's layout: members past the caller's size read as zero; a
 * size of 0 means this library's size. */
static inline void pgw__copy_sized(void *dst, size_t dst_size, const void *src)
{
    size_t n;
    memcpy(&n, src, sizeof n);
    if (n == 0 || n > dst_size) n = dst_size;
    memset(dst, 0, dst_size);
    memcpy(dst, src, n);
    memcpy(dst, &dst_size, sizeof dst_size);
}

/* calloc with an overflow check on count * size. */
static inline void *pgw__calloc(const pgw_allocator_t *a, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) return NULL;
    void *p = pgw__malloc(a, count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

/* Zeroes n bytes at p, a store the compiler keeps although the memory is
 * about to be freed (a secret's last use): memset at its own speed, then
 * an empty asm that the compiler must assume reads p's memory. */
static inline void pgw__wipe(void *p, size_t n)
{
    if (!p || !n) return;
    memset(p, 0, n);
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

/* Overwrite the NUL-terminated secret s with zeros (pgw__wipe) and free
 * it; NULL is a no-op. */
static inline void pgw__free_secret(const pgw_allocator_t *a, char *s)
{
    if (!s) return;
    pgw__wipe(s, strlen(s));
    pgw__free(a, s);
}

/* pgw_buf_reserve with its common case inline: the room is there already
 * (len + extra <= cap, and within max). Same results. */
static inline int pgw__buf_room(pgw_buf_t *b, size_t extra)
{
    if (extra <= b->cap - b->len && (!b->max || b->len + extra <= b->max)) return 0;
    return pgw_buf_reserve(b, extra);
}

/* Duplicate n bytes into a NUL-terminated string. */
char *pgw__strndup(const pgw_allocator_t *a, const char *s, size_t n);
char *pgw__strdup(const pgw_allocator_t *a, const char *s);

static inline uint16_t pgw__get16(const uint8_t *p)
{
    return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t pgw__get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t pgw__get64(const uint8_t *p)
{
    return (uint64_t)pgw__get32(p) << 32 | pgw__get32(p + 4);
}

static inline void pgw__put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static inline void pgw__put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline void pgw__put64(uint8_t *p, uint64_t v)
{
    pgw__put32(p, (uint32_t)(v >> 32));
    pgw__put32(p + 4, (uint32_t)v);
}

/* An inclusive range of Unicode code points. The generated tables
 * (saslprep's, the screen-width ones) are sorted arrays of them. */
typedef struct pgw__cp_range {
    uint32_t lo, hi;
} pgw__cp_range_t;

/* Whether cp lies in one of the n sorted, disjoint ranges r. */
static inline bool pgw__in_ranges(const pgw__cp_range_t *r, size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < r[mid].lo)
            hi = mid;
        else if (cp > r[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

/* snprintf into err[0..errlen) when err is not NULL and errlen > 0 (the
 * error-message buffers of conninfo, requirepeer and TLS); returns code. */
int pgw__fail_msg(char *err, size_t errlen, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
