/*
 * A bounded soak (issue 24's point 4): a mixed workload on a pool and a
 * listener of a private cluster and on a second pool through a private
 * PgBouncer in front of it (transaction pool mode, so that pool runs
 * stmt_cache_mode = PGW_STMT_UNNAMED), with backends killed at random, the
 * server restarted half way and PgBouncer restarted at three quarters.
 *   workload  one-shot queries whose results are checked against their
 *             parameters; statement-cache churn (200 distinct texts, a
 *             table altered behind the cache's back); COPY in and out (the
 *             rows counted); checkouts with transactions (a query and a
 *             COPY inside), committed, or released open (the pool rolls
 *             back); server-side cursors fetched in three steps; deadlines
 *             that fire (pg_sleep under a 50 ms timeout) and cancels of a
 *             running pg_sleep, both on checkouts; a listener on a channel
 *             the test notifies; a third of the one-shots and checkouts
 *             go through PgBouncer (the listener does not: LISTEN needs a
 *             session of its own);
 *   faults    a random pool or listener backend (PgBouncer's server
 *             connections included) terminated every 1.5 s,
 *             `pg_ctl restart -m fast` at half time, `pgbouncer.sh restart`
 *             (SIGTERM, its clients cut, started again on the same port)
 *             at three quarters.
 * At the end:
 *   - every accepted request's callback fired exactly once, with its own
 *     correct result or a typed error its kind allows (what a lost
 *     connection or the restart may cause; PGW_ETIMEDOUT only for the
 *     deadline's request, which never succeeds; 57014 only for the
 *     cancelled pg_sleep: a cancel never interrupts another request, also
 *     when its connection goes back to the pool at once). A cancel that
 *     reaches the backend before its statement starts is ignored by the
 *     server, so a cancelled pg_sleep may also succeed;
 *   - pg_stat_activity shows no session of the test left idle in
 *     transaction (PgBouncer's server connections included), and none of
 *     the direct pool or listener once they are closed; PgBouncer's SHOW
 *     CLIENTS none of the bouncer pool once it is closed;
 *   - the listener delivers a notification sent after the last fault;
 *   - open file descriptors are the same before the pool opened and after
 *     it closed; RSS is flat between the end of the warm-up (a quarter of
 *     the run) and the end, within 8 MiB (not checked under ASan or
 *     valgrind, whose allocators hold freed memory).
 * Deadlines run on checkouts and on pipelined one-shots, half each: a
 * deadline's cancel once interrupted the one-shot pipelined behind it,
 * another caller's request (57014), which this soak found (issue 24);
 * PGW_SOAK_DEADLINE_ONESHOT=1 puts them all on one-shots, 0 all on
 * checkouts.
 * PGW_SOAK_SECONDS sets the length: 30 s by default (10 s under valgrind
 * or PGW_TEST_SLOW), 300 for the CI soak, 3600 for the long run;
 * PGW_SOAK_SEED the workload's random seed (1). The figures (requests by
 * outcome, faults, notifications, RSS and fds) are printed.
 * PGW_SOAK_BOUNCER=0 leaves PgBouncer out (a machine without it).
 *
 * test_cancel_then_release: a checkout runs pg_sleep(5), cancels it after
 * 20 ms and goes back to the pool as soon as the sleep failed; the next
 * one-shot on that same connection (a pool of one) must succeed, 100
 * times (RELIABILITY case 10's race, through the pool).
 */
#define _POSIX_C_SOURCE 200809L /* uv.h */
#include "pgpair.h"
#include "pgtest.h"
#include "pgtime.h"
#include "pgwire/client.h"
#include "pgwire/listen.h"
#include "pgwire/pool.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include <cmocka.h>

#if defined(__SANITIZE_ADDRESS__)
#define SOAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_ASAN 1
#endif
#endif
#ifndef SOAK_ASAN
#define SOAK_ASAN 0
#endif

#define APP       "pgw_soak"
#define APP_B     "pgw_soak_bouncer" /* the pool through PgBouncer */
#define POOL_MAX  8
#define INFLIGHT  24 /* operations in flight at once */
#define NSLOTS    256
#define COPY_ROWS 100

static uv_loop_t loop;
static pgw_pool_t *pool;
static pgw_pool_t *bpool; /* through PgBouncer, NULL without it */
static pgw_listener_t *lst;
static char ci[1024];    /* the pool's and listener's */
static char bci[1024];   /* the pool's through PgBouncer */
static char admin[768];  /* the test's own sessions */
static long via_bouncer; /* requests accepted through PgBouncer */

/* ------------------------------------------------------------ outcomes */

enum kind {
    K_ONESHOT,
    K_CACHE,
    K_DDL_READ,
    K_DEADLINE,
    K_COPY_IN,
    K_COPY_OUT,
    K_TX,
    K_CURSOR,
    K_CANCEL,
    NKINDS
};
static const char *const kind_names[NKINDS] = {
    "one-shot", "cache", "ddl-read", "deadline", "copy-in", "copy-out", "tx", "cursor", "cancel"};

/* Requests by kind: ok, failed (typed, allowed), refused at submit. */
static long n_ok[NKINDS], n_failed[NKINDS], n_refused[NKINDS];
static pgt_err_tally_t errors;

/* One request in flight: its slot says what it must return. Slots are
 * reused in FIFO order, so a second callback would find its slot free. */
typedef struct slot {
    int busy, kind;
    int64_t want;    /* the value, or the row count */
    int64_t got;     /* COPY OUT: rows received */
    struct op *op;   /* the checkout it belongs to, if any */
    pgw_pool_t *via; /* the pool it went to */
    uint64_t started;
} slot_t;

static slot_t slots[NSLOTS];
static int free_ring[NSLOTS], ring_head, ring_len;
static int inflight; /* operations not yet ended */
static long accepted;

static void slots_init(void)
{
    memset(slots, 0, sizeof slots);
    for (int i = 0; i < NSLOTS; i++)
        free_ring[i] = i;
    ring_head = 0;
    ring_len = NSLOTS;
}

static slot_t *slot_take(int kind, int64_t want)
{
    assert_true(ring_len > 0);
    slot_t *s = &slots[free_ring[ring_head]];
    ring_head = (ring_head + 1) % NSLOTS;
    ring_len--;
    assert_false(s->busy);
    memset(s, 0, sizeof *s);
    s->busy = 1;
    s->kind = kind;
    s->want = want;
    s->started = pgt_now_ns();
    return s;
}

static void slot_give(slot_t *s)
{
    s->busy = 0;
    free_ring[(ring_head + ring_len) % NSLOTS] = (int)(s - slots);
    ring_len++;
}

static long kills, ddls, restarts, bouncer_restarts;

/* What a lost connection or the restart may cause on any request. */
/* The error of res: a simple query's chain holds it on the result of the
 * statement that failed, after those that succeeded before it. */
static const pgw_error_t *error_of(const pgw_result_t *res)
{
    for (; res; res = pgw_result_next(res))
        if (pgw_result_error(res)) return pgw_result_error(res);
    return NULL;
}

static int fault_error(int status, const pgw_result_t *res)
{
    if (status == PGW_ERETRY || status == PGW_ECONNLOST || status == PGW_ECANCELED ||
        status == PGW_EPOOLTIMEOUT || status == PGW_ECLOSED || status == PGW_EABORTED)
        return 1;
    if (status == PGW_ESERVER) {
        const pgw_error_t *e = error_of(res);
        const char *st = e && e->sqlstate ? e->sqlstate : "";
        /* 57P01 admin shutdown (a kill), 57P03 cannot connect now, 25P02
         * a transaction aborted by an earlier failure, 08xxx (PgBouncer's
         * "server conn crashed?" and its login failures while the server
         * restarts are 08P01) */
        return !strncmp(st, "57P0", 4) || !strcmp(st, "25P02") || !strncmp(st, "08", 2);
    }
    return 0;
}

static const char *sqlstate_of(const pgw_result_t *res)
{
    const pgw_error_t *e = error_of(res);
    return e && e->sqlstate ? e->sqlstate : "-";
}

static const char *message_of(const pgw_result_t *res)
{
    const pgw_error_t *e = error_of(res);
    return e && e->message ? e->message : "-";
}

/* The end of one request: exactly once, with its own result or an error
 * its kind allows. */
static void request_ended(slot_t *s, int status, pgw_result_t *res)
{
    if (!s->busy) fail_msg("a %s request's callback fired twice", kind_names[s->kind]);
    int k = s->kind;
    if (status == 0) {
        int64_t v = -1;
        switch (k) {
        case K_ONESHOT:
        case K_CACHE:
            if (pgw_result_int8(res, 0, 0, &v) != 0 || v != s->want)
                fail_msg("%s: %lld, not %lld", kind_names[k], (long long)v, (long long)s->want);
            break;
        case K_DEADLINE:
            fail_msg("a request past its deadline succeeded, %.0f ms after its submit",
                     pgt_ms_since(s->started));
            break;
        case K_COPY_IN:
            if (pgw_result_rows_affected(res) != COPY_ROWS)
                fail_msg("COPY IN: %lld rows", (long long)pgw_result_rows_affected(res));
            break;
        case K_COPY_OUT:
            if (s->got != s->want)
                fail_msg("COPY OUT: %lld rows, not %lld", (long long)s->got, (long long)s->want);
            break;
        case K_CURSOR:
            if (s->want > 0 && (pgw_result_nrows(res) != 10 ||
                                pgw_result_int8(res, 0, 0, &v) != 0 || v != s->want))
                fail_msg("cursor: %zu rows from %lld, not 10 from %lld",
                         (size_t)pgw_result_nrows(res), (long long)v, (long long)s->want);
            break;
        default:
            break;
        }
        n_ok[k]++;
    } else {
        int ok = fault_error(status, res);
        if (k == K_DEADLINE && status == PGW_ETIMEDOUT) ok = 1;
        if (k == K_CANCEL && status == PGW_ESERVER && !strcmp(sqlstate_of(res), "57014")) ok = 1;
        /* DDL behind the cache: re-prepared, or the typed error */
        if ((k == K_DDL_READ || k == K_CACHE) && status == PGW_ESTMTINVALID) ok = 1;
        if (!ok)
            fail_msg("%s request failed with %s (SQLSTATE %s: %s)%s", kind_names[k],
                     pgw_err_name(status), sqlstate_of(res), message_of(res),
                     bpool && s->via == bpool ? " through PgBouncer" : "");
        n_failed[k]++;
        pgt_err_tally_add(&errors, status);
    }
    pgw_result_free(res);
}

/* -------------------------------------------------- one-shot requests */

/* The last connect's error, which the pool passes on while the server is
 * down: a libuv code (UV_ECONNREFUSED, ...) or a connect failure. */
static int connect_error(int rc)
{
    return (rc < 0 && rc > -1000) || rc == PGW_ECLOSED || rc == PGW_ESERVER || rc == PGW_ECONNECT ||
           rc == PGW_ECONNLOST || rc == PGW_ETIMEDOUT;
}

/* A third of the work goes through PgBouncer when it runs. Its pool's
 * connections do not pipeline (no_pipelining): PgBouncer in transaction
 * mode may hand its server to another client while a pipelined sync group
 * is still on it, whose answer then reaches that client (before the
 * option, this soak saw results swapped between two of its pool's
 * connections; test_pgbouncer_pipelining makes it happen). */
static pgw_pool_t *pick_pool(void)
{
    return bpool && rand() % 3 == 0 ? bpool : pool;
}

static void on_oneshot(int status, pgw_result_t *res, void *ud)
{
    slot_t *s = ud;
    request_ended(s, status, res);
    slot_give(s);
    inflight--;
}

static void pool_submit(pgw_request_t *r, slot_t *s)
{
    r->on_result = on_oneshot;
    r->ud = s;
    s->via = pick_pool();
    int rc = pgw_pool_submit(s->via, r);
    if (rc == 0) {
        accepted++;
        via_bouncer += s->via == bpool;
        return;
    }
    /* nothing queued: the server is down and the pool backs off */
    if (!connect_error(rc)) fail_msg("pool submit refused with %s", pgw_err_name(rc));
    n_refused[s->kind]++;
    slot_give(s);
    inflight--;
}

static int copy_sent;

static int copy_source(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room, (void)ud;
    for (int i = 0; i < COPY_ROWS; i++)
        if (pgw_buf_append(out, "1\n", 2) < 0) return PGW_ENOMEM;
    copy_sent++;
    return PGW_COPY_END;
}

static int copy_sink(const uint8_t *d, size_t n, void *ud)
{
    slot_t *s = ud;
    for (size_t i = 0; i < n; i++)
        s->got += d[i] == '\n';
    return 0;
}

static void start_oneshot(int kind)
{
    static int64_t tag;
    static char sql[NSLOTS][64];
    inflight++;
    tag++;
    pgw_param_t p = pgw_int8(tag);
    pgw_request_t r;
    slot_t *s;
    switch (kind) {
    case K_ONESHOT:
        s = slot_take(kind, 2 * tag);
        r = PGW_QUERY("SELECT $1::int8 * 2", &p, 1, NULL, NULL);
        break;
    case K_CACHE: {
        int k = rand() % 200; /* more texts than the cache holds: misses, evictions */
        s = slot_take(kind, tag + k);
        char *text = sql[s - slots];
        snprintf(text, sizeof sql[0], "SELECT $1::int8 + %d", k);
        r = PGW_QUERY(text, &p, 1, NULL, NULL);
        break;
    }
    case K_DEADLINE: /* see the header */
        s = slot_take(kind, 0);
        r = PGW_QUERY("SELECT pg_sleep(2), $1::int8", &p, 1, NULL, NULL);
        r.timeout_ms = 50;
        break;
    case K_DDL_READ:
        s = slot_take(kind, 0);
        r = PGW_QUERY("SELECT pg_backend_pid(), * FROM soak_ddl WHERE $1::int8 > 0", &p, 1, NULL,
                      NULL);
        break;
    case K_COPY_IN:
        s = slot_take(kind, 0);
        r = PGW_COPY_IN_REQ("COPY soak_copy FROM STDIN", copy_source, NULL, NULL);
        break;
    default: {
        int64_t n = 1 + rand() % 200;
        s = slot_take(kind, n);
        char *text = sql[s - slots];
        snprintf(text, sizeof sql[0], "COPY (SELECT generate_series(1, %d)) TO STDOUT", (int)n);
        r = PGW_COPY_OUT_REQ(text, copy_sink, NULL, NULL);
        break;
    }
    }
    pool_submit(&r, s);
}

/* ----------------------------------------------------------- checkouts */

/* A checkout: its requests, pipelined, then the release once the last one
 * ended. */
typedef struct op {
    int used, kind, pending;
    pgw_pool_t *pool; /* the pool it was acquired from */
    pgw_conn_t *conn;
    slot_t *sleeper; /* K_CANCEL: the request to cancel */
    uv_timer_t timer;
    int timer_open, cancel_open; /* the op ends once both are 0 too */
} op_t;

static op_t ops[INFLIGHT + 8];

static void op_end(op_t *o)
{
    if (o->conn) assert_int_equal(pgw_pool_release(o->pool, o->conn), 0);
    o->conn = NULL;
    o->used = 0;
    inflight--;
}

static void on_timer_closed(uv_handle_t *h)
{
    op_t *o = h->data;
    o->timer_open = 0;
    if (!o->pending && !o->cancel_open) op_end(o);
}

static void on_op_req(int status, pgw_result_t *res, void *ud)
{
    slot_t *s = ud;
    op_t *o = s->op;
    request_ended(s, status, res);
    slot_give(s);
    if (o->sleeper == s) o->sleeper = NULL;
    if (--o->pending == 0 && !o->timer_open && !o->cancel_open) op_end(o);
}

/* Returns the request's slot, or NULL when it was refused. */
static slot_t *op_submit(op_t *o, pgw_request_t *r, int kind, int64_t want)
{
    slot_t *s = slot_take(kind, want);
    s->op = o;
    s->via = o->pool;
    r->on_result = on_op_req;
    r->ud = s;
    int rc = pgw_conn_submit(o->conn, r);
    if (rc == 0) {
        o->pending++;
        accepted++;
        via_bouncer += o->pool == bpool;
        return s;
    }
    if (rc != PGW_ECLOSED) fail_msg("submit on a checkout: %s", pgw_err_name(rc));
    n_refused[kind]++;
    slot_give(s);
    return NULL;
}

/* The server took the cancel (a cancel into a dying backend may fail). */
static void on_cancel_sent(pgw_conn_t *c, int status, void *ud)
{
    (void)c, (void)status;
    op_t *o = ud;
    o->cancel_open = 0;
    if (!o->pending && !o->timer_open) op_end(o);
}

static void on_cancel_timer(uv_timer_t *t)
{
    op_t *o = t->data;
    if (o->sleeper && o->conn && pgw_conn_cancel(o->conn, on_cancel_sent, o) == 0)
        o->cancel_open = 1;
    uv_close((uv_handle_t *)t, on_timer_closed);
}

static void on_acquired(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    (void)p;
    op_t *o = ud;
    if (status != 0) {
        if (!fault_error(status, NULL) && !connect_error(status))
            fail_msg("acquire: %s", pgw_err_name(status));
        n_failed[o->kind]++;
        pgt_err_tally_add(&errors, status);
        op_end(o);
        return;
    }
    o->conn = conn;
    if (pgw_session_pending(pgw_conn_session(conn)) != 0)
        fail_msg("the pool handed out a connection with %zu requests pending (%s)",
                 (size_t)pgw_session_pending(pgw_conn_session(conn)), kind_names[o->kind]);
    static int64_t tag;
    tag++;
    pgw_param_t prm = pgw_int8(tag);
    pgw_request_t r;
    switch (o->kind) {
    case K_TX:
        r = PGW_SIMPLE("BEGIN", NULL, NULL);
        op_submit(o, &r, K_TX, 0);
        r = PGW_QUERY("SELECT $1::int8 * 2", &prm, 1, NULL, NULL);
        op_submit(o, &r, K_ONESHOT, 2 * tag);
        r = PGW_COPY_IN_REQ("COPY soak_copy FROM STDIN", copy_source, NULL, NULL);
        op_submit(o, &r, K_COPY_IN, 0);
        if (tag % 2) { /* else released open: the pool rolls it back */
            r = PGW_SIMPLE("COMMIT", NULL, NULL);
            op_submit(o, &r, K_TX, 0);
        }
        break;
    case K_CURSOR:
        r = PGW_SIMPLE("BEGIN; DECLARE soak_c CURSOR FOR SELECT g::int8 FROM generate_series(1, "
                       "30) g",
                       NULL, NULL);
        op_submit(o, &r, K_CURSOR, 0);
        for (int i = 0; i < 3; i++) {
            r = PGW_QUERY("FETCH 10 FROM soak_c", NULL, 0, NULL, NULL);
            op_submit(o, &r, K_CURSOR, 1 + 10 * i);
        }
        r = PGW_SIMPLE("COMMIT", NULL, NULL);
        op_submit(o, &r, K_CURSOR, 0);
        break;
    case K_DEADLINE:
        r = PGW_QUERY("SELECT pg_sleep(2), $1::int8", &prm, 1, NULL, NULL);
        r.timeout_ms = 50;
        op_submit(o, &r, K_DEADLINE, 0);
        break;
    default: /* K_CANCEL */
        r = PGW_QUERY("SELECT pg_sleep(5)", NULL, 0, NULL, NULL);
        o->sleeper = op_submit(o, &r, K_CANCEL, 0);
        uv_timer_init(&loop, &o->timer);
        o->timer.data = o;
        o->timer_open = 1;
        uv_timer_start(&o->timer, on_cancel_timer, 20, 0);
        break;
    }
    if (!o->pending && !o->timer_open) op_end(o);
}

static void start_checkout(int kind)
{
    size_t i = 0;
    while (i < sizeof ops / sizeof ops[0] && ops[i].used)
        i++;
    assert_true(i < sizeof ops / sizeof ops[0]);
    op_t *o = &ops[i];
    memset(o, 0, sizeof *o);
    o->used = 1;
    o->kind = kind;
    o->pool = pick_pool();
    inflight++;
    int rc = pgw_pool_acquire(o->pool, 0, 5000, on_acquired, o);
    if (rc != 0) fail_msg("acquire refused: %s", pgw_err_name(rc));
}

/* ------------------------------------------------------------ listener */

static long notes_got, notes_sent, final_got;
static uint64_t gaps; /* the listener's, read before it closes */
static int lst_ready, lst_closed;

static void on_levent(pgw_listener_t *l, pgw_listener_event_t ev, int status, void *ud)
{
    (void)l, (void)status, (void)ud;
    if (ev == PGW_LISTENER_READY) lst_ready = 1;
}

static void on_lnote(pgw_listener_t *l, int32_t pid, pgw_str_t ch, pgw_str_t pl, void *ud)
{
    (void)l, (void)pid, (void)ch, (void)ud;
    notes_got++;
    if (pl.len == 5 && !memcmp(pl.p, "final", 5)) final_got++;
}

static void on_lclosed(pgw_listener_t *l, void *ud)
{
    (void)l, (void)ud;
    lst_closed = 1;
}

/* --------------------------------------------------------------- admin */

/* Runs sql on a fresh session of the private cluster; 0, or the failure
 * (while the server restarts). *out gets the first value when asked. */
static int admin_run(const char *sql, int64_t *out)
{
    pgw_client_t *c = NULL;
    int rc = pgw_client_connect(&c, admin, NULL);
    pgw_result_t *res = NULL;
    if (rc == 0) rc = pgw_client_exec(c, sql, &res);
    if (rc == 0 && out) rc = pgw_result_int8(res, 0, 0, out);
    pgw_result_free(res);
    pgw_client_close(c);
    return rc;
}

static int64_t admin_int8(const char *sql)
{
    int64_t v = -1;
    int rc = admin_run(sql, &v);
    if (rc != 0) fail_msg("%s: %s", sql, pgw_err_name(rc));
    return v;
}

static int ddl_col;

static void kill_one(void)
{
    int64_t n = 0;
    if (admin_run("SELECT count(pg_terminate_backend(pid)) FROM (SELECT pid FROM "
                  "pg_stat_activity WHERE application_name IN ('" APP "', '" APP_B "') "
                  "ORDER BY random() LIMIT 1) s",
                  &n) == 0)
        kills += n;
}

/* The cached statement's table changes shape behind its back. */
static void alter_ddl(void)
{
    char sql[128];
    if (ddl_col % 2 == 0)
        snprintf(sql, sizeof sql, "ALTER TABLE soak_ddl ADD COLUMN c%d int", ddl_col / 2);
    else
        snprintf(sql, sizeof sql, "ALTER TABLE soak_ddl DROP COLUMN c%d", ddl_col / 2);
    if (admin_run(sql, NULL) == 0) {
        ddl_col++;
        ddls++;
    }
}

static void notify(const char *payload)
{
    char sql[96];
    snprintf(sql, sizeof sql, "NOTIFY soak_ch, '%s'", payload);
    if (admin_run(sql, NULL) == 0) notes_sent++;
}

/* ------------------------------------------------------ process figures */

static long rss_kib(void)
{
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = -1;
    fclose(f);
    return rss < 0 ? -1 : rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* ------------------------------------------------------------ the soak */

static void on_wake(uv_timer_t *t)
{
    (void)t; /* only wakes the loop */
}

/* A fault: `bash tests/pg/SCRIPT restart DIR` once, at a given time. */
typedef struct fault_restart {
    const char *script, *dir;
    uint64_t at;
    long *count;
    int state; /* 0 not yet, 1 running, 2 done */
    pgt_child_t child;
} fault_restart_t;

static void restart_ended(fault_restart_t *r)
{
    assert_int_equal(r->child.status, 0);
    (*r->count)++;
    r->state = 2;
}

static void restart_step(fault_restart_t *r, uint64_t now)
{
    if (r->state == 0 && now >= r->at) {
        pgt_script_spawn(&loop, &r->child, r->script, "restart", r->dir, NULL);
        r->state = 1;
    }
    if (r->state == 1 && r->child.exited) restart_ended(r);
}

/* Wait for a restart still running at the end of the workload. */
static void restart_finish(fault_restart_t *r)
{
    if (r->state != 1) return;
    uint64_t until = pgt_now_ns() + 120000000000ull;
    while (!r->child.exited && pgt_now_ns() < until)
        uv_run(&loop, UV_RUN_ONCE);
    assert_true(r->child.exited);
    restart_ended(r);
}

static int soak_seconds(void)
{
    const char *slow = getenv("PGW_TEST_SLOW");
    int slow_mode = RUNNING_ON_VALGRIND || (slow && *slow && strcmp(slow, "0") != 0);
    return pgt_env_int("PGW_SOAK_SECONDS", slow_mode ? 10 : 30);
}

static int deadline_oneshot; /* PGW_SOAK_DEADLINE_ONESHOT: 1, 0, else half */

static void start_one(void)
{
    int r = rand() % 100;
    if (r < 30)
        start_oneshot(K_ONESHOT);
    else if (r < 50)
        start_oneshot(K_CACHE);
    else if (r < 56)
        start_oneshot(K_DDL_READ);
    else if (r < 60)
        deadline_oneshot == 1 || (deadline_oneshot != 0 && rand() % 2) ? start_oneshot(K_DEADLINE)
                                                                       : start_checkout(K_DEADLINE);
    else if (r < 68)
        start_oneshot(K_COPY_IN);
    else if (r < 76)
        start_oneshot(K_COPY_OUT);
    else if (r < 86)
        start_checkout(K_TX);
    else if (r < 96)
        start_checkout(K_CURSOR);
    else
        start_checkout(K_CANCEL);
}

static void run_until_ms(uint64_t end_ns, int (*done)(void))
{
    while (pgt_now_ns() < end_ns && !(done && done()))
        uv_run(&loop, UV_RUN_ONCE);
}

static int all_ended(void)
{
    return inflight == 0;
}

static void print_figures(double secs, long rss0, long rss1, int fd_before, int fd_warm, int fd_end,
                          int fd_after)
{
    print_message("soak: %.0f s, %ld requests accepted\n", secs, accepted);
    for (int k = 0; k < NKINDS; k++)
        print_message("  %-9s ok %7ld  failed %5ld  refused %4ld\n", kind_names[k], n_ok[k],
                      n_failed[k], n_refused[k]);
    pgt_err_tally_print(&errors, "  error ");
    print_message("  through PgBouncer: %ld of the requests accepted\n", via_bouncer);
    print_message("  faults: %ld backends killed, %ld restart(s), %ld PgBouncer restart(s), %ld "
                  "ALTER TABLE\n",
                  kills, restarts, bouncer_restarts, ddls);
    print_message("  notifications: %ld sent, %ld received, %llu gap(s)\n", notes_sent, notes_got,
                  (unsigned long long)gaps);
    print_message("  RSS %ld KiB after the warm-up, %ld KiB at the end\n", rss0, rss1);
    print_message("  fds %d before, %d after the warm-up, %d at the end, %d after closing\n",
                  fd_before, fd_warm, fd_end, fd_after);
}

/* The soak's private cluster and PgBouncer, started and stopped around the
 * test so that a failed assertion never leaves a server running. */
static char soak_dir[64];
static char bouncer_dir[96]; /* "" without PgBouncer */

/* The connection string of PgBouncer's env file, app the application_name;
 * its admin console when db is "pgbouncer", else the cluster's database.
 * Through its unix socket, in a directory of its own: its TCP port is free
 * while it restarts, and another test's PgBouncer on this machine could
 * take it (a client would then reach another cluster). */
static void bouncer_conninfo(char *buf, size_t n, const char *db, const char *app)
{
    static const char *const keys[][2] = {{"host", "PGW_PGBOUNCER_SOCKET_DIR"},
                                          {"port", "PGW_PGBOUNCER_PORT"},
                                          {"user", "PGW_PGBOUNCER_USER"},
                                          {"password", "PGW_PGBOUNCER_PASSWORD"}};
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        assert_int_equal(
            pgt_conninfo_append(buf, n, keys[i][0], pgt_dir_env(bouncer_dir, keys[i][1])), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "dbname", db), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "sslmode", "disable"), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "connect_timeout", "5"), 0);
    if (app) assert_int_equal(pgt_conninfo_append(buf, n, "application_name", app), 0);
}

static int soak_setup(void **state)
{
    (void)state;
    pgt_cluster_start(soak_dir, "soak", admin, sizeof admin);
    bouncer_dir[0] = '\0';
    if (pgt_env_int("PGW_SOAK_BOUNCER", 1)) {
        char env[96];
        snprintf(bouncer_dir, sizeof bouncer_dir, "%s-bouncer", soak_dir);
        snprintf(env, sizeof env, "%s/env", soak_dir);
        if (pgt_script_exit("pgbouncer.sh", "start", bouncer_dir, env) != 0)
            fail_msg("could not start PgBouncer in %s (apt-get install pgbouncer, or "
                     "PGW_SOAK_BOUNCER=0)",
                     bouncer_dir);
        bouncer_conninfo(bci, sizeof bci, pgt_dir_env(bouncer_dir, "PGW_PGBOUNCER_DB"), APP_B);
    }
    return 0;
}

static int soak_teardown(void **state)
{
    (void)state;
    if (bouncer_dir[0]) pgt_script_exit("pgbouncer.sh", "stop", bouncer_dir, NULL);
    bouncer_dir[0] = '\0';
    if (soak_dir[0]) pgt_cluster_stop(soak_dir);
    soak_dir[0] = '\0';
    return 0;
}

/* The end of PgBouncer's log, for a failure that concerns it. */
static void print_bouncer_log(void)
{
    char path[sizeof bouncer_dir + 32];
    snprintf(path, sizeof path, "%s/pgbouncer.log", bouncer_dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        print_error("no %s\n", path);
        return;
    }
    char tail[4096];
    if (fseek(f, 0, SEEK_END) == 0 && ftell(f) > (long)sizeof tail)
        fseek(f, -(long)sizeof tail, SEEK_END);
    else
        rewind(f);
    size_t n = fread(tail, 1, sizeof tail, f);
    fclose(f);
    print_error("the end of %s:\n%.*s\n", path, (int)n, tail);
}

/* What PgBouncer's directory holds and whether its process runs, for a
 * failure to reach it (its unix socket was once found missing at the end
 * of a run in CI, the process apparently alive). */
static void print_bouncer_state(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "ls -la '%s' '%s' 2>&1; p=$(cat '%s/pgbouncer.pid' 2>/dev/null);"
             " echo \"pid $p:\"; ps -o pid,stat,lstart,args -p \"${p:-0}\" 2>&1;"
             " cat '%s/start.log' 2>/dev/null",
             bouncer_dir, pgt_dir_env(bouncer_dir, "PGW_PGBOUNCER_SOCKET_DIR"), bouncer_dir,
             bouncer_dir);
    fflush(stdout);
    if (system(cmd) != 0) print_error("(the listing failed)\n");
}

/* PgBouncer's clients of the cluster's database (SHOW CLIENTS on its admin
 * console, whose own session is of the database "pgbouncer"). */
static int64_t bouncer_clients(void)
{
    char aci[1024];
    bouncer_conninfo(aci, sizeof aci, "pgbouncer", NULL);
    pgw_client_t *c = NULL;
    pgw_result_t *res = NULL;
    int rc = pgw_client_connect(&c, aci, NULL);
    if (rc == 0) rc = pgw_client_exec(c, "SHOW CLIENTS", &res);
    if (rc != 0) {
        print_bouncer_log();
        print_bouncer_state();
        fail_msg("SHOW CLIENTS on PgBouncer: %s", pgw_err_name(rc));
    }
    int dbcol = pgw_result_column(res, "database");
    assert_true(dbcol >= 0);
    const char *want = pgt_dir_env(bouncer_dir, "PGW_PGBOUNCER_DB");
    int64_t n = 0;
    for (size_t i = 0; i < pgw_result_nrows(res); i++) {
        pgw_str_t v;
        assert_int_equal(pgw_result_text(res, i, (size_t)dbcol, &v), 0);
        n += v.len == strlen(want) && !memcmp(v.p, want, v.len);
    }
    pgw_result_free(res);
    pgw_client_close(c);
    return n;
}

static void test_soak(void **state)
{
    (void)state;
    snprintf(ci, sizeof ci, "%s application_name=" APP, admin);
    assert_int_equal(admin_run("CREATE TABLE soak_copy (n int); CREATE TABLE soak_ddl (a int);"
                               "INSERT INTO soak_ddl VALUES (1)",
                               NULL),
                     0);
    srand((unsigned)pgt_env_int("PGW_SOAK_SEED", 1));
    deadline_oneshot = pgt_env_int("PGW_SOAK_DEADLINE_ONESHOT", 2);
    slots_init();
    int fd_before = pgt_open_fds();

    assert_int_equal(uv_loop_init(&loop), 0);
    uv_timer_t waker;
    uv_timer_init(&loop, &waker);
    uv_timer_start(&waker, on_wake, 2, 2);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 2;
    cfg.max_size = POOL_MAX;
    cfg.backoff_min_ms = 20;
    cfg.backoff_max_ms = 500;
    cfg.acquire_timeout_ms = 5000;
    assert_int_equal(pgw_pool_new(&pool, &loop, ci, &cfg), 0);
    bpool = NULL;
    if (bouncer_dir[0]) {
        cfg.conn.stmt_cache_mode = PGW_STMT_UNNAMED; /* transaction pool mode */
        cfg.conn.no_pipelining = 1;                  /* see pick_pool */
        assert_int_equal(pgw_pool_new(&bpool, &loop, bci, &cfg), 0);
    }
    pgw_listener_config_t lc;
    pgw_listener_config_init(&lc);
    lc.backoff_min_ms = 20;
    lc.backoff_max_ms = 500;
    lc.on_event = on_levent;
    lc.on_notification = on_lnote;
    assert_int_equal(pgw_listener_new(&lst, &loop, ci, &lc), 0);
    assert_int_equal(pgw_listener_listen(lst, "soak_ch", NULL, NULL), 0);

    int secs = soak_seconds();
    uint64_t t0 = pgt_now_ns(), span = (uint64_t)secs * 1000000000ull;
    uint64_t warm = t0 + span / 4, half = t0 + span / 2, late = t0 + span / 4 * 3;
    uint64_t end = t0 + span;
    uint64_t next_kill = t0 + 1500000000ull, next_ddl = t0 + 700000000ull;
    uint64_t next_note = t0 + 200000000ull;
    long rss_warm = -1;
    int fd_warm = -1;
    fault_restart_t restart = {
        .script = "pg-cluster.sh", .dir = soak_dir, .at = half, .count = &restarts};
    fault_restart_t brestart = {.script = "pgbouncer.sh",
                                .dir = bouncer_dir,
                                .at = late,
                                .count = &bouncer_restarts,
                                .state = bouncer_dir[0] ? 0 : 2};
    while (pgt_now_ns() < end) {
        while (inflight < INFLIGHT)
            start_one();
        uv_run(&loop, UV_RUN_ONCE);
        uint64_t now = pgt_now_ns();
        if (rss_warm < 0 && now >= warm) {
            rss_warm = rss_kib();
            fd_warm = pgt_open_fds();
        }
        restart_step(&restart, now);
        restart_step(&brestart, now);
        if (now >= next_kill) {
            kill_one();
            next_kill = now + 1500000000ull;
        }
        if (now >= next_ddl) {
            alter_ddl();
            next_ddl = now + 700000000ull;
        }
        if (now >= next_note) {
            notify("n");
            next_note = now + 200000000ull;
        }
    }
    long rss_end = rss_kib();
    int fd_end = pgt_open_fds();
    /* every accepted request ends */
    run_until_ms(pgt_now_ns() + 60000000000ull, all_ended);
    if (inflight) fail_msg("%d operations never ended", inflight);
    restart_finish(&restart);
    restart_finish(&brestart);
    for (int i = 0; i < NSLOTS; i++)
        if (slots[i].busy) fail_msg("a %s request never ended", kind_names[slots[i].kind]);

    /* a notification after the last fault arrives, once */
    uint64_t until = pgt_now_ns() + 30000000000ull;
    while (!pgw_listener_is_ready(lst) && pgt_now_ns() < until)
        uv_run(&loop, UV_RUN_ONCE);
    assert_true(pgw_listener_is_ready(lst));
    notify("final");
    until = pgt_now_ns() + 10000000000ull;
    while (final_got < 1 && pgt_now_ns() < until)
        uv_run(&loop, UV_RUN_ONCE);
    uv_timer_stop(&waker);
    uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(final_got, 1);

    /* nothing left in a transaction; then nothing left at all */
    assert_int_equal(
        admin_int8("SELECT count(*) FROM pg_stat_activity WHERE application_name IN ('" APP
                   "', '" APP_B "') AND state LIKE 'idle in transaction%'"),
        0);
    gaps = pgw_listener_gaps(lst);
    pgw_pool_close(pool);
    if (bpool) pgw_pool_close(bpool);
    assert_int_equal(pgw_listener_close(lst, on_lclosed, NULL), 0);
    uv_close((uv_handle_t *)&waker, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_true(lst_closed);
    assert_int_equal(uv_loop_close(&loop), 0);
    int64_t left = -1;
    until = pgt_now_ns() + 10000000000ull;
    do {
        left =
            admin_int8("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" APP "'");
        if (left) uv_sleep(20);
    } while (left && pgt_now_ns() < until);
    int64_t bleft = 0;
    until = pgt_now_ns() + 10000000000ull;
    while (bouncer_dir[0] && (bleft = bouncer_clients()) != 0 && pgt_now_ns() < until)
        uv_sleep(20);
    int fd_after = pgt_open_fds();
    print_figures((double)(pgt_now_ns() - t0) / 1e9, rss_warm, rss_end, fd_before, fd_warm, fd_end,
                  fd_after);
    assert_int_equal(left, 0);
    assert_int_equal(bleft, 0);
    assert_int_equal(fd_after, fd_before);
    if (!SOAK_ASAN && !RUNNING_ON_VALGRIND && rss_end > rss_warm + 8 * 1024)
        fail_msg("RSS grew from %ld KiB to %ld KiB", rss_warm, rss_end);
    /* the faults leave room for work: a kind that ran 20 times succeeded
     * (a short run under valgrind may not get there) */
    for (int k = 0; k < NKINDS; k++)
        if (k != K_CANCEL && k != K_DEADLINE && n_ok[k] == 0 && n_failed[k] >= 20)
            fail_msg("no %s request succeeded", kind_names[k]);
}

/* ------------------------------------- a cancel, a release, a one-shot */

typedef struct cr {
    int acquired, slept, sleep_status, cancelled, cancel_status, q_done, q_status;
    pgw_conn_t *conn;
    char state[8]; /* a failure's SQLSTATE */
} cr_t;

static void cr_sleep_done(int status, pgw_result_t *res, void *ud)
{
    cr_t *c = ud;
    c->slept = 1;
    c->sleep_status = status;
    snprintf(c->state, sizeof c->state, "%s", sqlstate_of(res));
    pgw_result_free(res);
}

static void cr_cancel_done(pgw_conn_t *conn, int status, void *ud)
{
    (void)conn;
    cr_t *c = ud;
    c->cancelled = 1;
    c->cancel_status = status;
}

static void cr_acquired(pgw_pool_t *p, int status, pgw_conn_t *conn, void *ud)
{
    (void)p;
    cr_t *c = ud;
    assert_int_equal(status, 0);
    c->conn = conn;
    c->acquired = 1;
}

static void cr_q_done(int status, pgw_result_t *res, void *ud)
{
    cr_t *c = ud;
    c->q_done = 1;
    c->q_status = status;
    if (status) snprintf(c->state, sizeof c->state, "%s", sqlstate_of(res));
    pgw_result_free(res);
}

static int cr_flag(const int *f)
{
    uint64_t end = pgt_now_ns() + 20000000000ull;
    while (!*f && pgt_now_ns() < end)
        uv_run(&loop, UV_RUN_ONCE);
    return *f;
}

static void test_cancel_then_release(void **state)
{
    (void)state;
    pgt_conninfo(ci, sizeof ci, NULL);
    assert_int_equal(uv_loop_init(&loop), 0);
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.min_size = 1;
    cfg.max_size = 1;
    assert_int_equal(pgw_pool_new(&pool, &loop, ci, &cfg), 0);
    uv_timer_t waker;
    uv_timer_init(&loop, &waker);
    uv_timer_start(&waker, on_wake, 5, 5);
    int rounds = pgt_env_int("PGW_SOAK_CANCEL_ROUNDS", 100), bad = 0;
    for (int i = 0; i < rounds; i++) {
        cr_t c = {0};
        assert_int_equal(pgw_pool_acquire(pool, 0, 5000, cr_acquired, &c), 0);
        if (!cr_flag(&c.acquired)) fail_msg("round %d: no connection", i);
        pgw_request_t r = PGW_QUERY("SELECT pg_sleep(5)", NULL, 0, cr_sleep_done, &c);
        assert_int_equal(pgw_conn_submit(c.conn, &r), 0);
        uv_timer_t t;
        uv_timer_init(&loop, &t);
        uv_timer_start(&t, on_wake, 20, 0);
        uv_run(&loop, UV_RUN_ONCE);
        uv_close((uv_handle_t *)&t, NULL);
        assert_int_equal(pgw_conn_cancel(c.conn, cr_cancel_done, &c), 0);
        if (!cr_flag(&c.slept)) fail_msg("round %d: the sleep never ended", i);
        int early = !c.cancelled;
        assert_int_equal(pgw_pool_release(pool, c.conn), 0);
        r = PGW_QUERY("SELECT 1", NULL, 0, cr_q_done, &c);
        assert_int_equal(pgw_pool_submit(pool, &r), 0);
        if (!cr_flag(&c.q_done)) fail_msg("round %d: the follow-up never ended", i);
        if (c.q_status != 0 || c.sleep_status != PGW_ESERVER) {
            bad++;
            print_message("round %d: sleep %s, cancel %s (%s the sleep ended), follow-up %s %s\n",
                          i, pgw_err_name(c.sleep_status), pgw_err_name(c.cancel_status),
                          early ? "after" : "before", pgw_err_name(c.q_status), c.state);
        }
    }
    pgw_pool_close(pool);
    uv_close((uv_handle_t *)&waker, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cancel_then_release),
        cmocka_unit_test_setup_teardown(test_soak, soak_setup, soak_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
