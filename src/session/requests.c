/*
 * Requests: each public request function encodes its messages straight into
 * the output buffer and queues FIFO entries (from a free list: no
 * allocation per request in steady state). Encoding is all or nothing: on
 * any failure the buffer is truncated back to where the request began, the
 * entries go back to the free list and the error is returned without a
 * callback.
 *
 * Result formats on the extended protocol: an unnamed query asks binary for
 * every column (or text with PGW_Q_TEXT) and is bound again with per-column
 * formats if the server has no binary output for a column's type (see
 * keep_bind_params). A statement whose description the table knows is
 * executed with per-column formats from it (binary where pgw_type_binary_ok,
 * text otherwise) and without a Describe; any other named statement with
 * text for every column and a Describe portal, whose reply the table keeps.
 */
#include "session_internal.h"

/* One request being queued. */
typedef struct pending_req {
    pgw_buf_t *b;
    size_t from;
    pgw__req_t *req;
    pgw__req_t *sync; /* its own Sync, outside batches */
} pending_req_t;

static pgw__req_t *req_alloc(pgw_session_t *s)
{
    pgw__req_t *r = s->free_reqs;
    if (r) {
        s->free_reqs = r->next;
        s->nfree_reqs--;
    } else {
        r = pgw__malloc(s->alloc, sizeof *r);
        if (!r) return NULL;
        pgw_buf_init(&r->retry_params, s->alloc);
    }
    memset(r, 0, offsetof(pgw__req_t, retry_params));
    return r;
}

static int accepting(const pgw_session_t *s)
{
    if (!s) return PGW_EINVAL;
    if (s->freeing || s->free_pending) return PGW_ECLOSED;
    if (s->state == PGW_SESSION_BROKEN || s->state == PGW_SESSION_TERMINATED) return PGW_ECLOSED;
    return 0;
}

static bool needs_own_sync(const pgw_session_t *s)
{
    return !s || !s->in_batch || (s->batch_flags & PGW_BATCH_SYNC_EACH);
}

static int begin(pgw_session_t *s, pending_req_t *p, uint8_t kind, bool with_sync)
{
    int rc = accepting(s);
    if (rc < 0) return rc;
    p->b = pgw__req_buf(s);
    p->from = p->b->len;
    p->sync = NULL;
    p->req = req_alloc(s);
    if (!p->req) return PGW_ENOMEM;
    if (with_sync) {
        p->sync = req_alloc(s);
        if (!p->sync) {
            pgw__req_release(s, p->req);
            return PGW_ENOMEM;
        }
        p->sync->kind = PGW__REQ_SYNC;
    }
    p->req->kind = kind;
    p->req->flags = PGW__RF_USER;
    if (s->in_batch) p->req->flags |= PGW__RF_IN_BATCH;
    return 0;
}

static void set_expect(pgw__req_t *r, const uint8_t *exp, uint8_t n)
{
    memcpy(r->exp, exp, n);
    r->nexp = n;
}

static void link_req(pgw_session_t *s, pgw__req_t *r)
{
    r->group = s->tx_group;
    r->t_queued = pgw__now(s);
    if (s->tail)
        s->tail->next = r;
    else
        s->head = r;
    s->tail = r;
    if (r->flags & PGW__RF_USER) s->npending++;
}

/* The sync group of the session's own queries at the head of the FIFO:
 * never a user group, so an error in either never aborts the other. */
#define PGW__GROUP_INTERNAL UINT64_MAX

int pgw__req_simple_first(pgw_session_t *s, pgw_buf_t *out, const char *sql, pgw_result_cb cb,
                          void *ud)
{
    pgw__req_t *r = req_alloc(s);
    if (!r) return PGW_ENOMEM;
    size_t from = out->len;
    int rc = pgw_enc_query(out, sql, strlen(sql), s->max_message);
    if (rc < 0) {
        pgw__req_release(s, r);
        return rc;
    }
    r->kind = PGW__REQ_SIMPLE;
    r->cb = cb;
    r->ud = ud;
    r->group = PGW__GROUP_INTERNAL;
    r->t_queued = pgw__now(s);
    r->next = s->head;
    s->head = r;
    if (!s->tail) s->tail = r;
    pgw__trace_out(s, out, from, true);
    return 0;
}

/* Finish queueing: on error undo everything, else link and announce. */
static int end(pgw_session_t *s, pending_req_t *p, int rc)
{
    if (rc == 0 && p->sync) rc = pgw_enc_sync(p->b);
    if (rc < 0) {
        p->b->len = p->from;
        pgw__out_trim(s, p->b);
        if (p->req->res) pgw_result_free(p->req->res);
        p->req->res = NULL;
        pgw__req_release(s, p->req);
        if (p->sync) pgw__req_release(s, p->sync);
        return rc;
    }
    if (p->sync) p->req->flags |= PGW__RF_OWN_SYNC;
    link_req(s, p->req);
    if (p->sync) {
        if (s->in_batch) p->sync->flags |= PGW__RF_IN_BATCH;
        link_req(s, p->sync);
        s->tx_group++;
    }
    pgw__enter(s);
    pgw__trace_out(s, p->b, p->from, true);
    pgw__out_appended(s, p->b, p->from);
    pgw__leave(s);
    return 0;
}

/* A parameter list the protocol cannot carry (refused before encoding). */
static bool bad_params(const pgw_param_t *params, size_t n)
{
    return (n && !params) || n > PGW_MAX_PARAMS;
}

/* Parse with the parameter types from oids, from params, or 0 (inferred). */
static int enc_parse(pgw_session_t *s, pgw_buf_t *b, const char *name, const char *sql,
                     const uint32_t *oids, const pgw_param_t *params, size_t n)
{
    pgw_msgw_t w;
    pgw_msgw_begin(b, 'P', &w);
    pgw_msgw_cstr(&w, name);
    pgw_msgw_cstr(&w, sql);
    pgw_msgw_i16(&w, (int16_t)(uint16_t)n);
    for (size_t i = 0; i < n; i++)
        pgw_msgw_i32(&w, (int32_t)(oids ? oids[i] : params ? params[i].oid : 0));
    return pgw_msgw_end(&w, s->max_message);
}

static const int16_t fmt_binary = PGW_FORMAT_BINARY;
static const int16_t fmt_text = PGW_FORMAT_TEXT;

static const int16_t *all_format(unsigned flags)
{
    return (flags & PGW_Q_TEXT) ? &fmt_text : &fmt_binary;
}

/* SQL that may deallocate or replace named statements leaves nothing in the
 * table to trust: later executions describe their portal (no extra round
 * trip) and teach the table again. */
static void forget_if_replacing(pgw_session_t *s, const char *sql, size_t len)
{
    if (s->nstmts && pgw__sql_may_replace_statements(sql, len)) pgw__stmt_unsure_all(s);
}

/* ------------------------------------------------------------ simple query */

static int simple_query(pgw_session_t *s, const char *sql, pgw_row_cb row_cb, pgw_result_cb cb,
                        void *ud)
{
    if (!s || !sql) return PGW_EINVAL;
    if (s->in_batch) return PGW_EBUSY;
    pending_req_t p;
    int rc = begin(s, &p, PGW__REQ_SIMPLE, false);
    if (rc < 0) return rc;
    p.req->cb = cb;
    p.req->row_cb = row_cb;
    p.req->ud = ud;
    if (row_cb) p.req->flags |= PGW__RF_STREAM;
    size_t len = strlen(sql);
    rc = pgw_enc_query(p.b, sql, len, s->max_message);
    rc = end(s, &p, rc);
    if (rc < 0) return rc;
    /* 'Q' is its own sync point. */
    s->tx_group++;
    forget_if_replacing(s, sql, len);
    return 0;
}

PGW_EXTERN int pgw_session_simple_query(pgw_session_t *s, const char *sql, pgw_result_cb cb,
                                        void *ud)
{
    return simple_query(s, sql, NULL, cb, ud);
}

PGW_EXTERN int pgw_session_simple_query_rows(pgw_session_t *s, const char *sql, pgw_row_cb row_cb,
                                             pgw_result_cb done_cb, void *ud)
{
    if (!row_cb) return PGW_EINVAL;
    return simple_query(s, sql, row_cb, done_cb, ud);
}

/* ----------------------------------------------------------- unnamed query */

/*
 * Types without binary output. Binary for every column costs no round trip
 * and suits every type the types layer decodes, but the server refuses it
 * (42883 at Execute, at the first row) for a type without a send function,
 * such as aclitem. The query then runs again, bound with text for the
 * columns libpgwire has no binary decoder for, when a second run changes
 * nothing a caller could see: it has its own Sync, nothing was queued after
 * it, and the ReadyForQuery says no transaction block is open (its implicit
 * transaction was rolled back). The caller's parameters are gone by then,
 * so the Bind's parameter section is kept here, in a buffer recycled with
 * the request (no allocation per query once warm; a larger section is not
 * kept and the query is not retried).
 */
static void keep_bind_params(pgw__req_t *r, const pgw_buf_t *b, size_t bind_at)
{
    /* 'B' len "" "" [formats, parameters] nformats=1 format */
    size_t from = bind_at + 5 + 2, to = b->len - 4;
    pgw_buf_reset(&r->retry_params);
    if (to - from > PGW__RETRY_MAX_PARAMS) return;
    if (pgw_buf_append(&r->retry_params, b->data + from, to - from) == 0)
        r->retry = PGW__RETRY_ARMED;
}

int pgw__req_rebind(pgw_session_t *s, pgw__req_t *r)
{
    static const uint8_t exp[] = {PGW__EXP_BIND, PGW__EXP_RDESC, PGW__EXP_ROWS};
    const pgw_result_t *d = r->res;
    pgw_buf_t *b = pgw__req_buf(s);
    size_t from = b->len;
    pgw_msgw_t w;
    pgw_msgw_begin(b, 'B', &w);
    pgw_msgw_cstr(&w, "");
    pgw_msgw_cstr(&w, "");
    pgw_msgw_bytes(&w, r->retry_params.data, r->retry_params.len);
    pgw_msgw_i16(&w, (int16_t)d->ncols);
    for (uint16_t i = 0; i < d->ncols; i++)
        pgw_msgw_i16(&w, pgw__column_format(d->fields[i].type_oid));
    int rc = pgw_msgw_end(&w, s->max_message);
    if (rc == 0) rc = pgw_enc_describe(b, 'P', "");
    if (rc == 0) rc = pgw_enc_execute(b, "", 0);
    if (rc == 0) rc = pgw_enc_sync(b);
    if (rc < 0) {
        b->len = from;
        return rc;
    }
    pgw_result_free(r->res);
    r->res = r->last = NULL;
    set_expect(r, exp, sizeof exp);
    r->step = 0;
    r->retry = PGW__RETRY_DONE;
    pgw__trace_out(s, b, from, true);
    pgw__out_appended(s, b, from);
    return 0;
}

static int query(pgw_session_t *s, const char *sql, const pgw_param_t *params, size_t nparams,
                 unsigned flags, pgw_row_cb row_cb, pgw_result_cb cb, void *ud)
{
    if (!sql || bad_params(params, nparams)) return PGW_EINVAL;
    static const uint8_t exp[] = {PGW__EXP_PARSE, PGW__EXP_BIND, PGW__EXP_RDESC, PGW__EXP_ROWS};
    pending_req_t p;
    int rc = begin(s, &p, PGW__REQ_EXTENDED, needs_own_sync(s));
    if (rc < 0) return rc;
    set_expect(p.req, exp, sizeof exp);
    p.req->cb = cb;
    p.req->row_cb = row_cb;
    p.req->ud = ud;
    if (row_cb) p.req->flags |= PGW__RF_STREAM;
    rc = enc_parse(s, p.b, "", sql, NULL, params, nparams);
    size_t bind_at = p.b->len;
    if (rc == 0)
        rc =
            pgw_enc_bind_params(p.b, "", "", params, nparams, all_format(flags), 1, s->max_message);
    if (rc == 0 && p.sync && !(flags & PGW_Q_TEXT)) keep_bind_params(p.req, p.b, bind_at);
    if (rc == 0) rc = pgw_enc_describe(p.b, 'P', "");
    if (rc == 0) rc = pgw_enc_execute(p.b, "", 0);
    rc = end(s, &p, rc);
    if (rc < 0) return rc;
    /* The unnamed statement was replaced: forget any stored description. */
    pgw__stmt_forget(s, "");
    forget_if_replacing(s, sql, strlen(sql));
    return 0;
}

PGW_EXTERN int pgw_session_query(pgw_session_t *s, const char *sql, const pgw_param_t *params,
                                 size_t nparams, unsigned flags, pgw_result_cb cb, void *ud)
{
    return query(s, sql, params, nparams, flags, NULL, cb, ud);
}

PGW_EXTERN int pgw_session_query_rows(pgw_session_t *s, const char *sql, const pgw_param_t *params,
                                      size_t nparams, unsigned flags, pgw_row_cb row_cb,
                                      pgw_result_cb done_cb, void *ud)
{
    if (!row_cb) return PGW_EINVAL;
    return query(s, sql, params, nparams, flags, row_cb, done_cb, ud);
}

/* ------------------------------------------------------ prepared statements */

/* The request's reply describes the statement entry with token (0: none). */
static void expect_reply(pgw__req_t *r, uint64_t token)
{
    r->stmt_token = token;
    if (token) r->flags |= PGW__RF_STORE;
}

PGW_EXTERN int pgw_session_prepare(pgw_session_t *s, const char *name, const char *sql,
                                   const uint32_t *oids, size_t nparams, pgw_result_cb cb, void *ud)
{
    if (!name || !sql || nparams > PGW_MAX_PARAMS) return PGW_EINVAL;
    static const uint8_t exp[] = {PGW__EXP_PARSE, PGW__EXP_PDESC, PGW__EXP_RDESC};
    pending_req_t p;
    int rc = begin(s, &p, PGW__REQ_PREPARE, needs_own_sync(s));
    if (rc < 0) return rc;
    set_expect(p.req, exp, sizeof exp);
    p.req->cb = cb;
    p.req->ud = ud;
    rc = enc_parse(s, p.b, name, sql, oids, NULL, nparams);
    if (rc == 0) rc = pgw_enc_describe(p.b, 'S', name);
    rc = end(s, &p, rc);
    if (rc < 0) return rc;
    /* From now on the statement is the new one: executions queued before
     * its description arrives describe their portal. */
    expect_reply(p.req, pgw__stmt_replaced(s, name));
    return 0;
}

/* Bind + Execute with the stored description (no Describe). */
static int execute_known(pgw_session_t *s, pending_req_t *p, const pgw__stmt_t *st,
                         const char *name, const pgw_param_t *params, size_t nparams,
                         unsigned flags)
{
    static const uint8_t exp[] = {PGW__EXP_BIND, PGW__EXP_ROWS};
    set_expect(p->req, exp, sizeof exp);
    /* The result takes its own copy: the statement may be closed before the
     * answer arrives. */
    pgw_result_t *res = pgw__result_new(s->recycler);
    if (!res) return PGW_ENOMEM;
    p->req->res = p->req->last = res;
    bool text = flags & PGW_Q_TEXT;
    int rc = pgw__result_set_desc(res, st->fields, st->ncols, text ? &fmt_text : st->formats,
                                  text ? 1 : st->ncols);
    if (rc == 0)
        rc = pgw_enc_bind_params(p->b, "", name, params, nparams, text ? &fmt_text : st->formats,
                                 text ? 1 : st->ncols, s->max_message);
    return rc;
}

/* Bind + Describe portal + Execute of a statement whose description is not
 * known (pending, or never described here): text for every column, which
 * every type has, and the server's own description of the portal. */
static int execute_unknown(pgw_session_t *s, pending_req_t *p, const char *name,
                           const pgw_param_t *params, size_t nparams)
{
    static const uint8_t exp[] = {PGW__EXP_BIND, PGW__EXP_RDESC, PGW__EXP_ROWS};
    set_expect(p->req, exp, sizeof exp);
    int rc = pgw_enc_bind_params(p->b, "", name, params, nparams, &fmt_text, 1, s->max_message);
    if (rc == 0) rc = pgw_enc_describe(p->b, 'P', "");
    return rc;
}

static int execute(pgw_session_t *s, const char *name, const pgw_param_t *params, size_t nparams,
                   unsigned flags, pgw_row_cb row_cb, pgw_result_cb cb, void *ud)
{
    if (!name || bad_params(params, nparams)) return PGW_EINVAL;
    pending_req_t p;
    int rc = begin(s, &p, PGW__REQ_EXTENDED, needs_own_sync(s));
    if (rc < 0) return rc;
    p.req->cb = cb;
    p.req->row_cb = row_cb;
    p.req->ud = ud;
    if (row_cb) p.req->flags |= PGW__RF_STREAM;
    /* Read before end(): its callbacks may change the table. */
    const pgw__stmt_t *st = pgw__stmt_find(s, name);
    bool known = st && st->known;
    uint64_t token = st ? st->token : 0;
    if (st && st->vouched) p.req->flags |= PGW__RF_VOUCHED;
    if (known)
        rc = execute_known(s, &p, st, name, params, nparams, flags);
    else
        rc = execute_unknown(s, &p, name, params, nparams);
    if (rc == 0) rc = pgw_enc_execute(p.b, "", 0);
    rc = end(s, &p, rc);
    if (rc < 0) return rc;
    if (known)
        p.req->stmt_token = token; /* for a refusal at Bind only */
    else
        expect_reply(p.req, token ? token : pgw__stmt_token(s, name));
    return 0;
}

PGW_EXTERN int pgw_session_execute(pgw_session_t *s, const char *name, const pgw_param_t *params,
                                   size_t nparams, unsigned flags, pgw_result_cb cb, void *ud)
{
    return execute(s, name, params, nparams, flags, NULL, cb, ud);
}

PGW_EXTERN int pgw_session_execute_rows(pgw_session_t *s, const char *name,
                                        const pgw_param_t *params, size_t nparams, unsigned flags,
                                        pgw_row_cb row_cb, pgw_result_cb done_cb, void *ud)
{
    if (!row_cb) return PGW_EINVAL;
    return execute(s, name, params, nparams, flags, row_cb, done_cb, ud);
}

PGW_EXTERN int pgw_session_describe(pgw_session_t *s, const char *name, pgw_result_cb cb, void *ud)
{
    if (!name) return PGW_EINVAL;
    static const uint8_t exp[] = {PGW__EXP_PDESC, PGW__EXP_RDESC};
    pending_req_t p;
    int rc = begin(s, &p, PGW__REQ_DESCRIBE, needs_own_sync(s));
    if (rc < 0) return rc;
    set_expect(p.req, exp, sizeof exp);
    p.req->cb = cb;
    p.req->ud = ud;
    rc = pgw_enc_describe(p.b, 'S', name);
    rc = end(s, &p, rc);
    if (rc < 0) return rc;
    expect_reply(p.req, pgw__stmt_token(s, name));
    return 0;
}

PGW_EXTERN int pgw_session_close_statement(pgw_session_t *s, const char *name, pgw_result_cb cb,
                                           void *ud)
{
    if (!name) return PGW_EINVAL;
    static const uint8_t exp[] = {PGW__EXP_CLOSE};
    pending_req_t p;
    int rc = begin(s, &p, PGW__REQ_CLOSE, needs_own_sync(s));
    if (rc < 0) return rc;
    set_expect(p.req, exp, sizeof exp);
    p.req->cb = cb;
    p.req->ud = ud;
    rc = pgw_enc_close(p.b, 'S', name);
    rc = end(s, &p, rc);
    if (rc == 0) pgw__stmt_forget(s, name);
    return rc;
}

/* ------------------------------------------------------------ sync, batch */

static int queue_sync(pgw_session_t *s, uint8_t flags, pgw_result_cb cb, void *ud)
{
    pending_req_t p;
    int rc = begin(s, &p, PGW__REQ_SYNC, false);
    if (rc < 0) return rc;
    p.req->flags = PGW__RF_USER | flags;
    p.req->cb = cb;
    p.req->ud = ud;
    rc = end(s, &p, pgw_enc_sync(p.b));
    if (rc == 0) s->tx_group++;
    return rc;
}

PGW_EXTERN int pgw_session_sync(pgw_session_t *s, pgw_result_cb cb, void *ud)
{
    if (!s) return PGW_EINVAL;
    return queue_sync(s, s->in_batch ? PGW__RF_IN_BATCH : 0, cb, ud);
}

PGW_EXTERN int pgw_session_batch_begin(pgw_session_t *s, unsigned flags)
{
    int rc = accepting(s);
    if (rc < 0) return rc;
    if (s->in_batch) return PGW_EBUSY;
    s->in_batch = true;
    s->batch_flags = flags;
    return 0;
}

PGW_EXTERN int pgw_session_batch_end(pgw_session_t *s, pgw_result_cb cb, void *ud)
{
    if (!s) return PGW_EINVAL;
    if (!s->in_batch) return PGW_EBUSY;
    int rc = queue_sync(s, PGW__RF_BATCH_END, cb, ud);
    if (rc == 0) s->in_batch = false;
    return rc;
}

PGW_EXTERN int pgw_session_terminate(pgw_session_t *s)
{
    if (!s) return PGW_EINVAL;
    if (s->state == PGW_SESSION_NEW) return PGW_EBUSY;
    int rc = accepting(s);
    if (rc < 0) return rc;
    size_t from = s->out.len;
    rc = pgw_enc_terminate(&s->out);
    if (rc < 0) return rc;
    s->state = PGW_SESSION_TERMINATED;
    pgw__enter(s);
    pgw__trace_out(s, &s->out, from, true);
    pgw__out_appended(s, &s->out, from);
    pgw__leave(s);
    return 0;
}
