/*
 * The replication stream (replication.h): START_REPLICATION's CopyBoth
 * messages parsed and handed to the caller, standby status updates built
 * and written through the session (copyboth.c). Message layouts follow
 * the "Streaming Replication Protocol" of the PostgreSQL documentation and
 * the server's walsender.c (XLogSendLogical / WalSndKeepalive send them,
 * ProcessStandbyReplyMessage and ProcessStandbyHSFeedbackMessage read
 * ours).
 */
#define _POSIX_C_SOURCE 200809L
#include "repl/stream_internal.h"
#include "util/internal.h"

#include <string.h>
#include <time.h>

#define XLOG_HEADER    25 /* 'w', start, end, send time */
#define KEEPALIVE_LEN  18 /* 'k', end, send time, reply flag */
#define STATUS_LEN     34 /* 'r', write, flush, apply, client time, reply flag */
#define FEEDBACK_LEN   25 /* 'h', client time, xmin, its epoch, catalog_xmin, its epoch */
#define STATUS_DEFAULT 10000u

struct pgw_repl_stream {
    pgw_repl_stream_config_t cfg;
    pgw_session_t *s;
    uint64_t written;   /* highest wal_start received in this run */
    uint64_t confirmed; /* highest LSN the caller confirmed */
    bool running;       /* its request is pending */
    void (*driver_stop)(void *arg);
    void *driver_arg;
};

void pgw_repl_stream_config_init(pgw_repl_stream_config_t *cfg)
{
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->status_interval_ms = STATUS_DEFAULT;
}

int pgw_repl_stream_new(const pgw_repl_stream_config_t *cfg, pgw_repl_stream_t **out)
{
    if (out) *out = NULL;
    if (!out || !cfg || !cfg->on_xlog || cfg->size < sizeof *cfg) return PGW_EINVAL;
    pgw_repl_stream_t *st = pgw__calloc(cfg->alloc, 1, sizeof *st);
    if (!st) return PGW_ENOMEM;
    st->cfg = *cfg;
    *out = st;
    return 0;
}

static void driver_stop(pgw_repl_stream_t *st)
{
    void (*stop)(void *) = st->driver_stop;
    st->driver_stop = NULL;
    if (stop) stop(st->driver_arg);
}

void pgw_repl_stream_free(pgw_repl_stream_t *st)
{
    if (!st) return;
    driver_stop(st);
    pgw__free(st->cfg.alloc, st);
}

void pgw__repl_stream_set_driver(pgw_repl_stream_t *st, void (*stop)(void *arg), void *arg)
{
    st->driver_stop = stop;
    st->driver_arg = arg;
}

void pgw__repl_stream_abandon(pgw_repl_stream_t *st)
{
    st->running = false;
    driver_stop(st);
}

const pgw_repl_stream_config_t *pgw__repl_stream_config(const pgw_repl_stream_t *st)
{
    return &st->cfg;
}

/* ------------------------------------------------------------ status out */

static int64_t now_pg_usec(const pgw_repl_stream_t *st)
{
    if (st->cfg.now) return st->cfg.now(st->cfg.ud);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 - PGW_EPOCH_DIFF_USEC;
}

int pgw_repl_stream_active(const pgw_repl_stream_t *st)
{
    return st && st->running && pgw_session_copy_both_active(st->s);
}

int pgw_repl_stream_send_status(pgw_repl_stream_t *st, bool reply_requested)
{
    if (!st) return PGW_EINVAL;
    if (!pgw_repl_stream_active(st)) return PGW_EBUSY;
    uint8_t m[STATUS_LEN];
    /* write: what arrived; flush and apply: only what the caller
     * confirmed (the server takes flush as the slot's confirmed_flush_lsn;
     * 0 is InvalidXLogRecPtr, which it ignores). */
    uint64_t write = st->written > st->confirmed ? st->written : st->confirmed;
    m[0] = 'r';
    pgw__put64(m + 1, write);
    pgw__put64(m + 9, st->confirmed);
    pgw__put64(m + 17, st->confirmed);
    pgw__put64(m + 25, (uint64_t)now_pg_usec(st));
    m[33] = reply_requested ? 1 : 0;
    return pgw_session_copy_both_send(st->s, m, sizeof m);
}

int pgw_repl_stream_send_feedback(pgw_repl_stream_t *st, uint64_t xmin, uint64_t catalog_xmin)
{
    if (!st) return PGW_EINVAL;
    if (!pgw_repl_stream_active(st)) return PGW_EBUSY;
    /* A full transaction id goes as its 32-bit xid, then its epoch. */
    uint8_t m[FEEDBACK_LEN];
    m[0] = 'h';
    pgw__put64(m + 1, (uint64_t)now_pg_usec(st));
    pgw__put32(m + 9, (uint32_t)xmin);
    pgw__put32(m + 13, (uint32_t)(xmin >> 32));
    pgw__put32(m + 17, (uint32_t)catalog_xmin);
    pgw__put32(m + 21, (uint32_t)(catalog_xmin >> 32));
    return pgw_session_copy_both_send(st->s, m, sizeof m);
}

int pgw_repl_stream_stop(pgw_repl_stream_t *st)
{
    if (!st) return PGW_EINVAL;
    int rc = pgw_repl_stream_send_status(st, false);
    if (rc < 0) return rc;
    return pgw_session_copy_both_end(st->s);
}

int pgw_repl_stream_confirm(pgw_repl_stream_t *st, uint64_t lsn)
{
    if (!st) return PGW_EINVAL;
    if (lsn > st->confirmed) st->confirmed = lsn;
    return 0;
}

uint64_t pgw_repl_stream_confirmed(const pgw_repl_stream_t *st)
{
    return st ? st->confirmed : 0;
}

uint64_t pgw_repl_stream_written(const pgw_repl_stream_t *st)
{
    return st ? st->written : 0;
}

/* ------------------------------------------------------------- data in */

static int on_xlog(pgw_repl_stream_t *st, const uint8_t *p, size_t len)
{
    if (len < XLOG_HEADER) return PGW_EPROTO;
    pgw_repl_xlog_t x = {pgw__get64(p + 1), pgw__get64(p + 9), (int64_t)pgw__get64(p + 17),
                         p + XLOG_HEADER, len - XLOG_HEADER};
    if (x.wal_start > st->written) st->written = x.wal_start;
    return st->cfg.on_xlog(&x, st->cfg.ud);
}

static int on_keepalive(pgw_repl_stream_t *st, const uint8_t *p, size_t len)
{
    if (len != KEEPALIVE_LEN || p[17] > 1) return PGW_EPROTO;
    pgw_repl_keepalive_t k = {pgw__get64(p + 1), (int64_t)pgw__get64(p + 9), p[17] == 1};
    /* Answered at once: the server waits for it (wal_sender_timeout). */
    if (k.reply_requested) {
        int rc = pgw_repl_stream_send_status(st, false);
        if (rc < 0 && rc != PGW_EBUSY) return rc;
    }
    if (st->cfg.on_keepalive) st->cfg.on_keepalive(&k, st->cfg.ud);
    return 0;
}

static int stream_copy_data(const uint8_t *data, size_t len, void *ud)
{
    pgw_repl_stream_t *st = ud;
    if (len == 0) return PGW_EPROTO;
    switch (data[0]) {
    case 'w':
        return on_xlog(st, data, len);
    case 'k':
        return on_keepalive(st, data, len);
    default:
        return PGW_EPROTO;
    }
}

static void stream_on_result(int status, pgw_result_t *res, void *ud)
{
    pgw_repl_stream_t *st = ud;
    st->running = false;
    driver_stop(st);
    if (st->cfg.on_end)
        st->cfg.on_end(status, res, st->cfg.ud);
    else
        pgw_result_free(res);
}

int pgw_repl_stream_request(pgw_repl_stream_t *st, pgw_session_t *s, const char *sql,
                            pgw_request_t *req)
{
    if (!st || !s || !sql || !req) return PGW_EINVAL;
    if (st->running) return PGW_EBUSY;
    pgw_request_init(req, PGW_REQ_SIMPLE);
    req->sql = sql;
    req->on_result = stream_on_result;
    req->on_copy_data = stream_copy_data;
    req->ud = st;
    /* A stream lasts as long as the caller wants it: no deadline. */
    req->timeout_ms = PGW_TIMEOUT_NONE;
    st->s = s;
    st->written = 0;
    st->running = true;
    return 0;
}
