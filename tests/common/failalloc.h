/*
 * failalloc: a pgw_allocator_t for tests that counts what the code under
 * test allocates and fails allocations on demand (nghttp2's failmalloc,
 * curl's torture mode).
 *
 *   pgt_alloc_t fa;
 *   pgt_alloc_init(&fa);
 *   for (long n = 1; ...; n++) {
 *       pgt_alloc_reset(&fa);
 *       fa.fail_at = n;                  the n-th call returns NULL
 *       int rc = thing_new(&t, &fa.base);
 *       ... assert rc == 0 || rc == PGW_ENOMEM ...
 *       thing_free(t);
 *       assert_int_equal(fa.blocks, 0);  nothing leaked
 *   }
 *
 * Every block carries a small header with its size, so the byte counters
 * are exact; free(NULL) is a no-op, realloc(NULL, n) is malloc(n). One
 * pgt_alloc_t belongs to one thread (the counters are plain integers).
 */
#ifndef PGW_TESTS_FAILALLOC_H
#define PGW_TESTS_FAILALLOC_H

#include <stddef.h>

#include "pgwire/common.h"

typedef struct pgt_alloc {
    /* The allocator to hand out: &fa.base. Its ud points at this struct. */
    pgw_allocator_t base;
    /* What to fail. fail_at: the 1-based number of the malloc/realloc
     * call that returns NULL (0: none). fail_rest: every call after it
     * fails too (an exhausted budget rather than one failure). */
    long fail_at;
    int fail_rest;
    /* What happened since the last reset. */
    long calls;     /* malloc and realloc calls, failed ones included */
    long failures;  /* calls that returned NULL */
    long blocks;    /* blocks handed out and not yet freed */
    size_t bytes;   /* bytes in those blocks (as requested) */
    size_t peak;    /* the highest value bytes reached */
    size_t biggest; /* the largest single request (failed ones included) */
} pgt_alloc_t;

/* A static initializer for a pgt_alloc_t named var, e.g.
 *   static pgt_alloc_t g_fa = PGT_ALLOC_INITIALIZER(g_fa); */
#define PGT_ALLOC_INITIALIZER(var)                                                               \
    {                                                                                            \
        {&(var), pgt__alloc_malloc, pgt__alloc_realloc, pgt__alloc_free}, 0, 0, 0, 0, 0, 0, 0, 0 \
    }

/* Set fa up: no failure planned, every counter 0. Returns &fa->base. */
const pgw_allocator_t *pgt_alloc_init(pgt_alloc_t *fa);

/* Zero the counters calls, failures, peak and biggest and clear the plan
 * (fail_at 0, fail_rest 0); blocks and bytes are kept, since they describe
 * memory still held. */
void pgt_alloc_reset(pgt_alloc_t *fa);

/* The allocator's functions (for PGT_ALLOC_INITIALIZER). */
void *pgt__alloc_malloc(size_t n, void *ud);
void *pgt__alloc_realloc(void *p, size_t n, void *ud);
void pgt__alloc_free(void *p, void *ud);

#endif /* PGW_TESTS_FAILALLOC_H */
