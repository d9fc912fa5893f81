/* date, time, timetz, timestamp, timestamptz, interval: text (ISO DateStyle,
 * postgres IntervalStyle) and binary, calendar conversions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pgwire/types.h"
#include "types/types_internal.h"

static pgw_value_t tv(uint32_t oid, const char *s)
{
    pgw_value_t v = {(const uint8_t *)s, (int32_t)strlen(s), PGW_FORMAT_TEXT, oid};
    return v;
}

#define USEC INT64_C(1000000)
#define DAY  (INT64_C(86400) * USEC)

static int64_t ts_text(uint32_t oid, const char *s)
{
    pgw_value_t v = tv(oid, s);
    int64_t t = 0;
    int rc = oid == PGW_OID_TIMESTAMP ? pgw_get_timestamp(&v, &t) : pgw_get_timestamptz(&v, &t);
    assert_int_equal(rc, 0);
    return t;
}

static void test_date(void **state)
{
    (void)state;
    int32_t d;
    pgw_value_t v = tv(PGW_OID_DATE, "2000-01-01");
    assert_int_equal(pgw_get_date(&v, &d), 0);
    assert_int_equal(d, 0);
    v = tv(PGW_OID_DATE, "1970-01-01");
    assert_int_equal(pgw_get_date(&v, &d), 0);
    assert_int_equal(d, -10957);
    v = tv(PGW_OID_DATE, "2024-02-29");
    assert_int_equal(pgw_get_date(&v, &d), 0);
    assert_int_equal(d, 8825);
    v = tv(PGW_OID_DATE, "2023-02-29");
    assert_int_equal(pgw_get_date(&v, &d), PGW_ERANGE);
    /* julian day 0 is 4714-11-24 BC: 2451545 days before 2000-01-01 */
    v = tv(PGW_OID_DATE, "4714-11-24 BC");
    assert_int_equal(pgw_get_date(&v, &d), 0);
    assert_int_equal(d, -2451545);
    pgw_tm_t tm;
    assert_int_equal(pgw_get_tm(&v, &tm), 0);
    assert_int_equal(tm.year, -4713);
    assert_int_equal(tm.month, 11);
    assert_int_equal(tm.day, 24);
    v = tv(PGW_OID_DATE, "0001-01-01 BC");
    assert_int_equal(pgw_get_date(&v, &d), 0);
    assert_int_equal(pgw_date_to_tm(d, &tm), 0);
    assert_int_equal(tm.year, 0);
    v = tv(PGW_OID_DATE, "5874897-12-31");
    assert_int_equal(pgw_get_date(&v, &d), 0);
    assert_int_equal(d, 2145031948); /* julian 2147483493 - 2451545 */
    v = tv(PGW_OID_DATE, "infinity");
    assert_int_equal(pgw_get_date(&v, &d), 0);
    assert_int_equal(d, PGW_DATE_INFINITY);
    assert_int_equal(pgw_get_tm(&v, &tm), PGW_ERANGE);
    v = tv(PGW_OID_DATE, "-infinity");
    assert_int_equal(pgw_get_date(&v, &d), 0);
    assert_int_equal(d, PGW_DATE_NEG_INFINITY);
    const char *bad[] = {"2000-1-01",  "2000-01-01 AD", "0000-01-01 BC", "2000-13-01",
                         "2000-01-00", "2000/01/01",    "2000-01-01 ",   ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = tv(PGW_OID_DATE, bad[i]);
        assert_true(pgw_get_date(&v, &d) < 0);
    }
    uint8_t b[4] = {0xff, 0xff, 0xff, 0xff};
    pgw_value_t bv = {b, 4, PGW_FORMAT_BINARY, PGW_OID_DATE};
    assert_int_equal(pgw_get_date(&bv, &d), 0);
    assert_int_equal(d, -1);
    assert_int_equal(pgw_get_tm(&bv, &tm), 0);
    assert_int_equal(tm.year, 1999);
    assert_int_equal(tm.month, 12);
    assert_int_equal(tm.day, 31);
    bv.len = 3;
    assert_int_equal(pgw_get_date(&bv, &d), PGW_EFORMAT);
    int32_t days;
    assert_int_equal(pgw_date_from_ymd(2000, 3, 1, &days), 0);
    assert_int_equal(days, 60);
}

static void test_timestamp(void **state)
{
    (void)state;
    assert_true(ts_text(PGW_OID_TIMESTAMP, "2000-01-01 00:00:00") == 0);
    assert_true(ts_text(PGW_OID_TIMESTAMP, "1999-12-31 23:59:59.999999") == -1);
    assert_true(ts_text(PGW_OID_TIMESTAMP, "2000-01-01 00:00:00.5") == USEC / 2);
    assert_true(ts_text(PGW_OID_TIMESTAMP, "1969-12-31 23:59:59.999999") ==
                -PGW_EPOCH_DIFF_USEC - 1);
    assert_true(ts_text(PGW_OID_TIMESTAMP, "294276-12-31 23:59:59.999999") ==
                INT64_C(9223371331199999999));
    assert_true(ts_text(PGW_OID_TIMESTAMP, "4714-11-24 00:00:00 BC") == -INT64_C(2451545) * DAY);
    assert_true(ts_text(PGW_OID_TIMESTAMP, "infinity") == PGW_TS_INFINITY);
    assert_true(ts_text(PGW_OID_TIMESTAMP, "-infinity") == PGW_TS_NEG_INFINITY);
    /* the same instant written with different offsets */
    int64_t utc = ts_text(PGW_OID_TIMESTAMPTZ, "2024-03-10 08:00:00+00");
    assert_true(ts_text(PGW_OID_TIMESTAMPTZ, "2024-03-10 02:00:00-06") == utc);
    assert_true(ts_text(PGW_OID_TIMESTAMPTZ, "2024-03-10 13:30:00+05:30") == utc);
    assert_true(ts_text(PGW_OID_TIMESTAMPTZ, "2024-03-10 13:45:30+05:45:30") == utc);
    assert_true(ts_text(PGW_OID_TIMESTAMPTZ, "2024-03-10 07:09:24-00:50:36") == utc);
    int64_t bc = ts_text(PGW_OID_TIMESTAMPTZ, "4714-11-24 00:00:00+00 BC");
    assert_true(bc == ts_text(PGW_OID_TIMESTAMP, "4714-11-24 00:00:00 BC"));
    pgw_tm_t tm;
    pgw_value_t v = tv(PGW_OID_TIMESTAMPTZ, "2024-11-03 01:30:00.25-05");
    assert_int_equal(pgw_get_tm(&v, &tm), 0);
    assert_int_equal(tm.year, 2024);
    assert_int_equal(tm.hour, 1);
    assert_int_equal(tm.min, 30);
    assert_int_equal(tm.usec, 250000);
    assert_int_equal(tm.gmtoff, -5 * 3600);
    int64_t unix_usec;
    assert_int_equal(pgw_get_timestamp_unix(&v, &unix_usec), 0);
    assert_true(unix_usec == INT64_C(1730615400250000));
    /* timestamp is never shifted: its unix reading is its wall clock as UTC */
    v = tv(PGW_OID_TIMESTAMP, "1970-01-01 00:00:01");
    assert_int_equal(pgw_get_timestamp_unix(&v, &unix_usec), 0);
    assert_true(unix_usec == USEC);
    v = tv(PGW_OID_TIMESTAMP, "infinity");
    assert_int_equal(pgw_get_timestamp_unix(&v, &unix_usec), PGW_ERANGE);
    assert_int_equal(pgw_get_tm(&v, &tm), PGW_ERANGE);
    /* types are not mixed */
    int64_t t;
    assert_int_equal(pgw_get_timestamptz(&v, &t), PGW_ETYPE);
    v = tv(PGW_OID_TIMESTAMPTZ, "2024-03-10 08:00:00+00");
    assert_int_equal(pgw_get_timestamp(&v, &t), PGW_ETYPE);
    const char *bad[] = {"2024-03-10 08:00:00",    "2024-03-10 08:00:00+",
                         "2024-03-10 24:00:00+00", "2024-03-10 08:00:00.1234567+00",
                         "2024-03-10 08:00+00",    "2024-03-10 08:00:00+00 BCE",
                         "2024-03-10 08:00:60+00", "2024-03-10 08:00:00+0:00"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = tv(PGW_OID_TIMESTAMPTZ, bad[i]);
        assert_true(pgw_get_timestamptz(&v, &t) < 0);
    }
    /* binary */
    uint8_t b[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    pgw_value_t bv = {b, 8, PGW_FORMAT_BINARY, PGW_OID_TIMESTAMP};
    assert_int_equal(pgw_get_timestamp(&bv, &t), 0);
    assert_true(t == -1);
    assert_int_equal(pgw_get_tm(&bv, &tm), 0);
    assert_int_equal(tm.year, 1999);
    assert_int_equal(tm.sec, 59);
    assert_int_equal(tm.usec, 999999);
    bv.len = 7;
    assert_int_equal(pgw_get_timestamp(&bv, &t), PGW_EFORMAT);
}

static void test_tm_conversions(void **state)
{
    (void)state;
    /* walk a wide range of days: to_tm and back gives the same value */
    for (int64_t day = -2451545; day < 106000000; day += 997) {
        int64_t t = day * DAY + 12345678;
        pgw_tm_t tm;
        assert_int_equal(pgw_timestamp_to_tm(t, &tm), 0);
        int64_t back;
        assert_int_equal(pgw_tm_to_timestamp(&tm, &back), 0);
        assert_true(back == t);
    }
    int64_t u;
    assert_int_equal(pgw_timestamp_to_unix(0, &u), 0);
    assert_true(u == PGW_EPOCH_DIFF_USEC);
    assert_int_equal(pgw_timestamp_from_unix(0, &u), 0);
    assert_true(u == -PGW_EPOCH_DIFF_USEC);
    assert_int_equal(pgw_timestamp_to_unix(PGW_TS_INFINITY, &u), PGW_ERANGE);
    assert_int_equal(pgw_timestamp_to_unix(INT64_MAX - 5, &u), PGW_ERANGE);
    assert_int_equal(pgw_timestamp_from_unix(INT64_MIN, &u), PGW_ERANGE);
    pgw_tm_t tm = {2024, 2, 30, 0, 0, 0, 0, 0};
    assert_int_equal(pgw_tm_to_timestamp(&tm, &u), PGW_ERANGE);
}

static void test_time(void **state)
{
    (void)state;
    int64_t t;
    pgw_value_t v = tv(PGW_OID_TIME, "04:05:06.789");
    assert_int_equal(pgw_get_time(&v, &t), 0);
    assert_true(t == ((4 * 60 + 5) * 60 + 6) * USEC + 789000);
    v = tv(PGW_OID_TIME, "24:00:00");
    assert_int_equal(pgw_get_time(&v, &t), 0);
    assert_true(t == DAY);
    v = tv(PGW_OID_TIME, "24:00:01");
    assert_int_equal(pgw_get_time(&v, &t), PGW_ERANGE);
    pgw_timetz_t tz;
    v = tv(PGW_OID_TIMETZ, "04:05:06-08");
    assert_int_equal(pgw_get_timetz(&v, &tz), 0);
    assert_int_equal(tz.gmtoff, -8 * 3600);
    v = tv(PGW_OID_TIMETZ, "04:05:06+05:45:30");
    assert_int_equal(pgw_get_timetz(&v, &tz), 0);
    assert_int_equal(tz.gmtoff, 5 * 3600 + 45 * 60 + 30);
    /* binary keeps the zone as seconds west */
    uint8_t b[12] = {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x70, 0x80};
    pgw_value_t bv = {b, 12, PGW_FORMAT_BINARY, PGW_OID_TIMETZ};
    assert_int_equal(pgw_get_timetz(&bv, &tz), 0);
    assert_true(tz.usec == 1);
    assert_int_equal(tz.gmtoff, -8 * 3600);
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    assert_int_equal(pgw_encode_timetz(&tz, &out), 0);
    assert_memory_equal(out.data, b, 12);
    pgw_buf_free(&out);
    b[0] = 0x80; /* negative time */
    assert_int_equal(pgw_get_timetz(&bv, &tz), PGW_EFORMAT);
}

static void check_interval(const char *s, int64_t usec, int32_t days, int32_t months)
{
    pgw_value_t v = tv(PGW_OID_INTERVAL, s);
    pgw_interval_t iv;
    assert_int_equal(pgw_get_interval(&v, &iv), 0);
    assert_true(iv.usec == usec);
    assert_int_equal(iv.days, days);
    assert_int_equal(iv.months, months);
}

static void test_interval(void **state)
{
    (void)state;
    check_interval("1 year 2 mons 3 days 04:05:06.789", ((4 * 60 + 5) * 60 + 6) * USEC + 789000, 3,
                   14);
    check_interval("-1 days +02:03:00", (2 * 60 + 3) * 60 * USEC, -1, 0);
    check_interval("00:00:00", 0, 0, 0);
    check_interval("-00:00:00.000001", -1, 0, 0);
    check_interval("1 day", 0, 1, 0);
    check_interval("-2 years -3 mons", 0, 0, -27);
    check_interval("-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808", INT64_MIN,
                   INT32_MIN, INT32_MIN);
    check_interval("178956970 years 7 mons 2147483647 days 2562047788:00:54.775807", INT64_MAX,
                   INT32_MAX, INT32_MAX);
    check_interval("infinity", INT64_MAX, INT32_MAX, INT32_MAX);
    const char *bad[] = {"",
                         "1",
                         "1 fortnight",
                         "1 day  01:00:00",
                         "01:00",
                         "2562047788:00:54.775808",
                         "178956971 years",
                         "1 day 01:00:00 1 day"};
    pgw_interval_t iv;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pgw_value_t v = tv(PGW_OID_INTERVAL, bad[i]);
        assert_true(pgw_get_interval(&v, &iv) < 0);
    }
    uint8_t b[16] = {0, 0, 0, 0, 0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 14};
    pgw_value_t bv = {b, 16, PGW_FORMAT_BINARY, PGW_OID_INTERVAL};
    assert_int_equal(pgw_get_interval(&bv, &iv), 0);
    assert_true(iv.usec == 5);
    assert_int_equal(iv.days, -1);
    assert_int_equal(iv.months, 14);
    bv.len = 15;
    assert_int_equal(pgw_get_interval(&bv, &iv), PGW_EFORMAT);
}

/* Breaking down converts exactly the server's timestamp range, and every
 * broken-down value converts back (a fuzz finding: a binary value just past
 * the range broke down to a date that could not). */
static void test_tm_range_edges(void **state)
{
    (void)state;
    const int64_t min = INT64_C(-211813488000000000), end = INT64_C(9223371331200000000);
    const int64_t inside[] = {min, min + 1, 0, -1, end - 1};
    for (size_t i = 0; i < sizeof inside / sizeof inside[0]; i++) {
        pgw_tm_t tm;
        int64_t back;
        assert_int_equal(pgw_timestamp_to_tm(inside[i], &tm), 0);
        assert_int_equal(pgw_tm_to_timestamp(&tm, &back), 0);
        assert_true(back == inside[i]);
    }
    pgw_tm_t tm;
    assert_int_equal(pgw_timestamp_to_tm(end - 1, &tm), 0);
    assert_int_equal(tm.year, 294276);
    assert_int_equal(tm.month, 12);
    assert_int_equal(tm.day, 31);
    assert_int_equal(pgw_timestamp_to_tm(min, &tm), 0);
    assert_int_equal(tm.year, -4713); /* astronomical: 4714 BC */
    const int64_t outside[] = {min - 1, end, INT64_C(0x7FFFFFFF50FFFFFF), INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++)
        assert_int_equal(pgw_timestamp_to_tm(outside[i], &tm), PGW_ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_date),           cmocka_unit_test(test_timestamp),
        cmocka_unit_test(test_tm_conversions), cmocka_unit_test(test_time),
        cmocka_unit_test(test_interval),       cmocka_unit_test(test_tm_range_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
