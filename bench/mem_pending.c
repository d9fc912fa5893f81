/*
 * pgw-bench-mem_pending: client memory per pending request on the
 * connection path (conn.h), and allocations per request.
 *
 *   pgw-bench-mem_pending [--requests N] [--rounds R] [--no-result]
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
 * Sizes of the library's own structures (from src/, not installed) are
 * printed for the breakdown.
 */
#define _GNU_SOURCE
#include "bench.h"
#include "session/session_internal.h"

#include <malloc.h>
#include <pgwire/conn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

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
    int64_t want_sum = 0;
    for (size_t i = 0; i < n; i++)
        want_sum += (int64_t)(i & 0xffff);
    if (!(flags & PGW_Q_NO_RESULT) && r->sum != want_sum) {
        fprintf(stderr, "round %d: wrong answers (sum %lld, want %lld)\n", round, (long long)r->sum,
                (long long)want_sum);
        return -1;
    }
    double dn = (double)n;
    printf("round %d: %zu pending after submit; RSS %ld -> %ld kB: %.1f bytes/pending request; "
           "peak while completing %ld kB, after %ld kB\n",
           round, pending, rss0, rss1, (double)(rss1 - rss0) * 1024.0 / dn, r->rss_peak_kb, rss2);
    printf("round %d: allocations/request %.3f (submit %.3f, completion %.3f), "
           "bytes asked/request %.1f; socket bytes out/request %.1f, in/request %.1f\n",
           round, (double)(c2.allocs - c0.allocs) / dn, (double)(c1.allocs - c0.allocs) / dn,
           (double)(c2.allocs - c1.allocs) / dn, (double)(c2.alloc_bytes - c0.alloc_bytes) / dn,
           (double)(c2.net_out - c0.net_out) / dn, (double)(c2.net_in - c0.net_in) / dn);
    return 0;
}

static void sizes(void)
{
    void *p = malloc(sizeof(pgw__req_t));
    size_t usable = p ? malloc_usable_size(p) : 0;
    free(p);
    /* glibc: the chunk header (8 bytes) plus the usable size. */
    printf("sizeof(pgw__req_t) %zu (malloc chunk %zu), sizeof(struct pgw_result) %zu, "
           "sizeof(pgw_request_t) %zu\n",
           sizeof(pgw__req_t), usable + 8, sizeof(struct pgw_result), sizeof(pgw_request_t));
}

int main(int argc, char **argv)
{
    size_t n = 100000;
    int rounds = 3;
    unsigned flags = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--requests") && i + 1 < argc)
            n = (size_t)strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-result"))
            flags |= PGW_Q_NO_RESULT;
        else {
            fprintf(stderr, "usage: %s [--requests N] [--rounds R] [--no-result]\n", argv[0]);
            return 2;
        }
    }
    if (n == 0 || rounds < 1) return 2;
    sizes();
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
