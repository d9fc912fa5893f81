/*
 * The connect report against the throwaway cluster and loopback sockets:
 * each attempt of a failed connect is listed (pgw_conn_attempts) with its
 * host, address, port, the phase it reached, its code and libpq's message,
 * and pgw_conn_error_message joins them exactly as libpq 15's
 * PQerrorMessage does for the same connection string (linked here as the
 * reference; only libpq's final newline is dropped).
 *
 * The causes: a name that does not resolve (nonexistent.invalid), a
 * refused port (a free port on 127.0.0.1), a timeout (connect_timeout=2
 * against a listening socket that never accepts: the kernel completes the
 * TCP handshake into its backlog and nothing ever answers), a wrong
 * password (the SCRAM role), target_session_attrs=standby against the
 * primary, a unix socket that does not exist; alone and in host lists.
 */
#define _DEFAULT_SOURCE
#include "pgtest.h"
#include "pgtime.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <cmocka.h>
#include <libpq-fe.h>

#define MAXATT 8

typedef struct attempt_copy {
    char host[256];
    char address[128];
    unsigned port;
    int phase;
    int status;
    char sqlstate[6];
    char message[1024];
} attempt_copy_t;

/* What one connect with pgw_conn_t reported, copied before the close. */
typedef struct outcome {
    int status;
    int phase;
    size_t natt;
    attempt_copy_t att[MAXATT];
    char message[4096];
} outcome_t;

typedef struct ctx {
    int done;
    int status;
    outcome_t *out;
} ctx_t;

static void copy_report(pgw_conn_t *conn, outcome_t *o)
{
    size_t n = 0;
    const pgw_conn_attempt_t *a = pgw_conn_attempts(conn, &n);
    o->natt = n;
    for (size_t i = 0; i < n && i < MAXATT; i++) {
        attempt_copy_t *d = &o->att[i];
        snprintf(d->host, sizeof d->host, "%s", a[i].host);
        snprintf(d->address, sizeof d->address, "%s", a[i].address);
        snprintf(d->sqlstate, sizeof d->sqlstate, "%s", a[i].sqlstate);
        snprintf(d->message, sizeof d->message, "%s", a[i].message);
        d->port = a[i].port;
        d->phase = a[i].phase;
        d->status = a[i].status;
    }
    snprintf(o->message, sizeof o->message, "%s", pgw_conn_error_message(conn));
    o->phase = pgw_conn_phase(conn);
}

static void on_connect(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    ctx_t *x = ud;
    x->done = 1;
    x->status = status;
    /* the report is complete when the callback runs */
    copy_report(conn, x->out);
    assert_int_equal(status == PGW_ESERVER, err != NULL);
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    *(int *)ud = 1;
}

/* parsed: connect with pgw_conn_connect_parsed (ci unused), else with
 * pgw_conn_connect(ci). */
/* Lower the descriptor limit to the lowest free descriptor's number: no
 * descriptor can be made until fds_restore. Returns the limit before. */
static struct rlimit fds_starve(void)
{
    struct rlimit old, r;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    int lowest = dup(0);
    assert_true(lowest >= 0);
    close(lowest);
    r = old;
    r.rlim_cur = (rlim_t)lowest;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &r), 0);
    return old;
}

static void fds_restore(const struct rlimit *old)
{
    assert_int_equal(setrlimit(RLIMIT_NOFILE, old), 0);
}

/* The socket of the connect attempt in progress, or -1. */
static void find_socket(uv_handle_t *h, void *arg)
{
    uv_os_fd_t fd;
    if (h->type == UV_POLL && !uv_is_closing(h) && uv_fileno(h, &fd) == 0) *(int *)arg = fd;
}

enum {
    RUN_STARVED = 1, /* the connect runs with no descriptor left to make
                        (its loop and connection made before) */
    RUN_HELD = 2,    /* reading paused from the start: the connect goes on
                        only once it resumes */
};

static int run_pgw_with(const char *ci, const pgw_conninfo_t *parsed, const pgw_conn_config_t *cfg,
                        int mode, outcome_t *o)
{
    int starved = mode & RUN_STARVED;
    memset(o, 0, sizeof *o);
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    pgw_conn_t *conn;
    assert_int_equal(pgw_conn_new(&conn, &loop, cfg), 0);
    assert_int_equal(pgw_conn_phase(conn), PGW_PHASE_NEW);
    ctx_t x = {0, 0, o};
    struct rlimit limit;
    if (starved) limit = fds_starve();
    if (parsed)
        assert_int_equal(pgw_conn_connect_parsed(conn, parsed, on_connect, &x), 0);
    else
        assert_int_equal(pgw_conn_connect(conn, ci, on_connect, &x), 0);
    if (mode & RUN_HELD) {
        /* A connect that failed at once (refused) waits for the resume,
         * its socket open, as libpq's PQconnectStart leaves the refusal
         * to PQconnectPoll. */
        assert_int_equal(pgw_conn_pause_reading(conn), 0);
        for (int i = 0; i < 10; i++)
            uv_run(&loop, UV_RUN_NOWAIT);
        assert_int_equal(x.done, 0);
        assert_int_equal(pgw_conn_phase(conn), PGW_PHASE_CONNECTING);
        int fd = -1;
        uv_walk(&loop, find_socket, &fd);
        assert_true(fd >= 0);
        assert_int_equal(pgw_conn_resume_reading(conn), 0);
    }
    while (!x.done)
        uv_run(&loop, UV_RUN_ONCE);
    if (starved) fds_restore(&limit);
    o->status = x.status;
    /* still readable after the callback, until the close */
    size_t n = 0;
    assert_non_null(pgw_conn_attempts(conn, &n));
    assert_int_equal(n, o->natt);
    assert_string_equal(pgw_conn_error_message(conn), o->message);
    int closed = 0;
    assert_int_equal(pgw_conn_close(conn, on_closed, &closed), 0);
    while (!closed)
        uv_run(&loop, UV_RUN_ONCE);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    return o->status;
}

static int run_pgw(const char *ci, outcome_t *o)
{
    return run_pgw_with(ci, NULL, NULL, 0, o);
}

/* libpq's PQerrorMessage for ci, without its final newline. */
static void run_libpq(const char *ci, char *out, size_t n)
{
    PGconn *pq = PQconnectdb(ci);
    assert_non_null(pq);
    assert_int_not_equal(PQstatus(pq), CONNECTION_OK);
    snprintf(out, n, "%s", PQerrorMessage(pq));
    size_t len = strlen(out);
    if (len && out[len - 1] == '\n') out[len - 1] = '\0';
    PQfinish(pq);
}

/* Connect with both libraries; their messages must be the same. Returns
 * libpgwire's status, its report in *o. */
static int agree(const char *ci, outcome_t *o)
{
    char pq[4096];
    run_libpq(ci, pq, sizeof pq);
    int rc = run_pgw(ci, o);
    assert_int_not_equal(rc, 0);
    print_message("conninfo:  %s\nstatus:    %s (%d: %s)\nlibpq:     %s\nlibpgwire: %s\n\n", ci,
                  pgw_err_name(rc), rc, pgw_strerror(rc), pq, o->message);
    if (strcmp(pq, o->message) != 0)
        fail_msg("messages differ for %s\n  libpq:     %s\n  libpgwire: %s", ci, pq, o->message);
    /* the client's errbuf gets the same text */
    pgw_client_t *c = NULL;
    char err[4096];
    assert_int_equal(pgw_client_connect_err(&c, ci, NULL, err, sizeof err), rc);
    assert_null(c);
    assert_string_equal(err, o->message);
    return rc;
}

/* ---------------------------------------------------------------- sockets */

/* A port nothing listens on: connects are refused. */
static unsigned free_port(void)
{
    unsigned port;
    close(pgt_loopback_socket(&port, 0));
    return port;
}

/* A listening socket that never accepts: connects complete into the
 * backlog and nothing ever answers. */
static int blackhole(unsigned *port)
{
    return pgt_loopback_socket(port, 1);
}

static void expect_attempt(const outcome_t *o, size_t i, const char *host, const char *address,
                           unsigned port, int phase, int status)
{
    assert_true(i < o->natt);
    const attempt_copy_t *a = &o->att[i];
    if (a->status != status || a->phase != phase)
        fail_msg("attempt %zu: %s in %s, expected %s in %s (%s)", i, pgw_err_name(a->status),
                 pgw_conn_phase_name(a->phase), pgw_err_name(status), pgw_conn_phase_name(phase),
                 a->message);
    assert_string_equal(a->host, host);
    assert_string_equal(a->address, address);
    assert_int_equal(a->port, port);
}

static const char *user(void)
{
    return pgt_env_required("PGUSER");
}

static const char *db(void)
{
    return pgt_env_required("PGDATABASE");
}

static unsigned pgport(void)
{
    return (unsigned)atoi(pgt_env_required("PGPORT"));
}

/* ------------------------------------------------------------------ tests */

static void test_dns(void **state)
{
    pgt_require_server();
    char ci[512];
    snprintf(ci, sizeof ci, "host=nonexistent.invalid port=%u user=%s dbname=%s", pgport(), user(),
             db());
    outcome_t o;
    assert_int_equal(agree(ci, &o), PGW_EDNS);
    assert_int_equal(o.natt, 1);
    expect_attempt(&o, 0, "nonexistent.invalid", "", pgport(), PGW_PHASE_RESOLVING, PGW_EDNS);
    assert_non_null(
        strstr(o.att[0].message, "could not translate host name \"nonexistent.invalid\""));
    assert_int_equal(o.phase, PGW_PHASE_FAILED);
}

static void test_refused(void **state)
{
    pgt_require_server();
    char ci[512];
    unsigned p = free_port();
    snprintf(ci, sizeof ci, "host=127.0.0.1 port=%u user=%s dbname=%s", p, user(), db());
    outcome_t o;
    assert_int_equal(agree(ci, &o), UV_ECONNREFUSED);
    assert_int_equal(o.natt, 1);
    expect_attempt(&o, 0, "127.0.0.1", "127.0.0.1", p, PGW_PHASE_CONNECTING, UV_ECONNREFUSED);
    char want[512];
    snprintf(want, sizeof want,
             "connection to server at \"127.0.0.1\", port %u failed: Connection refused\n"
             "\tIs the server running on that host and accepting TCP/IP connections?",
             p);
    assert_string_equal(o.att[0].message, want);
    assert_int_equal(run_pgw_with(ci, NULL, NULL, RUN_HELD, &o), UV_ECONNREFUSED);
    expect_attempt(&o, 0, "127.0.0.1", "127.0.0.1", p, PGW_PHASE_CONNECTING, UV_ECONNREFUSED);
    assert_string_equal(o.att[0].message, want);
    /* the name differs from the address: both are shown */
    snprintf(ci, sizeof ci, "host=localhost hostaddr=127.0.0.1 port=%u user=%s dbname=%s", p,
             user(), db());
    assert_int_equal(agree(ci, &o), UV_ECONNREFUSED);
    expect_attempt(&o, 0, "localhost", "127.0.0.1", p, PGW_PHASE_CONNECTING, UV_ECONNREFUSED);
}

static void test_unix_socket_missing(void **state)
{
    pgt_require_server();
    char ci[512];
    snprintf(ci, sizeof ci, "host=/nonexistent-pgw-dir port=5432 user=%s dbname=%s", user(), db());
    outcome_t o;
    assert_int_equal(agree(ci, &o), UV_ENOENT);
    expect_attempt(&o, 0, "/nonexistent-pgw-dir", "/nonexistent-pgw-dir/.s.PGSQL.5432", 5432,
                   PGW_PHASE_CONNECTING, UV_ENOENT);
}

static void test_timeout(void **state)
{
    pgt_require_server();
    unsigned p;
    int fd = blackhole(&p);
    char ci[512];
    snprintf(ci, sizeof ci, "host=127.0.0.1 port=%u user=%s dbname=%s connect_timeout=2", p, user(),
             db());
    outcome_t o;
    uint64_t t0 = uv_hrtime();
    assert_int_equal(run_pgw(ci, &o), PGW_ETIMEDOUT);
    /* the blackhole never answers: only connect_timeout ends the attempt */
    pgt_assert_in_time("connect_timeout=2 on a blackhole", pgt_ms_since(t0), 1900,
                       PGT_WORK_ENDLESS);
    /* sslmode=prefer: the SSLRequest is what went unanswered */
    expect_attempt(&o, 0, "127.0.0.1", "127.0.0.1", p, PGW_PHASE_TLS, PGW_ETIMEDOUT);
    assert_int_equal(agree(ci, &o), PGW_ETIMEDOUT);
    /* in plaintext it is the startup packet */
    snprintf(ci, sizeof ci,
             "host=127.0.0.1 port=%u user=%s dbname=%s connect_timeout=2 "
             "sslmode=disable",
             p, user(), db());
    assert_int_equal(agree(ci, &o), PGW_ETIMEDOUT);
    expect_attempt(&o, 0, "127.0.0.1", "127.0.0.1", p, PGW_PHASE_STARTUP, PGW_ETIMEDOUT);
    close(fd);
}

/* Take the connection the queue holds after 300 ms. */
static void *accept_later(void *arg)
{
    usleep(300 * 1000);
    int a = accept(*(int *)arg, NULL, NULL);
    if (a >= 0) close(a);
    return NULL;
}

/* A connect that is still in progress when connect() returns, as across a
 * network (over loopback it has mostly finished by then, and its outcome
 * is taken without waiting for the socket): a listener whose accept queue
 * is full drops the SYN, and the kernel sends it again about a second
 * later. */
static void test_connect_in_progress(void **state)
{
    pgt_require_server();
    unsigned p;
    int fd = pgt_loopback_socket(&p, 0);
    assert_int_equal(listen(fd, 0), 0);
    int filler = socket(AF_INET, SOCK_STREAM, 0); /* the one connection the queue holds */
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(filler, (struct sockaddr *)&sa, sizeof sa), 0);
    char ci[512];
    snprintf(ci, sizeof ci,
             "host=127.0.0.1 port=%u user=%s dbname=%s connect_timeout=2 sslmode=disable", p,
             user(), db());
    outcome_t o;
    /* the queue stays full: the connect itself times out */
    assert_int_equal(agree(ci, &o), PGW_ETIMEDOUT);
    expect_attempt(&o, 0, "127.0.0.1", "127.0.0.1", p, PGW_PHASE_CONNECTING, PGW_ETIMEDOUT);
    /* room again before the SYN is sent again: the connect finishes when
     * the socket turns writable, and the startup packet is what goes
     * unanswered */
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, accept_later, &fd), 0);
    assert_int_equal(run_pgw(ci, &o), PGW_ETIMEDOUT);
    assert_int_equal(pthread_join(t, NULL), 0);
    expect_attempt(&o, 0, "127.0.0.1", "127.0.0.1", p, PGW_PHASE_STARTUP, PGW_ETIMEDOUT);
    close(filler);
    close(fd);
}

static void test_wrong_password(void **state)
{
    pgt_require_server();
    char ci[512];
    const char *su = pgt_env_required("PGW_TEST_SCRAM_USER");
    pgt_conninfo_tcp(ci, sizeof ci, su, "wrong", NULL);
    outcome_t o;
    assert_int_equal(agree(ci, &o), PGW_ESERVER);
    /* sslmode=prefer: libpq retries an authentication refusal without TLS */
    assert_true(o.natt >= 1);
    for (size_t i = 0; i < o.natt; i++) {
        expect_attempt(&o, i, "127.0.0.1", "127.0.0.1", pgport(), PGW_PHASE_AUTHENTICATING,
                       PGW_ESERVER);
        assert_string_equal(o.att[i].sqlstate, "28P01");
    }
    char want[512];
    snprintf(want, sizeof want,
             "connection to server at \"127.0.0.1\", port %u failed: FATAL:  password "
             "authentication failed for user \"%s\"",
             pgport(), su);
    assert_string_equal(o.att[0].message, want);
    /* in plaintext: one attempt; a later host is not tried (as libpq) */
    char list[640];
    snprintf(list, sizeof list,
             "host=127.0.0.1,127.0.0.1 port=%u,%u user=%s password=wrong dbname=%s "
             "sslmode=disable",
             pgport(), free_port(), su, db());
    assert_int_equal(agree(list, &o), PGW_ESERVER);
    assert_int_equal(o.natt, 1);
    assert_string_equal(o.message, want);
}

static void test_target_standby(void **state)
{
    pgt_require_server();
    char ci[512];
    pgt_conninfo_tcp(ci, sizeof ci, user(), NULL, "target_session_attrs=standby");
    outcome_t o;
    assert_int_equal(agree(ci, &o), PGW_ETARGET);
    assert_int_equal(o.natt, 1);
    expect_attempt(&o, 0, "127.0.0.1", "127.0.0.1", pgport(), PGW_PHASE_CHECKING_TARGET,
                   PGW_ETARGET);
    assert_non_null(strstr(o.message, "failed: server is not in hot standby mode"));
    pgt_conninfo_tcp(ci, sizeof ci, user(), NULL, "target_session_attrs=read-only");
    assert_int_equal(agree(ci, &o), PGW_ETARGET);
    assert_non_null(strstr(o.message, "failed: session is not read-only"));
}

/* Every cause in one host list: each attempt named, in order. */
static void test_host_list(void **state)
{
    pgt_require_server();
    unsigned bh;
    int fd = blackhole(&bh);
    unsigned refused = free_port();
    char ci[1024];
    snprintf(ci, sizeof ci,
             "host=nonexistent.invalid,127.0.0.1,127.0.0.1,127.0.0.1 port=%u,%u,%u,%u user=%s "
             "dbname=%s connect_timeout=2 target_session_attrs=standby",
             pgport(), refused, bh, pgport(), user(), db());
    outcome_t o;
    assert_int_equal(agree(ci, &o), PGW_ETARGET); /* a server was reached */
    assert_int_equal(o.natt, 4);
    expect_attempt(&o, 0, "nonexistent.invalid", "", pgport(), PGW_PHASE_RESOLVING, PGW_EDNS);
    expect_attempt(&o, 1, "127.0.0.1", "127.0.0.1", refused, PGW_PHASE_CONNECTING, UV_ECONNREFUSED);
    expect_attempt(&o, 2, "127.0.0.1", "127.0.0.1", bh, PGW_PHASE_TLS, PGW_ETIMEDOUT);
    expect_attempt(&o, 3, "127.0.0.1", "127.0.0.1", pgport(), PGW_PHASE_CHECKING_TARGET,
                   PGW_ETARGET);
    /* the message is the attempts' messages, one after the other */
    char joined[4096] = "";
    for (size_t i = 0; i < o.natt; i++)
        snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", i ? "\n" : "",
                 o.att[i].message);
    assert_string_equal(o.message, joined);

    /* different causes, no server reached: PGW_ECONNECT */
    snprintf(ci, sizeof ci, "host=nonexistent.invalid,127.0.0.1 port=%u,%u user=%s dbname=%s",
             pgport(), refused, user(), db());
    assert_int_equal(agree(ci, &o), PGW_ECONNECT);
    assert_int_equal(o.natt, 2);
    /* the same cause everywhere: that cause */
    snprintf(ci, sizeof ci, "host=127.0.0.1,127.0.0.1 port=%u,%u user=%s dbname=%s", refused,
             free_port(), user(), db());
    assert_int_equal(agree(ci, &o), UV_ECONNREFUSED);
    assert_int_equal(o.natt, 2);
    close(fd);
}

/* No descriptor left for the socket: libpq's words for it (the socket()
 * failure, without the hint of a refused connect). */
static void test_no_descriptor_left(void **state)
{
    pgt_require_server();
    char ci[512], pq[4096];
    pgt_conninfo_tcp(ci, sizeof ci, user(), NULL, "sslmode=disable gssencmode=disable");
    struct rlimit limit = fds_starve();
    run_libpq(ci, pq, sizeof pq);
    fds_restore(&limit);
    outcome_t o;
    assert_int_equal(run_pgw_with(ci, NULL, NULL, RUN_STARVED, &o), UV_EMFILE);
    assert_string_equal(o.message, pq);
    assert_non_null(strstr(o.message, "could not create socket: Too many open files"));
    assert_null(strstr(o.message, "Is the server running"));
}

/* blocking_resolve: the names are looked up on the loop's thread, with the
 * same attempts and messages as on the thread pool (libpq's). */
static void test_blocking_resolve(void **state)
{
    pgt_require_server();
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.blocking_resolve = 1;
    char ci[512], pq[4096];
    snprintf(ci, sizeof ci, "host=nonexistent.invalid port=%u user=%s dbname=%s", pgport(), user(),
             db());
    outcome_t o;
    assert_int_equal(run_pgw_with(ci, NULL, &cfg, 0, &o), PGW_EDNS);
    run_libpq(ci, pq, sizeof pq);
    assert_string_equal(o.message, pq);
    assert_int_equal(o.natt, 1);
    expect_attempt(&o, 0, "nonexistent.invalid", "", pgport(), PGW_PHASE_RESOLVING, PGW_EDNS);
    /* on to the next host, whose name resolves */
    snprintf(ci, sizeof ci, "host=nonexistent.invalid,localhost port=%u user=%s dbname=%s",
             pgport(), user(), db());
    assert_int_equal(run_pgw_with(ci, NULL, &cfg, 0, &o), 0);
    assert_true(o.natt >= 2);
    expect_attempt(&o, 0, "nonexistent.invalid", "", pgport(), PGW_PHASE_RESOLVING, PGW_EDNS);
    assert_string_equal(o.att[o.natt - 1].host, "localhost");
    assert_int_equal(o.att[o.natt - 1].phase, PGW_PHASE_READY);
}

/* A connect that succeeds after failed attempts lists them, with the one
 * that connected last; the error message is empty, as libpq's. */
static void test_success_after_failures(void **state)
{
    pgt_require_server();
    char ci[512];
    unsigned refused = free_port();
    snprintf(ci, sizeof ci,
             "host=nonexistent.invalid,127.0.0.1,127.0.0.1 port=%u,%u,%u user=%s "
             "dbname=%s",
             pgport(), refused, pgport(), user(), db());
    outcome_t o;
    assert_int_equal(run_pgw(ci, &o), 0);
    assert_int_equal(o.phase, PGW_PHASE_READY);
    assert_int_equal(o.natt, 3);
    expect_attempt(&o, 0, "nonexistent.invalid", "", pgport(), PGW_PHASE_RESOLVING, PGW_EDNS);
    expect_attempt(&o, 1, "127.0.0.1", "127.0.0.1", refused, PGW_PHASE_CONNECTING, UV_ECONNREFUSED);
    expect_attempt(&o, 2, "127.0.0.1", "127.0.0.1", pgport(), PGW_PHASE_READY, 0);
    assert_string_equal(o.att[2].message, "");
    assert_string_equal(o.message, "");
}

/* Options parsed by the caller drive the connect as the same string does
 * (every host of the list, in order), and stay the caller's: readable
 * after the connection is freed, freed once by the caller (ASan and
 * valgrind runs see a double free or a leak). */
static void test_connect_parsed(void **state)
{
    pgt_require_server();
    char str[512];
    unsigned refused = free_port();
    snprintf(str, sizeof str, "host=127.0.0.1,127.0.0.1 port=%u,%u user=%s dbname=%s", refused,
             pgport(), user(), db());
    pgw_conninfo_t *ci = NULL;
    assert_int_equal(pgw_conninfo_parse(&ci, str, NULL, NULL, 0), 0);
    outcome_t o;
    assert_int_equal(run_pgw_with(NULL, ci, NULL, 0, &o), 0);
    assert_int_equal(o.phase, PGW_PHASE_READY);
    assert_int_equal(o.natt, 2);
    expect_attempt(&o, 0, "127.0.0.1", "127.0.0.1", refused, PGW_PHASE_CONNECTING, UV_ECONNREFUSED);
    expect_attempt(&o, 1, "127.0.0.1", "127.0.0.1", pgport(), PGW_PHASE_READY, 0);
    assert_string_equal(pgw_conninfo_get(ci, "dbname"), db());
    assert_string_equal(pgw_conninfo_get(ci, "user"), user());
    pgw_conninfo_free(ci);

    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    pgw_conn_t *conn;
    assert_int_equal(pgw_conn_new(&conn, &loop, NULL), 0);
    ctx_t x = {0, 0, &o};
    assert_int_equal(pgw_conn_connect_parsed(conn, NULL, on_connect, &x), PGW_EINVAL);
    assert_int_equal(pgw_conn_phase(conn), PGW_PHASE_NEW);
    int closed = 0;
    assert_int_equal(pgw_conn_close(conn, on_closed, &closed), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_true(closed);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_phase_names(void **state)
{
    static const char *const names[] = {
        "new",   "resolving",       "connecting", "gss",   "tls", "startup", "authenticating",
        "setup", "checking_target", "ready",      "failed"};
    for (int i = PGW_PHASE_NEW; i <= PGW_PHASE_FAILED; i++)
        assert_string_equal(pgw_conn_phase_name(i), names[i]);
    assert_string_equal(pgw_conn_phase_name(-1), "unknown");
    assert_string_equal(pgw_conn_phase_name(PGW_PHASE_FAILED + 1), "unknown");
    assert_int_equal(pgw_conn_phase(NULL), PGW_PHASE_NEW);
    size_t n = 7;
    assert_null(pgw_conn_attempts(NULL, &n));
    assert_int_equal(n, 0);
    assert_string_equal(pgw_err_name(PGW_EDNS), "EDNS");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phase_names),      cmocka_unit_test(test_dns),
        cmocka_unit_test(test_refused),          cmocka_unit_test(test_unix_socket_missing),
        cmocka_unit_test(test_timeout),          cmocka_unit_test(test_connect_in_progress),
        cmocka_unit_test(test_wrong_password),   cmocka_unit_test(test_target_standby),
        cmocka_unit_test(test_host_list),        cmocka_unit_test(test_success_after_failures),
        cmocka_unit_test(test_blocking_resolve), cmocka_unit_test(test_no_descriptor_left),
        cmocka_unit_test(test_connect_parsed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
