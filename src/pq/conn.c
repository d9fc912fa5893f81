/*
 * PGconn: a pgw_conn_t on a private uv loop. Connecting (blocking and
 * PQconnectStart / PQconnectPoll), PQreset, PQfinish, the notice hooks and
 * the error message.
 */
#define _GNU_SOURCE
#include "pq/conn_internal.h"

#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn/loop.h"
#include "pgwire/conninfo.h"

/* ------------------------------------------------------------ strings */

int pq__str_append(pq_str_t *s, const char *p, size_t n)
{
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 64;
        while (cap < s->len + n + 1)
            cap *= 2;
        char *d = realloc(s->data, cap);
        if (!d) return -1;
        s->data = d;
        s->cap = cap;
    }
    if (n) memcpy(s->data + s->len, p, n);
    s->len += n;
    s->data[s->len] = 0;
    return 0;
}

static int str_vappendf(pq_str_t *s, const char *fmt, va_list ap)
{
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return -1;
    }
    int rc;
    if ((size_t)n < sizeof small) {
        rc = pq__str_append(s, small, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        rc = big ? 0 : -1;
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, ap2);
            rc = pq__str_append(s, big, (size_t)n);
            free(big);
        }
    }
    va_end(ap2);
    return rc;
}

int pq__str_appendf(pq_str_t *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = str_vappendf(s, fmt, ap);
    va_end(ap);
    return rc;
}

void pq__str_reset(pq_str_t *s)
{
    s->len = 0;
    if (s->data) s->data[0] = 0;
}

void pq__str_free(pq_str_t *s)
{
    free(s->data);
    memset(s, 0, sizeof *s);
}

void pq__conn_set_error(PGconn *conn, const char *fmt, ...)
{
    pq__str_reset(&conn->errmsg);
    va_list ap;
    va_start(ap, fmt);
    str_vappendf(&conn->errmsg, fmt, ap);
    va_end(ap);
}

void pq__conn_append_error(PGconn *conn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    str_vappendf(&conn->errmsg, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------- notice hooks */

static void default_notice_processor(void *arg, const char *message)
{
    (void)arg;
    fprintf(stderr, "%s", message);
}

/* As libpq's: the processor of the result's hooks (its connection's when it
 * was made), whatever arg is; a program may set this receiver again with an
 * argument of its own (ruby-pg restores it with NULL). */
static void default_notice_receiver(void *arg, const PGresult *res)
{
    (void)arg;
    const pq_notice_hooks_t *h = pq__result_notice_hooks(res);
    if (h && h->processor) h->processor(h->processor_arg, PQresultErrorMessage(res));
}

static const pq_notice_hooks_t default_hooks = {default_notice_receiver, NULL,
                                                default_notice_processor, NULL};

const pq_notice_hooks_t *pq__conn_notice_hooks(const PGconn *conn)
{
    return conn ? &conn->hooks : &default_hooks;
}

PGVerbosity pq__conn_verbosity(const PGconn *conn)
{
    return conn ? conn->verbosity : PQERRORS_DEFAULT;
}

PGContextVisibility pq__conn_show_context(const PGconn *conn)
{
    return conn ? conn->show_context : PQSHOW_CONTEXT_ERRORS;
}

/* libpq's notice hook setters: with a NULL conn they return NULL; a NULL
 * proc changes nothing (libpq's way to read the hook); otherwise proc and
 * its arg replace the hook. They return the hook that was set. The two
 * hooks differ in type only, hence one body written as a macro. */
#define NOTICE_HOOK_SETTER(name, hook_t, fn, fn_arg)  \
    hook_t name(PGconn *conn, hook_t proc, void *arg) \
    {                                                 \
        if (!conn) return NULL;                       \
        hook_t old = conn->hooks.fn;                  \
        if (proc) {                                   \
            conn->hooks.fn = proc;                    \
            conn->hooks.fn_arg = arg;                 \
        }                                             \
        return old;                                   \
    }

NOTICE_HOOK_SETTER(PQsetNoticeReceiver, PQnoticeReceiver, receiver, receiver_arg)
NOTICE_HOOK_SETTER(PQsetNoticeProcessor, PQnoticeProcessor, processor, processor_arg)

/* The error-message settings: a NULL conn changes nothing and gives the
 * default (the getters above keep it). */
PGVerbosity PQsetErrorVerbosity(PGconn *conn, PGVerbosity verbosity)
{
    PGVerbosity old = pq__conn_verbosity(conn);
    if (conn) conn->verbosity = verbosity;
    return old;
}

PGContextVisibility PQsetErrorContextVisibility(PGconn *conn, PGContextVisibility show_context)
{
    PGContextVisibility old = pq__conn_show_context(conn);
    if (conn) conn->show_context = show_context;
    return old;
}

/* The command the server is running (in a pipeline, the first whose
 * answer has not ended), whose notices are handed to the receiver among
 * its results, where libpq parses them: after the results of the
 * statements that completed before. */
static pq_cmd_t *running_cmd(PGconn *conn)
{
    pq_cmd_t *cmd = conn->head;
    while (cmd && cmd->done)
        cmd = cmd->next;
    return cmd;
}

/* The session's counts now, and those at the last pq__notice_mark. */
static void rx_since_mark(PGconn *conn, pgw_rx_counts_t *now, pgw_rx_counts_t *base)
{
    pgw_session_t *s = pgw_conn_session(conn->conn);
    pgw_session_rx_counts(s, now);
    memset(base, 0, sizeof *base);
    /* (a session made at a freed one's address has counted less) */
    if (conn->rx_session == s && conn->rx_base.messages <= now->messages) *base = conn->rx_base;
}

unsigned pq__statements_ended(PGconn *conn)
{
    pgw_rx_counts_t now, base;
    rx_since_mark(conn, &now, &base);
    return (unsigned)(now.ends - base.ends);
}

static void on_notice(pgw_conn_t *c, const pgw_error_t *notice, void *ud)
{
    (void)c;
    PGconn *conn = ud;
    if (!conn->hooks.receiver) return;
    pq_cmd_t *cmd = running_cmd(conn);
    /* As an error's, a notice's position is shown in a command's text:
     * libpq's is that of the first command whose results the caller has not
     * all taken, which in a pipeline may be one before the running one. */
    const char *query = conn->head ? conn->head->query : NULL;
    PGresult *res = pq__result_notice(conn, notice, query);
    if (!res) return;
    /* The command's statements that ended before the notice, and what
     * came after the last end. */
    pgw_rx_counts_t now, base;
    rx_since_mark(conn, &now, &base);
    unsigned after = (unsigned)(now.ends - base.ends);
    uint64_t other_since = now.end_at > base.messages ? now.end_at : base.messages;
    uint64_t rows_since = now.rows - (now.rows_at_end > base.rows ? now.rows_at_end : base.rows);
    /* libpq reads a notice that directly follows a statement's end before
     * it returns that statement's result */
    int at_end = after && now.other_at <= other_since;
    if (at_end) after--;
    /* During a COPY TO, among its rows, where libpq reads it; during a
     * COPY FROM, at once. */
    if (cmd && pq__copy_out_notice(conn, cmd, res)) return;
    if (cmd && !pq__copy_in_notice_now(conn, cmd)) {
        if (cmd->streaming) {
            /* the statements before its own ended: their results go first */
            pq__cmd_stream_catch_up(cmd, after);
            if (!at_end && pq__cmd_stream_notice(cmd, res, (long)rows_since)) return;
        }
        if (pq__cmd_hold_notice(cmd, res, after, at_end, (unsigned)rows_since)) return;
    }
    conn->hooks.receiver(conn->hooks.receiver_arg, res);
    PQclear(res);
}

void pq__notice_mark(PGconn *conn, int messages)
{
    pgw_session_t *s = conn->conn ? pgw_conn_session(conn->conn) : NULL;
    pgw_rx_counts_t now;
    pgw_session_rx_counts(s, &now);
    if (conn->rx_session != s) {
        conn->rx_session = s;
        messages = 1;
    }
    conn->rx_base.ends = now.ends;
    conn->rx_base.rows = now.rows;
    if (messages) conn->rx_base.messages = now.messages;
}

/* Writes the message to the PQtrace stream. Without PQtrace, only
 * AuthenticationOk is of interest to the tracer (see trace.c), and
 * nothing once it came: the session stops calling for what it receives
 * until PQtrace. */
static void on_trace(pgw_conn_t *c, char direction, const uint8_t *msg, size_t len, void *ud)
{
    PGconn *conn = ud;
    if (conn->trace_file || !conn->trace_backend) pq__trace_message(conn, direction, msg, len);
    if (!conn->trace_file && conn->trace_backend) pgw_conn_trace_received(c, 0);
}

/* ---------------------------------------------------------------- loop */

/* Reads (read: what has arrived, and writes what that queued) or writes
 * on the socket at once, where a turn of the loop would first poll: one
 * system call less per statement, as libpq's PQconsumeInput and PQflush go
 * straight to recv and send. A turn still runs when the loop has work due
 * (a timer, a handle closing) or the connection is not open. *left, when
 * given, is 0 when a write went straight to the socket and took all the
 * output, else 1. */
static int conn_io_now(PGconn *conn, int read, int *left)
{
    if (left) *left = 1;
    if (!conn->conn || !pgw_conn_is_ready(conn->conn)) return pq__conn_run_ready(conn);
    conn->io_now = 1;
    int rc = read ? pgw_conn_read_now(conn->conn) : pgw_conn_flush(conn->conn);
    conn->io_now = 0;
    if (rc < 0) return pq__conn_run_ready(conn);
    /* A timer that is due wants a turn; the clock is read only when one is
     * set (-1: none). */
    int timeout = uv_backend_timeout(conn->loop);
    if (timeout > 0) {
        uv_update_time(conn->loop);
        timeout = uv_backend_timeout(conn->loop);
    }
    if (timeout == 0) return pq__conn_run_ready(conn);
    if (left) *left = rc;
    return uv_loop_alive(conn->loop);
}

/* A uv_stop outside a turn would make the next turn return at once, doing
 * nothing, and makes uv_backend_timeout 0. */
void pq__conn_wake(PGconn *conn)
{
    if (!conn->io_now) uv_stop(conn->loop);
}

int pq__conn_turn(PGconn *conn, uv_run_mode mode)
{
    if (conn->conn && pgw_conn_reading_paused(conn->conn) && conn->copy != PQ_COPY_OUT &&
        conn->copy != PQ_COPY_BOTH)
        pgw_conn_resume_reading(conn->conn);
    if (mode != UV_RUN_NOWAIT) return uv_run(conn->loop, mode);
    return conn_io_now(conn, 1, NULL);
}

static void find_write_interest(uv_handle_t *h, void *arg)
{
    /* uv_poll_t's io_watcher is part of libuv's public struct (unix): its
     * pevents hold the events the connection waits for. */
    if (h->type == UV_POLL && uv_is_active(h) && (((uv_poll_t *)h)->io_watcher.pevents & POLLOUT))
        *(int *)arg = 1;
}

int pq__output_pending(PGconn *conn)
{
    if (!conn->conn || conn->broken) return 0;
    size_t len = 0;
    pgw_session_pending_output(pgw_conn_session(conn->conn), &len);
    if (len) return 1;
    int writing = 0;
    uv_walk(conn->loop, find_write_interest, &writing);
    return writing;
}

/* Write what is queued: all of it (blocking mode, as libpq's PQsend* and
 * PQflush), or what the socket takes now (non-blocking). 1 when some is
 * left (non-blocking), else 0. */
int pq__conn_flush(PGconn *conn)
{
    int left;
    conn_io_now(conn, 0, &left);
    if (!left) return 0; /* the common case: no walk of the loop's handles */
    if (conn->nonblocking) return pq__output_pending(conn);
    while (pq__output_pending(conn))
        if (uv_run(conn->loop, UV_RUN_ONCE) == 0) break;
    return 0;
}

/* Run what the loop can do without waiting: more turns while work is
 * pending that no socket event would announce (output to write, handles
 * closing, deferred callbacks, the next attempt of a connect), so that a
 * program that then waits on PQsocket does not wait for what is already
 * here. */
int pq__conn_run_ready(PGconn *conn)
{
    int active = uv_run(conn->loop, UV_RUN_NOWAIT);
    /* A second turn writes what the input of the first made the session
     * answer (the connection flushes in the loop's prepare phase). */
    if (active) active = uv_run(conn->loop, UV_RUN_NOWAIT);
    for (int i = 0;
         active && i < 64 && (uv_backend_timeout(conn->loop) == 0 || pq__output_pending(conn)); i++)
        active = uv_run(conn->loop, UV_RUN_NOWAIT);
    return active;
}

void pq__conn_broken(PGconn *conn)
{
    conn->status = CONNECTION_BAD;
}

/* The connection's client encoding; escaping without a connection reads
 * the last encoding any connection reported. */
static void on_parameter(pgw_conn_t *c, pgw_str_t name, pgw_str_t value, void *ud)
{
    (void)c;
    PGconn *conn = ud;
    char n[64], v[256];
    if (name.len >= sizeof n) return; /* longer than any name read here */
    /* a value too long to copy is no encoding's name, nor "on" */
    size_t vlen = value.len < sizeof v ? value.len : 0;
    memcpy(n, name.p, name.len);
    n[name.len] = 0;
    memcpy(v, value.p, vlen);
    v[vlen] = 0;
    if (strcmp(n, "client_encoding") == 0) conn->client_encoding = pq__encoding_id(v);
    pq__note_parameter(n, v);
}

static void on_lost(pgw_conn_t *c, int err, void *ud)
{
    (void)c;
    (void)err;
    PGconn *conn = ud;
    /* PQstatus turns bad when a command reports it, as libpq notices a
     * closed connection only when it reads or writes. */
    conn->broken = 1;
    conn->fd = -1;
}

/* ------------------------------------------------------------- connect */

/* The numeric address of the last attempt (PQhostaddr: "" for a unix
 * socket, as libpq). */
static void note_hostaddr(PGconn *conn)
{
    size_t n = 0;
    const pgw_conn_attempt_t *a = pgw_conn_attempts(conn->conn, &n);
    free(conn->hostaddr_used);
    conn->hostaddr_used = NULL;
    if (n && a[n - 1].address && a[n - 1].address[0] && a[n - 1].address[0] != '/' &&
        a[n - 1].address[0] != '@')
        conn->hostaddr_used = strdup(a[n - 1].address);
}

/* libpq's password_needed: the server asked for a password
 * (PQconnectionUsedPassword; PQconnectionNeedsPassword when none was
 * given). */
static int server_asked_password(PGconn *conn, int status)
{
    if (status == 0) {
        const char *m = pgw_session_auth_method(pgw_conn_session(conn->conn));
        return m && (!strcmp(m, "password") || !strcmp(m, "md5") || !strncmp(m, "SCRAM", 5));
    }
    size_t n = 0;
    const pgw_conn_attempt_t *a = pgw_conn_attempts(conn->conn, &n);
    for (size_t i = 0; i < n; i++)
        if ((a[i].sqlstate && !strcmp(a[i].sqlstate, "28P01")) ||
            (a[i].message && strstr(a[i].message, "no password supplied")))
            return 1;
    return 0;
}

static void on_connected(pgw_conn_t *c, int status, const pgw_error_t *err, void *ud)
{
    (void)err;
    (void)c;
    PGconn *conn = ud;
    conn->connect_done = 1;
    conn->connecting = 0;
    conn->connect_status = status;
    conn->password_needed = server_asked_password(conn, status);
    note_hostaddr(conn);
    if (status == 0) {
        conn->status = CONNECTION_OK;
        conn->fd = pgw_conn_fd(c);
        if (conn->fd < 0) conn->fd = -1;
        pq__str_reset(&conn->errmsg);
        const char *h = pgw_conn_host(c), *p = pgw_conn_port(c);
        free(conn->host_used);
        free(conn->port_used);
        conn->host_used = strdup(h ? h : "");
        conn->port_used = strdup(p ? p : "");
        return;
    }
    conn->status = CONNECTION_BAD;
    const char *why = pgw_conn_error_message(c);
    pq__conn_set_error(conn, "%s\n", why && *why ? why : pgw_strerror(status));
}

static void conn_init(PGconn *conn)
{
    conn->status = CONNECTION_BAD;
    conn->fd = -1;
    conn->hooks.receiver = default_notice_receiver;
    conn->hooks.receiver_arg = conn;
    conn->hooks.processor = default_notice_processor;
    conn->hooks.processor_arg = NULL;
    conn->verbosity = PQERRORS_DEFAULT;
    conn->show_context = PQSHOW_CONTEXT_ERRORS;
    conn->pipeline = PQ_PIPELINE_OFF;
    conn->client_encoding = -1;
}

static void on_closed(pgw_conn_t *c, void *ud)
{
    (void)c;
    *(int *)ud = 1;
}

/* Close the pgw connection (its pending commands complete) and the loop's
 * handles. */
static void conn_close_transport(PGconn *conn)
{
    if (conn->conn) {
        int closed = 0;
        if (pgw_conn_close(conn->conn, on_closed, &closed) == 0)
            while (!closed && uv_run(conn->loop, UV_RUN_ONCE))
                ;
        conn->conn = NULL;
    }
    pq__pipeline_drop(conn);
    pq__cmds_free_all(conn);
    pq__copy_reset(conn);
    pgw_cancel_token_free(conn->cancel);
    conn->cancel = NULL;
    conn->status = CONNECTION_BAD;
    conn->fd = -1;
    conn->broken = 0;
    conn->pipeline = PQ_PIPELINE_OFF;
    conn->aborted_seg = 0;
}

/* An attempt of the connect began (its session made, its socket to come):
 * inside PQconnectStart its input is held (hold_input). */
static void on_attempt(pgw_conn_t *c, void *ud)
{
    PGconn *conn = ud;
    if (conn->hold_input) pgw_conn_pause_reading(c);
}

/* What PQconnectStart held is read from now on. */
static void release_input(PGconn *conn)
{
    if (conn->conn && pgw_conn_reading_paused(conn->conn)) pgw_conn_resume_reading(conn->conn);
}

/* libpq warns on stderr when the password file cannot be used (group or
 * world access, not a plain file), once per host of the list, as it looks
 * for each host's password while it reads the options (PQconnectStart,
 * PQconnectdb, PQping; not PQreset). */
static void warn_passfile(const pgw_conninfo_t *ci)
{
    const char *why = pgw_conninfo_passfile_warning(ci);
    if (!why) return;
    for (size_t i = pgw_conninfo_nhosts(ci); i > 0; i--)
        fprintf(stderr, "WARNING: %s\n", why);
}

/* Start connecting with conn->conninfo (first: a new connection, not a
 * reset). 1 when started, 0 on failure (the error message set, status
 * bad). */
static int conn_start(PGconn *conn, int first)
{
    if (!conn->loop) return 0; /* conn_new said why */
    conn->connect_done = 0;
    conn->connect_status = 0;
    conn->password_needed = 0;
    conn->trace_backend = 0;
    conn->client_encoding = -1;
    conn->rx_session = NULL;
    pq__str_reset(&conn->errmsg);
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.on_notice = on_notice;
    cfg.on_notification = pq__on_notification;
    cfg.on_lost = on_lost;
    cfg.on_parameter = on_parameter;
    cfg.on_trace = on_trace;
    cfg.ud = conn;
    cfg.stmt_cache_mode = PGW_STMT_CACHE_OFF;
    cfg.high_water_mark = SIZE_MAX;
    cfg.max_pending = SIZE_MAX;
    cfg.no_timing = 1;           /* libpq has no per-request timing */
    cfg.kernel_tcp_defaults = 1; /* nor dead-peer defaults for TCP */
    cfg.blocking_resolve = 1;    /* nor threads of its own */
    int rc = pgw_conn_new(&conn->conn, conn->loop, &cfg);
    if (rc < 0) {
        pq__conn_set_error(conn, "out of memory\n");
        return 0;
    }
    /* what the program sends concerns the tracer only under PQtrace */
    pgw_conn_trace_sent(conn->conn, conn->trace_file != NULL);
    pgw_conn_driver_t driver = {.on_attempt = on_attempt, .ud = conn};
    pgw_conn_set_driver(conn->conn, &driver);
    conn->status = CONNECTION_STARTED;
    conn->connecting = 1;
    pgw_conninfo_free(conn->ci);
    conn->ci = NULL;
    /* The loop's time is that of its last turn, which may be long ago: the
     * connect's timers count from now. */
    uv_update_time(conn->loop);
    /* Parsed once, for PQdb and the others and for the connection, which
     * borrows it: conn->ci is freed only after the connection is closed
     * (conn_close_transport). A string that does not parse goes to
     * pgw_conn_connect, which fails with libpq's words for it. */
    if (pgw_conninfo_parse(&conn->ci, conn->conninfo, NULL, NULL, 0) == 0) {
        if (first) warn_passfile(conn->ci);
        rc = pgw_conn_connect_parsed(conn->conn, conn->ci, on_connected, conn);
    } else
        rc = pgw_conn_connect(conn->conn, conn->conninfo, on_connected, conn);
    if (rc < 0) {
        const char *why = pgw_conn_error_message(conn->conn);
        pq__conn_set_error(conn, "%s\n", why && *why ? why : pgw_strerror(rc));
        conn->connecting = 0;
        conn->status = CONNECTION_BAD;
        return 0;
    }
    return 1;
}

static PGconn *conn_new(const char *conninfo)
{
    PGconn *conn = calloc(1, sizeof *conn);
    if (!conn) return NULL;
    conn_init(conn);
    int rc = 0;
    conn->loop = pgw__loop_take(&rc);
    if (!conn->loop) {
        /* Its descriptors could not be made (README: a loop holds four):
         * a connection that failed, as libpq's when its socket cannot be
         * made, rather than none. conn_start refuses to go on. */
        pq__conn_set_error(conn, "could not create socket: %s\n", strerror(-rc));
        return conn;
    }
    conn->conninfo = strdup(conninfo ? conninfo : "");
    if (!conn->conninfo) pq__conn_set_error(conn, "out of memory\n");
    return conn;
}

/* Block until the connect finished. */
static void conn_wait(PGconn *conn)
{
    release_input(conn);
    while (conn->connecting && !conn->connect_done)
        if (uv_run(conn->loop, UV_RUN_ONCE) == 0 && !conn->connect_done) break;
    if (conn->connecting && !conn->connect_done) {
        conn->connecting = 0;
        conn->status = CONNECTION_BAD;
    }
}

static void find_poll_fd(uv_handle_t *h, void *arg)
{
    uv_os_fd_t fd;
    if (h->type == UV_POLL && !uv_is_closing(h) && uv_fileno(h, &fd) == 0) *(int *)arg = fd;
}

/* The socket of the connect attempt in progress (the connection's
 * uv_poll_t, watched or not yet: a socket that connected at once is
 * watched from the loop's next turn), or -1 while there is none (a host
 * name being resolved). */
int pq__connecting_fd(const PGconn *conn)
{
    int fd = -1;
    uv_walk(conn->loop, find_poll_fd, &fd);
    return fd;
}

/* libpq's PQconnectStart and PQconnectPoll leave a socket to wait on:
 * wait here while the name resolves. The turn that makes the attempt's
 * socket (connected at once, it sends its first packet) also polls it;
 * inside PQconnectStart what the server answered by then stays in the
 * socket (hold_input), for PQconnectPoll to read as libpq's does, and so
 * does a refusal that came at once (pgw_conn_pause_reading). */
static void wait_for_socket(PGconn *conn, int hold)
{
    conn->hold_input = hold;
    /* (the first attempt's session was made before: conn_start) */
    if (hold && conn->connecting && !conn->connect_done) pgw_conn_pause_reading(conn->conn);
    while (conn->connecting && !conn->connect_done && pq__connecting_fd(conn) < 0) {
        uv_run_mode mode = uv_backend_timeout(conn->loop) == 0 ? UV_RUN_NOWAIT : UV_RUN_ONCE;
        if (uv_run(conn->loop, mode) == 0) break;
    }
    conn->hold_input = 0;
}

/* ----------------------------------------------- conninfo from params */

/* Append keyword='value' to s, quoted as a connection string wants. */
static void append_kv(pq_str_t *s, const char *kw, const char *val)
{
    if (s->len) pq__str_append(s, " ", 1);
    pq__str_append(s, kw, strlen(kw));
    pq__str_append(s, "='", 2);
    for (const char *p = val; *p; p++) {
        if (*p == '\'' || *p == '\\') pq__str_append(s, "\\", 1);
        pq__str_append(s, p, 1);
    }
    pq__str_append(s, "'", 1);
}

static int is_conninfo_string(const char *s)
{
    return strchr(s, '=') || !strncmp(s, "postgresql://", 13) || !strncmp(s, "postgres://", 11);
}

/* The connection string for keywords/values (libpq's conninfo_array_parse:
 * empty values are skipped; with expand_dbname the first dbname that is a
 * connection string is expanded in place). NULL with the error in errbuf. */
static char *params_to_conninfo(const char *const *keywords, const char *const *values,
                                int expand_dbname, pq_str_t *err)
{
    pq_str_t s = {0};
    pq__str_append(&s, "", 0);
    int expanded = 0;
    for (size_t i = 0; keywords && values && keywords[i]; i++) {
        const char *v = values[i];
        if (!v || !*v) continue;
        if (expand_dbname && !expanded && !strcmp(keywords[i], "dbname") && is_conninfo_string(v)) {
            expanded = 1;
            char *errmsg = NULL;
            PQconninfoOption *o = PQconninfoParse(v, &errmsg);
            if (!o) {
                if (errmsg) pq__str_appendf(err, "%s", errmsg);
                PQfreemem(errmsg);
                pq__str_free(&s);
                return NULL;
            }
            for (PQconninfoOption *p = o; p->keyword; p++)
                if (p->val && *p->val) append_kv(&s, p->keyword, p->val);
            PQconninfoFree(o);
            continue;
        }
        append_kv(&s, keywords[i], v);
    }
    return s.data;
}

static PGconn *start_params(const char *const *keywords, const char *const *values,
                            int expand_dbname)
{
    pq_str_t err = {0};
    char *ci = params_to_conninfo(keywords, values, expand_dbname, &err);
    PGconn *conn = conn_new(ci ? ci : "");
    free(ci);
    if (!conn) {
        pq__str_free(&err);
        return NULL;
    }
    if (!ci) {
        pq__conn_set_error(conn, "%s", err.data ? err.data : "out of memory\n");
        pq__str_free(&err);
        return conn;
    }
    pq__str_free(&err);
    if (conn->conninfo) conn_start(conn, 1);
    return conn;
}

PGconn *PQconnectStartParams(const char *const *keywords, const char *const *values,
                             int expand_dbname)
{
    PGconn *conn = start_params(keywords, values, expand_dbname);
    if (conn) wait_for_socket(conn, 1);
    return conn;
}

PGconn *PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname)
{
    PGconn *conn = start_params(keywords, values, expand_dbname);
    if (conn) conn_wait(conn);
    return conn;
}

PGconn *PQconnectStart(const char *conninfo)
{
    PGconn *conn = conn_new(conninfo);
    if (conn && conn->conninfo && conn_start(conn, 1)) wait_for_socket(conn, 1);
    return conn;
}

/* As PQconnectdbParams: nothing to hold for a PQconnectPoll (which would
 * cost a pause and a resume of the socket's watch). */
PGconn *PQconnectdb(const char *conninfo)
{
    PGconn *conn = conn_new(conninfo);
    if (conn && conn->conninfo && conn_start(conn, 1)) conn_wait(conn);
    return conn;
}

PGconn *PQsetdbLogin(const char *pghost, const char *pgport, const char *pgoptions,
                     const char *pgtty, const char *dbName, const char *login, const char *pwd)
{
    (void)pgtty;
    const char *kw[] = {"host", "port", "options", "dbname", "user", "password", NULL};
    const char *val[] = {pghost, pgport, pgoptions, dbName, login, pwd, NULL};
    PGconn *conn = start_params(kw, val, 1);
    if (conn) conn_wait(conn);
    return conn;
}

PostgresPollingStatusType PQconnectPoll(PGconn *conn)
{
    if (!conn) return PGRES_POLLING_FAILED;
    if (conn->connecting && !conn->connect_done) {
        release_input(conn);
        pq__conn_run_ready(conn);
        wait_for_socket(conn, 0);
    }
    if (conn->status == CONNECTION_OK) return PGRES_POLLING_OK;
    if (!conn->connecting || conn->connect_done) return PGRES_POLLING_FAILED;
    /* connect() in progress: writable when done; else the server's turn */
    return pgw_conn_phase(conn->conn) == PGW_PHASE_CONNECTING ? PGRES_POLLING_WRITING
                                                              : PGRES_POLLING_READING;
}

ConnStatusType PQstatus(const PGconn *conn)
{
    return conn ? conn->status : CONNECTION_BAD;
}

void PQfinish(PGconn *conn)
{
    if (!conn) return;
    conn_close_transport(conn);
    if (conn->loop) {
        /* until nothing is left closing (a uv_stop made outside a turn
         * ends a run early) */
        while (uv_run(conn->loop, UV_RUN_DEFAULT) != 0)
            ;
        pgw__loop_give(conn->loop);
    }
    while (conn->spare_cmds) {
        pq_cmd_t *next = conn->spare_cmds->next;
        free(conn->spare_cmds);
        conn->spare_cmds = next;
    }
    pq__conn_events_free(conn);
    pq__notifies_free(conn);
    pq__str_free(&conn->errmsg);
    free(conn->conninfo);
    pgw_conninfo_free(conn->ci);
    free(conn->host_used);
    free(conn->port_used);
    free(conn->hostaddr_used);
    free(conn);
}

int PQresetStart(PGconn *conn)
{
    if (!conn) return 0;
    conn_close_transport(conn);
    if (!conn_start(conn, 0)) return 0;
    wait_for_socket(conn, 1);
    return 1;
}

PostgresPollingStatusType PQresetPoll(PGconn *conn)
{
    PostgresPollingStatusType st = PQconnectPoll(conn);
    if (st == PGRES_POLLING_OK) pq__conn_fire_reset(conn);
    return st;
}

void PQreset(PGconn *conn)
{
    if (!PQresetStart(conn)) return;
    conn_wait(conn);
    if (conn->status == CONNECTION_OK) pq__conn_fire_reset(conn);
}

/* -------------------------------------------------------------- ping */

static PGPing ping_conn(PGconn *conn)
{
    if (!conn) return PQPING_NO_ATTEMPT;
    PGPing r = PQPING_OK;
    if (conn->status != CONNECTION_OK) {
        size_t n = 0;
        const pgw_conn_attempt_t *a = conn->conn ? pgw_conn_attempts(conn->conn, &n) : NULL;
        r = PQPING_NO_RESPONSE;
        /* libpq reads a port or a timeout that is not a number once the
         * options were accepted: that is no response, not no attempt */
        if ((!a || !n) && strncmp(PQerrorMessage(conn), "invalid integer value", 21))
            r = PQPING_NO_ATTEMPT;
        for (size_t i = 0; i < n; i++) {
            /* The server answered: it is up, even if it refused us
             * (unless it is starting up). */
            if (a[i].status == PGW_ESERVER || a[i].status == PGW_EAUTH ||
                a[i].status == PGW_EAUTHPOLICY) {
                r = a[i].sqlstate && !strcmp(a[i].sqlstate, "57P03") ? PQPING_REJECT : PQPING_OK;
                break;
            }
        }
    }
    PQfinish(conn);
    return r;
}

PGPing PQping(const char *conninfo)
{
    return ping_conn(PQconnectdb(conninfo));
}

PGPing PQpingParams(const char *const *keywords, const char *const *values, int expand_dbname)
{
    return ping_conn(PQconnectdbParams(keywords, values, expand_dbname));
}
