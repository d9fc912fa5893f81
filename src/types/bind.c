/*
 * Parameters: a Bind message whose values are encoded straight into the
 * output buffer (no intermediate copy), and the binary encoder of any
 * scalar datum used by the container types.
 */
#include "types/param_convert.h"
#include "types/types_internal.h"

#include <math.h>

void pgw_params_oids(const pgw_param_t *params, size_t n, uint32_t *oids)
{
    if (!params || !oids) return;
    for (size_t i = 0; i < n; i++)
        oids[i] = params[i].oid;
}

/* How many parameter format codes the Bind carries: none when every
 * parameter is text, one when every one is binary, else one each. */
static size_t param_format_count(const pgw_param_t *params, size_t n)
{
    int any_text = 0, any_binary = 0;
    for (size_t i = 0; i < n; i++) {
        if (params[i].format == PGW_FORMAT_BINARY)
            any_binary = 1;
        else
            any_text = 1;
    }
    return !any_binary ? 0 : !any_text ? 1 : n;
}

/* Let the encoder append after a length slot, then patch the slot. */
static void write_encoded(pgw_msgw_t *w, const pgw_param_t *p)
{
    if (!p->u.enc.fn) {
        pgw_msgw_fail(w, PGW_EINVAL);
        return;
    }
    pgw_msgw_i32(w, 0);
    if (w->err) return;
    size_t slot = pgw_msgw_tell(w) - 4;
    int rc = p->u.enc.fn(p->u.enc.ctx, w->b);
    if (rc < 0) {
        pgw_msgw_fail(w, rc);
        return;
    }
    size_t n = pgw_msgw_tell(w) - slot - 4;
    if (n > INT32_MAX) {
        pgw_msgw_fail(w, PGW_ETOOBIG);
        return;
    }
    pgw_msgw_patch32(w, slot, (int32_t)n);
}

static int valid_format(int16_t f)
{
    return f == PGW_FORMAT_TEXT || f == PGW_FORMAT_BINARY;
}

const char *pgw__param_invalid(const pgw_param_t *p)
{
    if (!valid_format(p->format)) return "its format is neither text (0) nor binary (1)";
    switch (p->kind) {
    case PGW_PARAM_NULL:
    case PGW_PARAM_BOOL:
    case PGW_PARAM_INT2:
    case PGW_PARAM_INT4:
    case PGW_PARAM_INT8:
    case PGW_PARAM_FLOAT4:
    case PGW_PARAM_FLOAT8:
        return NULL;
    case PGW_PARAM_BYTES:
        if (p->u.bytes.len < -1) return "its length is below -1";
        if (!p->u.bytes.p && p->u.bytes.len > 0) return "a NULL pointer with a length above 0";
        return NULL;
    case PGW_PARAM_ENCODER:
        return p->u.enc.fn ? NULL : "an encoder parameter without an encoder function";
    default:
        return "an unknown parameter kind";
    }
}

/* The bytes parameter p's value takes after its length slot, from the
 * parameter itself and never from the bytes it points at (except a
 * NUL-terminated string's length). Returns 0, 1 when only its encoder
 * knows (then *n is 0), or PGW_EINVAL. */
static int param_size(const pgw_param_t *p, uint64_t *n)
{
    if (pgw__param_invalid(p)) return PGW_EINVAL;
    static const uint8_t fixed[] = {
        [PGW_PARAM_NULL] = 0, [PGW_PARAM_BOOL] = 1,   [PGW_PARAM_INT2] = 2,  [PGW_PARAM_INT4] = 4,
        [PGW_PARAM_INT8] = 8, [PGW_PARAM_FLOAT4] = 4, [PGW_PARAM_FLOAT8] = 8};
    *n = 0;
    switch (p->kind) {
    case PGW_PARAM_NULL:
    case PGW_PARAM_BOOL:
    case PGW_PARAM_INT2:
    case PGW_PARAM_INT4:
    case PGW_PARAM_INT8:
    case PGW_PARAM_FLOAT4:
    case PGW_PARAM_FLOAT8:
        *n = fixed[p->kind];
        return 0;
    case PGW_PARAM_BYTES:
        if (p->u.bytes.len < -1) return PGW_EINVAL;
        if (p->u.bytes.p)
            *n = p->u.bytes.len == -1 ? strlen(p->u.bytes.p) : (uint64_t)p->u.bytes.len;
        return 0;
    case PGW_PARAM_ENCODER:
        return 1;
    default:
        return PGW_EINVAL;
    }
}

/* A valid parameter of a fixed kind or bytes: its length slot and value of
 * n bytes (param_size, at most INT32_MAX) at d, which has room for them.
 * Returns 0, or PGW_EINVAL for an integer out of its type's range. */
static int put_param(uint8_t *d, const pgw_param_t *p, uint64_t n)
{
    bool null = p->kind == PGW_PARAM_NULL ||
                (p->kind == PGW_PARAM_BYTES && !p->u.bytes.p && p->u.bytes.len < 0);
    pgw__put32(d, null ? UINT32_MAX : (uint32_t)n); /* -1: NULL */
    d += 4;
    switch (p->kind) {
    case PGW_PARAM_NULL:
        return 0;
    case PGW_PARAM_BOOL:
        d[0] = p->u.b ? 1 : 0;
        return 0;
    case PGW_PARAM_INT2:
        if (p->u.i < INT16_MIN || p->u.i > INT16_MAX) break;
        pgw__put16(d, (uint16_t)p->u.i);
        return 0;
    case PGW_PARAM_INT4:
        /* oid parameters carry an unsigned 32-bit value */
        if (p->u.i < INT32_MIN || p->u.i > (p->oid == PGW_OID_OID ? UINT32_MAX : INT32_MAX)) break;
        pgw__put32(d, (uint32_t)p->u.i);
        return 0;
    case PGW_PARAM_INT8:
        pgw__put64(d, (uint64_t)p->u.i);
        return 0;
    case PGW_PARAM_FLOAT4: {
        uint32_t u;
        memcpy(&u, &p->u.f4, 4);
        pgw__put32(d, u);
        return 0;
    }
    case PGW_PARAM_FLOAT8: {
        uint64_t u;
        memcpy(&u, &p->u.f8, 8);
        pgw__put64(d, u);
        return 0;
    }
    case PGW_PARAM_BYTES:
        if (n) memcpy(d, p->u.bytes.p, (size_t)n);
        return 0;
    default:
        break;
    }
    return PGW_EINVAL;
}

/* A valid parameter's length slot and value of n bytes (param_size), in
 * one reservation of the room they take (an encoder parameter: the slot,
 * then what its encoder appends). */
static void write_param(pgw_msgw_t *w, const pgw_param_t *p, uint64_t n)
{
    if (p->kind == PGW_PARAM_ENCODER) {
        write_encoded(w, p);
        return;
    }
    if (n > INT32_MAX) {
        pgw_msgw_fail(w, PGW_ETOOBIG);
        return;
    }
    uint8_t *d = pgw_msgw_reserve(w, 4 + (size_t)n);
    if (d && put_param(d, p, n) < 0) pgw_msgw_fail(w, PGW_EINVAL);
}

/* The parameters whose sizes a Bind keeps from its measure to its writing
 * (on the stack); the sizes of those after them are measured again. */
enum { SIZES_KEPT = 32 };

/* The Bind body as far as it is known before encoding (encoder parameters
 * count only their length slot), from portal and stmt of plen and slen
 * bytes with their NULs and nformats parameter format codes. The first
 * SIZES_KEPT parameters' value sizes go to sizes. Returns 0 when that is
 * the whole body, 1 when an encoder parameter adds to it, or PGW_EINVAL. */
static int bind_known_size(size_t plen, size_t slen, const pgw_param_t *params, size_t nparams,
                           size_t nformats, size_t nresult_formats, uint64_t sizes[SIZES_KEPT],
                           uint64_t *size)
{
    uint64_t total = plen + slen + 2 + 2 * (uint64_t)nformats + 2 + 4 * (uint64_t)nparams + 2 +
                     2 * (uint64_t)nresult_formats;
    int encoders = 0;
    for (size_t i = 0; i < nparams; i++) {
        uint64_t n;
        int rc = param_size(&params[i], &n);
        if (rc < 0) return rc;
        encoders |= rc;
        if (i < SIZES_KEPT) sizes[i] = n;
        total += n;
    }
    *size = total;
    return encoders;
}

/* The portal, statement, parameter format codes and parameter count of a
 * Bind at d; returns the end. */
static uint8_t *put_bind_head(uint8_t *d, const char *portal, size_t plen, const char *stmt,
                              size_t slen, const pgw_param_t *params, size_t nparams,
                              size_t nformats)
{
    memcpy(d, portal, plen);
    memcpy(d + plen, stmt, slen);
    d += plen + slen;
    pgw__put16(d, (uint16_t)nformats);
    d += 2;
    for (size_t i = 0; i < nformats; i++, d += 2)
        pgw__put16(d, (uint16_t)(nformats == 1 ? PGW_FORMAT_BINARY : params[i].format));
    pgw__put16(d, (uint16_t)nparams);
    return d + 2;
}

/* The result format codes that end a Bind at d; returns the end. */
static uint8_t *put_bind_tail(uint8_t *d, const int16_t *result_formats, size_t nresult_formats)
{
    pgw__put16(d, (uint16_t)nresult_formats);
    d += 2;
    for (size_t i = 0; i < nresult_formats; i++, d += 2)
        pgw__put16(d, (uint16_t)result_formats[i]);
    return d;
}

/* A Bind whose every parameter's size is known (no encoder parameter),
 * the room for all of it reserved in b: written straight through, with no
 * further check of room. */
static int put_bind_known(pgw_buf_t *b, const char *portal, size_t plen, const char *stmt,
                          size_t slen, const pgw_param_t *params, size_t nparams, size_t nformats,
                          const uint64_t sizes[SIZES_KEPT], const int16_t *result_formats,
                          size_t nresult_formats, size_t *failed)
{
    uint8_t *m = b->data + b->len;
    uint8_t *d = put_bind_head(m + 5, portal, plen, stmt, slen, params, nparams, nformats);
    for (size_t i = 0; i < nparams; i++) {
        uint64_t n = 0;
        if (i < SIZES_KEPT)
            n = sizes[i];
        else
            param_size(&params[i], &n); /* valid: measured above */
        if (put_param(d, &params[i], n) < 0) {
            *failed = i;
            return PGW_EINVAL;
        }
        d += 4 + n;
    }
    d = put_bind_tail(d, result_formats, nresult_formats);
    m[0] = 'B';
    pgw__put32(m + 1, (uint32_t)(d - m - 1)); /* known + 4 */
    b->len += (size_t)(d - m);
    return 0;
}

int pgw_enc_bind_params(pgw_buf_t *b, const char *portal, const char *stmt,
                        const pgw_param_t *params, size_t nparams, const int16_t *result_formats,
                        size_t nresult_formats, uint32_t max_msg)
{
    size_t failed;
    return pgw__enc_bind_params(b, portal, stmt, params, nparams, result_formats, nresult_formats,
                                max_msg, &failed);
}

int pgw__enc_bind_params(pgw_buf_t *b, const char *portal, const char *stmt,
                         const pgw_param_t *params, size_t nparams, const int16_t *result_formats,
                         size_t nresult_formats, uint32_t max_msg, size_t *failed)
{
    *failed = SIZE_MAX;
    if (!b || (nparams && !params) || (nresult_formats && !result_formats) || !portal || !stmt)
        return PGW_EINVAL;
    if (nparams > PGW_MAX_PARAMS || nresult_formats > PGW_MAX_PARAMS) return PGW_EINVAL;
    /* Refuse an oversized message before a byte is written or a parameter
     * value is read, and make room for it with one growth. */
    uint64_t known, sizes[SIZES_KEPT];
    size_t plen = strlen(portal) + 1, slen = strlen(stmt) + 1;
    size_t nformats = param_format_count(params, nparams);
    int rc = bind_known_size(plen, slen, params, nparams, nformats, nresult_formats, sizes, &known);
    if (rc < 0) return rc;
    bool encoders = rc == 1;
    uint64_t limit = max_msg ? (uint64_t)max_msg - 4 : (uint64_t)INT32_MAX - 4;
    if (known > limit) return PGW_ETOOBIG;
    rc = pgw_buf_reserve(b, (size_t)known + 5);
    if (rc < 0) return rc;
    if (!encoders)
        return put_bind_known(b, portal, plen, stmt, slen, params, nparams, nformats, sizes,
                              result_formats, nresult_formats, failed);
    /* Encoder parameters append what they make, in room they grow as they
     * go, and cannot grow the buffer past the limit either. */
    size_t saved_max = b->max;
    size_t cap_at = b->len + 5 + (size_t)limit;
    if (!b->max || b->max > cap_at) b->max = cap_at;
    pgw_msgw_t w;
    pgw_msgw_begin(b, 'B', &w);
    uint8_t *d = pgw_msgw_reserve(&w, plen + slen + 2 + 2 * nformats + 2);
    if (d) put_bind_head(d, portal, plen, stmt, slen, params, nparams, nformats);
    for (size_t i = 0; i < nparams && !w.err; i++) {
        uint64_t n = 0;
        if (i < SIZES_KEPT)
            n = sizes[i];
        else
            param_size(&params[i], &n); /* valid: measured above */
        write_param(&w, &params[i], n);
        if (w.err) *failed = i;
    }
    uint8_t *t = pgw_msgw_reserve(&w, 2 + 2 * nresult_formats);
    if (t) put_bind_tail(t, result_formats, nresult_formats);
    rc = pgw_msgw_end(&w, max_msg);
    b->max = saved_max;
    return rc;
}

int pgw_encode_jsonb(const void *ctx, pgw_buf_t *out)
{
    if (!ctx) return PGW_EINVAL;
    const char *s = ctx;
    size_t n = strlen(s);
    int rc = pgw_buf_reserve(out, n + 1);
    if (rc < 0) return rc;
    out->data[out->len] = 1; /* jsonb binary format version */
    memcpy(out->data + out->len + 1, s, n);
    out->len += n + 1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Datum encoder                                                            */
/* ------------------------------------------------------------------------ */

static int put_be(pgw_buf_t *out, uint64_t v, size_t n)
{
    uint8_t tmp[8];
    for (size_t i = 0; i < n; i++)
        tmp[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
    return pgw_buf_append(out, tmp, n);
}

/* An integer as any type of the INT kind it fits (oid is the unsigned one). */
static int encode_int(int64_t x, const pgw__builtin_t *t, pgw_buf_t *out)
{
    if (!t || t->kind != PGW_DATUM_INT) return PGW_ETYPE;
    if (!pgw__int_fits(x, t)) return PGW_ERANGE;
    return put_be(out, (uint64_t)x, (size_t)t->width);
}

static int encode_float(double d, const pgw__builtin_t *t, pgw_buf_t *out)
{
    if (t && t->kind == PGW_DATUM_FLOAT8) {
        uint64_t u;
        memcpy(&u, &d, 8);
        return put_be(out, u, 8);
    }
    if (!t || t->kind != PGW_DATUM_FLOAT4) return PGW_ETYPE;
    if (!isnan(d) && (double)(float)d != d) return PGW_ELOSS;
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    return put_be(out, u, 4);
}

/* Text as any text-like type: the bytes, after a version byte for jsonb and
 * jsonpath. */
static int encode_text(pgw_str_t s, const pgw__builtin_t *t, pgw_buf_t *out)
{
    if (!t || t->text == PGW__TL_NO) return PGW_ETYPE;
    if (t->text == PGW__TL_VERSIONED) {
        int rc = pgw_buf_append(out, "\1", 1);
        if (rc < 0) return rc;
    }
    return pgw_buf_append(out, s.p, s.len);
}

static int encode_bytea_text(pgw_str_t s, pgw_buf_t *out)
{
    size_t n;
    int rc = pgw__bytea_unescape(s.p, s.len, NULL, 0, &n);
    if (rc < 0 || n == 0) return rc; /* an empty buffer may have no storage yet */
    rc = pgw_buf_reserve(out, n);
    if (rc == 0) rc = pgw__bytea_unescape(s.p, s.len, out->data + out->len, n, &n);
    if (rc == 0) out->len += n;
    return rc;
}

/* Whether a datum kind can be written as type t: the kinds whose text form
 * has a kind of its own go to their type's kind; INT, FLOAT and TEXT are
 * checked by their encoders. */
static int kind_fits(uint8_t kind, const pgw__builtin_t *t)
{
    switch (kind) {
    case PGW_DATUM_INT:
    case PGW_DATUM_FLOAT4:
    case PGW_DATUM_FLOAT8:
    case PGW_DATUM_TEXT:
    case PGW_DATUM_NULL:
        return 1;
    case PGW_DATUM_BYTEA_TEXT:
        kind = PGW_DATUM_BYTEA;
        break;
    case PGW_DATUM_NUMERIC_TEXT:
        kind = PGW_DATUM_NUMERIC;
        break;
    default:
        break;
    }
    return t && t->kind == kind;
}

int pgw__encode_scalar(const pgw_datum_t *d, uint32_t oid, pgw_buf_t *out)
{
    if (!oid) oid = d->oid;
    const pgw__builtin_t *t = pgw__builtin(oid);
    if (!kind_fits(d->kind, t)) return PGW_ETYPE;
    switch (d->kind) {
    case PGW_DATUM_NULL:
        return PGW_EINVAL;
    case PGW_DATUM_BOOL:
        return put_be(out, d->u.b ? 1 : 0, 1);
    case PGW_DATUM_INT:
        return encode_int(d->u.i, t, out);
    case PGW_DATUM_FLOAT4:
        return encode_float(d->u.f4, t, out);
    case PGW_DATUM_FLOAT8:
        return encode_float(d->u.f8, t, out);
    case PGW_DATUM_TEXT:
        return encode_text(d->u.str, t, out);
    case PGW_DATUM_BYTEA:
        return pgw_buf_append(out, d->u.bytes.p, (size_t)d->u.bytes.len);
    case PGW_DATUM_BYTEA_TEXT:
        return encode_bytea_text(d->u.str, out);
    case PGW_DATUM_NUMERIC:
        return pgw__numeric_write(&d->u.num, out);
    case PGW_DATUM_NUMERIC_TEXT:
        return pgw__numeric_write_str(d->u.str.p, d->u.str.len, out);
    case PGW_DATUM_DATE:
        if (d->u.i < INT32_MIN || d->u.i > INT32_MAX) return PGW_ERANGE;
        return put_be(out, (uint64_t)d->u.i, 4);
    case PGW_DATUM_TIME:
    case PGW_DATUM_TIMESTAMP:
    case PGW_DATUM_TIMESTAMPTZ:
    case PGW_DATUM_MONEY:
        return put_be(out, (uint64_t)d->u.i, 8);
    case PGW_DATUM_TIMETZ:
        return pgw_encode_timetz(&d->u.timetz, out);
    case PGW_DATUM_INTERVAL:
        return pgw_encode_interval(&d->u.interval, out);
    case PGW_DATUM_UUID:
        return pgw_buf_append(out, d->u.uuid, 16);
    case PGW_DATUM_INET:
        return pgw_encode_inet(&d->u.inet, out);
    case PGW_DATUM_MACADDR:
        return pgw_buf_append(out, d->u.mac, 6);
    case PGW_DATUM_MACADDR8:
        return pgw_buf_append(out, d->u.mac, 8);
    case PGW_DATUM_CHAR:
        if (d->u.i < 0 || d->u.i > 255) return PGW_ERANGE;
        return put_be(out, (uint64_t)d->u.i, 1);
    default:
        return PGW_EINVAL;
    }
}
