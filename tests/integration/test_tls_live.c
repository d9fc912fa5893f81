/*
 * TLS against the real server (the cluster runs with TLS and a CA of its
 * own), with libpq 15 beside libpgwire on every connection string: both
 * must succeed or both fail, agree on whether TLS is in use (PQsslInUse)
 * and on protocol and cipher (PQsslAttribute), and a failure's message
 * must be libpq's: libpgwire's text starts with the first line of libpq
 * 15's, minus its "connection to server at ... failed: " prefix and the
 * server's severity. (libpgwire words messages as libpq 17 does, which
 * appends the verification reason, e.g. ": certificate has expired", and
 * whose hints on the next line mention sslrootcert=system.)
 *
 * Server certificates other than the cluster's (another host's, a
 * self-signed one, an expired one) are served by a faketls listener that
 * terminates TLS with that certificate and relays the connection to the
 * real server's unix socket, so the outcome is decided by the real server
 * once TLS is up.
 *
 * HOME points to a private directory: the default root certificate
 * ($HOME/.postgresql/root.crt) exists only where a test puts it there.
 * OpenSSL's allocator is counted, for the steady-state test.
 */
#define _POSIX_C_SOURCE 200809L
#include "failalloc.h"
#include "faketls.h"
#include "pgtest.h"
#include "pgtime.h"
#include "pgwire/client.h"
#include "pgwire/types.h"

#include <libpq-fe.h>
#include <malloc.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static char home[] = "/tmp/pgw-tlshome-XXXXXX";

/* ------------------------------------------------- OpenSSL's allocations */

/* Bytes OpenSSL holds, counted with malloc_usable_size (the same for a
 * block at its malloc and at its free), so the blocks handed out are
 * malloc's own: valgrind sees OpenSSL's one-time globals as reachable. */
static size_t ossl_live;
static pthread_mutex_t ossl_mu = PTHREAD_MUTEX_INITIALIZER;

static void ossl_add(size_t plus, size_t minus)
{
    pthread_mutex_lock(&ossl_mu);
    ossl_live = ossl_live + plus - minus;
    pthread_mutex_unlock(&ossl_mu);
}

static void *ossl_malloc(size_t n, const char *file, int line)
{
    (void)file, (void)line;
    void *p = malloc(n);
    if (p) ossl_add(malloc_usable_size(p), 0);
    return p;
}

static void *ossl_realloc(void *q, size_t n, const char *file, int line)
{
    (void)file, (void)line;
    size_t old = q ? malloc_usable_size(q) : 0;
    void *p = realloc(q, n);
    if (p) ossl_add(malloc_usable_size(p), old);
    return p;
}

static void ossl_free(void *q, const char *file, int line)
{
    (void)file, (void)line;
    if (q) ossl_add(0, malloc_usable_size(q));
    free(q);
}

static size_t ossl_count(void)
{
    pthread_mutex_lock(&ossl_mu);
    size_t n = ossl_live;
    pthread_mutex_unlock(&ossl_mu);
    return n;
}

/* ----------------------------------------------------------- comparisons */

typedef struct outcome {
    int ok;
    int in_use;
    char protocol[32];
    char cipher[128];
    char msg[2048];
} outcome_t;

/* libpq's message without the per-attempt "connection to server at ...
 * failed: " prefixes and the trailing newline. */
static void libpq_message(const char *in, char *out, size_t n)
{
    size_t o = 0;
    while (*in && o + 1 < n) {
        if (strncmp(in, "connection to server ", 21) == 0) {
            const char *f = strstr(in, "failed: ");
            if (f) {
                in = f + 8;
                continue;
            }
        }
        out[o++] = *in++;
    }
    while (o && out[o - 1] == '\n')
        o--;
    out[o] = '\0';
    /* the server's errors carry their severity ("FATAL:  ...") */
    static const char *const sev[] = {"FATAL:  ", "ERROR:  "};
    for (size_t i = 0; i < 2; i++) {
        size_t l = strlen(sev[i]);
        if (strncmp(out, sev[i], l) == 0) memmove(out, out + l, strlen(out + l) + 1);
    }
}

/* Length of the first line. */
static size_t line_len(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl ? (size_t)(nl - s) : strlen(s);
}

static void run_libpq(const char *ci, outcome_t *o)
{
    memset(o, 0, sizeof *o);
    PGconn *pq = PQconnectdb(ci);
    o->ok = PQstatus(pq) == CONNECTION_OK;
    if (o->ok) {
        o->in_use = PQsslInUse(pq);
        const char *p = PQsslAttribute(pq, "protocol"), *c = PQsslAttribute(pq, "cipher");
        snprintf(o->protocol, sizeof o->protocol, "%s", o->in_use && p ? p : "");
        snprintf(o->cipher, sizeof o->cipher, "%s", o->in_use && c ? c : "");
    } else {
        libpq_message(PQerrorMessage(pq), o->msg, sizeof o->msg);
    }
    PQfinish(pq);
}

static int run_pgw(const char *ci, outcome_t *o)
{
    memset(o, 0, sizeof *o);
    pgw_client_t *c = NULL;
    char raw[sizeof o->msg];
    int rc = pgw_client_connect_err(&c, ci, NULL, raw, sizeof raw);
    libpq_message(raw, o->msg, sizeof o->msg); /* both libraries' texts, normalised alike */
    o->ok = rc == 0;
    if (o->ok) {
        pgw_tls_info_t info;
        assert_int_equal(pgw_client_tls_info(c, &info), 0);
        o->in_use = info.in_use;
        snprintf(o->protocol, sizeof o->protocol, "%s", info.protocol ? info.protocol : "");
        snprintf(o->cipher, sizeof o->cipher, "%s", info.cipher ? info.cipher : "");
        assert_int_equal(pgw_client_exec(c, "SELECT 1", NULL), 0);
    }
    pgw_client_close(c);
    return rc;
}

/* Both libraries on ci; they must agree. Returns libpgwire's status. */
static int agree(const char *ci, outcome_t *out)
{
    outcome_t pq, pg;
    run_libpq(ci, &pq);
    int rc = run_pgw(ci, &pg);
    if (pq.ok != pg.ok)
        fail_msg("%s\n  libpq: %s (%s)\n  libpgwire: %s (%s)", ci, pq.ok ? "ok" : "failed", pq.msg,
                 pg.ok ? "ok" : pgw_err_name(rc), pg.msg);
    if (pq.ok) {
        if (pq.in_use != pg.in_use) fail_msg("%s: in_use %d vs %d", ci, pq.in_use, pg.in_use);
        assert_string_equal(pq.protocol, pg.protocol);
        assert_string_equal(pq.cipher, pg.cipher);
    } else if (strncmp(pg.msg, pq.msg, line_len(pq.msg)) != 0) {
        fail_msg("%s\n  libpq:     %s\n  libpgwire: %s", ci, pq.msg, pg.msg);
    }
    if (out) *out = pg;
    return rc;
}

/* connect_timeout is a guard against a hang, not a bound: under valgrind on a
 * loaded machine libpq's TLS handshake alone took more than 10 s. */
static char *tcp_ci(char *buf, size_t n, const char *host, const char *port, const char *user,
                    const char *extra)
{
    snprintf(buf, n, "host=%s port=%s user=%s dbname=%s connect_timeout=60 %s", host,
             port ? port : pgt_env_required("PGPORT"), user ? user : pgt_env_required("PGUSER"),
             pgt_env_required("PGDATABASE"), extra ? extra : "");
    return buf;
}

static const char *tls_file(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", pgt_env_required("PGW_TEST_TLS_DIR"), name);
    return buf;
}

static const char *backend_socket(char *buf, size_t n)
{
    snprintf(buf, n, "%s/.s.PGSQL.%s", pgt_env_required("PGHOST"), pgt_env_required("PGPORT"));
    return buf;
}

/* A faketls listener serving PGW_TEST_TLS_DIR/name.{crt,key} in front of
 * the real server; its port as text in port[16]. */
static faketls_t *relay_with(const char *name, char port[16])
{
    static char sock[512], crt[512], key[512];
    char file[64];
    snprintf(file, sizeof file, "%s.crt", name);
    tls_file(file, crt, sizeof crt);
    snprintf(file, sizeof file, "%s.key", name);
    tls_file(file, key, sizeof key);
    faketls_script_t s = {.cert = crt, .key = key, .backend = backend_socket(sock, sizeof sock)};
    faketls_t *f = faketls_start(&s);
    assert_non_null(f);
    snprintf(port, 16, "%u", (unsigned)faketls_port(f));
    return f;
}

static const char *const modes[] = {"disable", "allow",     "prefer",
                                    "require", "verify-ca", "verify-full"};

/* 1. Every sslmode against the cluster's own certificate, by name and by
 * address, without and with the root certificate. */
static void test_modes_real_server(void **state)
{
    pgt_require_server();
    const char *hosts[] = {"localhost", "127.0.0.1"};
    const char *root = pgt_env_required("PGW_TEST_SSL_ROOTCERT");
    for (size_t h = 0; h < ARRAY_LEN(hosts); h++) {
        for (size_t m = 0; m < ARRAY_LEN(modes); m++) {
            for (int with_root = 0; with_root < 2; with_root++) {
                char extra[1024], ci[2048];
                snprintf(extra, sizeof extra, "sslmode=%s%s%s", modes[m],
                         with_root ? " sslrootcert=" : "", with_root ? root : "");
                outcome_t o;
                agree(tcp_ci(ci, sizeof ci, hosts[h], NULL, NULL, extra), &o);
                int strong = m >= 2; /* prefer and above negotiate TLS first */
                if (o.ok) assert_int_equal(o.in_use, strong);
            }
        }
    }
}

/* 2. verify-full checks `host`, also when hostaddr gives the address. */
static void test_hostaddr_name_checked(void **state)
{
    pgt_require_server();
    char extra[1024], ci[2048];
    snprintf(extra, sizeof extra, "hostaddr=127.0.0.1 sslmode=verify-full sslrootcert=%s",
             pgt_env_required("PGW_TEST_SSL_ROOTCERT"));
    outcome_t o;
    assert_int_equal(agree(tcp_ci(ci, sizeof ci, "wrong.example", NULL, NULL, extra), &o),
                     PGW_ETLS);
    assert_non_null(strstr(o.msg, "does not match host name \"wrong.example\""));
    assert_int_equal(agree(tcp_ci(ci, sizeof ci, "localhost", NULL, NULL, extra), NULL), 0);
}

/* 3. Other certificates, served by faketls in front of the server: each
 * mode, with the root certificate given, found in $HOME/.postgresql, or
 * absent. prefer goes on in plaintext when verification fails, as libpq. */
static void test_modes_other_certificates(void **state)
{
    pgt_require_server();
    const char *certs[] = {"wronghost", "selfsigned", "expired"};
    char dotdir[600], dotroot[700], port[16];
    snprintf(dotdir, sizeof dotdir, "%s/.postgresql", home);
    snprintf(dotroot, sizeof dotroot, "%s/root.crt", dotdir);
    mkdir(dotdir, 0700);
    for (size_t i = 0; i < ARRAY_LEN(certs); i++) {
        faketls_t *f = relay_with(certs[i], port);
        for (int where = 0; where < 3; where++) { /* 0 none, 1 sslrootcert, 2 ~/.postgresql */
            if (where == 2) {
                char cmd[2048];
                snprintf(cmd, sizeof cmd, "cp '%s' '%s'", pgt_env_required("PGW_TEST_SSL_ROOTCERT"),
                         dotroot);
                assert_int_equal(system(cmd), 0);
            }
            for (size_t m = 0; m < ARRAY_LEN(modes); m++) {
                char extra[1024], ci[2048];
                snprintf(extra, sizeof extra, "sslmode=%s%s%s", modes[m],
                         where == 1 ? " sslrootcert=" : "",
                         where == 1 ? pgt_env_required("PGW_TEST_SSL_ROOTCERT") : "");
                agree(tcp_ci(ci, sizeof ci, "localhost", port, NULL, extra), NULL);
            }
            if (where == 2) unlink(dotroot);
        }
        faketls_stop(f);
    }
    rmdir(dotdir);
}

/* 4. Client certificates: cert authentication, libpq's key permission
 * check, and sslcertmode=disable (never send one: the server refuses). */
static void test_client_certificate(void **state)
{
    pgt_require_server();
    const char *user = pgt_env_required("PGW_TEST_CERT_USER");
    const char *crt = pgt_env_required("PGW_TEST_SSL_CLIENT_CERT");
    const char *key = pgt_env_required("PGW_TEST_SSL_CLIENT_KEY");
    char extra[2048], ci[4096];
    snprintf(extra, sizeof extra, "sslmode=verify-full sslrootcert=%s sslcert=%s sslkey=%s",
             pgt_env_required("PGW_TEST_SSL_ROOTCERT"), crt, key);
    assert_int_equal(agree(tcp_ci(ci, sizeof ci, "localhost", NULL, user, extra), NULL), 0);
    /* a copy of the key readable by others */
    char loose[700], cmd[2048];
    snprintf(loose, sizeof loose, "%s/loose.key", home);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 0644 '%s'", key, loose, loose);
    assert_int_equal(system(cmd), 0);
    snprintf(extra, sizeof extra, "sslmode=require sslcert=%s sslkey=%s", crt, loose);
    outcome_t o;
    assert_int_equal(agree(tcp_ci(ci, sizeof ci, "localhost", NULL, user, extra), &o), PGW_ETLS);
    assert_non_null(strstr(o.msg, "has group or world access"));
    unlink(loose);
    /* sslcertmode is libpq 16's: libpgwire alone */
    snprintf(extra, sizeof extra, "sslmode=require sslcertmode=disable sslcert=%s sslkey=%s", crt,
             key);
    assert_int_not_equal(run_pgw(tcp_ci(ci, sizeof ci, "localhost", NULL, user, extra), &o), 0);
    /* sslcertmode=require: the cluster asks for client certificates */
    snprintf(extra, sizeof extra, "sslmode=require sslcertmode=require sslcert=%s sslkey=%s", crt,
             key);
    assert_int_equal(run_pgw(tcp_ci(ci, sizeof ci, "localhost", NULL, user, extra), &o), 0);
}

/* 5. SCRAM over TLS with and without channel binding; channel_binding=
 * require without TLS fails (before any password byte: see the fault
 * test). Also: prefer against a TLS server is encrypted (pg_stat_ssl). */
static void test_scram_channel_binding(void **state)
{
    pgt_require_server();
    const char *user = pgt_env_required("PGW_TEST_SCRAM_USER");
    const char *pw = pgt_env_required("PGW_TEST_SCRAM_PASSWORD");
    static const struct {
        const char *extra;
        const char *method; /* NULL: fails */
    } cases[] = {
        {"sslmode=require channel_binding=require", "SCRAM-SHA-256-PLUS"},
        {"sslmode=require channel_binding=prefer", "SCRAM-SHA-256-PLUS"},
        {"sslmode=require channel_binding=disable", "SCRAM-SHA-256"},
        {"sslmode=prefer", "SCRAM-SHA-256-PLUS"},
        {"sslmode=disable channel_binding=require", NULL},
        {"sslmode=disable channel_binding=prefer", "SCRAM-SHA-256"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char extra[512], ci[1024];
        snprintf(extra, sizeof extra, "password=%s %s", pw, cases[i].extra);
        tcp_ci(ci, sizeof ci, "127.0.0.1", NULL, user, extra);
        outcome_t pq;
        run_libpq(ci, &pq);
        assert_int_equal(pq.ok, cases[i].method != NULL);
        pgw_client_t *c = NULL;
        char err[1024];
        int rc = pgw_client_connect_err(&c, ci, NULL, err, sizeof err);
        if (!cases[i].method) {
            assert_int_equal(rc, PGW_EAUTHPOLICY);
            continue;
        }
        if (rc != 0) fail_msg("%s: %s: %s", cases[i].extra, pgw_err_name(rc), err);
        assert_string_equal(pgw_session_auth_method(pgw_client_session(c)), cases[i].method);
        pgw_result_t *res;
        assert_int_equal(
            pgw_client_exec(c, "SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                            &res),
            0);
        pgw_str_t v;
        assert_int_equal(pgw_result_text(res, 0, 0, &v), 0);
        assert_int_equal(v.p[0], strstr(cases[i].extra, "sslmode=disable") ? 'f' : 't');
        pgw_result_free(res);
        pgw_client_close(c);
    }
    /* over a unix socket TLS is never used: channel_binding=require fails */
    char ci[1024];
    snprintf(ci, sizeof ci, "host=%s port=%s user=%s password=%s dbname=%s channel_binding=require",
             pgt_env_required("PGHOST"), pgt_env_required("PGPORT"), user, pw,
             pgt_env_required("PGDATABASE"));
    outcome_t pq;
    run_libpq(ci, &pq);
    assert_false(pq.ok);
    pgw_client_t *c = NULL;
    assert_int_equal(pgw_client_connect(&c, ci, NULL), PGW_EAUTHPOLICY);
}

/* 7. A cancel of a TLS connection negotiates TLS too. */
typedef struct canceller {
    pgw_client_t *c;
    int rc;
} canceller_t;

static void *cancel_later(void *arg)
{
    canceller_t *k = arg;
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    k->rc = pgw_client_cancel(k->c);
    return NULL;
}

static void cancel_sleep(const char *ci)
{
    pgw_client_t *c = NULL;
    char err[1024];
    int rc = pgw_client_connect_err(&c, ci, NULL, err, sizeof err);
    if (rc != 0) fail_msg("%s: %s", pgw_err_name(rc), err);
    pgw_tls_info_t info;
    assert_int_equal(pgw_client_tls_info(c, &info), 0);
    assert_int_equal(info.in_use, 1);
    canceller_t k = {c, 1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, cancel_later, &k), 0);
    uint64_t t0 = pgt_now_ns();
    pgw_result_t *res = NULL;
    rc = pgw_client_exec(c, "SELECT pg_sleep(30)", &res);
    double took = pgt_ms_since(t0);
    pthread_join(t, NULL);
    assert_int_equal(k.rc, 0);
    assert_int_equal(rc, PGW_ESERVER);
    assert_string_equal(pgw_result_error(res)->sqlstate, "57014");
    pgt_assert_in_time("pg_sleep(30) cancelled after 300 ms", took, 0, 30000);
    pgw_result_free(res);
    pgw_client_close(c);
}

/* sslnegotiation=direct against the real PostgreSQL 15, which predates it:
 * the server reads the ClientHello as a malformed startup packet and closes.
 * The connect fails promptly and cleanly (no plaintext fallback: direct
 * mode never sends a StartupMessage in clear), and the server is unharmed. */
static void test_direct_against_old_server(void **state)
{
    (void)state;
    pgt_require_server();
    char ci[512];
    outcome_t o;
    uint64_t t0 = pgt_now_ns();
    tcp_ci(ci, sizeof ci, "127.0.0.1", NULL, NULL, "sslmode=require sslnegotiation=direct");
    int rc = run_pgw(ci, &o);
    assert_int_not_equal(rc, 0);
    assert_true(rc == PGW_ETLS || rc == PGW_ECONNLOST || rc == PGW_ECONNECT);
    assert_true(strlen(o.msg) > 0);
    /* promptly: the server closed at once; had it waited for a startup
     * packet, its authentication_timeout (60 s) would have ended it */
    pgt_assert_in_time("sslnegotiation=direct refused", pgt_ms_since(t0), 0, 60000);
    /* The same server still takes a normal TLS connection. */
    tcp_ci(ci, sizeof ci, "127.0.0.1", NULL, NULL, "sslmode=require");
    assert_int_equal(run_pgw(ci, &o), 0);
    assert_int_equal(o.in_use, 1);
}

static void test_cancel_over_tls(void **state)
{
    pgt_require_server();
    char ci[1024];
    cancel_sleep(tcp_ci(ci, sizeof ci, "127.0.0.1", NULL, NULL, "sslmode=require"));
    /* through faketls: the cancel connection sent SSLRequest first */
    char port[16];
    faketls_t *f = relay_with("wronghost", port);
    cancel_sleep(tcp_ci(ci, sizeof ci, "127.0.0.1", port, NULL, "sslmode=require"));
    assert_int_equal(faketls_accepts(f), 2);
    assert_int_equal(faketls_handshakes(f), 2);
    uint8_t first[8];
    static const uint8_t sslreq[8] = {0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f};
    assert_int_equal(faketls_first_bytes(f, 1, first), 8);
    assert_memory_equal(first, sslreq, 8);
    faketls_stop(f);
}

/* 7b. The cancel connection verifies the server as its session did: behind
 * a faketls that shows the session the cluster's certificate and every
 * later connection one for another host name, a cancel under verify-full
 * fails the handshake (PGW_ETLS, the key never sent), and under require
 * (no verification) it is delivered. */
static void test_cancel_verifies_as_its_session(void **state)
{
    pgt_require_server();
    static char sock[512], crt[512], key[512], wcrt[512], wkey[512];
    faketls_script_t sc = {.cert = tls_file("server.crt", crt, sizeof crt),
                           .key = tls_file("server.key", key, sizeof key),
                           .later_cert = tls_file("wronghost.crt", wcrt, sizeof wcrt),
                           .later_key = tls_file("wronghost.key", wkey, sizeof wkey),
                           .backend = backend_socket(sock, sizeof sock)};
    const char *policies[] = {"sslmode=verify-full sslrootcert=", "sslmode=require"};
    for (int p = 0; p < 2; p++) {
        faketls_t *f = faketls_start(&sc);
        assert_non_null(f);
        char port[16], extra[1024], ci[2048], err[1024];
        snprintf(port, sizeof port, "%u", (unsigned)faketls_port(f));
        snprintf(extra, sizeof extra, "%s%s", policies[p],
                 p == 0 ? pgt_env_required("PGW_TEST_SSL_ROOTCERT") : "");
        pgw_client_t *c = NULL;
        int rc = pgw_client_connect_err(&c, tcp_ci(ci, sizeof ci, "localhost", port, NULL, extra),
                                        NULL, err, sizeof err);
        if (rc != 0) fail_msg("%s: %s: %s", extra, pgw_err_name(rc), err);
        rc = pgw_client_cancel(c);
        assert_int_equal(faketls_accepts(f), 2);
        if (p == 0) {
            /* (faketls may count the refused handshake as completed: under
             * TLS 1.3 its side can end before the client's check fails) */
            assert_int_equal(rc, PGW_ETLS);
        } else {
            assert_int_equal(rc, 0);
            assert_int_equal(faketls_handshakes(f), 2);
        }
        pgw_client_close(c);
        faketls_stop(f);
    }
}

/* 8. pg_hba.conf decides: prefer against a hostnossl-only role retries in
 * plaintext; allow against a hostssl-only role retries with TLS. */
static void test_prefer_allow_retries(void **state)
{
    pgt_require_server();
    char ci[1024];
    outcome_t o;
    assert_int_equal(agree(tcp_ci(ci, sizeof ci, "127.0.0.1", NULL,
                                  pgt_env_required("PGW_TEST_NOSSL_USER"), "sslmode=prefer"),
                           &o),
                     0);
    assert_int_equal(o.in_use, 0);
    assert_int_equal(agree(tcp_ci(ci, sizeof ci, "127.0.0.1", NULL,
                                  pgt_env_required("PGW_TEST_SSLONLY_USER"), "sslmode=allow"),
                           &o),
                     0);
    assert_int_equal(o.in_use, 1);
    /* and neither retries where the mode forbids it */
    agree(tcp_ci(ci, sizeof ci, "127.0.0.1", NULL, pgt_env_required("PGW_TEST_NOSSL_USER"),
                 "sslmode=require"),
          NULL);
    agree(tcp_ci(ci, sizeof ci, "127.0.0.1", NULL, pgt_env_required("PGW_TEST_SSLONLY_USER"),
                 "sslmode=disable"),
          NULL);
}

/* 9. Large values both ways over TLS, byte-exact: the output ring fills
 * and is refilled many times for the parameter, and reads decrypt many
 * records per turn. */
static void test_large_transfers(void **state)
{
    pgt_require_server();
    char ci[1024];
    pgw_client_t *c = NULL;
    assert_int_equal(
        pgw_client_connect(&c, tcp_ci(ci, sizeof ci, "127.0.0.1", NULL, NULL, "sslmode=require"),
                           NULL),
        0);
    const size_t big = 24u * 1024u * 1024u + 7u;
    uint8_t *v = malloc(big);
    assert_non_null(v);
    for (size_t i = 0; i < big; i++)
        v[i] = (uint8_t)(i * 2654435761u >> 13);
    pgw_param_t p[] = {pgw_bytea(v, (int32_t)big)};
    pgw_result_t *res;
    /* echo it back: out and in, compared byte for byte */
    assert_int_equal(pgw_client_query(c, "SELECT $1::bytea", p, 1, &res), 0);
    pgw_value_t val;
    pgw_view_t got;
    assert_int_equal(pgw_result_value(res, 0, 0, &val), 0);
    assert_int_equal(pgw_get_bytea_view(&val, &got), 0);
    assert_int_equal(got.len, big);
    assert_memory_equal(got.p, v, big);
    pgw_result_free(res);
    free(v);
    /* many rows */
    assert_int_equal(
        pgw_client_exec(c, "SELECT repeat('x', 100) FROM generate_series(1, 200000)", &res), 0);
    assert_int_equal(pgw_result_nrows(res), 200000);
    pgw_result_free(res);
    pgw_client_close(c);
}

/* Steady state over TLS: once warm, a stream of queries allocates nothing
 * in libpgwire's allocator (as in plaintext: decryption lands in the
 * session's chunks, encryption in the engine's fixed rings), and the
 * memory OpenSSL holds does not grow. (OpenSSL 3.0's record layer itself
 * mallocs and frees a 40-byte WPACKET_SUB per record inside SSL_read and
 * SSL_write, as it does for libpq; no buffer of its stays behind.) */
static pgt_alloc_t g_count = PGT_ALLOC_INITIALIZER(g_count);

static int count_row(const pgw_row_t *row, void *ud)
{
    (void)row;
    (*(int *)ud)++;
    return 0;
}

static void steady(const char *extra, size_t *pgw_allocs, size_t *ossl)
{
    char ci[1024];
    pgw_conn_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.alloc = &g_count.base;
    pgw_client_t *c = NULL;
    assert_int_equal(
        pgw_client_connect(&c, tcp_ci(ci, sizeof ci, "127.0.0.1", NULL, NULL, extra), &cfg), 0);
    size_t base = 0, obase = 0;
    for (int round = 0; round < 3; round++) {
        if (round == 2) {
            base = (size_t)g_count.calls;
            obase = ossl_count();
        }
        for (int i = 0; i < 50; i++) {
            int rows = 0;
            pgw_request_t q = PGW_QUERY("SELECT repeat('y', 2000) FROM generate_series(1, 100)",
                                        NULL, 0, NULL, &rows);
            q.on_row = count_row;
            assert_int_equal(pgw_client_run(c, &q, NULL), 0);
            assert_int_equal(rows, 100);
        }
    }
    *pgw_allocs = (size_t)g_count.calls - base;
    *ossl = ossl_count() - obase; /* growth of the bytes OpenSSL holds */
    pgw_client_close(c);
}

static void test_steady_state_allocations(void **state)
{
    pgt_require_server();
    size_t plain, plain_ossl, tls, tls_ossl;
    steady("sslmode=disable", &plain, &plain_ossl);
    steady("sslmode=require", &tls, &tls_ossl);
    size_t t12, t12_ossl;
    steady("sslmode=require ssl_max_protocol_version=TLSv1.2", &t12, &t12_ossl);
    assert_int_equal(t12, plain);
    assert_int_equal(t12_ossl, 0);
    if (tls != plain || plain != 0 || tls_ossl != 0)
        fail_msg("per 50 queries: %zu allocations in plaintext, %zu over TLS (OpenSSL holds %zu "
                 "bytes more)",
                 plain, tls, tls_ossl);
}

/* The lines of a key log file whose label starts with prefix; every line
 * must read "LABEL <client random, 64 hex digits> <secret in hex>". */
static int keylog_lines(const char *path, const char *prefix)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[512], label[64], random[80], secret[160];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%63s %79s %159s", label, random, secret) != 3 || strlen(random) != 64 ||
            strspn(random, "0123456789abcdef") != 64 ||
            strspn(secret, "0123456789abcdef") != strlen(secret))
            fail_msg("%s: not a key log line: %s", path, line);
        if (strncmp(label, prefix, strlen(prefix)) == 0) n++;
    }
    fclose(f);
    return n;
}

/* 11. sslkeylogfile (libpq 18; libpgwire alone): each handshake's secrets
 * are appended in NSS key log format to a file created with mode 0600; a
 * file that cannot be written is no error. */
static void test_sslkeylogfile(void **state)
{
    pgt_require_server();
    char path[700], extra[1024], ci[4096];
    snprintf(path, sizeof path, "%s/keys.log", home);
    unlink(path);
    snprintf(extra, sizeof extra, "sslmode=require sslkeylogfile=%s", path);
    outcome_t o;
    assert_int_equal(run_pgw(tcp_ci(ci, sizeof ci, "localhost", NULL, NULL, extra), &o), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(keylog_lines(path, "CLIENT_HANDSHAKE_TRAFFIC_SECRET"), 1);
    assert_int_equal(keylog_lines(path, "CLIENT_TRAFFIC_SECRET_0"), 1);
    /* TLS 1.2 appends its master secret */
    snprintf(extra, sizeof extra,
             "sslmode=require ssl_max_protocol_version=TLSv1.2 sslkeylogfile=%s", path);
    assert_int_equal(run_pgw(tcp_ci(ci, sizeof ci, "localhost", NULL, NULL, extra), &o), 0);
    assert_int_equal(keylog_lines(path, "CLIENT_RANDOM"), 1);
    assert_int_equal(keylog_lines(path, "CLIENT_HANDSHAKE_TRAFFIC_SECRET"), 1);
    /* without the option, nothing more */
    assert_int_equal(run_pgw(tcp_ci(ci, sizeof ci, "localhost", NULL, NULL, "sslmode=require"), &o),
                     0);
    assert_int_equal(keylog_lines(path, "CLIENT_HANDSHAKE_TRAFFIC_SECRET"), 1);
    unlink(path);
    /* a file that cannot be created: connected all the same */
    snprintf(extra, sizeof extra, "sslmode=require sslkeylogfile=%s/no-such-dir/keys.log", home);
    assert_int_equal(run_pgw(tcp_ci(ci, sizeof ci, "localhost", NULL, NULL, extra), &o), 0);
}

int main(void)
{
    /* before anything makes OpenSSL allocate */
    CRYPTO_set_mem_functions(ossl_malloc, ossl_realloc, ossl_free);
    if (!mkdtemp(home)) return 1;
    setenv("HOME", home, 1);
    unsetenv("PGSSLROOTCERT");
    unsetenv("PGSSLMODE");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modes_real_server),
        cmocka_unit_test(test_hostaddr_name_checked),
        cmocka_unit_test(test_modes_other_certificates),
        cmocka_unit_test(test_client_certificate),
        cmocka_unit_test(test_scram_channel_binding),
        cmocka_unit_test(test_cancel_over_tls),
        cmocka_unit_test(test_cancel_verifies_as_its_session),
        cmocka_unit_test(test_direct_against_old_server),
        cmocka_unit_test(test_prefer_allow_retries),
        cmocka_unit_test(test_large_transfers),
        cmocka_unit_test(test_steady_state_allocations),
        cmocka_unit_test(test_sslkeylogfile),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(home);
    return rc;
}
