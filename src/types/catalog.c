/*
 * Loading user-defined types from the server's catalog into a registry:
 * one query, parameterised by the type names (never spliced into the SQL),
 * and a row loader that reads the answer's text fields in place.
 *
 * The query starts from the named types (to_regtype: 'name'::regtype's
 * resolution, NULL instead of an error for unknown names) and follows what
 * decoding them needs, recursively: array types, domain base types, array
 * element types, range subtypes and multiranges, composite attribute types.
 * Built-in types (oid below 10000, FirstGenbkiObjectId) are known to the
 * library and not followed. Every column is cast to text, so the rows read
 * the same in either result format.
 */
#include "types/container_internal.h"
#include "types/types_internal.h"

/* Column order: see load_row below. */
static const char load_sql[] =
    "WITH RECURSIVE req(name, ord, oid) AS ("
    " SELECT n.name, n.ord, pg_catalog.to_regtype(n.name)::oid"
    " FROM pg_catalog.unnest($1::text[]) WITH ORDINALITY AS n(name, ord)"
    "), deps(oid) AS ("
    " SELECT oid FROM req WHERE oid IS NOT NULL"
    " UNION"
    " SELECT x.oid FROM deps JOIN pg_catalog.pg_type t ON t.oid = deps.oid"
    " CROSS JOIN LATERAL ("
    "  SELECT t.typarray UNION ALL SELECT t.typbasetype UNION ALL SELECT t.typelem"
    "  UNION ALL SELECT r.rngsubtype FROM pg_catalog.pg_range r WHERE r.rngtypid = t.oid"
    "  UNION ALL SELECT r.rngmultitypid FROM pg_catalog.pg_range r WHERE r.rngtypid = t.oid"
    "  UNION ALL SELECT r.rngtypid FROM pg_catalog.pg_range r WHERE r.rngmultitypid = t.oid"
    "  UNION ALL SELECT a.atttypid FROM pg_catalog.pg_attribute a"
    "   WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped"
    " ) AS x(oid)"
    " WHERE x.oid >= 10000"
    ")"
    " SELECT t.oid::text,"
    " COALESCE((SELECT req.name FROM req WHERE req.oid = t.oid ORDER BY req.ord LIMIT 1),"
    "  t.oid::regtype::text),"
    " t.typtype::text, t.typdelim::text,"
    " CASE WHEN t.typtype = 'd' THEN ("
    "  WITH RECURSIVE b(oid, typtype, base) AS ("
    "   SELECT bt.oid, bt.typtype, bt.typbasetype FROM pg_catalog.pg_type bt"
    "   WHERE bt.oid = t.typbasetype"
    "   UNION ALL"
    "   SELECT bt.oid, bt.typtype, bt.typbasetype FROM b"
    "   JOIN pg_catalog.pg_type bt ON bt.oid = b.base WHERE b.typtype = 'd'"
    "  ) SELECT b.oid FROM b WHERE b.typtype <> 'd' LIMIT 1)"
    " ELSE 0 END::text,"
    " CASE WHEN t.typtype = 'r' THEN"
    "  (SELECT r.rngsubtype FROM pg_catalog.pg_range r WHERE r.rngtypid = t.oid)"
    " WHEN t.typtype = 'm' THEN"
    "  (SELECT r.rngtypid FROM pg_catalog.pg_range r WHERE r.rngmultitypid = t.oid)"
    " WHEN t.typlen = -1 THEN t.typelem ELSE 0 END::text,"
    " t.typarray::text,"
    " (SELECT pg_catalog.array_agg(a.atttypid ORDER BY a.attnum) FROM pg_catalog.pg_attribute a"
    "  WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped)::text,"
    " (SELECT pg_catalog.array_agg(a.attname ORDER BY a.attnum) FROM pg_catalog.pg_attribute a"
    "  WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped)::text"
    " FROM deps JOIN pg_catalog.pg_type t ON t.oid = deps.oid";

enum {
    COL_OID,
    COL_NAME,
    COL_KIND,
    COL_DELIM,
    COL_BASE,
    COL_ELEM,
    COL_ARRAY,
    COL_ATTR_OIDS,
    COL_ATTR_NAMES
};

const char *pgw_type_load_sql(void)
{
    return load_sql;
}

pgw_param_t pgw_type_load_param(pgw_array_enc_t *ctx, const char *const *names, size_t n)
{
    if (!ctx) return pgw_encoded(PGW_OID_TEXT_ARRAY, pgw_encode_array, NULL);
    pgw_array_enc_init(ctx, PGW_OID_TEXT, names, n, NULL);
    return pgw_array_param(ctx);
}

/* A decimal oid field. */
static int field_oid(const pgw_view_t *f, uint32_t *out)
{
    int64_t v;
    if (f->len <= 0) return PGW_EFORMAT;
    if (pgw__parse_int64((const char *)f->p, (size_t)f->len, 0, UINT32_MAX, &v) < 0)
        return PGW_EFORMAT;
    *out = (uint32_t)v;
    return 0;
}

static int field_char(const pgw_view_t *f, const char *allowed, char *out)
{
    if (f->len != 1 || f->p[0] == '\0') return PGW_EFORMAT;
    if (allowed && !strchr(allowed, (char)f->p[0])) return PGW_EFORMAT;
    *out = (char)f->p[0];
    return 0;
}

/*
 * The attribute arrays of one row, in one temporary allocation: n oids, n
 * name pointers, a scratch for unescaping (the names field's length is
 * always enough) and the names copied NUL-terminated (that length plus n).
 */
typedef struct attrs_tmp {
    void *mem;
    size_t n;
    uint32_t *oids;
    const char **names;
} attrs_tmp_t;

/* Parse a one-dimensional text array without NULLs of type array_oid. */
static int parse_list(const pgw_view_t *f, uint32_t array_oid, pgw_array_t *a)
{
    pgw_value_t v = {f->p, f->len, PGW_FORMAT_TEXT, array_oid};
    if (pgw_array_parse(&v, a) < 0 || a->ndim > 1 || a->has_nulls) return PGW_EFORMAT;
    return 0;
}

static int read_attr_oids(const pgw_array_t *a, uint32_t *oids)
{
    pgw_array_iter_t it;
    pgw_value_t ev;
    pgw_array_iter_init(&it, a, NULL, 0);
    for (size_t i = 0; i < a->nelems; i++) {
        if (pgw_array_next(&it, &ev) != 1) return PGW_EFORMAT;
        pgw_view_t f = {ev.p, ev.len};
        if (field_oid(&f, &oids[i]) < 0) return PGW_EFORMAT;
    }
    return pgw_array_next(&it, &ev) == 0 ? 0 : PGW_EFORMAT;
}

static int read_attr_names(const pgw_array_t *a, const char **names, char *scratch, size_t cap,
                           char *text)
{
    pgw_array_iter_t it;
    pgw_value_t ev;
    pgw_array_iter_init(&it, a, scratch, cap);
    for (size_t i = 0; i < a->nelems; i++) {
        if (pgw_array_next(&it, &ev) != 1 || ev.len <= 0) return PGW_EFORMAT;
        if (memchr(ev.p, '\0', (size_t)ev.len)) return PGW_EFORMAT;
        memcpy(text, ev.p, (size_t)ev.len);
        text[ev.len] = '\0';
        names[i] = text;
        text += ev.len + 1;
    }
    return pgw_array_next(&it, &ev) == 0 ? 0 : PGW_EFORMAT;
}

/* Both attribute fields NULL (not a composite) or two lists of one length. */
static int read_attrs(const pgw_allocator_t *alloc, const pgw_view_t *oids_f,
                      const pgw_view_t *names_f, attrs_tmp_t *t)
{
    memset(t, 0, sizeof *t);
    if (oids_f->len < 0 && names_f->len < 0) return 0;
    if (oids_f->len < 0 || names_f->len < 0) return PGW_EFORMAT;
    pgw_array_t ao, an;
    if (parse_list(oids_f, PGW_OID_OID_ARRAY, &ao) < 0) return PGW_EFORMAT;
    if (parse_list(names_f, PGW_OID_NAME_ARRAY, &an) < 0) return PGW_EFORMAT;
    if (ao.nelems != an.nelems) return PGW_EFORMAT;
    size_t n = ao.nelems, len = (size_t)names_f->len;
    if (n == 0) return 0;
    size_t ptrs_at = n * sizeof(uint32_t);
    ptrs_at = (ptrs_at + sizeof(char *) - 1) / sizeof(char *) * sizeof(char *);
    size_t scratch_at = ptrs_at + n * sizeof(char *);
    size_t text_at = scratch_at + len;
    uint8_t *mem = pgw__malloc(alloc, text_at + len + n);
    if (!mem) return PGW_ENOMEM;
    t->mem = mem;
    t->n = n;
    t->oids = (uint32_t *)(void *)mem;
    t->names = (const char **)(void *)(mem + ptrs_at);
    if (read_attr_oids(&ao, t->oids) < 0 ||
        read_attr_names(&an, t->names, (char *)mem + scratch_at, len, (char *)mem + text_at) < 0)
        return PGW_EFORMAT;
    return 0;
}

/* Name NUL-terminated in buf (heap), or NULL. */
static char *field_cstr(const pgw_allocator_t *alloc, const pgw_view_t *f)
{
    if (f->len <= 0 || memchr(f->p, '\0', (size_t)f->len)) return NULL;
    char *s = pgw__malloc(alloc, (size_t)f->len + 1);
    if (!s) return NULL;
    memcpy(s, f->p, (size_t)f->len);
    s[f->len] = '\0';
    return s;
}

/* The scalar fields of a row into info (all but name and attributes). */
static int read_facts(const pgw_view_t *f, pgw_type_catalog_t *info)
{
    memset(info, 0, sizeof *info);
    if (field_oid(&f[COL_OID], &info->oid) < 0 || info->oid == 0) return PGW_EFORMAT;
    if (field_char(&f[COL_KIND], "bcdempr", &info->kind) < 0) return PGW_EFORMAT;
    if (field_char(&f[COL_DELIM], NULL, &info->delim) < 0) return PGW_EFORMAT;
    if (field_oid(&f[COL_BASE], &info->base_oid) < 0) return PGW_EFORMAT;
    if (field_oid(&f[COL_ELEM], &info->elem_oid) < 0) return PGW_EFORMAT;
    if (field_oid(&f[COL_ARRAY], &info->array_oid) < 0) return PGW_EFORMAT;
    return 0;
}

int pgw_type_registry_load_row(pgw_type_registry_t *reg, const pgw_view_t *fields, size_t nfields)
{
    if (!reg || !fields || nfields != PGW_TYPE_LOAD_NFIELDS) return PGW_EINVAL;
    pgw_type_catalog_t info;
    if (read_facts(fields, &info) < 0) return PGW_EFORMAT;
    const pgw_allocator_t *alloc = pgw__type_registry_alloc(reg);
    if (fields[COL_NAME].len <= 0) return PGW_EFORMAT;
    char *name = field_cstr(alloc, &fields[COL_NAME]);
    if (!name)
        return memchr(fields[COL_NAME].p, '\0', (size_t)fields[COL_NAME].len) ? PGW_EFORMAT
                                                                              : PGW_ENOMEM;
    attrs_tmp_t t;
    int rc = read_attrs(alloc, &fields[COL_ATTR_OIDS], &fields[COL_ATTR_NAMES], &t);
    if (rc == 0) {
        info.nattrs = t.n;
        info.attr_oids = t.oids;
        info.attr_names = t.names;
        rc = pgw__type_store_catalog(reg, name, &info);
    }
    pgw__free(alloc, t.mem);
    pgw__free(alloc, name);
    return rc;
}
