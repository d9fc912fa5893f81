/*
 * LISTEN/NOTIFY for the blocking client: a bounded queue fed by the
 * connection's notification callback during every call, and a wait that
 * runs the client's loop until a notification arrives or a timer fires.
 * Written against the public API (conn.h, listen.h and libuv).
 */
#define _POSIX_C_SOURCE 200809L
#include "client/client_internal.h"
#include "client/client_notify.h"
#include "pgwire/listen.h"

#include <stdint.h>
#include <string.h>
#include <uv.h>

typedef struct entry {
    struct entry *next;
    int32_t pid;
    uint64_t missed;
    size_t channel_len, payload_len;
    char data[]; /* channel NUL payload NUL */
} entry_t;

struct pgw__notify_queue {
    const pgw_allocator_t *alloc;
    pgw_notification_cb user_cb; /* the config's on_notification */
    void *user_ud;
    entry_t *head, **tail;
    size_t n, max;
    uint64_t missed; /* dropped since the head was dropped last, for the next head */
    entry_t *last;   /* what the last wait returned: freed by the next */
};

static void queue_drop_oldest(pgw__notify_queue_t *q)
{
    entry_t *e = q->head;
    if (!e) return;
    q->head = e->next;
    if (!q->head) q->tail = &q->head;
    q->n--;
    uint64_t missed = e->missed + 1;
    if (q->head)
        q->head->missed += missed;
    else
        q->missed += missed; /* carried to the next notification queued */
    q->alloc->free(e, q->alloc->ud);
}

static void queue_push(pgw__notify_queue_t *q, int32_t pid, pgw_str_t channel, pgw_str_t payload)
{
    size_t cl = (size_t)channel.len, pl = (size_t)payload.len;
    entry_t *e = q->alloc->malloc(sizeof *e + cl + pl + 2, q->alloc->ud);
    if (!e) {
        q->missed++; /* out of memory: counted like a drop */
        return;
    }
    e->next = NULL;
    e->pid = pid;
    e->missed = q->missed;
    q->missed = 0;
    e->channel_len = cl;
    e->payload_len = pl;
    if (cl) memcpy(e->data, channel.p, cl);
    e->data[cl] = '\0';
    if (pl) memcpy(e->data + cl + 1, payload.p, pl);
    e->data[cl + 1 + pl] = '\0';
    *q->tail = e;
    q->tail = &e->next;
    q->n++;
}

static void on_notification(pgw_conn_t *conn, int32_t pid, pgw_str_t channel, pgw_str_t payload,
                            void *ud)
{
    pgw__notify_queue_t *q = ud;
    if (q->user_cb) q->user_cb(conn, pid, channel, payload, q->user_ud);
    if (!q->max) return;
    if (q->n >= q->max) queue_drop_oldest(q);
    queue_push(q, pid, channel, payload);
}

int pgw__notify_queue_new(pgw__notify_queue_t **out, const pgw_allocator_t *alloc, pgw_conn_t *conn,
                          const pgw_conn_config_t *cfg)
{
    pgw__notify_queue_t *q = alloc->malloc(sizeof *q, alloc->ud);
    if (!q) return PGW_ENOMEM;
    memset(q, 0, sizeof *q);
    q->alloc = alloc;
    q->tail = &q->head;
    q->max = PGW_CLIENT_NOTIFY_QUEUE;
    if (cfg) {
        q->user_cb = cfg->on_notification;
        q->user_ud = cfg->ud;
    }
    pgw_conn_set_notification_cb(conn, on_notification, q);
    *out = q;
    return 0;
}

void pgw__notify_queue_free(pgw__notify_queue_t *q)
{
    if (!q) return;
    while (q->head)
        queue_drop_oldest(q);
    if (q->last) q->alloc->free(q->last, q->alloc->ud);
    q->alloc->free(q, q->alloc->ud);
}

/* ------------------------------------------------------------------ wait */

typedef struct wait_timer {
    uv_timer_t t;
    int fired;
    int closed;
} wait_timer_t;

static void on_wait_timer(uv_timer_t *t)
{
    ((wait_timer_t *)t->data)->fired = 1;
}

static void on_wait_timer_closed(uv_handle_t *h)
{
    ((wait_timer_t *)h->data)->closed = 1;
}

void pgw__client_run_until(pgw_client_t *c, int timeout_ms, bool (*done)(void *arg), void *arg)
{
    if (timeout_ms == 0) {
        pgw__client_turn(c, UV_RUN_NOWAIT);
        return;
    }
    wait_timer_t w = {.fired = 0, .closed = 0};
    uv_timer_init(pgw_conn_loop(pgw_client_conn(c)), &w.t);
    w.t.data = &w;
    if (timeout_ms > 0) uv_timer_start(&w.t, on_wait_timer, (uint64_t)timeout_ms, 0);
    while (!done(arg) && !w.fired)
        if (pgw__client_turn(c, UV_RUN_ONCE) == 0) break; /* nothing left that could deliver */
    uv_close((uv_handle_t *)&w.t, on_wait_timer_closed);
    while (!w.closed)
        pgw__client_turn(c, UV_RUN_NOWAIT);
}

typedef struct notify_wait {
    pgw_client_t *c;
    pgw__notify_queue_t *q;
} notify_wait_t;

static bool notification_or_loss(void *arg)
{
    notify_wait_t *w = arg;
    return w->q->head || !pgw_conn_is_ready(pgw_client_conn(w->c));
}

/* Run the loop until something is queued, the timer fired or the
 * connection broke. */
static void run_for_notification(pgw_client_t *c, pgw__notify_queue_t *q, int timeout_ms)
{
    notify_wait_t w = {c, q};
    pgw__client_run_until(c, timeout_ms, notification_or_loss, &w);
}

static int wait_notification(pgw_client_t *c, int timeout_ms, pgw_notification_t *out)
{
    pgw__notify_queue_t *q = pgw__client_notify_queue(c);
    if (q->last) {
        q->alloc->free(q->last, q->alloc->ud);
        q->last = NULL;
    }
    pgw_conn_t *conn = pgw_client_conn(c);
    if (!q->head && pgw_conn_is_ready(conn)) run_for_notification(c, q, timeout_ms);
    entry_t *e = q->head;
    if (!e) return pgw_conn_is_ready(conn) ? PGW_ETIMEDOUT : PGW_ECONNLOST;
    q->head = e->next;
    if (!q->head) q->tail = &q->head;
    q->n--;
    q->last = e;
    out->pid = e->pid;
    out->channel = e->data;
    out->channel_len = e->channel_len;
    out->payload = e->data + e->channel_len + 1;
    out->payload_len = e->payload_len;
    out->missed = e->missed;
    return 0;
}

/* The calls hold the client's loop (a pooled client's queue is filled by
 * whichever thread runs the pool's loop). */
int pgw_client_wait_notification(pgw_client_t *c, int timeout_ms, pgw_notification_t *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!c || !out) return PGW_EINVAL;
    pgw__client_enter(c);
    int rc = wait_notification(c, timeout_ms, out);
    pgw__client_leave(c);
    return rc;
}

int pgw_client_set_notification_limit(pgw_client_t *c, size_t max)
{
    if (!c) return PGW_EINVAL;
    pgw__client_enter(c);
    pgw__notify_queue_t *q = pgw__client_notify_queue(c);
    q->max = max;
    while (q->n > max)
        queue_drop_oldest(q);
    pgw__client_leave(c);
    return 0;
}

size_t pgw_client_notifications_queued(const pgw_client_t *c)
{
    if (!c) return 0;
    pgw_client_t *m = (pgw_client_t *)c; /* holding its loop changes nothing of it */
    pgw__client_enter(m);
    size_t n = pgw__client_notify_queue(c)->n;
    pgw__client_leave(m);
    return n;
}

/* --------------------------------------------------------------- LISTEN */

static int client_listen_sql(pgw_client_t *c, const char *channel, int unlisten)
{
    if (!c) return PGW_EINVAL;
    const pgw_allocator_t *a = pgw__client_notify_queue(c)->alloc;
    char *sql;
    int rc = pgw_listen_sql(a, channel, unlisten, &sql);
    if (rc < 0) return rc;
    rc = pgw_client_exec(c, sql, NULL);
    pgw_escape_free(a, sql);
    return rc;
}

int pgw_client_listen(pgw_client_t *c, const char *channel)
{
    return client_listen_sql(c, channel, 0);
}

int pgw_client_unlisten(pgw_client_t *c, const char *channel)
{
    return client_listen_sql(c, channel, 1);
}
