/*
 * Container types against the real server: arrays, ranges, multiranges and
 * records selected in text and in binary must decode to identical values
 * (element by element, through the scalar getters); array, range and record
 * parameters encoded here must round-trip through the server; the binary,
 * text and CSV COPY encoders must load rows the server reads back, and the
 * binary COPY bytes must equal what the server itself produces for COPY TO;
 * the escaping helpers must produce SQL the server reads back unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "golden_values.h"
#include "pgraw.h"
#include "pgtest.h"
#include "pgwire/proto.h"
#include "pgwire/types_container.h"

static pgt_raw_t *db;

static int setup(void **state)
{
    (void)state;
    pgt_require_server();
    db = pgt_raw_connect();
    pgt_raw_exec_ok(db, "SET TimeZone = 'UTC'");
    pgt_raw_exec_ok(db, "SET DateStyle = 'ISO'");
    pgt_raw_exec_ok(db, "SET extra_float_digits = 3");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgt_raw_close(db);
    return 0;
}

/* The single cell of sql in format fmt, as a value (rows kept by caller). */
static pgw_value_t select_one(const char *sql, int fmt, pgt_rows_t *rows)
{
    if (pgt_raw_query0(db, sql, fmt, rows) != 0) fail_msg("%s: %s", sql, rows->message);
    assert_int_equal(rows->nrows, 1);
    assert_int_equal(rows->ncols, 1);
    pgw_view_t c = pgt_rows_cell(rows, 0, 0);
    pgw_value_t v = {c.p, c.len, (int16_t)fmt, rows->col_oids[0]};
    return v;
}

/* ---- scalar comparison -------------------------------------------------- */

static void same_bytes(const void *a, size_t na, const void *b, size_t nb, uint32_t oid)
{
    if (na != nb || memcmp(a, b, na) != 0)
        fail_msg("oid %u: text '%.*s' != binary '%.*s'", oid, (int)na, (const char *)a, (int)nb,
                 (const char *)b);
}

/* Decode t (text) and b (binary) with the getter for oid and compare. */
static void same_scalar(const pgw_value_t *t, const pgw_value_t *b, uint32_t oid)
{
    if (t->len < 0 || b->len < 0) {
        if (t->len != b->len) fail_msg("oid %u: NULL in one format only", oid);
        return;
    }
    pgw_value_t tv = *t, bv = *b;
    tv.oid = bv.oid = oid;
    switch (oid) {
    case PGW_OID_INT2:
    case PGW_OID_INT4:
    case PGW_OID_INT8: {
        int64_t x, y;
        assert_int_equal(pgw_get_int8(&tv, &x), 0);
        assert_int_equal(pgw_get_int8(&bv, &y), 0);
        assert_true(x == y);
        break;
    }
    case PGW_OID_FLOAT4:
    case PGW_OID_FLOAT8: {
        double x, y;
        assert_int_equal(pgw_get_float8(&tv, &x), 0);
        assert_int_equal(pgw_get_float8(&bv, &y), 0);
        assert_true(memcmp(&x, &y, sizeof x) == 0 || (x != x && y != y));
        break;
    }
    case PGW_OID_BOOL: {
        bool x, y;
        assert_int_equal(pgw_get_bool(&tv, &x), 0);
        assert_int_equal(pgw_get_bool(&bv, &y), 0);
        assert_true(x == y);
        break;
    }
    case PGW_OID_TEXT:
    case PGW_OID_VARCHAR: {
        pgw_str_t x, y;
        assert_int_equal(pgw_get_text(&tv, &x), 0);
        assert_int_equal(pgw_get_text(&bv, &y), 0);
        same_bytes(x.p, x.len, y.p, y.len, oid);
        break;
    }
    case PGW_OID_NUMERIC: {
        char x[128], y[128];
        size_t nx, ny;
        assert_int_equal(pgw_get_numeric_str(&tv, x, sizeof x, &nx), 0);
        assert_int_equal(pgw_get_numeric_str(&bv, y, sizeof y, &ny), 0);
        assert_string_equal(x, y);
        break;
    }
    case PGW_OID_DATE: {
        int32_t x, y;
        assert_int_equal(pgw_get_date(&tv, &x), 0);
        assert_int_equal(pgw_get_date(&bv, &y), 0);
        assert_int_equal(x, y);
        break;
    }
    case PGW_OID_TIMESTAMP:
    case PGW_OID_TIMESTAMPTZ: {
        int64_t x, y;
        int (*get)(const pgw_value_t *, int64_t *) =
            oid == PGW_OID_TIMESTAMP ? pgw_get_timestamp : pgw_get_timestamptz;
        assert_int_equal(get(&tv, &x), 0);
        assert_int_equal(get(&bv, &y), 0);
        assert_true(x == y);
        break;
    }
    case PGW_OID_UUID: {
        uint8_t x[16], y[16];
        assert_int_equal(pgw_get_uuid(&tv, x), 0);
        assert_int_equal(pgw_get_uuid(&bv, y), 0);
        assert_memory_equal(x, y, 16);
        break;
    }
    case PGW_OID_BYTEA: {
        uint8_t x[256], y[256];
        size_t nx, ny;
        assert_int_equal(pgw_get_bytea(&tv, x, sizeof x, &nx), 0);
        assert_int_equal(pgw_get_bytea(&bv, y, sizeof y, &ny), 0);
        same_bytes(x, nx, y, ny, oid);
        break;
    }
    default:
        fail_msg("no comparison for oid %u", oid);
    }
}

/* ---- arrays ------------------------------------------------------------- */

/* sql's single array value, in both formats, must hold the same elements;
 * returns the element count and checks the expected shape. */
static size_t same_array(const char *sql, int ndim, const int32_t *dims, const int32_t *lbs)
{
    pgt_rows_t tr, br;
    pgw_value_t tv = select_one(sql, 0, &tr), bv = select_one(sql, 1, &br);
    pgw_array_t ta, ba;
    if (pgw_array_parse(&tv, &ta) != 0) fail_msg("text parse of %s", sql);
    if (pgw_array_parse(&bv, &ba) != 0) fail_msg("binary parse of %s", sql);
    assert_int_equal(ta.ndim, ndim);
    assert_int_equal(ba.ndim, ndim);
    for (int i = 0; i < ndim; i++) {
        assert_int_equal(ta.dims[i], dims[i]);
        assert_int_equal(ba.dims[i], dims[i]);
        assert_int_equal(ta.lbounds[i], lbs[i]);
        assert_int_equal(ba.lbounds[i], lbs[i]);
    }
    assert_int_equal(ta.nelems, ba.nelems);
    assert_int_equal(ta.elem_oid, ba.elem_oid);
    assert_int_equal(ta.has_nulls, ba.has_nulls);
    char *scratch = malloc((size_t)tv.len + 1);
    pgw_array_iter_t ti, bi;
    pgw_array_iter_init(&ti, &ta, scratch, (size_t)tv.len);
    pgw_array_iter_init(&bi, &ba, NULL, 0);
    pgw_value_t te, be;
    size_t n = 0;
    for (;;) {
        int rt = pgw_array_next(&ti, &te), rb = pgw_array_next(&bi, &be);
        assert_int_equal(rt, rb);
        if (rt != 1) break;
        same_scalar(&te, &be, ba.elem_oid);
        n++;
    }
    assert_int_equal(n, ba.nelems);
    free(scratch);
    pgt_rows_free(&tr);
    pgt_rows_free(&br);
    return n;
}

typedef struct golden_array {
    const char *sql;
    int ndim;
    int32_t dims[PGW_ARRAY_MAXDIM], lbs[PGW_ARRAY_MAXDIM];
    size_t nelems;
} golden_array_t;

#define GOLDEN_ARRAY_ROW(sql, ndim, dims, lbs, n) {sql, ndim, dims, lbs, n},
static const golden_array_t golden_arrays[] = {GOLDEN_ARRAYS(GOLDEN_ARRAY_ROW)};

static void test_arrays_text_vs_binary(void **state)
{
    (void)state;
    for (size_t i = 0; i < (sizeof golden_arrays / sizeof golden_arrays[0]); i++) {
        const golden_array_t *a = &golden_arrays[i];
        assert_int_equal(same_array(a->sql, a->ndim, a->dims, a->lbs), a->nelems);
    }
}

/* The bench shape: 10 rows of int4[50000], half negative, from the wire. */
static void test_large_int4_array(void **state)
{
    (void)state;
    pgt_rows_t rows;
    const char *sql = "SELECT array_agg(CASE WHEN i % 2 = 0 THEN -i * 40000 ELSE i * 40000 END "
                      "ORDER BY i) FROM generate_series(1, 50000) i, generate_series(1, 10) r "
                      "GROUP BY r";
    assert_int_equal(pgt_raw_query0(db, sql, 1, &rows), 0);
    assert_int_equal(rows.nrows, 10);
    int32_t *out = malloc(50000 * sizeof *out);
    for (size_t r = 0; r < rows.nrows; r++) {
        pgw_view_t c = pgt_rows_cell(&rows, r, 0);
        pgw_value_t v = {c.p, c.len, PGW_FORMAT_BINARY, rows.col_oids[0]};
        size_t n;
        assert_int_equal(pgw_array_get_int4(&v, out, 50000, &n, NULL), 0);
        assert_int_equal(n, 50000);
        for (int i = 1; i <= 50000; i++)
            if (out[i - 1] != (i % 2 == 0 ? -i * 40000 : i * 40000)) fail_msg("element %d", i);
    }
    free(out);
    pgt_rows_free(&rows);
}

/* Query sql with one binary parameter p (encoded here), result in fmt. */
static void query_param(const char *sql, const pgw_param_t *p, int fmt, pgt_rows_t *rows)
{
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(p->u.enc.fn(p->u.enc.ctx, &b), 0);
    pgw_view_t v = {b.data, (int32_t)b.len};
    int16_t f = 1;
    uint32_t oid = p->oid;
    if (pgt_raw_query(db, sql, 1, &oid, &v, &f, fmt, rows) != 0)
        fail_msg("%s: %s", sql, rows->message);
    pgw_buf_free(&b);
}

static void expect_text_result(const char *sql, const pgw_param_t *p, const char *want)
{
    pgt_rows_t rows;
    query_param(sql, p, 0, &rows);
    pgw_view_t c = pgt_rows_cell(&rows, 0, 0);
    char got[512];
    pgt_view_cstr(c, got, sizeof got);
    if (strcmp(got, want) != 0) fail_msg("%s: got %s want %s", sql, got, want);
    pgt_rows_free(&rows);
}

static void test_array_params_roundtrip(void **state)
{
    (void)state;
    int32_t v4[] = {1, -2, 2147483647, 0};
    bool nulls[] = {false, false, false, true};
    pgw_array_enc_t c;
    pgw_array_enc_init(&c, PGW_OID_INT4, v4, 4, nulls);
    c.ndim = 2;
    c.dims[0] = c.dims[1] = 2;
    c.lbounds[0] = 0;
    c.lbounds[1] = 3;
    pgw_param_t p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p, "[0:1][3:4]={{1,-2},{2147483647,NULL}}");
    pgt_rows_t rows;
    query_param("SELECT $1", &p, 1, &rows);
    pgw_view_t cell = pgt_rows_cell(&rows, 0, 0);
    pgw_value_t v = {cell.p, cell.len, 1, rows.col_oids[0]};
    int32_t out[4];
    bool on[4];
    size_t n;
    assert_int_equal(pgw_array_get_int4(&v, out, 4, &n, on), 0);
    assert_memory_equal(out, v4, 3 * sizeof *out);
    assert_true(on[3]);
    pgt_rows_free(&rows);

    const char *txt[] = {"a\"b", "c\\d", NULL, "", "{x,y}", "NULL"};
    pgw_array_enc_init(&c, PGW_OID_TEXT, txt, 6, NULL);
    p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p,
                       "{\"a\\\"b\",\"c\\\\d\",NULL,\"\",\"{x,y}\",\"NULL\"}");
    expect_text_result("SELECT $1[6] || '|' || $1[5]", &p, "NULL|{x,y}");

    double f8[] = {1.5, -0.25};
    pgw_array_enc_init(&c, PGW_OID_FLOAT8, f8, 2, NULL);
    p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p, "{1.5,-0.25}");
    int16_t i2[] = {-32768, 7};
    pgw_array_enc_init(&c, PGW_OID_INT2, i2, 2, NULL);
    p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p, "{-32768,7}");
    int64_t i8[] = {INT64_MIN};
    pgw_array_enc_init(&c, PGW_OID_INT8, i8, 1, NULL);
    p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p, "{-9223372036854775808}");
    bool bo[] = {true, false};
    pgw_array_enc_init(&c, PGW_OID_BOOL, bo, 2, NULL);
    p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p, "{t,f}");
    float f4[] = {0.5f};
    pgw_array_enc_init(&c, PGW_OID_FLOAT4, f4, 1, NULL);
    p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p, "{0.5}");
    uint8_t uu[1][16] = {{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9,
                          0xbd, 0x38, 0x0a, 0x11}};
    pgw_array_enc_init(&c, PGW_OID_UUID, uu, 1, NULL);
    p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p, "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}");
    int64_t ts[] = {0};
    pgw_array_enc_init(&c, PGW_OID_TIMESTAMPTZ, ts, 1, NULL);
    p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p, "{\"2000-01-01 00:00:00+00\"}");
    int32_t dt[] = {-1};
    pgw_array_enc_init(&c, PGW_OID_DATE, dt, 1, NULL);
    p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p, "{1999-12-31}");
    const char *js[] = {"{\"a\": 1}"};
    pgw_array_enc_init(&c, PGW_OID_JSONB, js, 1, NULL);
    p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p, "{\"{\\\"a\\\": 1}\"}");
    pgw_array_enc_init(&c, PGW_OID_INT4, NULL, 0, NULL);
    p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p, "{}");
    /* A numeric element already in binary form (the value 1). */
    static const uint8_t num1[] = {0, 1, 0, 0, 0, 0, 0, 0, 0, 1};
    pgw_view_t nv[] = {{num1, sizeof num1}, {NULL, -1}};
    pgw_array_enc_init(&c, PGW_OID_NUMERIC, nv, 2, NULL);
    p = pgw_array_param(&c);
    expect_text_result("SELECT $1::text", &p, "{1,NULL}");
}

/* ---- ranges ------------------------------------------------------------- */

static void same_range_values(const pgw_range_t *t, const pgw_range_t *b, uint32_t elem)
{
    assert_int_equal(t->flags, b->flags);
    same_scalar(&t->lower, &b->lower, elem);
    same_scalar(&t->upper, &b->upper, elem);
}

static void same_range(const char *sql, uint8_t flags)
{
    pgt_rows_t tr, br;
    pgw_value_t tv = select_one(sql, 0, &tr), bv = select_one(sql, 1, &br);
    pgw_range_t t, b;
    char scratch[256];
    if (pgw_range_parse(&tv, &t, scratch, sizeof scratch) != 0) fail_msg("text %s", sql);
    if (pgw_range_parse(&bv, &b, NULL, 0) != 0) fail_msg("binary %s", sql);
    if (b.flags != flags) fail_msg("%s: flags %#x want %#x", sql, b.flags, flags);
    same_range_values(&t, &b, pgw_range_elem_oid(bv.oid));
    pgt_rows_free(&tr);
    pgt_rows_free(&br);
}

typedef struct golden_range {
    const char *sql;
    uint8_t flags;
} golden_range_t;

#define GOLDEN_RANGE_ROW(sql, flags) {sql, flags},
static const golden_range_t golden_ranges[] = {GOLDEN_RANGES(GOLDEN_RANGE_ROW)};

static void test_ranges_text_vs_binary(void **state)
{
    (void)state;
    for (size_t i = 0; i < (sizeof golden_ranges / sizeof golden_ranges[0]); i++)
        same_range(golden_ranges[i].sql, golden_ranges[i].flags);
}

static void same_multirange(const char *sql, size_t count)
{
    pgt_rows_t tr, br;
    pgw_value_t tv = select_one(sql, 0, &tr), bv = select_one(sql, 1, &br);
    pgw_multirange_t t, b;
    if (pgw_multirange_parse(&tv, &t) != 0) fail_msg("text %s", sql);
    if (pgw_multirange_parse(&bv, &b) != 0) fail_msg("binary %s", sql);
    assert_int_equal(t.count, count);
    assert_int_equal(b.count, count);
    char scratch[512];
    pgw_multirange_iter_t ti, bi;
    pgw_multirange_iter_init(&ti, &t, scratch, sizeof scratch);
    pgw_multirange_iter_init(&bi, &b, NULL, 0);
    pgw_range_t tr1, br1;
    uint32_t elem = pgw_range_elem_oid(b.range_oid);
    assert_true(elem != 0);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(pgw_multirange_next(&ti, &tr1), 1);
        assert_int_equal(pgw_multirange_next(&bi, &br1), 1);
        same_range_values(&tr1, &br1, elem);
    }
    assert_int_equal(pgw_multirange_next(&ti, &tr1), 0);
    assert_int_equal(pgw_multirange_next(&bi, &br1), 0);
    pgt_rows_free(&tr);
    pgt_rows_free(&br);
}

typedef struct golden_count {
    const char *sql;
    size_t n; /* ranges of a multirange, fields of a record */
} golden_count_t;

#define GOLDEN_COUNT_ROW(sql, n) {sql, n},
static const golden_count_t golden_multiranges[] = {GOLDEN_MULTIRANGES(GOLDEN_COUNT_ROW)};
static const golden_count_t golden_records[] = {GOLDEN_RECORDS(GOLDEN_COUNT_ROW)};

static void test_multiranges_text_vs_binary(void **state)
{
    (void)state;
    for (size_t i = 0; i < (sizeof golden_multiranges / sizeof golden_multiranges[0]); i++)
        same_multirange(golden_multiranges[i].sql, golden_multiranges[i].n);
}

static void test_range_params_roundtrip(void **state)
{
    (void)state;
    pgw_range_enc_t r = {PGW_OID_INT4RANGE, PGW_RANGE_LB_INC | PGW_RANGE_UB_INC, pgw_int4(1),
                         pgw_int4(10)};
    pgw_param_t p = pgw_range_param(&r);
    expect_text_result("SELECT $1::text", &p, "[1,11)");
    r.flags = PGW_RANGE_EMPTY;
    expect_text_result("SELECT $1::text", &p, "empty");
    pgw_range_enc_t r8 = {PGW_OID_INT8RANGE, PGW_RANGE_LB_INF, pgw_null(0), pgw_int8(5)};
    p = pgw_range_param(&r8);
    expect_text_result("SELECT $1::text", &p, "(,5)");
    pgw_range_enc_t rt = {PGW_OID_TSTZRANGE, PGW_RANGE_LB_INC | PGW_RANGE_UB_INF,
                          pgw_int8(86400000000LL), pgw_null(0)};
    p = pgw_range_param(&rt);
    expect_text_result("SELECT $1::text", &p, "[\"2000-01-02 00:00:00+00\",)");
    pgw_range_enc_t rd = {PGW_OID_DATERANGE, PGW_RANGE_LB_INC, pgw_int4(0), pgw_int4(31)};
    p = pgw_range_param(&rd);
    expect_text_result("SELECT $1::text", &p, "[2000-01-01,2000-02-01)");
    static const uint8_t num15[] = {0, 2, 0, 0, 0, 0, 0, 1, 0, 1, 0x13, 0x88}; /* 1.5 */
    pgw_range_enc_t rn = {PGW_OID_NUMRANGE, PGW_RANGE_LB_INC,
                          pgw_raw(PGW_OID_NUMERIC, PGW_FORMAT_BINARY, num15, sizeof num15),
                          pgw_raw(PGW_OID_NUMERIC, PGW_FORMAT_BINARY, num15, sizeof num15)};
    p = pgw_range_param(&rn);
    expect_text_result("SELECT $1::text", &p, "empty"); /* [1.5,1.5) */
    rn.flags |= PGW_RANGE_UB_INC;
    expect_text_result("SELECT $1::text", &p, "[1.5,1.5]");

    pgw_range_enc_t rs[] = {
        {0, PGW_RANGE_LB_INC, pgw_int4(5), pgw_int4(7)},
        {0, PGW_RANGE_LB_INC, pgw_int4(1), pgw_int4(3)},
    };
    pgw_multirange_enc_t m = {PGW_OID_INT4MULTIRANGE, rs, 2};
    p = pgw_multirange_param(&m);
    expect_text_result("SELECT $1::text", &p, "{[1,3),[5,7)}");
    pgw_range_enc_t ts[] = {{0, PGW_RANGE_LB_INF | PGW_RANGE_UB_INF, pgw_null(0), pgw_null(0)}};
    pgw_multirange_enc_t mt = {PGW_OID_TSMULTIRANGE, ts, 1};
    p = pgw_multirange_param(&mt);
    expect_text_result("SELECT $1::text", &p, "{(,)}");
}

/* ---- records ------------------------------------------------------------ */

static void same_record(const char *sql, size_t nfields)
{
    pgt_rows_t tr, br;
    pgw_value_t tv = select_one(sql, 0, &tr), bv = select_one(sql, 1, &br);
    pgw_record_t t, b;
    if (pgw_record_parse(&tv, &t) != 0) fail_msg("text %s", sql);
    if (pgw_record_parse(&bv, &b) != 0) fail_msg("binary %s", sql);
    assert_int_equal(t.nfields, nfields);
    assert_int_equal(b.nfields, nfields);
    char scratch[512];
    pgw_record_iter_t ti, bi;
    pgw_record_iter_init(&ti, &t, scratch, sizeof scratch);
    pgw_record_iter_init(&bi, &b, NULL, 0);
    pgw_value_t tf, bf;
    for (size_t i = 0; i < nfields; i++) {
        assert_int_equal(pgw_record_next(&ti, &tf), 1);
        assert_int_equal(pgw_record_next(&bi, &bf), 1);
        if (bf.oid == PGW_OID_INT4_ARRAY) { /* nested: compare as arrays */
            pgw_array_t ta, ba;
            tf.oid = bf.oid;
            assert_int_equal(pgw_array_parse(&tf, &ta), 0);
            assert_int_equal(pgw_array_parse(&bf, &ba), 0);
            assert_int_equal(ta.nelems, ba.nelems);
            continue;
        }
        same_scalar(&tf, &bf, bf.oid);
    }
    assert_int_equal(pgw_record_next(&ti, &tf), 0);
    assert_int_equal(pgw_record_next(&bi, &bf), 0);
    pgt_rows_free(&tr);
    pgt_rows_free(&br);
}

static void test_records(void **state)
{
    (void)state;
    for (size_t i = 0; i < (sizeof golden_records / sizeof golden_records[0]); i++)
        same_record(golden_records[i].sql, golden_records[i].n);
    pgt_raw_exec_ok(db, "DROP TYPE IF EXISTS pgw_tc_pair");
    pgt_raw_exec_ok(db, "CREATE TYPE pgw_tc_pair AS (a int4, b text)");
    same_record("SELECT ROW(7, 'x y')::pgw_tc_pair", 2);
    /* A record parameter of the created type. */
    pgt_rows_t rows;
    assert_int_equal(pgt_raw_query0(db, "SELECT 'pgw_tc_pair'::regtype::oid", 0, &rows), 0);
    char oidtxt[16];
    pgt_view_cstr(pgt_rows_cell(&rows, 0, 0), oidtxt, sizeof oidtxt);
    pgt_rows_free(&rows);
    pgw_param_t fields[] = {pgw_int4(42), pgw_text("he said \"hi\"")};
    pgw_record_enc_t rc = {(uint32_t)strtoul(oidtxt, NULL, 10), fields, 2};
    pgw_param_t p = pgw_record_param(&rc);
    expect_text_result("SELECT $1::text", &p, "(42,\"he said \"\"hi\"\"\")");
    expect_text_result("SELECT ($1).b", &p, "he said \"hi\"");
    pgt_raw_exec_ok(db, "DROP TYPE pgw_tc_pair");

    /* Enums: nothing special. Their OIDs are not binary_ok, so they arrive
     * as text, which pgw_get_text reads; their binary form is the same
     * label bytes (raw value). */
    pgt_raw_exec_ok(db, "DROP TYPE IF EXISTS pgw_tc_mood");
    pgt_raw_exec_ok(db, "CREATE TYPE pgw_tc_mood AS ENUM ('sad', 'happy')");
    pgw_value_t ev = select_one("SELECT 'happy'::pgw_tc_mood", 0, &rows);
    assert_int_equal(pgw_type_binary_ok(ev.oid), 0);
    pgw_str_t s;
    assert_int_equal(pgw_get_text(&ev, &s), 0);
    assert_int_equal(s.len, 5);
    assert_memory_equal(s.p, "happy", 5);
    pgt_rows_free(&rows);
    ev = select_one("SELECT 'happy'::pgw_tc_mood", 1, &rows);
    assert_int_equal(ev.len, 5);
    assert_memory_equal(ev.p, "happy", 5);
    pgt_rows_free(&rows);
    pgt_raw_exec_ok(db, "DROP TYPE pgw_tc_mood");
}

/* ---- OID tables agree with pg_type --------------------------------------- */

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void test_oid_tables_match_catalog(void **state)
{
    (void)state;
    pgt_rows_t rows;
    assert_int_equal(pgt_raw_query0(db,
                                    "SELECT typelem, oid FROM pg_type WHERE typcategory = 'A' "
                                    "AND typelem <> 0 AND oid < 16384",
                                    1, &rows),
                     0);
    assert_true(rows.nrows > 50);
    size_t known = 0;
    for (size_t i = 0; i < rows.nrows; i++) {
        uint32_t elem = be32(pgt_rows_cell(&rows, i, 0).p);
        uint32_t arr = be32(pgt_rows_cell(&rows, i, 1).p);
        uint32_t mine = pgw_array_elem_oid(arr);
        if (mine == 0) continue; /* a type we do not know: fine */
        known++;
        if (mine != elem || pgw_array_oid_for(elem) != arr)
            fail_msg("array %u: catalog elem %u, ours %u", arr, elem, mine);
    }
    assert_true(known >= 70);
    pgt_rows_free(&rows);
    assert_int_equal(pgt_raw_query0(db,
                                    "SELECT rngtypid, rngsubtype, rngmultitypid FROM pg_range "
                                    "WHERE rngtypid < 16384",
                                    1, &rows),
                     0);
    assert_int_equal(rows.nrows, 6);
    for (size_t i = 0; i < rows.nrows; i++) {
        uint32_t r = be32(pgt_rows_cell(&rows, i, 0).p);
        uint32_t e = be32(pgt_rows_cell(&rows, i, 1).p);
        uint32_t m = be32(pgt_rows_cell(&rows, i, 2).p);
        assert_int_equal(pgw_range_elem_oid(r), e);
        assert_int_equal(pgw_multirange_range_oid(m), r);
    }
    pgt_rows_free(&rows);
}

/* Every row of the built-in type table against pg_type: name, array type,
 * fixed width (typlen) and array delimiter are the server's. */
typedef struct table_row {
    const char *name;
    uint32_t oid, array_oid;
    int width;
    char delim;
} table_row_t;

#define TABLE_ROW(name, typname, oid, array_oid, width, kind, text, binary, delim) \
    {typname, oid, array_oid, width, delim},
static const table_row_t table_rows[] = {PGW_BUILTIN_TYPES(TABLE_ROW, TABLE_ROW)};
#undef TABLE_ROW

static void test_type_table_matches_catalog(void **state)
{
    (void)state;
    pgt_rows_t rows;
    assert_int_equal(pgt_raw_query0(db,
                                    "SELECT oid, typname, typarray, typlen, typdelim FROM pg_type "
                                    "WHERE oid < 16384",
                                    1, &rows),
                     0);
    size_t found = 0;
    for (size_t i = 0; i < rows.nrows; i++) {
        uint32_t oid = be32(pgt_rows_cell(&rows, i, 0).p);
        pgw_view_t name = pgt_rows_cell(&rows, i, 1);
        uint32_t arr = be32(pgt_rows_cell(&rows, i, 2).p);
        pgw_view_t len = pgt_rows_cell(&rows, i, 3);
        int16_t typlen = (int16_t)(len.p[0] << 8 | len.p[1]);
        char delim = (char)pgt_rows_cell(&rows, i, 4).p[0];
        for (size_t k = 0; k < sizeof table_rows / sizeof table_rows[0]; k++) {
            const table_row_t *t = &table_rows[k];
            if (t->oid != oid) continue;
            found++;
            if (strlen(t->name) != (size_t)name.len || memcmp(t->name, name.p, (size_t)name.len))
                fail_msg("type %u: catalog name %.*s, ours %s", oid, (int)name.len,
                         (const char *)name.p, t->name);
            if (t->array_oid != arr)
                fail_msg("%s: catalog array %u, ours %u", t->name, arr, t->array_oid);
            if (t->width > 0 && t->width != typlen)
                fail_msg("%s: typlen %d, ours %d", t->name, typlen, t->width);
            if (t->delim != delim) fail_msg("%s: typdelim %c, ours %c", t->name, delim, t->delim);
        }
    }
    assert_int_equal(found, sizeof table_rows / sizeof table_rows[0]);
    pgt_rows_free(&rows);
}

/* ---- COPY --------------------------------------------------------------- */

/* Run COPY ... FROM STDIN sending data as one CopyData; expect "COPY rows". */
static void copy_in(const char *sql, const pgw_buf_t *data, uint64_t rows)
{
    pgw_msg_t m;
    assert_int_equal(pgw_enc_query(&db->out, sql, strlen(sql), 0), 0);
    pgt_raw_send(db);
    do
        pgt_raw_next(db, &m);
    while (m.type != PGW_B_COPY_IN && m.type != PGW_B_ERROR);
    assert_int_equal(m.type, PGW_B_COPY_IN);
    assert_int_equal(pgw_enc_copy_data(&db->out, data->data, data->len, 0), 0);
    assert_int_equal(pgw_enc_copy_done(&db->out), 0);
    pgt_raw_send(db);
    int completed = 0;
    for (;;) {
        pgt_raw_next(db, &m);
        if (m.type == PGW_B_ERROR) {
            pgw_error_fields_t ef;
            pgw_error_fields_parse(&m, &ef);
            fail_msg("COPY failed: %.*s", (int)ef.message.len, (const char *)ef.message.p);
        }
        if (m.type == PGW_B_COMMAND_COMPLETE) {
            assert_int_equal(m.u.command_complete.rows, rows);
            completed = 1;
        }
        if (m.type == PGW_B_READY) break;
    }
    assert_true(completed);
}

/* COPY ... TO STDOUT: all CopyData payloads concatenated into out. */
static void copy_out(const char *sql, pgw_buf_t *out)
{
    pgw_msg_t m;
    assert_int_equal(pgw_enc_query(&db->out, sql, strlen(sql), 0), 0);
    pgt_raw_send(db);
    for (;;) {
        pgt_raw_next(db, &m);
        assert_int_not_equal(m.type, PGW_B_ERROR);
        if (m.type == PGW_B_COPY_DATA)
            assert_int_equal(pgw_buf_append(out, m.u.data.p, (size_t)m.u.data.len), 0);
        if (m.type == PGW_B_READY) break;
    }
}

static void test_copy_binary(void **state)
{
    (void)state;
    pgt_raw_exec_ok(db, "CREATE TEMP TABLE pgw_tc_copy (a int4, b int8, c float8, d text, "
                        "e int4[], f bool, g int2, h tstzrange)");
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_copy_bin_begin(&b), 0);
    int32_t arr[] = {3, -4};
    pgw_array_enc_t ac;
    pgw_array_enc_init(&ac, PGW_OID_INT4, arr, 2, NULL);
    pgw_param_t ap = pgw_array_param(&ac);
    pgw_range_enc_t rc = {PGW_OID_TSTZRANGE, PGW_RANGE_LB_INC, pgw_int8(0), pgw_int8(1000000)};
    pgw_param_t rp = pgw_range_param(&rc);
    for (int row = 0; row < 2; row++) {
        assert_int_equal(pgw_copy_bin_row_begin(&b, 8), 0);
        assert_int_equal(pgw_copy_bin_int4(&b, row ? INT32_MIN : 1234567890), 0);
        assert_int_equal(pgw_copy_bin_int8(&b, row ? -1 : 1234567890123456789LL), 0);
        assert_int_equal(pgw_copy_bin_float8(&b, row ? -0.1 : 1.7976931348623157e308), 0);
        if (row)
            assert_int_equal(pgw_copy_bin_null(&b), 0);
        else
            assert_int_equal(pgw_copy_bin_text(&b, "t\xc3\xa9xt\t\\", 7), 0);
        assert_int_equal(pgw_copy_bin_field(&b, &ap), 0);
        assert_int_equal(pgw_copy_bin_bool(&b, row == 0), 0);
        assert_int_equal(pgw_copy_bin_int2(&b, (int16_t)(row ? -32768 : 5)), 0);
        assert_int_equal(pgw_copy_bin_field(&b, &rp), 0);
    }
    assert_int_equal(pgw_copy_bin_end(&b), 0);
    copy_in("COPY pgw_tc_copy FROM STDIN (FORMAT binary)", &b, 2);

    pgt_rows_t rows;
    assert_int_equal(pgt_raw_query0(db,
                                    "SELECT a, b, c, d, e, f, g, h FROM pgw_tc_copy ORDER BY g "
                                    "DESC",
                                    0, &rows),
                     0);
    assert_int_equal(rows.nrows, 2);
    const char *want[2][8] = {
        {"1234567890", "1234567890123456789", "1.7976931348623157e+308", "t\xc3\xa9xt\t\\",
         "{3,-4}", "t", "5", "[\"2000-01-01 00:00:00+00\",\"2000-01-01 00:00:01+00\")"},
        {"-2147483648", "-1", "-0.1", NULL, "{3,-4}", "f", "-32768",
         "[\"2000-01-01 00:00:00+00\",\"2000-01-01 00:00:01+00\")"},
    };
    for (size_t r = 0; r < 2; r++)
        for (int c = 0; c < 8; c++) {
            pgw_view_t cell = pgt_rows_cell(&rows, r, c);
            if (!want[r][c]) {
                assert_int_equal(cell.len, -1);
                continue;
            }
            char got[256];
            pgt_view_cstr(cell, got, sizeof got);
            if (strcmp(got, want[r][c]) != 0) fail_msg("row %zu col %d: %s", r, c, got);
        }
    pgt_rows_free(&rows);

    /* The server's own binary COPY of those rows is byte-identical to ours. */
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    copy_out("COPY (SELECT * FROM pgw_tc_copy ORDER BY g DESC) TO STDOUT (FORMAT binary)", &out);
    assert_int_equal(out.len, b.len);
    assert_memory_equal(out.data, b.data, b.len);
    pgw_buf_free(&out);
    pgw_buf_free(&b);
    pgt_raw_exec_ok(db, "DROP TABLE pgw_tc_copy");
}

static void test_copy_text_and_csv(void **state)
{
    (void)state;
    pgt_raw_exec_ok(db, "CREATE TEMP TABLE pgw_tc_text (i int4, j int8, x float8, s text)");
    static const char *strs[] = {"plain", "tab\there", "nl\nhere", "back\\slash", "cr\rhere",
                                 "\\N",   "",          "\\.",      "q\"u,o'te"};
    enum { NS = sizeof strs / sizeof strs[0] };
    for (int csv = 0; csv < 2; csv++) {
        pgt_raw_exec_ok(db, "TRUNCATE pgw_tc_text");
        pgw_buf_t b;
        pgw_buf_init(&b, NULL);
        for (int k = 0; k < NS; k++) {
            if (csv) {
                char num[64];
                snprintf(num, sizeof num, "%d", k);
                assert_int_equal(pgw_copy_csv_field(&b, num, strlen(num)), 0);
                assert_int_equal(pgw_copy_csv_null(&b), 0);
                assert_int_equal(pgw_copy_csv_field(&b, "0.1", 3), 0);
                assert_int_equal(pgw_copy_csv_field(&b, strs[k], strlen(strs[k])), 0);
                assert_int_equal(pgw_copy_csv_row_end(&b), 0);
            } else {
                assert_int_equal(pgw_copy_text_int4(&b, k), 0);
                assert_int_equal(pgw_copy_text_null(&b), 0);
                assert_int_equal(pgw_copy_text_float8(&b, 0.1), 0);
                assert_int_equal(pgw_copy_text_field(&b, strs[k], strlen(strs[k])), 0);
                assert_int_equal(pgw_copy_text_row_end(&b), 0);
            }
        }
        copy_in(csv ? "COPY pgw_tc_text FROM STDIN (FORMAT csv)" : "COPY pgw_tc_text FROM STDIN",
                &b, NS);
        pgw_buf_free(&b);
        pgt_rows_t rows;
        assert_int_equal(
            pgt_raw_query0(db, "SELECT i, j, x = 0.1, s FROM pgw_tc_text ORDER BY i", 0, &rows), 0);
        assert_int_equal(rows.nrows, NS);
        for (int k = 0; k < NS; k++) {
            assert_int_equal(pgt_rows_cell(&rows, (size_t)k, 1).len, -1);
            assert_true(pgt_cell_is_text(pgt_rows_cell(&rows, (size_t)k, 2), "t"));
            pgw_view_t s = pgt_rows_cell(&rows, (size_t)k, 3);
            if (s.len != (int32_t)strlen(strs[k]) || memcmp(s.p, strs[k], strlen(strs[k])) != 0)
                fail_msg("%s row %d: string differs", csv ? "csv" : "text", k);
        }
        pgt_rows_free(&rows);
    }
    pgt_raw_exec_ok(db, "DROP TABLE pgw_tc_text");
}

/* ---- escaping ----------------------------------------------------------- */

static void test_escape_roundtrip(void **state)
{
    (void)state;
    static const char *inputs[] = {"plain",   "it's",   "back\\slash",
                                   "both\\'", "\"dq\"", "h\xc3\xa9llo \xf0\x9f\x98\x80",
                                   "",        "--;"};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        const char *s = inputs[i];
        char *lit, *ident, sql[512];
        assert_int_equal(pgw_escape_literal(NULL, s, strlen(s), &lit), 0);
        assert_int_equal(pgw_escape_identifier(NULL, s, strlen(s), &ident), 0);
        if (s[0])
            snprintf(sql, sizeof sql, "SELECT %s AS %s", lit, ident);
        else
            snprintf(sql, sizeof sql, "SELECT %s", lit);
        pgt_rows_t rows;
        if (pgt_raw_query0(db, sql, 0, &rows) != 0) fail_msg("%s: %s", sql, rows.message);
        assert_true(pgt_cell_is_text(pgt_rows_cell(&rows, 0, 0), s));
        if (s[0]) assert_string_equal(rows.col_names[0], s);
        pgt_rows_free(&rows);
        pgw_escape_free(NULL, lit);
        pgw_escape_free(NULL, ident);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrays_text_vs_binary),
        cmocka_unit_test(test_large_int4_array),
        cmocka_unit_test(test_array_params_roundtrip),
        cmocka_unit_test(test_ranges_text_vs_binary),
        cmocka_unit_test(test_multiranges_text_vs_binary),
        cmocka_unit_test(test_range_params_roundtrip),
        cmocka_unit_test(test_records),
        cmocka_unit_test(test_oid_tables_match_catalog),
        cmocka_unit_test(test_type_table_matches_catalog),
        cmocka_unit_test(test_copy_binary),
        cmocka_unit_test(test_copy_text_and_csv),
        cmocka_unit_test(test_escape_roundtrip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
