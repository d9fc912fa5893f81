/*
 * Unit tests of pgw_value_to_text (text_out*.c) and of the time zones
 * (tz.c) on hand-made binary values: the server's text for edge values of
 * each type (the integration test compares the rest with a real server),
 * malformed bytes (lengths, counts, nesting) as errors that leave the
 * output as it was, the context flags, and zones from POSIX strings, from
 * hand-made and truncated TZif bytes and from the system's tzdata.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pgwire/types_container.h"
#include "types/float_fmt.h"
#include "util/internal.h"

/* The text of binary bytes p[0..n) of type oid under ctx (NULL: defaults),
 * or the error; the buffer starts with "x" that must survive. */
static int text_ctx(uint32_t oid, const void *p, size_t n, const pgw_text_ctx_t *ctx, char *out,
                    size_t cap)
{
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_buf_append(&b, "x", 1), 0);
    pgw_value_t v = {p, (int32_t)n, PGW_FORMAT_BINARY, oid};
    int rc = pgw_value_to_text(&v, ctx, &b);
    if (rc < 0) assert_int_equal(b.len, 1); /* left as it was */
    assert_memory_equal(b.data, "x", 1);
    size_t len = b.len - 1 < cap - 1 ? b.len - 1 : cap - 1;
    memcpy(out, b.data + 1, len);
    out[len] = '\0';
    pgw_buf_free(&b);
    return rc;
}

static void expect(uint32_t oid, const void *p, size_t n, const char *want)
{
    char got[512];
    int rc = text_ctx(oid, p, n, NULL, got, sizeof got);
    if (rc != 0) fail_msg("oid %u: %s, want '%s'", oid, pgw_err_name(rc), want);
    assert_string_equal(got, want);
}

static void expect_err(uint32_t oid, const void *p, size_t n, int err)
{
    char got[512];
    assert_int_equal(text_ctx(oid, p, n, NULL, got, sizeof got), err);
}

static void be64(uint8_t *p, uint64_t v)
{
    pgw__put64(p, v);
}

static void expect_float4(float f, const char *want)
{
    uint8_t b[4];
    uint32_t bits;
    memcpy(&bits, &f, 4);
    pgw__put32(b, bits);
    expect(PGW_OID_FLOAT4, b, 4, want);
}

static void test_numbers(void **state)
{
    (void)state;
    uint8_t b[16];
    expect(PGW_OID_BOOL, "\1", 1, "t");
    expect(PGW_OID_BOOL, "\0", 1, "f");
    expect_err(PGW_OID_BOOL, "\2", 1, PGW_EFORMAT);
    pgw__put16(b, 0x8000);
    expect(PGW_OID_INT2, b, 2, "-32768");
    expect_err(PGW_OID_INT2, b, 3, PGW_EFORMAT);
    pgw__put32(b, 0xffffffffu);
    expect(PGW_OID_OID, b, 4, "4294967295");
    expect(PGW_OID_INT4, b, 4, "-1");
    expect(PGW_OID_XID, b, 4, "4294967295");
    be64(b, UINT64_C(0x8000000000000000));
    expect(PGW_OID_INT8, b, 8, "-9223372036854775808");
    expect(PGW_OID_XID8, b, 8, "9223372036854775808");
    expect(PGW_OID_MONEY, b, 8, "-$92,233,720,368,547,758.08");
    be64(b, 0);
    expect(PGW_OID_MONEY, b, 8, "$0.00");
    be64(b, 123456);
    expect(PGW_OID_MONEY, b, 8, "$1,234.56");
    /* float4out switches to exponents at 1e+06, float8out at 1e+15 */
    expect_float4(1e6f, "1e+06");
    expect_float4(999999.0f, "999999");
    expect_float4(0.1f, "0.1");
    double d = 1e15;
    uint64_t db;
    memcpy(&db, &d, 8);
    be64(b, db);
    expect(PGW_OID_FLOAT8, b, 8, "1e+15");
    /* numeric: 0.000 (dscale 3), -1.5, NaN */
    static const uint8_t zero3[] = {0, 0, 0, 0, 0, 0, 0, 3};
    expect(PGW_OID_NUMERIC, zero3, sizeof zero3, "0.000");
    static const uint8_t neg15[] = {0, 2, 0, 0, 0x40, 0, 0, 1, 0, 1, 0x13, 0x88};
    expect(PGW_OID_NUMERIC, neg15, sizeof neg15, "-1.5");
    static const uint8_t nan[] = {0, 0, 0, 0, 0xc0, 0, 0, 0};
    expect(PGW_OID_NUMERIC, nan, sizeof nan, "NaN");
    expect_err(PGW_OID_NUMERIC, neg15, sizeof neg15 - 1, PGW_EFORMAT);
}

/* The significant digits of a formatted number: its digits before any
 * exponent, without leading or trailing zeros. */
static size_t significant_digits(const char *s)
{
    char d[32];
    size_t n = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9' && (n || *s != '0')) d[n++] = *s;
    while (n && d[n - 1] == '0')
        n--;
    return n;
}

/* d is exactly halfway between f and one of its neighbours. */
static int halfway(float f, double d)
{
    return d == ((double)f + nextafterf(f, INFINITY)) / 2 ||
           d == ((double)f + nextafterf(f, -INFINITY)) / 2;
}

static void test_float4_shortest(void **state)
{
    (void)state;
    /* A stride through every float: each text reads back (strtof) to the
     * same float and is never longer than the shortest %.*e that does. */
    for (uint64_t bits = 0; bits <= UINT32_MAX; bits += 40009) {
        uint32_t u = (uint32_t)bits;
        float f;
        memcpy(&f, &u, 4);
        char s[PGW__FLOAT8_TEXT_MAX + 1];
        size_t n = pgw__fmt_float4(s, f);
        s[n] = '\0';
        if (f != f) {
            assert_string_equal(s, "NaN");
            continue;
        }
        float back = strtof(s, NULL);
        if (memcmp(&back, &f, 4) != 0) fail_msg("%08x: '%s' reads back differently", u, s);
        char e[32];
        size_t digits = 0;
        for (int p = 0; p < 9; p++) {
            snprintf(e, sizeof e, "%.*e", p, (double)f);
            if (strtof(e, NULL) == f) {
                digits = (size_t)p + 1;
                break;
            }
        }
        /* float4out never writes a decimal that lies exactly halfway to a
         * neighbouring float (so that every reader reads it back): then it
         * may take a digit more than the strictly shortest. */
        if (f != 0 && significant_digits(s) > digits && !halfway(f, strtod(e, NULL)))
            fail_msg("%08x: '%s' longer than '%s'", u, s, e);
    }
}

static void test_text_and_bytes(void **state)
{
    (void)state;
    expect(PGW_OID_TEXT, "a\"b", 3, "a\"b");
    expect(PGW_OID_XML, "<a/>", 4, "<a/>");
    expect(PGW_OID_JSONB, "\1{}", 3, "{}");
    expect_err(PGW_OID_JSONB, "\2{}", 3, PGW_EFORMAT);
    expect(PGW_OID_CHAR, "", 0, "");
    expect(PGW_OID_CHAR, "\0", 1, "");
    expect(PGW_OID_CHAR, "\310", 1, "\\310");
    expect(PGW_OID_CHAR, "A", 1, "A");
    expect_err(PGW_OID_CHAR, "AB", 2, PGW_EFORMAT);
    expect(PGW_OID_BYTEA, "", 0, "\\x");
    expect(PGW_OID_BYTEA, "\0\xff\\", 3, "\\x00ff5c");
    static const uint8_t uuid[16] = {0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8,
                                     0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11};
    expect(PGW_OID_UUID, uuid, 16, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    expect(PGW_OID_MACADDR, uuid, 6, "a0:ee:bc:99:9c:0b");
    expect(PGW_OID_MACADDR8, uuid, 8, "a0:ee:bc:99:9c:0b:4e:f8");
    expect_err(PGW_OID_MACADDR, uuid, 8, PGW_EFORMAT);
    /* bit(5) 10110, varbit of 0 bits; a length that does not match */
    static const uint8_t bits[] = {0, 0, 0, 5, 0xb0};
    expect(PGW_OID_BIT, bits, sizeof bits, "10110");
    expect(PGW_OID_VARBIT, "\0\0\0\0", 4, "");
    expect_err(PGW_OID_VARBIT, bits, 4, PGW_EFORMAT);
    static const uint8_t tid[] = {0, 0, 1, 0, 0, 7};
    expect(PGW_OID_TID, tid, sizeof tid, "(256,7)");
    static const uint8_t lsn[] = {0, 0, 0, 0x16, 0xb3, 0x74, 0xd8, 0x48};
    expect(PGW_OID_PG_LSN, lsn, sizeof lsn, "16/B374D848");
    static const uint8_t snap[] = {0, 0, 0, 1, 0, 0,  0, 0, 0, 0, 0, 10, 0, 0,
                                   0, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0,  0, 14};
    expect(PGW_OID_PG_SNAPSHOT, snap, sizeof snap, "10:20:14");
    expect_err(PGW_OID_PG_SNAPSHOT, snap, sizeof snap - 8, PGW_EFORMAT);
}

static void test_inet(void **state)
{
    (void)state;
    uint8_t a[20] = {PGW_INET_AF_INET, 24, 0, 4, 192, 168, 1, 5};
    expect(PGW_OID_INET, a, 8, "192.168.1.5/24");
    a[1] = 32;
    expect(PGW_OID_INET, a, 8, "192.168.1.5");
    a[2] = 1;
    expect(PGW_OID_CIDR, a, 8, "192.168.1.5/32");
    uint8_t v6[20] = {PGW_INET_AF_INET6, 128, 0, 16};
    expect(PGW_OID_INET, v6, 20, "::");
    v6[4 + 15] = 1;
    expect(PGW_OID_INET, v6, 20, "::1");
    v6[4 + 10] = v6[4 + 11] = 0xff;
    expect(PGW_OID_INET, v6, 20, "::ffff:0.0.0.1");
    v6[1] = 64;
    v6[4] = 0x20, v6[5] = 0x01, v6[6] = 0x0d, v6[7] = 0xb8;
    expect(PGW_OID_INET, v6, 20, "2001:db8::ffff:0:1/64");
    expect_err(PGW_OID_INET, v6, 19, PGW_EFORMAT);
}

static void put_ts(uint8_t *b, int64_t v)
{
    be64(b, (uint64_t)v);
}

static void test_datetime(void **state)
{
    (void)state;
    uint8_t b[16];
    pgw__put32(b, (uint32_t)INT32_MAX);
    expect(PGW_OID_DATE, b, 4, "infinity");
    pgw__put32(b, (uint32_t)INT32_MIN);
    expect(PGW_OID_DATE, b, 4, "-infinity");
    pgw__put32(b, (uint32_t)-730485); /* 0001-01-01 BC: 730119 + 366 days before 2000 */
    expect(PGW_OID_DATE, b, 4, "0001-01-01 BC");
    put_ts(b, INT64_C(86400000000));
    expect(PGW_OID_TIME, b, 8, "24:00:00");
    put_ts(b, INT64_C(86400000001));
    expect_err(PGW_OID_TIME, b, 8, PGW_EFORMAT);
    put_ts(b, INT64_C(14706789000)); /* 04:05:06.789 */
    pgw__put32(b + 8, (uint32_t)-20730);
    expect(PGW_OID_TIMETZ, b, 12, "04:05:06.789+05:45:30");
    pgw__put32(b + 8, 57600);
    expect_err(PGW_OID_TIMETZ, b, 12, PGW_EFORMAT);
    put_ts(b, -1);
    expect(PGW_OID_TIMESTAMP, b, 8, "1999-12-31 23:59:59.999999");
    expect(PGW_OID_TIMESTAMPTZ, b, 8, "1999-12-31 23:59:59.999999+00");
    put_ts(b, INT64_C(-211813488000000000)); /* the first instant, 4714-11-24 BC */
    expect(PGW_OID_TIMESTAMP, b, 8, "4714-11-24 00:00:00 BC");
    put_ts(b, INT64_C(-211813488000000001));
    expect_err(PGW_OID_TIMESTAMP, b, 8, PGW_ERANGE);
    put_ts(b, INT64_MAX);
    expect(PGW_OID_TIMESTAMPTZ, b, 8, "infinity");
    /* interval: zero, then -1 year -2 mons +3 days -04:05:06 */
    memset(b, 0, 16);
    expect(PGW_OID_INTERVAL, b, 16, "00:00:00");
    put_ts(b, -INT64_C(14706000000));
    pgw__put32(b + 8, 3);
    pgw__put32(b + 12, (uint32_t)-14);
    expect(PGW_OID_INTERVAL, b, 16, "-1 years -2 mons +3 days -04:05:06");
    put_ts(b, 0);
    pgw__put32(b + 8, 1);
    pgw__put32(b + 12, 0);
    expect(PGW_OID_INTERVAL, b, 16, "1 day");
    put_ts(b, INT64_MIN);
    pgw__put32(b + 8, (uint32_t)INT32_MIN);
    pgw__put32(b + 12, (uint32_t)INT32_MIN);
    expect(PGW_OID_INTERVAL, b, 16,
           "-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808");
    expect_err(PGW_OID_INTERVAL, b, 12, PGW_EFORMAT);
}

static void test_context_flags(void **state)
{
    (void)state;
    uint8_t b[8];
    put_ts(b, 0);
    char got[64];
    pgw_text_ctx_t ctx = {NULL, NULL, PGW_TEXT_TZ_UNKNOWN};
    assert_int_equal(text_ctx(PGW_OID_TIMESTAMPTZ, b, 8, &ctx, got, sizeof got), PGW_ENOTFOUND);
    assert_int_equal(text_ctx(PGW_OID_TIMESTAMP, b, 8, &ctx, got, sizeof got), 0);
    assert_string_equal(got, "2000-01-01 00:00:00");
    ctx.flags = PGW_TEXT_OTHER_STYLE;
    assert_int_equal(text_ctx(PGW_OID_DATE, b, 4, &ctx, got, sizeof got), PGW_ENOTSUP);
    assert_int_equal(text_ctx(PGW_OID_INT4, b, 4, &ctx, got, sizeof got), 0);
    /* In a zone: UTC+05:30 from a POSIX string. */
    pgw_tz_t *tz;
    assert_int_equal(pgw_tz_from_posix(&tz, "<+0530>-5:30", 12, NULL), 0);
    ctx.tz = tz;
    ctx.flags = 0;
    assert_int_equal(text_ctx(PGW_OID_TIMESTAMPTZ, b, 8, &ctx, got, sizeof got), 0);
    assert_string_equal(got, "2000-01-01 05:30:00+05:30");
    pgw_tz_free(tz);
    /* A timestamptz inside an array fails the whole value. */
    static const uint8_t arr[] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 4, 0xa0, 0, 0, 0, 1,
                                  0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0, 0,    0, 0, 0, 0};
    ctx.flags = PGW_TEXT_TZ_UNKNOWN;
    ctx.tz = NULL;
    assert_int_equal(text_ctx(PGW_OID_TIMESTAMPTZ_ARRAY, arr, sizeof arr, &ctx, got, sizeof got),
                     PGW_ENOTFOUND);
    expect(PGW_OID_TIMESTAMPTZ_ARRAY, arr, sizeof arr, "{\"2000-01-01 00:00:00+00\"}");
}

static void test_containers(void **state)
{
    (void)state;
    /* text[] {"", "NULL", a\b} with lower bound 0 */
    static const uint8_t arr[] = {0, 0, 0,   1,   0,   0,   0, 0, 0, 0, 0,   25,   0,
                                  0, 0, 3,   0,   0,   0,   0, 0, 0, 0, 0,   0,    0,
                                  0, 4, 'N', 'U', 'L', 'L', 0, 0, 0, 3, 'a', '\\', 'b'};
    expect(PGW_OID_TEXT_ARRAY, arr, sizeof arr, "[0:2]={\"\",\"NULL\",\"a\\\\b\"}");
    expect_err(PGW_OID_TEXT_ARRAY, arr, sizeof arr - 1, PGW_EFORMAT);
    expect_err(PGW_OID_INT4_ARRAY, arr, sizeof arr, PGW_ETYPE); /* element oid is text */
    /* record (NULL, "a,b", 7::int4) */
    static const uint8_t rec[] = {0, 0, 0,  3,  0, 0, 0, 25, 0xff, 0xff, 0xff, 0xff,
                                  0, 0, 0,  25, 0, 0, 0, 3,  'a',  ',',  'b',  0,
                                  0, 0, 23, 0,  0, 0, 4, 0,  0,    0,    7};
    expect(PGW_OID_RECORD, rec, sizeof rec, "(,\"a,b\",7)");
    /* an int4range [1,10) */
    static const uint8_t range[] = {2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 10};
    expect(PGW_OID_INT4RANGE, range, sizeof range, "[1,10)");
    expect(PGW_OID_INT4RANGE, "\1", 1, "empty");
    static const uint8_t mr[] = {0, 0, 0, 2, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0x18};
    expect(PGW_OID_INT4MULTIRANGE, mr, sizeof mr, "{empty,(,)}");
    /* records nested deeper than the formatter goes: an error, not a crash */
    size_t depth = 40, n = 0;
    uint8_t *deep = malloc(depth * 12 + 4);
    for (size_t i = 0; i < depth; i++, n += 12) {
        size_t rest = (depth - i - 1) * 12 + 4;
        pgw__put32(deep + n, 1);
        pgw__put32(deep + n + 4, PGW_OID_RECORD);
        pgw__put32(deep + n + 8, (uint32_t)rest);
    }
    pgw__put32(deep + n, 0);
    expect_err(PGW_OID_RECORD, deep, n + 4, PGW_EFORMAT);
    expect(PGW_OID_RECORD, deep + 12 * (depth - 3), 40, "(\"(\"\"(\"\"\"\"()\"\"\"\")\"\")\")");
    free(deep);
}

static void test_errors(void **state)
{
    (void)state;
    expect_err(PGW_OID_REGCLASS, "\0\0\0\1", 4, PGW_ETYPE);
    expect_err(PGW_OID_TSVECTOR, "", 0, PGW_ETYPE);
    expect_err(99999, "abc", 3, PGW_ETYPE);
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    pgw_value_t v = {NULL, -1, PGW_FORMAT_BINARY, PGW_OID_INT4};
    assert_int_equal(pgw_value_to_text(&v, NULL, &b), PGW_ENULL);
    assert_int_equal(pgw_value_to_text(NULL, NULL, &b), PGW_EINVAL);
    assert_int_equal(pgw_value_to_text(&v, NULL, NULL), PGW_EINVAL);
    v.len = 3, v.p = (const uint8_t *)"abc", v.format = 7;
    assert_int_equal(pgw_value_to_text(&v, NULL, &b), PGW_EINVAL);
    /* Text values are the server's already: appended as they are. */
    v.format = PGW_FORMAT_TEXT;
    v.oid = PGW_OID_REGCLASS;
    assert_int_equal(pgw_value_to_text(&v, NULL, &b), 0);
    assert_int_equal(b.len, 3);
    /* The buffer's limit: PGW_ETOOBIG, the buffer as it was. */
    b.max = 5;
    static const uint8_t bytes[4] = {1, 2, 3, 4};
    pgw_value_t bv = {bytes, 4, PGW_FORMAT_BINARY, PGW_OID_BYTEA};
    assert_int_equal(pgw_value_to_text(&bv, NULL, &b), PGW_ETOOBIG);
    assert_int_equal(b.len, 3);
    pgw_buf_free(&b);
}

/* ---------------------------------------------------------------- zones */

static int32_t off(const pgw_tz_t *tz, int64_t unix_sec)
{
    int32_t g = 12345;
    assert_int_equal(pgw_tz_gmtoff(tz, unix_sec, &g), 0);
    return g;
}

static void test_posix_zones(void **state)
{
    (void)state;
    pgw_tz_t *tz;
    const char *us = "CST6CDT,M3.2.0,M11.1.0";
    assert_int_equal(pgw_tz_from_posix(&tz, us, strlen(us), NULL), 0);
    assert_int_equal(off(tz, 1710057599), -21600); /* 2024-03-10 07:59:59 UTC */
    assert_int_equal(off(tz, 1710057600), -18000); /* 08:00 UTC: 03:00 CDT */
    assert_int_equal(off(tz, 1730617199), -18000); /* 2024-11-03 06:59:59 UTC */
    assert_int_equal(off(tz, 1730617200), -21600); /* 07:00 UTC: 01:00 CST */
    assert_int_equal(off(tz, INT64_MAX), off(tz, INT64_C(1) << 55));
    pgw_tz_free(tz);
    /* Southern hemisphere: DST across the new year. */
    const char *au = "AEST-10AEDT,M10.1.0,M4.1.0/3";
    assert_int_equal(pgw_tz_from_posix(&tz, au, strlen(au), NULL), 0);
    assert_int_equal(off(tz, 1704067200), 39600); /* 2024-01-01 */
    assert_int_equal(off(tz, 1719792000), 36000); /* 2024-07-01 */
    pgw_tz_free(tz);
    assert_int_equal(pgw_tz_from_posix(&tz, "+05:30", 6, NULL), 0);
    assert_int_equal(off(tz, 0), -19800); /* POSIX counts west */
    pgw_tz_free(tz);
    assert_int_equal(pgw_tz_from_posix(&tz, "FOO5BAR", 7, NULL), PGW_ENOTSUP);
    assert_null(tz);
    assert_int_equal(pgw_tz_from_posix(&tz, "X5Y,M3", 6, NULL), PGW_EFORMAT);
    assert_int_equal(pgw_tz_from_posix(&tz, "", 0, NULL), PGW_EFORMAT);
    assert_int_equal(pgw_tz_from_posix(&tz, "<+05", 4, NULL), PGW_EFORMAT);
    assert_int_equal(pgw_tz_from_posix(NULL, "UTC0", 4, NULL), PGW_EINVAL);
    assert_int_equal(pgw_tz_gmtoff(NULL, 0, NULL), PGW_EINVAL);
    pgw_tz_free(NULL);
}

static void test_tzif(void **state)
{
    (void)state;
    /* Version 1: LMT +1:00:05 until one transition at t=100 to +02. */
    uint8_t f[44 + 4 + 1 + 12 + 8];
    memset(f, 0, sizeof f);
    memcpy(f, "TZif", 4);
    pgw__put32(f + 32, 1); /* timecnt */
    pgw__put32(f + 36, 2); /* typecnt */
    pgw__put32(f + 40, 8); /* charcnt */
    uint8_t *p = f + 44;
    pgw__put32(p, 100), p += 4;
    *p++ = 1;
    pgw__put32(p, 3605), p[4] = 0, p[5] = 0, p += 6;
    pgw__put32(p, 7200), p[4] = 0, p[5] = 4, p += 6;
    memcpy(p, "LMT\0X02\0", 8);
    pgw_tz_t *tz;
    assert_int_equal(pgw_tz_from_tzif(&tz, f, sizeof f, NULL), 0);
    assert_int_equal(off(tz, 99), 3605);
    assert_int_equal(off(tz, 100), 7200);
    assert_int_equal(off(tz, INT64_C(1) << 40), 7200);
    pgw_tz_free(tz);
    /* Every truncation is an error, never a read past the bytes. */
    for (size_t n = 0; n < sizeof f; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, f, n);
        assert_int_equal(pgw_tz_from_tzif(&tz, copy, n, NULL), PGW_EFORMAT);
        assert_null(tz);
        free(copy);
    }
}

static void test_system_zones(void **state)
{
    (void)state;
    pgw_tz_t *tz;
    int rc = pgw_tz_load(&tz, "America/Chicago", NULL, NULL);
    if (rc == PGW_ENOTFOUND) skip(); /* no tzdata on this machine */
    assert_int_equal(rc, 0);
    assert_int_equal(off(tz, -3786825600), -21036); /* 1850: LMT -5:50:36 */
    assert_int_equal(off(tz, 1719792000), -18000);  /* 2024-07-01 CDT */
    assert_int_equal(off(tz, 1704067200), -21600);  /* 2024-01-01 CST */
    assert_int_equal(off(tz, 32519318400), -18000); /* 3000-07-01: the footer's rule */
    assert_int_equal(off(tz, 32503680000), -21600); /* 3000-01-01 */
    pgw_tz_free(tz);
    assert_int_equal(pgw_tz_load(&tz, "Asia/Kolkata", NULL, NULL), 0);
    assert_int_equal(off(tz, 1704067200), 19800);
    pgw_tz_free(tz);
    /* Not a zone file: read as a POSIX string, as the server does. */
    assert_int_equal(pgw_tz_load(&tz, "<+0530>-05:30", NULL, NULL), 0);
    assert_int_equal(off(tz, 0), 19800);
    pgw_tz_free(tz);
    /* Paths out of the directory are never opened. */
    assert_int_equal(pgw_tz_load(&tz, "../../../etc/passwd", NULL, NULL), PGW_ENOTFOUND);
    assert_int_equal(pgw_tz_load(&tz, "/etc/passwd", NULL, NULL), PGW_ENOTFOUND);
    assert_int_equal(pgw_tz_load(&tz, "No/Such_Zone", NULL, NULL), PGW_ENOTFOUND);
    assert_int_equal(pgw_tz_load(&tz, "America", NULL, NULL), PGW_ENOTFOUND); /* a directory */
    assert_int_equal(pgw_tz_load(&tz, "America/Chicago", "/nonexistent", NULL), PGW_ENOTFOUND);
    assert_int_equal(pgw_tz_load(&tz, NULL, NULL, NULL), PGW_EINVAL);
    assert_null(tz);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers),        cmocka_unit_test(test_float4_shortest),
        cmocka_unit_test(test_text_and_bytes), cmocka_unit_test(test_inet),
        cmocka_unit_test(test_datetime),       cmocka_unit_test(test_context_flags),
        cmocka_unit_test(test_containers),     cmocka_unit_test(test_errors),
        cmocka_unit_test(test_posix_zones),    cmocka_unit_test(test_tzif),
        cmocka_unit_test(test_system_zones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
