/*
 * Read backpressure: a connection stops reading its socket while its
 * session's input is paused (a row callback returned PGW_ROW_PAUSE, or
 * pgw_conn_pause_reading), so a slow consumer of a large result holds the
 * server back through TCP instead of blocking the loop or buffering rows.
 *
 * Resuming is deferred to the loop's prepare phase (the same uv_prepare_t
 * that flushes the output): the input the pause left in the session's read
 * chunk is processed there, its callbacks fire from inside uv_run as every
 * other callback does, and the output they produce is flushed right after
 * in the same turn. Over TLS the records still waiting in the ciphertext
 * ring are then decrypted before the socket is watched again.
 */
#define _DEFAULT_SOURCE /* uv.h needs the POSIX types */
#include "conn/conn_internal.h"

static int readctl_check(const pgw_conn_t *c)
{
    if (!c) return PGW_EINVAL;
    if (c->state == PGW__CONN_NEW) return PGW_EBUSY;
    if (c->state != PGW__CONN_CONNECTING && c->state != PGW__CONN_READY) return PGW_ECLOSED;
    return c->s ? 0 : PGW_ECLOSED;
}

int pgw_conn_pause_reading(pgw_conn_t *c)
{
    int rc = readctl_check(c);
    if (rc < 0) return rc;
    c->resume_pending = 0;
    pgw_session_pause_input(c->s);
    pgw__conn_watch(c);
    return 0;
}

int pgw_conn_resume_reading(pgw_conn_t *c)
{
    int rc = readctl_check(c);
    if (rc < 0) return rc;
    if (!pgw_session_input_paused(c->s)) return 0;
    c->resume_pending = 1;
    pgw__conn_schedule_flush(c);
    return 0;
}

int pgw_conn_reading_paused(const pgw_conn_t *c)
{
    return c && c->s && pgw_session_input_paused(c->s);
}

void pgw__conn_resume_input(pgw_conn_t *c)
{
    c->resume_pending = 0;
    pgw_session_t *s = c->s;
    pgw__sock_t *k = c->sock;
    if (!s || !k) return;
    /* A failure breaks the session, whose hook drops the socket. */
    if (pgw_session_resume_input(s) < 0 || c->s != s || c->sock != k) return;
    if (c->tls && !pgw_session_input_paused(s) && c->tp->read_commit(c, 0) < 0) return;
    if (c->s == s && c->sock == k) pgw__conn_watch(c);
}
