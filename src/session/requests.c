/*
 * Requests: the one implementation of every request kind, behind
 * pgw_session_submit and pgw_session_submit_batch (the named calls of
 * session.h, conn.h and client.h only fill in a descriptor).
 *
 * A submit encodes its messages straight into the output buffer and
 * prepares FIFO entries (from a free list: no allocation per request in
 * steady state), kept in a local chain until every request of the submit
 * has been encoded. Encoding is all or nothing: on any failure the buffer
 * is truncated back to where the submit began, the entries go back to the
 * free list and the error is returned without a callback. Only then are
 * the entries linked into the FIFO and the driver told about the output.
 *
 * Result formats on the extended protocol: an unnamed query asks binary for
 * every column (or text with PGW_Q_TEXT, or the caller's formats) and is
 * bound again with per-column formats if the server has no binary output
 * for a column's type (see keep_bind_params). A statement whose description
 * the table knows is executed with per-column formats from it (binary where
 * pgw_type_binary_ok, text otherwise) and without a Describe; any other
 * named statement with text for every column and a Describe portal, whose
 * reply the table keeps.
 */
#include "proto/proto_internal.h"
#include "session_internal.h"
#include "types/param_convert.h"

#include <stdarg.h>
#include <stdio.h>

/* How many items the next block holds when have are allocated: as many
 * again, within PGW__REQ_BLOCK_MIN..MAX. */
static size_t block_items(size_t have)
{
    return have < PGW__REQ_BLOCK_MIN   ? PGW__REQ_BLOCK_MIN
           : have > PGW__REQ_BLOCK_MAX ? PGW__REQ_BLOCK_MAX
                                       : have;
}

/* A new block of entries onto the free list. Returns 0 or PGW_ENOMEM. */
static int req_grow(pgw_session_t *s)
{
    size_t n = block_items(s->fifo.nentries);
    pgw__req_block_t *b = pgw__malloc(s->alloc, sizeof *b + n * sizeof b->req[0]);
    if (!b) return PGW_ENOMEM;
    b->next = s->fifo.blocks;
    s->fifo.blocks = b;
    s->fifo.nentries += n;
    for (size_t i = 0; i < n; i++) {
        b->req[i].next = s->fifo.free;
        s->fifo.free = &b->req[i];
    }
    s->fifo.nfree += (unsigned)n;
    return 0;
}

const pgw__req_aux_t pgw__no_aux = {0};

/* A new block of aux blocks onto their free list. Returns 0 or
 * PGW_ENOMEM. */
static int aux_grow(pgw_session_t *s)
{
    size_t n = block_items(s->fifo.naux);
    pgw__aux_block_t *b = pgw__malloc(s->alloc, sizeof *b + n * sizeof b->aux[0]);
    if (!b) return PGW_ENOMEM;
    b->next = s->fifo.aux_blocks;
    s->fifo.aux_blocks = b;
    s->fifo.naux += n;
    for (size_t i = 0; i < n; i++) {
        b->aux[i].next = s->fifo.aux_free;
        s->fifo.aux_free = &b->aux[i];
    }
    return 0;
}

pgw__req_aux_t *pgw__req_aux(pgw_session_t *s, pgw__req_t *r)
{
    if (r->aux) return r->aux;
    if (!s->fifo.aux_free && aux_grow(s) < 0) return NULL;
    pgw__req_aux_t *x = s->fifo.aux_free;
    s->fifo.aux_free = x->next;
    memset(x, 0, sizeof *x);
    r->aux = x;
    return x;
}

static pgw__req_t *req_alloc(pgw_session_t *s)
{
    if (!s->fifo.free && req_grow(s) < 0) return NULL;
    pgw__req_t *r = s->fifo.free;
    s->fifo.free = r->next;
    s->fifo.nfree--;
    memset(r, 0, sizeof *r);
    return r;
}

static int accepting(const pgw_session_t *s)
{
    if (s->freeing || s->free_pending) return PGW_ECLOSED;
    if (s->state == PGW_SESSION_BROKEN || s->state == PGW_SESSION_TERMINATED) return PGW_ECLOSED;
    return 0;
}

static void set_expect(pgw__req_t *r, const uint8_t *exp, uint8_t n)
{
    memcpy(r->exp, exp, n);
    r->nexp = n;
}

/* ------------------------------------------------------------ a submit */

/* The requests of one submit call, encoded but not yet linked. */
typedef struct submit {
    pgw_session_t *s;
    pgw_buf_t *b;
    size_t from;              /* output length before the submit */
    size_t retry_from;        /* retry log length before the submit */
    pgw__req_t *first, *last; /* entries in FIFO order */
    uint32_t group;           /* sync group of the next entry */
    size_t index;             /* request being queued (for refusals) */
    bool batch;
    bool naming;          /* refusals name the request's index */
    bool timed;           /* a request of the submit has a deadline */
    uint64_t ticket;      /* ticket of the request being queued (0: none) */
    uint64_t ticket_from; /* s->fifo.ticket_seq before the submit */
    /* The group state this submit leaves (committed with it): no Sync
     * queued after the last entry, portals opened in the group, and whether
     * the last message is a Flush. */
    bool open;
    uint32_t nportals;
    bool flushed;
    /* The driver of the submit (session.h, "Driver completions"). */
    pgw_driver_hook hook;
    void *hook_ctx;
    /* The PGW__SQL_* words of the request being queued (scanned at most
     * once per request: words_known). */
    unsigned words;
    bool words_known;
} submit_t;

/* Record why request sb->index was refused; returns rc. */
static int refuse(submit_t *sb, int rc, const char *fmt, ...)
{
    char *m = sb->s->submit.refusal;
    size_t n = sizeof sb->s->submit.refusal, at = 0;
    if (sb->naming) at = (size_t)snprintf(m, n, "request %zu: ", sb->index);
    if (at >= n) at = n - 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m + at, n - at, fmt, ap);
    va_end(ap);
    return rc;
}

static void chain(submit_t *sb, pgw__req_t *r)
{
    r->group = sb->group;
    r->ticket = sb->ticket;
    r->t_queued = pgw__stamp(sb->s);
    if (sb->last)
        sb->last->next = r;
    else
        sb->first = r;
    sb->last = r;
}

/* A new entry of kind, chained; with_sync chains its own Sync after it
 * (an error barrier: the group ends there). NULL without memory. */
static pgw__req_t *add_entry(submit_t *sb, uint8_t kind, uint16_t flags)
{
    pgw__req_t *r = req_alloc(sb->s);
    if (!r) return NULL;
    r->kind = kind;
    r->flags = flags;
    chain(sb, r);
    return r;
}

/* The caller's callback and ud, and the submit's driver hook (with the
 * request's index), go to entry r. */
static void listen_to(submit_t *sb, pgw__req_t *r, pgw_result_cb cb, void *ud, size_t index)
{
    r->cb = cb;
    r->ud = ud;
    r->driver_fn = sb->hook;
    r->driver_ctx = sb->hook_ctx;
    r->driver_index = index == PGW_DRIVER_BATCH ? PGW__DRIVER_INDEX_BATCH : (uint32_t)index;
}

/* A Sync: the submit's sync group ends. */
static int enc_group_end(submit_t *sb)
{
    sb->group = pgw__group_next(sb->group);
    sb->open = false;
    sb->nportals = 0;
    sb->flushed = false;
    return pgw_enc_sync(sb->b);
}

static int add_sync(submit_t *sb, uint16_t flags, pgw_result_cb cb, void *ud)
{
    pgw__req_t *r = add_entry(sb, PGW__REQ_SYNC, flags);
    if (!r) return PGW_ENOMEM;
    if (flags & PGW__RF_USER)
        listen_to(sb, r, cb, ud, (flags & PGW__RF_BATCH_END) ? PGW_DRIVER_BATCH : sb->index);
    return enc_group_end(sb);
}

/* The request r's own Sync. Its entry stands for the Sync too
 * (PGW__RF_SYNC_HERE): a pending request costs one entry. A request whose
 * entry marks where held output begins (a COPY: copy_end; a deadline:
 * the submit's last entry holds, deadline.c) keeps a Sync entry apart. */
static int add_own_sync(submit_t *sb, pgw__req_t *r, uint16_t batch_flag, uint32_t timeout)
{
    if (r->copy_state || timeout) {
        r->flags |= PGW__RF_OWN_SYNC;
        return add_sync(sb, batch_flag, NULL, NULL);
    }
    r->flags |= PGW__RF_SYNC_HERE;
    return enc_group_end(sb);
}

/* Undo a failed submit: nothing of it stays queued. */
static void rollback(submit_t *sb)
{
    pgw_session_t *s = sb->s;
    sb->b->len = sb->from;
    pgw__out_trim(s, sb->b);
    s->fifo.retry.len = sb->retry_from;
    s->fifo.ticket_seq = sb->ticket_from;
    for (pgw__req_t *r = sb->first, *next; r; r = next) {
        next = r->next;
        if (r->flags & PGW__RF_CACHE_CLOSE) pgw__cache_close_owed(s, r->stmt_token);
        if (r->cached && (r->flags & PGW__RF_STORE)) pgw__cache_cancel(s, r->cached);
        if (r->res) pgw_result_free(r->res);
        r->res = NULL;
        pgw__req_release(s, r);
    }
}

/* Link the submit's entries into the FIFO and announce the output. */
static void commit(submit_t *sb)
{
    pgw_session_t *s = sb->s;
    for (pgw__req_t *r = sb->first; r; r = r->next)
        if (r->flags & PGW__RF_USER) s->fifo.npending++;
    if (s->fifo.tail)
        s->fifo.tail->next = sb->first;
    else
        s->fifo.head = sb->first;
    s->fifo.tail = sb->last;
    s->fifo.tx_group = sb->group;
    s->group.open = sb->open;
    s->group.nportals = sb->nportals;
    pgw__enter(s);
    if (sb->b != &s->copy.held) pgw__trace_out(s, sb->b, sb->from, true); /* else when written */
    pgw__out_appended(s, sb->b, sb->from);
    if (sb->timed) pgw__dl_announce(s, sb->first);
    pgw__leave(s);
}

/* ---------------------------------------------------------- validation */

static const char *const kind_names[] = {
#define KIND_NAME(name, entry) [PGW_REQ_##name] = #name,
    PGW__REQUEST_KINDS(KIND_NAME)
#undef KIND_NAME
};

/* The FIFO entry kind of each request kind. */
static const uint8_t entry_kinds[] = {
#define ENTRY_KIND(name, entry) [PGW_REQ_##name] = PGW__REQ_##entry,
    PGW__REQUEST_KINDS(ENTRY_KIND)
#undef ENTRY_KIND
};

static bool known_kind(int k)
{
    return k > 0 && (size_t)k < PGW__ARRAY_LEN(entry_kinds) && entry_kinds[k];
}

/* A request the server answers with its own ReadyForQuery: a simple
 * query, a function call. */
static bool sync_point(const pgw_request_t *rq)
{
    return rq->kind == PGW_REQ_SIMPLE || rq->kind == PGW_REQ_FUNCTION_CALL;
}

/* What the kind needs and refuses, before anything is encoded. */
static int validate(submit_t *sb, const pgw_request_t *rq)
{
    if (!known_kind(rq->kind)) return refuse(sb, PGW_EINVAL, "unknown request kind %d", rq->kind);
    const char *kn = kind_names[rq->kind];
    bool wants_sql = rq->kind == PGW_REQ_QUERY || rq->kind == PGW_REQ_SIMPLE ||
                     rq->kind == PGW_REQ_PREPARE || rq->kind == PGW_REQ_COPY;
    bool wants_stmt = rq->kind >= PGW_REQ_PREPARE && rq->kind <= PGW_REQ_CLOSE;
    bool calls = rq->kind == PGW_REQ_FUNCTION_CALL;
    bool takes_params = rq->kind == PGW_REQ_QUERY || rq->kind == PGW_REQ_EXECUTE || calls;
    if (wants_sql && !rq->sql) return refuse(sb, PGW_EINVAL, "%s needs sql", kn);
    if (wants_stmt && !rq->stmt) return refuse(sb, PGW_EINVAL, "%s needs a statement name", kn);
    if (rq->nparams && (!takes_params || !rq->params))
        return refuse(sb, PGW_EINVAL, "%s: %s", kn,
                      takes_params ? "params is NULL" : "this kind takes no parameters");
    /* The count first: a caller's count past the protocol's bound says
     * nothing about how many parameters its array holds. */
    if (rq->nparams > PGW_MAX_PARAMS || rq->nparam_types > PGW_MAX_PARAMS ||
        rq->nresult_formats > PGW_MAX_PARAMS)
        return refuse(sb, PGW_EINVAL, "%s: more than %u parameters, types or formats", kn,
                      (unsigned)PGW_MAX_PARAMS);
    for (size_t i = 0; i < rq->nparams; i++) {
        const char *why = pgw__param_invalid(&rq->params[i]);
        if (why) return refuse(sb, PGW_EINVAL, "%s: parameter $%zu: %s", kn, i + 1, why);
    }
    if (rq->nresult_formats && !rq->result_formats)
        return refuse(sb, PGW_EINVAL, "%s: result_formats is NULL", kn);
    if (calls && (!rq->fn_oid || rq->nresult_formats > 1))
        return refuse(sb, PGW_EINVAL, "%s needs fn_oid and at most one result format", kn);
    if (!calls && rq->fn_oid) return refuse(sb, PGW_EINVAL, "%s takes no fn_oid", kn);
    if (rq->on_row && !takes_params && rq->kind != PGW_REQ_SIMPLE && rq->kind != PGW_REQ_FETCH)
        return refuse(sb, PGW_EINVAL, "%s returns no rows to stream", kn);
    bool portal_kind = rq->kind == PGW_REQ_FETCH || rq->kind == PGW_REQ_CLOSE_PORTAL ||
                       rq->kind == PGW_REQ_DESCRIBE_PORTAL;
    bool names_portal = (takes_params && !calls) || portal_kind;
    if ((rq->portal && !names_portal) ||
        (rq->max_rows && !names_portal && rq->kind != PGW_REQ_FETCH))
        return refuse(sb, PGW_EINVAL, "%s takes no portal or max_rows", kn);
    if (portal_kind && !rq->portal) return refuse(sb, PGW_EINVAL, "%s needs a portal name", kn);
    if (rq->kind == PGW_REQ_FLUSH && !sb->s->fifo.head && !sb->first)
        return refuse(sb, PGW_EINVAL, "FLUSH: no request before it to wait for");
    if ((rq->flags & PGW_Q_NO_MESSAGE) && rq->kind != PGW_REQ_FLUSH)
        return refuse(sb, PGW_EINVAL, "%s: PGW_Q_NO_MESSAGE is for FLUSH only", kn);
    if (rq->route > PGW_ROUTE_READ_ONLY)
        return refuse(sb, PGW_EINVAL, "%s: route %u is not a PGW_ROUTE_*", kn, (unsigned)rq->route);
    if (rq->cache > PGW_CACHE_NOW || (rq->cache && rq->kind != PGW_REQ_QUERY))
        return refuse(sb, PGW_EINVAL, "%s: cache policy %u is not one of this kind's", kn,
                      (unsigned)rq->cache);
    if (wants_stmt && sb->s->cache.mode == PGW_STMT_UNNAMED && rq->stmt[0])
        return refuse(sb, PGW_ENOTSUP,
                      "%s: named statement \"%s\" under stmt_cache_mode PGW_STMT_UNNAMED", kn,
                      rq->stmt);
    if (pgw__dl_effective(sb->s, rq) < 0)
        return refuse(sb, PGW_ENOTSUP, "%s: timeout_ms needs a driver that keeps time", kn);
    bool copy_cbs = rq->copy_source || rq->on_copy_data || rq->on_copy_start || rq->on_copy_end;
    if (copy_cbs && rq->kind != PGW_REQ_COPY && rq->kind != PGW_REQ_SIMPLE)
        return refuse(sb, PGW_EINVAL, "%s: COPY callbacks on a request that is not a COPY", kn);
    if (rq->on_copy_end && rq->kind != PGW_REQ_SIMPLE)
        return refuse(sb, PGW_EINVAL, "%s: on_copy_end is for a SIMPLE query", kn);
    if (sb->batch && (sync_point(rq) || rq->kind == PGW_REQ_SYNC))
        return refuse(sb, PGW_EINVAL, "%s cannot be part of a batch", kn);
    return 0;
}

/* --------------------------------------------------------------- encoders */

/* Parse with n parameter types from oids, from params, or 0 (inferred). */
static int enc_parse(pgw_session_t *s, pgw_buf_t *b, const char *name, const char *sql,
                     const uint32_t *oids, const pgw_param_t *params, size_t n)
{
    /* Types from an array, or none (every statement of an unprepared query
     * without types): the encoder that measures the message first and
     * grows the buffer once. */
    if (oids || n == 0)
        return sql ? pgw__enc_parse_cstr(b, name, sql, strlen(sql), oids, n, s->max_message)
                   : PGW_EINVAL;
    pgw_msgw_t w;
    pgw_msgw_begin(b, 'P', &w);
    pgw_msgw_cstr(&w, name);
    pgw_msgw_cstr(&w, sql);
    pgw_msgw_i16(&w, (int16_t)(uint16_t)n);
    for (size_t i = 0; i < n; i++)
        pgw_msgw_i32(&w, (int32_t)(oids ? oids[i] : params ? params[i].oid : 0));
    return pgw_msgw_end(&w, s->max_message);
}

/* How many of a query's n parameter types (from oids, else from params)
 * its Parse names: up to the last one that is not 0. A type left out is
 * one the server infers, as for an OID of 0, so the statement is the same;
 * and a parameter the SQL does not use is then reported as it is with
 * libpq, whose Parse names no type without paramTypes: the Bind supplies
 * more parameters than the statement takes. */
static size_t named_types(const uint32_t *oids, const pgw_param_t *params, size_t n)
{
    while (n > 0 && (oids ? oids[n - 1] : params[n - 1].oid) == 0)
        n--;
    return n;
}

static const int16_t fmt_binary = PGW_FORMAT_BINARY;
static const int16_t fmt_text = PGW_FORMAT_TEXT;

/* The result formats a Bind asks for: the caller's, or one for all. */
typedef struct formats {
    const int16_t *f;
    size_t n;
} formats_t;

/* Bind (parameters encoded straight into the output); a parameter whose
 * encoding failed is named in the refusal. */
static int enc_bind(submit_t *sb, const char *portal, const char *stmt, const pgw_param_t *params,
                    size_t n, formats_t f)
{
    size_t failed;
    int rc =
        pgw__enc_bind_params(sb->b, portal, stmt, params, n, f.f, f.n, sb->s->max_message, &failed);
    if (rc < 0 && failed != SIZE_MAX)
        refuse(sb, rc, "parameter $%zu: %s", failed + 1, pgw_strerror(rc));
    return rc;
}

static formats_t policy_formats(const pgw_request_t *rq);

/* FunctionCall: fn_oid, the arguments' formats and values (a Bind's
 * parameter section: encoded by the one parameter encoder, as a Bind of no
 * portal, no statement and no result formats, then turned into 'F'), and
 * the result's format. */
static int enc_function_call(submit_t *sb, const pgw_request_t *rq)
{
    pgw_buf_t *b = sb->b;
    size_t at = b->len;
    int rc = enc_bind(sb, "", "", rq->params, rq->nparams, (formats_t){NULL, 0});
    if (rc == 0) rc = pgw_buf_reserve(b, 2);
    if (rc < 0) return rc;
    /* 'B' len "" "" section int16(0)  ->  'F' len oid section int16(format) */
    size_t body = b->len - at - 5;
    if (body + 2 + 4 > sb->s->max_message) {
        b->len = at;
        return refuse(sb, PGW_ETOOBIG, "the function call is over max_message_size");
    }
    uint8_t *m = b->data + at;
    memmove(m + 9, m + 7, body - 2);
    b->len += 2;
    m[0] = 'F';
    pgw__put32(m + 1, (uint32_t)(body + 2 + 4));
    pgw__put32(m + 5, rq->fn_oid);
    pgw__put16(b->data + b->len - 2, (uint16_t)policy_formats(rq).f[0]);
    return 0;
}

static formats_t policy_formats(const pgw_request_t *rq)
{
    if (rq->nresult_formats) return (formats_t){rq->result_formats, rq->nresult_formats};
    return (formats_t){(rq->flags & PGW_Q_TEXT) ? &fmt_text : &fmt_binary, 1};
}

/* The PGW__SQL_* words of rq's SQL (0 without SQL). */
static unsigned sql_words(submit_t *sb, const pgw_request_t *rq)
{
    if (!sb->words_known) {
        sb->words = rq->sql ? pgw__sql_words(rq->sql, strlen(rq->sql)) : 0;
        sb->words_known = true;
    }
    return sb->words;
}

/* Whether rq's SQL, one statement (a Parse's) or a list of them (a simple
 * query's), may start a COPY. */
static bool may_copy(submit_t *sb, const pgw_request_t *rq, bool one)
{
    if (sb->words_known) return sb->words & PGW__SQL_COPY;
    return rq->sql && pgw__sql_may_copy(rq->sql, strlen(rq->sql), one);
}

/* SQL that may deallocate or replace named statements leaves nothing in the
 * table to trust: later executions describe their statement (no extra round
 * trip) and teach the table again. */
static void forget_if_replacing(submit_t *sb, const pgw_request_t *rq)
{
    pgw_session_t *s = sb->s;
    if ((s->stmts.n || s->cache.stats.entries) && (sql_words(sb, rq) & PGW__SQL_REPLACES)) {
        pgw__stmt_unsure_all(s);
        pgw__cache_flush(s);
        s->cache.vanished = 0;
    }
}

/* A statement that may start a COPY the server reads client messages
 * during (COPY FROM STDIN, CopyBoth) holds what is queued after it until
 * the server has answered it (copy.c). */
static int hold_if_copy(submit_t *sb, pgw__req_t *r, bool may_copy)
{
    return may_copy ? pgw__copy_may_start(sb->s, sb->b, r) : 0;
}

/*
 * Types without binary output. A request that cannot know its columns' types
 * before it binds (an unnamed query, an execution of a statement not yet
 * described) asks binary for every column: no round trip, and the same
 * formats the rule gives once the types are known (pgw__column_format:
 * binary for every type the server sends in binary). The server refuses
 * binary (42883 at Execute, at the first row) for a type without a send
 * function, such as aclitem. The request then runs again, bound with the
 * rule's formats, when a second run changes nothing a caller could see: it
 * has its own Sync, nothing was queued after it, and the ReadyForQuery says
 * no transaction block is open (its implicit transaction was rolled back).
 * The caller's parameters are gone by then, so the Bind's statement name
 * (unless it is the cached statement's, r->cached) and parameter section
 * are kept, in the session's retry log: one buffer for every pending
 * request, in FIFO order (no allocation per query once warm; a larger
 * section is not kept and the query is not retried).
 */
static void keep_bind_params(submit_t *sb, pgw__req_t *r, size_t bind_at, const char *portal,
                             size_t nformats)
{
    const pgw_buf_t *b = sb->b;
    /* 'B' len portal stmt [formats, parameters] nformats format... */
    size_t from = bind_at + 5 + strlen(portal) + 1;
    if (r->cached) from += strlen(r->cached->name) + 1;
    size_t to = b->len - 2 - 2 * nformats;
    if (to - from > PGW__RETRY_MAX_PARAMS) return;
    if (pgw_buf_append(&sb->s->fifo.retry, b->data + from, to - from) < 0) return;
    r->retry_len = (uint16_t)(to - from);
    r->retry = PGW__RETRY_ARMED;
}

/* What the head request r kept in the retry log. */
static const uint8_t *kept_params(const pgw_session_t *s)
{
    return s->fifo.retry.data + s->fifo.retry_off;
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
    if (r->cached) pgw_msgw_cstr(&w, r->cached->name);
    pgw_msgw_bytes(&w, kept_params(s), r->retry_len); /* [statement,] parameters */
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
    r->res = NULL;
    r->flags &= (uint16_t)~PGW__RF_DESC_LATER; /* the Describe brings it */
    set_expect(r, exp, sizeof exp);
    r->step = 0;
    r->retry = PGW__RETRY_DONE;
    pgw__trace_out(s, b, from, true);
    pgw__out_appended(s, b, from);
    return 0;
}

int pgw__req_reprepare(pgw_session_t *s, pgw__req_t *r)
{
    static const uint8_t exp[] = {PGW__EXP_PARSE, PGW__EXP_BIND, PGW__EXP_RDESC, PGW__EXP_ROWS};
    pgw__cached_t *old = r->cached;
    pgw__cached_t *ce = pgw__cache_readmit(s, old);
    if (!ce) return PGW_ENOMEM;
    pgw_buf_t *b = pgw__req_buf(s);
    size_t from = b->len;
    int rc =
        enc_parse(s, b, ce->name, ce->sql, ce->oids, NULL, named_types(ce->oids, NULL, ce->noids));
    if (rc == 0) {
        pgw_msgw_t w;
        /* The kept parameters (a cached statement's name is not kept). */
        pgw_msgw_begin(b, 'B', &w);
        pgw_msgw_cstr(&w, "");
        pgw_msgw_cstr(&w, ce->name);
        pgw_msgw_bytes(&w, kept_params(s), r->retry_len);
        pgw_msgw_i16(&w, 1);
        pgw_msgw_i16(&w, (r->flags & PGW__RF_TEXT) ? PGW_FORMAT_TEXT : PGW_FORMAT_BINARY);
        rc = pgw_msgw_end(&w, s->max_message);
    }
    if (rc == 0) rc = pgw_enc_describe(b, 'P', "");
    if (rc == 0) rc = pgw_enc_execute(b, "", 0);
    if (rc == 0) rc = pgw_enc_sync(b);
    if (rc < 0) {
        b->len = from;
        pgw__cache_cancel(s, ce);
        return rc;
    }
    pgw__cache_unref(s, old);
    r->cached = ce;
    ce->refs++;
    r->flags = (uint16_t)((r->flags & ~(PGW__RF_CACHE_HIT | PGW__RF_DESC_LATER)) | PGW__RF_STORE);
    pgw_result_free(r->res);
    r->res = NULL;
    set_expect(r, exp, sizeof exp);
    r->step = 0;
    r->reprepared = true;
    /* Binary for every column may meet a type without binary output: the
     * rebind stays possible, once. */
    r->retry = (r->flags & PGW__RF_TEXT) ? PGW__RETRY_DONE : PGW__RETRY_ARMED;
    s->cache.stats.reprepares++;
    pgw__trace_out(s, b, from, true);
    pgw__out_appended(s, b, from);
    return 0;
}

/* Parse (unnamed, or under stmt when the cache prepares it), Bind,
 * Describe portal, Execute. */
static int enc_query(submit_t *sb, pgw__req_t *r, const pgw_request_t *rq, bool own_sync,
                     const char *stmt)
{
    static const uint8_t exp[] = {PGW__EXP_PARSE, PGW__EXP_BIND, PGW__EXP_RDESC, PGW__EXP_ROWS};
    pgw_session_t *s = sb->s;
    set_expect(r, exp, sizeof exp);
    formats_t f = policy_formats(rq);
    const char *portal = pgw__portal_name(rq);
    int rc = rq->param_types
                 ? enc_parse(s, sb->b, stmt, rq->sql, rq->param_types, NULL, rq->nparam_types)
                 : enc_parse(s, sb->b, stmt, rq->sql, NULL, rq->params,
                             named_types(NULL, rq->params, rq->nparams));
    size_t bind_at = sb->b->len;
    if (rc == 0) rc = enc_bind(sb, portal, stmt, rq->params, rq->nparams, f);
    /* Only the default all-binary policy can meet a type without binary
     * output and be rebound with text for it; never a portal's batch. */
    if (rc == 0 && own_sync && f.f == &fmt_binary && !pgw__opens_portal(rq))
        keep_bind_params(sb, r, bind_at, portal, 1);
    if (rc == 0) rc = pgw_enc_describe(sb->b, 'P', portal);
    if (rc == 0) rc = pgw_enc_execute(sb->b, portal, pgw__portal_max_rows(rq));
    if (rc == 0) rc = hold_if_copy(sb, r, may_copy(sb, rq, true));
    return rc;
}

static int enc_prepare(submit_t *sb, pgw__req_t *r, const pgw_request_t *rq)
{
    static const uint8_t exp[] = {PGW__EXP_PARSE, PGW__EXP_PDESC, PGW__EXP_RDESC};
    set_expect(r, exp, sizeof exp);
    int rc = enc_parse(sb->s, sb->b, rq->stmt, rq->sql, rq->param_types, NULL,
                       rq->param_types ? rq->nparam_types : 0);
    if (rc == 0) rc = pgw_enc_describe(sb->b, 'S', rq->stmt);
    return rc;
}

/* The parameters as the statement's declared types take them: the caller's
 * array when every binary parameter has its parameter's type, else a
 * converted copy in the session's scratch array (grown when needed and
 * kept: no allocation per execution once warm). Bind carries no types, so
 * a binary value of another type would be read as the declared one. */
static int convert_params(submit_t *sb, const pgw__stmt_t *st, const pgw_request_t *rq,
                          const pgw_param_t **out)
{
    pgw_session_t *s = sb->s;
    const pgw_param_t *in = rq->params;
    size_t n = rq->nparams, i = 0;
    *out = in;
    while (i < n && (in[i].format != PGW_FORMAT_BINARY || in[i].kind == PGW_PARAM_NULL ||
                     in[i].oid == st->param_oids[i]))
        i++;
    if (i == n) return 0;
    if (s->submit.conv_cap < n) {
        pgw_param_t *a = pgw__realloc(s->alloc, s->submit.conv, n * sizeof *a);
        if (!a) return PGW_ENOMEM;
        s->submit.conv = a;
        s->submit.conv_cap = n;
    }
    memcpy(s->submit.conv, in, i * sizeof *in);
    for (; i < n; i++) {
        int rc = pgw__param_convert(&in[i], st->param_oids[i], &s->submit.conv[i]);
        if (rc < 0) {
            char m[128];
            pgw__param_convert_message(m, sizeof m, i, &in[i], st->param_oids[i], rc);
            return refuse(sb, rc, "%s", m);
        }
    }
    *out = s->submit.conv;
    return 0;
}

/* Bind + Execute with the stored description (no Describe): per-column
 * formats from it, unless the request asks its own. The statement is stmt
 * (the request's, or a cached one's); *nformats: the formats sent. */
static int bind_known(submit_t *sb, pgw__req_t *r, const pgw__stmt_t *st, const pgw_request_t *rq,
                      const pgw_param_t *params, const char *stmt, size_t *nformats)
{
    static const uint8_t exp[] = {PGW__EXP_BIND, PGW__EXP_ROWS};
    set_expect(r, exp, sizeof exp);
    formats_t f = {st->formats, st->ncols};
    if (rq->nresult_formats || (rq->flags & PGW_Q_TEXT)) f = policy_formats(rq);
    *nformats = f.n;
    int rc = 0;
    if (!rq->nresult_formats && (r->cached || (r->desc = pgw__desc_ref(st)))) {
        /* The description lives as long as the request's reference (to its
         * cache entry, or to the statement's): the result is made from it
         * when the answer begins (dispatch.c). */
        r->flags |= PGW__RF_DESC_LATER;
    } else {
        /* The result takes its own copy: the statement may be closed
         * before the answer arrives. */
        pgw_result_t *res = pgw__result_new(sb->s->recycler);
        if (!res) return PGW_ENOMEM;
        r->res = res;
        uint16_t nf = f.n > UINT16_MAX ? UINT16_MAX : (uint16_t)f.n;
        rc = pgw__result_set_desc(res, st->fields, st->ncols, f.f, nf);
    }
    if (rc == 0) rc = enc_bind(sb, pgw__portal_name(rq), stmt, params, rq->nparams, f);
    return rc;
}

static int execute_known(submit_t *sb, pgw__req_t *r, const pgw__stmt_t *st,
                         const pgw_request_t *rq, const pgw_param_t *params)
{
    size_t nformats;
    return bind_known(sb, r, st, rq, params, rq->stmt, &nformats);
}

/* Describe statement + Bind + Describe portal + Execute of a statement whose
 * description is not known (pending, or never described here): the
 * policy's formats, as an unnamed query's (binary for every column, bound
 * again with the rule's formats after a 42883). The statement's description
 * gives its parameter types, the portal's the columns: together the
 * table's entry (a prepare queued before in the same batch gets the same
 * answer). */
static int execute_unknown(submit_t *sb, pgw__req_t *r, const pgw_request_t *rq, bool own_sync)
{
    static const uint8_t exp[] = {PGW__EXP_PDESC, PGW__EXP_SDESC, PGW__EXP_BIND, PGW__EXP_RDESC,
                                  PGW__EXP_ROWS};
    set_expect(r, exp, sizeof exp);
    formats_t f = policy_formats(rq);
    const char *portal = pgw__portal_name(rq);
    int rc = pgw_enc_describe(sb->b, 'S', rq->stmt);
    size_t bind_at = sb->b->len;
    if (rc == 0) rc = enc_bind(sb, portal, rq->stmt, rq->params, rq->nparams, f);
    if (rc == 0 && own_sync && f.f == &fmt_binary && !pgw__opens_portal(rq))
        keep_bind_params(sb, r, bind_at, portal, 1);
    if (rc == 0) rc = pgw_enc_describe(sb->b, 'P', portal);
    return rc;
}

/*
 * A QUERY under the statement cache (session.h, "Statement cache"). A hit
 * whose description is known is a Bind by name and an Execute, keeping its
 * parameter section (as keep_bind_params does) so that it can be prepared
 * again and retried if the server refuses the statement. A miss the cache
 * admits is the usual Parse, Bind, Describe, Execute under the entry's
 * name; its description is stored when it completes. Anything else (first
 * use, a prepare in flight) runs unnamed.
 */
static int enc_query_cached(submit_t *sb, pgw__req_t *r, const pgw_request_t *rq, bool own_sync)
{
    pgw_session_t *s = sb->s;
    size_t len = strlen(rq->sql);
    uint64_t key = pgw__cache_key(rq->sql, len, rq->params, rq->nparams);
    pgw__cached_t *ce = pgw__cache_find(s, key, rq->sql, len, rq->params, rq->nparams);
    if (ce && ce->st.known) {
        r->cached = ce;
        ce->refs++;
        r->flags |= PGW__RF_CACHE_HIT;
        s->cache.stats.hits++;
        size_t bind_at = sb->b->len, nformats;
        int rc = bind_known(sb, r, &ce->st, rq, rq->params, ce->name, &nformats);
        if (rc == 0 && own_sync && !rq->nresult_formats && !pgw__opens_portal(rq))
            keep_bind_params(sb, r, bind_at, "", nformats);
        if (rc == 0) rc = pgw_enc_execute(sb->b, pgw__portal_name(rq), pgw__portal_max_rows(rq));
        return rc;
    }
    s->cache.stats.misses++;
    if (!ce && !(sql_words(sb, rq) & (PGW__SQL_REPLACES | PGW__SQL_COPY)))
        ce = pgw__cache_admit(s, key, rq->sql, len, rq->params, rq->nparams,
                              rq->cache == PGW_CACHE_NOW);
    else
        ce = NULL;
    if (!ce) return enc_query(sb, r, rq, own_sync, "");
    r->cached = ce;
    ce->refs++;
    r->flags |= PGW__RF_STORE;
    return enc_query(sb, r, rq, own_sync, ce->name);
}

/* The Closes the cache owes (evicted or dropped statements), queued before
 * the next extended request: in its sync group, so a Close the server
 * skips (an error before it) is owed again when its entry completes. */
static int enc_owed_closes(submit_t *sb)
{
    static const uint8_t exp[] = {PGW__EXP_CLOSE};
    uint64_t id;
    while (pgw__cache_next_close(sb->s, &id)) {
        pgw__req_t *r = add_entry(sb, PGW__REQ_CLOSE, PGW__RF_CACHE_CLOSE);
        if (!r) {
            pgw__cache_close_owed(sb->s, id);
            return PGW_ENOMEM;
        }
        r->stmt_token = id;
        set_expect(r, exp, sizeof exp);
        char name[PGW__CACHE_NAME_MAX];
        pgw__cache_name(sb->s, id, name);
        int rc = pgw_enc_close(sb->b, 'S', name);
        if (rc < 0) return rc;
    }
    return 0;
}

/* What an execution learned from the table when it was encoded. */
typedef struct exec_info {
    bool known;
    uint64_t token;
} exec_info_t;

static int enc_execute(submit_t *sb, pgw__req_t *r, const pgw_request_t *rq, bool own_sync,
                       exec_info_t *xi)
{
    const pgw__stmt_t *st = pgw__stmt_find(sb->s, rq->stmt);
    xi->known = st && st->known;
    xi->token = st ? st->token : 0;
    if (st && st->vouched) r->flags |= PGW__RF_VOUCHED;
    int rc;
    if (xi->known) {
        /* Another count: the caller's to send as is (the server refuses
         * it), else refused here; the statement's types do not apply. */
        bool other_count = rq->nparams != st->nparams;
        if (other_count && !(rq->flags & PGW_Q_ANY_NPARAMS))
            return refuse(sb, PGW_EINVAL, "statement \"%s\" takes %u parameters, %zu given",
                          rq->stmt, (unsigned)st->nparams, rq->nparams);
        const pgw_param_t *params = rq->params;
        rc = other_count ? 0 : convert_params(sb, st, rq, &params);
        if (rc == 0) rc = execute_known(sb, r, st, rq, params);
    } else {
        rc = execute_unknown(sb, r, rq, own_sync);
    }
    if (rc == 0) rc = pgw_enc_execute(sb->b, pgw__portal_name(rq), pgw__portal_max_rows(rq));
    if (rc == 0) rc = hold_if_copy(sb, r, st && st->may_copy);
    return rc;
}

static int enc_describe(submit_t *sb, pgw__req_t *r, const pgw_request_t *rq)
{
    static const uint8_t exp[] = {PGW__EXP_PDESC, PGW__EXP_RDESC};
    set_expect(r, exp, sizeof exp);
    return pgw_enc_describe(sb->b, 'S', rq->stmt);
}

static int enc_close(submit_t *sb, pgw__req_t *r, const pgw_request_t *rq)
{
    static const uint8_t exp[] = {PGW__EXP_CLOSE};
    set_expect(r, exp, sizeof exp);
    return pgw_enc_close(sb->b, 'S', rq->stmt);
}

/* The request's reply describes the statement entry with token (0: none). */
static void expect_reply(pgw__req_t *r, uint64_t token)
{
    r->stmt_token = token;
    if (token) r->flags |= PGW__RF_STORE;
}

/* What a queued request changes in the statement table, applied as soon as
 * it is encoded so that the requests after it (in the same batch too) see
 * the table as it leaves it. */
static void apply_effects(submit_t *sb, pgw__req_t *r, const pgw_request_t *rq,
                          const exec_info_t *xi)
{
    pgw_session_t *s = sb->s;
    switch (rq->kind) {
    case PGW_REQ_SIMPLE:
        forget_if_replacing(sb, rq);
        break;
    case PGW_REQ_QUERY:
    case PGW_REQ_COPY:
        /* A cached statement's SQL was checked when it was admitted, and
         * leaves the unnamed statement alone. */
        if (r->cached) break;
        /* The unnamed statement was replaced. */
        pgw__stmt_forget(s, "");
        forget_if_replacing(sb, rq);
        break;
    case PGW_REQ_PREPARE:
        /* From now on the statement is the new one: executions queued before
         * its description arrives describe it themselves. */
        expect_reply(r, pgw__stmt_replaced(s, rq->stmt, may_copy(sb, rq, true)));
        break;
    case PGW_REQ_EXECUTE:
        if (xi->known)
            r->stmt_token = xi->token; /* for a refusal at Bind only */
        else
            expect_reply(r, xi->token ? xi->token : pgw__stmt_token(s, rq->stmt));
        break;
    case PGW_REQ_DESCRIBE:
        expect_reply(r, pgw__stmt_token(s, rq->stmt));
        break;
    case PGW_REQ_CLOSE:
        pgw__stmt_forget(s, rq->stmt);
        break;
    default:
        break;
    }
}

/*
 * The open group (session.h, "Portals and open groups"): whether rq ends
 * with its own Sync, given own_sync as the submit would have it, and what
 * it changes in the submit's group state. Outside a batch, a request that
 * opens a portal sends no Sync and opens the group; closing the group's
 * last portal ends it with a Sync; a FLUSH never has a Sync. In a batch the
 * batch's own Sync rules stand and the state only counts portals.
 */
static bool group_rules(submit_t *sb, const pgw_request_t *rq, bool own_sync)
{
    if (rq->kind == PGW_REQ_FLUSH) return false;
    if (pgw__opens_portal(rq)) {
        sb->open = true;
        sb->nportals++;
        return sb->batch ? own_sync : false;
    }
    if (rq->kind == PGW_REQ_CLOSE_PORTAL && sb->open && !sb->batch) {
        if (sb->nportals) sb->nportals--;
        return sb->nportals == 0;
    }
    if (rq->kind == PGW_REQ_CLOSE_PORTAL && sb->nportals) sb->nportals--;
    return own_sync;
}

/* Encode one request (and its own Sync when own_sync) into the submit. */
static int queue_request(submit_t *sb, const pgw_request_t *rq, bool own_sync)
{
    int rc = validate(sb, rq);
    if (rc < 0) return rc;
    sb->words_known = false;
    sb->ticket = ++sb->s->fifo.ticket_seq;
    uint32_t timeout = (uint32_t)pgw__dl_effective(sb->s, rq);
    if (timeout) sb->timed = true;
    uint8_t batch_flag = sb->batch ? PGW__RF_IN_BATCH : 0;
    if (rq->kind == PGW_REQ_SYNC) {
        unsigned no_result = (rq->flags & PGW_Q_NO_RESULT) ? PGW__RF_NO_RESULT : 0;
        rc = add_sync(sb, (uint16_t)(PGW__RF_USER | batch_flag | no_result), rq->on_result, rq->ud);
        if (sb->last) sb->last->timeout_ms = timeout;
        return rc;
    }
    /* A Query (or FunctionCall) after extended messages with no Sync would
     * commit their transaction, or be skipped after their error: the group
     * ends first. */
    if (sync_point(rq) && sb->open) {
        rc = add_sync(sb, 0, NULL, NULL);
        if (rc < 0) return rc;
    }
    if (sb->s->cache.ncloses && !sync_point(rq) && rq->kind != PGW_REQ_FLUSH) {
        rc = enc_owed_closes(sb);
        if (rc < 0) return rc;
    }
    own_sync = group_rules(sb, rq, own_sync);
    pgw__req_t *r = add_entry(sb, entry_kinds[rq->kind], PGW__RF_USER | batch_flag);
    if (!r) return PGW_ENOMEM;
    listen_to(sb, r, rq->on_result, rq->ud, sb->index);
    r->timeout_ms = timeout;
    if (rq->on_row) {
        pgw__req_aux_t *x = pgw__req_aux(sb->s, r);
        if (!x) return PGW_ENOMEM;
        x->row_cb = rq->on_row;
        r->flags |= PGW__RF_STREAM;
    }
    if (rq->flags & PGW_Q_NO_RESULT) r->flags |= PGW__RF_NO_RESULT;
    if (rq->flags & PGW_Q_TEXT) r->flags |= PGW__RF_TEXT;
    exec_info_t xi = {false, 0};
    if (sync_point(rq)) own_sync = false; /* 'Q' and 'F' are their own sync point */
    switch (rq->kind) {
    case PGW_REQ_SIMPLE:
        rc = pgw__enc_query_cstr(sb->b, rq->sql, strlen(rq->sql), sb->s->max_message);
        if (rc == 0) rc = hold_if_copy(sb, r, may_copy(sb, rq, false));
        if (rc == 0) rc = pgw__copy_carry(sb->s, r, rq);
        break;
    case PGW_REQ_QUERY:
        rc = pgw__cache_applies(sb->s, rq) ? enc_query_cached(sb, r, rq, own_sync)
                                           : enc_query(sb, r, rq, own_sync, "");
        break;
    case PGW_REQ_PREPARE:
        rc = enc_prepare(sb, r, rq);
        break;
    case PGW_REQ_EXECUTE:
        rc = enc_execute(sb, r, rq, own_sync, &xi);
        break;
    case PGW_REQ_DESCRIBE:
        rc = enc_describe(sb, r, rq);
        break;
    case PGW_REQ_COPY:
        rc = pgw__enc_copy(sb->s, sb->b, r, rq);
        break;
    case PGW_REQ_FLUSH:
        if (!(rq->flags & PGW_Q_NO_MESSAGE)) rc = pgw_enc_flush(sb->b);
        break;
    case PGW_REQ_FETCH:
        rc = pgw__enc_fetch(sb->s, sb->b, r, rq);
        break;
    case PGW_REQ_CLOSE_PORTAL:
        rc = pgw__enc_close_portal(sb->s, sb->b, r, rq);
        break;
    case PGW_REQ_DESCRIBE_PORTAL:
        rc = pgw__enc_describe_portal(sb->b, r, rq);
        break;
    case PGW_REQ_FUNCTION_CALL:
        r->is_call = true;
        r->fn_format = policy_formats(rq).f[0];
        rc = enc_function_call(sb, rq);
        break;
    default:
        rc = enc_close(sb, r, rq);
        break;
    }
    sb->flushed = rq->kind == PGW_REQ_FLUSH;
    if (rc == 0 && sync_point(rq)) sb->group = pgw__group_next(sb->group);
    if (rc == 0 && own_sync) rc = add_own_sync(sb, r, batch_flag, timeout);
    if (rc == 0) apply_effects(sb, r, rq, &xi);
    return rc;
}

PGW_EXTERN int pgw_request_copy(pgw_request_t *out, const pgw_request_t *in)
{
    if (!out) return PGW_EINVAL;
    if (!in || in->size < offsetof(pgw_request_t, kind) + sizeof in->kind) {
        memset(out, 0, sizeof *out);
        return PGW_EINVAL;
    }
    /* An older caller's shorter request: the fields it does not know are
     * zero. */
    size_t n = in->size < sizeof *out ? in->size : sizeof *out;
    if (n < sizeof *out) memset((char *)out + n, 0, sizeof *out - n);
    memcpy(out, in, n);
    out->size = sizeof *out;
    return 0;
}

PGW_EXTERN const pgw_request_t *pgw_request_nth(const pgw_request_t *reqs, size_t i)
{
    if (!reqs) return NULL;
    return (const pgw_request_t *)(const void *)((const unsigned char *)reqs + i * reqs[0].size);
}

/* in as this library's request: in itself when it has every field, else
 * its copy in *tmp (pgw_request_copy). NULL for an invalid one (*rc). */
static const pgw_request_t *request_view(const pgw_request_t *in, pgw_request_t *tmp, int *rc)
{
    if (in && in->size >= sizeof *tmp) return in;
    *rc = pgw_request_copy(tmp, in);
    return *rc < 0 ? NULL : tmp;
}

static int submit_begin(pgw_session_t *s, submit_t *sb, bool batch, pgw_driver_hook hook, void *ctx)
{
    if (!s) return PGW_EINVAL;
    s->submit.refusal[0] = '\0';
    memset(sb, 0, sizeof *sb);
    sb->s = s;
    sb->hook = hook;
    sb->hook_ctx = ctx;
    sb->batch = batch;
    sb->open = s->group.open;
    sb->nportals = s->group.nportals;
    int rc = accepting(s);
    if (rc < 0) return refuse(sb, rc, "the session is closed");
    if (pgw_session_congested(s)) {
        s->output.congested = true; /* on_drain is owed */
        if (s->fifo.npending >= s->fifo.max_pending)
            return refuse(sb, PGW_ECONGESTED, "%zu requests are pending (max_pending)",
                          s->fifo.npending);
        return refuse(sb, PGW_ECONGESTED, "the output is over its high-water mark (%zu bytes)",
                      s->output.high_water);
    }
    sb->b = pgw__req_buf(s);
    sb->from = sb->b->len;
    sb->retry_from = s->fifo.retry.len;
    sb->group = s->fifo.tx_group;
    sb->ticket_from = s->fifo.ticket_seq;
    return 0;
}

/* What follows the submit waits until its last entry has left the FIFO:
 * it has a deadline (deadline.c), or the session does not pipeline. */
static bool holds_what_follows(const submit_t *sb)
{
    return sb->timed || sb->s->fifo.no_pipelining;
}

static int submit_end(submit_t *sb, int rc)
{
    if (rc == 0 && holds_what_follows(sb)) rc = pgw__dl_hold(sb->s, sb->last, sb->b);
    if (rc == 0) rc = pgw__copy_split(sb->s, sb->b, sb->first);
    if (rc < 0) {
        if (!sb->s->submit.refusal[0]) refuse(sb, rc, "%s", pgw_strerror(rc));
        rollback(sb);
        return rc;
    }
    commit(sb);
    return 0;
}

PGW_EXTERN int pgw_session_submit(pgw_session_t *s, const pgw_request_t *req)
{
    return pgw_session_submit_driven(s, req, NULL, NULL);
}

PGW_EXTERN int pgw_session_submit_driven(pgw_session_t *s, const pgw_request_t *req,
                                         pgw_driver_hook hook, void *ctx)
{
    submit_t sb;
    int rc = submit_begin(s, &sb, false, hook, ctx);
    if (rc < 0) return rc;
    pgw_request_t tmp;
    const pgw_request_t *rq = request_view(req, &tmp, &rc);
    if (!rq) return submit_end(&sb, refuse(&sb, rc, "NULL request or size not set"));
    /* Inside an open group a request joins it: no Sync of its own, and a
     * Flush so that its answer comes at once. */
    rc = queue_request(&sb, rq, rq->kind != PGW_REQ_SYNC && !sb.open);
    if (rc == 0 && sb.open && !sb.flushed) rc = pgw_enc_flush(sb.b);
    return submit_end(&sb, rc);
}

/* The pending request at index of the submit driven with ctx (0: the one
 * submitted alone with pgw_session_submit_driven), or NULL. */
static pgw__req_t *find_driven(pgw_session_t *s, void *ctx, size_t index)
{
    for (pgw__req_t *r = s->fifo.head; r; r = r->next)
        if ((r->flags & PGW__RF_USER) && r->driver_fn && r->driver_ctx == ctx &&
            r->driver_index == index)
            return r;
    return NULL;
}

PGW_EXTERN int pgw_session_stream_driven(pgw_session_t *s, void *ctx, size_t index,
                                         pgw_row_cb on_row)
{
    if (!s || !on_row || index >= PGW__DRIVER_INDEX_BATCH) return PGW_EINVAL;
    pgw__req_t *r = find_driven(s, ctx, index);
    if (!r) return PGW_ENOTFOUND;
    if ((r->kind != PGW__REQ_EXTENDED && (r->kind != PGW__REQ_SIMPLE || r->is_call)) ||
        (r->flags & (PGW__RF_STREAM | PGW__RF_NO_RESULT)))
        return PGW_ENOTSUP;
    /* A query's or execute's rows kept so far stay in its result; a simple
     * query's statements are switched before their rows only. */
    for (const pgw_result_t *p = r->res; p; p = p->next)
        if (r->kind == PGW__REQ_EXTENDED ? p->complete : p->nrows > 0) return PGW_EBUSY;
    pgw__req_aux_t *x = pgw__req_aux(s, r);
    if (!x) return PGW_ENOMEM;
    x->row_cb = on_row;
    r->flags |= PGW__RF_STREAM;
    return 0;
}

PGW_EXTERN const pgw_result_t *pgw_session_driven_results(pgw_session_t *s, void *ctx, size_t index)
{
    pgw__req_t *r = s ? find_driven(s, ctx, index) : NULL;
    return r ? r->res : NULL;
}

/* A batch that failed part way: the prepares already applied to the table
 * never reach the server, so their entries must not vouch for them. */
static void forget_prepares(pgw_session_t *s, const pgw_request_t *reqs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        pgw_request_t rq;
        if (pgw_request_copy(&rq, pgw_request_nth(reqs, i)) == 0 && rq.kind == PGW_REQ_PREPARE &&
            rq.stmt)
            pgw__stmt_forget(s, rq.stmt);
    }
}

PGW_EXTERN int pgw_session_submit_batch(pgw_session_t *s, const pgw_request_t *reqs, size_t n,
                                        unsigned flags, pgw_result_cb done, void *ud)
{
    return pgw_session_submit_batch_driven(s, reqs, n, flags, done, ud, NULL, NULL);
}

/* A streamed batch (PGW_BATCH_STREAM) writes a part once its output
 * passes part_bytes, as long as nothing of it holds output back. */
static bool part_due(const submit_t *sb, bool stream)
{
    const pgw_session_t *s = sb->s;
    return stream && !sb->timed && sb->b == &s->output.buf && sb->last &&
           sb->b->len - sb->from >= s->submit.part_bytes;
}

static bool part_holds(const submit_t *sb)
{
    for (const pgw__req_t *r = sb->first; r; r = r->next)
        if (r->copy_state) return true;
    return false;
}

/* Accept the requests encoded so far and hand their output to the driver;
 * the submit goes on from an empty part. */
static void part_write(submit_t *sb)
{
    pgw_session_t *s = sb->s;
    commit(sb);
    sb->first = sb->last = NULL;
    s->submit.ready(s, s->submit.ready_ctx);
    sb->from = sb->b->len;
    sb->retry_from = s->fifo.retry.len;
    sb->ticket_from = s->fifo.ticket_seq;
}

/* A streamed batch refused after parts of it were written: drop the
 * refused part, close the group with the batch's Sync. Returns rc. */
static int part_refused(submit_t *sb, int rc, pgw_result_cb done, void *ud)
{
    pgw_session_t *s = sb->s;
    rollback(sb);
    sb->first = sb->last = NULL;
    sb->from = sb->b->len;
    /* The group as the last part left it. */
    sb->group = s->fifo.tx_group;
    sb->open = s->group.open;
    sb->nportals = s->group.nportals;
    sb->flushed = false;
    int err = add_sync(sb, PGW__RF_USER | PGW__RF_BATCH_END, done, ud);
    if (err == 0 && holds_what_follows(sb)) {
        err = pgw__dl_hold(s, sb->last, sb->b);
        if (err == 0) err = pgw__copy_split(s, sb->b, sb->first);
    }
    if (err < 0) {
        rollback(sb);
        pgw__session_break(s, PGW_ENOMEM); /* the server's group would stay open */
    } else {
        commit(sb);
    }
    return rc;
}

PGW_EXTERN int pgw_session_submit_batch_driven(pgw_session_t *s, const pgw_request_t *reqs,
                                               size_t n, unsigned flags, pgw_result_cb done,
                                               void *ud, pgw_driver_hook hook, void *ctx)
{
    submit_t sb;
    int rc = submit_begin(s, &sb, true, hook, ctx);
    if (s) s->submit.accepted = 0;
    if (rc < 0) return rc;
    if (!reqs || n == 0) return submit_end(&sb, refuse(&sb, PGW_EINVAL, "empty batch"));
    if (n >= PGW__DRIVER_INDEX_BATCH)
        return submit_end(&sb, refuse(&sb, PGW_EINVAL, "%zu requests in one batch", n));
    bool stream = (flags & PGW_BATCH_STREAM) && s->submit.ready;
    size_t part = 0;           /* requests before this index are accepted */
    uint32_t group = sb.group; /* without pipelining, the batch's one sync group */
    sb.naming = true;
    for (sb.index = 0; sb.index < n && rc == 0; sb.index++) {
        pgw_request_t tmp;
        const pgw_request_t *rq = request_view(pgw_request_nth(reqs, sb.index), &tmp, &rc);
        if (!rq) {
            refuse(&sb, rc, "size not set");
            break;
        }
        if (sb.index && pgw_request_nth(reqs, sb.index)->size != reqs[0].size) {
            rc = refuse(&sb, PGW_EINVAL, "size differs from the first request's");
            break;
        }
        bool own_sync = (flags & PGW_BATCH_SYNC_EACH) || (rq->flags & PGW_Q_SYNC);
        rc = queue_request(&sb, rq, own_sync);
        if (rc < 0) {
            if (!s->submit.refusal[0]) refuse(&sb, rc, "%s", pgw_strerror(rc));
            break;
        }
        /* A sync group ended inside the batch: the batch's own Sync (or
         * the next request) would begin another one. */
        if (s->fifo.no_pipelining && sb.group != group) {
            rc = refuse(&sb, PGW_ENOTSUP,
                        "it ends a sync group inside the batch, and the session does not "
                        "pipeline (no_pipelining)");
            break;
        }
        if (part_due(&sb, stream) && sb.index + 1 < n) {
            stream = !part_holds(&sb);
            if (stream) {
                part_write(&sb);
                part = sb.index + 1;
                s->submit.accepted = part;
            }
        }
    }
    sb.naming = false;
    sb.ticket = 0; /* the closing Sync completes with its group, on no deadline of its own */
    /* A batch ending with FLUSH leaves its group open: done fires once the
     * batch's requests have completed, not at a Sync. */
    bool ends_open = rc == 0 && pgw_request_nth(reqs, n - 1)->kind == PGW_REQ_FLUSH;
    if (ends_open) {
        pgw__req_t *end = add_entry(&sb, PGW__REQ_FLUSH, PGW__RF_USER | PGW__RF_BATCH_END);
        if (end) {
            listen_to(&sb, end, done, ud, PGW_DRIVER_BATCH);
            sb.open = true;
        } else {
            rc = PGW_ENOMEM;
        }
    } else if (rc == 0) {
        rc = add_sync(&sb, PGW__RF_USER | PGW__RF_BATCH_END, done, ud);
    }
    if (rc < 0) forget_prepares(s, pgw_request_nth(reqs, part), sb.index - part);
    if (rc < 0 && part > 0) return part_refused(&sb, rc, done, ud);
    rc = submit_end(&sb, rc);
    if (rc == 0) s->submit.accepted = n;
    return rc;
}

PGW_EXTERN void pgw_session_set_stream(pgw_session_t *s, size_t part_bytes,
                                       pgw_stream_ready_fn ready, void *ctx)
{
    if (!s) return;
    s->submit.part_bytes = part_bytes;
    s->submit.ready = ready;
    s->submit.ready_ctx = ctx;
}

PGW_EXTERN size_t pgw_session_batch_accepted(const pgw_session_t *s)
{
    return s ? s->submit.accepted : 0;
}

PGW_EXTERN const char *pgw_session_refusal(const pgw_session_t *s)
{
    return s ? s->submit.refusal : "";
}

int pgw__req_simple_first(pgw_session_t *s, pgw_buf_t *out, const char *sql, pgw_result_cb cb,
                          void *ud)
{
    pgw__req_t *r = req_alloc(s);
    if (!r) return PGW_ENOMEM;
    size_t from = out->len;
    int rc = pgw__enc_query_cstr(out, sql, strlen(sql), s->max_message);
    if (rc < 0) {
        pgw__req_release(s, r);
        return rc;
    }
    r->kind = PGW__REQ_SIMPLE;
    r->cb = cb;
    r->ud = ud;
    r->group = PGW__GROUP_INTERNAL;
    r->t_queued = pgw__stamp(s);
    r->next = s->fifo.head;
    s->fifo.head = r;
    if (!s->fifo.tail) s->fifo.tail = r;
    pgw__trace_out(s, out, from, true);
    return 0;
}

int pgw__group_end_now(pgw_session_t *s)
{
    pgw__req_t *r = req_alloc(s);
    if (!r) return PGW_ENOMEM;
    pgw_buf_t *b = pgw__req_buf(s);
    size_t from = b->len;
    int rc = pgw_enc_sync(b);
    if (rc < 0) {
        pgw__req_release(s, r);
        return rc;
    }
    r->kind = PGW__REQ_SYNC;
    r->group = s->fifo.tx_group;
    s->fifo.tx_group = pgw__group_next(s->fifo.tx_group);
    r->t_queued = pgw__stamp(s);
    if (s->fifo.tail)
        s->fifo.tail->next = r;
    else
        s->fifo.head = r;
    s->fifo.tail = r;
    s->group.open = false;
    s->group.nportals = 0;
    pgw__trace_out(s, b, from, true);
    pgw__out_appended(s, b, from);
    return 0;
}

PGW_EXTERN int pgw_session_terminate(pgw_session_t *s)
{
    if (!s) return PGW_EINVAL;
    if (s->state == PGW_SESSION_NEW) return PGW_EBUSY;
    int rc = accepting(s);
    if (rc < 0) return rc;
    pgw__enter(s);
    pgw__copy_terminating(s);
    pgw__leave(s);
    size_t from = s->output.buf.len;
    rc = pgw_enc_terminate(&s->output.buf);
    if (rc < 0) return rc;
    s->state = PGW_SESSION_TERMINATED;
    pgw__enter(s);
    pgw__trace_out(s, &s->output.buf, from, true);
    pgw__out_appended(s, &s->output.buf, from);
    pgw__leave(s);
    return 0;
}
