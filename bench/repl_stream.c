/*
 * pgw-bench-repl_stream: 1,000,000 changes of a logical replication
 * stream taken through the blocking form (pgw_client_repl_next) and
 * decoded with the pgoutput decoder, measuring what the client costs: CPU
 * per change (getrusage of this process; the walsender is another),
 * allocations per change once warm (interpose.c counts every malloc & co.
 * of the process from change 10,000 to the end) and the peak RSS (VmHWM).
 *
 * Usage: pgw-bench-repl_stream CONNINFO [NCHANGES]
 * (CONNINFO without the replication option: it is added for the stream;
 * its user needs REPLICATION and CREATE on the database). Builds like
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CONNINFO [NCHANGES]\n", argv[0]);
        return 2;
    }
    long nchanges = argc > 2 ? atol(argv[2]) : 1000000;
    char ci[2048], sql[512];
    pgw_client_t *db = NULL, *rc = NULL;
    snprintf(ci, sizeof ci, "%s replication=database", argv[1]);
    if (pgw_client_connect(&db, argv[1], NULL) != 0 || pgw_client_connect(&rc, ci, NULL) != 0) {
        fprintf(stderr, "connect failed\n");
        return 1;
    }
    if (exec_sql(db, "DROP PUBLICATION IF EXISTS bench_repl_pub; DROP TABLE IF EXISTS bench_repl;"
                     "CREATE TABLE bench_repl (id int8 PRIMARY KEY, v text, n numeric);"
                     "CREATE PUBLICATION bench_repl_pub FOR TABLE bench_repl") != 0)
        return 1;
    snprintf(sql, sizeof sql,
             "CREATE_REPLICATION_SLOT bench_repl_%ld TEMPORARY LOGICAL pgoutput"
             " (SNAPSHOT 'nothing')",
             (long)getpid());
    if (exec_sql(rc, sql) != 0) return 1;
    long per_txn = (nchanges + TXNS - 1) / TXNS;
    for (long t = 0; t < TXNS; t++) {
        snprintf(sql, sizeof sql,
                 "INSERT INTO bench_repl SELECT i, 'row ' || i, i / 7.0"
                 " FROM generate_series(%ld, %ld) i",
                 t * per_txn + 1, (t + 1) * per_txn);
        if (exec_sql(db, sql) != 0) return 1;
    }
    long total = per_txn * TXNS;

    snprintf(sql, sizeof sql,
             "START_REPLICATION SLOT bench_repl_%ld LOGICAL 0/0 (proto_version '1',"
             " publication_names 'bench_repl_pub')",
             (long)getpid());
    pgw_client_repl_t *r = NULL;
    pgw_pgoutput_t *d = NULL;
    if (pgw_client_repl_start(rc, sql, 10000, &r) != 0 || pgw_pgoutput_new(NULL, &d) != 0) return 1;
    long changes = 0, commits = 0, messages = 0, warm_at = -1;
    double cpu0 = cpu_seconds(), cpu_warm = 0;
    int64_t check = 0;
    while (commits < TXNS) {
        pgw_repl_xlog_t x;
        int st = pgw_client_repl_next(r, 120000, &x);
        if (st != 0) {
            fprintf(stderr, "stream: %s\n", pgw_strerror(st));
            return 1;
        }
        pgw_pgoutput_msg_t m;
        if (pgw_pgoutput_decode(d, x.data, x.len, &m) != 0) {
            fprintf(stderr, "decode: %s\n", pgw_pgoutput_error(d));
            return 1;
        }
        messages++;
        if (m.kind == PGW_PGOUTPUT_INSERT) {
            int64_t id = 0;
            (void)pgw_get_int8(&m.u.change.new_tuple.row.values[0], &id);
            check += id;
            if (++changes == WARM_CHANGES) {
                warm_at = changes;
                cpu_warm = cpu_seconds();
                bench_count_start();
            }
        } else if (m.kind == PGW_PGOUTPUT_COMMIT) {
            commits++;
            pgw_client_repl_confirm(r, m.u.commit.end_lsn);
        }
    }
    bench_count_stop();
    double cpu1 = cpu_seconds();
    bench_counts_t c = bench_counts();
    long steady = changes - warm_at;
    printf("changes %ld (expected %ld, id sum %s)\n", changes, total,
           check == (int64_t)total * (total + 1) / 2 ? "ok" : "WRONG");
    printf("messages %ld\n", messages);
    printf("client CPU %.3f s total, %.3f us/change\n", cpu1 - cpu0,
           (cpu1 - cpu0) * 1e6 / (double)changes);
    printf("steady state (%ld changes): %llu allocations (%.4f per change), %llu bytes,"
           " CPU %.3f us/change, %llu bytes read\n",
           steady, (unsigned long long)c.allocs, (double)c.allocs / (double)steady,
           (unsigned long long)c.alloc_bytes, (cpu1 - cpu_warm) * 1e6 / (double)steady,
           (unsigned long long)c.net_in);
    printf("VmHWM %ld kB\n", vm_hwm_kb());
    pgw_client_repl_stop(r);
    pgw_client_repl_free(r);
    pgw_pgoutput_free(d);
    exec_sql(db, "DROP PUBLICATION IF EXISTS bench_repl_pub; DROP TABLE IF EXISTS bench_repl");
    pgw_client_close(rc);
    pgw_client_close(db);
    return changes == total ? 0 : 1;
}
