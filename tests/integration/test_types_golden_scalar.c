/*
 * Golden test of the scalar types against the real server: every edge value
 * is selected in text and in binary and both decoders must agree; then the
 * value is encoded in binary, sent as a parameter ("SELECT $1::type") and
 * must come back unchanged.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include <math.h>

#include "golden_values.h"
#include "pgraw.h"
#include "pgtest.h"
#include "pgwire/types.h"
#include "types/types_internal.h"

typedef struct golden {
    const char *type; /* SQL type name */
    uint32_t oid;
    const char *literal; /* SQL expression of that type */
    const char *setup;   /* extra SET before the query, or NULL */
} golden_t;

#define GOLDEN_ROW(type, oid, literal, setup) {type, oid, literal, setup},
static const golden_t cases[] = {GOLDEN_SCALARS(GOLDEN_ROW)};

static pgt_raw_t *db;

static int setup(void **state)
{
    (void)state;
    pgt_require_server();
    db = pgt_raw_connect();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgt_raw_close(db);
    return 0;
}

static void reset_session(const golden_t *g)
{
    pgt_raw_exec_ok(db, "SET DateStyle = 'ISO'; SET IntervalStyle = 'postgres'; "
                        "SET TimeZone = 'UTC'; SET lc_monetary = 'C'; "
                        "SET extra_float_digits = 1; SET bytea_output = 'hex'");
    if (g->setup) pgt_raw_exec_ok(db, g->setup);
}

/* Select expr in format fmt into rows; returns the cell as a value. */
static pgw_value_t select_one(const golden_t *g, int fmt, pgt_rows_t *rows)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT (%s)::%s", g->literal, g->type);
    if (pgt_raw_query0(db, sql, fmt, rows) != 0) fail_msg("%s: %s", sql, rows->message);
    assert_int_equal(rows->nrows, 1);
    assert_int_equal(rows->col_oids[0], g->oid);
    pgw_view_t c = pgt_rows_cell(rows, 0, 0);
    pgw_value_t v = {c.p, c.len, (int16_t)fmt, g->oid};
    return v;
}

static int same_double(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Binary numeric as its decimal string (heap). */
static char *numeric_str(const pgw_numeric_t *n)
{
    size_t need;
    pgw_numeric_to_str(n, NULL, 0, &need);
    char *s = malloc(need);
    assert_int_equal(pgw_numeric_to_str(n, s, need, &need), 0);
    return s;
}

static uint8_t *bytea_text(pgw_str_t s, size_t *n)
{
    pgw__bytea_unescape(s.p, s.len, NULL, 0, n);
    uint8_t *buf = malloc(*n + 1);
    assert_int_equal(pgw__bytea_unescape(s.p, s.len, buf, *n, n), 0);
    return buf;
}

/* Text datum t and binary datum b hold the same value. */
static void assert_same(const golden_t *g, const pgw_datum_t *t, const pgw_datum_t *b)
{
    if (t->kind == PGW_DATUM_NUMERIC_TEXT) {
        assert_int_equal(b->kind, PGW_DATUM_NUMERIC);
        char *s = numeric_str(&b->u.num);
        assert_int_equal(strlen(s), t->u.str.len);
        assert_memory_equal(s, t->u.str.p, t->u.str.len);
        free(s);
        return;
    }
    if (t->kind == PGW_DATUM_BYTEA_TEXT) {
        assert_int_equal(b->kind, PGW_DATUM_BYTEA);
        size_t n;
        uint8_t *buf = bytea_text(t->u.str, &n);
        assert_int_equal(n, (size_t)b->u.bytes.len);
        if (n) assert_memory_equal(buf, b->u.bytes.p, n);
        free(buf);
        return;
    }
    if (t->kind != b->kind) fail_msg("%s %s: kinds %d/%d", g->type, g->literal, t->kind, b->kind);
    switch (t->kind) {
    case PGW_DATUM_BOOL:
        assert_int_equal(t->u.b, b->u.b);
        break;
    case PGW_DATUM_FLOAT4:
        assert_true(same_double(t->u.f4, b->u.f4));
        break;
    case PGW_DATUM_FLOAT8:
        if (!same_double(t->u.f8, b->u.f8))
            fail_msg("%s: %.17g != %.17g", g->literal, t->u.f8, b->u.f8);
        break;
    case PGW_DATUM_TEXT:
        assert_int_equal(t->u.str.len, b->u.str.len);
        assert_memory_equal(t->u.str.p, b->u.str.p, t->u.str.len);
        break;
    case PGW_DATUM_INET:
        assert_int_equal(t->u.inet.family, b->u.inet.family);
        assert_int_equal(t->u.inet.bits, b->u.inet.bits);
        assert_int_equal(t->u.inet.is_cidr, b->u.inet.is_cidr);
        assert_int_equal(t->u.inet.nb, b->u.inet.nb);
        assert_memory_equal(t->u.inet.addr, b->u.inet.addr, t->u.inet.nb);
        break;
    case PGW_DATUM_BYTEA:
        assert_int_equal(t->u.bytes.len, b->u.bytes.len);
        if (t->u.bytes.len) assert_memory_equal(t->u.bytes.p, b->u.bytes.p, t->u.bytes.len);
        break;
    case PGW_DATUM_NUMERIC: {
        char *s1 = numeric_str(&t->u.num), *s2 = numeric_str(&b->u.num);
        assert_string_equal(s1, s2);
        free(s1);
        free(s2);
        break;
    }
    case PGW_DATUM_UUID:
        assert_memory_equal(t->u.uuid, b->u.uuid, 16);
        break;
    case PGW_DATUM_MACADDR:
        assert_memory_equal(t->u.mac, b->u.mac, 6);
        break;
    case PGW_DATUM_MACADDR8:
        assert_memory_equal(t->u.mac, b->u.mac, 8);
        break;
    case PGW_DATUM_TIMETZ:
        assert_true(t->u.timetz.usec == b->u.timetz.usec);
        assert_int_equal(t->u.timetz.gmtoff, b->u.timetz.gmtoff);
        break;
    case PGW_DATUM_INTERVAL:
        assert_true(t->u.interval.usec == b->u.interval.usec);
        assert_int_equal(t->u.interval.days, b->u.interval.days);
        assert_int_equal(t->u.interval.months, b->u.interval.months);
        break;
    default: /* the integer-valued kinds */
        if (t->u.i != b->u.i)
            fail_msg("%s %s: text %lld binary %lld", g->type, g->literal, (long long)t->u.i,
                     (long long)b->u.i);
    }
}

/* The typed getters agree between formats too. */
static void assert_getters_agree(const golden_t *g, const pgw_value_t *tv, const pgw_value_t *bv)
{
    pgw_tm_t t1, t2;
    switch (g->oid) {
    case PGW_OID_TIMESTAMPTZ: {
        int r1 = pgw_get_tm(tv, &t1), r2 = pgw_get_tm(bv, &t2);
        assert_int_equal(r1, r2);
        if (r1 < 0) break;
        /* text shows local fields and offset; shifting back must give UTC */
        int64_t a, b;
        assert_int_equal(pgw_tm_to_timestamp(&t1, &a), 0);
        assert_int_equal(pgw_tm_to_timestamp(&t2, &b), 0);
        assert_true(a == b);
        break;
    }
    case PGW_OID_NUMERIC: {
        double d1 = 0, d2 = 0;
        int r1 = pgw_get_numeric_double(tv, &d1), r2 = pgw_get_numeric_double(bv, &d2);
        assert_int_equal(r1, r2);
        if (r1 == 0) assert_true(same_double(d1, d2));
        int64_t i1 = 0, i2 = 0;
        r1 = pgw_get_numeric_int64(tv, &i1), r2 = pgw_get_numeric_int64(bv, &i2);
        assert_int_equal(r1, r2);
        assert_true(i1 == i2);
        break;
    }
    case PGW_OID_MONEY: {
        int64_t c1, c2;
        assert_int_equal(pgw_get_money(tv, &c1), 0);
        assert_int_equal(pgw_get_money(bv, &c2), 0);
        assert_true(c1 == c2);
        break;
    }
    default:
        break;
    }
}

/* Encode d in binary, send it as $1 and decode the binary answer. */
static void roundtrip(const golden_t *g, const pgw_datum_t *d)
{
    pgw_buf_t enc;
    pgw_buf_init(&enc, NULL);
    assert_int_equal(pgw__encode_scalar(d, g->oid, &enc), 0);
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT $1::%s", g->type);
    pgw_view_t param = {enc.data ? enc.data : (const uint8_t *)"", (int32_t)enc.len};
    int16_t fmt = PGW_FORMAT_BINARY;
    pgt_rows_t rows;
    if (pgt_raw_query(db, sql, 1, &g->oid, &param, &fmt, 1, &rows) != 0)
        fail_msg("%s with %s: %s", sql, g->literal, rows.message);
    pgw_view_t c = pgt_rows_cell(&rows, 0, 0);
    pgw_value_t v = {c.p, c.len, PGW_FORMAT_BINARY, g->oid};
    pgw_datum_t back;
    assert_int_equal(pgw_get_datum(&v, &back), 0);
    assert_same(g, d, &back);
    /* byte-identical too, except the dscale word of numeric NaN/Infinity,
     * which the server fills with bits of its internal header */
    int special = d->kind == PGW_DATUM_NUMERIC && d->u.num.sign != PGW_NUMERIC_POS &&
                  d->u.num.sign != PGW_NUMERIC_NEG;
    if (!special && ((size_t)c.len != enc.len || (enc.len && memcmp(c.p, enc.data, enc.len) != 0)))
        fail_msg("%s %s: sent %zu bytes, got %d different ones", g->type, g->literal, enc.len,
                 c.len);
    pgt_rows_free(&rows);
    pgw_buf_free(&enc);
}

static void test_golden(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const golden_t *g = &cases[i];
        reset_session(g);
        pgt_rows_t tr, br;
        pgw_value_t tv = select_one(g, PGW_FORMAT_TEXT, &tr);
        pgw_value_t bv = select_one(g, PGW_FORMAT_BINARY, &br);
        pgw_datum_t td, bd;
        int rc = pgw_get_datum(&tv, &td);
        if (rc != 0) {
            char txt[200];
            fail_msg("%s %s: text '%s' gives %s", g->type, g->literal,
                     pgt_view_cstr(pgt_rows_cell(&tr, 0, 0), txt, sizeof txt), pgw_err_name(rc));
        }
        rc = pgw_get_datum(&bv, &bd);
        if (rc != 0) fail_msg("%s %s: binary gives %s", g->type, g->literal, pgw_err_name(rc));
        assert_same(g, &td, &bd);
        assert_getters_agree(g, &tv, &bv);
        roundtrip(g, &bd);
        pgt_rows_free(&tr);
        pgt_rows_free(&br);
    }
}

/* The public parameter constructors, through pgw_enc_bind_params. */
static void test_constructors(void **state)
{
    (void)state;
    reset_session(&cases[0]);
    static const pgw_interval_t iv = {-1, 2, -3};
    pgw_inet_t net;
    assert_int_equal(pgw_inet_parse("2001:db8::/32", 13, 1, &net), 0);
    uint8_t uuid[16];
    assert_int_equal(pgw_uuid_parse("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", 36, uuid), 0);
    pgw_param_t p[] = {pgw_numeric_str("-12345678901234567890.000100"),
                       pgw_interval(&iv),
                       pgw_inet(&net),
                       pgw_uuid(uuid),
                       pgw_jsonb("{\"a\": 12345678901234567890}"),
                       pgw_timestamptz(0),
                       pgw_date(-1),
                       pgw_money(-100),
                       pgw_oid_param(4000000000u)};
    const char *want[] = {"-12345678901234567890.000100",
                          "-3 mons +2 days -00:00:00.000001",
                          "2001:db8::/32",
                          "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                          "{\"a\": 12345678901234567890}",
                          "2000-01-01 00:00:00+00",
                          "1999-12-31",
                          "-$1.00",
                          "4000000000"};
    const char *names[] = {"numeric",     "interval", "cidr",  "uuid", "jsonb",
                           "timestamptz", "date",     "money", "oid"};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        /* Bind built by pgw_enc_bind_params, checked by decoding it back
         * into views for the raw client. */
        pgw_buf_t b;
        pgw_buf_init(&b, NULL);
        assert_int_equal(pgw_enc_bind_params(&b, "", "", &p[i], 1, NULL, 0, 0), 0);
        const uint8_t *m = b.data;
        size_t off = 5 + 1 + 1; /* type, length, two empty names */
        int16_t nf = (int16_t)pgw__get16(m + off);
        off += 2 + 2 * (size_t)nf;
        assert_int_equal(pgw__get16(m + off), 1);
        off += 2;
        pgw_view_t val = {m + off + 4, (int32_t)pgw__get32(m + off)};
        char sql[64];
        snprintf(sql, sizeof sql, "SELECT $1::%s::text", names[i]);
        uint32_t oid;
        pgw_params_oids(&p[i], 1, &oid);
        int16_t fmt = p[i].format;
        pgt_rows_t rows;
        if (pgt_raw_query(db, sql, 1, &oid, &val, &fmt, 0, &rows) != 0)
            fail_msg("%s: %s", sql, rows.message);
        char got[256];
        pgt_view_cstr(pgt_rows_cell(&rows, 0, 0), got, sizeof got);
        assert_string_equal(got, want[i]);
        pgt_rows_free(&rows);
        pgw_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_constructors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
