/*
 * Fuzz target: rows of the type catalog query (pgw_type_registry_load_row)
 * and the decoders that then resolve types through the loaded registry.
 *
 * Input: nine fields, each a 2-byte big-endian length (0xFFFF: NULL)
 * followed by its bytes, repeated for as many rows as fit; what is left
 * after the last complete row is a text array value whose type is the first
 * loaded row's array type. Every row is loaded, every loaded oid resolved
 * (a cycle of domains must terminate), and the array parsed and iterated
 * through the registry.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/types_container.h"

/* One row's fields from *p; returns 0, or -1 when the input ran out. */
static int take_row(const uint8_t **p, const uint8_t *end, pgw_view_t *f)
{
    for (size_t i = 0; i < PGW_TYPE_LOAD_NFIELDS; i++) {
        if (end - *p < 2) return -1;
        unsigned len = (unsigned)(*p)[0] << 8 | (*p)[1];
        *p += 2;
        if (len == 0xFFFF) {
            f[i].p = NULL;
            f[i].len = -1;
            continue;
        }
        if ((size_t)(end - *p) < len) return -1;
        f[i].p = *p;
        f[i].len = (int32_t)len;
        *p += len;
    }
    return 0;
}

static void parse_array(const pgw_type_registry_t *reg, uint32_t oid, const uint8_t *p, size_t n)
{
    pgw_value_t v = {p, (int32_t)n, PGW_FORMAT_TEXT, oid};
    pgw_array_t a;
    if (pgw_array_parse_reg(reg, &v, &a) != 0) return;
    char scratch[256];
    pgw_array_iter_t it;
    pgw_value_t e;
    pgw_array_iter_init(&it, &a, scratch, sizeof scratch);
    while (pgw_array_next(&it, &e) == 1) {
        if (e.len > 0 && !(e.p >= p && e.p + e.len <= p + n) &&
            !(e.p >= (const uint8_t *)scratch && e.p + e.len <= (const uint8_t *)scratch + 256))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pgw_type_registry_t *reg;
    if (pgw_type_registry_new(&reg, NULL) != 0) return 0;
    const uint8_t *p = data, *end = data + size;
    uint32_t first_array = 0;
    pgw_view_t f[PGW_TYPE_LOAD_NFIELDS];
    for (int rows = 0; rows < 64; rows++) {
        const uint8_t *row = p;
        if (take_row(&p, end, f) != 0) {
            p = row;
            break;
        }
        if (pgw_type_registry_load_row(reg, f, PGW_TYPE_LOAD_NFIELDS) != 0) continue;
        /* A loaded row's oid field is a valid decimal number (leading
         * zeros included: all of it is read). */
        char *digits = malloc((size_t)f[0].len + 1);
        if (!digits) break;
        memcpy(digits, f[0].p, (size_t)f[0].len);
        digits[f[0].len] = '\0';
        uint32_t oid = (uint32_t)strtoul(digits, NULL, 10);
        free(digits);
        const pgw_type_catalog_t *cat;
        if (pgw_type_lookup_catalog(reg, oid, &cat) != 0) abort();
        (void)pgw_type_resolve_oid(reg, oid);
        (void)pgw_type_registry_binary_ok(reg, oid);
        if (!first_array) first_array = cat->array_oid ? cat->array_oid : oid;
    }
    parse_array(reg, first_array, p, (size_t)(end - p));
    pgw_type_registry_free(reg);
    return 0;
}
