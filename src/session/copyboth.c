/*
 * CopyBoth carried by a request (a replication stream, replication.h):
 * the server's CopyData goes to the request's on_copy_data as COPY TO's
 * does (copy.c); the caller sends its own CopyData and ends its side with
 * CopyDone through the calls below. The request in CopyBoth is
 * s->copy.in, in state PGW__COPY_BOTH until our CopyDone is written, then
 * PGW__COPY_BOTH_ENDING until the server's CopyDone; the server's
 * CommandComplete or error then ends the statement as any COPY's
 * (pgw__copy_statement_ended). The session keeps no clock here: when to
 * send is the caller's business (src/repl/stream.c, src/conn/replconn.c).
 */
#include "session_internal.h"

#include "pgwire/replication.h"

int pgw__copy_both_begin(pgw_session_t *s, pgw__req_t *r)
{
    s->copy.in = r;
    return 0;
}

int pgw__copy_both_write_done(pgw_session_t *s)
{
    size_t from = s->output.buf.len;
    if (pgw_enc_copy_done(&s->output.buf) < 0) return PGW_ENOMEM;
    pgw__trace_out(s, &s->output.buf, from, true);
    pgw__out_appended(s, &s->output.buf, from);
    return 0;
}

int pgw__copy_both_server_done(pgw_session_t *s, pgw__req_t *r)
{
    /* The protocol: a CopyDone received is answered with ours unless we
     * have sent it (walsender waits for it before CommandComplete). */
    uint8_t was = r->copy_state;
    if (was == PGW__COPY_BOTH || was == PGW__COPY_BOTH_ENDING) r->copy_state = PGW__COPY_SENT;
    if (s->copy.in == r) s->copy.in = NULL;
    return was == PGW__COPY_BOTH ? pgw__copy_both_write_done(s) : 0;
}

/* The request whose CopyBoth we may still send in, or NULL. */
static pgw__req_t *sending(const pgw_session_t *s)
{
    pgw__req_t *r = s->copy.in;
    return r && r->copy_state == PGW__COPY_BOTH ? r : NULL;
}

PGW_EXTERN int pgw_session_copy_both_active(const pgw_session_t *s)
{
    return s && s->state != PGW_SESSION_BROKEN && sending(s) != NULL;
}

PGW_EXTERN int pgw_session_copy_both_send(pgw_session_t *s, const void *data, size_t len)
{
    if (!s || (!data && len)) return PGW_EINVAL;
    if (s->state == PGW_SESSION_BROKEN) return s->err;
    if (!sending(s)) return PGW_EBUSY;
    size_t from = s->output.buf.len;
    int rc = pgw_enc_copy_data(&s->output.buf, data, len, s->max_message);
    if (rc < 0) {
        s->output.buf.len = from;
        return rc;
    }
    pgw__trace_out(s, &s->output.buf, from, true);
    pgw__out_appended(s, &s->output.buf, from);
    return 0;
}

PGW_EXTERN int pgw_session_copy_both_end(pgw_session_t *s)
{
    if (!s) return PGW_EINVAL;
    if (s->state == PGW_SESSION_BROKEN) return s->err;
    pgw__req_t *r = sending(s);
    if (!r) return PGW_EBUSY;
    int rc = pgw__copy_both_write_done(s);
    if (rc < 0) return rc;
    r->copy_state = PGW__COPY_BOTH_ENDING;
    return 0;
}
