/*
 * Where the pool's work goes (driver_internal.h): the conninfo each role
 * connects with (target_session_attrs when the pool routes), the role a
 * request or a checkout asks, and the connection a one-shot request is
 * sent on (the core's pick: least in flight).
 */
#define _DEFAULT_SOURCE /* uv.h needs POSIX types */
#include "conn/conninfo_internal.h"
#include "pool/driver_internal.h"

#include <pgwire/conninfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* conninfo with target_session_attrs=attrs appended (a later keyword
 * replaces an earlier one), or a copy when attrs is NULL. */
static char *conninfo_with(const pgw_allocator_t *a, const char *ci, const char *attrs)
{
    size_t n = strlen(ci), extra = attrs ? strlen(attrs) + 32 : 0;
    char *s = pgw__malloc(a, n + extra + 1);
    if (!s) return NULL;
    memcpy(s, ci, n + 1);
    if (!attrs) return s;
    if (pgw__ci_uri_prefix_len(ci))
        strcat(s, strchr(ci, '?') ? "&" : "?");
    else
        strcat(s, " ");
    strcat(s, "target_session_attrs=");
    strcat(s, attrs);
    return s;
}

int pgw__route_conninfo(pgw_pool_t *p)
{
    int route = p->cfg.route;
    p->ci_role[PGW__ROLE_RW] = conninfo_with(p->alloc, p->conninfo, route ? "read-write" : NULL);
    p->ci_role[PGW__ROLE_RO] =
        conninfo_with(p->alloc, p->conninfo, route ? "prefer-standby" : NULL);
    if (!p->ci_role[PGW__ROLE_RW] || !p->ci_role[PGW__ROLE_RO]) return PGW_ENOMEM;
    /* A conninfo the connections cannot parse fails them, not the pool:
     * without its host list, read-only connections are not narrowed. */
    if (route && (p->cfg.max_standby_lag_bytes || p->cfg.max_standby_lag_ms) &&
        pgw_conninfo_parse(&p->ci_hosts, p->conninfo, p->alloc, NULL, 0) == PGW_ENOMEM)
        return PGW_ENOMEM;
    return 0;
}

/* Append " key='value'" (keyword form: quotes and backslashes escaped) or
 * "&key=value" (URI form: percent-encoded) to b. */
static int append_param(pgw_buf_t *b, int uri, const char *key, const char *value)
{
    int rc = pgw_buf_append(b, uri ? "&" : " ", 1);
    if (rc == 0) rc = pgw_buf_append(b, key, strlen(key));
    if (rc == 0) rc = pgw_buf_append(b, uri ? "=" : "='", uri ? 1 : 2);
    for (const char *s = value; rc == 0 && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (uri && !(ch == '-' || ch == '.' || ch == '_' || ch == '~' || ch == ',' ||
                     (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z'))) {
            char hex[4];
            snprintf(hex, sizeof hex, "%%%02X", ch);
            rc = pgw_buf_append(b, hex, 3);
        } else {
            if (!uri && (ch == '\\' || ch == '\'')) rc = pgw_buf_append(b, "\\", 1);
            if (rc == 0) rc = pgw_buf_append(b, s, 1);
        }
    }
    if (rc == 0 && !uri) rc = pgw_buf_append(b, "'", 1);
    return rc;
}

/* The entry of the server h names in role, or NULL. */
static const phost_t *entry_of(const pgw_pool_t *p, const pgw_host_t *h, uint8_t role)
{
    const char *name = h->host[0] ? h->host : (h->hostaddr ? h->hostaddr : "");
    for (size_t i = 0; i < p->nhosts; i++) {
        const phost_t *e = &p->hosts[i];
        if (e->role == role && strcmp(e->host, name) == 0 && strtoul(e->port, NULL, 10) == h->port)
            return e;
    }
    return NULL;
}

static int measured_behind(const phost_t *e)
{
    return e && e->lag_checks > 0 && e->behind;
}

/* A server the pool reads from is measured behind. */
static int any_behind(const pgw_pool_t *p)
{
    for (size_t i = 0; i < p->nhosts; i++)
        if (p->hosts[i].role == PGW__ROLE_RO && measured_behind(&p->hosts[i])) return 1;
    return 0;
}

/* Narrowing applies: a server is measured behind, and the primary is known
 * (so that it can be left out: a connection that must find a standby
 * within the limits should not settle on the primary). */
static int narrowing(const pgw_pool_t *p)
{
    int primary = 0;
    for (size_t i = 0; i < p->nhosts; i++)
        primary |= p->hosts[i].role == PGW__ROLE_RW;
    return p->ci_hosts && primary && any_behind(p);
}

/* Host i of the conninfo may be a standby within the limits: neither
 * measured behind nor known as a primary (read-write, or a read-only
 * connection there found it out of recovery). */
static int may_be_within(const pgw_pool_t *p, size_t i, pgw_host_t *h)
{
    if (pgw_conninfo_host(p->ci_hosts, i, h) != 0) return 0;
    const phost_t *ro = entry_of(p, h, PGW__ROLE_RO);
    return !entry_of(p, h, PGW__ROLE_RW) && !measured_behind(ro) &&
           !(ro && ro->lag_checks > 0 && ro->replayed == UINT64_MAX);
}

int pgw__route_standby_left(void *ud)
{
    const pgw_pool_t *p = ud;
    if (!any_behind(p)) return 1; /* nothing held back: any host may serve */
    if (!narrowing(p)) return 0;
    pgw_host_t h;
    for (size_t i = 0, n = pgw_conninfo_nhosts(p->ci_hosts); i < n; i++)
        if (may_be_within(p, i, &h)) return 1;
    return 0;
}

char *pgw__route_ro_conninfo(pgw_pool_t *p)
{
    if (!narrowing(p)) return NULL;
    int uri = pgw__ci_uri_prefix_len(p->ci_role[PGW__ROLE_RO]) != 0;
    pgw_buf_t hosts, addrs, ports, out;
    pgw_buf_init(&hosts, p->alloc);
    pgw_buf_init(&addrs, p->alloc);
    pgw_buf_init(&ports, p->alloc);
    pgw_buf_init(&out, p->alloc);
    size_t kept = 0, n = pgw_conninfo_nhosts(p->ci_hosts);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        pgw_host_t h;
        if (!may_be_within(p, i, &h)) continue;
        const char *sep = kept++ ? "," : "";
        const char *addr = h.hostaddr ? h.hostaddr : "";
        rc = pgw_buf_append(&hosts, sep, strlen(sep));
        if (rc == 0) rc = pgw_buf_append(&hosts, h.host, strlen(h.host));
        if (rc == 0) rc = pgw_buf_append(&addrs, sep, strlen(sep));
        if (rc == 0) rc = pgw_buf_append(&addrs, addr, strlen(addr));
        if (rc == 0) rc = pgw_buf_append(&ports, sep, strlen(sep));
        if (rc == 0) rc = pgw_buf_append(&ports, h.port_text, strlen(h.port_text));
    }
    char *s = NULL;
    if (rc == 0 && kept > 0) {
        const char *base = p->ci_role[PGW__ROLE_RO];
        rc = pgw_buf_append(&out, base, strlen(base));
        if (rc == 0) rc = pgw_buf_append(&hosts, "", 1);
        if (rc == 0) rc = pgw_buf_append(&addrs, "", 1);
        if (rc == 0) rc = pgw_buf_append(&ports, "", 1);
        if (rc == 0) rc = append_param(&out, uri, "host", (const char *)hosts.data);
        if (rc == 0) rc = append_param(&out, uri, "hostaddr", (const char *)addrs.data);
        if (rc == 0) rc = append_param(&out, uri, "port", (const char *)ports.data);
        if (rc == 0) rc = pgw_buf_append(&out, "", 1);
        if (rc == 0) s = pgw__strdup(p->alloc, (const char *)out.data);
    }
    pgw_buf_free(&hosts);
    pgw_buf_free(&addrs);
    pgw_buf_free(&ports);
    pgw_buf_free(&out);
    return s;
}

uint8_t pgw__route_role_of_flags(unsigned flags)
{
    return (flags & PGW_POOL_READ_ONLY) ? PGW__ROLE_RO : PGW__ROLE_RW;
}

uint32_t pgw__route_of(const pgw_request_t *req)
{
    return req->size >= offsetof(pgw_request_t, route) + sizeof req->route ? req->route : 0;
}

pconn_t *pgw__route_pick_ryw(pgw_pool_t *p, int fail, uint64_t *wait_lsn, int *err)
{
    *wait_lsn = 0;
    if (p->closing) {
        *err = PGW_ECLOSED;
        return NULL;
    }
    /* A position still to come, or lost: no standby is known to have it. */
    uint64_t lsn = p->ryw_pending || p->ryw_blind ? UINT64_MAX : p->ryw_lsn;
    int wait = 0;
    pgw__member_t *m = pgw__core_pick_replayed(&p->core, pgw__pool_now_us(), lsn, fail, &wait, err);
    if (m && wait) *wait_lsn = lsn;
    return m ? m->h : NULL;
}

pconn_t *pgw__route_pick(pgw_pool_t *p, uint32_t route, int *err)
{
    if (p->closing) {
        *err = PGW_ECLOSED;
        return NULL;
    }
    int role = route == PGW_ROUTE_READ_ONLY ? PGW__ROLE_RO : PGW__ROLE_RW;
    pgw__member_t *m = pgw__core_pick(&p->core, pgw__pool_now_us(), role, err);
    return m ? m->h : NULL;
}
