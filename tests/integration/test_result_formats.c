/*
 * The format of a result column depends only on its type, never on what the
 * statement cache or the statement table happen to know (session.h,
 * "Result formats"): a query over a value of every built-in type, an enum,
 * a domain, a composite and an extension type (contrib's citext), run five
 * times (unnamed, then prepared into the cache, then from it), through a
 * prepared statement, and with the cache skipped, gives every column in the
 * same format with the same bytes on every run, and the same accessor call
 * reads each value the same way every time.
 */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A value of every built-in type of PGW_BUILTIN_TYPES the server can
 * produce from a literal (not gtsvector, unknown), and of the user types. */
static const char *const g_values[] = {
    "true::bool",
    "'\\xdeadbeef'::bytea",
    "'c'::\"char\"",
    "'nm'::name",
    "9000000000::int8",
    "-7::int2",
    "'1 2 3'::int2vector",
    "42::int4",
    "'now'::regproc",
    "'some text'::text",
    "123::oid",
    "'(1,2)'::tid",
    "'77'::xid",
    "'5'::cid",
    "'1 2'::oidvector",
    "'{\"a\": [1, 2]}'::json",
    "'<x>1</x>'::xml",
    "'(1.5,2)'::point",
    "'[(0,0),(1,1)]'::lseg",
    "'[(0,0),(1,1),(2,0)]'::path",
    "'(1,1),(0,0)'::box",
    "'((0,0),(1,1),(1,0))'::polygon",
    "'{1,-1,0}'::line",
    "'10.0.0.0/8'::cidr",
    "1.5::float4",
    "-2.25::float8",
    "'<(1,1),2>'::circle",
    "'08:00:2b:01:02:03:04:05'::macaddr8",
    "12.34::money",
    "'08:00:2b:01:02:03'::macaddr",
    "'192.168.1.5/24'::inet",
    "'postgres=arwdDxt/postgres'::aclitem",
    "'ab'::bpchar",
    "'vc'::varchar",
    "'2024-02-29'::date",
    "'13:14:15.5'::time",
    "'2024-02-29 13:14:15.123456'::timestamp",
    "'2024-02-29 13:14:15.123456+02'::timestamptz",
    "'1 year 2 days 03:04:05'::interval",
    "'13:14:15+05:30'::timetz",
    "B'1011'::bit(4)",
    "B'10110'::varbit",
    "'12345.6789'::numeric",
    "'cur'::refcursor",
    "'now()'::regprocedure",
    "'+(int4,int4)'::regoperator",
    "'^@'::regoper",
    "'pg_class'::regclass",
    "'int4'::regtype",
    "row(1, 'a')",
    "'cs'::cstring",
    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
    "'10:20:10,14,15'::txid_snapshot",
    "'16/B374D848'::pg_lsn",
    "'a fat cat'::tsvector",
    "'fat & cat'::tsquery",
    "'english'::regconfig",
    "'simple'::regdictionary",
    "'{\"b\": 1}'::jsonb",
    "'[1,5)'::int4range",
    "'[1.5,2.5]'::numrange",
    "'[2024-01-01,2024-02-01)'::tsrange",
    "'[2024-01-01 00:00+00,2024-02-01 00:00+00)'::tstzrange",
    "'[2024-01-01,2024-02-01)'::daterange",
    "'[1,9)'::int8range",
    "'$.a'::jsonpath",
    "'pg_catalog'::regnamespace",
    "CURRENT_USER::regrole",
    "'\"C\"'::regcollation",
    "'{[1,3),[5,7)}'::int4multirange",
    "'{[1,2]}'::nummultirange",
    "'{[2024-01-01,2024-01-02)}'::tsmultirange",
    "'{[2024-01-01 00:00+00,2024-01-02 00:00+00)}'::tstzmultirange",
    "'{[2024-01-01,2024-01-02)}'::datemultirange",
    "'{[1,3)}'::int8multirange",
    "'10:20:10,14,15'::pg_snapshot",
    "'88'::xid8",
    "ARRAY[1, 2, NULL]::int4[]",
    "ARRAY['a', 'b']::text[]",
    "'happy'::rf_mood",
    "7::rf_positive",
    "row(3, 'x')::rf_pair",
    "'MiXeD'::citext",
};
#define NVALUES (sizeof g_values / sizeof *g_values)

/* The query over every value, and the same with NULL::text in place of
 * the aclitem (see test_same_formats_every_run). */
static char g_sql[8192], g_sql_noacl[8192];

static void build_sql(char *sql, size_t cap, int with_aclitem)
{
    size_t at = (size_t)snprintf(sql, cap, "SELECT ");
    for (size_t i = 0; i < NVALUES; i++) {
        const char *v = g_values[i];
        if (!with_aclitem && strstr(v, "::aclitem")) v = "NULL::text";
        at += (size_t)snprintf(sql + at, cap - at, "%s%s AS c%zu", i ? ", " : "", v, i);
    }
    assert_true(at < cap);
}

static int setup(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    pgt_client_exec_ok(c, "CREATE EXTENSION IF NOT EXISTS citext;"
                          "DROP TYPE IF EXISTS rf_mood, rf_pair; DROP DOMAIN IF EXISTS rf_positive;"
                          "CREATE TYPE rf_mood AS ENUM ('sad', 'happy');"
                          "CREATE DOMAIN rf_positive AS int4 CHECK (VALUE > 0);"
                          "CREATE TYPE rf_pair AS (n int4, s text)");
    pgw_client_close(c);
    build_sql(g_sql, sizeof g_sql, 1);
    build_sql(g_sql_noacl, sizeof g_sql_noacl, 0);
    return 0;
}

/* What one run gave for column i: its format, its bytes, and what
 * pgw_result_text made of it. */
typedef struct cell {
    int format;
    uint32_t type;
    int32_t len;
    char bytes[256];
    int text_rc;
    char text[256];
} cell_t;

static void read_cell(const pgw_result_t *res, size_t i, cell_t *out)
{
    memset(out, 0, sizeof *out);
    pgw_value_t v;
    assert_int_equal(pgw_result_value(res, 0, i, &v), 0);
    out->format = v.format;
    out->type = v.oid;
    out->len = v.len;
    assert_true(v.len < (int32_t)sizeof out->bytes);
    if (v.len > 0) memcpy(out->bytes, v.p, (size_t)v.len); /* -1: NULL */
    pgw_str_t t;
    out->text_rc = pgw_result_text(res, 0, i, &t);
    if (out->text_rc == 0) {
        assert_true(t.len < sizeof out->text);
        memcpy(out->text, t.p, t.len);
    }
}

static cell_t g_first[NVALUES];

/* Compare every column of res with the first run's. */
static void same_as_first(const pgw_result_t *res, int run, const char *how)
{
    assert_int_equal(pgw_result_ncols(res), NVALUES);
    for (size_t i = 0; i < NVALUES; i++) {
        cell_t c;
        read_cell(res, i, &c);
        if (run == 0 && how[0] == 'q') {
            g_first[i] = c;
            /* The rule: binary unless the server has no binary output. */
            int want = pgw_type_binary_output(c.type) ? PGW_FORMAT_BINARY : PGW_FORMAT_TEXT;
            if (c.format != want)
                fail_msg("%s: column %zu (%s) came in format %d", how, i, g_values[i], c.format);
            continue;
        }
        const cell_t *f = &g_first[i];
        if (f->type != c.type) continue; /* the aclitem or the NULL::text in its place */
        if (c.format != f->format || c.len != f->len ||
            (c.len > 0 && memcmp(c.bytes, f->bytes, (size_t)c.len)) || c.text_rc != f->text_rc ||
            strcmp(c.text, f->text))
            fail_msg("%s run %d: column %zu (%s): format %d (first %d), text %s (first %s)", how,
                     run, i, g_values[i], c.format, f->format, pgw_err_name(c.text_rc),
                     pgw_err_name(f->text_rc));
    }
}

static void run_query(pgw_client_t *c, const char *sql, int run, uint32_t cache, const char *how)
{
    pgw_request_t q = PGW_QUERY(sql, NULL, 0, NULL, NULL);
    q.cache = cache;
    pgw_result_t *res = NULL;
    int rc = pgw_client_run(c, &q, &res);
    if (rc != 0)
        fail_msg("%s run %d: %s %s", how, run, pgw_err_name(rc),
                 res && pgw_result_error(res) ? pgw_result_error(res)->message : "");
    same_as_first(res, run, how);
    pgw_result_free(res);
}

static void test_same_formats_every_run(void **state)
{
    (void)state;
    pgw_client_t *c = pgt_client_open();
    for (int run = 0; run < 5; run++)
        run_query(c, g_sql_noacl, run, PGW_CACHE_DEFAULT, "query");
    pgw_stmt_cache_stats_t st;
    pgw_client_stmt_cache_stats(c, &st);
    assert_true(st.hits >= 2); /* the last runs came from the cache */
    /* With an aclitem, whose type has no binary output: the first run is
     * bound again after the server's 42883, with the same formats as the
     * cached runs. */
    for (int run = 0; run < 5; run++)
        run_query(c, g_sql, run + 1, PGW_CACHE_DEFAULT, "query with aclitem");
    for (int run = 0; run < 3; run++) {
        run_query(c, g_sql_noacl, run + 1, PGW_CACHE_SKIP, "uncached query");
        run_query(c, g_sql, run + 1, PGW_CACHE_SKIP, "uncached query with aclitem");
    }
    /* A prepared statement, its first execution pipelined with its
     * preparation (the description not known yet), then known. (Inside a
     * batch a first execution cannot be bound again after the server's
     * 42883 for a type without binary output, session.h "Result formats":
     * this one leaves the aclitem out.) */
    pgw_request_t both[2] = {PGW_PREPARE("rf_stmt", g_sql_noacl, NULL, 0, NULL, NULL),
                             PGW_EXECUTE("rf_stmt", NULL, 0, NULL, NULL)};
    pgw_result_t *res[2];
    assert_int_equal(pgw_client_run_batch(c, both, 2, PGW_BATCH_SYNC_EACH, res, NULL), 0);
    same_as_first(res[1], 1, "first execute");
    pgw_result_free(res[0]);
    pgw_result_free(res[1]);
    for (int run = 0; run < 3; run++) {
        pgw_result_t *r = NULL;
        assert_int_equal(pgw_client_execute(c, "rf_stmt", NULL, 0, &r), 0);
        same_as_first(r, run + 2, "execute");
        pgw_result_free(r);
    }
    pgw_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_formats_every_run),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
