/*
 * Unit tests of ranges and multiranges: binary and text decoding (flags,
 * infinite and empty ranges, quoted and escaped bounds, malformed input)
 * and the binary encoders.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pgwire/types_container.h"
#include "util/internal.h"

static pgw_value_t text_val(const char *s, uint32_t oid)
{
    pgw_value_t v = {(const uint8_t *)s, (int32_t)strlen(s), PGW_FORMAT_TEXT, oid};
    return v;
}

static void expect_bound(const pgw_value_t *b, const char *s)
{
    if (!s) {
        assert_int_equal(b->len, -1);
        assert_null(b->p);
        return;
    }
    assert_int_equal(b->len, (int32_t)strlen(s));
    assert_memory_equal(b->p, s, strlen(s));
}

static void test_text_ranges(void **state)
{
    (void)state;
    pgw_range_t r;
    pgw_value_t v = text_val("[1,10)", PGW_OID_INT4RANGE);
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    assert_int_equal(r.flags, PGW_RANGE_LB_INC);
    expect_bound(&r.lower, "1");
    expect_bound(&r.upper, "10");
    assert_int_equal(r.lower.oid, PGW_OID_INT4);
    assert_int_equal(r.lower.format, PGW_FORMAT_TEXT);
    int32_t x;
    assert_int_equal(pgw_get_int4(&r.upper, &x), 0);
    assert_int_equal(x, 10);

    v = text_val("empty", PGW_OID_INT4RANGE);
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    assert_int_equal(r.flags, PGW_RANGE_EMPTY);
    expect_bound(&r.lower, NULL);
    expect_bound(&r.upper, NULL);
    v = text_val("  EmPtY ", 0);
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    assert_int_equal(r.flags, PGW_RANGE_EMPTY);

    v = text_val("(,5]", PGW_OID_INT8RANGE);
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    assert_int_equal(r.flags, PGW_RANGE_LB_INF | PGW_RANGE_UB_INC);
    expect_bound(&r.lower, NULL);
    expect_bound(&r.upper, "5");

    v = text_val("[3,)", PGW_OID_INT8RANGE);
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    assert_int_equal(r.flags, PGW_RANGE_LB_INC | PGW_RANGE_UB_INF);
    v = text_val("(,)", PGW_OID_INT8RANGE);
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    assert_int_equal(r.flags, PGW_RANGE_LB_INF | PGW_RANGE_UB_INF);
    /* '[' on an infinite side is not inclusive (the server normalises). */
    v = text_val("[,]", 0);
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    assert_int_equal(r.flags, PGW_RANGE_LB_INF | PGW_RANGE_UB_INF);

    /* Quoted bounds: views inside the quotes, no scratch needed. */
    const char *ts = "[\"2020-01-01 00:00:00\",\"2020-01-02 00:00:00\")";
    v = text_val(ts, PGW_OID_TSRANGE);
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    expect_bound(&r.lower, "2020-01-01 00:00:00");
    assert_ptr_equal(r.lower.p, (const uint8_t *)ts + 2);
    expect_bound(&r.upper, "2020-01-02 00:00:00");
    assert_int_equal(r.upper.oid, PGW_OID_TIMESTAMP);

    /* Escapes and doubled quotes need scratch. */
    const char *esc = "[\"a\"\"b\",c\\,d]";
    v = text_val(esc, 0);
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), PGW_ERANGE);
    char scratch[32];
    assert_int_equal(pgw_range_parse(&v, &r, scratch, sizeof scratch), 0);
    expect_bound(&r.lower, "a\"b");
    expect_bound(&r.upper, "c,d");
    assert_int_equal(r.flags, PGW_RANGE_LB_INC | PGW_RANGE_UB_INC);
    /* "" is an empty-string bound, not an infinite one. */
    v = text_val("(\"\",x)", 0);
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    assert_int_equal(r.flags, 0);
    expect_bound(&r.lower, "");
}

static void test_text_malformed(void **state)
{
    (void)state;
    static const char *bad[] = {"",       "[1,2",   "1,2)",  "[1,2,3)", "[1)",    "[\"1,2)",
                                "[1,2)x", "emptyx", "{1,2}", "[1\\",    "(1,2]]", "empt"};
    for (size_t i = 0; i < PGW__ARRAY_LEN(bad); i++) {
        pgw_value_t v = text_val(bad[i], PGW_OID_INT4RANGE);
        pgw_range_t r;
        char scratch[64];
        int rc = pgw_range_parse(&v, &r, scratch, sizeof scratch);
        if (rc != PGW_EFORMAT) fail_msg("accepted %s (rc %d)", bad[i], rc);
        assert_int_equal(r.lower.len, -1);
    }
    pgw_value_t nv = {NULL, -1, PGW_FORMAT_TEXT, 0};
    pgw_range_t r;
    assert_int_equal(pgw_range_parse(&nv, &r, NULL, 0), PGW_ENULL);
}

static void test_binary_ranges(void **state)
{
    (void)state;
    pgw_range_t r;
    /* [1,10) as int4range. */
    static const uint8_t b1[] = {0x02, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 10};
    pgw_value_t v = {b1, sizeof b1, PGW_FORMAT_BINARY, PGW_OID_INT4RANGE};
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    assert_int_equal(r.flags, PGW_RANGE_LB_INC);
    assert_int_equal(r.lower.len, 4);
    assert_ptr_equal(r.lower.p, b1 + 5);
    int32_t x;
    assert_int_equal(pgw_get_int4(&r.upper, &x), 0);
    assert_int_equal(x, 10);
    /* empty */
    static const uint8_t b2[] = {0x01};
    v = (pgw_value_t){b2, 1, PGW_FORMAT_BINARY, PGW_OID_INT4RANGE};
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    assert_int_equal(r.flags, PGW_RANGE_EMPTY);
    assert_int_equal(r.lower.len, -1);
    /* (,5] : lower infinite, only the upper bound follows. */
    static const uint8_t b3[] = {0x0c, 0, 0, 0, 4, 0, 0, 0, 5};
    v = (pgw_value_t){b3, sizeof b3, PGW_FORMAT_BINARY, PGW_OID_INT4RANGE};
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    assert_int_equal(r.flags, PGW_RANGE_LB_INF | PGW_RANGE_UB_INC);
    assert_int_equal(r.lower.len, -1);
    assert_int_equal(r.upper.len, 4);
    /* The internal contain-empty bit is masked away. */
    static const uint8_t b4[] = {0x98};
    v = (pgw_value_t){b4, 1, PGW_FORMAT_BINARY, 0};
    assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), 0);
    assert_int_equal(r.flags, PGW_RANGE_LB_INF | PGW_RANGE_UB_INF);

    /* Malformed: empty value, bound overrun, negative length, trailing
     * bytes, missing upper bound. */
    static const uint8_t m1[] = {0x02, 0, 0, 0, 9, 0, 0, 0, 1};
    static const uint8_t m2[] = {0x02, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    static const uint8_t m3[] = {0x01, 0};
    static const uint8_t m4[] = {0x02, 0, 0, 0, 1, 7};
    static const uint8_t m5[] = {0x02, 0, 0};
    const struct {
        const uint8_t *p;
        int32_t n;
    } bad[] = {{m1, 0},         {m1, sizeof m1}, {m2, sizeof m2},
               {m3, sizeof m3}, {m4, sizeof m4}, {m5, sizeof m5}};
    for (size_t i = 0; i < PGW__ARRAY_LEN(bad); i++) {
        v = (pgw_value_t){bad[i].p, bad[i].n, PGW_FORMAT_BINARY, 0};
        assert_int_equal(pgw_range_parse(&v, &r, NULL, 0), PGW_EFORMAT);
    }
}

static void test_multirange_text(void **state)
{
    (void)state;
    pgw_multirange_t m;
    pgw_multirange_iter_t it;
    pgw_range_t r;
    pgw_value_t v = text_val("{[1,3), [5,7)}", PGW_OID_INT4MULTIRANGE);
    assert_int_equal(pgw_multirange_parse(&v, &m), 0);
    assert_int_equal(m.count, 2);
    assert_int_equal(m.range_oid, PGW_OID_INT4RANGE);
    pgw_multirange_iter_init(&it, &m, NULL, 0);
    assert_int_equal(pgw_multirange_next(&it, &r), 1);
    expect_bound(&r.lower, "1");
    expect_bound(&r.upper, "3");
    assert_int_equal(r.lower.oid, PGW_OID_INT4);
    assert_int_equal(pgw_multirange_next(&it, &r), 1);
    expect_bound(&r.lower, "5");
    assert_int_equal(r.flags, PGW_RANGE_LB_INC);
    assert_int_equal(pgw_multirange_next(&it, &r), 0);

    v = text_val("{}", PGW_OID_INT4MULTIRANGE);
    assert_int_equal(pgw_multirange_parse(&v, &m), 0);
    assert_int_equal(m.count, 0);
    pgw_multirange_iter_init(&it, &m, NULL, 0);
    assert_int_equal(pgw_multirange_next(&it, &r), 0);

    /* Escaped bounds are validated at parse, unescaped while iterating. */
    v = text_val(" { (,\"a\\\\b\"] ,[\"x\",) } ", 0);
    assert_int_equal(pgw_multirange_parse(&v, &m), 0);
    assert_int_equal(m.count, 2);
    char scratch[32];
    pgw_multirange_iter_init(&it, &m, NULL, 0);
    assert_int_equal(pgw_multirange_next(&it, &r), PGW_ERANGE);
    pgw_multirange_iter_init(&it, &m, scratch, sizeof scratch);
    assert_int_equal(pgw_multirange_next(&it, &r), 1);
    assert_int_equal(r.flags, PGW_RANGE_LB_INF | PGW_RANGE_UB_INC);
    expect_bound(&r.upper, "a\\b");
    assert_int_equal(pgw_multirange_next(&it, &r), 1);
    expect_bound(&r.lower, "x");
    assert_int_equal(r.flags, PGW_RANGE_LB_INC | PGW_RANGE_UB_INF);

    static const char *bad[] = {
        "", "{", "{[1,2)", "{[1,2),}", "{,[1,2)}", "{[1,2) [3,4)}", "{[1,2)}x", "[1,2)", "{[1,2}"};
    for (size_t i = 0; i < PGW__ARRAY_LEN(bad); i++) {
        v = text_val(bad[i], 0);
        int rc = pgw_multirange_parse(&v, &m);
        if (rc != PGW_EFORMAT) fail_msg("accepted %s (rc %d)", bad[i], rc);
    }
}

static void test_multirange_binary(void **state)
{
    (void)state;
    /* Encode {[1,3), (,9]} and decode it back. */
    pgw_range_enc_t rs[2] = {
        {PGW_OID_INT4RANGE, PGW_RANGE_LB_INC, pgw_int4(1), pgw_int4(3)},
        {PGW_OID_INT4RANGE, PGW_RANGE_LB_INF | PGW_RANGE_LB_INC | PGW_RANGE_UB_INC, pgw_int4(0),
         pgw_int4(9)},
    };
    pgw_multirange_enc_t mc = {PGW_OID_INT4MULTIRANGE, rs, 2};
    pgw_param_t p = pgw_multirange_param(&mc);
    assert_int_equal(p.oid, PGW_OID_INT4MULTIRANGE);
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(p.u.enc.fn(p.u.enc.ctx, &b), 0);
    static const uint8_t want[] = {0, 0, 0, 2, 0, 0, 0, 17, 0x02, 0, 0,    0, 4, 0, 0, 0, 1, 0, 0,
                                   0, 4, 0, 0, 0, 3, 0, 0,  0,    9, 0x0c, 0, 0, 0, 4, 0, 0, 0, 9};
    assert_int_equal(b.len, sizeof want);
    assert_memory_equal(b.data, want, sizeof want);
    pgw_value_t v = {b.data, (int32_t)b.len, PGW_FORMAT_BINARY, PGW_OID_INT4MULTIRANGE};
    pgw_multirange_t m;
    assert_int_equal(pgw_multirange_parse(&v, &m), 0);
    assert_int_equal(m.count, 2);
    pgw_multirange_iter_t it;
    pgw_range_t r;
    pgw_multirange_iter_init(&it, &m, NULL, 0);
    assert_int_equal(pgw_multirange_next(&it, &r), 1);
    assert_int_equal(r.flags, PGW_RANGE_LB_INC);
    int32_t x;
    assert_int_equal(pgw_get_int4(&r.upper, &x), 0);
    assert_int_equal(x, 3);
    assert_int_equal(pgw_multirange_next(&it, &r), 1);
    assert_int_equal(r.flags, PGW_RANGE_LB_INF | PGW_RANGE_UB_INC);
    assert_int_equal(r.lower.len, -1);
    assert_int_equal(pgw_multirange_next(&it, &r), 0);

    /* Malformed: count larger than the bytes, a bad inner range, trailing. */
    uint8_t bad[sizeof want + 1];
    memcpy(bad, want, sizeof want);
    bad[3] = 3;
    v = (pgw_value_t){bad, sizeof want, PGW_FORMAT_BINARY, 0};
    assert_int_equal(pgw_multirange_parse(&v, &m), PGW_EFORMAT);
    bad[3] = 2;
    bad[sizeof want] = 0;
    v.len = sizeof want + 1;
    assert_int_equal(pgw_multirange_parse(&v, &m), PGW_EFORMAT);
    memcpy(bad, want, sizeof want);
    bad[12] = 5; /* first bound length overruns its range */
    v.len = sizeof want;
    assert_int_equal(pgw_multirange_parse(&v, &m), PGW_EFORMAT);
    static const uint8_t huge[] = {0x7f, 0xff, 0xff, 0xff};
    v = (pgw_value_t){huge, 4, PGW_FORMAT_BINARY, 0};
    assert_int_equal(pgw_multirange_parse(&v, &m), PGW_EFORMAT);
    pgw_buf_free(&b);
}

static void test_range_encode(void **state)
{
    (void)state;
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    pgw_range_enc_t e = {PGW_OID_INT8RANGE, PGW_RANGE_EMPTY | PGW_RANGE_LB_INC, pgw_int8(1),
                         pgw_int8(2)};
    assert_int_equal(pgw_encode_range(&e, &b), 0);
    assert_int_equal(b.len, 1);
    assert_int_equal(b.data[0], PGW_RANGE_EMPTY);
    pgw_buf_reset(&b);
    e.flags = PGW_RANGE_LB_INC | PGW_RANGE_UB_INF | PGW_RANGE_UB_INC;
    assert_int_equal(pgw_encode_range(&e, &b), 0);
    static const uint8_t want[] = {0x12, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 1};
    assert_int_equal(b.len, sizeof want);
    assert_memory_equal(b.data, want, sizeof want);
    /* A NULL bound is not a way to say infinite; text bounds of non-text
     * types are refused; the buffer is left unchanged. */
    pgw_buf_reset(&b);
    e.flags = 0;
    e.upper = pgw_null(PGW_OID_INT8);
    assert_int_equal(pgw_encode_range(&e, &b), PGW_EINVAL);
    assert_int_equal(b.len, 0);
    e.upper = pgw_text_typed("5", -1, PGW_OID_INT8);
    assert_int_equal(pgw_encode_range(&e, &b), PGW_EINVAL);
    assert_int_equal(b.len, 0);
    /* Numeric bounds go as pre-encoded binary values. */
    static const uint8_t num1[] = {0, 1, 0, 0, 0, 0, 0, 0, 0, 1}; /* 1 */
    pgw_range_enc_t n = {PGW_OID_NUMRANGE, PGW_RANGE_LB_INC | PGW_RANGE_UB_INF,
                         pgw_raw(PGW_OID_NUMERIC, PGW_FORMAT_BINARY, num1, sizeof num1),
                         pgw_null(0)};
    assert_int_equal(pgw_range_param(&n).oid, PGW_OID_NUMRANGE);
    assert_int_equal(pgw_encode_range(&n, &b), 0);
    assert_int_equal(b.len, 1 + 4 + sizeof num1);
    pgw_buf_free(&b);

    assert_int_equal(pgw_range_elem_oid(PGW_OID_TSTZRANGE), PGW_OID_TIMESTAMPTZ);
    assert_int_equal(pgw_range_elem_oid(PGW_OID_INT4), 0);
    assert_int_equal(pgw_multirange_range_oid(PGW_OID_DATEMULTIRANGE), PGW_OID_DATERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_ranges),       cmocka_unit_test(test_text_malformed),
        cmocka_unit_test(test_binary_ranges),     cmocka_unit_test(test_multirange_text),
        cmocka_unit_test(test_multirange_binary), cmocka_unit_test(test_range_encode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
