/*
 * Ranges and multiranges.
 *
 * Binary range (range_send): a flags byte, then unless the range is empty,
 * the lower bound (if not -infinity) and the upper bound (if not +infinity),
 * each as int32 length and the element's binary bytes.
 * Text range (range_out): "empty", or '[' / '(' lower ',' upper ']' / ')',
 * where an absent bound is infinite and bounds may be quoted, with "" for a
 * quote inside quotes and backslash escapes anywhere.
 * Binary multirange: int32 count, then each range as int32 length + range.
 * Text multirange: '{' ranges separated by ',' '}'.
 */
#include "types/container_internal.h"

#define RANGE_WIRE_FLAGS \
    (PGW_RANGE_EMPTY | PGW_RANGE_LB_INC | PGW_RANGE_UB_INC | PGW_RANGE_LB_INF | PGW_RANGE_UB_INF)

static const struct {
    uint32_t range, elem, multirange;
} range_oids[] = {
    {PGW_OID_INT4RANGE, PGW_OID_INT4, PGW_OID_INT4MULTIRANGE},
    {PGW_OID_INT8RANGE, PGW_OID_INT8, PGW_OID_INT8MULTIRANGE},
    {PGW_OID_NUMRANGE, PGW_OID_NUMERIC, PGW_OID_NUMMULTIRANGE},
    {PGW_OID_DATERANGE, PGW_OID_DATE, PGW_OID_DATEMULTIRANGE},
    {PGW_OID_TSRANGE, PGW_OID_TIMESTAMP, PGW_OID_TSMULTIRANGE},
    {PGW_OID_TSTZRANGE, PGW_OID_TIMESTAMPTZ, PGW_OID_TSTZMULTIRANGE},
};

uint32_t pgw_range_elem_oid(uint32_t range_oid)
{
    for (size_t i = 0; i < PGW__ARRAY_LEN(range_oids); i++)
        if (range_oids[i].range == range_oid) return range_oids[i].elem;
    return 0;
}

uint32_t pgw_multirange_range_oid(uint32_t multirange_oid)
{
    for (size_t i = 0; i < PGW__ARRAY_LEN(range_oids); i++)
        if (range_oids[i].multirange == multirange_oid) return range_oids[i].range;
    return 0;
}

/* The subtype of range oid (built in, or loaded into reg), resolved for
 * decoding; 0 if unknown. */
uint32_t pgw__range_bound_oid(const pgw_type_registry_t *reg, uint32_t oid)
{
    uint32_t elem = pgw_range_elem_oid(oid);
    if (!elem && oid >= PGW__FIRST_USER_OID) {
        const pgw_type_catalog_t *t = pgw__type_catalog(reg, oid);
        if (t && t->kind == PGW_TYPE_KIND_RANGE) elem = t->elem_oid;
    }
    return elem ? pgw__type_resolve(reg, elem) : 0;
}

/* The range type of multirange oid (built in, or loaded into reg), or 0. */
uint32_t pgw__multirange_range(const pgw_type_registry_t *reg, uint32_t oid)
{
    uint32_t range = pgw_multirange_range_oid(oid);
    if (!range && oid >= PGW__FIRST_USER_OID) {
        const pgw_type_catalog_t *t = pgw__type_catalog(reg, oid);
        if (t && t->kind == PGW_TYPE_KIND_MULTIRANGE) range = t->elem_oid;
    }
    return range;
}

static void set_missing(pgw_value_t *v)
{
    v->p = NULL;
    v->len = -1;
}

/* ------------------------------------------------------------------------ */
/* Binary                                                                   */
/* ------------------------------------------------------------------------ */

static int read_bin_bound(const uint8_t **pp, const uint8_t *end, pgw_value_t *v)
{
    const uint8_t *p = *pp;
    if (end - p < 4) return PGW_EFORMAT;
    int32_t len = (int32_t)pgw__get32(p);
    p += 4;
    if (len < 0 || (size_t)len > (size_t)(end - p)) return PGW_EFORMAT;
    v->p = p;
    v->len = len;
    *pp = p + len;
    return 0;
}

static int parse_bin_range(const uint8_t *p, const uint8_t *end, pgw_range_t *r)
{
    if (p == end) return PGW_EFORMAT;
    r->flags = *p++ & RANGE_WIRE_FLAGS;
    if (r->flags & PGW_RANGE_EMPTY) {
        r->flags = PGW_RANGE_EMPTY;
    } else {
        if (!(r->flags & PGW_RANGE_LB_INF) && read_bin_bound(&p, end, &r->lower) < 0)
            return PGW_EFORMAT;
        if (!(r->flags & PGW_RANGE_UB_INF) && read_bin_bound(&p, end, &r->upper) < 0)
            return PGW_EFORMAT;
    }
    return p == end ? 0 : PGW_EFORMAT;
}

/* ------------------------------------------------------------------------ */
/* Text                                                                     */
/* ------------------------------------------------------------------------ */

static const uint8_t *skip_space(const uint8_t *p, const uint8_t *end)
{
    while (p < end && pgw__is_space(*p))
        p++;
    return p;
}

/* Where unescaped bound bytes go; used is shared by both bounds. */
typedef struct scratch {
    char *p;
    size_t cap;
    size_t *used;
    int dry; /* validate only: escaped bounds are left as raw views */
} scratch_t;

/* Find the end of a bound starting at p: the first ',', ']' or ')' outside
 * quotes. Reports whether the bytes need unescaping. */
static int scan_bound(const uint8_t *p, const uint8_t *end, const uint8_t **stop, int *plain)
{
    int inquote = 0, quotes = 0, escapes = 0;
    while (p < end) {
        uint8_t c = *p;
        if (!inquote && (c == ',' || c == ']' || c == ')')) break;
        if (c == '\\') {
            if (++p == end) return PGW_EFORMAT;
            escapes++;
        } else if (c == '"') {
            quotes++;
            if (!inquote)
                inquote = 1;
            else if (p + 1 < end && p[1] == '"')
                p++, quotes++;
            else
                inquote = 0;
        }
        p++;
    }
    if (p == end || inquote) return PGW_EFORMAT;
    *stop = p;
    *plain = escapes == 0 && quotes == 0 ? 1 : 0;
    return 0;
}

static int read_text_bound(const uint8_t *p, const uint8_t *end, const uint8_t **stop,
                           pgw_value_t *v, scratch_t *s)
{
    int plain;
    if (scan_bound(p, end, stop, &plain) < 0) return PGW_EFORMAT;
    size_t n = (size_t)(*stop - p);
    if (n == 0) return 1; /* infinite */
    if (plain) {
        v->p = p, v->len = (int32_t)n;
    } else if (pgw__simply_quoted(p, *stop)) {
        v->p = p + 1, v->len = (int32_t)(n - 2);
    } else if (s->dry) {
        v->p = p, v->len = (int32_t)n;
    } else {
        if (!s->p || s->cap - *s->used < n) return PGW_ERANGE; /* n bounds the result */
        char *dst = s->p + *s->used;
        size_t len = pgw__unquote(p, *stop, dst);
        *s->used += len;
        v->p = (const uint8_t *)dst, v->len = (int32_t)len;
    }
    return 0;
}

static int match_word(const uint8_t *p, const uint8_t *end, const char *w)
{
    for (; *w; w++, p++)
        if (p == end || (*p | 0x20) != *w) return 0;
    return 1;
}

/* Parse one text range at p (no leading space); *next is just past it. */
static int parse_text_range(const uint8_t *p, const uint8_t *end, pgw_range_t *r, scratch_t *s,
                            const uint8_t **next)
{
    if (match_word(p, end, "empty")) {
        r->flags = PGW_RANGE_EMPTY;
        *next = p + 5;
        return 0;
    }
    if (p == end || (*p != '[' && *p != '(')) return PGW_EFORMAT;
    r->flags = *p++ == '[' ? PGW_RANGE_LB_INC : 0;
    const uint8_t *stop;
    int rc = read_text_bound(p, end, &stop, &r->lower, s);
    if (rc < 0) return rc;
    if (rc == 1) r->flags = (uint8_t)((r->flags & ~PGW_RANGE_LB_INC) | PGW_RANGE_LB_INF);
    if (*stop != ',') return PGW_EFORMAT;
    rc = read_text_bound(stop + 1, end, &stop, &r->upper, s);
    if (rc < 0) return rc;
    if (*stop == ',') return PGW_EFORMAT;
    if (*stop == ']') r->flags |= PGW_RANGE_UB_INC;
    if (rc == 1) r->flags = (uint8_t)((r->flags & ~PGW_RANGE_UB_INC) | PGW_RANGE_UB_INF);
    *next = stop + 1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Ranges                                                                   */
/* ------------------------------------------------------------------------ */

static void range_init(pgw_range_t *r, int16_t format, uint32_t elem_oid)
{
    memset(r, 0, sizeof *r);
    set_missing(&r->lower);
    set_missing(&r->upper);
    r->lower.format = r->upper.format = format;
    r->lower.oid = r->upper.oid = elem_oid;
}

static int parse_range_bytes(const uint8_t *p, const uint8_t *end, int16_t format,
                             uint32_t elem_oid, pgw_range_t *out, scratch_t *s)
{
    range_init(out, format, elem_oid);
    if (format == PGW_FORMAT_BINARY) return parse_bin_range(p, end, out);
    if (format != PGW_FORMAT_TEXT) return PGW_EINVAL;
    const uint8_t *next;
    p = skip_space(p, end);
    int rc = parse_text_range(p, end, out, s, &next);
    if (rc < 0) return rc;
    return skip_space(next, end) == end ? 0 : PGW_EFORMAT;
}

int pgw_range_parse_reg(const pgw_type_registry_t *reg, const pgw_value_t *v, pgw_range_t *out,
                        char *scratch, size_t scratch_cap)
{
    size_t used = 0;
    scratch_t s = {scratch, scratch ? scratch_cap : 0, &used, 0};
    if (!out) return PGW_EINVAL;
    if (!v) {
        range_init(out, PGW_FORMAT_TEXT, 0);
        return PGW_EINVAL;
    }
    if (v->len < 0) {
        range_init(out, v->format, 0);
        return PGW_ENULL;
    }
    if (!reg) reg = pgw_type_registry_default();
    int rc = parse_range_bytes(v->p, v->p + v->len, v->format, pgw__range_bound_oid(reg, v->oid),
                               out, &s);
    if (rc < 0) range_init(out, v->format, 0);
    return rc;
}

int pgw_range_parse(const pgw_value_t *v, pgw_range_t *out, char *scratch, size_t scratch_cap)
{
    return pgw_range_parse_reg(NULL, v, out, scratch, scratch_cap);
}

/* ------------------------------------------------------------------------ */
/* Multiranges                                                              */
/* ------------------------------------------------------------------------ */

/* One step over a binary multirange: the next range's bytes. */
static int next_bin_item(const uint8_t **pp, const uint8_t *end, const uint8_t **rp,
                         const uint8_t **rend)
{
    const uint8_t *p = *pp;
    if (end - p < 4) return PGW_EFORMAT;
    int32_t len = (int32_t)pgw__get32(p);
    p += 4;
    if (len < 1 || (size_t)len > (size_t)(end - p)) return PGW_EFORMAT;
    *rp = p;
    *rend = p + len;
    *pp = p + len;
    return 0;
}

static int parse_bin_multirange(pgw_multirange_t *m)
{
    const uint8_t *p = m->_p, *end = m->_end;
    if (end - p < 4) return PGW_EFORMAT;
    uint32_t count = pgw__get32(p);
    p += 4;
    if (count > (uint32_t)(end - p) / 5) return PGW_EFORMAT; /* 4-byte length + flags */
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *rp, *rend;
        pgw_range_t r;
        if (next_bin_item(&p, end, &rp, &rend) < 0 || parse_bin_range(rp, rend, &r) < 0)
            return PGW_EFORMAT;
    }
    if (p != end) return PGW_EFORMAT;
    m->count = count;
    m->_p += 4;
    return 0;
}

/* Text multirange: walk "{r, r, ...}", validating each range (bounds that
 * need unescaping are checked, not written). */
static int walk_text_multirange(const uint8_t *p, const uint8_t *end, size_t *count)
{
    p = skip_space(p, end);
    if (p == end || *p != '{') return PGW_EFORMAT;
    p = skip_space(p + 1, end);
    size_t n = 0;
    if (p < end && *p == '}') {
        p++;
    } else {
        for (;;) {
            pgw_range_t r;
            size_t used = 0;
            scratch_t s = {NULL, 0, &used, 1};
            const uint8_t *next;
            if (parse_text_range(p, end, &r, &s, &next) < 0) return PGW_EFORMAT;
            n++;
            p = skip_space(next, end);
            if (p == end) return PGW_EFORMAT;
            if (*p == '}') {
                p++;
                break;
            }
            if (*p != ',') return PGW_EFORMAT;
            p = skip_space(p + 1, end);
        }
    }
    if (skip_space(p, end) != end) return PGW_EFORMAT;
    *count = n;
    return 0;
}

int pgw_multirange_parse_reg(const pgw_type_registry_t *reg, const pgw_value_t *v,
                             pgw_multirange_t *out)
{
    if (!out) return PGW_EINVAL;
    memset(out, 0, sizeof *out);
    if (!v) return PGW_EINVAL;
    if (v->len < 0) return PGW_ENULL;
    if (!reg) reg = pgw_type_registry_default();
    out->format = v->format;
    out->range_oid = pgw__multirange_range(reg, v->oid);
    out->_bound_oid = pgw__range_bound_oid(reg, out->range_oid);
    out->_p = v->p;
    out->_end = v->p + v->len;
    if (v->format == PGW_FORMAT_BINARY) return parse_bin_multirange(out);
    if (v->format != PGW_FORMAT_TEXT) return PGW_EINVAL;
    int rc = walk_text_multirange(v->p, out->_end, &out->count);
    if (rc < 0) return rc;
    /* Iteration starts just inside the '{'. */
    out->_p = skip_space(v->p, out->_end) + 1;
    return 0;
}

int pgw_multirange_parse(const pgw_value_t *v, pgw_multirange_t *out)
{
    return pgw_multirange_parse_reg(NULL, v, out);
}

void pgw_multirange_iter_init(pgw_multirange_iter_t *it, const pgw_multirange_t *mr, char *scratch,
                              size_t scratch_cap)
{
    static const pgw_multirange_t none; /* a NULL multirange iterates as empty */
    if (!it) return;
    if (!mr) mr = &none;
    memset(it, 0, sizeof *it);
    it->mr = mr;
    it->pos = mr->_p;
    it->scratch = scratch;
    it->scratch_cap = scratch ? scratch_cap : 0;
}

int pgw_multirange_next(pgw_multirange_iter_t *it, pgw_range_t *out)
{
    if (!it || !out || !it->mr) return PGW_EINVAL;
    const pgw_multirange_t *m = it->mr;
    if (it->index >= m->count) return 0;
    uint32_t elem = m->_bound_oid;
    const uint8_t *end = m->_end;
    if (m->format == PGW_FORMAT_BINARY) {
        const uint8_t *rp, *rend;
        if (next_bin_item(&it->pos, end, &rp, &rend) < 0) return PGW_EFORMAT;
        range_init(out, m->format, elem);
        if (parse_bin_range(rp, rend, out) < 0) return PGW_EFORMAT;
        it->index++;
        return 1;
    }
    const uint8_t *p = it->pos;
    while (p < end && (*p == ',' || pgw__is_space(*p)))
        p++;
    size_t used = it->scratch_used;
    scratch_t s = {it->scratch, it->scratch_cap, &used, 0};
    const uint8_t *next;
    range_init(out, m->format, elem);
    int rc = parse_text_range(p, end, out, &s, &next);
    if (rc < 0) {
        range_init(out, m->format, elem);
        return rc;
    }
    it->scratch_used = used;
    it->pos = next;
    it->index++;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Encoders                                                                 */
/* ------------------------------------------------------------------------ */

static int put_bound(pgw_buf_t *out, const pgw_param_t *p)
{
    if (p->kind == PGW_PARAM_NULL) return PGW_EINVAL; /* infinite is a flag, not NULL */
    return pgw__enc_len_field(out, p);
}

int pgw_encode_range(const void *vctx, pgw_buf_t *out)
{
    const pgw_range_enc_t *c = vctx;
    if (!c || !out) return PGW_EINVAL;
    size_t start = out->len;
    uint8_t flags = c->flags & RANGE_WIRE_FLAGS;
    if (flags & PGW_RANGE_EMPTY) flags = PGW_RANGE_EMPTY;
    /* An infinite side is never inclusive, as the server normalises. */
    if (flags & PGW_RANGE_LB_INF) flags &= (uint8_t)~PGW_RANGE_LB_INC;
    if (flags & PGW_RANGE_UB_INF) flags &= (uint8_t)~PGW_RANGE_UB_INC;
    int rc = pgw_buf_append(out, &flags, 1);
    if (rc == 0 && !(flags & (PGW_RANGE_EMPTY | PGW_RANGE_LB_INF))) rc = put_bound(out, &c->lower);
    if (rc == 0 && !(flags & (PGW_RANGE_EMPTY | PGW_RANGE_UB_INF))) rc = put_bound(out, &c->upper);
    if (rc < 0) out->len = start;
    return rc;
}

pgw_param_t pgw_range_param(const pgw_range_enc_t *ctx)
{
    return pgw_encoded(ctx ? ctx->range_oid : 0, pgw_encode_range, ctx);
}

int pgw_encode_multirange(const void *vctx, pgw_buf_t *out)
{
    const pgw_multirange_enc_t *c = vctx;
    if (!c || !out) return PGW_EINVAL;
    size_t start = out->len;
    if (c->n > INT32_MAX || (c->n && !c->ranges)) return PGW_EINVAL;
    int rc = pgw__buf_put32(out, (uint32_t)c->n);
    for (size_t i = 0; rc == 0 && i < c->n; i++) {
        size_t at = out->len;
        rc = pgw__buf_put32(out, 0);
        if (rc == 0) rc = pgw_encode_range(&c->ranges[i], out);
        if (rc == 0) rc = pgw__patch_len(out, at);
    }
    if (rc < 0) out->len = start;
    return rc;
}

pgw_param_t pgw_multirange_param(const pgw_multirange_enc_t *ctx)
{
    return pgw_encoded(ctx ? ctx->multirange_oid : 0, pgw_encode_multirange, ctx);
}
