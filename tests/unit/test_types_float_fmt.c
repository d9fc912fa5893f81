/*
 * Unit tests of the shortest round-trip double formatter (float_fmt.c):
 * PostgreSQL's float8out text for the edge cases (zeros, denormals, the
 * extremes, the notation thresholds, NaN and the infinities), and random
 * doubles (every bit pattern class: normal, denormal, short decimals) that
 * must read back through strtod to the same bits and agree digit for digit
 * with the shortest snprintf("%.*e") that reads back, never longer than it
 * unless that one lies exactly halfway to a neighbour (float8out's rule).
 * PGW_TEST_FLOAT_N sets how many random doubles (default 3,000,000 for
 * the round trip, a tenth of them compared with snprintf).
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "types/float_fmt.h"

static void expect_text(double v, const char *want)
{
    char out[PGW__FLOAT8_TEXT_MAX + 1];
    size_t n = pgw__fmt_float8(out, v);
    assert_true(n <= PGW__FLOAT8_TEXT_MAX);
    out[n] = '\0';
    assert_string_equal(out, want);
}

static double from_bits(uint64_t b)
{
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static void test_edge_cases(void **state)
{
    (void)state;
    expect_text(0.0, "0");
    expect_text(-0.0, "-0");
    expect_text(from_bits(1), "5e-324"); /* the least denormal */
    expect_text(-from_bits(1), "-5e-324");
    expect_text(from_bits(0x000fffffffffffffu), "2.225073858507201e-308"); /* the greatest */
    expect_text(DBL_MIN, "2.2250738585072014e-308");
    expect_text(-DBL_MIN, "-2.2250738585072014e-308");
    expect_text(DBL_MAX, "1.7976931348623157e+308");
    expect_text(-DBL_MAX, "-1.7976931348623157e+308");
    expect_text(NAN, "NaN");
    expect_text(-NAN, "NaN");
    expect_text(INFINITY, "Infinity");
    expect_text(-INFINITY, "-Infinity");
    expect_text(0.1, "0.1");
    expect_text(0.3, "0.3");
    expect_text(0.1 + 0.2, "0.30000000000000004");
    expect_text(1.0, "1");
    expect_text(-1.5, "-1.5");
    expect_text(100.0, "100");
    expect_text(123.456, "123.456");
    expect_text(1e300, "1e+300");
    expect_text(1e-300, "1e-300");
    expect_text(1e22, "1e+22");
    /* 1e23 lies exactly halfway between two doubles: float8out writes the
     * closest decimal strictly inside the interval, as here. */
    expect_text(1e23, "9.999999999999999e+22");
    expect_text(5e-324 * 3, "1.5e-323");
    expect_text(9007199254740992.0, "9.007199254740992e+15"); /* 2^53 */
    expect_text(9007199254740991.0, "9.007199254740991e+15");
    expect_text(4503599627370496.0, "4.503599627370496e+15"); /* 2^52 */
    expect_text(1.0 / 3.0, "0.3333333333333333");
    expect_text(2.0 / 3.0, "0.6666666666666666");
    expect_text(123456789012345.67, "123456789012345.67");
    /* The notation thresholds: decimal for exponents -4 to 14. */
    expect_text(1e14, "100000000000000");
    expect_text(999999999999999.0, "999999999999999");
    expect_text(1e15, "1e+15");
    expect_text(1234567890123456.0, "1.234567890123456e+15");
    expect_text(0.0001, "0.0001");
    expect_text(0.00012345, "0.00012345");
    expect_text(0.00001, "1e-05");
    expect_text(0.000012345, "1.2345e-05");
    expect_text(-0.00001, "-1e-05");
    expect_text(1e100, "1e+100");
    expect_text(1.5e-100, "1.5e-100");
}

/* The significant digits of a text (leading and trailing zeros dropped). */
static size_t sig_digits(const char *s, char *d)
{
    size_t n = 0;
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9' && (n || *s != '0')) d[n++] = *s;
    while (n > 1 && d[n - 1] == '0')
        n--;
    d[n] = '\0';
    return n;
}

static int halfway(double v, const char *text);

/* Every power of two and of ten in range reads back (a power of ten as
 * one digit, unless it lies halfway between two doubles). */
static void check_round_trip(double v)
{
    char out[PGW__FLOAT8_TEXT_MAX + 1];
    size_t n = pgw__fmt_float8(out, v);
    assert_true(n <= PGW__FLOAT8_TEXT_MAX);
    out[n] = '\0';
    double back = strtod(out, NULL);
    if (memcmp(&back, &v, sizeof v) != 0) fail_msg("%a -> \"%s\" -> %a", v, out, back);
}

static void test_powers(void **state)
{
    (void)state;
    for (int e = -1074; e <= 1023; e++) {
        check_round_trip(ldexp(1.0, e));
        check_round_trip(nextafter(ldexp(1.0, e), 0.0));
        check_round_trip(nextafter(ldexp(1.0, e), INFINITY));
    }
    char lit[16], out[PGW__FLOAT8_TEXT_MAX + 1], d[32];
    for (int e = -323; e <= 308; e++) {
        snprintf(lit, sizeof lit, "1e%d", e);
        double v = strtod(lit, NULL);
        check_round_trip(v);
        out[pgw__fmt_float8(out, v)] = '\0';
        if ((sig_digits(out, d) != 1 || d[0] != '1') && !halfway(v, lit))
            fail_msg("%s -> \"%s\"", lit, out);
    }
}

static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* The shortest "%.*e" that reads back to v (into text), as significant
 * digits. */
static size_t snprintf_shortest(double v, char text[64], char *d)
{
    for (int p = 0; p < 17; p++) {
        snprintf(text, 64, "%.*e", p, v);
        if (strtod(text, NULL) == v) break;
    }
    return sig_digits(text, d);
}

/* text is exactly halfway between v and a neighbouring double: strtod
 * reads it back to v (round half to even), but float8out never writes such
 * a decimal. The midpoint needs 54 bits: exact in a long double of 64. */
static int halfway(double v, const char *text)
{
#if LDBL_MANT_DIG >= 64
    long double t = strtold(text, NULL);
    long double lo = ((long double)v + (long double)nextafter(v, -INFINITY)) / 2;
    long double hi = ((long double)v + (long double)nextafter(v, INFINITY)) / 2;
    return t == lo || t == hi;
#else
    (void)v;
    (void)text;
    return 1;
#endif
}

static void test_random(void **state)
{
    (void)state;
    const char *env = getenv("PGW_TEST_FLOAT_N");
    long n = env ? atol(env) : 3000000;
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (long i = 0; i < n; i++) {
        uint64_t bits = xorshift(&x);
        double v;
        switch (i % 4) {
        case 1: /* denormal */
            bits &= 0x800fffffffffffffu;
            break;
        case 2: { /* a short decimal, as data often is */
            double d = (double)(xorshift(&x) % 100000000) / (double)(1 + xorshift(&x) % 1000);
            memcpy(&bits, &d, sizeof bits);
            break;
        }
        case 3: /* around 1: mantissa noise at small exponents */
            bits = (bits & 0x800fffffffffffffu) | ((uint64_t)(1023 - 40 + xorshift(&x) % 80) << 52);
            break;
        }
        memcpy(&v, &bits, sizeof v);
        if (isnan(v) || isinf(v)) continue;
        check_round_trip(v);
        if (i % 10 || v == 0) continue;
        char out[PGW__FLOAT8_TEXT_MAX + 1], ours[32], ref[32], ref_text[64];
        out[pgw__fmt_float8(out, v)] = '\0';
        size_t a = sig_digits(out, ours), b = snprintf_shortest(v, ref_text, ref);
        /* The closest decimal of a length reads back whenever any of that
         * length does: snprintf's is the shortest, unless it lies exactly
         * halfway to a neighbour (then ours is longer). */
        if (a < b || (!halfway(v, ref_text) && (a != b || strcmp(ours, ref) != 0)))
            fail_msg("%a: \"%s\", snprintf's shortest %s", v, out, ref_text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_powers),
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
