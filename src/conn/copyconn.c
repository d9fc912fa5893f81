/*
 * The connection's side of COPY FROM and write backpressure: pulling the
 * session's COPY source as the socket takes the output, and the drain
 * notice. See BACKPRESSURE in conn.h.
 */
#define _DEFAULT_SOURCE
#include "conn/conn_internal.h"

/* Rounds of pull-and-write per loop turn while the socket takes it all:
 * a few MiB, or as many as fit in PUMP_SLICE_NS (a slow source), then the
 * loop's other handles get their turn; the next writable event goes on. */
#define PUMP_ROUNDS   4
#define PUMP_SLICE_NS (2u * 1000u * 1000u)

/* A COPY source waits for room in the output, and the socket can take it. */
static int pump_wanted(const pgw_conn_t *c)
{
    return c->s && c->sock && !c->writing && c->state != PGW__CONN_CLOSING &&
           pgw_session_copy_wants_room(c->s);
}

void pgw__conn_copy_pump(pgw_conn_t *c)
{
    /* Every service turn comes here: the clock is read only when a COPY
     * source is to be asked. */
    if (!pump_wanted(c)) return;
    uint64_t until = uv_hrtime() + PUMP_SLICE_NS;
    for (int i = 1;; i++) {
        /* The source may close the connection or break the session; a
         * fatal error has already been reported through on_broken. */
        if (pgw_session_copy_pump(c->s) < 0 || !c->s) return;
        pgw__conn_flush(c);
        if (i >= PUMP_ROUNDS || uv_hrtime() >= until || !pump_wanted(c)) return;
    }
}

void pgw__conn_on_session_drain(pgw_session_t *s, void *ud)
{
    pgw_conn_t *c = ud;
    if (s != c->s) return;
    c->drain_owed = 1;
    pgw__conn_schedule_flush(c);
}

void pgw__conn_drain_notify(pgw_conn_t *c)
{
    if (!c->drain_owed || !c->s || c->state == PGW__CONN_CLOSING) return;
    c->drain_owed = 0;
    if (c->cfg.on_drain) c->cfg.on_drain(c, c->cfg.ud);
}

int pgw_conn_congested(const pgw_conn_t *c)
{
    return c ? pgw_session_congested(c->s) : 0;
}

int pgw_conn_copy_resume(pgw_conn_t *c)
{
    if (!c) return PGW_EINVAL;
    if (!c->s || c->state == PGW__CONN_CLOSING) return PGW_ECLOSED;
    return pgw_session_copy_resume(c->s);
}
