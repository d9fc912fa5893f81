/*
 * Queries: the PQsend* family submits requests to the session, each with a
 * command of the connection's queue that collects its results (the driver
 * hook); PQgetResult hands them out in libpq's order, and the blocking
 * calls (PQexec ...) are PQsend* then PQgetResult until NULL.
 */
#define _GNU_SOURCE
#include "pq/conn_internal.h"
#include "pq/result_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libpq's words when the connection broke under a command. */
static const char lost_text[] = "server closed the connection unexpectedly\n"
                                "\tThis probably means the server terminated abnormally\n"
                                "\tbefore or while processing the request.\n";

const char *pq__failure_text(int status)
{
    (void)status;
    return lost_text;
}

/* libpq's words for a connection that broke under a command: those the
 * connection keeps once connected when it has some (over TLS the TLS
 * layer's, "SSL connection has been closed unexpectedly": the server's
 * close_notify, as a terminated backend sends; a plaintext read's errno,
 * "could not receive data from server: Connection timed out"), else
 * those of a reset or EOF. Into buf when they are the connection's. */
static const char *lost_words(const PGconn *conn, char *buf, size_t n)
{
    /* "" after a connect; a TLS failure that broke the connection then */
    const char *tls = conn->conn ? pgw_conn_error_message(conn->conn) : NULL;
    if (!tls || !*tls || !strncmp(tls, "server closed the connection", 28)) return lost_text;
    snprintf(buf, n, "%s\n", tls);
    return buf;
}

/* -------------------------------------------------------------- commands */

pq_cmd_t *pq__cmd_new(PGconn *conn, pq_cmd_kind_t kind)
{
    pq_cmd_t *cmd = conn->spare_cmds;
    if (cmd) {
        conn->spare_cmds = cmd->next;
        conn->nspare_cmds--;
        memset(cmd, 0, offsetof(pq_cmd_t, query_inline));
    } else {
        cmd = calloc(1, sizeof *cmd);
    }
    if (!cmd) {
        pq__conn_set_error(conn, "out of memory\n");
        return NULL;
    }
    cmd->conn = conn;
    cmd->kind = kind;
    cmd->seg = conn->pipeline != PQ_PIPELINE_OFF ? conn->seg : 0;
    return cmd;
}

/* Room for want results in cmd->res (inline while they fit). 0, or -1
 * when out of memory (nothing changed). */
static int cmd_reserve(pq_cmd_t *cmd, size_t want)
{
    size_t ninline = sizeof cmd->res_inline / sizeof cmd->res_inline[0];
    if (!cmd->res) {
        cmd->res = cmd->res_inline;
        cmd->cap = ninline;
    }
    if (want <= cmd->cap) return 0;
    size_t cap = cmd->cap * 2 > want ? cmd->cap * 2 : want;
    PGresult **r;
    if (cmd->res == cmd->res_inline) {
        r = malloc(cap * sizeof *r);
        if (r) memcpy(r, cmd->res_inline, cmd->nres * sizeof *r);
    } else {
        r = realloc(cmd->res, cap * sizeof *r);
    }
    if (!r) return -1;
    cmd->res = r;
    cmd->cap = cap;
    return 0;
}

void pq__cmd_push(pq_cmd_t *cmd, PGresult *res)
{
    if (!res) return;
    if (cmd_reserve(cmd, cmd->nres + 1) < 0) {
        PQclear(res);
        return;
    }
    cmd->res[cmd->nres++] = res;
}

int pq__cmd_hold_notice(pq_cmd_t *cmd, PGresult *notice, unsigned after, int at_end, unsigned rows)
{
    if (cmd->nnotices == cmd->notices_cap) {
        size_t cap = cmd->notices_cap ? cmd->notices_cap * 2 : 4;
        pq_held_notice_t *n = realloc(cmd->notices, cap * sizeof *n);
        if (!n) return 0;
        cmd->notices = n;
        cmd->notices_cap = cap;
    }
    cmd->notices[cmd->nnotices].res = notice;
    cmd->notices[cmd->nnotices].at_end = at_end;
    cmd->notices[cmd->nnotices].rows = rows;
    cmd->notices[cmd->nnotices++].after = after;
    return 1;
}

/* Queue the held notices that came after `done` statements completed. */
static void release_notices(pq_cmd_t *cmd, unsigned done, int all)
{
    while (cmd->notices_out < cmd->nnotices &&
           (all || cmd->notices[cmd->notices_out].after <= done)) {
        PGresult *n = cmd->notices[cmd->notices_out].res;
        const pq_held_notice_t *h = &cmd->notices[cmd->notices_out];
        n->notice_rows = h->at_end ? -1 : (long)h->rows;
        pq__cmd_push(cmd, n);
        cmd->notices[cmd->notices_out++].res = NULL;
    }
}

void pq__cmd_free(pq_cmd_t *cmd)
{
    if (!cmd) return;
    for (size_t i = 0; i < cmd->nnotices; i++)
        PQclear(cmd->notices[i].res);
    free(cmd->notices);
    if (cmd->split_end) PQclear(cmd->split_end);
    if (cmd->streaming) {
        PQclear(cmd->chunk);
        for (size_t i = 0; i < cmd->nchunk_notices; i++)
            PQclear(cmd->chunk_notices[i]);
        free(cmd->chunk_notices);
    }
    for (size_t i = cmd->pos; i < cmd->nres; i++)
        PQclear(cmd->res[i]);
    if (cmd->res != cmd->res_inline) free(cmd->res);
    if (cmd->query != cmd->query_inline) free(cmd->query);
    PGconn *conn = cmd->conn;
    if (conn->nspare_cmds < PQ_SPARE_CMDS) {
        cmd->next = conn->spare_cmds;
        conn->spare_cmds = cmd;
        conn->nspare_cmds++;
    } else {
        free(cmd);
    }
}

void pq__cmd_enqueue(PGconn *conn, pq_cmd_t *cmd)
{
    if (conn->tail)
        conn->tail->next = cmd;
    else
        conn->head = cmd;
    conn->tail = cmd;
}

static void cmd_dequeue(PGconn *conn)
{
    pq_cmd_t *cmd = conn->head;
    if (!cmd) return;
    conn->head = cmd->next;
    if (!conn->head) conn->tail = NULL;
    if (cmd->lost_at) conn->status = CONNECTION_BAD;
    if (conn->copy_cmd == cmd) {
        conn->copy_cmd = NULL;
        conn->copy = PQ_COPY_NONE;
    }
    pq__cmd_free(cmd);
}

void pq__cmds_free_all(PGconn *conn)
{
    while (conn->head)
        cmd_dequeue(conn);
}

/* The results of cmd that PQgetResult may hand out now: during its COPY
 * only those up to the COPY's own. */
static size_t cmd_visible(const PGconn *conn, const pq_cmd_t *cmd)
{
    if (conn->copy != PQ_COPY_NONE && conn->copy_cmd == cmd && cmd->copy_began)
        return cmd->copy_idx + 1 < cmd->nres ? cmd->copy_idx + 1 : cmd->nres;
    return cmd->nres;
}

/* ---------------------------------------------------------- completions */

/* A client-side failure as libpq reports it: appended to the connection's
 * message, and a result carrying what was appended (libpq's errorReported:
 * a server error handed out before is not repeated). */
static PGresult *failure_result(PGconn *conn, const char *text)
{
    pq__conn_append_error(conn, "%s", text);
    return pq__result_error(conn, PGRES_FATAL_ERROR, text);
}

/* The connection broke under cmd: libpq's "server closed the connection"
 * result ends its results, and the connection reads as bad once that
 * result is handed out (a server's FATAL error before it still reads as
 * a result of a good connection, as libpq has not seen the end yet). */
static void cmd_lost(pq_cmd_t *cmd)
{
    cmd->conn->broken = 1;
    char words[256];
    pq__cmd_push(cmd, failure_result(cmd->conn, lost_words(cmd->conn, words, sizeof words)));
    cmd->lost_at = cmd->nres;
}

static int is_connection_failure(int status)
{
    return status == PGW_ECONNLOST || status == PGW_EPROTO || status == PGW_ETOOBIG ||
           status == PGW_ECLOSED || status == PGW_ECANCELED || status == PGW_ENOMEM;
}

/* A result without a message: libpq makes the pipeline's SYNC and ABORTED
 * results once it moved on to their command, its message cleared. */
PGresult *pq__empty_result(PGconn *conn, ExecStatusType status)
{
    pq_str_t saved = conn->errmsg;
    memset(&conn->errmsg, 0, sizeof conn->errmsg);
    PGresult *r = PQmakeEmptyPGresult(conn, status);
    conn->errmsg = saved;
    return r;
}

/* The rows a statement returned before its error, as a result (libpq
 * hands them out in single-row mode only). */
static PGresult *rows_before_error(PGconn *conn, const pgw_result_t *p)
{
    size_t nf = pgw_result_ncols(p), nr = pgw_result_nrows(p);
    PGresult *res = PQmakeEmptyPGresult(conn, PGRES_TUPLES_OK);
    PGresAttDesc *d = calloc(nf ? nf : 1, sizeof *d);
    char **names = calloc(nf ? nf : 1, sizeof *names);
    int ok = res && d && names;
    for (size_t i = 0; ok && i < nf; i++) {
        const pgw_field_desc_t *f = pgw_result_field(p, i);
        names[i] = f ? strndup(f->name.p, f->name.len) : strdup("");
        ok = names[i] != NULL;
        if (!ok || !f) continue;
        d[i] = (PGresAttDesc){names[i],    f->table_oid, f->attnum, f->format,
                              f->type_oid, f->typlen,    f->typmod};
    }
    if (ok && nf) ok = PQsetResultAttrs(res, (int)nf, d);
    for (size_t row = 0; ok && row < nr; row++)
        for (size_t col = 0; ok && col < nf; col++) {
            pgw_value_t v;
            ok = pgw_result_value(p, row, col, &v) == 0 &&
                 PQsetvalue(res, (int)row, (int)col, v.len < 0 ? NULL : (char *)v.p, v.len);
        }
    for (size_t i = 0; names && i < nf; i++)
        free(names[i]);
    free(names);
    free(d);
    if (!ok) {
        PQclear(res);
        return NULL;
    }
    return res;
}

/* ------------------------------------------------------ streamed rows */

static int is_chunk(const PGresult *r)
{
    return r->status == PGRES_SINGLE_TUPLE || r->status == PGRES_TUPLES_CHUNK;
}

/* The chunk being filled goes out: after the notices that came among its
 * rows. */
static void stream_push(pq_cmd_t *cmd)
{
    /* Every result before went out: their slots are reused, so that a long
     * stream taken as it comes holds no more than it has queued. */
    if (cmd->pos == cmd->nres && !cmd->lost_at && !cmd->partial_at && !cmd->copy_began &&
        !cmd->splitting)
        cmd->pos = cmd->nres = 0;
    for (size_t i = 0; i < cmd->nchunk_notices; i++)
        pq__cmd_push(cmd, cmd->chunk_notices[i]);
    cmd->nchunk_notices = 0;
    if (!cmd->chunk) return;
    cmd->chunk->rows_through = cmd->stream_rows;
    pq__cmd_push(cmd, cmd->chunk);
    cmd->chunk = NULL;
}

/* The statement whose rows streamed ended (failed: with an error, or the
 * connection lost): its last chunk goes out, however short, and the counts
 * start again for the next one. A failed statement's chunk not yet full is
 * dropped, as libpq 17 drops it (only rows already handed out stay).
 * Returns 1 when rows were dropped for want of memory. */
static int stream_end(pq_cmd_t *cmd, int failed)
{
    int dropped = cmd->stream_failed;
    if (failed && cmd->chunk) {
        PQclear(cmd->chunk);
        cmd->chunk = NULL;
    }
    stream_push(cmd);
    cmd->stream_rows = 0;
    cmd->stream_failed = 0;
    return dropped;
}

/* A row of a streamed statement (pgw_session_stream_driven's callback). */
static int stream_row(const pgw_row_t *row, void *ud)
{
    pq_cmd_t *cmd = ud;
    PGconn *conn = cmd->conn;
    pq__cmd_stream_catch_up(cmd, pq__statements_ended(conn));
    if (cmd->stream_failed) return 0;
    int per = cmd->chunk_rows;
    if (!cmd->chunk) {
        ExecStatusType st = per == 1 ? PGRES_SINGLE_TUPLE : PGRES_TUPLES_CHUNK;
        cmd->chunk = pq__result_for_rows(conn, st, row, per < 256 ? per : 256);
    }
    if (!cmd->chunk || !pq__result_add_row(cmd->chunk, row->values)) {
        /* the rows of the chunk and those after it are dropped: the
         * statement's result says why */
        PQclear(cmd->chunk);
        cmd->chunk = NULL;
        cmd->stream_failed = 1;
        return 0;
    }
    cmd->stream_rows++;
    if (PQntuples(cmd->chunk) >= per) {
        stream_push(cmd);
        pq__conn_wake(conn);
    }
    return 0;
}

int pq__cmd_stream_notice(pq_cmd_t *cmd, PGresult *notice, long rows)
{
    /* back over the chunks of the statement (and the notices among them) */
    size_t i = cmd->nres;
    while (i > cmd->pos) {
        const PGresult *r = cmd->res[i - 1];
        if (is_chunk(r) ? r->rows_through < rows : r->status != PGRES_NONFATAL_ERROR) break;
        i--;
    }
    while (i < cmd->nres && !is_chunk(cmd->res[i]))
        i++;
    notice->notice_rows = 0; /* handed out in its place */
    if (rows > 0 && i < cmd->nres) {
        /* before the queued chunk that holds the row it came after */
        if (cmd_reserve(cmd, cmd->nres + 1) < 0) return 0;
        memmove(cmd->res + i + 1, cmd->res + i, (cmd->nres - i) * sizeof *cmd->res);
        cmd->res[i] = notice;
        cmd->nres++;
        return 1;
    }
    /* that row went out (or none came yet): before the chunk being filled */
    if (cmd->nchunk_notices == cmd->chunk_notices_cap) {
        size_t cap = cmd->chunk_notices_cap ? cmd->chunk_notices_cap * 2 : 4;
        PGresult **n = realloc(cmd->chunk_notices, cap * sizeof *n);
        if (!n) return 0;
        cmd->chunk_notices = n;
        cmd->chunk_notices_cap = cap;
    }
    cmd->chunk_notices[cmd->nchunk_notices++] = notice;
    return 1;
}

static int collect_chain(pq_cmd_t *cmd, const pgw_result_t *r, const pgw_result_t *upto,
                         int *fatal);

void pq__cmd_stream_catch_up(pq_cmd_t *cmd, unsigned stmt)
{
    /* (a pipeline holds extended queries only: one statement each) */
    if (cmd->taken >= stmt || cmd->conn->pipeline != PQ_PIPELINE_OFF) return;
    const pgw_result_t *chain = pgw_session_driven_results(pgw_conn_session(cmd->conn->conn),
                                                           cmd->driven_ctx, cmd->driven_index),
                       *upto = chain;
    for (unsigned i = 0; upto && i < stmt; i++)
        upto = pgw_result_next(upto);
    int fatal = 0; /* (the completion reports the end of the connection) */
    collect_chain(cmd, chain, upto, &fatal);
}

/* The done-th result p of the session's chain into cmd's results (with the
 * notices held before it). Returns 1 when p is an error; sets *fatal for
 * one that ends the connection. (Inline: every command's result takes this
 * path.) */
static inline int collect_one(pq_cmd_t *cmd, const pgw_result_t *p, unsigned done, int *fatal)
{
    PGconn *conn = cmd->conn;
    const pgw_error_t *e = pgw_result_error(p);
    int is_err = e != NULL;
    int stream_failed = cmd->streaming && stream_end(cmd, is_err);
    release_notices(cmd, done, 0);
    /* the server ends the connection after these */
    const char *sev = e ? (e->severity_nonlocal ? e->severity_nonlocal : e->severity) : NULL;
    if (sev && (!strcmp(sev, "FATAL") || !strcmp(sev, "PANIC"))) *fatal = 1;
    PGresult *pr =
        !is_err && cmd->describe == PQ_DESCRIBE_NONE
            ? PQmakeEmptyPGresult(conn, PGRES_COMMAND_OK)
            : pq__result_from_pgw_ex(conn, p, cmd->query, cmd->describe == PQ_DESCRIBE_COLUMNS);
    if (stream_failed && !is_err) {
        PQclear(pr);
        pr = pq__result_error(conn, PGRES_FATAL_ERROR, "out of memory for query result\n");
    }
    /* the rows kept before the stream began went out in its chunks */
    if (cmd->kept_rows && pr) pr->ntups = 0;
    if (is_err && cmd->describe == PQ_DESCRIBE_ROWS && !cmd->kept_rows && pgw_result_nrows(p) > 0) {
        PGresult *rows = rows_before_error(conn, p);
        if (rows) {
            pq__cmd_push(cmd, rows);
            cmd->partial_at = cmd->nres;
        }
    }
    /* In a pipeline, and after a COPY began (libpq reads the error only in
     * PQgetResult, PQgetCopyData stops at it), the message is the
     * command's once it is handed out. */
    if ((is_err || stream_failed) && pr && !cmd->seg && !cmd->copy_began)
        pq__conn_append_error(conn, "%s", PQresultErrorMessage(pr));
    pq__cmd_push(cmd, pr);
    return is_err;
}

/* The results of chain r not yet taken (a simple query's before a COPY
 * were taken when it began), up to upto (excluded; NULL: all), until the
 * first error. Returns 1 when one was an error. */
static int collect_chain(pq_cmd_t *cmd, const pgw_result_t *r, const pgw_result_t *upto, int *fatal)
{
    unsigned done = 0;
    for (const pgw_result_t *p = r; p && p != upto; p = pgw_result_next(p), done++) {
        if (done < cmd->taken) continue;
        cmd->taken = done + 1;
        if (collect_one(cmd, p, done, fatal)) return 1;
    }
    return 0;
}

void pq__cmd_collect_before_copy(pq_cmd_t *cmd, const pgw_result_t *results)
{
    const pgw_result_t *last = results;
    while (last && pgw_result_next(last))
        last = pgw_result_next(last);
    int fatal = 0;
    collect_chain(cmd, results, last, &fatal);
}

void pq__cmd_collect_copy_end(pq_cmd_t *cmd, const pgw_result_t *res)
{
    int fatal = 0;
    unsigned done = (unsigned)cmd->taken++;
    /* A COPY TO that ended without a CommandComplete of its own (the
     * archive of BASE_BACKUP) adds no result in libpq: after its
     * PGRES_COPY_OUT come those of the messages that follow. */
    if (!pgw_result_error(res) && !pgw_result_command_tag(res)[0]) return;
    collect_one(cmd, res, done, &fatal);
}

static void collect(pq_cmd_t *cmd, int status, const pgw_result_t *r)
{
    PGconn *conn = cmd->conn;
    int failed = 0, fatal = 0;
    if (cmd->kind == PQ_CMD_SYNC && !is_connection_failure(status)) {
        release_notices(cmd, 0, 1);
        pq__cmd_push(cmd, pq__empty_result(conn, PGRES_PIPELINE_SYNC));
        return;
    }
    if (status == PGW_EABORTED) {
        pq__cmd_push(cmd, pq__empty_result(conn, PGRES_PIPELINE_ABORTED));
        failed = 1;
    }
    if (!failed) failed = collect_chain(cmd, r, NULL, &fatal);
    if (cmd->streaming) stream_end(cmd, 1);
    release_notices(cmd, 0, 1);
    if (is_connection_failure(status) || fatal || !pgw_conn_is_ready(conn->conn) ||
        pgw_session_state(pgw_conn_session(conn->conn)) == PGW_SESSION_BROKEN) {
        if (status != PGW_ECANCELED) cmd_lost(cmd);
        failed = 1;
    } else if (!r && status < 0 && !failed) {
        char text[256];
        snprintf(text, sizeof text, "%s\n", pgw_strerror(status));
        pq__cmd_push(cmd, failure_result(conn, text));
        failed = 1;
    }
    if (failed && cmd->seg && conn->pipeline != PQ_PIPELINE_OFF) conn->aborted_seg = cmd->seg;
}

int pq__cmd_hook(void *ctx, size_t index, int status, pgw_result_t **res)
{
    pq_cmd_t *cmd = ctx;
    /* The FLUSH behind a pipelined request, and the batch's end: nothing
     * of theirs is handed out (cmd may be gone by now). */
    if (index != 0) {
        pgw_result_free(*res);
        return PGW_DRIVER_TAKEN;
    }
    cmd->done = 1;
    cmd->status = status;
    collect(cmd, status, *res);
    pq__notice_mark(cmd->conn, 0);
    pgw_result_free(*res);
    pq__conn_wake(cmd->conn);
    return PGW_DRIVER_TAKEN;
}

void pq__ignore_result(int status, pgw_result_t *res, void *ud)
{
    (void)status;
    (void)ud;
    pgw_result_free(res);
}

/* ------------------------------------------------------------ submitting */

/*
 * When libpq's connection goes idle. PQgetResult hands out a command's last
 * result and stops before the ReadyForQuery behind it; the connection is
 * idle once that is parsed: by the PQgetResult that then returns NULL, or by
 * PQisBusy or PQnotifies (not PQconsumeInput: it only reads). Until then
 * PQsend* refuses another command and PQtransactionStatus is
 * PQTRANS_ACTIVE. pq__input_parsed marks the head command so.
 */
void pq__input_parsed(PGconn *conn)
{
    pq_cmd_t *cmd = conn->head;
    if (cmd && cmd->done && cmd->pos >= cmd->nres && conn->copy == PQ_COPY_NONE)
        cmd->end_parsed = 1;
}

int pq__head_over(const PGconn *conn)
{
    const pq_cmd_t *cmd = conn->head;
    return cmd && cmd->end_parsed && cmd->pos >= cmd->nres && !cmd->next &&
           conn->copy == PQ_COPY_NONE;
}

/* libpq's queue of commands holds none (its error message is then the
 * next command's to clear): an extended query leaves it with its last
 * result, a simple query once its ReadyForQuery is parsed; in pipeline
 * mode a command leaves when its NULL is taken. */
static int queue_empty(const PGconn *conn)
{
    const pq_cmd_t *cmd = conn->head;
    if (!cmd) return 1;
    if (conn->pipeline != PQ_PIPELINE_OFF || cmd->next || conn->copy != PQ_COPY_NONE) return 0;
    return cmd->done && cmd->pos >= cmd->nres && (!cmd->simple || cmd->end_parsed);
}

int pq__send_start(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->status != CONNECTION_OK) {
        pq__conn_set_error(conn, "no connection to the server\n");
        return 0;
    }
    if (conn->pipeline == PQ_PIPELINE_OFF) {
        if (pq__head_over(conn)) cmd_dequeue(conn);
        if (conn->head || conn->copy != PQ_COPY_NONE) {
            /* libpq clears the message first unless its queue holds the
             * command, then appends */
            if (queue_empty(conn)) pq__str_reset(&conn->errmsg);
            pq__conn_append_error(conn, "another command is already in progress\n");
            return 0;
        }
    }
    if (!conn->head) pq__str_reset(&conn->errmsg);
    return 1;
}

int pq__submit(PGconn *conn, pq_cmd_t *cmd, pgw_request_t *req)
{
    if (!req->on_result) req->on_result = pq__ignore_result;
    cmd->simple = req->kind == PGW_REQ_SIMPLE; /* COPY statements too */
    if (conn->pipeline == PQ_PIPELINE_OFF) pq__notice_mark(conn, 1);
    if (conn->broken) {
        /* libpq finds out when it sends: this command's result says so */
        cmd->done = 1;
        cmd_lost(cmd);
        pq__cmd_enqueue(conn, cmd);
        return 1;
    }
    int rc;
    if (conn->pipeline != PQ_PIPELINE_OFF && cmd->kind != PQ_CMD_SYNC) {
        if (conn->aborted_seg && conn->aborted_seg == conn->seg) {
            /* The server skips everything until the sync: so do we. */
            cmd->done = 1;
            pq__cmd_push(cmd, pq__empty_result(conn, PGRES_PIPELINE_ABORTED));
            pq__cmd_enqueue(conn, cmd);
            return 1;
        }
        if (req->kind != PGW_REQ_CLOSE_PORTAL) {
            /* sent with the others at the sync or a flush, as libpq does */
            if (!pq__pipeline_defer(conn, cmd, req)) {
                pq__cmd_free(cmd);
                return 0;
            }
            pq__cmd_enqueue(conn, cmd);
            if (conn->npend >= PQ_PIPELINE_BATCH) pq__pipeline_push(conn, NULL, 0);
            return 1;
        }
        pq__pipeline_push(conn, NULL, 0);
        if (pgw_session_group_open(pgw_conn_session(conn->conn))) {
            rc = pgw_conn_submit_driven(conn->conn, req, pq__cmd_hook, cmd);
        } else {
            pgw_request_t b[2];
            b[0] = *req;
            b[1] = PGW_FLUSH(pq__ignore_result, NULL);
            rc = pgw_conn_submit_batch_driven(conn->conn, b, 2, 0, NULL, NULL, pq__cmd_hook, cmd);
        }
    } else {
        rc = pgw_conn_submit_driven(conn->conn, req, pq__cmd_hook, cmd);
    }
    if (rc == 0) cmd->driven_ctx = cmd; /* (index 0, alone or before its Flush) */
    if (rc == PGW_ECLOSED) {
        cmd->done = 1;
        cmd_lost(cmd);
        pq__cmd_enqueue(conn, cmd);
        return 1;
    }
    if (rc < 0) {
        const char *why = pgw_session_refusal(pgw_conn_session(conn->conn));
        pq__conn_append_error(conn, "%s\n", why && *why ? why : pgw_strerror(rc));
        if (rc == PGW_ECLOSED) conn->status = CONNECTION_BAD;
        pq__cmd_free(cmd);
        return 0;
    }
    pq__cmd_enqueue(conn, cmd);
    /* Written now, as libpq's PQsend* flushes; a pipeline's requests wait
     * for its sync, PQflush or PQgetResult, as libpq's do. */
    if (conn->pipeline == PQ_PIPELINE_OFF || cmd->kind == PQ_CMD_SYNC) pq__conn_flush(conn);
    return 1;
}

/* The parameters of most statements fit in the caller's buffer of this
 * many; more are allocated (free_params). */
enum { PARAMS_LOCAL = 16 };

/* Parameters as libpq gives them: text unless paramFormats says binary,
 * type 0 (the server infers it) unless paramTypes names one. In local
 * when n fits there, else allocated. */
static pgw_param_t *make_params(PGconn *conn, pgw_param_t local[PARAMS_LOCAL], int n,
                                const Oid *types, const char *const *values, const int *lengths,
                                const int *formats)
{
    pgw_param_t *p = n <= PARAMS_LOCAL ? local : calloc((size_t)n, sizeof *p);
    if (!p) {
        pq__conn_set_error(conn, "out of memory\n");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        uint32_t oid = types ? types[i] : 0;
        const char *v = values ? values[i] : NULL;
        if (!v)
            p[i] = pgw_null(oid);
        else if (formats && formats[i])
            p[i] = pgw_raw(oid, PGW_FORMAT_BINARY, v, lengths ? lengths[i] : 0);
        else
            p[i] = pgw_text_typed(v, -1, oid);
    }
    return p;
}

static void free_params(pgw_param_t *p, const pgw_param_t *local)
{
    if (p != local) free(p);
}

static const int16_t binary_format = 1;

static void set_result_format(pgw_request_t *req, int resultFormat)
{
    if (resultFormat) {
        req->result_formats = &binary_format;
        req->nresult_formats = 1;
    } else {
        req->flags |= PGW_Q_TEXT;
    }
}

static int check_nparams(PGconn *conn, int nParams)
{
    if (nParams < 0 || nParams > 65535) {
        pq__conn_set_error(conn, "number of parameters must be between 0 and %d\n", 65535);
        return 0;
    }
    return 1;
}

/* cmd keeps a copy of sql, inline when it is short. 0 when out of memory. */
static int keep_query(pq_cmd_t *cmd, const char *sql)
{
    size_t n = strlen(sql) + 1;
    cmd->query = n <= sizeof cmd->query_inline ? cmd->query_inline : malloc(n);
    if (!cmd->query) return 0;
    memcpy(cmd->query, sql, n);
    return 1;
}

static int send_kind(PGconn *conn, pq_cmd_kind_t kind, pgw_request_t *req, int describe)
{
    pq_cmd_t *cmd = pq__cmd_new(conn, kind);
    if (!cmd) return 0;
    cmd->describe = describe;
    if (req->sql && !keep_query(cmd, req->sql)) {
        pq__conn_set_error(conn, "out of memory\n");
        pq__cmd_free(cmd);
        return 0;
    }
    req->ud = cmd; /* the COPY and row callbacks' */
    /* A simple query carries the COPYs among its statements. */
    if (req->kind == PGW_REQ_SIMPLE) {
        req->copy_source = pq__copy_source;
        req->on_copy_data = pq__copy_data;
        req->on_copy_start = pq__copy_start;
        req->on_copy_end = pq__copy_end;
    }
    return pq__submit(conn, cmd, req);
}

static int send_params(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                       const char *const *paramValues, const int *paramLengths,
                       const int *paramFormats, int resultFormat)
{
    if (!pq__send_start(conn)) return 0;
    if (!command) {
        pq__conn_set_error(conn, "command string is a null pointer\n");
        return 0;
    }
    if (!check_nparams(conn, nParams)) return 0;
    pgw_param_t local[PARAMS_LOCAL];
    pgw_param_t *params =
        make_params(conn, local, nParams, paramTypes, paramValues, paramLengths, paramFormats);
    if (!params) return 0;
    pgw_request_t req = PGW_QUERY(command, params, (size_t)nParams, NULL, NULL);
    req.cache = PGW_CACHE_SKIP;
    /* libpq's Parse names paramTypes as given, and no type without them. */
    req.param_types = paramTypes;
    req.nparam_types = paramTypes ? (size_t)nParams : 0;
    set_result_format(&req, resultFormat);
    int ok = send_kind(conn, PQ_CMD_QUERY, &req, PQ_DESCRIBE_ROWS);
    free_params(params, local);
    return ok;
}

int PQsendQuery(PGconn *conn, const char *query)
{
    if (!pq__send_start(conn)) return 0;
    if (!query) {
        pq__conn_set_error(conn, "command string is a null pointer\n");
        return 0;
    }
    if (conn->pipeline != PQ_PIPELINE_OFF) {
        pq__conn_append_error(conn, "%s not allowed in pipeline mode\n", "PQsendQuery");
        return 0;
    }
    pgw_request_t req = PGW_SIMPLE(query, NULL, NULL);
    return send_kind(conn, PQ_CMD_QUERY, &req, PQ_DESCRIBE_ROWS);
}

int PQsendQueryParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                      const char *const *paramValues, const int *paramLengths,
                      const int *paramFormats, int resultFormat)
{
    return send_params(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
                       resultFormat);
}

int PQsendPrepare(PGconn *conn, const char *stmtName, const char *query, int nParams,
                  const Oid *paramTypes)
{
    if (!pq__send_start(conn)) return 0;
    if (!stmtName) {
        pq__conn_set_error(conn, "statement name is a null pointer\n");
        return 0;
    }
    if (!query) {
        pq__conn_set_error(conn, "command string is a null pointer\n");
        return 0;
    }
    if (!check_nparams(conn, nParams)) return 0;
    pgw_request_t req =
        PGW_PREPARE(stmtName, query, paramTypes, paramTypes ? (size_t)nParams : 0, NULL, NULL);
    return send_kind(conn, PQ_CMD_QUERY, &req, PQ_DESCRIBE_NONE);
}

int PQsendQueryPrepared(PGconn *conn, const char *stmtName, int nParams,
                        const char *const *paramValues, const int *paramLengths,
                        const int *paramFormats, int resultFormat)
{
    if (!pq__send_start(conn)) return 0;
    if (!stmtName) {
        pq__conn_set_error(conn, "statement name is a null pointer\n");
        return 0;
    }
    if (!check_nparams(conn, nParams)) return 0;
    pgw_param_t local[PARAMS_LOCAL];
    pgw_param_t *params =
        make_params(conn, local, nParams, NULL, paramValues, paramLengths, paramFormats);
    if (!params) return 0;
    pgw_request_t req = PGW_EXECUTE(stmtName, params, (size_t)nParams, NULL, NULL);
    req.flags |= PGW_Q_ANY_NPARAMS; /* the server judges the count, as libpq lets it */
    set_result_format(&req, resultFormat);
    int ok = send_kind(conn, PQ_CMD_QUERY, &req, PQ_DESCRIBE_ROWS);
    free_params(params, local);
    return ok;
}

int PQsendDescribePrepared(PGconn *conn, const char *stmt)
{
    if (!pq__send_start(conn)) return 0;
    pgw_request_t req = PGW_DESCRIBE(stmt ? stmt : "", NULL, NULL);
    return send_kind(conn, PQ_CMD_QUERY, &req, PQ_DESCRIBE_COLUMNS);
}

int PQsendDescribePortal(PGconn *conn, const char *portal)
{
    if (!pq__send_start(conn)) return 0;
    pgw_request_t req = PGW_DESCRIBE_PORTAL(portal ? portal : "", NULL, NULL);
    return send_kind(conn, PQ_CMD_QUERY, &req, PQ_DESCRIBE_COLUMNS);
}

int PQsendClosePrepared(PGconn *conn, const char *stmt)
{
    if (!pq__send_start(conn)) return 0;
    pgw_request_t req = PGW_CLOSE(stmt ? stmt : "", NULL, NULL);
    return send_kind(conn, PQ_CMD_QUERY, &req, PQ_DESCRIBE_NONE);
}

int PQsendClosePortal(PGconn *conn, const char *portal)
{
    if (!pq__send_start(conn)) return 0;
    pgw_request_t req = PGW_CLOSE_PORTAL(portal ? portal : "", NULL, NULL);
    return send_kind(conn, PQ_CMD_QUERY, &req, PQ_DESCRIBE_NONE);
}

/* ------------------------------------------------------------- results */

/* 1 while a command holds the result saying the connection broke. */
static int lost_pending(const PGconn *conn)
{
    for (const pq_cmd_t *c = conn->head; c; c = c->next)
        if (c->lost_at && c->pos < c->lost_at) return 1;
    return 0;
}

int PQconsumeInput(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->status != CONNECTION_OK || !conn->conn) {
        pq__conn_set_error(conn, "connection not open\n");
        return 0;
    }
    if (conn->npend) pq__pipeline_push(conn, NULL, 0);
    pq__conn_turn(conn, UV_RUN_NOWAIT);
    if (conn->broken && !lost_pending(conn)) {
        conn->status = CONNECTION_BAD;
        char words[256];
        pq__conn_set_error(conn, "%s", lost_words(conn, words, sizeof words));
        return 0;
    }
    return 1;
}

int PQisBusy(PGconn *conn)
{
    if (!conn) return 0;
    pq__input_parsed(conn);
    pq_cmd_t *cmd = conn->head;
    if (!cmd || conn->copy != PQ_COPY_NONE) return 0;
    if (cmd->pos < cmd_visible(conn, cmd) || cmd->done) return 0;
    return conn->status == CONNECTION_OK;
}

static PGresult *copy_result_again(PGconn *conn)
{
    /* After the server's end of a COPY BOTH, libpq's state is COPY IN. */
    ExecStatusType st = conn->copy == PQ_COPY_IN || conn->copy == PQ_COPY_BOTH_IN ? PGRES_COPY_IN
                        : conn->copy == PQ_COPY_BOTH                              ? PGRES_COPY_BOTH
                                                                                  : PGRES_COPY_OUT;
    return PQmakeEmptyPGresult(conn, st);
}

static int split_begin(pq_cmd_t *cmd, int with_end, size_t notices);
static PGresult *split_chunk(PGconn *conn, pq_cmd_t *cmd);

/* In single-row mode libpq hands each row out as it arrives and gives a
 * notice to the receiver when its parser reaches it, which it does for the
 * notices right behind a row before it returns that row: a notice that
 * came after k of a statement's rows comes before the k-th row result (one
 * that came before any row, before them all), one that came right after
 * the statement's end after the last row, before the row-less result.
 * Such notices are held just before the statement's result (notice_rows
 * != 0); when res[pos] is one, the result after the run of them moves to
 * pos, the run right behind it, and its rows go out with the notices
 * among them (split_chunk). */
static void notices_among_rows(PGconn *conn, pq_cmd_t *cmd)
{
    size_t pos = cmd->pos, vis = cmd_visible(conn, cmd), j = pos;
    while (j < vis && PQresultStatus(cmd->res[j]) == PGRES_NONFATAL_ERROR &&
           cmd->res[j]->notice_rows != 0)
        j++;
    if (j == pos || j >= vis || PQresultStatus(cmd->res[j]) != PGRES_TUPLES_OK ||
        PQntuples(cmd->res[j]) == 0)
        return;
    size_t k = j - pos;
    PGresult *src = cmd->res[j];
    memmove(cmd->res + pos + 1, cmd->res + pos, k * sizeof *cmd->res);
    cmd->res[pos] = src;
    if (!split_begin(cmd, 1, k)) { /* out of memory: not split, as they were */
        memmove(cmd->res + pos, cmd->res + pos + 1, k * sizeof *cmd->res);
        cmd->res[pos + k] = src;
    }
}

static PGresult *next_result(PGconn *conn)
{
    if (conn->npend) pq__pipeline_push(conn, NULL, 0);
    for (;;) {
        pq_cmd_t *cmd = conn->head;
        if (!cmd) return NULL;
        if (cmd->chunk_rows && !cmd->splitting && cmd->pos < cmd_visible(conn, cmd) &&
            PQresultStatus(cmd->res[cmd->pos]) == PGRES_NONFATAL_ERROR &&
            cmd->res[cmd->pos]->notice_rows != 0)
            notices_among_rows(conn, cmd);
        if (cmd->splitting) return split_chunk(conn, cmd);
        if (cmd->pos < cmd_visible(conn, cmd) &&
            PQresultStatus(cmd->res[cmd->pos]) == PGRES_NONFATAL_ERROR) {
            /* a notice held in its place: to the receiver now */
            PGresult *n = cmd->res[cmd->pos];
            cmd->res[cmd->pos++] = NULL;
            if (conn->hooks.receiver) conn->hooks.receiver(conn->hooks.receiver_arg, n);
            PQclear(n);
            continue;
        }
        if (cmd->partial_at && cmd->pos == cmd->partial_at - 1 &&
            cmd->pos < cmd_visible(conn, cmd)) {
            /* rows before an error: single-row mode hands them out */
            cmd->partial_at = 0;
            /* (only full chunks: libpq 17 drops a chunk the error cut short) */
            if (!cmd->chunk_rows || PQntuples(cmd->res[cmd->pos]) < cmd->chunk_rows) {
                PQclear(cmd->res[cmd->pos]);
                cmd->res[cmd->pos++] = NULL;
                continue;
            }
            if (split_begin(cmd, 0, 0)) return split_chunk(conn, cmd);
        } else if (cmd->pos < cmd_visible(conn, cmd) && cmd->chunk_rows &&
                   PQresultStatus(cmd->res[cmd->pos]) == PGRES_TUPLES_OK &&
                   PQntuples(cmd->res[cmd->pos]) > 0) {
            if (split_begin(cmd, 1, 0)) return split_chunk(conn, cmd);
        }
        if (cmd->pos < cmd_visible(conn, cmd)) {
            PGresult *r = cmd->res[cmd->pos];
            cmd->res[cmd->pos++] = NULL;
            if (cmd->lost_at && cmd->pos >= cmd->lost_at) conn->status = CONNECTION_BAD;
            ExecStatusType st = PQresultStatus(r);
            if (cmd->seg && st == PGRES_FATAL_ERROR)
                pq__conn_set_error(conn, "%s", PQresultErrorMessage(r));
            else if (cmd->copy_began && st == PGRES_FATAL_ERROR)
                pq__conn_append_error(conn, "%s", PQresultErrorMessage(r));
            if (cmd->seg && (st == PGRES_FATAL_ERROR || st == PGRES_PIPELINE_ABORTED))
                conn->shown_aborted = 1;
            if (cmd->kind == PQ_CMD_SYNC) {
                if (conn->aborted_seg == cmd->seg) conn->aborted_seg = 0;
                conn->shown_aborted = 0;
                if (cmd->done && cmd->pos >= cmd->nres) cmd_dequeue(conn);
            }
            /* libpq reads on past a CopyOutResponse to the first row: the
             * notices before it come with PGRES_COPY_OUT */
            if (st == PGRES_COPY_OUT || st == PGRES_COPY_BOTH) pq__copy_out_notices(conn);
            return r;
        }
        if (conn->copy != PQ_COPY_NONE && conn->copy_cmd == cmd) return copy_result_again(conn);
        if (cmd->done) {
            pq_cmd_kind_t kind = cmd->kind;
            cmd_dequeue(conn);
            if (conn->pipeline != PQ_PIPELINE_OFF) pq__str_reset(&conn->errmsg);
            if (kind == PQ_CMD_SYNC) continue;
            return NULL;
        }
        if (pq__conn_turn(conn, UV_RUN_ONCE) == 0 && !cmd->done && cmd->pos >= cmd->nres) {
            /* Nothing left that could complete it. */
            cmd->done = 1;
            cmd_lost(cmd);
        }
    }
}

PGresult *PQgetResult(PGconn *conn)
{
    if (!conn) return NULL;
    PGresult *r = next_result(conn);
    /* the event procedures hear of each result before the caller sees it */
    if (r) (void)PQfireResultCreateEvents(conn, r);
    return r;
}

/* ------------------------------------------------------ blocking calls */

static int exec_start(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->pipeline != PQ_PIPELINE_OFF) {
        pq__conn_set_error(
            conn, "synchronous command execution functions are not allowed in pipeline mode\n");
        return 0;
    }
    PGresult *r;
    while ((r = PQgetResult(conn)) != NULL) {
        ExecStatusType st = PQresultStatus(r);
        PQclear(r);
        if (st == PGRES_COPY_IN) {
            if (PQputCopyEnd(conn, "COPY terminated by new PQexec") < 0) return 0;
        } else if (st == PGRES_COPY_OUT) {
            /* Read the rest of the COPY's data and drop it. */
            char *buf;
            int n;
            while ((n = PQgetCopyData(conn, &buf, 0)) > 0)
                PQfreemem(buf);
        }
        if (conn->status == CONNECTION_BAD) return 0;
    }
    return 1;
}

/* The command's last result (or its COPY's), from get: PQgetResult, or
 * next_result for a result no event procedure hears of. */
static PGresult *last_result(PGconn *conn, PGresult *(*get)(PGconn *))
{
    PGresult *last = NULL, *r;
    while ((r = get(conn)) != NULL) {
        PQclear(last);
        last = r;
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_COPY_IN || st == PGRES_COPY_OUT || st == PGRES_COPY_BOTH ||
            conn->status == CONNECTION_BAD)
            break;
    }
    return last;
}

static PGresult *exec_finish(PGconn *conn)
{
    return last_result(conn, PQgetResult);
}

PGresult *PQexec(PGconn *conn, const char *query)
{
    if (!exec_start(conn)) return NULL;
    if (!PQsendQuery(conn, query)) return NULL;
    return exec_finish(conn);
}

PGresult *PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                       const char *const *paramValues, const int *paramLengths,
                       const int *paramFormats, int resultFormat)
{
    if (!exec_start(conn)) return NULL;
    if (!PQsendQueryParams(conn, command, nParams, paramTypes, paramValues, paramLengths,
                           paramFormats, resultFormat))
        return NULL;
    return exec_finish(conn);
}

PGresult *PQprepare(PGconn *conn, const char *stmtName, const char *query, int nParams,
                    const Oid *paramTypes)
{
    if (!exec_start(conn)) return NULL;
    if (!PQsendPrepare(conn, stmtName, query, nParams, paramTypes)) return NULL;
    return exec_finish(conn);
}

PGresult *PQexecPrepared(PGconn *conn, const char *stmtName, int nParams,
                         const char *const *paramValues, const int *paramLengths,
                         const int *paramFormats, int resultFormat)
{
    if (!exec_start(conn)) return NULL;
    if (!PQsendQueryPrepared(conn, stmtName, nParams, paramValues, paramLengths, paramFormats,
                             resultFormat))
        return NULL;
    return exec_finish(conn);
}

PGresult *PQdescribePrepared(PGconn *conn, const char *stmt)
{
    if (!exec_start(conn)) return NULL;
    if (!PQsendDescribePrepared(conn, stmt)) return NULL;
    return exec_finish(conn);
}

PGresult *PQdescribePortal(PGconn *conn, const char *portal)
{
    if (!exec_start(conn)) return NULL;
    if (!PQsendDescribePortal(conn, portal)) return NULL;
    return exec_finish(conn);
}

PGresult *PQclosePrepared(PGconn *conn, const char *stmt)
{
    if (!exec_start(conn)) return NULL;
    if (!PQsendClosePrepared(conn, stmt)) return NULL;
    return exec_finish(conn);
}

PGresult *PQclosePortal(PGconn *conn, const char *portal)
{
    if (!exec_start(conn)) return NULL;
    if (!PQsendClosePortal(conn, portal)) return NULL;
    return exec_finish(conn);
}

int PQflush(PGconn *conn)
{
    if (!conn || conn->status == CONNECTION_BAD) return -1;
    if (conn->npend) pq__pipeline_push(conn, NULL, 0);
    return pq__conn_flush(conn);
}

/* The rows the session kept before cmd's stream began (read ahead with
 * the results before them, where libpq would not have parsed them yet) go
 * into its chunks first, with the notices held among them where the
 * stream would have placed them as they came. (Only a query's or an
 * execute's: a simple query's statements switch before their rows.) */
static void stream_kept_rows(pq_cmd_t *cmd)
{
    const pgw_result_t *p = pgw_session_driven_results(pgw_conn_session(cmd->conn->conn),
                                                       cmd->driven_ctx, cmd->driven_index);
    size_t n = p ? pgw_result_nrows(p) : 0;
    if (!n) return;
    for (size_t i = 0; i <= n; i++) {
        while (cmd->notices_out < cmd->nnotices && !cmd->notices[cmd->notices_out].at_end &&
               cmd->notices[cmd->notices_out].rows == i &&
               pq__cmd_stream_notice(cmd, cmd->notices[cmd->notices_out].res, (long)i))
            cmd->notices[cmd->notices_out++].res = NULL;
        pgw_row_t row;
        if (i < n && pgw_result_row(p, i, &row) == 0) stream_row(&row, cmd);
    }
    cmd->kept_rows = n;
}

/* From now on the session hands cmd's rows to stream_row: set on its
 * request while that waits in the pipeline's pending batch, else asked of
 * the session. 1 when they stream. */
static int stream_from_now(PGconn *conn, pq_cmd_t *cmd)
{
    if (pq__pipeline_stream(conn, cmd, stream_row)) return 1;
    if (!cmd->driven_ctx || pgw_session_stream_driven(pgw_conn_session(conn->conn), cmd->driven_ctx,
                                                      cmd->driven_index, stream_row) != 0)
        return 0;
    stream_kept_rows(cmd);
    return 1;
}

/* Single-row mode (and libpq 17's chunked mode): the command's rows are
 * handed out chunk_rows at a time (PGRES_SINGLE_TUPLE, one each; or
 * PGRES_TUPLES_CHUNK), then a PGRES_TUPLES_OK without rows carrying the
 * command tag. */
static int set_chunk_rows(PGconn *conn, int rows)
{
    if (!conn || rows <= 0) return 0;
    pq_cmd_t *cmd = conn->head;
    /* as libpq: while the command has results to come (also between two
     * statements of a simple query: the mode applies to those after) */
    if (!cmd) return 0;
    if (cmd->done && cmd->pos >= cmd->nres)
        /* libpq accepts it while a simple query's end is not parsed yet
         * (pq__input_parsed), for rows that will not come */
        return conn->pipeline == PQ_PIPELINE_OFF && cmd->simple && !cmd->end_parsed;
    if (cmd->kind != PQ_CMD_QUERY || cmd->describe != PQ_DESCRIBE_ROWS) return 0;
    /* nor for a query an error before it in the pipeline aborts: libpq has
     * its PGRES_PIPELINE_ABORTED ready */
    if (cmd->seg && conn->aborted_seg == cmd->seg &&
        (!cmd->done || PQresultStatus(cmd->res[cmd->pos]) == PGRES_PIPELINE_ABORTED))
        return 0;
    cmd->chunk_rows = rows;
    /* Its rows stream from now on when none came yet; else the session's
     * buffered result is split as it is handed out. */
    if (!cmd->streaming && !cmd->done && cmd->nres == 0 && conn->conn)
        cmd->streaming = stream_from_now(conn, cmd);
    return 1;
}

int PQsetSingleRowMode(PGconn *conn)
{
    return set_chunk_rows(conn, 1);
}

/* libpq 17 (not in libpq 15's header). */
int PQsetChunkedRowsMode(PGconn *conn, int chunkSize);
int PQsetChunkedRowsMode(PGconn *conn, int chunkSize)
{
    return set_chunk_rows(conn, chunkSize);
}

/* Rows [first, first + n) of src as a result of status. */
static PGresult *some_rows(PGconn *conn, const PGresult *src, int first, int n,
                           ExecStatusType status)
{
    int nf = PQnfields(src);
    PGresult *r = PQmakeEmptyPGresult(conn, status);
    PGresAttDesc *d = calloc(nf > 0 ? (size_t)nf : 1, sizeof *d);
    if (!r || !d) goto fail;
    for (int i = 0; i < nf; i++) {
        d[i].name = PQfname(src, i);
        d[i].tableid = PQftable(src, i);
        d[i].columnid = PQftablecol(src, i);
        d[i].format = PQfformat(src, i);
        d[i].typid = PQftype(src, i);
        d[i].typlen = PQfsize(src, i);
        d[i].atttypmod = PQfmod(src, i);
    }
    if (nf && !PQsetResultAttrs(r, nf, d)) goto fail;
    for (int row = 0; row < n; row++)
        for (int i = 0; i < nf; i++) {
            int null = PQgetisnull(src, first + row, i);
            if (!PQsetvalue(r, row, i, null ? NULL : PQgetvalue(src, first + row, i),
                            null ? -1 : PQgetlength(src, first + row, i)))
                goto fail;
        }
    free(d);
    return r;
fail:
    free(d);
    PQclear(r);
    return NULL;
}

/* Start handing out res[pos]'s rows chunk_rows at a time, one chunk per
 * PQgetResult, followed (with_end) by a result without them; `notices`
 * held notices right behind res[pos] came among the rows. The chunks are
 * made as they are asked for, so no more than one is held beside the rows.
 * 0 when out of memory (nothing changed: the rows go out in one result). */
static int split_begin(pq_cmd_t *cmd, int with_end, size_t notices)
{
    PGresult *end = NULL;
    if (with_end) {
        end = PQcopyResult(cmd->res[cmd->pos],
                           PG_COPYRES_ATTRS | PG_COPYRES_EVENTS | PG_COPYRES_NOTICEHOOKS);
        if (!end) return 0;
    }
    cmd->splitting = 1;
    cmd->split_rows = 0;
    cmd->split_notices = notices;
    cmd->split_end = end;
    return 1;
}

/* The rows that went out replace res[pos]: the notices still held among
 * them, then the result without rows (none: the slot is handed out). */
static void split_finish(pq_cmd_t *cmd)
{
    PGresult *src = cmd->res[cmd->pos];
    size_t k = cmd->split_notices;
    if (cmd->split_end) {
        memmove(cmd->res + cmd->pos, cmd->res + cmd->pos + 1, k * sizeof *cmd->res);
        cmd->res[cmd->pos + k] = cmd->split_end;
    } else {
        cmd->res[cmd->pos++] = NULL;
    }
    PQclear(src);
    cmd->splitting = 0;
    cmd->split_end = NULL;
    cmd->split_notices = 0;
}

/* The next chunk of res[pos]'s rows, after the notices that came after a
 * row of it (libpq reads the notices right behind a row before it hands
 * the row out). */
static PGresult *split_chunk(PGconn *conn, pq_cmd_t *cmd)
{
    PGresult *src = cmd->res[cmd->pos];
    int per = cmd->chunk_rows, nrows = PQntuples(src), first = cmd->split_rows;
    if (!cmd->split_end) nrows -= nrows % per; /* rows before an error: full chunks */
    int n = nrows - first < per ? nrows - first : per;
    while (cmd->split_notices) {
        PGresult *notice = cmd->res[cmd->pos + 1];
        if (notice->notice_rows <= 0 || (notice->notice_rows - 1) / per > first / per) break;
        /* src moves into the notice's slot */
        cmd->res[cmd->pos + 1] = src;
        cmd->res[cmd->pos++] = NULL;
        cmd->split_notices--;
        if (conn->hooks.receiver) conn->hooks.receiver(conn->hooks.receiver_arg, notice);
        PQclear(notice);
    }
    PGresult *chunk =
        some_rows(conn, src, first, n, per == 1 ? PGRES_SINGLE_TUPLE : PGRES_TUPLES_CHUNK);
    cmd->split_rows += n;
    if (!chunk) {
        /* the rest of the rows are dropped: the error ends them */
        chunk = failure_result(conn, "out of memory\n");
        cmd->split_rows = nrows;
    }
    if (cmd->split_rows >= nrows) split_finish(cmd);
    return chunk;
}

/* libpq's pqClearConnErrorState at the start of PQescapeLiteral and
 * friends: the message is emptied unless a command still owns it. */
void pq__conn_clear_error(PGconn *conn)
{
    if (!conn) return;
    if (conn->pipeline == PQ_PIPELINE_OFF && pq__head_over(conn)) cmd_dequeue(conn);
    if (queue_empty(conn)) pq__str_reset(&conn->errmsg);
}

/* ------------------------------------------------------------------ PQfn */

/* PQfn's arguments as parameters of the session's FUNCTION_CALL: an
 * integer in network order in ints (4 bytes per argument), bytes as given,
 * NULL for length -1; all binary, as libpq sends them. NULL with the error
 * set when an integer has a size libpq cannot send. */
static pgw_param_t *fn_args(PGconn *conn, const PQArgBlock *args, int nargs, uint8_t *ints)
{
    pgw_param_t *p = calloc(nargs > 0 ? (size_t)nargs : 1, sizeof *p);
    if (!p) {
        pq__conn_set_error(conn, "out of memory\n");
        return NULL;
    }
    for (int i = 0; i < nargs; i++) {
        const PQArgBlock *a = &args[i];
        uint8_t *n = ints + 4 * (size_t)i;
        if (a->len == -1) {
            p[i] = pgw_null(0);
        } else if (!a->isint) {
            p[i] = pgw_raw(0, PGW_FORMAT_BINARY, a->u.ptr, a->len);
        } else if (a->len == 4 || a->len == 2) {
            uint32_t v = (uint32_t)a->u.integer;
            for (int k = 0; k < a->len; k++)
                n[k] = (uint8_t)(v >> (8 * (a->len - 1 - k)));
            p[i] = pgw_raw(0, PGW_FORMAT_BINARY, n, a->len);
        } else {
            pq__conn_append_error(conn, "integer of size %lu not supported by pqPutInt\n",
                                  (unsigned long)a->len);
            free(p);
            return NULL;
        }
    }
    return p;
}

/* The function's value (the one cell of r) into result_buf as libpq reads
 * it: an integer of 2 or 4 bytes in host order, else the bytes. 1, or 0
 * with the error set. */
static int fn_value(PGconn *conn, const PGresult *r, int *result_buf, int *result_len,
                    int result_is_int)
{
    if (PQgetisnull(r, 0, 0)) {
        *result_len = -1;
        return 1;
    }
    int len = PQgetlength(r, 0, 0);
    const unsigned char *v = (const unsigned char *)PQgetvalue(r, 0, 0);
    *result_len = len;
    if (!result_is_int) {
        memcpy(result_buf, v, (size_t)len);
    } else if (len == 4) {
        *result_buf =
            (int)((uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 | (uint32_t)v[2] << 8 | v[3]);
    } else if (len == 2) {
        *result_buf = (int)(uint16_t)(v[0] << 8 | v[1]);
    } else {
        pq__conn_append_error(conn, "integer of size %lu not supported by pqGetInt\n",
                              (unsigned long)len);
        return 0;
    }
    return 1;
}

PGresult *PQfn(PGconn *conn, int fnid, int *result_buf, int *result_len, int result_is_int,
               const PQArgBlock *args, int nargs)
{
    *result_len = 0;
    if (!conn) return NULL;
    pq__conn_clear_error(conn);
    if (conn->pipeline != PQ_PIPELINE_OFF) {
        pq__conn_append_error(conn, "%s not allowed in pipeline mode\n", "PQfn");
        return NULL;
    }
    if (conn->status != CONNECTION_OK || conn->head || conn->copy != PQ_COPY_NONE) {
        pq__conn_append_error(conn, "connection in wrong state\n");
        return NULL;
    }
    if (!check_nparams(conn, nargs)) return NULL;
    uint8_t *ints = malloc(nargs > 0 ? 4 * (size_t)nargs : 1);
    pgw_param_t *params = ints ? fn_args(conn, args, nargs, ints) : NULL;
    if (!ints) pq__conn_set_error(conn, "out of memory\n");
    int ok = 0;
    if (params) {
        pgw_request_t req = PGW_FUNCTION_CALL((uint32_t)fnid, params, (size_t)nargs, NULL, NULL);
        ok = send_kind(conn, PQ_CMD_QUERY, &req, PQ_DESCRIBE_ROWS);
    }
    free(params);
    free(ints);
    if (!ok) return NULL;
    /* The value comes as a one-cell result; libpq hands out an empty one,
     * and its event procedures hear of neither. */
    PGresult *r = last_result(conn, next_result);
    if (!r || PQresultStatus(r) != PGRES_TUPLES_OK) return r;
    ok = fn_value(conn, r, result_buf, result_len, result_is_int);
    PQclear(r);
    return ok ? PQmakeEmptyPGresult(conn, PGRES_COMMAND_OK)
              : pq__result_error(conn, PGRES_FATAL_ERROR, PQerrorMessage(conn));
}
