/* pgw-bench-suited: suite D (seed 002's TSBS cpu workload) and the threads
 * row, one (library, scenario) pair per process, one JSON object on stdout
 * in the shape of pgw-bench-driver's (samples_ns, cpu_ns_per_op,
 * peak_rss_kb, checksum) plus the scenario's own figures.
 *
 *   pgw-bench-suited prepare --scale S
 *       (re)create cpu (the query table: loaded by the server from a file,
 *       btree on (hostname, time DESC), analyzed) and cpu_load (the load
 *       target, no index); writes the CSV file the server loads.
 *   pgw-bench-suited load  --lib libpgwire-binary|libpgwire-text|libpq-text|server-file
 *   pgw-bench-suited query --lib libpgwire|libpq --scenario q1..q8
 *   pgw-bench-suited threads --lib libpgwire-pool|libpq
 *   (each with --scale S)
 *
 * Suite D's rows: BENCH_D_SCALE (default: the --scale) x 2,000,000 rows of
 * 21 columns (time, 10 tags, 10 metrics), 100 hosts, one row per host every
 * 10 s from 2024-01-01, in time order as TSBS writes them. The rows are
 * generated as the load sends them (the same generator for every client;
 * the server-file floor reads a file written before the timed call).
 *
 * The server must read files the client writes (COPY FROM a file: a
 * superuser, as in the throwaway cluster of bench/run.sh), under
 * BENCH_D_DIR (default /tmp).
 */
#define _GNU_SOURCE
#include <libpq-fe.h>
#include <pgwire/client.h>
#include <pgwire/pool.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define D_HOSTS     100
#define D_INTERVAL  10 /* seconds between a host's points */
#define D_METRICS   10
#define D_BASE_UNIX 1704067200LL /* 2024-01-01 00:00:00 UTC */
#define PG_EPOCH    946684800LL  /* 2000-01-01 00:00:00 UTC */
#define APP_NAME    "pgw_bench_suited"

static const char *const TAG_COLS[] = {
    "hostname", "region",          "datacenter",         "rack", "os", "arch", "team",
    "service",  "service_version", "service_environment"};
static const char *const METRIC_COLS[D_METRICS] = {
    "usage_user", "usage_system",  "usage_idle",  "usage_nice",  "usage_iowait",
    "usage_irq",  "usage_softirq", "usage_steal", "usage_guest", "usage_guest_nice"};

static char failure[512];
static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    if (!failure[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(failure, sizeof failure, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* ---- the data set ---------------------------------------------------------- */

static long d_rows;
static char conninfo[1024];

typedef struct d_row {
    int64_t unix_sec;
    int host;
    int64_t m[D_METRICS]; /* 0..100, whole numbers as TSBS writes them */
} d_row_t;

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void d_row_make(long i, d_row_t *r)
{
    r->host = (int)(i % D_HOSTS);
    r->unix_sec = D_BASE_UNIX + (int64_t)(i / D_HOSTS) * D_INTERVAL;
    uint64_t s = splitmix((uint64_t)i);
    for (int k = 0; k < D_METRICS; k++) {
        s = splitmix(s);
        r->m[k] = (int64_t)(s % 101);
    }
}

/* The tags of a host, fixed per host (TSBS's shape: 10 text tags). */
static char tags[D_HOSTS][10][32];
static size_t tag_len[D_HOSTS][10];

static void d_tags_init(void)
{
    static const char *const regions[] = {"us-east-1",      "us-west-1",      "us-west-2",
                                          "eu-west-1",      "eu-central-1",   "ap-southeast-1",
                                          "ap-southeast-2", "ap-northeast-1", "sa-east-1"};
    static const char *const oses[] = {"Ubuntu16.10", "Ubuntu16.04LTS", "Ubuntu15.10"};
    static const char *const envs[] = {"production", "staging", "test"};
    for (int h = 0; h < D_HOSTS; h++) {
        const char *reg = regions[h % 9];
        snprintf(tags[h][0], 32, "host_%d", h);
        snprintf(tags[h][1], 32, "%s", reg);
        snprintf(tags[h][2], 32, "%s%c", reg, 'a' + h % 3);
        snprintf(tags[h][3], 32, "%d", h % 100);
        snprintf(tags[h][4], 32, "%s", oses[h % 3]);
        snprintf(tags[h][5], 32, "%s", h % 2 ? "x86" : "x64");
        snprintf(tags[h][6], 32, "%s", (const char *[]){"SF", "NYC", "LON", "CHI"}[h % 4]);
        snprintf(tags[h][7], 32, "%d", h % 20);
        snprintf(tags[h][8], 32, "%d", h % 2);
        snprintf(tags[h][9], 32, "%s", envs[h % 3]);
        for (int k = 0; k < 10; k++)
            tag_len[h][k] = strlen(tags[h][k]);
    }
}

/* "YYYY-MM-DD HH:MM:SS+00" (22 bytes) for a Unix time (civil-from-days). */
static size_t fmt_ts(char *dst, int64_t unix_sec)
{
    int64_t days = unix_sec / 86400, sod = unix_sec % 86400;
    int64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    int d = (int)(doy - (153 * mp + 2) / 5 + 1), m = (int)(mp < 10 ? mp + 3 : mp - 9);
    int y = (int)(yoe + era * 400 + (m <= 2));
    return (size_t)snprintf(dst, 32, "%04d-%02d-%02d %02d:%02d:%02d+00", y, m, d, (int)(sod / 3600),
                            (int)(sod / 60 % 60), (int)(sod % 60));
}

/* The CSV line of a row, as the harness formats it for libpq (and for the
 * server's file): floats with "%.17g", as bench/common.c does for libpq's
 * text COPY. */
static size_t d_row_csv(char *dst, const d_row_t *r)
{
    size_t n = fmt_ts(dst, r->unix_sec);
    for (int k = 0; k < 10; k++) {
        dst[n++] = ',';
        memcpy(dst + n, tags[r->host][k], tag_len[r->host][k]);
        n += tag_len[r->host][k];
    }
    for (int k = 0; k < D_METRICS; k++) {
        dst[n++] = ',';
        n += (size_t)snprintf(dst + n, 32, "%.17g", (double)r->m[k]);
    }
    dst[n++] = '\n';
    return n;
}

/* The expected count and sum(usage_user) of a load, from the generator. */
static int64_t d_expected_sum(void)
{
    int64_t sum = 0;
    d_row_t r;
    for (long i = 0; i < d_rows; i++) {
        d_row_make(i, &r);
        sum += r.m[0];
    }
    return sum;
}

static const char *d_dir(void)
{
    const char *d = getenv("BENCH_D_DIR");
    return d && *d ? d : "/tmp";
}

static void d_file_path(char *dst, size_t cap)
{
    snprintf(dst, cap, "%s/pgw-bench-cpu-%ld.csv", d_dir(), d_rows);
}

/* ---- libpq helpers ------------------------------------------------------- */

static PGconn *pq_connect(void)
{
    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) != CONNECTION_OK) {
        fail("libpq connect: %s", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    return c;
}

static int pq_cmd(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok) fail("%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    return ok ? 0 : -1;
}

/* The loaded table holds the generator's rows: count(*) and sum(usage_user). */
static int d_verify(PGconn *c, const char *table)
{
    char sql[128];
    snprintf(sql, sizeof sql, "select count(*), sum(usage_user)::int8 from %s", table);
    PGresult *r = PQexec(c, sql);
    int rc = 0;
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        rc = fail("verify: %s", PQresultErrorMessage(r));
    else if (atol(PQgetvalue(r, 0, 0)) != d_rows ||
             atoll(PQgetvalue(r, 0, 1)) != (long long)d_expected_sum())
        rc = fail("verify %s: %s rows, sum %s; expected %ld rows, sum %lld", table,
                  PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1), d_rows, (long long)d_expected_sum());
    PQclear(r);
    return rc;
}

static int d_create(PGconn *c, const char *table)
{
    char sql[2048];
    size_t n = (size_t)snprintf(
        sql, sizeof sql, "drop table if exists %s; create table %s (time timestamptz not null",
        table, table);
    for (int k = 0; k < 10; k++)
        n += (size_t)snprintf(sql + n, sizeof sql - n, ", %s text", TAG_COLS[k]);
    for (int k = 0; k < D_METRICS; k++)
        n += (size_t)snprintf(sql + n, sizeof sql - n, ", %s double precision", METRIC_COLS[k]);
    snprintf(sql + n, sizeof sql - n, ")");
    return pq_cmd(c, sql);
}

static int d_write_file(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return fail("cannot write %s", path);
    char line[512];
    d_row_t r;
    for (long i = 0; i < d_rows; i++) {
        d_row_make(i, &r);
        fwrite(line, 1, d_row_csv(line, &r), f);
    }
    if (fclose(f) != 0) return fail("cannot write %s", path);
    return 0;
}

/* ---- prepare ------------------------------------------------------------------- */

static int cmd_prepare(void)
{
    char path[512], sql[1024];
    d_file_path(path, sizeof path);
    if (d_write_file(path) != 0) return -1;
    PGconn *c = pq_connect();
    if (!c) return -1;
    snprintf(sql, sizeof sql, "copy cpu from '%s' (format csv)", path);
    int rc = pq_cmd(c, "set client_min_messages = warning");
    if (rc == 0) rc = d_create(c, "cpu");
    if (rc == 0) rc = d_create(c, "cpu_load");
    if (rc == 0) rc = pq_cmd(c, sql);
    if (rc == 0) rc = pq_cmd(c, "create index on cpu (hostname, time desc)");
    if (rc == 0) rc = pq_cmd(c, "vacuum analyze cpu");
    if (rc == 0) rc = d_verify(c, "cpu");
    PQfinish(c);
    return rc;
}

/* ---- load ------------------------------------------------------------------------- */

/* The server's message of a failed request, or "". */
static const char *pgw_errmsg(const pgw_result_t *r)
{
    const char *m = r && pgw_result_error(r) ? pgw_error_field(pgw_result_error(r), 'M') : NULL;
    return m ? m : "";
}

typedef struct pgw_src {
    long next;
    int binary;
} pgw_src_t;

static int pgw_bin_row(pgw_buf_t *out, const d_row_t *r)
{
    int rc = pgw_copy_bin_row_begin(out, 21);
    if (rc == 0) {
        pgw_param_t ts = pgw_timestamptz((r->unix_sec - PG_EPOCH) * 1000000);
        rc = pgw_copy_bin_field(out, &ts);
    }
    for (int k = 0; rc == 0 && k < 10; k++)
        rc = pgw_copy_bin_text(out, tags[r->host][k], tag_len[r->host][k]);
    for (int k = 0; rc == 0 && k < D_METRICS; k++)
        rc = pgw_copy_bin_float8(out, (double)r->m[k]);
    return rc;
}

static int pgw_csv_row(pgw_buf_t *out, const d_row_t *r)
{
    char ts[32];
    int rc = pgw_copy_csv_field(out, ts, fmt_ts(ts, r->unix_sec));
    for (int k = 0; rc == 0 && k < 10; k++)
        rc = pgw_copy_csv_field(out, tags[r->host][k], tag_len[r->host][k]);
    for (int k = 0; rc == 0 && k < D_METRICS; k++)
        rc = pgw_copy_csv_float8(out, (double)r->m[k]);
    if (rc == 0) rc = pgw_copy_csv_row_end(out);
    return rc;
}

static int pgw_source(pgw_buf_t *out, size_t room, void *ud)
{
    pgw_src_t *s = ud;
    size_t limit = out->len + room;
    int rc = 0;
    d_row_t r;
    if (s->next < 0) {
        rc = s->binary ? pgw_copy_bin_begin(out) : 0;
        s->next = 0;
    }
    while (rc == 0 && s->next < d_rows && out->len < limit) {
        d_row_make(s->next++, &r);
        rc = s->binary ? pgw_bin_row(out, &r) : pgw_csv_row(out, &r);
    }
    if (rc != 0) return rc;
    if (s->next < d_rows) return PGW_COPY_MORE;
    if (s->binary && (rc = pgw_copy_bin_end(out)) != 0) return rc;
    return PGW_COPY_END;
}

static int load_pgwire(int binary)
{
    pgw_client_t *c;
    int rc = pgw_client_connect(&c, conninfo, NULL);
    if (rc != 0) return fail("libpgwire connect: %s", pgw_strerror(rc));
    pgw_src_t src = {-1, binary};
    pgw_result_t *r = NULL;
    rc = pgw_client_copy_in(c,
                            binary ? "copy cpu_load from stdin (format binary)"
                                   : "copy cpu_load from stdin (format csv)",
                            pgw_source, &src, &r);
    if (rc != 0)
        fail("libpgwire copy: %s %s", pgw_strerror(rc), pgw_errmsg(r));
    else if (pgw_result_rows_affected(r) != d_rows)
        rc = fail("libpgwire copy: %lld rows", (long long)pgw_result_rows_affected(r));
    pgw_result_free(r);
    pgw_client_close(c);
    return rc ? -1 : 0;
}

static int load_libpq(PGconn *c)
{
    PGresult *r = PQexec(c, "copy cpu_load from stdin (format csv)");
    if (PQresultStatus(r) != PGRES_COPY_IN) {
        fail("libpq copy: %s", PQresultErrorMessage(r));
        PQclear(r);
        return -1;
    }
    PQclear(r);
    enum { CAP = 1 << 16 };
    static char buf[CAP + 512];
    size_t n = 0;
    d_row_t row;
    for (long i = 0; i < d_rows; i++) {
        d_row_make(i, &row);
        n += d_row_csv(buf + n, &row);
        if (n >= CAP) {
            if (PQputCopyData(c, buf, (int)n) != 1) return fail("libpq put: %s", PQerrorMessage(c));
            n = 0;
        }
    }
    if ((n && PQputCopyData(c, buf, (int)n) != 1) || PQputCopyEnd(c, NULL) != 1)
        return fail("libpq put: %s", PQerrorMessage(c));
    r = PQgetResult(c);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK && atol(PQcmdTuples(r)) == d_rows
                 ? 0
                 : fail("libpq copy: %s %s", PQresultErrorMessage(r), PQcmdTuples(r));
    PQclear(r);
    while ((r = PQgetResult(c)))
        PQclear(r);
    return rc;
}

static int load_server(PGconn *c)
{
    char path[512], sql[1024];
    d_file_path(path, sizeof path);
    snprintf(sql, sizeof sql, "copy cpu_load from '%s' (format csv)", path);
    return pq_cmd(c, sql);
}

static void print_json_head(const char *lib, const char *scenario)
{
    printf("{\"lib\":\"%s\",\"scenario\":\"%s\",", lib, scenario);
}

static int print_failed(const char *lib, const char *scenario)
{
    print_json_head(lib, scenario);
    printf("\"status\":\"failed\",\"reason\":\"");
    for (const char *p = failure; *p; p++)
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if ((unsigned char)*p >= ' ')
            putchar(*p);
    printf("\"}\n");
    return 1;
}

static int cmd_load(const char *lib)
{
    PGconn *c = pq_connect();
    if (!c) return print_failed(lib, "d_load");
    char path[512];
    d_file_path(path, sizeof path);
    int server = strcmp(lib, "server-file") == 0;
    FILE *f = server ? fopen(path, "r") : NULL;
    if (server && !f && d_write_file(path) != 0) return print_failed(lib, "d_load");
    if (f) fclose(f);
    if (pq_cmd(c, "truncate cpu_load") != 0 || pq_cmd(c, "checkpoint") != 0)
        return print_failed(lib, "d_load");
    int64_t c0 = cpu_ns(), t0 = now_ns();
    int rc;
    if (strcmp(lib, "libpgwire-binary") == 0)
        rc = load_pgwire(1);
    else if (strcmp(lib, "libpgwire-text") == 0)
        rc = load_pgwire(0);
    else if (strcmp(lib, "libpq-text") == 0)
        rc = load_libpq(c);
    else if (server)
        rc = load_server(c);
    else
        rc = fail("no such library %s", lib);
    int64_t t1 = now_ns(), c1 = cpu_ns();
    if (rc == 0) rc = d_verify(c, "cpu_load");
    PQfinish(c);
    if (rc != 0) return print_failed(lib, "d_load");
    print_json_head(lib, "d_load");
    printf("\"status\":\"ok\",\"rows\":%ld,\"samples_ns\":[%lld],\"rows_per_s\":%.1f,"
           "\"cpu_ns_per_op\":%lld,\"cpu_ns_per_row\":%.2f,\"peak_rss_kb\":%ld}\n",
           d_rows, (long long)(t1 - t0), (double)d_rows * 1e9 / (double)(t1 - t0),
           (long long)(c1 - c0), (double)(c1 - c0) / (double)d_rows, peak_rss_kb());
    return 0;
}

/* ---- queries ---------------------------------------------------------------------- */

/* Seed 002's eight shapes over this data set (its first 12 hours). */
#define D_T0 "timestamptz '2024-01-01 00:00:00+00'"
static const struct {
    const char *id, *sql;
} QUERIES[] = {
    {"q1", "SELECT date_trunc('minute', time) m, max(usage_user) FROM cpu WHERE hostname = "
           "'host_1' AND time >= " D_T0 " AND time < " D_T0 " + interval '1 hour' GROUP BY 1 "
           "ORDER BY 1"},
    {"q2", "SELECT date_trunc('minute', time) m, max(usage_user) FROM cpu WHERE hostname = "
           "'host_1' AND time >= " D_T0 " AND time < " D_T0 " + interval '12 hours' GROUP BY 1 "
           "ORDER BY 1"},
    {"q3", "SELECT date_trunc('minute', time) m, max(usage_user), max(usage_system), "
           "max(usage_idle), max(usage_nice), max(usage_iowait) FROM cpu WHERE hostname = "
           "'host_1' AND time >= " D_T0 " AND time < " D_T0 " + interval '12 hours' GROUP BY 1 "
           "ORDER BY 1"},
    {"q4",
     "SELECT date_trunc('hour', time) h, hostname, avg(usage_user) FROM cpu WHERE time >= " D_T0
     " AND time < " D_T0 " + interval '12 hours' GROUP BY 1, 2 ORDER BY 1, 2"},
    {"q5", "SELECT date_trunc('hour', time) h, hostname, avg(usage_user), avg(usage_system), "
           "avg(usage_idle), avg(usage_nice), avg(usage_iowait), avg(usage_irq), "
           "avg(usage_softirq), avg(usage_steal), avg(usage_guest), avg(usage_guest_nice) FROM "
           "cpu WHERE time >= " D_T0 " AND time < " D_T0 " + interval '12 hours' GROUP BY 1, 2 "
           "ORDER BY 1, 2"},
    {"q6", "SELECT count(*), avg(usage_system) FROM cpu WHERE usage_user > 90.0"},
    {"q7", "SELECT DISTINCT ON (hostname) hostname, time, usage_user FROM cpu ORDER BY "
           "hostname, time DESC"},
    {"q8", "SELECT hostname, max(usage_user) mx FROM cpu GROUP BY 1 ORDER BY mx DESC, hostname "
           "LIMIT 20"},
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

static uint64_t fold_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = mix(h, b[i]);
    return h;
}

static uint64_t fold_f(double d)
{
    return (uint64_t)(int64_t)(d * 1000.0);
}

/* Every value of a libpgwire result decoded into the checksum. */
static int pgw_fold(pgw_result_t *r, uint64_t *sum, long *rows)
{
    size_t nr = pgw_result_nrows(r), nc = pgw_result_ncols(r);
    uint64_t h = 0;
    for (size_t i = 0; i < nr; i++)
        for (size_t j = 0; j < nc; j++) {
            pgw_value_t v;
            int rc = pgw_result_value(r, i, j, &v);
            int64_t x = 0;
            double d = 0;
            pgw_str_t s;
            if (rc == 0 && v.oid == 20)
                rc = pgw_get_int8(&v, &x), h = mix(h, (uint64_t)x);
            else if (rc == 0 && v.oid == 701)
                rc = pgw_get_float8(&v, &d), h = mix(h, fold_f(d));
            else if (rc == 0 && v.oid == 1184)
                rc = pgw_get_timestamptz(&v, &x), h = mix(h, (uint64_t)x);
            else if (rc == 0 && v.oid == 25)
                rc = pgw_get_text(&v, &s), h = fold_bytes(h, s.p, s.len);
            else if (rc == 0)
                rc = fail("libpgwire: column type %u not decoded", v.oid);
            if (rc != 0) return rc < -1 ? fail("libpgwire decode: %s", pgw_strerror(rc)) : -1;
        }
    *sum = h;
    *rows = (long)nr;
    return 0;
}

static int pq_fold(PGresult *r, uint64_t *sum, long *rows)
{
    int nr = PQntuples(r), nc = PQnfields(r);
    uint64_t h = 0;
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < nc; j++) {
            const uint8_t *p = (const uint8_t *)PQgetvalue(r, i, j);
            uint64_t raw = 0;
            Oid t = PQftype(r, j);
            if (t == 20 || t == 701 || t == 1184) {
                if (PQgetlength(r, i, j) != 8)
                    return fail("libpq: value of %d bytes", PQgetlength(r, i, j));
                for (int k = 0; k < 8; k++)
                    raw = raw << 8 | p[k];
            }
            if (t == 20 || t == 1184)
                h = mix(h, raw);
            else if (t == 701) {
                double d;
                memcpy(&d, &raw, 8);
                h = mix(h, fold_f(d));
            } else if (t == 25)
                h = fold_bytes(h, p, (size_t)PQgetlength(r, i, j));
            else
                return fail("libpq: column type %u not decoded", t);
        }
    *sum = h;
    *rows = nr;
    return 0;
}

typedef struct q_state {
    pgw_client_t *pgw;
    PGconn *pq;
    const char *sql;
} q_state_t;

static int q_once(q_state_t *s, uint64_t *sum, long *rows)
{
    if (s->pgw) {
        pgw_result_t *r = NULL;
        int rc = pgw_client_query(s->pgw, s->sql, NULL, 0, &r);
        if (rc != 0)
            fail("libpgwire query: %s", pgw_strerror(rc));
        else
            rc = pgw_fold(r, sum, rows);
        pgw_result_free(r);
        return rc ? -1 : 0;
    }
    PGresult *r = PQexecParams(s->pq, s->sql, 0, NULL, NULL, NULL, NULL, 1);
    int rc = PQresultStatus(r) == PGRES_TUPLES_OK
                 ? pq_fold(r, sum, rows)
                 : fail("libpq query: %s", PQresultErrorMessage(r));
    PQclear(r);
    return rc;
}

static int cmd_query(const char *lib, const char *qid, double scale)
{
    q_state_t s = {0};
    for (size_t i = 0; i < sizeof QUERIES / sizeof QUERIES[0]; i++)
        if (strcmp(QUERIES[i].id, qid) == 0) s.sql = QUERIES[i].sql;
    char scen[16];
    snprintf(scen, sizeof scen, "d_%s", qid);
    if (!s.sql) return fail("no query %s", qid), print_failed(lib, scen);
    /* Serial plans, as seed 002's serial table: two shared cores. */
    const char *serial = "set max_parallel_workers_per_gather = 0";
    if (strcmp(lib, "libpgwire") == 0) {
        int rc = pgw_client_connect(&s.pgw, conninfo, NULL);
        if (rc != 0)
            return fail("libpgwire connect: %s", pgw_strerror(rc)), print_failed(lib, scen);
        if ((rc = pgw_client_exec(s.pgw, serial, NULL)) != 0)
            return fail("libpgwire: %s", pgw_strerror(rc)), print_failed(lib, scen);
    } else if (strcmp(lib, "libpq") == 0) {
        if (!(s.pq = pq_connect()) || pq_cmd(s.pq, serial) != 0) return print_failed(lib, scen);
    } else
        return fail("no such library %s", lib), print_failed(lib, scen);
    int iters = (int)(20 * (scale < 1 ? 1 : scale));
    int64_t *samples = calloc((size_t)iters, sizeof *samples);
    uint64_t sum0 = 0, sum;
    long rows = 0;
    int rc = 0;
    /* Warm-up: 3 runs (the statement cache prepares from the second), or
     * fewer once they pass 3 s; then at least 3 timed runs. */
    int64_t warm = now_ns();
    for (int w = 0; w < 3 && rc == 0 && (w == 0 || now_ns() - warm < 3000000000LL); w++)
        rc = q_once(&s, &sum0, &rows);
    int n = 0;
    int64_t c0 = cpu_ns(), start = now_ns();
    for (; rc == 0 && n < iters; n++) {
        int64_t t0 = now_ns();
        rc = q_once(&s, &sum, &rows);
        samples[n] = now_ns() - t0;
        if (rc == 0 && sum != sum0) rc = fail("checksum changed between runs");
        if (n >= 2 && now_ns() - start > 10000000000LL) {
            n++;
            break;
        }
    }
    int64_t c1 = cpu_ns();
    pgw_client_close(s.pgw);
    PQfinish(s.pq);
    if (rc != 0) {
        free(samples);
        return print_failed(lib, scen);
    }
    print_json_head(lib, scen);
    printf("\"status\":\"ok\",\"rows\":%ld,\"checksum\":\"%016llx\",\"iters\":%d,\"samples_ns\":[",
           rows, (unsigned long long)sum0, n);
    for (int i = 0; i < n; i++)
        printf("%s%lld", i ? "," : "", (long long)samples[i]);
    printf("],\"cpu_ns_per_op\":%lld,\"peak_rss_kb\":%ld}\n", (long long)((c1 - c0) / n),
           peak_rss_kb());
    free(samples);
    return 0;
}

/* ---- threads ------------------------------------------------------------------ */

#define T_THREADS 16
#define T_POOL    4

typedef struct t_worker {
    pthread_t th;
    int id, n, failed;
    pgw_client_pool_t *pool; /* libpgwire: the shared pool */
    PGconn *pq;              /* libpq: its own connection */
    int64_t *samples;
    pthread_barrier_t *start;
} t_worker_t;

static int t_pgw_query(t_worker_t *w, int32_t v)
{
    pgw_param_t p = pgw_int4(v);
    pgw_request_t req = PGW_QUERY("select $1::int4", &p, 1, NULL, NULL);
    pgw_result_t *r = NULL;
    int rc = pgw_client_pool_run(w->pool, &req, &r);
    pgw_value_t val;
    int32_t got = 0;
    if (rc != 0)
        fail("libpgwire pool run: %s", pgw_strerror(rc));
    else if (pgw_result_nrows(r) != 1 || pgw_result_value(r, 0, 0, &val) != 0 ||
             pgw_get_int4(&val, &got) != 0 || got != v)
        rc = fail("libpgwire pool run: wrong answer %d for %d", got, v);
    pgw_result_free(r);
    return rc ? -1 : 0;
}

static int t_pq_query(t_worker_t *w, int32_t v)
{
    uint32_t be = __builtin_bswap32((uint32_t)v);
    const char *vals[1] = {(const char *)&be};
    int lens[1] = {4}, fmts[1] = {1};
    Oid types[1] = {23};
    PGresult *r = PQexecParams(w->pq, "select $1::int4", 1, types, vals, lens, fmts, 1);
    int rc = 0;
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        rc = fail("libpq: %s", PQresultErrorMessage(r));
    else if (PQntuples(r) != 1 || PQgetlength(r, 0, 0) != 4)
        rc = fail("libpq: wrong answer");
    else {
        uint32_t got;
        memcpy(&got, PQgetvalue(r, 0, 0), 4);
        if ((int32_t)__builtin_bswap32(got) != v) rc = fail("libpq: wrong answer");
    }
    PQclear(r);
    return rc;
}

static void *t_main(void *arg)
{
    t_worker_t *w = arg;
    pthread_barrier_wait(w->start);
    for (int i = 0; i < w->n && !w->failed; i++) {
        int32_t v = w->id * 1000000 + i;
        int64_t t0 = now_ns();
        w->failed = (w->pool ? t_pgw_query(w, v) : t_pq_query(w, v)) != 0;
        w->samples[i] = now_ns() - t0;
    }
    return NULL;
}

/* Server backends of this program, sampled while the threads run. */
typedef struct t_monitor {
    PGconn *c;
    volatile int stop;
    int max_backends;
    pthread_t th;
} t_monitor_t;

static void *t_monitor_main(void *arg)
{
    t_monitor_t *m = arg;
    while (!m->stop) {
        PGresult *r = PQexec(m->c, "select count(*) from pg_stat_activity where application_name "
                                   "= '" APP_NAME "' and pid <> pg_backend_pid()");
        if (PQresultStatus(r) == PGRES_TUPLES_OK) {
            int n = atoi(PQgetvalue(r, 0, 0));
            if (n > m->max_backends) m->max_backends = n;
        }
        PQclear(r);
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int cmd_threads(const char *lib, double scale)
{
    const char *scen = "t_threads16";
    int pool = strcmp(lib, "libpgwire-pool") == 0;
    if (!pool && strcmp(lib, "libpq") != 0)
        return fail("no such library %s", lib), print_failed(lib, scen);
    int per = (int)(4000 * scale) < 100 ? 100 : (int)(4000 * scale);
    t_worker_t w[T_THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, T_THREADS + 1);
    pgw_client_pool_t *p = NULL;
    if (pool) {
        pgw_pool_config_t cfg;
        pgw_pool_config_init(&cfg);
        cfg.min_size = cfg.max_size = T_POOL;
        int rc = pgw_client_pool_new(&p, conninfo, &cfg);
        if (rc != 0) return fail("libpgwire pool: %s", pgw_strerror(rc)), print_failed(lib, scen);
    }
    t_monitor_t mon = {0};
    if (!(mon.c = pq_connect())) return print_failed(lib, scen);
    for (int i = 0; i < T_THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        w[i].n = per;
        w[i].pool = p;
        w[i].start = &start;
        w[i].samples = calloc((size_t)per, sizeof(int64_t));
        if (!pool && !(w[i].pq = pq_connect())) return print_failed(lib, scen);
        pthread_create(&w[i].th, NULL, t_main, &w[i]);
    }
    pthread_create(&mon.th, NULL, t_monitor_main, &mon);
    int64_t c0 = cpu_ns(), t0 = now_ns();
    pthread_barrier_wait(&start);
    int failed = 0;
    for (int i = 0; i < T_THREADS; i++) {
        pthread_join(w[i].th, NULL);
        failed |= w[i].failed;
    }
    int64_t t1 = now_ns(), c1 = cpu_ns();
    mon.stop = 1;
    pthread_join(mon.th, NULL);
    PQfinish(mon.c);
    pgw_client_pool_close(p);
    long total = (long)per * T_THREADS;
    if (!failed) {
        print_json_head(lib, scen);
        printf("\"status\":\"ok\",\"threads\":%d,\"queries\":%ld,\"qps\":%.1f,"
               "\"backends\":%d,\"cpu_ns_per_op\":%lld,\"samples_ns\":[",
               T_THREADS, total, (double)total * 1e9 / (double)(t1 - t0), mon.max_backends,
               (long long)((c1 - c0) / total));
        for (int i = 0; i < T_THREADS; i++)
            for (int k = 0; k < per; k++)
                printf("%s%lld", i || k ? "," : "", (long long)w[i].samples[k]);
        printf("],\"wall_ns\":%lld,\"peak_rss_kb\":%ld}\n", (long long)(t1 - t0), peak_rss_kb());
    }
    for (int i = 0; i < T_THREADS; i++) {
        PQfinish(w[i].pq);
        free(w[i].samples);
    }
    pthread_barrier_destroy(&start);
    return failed ? print_failed(lib, scen) : 0;
}

/* ---- main --------------------------------------------------------------------------- */

static void build_conninfo(void)
{
    const char *h = getenv("PGHOST"), *p = getenv("PGPORT"), *u = getenv("PGUSER"),
               *d = getenv("PGDATABASE");
    snprintf(conninfo, sizeof conninfo,
             "host=%s port=%s user=%s dbname=%s sslmode=disable application_name=" APP_NAME,
             h ? h : "/tmp", p ? p : "5432", u ? u : "postgres", d ? d : "postgres");
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "", *lib = "", *scen = "";
    double scale = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--lib") == 0)
            lib = argv[i + 1];
        else if (strcmp(argv[i], "--scenario") == 0)
            scen = argv[i + 1];
        else if (strcmp(argv[i], "--scale") == 0)
            scale = atof(argv[i + 1]);
    }
    const char *ds = getenv("BENCH_D_SCALE");
    double dscale = ds && *ds ? atof(ds) : scale;
    d_rows = (long)(2000000 * dscale) < 1000 ? 1000 : (long)(2000000 * dscale);
    d_tags_init();
    build_conninfo();
    if (strcmp(cmd, "prepare") == 0) {
        if (cmd_prepare() == 0) return 0;
        fprintf(stderr, "pgw-bench-suited prepare: %s\n", failure);
        return 1;
    }
    if (strcmp(cmd, "load") == 0) return cmd_load(lib);
    if (strcmp(cmd, "query") == 0) return cmd_query(lib, scen, scale);
    if (strcmp(cmd, "threads") == 0) return cmd_threads(lib, scale);
    fprintf(stderr, "usage: pgw-bench-suited prepare|load|query|threads --lib L [--scenario qN] "
                    "[--scale S]\n");
    return 2;
}
