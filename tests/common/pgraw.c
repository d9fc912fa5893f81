/* pgraw: a tiny blocking test client over the codec (see pgraw.h). */
#define _POSIX_C_SOURCE 200809L
#include "pgraw.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "pgtest.h"

#define DEFAULT_TIMEOUT_MS 120000
#define READ_CHUNK         16384

static const uint8_t empty_bytes[1];

char *pgt_view_cstr(pgw_view_t v, char *dst, size_t n)
{
    size_t len = v.len > 0 ? (size_t)v.len : 0;
    if (n == 0) return dst;
    if (len > n - 1) len = n - 1;
    if (len > 0) memcpy(dst, v.p, len);
    dst[len] = '\0';
    return dst;
}

static void io_fail(pgt_raw_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->io_error, sizeof r->io_error, fmt, ap);
    va_end(ap);
}

/* ---- socket ---------------------------------------------------------- */

static void set_timeouts(int fd, int timeout_ms)
{
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static int open_unix(pgt_raw_t *r, const char *dir, const char *port)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    int n = snprintf(sa.sun_path, sizeof sa.sun_path, "%s/.s.PGSQL.%s", dir, port);
    if (n < 0 || (size_t)n >= sizeof sa.sun_path) {
        io_fail(r, "socket path too long: %s/.s.PGSQL.%s", dir, port);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) {
        io_fail(r, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        io_fail(r, "connect %s: %s", sa.sun_path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int open_tcp(pgt_raw_t *r, const char *host, const char *port)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        io_fail(r, "getaddrinfo %s:%s: %s", host, port, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    io_fail(r, "no address for %s:%s", host, port);
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            io_fail(r, "connect %s:%s: %s", host, port, strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

static int send_all(pgt_raw_t *r)
{
    size_t off = 0;
    while (off < r->out.len) {
        ssize_t n = send(r->fd, r->out.data + off, r->out.len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            io_fail(r, "send: %s", n < 0 ? strerror(errno) : "no progress");
            return -1;
        }
        off += (size_t)n;
    }
    pgw_buf_reset(&r->out);
    return 0;
}

void pgt_raw_send(pgt_raw_t *r)
{
    if (send_all(r) != 0) fail_msg("pgraw: %s", r->io_error);
}

/* ---- reading ----------------------------------------------------------- */

/* Receive more bytes so that at least need unread bytes can be held. */
static int fill(pgt_raw_t *r, size_t need)
{
    if (r->in_pos > 0) {
        pgw_buf_consume(&r->in, r->in_pos); /* views of older messages die here */
        r->in_pos = 0;
    }
    size_t extra = need > r->in.len ? need - r->in.len : 0;
    if (extra < READ_CHUNK) extra = READ_CHUNK;
    if (pgw_buf_reserve(&r->in, extra) != 0) {
        io_fail(r, "cannot buffer %zu bytes", need);
        return -1;
    }
    for (;;) {
        ssize_t n = recv(r->fd, r->in.data + r->in.len, r->in.cap - r->in.len, 0);
        if (n > 0) {
            r->in.len += (size_t)n;
            return 1;
        }
        if (n == 0) return 0;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            io_fail(r, "no answer from the server within %d ms", r->timeout_ms);
        } else {
            io_fail(r, "recv: %s", strerror(errno));
        }
        return -1;
    }
}

int pgt_raw_read(pgt_raw_t *r, pgw_msg_t *m)
{
    for (;;) {
        size_t avail = r->in.len - r->in_pos;
        const uint8_t *p = avail > 0 ? r->in.data + r->in_pos : empty_bytes;
        size_t need = 0;
        int64_t rc = pgw_decoder_next(&r->dec, p, avail, m, &need);
        if (rc > 0) {
            r->in_pos += (size_t)rc;
            return 1;
        }
        if (rc != PGW_EAGAIN) {
            io_fail(r, "codec error %s at stream offset %llu", pgw_err_name((int)rc),
                    (unsigned long long)r->dec.err_offset);
            return -1;
        }
        int got = fill(r, need);
        if (got < 0) return -1;
        if (got == 0) {
            if (avail == 0) {
                io_fail(r, "the server closed the connection");
                return 0;
            }
            io_fail(r, "the server closed the connection inside a message");
            return -1;
        }
    }
}

void pgt_raw_next(pgt_raw_t *r, pgw_msg_t *m)
{
    if (pgt_raw_read(r, m) != 1) fail_msg("pgraw: %s", r->io_error);
}

void pgt_raw_expect(pgt_raw_t *r, uint8_t t, pgw_msg_t *m)
{
    pgt_raw_next(r, m);
    if (m->type != t) {
        char detail[300] = "";
        if (m->type == PGW_B_ERROR) {
            pgw_error_fields_t ef;
            if (pgw_error_fields_parse(m, &ef) == 0) {
                char state[6], msg[256];
                snprintf(detail, sizeof detail, ": %s %s", pgt_view_cstr(ef.sqlstate, state, 6),
                         pgt_view_cstr(ef.message, msg, sizeof msg));
            }
        }
        fail_msg("pgraw: expected message '%c', got '%c'%s", t, m->type, detail);
    }
}

/* ---- state kept from asynchronous messages ----------------------------- */

static char *dup_str(pgw_str_t s)
{
    char *d = malloc(s.len + 1);
    assert_non_null(d);
    if (s.len > 0) memcpy(d, s.p, s.len);
    d[s.len] = '\0';
    return d;
}

static void record_param(pgt_raw_t *r, const pgw_msg_t *m)
{
    pgw_str_t name = m->u.param_status.name;
    for (size_t i = 0; i < r->nparams; i++) {
        if (strlen(r->param_names[i]) == name.len &&
            memcmp(r->param_names[i], name.p, name.len) == 0) {
            free(r->param_values[i]);
            r->param_values[i] = dup_str(m->u.param_status.value);
            return;
        }
    }
    if (r->nparams == PGT_RAW_MAX_PARAMS) return;
    r->param_names[r->nparams] = dup_str(name);
    r->param_values[r->nparams] = dup_str(m->u.param_status.value);
    r->nparams++;
}

const char *pgt_raw_param(const pgt_raw_t *r, const char *name)
{
    for (size_t i = 0; i < r->nparams; i++) {
        if (strcmp(r->param_names[i], name) == 0) return r->param_values[i];
    }
    return NULL;
}

static void error_text(const pgw_msg_t *m, char *state, size_t state_n, char *msg, size_t msg_n)
{
    pgw_error_fields_t ef;
    if (pgw_error_fields_parse(m, &ef) != 0) fail_msg("pgraw: malformed ErrorResponse/Notice");
    pgt_view_cstr(ef.sqlstate, state, state_n);
    pgt_view_cstr(ef.message, msg, msg_n);
}

/* Handle messages that may arrive at any time. Returns 1 if m was one. */
static int handle_async(pgt_raw_t *r, const pgw_msg_t *m)
{
    switch (m->type) {
    case PGW_B_PARAM_STATUS:
        record_param(r, m);
        return 1;
    case PGW_B_NOTICE:
        r->nnotices++;
        error_text(m, r->notice_sqlstate, sizeof r->notice_sqlstate, r->notice_message,
                   sizeof r->notice_message);
        return 1;
    case PGW_B_NOTIFICATION:
        r->nnotifications++;
        return 1;
    default:
        return 0;
    }
}

/* ---- connect ----------------------------------------------------------- */

static int startup(pgt_raw_t *r, const pgt_raw_opts_t *o, const char *user, const char *db)
{
    size_t npairs = 3 + o->nparams;
    const char **pairs = calloc(2 * npairs, sizeof *pairs);
    assert_non_null(pairs);
    pairs[0] = "user";
    pairs[1] = user;
    pairs[2] = "database";
    pairs[3] = db;
    pairs[4] = "application_name";
    pairs[5] = "pgwire-tests";
    for (size_t i = 0; i < 2 * o->nparams; i++)
        pairs[6 + i] = o->params[i];
    int rc = pgw_enc_startup(&r->out, o->version ? o->version : PGW_PROTO_3_0, pairs, npairs);
    free(pairs);
    if (rc != 0) {
        io_fail(r, "encoding StartupMessage: %s", pgw_err_name(rc));
        return -1;
    }
    if (send_all(r) != 0) return -1;

    for (;;) {
        pgw_msg_t m;
        if (pgt_raw_read(r, &m) != 1) return -1;
        if (handle_async(r, &m)) continue;
        switch (m.type) {
        case PGW_B_AUTH:
            if (m.u.auth.code == PGW_AUTH_OK) break;
            if (m.u.auth.code == PGW_AUTH_CLEARTEXT && o->password != NULL) {
                if (pgw_enc_password(&r->out, o->password) != 0 || send_all(r) != 0) return -1;
                break;
            }
            io_fail(r,
                    "authentication request %d not supported by pgraw (trust or password "
                    "only)",
                    (int)m.u.auth.code);
            return -1;
        case PGW_B_BACKEND_KEY:
            r->backend_pid = m.u.backend_key.pid;
            r->cancel_key_len = m.u.backend_key.key_len;
            if (r->cancel_key_len > sizeof r->cancel_key) r->cancel_key_len = sizeof r->cancel_key;
            memcpy(r->cancel_key, m.u.backend_key.key, r->cancel_key_len);
            break;
        case PGW_B_NEGOTIATE_VERSION:
            break; /* the server goes on with the version it supports */
        case PGW_B_ERROR: {
            char state[6], msg[200];
            error_text(&m, state, sizeof state, msg, sizeof msg);
            io_fail(r, "server refused the connection: %s %s", state, msg);
            return -1;
        }
        case PGW_B_READY:
            r->txn_status = m.u.ready.status;
            return 0;
        default:
            io_fail(r, "unexpected message '%c' during startup", m.type);
            return -1;
        }
    }
}

/* The connection target of opts, with the env's defaults. */
typedef struct target {
    const char *host, *port, *user, *db;
} target_t;

static int resolve_target(const pgt_raw_opts_t *o, target_t *t, char *err, size_t errlen)
{
    t->host = o->host ? o->host : pgt_env("PGHOST");
    t->port = o->port ? o->port : pgt_env("PGPORT");
    t->user = o->user ? o->user : pgt_env("PGUSER");
    t->db = o->database ? o->database : pgt_env("PGDATABASE");
    if (t->host == NULL || t->port == NULL || t->user == NULL) {
        snprintf(err, errlen, "no server configured (PGHOST/PGPORT/PGUSER unknown)");
        return -1;
    }
    if (t->db == NULL) t->db = t->user;
    return 0;
}

static pgt_raw_t *open_target(const target_t *t, char *err, size_t errlen)
{
    pgt_raw_t *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->timeout_ms = DEFAULT_TIMEOUT_MS;
    pgw_decoder_init(&r->dec, 0);
    pgw_buf_init(&r->in, NULL);
    pgw_buf_init(&r->out, NULL);
    r->fd = t->host[0] == '/' ? open_unix(r, t->host, t->port) : open_tcp(r, t->host, t->port);
    if (r->fd < 0) {
        snprintf(err, errlen, "%s", r->io_error);
        pgt_raw_close(r);
        return NULL;
    }
    set_timeouts(r->fd, r->timeout_ms);
    return r;
}

pgt_raw_t *pgt_raw_open(const pgt_raw_opts_t *opts)
{
    static const pgt_raw_opts_t no_opts;
    target_t t;
    char err[300];
    pgt_require_server();
    if (resolve_target(opts ? opts : &no_opts, &t, err, sizeof err) != 0)
        fail_msg("pgraw: %s", err);
    pgt_raw_t *r = open_target(&t, err, sizeof err);
    if (r == NULL) fail_msg("pgraw: %s", err);
    return r;
}

int pgt_raw_socket(const char *host)
{
    pgt_raw_opts_t o = {.host = host};
    pgt_raw_t *r = pgt_raw_open(&o);
    int fd = r->fd;
    r->fd = -1; /* the caller's: nothing is sent, nothing closed */
    pgt_raw_close(r);
    return fd;
}

int pgt_raw_try_connect(const pgt_raw_opts_t *opts, pgt_raw_t **out, char *err, size_t errlen)
{
    static const pgt_raw_opts_t no_opts;
    const pgt_raw_opts_t *o = opts ? opts : &no_opts;
    target_t t;
    *out = NULL;
    if (resolve_target(o, &t, err, errlen) != 0) return -1;
    pgt_raw_t *r = open_target(&t, err, errlen);
    if (r == NULL) return -1;
    if (startup(r, o, t.user, t.db) != 0) {
        snprintf(err, errlen, "%s", r->io_error);
        pgt_raw_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

pgt_raw_t *pgt_raw_connect_with(const pgt_raw_opts_t *opts)
{
    pgt_require_server();
    pgt_raw_t *r;
    char err[300];
    if (pgt_raw_try_connect(opts, &r, err, sizeof err) != 0) fail_msg("pgraw connect: %s", err);
    return r;
}

pgt_raw_t *pgt_raw_connect(void)
{
    return pgt_raw_connect_with(NULL);
}

void pgt_raw_close(pgt_raw_t *r)
{
    if (r == NULL) return;
    if (r->fd >= 0) {
        pgw_buf_reset(&r->out);
        if (pgw_enc_terminate(&r->out) == 0) (void)send_all(r);
        close(r->fd);
    }
    for (size_t i = 0; i < r->nparams; i++) {
        free(r->param_names[i]);
        free(r->param_values[i]);
    }
    pgw_buf_free(&r->in);
    pgw_buf_free(&r->out);
    free(r);
}

/* ---- queries ----------------------------------------------------------- */

static void clear_error(pgt_raw_t *r)
{
    r->sqlstate[0] = '\0';
    r->message[0] = '\0';
}

/* Keep the first ErrorResponse of a request in r. */
static void record_error(pgt_raw_t *r, const pgw_msg_t *m)
{
    if (r->sqlstate[0] != '\0') return;
    error_text(m, r->sqlstate, sizeof r->sqlstate, r->message, sizeof r->message);
    if (r->sqlstate[0] == '\0') snprintf(r->sqlstate, sizeof r->sqlstate, "?????");
}

static void encode_ok(int rc, const char *what)
{
    if (rc != 0) fail_msg("pgraw: encoding %s failed: %s", what, pgw_err_name(rc));
}

int pgt_raw_exec(pgt_raw_t *r, const char *sql)
{
    clear_error(r);
    encode_ok(pgw_enc_query(&r->out, sql, strlen(sql), 0), "Query");
    pgt_raw_send(r);
    for (;;) {
        pgw_msg_t m;
        pgt_raw_next(r, &m);
        if (handle_async(r, &m)) continue;
        switch (m.type) {
        case PGW_B_ERROR:
            record_error(r, &m);
            break;
        case PGW_B_READY:
            r->txn_status = m.u.ready.status;
            return r->sqlstate[0] != '\0' ? -1 : 0;
        case PGW_B_ROW_DESC:
        case PGW_B_DATA_ROW:
        case PGW_B_COMMAND_COMPLETE:
        case PGW_B_EMPTY_QUERY:
        case PGW_B_COPY_OUT:
        case PGW_B_COPY_DATA:
        case PGW_B_COPY_DONE:
            break;
        case PGW_B_COPY_IN:
            encode_ok(pgw_enc_copy_fail(&r->out, "pgraw does not send COPY data"), "CopyFail");
            pgt_raw_send(r);
            break;
        default:
            fail_msg("pgraw: unexpected message '%c' after a simple query", m.type);
        }
    }
}

void pgt_raw_exec_ok(pgt_raw_t *r, const char *sql)
{
    if (pgt_raw_exec(r, sql) != 0) {
        fail_msg("pgraw: \"%s\" failed: %s %s", sql, r->sqlstate, r->message);
    }
}

/* Where a cell's bytes are in the result's data while it is being built. */
typedef struct cell_pos {
    size_t off;
    int32_t len;
} cell_pos_t;

typedef struct rows_builder {
    pgw_buf_t data;
    cell_pos_t *cells;
    size_t ncells, cap;
} rows_builder_t;

static void set_columns(pgt_rows_t *out, const pgw_msg_t *m)
{
    int n = m->u.row_desc.nfields;
    out->ncols = n;
    out->col_oids = calloc((size_t)n + 1, sizeof *out->col_oids);
    out->col_formats = calloc((size_t)n + 1, sizeof *out->col_formats);
    out->col_names = calloc((size_t)n + 1, sizeof *out->col_names);
    assert_true(out->col_oids && out->col_formats && out->col_names);
    pgw_rowdesc_iter_t it;
    pgw_rowdesc_iter_init(&it, m);
    for (int i = 0; i < n; i++) {
        pgw_field_desc_t fd;
        if (pgw_rowdesc_iter_next(&it, &fd) != 1) fail_msg("pgraw: bad RowDescription");
        out->col_oids[i] = fd.type_oid;
        out->col_formats[i] = fd.format;
        out->col_names[i] = dup_str(fd.name);
    }
}

static void add_row(rows_builder_t *b, pgt_rows_t *out, const pgw_msg_t *m)
{
    if ((int)m->u.data_row.ncols != out->ncols) {
        fail_msg("pgraw: DataRow has %d columns, RowDescription %d", (int)m->u.data_row.ncols,
                 out->ncols);
    }
    if (b->ncells + (size_t)out->ncols > b->cap) {
        b->cap = (b->cap ? 2 * b->cap : 64) + (size_t)out->ncols;
        b->cells = realloc(b->cells, b->cap * sizeof *b->cells);
        assert_non_null(b->cells);
    }
    pgw_row_iter_t it;
    pgw_row_iter_init(&it, m);
    pgw_view_t v;
    for (int i = 0; i < out->ncols; i++) {
        if (pgw_row_iter_next(&it, &v) != 1) fail_msg("pgraw: malformed DataRow");
        cell_pos_t *c = &b->cells[b->ncells++];
        c->off = b->data.len;
        c->len = v.len;
        if (v.len > 0 && pgw_buf_append(&b->data, v.p, (size_t)v.len) != 0) {
            fail_msg("pgraw: out of memory copying a row");
        }
    }
    if (pgw_row_iter_next(&it, &v) != 0) fail_msg("pgraw: DataRow has trailing bytes");
    out->nrows++;
}

static void finish_rows(rows_builder_t *b, pgt_rows_t *out)
{
    out->data = malloc(b->data.len + 1);
    assert_non_null(out->data);
    if (b->data.len > 0) memcpy(out->data, b->data.data, b->data.len);
    out->cells = calloc(b->ncells + 1, sizeof *out->cells);
    assert_non_null(out->cells);
    for (size_t i = 0; i < b->ncells; i++) {
        out->cells[i].len = b->cells[i].len;
        out->cells[i].p = b->cells[i].len < 0 ? NULL : out->data + b->cells[i].off;
    }
    pgw_buf_free(&b->data);
    free(b->cells);
}

int pgt_raw_query(pgt_raw_t *r, const char *sql, int nparams, const uint32_t *param_oids,
                  const pgw_view_t *params, const int16_t *param_formats, int result_format,
                  pgt_rows_t *out)
{
    memset(out, 0, sizeof *out);
    assert_true(nparams >= 0 && nparams <= UINT16_MAX);
    assert_true(nparams == 0 || params != NULL);
    clear_error(r);
    uint16_t np = (uint16_t)nparams;
    int16_t rfmt = (int16_t)result_format;
    encode_ok(pgw_enc_parse(&r->out, "", sql, strlen(sql), param_oids, param_oids ? np : 0, 0),
              "Parse");
    encode_ok(pgw_enc_bind(&r->out, "", "", param_formats, param_formats ? np : 0, params, np,
                           &rfmt, 1, 0),
              "Bind");
    encode_ok(pgw_enc_describe(&r->out, 'P', ""), "Describe");
    encode_ok(pgw_enc_execute(&r->out, "", 0), "Execute");
    encode_ok(pgw_enc_sync(&r->out), "Sync");
    pgt_raw_send(r);

    rows_builder_t b;
    memset(&b, 0, sizeof b);
    pgw_buf_init(&b.data, NULL);
    for (;;) {
        pgw_msg_t m;
        pgt_raw_next(r, &m);
        if (handle_async(r, &m)) continue;
        switch (m.type) {
        case PGW_B_PARSE_COMPLETE:
        case PGW_B_BIND_COMPLETE:
        case PGW_B_NO_DATA:
        case PGW_B_EMPTY_QUERY:
            break;
        case PGW_B_ROW_DESC:
            set_columns(out, &m);
            break;
        case PGW_B_DATA_ROW:
            add_row(&b, out, &m);
            break;
        case PGW_B_COMMAND_COMPLETE: {
            pgw_str_t tag = m.u.command_complete.tag;
            size_t n = tag.len < sizeof out->command_tag ? tag.len : sizeof out->command_tag - 1;
            memcpy(out->command_tag, tag.p, n);
            out->command_tag[n] = '\0';
            break;
        }
        case PGW_B_ERROR:
            record_error(r, &m);
            break;
        case PGW_B_READY:
            r->txn_status = m.u.ready.status;
            finish_rows(&b, out);
            memcpy(out->sqlstate, r->sqlstate, sizeof out->sqlstate);
            memcpy(out->message, r->message, sizeof out->message);
            return r->sqlstate[0] != '\0' ? -1 : 0;
        default:
            fail_msg("pgraw: unexpected message '%c' in an extended query", m.type);
        }
    }
}

int pgt_raw_query0(pgt_raw_t *r, const char *sql, int result_format, pgt_rows_t *out)
{
    return pgt_raw_query(r, sql, 0, NULL, NULL, NULL, result_format, out);
}

pgw_view_t pgt_rows_cell(const pgt_rows_t *rows, size_t row, int col)
{
    if (row >= rows->nrows || col < 0 || col >= rows->ncols) {
        fail_msg("pgraw: cell (%zu, %d) outside a %zu x %d result", row, col, rows->nrows,
                 rows->ncols);
    }
    return rows->cells[row * (size_t)rows->ncols + (size_t)col];
}

int pgt_cell_is_text(pgw_view_t cell, const char *s)
{
    size_t n = strlen(s);
    return cell.len >= 0 && (size_t)cell.len == n && (n == 0 || memcmp(cell.p, s, n) == 0);
}

void pgt_rows_free(pgt_rows_t *rows)
{
    if (rows == NULL) return;
    for (int i = 0; rows->col_names != NULL && i < rows->ncols; i++)
        free(rows->col_names[i]);
    free(rows->col_names);
    free(rows->col_oids);
    free(rows->col_formats);
    free(rows->cells);
    free(rows->data);
    memset(rows, 0, sizeof *rows);
}
