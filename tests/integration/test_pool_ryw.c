/*
 * Read-your-writes (pool.h, READ YOUR WRITES).
 *
 * A private primary and a standby that holds every commit back 300 ms
 * (tests/pg/pg-replica.sh with PGW_STANDBY_APPLY_DELAY): a read sent to
 * the standby right after a commit is certain to miss it. A routing pool
 * over both runs, ITERATIONS times, a write on the primary (INSERT of i)
 * and, from the write's callback, a read-only request for that row:
 *   - with read_your_writes 1, every read finds its row;
 *   - the same with read_your_writes 0 misses some (the test can fail);
 *   - per-request: with read_your_writes 2, reads submitted with
 *     PGW_POOL_READ_YOUR_WRITES find their row;
 *   - once the standby has replayed the writes (its measure says so),
 *     read-your-writes reads go to it again;
 *   - a session token: the commit LSN of one pool (pgw_pool_commit_lsn,
 *     once complete), passed to another pool (pgw_pool_note_lsn), makes
 *     that pool's reads find the first pool's rows;
 *   - waiting (ryw_fail 2): a read sent as soon as the write's position is
 *     known, which the standby cannot have replayed yet, is answered by
 *     the standby and finds its row; with ryw_wait_ms or the request's
 *     own timeout_ms below the standby's delay it fails with
 *     PGW_ETIMEDOUT; a SIMPLE read (which cannot wait in its own sync
 *     group) goes to the primary;
 *   - ... also when the write's commit record ends exactly at a WAL page's
 *     end on an idle primary (the test pads the WAL to put it there).
 */
#define _DEFAULT_SOURCE
#include "pgpair.h"
#include "pgtest.h"
#include "pgwire/conn.h"
#include "pgwire/pool.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <valgrind/valgrind.h>

#include <cmocka.h>

static pgt_pair_t pair;

static uint64_t now_ms(void)
{
    return uv_hrtime() / 1000000;
}

static int setup(void **state)
{
    (void)state;
    setenv("PGW_STANDBY_APPLY_DELAY", "300ms", 1);
    pgt_pair_start(&pair, "ryw");
    unsetenv("PGW_STANDBY_APPLY_DELAY");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pgt_pair_stop(&pair);
    return 0;
}

static void pair_ci(char *buf, size_t n)
{
    pgt_pair_conninfo(&pair, buf, n, pgt_dir_env(pair.primary, "PGPORT"),
                      pgt_dir_env(pair.standby, "PGW_STANDBY_PORT"));
}

/* A routing pool over the pair with read_your_writes ryw; ryw_fail 2
 * (waiting at most wait_ms) when wait_ms is not 0. */
static pgw_pool_t *pool_with(uv_loop_t *loop, int ryw, uint32_t wait_ms)
{
    char ci[1024];
    pair_ci(ci, sizeof ci);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.route = 1;
    cfg.min_size = 1;
    cfg.max_size = 4;
    cfg.read_your_writes = ryw;
    cfg.ryw_fail = wait_ms ? 2 : 0;
    cfg.ryw_wait_ms = wait_ms;
    cfg.lag_check_ms = 50;
    pgw_pool_t *p;
    assert_int_equal(pgw_pool_new(&p, loop, ci, &cfg), 0);
    return p;
}

static pgw_pool_t *pool_new(uv_loop_t *loop, int ryw)
{
    return pool_with(loop, ryw, 0);
}

typedef struct run {
    pgw_pool_t *wp, *rp; /* writes on wp, reads on rp */
    unsigned read_flags;
    int i, n;
    int stale, reads, at_standby, failed;
    int32_t standby_port;
    int token; /* the write only: the caller reads (wrote set) */
    int wrote;
    int done;
} run_t;

static void next_write(run_t *r);
static void send_read(run_t *r);

static void on_read(int status, pgw_result_t *res, void *ud)
{
    run_t *r = ud;
    if (status == PGW_ERETRY) {
        /* A cold pool's read-only connection may reach the primary first
         * and leave it (pool.h, MULTI-HOST): the read never ran. */
        pgw_result_free(res);
        send_read(r);
        return;
    }
    if (status != 0) {
        r->failed++;
        print_message("read failed: %d\n", status);
        r->done = 1;
        pgw_result_free(res);
        return;
    }
    int64_t found;
    int32_t port;
    assert_int_equal(pgw_result_int8(res, 0, 0, &found), 0);
    assert_int_equal(pgw_result_int4(res, 0, 1, &port), 0);
    pgw_result_free(res);
    r->reads++;
    r->stale += found != 1;
    r->at_standby += port == r->standby_port;
    if (++r->i >= r->n)
        r->done = 1;
    else
        next_write(r);
}

static void send_read(run_t *r)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*), inet_server_port() FROM pgw_ryw WHERE n = %d",
             r->i);
    pgw_request_t q = PGW_SIMPLE(sql, on_read, r);
    int rc = pgw_pool_submit_flags(r->rp, &q, PGW_POOL_READ_ONLY | r->read_flags);
    if (rc != 0) {
        print_message("read refused: %d\n", rc);
        r->failed++;
        r->done = 1;
    }
}

static void on_write(int status, pgw_result_t *res, void *ud)
{
    run_t *r = ud;
    pgw_result_free(res);
    if (status != 0) {
        print_message("write failed: %d\n", status);
        r->failed++;
        r->done = 1;
        return;
    }
    r->wrote = 1;
    if (!r->token) send_read(r);
}

static void next_write(run_t *r)
{
    char sql[96];
    snprintf(sql, sizeof sql, "INSERT INTO pgw_ryw VALUES (%d)", r->i);
    pgw_request_t w = PGW_SIMPLE(sql, on_write, r);
    assert_int_equal(pgw_pool_submit(r->wp, &w), 0);
}

/* Run r's n write-then-read rounds starting at row first. */
static void run_rounds(uv_loop_t *loop, run_t *r, int first, int n)
{
    r->i = first;
    r->n = first + n;
    r->done = 0;
    uint64_t deadline = now_ms() + (RUNNING_ON_VALGRIND ? 600000 : 180000);
    next_write(r);
    while (!r->done && now_ms() < deadline)
        uv_run(loop, UV_RUN_ONCE);
    assert_true(r->done);
}

static void on_made(int status, pgw_result_t *res, void *ud)
{
    assert_int_equal(status, 0);
    pgw_result_free(res);
    *(int *)ud = 1;
}

static pgw_pool_t *pool_waiting(uv_loop_t *loop, uint32_t wait_ms)
{
    return pool_with(loop, 1, wait_ms);
}

typedef struct one_read {
    int status, done;
    int64_t found;
    int32_t port;
} one_read_t;

static void on_one_read(int status, pgw_result_t *res, void *ud)
{
    one_read_t *o = ud;
    o->status = status;
    o->done = 1;
    if (status == 0) {
        assert_int_equal(pgw_result_int8(res, 0, 0, &o->found), 0);
        assert_int_equal(pgw_result_int4(res, 0, 1, &o->port), 0);
    }
    pgw_result_free(res);
}

/* Write row n on p, wait until the pool's commit LSN covers it, then read
 * it back on p as a read-only request (SIMPLE, or a QUERY with a
 * parameter) with timeout_ms; a read that never ran (PGW_ERETRY, a cold
 * pool's first standby connection) is sent again. */
static one_read_t write_then_read(uv_loop_t *loop, pgw_pool_t *p, int n, int simple,
                                  uint32_t timeout_ms)
{
    run_t w = {.wp = p, .rp = p, .token = 1};
    w.i = n;
    w.n = n + 1;
    next_write(&w);
    while (!w.wrote && !w.failed)
        uv_run(loop, UV_RUN_ONCE);
    assert_int_equal(w.failed, 0);
    uint64_t lsn;
    while (!pgw_pool_commit_lsn(p, &lsn))
        uv_run(loop, UV_RUN_ONCE);
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*), inet_server_port() FROM pgw_ryw WHERE n = %d", n);
    pgw_param_t prm = pgw_int4(n);
    one_read_t o;
    do {
        o = (one_read_t){0};
        pgw_request_t q =
            simple ? PGW_SIMPLE(sql, on_one_read, &o)
                   : PGW_QUERY("SELECT count(*), inet_server_port() FROM pgw_ryw WHERE n = $1",
                               &prm, 1, on_one_read, &o);
        q.timeout_ms = timeout_ms;
        assert_int_equal(pgw_pool_submit_flags(p, &q, PGW_POOL_READ_ONLY), 0);
        while (!o.done)
            uv_run(loop, UV_RUN_ONCE);
    } while (o.status == PGW_ERETRY);
    return o;
}

typedef struct sql_int8 {
    int status, done;
    int64_t v;
} sql_int8_t;

static void on_int8(int status, pgw_result_t *res, void *ud)
{
    sql_int8_t *q = ud;
    q->status = status;
    q->done = 1;
    if (status == 0) assert_int_equal(pgw_result_int8(res, 0, 0, &q->v), 0);
    pgw_result_free(res);
}

/* The int8 that sql (a SIMPLE query, on the primary) returns. */
static int64_t primary_int8(uv_loop_t *loop, pgw_pool_t *p, const char *sql)
{
    sql_int8_t q = {0};
    pgw_request_t r = PGW_SIMPLE(sql, on_int8, &q);
    assert_int_equal(pgw_pool_submit(p, &r), 0);
    while (!q.done)
        uv_run(loop, UV_RUN_ONCE);
    assert_int_equal(q.status, 0);
    return q.v;
}

static int64_t insert_at(uv_loop_t *loop, pgw_pool_t *p)
{
    return primary_int8(loop, p,
                        "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::int8");
}

/* Writes a WAL record of size bytes (a multiple of 8, at least 288): a
 * non-transactional logical message of size - 55 bytes (the record's
 * header 24, the long header of its data 5, the message's fixed part 24,
 * the prefix "p" and its NUL 2; records are 8-aligned). */
static void pad_wal(uv_loop_t *loop, pgw_pool_t *p, int64_t size)
{
    char sql[128];
    snprintf(sql, sizeof sql,
             "SELECT pg_wal_lsn_diff(pg_logical_emit_message(false, 'p', repeat('x', %" PRId64
             ")), '0/0')::int8",
             size - 55);
    primary_int8(loop, p, sql);
}

/* Read-your-writes where the write's records end exactly at a WAL page's
 * end and nothing follows them: the primary's insert position is then
 * past the next page's header, the standby's replay position stops at the
 * boundary. The WAL is padded so that the next write fills its page to
 * the byte; an attempt that other WAL got in the way of is made again. */
static void read_at_page_end(uv_loop_t *loop, pgw_pool_t *p, int *n, int32_t standby_port)
{
    int64_t blk = primary_int8(loop, p, "SELECT current_setting('wal_block_size')::int8");
    int64_t seg =
        primary_int8(loop, p, "SELECT pg_size_bytes(current_setting('wal_segment_size'))");
    /* The WAL one write takes (its INSERT and its commit): the same twice
     * in a row within one page. */
    int64_t size = 0, prev = -1;
    for (int i = 0; i < 20 && !size; i++) {
        int64_t a = insert_at(loop, p);
        one_read_t o = write_then_read(loop, p, (*n)++, 0, 0);
        assert_int_equal(o.status, 0);
        int64_t b = insert_at(loop, p);
        if (a / blk != b / blk) continue;
        if (b - a == prev) size = prev;
        prev = b - a;
    }
    assert_true(size > 0 && size < blk / 2);
    int hit = 0, tries = 0;
    for (; tries < 20 && !hit; tries++) {
        int64_t left = blk - insert_at(loop, p) % blk;
        if (left - size < 288) {
            pad_wal(loop, p, (left + 288 + 7) / 8 * 8); /* into the next page */
            continue;
        }
        pad_wal(loop, p, left - size);
        if (blk - insert_at(loop, p) % blk != size) continue;
        one_read_t o = write_then_read(loop, p, (*n)++, 0, 0);
        int64_t after = insert_at(loop, p);
        assert_int_equal(o.status, 0);
        assert_int_equal(o.found, 1);
        hit = after % blk == 24 || after % seg == 40;
        if (hit) assert_int_equal(o.port, standby_port);
    }
    print_message("a write ending at a WAL page's end: read from the standby after %d "
                  "attempt(s)\n",
                  tries);
    assert_true(hit);
}

static void test_ryw_wait(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    int rounds = RUNNING_ON_VALGRIND ? 10 : 50;
    int32_t standby_port = atoi(pgt_dir_env(pair.standby, "PGW_STANDBY_PORT"));

    /* The standby applies each commit 300 ms late: reads wait for it. */
    pgw_pool_t *p = pool_waiting(&loop, 10000);
    int made = 0;
    pgw_request_t mk = PGW_SIMPLE("CREATE TABLE IF NOT EXISTS pgw_ryw (n int4)", on_made, &made);
    assert_int_equal(pgw_pool_submit(p, &mk), 0);
    while (!made)
        uv_run(&loop, UV_RUN_ONCE);
    /* Until the pool's read-only connection is up, reads go to the
     * primary: warm it. */
    int n = 1000000;
    uint64_t deadline = now_ms() + 60000;
    for (one_read_t o = {0}; o.port != standby_port && now_ms() < deadline; n++) {
        o = write_then_read(&loop, p, n, 0, 0);
        assert_int_equal(o.status, 0);
        assert_int_equal(o.found, 1);
    }
    int at_standby = 0, stale = 0;
    for (int i = 0; i < rounds; i++, n++) {
        one_read_t o = write_then_read(&loop, p, n, 0, 0);
        assert_int_equal(o.status, 0);
        stale += o.found != 1;
        at_standby += o.port == standby_port;
    }
    print_message("ryw_fail 2: %d reads, %d stale, %d answered by the standby\n", rounds, stale,
                  at_standby);
    assert_int_equal(stale, 0);
    assert_int_equal(at_standby, rounds);

    read_at_page_end(&loop, p, &n, standby_port);

    /* A SIMPLE read cannot wait in its own sync group: the primary. */
    one_read_t o = write_then_read(&loop, p, n++, 1, 0);
    assert_int_equal(o.status, 0);
    assert_int_equal(o.found, 1);
    assert_int_not_equal(o.port, standby_port);

    /* The request's own deadline ends the wait. */
    o = write_then_read(&loop, p, n++, 0, 30);
    assert_int_equal(o.status, PGW_ETIMEDOUT);
    pgw_pool_close(p);

    /* ryw_wait_ms below the standby's delay: the read never runs. */
    pgw_pool_t *shortw = pool_waiting(&loop, 20);
    deadline = now_ms() + 60000;
    for (o = (one_read_t){0}; o.port != standby_port && now_ms() < deadline; n++) {
        /* Warm: a read of a row the standby has long replayed. */
        one_read_t w = {0};
        pgw_param_t prm = pgw_int4(0);
        pgw_request_t q = PGW_QUERY("SELECT count(*), inet_server_port() FROM pgw_ryw WHERE n = $1",
                                    &prm, 1, on_one_read, &w);
        assert_int_equal(pgw_pool_submit_flags(shortw, &q, PGW_POOL_READ_ONLY), 0);
        while (!w.done)
            uv_run(&loop, UV_RUN_ONCE);
        o = w;
    }
    assert_int_equal(o.port, standby_port);
    for (int i = 0; i < 3; i++) {
        o = write_then_read(&loop, shortw, n++, 0, 0);
        assert_int_equal(o.status, PGW_ETIMEDOUT);
    }
    pgw_pool_close(shortw);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_ryw(void **state)
{
    (void)state;
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    int valgrind = RUNNING_ON_VALGRIND;
    int iterations = valgrind ? 1000 : 10000;
    int32_t standby_port = atoi(pgt_dir_env(pair.standby, "PGW_STANDBY_PORT"));

    pgw_pool_t *on = pool_new(&loop, 1);
    int made = 0;
    pgw_request_t mk = PGW_SIMPLE("CREATE TABLE pgw_ryw (n int4)", on_made, &made);
    assert_int_equal(pgw_pool_submit(on, &mk), 0);
    while (!made)
        uv_run(&loop, UV_RUN_ONCE);

    /* Read your writes on: never stale. */
    run_t r = {.wp = on, .rp = on, .standby_port = standby_port};
    run_rounds(&loop, &r, 0, iterations);
    print_message("read_your_writes 1: %d reads, %d stale, %d answered by the standby\n", r.reads,
                  r.stale, r.at_standby);
    assert_int_equal(r.failed, 0);
    assert_int_equal(r.reads, iterations);
    assert_int_equal(r.stale, 0);
    uint64_t lsn = 0;
    while (!pgw_pool_commit_lsn(on, &lsn))
        uv_run(&loop, UV_RUN_ONCE);
    assert_true(lsn > 0);

    /* Once the standby has replayed it all, reads go to it again. */
    run_t later = {.wp = on, .rp = on, .standby_port = standby_port};
    uint64_t deadline = now_ms() + 60000;
    while (later.at_standby == 0 && now_ms() < deadline) {
        later.done = 0;
        later.i = 0;
        later.n = 1;
        send_read(&later);
        while (!later.done)
            uv_run(&loop, UV_RUN_ONCE);
        assert_int_equal(later.failed, 0);
    }
    assert_true(later.at_standby > 0);
    assert_int_equal(later.stale, 0);

    /* Off: reads miss their rows (the test above can fail). */
    pgw_pool_t *off = pool_new(&loop, 0);
    run_t o = {.wp = off, .rp = off, .standby_port = standby_port};
    run_rounds(&loop, &o, iterations, valgrind ? 100 : 1000);
    print_message("read_your_writes 0: %d reads, %d stale, %d answered by the standby\n", o.reads,
                  o.stale, o.at_standby);
    assert_int_equal(o.failed, 0);
    assert_true(o.stale > 0);

    /* Per request (read_your_writes 2): flagged reads never stale. */
    pgw_pool_t *opt = pool_new(&loop, 2);
    run_t f = {.wp = opt,
               .rp = opt,
               .read_flags = PGW_POOL_READ_YOUR_WRITES,
               .standby_port = standby_port};
    run_rounds(&loop, &f, 2 * iterations, valgrind ? 100 : 1000);
    assert_int_equal(f.failed, 0);
    assert_int_equal(f.stale, 0);

    /* A session token carried to another pool. */
    pgw_pool_t *other = pool_new(&loop, 1);
    int stale_token = 0, rounds = valgrind ? 20 : 200;
    for (int i = 0; i < rounds; i++) {
        run_t w = {.wp = opt, .rp = opt, .token = 1, .standby_port = standby_port};
        w.i = 3 * iterations + i;
        w.n = w.i + 1;
        next_write(&w);
        while (!w.wrote)
            uv_run(&loop, UV_RUN_ONCE);
        assert_int_equal(w.failed, 0);
        /* The token is complete once the write's position came back. */
        while (!pgw_pool_commit_lsn(opt, &lsn))
            uv_run(&loop, UV_RUN_ONCE);
        pgw_pool_note_lsn(other, lsn);
        run_t rd = {.wp = other, .rp = other, .standby_port = standby_port};
        rd.i = w.i;
        rd.n = w.i + 1;
        send_read(&rd);
        while (!rd.done)
            uv_run(&loop, UV_RUN_ONCE);
        assert_int_equal(rd.failed, 0);
        stale_token += rd.stale;
    }
    assert_int_equal(stale_token, 0);

    pgw_pool_close(other);
    pgw_pool_close(opt);
    pgw_pool_close(off);
    pgw_pool_close(on);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ryw),
        cmocka_unit_test(test_ryw_wait),
    };
    return cmocka_run_group_tests_name("read your writes", tests, setup, teardown);
}
