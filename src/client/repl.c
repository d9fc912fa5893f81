/*
 * The blocking form of a replication stream (replication.h): the stream
 * runs on the client's connection (pgw_conn_repl_start, status updates on
 * its timer) and each XLogData is copied into a queue that
 * pgw_client_repl_next hands out one at a time. The queue's buffer is
 * reused once emptied, so a steady stream allocates nothing per message;
 * past QUEUE_PAUSE bytes the connection stops reading until the caller
 * has taken them.
 */
#define _POSIX_C_SOURCE 200809L
#include "client/client_internal.h"
#include "pgwire/replication.h"
#include "util/internal.h"

#include <string.h>

#define RECORD_HEADER 28 /* wal_start, wal_end, send_time, payload length */
#define QUEUE_PAUSE   (8u * 1024u * 1024u)

struct pgw_client_repl {
    pgw_client_t *c;
    pgw_repl_stream_t *st;
    pgw_buf_t queue; /* records: RECORD_HEADER then the payload */
    size_t off;      /* the next record */
    bool paused;     /* the connection's reading, for the queue */
    bool ended;      /* on_end fired */
    int status;      /* its status */
    pgw_result_t *res;
    int error; /* a failure to queue (PGW_ENOMEM) */
};

static int queue_xlog(const pgw_repl_xlog_t *x, void *ud)
{
    pgw_client_repl_t *r = ud;
    uint8_t h[RECORD_HEADER];
    pgw__put64(h, x->wal_start);
    pgw__put64(h + 8, x->wal_end);
    pgw__put64(h + 16, (uint64_t)x->send_time);
    pgw__put32(h + 24, (uint32_t)x->len);
    if (pgw_buf_reserve(&r->queue, sizeof h + x->len) < 0) return r->error = PGW_ENOMEM;
    pgw_buf_append(&r->queue, h, sizeof h);
    pgw_buf_append(&r->queue, x->data, x->len);
    if (!r->paused && r->queue.len - r->off >= QUEUE_PAUSE) {
        r->paused = true;
        pgw_conn_pause_reading(pgw_client_conn(r->c));
    }
    return 0;
}

static void stream_ended(int status, pgw_result_t *res, void *ud)
{
    pgw_client_repl_t *r = ud;
    r->ended = true;
    r->status = status;
    r->res = res;
}

int pgw_client_repl_start(pgw_client_t *c, const char *sql, uint32_t status_interval_ms,
                          pgw_client_repl_t **out)
{
    if (out) *out = NULL;
    if (!c || !sql || !out) return PGW_EINVAL;
    const pgw_allocator_t *alloc = pgw__client_alloc(c);
    pgw_client_repl_t *r = pgw__calloc(alloc, 1, sizeof *r);
    if (!r) return PGW_ENOMEM;
    r->c = c;
    pgw_buf_init(&r->queue, alloc);
    pgw_repl_stream_config_t cfg;
    pgw_repl_stream_config_init(&cfg);
    cfg.on_xlog = queue_xlog;
    cfg.on_end = stream_ended;
    cfg.ud = r;
    cfg.status_interval_ms = status_interval_ms;
    cfg.alloc = alloc;
    int rc = pgw_repl_stream_new(&cfg, &r->st);
    if (rc == 0) {
        pgw__client_enter(c);
        rc = pgw_conn_repl_start(pgw_client_conn(c), r->st, sql);
        pgw__client_leave(c);
    }
    if (rc < 0) {
        pgw_repl_stream_free(r->st);
        pgw__free(alloc, r);
        return rc;
    }
    *out = r;
    return 0;
}

static bool have_record(const pgw_client_repl_t *r)
{
    return r->off < r->queue.len;
}

static bool record_or_end(void *arg)
{
    const pgw_client_repl_t *r = arg;
    return have_record(r) || r->ended;
}

/* The previous record is taken: reuse the queue's memory once it is empty,
 * and read again once the caller has caught up. */
static void queue_taken(pgw_client_repl_t *r)
{
    if (r->off == r->queue.len) r->off = r->queue.len = 0;
    if (r->paused && r->queue.len - r->off < QUEUE_PAUSE / 2) {
        r->paused = false;
        pgw_conn_resume_reading(pgw_client_conn(r->c));
    }
}

static int next_record(pgw_client_repl_t *r, int timeout_ms, pgw_repl_xlog_t *out)
{
    queue_taken(r);
    if (!have_record(r) && !r->ended && !r->error)
        pgw__client_run_until(r->c, timeout_ms, record_or_end, r);
    if (r->error) return r->error;
    if (!have_record(r)) {
        if (!r->ended) return PGW_ETIMEDOUT;
        return r->status < 0 ? r->status : PGW_EDONE;
    }
    const uint8_t *p = r->queue.data + r->off;
    out->wal_start = pgw__get64(p);
    out->wal_end = pgw__get64(p + 8);
    out->send_time = (int64_t)pgw__get64(p + 16);
    out->len = pgw__get32(p + 24);
    out->data = p + RECORD_HEADER;
    r->off += RECORD_HEADER + out->len;
    return 0;
}

int pgw_client_repl_next(pgw_client_repl_t *r, int timeout_ms, pgw_repl_xlog_t *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!r || !out) return PGW_EINVAL;
    pgw__client_enter(r->c);
    int rc = next_record(r, timeout_ms, out);
    pgw__client_leave(r->c);
    return rc;
}

int pgw_client_repl_confirm(pgw_client_repl_t *r, uint64_t lsn)
{
    if (!r) return PGW_EINVAL;
    pgw__client_enter(r->c);
    int rc = pgw_repl_stream_confirm(r->st, lsn);
    /* Reported at once: the server learns of it without waiting for the
     * status interval. */
    if (rc == 0 && pgw_repl_stream_active(r->st)) rc = pgw_repl_stream_send_status(r->st, false);
    if (rc == 0) pgw__client_turn(r->c, UV_RUN_NOWAIT);
    pgw__client_leave(r->c);
    return rc == PGW_EBUSY ? 0 : rc;
}

static bool streaming_or_end(void *arg)
{
    const pgw_client_repl_t *r = arg;
    return pgw_repl_stream_active(r->st) || r->ended || r->error;
}

int pgw_client_repl_feedback(pgw_client_repl_t *r, uint64_t xmin, uint64_t catalog_xmin)
{
    if (!r) return PGW_EINVAL;
    pgw__client_enter(r->c);
    /* Started but not yet streaming: what arrives meanwhile is queued. */
    if (!streaming_or_end(r)) pgw__client_run_until(r->c, -1, streaming_or_end, r);
    int rc = pgw_repl_stream_send_feedback(r->st, xmin, catalog_xmin);
    if (rc == 0) pgw__client_turn(r->c, UV_RUN_NOWAIT);
    pgw__client_leave(r->c);
    return rc;
}

int pgw_client_repl_stop(pgw_client_repl_t *r)
{
    if (!r) return PGW_EINVAL;
    pgw__client_enter(r->c);
    if (pgw_repl_stream_active(r->st)) (void)pgw_repl_stream_stop(r->st);
    /* What the server sends until its CopyDone is dropped. */
    while (!r->ended) {
        r->off = r->queue.len = 0;
        queue_taken(r);
        if (pgw__client_turn(r->c, UV_RUN_ONCE) == 0 && !r->ended) break;
    }
    r->off = r->queue.len = 0;
    pgw__client_leave(r->c);
    if (!r->ended) return PGW_ECONNLOST;
    return r->status;
}

const pgw_result_t *pgw_client_repl_result(const pgw_client_repl_t *r)
{
    return r ? r->res : NULL;
}

uint64_t pgw_client_repl_confirmed(const pgw_client_repl_t *r)
{
    return r ? pgw_repl_stream_confirmed(r->st) : 0;
}

void pgw_client_repl_free(pgw_client_repl_t *r)
{
    if (!r) return;
    const pgw_allocator_t *alloc = pgw__client_alloc(r->c);
    pgw__client_enter(r->c);
    if (!r->ended) {
        /* Still streaming: the request's callbacks would outlive r. */
        (void)pgw_client_repl_stop(r);
    }
    pgw_repl_stream_free(r->st);
    pgw__client_turn(r->c, UV_RUN_NOWAIT); /* the status timer's close */
    pgw__client_leave(r->c);
    pgw_result_free(r->res);
    pgw_buf_free(&r->queue);
    pgw__free(alloc, r);
}
