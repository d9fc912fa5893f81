/*
 * Type registry: the default registry under racing threads, rows of the
 * catalog query (good and malformed), resolution of loaded types in the
 * container decoders, the element delimiter of text arrays, and the
 * NULL-handle convention of every accessor in types.h / types_container.h.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "pgwire/types.h"
#include "pgwire/types_container.h"

/* ------------------------------------------------------------------------ */
/* The default registry from many threads at once                           */
/* ------------------------------------------------------------------------ */

#define RACERS 8

static pthread_barrier_t start_line;

static void *race_default(void *arg)
{
    pthread_barrier_wait(&start_line);
    pgw_type_registry_t *r = pgw_type_registry_default();
    /* and a reader of it, as the session's format choice is */
    (void)pgw_type_binary_ok(PGW_OID_INT4);
    *(pgw_type_registry_t **)arg = r;
    return NULL;
}

/* Run under TSan (see the report): the first call must not race. */
static void test_default_threads(void **state)
{
    (void)state;
    pthread_t t[RACERS];
    pgw_type_registry_t *got[RACERS];
    assert_int_equal(pthread_barrier_init(&start_line, NULL, RACERS), 0);
    for (int i = 0; i < RACERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, race_default, &got[i]), 0);
    for (int i = 0; i < RACERS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    pthread_barrier_destroy(&start_line);
    for (int i = 0; i < RACERS; i++) {
        assert_non_null(got[i]);
        assert_ptr_equal(got[i], got[0]);
    }
    assert_ptr_equal(pgw_type_registry_default(), got[0]);
    pgw_type_registry_free(got[0]); /* a no-op for the default registry */
    assert_ptr_equal(pgw_type_registry_default(), got[0]);
}

/* ------------------------------------------------------------------------ */
/* Catalog rows                                                             */
/* ------------------------------------------------------------------------ */

/* A row of pgw_type_load_sql's answer from C strings (NULL: SQL NULL). */
static int load(pgw_type_registry_t *reg, const char *const cols[PGW_TYPE_LOAD_NFIELDS])
{
    pgw_view_t f[PGW_TYPE_LOAD_NFIELDS];
    for (int i = 0; i < PGW_TYPE_LOAD_NFIELDS; i++) {
        f[i].p = (const uint8_t *)cols[i];
        f[i].len = cols[i] ? (int32_t)strlen(cols[i]) : -1;
    }
    return pgw_type_registry_load_row(reg, f, PGW_TYPE_LOAD_NFIELDS);
}

/* oid, name, kind, delim, base, elem, array, attr oids, attr names */
static const char *const row_d[] = {"16392", "d", "d", ",", "23", "0", "16391", NULL, NULL};
static const char *const row_d_arr[] = {"16391", "d[]", "b", ",", "0", "16392", "0", NULL, NULL};
static const char *const row_mood[] = {"16396", "mood", "e", ",", "0", "0", "16395", NULL, NULL};
static const char *const row_pt[] = {
    "16405", "s.pt", "c", ",", "0", "0", "16404", "{16392,25,16396}", "{x,\"a b\",\"q\\\"\"}"};
static const char *const row_fr[] = {"16419", "floatrange", "r",  ",", "0",
                                     "701",   "16416",      NULL, NULL};
static const char *const row_semi[] = {"16500", "semi", "b", ";", "0", "0", "16501", NULL, NULL};
static const char *const row_semi_arr[] = {"16501", "semi[]", "b",  ",", "0",
                                           "16500", "0",      NULL, NULL};

/* A registry with the sample rows above loaded. */
static pgw_type_registry_t *sample_registry(void)
{
    static const char *const *const rows[] = {row_d, row_d_arr, row_mood, row_pt, row_fr};
    pgw_type_registry_t *reg;
    assert_int_equal(pgw_type_registry_new(&reg, NULL), 0);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(load(reg, rows[i]), 0);
    return reg;
}

static void test_load_rows(void **state)
{
    (void)state;
    pgw_type_registry_t *reg = sample_registry();
    const pgw_type_catalog_t *c;
    assert_int_equal(pgw_type_lookup_catalog(reg, 16405, &c), 0);
    assert_int_equal(c->kind, PGW_TYPE_KIND_COMPOSITE);
    assert_int_equal(c->nattrs, 3);
    assert_int_equal(c->attr_oids[2], 16396);
    assert_string_equal(c->attr_names[1], "a b");
    assert_string_equal(c->attr_names[2], "q\"");
    uint32_t oid;
    assert_int_equal(pgw_type_lookup_name(reg, "s.pt", &oid), 0);
    assert_int_equal(oid, 16405);
    assert_int_equal(pgw_type_resolve_oid(reg, 16392), PGW_OID_INT4);
    assert_int_equal(pgw_type_resolve_oid(reg, 16396), PGW_OID_TEXT);
    assert_int_equal(pgw_type_resolve_oid(reg, 16405), 16405);
    assert_int_equal(pgw_type_resolve_oid(reg, PGW_OID_INT8), PGW_OID_INT8);
    /* a callback registered for a loaded type keeps its catalog facts, and
     * loading again keeps the callback */
    pgw_type_info_t info = {16405, NULL, PGW_TYPE_TEXT, NULL, NULL};
    assert_int_equal(pgw_type_register(reg, &info), 0);
    assert_int_equal(pgw_type_lookup_catalog(reg, 16405, &c), 0);
    assert_int_equal(c->nattrs, 3);
    info.formats = PGW_TYPE_TEXT | PGW_TYPE_BINARY;
    assert_int_equal(pgw_type_register(reg, &info), 0);
    assert_int_equal(load(reg, row_pt), 0);
    const pgw_type_info_t *ti;
    assert_int_equal(pgw_type_lookup(reg, 16405, &ti), 0);
    assert_int_equal(ti->formats, PGW_TYPE_TEXT | PGW_TYPE_BINARY);
    assert_string_equal(ti->name, "s.pt");

    /* malformed rows are refused and change nothing */
    static const struct {
        int col;
        const char *val;
    } bad[] = {{0, "x"},          {0, "0"},     {0, "99999999999"}, {0, NULL},
               {1, NULL},         {1, ""},      {2, "z"},           {2, "dd"},
               {3, ""},           {4, "-1"},    {5, "1.5"},         {6, NULL},
               {7, "{1,2}"},      {7, "{1,x}"}, {8, "{a,b,c,d}"},   {7, "{{1},{2}}"},
               {8, "{a,NULL,c}"}, {8, "{a,b"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *cols[PGW_TYPE_LOAD_NFIELDS];
        memcpy(cols, row_pt, sizeof cols);
        cols[0] = "16600";
        cols[bad[i].col] = bad[i].val;
        if (load(reg, cols) != PGW_EFORMAT) fail_msg("bad row %zu accepted", i);
        assert_int_equal(pgw_type_lookup(reg, 16600, &ti), PGW_ENOTFOUND);
    }
    pgw_view_t f[PGW_TYPE_LOAD_NFIELDS] = {{0}};
    assert_int_equal(pgw_type_registry_load_row(reg, f, PGW_TYPE_LOAD_NFIELDS - 1), PGW_EINVAL);
    assert_int_equal(pgw_type_registry_load_row(NULL, f, PGW_TYPE_LOAD_NFIELDS), PGW_EINVAL);
    assert_int_equal(pgw_type_registry_load_row(reg, NULL, PGW_TYPE_LOAD_NFIELDS), PGW_EINVAL);
    pgw_type_registry_free(reg);
}

/* The query is one constant statement with a text[] parameter. */
static void test_load_query(void **state)
{
    (void)state;
    const char *sql = pgw_type_load_sql();
    assert_non_null(strstr(sql, "$1::text[]"));
    assert_null(strstr(sql, "$2"));
    const char *names[] = {"a", "s.\"Odd\"'; --"};
    pgw_array_enc_t ctx;
    pgw_param_t p = pgw_type_load_param(&ctx, names, 2);
    assert_int_equal(p.oid, PGW_OID_TEXT_ARRAY);
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(p.u.enc.fn(p.u.enc.ctx, &b), 0);
    pgw_value_t v = {b.data, (int32_t)b.len, PGW_FORMAT_BINARY, PGW_OID_TEXT_ARRAY};
    pgw_array_t a;
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.nelems, 2);
    p = pgw_type_load_param(NULL, names, 2);
    b.len = 0;
    assert_int_equal(p.u.enc.fn(p.u.enc.ctx, &b), PGW_EINVAL);
    pgw_buf_free(&b);
}

/* Loaded types in the container decoders, from hand-made wire values. */
static void test_resolve_in_containers(void **state)
{
    (void)state;
    pgw_type_registry_t *reg = sample_registry();
    /* binary d[]: the header names d (16392) */
    int32_t elems[] = {5, 6};
    pgw_array_enc_t enc;
    pgw_array_enc_init(&enc, PGW_OID_INT4, elems, 2, NULL);
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_encode_array(&enc, &b), 0);
    b.data[11] = 0x08, b.data[10] = 0x40; /* element oid 16392 = 0x4008 */
    pgw_value_t v = {b.data, (int32_t)b.len, PGW_FORMAT_BINARY, 16391};
    pgw_array_t a;
    assert_int_equal(pgw_array_parse_reg(reg, &v, &a), 0);
    assert_int_equal(a.elem_oid, 16392);
    pgw_array_iter_t it;
    pgw_value_t ev;
    pgw_array_iter_init(&it, &a, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &ev), 1);
    assert_int_equal(ev.oid, PGW_OID_INT4);
    /* the header must name the array's element type */
    b.data[11] = 0x09;
    assert_int_equal(pgw_array_parse_reg(reg, &v, &a), PGW_ETYPE);
    /* not loaded in the default registry: elements keep the domain oid */
    b.data[11] = 0x08;
    int32_t out[2];
    size_t n;
    assert_int_equal(pgw_array_get_int4(&v, out, 2, &n, NULL), PGW_ETYPE);
    pgw_buf_free(&b);
    /* text record of s.pt: field types from the attributes */
    static const char rec[] = "(7,\"x y\",happy)";
    v = (pgw_value_t){(const uint8_t *)rec, (int32_t)strlen(rec), PGW_FORMAT_TEXT, 16405};
    pgw_record_t r;
    assert_int_equal(pgw_record_parse_reg(reg, &v, &r), 0);
    pgw_record_iter_t ri;
    char scratch[16];
    pgw_record_iter_init(&ri, &r, scratch, sizeof scratch);
    assert_int_equal(pgw_record_next(&ri, &ev), 1);
    assert_int_equal(ev.oid, PGW_OID_INT4);
    assert_int_equal(pgw_record_next(&ri, &ev), 1);
    assert_int_equal(ev.oid, PGW_OID_TEXT);
    assert_int_equal(pgw_record_next(&ri, &ev), 1);
    assert_int_equal(ev.oid, PGW_OID_TEXT); /* the enum */
    /* text range of floatrange */
    static const char rng[] = "[1.5,2)";
    v = (pgw_value_t){(const uint8_t *)rng, (int32_t)strlen(rng), PGW_FORMAT_TEXT, 16419};
    pgw_range_t rg;
    assert_int_equal(pgw_range_parse_reg(reg, &v, &rg, NULL, 0), 0);
    assert_int_equal(rg.lower.oid, PGW_OID_FLOAT8);
    double lo;
    assert_int_equal(pgw_get_float8(&rg.lower, &lo), 0);
    assert_true(lo == 1.5);
    pgw_type_registry_free(reg);
}

/* ------------------------------------------------------------------------ */
/* Element delimiters                                                       */
/* ------------------------------------------------------------------------ */

static void test_box_delimiter(void **state)
{
    (void)state;
    static const char box[] = "{(3,4),(1,2);(5,6),(3,4)}";
    pgw_value_t v = {(const uint8_t *)box, (int32_t)strlen(box), PGW_FORMAT_TEXT, 1020};
    pgw_array_t a;
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.nelems, 2);
    pgw_array_iter_t it;
    pgw_value_t ev;
    pgw_array_iter_init(&it, &a, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &ev), 1);
    assert_int_equal(ev.len, 11);
    assert_memory_equal(ev.p, "(3,4),(1,2)", 11);
    assert_int_equal(pgw_array_next(&it, &ev), 1);
    assert_memory_equal(ev.p, "(5,6),(3,4)", 11);
    assert_int_equal(pgw_array_next(&it, &ev), 0);
    /* a ',' array of other types is unchanged, and ';' is data there */
    static const char txt[] = "{a;b,c}";
    v = (pgw_value_t){(const uint8_t *)txt, (int32_t)strlen(txt), PGW_FORMAT_TEXT,
                      PGW_OID_TEXT_ARRAY};
    assert_int_equal(pgw_array_parse(&v, &a), 0);
    assert_int_equal(a.nelems, 2);
    /* a user type's typdelim, from the registry */
    pgw_type_registry_t *reg;
    assert_int_equal(pgw_type_registry_new(&reg, NULL), 0);
    assert_int_equal(load(reg, row_semi), 0);
    assert_int_equal(load(reg, row_semi_arr), 0);
    v.oid = 16501;
    assert_int_equal(pgw_array_parse_reg(reg, &v, &a), 0);
    assert_int_equal(a.nelems, 2);
    pgw_array_iter_init(&it, &a, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &ev), 1);
    assert_int_equal(ev.len, 1);
    assert_int_equal(pgw_array_next(&it, &ev), 1);
    assert_int_equal(ev.len, 3);
    assert_memory_equal(ev.p, "b,c", 3);
    pgw_type_registry_free(reg);
}

/* ------------------------------------------------------------------------ */
/* NULL handles                                                             */
/* ------------------------------------------------------------------------ */

static void test_null_handles(void **state)
{
    (void)state;
    static const uint8_t four[4] = {0, 0, 0, 1};
    pgw_value_t v = {four, 4, PGW_FORMAT_BINARY, PGW_OID_INT4};
    bool b;
    int16_t i2;
    int32_t i4;
    int64_t i8;
    uint32_t u32;
    float f4;
    double f8;
    char ch;
    pgw_str_t str;
    pgw_view_t view;
    uint8_t bytes[16];
    size_t sz;
    pgw_numeric_t num;
    pgw_tm_t tm;
    pgw_timetz_t ttz;
    pgw_interval_t iv;
    pgw_inet_t inet;
    pgw_datum_t datum;
    assert_true(pgw_value_is_null(NULL));
    assert_int_equal(pgw_get_bool(NULL, &b), PGW_EINVAL);
    assert_int_equal(pgw_get_int2(NULL, &i2), PGW_EINVAL);
    assert_int_equal(pgw_get_int4(NULL, &i4), PGW_EINVAL);
    assert_int_equal(pgw_get_int4(&v, NULL), PGW_EINVAL);
    assert_int_equal(pgw_get_int8(NULL, &i8), PGW_EINVAL);
    assert_int_equal(pgw_get_oid(NULL, &u32), PGW_EINVAL);
    assert_int_equal(pgw_get_float4(NULL, &f4), PGW_EINVAL);
    assert_int_equal(pgw_get_float8(NULL, &f8), PGW_EINVAL);
    assert_int_equal(pgw_get_float8(&v, NULL), PGW_EINVAL);
    assert_int_equal(pgw_get_text(NULL, &str), PGW_EINVAL);
    assert_int_equal(pgw_get_text(&v, NULL), PGW_EINVAL);
    assert_int_equal(pgw_get_char(NULL, &ch), PGW_EINVAL);
    assert_int_equal(pgw_get_json(NULL, &str), PGW_EINVAL);
    assert_int_equal(pgw_get_bytea_view(NULL, &view), PGW_EINVAL);
    assert_int_equal(pgw_get_bytea(NULL, bytes, sizeof bytes, &sz), PGW_EINVAL);
    assert_int_equal(pgw_get_bytea(&v, bytes, sizeof bytes, NULL), PGW_EINVAL);
    assert_int_equal(pgw_get_uuid(NULL, bytes), PGW_EINVAL);
    assert_int_equal(pgw_uuid_parse(NULL, 36, bytes), PGW_EINVAL);
    assert_int_equal(pgw_uuid_parse("x", 1, NULL), PGW_EINVAL);
    char ubuf[37] = "x";
    pgw_uuid_format(NULL, ubuf);
    assert_string_equal(ubuf, "");
    pgw_uuid_format(bytes, NULL);
    assert_int_equal(pgw_get_macaddr(NULL, bytes), PGW_EINVAL);
    assert_int_equal(pgw_get_macaddr8(NULL, bytes), PGW_EINVAL);
    assert_int_equal(pgw_get_money(NULL, &i8), PGW_EINVAL);
    assert_int_equal(pgw_get_numeric(NULL, &num, NULL, 0), PGW_EINVAL);
    assert_int_equal(pgw_get_numeric(&v, NULL, NULL, 0), PGW_EINVAL);
    assert_int_equal(pgw_numeric_parse(NULL, 3, &num, bytes, sizeof bytes), PGW_EINVAL);
    assert_int_equal(pgw_numeric_parse("1", 1, NULL, bytes, sizeof bytes), PGW_EINVAL);
    assert_int_equal(pgw_numeric_to_str(NULL, ubuf, sizeof ubuf, &sz), PGW_EINVAL);
    assert_int_equal(pgw_get_numeric_str(NULL, ubuf, sizeof ubuf, &sz), PGW_EINVAL);
    assert_int_equal(pgw_numeric_to_double(NULL, &f8), PGW_EINVAL);
    assert_int_equal(pgw_numeric_to_int64(NULL, &i8), PGW_EINVAL);
    assert_int_equal(pgw_get_numeric_double(NULL, &f8), PGW_EINVAL);
    assert_int_equal(pgw_get_numeric_int64(NULL, &i8), PGW_EINVAL);
    assert_int_equal(pgw_numeric_digit(NULL, 0), 0);
    assert_int_equal(pgw_get_date(NULL, &i4), PGW_EINVAL);
    assert_int_equal(pgw_get_time(NULL, &i8), PGW_EINVAL);
    assert_int_equal(pgw_get_timetz(NULL, &ttz), PGW_EINVAL);
    assert_int_equal(pgw_get_timestamp(NULL, &i8), PGW_EINVAL);
    assert_int_equal(pgw_get_timestamptz(NULL, &i8), PGW_EINVAL);
    assert_int_equal(pgw_get_timestamp_unix(NULL, &i8), PGW_EINVAL);
    assert_int_equal(pgw_get_tm(NULL, &tm), PGW_EINVAL);
    assert_int_equal(pgw_get_interval(NULL, &iv), PGW_EINVAL);
    assert_int_equal(pgw_timestamp_to_unix(0, NULL), PGW_EINVAL);
    assert_int_equal(pgw_timestamp_from_unix(0, NULL), PGW_EINVAL);
    assert_int_equal(pgw_timestamp_to_tm(0, NULL), PGW_EINVAL);
    assert_int_equal(pgw_tm_to_timestamp(NULL, &i8), PGW_EINVAL);
    assert_int_equal(pgw_date_to_tm(0, NULL), PGW_EINVAL);
    assert_int_equal(pgw_date_from_ymd(2000, 1, 1, NULL), PGW_EINVAL);
    assert_int_equal(pgw_get_inet(NULL, &inet), PGW_EINVAL);
    assert_int_equal(pgw_inet_parse(NULL, 4, 0, &inet), PGW_EINVAL);
    assert_int_equal(pgw_get_datum(NULL, &datum), PGW_EINVAL);
    assert_int_equal(pgw_get_datum(&v, NULL), PGW_EINVAL);
    /* parameter constructors with a NULL context fail when encoded */
    pgw_buf_t buf;
    pgw_buf_init(&buf, NULL);
    pgw_param_t ps[] = {pgw_inet(NULL),         pgw_array_param(NULL),
                        pgw_range_param(NULL),  pgw_multirange_param(NULL),
                        pgw_record_param(NULL), pgw_interval(NULL),
                        pgw_numeric(NULL)};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        assert_int_equal(ps[i].u.enc.fn(ps[i].u.enc.ctx, &buf), PGW_EINVAL);
    assert_int_equal(pgw_encode_interval(&iv, NULL), PGW_EINVAL);
    assert_int_equal(buf.len, 0);
    pgw_buf_free(&buf);

    /* containers */
    pgw_array_t a;
    pgw_array_iter_t it;
    pgw_value_t ev;
    assert_int_equal(pgw_array_parse(NULL, &a), PGW_EINVAL);
    assert_int_equal(pgw_array_parse(&v, NULL), PGW_EINVAL);
    assert_int_equal(pgw_array_parse_reg(NULL, NULL, &a), PGW_EINVAL);
    pgw_array_iter_init(NULL, &a, NULL, 0);
    pgw_array_iter_set_scratch(NULL, NULL, 0);
    pgw_array_iter_init(&it, NULL, NULL, 0);
    assert_int_equal(pgw_array_next(&it, &ev), PGW_EINVAL);
    assert_int_equal(pgw_array_next(NULL, &ev), PGW_EINVAL);
    assert_int_equal(pgw_array_get_int4(NULL, &i4, 1, &sz, NULL), PGW_EINVAL);
    assert_int_equal(pgw_array_get_int4(&v, &i4, 1, NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_array_get_float8(&v, NULL, 1, &sz, NULL), PGW_EINVAL);
    pgw_range_t r;
    assert_int_equal(pgw_range_parse(NULL, &r, NULL, 0), PGW_EINVAL);
    assert_int_equal(pgw_range_parse(&v, NULL, NULL, 0), PGW_EINVAL);
    pgw_multirange_t m;
    pgw_multirange_iter_t mit;
    assert_int_equal(pgw_multirange_parse(NULL, &m), PGW_EINVAL);
    assert_int_equal(pgw_multirange_parse(&v, NULL), PGW_EINVAL);
    pgw_multirange_iter_init(NULL, &m, NULL, 0);
    pgw_multirange_iter_init(&mit, NULL, NULL, 0);
    assert_int_equal(pgw_multirange_next(&mit, &r), 0);
    assert_int_equal(pgw_multirange_next(NULL, &r), PGW_EINVAL);
    assert_int_equal(pgw_multirange_next(&mit, NULL), PGW_EINVAL);
    pgw_record_t rec;
    pgw_record_iter_t rit;
    assert_int_equal(pgw_record_parse(NULL, &rec), PGW_EINVAL);
    assert_int_equal(pgw_record_parse(&v, NULL), PGW_EINVAL);
    pgw_record_iter_init(NULL, &rec, NULL, 0);
    pgw_record_iter_set_scratch(NULL, NULL, 0);
    pgw_record_iter_init(&rit, NULL, NULL, 0);
    assert_int_equal(pgw_record_next(&rit, &ev), PGW_EINVAL);
    assert_int_equal(pgw_record_next(NULL, &ev), PGW_EINVAL);

    /* the registry */
    const pgw_type_info_t *info;
    const pgw_type_catalog_t *cat;
    pgw_type_info_t ti = {70000, "x", PGW_TYPE_TEXT, NULL, NULL};
    assert_int_equal(pgw_type_registry_new(NULL, NULL), PGW_EINVAL);
    pgw_type_registry_free(NULL);
    assert_int_equal(pgw_type_register(NULL, &ti), PGW_EINVAL);
    assert_int_equal(pgw_type_register(pgw_type_registry_default(), NULL), PGW_EINVAL);
    assert_int_equal(pgw_type_register_name(NULL, "x", 1), PGW_EINVAL);
    assert_int_equal(pgw_type_lookup(NULL, 23, &info), PGW_EINVAL);
    assert_null(info);
    assert_int_equal(pgw_type_lookup(pgw_type_registry_default(), 23, NULL), PGW_EINVAL);
    assert_int_equal(pgw_type_lookup_catalog(NULL, 23, &cat), PGW_EINVAL);
    assert_int_equal(pgw_type_lookup_name(NULL, "x", &u32), PGW_EINVAL);
    assert_int_equal(pgw_type_lookup_name(pgw_type_registry_default(), NULL, &u32), PGW_EINVAL);
    assert_int_equal(pgw_type_decode(NULL, &v, &i4), PGW_EINVAL);
    assert_int_equal(pgw_type_decode(pgw_type_registry_default(), NULL, &i4), PGW_EINVAL);
    assert_int_equal(pgw_type_registry_binary_ok(NULL, PGW_OID_INT4), 1);
    assert_int_equal(pgw_type_resolve_oid(NULL, 70000), 70000);
    /* escaping */
    char *s;
    assert_int_equal(pgw_escape_literal(NULL, "a", 1, NULL), PGW_EINVAL);
    assert_int_equal(pgw_escape_identifier(NULL, NULL, 1, &s), PGW_EINVAL);
    assert_null(s);
    pgw_escape_free(NULL, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_threads), cmocka_unit_test(test_load_rows),
        cmocka_unit_test(test_load_query),      cmocka_unit_test(test_resolve_in_containers),
        cmocka_unit_test(test_box_delimiter),   cmocka_unit_test(test_null_handles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
