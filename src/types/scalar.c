/*
 * Scalar decoders: bool, integers, floats, text-like types, bytea, uuid,
 * macaddr, money; and the tagged datum dispatch over every built-in scalar
 * (on the KIND column of the type table, builtin.c).
 *
 * Text parsing never goes through a locale-aware libc call: integers are
 * parsed here, and floats go through strtod_l/strtof_l with a "C" locale
 * object after this file has checked the grammar, so LC_NUMERIC cannot
 * change the result and the rounding is libc's correct rounding.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strtod_l, newlocale */
#endif
#include "types/container_internal.h"
#include "types/types_internal.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* Text helpers                                                             */
/* ------------------------------------------------------------------------ */

int pgw__parse_int64(const char *s, size_t len, int64_t min, int64_t max, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i == len) return PGW_EFORMAT;
    /* Accumulate negatively so that INT64_MIN is reachable. */
    int64_t acc = 0;
    int overflow = 0;
    for (; i < len; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9) return PGW_EFORMAT;
        if (acc < (INT64_MIN + (int64_t)d) / 10)
            overflow = 1;
        else
            acc = acc * 10 - (int64_t)d;
    }
    if (overflow) return PGW_ERANGE;
    if (!neg) {
        if (acc == INT64_MIN) return PGW_ERANGE;
        acc = -acc;
    }
    if (acc < min || acc > max) return PGW_ERANGE;
    *out = acc;
    return 0;
}

static int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static int word_eq(const char *s, size_t len, const char *word)
{
    size_t n = strlen(word);
    if (len != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (ascii_lower((unsigned char)s[i]) != word[i]) return 0;
    return 1;
}

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;

static void c_locale_init(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static locale_t get_c_locale(void)
{
    pthread_once(&c_locale_once, c_locale_init);
    return c_locale;
}

/* Longest float text accepted: the server writes at most ~25 characters;
 * numeric-to-double conversion hands over up to ~830. */
#define FLOAT_TEXT_MAX 1024

/* Classify float text. Returns 1 for a plain number (grammar checked), 0 for
 * a special value stored in *special, PGW_EFORMAT otherwise. */
static int float_text_kind(const char *s, size_t len, double *special)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    const char *w = s + i;
    size_t wl = len - i;
    if (word_eq(w, wl, "infinity") || word_eq(w, wl, "inf")) {
        *special = neg ? -HUGE_VAL : HUGE_VAL;
        return 0;
    }
    if (word_eq(w, wl, "nan")) {
        *special = NAN;
        return 0;
    }
    size_t digits = 0;
    while (i < len && s[i] >= '0' && s[i] <= '9')
        i++, digits++;
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++, digits++;
    }
    if (!digits) return PGW_EFORMAT;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '-' || s[i] == '+')) i++;
        size_t ed = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++, ed++;
        if (!ed) return PGW_EFORMAT;
    }
    return i == len ? 1 : PGW_EFORMAT;
}

/* Everything the two float parsers share: the special values, the syntax
 * check, and a NUL-terminated copy in buf for strto*_l with the C locale.
 * Returns 0 with *special set, 1 with buf and *loc ready, or an error. */
static int float_text_prepare(const char *s, size_t len, double *special, char buf[FLOAT_TEXT_MAX],
                              locale_t *loc)
{
    int k = float_text_kind(s, len, special);
    if (k <= 0) return k;
    if (len >= FLOAT_TEXT_MAX) return PGW_EFORMAT;
    memcpy(buf, s, len);
    buf[len] = '\0';
    *loc = get_c_locale();
    return *loc == (locale_t)0 ? PGW_ENOMEM : 1;
}

/*
 * The exact fast path for decimal text (Clinger's): when the significand
 * fits the target's mantissa and the power of ten is itself exact in that
 * type, one IEEE multiplication or division of two exact operands rounds
 * correctly, giving the same bits as strtod. The server's shortest-exact
 * float output almost always qualifies ("3.141592653589793", "1.25").
 * Anything else (more digits, large exponents) goes to strto*_l.
 */
typedef struct decimal {
    uint64_t m; /* significant digits as an integer */
    int e;      /* value = m * 10^e */
    bool neg;
} decimal_t;

/* Parse [+-]digits[.digits][(e|E)[+-]digits] with at most 19 significant
 * digits and a small exponent. Returns false when the text is anything else
 * (the caller then takes the general path). */
static bool decimal_parse(const char *s, size_t len, decimal_t *d)
{
    size_t i = 0;
    int sig = 0, frac = 0;
    d->m = 0;
    d->neg = false;
    if (i < len && (s[i] == '-' || s[i] == '+')) d->neg = s[i++] == '-';
    bool any = false, dot = false;
    for (; i < len; i++) {
        char c = s[i];
        if (c == '.' && !dot) {
            dot = true;
            continue;
        }
        if (c < '0' || c > '9') break;
        any = true;
        if (d->m == 0 && c == '0') { /* leading zeros carry no digits */
            if (dot) frac++;
            continue;
        }
        if (++sig > 19) return false;
        d->m = d->m * 10 + (uint64_t)(c - '0');
        if (dot) frac++;
    }
    if (!any) return false;
    int exp = 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        bool eneg = false;
        if (++i < len && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
        if (i == len) return false;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            if ((exp = exp * 10 + (s[i] - '0')) > 400) return false;
        if (eneg) exp = -exp;
    }
    d->e = exp - frac;
    return i == len;
}

static bool float8_fast(const char *s, size_t len, double *out)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    decimal_t d;
    if (FLT_EVAL_METHOD != 0 || !decimal_parse(s, len, &d)) return false;
    if (d.m > (UINT64_C(1) << 53) || d.e < -22 || d.e > 22) return false;
    double v = (double)d.m;
    v = d.e < 0 ? v / pow10[-d.e] : v * pow10[d.e];
    *out = d.neg ? -v : v;
    return true;
}

static bool float4_fast(const char *s, size_t len, float *out)
{
    static const float pow10f[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f,
                                   1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
    decimal_t d;
    if (FLT_EVAL_METHOD != 0 || !decimal_parse(s, len, &d)) return false;
    if (d.m > (UINT64_C(1) << 24) || d.e < -10 || d.e > 10) return false;
    float v = (float)d.m;
    v = d.e < 0 ? v / pow10f[-d.e] : v * pow10f[d.e];
    *out = d.neg ? -v : v;
    return true;
}

int pgw__parse_float8(const char *s, size_t len, double *out)
{
    if (float8_fast(s, len, out)) return 0;
    double special;
    char buf[FLOAT_TEXT_MAX], *end;
    locale_t loc;
    int k = float_text_prepare(s, len, &special, buf, &loc);
    if (k <= 0) {
        if (k == 0) *out = special;
        return k;
    }
    *out = strtod_l(buf, &end, loc);
    return end == buf + len ? 0 : PGW_EFORMAT;
}

/* strtof_l, not a narrowed strtod_l: rounding twice could differ. */
int pgw__parse_float4(const char *s, size_t len, float *out)
{
    if (float4_fast(s, len, out)) return 0;
    double special;
    char buf[FLOAT_TEXT_MAX], *end;
    locale_t loc;
    int k = float_text_prepare(s, len, &special, buf, &loc);
    if (k <= 0) {
        if (k == 0) *out = (float)special;
        return k;
    }
    *out = strtof_l(buf, &end, loc);
    return end == buf + len ? 0 : PGW_EFORMAT;
}

/* Hex digit values plus one (0: not a hex digit): one load per digit on the
 * bytea text path, which un-hexes every byte of every value. */
static const uint8_t hex_digit1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* The value of hex digit c, or -1. */
static int hexval(int c)
{
    return (int)hex_digit1[(unsigned char)c] - 1;
}

/* ------------------------------------------------------------------------ */
/* bool, integers, floats                                                   */
/* ------------------------------------------------------------------------ */

int pgw_get_bool(const pgw_value_t *v, bool *out)
{
    PGW__CHECK_VALUE(v, out);
    if (v->oid != PGW_OID_BOOL) return PGW_ETYPE;
    if (v->format == PGW_FORMAT_BINARY) {
        if (v->len != 1 || v->p[0] > 1) return PGW_EFORMAT;
        *out = v->p[0] == 1;
        return 0;
    }
    pgw_str_t s = pgw__value_str(v);
    if (word_eq(s.p, s.len, "t") || word_eq(s.p, s.len, "true"))
        *out = true;
    else if (word_eq(s.p, s.len, "f") || word_eq(s.p, s.len, "false"))
        *out = false;
    else
        return PGW_EFORMAT;
    return 0;
}

/* Any integer-typed value (int2, int4, int8, oid: the INT kind) as int64. */
static int get_integer(const pgw_value_t *v, int64_t *out)
{
    PGW__CHECK_VALUE(v, out);
    const pgw__builtin_t *t = pgw__builtin(v->oid);
    if (!t || t->kind != PGW_DATUM_INT) return PGW_ETYPE;
    int is_oid = v->oid == PGW_OID_OID; /* the one unsigned integer type */
    if (v->format != PGW_FORMAT_BINARY) {
        int64_t max = t->width == 8 ? INT64_MAX
                      : is_oid      ? UINT32_MAX
                                    : (INT64_C(1) << (8 * t->width - 1)) - 1;
        int64_t min = is_oid ? 0 : -max - 1;
        return pgw__parse_int64((const char *)v->p, (size_t)v->len, min, max, out);
    }
    if (v->len != t->width) return PGW_EFORMAT;
    switch (t->width) {
    case 2:
        *out = (int16_t)pgw__get16(v->p);
        break;
    case 4:
        *out = is_oid ? (int64_t)pgw__get32(v->p) : (int32_t)pgw__get32(v->p);
        break;
    default:
        *out = (int64_t)pgw__get64(v->p);
        break;
    }
    return 0;
}

int pgw_get_int2(const pgw_value_t *v, int16_t *out)
{
    if (!out) return PGW_EINVAL;
    int64_t x;
    int rc = get_integer(v, &x);
    if (rc < 0) return rc;
    if (x < INT16_MIN || x > INT16_MAX) return PGW_ERANGE;
    *out = (int16_t)x;
    return 0;
}

int pgw_get_int4(const pgw_value_t *v, int32_t *out)
{
    if (!out) return PGW_EINVAL;
    int64_t x;
    int rc = get_integer(v, &x);
    if (rc < 0) return rc;
    if (x < INT32_MIN || x > INT32_MAX) return PGW_ERANGE;
    *out = (int32_t)x;
    return 0;
}

int pgw_get_int8(const pgw_value_t *v, int64_t *out)
{
    return get_integer(v, out);
}

int pgw_get_oid(const pgw_value_t *v, uint32_t *out)
{
    if (!out) return PGW_EINVAL;
    int64_t x;
    int rc = get_integer(v, &x);
    if (rc < 0) return rc;
    if (x < 0 || x > UINT32_MAX) return PGW_ERANGE;
    *out = (uint32_t)x;
    return 0;
}

static double load_f8(const uint8_t *p)
{
    uint64_t u = pgw__get64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static float load_f4(const uint8_t *p)
{
    uint32_t u = pgw__get32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

int pgw_get_float8(const pgw_value_t *v, double *out)
{
    PGW__CHECK_VALUE(v, out);
    int bin = v->format == PGW_FORMAT_BINARY;
    if (v->oid == PGW_OID_FLOAT8) {
        if (!bin) return pgw__parse_float8((const char *)v->p, (size_t)v->len, out);
        if (v->len != 8) return PGW_EFORMAT;
        *out = load_f8(v->p);
        return 0;
    }
    if (v->oid == PGW_OID_FLOAT4) {
        float f;
        int rc = 0;
        if (!bin)
            rc = pgw__parse_float4((const char *)v->p, (size_t)v->len, &f);
        else if (v->len != 4)
            rc = PGW_EFORMAT;
        else
            f = load_f4(v->p);
        if (rc == 0) *out = f;
        return rc;
    }
    int64_t x;
    int rc = get_integer(v, &x);
    if (rc < 0) return rc;
    if (!pgw__int64_exact_double(x)) return PGW_ELOSS;
    *out = (double)x;
    return 0;
}

int pgw_get_float4(const pgw_value_t *v, float *out)
{
    PGW__CHECK_VALUE(v, out);
    int bin = v->format == PGW_FORMAT_BINARY;
    if (v->oid == PGW_OID_FLOAT4) {
        if (!bin) return pgw__parse_float4((const char *)v->p, (size_t)v->len, out);
        if (v->len != 4) return PGW_EFORMAT;
        *out = load_f4(v->p);
        return 0;
    }
    if (v->oid == PGW_OID_FLOAT8) {
        double d;
        int rc = pgw_get_float8(v, &d);
        if (rc < 0) return rc;
        if (isnan(d) || isinf(d)) {
            *out = (float)d;
            return 0;
        }
        if (fabs(d) > FLT_MAX) return PGW_ERANGE;
        if ((double)(float)d != d) return PGW_ELOSS;
        *out = (float)d;
        return 0;
    }
    int64_t x;
    int rc = get_integer(v, &x);
    if (rc < 0) return rc;
    if (!pgw__int64_exact_float(x)) return PGW_ELOSS;
    *out = (float)x;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Text-like                                                                */
/* ------------------------------------------------------------------------ */

/* jsonb and jsonpath binary: a version byte (1) and the text. */
static int versioned_text(const pgw_value_t *v, pgw_str_t *out)
{
    if (v->len < 1 || v->p[0] != 1) return PGW_EFORMAT;
    out->p = (const char *)v->p + 1;
    out->len = (size_t)v->len - 1;
    return 0;
}

int pgw_get_text(const pgw_value_t *v, pgw_str_t *out)
{
    PGW__CHECK_VALUE(v, out);
    int tl = pgw__text_like(v->oid);
    if (v->format != PGW_FORMAT_BINARY || tl == PGW__TL_SAME || tl == PGW__TL_BYTE) {
        *out = pgw__value_str(v);
        return 0;
    }
    if (tl == PGW__TL_VERSIONED) return versioned_text(v, out);
    /* An enum's binary form is its label; other user types' binary forms
     * are not text, and an unknown oid could be anything. */
    if (v->oid >= PGW__FIRST_USER_OID &&
        pgw__type_resolve(pgw_type_registry_default(), v->oid) == PGW_OID_TEXT) {
        *out = pgw__value_str(v);
        return 0;
    }
    return PGW_ETYPE;
}

int pgw_get_json(const pgw_value_t *v, pgw_str_t *out)
{
    PGW__CHECK_VALUE(v, out);
    switch (v->oid) {
    case PGW_OID_JSON:
    case PGW_OID_JSONB:
    case PGW_OID_JSONPATH:
        break;
    default:
        if (v->format == PGW_FORMAT_BINARY) return PGW_ETYPE;
        int tl = pgw__text_like(v->oid);
        if (tl != PGW__TL_SAME && tl != PGW__TL_BYTE) return PGW_ETYPE;
    }
    return pgw_get_text(v, out);
}

int pgw_get_char(const pgw_value_t *v, char *out)
{
    PGW__CHECK_VALUE(v, out);
    if (v->oid != PGW_OID_CHAR) return PGW_ETYPE;
    const uint8_t *p = v->p;
    if (v->format == PGW_FORMAT_BINARY || v->len <= 1) {
        /* The server writes the NUL "char" as an empty string. */
        if (v->len > 1) return PGW_EFORMAT;
        *out = v->len == 1 ? (char)p[0] : '\0';
        return 0;
    }
    /* Bytes with the high bit set are written as \ooo. */
    if (v->len != 4 || p[0] != '\\') return PGW_EFORMAT;
    unsigned x = 0;
    for (int i = 1; i < 4; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        if (d > 7) return PGW_EFORMAT;
        x = x * 8 + d;
    }
    if (x > 255) return PGW_EFORMAT;
    *out = (char)x;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* bytea                                                                    */
/* ------------------------------------------------------------------------ */

int pgw_get_bytea_view(const pgw_value_t *v, pgw_view_t *out)
{
    PGW__CHECK_VALUE(v, out);
    if (v->oid != PGW_OID_BYTEA || v->format != PGW_FORMAT_BINARY) return PGW_ETYPE;
    out->p = v->p;
    out->len = v->len;
    return 0;
}

static int bytea_unhex(const char *s, size_t len, uint8_t *buf, size_t cap, size_t *outlen)
{
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        /* The server's hex input skips whitespace between digit pairs. */
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
            i++;
            continue;
        }
        if (i + 1 >= len) return PGW_EFORMAT;
        int hi = hexval((unsigned char)s[i]), lo = hexval((unsigned char)s[i + 1]);
        if (hi < 0 || lo < 0) return PGW_EFORMAT;
        if (buf && n < cap) buf[n] = (uint8_t)(hi << 4 | lo);
        n++;
        i += 2;
    }
    *outlen = n;
    return 0;
}

static int bytea_unescape_octal(const char *s, size_t len, uint8_t *buf, size_t cap, size_t *outlen)
{
    size_t n = 0;
    for (size_t i = 0; i < len; n++) {
        uint8_t c = (uint8_t)s[i];
        if (c != '\\') {
            i++;
        } else if (i + 1 < len && s[i + 1] == '\\') {
            i += 2;
        } else if (i + 3 < len + 0 && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
                   s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            c = (uint8_t)((s[i + 1] - '0') << 6 | (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
            i += 4;
        } else {
            return PGW_EFORMAT;
        }
        if (buf && n < cap) buf[n] = c;
    }
    *outlen = n;
    return 0;
}

int pgw__bytea_unescape(const char *s, size_t len, uint8_t *buf, size_t cap, size_t *outlen)
{
    if (len >= 2 && s[0] == '\\' && s[1] == 'x')
        return bytea_unhex(s + 2, len - 2, buf, cap, outlen);
    return bytea_unescape_octal(s, len, buf, cap, outlen);
}

int pgw_get_bytea(const pgw_value_t *v, uint8_t *buf, size_t cap, size_t *len)
{
    PGW__CHECK_VALUE(v, len);
    if (v->oid != PGW_OID_BYTEA) return PGW_ETYPE;
    if (v->format == PGW_FORMAT_BINARY) {
        *len = (size_t)v->len;
        if (*len > cap) return PGW_ERANGE;
        if (*len) memcpy(buf, v->p, *len);
        return 0;
    }
    /* One pass: the decoder writes what fits and counts the rest. */
    size_t n;
    int rc = pgw__bytea_unescape((const char *)v->p, (size_t)v->len, buf, cap, &n);
    if (rc < 0) return rc;
    *len = n;
    return n > cap ? PGW_ERANGE : 0;
}

/* ------------------------------------------------------------------------ */
/* uuid, macaddr                                                            */
/* ------------------------------------------------------------------------ */

int pgw_uuid_parse(const char *s, size_t len, uint8_t out[16])
{
    if ((!s && len) || !out) return PGW_EINVAL;
    if (len >= 2 && s[0] == '{' && s[len - 1] == '}') s++, len -= 2;
    size_t n = 0, i = 0;
    while (i < len) {
        /* A hyphen may follow any group of four digits, never lead or trail. */
        if (s[i] == '-' && n > 0 && n % 4 == 0 && n < 32 && i + 1 < len && s[i + 1] != '-') {
            i++;
            continue;
        }
        if (n == 32 || i + 1 >= len) return PGW_EFORMAT;
        int hi = hexval((unsigned char)s[i]), lo = hexval((unsigned char)s[i + 1]);
        if (hi < 0 || lo < 0) return PGW_EFORMAT;
        out[n / 2] = (uint8_t)(hi << 4 | lo);
        n += 2;
        i += 2;
    }
    return n == 32 ? 0 : PGW_EFORMAT;
}

void pgw_uuid_format(const uint8_t uuid[16], char out[37])
{
    if (!out) return;
    if (!uuid) {
        out[0] = '\0';
        return;
    }
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
        out[o++] = hex[uuid[i] >> 4];
        out[o++] = hex[uuid[i] & 15];
    }
    out[o] = '\0';
}

int pgw_get_uuid(const pgw_value_t *v, uint8_t out[16])
{
    PGW__CHECK_VALUE(v, out);
    if (v->oid != PGW_OID_UUID) return PGW_ETYPE;
    if (v->format != PGW_FORMAT_BINARY)
        return pgw_uuid_parse((const char *)v->p, (size_t)v->len, out);
    if (v->len != 16) return PGW_EFORMAT;
    memcpy(out, v->p, 16);
    return 0;
}

/* n hex byte pairs, optionally separated by ':', '-' or '.' between pairs. */
static int parse_mac(const char *s, size_t len, uint8_t *out, size_t n)
{
    size_t got = 0, i = 0;
    while (i < len) {
        if ((s[i] == ':' || s[i] == '-' || s[i] == '.') && got > 0 && got < n && i + 1 < len) {
            i++;
            continue;
        }
        if (got == n || i + 1 >= len) return PGW_EFORMAT;
        int hi = hexval((unsigned char)s[i]), lo = hexval((unsigned char)s[i + 1]);
        if (hi < 0 || lo < 0) return PGW_EFORMAT;
        out[got++] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    return got == n ? 0 : PGW_EFORMAT;
}

static int get_mac(const pgw_value_t *v, uint32_t oid, uint8_t *out, size_t n)
{
    PGW__CHECK_VALUE(v, out);
    if (v->oid != oid) return PGW_ETYPE;
    if (v->format != PGW_FORMAT_BINARY)
        return parse_mac((const char *)v->p, (size_t)v->len, out, n);
    if ((size_t)v->len != n) return PGW_EFORMAT;
    memcpy(out, v->p, n);
    return 0;
}

int pgw_get_macaddr(const pgw_value_t *v, uint8_t out[6])
{
    return get_mac(v, PGW_OID_MACADDR, out, 6);
}

int pgw_get_macaddr8(const pgw_value_t *v, uint8_t out[8])
{
    return get_mac(v, PGW_OID_MACADDR8, out, 8);
}

/* ------------------------------------------------------------------------ */
/* money                                                                    */
/* ------------------------------------------------------------------------ */

/* The C locale's form: [-]$d{1,3}(,ddd)*[.dd]; digit groups unchecked. */
int pgw__parse_money(const char *s, size_t len, int64_t *cents)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && s[i] == '-') neg = 1, i++;
    if (i < len && s[i] == '$') i++;
    int64_t acc = 0; /* negative accumulation reaches INT64_MIN */
    size_t digits = 0, frac = 0;
    int in_frac = 0;
    for (; i < len; i++) {
        char c = s[i];
        if (c == ',' && !in_frac && digits) continue;
        if (c == '.' && !in_frac) {
            in_frac = 1;
            continue;
        }
        unsigned d = (unsigned)(c - '0');
        if (d > 9) return PGW_EFORMAT;
        if (in_frac && ++frac > 2) return PGW_EFORMAT;
        if (acc < (INT64_MIN + (int64_t)d) / 10) return PGW_ERANGE;
        acc = acc * 10 - (int64_t)d;
        digits++;
    }
    if (!digits) return PGW_EFORMAT;
    for (; frac < 2; frac++) {
        if (acc < INT64_MIN / 10) return PGW_ERANGE;
        acc *= 10;
    }
    if (!neg) {
        if (acc == INT64_MIN) return PGW_ERANGE;
        acc = -acc;
    }
    *cents = acc;
    return 0;
}

int pgw_get_money(const pgw_value_t *v, int64_t *cents)
{
    PGW__CHECK_VALUE(v, cents);
    if (v->oid != PGW_OID_MONEY) return PGW_ETYPE;
    if (v->format != PGW_FORMAT_BINARY)
        return pgw__parse_money((const char *)v->p, (size_t)v->len, cents);
    if (v->len != 8) return PGW_EFORMAT;
    *cents = (int64_t)pgw__get64(v->p);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Tagged datum                                                             */
/* ------------------------------------------------------------------------ */

static int decode_user_datum(const pgw_value_t *v, pgw_datum_t *d);

/* Dispatch on the table's KIND column: the datum kind is the row's, except
 * where the text form keeps its own kind (bytea, numeric). */
static int decode_datum(const pgw_value_t *v, pgw_datum_t *d)
{
    const pgw__builtin_t *t = pgw__builtin(v->oid);
    int bin = v->format == PGW_FORMAT_BINARY;
    switch (t ? t->kind : PGW_DATUM_NONE) {
    case PGW_DATUM_BOOL:
        d->kind = PGW_DATUM_BOOL;
        return pgw_get_bool(v, &d->u.b);
    case PGW_DATUM_INT:
        d->kind = PGW_DATUM_INT;
        return get_integer(v, &d->u.i);
    case PGW_DATUM_FLOAT4:
        d->kind = PGW_DATUM_FLOAT4;
        return pgw_get_float4(v, &d->u.f4);
    case PGW_DATUM_FLOAT8:
        d->kind = PGW_DATUM_FLOAT8;
        return pgw_get_float8(v, &d->u.f8);
    case PGW_DATUM_TEXT:
        d->kind = PGW_DATUM_TEXT;
        return pgw_get_text(v, &d->u.str);
    case PGW_DATUM_BYTEA:
        if (bin) {
            d->kind = PGW_DATUM_BYTEA;
            return pgw_get_bytea_view(v, &d->u.bytes);
        }
        d->kind = PGW_DATUM_BYTEA_TEXT;
        d->u.str = pgw__value_str(v);
        return 0;
    case PGW_DATUM_NUMERIC:
        if (bin) {
            d->kind = PGW_DATUM_NUMERIC;
            return pgw__numeric_from_binary(v->p, (size_t)v->len, &d->u.num);
        }
        d->kind = PGW_DATUM_NUMERIC_TEXT;
        d->u.str = pgw__value_str(v);
        return 0;
    case PGW_DATUM_DATE: {
        int32_t days = 0;
        int rc = pgw_get_date(v, &days);
        d->kind = PGW_DATUM_DATE;
        d->u.i = days;
        return rc;
    }
    case PGW_DATUM_TIME:
        d->kind = PGW_DATUM_TIME;
        return pgw_get_time(v, &d->u.i);
    case PGW_DATUM_TIMETZ:
        d->kind = PGW_DATUM_TIMETZ;
        return pgw_get_timetz(v, &d->u.timetz);
    case PGW_DATUM_TIMESTAMP:
        d->kind = PGW_DATUM_TIMESTAMP;
        return pgw_get_timestamp(v, &d->u.i);
    case PGW_DATUM_TIMESTAMPTZ:
        d->kind = PGW_DATUM_TIMESTAMPTZ;
        return pgw_get_timestamptz(v, &d->u.i);
    case PGW_DATUM_INTERVAL:
        d->kind = PGW_DATUM_INTERVAL;
        return pgw_get_interval(v, &d->u.interval);
    case PGW_DATUM_UUID:
        d->kind = PGW_DATUM_UUID;
        return pgw_get_uuid(v, d->u.uuid);
    case PGW_DATUM_INET:
        d->kind = PGW_DATUM_INET;
        return pgw_get_inet(v, &d->u.inet);
    case PGW_DATUM_MACADDR:
        d->kind = PGW_DATUM_MACADDR;
        return pgw_get_macaddr(v, d->u.mac);
    case PGW_DATUM_MACADDR8:
        d->kind = PGW_DATUM_MACADDR8;
        return pgw_get_macaddr8(v, d->u.mac);
    case PGW_DATUM_MONEY:
        d->kind = PGW_DATUM_MONEY;
        return pgw_get_money(v, &d->u.i);
    case PGW_DATUM_CHAR: {
        char c = 0;
        int rc = pgw_get_char(v, &c);
        d->kind = PGW_DATUM_CHAR;
        d->u.i = (uint8_t)c;
        return rc;
    }
    default:
        return decode_user_datum(v, d);
    }
}

/* A loaded domain decodes as its base type, an enum as text. */
static int decode_user_datum(const pgw_value_t *v, pgw_datum_t *d)
{
    uint32_t oid = v->oid;
    if (oid >= PGW__FIRST_USER_OID) oid = pgw__type_resolve(pgw_type_registry_default(), oid);
    if (oid == v->oid) return PGW_ETYPE;
    pgw_value_t base = *v;
    base.oid = oid;
    return decode_datum(&base, d);
}

int pgw__scalar_decode(const pgw_value_t *v, pgw_datum_t *out)
{
    if (!v || !out) return PGW_EINVAL;
    memset(out, 0, sizeof *out);
    out->oid = v->oid;
    if (pgw_value_is_null(v)) return 0;
    int rc = decode_datum(v, out);
    if (rc < 0) {
        memset(&out->u, 0, sizeof out->u);
        out->kind = PGW_DATUM_NULL;
    }
    return rc;
}

int pgw_get_datum(const pgw_value_t *v, pgw_datum_t *out)
{
    return pgw__scalar_decode(v, out);
}
