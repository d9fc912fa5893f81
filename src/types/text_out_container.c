/*
 * Arrays, ranges, multiranges and records in the server's text form
 * (array_out, range_out, multirange_out, record_out). Each element is
 * written straight into the output by the scalar writers, then quoted in
 * place when the server would quote it: no scratch buffer per element.
 */
#include "types/text_out_internal.h"

/* The quoting rules of the three output functions. */
typedef enum quote_rule {
    QUOTE_ARRAY,  /* backslash before " and \; also quotes NULL and braces */
    QUOTE_RECORD, /* " and \ doubled; parentheses and commas */
    QUOTE_RANGE   /* as records, and brackets */
} quote_rule_t;

static bool ci_null(const uint8_t *s, size_t n)
{
    return n == 4 && (s[0] | 32) == 'n' && (s[1] | 32) == 'u' && (s[2] | 32) == 'l' &&
           (s[3] | 32) == 'l';
}

static bool needs_quotes(const uint8_t *s, size_t n, quote_rule_t rule, char delim)
{
    if (n == 0 || (rule == QUOTE_ARRAY && ci_null(s, n))) return true;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c == '"' || c == '\\' || pgw__is_space(c)) return true;
        if (rule == QUOTE_ARRAY ? (c == '{' || c == '}' || c == (uint8_t)delim)
                                : (c == '(' || c == ')' || c == ',' ||
                                   (rule == QUOTE_RANGE && (c == '[' || c == ']'))))
            return true;
    }
    return false;
}

/* Quote the element written at out->data[start..] when the rule says so:
 * grow the buffer by the quotes and escapes, then move the text back to
 * front, escaping as it goes. */
static int quote_in_place(pgw__text_out_t *t, size_t start, quote_rule_t rule, char delim)
{
    pgw_buf_t *b = t->out;
    size_t n = b->len - start;
    if (!needs_quotes(b->data + start, n, rule, delim)) return 0;
    size_t extra = 2;
    for (size_t i = 0; i < n; i++)
        extra += b->data[start + i] == '"' || b->data[start + i] == '\\';
    int rc = pgw_buf_reserve(b, extra);
    if (rc < 0) return rc;
    uint8_t *s = b->data + start;
    size_t w = n + extra;
    s[--w] = '"';
    for (size_t i = n; i-- > 0;) {
        uint8_t c = s[i];
        s[--w] = c;
        if (c == '"' || c == '\\') s[--w] = rule == QUOTE_ARRAY ? '\\' : c;
    }
    s[--w] = '"';
    b->len += extra;
    return 0;
}

/* One element: its text, quoted as rule says. */
static int put_element(pgw__text_out_t *t, const pgw_value_t *e, quote_rule_t rule, char delim)
{
    size_t start = t->out->len;
    int rc = pgw__text_binary(t, e->oid, e->p, e->len);
    return rc < 0 ? rc : quote_in_place(t, start, rule, delim);
}

/* ------------------------------------------------------------------ arrays */

/* "[lb:ub]..." when a lower bound is not 1, then "=". */
static int put_dims(pgw__text_out_t *t, const pgw_array_t *a)
{
    int rc = 0;
    bool need = false;
    for (int i = 0; i < a->ndim; i++)
        need |= a->lbounds[i] != 1;
    for (int i = 0; need && i < a->ndim && rc == 0; i++) {
        rc = pgw__text_putc(t, '[');
        if (rc == 0) rc = pgw__text_put_i64(t, a->lbounds[i]);
        if (rc == 0) rc = pgw__text_putc(t, ':');
        if (rc == 0) rc = pgw__text_put_i64(t, (int64_t)a->lbounds[i] + a->dims[i] - 1);
        if (rc == 0) rc = pgw__text_putc(t, ']');
    }
    return need && rc == 0 ? pgw__text_putc(t, '=') : rc;
}

/* The element delimiter of the array's element type (typdelim). */
static char array_delim(const pgw__text_out_t *t, uint32_t elem)
{
    const pgw__builtin_t *b = pgw__builtin(elem);
    if (b) return b->delim;
    const pgw_type_catalog_t *c = pgw__type_catalog(t->reg, elem);
    return c && c->delim ? c->delim : ',';
}

/* array_out: braces per dimension, elements in storage order. */
static int put_array(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len)
{
    pgw_value_t v = {p, len, PGW_FORMAT_BINARY, oid};
    pgw_array_t a;
    int rc = pgw_array_parse_reg(t->reg, &v, &a);
    if (rc < 0) return rc;
    if (a.ndim == 0) return pgw__text_puts(t, "{}");
    char delim = array_delim(t, a.elem_oid);
    if ((rc = put_dims(t, &a)) < 0) return rc;
    pgw_array_iter_t it;
    pgw_array_iter_init(&it, &a, NULL, 0);
    int32_t idx[PGW_ARRAY_MAXDIM] = {0};
    int open_from = 0; /* the dimensions whose brace opens before the next element */
    for (;;) {
        for (int i = open_from; i < a.ndim && rc == 0; i++)
            rc = pgw__text_putc(t, '{');
        pgw_value_t e;
        if (rc == 0 && (rc = pgw_array_next(&it, &e)) == 1)
            rc = e.len < 0 ? pgw__text_puts(t, "NULL") : put_element(t, &e, QUOTE_ARRAY, delim);
        else if (rc == 0)
            rc = PGW_EFORMAT; /* fewer elements than the dimensions say */
        if (rc < 0) return rc;
        int i = a.ndim - 1;
        for (; i >= 0; i--) {
            if (++idx[i] < a.dims[i]) break;
            idx[i] = 0;
            if ((rc = pgw__text_putc(t, '}')) < 0) return rc;
        }
        if (i < 0) break;
        if ((rc = pgw__text_putc(t, delim)) < 0) return rc;
        open_from = i + 1;
    }
    pgw_value_t extra;
    return pgw_array_next(&it, &extra) == 0 ? 0 : PGW_EFORMAT;
}

/* ------------------------------------------------------------------ ranges */

/* range_out of a parsed range: "empty", or brackets around the bounds. */
static int put_range_parsed(pgw__text_out_t *t, const pgw_range_t *r)
{
    if (r->flags & PGW_RANGE_EMPTY) return pgw__text_puts(t, "empty");
    int rc = pgw__text_putc(t, r->flags & PGW_RANGE_LB_INC ? '[' : '(');
    if (rc == 0 && r->lower.len >= 0) rc = put_element(t, &r->lower, QUOTE_RANGE, ',');
    if (rc == 0) rc = pgw__text_putc(t, ',');
    if (rc == 0 && r->upper.len >= 0) rc = put_element(t, &r->upper, QUOTE_RANGE, ',');
    return rc == 0 ? pgw__text_putc(t, r->flags & PGW_RANGE_UB_INC ? ']' : ')') : rc;
}

static int put_range(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len)
{
    pgw_value_t v = {p, len, PGW_FORMAT_BINARY, oid};
    pgw_range_t r;
    int rc = pgw_range_parse_reg(t->reg, &v, &r, NULL, 0);
    return rc < 0 ? rc : put_range_parsed(t, &r);
}

/* multirange_out: the ranges in braces, separated by commas. */
static int put_multirange(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len)
{
    pgw_value_t v = {p, len, PGW_FORMAT_BINARY, oid};
    pgw_multirange_t m;
    int rc = pgw_multirange_parse_reg(t->reg, &v, &m);
    if (rc < 0) return rc;
    pgw_multirange_iter_t it;
    pgw_multirange_iter_init(&it, &m, NULL, 0);
    rc = pgw__text_putc(t, '{');
    pgw_range_t r;
    for (size_t i = 0; rc == 0 && (rc = pgw_multirange_next(&it, &r)) == 1; i++) {
        rc = i ? pgw__text_putc(t, ',') : 0;
        if (rc == 0) rc = put_range_parsed(t, &r);
    }
    return rc == 0 ? pgw__text_putc(t, '}') : rc;
}

/* ----------------------------------------------------------------- records */

/* record_out: fields in parentheses, a NULL field as nothing. */
static int put_record(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len)
{
    pgw_value_t v = {p, len, PGW_FORMAT_BINARY, oid};
    pgw_record_t rec;
    int rc = pgw_record_parse_reg(t->reg, &v, &rec);
    if (rc < 0) return rc;
    pgw_record_iter_t it;
    pgw_record_iter_init(&it, &rec, NULL, 0);
    rc = pgw__text_putc(t, '(');
    pgw_value_t f;
    for (size_t i = 0; rc == 0 && (rc = pgw_record_next(&it, &f)) == 1; i++) {
        rc = i ? pgw__text_putc(t, ',') : 0;
        if (rc == 0 && f.len >= 0) rc = put_element(t, &f, QUOTE_RECORD, ',');
    }
    return rc == 0 ? pgw__text_putc(t, ')') : rc;
}

/* ---------------------------------------------------------------- dispatch */

int pgw__text_container(pgw__text_out_t *t, uint32_t oid, const uint8_t *p, int32_t len)
{
    int rc;
    const pgw_type_catalog_t *c =
        oid >= PGW__FIRST_USER_OID ? pgw__type_catalog(t->reg, oid) : NULL;
    if (oid == PGW_OID_RECORD || (c && c->kind == PGW_TYPE_KIND_COMPOSITE))
        rc = put_record(t, oid, p, len);
    else if (pgw__array_elem(t->reg, oid))
        rc = put_array(t, oid, p, len);
    else if (pgw__range_bound_oid(t->reg, oid))
        rc = put_range(t, oid, p, len);
    else if (pgw__multirange_range(t->reg, oid))
        rc = put_multirange(t, oid, p, len);
    else
        return 0;
    return rc < 0 ? rc : 1;
}
