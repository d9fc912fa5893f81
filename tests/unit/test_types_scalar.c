/* Scalar decoders and encoders: bool, integers, floats, text-like, bytea,
 * uuid, macaddr, money, inet/cidr, the tagged datum, and Bind parameters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/types.h"
#include "types/types_internal.h"

static pgw_value_t tv(uint32_t oid, const char *s)
{
    pgw_value_t v = {(const uint8_t *)s, (int32_t)strlen(s), PGW_FORMAT_TEXT, oid};
    return v;
}

static pgw_value_t bv(uint32_t oid, const void *p, int32_t len)
{
    pgw_value_t v = {p, len, PGW_FORMAT_BINARY, oid};
    return v;
}

static void test_bool(void **state)
{
    (void)state;
    bool b = false;
    pgw_value_t v = tv(PGW_OID_BOOL, "t");
    assert_int_equal(pgw_get_bool(&v, &b), 0);
    assert_true(b);
    v = tv(PGW_OID_BOOL, "f");
    assert_int_equal(pgw_get_bool(&v, &b), 0);
    assert_false(b);
    v = tv(PGW_OID_BOOL, "x");
    assert_int_equal(pgw_get_bool(&v, &b), PGW_EFORMAT);
    uint8_t one = 1, two = 2;
    v = bv(PGW_OID_BOOL, &one, 1);
    assert_int_equal(pgw_get_bool(&v, &b), 0);
    assert_true(b);
    v = bv(PGW_OID_BOOL, &two, 1);
    assert_int_equal(pgw_get_bool(&v, &b), PGW_EFORMAT);
    v = bv(PGW_OID_BOOL, &one, 2);
    assert_int_equal(pgw_get_bool(&v, &b), PGW_EFORMAT);
    v = bv(PGW_OID_INT4, &one, 1);
    assert_int_equal(pgw_get_bool(&v, &b), PGW_ETYPE);
    v = bv(PGW_OID_BOOL, NULL, -1);
    assert_int_equal(pgw_get_bool(&v, &b), PGW_ENULL);
}

static void test_integers_text(void **state)
{
    (void)state;
    int16_t i2;
    int32_t i4;
    int64_t i8;
    uint32_t o;
    pgw_value_t v = tv(PGW_OID_INT2, "-32768");
    assert_int_equal(pgw_get_int2(&v, &i2), 0);
    assert_int_equal(i2, INT16_MIN);
    v = tv(PGW_OID_INT2, "32768");
    assert_int_equal(pgw_get_int2(&v, &i2), PGW_ERANGE);
    v = tv(PGW_OID_INT8, "-9223372036854775808");
    assert_int_equal(pgw_get_int8(&v, &i8), 0);
    assert_true(i8 == INT64_MIN);
    v = tv(PGW_OID_INT8, "9223372036854775807");
    assert_int_equal(pgw_get_int8(&v, &i8), 0);
    assert_true(i8 == INT64_MAX);
    v = tv(PGW_OID_INT8, "9223372036854775808");
    assert_int_equal(pgw_get_int8(&v, &i8), PGW_ERANGE);
    v = tv(PGW_OID_INT8, "99999999999999999999999");
    assert_int_equal(pgw_get_int8(&v, &i8), PGW_ERANGE);
    /* int8 value that fits an int4 getter, and one that does not */
    v = tv(PGW_OID_INT8, "2147483647");
    assert_int_equal(pgw_get_int4(&v, &i4), 0);
    assert_int_equal(i4, INT32_MAX);
    v = tv(PGW_OID_INT8, "2147483648");
    assert_int_equal(pgw_get_int4(&v, &i4), PGW_ERANGE);
    v = tv(PGW_OID_INT4, "");
    assert_int_equal(pgw_get_int4(&v, &i4), PGW_EFORMAT);
    v = tv(PGW_OID_INT4, "-");
    assert_int_equal(pgw_get_int4(&v, &i4), PGW_EFORMAT);
    v = tv(PGW_OID_INT4, "12a");
    assert_int_equal(pgw_get_int4(&v, &i4), PGW_EFORMAT);
    v = tv(PGW_OID_INT4, " 12");
    assert_int_equal(pgw_get_int4(&v, &i4), PGW_EFORMAT);
    v = tv(PGW_OID_OID, "4294967295");
    assert_int_equal(pgw_get_oid(&v, &o), 0);
    assert_true(o == UINT32_MAX);
    assert_int_equal(pgw_get_int4(&v, &i4), PGW_ERANGE);
    assert_int_equal(pgw_get_int8(&v, &i8), 0);
    assert_true(i8 == UINT32_MAX);
    v = tv(PGW_OID_INT4, "-1");
    assert_int_equal(pgw_get_oid(&v, &o), PGW_ERANGE);
    v = tv(PGW_OID_TEXT, "1");
    assert_int_equal(pgw_get_int4(&v, &i4), PGW_ETYPE);
    v = tv(PGW_OID_NUMERIC, "1");
    assert_int_equal(pgw_get_int8(&v, &i8), PGW_ETYPE);
}

static void test_integers_binary(void **state)
{
    (void)state;
    int16_t i2;
    int32_t i4;
    int64_t i8;
    uint8_t b2[2] = {0x80, 0x00}, b4[4] = {0x80, 0, 0, 0},
            b8[8] = {0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    pgw_value_t v = bv(PGW_OID_INT2, b2, 2);
    assert_int_equal(pgw_get_int2(&v, &i2), 0);
    assert_int_equal(i2, INT16_MIN);
    assert_int_equal(pgw_get_int8(&v, &i8), 0);
    assert_true(i8 == INT16_MIN);
    v = bv(PGW_OID_INT4, b4, 4);
    assert_int_equal(pgw_get_int4(&v, &i4), 0);
    assert_int_equal(i4, INT32_MIN);
    assert_int_equal(pgw_get_int2(&v, &i2), PGW_ERANGE);
    v = bv(PGW_OID_INT8, b8, 8);
    assert_int_equal(pgw_get_int8(&v, &i8), 0);
    assert_true(i8 == INT64_MAX);
    assert_int_equal(pgw_get_int4(&v, &i4), PGW_ERANGE);
    v = bv(PGW_OID_INT8, b8, 4);
    assert_int_equal(pgw_get_int8(&v, &i8), PGW_EFORMAT);
    uint32_t o;
    v = bv(PGW_OID_OID, b4, 4); /* 2147483648 as an oid */
    assert_int_equal(pgw_get_oid(&v, &o), 0);
    assert_true(o == 2147483648u);
    assert_int_equal(pgw_get_int4(&v, &i4), PGW_ERANGE);
}

static void test_floats(void **state)
{
    (void)state;
    double d;
    float f;
    pgw_value_t v = tv(PGW_OID_FLOAT8, "NaN");
    assert_int_equal(pgw_get_float8(&v, &d), 0);
    assert_true(isnan(d));
    v = tv(PGW_OID_FLOAT8, "-Infinity");
    assert_int_equal(pgw_get_float8(&v, &d), 0);
    assert_true(isinf(d) && d < 0);
    v = tv(PGW_OID_FLOAT8, "-0");
    assert_int_equal(pgw_get_float8(&v, &d), 0);
    assert_true(d == 0 && signbit(d));
    v = tv(PGW_OID_FLOAT8, "0.1");
    assert_int_equal(pgw_get_float8(&v, &d), 0);
    assert_true(d == 0.1);
    v = tv(PGW_OID_FLOAT8, "1.7976931348623157e+308");
    assert_int_equal(pgw_get_float8(&v, &d), 0);
    assert_true(d == 1.7976931348623157e+308);
    v = tv(PGW_OID_FLOAT8, "5e-324");
    assert_int_equal(pgw_get_float8(&v, &d), 0);
    assert_true(d == 5e-324);
    v = tv(PGW_OID_FLOAT8, "1,5");
    assert_int_equal(pgw_get_float8(&v, &d), PGW_EFORMAT);
    v = tv(PGW_OID_FLOAT8, "0x10");
    assert_int_equal(pgw_get_float8(&v, &d), PGW_EFORMAT);
    v = tv(PGW_OID_FLOAT8, "1e");
    assert_int_equal(pgw_get_float8(&v, &d), PGW_EFORMAT);
    v = tv(PGW_OID_FLOAT4, "3.4028235e+38");
    assert_int_equal(pgw_get_float4(&v, &f), 0);
    assert_true(f == 3.4028235e+38f);
    /* float4 text widened exactly */
    v = tv(PGW_OID_FLOAT4, "0.1");
    assert_int_equal(pgw_get_float8(&v, &d), 0);
    assert_true(d == (double)0.1f);
    /* float8 to float4: exact ok, inexact ELOSS, too big ERANGE */
    v = tv(PGW_OID_FLOAT8, "0.5");
    assert_int_equal(pgw_get_float4(&v, &f), 0);
    assert_true(f == 0.5f);
    v = tv(PGW_OID_FLOAT8, "0.1");
    assert_int_equal(pgw_get_float4(&v, &f), PGW_ELOSS);
    v = tv(PGW_OID_FLOAT8, "1e300");
    assert_int_equal(pgw_get_float4(&v, &f), PGW_ERANGE);
    /* integers */
    v = tv(PGW_OID_INT8, "9007199254740993");
    assert_int_equal(pgw_get_float8(&v, &d), PGW_ELOSS);
    v = tv(PGW_OID_INT8, "9007199254740992");
    assert_int_equal(pgw_get_float8(&v, &d), 0);
    assert_true(d == 9007199254740992.0);
    v = tv(PGW_OID_INT8, "9223372036854775807");
    assert_int_equal(pgw_get_float8(&v, &d), PGW_ELOSS);
    v = tv(PGW_OID_INT4, "16777217");
    assert_int_equal(pgw_get_float4(&v, &f), PGW_ELOSS);
    /* binary */
    uint8_t nz[8] = {0x80, 0, 0, 0, 0, 0, 0, 0};
    v = bv(PGW_OID_FLOAT8, nz, 8);
    assert_int_equal(pgw_get_float8(&v, &d), 0);
    assert_true(d == 0 && signbit(d));
    uint8_t inf4[4] = {0x7f, 0x80, 0, 0};
    v = bv(PGW_OID_FLOAT4, inf4, 4);
    assert_int_equal(pgw_get_float4(&v, &f), 0);
    assert_true(isinf(f) && f > 0);
    v = bv(PGW_OID_FLOAT4, inf4, 3);
    assert_int_equal(pgw_get_float4(&v, &f), PGW_EFORMAT);
}

/* A locale with ',' as decimal point must not change float parsing. */
static void test_float_locale(void **state)
{
    (void)state;
    const char *locs[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "ru_RU.UTF-8"};
    const char *set = NULL;
    for (size_t i = 0; i < sizeof locs / sizeof locs[0] && !set; i++)
        set = setlocale(LC_NUMERIC, locs[i]);
    double d;
    pgw_value_t v = tv(PGW_OID_FLOAT8, "1.25");
    assert_int_equal(pgw_get_float8(&v, &d), 0);
    assert_true(d == 1.25);
    v = tv(PGW_OID_FLOAT8, "1,25");
    assert_int_equal(pgw_get_float8(&v, &d), PGW_EFORMAT);
    setlocale(LC_NUMERIC, "C");
}

static void test_text(void **state)
{
    (void)state;
    pgw_str_t s;
    pgw_value_t v = bv(PGW_OID_VARCHAR, "abc", 3);
    assert_int_equal(pgw_get_text(&v, &s), 0);
    assert_int_equal(s.len, 3);
    assert_memory_equal(s.p, "abc", 3);
    v = tv(PGW_OID_INT4, "42"); /* text form of anything */
    assert_int_equal(pgw_get_text(&v, &s), 0);
    assert_int_equal(s.len, 2);
    uint8_t i4[4] = {0};
    v = bv(PGW_OID_INT4, i4, 4);
    assert_int_equal(pgw_get_text(&v, &s), PGW_ETYPE);
    v = bv(PGW_OID_JSONB, "\1{\"a\":1}", 8);
    assert_int_equal(pgw_get_json(&v, &s), 0);
    assert_int_equal(s.len, 7);
    assert_memory_equal(s.p, "{\"a\":1}", 7);
    assert_int_equal(pgw_get_text(&v, &s), 0);
    v = bv(PGW_OID_JSONB, "\2{}", 3);
    assert_int_equal(pgw_get_json(&v, &s), PGW_EFORMAT);
    v = bv(PGW_OID_JSONB, "", 0);
    assert_int_equal(pgw_get_json(&v, &s), PGW_EFORMAT);
    v = bv(PGW_OID_JSONPATH, "\1$.a", 4);
    assert_int_equal(pgw_get_json(&v, &s), 0);
    assert_int_equal(s.len, 3);
    v = bv(PGW_OID_JSON, "12345678901234567890123", 23);
    assert_int_equal(pgw_get_json(&v, &s), 0);
    assert_int_equal(s.len, 23);
    v = bv(PGW_OID_INT4, i4, 4);
    assert_int_equal(pgw_get_json(&v, &s), PGW_ETYPE);
    char c;
    v = tv(PGW_OID_CHAR, "\\377");
    assert_int_equal(pgw_get_char(&v, &c), 0);
    assert_int_equal((uint8_t)c, 255);
    v = tv(PGW_OID_CHAR, "");
    assert_int_equal(pgw_get_char(&v, &c), 0);
    assert_int_equal(c, 0);
    v = tv(PGW_OID_CHAR, "a");
    assert_int_equal(pgw_get_char(&v, &c), 0);
    assert_int_equal(c, 'a');
    v = tv(PGW_OID_CHAR, "ab");
    assert_int_equal(pgw_get_char(&v, &c), PGW_EFORMAT);
}

static void test_bytea(void **state)
{
    (void)state;
    uint8_t buf[16];
    size_t n;
    pgw_value_t v = tv(PGW_OID_BYTEA, "\\x00ff10");
    assert_int_equal(pgw_get_bytea(&v, buf, sizeof buf, &n), 0);
    assert_int_equal(n, 3);
    assert_memory_equal(buf, "\x00\xff\x10", 3);
    assert_int_equal(pgw_get_bytea(&v, buf, 2, &n), PGW_ERANGE);
    assert_int_equal(n, 3);
    assert_int_equal(pgw_get_bytea(&v, NULL, 0, &n), PGW_ERANGE);
    v = tv(PGW_OID_BYTEA, "\\x0");
    assert_int_equal(pgw_get_bytea(&v, buf, sizeof buf, &n), PGW_EFORMAT);
    v = tv(PGW_OID_BYTEA, "\\xzz");
    assert_int_equal(pgw_get_bytea(&v, buf, sizeof buf, &n), PGW_EFORMAT);
    v = tv(PGW_OID_BYTEA, "\\x");
    assert_int_equal(pgw_get_bytea(&v, buf, sizeof buf, &n), 0);
    assert_int_equal(n, 0);
    v = tv(PGW_OID_BYTEA, "a\\000\\\\b\\377");
    assert_int_equal(pgw_get_bytea(&v, buf, sizeof buf, &n), 0);
    assert_int_equal(n, 5);
    assert_memory_equal(buf, "a\0\\b\xff", 5);
    v = tv(PGW_OID_BYTEA, "a\\9");
    assert_int_equal(pgw_get_bytea(&v, buf, sizeof buf, &n), PGW_EFORMAT);
    v = tv(PGW_OID_BYTEA, "\\");
    assert_int_equal(pgw_get_bytea(&v, buf, sizeof buf, &n), PGW_EFORMAT);
    pgw_view_t view;
    assert_int_equal(pgw_get_bytea_view(&v, &view), PGW_ETYPE);
    v = bv(PGW_OID_BYTEA, "\0\1", 2);
    assert_int_equal(pgw_get_bytea_view(&v, &view), 0);
    assert_ptr_equal(view.p, v.p);
    assert_int_equal(view.len, 2);
    assert_int_equal(pgw_get_bytea(&v, buf, sizeof buf, &n), 0);
    assert_int_equal(n, 2);
}

static void test_uuid_mac_money(void **state)
{
    (void)state;
    uint8_t u[16], u2[16];
    char s[37];
    pgw_value_t v = tv(PGW_OID_UUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    assert_int_equal(pgw_get_uuid(&v, u), 0);
    pgw_uuid_format(u, s);
    assert_string_equal(s, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    assert_int_equal(pgw_uuid_parse("{A0EEBC999C0B4EF8BB6D6BB9BD380A11}", 34, u2), 0);
    assert_memory_equal(u, u2, 16);
    assert_int_equal(pgw_uuid_parse("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", 35, u2), PGW_EFORMAT);
    assert_int_equal(pgw_uuid_parse("-a0eebc999c0b4ef8bb6d6bb9bd380a11", 33, u2), PGW_EFORMAT);
    assert_int_equal(pgw_uuid_parse("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-", 37, u2), PGW_EFORMAT);
    v = bv(PGW_OID_UUID, u, 16);
    assert_int_equal(pgw_get_uuid(&v, u2), 0);
    assert_memory_equal(u, u2, 16);
    v = bv(PGW_OID_UUID, u, 15);
    assert_int_equal(pgw_get_uuid(&v, u2), PGW_EFORMAT);

    uint8_t m[8];
    v = tv(PGW_OID_MACADDR, "08:00:2b:01:02:03");
    assert_int_equal(pgw_get_macaddr(&v, m), 0);
    assert_memory_equal(m, "\x08\x00\x2b\x01\x02\x03", 6);
    v = tv(PGW_OID_MACADDR, "08:00:2b:01:02");
    assert_int_equal(pgw_get_macaddr(&v, m), PGW_EFORMAT);
    v = tv(PGW_OID_MACADDR8, "08:00:2b:01:02:03:04:05");
    assert_int_equal(pgw_get_macaddr8(&v, m), 0);
    assert_memory_equal(m, "\x08\x00\x2b\x01\x02\x03\x04\x05", 8);
    assert_int_equal(pgw_get_macaddr(&v, m), PGW_ETYPE);

    int64_t c;
    v = tv(PGW_OID_MONEY, "$1,234.56");
    assert_int_equal(pgw_get_money(&v, &c), 0);
    assert_true(c == 123456);
    v = tv(PGW_OID_MONEY, "-$1.00");
    assert_int_equal(pgw_get_money(&v, &c), 0);
    assert_true(c == -100);
    v = tv(PGW_OID_MONEY, "-$92,233,720,368,547,758.08");
    assert_int_equal(pgw_get_money(&v, &c), 0);
    assert_true(c == INT64_MIN);
    v = tv(PGW_OID_MONEY, "$92,233,720,368,547,758.08");
    assert_int_equal(pgw_get_money(&v, &c), PGW_ERANGE);
    v = tv(PGW_OID_MONEY, "1.234");
    assert_int_equal(pgw_get_money(&v, &c), PGW_EFORMAT);
    v = tv(PGW_OID_MONEY, "EUR 1");
    assert_int_equal(pgw_get_money(&v, &c), PGW_EFORMAT);
    uint8_t b8[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x9c};
    v = bv(PGW_OID_MONEY, b8, 8);
    assert_int_equal(pgw_get_money(&v, &c), 0);
    assert_true(c == -100);
}

static void test_inet(void **state)
{
    (void)state;
    pgw_inet_t a;
    pgw_value_t v = tv(PGW_OID_INET, "192.168.1.5/24");
    assert_int_equal(pgw_get_inet(&v, &a), 0);
    assert_int_equal(a.family, PGW_INET_AF_INET);
    assert_int_equal(a.bits, 24);
    assert_int_equal(a.is_cidr, 0);
    assert_int_equal(a.nb, 4);
    assert_memory_equal(a.addr, "\xc0\xa8\x01\x05", 4);
    v = tv(PGW_OID_CIDR, "2001:db8::/32");
    assert_int_equal(pgw_get_inet(&v, &a), 0);
    assert_int_equal(a.family, PGW_INET_AF_INET6);
    assert_int_equal(a.bits, 32);
    assert_int_equal(a.is_cidr, 1);
    assert_memory_equal(a.addr, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\0", 16);
    v = tv(PGW_OID_INET, "::ffff:1.2.3.4");
    assert_int_equal(pgw_get_inet(&v, &a), 0);
    assert_int_equal(a.bits, 128);
    assert_memory_equal(a.addr, "\0\0\0\0\0\0\0\0\0\0\xff\xff\1\2\3\4", 16);
    v = tv(PGW_OID_INET, "::");
    assert_int_equal(pgw_get_inet(&v, &a), 0);
    v = tv(PGW_OID_INET, "1:2:3:4:5:6:7:8");
    assert_int_equal(pgw_get_inet(&v, &a), 0);
    assert_int_equal(a.addr[15], 8);
    const char *bad[] = {
        "1.2.3", "1.2.3.256", "1.2.3.4/33", ":1::",   "1::2::3", "1:2:3:4:5:6:7:8:9",
        "1:2",   "::/129",    "1.2.3.4/",   "12345::"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = tv(PGW_OID_INET, bad[i]);
        assert_int_equal(pgw_get_inet(&v, &a), PGW_EFORMAT);
    }
    uint8_t b[8] = {2, 24, 0, 4, 10, 0, 0, 1};
    v = bv(PGW_OID_INET, b, 8);
    assert_int_equal(pgw_get_inet(&v, &a), 0);
    assert_int_equal(a.bits, 24);
    b[3] = 16;
    assert_int_equal(pgw_get_inet(&v, &a), PGW_EFORMAT);
    /* encode round trip */
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    v = tv(PGW_OID_CIDR, "10.0.0.0/8");
    assert_int_equal(pgw_get_inet(&v, &a), 0);
    assert_int_equal(pgw_encode_inet(&a, &out), 0);
    assert_int_equal(out.len, 8);
    assert_memory_equal(out.data, "\2\x08\1\4\x0a\0\0\0", 8);
    pgw_buf_free(&out);
}

static void test_datum(void **state)
{
    (void)state;
    pgw_datum_t d;
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    pgw_value_t v = tv(PGW_OID_INT2, "-5");
    assert_int_equal(pgw_get_datum(&v, &d), 0);
    assert_int_equal(d.kind, PGW_DATUM_INT);
    assert_true(d.u.i == -5);
    assert_int_equal(pgw__encode_scalar(&d, 0, &out), 0);
    assert_int_equal(out.len, 2);
    assert_memory_equal(out.data, "\xff\xfb", 2);
    out.len = 0;
    d.u.i = 70000;
    assert_int_equal(pgw__encode_scalar(&d, 0, &out), PGW_ERANGE);
    assert_int_equal(pgw__encode_scalar(&d, PGW_OID_INT4, &out), 0);
    assert_int_equal(out.len, 4);
    out.len = 0;
    v = tv(PGW_OID_BYTEA, "\\x0102");
    assert_int_equal(pgw_get_datum(&v, &d), 0);
    assert_int_equal(d.kind, PGW_DATUM_BYTEA_TEXT);
    assert_int_equal(pgw__encode_scalar(&d, 0, &out), 0);
    assert_int_equal(out.len, 2);
    assert_memory_equal(out.data, "\1\2", 2);
    out.len = 0;
    v = tv(PGW_OID_JSONB, "{}");
    assert_int_equal(pgw_get_datum(&v, &d), 0);
    assert_int_equal(pgw__encode_scalar(&d, 0, &out), 0);
    assert_int_equal(out.len, 3);
    assert_memory_equal(out.data, "\1{}", 3);
    out.len = 0;
    assert_int_equal(pgw__encode_scalar(&d, PGW_OID_UUID, &out), PGW_ETYPE);
    v = tv(PGW_OID_POINT, "(1,2)");
    assert_int_equal(pgw_get_datum(&v, &d), PGW_ETYPE);
    v = bv(PGW_OID_INT4, NULL, -1);
    assert_int_equal(pgw_get_datum(&v, &d), 0);
    assert_int_equal(d.kind, PGW_DATUM_NULL);
    assert_int_equal(pgw__encode_scalar(&d, 0, &out), PGW_EINVAL);
    assert_true(pgw__scalar_binary_ok(PGW_OID_NUMERIC));
    assert_false(pgw__scalar_binary_ok(PGW_OID_POINT));
    assert_false(pgw__scalar_binary_ok(PGW_OID_INT4_ARRAY));
    pgw_buf_free(&out);
}

/* Walk a Bind message: returns the parameter views found. */
static size_t parse_bind(const pgw_buf_t *b, int16_t *nfmt, int16_t *fmts, pgw_view_t *vals)
{
    const uint8_t *p = b->data;
    assert_int_equal(p[0], 'B');
    assert_int_equal((size_t)pgw__get32(p + 1) + 1, b->len);
    size_t i = 5;
    i += strlen((const char *)p + i) + 1;
    i += strlen((const char *)p + i) + 1;
    *nfmt = (int16_t)pgw__get16(p + i);
    i += 2;
    for (int k = 0; k < *nfmt; k++, i += 2)
        fmts[k] = (int16_t)pgw__get16(p + i);
    uint16_t n = pgw__get16(p + i);
    i += 2;
    for (uint16_t k = 0; k < n; k++) {
        vals[k].len = (int32_t)pgw__get32(p + i);
        i += 4;
        vals[k].p = vals[k].len >= 0 ? p + i : NULL;
        if (vals[k].len > 0) i += (size_t)vals[k].len;
    }
    uint16_t nres = pgw__get16(p + i);
    i += 2 + 2 * (size_t)nres;
    assert_int_equal(i, b->len);
    return n;
}

static int failing_encoder(const void *ctx, pgw_buf_t *out)
{
    (void)ctx;
    pgw_buf_append(out, "xx", 2);
    return PGW_ERANGE;
}

/* An encoder parameter whose value is the 4 bytes at ctx. */
static int four_bytes_encoder(const void *ctx, pgw_buf_t *out)
{
    return pgw_buf_append(out, ctx, 4);
}

static void test_bind_params(void **state)
{
    (void)state;
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    static const pgw_interval_t iv = {1, 2, 3};
    pgw_param_t p[] = {pgw_int4(-2),
                       pgw_null(PGW_OID_INT8),
                       pgw_text("hi"),
                       pgw_numeric_str("-12.5"),
                       pgw_interval(&iv),
                       pgw_jsonb("[]"),
                       pgw_oid_param(4000000000u),
                       pgw_float8(-0.0)};
    uint16_t n = sizeof p / sizeof p[0];
    int16_t rf = 1;
    assert_int_equal(pgw_enc_bind_params(&b, "", "s1", p, n, &rf, 1, 0), 0);
    int16_t nfmt, fmts[16];
    pgw_view_t vals[16];
    assert_int_equal(parse_bind(&b, &nfmt, fmts, vals), n);
    assert_int_equal(nfmt, n); /* mixed formats: one each */
    assert_int_equal(fmts[2], 0);
    assert_int_equal(fmts[0], 1);
    assert_int_equal(vals[0].len, 4);
    assert_memory_equal(vals[0].p, "\xff\xff\xff\xfe", 4);
    assert_int_equal(vals[1].len, -1);
    assert_int_equal(vals[2].len, 2);
    /* -12.5: ndigits 2, weight 0, NEG, dscale 1, digits 12 5000 */
    assert_int_equal(vals[3].len, 12);
    assert_memory_equal(vals[3].p, "\0\2\0\0\x40\0\0\1\0\x0c\x13\x88", 12);
    assert_int_equal(vals[4].len, 16);
    assert_memory_equal(vals[4].p, "\0\0\0\0\0\0\0\1\0\0\0\2\0\0\0\3", 16);
    assert_int_equal(vals[5].len, 3);
    assert_memory_equal(vals[5].p, "\1[]", 3);
    assert_memory_equal(vals[6].p, "\xee\x6b\x28\0", 4);
    assert_memory_equal(vals[7].p, "\x80\0\0\0\0\0\0\0", 8);
    uint32_t oids[16];
    pgw_params_oids(p, n, oids);
    assert_int_equal(oids[3], PGW_OID_NUMERIC);
    assert_int_equal(oids[6], PGW_OID_OID);

    /* all binary: one format code */
    b.len = 0;
    pgw_param_t q[] = {pgw_int8(1), pgw_bool(true)};
    assert_int_equal(pgw_enc_bind_params(&b, "", "", q, 2, NULL, 0, 0), 0);
    assert_int_equal(parse_bind(&b, &nfmt, fmts, vals), 2);
    assert_int_equal(nfmt, 1);
    assert_int_equal(fmts[0], 1);

    /* failures leave the buffer as it was */
    b.len = 0;
    pgw_buf_append(&b, "keep", 4);
    pgw_param_t bad[] = {pgw_int4(1), pgw_numeric_str("12x")};
    assert_int_equal(pgw_enc_bind_params(&b, "", "", bad, 2, NULL, 0, 0), PGW_EFORMAT);
    assert_int_equal(b.len, 4);
    pgw_param_t bad2[] = {pgw_encoded(PGW_OID_INT4, failing_encoder, NULL)};
    assert_int_equal(pgw_enc_bind_params(&b, "", "", bad2, 1, NULL, 0, 0), PGW_ERANGE);
    assert_int_equal(b.len, 4);
    pgw_param_t bad3[] = {pgw_int2(0)};
    bad3[0].u.i = 40000;
    assert_int_equal(pgw_enc_bind_params(&b, "", "", bad3, 1, NULL, 0, 0), PGW_EINVAL);
    assert_int_equal(b.len, 4);
    static char big[200];
    memset(big, 'a', sizeof big - 1);
    pgw_param_t bad4[] = {pgw_text(big)};
    assert_int_equal(pgw_enc_bind_params(&b, "", "", bad4, 1, NULL, 0, 100), PGW_ETOOBIG);
    assert_int_equal(b.len, 4);

    /* The same Bind whether every size is known before it is written or
     * an encoder parameter appends its value as it goes. */
    static const uint8_t seven[4] = {0, 0, 0, 7};
    pgw_param_t known[] = {pgw_text("ab"), pgw_int4(7), pgw_null(0), pgw_raw(0, 1, "xyz", 3)};
    pgw_param_t grown[] = {pgw_text("ab"), pgw_encoded(PGW_OID_INT4, four_bytes_encoder, seven),
                           pgw_null(0), pgw_raw(0, 1, "xyz", 3)};
    int16_t rfs[] = {0, 1, 1};
    pgw_buf_t g;
    pgw_buf_init(&g, NULL);
    b.len = 0;
    assert_int_equal(pgw_enc_bind_params(&b, "p", "s", known, 4, rfs, 3, 0), 0);
    assert_int_equal(pgw_enc_bind_params(&g, "p", "s", grown, 4, rfs, 3, 0), 0);
    assert_int_equal(b.len, g.len);
    assert_memory_equal(b.data, g.data, b.len);
    assert_int_equal(parse_bind(&b, &nfmt, fmts, vals), 4);
    pgw_buf_free(&g);

    /* Text parameters carry no format code: a Bind of exactly max_msg
     * bytes (its length field included) goes out, one more is refused. */
    b.len = 0;
    pgw_param_t two_texts[] = {pgw_text("abcdef"), pgw_text("gh")};
    /* length 4, "" and "s", no format codes, 2 lengths and 8 bytes of
     * values, no result formats */
    uint32_t exact = 4 + 1 + 2 + 2 + 2 + 8 + 8 + 2;
    assert_int_equal(pgw_enc_bind_params(&b, "", "s", two_texts, 2, NULL, 0, exact), 0);
    assert_int_equal(b.len, 1 + exact);
    b.len = 0;
    assert_int_equal(pgw_enc_bind_params(&b, "", "s", two_texts, 2, NULL, 0, exact - 1),
                     PGW_ETOOBIG);
    assert_int_equal(b.len, 0);

    /* many parameters (more than the sizes the encoder keeps from its
     * measure), each a text of its own length, NULLs and integers among
     * them: every one where it belongs */
    b.len = 0;
    enum { MANY = 70 };
    static char texts[MANY][MANY + 1];
    pgw_param_t many[MANY];
    for (int i = 0; i < MANY; i++) {
        memset(texts[i], 'a' + i % 26, (size_t)i);
        texts[i][i] = '\0';
        many[i] = i % 7 == 3 ? pgw_null(0) : i % 5 == 4 ? pgw_int4(i) : pgw_text(texts[i]);
    }
    assert_int_equal(pgw_enc_bind_params(&b, "portal", "stmt", many, MANY, NULL, 0, 0), 0);
    int16_t mfmts[MANY];
    pgw_view_t mvals[MANY];
    assert_int_equal(parse_bind(&b, &nfmt, mfmts, mvals), MANY);
    assert_int_equal(nfmt, MANY);
    for (int i = 0; i < MANY; i++) {
        if (i % 7 == 3) {
            assert_int_equal(mvals[i].len, -1);
        } else if (i % 5 == 4) {
            assert_int_equal(mfmts[i], 1);
            assert_int_equal(mvals[i].len, 4);
            assert_int_equal(pgw__get32(mvals[i].p), (uint32_t)i);
        } else {
            assert_int_equal(mfmts[i], 0);
            assert_int_equal(mvals[i].len, i);
            assert_memory_equal(mvals[i].p, texts[i], (size_t)i);
        }
    }
    pgw_buf_free(&b);
}

/* The exact fast path of the float text parsers must give the same bits as
 * strtod/strtof for every string, including those it hands to the general
 * path: random values in the forms the server and people write. */
static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void check_float8_text(const char *txt)
{
    double got, want = strtod(txt, NULL);
    assert_int_equal(pgw__parse_float8(txt, strlen(txt), &got), 0);
    if (memcmp(&got, &want, sizeof got) != 0) fail_msg("float8 '%s': %a != %a", txt, got, want);
}

static void check_float4_text(const char *txt)
{
    float got, want = strtof(txt, NULL);
    assert_int_equal(pgw__parse_float4(txt, strlen(txt), &got), 0);
    if (memcmp(&got, &want, sizeof got) != 0) fail_msg("float4 '%s': %a != %a", txt, got, want);
}

static void test_float_fast_path_exact(void **state)
{
    (void)state;
    static const char *const fixed[] = {"0",          "-0",      "1.25",     "3.141592653589793",
                                        "0.1",        "1e22",    "1e23",     "9007199254740993",
                                        "123.456e-3", "-7.5E+2", "0.000001", "4.35",
                                        "16777217",   "1e-10",   "2.5e10",   "1234567.891"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        check_float8_text(fixed[i]);
        check_float4_text(fixed[i]);
    }
    char buf[64];
    static const char *const fmts[] = {"%.17g", "%.15g", "%.16g", "%g", "%.3f", "%.9g", "%.6g"};
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = rng();
        double d;
        /* Half raw bit patterns (any magnitude), half "human" decimals. */
        if (i % 2) {
            memcpy(&d, &bits, sizeof d);
            if (!isfinite(d)) continue;
        } else {
            d = (double)(int64_t)(bits % 2000000001u - 1000000000) / (double)(1u << (bits >> 60));
        }
        snprintf(buf, sizeof buf, fmts[i % 7], d);
        check_float8_text(buf);
        if (fabs(d) < 3e38) {
            snprintf(buf, sizeof buf, fmts[(i / 7) % 7], (double)(float)d);
            check_float4_text(buf);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bool),
        cmocka_unit_test(test_integers_text),
        cmocka_unit_test(test_integers_binary),
        cmocka_unit_test(test_floats),
        cmocka_unit_test(test_float_fast_path_exact),
        cmocka_unit_test(test_float_locale),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_bytea),
        cmocka_unit_test(test_uuid_mac_money),
        cmocka_unit_test(test_inet),
        cmocka_unit_test(test_datum),
        cmocka_unit_test(test_bind_params),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
