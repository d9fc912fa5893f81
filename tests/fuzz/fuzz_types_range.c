/*
 * Fuzz target: ranges, multiranges and composite values. The first byte
 * picks the decoder, the format and the type; the rest is the value. Every
 * range, multirange member and record field is decoded, and every view
 * handed out must lie inside the input or the scratch buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/types_container.h"

static const uint8_t *lo, *hi, *slo, *shi;

static void check_view(const pgw_value_t *e)
{
    if (e->len < 0) return;
    int in_input = e->p >= lo && e->p + e->len <= hi;
    int in_scratch = e->p >= slo && e->p + e->len <= shi;
    if (!in_input && !in_scratch) abort();
}

static void do_range(const pgw_value_t *v, char *scratch, size_t cap)
{
    pgw_range_t r;
    if (pgw_range_parse(v, &r, scratch, cap) == 0) {
        check_view(&r.lower);
        check_view(&r.upper);
        if ((r.flags & PGW_RANGE_EMPTY) && (r.lower.len >= 0 || r.upper.len >= 0)) abort();
    }
}

static void do_multirange(const pgw_value_t *v, char *scratch, size_t cap)
{
    pgw_multirange_t m;
    if (pgw_multirange_parse(v, &m) != 0) return;
    pgw_multirange_iter_t it;
    pgw_range_t r;
    pgw_multirange_iter_init(&it, &m, scratch, cap);
    size_t n = 0;
    int rc;
    while ((rc = pgw_multirange_next(&it, &r)) == 1) {
        check_view(&r.lower);
        check_view(&r.upper);
        n++;
    }
    /* A validated multirange iterates fully with a value-sized scratch. */
    if (rc != 0 || n != m.count) abort();
}

static void do_record(const pgw_value_t *v, char *scratch, size_t cap)
{
    pgw_record_t rec;
    if (pgw_record_parse(v, &rec) != 0) return;
    pgw_record_iter_t it;
    pgw_value_t f;
    pgw_record_iter_init(&it, &rec, scratch, cap);
    size_t n = 0;
    int rc;
    while ((rc = pgw_record_next(&it, &f)) == 1) {
        check_view(&f);
        n++;
    }
    if (rc != 0 || n != rec.nfields) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint32_t range_oids[4] = {PGW_OID_INT4RANGE, PGW_OID_NUMRANGE, PGW_OID_TSRANGE, 0};
    static const uint32_t multi_oids[4] = {PGW_OID_INT4MULTIRANGE, PGW_OID_DATEMULTIRANGE,
                                           PGW_OID_TSTZMULTIRANGE, 0};
    if (size < 1 || size > INT32_MAX) return 0;
    uint8_t sel = data[0];
    size_t cap = size - 1;
    char *scratch = malloc(cap ? cap : 1);
    lo = data + 1;
    hi = data + size;
    slo = (const uint8_t *)scratch;
    shi = slo + cap;
    pgw_value_t v = {data + 1, (int32_t)(size - 1), (int16_t)(sel & 1), 0};
    switch ((sel >> 1) % 3) {
    case 0:
        v.oid = range_oids[(sel >> 3) & 3];
        do_range(&v, scratch, cap);
        break;
    case 1:
        v.oid = multi_oids[(sel >> 3) & 3];
        do_multirange(&v, scratch, cap);
        break;
    default:
        v.oid = PGW_OID_RECORD;
        do_record(&v, scratch, cap);
        break;
    }
    free(scratch);
    return 0;
}
