/*
 * Where the pool's work goes (driver_internal.h): the conninfo each role
 * connects with (target_session_attrs when the pool routes), the role a
 * request or a checkout asks, and the connection a one-shot request is
 * sent on (the core's pick: least in flight).
 */
#define _DEFAULT_SOURCE /* uv.h needs POSIX types */
#include "conn/conninfo_internal.h"
#include "pool/driver_internal.h"

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
    return p->ci_role[PGW__ROLE_RW] && p->ci_role[PGW__ROLE_RO] ? 0 : PGW_ENOMEM;
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
