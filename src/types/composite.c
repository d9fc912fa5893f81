/*
 * Composite values (records).
 *
 * Binary (record_send): int32 field count, then per field the type oid,
 * int32 length (-1: NULL) and the bytes.
 * Text (record_out): '(' fields separated by ',' ')'. An empty unquoted
 * field is NULL; quotes group bytes (a doubled quote inside quotes is one
 * quote) and a backslash takes the next byte literally. Whitespace is data.
 */
#include "types/container_internal.h"

/* ------------------------------------------------------------------------ */
/* Text fields                                                              */
/* ------------------------------------------------------------------------ */

/* Find the end of the field at p: the first ',' or ')' outside quotes. */
static int scan_field(const uint8_t *p, const uint8_t *end, const uint8_t **stop, int *plain)
{
    int inquote = 0, special = 0;
    while (p < end) {
        uint8_t c = *p;
        if (!inquote && (c == ',' || c == ')')) break;
        if (c == '\\') {
            if (++p == end) return PGW_EFORMAT;
            special = 1;
        } else if (c == '"') {
            special = 1;
            if (!inquote)
                inquote = 1;
            else if (p + 1 < end && p[1] == '"')
                p++;
            else
                inquote = 0;
        }
        p++;
    }
    if (p == end) return PGW_EFORMAT;
    *stop = p;
    *plain = !special;
    return 0;
}

/* record_in's unquoting, shared with range.c (container_internal.h). */
size_t pgw__unquote(const uint8_t *p, const uint8_t *stop, char *dst)
{
    size_t n = 0;
    int inquote = 0;
    for (; p < stop; p++) {
        if (*p == '\\') {
            dst[n++] = (char)*++p;
        } else if (*p == '"') {
            if (!inquote)
                inquote = 1;
            else if (p + 1 < stop && p[1] == '"')
                dst[n++] = '"', p++;
            else
                inquote = 0;
        } else {
            dst[n++] = (char)*p;
        }
    }
    return n;
}

int pgw__simply_quoted(const uint8_t *p, const uint8_t *stop)
{
    if (stop - p < 2 || *p != '"' || stop[-1] != '"') return 0;
    for (const uint8_t *q = p + 1; q < stop - 1; q++)
        if (*q == '"' || *q == '\\') return 0;
    return 1;
}

static const uint8_t *skip_space(const uint8_t *p, const uint8_t *end)
{
    while (p < end && pgw__is_space(*p))
        p++;
    return p;
}

static int parse_text(pgw_record_t *r)
{
    const uint8_t *p = skip_space(r->_p, r->_end), *end = r->_end;
    if (p == end || *p != '(') return PGW_EFORMAT;
    const uint8_t *first = ++p;
    size_t n = 0;
    for (;;) {
        const uint8_t *stop;
        int plain;
        if (scan_field(p, end, &stop, &plain) < 0) return PGW_EFORMAT;
        n++;
        p = stop + 1;
        if (*stop == ')') break;
    }
    if (skip_space(p, end) != end) return PGW_EFORMAT;
    r->nfields = n;
    r->_p = first;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Binary fields                                                            */
/* ------------------------------------------------------------------------ */

static int next_bin_field(const uint8_t **pp, const uint8_t *end, pgw_value_t *out)
{
    const uint8_t *p = *pp;
    if (end - p < 8) return PGW_EFORMAT;
    out->oid = pgw__get32(p);
    int32_t len = (int32_t)pgw__get32(p + 4);
    p += 8;
    if (len < -1 || (len > 0 && (size_t)len > (size_t)(end - p))) return PGW_EFORMAT;
    out->p = len < 0 ? NULL : p;
    out->len = len;
    out->format = PGW_FORMAT_BINARY;
    *pp = p + (len > 0 ? len : 0);
    return 0;
}

static int parse_binary(pgw_record_t *r)
{
    const uint8_t *p = r->_p, *end = r->_end;
    if (end - p < 4) return PGW_EFORMAT;
    int32_t n = (int32_t)pgw__get32(p);
    p += 4;
    if (n < 0 || (size_t)n > (size_t)(end - p) / 8) return PGW_EFORMAT;
    r->_p = p;
    for (int32_t i = 0; i < n; i++) {
        pgw_value_t f;
        if (next_bin_field(&p, end, &f) < 0) return PGW_EFORMAT;
    }
    if (p != end) return PGW_EFORMAT;
    r->nfields = (size_t)n;
    return 0;
}

int pgw_record_parse_reg(const pgw_type_registry_t *reg, const pgw_value_t *v, pgw_record_t *out)
{
    if (!out) return PGW_EINVAL;
    memset(out, 0, sizeof *out);
    if (!v) return PGW_EINVAL;
    if (v->len < 0) return PGW_ENULL;
    if (!reg) reg = pgw_type_registry_default();
    out->format = v->format;
    out->_p = v->p;
    out->_end = v->p + v->len;
    int rc;
    if (v->format == PGW_FORMAT_BINARY)
        rc = parse_binary(out);
    else if (v->format == PGW_FORMAT_TEXT)
        rc = parse_text(out);
    else
        rc = PGW_EINVAL;
    if (rc < 0) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    out->_reg = reg;
    /* The text form carries no field types: a loaded composite gives them. */
    const pgw_type_catalog_t *t =
        v->oid >= PGW__FIRST_USER_OID ? pgw__type_catalog(reg, v->oid) : NULL;
    if (t && t->kind == PGW_TYPE_KIND_COMPOSITE && t->nattrs == out->nfields)
        out->_attr_oids = t->attr_oids;
    return 0;
}

int pgw_record_parse(const pgw_value_t *v, pgw_record_t *out)
{
    return pgw_record_parse_reg(NULL, v, out);
}

/* ------------------------------------------------------------------------ */
/* Iterator                                                                 */
/* ------------------------------------------------------------------------ */

void pgw_record_iter_init(pgw_record_iter_t *it, const pgw_record_t *rec, char *scratch,
                          size_t scratch_cap)
{
    if (!it) return;
    memset(it, 0, sizeof *it);
    it->rec = rec;
    if (!rec) {
        it->err = PGW_EINVAL;
        return;
    }
    it->pos = rec->_p;
    pgw_record_iter_set_scratch(it, scratch, scratch_cap);
}

void pgw_record_iter_set_scratch(pgw_record_iter_t *it, char *scratch, size_t cap)
{
    if (!it) return;
    it->scratch = scratch;
    it->scratch_cap = scratch ? cap : 0;
    it->scratch_used = 0;
}

static int next_text_field(pgw_record_iter_t *it, pgw_value_t *out)
{
    const uint8_t *stop, *p = it->pos;
    int plain;
    if (scan_field(p, it->rec->_end, &stop, &plain) < 0) return PGW_EFORMAT;
    size_t n = (size_t)(stop - p);
    out->format = PGW_FORMAT_TEXT;
    out->oid =
        it->rec->_attr_oids ? pgw__type_resolve(it->rec->_reg, it->rec->_attr_oids[it->index]) : 0;
    if (n == 0) {
        out->p = NULL, out->len = -1;
    } else if (plain) {
        out->p = p, out->len = (int32_t)n;
    } else if (pgw__simply_quoted(p, stop)) {
        out->p = p + 1, out->len = (int32_t)(n - 2);
    } else {
        if (it->scratch_cap - it->scratch_used < n) {
            it->need = n; /* an upper bound: unquoting only shrinks */
            return PGW_ERANGE;
        }
        char *dst = it->scratch + it->scratch_used;
        size_t len = pgw__unquote(p, stop, dst);
        it->scratch_used += len;
        out->p = (const uint8_t *)dst, out->len = (int32_t)len;
    }
    it->pos = stop + 1;
    return 1;
}

int pgw_record_next(pgw_record_iter_t *it, pgw_value_t *out)
{
    if (!it || !out) return PGW_EINVAL;
    if (it->err) return it->err;
    if (it->index >= it->rec->nfields) return 0;
    int rc;
    if (it->rec->format == PGW_FORMAT_BINARY) {
        rc = next_bin_field(&it->pos, it->rec->_end, out) < 0 ? PGW_EFORMAT : 1;
        if (rc == 1) out->oid = pgw__type_resolve(it->rec->_reg, out->oid);
    } else
        rc = next_text_field(it, out);
    if (rc == PGW_EFORMAT) it->err = rc;
    if (rc == 1) it->index++;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Encoder                                                                  */
/* ------------------------------------------------------------------------ */

/* The column type a field declares. A binary record names each field's
 * type; an untyped text field (pgw_text) has no type of its own, and its
 * bytes are sent as they are, which is text's binary form: it is text. */
static uint32_t record_field_oid(const pgw_param_t *p)
{
    if (p->oid == 0 && p->format == PGW_FORMAT_TEXT && p->kind == PGW_PARAM_BYTES)
        return PGW_OID_TEXT;
    return p->oid;
}

int pgw_encode_record(const void *vctx, pgw_buf_t *out)
{
    const pgw_record_enc_t *c = vctx;
    if (!c || !out) return PGW_EINVAL;
    if (c->nfields > INT32_MAX || (c->nfields && !c->fields)) return PGW_EINVAL;
    size_t start = out->len;
    int rc = pgw__buf_put32(out, (uint32_t)c->nfields);
    for (size_t i = 0; rc == 0 && i < c->nfields; i++) {
        rc = pgw__buf_put32(out, record_field_oid(&c->fields[i]));
        if (rc == 0) rc = pgw__enc_len_field(out, &c->fields[i]);
    }
    if (rc < 0) out->len = start;
    return rc;
}

pgw_param_t pgw_record_param(const pgw_record_enc_t *ctx)
{
    return pgw_encoded(ctx ? ctx->type_oid : 0, pgw_encode_record, ctx);
}
