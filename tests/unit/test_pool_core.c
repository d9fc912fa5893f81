/*
 * The pool's sans-IO core (src/pool/core.c) without a server: scripted
 * members through the ops table, time passed by hand. Covers lazy opening
 * and min size, the open rate limit and its backoff, least-in-flight
 * dispatch (an answered request counted until the next is sent) and
 * growth to max, FIFO waiters and their deadlines (pool exhausted vs.
 * server down), reservation of busy members for waiters,
 * release decisions, liveness checks, lifetime with jitter, idle timeout,
 * loss and replacement, routing roles and the max_size they share,
 * counters and shutdown, a server
 * going down (its members checked before they take work again, those
 * still opening held), probes after a failed open, and a member that
 * refuses requests while it moves between connect attempts.
 */
#include "pool/pool_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define MS 1000ull

typedef struct script {
    int open_rc; /* what ops.open returns */
    unsigned opens, closes, checks, grants, fails;
    int last_close_reason, last_fail;
    pgw__member_t *opened[64];
    pgw__waiter_t *granted[64];
    pgw__member_t *granted_m[64];
    pgw__member_t *checked;
} script_t;

static int s_open(void *ud, pgw__member_t *m)
{
    script_t *s = ud;
    if (s->open_rc) return s->open_rc;
    m->h = s;
    s->opened[s->opens++ % 64] = m;
    return 0;
}

static void s_close(void *ud, pgw__member_t *m, int reason)
{
    script_t *s = ud;
    s->closes++;
    s->last_close_reason = reason;
}

static void s_check(void *ud, pgw__member_t *m)
{
    script_t *s = ud;
    s->checks++;
    s->checked = m;
}

static void s_grant(void *ud, pgw__waiter_t *w, pgw__member_t *m)
{
    script_t *s = ud;
    s->granted[s->grants % 64] = w;
    s->granted_m[s->grants % 64] = m;
    s->grants++;
}

static void s_fail(void *ud, pgw__waiter_t *w, int err)
{
    script_t *s = ud;
    s->fails++;
    s->last_fail = err;
}

/* A driver that can always reach another standby. */
static int s_standby_left(void *ud)
{
    (void)ud;
    return 1;
}

static const pgw__core_ops_t ops = {s_open, s_close, s_check, s_grant, s_fail, s_standby_left};

static void init(pgw__core_t *c, script_t *s, pgw__core_cfg_t cfg)
{
    memset(s, 0, sizeof *s);
    pgw__core_init(c, &cfg, &ops, s, NULL);
}

static pgw__waiter_t *waiter(uint64_t deadline)
{
    pgw__waiter_t *w = calloc(1, sizeof *w);
    w->deadline_us = deadline;
    return w;
}

static void test_min_lazy_and_rate_limit(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.min_size = 6, .max_size = 10, .max_connecting = 2});
    assert_int_equal(c.size, 0); /* nothing before the first tick */
    pgw__core_tick(&c, 0);
    assert_int_equal(s.opens, 2); /* at most max_connecting at once */
    assert_int_equal(c.opening, 2);
    pgw__core_opened(&c, s.opened[0], 0, 1 * MS);
    pgw__core_tick(&c, 1 * MS);
    assert_int_equal(s.opens, 3);
    pgw__core_opened(&c, s.opened[1], 0, 2 * MS);
    pgw__core_opened(&c, s.opened[2], 0, 2 * MS);
    pgw__core_tick(&c, 2 * MS);
    assert_int_equal(s.opens, 5);
    pgw__core_opened(&c, s.opened[3], 0, 3 * MS);
    pgw__core_opened(&c, s.opened[4], 0, 3 * MS);
    pgw__core_tick(&c, 3 * MS);
    pgw__core_opened(&c, s.opened[5], 0, 4 * MS);
    pgw__core_tick(&c, 4 * MS);
    assert_int_equal(s.opens, 6); /* min reached: no more */
    assert_int_equal(c.size, 6);
    assert_int_equal(c.st.opened, 6);
    uint32_t idle, in_use, opening;
    pgw__core_counts(&c, &idle, &in_use, &opening);
    assert_int_equal(idle, 6);
    pgw__core_shutdown(&c);
    assert_int_equal(s.closes, 6);
    assert_int_equal(s.last_close_reason, PGW__CLOSE_SHUTDOWN);
}

static void test_backoff_after_failures(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s,
         (pgw__core_cfg_t){
             .min_size = 1, .max_size = 2, .backoff_min_us = 100 * MS, .backoff_max_us = 400 * MS});
    pgw__core_tick(&c, 0);
    assert_int_equal(s.opens, 1);
    pgw__core_opened(&c, s.opened[0], -111 /* UV_ECONNREFUSED */, 0);
    assert_int_equal(c.size, 0);
    uint64_t next = pgw__core_tick(&c, 1 * MS);
    assert_int_equal(s.opens, 1); /* backing off */
    assert_int_equal(next, 100 * MS);
    /* A one-shot request meanwhile: no member, none may open: the error. */
    int err = 0;
    assert_null(pgw__core_pick(&c, 2 * MS, PGW__ROLE_RW, &err));
    assert_int_equal(err, -111);
    pgw__core_tick(&c, 100 * MS);
    assert_int_equal(s.opens, 2);
    pgw__core_opened(&c, s.opened[1], -111, 100 * MS);
    assert_int_equal(pgw__core_tick(&c, 101 * MS), 300 * MS); /* doubled */
    pgw__core_tick(&c, 300 * MS);
    pgw__core_opened(&c, s.opened[2], -111, 300 * MS);
    assert_int_equal(pgw__core_tick(&c, 301 * MS), 700 * MS); /* capped at 400 */
    pgw__core_tick(&c, 700 * MS);
    pgw__core_opened(&c, s.opened[3], 0, 700 * MS); /* success resets */
    assert_int_equal(c.backoff.cur, 0);
    assert_int_equal(c.st.open_failures, 3);
    /* A waiter timing out while nothing is up after a failure gets the
     * connect error, not PGW_EPOOLTIMEOUT. */
    pgw__core_lost(&c, s.opened[3], 800 * MS);
    pgw__core_tick(&c, 800 * MS);
    pgw__core_opened(&c, s.opened[4], -111, 800 * MS);
    pgw__waiter_t *w = waiter(900 * MS);
    pgw__core_acquire(&c, w, 801 * MS);
    pgw__core_tick(&c, 900 * MS);
    assert_int_equal(s.fails, 1);
    assert_int_equal(s.last_fail, -111);
    free(w);
    pgw__core_shutdown(&c);
}

static void test_least_in_flight_and_growth(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 3, .max_connecting = 3});
    int err;
    pgw__member_t *a = pgw__core_pick(&c, 0, 0, &err); /* lazy: opens one */
    assert_non_null(a);
    assert_int_equal(a->state, PGW__M_OPENING);
    pgw__core_sent(&c, a);
    pgw__member_t *b = pgw__core_pick(&c, 0, 0, &err); /* a busy: another */
    assert_ptr_not_equal(a, b);
    pgw__core_sent(&c, b);
    pgw__member_t *m3 = pgw__core_pick(&c, 0, 0, &err);
    pgw__core_sent(&c, m3);
    assert_int_equal(c.size, 3);
    for (int i = 0; i < 30; i++)
        pgw__core_sent(&c, pgw__core_pick(&c, 0, 0, &err));
    assert_int_equal(c.size, 3); /* max */
    assert_int_equal(a->inflight, 11);
    assert_int_equal(b->inflight, 11);
    assert_int_equal(m3->inflight, 11);
    pgw__core_opened(&c, a, 0, 1);
    pgw__core_done(&c, a, 2);
    assert_ptr_equal(pgw__core_pick(&c, 3, 0, &err), a); /* least first */
    pgw__core_shutdown(&c);
}

/* A member whose request just completed counts it until the next request
 * is sent: a client that keeps one request outstanding (and sends the next
 * from the completion's callback) moves between equally busy members
 * instead of staying on the one that answered it. */
static void test_answered_member_counts_until_next_send(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 3, .max_connecting = 3});
    int err;
    pgw__member_t *m[3];
    for (int i = 0; i < 3; i++) {
        m[i] = pgw__core_pick(&c, 0, 0, &err);
        assert_non_null(m[i]);
        pgw__core_sent(&c, m[i]);
        pgw__core_sent(&c, m[i]);
    }
    assert_ptr_not_equal(m[0], m[1]);
    assert_ptr_not_equal(m[1], m[2]);
    for (int i = 0; i < 3; i++)
        pgw__core_opened(&c, m[i], 0, 1);
    /* Two in flight on each; one on m[2] completes. */
    pgw__core_done(&c, m[2], 2);
    assert_int_equal(m[2]->inflight, 1);
    pgw__member_t *next = pgw__core_pick(&c, 3, 0, &err);
    assert_ptr_equal(next, m[0]); /* the first of the equals, not m[2] */
    pgw__core_sent(&c, next);
    /* Sent: m[2] counts what it has again, the least. */
    assert_ptr_equal(pgw__core_pick(&c, 3, 0, &err), m[2]);
    /* The member that answered keeps the request when it alone is least
     * even counting the answer. */
    pgw__core_done(&c, m[2], 4);
    pgw__core_done(&c, m[2], 4);
    assert_int_equal(m[2]->inflight, 0);
    assert_ptr_equal(pgw__core_pick(&c, 5, 0, &err), m[2]);
    pgw__core_shutdown(&c);
}

static void test_waiters_fifo_timeout_and_reserve(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 2});
    pgw__waiter_t *w1 = waiter(PGW__NEVER), *w2 = waiter(50 * MS), *w3 = waiter(PGW__NEVER);
    pgw__core_acquire(&c, w1, 0);
    assert_int_equal(s.opens, 1); /* opened for it */
    pgw__core_acquire(&c, w2, 0);
    assert_int_equal(s.opens, 2);
    pgw__core_acquire(&c, w3, 0);
    assert_int_equal(s.opens, 2); /* max */
    pgw__core_opened(&c, s.opened[1], 0, 1 * MS);
    assert_int_equal(s.grants, 1);
    assert_ptr_equal(s.granted[0], w1); /* FIFO, whichever member came first */
    pgw__core_tick(&c, 50 * MS);
    assert_int_equal(s.fails, 1);
    assert_int_equal(s.last_fail, PGW_EPOOLTIMEOUT);
    assert_int_equal(c.st.timeouts, 1);
    assert_int_equal(c.nwaiters, 1);
    pgw__core_opened(&c, s.opened[0], 0, 60 * MS);
    assert_int_equal(s.grants, 2);
    assert_ptr_equal(s.granted[1], w3);
    assert_int_equal(c.st.acquires, 2);
    assert_int_equal(c.st.acquire_wait_max_us, 60 * MS);
    /* Both out; release one clean: back to READY. */
    pgw__member_t *m1 = s.granted_m[0], *m2 = s.granted_m[1];
    pgw__core_release(&c, m1, PGW__REL_KEEP, 70 * MS);
    assert_int_equal(m1->state, PGW__M_READY);
    /* One-shot load on m1, then a waiter: m1 is reserved (drain) and
     * handed over when its requests are done. */
    int err;
    assert_ptr_equal(pgw__core_pick(&c, 71 * MS, 0, &err), m1);
    pgw__core_sent(&c, m1);
    pgw__waiter_t *w4 = waiter(PGW__NEVER);
    pgw__core_acquire(&c, w4, 72 * MS);
    assert_int_equal(m1->drain, 1);
    assert_null(pgw__core_pick(&c, 73 * MS, 0, &err)); /* nothing free for one-shot */
    pgw__core_done(&c, m1, 74 * MS);
    assert_int_equal(s.grants, 3);
    assert_ptr_equal(s.granted_m[2], m1);
    assert_int_equal(m1->drain, 0);
    /* Forgotten waiters leave no reservation behind. */
    pgw__core_release(&c, m1, PGW__REL_KEEP, 75 * MS);
    pgw__core_sent(&c, m1);
    pgw__waiter_t *w5 = waiter(PGW__NEVER);
    pgw__core_acquire(&c, w5, 76 * MS);
    assert_int_equal(m1->drain, 1);
    pgw__core_forget_waiter(&c, w5);
    assert_int_equal(m1->drain, 0);
    (void)m2;
    pgw__core_shutdown(&c);
    free(w1), free(w2), free(w3), free(w4), free(w5);
}

static void test_release_decisions(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 1});
    assert_int_equal(pgw__core_release_action(&c, 'I', 0, 0), PGW__REL_KEEP);
    assert_int_equal(pgw__core_release_action(&c, 'T', 0, 0), PGW__REL_ROLLBACK);
    assert_int_equal(pgw__core_release_action(&c, 'E', 0, 0), PGW__REL_ROLLBACK);
    assert_int_equal(pgw__core_release_action(&c, 'T', 1, 0), PGW__REL_CLOSE); /* COPY */
    assert_int_equal(pgw__core_release_action(&c, 'I', 0, 1), PGW__REL_CLOSE); /* portal */
    assert_int_equal(pgw__core_release_action(&c, 0, 0, 0), PGW__REL_CLOSE);
    c.cfg.reset_on_release = 1;
    assert_int_equal(pgw__core_release_action(&c, 'I', 0, 0), PGW__REL_RESET);
    c.cfg.reset_on_release = 0;

    pgw__waiter_t *w = waiter(PGW__NEVER), *w2 = waiter(PGW__NEVER);
    pgw__core_acquire(&c, w, 0);
    pgw__core_opened(&c, s.opened[0], 0, 0);
    pgw__member_t *m = s.granted_m[0];
    pgw__core_acquire(&c, w2, 1);
    /* Dirty release: cleaning, not handed to w2 until cleaned. */
    pgw__core_release(&c, m, PGW__REL_ROLLBACK, 2);
    assert_int_equal(m->state, PGW__M_CLEANING);
    assert_int_equal(s.grants, 1);
    pgw__core_cleaned(&c, m, 1, 3);
    assert_int_equal(s.grants, 2);
    assert_ptr_equal(s.granted[1], w2);
    /* Unclean: closed and replaced for the next waiter. */
    pgw__core_acquire(&c, w, 4);
    pgw__core_release(&c, m, PGW__REL_CLOSE, 5);
    assert_int_equal(s.closes, 1);
    assert_int_equal(s.last_close_reason, PGW__CLOSE_DIRTY);
    assert_int_equal(s.opens, 2);
    pgw__core_opened(&c, s.opened[1], 0, 6);
    assert_int_equal(s.grants, 3);
    /* A failed ROLLBACK closes it too. */
    m = s.granted_m[2];
    pgw__core_release(&c, m, PGW__REL_ROLLBACK, 7);
    pgw__core_cleaned(&c, m, 0, 8);
    assert_int_equal(s.closes, 2);
    assert_int_equal(s.last_close_reason, PGW__CLOSE_FAILED);
    assert_int_equal(c.size, 0);
    pgw__core_shutdown(&c);
    free(w), free(w2);
}

static void test_liveness(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 1, .liveness_after_us = 1000 * MS});
    pgw__waiter_t *w = waiter(PGW__NEVER);
    pgw__core_acquire(&c, w, 0);
    pgw__core_opened(&c, s.opened[0], 0, 0);
    assert_int_equal(s.grants, 1); /* fresh: no check */
    pgw__member_t *m = s.granted_m[0];
    pgw__core_release(&c, m, PGW__REL_KEEP, 10 * MS);
    pgw__core_acquire(&c, w, 500 * MS);
    assert_int_equal(s.checks, 0);
    assert_int_equal(s.grants, 2);
    pgw__core_release(&c, m, PGW__REL_KEEP, 600 * MS);
    pgw__core_acquire(&c, w, 1600 * MS); /* idle 1 s: checked first */
    assert_int_equal(s.checks, 1);
    assert_int_equal(m->state, PGW__M_CHECKING);
    assert_int_equal(s.grants, 2);
    pgw__core_checked(&c, m, 0, 1601 * MS); /* dead: dropped, another opened */
    assert_int_equal(s.closes, 1);
    assert_int_equal(s.opens, 2);
    pgw__core_opened(&c, s.opened[1], 0, 1602 * MS);
    assert_int_equal(s.grants, 3);
    pgw__core_release(&c, s.granted_m[2], PGW__REL_KEEP, 1603 * MS);
    pgw__core_acquire(&c, w, 3000 * MS);
    pgw__core_checked(&c, s.checked, 1, 3001 * MS);
    assert_int_equal(s.grants, 4);
    pgw__core_shutdown(&c);
    free(w);
}

static void test_lifetime_jitter_and_idle(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s,
         (pgw__core_cfg_t){.min_size = 1,
                           .max_size = 4,
                           .max_lifetime_us = 10000 * MS,
                           .lifetime_jitter_us = 2000 * MS,
                           .idle_timeout_us = 500 * MS,
                           .seed = 42});
    int err;
    pgw__member_t *m[3];
    for (int i = 0; i < 3; i++) {
        m[i] = pgw__core_pick(&c, 0, 0, &err);
        pgw__core_sent(&c, m[i]);
    }
    for (int i = 0; i < 3; i++) {
        pgw__core_opened(&c, m[i], 0, 0);
        assert_true(m[i]->expires_us >= 8000 * MS && m[i]->expires_us <= 10000 * MS);
    }
    assert_true(m[0]->expires_us != m[1]->expires_us || m[1]->expires_us != m[2]->expires_us);
    for (int i = 0; i < 3; i++)
        pgw__core_done(&c, m[i], 100 * MS);
    uint64_t next = pgw__core_tick(&c, 200 * MS);
    assert_int_equal(next, 600 * MS);
    pgw__core_tick(&c, 600 * MS); /* idle above min: closed down to min */
    assert_int_equal(c.size, 1);
    assert_int_equal(s.closes, 2);
    assert_int_equal(s.last_close_reason, PGW__CLOSE_IDLE);
    /* The survivor retires at its lifetime; busy, it is closed once done;
     * min brings a replacement. */
    pgw__member_t *left = c.members;
    pgw__core_sent(&c, left);
    pgw__core_tick(&c, 10000 * MS);
    assert_int_equal(left->retire, 1);
    assert_int_equal(s.closes, 2);
    pgw__member_t *n = pgw__core_pick(&c, 10001 * MS, 0, &err);
    assert_ptr_not_equal(n, left); /* a retiring member takes nothing new */
    pgw__core_sent(&c, n);
    pgw__core_done(&c, left, 10002 * MS);
    assert_int_equal(s.closes, 3);
    assert_int_equal(s.last_close_reason, PGW__CLOSE_LIFETIME);
    pgw__core_shutdown(&c);
}

static void test_lost_and_replaced(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.min_size = 3, .max_size = 3, .max_connecting = 3});
    pgw__core_tick(&c, 0);
    for (int i = 0; i < 3; i++)
        pgw__core_opened(&c, s.opened[i], 0, 0);
    for (int i = 0; i < 3; i++)
        pgw__core_lost(&c, s.opened[i], 10);
    assert_int_equal(c.size, 0);
    assert_int_equal(c.st.lost, 3);
    pgw__core_tick(&c, 11);
    assert_int_equal(s.opens, 6); /* converges back to min */
    for (int i = 3; i < 6; i++)
        pgw__core_opened(&c, s.opened[i], 0, 12);
    uint32_t idle, in_use, opening;
    pgw__core_counts(&c, &idle, &in_use, &opening);
    assert_int_equal(idle, 3);
    pgw__core_shutdown(&c);
}

static void test_routing_roles(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 4, .route = 1});
    int err;
    pgw__member_t *rw = pgw__core_pick(&c, 0, PGW__ROLE_RW, &err);
    assert_int_equal(rw->role, PGW__ROLE_RW);
    pgw__member_t *ro = pgw__core_pick(&c, 0, PGW__ROLE_RO, &err);
    assert_int_equal(ro->role, PGW__ROLE_RO);
    pgw__core_opened(&c, rw, 0, 1);
    pgw__core_opened(&c, ro, 0, 1);
    pgw__waiter_t *w = waiter(PGW__NEVER);
    w->role = PGW__ROLE_RO;
    pgw__core_acquire(&c, w, 2);
    assert_ptr_equal(s.granted_m[0], ro);
    pgw__waiter_t *w2 = waiter(PGW__NEVER);
    pgw__core_acquire(&c, w2, 3);
    assert_ptr_equal(s.granted_m[1], rw);
    /* Without routing every request is the primary's. */
    pgw__core_t c2;
    script_t s2;
    init(&c2, &s2, (pgw__core_cfg_t){.max_size = 2});
    pgw__member_t *x = pgw__core_pick(&c2, 0, PGW__ROLE_RO, &err);
    assert_int_equal(x->role, PGW__ROLE_RW);
    pgw__core_shutdown(&c2);
    pgw__core_shutdown(&c);
    free(w), free(w2);
}

/* Routing: a member that is up takes one-shot requests before one still
 * opening (which may reach a server of the wrong kind first and fail what
 * it carries); one opening takes them only when none of its role is up. */
static void test_routing_prefers_ready(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 4, .route = 1, .pipeline_target = 1});
    int err = 0;
    pgw__member_t *a = pgw__core_pick(&c, 0, PGW__ROLE_RW, &err);
    assert_non_null(a);
    assert_int_equal(a->state, PGW__M_OPENING);
    pgw__core_sent(&c, a);
    /* Nothing up: the one opening is busy, so a second one opens. */
    pgw__member_t *b = pgw__core_pick(&c, 0, PGW__ROLE_RW, &err);
    assert_ptr_not_equal(b, a);
    pgw__core_sent(&c, b);
    pgw__core_opened(&c, a, 0, 1);
    /* a is up with one in flight; another opens (target 1) and takes the
     * next, but once the pool is at max the busy member that is up is
     * chosen over those still opening, whatever their load. */
    pgw__member_t *x = pgw__core_pick(&c, 2, PGW__ROLE_RW, &err);
    assert_int_equal(x->state, PGW__M_OPENING);
    pgw__core_sent(&c, x);
    pgw__member_t *y = pgw__core_pick(&c, 2, PGW__ROLE_RW, &err);
    pgw__core_sent(&c, y);
    assert_int_equal(c.size, 4);
    for (int i = 0; i < 5; i++) {
        pgw__member_t *m = pgw__core_pick(&c, 3, PGW__ROLE_RW, &err);
        assert_ptr_equal(m, a);
        pgw__core_sent(&c, m);
    }
    assert_int_equal(a->inflight, 6);
    pgw__core_shutdown(&c);
    /* The read-only role has nothing up: the opening members of its own
     * role are used, never the primary's while one can open. */
    init(&c, &s, (pgw__core_cfg_t){.max_size = 2, .route = 1});
    pgw__member_t *rw = pgw__core_pick(&c, 0, PGW__ROLE_RW, &err);
    pgw__core_opened(&c, rw, 0, 1);
    pgw__member_t *ro = pgw__core_pick(&c, 2, PGW__ROLE_RO, &err);
    assert_int_equal(ro->role, PGW__ROLE_RO);
    assert_ptr_equal(pgw__core_pick(&c, 2, PGW__ROLE_RO, &err), ro);
    pgw__core_shutdown(&c);
}

/* Routing: the roles share max_connecting, but the opens of one role do
 * not keep the other from opening its first member: read-only work that
 * arrives while the primary's connections fill max_connecting opens a
 * read-only member (within max_size) instead of going to the primary. */
static void test_role_opens_past_other_roles_opens(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 8, .max_connecting = 1, .route = 1});
    int err = 0;
    pgw__member_t *rw = pgw__core_pick(&c, 0, PGW__ROLE_RW, &err);
    assert_non_null(rw);
    assert_int_equal(rw->state, PGW__M_OPENING);
    pgw__member_t *ro = pgw__core_pick(&c, 0, PGW__ROLE_RO, &err);
    assert_non_null(ro);
    assert_int_equal(ro->role, PGW__ROLE_RO);
    assert_int_equal(ro->state, PGW__M_OPENING);
    assert_int_equal(s.opens, 2);
    /* One open per role past the limit, not more: the next read-only
     * request rides the member opening, and the next read-write one too. */
    pgw__core_sent(&c, ro);
    pgw__core_sent(&c, rw);
    assert_ptr_equal(pgw__core_pick(&c, 0, PGW__ROLE_RO, &err), ro);
    assert_ptr_equal(pgw__core_pick(&c, 0, PGW__ROLE_RW, &err), rw);
    assert_int_equal(s.opens, 2);
    pgw__core_shutdown(&c);
}

/* Routing: the roles share max_size. At max_size, a one-shot request that
 * no member of its role can take (none up or opening), or a checkout of a
 * role without members, closes the other role's member idle longest and
 * opens one of its own, rather than going to the primary (or waiting out
 * its deadline) while connections idle. A checkout of a role with members
 * waits for them; only when no member is idle does read-only work fall
 * back to the primary's. */
static void test_roles_share_max_size(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 3, .route = 1, .pipeline_target = 1});
    int err = 0;
    pgw__member_t *rw[3];
    for (int i = 0; i < 3; i++) {
        rw[i] = pgw__core_pick(&c, 0, PGW__ROLE_RW, &err);
        assert_non_null(rw[i]);
        pgw__core_sent(&c, rw[i]);
        pgw__core_opened(&c, rw[i], 0, (uint64_t)(i + 1));
    }
    for (int i = 2; i >= 0; i--) /* rw[2] idle longest */
        pgw__core_done(&c, rw[i], (uint64_t)(10 - i));
    assert_int_equal(c.size, 3);
    /* A read-only checkout, no read-only member: rw[2] makes room. */
    pgw__waiter_t *w = waiter(PGW__NEVER), *w2 = waiter(PGW__NEVER);
    w->role = w2->role = PGW__ROLE_RO;
    pgw__core_acquire(&c, w, 20);
    assert_int_equal(s.closes, 1);
    assert_int_equal(s.last_close_reason, PGW__CLOSE_IDLE);
    assert_int_equal(s.opens, 4);
    pgw__member_t *ro = s.opened[3];
    assert_int_equal(ro->role, PGW__ROLE_RO);
    pgw__core_opened(&c, ro, 0, 21);
    assert_int_equal(s.grants, 1);
    assert_ptr_equal(s.granted_m[0], ro);
    assert_int_equal(c.size, 3);
    /* A read-only request while ro is checked out: rw[1] makes room, a
     * read-only member opens and takes it. */
    pgw__member_t *ro2 = pgw__core_pick(&c, 22, PGW__ROLE_RO, &err);
    assert_non_null(ro2);
    assert_int_equal(ro2->role, PGW__ROLE_RO);
    assert_int_equal(s.closes, 2);
    assert_int_equal(c.size, 3);
    pgw__core_sent(&c, ro2);
    pgw__core_opened(&c, ro2, 0, 23);
    /* A read-only checkout with members of its own, busy: it waits for
     * them (rw[0] idle stays). */
    pgw__core_acquire(&c, w2, 24);
    assert_int_equal(s.closes, 2);
    assert_int_equal(s.grants, 1);
    pgw__core_done(&c, ro2, 25);
    assert_int_equal(s.grants, 2);
    assert_ptr_equal(s.granted_m[1], ro2);
    /* Every member busy (both read-only ones out, rw[0] running one):
     * read-only work goes to the primary's member, nothing is closed. */
    pgw__core_sent(&c, rw[0]);
    pgw__member_t *x = pgw__core_pick(&c, 26, PGW__ROLE_RO, &err);
    assert_ptr_equal(x, rw[0]);
    assert_int_equal(s.closes, 2);
    assert_int_equal(c.size, 3);
    pgw__core_shutdown(&c);
    /* Without routing there is one role: a full pool only grows the
     * pipelines. */
    init(&c, &s, (pgw__core_cfg_t){.max_size = 1, .pipeline_target = 1});
    x = pgw__core_pick(&c, 0, PGW__ROLE_RW, &err);
    pgw__core_opened(&c, x, 0, 1);
    assert_ptr_equal(pgw__core_pick(&c, 2, PGW__ROLE_RO, &err), x);
    assert_int_equal(s.closes, 0);
    pgw__core_shutdown(&c);
    free(w), free(w2);
}

/* Open a member of server (1, 2, ...) with one request in flight. */
static pgw__member_t *busy_member(pgw__core_t *c, uint32_t server, uint64_t now)
{
    int err = 0;
    pgw__member_t *m = pgw__core_pick(c, now, 0, &err);
    assert_non_null(m);
    assert_int_equal(m->state, PGW__M_OPENING);
    pgw__core_sent(c, m);
    m->server = server;
    pgw__core_opened(c, m, 0, now);
    return m;
}

/* A server going down: its free members are checked at once, its busy
 * ones once free, those still opening are held and checked once up; none
 * takes work (one-shot or checkout) before its check passed; members of
 * other servers and members opened afterwards serve at once. */
static void test_server_down(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 4, .max_connecting = 4, .pipeline_target = 1});
    pgw__member_t *a = busy_member(&c, 1, 0), *b = busy_member(&c, 1, 0);
    pgw__member_t *x = busy_member(&c, 2, 0);
    int err = 0;
    pgw__member_t *d = pgw__core_pick(&c, 0, 0, &err); /* every one busy: d opens */
    assert_int_equal(d->state, PGW__M_OPENING);
    pgw__core_sent(&c, d);
    pgw__core_done(&c, b, 1);
    pgw__core_done(&c, x, 1);

    pgw__core_server_down(&c, 1, 1, 2);
    assert_int_equal(s.checks, 1); /* b, free: at once */
    assert_ptr_equal(s.checked, b);
    assert_int_equal(b->state, PGW__M_CHECKING);
    assert_int_equal(a->state, PGW__M_READY); /* busy: once free */
    assert_int_equal(a->recheck, 1);
    assert_int_equal(d->hold, 1);
    assert_int_equal(d->recheck, 1);
    assert_int_equal(x->recheck, 0); /* another server */
    /* One-shot work goes to the other server's member only. */
    for (int i = 0; i < 3; i++) {
        pgw__member_t *m = pgw__core_pick(&c, 3, 0, &err);
        assert_ptr_equal(m, x);
        pgw__core_sent(&c, m);
    }
    /* A checkout waits for a member that passed its check. */
    pgw__waiter_t *w = waiter(PGW__NEVER);
    pgw__core_acquire(&c, w, 4);
    assert_int_equal(s.grants, 0);
    pgw__core_done(&c, a, 5); /* a free: checked */
    assert_int_equal(s.checks, 2);
    assert_ptr_equal(s.checked, a);
    pgw__core_checked(&c, a, 0, 6); /* a did not answer: closed */
    assert_int_equal(s.closes, 1);
    assert_int_equal(s.last_close_reason, PGW__CLOSE_FAILED);
    /* d comes up there with its request still to run: checked once free. */
    d->server = 1;
    pgw__core_opened(&c, d, 0, 7);
    assert_int_equal(d->hold, 0);
    assert_int_equal(d->state, PGW__M_READY);
    assert_int_equal(s.checks, 2);
    /* Not d: x is busy and a's place is free, so a member opens, and one
     * opened after the event takes requests while it opens. */
    pgw__member_t *n = pgw__core_pick(&c, 8, 0, &err);
    assert_int_equal(n->state, PGW__M_OPENING);
    assert_int_equal(n->hold, 0);
    pgw__core_sent(&c, n);
    pgw__core_done(&c, d, 9);
    assert_int_equal(s.checks, 3);
    assert_ptr_equal(s.checked, d);
    pgw__core_checked(&c, b, 1, 10); /* b answered: the waiter's */
    assert_int_equal(s.grants, 1);
    assert_ptr_equal(s.granted_m[0], b);
    assert_int_equal(c.down_server, 0);          /* the server proved healthy */
    assert_int_equal(d->state, PGW__M_CHECKING); /* d's own check still runs */
    pgw__core_checked(&c, d, 1, 11);
    assert_int_equal(d->state, PGW__M_READY);
    assert_ptr_equal(pgw__core_pick(&c, 12, 0, &err), d); /* back in rotation */
    pgw__core_shutdown(&c);
    free(w);
}

/* The server goes down again while a member's check runs: that answer
 * came before the event, so it is checked once more. */
static void test_server_down_during_check(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 2});
    pgw__member_t *m = busy_member(&c, 7, 0);
    pgw__core_done(&c, m, 1);
    pgw__core_server_down(&c, 7, 1, 2);
    assert_int_equal(s.checks, 1);
    pgw__core_server_down(&c, 7, 0, 3);
    assert_int_equal(s.checks, 1);
    pgw__core_checked(&c, m, 1, 4);
    assert_int_equal(s.checks, 2);
    assert_int_equal(m->state, PGW__M_CHECKING);
    pgw__core_checked(&c, m, 1, 5);
    assert_int_equal(m->state, PGW__M_READY);
    int err = 0;
    assert_ptr_equal(pgw__core_pick(&c, 6, 0, &err), m);
    pgw__core_server_down(&c, 0, 1, 7); /* no server: nothing */
    assert_int_equal(s.checks, 2);
    pgw__core_shutdown(&c);
}

/* Signs of one episode (the losses of a server's connections, one after
 * the other): the members opened since its first sign are new backends,
 * which later signs leave alone; one of them coming up there ends it. */
static void test_server_down_episode(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 4, .max_connecting = 4, .pipeline_target = 1});
    pgw__member_t *a = busy_member(&c, 1, 0);
    int err = 0;
    pgw__member_t *o = pgw__core_pick(&c, 1, 0, &err); /* a busy: o opens */
    pgw__core_sent(&c, o);
    pgw__core_server_down(&c, 1, 1, 2); /* first sign */
    assert_int_equal(o->hold, 1);
    assert_int_equal(a->recheck, 1);
    pgw__member_t *n = pgw__core_pick(&c, 3, 0, &err);
    assert_ptr_not_equal(n, o);
    assert_int_equal(n->state, PGW__M_OPENING);
    pgw__core_sent(&c, n);
    pgw__core_lost(&c, a, 4);
    pgw__core_server_down(&c, 1, 1, 4); /* a's loss: the same episode */
    assert_int_equal(n->hold, 0);
    assert_int_equal(n->recheck, 0);
    n->server = 1;
    pgw__core_opened(&c, n, 0, 5); /* a new backend there: over */
    assert_int_equal(c.down_server, 0);
    assert_int_equal(n->state, PGW__M_READY);
    pgw__core_server_down(&c, 1, 1, 6); /* a new episode */
    assert_int_equal(n->recheck, 1);
    assert_int_equal(s.checks, 0); /* n is busy */
    /* o, still opening, is held until the server proves healthy: n's
     * check passes, and o takes requests again (no check once up). */
    assert_int_equal(o->hold, 1);
    pgw__core_done(&c, n, 7);
    assert_int_equal(s.checks, 1);
    pgw__core_checked(&c, n, 1, 8);
    assert_int_equal(o->hold, 0);
    assert_int_equal(o->recheck, 0);
    pgw__core_shutdown(&c);
}

/* A refused connect marks the members up on that server, not those still
 * opening: one reaching that server now is refused too. */
static void test_refusal_spares_opening(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 3, .pipeline_target = 1});
    pgw__member_t *m = busy_member(&c, 3, 0);
    int err = 0;
    pgw__member_t *o = pgw__core_pick(&c, 1, 0, &err);
    assert_int_equal(o->state, PGW__M_OPENING);
    pgw__core_server_down(&c, 3, 0, 2);
    assert_int_equal(m->recheck, 1);
    assert_int_equal(o->hold, 0);
    assert_int_equal(o->recheck, 0);
    assert_ptr_equal(pgw__core_pick(&c, 3, 0, &err), o);
    pgw__core_shutdown(&c);
}

/* After a failed open the members being opened are probes: requests are
 * refused with the open's error instead of waiting on a connect that is
 * likely to fail too, until an open succeeds. */
static void test_probes_after_failed_open(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 3, .backoff_min_us = 10 * MS});
    int err = 0;
    pgw__member_t *a = pgw__core_pick(&c, 0, 0, &err);
    pgw__core_sent(&c, a);
    pgw__core_opened(&c, a, -111 /* UV_ECONNREFUSED */, 1 * MS);
    assert_null(pgw__core_pick(&c, 2 * MS, 0, &err)); /* backing off */
    assert_int_equal(err, -111);
    err = 0;
    assert_null(pgw__core_pick(&c, 11 * MS, 0, &err)); /* a probe opens */
    assert_int_equal(err, -111);
    assert_int_equal(s.opens, 2);
    assert_int_equal(c.opening, 1);
    pgw__member_t *probe = s.opened[1];
    pgw__core_opened(&c, probe, 0, 12 * MS);
    assert_ptr_equal(pgw__core_pick(&c, 13 * MS, 0, &err), probe);
    pgw__core_sent(&c, probe);
    /* Opens succeed again: one being opened takes requests. */
    pgw__member_t *n = pgw__core_pick(&c, 14 * MS, 0, &err);
    assert_int_equal(n->state, PGW__M_OPENING);
    pgw__core_shutdown(&c);
}

/* A member still opening that fails what it carried (it left a server of
 * the wrong kind) refuses requests until its next attempt starts: none is
 * picked for it meanwhile, and it takes them again afterwards. */
static void test_between_attempts(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 1});
    int err = 0;
    pgw__member_t *a = pgw__core_pick(&c, 0, 0, &err);
    pgw__core_sent(&c, a);
    pgw__core_between_attempts(&c, a, 1);
    assert_null(pgw__core_pick(&c, 1, 0, &err)); /* and no room for another */
    assert_int_equal(err, PGW_ECONNECT);
    pgw__core_between_attempts(&c, a, 0);
    assert_ptr_equal(pgw__core_pick(&c, 2, 0, &err), a);
    pgw__core_opened(&c, a, 0, 3);
    pgw__core_between_attempts(&c, a, 1); /* only while opening */
    assert_int_equal(a->between, 0);
    pgw__core_shutdown(&c);
}

static void test_shutdown_fails_waiters(void **state)
{
    pgw__core_t c;
    script_t s;
    init(&c, &s, (pgw__core_cfg_t){.max_size = 1});
    pgw__waiter_t *w = waiter(PGW__NEVER);
    pgw__core_acquire(&c, w, 0);
    pgw__core_shutdown(&c);
    assert_int_equal(s.fails, 1);
    assert_int_equal(s.last_fail, PGW_ECLOSED);
    assert_int_equal(c.size, 0);
    int err = 0;
    assert_null(pgw__core_pick(&c, 1, 0, &err));
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_min_lazy_and_rate_limit),
        cmocka_unit_test(test_backoff_after_failures),
        cmocka_unit_test(test_least_in_flight_and_growth),
        cmocka_unit_test(test_answered_member_counts_until_next_send),
        cmocka_unit_test(test_waiters_fifo_timeout_and_reserve),
        cmocka_unit_test(test_release_decisions),
        cmocka_unit_test(test_liveness),
        cmocka_unit_test(test_lifetime_jitter_and_idle),
        cmocka_unit_test(test_lost_and_replaced),
        cmocka_unit_test(test_routing_roles),
        cmocka_unit_test(test_routing_prefers_ready),
        cmocka_unit_test(test_role_opens_past_other_roles_opens),
        cmocka_unit_test(test_roles_share_max_size),
        cmocka_unit_test(test_server_down),
        cmocka_unit_test(test_server_down_during_check),
        cmocka_unit_test(test_server_down_episode),
        cmocka_unit_test(test_refusal_spares_opening),
        cmocka_unit_test(test_probes_after_failed_open),
        cmocka_unit_test(test_between_attempts),
        cmocka_unit_test(test_shutdown_fails_waiters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
