/*
 * Arrays: binary and text decoding with an in-place element iterator, typed
 * bulk getters, and the binary array parameter encoder.
 *
 * Binary form (array_send): int32 ndim, int32 has-null flag, uint32 element
 * oid, ndim x (int32 size, int32 lower bound), then each element as int32
 * length (-1: NULL) and its bytes, row-major.
 * Text form (array_out): optional "[lb:ub]..." prefix and '=', then nested
 * braces; elements are unquoted (backslash escapes allowed, surrounding
 * whitespace ignored, bare NULL is a null) or double-quoted with backslash
 * escapes.
 */
#include "types/container_internal.h"
#include "types/types_internal.h"

#include <limits.h>

/* The server's MaxArraySize: MaxAllocSize / sizeof(Datum). */
#define PGW__MAX_ARRAY_ITEMS ((size_t)0x3fffffff / 8)

uint32_t pgw__array_elem(const pgw_type_registry_t *reg, uint32_t oid)
{
    if (oid < PGW__FIRST_USER_OID) return pgw_array_elem_oid(oid);
    const pgw_type_catalog_t *t = pgw__type_catalog(reg, oid);
    return t && t->kind == PGW_TYPE_KIND_BASE ? t->elem_oid : 0;
}

/* The delimiter between elements of type elem in the text form (typdelim):
 * the type table's for a built-in type, the loaded typdelim for the others
 * (',' when unknown). */
static uint8_t elem_delim(const pgw_type_registry_t *reg, uint32_t elem)
{
    const pgw__builtin_t *b = pgw__builtin(elem);
    if (b) return (uint8_t)b->delim;
    const pgw_type_catalog_t *t = elem >= PGW__FIRST_USER_OID ? pgw__type_catalog(reg, elem) : NULL;
    return t && t->delim ? (uint8_t)t->delim : ',';
}

/* ------------------------------------------------------------------------ */
/* Binary header                                                            */
/* ------------------------------------------------------------------------ */

/* nelems = product of dims, rejecting overflow past the server's limit. */
static int dims_product(int ndim, const int32_t *dims, size_t *out)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (dims[i] < 0) return PGW_EFORMAT;
        n *= (size_t)dims[i];
        if (n > PGW__MAX_ARRAY_ITEMS) return PGW_EFORMAT;
    }
    *out = ndim ? n : 0;
    return 0;
}

/* lb + dim - 1 must fit in int32, as the server checks. */
static int bounds_ok(int ndim, const int32_t *dims, const int32_t *lbounds)
{
    for (int i = 0; i < ndim; i++)
        if ((int64_t)lbounds[i] + dims[i] - 1 > INT32_MAX) return 0;
    return 1;
}

static int parse_binary(const pgw_type_registry_t *reg, const pgw_value_t *v, pgw_array_t *a)
{
    const uint8_t *p = v->p, *end = v->p + v->len;
    if (v->len < 12) return PGW_EFORMAT;
    int32_t ndim = (int32_t)pgw__get32(p);
    uint32_t flag = pgw__get32(p + 4);
    a->elem_oid = pgw__get32(p + 8);
    p += 12;
    if (ndim < 0 || ndim > PGW_ARRAY_MAXDIM || flag > 1) return PGW_EFORMAT;
    if ((size_t)(end - p) < (size_t)ndim * 8) return PGW_EFORMAT;
    for (int i = 0; i < ndim; i++, p += 8) {
        a->dims[i] = (int32_t)pgw__get32(p);
        a->lbounds[i] = (int32_t)pgw__get32(p + 4);
    }
    int rc = dims_product(ndim, a->dims, &a->nelems);
    if (rc < 0) return rc;
    if (!bounds_ok(ndim, a->dims, a->lbounds)) return PGW_EFORMAT;
    if (a->nelems == 0) ndim = 0; /* a zero-size dimension is the empty array */
    a->ndim = ndim;
    a->has_nulls = flag != 0;
    /* Every element takes at least its 4-byte length. */
    if (a->nelems > (size_t)(end - p) / 4) return PGW_EFORMAT;
    if (a->nelems == 0 && p != end) return PGW_EFORMAT;
    uint32_t want = pgw__array_elem(reg, v->oid);
    if (want && want != a->elem_oid) return PGW_ETYPE;
    a->_value_oid = pgw__type_resolve(reg, a->elem_oid);
    a->_p = p;
    a->_end = end;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Text form                                                                */
/* ------------------------------------------------------------------------ */

/* One text element as found in the input. */
typedef struct text_elem {
    const uint8_t *begin; /* content (inside quotes; trimmed if unquoted) */
    const uint8_t *end;
    const uint8_t *next; /* just past the element (and its closing quote) */
    size_t nescapes;     /* backslashes to drop when unescaping */
    bool quoted;
} text_elem_t;

static const uint8_t *skip_space(const uint8_t *p, const uint8_t *end)
{
    while (p < end && pgw__is_space(*p))
        p++;
    return p;
}

/* Read the element starting at p (not whitespace, a brace or the delimiter). */
static int read_text_elem(const uint8_t *p, const uint8_t *end, uint8_t delim, text_elem_t *e)
{
    e->nescapes = 0;
    e->quoted = *p == '"';
    if (e->quoted) {
        e->begin = ++p;
        while (p < end && *p != '"') {
            if (*p == '\\') {
                if (++p == end) return PGW_EFORMAT;
                e->nescapes++;
            }
            p++;
        }
        if (p == end) return PGW_EFORMAT;
        e->end = p;
        e->next = p + 1;
        return 0;
    }
    e->begin = p;
    const uint8_t *last = p; /* just past the last significant character */
    while (p < end && *p != delim && *p != '}') {
        if (*p == '"' || *p == '{') return PGW_EFORMAT;
        if (*p == '\\') {
            if (++p == end) return PGW_EFORMAT;
            e->nescapes++;
            last = p + 1;
        } else if (!pgw__is_space(*p)) {
            last = p + 1;
        }
        p++;
    }
    e->end = last;
    e->next = p;
    return e->end > e->begin ? 0 : PGW_EFORMAT;
}

static bool text_elem_is_null(const text_elem_t *e)
{
    static const char null_word[] = "null";
    if (e->quoted || e->nescapes || e->end - e->begin != 4) return false;
    for (int i = 0; i < 4; i++)
        if ((e->begin[i] | 0x20) != null_word[i]) return false;
    return true;
}

/* Parse a decimal int32 with optional sign and surrounding whitespace. */
static int parse_dim_int(const uint8_t **pp, const uint8_t *end, int32_t *out)
{
    const uint8_t *p = skip_space(*pp, end);
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-')) neg = *p++ == '-';
    if (p == end || *p < '0' || *p > '9') return PGW_EFORMAT;
    int64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        v = v * 10 + (*p++ - '0');
        if (v > (int64_t)INT32_MAX + 1) return PGW_EFORMAT;
    }
    v = neg ? -v : v;
    if (v > INT32_MAX || v < INT32_MIN) return PGW_EFORMAT;
    *out = (int32_t)v;
    *pp = skip_space(p, end);
    return 0;
}

/* The optional "[lb:ub][lb:ub]...=" prefix. */
static int parse_dim_prefix(const uint8_t **pp, const uint8_t *end, int *ndim, int32_t *dims,
                            int32_t *lbounds)
{
    const uint8_t *p = *pp;
    *ndim = 0;
    while (p < end && *p == '[') {
        if (*ndim == PGW_ARRAY_MAXDIM) return PGW_EFORMAT;
        p++;
        int32_t lb = 1, ub;
        if (parse_dim_int(&p, end, &ub) < 0) return PGW_EFORMAT;
        if (p < end && *p == ':') {
            p++;
            lb = ub;
            if (parse_dim_int(&p, end, &ub) < 0) return PGW_EFORMAT;
        }
        if (p == end || *p != ']' || ub < lb) return PGW_EFORMAT;
        if ((int64_t)ub - lb + 1 > INT32_MAX) return PGW_EFORMAT;
        dims[*ndim] = ub - lb + 1;
        lbounds[*ndim] = lb;
        (*ndim)++;
        p = skip_space(p + 1, end);
    }
    if (*ndim) {
        if (p == end || *p != '=') return PGW_EFORMAT;
        p = skip_space(p + 1, end);
    }
    *pp = p;
    return 0;
}

/* Structure check of the braces: fills ndim, dims, nelems, has_nulls. */
typedef struct text_shape {
    int ndim; /* -1 until the first element fixes it */
    int depth;
    int32_t dims[PGW_ARRAY_MAXDIM];
    size_t counts[PGW_ARRAY_MAXDIM];
    size_t nelems;
    bool has_nulls;
} text_shape_t;

static int shape_open(text_shape_t *s)
{
    int d = s->depth;
    if (d == PGW_ARRAY_MAXDIM || (s->ndim >= 0 && d >= s->ndim)) return PGW_EFORMAT;
    if (d > 0) s->counts[d - 1]++;
    s->counts[d] = 0;
    s->depth = d + 1;
    return 0;
}

static int shape_close(text_shape_t *s)
{
    int level = --s->depth;
    if (s->counts[level] > INT32_MAX) return PGW_EFORMAT;
    if (s->dims[level] < 0)
        s->dims[level] = (int32_t)s->counts[level];
    else if ((size_t)s->dims[level] != s->counts[level])
        return PGW_EFORMAT;
    return 0;
}

static int shape_elem(text_shape_t *s, const text_elem_t *e)
{
    if (s->ndim < 0) s->ndim = s->depth;
    if (s->depth != s->ndim) return PGW_EFORMAT;
    s->counts[s->depth - 1]++;
    if (++s->nelems > PGW__MAX_ARRAY_ITEMS) return PGW_EFORMAT;
    if (text_elem_is_null(e)) s->has_nulls = true;
    return 0;
}

/* Walk "{...}" at p; on success *pp is just past the outer '}'. */
static int scan_braces(const uint8_t **pp, const uint8_t *end, uint8_t delim, text_shape_t *s)
{
    const uint8_t *p = *pp;
    if (p == end || *p != '{') return PGW_EFORMAT;
    p = skip_space(p + 1, end);
    if (p < end && *p == '}') { /* "{}": the empty array */
        s->ndim = 0;
        *pp = p + 1;
        return 0;
    }
    s->depth = 1;
    s->counts[0] = 0;
    while (s->depth > 0) {
        /* Expect an item: a sub-array or an element. */
        if (p == end) return PGW_EFORMAT;
        if (*p == '{') {
            if (shape_open(s) < 0) return PGW_EFORMAT;
            p = skip_space(p + 1, end);
            continue;
        }
        if (*p == '}' || *p == delim) return PGW_EFORMAT; /* empty item */
        text_elem_t e;
        if (read_text_elem(p, end, delim, &e) < 0 || shape_elem(s, &e) < 0) return PGW_EFORMAT;
        p = skip_space(e.next, end);
        /* After an item: the delimiter then another item, or '}' closing levels. */
        for (;;) {
            if (p == end) return PGW_EFORMAT;
            if (*p == delim) {
                p = skip_space(p + 1, end);
                break;
            }
            if (*p != '}') return PGW_EFORMAT;
            if (shape_close(s) < 0) return PGW_EFORMAT;
            p = skip_space(p + 1, end);
            if (s->depth == 0) break;
        }
    }
    *pp = p;
    return 0;
}

static int parse_text(const pgw_type_registry_t *reg, const pgw_value_t *v, pgw_array_t *a)
{
    const uint8_t *p = v->p, *end = v->p + v->len;
    int pndim;
    int32_t pdims[PGW_ARRAY_MAXDIM], plb[PGW_ARRAY_MAXDIM];
    p = skip_space(p, end);
    if (parse_dim_prefix(&p, end, &pndim, pdims, plb) < 0) return PGW_EFORMAT;
    const uint8_t *start = p;
    text_shape_t s;
    memset(&s, 0, sizeof s);
    s.ndim = -1;
    for (int i = 0; i < PGW_ARRAY_MAXDIM; i++)
        s.dims[i] = -1;
    a->elem_oid = pgw__array_elem(reg, v->oid);
    a->_value_oid = pgw__type_resolve(reg, a->elem_oid);
    a->_delim = elem_delim(reg, a->elem_oid);
    if (scan_braces(&p, end, a->_delim, &s) < 0) return PGW_EFORMAT;
    if (skip_space(p, end) != end) return PGW_EFORMAT;
    if (pndim && pndim != s.ndim) return PGW_EFORMAT;
    a->ndim = s.ndim;
    for (int i = 0; i < s.ndim; i++) {
        if (pndim && pdims[i] != s.dims[i]) return PGW_EFORMAT;
        a->dims[i] = s.dims[i];
        a->lbounds[i] = pndim ? plb[i] : 1;
    }
    a->nelems = s.nelems;
    a->has_nulls = s.has_nulls;
    a->_p = start;
    a->_end = end;
    return 0;
}

int pgw_array_parse_reg(const pgw_type_registry_t *reg, const pgw_value_t *v, pgw_array_t *out)
{
    if (!out) return PGW_EINVAL;
    memset(out, 0, sizeof *out);
    if (!v) return PGW_EINVAL;
    if (v->len < 0) return PGW_ENULL;
    if (!reg) reg = pgw_type_registry_default();
    out->format = v->format;
    if (v->format == PGW_FORMAT_BINARY) return parse_binary(reg, v, out);
    if (v->format == PGW_FORMAT_TEXT) return parse_text(reg, v, out);
    return PGW_EINVAL;
}

int pgw_array_parse(const pgw_value_t *v, pgw_array_t *out)
{
    return pgw_array_parse_reg(NULL, v, out);
}

/* ------------------------------------------------------------------------ */
/* Iterator                                                                 */
/* ------------------------------------------------------------------------ */

void pgw_array_iter_init(pgw_array_iter_t *it, const pgw_array_t *arr, char *scratch,
                         size_t scratch_cap)
{
    if (!it) return;
    memset(it, 0, sizeof *it);
    it->arr = arr;
    if (!arr) {
        it->err = PGW_EINVAL;
        return;
    }
    it->pos = arr->_p;
    pgw_array_iter_set_scratch(it, scratch, scratch_cap);
}

void pgw_array_iter_set_scratch(pgw_array_iter_t *it, char *scratch, size_t cap)
{
    if (!it) return;
    it->scratch = scratch;
    it->scratch_cap = scratch ? cap : 0;
    it->scratch_used = 0;
}

static int next_binary(pgw_array_iter_t *it, pgw_value_t *out)
{
    const uint8_t *end = it->arr->_end;
    if ((size_t)(end - it->pos) < 4) return PGW_EFORMAT;
    int32_t len = (int32_t)pgw__get32(it->pos);
    if (len < -1 || (len > 0 && (size_t)len > (size_t)(end - it->pos - 4))) return PGW_EFORMAT;
    out->p = len < 0 ? NULL : it->pos + 4;
    out->len = len;
    it->pos += 4 + (len > 0 ? (size_t)len : 0);
    return 1;
}

/* Copy the element's content into scratch, dropping escaping backslashes. */
static void unescape_into(const text_elem_t *e, char *dst)
{
    for (const uint8_t *p = e->begin; p < e->end; p++) {
        if (*p == '\\') p++;
        *dst++ = (char)*p;
    }
}

static int next_text(pgw_array_iter_t *it, pgw_value_t *out)
{
    const uint8_t *p = it->pos, *end = it->arr->_end;
    uint8_t delim = it->arr->_delim;
    while (p < end && (*p == '{' || *p == '}' || *p == delim || pgw__is_space(*p)))
        p++;
    if (p == end) return PGW_EFORMAT;
    text_elem_t e;
    if (read_text_elem(p, end, delim, &e) < 0) return PGW_EFORMAT;
    size_t n = (size_t)(e.end - e.begin);
    if (text_elem_is_null(&e)) {
        out->p = NULL;
        out->len = -1;
    } else if (e.nescapes == 0) {
        out->p = e.begin;
        out->len = (int32_t)n;
    } else {
        size_t need = n - e.nescapes;
        if (it->scratch_cap - it->scratch_used < need) {
            it->need = need;
            return PGW_ERANGE;
        }
        char *dst = it->scratch + it->scratch_used;
        unescape_into(&e, dst);
        it->scratch_used += need;
        out->p = (const uint8_t *)dst;
        out->len = (int32_t)need;
    }
    it->pos = e.next;
    return 1;
}

int pgw_array_next(pgw_array_iter_t *it, pgw_value_t *out)
{
    if (!it || !out) return PGW_EINVAL;
    const pgw_array_t *a = it->arr;
    if (it->err) return it->err;
    if (it->index >= a->nelems) {
        /* Binary: every byte must belong to an element. */
        if (a->format == PGW_FORMAT_BINARY && it->pos != a->_end) return it->err = PGW_EFORMAT;
        return 0;
    }
    out->format = a->format;
    out->oid = a->_value_oid;
    int rc = a->format == PGW_FORMAT_BINARY ? next_binary(it, out) : next_text(it, out);
    if (rc == PGW_EFORMAT) it->err = rc;
    if (rc == 1) it->index++;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Bulk getters                                                             */
/* ------------------------------------------------------------------------ */

static int bulk_prepare(const pgw_value_t *v, pgw_array_t *a, const void *out, size_t cap,
                        size_t *n)
{
    if (!n || (!out && cap)) return PGW_EINVAL;
    int rc = pgw_array_parse(v, a);
    if (rc < 0) return rc;
    *n = a->nelems;
    return a->nelems > cap ? PGW_ERANGE : 0;
}

/*
 * Binary fixed-width fast path: each element is exactly width bytes or NULL.
 * The loop reads straight from the wire bytes.
 */
#define PGW__BULK_FAST(ctype, width, load)                               \
    do {                                                                 \
        const uint8_t *p = a._p, *end = a._end;                          \
        for (size_t i = 0; i < a.nelems; i++) {                          \
            if (end - p < 4) return PGW_EFORMAT;                         \
            int32_t len = (int32_t)pgw__get32(p);                        \
            p += 4;                                                      \
            if (len == -1) {                                             \
                if (!nulls) return PGW_ENULL;                            \
                nulls[i] = true;                                         \
                out[i] = (ctype)0;                                       \
                continue;                                                \
            }                                                            \
            if (len != (width) || end - p < (width)) return PGW_EFORMAT; \
            out[i] = load;                                               \
            if (nulls) nulls[i] = false;                                 \
            p += (width);                                                \
        }                                                                \
        return p == end ? 0 : PGW_EFORMAT;                               \
    } while (0)

/* Any other element type or the text form: element by element through the
 * scalar getter. A small scratch suffices: numbers never need long escapes. */
#define PGW__BULK_SLOW(getter)                                              \
    do {                                                                    \
        char scratch[128];                                                  \
        pgw_array_iter_t it;                                                \
        pgw_value_t ev;                                                     \
        pgw_array_iter_init(&it, &a, scratch, sizeof scratch);              \
        for (size_t i = 0; i < a.nelems; i++) {                             \
            pgw_array_iter_set_scratch(&it, scratch, sizeof scratch);       \
            int r = pgw_array_next(&it, &ev);                               \
            if (r != 1) return r == PGW_ERANGE || r == 0 ? PGW_EFORMAT : r; \
            if (ev.len < 0) {                                               \
                if (!nulls) return PGW_ENULL;                               \
                nulls[i] = true;                                            \
                memset(&out[i], 0, sizeof out[i]);                          \
                continue;                                                   \
            }                                                               \
            r = getter(&ev, &out[i]);                                       \
            if (r < 0) return r;                                            \
            if (nulls) nulls[i] = false;                                    \
        }                                                                   \
        pgw_value_t tail;                                                   \
        int r = pgw_array_next(&it, &tail);                                 \
        return r < 0 ? r : 0;                                               \
    } while (0)

static float load_f4(const uint8_t *p)
{
    uint32_t u = pgw__get32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static double load_f8(const uint8_t *p)
{
    uint64_t u = pgw__get64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

int pgw_array_get_bool(const pgw_value_t *v, bool *out, size_t cap, size_t *n, bool *nulls)
{
    pgw_array_t a;
    int rc = bulk_prepare(v, &a, out, cap, n);
    if (rc < 0) return rc;
    if (a.format == PGW_FORMAT_BINARY && a._value_oid == PGW_OID_BOOL)
        PGW__BULK_FAST(bool, 1, *p != 0);
    PGW__BULK_SLOW(pgw_get_bool);
}

int pgw_array_get_int2(const pgw_value_t *v, int16_t *out, size_t cap, size_t *n, bool *nulls)
{
    pgw_array_t a;
    int rc = bulk_prepare(v, &a, out, cap, n);
    if (rc < 0) return rc;
    if (a.format == PGW_FORMAT_BINARY && a._value_oid == PGW_OID_INT2)
        PGW__BULK_FAST(int16_t, 2, (int16_t)pgw__get16(p));
    PGW__BULK_SLOW(pgw_get_int2);
}

int pgw_array_get_int4(const pgw_value_t *v, int32_t *out, size_t cap, size_t *n, bool *nulls)
{
    pgw_array_t a;
    int rc = bulk_prepare(v, &a, out, cap, n);
    if (rc < 0) return rc;
    if (a.format == PGW_FORMAT_BINARY && a._value_oid == PGW_OID_INT4)
        PGW__BULK_FAST(int32_t, 4, (int32_t)pgw__get32(p));
    PGW__BULK_SLOW(pgw_get_int4);
}

int pgw_array_get_int8(const pgw_value_t *v, int64_t *out, size_t cap, size_t *n, bool *nulls)
{
    pgw_array_t a;
    int rc = bulk_prepare(v, &a, out, cap, n);
    if (rc < 0) return rc;
    if (a.format == PGW_FORMAT_BINARY && a._value_oid == PGW_OID_INT8)
        PGW__BULK_FAST(int64_t, 8, (int64_t)pgw__get64(p));
    PGW__BULK_SLOW(pgw_get_int8);
}

int pgw_array_get_float4(const pgw_value_t *v, float *out, size_t cap, size_t *n, bool *nulls)
{
    pgw_array_t a;
    int rc = bulk_prepare(v, &a, out, cap, n);
    if (rc < 0) return rc;
    if (a.format == PGW_FORMAT_BINARY && a._value_oid == PGW_OID_FLOAT4)
        PGW__BULK_FAST(float, 4, load_f4(p));
    PGW__BULK_SLOW(pgw_get_float4);
}

int pgw_array_get_float8(const pgw_value_t *v, double *out, size_t cap, size_t *n, bool *nulls)
{
    pgw_array_t a;
    int rc = bulk_prepare(v, &a, out, cap, n);
    if (rc < 0) return rc;
    if (a.format == PGW_FORMAT_BINARY && a._value_oid == PGW_OID_FLOAT8)
        PGW__BULK_FAST(double, 8, load_f8(p));
    PGW__BULK_SLOW(pgw_get_float8);
}

/* ------------------------------------------------------------------------ */
/* Encoder                                                                  */
/* ------------------------------------------------------------------------ */

void pgw_array_enc_init(pgw_array_enc_t *ctx, uint32_t elem_oid, const void *elems, size_t n,
                        const bool *nulls)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->elem_oid = elem_oid;
    ctx->elems = elems;
    ctx->nelems = n;
    ctx->nulls = nulls;
}

pgw_param_t pgw_array_param(const pgw_array_enc_t *ctx)
{
    if (!ctx) return pgw_encoded(0, pgw_encode_array, NULL); /* fails to encode: PGW_EINVAL */
    uint32_t oid = ctx->array_oid ? ctx->array_oid : pgw_array_oid_for(ctx->elem_oid);
    return pgw_encoded(oid, pgw_encode_array, ctx);
}

/* How elements of each oid are laid out in ctx->elems. */
enum elem_kind { EK_VIEW, EK_FIXED, EK_CSTR, EK_JSONB };

/* The C layout of elements of type oid, from the type table: the plain C
 * scalars (bool, integers, floats, dates and times as their integer counts,
 * uuid bytes) are fixed-width; text-like types are C strings, with the
 * version byte added for jsonb and jsonpath; everything else is a view. */
static enum elem_kind elem_kind_of(uint32_t oid, size_t *width)
{
    const pgw__builtin_t *t = pgw__builtin(oid);
    switch (t ? t->kind : PGW_DATUM_NONE) {
    case PGW_DATUM_BOOL:
    case PGW_DATUM_INT:
    case PGW_DATUM_FLOAT4:
    case PGW_DATUM_FLOAT8:
    case PGW_DATUM_DATE:
    case PGW_DATUM_TIME:
    case PGW_DATUM_TIMESTAMP:
    case PGW_DATUM_TIMESTAMPTZ:
    case PGW_DATUM_UUID:
        *width = (size_t)t->width;
        return EK_FIXED;
    default:
        break;
    }
    if (t && t->text == PGW__TL_SAME) {
        *width = sizeof(const char *);
        return EK_CSTR;
    }
    if (t && t->text == PGW__TL_VERSIONED) {
        *width = sizeof(const char *);
        return EK_JSONB;
    }
    *width = sizeof(pgw_view_t);
    return EK_VIEW;
}

/* Store one fixed-width C value big-endian at dst: a bool as one byte,
 * 16 bytes (uuid) as they are, anything else as its width's integer. */
static void put_fixed(uint8_t *dst, size_t width, const uint8_t *src)
{
    switch (width) {
    case 1:
        *dst = *(const bool *)(const void *)src ? 1 : 0;
        break;
    case 2: {
        int16_t v;
        memcpy(&v, src, 2);
        pgw__put16(dst, (uint16_t)v);
        break;
    }
    case 16:
        memcpy(dst, src, 16);
        break;
    case 4: {
        uint32_t v;
        memcpy(&v, src, 4);
        pgw__put32(dst, v);
        break;
    }
    default: {
        uint64_t v;
        memcpy(&v, src, 8);
        pgw__put64(dst, v);
        break;
    }
    }
}

static int check_shape(const pgw_array_enc_t *c, int *ndim, int32_t *dims, int32_t *lbounds)
{
    if (c->ndim < 0 || c->ndim > PGW_ARRAY_MAXDIM) return PGW_EINVAL;
    if (c->nelems && !c->elems) return PGW_EINVAL;
    if (c->nelems > PGW__MAX_ARRAY_ITEMS) return PGW_EINVAL;
    if (c->ndim == 0) {
        *ndim = c->nelems ? 1 : 0;
        dims[0] = (int32_t)c->nelems;
        lbounds[0] = 1;
        return 0;
    }
    size_t n;
    if (dims_product(c->ndim, c->dims, &n) < 0 || n != c->nelems) return PGW_EINVAL;
    if (!bounds_ok(c->ndim, c->dims, c->lbounds)) return PGW_EINVAL;
    *ndim = n ? c->ndim : 0;
    memcpy(dims, c->dims, sizeof c->dims);
    memcpy(lbounds, c->lbounds, sizeof c->lbounds);
    return 0;
}

static bool elem_is_null(const pgw_array_enc_t *c, enum elem_kind k, size_t i)
{
    if (c->nulls && c->nulls[i]) return true;
    if (k == EK_CSTR || k == EK_JSONB) return ((const char *const *)c->elems)[i] == NULL;
    if (k == EK_VIEW) return ((const pgw_view_t *)c->elems)[i].len < 0;
    return false;
}

/* Append the elements of a fixed-width type: one reservation, no re-checks. */
static int put_fixed_elems(const pgw_array_enc_t *c, size_t width, pgw_buf_t *b)
{
    if (c->nelems > (size_t)INT32_MAX / (4 + width)) return PGW_ETOOBIG;
    int rc = pgw_buf_reserve(b, c->nelems * (4 + width));
    if (rc < 0) return rc;
    uint8_t *dst = b->data + b->len;
    const uint8_t *src = c->elems;
    for (size_t i = 0; i < c->nelems; i++, src += width) {
        if (c->nulls && c->nulls[i]) {
            pgw__put32(dst, UINT32_MAX);
            dst += 4;
            continue;
        }
        pgw__put32(dst, (uint32_t)width);
        put_fixed(dst + 4, width, src);
        dst += 4 + width;
    }
    b->len = (size_t)(dst - b->data);
    return 0;
}

static int put_var_elem(const pgw_array_enc_t *c, enum elem_kind k, size_t i, pgw_buf_t *b)
{
    const uint8_t *p;
    size_t len;
    if (k == EK_VIEW) {
        const pgw_view_t *vw = &((const pgw_view_t *)c->elems)[i];
        p = vw->p;
        len = (size_t)vw->len;
    } else {
        const char *s = ((const char *const *)c->elems)[i];
        p = (const uint8_t *)s;
        if (c->lens && c->lens[i] < 0) return PGW_EINVAL;
        len = c->lens ? (size_t)c->lens[i] : strlen(s);
    }
    size_t extra = k == EK_JSONB ? 1 : 0;
    if (len > (size_t)INT32_MAX - extra) return PGW_ETOOBIG;
    int rc = pgw_buf_reserve(b, 4 + extra + len);
    if (rc < 0) return rc;
    pgw__put32(b->data + b->len, (uint32_t)(len + extra));
    b->len += 4;
    if (extra) b->data[b->len++] = 1; /* jsonb binary version */
    if (len) memcpy(b->data + b->len, p, len);
    b->len += len;
    return 0;
}

static int put_elems(const pgw_array_enc_t *c, enum elem_kind k, size_t width, pgw_buf_t *b)
{
    if (k == EK_FIXED) return put_fixed_elems(c, width, b);
    for (size_t i = 0; i < c->nelems; i++) {
        int rc;
        if (elem_is_null(c, k, i))
            rc = pgw__buf_put32(b, UINT32_MAX);
        else
            rc = put_var_elem(c, k, i, b);
        if (rc < 0) return rc;
    }
    return 0;
}

int pgw_encode_array(const void *vctx, pgw_buf_t *out)
{
    const pgw_array_enc_t *c = vctx;
    int ndim;
    int32_t dims[PGW_ARRAY_MAXDIM], lbounds[PGW_ARRAY_MAXDIM];
    if (!c || !out || c->elem_oid == 0) return PGW_EINVAL;
    int rc = check_shape(c, &ndim, dims, lbounds);
    if (rc < 0) return rc;
    size_t width;
    enum elem_kind k = elem_kind_of(c->elem_oid, &width);
    bool has_null = false;
    for (size_t i = 0; i < c->nelems && !has_null; i++)
        has_null = elem_is_null(c, k, i);
    size_t start = out->len;
    rc = pgw_buf_reserve(out, 12 + 8 * (size_t)ndim);
    if (rc < 0) return rc;
    uint8_t *h = out->data + out->len;
    pgw__put32(h, (uint32_t)ndim);
    pgw__put32(h + 4, has_null ? 1 : 0);
    pgw__put32(h + 8, c->elem_oid);
    for (int i = 0; i < ndim; i++) {
        pgw__put32(h + 12 + 8 * i, (uint32_t)dims[i]);
        pgw__put32(h + 16 + 8 * i, (uint32_t)lbounds[i]);
    }
    out->len += 12 + 8 * (size_t)ndim;
    rc = put_elems(c, k, width, out);
    if (rc == 0 && out->len - start > INT32_MAX) rc = PGW_ETOOBIG;
    if (rc < 0) out->len = start;
    return rc;
}
