/*
 * The session against the throwaway cluster, through a small blocking driver
 * (poll + non-blocking read/write on a socket): trust, SCRAM and MD5 logins;
 * 10,000 pipelined requests with random Syncs and 5% failing statements
 * (RELIABILITY.md case 1); equivalents of libpq_pipeline's simple_pipeline,
 * multi_pipelines, pipeline_abort, transaction, uniqviol and prepared; and a
 * 10,000-row buffered result read through typed accessors.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "pgraw.h"
#include "pgtest.h"
#include "pgwire/session.h"

/* ------------------------------------------------------------------ driver */

typedef struct drv {
    int fd;
    pgw_session_t *s;
    int startup_done, startup_status;
    char startup_message[160];
} drv_t;

static void on_startup(pgw_session_t *s, int status, const pgw_error_t *err, void *ud)
{
    drv_t *d = ud;
    (void)s;
    d->startup_done = 1;
    d->startup_status = status;
    if (err && err->message) {
        snprintf(d->startup_message, sizeof d->startup_message, "%s", err->message);
        fprintf(stderr, "startup: %s\n", err->message);
    }
}

/* Move bytes until done() or the session breaks. Returns 0, or the break. */
static int pump(drv_t *d, int (*done)(drv_t *, void *), void *arg)
{
    while (!done(d, arg)) {
        if (pgw_session_state(d->s) == PGW_SESSION_BROKEN) return pgw_session_error(d->s);
        size_t olen;
        const uint8_t *out = pgw_session_pending_output(d->s, &olen);
        struct pollfd p = {d->fd, (short)(POLLIN | (olen ? POLLOUT : 0)), 0};
        int n = poll(&p, 1, 10000);
        assert_true(n > 0);
        if (p.revents & POLLOUT) {
            ssize_t w = write(d->fd, out, olen);
            if (w > 0) pgw_session_consumed_output(d->s, (size_t)w);
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            uint8_t *buf;
            size_t cap;
            assert_int_equal(pgw_session_input_buffer(d->s, &buf, &cap), 0);
            ssize_t r = read(d->fd, buf, cap);
            if (r == 0) {
                pgw_session_fail(d->s, PGW_ECONNLOST);
                continue;
            }
            if (r < 0) {
                if (errno == EAGAIN || errno == EINTR) continue;
                pgw_session_fail(d->s, PGW_ECONNLOST);
                continue;
            }
            int rc = pgw_session_input_commit(d->s, (size_t)r);
            if (rc < 0) return rc;
        }
    }
    return 0;
}

static int startup_finished(drv_t *d, void *arg)
{
    (void)arg;
    return d->startup_done;
}

static int nothing_pending(drv_t *d, void *arg)
{
    (void)arg;
    return pgw_session_pending(d->s) == 0;
}

/* What a test may change about a connection (zero: the defaults). */
typedef struct drv_opts {
    int tcp;
    const char *user, *password, *require_auth;
    const char *database; /* NULL: PGDATABASE */
    uint32_t min_protocol, max_protocol;
    const char *extra[4]; /* more (name, value) startup pairs */
    size_t nextra;
    const pgw_allocator_t *alloc;
    uint32_t stmt_cache_mode;
} drv_opts_t;

/* Connect and authenticate; returns the startup status. */
static int drv_open_opts(drv_t *d, const drv_opts_t *o)
{
    memset(d, 0, sizeof *d);
    const char *tcp_host = pgt_env("PGW_TEST_TCP_HOST");
    d->fd = pgt_raw_socket(o->tcp ? (tcp_host ? tcp_host : "127.0.0.1") : NULL);
    fcntl(d->fd, F_SETFL, fcntl(d->fd, F_GETFL) | O_NONBLOCK);
    const char *db = o->database ? o->database : pgt_env("PGDATABASE");
    const char *params[8] = {"user", o->user ? o->user : pgt_env_required("PGUSER"), "database",
                             db ? db : "postgres"};
    assert_true(o->nextra <= 2);
    for (size_t i = 0; i < 2 * o->nextra; i++)
        params[4 + i] = o->extra[i];
    pgw_session_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = 2 + o->nextra;
    cfg.password = o->password;
    cfg.require_auth = o->require_auth;
    cfg.min_protocol = o->min_protocol;
    cfg.max_protocol = o->max_protocol;
    cfg.alloc = o->alloc;
    cfg.stmt_cache_mode = o->stmt_cache_mode;
    cfg.cb.on_startup = on_startup;
    cfg.ud = d;
    assert_int_equal(pgw_session_new(&d->s, &cfg), 0);
    assert_int_equal(pgw_session_start(d->s), 0);
    int rc = pump(d, startup_finished, NULL);
    return d->startup_done ? d->startup_status : rc;
}

static int drv_open(drv_t *d, int tcp, const char *user, const char *password,
                    const char *require_auth)
{
    drv_opts_t o = {.tcp = tcp, .user = user, .password = password, .require_auth = require_auth};
    return drv_open_opts(d, &o);
}

static void drv_close(drv_t *d)
{
    if (pgw_session_state(d->s) == PGW_SESSION_READY) {
        pgw_session_terminate(d->s);
        size_t n;
        const uint8_t *p = pgw_session_pending_output(d->s, &n);
        if (n) (void)!write(d->fd, p, n);
    }
    close(d->fd);
    pgw_session_free(d->s);
}

/* ------------------------------------------------------------- recording */

enum { MAXREQ = 10000 };

typedef struct done {
    int calls, status;
    int64_t value;
    char sqlstate[8];
} done_t;

static done_t D[MAXREQ + 16];

static void rec_cb(int status, pgw_result_t *res, void *ud)
{
    done_t *d = &D[(uintptr_t)ud];
    d->calls++;
    d->status = status;
    if (res) {
        if (pgw_result_nrows(res) > 0) {
            int64_t v;
            if (pgw_result_int8(res, 0, 0, &v) == 0) d->value = v;
        }
        const pgw_error_t *e = pgw_result_error(res);
        if (e && e->sqlstate) snprintf(d->sqlstate, sizeof d->sqlstate, "%s", e->sqlstate);
        pgw_result_free(res);
    }
}

#define UD(i) ((void *)(uintptr_t)(i))

static void exec_ok(drv_t *d, const char *sql)
{
    memset(&D[MAXREQ], 0, sizeof D[MAXREQ]);
    assert_int_equal(pgw_session_simple_query(d->s, sql, rec_cb, UD(MAXREQ)), 0);
    assert_int_equal(pump(d, nothing_pending, NULL), 0);
    assert_int_equal(D[MAXREQ].calls, 1);
    assert_int_equal(D[MAXREQ].status, 0);
}

/* ------------------------------------------------------------------ tests */

static void test_logins(void **state)
{
    (void)state;
    pgt_require_server();
    drv_t d;
    assert_int_equal(drv_open(&d, 0, NULL, NULL, NULL), 0);
    assert_string_equal(pgw_session_auth_method(d.s), "trust");
    assert_non_null(pgw_session_parameter(d.s, "server_version"));
    drv_close(&d);

    const char *su = pgt_env_required("PGW_TEST_SCRAM_USER");
    const char *sp = pgt_env_required("PGW_TEST_SCRAM_PASSWORD");
    assert_int_equal(drv_open(&d, 1, su, sp, "scram-sha-256"), 0);
    assert_string_equal(pgw_session_auth_method(d.s), "SCRAM-SHA-256");
    exec_ok(&d, "SELECT 1");
    drv_close(&d);
    assert_int_equal(drv_open(&d, 1, su, "wrong", NULL), PGW_ESERVER);
    drv_close(&d);

    const char *mu = pgt_env_required("PGW_TEST_MD5_USER");
    const char *mp = pgt_env_required("PGW_TEST_MD5_PASSWORD");
    assert_int_equal(drv_open(&d, 1, mu, mp, NULL), 0);
    assert_string_equal(pgw_session_auth_method(d.s), "md5");
    drv_close(&d);
    /* The policy refuses MD5 before sending the hash. */
    assert_int_equal(drv_open(&d, 1, mu, mp, "scram-sha-256"), PGW_EAUTHPOLICY);
    drv_close(&d);
}

/* Case 1: 10,000 pipelined requests, random Syncs, 5% failures. */
static void run_pipeline(unsigned seed)
{
    drv_t d;
    assert_int_equal(drv_open(&d, 0, NULL, NULL, NULL), 0);
    exec_ok(&d, "CREATE TEMP TABLE uv(k int PRIMARY KEY); INSERT INTO uv VALUES (1)");
    srand(seed);
    static int expect[MAXREQ]; /* 0 ok, 1 fails, 2 aborted */
    memset(D, 0, sizeof D);
    int i = 0, batches = 0, batch_calls = 0;
    static pgw_param_t ps[50];
    pgw_request_t reqs[50];
    while (i < MAXREQ) {
        int k = 1 + rand() % 50;
        int failed = 0;
        size_t n = 0;
        for (int j = 0; j < k && i < MAXREQ; j++, i++, n++) {
            int r = rand() % 100;
            if (r < 5) {
                static const char *bad[] = {"SELECT 1/0", "INSERT INTO uv VALUES (1)", "SELEC 1"};
                reqs[n] = PGW_QUERY(bad[r % 3], NULL, 0, rec_cb, UD(i));
                expect[i] = failed ? 2 : 1;
                failed = 1;
            } else {
                ps[n] = pgw_int8(i);
                reqs[n] = PGW_QUERY("SELECT $1::int8 AS tag", &ps[n], 1, rec_cb, UD(i));
                expect[i] = failed ? 2 : 0;
            }
        }
        assert_int_equal(pgw_session_submit_batch(d.s, reqs, n, 0, rec_cb, UD(MAXREQ + 1)), 0);
        batches++;
    }
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    batch_calls = D[MAXREQ + 1].calls;
    assert_int_equal(batch_calls, batches);
    for (i = 0; i < MAXREQ; i++) {
        assert_int_equal(D[i].calls, 1);
        if (expect[i] == 0) {
            assert_int_equal(D[i].status, 0);
            assert_int_equal(D[i].value, i);
        } else if (expect[i] == 1) {
            assert_int_equal(D[i].status, PGW_ESERVER);
        } else {
            assert_int_equal(D[i].status, PGW_EABORTED);
        }
    }
    assert_int_equal(pgw_session_pending(d.s), 0);
    drv_close(&d);
}

static void test_pipeline_10k(void **state)
{
    (void)state;
    pgt_require_server();
    static const unsigned seeds[] = {1, 42, 20240601};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        run_pipeline(seeds[i]);
}

/* simple_pipeline, multi_pipelines, pipeline_abort, transaction, uniqviol. */
static void test_libpq_pipeline_equivalents(void **state)
{
    (void)state;
    pgt_require_server();
    drv_t d;
    assert_int_equal(drv_open(&d, 0, NULL, NULL, NULL), 0);
    memset(D, 0, sizeof D);
    pgw_param_t one = pgw_int8(1);
    /* simple_pipeline + multi_pipelines: two batches sent before reading. */
    for (int b = 0; b < 2; b++) {
        pgw_request_t one_req = PGW_QUERY("SELECT $1::int8", &one, 1, rec_cb, UD(b));
        assert_int_equal(pgw_session_submit_batch(d.s, &one_req, 1, 0, rec_cb, UD(10 + b)), 0);
    }
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    assert_int_equal(D[0].value, 1);
    assert_int_equal(D[1].value, 1);
    assert_true(D[10].calls == 1 && D[11].calls == 1 && D[10].status == 0);

    /* pipeline_abort + transaction: an explicit transaction, a failure, the
     * rest aborted; after the Sync the session is usable and idle again. */
    exec_ok(&d, "CREATE TEMP TABLE pa(id int PRIMARY KEY)");
    memset(D, 0, sizeof D);
    pgw_request_t tx[] = {
        PGW_QUERY("BEGIN", NULL, 0, rec_cb, UD(0)),
        PGW_QUERY("INSERT INTO pa VALUES (1)", NULL, 0, rec_cb, UD(1)),
        PGW_QUERY("INSERT INTO pa VALUES (1)", NULL, 0, rec_cb, UD(2)),
        PGW_QUERY("INSERT INTO pa VALUES (2)", NULL, 0, rec_cb, UD(3)),
        PGW_QUERY("COMMIT", NULL, 0, rec_cb, UD(4)),
    };
    assert_int_equal(pgw_session_submit_batch(d.s, tx, 5, 0, rec_cb, UD(5)), 0);
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    assert_int_equal(D[0].status, 0);
    assert_int_equal(D[1].status, 0);
    assert_int_equal(D[2].status, PGW_ESERVER);
    assert_string_equal(D[2].sqlstate, "23505"); /* uniqviol */
    assert_int_equal(D[3].status, PGW_EABORTED);
    assert_int_equal(D[4].status, PGW_EABORTED);
    assert_int_equal(D[5].status, PGW_ESERVER);
    /* The failed transaction block is still open at the Sync. */
    assert_int_equal(pgw_session_txn_status(d.s), 'E');
    exec_ok(&d, "ROLLBACK");
    assert_int_equal(pgw_session_txn_status(d.s), 'I');
    memset(D, 0, sizeof D);
    assert_int_equal(pgw_session_query(d.s, "SELECT count(*) FROM pa", NULL, 0, 0, rec_cb, UD(0)),
                     0);
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    assert_int_equal(D[0].status, 0);
    assert_int_equal(D[0].value, 0);
    drv_close(&d);
}

static pgw_result_t *kept;

static void keep_cb(int status, pgw_result_t *res, void *ud)
{
    rec_cb(status, NULL, ud);
    kept = res;
}

/* prepared: describe, then execute with the stored per-column formats. */
static void test_prepared(void **state)
{
    (void)state;
    pgt_require_server();
    drv_t d;
    assert_int_equal(drv_open(&d, 0, NULL, NULL, NULL), 0);
    memset(D, 0, sizeof D);
    static const uint32_t oids[] = {20};
    assert_int_equal(pgw_session_prepare(d.s, "p1", "SELECT $1::int8 + 1 AS a, 'x'::text AS b",
                                         oids, 1, keep_cb, UD(0)),
                     0);
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    assert_int_equal(D[0].status, 0);
    assert_int_equal(pgw_result_nparams(kept), 1);
    assert_int_equal(pgw_result_param_type(kept, 0), 20);
    assert_int_equal(pgw_result_ncols(kept), 2);
    assert_int_equal(pgw_result_ftype(kept, 0), 20);
    pgw_result_free(kept);
    pgw_param_t p = pgw_int8(41);
    assert_int_equal(pgw_session_execute(d.s, "p1", &p, 1, 0, keep_cb, UD(1)), 0);
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    assert_int_equal(D[1].status, 0);
    int64_t v;
    assert_int_equal(pgw_result_int8(kept, 0, 0, &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(pgw_result_fformat(kept, 0), PGW_FORMAT_BINARY);
    pgw_str_t t;
    assert_int_equal(pgw_result_text(kept, 0, 1, &t), 0);
    assert_int_equal(t.len, 1);
    assert_memory_equal(t.p, "x", 1);
    pgw_result_free(kept);
    assert_int_equal(pgw_session_close_statement(d.s, "p1", rec_cb, UD(2)), 0);
    assert_int_equal(pgw_session_execute(d.s, "p1", &p, 1, 0, rec_cb, UD(3)), 0);
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    assert_int_equal(D[2].status, 0);
    assert_int_equal(D[3].status, PGW_ESERVER);
    assert_string_equal(D[3].sqlstate, "26000");
    drv_close(&d);
}

/* Run one request alone (its callback keeps the result in kept). */
static int run_kept(drv_t *d, int rc)
{
    assert_int_equal(rc, 0);
    assert_int_equal(pump(d, nothing_pending, NULL), 0);
    assert_int_equal(D[0].calls, 1);
    return D[0].status;
}

#define RUN_KEPT(d, call) (memset(&D[0], 0, sizeof D[0]), kept = NULL, run_kept(d, (call)))

static void expect_text_column(const char *name, const char *value)
{
    assert_non_null(kept);
    assert_int_equal(pgw_result_ncols(kept), 1);
    assert_string_equal(pgw_result_fname(kept, 0), name);
    assert_int_equal(pgw_result_ftype(kept, 0), 25);
    pgw_str_t t;
    assert_int_equal(pgw_result_text(kept, 0, 0, &t), 0);
    assert_int_equal(t.len, strlen(value));
    assert_memory_equal(t.p, value, t.len);
    int64_t v;
    assert_int_equal(pgw_result_int8(kept, 0, 0, &v), PGW_ETYPE);
    pgw_result_free(kept);
}

static void expect_stmt_invalid(const char *sqlstate)
{
    assert_int_equal(D[0].status, PGW_ESTMTINVALID);
    assert_non_null(kept);
    assert_non_null(pgw_result_error(kept));
    assert_string_equal(pgw_result_error(kept)->sqlstate, sqlstate);
    pgw_result_free(kept);
}

/* A result carries the description the server sent for that execution:
 * after a pipelined prepare/close, after DEALLOCATE + PREPARE run as SQL;
 * and a statement the server no longer runs as prepared is
 * PGW_ESTMTINVALID with the server's error. */
static void test_stale_descriptions(void **state)
{
    (void)state;
    pgt_require_server();
    drv_t d;
    assert_int_equal(drv_open(&d, 0, NULL, NULL, NULL), 0);
    memset(D, 0, sizeof D);

    /* prepare + close pipelined, then prepare + execute pipelined. */
    assert_int_equal(pgw_session_prepare(d.s, "s", "select 1::int8 as a", NULL, 0, rec_cb, UD(1)),
                     0);
    assert_int_equal(pgw_session_close_statement(d.s, "s", rec_cb, UD(2)), 0);
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    assert_int_equal(D[1].status, 0);
    assert_int_equal(D[2].status, 0);
    assert_int_equal(pgw_session_prepare(d.s, "s", "select 'x'::text as z", NULL, 0, rec_cb, UD(3)),
                     0);
    assert_int_equal(RUN_KEPT(&d, pgw_session_execute(d.s, "s", NULL, 0, 0, keep_cb, UD(0))), 0);
    assert_int_equal(D[3].status, 0);
    expect_text_column("z", "x");
    /* And again, now on the fast path. */
    assert_int_equal(RUN_KEPT(&d, pgw_session_execute(d.s, "s", NULL, 0, 0, keep_cb, UD(0))), 0);
    expect_text_column("z", "x");

    /* Replaced as SQL behind the session's back. */
    assert_int_equal(pgw_session_prepare(d.s, "q", "select 1::int8 as a", NULL, 0, rec_cb, UD(4)),
                     0);
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    exec_ok(&d, "DEALLOCATE q; PREPARE q AS select 'y'::text as w");
    assert_int_equal(RUN_KEPT(&d, pgw_session_execute(d.s, "q", NULL, 0, 0, keep_cb, UD(0))), 0);
    expect_text_column("w", "y");
    assert_int_equal(RUN_KEPT(&d, pgw_session_execute(d.s, "q", NULL, 0, 0, keep_cb, UD(0))), 0);
    expect_text_column("w", "y");

    /* DISCARD ALL drops every statement: 26000 as PGW_ESTMTINVALID. */
    exec_ok(&d, "DISCARD ALL");
    RUN_KEPT(&d, pgw_session_execute(d.s, "s", NULL, 0, 0, keep_cb, UD(0)));
    expect_stmt_invalid("26000");

    /* The result type of a prepared SELECT * changed: 0A000. */
    exec_ok(&d, "CREATE TEMP TABLE stale_t (c int4); INSERT INTO stale_t VALUES (1)");
    assert_int_equal(
        pgw_session_prepare(d.s, "star", "SELECT * FROM stale_t", NULL, 0, rec_cb, UD(5)), 0);
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    assert_int_equal(D[5].status, 0);
    exec_ok(&d, "ALTER TABLE stale_t ALTER COLUMN c TYPE text");
    RUN_KEPT(&d, pgw_session_execute(d.s, "star", NULL, 0, 0, keep_cb, UD(0)));
    expect_stmt_invalid("0A000");
    /* Prepared again, it runs with the new type. */
    assert_int_equal(pgw_session_close_statement(d.s, "star", rec_cb, UD(6)), 0);
    assert_int_equal(
        pgw_session_prepare(d.s, "star", "SELECT * FROM stale_t", NULL, 0, rec_cb, UD(7)), 0);
    assert_int_equal(RUN_KEPT(&d, pgw_session_execute(d.s, "star", NULL, 0, 0, keep_cb, UD(0))), 0);
    expect_text_column("c", "1");
    drv_close(&d);
}

/* The aclitem column of a kept result: text, with an ACL in it. */
static void expect_acl_text(size_t col, uint32_t oid)
{
    assert_int_equal(pgw_result_ftype(kept, col), oid);
    assert_int_equal(pgw_result_fformat(kept, col), PGW_FORMAT_TEXT);
    pgw_str_t t;
    assert_int_equal(pgw_result_text(kept, 0, col, &t), 0);
    assert_non_null(memchr(t.p, '=', t.len));
}

enum { OID_ACLITEM = 1033, OID_ACLITEM_ARRAY = 1034 };

/* Types without a binary output function (aclitem): one-shot queries work;
 * the columns libpgwire decodes stay binary. */
static void test_no_binary_output(void **state)
{
    (void)state;
    pgt_require_server();
    drv_t d;
    /* The unnamed path's rebind and its documented failures: the cache,
     * which binds a known statement with text for aclitem from the start,
     * is off here (test_stmt_cache.c covers it). */
    assert_int_equal(drv_open_opts(&d, &(drv_opts_t){.stmt_cache_mode = PGW_STMT_CACHE_OFF}), 0);
    memset(D, 0, sizeof D);
    const char *acl = "SELECT relacl FROM pg_class WHERE relacl IS NOT NULL";
    assert_int_equal(RUN_KEPT(&d, pgw_session_query(d.s, acl, NULL, 0, 0, keep_cb, UD(0))), 0);
    assert_true(pgw_result_nrows(kept) > 0);
    expect_acl_text(0, OID_ACLITEM_ARRAY);
    pgw_result_free(kept);
    assert_int_equal(RUN_KEPT(&d, pgw_session_query(d.s, "SELECT relacl FROM pg_class", NULL, 0, 0,
                                                    keep_cb, UD(0))),
                     0);
    assert_true(pgw_result_nrows(kept) > 10);
    pgw_result_free(kept);

    /* Mixed columns: the int4 still comes in binary. */
    const char *mixed = "SELECT makeaclitem(10, 10, 'SELECT', false), 1::int4";
    assert_int_equal(RUN_KEPT(&d, pgw_session_query(d.s, mixed, NULL, 0, 0, keep_cb, UD(0))), 0);
    expect_acl_text(0, OID_ACLITEM);
    assert_int_equal(pgw_result_fformat(kept, 1), PGW_FORMAT_BINARY);
    int32_t v;
    assert_int_equal(pgw_result_int4(kept, 0, 1, &v), 0);
    assert_int_equal(v, 1);
    pgw_result_free(kept);

    /* With parameters, streamed rows too. */
    pgw_param_t p[] = {pgw_int4(7), pgw_text("pg_class")};
    const char *withp = "SELECT relacl, $1::int4 FROM pg_class WHERE relname = $2";
    assert_int_equal(RUN_KEPT(&d, pgw_session_query(d.s, withp, p, 2, 0, keep_cb, UD(0))), 0);
    assert_int_equal(pgw_result_nrows(kept), 1);
    expect_acl_text(0, OID_ACLITEM_ARRAY);
    assert_int_equal(pgw_result_int4(kept, 0, 1, &v), 0);
    assert_int_equal(v, 7);
    pgw_result_free(kept);

    /* The prepared path picks text for the aclitem column from the
     * description; PGW_Q_TEXT always works. */
    assert_int_equal(pgw_session_prepare(d.s, "acl", withp, NULL, 0, rec_cb, UD(1)), 0);
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    assert_int_equal(D[1].status, 0);
    assert_int_equal(RUN_KEPT(&d, pgw_session_execute(d.s, "acl", p, 2, 0, keep_cb, UD(0))), 0);
    expect_acl_text(0, OID_ACLITEM_ARRAY);
    assert_int_equal(pgw_result_fformat(kept, 1), PGW_FORMAT_BINARY);
    pgw_result_free(kept);
    assert_int_equal(
        RUN_KEPT(&d, pgw_session_query(d.s, mixed, NULL, 0, PGW_Q_TEXT, keep_cb, UD(0))), 0);
    expect_acl_text(0, OID_ACLITEM);
    pgw_result_free(kept);

    /* Documented failures: inside a transaction block, and pipelined (a
     * request queued behind it); the session stays usable. */
    exec_ok(&d, "BEGIN");
    RUN_KEPT(&d, pgw_session_query(d.s, mixed, NULL, 0, 0, keep_cb, UD(0)));
    assert_int_equal(D[0].status, PGW_ESERVER);
    assert_string_equal(pgw_result_error(kept)->sqlstate, "42883");
    pgw_result_free(kept);
    exec_ok(&d, "ROLLBACK");
    memset(D, 0, sizeof D);
    kept = NULL;
    assert_int_equal(pgw_session_query(d.s, mixed, NULL, 0, 0, keep_cb, UD(0)), 0);
    assert_int_equal(pgw_session_query(d.s, "SELECT 5::int8", NULL, 0, 0, rec_cb, UD(1)), 0);
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    assert_int_equal(D[0].status, PGW_ESERVER);
    assert_string_equal(pgw_result_error(kept)->sqlstate, "42883");
    pgw_result_free(kept);
    assert_int_equal(D[1].status, 0);
    assert_int_equal(D[1].value, 5);
    drv_close(&d);
}

/* A buffered 10,000-row result of mixed types through typed accessors. */
static void test_big_result(void **state)
{
    (void)state;
    pgt_require_server();
    drv_t d;
    assert_int_equal(drv_open(&d, 0, NULL, NULL, NULL), 0);
    memset(D, 0, sizeof D);
    assert_int_equal(
        pgw_session_query(d.s,
                          "SELECT g::int2 % 100 AS s, g::int4 AS i, g::int8 * 1000000000 AS l, "
                          "g / 4.0::float8 AS f, 'row ' || g AS t, g % 2 = 0 AS b, "
                          "CASE WHEN g % 7 = 0 THEN NULL ELSE g END AS n "
                          "FROM generate_series(1, 10000) g",
                          NULL, 0, 0, keep_cb, UD(0)),
        0);
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    assert_int_equal(D[0].status, 0);
    pgw_result_t *r = kept;
    assert_int_equal(pgw_result_nrows(r), 10000);
    assert_int_equal(pgw_result_ncols(r), 7);
    char expect[32];
    for (size_t i = 0; i < 10000; i++) {
        int g = (int)i + 1;
        int16_t s;
        int32_t i4;
        int64_t l;
        double f;
        bool b;
        pgw_str_t t;
        assert_int_equal(pgw_result_int2(r, i, 0, &s), 0);
        assert_int_equal(s, g % 100);
        assert_int_equal(pgw_result_int4(r, i, 1, &i4), 0);
        assert_int_equal(i4, g);
        assert_int_equal(pgw_result_int8(r, i, 2, &l), 0);
        assert_true(l == (int64_t)g * 1000000000);
        assert_int_equal(pgw_result_float8(r, i, 3, &f), 0);
        assert_true(f == g / 4.0);
        assert_int_equal(pgw_result_text(r, i, 4, &t), 0);
        snprintf(expect, sizeof expect, "row %d", g);
        assert_int_equal(t.len, strlen(expect));
        assert_memory_equal(t.p, expect, t.len);
        assert_int_equal(pgw_result_bool(r, i, 5, &b), 0);
        assert_int_equal(b, g % 2 == 0);
        assert_int_equal(pgw_result_isnull(r, i, 6), g % 7 == 0);
        if (g % 7 == 0) assert_int_equal(pgw_result_int4(r, i, 6, &i4), PGW_ENULL);
        /* The row view of a result spanning many read chunks: every value
         * as pgw_result_value gives it. */
        pgw_row_t row;
        assert_int_equal(pgw_result_row(r, i, &row), 0);
        assert_int_equal(row.ncols, 7);
        assert_true(row.index == i);
        assert_ptr_equal(row.fields, pgw_result_field(r, 0));
        for (size_t c = 0; c < 7; c++) {
            pgw_value_t v;
            assert_int_equal(pgw_result_value(r, i, c, &v), 0);
            assert_ptr_equal(row.values[c].p, v.p);
            assert_int_equal(row.values[c].len, v.len);
            assert_int_equal(row.values[c].format, v.format);
            assert_int_equal(row.values[c].oid, v.oid);
        }
    }
    drv_close(&d);
    /* Still readable after the session is gone. */
    int32_t last;
    assert_int_equal(pgw_result_int4(r, 9999, 1, &last), 0);
    assert_int_equal(last, 10000);
    pgw_row_t tail;
    assert_int_equal(pgw_result_row(r, 9999, &tail), 0);
    assert_int_equal(pgw_get_int4(&tail.values[1], &last), 0);
    assert_int_equal(last, 10000);
    assert_int_equal(pgw_result_row(r, 10000, &tail), PGW_EINDEX);
    pgw_result_free(r);
}

/* max_protocol 3.2 against PostgreSQL 15-17: the server offers 3.0 (its
 * NegotiateProtocolVersion carries 0x00030000) and the session downgrades;
 * with min_protocol 3.2 the failure says the server lacks 3.2. */
static void test_protocol_downgrade(void **state)
{
    (void)state;
    pgt_require_server();
    drv_t d;
    drv_opts_t o = {.max_protocol = PGW_PROTO_3_2};
    assert_int_equal(drv_open_opts(&d, &o), 0);
    uint32_t expect = pgt_server_version() >= 180000 ? PGW_PROTO_3_2 : PGW_PROTO_3_0;
    assert_int_equal(pgw_session_protocol(d.s), expect);
    const uint8_t *key;
    size_t key_len;
    assert_int_equal(pgw_session_backend_key(d.s, NULL, &key, &key_len), 0);
    if (expect == PGW_PROTO_3_0) assert_int_equal(key_len, 4);
    exec_ok(&d, "SELECT 1");
    drv_close(&d);

    if (expect == PGW_PROTO_3_2) return;
    o.min_protocol = PGW_PROTO_3_2;
    assert_int_equal(drv_open_opts(&d, &o), PGW_ENOTSUP);
    assert_non_null(strstr(d.startup_message, "server does not support protocol 3.2"));
    assert_int_equal(pgw_session_state(d.s), PGW_SESSION_BROKEN);
    drv_close(&d);
}

/* --------------------------------------------------- kept results */

enum { KEEP = MAXREQ + 2 };

/* The ud for a request whose result kept_wait returns. */
static void *keep_ud(void)
{
    memset(&D[KEEP], 0, sizeof D[KEEP]);
    kept = NULL;
    return UD(KEEP);
}

/* Run the requests queued to completion; the one queued with keep_cb and
 * keep_ud() must have finished with expect_status: its result. */
static pgw_result_t *kept_wait(drv_t *d, int expect_status)
{
    assert_int_equal(pump(d, nothing_pending, NULL), 0);
    assert_int_equal(D[KEEP].calls, 1);
    assert_int_equal(D[KEEP].status, expect_status);
    pgw_result_t *r = kept;
    kept = NULL;
    return r;
}

/* ---------------------------------------------------- date styles */

static const char STYLE_SQL[] =
    "SELECT '2024-03-05'::date, '2024-03-05 13:14:15.5'::timestamp, "
    "'2024-03-05 13:14:15.5+02'::timestamptz, '-1 year -2 mons +3 days -04:05:06.5'::interval, "
    "'1999-12-31 23:59:59'::timestamp";

static void both_values(const pgw_result_t *t, const pgw_result_t *b, size_t col, pgw_value_t *vt,
                        pgw_value_t *vb)
{
    assert_int_equal(pgw_result_value(t, 0, col, vt), 0);
    assert_int_equal(pgw_result_value(b, 0, col, vb), 0);
}

/* Text (simple query) and binary (extended query) decodings agree. */
static void check_styles_decode(drv_t *d)
{
    assert_int_equal(pgw_session_simple_query(d->s, STYLE_SQL, keep_cb, keep_ud()), 0);
    pgw_result_t *t = kept_wait(d, 0);
    assert_int_equal(pgw_session_query(d->s, STYLE_SQL, NULL, 0, 0, keep_cb, keep_ud()), 0);
    pgw_result_t *b = kept_wait(d, 0);
    assert_int_equal(pgw_result_fformat(t, 0), PGW_FORMAT_TEXT);
    assert_int_equal(pgw_result_fformat(b, 0), PGW_FORMAT_BINARY);
    pgw_value_t vt, vb;
    int32_t dt, db;
    both_values(t, b, 0, &vt, &vb);
    assert_int_equal(pgw_get_date(&vt, &dt), 0);
    assert_int_equal(pgw_get_date(&vb, &db), 0);
    assert_int_equal(dt, db);
    for (size_t col = 1; col <= 4; col += 3) {
        int64_t ut, ub;
        both_values(t, b, col, &vt, &vb);
        assert_int_equal(pgw_get_timestamp(&vt, &ut), 0);
        assert_int_equal(pgw_get_timestamp(&vb, &ub), 0);
        assert_true(ut == ub);
    }
    int64_t zt, zb;
    both_values(t, b, 2, &vt, &vb);
    assert_int_equal(pgw_get_timestamptz(&vt, &zt), 0);
    assert_int_equal(pgw_get_timestamptz(&vb, &zb), 0);
    assert_true(zt == zb);
    pgw_interval_t it, ib;
    both_values(t, b, 3, &vt, &vb);
    assert_int_equal(pgw_get_interval(&vt, &it), 0);
    assert_int_equal(pgw_get_interval(&vb, &ib), 0);
    assert_true(it.usec == ib.usec && it.days == ib.days && it.months == ib.months);
    pgw_result_free(t);
    pgw_result_free(b);
}

/* The server's reading of '01/02/2024': with DMY it is 1 February, with MDY
 * 2 January (days since 2000-01-01, decoded from binary). */
static int32_t day_of_slash_date(drv_t *d)
{
    assert_int_equal(
        pgw_session_query(d->s, "SELECT '01/02/2024'::date", NULL, 0, 0, keep_cb, keep_ud()), 0);
    pgw_result_t *r = kept_wait(d, 0);
    pgw_value_t v;
    int32_t day;
    assert_int_equal(pgw_result_value(r, 0, 0, &v), 0);
    assert_int_equal(pgw_get_date(&v, &day), 0);
    pgw_result_free(r);
    return day;
}

/* Databases whose defaults are other DateStyles and IntervalStyles: the
 * session sets ISO and postgres output right after startup, the text
 * decoders read every value, and a database's DMY input order is kept. */
static void test_date_styles(void **state)
{
    (void)state;
    pgt_require_server();
    static const char *const settings[] = {
        "DateStyle = 'SQL, DMY'",           "DateStyle = 'German'",
        "DateStyle = 'Postgres, MDY'",      "IntervalStyle = sql_standard",
        "IntervalStyle = postgres_verbose", "IntervalStyle = iso_8601",
    };
    drv_t admin;
    assert_int_equal(drv_open(&admin, 0, NULL, NULL, NULL), 0);
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        char db[64], sql[160];
        snprintf(db, sizeof db, "pgw_style_%ld_%zu", (long)getpid(), i);
        snprintf(sql, sizeof sql, "CREATE DATABASE %s", db);
        exec_ok(&admin, sql);
        snprintf(sql, sizeof sql, "ALTER DATABASE %s SET %s", db, settings[i]);
        exec_ok(&admin, sql);

        drv_t d;
        drv_opts_t o = {.database = db};
        assert_int_equal(drv_open_opts(&d, &o), 0);
        assert_int_equal(strncmp(pgw_session_parameter(d.s, "DateStyle"), "ISO,", 4), 0);
        assert_string_equal(pgw_session_parameter(d.s, "IntervalStyle"), "postgres");
        check_styles_decode(&d);
        if (strstr(settings[i], "DMY") || strstr(settings[i], "German"))
            assert_int_equal(day_of_slash_date(&d), 8797); /* 2024-02-01 */
        else
            assert_int_equal(day_of_slash_date(&d), 8767); /* 2024-01-02 */
        drv_close(&d);

        /* The application's own choice is left alone. */
        drv_opts_t own = {
            .database = db, .extra = {"options", "-c datestyle=SQL,DMY"}, .nextra = 1};
        assert_int_equal(drv_open_opts(&d, &own), 0);
        assert_string_equal(pgw_session_parameter(d.s, "DateStyle"), "SQL, DMY");
        drv_close(&d);

        snprintf(sql, sizeof sql, "DROP DATABASE %s WITH (FORCE)", db);
        exec_ok(&admin, sql);
    }
    drv_close(&admin);
}

/* The protocol's 65,535 parameters reach the server intact. */
static void test_max_params(void **state)
{
    (void)state;
    pgt_require_server();
    drv_t d;
    assert_int_equal(drv_open(&d, 0, NULL, NULL, NULL), 0);
    size_t n = 65535;
    pgw_param_t *p = calloc(n, sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = pgw_int4((int32_t)i);
    memset(&D[0], 0, sizeof D[0]);
    assert_int_equal(
        pgw_session_query(d.s, "SELECT $1::int8 + $32768 + $65535", p, n, 0, rec_cb, UD(0)), 0);
    assert_int_equal(pump(&d, nothing_pending, NULL), 0);
    assert_int_equal(D[0].status, 0);
    assert_int_equal(D[0].value, 0 + 32767 + 65534);
    assert_int_equal(pgw_session_query(d.s, "SELECT 1", p, 65536, 0, rec_cb, UD(0)), PGW_EINVAL);
    free(p);
    drv_close(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_logins),
        cmocka_unit_test(test_pipeline_10k),
        cmocka_unit_test(test_libpq_pipeline_equivalents),
        cmocka_unit_test(test_prepared),
        cmocka_unit_test(test_big_result),
        cmocka_unit_test(test_protocol_downgrade),
        cmocka_unit_test(test_date_styles),
        cmocka_unit_test(test_max_params),
        cmocka_unit_test(test_stale_descriptions),
        cmocka_unit_test(test_no_binary_output),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
