/*
 * The pool's connections (driver_internal.h): opened, closed and checked
 * for the core, and heard through their driver hooks. What a completion
 * or a loss says of a connection (alive, gone, gone with its server
 * going down) is decided here, before the caller's callback runs.
 */
#define _DEFAULT_SOURCE /* uv.h needs POSIX types */
#include "pool/driver_internal.h"

#include <string.h>

/* ------------------------------------------------------------ conn list */

static void pconn_link(pgw_pool_t *p, pconn_t *pc)
{
    if (!p->pconns) {
        pc->next = pc->prev = pc;
        p->pconns = pc;
    } else {
        pc->prev = p->pconns->prev;
        pc->next = p->pconns;
        pc->prev->next = pc;
        p->pconns->prev = pc;
    }
    p->nconns++;
}

static void pconn_unlink(pgw_pool_t *p, pconn_t *pc)
{
    if (pc->next == pc) {
        p->pconns = NULL;
    } else {
        pc->prev->next = pc->next;
        pc->next->prev = pc->prev;
        if (p->pconns == pc) p->pconns = pc->next;
    }
    pc->next = pc->prev = NULL;
}

/* ------------------------------------------------------------------ close */

static void on_conn_closed(pgw_conn_t *conn, void *ud)
{
    pconn_t *pc = ud;
    pgw_pool_t *p = pc->p;
    pc->magic = 0;
    pgw__free(p->alloc, pc);
    p->nconns--;
    pgw__pool_maybe_free(p);
}

void pgw__pconn_close(pconn_t *pc)
{
    if (pc->closing) return;
    pc->closing = 1;
    pconn_unlink(pc->p, pc);
    pgw_conn_close(pc->conn, on_conn_closed, pc);
}

void pgw__pconn_drop(pconn_t *pc)
{
    pc->m = NULL;
    pc->out = 0;
    pgw__pconn_close(pc);
}

void pgw__pool_close_member(void *ud, pgw__member_t *m, int reason)
{
    pconn_t *pc = m->h;
    if (pc) pgw__pconn_drop(pc);
}

/* ----------------------------------------------------------- what it says */

/* pc's connection is gone: out of the core (if still in it). down: the
 * way it went says its server is going down. */
static void pconn_lost(pconn_t *pc, int down)
{
    pgw_pool_t *p = pc->p;
    pgw__member_t *m = pc->m;
    if (!m) return;
    uint32_t server = m->server;
    phost_t *h = pgw__host_of(pc);
    if (h) h->lost++;
    pc->m = NULL;
    uint64_t now = pgw__pool_now_us();
    pgw__core_lost(&p->core, m, now);
    if (down) pgw__core_server_down(&p->core, server, 1, now);
    pgw__pool_kick(p);
}

/* The server closes the connection after a FATAL error (1), and every
 * connection after a PANIC (2); 0 for any other error. */
static int fatal_level(const pgw_error_t *e)
{
    const char *sev = e->severity_nonlocal ? e->severity_nonlocal : e->severity;
    if (!sev || !pgw_severity_ends_connection(sev, strlen(sev))) return 0;
    return strcmp(sev, "PANIC") == 0 ? 2 : 1;
}

enum { CONN_ALIVE = 0, CONN_GONE, CONN_GONE_SERVER_DOWN };

/* What a completion (status, res) on pc says of its connection: alive;
 * gone (the session broke, or the server sent a FATAL error); gone in a
 * way that says the server is going down (a shutdown error, a PANIC, or
 * the connection closed under the request without a word). */
static int conn_fate(pconn_t *pc, int status, const pgw_result_t *res)
{
    const pgw_error_t *e = status == PGW_ESERVER && res ? pgw_result_error(res) : NULL;
    int fatal = e ? fatal_level(e) : 0;
    if (fatal)
        return fatal == 2 || pgw_sqlstate_server_going_away(e->sqlstate) ? CONN_GONE_SERVER_DOWN
                                                                         : CONN_GONE;
    pgw_session_t *s = pgw_conn_session(pc->conn);
    if (s && pgw_session_state(s) != PGW_SESSION_BROKEN) return CONN_ALIVE;
    return status == PGW_ECONNLOST ? CONN_GONE_SERVER_DOWN : CONN_GONE;
}

/* A connection that is gone leaves the rotation first, so that what the
 * callback resubmits goes elsewhere (never to the dying connection, and
 * never refused for it). A connection still opening that fails what it
 * carried has left a server and refuses requests until its next attempt
 * starts, right after these callbacks: it takes none meanwhile (its
 * connection's driver hears the next attempt begin: on_attempt). */
void pgw__pconn_before_callback(pconn_t *pc, int status, const pgw_result_t *res)
{
    pgw__member_t *m = pc->m;
    if (!m) return;
    if (m->state == PGW__M_OPENING) {
        if (pgw_conn_session(pc->conn)) return;
        pgw__core_between_attempts(&pc->p->core, m, 1);
        pgw__hosts_note_refusals(pc);
        return;
    }
    int fate = conn_fate(pc, status, res);
    if (fate != CONN_ALIVE) pconn_lost(pc, fate == CONN_GONE_SERVER_DOWN);
}

/* ------------------------------------------------------ connection hooks */

/* The connection's next attempt has its session: it takes requests again. */
static void on_attempt(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    pconn_t *pc = ud;
    if (pc->m) pgw__core_between_attempts(&pc->p->core, pc->m, 0);
}

static int str_is(pgw_str_t s, const char *lit)
{
    size_t n = strlen(lit);
    return s.len == n && memcmp(s.p, lit, n) == 0;
}

void pgw__pconn_promoted(pconn_t *pc)
{
    pgw__member_t *m = pc->m;
    if (!m || m->state == PGW__M_OPENING || !pc->p->cfg.route || m->role != PGW__ROLE_RO) return;
    pgw__host_reclassify(pc, PGW__ROLE_RW);
    pgw__core_reclassify(&pc->p->core, m, PGW__ROLE_RW, pgw__pool_now_us());
    pgw__pool_kick(pc->p);
}

/* The server reported a parameter. in_hot_standby (PostgreSQL 14+) turning
 * off on a connection that is up means its standby was promoted: when the
 * pool routes, the connection made for read-only work now serves
 * read-write work, without reconnecting (the server reports the change at
 * the end of the next command run there). A server that reports it at
 * all needs no role check (lag.c). */
static void on_parameter(pgw_conn_t *conn, pgw_str_t name, pgw_str_t value, void *ud)
{
    (void)conn;
    pconn_t *pc = ud;
    if (!str_is(name, "in_hot_standby")) return;
    pc->reports_hot_standby = 1;
    uint8_t was = pc->hot_standby;
    pc->hot_standby = (uint8_t)str_is(value, "on");
    if (was && !pc->hot_standby) pgw__pconn_promoted(pc);
}

/* The established connection broke. When requests were in flight their
 * completions have already taken it out (pgw__pconn_before_callback). */
static void on_lost(pgw_conn_t *conn, int err, void *ud)
{
    pconn_t *pc = ud;
    pconn_lost(pc, 0);
    /* A checked-out connection stays until its holder releases it. */
    if (!pc->out) pgw__pconn_close(pc);
}

static void on_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    pconn_t *pc = ud;
    pgw_pool_t *p = pc->p;
    if (!pc->m) return; /* dropped meanwhile (the pool closes) */
    pgw__member_t *m = pc->m;
    if (status == 0) {
        pc->was_ready = 1;
        m->standby = pc->hot_standby;
        pgw__hosts_up(pc);
        pgw__core_opened(&p->core, m, 0, pgw__pool_now_us());
        pgw__hosts_note_refusals(pc); /* hosts tried before this one */
    } else {
        /* Before the requests it carried complete (after this call). */
        pgw__hosts_note_refusals(pc);
        pc->m = NULL;
        pgw__core_opened(&p->core, m, status, pgw__pool_now_us());
        pgw__pconn_close(pc);
    }
    pgw__pool_kick(p);
}

/* ------------------------------------------------------------------- open */

int pgw__pool_open_member(void *ud, pgw__member_t *m)
{
    pgw_pool_t *p = ud;
    pconn_t *pc = pgw__calloc(p->alloc, 1, sizeof *pc);
    if (!pc) return PGW_ENOMEM;
    pc->magic = PCONN_MAGIC;
    pc->p = p;
    pc->m = m;
    pc->host = -1;
    /* The caller's options as they are (its hooks with its ud); the pool
     * hears the connection through a driver of its own. */
    int rc = pgw_conn_new(&pc->conn, p->loop, &p->cfg.conn);
    if (rc < 0) {
        pgw__free(p->alloc, pc);
        return rc;
    }
    const pgw_conn_driver_t driver = {
        .on_lost = on_lost, .on_attempt = on_attempt, .on_parameter = on_parameter, .ud = pc};
    pgw_conn_set_driver(pc->conn, &driver);
    pconn_link(p, pc);
    m->h = pc;
    char *narrowed = m->role == PGW__ROLE_RO ? pgw__route_ro_conninfo(p) : NULL;
    rc = pgw_conn_connect(pc->conn, narrowed ? narrowed : p->ci_role[m->role], on_connected, pc);
    pgw__free(p->alloc, narrowed);
    if (rc < 0) {
        pc->m = NULL;
        m->h = NULL;
        pgw__pconn_close(pc);
        return rc;
    }
    return 0;
}

/* --------------------------------------------------------------- liveness */

static void on_checked(int status, pgw_result_t *res, void *ud)
{
    pconn_t *pc = ud;
    int fate = pc->m ? conn_fate(pc, status, res) : CONN_ALIVE;
    pgw_result_free(res);
    if (!pc->m) return;
    if (fate != CONN_ALIVE) {
        pconn_lost(pc, fate == CONN_GONE_SERVER_DOWN);
        return;
    }
    pgw__core_checked(&pc->p->core, pc->m, status == 0, pgw__pool_now_us());
    pgw__pool_kick(pc->p);
}

void pgw__pool_check_member(void *ud, pgw__member_t *m)
{
    pconn_t *pc = m->h;
    pgw_request_t r = PGW_SIMPLE("SELECT 1", on_checked, pc);
    if (pgw_conn_submit(pc->conn, &r) < 0)
        pgw__core_checked(&pc->p->core, m, 0, pgw__pool_now_us());
}
