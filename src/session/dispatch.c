/*
 * Matching backend messages to the request FIFO.
 *
 * Each message goes to the head request, whose entry lists the responses it
 * still expects (ParseComplete, BindComplete, ParameterDescription,
 * RowDescription/NoData, rows and CommandComplete, CloseComplete). Every
 * Sync has an entry, completed by its ReadyForQuery: an entry of its own,
 * or, for a request's own Sync, the request's entry, which becomes the
 * Sync's once the request's replies are in (PGW__RF_SYNC_HERE). A simple
 * query collects one result per statement and completes at ReadyForQuery.
 *
 * After an ErrorResponse the head request fails with PGW_ESERVER and every
 * later request of the same sync group with PGW_EABORTED (the server skips
 * them until the Sync); the Sync's ReadyForQuery ends the group. A FATAL or
 * PANIC error, or any message the head request cannot take, breaks the
 * session.
 *
 * An entry is unlinked before its callback runs, so a callback may queue new
 * requests, break or free the session; the caller checks for that after
 * every callback.
 */
#include "session_internal.h"

/* --------------------------------------------------------- entry lifecycle */

void pgw__req_release(pgw_session_t *s, pgw__req_t *r)
{
    if (r->cached) pgw__cache_unref(s, r->cached);
    r->cached = NULL;
    pgw__desc_unref(s, r->desc);
    r->desc = NULL;
    if (r->aux) {
        r->aux->next = s->fifo.aux_free;
        s->fifo.aux_free = r->aux;
        r->aux = NULL;
    }
    r->next = s->fifo.free;
    s->fifo.free = r;
    s->fifo.nfree++;
}

void pgw__retry_drop(pgw_session_t *s, pgw__req_t *r)
{
    if (!r->retry_len) return;
    pgw_buf_t *log = &s->fifo.retry;
    s->fifo.retry_off += r->retry_len;
    r->retry_len = 0;
    if (s->fifo.retry_off == log->len) {
        log->len = s->fifo.retry_off = 0;
        pgw__out_trim(s, log);
    } else if (s->fifo.retry_off >= 4096 && s->fifo.retry_off * 2 >= log->len) {
        /* Half of it is dropped: moving the rest costs as much again. */
        pgw_buf_consume(log, s->fifo.retry_off);
        s->fifo.retry_off = 0;
    }
}

static pgw__req_t *pop_head(pgw_session_t *s)
{
    pgw__req_t *r = s->fifo.head;
    pgw__retry_drop(s, r);
    s->fifo.head = r->next;
    s->fifo.head_t_first = 0; /* the next head's answer has not begun */
    if (!s->fifo.head) s->fifo.tail = NULL;
    /* before unlinking: it reads r->next */
    if (r->copy_state || (r->dl & PGW__DL_HOLDS)) pgw__copy_leaving(s, r);
    r->next = NULL;
    return r;
}

/* The times of r's results: queued, its answer's first message (first,
 * the head's time), now. */
static void stamp_results(pgw_session_t *s, pgw__req_t *r, uint64_t first)
{
    uint64_t done = pgw__stamp(s);
    for (pgw_result_t *x = r->res; x; x = x->next) {
        x->t_queued = r->t_queued;
        x->t_first = first;
        x->t_done = done;
    }
}

/* What a request's outcome changes in the statement cache and table, once,
 * whichever entry fires its callback (the request, or its Sync). */
static void settle(pgw_session_t *s, pgw__req_t *r, int status)
{
    status = pgw__dl_status(r, status);
    /* A Close of an evicted statement the server skipped or refused. */
    if ((r->flags & PGW__RF_CACHE_CLOSE) && (status == PGW_EABORTED || status == PGW_ESERVER))
        pgw__cache_close_owed(s, r->stmt_token);
    /* A failed first execution leaves no statement to trust: whatever its
     * Parse did, the entry goes (with a Close, in case it was made). */
    if (r->cached && (r->flags & PGW__RF_STORE) && status != 0 && !r->cached->st.known)
        pgw__cache_drop(s, r->cached, true);
    /* A prepare that never ran (skipped, or refused) prepared nothing. */
    if (r->kind == PGW__REQ_PREPARE && status != 0) pgw__stmt_unprepared(s, r->stmt_token);
}

/* Unlink the head request r and fire its callback with status. The result
 * goes along for 0, PGW_ESERVER and a row callback's own status. */
static void complete_one(pgw_session_t *s, int status)
{
    uint64_t t_first = s->fifo.head_t_first;
    pgw__req_t *r = pop_head(s);
    pgw_result_t *res = r->res;
    bool keep_res = status == 0 || status == PGW_ESERVER || status == PGW_ESTMTINVALID ||
                    (status == r->row_status &&
                     (r->flags & (PGW__RF_STREAM | PGW__RF_COPY_REFUSED | PGW__RF_COPY_CARRY)));
    settle(s, r, status);
    status = pgw__dl_status(r, status);
    if (status == 0 && (r->flags & PGW__RF_NO_RESULT)) keep_res = false;
    if (res && !keep_res) {
        pgw_result_free(res);
        res = NULL;
    }
    if (res) stamp_results(s, r, t_first);
    if (r->flags & PGW__RF_BATCH_END) {
        if (status == 0) status = s->fifo.rx_batch_status;
        s->fifo.rx_batch_status = 0;
    } else if ((r->flags & PGW__RF_IN_BATCH) && status < 0 && s->fifo.rx_batch_status == 0) {
        s->fifo.rx_batch_status = status;
    }
    if ((r->flags & PGW__RF_USER) && !(r->dl & PGW__DL_REPORTED)) s->fifo.npending--;
    pgw_result_cb cb = r->cb;
    void *ud = r->ud;
    pgw__driver_t driver = pgw__req_driver(r);
    pgw__req_release(s, r);
    pgw__notify(cb, ud, &driver, status, res);
}

void pgw__notify(const pgw_result_cb cb, void *ud, const pgw__driver_t *d, int status,
                 pgw_result_t *res)
{
    if (d->fn) {
        status = d->fn(d->ctx, d->index, status, &res);
        if (status == PGW_DRIVER_TAKEN) return;
    }
    if (cb)
        cb(status, res, ud);
    else
        pgw_result_free(res);
}

/* FLUSH entries that reached the head: every entry before them has
 * completed, whatever its status, so they complete too (0 and a result
 * without rows; a batch's end gets the batch's status). */
static void settle_flushes(pgw_session_t *s)
{
    while (!pgw__halted(s) && s->fifo.head && s->fifo.head->kind == PGW__REQ_FLUSH) {
        pgw__req_t *r = s->fifo.head;
        if (!r->res) r->res = pgw__result_new(s->recycler);
        complete_one(s, r->res ? 0 : PGW_ENOMEM);
    }
}

static void complete_head(pgw_session_t *s, int status)
{
    complete_one(s, status);
    settle_flushes(s);
}

void pgw__fail_all(pgw_session_t *s, int err)
{
    while (s->fifo.head)
        complete_one(s, err);
    s->fifo.rx_aborting = false;
}

static bool hand_to_sync(pgw_session_t *s, pgw__req_t *r, int status);

/* Complete with PGW_EABORTED every request the server skipped (one that
 * stands for its own Sync becomes that Sync's entry: the abort is reported
 * at its ReadyForQuery). */
static void abort_skipped(pgw_session_t *s)
{
    while (!pgw__halted(s) && s->fifo.rx_aborting && s->fifo.head &&
           s->fifo.head->group == s->fifo.rx_abort_group && s->fifo.head->kind != PGW__REQ_SYNC &&
           s->fifo.head->kind != PGW__REQ_SIMPLE)
        if (!hand_to_sync(s, s->fifo.head, PGW_EABORTED)) complete_head(s, PGW_EABORTED);
}

/* The head request's result, made when its answer begins: an execution
 * of a described statement (a cache hit, or a named one) bound with its
 * statement's formats takes the statement's description
 * (PGW__RF_DESC_LATER), as its Bind asked. */
static int ensure_res(pgw_session_t *s, pgw__req_t *r)
{
    static const int16_t text = PGW_FORMAT_TEXT;
    if (r->res) return 0;
    r->res = pgw__result_new(s->recycler);
    if (!r->res) return PGW_ENOMEM;
    if (!(r->flags & PGW__RF_DESC_LATER)) return 0;
    const pgw_field_desc_t *fields = r->desc ? r->desc->fields : r->cached->st.fields;
    const int16_t *formats = r->desc ? r->desc->formats : r->cached->st.formats;
    uint16_t ncols = r->desc ? r->desc->ncols : r->cached->st.ncols;
    bool all_text = r->flags & PGW__RF_TEXT;
    int rc = pgw__result_set_desc(r->res, fields, ncols, all_text ? &text : formats,
                                  all_text ? 1 : ncols);
    pgw__desc_unref(s, r->desc);
    r->desc = NULL;
    return rc;
}

/* ------------------------------------------------------- async messages */

typedef struct name_key {
    const pgw_session_t *s;
    const char *p;
    size_t len;
} name_key_t;

static bool param_is(const void *ctx, size_t i)
{
    const name_key_t *k = ctx;
    const pgw__param_entry_t *e = &k->s->server.params[i];
    return e->name_len == k->len && memcmp(e->name, k->p, k->len) == 0;
}

pgw__param_entry_t *pgw__param_find(const pgw_session_t *s, const char *name, size_t len)
{
    name_key_t k = {s, name, len};
    size_t i = pgw__idx_find(&s->server.params_idx, pgw__hash_bytes(name, len), param_is, &k);
    return i == SIZE_MAX ? NULL : &s->server.params[i];
}

static pgw__param_entry_t *param_add(pgw_session_t *s, pgw_str_t name)
{
    if (s->server.nparams >= PGW__MAX_SERVER_PARAMS) return NULL;
    if (s->server.nparams == s->server.params_cap) {
        size_t cap = s->server.params_cap ? s->server.params_cap * 2 : 16;
        pgw__param_entry_t *a = pgw__realloc(s->alloc, s->server.params, cap * sizeof *a);
        if (!a) return NULL;
        s->server.params = a;
        s->server.params_cap = cap;
    }
    if (pgw__idx_reserve(&s->server.params_idx, s->alloc, s->server.nparams + 1) < 0) return NULL;
    char *n = pgw__strndup(s->alloc, name.p, name.len);
    if (!n) return NULL;
    pgw__param_entry_t *e = &s->server.params[s->server.nparams];
    *e = (pgw__param_entry_t){n, name.len, pgw__hash_bytes(name.p, name.len), NULL, 0};
    pgw__idx_put(&s->server.params_idx, e->hash, s->server.nparams++);
    return e;
}

/* O(1) amortised per ParameterStatus, whatever the server sends; past
 * PGW__MAX_SERVER_PARAMS distinct names the server is not a server. */
int pgw__param_set(pgw_session_t *s, pgw_str_t name, pgw_str_t value)
{
    pgw__param_entry_t *e = pgw__param_find(s, name.p, name.len);
    if (!e && s->server.nparams >= PGW__MAX_SERVER_PARAMS) return PGW_EPROTO;
    if (!e) e = param_add(s, name);
    if (!e) return PGW_ENOMEM;
    if (value.len + 1 > e->value_cap) {
        char *v = pgw__realloc(s->alloc, e->value, value.len + 1);
        if (!v) return PGW_ENOMEM;
        e->value = v;
        e->value_cap = value.len + 1;
    }
    memcpy(e->value, value.p, value.len);
    e->value[value.len] = '\0';
    s->server.params_changes++;
    return 0;
}

/* NoticeResponse, NotificationResponse and ParameterStatus may arrive at
 * any time. Sets *handled; *rc is 0 or the error that breaks the session. */
void pgw__handle_async(pgw_session_t *s, const pgw_msg_t *m, const pgw_error_fields_t *ef,
                       int *handled, int *rc)
{
    *handled = 1;
    *rc = 0;
    switch (m->type) {
    case PGW_B_NOTICE:
        if (s->cb.on_notice) {
            pgw_error_t e;
            pgw__error_from_fields(ef, &e);
            s->cb.on_notice(s, &e, s->ud);
        }
        return;
    case PGW_B_NOTIFICATION:
        if (s->cb.on_notification)
            s->cb.on_notification(s, m->u.notification.pid, m->u.notification.channel,
                                  m->u.notification.payload, s->ud);
        return;
    case PGW_B_PARAM_STATUS:
        *rc = pgw__param_set(s, m->u.param_status.name, m->u.param_status.value);
        if (*rc == 0 && s->cb.on_parameter) {
            pgw_str_t n = m->u.param_status.name, v = m->u.param_status.value;
            s->cb.on_parameter(s, n, v, s->ud);
        }
        return;
    default:
        *handled = 0;
    }
}

/* ------------------------------------------------------------------ rows */

/* Hand DataRow m to the request's row callback; res holds the description
 * of the rows (the request's result, or a simple query's current one). */
static int stream_row(pgw_session_t *s, pgw__req_t *r, pgw_result_t *res, const pgw_msg_t *m)
{
    uint16_t n = m->u.data_row.ncols;
    if (!res->have_desc || n != res->ncols) return PGW_EPROTO;
    if (n > s->rows.cap) {
        pgw_value_t *v = pgw__realloc(s->alloc, s->rows.values, n * sizeof *v);
        if (!v) return PGW_ENOMEM;
        s->rows.values = v;
        s->rows.cap = n;
    }
    int rc = pgw__row_values(m, res->fields, n, s->rows.values);
    if (rc < 0) return rc;
    pgw__req_aux_t *x = r->aux;
    /* the caller stopped, or timed out (no row callback): discard */
    if (r->row_status < 0 || !x || !x->row_cb) return 0;
    res->nstreamed++;
    pgw_row_t row = {n, s->rows.values, res->fields, x->nrows_streamed++};
    rc = x->row_cb(&row, r->ud);
    /* r is still the head unless the callback broke or freed the session. */
    if (!pgw__halted(s) && rc < 0) r->row_status = rc;
    if (!pgw__halted(s) && rc == PGW_ROW_PAUSE) s->input.paused = true;
    return 0;
}

static int add_row(pgw_session_t *s, pgw__req_t *r, pgw_result_t *res, const pgw_msg_t *m)
{
    if (r->flags & PGW__RF_STREAM) return stream_row(s, r, res, m);
    if (r->flags & PGW__RF_NO_RESULT) return 0; /* no result to keep them in */
    return pgw__result_add_row(res, m, s->input.chunk);
}

/* ------------------------------------------------------- extended requests */

/*
 * A request closed by its own Sync is not done at CommandComplete: the
 * implicit transaction still has to commit, and a deferred constraint or a
 * serialization failure is reported only then, at the Sync. So the request
 * hands its result and callback to its Sync entry, which fires at
 * ReadyForQuery with PGW_ESERVER if the commit failed. No error the server
 * reports is lost, and the cost is nothing: the ReadyForQuery follows the
 * CommandComplete in the same read.
 */
/* The same, for a request whose entry stands for its own Sync
 * (PGW__RF_SYNC_HERE): its outcome is settled now and the entry turns into
 * the Sync's, keeping its callback and result for the ReadyForQuery. */
static void become_sync(pgw_session_t *s, pgw__req_t *r, int status)
{
    settle(s, r, status);
    if (r->cached) pgw__cache_unref(s, r->cached);
    r->cached = NULL;
    r->kind = PGW__REQ_SYNC;
    r->flags &=
        PGW__RF_USER | PGW__RF_IN_BATCH | PGW__RF_STREAM | PGW__RF_COPY_REFUSED | PGW__RF_NO_RESULT;
    r->retry = PGW__RETRY_NONE;
    pgw__retry_drop(s, r);
    r->status = status;
}

static bool hand_to_sync(pgw_session_t *s, pgw__req_t *r, int status)
{
    if (r->flags & PGW__RF_SYNC_HERE) {
        become_sync(s, r, status); /* the entry stands for its Sync */
        return true;
    }
    pgw__req_t *sync = r->next;
    if (!(r->flags & PGW__RF_OWN_SYNC) || !sync || sync->kind != PGW__REQ_SYNC ||
        (sync->flags & PGW__RF_USER))
        return false;
    sync->cb = r->cb;
    sync->ud = r->ud;
    sync->driver_fn = r->driver_fn;
    sync->driver_ctx = r->driver_ctx;
    sync->driver_index = r->driver_index;
    sync->res = r->res;
    sync->row_status = r->row_status;
    sync->t_queued = r->t_queued;
    sync->flags |= r->flags & (PGW__RF_USER | PGW__RF_IN_BATCH | PGW__RF_STREAM |
                               PGW__RF_COPY_REFUSED | PGW__RF_NO_RESULT);
    sync->dl |= r->dl;
    sync->status = status;
    settle(s, r, status);
    r->res = NULL;
    uint64_t t_first = s->fifo.head_t_first;
    pop_head(s);
    /* The Sync's entry, now the head, goes on with the same answer. */
    s->fifo.head_t_first = t_first;
    pgw__req_release(s, r); /* its pending count now belongs to the Sync */
    return true;
}

static void finish(pgw_session_t *s, pgw__req_t *r)
{
    /* Stored only if the entry is still the one the request was queued
     * against; without memory the entry stays pending (safe). */
    if ((r->flags & PGW__RF_STORE) && r->res) {
        if (r->cached)
            pgw__cache_learned(s, r->cached, r->res);
        else
            pgw__stmt_store(s, r->stmt_token, r->res);
    }
    bool own_status = r->flags & (PGW__RF_STREAM | PGW__RF_COPY_REFUSED);
    int status = own_status && r->row_status < 0 ? r->row_status : 0;
    if (hand_to_sync(s, r, status)) return;
    complete_head(s, status);
}

static int step(pgw_session_t *s, pgw__req_t *r)
{
    if (++r->step == r->nexp) finish(s, r);
    return 0;
}

int pgw__req_step(pgw_session_t *s, pgw__req_t *r)
{
    return step(s, r);
}

/* The response the request waits for next (PGW__EXP_*), 0 when done. */
static uint8_t expected(const pgw__req_t *r)
{
    return r->step < r->nexp ? r->exp[r->step] : 0;
}

static int on_extended(pgw_session_t *s, pgw__req_t *r, const pgw_msg_t *m)
{
    uint8_t exp = expected(r);
    int rc;
    /* A COPY request, or a statement that turned out to be a COPY. */
    if (exp == PGW__EXP_COPY ||
        (exp == PGW__EXP_ROWS && (r->copy_state > PGW__COPY_QUEUED || pgw__copy_message(m->type))))
        return pgw__copy_dispatch(s, r, r->res, m);
    switch (m->type) {
    case PGW_B_PARSE_COMPLETE:
        return exp == PGW__EXP_PARSE ? step(s, r) : PGW_EPROTO;
    case PGW_B_BIND_COMPLETE:
        return exp == PGW__EXP_BIND ? step(s, r) : PGW_EPROTO;
    case PGW_B_CLOSE_COMPLETE:
        return exp == PGW__EXP_CLOSE ? step(s, r) : PGW_EPROTO;
    case PGW_B_PARAM_DESC:
        if (exp != PGW__EXP_PDESC) return PGW_EPROTO;
        rc = pgw__result_set_params_msg(r->res, m);
        return rc < 0 ? rc : step(s, r);
    case PGW_B_ROW_DESC:
        if (exp == PGW__EXP_SDESC) return step(s, r); /* the portal's follows */
        if (exp != PGW__EXP_RDESC) return PGW_EPROTO;
        rc = pgw__result_set_desc_msg(r->res, m);
        return rc < 0 ? rc : step(s, r);
    case PGW_B_NO_DATA:
        if (exp == PGW__EXP_SDESC) return step(s, r);
        if (exp != PGW__EXP_RDESC) return PGW_EPROTO;
        r->res->have_desc = true;
        r->res->ncols = 0;
        return step(s, r);
    case PGW_B_DATA_ROW:
        return exp == PGW__EXP_ROWS ? add_row(s, r, r->res, m) : PGW_EPROTO;
    case PGW_B_COMMAND_COMPLETE:
        if (exp != PGW__EXP_ROWS) return PGW_EPROTO;
        rc = pgw__result_set_tag(r->res, m);
        return rc < 0 ? rc : step(s, r);
    case PGW_B_EMPTY_QUERY:
    case PGW_B_PORTAL_SUSPENDED:
        if (exp != PGW__EXP_ROWS) return PGW_EPROTO;
        r->res->complete = true;
        r->res->suspended = m->type == PGW_B_PORTAL_SUSPENDED;
        return step(s, r);
    default:
        return PGW_EPROTO;
    }
}

/* ----------------------------------------------------------- simple query */

/* A new result at the end of r's chain, which begins at r->res and ends at
 * its aux block's last. NULL when out of memory. */
static pgw_result_t *chain_new(pgw_session_t *s, pgw__req_t *r)
{
    pgw__req_aux_t *a = pgw__req_aux(s, r);
    if (!a) return NULL;
    pgw_result_t *x = pgw__result_new(s->recycler);
    if (!x) return NULL;
    if (a->last)
        a->last->next = x;
    else
        r->res = x;
    a->last = x;
    return x;
}

/* The last result of r's chain, or NULL. */
static pgw_result_t *chain_last(const pgw__req_t *r)
{
    return pgw__aux_of(r)->last;
}

/* The result of the statement in progress (a new one if the last is done). */
static pgw_result_t *chain_current(pgw_session_t *s, pgw__req_t *r)
{
    pgw_result_t *last = chain_last(r);
    if (last && !last->complete) return last;
    return chain_new(s, r);
}

/* FunctionCallResponse: the value as a result of one row and one column
 * (no name, type 0, the format the call asked), its bytes a view into the
 * read chunk as a DataRow's: the message's body is a DataRow's field. */
static int function_result(pgw_session_t *s, pgw__req_t *r, const pgw_msg_t *m)
{
    if (r->res) return PGW_EPROTO; /* one per call */
    pgw_result_t *x = chain_new(s, r);
    if (!x) return PGW_ENOMEM;
    static const char noname[] = "";
    pgw_field_desc_t f = {{noname, 0}, 0, 0, 0, -1, -1, r->fn_format};
    int rc = pgw__result_set_desc(x, &f, 1, NULL, 0);
    if (rc < 0) return rc;
    pgw_msg_t row = *m;
    row.type = PGW_B_DATA_ROW;
    row.u.data_row.ncols = 1;
    row.u.data_row.fields = m->body;
    rc = pgw__result_add_row(x, &row, s->input.chunk);
    x->complete = true;
    return rc;
}

static int on_simple(pgw_session_t *s, pgw__req_t *r, const pgw_msg_t *m)
{
    pgw_result_t *x;
    if (pgw__copy_message(m->type)) {
        /* A COPY among the statements: a new result for its response, the
         * current one for its data. */
        bool response = m->type != PGW_B_COPY_DATA && m->type != PGW_B_COPY_DONE;
        x = response ? chain_current(s, r) : chain_last(r);
        if (!x) return response ? PGW_ENOMEM : PGW_EPROTO;
        return pgw__copy_dispatch(s, r, x, m);
    }
    switch (m->type) {
    case PGW_B_ROW_DESC:
        x = chain_new(s, r);
        return x ? pgw__result_set_desc_msg(x, m) : PGW_ENOMEM;
    case PGW_B_DATA_ROW:
        x = chain_last(r);
        if (!x || x->complete) return PGW_EPROTO;
        return add_row(s, r, x, m);
    case PGW_B_COMMAND_COMPLETE: {
        /* The server has read our CopyDone / CopyFail before this. */
        if (r->copy_state == PGW__COPY_PUMP || r->copy_state == PGW__COPY_PAUSED) return PGW_EPROTO;
        x = chain_current(s, r);
        int rc = x ? pgw__result_set_tag(x, m) : PGW_ENOMEM;
        if (rc == 0) pgw__copy_statement_ended(s, r, x);
        return rc;
    }
    case PGW_B_EMPTY_QUERY:
        x = chain_new(s, r);
        if (!x) return PGW_ENOMEM;
        x->complete = true;
        return 0;
    case PGW_B_FUNCTION_RESULT:
        return r->is_call ? function_result(s, r, m) : PGW_EPROTO;
    default:
        return PGW_EPROTO;
    }
}

/* ----------------------------------------------------------------- errors */

static bool is_fatal_error(const pgw_error_fields_t *f)
{
    pgw_view_t sev = f->severity_nonlocal.len >= 0 ? f->severity_nonlocal : f->severity;
    return sev.len >= 0 && pgw_severity_ends_connection((const char *)sev.p, (size_t)sev.len);
}

/* The server is about to close the connection: the head request gets the
 * error, the others see the connection lost. With no request of the
 * caller's waiting (the server ends an idle connection: an administrator's
 * pg_terminate_backend, idle_session_timeout, a shutdown), on_notice is the
 * error's only reader, as libpq hands it to its notice processor. */
static int on_fatal_error(pgw_session_t *s, const pgw_error_fields_t *f)
{
    pgw__req_t *r = s->fifo.head;
    if (r && (r->flags & PGW__RF_USER)) {
        pgw_result_t *x = r->kind == PGW__REQ_SIMPLE ? chain_current(s, r)
                                                     : (ensure_res(s, r) == 0 ? r->res : NULL);
        int rc = x ? pgw__result_set_error(x, f) : PGW_ENOMEM;
        if (rc < 0) return rc;
        complete_head(s, PGW_ESERVER);
    } else if (s->cb.on_notice) {
        pgw_error_t e;
        pgw__error_from_fields(f, &e);
        s->cb.on_notice(s, &e, s->ud);
    }
    if (!pgw__halted(s)) pgw__session_break(s, PGW_ECONNLOST);
    return 0;
}

static bool sqlstate_is(const pgw_error_fields_t *f, const char *code)
{
    return f->sqlstate.len >= 0 &&
           pgw_sqlstate_is((const char *)f->sqlstate.p, (size_t)f->sqlstate.len, code);
}

/* The server refused to bind a named statement because it does not exist
 * (26000) or can no longer run as it was prepared (0A000: "cached plan must
 * not change result type"). */
static bool stmt_refused(const pgw__req_t *r, const pgw_error_fields_t *f)
{
    /* At its first message: the Bind, or the Describe of a statement whose
     * description is not known. */
    return r->kind == PGW__REQ_EXTENDED && r->stmt_token && r->step == 0 &&
           (sqlstate_is(f, PGW_SQLSTATE_INVALID_SQL_STATEMENT_NAME) ||
            sqlstate_is(f, PGW_SQLSTATE_FEATURE_NOT_SUPPORTED));
}

/* r ends with its own Sync and nothing was queued after that Sync. */
static bool own_sync_last(const pgw_session_t *s, const pgw__req_t *r)
{
    if (r->flags & PGW__RF_SYNC_HERE) return r == s->fifo.tail;
    const pgw__req_t *sync = r->next;
    return (r->flags & PGW__RF_OWN_SYNC) && sync && sync->kind == PGW__REQ_SYNC &&
           !(sync->flags & PGW__RF_USER) && sync == s->fifo.tail;
}

/* A query refused binary output for a column libpgwire has no binary
 * decoder for (42883 at Execute), and may run again if the ReadyForQuery
 * allows it (requests.c, keep_bind_params). */
static bool may_rebind(const pgw_session_t *s, const pgw__req_t *r, const pgw_error_fields_t *f)
{
    if (r->retry != PGW__RETRY_ARMED || expected(r) != PGW__EXP_ROWS ||
        !sqlstate_is(f, PGW_SQLSTATE_UNDEFINED_FUNCTION) || !own_sync_last(s, r))
        return false;
    /* Rows kept in the result are dropped with it; streamed ones were seen. */
    if (!r->res || !r->res->have_desc || pgw__aux_of(r)->nrows_streamed) return false;
    for (uint16_t i = 0; i < r->res->ncols; i++)
        if (pgw__column_format(r->res->fields[i].type_oid) == PGW_FORMAT_TEXT) return true;
    return false;
}

/*
 * An error on a hit of the statement cache. The entry leaves the cache when
 * the server refused it at Bind (26000: gone; 0A000: its result type
 * changed, a Close is owed).
 * Returns 1 when the ReadyForQuery may allow the query to be prepared again
 * and retried (own Sync, nothing queued behind it, parameters kept, not
 * retried before, and for 26000 the session's first vanished statement
 * since it last saw SQL that deallocates), PGW_ESTMTINVALID when the
 * refusal is the request's status, else 0 (the usual PGW_ESERVER).
 */
static const char pooler_hint[] =
    "a cached prepared statement of this session is gone: behind a pooler in transaction "
    "or statement mode (PgBouncer), set stmt_cache_mode = PGW_STMT_UNNAMED";

static int cache_refusal(pgw_session_t *s, pgw__req_t *r, const pgw_error_fields_t *f)
{
    pgw__cached_t *ce = r->cached;
    bool gone = sqlstate_is(f, PGW_SQLSTATE_INVALID_SQL_STATEMENT_NAME);
    if (!(r->flags & PGW__RF_CACHE_HIT) || expected(r) != PGW__EXP_BIND ||
        !(gone || sqlstate_is(f, PGW_SQLSTATE_FEATURE_NOT_SUPPORTED)))
        return 0;
    s->cache.stats.invalidations++;
    pgw__cache_drop(s, ce, !gone);
    if (gone && !r->res->error.hint) r->res->error.hint = pooler_hint;
    /* One vanishing may be a DISCARD ALL the session could not see; the
     * next ones mean its statements do not stay on its server connection. */
    if (gone && s->cache.vanished++) return PGW_ESTMTINVALID;
    if (r->retry == PGW__RETRY_ARMED && !r->reprepared && own_sync_last(s, r)) return 1;
    return PGW_ESTMTINVALID;
}

static int on_ready(pgw_session_t *s, pgw__req_t *r, const pgw_msg_t *m);

/* The ReadyForQuery after a query's 42883: bind it again if nothing was
 * queued since and no transaction block is open, else report the error. */
static int on_rebind_ready(pgw_session_t *s, pgw__req_t *r, const pgw_msg_t *m)
{
    s->server.txn_status = m->u.ready.status;
    uint16_t r_flags = r->flags; /* r is released by its completion */
    bool prepare = r->retry_prepare;
    r->retry_prepare = false;
    if (m->u.ready.status == 'I' && own_sync_last(s, r) &&
        (prepare ? pgw__req_reprepare(s, r) : pgw__req_rebind(s, r)) == 0)
        return 0;
    complete_head(s, prepare ? PGW_ESTMTINVALID : PGW_ESERVER);
    /* This ReadyForQuery was the request's own Sync's, when its entry
     * stood for it. */
    if (pgw__halted(s) || (r_flags & PGW__RF_SYNC_HERE)) return 0;
    return s->fifo.head && s->fifo.head->kind == PGW__REQ_SYNC ? on_ready(s, s->fifo.head, m)
                                                               : PGW_EPROTO;
}

static int on_error(pgw_session_t *s, pgw__req_t *r, const pgw_error_fields_t *f)
{
    if (r->kind == PGW__REQ_SIMPLE) {
        pgw_result_t *x = chain_current(s, r);
        if (!x) return PGW_ENOMEM;
        r->status = PGW_ESERVER;
        int rc = pgw__result_set_error(x, f);
        if (rc == 0) pgw__copy_statement_ended(s, r, x);
        return rc;
    }
    int rc = 0;
    if (r->kind == PGW__REQ_SYNC) {
        /* An error at the Sync itself (e.g. a deferred constraint at the
         * implicit commit): the Sync's owner gets it at ReadyForQuery. */
        r->status = PGW_ESERVER;
        if (r->flags & PGW__RF_USER) rc = pgw__result_set_error(r->res, f);
        return rc;
    }
    /* An entry of the session's own (a cached statement's Close) has no
     * result to hold the error. */
    rc = r->res ? pgw__result_set_error(r->res, f) : 0;
    if (rc < 0) return rc;
    if (may_rebind(s, r, f)) {
        r->retry = PGW__RETRY_WAIT; /* its Sync is the only other entry of its group */
        return 0;
    }
    int cache_status = r->cached ? cache_refusal(s, r, f) : 0;
    if (cache_status == 1) {
        r->retry = PGW__RETRY_WAIT;
        r->retry_prepare = true;
        return 0;
    }
    /* In an open group nothing ends the server's skipping but a Sync: send
     * it now, so the requests already sent in the group can be aborted and
     * those submitted later run in a group of their own. */
    if (s->group.open && r->group == s->fifo.tx_group) {
        rc = pgw__group_end_now(s);
        if (rc < 0) return rc;
    }
    int status = PGW_ESERVER;
    /* A COPY the caller abandoned: the server's error (57014) is the echo. */
    if (r->copy_state && r->row_status < 0) status = r->row_status;
    if (stmt_refused(r, f)) {
        if (r->flags & PGW__RF_VOUCHED) status = PGW_ESTMTINVALID;
        pgw__stmt_refused(s, r->stmt_token);
    }
    if (cache_status < 0) status = cache_status;
    s->fifo.rx_aborting = true;
    s->fifo.rx_abort_group = r->group;
    /* With its own Sync the request completes at the ReadyForQuery, like a
     * success: the transaction status then says what the error left (a
     * failed block, or idle again). */
    if (!hand_to_sync(s, r, status)) complete_head(s, status);
    if (s->fifo.rx_aborting) abort_skipped(s); /* per message: no call on the usual path */
    return 0;
}

/* --------------------------------------------------------- ReadyForQuery */

static int on_ready(pgw_session_t *s, pgw__req_t *r, const pgw_msg_t *m)
{
    s->server.txn_status = m->u.ready.status;
    if (r->kind == PGW__REQ_SYNC) {
        if (s->fifo.rx_aborting && s->fifo.rx_abort_group == r->group) s->fifo.rx_aborting = false;
        complete_head(s, r->status);
        return 0;
    }
    if (r->kind == PGW__REQ_SIMPLE) {
        if (!r->res && !chain_new(s, r)) return PGW_ENOMEM;
        int status = r->status;
        if (status == 0 && (r->flags & PGW__RF_STREAM) && r->row_status < 0) status = r->row_status;
        /* A COPY the caller abandoned: the server's error (57014) is the echo. */
        if ((r->flags & PGW__RF_COPY_CARRY) && r->row_status < 0) status = r->row_status;
        /* A COPY it could not carry, whatever the server made of its end. */
        if (r->flags & PGW__RF_COPY_REFUSED) status = PGW_ECOPY;
        complete_head(s, status);
        return 0;
    }
    return PGW_EPROTO;
}

/* ---------------------------------------------------------------- dispatch */

/* A simple query's message m came after the CopyDone of a COPY TO: unless
 * it is that statement's CommandComplete or error, the COPY ended without
 * one. A replication command sends its archive so (BASE_BACKUP: rows, the
 * COPY, rows, then a CommandComplete of its own). The COPY's result is
 * then complete without a tag, and its statement over. */
static void copy_out_settle(pgw_session_t *s, pgw__req_t *r, const pgw_msg_t *m)
{
    if (r->kind != PGW__REQ_SIMPLE || m->type == PGW_B_COMMAND_COMPLETE || m->type == PGW_B_ERROR)
        return;
    pgw_result_t *x = chain_last(r);
    if (!x) return;
    x->complete = true;
    pgw__copy_statement_ended(s, r, x);
}

int pgw__dispatch(pgw_session_t *s, const pgw_msg_t *m)
{
    /* An ErrorResponse or NoticeResponse is parsed here, once: every site
     * below reads these fields. */
    pgw_error_fields_t f;
    const pgw_error_fields_t *ef = NULL;
    if (m->type == PGW_B_ERROR || m->type == PGW_B_NOTICE) {
        if (pgw_error_fields_parse(m, &f) < 0) return PGW_EPROTO;
        ef = &f;
    }
    int handled, rc;
    pgw__handle_async(s, m, ef, &handled, &rc);
    if (handled) return rc;
    if (s->state == PGW_SESSION_STARTUP || s->state == PGW_SESSION_NEW)
        return pgw__startup_dispatch(s, m, ef);
    if (m->type == PGW_B_ERROR && is_fatal_error(ef)) return on_fatal_error(s, ef);
    if (s->fifo.rx_aborting) abort_skipped(s); /* per message: no call on the usual path */
    settle_flushes(s);
    if (pgw__halted(s)) return 0;
    pgw__req_t *r = s->fifo.head;
    if (!r) return PGW_EPROTO;
    if (!s->fifo.head_t_first) s->fifo.head_t_first = pgw__stamp(s);
    if ((r->flags & PGW__RF_USER) && r->kind != PGW__REQ_SIMPLE) {
        rc = ensure_res(s, r);
        if (rc < 0) return rc;
    }
    if (r->retry == PGW__RETRY_WAIT)
        return m->type == PGW_B_READY ? on_rebind_ready(s, r, m) : PGW_EPROTO;
    if (r->copy_state == PGW__COPY_OUT_DONE) {
        copy_out_settle(s, r, m);
        if (pgw__halted(s)) return 0;
    }
    if (m->type == PGW_B_READY) return on_ready(s, r, m);
    if (m->type == PGW_B_ERROR) return on_error(s, r, ef);
    switch (r->kind) {
    case PGW__REQ_SIMPLE:
        return on_simple(s, r, m);
    case PGW__REQ_SYNC:
        return PGW_EPROTO;
    default:
        return on_extended(s, r, m);
    }
}
