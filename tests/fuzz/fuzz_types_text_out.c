/*
 * Fuzz the server's-text formatter and the time zone readers: input[0]
 * picks a type (every type pgw_value_to_text formats, containers too) or
 * one of the two zone parsers; the rest is the binary value (or the TZif
 * bytes, or the POSIX string), copied into a buffer of exactly its size so
 * that a read past it is caught by the sanitizers. A formatted value must
 * leave the output untouched on error; the same bytes as a text value must
 * come back as they are.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/types_container.h"

static const uint32_t oids[] = {PGW_OID_BOOL,
                                PGW_OID_BYTEA,
                                PGW_OID_CHAR,
                                PGW_OID_NAME,
                                PGW_OID_INT8,
                                PGW_OID_INT2,
                                PGW_OID_INT2VECTOR,
                                PGW_OID_INT4,
                                PGW_OID_TEXT,
                                PGW_OID_OID,
                                PGW_OID_TID,
                                PGW_OID_XID,
                                PGW_OID_CID,
                                PGW_OID_OIDVECTOR,
                                PGW_OID_JSON,
                                PGW_OID_XML,
                                PGW_OID_POINT,
                                PGW_OID_LSEG,
                                PGW_OID_PATH,
                                PGW_OID_BOX,
                                PGW_OID_POLYGON,
                                PGW_OID_LINE,
                                PGW_OID_CIDR,
                                PGW_OID_FLOAT4,
                                PGW_OID_FLOAT8,
                                PGW_OID_CIRCLE,
                                PGW_OID_MACADDR8,
                                PGW_OID_MONEY,
                                PGW_OID_MACADDR,
                                PGW_OID_INET,
                                PGW_OID_BPCHAR,
                                PGW_OID_VARCHAR,
                                PGW_OID_DATE,
                                PGW_OID_TIME,
                                PGW_OID_TIMESTAMP,
                                PGW_OID_TIMESTAMPTZ,
                                PGW_OID_INTERVAL,
                                PGW_OID_TIMETZ,
                                PGW_OID_BIT,
                                PGW_OID_VARBIT,
                                PGW_OID_NUMERIC,
                                PGW_OID_REFCURSOR,
                                PGW_OID_RECORD,
                                PGW_OID_UUID,
                                PGW_OID_TXID_SNAPSHOT,
                                PGW_OID_PG_LSN,
                                PGW_OID_JSONB,
                                PGW_OID_INT4RANGE,
                                PGW_OID_NUMRANGE,
                                PGW_OID_TSRANGE,
                                PGW_OID_TSTZRANGE,
                                PGW_OID_DATERANGE,
                                PGW_OID_INT8RANGE,
                                PGW_OID_JSONPATH,
                                PGW_OID_INT4MULTIRANGE,
                                PGW_OID_TSTZMULTIRANGE,
                                PGW_OID_PG_SNAPSHOT,
                                PGW_OID_XID8,
                                PGW_OID_INT4_ARRAY,
                                PGW_OID_TEXT_ARRAY,
                                PGW_OID_BOX_ARRAY,
                                PGW_OID_RECORD_ARRAY,
                                PGW_OID_TIMESTAMPTZ_ARRAY,
                                PGW_OID_NUMERIC_ARRAY,
                                PGW_OID_REGCLASS,
                                0};

#define MODE_TZIF  (sizeof oids / sizeof oids[0])
#define MODE_POSIX (MODE_TZIF + 1)

static void fuzz_zone(int tzif, const uint8_t *p, size_t n)
{
    pgw_tz_t *tz = NULL;
    int rc =
        tzif ? pgw_tz_from_tzif(&tz, p, n, NULL) : pgw_tz_from_posix(&tz, (const char *)p, n, NULL);
    if ((rc == 0) != (tz != NULL)) abort();
    static const int64_t at[] = {INT64_MIN, -5000000000, -1, 0, 1710057600, 4102444800, INT64_MAX};
    for (size_t i = 0; tz && i < sizeof at / sizeof at[0]; i++) {
        int32_t off;
        if (pgw_tz_gmtoff(tz, at[i], &off) != 0) abort();
        if (off <= -26 * 3600 - 7 * 24 * 3600 || off >= 26 * 3600 + 7 * 24 * 3600) abort();
    }
    pgw_tz_free(tz);
}

static void fuzz_value(uint32_t oid, const uint8_t *p, size_t n)
{
    static pgw_tz_t *zone;
    if (!zone) {
        const char *spec = "CST6CDT,M3.2.0,M11.1.0";
        if (pgw_tz_from_posix(&zone, spec, strlen(spec), NULL) != 0) abort();
    }
    pgw_text_ctx_t ctx = {zone, NULL, 0};
    pgw_value_t v = {p, (int32_t)n, PGW_FORMAT_BINARY, oid};
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    int rc = pgw_value_to_text(&v, &ctx, &out);
    if (rc < 0 && out.len != 0) abort();
    pgw_buf_reset(&out);
    ctx.flags = PGW_TEXT_TZ_UNKNOWN | PGW_TEXT_OTHER_STYLE;
    rc = pgw_value_to_text(&v, &ctx, &out);
    if (rc < 0 && out.len != 0) abort();
    pgw_buf_reset(&out);
    v.format = PGW_FORMAT_TEXT;
    if (pgw_value_to_text(&v, NULL, &out) != 0 || out.len != n || (n && memcmp(out.data, p, n)))
        abort();
    pgw_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > (1u << 20)) return 0;
    size_t mode = data[0] % (MODE_POSIX + 1);
    size_t n = size - 1;
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) return 0;
    if (n) memcpy(copy, data + 1, n);
    if (mode == MODE_TZIF || mode == MODE_POSIX)
        fuzz_zone(mode == MODE_TZIF, copy, n);
    else
        fuzz_value(oids[mode], copy, n);
    free(copy);
    return 0;
}
