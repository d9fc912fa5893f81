/*
 * The sans-IO TLS engine (tls.h, SANS-IO TLS) driven as a binding drives
 * it: the test owns a TCP socket to the real server, moves the bytes
 * between it, the engine and the sans-IO session, and follows what the
 * engine says about methods. Against the cluster's TLS (its own CA):
 *   - verify-full: the login runs over TLS (pg_stat_ssl says so, with the
 *     protocol pgw_tls_get_info gives), and SCRAM-SHA-256-PLUS with
 *     channel_binding=require binds to the engine's certificate hash;
 *   - a host name the certificate does not name fails the handshake, and
 *     libpq fails the same connection string;
 *   - sslmode=prefer for a role the server accepts only without TLS: the
 *     TLS login is refused, pgw_tls_next_method says plaintext, which
 *     succeeds; sslmode=allow for a role accepted only over TLS: plaintext
 *     first, then TLS; each as libpq connects the same strings;
 *   - sslmode=require with a Unix-domain socket, sslmode=disable: plaintext,
 *     nothing after; bytes stuffed behind the server's 'S', and an 'E'
 *     answer, are refused and end the connect, also under prefer.
 */
#define _POSIX_C_SOURCE 200809L
#include "pgraw.h"
#include "pgtest.h"
#include "pgwire/proto.h"
#include "pgwire/session.h"
#include "pgwire/tls.h"

#include <libpq-fe.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

/* ------------------------------------------------------------- the driver */

typedef struct wire {
    int fd;
    pgw_tls_t *tls; /* NULL: plaintext */
    pgw_session_t *s;
    int startup_done, startup_status, answered;
    char startup_message[256];
    pgw_result_t *res;
} wire_t;

static void send_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) return; /* the server closed: the reads will say so */
        p += w;
        n -= (size_t)w;
    }
}

/* Bytes read (0 at EOF); fails the test after 10 s without any. */
static size_t recv_some(int fd, uint8_t *buf, size_t cap)
{
    struct pollfd p = {fd, POLLIN, 0};
    assert_true(poll(&p, 1, 10000) == 1);
    ssize_t r = recv(fd, buf, cap, 0);
    return r > 0 ? (size_t)r : 0;
}

static void tls_flush(wire_t *w)
{
    size_t n;
    const uint8_t *p;
    while ((p = pgw_tls_output(w->tls, &n)) && n) {
        send_all(w->fd, p, n);
        pgw_tls_output_consumed(w->tls, n);
    }
}

/* Ciphertext from the socket into the engine (EOF told). */
static void tls_fill(wire_t *w)
{
    uint8_t buf[16384];
    size_t n = recv_some(w->fd, buf, sizeof buf), off = 0;
    if (n == 0) pgw_tls_input_eof(w->tls);
    while (off < n) {
        size_t used = 0;
        assert_int_equal(pgw_tls_feed(w->tls, buf + off, n - off, &used), 0);
        assert_true(used > 0);
        off += used;
    }
}

static int handshake(wire_t *w)
{
    for (;;) {
        int rc = pgw_tls_handshake(w->tls);
        tls_flush(w);
        if (rc != PGW_EAGAIN) return rc;
        tls_fill(w);
    }
}

/* The start of an attempt with method m on a new socket: SSLRequest and
 * the answer, the handshake. Returns 0 (TLS up, or plaintext: w->tls
 * then no longer carries the bytes) or the failure. */
static int negotiate(wire_t *w, pgw_tls_method_t m)
{
    w->fd = pgt_raw_socket(pgt_env_required("PGW_TEST_TCP_HOST"));
    if (m == PGW_TLS_START_PLAIN) return 0;
    if (m == PGW_TLS_START_REQUEST) {
        pgw_buf_t b;
        pgw_buf_init(&b, NULL);
        assert_int_equal(pgw_enc_ssl_request(&b), 0);
        send_all(w->fd, b.data, b.len);
        pgw_buf_free(&b);
        uint8_t answer[64];
        size_t n = recv_some(w->fd, answer, sizeof answer);
        assert_true(n > 0);
        int rc = pgw_tls_answer(w->tls, answer, n);
        if (rc == PGW_TLS_PLAINTEXT) return 0;
        if (rc != PGW_TLS_HANDSHAKE) return rc;
    }
    return handshake(w);
}

static int over_tls(const wire_t *w, pgw_tls_method_t m)
{
    pgw_tls_info_t info;
    return m != PGW_TLS_START_PLAIN && pgw_tls_get_info(w->tls, &info) == 0 && info.in_use;
}

static void on_startup(pgw_session_t *s, int status, const pgw_error_t *err, void *ud)
{
    (void)s;
    wire_t *w = ud;
    w->startup_done = 1;
    w->startup_status = status;
    if (err && err->message)
        snprintf(w->startup_message, sizeof w->startup_message, "%s", err->message);
}

static int channel_binding(pgw_session_t *s, const uint8_t **data, size_t *len, void *ud)
{
    (void)s;
    wire_t *w = ud;
    return pgw_tls_channel_binding(w->tls, data, len) == 0 ? 0 : -1;
}

/* Move bytes until *flag is set or the session breaks. */
static void pump(wire_t *w, int tls, const int *flag)
{
    while (!*flag && pgw_session_state(w->s) != PGW_SESSION_BROKEN) {
        size_t olen, took;
        const uint8_t *out = pgw_session_pending_output(w->s, &olen);
        if (olen && tls) {
            assert_int_equal(pgw_tls_write(w->tls, out, olen, &took), 0);
            pgw_session_consumed_output(w->s, took);
            tls_flush(w);
            continue;
        }
        if (olen) {
            send_all(w->fd, out, olen);
            pgw_session_consumed_output(w->s, olen);
            continue;
        }
        uint8_t *in;
        size_t cap, got = 0;
        if (tls) {
            tls_fill(w);
            int rc = 0;
            while (pgw_session_input_buffer(w->s, &in, &cap) == 0 &&
                   (rc = pgw_tls_read(w->tls, in, cap, &got)) == 0)
                if (pgw_session_input_commit(w->s, got) < 0) break;
            tls_flush(w);
            if (rc == PGW_ECONNLOST) pgw_session_fail(w->s, PGW_ECONNLOST);
            continue;
        }
        assert_int_equal(pgw_session_input_buffer(w->s, &in, &cap), 0);
        got = recv_some(w->fd, in, cap);
        if (got == 0)
            pgw_session_fail(w->s, PGW_ECONNLOST);
        else
            (void)pgw_session_input_commit(w->s, got);
    }
}

/* Log in as user (password, channel_binding as given) over the attempt's
 * transport. Returns the startup status. */
static int login(wire_t *w, int tls, const char *user, const char *password, const char *cb)
{
    const char *params[] = {"user", user, "database", pgt_env_required("PGDATABASE")};
    pgw_session_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = 2;
    cfg.password = password;
    cfg.channel_binding = cb;
    cfg.cb.on_startup = on_startup;
    if (tls) cfg.cb.channel_binding = channel_binding;
    cfg.ud = w;
    w->startup_done = 0;
    assert_int_equal(pgw_session_new(&w->s, &cfg), 0);
    assert_int_equal(pgw_session_start(w->s), 0);
    pump(w, tls, &w->startup_done);
    return w->startup_done ? w->startup_status : pgw_session_error(w->s);
}

static void on_result(int status, pgw_result_t *res, void *ud)
{
    wire_t *w = ud;
    assert_int_equal(status, 0);
    w->res = res;
    w->answered = 1;
}

/* pg_stat_ssl's ssl and version for the session's backend. */
static void server_side_tls(wire_t *w, int tls, bool *ssl, char *version, size_t n)
{
    w->answered = 0;
    assert_int_equal(pgw_session_simple_query(w->s,
                                              "SELECT ssl, coalesce(version, '') FROM pg_stat_ssl "
                                              "WHERE pid = pg_backend_pid()",
                                              on_result, w),
                     0);
    pump(w, tls, &w->answered);
    assert_true(w->answered);
    pgw_str_t v;
    assert_int_equal(pgw_result_bool(w->res, 0, 0, ssl), 0);
    assert_int_equal(pgw_result_text(w->res, 0, 1, &v), 0);
    snprintf(version, n, "%.*s", (int)v.len, v.p);
    pgw_result_free(w->res);
}

static void end_attempt(wire_t *w)
{
    pgw_session_free(w->s);
    w->s = NULL;
    close(w->fd);
    w->fd = -1;
}

static pgw_conninfo_t *parse(const char *s)
{
    pgw_conninfo_t *ci = NULL;
    char err[256];
    if (pgw_conninfo_parse(&ci, s, NULL, err, sizeof err) != 0) fail_msg("%s: %s", s, err);
    return ci;
}

/* The cluster's TCP address as user, with extra. */
static char *tcp_conninfo(char *buf, size_t n, const char *user, const char *extra)
{
    char more[512];
    snprintf(more, sizeof more, "sslrootcert='%s' %s", pgt_env_required("PGW_TEST_SSL_ROOTCERT"),
             extra);
    return pgt_conninfo_tcp(buf, n, user, NULL, more);
}

/* Whether libpq connects with s, and over TLS. */
static int libpq_connects(const char *s, int *tls)
{
    PGconn *c = PQconnectdb(s);
    int ok = PQstatus(c) == CONNECTION_OK;
    *tls = ok && PQsslInUse(c);
    PQfinish(c);
    return ok;
}

/* -------------------------------------------------------------- the tests */

static void test_verify_full_login(void **state)
{
    (void)state;
    pgt_require_server();
    char s[1024];
    pgw_conninfo_t *ci = parse(tcp_conninfo(s, sizeof s, pgt_env_required("PGUSER"),
                                            "host=localhost sslmode=verify-full"));
    wire_t w = {.fd = -1};
    assert_int_equal(pgw_tls_new(&w.tls, ci, 0, NULL, NULL, 0), 0);
    pgw_conninfo_free(ci); /* the engine kept what it needs (its files are read later) */
    pgw_tls_method_t m = pgw_tls_start(w.tls);
    assert_int_equal(m, PGW_TLS_START_REQUEST);
    assert_int_equal(negotiate(&w, m), 0);
    assert_true(over_tls(&w, m));
    assert_int_equal(login(&w, 1, pgt_env_required("PGUSER"), NULL, NULL), 0);
    assert_int_equal(pgw_tls_check_certificate(w.tls), 0);
    bool ssl = false;
    char version[32];
    server_side_tls(&w, 1, &ssl, version, sizeof version);
    pgw_tls_info_t info;
    assert_int_equal(pgw_tls_get_info(w.tls, &info), 0);
    assert_true(ssl);
    assert_string_equal(version, info.protocol);
    assert_non_null(info.peer_subject);
    assert_int_equal(pgw_tls_shutdown(w.tls), 0);
    tls_flush(&w);
    end_attempt(&w);
    pgw_tls_free(w.tls);
}

static void test_scram_plus(void **state)
{
    (void)state;
    pgt_require_server();
    const char *user = pgt_env_required("PGW_TEST_SCRAM_USER");
    const char *password = pgt_env_required("PGW_TEST_SCRAM_PASSWORD");
    char s[1024];
    pgw_conninfo_t *ci = parse(tcp_conninfo(s, sizeof s, user, "sslmode=require"));
    wire_t w = {.fd = -1};
    assert_int_equal(pgw_tls_new(&w.tls, ci, 0, NULL, NULL, 0), 0);
    assert_int_equal(negotiate(&w, pgw_tls_start(w.tls)), 0);
    const uint8_t *cb;
    size_t cblen = 0;
    assert_int_equal(pgw_tls_channel_binding(w.tls, &cb, &cblen), 0);
    assert_true(cblen >= 32);
    /* channel_binding=require: only SCRAM-SHA-256-PLUS may log in. */
    assert_int_equal(login(&w, 1, user, password, "require"), 0);
    end_attempt(&w);
    /* A wrong password fails as a failed SCRAM exchange, over the same
     * binding. */
    pgw_tls_reset(w.tls);
    assert_int_equal(negotiate(&w, pgw_tls_start(w.tls)), 0);
    assert_int_not_equal(login(&w, 1, user, "not the password", "require"), 0);
    assert_non_null(strstr(w.startup_message, "password authentication failed"));
    end_attempt(&w);
    pgw_tls_free(w.tls);
    pgw_conninfo_free(ci);
}

static void test_wrong_host_name(void **state)
{
    (void)state;
    pgt_require_server();
    char s[1024], extra[256];
    snprintf(extra, sizeof extra, "host=wrong.example hostaddr=%s sslmode=verify-full",
             pgt_env_required("PGW_TEST_TCP_HOST"));
    pgw_conninfo_t *ci = parse(tcp_conninfo(s, sizeof s, pgt_env_required("PGUSER"), extra));
    wire_t w = {.fd = -1};
    assert_int_equal(pgw_tls_new(&w.tls, ci, 0, NULL, NULL, 0), 0);
    assert_int_equal(negotiate(&w, pgw_tls_start(w.tls)), PGW_ETLS);
    const char *ours = pgw_tls_errmsg(w.tls);
    PGconn *c = PQconnectdb(s);
    assert_int_not_equal(PQstatus(c), CONNECTION_OK);
    print_message("libpgwire: %s\nlibpq: %s", ours, PQerrorMessage(c));
    /* libpq's message names the same mismatch. */
    const char *what = "does not match host name \"wrong.example\"";
    assert_non_null(strstr(ours, what));
    assert_non_null(strstr(PQerrorMessage(c), what));
    PQfinish(c);
    /* verify-full leaves no plaintext to fall back to. */
    assert_int_equal(pgw_tls_next_method(w.tls, PGW_TLS_START_REQUEST), PGW_TLS_START_NONE);
    close(w.fd);
    pgw_tls_free(w.tls);
    pgw_conninfo_free(ci);
}

/* Connect as libpq's connect loop does for one server: each method the
 * engine names, on a new socket, until a login succeeds. Returns 0 with
 * *tls telling the transport, or the last failure. */
static int connect_like_libpq(const char *s, const char *user, pgw_tls_method_t *first, int *tls)
{
    pgw_conninfo_t *ci = parse(s);
    wire_t w = {.fd = -1};
    assert_int_equal(pgw_tls_new(&w.tls, ci, 0, NULL, NULL, 0), 0);
    pgw_tls_method_t m = *first = pgw_tls_start(w.tls);
    int rc = PGW_ECONNECT;
    while (m != PGW_TLS_START_NONE) {
        rc = negotiate(&w, m);
        int t = rc == 0 && over_tls(&w, m);
        if (rc == 0) rc = login(&w, t, user, NULL, NULL);
        if (rc == 0) rc = t ? pgw_tls_check_certificate(w.tls) : 0;
        if (rc == 0) *tls = t;
        if (w.s) end_attempt(&w);
        if (w.fd >= 0) close(w.fd);
        w.fd = -1;
        if (rc == 0) break;
        m = pgw_tls_next_method(w.tls, m);
    }
    pgw_tls_free(w.tls);
    pgw_conninfo_free(ci);
    return rc;
}

static void test_methods_follow_libpq(void **state)
{
    (void)state;
    pgt_require_server();
    const struct {
        const char *user_key, *extra;
        pgw_tls_method_t first;
        int tls;
    } cases[] = {
        /* accepted only without TLS: prefer's TLS login is refused, then
         * plaintext */
        {"PGW_TEST_NOSSL_USER", "sslmode=prefer", PGW_TLS_START_REQUEST, 0},
        /* accepted only over TLS: allow's plaintext login is refused, then
         * TLS */
        {"PGW_TEST_SSLONLY_USER", "sslmode=allow", PGW_TLS_START_PLAIN, 1},
        {"PGUSER", "sslmode=prefer", PGW_TLS_START_REQUEST, 1},
        {"PGUSER", "sslmode=disable", PGW_TLS_START_PLAIN, 0},
        /* a role that needs TLS, refused both ways without it */
        {"PGW_TEST_SSLONLY_USER", "sslmode=disable", PGW_TLS_START_PLAIN, -1},
        {"PGW_TEST_NOSSL_USER", "sslmode=require", PGW_TLS_START_REQUEST, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *user = pgt_env_required(cases[i].user_key);
        char s[1024];
        tcp_conninfo(s, sizeof s, user, cases[i].extra);
        pgw_tls_method_t first;
        int tls = -1, pq_tls = -1;
        int rc = connect_like_libpq(s, user, &first, &tls);
        int pq_ok = libpq_connects(s, &pq_tls);
        print_message("%s %s: first %d, %s%s; libpq %s%s\n", cases[i].user_key, cases[i].extra,
                      (int)first, rc == 0 ? "connected" : pgw_err_name(rc),
                      rc == 0 ? (tls ? " over TLS" : " in plaintext") : "",
                      pq_ok ? "connected" : "failed",
                      pq_ok ? (pq_tls ? " over TLS" : " in plaintext") : "");
        assert_int_equal(first, cases[i].first);
        assert_int_equal(rc == 0, cases[i].tls >= 0);
        assert_int_equal(pq_ok, rc == 0);
        if (rc == 0) {
            assert_int_equal(tls, cases[i].tls);
            assert_int_equal(pq_tls, tls);
        }
    }
}

static void test_unix_socket_and_stuffing(void **state)
{
    (void)state;
    pgt_require_server();
    char s[1024];
    /* A Unix-domain socket: plaintext, whatever sslmode says (libpq). */
    pgw_conninfo_t *ci = parse(pgt_conninfo(s, sizeof s, "sslmode=require"));
    pgw_tls_t *t = NULL;
    assert_int_equal(pgw_tls_new(&t, ci, 0, NULL, NULL, 0), 0);
    assert_int_equal(pgw_tls_start(t), PGW_TLS_START_PLAIN);
    assert_int_equal(pgw_tls_next_method(t, PGW_TLS_START_PLAIN), PGW_TLS_START_NONE);
    assert_int_equal(pgw_tls_handshake(t), PGW_EBUSY);
    pgw_tls_free(t);
    pgw_conninfo_free(ci);
    /* Bytes behind the 'S' were not sent by a TLS server
     * (CVE-2021-23222): refused before any handshake. */
    ci = parse(tcp_conninfo(s, sizeof s, pgt_env_required("PGUSER"), "sslmode=require"));
    assert_int_equal(pgw_tls_new(&t, ci, 0, NULL, NULL, 0), 0);
    static const uint8_t stuffed[] = {'S', 'Z', 0, 0, 0, 5, 'I'};
    assert_int_equal(pgw_tls_answer(t, stuffed, sizeof stuffed), PGW_EPROTO);
    assert_non_null(strstr(pgw_tls_errmsg(t), "received unencrypted data after SSL response"));
    assert_int_equal(pgw_tls_handshake(t), PGW_EBUSY);
    pgw_tls_free(t);
    pgw_conninfo_free(ci);
    /* With prefer too: a refused SSLRequest ends the connect, no plaintext
     * retry ('E' before authentication: CVE-2024-10977). */
    ci = parse(tcp_conninfo(s, sizeof s, pgt_env_required("PGUSER"), "sslmode=prefer"));
    assert_int_equal(pgw_tls_new(&t, ci, 0, NULL, NULL, 0), 0);
    static const uint8_t error[] = {'E'};
    assert_int_equal(pgw_tls_answer(t, error, sizeof error), PGW_ETLS);
    assert_non_null(strstr(pgw_tls_errmsg(t), "error response during SSL exchange"));
    assert_int_equal(pgw_tls_next_method(t, PGW_TLS_START_REQUEST), PGW_TLS_START_NONE);
    pgw_tls_free(t);
    pgw_conninfo_free(ci);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verify_full_login),
        cmocka_unit_test(test_scram_plus),
        cmocka_unit_test(test_wrong_host_name),
        cmocka_unit_test(test_methods_follow_libpq),
        cmocka_unit_test(test_unix_socket_and_stuffing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
