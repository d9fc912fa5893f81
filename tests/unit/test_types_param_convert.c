/*
 * Unit tests of parameter conversion to a statement's parameter types
 * (pgw__param_convert): each rule, each refusal, and the messages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include "pgwire/types_container.h"
#include "types/param_convert.h"
#include "types/types_internal.h"

/* Convert *in and expect rc; on success return the result (which may
 * point into *in: in must outlive it). */
static pgw_param_t conv_at(const pgw_param_t *in, uint32_t target, int want_rc)
{
    pgw_param_t out;
    memset(&out, 0x5a, sizeof out);
    int rc = pgw__param_convert(in, target, &out);
    if (rc != want_rc) fail_msg("convert to %u: rc %d, want %d", target, rc, want_rc);
    return out;
}

/* conv_at for a conversion that keeps no pointer into in. */
static pgw_param_t conv(pgw_param_t in, uint32_t target, int want_rc)
{
    return conv_at(&in, target, want_rc);
}

/* The bytes out's Bind value would carry (through the COPY field writer,
 * which encodes a parameter the way Bind does), compared with want. */
static void expect_wire(const pgw_param_t *out, const void *want, size_t n)
{
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_copy_bin_field(&b, out), 0);
    assert_int_equal(b.len, 4 + n);
    assert_memory_equal(b.data + 4, want, n);
    pgw_buf_free(&b);
}

static void test_unchanged(void **state)
{
    (void)state;
    pgw_param_t in = pgw_int4(7), out;
    out = conv(in, PGW_OID_INT4, 0);
    assert_memory_equal(&out, &in, sizeof in);
    out = conv(in, 0, 0);
    assert_memory_equal(&out, &in, sizeof in);
    /* Text is parsed by the server, whatever the type. */
    pgw_param_t t = pgw_text("2024-01-01");
    out = conv(t, PGW_OID_DATE, 0);
    assert_memory_equal(&out, &t, sizeof t);
    /* Types the table does not know are left to the server. */
    out = conv(in, 123456, 0);
    assert_memory_equal(&out, &in, sizeof in);
    out = conv(in, PGW_OID_INT8_ARRAY, 0);
    assert_memory_equal(&out, &in, sizeof in);
}

static void test_null_takes_target(void **state)
{
    (void)state;
    pgw_param_t out = conv(pgw_null(0), PGW_OID_UUID, 0);
    assert_int_equal(out.kind, PGW_PARAM_NULL);
    assert_int_equal(out.oid, PGW_OID_UUID);
    out = conv(pgw_null(PGW_OID_INT4), PGW_OID_INT8, 0);
    assert_int_equal(out.oid, PGW_OID_INT8);
}

static void test_integers(void **state)
{
    (void)state;
    pgw_param_t out = conv(pgw_int8(42), PGW_OID_INT4, 0);
    assert_int_equal(out.kind, PGW_PARAM_INT4);
    assert_int_equal(out.oid, PGW_OID_INT4);
    expect_wire(&out, "\0\0\0\x2a", 4);
    out = conv(pgw_int2(-1), PGW_OID_INT8, 0);
    assert_int_equal(out.kind, PGW_PARAM_INT8);
    expect_wire(&out, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
    out = conv(pgw_int4(-32768), PGW_OID_INT2, 0);
    assert_int_equal(out.kind, PGW_PARAM_INT2);
    out = conv(pgw_int8(4000000000), PGW_OID_OID, 0);
    expect_wire(&out, "\xee\x6b\x28\x00", 4);
    out = conv(pgw_oid_param(4000000000u), PGW_OID_INT8, 0);
    assert_int_equal(out.u.i, 4000000000);

    conv(pgw_int8(5000000000), PGW_OID_INT4, PGW_ERANGE);
    conv(pgw_int4(32768), PGW_OID_INT2, PGW_ERANGE);
    conv(pgw_int4(-1), PGW_OID_OID, PGW_ERANGE);
    conv(pgw_int8(INT64_C(1) << 32), PGW_OID_OID, PGW_ERANGE);
}

static void test_floats(void **state)
{
    (void)state;
    pgw_param_t out = conv(pgw_float4(1.5f), PGW_OID_FLOAT8, 0);
    assert_int_equal(out.kind, PGW_PARAM_FLOAT8);
    assert_true(out.u.f8 == 1.5);
    out = conv(pgw_float8(0.25), PGW_OID_FLOAT4, 0);
    assert_int_equal(out.kind, PGW_PARAM_FLOAT4);
    assert_true(out.u.f4 == 0.25f);
    out = conv(pgw_float8(-HUGE_VAL), PGW_OID_FLOAT4, 0);
    assert_true(out.u.f4 < 0 && out.u.f4 * 0 != 0);
    conv(pgw_float8(0.1), PGW_OID_FLOAT4, PGW_ERANGE);
    conv(pgw_float8(1e300), PGW_OID_FLOAT4, PGW_ERANGE);
    /* Integers when exact. */
    out = conv(pgw_int4(16777216), PGW_OID_FLOAT4, 0);
    assert_true(out.u.f4 == 16777216.0f);
    conv(pgw_int4(16777217), PGW_OID_FLOAT4, PGW_ERANGE);
    out = conv(pgw_int8(INT64_C(1) << 53), PGW_OID_FLOAT8, 0);
    assert_true(out.u.f8 == 9007199254740992.0);
    conv(pgw_int8((INT64_C(1) << 53) + 1), PGW_OID_FLOAT8, PGW_ERANGE);
    /* Not the other way. */
    conv(pgw_float8(1.0), PGW_OID_INT4, PGW_ETYPE);
    conv(pgw_float4(1.0f), PGW_OID_NUMERIC, PGW_ETYPE);
}

static void test_integer_to_numeric(void **state)
{
    (void)state;
    pgw_param_t in = pgw_int8(-1234567890123);
    pgw_param_t out = conv_at(&in, PGW_OID_NUMERIC, 0);
    assert_int_equal(out.oid, PGW_OID_NUMERIC);
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_copy_bin_field(&b, &out), 0);
    pgw_value_t v = {b.data + 4, (int32_t)b.len - 4, PGW_FORMAT_BINARY, PGW_OID_NUMERIC};
    int64_t x;
    assert_int_equal(pgw_get_numeric_int64(&v, &x), 0);
    assert_true(x == -1234567890123);
    pgw_buf_free(&b);

    in = pgw_int8(INT64_MIN);
    out = conv_at(&in, PGW_OID_NUMERIC, 0);
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_copy_bin_field(&b, &out), 0);
    v.p = b.data + 4;
    v.len = (int32_t)b.len - 4;
    assert_int_equal(pgw_get_numeric_int64(&v, &x), 0);
    assert_true(x == INT64_MIN);
    pgw_buf_free(&b);
}

static void test_binary_identical_text(void **state)
{
    (void)state;
    pgw_param_t in = pgw_raw(PGW_OID_TEXT, PGW_FORMAT_BINARY, "abc", 3);
    static const uint32_t same[] = {PGW_OID_VARCHAR, PGW_OID_BPCHAR, PGW_OID_NAME, PGW_OID_JSON,
                                    PGW_OID_XML};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        pgw_param_t out = conv(in, same[i], 0);
        assert_int_equal(out.oid, same[i]);
        expect_wire(&out, "abc", 3);
    }
    pgw_param_t j = pgw_raw(PGW_OID_JSON, PGW_FORMAT_BINARY, "{}", 2);
    pgw_param_t out = conv(j, PGW_OID_TEXT, 0);
    expect_wire(&out, "{}", 2);
    /* json text to jsonb gains the version byte. */
    out = conv_at(&j, PGW_OID_JSONB, 0);
    assert_int_equal(out.oid, PGW_OID_JSONB);
    expect_wire(&out, "\1{}", 3);
    /* Not from jsonb's own form (an encoder with the byte), nor to "char". */
    conv(pgw_jsonb("{}"), PGW_OID_JSON, PGW_ETYPE);
    conv(in, PGW_OID_CHAR, PGW_ETYPE);
}

static void test_refusals(void **state)
{
    (void)state;
    uint8_t u[16] = {0};
    conv(pgw_int4(1), PGW_OID_UUID, PGW_ETYPE);
    conv(pgw_int4(1), PGW_OID_TEXT, PGW_ETYPE);
    conv(pgw_int4(1), PGW_OID_BOOL, PGW_ETYPE);
    conv(pgw_bool(true), PGW_OID_INT4, PGW_ETYPE);
    conv(pgw_bool(true), PGW_OID_TEXT, PGW_ETYPE);
    conv(pgw_bytea("x", 1), PGW_OID_UUID, PGW_ETYPE);
    conv(pgw_bytea("x", 1), PGW_OID_TEXT, PGW_ETYPE);
    conv(pgw_uuid(u), PGW_OID_BYTEA, PGW_ETYPE);
    /* A date is an int4 in C but not an integer type. */
    conv(pgw_date(1), PGW_OID_INT4, PGW_ETYPE);
    conv(pgw_timestamp(1), PGW_OID_TIMESTAMPTZ, PGW_ETYPE);
    conv(pgw_int8(1), PGW_OID_TIMESTAMP, PGW_ETYPE);
    pgw_param_t in = pgw_int4(1), out;
    assert_int_equal(pgw__param_convert(NULL, PGW_OID_INT4, &out), PGW_EINVAL);
    assert_int_equal(pgw__param_convert(&in, PGW_OID_INT4, NULL), PGW_EINVAL);
}

static void test_messages(void **state)
{
    (void)state;
    char buf[160];
    pgw_param_t p = pgw_int8(5000000000);
    size_t n = pgw__param_convert_message(buf, sizeof buf, 1, &p, PGW_OID_INT4, PGW_ERANGE);
    assert_string_equal(buf,
                        "parameter $2: int8 value 5000000000 does not fit the statement's int4");
    assert_int_equal(n, strlen(buf));
    p = pgw_int4(1);
    pgw__param_convert_message(buf, sizeof buf, 0, &p, PGW_OID_UUID, PGW_ETYPE);
    assert_string_equal(buf, "parameter $1: int4 cannot be sent as uuid");
    p = pgw_float8(0.1);
    pgw__param_convert_message(buf, sizeof buf, 2, &p, PGW_OID_FLOAT4, PGW_ERANGE);
    assert_string_equal(buf, "parameter $3: float8 value 0.10000000000000001 does not fit the "
                             "statement's float4 exactly");
    p = pgw_raw(70000, PGW_FORMAT_BINARY, "x", 1);
    pgw__param_convert_message(buf, sizeof buf, 0, &p, 70001, PGW_ETYPE);
    assert_string_equal(buf, "parameter $1: type 70000 cannot be sent as type 70001");
    /* Cut to the buffer, the full length still reported. */
    p = pgw_int4(1);
    n = pgw__param_convert_message(buf, 10, 0, &p, PGW_OID_UUID, PGW_ETYPE);
    assert_int_equal(n, strlen("parameter $1: int4 cannot be sent as uuid"));
    assert_int_equal(strlen(buf), 9);
    assert_int_equal(pgw__param_convert_message(NULL, 0, 0, &p, PGW_OID_UUID, PGW_ETYPE), n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unchanged),          cmocka_unit_test(test_null_takes_target),
        cmocka_unit_test(test_integers),           cmocka_unit_test(test_floats),
        cmocka_unit_test(test_integer_to_numeric), cmocka_unit_test(test_binary_identical_text),
        cmocka_unit_test(test_refusals),           cmocka_unit_test(test_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
