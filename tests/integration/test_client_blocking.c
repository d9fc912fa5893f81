/*
 * The blocking client against the throwaway cluster.
 */
#define _POSIX_C_SOURCE 200809L
#include "failalloc.h"
#include "pgtest.h"
#include "pgtime.h"
#include "pgwire/client.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static pgw_client_t *connect_default(void)
{
    char ci[512];
    pgw_client_t *c = NULL;
    pgt_require_server();
    char err[256];
    int rc = pgw_client_connect_err(&c, pgt_conninfo(ci, sizeof(ci), NULL), NULL, err, sizeof(err));
    if (rc != 0) fail_msg("connect: %s: %s", pgw_err_name(rc), err);
    return c;
}

static void test_connect_failures(void **state)
{
    char ci[512], err[256];
    pgw_client_t *c = (pgw_client_t *)1;
    pgt_require_server();
    pgt_conninfo_tcp(ci, sizeof(ci), pgt_env_required("PGW_TEST_SCRAM_USER"), "not-it", NULL);
    int rc = pgw_client_connect_err(&c, ci, NULL, err, sizeof(err));
    assert_true(rc == PGW_ESERVER || rc == PGW_EAUTH);
    assert_null(c);
    assert_true(strlen(err) > 0);
    /* verify-full needs a root certificate: none given, and none under
     * $HOME/.postgresql/ (HOME points to an empty directory), fails with
     * libpq's message naming the file; over a Unix socket libpq ignores
     * sslmode, and so does libpgwire (/x has no server). */
    char home[] = "/tmp/pgw-home-XXXXXX", *old_home = getenv("HOME");
    assert_non_null(mkdtemp(home));
    old_home = old_home ? strdup(old_home) : NULL;
    setenv("HOME", home, 1);
    pgt_conninfo_tcp(ci, sizeof(ci), pgt_env_required("PGUSER"), NULL, "sslmode=verify-full");
    assert_int_equal(pgw_client_connect_err(&c, ci, NULL, err, sizeof(err)), PGW_ETLS);
    assert_null(c);
    assert_non_null(strstr(err, "/.postgresql/root.crt\" does not exist"));
    if (old_home) {
        setenv("HOME", old_home, 1);
        free(old_home);
    } else {
        unsetenv("HOME");
    }
    rmdir(home);
    /* no socket file: connect()'s ENOENT, passed through */
    assert_int_equal(pgw_client_connect(&c, "host=/x sslmode=verify-full", NULL), -ENOENT);
    /* with the CA, the server's certificate (SAN 127.0.0.1) verifies */
    pgt_conninfo_tcp(ci, sizeof(ci), pgt_env_required("PGUSER"), NULL, "sslmode=verify-full");
    assert_int_equal(pgt_conninfo_append(ci, sizeof(ci), "sslrootcert",
                                         pgt_env_required("PGW_TEST_SSL_ROOTCERT")),
                     0);
    rc = pgw_client_connect_err(&c, ci, NULL, err, sizeof(err));
    if (rc != 0) fail_msg("verify-full: %s: %s", pgw_err_name(rc), err);
    pgw_tls_info_t info;
    assert_int_equal(pgw_client_tls_info(c, &info), 0);
    assert_int_equal(info.in_use, 1);
    assert_non_null(info.peer_subject);
    pgw_client_close(c);
    assert_int_equal(pgw_client_tls_info(NULL, &info), PGW_EINVAL);
    assert_int_equal(info.in_use, 0);
    assert_int_equal(pgw_client_connect(&c, "port=notaport", NULL), PGW_ECONNINFO);
    pgw_client_close(NULL);
}

static void test_exec_chain(void **state)
{
    pgw_client_t *c = connect_default();
    pgw_result_t *res;
    assert_int_equal(pgw_client_exec(c, "SELECT 1 AS a; SELECT 'two' AS b, 3 AS c", &res), 0);
    assert_int_equal(pgw_result_nrows(res), 1);
    pgw_str_t s;
    assert_int_equal(pgw_result_text(res, 0, 0, &s), 0);
    assert_int_equal(s.len, 1);
    assert_memory_equal(s.p, "1", 1);
    pgw_result_t *next = pgw_result_next(res);
    assert_non_null(next);
    assert_int_equal(pgw_result_ncols(next), 2);
    assert_int_equal(pgw_result_text(next, 0, 0, &s), 0);
    assert_memory_equal(s.p, "two", 3);
    pgw_result_free(res);

    assert_int_equal(pgw_client_exec(c, "SELECT 1; SELECT nope; SELECT 3", &res), PGW_ESERVER);
    assert_non_null(res);
    const pgw_result_t *r = res;
    while (r && !pgw_result_error(r))
        r = pgw_result_next(r);
    assert_non_null(r);
    assert_string_equal(pgw_result_error(r)->sqlstate, "42703");
    pgw_result_free(res);
    /* NULL res: the result is freed for the caller */
    assert_int_equal(pgw_client_exec(c, "SET application_name = 'x'", NULL), 0);
    pgw_client_close(c);
}

static void test_query_typed(void **state)
{
    pgw_client_t *c = connect_default();
    pgw_param_t p[] = {pgw_int4(42), pgw_text("answer")};
    pgw_result_t *res;
    assert_int_equal(pgw_client_query(c, "SELECT $1::int4 AS id, $2::text AS name", p, 2, &res), 0);
    int32_t id;
    pgw_str_t name;
    assert_int_equal(pgw_result_int4(res, 0, 0, &id), 0);
    assert_int_equal(pgw_result_text(res, 0, 1, &name), 0);
    assert_int_equal(id, 42);
    assert_int_equal(name.len, 6);
    assert_memory_equal(name.p, "answer", 6);
    pgw_result_free(res);

    assert_int_equal(
        pgw_client_query(c, "SELECT 1/$1::int4", (pgw_param_t[]){pgw_int4(0)}, 1, &res),
        PGW_ESERVER);
    assert_string_equal(pgw_result_error(res)->sqlstate, "22012");
    pgw_result_free(res);
    pgw_client_close(c);
}

static void test_prepare_execute(void **state)
{
    pgw_client_t *c = connect_default();
    pgw_result_t *res;
    assert_int_equal(pgw_client_prepare(c, "mul", "SELECT $1::int8 * $2::int8", NULL, 2, &res), 0);
    assert_int_equal(pgw_result_nparams(res), 2);
    assert_int_equal(pgw_result_param_type(res, 0), 20);
    pgw_result_free(res);
    for (int i = 0; i < 10; i++) {
        pgw_param_t p[] = {pgw_int8(i), pgw_int8(1000)};
        assert_int_equal(pgw_client_execute(c, "mul", p, 2, &res), 0);
        int64_t v;
        assert_int_equal(pgw_result_int8(res, 0, 0, &v), 0);
        assert_int_equal(v, i * 1000);
        pgw_result_free(res);
    }
    pgw_client_close(c);
}

static void test_batch(void **state)
{
    pgw_client_t *c = connect_default();
    pgw_param_t p1[] = {pgw_int4(7)};
    pgw_request_t items[] = {
        PGW_QUERY("CREATE TEMP TABLE cb(v int4)", NULL, 0, NULL, NULL),
        PGW_QUERY("INSERT INTO cb VALUES ($1)", p1, 1, NULL, NULL),
        PGW_QUERY("SELECT sum(v)::int4 FROM cb", NULL, 0, NULL, NULL),
    };
    pgw_result_t *res[4];
    int st[4];
    assert_int_equal(pgw_client_run_batch(c, items, 3, 0, res, st), 0);
    int32_t v;
    assert_int_equal(pgw_result_int4(res[2], 0, 0, &v), 0);
    assert_int_equal(v, 7);
    for (int i = 0; i < 3; i++)
        pgw_result_free(res[i]);

    pgw_request_t bad[] = {
        PGW_QUERY("INSERT INTO cb VALUES (1)", NULL, 0, NULL, NULL),
        PGW_QUERY("SELECT 1/0", NULL, 0, NULL, NULL),
        PGW_QUERY("INSERT INTO cb VALUES (2)", NULL, 0, NULL, NULL),
        PGW_QUERY("SELECT count(*)::int4 FROM cb", NULL, 0, NULL, NULL),
    };
    /* One Sync: the failure aborts the rest and rolls back the first. */
    assert_int_equal(pgw_client_run_batch(c, bad, 4, 0, res, st), PGW_ESERVER);
    assert_int_equal(st[0], 0);
    assert_int_equal(st[1], PGW_ESERVER);
    assert_int_equal(st[2], PGW_EABORTED);
    assert_int_equal(st[3], PGW_EABORTED);
    assert_null(res[2]);
    assert_null(res[3]);
    pgw_result_free(res[0]);
    pgw_result_free(res[1]);
    /* A Sync after each: the others run. */
    assert_int_equal(pgw_client_run_batch(c, bad, 4, PGW_BATCH_SYNC_EACH, res, st), PGW_ESERVER);
    assert_int_equal(st[0], 0);
    assert_int_equal(st[1], PGW_ESERVER);
    assert_int_equal(st[2], 0);
    assert_int_equal(st[3], 0);
    assert_int_equal(pgw_result_int4(res[3], 0, 0, &v), 0);
    assert_int_equal(v, 3); /* 7, 1, 2 */
    for (int i = 0; i < 4; i++)
        pgw_result_free(res[i]);

    /* Executions of a prepared statement in a batch, each with its own
     * parameter and answer. */
    pgw_result_t *prep;
    assert_int_equal(pgw_client_prepare(c, "cb_add", "SELECT $1::int4 + 100", NULL, 0, &prep), 0);
    pgw_result_free(prep);
    pgw_param_t ps[3] = {pgw_int4(1), pgw_int4(2), pgw_int4(3)};
    pgw_request_t execs[3];
    for (int i = 0; i < 3; i++)
        execs[i] = PGW_EXECUTE("cb_add", &ps[i], 1, NULL, NULL);
    assert_int_equal(pgw_client_run_batch(c, execs, 3, PGW_BATCH_SYNC_EACH, res, st), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(st[i], 0);
        assert_int_equal(pgw_result_int4(res[i], 0, 0, &v), 0);
        assert_int_equal(v, 101 + i);
        pgw_result_free(res[i]);
    }
    pgw_client_close(c);
}

typedef struct sum {
    int64_t total;
    uint64_t rows;
} sum_t;

static int on_row(const pgw_row_t *row, void *ud)
{
    sum_t *s = ud;
    int32_t v;
    if (pgw_get_int4(&row->values[0], &v) < 0) return -1;
    s->total += v;
    s->rows++;
    return 0;
}

static void test_query_rows(void **state)
{
    pgw_client_t *c = connect_default();
    sum_t s = {0, 0};
    pgw_result_t *res;
    pgw_request_t q =
        PGW_QUERY("SELECT g::int4 FROM generate_series(1, 1000) g", NULL, 0, NULL, &s);
    q.on_row = on_row;
    assert_int_equal(pgw_client_run(c, &q, &res), 0);
    assert_int_equal(s.rows, 1000);
    assert_int_equal(s.total, 500500);
    assert_int_equal(pgw_result_nrows(res), 0);
    assert_int_equal(pgw_result_rows_affected(res), 1000);
    pgw_result_free(res);
    pgw_client_close(c);
}

static void *cancel_later(void *arg)
{
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    *(int *)((void **)arg)[1] = pgw_client_cancel(((void **)arg)[0]);
    return NULL;
}

static void test_cancel_from_thread(void **state)
{
    pgw_client_t *c = connect_default();
    int cancel_rc = 1;
    void *arg[2] = {c, &cancel_rc};
    pthread_t th;
    uint64_t t0 = pgt_now_ns();
    assert_int_equal(pthread_create(&th, NULL, cancel_later, arg), 0);
    pgw_result_t *res;
    assert_int_equal(pgw_client_exec(c, "SELECT pg_sleep(30)", &res), PGW_ESERVER);
    pgt_assert_in_time("pg_sleep(30) cancelled from a thread after 50 ms", pgt_ms_since(t0), 50,
                       30000);
    assert_string_equal(pgw_result_error(res)->sqlstate, "57014");
    pgw_result_free(res);
    pthread_join(th, NULL);
    assert_int_equal(cancel_rc, 0);
    assert_int_equal(pgw_client_exec(c, "SELECT 1", NULL), 0);
    pgw_client_close(c);
}

static void test_connection_lost(void **state)
{
    pgw_client_t *c = connect_default();
    assert_non_null(pgw_client_conn(c));
    assert_non_null(pgw_client_session(c));
    pgw_result_t *res = (pgw_result_t *)1;
    int rc = pgw_client_exec(c, "SELECT pg_terminate_backend(pg_backend_pid())", &res);
    assert_true(rc == PGW_ESERVER || rc == PGW_ECONNLOST);
    pgw_result_free(rc == PGW_ESERVER ? res : NULL);
    if (rc == PGW_ESERVER) {
        /* the FATAL came with the answer; the EOF follows */
        rc = pgw_client_exec(c, "SELECT 1", &res);
        assert_true(rc == PGW_ECONNLOST || rc == PGW_ECLOSED);
    } else {
        assert_null(res);
    }
    assert_int_equal(pgw_client_exec(c, "SELECT 1", &res), PGW_ECLOSED);
    assert_null(res);
    pgw_client_close(c);
}

/* rc is the refusal want, and the call cleared *res (reset for the next
 * call to a value it must clear again). */
static void expect_refused(int rc, int want, pgw_result_t **res)
{
    assert_int_equal(rc, want);
    assert_null(*res);
    *res = (pgw_result_t *)1;
}

static void on_batch_end(int status, pgw_result_t *res, void *ud)
{
    *(int *)ud = status == 0 ? 1 : status;
    pgw_result_free(res);
}

static int count_row(const pgw_row_t *row, void *ud)
{
    ++*(int *)ud;
    return 0;
}

typedef struct pending {
    int values[2];
    int ended;
} pending_t;

static void on_pending_req(int status, pgw_result_t *res, void *ud)
{
    int *v = ud;
    if (status == 0) assert_int_equal(pgw_result_int4(res, 0, 0, v), 0);
    pgw_result_free(res);
}

/* Submit a two-request batch on the client's connection, asynchronously:
 * it is still pending (not even written) when the caller's next blocking
 * call starts. */
static void submit_pending_batch(pgw_client_t *c, pending_t *pb)
{
    memset(pb, 0, sizeof *pb);
    pgw_param_t a[] = {pgw_int4(11)}, b[] = {pgw_int4(12)};
    pgw_request_t reqs[] = {
        PGW_QUERY("SELECT $1::int4", a, 1, on_pending_req, &pb->values[0]),
        PGW_QUERY("SELECT $1::int4", b, 1, on_pending_req, &pb->values[1]),
    };
    assert_int_equal(
        pgw_conn_submit_batch(pgw_client_conn(c), reqs, 2, 0, on_batch_end, &pb->ended), 0);
}

/* The batch completed, in order, before the blocking call that followed it. */
static void expect_batch_done(const pending_t *pb)
{
    assert_int_equal(pb->ended, 1);
    assert_int_equal(pb->values[0], 11);
    assert_int_equal(pb->values[1], 12);
}

/* Replaces "requests refused in an open batch" (PGW_EBUSY): there is no open
 * batch state any more. A batch submitted asynchronously on the client's
 * connection is still pending when each blocking call runs: the call must
 * complete (not hang: SIGALRM, at its default disposition, ends the process
 * if one blocks) and the batch's done callback has fired with its results. */
static void test_blocking_calls_after_pending_async_batch(void **state)
{
    pgw_client_t *c = connect_default();
    pgw_result_t *res = NULL;
    pgw_result_t *results[1] = {NULL};
    int statuses[1] = {1};
    pgw_param_t p[] = {pgw_int4(5)};
    pending_t pb;
    int rows = 0;
    int32_t v = 0;
    alarm(20);

    submit_pending_batch(c, &pb);
    assert_int_equal(pgw_client_query(c, "SELECT $1::int4", p, 1, &res), 0);
    expect_batch_done(&pb);
    assert_int_equal(pgw_result_int4(res, 0, 0, &v), 0);
    assert_int_equal(v, 5);
    pgw_result_free(res);

    submit_pending_batch(c, &pb);
    pgw_request_t text = PGW_QUERY("SELECT 1", NULL, 0, NULL, NULL);
    text.flags = PGW_Q_TEXT;
    assert_int_equal(pgw_client_run(c, &text, &res), 0);
    expect_batch_done(&pb);
    assert_int_equal(pgw_result_fformat(res, 0), PGW_FORMAT_TEXT);
    pgw_result_free(res);

    submit_pending_batch(c, &pb);
    pgw_request_t streamed = PGW_QUERY("SELECT 1", NULL, 0, NULL, &rows);
    streamed.on_row = count_row;
    assert_int_equal(pgw_client_run(c, &streamed, &res), 0);
    expect_batch_done(&pb);
    assert_int_equal(rows, 1);
    pgw_result_free(res);

    submit_pending_batch(c, &pb);
    assert_int_equal(pgw_client_exec(c, "SELECT 1", &res), 0);
    expect_batch_done(&pb);
    pgw_result_free(res);

    submit_pending_batch(c, &pb);
    assert_int_equal(pgw_client_prepare(c, "inb", "SELECT 1", NULL, 0, &res), 0);
    expect_batch_done(&pb);
    pgw_result_free(res);

    submit_pending_batch(c, &pb);
    assert_int_equal(pgw_client_execute(c, "inb", NULL, 0, &res), 0);
    expect_batch_done(&pb);
    pgw_result_free(res);

    submit_pending_batch(c, &pb);
    pgw_request_t item = PGW_QUERY("SELECT $1::int4", p, 1, NULL, NULL);
    assert_int_equal(pgw_client_run_batch(c, &item, 1, 0, results, statuses), 0);
    expect_batch_done(&pb);
    assert_int_equal(statuses[0], 0);
    assert_int_equal(pgw_result_int4(results[0], 0, 0, &v), 0);
    assert_int_equal(v, 5);
    pgw_result_free(results[0]);
    alarm(0);
    pgw_client_close(c);
}

/* Replaces the batch-state refusals: a batch array holding a request that
 * cannot be part of one (SIMPLE, SYNC), or no request at all, is refused
 * with PGW_EINVAL before anything is sent, and the client stays usable. */
static void test_run_batch_refusals(void **state)
{
    pgw_client_t *c = connect_default();
    pgw_result_t *results[2] = {(pgw_result_t *)1, (pgw_result_t *)1};
    int statuses[2] = {1, 1};
    pgw_request_t reqs[] = {
        PGW_QUERY("SELECT 1", NULL, 0, NULL, NULL),
        PGW_SIMPLE("SELECT 2", NULL, NULL),
    };
    assert_int_equal(pgw_client_run_batch(c, reqs, 2, 0, results, statuses), PGW_EINVAL);
    assert_null(results[0]);
    assert_null(results[1]);
    assert_int_equal(statuses[0], PGW_EINVAL);
    assert_int_equal(statuses[1], PGW_EINVAL);
    assert_non_null(strstr(pgw_client_refusal(c), "request 1"));
    reqs[1] = PGW_SYNC(NULL, NULL);
    assert_int_equal(pgw_client_run_batch(c, reqs, 2, 0, results, statuses), PGW_EINVAL);
    assert_null(results[0]);
    assert_int_equal(pgw_client_run_batch(c, reqs, 0, 0, results, statuses), PGW_EINVAL);
    assert_int_equal(pgw_client_run_batch(c, NULL, 1, 0, results, statuses), PGW_EINVAL);
    /* Nothing was sent: the connection's next request is answered first. */
    pgw_param_t p[] = {pgw_int4(9)};
    pgw_result_t *res;
    assert_int_equal(pgw_client_query(c, "SELECT $1::int4", p, 1, &res), 0);
    int32_t v = 0;
    assert_int_equal(pgw_result_int4(res, 0, 0, &v), 0);
    assert_int_equal(v, 9);
    pgw_result_free(res);
    pgw_client_close(c);
}

/* int4 parameters 1..n. */
static pgw_param_t *int4_params(size_t n)
{
    pgw_param_t *p = malloc(n * sizeof(*p));
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = pgw_int4((int32_t)i + 1);
    return p;
}

/* Parameter counts pass through unchanged: 65535 (the protocol's limit)
 * all reach the server; 70000 is refused with PGW_EINVAL before anything
 * is sent (it used to be narrowed to 16 bits: 4464), and the client stays
 * usable. (Depends on the session refusing counts above 65535.) */
static void test_param_count_limit(void **state)
{
    pgw_client_t *c = connect_default();
    pgw_param_t *p = int4_params(70000);
    pgw_result_t *res = (pgw_result_t *)1;
    expect_refused(pgw_client_query(c, "SELECT $70000::int4", p, 70000, &res), PGW_EINVAL, &res);
    expect_refused(pgw_client_execute(c, "nostmt", p, 70000, &res), PGW_EINVAL, &res);
    pgw_request_t item = PGW_QUERY("SELECT $70000::int4", p, 70000, NULL, NULL);
    pgw_result_t *results[1];
    int statuses[1] = {0};
    assert_int_equal(pgw_client_run_batch(c, &item, 1, 0, results, statuses), PGW_EINVAL);
    assert_int_equal(statuses[0], PGW_EINVAL);
    assert_null(results[0]);
    assert_int_equal(pgw_client_query(c, "SELECT $65535::int4 + $1", p, 65535, &res), 0);
    int32_t v = 0;
    assert_int_equal(pgw_result_int4(res, 0, 0, &v), 0);
    assert_int_equal(v, 65536);
    pgw_result_free(res);
    free(p);
    pgw_client_close(c);
}

/* After one request with a 50 MB parameter, the connection does not keep
 * a 50 MB write buffer for the rest of its life: what it holds returns to
 * a small bound. */
static void test_large_parameter_memory_returns(void **state)
{
    char ci[512];
    pgt_require_server();
    /* Counts the bytes handed out and not taken back. */
    pgt_alloc_t k;
    const pgw_allocator_t *a = pgt_alloc_init(&k);
    pgw_conn_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.alloc = a;
    pgw_client_t *c;
    assert_int_equal(pgw_client_connect(&c, pgt_conninfo(ci, sizeof(ci), NULL), &cfg), 0);
    assert_int_equal(pgw_client_exec(c, "SELECT 1", NULL), 0);
    size_t base = k.bytes;
    const size_t big = 50u * 1024u * 1024u;
    char *v = malloc(big);
    assert_non_null(v);
    memset(v, 'z', big);
    pgw_param_t p[] = {pgw_bytea(v, (int32_t)big)};
    pgw_result_t *res;
    assert_int_equal(pgw_client_query(c, "SELECT length($1)::int4", p, 1, &res), 0);
    int32_t n = 0;
    assert_int_equal(pgw_result_int4(res, 0, 0, &n), 0);
    assert_int_equal(n, (int32_t)big);
    pgw_result_free(res);
    free(v);
    assert_true(k.peak >= base + big); /* the request was encoded in full */
    /* and afterwards, the connection holds about what it held before (the
     * 1 MiB the write buffer may keep, plus slack for small buffers) */
    assert_int_equal(pgw_client_exec(c, "SELECT 2", NULL), 0);
    if (k.bytes > base + 2u * 1024u * 1024u)
        fail_msg("%zu bytes held after the request, %zu before", k.bytes, base);
    pgw_client_close(c);
    assert_int_equal(k.bytes, 0);
}

/* The NULL-handle convention: no function of client.h crashes on NULL. */
static void test_null_handles(void **state)
{
    pgw_result_t *res = (pgw_result_t *)1;
    pgw_result_t *results[1] = {(pgw_result_t *)1};
    pgw_request_t item = PGW_QUERY("SELECT 1", NULL, 0, NULL, NULL);
    pgw_request_t text = item, streamed = item;
    int rows = 0;
    text.flags = PGW_Q_TEXT;
    streamed.on_row = count_row;
    streamed.ud = &rows;
    char err[64];
    assert_int_equal(pgw_client_connect(NULL, "host=/nonexistent", NULL), PGW_EINVAL);
    assert_int_equal(pgw_client_connect_err(NULL, "host=/nonexistent", NULL, err, sizeof(err)),
                     PGW_EINVAL);
    expect_refused(pgw_client_exec(NULL, "SELECT 1", &res), PGW_EINVAL, &res);
    expect_refused(pgw_client_query(NULL, "SELECT 1", NULL, 0, &res), PGW_EINVAL, &res);
    expect_refused(pgw_client_run(NULL, &text, &res), PGW_EINVAL, &res);
    expect_refused(pgw_client_run(NULL, &streamed, &res), PGW_EINVAL, &res);
    expect_refused(pgw_client_prepare(NULL, "x", "SELECT 1", NULL, 0, &res), PGW_EINVAL, &res);
    expect_refused(pgw_client_execute(NULL, "x", NULL, 0, &res), PGW_EINVAL, &res);
    assert_int_equal(pgw_client_run_batch(NULL, &item, 1, 0, results, NULL), PGW_EINVAL);
    assert_string_equal(pgw_client_refusal(NULL), "");
    assert_int_equal(pgw_client_cancel(NULL), PGW_EINVAL);
    assert_null(pgw_client_conn(NULL));
    assert_null(pgw_client_session(NULL));
    pgw_client_close(NULL);
    assert_int_equal(rows, 0);
}

/* A statement dropped behind the client's back (DISCARD ALL) is
 * PGW_ESTMTINVALID, and the result carries the server's error. */
static void test_statement_invalid_keeps_error(void **state)
{
    (void)state;
    pgw_client_t *c = connect_default();
    pgw_result_t *res;
    assert_int_equal(pgw_client_prepare(c, "gone", "SELECT 1::int4", NULL, 0, NULL), 0);
    assert_int_equal(pgw_client_exec(c, "DISCARD ALL", NULL), 0);
    assert_int_equal(pgw_client_execute(c, "gone", NULL, 0, &res), PGW_ESTMTINVALID);
    assert_non_null(res);
    assert_non_null(pgw_result_error(res));
    assert_string_equal(pgw_result_error(res)->sqlstate, "26000");
    pgw_result_free(res);
    /* Prepared again, it runs. */
    assert_int_equal(pgw_client_prepare(c, "gone", "SELECT 1::int4", NULL, 0, NULL), 0);
    assert_int_equal(pgw_client_execute(c, "gone", NULL, 0, &res), 0);
    pgw_result_free(res);
    pgw_client_close(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_failures),
        cmocka_unit_test(test_exec_chain),
        cmocka_unit_test(test_query_typed),
        cmocka_unit_test(test_prepare_execute),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_query_rows),
        cmocka_unit_test(test_cancel_from_thread),
        cmocka_unit_test(test_connection_lost),
        cmocka_unit_test(test_blocking_calls_after_pending_async_batch),
        cmocka_unit_test(test_run_batch_refusals),
        cmocka_unit_test(test_null_handles),
        cmocka_unit_test(test_param_count_limit),
        cmocka_unit_test(test_large_parameter_memory_returns),
        cmocka_unit_test(test_statement_invalid_keeps_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
