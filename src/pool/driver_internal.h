/*
 * The pool on a libuv loop (pool.h): the core's decisions (core.c)
 * carried out over pgw_conn_t. Each member is a pconn (its connection);
 * one-shot requests are wrapped so that their completion is counted
 * against their connection and a connection's death is reported as
 * PGW_ERETRY; checkouts are waiters of the core, answered from the loop.
 *
 * A connection's death reaches the pool first through the completions of
 * its requests (the session fails them before the connection reports
 * on_lost; a FATAL error completes the request it interrupted before
 * that): the wrapper takes a dead connection out of the core before the
 * caller's callback runs, so that what the callback resubmits goes to
 * another connection. The way it died (and a refused connect) tells the
 * core which server is going down.
 *
 * One job a file:
 *   pool.c      the pool's life: new, close, free, the core's timer
 *   conns.c     its connections: open, close, liveness checks, and what a
 *               completion or a loss says of a connection and its server
 *   hosts.c     the hosts and servers connections are up on: per-host
 *               totals, connects a server refused
 *   route.c     where work goes: each role's conninfo, the connection a
 *               one-shot request is sent on
 *   submit.c    one-shot requests and batches
 *   checkout.c  the waiter queue: acquire, transactions, release
 *   stats.c     the counters read by the caller
 *
 * This header includes uv.h: a file including it defines _DEFAULT_SOURCE
 * first (uv.h needs POSIX types under -std=c11). The core's own header
 * (pool_internal.h) stays free of it, as the core does no I/O.
 */
#ifndef PGW_POOL_DRIVER_INTERNAL_H
#define PGW_POOL_DRIVER_INTERNAL_H

#include "pgwire/pool.h"
#include "pool/pool_internal.h"
#include "util/internal.h"

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define PCONN_MAGIC 0x706f6f6cu

typedef struct pconn pconn_t;
typedef struct pacq pacq_t; /* a checkout waiter (checkout.c) */

struct pconn {
    uint32_t magic;
    pgw_pool_t *p;
    pgw_conn_t *conn;
    pgw__member_t *m; /* NULL once the core dropped it */
    pconn_t *next, *prev;
    uint8_t was_ready;
    uint8_t out;          /* checked out */
    uint8_t closing;      /* pgw_conn_close called */
    int32_t host;         /* index in p->hosts once up; -1 before (or no memory) */
    int *settled;         /* released: set to 1 once it is back or closed */
    uint32_t early;       /* requests sent before it was up, still pending */
    size_t attempts_seen; /* connect attempts already looked at for refusals */
    uint8_t hot_standby;  /* the server's in_hot_standby, as last reported */
    /* The server reports in_hot_standby (PostgreSQL 14+); else the role
     * checks of lag.c watch its read-only connections for a promotion. */
    uint8_t reports_hot_standby;
    uint8_t lag_probing; /* a lag measure (lag.c) runs on it */
};

/* A server connections were made to, as the connect attempts name it
 * (pgw_conn_attempt_t host and port): the core knows it by its index + 1. */
typedef struct pserver {
    char host[256];
    uint16_t port;
} pserver_t;

/* Per-server totals (pgw_pool_hosts); live counts are taken from the
 * connections when asked. */
typedef struct phost {
    char host[256];
    char port[16];
    uint8_t role;
    uint64_t opened, lost, acquires, submitted, completed, retried;
    uint64_t promoted; /* connections moved here when their server was promoted */
    /* Standby lag (lag.c): the last measure (-1: unknown), how many were
     * taken, and whether read-only one-shot work is held off the server. */
    int64_t lag_bytes, lag_ms;
    uint64_t lag_checks;
    uint8_t behind;
    uint64_t replayed; /* the last measured replay position (UINT64_MAX: a primary) */
} phost_t;

struct pgw_pool {
    uv_loop_t *loop;
    const pgw_allocator_t *alloc;
    pgw_pool_config_t cfg; /* the caller's, copied */
    char *conninfo;
    char *ci_role[PGW__NROLES];
    /* With standby lag limits: the conninfo's hosts, parsed once, that a
     * read-only connection may be narrowed to (route.c); else NULL. */
    struct pgw_conninfo *ci_hosts;
    char *reset_sql;
    pgw__core_t core;
    uv_timer_t timer; /* the core's tick */
    uv_timer_t defer; /* acquire callbacks, from the loop */
    pacq_t *defer_head, *defer_tail;
    pconn_t *pconns; /* every connection not yet closed (circular) */
    size_t nconns;   /* pconns not yet freed */
    phost_t *hosts;
    size_t nhosts, caphosts;
    pserver_t *servers;
    size_t nservers, capservers;
    /* Standby lag (lag.c): the next round, the primary's last WAL
     * position, and whether a measure of it runs. */
    uint64_t lag_next_us;
    int64_t primary_lsn; /* -1: unknown */
    uint8_t primary_probing;
    /* Read your writes (lag.c): the pool's commit LSN, the position
     * queries pending, and a lost one (blind until a query sent at or
     * after seq blind_from answers). */
    uint64_t ryw_lsn;
    uint32_t ryw_pending;
    uint64_t ryw_seq, ryw_blind_from;
    uint8_t ryw_blind;
    int closing;
    int handles_open;
    uint64_t retried, submitted;
};

static inline uint64_t pgw__pool_now_us(void)
{
    return uv_hrtime() / 1000;
}

/* pool.c */
/* Run the core's timers now and arm ours for the next. */
void pgw__pool_kick(pgw_pool_t *p);
/* Free p once it is closing and nothing of it is left in flight. */
void pgw__pool_maybe_free(pgw_pool_t *p);

/* conns.c: the core's open, close and check operations. */
int pgw__pool_open_member(void *ud, pgw__member_t *m);
void pgw__pool_close_member(void *ud, pgw__member_t *m, int reason);
void pgw__pool_check_member(void *ud, pgw__member_t *m);
/* pc, a read-only connection on a standby, is on a promoted server now:
 * it serves read-write work from here on, on the same backend. */
void pgw__pconn_promoted(pconn_t *pc);
/* Close pc's connection (once); pc stays until its close callback. */
void pgw__pconn_close(pconn_t *pc);
/* pc leaves the pool for good (out of the core, not checked out): closed. */
void pgw__pconn_drop(pconn_t *pc);
/* A request of pc completed (status, res) and its caller's callback is
 * about to run: a connection that is gone leaves the rotation first. */
void pgw__pconn_before_callback(pconn_t *pc, int status, const pgw_result_t *res);

/* hosts.c */
/* pc's host entry (NULL before it is up, or without memory). */
phost_t *pgw__host_of(const pconn_t *pc);
/* pc's connection is up: its host entry (requests sent before counted
 * there) and the server it is on (pc->m->server). */
void pgw__hosts_up(pconn_t *pc);
/* The servers that refused pc's connect attempts since last looked at are
 * going down (an attempt still in progress is looked at next time). */
void pgw__hosts_note_refusals(pconn_t *pc);
/* A one-shot request (or batch) was sent on pc / completed with status. */
void pgw__host_sent(pconn_t *pc);
void pgw__host_done(pconn_t *pc, int status);
/* pc now serves role (its server was promoted): its entry becomes that
 * role's, its requests in flight moving with it. */
void pgw__host_reclassify(pconn_t *pc, uint8_t role);

/* route.c */
/* p->ci_role: the conninfo each role connects with. 0 or PGW_ENOMEM. */
int pgw__route_conninfo(pgw_pool_t *p);
/* With standby lag limits, while a server is measured behind them: the
 * read-only conninfo with its host list narrowed to the hosts that may be
 * a standby within them (neither measured behind nor known as a primary;
 * host, hostaddr and port lists appended: a later keyword replaces an
 * earlier one), for a read-only connection that must find such a standby.
 * NULL when nothing is held back, when no host is left, or on failure:
 * the role's own conninfo applies. The caller frees it. */
char *pgw__route_ro_conninfo(pgw_pool_t *p);
/* Whether the narrowed list above has a host (a standby within the limits
 * may yet be found): the core's standby_left. */
int pgw__route_standby_left(void *ud);
/* The role of a checkout's flags (PGW_POOL_READ_ONLY or 0). */
uint8_t pgw__route_role_of_flags(unsigned flags);
/* The route a descriptor asks (0 for one whose caller's header predates
 * the field). */
uint32_t pgw__route_of(const pgw_request_t *req);
/* The connection to send a one-shot request of route on; NULL with *err. */
pconn_t *pgw__route_pick(pgw_pool_t *p, uint32_t route, int *err);

/* lag.c (pool.h, STANDBY LAG) */
/* Start a round of measures when one is due; returns when the next is due
 * (PGW__NEVER: no limits set). */
uint64_t pgw__lag_tick(pgw_pool_t *p, uint64_t now);
/* pc's read-only connection is up: held back unless its server's last
 * measure was within the limits, and measured at the next tick. */
void pgw__lag_member_up(pconn_t *pc);
/* Whether the pool measures its standbys: lag limits, read your writes,
 * or, when it routes, a read-only connection up on a server that does not
 * report in_hot_standby (its role is checked by the same query). */
int pgw__lag_measuring(const pgw_pool_t *p);
/* A read-write one-shot request or batch was sent on pc: with read your
 * writes, the commit position query goes right behind it. */
void pgw__ryw_after_write(pconn_t *pc);
/* The commit position query behind a COMMIT on a checked-out connection:
 * cb(ud) once it answered. 0, or PGW_EINVAL (not tracking) / PGW_ENOMEM /
 * the submit's error, cb then not called. */
int pgw__ryw_after_commit(pgw_pool_t *p, pgw_conn_t *conn, void (*cb)(void *), void *ud);
/* The connection for a read-your-writes request when no standby is known
 * to have replayed the pool's writes does as fail says (ryw_fail, or
 * PGW__RYW_PRIMARY for a request that cannot wait); NULL with *err.
 * *wait_lsn is 0, or the pool's commit LSN when the connection is a
 * standby's not known to have replayed it (PGW__RYW_WAIT): the request
 * must wait there for it first (submit.c). */
pconn_t *pgw__route_pick_ryw(pgw_pool_t *p, int fail, uint64_t *wait_lsn, int *err);

/* checkout.c: the core's grant and fail operations. */
void pgw__pool_grant(void *ud, pgw__waiter_t *w, pgw__member_t *m);
void pgw__pool_fail_waiter(void *ud, pgw__waiter_t *w, int err);

#endif /* PGW_POOL_DRIVER_INTERNAL_H */
