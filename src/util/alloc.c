/* The default allocator and the string helpers built on pgw_allocator_t. */
#include "internal.h"

#include <stdlib.h>

static void *default_malloc(size_t n, void *ud)
{
    PGW__UNUSED(ud);
    return malloc(n);
}

static void *default_realloc(void *p, size_t n, void *ud)
{
    PGW__UNUSED(ud);
    return realloc(p, n);
}

static void default_free(void *p, void *ud)
{
    PGW__UNUSED(ud);
    free(p);
}

static const pgw_allocator_t default_allocator = {NULL, default_malloc, default_realloc,
                                                  default_free};

const pgw_allocator_t *pgw_allocator_default(void)
{
    return &default_allocator;
}

char *pgw__strndup(const pgw_allocator_t *a, const char *s, size_t n)
{
    if (n == SIZE_MAX) return NULL;
    char *d = pgw__malloc(a, n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *pgw__strdup(const pgw_allocator_t *a, const char *s)
{
    return pgw__strndup(a, s, strlen(s));
}
