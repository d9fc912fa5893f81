/*
 * Descriptors and configurations for bindings (ffi.h): allocated and
 * initialised here, so a binding never needs their size, and read or
 * written member by member through a table of each struct's members (name,
 * offset, width, kind) built from the struct's declaration with offsetof.
 *
 * Members are only ever added at the end of these structs (common.h,
 * "What is stable ABI"): each table's last entry is checked at compile time
 * to be its struct's last member, so a member added to a header without
 * its entry here fails the build.
 */
#include "pgwire/ffi.h"

#include <limits.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

enum member_kind { M_UINT, M_INT, M_PTR, M_FN };

typedef struct member {
    const char *name;
    size_t offset;
    size_t size;
    enum member_kind kind;
} member_t;

/* A struct's members, and one nested struct whose members are named
 * "prefix.member" (the pool's conn). */
typedef struct member_table {
    const member_t *members;
    size_t n;
    const char *nested_prefix;
    size_t nested_offset;
    const struct member_table *nested;
} member_table_t;

/* clang-format off */
#define MEMBER(T, m, kind) {#m, offsetof(T, m), sizeof(((T *)0)->m), kind}
#define U(T, m)            MEMBER(T, m, M_UINT)
#define I(T, m)            MEMBER(T, m, M_INT)
#define P(T, m)            MEMBER(T, m, M_PTR)
#define F(T, m)            MEMBER(T, m, M_FN)
#define LAST_MEMBER(T, m)  LAST_MEMBER_(T, m) /* T expanded: the struct's name */
#define LAST_MEMBER_(T, m)                                                          \
    _Static_assert(sizeof(T) - (offsetof(T, m) + sizeof(((T *)0)->m)) < alignof(T), \
                   #T ": a member after " #m " has no entry in its table")
#define TABLE(members) {members, sizeof members / sizeof members[0], NULL, 0, NULL}
/* clang-format on */

#define R pgw_request_t
static const member_t request_members[] = {
    U(R, kind),
    P(R, sql),
    P(R, stmt),
    P(R, params),
    U(R, nparams),
    P(R, param_types),
    U(R, nparam_types),
    P(R, result_formats),
    U(R, nresult_formats),
    U(R, flags),
    F(R, on_result),
    F(R, on_row),
    P(R, ud),
    U(R, timeout_ms),
    U(R, cache),
    F(R, copy_source),
    F(R, on_copy_data),
    F(R, on_copy_start),
    P(R, portal),
    U(R, max_rows),
    U(R, route),
    F(R, on_copy_end),
    U(R, fn_oid),
};
LAST_MEMBER(R, fn_oid);
#undef R
static const member_table_t request_table = TABLE(request_members);

#define S pgw_session_config_t
static const member_t session_config_members[] = {
    P(S, alloc),
    P(S, startup_params),
    U(S, nstartup_params),
    P(S, password),
    P(S, require_auth),
    P(S, channel_binding),
    U(S, min_protocol),
    U(S, max_protocol),
    U(S, max_message_size),
    U(S, read_chunk_size),
    U(S, chunk_cache_bytes),
    F(S, cb.on_startup),
    F(S, cb.on_want_write),
    F(S, cb.on_broken),
    F(S, cb.on_notice),
    F(S, cb.on_notification),
    F(S, cb.on_parameter),
    F(S, cb.on_trace),
    F(S, cb.now_ns),
    F(S, cb.channel_binding),
    F(S, cb.on_deadline),
    F(S, cb.gss_step),
    F(S, cb.gss_encrypted),
    F(S, cb.oauth_token),
    F(S, cb.on_auth_ok),
    P(S, ud),
    U(S, output_high_water),
    F(S, on_drain),
    U(S, request_timeout_ms),
    U(S, stmt_cache_mode),
    U(S, stmt_cache_size),
    U(S, stmt_cache_bytes),
    P(S, registry),
    P(S, oauth_issuer),
    P(S, oauth_client_id),
    P(S, oauth_client_secret),
    P(S, oauth_scope),
    P(S, oauth_token),
    U(S, max_pending),
    I(S, results_any_thread),
    I(S, no_pipelining),
    I(S, no_timing),
};
LAST_MEMBER(S, no_timing);
_Static_assert(sizeof(pgw_session_callbacks_t) ==
                   offsetof(pgw_session_callbacks_t, on_auth_ok) + sizeof(pgw_fn_t),
               "pgw_session_callbacks_t: a hook after on_auth_ok has no entry in its table");
#undef S
static const member_table_t session_config_table = TABLE(session_config_members);

#define C pgw_conn_config_t
static const member_t conn_config_members[] = {
    P(C, alloc),
    U(C, max_message_size),
    U(C, write_threshold),
    U(C, read_chunk_size),
    U(C, chunk_cache_bytes),
    U(C, tls_ring_size),
    F(C, on_notice),
    F(C, on_notification),
    F(C, on_parameter),
    F(C, on_trace),
    F(C, on_lost),
    P(C, ud),
    U(C, high_water_mark),
    F(C, on_drain),
    U(C, request_timeout_ms),
    U(C, cancel_grace_ms),
    U(C, stmt_cache_mode),
    U(C, stmt_cache_size),
    U(C, stmt_cache_bytes),
    P(C, registry),
    F(C, on_oauth_token),
    P(C, oauth_ud),
    U(C, max_pending),
    I(C, results_any_thread),
    I(C, no_pipelining),
    I(C, no_timing),
    I(C, kernel_tcp_defaults),
    I(C, blocking_resolve),
};
LAST_MEMBER(C, blocking_resolve);
#undef C
static const member_table_t conn_config_table = TABLE(conn_config_members);

#define PC pgw_pool_config_t
static const member_t pool_config_members[] = {
    U(PC, min_size),           U(PC, max_size),
    U(PC, max_connecting),     U(PC, pipeline_target),
    U(PC, acquire_timeout_ms), U(PC, backoff_min_ms),
    U(PC, backoff_max_ms),     U(PC, max_lifetime_ms),
    U(PC, lifetime_jitter_ms), U(PC, idle_timeout_ms),
    U(PC, liveness_after_ms),  I(PC, route),
    P(PC, reset_sql),          U(PC, max_standby_lag_bytes),
    U(PC, max_standby_lag_ms), U(PC, lag_check_ms),
    I(PC, standby_lag_fail),   I(PC, read_your_writes),
    I(PC, ryw_fail),           U(PC, ryw_wait_ms),
};
LAST_MEMBER(PC, ryw_wait_ms);
static const member_table_t pool_config_table = {
    pool_config_members, sizeof pool_config_members / sizeof pool_config_members[0], "conn.",
    offsetof(PC, conn), &conn_config_table};
#undef PC

#define L pgw_listener_config_t
static const member_t listener_config_members[] = {
    P(L, conn), U(L, backoff_min_ms), U(L, backoff_max_ms), F(L, on_notification), F(L, on_event),
    P(L, ud),
};
LAST_MEMBER(L, ud);
#undef L
static const member_table_t listener_config_table = TABLE(listener_config_members);

/* The member called name, and its offset in the outer struct. */
static const member_t *find(const member_table_t *t, const char *name, size_t *offset)
{
    size_t base = 0;
    size_t plen = t->nested_prefix ? strlen(t->nested_prefix) : 0;
    if (plen && strncmp(name, t->nested_prefix, plen) == 0) {
        base = t->nested_offset;
        name += plen;
        t = t->nested;
    }
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->members[i].name, name) == 0) {
            *offset = base + t->members[i].offset;
            return &t->members[i];
        }
    }
    return NULL;
}

/* Find name's member of the kind the caller reads or writes (M_INT is read
 * and written as M_UINT). Returns 0 or the error every accessor returns. */
static int lookup(const member_table_t *t, const void *obj, const char *name, enum member_kind kind,
                  const member_t **m, size_t *offset)
{
    if (!obj || !name) return PGW_EINVAL;
    if (!(*m = find(t, name, offset))) return PGW_ENOTFOUND;
    enum member_kind k = (*m)->kind == M_INT ? M_UINT : (*m)->kind;
    return k == kind ? 0 : PGW_ETYPE;
}

static uint64_t member_max(const member_t *m)
{
    uint64_t bits = 8 * (uint64_t)m->size;
    if (m->kind == M_INT) bits--;
    return bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
}

static int set_uint(const member_table_t *t, void *obj, const char *name, uint64_t v)
{
    const member_t *m;
    size_t off;
    int rc = lookup(t, obj, name, M_UINT, &m, &off);
    if (rc) return rc;
    if (v > member_max(m)) return PGW_ERANGE;
    uint8_t *p = (uint8_t *)obj + off;
    uint8_t u8 = (uint8_t)v;
    uint16_t u16 = (uint16_t)v;
    uint32_t u32 = (uint32_t)v;
    switch (m->size) {
    case 1:
        memcpy(p, &u8, 1);
        break;
    case 2:
        memcpy(p, &u16, 2);
        break;
    case 4:
        memcpy(p, &u32, 4);
        break;
    default:
        memcpy(p, &v, 8);
        break;
    }
    return 0;
}

static int get_uint(const member_table_t *t, const void *obj, const char *name, uint64_t *out)
{
    const member_t *m;
    size_t off;
    int rc = lookup(t, obj, name, M_UINT, &m, &off);
    if (rc) return rc;
    if (!out) return PGW_EINVAL;
    const uint8_t *p = (const uint8_t *)obj + off;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    int32_t i32;
    switch (m->size) {
    case 1:
        memcpy(&u8, p, 1), *out = u8;
        break;
    case 2:
        memcpy(&u16, p, 2), *out = u16;
        break;
    case 4:
        if (m->kind == M_INT)
            memcpy(&i32, p, 4), *out = (uint64_t)(int64_t)i32;
        else
            memcpy(&u32, p, 4), *out = u32;
        break;
    default:
        memcpy(out, p, 8);
        break;
    }
    return 0;
}

static int set_ptr(const member_table_t *t, void *obj, const char *name, const void *v)
{
    const member_t *m;
    size_t off;
    int rc = lookup(t, obj, name, M_PTR, &m, &off);
    if (!rc) memcpy((uint8_t *)obj + off, &v, sizeof v);
    return rc;
}

static int get_ptr(const member_table_t *t, const void *obj, const char *name, const void **out)
{
    const member_t *m;
    size_t off;
    int rc = lookup(t, obj, name, M_PTR, &m, &off);
    if (rc) return rc;
    if (!out) return PGW_EINVAL;
    memcpy(out, (const uint8_t *)obj + off, sizeof *out);
    return 0;
}

/* Every function pointer has pgw_fn_t's size on the systems the library
 * supports (POSIX requires it of dlsym's results). */
static int set_fn(const member_table_t *t, void *obj, const char *name, pgw_fn_t fn)
{
    const member_t *m;
    size_t off;
    int rc = lookup(t, obj, name, M_FN, &m, &off);
    if (!rc) memcpy((uint8_t *)obj + off, &fn, sizeof fn);
    return rc;
}

/* The five accessors of ffi.h for one struct. */
#define MEMBER_ACCESSORS(prefix, T, table)                                 \
    int prefix##_set_uint(T *o, const char *member, uint64_t v)            \
    {                                                                      \
        return set_uint(&table, o, member, v);                             \
    }                                                                      \
    int prefix##_set_ptr(T *o, const char *member, const void *p)          \
    {                                                                      \
        return set_ptr(&table, o, member, p);                              \
    }                                                                      \
    int prefix##_set_fn(T *o, const char *member, pgw_fn_t fn)             \
    {                                                                      \
        return set_fn(&table, o, member, fn);                              \
    }                                                                      \
    int prefix##_get_uint(const T *o, const char *member, uint64_t *out)   \
    {                                                                      \
        return get_uint(&table, o, member, out);                           \
    }                                                                      \
    int prefix##_get_ptr(const T *o, const char *member, const void **out) \
    {                                                                      \
        return get_ptr(&table, o, member, out);                            \
    }

/* new and free of a configuration, initialised by its *_config_init. */
#define CONFIG_LIFETIME(prefix, T)    \
    T *prefix##_new(void)             \
    {                                 \
        T *cfg = malloc(sizeof *cfg); \
        if (cfg) prefix##_init(cfg);  \
        return cfg;                   \
    }                                 \
    void prefix##_free(T *cfg)        \
    {                                 \
        free(cfg);                    \
    }

MEMBER_ACCESSORS(pgw_request, pgw_request_t, request_table)
MEMBER_ACCESSORS(pgw_session_config, pgw_session_config_t, session_config_table)
MEMBER_ACCESSORS(pgw_conn_config, pgw_conn_config_t, conn_config_table)
MEMBER_ACCESSORS(pgw_pool_config, pgw_pool_config_t, pool_config_table)
MEMBER_ACCESSORS(pgw_listener_config, pgw_listener_config_t, listener_config_table)

CONFIG_LIFETIME(pgw_session_config, pgw_session_config_t)
CONFIG_LIFETIME(pgw_conn_config, pgw_conn_config_t)
CONFIG_LIFETIME(pgw_pool_config, pgw_pool_config_t)
CONFIG_LIFETIME(pgw_listener_config, pgw_listener_config_t)

pgw_request_t *pgw_request_new(pgw_request_kind_t kind)
{
    pgw_request_t *r = malloc(sizeof *r);
    if (r) pgw_request_init(r, kind);
    return r;
}

pgw_request_t *pgw_request_new_array(size_t n, pgw_request_kind_t kind)
{
    if (n == 0 || n > SIZE_MAX / sizeof(pgw_request_t)) return NULL;
    pgw_request_t *reqs = malloc(n * sizeof *reqs);
    for (size_t i = 0; reqs && i < n; i++)
        pgw_request_init(&reqs[i], kind);
    return reqs;
}

void pgw_request_free(pgw_request_t *r)
{
    free(r);
}

int pgw_request_set_params(pgw_request_t *r, const pgw_params_t *ps)
{
    if (!r) return PGW_EINVAL;
    r->params = pgw_params_array(ps);
    r->nparams = pgw_params_count(ps);
    return 0;
}
