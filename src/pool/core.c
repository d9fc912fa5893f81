/*
 * The pool's decisions, without I/O (pool_internal.h): members and their
 * states, the FIFO of checkout waiters, min/max sizes, the open rate limit
 * (at most max_connecting opens at once, exponential backoff after a
 * failed one, so a server restart does not meet a storm of connects),
 * least-in-flight dispatch, lifetime with jitter, idle timeout, the
 * liveness threshold, what a release must clean, and the servers going
 * down (no work for them until a connection there proves healthy).
 */
#include "pool/pool_internal.h"
#include "util/internal.h"

#include <string.h>

/* ------------------------------------------------------------------ lists */

static void member_link(pgw__core_t *c, pgw__member_t *m)
{
    if (!c->members) {
        m->next = m->prev = m;
        c->members = m;
        return;
    }
    m->prev = c->members->prev;
    m->next = c->members;
    m->prev->next = m;
    c->members->prev = m;
}

static void member_unlink(pgw__core_t *c, pgw__member_t *m)
{
    if (m->next == m) {
        c->members = NULL;
    } else {
        m->prev->next = m->next;
        m->next->prev = m->prev;
        if (c->members == m) c->members = m->next;
    }
    m->next = m->prev = NULL;
}

static void waiter_push(pgw__core_t *c, pgw__waiter_t *w)
{
    w->queued = 1;
    c->nwaiters++;
    if (!c->waiters) {
        w->next = w->prev = w;
        c->waiters = w;
        return;
    }
    w->prev = c->waiters->prev;
    w->next = c->waiters;
    w->prev->next = w;
    c->waiters->prev = w;
}

static void waiter_unlink(pgw__core_t *c, pgw__waiter_t *w)
{
    if (!w->queued) return;
    w->queued = 0;
    c->nwaiters--;
    if (w->next == w) {
        c->waiters = NULL;
    } else {
        w->prev->next = w->next;
        w->next->prev = w->prev;
        if (c->waiters == w) c->waiters = w->next;
    }
    w->next = w->prev = NULL;
}

/* The oldest waiter of role, or NULL. */
static pgw__waiter_t *first_waiter(const pgw__core_t *c, int role)
{
    pgw__waiter_t *w = c->waiters;
    if (!w) return NULL;
    do {
        if (w->role == role) return w;
        w = w->next;
    } while (w != c->waiters);
    return NULL;
}

static uint32_t waiters_of(const pgw__core_t *c, int role)
{
    uint32_t n = 0;
    pgw__waiter_t *w = c->waiters;
    if (!w) return 0;
    do {
        n += w->role == role;
        w = w->next;
    } while (w != c->waiters);
    return n;
}

/* ------------------------------------------------------------------- init */

void pgw__core_init(pgw__core_t *c, const pgw__core_cfg_t *cfg, const pgw__core_ops_t *ops,
                    void *ud, const pgw_allocator_t *alloc)
{
    memset(c, 0, sizeof *c);
    c->cfg = *cfg;
    if (c->cfg.max_size == 0) c->cfg.max_size = 10;
    if (c->cfg.min_size > c->cfg.max_size) c->cfg.min_size = c->cfg.max_size;
    if (c->cfg.max_connecting == 0) c->cfg.max_connecting = 4;
    if (c->cfg.pipeline_target == 0) c->cfg.pipeline_target = 1;
    pgw__backoff_init(&c->backoff, c->cfg.backoff_min_us, c->cfg.backoff_max_us, 1000);
    c->ops = ops;
    c->ud = ud;
    c->alloc = alloc;
    c->rng = cfg->seed ? cfg->seed : 0x9e3779b97f4a7c15ull;
}

static uint64_t rng_next(pgw__core_t *c)
{
    uint64_t x = c->rng; /* xorshift64 */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c->rng = x;
    return x;
}

/* ---------------------------------------------------------------- members */

static void member_free(pgw__core_t *c, pgw__member_t *m)
{
    member_unlink(c, m);
    c->size--;
    if (m->state == PGW__M_OPENING) c->opening--;
    pgw__free(c->alloc, m);
}

static void member_close(pgw__core_t *c, pgw__member_t *m, int reason)
{
    c->st.closed++;
    c->ops->close(c->ud, m, reason);
    member_free(c, m);
}

/* Members opening that were held when their server began going down:
 * they take no work, so they leave their place among the max_connecting
 * to a member that will. */
static uint32_t opening_held(const pgw__core_t *c)
{
    uint32_t n = 0;
    const pgw__member_t *m = c->members;
    if (!m || !c->down_server) return 0;
    do {
        n += m->state == PGW__M_OPENING && m->hold;
        m = m->next;
    } while (m != c->members);
    return n;
}

static int may_open(const pgw__core_t *c, uint64_t now)
{
    return !c->closing && c->size < c->cfg.max_size &&
           c->opening - opening_held(c) < c->cfg.max_connecting && now >= c->retry_at_us;
}

/* When routing, the two roles share max_size: at max_size, with nothing
 * else keeping an open back (max_connecting, backoff), a one-shot request
 * that no member of its role can take (none up or being opened: all
 * checked out, say), or a checkout of a role without members, closes the
 * member of the other role idle longest, so that idle connections of one
 * role never keep the other's work off its servers. 1 when one was closed
 * (an open may follow). */
static int make_room(pgw__core_t *c, int role, uint64_t now)
{
    if (!c->cfg.route || c->closing || c->size < c->cfg.max_size ||
        c->opening - opening_held(c) >= c->cfg.max_connecting || now < c->retry_at_us)
        return 0;
    pgw__member_t *idle = NULL, *m = c->members;
    if (!m) return 0;
    do {
        if (m->role != role && m->state == PGW__M_READY && m->inflight == 0 && !m->drain &&
            (!idle || m->idle_since_us < idle->idle_since_us))
            idle = m;
        m = m->next;
    } while (m != c->members);
    if (!idle) return 0;
    member_close(c, idle, PGW__CLOSE_IDLE);
    return 1;
}

/* Open a member of role; NULL (err set) when the open failed at once. */
static pgw__member_t *member_open(pgw__core_t *c, int role, uint64_t now, int *err)
{
    pgw__member_t *m = pgw__calloc(c->alloc, 1, sizeof *m);
    if (!m) {
        *err = PGW_ENOMEM;
        return NULL;
    }
    m->id = ++c->next_id;
    m->state = PGW__M_OPENING;
    m->role = (uint8_t)role;
    m->opened_us = now;
    m->idle_since_us = now;
    m->expires_us = PGW__NEVER;
    member_link(c, m);
    c->size++;
    c->opening++;
    int rc = c->ops->open(c->ud, m);
    if (rc < 0) {
        *err = rc;
        pgw__core_opened(c, m, rc, now);
        return NULL;
    }
    return m;
}

static int member_free_for_checkout(const pgw__member_t *m, int role)
{
    return m->state == PGW__M_READY && m->inflight == 0 && !m->retire && !m->recheck &&
           m->role == role;
}

/* Ask the driver to check m (it answers with pgw__core_checked, maybe
 * inside this call: m may be gone when it returns). */
static void start_check(pgw__core_t *c, pgw__member_t *m)
{
    m->recheck = 0;
    m->state = PGW__M_CHECKING;
    c->ops->check(c->ud, m);
}

static uint32_t members_of(const pgw__core_t *c, int role, uint32_t *opening)
{
    uint32_t n = 0, o = 0;
    pgw__member_t *m = c->members;
    if (m) {
        do {
            if (m->role == role) {
                n++;
                o += m->state == PGW__M_OPENING;
            }
            m = m->next;
        } while (m != c->members);
    }
    if (opening) *opening = o;
    return n;
}

/* Members of role being opened. */
static uint32_t opening_of(const pgw__core_t *c, int role)
{
    uint32_t opening = 0;
    members_of(c, role, &opening);
    return opening;
}

/* When routing, a role with no member opening may open one past
 * max_connecting (within max_size, after the backoff): the other role's
 * opens, to other servers, do not send its work to the primary meanwhile. */
static int first_of_role(const pgw__core_t *c, int role, uint64_t now)
{
    return c->cfg.route && !c->closing && c->size < c->cfg.max_size && now >= c->retry_at_us &&
           !opening_of(c, role);
}

/* ---------------------------------------------------------------- waiters */

static void clear_drains(pgw__core_t *c)
{
    pgw__member_t *m = c->members;
    if (!m) return;
    do {
        m->drain = 0;
        m = m->next;
    } while (m != c->members);
}

static void grant(pgw__core_t *c, pgw__waiter_t *w, pgw__member_t *m, uint64_t now)
{
    waiter_unlink(c, w);
    m->state = PGW__M_OUT;
    m->drain = 0;
    uint64_t waited = now > w->since_us ? now - w->since_us : 0;
    c->st.acquires++;
    c->st.acquire_wait_us += waited;
    if (waited > c->st.acquire_wait_max_us) c->st.acquire_wait_max_us = waited;
    c->ops->grant(c->ud, w, m);
}

/* Hand free members to the oldest waiters of their role; a member idle
 * past the liveness threshold is checked first. Then open members for the
 * waiters left, or reserve busy ones (drain) when no more may open. */
static void serve(pgw__core_t *c, uint64_t now)
{
    if (c->in_serve || c->closing) return;
    c->in_serve = 1;
    for (int again = 1; again && c->waiters;) {
        again = 0;
        pgw__member_t *m = c->members;
        if (!m) break;
        do {
            pgw__member_t *next = m->next;
            int last = next == c->members;
            pgw__waiter_t *w;
            if (member_free_for_checkout(m, m->role) && (w = first_waiter(c, m->role))) {
                if (c->cfg.liveness_after_us &&
                    now - m->idle_since_us >= c->cfg.liveness_after_us) {
                    start_check(c, m);
                } else {
                    grant(c, w, m, now);
                }
                again = 1;
                break; /* the list may have changed */
            }
            if (last) break;
            m = next;
        } while (c->members && c->waiters);
    }
    /* Members for the waiters that remain (reservations are made afresh
     * each time: those of a waiter that left are dropped). */
    clear_drains(c);
    for (int role = 0; role < PGW__NROLES && c->waiters; role++) {
        uint32_t want = waiters_of(c, role);
        if (!want) continue;
        uint32_t opening, checking = 0, draining = 0;
        members_of(c, role, &opening);
        pgw__member_t *m = c->members;
        if (m) {
            do {
                if (m->role == role) {
                    checking += m->state == PGW__M_CHECKING;
                    draining += m->drain && m->state == PGW__M_READY;
                }
                m = m->next;
            } while (m != c->members);
        }
        uint32_t coming = opening + checking + draining;
        while (coming < want && may_open(c, now)) {
            int err;
            if (!member_open(c, role, now, &err)) break;
            coming++;
        }
        /* No room to open: reserve the busy members with the least in
         * flight, so that one-shot load cannot starve a checkout. */
        while (coming < want) {
            pgw__member_t *best = NULL;
            m = c->members;
            if (!m) break;
            do {
                if (m->role == role && m->state == PGW__M_READY && !m->drain && !m->retire &&
                    !m->recheck && (!best || m->inflight < best->inflight))
                    best = m;
                m = m->next;
            } while (m != c->members);
            if (!best) break;
            best->drain = 1;
            coming++;
        }
        /* The role has no member at all: the other role's idle member
         * makes room. (With members of its own the waiter waits for them,
         * as it would without routing.) */
        int err;
        if (coming == 0 && members_of(c, role, NULL) == 0 && make_room(c, role, now))
            (void)member_open(c, role, now, &err);
    }
    c->in_serve = 0;
}

void pgw__core_acquire(pgw__core_t *c, pgw__waiter_t *w, uint64_t now)
{
    w->since_us = now;
    if (c->cfg.route == 0) w->role = PGW__ROLE_RW;
    waiter_push(c, w);
    serve(c, now);
}

void pgw__core_reclassify(pgw__core_t *c, pgw__member_t *m, int role, uint64_t now)
{
    m->role = (uint8_t)role;
    if (role == PGW__ROLE_RW) c->ro_after_promotion = 1;
    serve(c, now);
}

void pgw__core_forget_waiter(pgw__core_t *c, pgw__waiter_t *w)
{
    waiter_unlink(c, w);
    if (!c->waiters) clear_drains(c);
}

/* --------------------------------------------------------------- one-shot */

/* m may take a one-shot request: up, or (with opening set) being opened
 * while opens succeed (after a failed one, those opening are probes of a
 * server that is down: requests queued there would fail with them). */
static int takes_requests(const pgw__core_t *c, const pgw__member_t *m, int opening)
{
    if (m->drain || m->retire || m->recheck) return 0;
    if (c->cfg.standby_lag && m->role == PGW__ROLE_RO && (m->behind || m->state != PGW__M_READY))
        return 0;
    if (m->state == PGW__M_READY) return 1;
    return opening && m->state == PGW__M_OPENING && !m->hold && !m->between && !c->last_open_error;
}

/* What the one-shot picks (pgw__core_pick, pgw__core_pick_replayed) count
 * in flight on m: the member that just answered still counts that answer
 * until the next request is sent (pgw__core_done says why). */
static uint32_t load_of(const pgw__core_t *c, const pgw__member_t *m)
{
    return m->inflight + (m->id == c->returning_id);
}

/* The member of role with the least in flight among those up (and, with
 * opening set, those being opened); the first in the list among equals. */
static pgw__member_t *least_in_flight(const pgw__core_t *c, int role, int opening)
{
    pgw__member_t *best = NULL, *m = c->members;
    if (!m) return NULL;
    do {
        if (m->role == role && takes_requests(c, m, opening) &&
            (!best || load_of(c, m) < load_of(c, best)))
            best = m;
        m = m->next;
    } while (m != c->members);
    return best;
}

/* Once a promotion took read-only members, until a read-only member is up
 * on a standby again: read-only work goes to the read-only member up with the least in
 * flight, else to such a read-write member (a primary serves read-only
 * work, as prefer-standby allows), never to a member being opened, which
 * may leave the first server it reaches and fail what it carried; one
 * read-only member is opened meanwhile, to find the standbys left. NULL
 * when none is up (or no promotion is under way). */
static pgw__member_t *pick_after_promotion(pgw__core_t *c, uint64_t now)
{
    if (!c->ro_after_promotion) return NULL;
    pgw__member_t *best = least_in_flight(c, PGW__ROLE_RO, 0);
    if (!best) best = least_in_flight(c, PGW__ROLE_RW, 0);
    if (!best) return NULL;
    uint32_t opening = 0;
    members_of(c, PGW__ROLE_RO, &opening);
    int e = 0;
    if (!opening && may_open(c, now)) (void)member_open(c, PGW__ROLE_RO, now, &e);
    return best;
}

/* With standby lag limits: the read-only member up and within them with
 * the least in flight; with none, the primary's, or NULL with PGW_ETARGET
 * (standby_lag_fail). Another read-only member is opened when all those
 * within have pipeline_target in flight, or when none is and the driver
 * may still find a standby within them (the driver opens it on the hosts
 * not measured behind: pool.h, STANDBY LAG), unless one is still opening
 * or not yet measured (it takes nothing before its first measure): one at
 * a time. */
static pgw__member_t *pick_within_lag(pgw__core_t *c, uint64_t now, int *err)
{
    pgw__member_t *best = least_in_flight(c, PGW__ROLE_RO, 0);
    if (!best || best->inflight >= c->cfg.pipeline_target) {
        uint32_t unknown = 0;
        pgw__member_t *m = c->members;
        if (m) {
            do {
                unknown += m->role == PGW__ROLE_RO && (m->state != PGW__M_READY || !m->measured);
                m = m->next;
            } while (m != c->members);
        }
        int e = 0;
        if (!unknown && (best || c->ops->standby_left(c->ud)) && may_open(c, now))
            (void)member_open(c, PGW__ROLE_RO, now, &e);
    }
    if (best) return best;
    if (c->cfg.standby_lag_fail) {
        *err = PGW_ETARGET;
        return NULL;
    }
    return pgw__core_pick(c, now, PGW__ROLE_RW, err);
}

pgw__member_t *pgw__core_pick(pgw__core_t *c, uint64_t now, int role, int *err)
{
    if (c->cfg.route == 0) role = PGW__ROLE_RW;
    if (role == PGW__ROLE_RO && c->cfg.standby_lag && !c->ro_after_promotion)
        return pick_within_lag(c, now, err);
    pgw__member_t *promoted = role == PGW__ROLE_RO ? pick_after_promotion(c, now) : NULL;
    if (promoted) return promoted;
    /* When routing, a connection still opening may first reach a server of
     * the wrong kind and leave it, failing what it carried: one that is up
     * is preferred, and one opening takes requests only when none is. */
    pgw__member_t *best = c->cfg.route ? least_in_flight(c, role, 0) : NULL;
    if (!best) best = least_in_flight(c, role, 1);
    if ((!best || best->inflight >= c->cfg.pipeline_target) &&
        (may_open(c, now) || first_of_role(c, role, now) ||
         (!best && !opening_of(c, role) && make_room(c, role, now)))) {
        int e = 0;
        pgw__member_t *n = member_open(c, role, now, &e);
        if (n && takes_requests(c, n, 1)) return n;
        if (!n && !best) {
            *err = e;
            return NULL;
        }
    }
    if (!best && role == PGW__ROLE_RO) {
        /* No standby member and none can open now (nor make room: every
         * member is busy): the primary serves read-only work too
         * (prefer-standby falls back the same way). */
        return pgw__core_pick(c, now, PGW__ROLE_RW, err);
    }
    if (!best) *err = c->last_open_error ? c->last_open_error : PGW_ECONNECT;
    return best;
}

pgw__member_t *pgw__core_pick_replayed(pgw__core_t *c, uint64_t now, uint64_t lsn, int fail,
                                       int *wait, int *err)
{
    pgw__member_t *best = NULL, *nearest = NULL, *m = c->members;
    *wait = 0;
    if (m) {
        do {
            if (m->role == PGW__ROLE_RO && takes_requests(c, m, 0) && m->state == PGW__M_READY) {
                if (m->replayed >= lsn && (!best || load_of(c, m) < load_of(c, best))) best = m;
                if (!nearest || m->replayed > nearest->replayed ||
                    (m->replayed == nearest->replayed && load_of(c, m) < load_of(c, nearest)))
                    nearest = m;
            }
            m = m->next;
        } while (m != c->members);
    }
    if (best) return best;
    if (fail == PGW__RYW_WAIT && nearest && lsn != UINT64_MAX) {
        *wait = 1;
        return nearest;
    }
    /* No read-only member yet: one is opened, to be measured, and takes
     * requests once its server is known to have replayed them. */
    int e = 0;
    if (members_of(c, PGW__ROLE_RO, NULL) == 0 && may_open(c, now))
        (void)member_open(c, PGW__ROLE_RO, now, &e);
    if (fail == PGW__RYW_REFUSE) {
        *err = PGW_ETARGET;
        return NULL;
    }
    return pgw__core_pick(c, now, PGW__ROLE_RW, err);
}

void pgw__core_sent(pgw__core_t *c, pgw__member_t *m)
{
    m->inflight++;
    c->returning_id = 0;
}

/* m has nothing in flight: close it if retired, check it if its server
 * went down meanwhile, else serve the waiters. */
static void member_freed_up(pgw__core_t *c, pgw__member_t *m, uint64_t now)
{
    m->idle_since_us = now;
    if (m->retire && m->state == PGW__M_READY) {
        member_close(c, m, PGW__CLOSE_LIFETIME);
        return;
    }
    if (m->recheck && m->state == PGW__M_READY) {
        start_check(c, m);
        return;
    }
    if (c->waiters) serve(c, now);
}

/* A request on m completed. Its caller's callback, which runs next, often
 * sends the next request (a client keeping one request outstanding): with
 * every member equally busy, m alone would then have the least in flight
 * and take it, and every such client would stay on the member it has for
 * good, however the members change (those of a promoted server, say,
 * would never see read-write work). So until the next request is sent, m
 * counts the completed one as still in flight: among equals the next
 * request goes to the first member in the list, and the clients mix. */
void pgw__core_done(pgw__core_t *c, pgw__member_t *m, uint64_t now)
{
    c->returning_id = m->id;
    if (m->inflight) m->inflight--;
    if (m->inflight == 0 && m->state == PGW__M_READY) member_freed_up(c, m, now);
}

/* The server that was going down proved healthy (a member there answered a
 * check, or one opened since came up there): the members still opening
 * need not fear it any more. Those up keep their own checks (a check
 * vouches for its own connection only: the others may be terminated). */
static void server_healthy(pgw__core_t *c)
{
    c->down_server = 0;
    pgw__member_t *m = c->members;
    if (!m) return;
    do {
        if (m->state == PGW__M_OPENING) m->hold = m->recheck = 0;
        m = m->next;
    } while (m != c->members);
}

/* ---------------------------------------------------------------- release */

int pgw__core_release_action(const pgw__core_t *c, char txn, int pending, int group_open)
{
    if (pending || group_open || txn == 0) return PGW__REL_CLOSE;
    if (txn == 'T' || txn == 'E') return PGW__REL_ROLLBACK;
    return c->cfg.reset_on_release ? PGW__REL_RESET : PGW__REL_KEEP;
}

void pgw__core_release(pgw__core_t *c, pgw__member_t *m, int action, uint64_t now)
{
    if (action == PGW__REL_CLOSE || c->closing) {
        member_close(c, m, c->closing ? PGW__CLOSE_SHUTDOWN : PGW__CLOSE_DIRTY);
        serve(c, now);
        return;
    }
    if (action == PGW__REL_ROLLBACK || action == PGW__REL_RESET) {
        m->state = PGW__M_CLEANING;
        return;
    }
    m->state = PGW__M_READY;
    member_freed_up(c, m, now);
}

void pgw__core_cleaned(pgw__core_t *c, pgw__member_t *m, int ok, uint64_t now)
{
    if (!ok) {
        member_close(c, m, PGW__CLOSE_FAILED);
        serve(c, now);
        return;
    }
    m->state = PGW__M_READY;
    if (m->inflight == 0) member_freed_up(c, m, now);
}

void pgw__core_checked(pgw__core_t *c, pgw__member_t *m, int ok, uint64_t now)
{
    if (!ok) {
        member_close(c, m, PGW__CLOSE_FAILED);
        serve(c, now);
        return;
    }
    m->idle_since_us = now;
    if (m->recheck) { /* its server went down while the check ran */
        start_check(c, m);
        return;
    }
    if (m->server == c->down_server) server_healthy(c); /* it answered */
    pgw__waiter_t *w = first_waiter(c, m->role);
    if (w && !c->closing) {
        grant(c, w, m, now);
    } else {
        m->state = PGW__M_READY;
    }
    serve(c, now);
}

/* ------------------------------------------------------------ open / lost */

void pgw__core_standby_seen(pgw__core_t *c, pgw__member_t *m)
{
    m->standby = 1;
    if (m->role == PGW__ROLE_RO && m->state == PGW__M_READY) c->ro_after_promotion = 0;
}

void pgw__core_opened(pgw__core_t *c, pgw__member_t *m, int status, uint64_t now)
{
    if (status != 0) {
        c->st.open_failures++;
        c->last_open_error = status;
        c->retry_at_us = now + pgw__backoff_next(&c->backoff);
        member_free(c, m);
        return;
    }
    c->st.opened++;
    c->opening--;
    if (m->role == PGW__ROLE_RO && m->standby) c->ro_after_promotion = 0;
    pgw__backoff_reset(&c->backoff);
    c->retry_at_us = 0;
    c->last_open_error = 0;
    m->state = PGW__M_READY;
    m->hold = 0;
    m->opened_us = now;
    m->idle_since_us = now;
    if (c->cfg.max_lifetime_us) {
        uint64_t jitter = c->cfg.lifetime_jitter_us;
        if (jitter >= c->cfg.max_lifetime_us) jitter = c->cfg.max_lifetime_us / 2;
        m->expires_us = now + c->cfg.max_lifetime_us - (jitter ? rng_next(c) % (jitter + 1) : 0);
    }
    /* A connection opened since its server began going down proves it
     * healthy again; one opening at that moment may have been let in just
     * before: checked once free (what it carried runs first). */
    if (m->server == c->down_server && m->id > c->down_since_id) server_healthy(c);
    if (m->recheck && m->inflight == 0) start_check(c, m);
    serve(c, now);
}

void pgw__core_lost(pgw__core_t *c, pgw__member_t *m, uint64_t now)
{
    c->st.lost++;
    c->st.closed++;
    member_free(c, m);
    serve(c, now);
}

void pgw__core_between_attempts(pgw__core_t *c, pgw__member_t *m, int between)
{
    PGW__UNUSED(c);
    m->between = (uint8_t)(between && m->state == PGW__M_OPENING);
}

/* Check the free members that must be checked (each check may end at once
 * and change the list: the walk starts over). */
static void start_due_checks(pgw__core_t *c)
{
    for (int again = 1; again && c->members;) {
        again = 0;
        pgw__member_t *m = c->members;
        do {
            if (m->recheck && m->state == PGW__M_READY && m->inflight == 0 && !m->retire) {
                start_check(c, m);
                again = 1;
                break;
            }
            m = m->next;
        } while (m != c->members);
    }
}

void pgw__core_server_down(pgw__core_t *c, uint32_t server, int hold_opening, uint64_t now)
{
    if (c->closing || server == 0) return;
    int again = c->down_server == server;
    if (!again) {
        c->down_server = server;
        c->down_since_id = c->next_id;
    }
    pgw__member_t *m = c->members;
    if (!m) return;
    do {
        if (again && m->id > c->down_since_id) {
            /* opened since the first sign: a new backend */
        } else if (m->state == PGW__M_OPENING) {
            if (hold_opening) { /* it may be reaching that server */
                m->hold = 1;
                m->recheck = 1;
            }
        } else if (m->server == server) {
            m->recheck = 1;
        }
        m = m->next;
    } while (m != c->members);
    start_due_checks(c);
    serve(c, now);
}

/* ------------------------------------------------------------------- tick */

uint64_t pgw__core_tick(pgw__core_t *c, uint64_t now)
{
    uint64_t next = PGW__NEVER;
    if (c->closing) return next;
    /* Waiters past their deadline. */
    while (c->waiters) {
        pgw__waiter_t *w = c->waiters, *due = NULL;
        do {
            if (w->deadline_us <= now) {
                due = w;
                break;
            }
            w = w->next;
        } while (w != c->waiters);
        if (!due) break;
        waiter_unlink(c, due);
        c->st.timeouts++;
        /* "Server down" and "pool exhausted" are told apart: with nothing
         * up and the last open failed, the waiter gets that failure. */
        uint32_t idle, in_use, opening;
        pgw__core_counts(c, &idle, &in_use, &opening);
        int err = PGW_EPOOLTIMEOUT;
        if (idle + in_use == 0 && c->last_open_error) err = c->last_open_error;
        c->ops->fail(c->ud, due, err);
    }
    /* Idle and expired members (each visited once: closing one leaves
     * the next in place). */
    pgw__member_t *m = c->members;
    for (uint32_t i = 0, n = c->size; i < n && m; i++) {
        pgw__member_t *nx = m->next;
        int free_now = m->state == PGW__M_READY && m->inflight == 0;
        if (m->expires_us != PGW__NEVER && now >= m->expires_us) m->retire = 1;
        if (m->retire && free_now) {
            member_close(c, m, PGW__CLOSE_LIFETIME);
        } else if (free_now && c->cfg.idle_timeout_us && c->size > c->cfg.min_size &&
                   now >= m->idle_since_us + c->cfg.idle_timeout_us) {
            member_close(c, m, PGW__CLOSE_IDLE);
        } else {
            if (free_now && c->cfg.idle_timeout_us && c->size > c->cfg.min_size &&
                m->idle_since_us + c->cfg.idle_timeout_us < next)
                next = m->idle_since_us + c->cfg.idle_timeout_us;
            if (m->expires_us != PGW__NEVER && !m->retire && m->expires_us < next)
                next = m->expires_us;
        }
        m = c->members ? nx : NULL;
    }
    /* Keep min (primary role) warm, at the rate limit. */
    uint32_t have = members_of(c, PGW__ROLE_RW, NULL);
    while (have < c->cfg.min_size && may_open(c, now)) {
        int err;
        if (!member_open(c, PGW__ROLE_RW, now, &err)) break;
        have++;
    }
    if (have < c->cfg.min_size && c->retry_at_us > now && c->retry_at_us < next)
        next = c->retry_at_us;
    serve(c, now);
    if (c->waiters) {
        pgw__waiter_t *w = c->waiters;
        do {
            if (w->deadline_us < next) next = w->deadline_us;
            w = w->next;
        } while (w != c->waiters);
        if (c->retry_at_us > now && c->retry_at_us < next) next = c->retry_at_us;
    }
    return next;
}

/* --------------------------------------------------------------- shutdown */

void pgw__core_shutdown(pgw__core_t *c)
{
    if (c->closing) return;
    c->closing = 1;
    while (c->waiters) {
        pgw__waiter_t *w = c->waiters;
        waiter_unlink(c, w);
        c->ops->fail(c->ud, w, PGW_ECLOSED);
    }
    while (c->members)
        member_close(c, c->members, PGW__CLOSE_SHUTDOWN);
}

void pgw__core_counts(const pgw__core_t *c, uint32_t *idle, uint32_t *in_use, uint32_t *opening)
{
    uint32_t i = 0, u = 0, o = 0;
    pgw__member_t *m = c->members;
    if (m) {
        do {
            if (m->state == PGW__M_OPENING)
                o++;
            else if (m->state == PGW__M_READY && m->inflight == 0)
                i++;
            else
                u++;
            m = m->next;
        } while (m != c->members);
    }
    *idle = i;
    *in_use = u;
    *opening = o;
}
