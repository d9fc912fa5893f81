/*
 * Request deadlines on a connection (conn.h, DEADLINES): one uv timer over
 * a min-heap of (time, ticket), fed by the session's on_deadline hook.
 *
 * The heap is never searched: an entry is checked against the session when
 * its time comes. Tickets grow in FIFO order, so a ticket older than the
 * session's oldest pending one is a completed request, dropped then; when
 * the heap is full, such entries are pruned before it grows, which keeps it
 * within about twice the requests in flight. The timer is restarted only
 * when a new deadline is earlier than the one it waits for (with one
 * timeout for every request, only the first of a pipeline restarts it).
 *
 * When a deadline passes, the session marks the request (pgw_session_expire).
 * If the server is running it, a cancel goes out and a GRACE entry bounds
 * the wait for the server's answer: when it passes with the request still
 * pending, the connection is closed. A request reported at once because it
 * was still queued is remembered in `waiting` and cancelled when it runs
 * (again a few times while it still runs: see cancel_waiting).
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conn_internal.h"

#include <stdio.h>
#include <string.h>

#define PGW__CANCEL_GRACE_MS 1000u
#define PGW__RECANCEL_MS     200u
#define PGW__RECANCEL_TRIES  5

static void on_timer(uv_timer_t *t);

void pgw__dl_init(pgw_conn_t *c)
{
    uv_timer_init(c->loop, &c->dl.timer);
    c->dl.timer.data = c;
}

/* ------------------------------------------------------------------- heap */

static int earlier(const pgw__dl_entry_t *a, const pgw__dl_entry_t *b)
{
    return a->at < b->at || (a->at == b->at && a->ticket < b->ticket);
}

static void sift_down(pgw__dl_entry_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && earlier(&h[l], &h[m])) m = l;
        if (l + 1 < n && earlier(&h[l + 1], &h[m])) m = l + 1;
        if (m == i) return;
        pgw__dl_entry_t tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
}

static void sift_up(pgw__dl_entry_t *h, size_t i)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!earlier(&h[i], &h[p])) return;
        pgw__dl_entry_t tmp = h[i];
        h[i] = h[p];
        h[p] = tmp;
        i = p;
    }
}

static pgw__dl_entry_t pop(pgw__deadlines_t *d)
{
    pgw__dl_entry_t top = d->heap[0];
    d->heap[0] = d->heap[--d->n];
    sift_down(d->heap, d->n, 0);
    return top;
}

/* Drop the entries of completed requests and rebuild the heap. */
static void prune(pgw_conn_t *c)
{
    pgw__deadlines_t *d = &c->dl;
    uint64_t oldest = pgw_session_oldest_ticket(c->s);
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->heap[i].ticket >= oldest) d->heap[k++] = d->heap[i];
    d->n = k;
    for (size_t i = k / 2; i-- > 0;)
        sift_down(d->heap, d->n, i);
}

static int push(pgw_conn_t *c, uint64_t at, uint64_t ticket, int kind, int cancels)
{
    pgw__deadlines_t *d = &c->dl;
    if (d->n == d->cap) {
        prune(c);
        if (d->cap == 0 || d->n * 2 > d->cap) {
            size_t cap = d->cap ? d->cap * 2 : 64;
            pgw__dl_entry_t *h = pgw__realloc(c->alloc, d->heap, cap * sizeof *h);
            if (h) {
                d->heap = h;
                d->cap = cap;
            } else if (d->n == d->cap) {
                return PGW_ENOMEM;
            }
        }
    }
    d->heap[d->n] = (pgw__dl_entry_t){at, ticket, kind, cancels};
    sift_up(d->heap, d->n++);
    return 0;
}

/* Wait for the earliest entry (restarting the timer only when it moved
 * earlier, or the timer is stopped). */
static void rearm(pgw_conn_t *c)
{
    pgw__deadlines_t *d = &c->dl;
    if (d->oom) {
        uv_timer_start(&d->timer, on_timer, 0, 0);
        d->armed_at = uv_now(c->loop);
        return;
    }
    if (d->n == 0) {
        if (d->armed_at) uv_timer_stop(&d->timer);
        d->armed_at = 0;
        return;
    }
    uint64_t at = d->heap[0].at;
    if (d->armed_at && d->armed_at <= at) return;
    uint64_t now = uv_now(c->loop);
    uv_timer_start(&d->timer, on_timer, at > now ? at - now : 0, 0);
    d->armed_at = at;
}

/* ------------------------------------------------------------ the actions */

void pgw__dl_arm(pgw_conn_t *c, uint64_t ticket, uint32_t timeout_ms)
{
    uv_update_time(c->loop); /* the loop's time may be old (a blocking client between calls) */
    if (push(c, uv_now(c->loop) + timeout_ms, ticket, PGW__DL_DEADLINE, 0) < 0) c->dl.oom = 1;
    rearm(c);
}

static int remember_waiting(pgw_conn_t *c, uint64_t ticket)
{
    pgw__deadlines_t *d = &c->dl;
    if (d->nwait == d->wait_cap) {
        size_t cap = d->wait_cap ? d->wait_cap * 2 : 8;
        uint64_t *w = pgw__realloc(c->alloc, d->waiting, cap * sizeof *w);
        if (!w) return PGW_ENOMEM; /* it is then not cancelled: it still runs to its end */
        d->waiting = w;
        d->wait_cap = cap;
    }
    /* Kept in ticket order (the order they run in); with one timeout for
     * every request they come in that order, so this is an append. */
    size_t i = d->nwait++;
    for (; i > 0 && d->waiting[i - 1] > ticket; i--)
        d->waiting[i] = d->waiting[i - 1];
    d->waiting[i] = ticket;
    return 0;
}

/* The cancel's outcome needs no action: the GRACE entry bounds the wait. */
static void on_cancel_sent(pgw_conn_t *c, int status, void *ud)
{
    PGW__UNUSED(c);
    PGW__UNUSED(status);
    PGW__UNUSED(ud);
}

/* The server cannot be made to answer for a timed-out request: close. */
static void give_up(pgw_conn_t *c, const char *why)
{
    char msg[200];
    snprintf(msg, sizeof msg, "request timed out and %s: connection closed", why);
    pgw__conn_errmsg_add(c, msg);
    pgw__conn_fail(c, PGW_ECONNLOST);
}

static uint32_t grace_ms(const pgw_conn_t *c)
{
    return c->cfg.cancel_grace_ms ? c->cfg.cancel_grace_ms : PGW__CANCEL_GRACE_MS;
}

/* A request's deadline passed. Returns 0, or -1 when the connection was
 * closed or failed meanwhile (nothing more to do). */
static int expire(pgw_conn_t *c, uint64_t ticket, uint64_t now)
{
    int ready = c->state == PGW__CONN_READY;
    int rc = pgw_session_expire(c->s, ticket, ready ? 0 : PGW_EXPIRE_NOW);
    if (!c->s || c->state == PGW__CONN_CLOSING || c->state == PGW__CONN_LOST) return -1;
    /* Reported at once: it still runs when its turn comes (after the
     * connect, too), and is cancelled then. */
    if (rc == 0 && (!ready || ticket > pgw_session_oldest_ticket(c->s)))
        (void)remember_waiting(c, ticket);
    if (rc != 1) return 0;
    if (pgw_conn_cancel(c, on_cancel_sent, NULL) < 0 ||
        push(c, now + grace_ms(c), ticket, PGW__DL_GRACE, 0) < 0) {
        give_up(c, "its cancel could not be sent");
        return -1;
    }
    return 0;
}

/* A request reported while queued started running: cancel it, and again
 * every PGW__RECANCEL_MS while it still runs, PGW__RECANCEL_TRIES times at
 * most. A cancel that reaches the backend in the instant between two
 * pipelined commands (while it reads the next one) is ignored by the
 * server; repeating it makes that race harmless. Nobody waits for these:
 * the caller had its answer, and the requests behind have their own
 * deadlines. */
static void cancel_waiting(pgw_conn_t *c, uint64_t ticket, int sent, uint64_t now)
{
    if (pgw_conn_cancel(c, on_cancel_sent, NULL) < 0 || sent + 1 >= PGW__RECANCEL_TRIES) return;
    (void)push(c, now + PGW__RECANCEL_MS, ticket, PGW__DL_RECANCEL, sent + 1);
}

static void recancel(pgw_conn_t *c, const pgw__dl_entry_t *e, uint64_t now)
{
    if (c->state == PGW__CONN_READY && pgw_session_oldest_ticket(c->s) == e->ticket)
        cancel_waiting(c, e->ticket, e->cancels, now);
}

static void on_timer(uv_timer_t *t)
{
    pgw_conn_t *c = t->data;
    pgw__deadlines_t *d = &c->dl;
    d->armed_at = 0;
    if (!c->s) return;
    if (d->oom) {
        d->oom = 0;
        pgw__conn_fail(c, PGW_ENOMEM);
        return;
    }
    uint64_t now = uv_now(c->loop);
    while (d->n && d->heap[0].at <= now) {
        pgw__dl_entry_t e = pop(d);
        if (e.ticket < pgw_session_oldest_ticket(c->s)) continue; /* completed */
        if (e.kind == PGW__DL_RECANCEL) {
            recancel(c, &e, now);
            continue;
        }
        if (e.kind == PGW__DL_GRACE) {
            char why[96];
            snprintf(why, sizeof why, "the server did not answer its cancel within %u ms",
                     (unsigned)grace_ms(c));
            give_up(c, why);
            return;
        }
        if (expire(c, e.ticket, now) < 0) return;
    }
    rearm(c);
}

void pgw__dl_after_read(pgw_conn_t *c)
{
    pgw__deadlines_t *d = &c->dl;
    if (!c->s || c->state != PGW__CONN_READY) return;
    uint64_t oldest = pgw_session_oldest_ticket(c->s);
    size_t i = 0;
    while (i < d->nwait && d->waiting[i] < oldest)
        i++;
    int runs = i < d->nwait && d->waiting[i] == oldest;
    if (runs) i++;
    memmove(d->waiting, d->waiting + i, (d->nwait - i) * sizeof *d->waiting);
    d->nwait -= i;
    if (runs) {
        uv_update_time(c->loop);
        cancel_waiting(c, oldest, 0, uv_now(c->loop));
        rearm(c);
    }
}

void pgw__dl_clear(pgw_conn_t *c)
{
    c->dl.n = 0;
    c->dl.nwait = 0;
    c->dl.oom = 0;
    c->dl.armed_at = 0;
    uv_timer_stop(&c->dl.timer);
}

void pgw__dl_close(pgw_conn_t *c, uv_close_cb cb)
{
    pgw__dl_clear(c);
    uv_close((uv_handle_t *)&c->dl.timer, cb);
}

void pgw__dl_free(pgw_conn_t *c)
{
    pgw__free(c->alloc, c->dl.heap);
    pgw__free(c->alloc, c->dl.waiting);
    c->dl.heap = NULL;
    c->dl.waiting = NULL;
}
