/*
 * The typed result accessors against the real server: one value of every
 * type they cover, selected in binary and in text result format, read back
 * through each accessor with the same value, and their errors (a NULL cell,
 * a column of another type, indexes out of range, NULL arguments).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pgtest.h"
#include "pgwire/client.h"

static pgw_client_t *db;

enum col {
    C_BOOL,
    C_INT2,
    C_INT4,
    C_INT8,
    C_OID,
    C_FLOAT4,
    C_FLOAT8,
    C_TEXT,
    C_JSON,
    C_JSONB,
    C_BYTEA,
    C_UUID,
    C_DATE,
    C_TIME,
    C_TIMETZ,
    C_TS,
    C_TSTZ,
    C_INTERVAL,
    C_NUMERIC,
    C_INET,
    C_CIDR,
    C_MACADDR,
    C_MACADDR8,
    C_MONEY,
    C_ARRAY,
    C_NULL,
    C_COUNT
};

static const char *const sql =
    "SELECT true, 32767::int2, '-2147483648'::int4, 9000000000::int8, 4000000000::oid, "
    "1.5::float4, 2.25::float8, 'h\xc3\xa9llo'::text, '{\"a\": [1, 2]}'::json, "
    "'{\"a\": [1, 2]}'::jsonb, '\\xdeadbeef'::bytea, "
    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, '2024-02-29'::date, "
    "'13:45:30.25'::time, '13:45:30+02'::timetz, '2024-02-29 13:45:30.5'::timestamp, "
    "'2024-02-29 13:45:30.5+00'::timestamptz, '1 year 2 mons 3 days 04:05:06'::interval, "
    "12345.678::numeric, '192.168.1.7/24'::inet, '10.0.0.0/8'::cidr, "
    "'08:00:2b:01:02:03'::macaddr, '08:00:2b:01:02:03:04:05'::macaddr8, 12.34::money, "
    "ARRAY[1, NULL, 3]::int4[], NULL::int4";

static int setup(void **state)
{
    char ci[512];
    (void)state;
    pgt_require_server();
    assert_int_equal(pgw_client_connect(&db, pgt_conninfo(ci, sizeof ci, NULL), NULL), 0);
    pgw_result_t *res;
    assert_int_equal(pgw_client_exec(db, "SET lc_monetary = 'C'; SET TimeZone = 'UTC'", &res), 0);
    pgw_result_free(res);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgw_client_close(db);
    return 0;
}

static pgw_result_t *select_all(unsigned flags)
{
    pgw_result_t *res = NULL;
    pgw_request_t req = PGW_QUERY(sql, NULL, 0, NULL, NULL);
    req.flags = flags;
    int rc = pgw_client_run(db, &req, &res);
    if (rc != 0)
        fail_msg("%s", rc == PGW_ESERVER ? pgw_result_error(res)->message : pgw_strerror(rc));
    assert_int_equal(pgw_result_ncols(res), C_COUNT);
    int want = flags & PGW_Q_TEXT ? PGW_FORMAT_TEXT : PGW_FORMAT_BINARY;
    assert_int_equal(pgw_result_fformat(res, C_INT4), want);
    return res;
}

static void expect_str(pgw_str_t s, const char *want)
{
    if (s.len != strlen(want) || memcmp(s.p, want, s.len) != 0)
        fail_msg("got '%.*s', want '%s'", (int)s.len, s.p, want);
}

static void check_numbers(const pgw_result_t *res)
{
    bool b = false;
    int16_t i2;
    int32_t i4;
    int64_t i8;
    uint32_t o;
    float f4;
    double f8;
    assert_int_equal(pgw_result_bool(res, 0, C_BOOL, &b), 0);
    assert_true(b);
    assert_int_equal(pgw_result_int2(res, 0, C_INT2, &i2), 0);
    assert_int_equal(i2, 32767);
    assert_int_equal(pgw_result_int4(res, 0, C_INT4, &i4), 0);
    assert_int_equal(i4, INT32_MIN);
    assert_int_equal(pgw_result_int8(res, 0, C_INT8, &i8), 0);
    assert_true(i8 == INT64_C(9000000000));
    assert_int_equal(pgw_result_int4(res, 0, C_INT8, &i4), PGW_ERANGE);
    assert_int_equal(pgw_result_oid(res, 0, C_OID, &o), 0);
    assert_int_equal(o, 4000000000u);
    assert_int_equal(pgw_result_float4(res, 0, C_FLOAT4, &f4), 0);
    assert_true(f4 == 1.5f);
    assert_int_equal(pgw_result_float8(res, 0, C_FLOAT8, &f8), 0);
    assert_true(f8 == 2.25);
    assert_int_equal(pgw_result_numeric_double(res, 0, C_NUMERIC, &f8), 0);
    assert_true(f8 == 12345.678);
    assert_int_equal(pgw_result_numeric_int64(res, 0, C_NUMERIC, &i8), PGW_ELOSS);
    pgw_numeric_t n;
    uint8_t storage[64];
    char buf[32];
    size_t need;
    assert_int_equal(pgw_result_numeric(res, 0, C_NUMERIC, &n, storage, sizeof storage), 0);
    assert_int_equal(pgw_numeric_to_str(&n, buf, sizeof buf, &need), 0);
    assert_string_equal(buf, "12345.678");
    assert_int_equal(pgw_result_money(res, 0, C_MONEY, &i8), 0);
    assert_true(i8 == 1234);
}

static void check_strings(const pgw_result_t *res, int binary)
{
    pgw_str_t s;
    assert_int_equal(pgw_result_text(res, 0, C_TEXT, &s), 0);
    expect_str(s, "h\xc3\xa9llo");
    assert_int_equal(pgw_result_json(res, 0, C_JSON, &s), 0);
    expect_str(s, "{\"a\": [1, 2]}");
    assert_int_equal(pgw_result_json(res, 0, C_JSONB, &s), 0);
    expect_str(s, "{\"a\": [1, 2]}"); /* jsonb's own spacing */
    pgw_view_t bv;
    if (binary) {
        assert_int_equal(pgw_result_bytea(res, 0, C_BYTEA, &bv), 0);
        assert_int_equal(bv.len, 4);
        assert_memory_equal(bv.p, "\xde\xad\xbe\xef", 4);
    } else {
        assert_int_equal(pgw_result_bytea(res, 0, C_BYTEA, &bv), PGW_ETYPE);
    }
    uint8_t u[16];
    static const uint8_t want_u[16] = {0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8,
                                       0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11};
    assert_int_equal(pgw_result_uuid(res, 0, C_UUID, u), 0);
    assert_memory_equal(u, want_u, 16);
}

static void check_datetime(const pgw_result_t *res)
{
    int32_t days, want_days;
    assert_int_equal(pgw_date_from_ymd(2024, 2, 29, &want_days), 0);
    assert_int_equal(pgw_result_date(res, 0, C_DATE, &days), 0);
    assert_int_equal(days, want_days);
    int64_t t;
    int64_t hms = ((int64_t)13 * 3600 + 45 * 60 + 30) * 1000000;
    assert_int_equal(pgw_result_time(res, 0, C_TIME, &t), 0);
    assert_true(t == hms + 250000);
    pgw_timetz_t tz;
    assert_int_equal(pgw_result_timetz(res, 0, C_TIMETZ, &tz), 0);
    assert_true(tz.usec == hms);
    assert_int_equal(tz.gmtoff, 7200);
    int64_t want_ts = (int64_t)want_days * 86400 * 1000000 + hms + 500000;
    assert_int_equal(pgw_result_timestamp(res, 0, C_TS, &t), 0);
    assert_true(t == want_ts);
    assert_int_equal(pgw_result_timestamptz(res, 0, C_TSTZ, &t), 0);
    assert_true(t == want_ts);
    /* They mean different things: each accessor takes its own type. */
    assert_int_equal(pgw_result_timestamp(res, 0, C_TSTZ, &t), PGW_ETYPE);
    pgw_tm_t tm;
    assert_int_equal(pgw_result_tm(res, 0, C_TS, &tm), 0);
    assert_int_equal(tm.year, 2024);
    assert_int_equal(tm.month, 2);
    assert_int_equal(tm.day, 29);
    assert_int_equal(tm.usec, 500000);
    pgw_interval_t iv;
    assert_int_equal(pgw_result_interval(res, 0, C_INTERVAL, &iv), 0);
    assert_int_equal(iv.months, 14);
    assert_int_equal(iv.days, 3);
    assert_true(iv.usec == ((int64_t)4 * 3600 + 5 * 60 + 6) * 1000000);
}

static void check_network_and_array(const pgw_result_t *res)
{
    pgw_inet_t a;
    assert_int_equal(pgw_result_inet(res, 0, C_INET, &a), 0);
    assert_int_equal(a.family, PGW_INET_AF_INET);
    assert_int_equal(a.bits, 24);
    assert_int_equal(a.is_cidr, 0);
    assert_memory_equal(a.addr, "\xc0\xa8\x01\x07", 4);
    assert_int_equal(pgw_result_inet(res, 0, C_CIDR, &a), 0);
    assert_int_equal(a.is_cidr, 1);
    assert_int_equal(a.bits, 8);
    uint8_t mac[8];
    assert_int_equal(pgw_result_macaddr(res, 0, C_MACADDR, mac), 0);
    assert_memory_equal(mac, "\x08\x00\x2b\x01\x02\x03", 6);
    assert_int_equal(pgw_result_macaddr8(res, 0, C_MACADDR8, mac), 0);
    assert_memory_equal(mac, "\x08\x00\x2b\x01\x02\x03\x04\x05", 8);

    pgw_array_t arr;
    assert_int_equal(pgw_result_array(res, 0, C_ARRAY, &arr), 0);
    assert_int_equal(arr.nelems, 3);
    assert_true(arr.has_nulls);
    assert_int_equal(arr.elem_oid, PGW_OID_INT4);
    pgw_array_iter_t it;
    pgw_value_t e;
    int32_t x;
    pgw_array_iter_init(&it, &arr, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal(pgw_get_int4(&e, &x), 0);
    assert_int_equal(x, 1);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_true(pgw_value_is_null(&e));
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal(pgw_get_int4(&e, &x), 0);
    assert_int_equal(x, 3);
    assert_int_equal(pgw_array_next(&it, &e), 0);
}

static void check_errors(const pgw_result_t *res)
{
    int32_t x = 7;
    uint8_t u[16];
    pgw_str_t s;
    pgw_array_t arr;
    /* A NULL cell leaves out alone. */
    assert_int_equal(pgw_result_int4(res, 0, C_NULL, &x), PGW_ENULL);
    assert_int_equal(x, 7);
    assert_int_equal(pgw_result_array(res, 0, C_NULL, &arr), PGW_ENULL);
    pgw_datum_t d;
    assert_int_equal(pgw_result_datum(res, 0, C_NULL, &d), 0);
    assert_int_equal(d.kind, PGW_DATUM_NULL);
    assert_int_equal(pgw_result_datum(res, 0, C_UUID, &d), 0);
    assert_int_equal(d.kind, PGW_DATUM_UUID);
    /* Columns of another type. */
    assert_int_equal(pgw_result_uuid(res, 0, C_INT4, u), PGW_ETYPE);
    assert_int_equal(pgw_result_int4(res, 0, C_TEXT, &x), PGW_ETYPE);
    assert_int_equal(pgw_result_json(res, 0, C_INT4, &s), PGW_ETYPE);
    assert_int_equal(pgw_result_date(res, 0, C_TS, &x), PGW_ETYPE);
    assert_int_equal(pgw_result_array(res, 0, C_INT4, &arr), PGW_ETYPE);
    assert_int_equal(pgw_result_array(res, 0, C_TEXT, &arr), PGW_ETYPE);
    /* Indexes out of range, NULL arguments. */
    assert_int_equal(pgw_result_int4(res, 1, C_INT4, &x), PGW_EINDEX);
    assert_int_equal(pgw_result_int4(res, 0, C_COUNT, &x), PGW_EINDEX);
    assert_int_equal(pgw_result_uuid(res, 5, 0, u), PGW_EINDEX);
    assert_int_equal(pgw_result_array(res, 0, 999, &arr), PGW_EINDEX);
    assert_int_equal(pgw_result_int4(res, 0, C_INT4, NULL), PGW_EINVAL);
    assert_int_equal(pgw_result_int4(NULL, 0, C_INT4, &x), PGW_EINVAL);
    assert_int_equal(pgw_result_numeric(res, 0, C_NUMERIC, NULL, NULL, 0), PGW_EINVAL);
}

static void check_all(unsigned flags)
{
    pgw_result_t *res = select_all(flags);
    check_numbers(res);
    check_strings(res, !(flags & PGW_Q_TEXT));
    check_datetime(res);
    check_network_and_array(res);
    check_errors(res);
    pgw_result_free(res);
}

static void test_binary_results(void **state)
{
    (void)state;
    check_all(0);
}

static void test_text_results(void **state)
{
    (void)state;
    check_all(PGW_Q_TEXT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary_results),
        cmocka_unit_test(test_text_results),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
