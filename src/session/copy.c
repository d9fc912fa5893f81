/*
 * COPY: the PGW_REQ_COPY request kind (session.h, "COPY"), and a COPY the
 * server starts in a request of another kind.
 *
 * Sending. A COPY is Parse, Bind, Describe portal, Execute and Flush of the
 * unnamed statement. The server reads every message that follows a COPY
 * FROM STDIN's Execute as part of the COPY (Sync and Flush are ignored, any
 * other message aborts it), so nothing queued after a COPY may be written
 * before the server knows where its data ends. The first COPY not yet
 * resolved "holds" the output (s->copy.tx): the bytes of every request
 * submitted after it, its own Sync first, go to s->copy.held, and each
 * later COPY remembers where the bytes after its own Execute begin there
 * (copy_end). The Flush makes the server send what it has produced for the
 * COPY at once, a COPY TO smaller than the server's output buffer
 * included: without it nothing would come before the Sync, which waits in
 * the held buffer. The hold is released (the held bytes up to the next
 * COPY's end are appended to the output) when:
 *   - the server answers CopyOutResponse (it reads nothing during COPY TO);
 *   - the COPY FROM's CopyDone or CopyFail has been written;
 *   - the COPY leaves the FIFO without having begun (an error at Parse or
 *     Bind, an earlier error of its sync group): the server then skips
 *     to the Sync, which is among the held bytes.
 *
 * A submit with a deadline holds the output the same way from its end
 * until its last entry leaves the FIFO (deadline.c says why).
 *
 * Other kinds. Any statement may start a COPY (a COPY run as a QUERY, a
 * SIMPLE query with a COPY among its statements, an EXECUTE of a prepared
 * COPY), so a request whose SQL names COPY (or START_REPLICATION, whose
 * CopyBoth the server reads client messages during too) holds the output
 * the same way, with the same Flush when it is an extended request, until
 * it leaves the FIFO. Such a request has no copy callbacks (only
 * PGW_REQ_COPY takes them): the session ends the server's COPY at once, a
 * COPY FROM with CopyFail naming PGW_REQ_COPY, a CopyBoth with CopyDone, a
 * COPY TO by reading and dropping its data, and the request completes with
 * PGW_ECOPY; the statements after it run as the protocol says.
 *
 * COPY FROM data. Once CopyInResponse arrives the source is pulled
 * (pump_run) while the output holds less than the pump target, for at most
 * a time slice when the driver keeps a clock: each call appends straight
 * into the output buffer inside a CopyData message whose length is patched
 * when the call returns. While a source call is open, the driver sees only
 * the output before that message.
 *
 * COPY TO data goes to the caller's callback as views into the read chunk.
 */
#include "proto/proto_internal.h"
#include "session_internal.h"

#include <stdio.h>

/* At most 256 KiB per pump (a quarter of the high-water mark below that):
 * the output, a source's overshoot included, then stays well inside the
 * buffers the connection keeps for reuse (max(1 MiB, 4 x write_threshold)),
 * so a COPY of any size allocates nothing once warm. */
#define PUMP_MAX         (256u * 1024u)
#define PUMP_MIN         (4u * 1024u)
#define FAIL_MESSAGE_MAX 200
/* With the driver's clock, one pump pulls for at most this long: a slow
 * source (one that waits for its data) gives the loop back after each
 * call instead of after PUMP_MAX bytes. */
#define PUMP_SLICE_NS (1000u * 1000u)

/* ---------------------------------------------------------------- encoding */

int pgw__copy_may_start(pgw_session_t *s, pgw_buf_t *b, pgw__req_t *r)
{
    pgw__req_aux_t *x = pgw__req_aux(s, r);
    if (!x) return PGW_ENOMEM;
    /* A simple query's answer ends with ReadyForQuery, which the server
     * always flushes; it sends CopyInResponse at once anyway. */
    int rc = r->kind == PGW__REQ_SIMPLE ? 0 : pgw_enc_flush(b);
    r->copy_state = PGW__COPY_QUEUED;
    x->copy_end = b->len;
    return rc;
}

int pgw__copy_carry(pgw_session_t *s, pgw__req_t *r, const pgw_request_t *rq)
{
    if (rq->kind != PGW_REQ_COPY && !rq->copy_source && !rq->on_copy_data && !rq->on_copy_start &&
        !rq->on_copy_end)
        return 0;
    pgw__req_aux_t *x = pgw__req_aux(s, r);
    if (!x) return PGW_ENOMEM;
    x->copy_source = rq->copy_source;
    x->copy_data_cb = rq->on_copy_data;
    x->copy_start_cb = rq->on_copy_start;
    x->copy_end_cb = rq->on_copy_end;
    r->flags |= PGW__RF_COPY_CARRY;
    return 0;
}

int pgw__enc_copy(pgw_session_t *s, pgw_buf_t *b, pgw__req_t *r, const pgw_request_t *rq)
{
    static const uint8_t exp[] = {PGW__EXP_PARSE, PGW__EXP_BIND, PGW__EXP_RDESC, PGW__EXP_COPY};
    memcpy(r->exp, exp, sizeof exp);
    r->nexp = sizeof exp;
    int rc = pgw__copy_carry(s, r, rq);
    /* A caller's negative code becomes the status, as a row callback's. */
    r->flags |= PGW__RF_STREAM;
    if (rc == 0) rc = pgw__enc_parse_cstr(b, "", rq->sql, strlen(rq->sql), NULL, 0, s->max_message);
    if (rc == 0) rc = pgw_enc_bind(b, "", "", NULL, 0, NULL, 0, NULL, 0, s->max_message);
    if (rc == 0) rc = pgw_enc_describe(b, 'P', "");
    if (rc == 0) rc = pgw_enc_execute(b, "", 0);
    if (rc == 0) rc = pgw__copy_may_start(s, b, r);
    return rc;
}

/* r holds what is queued after it (its aux block's copy_end says where that
 * begins): a COPY the server has not begun, or the end of a submit with a
 * deadline. Both took the block when they were queued (pgw__copy_may_start,
 * pgw__dl_hold); a simple query whose COPY ended is QUEUED again, for its
 * next statement, but it holds nothing then unless it held before. */
static bool holds_output(const pgw__req_t *r)
{
    return r->aux && (r->copy_state == PGW__COPY_QUEUED || (r->dl & PGW__DL_HOLDS));
}

int pgw__copy_split(pgw_session_t *s, pgw_buf_t *b, pgw__req_t *first)
{
    if (s->copy.tx) return 0; /* b is the held buffer already */
    pgw__req_t *x = first;
    while (x && !holds_output(x))
        x = x->next;
    if (!x) return 0;
    size_t cut = x->aux->copy_end;
    if (pgw_buf_append(&s->copy.held, b->data + cut, b->len - cut) < 0) return PGW_ENOMEM;
    b->len = cut;
    for (pgw__req_t *y = x->next; y; y = y->next)
        if (holds_output(y)) y->aux->copy_end -= cut;
    s->copy.tx = x;
    return 0;
}

/* --------------------------------------------------------------- releasing */

/* The server knows where r's data ends: write what waits behind it, up to
 * the end of the next COPY (which then holds the output). */
static void release(pgw_session_t *s, pgw__req_t *r)
{
    if (s->copy.tx != r) return;
    s->copy.tx = NULL;
    if (s->state == PGW_SESSION_BROKEN || s->freeing) {
        pgw_buf_reset(&s->copy.held);
        return;
    }
    pgw__req_t *next = r->next;
    while (next && !holds_output(next))
        next = next->next;
    size_t n = next ? next->aux->copy_end : s->copy.held.len;
    pgw_buf_t *out = pgw__req_buf(s);
    size_t from = out->len;
    if (pgw_buf_append(out, s->copy.held.data, n) < 0) {
        pgw__session_break(s, PGW_ENOMEM);
        return;
    }
    pgw_buf_consume(&s->copy.held, n);
    for (pgw__req_t *y = next; y; y = y->next)
        if (holds_output(y)) y->aux->copy_end -= n;
    s->copy.tx = next;
    if (!s->copy.tx) pgw__out_trim(s, &s->copy.held);
    pgw__trace_out(s, out, from, true);
    pgw__out_appended(s, out, from);
}

/* A PGW_REQ_COPY's data end is known before it completes. Any other request
 * may be a simple query whose next statement starts another COPY: it
 * releases only when it leaves the FIFO. */
static void release_early(pgw_session_t *s, pgw__req_t *r)
{
    if (r->kind == PGW__REQ_COPY) release(s, r);
}

void pgw__copy_leaving(pgw_session_t *s, pgw__req_t *r)
{
    if (s->copy.in == r) s->copy.in = NULL;
    release(s, r);
}

/* ------------------------------------------------------------- COPY FROM */

static void append_fail_message(pgw_buf_t *b, const char *text, size_t n)
{
    size_t from = b->len;
    int rc = pgw_enc_copy_fail(b, text);
    (void)n;
    if (rc < 0) b->len = from;
}

/* Write CopyFail (message text[0..n), or one naming code) for the COPY FROM
 * r and record code as its status; release the hold unless the session is
 * terminating. */
static void copy_fail(pgw_session_t *s, pgw__req_t *r, int code, const char *text, size_t n,
                      bool do_release)
{
    char msg[FAIL_MESSAGE_MAX + 1];
    if (n > FAIL_MESSAGE_MAX) n = FAIL_MESSAGE_MAX;
    size_t k = 0;
    while (k < n && text && text[k])
        k++;
    if (k)
        memcpy(msg, text, k), msg[k] = '\0';
    else
        snprintf(msg, sizeof msg, "COPY abandoned by the client: %s", pgw_strerror(code));
    r->row_status = code;
    r->copy_state = PGW__COPY_FAILED;
    if (s->copy.in == r) s->copy.in = NULL;
    size_t from = s->output.buf.len;
    append_fail_message(&s->output.buf, msg, k);
    pgw__trace_out(s, &s->output.buf, from, true);
    pgw__out_appended(s, &s->output.buf, from);
    if (do_release) release_early(s, r);
}

static void copy_done(pgw_session_t *s, pgw__req_t *r)
{
    size_t from = s->output.buf.len;
    if (pgw_enc_copy_done(&s->output.buf) < 0) {
        pgw__session_break(s, PGW_ENOMEM);
        return;
    }
    r->copy_state = PGW__COPY_SENT;
    s->copy.in = NULL;
    pgw__trace_out(s, &s->output.buf, from, true);
    pgw__out_appended(s, &s->output.buf, from);
    release_early(s, r);
}

static size_t pump_target(const pgw_session_t *s)
{
    size_t t = s->output.high_water / 4;
    if (t > PUMP_MAX) t = PUMP_MAX;
    if (t < PUMP_MIN) t = PUMP_MIN;
    return t;
}

/* One source call into a CopyData message. Returns the source's code, or
 * PGW_ECANCELED when the call ended the session or voided the message. */
static int pull_once(pgw_session_t *s, pgw__req_t *r, size_t room, size_t *appended)
{
    size_t at = s->output.buf.len;
    int rc = pgw_buf_reserve(&s->output.buf, 5);
    if (rc < 0) return rc;
    s->output.buf.data[at] = 'd';
    memset(s->output.buf.data + at + 1, 0, 4);
    s->output.buf.len += 5;
    s->copy.pump_at = at;
    int src = pgw__aux_of(r)->copy_source(&s->output.buf, room, r->ud);
    if (pgw__halted(s)) return PGW_ECANCELED;
    if (s->copy.pump_at != at) return PGW_ECANCELED; /* voided by a terminate */
    s->copy.pump_at = SIZE_MAX;
    if (s->output.buf.len < at + 5) {
        s->output.buf.len = at;
        return PGW_EINVAL; /* the source cut into the buffer */
    }
    size_t n = s->output.buf.len - at - 5;
    *appended = n;
    if (src < 0) {
        char text[FAIL_MESSAGE_MAX];
        size_t k = n < sizeof text ? n : sizeof text;
        memcpy(text, s->output.buf.data + at + 5, k);
        s->output.buf.len = at;
        copy_fail(s, r, src, text, k, true);
        return PGW_ECANCELED;
    }
    if (n > (size_t)s->max_message - 4) {
        s->output.buf.len = at;
        copy_fail(s, r, PGW_ETOOBIG, NULL, 0, true);
        return PGW_ECANCELED;
    }
    if (n == 0) {
        s->output.buf.len = at;
    } else {
        pgw__put32(s->output.buf.data + at + 1, (uint32_t)(n + 4));
        pgw__trace_out(s, &s->output.buf, at, true);
        if (r->res) r->res->copy_bytes += n;
    }
    return src;
}

/* Pull the source of s->copy.in while the output is under the target.
 * Returns 1 when it would take more, 0 when not pulling, or a fatal error
 * (the session is then to be broken by the caller). */
static int pump_run(pgw_session_t *s)
{
    size_t from = s->output.buf.len;
    size_t target = pump_target(s);
    uint64_t until = s->cb.now_ns ? pgw__now(s) + PUMP_SLICE_NS : 0;
    int rc = 0;
    /* The slice ends a pump only after a call: a pump that stopped having
     * pulled nothing would leave the COPY wanting room with no output
     * appended, so no write would bring the driver back to pump again (the
     * server would wait for the data forever). */
    for (bool pulled = false;; pulled = true) {
        pgw__req_t *r = s->copy.in;
        if (!r || r->copy_state != PGW__COPY_PUMP || pgw__halted(s)) break;
        size_t pending = s->output.buf.len - s->output.off;
        if (pending >= target || (pulled && until && pgw__now(s) >= until)) {
            rc = 1;
            break;
        }
        size_t n = 0;
        int src = pull_once(s, r, target - pending, &n);
        if (src == PGW_ECANCELED) break;
        if (src == PGW_ENOMEM) {
            rc = src;
            break;
        }
        if (src == PGW_COPY_END) {
            copy_done(s, r);
        } else if (src == PGW_COPY_PAUSE || (src == PGW_COPY_MORE && n == 0)) {
            r->copy_state = PGW__COPY_PAUSED;
        } else if (src != PGW_COPY_MORE) {
            copy_fail(s, r, PGW_EINVAL, "COPY abandoned: the data source returned an unknown code",
                      FAIL_MESSAGE_MAX, true);
        }
    }
    if (!pgw__halted(s)) pgw__out_appended(s, &s->output.buf, from);
    return rc;
}

PGW_EXTERN int pgw_session_copy_pump(pgw_session_t *s)
{
    if (!s) return PGW_EINVAL;
    if (s->depth > 0) return PGW_ERECURSIVE;
    if (s->state == PGW_SESSION_BROKEN) return s->err;
    if (!s->copy.in || s->copy.in->copy_state != PGW__COPY_PUMP) return 0;
    pgw__enter(s);
    int rc = pump_run(s);
    if (rc < 0) pgw__session_break(s, rc);
    if (pgw__leave(s)) return PGW_ECANCELED;
    return rc;
}

PGW_EXTERN int pgw_session_copy_resume(pgw_session_t *s)
{
    if (!s) return PGW_EINVAL;
    if (!s->copy.in || s->copy.in->copy_state != PGW__COPY_PAUSED) return PGW_EBUSY;
    s->copy.in->copy_state = PGW__COPY_PUMP;
    if (s->cb.on_want_write) {
        pgw__enter(s);
        s->cb.on_want_write(s, s->ud);
        pgw__leave(s);
    }
    return 0;
}

PGW_EXTERN int pgw_session_copy_wants_room(const pgw_session_t *s)
{
    return s && s->copy.in && s->copy.in->copy_state == PGW__COPY_PUMP &&
           s->state == PGW_SESSION_READY;
}

void pgw__copy_expired(pgw_session_t *s, pgw__req_t *r)
{
    if (s->copy.in != r || (r->copy_state != PGW__COPY_PUMP && r->copy_state != PGW__COPY_PAUSED))
        return;
    static const char why[] = "COPY abandoned by the client: the request's deadline passed";
    copy_fail(s, r, PGW_ETIMEDOUT, why, sizeof why - 1, true);
}

void pgw__copy_terminating(pgw_session_t *s)
{
    pgw__req_t *r = s->copy.in;
    if (r && (r->copy_state == PGW__COPY_PUMP || r->copy_state == PGW__COPY_PAUSED)) {
        if (s->copy.pump_at != SIZE_MAX) {
            s->output.buf.len = s->copy.pump_at; /* the message the source is writing */
            s->copy.pump_at = SIZE_MAX;
        }
        static const char why[] = "connection closed by the client";
        copy_fail(s, r, PGW_ECANCELED, why, sizeof why - 1, false);
    }
    /* Nothing queued behind a COPY is sent any more. */
    s->copy.tx = NULL;
    pgw_buf_reset(&s->copy.held);
}

/* ---------------------------------------------------------------- receiving */

/* Record the CopyIn/Out/BothResponse in res (the request's result, or a
 * simple query's current one) and tell the caller. */
static int begin(pgw__req_t *r, pgw_result_t *res, const pgw_msg_t *m, int dir)
{
    uint16_t n = m->u.copy_response.ncols;
    res->is_copy = true;
    res->copy_dir = (uint8_t)dir;
    res->copy_format = m->u.copy_response.format;
    res->copy_ncols = n;
    if (n) {
        res->copy_formats = pgw__result_alloc(res, sizeof(int16_t) * n);
        if (!res->copy_formats) return PGW_ENOMEM;
        for (uint16_t i = 0; i < n; i++)
            res->copy_formats[i] = pgw_copy_format(m, i);
    }
    pgw_copy_start_cb start = pgw__aux_of(r)->copy_start_cb;
    if (!start) return 0;
    pgw_copy_info_t info = {dir, res->copy_format, n, res->copy_formats, r->res};
    int rc = start(&info, r->ud);
    return rc < 0 ? rc : 0;
}

static const char copy_in_refused[] =
    "COPY FROM STDIN is run only by a PGW_REQ_COPY request with a copy_source";

/* The request has the caller's COPY callbacks: a PGW_REQ_COPY, or a simple
 * query given them. */
static bool carries(const pgw__req_t *r)
{
    return r->flags & PGW__RF_COPY_CARRY;
}

/* A COPY the request cannot carry (only PGW_REQ_COPY and a simple query
 * given the callbacks take them; CopyBoth is for replication streams): it
 * completes with PGW_ECOPY. */
static void refuse(pgw__req_t *r)
{
    r->flags |= PGW__RF_COPY_REFUSED;
    r->row_status = PGW_ECOPY;
    r->copy_state = PGW__COPY_FAILED;
}

static int on_copy_in(pgw_session_t *s, pgw__req_t *r, pgw_result_t *res, const pgw_msg_t *m)
{
    if (!carries(r)) {
        int rc = begin(r, res, m, PGW_COPY_IN);
        if (rc == PGW_ENOMEM) return rc;
        refuse(r);
        copy_fail(s, r, PGW_ECOPY, copy_in_refused, sizeof copy_in_refused - 1, true);
        return 0;
    }
    /* The COPY is in progress before the caller hears of it: a close from
     * its start callback sends CopyFail. */
    r->copy_state = PGW__COPY_PUMP;
    s->copy.in = r;
    int rc = begin(r, res, m, PGW_COPY_IN);
    if (rc == PGW_ENOMEM) return rc;
    if (pgw__halted(s)) return 0;
    if (rc < 0)
        copy_fail(s, r, rc, NULL, 0, true);
    else if (!pgw__aux_of(r)->copy_source)
        copy_fail(s, r, PGW_EINVAL, "COPY FROM STDIN without a data source", FAIL_MESSAGE_MAX,
                  true);
    if (pgw__halted(s) || s->copy.in != r) return 0;
    rc = pump_run(s);
    return rc < 0 ? rc : 0;
}

static int on_copy_out(pgw_session_t *s, pgw__req_t *r, pgw_result_t *res, const pgw_msg_t *m)
{
    r->copy_state = PGW__COPY_OUT;
    release_early(s, r);
    if (pgw__halted(s)) return 0;
    int rc = begin(r, res, m, PGW_COPY_OUT);
    if (rc == PGW_ENOMEM) return rc;
    if (pgw__halted(s)) return 0;
    if (!carries(r)) {
        refuse(r); /* its data is read and dropped */
    } else if (rc < 0) {
        r->row_status = rc;
        r->copy_state = PGW__COPY_FAILED;
    }
    return 0;
}

/* CopyBoth: end our side with CopyDone and read the server's data until its
 * own CopyDone. */
static int on_copy_both(pgw_session_t *s, pgw__req_t *r, pgw_result_t *res, const pgw_msg_t *m)
{
    /* A replication stream (replication.h) carries it: copyboth.c. */
    if (carries(r) && pgw__aux_of(r)->copy_data_cb) r->copy_state = PGW__COPY_BOTH;
    int rc = begin(r, res, m, PGW_COPY_BOTH);
    if (rc == PGW_ENOMEM) return rc;
    if (pgw__halted(s)) return 0;
    if (r->copy_state == PGW__COPY_BOTH && rc == 0) return pgw__copy_both_begin(s, r);
    if (r->copy_state == PGW__COPY_BOTH) {
        r->row_status = rc;
        r->copy_state = PGW__COPY_FAILED;
    } else {
        refuse(r);
    }
    return pgw__copy_both_write_done(s);
}

static int on_copy_data(pgw_session_t *s, pgw__req_t *r, pgw_result_t *res, const pgw_msg_t *m)
{
    pgw_view_t d = m->u.data;
    res->copy_bytes += (uint64_t)d.len;
    uint8_t was = r->copy_state;
    pgw_copy_data_cb data_cb = pgw__aux_of(r)->copy_data_cb;
    if (!data_cb) return 0;
    if (was != PGW__COPY_OUT && was != PGW__COPY_BOTH && was != PGW__COPY_BOTH_ENDING) return 0;
    int rc = data_cb(d.p, (size_t)d.len, r->ud);
    if (!pgw__halted(s) && rc < 0 && r->copy_state == was) {
        r->row_status = rc;
        r->copy_state = PGW__COPY_FAILED;
        /* A CopyBoth the caller abandons: our CopyDone makes the server end it. */
        if (was == PGW__COPY_BOTH) return pgw__copy_both_write_done(s);
    }
    return 0;
}

/* The server is sending COPY data (COPY TO, or CopyBoth being ended). */
static bool copying_out(const pgw__req_t *r, const pgw_result_t *res)
{
    return r->copy_state == PGW__COPY_OUT || r->copy_state == PGW__COPY_BOTH ||
           r->copy_state == PGW__COPY_BOTH_ENDING ||
           (r->copy_state == PGW__COPY_FAILED && res && res->copy_dir != PGW_COPY_IN);
}

/* A simple query's statement that began a COPY TO although no statement
 * of it starts with COPY (pgw__sql_may_copy): a replication command such
 * as BASE_BACKUP, whose archive comes as COPY TO data. The server reads
 * nothing of ours during a COPY TO, so nothing had to be held back for
 * it; a CopyIn or CopyBoth nobody foresaw still breaks the session, as the
 * server would read what follows the query as its data. */
static bool unforeseen_copy_out(const pgw__req_t *r)
{
    return r->kind == PGW__REQ_SIMPLE && r->copy_state == PGW__COPY_NONE;
}

bool pgw__copy_message(uint8_t type)
{
    return type == PGW_B_COPY_IN || type == PGW_B_COPY_OUT || type == PGW_B_COPY_BOTH ||
           type == PGW_B_COPY_DATA || type == PGW_B_COPY_DONE;
}

int pgw__copy_dispatch(pgw_session_t *s, pgw__req_t *r, pgw_result_t *res, const pgw_msg_t *m)
{
    bool queued = r->copy_state == PGW__COPY_QUEUED;
    switch (m->type) {
    case PGW_B_COPY_IN:
        return queued ? on_copy_in(s, r, res, m) : PGW_EPROTO;
    case PGW_B_COPY_OUT:
        return queued || unforeseen_copy_out(r) ? on_copy_out(s, r, res, m) : PGW_EPROTO;
    case PGW_B_COPY_BOTH:
        return queued ? on_copy_both(s, r, res, m) : PGW_EPROTO;
    case PGW_B_COPY_DATA:
        if (copying_out(r, res)) return on_copy_data(s, r, res, m);
        /* A walsender may send a keepalive after its CopyDone; libpq drops
         * CopyData outside COPY mode, and so do we. */
        return r->copy_state == PGW__COPY_SENT && res->copy_dir == PGW_COPY_BOTH ? 0 : PGW_EPROTO;
    case PGW_B_COPY_DONE:
        if (!copying_out(r, res)) return PGW_EPROTO;
        if (res->copy_dir == PGW_COPY_BOTH) return pgw__copy_both_server_done(s, r);
        r->copy_state = PGW__COPY_OUT_DONE;
        return 0;
    case PGW_B_DATA_ROW:
        /* Not a COPY after all: rows of a described statement are kept. */
        if (!queued || !res->have_desc || !res->ncols) return PGW_EPROTO;
        return pgw__result_add_row(res, m, s->input.chunk);
    case PGW_B_COMMAND_COMPLETE: {
        /* The server has read our CopyDone / CopyFail before this. */
        if (r->copy_state == PGW__COPY_PUMP || r->copy_state == PGW__COPY_PAUSED) return PGW_EPROTO;
        int rc = pgw__result_set_tag(res, m);
        return rc < 0 ? rc : pgw__req_step(s, r);
    }
    case PGW_B_EMPTY_QUERY:
        if (!queued) return PGW_EPROTO;
        res->complete = true;
        return pgw__req_step(s, r);
    default:
        return PGW_EPROTO;
    }
}

void pgw__copy_statement_ended(pgw_session_t *s, pgw__req_t *r, pgw_result_t *res)
{
    if (r->copy_state <= PGW__COPY_QUEUED) return;
    if (s->copy.in == r) s->copy.in = NULL;
    r->copy_state = PGW__COPY_QUEUED;
    /* Only a COPY the caller heard begin (not a refused one). */
    pgw_copy_end_cb end = pgw__aux_of(r)->copy_end_cb;
    if (!carries(r) || !end || !res || !res->is_copy) return;
    end(res, r->ud); /* from the input's dispatch, as every callback */
}

/* ------------------------------------------------------------ result side */

PGW_EXTERN int pgw_result_copy_direction(const pgw_result_t *r)
{
    return r && r->is_copy ? r->copy_dir : 0;
}

PGW_EXTERN int pgw_result_copy_format(const pgw_result_t *r)
{
    return r && r->is_copy ? r->copy_format : -1;
}

PGW_EXTERN int pgw_result_copy_column_format(const pgw_result_t *r, size_t i)
{
    if (!r || !r->is_copy || i >= r->copy_ncols) return -1;
    return r->copy_formats[i];
}

PGW_EXTERN uint64_t pgw_result_copy_bytes(const pgw_result_t *r)
{
    return r ? r->copy_bytes : 0;
}

/* ------------------------------------------------------- write backpressure */

size_t pgw__out_backlog(const pgw_session_t *s)
{
    return (s->output.buf.len - s->output.off) + s->copy.held.len + s->output.held.len;
}

static bool output_congested(const pgw_session_t *s)
{
    return s->output.high_water != SIZE_MAX && pgw__out_backlog(s) >= s->output.high_water;
}

static bool too_many_pending(const pgw_session_t *s)
{
    return s->fifo.max_pending != SIZE_MAX && s->fifo.npending >= s->fifo.max_pending;
}

PGW_EXTERN int pgw_session_congested(const pgw_session_t *s)
{
    return s && (output_congested(s) || too_many_pending(s));
}

void pgw__drain_check(pgw_session_t *s)
{
    if (!s->output.congested || pgw__out_backlog(s) >= s->output.high_water / 2) return;
    if (s->fifo.max_pending != SIZE_MAX && s->fifo.npending >= s->fifo.max_pending / 2) return;
    s->output.congested = false;
    if (!s->output.on_drain || pgw__halted(s)) return;
    pgw__enter(s);
    s->output.on_drain(s, s->ud);
    pgw__leave(s);
}
