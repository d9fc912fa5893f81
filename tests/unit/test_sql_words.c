/*
 * The SQL words that change how the session sends a statement
 * (pgw__sql_words, session/stmt.c): whole words in any case, by ASCII
 * rules, inside literals and comments too.
 */
#include "session/session_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static unsigned words(const char *sql)
{
    return pgw__sql_words(sql, strlen(sql));
}

static void test_words_found(void **state)
{
    (void)state;
    assert_int_equal(words("COPY t FROM STDIN"), PGW__SQL_COPY);
    assert_int_equal(words("select 1;copy t to stdout"), PGW__SQL_COPY);
    assert_int_equal(words("START_REPLICATION SLOT s LOGICAL 0/0"), PGW__SQL_COPY);
    assert_int_equal(words("PREPARE p AS SELECT 1"), PGW__SQL_REPLACES);
    assert_int_equal(words("DeAllocate ALL"), PGW__SQL_REPLACES);
    assert_int_equal(words("discard all"), PGW__SQL_REPLACES);
    assert_int_equal(words("prepare p as select 1; copy t from stdin"),
                     PGW__SQL_REPLACES | PGW__SQL_COPY);
    /* an over-approximation: a literal or a comment counts */
    assert_int_equal(words("SELECT 'copy'"), PGW__SQL_COPY);
    assert_int_equal(words("SELECT 1 -- discard"), PGW__SQL_REPLACES);
    /* the SQL's length bounds the scan, not its NUL */
    assert_int_equal(pgw__sql_words("copy", 3), 0);
    assert_int_equal(pgw__sql_words("copying", 4), PGW__SQL_COPY);
}

static void test_words_whole_only(void **state)
{
    (void)state;
    assert_int_equal(words(""), 0);
    assert_int_equal(words("SELECT 1"), 0);
    assert_int_equal(words("SELECT copy_id, xcopy, copy2, copy$, _copy FROM t"), 0);
    assert_int_equal(words("SELECT prepared, discarded, deallocated"), 0);
    assert_int_equal(words("SELECT start_replication_x"), 0);
    /* bytes from 0x80 are word characters (an identifier in UTF-8) */
    assert_int_equal(words("SELECT \303\251copy"), 0); /* octal: \xa9c would be one escape */
    assert_int_equal(words("SELECT copy\xc3\xa9"), 0);
    /* every other ASCII byte separates words */
    assert_int_equal(words("(copy)"), PGW__SQL_COPY);
    assert_int_equal(words("\"copy\""), PGW__SQL_COPY);
    assert_int_equal(words("x.copy.y"), PGW__SQL_COPY);
    assert_int_equal(words("\tcopy\n"), PGW__SQL_COPY);
    assert_int_equal(words("@copy`"), PGW__SQL_COPY);
    assert_int_equal(words("[copy]{discard}"), PGW__SQL_COPY | PGW__SQL_REPLACES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words_found),
        cmocka_unit_test(test_words_whole_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
