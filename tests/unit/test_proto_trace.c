/*
 * Unit tests of the trace formatter's libpq form (src/proto/trace.c) on the
 * messages a session with a real server does not show PQtrace (the
 * differential program tests/pq/diff/trace compares the rest with libpq's
 * own output): what libpq 15's fe-trace.c prints for them, byte for byte,
 * with and without PQTRACE_REGRESS_MODE; and that the formatter reads
 * nothing past a message and leaves its output as it was when an
 * allocation fails.
 *
 * Each message is formatted from an exact-size heap copy, so a read past
 * its end is caught by ASan/valgrind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/trace_internal.h"

/* Message literals: sizeof - 1 drops the literal's own NUL. */
#define LIT(s) (const uint8_t *)(s), (sizeof(s) - 1)

/* The text for one message formatted with flags (the caller frees it). */
static char *format(unsigned flags, char dir, const uint8_t *msg, size_t len)
{
    uint8_t *copy = malloc(len);
    assert_non_null(copy);
    memcpy(copy, msg, len);
    pgw__trace_t t;
    pgw__trace_init(&t, flags);
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    assert_int_equal(pgw__trace_format(&t, &out, dir, copy, len), 0);
    free(copy);
    char *text = calloc(1, out.len + 1);
    assert_non_null(text);
    if (out.len) memcpy(text, out.data, out.len);
    pgw_buf_free(&out);
    return text;
}

static void expect(unsigned flags, char dir, const uint8_t *msg, size_t len, const char *want)
{
    char *got = format(flags, dir, msg, len);
    assert_string_equal(got, want);
    free(got);
}

#define LIBPQ   0u
#define REGRESS ((unsigned)PGW__TRACE_REGRESS)

static void test_notification_pid(void **state)
{
    (void)state;
    static const char m[] = "A\0\0\0\x0e\0\0\x30\x39"
                            "ch\0pl\0";
    expect(LIBPQ, 'B', LIT(m), "B\t14\tNotificationResponse\t 12345 \"ch\" \"pl\"\n");
    expect(REGRESS, 'B', LIT(m), "B\t14\tNotificationResponse\t NNNN \"ch\" \"pl\"\n");
}

static void test_backend_key(void **state)
{
    (void)state;
    static const char m[] = "K\0\0\0\x0c\0\0\0\x07\0\0\x01\0";
    expect(LIBPQ, 'B', LIT(m), "B\t12\tBackendKeyData\t 7 256\n");
    expect(REGRESS, 'B', LIT(m), "B\t12\tBackendKeyData\t NNNN NNNN\n");
}

/* Regress mode hides the F, L and R fields and the length. */
static void test_error_regress(void **state)
{
    (void)state;
    static const char m[] = "E\0\0\0\x1fSERROR\0Fx.c\0L12\0Rfn\0Mboom\0\0";
    expect(LIBPQ, 'B', LIT(m),
           "B\t31\tErrorResponse\t S \"ERROR\" F \"x.c\" L \"12\" R \"fn\" M \"boom\" \\x00\n");
    expect(
        REGRESS, 'B', LIT(m),
        "B\tNN\tErrorResponse\t S \"ERROR\" F \"SSSS\" L \"SSSS\" R \"SSSS\" M \"boom\" \\x00\n");
    static const char n[] = "N\0\0\0\x0d"
                            "Fx.c\0Mm\0\0";
    expect(REGRESS, 'B', LIT(n), "B\tNN\tNoticeResponse\t F \"SSSS\" M \"m\" \\x00\n");
}

static void test_function_call(void **state)
{
    (void)state;
    static const char m[] = "F\0\0\0\x16\0\0\x04\xd2\0\x01\0\x01\0\x01\0\0\0\x02"
                            "ab\0\x01";
    expect(LIBPQ, 'F', LIT(m), "F\t22\tFunctionCall\t 1234 1 1 1 2 'ab' 1\n");
    expect(REGRESS, 'F', LIT(m), "F\t22\tFunctionCall\t NNNN 1 1 1 2 'ab' 1\n");
    static const char v[] = "V\0\0\0\x0a\0\0\0\x02\x01\xff";
    expect(LIBPQ, 'B', LIT(v), "B\t10\tFunctionCallResponse\t 2 '\\x01\\xff'\n");
}

static void test_parse_oids(void **state)
{
    (void)state;
    static const char m[] = "P\0\0\0\x11\0q\0\0\x02\0\0\0\x17\0\0\0\x19";
    expect(LIBPQ, 'F', LIT(m), "F\t17\tParse\t \"\" \"q\" 2 23 25\n");
    expect(REGRESS, 'F', LIT(m), "F\t17\tParse\t \"\" \"q\" 2 NNNN NNNN\n");
}

static void test_copy_both(void **state)
{
    (void)state;
    static const char m[] = "W\0\0\0\x09\0\0\x01\0\0";
    expect(LIBPQ, 'B', LIT(m), "B\t9\tCopyBothResponse\t \\x00 1 0\n");
}

/* libpq prints the count alone, then its length check's line. */
static void test_negotiate_protocol(void **state)
{
    (void)state;
    static const char m[] = "v\0\0\0\x13\0\0\0\0\0\0\0\x01_pq_.x\0";
    expect(LIBPQ, 'B', LIT(m),
           "B\t19\tNegotiateProtocolVersion\t 0 1\n"
           "mismatched message length: consumed 12, expected 19\n");
    expect(PGW__TRACE_EXTENDED, 'B', LIT(m), "B\t19\tNegotiateProtocolVersion\t 0 1 \"_pq_.x\"\n");
}

/* CopyData by its length; what libpq has no layout for as Unknown. */
static void test_no_layout(void **state)
{
    (void)state;
    static const char d[] = "d\0\0\0\x07"
                            "abc";
    expect(LIBPQ, 'F', LIT(d), "F\t7\t\nmismatched message length: consumed 4, expected 7\n");
    static const char empty[] = "d\0\0\0\x04";
    expect(LIBPQ, 'F', LIT(empty), "F\t4\t\n");
    static const char p[] = "p\0\0\0\x09"
                            "abcd\0";
    expect(LIBPQ, 'F', LIT(p),
           "F\t9\tUnknown message: 70\nmismatched message length: consumed 4, expected 9\n");
    static const char y[] = "Y\0\0\0\x06zz";
    expect(LIBPQ, 'B', LIT(y),
           "B\t6\tUnknown message: 59\nmismatched message length: consumed 4, expected 6\n");
    static const char r[] = "R\0\0\0\x0c\0\0\0\x05salt";
    expect(LIBPQ, 'B', LIT(r),
           "B\t12\tAuthentication\t 5\nmismatched message length: consumed 8, expected 12\n");
}

/* The untyped messages: libpq names them by their length. */
static void test_untyped(void **state)
{
    (void)state;
    static const char cancel[] = "\0\0\0\x10\x04\xd2\x16\x2e\0\0\x04\xd2\0\0\x16\x2e";
    expect(LIBPQ, 'F', LIT(cancel), "F\t16\tCancelRequest\t 80877102 1234 5678\n");
    static const char startup[] = "\0\0\0\x12\0\x03\0\0user\0uvw\0\0";
    expect(LIBPQ, 'F', LIT(startup), "F\t18\tUnknown message: length is 18\n");
    expect(PGW__TRACE_EXTENDED, 'F', LIT(startup),
           "F\t18\tStartupMessage\t 3 0 \"user\" \"uvw\"\n");
    /* By its length alone, as libpq: 16 bytes are a CancelRequest. */
    static const char short_startup[] = "\0\0\0\x10\0\x03\0\0user\0u\0\0";
    expect(LIBPQ, 'F', LIT(short_startup), "F\t16\tCancelRequest\t 196608 1970496882 7667712\n");
}

/* A string without its terminator: printed up to there, nothing read past. */
static void test_truncated(void **state)
{
    (void)state;
    static const char m[] = "C\0\0\0\x07SEL";
    expect(LIBPQ, 'B', LIT(m),
           "B\t7\tCommandComplete\t\nmismatched message length: consumed 4, expected 7\n");
    expect(PGW__TRACE_EXTENDED, 'B', LIT(m), "B\t7\tCommandComplete\t <truncated>\n");
    static const char d[] = "D\0\0\0\x0c\0\x01\0\0\0\x09"
                            "ab";
    expect(LIBPQ, 'B', LIT(d),
           "B\t12\tDataRow\t 1 9\nmismatched message length: consumed 10, expected 12\n");
}

static int fail_after;

static void *fail_malloc(size_t n, void *ud)
{
    (void)ud;
    return fail_after-- > 0 ? malloc(n) : NULL;
}

static void *fail_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    return fail_after-- > 0 ? realloc(p, n) : NULL;
}

static void fail_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

/* Out of memory mid-line: an error, and the output as it was. */
static void test_alloc_failure(void **state)
{
    (void)state;
    static const pgw_allocator_t alloc = {NULL, fail_malloc, fail_realloc, fail_free};
    static const char m[] = "Q\0\0\0\x0dSELECT 1\0";
    pgw__trace_t t;
    pgw__trace_init(&t, 0);
    pgw_buf_t out;
    pgw_buf_init(&out, &alloc);
    fail_after = 1;
    assert_int_equal(pgw_buf_append(&out, "x", 1), 0);
    size_t before = out.len;
    int rc = 0;
    /* Grow the buffer past its first block until an allocation fails. */
    for (int i = 0; i < 10000 && rc == 0; i++)
        rc = pgw__trace_format(&t, &out, 'F', (const uint8_t *)m, sizeof m - 1);
    assert_int_equal(rc, PGW_ENOMEM);
    assert_true(out.len >= before);
    assert_int_equal((out.len - before) % strlen("F\t13\tQuery\t \"SELECT 1\"\n"), 0);
    pgw_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notification_pid),
        cmocka_unit_test(test_backend_key),
        cmocka_unit_test(test_error_regress),
        cmocka_unit_test(test_function_call),
        cmocka_unit_test(test_parse_oids),
        cmocka_unit_test(test_copy_both),
        cmocka_unit_test(test_negotiate_protocol),
        cmocka_unit_test(test_no_layout),
        cmocka_unit_test(test_untyped),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_alloc_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
