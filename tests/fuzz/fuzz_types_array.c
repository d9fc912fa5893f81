/*
 * Fuzz target: array decoding. The first byte picks the format and the
 * column's type; the rest is the value. Parses the header, iterates every
 * element (text elements unescaped into a scratch of the value's size, as
 * documented), and runs every bulk getter. Text elements are also checked
 * to stay inside the input or the scratch.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/types_container.h"

static const uint32_t oids[8] = {0,
                                 PGW_OID_INT4_ARRAY,
                                 PGW_OID_TEXT_ARRAY,
                                 PGW_OID_INT8_ARRAY,
                                 PGW_OID_FLOAT8_ARRAY,
                                 PGW_OID_BOOL_ARRAY,
                                 PGW_OID_INT2_ARRAY,
                                 PGW_OID_FLOAT4_ARRAY};

static void iterate(const pgw_value_t *v)
{
    pgw_array_t a;
    if (pgw_array_parse(v, &a) != 0) return;
    size_t cap = (size_t)v->len;
    char *scratch = malloc(cap ? cap : 1);
    pgw_array_iter_t it;
    pgw_value_t e;
    pgw_array_iter_init(&it, &a, scratch, cap);
    size_t n = 0;
    int rc;
    while ((rc = pgw_array_next(&it, &e)) == 1) {
        n++;
        if (e.len < 0) continue;
        const uint8_t *lo = v->p, *hi = v->p + v->len;
        const uint8_t *slo = (const uint8_t *)scratch, *shi = slo + cap;
        int in_input = e.p >= lo && e.p + e.len <= hi;
        int in_scratch = e.p >= slo && e.p + e.len <= shi;
        if (!in_input && !in_scratch) abort();
    }
    /* A scratch of the value's size never runs out. */
    if (rc == PGW_ERANGE) abort();
    if (rc == 0 && n != a.nelems) abort();
    free(scratch);
}

static void bulk(const pgw_value_t *v)
{
    enum { CAP = 4096 };
    static int32_t i4[CAP];
    static int64_t i8[CAP];
    static int16_t i2[CAP];
    static double f8[CAP];
    static float f4[CAP];
    static bool b[CAP], nulls[CAP];
    size_t n;
    pgw_array_get_int4(v, i4, CAP, &n, nulls);
    pgw_array_get_int8(v, i8, CAP, &n, NULL);
    pgw_array_get_int2(v, i2, CAP, &n, nulls);
    pgw_array_get_float8(v, f8, CAP, &n, nulls);
    pgw_array_get_float4(v, f4, CAP, &n, NULL);
    pgw_array_get_bool(v, b, CAP, &n, nulls);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > INT32_MAX) return 0;
    pgw_value_t v = {data + 1, (int32_t)(size - 1), (int16_t)(data[0] & 1),
                     oids[(data[0] >> 1) & 7]};
    iterate(&v);
    bulk(&v);
    return 0;
}
