/*
 * The libuv connection: object life, session wiring, reads, coalesced
 * writes, close, and the request wrappers. Connecting lives in connect.c,
 * cancels in cancel.c.
 */
#define _DEFAULT_SOURCE
#include "conn/conn_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define PGW__DEFAULT_WRITE_THRESHOLD (256u * 1024u)
/* A streamed batch's parts (PGW_BATCH_STREAM): small enough that the
 * server starts early, large enough that a part costs one system call per
 * ~1,000 small requests (libpq flushes its pipeline at 64 KiB too). */
#define PGW__STREAM_PART (64u * 1024u)
/* The write buffer's capacity kept after a write: at least this, and at
 * least four write thresholds (see pgw_conn_config_t in conn.h). */
#define PGW__WBUF_KEEP_MIN (1024u * 1024u)

/* ---------------------------------------------------------------- handles */

static void on_sock_event(pgw__sock_t *k, int status, int events);

static void on_sock_closed(uv_handle_t *h)
{
    pgw__sock_t *k = h->data;
    pgw_conn_t *c = k->owner;
    pgw__free(c->alloc, k);
    pgw__conn_handle_closed(c);
}

/* Start the current attempt's socket towards c->peer, with the TCP
 * options set before connecting (a refused one is the attempt's reason).
 * Returns 0 (the attempt's outcome comes to pgw__connect_on_socket), the
 * negated errno when the connect failed at once (pgw__sock_connect), or
 * PGW_ENOMEM. */
int pgw__conn_sock_open(pgw_conn_t *c)
{
    pgw__sock_t *k = pgw__calloc(c->alloc, 1, sizeof(*k));
    if (!k) return PGW_ENOMEM;
    pgw__sock_opts_t o = {pgw__peer_is_tcp(&c->peer) ? &c->tcp : NULL,
                          c->cfg.kernel_tcp_defaults != 0, ""};
    int rc = pgw__sock_connect(k, c->loop, &c->peer, &o, on_sock_event, c);
    if (rc < 0) {
        pgw__conn_errmsg_add(c, o.why);
        pgw__free(c->alloc, k);
        return rc;
    }
    c->handles_open++;
    c->sock = k;
    /* Mostly the connect has finished already: its outcome is handled
     * before the loop next polls (settle_connect), without a writable
     * event to wait for. */
    rc = pgw__sock_connect_now(k, &c->peer);
    if (rc <= 0) {
        k->settled = 1;
        k->outcome = rc;
        pgw__conn_schedule_flush(c);
        return 0;
    }
    rc = pgw__sock_watch(k, UV_WRITABLE);
    if (rc < 0) pgw__conn_sock_drop(c);
    return rc;
}

static void wbuf_release(pgw_conn_t *c);

/* Close the current socket (if any) and forget its unfinished write. */
void pgw__conn_sock_drop(pgw_conn_t *c)
{
    pgw__sock_t *k = c->sock;
    if (!k) return;
    c->sock = NULL;
    c->write_failed = 0;
    if (c->writing) wbuf_release(c);
    /* The TLS session and the GSS contexts belong to the socket: never
     * reused across attempts. */
    pgw__tlsneg_reset(&c->neg);
    pgw__tls_free(c->tls);
    c->tls = NULL;
    pgw__conn_gss_drop(c);
    c->tp = &pgw__transport_plain;
    pgw__sock_close(k, on_sock_closed);
}

void pgw__conn_errmsg_add(pgw_conn_t *c, const char *msg)
{
    if (!msg || !*msg) return;
    if (c->state == PGW__CONN_CONNECTING && c->cx.cur >= 0) {
        pgw__attempt_reason(c, msg);
        return;
    }
    pgw_buf_t *b = &c->errmsg;
    if (b->len) pgw_buf_append(b, "\n", 1);
    pgw_buf_append(b, msg, strlen(msg));
    if (pgw_buf_reserve(b, 1) == 0) b->data[b->len] = '\0';
}

static void conn_free(pgw_conn_t *c)
{
    pgw__dl_free(c);
    pgw__connect_free(c);
    pgw__attempts_free(c);
    pgw_buf_free(&c->errmsg);
    pgw__conn_gss_drop(c);
    pgw__gss_cred_free(c->gss_cred);
    pgw_buf_free(&c->gss_token);
    pgw__conn_oauth_clear(c);
    pgw__tls_ctx_unref(c->tls_ctx);
    pgw_buf_free(&c->wbuf);
    pgw__free(c->alloc, c);
}

void pgw__conn_handle_closed(pgw_conn_t *c)
{
    if (--c->handles_open > 0 || c->state != PGW__CONN_CLOSING) return;
    if (c->close_cb) c->close_cb(c, c->close_ud);
    conn_free(c);
}

static void on_conn_handle_closed(uv_handle_t *h)
{
    pgw__conn_handle_closed(h->data);
}

/* ----------------------------------------------------------- session hooks */

static void conn_on_broken(pgw_conn_t *c, int err);

static void cb_startup(pgw_session_t *s, int status, const pgw_error_t *err, void *ud)
{
    pgw_conn_t *c = ud;
    if (s == c->s && c->state == PGW__CONN_CONNECTING) pgw__connect_on_startup(c, status, err);
}

static void cb_want_write(pgw_session_t *s, void *ud)
{
    pgw_conn_t *c = ud;
    if (s == c->s) pgw__conn_schedule_flush(c);
}

/* A streamed batch's part is encoded (PGW_BATCH_STREAM): write it now,
 * inside the submit, as a flush past the threshold does. */
static void cb_stream_ready(pgw_session_t *s, void *ud)
{
    pgw_conn_t *c = ud;
    if (s != c->s) return;
    int was = c->in_request;
    c->in_request = 1;
    pgw__conn_flush(c);
    c->in_request = was;
}

static void cb_broken(pgw_session_t *s, int err, void *ud)
{
    pgw_conn_t *c = ud;
    if (s == c->s) conn_on_broken(c, err);
}

static void cb_notice(pgw_session_t *s, const pgw_error_t *notice, void *ud)
{
    pgw_conn_t *c = ud;
    if (c->cfg.on_notice) c->cfg.on_notice(c, notice, c->cfg.ud);
}

static void cb_notification(pgw_session_t *s, int32_t pid, pgw_str_t channel, pgw_str_t payload,
                            void *ud)
{
    pgw_conn_t *c = ud;
    if (c->notify_cb) c->notify_cb(c, pid, channel, payload, c->notify_ud);
}

static void cb_parameter(pgw_session_t *s, pgw_str_t name, pgw_str_t value, void *ud)
{
    pgw_conn_t *c = ud;
    if (c->driver.on_parameter) c->driver.on_parameter(c, name, value, c->driver.ud);
    if (c->cfg.on_parameter) c->cfg.on_parameter(c, name, value, c->cfg.ud);
}

static void cb_trace(pgw_session_t *s, char direction, const uint8_t *msg, size_t len, void *ud)
{
    pgw_conn_t *c = ud;
    if (c->cfg.on_trace) c->cfg.on_trace(c, direction, msg, len, c->cfg.ud);
}

/* SCRAM-SHA-256-PLUS: tls-server-end-point of the current TLS session. */
static int cb_channel_binding(pgw_session_t *s, const uint8_t **data, size_t *len, void *ud)
{
    pgw_conn_t *c = ud;
    if (s != c->s || !c->tls || pgw__tls_channel_binding(c->tls, c->cb_data, len) < 0) return -1;
    *data = c->cb_data;
    return 0;
}

static int cb_auth_ok(pgw_session_t *s, char *msg, size_t msglen, void *ud)
{
    pgw_conn_t *c = ud;
    return s == c->s ? pgw__conn_check_client_cert(c, msg, msglen) : 0;
}

static void cb_deadline(pgw_session_t *s, uint64_t ticket, uint32_t timeout_ms, void *ud)
{
    pgw_conn_t *c = ud;
    if (s == c->s) pgw__dl_arm(c, ticket, timeout_ms);
}

static uint64_t cb_now_ns(void *ud)
{
    PGW__UNUSED(ud);
    return uv_hrtime();
}

int pgw__conn_session_create(pgw_conn_t *c, const char *password)
{
    pgw_session_config_t sc;
    memset(&sc, 0, sizeof(sc));
    sc.alloc = c->cfg.alloc;
    sc.startup_params = c->startup_params;
    sc.nstartup_params = c->nstartup_params;
    sc.password = password;
    sc.require_auth = c->require_auth;
    sc.channel_binding = c->channel_binding;
    sc.min_protocol = c->min_protocol;
    sc.max_protocol = c->max_protocol;
    sc.max_message_size = c->cfg.max_message_size;
    sc.read_chunk_size = c->cfg.read_chunk_size;
    sc.chunk_cache_bytes = c->cfg.chunk_cache_bytes;
    sc.output_high_water = c->cfg.high_water_mark;
    sc.max_pending = c->cfg.max_pending;
    sc.results_any_thread = c->cfg.results_any_thread;
    sc.no_pipelining = c->cfg.no_pipelining;
    sc.no_timing = c->cfg.no_timing;
    sc.on_drain = pgw__conn_on_session_drain;
    sc.cb.on_startup = cb_startup;
    sc.cb.on_want_write = cb_want_write;
    sc.cb.on_broken = cb_broken;
    sc.cb.on_notice = cb_notice;
    sc.cb.on_notification = cb_notification;
    sc.cb.on_parameter = cb_parameter;
    sc.cb.on_trace = c->cfg.on_trace ? cb_trace : NULL; /* else no walk over every message */
    sc.cb.now_ns = cb_now_ns;
    sc.cb.channel_binding = cb_channel_binding;
    sc.cb.on_deadline = cb_deadline;
    sc.cb.on_auth_ok = cb_auth_ok;
    sc.request_timeout_ms = c->cfg.request_timeout_ms;
    sc.stmt_cache_mode = c->cfg.stmt_cache_mode;
    sc.stmt_cache_size = c->cfg.stmt_cache_size;
    sc.stmt_cache_bytes = c->cfg.stmt_cache_bytes;
    sc.registry = c->cfg.registry;
    pgw__conn_auth_hooks(c, &sc);
    sc.ud = c;
    pgw_session_t *s;
    int rc = pgw_session_new(&s, &sc);
    if (rc < 0) return rc;
    c->s = s;
    pgw_session_trace_sent(s, !c->trace_quiet_out);
    pgw_session_trace_received(s, !c->trace_quiet_in);
    pgw_session_set_stream(
        s, c->cfg.write_threshold < PGW__STREAM_PART ? c->cfg.write_threshold : PGW__STREAM_PART,
        cb_stream_ready, c);
    if (c->driver.on_attempt) c->driver.on_attempt(c, c->driver.ud);
    return 0;
}

/* Detach and free the current session, failing its pending requests with
 * err (exactly once: the session guarantees it). */
void pgw__conn_session_drop(pgw_conn_t *c, int err)
{
    pgw_session_t *s = c->s;
    if (!s) return;
    c->s = NULL; /* from here on its hooks are ignored */
    pgw__dl_clear(c);
    if (err && pgw_session_state(s) != PGW_SESSION_BROKEN) pgw_session_fail(s, err);
    pgw_session_free(s);
}

/* ------------------------------------------------------------------ reads */

/* recv() calls per readable event at most, so that one busy connection
 * cannot starve the others on its loop; a short read ends the turn sooner. */
#define PGW__READS_PER_WAKEUP 16

static void transport_failed(pgw_conn_t *c, int err)
{
    pgw_session_t *s = c->s;
    if (!s) return;
    pgw_session_fail(s, err); /* fails every pending request, calls cb_broken */
    if (c->s == s && c->sock) conn_on_broken(c, err);
}

void pgw__conn_fail(pgw_conn_t *c, int err)
{
    transport_failed(c, err);
}

/* 1 while k is still the socket of a live session. Callbacks run by a
 * commit may close the connection, break or replace the session. */
static int still_current(const pgw_conn_t *c, const pgw__sock_t *k)
{
    return k == c->sock && c->s != NULL;
}

/* libpq's words for a read that failed with err, not a reset (a reset or
 * EOF gets the pq layer's "server closed the connection unexpectedly"):
 * "could not receive data from server: Connection timed out", and over
 * TLS the TLS layer's line after it ("SSL SYSCALL error: Connection timed
 * out"). */
static void read_error_words(pgw_conn_t *c, int err)
{
    char msg[256];
    const char *why = strerror(err);
    if (c->tls)
        snprintf(msg, sizeof msg, "could not receive data from server: %s\nSSL SYSCALL error: %s",
                 why, why);
    else
        snprintf(msg, sizeof msg, "could not receive data from server: %s", why);
    pgw__conn_errmsg_add(c, msg);
}

/* Returns the number of reads that brought bytes (0: the socket had none,
 * or reading is paused). */
static int conn_read(pgw_conn_t *c, pgw__sock_t *k)
{
    int got = 0;
    for (int i = 0; i < PGW__READS_PER_WAKEUP && still_current(c, k); i++) {
        /* Paused by a row callback or pgw_conn_pause_reading (readctl.c):
         * the socket keeps the rest. */
        if (pgw_session_input_paused(c->s)) {
            pgw__conn_watch(c);
            return got;
        }
        uint8_t *p = NULL;
        size_t len = 0;
        int rc = c->tp->read_buffer(c, &p, &len);
        if (rc < 0) {
            if (still_current(c, k)) transport_failed(c, rc);
            return got;
        }
        ssize_t n = pgw__sock_recv(k, p, len);
        if (n == PGW_EAGAIN) break;
        if (n <= 0) {
            /* EOF, reset (0) or error (k->err says which). Over TLS or GSS
             * encryption, what was already received is delivered first;
             * an error is not a TLS stream's EOF. */
            if (c->tls && n == 0) pgw__tls_input_eof(c->tls);
            if (c->tp != &pgw__transport_plain) (void)c->tp->read_commit(c, 0);
            if (n < 0 && still_current(c, k)) read_error_words(c, k->err);
            if (still_current(c, k)) transport_failed(c, PGW_ECONNLOST);
            return got;
        }
        got++;
        c->stats.reads++;
        c->stats.bytes_in += (uint64_t)n;
        rc = c->tp->read_commit(c, (size_t)n);
        /* a fatal input error broke the session, which called cb_broken */
        if (rc < 0 && still_current(c, k)) conn_on_broken(c, rc);
        if ((size_t)n < len) break; /* drained */
    }
    if (c->dl.nwait) pgw__dl_after_read(c);
    return got;
}

/* Readable once connected unless reading is paused; writable only while a
 * write waits. */
void pgw__conn_watch(pgw_conn_t *c)
{
    pgw__sock_t *k = c->sock;
    if (!k) return;
    /* A COPY FROM that wants room continues at the next writable event. */
    int want = c->writing || pgw_session_copy_wants_room(c->s);
    int rd = pgw_session_input_paused(c->s) ? 0 : UV_READABLE;
    int ev = k->connecting ? (k->settled ? 0 : UV_WRITABLE) : rd | (want ? UV_WRITABLE : 0);
    if (pgw__sock_watch(k, ev) < 0) transport_failed(c, PGW_ECONNLOST);
}

/* The socket (and TLS, if any) is up: start reading and send the startup
 * packet (and, after it, whatever the session has queued). */
int pgw__conn_start_io(pgw_conn_t *c)
{
    pgw__sock_t *k = c->sock;
    int rc = pgw__sock_watch(k, UV_READABLE);
    if (rc < 0) return rc;
    rc = pgw_session_start(c->s);
    if (rc < 0) return rc;
    pgw__conn_flush(c);
    return 0;
}

/* ----------------------------------------------------------------- writes */

/* The write of wbuf is over (done or abandoned). wbuf keeps its capacity
 * for the next swap with the session, unless one large request grew it
 * past wbuf_keep: then it is freed, so that a single 100 MB parameter does
 * not pin 100 MB for the connection's lifetime. */
static void wbuf_release(pgw_conn_t *c)
{
    c->writing = 0;
    c->woff = 0;
    if (c->wbuf.cap > c->wbuf_keep)
        pgw_buf_free(&c->wbuf);
    else
        pgw_buf_reset(&c->wbuf);
}

/* A send failed, or the socket reported an error: the server closed the
 * connection or reset it. What it sent before is read and dispatched
 * first, as libpq reads it, so that its last words reach the request they
 * concern (a FATAL error: the backend was terminated by an administrator,
 * an idle session timed out); then the connection is lost. */
static void lost_after_input(pgw_conn_t *c)
{
    pgw__sock_t *k = c->sock;
    /* Not re-entered by the read below: a write failing in its callbacks
     * waits for the prepare (write_failed). The flag keeps it so. */
    if (c->reading_last) return;
    c->reading_last = 1;
    for (int i = 0; i < 64 && k && still_current(c, k) && !pgw_session_input_paused(c->s); i++)
        if (conn_read(c, k) == 0) break;
    c->reading_last = 0;
    if (still_current(c, k)) transport_failed(c, PGW_ECONNLOST);
}

/* A send failed: the connection is lost. Inside a request function (a
 * flush past the threshold) the failure is reported from the loop's next
 * prepare phase instead, so that no callback runs inside the function that
 * accepted the request; so it is inside a session callback (the flush as
 * a connect completes, in the startup's callback), where the session takes
 * no input. Nothing more is written meanwhile. */
static void write_failed(pgw_conn_t *c)
{
    if (c->in_request || pgw_session_in_callback(c->s)) {
        c->write_failed = 1;
        pgw__conn_watch(c);
        pgw__conn_schedule_flush(c);
        return;
    }
    lost_after_input(c);
}

/* Send the transport's output (plaintext: wbuf[woff..len)) until done or the socket is full.
 * Returns 0 when all was written, 1 when the rest waits for a writable event, -1 when the
 * connection failed (the session is broken and the socket dropped). */
static int conn_write_some(pgw_conn_t *c)
{
    for (;;) {
        size_t len = 0;
        const uint8_t *p = c->tp->out_view(c, &len);
        if (!p || len == 0) break;
        ssize_t n = pgw__sock_send(c->sock, p, len);
        if (n == PGW_EAGAIN) return 1;
        if (n < 0) {
            wbuf_release(c);
            write_failed(c);
            return -1;
        }
        c->stats.bytes_out += (uint64_t)n;
        c->tp->out_consumed(c, (size_t)n);
    }
    wbuf_release(c);
    return 0;
}

/* The socket took more: go on with the pinned buffer, then with what was
 * queued meanwhile (in the next turn's flush, or at once past the
 * threshold). */
static void conn_on_writable(pgw_conn_t *c)
{
    if (c->writing && conn_write_some(c) != 0) return;
    pgw__conn_copy_pump(c);
    pgw__conn_watch(c);
    if (!c->s || !c->sock) return;
    size_t pending = c->tp->pending_output(c);
    if (pending >= c->cfg.write_threshold)
        pgw__conn_flush(c);
    else if (pending > 0)
        pgw__conn_schedule_flush(c);
}

void pgw__conn_flush(pgw_conn_t *c)
{
    if (c->writing || c->write_failed || !c->sock || !c->s || c->state == PGW__CONN_CLOSING) return;
    if (c->cancels) return; /* held until the cancel completes: see cancel.c */
    if (pgw_session_state(c->s) == PGW_SESSION_NEW) return; /* socket not up yet */
    if (c->tp->pending_output(c) == 0) return; /* called at every turn: mostly nothing to do */
    /* Write right away: when the socket takes it all (the usual case) it
     * costs one system call and no poll update. Only what the socket did
     * not take waits, pinned (in wbuf, or in the TLS output ring), for a
     * writable event. Over TLS a full output ring is written and refilled
     * until the session's output is all encrypted. */
    for (;;) {
        if (c->tp->take_output(c) < 0) {
            write_failed(c);
            return;
        }
        size_t len = 0;
        c->tp->out_view(c, &len);
        if (len == 0) return;
        c->stats.writes++;
        c->writing = 1;
        int rc = conn_write_some(c);
        if (rc > 0) pgw__conn_watch(c);
        if (rc != 0 || !c->s || !c->sock || c->tp->pending_output(c) == 0) return;
    }
}

static void on_sock_event(pgw__sock_t *k, int status, int events)
{
    pgw_conn_t *c = k->owner;
    if (k != c->sock) return;
    if (k->connecting) {
        /* libuv reports POLLERR as UV_EBADF: the connect's own error is in
         * SO_ERROR. */
        int rc = pgw__sock_connect_result(k);
        pgw__connect_on_socket(c, rc == 0 && status < 0 ? status : rc);
        return;
    }
    if (c->neg.phase != PGW__NEG_IDLE) {
        pgw__connect_on_negotiation(c);
        return;
    }
    if (c->gneg.phase != PGW__GNEG_IDLE) {
        pgw__connect_on_gss_negotiation(c);
        return;
    }
    if (status < 0) {
        /* An error on the socket (the server reset it after closing): what
         * it sent before still waits to be read, as after a failed send. */
        lost_after_input(c);
        return;
    }
    if (events & UV_READABLE) conn_read(c, k);
    if ((events & UV_WRITABLE) && still_current(c, k)) conn_on_writable(c);
    /* Replies read may have brought the pending count under its bound: say
     * so now, as the loop may have nothing else to wake it before the next
     * turn's prepare. */
    if (still_current(c, k)) pgw__conn_drain_notify(c);
}

/* A connect that failed at once while reading is paused waits for the
 * resume (pgw_conn_pause_reading): libpq's PQconnectStart hands out the
 * socket of a TCP connect the server refused at once, and the refusal
 * comes from the PQconnectPoll after it. */
static int connect_held(const pgw_conn_t *c)
{
    const pgw__sock_t *k = c->sock;
    return k && k->settled && k->outcome < 0 && c->s && pgw_session_input_paused(c->s);
}

/* A socket whose connect finished at once (pgw__conn_sock_open) goes on
 * as a writable event would have made it go on. */
static void settle_connect(pgw_conn_t *c)
{
    pgw__sock_t *k = c->sock;
    if (!k || !k->settled || connect_held(c)) return;
    k->settled = 0;
    k->connecting = 0;
    pgw__connect_on_socket(c, k->outcome);
}

/* What the loop does for the connection before it polls: go on with a
 * connect that finished at once, report a failed write, resume input,
 * write the output, pump a COPY FROM, update the socket's interest, say
 * whether the pending count fell under its bound. */
static void conn_service(pgw_conn_t *c)
{
    settle_connect(c);
    if (c->write_failed) {
        c->write_failed = 0;
        lost_after_input(c);
        return;
    }
    /* Before the flush: what the resumed input makes callbacks submit goes
     * out in this turn. The resume releases a held connect too. */
    if (c->resume_pending) {
        pgw__conn_resume_input(c);
        settle_connect(c);
    }
    pgw__conn_flush(c);
    pgw__conn_copy_pump(c);
    if (c->sock && c->neg.phase == PGW__NEG_IDLE && c->gneg.phase == PGW__GNEG_IDLE &&
        !c->sock->connecting)
        pgw__conn_watch(c);
    pgw__conn_drain_notify(c);
}

static void on_prepare(uv_prepare_t *h)
{
    pgw_conn_t *c = h->data;
    uv_prepare_stop(h);
    c->prepare_active = 0;
    /* Again while the service started another attempt whose socket
     * connected at once: a prepare started from here would run only after
     * the loop has polled, and nothing would wake the poll. */
    do
        conn_service(c);
    while (c->sock && c->sock->settled && !connect_held(c));
}

/* The connection has a socket carrying a started session: no connect,
 * negotiation or close in progress. */
static int conn_io_ready(const pgw_conn_t *c)
{
    return c->state == PGW__CONN_READY && c->s && c->sock && !c->sock->connecting &&
           c->neg.phase == PGW__NEG_IDLE && c->gneg.phase == PGW__GNEG_IDLE;
}

/* 1 while released output waits for the socket (or for a cancel). */
static int conn_output_left(pgw_conn_t *c)
{
    return c->writing || c->tp->pending_output(c) > 0;
}

/* Write as the loop would once the socket is writable: go on with the
 * pinned buffer, then with what is queued. */
static void conn_write_now(pgw_conn_t *c)
{
    if (c->writing) conn_on_writable(c);
    if (!c->writing) pgw__conn_flush(c);
}

int pgw_conn_flush(pgw_conn_t *c)
{
    if (!c) return PGW_EINVAL;
    if (!conn_io_ready(c)) return PGW_ECLOSED;
    int was = c->in_request;
    c->in_request = 1; /* a failed write is reported by the loop */
    conn_write_now(c);
    c->in_request = was;
    return conn_output_left(c);
}

int pgw_conn_read_now(pgw_conn_t *c)
{
    if (!c) return PGW_EINVAL;
    if (!conn_io_ready(c)) return PGW_ECLOSED;
    if (pgw_session_in_callback(c->s)) return PGW_ERECURSIVE; /* it takes no input now */
    pgw__sock_t *k = c->sock;
    /* Nothing to write, resume or report: the usual call of a poll loop
     * that asks before the reply has come. */
    int idle =
        !c->writing && !c->resume_pending && !c->write_failed && c->tp->pending_output(c) == 0;
    if (!idle) conn_write_now(c);
    /* What a turn would do first: resume input paused before (then read
     * what follows it) or report a failed write. */
    if (still_current(c, k) && (c->resume_pending || c->write_failed)) conn_service(c);
    int got = 0;
    if (still_current(c, k) && !c->resume_pending) got = conn_read(c, k);
    if (!still_current(c, k)) return PGW_ECLOSED;
    if (idle && got == 0) {
        /* Nothing was written or read, so no callback ran: no output to
         * flush and no change for the watch. A COPY source and a drain
         * notice still get their turn, as in the service. */
        pgw__conn_copy_pump(c);
        if (still_current(c, k)) pgw__conn_drain_notify(c);
    } else {
        /* Once, after the read: what the replies made callbacks submit
         * goes out, and the watch follows what is left. */
        conn_service(c);
    }
    return still_current(c, k) ? 0 : PGW_ECLOSED;
}

/* Arrange one flush before the loop next polls. */
void pgw__conn_schedule_flush(pgw_conn_t *c)
{
    if (c->prepare_active || c->state == PGW__CONN_CLOSING) return;
    if (uv_prepare_start(&c->prepare, on_prepare) == 0) c->prepare_active = 1;
}

/* ------------------------------------------------------------------ break */

static void conn_on_broken(pgw_conn_t *c, int err)
{
    switch (c->state) {
    case PGW__CONN_CONNECTING:
        pgw__connect_on_broken(c, err);
        break;
    case PGW__CONN_READY:
        c->state = PGW__CONN_LOST;
        pgw__conn_sock_drop(c);
        if (c->driver.on_lost) c->driver.on_lost(c, err, c->driver.ud);
        if (c->state == PGW__CONN_LOST && c->cfg.on_lost) c->cfg.on_lost(c, err, c->cfg.ud);
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------- public API */

void pgw_conn_config_init(pgw_conn_config_t *cfg)
{
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
}

int pgw_conn_new(pgw_conn_t **out, uv_loop_t *loop, const pgw_conn_config_t *cfg)
{
    if (!out || !loop) return PGW_EINVAL;
    const pgw_allocator_t *a = pgw__alloc_or_default(cfg ? cfg->alloc : NULL);
    pgw_conn_t *c = pgw__calloc(a, 1, sizeof(*c));
    if (!c) return PGW_ENOMEM;
    if (cfg) pgw__copy_sized(&c->cfg, sizeof c->cfg, cfg);
    c->cfg.alloc = a;
    if (!c->cfg.write_threshold) c->cfg.write_threshold = PGW__DEFAULT_WRITE_THRESHOLD;
    c->wbuf_keep = c->cfg.write_threshold > SIZE_MAX / 4 ? SIZE_MAX : c->cfg.write_threshold * 4;
    if (c->wbuf_keep < PGW__WBUF_KEEP_MIN) c->wbuf_keep = PGW__WBUF_KEEP_MIN;
    c->alloc = a;
    c->loop = loop;
    c->notify_cb = c->cfg.on_notification;
    c->notify_ud = c->cfg.ud;
    c->tp = &pgw__transport_plain;
    pgw_buf_init(&c->wbuf, a);
    pgw_buf_init(&c->errmsg, a);
    pgw_buf_init(&c->gss_token, a);
    c->cx.cur = -1;
    uv_prepare_init(loop, &c->prepare);
    uv_timer_init(loop, &c->timer);
    pgw__dl_init(c);
    c->prepare.data = c;
    c->timer.data = c;
    c->handles_open = 3;
    *out = c;
    return 0;
}

void pgw__conn_send_now(pgw_conn_t *c)
{
    if (!c->sock || !c->s || c->writing || c->tp->take_output(c) < 0) return;
    size_t len = 0;
    const uint8_t *p = c->tp->out_view(c, &len);
    if (p && len) (void)pgw__sock_send(c->sock, p, len);
    c->tp->out_consumed(c, len);
    wbuf_release(c);
}

/* Send Terminate without blocking, if the socket takes it right now (over
 * TLS followed by close_notify, as libpq does). */
static void send_terminate(pgw_conn_t *c)
{
    size_t len;
    pgw_session_pending_output(c->s, &len);
    pgw_session_consumed_output(c->s, len); /* never send what we cancel */
    if (c->writing || pgw_session_terminate(c->s) < 0 || c->tp->take_output(c) < 0) return;
    if (c->tls) pgw__tls_shutdown(c->tls);
    const uint8_t *p = c->tp->out_view(c, &len);
    if (p && len) (void)pgw__sock_send(c->sock, p, len);
}

int pgw_conn_close(pgw_conn_t *c, pgw_close_cb cb, void *ud)
{
    if (!c) return PGW_EINVAL;
    if (c->state == PGW__CONN_CLOSING) return PGW_ECLOSED;
    int was = c->state;
    c->state = PGW__CONN_CLOSING;
    c->close_cb = cb;
    c->close_ud = ud;
    if (c->s && c->sock && was == PGW__CONN_READY) send_terminate(c);
    pgw__conn_session_drop(c, PGW_ECANCELED);
    if (was == PGW__CONN_CONNECTING) pgw__connect_finish(c, PGW_ECANCELED, NULL);
    pgw__cancel_abort_all(c);
    pgw__connect_free(c);
    pgw__conn_sock_drop(c);
    uv_close((uv_handle_t *)&c->prepare, on_conn_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
    pgw__dl_close(c, on_conn_handle_closed);
    return 0;
}

/* Flush at once when the output passed the threshold. */
static int conn_after_request(pgw_conn_t *c, int rc)
{
    if (rc == 0 && c->s && c->tp->pending_output(c) >= c->cfg.write_threshold) {
        c->in_request = 1;
        pgw__conn_flush(c);
        c->in_request = 0;
    }
    return rc;
}

static int conn_check(const pgw_conn_t *c)
{
    if (!c) return PGW_EINVAL;
    switch (c->state) {
    case PGW__CONN_NEW:
        return PGW_EBUSY;
    case PGW__CONN_CONNECTING:
    case PGW__CONN_READY:
        return c->s ? 0 : PGW_ECLOSED;
    default:
        return PGW_ECLOSED;
    }
}

int pgw_conn_submit(pgw_conn_t *c, const pgw_request_t *req)
{
    return pgw_conn_submit_driven(c, req, NULL, NULL);
}

int pgw_conn_submit_batch(pgw_conn_t *c, const pgw_request_t *reqs, size_t n, unsigned flags,
                          pgw_result_cb done, void *ud)
{
    return pgw_conn_submit_batch_driven(c, reqs, n, flags, done, ud, NULL, NULL);
}

int pgw_conn_submit_driven(pgw_conn_t *c, const pgw_request_t *req, pgw_driver_hook hook, void *ctx)
{
    int rc = conn_check(c);
    if (rc < 0) return rc;
    return conn_after_request(c, pgw_session_submit_driven(c->s, req, hook, ctx));
}

int pgw_conn_submit_batch_driven(pgw_conn_t *c, const pgw_request_t *reqs, size_t n, unsigned flags,
                                 pgw_result_cb done, void *ud, pgw_driver_hook hook, void *ctx)
{
    int rc = conn_check(c);
    if (rc < 0) return rc;
    return conn_after_request(
        c, pgw_session_submit_batch_driven(c->s, reqs, n, flags, done, ud, hook, ctx));
}

int pgw_conn_protocol_version(const pgw_conn_t *c)
{
    if (!c || c->state != PGW__CONN_READY || !c->s) return 0;
    uint32_t v = pgw_session_protocol(c->s);
    return (int)(v >> 16) * 10000 + (int)(v & 0xffffu);
}

int32_t pgw_conn_backend_pid(pgw_conn_t *c)
{
    return pgw_session_backend_pid(pgw_conn_session(c));
}

void pgw_conn_stmt_cache_stats(pgw_conn_t *c, pgw_stmt_cache_stats_t *out)
{
    pgw_session_stmt_cache_stats(pgw_conn_session(c), out);
}

pgw_session_t *pgw_conn_session(pgw_conn_t *c)
{
    return c ? c->s : NULL;
}

uv_loop_t *pgw_conn_loop(const pgw_conn_t *c)
{
    return c ? c->loop : NULL;
}

int pgw_conn_is_ready(const pgw_conn_t *c)
{
    return c && c->state == PGW__CONN_READY;
}

/* The host being tried, or connected to. */
static const pgw__host_t *conn_host(const pgw_conn_t *c)
{
    return c ? pgw__hostplan_host(c->cx.plan) : NULL;
}

const char *pgw_conn_host(const pgw_conn_t *c)
{
    const pgw__host_t *h = conn_host(c);
    return h ? h->h.host : NULL;
}

const char *pgw_conn_port(const pgw_conn_t *c)
{
    const pgw__host_t *h = conn_host(c);
    return h ? h->port : NULL;
}

int pgw_conn_fd(const pgw_conn_t *c)
{
    if (!c) return PGW_EINVAL;
    if (!c->sock || c->sock->connecting || c->sock->fd < 0) return PGW_ECLOSED;
    return c->sock->fd;
}

void pgw_conn_stats(const pgw_conn_t *c, pgw_conn_stats_t *out)
{
    if (!out) return;
    if (c)
        *out = c->stats;
    else
        memset(out, 0, sizeof(*out));
}

int pgw_conn_set_driver(pgw_conn_t *c, const pgw_conn_driver_t *d)
{
    if (!c) return PGW_EINVAL;
    if (d)
        c->driver = *d;
    else
        memset(&c->driver, 0, sizeof c->driver);
    return 0;
}

void *pgw_conn_driver_userdata(const pgw_conn_t *c)
{
    return c ? c->driver.ud : NULL;
}

int pgw_conn_set_notification_cb(pgw_conn_t *c, pgw_notification_cb cb, void *ud)
{
    if (!c) return PGW_EINVAL;
    c->notify_cb = cb;
    c->notify_ud = ud;
    return 0;
}

int pgw_conn_trace_sent(pgw_conn_t *c, int on)
{
    if (!c) return PGW_EINVAL;
    c->trace_quiet_out = !on;
    pgw_session_trace_sent(c->s, on);
    return 0;
}

int pgw_conn_trace_received(pgw_conn_t *c, int on)
{
    if (!c) return PGW_EINVAL;
    c->trace_quiet_in = !on;
    pgw_session_trace_received(c->s, on);
    return 0;
}

void *pgw_conn_userdata(const pgw_conn_t *c)
{
    return c ? c->cfg.ud : NULL;
}

const char *pgw_conn_error_message(const pgw_conn_t *c)
{
    if (!c) return NULL;
    return c->errmsg.len ? (const char *)c->errmsg.data : "";
}
