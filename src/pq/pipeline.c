/*
 * Pipeline mode over the session's open groups: the first request after a
 * sync goes out as a batch ending with a FLUSH, which leaves its sync group
 * open; the requests after it join the group; PQpipelineSync sends the
 * group's Sync. After an error the session ends the group itself, so the
 * requests the program sends before its own sync are aborted here, as the
 * server would skip them (PGRES_PIPELINE_ABORTED).
 */
#define _GNU_SOURCE
#include "pq/conn_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PGpipelineStatus PQpipelineStatus(const PGconn *conn)
{
    if (!conn || conn->pipeline == PQ_PIPELINE_OFF) return PQ_PIPELINE_OFF;
    return conn->shown_aborted ? PQ_PIPELINE_ABORTED : PQ_PIPELINE_ON;
}

int PQenterPipelineMode(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->pipeline != PQ_PIPELINE_OFF) return 1;
    if (conn->head && !pq__head_over(conn)) {
        pq__conn_append_error(conn, "cannot enter pipeline mode, connection not idle\n");
        return 0;
    }
    if (conn->copy != PQ_COPY_NONE) {
        pq__conn_append_error(conn, "cannot enter pipeline mode, connection not idle\n");
        return 0;
    }
    pq__cmds_free_all(conn);
    conn->pipeline = PQ_PIPELINE_ON;
    conn->seg = 1;
    conn->aborted_seg = 0;
    conn->shown_aborted = 0;
    return 1;
}

int PQexitPipelineMode(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->pipeline == PQ_PIPELINE_OFF) return 1;
    pq_cmd_t *cmd = conn->head;
    if (cmd && cmd->done && cmd->pos >= cmd->nres && !cmd->next && cmd->kind != PQ_CMD_SYNC) {
        /* only its NULL is left: libpq is idle there */
        pq__cmds_free_all(conn);
        cmd = NULL;
    }
    if (cmd) {
        /* libpq has parsed nothing of a command it has not started to
         * hand out: it is still busy with it */
        if (cmd->pos == 0 || (!cmd->done && cmd->pos >= cmd->nres))
            pq__conn_append_error(conn, "cannot exit pipeline mode while busy\n");
        else
            pq__conn_append_error(conn, "cannot exit pipeline mode with uncollected results\n");
        return 0;
    }
    conn->pipeline = PQ_PIPELINE_OFF;
    conn->aborted_seg = 0;
    pq__str_reset(&conn->errmsg);
    return 1;
}

static int send_sync(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->pipeline == PQ_PIPELINE_OFF) {
        pq__conn_append_error(conn, "cannot send pipeline when not in pipeline mode\n");
        return 0;
    }
    if (conn->status != CONNECTION_OK) {
        pq__conn_set_error(conn, "no connection to the server\n");
        return 0;
    }
    pq_cmd_t *cmd = pq__cmd_new(conn, PQ_CMD_SYNC);
    if (!cmd) return 0;
    int ok;
    if (conn->npend && !conn->broken) {
        /* the pipeline's requests and their Sync: one batch */
        ok = pq__pipeline_push(conn, cmd, 0);
        if (!ok) pq__cmd_free(cmd);
    } else {
        pgw_request_t req = PGW_SYNC(NULL, NULL);
        ok = pq__submit(conn, cmd, &req);
    }
    if (ok) conn->seg++;
    return ok;
}

int PQpipelineSync(PGconn *conn)
{
    return send_sync(conn);
}

int PQsendPipelineSync(PGconn *conn)
{
    return send_sync(conn);
}

/* The requests waiting go out with a protocol Flush. With none waiting, the
 * Flush follows those sent before (PQflush sends them without one); with
 * none in flight either, the session refuses it and there is nothing for
 * the server to answer. */
int PQsendFlushRequest(PGconn *conn)
{
    if (!conn) return 0;
    if (conn->status != CONNECTION_OK) {
        pq__conn_set_error(conn, "no connection to the server\n");
        return 0;
    }
    if (conn->npend) {
        pq__pipeline_push(conn, NULL, 1);
        return 1;
    }
    pgw_request_t flush = PGW_FLUSH(pq__ignore_result, NULL);
    if (pgw_conn_submit(conn->conn, &flush) == 0) pq__conn_flush(conn);
    return 1;
}

/* ------------------------------------------------- deferred requests */

/* The copies of the deferred requests' strings, parameters and arrays,
 * bump-allocated in chunks; the newest chunk (the largest) is kept for the
 * next batch unless it is big. */
typedef struct pq_chunk {
    struct pq_chunk *next;
    size_t cap, used;
    max_align_t data[];
} pq_chunk_t;

enum { CHUNK_MIN = 4096, CHUNK_KEEP = 256 * 1024 };

/* The commands of one submitted batch, for its driver hook. */
typedef struct pq_batch {
    size_t n;
    pq_cmd_t *sync; /* the PQpipelineSync that ends it, or NULL (a FLUSH) */
    pq_cmd_t *cmds[];
} pq_batch_t;

static void *chunk_alloc(PGconn *conn, size_t size)
{
    const size_t align = sizeof(max_align_t);
    size = (size + align - 1) / align * align;
    pq_chunk_t *c = conn->pend_mem;
    if (!c || c->cap - c->used < size) {
        size_t cap = c ? c->cap * 2 : CHUNK_MIN;
        if (cap < size) cap = size;
        pq_chunk_t *n = malloc(sizeof *n + cap);
        if (!n) return NULL;
        n->next = c;
        n->cap = cap;
        n->used = 0;
        conn->pend_mem = c = n;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    return p;
}

/* Forget every copy; keep the newest chunk unless it is big. */
static void chunks_reset(PGconn *conn, int keep)
{
    pq_chunk_t *c = conn->pend_mem;
    if (c && keep && c->cap <= CHUNK_KEEP) {
        c->used = 0;
        pq_chunk_t *rest = c->next;
        c->next = NULL;
        c = rest;
    } else {
        conn->pend_mem = NULL;
    }
    while (c) {
        pq_chunk_t *next = c->next;
        free(c);
        c = next;
    }
}

/* s (n bytes with its NUL, 0 for NULL) copied to *at. */
static const char *copy_str(char **at, const char *s, size_t n)
{
    if (!s) return NULL;
    char *d = memcpy(*at, s, n);
    *at += n;
    return d;
}

/* The bytes of the copied parameters in params into the connection's
 * chunks, each measured once: a NUL-terminated string's copy carries its
 * length instead (unless longer than a length can say). 0 when out of
 * memory. */
static int copy_param_bytes(PGconn *conn, pgw_param_t *params, size_t nparams)
{
    for (size_t i = 0; i < nparams; i++) {
        pgw_param_t *p = &params[i];
        if (p->kind != PGW_PARAM_BYTES || !p->u.bytes.p) continue;
        size_t n = p->u.bytes.len >= 0 ? (size_t)p->u.bytes.len : strlen(p->u.bytes.p);
        if (p->u.bytes.len < 0 && n <= INT32_MAX) p->u.bytes.len = (int32_t)n;
        if (p->u.bytes.len < 0) n++; /* keeps its NUL */
        void *d = chunk_alloc(conn, n);
        if (!d) return 0;
        if (n) memcpy(d, p->u.bytes.p, n);
        p->u.bytes.p = d;
    }
    return 1;
}

/* Copy req into *out, with everything it points to (strings, parameters
 * and arrays) in the connection's chunks. */
static int req_copy(PGconn *conn, pgw_request_t *out, const pgw_request_t *req)
{
    size_t size = req->nparams * sizeof(pgw_param_t) + req->nparam_types * sizeof(uint32_t) +
                  req->nresult_formats * sizeof(int16_t);
    const char *strs[] = {req->sql, req->stmt, req->portal};
    size_t lens[3];
    for (size_t i = 0; i < 3; i++) {
        lens[i] = strs[i] ? strlen(strs[i]) + 1 : 0;
        size += lens[i];
    }
    char *at = chunk_alloc(conn, size);
    if (!at) return 0;
    *out = *req;
    pgw_param_t *params = NULL;
    if (req->nparams) {
        params = memcpy(at, req->params, req->nparams * sizeof *params);
        out->params = params;
        at += req->nparams * sizeof *params;
    }
    if (req->nparam_types) {
        out->param_types = memcpy(at, req->param_types, req->nparam_types * sizeof(uint32_t));
        at += req->nparam_types * sizeof(uint32_t);
    }
    if (req->nresult_formats) {
        out->result_formats =
            memcpy(at, req->result_formats, req->nresult_formats * sizeof(int16_t));
        at += req->nresult_formats * sizeof(int16_t);
    }
    out->sql = copy_str(&at, req->sql, lens[0]);
    out->stmt = copy_str(&at, req->stmt, lens[1]);
    out->portal = copy_str(&at, req->portal, lens[2]);
    return copy_param_bytes(conn, params, req->nparams);
}

int pq__pipeline_defer(PGconn *conn, pq_cmd_t *cmd, const pgw_request_t *req)
{
    if (conn->npend == conn->pend_cap) {
        size_t cap = conn->pend_cap ? conn->pend_cap * 2 : 16;
        pgw_request_t *r = realloc(conn->pend_reqs, (cap + 1) * sizeof *r);
        if (r) conn->pend_reqs = r;
        pq_cmd_t **c = r ? realloc(conn->pend_cmds, cap * sizeof *c) : NULL;
        if (!c) goto nomem;
        conn->pend_cmds = c;
        conn->pend_cap = cap;
    }
    if (!req_copy(conn, &conn->pend_reqs[conn->npend], req)) goto nomem;
    conn->pend_cmds[conn->npend++] = cmd;
    return 1;
nomem:
    pq__conn_append_error(conn, "out of memory\n");
    return 0;
}

static int batch_hook(void *ctx, size_t index, int status, pgw_result_t **res)
{
    pq_batch_t *b = ctx;
    if (index < b->n) return pq__cmd_hook(b->cmds[index], 0, status, res);
    if (index == PGW_DRIVER_BATCH && b->sync) {
        pq__cmd_hook(b->sync, 0, status, res);
    } else {
        pgw_result_free(*res);
    }
    if (index == PGW_DRIVER_BATCH) free(b);
    return PGW_DRIVER_TAKEN;
}

void pq__pipeline_drop(PGconn *conn)
{
    chunks_reset(conn, 0);
    free(conn->pend_reqs);
    free(conn->pend_cmds);
    conn->pend_reqs = NULL;
    conn->pend_cmds = NULL;
    conn->npend = conn->pend_cap = 0;
}

int pq__pipeline_stream(PGconn *conn, pq_cmd_t *cmd, pgw_row_cb on_row)
{
    for (size_t i = 0; i < conn->npend; i++)
        if (conn->pend_cmds[i] == cmd) {
            conn->pend_reqs[i].on_row = on_row;
            return 1;
        }
    return 0;
}

int pq__pipeline_push(PGconn *conn, pq_cmd_t *sync, int flush_message)
{
    size_t n = conn->npend, total = n + (sync ? 0 : 1);
    if (!n) return 1;
    pq_batch_t *b = malloc(sizeof *b + n * sizeof b->cmds[0]);
    int rc = b ? 0 : PGW_ENOMEM;
    if (rc == 0) {
        b->n = n;
        b->sync = sync;
        memcpy(b->cmds, conn->pend_cmds, n * sizeof b->cmds[0]);
        if (!sync) {
            /* The protocol Flush is PQsendFlushRequest's alone: PQflush
             * and the reading calls send the queries, and the server
             * answers at the Sync, as to libpq. */
            conn->pend_reqs[n] = PGW_FLUSH(pq__ignore_result, NULL);
            if (!flush_message) conn->pend_reqs[n].flags |= PGW_Q_NO_MESSAGE;
        }
        rc = pgw_conn_submit_batch_driven(conn->conn, conn->pend_reqs, total, 0, NULL, NULL,
                                          batch_hook, b);
    }
    if (rc < 0) {
        free(b);
        /* each command reports it, as libpq's would when the send failed */
        const char *why = pgw_session_refusal(pgw_conn_session(conn->conn));
        for (size_t i = 0; i < n; i++) {
            pq_cmd_t *cmd = conn->pend_cmds[i];
            cmd->done = 1;
            if (rc == PGW_ECLOSED) {
                conn->broken = 1;
                pq__cmd_push(cmd, pq__result_error(conn, PGRES_FATAL_ERROR, pq__failure_text(rc)));
                cmd->lost_at = cmd->nres;
            } else {
                char text[512];
                snprintf(text, sizeof text, "%s\n", why && *why ? why : pgw_strerror(rc));
                pq__cmd_push(cmd, pq__result_error(conn, PGRES_FATAL_ERROR, text));
            }
        }
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        conn->pend_cmds[i]->driven_ctx = b;
        conn->pend_cmds[i]->driven_index = i;
    }
    /* the session copied what it kept */
    conn->npend = 0;
    chunks_reset(conn, 1);
    if (rc < 0) return 0;
    if (sync) pq__cmd_enqueue(conn, sync);
    pq__conn_flush(conn);
    return 1;
}
