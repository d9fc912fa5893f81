/*
 * Unit tests of composite values (records): binary and text decoding with
 * the field iterator, malformed input, the encoder, and the type registry.
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

static pgw_value_t text_val(const char *s)
{
    pgw_value_t v = {(const uint8_t *)s, (int32_t)strlen(s), PGW_FORMAT_TEXT, PGW_OID_RECORD};
    return v;
}

static void expect_field(pgw_record_iter_t *it, const char *s)
{
    pgw_value_t f;
    assert_int_equal(pgw_record_next(it, &f), 1);
    if (!s) {
        assert_int_equal(f.len, -1);
        return;
    }
    assert_int_equal(f.len, (int32_t)strlen(s));
    assert_memory_equal(f.p, s, strlen(s));
}

static void test_text(void **state)
{
    (void)state;
    pgw_record_t r;
    pgw_record_iter_t it;
    pgw_value_t f;
    const char *s = "(1,\"a b\",)";
    pgw_value_t v = text_val(s);
    assert_int_equal(pgw_record_parse(&v, &r), 0);
    assert_int_equal(r.nfields, 3);
    pgw_record_iter_init(&it, &r, NULL, 0);
    expect_field(&it, "1");
    expect_field(&it, "a b");
    expect_field(&it, NULL);
    assert_int_equal(pgw_record_next(&it, &f), 0);

    /* "" is the empty string; whitespace is data; doubled quotes and
     * backslashes need scratch. */
    v = text_val("( x ,\"\",\"q\"\"t\",\"b\\\\s\",,\"(,)\")");
    assert_int_equal(pgw_record_parse(&v, &r), 0);
    assert_int_equal(r.nfields, 6);
    pgw_record_iter_init(&it, &r, NULL, 0);
    expect_field(&it, " x ");
    expect_field(&it, "");
    assert_int_equal(pgw_record_next(&it, &f), PGW_ERANGE);
    assert_int_equal(it.need, 6);
    char scratch[64];
    pgw_record_iter_set_scratch(&it, scratch, sizeof scratch);
    expect_field(&it, "q\"t");
    expect_field(&it, "b\\s");
    expect_field(&it, NULL);
    expect_field(&it, "(,)");
    assert_int_equal(pgw_record_next(&it, &f), 0);

    v = text_val("()");
    assert_int_equal(pgw_record_parse(&v, &r), 0);
    assert_int_equal(r.nfields, 1);

    static const char *bad[] = {"", "(", "(1,2", "1,2)", "(1)x", "(\"a)", "(a\\", "x(1)"};
    for (size_t i = 0; i < PGW__ARRAY_LEN(bad); i++) {
        v = text_val(bad[i]);
        int rc = pgw_record_parse(&v, &r);
        if (rc != PGW_EFORMAT) fail_msg("accepted %s (rc %d)", bad[i], rc);
    }
}

static void test_binary_and_encode(void **state)
{
    (void)state;
    pgw_param_t fields[] = {pgw_int4(1), pgw_text("a"), pgw_null(PGW_OID_TEXT)};
    pgw_record_enc_t ctx = {12345, fields, 3};
    pgw_param_t p = pgw_record_param(&ctx);
    assert_int_equal(p.oid, 12345);
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(p.u.enc.fn(p.u.enc.ctx, &b), 0);
    static const uint8_t want[] = {0, 0, 0,  3, 0, 0, 0, 23,  0, 0, 0, 4,  0,    0,    0,    1,   0,
                                   0, 0, 25, 0, 0, 0, 1, 'a', 0, 0, 0, 25, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(b.len, sizeof want);
    assert_memory_equal(b.data, want, sizeof want);

    pgw_value_t v = {b.data, (int32_t)b.len, PGW_FORMAT_BINARY, PGW_OID_RECORD};
    pgw_record_t r;
    pgw_record_iter_t it;
    pgw_value_t f;
    assert_int_equal(pgw_record_parse(&v, &r), 0);
    assert_int_equal(r.nfields, 3);
    pgw_record_iter_init(&it, &r, NULL, 0);
    assert_int_equal(pgw_record_next(&it, &f), 1);
    assert_int_equal(f.oid, PGW_OID_INT4);
    assert_int_equal(f.format, PGW_FORMAT_BINARY);
    int32_t x;
    assert_int_equal(pgw_get_int4(&f, &x), 0);
    assert_int_equal(x, 1);
    assert_int_equal(pgw_record_next(&it, &f), 1);
    assert_int_equal(f.oid, PGW_OID_TEXT);
    pgw_str_t str;
    assert_int_equal(pgw_get_text(&f, &str), 0);
    assert_int_equal(str.len, 1);
    assert_int_equal(pgw_record_next(&it, &f), 1);
    assert_int_equal(f.len, -1);
    assert_int_equal(pgw_record_next(&it, &f), 0);

    /* Malformed: field length overrun, bad negative length, count too
     * large, trailing bytes, short. */
    uint8_t bad[sizeof want + 1];
    memcpy(bad, want, sizeof want);
    bad[23] = 9;
    v = (pgw_value_t){bad, sizeof want, PGW_FORMAT_BINARY, 0};
    assert_int_equal(pgw_record_parse(&v, &r), PGW_EFORMAT);
    memcpy(bad, want, sizeof want);
    bad[31] = 0xfe;
    assert_int_equal(pgw_record_parse(&v, &r), PGW_EFORMAT);
    memcpy(bad, want, sizeof want);
    bad[3] = 4;
    assert_int_equal(pgw_record_parse(&v, &r), PGW_EFORMAT);
    bad[3] = 3;
    bad[sizeof want] = 0;
    v.len = sizeof want + 1;
    assert_int_equal(pgw_record_parse(&v, &r), PGW_EFORMAT);
    v.len = 3;
    assert_int_equal(pgw_record_parse(&v, &r), PGW_EFORMAT);
    bad[0] = 0x80;
    v.len = sizeof want;
    assert_int_equal(pgw_record_parse(&v, &r), PGW_EFORMAT);
    pgw_value_t nv = {NULL, -1, PGW_FORMAT_BINARY, 0};
    assert_int_equal(pgw_record_parse(&nv, &r), PGW_ENULL);

    /* Encoder errors leave the buffer unchanged. */
    pgw_buf_reset(&b);
    pgw_param_t badf[] = {pgw_int4(1), pgw_text_typed("1", -1, PGW_OID_INT4)};
    pgw_record_enc_t bctx = {1, badf, 2};
    assert_int_equal(pgw_encode_record(&bctx, &b), PGW_EINVAL);
    assert_int_equal(b.len, 0);
    pgw_buf_free(&b);
}

/* ---- registry ----------------------------------------------------------- */

static int decode_len(const pgw_value_t *v, void *out, void *ud)
{
    *(int32_t *)out = v->len + *(int *)ud;
    return 0;
}

static void test_registry(void **state)
{
    (void)state;
    pgw_type_registry_t *reg;
    assert_int_equal(pgw_type_registry_new(&reg, NULL), 0);
    int bias = 100;
    pgw_type_info_t hstore = {70001, "hstore", PGW_TYPE_TEXT | PGW_TYPE_BINARY, decode_len, &bias};
    assert_int_equal(pgw_type_register(reg, &hstore), 0);
    assert_int_equal(pgw_type_register_name(reg, "vector", 70002), 0);
    uint32_t oid = 0;
    assert_int_equal(pgw_type_lookup_name(reg, "hstore", &oid), 0);
    assert_int_equal(oid, 70001);
    assert_int_equal(pgw_type_lookup_name(reg, "vector", &oid), 0);
    assert_int_equal(oid, 70002);
    assert_int_equal(pgw_type_lookup_name(reg, "nope", &oid), PGW_ENOTFOUND);
    const pgw_type_info_t *info;
    assert_int_equal(pgw_type_lookup(reg, 70001, &info), 0);
    assert_string_equal(info->name, "hstore");
    assert_true(info->name != hstore.name); /* copied */
    assert_int_equal(pgw_type_lookup(reg, 5, &info), PGW_ENOTFOUND);

    pgw_value_t v = {(const uint8_t *)"abc", 3, PGW_FORMAT_BINARY, 70001};
    int32_t out = 0;
    assert_int_equal(pgw_type_decode(reg, &v, &out), 0);
    assert_int_equal(out, 103);
    /* vector has no callback: raw bytes; text-only types refuse binary. */
    v.oid = 70002;
    assert_int_equal(pgw_type_decode(reg, &v, &out), PGW_ENOTFOUND);
    pgw_type_info_t textonly = {70003, NULL, PGW_TYPE_TEXT, decode_len, &bias};
    assert_int_equal(pgw_type_register(reg, &textonly), 0);
    v.oid = 70003;
    assert_int_equal(pgw_type_decode(reg, &v, &out), PGW_ETYPE);

    /* Re-registering keeps the name when none is given. */
    pgw_type_info_t again = {70002, NULL, PGW_TYPE_BINARY, NULL, NULL};
    assert_int_equal(pgw_type_register(reg, &again), 0);
    assert_int_equal(pgw_type_lookup(reg, 70002, &info), 0);
    assert_string_equal(info->name, "vector");

    assert_int_equal(pgw_type_registry_binary_ok(reg, 70001), 1);
    assert_int_equal(pgw_type_registry_binary_ok(reg, 70002), 1);
    assert_int_equal(pgw_type_registry_binary_ok(reg, 70003), 0);
    assert_int_equal(pgw_type_registry_binary_ok(reg, 99999), 0);
    assert_int_equal(pgw_type_register(reg, &(pgw_type_info_t){0, "x", 0, NULL, NULL}), PGW_EINVAL);
    /* Many registrations grow the table. */
    for (uint32_t i = 0; i < 100; i++)
        assert_int_equal(pgw_type_register_name(reg, "n", 80000 + i), 0);
    assert_int_equal(pgw_type_lookup(reg, 80099, &info), 0);
    pgw_type_registry_free(reg);
}

static void test_binary_ok_builtins(void **state)
{
    (void)state;
    uint32_t yes[] = {PGW_OID_INT4,          PGW_OID_INT4_ARRAY,     PGW_OID_TEXT_ARRAY,
                      PGW_OID_INT4RANGE,     PGW_OID_TSTZMULTIRANGE, 3905 /* int4range[] */,
                      PGW_OID_NUMERIC_ARRAY, PGW_OID_UUID_ARRAY,     PGW_OID_RECORD};
    for (size_t i = 0; i < PGW__ARRAY_LEN(yes); i++)
        if (!pgw_type_binary_ok(yes[i])) fail_msg("oid %u should be binary", yes[i]);
    assert_int_equal(pgw_type_binary_ok(99999), 0);
    /* Registering in the default instance makes the type binary. */
    pgw_type_registry_t *def = pgw_type_registry_default();
    assert_non_null(def);
    pgw_type_info_t t = {99999, "ext", PGW_TYPE_BINARY, NULL, NULL};
    assert_int_equal(pgw_type_register(def, &t), 0);
    assert_int_equal(pgw_type_binary_ok(99999), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_binary_and_encode),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_binary_ok_builtins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
