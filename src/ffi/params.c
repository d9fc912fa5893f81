/*
 * Parameter lists for bindings (ffi.h): a pgw_param_t array the library
 * allocates, each slot set by the constructor of types.h of the same name,
 * with its own copy of whatever the parameter points to, so that a
 * binding's temporary buffers (a Python bytes object) may go once the
 * setter returns.
 */
#include "pgwire/ffi.h"

#include <stdlib.h>
#include <string.h>

struct pgw_params {
    size_t n;
    pgw_param_t *params;
    void **owned; /* owned[i]: the copy params[i] points to, or NULL */
};

pgw_params_t *pgw_params_new(size_t n)
{
    if (n > PGW_MAX_PARAMS) return NULL;
    pgw_params_t *ps = calloc(1, sizeof *ps);
    if (!ps) return NULL;
    ps->n = n;
    if (n) {
        ps->params = calloc(n, sizeof *ps->params);
        ps->owned = calloc(n, sizeof *ps->owned);
        if (!ps->params || !ps->owned) {
            pgw_params_free(ps);
            return NULL;
        }
    }
    for (size_t i = 0; i < n; i++)
        ps->params[i] = pgw_null(0);
    return ps;
}

void pgw_params_free(pgw_params_t *ps)
{
    if (!ps) return;
    for (size_t i = 0; ps->owned && i < ps->n; i++)
        free(ps->owned[i]);
    free(ps->owned);
    free(ps->params);
    free(ps);
}

size_t pgw_params_count(const pgw_params_t *ps)
{
    return ps ? ps->n : 0;
}

const pgw_param_t *pgw_params_array(const pgw_params_t *ps)
{
    return ps ? ps->params : NULL;
}

static int slot_check(const pgw_params_t *ps, size_t i)
{
    if (!ps) return PGW_EINVAL;
    return i < ps->n ? 0 : PGW_EINDEX;
}

/* A copy of src[0..n), or NULL when out of memory (n may be 0). */
static void *dup_bytes(const void *src, size_t n)
{
    void *c = malloc(n ? n : 1);
    if (c && n) memcpy(c, src, n);
    return c;
}

static int store(pgw_params_t *ps, size_t i, pgw_param_t p, void *owned)
{
    free(ps->owned[i]);
    ps->owned[i] = owned;
    ps->params[i] = p;
    return 0;
}

/* Store p, copying the bytes a PGW_PARAM_BYTES parameter views (len -1:
 * a NUL-terminated string, copied with its NUL). */
static int put(pgw_params_t *ps, size_t i, pgw_param_t p)
{
    int rc = slot_check(ps, i);
    if (rc) return rc;
    void *owned = NULL;
    if (p.kind == PGW_PARAM_BYTES && p.u.bytes.p) {
        size_t n = p.u.bytes.len >= 0 ? (size_t)p.u.bytes.len : strlen(p.u.bytes.p) + 1;
        if (!(owned = dup_bytes(p.u.bytes.p, n))) return PGW_ENOMEM;
        p.u.bytes.p = owned;
    }
    return store(ps, i, p, owned);
}

/* For the encoder-based constructors: check the slot and copy the n bytes
 * of their context into *copy (NULL for a NULL ctx). */
static int copy_ctx(const pgw_params_t *ps, size_t i, const void *ctx, size_t n, void **copy)
{
    int rc = slot_check(ps, i);
    if (rc) return rc;
    *copy = NULL;
    if (ctx && !(*copy = dup_bytes(ctx, n))) return PGW_ENOMEM;
    return 0;
}

static size_t cstr_size(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

int pgw_params_set_null(pgw_params_t *ps, size_t i, uint32_t oid)
{
    return put(ps, i, pgw_null(oid));
}
int pgw_params_set_bool(pgw_params_t *ps, size_t i, bool v)
{
    return put(ps, i, pgw_bool(v));
}
int pgw_params_set_int2(pgw_params_t *ps, size_t i, int16_t v)
{
    return put(ps, i, pgw_int2(v));
}
int pgw_params_set_int4(pgw_params_t *ps, size_t i, int32_t v)
{
    return put(ps, i, pgw_int4(v));
}
int pgw_params_set_int8(pgw_params_t *ps, size_t i, int64_t v)
{
    return put(ps, i, pgw_int8(v));
}
int pgw_params_set_float4(pgw_params_t *ps, size_t i, float v)
{
    return put(ps, i, pgw_float4(v));
}
int pgw_params_set_float8(pgw_params_t *ps, size_t i, double v)
{
    return put(ps, i, pgw_float8(v));
}
int pgw_params_set_text_typed(pgw_params_t *ps, size_t i, const char *s, int32_t len, uint32_t oid)
{
    return put(ps, i, pgw_text_typed(s, len, oid));
}
int pgw_params_set_text(pgw_params_t *ps, size_t i, const char *s)
{
    return put(ps, i, pgw_text(s));
}
int pgw_params_set_bytea(pgw_params_t *ps, size_t i, const void *data, int32_t len)
{
    return put(ps, i, pgw_bytea(data, len));
}
int pgw_params_set_raw(pgw_params_t *ps, size_t i, uint32_t oid, int16_t fmt, const void *data,
                       int32_t len)
{
    return put(ps, i, pgw_raw(oid, fmt, data, len));
}
int pgw_params_set_encoded(pgw_params_t *ps, size_t i, uint32_t oid, pgw_encode_fn fn,
                           const void *ctx)
{
    return put(ps, i, pgw_encoded(oid, fn, ctx));
}
int pgw_params_set_oid_param(pgw_params_t *ps, size_t i, uint32_t v)
{
    return put(ps, i, pgw_oid_param(v));
}
int pgw_params_set_numeric_str(pgw_params_t *ps, size_t i, const char *s)
{
    void *c;
    int rc = copy_ctx(ps, i, s, cstr_size(s), &c);
    return rc ? rc : store(ps, i, pgw_numeric_str(c), c);
}
/* The struct and its digits in one block. */
int pgw_params_set_numeric(pgw_params_t *ps, size_t i, const pgw_numeric_t *n)
{
    size_t ndigits = n && n->digits ? n->ndigits : 0;
    void *c;
    int rc = copy_ctx(ps, i, n, sizeof *n + 2 * ndigits, &c);
    if (rc) return rc;
    pgw_numeric_t *copy = c;
    if (copy && ndigits) {
        memcpy(copy + 1, n->digits, 2 * ndigits);
        copy->digits = (const uint8_t *)(copy + 1);
    }
    return store(ps, i, pgw_numeric(copy), c);
}
int pgw_params_set_date(pgw_params_t *ps, size_t i, int32_t days)
{
    return put(ps, i, pgw_date(days));
}
int pgw_params_set_time(pgw_params_t *ps, size_t i, int64_t usec)
{
    return put(ps, i, pgw_time(usec));
}
int pgw_params_set_timetz(pgw_params_t *ps, size_t i, const pgw_timetz_t *t)
{
    void *c;
    int rc = copy_ctx(ps, i, t, sizeof *t, &c);
    return rc ? rc : store(ps, i, pgw_timetz(c), c);
}
int pgw_params_set_timestamp(pgw_params_t *ps, size_t i, int64_t usec)
{
    return put(ps, i, pgw_timestamp(usec));
}
int pgw_params_set_timestamptz(pgw_params_t *ps, size_t i, int64_t usec)
{
    return put(ps, i, pgw_timestamptz(usec));
}
int pgw_params_set_interval(pgw_params_t *ps, size_t i, const pgw_interval_t *iv)
{
    void *c;
    int rc = copy_ctx(ps, i, iv, sizeof *iv, &c);
    return rc ? rc : store(ps, i, pgw_interval(c), c);
}
int pgw_params_set_uuid(pgw_params_t *ps, size_t i, const uint8_t uuid[16])
{
    return put(ps, i, pgw_uuid(uuid));
}
int pgw_params_set_inet(pgw_params_t *ps, size_t i, const pgw_inet_t *a)
{
    void *c;
    int rc = copy_ctx(ps, i, a, sizeof *a, &c);
    return rc ? rc : store(ps, i, pgw_inet(c), c);
}
int pgw_params_set_macaddr(pgw_params_t *ps, size_t i, const uint8_t mac[6])
{
    return put(ps, i, pgw_macaddr(mac));
}
int pgw_params_set_macaddr8(pgw_params_t *ps, size_t i, const uint8_t mac[8])
{
    return put(ps, i, pgw_macaddr8(mac));
}
int pgw_params_set_money(pgw_params_t *ps, size_t i, int64_t cents)
{
    return put(ps, i, pgw_money(cents));
}
int pgw_params_set_json(pgw_params_t *ps, size_t i, const char *json)
{
    return put(ps, i, pgw_json(json));
}
int pgw_params_set_jsonb(pgw_params_t *ps, size_t i, const char *json)
{
    void *c;
    int rc = copy_ctx(ps, i, json, cstr_size(json), &c);
    return rc ? rc : store(ps, i, pgw_jsonb(c), c);
}
