/*
 * Standby lag (pool.h, STANDBY LAG; driver_internal.h): each round, one
 * query on a free read-write connection reads the primary's WAL position
 * and one on a free read-only connection of each server reads its replay
 * position and replay time lag; a server's read-only connections are
 * held back from read-only one-shot work (pgw__member_t.behind) unless
 * its last measure was within the limits. The queries count as requests
 * in flight of their connection for the core, so no checkout is granted
 * under them.
 *
 * The same per-server query says whether the server is in recovery: for a
 * server that does not report in_hot_standby (before PostgreSQL 14) it is
 * the pool's role check (pool.h, LIVE ROLE CHANGES), run every round while
 * the pool routes and has a read-only connection up there.
 */
#define _DEFAULT_SOURCE /* uv.h needs POSIX types */
#include "pool/driver_internal.h"

/* The primary's insert position: every commit it has made, written out
 * yet or not (with synchronous_commit off, the write position trails the
 * commits visible there). Where the last record ended at a page's end,
 * the insert position is past the next page's header (where the next
 * record will begin), but a standby's replay position stops at the end of
 * the last record, the page boundary, and would never reach it while the
 * primary is idle: the header is taken off (24 bytes, 40 on a segment's
 * first page: the headers of 64-bit servers). */
static const char primary_sql[] =
    "SELECT x - CASE WHEN x % pg_size_bytes(current_setting('wal_segment_size')) = 40 THEN 40 "
    "WHEN x % current_setting('wal_block_size')::int8 = 24 THEN 24 ELSE 0 END "
    "FROM (SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::int8 AS x) AS insert_at";
/* In recovery, replayed position, and two replay time lags: 0 when it has
 * replayed all it received (an idle primary leaves the last replayed
 * commit old without any lag), and now minus the last replayed commit's
 * time whatever it received (NULL when it replayed none since it
 * started). */
static const char standby_sql[] =
    "SELECT pg_is_in_recovery(), pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::int8, "
    "CASE WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0 "
    "ELSE (extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000)::int8 END, "
    "(extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000)::int8";

static uint64_t interval_us(const pgw_pool_t *p)
{
    return (uint64_t)(p->cfg.lag_check_ms ? p->cfg.lag_check_ms : 1000) * 1000;
}

/* Lag limits or read your writes: the primary's position is needed too. */
static int measuring_lag(const pgw_pool_t *p)
{
    return p->core.cfg.standby_lag || (p->cfg.route && p->cfg.read_your_writes);
}

/* A read-only connection up on a server that does not report
 * in_hot_standby: its role is checked every round. */
static int checking_roles(const pgw_pool_t *p)
{
    const pconn_t *pc = p->pconns;
    if (!p->cfg.route || !pc) return 0;
    do {
        if (pc->m && pc->m->role == PGW__ROLE_RO && pc->m->state == PGW__M_READY &&
            !pc->reports_hot_standby)
            return 1;
        pc = pc->next;
    } while (pc != p->pconns);
    return 0;
}

int pgw__lag_measuring(const pgw_pool_t *p)
{
    return measuring_lag(p) || checking_roles(p);
}

/* The server of host is (recovery) or is no longer a standby: its
 * read-only connections that could not say so themselves (no
 * in_hot_standby) learn it; those made on a standby that is one no more
 * were promoted with it. */
static void role_seen(pgw_pool_t *p, int32_t host, bool recovery)
{
    pconn_t *pc = p->pconns;
    if (!pc) return;
    do {
        pconn_t *next = pc->next;
        pgw__member_t *m = pc->m;
        if (m && pc->host == host && !pc->reports_hot_standby && m->role == PGW__ROLE_RO &&
            m->state == PGW__M_READY) {
            if (recovery && !m->standby)
                pgw__core_standby_seen(&p->core, m);
            else if (!recovery && m->standby)
                pgw__pconn_promoted(pc);
        }
        pc = next;
    } while (pc != p->pconns);
}

/* Hold host's read-only connections back (behind 1) or not, and say what
 * their server has replayed. */
static void set_measure(pgw_pool_t *p, int32_t host, uint8_t behind, uint64_t replayed)
{
    p->hosts[host].behind = behind;
    p->hosts[host].replayed = replayed;
    pconn_t *pc = p->pconns;
    if (!pc) return;
    do {
        if (pc->m && pc->host == host) {
            pc->m->behind = behind;
            pc->m->measured = 1;
            pc->m->replayed = replayed;
        }
        pc = pc->next;
    } while (pc != p->pconns);
}

void pgw__lag_member_up(pconn_t *pc)
{
    pgw_pool_t *p = pc->p;
    if (!pgw__lag_measuring(p)) return;
    phost_t *h = pgw__host_of(pc);
    pc->m->behind = !h || h->behind;
    pc->m->measured = h && h->lag_checks > 0;
    pc->m->replayed = h ? h->replayed : 0;
    p->lag_next_us = 0; /* measure it now */
}

/* A measure on pc finished: pc may take work again (a gone connection
 * leaves the rotation first, as for any request). */
static void probe_done(pconn_t *pc, int status, const pgw_result_t *res)
{
    pgw_pool_t *p = pc->p;
    pgw__pconn_before_callback(pc, status, res);
    if (pc->m) pgw__core_done(&p->core, pc->m, pgw__pool_now_us());
    pgw__pool_kick(p);
}

static int64_t int8_or(const pgw_result_t *res, size_t col, int64_t dflt)
{
    int64_t v;
    return pgw_result_isnull(res, 0, col) || pgw_result_int8(res, 0, col, &v) != 0 ? dflt : v;
}

static void on_primary(int status, pgw_result_t *res, void *ud)
{
    pconn_t *pc = ud;
    pgw_pool_t *p = pc->p;
    p->primary_probing = 0;
    pc->lag_probing = 0;
    if (status == 0 && pgw_result_nrows(res) == 1) p->primary_lsn = int8_or(res, 0, -1);
    probe_done(pc, status, res);
    pgw_result_free(res);
}

/* Whether a measure of bytes and ms (-1: unknown) is within the limits. */
static int within(const pgw_pool_t *p, int64_t bytes, int64_t ms)
{
    uint64_t max_b = p->cfg.max_standby_lag_bytes, max_ms = p->cfg.max_standby_lag_ms;
    return (!max_b || (bytes >= 0 && (uint64_t)bytes <= max_b)) &&
           (!max_ms || (ms >= 0 && (uint64_t)ms <= max_ms));
}

static void on_standby(int status, pgw_result_t *res, void *ud)
{
    pconn_t *pc = ud;
    pgw_pool_t *p = pc->p;
    pc->lag_probing = 0;
    bool recovery = false;
    int32_t host = pc->host;
    int known = 0;
    phost_t *h = pgw__host_of(pc);
    if (h && status == 0 && pgw_result_nrows(res) == 1 &&
        pgw_result_bool(res, 0, 0, &recovery) == 0) {
        known = 1;
        int64_t replay = int8_or(res, 1, -1), bytes = 0, ms = 0;
        if (recovery) {
            bytes = replay >= 0 && p->primary_lsn >= 0 ? p->primary_lsn - replay : -1;
            if (bytes < -1) bytes = 0; /* the primary was read before the standby */
            /* Replayed all it received counts as no time lag only when
             * that is all the primary had (not yet sent is not caught up). */
            ms = int8_or(res, bytes == 0 ? 2 : 3, -1);
        }
        h->lag_bytes = bytes;
        h->lag_ms = ms;
        h->lag_checks++;
        set_measure(p, pc->host, !within(p, bytes, ms),
                    recovery ? (replay >= 0 ? (uint64_t)replay : 0) : UINT64_MAX);
    }
    probe_done(pc, status, res);
    pgw_result_free(res);
    /* Once the measure left its connection's count: a promotion moves
     * only one-shot requests in flight. */
    if (known) role_seen(p, host, recovery);
}

/* A connection of role (on host, or any when -1) free for a measure: up,
 * not checked out, taking work, nothing of ours on it; the one with the
 * least in flight. */
static pconn_t *free_conn(pgw_pool_t *p, uint8_t role, int32_t host)
{
    pconn_t *best = NULL, *pc = p->pconns;
    if (!pc) return NULL;
    do {
        const pgw__member_t *m = pc->m;
        if (m && !pc->out && !pc->closing && !pc->lag_probing && m->role == role &&
            m->state == PGW__M_READY && !m->retire && !m->recheck && !m->drain &&
            (host < 0 || pc->host == host) && (!best || m->inflight < best->m->inflight))
            best = pc;
        pc = pc->next;
    } while (pc != p->pconns);
    return best;
}

static int probe(pconn_t *pc, const char *sql, pgw_result_cb cb)
{
    pgw_request_t r = PGW_SIMPLE(sql, cb, pc);
    if (pgw_conn_submit(pc->conn, &r) < 0) return -1;
    pgw__core_sent(&pc->p->core, pc->m);
    pc->lag_probing = 1;
    return 0;
}

/* A measure runs on a connection of host already. */
static int host_probing(const pgw_pool_t *p, int32_t host)
{
    const pconn_t *pc = p->pconns;
    if (!pc) return 0;
    do {
        if (pc->lag_probing && pc->host == host) return 1;
        pc = pc->next;
    } while (pc != p->pconns);
    return 0;
}

static void start_round(pgw_pool_t *p)
{
    pconn_t *pc;
    if (measuring_lag(p) && !p->primary_probing && (pc = free_conn(p, PGW__ROLE_RW, -1)) &&
        probe(pc, primary_sql, on_primary) == 0)
        p->primary_probing = 1;
    for (size_t i = 0; i < p->nhosts; i++) {
        int32_t host = (int32_t)i;
        if (p->hosts[i].role != PGW__ROLE_RO || host_probing(p, host)) continue;
        if ((pc = free_conn(p, PGW__ROLE_RO, host))) (void)probe(pc, standby_sql, on_standby);
    }
}

uint64_t pgw__lag_tick(pgw_pool_t *p, uint64_t now)
{
    if (!pgw__lag_measuring(p) || p->closing) return PGW__NEVER;
    if (now >= p->lag_next_us) {
        p->lag_next_us = now + interval_us(p);
        start_round(p);
    }
    return p->lag_next_us;
}

/* ------------------------------------------------------- read your writes */

static int tracking(const pgw_pool_t *p)
{
    return p->cfg.route && p->cfg.read_your_writes;
}

/* A write's position is lost: no standby counts as having replayed the
 * pool's writes until a position query sent from now on answers. */
static void go_blind(pgw_pool_t *p)
{
    p->ryw_blind = 1;
    p->ryw_blind_from = p->ryw_seq;
}

/* A position query sent as number seq answered (status, res). */
static void ryw_answered(pgw_pool_t *p, uint64_t seq, int status, const pgw_result_t *res)
{
    p->ryw_pending--;
    int64_t lsn = status == 0 && pgw_result_nrows(res) == 1 ? int8_or(res, 0, -1) : -1;
    if (lsn < 0) {
        go_blind(p); /* the write may have committed */
        return;
    }
    if ((uint64_t)lsn > p->ryw_lsn) p->ryw_lsn = (uint64_t)lsn;
    if (p->ryw_blind && seq >= p->ryw_blind_from) p->ryw_blind = 0;
}

typedef struct ryw_query {
    pgw_pool_t *p;
    pconn_t *pc; /* a one-shot request's connection (NULL: a checkout's) */
    uint64_t seq;
    void (*cb)(void *);
    void *ud;
} ryw_query_t;

static void on_commit_lsn(int status, pgw_result_t *res, void *ud)
{
    ryw_query_t q = *(ryw_query_t *)ud;
    pgw__free(q.p->alloc, ud);
    ryw_answered(q.p, q.seq, status, res);
    if (q.pc) probe_done(q.pc, status, res);
    pgw_result_free(res);
    if (q.cb) q.cb(q.ud);
}

/* Send the position query on conn; 0 or the submit's error. */
static int ryw_query(pgw_pool_t *p, pconn_t *pc, pgw_conn_t *conn, void (*cb)(void *), void *ud)
{
    ryw_query_t *q = pgw__malloc(p->alloc, sizeof *q);
    if (!q) return PGW_ENOMEM;
    *q = (ryw_query_t){p, pc, p->ryw_seq, cb, ud};
    pgw_request_t r = PGW_SIMPLE(primary_sql, on_commit_lsn, q);
    int rc = pgw_conn_submit(conn, &r);
    if (rc < 0) {
        pgw__free(p->alloc, q);
        return rc;
    }
    p->ryw_seq++;
    p->ryw_pending++;
    return 0;
}

void pgw__ryw_after_write(pconn_t *pc)
{
    pgw_pool_t *p = pc->p;
    if (!tracking(p)) return;
    if (ryw_query(p, pc, pc->conn, NULL, NULL) == 0) {
        pgw__core_sent(&p->core, pc->m);
    } else {
        go_blind(p); /* the write's position will not be known */
    }
}

int pgw__ryw_after_commit(pgw_pool_t *p, pgw_conn_t *conn, void (*cb)(void *), void *ud)
{
    if (!tracking(p)) return PGW_EINVAL;
    int rc = ryw_query(p, NULL, conn, cb, ud);
    if (rc < 0) {
        go_blind(p); /* the commit's position will not be known */
    }
    return rc;
}

int pgw_pool_commit_lsn(const pgw_pool_t *p, uint64_t *lsn)
{
    if (lsn) *lsn = p ? p->ryw_lsn : 0;
    return p && !p->ryw_pending && !p->ryw_blind;
}

void pgw_pool_note_lsn(pgw_pool_t *p, uint64_t lsn)
{
    if (p && lsn > p->ryw_lsn) p->ryw_lsn = lsn;
}
