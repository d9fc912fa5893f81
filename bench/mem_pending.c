/*
 * pgw-bench-mem_pending: client memory per pending request on the
 * connection path (conn.h), and allocations per request.
 *
 *   pgw-bench-mem_pending [--requests N] [--rounds R] [--no-result]
 *                         [--lib libpgwire|libpq] [--json]
 *
 * Connects with the environment's PGHOST, PGPORT, PGUSER, PGDATABASE (the
 * throwaway cluster of tests/pg/pg-cluster.sh or bench/run.sh), runs a few
 * warm-up queries (the statement cache prepares the statement), then R
 * rounds of: submit N one-parameter queries `SELECT $1::int4` before the
 * loop runs (so all N are pending: accepted, unanswered), read VmRSS, then
 * run the loop until every one has completed. Per round it prints the RSS
 * growth over the N pending requests divided by N, the allocations
 * (malloc & co., counted by interpose.c for every library alike) per
 * request from the first submit to the last completion, and the bytes
 * written to the socket per request (the encoded output the requests
 * held until written). With --no-result the requests carry
 * PGW_Q_NO_RESULT: no result object, the callback gets the status only.
 * The first round shows what a cold process pays, the later ones the
 * steady state (free lists and buffers warm).
 *
 * --lib libpq measures the same with libpq as the reference: pipeline
 * mode, non-blocking, PQsendQueryPrepared of a statement prepared before
 * the rounds plus PQpipelineSync per request (one Sync each, as the
 * libpgwire requests have), then the results read with PQconsumeInput and
 * PQgetResult. libpq writes as it goes and, when the socket is full, reads
 * the answers into its own buffer: its "pending" memory is its output
 * buffer plus the answers it holds unread, which is what a program
 * pipelining N requests pays with it.
 *
 * Sizes of the library's own structures (from src/, not installed) are
 * printed for the breakdown. --json prints, instead of the lines above,
 * one JSON object (bench/suited.py's suite M reads it).
 */
#define _GNU_SOURCE
#include "bench.h"
#include "session/session_internal.h"

#include <libpq-fe.h>
#include <pgwire/conn.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

/* The figures of one round. */
typedef struct figures {
    size_t pending;
    double rss_per_pending; /* bytes of RSS growth per pending request */
    long rss0_kb, rss1_kb, rss_peak_kb, rss2_kb;
    double allocs, allocs_submit, allocs_complete, alloc_bytes; /* per request */
    double out, in;                                             /* socket bytes per request */
} figures_t;

enum { MAX_ROUNDS = 32 };
static figures_t g_rounds[MAX_ROUNDS];
static int g_json;

typedef struct run {
    uv_loop_t loop;
    pgw_conn_t *conn;
    int connected;
    int closing;
    size_t done, want, failed;
    int64_t sum; /* of the values returned: checks every answer */
    long rss_peak_kb;
} run_t;

/* VmRSS of this process in kB (0 if unreadable). */
static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb;
}

static void on_connect(pgw_conn_t *c, int status, const pgw_error_t *e, void *ud)
{
    run_t *r = ud;
    (void)c;
    r->connected = status == 0 ? 1 : -1;
    if (status != 0)
        fprintf(stderr, "connect: %s%s%s\n", pgw_strerror(status), e ? ": " : "",
                e && e->message ? e->message : "");
}

static void on_result(int status, pgw_result_t *res, void *ud)
{
    run_t *r = ud;
    if (status != 0) r->failed++;
    if (res) {
        int32_t x;
        if (pgw_result_int4(res, 0, 0, &x) == 0) r->sum += x;
        pgw_result_free(res);
    }
    if (++r->done % 4096 == 0) {
        long kb = rss_kb();
        if (kb > r->rss_peak_kb) r->rss_peak_kb = kb;
    }
}

static void on_closed(pgw_conn_t *c, void *ud)
{
    (void)c;
    ((run_t *)ud)->closing = 0;
}

/* The sum of the n values a round sends (request i sends i & 0xffff). */
static int64_t expected_sum(size_t n)
{
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (int64_t)(i & 0xffff);
    return sum;
}

static int submit_all(run_t *r, size_t n, unsigned flags)
{
    for (size_t i = 0; i < n; i++) {
        pgw_param_t p = pgw_int4((int32_t)(i & 0xffff));
        pgw_request_t q = PGW_QUERY("SELECT $1::int4", &p, 1, on_result, r);
        q.flags = flags;
        int rc = pgw_conn_submit(r->conn, &q);
        if (rc != 0) {
            fprintf(stderr, "submit %zu: %s (%s)\n", i, pgw_strerror(rc),
                    pgw_session_refusal(pgw_conn_session(r->conn)));
            return -1;
        }
    }
    r->want += n;
    return 0;
}

static int drain(run_t *r)
{
    while (r->done < r->want && pgw_conn_is_ready(r->conn))
        uv_run(&r->loop, UV_RUN_ONCE);
    return r->done == r->want && r->failed == 0 ? 0 : -1;
}

/* Keeps round `round`'s figures and, without --json, prints them. */
static void record(int round, size_t n, size_t pending, long rss0, long rss1, long peak, long rss2,
                   bench_counts_t c0, bench_counts_t c1, bench_counts_t c2)
{
    double dn = (double)n;
    figures_t f = {
        .pending = pending,
        .rss_per_pending = (double)(rss1 - rss0) * 1024.0 / dn,
        .rss0_kb = rss0,
        .rss1_kb = rss1,
        .rss_peak_kb = peak,
        .rss2_kb = rss2,
        .allocs = (double)(c2.allocs - c0.allocs) / dn,
        .allocs_submit = (double)(c1.allocs - c0.allocs) / dn,
        .allocs_complete = (double)(c2.allocs - c1.allocs) / dn,
        .alloc_bytes = (double)(c2.alloc_bytes - c0.alloc_bytes) / dn,
        .out = (double)(c2.net_out - c0.net_out) / dn,
        .in = (double)(c2.net_in - c0.net_in) / dn,
    };
    if (round >= 1 && round <= MAX_ROUNDS) g_rounds[round - 1] = f;
    if (g_json) return;
    printf("round %d: %zu pending after submit; RSS %ld -> %ld kB: %.1f bytes/pending request; "
           "peak while completing %ld kB, after %ld kB\n",
           round, f.pending, rss0, rss1, f.rss_per_pending, peak, rss2);
    printf("round %d: allocations/request %.3f (submit %.3f, completion %.3f), "
           "bytes asked/request %.1f; socket bytes out/request %.1f, in/request %.1f\n",
           round, f.allocs, f.allocs_submit, f.allocs_complete, f.alloc_bytes, f.out, f.in);
}

/* One round: n pending, then completed. Returns 0 or -1. */
static int round_once(run_t *r, int round, size_t n, unsigned flags)
{
    r->sum = 0;
    r->rss_peak_kb = 0;
    bench_counts_t c0 = bench_counts();
    long rss0 = rss_kb();
    bench_count_start();
    if (submit_all(r, n, flags) < 0) return -1;
    bench_count_stop();
    long rss1 = rss_kb();
    bench_counts_t c1 = bench_counts();
    size_t pending = pgw_session_pending(pgw_conn_session(r->conn));
    bench_count_start();
    int rc = drain(r);
    bench_count_stop();
    bench_counts_t c2 = bench_counts();
    long rss2 = rss_kb();
    if (rc < 0) {
        fprintf(stderr, "round %d: %zu of %zu done, %zu failed\n", round, r->done, r->want,
                r->failed);
        return -1;
    }
    int64_t want_sum = expected_sum(n);
    if (!(flags & PGW_Q_NO_RESULT) && r->sum != want_sum) {
        fprintf(stderr, "round %d: wrong answers (sum %lld, want %lld)\n", round, (long long)r->sum,
                (long long)want_sum);
        return -1;
    }
    record(round, n, pending, rss0, rss1, r->rss_peak_kb, rss2, c0, c1, c2);
    return 0;
}

/* ---- libpq, the reference -------------------------------------------------- */

/* Queues n executions of the prepared "s" with one Sync each. */
static int pq_submit(PGconn *pc, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t v = (uint32_t)(i & 0xffff);
        unsigned char be[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                               (unsigned char)(v >> 8), (unsigned char)v};
        const char *values[1] = {(const char *)be};
        int lengths[1] = {4}, formats[1] = {1};
        if (!PQsendQueryPrepared(pc, "s", 1, values, lengths, formats, 1) || !PQpipelineSync(pc)) {
            fprintf(stderr, "libpq submit %zu: %s", i, PQerrorMessage(pc));
            return -1;
        }
    }
    return 0;
}

/* Reads results until n Syncs have come back; adds the values to *sum. */
static int pq_drain(PGconn *pc, size_t n, int64_t *sum, long *peak_kb)
{
    size_t done = 0, rows = 0;
    while (done < n) {
        int more = PQflush(pc);
        if (more < 0) break;
        struct pollfd p = {.fd = PQsocket(pc), .events = POLLIN | (more ? POLLOUT : 0)};
        if (poll(&p, 1, -1) < 0 || !PQconsumeInput(pc)) break;
        while (done < n && !PQisBusy(pc)) {
            PGresult *res = PQgetResult(pc);
            if (!res) continue; /* the end of one query's results */
            ExecStatusType st = PQresultStatus(res);
            if (st == PGRES_PIPELINE_SYNC) {
                if (++done % 4096 == 0) {
                    long kb = rss_kb();
                    if (kb > *peak_kb) *peak_kb = kb;
                }
            } else if (st == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
                       PQgetlength(res, 0, 0) == 4) {
                *sum += (int32_t)be32((const uint8_t *)PQgetvalue(res, 0, 0));
                rows++;
            } else {
                fprintf(stderr, "libpq result: %s %s", PQresStatus(st), PQresultErrorMessage(res));
                PQclear(res);
                return -1;
            }
            PQclear(res);
        }
    }
    if (done < n) fprintf(stderr, "libpq: %zu of %zu done: %s", done, n, PQerrorMessage(pc));
    return done == n && rows == n ? 0 : -1;
}

static int pq_main(size_t n, int rounds)
{
    PGconn *pc = PQconnectdb("");
    if (PQstatus(pc) != CONNECTION_OK) {
        fprintf(stderr, "libpq connect: %s", PQerrorMessage(pc));
        PQfinish(pc);
        return 1;
    }
    PGresult *res = PQprepare(pc, "s", "SELECT $1::int4", 1, NULL);
    int ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    PQclear(res);
    int64_t sum = 0;
    long peak = 0;
    /* Warm-up, as the libpgwire path has. */
    if (!ok || !PQenterPipelineMode(pc) || PQsetnonblocking(pc, 1) != 0 || pq_submit(pc, 8) < 0 ||
        pq_drain(pc, 8, &sum, &peak) < 0) {
        fprintf(stderr, "libpq setup: %s", PQerrorMessage(pc));
        PQfinish(pc);
        return 1;
    }
    if (!g_json) printf("%zu requests per round, libpq pipeline mode\n", n);
    int status = 0;
    for (int round = 1; status == 0 && round <= rounds; round++) {
        sum = 0;
        peak = 0;
        bench_counts_t c0 = bench_counts();
        long rss0 = rss_kb();
        bench_count_start();
        if (pq_submit(pc, n) < 0) status = 1;
        bench_count_stop();
        long rss1 = rss_kb();
        bench_counts_t c1 = bench_counts();
        bench_count_start();
        if (status == 0 && pq_drain(pc, n, &sum, &peak) < 0) status = 1;
        bench_count_stop();
        bench_counts_t c2 = bench_counts();
        if (status == 0 && sum != expected_sum(n)) {
            fprintf(stderr, "libpq round %d: wrong answers\n", round);
            status = 1;
        }
        /* libpq counts no pending requests: all n were accepted. */
        if (status == 0) record(round, n, n, rss0, rss1, peak, rss_kb(), c0, c1, c2);
    }
    PQfinish(pc);
    return status;
}

/* The library's structure sizes behind the figures. A request's FIFO
 * entry is allocated in blocks of entries (no allocator header per
 * request); a streaming, COPY or simple-query request, or the last of a
 * submit with a deadline, takes an aux block besides (its callbacks, where
 * held output begins, its chain of results), which the requests measured
 * here do not. */
static void sizes(void)
{
    if (g_json)
        printf("\"sizes\": {\"req\": %zu, \"req_aux\": %zu, \"result\": %zu, \"request\": %zu}",
               sizeof(pgw__req_t), sizeof(pgw__req_aux_t), sizeof(struct pgw_result),
               sizeof(pgw_request_t));
    else
        printf("sizeof(pgw__req_t) %zu (pgw__req_aux_t %zu), sizeof(struct pgw_result) %zu, "
               "sizeof(pgw_request_t) %zu\n",
               sizeof(pgw__req_t), sizeof(pgw__req_aux_t), sizeof(struct pgw_result),
               sizeof(pgw_request_t));
}

/* --json: one object with every round's figures. */
static void print_json(const char *lib, int no_result, size_t n, int rounds, int status)
{
    printf("{\"status\": \"%s\", \"lib\": \"%s\", \"no_result\": %d, \"requests\": %zu, ",
           status == 0 ? "ok" : "failed", lib, no_result, n);
    sizes();
    printf(", \"rounds\": [");
    for (int i = 0; status == 0 && i < rounds && i < MAX_ROUNDS; i++) {
        const figures_t *f = &g_rounds[i];
        printf("%s{\"pending\": %zu, \"rss_per_pending\": %.1f, \"rss0_kb\": %ld, \"rss1_kb\": "
               "%ld, \"rss_peak_kb\": %ld, \"rss2_kb\": %ld, \"allocs\": %.3f, \"allocs_submit\": "
               "%.3f, \"allocs_complete\": %.3f, \"alloc_bytes\": %.1f, \"out\": %.1f, \"in\": "
               "%.1f}",
               i ? ", " : "", f->pending, f->rss_per_pending, f->rss0_kb, f->rss1_kb,
               f->rss_peak_kb, f->rss2_kb, f->allocs, f->allocs_submit, f->allocs_complete,
               f->alloc_bytes, f->out, f->in);
    }
    printf("]%s}\n", status == 0 ? "" : ", \"reason\": \"see stderr\"");
}

static int pgw_main(size_t n, int rounds, unsigned flags)
{
    run_t r = {0};
    uv_loop_init(&r.loop);
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.high_water_mark = SIZE_MAX; /* every request of a round is accepted */
    cfg.max_pending = SIZE_MAX;
    int rc = pgw_conn_new(&r.conn, &r.loop, &cfg);
    if (rc == 0) rc = pgw_conn_connect(r.conn, "", on_connect, &r);
    if (rc != 0) {
        fprintf(stderr, "conn: %s\n", pgw_strerror(rc));
        return 1;
    }
    while (!r.connected)
        uv_run(&r.loop, UV_RUN_ONCE);
    int status = r.connected > 0 ? 0 : 1;
    /* Warm-up: the statement cache prepares the statement and learns its
     * description, so the rounds bind it by name. */
    if (status == 0 && (submit_all(&r, 8, flags) < 0 || drain(&r) < 0)) status = 1;
    if (status == 0) {
        r.done = r.want = 0;
        if (!g_json)
            printf("%zu requests per round, %s\n", n,
                   (flags & PGW_Q_NO_RESULT) ? "PGW_Q_NO_RESULT" : "results delivered and freed");
    }
    for (int i = 1; status == 0 && i <= rounds; i++) {
        if (round_once(&r, i, n, flags) < 0) status = 1;
        r.done = r.want = 0;
    }
    r.closing = 1;
    if (pgw_conn_close(r.conn, on_closed, &r) == 0)
        while (r.closing)
            uv_run(&r.loop, UV_RUN_ONCE);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    uv_loop_close(&r.loop);
    return status;
}

int main(int argc, char **argv)
{
    size_t n = 100000;
    int rounds = 3;
    unsigned flags = 0;
    const char *lib = "libpgwire";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--requests") && i + 1 < argc)
            n = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-result"))
            flags |= PGW_Q_NO_RESULT;
        else if (!strcmp(argv[i], "--lib") && i + 1 < argc)
            lib = argv[++i];
        else if (!strcmp(argv[i], "--json"))
            g_json = 1;
        else {
            fprintf(stderr,
                    "usage: %s [--requests N] [--rounds R] [--no-result] "
                    "[--lib libpgwire|libpq] [--json]\n",
                    argv[0]);
            return 2;
        }
    }
    int is_pq = !strcmp(lib, "libpq");
    if (n == 0 || rounds < 1 || rounds > MAX_ROUNDS || (!is_pq && strcmp(lib, "libpgwire")) ||
        (is_pq && flags)) {
        fprintf(stderr, "%s: bad arguments (--no-result is libpgwire's)\n", argv[0]);
        return 2;
    }
    if (!g_json) sizes();
    int status = is_pq ? pq_main(n, rounds) : pgw_main(n, rounds, flags);
    if (g_json) print_json(lib, flags != 0, n, rounds, status);
    return status;
}
