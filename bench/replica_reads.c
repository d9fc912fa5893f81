/*
 * pgw-bench-replica_reads: one-shot requests through a routing pool
 * (pool.h, MULTI-HOST) over a primary alone or a primary and its streaming
 * standbys, measuring what the client sees: operations per second, CPU per
 * operation (getrusage of this process; the servers are other processes),
 * allocations per operation (interpose.c counts every malloc & co. of the
 * process during the timed phase) and which server answered each request.
 *
 * Usage: pgw-bench-replica_reads setup PRIMARY_CONNINFO [STANDBY_CONNINFO...]
 *        pgw-bench-replica_reads MODE POOL_CONNINFO N C
 *
 * setup (re)creates bench_replica (NKEYS keys, v = initial_v(k)) on the
 * primary and returns once every standby named has replayed it, so that a
 * measured run starts from a known table and with no replay in flight.
 *
 * MODE is one of
 *   reads    N read-only requests (PGW_POOL_READ_ONLY) of one key each, C in
 *            flight at once; every answer must be initial_v(k);
 *   ryw-off  N iterations of C independent chains, each on a key of its own:
 *            a write (UPDATE ... RETURNING v, to the primary), then, from
 *            its callback, a read-only request of the same key; a read that
 *            misses the write (a standby behind) is counted as stale;
 *   ryw-on   the same with read_your_writes 2 and ryw_fail 2 (the reads
 *            are flagged PGW_POOL_READ_YOUR_WRITES and wait on a standby
 *            for the write, or go to the primary: pool.h, READ YOUR
 *            WRITES); a stale read is a failure.
 * POOL_CONNINFO names the pool's hosts (the pool gets CONNS_PER_HOST
 * connections per host at most). Each request also returns the port of the
 * server that ran it: the per-server tallies come from the answers and must
 * agree with pgw_pool_hosts. After a warm-up of N/10 operations (at least
 * MIN_WARM: every connection opened, every statement prepared), the timed
 * phase runs N. Prints one JSON object on stdout: status (and reason),
 * seconds, ops_per_s, cpu_us_per_op, allocs_per_op, stale, retried and the
 * servers with the reads and writes each answered and the connections the
 * pool had there. Built like pgw-bench-repl_stream: this file, interpose.c
 * and pgwire_static, with the executable's symbols exported so that every
 * library's allocations are counted.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <uv.h>

#include "pgwire/client.h"
#include "pgwire/conninfo.h"
#include "pgwire/pool.h"

#define NKEYS          10000
#define CONNS_PER_HOST 4
#define MIN_WARM       1000
#define MAX_SERVERS    8
#define MAX_ENTRIES    (2 * MAX_SERVERS) /* pgw_pool_hosts: a read-write and a read-only one */
/* A request that never ran is sent again (PGW_ERETRY); this many in one run
 * means the pool is not converging. */
#define MAX_RETRIES 10000

/* The port in every answer says which server ran it (a unix socket has no
 * inet_server_port()). */
static const char SQL_READ[] =
    "SELECT v, current_setting('port')::int4 FROM bench_replica WHERE k = $1";
static const char SQL_WRITE[] =
    "UPDATE bench_replica SET v = v + 1 WHERE k = $1 RETURNING v, current_setting('port')::int4";

typedef enum { MODE_READS, MODE_RYW_OFF, MODE_RYW_ON } run_mode_t;

static const char *const MODE_NAMES[] = {"reads", "ryw-off", "ryw-on"};

/* What setup stores for key k: k * V_STEP + V_BASE. */
#define V_STEP 1000
#define V_BASE 7

static int64_t initial_v(int32_t k)
{
    return (int64_t)k * V_STEP + V_BASE;
}

/* The i-th key of the reads mode: every key once per NKEYS reads (7919 is
 * prime to NKEYS), neighbours far apart. */
static int32_t key_of(long i)
{
    return (int32_t)((i * 7919L) % NKEYS) + 1;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static const char *why(int status, const pgw_result_t *res)
{
    const pgw_error_t *e = status == PGW_ESERVER && res ? pgw_result_error(res) : NULL;
    return e && e->message ? e->message : pgw_strerror(status);
}

/* ---- setup ------------------------------------------------------------------ */

static int exec_sql(pgw_client_t *c, const char *sql)
{
    pgw_result_t *res = NULL;
    int rc = pgw_client_exec(c, sql, &res);
    if (rc != 0) fprintf(stderr, "%s: %s\n", sql, why(rc, res));
    pgw_result_free(res);
    return rc;
}

/* The table, and the primary's WAL position once it is written. The
 * throwaway cluster runs synchronous_commit = off, where a commit may
 * return before its WAL is written and pg_current_wal_lsn() (the write
 * position) may still stand before it: this session commits synchronously. */
static int fill_primary(pgw_client_t *db, char *lsn, size_t n)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SET synchronous_commit = on; DROP TABLE IF EXISTS bench_replica;"
             "CREATE TABLE bench_replica (k int4 PRIMARY KEY, v int8 NOT NULL);"
             "INSERT INTO bench_replica SELECT k, k * %d + %d FROM generate_series(1, %d) k",
             V_STEP, V_BASE, NKEYS);
    /* Frozen rows (WAL-logged: on the standbys too) and statistics, so that
     * no server's first timed reads look up commit status or plan blind.
     * VACUUM cannot run inside the fill's transaction. */
    if (exec_sql(db, sql) != 0 || exec_sql(db, "VACUUM (FREEZE, ANALYZE) bench_replica") != 0)
        return -1;
    pgw_result_t *res = NULL;
    pgw_str_t s;
    int rc = pgw_client_exec(db, "SELECT pg_current_wal_lsn()::text", &res);
    if (rc != 0 || pgw_result_text(res, 0, 0, &s) != 0 || s.len >= n) {
        fprintf(stderr, "pg_current_wal_lsn(): %s\n", why(rc, res));
        pgw_result_free(res);
        return -1;
    }
    memcpy(lsn, s.p, s.len);
    lsn[s.len] = '\0';
    pgw_result_free(res);
    return 0;
}

/* 1 when the standby has replayed lsn, 0 when not yet, -1 on an error or
 * when the server is not a standby. */
static int replayed(pgw_client_t *c, const char *lsn)
{
    pgw_param_t p = pgw_text(lsn);
    pgw_result_t *res = NULL;
    bool rec = false, done = false;
    int rc = pgw_client_query(
        c, "SELECT pg_is_in_recovery(), coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)",
        &p, 1, &res);
    if (rc != 0 || pgw_result_bool(res, 0, 0, &rec) != 0 ||
        pgw_result_bool(res, 0, 1, &done) != 0) {
        fprintf(stderr, "standby replay position: %s\n", why(rc, res));
        rec = false;
    } else if (!rec) {
        fprintf(stderr, "a standby's conninfo names a server that is not in recovery\n");
    }
    pgw_result_free(res);
    return rec ? done : -1;
}

/* Polls the standby every 10 ms until it has replayed lsn (60 s at most). */
static int wait_replayed(const char *conninfo, const char *lsn)
{
    pgw_client_t *c = NULL;
    int rc = pgw_client_connect(&c, conninfo, NULL);
    if (rc != 0) {
        fprintf(stderr, "connect %s: %s\n", conninfo, pgw_strerror(rc));
        return -1;
    }
    double deadline = wall_seconds() + 60;
    int done = 0;
    while ((done = replayed(c, lsn)) == 0 && wall_seconds() < deadline) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (done == 0) fprintf(stderr, "%s has not replayed %s after 60 s\n", conninfo, lsn);
    pgw_client_close(c);
    return done == 1 ? 0 : -1;
}

static int setup(const char *primary, char **standbys, int nstandbys)
{
    pgw_client_t *db = NULL;
    char lsn[64];
    int rc = pgw_client_connect(&db, primary, NULL);
    if (rc != 0) {
        fprintf(stderr, "connect %s: %s\n", primary, pgw_strerror(rc));
        return -1;
    }
    rc = fill_primary(db, lsn, sizeof lsn);
    pgw_client_close(db);
    for (int i = 0; rc == 0 && i < nstandbys; i++)
        rc = wait_replayed(standbys[i], lsn);
    return rc;
}

/* ---- the measured run ------------------------------------------------------------ */

/* A server as the answers name it, and what it answered in the timed phase. */
typedef struct server {
    int32_t port;
    uint64_t reads, writes;
    uint64_t pool_answered; /* the same by pgw_pool_hosts: completed less retried */
    uint32_t connections;   /* the pool's, up there at the end */
} server_t;

typedef struct run {
    uv_loop_t loop;
    pgw_pool_t *pool;
    run_mode_t mode;
    long goal;        /* operations (reads, or iterations) of the phase */
    long started;     /* of those, begun */
    long finished;    /* of those, answered and checked */
    int timing;       /* 1 in the timed phase: the tallies count */
    uint64_t stale;   /* reads that missed their chain's write (ryw-off, on a standby) */
    uint64_t retried; /* requests sent again after PGW_ERETRY, warm-up included */
    server_t servers[MAX_SERVERS];
    size_t nservers;
    char error[512]; /* the first failure; set, it stops the run */
} run_t;

/* One request in flight at a time: a read, or a write then its read. */
typedef struct chain {
    run_t *r;
    int32_t key;
    int64_t written;    /* ryw: v as the chain's last write returned it */
    int32_t write_port; /* ... and the server that ran it */
} chain_t;

static void fail(run_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(run_t *r, const char *fmt, ...)
{
    if (r->error[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
}

static server_t *server_at(run_t *r, int32_t port)
{
    for (size_t i = 0; i < r->nservers; i++)
        if (r->servers[i].port == port) return &r->servers[i];
    if (r->nservers == MAX_SERVERS) {
        fail(r, "more than %d servers answered", MAX_SERVERS);
        return NULL;
    }
    server_t *s = &r->servers[r->nservers++];
    *s = (server_t){.port = port};
    return s;
}

static void tally(run_t *r, int32_t port, int is_write)
{
    server_t *s = r->timing ? server_at(r, port) : NULL;
    if (!s) return;
    if (is_write)
        s->writes++;
    else
        s->reads++;
}

/* A request's answer: 0 with its one row's v and port, or -1 (failed). */
static int answer(run_t *r, const char *what, int status, const pgw_result_t *res, int64_t *v,
                  int32_t *port)
{
    if (status != 0) {
        fail(r, "%s: %s", what, why(status, res));
        return -1;
    }
    if (pgw_result_nrows(res) != 1 || pgw_result_int8(res, 0, 0, v) != 0 ||
        pgw_result_int4(res, 0, 1, port) != 0) {
        fail(r, "%s: %zu rows, or v and port did not decode", what, pgw_result_nrows(res));
        return -1;
    }
    return 0;
}

enum { ANSWERED, RESEND, STOP };

/* A request that never ran is sent again (pool.h, RETRYABLE FAILURES: a
 * cold pool's read-only connection may reach the primary first and leave
 * it). */
static int classify(run_t *r, const char *what, int status, const pgw_result_t *res, int64_t *v,
                    int32_t *port)
{
    if (status != PGW_ERETRY) return answer(r, what, status, res, v, port) == 0 ? ANSWERED : STOP;
    if (++r->retried <= MAX_RETRIES) return RESEND;
    fail(r, "more than %d requests completed with PGW_ERETRY", MAX_RETRIES);
    return STOP;
}

/* What a completion means for its chain; res is freed. Once the run has
 * failed, the pool's close cancels what is in flight: nothing goes on. */
static int outcome(run_t *r, const char *what, int status, pgw_result_t *res, int64_t *v,
                   int32_t *port)
{
    int o = r->error[0] ? STOP : classify(r, what, status, res, v, port);
    pgw_result_free(res);
    return o;
}

static void start_op(chain_t *ch);

static void op_done(chain_t *ch)
{
    run_t *r = ch->r;
    r->finished++;
    if (r->started < r->goal) start_op(ch);
}

static void send_read(chain_t *ch);
static void send_write(chain_t *ch);

/* reads: v is what setup stored. ryw: v is the chain's write, or older
 * (stale) when a standby answered before replaying it; never newer, as
 * only the chain writes its key. */
static int check_read(chain_t *ch, int64_t v, int32_t port)
{
    run_t *r = ch->r;
    if (r->mode == MODE_READS) {
        if (v == initial_v(ch->key)) return 0;
        fail(r, "key %d: read %lld, expected %lld", ch->key, (long long)v,
             (long long)initial_v(ch->key));
        return -1;
    }
    if (v == ch->written) return 0;
    /* The write's own server has it; with read-your-writes on, every read
     * must see it. */
    if (v > ch->written || port == ch->write_port || r->mode == MODE_RYW_ON) {
        fail(r, "key %d: read %lld on port %d after writing %lld on port %d", ch->key, (long long)v,
             port, (long long)ch->written, ch->write_port);
        return -1;
    }
    if (r->timing) r->stale++;
    return 0;
}

static void on_read(int status, pgw_result_t *res, void *ud)
{
    chain_t *ch = ud;
    int64_t v = 0;
    int32_t port = 0;
    int o = outcome(ch->r, "read", status, res, &v, &port);
    if (o == RESEND) send_read(ch);
    if (o != ANSWERED || check_read(ch, v, port) != 0) return;
    tally(ch->r, port, 0);
    op_done(ch);
}

static void on_write(int status, pgw_result_t *res, void *ud)
{
    chain_t *ch = ud;
    run_t *r = ch->r;
    int64_t v = 0;
    int32_t port = 0;
    int o = outcome(r, "write", status, res, &v, &port);
    if (o == RESEND) send_write(ch);
    if (o != ANSWERED) return;
    if (v <= ch->written) {
        fail(r, "key %d: the write returned %lld after %lld", ch->key, (long long)v,
             (long long)ch->written);
        return;
    }
    ch->written = v;
    ch->write_port = port;
    tally(r, port, 1);
    send_read(ch); /* as soon as the write's callback fired */
}

static void submitted(chain_t *ch, const char *what, int rc)
{
    if (rc != 0) fail(ch->r, "%s refused: %s", what, pgw_strerror(rc));
}

static void send_read(chain_t *ch)
{
    run_t *r = ch->r;
    unsigned flags = PGW_POOL_READ_ONLY | (r->mode == MODE_RYW_ON ? PGW_POOL_READ_YOUR_WRITES : 0);
    pgw_param_t p = pgw_int4(ch->key);
    pgw_request_t q = PGW_QUERY(SQL_READ, &p, 1, on_read, ch);
    submitted(ch, "read", pgw_pool_submit_flags(r->pool, &q, flags));
}

static void send_write(chain_t *ch)
{
    pgw_param_t p = pgw_int4(ch->key);
    pgw_request_t q = PGW_QUERY(SQL_WRITE, &p, 1, on_write, ch);
    submitted(ch, "write", pgw_pool_submit(ch->r->pool, &q));
}

static void start_op(chain_t *ch)
{
    run_t *r = ch->r;
    if (r->mode == MODE_READS) {
        ch->key = key_of(r->started++);
        send_read(ch);
    } else {
        r->started++;
        send_write(ch);
    }
}

/* goal operations over c chains; 0 once every one is answered and checked. */
static int run_phase(run_t *r, chain_t *chains, int c, long goal)
{
    r->goal = goal;
    r->started = r->finished = 0;
    for (int i = 0; i < c && r->started < goal && !r->error[0]; i++)
        start_op(&chains[i]);
    while (r->finished < goal && !r->error[0])
        uv_run(&r->loop, UV_RUN_ONCE);
    return r->error[0] ? -1 : 0;
}

/* A routing pool over conninfo's hosts, CONNS_PER_HOST connections each. */
static int open_pool(run_t *r, const char *conninfo)
{
    pgw_conninfo_t *ci = NULL;
    char err[256] = "";
    if (pgw_conninfo_parse(&ci, conninfo, NULL, err, sizeof err) != 0) {
        fail(r, "conninfo: %s", err);
        return -1;
    }
    pgw_pool_config_t cfg;
    pgw_pool_config_init(&cfg);
    cfg.route = 1;
    cfg.max_size = (uint32_t)(CONNS_PER_HOST * pgw_conninfo_nhosts(ci));
    pgw_conninfo_free(ci);
    if (r->mode == MODE_RYW_ON) {
        cfg.read_your_writes = 2;
        cfg.ryw_fail = 2;
    }
    int rc = pgw_pool_new(&r->pool, &r->loop, conninfo, &cfg);
    if (rc != 0) fail(r, "pgw_pool_new: %s", pgw_strerror(rc));
    return rc;
}

typedef struct host_snap {
    pgw_pool_host_stats_t e[MAX_ENTRIES];
    size_t n;
} host_snap_t;

static int snap_hosts(run_t *r, host_snap_t *s)
{
    s->n = pgw_pool_hosts(r->pool, s->e, MAX_ENTRIES);
    if (s->n <= MAX_ENTRIES) return 0;
    fail(r, "the pool reached %zu server entries", s->n);
    return -1;
}

/* What the pool counted per server over the timed phase (entries keep
 * their place for the pool's life, new ones come last) must be what the
 * answers said. */
static void check_hosts(run_t *r, const host_snap_t *before, const host_snap_t *after)
{
    for (size_t i = 0; i < after->n; i++) {
        const pgw_pool_host_stats_t *e = &after->e[i];
        server_t *s = server_at(r, (int32_t)atoi(e->port));
        if (!s) return;
        uint64_t answered = e->completed - e->retried;
        if (i < before->n) answered -= before->e[i].completed - before->e[i].retried;
        s->pool_answered += answered;
        s->connections += e->open;
    }
    for (size_t i = 0; i < r->nservers; i++) {
        const server_t *s = &r->servers[i];
        if (s->pool_answered != s->reads + s->writes)
            fail(r, "port %d: pgw_pool_hosts counts %llu answers, the answers %llu", s->port,
                 (unsigned long long)s->pool_answered, (unsigned long long)(s->reads + s->writes));
    }
}

typedef struct timed {
    double seconds, cpu;
    bench_counts_t counts;
    uint64_t retried; /* requests sent again in the timed phase */
} timed_t;

static int timed_phase(run_t *r, chain_t *chains, int c, long n, timed_t *t)
{
    host_snap_t before, after;
    if (snap_hosts(r, &before) != 0) return -1;
    r->timing = 1;
    uint64_t retried0 = r->retried;
    double wall0 = wall_seconds(), cpu0 = cpu_seconds();
    bench_count_start();
    int rc = run_phase(r, chains, c, n);
    bench_count_stop();
    t->seconds = wall_seconds() - wall0;
    t->cpu = cpu_seconds() - cpu0;
    t->counts = bench_counts();
    t->retried = r->retried - retried0;
    r->timing = 0;
    if (rc != 0 || snap_hosts(r, &after) != 0) return -1;
    check_hosts(r, &before, &after);
    return r->error[0] ? -1 : 0;
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

static void report(const run_t *r, long n, int c, const timed_t *t)
{
    printf("{\"mode\": \"%s\", \"ops\": %ld, \"concurrency\": %d, ", MODE_NAMES[r->mode], n, c);
    if (r->error[0]) {
        printf("\"status\": \"failed\", \"reason\": ");
        json_string(r->error);
        printf("}\n");
        return;
    }
    double ops = (double)n;
    printf("\"status\": \"ok\", \"seconds\": %.6f, \"ops_per_s\": %.1f, \"cpu_us_per_op\": %.3f, "
           "\"allocs_per_op\": %.4f, \"stale\": %llu, \"retried\": %llu, \"servers\": [",
           t->seconds, ops / t->seconds, t->cpu * 1e6 / ops, (double)t->counts.allocs / ops,
           (unsigned long long)r->stale, (unsigned long long)t->retried);
    for (size_t i = 0; i < r->nservers; i++) {
        const server_t *s = &r->servers[i];
        printf("%s{\"port\": %d, \"reads\": %llu, \"writes\": %llu, \"connections\": %u}",
               i ? ", " : "", s->port, (unsigned long long)s->reads, (unsigned long long)s->writes,
               s->connections);
    }
    printf("]}\n");
}

static int measure(run_mode_t mode, const char *conninfo, long n, int c)
{
    run_t r;
    memset(&r, 0, sizeof r);
    r.mode = mode;
    chain_t *chains = calloc((size_t)c, sizeof *chains);
    timed_t t = {0};
    if (!chains || uv_loop_init(&r.loop) != 0) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int i = 0; i < c; i++)
        chains[i] = (chain_t){.r = &r, .key = i + 1};
    if (open_pool(&r, conninfo) == 0) {
        long warm = n / 10 > MIN_WARM ? n / 10 : MIN_WARM;
        if (run_phase(&r, chains, c, warm) == 0) timed_phase(&r, chains, c, n, &t);
        pgw_pool_close(r.pool);
    }
    uv_run(&r.loop, UV_RUN_DEFAULT); /* the pool's close: callbacks see r.error or ECANCELED */
    uv_loop_close(&r.loop);
    free(chains);
    report(&r, n, c, &t);
    return r.error[0] ? 1 : 0;
}

static int parse_mode(const char *s, run_mode_t *out)
{
    for (int i = 0; i < (int)(sizeof MODE_NAMES / sizeof MODE_NAMES[0]); i++)
        if (strcmp(s, MODE_NAMES[i]) == 0) {
            *out = (run_mode_t)i;
            return 0;
        }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "setup") == 0)
        return setup(argv[2], argv + 3, argc - 3) == 0 ? 0 : 1;
    run_mode_t mode;
    long n = argc == 5 ? atol(argv[3]) : 0;
    int c = argc == 5 ? atoi(argv[4]) : 0;
    if (argc != 5 || parse_mode(argv[1], &mode) != 0 || n < 1 || c < 1 || c > NKEYS) {
        fprintf(stderr,
                "usage: %s setup PRIMARY_CONNINFO [STANDBY_CONNINFO...]\n"
                "       %s reads|ryw-off|ryw-on POOL_CONNINFO N C (C at most %d)\n",
                argv[0], argv[0], NKEYS);
        return 2;
    }
    return measure(mode, argv[2], n, c);
}
