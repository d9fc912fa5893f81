/*
 * The multi-host plan (hostplan.h): which host next, what a failure means
 * for the rest of the connect, and the target_session_attrs check. The
 * connections of connect.c and a driver with its own sockets follow it;
 * the I/O is theirs.
 */
#define _POSIX_C_SOURCE 200809L
#include "pgwire/hostplan.h"

#include "conn/conn_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* target_session_attrs, in the order of its names below. */
enum target {
    TARGET_ANY = 0,
    TARGET_READ_WRITE,
    TARGET_READ_ONLY,
    TARGET_PRIMARY,
    TARGET_STANDBY,
    TARGET_PREFER_STANDBY
};

struct pgw_hostplan {
    const pgw_allocator_t *alloc;
    pgw__host_t *hosts; /* in the order they are tried */
    size_t nhosts;
    size_t next; /* the host pgw_hostplan_next gives next */
    size_t cur;  /* the host given last; nhosts: none */
    int target;  /* enum target */
    int pass;    /* prefer-standby: 0 first pass (standbys only), 1 any server */
    const char *probe;
    const char *reason;
};

static int parse_target(const char *v, int *out)
{
    static const char *const names[] = {"any",     "read-write", "read-only",
                                        "primary", "standby",    "prefer-standby"};
    *out = TARGET_ANY;
    if (!v || !*v) return 0;
    for (size_t i = 0; i < PGW__ARRAY_LEN(names); i++) {
        if (strcmp(v, names[i]) == 0) {
            *out = (int)i;
            return 0;
        }
    }
    return PGW_ECONNINFO;
}

/* load_balance_hosts=random: one shuffle per plan (xorshift64 seeded from
 * the clock and the plan's address; an even spread, not a secret). */
static void shuffle(pgw_hostplan_t *p)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x =
        ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^ (uint64_t)(uintptr_t)p;
    if (x == 0) x = 1;
    for (size_t i = p->nhosts; i > 1; i--) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t j = (size_t)(x % i);
        pgw__host_t tmp = p->hosts[i - 1];
        p->hosts[i - 1] = p->hosts[j];
        p->hosts[j] = tmp;
    }
}

int pgw_hostplan_new(pgw_hostplan_t **out, const pgw_conninfo_t *ci, const pgw_allocator_t *alloc)
{
    if (!out || !ci) return PGW_EINVAL;
    *out = NULL;
    int target;
    if (parse_target(pgw_conninfo_get(ci, "target_session_attrs"), &target) < 0)
        return PGW_ECONNINFO;
    const char *lb = pgw_conninfo_get(ci, "load_balance_hosts");
    int random = lb && strcmp(lb, "random") == 0;
    if (lb && *lb && !random && strcmp(lb, "disable") != 0) return PGW_ECONNINFO;

    alloc = pgw__alloc_or_default(alloc);
    size_t n = pgw_conninfo_nhosts(ci);
    pgw_hostplan_t *p = pgw__calloc(alloc, 1, sizeof(*p));
    if (!p) return PGW_ENOMEM;
    p->alloc = alloc;
    p->hosts = pgw__calloc(alloc, n ? n : 1, sizeof(*p->hosts));
    if (!p->hosts) {
        pgw__free(alloc, p);
        return PGW_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        pgw__host_t *h = &p->hosts[i];
        int rc = pgw_conninfo_host(ci, i, &h->h);
        if (rc < 0) {
            pgw_hostplan_free(p);
            return rc;
        }
        h->index = i;
        snprintf(h->port, sizeof(h->port), "%u", (unsigned)h->h.port);
        h->password = pgw_conninfo_password(ci, &h->h);
    }
    p->nhosts = p->cur = n;
    p->target = target;
    if (random) shuffle(p);
    *out = p;
    return 0;
}

void pgw_hostplan_free(pgw_hostplan_t *p)
{
    if (!p) return;
    pgw__free(p->alloc, p->hosts);
    pgw__free(p->alloc, p);
}

int pgw_hostplan_next(pgw_hostplan_t *p, pgw_host_t *out)
{
    if (!p) return PGW_EINVAL;
    p->probe = p->reason = NULL;
    if (p->next >= p->nhosts && p->target == TARGET_PREFER_STANDBY && p->pass == 0 &&
        p->nhosts > 0) {
        p->pass = 1; /* no standby found: any server will do */
        p->next = 0;
    }
    if (p->next >= p->nhosts) {
        p->cur = p->nhosts;
        return 0;
    }
    p->cur = p->next++;
    if (out) *out = p->hosts[p->cur].h;
    return 1;
}

size_t pgw_hostplan_index(const pgw_hostplan_t *p)
{
    return p && p->cur < p->nhosts ? p->hosts[p->cur].index : (size_t)-1;
}

const pgw__host_t *pgw__hostplan_host(const pgw_hostplan_t *p)
{
    return p && p->cur < p->nhosts ? &p->hosts[p->cur] : NULL;
}

const pgw__host_t *pgw__hostplan_first(const pgw_hostplan_t *p)
{
    return p && p->nhosts ? &p->hosts[0] : NULL;
}

pgw_hostplan_step_t pgw_hostplan_failed(pgw_hostplan_t *p, int err, const pgw_error_t *server)
{
    if (!p) return PGW_HOSTPLAN_END;
    if (pgw_is_system_error(err)) return PGW_HOSTPLAN_NEXT_ADDRESS;
    switch (err) {
    case PGW_ETIMEDOUT:
    case PGW_ECONNLOST:
    case PGW_ECONNINFO:
        return PGW_HOSTPLAN_NEXT_ADDRESS;
    case PGW_EDNS:
    case PGW_ETARGET:
        return PGW_HOSTPLAN_NEXT_HOST;
    case PGW_ESERVER:
        if (server && server->sqlstate &&
            pgw_sqlstate_is(server->sqlstate, strlen(server->sqlstate),
                            PGW_SQLSTATE_CANNOT_CONNECT_NOW))
            return PGW_HOSTPLAN_NEXT_HOST;
        return PGW_HOSTPLAN_END;
    default:
        return PGW_HOSTPLAN_END;
    }
}

/* libpq's reason for leaving a server that does not match. */
static const char *mismatch(int target)
{
    switch (target) {
    case TARGET_READ_WRITE:
        return "session is read-only";
    case TARGET_READ_ONLY:
        return "session is not read-only";
    case TARGET_PRIMARY:
        return "server is in hot standby mode";
    default:
        return "server is not in hot standby mode";
    }
}

/* Does a server with these properties match? read_only/standby are 1/0. */
static pgw_hostplan_step_t decide(pgw_hostplan_t *p, int read_only, int standby)
{
    int ok;
    switch (p->target) {
    case TARGET_READ_WRITE:
        ok = !read_only;
        break;
    case TARGET_READ_ONLY:
        ok = read_only;
        break;
    case TARGET_PRIMARY:
        ok = !standby;
        break;
    case TARGET_STANDBY:
        ok = standby;
        break;
    case TARGET_PREFER_STANDBY:
        ok = p->pass > 0 || standby;
        break;
    default:
        ok = 1;
    }
    p->reason = ok ? NULL : mismatch(p->target);
    return ok ? PGW_HOSTPLAN_ACCEPT : PGW_HOSTPLAN_NEXT_HOST;
}

/* 1 yes, 0 no, -1 not reported, from a ParameterStatus value. */
static int param_bool(const pgw_session_t *s, const char *name)
{
    const char *v = pgw_session_parameter(s, name);
    if (!v) return -1;
    return strcmp(v, "on") == 0 || strcmp(v, "true") == 0;
}

static int by_read_only(int target)
{
    return target == TARGET_READ_WRITE || target == TARGET_READ_ONLY;
}

pgw_hostplan_step_t pgw_hostplan_check(pgw_hostplan_t *p, const pgw_session_t *s)
{
    if (!p || !s) return PGW_HOSTPLAN_END;
    p->probe = p->reason = NULL;
    if (p->target == TARGET_ANY || (p->target == TARGET_PREFER_STANDBY && p->pass > 0))
        return PGW_HOSTPLAN_ACCEPT;
    int hot = param_bool(s, "in_hot_standby");
    if (by_read_only(p->target)) {
        int ro = param_bool(s, "default_transaction_read_only");
        if (ro < 0 || hot < 0) {
            p->probe = "SHOW transaction_read_only";
            return PGW_HOSTPLAN_PROBE;
        }
        return decide(p, ro || hot, hot);
    }
    if (hot < 0) {
        p->probe = "SELECT pg_catalog.pg_is_in_recovery()";
        return PGW_HOSTPLAN_PROBE;
    }
    return decide(p, hot, hot);
}

const char *pgw_hostplan_probe_sql(const pgw_hostplan_t *p)
{
    return p ? p->probe : NULL;
}

pgw_hostplan_step_t pgw_hostplan_probe_answer(pgw_hostplan_t *p, const char *value, size_t len)
{
    if (!p || !p->probe) return PGW_HOSTPLAN_END;
    p->probe = NULL;
    if (!value || len == 0) return PGW_HOSTPLAN_NEXT_HOST; /* no answer: the next host */
    /* "on"/"off" from SHOW, "t"/"f" from the function */
    int yes = (value[0] == 't') || (value[0] == 'o' && !(len > 1 && value[1] == 'f'));
    return by_read_only(p->target) ? decide(p, yes, 0) : decide(p, 0, yes);
}

const char *pgw_hostplan_reason(const pgw_hostplan_t *p)
{
    return p ? p->reason : NULL;
}
