/*
 * Unit tests of pgw_escape_identifier / pgw_escape_literal: quoting rules
 * and strict UTF-8 validation (nothing is returned for invalid input).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "failalloc.h"
#include "pgwire/types_container.h"
#include "util/internal.h"

static void expect_lit(const char *in, size_t len, const char *want)
{
    char *out = (char *)1;
    assert_int_equal(pgw_escape_literal(NULL, in, len, &out), 0);
    assert_string_equal(out, want);
    pgw_escape_free(NULL, out);
}

static void expect_ident(const char *in, const char *want)
{
    char *out = NULL;
    assert_int_equal(pgw_escape_identifier(NULL, in, strlen(in), &out), 0);
    assert_string_equal(out, want);
    pgw_escape_free(NULL, out);
}

static void test_literal(void **state)
{
    (void)state;
    expect_lit("abc", 3, "'abc'");
    expect_lit("", 0, "''");
    expect_lit("it's", 4, "'it''s'");
    expect_lit("a\\b'", 4, " E'a\\\\b'''");
    expect_lit("\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80", 10, "'\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80'");
    expect_lit("\"", 1, "'\"'");
    expect_lit("\xef\xbf\xbf\xf4\x8f\xbf\xbf", 7, "'\xef\xbf\xbf\xf4\x8f\xbf\xbf'");
}

static void test_identifier(void **state)
{
    (void)state;
    expect_ident("users", "\"users\"");
    expect_ident("we\"ird", "\"we\"\"ird\"");
    expect_ident("a\\b'c", "\"a\\b'c\"");
    expect_ident("", "\"\"");
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t n;
    } bad[] = {
        {"\xC0'; DROP TABLE x; --", 20}, /* overlong lead byte */
        {"\xC1\xBF", 2},                 /* overlong */
        {"\xE0\x80\xAF", 3},             /* overlong 3-byte '/' */
        {"\xF0\x80\x80\xAF", 4},         /* overlong 4-byte */
        {"\xED\xA0\x80", 3},             /* surrogate U+D800 */
        {"\xED\xBF\xBF", 3},             /* surrogate U+DFFF */
        {"\xF4\x90\x80\x80", 4},         /* U+110000 */
        {"\xF5\x80\x80\x80", 4},         /* lead byte past F4 */
        {"\xFF", 1},
        {"\x80", 1},         /* stray continuation */
        {"ab\xC3", 3},       /* truncated 2-byte */
        {"\xE2\x82", 2},     /* truncated 3-byte */
        {"\xF0\x9F\x98", 3}, /* truncated 4-byte */
        {"\xC3\x28", 2},     /* bad continuation */
        {"a\0b", 3},         /* NUL */
        {"\xE2\x28\xA1", 3},
    };
    for (size_t i = 0; i < PGW__ARRAY_LEN(bad); i++) {
        char *out = (char *)1;
        assert_int_equal(pgw_escape_literal(NULL, bad[i].s, bad[i].n, &out), PGW_EENCODING);
        assert_null(out);
        out = (char *)1;
        assert_int_equal(pgw_escape_identifier(NULL, bad[i].s, bad[i].n, &out), PGW_EENCODING);
        assert_null(out);
    }
    char *out;
    assert_int_equal(pgw_escape_literal(NULL, NULL, 3, &out), PGW_EINVAL);
    assert_null(out);
}

static void test_allocator(void **state)
{
    (void)state;
    pgt_alloc_t fa;
    const pgw_allocator_t *a = pgt_alloc_init(&fa);
    fa.fail_at = 1;
    fa.fail_rest = 1; /* every allocation fails */
    char *out = (char *)1;
    assert_int_equal(pgw_escape_literal(a, "x", 1, &out), PGW_ENOMEM);
    assert_null(out);
    assert_int_equal(fa.calls, 1);
    /* Invalid input is rejected before any allocation. */
    assert_int_equal(pgw_escape_identifier(a, "\xC0", 1, &out), PGW_EENCODING);
    assert_int_equal(fa.calls, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literal),
        cmocka_unit_test(test_identifier),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_allocator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
