/*
 * COPY through PQexec / PQsendQuery: the statement goes out as a simple
 * query, as libpq sends it (a replication connection's walsender takes no
 * other), whose COPY callbacks are these. PQputCopyData fills a buffer the
 * request's source drains (pausing when it is empty); COPY TO STDOUT rows
 * wait in a queue for PQgetCopyData. The old line API (PQputline,
 * PQgetline, PQendcopy) sits on top, as in libpq.
 *
 * A COPY's start queues the results of the statements before it in the
 * string, then its own PGRES_COPY_*; its end (pq__copy_end) queues the
 * COPY's result and, for COPY TO, pauses reading until PQgetCopyData has
 * handed out the last row and -1, so a next COPY of the same string never
 * meets rows still queued.
 */
#define _GNU_SOURCE
#include "pq/conn_internal.h"
#include "pgwire/replication.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PQputCopyData's buffer is handed to the session past this many bytes. */
#define COPY_IN_CHUNK (64 * 1024)
/* Reading pauses while this many bytes of COPY TO rows wait. */
#define COPY_OUT_MAX (4 * 1024 * 1024)

void pq__copy_reset(PGconn *conn)
{
    pq__str_free(&conn->copy_in);
    free(conn->copy_in_errmsg);
    conn->copy_in_errmsg = NULL;
    conn->copy_in_end = 0;
    conn->copy_in_paused = 0;
    conn->copy_ended = 0;
    while (conn->copy_out_head) {
        pq_copy_chunk_t *c = conn->copy_out_head;
        conn->copy_out_head = c->next;
        free(c->data);
        PQclear(c->notice);
        free(c);
    }
    conn->copy_out_tail = NULL;
    conn->copy_out_bytes = 0;
    conn->copy_line_off = 0;
    conn->copy = PQ_COPY_NONE;
    conn->copy_cmd = NULL;
}

/* The session's count of messages received, the one being dispatched
 * included. */
static uint64_t messages_now(PGconn *conn)
{
    pgw_rx_counts_t now;
    pgw_session_rx_counts(pgw_conn_session(conn->conn), &now);
    return now.messages;
}

int pq__copy_start(const pgw_copy_info_t *info, void *ud)
{
    pq_cmd_t *cmd = ud;
    PGconn *conn = cmd->conn;
    int in = info->direction == PGW_COPY_IN, both = info->direction == PGW_COPY_BOTH;
    ExecStatusType st = in ? PGRES_COPY_IN : both ? PGRES_COPY_BOTH : PGRES_COPY_OUT;
    PGresult *res = pq__result_copy_start(conn, st, info->ncols, info->col_formats, info->format);
    if (!res) return PGW_ENOMEM;
    pq__copy_reset(conn);
    pq__cmd_collect_before_copy(cmd, info->results);
    cmd->copy_began = 1;
    cmd->copy_idx = cmd->nres;
    pq__cmd_push(cmd, res);
    conn->copy = in ? PQ_COPY_IN : both ? PQ_COPY_BOTH : PQ_COPY_OUT;
    conn->copy_last_at = messages_now(conn);
    conn->copy_cmd = cmd;
    pq__conn_wake(conn);
    return 0;
}

void pq__copy_end(const pgw_result_t *res, void *ud)
{
    pq_cmd_t *cmd = ud;
    PGconn *conn = cmd->conn;
    pq__cmd_collect_copy_end(cmd, res);
    conn->copy_ended = 1;
    /* The statements after it wait until the caller has taken the rows
     * (PQgetCopyData's -1): a next COPY would reuse the queue. */
    if (conn->copy == PQ_COPY_OUT || conn->copy == PQ_COPY_BOTH || conn->copy == PQ_COPY_BOTH_IN)
        pgw_conn_pause_reading(conn->conn);
    pq__conn_wake(conn);
}

int pq__copy_source(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room;
    pq_cmd_t *cmd = ud;
    PGconn *conn = cmd->conn;
    /* A caller waiting for the buffer to drain looks again. */
    pq__conn_wake(conn);
    if (conn->copy_in_end && conn->copy_in_errmsg && !conn->copy_in.len) {
        const char *m = conn->copy_in_errmsg;
        if (pgw_buf_append(out, m, strlen(m)) < 0) return PGW_ENOMEM;
        return PGW_ECANCELED;
    }
    size_t n = conn->copy_in.len;
    if (n && pgw_buf_append(out, conn->copy_in.data, n) < 0) return PGW_ENOMEM;
    pq__str_reset(&conn->copy_in);
    if (conn->copy_in_end && !conn->copy_in_errmsg) return PGW_COPY_END;
    if (n) return PGW_COPY_MORE; /* a CopyFail goes out at the next call */
    conn->copy_in_paused = 1;
    return PGW_COPY_PAUSE;
}

static void copy_out_append(PGconn *conn, pq_copy_chunk_t *c)
{
    if (conn->copy_out_tail)
        conn->copy_out_tail->next = c;
    else
        conn->copy_out_head = c;
    conn->copy_out_tail = c;
}

int pq__copy_out_notice(PGconn *conn, pq_cmd_t *cmd, PGresult *notice)
{
    if (conn->copy_cmd != cmd || !cmd->copy_began || conn->copy_ended ||
        (conn->copy != PQ_COPY_OUT && conn->copy != PQ_COPY_BOTH))
        return 0;
    /* After the server's CopyDone (a row trigger's notice at the end of
     * the statement), libpq reads it in PQgetResult: held as others. */
    pgw_rx_counts_t now;
    pgw_session_rx_counts(pgw_conn_session(conn->conn), &now);
    if (now.other_at != conn->copy_last_at) return 0;
    pq_copy_chunk_t *c = calloc(1, sizeof *c);
    if (!c) return 0;
    c->notice = notice;
    copy_out_append(conn, c);
    pq__conn_wake(conn);
    return 1;
}

int pq__copy_in_notice_now(const PGconn *conn, const pq_cmd_t *cmd)
{
    return conn->copy_cmd == cmd && cmd->copy_began && !conn->copy_ended &&
           conn->copy == PQ_COPY_IN && cmd->pos >= cmd->copy_idx &&
           cmd->notices_out == cmd->nnotices;
}

void pq__copy_out_notices(PGconn *conn)
{
    while (conn->copy_out_head && conn->copy_out_head->notice) {
        pq_copy_chunk_t *c = conn->copy_out_head;
        conn->copy_out_head = c->next;
        if (!conn->copy_out_head) conn->copy_out_tail = NULL;
        if (conn->hooks.receiver) conn->hooks.receiver(conn->hooks.receiver_arg, c->notice);
        PQclear(c->notice);
        free(c);
    }
}

int pq__copy_data(const uint8_t *data, size_t len, void *ud)
{
    pq_cmd_t *cmd = ud;
    PGconn *conn = cmd->conn;
    pq_copy_chunk_t *c = malloc(sizeof *c);
    char *d = malloc(len + 1);
    if (!c || !d || len > INT32_MAX) {
        free(c);
        free(d);
        return PGW_ENOMEM;
    }
    memcpy(d, data, len);
    d[len] = 0;
    c->data = d;
    c->len = (int)len;
    c->notice = NULL;
    c->next = NULL;
    copy_out_append(conn, c);
    conn->copy_last_at = messages_now(conn);
    conn->copy_out_bytes += len;
    if (conn->copy_out_bytes > COPY_OUT_MAX) pgw_conn_pause_reading(conn->conn);
    pq__conn_wake(conn);
    return 0;
}

/* ----------------------------------------------------------- COPY FROM */

static void copy_in_wake(PGconn *conn)
{
    if (conn->copy_in_paused) {
        conn->copy_in_paused = 0;
        pgw_conn_copy_resume(conn->conn);
    }
}

/* COPY BOTH: the bytes go out as one CopyData, as libpq sends them. */
static int both_put(PGconn *conn, const char *buffer, int nbytes)
{
    if (nbytes < 0 || (nbytes > 0 && !buffer)) {
        pq__conn_set_error(conn, "invalid COPY data\n");
        return -1;
    }
    int rc = pgw_session_copy_both_send(pgw_conn_session(conn->conn), buffer, (size_t)nbytes);
    /* The server has ended the stream (its CopyDone, answered, or an error)
     * and the caller has not read that yet: libpq would send the bytes and
     * the server ignore them, as it ignores CopyData outside a COPY. */
    if (rc == PGW_EBUSY) return 1;
    if (rc < 0) {
        pq__conn_append_error(conn, "%s\n", pgw_strerror(rc));
        return -1;
    }
    pq__conn_flush(conn); /* nonblocking: what the socket takes now */
    return conn->status == CONNECTION_OK ? 1 : -1;
}

int PQputCopyData(PGconn *conn, const char *buffer, int nbytes)
{
    if (!conn) return -1;
    if (conn->copy == PQ_COPY_BOTH && conn->status == CONNECTION_OK)
        return both_put(conn, buffer, nbytes);
    if (conn->copy != PQ_COPY_IN) {
        pq__conn_append_error(conn, "no COPY in progress\n");
        return -1;
    }
    if (conn->status != CONNECTION_OK) return -1;
    if (nbytes < 0 || (nbytes > 0 && !buffer)) {
        pq__conn_set_error(conn, "invalid COPY data\n");
        return -1;
    }
    if (nbytes > 0 && pq__str_append(&conn->copy_in, buffer, (size_t)nbytes) < 0) {
        pq__conn_set_error(conn, "out of memory\n");
        return -1;
    }
    if (conn->copy_in.len >= COPY_IN_CHUNK) {
        copy_in_wake(conn);
        if (conn->nonblocking) {
            uv_run(conn->loop, UV_RUN_NOWAIT);
        } else {
            while (conn->copy_in.len >= COPY_IN_CHUNK && conn->status == CONNECTION_OK &&
                   conn->copy == PQ_COPY_IN)
                if (uv_run(conn->loop, UV_RUN_ONCE) == 0) break;
        }
    }
    return conn->status == CONNECTION_OK ? 1 : -1;
}

/* COPY BOTH: our CopyDone (an error message has no place in it: the
 * walsender takes none); the server's data may still come, as COPY TO's. */
static int both_end(PGconn *conn)
{
    pgw_session_t *s = pgw_conn_session(conn->conn);
    if (conn->copy == PQ_COPY_BOTH && pgw_session_copy_both_active(s)) {
        int rc = pgw_session_copy_both_end(s);
        if (rc < 0) {
            pq__conn_append_error(conn, "%s\n", pgw_strerror(rc));
            return -1;
        }
    }
    conn->copy = conn->copy == PQ_COPY_BOTH ? PQ_COPY_OUT : PQ_COPY_NONE;
    pq__conn_flush(conn); /* nonblocking: what the socket takes now */
    return conn->status == CONNECTION_OK ? 1 : -1;
}

int PQputCopyEnd(PGconn *conn, const char *errormsg)
{
    if (!conn) return -1;
    if ((conn->copy == PQ_COPY_BOTH || conn->copy == PQ_COPY_BOTH_IN) &&
        conn->status == CONNECTION_OK)
        return both_end(conn);
    if (conn->copy != PQ_COPY_IN) {
        pq__conn_append_error(conn, "no COPY in progress\n");
        return -1;
    }
    if (errormsg) {
        conn->copy_in_errmsg = strdup(errormsg);
        if (!conn->copy_in_errmsg) return -1;
    }
    conn->copy_in_end = 1;
    conn->copy = PQ_COPY_NONE;
    copy_in_wake(conn);
    uv_run(conn->loop, UV_RUN_NOWAIT);
    return conn->status == CONNECTION_OK ? 1 : -1;
}

int PQputline(PGconn *conn, const char *string)
{
    if (!string) return EOF;
    return PQputnbytes(conn, string, (int)strlen(string));
}

int PQputnbytes(PGconn *conn, const char *buffer, int nbytes)
{
    return PQputCopyData(conn, buffer, nbytes) > 0 ? 0 : EOF;
}

/* ------------------------------------------------------------- COPY TO */

/* The COPY TO command is over once its rows are all taken. */
static int copy_out_over(PGconn *conn)
{
    pq__copy_out_notices(conn);
    return !conn->copy_out_head && (!conn->copy_cmd || conn->copy_cmd->done || conn->copy_ended);
}

static pq_copy_chunk_t *copy_out_pop(PGconn *conn)
{
    pq_copy_chunk_t *c = conn->copy_out_head;
    if (!c) return NULL;
    conn->copy_out_head = c->next;
    if (!conn->copy_out_head) conn->copy_out_tail = NULL;
    conn->copy_out_bytes -= (size_t)c->len;
    if (pgw_conn_reading_paused(conn->conn) && conn->copy_out_bytes < COPY_OUT_MAX / 2 &&
        !conn->copy_ended)
        pgw_conn_resume_reading(conn->conn);
    return c;
}

/* Wait for a row or the end; 0 when neither came (async), or when the
 * loop has nothing left to wait for. A turn that queued rows may end with
 * reading paused (COPY_OUT_MAX, or the COPY's end), so no handle active:
 * what it brought is looked at before that counts. */
static int copy_out_wait(PGconn *conn, int async)
{
    pq__copy_out_notices(conn); /* those before the next row */
    while (!conn->copy_out_head && !copy_out_over(conn)) {
        if (conn->status != CONNECTION_OK) return 0;
        if (pgw_conn_reading_paused(conn->conn)) pgw_conn_resume_reading(conn->conn);
        int active = uv_run(conn->loop, async ? UV_RUN_NOWAIT : UV_RUN_ONCE);
        pq__copy_out_notices(conn);
        if (async || conn->copy_out_head || copy_out_over(conn)) break;
        if (!active) return 0;
    }
    return conn->copy_out_head || copy_out_over(conn);
}

int PQgetCopyData(PGconn *conn, char **buffer, int async)
{
    if (buffer) *buffer = NULL;
    if (!conn || !buffer) return -2;
    if (conn->copy != PQ_COPY_OUT && conn->copy != PQ_COPY_BOTH) {
        pq__conn_append_error(conn, "no COPY in progress\n");
        return -2;
    }
    if (!copy_out_wait(conn, async)) return conn->status == CONNECTION_OK ? 0 : -2;
    pq_copy_chunk_t *c = copy_out_pop(conn);
    if (!c) {
        /* The server ended a COPY BOTH: ours is left to PQputCopyEnd. */
        conn->copy = conn->copy == PQ_COPY_BOTH ? PQ_COPY_BOTH_IN : PQ_COPY_NONE;
        /* What came behind a simple query's COPY waited, read but not
         * parsed, for this -1 (pq__copy_end); libpq's PQisBusy parses it
         * from its buffer, where a program's poll loop would wait on a
         * socket that has nothing more to say. */
        if (conn->copy == PQ_COPY_NONE && pgw_conn_reading_paused(conn->conn)) {
            pgw_conn_resume_reading(conn->conn);
            pq__conn_run_ready(conn);
        }
        return -1;
    }
    int len = c->len;
    *buffer = c->data;
    free(c);
    return len;
}

int PQgetlineAsync(PGconn *conn, char *buffer, int bufsize)
{
    if (!conn || conn->copy != PQ_COPY_OUT) return -1;
    if (!buffer || bufsize <= 0) return 0;
    if (!copy_out_wait(conn, 1)) return 0;
    pq_copy_chunk_t *c = conn->copy_out_head;
    if (!c) {
        conn->copy = PQ_COPY_NONE;
        return -1;
    }
    size_t left = (size_t)c->len - conn->copy_line_off;
    size_t n = left < (size_t)bufsize ? left : (size_t)bufsize;
    memcpy(buffer, c->data + conn->copy_line_off, n);
    conn->copy_line_off += n;
    if (conn->copy_line_off >= (size_t)c->len) {
        conn->copy_line_off = 0;
        c = copy_out_pop(conn);
        free(c->data);
        free(c);
    }
    return (int)n;
}

int PQgetline(PGconn *conn, char *string, int length)
{
    if (!string || length <= 0) return EOF;
    *string = 0;
    if (!conn || conn->copy != PQ_COPY_OUT || length < 3) {
        if (conn) pq__conn_set_error(conn, "PQgetline: not doing text COPY OUT\n");
        return EOF;
    }
    int status;
    while ((status = PQgetlineAsync(conn, string, length - 1)) == 0) {
        if (!copy_out_wait(conn, 0)) {
            *string = 0;
            return EOF;
        }
    }
    if (status < 0) {
        strcpy(string, "\\.");
        return 0;
    }
    if (string[status - 1] == '\n') {
        string[status - 1] = 0;
        return 0;
    }
    string[status] = 0;
    return 1;
}

int PQendcopy(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->copy == PQ_COPY_IN) {
        if (PQputCopyEnd(conn, NULL) < 0) return 1;
    } else if (conn->copy == PQ_COPY_OUT) {
        char *buf;
        while (PQgetCopyData(conn, &buf, 0) > 0)
            PQfreemem(buf);
    } else {
        pq__conn_append_error(conn, "no COPY in progress\n");
        return 1;
    }
    PGresult *res = PQgetResult(conn);
    if (res && PQresultStatus(res) == PGRES_COMMAND_OK) {
        PQclear(res);
        return 0;
    }
    /* libpq reports the failure as a notice too */
    if (conn->errmsg.len && conn->hooks.receiver) {
        PGresult *n = pq__result_error(conn, PGRES_NONFATAL_ERROR, conn->errmsg.data);
        if (n) {
            conn->hooks.receiver(conn->hooks.receiver_arg, n);
            PQclear(n);
        }
    }
    PQclear(res);
    return 1;
}
