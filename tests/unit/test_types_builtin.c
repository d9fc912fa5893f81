/*
 * Unit tests of the built-in type table (PGW_BUILTIN_TYPES): every lookup
 * generated from it answers with the row's facts, and every part of the
 * types layer that treats a type as text-like (the scalar decoder, the
 * datum encoder, the array encoder, the binary COPY writer) now agrees
 * with the table's TEXT column. Before the table, jsonpath was versioned
 * text to the scalar decoder but an opaque view to the array encoder and
 * refused by the COPY writer, and unknown was text to the decoders but a
 * view to the array encoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pgwire/types_container.h"
#include "types/types_internal.h"

typedef struct row {
    const char *name;
    uint32_t oid, array_oid;
    int width;
    int text; /* enum pgw__text_like */
    int binary;
    char delim;
} row_t;

#define ROW(name, typname, oid, array_oid, width, kind, text, binary, delim) \
    {typname, oid, array_oid, width, PGW__TL_##text, binary, delim},
static const row_t rows[] = {PGW_BUILTIN_TYPES(ROW, ROW)};
#undef ROW

static void test_lookups_follow_the_table(void **state)
{
    (void)state;
    char arr_name[64];
    for (size_t i = 0; i < PGW__ARRAY_LEN(rows); i++) {
        const row_t *r = &rows[i];
        const pgw__builtin_t *t = pgw__builtin(r->oid);
        assert_non_null(t);
        assert_int_equal(t->oid, r->oid);
        assert_string_equal(pgw_type_name(r->oid), r->name);
        assert_int_equal(t->width, r->width);
        assert_int_equal(t->text, r->text);
        assert_int_equal(t->delim, r->delim);
        assert_int_equal(pgw_type_binary_ok(r->oid), r->binary);
        assert_int_equal(pgw_array_oid_for(r->oid), r->array_oid);
        assert_int_equal(pgw_array_elem_oid(r->oid), 0);
        if (r->array_oid) {
            assert_int_equal(pgw_array_elem_oid(r->array_oid), r->oid);
            snprintf(arr_name, sizeof arr_name, "_%s", r->name);
            assert_string_equal(pgw_type_name(r->array_oid), arr_name);
            assert_null(pgw__builtin(r->array_oid));
            /* An array of a type decoded from binary is decoded too. */
            assert_int_equal(pgw_type_binary_ok(r->array_oid), r->binary);
        }
    }
    assert_null(pgw_type_name(0));
    assert_null(pgw_type_name(123456));
    assert_null(pgw__builtin(0));
    assert_null(pgw__builtin_of_array(0));
    /* Spot checks against pg_type.dat. */
    assert_int_equal(PGW_OID_INT4, 23);
    assert_int_equal(PGW_OID_INT4_ARRAY, 1007);
    assert_int_equal(PGW_OID_XID8_ARRAY, 271);
    assert_int_equal(PGW_OID_BOX_ARRAY, 1020);
    assert_int_equal(pgw__builtin(PGW_OID_BOX)->delim, ';');
    assert_string_equal(pgw_type_name(PGW_OID_BPCHAR_ARRAY), "_bpchar");
    assert_int_equal(pgw_array_oid_for(PGW_OID_UNKNOWN), 0);
}

/* The binary value of type oid whose bytes are [p, p + n). */
static pgw_value_t bin(uint32_t oid, const void *p, size_t n)
{
    pgw_value_t v = {p, (int32_t)n, PGW_FORMAT_BINARY, oid};
    return v;
}

/* pgw_get_text reads the binary form per the TEXT column. */
static void check_scalar_text(const row_t *r)
{
    pgw_str_t s;
    pgw_value_t v = bin(r->oid, "ab", 2);
    pgw_value_t vv = bin(r->oid, "\1ab", 3);
    switch (r->text) {
    case PGW__TL_SAME:
    case PGW__TL_BYTE:
        assert_int_equal(pgw_get_text(&v, &s), 0);
        assert_int_equal(s.len, 2);
        break;
    case PGW__TL_VERSIONED:
        assert_int_equal(pgw_get_text(&vv, &s), 0);
        assert_int_equal(s.len, 2);
        assert_memory_equal(s.p, "ab", 2);
        assert_int_equal(pgw_get_text(&v, &s), PGW_EFORMAT);
        break;
    default:
        if (pgw_get_text(&v, &s) != PGW_ETYPE) fail_msg("%s read as text", r->name);
    }
}

/* The datum encoder writes a TEXT datum as exactly the text-like types. */
static void check_datum_text(const row_t *r)
{
    pgw_datum_t d;
    memset(&d, 0, sizeof d);
    d.kind = PGW_DATUM_TEXT;
    d.u.str.p = "ab";
    d.u.str.len = 2;
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    int rc = pgw__encode_scalar(&d, r->oid, &b);
    if (r->text == PGW__TL_NO) {
        assert_int_equal(rc, PGW_ETYPE);
    } else {
        assert_int_equal(rc, 0);
        assert_int_equal(b.len, r->text == PGW__TL_VERSIONED ? 3 : 2);
        if (r->text == PGW__TL_VERSIONED) assert_int_equal(b.data[0], 1);
    }
    pgw_buf_free(&b);
}

/* The array encoder takes C strings for the text-like types and writes
 * what the scalar decoder reads back as the same text. */
static void check_array_text(const row_t *r)
{
    if (r->text != PGW__TL_SAME && r->text != PGW__TL_VERSIONED) return;
    const char *elems[] = {"ab", NULL};
    pgw_array_enc_t ctx;
    pgw_array_enc_init(&ctx, r->oid, elems, 2, NULL);
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_encode_array(&ctx, &b), 0);
    pgw_value_t v = bin(r->array_oid, b.data, b.len);
    pgw_array_t a;
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.nelems, 2);
    assert_true(a.has_nulls);
    pgw_array_iter_t it;
    pgw_value_t e;
    pgw_str_t s;
    pgw_array_iter_init(&it, &a, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_int_equal(pgw_get_text(&e, &s), 0);
    if (s.len != 2 || memcmp(s.p, "ab", 2) != 0) fail_msg("%s[] element is not 'ab'", r->name);
    assert_int_equal(pgw_array_next(&it, &e), 1);
    assert_true(pgw_value_is_null(&e));
    assert_int_equal(pgw_array_next(&it, &e), 0);
    pgw_buf_free(&b);
}

/* The binary COPY writer takes a text-format value for the types whose
 * binary form is (versioned) text, and only for those. */
static void check_copy_text(const row_t *r)
{
    pgw_param_t p = pgw_text_typed("ab", 2, r->oid);
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    int rc = pgw_copy_bin_field(&b, &p);
    if (r->text == PGW__TL_SAME || r->text == PGW__TL_VERSIONED) {
        assert_int_equal(rc, 0);
        int versioned = r->text == PGW__TL_VERSIONED;
        assert_int_equal(b.len, 4 + 2 + (size_t)versioned);
        assert_int_equal(b.data[3], 2 + versioned);
        if (versioned) assert_int_equal(b.data[4], 1);
    } else if (rc != PGW_EINVAL) {
        fail_msg("COPY took text for %s", r->name);
    }
    pgw_buf_free(&b);
}

static void test_text_likeness_agrees(void **state)
{
    (void)state;
    for (size_t i = 0; i < PGW__ARRAY_LEN(rows); i++) {
        check_scalar_text(&rows[i]);
        check_datum_text(&rows[i]);
        check_array_text(&rows[i]);
        check_copy_text(&rows[i]);
    }
}

/* The cases that used to disagree, spelled out. */
static void test_former_disagreements(void **state)
{
    (void)state;
    row_t jsonpath = {
        "jsonpath", PGW_OID_JSONPATH, PGW_OID_JSONPATH_ARRAY, -1, PGW__TL_VERSIONED, 1, ','};
    row_t unknown = {"unknown", PGW_OID_UNKNOWN, 0, -1, PGW__TL_SAME, 0, ','};
    /* jsonpath[] elements are C strings sent with the version byte... */
    check_array_text(&jsonpath);
    /* ...and binary COPY takes jsonpath text, adding it. */
    check_copy_text(&jsonpath);
    /* unknown elements are C strings, as every other text-like type's. */
    const char *elems[] = {"x"};
    pgw_array_enc_t ctx;
    pgw_array_enc_init(&ctx, PGW_OID_UNKNOWN, elems, 1, NULL);
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_encode_array(&ctx, &b), 0);
    static const uint8_t want[] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 2, 0xc1, 0,
                                   0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 'x'};
    assert_int_equal(b.len, sizeof want);
    assert_memory_equal(b.data, want, sizeof want);
    pgw_buf_free(&b);
    check_copy_text(&unknown);
    /* "char" is read as text, but its binary form is a byte, not the
     * text: COPY and the array encoder do not take text for it. */
    assert_int_equal(pgw__text_like(PGW_OID_CHAR), PGW__TL_BYTE);
    pgw_param_t c = pgw_text_typed("a", 1, PGW_OID_CHAR);
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_copy_bin_field(&b, &c), PGW_EINVAL);
    pgw_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookups_follow_the_table),
        cmocka_unit_test(test_text_likeness_agrees),
        cmocka_unit_test(test_former_disagreements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
