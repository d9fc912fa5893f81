/*
 * The pool's sans-IO core: which connection serves what, when one is
 * opened, closed, checked or handed to a waiter. It does no I/O and reads
 * no clock: the driver (driver_internal.h over pgw_conn_t, or a test over
 * scripted members) passes the time in microseconds and performs what the core
 * decides through a small table of operations.
 *
 * Members move through these states:
 *
 *   OPENING --opened ok--> READY <--release clean / cleaned ok-- CLEANING
 *      |                   |  ^ \                                   ^
 *      | opened failed     |  |  grant (liveness ok)                |
 *      v                   |  |   \                                 |
 *   (removed)       check  v  |    OUT --release dirty (rollback)---+
 *                       CHECKING ----checked ok (to a waiter)--> OUT
 *
 * READY members (and OPENING ones, whose requests wait in their session
 * until the connection is up) take one-shot requests, least in flight
 * first; a member is handed to a checkout waiter only once nothing is in
 * flight on it. A removed member (lost, failed, closed) is freed by the
 * core at once: the driver drops its pointer to it in the same call, so a
 * driver that reports a loss before the requests' callbacks run has the
 * member out of rotation by the time they run.
 *
 * A server that is going down (pgw__core_server_down) takes no new work
 * until a connection to it proves healthy: its members still up take
 * nothing until they have answered a check sent after the event (recheck);
 * after a loss, members still opening (their server unknown) take nothing
 * more until they are up and checked (hold, recheck); members opened
 * afterwards are new connections and serve at once; once a connection
 * there proves healthy, those opening are released. After a failed open,
 * members still opening take no one-shot requests (they are probes of a
 * server that is down) until an open succeeds.
 */
#ifndef PGW_POOL_INTERNAL_H
#define PGW_POOL_INTERNAL_H

#include "pgwire/common.h"
#include "pgwire/session.h"
#include "util/internal.h"

#include <stddef.h>
#include <stdint.h>

#define PGW__NEVER UINT64_MAX

enum pgw__member_state {
    PGW__M_OPENING = 1,
    PGW__M_READY,
    PGW__M_CHECKING, /* a liveness check runs before it is handed out */
    PGW__M_OUT,      /* checked out */
    PGW__M_CLEANING  /* released dirty: rollback / reset running */
};

/* Roles of the members when the pool routes (pgw__core_cfg.route): the
 * primary (read-write) and the standbys (read-only work). */
enum { PGW__ROLE_RW = 0, PGW__ROLE_RO = 1, PGW__NROLES = 2 };

typedef struct pgw__member {
    struct pgw__member *next, *prev;
    void *h;           /* the driver's handle */
    uint64_t id;       /* 1, 2, ... in the order opened */
    uint8_t state;     /* enum pgw__member_state */
    uint8_t role;      /* PGW__ROLE_* */
    uint8_t retire;    /* lifetime over: take nothing new, close once free */
    uint8_t drain;     /* reserved for a waiter: no new one-shot requests */
    uint8_t hold;      /* opening: takes no one-shot requests until it is up */
    uint8_t between;   /* opening, between two connect attempts: refuses requests */
    uint8_t recheck;   /* must answer a check before it takes work again */
    uint8_t standby;   /* its server was a hot standby at connect (the driver's word) */
    uint8_t behind;    /* standby_lag: its server is not known within the limits */
    uint8_t measured;  /* standby_lag: its server's lag was measured at least once */
    uint64_t replayed; /* its server's last measured replay position (UINT64_MAX: a primary) */
    uint32_t server;   /* the driver's id of the server it is up on (0: unknown) */
    uint32_t inflight;
    uint64_t opened_us;
    uint64_t idle_since_us; /* last time it became free */
    uint64_t expires_us;    /* PGW__NEVER: no lifetime */
} pgw__member_t;

typedef struct pgw__waiter {
    struct pgw__waiter *next, *prev;
    uint64_t since_us;
    uint64_t deadline_us; /* PGW__NEVER: none */
    uint8_t role;
    uint8_t queued;
    void *ud; /* the driver's */
} pgw__waiter_t;

/* What to do with a connection released by its holder. */
enum pgw__release_action {
    PGW__REL_KEEP = 0, /* clean: back to the pool */
    PGW__REL_ROLLBACK, /* a transaction open or failed: ROLLBACK first */
    PGW__REL_RESET,    /* clean, but the reset statement is configured */
    PGW__REL_CLOSE     /* something still runs (COPY, a request) or an open
                          portal group: never handed out again */
};

/* Why the core closes a member (ops.close). */
enum pgw__close_reason {
    PGW__CLOSE_IDLE = 1, /* idle past idle_timeout above min */
    PGW__CLOSE_LIFETIME, /* max lifetime reached */
    PGW__CLOSE_DIRTY,    /* released in a state that cannot be cleaned */
    PGW__CLOSE_FAILED,   /* cleaning or liveness check failed */
    PGW__CLOSE_SHUTDOWN  /* the pool closes */
};

typedef struct pgw__core_ops {
    /* Start opening m (role m->role): set m->h. Return 0, or a negative
     * code (the member is then removed, as a failed open). */
    int (*open)(void *ud, pgw__member_t *m);
    /* Close m's connection (reason: enum pgw__close_reason). m is freed
     * right after this returns. */
    void (*close)(void *ud, pgw__member_t *m, int reason);
    /* Run a liveness check on m; answer with pgw__core_checked. */
    void (*check)(void *ud, pgw__member_t *m);
    /* Hand m (state OUT) to waiter w, which leaves the queue. */
    void (*grant)(void *ud, pgw__waiter_t *w, pgw__member_t *m);
    /* Waiter w (out of the queue) failed with err (PGW_EPOOLTIMEOUT, or
     * the last connect failure when no connection could be opened). */
    void (*fail)(void *ud, pgw__waiter_t *w, int err);
    /* With standby_lag: whether a read-only member opened now might reach
     * a standby not known to be behind (or a server not yet seen). */
    int (*standby_left)(void *ud);
} pgw__core_ops_t;

typedef struct pgw__core_cfg {
    uint32_t min_size, max_size;
    uint32_t max_connecting;     /* opens at once */
    uint32_t pipeline_target;    /* in flight per member before another opens */
    uint64_t backoff_min_us;     /* after a failed open */
    uint64_t backoff_max_us;     /* doubling up to this */
    uint64_t max_lifetime_us;    /* 0: none */
    uint64_t lifetime_jitter_us; /* up to this much earlier */
    uint64_t idle_timeout_us;    /* 0: none */
    uint64_t liveness_after_us;  /* 0: never checked */
    int route;                   /* members have roles (RW, RO) */
    int standby_lag;             /* RO one-shot work only to members not behind */
    int standby_lag_fail;        /* none: refuse (PGW_ETARGET), not the primary */
    int reset_on_release;        /* RESET for clean releases */
    uint64_t seed;               /* jitter */
} pgw__core_cfg_t;

typedef struct pgw__core_stats {
    uint64_t acquires, acquire_wait_us, acquire_wait_max_us, timeouts;
    uint64_t opened, closed, open_failures, lost;
} pgw__core_stats_t;

typedef struct pgw__core {
    pgw__core_cfg_t cfg;
    const pgw__core_ops_t *ops;
    void *ud;
    const pgw_allocator_t *alloc;
    pgw__member_t *members; /* circular list head (NULL: none) */
    pgw__waiter_t *waiters; /* FIFO, circular (NULL: none) */
    uint32_t size;          /* members, opening ones included */
    uint32_t opening;
    uint32_t nwaiters;
    uint64_t next_id;
    pgw__backoff_t backoff; /* opens after a failed one (util/internal.h) */
    uint64_t retry_at_us;   /* no open before this */
    int last_open_error;    /* 0 once an open succeeded */
    /* The server going down (0: none) and the id of the last member
     * opened before its first sign: the members opened since are new
     * backends, which later signs of the same episode leave alone. It ends
     * when a member there passes a check or a newer one comes up there:
     * the members still opening are then held no longer. */
    uint32_t down_server;
    uint64_t down_since_id;
    uint64_t rng;
    /* A read-only member was reclassified read-write (its server was
     * promoted) and no read-only member came up on a standby since:
     * read-only work goes to members up (of either role) rather than to
     * members being opened. */
    int ro_after_promotion;
    /* The member whose request completed last (its id; 0: none, or the
     * next request was sent since): least_in_flight counts that request
     * as still in flight there (pgw__core_done). */
    uint64_t returning_id;
    int closing;
    int in_serve;
    pgw__core_stats_t st;
} pgw__core_t;

void pgw__core_init(pgw__core_t *c, const pgw__core_cfg_t *cfg, const pgw__core_ops_t *ops,
                    void *ud, const pgw_allocator_t *alloc);
/* Close every member (ops.close, reason SHUTDOWN) and fail every waiter
 * with PGW_ECLOSED. */
void pgw__core_shutdown(pgw__core_t *c);

/* Timers: time waiters out, close idle and expired members, open members
 * up to min (rate limited). Returns when to call again (PGW__NEVER:
 * nothing scheduled). */
uint64_t pgw__core_tick(pgw__core_t *c, uint64_t now);

/* The member to take a one-shot request of role (least in flight; a new
 * one opened when every member has pipeline_target in flight and room is
 * left). NULL when there is none and none may be opened now, or when the
 * only ones are probes opened after a failed open: *err then says why
 * (the last open failure, or PGW_ENOMEM). The caller counts the request
 * with pgw__core_sent once it is accepted. */
pgw__member_t *pgw__core_pick(pgw__core_t *c, uint64_t now, int role, int *err);
void pgw__core_sent(pgw__core_t *c, pgw__member_t *m);
/* What a read-your-writes request does when no standby is known to have
 * replayed its position (pgw_pool_config_t.ryw_fail). */
enum { PGW__RYW_PRIMARY = 0, PGW__RYW_REFUSE = 1, PGW__RYW_WAIT = 2 };
/* The member for a read-your-writes request: the read-only member up
 * (within the lag limits) whose server has replayed lsn, least in flight.
 * With none: under PGW__RYW_WAIT and lsn known (not UINT64_MAX), the
 * read-only member up whose server has replayed the most (least in flight
 * among equals), with *wait set (the request must wait there for lsn);
 * else the read-write pick, or NULL with PGW_ETARGET (PGW__RYW_REFUSE). A
 * read-only member is opened when there is none. */
pgw__member_t *pgw__core_pick_replayed(pgw__core_t *c, uint64_t now, uint64_t lsn, int fail,
                                       int *wait, int *err);
/* A one-shot request of m completed. */
void pgw__core_done(pgw__core_t *c, pgw__member_t *m, uint64_t now);

/* Queue w (its role and deadline set by the caller) and serve the queue:
 * ops.grant may run inside this call. */
void pgw__core_acquire(pgw__core_t *c, pgw__waiter_t *w, uint64_t now);
/* Take w out of the queue without a callback (its owner gave up). */
void pgw__core_forget_waiter(pgw__core_t *c, pgw__waiter_t *w);

/* What a release needs, from the connection's state: txn ('I', 'T', 'E',
 * 0 unknown), whether requests are still pending, whether a portal group
 * (an open cursor outside a transaction block) is open. */
int pgw__core_release_action(const pgw__core_t *c, char txn, int pending, int group_open);
/* The holder released m (state OUT). action KEEP: back to READY now;
 * ROLLBACK / RESET: state CLEANING, the driver cleans it and calls
 * pgw__core_cleaned; CLOSE: closed (ops.close) and freed. */
void pgw__core_release(pgw__core_t *c, pgw__member_t *m, int action, uint64_t now);
void pgw__core_cleaned(pgw__core_t *c, pgw__member_t *m, int ok, uint64_t now);
/* The liveness check of m finished. */
void pgw__core_checked(pgw__core_t *c, pgw__member_t *m, int ok, uint64_t now);

/* The open of m finished: status 0 (ready) or the connect's error. A
 * failed member is freed. */
void pgw__core_opened(pgw__core_t *c, pgw__member_t *m, int status, uint64_t now);
/* m, still opening, left a server (one of the wrong kind for
 * target_session_attrs, or one refusing) and fails the requests it
 * carried: until the driver says it is over (between 0), m is between two
 * attempts and refuses requests, so none is picked for it (a request
 * resubmitted from those requests' callbacks goes to another member). */
void pgw__core_between_attempts(pgw__core_t *c, pgw__member_t *m, int between);
/* m's connection broke (the driver closes it): m is freed. */
void pgw__core_lost(pgw__core_t *c, pgw__member_t *m, uint64_t now);
/* A sign that server (a driver's id, not 0) is going down: no member up
 * on it takes work again before it answers a check sent from now on
 * (ops.check, at once for a free member, else once it is free). With
 * hold_opening (a loss: the server may have let the members still opening
 * in just before it began to go down), those take no more one-shot
 * requests and are checked once up too; a refused connect needs not (a
 * member reaching that server now is refused as well). A later sign of
 * the same episode (down_server) leaves the members opened since its
 * first sign alone. */
void pgw__core_server_down(pgw__core_t *c, uint32_t server, int hold_opening, uint64_t now);

/* m's server changed kind while m was up (a standby promoted: in_hot_standby
 * turned off): m serves role from now on, without reconnecting, and the
 * waiters of that role are served. Until a read-only member is up on a
 * standby again, read-only one-shot work goes to members up only (pick). */
void pgw__core_reclassify(pgw__core_t *c, pgw__member_t *m, int role, uint64_t now);
/* m's server, which did not say at connect (no in_hot_standby), was found
 * to be a standby: as if it had said so (m->standby). */
void pgw__core_standby_seen(pgw__core_t *c, pgw__member_t *m);

/* Counts by state, for the stats. */
void pgw__core_counts(const pgw__core_t *c, uint32_t *idle, uint32_t *in_use, uint32_t *opening);

/* The pool over pgw_conn_t (driver_internal.h), for the blocking pool
 * (blocking.c) that drives it: submit.c, checkout.c, stats.c. */
struct pgw_pool;
struct pgw_conn;
/* pgw_pool_submit, with hook (session.h, "Driver completions") hearing the
 * completion after the pool, with the status the pool gives it
 * (PGW_ERETRY...). pool: a pgw_pool_t (void *: the blocking client's
 * submit function type). */
int pgw__pool_submit_driven(void *pool, const pgw_request_t *req, pgw_driver_hook hook, void *ctx);
/* pgw_pool_release; *settled (may be NULL) becomes 1 once the connection
 * is back in the pool (cleaned) or closed. */
int pgw__pool_release_settled(struct pgw_pool *p, struct pgw_conn *conn, int *settled);
/* 1 if a release of a connection in this state (pgw_session_txn_status,
 * requests pending, a portal group open) sends something first (a
 * ROLLBACK, the reset query) and so settles later; 0 if it keeps or
 * closes the connection at once. Reads only the pool's configuration,
 * fixed at pgw_pool_new: callable from any thread. */
int pgw__pool_release_waits(const struct pgw_pool *p, char txn, int pending, int group_open);
/* The last connect's failure, 0 once a connect succeeded. */
int pgw__pool_open_error(const struct pgw_pool *p);

#endif /* PGW_POOL_INTERNAL_H */
