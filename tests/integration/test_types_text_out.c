/*
 * The server's text of binary values (pgw_value_to_text through
 * pgw_result_value_text / _cstr) against the real server: every query runs
 * twice, in binary (the library's default) and with PGW_Q_TEXT, and the
 * text made from each binary cell must be byte for byte the server's text
 * of the same cell. The values: the golden lists (golden_values.h), every
 * type the formatter covers, sweeps of floats, numerics, dates, intervals
 * and timestamps across DST rules in several zones, user types, and the
 * accessors' contract (settings captured per result, NULL, errors).
 */
#define _POSIX_C_SOURCE 200809L /* setenv, tzset, strdup */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "golden_values.h"
#include "pgtest.h"
#include "pgwire/client.h"

static pgw_client_t *db;
static size_t compared; /* binary cells whose text matched the server's */

static int setup(void **state)
{
    char ci[512];
    (void)state;
    pgt_require_server();
    assert_int_equal(pgw_client_connect(&db, pgt_conninfo(ci, sizeof ci, NULL), NULL), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    print_message("text of binary values: %zu compared with the server's, all equal\n", compared);
    pgw_client_close(db);
    return 0;
}

static void exec_ok(const char *sql)
{
    pgw_result_t *res = NULL;
    int rc = pgw_client_exec(db, sql, &res);
    if (rc != 0)
        fail_msg("%s: %s", sql,
                 rc == PGW_ESERVER ? pgw_result_error(res)->message : pgw_strerror(rc));
    pgw_result_free(res);
}

/* The session as the golden tests set it: the server's default output
 * settings, in UTC. Each SET is its own request, so the results made
 * afterwards capture it. */
static void reset_session(void)
{
    exec_ok("SET DateStyle = 'ISO'; SET IntervalStyle = 'postgres'; SET TimeZone = 'UTC'; "
            "SET lc_monetary = 'C'; SET extra_float_digits = 1; SET bytea_output = 'hex'");
}

static pgw_result_t *run(const char *sql, unsigned flags)
{
    pgw_request_t q = PGW_QUERY(sql, NULL, 0, NULL, NULL);
    q.flags = flags;
    pgw_result_t *res = NULL;
    int rc = pgw_client_run(db, &q, &res);
    if (rc != 0)
        fail_msg("%s: %s", sql,
                 rc == PGW_ESERVER ? pgw_result_error(res)->message : pgw_strerror(rc));
    return res;
}

/* Cell (r, c) of bin, made text, equals txt's. */
static void same_cell(const char *sql, pgw_result_t *bin, pgw_result_t *txt, size_t r, size_t c)
{
    pgw_value_t tv, bv;
    assert_int_equal(pgw_result_value(txt, r, c, &tv), 0);
    assert_int_equal(pgw_result_value(bin, r, c, &bv), 0);
    assert_int_equal(tv.format, PGW_FORMAT_TEXT);
    assert_int_equal(bv.format, PGW_FORMAT_BINARY);
    pgw_str_t s;
    int rc = pgw_result_value_text(bin, r, c, &s);
    if (tv.len < 0) {
        assert_int_equal(rc, PGW_ENULL);
        return;
    }
    if (rc != 0)
        fail_msg("%s (row %zu col %zu, type %u): server '%.*s', formatter %s", sql, r, c, bv.oid,
                 (int)tv.len, (const char *)tv.p, pgw_err_name(rc));
    if (s.len != (size_t)tv.len || memcmp(s.p, tv.p, s.len) != 0)
        fail_msg("%s (row %zu col %zu, type %u):\n  server    '%.*s'\n  formatter '%.*s'", sql, r,
                 c, bv.oid, (int)tv.len, (const char *)tv.p, (int)s.len, s.p);
    const char *cs, *again;
    size_t n;
    assert_int_equal(pgw_result_value_cstr(bin, r, c, &cs, &n), 0);
    assert_int_equal(n, s.len);
    assert_int_equal(cs[n], '\0');
    assert_memory_equal(cs, tv.p, n);
    assert_int_equal(pgw_result_value_cstr(bin, r, c, &again, NULL), 0);
    assert_ptr_equal(cs, again); /* kept once per cell */
    compared++;
}

/* sql's every cell, in binary and in text, must read the same. */
static void same_text(const char *sql)
{
    pgw_result_t *bin = run(sql, 0), *txt = run(sql, PGW_Q_TEXT);
    assert_int_equal(pgw_result_nrows(bin), pgw_result_nrows(txt));
    assert_int_equal(pgw_result_ncols(bin), pgw_result_ncols(txt));
    for (size_t r = 0; r < pgw_result_nrows(bin); r++)
        for (size_t c = 0; c < pgw_result_ncols(bin); c++)
            same_cell(sql, bin, txt, r, c);
    pgw_result_free(bin);
    pgw_result_free(txt);
}

/* ------------------------------------------------------------ golden lists */

typedef struct golden {
    const char *type, *literal, *setup;
} golden_t;
#define SCALAR_ROW(type, oid, literal, setup) {type, literal, setup},
static const golden_t scalars[] = {GOLDEN_SCALARS(SCALAR_ROW)};
#define SQL_ROW(sql, ...) sql,
static const char *const containers[] = {GOLDEN_ARRAYS(SQL_ROW) GOLDEN_RANGES(SQL_ROW)
                                             GOLDEN_MULTIRANGES(SQL_ROW) GOLDEN_RECORDS(SQL_ROW)};

static void test_golden_scalars(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        const golden_t *g = &scalars[i];
        reset_session();
        /* bytea_output is not reported to clients: the formatter writes
         * the default, hex, so the escape cases are compared in hex. */
        if (g->setup && strcmp(g->setup, GOLDEN_BYTEA_ESCAPE) != 0) exec_ok(g->setup);
        char sql[512];
        snprintf(sql, sizeof sql, "SELECT (%s)::%s", g->literal, g->type);
        same_text(sql);
    }
}

static void test_golden_containers(void **state)
{
    (void)state;
    reset_session();
    for (size_t i = 0; i < sizeof containers / sizeof containers[0]; i++)
        same_text(containers[i]);
    exec_ok(GOLDEN_CHICAGO);
    for (size_t i = 0; i < sizeof containers / sizeof containers[0]; i++)
        same_text(containers[i]);
}

/* ----------------------------------------------------------- every type */

static void test_scalar_types(void **state)
{
    (void)state;
    reset_session();
    same_text("SELECT true, false, NULL::bool, 0::int2, -1::int2, 0::int4, 1::int8, 0::oid, "
              "'x'::name, ''::text, 'a b'::varchar(5), 'ab'::char(3), ''::bpchar, "
              "'\\x'::bytea, '\\x0001027f80fe'::bytea, '{}'::json, '[1, 2.50, \"x\"]'::jsonb, "
              "'{\"a\": {\"b\": null}}'::jsonb, '$'::jsonpath, 'strict $.a.b'::jsonpath, "
              "'<a>x</a>'::xml, 'c1'::refcursor, 'lit' AS untyped");
    same_text("SELECT '0'::xid, '4294967295'::xid, '7'::cid, '18446744073709551615'::xid8, "
              "'(0,0)'::tid, '(4294967295,65535)'::tid, '0/0'::pg_lsn, "
              "'FFFFFFFF/FFFFFFFF'::pg_lsn, '16/B374D848'::pg_lsn, B'1'::bit, "
              "B'10110'::bit(5), B''::varbit, B'101100111000'::varbit, "
              "repeat('10', 37)::varbit, '1 2 -3'::int2vector, ''::int2vector, "
              "'1 4294967295'::oidvector, '10:20:10,14,15'::pg_snapshot, "
              "'10:10:'::txid_snapshot");
    same_text("SELECT '(1.5,-2)'::point, '(0,-0)'::point, '[(1,2),(3,4)]'::lseg, "
              "'(3,4),(1,2)'::box, '{1,-1,0.5}'::line, '<(1,2),0.1>'::circle, "
              "'[(1,1),(2,3),(4,5)]'::path, '((1,1),(2,3),(4,5))'::path, "
              "'((0,0),(1e300,1e-300),(0.1,NaN))'::polygon, '(Infinity,-Infinity)'::point");
    same_text("SELECT i::\"char\" FROM generate_series(-128, 127) i");
    same_text("SELECT ''::\"char\", NULL::\"char\"");
    same_text("SELECT x::uuid FROM (VALUES ('00000000-0000-0000-0000-000000000000'), "
              "('ffffffff-ffff-ffff-ffff-ffffffffffff')) t(x)");
    same_text("SELECT x::macaddr, x::macaddr8 FROM (VALUES ('00:00:00:00:00:00'), "
              "('ff:ff:ff:ff:ff:ff'), ('0a:1b:2c:3d:4e:5f')) t(x)");
    same_text("SELECT '00:00:00:00:00:00:00:00'::macaddr8, 'ff:ff:ff:ff:ff:ff:ff:ff'::macaddr8");
    same_text("SELECT x::money FROM (VALUES (0), (0.01), (-0.01), (0.1), (1), (-1), (999.99), "
              "(1000), (-1000), (123456.78), (-999999999.99)) t(x)");
    same_text("SELECT (i * 1234567)::money, (-i * 76543)::money FROM generate_series(0, 40) i");
}

static void test_inet(void **state)
{
    (void)state;
    reset_session();
    static const char *const v6[] = {"::",
                                     "::1",
                                     "1::",
                                     "1::1",
                                     "1:0:0:1::",
                                     "1:0:2:0:0:3:0:0",
                                     "0:0:1:0:0:0:1:0",
                                     "1:2:3:4:5:6:7:8",
                                     "::ffff:1.2.3.4",
                                     "::1.2.3.4",
                                     "::0.0.0.1",
                                     "::0.0.1.0",
                                     "::ffff:0:1.2.3.4",
                                     "::ffff:0.0.0.0",
                                     "fe80::1:2",
                                     "2001:db8::",
                                     "1:2:3:4:5:6:7:0",
                                     "0:1:2:3:4:5:6:7",
                                     "abcd:ef01::",
                                     "::a:b:c:d",
                                     "1:0:0:2:0:0:0:3"};
    for (size_t i = 0; i < sizeof v6 / sizeof v6[0]; i++) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "SELECT '%s'::inet, '%s/64'::inet, '%s/128'::inet, set_masklen('%s'::cidr, 0), "
                 "'%s'::cidr",
                 v6[i], v6[i], v6[i], v6[i], v6[i]);
        same_text(sql);
    }
    same_text("SELECT '0.0.0.0'::inet, '255.255.255.255/32'::inet, '10.1.2.3/8'::inet, "
              "'10.0.0.0/8'::cidr, '0.0.0.0/0'::cidr, '192.168.0.0/16'::cidr, "
              "'1.2.3.4/32'::cidr");
}

/* Sweeps of generated values: every row compared. */
static void test_sweeps(void **state)
{
    (void)state;
    reset_session();
    same_text("SELECT (i::float8 / 7 * 10.0 ^ (i % 60 - 30))::float4, "
              "(i::float8 / 7 * 10.0 ^ (i % 600 - 300)), (1::float8 / i)::float4, "
              "(i * 1000)::float4, (10.0 ^ (i % 40 - 20))::float4 FROM generate_series(1, 3000) i");
    same_text("SELECT (2::float8 ^ (i - 1074)), (2::float4 ^ (i % 277 - 149)) "
              "FROM generate_series(0, 2097) i");
    /* Integers past the mantissa round to even: decimals exactly halfway
     * to a neighbour, which float4out and float8out never write. */
    same_text("SELECT (i::int8 * 104729 * 97)::float4, (i::int8 * 7919)::float4, "
              "(i::numeric * 1000000007 * 1000003 * 1009)::float8, "
              "'3.3628088e+07'::float4, '3.362809e+07'::float4 FROM generate_series(1, 20000) i");
    same_text("SELECT (i::numeric / 7)::numeric(40, 20), round(i::numeric / 13, i % 20), "
              "(-i)::numeric * 10000 ^ (i % 9 - 4), round(0.0, i % 20) "
              "FROM generate_series(1, 1000) i");
    same_text("SELECT d, d::timestamp, d::timestamp + i * interval '1 hour 1.5 sec' "
              "FROM (SELECT '4713-01-01 BC'::date + i * 3571 AS d, i "
              "FROM generate_series(0, 1800) i) t");
    same_text("SELECT make_interval(i % 7 - 3, i % 13 - 6, 0, i % 31 - 15, i % 25 - 12, "
              "i % 61 - 30, (i % 2001 - 1000) / 7.0), justify_hours(i * interval '1.5 hours'), "
              "(i % 3 - 1) * interval '1 mon', (i - 200) * interval '1 usec', "
              "(i - 200) * interval '1 day' FROM generate_series(0, 400) i");
    same_text("SELECT t::time, t::timetz, (t || '+05:45:30')::timetz, (t || '-12')::timetz "
              "FROM (SELECT (i * interval '1 min 11.013 sec')::time::text AS t "
              "FROM generate_series(0, 1300) i) s");
    same_text("SELECT '24:00:00'::time, '24:00:00-15:59'::timetz, '00:00:00+15:59:59'::timetz");
}

/* timestamptz in the zones the server knows, across centuries of rules:
 * fixed offsets, half hours, LMT, DST in both hemispheres, negative DST. */
static void test_zones(void **state)
{
    (void)state;
    static const char *const zones[] = {"UTC",
                                        "America/Chicago",
                                        "Asia/Kolkata",
                                        "Asia/Kathmandu",
                                        "Europe/Dublin",
                                        "Australia/Lord_Howe",
                                        "America/Sao_Paulo",
                                        "Pacific/Chatham",
                                        "America/St_Johns",
                                        "Europe/London",
                                        "Africa/Casablanca",
                                        "Pacific/Apia",
                                        "Etc/GMT+5",
                                        "EST5EDT",
                                        "+05:30",
                                        "<-0330>+03:30",
                                        "-7",
                                        "Antarctica/Troll",
                                        "America/Santiago",
                                        "Asia/Tehran"};
    reset_session();
    for (size_t i = 0; i < sizeof zones / sizeof zones[0]; i++) {
        char set[128];
        snprintf(set, sizeof set, "SET TimeZone = '%s'", zones[i]);
        exec_ok(set);
        same_text("SELECT g, g + interval '0.5 sec', g::date FROM generate_series("
                  "'1800-01-01 00:00+00'::timestamptz, '2200-01-01 00:00+00', "
                  "'11 days 3 hours 17 minutes 11.5 seconds') g");
        same_text("SELECT x::timestamptz FROM (VALUES ('infinity'), ('-infinity'), "
                  "('4713-11-24 00:00:00+00 BC'), ('294276-12-31 23:59:59.999999+00'), "
                  "('0001-01-01 00:00+00'), ('0001-01-01 00:00+00 BC'), ('1883-11-18 18:00+00'), "
                  "('1969-12-31 23:59:59.999999+00'), ('2038-01-19 03:14:08+00'), "
                  "('2500-07-01 12:00+00'), ('9999-12-31 23:59:59+00'), ('12345-06-07 08:09+00')) "
                  "t(x)");
        /* Each second around every transition of 2024. */
        same_text("SELECT g FROM generate_series('2024-01-01 00:00+00'::timestamptz, "
                  "'2025-01-01 00:00+00', '15 minutes') g");
        same_text("SELECT tstzrange('2024-03-10 08:00+00', '2024-11-03 07:30+00'), "
                  "ARRAY['2024-03-31 01:00+00'::timestamptz, NULL], "
                  "ROW('2024-10-27 01:30+00'::timestamptz, 1)");
    }
}

/* timestamp without time zone is a wall-clock reading: whatever the host's
 * TZ (the process environment, tzset), it is never shifted. Its binary
 * value as text equals the server's text, and 2024-03-10 02:30 (inside the
 * spring-forward gap of America/New_York, and so of no local time there)
 * reads back as those digits and as that moment taken as UTC, in binary
 * and in text. */
static void test_host_tz_ignored(void **state)
{
    (void)state;
    static const char *const host_zones[] = {"America/New_York", "Asia/Kathmandu",
                                             "Pacific/Chatham", "Etc/GMT-14"};
    const char *saved = getenv("TZ");
    char *old = saved ? strdup(saved) : NULL;
    reset_session();
    exec_ok("SET TimeZone = 'America/New_York'");
    for (size_t i = 0; i < sizeof host_zones / sizeof host_zones[0]; i++) {
        setenv("TZ", host_zones[i], 1);
        tzset();
        same_text("SELECT g FROM generate_series('2024-03-09 23:00'::timestamp, "
                  "'2024-03-10 04:00', '7 minutes 30 seconds') g");
        for (unsigned flags = 0; flags <= PGW_Q_TEXT; flags += PGW_Q_TEXT) {
            pgw_result_t *res = run("SELECT '2024-03-10 02:30:00'::timestamp", flags);
            int64_t unix_usec = 0;
            assert_int_equal(pgw_result_timestamp_unix(res, 0, 0, &unix_usec), 0);
            assert_true(unix_usec == INT64_C(1710037800000000));
            pgw_str_t t;
            assert_int_equal(pgw_result_value_text(res, 0, 0, &t), 0);
            assert_int_equal(t.len, strlen("2024-03-10 02:30:00"));
            assert_memory_equal(t.p, "2024-03-10 02:30:00", t.len);
            pgw_result_free(res);
        }
    }
    if (old)
        setenv("TZ", old, 1);
    else
        unsetenv("TZ");
    free(old);
    tzset();
}

/* Quoting in containers: every character the three output functions quote
 * or escape, empty strings, NULL, nesting. */
static void test_container_quoting(void **state)
{
    (void)state;
    reset_session();
    static const char *const strs[] = {
        "",     "NULL", "null", "nUlL", "NULLx", "a b", " ", "\t",   "\n", "\r", "\v",
        "\f",   "\"",   "\\",   "{",    "}",     ",",   ";", "(",    ")",  "[",  "]",
        "a\"b", "a\\b", "x",    "é",    "'",     "=",   ":", "\\\"", "{}"};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        char lit[64], sql[1024];
        /* An E'' literal: backslashes and control characters escaped. */
        size_t n = 0;
        for (const char *p = strs[i]; *p; p++) {
            if (*p == '\\' || *p == '\'') lit[n++] = *p;
            lit[n++] = *p;
        }
        lit[n] = '\0';
        snprintf(sql, sizeof sql,
                 "SELECT ARRAY[E'%s'], ARRAY[[E'%s', NULL], [E'%s', 'b']], ROW(E'%s', NULL, 1), "
                 "ROW(ROW(E'%s'), ARRAY[E'%s']), ARRAY[ROW(E'%s', 2)], "
                 "ARRAY[E'%s']::varchar[], ROW(ARRAY[E'%s'])",
                 lit, lit, lit, lit, lit, lit, lit, lit, lit);
        same_text(sql);
    }
    same_text("SELECT ARRAY['(1,2),(3,4)'::box, '(0,0),(-1,-1)'], '{{1,2},{3,4}}'::float8[], "
              "'[2:3][-1:-1]={{a},{b}}'::text[], ARRAY[int4range(1, 5), 'empty'], "
              "ARRAY[ARRAY[1.5, NULL]::numeric[]], ARRAY['\\x41'::bytea], "
              "ARRAY['1 day'::interval, '-1 mon'], ARRAY['2024-01-01'::date], "
              "ARRAY['192.168.0.1'::inet], ARRAY['{\"a\": \"b c\"}'::jsonb], "
              "ARRAY[B'101'::varbit], ARRAY['(1,2)'::point], ARRAY[1.5::money], "
              "ARRAY['a'::\"char\", 'b'], ARRAY['x'::name], ARRAY[1::oid], ROW()");
    same_text("SELECT numrange(1.5, NULL), numrange(NULL, 2, '[]'), int8range(NULL, NULL), "
              "tsrange('2020-01-01', '2020-01-01 00:00:01'), daterange('2020-01-01', NULL, '(]'), "
              "'{[1,2), [3,4), [5,6)}'::int4multirange, '{}'::datemultirange, "
              "ARRAY['{[1,2)}'::int4multirange]");
}

/* User types loaded into the default registry: enum, domain, composite,
 * range, and arrays of them. */
static void test_user_types(void **state)
{
    (void)state;
    reset_session();
    exec_ok("DROP TABLE IF EXISTS pgw_to_t; DROP TYPE IF EXISTS pgw_to_pair; "
            "DROP TYPE IF EXISTS pgw_to_mood; DROP DOMAIN IF EXISTS pgw_to_pos; "
            "DROP TYPE IF EXISTS pgw_to_frange");
    exec_ok("CREATE TYPE pgw_to_mood AS ENUM ('sad', 'happy', 'so so', 'NULL')");
    exec_ok("CREATE DOMAIN pgw_to_pos AS int4 CHECK (VALUE > 0)");
    exec_ok("CREATE TYPE pgw_to_pair AS (a pgw_to_pos, b text, m pgw_to_mood, t timestamptz)");
    exec_ok("CREATE TYPE pgw_to_frange AS RANGE (subtype = float8)");
    const char *const names[] = {"pgw_to_mood",   "pgw_to_pos",    "pgw_to_pair", "pgw_to_frange",
                                 "pgw_to_mood[]", "pgw_to_pair[]", "pgw_to_pos[]"};
    assert_int_equal(pgw_client_load_types(db, names, sizeof names / sizeof names[0], NULL), 0);
    exec_ok(GOLDEN_CHICAGO);
    same_text("SELECT 'happy'::pgw_to_mood, ARRAY['sad', 'so so', 'NULL', NULL]::pgw_to_mood[], "
              "7::pgw_to_pos, ARRAY[1, 2]::pgw_to_pos[], "
              "ROW(1, 'x y', 'so so', '2024-07-04 12:00+00')::pgw_to_pair, "
              "ARRAY[ROW(2, NULL, 'NULL', NULL)::pgw_to_pair, NULL], "
              "'[1.5,2.5)'::pgw_to_frange, 'empty'::pgw_to_frange, "
              "ROW(ROW(3, '\"q\"', 'sad', 'infinity')::pgw_to_pair, 'z')");
    exec_ok("DROP TYPE pgw_to_pair; DROP TYPE pgw_to_mood; DROP DOMAIN pgw_to_pos; "
            "DROP TYPE pgw_to_frange");
}

/* ------------------------------------------------------ the accessors */

static void expect_text(pgw_result_t *res, size_t col, const char *want)
{
    pgw_str_t s;
    int rc = pgw_result_value_text(res, 0, col, &s);
    if (rc != 0) fail_msg("col %zu: %s, want '%s'", col, pgw_err_name(rc), want);
    if (s.len != strlen(want) || memcmp(s.p, want, s.len) != 0)
        fail_msg("col %zu: '%.*s', want '%s'", col, (int)s.len, s.p, want);
}

/* A result formats with the settings the session had reported when it was
 * made, also after they change and after the session is gone. */
static void test_settings_captured(void **state)
{
    (void)state;
    char ci[512];
    pgw_client_t *c;
    assert_int_equal(pgw_client_connect(&c, pgt_conninfo(ci, sizeof ci, NULL), NULL), 0);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_exec(c, "SET TimeZone = 'Asia/Kolkata'", &res), 0);
    pgw_result_free(res);
    const char *sql = "SELECT '2024-01-01 00:00+00'::timestamptz, '2024-01-02'::date, 5";
    pgw_request_t q = PGW_QUERY(sql, NULL, 0, NULL, NULL);
    pgw_result_t *kolkata = NULL, *chicago = NULL, *sql_style = NULL;
    assert_int_equal(pgw_client_run(c, &q, &kolkata), 0);
    assert_int_equal(pgw_client_exec(c, GOLDEN_CHICAGO, &res), 0);
    pgw_result_free(res);
    assert_int_equal(pgw_client_run(c, &q, &chicago), 0);
    assert_int_equal(pgw_client_exec(c, "SET DateStyle = 'SQL, DMY'", &res), 0);
    pgw_result_free(res);
    assert_int_equal(pgw_client_run(c, &q, &sql_style), 0);
    pgw_client_close(c);
    /* Read only now: the session is gone. */
    expect_text(kolkata, 0, "2024-01-01 05:30:00+05:30");
    expect_text(chicago, 0, "2023-12-31 18:00:00-06");
    expect_text(chicago, 1, "2024-01-02");
    /* Another DateStyle: the date/time values cannot be written as the
     * server would; the rest can. */
    pgw_str_t s;
    assert_int_equal(pgw_result_value_text(sql_style, 0, 0, &s), PGW_ENOTSUP);
    assert_int_equal(pgw_result_value_text(sql_style, 0, 1, &s), PGW_ENOTSUP);
    expect_text(sql_style, 2, "5");
    pgw_result_free(kolkata);
    pgw_result_free(chicago);
    pgw_result_free(sql_style);
}

static void test_accessor_errors(void **state)
{
    (void)state;
    reset_session();
    pgw_result_t *res = run("SELECT 'pg_class'::regclass, NULL::int4, 'a & b'::tsquery, 1.50, "
                            "'-infinity'::timestamp, 'x'::text",
                            0);
    pgw_str_t s;
    const char *cs;
    /* Binary forms the library does not format: an error, never text. */
    assert_int_equal(pgw_result_value_text(res, 0, 0, &s), PGW_ETYPE);
    assert_int_equal(pgw_result_value_cstr(res, 0, 0, &cs, NULL), PGW_ETYPE);
    assert_int_equal(pgw_result_value_text(res, 0, 2, &s), PGW_ETYPE);
    assert_int_equal(pgw_result_value_text(res, 0, 1, &s), PGW_ENULL);
    assert_int_equal(pgw_result_value_cstr(res, 0, 1, &cs, NULL), PGW_ENULL);
    assert_int_equal(pgw_result_value_text(res, 1, 0, &s), PGW_EINDEX);
    assert_int_equal(pgw_result_value_text(res, 0, 6, &s), PGW_EINDEX);
    assert_int_equal(pgw_result_value_text(NULL, 0, 0, &s), PGW_EINVAL);
    assert_int_equal(pgw_result_value_text(res, 0, 0, NULL), PGW_EINVAL);
    assert_int_equal(pgw_result_value_cstr(res, 0, 3, NULL, NULL), PGW_EINVAL);
    /* numeric as its exact string; another type is PGW_ETYPE. */
    assert_int_equal(pgw_result_numeric_str(res, 0, 3, &s), 0);
    assert_string_equal(s.p, "1.50");
    assert_int_equal(pgw_result_numeric_str(res, 0, 5, &s), PGW_ETYPE);
    assert_int_equal(pgw_result_numeric_str(res, 0, 1, &s), PGW_ETYPE);
    /* The infinities have no Unix time. */
    int64_t us;
    assert_int_equal(pgw_result_timestamp_unix(res, 0, 4, &us), PGW_ERANGE);
    assert_int_equal(pgw_result_timestamp_unix(res, 0, 5, &us), PGW_ETYPE);
    assert_int_equal(pgw_result_timestamp_unix(res, 0, 1, &us), PGW_ENULL);
    pgw_result_free(res);
}

/* numeric_str and timestamp_unix from both formats, against the server's
 * own numeric_out and extract(epoch). */
static void test_numeric_and_unix_time(void **state)
{
    (void)state;
    exec_ok(GOLDEN_CHICAGO);
    const char *sql = "SELECT n, n::text, t, tz, (extract(epoch FROM t) * 1000000)::int8, "
                      "(extract(epoch FROM tz) * 1000000)::int8 FROM (SELECT "
                      "(i::numeric / 7) ^ (i % 5) * 10::numeric ^ (i % 11 - 5) AS n, "
                      "'1901-12-13 20:45:52.5'::timestamp + i * interval '3 days 0.25 sec' AS t, "
                      "'1901-12-13 20:45:52.5+00'::timestamptz + i * interval '3 days 0.5 sec' "
                      "AS tz FROM generate_series(-3000, 3000) i) s";
    for (unsigned flags = 0; flags <= PGW_Q_TEXT; flags += PGW_Q_TEXT) {
        pgw_result_t *res = run(sql, flags);
        for (size_t r = 0; r < pgw_result_nrows(res); r++) {
            pgw_str_t num;
            pgw_value_t want;
            assert_int_equal(pgw_result_numeric_str(res, r, 0, &num), 0);
            assert_int_equal(pgw_result_value(res, r, 1, &want), 0);
            const char *w = (const char *)want.p;
            if (flags == 0) { /* binary text column: the text is the bytes */
                assert_int_equal(num.len, (size_t)want.len);
            }
            assert_memory_equal(num.p, w, num.len);
            assert_int_equal(num.p[num.len], '\0');
            for (size_t c = 2; c <= 3; c++) {
                int64_t got, epoch;
                assert_int_equal(pgw_result_timestamp_unix(res, r, c, &got), 0);
                assert_int_equal(pgw_result_int8(res, r, c + 2, &epoch), 0);
                if (got != epoch)
                    fail_msg("row %zu col %zu: %lld != %lld", r, c, (long long)got,
                             (long long)epoch);
            }
        }
        pgw_result_free(res);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_scalars),  cmocka_unit_test(test_golden_containers),
        cmocka_unit_test(test_scalar_types),    cmocka_unit_test(test_inet),
        cmocka_unit_test(test_sweeps),          cmocka_unit_test(test_zones),
        cmocka_unit_test(test_host_tz_ignored), cmocka_unit_test(test_container_quoting),
        cmocka_unit_test(test_user_types),      cmocka_unit_test(test_settings_captured),
        cmocka_unit_test(test_accessor_errors), cmocka_unit_test(test_numeric_and_unix_time),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
