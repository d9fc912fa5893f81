/*
 * The libuv connection: object life, session wiring, reads, coalesced
 * writes, close, and the request wrappers. Connecting lives in connect.c,
 * cancels in cancel.c.
 */
#define _DEFAULT_SOURCE /* TCP_KEEPINTVL, TCP_KEEPCNT, TCP_USER_TIMEOUT */
#include "conn/conn_internal.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>

#define PGW__DEFAULT_WRITE_THRESHOLD (256u * 1024u)

/* ---------------------------------------------------------------- handles */

static void on_sock_closed(uv_handle_t *h)
{
    pgw__sock_t *k = h->data;
    pgw_conn_t *c = k->c;
    pgw__free(c->alloc, k);
    pgw__conn_handle_closed(c);
}

int pgw__conn_sock_new(pgw_conn_t *c, int is_pipe, pgw__sock_t **out)
{
    pgw__sock_t *k = pgw__calloc(c->alloc, 1, sizeof(*k));
    if (!k) return PGW_ENOMEM;
    int rc = is_pipe ? uv_pipe_init(c->loop, &k->h.pipe, 0) : uv_tcp_init(c->loop, &k->h.tcp);
    if (rc < 0) {
        pgw__free(c->alloc, k);
        return rc;
    }
    k->c = c;
    k->h.handle.data = k;
    k->creq.data = k;
    c->handles_open++;
    *out = k;
    return 0;
}

void pgw__conn_sock_close(pgw__sock_t *k)
{
    if (k && !uv_is_closing(&k->h.handle)) uv_close(&k->h.handle, on_sock_closed);
}

static void conn_free(pgw_conn_t *c)
{
    pgw__connect_free(c);
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
    if (c->cfg.on_notification) c->cfg.on_notification(c, pid, channel, payload, c->cfg.ud);
}

static void cb_parameter(pgw_session_t *s, pgw_str_t name, pgw_str_t value, void *ud)
{
    pgw_conn_t *c = ud;
    if (c->cfg.on_parameter) c->cfg.on_parameter(c, name, value, c->cfg.ud);
}

static void cb_trace(pgw_session_t *s, char direction, const uint8_t *msg, size_t len, void *ud)
{
    pgw_conn_t *c = ud;
    if (c->cfg.on_trace) c->cfg.on_trace(c, direction, msg, len, c->cfg.ud);
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
    sc.cb.on_startup = cb_startup;
    sc.cb.on_want_write = cb_want_write;
    sc.cb.on_broken = cb_broken;
    sc.cb.on_notice = cb_notice;
    sc.cb.on_notification = cb_notification;
    sc.cb.on_parameter = cb_parameter;
    sc.cb.on_trace = cb_trace;
    sc.cb.now_ns = cb_now_ns;
    sc.ud = c;
    pgw_session_t *s;
    int rc = pgw_session_new(&s, &sc);
    if (rc < 0) return rc;
    c->s = s;
    return 0;
}

/* Detach and free the current session, failing its pending requests with
 * err (exactly once: the session guarantees it). */
void pgw__conn_session_drop(pgw_conn_t *c, int err)
{
    pgw_session_t *s = c->s;
    if (!s) return;
    c->s = NULL; /* from here on its hooks are ignored */
    if (err && pgw_session_state(s) != PGW_SESSION_BROKEN) pgw_session_fail(s, err);
    pgw_session_free(s);
}

/* ------------------------------------------------------------------ reads */

static void transport_failed(pgw_conn_t *c, int err)
{
    pgw_session_t *s = c->s;
    if (!s) return;
    pgw_session_fail(s, err); /* fails every pending request, calls cb_broken */
    if (c->s == s && c->sock) conn_on_broken(c, err);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    pgw__sock_t *k = h->data;
    pgw_conn_t *c = k->c;
    uint8_t *p = NULL;
    size_t len = 0;
    PGW__UNUSED(hint);
    if (k != c->sock || !c->s || c->tp->read_buffer(c, &p, &len) < 0) {
        p = NULL;
        len = 0; /* libuv then reports UV_ENOBUFS */
    }
    *buf = uv_buf_init((char *)p, (unsigned)(len > UINT32_MAX ? UINT32_MAX : len));
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    pgw__sock_t *k = st->data;
    pgw_conn_t *c = k->c;
    PGW__UNUSED(buf);
    if (k != c->sock || !c->s || n == 0) return;
    if (n > 0) {
        c->stats.reads++;
        c->stats.bytes_in += (uint64_t)n;
        int rc = c->tp->read_commit(c, (size_t)n);
        /* a fatal input error broke the session, which called cb_broken */
        if (rc < 0 && c->s && c->sock == k) conn_on_broken(c, rc);
        return;
    }
    transport_failed(c, n == UV_ENOBUFS ? PGW_ENOMEM : PGW_ECONNLOST);
}

/* Set an integer TCP option when the user gave one (value > 0). These are
 * best effort, as in libpq: a kernel without the option keeps its default. */
static void set_tcp_int(uv_os_fd_t fd, int opt, unsigned value)
{
    int v = value > INT32_MAX ? INT32_MAX : (int)value;
    if (value > 0) (void)setsockopt(fd, IPPROTO_TCP, opt, &v, sizeof v);
}

static void set_tcp_options(pgw_conn_t *c, pgw__sock_t *k)
{
    uv_tcp_nodelay(&k->h.tcp, 1);
    if (c->keepalive) uv_tcp_keepalive(&k->h.tcp, 1, c->keepalive_idle ? c->keepalive_idle : 60);
    /* libuv 1.44 sets only the idle time; the rest of libpq's keepalive and
     * timeout options go straight to the socket. */
    uv_os_fd_t fd;
    if (uv_fileno(&k->h.handle, &fd) != 0) return;
    if (c->keepalive) {
        set_tcp_int(fd, TCP_KEEPINTVL, c->keepalive_interval);
        set_tcp_int(fd, TCP_KEEPCNT, c->keepalive_count);
    }
    set_tcp_int(fd, TCP_USER_TIMEOUT, c->tcp_user_timeout_ms);
}

/* The attempt's socket is connected: start reading and send the startup
 * packet (and, after it, whatever the session has queued). */
int pgw__conn_start_io(pgw_conn_t *c)
{
    pgw__sock_t *k = c->sock;
    if (k->h.handle.type == UV_TCP) set_tcp_options(c, k);
    int rc = uv_read_start(&k->h.stream, on_alloc, on_read);
    if (rc < 0) return rc;
    rc = pgw_session_start(c->s);
    if (rc < 0) return rc;
    pgw__conn_flush(c);
    return 0;
}

/* ----------------------------------------------------------------- writes */

static void on_write(uv_write_t *req, int status)
{
    pgw_conn_t *c = req->data;
    pgw__sock_t *k = (pgw__sock_t *)req->handle->data;
    c->writing = 0;
    pgw_buf_reset(&c->wbuf); /* keeps its capacity for the next swap */
    if (k != c->sock || !c->s) return;
    if (status < 0) {
        transport_failed(c, PGW_ECONNLOST);
        return;
    }
    /* Output queued while this write was in flight goes out in the next
     * turn's flush (or at once if it passed the threshold meanwhile). */
    if (c->tp->pending_output(c) > 0) {
        if (c->tp->pending_output(c) >= c->cfg.write_threshold) {
            pgw__conn_flush(c);
        } else {
            pgw__conn_schedule_flush(c);
        }
    }
}

void pgw__conn_flush(pgw_conn_t *c)
{
    if (c->writing || !c->sock || !c->s || c->state == PGW__CONN_CLOSING) return;
    if (c->cancels) return; /* held until the cancel completes: see cancel.c */
    if (pgw_session_state(c->s) == PGW_SESSION_NEW) return; /* socket not up yet */
    c->tp->take_output(c, &c->wbuf);
    if (c->wbuf.len == 0) return;
    c->stats.writes++;
    c->stats.bytes_out += c->wbuf.len;
    /* Try the write right away: when the socket takes it all (the usual
     * case) it costs one system call, without a write request, its
     * completion callback, or the epoll update libuv makes after each
     * queued write. Only what the socket did not take is queued, pinned in
     * wbuf until on_write. */
    uv_buf_t b = uv_buf_init((char *)c->wbuf.data, (unsigned)c->wbuf.len);
    int rc = uv_try_write(&c->sock->h.stream, &b, 1);
    if (rc == (int)c->wbuf.len) {
        pgw_buf_reset(&c->wbuf);
        return;
    }
    if (rc < 0 && rc != UV_EAGAIN && rc != UV_ENOSYS) {
        pgw_buf_reset(&c->wbuf);
        transport_failed(c, PGW_ECONNLOST);
        return;
    }
    size_t done = rc > 0 ? (size_t)rc : 0;
    b = uv_buf_init((char *)c->wbuf.data + done, (unsigned)(c->wbuf.len - done));
    c->wreq.data = c;
    rc = uv_write(&c->wreq, &c->sock->h.stream, &b, 1, on_write);
    if (rc < 0) {
        pgw_buf_reset(&c->wbuf);
        transport_failed(c, PGW_ECONNLOST);
        return;
    }
    c->writing = 1;
}

static void on_prepare(uv_prepare_t *h)
{
    pgw_conn_t *c = h->data;
    uv_prepare_stop(h);
    c->prepare_active = 0;
    pgw__conn_flush(c);
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
        pgw__conn_sock_close(c->sock);
        c->sock = NULL;
        if (c->cfg.on_lost) c->cfg.on_lost(c, err, c->cfg.ud);
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------- public API */

int pgw_conn_new(pgw_conn_t **out, uv_loop_t *loop, const pgw_conn_config_t *cfg)
{
    if (!out || !loop) return PGW_EINVAL;
    const pgw_allocator_t *a = pgw__alloc_or_default(cfg ? cfg->alloc : NULL);
    pgw_conn_t *c = pgw__calloc(a, 1, sizeof(*c));
    if (!c) return PGW_ENOMEM;
    if (cfg) c->cfg = *cfg;
    c->cfg.alloc = a;
    if (!c->cfg.write_threshold) c->cfg.write_threshold = PGW__DEFAULT_WRITE_THRESHOLD;
    c->alloc = a;
    c->loop = loop;
    c->tp = &pgw__transport_plain;
    pgw_buf_init(&c->wbuf, a);
    uv_prepare_init(loop, &c->prepare);
    uv_timer_init(loop, &c->timer);
    c->prepare.data = c;
    c->timer.data = c;
    c->handles_open = 2;
    *out = c;
    return 0;
}

/* Send Terminate without blocking, if the socket takes it right now. */
static void send_terminate(pgw_conn_t *c)
{
    size_t len;
    pgw_session_pending_output(c->s, &len);
    pgw_session_consumed_output(c->s, len); /* never send what we cancel */
    if (c->writing || pgw_session_terminate(c->s) < 0) return;
    const uint8_t *p = pgw_session_pending_output(c->s, &len);
    if (!p || !len) return;
    uv_buf_t b = uv_buf_init((char *)p, (unsigned)len);
    uv_try_write(&c->sock->h.stream, &b, 1);
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
    pgw__conn_sock_close(c->sock);
    c->sock = NULL;
    uv_close((uv_handle_t *)&c->prepare, on_conn_handle_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_handle_closed);
    return 0;
}

/* Flush at once when the output passed the threshold. */
static int conn_after_request(pgw_conn_t *c, int rc)
{
    if (rc == 0 && c->s && c->tp->pending_output(c) >= c->cfg.write_threshold) pgw__conn_flush(c);
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

#define PGW__CONN_REQUEST(c, call)          \
    do {                                    \
        int rc_ = conn_check(c);            \
        if (rc_ < 0) return rc_;            \
        return conn_after_request(c, call); \
    } while (0)

int pgw_conn_simple_query(pgw_conn_t *c, const char *sql, pgw_result_cb cb, void *ud)
{
    PGW__CONN_REQUEST(c, pgw_session_simple_query(c->s, sql, cb, ud));
}

int pgw_conn_simple_query_rows(pgw_conn_t *c, const char *sql, pgw_row_cb row_cb,
                               pgw_result_cb done_cb, void *ud)
{
    PGW__CONN_REQUEST(c, pgw_session_simple_query_rows(c->s, sql, row_cb, done_cb, ud));
}

int pgw_conn_query(pgw_conn_t *c, const char *sql, const pgw_param_t *params, uint16_t nparams,
                   pgw_result_cb cb, void *ud)
{
    PGW__CONN_REQUEST(c, pgw_session_query(c->s, sql, params, nparams, 0, cb, ud));
}

int pgw_conn_query_flags(pgw_conn_t *c, const char *sql, const pgw_param_t *params,
                         uint16_t nparams, unsigned flags, pgw_result_cb cb, void *ud)
{
    PGW__CONN_REQUEST(c, pgw_session_query(c->s, sql, params, nparams, flags, cb, ud));
}

int pgw_conn_query_rows(pgw_conn_t *c, const char *sql, const pgw_param_t *params, uint16_t nparams,
                        unsigned flags, pgw_row_cb row_cb, pgw_result_cb done_cb, void *ud)
{
    PGW__CONN_REQUEST(
        c, pgw_session_query_rows(c->s, sql, params, nparams, flags, row_cb, done_cb, ud));
}

int pgw_conn_prepare(pgw_conn_t *c, const char *name, const char *sql, const uint32_t *oids,
                     uint16_t nparams, pgw_result_cb cb, void *ud)
{
    PGW__CONN_REQUEST(c, pgw_session_prepare(c->s, name, sql, oids, nparams, cb, ud));
}

int pgw_conn_execute(pgw_conn_t *c, const char *name, const pgw_param_t *params, uint16_t nparams,
                     unsigned flags, pgw_result_cb cb, void *ud)
{
    PGW__CONN_REQUEST(c, pgw_session_execute(c->s, name, params, nparams, flags, cb, ud));
}

int pgw_conn_execute_rows(pgw_conn_t *c, const char *name, const pgw_param_t *params,
                          uint16_t nparams, unsigned flags, pgw_row_cb row_cb,
                          pgw_result_cb done_cb, void *ud)
{
    PGW__CONN_REQUEST(
        c, pgw_session_execute_rows(c->s, name, params, nparams, flags, row_cb, done_cb, ud));
}

int pgw_conn_describe(pgw_conn_t *c, const char *name, pgw_result_cb cb, void *ud)
{
    PGW__CONN_REQUEST(c, pgw_session_describe(c->s, name, cb, ud));
}

int pgw_conn_close_statement(pgw_conn_t *c, const char *name, pgw_result_cb cb, void *ud)
{
    PGW__CONN_REQUEST(c, pgw_session_close_statement(c->s, name, cb, ud));
}

int pgw_conn_batch_begin(pgw_conn_t *c, unsigned flags)
{
    PGW__CONN_REQUEST(c, pgw_session_batch_begin(c->s, flags));
}

int pgw_conn_batch_end(pgw_conn_t *c, pgw_result_cb cb, void *ud)
{
    PGW__CONN_REQUEST(c, pgw_session_batch_end(c->s, cb, ud));
}

int pgw_conn_sync(pgw_conn_t *c, pgw_result_cb cb, void *ud)
{
    PGW__CONN_REQUEST(c, pgw_session_sync(c->s, cb, ud));
}

pgw_session_t *pgw_conn_session(pgw_conn_t *c)
{
    return c ? c->s : NULL;
}

uv_loop_t *pgw_conn_loop(const pgw_conn_t *c)
{
    return c->loop;
}

int pgw_conn_is_ready(const pgw_conn_t *c)
{
    return c && c->state == PGW__CONN_READY;
}

const char *pgw_conn_host(const pgw_conn_t *c)
{
    return c && c->hosts && c->host_idx < c->nhosts ? c->hosts[c->host_idx].h.host : NULL;
}

const char *pgw_conn_port(const pgw_conn_t *c)
{
    return c && c->hosts && c->host_idx < c->nhosts ? c->hosts[c->host_idx].port : NULL;
}

int pgw_conn_fd(const pgw_conn_t *c)
{
    uv_os_fd_t fd;
    if (!c->sock || uv_fileno(&c->sock->h.handle, &fd) != 0) return PGW_ECLOSED;
    return fd;
}

void pgw_conn_stats(const pgw_conn_t *c, pgw_conn_stats_t *out)
{
    *out = c->stats;
}

void *pgw_conn_userdata(const pgw_conn_t *c)
{
    return c->cfg.ud;
}
