/*
 * Unit tests of the COPY row encoders: binary COPY against hand-computed
 * bytes, text and CSV quoting and escaping, and buffer limits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pgwire/types_container.h"
#include "util/internal.h"

#define EXPECT_BYTES(b, lit)                                  \
    do {                                                      \
        assert_int_equal((b)->len, sizeof(lit) - 1);          \
        assert_memory_equal((b)->data, lit, sizeof(lit) - 1); \
    } while (0)

static void test_binary_copy(void **state)
{
    (void)state;
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_copy_bin_begin(&b), 0);
    EXPECT_BYTES(&b, "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0\0");
    pgw_buf_reset(&b);

    /* One row: int4 7, int8 -1, float8 1.5, text "hé", NULL, bool, int2. */
    assert_int_equal(pgw_copy_bin_row_begin(&b, 7), 0);
    assert_int_equal(pgw_copy_bin_int4(&b, 7), 0);
    assert_int_equal(pgw_copy_bin_int8(&b, -1), 0);
    assert_int_equal(pgw_copy_bin_float8(&b, 1.5), 0);
    assert_int_equal(pgw_copy_bin_text(&b, "h\xc3\xa9", 3), 0);
    assert_int_equal(pgw_copy_bin_null(&b), 0);
    assert_int_equal(pgw_copy_bin_bool(&b, true), 0);
    assert_int_equal(pgw_copy_bin_int2(&b, -2), 0);
    assert_int_equal(pgw_copy_bin_end(&b), 0);
    EXPECT_BYTES(&b, "\0\7"
                     "\0\0\0\4\0\0\0\7"
                     "\0\0\0\10\377\377\377\377\377\377\377\377"
                     "\0\0\0\10\x3f\xf8\0\0\0\0\0\0"
                     "\0\0\0\3h\xc3\xa9"
                     "\377\377\377\377"
                     "\0\0\0\1\1"
                     "\0\0\0\2\377\376"
                     "\377\377");

    /* The same fields through pgw_param_t give the same bytes. */
    pgw_buf_t p;
    pgw_buf_init(&p, NULL);
    pgw_param_t params[] = {pgw_int4(7),           pgw_int8(-1),           pgw_float8(1.5),
                            pgw_text("h\xc3\xa9"), pgw_null(PGW_OID_TEXT), pgw_bool(true),
                            pgw_int2(-2)};
    assert_int_equal(pgw_copy_bin_row_begin(&p, 7), 0);
    for (size_t i = 0; i < PGW__ARRAY_LEN(params); i++)
        assert_int_equal(pgw_copy_bin_field(&p, &params[i]), 0);
    assert_int_equal(pgw_copy_bin_end(&p), 0);
    assert_int_equal(p.len, b.len);
    assert_memory_equal(p.data, b.data, b.len);

    /* Arrays and other encoders as fields: length prefix patched in. */
    pgw_buf_reset(&p);
    int32_t arr[] = {1, 2};
    pgw_array_enc_t ac;
    pgw_array_enc_init(&ac, PGW_OID_INT4, arr, 2, NULL);
    pgw_param_t ap = pgw_array_param(&ac);
    assert_int_equal(pgw_copy_bin_field(&p, &ap), 0);
    assert_int_equal(pgw__get32(p.data), 36);
    assert_int_equal(p.len, 40);
    /* float4, bytea, jsonb text. */
    pgw_buf_reset(&p);
    pgw_param_t f4 = pgw_float4(-0.5f), by = pgw_bytea("\0\1", 2),
                jb = pgw_text_typed("{}", -1, PGW_OID_JSONB);
    assert_int_equal(pgw_copy_bin_field(&p, &f4), 0);
    assert_int_equal(pgw_copy_bin_field(&p, &by), 0);
    assert_int_equal(pgw_copy_bin_field(&p, &jb), 0);
    EXPECT_BYTES(&p, "\0\0\0\4\xbf\0\0\0"
                     "\0\0\0\2\0\1"
                     "\0\0\0\3\1{}");
    /* Text params of non-text types cannot go into binary COPY. */
    pgw_buf_reset(&p);
    pgw_param_t bad = pgw_text_typed("12", -1, PGW_OID_INT4);
    assert_int_equal(pgw_copy_bin_field(&p, &bad), PGW_EINVAL);
    assert_int_equal(p.len, 0);
    pgw_buf_free(&p);
    pgw_buf_free(&b);
}

static int failing_encoder(const void *ctx, pgw_buf_t *out)
{
    (void)ctx;
    pgw_buf_append(out, "junk", 4);
    return PGW_ERANGE;
}

static void test_binary_errors_leave_buffer(void **state)
{
    (void)state;
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_buf_append(&b, "ab", 2), 0);
    pgw_param_t e = pgw_encoded(0, failing_encoder, NULL);
    assert_int_equal(pgw_copy_bin_field(&b, &e), PGW_ERANGE);
    assert_int_equal(b.len, 2);
    b.max = 8;
    assert_int_equal(pgw_copy_bin_int8(&b, 1), PGW_ETOOBIG);
    assert_int_equal(pgw_copy_bin_text(&b, "toolong", 7), PGW_ETOOBIG);
    assert_int_equal(b.len, 2);
    assert_int_equal(pgw_copy_bin_row_begin(&b, 40000), PGW_EINVAL);
    assert_int_equal(pgw_copy_bin_row_begin(&b, 65536 + 7), PGW_EINVAL); /* not 7 */
    /* room left below max and below cap: a field that fills max exactly
     * fits, one byte more does not */
    b.max = b.len + 8;
    assert_true(b.cap > b.max);
    assert_int_equal(pgw_copy_bin_int4(&b, 7), 0);
    assert_int_equal(b.len, 10);
    assert_int_equal(pgw_copy_bin_row_begin(&b, 1), PGW_ETOOBIG);
    assert_int_equal(pgw_copy_text_int4(&b, 1), PGW_ETOOBIG);
    assert_int_equal(b.len, 10);
    pgw_buf_free(&b);
}

static void test_text_copy(void **state)
{
    (void)state;
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_copy_text_int4(&b, -2147483647 - 1), 0);
    assert_int_equal(pgw_copy_text_int8(&b, INT64_MIN), 0);
    assert_int_equal(pgw_copy_text_float8(&b, 0.1), 0);
    assert_int_equal(pgw_copy_text_field(&b, "a\tb\nc\\d\re", 9), 0);
    assert_int_equal(pgw_copy_text_null(&b), 0);
    assert_int_equal(pgw_copy_text_field(&b, "", 0), 0);
    assert_int_equal(pgw_copy_text_row_end(&b), 0);
    assert_int_equal(pgw_copy_text_float8(&b, -1.0 / 0.0), 0);
    assert_int_equal(pgw_copy_text_int4(&b, 0), 0);
    assert_int_equal(pgw_copy_text_row_end(&b), 0);
    /* A row of one NULL, and a row with no fields. */
    assert_int_equal(pgw_copy_text_null(&b), 0);
    assert_int_equal(pgw_copy_text_row_end(&b), 0);
    assert_int_equal(pgw_copy_text_row_end(&b), 0);
    EXPECT_BYTES(&b, "-2147483648\t-9223372036854775808\t0.1\t"
                     "a\\tb\\nc\\\\d\\re\t\\N\t\n"
                     "-Infinity\t0\n"
                     "\\N\n"
                     "\n");
    pgw_buf_reset(&b);
    assert_int_equal(pgw_copy_text_float8(&b, 0.0 / 0.0), 0);
    assert_int_equal(pgw_copy_text_float8(&b, 1e300), 0);
    assert_int_equal(pgw_copy_text_float8(&b, 1.7976931348623157e308), 0);
    assert_int_equal(pgw_copy_text_row_end(&b), 0);
    EXPECT_BYTES(&b, "NaN\t1e+300\t1.7976931348623157e+308\n");
    pgw_buf_free(&b);
}

static void test_csv_copy(void **state)
{
    (void)state;
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_copy_csv_field(&b, "plain", 5), 0);
    assert_int_equal(pgw_copy_csv_field(&b, "a,b", 3), 0);
    assert_int_equal(pgw_copy_csv_field(&b, "q\"t", 3), 0);
    assert_int_equal(pgw_copy_csv_field(&b, "", 0), 0);
    assert_int_equal(pgw_copy_csv_null(&b), 0);
    assert_int_equal(pgw_copy_csv_field(&b, "l1\nl2", 5), 0);
    assert_int_equal(pgw_copy_csv_field(&b, "\\.", 2), 0);
    assert_int_equal(pgw_copy_csv_null(&b), 0);
    assert_int_equal(pgw_copy_csv_row_end(&b), 0);
    EXPECT_BYTES(&b, "plain,\"a,b\",\"q\"\"t\",\"\",,\"l1\nl2\",\"\\.\",\n");
    pgw_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary_copy),
        cmocka_unit_test(test_binary_errors_leave_buffer),
        cmocka_unit_test(test_text_copy),
        cmocka_unit_test(test_csv_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
