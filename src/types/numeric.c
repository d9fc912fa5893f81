/*
 * numeric: the server's base-10000 representation read in place from the
 * binary format, parsed exactly from decimal text, formatted back, converted
 * to double (correctly rounded) and int64 (exactly or not at all), and
 * written in binary for parameters.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strtod_l */
#endif
#include "types/types_internal.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>

#define NBASE              10000
#define NUMERIC_HDR        8
#define NUMERIC_DSCALE_MAX 0x3FFF

static int valid_sign(uint16_t sign)
{
    return sign == PGW_NUMERIC_POS || sign == PGW_NUMERIC_NEG || sign == PGW_NUMERIC_NAN ||
           sign == PGW_NUMERIC_PINF || sign == PGW_NUMERIC_NINF;
}

static int is_special(uint16_t sign)
{
    return sign != PGW_NUMERIC_POS && sign != PGW_NUMERIC_NEG;
}

int pgw__numeric_from_binary(const uint8_t *p, size_t len, pgw_numeric_t *out)
{
    if (len < NUMERIC_HDR) return PGW_EFORMAT;
    /* An unsigned count, as numeric_send writes it: the server's largest
     * values (131072 digits before the point, 16383 after) take 36864
     * base-10000 digits, more than an int16 holds. */
    uint16_t ndigits = pgw__get16(p);
    if (len != NUMERIC_HDR + 2 * (size_t)ndigits) return PGW_EFORMAT;
    pgw_numeric_t n;
    n.ndigits = ndigits;
    n.weight = (int16_t)pgw__get16(p + 2);
    n.sign = pgw__get16(p + 4);
    n.dscale = pgw__get16(p + 6);
    n.digits = p + NUMERIC_HDR;
    if (!valid_sign(n.sign) || n.dscale > NUMERIC_DSCALE_MAX) return PGW_EFORMAT;
    if (is_special(n.sign) && n.ndigits) return PGW_EFORMAT;
    for (size_t i = 0; i < n.ndigits; i++)
        if (pgw_numeric_digit(&n, i) >= NBASE) return PGW_EFORMAT;
    *out = n;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Parsing decimal text                                                     */
/* ------------------------------------------------------------------------ */

/* Where the digits of a decimal string are, before they are grouped. */
typedef struct num_scan {
    const char *s;
    size_t int_start, int_len;   /* integer digits */
    size_t frac_start, frac_len; /* fraction digits */
    int64_t pointpos;            /* digits before the point after the exponent */
    pgw_numeric_t hdr;           /* sign/weight/dscale/ndigits (digits unset) */
} num_scan_t;

static int floor_div4(int64_t x)
{
    return (int)(x >= 0 ? x / 4 : -((-x + 3) / 4));
}

/* The k-th digit of the concatenated integer and fraction digits. */
static int scan_digit(const num_scan_t *sc, size_t k)
{
    if (k < sc->int_len) return sc->s[sc->int_start + k] - '0';
    return sc->s[sc->frac_start + k - sc->int_len] - '0';
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int ci_eq(const char *s, size_t len, const char *word)
{
    size_t n = strlen(word);
    if (len != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
        if (c != word[i]) return 0;
    }
    return 1;
}

static int scan_special(const char *s, size_t len, pgw_numeric_t *hdr)
{
    int neg = 0;
    size_t pos = 0; /* the sign's length */
    if (ci_eq(s, len, "nan")) {
        hdr->sign = PGW_NUMERIC_NAN;
        return 1;
    }
    if (len && (s[0] == '-' || s[0] == '+')) neg = s[0] == '-', pos = 1;
    if (ci_eq(s + pos, len - pos, "infinity") || ci_eq(s + pos, len - pos, "inf")) {
        hdr->sign = neg ? PGW_NUMERIC_NINF : PGW_NUMERIC_PINF;
        return 1;
    }
    return 0;
}

static int scan_exponent(const char *s, size_t len, size_t *i, int64_t *exp)
{
    int neg = 0;
    size_t j = *i + 1;
    if (j < len && (s[j] == '-' || s[j] == '+')) neg = s[j++] == '-';
    size_t start = j;
    int64_t e = 0;
    while (j < len && s[j] >= '0' && s[j] <= '9') {
        if (e > 10000000) return PGW_ERANGE;
        e = e * 10 + (s[j++] - '0');
    }
    if (j == start) return PGW_EFORMAT;
    *exp = neg ? -e : e;
    *i = j;
    return 0;
}

/* Fill sc->hdr (all but digits) from the digit positions. */
static int scan_layout(num_scan_t *sc, int64_t exp)
{
    size_t total = sc->int_len + sc->frac_len;
    int64_t dscale = (int64_t)sc->frac_len - exp;
    if (dscale < 0) dscale = 0;
    if (dscale > NUMERIC_DSCALE_MAX) return PGW_ERANGE;
    sc->hdr.dscale = (uint16_t)dscale;
    sc->pointpos = (int64_t)sc->int_len + exp;
    size_t first = 0, last = total;
    while (first < total && scan_digit(sc, first) == 0)
        first++;
    if (first == total) { /* zero: positive, no digits */
        sc->hdr.sign = PGW_NUMERIC_POS;
        sc->hdr.weight = 0;
        sc->hdr.ndigits = 0;
        return 0;
    }
    while (scan_digit(sc, last - 1) == 0)
        last--;
    int64_t weight = floor_div4(sc->pointpos - 1 - (int64_t)first);
    int64_t lastw = floor_div4(sc->pointpos - 1 - (int64_t)(last - 1));
    if (weight > INT16_MAX || lastw < INT16_MIN || weight - lastw + 1 > UINT16_MAX)
        return PGW_ERANGE;
    sc->hdr.weight = (int16_t)weight;
    sc->hdr.ndigits = (uint16_t)(weight - lastw + 1);
    return 0;
}

static int numeric_scan(const char *s, size_t len, num_scan_t *sc)
{
    memset(sc, 0, sizeof *sc);
    sc->s = s;
    while (len && is_space(s[len - 1]))
        len--;
    size_t i = 0;
    while (i < len && is_space(s[i]))
        i++;
    if (scan_special(s + i, len - i, &sc->hdr)) return 0;
    sc->hdr.sign = PGW_NUMERIC_POS;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        sc->hdr.sign = s[i++] == '-' ? PGW_NUMERIC_NEG : PGW_NUMERIC_POS;
    sc->int_start = i;
    while (i < len && s[i] >= '0' && s[i] <= '9')
        i++;
    sc->int_len = i - sc->int_start;
    sc->frac_start = i;
    if (i < len && s[i] == '.') {
        sc->frac_start = ++i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        sc->frac_len = i - sc->frac_start;
    }
    if (sc->int_len + sc->frac_len == 0) return PGW_EFORMAT;
    int64_t exp = 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        int rc = scan_exponent(s, len, &i, &exp);
        if (rc < 0) return rc;
    }
    if (i != len) return PGW_EFORMAT;
    return scan_layout(sc, exp);
}

/* Write sc's base-10000 digits, big-endian, to dst[0..2*ndigits). */
static void scan_fill(const num_scan_t *sc, uint8_t *dst)
{
    static const uint16_t pow10[4] = {1, 10, 100, 1000};
    size_t total = sc->int_len + sc->frac_len;
    uint16_t group = 0;
    int64_t cur = sc->hdr.weight; /* weight of the group being built */
    memset(dst, 0, 2 * (size_t)sc->hdr.ndigits);
    for (size_t k = 0; k < total; k++) {
        int d = scan_digit(sc, k);
        int64_t p = sc->pointpos - 1 - (int64_t)k;
        int64_t w = floor_div4(p);
        if (w > sc->hdr.weight) continue; /* leading zeros */
        if (w != cur) {
            pgw__put16(dst + 2 * (sc->hdr.weight - cur), group);
            group = 0;
            cur = w;
        }
        if (sc->hdr.weight - w >= sc->hdr.ndigits) break; /* trailing zeros */
        group = (uint16_t)(group + d * pow10[p - 4 * w]);
    }
    if (sc->hdr.weight - cur < sc->hdr.ndigits) pgw__put16(dst + 2 * (sc->hdr.weight - cur), group);
}

int pgw_numeric_parse(const char *s, size_t len, pgw_numeric_t *out, uint8_t *storage, size_t cap)
{
    if ((!s && len) || !out || (!storage && cap)) return PGW_EINVAL;
    num_scan_t sc;
    int rc = numeric_scan(s, len, &sc);
    if (rc < 0) return rc;
    if (2 * (size_t)sc.hdr.ndigits > cap) return PGW_ERANGE;
    if (sc.hdr.ndigits) scan_fill(&sc, storage);
    *out = sc.hdr;
    out->digits = storage;
    return 0;
}

int pgw__numeric_write_str(const char *s, size_t len, pgw_buf_t *out)
{
    num_scan_t sc;
    int rc = numeric_scan(s, len, &sc);
    if (rc < 0) return rc;
    size_t n = NUMERIC_HDR + 2 * (size_t)sc.hdr.ndigits;
    rc = pgw_buf_reserve(out, n);
    if (rc < 0) return rc;
    uint8_t *p = out->data + out->len;
    pgw__put16(p, sc.hdr.ndigits);
    pgw__put16(p + 2, (uint16_t)sc.hdr.weight);
    pgw__put16(p + 4, sc.hdr.sign);
    pgw__put16(p + 6, sc.hdr.dscale);
    if (sc.hdr.ndigits) scan_fill(&sc, p + NUMERIC_HDR);
    out->len += n;
    return 0;
}

int pgw__numeric_write(const pgw_numeric_t *n, pgw_buf_t *out)
{
    if (!valid_sign(n->sign) || n->dscale > NUMERIC_DSCALE_MAX) return PGW_EINVAL;
    size_t nd = is_special(n->sign) ? 0 : n->ndigits;
    for (size_t i = 0; i < nd; i++)
        if (pgw_numeric_digit(n, i) >= NBASE) return PGW_EINVAL;
    size_t len = NUMERIC_HDR + 2 * nd;
    int rc = pgw_buf_reserve(out, len);
    if (rc < 0) return rc;
    uint8_t *p = out->data + out->len;
    pgw__put16(p, (uint16_t)nd);
    pgw__put16(p + 2, nd ? (uint16_t)n->weight : 0);
    pgw__put16(p + 4, n->sign);
    pgw__put16(p + 6, is_special(n->sign) ? 0 : n->dscale);
    if (nd) memcpy(p + NUMERIC_HDR, n->digits, 2 * nd);
    out->len += len;
    return 0;
}

int pgw_encode_numeric_str(const void *ctx, pgw_buf_t *out)
{
    if (!ctx || !out) return PGW_EINVAL;
    const char *s = ctx;
    return pgw__numeric_write_str(s, strlen(s), out);
}

int pgw_encode_numeric(const void *ctx, pgw_buf_t *out)
{
    if (!ctx || !out) return PGW_EINVAL;
    return pgw__numeric_write(ctx, out);
}

/* ------------------------------------------------------------------------ */
/* Formatting                                                               */
/* ------------------------------------------------------------------------ */

/* A writer that stores what fits and counts everything. */
typedef struct sink {
    char *buf;
    size_t cap, n;
} sink_t;

static void sink_putc(sink_t *k, char c)
{
    if (k->n < k->cap) k->buf[k->n] = c;
    k->n++;
}

static void sink_puts(sink_t *k, const char *s)
{
    while (*s)
        sink_putc(k, *s++);
}

/* d as 4 digits, or without leading zeros when trim is set. */
static void sink_group(sink_t *k, unsigned d, int trim)
{
    char t[4] = {(char)('0' + d / 1000), (char)('0' + d / 100 % 10), (char)('0' + d / 10 % 10),
                 (char)('0' + d % 10)};
    int i = 0;
    if (trim)
        while (i < 3 && t[i] == '0')
            i++;
    for (; i < 4; i++)
        sink_putc(k, t[i]);
}

static unsigned digit_at(const pgw_numeric_t *n, int64_t i)
{
    return i >= 0 && i < n->ndigits ? pgw_numeric_digit(n, (size_t)i) : 0;
}

static void numeric_format(const pgw_numeric_t *n, sink_t *k)
{
    if (is_special(n->sign)) {
        sink_puts(k, n->sign == PGW_NUMERIC_NAN    ? "NaN"
                     : n->sign == PGW_NUMERIC_PINF ? "Infinity"
                                                   : "-Infinity");
        return;
    }
    if (n->sign == PGW_NUMERIC_NEG && n->ndigits) sink_putc(k, '-');
    int64_t weight = n->ndigits ? n->weight : 0;
    if (weight < 0) sink_putc(k, '0');
    for (int64_t i = 0; i <= weight; i++)
        sink_group(k, digit_at(n, i), i == 0);
    if (!n->dscale) return;
    sink_putc(k, '.');
    size_t left = n->dscale;
    for (int64_t i = weight + 1; left; i++) {
        char t[4];
        unsigned d = digit_at(n, i);
        t[0] = (char)('0' + d / 1000), t[1] = (char)('0' + d / 100 % 10);
        t[2] = (char)('0' + d / 10 % 10), t[3] = (char)('0' + d % 10);
        for (int j = 0; j < 4 && left; j++, left--)
            sink_putc(k, t[j]);
    }
}

int pgw_numeric_to_str(const pgw_numeric_t *n, char *buf, size_t cap, size_t *needed)
{
    if (!n || !needed || (!buf && cap)) return PGW_EINVAL;
    sink_t k = {buf, cap, 0};
    numeric_format(n, &k);
    sink_putc(&k, '\0');
    *needed = k.n;
    return k.n <= cap ? 0 : PGW_ERANGE;
}

/* ------------------------------------------------------------------------ */
/* Conversions                                                              */
/* ------------------------------------------------------------------------ */

int pgw_numeric_to_int64(const pgw_numeric_t *n, int64_t *out)
{
    if (!n || !out) return PGW_EINVAL;
    if (is_special(n->sign)) return PGW_ERANGE;
    if (!n->ndigits) {
        *out = 0;
        return 0;
    }
    if (n->weight > 4) return PGW_ERANGE;
    int64_t acc = 0; /* accumulated negatively: INT64_MIN is reachable */
    int lost = 0;
    for (int64_t i = 0; i <= n->weight; i++) {
        int64_t d = digit_at(n, i);
        if (acc < (INT64_MIN + d) / NBASE) return PGW_ERANGE;
        acc = acc * NBASE - d;
    }
    for (int64_t i = n->weight < -1 ? 0 : n->weight + 1; i < n->ndigits; i++)
        if (pgw_numeric_digit(n, (size_t)i)) lost = 1;
    if (n->sign != PGW_NUMERIC_NEG) {
        if (acc == INT64_MIN) return PGW_ERANGE;
        acc = -acc;
    }
    if (lost) return PGW_ELOSS;
    *out = acc;
    return 0;
}

/* Significant digits handed to strtod: beyond 767 decimal digits no double
 * rounding boundary can be told apart, so the rest is folded into one
 * non-zero "sticky" digit that keeps the value on the right side of it. */
#define NUMERIC_DOUBLE_GROUPS 200

int pgw_numeric_to_double(const pgw_numeric_t *n, double *out)
{
    if (!n || !out) return PGW_EINVAL;
    if (n->sign == PGW_NUMERIC_NAN) return *out = NAN, 0;
    if (n->sign == PGW_NUMERIC_PINF) return *out = HUGE_VAL, 0;
    if (n->sign == PGW_NUMERIC_NINF) return *out = -HUGE_VAL, 0;
    if (!n->ndigits) return *out = 0.0, 0;
    char buf[4 * NUMERIC_DOUBLE_GROUPS + 32];
    sink_t k = {buf, sizeof buf, 0};
    if (n->sign == PGW_NUMERIC_NEG) sink_putc(&k, '-');
    size_t used = n->ndigits < NUMERIC_DOUBLE_GROUPS ? n->ndigits : NUMERIC_DOUBLE_GROUPS;
    for (size_t i = 0; i < used; i++)
        sink_group(&k, pgw_numeric_digit(n, i), 0);
    int sticky = 0;
    for (size_t i = used; i < n->ndigits; i++)
        if (pgw_numeric_digit(n, i)) sticky = 1;
    if (sticky) sink_putc(&k, '1');
    long exp = 4L * ((long)n->weight - (long)used + 1) - sticky;
    char e[24];
    size_t el = 0;
    unsigned long ue = exp < 0 ? (unsigned long)-exp : (unsigned long)exp;
    do
        e[el++] = (char)('0' + ue % 10), ue /= 10;
    while (ue);
    sink_putc(&k, 'e');
    if (exp < 0) sink_putc(&k, '-');
    while (el)
        sink_putc(&k, e[--el]);
    sink_putc(&k, '\0');
    double d;
    int rc = pgw__parse_float8(buf, k.n - 1, &d);
    if (rc < 0) return rc;
    if (isinf(d)) return PGW_ERANGE;
    if (d == 0.0) return PGW_ELOSS;
    *out = d;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Getters                                                                  */
/* ------------------------------------------------------------------------ */

int pgw_get_numeric(const pgw_value_t *v, pgw_numeric_t *out, uint8_t *storage, size_t cap)
{
    PGW__CHECK_VALUE(v, out);
    if (v->oid != PGW_OID_NUMERIC) return PGW_ETYPE;
    if (v->format == PGW_FORMAT_BINARY) return pgw__numeric_from_binary(v->p, (size_t)v->len, out);
    return pgw_numeric_parse((const char *)v->p, (size_t)v->len, out, storage, cap);
}

int pgw_get_numeric_str(const pgw_value_t *v, char *buf, size_t cap, size_t *needed)
{
    PGW__CHECK_VALUE(v, needed);
    if (v->oid != PGW_OID_NUMERIC) return PGW_ETYPE;
    if (v->format == PGW_FORMAT_BINARY) {
        pgw_numeric_t n;
        int rc = pgw__numeric_from_binary(v->p, (size_t)v->len, &n);
        if (rc < 0) return rc;
        return pgw_numeric_to_str(&n, buf, cap, needed);
    }
    /* Validate, then hand the server's text back as is. */
    num_scan_t sc;
    int rc = numeric_scan((const char *)v->p, (size_t)v->len, &sc);
    if (rc < 0) return rc;
    *needed = (size_t)v->len + 1;
    if (*needed > cap) return PGW_ERANGE;
    memcpy(buf, v->p, (size_t)v->len);
    buf[v->len] = '\0';
    return 0;
}

/* A conversion of a numeric, run on a text value with stack storage. */
typedef int (*numeric_conv_fn)(const pgw_numeric_t *n, void *out);

static int conv_double(const pgw_numeric_t *n, void *out)
{
    return pgw_numeric_to_double(n, out);
}

static int conv_int64(const pgw_numeric_t *n, void *out)
{
    return pgw_numeric_to_int64(n, out);
}

/* Text values longer than this are converted from a truncated prefix when
 * that is exact (see numeric_text_conv). */
#define NUMERIC_STACK_DIGITS 256

static int numeric_text_conv(const pgw_value_t *v, numeric_conv_fn conv, void *out)
{
    num_scan_t sc;
    int rc = numeric_scan((const char *)v->p, (size_t)v->len, &sc);
    if (rc < 0) return rc;
    uint8_t digits[2 * NUMERIC_STACK_DIGITS];
    pgw_numeric_t n = sc.hdr;
    n.digits = digits;
    if (n.ndigits <= NUMERIC_STACK_DIGITS) {
        if (n.ndigits) scan_fill(&sc, digits);
        return conv(&n, out);
    }
    /* Too long for the stack: the leading groups and a sticky non-zero
     * last group carry everything a double or an int64 can observe (an
     * int64 only needs 5 groups; a double, see NUMERIC_DOUBLE_GROUPS). */
    uint16_t keep = NUMERIC_STACK_DIGITS;
    num_scan_t cut = sc;
    cut.hdr.ndigits = keep;
    scan_fill(&cut, digits);
    n.ndigits = keep;
    /* Any non-zero digit past the cut forces the last kept group odd, which
     * marks "more follows" for rounding and makes a fraction visible. */
    pgw__put16(digits + 2 * (keep - 1), (uint16_t)(pgw_numeric_digit(&n, keep - 1) | 1));
    return conv(&n, out);
}

int pgw_get_numeric_double(const pgw_value_t *v, double *out)
{
    PGW__CHECK_VALUE(v, out);
    if (v->oid != PGW_OID_NUMERIC) return PGW_ETYPE;
    if (v->format != PGW_FORMAT_BINARY) return numeric_text_conv(v, conv_double, out);
    pgw_numeric_t n;
    int rc = pgw__numeric_from_binary(v->p, (size_t)v->len, &n);
    return rc < 0 ? rc : pgw_numeric_to_double(&n, out);
}

int pgw_get_numeric_int64(const pgw_value_t *v, int64_t *out)
{
    PGW__CHECK_VALUE(v, out);
    if (v->oid != PGW_OID_NUMERIC) return PGW_ETYPE;
    if (v->format != PGW_FORMAT_BINARY) return numeric_text_conv(v, conv_int64, out);
    pgw_numeric_t n;
    int rc = pgw__numeric_from_binary(v->p, (size_t)v->len, &n);
    return rc < 0 ? rc : pgw_numeric_to_int64(&n, out);
}
