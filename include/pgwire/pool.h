/*
 * libpgwire pool: many connections to one database behind one handle, on
 * the caller's libuv loop (pgw_pool_t), and a thread-safe blocking driver
 * of it for plain C programs (pgw_client_pool_t, at the end: the same
 * options and rules).
 *
 * THREADS: a pgw_pool_t belongs to one uv loop and its thread, as a
 * pgw_conn_t (conn.h). pgw_client_pool_t may be used from any thread.
 *
 * ONE-SHOT REQUESTS. pgw_pool_submit and pgw_pool_submit_batch take the
 * request descriptors of session.h (the same as pgw_conn_submit) and need
 * no checkout: each goes at once to the pool's connection with the fewest
 * requests in flight, where it is pipelined behind the others (each
 * connection writes once per loop turn), so 1000 concurrent queries on 10
 * connections keep every connection's pipeline full. A connection whose
 * request just completed counts it until the next request is sent, so
 * the next request (often sent by that completion's callback) goes to
 * another connection as busy as it rather than back to it: clients that
 * each keep one request outstanding move between the connections instead
 * of staying each on one for good (and a connection that changed role,
 * see LIVE ROLE CHANGES, gets its new role's work). A connection still
 * connecting takes requests too (they are sent once it is up). When every
 * connection has pipeline_target requests in flight and the pool is below
 * max_size, another connection is opened (within the open rate limit).
 * A batch stays on one connection. A request with a deadline (timeout_ms,
 * or request_timeout_ms of the connection config) is the last one written
 * on its connection until it completes: the requests routed there after
 * it wait in the connection's output, so that its cancel cannot interrupt
 * them (conn.h, DEADLINES). Behind PgBouncer in transaction mode, give the
 * connections no_pipelining (conn.no_pipelining): each connection then
 * writes one sync group at a time, the requests routed to it waiting in
 * its output, since PgBouncer may hand a pipelined group's answer to
 * another of its clients (after a COPY, or an error: pgbouncer issue 759).
 *
 * RETRYABLE FAILURES. A request whose connection died under it (the
 * server closed it: restart, pg_terminate_backend, a crash; the network
 * broke; or the connection it was queued on never came up) completes with
 * PGW_ERETRY, never with the connection's own code: it may or may not have
 * run, and the caller retries when the request is safe to repeat. res
 * holds the server's FATAL error when it sent one (SQLSTATE 57P01, 57P02 or
 * 57P03), else NULL. Every other status is the connection's (conn.h).
 * When a PGW_ERETRY callback runs (and the callback of any other request
 * of a connection that is gone: a FATAL error, a protocol violation), that
 * connection is already out of the pool's rotation, and the other
 * connections to a server going down are too (see SERVER DOWN): a request
 * resubmitted from the callback goes to another connection, or to a new
 * one the pool opens, never to the dying one, and is refused only as any
 * submit is (below), never with PGW_ECLOSED.
 *
 * CHECKOUT. pgw_pool_acquire hands a connection to one caller for work that
 * must stay on one connection (a transaction, session settings, a cursor,
 * COPY). Waiters are served first come, first served; a waiter still
 * waiting at its deadline fails with PGW_EPOOLTIMEOUT ("pool exhausted"),
 * or, when no connection is up and the last connect failed, with that
 * connect's error ("server down"): the two are never confused. A connection
 * is handed out only once nothing is in flight on it; while waiters wait,
 * the busiest-free connections take no new one-shot requests. Release it
 * with pgw_pool_release. pgw_pool_tx_begin / pgw_pool_tx_end make a
 * transaction-scoped checkout one call each.
 *
 * RELEASE NEVER HANDS OUT A DIRTY CONNECTION: released inside a
 * transaction block or a failed one, the connection gets a ROLLBACK before
 * it is used again; released with a request still pending (an unfinished
 * COPY, a query still running) or an open portal group (a cursor opened
 * outside a transaction block), it is closed; a ROLLBACK that fails closes
 * it too. With reset_sql set (e.g. "DISCARD ALL"; off by default, and keep
 * it off behind PgBouncer in transaction mode) a clean connection runs it
 * before it is used again.
 *
 * HEALTH. A connection that breaks is noticed on the event (the first
 * completion of a request that shows it gone, before that request's
 * callback runs, or on_lost of conn.h), dropped and replaced; the pool
 * keeps min_size connections open (opened at pgw_pool_new, lazily: the
 * calls return at once) and opens at most max_connecting at a time, with a
 * backoff after a failed connect (backoff_min_ms doubling up to
 * backoff_max_ms), so a restarting server sees no storm of connects and
 * the pool converges back to min_size once it is up. After a failed
 * connect, connections being opened take no one-shot requests until a
 * connect succeeds: they are probes of a server that is down, and a
 * request that only one of them could take is refused with the failed
 * connect's error (at once, nothing queued) rather than queued on a
 * connect likely to fail too. A connection older than max_lifetime_ms
 * (minus up to lifetime_jitter_ms, drawn per connection so they do not all
 * expire together) is closed once free and replaced; one idle longer than
 * idle_timeout_ms is closed while the pool is above min_size. With
 * liveness_after_ms, a connection idle that long runs a check (SELECT 1)
 * before it is handed to a waiter; one that fails is dropped.
 *
 * SERVER DOWN. A loss that says its server is going down, or a connect
 * refused there, makes the pool stop routing to that server until a
 * connection to it proves healthy. The signs: a request's connection
 * closed under it (EOF or reset, PGW_ECONNLOST: a crash, a kill, an
 * immediate shutdown, the network), or the server's FATAL 57P01
 * (administrator command: pg_ctl stop/restart -m fast, and also
 * pg_terminate_backend, which the server words the same way), 57P02 (crash
 * shutdown), 57P03 or a PANIC; a connect attempt refused (nothing
 * listening, or 57P03 "the database system is shutting down / starting
 * up"). Then every other connection up on that server (same host and port
 * as the connect attempts name them) takes no one-shot request and no
 * checkout until it has answered a check (SELECT 1) sent after the sign:
 * at once if it is free, else once what it runs has completed; one that
 * fails it is dropped (a lost connection). After a loss, the connections
 * still opening at that moment may have been let in just before: they take
 * no more requests (others are opened in their place, within max_size) and
 * are checked once up, unless a connection to that server proves healthy
 * first (a check answered, or a connection opened since the sign comes up
 * there). Connections opened after the sign are new backends: they take
 * requests at once, and later signs of the same episode leave them alone.
 * So after pg_terminate_backend of one connection the others are back in
 * rotation one round trip later; after a shutdown their checks fail with
 * them, and retries never land on them (a retry may still wait on a
 * connection opened after the sign, which fails with PGW_ERETRY if the
 * server refuses it: it never ran; after that failed connect, see HEALTH).
 * A connection that leaves a server while opening (one of the wrong kind
 * for target_session_attrs, or one refusing) fails what it carried with
 * PGW_ERETRY (it never ran) and moves on to the next host; a request
 * resubmitted from those callbacks goes to another connection (or a new
 * one), as the one moving on refuses requests until its next attempt
 * starts.
 *
 * MULTI-HOST. With route set, the connection string's hosts (host=a,b) are
 * used twice: checkouts and one-shot requests go to connections made with
 * target_session_attrs=read-write (the primary); requests and checkouts
 * marked read-only (pgw_request_t.route PGW_ROUTE_READ_ONLY, or
 * PGW_POOL_READ_ONLY for pgw_pool_submit_flags and checkouts) go to
 * connections made with
 * target_session_attrs=prefer-standby (a standby when one is up, else the
 * primary), opened on demand. The connection string may still say
 * load_balance_hosts=random. Without route, every connection uses the
 * connection string as given. A connection still opening may reach a
 * server of the wrong kind first and leave it, failing the requests it
 * carried with PGW_ERETRY (they never ran; see SERVER DOWN), so when
 * routing, one-shot requests go to a connection still opening only when
 * none of their kind is up. The two kinds share max_connecting, but a
 * one-shot request of a kind with no connection being opened may open one
 * past it (after the backoff, within max_size), so the other kind's opens
 * never send read-only work to the primary. The two kinds share max_size:
 * at max_size, a
 * one-shot request that no connection of its kind can take (none up or
 * being opened: all checked out, say), or a checkout of a kind with no
 * connection at all, closes the connection of the other kind idle longest
 * and opens one of its own in its place. Otherwise a checkout waits for
 * its kind's connections; a read-only request with none to take it and
 * none idle to close goes to the read-write connections (the primary).
 * pgw_pool_hosts counts per server. At failover,
 * requests on the old primary's connections complete with PGW_ERETRY; the
 * pool reconnects with its backoff and new read-write work lands on
 * whichever server of the list is read-write (a promoted standby) within
 * about one backoff step of it accepting writes.
 *
 * LIVE ROLE CHANGES. PostgreSQL 14 and later report in_hot_standby to each
 * connection (ParameterStatus) and report its change from on to off when
 * the standby is promoted (pg_promote(), pg_ctl promote), at the end of
 * the next command each connection runs there. With route set, a
 * connection made for read-only work that hears it is reclassified at
 * that moment: it is a read-write connection from then on (checkouts and
 * one-shot requests without PGW_POOL_READ_ONLY may go to it), on the same
 * backend (no reconnect), and its pgw_pool_hosts entry becomes the
 * read-write one of its server (counted in promoted there; its requests
 * in flight move with it). Requests already sent on it are not moved or
 * failed: read-only work may run on either kind of server. Read-only
 * work then goes to the read-only connections up (other standbys, or a
 * primary) and, with none, to the read-write connections up (a primary
 * may serve it, as prefer-standby allows), never to a connection still
 * opening, which might leave the first server it reaches and fail what it
 * carried, until a read-only connection is up on a standby again; one
 * read-only connection at a time is opened meanwhile
 * (target_session_attrs=prefer-standby) to find the standbys left. So the
 * promotion costs no request a PGW_ERETRY. A read-write connection never needs the reverse (a
 * server becomes a standby only by restarting, which ends its connections). An idle connection
 * hears the change only once it runs something.
 *
 * Servers before 14 do not report in_hot_standby. With route set, the
 * pool checks such a server itself while it has read-only connections up
 * there: every lag_check_ms (default 1000) one query on one of them,
 * pipelined behind what it runs (the STANDBY LAG measure, which says
 * pg_is_in_recovery() too), tells whether the server is a standby. The
 * first answer after a connection is up says what it was made on; once a
 * later one finds a standby out of recovery, every read-only connection
 * made there on the standby is reclassified as above, on the same
 * backends. So the pool sees such a promotion up to lag_check_ms late,
 * plus the time the checked connection takes to run what was sent before
 * the check; meanwhile the connections serve read-only work, which either
 * kind of server may run.
 *
 * STANDBY LAG. With route set and max_standby_lag_bytes or
 * max_standby_lag_ms set, every lag_check_ms the pool measures each
 * standby it has read-only connections to, on those connections (one
 * query on one connection per server, pipelined behind what it runs; none
 * on a checked-out connection): its replay position
 * (pg_last_wal_replay_lsn()) against the primary's insert position
 * (pg_current_wal_insert_lsn(), every commit made there, written out or
 * not; a position just past a page header counts as the page boundary
 * before it, where the last record ended and a standby's replay stops; on
 * a read-write connection of the pool, measured in the same round or the
 * one before), and its replay time lag (now() minus
 * pg_last_xact_replay_timestamp(), unknown when it has replayed no commit
 * since it started; 0 when it has replayed all it has received and that
 * reaches the primary's position). A standby is within the limits when both measures are
 * known and at most the limits; a server that is not in recovery (a
 * prefer-standby connection that landed on the primary) is within them.
 * One-shot read-only requests go only to read-only connections of a
 * server measured within the limits at its last measure; while none is,
 * they go to the primary's connections (standby_lag_fail 0) or are
 * refused with PGW_ETARGET (standby_lag_fail 1). Meanwhile the pool opens
 * read-only connections one at a time (the next once the last is up and
 * measured), each on the connection string's hosts less the servers
 * measured behind (prefer-standby over the rest, in their order), so a
 * standby within the limits is found even when the first one listed is
 * behind; with every standby behind, that connection lands on the primary,
 * which is within them. A new read-only connection's server is measured
 * as soon as it is up; until then it takes no read-only request. So a request never reaches a
 * standby whose last measure was behind or that was never measured; a standby that falls behind
 * between two measures is still used until the next one (up to lag_check_ms late). The byte measure
 * needs a read-write connection of the pool up (min_size 1 or more keeps one): without one, a byte
 * limit holds every standby back. Read-only checkouts (pgw_pool_acquire
 * with PGW_POOL_READ_ONLY) are not held back by these limits. The
 * last measures are in pgw_pool_hosts (lag_bytes, lag_ms, behind).
 *
 * READ YOUR WRITES. With route and read_your_writes (1 or 2) set, the
 * pool learns a WAL position at or after each commit made through it:
 * right behind every read-write one-shot request and batch, and behind
 * the COMMIT of pgw_pool_tx_end, it sends a SELECT of
 * pg_current_wal_insert_lsn() (as STANDBY LAG reads it) on the same
 * connection, in the same write
 * (no extra round trip), and keeps the highest answer (the pool's commit
 * LSN). A read-your-writes request (every read-only one-shot request with
 * read_your_writes 1; with 2, those submitted with PGW_POOL_READ_ONLY |
 * PGW_POOL_READ_YOUR_WRITES) goes to a standby only when the standby's
 * last measure (see STANDBY LAG: every lag_check_ms, default 1000) showed
 * it had replayed the pool's commit LSN, and while no position query is
 * pending (one whose write completed but whose position is not known
 * yet); otherwise it goes to the primary (ryw_fail 0) or is refused with
 * PGW_ETARGET (ryw_fail 1). So, per pool handle: a read-your-writes
 * request submitted after the callback of a read-write one-shot request
 * or batch, or of pgw_pool_tx_end's COMMIT, of the same pool has fired
 * sees that write (on the primary, or on a standby that has replayed it).
 * A write made on a checked-out connection with its own COMMIT (not
 * pgw_pool_tx_end), a write made elsewhere, or the write's effects before
 * its callback, are not covered unless the caller passes the position in
 * (pgw_pool_note_lsn). Across processes: once pgw_pool_commit_lsn says its
 * value is complete, that value, passed to pgw_pool_note_lsn of another
 * pool over the same servers, makes that pool's read-your-writes requests
 * see those writes. A request right after a write usually goes to the
 * primary (standbys are measured every lag_check_ms); one whose writes are
 * older than the measure interval and the standby's replay lag goes to a
 * standby. Read-only checkouts are not covered.
 *
 * Waiting (ryw_fail 2): a read-your-writes request no standby is known to
 * have replayed for, while the pool's commit LSN is known (no position
 * query pending), goes to the read-only connection up (within the lag
 * limits, when set) whose server's last measure showed the most replayed
 * (among equals, the least in flight), behind a statement sent in the
 * same write and the same sync group. That statement returns on the
 * server once the standby has replayed the commit LSN, or once it is no
 * longer in recovery (promoted meanwhile: it then has every write it will
 * ever have, and a write it had not received by then is not among them),
 * polling every millisecond there. If ryw_wait_ms passes first, the
 * statement fails, the server skips the request (it never runs) and it
 * completes with PGW_ETIMEDOUT; the request's own deadline (timeout_ms)
 * bounds the wait too. If the wait fails otherwise (the standby shutting
 * down, say), the request completes with the wait's status and error
 * result (PGW_ERETRY when it never ran on a server going away). So a
 * waited request answered with 0 saw the pool's writes on a standby, or
 * ran on a standby promoted while it waited. The request waits on a
 * server it holds a connection to (a read-only connection, busy meanwhile
 * for requests behind it). A read-your-writes request that finds no
 * read-only connection up, or comes while a position is pending, goes to
 * the primary as with ryw_fail 0. SIMPLE, FUNCTION_CALL and SYNC requests
 * cannot share a sync group with the wait, and batches
 * (pgw_pool_submit_batch) do not wait either: both go to the primary
 * then, as with ryw_fail 0.
 *
 * LISTEN/NOTIFY. Pooled connections drop notifications: a LISTEN on a
 * one-shot request would be lost with its connection. pgw_pool_listener
 * makes a dedicated listener (listen.h) from the pool's connection string
 * and connection options.
 *
 * STATEMENT CACHE. The pool's conn options (cfg->conn, statement cache
 * fields included) are given to every connection it opens.
 */
#ifndef PGWIRE_POOL_H
#define PGWIRE_POOL_H

#include "pgwire/client.h"
#include "pgwire/conn.h"
#include "pgwire/listen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A pool of connections on a libuv loop: pgw_pool_new makes one,
 * pgw_pool_close closes and frees it. */
typedef struct pgw_pool pgw_pool_t;

/* A pool's options, for pgw_pool_new and pgw_client_pool_new (which copy
 * them). Set it up with pgw_pool_config_init; every option's zero is its
 * default. */
typedef struct pgw_pool_config {
    /* sizeof(pgw_pool_config_t), set by pgw_pool_config_init (0: this
     * header's size). */
    size_t size;
    uint32_t min_size, max_size; /* 0 / 0: 0 and 10 */
    /* Connections being opened at once (0: 4; with route, see MULTI-HOST). */
    uint32_t max_connecting;
    /* One-shot requests in flight per connection before another one is
     * opened (0: 1: spread over every connection up to max_size). */
    uint32_t pipeline_target;
    /* Deadline of pgw_pool_acquire / tx_begin when they pass 0 (0: 30 s;
     * PGW_TIMEOUT_NONE: none). */
    uint32_t acquire_timeout_ms;
    uint32_t backoff_min_ms, backoff_max_ms; /* after a failed connect; 0: 50 ms, 5 s */
    uint32_t max_lifetime_ms;                /* 0: none */
    uint32_t lifetime_jitter_ms;             /* 0: none; at most half the lifetime */
    uint32_t idle_timeout_ms;                /* 0: none */
    uint32_t liveness_after_ms;              /* 0: never checked */
    /* Multi-host routing (see MULTI-HOST): 0 off, 1 on. */
    int route;
    /* Run on a clean release before reuse (e.g. "DISCARD ALL"); NULL: none.
     * Copied. */
    const char *reset_sql;
    /* Options of every connection (NULL alloc: malloc). Copied, and given
     * to each pooled connection as they are: its hooks (on_notice,
     * on_notification, on_parameter, on_trace, on_drain, on_lost) receive
     * each pooled connection with conn.ud (pgw_conn_userdata); the pool
     * follows its connections through a driver of its own (conn.h,
     * pgw_conn_set_driver), and on_lost fires after the pool has taken
     * the connection out. */
    pgw_conn_config_t conn;
    /* Standby lag (see STANDBY LAG; route must be set): read-only one-shot
     * requests go only to standbys measured at most this far behind the
     * primary, in WAL bytes (max_standby_lag_bytes) and in replay time
     * (max_standby_lag_ms); 0 / 0: no limit (not measured). */
    uint64_t max_standby_lag_bytes;
    uint32_t max_standby_lag_ms;
    /* How often the lag is measured (0: 1000 ms). */
    uint32_t lag_check_ms;
    /* When no standby is within the limits: 0 the primary serves the
     * request; 1 it is refused (PGW_ETARGET). */
    int standby_lag_fail;
    /* Read-your-writes (see READ YOUR WRITES): 0 off; 1 every read-only
     * one-shot request reads the pool's writes; 2 only those submitted
     * with PGW_POOL_READ_YOUR_WRITES. 1 and 2 make the pool track its
     * commits' WAL positions and measure its standbys (lag_check_ms). */
    int read_your_writes;
    /* A read-your-writes request no standby is known to have replayed
     * for: 0 the primary serves it; 1 it is refused (PGW_ETARGET); 2 it
     * waits on a standby for the position (see READ YOUR WRITES, Waiting),
     * at most ryw_wait_ms. */
    int ryw_fail;
    /* How long a read-your-writes request waits on a standby (ryw_fail 2)
     * before it fails with PGW_ETIMEDOUT (0: 1000 ms). */
    uint32_t ryw_wait_ms;
} pgw_pool_config_t;

/* Flags of pgw_pool_submit_flags and pgw_pool_acquire. A one-shot request
 * says its route in its descriptor too (pgw_request_t.route,
 * PGW_ROUTE_READ_ONLY), which is how a batch says it; the bit is apart
 * from every batch flag, and pgw_pool_submit_batch refuses it. */
enum {
    /* Read-only work: a standby's connection when route is set. */
    PGW_POOL_READ_ONLY = 1u << 16,
    /* With PGW_POOL_READ_ONLY, for pgw_pool_submit_flags: the request reads
     * the pool's writes (see READ YOUR WRITES; read_your_writes 1 or 2). */
    PGW_POOL_READ_YOUR_WRITES = 1u << 17
};

/* Zero *cfg, set its size and the conn options' defaults. */
PGW_EXTERN void pgw_pool_config_init(pgw_pool_config_t *cfg);

/*
 * Create a pool on loop for conninfo (libpq syntax, copied) with cfg
 * (copied; NULL: defaults) and start opening min_size connections (the
 * call does not wait for them). Returns 0, PGW_EINVAL (out, loop or
 * conninfo NULL, ryw_fail not 0, 1 or 2; min_size above max_size is
 * clamped), PGW_ECONNINFO
 * (conninfo cannot be parsed: nothing is made) or PGW_ENOMEM; *out is NULL
 * on failure. Free it with pgw_pool_close.
 */
PGW_EXTERN int pgw_pool_new(pgw_pool_t **out, struct uv_loop_s *loop, const char *conninfo,
                            const pgw_pool_config_t *cfg);

/*
 * Close the pool: waiters fail with PGW_ECLOSED, every connection is
 * closed (their pending requests complete with PGW_ECANCELED, as
 * pgw_conn_close), checked-out ones too (a later pgw_pool_release of one
 * returns PGW_EINVAL). Asynchronous and callable from any callback; the
 * memory is freed once the loop has run the connections' close callbacks.
 * NULL, or a pool already closing, is a no-op.
 */
PGW_EXTERN void pgw_pool_close(pgw_pool_t *p);

/*
 * One-shot requests (see ONE-SHOT REQUESTS). Same descriptors, semantics,
 * callbacks and error codes as pgw_conn_submit / pgw_conn_submit_batch,
 * plus PGW_ERETRY in callbacks (see RETRYABLE FAILURES), and these
 * returns: PGW_EINVAL (p NULL), PGW_ECLOSED (only when the pool is
 * closing), or, when no connection can take the request and none may be
 * opened now (the server is down and the pool is backing off; the
 * connections being opened are probes after a failed connect; or every
 * connection is being checked or moving between connect attempts and the
 * pool is at max_size), the last connect's error (UV_ECONNREFUSED,
 * PGW_ESERVER, PGW_ETARGET, ...), or PGW_ECONNECT when no connect has
 * failed (nothing queued, no callback: submit again later).
 * The descriptor's on_result, on_row and COPY callbacks get its ud, as
 * on a connection (the descriptor is passed on as it is; the pool hears
 * each completion through its driver hook, session.h "Driver
 * completions"). Its route field chooses the connection (see MULTI-HOST);
 * pgw_pool_submit_flags takes PGW_POOL_READ_ONLY instead (another bit is
 * PGW_EINVAL). pgw_pool_submit_batch takes only the batch flags of
 * session.h (PGW_BATCH_SYNC_EACH; another bit, PGW_POOL_READ_ONLY
 * included, is PGW_EINVAL), and its requests' routes must agree
 * (PGW_EINVAL otherwise): a batch runs on one connection.
 */
PGW_EXTERN int pgw_pool_submit(pgw_pool_t *p, const pgw_request_t *req);
PGW_EXTERN int pgw_pool_submit_flags(pgw_pool_t *p, const pgw_request_t *req, unsigned flags);
PGW_EXTERN int pgw_pool_submit_batch(pgw_pool_t *p, const pgw_request_t *reqs, size_t n,
                                     unsigned flags, pgw_result_cb done, void *ud);

/* The common one-shot requests in one call. */
PGW_INLINE int pgw_pool_query(pgw_pool_t *p, const char *sql, const pgw_param_t *params,
                              size_t nparams, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_QUERY(sql, params, nparams, cb, ud);
    return pgw_pool_submit(p, &r);
}
PGW_INLINE int pgw_pool_simple_query(pgw_pool_t *p, const char *sql, pgw_result_cb cb, void *ud)
{
    pgw_request_t r = PGW_SIMPLE(sql, cb, ud);
    return pgw_pool_submit(p, &r);
}

/*
 * A checked-out connection, or why there is none: status 0 with conn, or
 * PGW_EPOOLTIMEOUT, the last connect's error (see CHECKOUT), PGW_ECLOSED
 * (the pool closed first), and for pgw_pool_tx_begin the BEGIN's status
 * (res: its result, the callee's to free; NULL for pgw_pool_acquire). On
 * failure conn is NULL and nothing is to be released.
 */
typedef void (*pgw_pool_acquire_cb)(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud);

/*
 * Wait for a connection (flags: PGW_POOL_READ_ONLY or 0) at most
 * timeout_ms (0: acquire_timeout_ms; PGW_TIMEOUT_NONE: no limit); cb fires
 * exactly once, from the loop (never inside this call). The connection is
 * the caller's until pgw_pool_release: submit on it with pgw_conn_submit
 * and the rest of conn.h; never pgw_conn_close it. Returns 0, PGW_EINVAL
 * (p or cb NULL), PGW_ECLOSED or PGW_ENOMEM.
 */
PGW_EXTERN int pgw_pool_acquire(pgw_pool_t *p, unsigned flags, uint32_t timeout_ms,
                                pgw_pool_acquire_cb cb, void *ud);

/*
 * Give a checked-out connection back (see RELEASE). The caller must not
 * use conn after this call; a notification callback it installed
 * (pgw_conn_set_notification_cb) is removed, so the connection's later
 * notifications never reach it. Requests still pending on it make the pool
 * close it (their callbacks still fire, with PGW_ECANCELED). Returns 0,
 * PGW_EINVAL (p or conn NULL, or conn is not checked out from p).
 */
PGW_EXTERN int pgw_pool_release(pgw_pool_t *p, pgw_conn_t *conn);

/*
 * A transaction-scoped checkout: acquire, then begin_sql (NULL: "BEGIN";
 * e.g. "BEGIN ISOLATION LEVEL SERIALIZABLE"), then cb with the connection
 * once the server has run it (status 0). If the BEGIN fails, the
 * connection goes back to the pool and cb gets the failure. Returns as
 * pgw_pool_acquire.
 */
PGW_EXTERN int pgw_pool_tx_begin(pgw_pool_t *p, unsigned flags, uint32_t timeout_ms,
                                 const char *begin_sql, pgw_pool_acquire_cb cb, void *ud);
/*
 * End the transaction of a connection from pgw_pool_tx_begin: COMMIT
 * (commit 1) or ROLLBACK (0), then release it. cb (may be NULL) gets the
 * COMMIT's status and result as a pgw_result_cb (a COMMIT of a failed
 * transaction: status 0 and command tag ROLLBACK, as the server answers).
 * conn must not be used after this call. Returns 0, or PGW_EINVAL (conn
 * not checked out from p) / the codes of pgw_conn_submit, the connection
 * then still being the caller's.
 */
PGW_EXTERN int pgw_pool_tx_end(pgw_pool_t *p, pgw_conn_t *conn, int commit, pgw_result_cb cb,
                               void *ud);

/*
 * The pool's commit LSN (see READ YOUR WRITES): the highest WAL position
 * (bytes since 0/0, as pg_wal_lsn_diff(lsn, '0/0')) learned after its
 * commits or passed to pgw_pool_note_lsn, 0 for none, in *lsn (may be
 * NULL). Returns 1 when it covers every write whose callback has fired
 * (no position query pending or lost), 0 when one is still to come (ask
 * again once the loop has run), or for a NULL pool.
 */
PGW_EXTERN int pgw_pool_commit_lsn(const pgw_pool_t *p, uint64_t *lsn);
/* Raise the pool's commit LSN to lsn (a pgw_pool_commit_lsn value, or a
 * position the caller read after its own commit): its later
 * read-your-writes requests see what was committed up to there. A lower
 * value, or a NULL pool, changes nothing. */
PGW_EXTERN void pgw_pool_note_lsn(pgw_pool_t *p, uint64_t lsn);

/* Counters, readable at any time. */
typedef struct pgw_pool_stats {
    uint32_t size;                /* connections, those being opened included */
    uint32_t idle;                /* up, not checked out, nothing in flight */
    uint32_t in_use;              /* checked out, or with one-shot requests in flight */
    uint32_t opening;             /* being opened */
    uint32_t waiters;             /* acquires waiting */
    uint64_t acquires;            /* checkouts granted */
    uint64_t acquire_wait_us;     /* total time they waited */
    uint64_t acquire_wait_max_us; /* longest wait */
    uint64_t timeouts;            /* acquires that failed at their deadline */
    uint64_t opened, closed;      /* connections opened (connected) and closed or lost */
    uint64_t open_failures;       /* connects that failed */
    uint64_t lost;                /* connections that broke */
    uint64_t retried;             /* requests completed with PGW_ERETRY */
    uint64_t submitted;           /* one-shot requests and batches accepted */
} pgw_pool_stats_t;

/* Fill *out (zeroes for a NULL pool; nothing for a NULL out). */
PGW_EXTERN void pgw_pool_stats(const pgw_pool_t *p, pgw_pool_stats_t *out);

/*
 * Per-server counters (pgw_pool_hosts): one entry per server the pool's
 * connections reached, for each role they were made for, in the order
 * first reached; an entry stays for the pool's life (a server that went
 * away keeps its totals, with open 0).
 */
typedef struct pgw_pool_host_stats {
    /* The server as connected (pgw_conn_host / pgw_conn_port of its
     * connections: a name or address from the host list, or a unix socket
     * directory), NUL terminated (a longer one is cut). */
    char host[256];
    char port[16];
    /* PGW_POOL_READ_ONLY: connections made for read-only work
     * (target_session_attrs=prefer-standby when route is set); 0: for
     * read-write work (target_session_attrs=read-write when route is set,
     * else the connection string as given). */
    unsigned flags;
    uint32_t open;      /* connections up there now */
    uint32_t in_use;    /* of those: checked out, cleaning, or with requests in flight */
    uint32_t inflight;  /* one-shot requests in flight there now */
    uint64_t opened;    /* connections that connected there */
    uint64_t lost;      /* of those, broke (server gone, terminated, network) */
    uint64_t acquires;  /* checkouts granted there */
    uint64_t submitted; /* one-shot requests and batches sent there */
    uint64_t completed; /* of those, whose callback fired (any status) */
    uint64_t retried;   /* of those, completed with PGW_ERETRY */
    /* Connections that came to this entry from the server's read-only
     * entry when the server was promoted (see LIVE ROLE CHANGES); they
     * count in opened there, and in open, in_use and inflight here. */
    uint64_t promoted;
    /* STANDBY LAG, for read-only entries when limits are set: the last
     * measure (-1: none yet), how many were taken, and whether the server
     * is held back from read-only requests (1) or not (0). */
    int64_t lag_bytes;
    int64_t lag_ms;
    uint64_t lag_checks;
    uint32_t behind;
} pgw_pool_host_stats_t;

/*
 * Per-server counters: at most cap entries written to out (out may be
 * NULL with cap 0). Returns the number of entries (0 for a NULL pool), so
 * a caller can size its array and ask again. Requests sent to a connection
 * still opening count for the server once it is up; those whose
 * connection never came up count for none (only in pgw_pool_stats). Once
 * nothing is in flight, submitted == completed for every entry.
 */
PGW_EXTERN size_t pgw_pool_hosts(const pgw_pool_t *p, pgw_pool_host_stats_t *out, size_t cap);

/* One-shot requests in flight on each connection that is up or opening,
 * in the order they were opened: at most cap entries written to out (out
 * may be NULL with cap 0). Returns the number of connections. */
PGW_EXTERN size_t pgw_pool_inflight(const pgw_pool_t *p, uint32_t *out, size_t cap);

/*
 * A dedicated listener (listen.h) on its own connection, made from the
 * pool's connection string and conn options (cfg: its backoff and
 * callbacks; cfg->conn is ignored). It is not one of the pool's
 * connections: free it with pgw_listener_close, before or after the pool.
 * Returns the codes of pgw_listener_new, PGW_EINVAL for a NULL pool.
 */
PGW_EXTERN int pgw_pool_listener(pgw_pool_t *p, pgw_listener_t **out,
                                 const pgw_listener_config_t *cfg);

/* ------------------------------------------------------------ blocking pool */

/*
 * A blocking pool for plain C programs, thread-safe: the pool above
 * (pgw_pool_t, every option and rule of this header) on a loop of its own,
 * driven by the calling threads. Threads check out a client
 * (pgw_client_t, client.h) for work that stays on one connection and
 * release it, or run one-shot requests with no checkout
 * (pgw_client_pool_run), which share the pool's connections pipelined.
 *
 * A checkout, a release, a one-shot request (pgw_client_pool_run) and a
 * checked-out client's pgw_client_run / pgw_client_run_batch (and the
 * calls built on them) of requests without row or COPY callbacks are
 * handed to whichever thread runs the loop, and the caller sleeps until
 * they are done (a release that sends nothing first does not wait: see
 * pgw_client_pool_release); a checked-out client's other calls run the
 * pool's loop on their own thread while they wait, taking turns with the
 * other threads that wait. An engine thread runs the loop while no call does
 * (the handed-over calls, timers: idle_timeout_ms, max_lifetime_ms, the
 * refill to min_size, the backoff). So a request's callbacks (on_row, COPY sources
 * and sinks, the config's hooks) may run on another thread than its
 * caller's, always while the caller waits for them: keep them short and
 * thread-safe. A client belongs to one thread
 * between its acquire and its release; pgw_client_close of it does
 * nothing (release it); pgw_client_conn and pgw_client_session of it are
 * the pooled connection's and are only used inside the client's calls.
 * pgw_client_cancel works from any thread, as for any client.
 */
typedef struct pgw_client_pool pgw_client_pool_t;

/* Create the pool (pgw_pool_new: cfg as there, copied; NULL: defaults)
 * and wait until min_size connections are up. Returns 0, PGW_EINVAL,
 * PGW_ECONNINFO, PGW_ENOMEM, or the first failed connect's code (nothing
 * is kept). */
PGW_EXTERN int pgw_client_pool_new(pgw_client_pool_t **out, const char *conninfo,
                                   const pgw_pool_config_t *cfg);
/*
 * Check out a client (pgw_pool_acquire: flags PGW_POOL_READ_ONLY or 0,
 * see MULTI-HOST; waiters first come, first served; liveness checked as
 * configured), waiting up to timeout_ms (0: acquire_timeout_ms;
 * PGW_TIMEOUT_NONE: no limit). Returns 0 with *out, PGW_EPOOLTIMEOUT
 * (every connection busy until the deadline), the last connect's error (no
 * connection up and the last connect failed, at the deadline: see
 * CHECKOUT), PGW_ECLOSED (the pool is being freed), PGW_ENOMEM, PGW_EINVAL
 * (p or out NULL, another flag); *out is NULL on failure.
 */
PGW_EXTERN int pgw_client_pool_acquire(pgw_client_pool_t *p, uint32_t timeout_ms,
                                       pgw_client_t **out);
PGW_EXTERN int pgw_client_pool_acquire_flags(pgw_client_pool_t *p, unsigned flags,
                                             uint32_t timeout_ms, pgw_client_t **out);
/* Give c back (see RELEASE: a transaction left open is rolled back, a
 * request still pending or an open portal group closes the connection).
 * A release that sends something first (the ROLLBACK, reset_query) waits
 * until its connection is back in the pool; one that keeps or closes the
 * connection as it is returns without waiting for the pool's loop, and is
 * done before any call on p that begins after it (from any thread) is
 * served. c is freed: the caller must not use it after this call.
 * Returns 0 or PGW_EINVAL (c not checked out from p). */
PGW_EXTERN int pgw_client_pool_release(pgw_client_pool_t *p, pgw_client_t *c);
/*
 * Run one request with no checkout and wait for it (pgw_pool_submit: the
 * connection with the fewest requests in flight, pipelined behind the
 * other threads' requests; req->route chooses the connection, see
 * MULTI-HOST). The result and the descriptor's callbacks as for
 * pgw_client_run (on_result is not called; on_row and COPY callbacks run
 * as said above), plus the returns of pgw_pool_submit (PGW_ECLOSED, the
 * last connect's error when no connection can take it now) and PGW_ERETRY
 * (see RETRYABLE FAILURES; *res then holds the server's FATAL error when
 * it sent one). Callable from any number of threads at once.
 */
PGW_EXTERN int pgw_client_pool_run(pgw_client_pool_t *p, const pgw_request_t *req,
                                   pgw_result_t **res);
/* pgw_pool_stats of the pool (zeroes for NULL; nothing for a NULL out). */
PGW_EXTERN void pgw_client_pool_stats(pgw_client_pool_t *p, pgw_pool_stats_t *out);
/* Close the pool: once no client is out, waiters fail with PGW_ECLOSED and
 * every connection is closed; while clients are out, new checkouts fail
 * with PGW_ECLOSED and the last release (or the last waiting call to
 * return) frees the pool. NULL is a no-op. */
PGW_EXTERN void pgw_client_pool_close(pgw_client_pool_t *p);
/* The name of pgw_client_pool_close in 0.1.0, kept so code written against
 * it builds: handles that own connections are closed (pgw_conn_close,
 * pgw_client_close, pgw_pool_close), plain memory is freed. */
#define pgw_client_pool_free pgw_client_pool_close

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_POOL_H */
