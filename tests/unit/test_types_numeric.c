/* numeric: binary view, text parse, formatting, conversions, encoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/types.h"
#include "types/types_internal.h"

static pgw_value_t tv(const char *s)
{
    pgw_value_t v = {(const uint8_t *)s, (int32_t)strlen(s), PGW_FORMAT_TEXT, PGW_OID_NUMERIC};
    return v;
}

/* text -> numeric -> string must give the canonical form back */
static void roundtrip(const char *in, const char *want)
{
    size_t cap = PGW_NUMERIC_STORAGE(strlen(in));
    uint8_t *st = malloc(cap);
    pgw_numeric_t n;
    assert_int_equal(pgw_numeric_parse(in, strlen(in), &n, st, cap), 0);
    char out[20000];
    size_t need;
    assert_int_equal(pgw_numeric_to_str(&n, out, sizeof out, &need), 0);
    free(st);
    assert_string_equal(out, want);
    assert_int_equal(need, strlen(want) + 1);
    /* and through the binary encoder and decoder */
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw__numeric_write_str(in, strlen(in), &b), 0);
    pgw_value_t v = {b.data, (int32_t)b.len, PGW_FORMAT_BINARY, PGW_OID_NUMERIC};
    assert_int_equal(pgw_get_numeric_str(&v, out, sizeof out, &need), 0);
    assert_string_equal(out, want);
    pgw_buf_free(&b);
}

static void test_parse_format(void **state)
{
    (void)state;
    roundtrip("0", "0");
    roundtrip("-0", "0");
    roundtrip("-0.000001", "-0.000001");
    roundtrip("0.000", "0.000");
    roundtrip("123.45", "123.45");
    roundtrip("-12.50", "-12.50");
    roundtrip("10000", "10000");
    roundtrip("99990000.0001", "99990000.0001");
    roundtrip("00012", "12");
    roundtrip(".5", "0.5");
    roundtrip("5.", "5");
    roundtrip("1e3", "1000");
    roundtrip("1.5e-3", "0.0015");
    roundtrip("-1.23E+2", "-123");
    roundtrip("NaN", "NaN");
    roundtrip("nan", "NaN");
    roundtrip("Infinity", "Infinity");
    roundtrip("-inf", "-Infinity");
    roundtrip(" 7 ", "7");
    const char *bad[] = {"", "-", ".", "1.2.3", "1e", "abc", "1 2", "--1", "-nan", "0x10"};
    uint8_t st[64];
    pgw_numeric_t n;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(pgw_numeric_parse(bad[i], strlen(bad[i]), &n, st, sizeof st), PGW_EFORMAT);
    /* structure: 12345.678 = 1 2345 . 6780, weight 1, dscale 3 */
    assert_int_equal(pgw_numeric_parse("12345.678", 9, &n, st, sizeof st), 0);
    assert_int_equal(n.weight, 1);
    assert_int_equal(n.ndigits, 3);
    assert_int_equal(n.dscale, 3);
    assert_int_equal(pgw_numeric_digit(&n, 0), 1);
    assert_int_equal(pgw_numeric_digit(&n, 1), 2345);
    assert_int_equal(pgw_numeric_digit(&n, 2), 6780);
    /* storage too small */
    assert_int_equal(pgw_numeric_parse("12345.678", 9, &n, st, 4), PGW_ERANGE);
    /* scale beyond 16383 */
    assert_int_equal(pgw_numeric_parse("1e-16384", 8, &n, st, sizeof st), PGW_ERANGE);
    assert_int_equal(pgw_numeric_parse("1e-16383", 8, &n, st, sizeof st), 0);
    assert_int_equal(n.dscale, 16383);
    assert_int_equal(n.weight, -4096);
    assert_int_equal(pgw_numeric_digit(&n, 0), 10); /* 10 * 10000^-4096 */
    assert_int_equal(pgw_numeric_parse("1e200000", 8, &n, st, sizeof st), PGW_ERANGE);
}

static void test_format_buffer(void **state)
{
    (void)state;
    uint8_t st[64];
    pgw_numeric_t n;
    assert_int_equal(pgw_numeric_parse("-123.4500", 9, &n, st, sizeof st), 0);
    char out[8];
    size_t need;
    assert_int_equal(pgw_numeric_to_str(&n, out, 5, &need), PGW_ERANGE);
    assert_int_equal(need, 10);
    char big[16];
    assert_int_equal(pgw_numeric_to_str(&n, big, 10, &need), 0);
    assert_string_equal(big, "-123.4500");
}

static void test_long(void **state)
{
    (void)state;
    /* 1000 digits, and scale 16383 */
    char s[20000];
    memset(s, '7', 1000);
    s[1000] = '\0';
    roundtrip(s, s);
    s[0] = '0';
    s[1] = '.';
    memset(s + 2, '0', 16382);
    s[16384] = '3';
    s[16385] = '\0';
    roundtrip(s, s);
    double d;
    pgw_value_t v = tv(s);
    assert_int_equal(pgw_get_numeric_double(&v, &d), PGW_ELOSS); /* underflows to 0 */
    int64_t i;
    assert_int_equal(pgw_get_numeric_int64(&v, &i), PGW_ELOSS);
}

static void test_to_int64(void **state)
{
    (void)state;
    struct {
        const char *s;
        int rc;
        int64_t want;
    } cases[] = {{"0", 0, 0},
                 {"-0.000", 0, 0},
                 {"9223372036854775807", 0, INT64_MAX},
                 {"-9223372036854775808", 0, INT64_MIN},
                 {"9223372036854775808", PGW_ERANGE, 0},
                 {"-9223372036854775809", PGW_ERANGE, 0},
                 {"100000000000000000000000", PGW_ERANGE, 0},
                 {"12.000", 0, 12},
                 {"12.5", PGW_ELOSS, 0},
                 {"0.0001", PGW_ELOSS, 0},
                 {"1e-20", PGW_ELOSS, 0},
                 {"NaN", PGW_ERANGE, 0},
                 {"-Infinity", PGW_ERANGE, 0},
                 {"123456789", 0, 123456789}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pgw_value_t v = tv(cases[k].s);
        int64_t x = -1;
        assert_int_equal(pgw_get_numeric_int64(&v, &x), cases[k].rc);
        if (cases[k].rc == 0) assert_true(x == cases[k].want);
    }
}

static void test_to_double(void **state)
{
    (void)state;
    const char *cases[] = {"0.1",
                           "-2.5",
                           "123456789.987654321",
                           "1e-300",
                           "4.9e-324",
                           "1.7976931348623157e308",
                           "0.30000000000000004",
                           "9007199254740993"};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pgw_value_t v = tv(cases[k]);
        double d;
        assert_int_equal(pgw_get_numeric_double(&v, &d), 0);
        assert_true(d == strtod(cases[k], NULL));
        /* also through binary */
        pgw_buf_t b;
        pgw_buf_init(&b, NULL);
        assert_int_equal(pgw__numeric_write_str(cases[k], strlen(cases[k]), &b), 0);
        pgw_value_t bv = {b.data, (int32_t)b.len, PGW_FORMAT_BINARY, PGW_OID_NUMERIC};
        double d2;
        assert_int_equal(pgw_get_numeric_double(&bv, &d2), 0);
        assert_true(d == d2);
        pgw_buf_free(&b);
    }
    double d;
    pgw_value_t v = tv("1e400");
    assert_int_equal(pgw_get_numeric_double(&v, &d), PGW_ERANGE);
    v = tv("NaN");
    assert_int_equal(pgw_get_numeric_double(&v, &d), 0);
    assert_true(isnan(d));
    v = tv("-Infinity");
    assert_int_equal(pgw_get_numeric_double(&v, &d), 0);
    assert_true(isinf(d) && d < 0);
    /* halfway case decided only by a digit far to the right: 2^53 + 1 then
     * 900 zeros and a 1 rounds up to 2^53 + 2 */
    char s[1000];
    strcpy(s, "9007199254740993.");
    memset(s + 17, '0', 900);
    strcpy(s + 917, "1");
    v = tv(s);
    assert_int_equal(pgw_get_numeric_double(&v, &d), 0);
    assert_true(d == 9007199254740994.0);
    s[917] = '\0';
    v = tv(s); /* exact tie: to even, 2^53 */
    assert_int_equal(pgw_get_numeric_double(&v, &d), 0);
    assert_true(d == 9007199254740992.0);
}

static void test_binary(void **state)
{
    (void)state;
    /* 1.5: ndigits 2, weight 0, POS, dscale 1, 1 5000 */
    uint8_t b[] = {0, 2, 0, 0, 0, 0, 0, 1, 0, 1, 0x13, 0x88};
    pgw_value_t v = {b, sizeof b, PGW_FORMAT_BINARY, PGW_OID_NUMERIC};
    pgw_numeric_t n;
    assert_int_equal(pgw_get_numeric(&v, &n, NULL, 0), 0);
    assert_ptr_equal(n.digits, b + 8); /* in place */
    char out[32];
    size_t need;
    assert_int_equal(pgw_get_numeric_str(&v, out, sizeof out, &need), 0);
    assert_string_equal(out, "1.5");
    b[10] = 0x27, b[11] = 0x10; /* digit 10000 */
    assert_int_equal(pgw_get_numeric(&v, &n, NULL, 0), PGW_EFORMAT);
    b[10] = 0x13, b[11] = 0x88;
    b[4] = 0x80; /* bad sign */
    assert_int_equal(pgw_get_numeric(&v, &n, NULL, 0), PGW_EFORMAT);
    b[4] = 0;
    v.len = 10; /* length does not match ndigits */
    assert_int_equal(pgw_get_numeric(&v, &n, NULL, 0), PGW_EFORMAT);
    uint8_t nan[8] = {0, 0, 0, 0, 0xc0, 0, 0, 0};
    v.p = nan;
    v.len = 8;
    assert_int_equal(pgw_get_numeric_str(&v, out, sizeof out, &need), 0);
    assert_string_equal(out, "NaN");
    uint8_t pinf[8] = {0, 0, 0, 0, 0xd0, 0, 0, 0};
    v.p = pinf;
    assert_int_equal(pgw_get_numeric_str(&v, out, sizeof out, &need), 0);
    assert_string_equal(out, "Infinity");
    /* encode from struct */
    pgw_buf_t buf;
    pgw_buf_init(&buf, NULL);
    assert_int_equal(pgw_encode_numeric(&n, &buf), 0);
    assert_int_equal(buf.len, 12);
    assert_memory_equal(buf.data, "\0\2\0\0\0\0\0\1\0\1\x13\x88", 12);
    buf.len = 0;
    assert_int_equal(pgw_encode_numeric_str("-Infinity", &buf), 0);
    assert_memory_equal(buf.data, "\0\0\0\0\xf0\0\0\0", 8);
    pgw_buf_free(&buf);
    /* text getter with storage */
    uint8_t st[PGW_NUMERIC_STORAGE(6)];
    v = tv("-1.234");
    assert_int_equal(pgw_get_numeric(&v, &n, st, sizeof st), 0);
    assert_int_equal(n.sign, PGW_NUMERIC_NEG);
    v.oid = PGW_OID_INT4;
    assert_int_equal(pgw_get_numeric(&v, &n, st, sizeof st), PGW_ETYPE);
}

/* "9...9.9...9": nint nines before the point (or "0"), nfrac after (heap). */
static char *nines(size_t nint, size_t nfrac)
{
    char *s = malloc(nint + nfrac + 3);
    memset(s, '9', nint);
    size_t n = nint;
    if (!nint) s[n++] = '0';
    if (nfrac) {
        s[n++] = '.';
        memset(s + n, '9', nfrac);
        n += nfrac;
    }
    s[n] = '\0';
    return s;
}

/* The server stores up to 131072 digits before the point and 16383 after:
 * 32768 + 4096 base-10000 digits, more than an int16 counts. Every decoder
 * must take them, in both formats. */
static void test_largest(void **state)
{
    (void)state;
    static const size_t shapes[][2] = {{131072, 0}, {131072, 16383}, {0, 16383}, {131069, 0}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        char *s = nines(shapes[k][0], shapes[k][1]);
        size_t len = strlen(s), cap = PGW_NUMERIC_STORAGE(len);
        uint8_t *st = malloc(cap);
        pgw_numeric_t n;
        assert_int_equal(pgw_numeric_parse(s, len, &n, st, cap), 0);
        size_t want_nd = (shapes[k][0] + 3) / 4 + (shapes[k][1] + 3) / 4;
        assert_int_equal(n.ndigits, want_nd);
        assert_int_equal(n.dscale, shapes[k][1]);
        /* text value: exact string, digit form, double, int64 */
        pgw_value_t v = tv(s);
        char *out = malloc(len + 2);
        size_t need;
        assert_int_equal(pgw_get_numeric_str(&v, out, len + 2, &need), 0);
        assert_string_equal(out, s);
        pgw_numeric_t tn;
        assert_int_equal(pgw_get_numeric(&v, &tn, st, cap), 0);
        assert_int_equal(tn.ndigits, want_nd);
        double d;
        int64_t i64;
        int want_d = shapes[k][0] > 308 ? PGW_ERANGE : 0;
        assert_int_equal(pgw_get_numeric_double(&v, &d), want_d);
        assert_int_equal(pgw_get_numeric_int64(&v, &i64), shapes[k][0] ? PGW_ERANGE : PGW_ELOSS);
        /* binary: encoded, then read in place */
        pgw_buf_t b;
        pgw_buf_init(&b, NULL);
        assert_int_equal(pgw__numeric_write_str(s, len, &b), 0);
        assert_int_equal(pgw__get16(b.data), want_nd);
        pgw_value_t bv = {b.data, (int32_t)b.len, PGW_FORMAT_BINARY, PGW_OID_NUMERIC};
        assert_int_equal(pgw_get_numeric_str(&bv, out, len + 2, &need), 0);
        assert_string_equal(out, s);
        assert_int_equal(pgw_get_numeric(&bv, &tn, NULL, 0), 0);
        assert_int_equal(tn.ndigits, want_nd);
        assert_int_equal(pgw_get_numeric_double(&bv, &d), want_d);
        assert_int_equal(pgw_get_numeric_int64(&bv, &i64), shapes[k][0] ? PGW_ERANGE : PGW_ELOSS);
        /* and the struct encoder writes the same bytes back */
        pgw_buf_t b2;
        pgw_buf_init(&b2, NULL);
        assert_int_equal(pgw_encode_numeric(&tn, &b2), 0);
        assert_int_equal(b2.len, b.len);
        assert_memory_equal(b2.data, b.data, b.len);
        pgw_buf_free(&b2);
        pgw_buf_free(&b);
        free(out);
        free(st);
        free(s);
    }
    /* beyond the server's range: 131073 digits is a weight past int16 */
    char *s = nines(131073, 0);
    size_t cap = PGW_NUMERIC_STORAGE(strlen(s));
    uint8_t *st = malloc(cap);
    pgw_numeric_t n;
    assert_int_equal(pgw_numeric_parse(s, strlen(s), &n, st, cap), PGW_ERANGE);
    free(st);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_format), cmocka_unit_test(test_format_buffer),
        cmocka_unit_test(test_long),         cmocka_unit_test(test_to_int64),
        cmocka_unit_test(test_to_double),    cmocka_unit_test(test_binary),
        cmocka_unit_test(test_largest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
