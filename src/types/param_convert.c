/*
 * Parameter conversion to a statement's parameter types: which C values
 * may be re-encoded for which built-in type, decided from the type table's
 * KIND and TEXT columns (builtin.c), and the error message when one
 * cannot.
 */
#include "types/param_convert.h"

#include "types/container_internal.h"
#include "types/types_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

static int is_int_kind(uint8_t kind)
{
    return kind == PGW_PARAM_INT2 || kind == PGW_PARAM_INT4 || kind == PGW_PARAM_INT8;
}

/* ctx: a pgw_param_t holding an integer; written as binary numeric. */
static int encode_int_numeric(const void *ctx, pgw_buf_t *out)
{
    const pgw_param_t *p = ctx;
    char s[24];
    int n = snprintf(s, sizeof s, "%" PRId64, p->u.i);
    return pgw__numeric_write_str(s, (size_t)n, out);
}

/* ctx: a binary pgw_param_t of bytes that are text; written with jsonb's
 * and jsonpath's version byte first. */
static int encode_versioned_text(const void *ctx, pgw_buf_t *out)
{
    const pgw_param_t *p = ctx;
    if (!p->u.bytes.p) return PGW_EINVAL;
    size_t n = p->u.bytes.len < 0 ? strlen(p->u.bytes.p) : (size_t)p->u.bytes.len;
    int rc = pgw_buf_append(out, "\1", 1);
    return rc < 0 ? rc : pgw_buf_append(out, p->u.bytes.p, n);
}

static pgw_param_t typed(const pgw_param_t *in, uint8_t kind, uint32_t oid)
{
    pgw_param_t p = *in;
    p.kind = kind;
    p.format = PGW_FORMAT_BINARY;
    p.oid = oid;
    return p;
}

static int convert_int(const pgw_param_t *in, const pgw__builtin_t *to, pgw_param_t *out)
{
    int64_t x = in->u.i;
    switch (to->kind) {
    case PGW_DATUM_INT: {
        if (!pgw__int_fits(x, to)) return PGW_ERANGE;
        uint8_t kind = to->width == 2   ? PGW_PARAM_INT2
                       : to->width == 4 ? PGW_PARAM_INT4
                                        : PGW_PARAM_INT8;
        *out = typed(in, kind, to->oid);
        return 0;
    }
    case PGW_DATUM_FLOAT4:
        if (!pgw__int64_exact_float(x)) return PGW_ERANGE;
        *out = typed(in, PGW_PARAM_FLOAT4, to->oid);
        out->u.f4 = (float)x;
        return 0;
    case PGW_DATUM_FLOAT8:
        if (!pgw__int64_exact_double(x)) return PGW_ERANGE;
        *out = typed(in, PGW_PARAM_FLOAT8, to->oid);
        out->u.f8 = (double)x;
        return 0;
    case PGW_DATUM_NUMERIC:
        *out = pgw_encoded(to->oid, encode_int_numeric, in);
        return 0;
    default:
        return PGW_ETYPE;
    }
}

static int convert_float(const pgw_param_t *in, const pgw__builtin_t *to, pgw_param_t *out)
{
    double d = in->kind == PGW_PARAM_FLOAT4 ? (double)in->u.f4 : in->u.f8;
    if (to->kind == PGW_DATUM_FLOAT8) {
        *out = typed(in, PGW_PARAM_FLOAT8, to->oid);
        out->u.f8 = d;
        return 0;
    }
    if (to->kind != PGW_DATUM_FLOAT4) return PGW_ETYPE;
    if (!isnan(d) && (double)(float)d != d) return PGW_ERANGE;
    *out = typed(in, PGW_PARAM_FLOAT4, to->oid);
    out->u.f4 = (float)d;
    return 0;
}

/* Bytes or an encoder's output in the binary form of from, for to. */
static int convert_binary(const pgw_param_t *in, const pgw__builtin_t *from,
                          const pgw__builtin_t *to, pgw_param_t *out)
{
    if (from->text != PGW__TL_SAME) return PGW_ETYPE;
    if (to->text == PGW__TL_SAME) {
        *out = *in;
        out->oid = to->oid;
        return 0;
    }
    if (to->text == PGW__TL_VERSIONED && in->kind == PGW_PARAM_BYTES) {
        *out = pgw_encoded(to->oid, encode_versioned_text, in);
        return 0;
    }
    return PGW_ETYPE;
}

int pgw__param_convert(const pgw_param_t *in, uint32_t target_oid, pgw_param_t *out)
{
    if (!in || !out) return PGW_EINVAL;
    *out = *in;
    if (in->kind == PGW_PARAM_NULL) {
        if (target_oid) out->oid = target_oid;
        return 0;
    }
    uint32_t target = pgw_type_resolve_oid(NULL, target_oid);
    if (!target || in->oid == target || in->oid == target_oid || in->format != PGW_FORMAT_BINARY)
        return 0;
    const pgw__builtin_t *from = pgw__builtin(in->oid), *to = pgw__builtin(target);
    if (!from || !to) return 0;
    switch (in->kind) {
    case PGW_PARAM_INT2:
    case PGW_PARAM_INT4:
    case PGW_PARAM_INT8:
        return from->kind == PGW_DATUM_INT ? convert_int(in, to, out) : PGW_ETYPE;
    case PGW_PARAM_FLOAT4:
    case PGW_PARAM_FLOAT8:
        return from->kind == PGW_DATUM_FLOAT4 || from->kind == PGW_DATUM_FLOAT8
                   ? convert_float(in, to, out)
                   : PGW_ETYPE;
    case PGW_PARAM_BYTES:
    case PGW_PARAM_ENCODER:
        return convert_binary(in, from, to, out);
    default:
        return PGW_ETYPE;
    }
}

/* A type's name for messages: the built-in name, or its oid. */
static const char *type_label(uint32_t oid, char *buf, size_t n)
{
    const char *name = pgw_type_name(oid);
    if (name) return name;
    snprintf(buf, n, oid ? "type %" PRIu32 : "an untyped value", oid);
    return buf;
}

size_t pgw__param_convert_message(char *buf, size_t n, size_t index, const pgw_param_t *p,
                                  uint32_t target_oid, int rc)
{
    char from_buf[32], to_buf[32];
    const char *from = p ? type_label(p->oid, from_buf, sizeof from_buf) : "?";
    const char *to = type_label(target_oid, to_buf, sizeof to_buf);
    size_t pos = index + 1;
    int len;
    if (rc == PGW_ERANGE && p && is_int_kind(p->kind))
        len =
            snprintf(buf, n, "parameter $%zu: %s value %" PRId64 " does not fit the statement's %s",
                     pos, from, p->u.i, to);
    else if (rc == PGW_ERANGE && p && (p->kind == PGW_PARAM_FLOAT4 || p->kind == PGW_PARAM_FLOAT8))
        len = snprintf(buf, n,
                       "parameter $%zu: %s value %.17g does not fit the statement's %s exactly",
                       pos, from, p->kind == PGW_PARAM_FLOAT4 ? (double)p->u.f4 : p->u.f8, to);
    else if (rc == PGW_ETYPE)
        len = snprintf(buf, n, "parameter $%zu: %s cannot be sent as %s", pos, from, to);
    else
        len = snprintf(buf, n, "parameter $%zu: %s", pos, pgw_strerror(rc));
    return len < 0 ? 0 : (size_t)len;
}
