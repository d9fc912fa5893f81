/*
 * Deadlines in the sans-IO session: tickets and expiry, without a clock.
 *
 * Every accepted request gets a ticket, increasing in FIFO order, stored in
 * each FIFO entry of its submit (its own Sync included). The driver keeps
 * the time: it learns each deadline through cb.on_deadline and calls
 * pgw_session_expire when one passes. Expiry never removes an entry from the
 * FIFO (the server's replies still have to be matched to it): it marks the
 * entries PGW__DL_EXPIRED, so that their completion reports PGW_ETIMEDOUT,
 * and, for a request not yet running, fires its callback at once and marks
 * it PGW__DL_REPORTED: the entry then only reads and drops its replies.
 *
 * A deadline may end in a cancel, which interrupts whatever the backend
 * runs when the signal lands, not the request it was meant for: the target
 * may have ended just before, and one CancelRequest may even deliver two
 * signals (PostgreSQL signals the backend and its process group), the
 * second after the first interrupted the target. A request already written
 * behind the target would be interrupted then (57014): another caller's,
 * on a pool's connection. So a submit with a deadline holds the output as
 * a COPY does (copy.c): what is queued after it is written only once its
 * last entry has left the FIFO (its ReadyForQuery read), and a driver
 * writes nothing while a cancel is in flight (conn.c), so the next request
 * reaches the backend only after every signal the cancel can send. Requests
 * with deadlines are therefore not pipelined behind one another.
 */
#include "session_internal.h"

int64_t pgw__dl_effective(const pgw_session_t *s, const pgw_request_t *rq)
{
    uint32_t t = rq->timeout_ms;
    if (t == PGW_TIMEOUT_NONE) return 0;
    if (!s->cb.on_deadline) return t ? PGW_ENOTSUP : 0;
    return t ? t : s->fifo.request_timeout_ms;
}

int pgw__dl_hold(pgw_session_t *s, pgw__req_t *r, const pgw_buf_t *b)
{
    pgw__req_aux_t *x = pgw__req_aux(s, r);
    if (!x) return PGW_ENOMEM;
    r->dl |= PGW__DL_HOLDS;
    x->copy_end = b->len;
    return 0;
}

void pgw__dl_announce(pgw_session_t *s, const pgw__req_t *first)
{
    for (const pgw__req_t *r = first; r && !s->free_pending; r = r->next)
        if (r->timeout_ms && s->cb.on_deadline)
            s->cb.on_deadline(s, r->ticket, r->timeout_ms, s->ud);
}

/* Fire r's callback now with PGW_ETIMEDOUT; r stays in the FIFO to read its
 * replies, which are dropped. */
static void report_now(pgw_session_t *s, pgw__req_t *r)
{
    pgw_result_cb cb = r->cb;
    void *ud = r->ud;
    pgw__driver_t driver = pgw__req_driver(r);
    r->cb = NULL;
    r->driver_fn = NULL;
    if (r->aux) {
        r->aux->row_cb = NULL;
        r->aux->copy_data_cb = NULL; /* COPY TO data is discarded too */
    }
    r->row_status = PGW_ETIMEDOUT; /* streamed rows are discarded */
    r->dl |= PGW__DL_REPORTED;     /* still USER: it keeps its result slot for the replies */
    s->fifo.npending--;
    pgw__notify(cb, ud, &driver, PGW_ETIMEDOUT, NULL);
}

PGW_EXTERN int pgw_session_expire(pgw_session_t *s, uint64_t ticket, unsigned flags)
{
    if (!s) return PGW_EINVAL;
    if (s->depth > 0) return PGW_ERECURSIVE;
    pgw__req_t *owner = NULL; /* the entry holding the callback */
    bool found = false;
    for (pgw__req_t *r = s->fifo.head; r; r = r->next) {
        if (r->ticket > ticket) break;
        if (r->ticket != ticket) continue;
        found = true;
        r->dl |= PGW__DL_EXPIRED;
        if (r->retry == PGW__RETRY_ARMED) r->retry = PGW__RETRY_NONE; /* never run again */
        if (!owner && (r->flags & PGW__RF_USER)) owner = r;
    }
    if (!found || !owner) return found ? 0 : PGW_ENOTFOUND;
    if (owner->dl & PGW__DL_REPORTED) return 0;
    /* Running: the oldest pending request, or in the same sync group as it
     * (the server sends a group's replies only at its Sync, so the earlier
     * members may be done while it runs). */
    bool running = owner == s->fifo.head || owner->group == s->fifo.head->group;
    pgw__enter(s);
    pgw__copy_expired(s, owner);
    if (!running || (flags & PGW_EXPIRE_NOW)) report_now(s, owner);
    if (pgw__leave(s)) return PGW_ECANCELED;
    pgw__drain_check(s);
    return running && !(flags & PGW_EXPIRE_NOW) ? 1 : 0;
}

PGW_EXTERN uint64_t pgw_session_oldest_ticket(const pgw_session_t *s)
{
    if (!s) return 0;
    for (const pgw__req_t *r = s->fifo.head; r; r = r->next)
        if (r->ticket) return r->ticket;
    return s->fifo.ticket_seq + 1;
}

PGW_EXTERN uint64_t pgw_session_last_ticket(const pgw_session_t *s)
{
    return s ? s->fifo.ticket_seq : 0;
}
