/*
 * The listener (pgwire/listen.h): a set of channels kept listened on by a
 * connection the listener owns and re-opens with backoff when it breaks.
 *
 * States: WAIT (no connection; the backoff timer runs), CONNECTING,
 * RELISTEN (connected, the LISTENs of the set in flight), READY. A loss
 * after the set was once listened marks a gap, reported once the set is
 * listened again on a new connection; notifications that arrive in
 * RELISTEN are held until the READY/GAP event has been delivered, so the
 * event comes before them.
 *
 * Every LISTEN/UNLISTEN in flight is an op: it names its channel (NULL
 * once the channel left the set) and the connection generation it was
 * sent on. Every op completes exactly once (the connection guarantees it,
 * also when it breaks or is closed), and is freed then.
 */
#define _POSIX_C_SOURCE 200809L
#include "pgwire/listen.h"
#include "pgwire/types_container.h"
#include "util/internal.h"

#include <string.h>
#include <uv.h>

enum { L_WAIT = 0, L_CONNECTING, L_RELISTEN, L_READY };

typedef struct chan {
    struct chan *next;
    char *name;
    char *sql; /* LISTEN "name", built once */
    pgw_listener_done_cb cb;
    void *cb_ud;
} chan_t;

typedef struct op {
    struct op *next;
    pgw_listener_t *l;
    chan_t *ch; /* LISTEN: its channel, NULL once the channel left the set */
    uint64_t gen;
    int unlisten;
    pgw_listener_done_cb cb; /* UNLISTEN's done */
    void *cb_ud;
} op_t;

/* A notification received while relistening, delivered after the event. */
typedef struct held {
    struct held *next;
    int32_t pid;
    size_t channel_len, payload_len;
    char data[]; /* channel, then payload */
} held_t;

struct pgw_listener {
    uv_loop_t *loop;
    const pgw_allocator_t *alloc;
    pgw_listener_config_t cfg;
    pgw_conn_config_t conn_cfg; /* the caller's: its hooks keep its ud */
    char *conninfo;
    int state;
    int closing;
    int ready_reported; /* READY was delivered: a later loss is a gap */
    int gap_pending;
    uint64_t gaps;
    uint64_t gen;           /* connections made */
    pgw__backoff_t backoff; /* reconnects, in ms */
    pgw_conn_t *conn;
    uv_timer_t timer;
    unsigned nopen; /* the timer and connections whose close has not finished */
    chan_t *chans;
    size_t nchans;
    size_t outstanding; /* LISTENs of this generation not completed (RELISTEN) */
    op_t *ops;
    held_t *held, **held_tail;
    void (*close_cb)(pgw_listener_t *l, void *ud);
    void *close_ud;
};

static void on_backoff_timer(uv_timer_t *t);

/* ------------------------------------------------------------- utilities */

static void listener_maybe_free(pgw_listener_t *l)
{
    if (!l->closing || l->nopen) return;
    if (l->close_cb) l->close_cb(l, l->close_ud);
    pgw__free(l->alloc, l->conninfo);
    pgw__free(l->alloc, l);
}

static void on_handle_closed(pgw_listener_t *l)
{
    l->nopen--;
    listener_maybe_free(l);
}

static void on_conn_closed(pgw_conn_t *conn, void *ud)
{
    on_handle_closed(ud);
}

static void on_timer_closed(uv_handle_t *h)
{
    on_handle_closed(h->data);
}

static void event(pgw_listener_t *l, pgw_listener_event_t ev, int status)
{
    if (!l->closing && l->cfg.on_event) l->cfg.on_event(l, ev, status, l->cfg.ud);
}

static void done(pgw_listener_t *l, pgw_listener_done_cb cb, void *ud, int status,
                 const pgw_error_t *err)
{
    if (cb) cb(l, status, err, ud);
}

static chan_t *chan_find(pgw_listener_t *l, const char *name, chan_t ***link)
{
    chan_t **pp = &l->chans;
    for (; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->name, name) == 0) break;
    if (link) *link = pp;
    return *pp;
}

static void chan_free(pgw_listener_t *l, chan_t *ch)
{
    pgw__free(l->alloc, ch->name);
    pgw_escape_free(l->alloc, ch->sql);
    pgw__free(l->alloc, ch);
}

/* Take ch out of the set: the ops naming it forget it. */
static void chan_remove(pgw_listener_t *l, chan_t *ch)
{
    chan_t **pp;
    if (chan_find(l, ch->name, &pp) != ch) return;
    *pp = ch->next;
    l->nchans--;
    for (op_t *o = l->ops; o; o = o->next)
        if (o->ch == ch) o->ch = NULL;
    chan_free(l, ch);
}

/* -------------------------------------------------------- held messages */

static void held_push(pgw_listener_t *l, int32_t pid, pgw_str_t channel, pgw_str_t payload)
{
    size_t cl = (size_t)channel.len, pl = (size_t)payload.len;
    held_t *h = pgw__malloc(l->alloc, sizeof *h + cl + pl);
    if (!h) return; /* out of memory: lost, as if the gap were longer */
    h->next = NULL;
    h->pid = pid;
    h->channel_len = cl;
    h->payload_len = pl;
    if (cl) memcpy(h->data, channel.p, cl);
    if (pl) memcpy(h->data + cl, payload.p, pl);
    *l->held_tail = h;
    l->held_tail = &h->next;
}

static void held_clear(pgw_listener_t *l)
{
    while (l->held) {
        held_t *h = l->held;
        l->held = h->next;
        pgw__free(l->alloc, h);
    }
    l->held_tail = &l->held;
}

/* Deliver what was held, in order, unless a callback closes the listener. */
static void held_flush(pgw_listener_t *l)
{
    while (l->held && !l->closing) {
        held_t *h = l->held;
        l->held = h->next;
        if (!l->held) l->held_tail = &l->held;
        pgw_str_t ch = {h->data, h->channel_len};
        pgw_str_t pl = {h->data + h->channel_len, h->payload_len};
        if (l->cfg.on_notification) l->cfg.on_notification(l, h->pid, ch, pl, l->cfg.ud);
        pgw__free(l->alloc, h);
    }
}

/* ------------------------------------------------------------------ ops */

static void on_op_done(int status, pgw_result_t *res, void *ud);

/* Submit the op's SQL on the current connection. Returns 0 or the
 * submit's error (the op is then freed). */
static int op_submit(pgw_listener_t *l, chan_t *ch, const char *sql, int unlisten,
                     pgw_listener_done_cb cb, void *cb_ud)
{
    op_t *o = pgw__calloc(l->alloc, 1, sizeof *o);
    if (!o) return PGW_ENOMEM;
    *o = (op_t){l->ops, l, ch, l->gen, unlisten, cb, cb_ud};
    pgw_request_t r = PGW_SIMPLE(sql, on_op_done, o);
    int rc = pgw_conn_submit(l->conn, &r);
    if (rc < 0) {
        pgw__free(l->alloc, o);
        return rc;
    }
    l->ops = o;
    return 0;
}

static void op_unlink(pgw_listener_t *l, op_t *o)
{
    for (op_t **pp = &l->ops; *pp; pp = &(*pp)->next)
        if (*pp == o) {
            *pp = o->next;
            return;
        }
}

static void become_ready(pgw_listener_t *l)
{
    l->state = L_READY;
    pgw__backoff_reset(&l->backoff);
    if (l->gap_pending) {
        l->gap_pending = 0;
        l->gaps++;
        event(l, PGW_LISTENER_GAP, 0);
    } else if (!l->ready_reported) {
        l->ready_reported = 1;
        event(l, PGW_LISTENER_READY, 0);
    }
    held_flush(l);
}

/* A LISTEN of the current generation ran (or was refused). */
static void listen_done(pgw_listener_t *l, op_t *o, int status, const pgw_result_t *res)
{
    chan_t *ch = o->ch;
    if (ch && !l->closing && (status == 0 || status == PGW_ESERVER)) {
        pgw_listener_done_cb cb = ch->cb;
        void *cb_ud = ch->cb_ud;
        ch->cb = NULL;
        if (status < 0) chan_remove(l, ch); /* refused: it leaves the set */
        done(l, cb, cb_ud, status, res ? pgw_result_error(res) : NULL);
    } else if (ch && l->closing) {
        pgw_listener_done_cb cb = ch->cb;
        ch->cb = NULL;
        done(l, cb, ch->cb_ud, PGW_ECANCELED, NULL);
    }
    /* Otherwise the connection broke or is being dropped: the channel's
     * LISTEN (and its done callback) waits for the next connection, and
     * this one will never be ready. */
    if (status != 0 && status != PGW_ESERVER) return;
    if (o->gen != l->gen || l->state != L_RELISTEN || l->closing) return;
    if (l->outstanding && --l->outstanding == 0) become_ready(l);
}

static void on_op_done(int status, pgw_result_t *res, void *ud)
{
    op_t *o = ud;
    pgw_listener_t *l = o->l;
    op_unlink(l, o);
    if (o->unlisten) {
        /* On a lost connection the channel is not listened either. */
        int st = l->closing ? PGW_ECANCELED : status == PGW_ESERVER ? status : 0;
        done(l, o->cb, o->cb_ud, st, res && st ? pgw_result_error(res) : NULL);
    } else {
        listen_done(l, o, status, res);
    }
    pgw_result_free(res);
    pgw__free(l->alloc, o);
}

/* ------------------------------------------------------------ connection */

static void schedule_reconnect(pgw_listener_t *l)
{
    l->state = L_WAIT;
    uv_timer_start(&l->timer, on_backoff_timer, pgw__backoff_next(&l->backoff), 0);
}

static void drop_conn(pgw_listener_t *l)
{
    pgw_conn_t *c = l->conn;
    l->conn = NULL;
    if (c && pgw_conn_close(c, on_conn_closed, l) < 0) l->nopen--;
}

/* LISTEN the whole set on the new connection, pipelined. */
static void relisten(pgw_listener_t *l)
{
    l->state = L_RELISTEN;
    l->outstanding = 0;
    for (chan_t *ch = l->chans; ch; ch = ch->next) {
        if (op_submit(l, ch, ch->sql, 0, NULL, NULL) < 0) {
            /* The connection cannot take requests (it broke meanwhile, or
             * memory ran out): start over. */
            drop_conn(l);
            schedule_reconnect(l);
            return;
        }
        l->outstanding++;
    }
    if (!l->outstanding) become_ready(l);
}

static void on_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    pgw_listener_t *l = ud;
    if (conn != l->conn || l->closing) return;
    if (status == 0) {
        relisten(l);
        return;
    }
    drop_conn(l);
    schedule_reconnect(l);
    event(l, PGW_LISTENER_RETRY, status);
}

static void on_conn_lost(pgw_conn_t *conn, int err, void *ud)
{
    pgw_listener_t *l = ud;
    if (conn != l->conn || l->closing) return;
    /* A gap once the set was listened; also when notifications held during
     * the first re-listen are dropped with the connection. */
    if (l->ready_reported || l->held) l->gap_pending = l->ready_reported = 1;
    held_clear(l);
    drop_conn(l);
    schedule_reconnect(l);
    event(l, PGW_LISTENER_LOST, err);
}

static void on_conn_notification(pgw_conn_t *conn, int32_t pid, pgw_str_t channel,
                                 pgw_str_t payload, void *ud)
{
    pgw_listener_t *l = ud;
    if (conn != l->conn || l->closing) return;
    if (l->state == L_RELISTEN) {
        held_push(l, pid, channel, payload);
        return;
    }
    if (l->cfg.on_notification) l->cfg.on_notification(l, pid, channel, payload, l->cfg.ud);
}

/* Open a connection and connect. Returns 0 (on_connected will run) or
 * the error of pgw_conn_new / pgw_conn_connect (nothing left open). */
static int connect_now(pgw_listener_t *l)
{
    pgw_conn_t *c;
    int rc = pgw_conn_new(&c, l->loop, &l->conn_cfg);
    if (rc < 0) return rc;
    l->nopen++;
    l->conn = c;
    l->gen++;
    l->state = L_CONNECTING;
    const pgw_conn_driver_t driver = {.on_lost = on_conn_lost, .ud = l};
    pgw_conn_set_driver(c, &driver);
    pgw_conn_set_notification_cb(c, on_conn_notification, l);
    rc = pgw_conn_connect(c, l->conninfo, on_connected, l);
    if (rc < 0) drop_conn(l);
    return rc;
}

/* The backoff timer fired: connect again. */
static void on_backoff_timer(uv_timer_t *t)
{
    pgw_listener_t *l = t->data;
    if (l->closing) return;
    int rc = connect_now(l);
    if (rc == 0) return;
    schedule_reconnect(l);
    event(l, PGW_LISTENER_RETRY, rc);
}

/* ------------------------------------------------------------ public API */

void pgw_listener_config_init(pgw_listener_config_t *cfg)
{
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
}

static void listener_setup_config(pgw_listener_t *l, const pgw_listener_config_t *cfg)
{
    l->cfg = *cfg;
    pgw__backoff_init(&l->backoff, l->cfg.backoff_min_ms, l->cfg.backoff_max_ms, 1);
    pgw_conn_config_init(&l->conn_cfg);
    if (l->cfg.conn) pgw__copy_sized(&l->conn_cfg, sizeof l->conn_cfg, l->cfg.conn);
    l->cfg.conn = NULL; /* copied: the caller's struct may go */
    l->conn_cfg.alloc = l->alloc;
    /* Notifications go to the listener (set per connection), the loss to
     * its driver; the caller's other hooks stay the caller's. */
    l->conn_cfg.on_notification = NULL;
}

int pgw_listener_new(pgw_listener_t **out, uv_loop_t *loop, const char *conninfo,
                     const pgw_listener_config_t *cfg)
{
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (!loop || !conninfo) return PGW_EINVAL;
    pgw_listener_config_t lc;
    pgw_listener_config_init(&lc);
    if (cfg) pgw__copy_sized(&lc, sizeof lc, cfg);
    const pgw_allocator_t *a = pgw__alloc_or_default(lc.conn ? lc.conn->alloc : NULL);
    pgw_listener_t *l = pgw__calloc(a, 1, sizeof *l);
    if (!l) return PGW_ENOMEM;
    l->alloc = a;
    l->loop = loop;
    l->held_tail = &l->held;
    l->conninfo = pgw__strdup(a, conninfo);
    if (!l->conninfo) {
        pgw__free(a, l);
        return PGW_ENOMEM;
    }
    listener_setup_config(l, &lc);
    uv_timer_init(loop, &l->timer);
    l->timer.data = l;
    l->nopen = 1;
    int rc = connect_now(l);
    if (rc == PGW_ECONNINFO || rc == PGW_ENOMEM || rc == PGW_EINVAL || rc == PGW_ENOTSUP) {
        l->closing = 1; /* freed once the timer and the connection closed */
        uv_close((uv_handle_t *)&l->timer, on_timer_closed);
        return rc;
    }
    if (rc < 0) schedule_reconnect(l);
    *out = l;
    return 0;
}

int pgw_listener_listen(pgw_listener_t *l, const char *channel, pgw_listener_done_cb cb, void *ud)
{
    if (!l || !channel) return PGW_EINVAL;
    if (l->closing) return PGW_ECLOSED;
    chan_t *ch = chan_find(l, channel, NULL);
    if (ch) {
        if (cb && ch->cb) return PGW_EBUSY; /* one waiter per channel */
        if (!cb) return 0;
    } else {
        ch = pgw__calloc(l->alloc, 1, sizeof *ch);
        if (!ch) return PGW_ENOMEM;
        int rc = pgw_listen_sql(l->alloc, channel, 0, &ch->sql);
        ch->name = rc == 0 ? pgw__strdup(l->alloc, channel) : NULL;
        if (!ch->name) {
            chan_free(l, ch);
            return rc < 0 ? rc : PGW_ENOMEM;
        }
        ch->next = l->chans;
        l->chans = ch;
        l->nchans++;
    }
    ch->cb = cb;
    ch->cb_ud = ud;
    if (l->state != L_READY && l->state != L_RELISTEN) return 0; /* on the next connection */
    int rc = op_submit(l, ch, ch->sql, 0, NULL, NULL);
    if (rc < 0) {
        ch->cb = NULL;
        chan_remove(l, ch);
        return rc;
    }
    if (l->state == L_RELISTEN) l->outstanding++;
    return 0;
}

int pgw_listener_unlisten(pgw_listener_t *l, const char *channel, pgw_listener_done_cb cb, void *ud)
{
    if (!l || !channel) return PGW_EINVAL;
    if (l->closing) return PGW_ECLOSED;
    chan_t *ch = chan_find(l, channel, NULL);
    if (!ch) return PGW_ENOTFOUND;
    char *sql = NULL;
    int connected = l->state == L_READY || l->state == L_RELISTEN;
    if (connected) {
        int rc = pgw_listen_sql(l->alloc, channel, 1, &sql);
        if (rc == 0) rc = op_submit(l, NULL, sql, 1, cb, ud);
        pgw_escape_free(l->alloc, sql);
        if (rc < 0) return rc;
    }
    pgw_listener_done_cb wait_cb = ch->cb;
    void *wait_ud = ch->cb_ud;
    chan_remove(l, ch);
    done(l, wait_cb, wait_ud, PGW_ECANCELED, NULL);
    if (!connected) done(l, cb, ud, 0, NULL);
    return 0;
}

size_t pgw_listener_nchannels(const pgw_listener_t *l)
{
    return l ? l->nchans : 0;
}

int pgw_listener_is_ready(const pgw_listener_t *l)
{
    return l && !l->closing && l->state == L_READY;
}

uint64_t pgw_listener_gaps(const pgw_listener_t *l)
{
    return l ? l->gaps : 0;
}

pgw_conn_t *pgw_listener_conn(pgw_listener_t *l)
{
    return l && !l->closing ? l->conn : NULL;
}

int pgw_listener_close(pgw_listener_t *l, void (*cb)(pgw_listener_t *l, void *ud), void *ud)
{
    if (!l) return PGW_EINVAL;
    if (l->closing) return PGW_ECLOSED;
    l->closing = 1;
    l->close_cb = cb;
    l->close_ud = ud;
    l->nopen++; /* held across the teardown: callbacks below may not free l */
    uv_timer_stop(&l->timer);
    drop_conn(l); /* in-flight ops complete with PGW_ECANCELED */
    while (l->chans) {
        chan_t *ch = l->chans;
        pgw_listener_done_cb wait_cb = ch->cb;
        ch->cb = NULL;
        done(l, wait_cb, ch->cb_ud, PGW_ECANCELED, NULL);
        chan_remove(l, ch);
    }
    held_clear(l);
    uv_close((uv_handle_t *)&l->timer, on_timer_closed);
    l->nopen--;
    return 0;
}
