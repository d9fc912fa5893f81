/* The fault proxy (pgproxy.h). */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgproxy.h"

#include "pgtest.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

/* ------------------------------------------------------------- framing */

/* What a direction's next unit is: a message of the startup family (length
 * first, no type byte), a typed message, a TLS record, the one byte that
 * answers SSLRequest. */
enum { FR_UNTYPED, FR_TYPED, FR_TLS, FR_BYTE };

#define SSL_REQUEST_CODE    80877103u
#define GSSENC_REQUEST_CODE 80877104u

typedef struct framer {
    int mode;
    uint8_t hdr[8];
    size_t hlen;
    uint64_t total, pos; /* the current unit's size (0: header incomplete), bytes seen */
    uint64_t units;      /* units completed */
} framer_t;

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static size_t header_size(int mode)
{
    switch (mode) {
    case FR_UNTYPED:
        return 8; /* length and protocol code: every startup-family message has both */
    case FR_BYTE:
        return 1;
    default:
        return 5;
    }
}

static uint64_t unit_total(const framer_t *f)
{
    uint64_t n;
    switch (f->mode) {
    case FR_UNTYPED:
        n = be32(f->hdr);
        return n < 8 ? 8 : n;
    case FR_TYPED:
        n = 1 + (uint64_t)be32(f->hdr + 1);
        return n < 5 ? 5 : n;
    case FR_TLS:
        return 5 + ((uint64_t)f->hdr[3] << 8 | f->hdr[4]);
    default:
        return 1;
    }
}

/* ---------------------------------------------------------- the proxy */

enum { SIDE_CLIENT = 0, SIDE_SERVER = 1 };

typedef struct chunk {
    struct chunk *next;
    uint64_t due_ns;
    size_t len;
    uint8_t data[];
} chunk_t;

typedef struct pconn pconn_t;

/* Bytes travelling one way (dir PGT_TO_SERVER: read from the client,
 * written to the server). */
typedef struct way {
    framer_t fr;
    /* A ParameterStatus held whole until its name is known (hiding). */
    uint8_t *held;
    size_t nheld;
    int holding;
    chunk_t *head, *tail; /* delayed chunks (latency, split) */
    uv_timer_t timer;
    size_t writes; /* uv_writes in flight */
    int eof;       /* the source ended */
    int paused;    /* source reading stopped for backpressure */
} way_t;

struct pconn {
    pgt_proxy_t *p;
    pconn_t *next, *prev;
    uv_tcp_t tcp[2]; /* SIDE_CLIENT, SIDE_SERVER */
    uv_connect_t creq;
    int connected; /* upstream connected */
    int handles;   /* open handles */
    int closing;
    int draining; /* close once every way is written out */
    int drain_rst;
    way_t way[2]; /* PGT_TO_SERVER, PGT_TO_CLIENT */
    int has_cut;
    pgt_proxy_cut_t cut;
    char hide[64];  /* the parameter hidden from the client ("": none) */
    char value[64]; /* ... or sent with this value instead of the server's */
    int has_value;
};

enum {
    CMD_NONE,
    CMD_BLACKHOLE,
    CMD_RESET,
    CMD_CLOSE,
    CMD_LATENCY,
    CMD_SPLIT,
    CMD_CUT,
    CMD_RANDOM,
    CMD_HIDE,
    CMD_STOP
};

typedef struct cmd {
    int op;
    int on;
    unsigned ms;
    pgt_proxy_cut_t cut;
    int has_cut;
    uint64_t seed, max_units;
    double probability;
    char name[64];
    char value[64];
    int has_value;
} cmd_t;

struct pgt_proxy {
    uv_loop_t loop;
    uv_tcp_t listener;
    uv_async_t async;
    pthread_t thread;
    struct sockaddr_in target;
    unsigned port;
    pconn_t *conns;
    int blackhole;
    unsigned backlog; /* connections waiting to be accepted (blackholed) */
    unsigned latency_ms;
    int split;
    int has_cut;
    pgt_proxy_cut_t cut;
    uint64_t rng;
    double probability;
    uint64_t max_units;
    char hide[64];
    char value[64];
    int has_value;
    /* control, from the test's threads */
    pthread_mutex_t call_mu; /* one call at a time */
    pthread_mutex_t mu;      /* cmd, done, stats */
    pthread_cond_t cv;
    cmd_t cmd;
    int done;
    pgt_proxy_stats_t stats;
};

static uint64_t rnd(pgt_proxy_t *p)
{
    p->rng ^= p->rng << 13;
    p->rng ^= p->rng >> 7;
    p->rng ^= p->rng << 17;
    return p->rng;
}

static void stat_add(pgt_proxy_t *p, uint64_t *field, uint64_t n)
{
    pthread_mutex_lock(&p->mu);
    *field += n;
    pthread_mutex_unlock(&p->mu);
}

static void note_cut(pgt_proxy_t *p, int rst)
{
    pthread_mutex_lock(&p->mu);
    p->stats.cuts++;
    if (rst) p->stats.resets++;
    p->stats.last_cut_ns = uv_hrtime();
    pthread_mutex_unlock(&p->mu);
}

/* --------------------------------------------------------------- closing */

static void on_conn_handle_closed(uv_handle_t *h)
{
    pconn_t *c = h->data;
    if (--c->handles > 0) return;
    for (int d = 0; d < 2; d++) {
        while (c->way[d].head) {
            chunk_t *k = c->way[d].head;
            c->way[d].head = k->next;
            free(k);
        }
        free(c->way[d].held);
    }
    free(c);
}

/* Close every handle of c now (pending writes are dropped): the client's
 * socket with a RST when rst. */
static void conn_close(pconn_t *c, int rst)
{
    if (c->closing) return;
    c->closing = 1;
    pgt_proxy_t *p = c->p;
    if (c->prev)
        c->prev->next = c->next;
    else
        p->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    pthread_mutex_lock(&p->mu);
    p->stats.active--;
    pthread_mutex_unlock(&p->mu);
    if (rst && uv_tcp_close_reset(&c->tcp[SIDE_CLIENT], on_conn_handle_closed) == 0) {
        /* closing with RST */
    } else {
        uv_close((uv_handle_t *)&c->tcp[SIDE_CLIENT], on_conn_handle_closed);
    }
    uv_close((uv_handle_t *)&c->tcp[SIDE_SERVER], on_conn_handle_closed);
    uv_close((uv_handle_t *)&c->way[0].timer, on_conn_handle_closed);
    uv_close((uv_handle_t *)&c->way[1].timer, on_conn_handle_closed);
}

static int way_idle(const way_t *w)
{
    return w->writes == 0 && w->head == NULL;
}

/* A draining connection closes once both ways are written out. */
static void maybe_finish_drain(pconn_t *c)
{
    if (!c->closing && c->draining && way_idle(&c->way[0]) && way_idle(&c->way[1]))
        conn_close(c, c->drain_rst);
}

static void conn_drain(pconn_t *c, int rst)
{
    if (c->closing || c->draining) return;
    c->draining = 1;
    c->drain_rst = rst;
    uv_read_stop((uv_stream_t *)&c->tcp[SIDE_CLIENT]);
    if (c->connected) uv_read_stop((uv_stream_t *)&c->tcp[SIDE_SERVER]);
    maybe_finish_drain(c);
}

/* ------------------------------------------------------------- relaying */

static uv_tcp_t *dst_of(pconn_t *c, int d)
{
    return &c->tcp[d == PGT_TO_SERVER ? SIDE_SERVER : SIDE_CLIENT];
}

static uv_tcp_t *src_of(pconn_t *c, int d)
{
    return &c->tcp[d == PGT_TO_SERVER ? SIDE_CLIENT : SIDE_SERVER];
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    (void)h;
    (void)hint;
    buf->base = malloc(65536);
    buf->len = buf->base ? 65536 : 0;
}

/* Reading from the source of way d, unless something holds it. */
static void way_resume(pconn_t *c, int d)
{
    way_t *w = &c->way[d];
    if (c->closing || c->draining || c->p->blackhole || w->paused || w->eof) return;
    if (d == PGT_TO_CLIENT && !c->connected) return;
    uv_read_start((uv_stream_t *)src_of(c, d), on_alloc, on_read);
}

typedef struct wreq {
    uv_write_t req;
    pconn_t *c;
    int d;
    uint8_t *mem;
} wreq_t;

#define HIGH_WATER (1u << 20)
#define LOW_WATER  (256u << 10)

static void on_written(uv_write_t *req, int status)
{
    wreq_t *wr = (wreq_t *)req;
    pconn_t *c = wr->c;
    int d = wr->d;
    way_t *w = &c->way[d];
    free(wr->mem);
    free(wr);
    w->writes--;
    if (c->closing) return;
    if (status < 0) {
        conn_close(c, 0);
        return;
    }
    if (w->paused && uv_stream_get_write_queue_size((uv_stream_t *)dst_of(c, d)) < LOW_WATER) {
        w->paused = 0;
        way_resume(c, d);
    }
    maybe_finish_drain(c);
}

/* Write mem[off..off+len) (mem is freed once written) toward way d. */
static void write_now(pconn_t *c, int d, uint8_t *mem, const uint8_t *at, size_t len)
{
    wreq_t *wr = malloc(sizeof *wr);
    if (!wr) {
        free(mem);
        conn_close(c, 0);
        return;
    }
    wr->c = c;
    wr->d = d;
    wr->mem = mem;
    uv_buf_t b = uv_buf_init((char *)at, (unsigned)len);
    if (uv_write(&wr->req, (uv_stream_t *)dst_of(c, d), &b, 1, on_written) != 0) {
        free(mem);
        free(wr);
        conn_close(c, 0);
        return;
    }
    c->way[d].writes++;
    stat_add(c->p, d == PGT_TO_SERVER ? &c->p->stats.to_server : &c->p->stats.to_client, len);
    if (uv_stream_get_write_queue_size((uv_stream_t *)dst_of(c, d)) > HIGH_WATER) {
        c->way[d].paused = 1;
        uv_read_stop((uv_stream_t *)src_of(c, d));
    }
}

static void on_way_timer(uv_timer_t *t);

static void arm(pconn_t *c, int d)
{
    way_t *w = &c->way[d];
    if (!w->head) return;
    uint64_t now = uv_hrtime();
    uint64_t ms = w->head->due_ns > now ? (w->head->due_ns - now + 999999) / 1000000 : 0;
    uv_timer_start(&w->timer, on_way_timer, ms, 0);
}

static void on_way_timer(uv_timer_t *t)
{
    pconn_t *c = t->data;
    int d = t == &c->way[PGT_TO_CLIENT].timer ? PGT_TO_CLIENT : PGT_TO_SERVER;
    way_t *w = &c->way[d];
    uint64_t now = uv_hrtime();
    while (!c->closing && w->head && w->head->due_ns <= now) {
        chunk_t *k = w->head;
        w->head = k->next;
        if (!w->head) w->tail = NULL;
        /* chunk_t and its bytes are one block: freed when written */
        write_now(c, d, (uint8_t *)k, k->data, k->len);
        if (c->p->split && d == PGT_TO_CLIENT) break; /* one byte per tick */
    }
    if (c->closing) return;
    arm(c, d);
    maybe_finish_drain(c);
}

static void enqueue(pconn_t *c, int d, const uint8_t *p, size_t n, uint64_t due)
{
    way_t *w = &c->way[d];
    chunk_t *k = malloc(sizeof *k + n);
    if (!k) {
        conn_close(c, 0);
        return;
    }
    k->next = NULL;
    k->len = n;
    k->due_ns = w->tail && w->tail->due_ns > due ? w->tail->due_ns : due;
    memcpy(k->data, p, n);
    if (w->tail)
        w->tail->next = k;
    else
        w->head = k;
    w->tail = k;
}

/* Send n bytes toward way d, through the delay queue when one applies. */
static void send_way(pconn_t *c, int d, const uint8_t *p, size_t n)
{
    pgt_proxy_t *px = c->p;
    if (n == 0) return;
    if (px->split && d == PGT_TO_CLIENT) {
        /* Each byte 1 ms after the one before it (the queue's last byte
         * included), so the client's reads find them one at a time. */
        way_t *w = &c->way[d];
        uint64_t due = uv_hrtime() + (uint64_t)px->latency_ms * 1000000;
        if (w->tail && w->tail->due_ns > due) due = w->tail->due_ns;
        for (size_t i = 0; i < n; i++)
            enqueue(c, d, p + i, 1, due + (uint64_t)(i + 1) * 1000000);
        arm(c, d);
        return;
    }
    if (px->latency_ms || c->way[d].head) {
        enqueue(c, d, p, n, uv_hrtime() + (uint64_t)px->latency_ms * 1000000);
        arm(c, d);
        return;
    }
    uint8_t *mem = malloc(n);
    if (!mem) {
        conn_close(c, 0);
        return;
    }
    memcpy(mem, p, n);
    write_now(c, d, mem, mem, n);
}

/* The unit of way d just ended: what comes next in either direction. */
static void unit_done(pconn_t *c, int d)
{
    framer_t *f = &c->way[d].fr;
    if (d == PGT_TO_SERVER && f->mode == FR_UNTYPED) {
        uint32_t code = be32(f->hdr + 4);
        if (code == SSL_REQUEST_CODE || code == GSSENC_REQUEST_CODE)
            c->way[PGT_TO_CLIENT].fr.mode = FR_BYTE;
        else if (code >> 16 == 3)
            f->mode = FR_TYPED; /* a StartupMessage */
    } else if (d == PGT_TO_CLIENT && f->mode == FR_BYTE) {
        if (f->hdr[0] == 'S') {
            c->way[0].fr.mode = c->way[1].fr.mode = FR_TLS;
        } else if (f->hdr[0] == 'E') {
            /* an old server's ErrorResponse: its first byte */
            f->mode = FR_TYPED;
            f->hlen = 1;
            f->pos = 1;
            f->total = 0;
            return;
        } else {
            f->mode = FR_TYPED; /* 'N': a StartupMessage follows in plaintext */
        }
    }
    f->units++;
    f->pos = f->total = f->hlen = 0;
}

/* How many of the n bytes at p way d forwards before its cut (n when none
 * falls in them); *cut says the cut is due right there. */
static size_t walk(pconn_t *c, int d, const uint8_t *p, size_t n, int *cut)
{
    framer_t *f = &c->way[d].fr;
    size_t used = 0;
    *cut = 0;
    for (;;) {
        uint64_t limit = UINT64_MAX;
        if (c->has_cut && c->cut.dir == d && f->units == c->cut.units) {
            uint64_t want = c->cut.bytes;
            if (f->total && want >= f->total) want = f->total - 1; /* inside the message */
            if (f->pos >= want) {
                *cut = 1;
                return used;
            }
            limit = want - f->pos;
        }
        if (used == n) return used;
        /* sslnegotiation=direct: a TLS handshake record first (a startup
         * packet begins with the high byte of its length: 0) */
        if (f->mode == FR_UNTYPED && f->units == 0 && f->hlen == 0 && p[used] == 0x16)
            c->way[0].fr.mode = c->way[1].fr.mode = FR_TLS;
        size_t hs = header_size(f->mode);
        uint64_t take;
        if (f->hlen < hs) {
            take = hs - f->hlen;
            if (take > n - used) take = n - used;
            if (take > limit) take = limit;
            memcpy(f->hdr + f->hlen, p + used, (size_t)take);
            f->hlen += (size_t)take;
            if (f->hlen == hs) f->total = unit_total(f);
        } else {
            take = f->total - f->pos;
            if (take > n - used) take = n - used;
            if (take > limit) take = limit;
        }
        f->pos += take;
        used += (size_t)take;
        if (f->total && f->pos == f->total) unit_done(c, d);
    }
}

/* The ParameterStatus held on way d is whole: forward it unless it names
 * the hidden parameter, which is dropped or sent with the value set. */
static void held_done(pconn_t *c, int d)
{
    way_t *w = &c->way[d];
    size_t name_len = strlen(c->hide);
    int hidden = w->nheld >= 5 + name_len + 1 && memcmp(w->held + 5, c->hide, name_len) == 0 &&
                 w->held[5 + name_len] == 0;
    if (!hidden) {
        send_way(c, d, w->held, w->nheld);
    } else if (c->has_value) {
        uint8_t m[1 + 4 + 64 + 64];
        size_t value_len = strlen(c->value), n = 1 + 4 + name_len + 1 + value_len + 1;
        m[0] = 'S';
        uint32_t len = (uint32_t)(n - 1);
        m[1] = (uint8_t)(len >> 24);
        m[2] = (uint8_t)(len >> 16);
        m[3] = (uint8_t)(len >> 8);
        m[4] = (uint8_t)len;
        memcpy(m + 5, c->hide, name_len + 1);
        memcpy(m + 5 + name_len + 1, c->value, value_len + 1);
        send_way(c, d, m, n);
    }
    free(w->held);
    w->held = NULL;
    w->nheld = 0;
    w->holding = 0;
}

/* relay toward the client of a connection that hides a parameter: one
 * message piece at a time, ParameterStatus messages held until whole. */
static void relay_hiding(pconn_t *c, int d, const uint8_t *p, size_t n)
{
    way_t *w = &c->way[d];
    framer_t *f = &w->fr;
    while (n > 0) {
        if (f->mode == FR_TYPED && f->hlen == 0 && f->pos == 0) w->holding = p[0] == 'S';
        size_t piece = n;
        if (f->mode == FR_TYPED) {
            size_t left = f->hlen < 5 ? 5 - f->hlen : (size_t)(f->total - f->pos);
            if (piece > left) piece = left;
        }
        uint64_t units = f->units;
        int cut;
        size_t k = walk(c, d, p, piece, &cut);
        if (w->holding) {
            uint8_t *grown = realloc(w->held, w->nheld + k);
            if (!grown) {
                conn_close(c, 0);
                return;
            }
            memcpy(grown + w->nheld, p, k);
            w->held = grown;
            w->nheld += k;
            if (f->units != units) held_done(c, d);
        } else {
            send_way(c, d, p, k);
        }
        if (cut) {
            c->has_cut = 0;
            note_cut(c->p, c->cut.rst);
            conn_drain(c, c->cut.rst);
            return;
        }
        if (k == 0) return;
        p += k;
        n -= k;
    }
}

static void relay(pconn_t *c, int d, const uint8_t *p, size_t n)
{
    if (d == PGT_TO_CLIENT && c->hide[0]) {
        relay_hiding(c, d, p, n);
        return;
    }
    int cut;
    size_t k = walk(c, d, p, n, &cut);
    send_way(c, d, p, k);
    if (cut) {
        c->has_cut = 0;
        note_cut(c->p, c->cut.rst);
        conn_drain(c, c->cut.rst);
    }
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    pconn_t *c = s->data;
    int d = s == (uv_stream_t *)&c->tcp[SIDE_CLIENT] ? PGT_TO_SERVER : PGT_TO_CLIENT;
    if (n > 0 && !c->closing && !c->draining) relay(c, d, (const uint8_t *)buf->base, (size_t)n);
    free(buf->base);
    if (n < 0 && !c->closing) {
        /* One side ended: deliver what is on its way, then close both. */
        c->way[d].eof = 1;
        conn_drain(c, 0);
    }
}

static void on_upstream(uv_connect_t *req, int status)
{
    pconn_t *c = req->data;
    if (c->closing) return;
    if (status < 0) {
        conn_close(c, 0);
        return;
    }
    c->connected = 1;
    uv_tcp_nodelay(&c->tcp[SIDE_SERVER], 1);
    way_resume(c, PGT_TO_CLIENT);
}

static void plan_cut(pgt_proxy_t *p, pconn_t *c)
{
    if (p->has_cut) {
        c->has_cut = 1;
        c->cut = p->cut;
    } else if (p->probability > 0 && (double)(rnd(p) % 1000000) / 1e6 < p->probability &&
               p->max_units > 0) {
        c->has_cut = 1;
        c->cut.dir = (int)(rnd(p) & 1);
        c->cut.units = rnd(p) % p->max_units;
        c->cut.bytes = rnd(p) & 1 ? 1 + rnd(p) % 64 : 0;
        c->cut.rst = (int)(rnd(p) & 1);
    }
}

static void accept_one(pgt_proxy_t *p)
{
    pconn_t *c = calloc(1, sizeof *c);
    if (!c) return;
    c->p = p;
    uv_tcp_init(&p->loop, &c->tcp[SIDE_CLIENT]);
    uv_tcp_init(&p->loop, &c->tcp[SIDE_SERVER]);
    for (int d = 0; d < 2; d++) {
        uv_timer_init(&p->loop, &c->way[d].timer);
        c->way[d].timer.data = c;
        c->way[d].fr.mode = d == PGT_TO_SERVER ? FR_UNTYPED : FR_TYPED;
    }
    c->tcp[0].data = c->tcp[1].data = c;
    c->handles = 4;
    c->next = p->conns;
    if (p->conns) p->conns->prev = c;
    p->conns = c;
    pthread_mutex_lock(&p->mu);
    p->stats.accepted++;
    p->stats.active++;
    pthread_mutex_unlock(&p->mu);
    if (uv_accept((uv_stream_t *)&p->listener, (uv_stream_t *)&c->tcp[SIDE_CLIENT]) != 0) {
        conn_close(c, 0);
        return;
    }
    uv_tcp_nodelay(&c->tcp[SIDE_CLIENT], 1);
    plan_cut(p, c);
    memcpy(c->hide, p->hide, sizeof c->hide);
    memcpy(c->value, p->value, sizeof c->value);
    c->has_value = p->has_value;
    c->creq.data = c;
    if (uv_tcp_connect(&c->creq, &c->tcp[SIDE_SERVER], (const struct sockaddr *)&p->target,
                       on_upstream) != 0) {
        conn_close(c, 0);
        return;
    }
    /* What the client writes meanwhile waits in libuv's write queue of the
     * connecting socket. */
    way_resume(c, PGT_TO_SERVER);
}

static void on_connection(uv_stream_t *l, int status)
{
    pgt_proxy_t *p = l->data;
    if (status < 0) return;
    if (p->blackhole) {
        p->backlog++; /* accepted when the blackhole ends */
        return;
    }
    accept_one(p);
}

/* ------------------------------------------------------------- commands */

static void apply(pgt_proxy_t *p, const cmd_t *cmd)
{
    switch (cmd->op) {
    case CMD_BLACKHOLE:
        p->blackhole = cmd->on;
        for (pconn_t *c = p->conns; c; c = c->next) {
            if (cmd->on) {
                uv_read_stop((uv_stream_t *)&c->tcp[SIDE_CLIENT]);
                uv_read_stop((uv_stream_t *)&c->tcp[SIDE_SERVER]);
            } else {
                way_resume(c, PGT_TO_SERVER);
                way_resume(c, PGT_TO_CLIENT);
            }
        }
        while (!cmd->on && p->backlog) {
            p->backlog--;
            accept_one(p);
        }
        break;
    case CMD_RESET:
    case CMD_CLOSE:
        while (p->conns) {
            note_cut(p, cmd->op == CMD_RESET);
            conn_close(p->conns, cmd->op == CMD_RESET);
        }
        break;
    case CMD_LATENCY:
        p->latency_ms = cmd->ms;
        break;
    case CMD_SPLIT:
        p->split = cmd->on;
        break;
    case CMD_CUT:
        p->has_cut = cmd->has_cut;
        p->cut = cmd->cut;
        break;
    case CMD_HIDE:
        memcpy(p->hide, cmd->name, sizeof p->hide);
        memcpy(p->value, cmd->value, sizeof p->value);
        p->has_value = cmd->has_value;
        break;
    case CMD_RANDOM:
        p->rng = cmd->seed * 0x9E3779B97F4A7C15ull + 1;
        p->probability = cmd->probability;
        p->max_units = cmd->max_units;
        break;
    case CMD_STOP:
        while (p->conns)
            conn_close(p->conns, 0);
        uv_close((uv_handle_t *)&p->listener, NULL);
        uv_close((uv_handle_t *)&p->async, NULL);
        break;
    default:
        break;
    }
}

static void on_async(uv_async_t *a)
{
    pgt_proxy_t *p = a->data;
    pthread_mutex_lock(&p->mu);
    cmd_t cmd = p->cmd;
    p->cmd.op = CMD_NONE;
    pthread_mutex_unlock(&p->mu);
    if (cmd.op != CMD_NONE) apply(p, &cmd);
    pthread_mutex_lock(&p->mu);
    p->done = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void call(pgt_proxy_t *p, const cmd_t *cmd)
{
    pthread_mutex_lock(&p->call_mu);
    pthread_mutex_lock(&p->mu);
    p->cmd = *cmd;
    p->done = 0;
    uv_async_send(&p->async);
    while (!p->done)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->call_mu);
}

static void *proxy_main(void *arg)
{
    pgt_proxy_t *p = arg;
    /* A relay writing to a side that already closed gets EPIPE, and the
     * SIGPIPE that comes with it stays blocked on this thread: the tests'
     * processes keep SIGPIPE's default disposition (test_conn_chaos), so
     * it would kill them. */
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);
    uv_run(&p->loop, UV_RUN_DEFAULT);
    return NULL;
}

pgt_proxy_t *pgt_proxy_start(const char *host, unsigned port)
{
    pgt_proxy_t *p = calloc(1, sizeof *p);
    assert_non_null(p);
    assert_int_equal(uv_ip4_addr(host, (int)port, &p->target), 0);
    assert_int_equal(uv_loop_init(&p->loop), 0);
    pthread_mutex_init(&p->call_mu, NULL);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    uv_tcp_init(&p->loop, &p->listener);
    p->listener.data = p;
    struct sockaddr_in any;
    uv_ip4_addr("127.0.0.1", 0, &any);
    assert_int_equal(uv_tcp_bind(&p->listener, (const struct sockaddr *)&any, 0), 0);
    assert_int_equal(uv_listen((uv_stream_t *)&p->listener, 128, on_connection), 0);
    struct sockaddr_in me;
    int len = sizeof me;
    assert_int_equal(uv_tcp_getsockname(&p->listener, (struct sockaddr *)&me, &len), 0);
    p->port = ntohs(me.sin_port);
    uv_async_init(&p->loop, &p->async, on_async);
    p->async.data = p;
    assert_int_equal(pthread_create(&p->thread, NULL, proxy_main, p), 0);
    return p;
}

pgt_proxy_t *pgt_proxy_start_server(void)
{
    pgt_require_server();
    return pgt_proxy_start(pgt_env_required("PGW_TEST_TCP_HOST"),
                           (unsigned)pgt_env_int("PGPORT", 5432));
}

unsigned pgt_proxy_port(const pgt_proxy_t *p)
{
    return p->port;
}

void pgt_proxy_stop(pgt_proxy_t *p)
{
    if (!p) return;
    cmd_t cmd = {.op = CMD_STOP};
    call(p, &cmd);
    pthread_join(p->thread, NULL);
    uv_run(&p->loop, UV_RUN_NOWAIT);
    uv_loop_close(&p->loop);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->call_mu);
    free(p);
}

char *pgt_proxy_conninfo(const pgt_proxy_t *p, char *buf, size_t n, const char *extra)
{
    char port[16];
    snprintf(port, sizeof port, "%u", p->port);
    buf[0] = '\0';
    if (pgt_conninfo_append(buf, n, "host", "127.0.0.1") != 0 ||
        pgt_conninfo_append(buf, n, "port", port) != 0 ||
        pgt_conninfo_append(buf, n, "user", pgt_env_required("PGUSER")) != 0 ||
        pgt_conninfo_append(buf, n, "dbname", pgt_env_required("PGDATABASE")) != 0)
        fail_msg("conninfo buffer too small");
    if (extra) {
        size_t len = strlen(buf);
        if (len + 1 + strlen(extra) + 1 > n) fail_msg("conninfo buffer too small");
        snprintf(buf + len, n - len, " %s", extra);
    }
    return buf;
}

void pgt_proxy_blackhole(pgt_proxy_t *p, int on)
{
    cmd_t cmd = {.op = CMD_BLACKHOLE, .on = on};
    call(p, &cmd);
}

void pgt_proxy_reset_all(pgt_proxy_t *p)
{
    cmd_t cmd = {.op = CMD_RESET};
    call(p, &cmd);
}

void pgt_proxy_close_all(pgt_proxy_t *p)
{
    cmd_t cmd = {.op = CMD_CLOSE};
    call(p, &cmd);
}

void pgt_proxy_latency(pgt_proxy_t *p, unsigned ms)
{
    cmd_t cmd = {.op = CMD_LATENCY, .ms = ms};
    call(p, &cmd);
}

void pgt_proxy_split(pgt_proxy_t *p, int on)
{
    cmd_t cmd = {.op = CMD_SPLIT, .on = on};
    call(p, &cmd);
}

void pgt_proxy_plan_cut(pgt_proxy_t *p, const pgt_proxy_cut_t *cut)
{
    cmd_t cmd = {.op = CMD_CUT, .has_cut = cut != NULL};
    if (cut) cmd.cut = *cut;
    call(p, &cmd);
}

void pgt_proxy_random_cuts(pgt_proxy_t *p, uint64_t seed, double probability, uint64_t max_units)
{
    cmd_t cmd = {
        .op = CMD_RANDOM, .seed = seed, .probability = probability, .max_units = max_units};
    call(p, &cmd);
}

void pgt_proxy_hide_parameter(pgt_proxy_t *p, const char *name)
{
    cmd_t cmd = {.op = CMD_HIDE};
    if (name) {
        if (strlen(name) >= sizeof cmd.name) fail_msg("pgt_proxy_hide_parameter: name too long");
        strcpy(cmd.name, name);
    }
    call(p, &cmd);
}

void pgt_proxy_rewrite_parameter(pgt_proxy_t *p, const char *name, const char *value)
{
    cmd_t cmd = {.op = CMD_HIDE, .has_value = 1};
    if (strlen(name) >= sizeof cmd.name || strlen(value) >= sizeof cmd.value)
        fail_msg("pgt_proxy_rewrite_parameter: name or value too long");
    strcpy(cmd.name, name);
    strcpy(cmd.value, value);
    call(p, &cmd);
}

void pgt_proxy_stats(pgt_proxy_t *p, pgt_proxy_stats_t *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->stats;
    pthread_mutex_unlock(&p->mu);
}
