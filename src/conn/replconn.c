/*
 * The connection's side of a replication stream (replication.h): the
 * START_REPLICATION request submitted, and a standby status update every
 * status_interval_ms while it streams, as pg_recvlogical sends one every
 * --status-interval (the server's wal_sender_timeout ends a stream that
 * stays silent). The timer stops when the request completes.
 */
#define _DEFAULT_SOURCE
#include "conn/conn_internal.h"
#include "pgwire/replication.h"
#include "repl/stream_internal.h"
#include "util/internal.h"

typedef struct status_timer {
    uv_timer_t t;
    pgw_repl_stream_t *st; /* NULL once stopped */
    const pgw_allocator_t *alloc;
} status_timer_t;

static void on_timer_closed(uv_handle_t *h)
{
    status_timer_t *tm = h->data;
    pgw__free(tm->alloc, tm);
}

static void stop_timer(void *arg)
{
    status_timer_t *tm = arg;
    tm->st = NULL;
    uv_close((uv_handle_t *)&tm->t, on_timer_closed);
}

static void on_status_due(uv_timer_t *t)
{
    status_timer_t *tm = t->data;
    /* Not streaming yet (or any more): nothing to report. */
    if (tm->st && pgw_repl_stream_active(tm->st)) (void)pgw_repl_stream_send_status(tm->st, false);
}

static int start_timer(pgw_conn_t *conn, pgw_repl_stream_t *st, uint32_t interval_ms)
{
    const pgw_allocator_t *alloc = pgw__repl_stream_config(st)->alloc;
    status_timer_t *tm = pgw__calloc(alloc, 1, sizeof *tm);
    if (!tm) return PGW_ENOMEM;
    tm->st = st;
    tm->alloc = alloc;
    uv_timer_init(pgw_conn_loop(conn), &tm->t);
    tm->t.data = tm;
    uv_timer_start(&tm->t, on_status_due, interval_ms, interval_ms);
    pgw__repl_stream_set_driver(st, stop_timer, tm);
    return 0;
}

int pgw_conn_repl_start(pgw_conn_t *conn, pgw_repl_stream_t *st, const char *sql)
{
    if (!conn || !st || !sql) return PGW_EINVAL;
    pgw_session_t *s = pgw_conn_session(conn);
    if (!s) return PGW_ECLOSED;
    pgw_request_t req;
    int rc = pgw_repl_stream_request(st, s, sql, &req);
    if (rc < 0) return rc;
    uint32_t interval = pgw__repl_stream_config(st)->status_interval_ms;
    if (interval) {
        rc = start_timer(conn, st, interval);
        if (rc < 0) return rc;
    }
    rc = pgw_conn_submit(conn, &req);
    if (rc < 0) pgw__repl_stream_abandon(st);
    return rc;
}
