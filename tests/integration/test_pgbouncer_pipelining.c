/*
 * no_pipelining (conn.h, session.h) through PgBouncer 1.18 in transaction
 * mode: a private cluster and a private PgBouncer in front of it
 * (default_pool_size 2), since the test takes every server connection and
 * would starve, and be disturbed by, other tests of a shared PgBouncer.
 *
 * PgBouncer releases its server connection at a ReadyForQuery once it
 * expects no more of them, and it stops counting them at the end of a COPY
 * ("impossible to track sync count over copy"). A client that pipelined a
 * sync group behind a COPY has it on that server already: the server
 * answers it after the release, and the answer reaches whichever client
 * PgBouncer gave the server to next (pgbouncer issue 759 is the same race).
 * The test makes that happen for sure:
 *
 *   - one client holds a transaction open: one of the two server
 *     connections is taken;
 *   - client A submits a COPY TO STDOUT whose first row "a1" arrives at
 *     once and whose second waits on an advisory lock the test holds, and
 *     then the query "a2", which waits on a second lock: two sync groups;
 *   - client B submits "b1" once A's COPY waits, and waits in PgBouncer's
 *     queue for the last server connection (SHOW POOLS: cl_waiting);
 *   - once A has seen the COPY begin (CopyOutResponse) and written its
 *     output, the first lock is released: the COPY completes; then the
 *     second lock.
 *
 * With no_pipelining, A writes "a2" only after the COPY has completed, so
 * every client gets its own answers: A "a1" then "a2", B "b1". With
 * pipelining, "a2" is on the server at the release and its answer goes
 * astray: A waits for it forever (the test fails at its failsafe), or B
 * receives it.
 */
#define _DEFAULT_SOURCE
#include "pgpair.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include <cmocka.h>

#define APP   "pgw_test_pgbouncer_pipelining"
#define LOCK  "759"
#define LOCK2 "760"
#define POOL  "2"
#define HOLDS 1 /* the pool size less one */
/* A COPY whose first row (over 8 KiB: the server sends it, with its
 * CopyOutResponse, at once) comes before the row that waits on the lock. */
#define COPY_A1                                                 \
    "COPY (SELECT 'a1' AS k, repeat('x', 20000) AS v UNION ALL" \
    " SELECT 'end', '' FROM (SELECT pg_advisory_xact_lock(" LOCK ")) l) TO STDOUT"
/* A query that runs until the test lets it: whatever the server receives
 * after it, it answers after it. */
#define QUERY_A2 "SELECT 'a2'::text FROM (SELECT pg_advisory_xact_lock(" LOCK2 ")) l"

typedef struct answer {
    int started; /* a COPY's CopyOutResponse arrived */
    int done;
    int status;
    char text[16];
} answer_t;

static void on_answer(int status, pgw_result_t *res, void *ud)
{
    answer_t *a = ud;
    a->done = 1;
    a->status = status;
    pgw_str_t s;
    if (status == 0 && res && pgw_result_nrows(res) == 1 && pgw_result_text(res, 0, 0, &s) == 0)
        snprintf(a->text, sizeof a->text, "%.*s", (int)s.len, s.p);
    pgw_result_free(res);
}

static int on_copy_start(const pgw_copy_info_t *info, void *ud)
{
    (void)info;
    ((answer_t *)ud)->started = 1;
    return 0;
}

/* The COPY's first row ("a1\txxx...\n"): its first field into the answer. */
static int on_copy_data(const uint8_t *data, size_t len, void *ud)
{
    answer_t *a = ud;
    if (a->text[0]) return 0; /* the first row's only */
    size_t n = 0;
    while (n < len && data[n] != '\t' && data[n] != '\n')
        n++;
    snprintf(a->text, sizeof a->text, "%.*s", (int)n, (const char *)data);
    return 0;
}

static void on_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)conn;
    int *up = ud;
    if (status != 0)
        fail_msg("connect through PgBouncer: %s (%s)", pgw_err_name(status),
                 err && err->message ? err->message : "");
    *up = 1;
}

static pgw_client_t *connect_client(const char *ci)
{
    pgw_client_t *c = NULL;
    int rc = pgw_client_connect(&c, ci, NULL);
    if (rc != 0) fail_msg("connect: %s", pgw_strerror(rc));
    return c;
}

static void exec_ok(pgw_client_t *c, const char *sql)
{
    pgw_result_t *res = NULL;
    int rc = pgw_client_exec(c, sql, &res);
    if (rc != 0)
        fail_msg("%s: %s", sql,
                 pgw_result_error(res) ? pgw_result_error(res)->message : pgw_strerror(rc));
    pgw_result_free(res);
}

/* The first row's column col of sql's answer, as an integer. */
static long exec_long(pgw_client_t *c, const char *sql, const char *col)
{
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_exec(c, sql, &res), 0);
    int k = pgw_result_column(res, col);
    assert_true(k >= 0);
    long v = 0;
    pgw_str_t s;
    for (size_t i = 0; i < pgw_result_nrows(res); i++) {
        assert_int_equal(pgw_result_text(res, i, (size_t)k, &s), 0);
        v += strtol(s.p, NULL, 10);
    }
    pgw_result_free(res);
    return v;
}

/* Run loop until *flag or until a 60 s failsafe (the test's own wait
 * conditions are states, not durations). */
static void run_until(uv_loop_t *loop, const int *flag, const char *what)
{
    uint64_t give_up = uv_hrtime() + 60ull * 1000000000ull;
    while (!*flag) {
        uv_run(loop, UV_RUN_NOWAIT);
        if (uv_hrtime() > give_up) fail_msg("%s never happened", what);
        if (!*flag) uv_sleep(1);
    }
}

/* Poll (running loop between polls) until check(c) holds. */
static void run_until_state(uv_loop_t *loop, void *c, int (*check)(void *), const char *what)
{
    uint64_t give_up = uv_hrtime() + 60ull * 1000000000ull;
    while (!check(c)) {
        uv_run(loop, UV_RUN_NOWAIT);
        if (uv_hrtime() > give_up) fail_msg("%s never happened", what);
        uv_sleep(5);
    }
}

static int output_written(void *session)
{
    size_t len = 0;
    pgw_session_pending_output(session, &len);
    return len == 0;
}

static int a1_waits_on_lock(void *direct)
{
    return exec_long(direct,
                     "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                     " AND query LIKE '%pg_advisory_xact_lock(" LOCK ")%'",
                     "n") == 1;
}

static int b_waits_in_bouncer(void *admin)
{
    return exec_long(admin, "SHOW POOLS", "cl_waiting") >= 1;
}

static void on_closed(pgw_conn_t *conn, void *ud)
{
    (void)conn;
    (*(int *)ud)++;
}

static char cluster_dir[64], bouncer_dir[96], direct_ci[1024];

static int setup(void **state)
{
    (void)state;
    pgt_cluster_start(cluster_dir, "bpipe", direct_ci, sizeof direct_ci);
    char env[96];
    snprintf(bouncer_dir, sizeof bouncer_dir, "%s-bouncer", cluster_dir);
    snprintf(env, sizeof env, "%s/env", cluster_dir);
    setenv("PGW_PGBOUNCER_POOL_SIZE", POOL, 1);
    pgt_script_run("pgbouncer.sh", "start", bouncer_dir, env);
    unsetenv("PGW_PGBOUNCER_POOL_SIZE");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgt_script_exit("pgbouncer.sh", "stop", bouncer_dir, NULL);
    if (cluster_dir[0]) pgt_cluster_stop(cluster_dir);
    return 0;
}

static void test_no_pipelining_keeps_answers_apart(void **state)
{
    (void)state;
    char ci[1024], admin_ci[1024];
    pgt_pgbouncer_conninfo(ci, sizeof ci, bouncer_dir, NULL, APP);
    pgt_pgbouncer_conninfo(admin_ci, sizeof admin_ci, bouncer_dir, "pgbouncer", APP);
    pgw_client_t *direct = connect_client(direct_ci);
    pgw_client_t *admin = connect_client(admin_ci);
    pgw_client_t *holds[HOLDS];
    for (int i = 0; i < HOLDS; i++) {
        holds[i] = connect_client(ci);
        exec_ok(holds[i], "BEGIN; SELECT txid_current()"); /* keeps its server */
    }
    exec_ok(direct, "SELECT pg_advisory_lock(" LOCK "), pg_advisory_lock(" LOCK2 ")");

    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.stmt_cache_mode = PGW_STMT_UNNAMED;
    cfg.no_pipelining = 1;
    pgw_conn_t *a = NULL, *b = NULL;
    int a_up = 0, b_up = 0;
    assert_int_equal(pgw_conn_new(&a, &loop, &cfg), 0);
    assert_int_equal(pgw_conn_new(&b, &loop, &cfg), 0);
    assert_int_equal(pgw_conn_connect(a, ci, on_connected, &a_up), 0);
    assert_int_equal(pgw_conn_connect(b, ci, on_connected, &b_up), 0);
    run_until(&loop, &a_up, "A's connect");
    run_until(&loop, &b_up, "B's connect");

    answer_t a1 = {0}, a2 = {0}, b1 = {0};
    pgw_request_t r1 = PGW_COPY_OUT_REQ(COPY_A1, on_copy_data, on_answer, &a1);
    pgw_request_t r2 = PGW_QUERY(QUERY_A2, NULL, 0, on_answer, &a2);
    r1.on_copy_start = on_copy_start;
    assert_int_equal(pgw_conn_submit(a, &r1), 0);
    assert_int_equal(pgw_conn_submit(a, &r2), 0);
    run_until_state(&loop, direct, a1_waits_on_lock, "A's COPY waiting on the lock");
    pgw_request_t rb = PGW_QUERY("SELECT 'b1'::text", NULL, 0, on_answer, &b1);
    assert_int_equal(pgw_conn_submit(b, &rb), 0);
    run_until_state(&loop, admin, b_waits_in_bouncer, "B waiting for a server in PgBouncer");
    /* The COPY has begun: with pipelining, A writes "a2" now, to the
     * server in COPY mode. */
    run_until(&loop, &a1.started, "A's COPY beginning");
    run_until_state(&loop, pgw_conn_session(a), output_written, "A's output written");
    exec_ok(direct, "SELECT pg_advisory_unlock(" LOCK ")");

    run_until(&loop, &a1.done, "A's COPY");
    exec_ok(direct, "SELECT pg_advisory_unlock(" LOCK2 ")");
    run_until(&loop, &b1.done, "B's answer");
    run_until(&loop, &a2.done, "A's second answer");
    print_message("A: %s, %s; B: %s\n", a1.text, a2.text, b1.text);
    assert_int_equal(a1.status, 0);
    assert_string_equal(a1.text, "a1");
    assert_int_equal(b1.status, 0);
    assert_string_equal(b1.text, "b1");
    assert_int_equal(a2.status, 0);
    assert_string_equal(a2.text, "a2");

    int closed = 0;
    pgw_conn_close(a, on_closed, &closed);
    pgw_conn_close(b, on_closed, &closed);
    while (closed < 2)
        uv_run(&loop, UV_RUN_ONCE);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    for (int i = 0; i < HOLDS; i++) {
        exec_ok(holds[i], "ROLLBACK");
        pgw_client_close(holds[i]);
    }
    pgw_client_close(admin);
    pgw_client_close(direct);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_pipelining_keeps_answers_apart),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
