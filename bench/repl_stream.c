/*
 * pgw-bench-repl_stream: 1,000,000 changes of a logical replication
 * stream taken through the blocking form (pgw_client_repl_next) and
 * decoded with the pgoutput decoder, measuring what the client costs: CPU
 * per change (getrusage of this process; the walsender is another),
 * allocations per change once warm (interpose.c counts every malloc & co.
 * of the process from change 10,000 to the end) and the peak RSS (VmHWM).
 *
 * Usage: pgw-bench-repl_stream CONNINFO [NCHANGES]
 *        pgw-bench-repl_stream CONNINFO NCHANGES SLOT PUBLICATION
 * (CONNINFO without the replication option: it is added for the stream;
 * its user needs REPLICATION and CREATE on the database). The first form
 * makes its own table, temporary slot and NCHANGES inserts in 10
 * transactions; the second consumes an existing slot from its start
 * (bench/repl.py, suite R, writes the WAL once for every consumer) until
 * NCHANGES inserts are counted. Both print the human lines, then one JSON
 * line (the last) for the runner: changes, seconds from START_REPLICATION to
 * the last change, changes_per_s, cpu_ns_per_change (user+sys of this
 * process over the same span), allocs_per_change, vmhwm_kb. Builds like
 * pgw-bench-mem_pending: this file, interpose.c, pgwire_static, with the
 * executable's symbols exported (-rdynamic) so that every library's
 * allocations are counted.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "pgwire/client.h"
#include "pgwire/replication.h"

#define TXNS         10
#define WARM_CHANGES 10000

static long vm_hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int exec_sql(pgw_client_t *c, const char *sql)
{
    pgw_result_t *res = NULL;
    int rc = pgw_client_exec(c, sql, &res);
    if (rc != 0)
        fprintf(stderr, "%s: %s\n", sql,
                rc == PGW_ESERVER && pgw_result_error(res) ? pgw_result_error(res)->message
                                                           : pgw_strerror(rc));
    pgw_result_free(res);
    return rc;
}

typedef struct stream_stats {
    long changes, messages, warm_at;
    double wall0, wall1, cpu0, cpu_warm, cpu1;
    int64_t id_sum;
    bench_counts_t counts;
} stream_stats_t;

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Streams the slot from its start until nchanges inserts are decoded (every
 * message through the pgoutput decoder, the first column of each insert
 * through the type registry), confirming each commit. */
static int consume(pgw_client_t *rc, const char *slot, const char *publication, long nchanges,
                   stream_stats_t *s)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "START_REPLICATION SLOT %s LOGICAL 0/0 (proto_version '1', publication_names '%s')",
             slot, publication);
    pgw_client_repl_t *r = NULL;
    pgw_pgoutput_t *d = NULL;
    memset(s, 0, sizeof *s);
    s->warm_at = -1;
    s->wall0 = wall_seconds();
    s->cpu0 = cpu_seconds();
    if (pgw_client_repl_start(rc, sql, 10000, &r) != 0 || pgw_pgoutput_new(NULL, &d) != 0) {
        fprintf(stderr, "%s failed\n", sql);
        return -1;
    }
    int rc_out = 0;
    long warm = nchanges > 2 * WARM_CHANGES ? WARM_CHANGES : nchanges / 2;
    while (s->changes < nchanges) {
        pgw_repl_xlog_t x;
        int st = pgw_client_repl_next(r, 120000, &x);
        if (st != 0) {
            fprintf(stderr, "stream: %s\n", pgw_strerror(st));
            rc_out = -1;
            break;
        }
        pgw_pgoutput_msg_t m;
        if (pgw_pgoutput_decode(d, x.data, x.len, &m) != 0) {
            fprintf(stderr, "decode: %s\n", pgw_pgoutput_error(d));
            rc_out = -1;
            break;
        }
        s->messages++;
        if (m.kind == PGW_PGOUTPUT_INSERT) {
            int64_t id = 0;
            (void)pgw_get_int8(&m.u.change.new_tuple.row.values[0], &id);
            s->id_sum += id;
            if (++s->changes == warm) {
                s->warm_at = s->changes;
                s->cpu_warm = cpu_seconds();
                bench_count_start();
            }
        } else if (m.kind == PGW_PGOUTPUT_COMMIT) {
            pgw_client_repl_confirm(r, m.u.commit.end_lsn);
        }
    }
    bench_count_stop();
    s->wall1 = wall_seconds();
    s->cpu1 = cpu_seconds();
    s->counts = bench_counts();
    pgw_client_repl_stop(r);
    pgw_client_repl_free(r);
    pgw_pgoutput_free(d);
    return rc_out;
}

static void report(const stream_stats_t *s, long total)
{
    long steady = s->changes - s->warm_at;
    int sum_ok = s->id_sum == (int64_t)total * (total + 1) / 2;
    double secs = s->wall1 - s->wall0, cpu = s->cpu1 - s->cpu0;
    printf("changes %ld (expected %ld, id sum %s)\n", s->changes, total, sum_ok ? "ok" : "WRONG");
    printf("messages %ld\n", s->messages);
    printf("client CPU %.3f s total, %.3f us/change\n", cpu, cpu * 1e6 / (double)s->changes);
    printf("steady state (%ld changes): %llu allocations (%.4f per change), %llu bytes,"
           " CPU %.3f us/change, %llu bytes read\n",
           steady, (unsigned long long)s->counts.allocs, (double)s->counts.allocs / (double)steady,
           (unsigned long long)s->counts.alloc_bytes,
           (s->cpu1 - s->cpu_warm) * 1e6 / (double)steady, (unsigned long long)s->counts.net_in);
    printf("VmHWM %ld kB\n", vm_hwm_kb());
    int ok = s->changes == total && sum_ok;
    printf("{\"status\": \"%s\", \"lib\": \"libpgwire\", %s\"changes\": %ld, \"messages\": %ld,"
           " \"seconds\": %.6f, \"changes_per_s\": %.1f, \"cpu_ns_per_change\": %.1f,"
           " \"allocs_per_change\": %.4f, \"vmhwm_kb\": %ld}\n",
           ok ? "ok" : "failed", ok ? "" : "\"reason\": \"wrong change count or id sum\", ",
           s->changes, s->messages, secs, (double)s->changes / secs, cpu * 1e9 / (double)s->changes,
           (double)s->counts.allocs / (double)steady, vm_hwm_kb());
}

/* The first form: a table, a publication, a temporary slot and the inserts
 * of its own. */
static int write_own_changes(pgw_client_t *db, pgw_client_t *rc, const char *slot, long total)
{
    char sql[512];
    if (exec_sql(db, "DROP PUBLICATION IF EXISTS bench_repl_pub; DROP TABLE IF EXISTS bench_repl;"
                     "CREATE TABLE bench_repl (id int8 PRIMARY KEY, v text, n numeric);"
                     "CREATE PUBLICATION bench_repl_pub FOR TABLE bench_repl") != 0)
        return -1;
    snprintf(sql, sizeof sql,
             "CREATE_REPLICATION_SLOT %s TEMPORARY LOGICAL pgoutput (SNAPSHOT 'nothing')", slot);
    if (exec_sql(rc, sql) != 0) return -1;
    long per_txn = total / TXNS;
    for (long t = 0; t < TXNS; t++) {
        snprintf(sql, sizeof sql,
                 "INSERT INTO bench_repl SELECT i, 'row ' || i, i / 7.0"
                 " FROM generate_series(%ld, %ld) i",
                 t * per_txn + 1, (t + 1) * per_txn);
        if (exec_sql(db, sql) != 0) return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3 && argc != 5) {
        fprintf(stderr,
                "usage: %s CONNINFO [NCHANGES]\n       %s CONNINFO NCHANGES SLOT PUBLICATION\n",
                argv[0], argv[0]);
        return 2;
    }
    long nchanges = argc > 2 ? atol(argv[2]) : 1000000;
    int own = argc < 5;
    char ci[2048], slot[64];
    pgw_client_t *db = NULL, *rc = NULL;
    snprintf(ci, sizeof ci, "%s replication=database", argv[1]);
    if ((own && pgw_client_connect(&db, argv[1], NULL) != 0) ||
        pgw_client_connect(&rc, ci, NULL) != 0) {
        fprintf(stderr, "connect failed\n");
        return 1;
    }
    if (own) {
        nchanges = (nchanges + TXNS - 1) / TXNS * TXNS;
        snprintf(slot, sizeof slot, "bench_repl_%ld", (long)getpid());
        if (write_own_changes(db, rc, slot, nchanges) != 0) return 1;
    } else {
        snprintf(slot, sizeof slot, "%s", argv[3]);
    }
    stream_stats_t s;
    int st = consume(rc, slot, own ? "bench_repl_pub" : argv[4], nchanges, &s);
    if (st == 0) report(&s, nchanges);
    if (own)
        exec_sql(db, "DROP PUBLICATION IF EXISTS bench_repl_pub; DROP TABLE IF EXISTS bench_repl");
    pgw_client_close(rc);
    if (db) pgw_client_close(db);
    return st == 0 && s.changes == nchanges ? 0 : 1;
}
