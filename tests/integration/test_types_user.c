/*
 * User-defined types against the real server: domains, enums, composites,
 * ranges and their arrays are loaded into a registry with the one catalog
 * query (pgw_type_load_sql, its rows fed to pgw_type_registry_load_row),
 * then values selected in text and in binary decode through their base
 * types, and both formats agree. Also box[] in text, whose elements are
 * separated by box's typdelim ';'.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include "pgraw.h"
#include "pgtest.h"
#include "pgwire/types.h"
#include "pgwire/types_container.h"

static pgt_raw_t *db;

static int setup(void **state)
{
    (void)state;
    pgt_require_server();
    db = pgt_raw_connect();
    pgt_raw_exec_ok(db, "SET DateStyle = 'ISO'; SET IntervalStyle = 'postgres'");
    pgt_raw_exec_ok(db, "DROP SCHEMA IF EXISTS pgw_user CASCADE; CREATE SCHEMA pgw_user; "
                        "SET search_path = pgw_user, public");
    pgt_raw_exec_ok(db, "CREATE DOMAIN d AS int4; "
                        "CREATE DOMAIN dd AS d CHECK (VALUE > 0); "
                        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'very \"happy\"'); "
                        "CREATE TYPE pt AS (x dd, label text, m mood, dropme int4); "
                        "ALTER TYPE pt DROP ATTRIBUTE dropme; "
                        "CREATE TYPE moodrange AS RANGE (subtype = mood); "
                        "CREATE TYPE floatrange AS RANGE (subtype = float8)");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgt_raw_exec(db, "DROP SCHEMA IF EXISTS pgw_user CASCADE");
    pgt_raw_close(db);
    return 0;
}

/* Run the catalog query for names and feed every row to reg. Returns the
 * number of rows. */
static size_t load_types(pgw_type_registry_t *reg, const char *const *names, size_t n)
{
    pgw_array_enc_t ctx;
    pgw_param_t p = pgw_type_load_param(&ctx, names, n);
    assert_int_equal(p.oid, PGW_OID_TEXT_ARRAY);
    assert_int_equal(p.format, PGW_FORMAT_BINARY);
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(p.u.enc.fn(p.u.enc.ctx, &b), 0);
    pgw_view_t param = {b.data, (int32_t)b.len};
    int16_t fmt = PGW_FORMAT_BINARY;
    pgt_rows_t rows;
    /* binary results, as a one-shot query of the library asks: every
     * column is text, so the fields read the same */
    if (pgt_raw_query(db, pgw_type_load_sql(), 1, &p.oid, &param, &fmt, PGW_FORMAT_BINARY, &rows))
        fail_msg("type query: %s", rows.message);
    assert_int_equal(rows.ncols, PGW_TYPE_LOAD_NFIELDS);
    for (size_t r = 0; r < rows.nrows; r++)
        assert_int_equal(pgw_type_registry_load_row(reg, &rows.cells[r * (size_t)rows.ncols],
                                                    (size_t)rows.ncols),
                         0);
    size_t nrows = rows.nrows;
    pgt_rows_free(&rows);
    pgw_buf_free(&b);
    return nrows;
}

/* A new registry with names loaded. */
static pgw_type_registry_t *loaded_registry(const char *const *names, size_t n)
{
    pgw_type_registry_t *reg;
    assert_int_equal(pgw_type_registry_new(&reg, NULL), 0);
    load_types(reg, names, n);
    return reg;
}

/* The iterator's next element holds the bytes of want. */
static void next_elem_is(pgw_array_iter_t *it, const char *want)
{
    pgw_value_t ev;
    assert_int_equal(pgw_array_next(it, &ev), 1);
    assert_int_equal(ev.len, (int32_t)strlen(want));
    assert_memory_equal(ev.p, want, strlen(want));
}

/* SELECT expr in format fmt; the cell as a value of the column's type. */
static pgw_value_t select_value(const char *expr, int fmt, pgt_rows_t *rows)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT %s", expr);
    if (pgt_raw_query0(db, sql, fmt, rows) != 0) fail_msg("%s: %s", sql, rows->message);
    assert_int_equal(rows->nrows, 1);
    pgw_view_t c = pgt_rows_cell(rows, 0, 0);
    pgw_value_t v = {c.p, c.len, (int16_t)fmt, rows->col_oids[0]};
    return v;
}

static uint32_t type_oid(const char *name)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT '%s'::regtype::oid", name);
    pgt_rows_t rows;
    pgw_value_t v = select_value(sql + 7, PGW_FORMAT_BINARY, &rows);
    uint32_t oid;
    assert_int_equal(pgw_get_oid(&v, &oid), 0);
    pgt_rows_free(&rows);
    return oid;
}

static const char *const all_names[] = {"d",         "pgw_user.mood", "pt",
                                        "moodrange", "floatrange",    "no_such_type"};

/* One query loads the named types and what they need. */
static void test_load(void **state)
{
    (void)state;
    pgw_type_registry_t *reg;
    assert_int_equal(pgw_type_registry_new(&reg, NULL), 0);
    size_t n = load_types(reg, all_names, sizeof all_names / sizeof all_names[0]);
    /* d, d[], mood, mood[], pt, pt[], dd (pt's attribute), dd[], moodrange,
     * moodrange[], moodmultirange, moodmultirange[], floatrange and its
     * array, multirange, multirange array */
    assert_int_equal(n, 16);
    uint32_t oid;
    assert_int_equal(pgw_type_lookup_name(reg, "no_such_type", &oid), PGW_ENOTFOUND);
    assert_int_equal(pgw_type_lookup_name(reg, "pgw_user.mood", &oid), 0);
    assert_int_equal(oid, type_oid("mood"));
    assert_int_equal(pgw_type_lookup_name(reg, "d", &oid), 0);
    const pgw_type_catalog_t *cat;
    assert_int_equal(pgw_type_lookup_catalog(reg, oid, &cat), 0);
    assert_int_equal(cat->kind, PGW_TYPE_KIND_DOMAIN);
    assert_int_equal(cat->base_oid, PGW_OID_INT4);
    assert_int_equal(cat->array_oid, type_oid("d[]"));
    /* a domain over a domain: the final base */
    assert_int_equal(pgw_type_lookup_catalog(reg, type_oid("dd"), &cat), 0);
    assert_int_equal(cat->base_oid, PGW_OID_INT4);
    assert_int_equal(pgw_type_resolve_oid(reg, type_oid("dd")), PGW_OID_INT4);
    assert_int_equal(pgw_type_resolve_oid(reg, type_oid("mood")), PGW_OID_TEXT);
    /* the composite: attributes in order, the dropped one left out */
    assert_int_equal(pgw_type_lookup_catalog(reg, type_oid("pt"), &cat), 0);
    assert_int_equal(cat->kind, PGW_TYPE_KIND_COMPOSITE);
    assert_int_equal(cat->nattrs, 3);
    assert_string_equal(cat->attr_names[0], "x");
    assert_string_equal(cat->attr_names[2], "m");
    assert_int_equal(cat->attr_oids[0], type_oid("dd"));
    assert_int_equal(cat->attr_oids[1], PGW_OID_TEXT);
    assert_int_equal(pgw_type_lookup_catalog(reg, type_oid("moodrange"), &cat), 0);
    assert_int_equal(cat->kind, PGW_TYPE_KIND_RANGE);
    assert_int_equal(cat->elem_oid, type_oid("mood"));
    /* the library now decodes all of them in binary */
    assert_true(pgw_type_registry_binary_ok(reg, type_oid("d[]")));
    assert_true(pgw_type_registry_binary_ok(reg, type_oid("pt")));
    assert_true(pgw_type_registry_binary_ok(reg, type_oid("moodmultirange")));
    /* loading again replaces, it does not duplicate */
    assert_int_equal(load_types(reg, all_names, 2), 4);
    pgw_type_registry_free(reg);
}

/* '{1,2}'::d[] in binary and in text, through a registry and through the
 * default one (pgw_array_get_int4 has no registry argument). */
static void test_domain_array(void **state)
{
    (void)state;
    static const int fmts[] = {PGW_FORMAT_BINARY, PGW_FORMAT_TEXT};
    pgw_type_registry_t *reg = loaded_registry(all_names, 1);
    for (int f = 0; f < 2; f++) {
        pgt_rows_t rows;
        pgw_value_t v = select_value("'{1,2,NULL}'::d[]", fmts[f], &rows);
        assert_int_equal(v.oid, type_oid("d[]"));
        pgw_array_t a;
        assert_int_equal(pgw_array_parse_reg(reg, &v, &a), 0);
        assert_int_equal(a.elem_oid, type_oid("d"));
        pgw_array_iter_t it;
        pgw_value_t ev;
        pgw_array_iter_init(&it, &a, NULL, 0);
        int32_t x;
        assert_int_equal(pgw_array_next(&it, &ev), 1);
        assert_int_equal(ev.oid, PGW_OID_INT4);
        assert_int_equal(pgw_get_int4(&ev, &x), 0);
        assert_int_equal(x, 1);
        assert_int_equal(pgw_array_next(&it, &ev), 1);
        assert_int_equal(pgw_get_int4(&ev, &x), 0);
        assert_int_equal(x, 2);
        assert_int_equal(pgw_array_next(&it, &ev), 1);
        assert_int_equal(ev.len, -1);
        assert_int_equal(pgw_array_next(&it, &ev), 0);
        pgt_rows_free(&rows);
    }
    /* the bulk getter goes through the default registry: unknown there
     * first (the element type is not int4 as far as the library knows),
     * then loaded */
    for (int f = 0; f < 2; f++) {
        pgt_rows_t rows;
        pgw_value_t v = select_value("'{1,2}'::dd[]", fmts[f], &rows);
        int32_t out[4];
        size_t n;
        if (f == 0) {
            assert_int_equal(pgw_array_get_int4(&v, out, 4, &n, NULL), PGW_ETYPE);
            const char *dd = "dd";
            load_types(pgw_type_registry_default(), &dd, 1);
        }
        assert_int_equal(pgw_array_get_int4(&v, out, 4, &n, NULL), 0);
        assert_int_equal(n, 2);
        assert_int_equal(out[0], 1);
        assert_int_equal(out[1], 2);
        pgt_rows_free(&rows);
    }
    /* a top-level domain column needs nothing: the server reports the base */
    pgt_rows_t rows;
    pgw_value_t v = select_value("7::dd", PGW_FORMAT_BINARY, &rows);
    assert_int_equal(v.oid, PGW_OID_INT4);
    pgt_rows_free(&rows);
    pgw_type_registry_free(reg);
}

/* Enums: a one-shot query gets them in binary (the label's bytes). Once
 * loaded, pgw_get_text reads them in both formats, alone and in arrays. */
static void test_enum(void **state)
{
    (void)state;
    pgt_rows_t rows;
    pgw_value_t v = select_value("'very \"happy\"'::mood", PGW_FORMAT_BINARY, &rows);
    pgw_str_t s;
    /* not loaded: an unknown oid's binary form is not taken for text */
    assert_int_equal(pgw_get_text(&v, &s), PGW_ETYPE);
    const char *mood = "mood";
    load_types(pgw_type_registry_default(), &mood, 1);
    assert_int_equal(pgw_get_text(&v, &s), 0);
    assert_int_equal(s.len, strlen("very \"happy\""));
    assert_memory_equal(s.p, "very \"happy\"", s.len);
    pgw_datum_t d;
    assert_int_equal(pgw_get_datum(&v, &d), 0);
    assert_int_equal(d.kind, PGW_DATUM_TEXT);
    assert_int_equal(d.oid, type_oid("mood"));
    pgt_rows_free(&rows);
    static const int fmts[] = {PGW_FORMAT_BINARY, PGW_FORMAT_TEXT};
    for (int f = 0; f < 2; f++) {
        v = select_value("ARRAY['sad', 'very \"happy\"']::mood[]", fmts[f], &rows);
        pgw_array_t a;
        assert_int_equal(pgw_array_parse(&v, &a), 0);
        assert_int_equal(a.elem_oid, type_oid("mood"));
        char scratch[64];
        pgw_array_iter_t it;
        pgw_value_t ev;
        pgw_array_iter_init(&it, &a, scratch, sizeof scratch);
        next_elem_is(&it, "sad");
        assert_int_equal(pgw_array_next(&it, &ev), 1);
        assert_int_equal(ev.oid, PGW_OID_TEXT);
        assert_int_equal(pgw_get_text(&ev, &s), 0);
        assert_int_equal(s.len, strlen("very \"happy\""));
        assert_memory_equal(s.p, "very \"happy\"", s.len);
        pgt_rows_free(&rows);
    }
}

/* A composite with a domain field (over a domain), text and an enum: the
 * fields decode in both formats, the text form's types come from the
 * loaded attributes. */
static void test_composite(void **state)
{
    (void)state;
    const char *pt = "pt";
    pgw_type_registry_t *reg = loaded_registry(&pt, 1);
    static const int fmts[] = {PGW_FORMAT_BINARY, PGW_FORMAT_TEXT};
    for (int f = 0; f < 2; f++) {
        pgt_rows_t rows;
        pgw_value_t v = select_value("ROW(42, 'a,b', 'ok')::pt", fmts[f], &rows);
        assert_int_equal(v.oid, type_oid("pt"));
        pgw_record_t r;
        assert_int_equal(pgw_record_parse_reg(reg, &v, &r), 0);
        assert_int_equal(r.nfields, 3);
        char scratch[64];
        pgw_record_iter_t it;
        pgw_value_t fv;
        pgw_record_iter_init(&it, &r, scratch, sizeof scratch);
        int32_t x;
        pgw_str_t s;
        assert_int_equal(pgw_record_next(&it, &fv), 1);
        assert_int_equal(fv.oid, PGW_OID_INT4);
        assert_int_equal(pgw_get_int4(&fv, &x), 0);
        assert_int_equal(x, 42);
        assert_int_equal(pgw_record_next(&it, &fv), 1);
        assert_int_equal(fv.oid, PGW_OID_TEXT);
        assert_int_equal(pgw_get_text(&fv, &s), 0);
        assert_int_equal(s.len, 3);
        assert_memory_equal(s.p, "a,b", 3);
        assert_int_equal(pgw_record_next(&it, &fv), 1);
        assert_int_equal(fv.oid, PGW_OID_TEXT); /* the enum */
        assert_int_equal(pgw_get_text(&fv, &s), 0);
        assert_int_equal(s.len, 2);
        assert_memory_equal(s.p, "ok", 2);
        assert_int_equal(pgw_record_next(&it, &fv), 0);
        pgt_rows_free(&rows);
    }
    pgw_type_registry_free(reg);
}

/* Ranges of user types: over an enum and over float8, and a multirange. */
static void test_range(void **state)
{
    (void)state;
    const char *names[] = {"moodrange", "floatrange"};
    pgw_type_registry_t *reg = loaded_registry(names, 2);
    static const int fmts[] = {PGW_FORMAT_BINARY, PGW_FORMAT_TEXT};
    for (int f = 0; f < 2; f++) {
        pgt_rows_t rows;
        pgw_value_t v = select_value("pgw_user.moodrange('sad', 'ok', '[]')", fmts[f], &rows);
        pgw_range_t r;
        assert_int_equal(pgw_range_parse_reg(reg, &v, &r, NULL, 0), 0);
        assert_int_equal(r.flags, PGW_RANGE_LB_INC | PGW_RANGE_UB_INC);
        pgw_str_t s;
        assert_int_equal(r.lower.oid, PGW_OID_TEXT);
        assert_int_equal(pgw_get_text(&r.upper, &s), 0);
        assert_int_equal(s.len, 2);
        assert_memory_equal(s.p, "ok", 2);
        pgt_rows_free(&rows);

        v = select_value("pgw_user.floatrange(1.5, 2.25)", fmts[f], &rows);
        assert_int_equal(pgw_range_parse_reg(reg, &v, &r, NULL, 0), 0);
        double lo, hi;
        assert_int_equal(r.lower.oid, PGW_OID_FLOAT8);
        assert_int_equal(pgw_get_float8(&r.lower, &lo), 0);
        assert_int_equal(pgw_get_float8(&r.upper, &hi), 0);
        assert_true(lo == 1.5 && hi == 2.25);
        pgt_rows_free(&rows);

        v = select_value(
            "pgw_user.floatmultirange(pgw_user.floatrange(1, 2), pgw_user.floatrange(3, 4))",
            fmts[f], &rows);
        pgw_multirange_t m;
        assert_int_equal(pgw_multirange_parse_reg(reg, &v, &m), 0);
        assert_int_equal(m.count, 2);
        assert_int_equal(m.range_oid, type_oid("floatrange"));
        pgw_multirange_iter_t it;
        pgw_multirange_iter_init(&it, &m, NULL, 0);
        assert_int_equal(pgw_multirange_next(&it, &r), 1);
        assert_int_equal(pgw_multirange_next(&it, &r), 1);
        assert_int_equal(pgw_get_float8(&r.upper, &hi), 0);
        assert_true(hi == 4.0);
        pgt_rows_free(&rows);
    }
    pgw_type_registry_free(reg);
}

/* box[]: the server separates box elements with ';' (box's typdelim). */
static void test_box_array(void **state)
{
    (void)state;
    pgt_rows_t rows;
    pgw_value_t v =
        select_value("ARRAY[box '((3,4),(1,2))', box '((5,6),(3,4))']", PGW_FORMAT_TEXT, &rows);
    assert_int_equal(v.oid, PGW_OID_BOX_ARRAY);
    pgw_array_t a;
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.nelems, 2);
    assert_int_equal(a.elem_oid, PGW_OID_BOX);
    pgw_array_iter_t it;
    pgw_value_t ev;
    pgw_array_iter_init(&it, &a, NULL, 0);
    next_elem_is(&it, "(3,4),(1,2)");
    next_elem_is(&it, "(5,6),(3,4)");
    assert_int_equal(pgw_array_next(&it, &ev), 0);
    pgt_rows_free(&rows);
    /* two dimensions: sub-arrays are separated by ';' too */
    v = select_value("ARRAY[[box '((1,1),(0,0))', box '((2,2),(1,1))'],"
                     "[box '((3,3),(2,2))', box '((4,4),(3,3))']]",
                     PGW_FORMAT_TEXT, &rows);
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.ndim, 2);
    assert_int_equal(a.dims[0], 2);
    assert_int_equal(a.dims[1], 2);
    pgw_array_iter_init(&it, &a, NULL, 0);
    next_elem_is(&it, "(1,1),(0,0)");
    next_elem_is(&it, "(2,2),(1,1)");
    next_elem_is(&it, "(3,3),(2,2)");
    next_elem_is(&it, "(4,4),(3,3)");
    assert_int_equal(pgw_array_next(&it, &ev), 0);
    pgt_rows_free(&rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),  cmocka_unit_test(test_domain_array),
        cmocka_unit_test(test_enum),  cmocka_unit_test(test_composite),
        cmocka_unit_test(test_range), cmocka_unit_test(test_box_array),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
