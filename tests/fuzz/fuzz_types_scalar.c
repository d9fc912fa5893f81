/*
 * Fuzz the scalar decoders: input[0] picks a type OID, input[1] the format
 * (low bit), the rest is the value. Every getter runs on it (most must
 * answer PGW_ETYPE); whatever decodes is re-encoded and decoded again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/types.h"
#include "types/types_internal.h"

static const uint32_t oids[] = {
    PGW_OID_BOOL,    PGW_OID_BYTEA,     PGW_OID_CHAR,        PGW_OID_NAME,     PGW_OID_INT8,
    PGW_OID_INT2,    PGW_OID_INT4,      PGW_OID_TEXT,        PGW_OID_OID,      PGW_OID_JSON,
    PGW_OID_CIDR,    PGW_OID_FLOAT4,    PGW_OID_FLOAT8,      PGW_OID_MACADDR8, PGW_OID_MONEY,
    PGW_OID_MACADDR, PGW_OID_INET,      PGW_OID_BPCHAR,      PGW_OID_VARCHAR,  PGW_OID_DATE,
    PGW_OID_TIME,    PGW_OID_TIMESTAMP, PGW_OID_TIMESTAMPTZ, PGW_OID_INTERVAL, PGW_OID_TIMETZ,
    PGW_OID_NUMERIC, PGW_OID_UUID,      PGW_OID_JSONB,       PGW_OID_JSONPATH, PGW_OID_XML,
    PGW_OID_POINT};

static void run_getters(const pgw_value_t *v)
{
    bool b;
    int16_t i2;
    int32_t i4;
    int64_t i8;
    uint32_t o;
    float f4;
    double f8;
    pgw_str_t s;
    char c;
    pgw_view_t view;
    uint8_t small[8], u[16];
    size_t n;
    pgw_get_bool(v, &b);
    pgw_get_int2(v, &i2);
    pgw_get_int4(v, &i4);
    pgw_get_int8(v, &i8);
    pgw_get_oid(v, &o);
    pgw_get_float4(v, &f4);
    pgw_get_float8(v, &f8);
    pgw_get_text(v, &s);
    pgw_get_json(v, &s);
    pgw_get_char(v, &c);
    pgw_get_bytea_view(v, &view);
    if (pgw_get_bytea(v, small, sizeof small, &n) == PGW_ERANGE) {
        uint8_t *big = malloc(n ? n : 1);
        if (pgw_get_bytea(v, big, n, &n) != 0) abort();
        free(big);
    }
    pgw_get_uuid(v, u);
    pgw_get_macaddr(v, small);
    pgw_get_macaddr8(v, small);
    pgw_get_money(v, &i8);
    pgw_inet_t in;
    pgw_get_inet(v, &in);
    int32_t days;
    pgw_get_date(v, &days);
    pgw_get_time(v, &i8);
    pgw_timetz_t tz;
    pgw_get_timetz(v, &tz);
    pgw_get_timestamp(v, &i8);
    pgw_get_timestamptz(v, &i8);
    pgw_get_timestamp_unix(v, &i8);
    pgw_tm_t tm;
    if (pgw_get_tm(v, &tm) == 0 && v->oid == PGW_OID_TIMESTAMP) {
        /* a broken-down timestamp converts back (dates go beyond timestamps) */
        int64_t back;
        if (pgw_tm_to_timestamp(&tm, &back) != 0) abort();
    }
    pgw_interval_t iv;
    pgw_get_interval(v, &iv);
    pgw_numeric_t num;
    uint8_t *st = malloc(PGW_NUMERIC_STORAGE(v->len > 0 ? v->len : 0));
    if (pgw_get_numeric(v, &num, st, PGW_NUMERIC_STORAGE(v->len > 0 ? v->len : 0)) == 0) {
        size_t need;
        char tmp[64];
        if (pgw_numeric_to_str(&num, tmp, sizeof tmp, &need) == PGW_ERANGE) {
            char *big = malloc(need);
            if (pgw_numeric_to_str(&num, big, need, &need) != 0) abort();
            free(big);
        }
        pgw_numeric_to_double(&num, &f8);
        pgw_numeric_to_int64(&num, &i8);
    }
    free(st);
    pgw_get_numeric_double(v, &f8);
    pgw_get_numeric_int64(v, &i8);
    char tmp[32];
    pgw_get_numeric_str(v, tmp, sizeof tmp, &n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    /* a private copy so reads past the value are caught */
    size_t len = size - 2;
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, data + 2, len);
    pgw_value_t v = {copy, (int32_t)len, (int16_t)(data[1] & 1),
                     oids[data[0] % (sizeof oids / sizeof oids[0])]};
    run_getters(&v);
    pgw_datum_t d;
    if (pgw_get_datum(&v, &d) == 0 && d.kind != PGW_DATUM_NULL) {
        pgw_buf_t out;
        pgw_buf_init(&out, NULL);
        if (pgw__encode_scalar(&d, 0, &out) == 0) {
            /* what we encode, we decode */
            pgw_value_t back = {out.data ? out.data : (const uint8_t *)"", (int32_t)out.len,
                                PGW_FORMAT_BINARY, v.oid};
            pgw_datum_t d2;
            if (pgw_get_datum(&back, &d2) != 0) abort();
        }
        pgw_buf_free(&out);
    }
    free(copy);
    return 0;
}
