/*
 * pgw_error_format against libpq 15's PQresultErrorMessage (and
 * PQresultVerboseErrorMessage for the terse, verbose and sqlstate
 * verbosities) for the same failing queries on the real server: syntax
 * errors at several positions, multi-line queries (\n and \r\n),
 * multibyte and wide characters before the position, tabs, long lines
 * that libpq cuts with "...", errors with DETAIL, HINT, CONTEXT and an
 * internal query, and one without a position; and each error field read
 * by its protocol code (pgw_error_field) as PQresultErrorField reads it.
 */
#define _DEFAULT_SOURCE
#include "pgtest.h"
#include "pgwire/client.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

static PGconn *pq;
static pgw_client_t *db;

static int setup(void **state)
{
    char ci[2048];
    pgt_conninfo(ci, sizeof ci, NULL);
    pq = PQconnectdb(ci);
    if (PQstatus(pq) != CONNECTION_OK) return -1;
    return pgw_client_connect(&db, ci, NULL) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    PQfinish(pq);
    pgw_client_close(db);
    return 0;
}

static const struct {
    PGVerbosity pq;
    pgw_error_verbosity_t pgw;
    const char *name;
} verbosities[] = {
    {PQERRORS_DEFAULT, PGW_ERRORS_DEFAULT, "default"},
    {PQERRORS_TERSE, PGW_ERRORS_TERSE, "terse"},
    {PQERRORS_VERBOSE, PGW_ERRORS_VERBOSE, "verbose"},
    {PQERRORS_SQLSTATE, PGW_ERRORS_SQLSTATE, "sqlstate"},
};

/* Every field, read by its protocol code, as libpq's PQresultErrorField
 * reads it. */
static void compare_fields(const PGresult *r, const pgw_error_t *e)
{
#define PGW__FIELD(code, member, desc)                  \
    {                                                   \
        const char *want = PQresultErrorField(r, code); \
        const char *got = pgw_error_field(e, code);     \
        if (want || got) {                              \
            assert_non_null(want);                      \
            assert_non_null(got);                       \
            assert_string_equal(got, want);             \
        }                                               \
        assert_ptr_equal(got, e->member);               \
    }
    PGW_ERROR_FIELD_MAP(PGW__FIELD)
#undef PGW__FIELD
}

/* Run sql on both; every verbosity must format identically, and every
 * field read by its code must be libpq's. */
static void compare(const char *sql)
{
    PGresult *r = PQexec(pq, sql);
    assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_exec(db, sql, &res), PGW_ESERVER);
    const pgw_error_t *e = pgw_result_error(res);
    assert_non_null(e);
    compare_fields(r, e);
    for (size_t v = 0; v < sizeof verbosities / sizeof *verbosities; v++) {
        char *want = verbosities[v].pq == PQERRORS_DEFAULT
                         ? strdup(PQresultErrorMessage(r))
                         : PQresultVerboseErrorMessage(r, verbosities[v].pq, PQSHOW_CONTEXT_ERRORS);
        char got[8192];
        int n = pgw_error_format(e, sql, verbosities[v].pgw, got, sizeof got);
        assert_int_equal(n, (int)strlen(got));
        if (strcmp(want, got) != 0)
            fail_msg("%s, %s:\n--- libpq\n%s--- libpgwire\n%s---", sql, verbosities[v].name, want,
                     got);
        if (v == 0) print_message("%s", got);
        if (verbosities[v].pq == PQERRORS_DEFAULT)
            free(want);
        else
            PQfreemem(want);
    }
    pgw_result_free(res);
    PQclear(r);
}

static void test_syntax_positions(void **state)
{
    compare("SELEC 1");
    compare("SELECT 1 +");
    compare("SELECT * FROM no_such_table");
    compare("SELECT 1, 2, no_such_column");
    compare("SELECT 1 ,, 2");
}

static void test_multi_line(void **state)
{
    compare("SELECT 1,\n  2,\n  no_such_column\nFROM pg_class");
    compare("SELECT 1,\r\n  2,\r\n  no_such_column");
    compare("SELECT 1,\r  no_such_column");
    compare("\n\n\nSELEC");
    compare("SELECT 1\n\n  FROM no_such_table\n  WHERE true");
}

static void test_multibyte_and_tabs(void **state)
{
    compare("SELECT 'h\xc3\xa9llo', no_such_column");
    compare("SELECT '\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e', no_such_column");
    compare("SELECT '\xf0\x9f\x98\x80 \xe2\x82\xac', no_such_column");
    compare("SELECT\t1,\t\tno_such_column");
    compare("\tSELECT\t'\xe6\x97\xa5',\tno_such_column\t");
}

static void test_long_lines(void **state)
{
    char sql[2048];
    /* the position far right: cut on the left and the right */
    int n = snprintf(sql, sizeof sql, "SELECT ");
    for (int i = 0; i < 40; i++)
        n += snprintf(sql + n, sizeof sql - (size_t)n, "%d + ", i);
    snprintf(sql + n, sizeof sql - (size_t)n, "no_such_column + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8");
    compare(sql);
    /* near the start: cut on the right only */
    n = snprintf(sql, sizeof sql, "SELECT no_such_column");
    for (int i = 0; i < 40; i++)
        n += snprintf(sql + n, sizeof sql - (size_t)n, " + %d", i);
    compare(sql);
    /* at the very end of a long line */
    n = snprintf(sql, sizeof sql, "SELECT ");
    for (int i = 0; i < 40; i++)
        n += snprintf(sql + n, sizeof sql - (size_t)n, "%d + ", i);
    compare(sql);
    /* wide characters on a long line, in a later line */
    n = snprintf(sql, sizeof sql, "SELECT 1,\n '");
    for (int i = 0; i < 30; i++)
        n += snprintf(sql + n, sizeof sql - (size_t)n, "\xe6\x97\xa5");
    snprintf(sql + n, sizeof sql - (size_t)n, "' || no_such_column || 'tail of the line here'");
    compare(sql);
}

static void test_detail_hint_context(void **state)
{
    compare("SELECT 'a'::name = 1");
    compare("DO $$BEGIN RAISE EXCEPTION 'boom' USING DETAIL = 'the detail', HINT = 'the hint'; "
            "END$$");
    compare("DO $$BEGIN EXECUTE 'SELECT 1,\n no_such_column'; END$$");
    compare("SELECT 1/0");
    /* one table both sessions see (a temporary one has a schema each) */
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE TABLE pgw_fmt_%d(a int CONSTRAINT pgw_fmt_pk_%d PRIMARY KEY)",
             (int)getpid(), (int)getpid());
    PGresult *r = PQexec(pq, sql);
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    snprintf(sql, sizeof sql, "INSERT INTO pgw_fmt_%d VALUES (1), (1)", (int)getpid());
    compare(sql);
    snprintf(sql, sizeof sql, "DROP TABLE pgw_fmt_%d", (int)getpid());
    PQclear(PQexec(pq, sql));
}

/* Without the query: libpq's " at character N"; a short buffer is cut and
 * NUL-terminated, and the length says how long the whole text is. */
static void test_no_query_and_short_buffer(void **state)
{
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_exec(db, "SELEC 1", &res), PGW_ESERVER);
    const pgw_error_t *e = pgw_result_error(res);
    char buf[256];
    int n = pgw_error_format(e, NULL, PGW_ERRORS_DEFAULT, buf, sizeof buf);
    assert_string_equal(buf, "ERROR:  syntax error at or near \"SELEC\" at character 1\n");
    assert_int_equal(n, (int)strlen(buf));
    int whole = pgw_error_format(e, "SELEC 1", PGW_ERRORS_DEFAULT, buf, sizeof buf);
    assert_string_equal(buf, "ERROR:  syntax error at or near \"SELEC\"\nLINE 1: SELEC 1\n"
                             "        ^\n");
    assert_int_equal(whole, (int)strlen(buf));
    assert_int_equal(pgw_error_format(e, "SELEC 1", PGW_ERRORS_DEFAULT, NULL, 0), whole);
    char small[10];
    assert_int_equal(pgw_error_format(e, "SELEC 1", PGW_ERRORS_DEFAULT, small, sizeof small),
                     whole);
    assert_string_equal(small, "ERROR:  s");
    assert_int_equal(pgw_error_format(NULL, NULL, PGW_ERRORS_DEFAULT, buf, sizeof buf), PGW_EINVAL);
    assert_int_equal(pgw_error_format(e, NULL, PGW_ERRORS_DEFAULT, NULL, 4), PGW_EINVAL);
    assert_null(pgw_error_field(e, 'Z'));
    assert_null(pgw_error_field(e, '\0'));
    assert_null(pgw_error_field(NULL, 'M'));
    pgw_result_free(res);
}

int main(void)
{
    pgt_require_server();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax_positions),
        cmocka_unit_test(test_multi_line),
        cmocka_unit_test(test_multibyte_and_tabs),
        cmocka_unit_test(test_long_lines),
        cmocka_unit_test(test_detail_hint_context),
        cmocka_unit_test(test_no_query_and_short_buffer),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
