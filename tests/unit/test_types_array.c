/*
 * Unit tests of arrays: binary header validation, the in-place iterator,
 * the text parser (quoting, escapes, NULL, dimensions, malformed input),
 * the typed bulk getters, and the binary array encoder.
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

/* ---- helpers ------------------------------------------------------------ */

static pgw_value_t text_val(const char *s, uint32_t oid)
{
    pgw_value_t v = {(const uint8_t *)s, (int32_t)strlen(s), PGW_FORMAT_TEXT, oid};
    return v;
}

static pgw_value_t bin_val(const pgw_buf_t *b, uint32_t oid)
{
    pgw_value_t v = {b->data, (int32_t)b->len, PGW_FORMAT_BINARY, oid};
    return v;
}

static void put32(pgw_buf_t *b, uint32_t x)
{
    uint8_t d[4];
    pgw__put32(d, x);
    assert_int_equal(pgw_buf_append(b, d, 4), 0);
}

/* Binary array header. */
static void header(pgw_buf_t *b, int32_t ndim, int32_t flag, uint32_t elem, const int32_t *dims,
                   const int32_t *lbs)
{
    pgw_buf_init(b, NULL);
    put32(b, (uint32_t)ndim);
    put32(b, (uint32_t)flag);
    put32(b, elem);
    for (int i = 0; i < ndim; i++) {
        put32(b, (uint32_t)dims[i]);
        put32(b, (uint32_t)lbs[i]);
    }
}

static void int4_elem(pgw_buf_t *b, int32_t x)
{
    put32(b, 4);
    put32(b, (uint32_t)x);
}

/* Expect the next text element to be exactly s (NULL: SQL NULL). */
static void expect_next_text(pgw_array_iter_t *it, const char *s)
{
    pgw_value_t e;
    assert_int_equal(pgw_array_next(it, &e), 1);
    if (!s) {
        assert_int_equal(e.len, -1);
        return;
    }
    assert_int_equal(e.len, (int32_t)strlen(s));
    assert_memory_equal(e.p, s, strlen(s));
}

/* ---- binary ------------------------------------------------------------- */

static void test_binary_basic(void **state)
{
    (void)state;
    pgw_buf_t b;
    int32_t dims[] = {3}, lbs[] = {1};
    header(&b, 1, 1, PGW_OID_INT4, dims, lbs);
    int4_elem(&b, -1);
    int4_elem(&b, -2);
    put32(&b, UINT32_MAX); /* NULL */
    pgw_value_t v = bin_val(&b, PGW_OID_INT4_ARRAY);
    pgw_array_t a;
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.ndim, 1);
    assert_int_equal(a.dims[0], 3);
    assert_int_equal(a.lbounds[0], 1);
    assert_int_equal(a.nelems, 3);
    assert_true(a.has_nulls);
    assert_int_equal(a.elem_oid, PGW_OID_INT4);

    pgw_array_iter_t it;
    pgw_value_t e;
    pgw_array_iter_init(&it, &a, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal(e.len, 4);
    assert_int_equal((int32_t)pgw__get32(e.p), -1);
    assert_int_equal(e.format, PGW_FORMAT_BINARY);
    assert_int_equal(e.oid, PGW_OID_INT4);
    assert_ptr_equal(e.p, b.data + 12 + 8 + 4); /* in place */
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal((int32_t)pgw__get32(e.p), -2);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal(e.len, -1);
    assert_null(e.p);
    assert_int_equal(pgw_array_next(&it, &e), 0);
    assert_int_equal(pgw_array_next(&it, &e), 0);

    int32_t out[3];
    bool nulls[3];
    size_t n = 0;
    assert_int_equal(pgw_array_get_int4(&v, out, 3, &n, nulls), 0);
    assert_int_equal(n, 3);
    assert_int_equal(out[0], -1);
    assert_int_equal(out[1], -2);
    assert_false(nulls[0]);
    assert_true(nulls[2]);
    assert_int_equal(out[2], 0);
    /* Without null flags a NULL element is an error. */
    assert_int_equal(pgw_array_get_int4(&v, out, 3, &n, NULL), PGW_ENULL);
    /* Too small: the count is reported, nothing written. */
    out[0] = 77;
    assert_int_equal(pgw_array_get_int4(&v, out, 2, &n, nulls), PGW_ERANGE);
    assert_int_equal(n, 3);
    assert_int_equal(out[0], 77);
    pgw_buf_free(&b);
}

static void test_binary_multidim_lbound(void **state)
{
    (void)state;
    pgw_buf_t b;
    int32_t dims[] = {2, 3}, lbs[] = {0, -5};
    header(&b, 2, 0, PGW_OID_INT4, dims, lbs);
    for (int i = 0; i < 6; i++)
        int4_elem(&b, i * 10);
    pgw_value_t v = bin_val(&b, 0); /* type unknown: any element oid */
    pgw_array_t a;
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.ndim, 2);
    assert_int_equal(a.dims[1], 3);
    assert_int_equal(a.lbounds[0], 0);
    assert_int_equal(a.lbounds[1], -5);
    assert_int_equal(a.nelems, 6);
    assert_false(a.has_nulls);
    int32_t out[6];
    size_t n;
    assert_int_equal(pgw_array_get_int4(&v, out, 6, &n, NULL), 0);
    for (int i = 0; i < 6; i++)
        assert_int_equal(out[i], i * 10);
    pgw_buf_free(&b);
}

static void test_binary_empty(void **state)
{
    (void)state;
    pgw_buf_t b;
    header(&b, 0, 0, PGW_OID_INT4, NULL, NULL);
    pgw_value_t v = bin_val(&b, PGW_OID_INT4_ARRAY);
    pgw_array_t a;
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.ndim, 0);
    assert_int_equal(a.nelems, 0);
    pgw_array_iter_t it;
    pgw_value_t e;
    pgw_array_iter_init(&it, &a, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &e), 0);
    size_t n = 99;
    assert_int_equal(pgw_array_get_int4(&v, NULL, 0, &n, NULL), 0);
    assert_int_equal(n, 0);
    /* Bytes after an empty header are garbage. */
    put32(&b, 0);
    v = bin_val(&b, PGW_OID_INT4_ARRAY);
    assert_int_equal(pgw_array_parse(&v, &a), PGW_EFORMAT);
    pgw_buf_free(&b);
}

static void test_binary_malformed(void **state)
{
    (void)state;
    pgw_buf_t b;
    pgw_array_t a;
    pgw_value_t v;
    int32_t d1[] = {2}, l1[] = {1};

    /* Short header. */
    uint8_t shortb[8] = {0};
    pgw_value_t sv = {shortb, 8, PGW_FORMAT_BINARY, 0};
    assert_int_equal(pgw_array_parse(&sv, &a), PGW_EFORMAT);

    /* ndim out of range, negative, bad flag. */
    int32_t d7[7] = {1, 1, 1, 1, 1, 1, 1}, l7[7] = {1, 1, 1, 1, 1, 1, 1};
    header(&b, 7, 0, PGW_OID_INT4, d7, l7);
    int4_elem(&b, 1);
    v = bin_val(&b, 0);
    assert_int_equal(pgw_array_parse(&v, &a), PGW_EFORMAT);
    pgw_buf_free(&b);
    header(&b, -1, 0, PGW_OID_INT4, NULL, NULL);
    v = bin_val(&b, 0);
    assert_int_equal(pgw_array_parse(&v, &a), PGW_EFORMAT);
    pgw_buf_free(&b);
    header(&b, 1, 2, PGW_OID_INT4, d1, l1);
    int4_elem(&b, 1);
    int4_elem(&b, 2);
    v = bin_val(&b, 0);
    assert_int_equal(pgw_array_parse(&v, &a), PGW_EFORMAT);
    pgw_buf_free(&b);

    /* Dimension table cut short. */
    int32_t d2[] = {1, 1}, l2[] = {1, 1};
    header(&b, 2, 0, PGW_OID_INT4, d2, l2);
    b.len -= 4;
    v = bin_val(&b, 0);
    assert_int_equal(pgw_array_parse(&v, &a), PGW_EFORMAT);
    pgw_buf_free(&b);

    /* Negative dimension; product overflow; upper bound overflow. */
    int32_t dn[] = {-1}, dbig[] = {65536, 65536, 65536}, lbig[] = {1, 1, 1};
    header(&b, 1, 0, PGW_OID_INT4, dn, l1);
    v = bin_val(&b, 0);
    assert_int_equal(pgw_array_parse(&v, &a), PGW_EFORMAT);
    pgw_buf_free(&b);
    header(&b, 3, 0, PGW_OID_INT4, dbig, lbig);
    v = bin_val(&b, 0);
    assert_int_equal(pgw_array_parse(&v, &a), PGW_EFORMAT);
    pgw_buf_free(&b);
    int32_t dub[] = {2}, lub[] = {INT32_MAX};
    header(&b, 1, 0, PGW_OID_INT4, dub, lub);
    int4_elem(&b, 1);
    int4_elem(&b, 2);
    v = bin_val(&b, 0);
    assert_int_equal(pgw_array_parse(&v, &a), PGW_EFORMAT);
    pgw_buf_free(&b);

    /* More elements claimed than bytes could hold. */
    int32_t dm[] = {1000};
    header(&b, 1, 0, PGW_OID_INT4, dm, l1);
    int4_elem(&b, 1);
    v = bin_val(&b, 0);
    assert_int_equal(pgw_array_parse(&v, &a), PGW_EFORMAT);
    pgw_buf_free(&b);

    /* Element oid that contradicts the column's array type. */
    header(&b, 1, 0, PGW_OID_INT8, d1, l1);
    int4_elem(&b, 1);
    int4_elem(&b, 2);
    v = bin_val(&b, PGW_OID_INT4_ARRAY);
    assert_int_equal(pgw_array_parse(&v, &a), PGW_ETYPE);
    pgw_buf_free(&b);

    /* Element length overrunning the value: parse is fine (cheap checks),
     * the iterator and the getter catch it, and the error is sticky. */
    header(&b, 1, 0, PGW_OID_INT4, d1, l1);
    int4_elem(&b, 1);
    put32(&b, 100);
    put32(&b, 5);
    v = bin_val(&b, PGW_OID_INT4_ARRAY);
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    pgw_array_iter_t it;
    pgw_value_t e;
    pgw_array_iter_init(&it, &a, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal(pgw_array_next(&it, &e), PGW_EFORMAT);
    assert_int_equal(pgw_array_next(&it, &e), PGW_EFORMAT);
    int32_t out[2];
    size_t n;
    assert_int_equal(pgw_array_get_int4(&v, out, 2, &n, NULL), PGW_EFORMAT);
    pgw_buf_free(&b);

    /* Negative length other than -1. */
    header(&b, 1, 0, PGW_OID_INT4, d1, l1);
    int4_elem(&b, 1);
    put32(&b, (uint32_t)-2);
    put32(&b, 0);
    v = bin_val(&b, 0);
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    pgw_array_iter_init(&it, &a, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal(pgw_array_next(&it, &e), PGW_EFORMAT);
    pgw_buf_free(&b);

    /* Trailing bytes after the last element. */
    header(&b, 1, 0, PGW_OID_INT4, d1, l1);
    int4_elem(&b, 1);
    int4_elem(&b, 2);
    put32(&b, 0);
    v = bin_val(&b, 0);
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    pgw_array_iter_init(&it, &a, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal(pgw_array_next(&it, &e), PGW_EFORMAT);
    assert_int_equal(pgw_array_get_int4(&v, out, 2, &n, NULL), PGW_EFORMAT);
    pgw_buf_free(&b);

    /* Wrong element width for the fast path. */
    header(&b, 1, 0, PGW_OID_INT4, d1, l1);
    int4_elem(&b, 1);
    put32(&b, 2);
    assert_int_equal(pgw_buf_append(&b, "\0\1", 2), 0);
    v = bin_val(&b, 0);
    assert_int_equal(pgw_array_get_int4(&v, out, 2, &n, NULL), PGW_EFORMAT);
    pgw_buf_free(&b);

    /* NULL value. */
    pgw_value_t nv = {NULL, -1, PGW_FORMAT_BINARY, PGW_OID_INT4_ARRAY};
    assert_int_equal(pgw_array_parse(&nv, &a), PGW_ENULL);
}

static void test_binary_fixed_types(void **state)
{
    (void)state;
    pgw_buf_t b;
    int32_t d[] = {2}, l[] = {1};
    /* float8 */
    header(&b, 1, 0, PGW_OID_FLOAT8, d, l);
    double x = -1.5, y = 1e300;
    uint64_t u;
    uint8_t be[8];
    memcpy(&u, &x, 8);
    put32(&b, 8);
    pgw__put64(be, u);
    assert_int_equal(pgw_buf_append(&b, be, 8), 0);
    memcpy(&u, &y, 8);
    put32(&b, 8);
    pgw__put64(be, u);
    assert_int_equal(pgw_buf_append(&b, be, 8), 0);
    pgw_value_t v = bin_val(&b, PGW_OID_FLOAT8_ARRAY);
    double out[2];
    size_t n;
    assert_int_equal(pgw_array_get_float8(&v, out, 2, &n, NULL), 0);
    assert_true(out[0] == x && out[1] == y);
    pgw_buf_free(&b);
    /* bool */
    header(&b, 1, 0, PGW_OID_BOOL, d, l);
    put32(&b, 1);
    assert_int_equal(pgw_buf_append(&b, "\1", 1), 0);
    put32(&b, 1);
    assert_int_equal(pgw_buf_append(&b, "\0", 1), 0);
    v = bin_val(&b, PGW_OID_BOOL_ARRAY);
    bool bo[2];
    assert_int_equal(pgw_array_get_bool(&v, bo, 2, &n, NULL), 0);
    assert_true(bo[0]);
    assert_false(bo[1]);
    pgw_buf_free(&b);
    /* int2 / int8 */
    header(&b, 1, 0, PGW_OID_INT2, d, l);
    put32(&b, 2);
    assert_int_equal(pgw_buf_append(&b, "\xff\xfe", 2), 0);
    put32(&b, 2);
    assert_int_equal(pgw_buf_append(&b, "\x7f\xff", 2), 0);
    v = bin_val(&b, PGW_OID_INT2_ARRAY);
    int16_t s16[2];
    assert_int_equal(pgw_array_get_int2(&v, s16, 2, &n, NULL), 0);
    assert_int_equal(s16[0], -2);
    assert_int_equal(s16[1], 32767);
    pgw_buf_free(&b);
    header(&b, 1, 0, PGW_OID_INT8, d, l);
    put32(&b, 8);
    pgw__put64(be, (uint64_t)INT64_MIN);
    assert_int_equal(pgw_buf_append(&b, be, 8), 0);
    put32(&b, 8);
    pgw__put64(be, 5);
    assert_int_equal(pgw_buf_append(&b, be, 8), 0);
    v = bin_val(&b, PGW_OID_INT8_ARRAY);
    int64_t s64[2];
    assert_int_equal(pgw_array_get_int8(&v, s64, 2, &n, NULL), 0);
    assert_true(s64[0] == INT64_MIN && s64[1] == 5);
    pgw_buf_free(&b);
    /* float4 */
    header(&b, 1, 0, PGW_OID_FLOAT4, d, l);
    float f = 0.25f, g = -3.0f;
    uint32_t fu;
    memcpy(&fu, &f, 4);
    put32(&b, 4);
    put32(&b, fu);
    memcpy(&fu, &g, 4);
    put32(&b, 4);
    put32(&b, fu);
    v = bin_val(&b, PGW_OID_FLOAT4_ARRAY);
    float f4[2];
    assert_int_equal(pgw_array_get_float4(&v, f4, 2, &n, NULL), 0);
    assert_true(f4[0] == f && f4[1] == g);
    pgw_buf_free(&b);
}

/* ---- text --------------------------------------------------------------- */

static void test_text_basic(void **state)
{
    (void)state;
    pgw_value_t v = text_val("{-1,-2,NULL}", PGW_OID_INT4_ARRAY);
    pgw_array_t a;
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.ndim, 1);
    assert_int_equal(a.dims[0], 3);
    assert_int_equal(a.lbounds[0], 1);
    assert_int_equal(a.nelems, 3);
    assert_true(a.has_nulls);
    assert_int_equal(a.elem_oid, PGW_OID_INT4);
    pgw_array_iter_t it;
    pgw_array_iter_init(&it, &a, NULL, 0);
    expect_next_text(&it, "-1");
    expect_next_text(&it, "-2");
    expect_next_text(&it, NULL);
    pgw_value_t e;
    assert_int_equal(pgw_array_next(&it, &e), 0);
}

static void test_text_quoting(void **state)
{
    (void)state;
    /* "NULL" quoted is a string, bare null is NULL in any case, "" empty,
     * a\,b an escaped comma, whitespace around unquoted elements ignored. */
    const char *s = "{\"NULL\",NULL,\"\",a\\,b, nUlL ,  x y  ,\"q\\\"uo\\\\te\",\"{a,b}\","
                    "\" sp \",\\ lead,trail\\ }";
    pgw_value_t v = text_val(s, PGW_OID_TEXT_ARRAY);
    pgw_array_t a;
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.nelems, 11);
    char scratch[256];
    pgw_array_iter_t it;
    pgw_array_iter_init(&it, &a, scratch, sizeof scratch);
    expect_next_text(&it, "NULL");
    expect_next_text(&it, NULL);
    expect_next_text(&it, "");
    expect_next_text(&it, "a,b");
    expect_next_text(&it, NULL);
    expect_next_text(&it, "x y");
    expect_next_text(&it, "q\"uo\\te");
    expect_next_text(&it, "{a,b}");
    expect_next_text(&it, " sp ");
    expect_next_text(&it, " lead");
    expect_next_text(&it, "trail ");
    pgw_value_t e;
    assert_int_equal(pgw_array_next(&it, &e), 0);
}

static void test_text_zero_copy_and_scratch(void **state)
{
    (void)state;
    const char *s = "{plain,\"quoted\",\"esc\\\"aped\",\"two\\\\\"}";
    pgw_value_t v = text_val(s, PGW_OID_TEXT_ARRAY);
    pgw_array_t a;
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    pgw_array_iter_t it;
    pgw_value_t e1, e2, e3, e4;
    pgw_array_iter_init(&it, &a, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &e1), 1);
    assert_ptr_equal(e1.p, (const uint8_t *)s + 1); /* a view into the input */
    assert_int_equal(pgw_array_next(&it, &e2), 1);
    assert_ptr_equal(e2.p, (const uint8_t *)s + 8);
    /* Needs unescaping and there is no scratch: ERANGE with the size, and
     * the iterator has not moved. */
    assert_int_equal(pgw_array_next(&it, &e3), PGW_ERANGE);
    assert_int_equal(it.need, 8);
    char small[8], big[64];
    pgw_array_iter_set_scratch(&it, small, sizeof small);
    assert_int_equal(pgw_array_next(&it, &e3), 1);
    assert_int_equal(e3.len, 8);
    assert_memory_equal(e3.p, "esc\"aped", 8);
    assert_ptr_equal(e3.p, (const uint8_t *)small);
    assert_int_equal(pgw_array_next(&it, &e4), PGW_ERANGE);
    assert_int_equal(it.need, 4);
    pgw_array_iter_set_scratch(&it, big, sizeof big);
    assert_int_equal(pgw_array_next(&it, &e4), 1);
    assert_memory_equal(e4.p, "two\\", 4);
    assert_memory_equal(e3.p, "esc\"aped", 8); /* earlier view still intact */

    /* A scratch of the value's length always suffices, all views together. */
    const char *t = "{\"\\a\\b\",\"\\c\",d\\e}";
    pgw_value_t tv = text_val(t, PGW_OID_TEXT_ARRAY);
    assert_int_equal(pgw_array_parse(&tv, &a), 0);
    char *sc = malloc(strlen(t));
    pgw_value_t x[3];
    pgw_array_iter_init(&it, &a, sc, strlen(t));
    for (int i = 0; i < 3; i++)
        assert_int_equal(pgw_array_next(&it, &x[i]), 1);
    assert_memory_equal(x[0].p, "ab", 2);
    assert_memory_equal(x[1].p, "c", 1);
    assert_memory_equal(x[2].p, "de", 2);
    free(sc);
}

static void test_text_dims(void **state)
{
    (void)state;
    pgw_array_t a;
    pgw_value_t v = text_val("[0:2]={1,2,3}", PGW_OID_INT4_ARRAY);
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.ndim, 1);
    assert_int_equal(a.lbounds[0], 0);
    assert_int_equal(a.dims[0], 3);

    v = text_val("{{1,2},{3,4},{5,6}}", PGW_OID_INT4_ARRAY);
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.ndim, 2);
    assert_int_equal(a.dims[0], 3);
    assert_int_equal(a.dims[1], 2);
    assert_int_equal(a.nelems, 6);
    int32_t out[6];
    size_t n;
    assert_int_equal(pgw_array_get_int4(&v, out, 6, &n, NULL), 0);
    for (int i = 0; i < 6; i++)
        assert_int_equal(out[i], i + 1);

    v = text_val(" [1:1][-3:-2] = { { 7 , 8 } } ", PGW_OID_INT4_ARRAY);
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.ndim, 2);
    assert_int_equal(a.lbounds[1], -3);
    assert_int_equal(a.dims[1], 2);

    v = text_val("{{{{{{1}}}}}}", 0);
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.ndim, 6);
    assert_int_equal(a.elem_oid, 0);

    v = text_val("{}", PGW_OID_INT4_ARRAY);
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.ndim, 0);
    assert_int_equal(a.nelems, 0);
    v = text_val("  { }  ", PGW_OID_INT4_ARRAY);
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.nelems, 0);
}

static void test_text_malformed(void **state)
{
    (void)state;
    static const char *bad[] = {
        "",
        "1,2",
        "{1,2",
        "{1,2}}",
        "{{1,2},{3}}",     /* ragged */
        "{{1,2},3}",       /* mixed depth */
        "{1,{2}}",         /* mixed depth */
        "{1,,2}",          /* empty element */
        "{1,}",            /* trailing comma */
        "{,1}",            /* leading comma */
        "{{}}",            /* inner empty */
        "{\"abc}",         /* unterminated quote */
        "{abc\\}",         /* backslash escapes the brace: unbalanced */
        "{a\\",            /* dangling backslash */
        "{a\"b}",          /* quote inside unquoted element */
        "{\"a\"b}",        /* junk after quoted element */
        "{1} x",           /* trailing junk */
        "{{{{{{{1}}}}}}}", /* 7 dimensions */
        "[1:2]={1,2,3}",   /* prefix does not match */
        "[1:3]={{1,2,3}}", /* prefix ndim does not match */
        "[2:1]={}",        /* ub < lb */
        "[1:2]{1,2}",      /* missing = */
        "[a:2]={1,2}",
        "[1:99999999999]={1}",
        "[1:3={1,2,3}",
    };
    for (size_t i = 0; i < PGW__ARRAY_LEN(bad); i++) {
        pgw_value_t v = text_val(bad[i], PGW_OID_TEXT_ARRAY);
        pgw_array_t a;
        int rc = pgw_array_parse(&v, &a);
        if (rc != PGW_EFORMAT) fail_msg("accepted %s (rc %d)", bad[i], rc);
    }
    pgw_value_t v = text_val("{1}", 0);
    v.format = 7;
    pgw_array_t a;
    assert_int_equal(pgw_array_parse(&v, &a), PGW_EINVAL);
}

/* ---- encoder ------------------------------------------------------------ */

static void test_encode_int4(void **state)
{
    (void)state;
    int32_t vals[] = {-1, 2, 0x7fffffff};
    bool nulls[] = {false, true, false};
    pgw_array_enc_t ctx;
    pgw_array_enc_init(&ctx, PGW_OID_INT4, vals, 3, nulls);
    pgw_param_t p = pgw_array_param(&ctx);
    assert_int_equal(p.kind, PGW_PARAM_ENCODER);
    assert_int_equal(p.oid, PGW_OID_INT4_ARRAY);
    assert_int_equal(p.format, PGW_FORMAT_BINARY);
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_buf_append(&b, "xx", 2), 0);
    assert_int_equal(p.u.enc.fn(p.u.enc.ctx, &b), 0);
    static const uint8_t want[] = {0,    0,    0, 1, 0,    0,    0,    1,    0,    0,
                                   0,    23,   0, 0, 0,    3,    0,    0,    0,    1,
                                   0,    0,    0, 4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0, 0, 0,    4,    0x7f, 0xff, 0xff, 0xff};
    assert_int_equal(b.len, 2 + sizeof want);
    assert_memory_equal(b.data + 2, want, sizeof want);
    /* And it decodes back. */
    pgw_value_t v = {b.data + 2, (int32_t)sizeof want, PGW_FORMAT_BINARY, PGW_OID_INT4_ARRAY};
    int32_t out[3];
    bool on[3];
    size_t n;
    assert_int_equal(pgw_array_get_int4(&v, out, 3, &n, on), 0);
    assert_int_equal(out[0], -1);
    assert_true(on[1]);
    assert_int_equal(out[2], 0x7fffffff);
    pgw_buf_free(&b);
}

static void test_encode_shapes_and_kinds(void **state)
{
    (void)state;
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    /* 2x2 with lower bounds 0 and 5. */
    int64_t v8[] = {1, 2, 3, 4};
    pgw_array_enc_t ctx;
    pgw_array_enc_init(&ctx, PGW_OID_INT8, v8, 4, NULL);
    ctx.ndim = 2;
    ctx.dims[0] = ctx.dims[1] = 2;
    ctx.lbounds[0] = 0;
    ctx.lbounds[1] = 5;
    assert_int_equal(pgw_encode_array(&ctx, &b), 0);
    pgw_value_t v = {b.data, (int32_t)b.len, PGW_FORMAT_BINARY, PGW_OID_INT8_ARRAY};
    pgw_array_t a;
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.ndim, 2);
    assert_int_equal(a.lbounds[1], 5);
    int64_t o8[4];
    size_t n;
    assert_int_equal(pgw_array_get_int8(&v, o8, 4, &n, NULL), 0);
    assert_true(o8[3] == 4);
    /* Shape mismatch, too many dims, missing elems: EINVAL, buffer kept. */
    pgw_buf_reset(&b);
    ctx.dims[1] = 3;
    assert_int_equal(pgw_encode_array(&ctx, &b), PGW_EINVAL);
    ctx.ndim = 7;
    assert_int_equal(pgw_encode_array(&ctx, &b), PGW_EINVAL);
    pgw_array_enc_init(&ctx, PGW_OID_INT4, NULL, 2, NULL);
    assert_int_equal(pgw_encode_array(&ctx, &b), PGW_EINVAL);
    assert_int_equal(b.len, 0);

    /* Empty array. */
    pgw_array_enc_init(&ctx, PGW_OID_TEXT, NULL, 0, NULL);
    assert_int_equal(pgw_encode_array(&ctx, &b), 0);
    static const uint8_t empty[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25};
    assert_int_equal(b.len, sizeof empty);
    assert_memory_equal(b.data, empty, sizeof empty);

    /* Text with NULL pointers and explicit lengths. */
    pgw_buf_reset(&b);
    const char *txt[] = {"a,b", NULL, "xyz"};
    int32_t lens[] = {3, 0, 2};
    pgw_array_enc_init(&ctx, PGW_OID_TEXT, txt, 3, NULL);
    ctx.lens = lens;
    assert_int_equal(pgw_encode_array(&ctx, &b), 0);
    v = (pgw_value_t){b.data, (int32_t)b.len, PGW_FORMAT_BINARY, PGW_OID_TEXT_ARRAY};
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_true(a.has_nulls);
    pgw_array_iter_t it;
    pgw_value_t e;
    pgw_array_iter_init(&it, &a, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal(e.len, 3);
    assert_memory_equal(e.p, "a,b", 3);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal(e.len, -1);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal(e.len, 2);
    assert_int_equal(pgw_array_next(&it, &e), 0);

    /* uuid, bool, float4 and pre-encoded views. */
    pgw_buf_reset(&b);
    uint8_t uu[2][16];
    for (int i = 0; i < 16; i++)
        uu[0][i] = (uint8_t)i, uu[1][i] = (uint8_t)(255 - i);
    pgw_array_enc_init(&ctx, PGW_OID_UUID, uu, 2, NULL);
    assert_int_equal(pgw_encode_array(&ctx, &b), 0);
    assert_int_equal(b.len, 20 + 2 * 20);
    assert_memory_equal(b.data + 24, uu[0], 16);
    assert_memory_equal(b.data + 44, uu[1], 16);
    pgw_buf_reset(&b);
    pgw_view_t views[] = {{(const uint8_t *)"\x00\x01", 2}, {NULL, -1}};
    pgw_array_enc_init(&ctx, PGW_OID_NUMERIC, views, 2, NULL);
    assert_int_equal(pgw_array_param(&ctx).oid, PGW_OID_NUMERIC_ARRAY);
    assert_int_equal(pgw_encode_array(&ctx, &b), 0);
    assert_int_equal(pgw__get32(b.data + 4), 1); /* has-null flag */
    assert_int_equal(pgw__get32(b.data + 20), 2);
    assert_int_equal(pgw__get32(b.data + 26), UINT32_MAX);
    pgw_buf_reset(&b);
    const char *js[] = {"{}"};
    pgw_array_enc_init(&ctx, PGW_OID_JSONB, js, 1, NULL);
    assert_int_equal(pgw_encode_array(&ctx, &b), 0);
    assert_int_equal(pgw__get32(b.data + 20), 3);
    assert_memory_equal(b.data + 24, "\1{}", 3);
    pgw_buf_free(&b);

    /* Buffer limit: ETOOBIG and the buffer unchanged. */
    pgw_buf_init(&b, NULL);
    b.max = 30;
    int32_t many[10] = {0};
    pgw_array_enc_init(&ctx, PGW_OID_INT4, many, 10, NULL);
    assert_int_equal(pgw_encode_array(&ctx, &b), PGW_ETOOBIG);
    assert_int_equal(b.len, 0);
    pgw_buf_free(&b);
}

static void test_oid_tables(void **state)
{
    (void)state;
    assert_int_equal(pgw_array_elem_oid(PGW_OID_INT4_ARRAY), PGW_OID_INT4);
    assert_int_equal(pgw_array_elem_oid(PGW_OID_JSON_ARRAY), PGW_OID_JSON);
    assert_int_equal(pgw_array_elem_oid(PGW_OID_INT4), 0);
    assert_int_equal(pgw_array_oid_for(PGW_OID_UUID), PGW_OID_UUID_ARRAY);
    assert_int_equal(pgw_array_oid_for(PGW_OID_INT4RANGE), 3905);
    assert_int_equal(pgw_array_oid_for(123456), 0);
}

/* The bench shape: int4[50000] decoded straight from the wire. */
static void test_large_int4(void **state)
{
    (void)state;
    enum { N = 50000 };
    int32_t *vals = malloc(N * sizeof *vals), *out = malloc(N * sizeof *out);
    for (int i = 0; i < N; i++)
        vals[i] = (i & 1) ? -(int32_t)(i * 40000u % 2000000000u) : (int32_t)(i * 42949u);
    pgw_array_enc_t ctx;
    pgw_array_enc_init(&ctx, PGW_OID_INT4, vals, N, NULL);
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_encode_array(&ctx, &b), 0);
    assert_int_equal(b.len, 20 + (size_t)N * 8);
    pgw_value_t v = {b.data, (int32_t)b.len, PGW_FORMAT_BINARY, PGW_OID_INT4_ARRAY};
    size_t n;
    for (int rep = 0; rep < 10; rep++)
        assert_int_equal(pgw_array_get_int4(&v, out, N, &n, NULL), 0);
    assert_int_equal(n, N);
    assert_memory_equal(out, vals, N * sizeof *vals);
    pgw_buf_free(&b);
    free(vals);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary_basic),
        cmocka_unit_test(test_binary_multidim_lbound),
        cmocka_unit_test(test_binary_empty),
        cmocka_unit_test(test_binary_malformed),
        cmocka_unit_test(test_binary_fixed_types),
        cmocka_unit_test(test_text_basic),
        cmocka_unit_test(test_text_quoting),
        cmocka_unit_test(test_text_zero_copy_and_scratch),
        cmocka_unit_test(test_text_dims),
        cmocka_unit_test(test_text_malformed),
        cmocka_unit_test(test_encode_int4),
        cmocka_unit_test(test_encode_shapes_and_kinds),
        cmocka_unit_test(test_oid_tables),
        cmocka_unit_test(test_large_int4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
