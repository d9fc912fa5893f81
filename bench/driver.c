/* pgw-bench-driver: runs ONE (library, scenario) pair and prints one JSON
 * object on stdout.
 *
 *   pgw-bench-driver --lib libpq|libpgwire|libpgwire-nocache|libpgwire-autoprep|
 *                          libpgwire-blocking|libpgwire-single|floor
 *                    --scenario ID [--scale S] [--list]
 *
 * libpgwire-single is the pool scenarios' reference row: every call of the
 * operation pipelined on one libpgwire connection. libpgwire-nocache is the
 * Extended Query scenarios' reference row: the async driver with the
 * statement cache off (PGW_STMT_CACHE_OFF), as those rows ran before it;
 * libpgwire-autoprep the Prepared Statement Reuse scenarios' one: the same
 * SQL as plain queries, prepared by the statement cache.
 *
 * A scenario whose id ends in "_pgbouncer" is its base scenario run through
 * PgBouncer (transaction mode): the server is PGW_PGBOUNCER_HOST (or
 * BENCH_PGBOUNCER_HOST, its unix socket directory), PGW_PGBOUNCER_PORT,
 * PGW_PGBOUNCER_USER, PGW_PGBOUNCER_DB and PGW_PGBOUNCER_PASSWORD (bench/run.sh
 * starts one). Without them it is reported unsupported, with
 * BENCH_PGBOUNCER_SKIP as the reason when set.
 *
 * "connect_gss" connects over GSS encryption to the server of a Kerberos
 * realm: BENCH_GSS_HOST (the service's host name), BENCH_GSS_HOSTADDR,
 * BENCH_GSS_PORT, BENCH_GSS_USER, with the realm's KRB5_CONFIG and a ticket
 * cache given as BENCH_GSS_KRB5_CONFIG and BENCH_GSS_KRB5CCNAME (set in
 * this process only); bench/run.sh starts one with tests/pg/kdc.sh.
 * Without them it is reported unsupported, BENCH_GSS_SKIP the reason.
 *
 * Measurement, the same for every library because it lives in this process
 * and not in any library (allocations and socket bytes: interpose.c):
 *  - latency: clock_gettime(CLOCK_MONOTONIC) around every timed operation;
 *  - CPU: getrusage(RUSAGE_SELF) user+sys over the timed loop only;
 *  - allocations: malloc/calloc/realloc/posix_memalign/aligned_alloc/memalign
 *    are defined in this executable (so libpq, libpgwire, OpenSSL and libuv
 *    all call them) and forwarded to glibc's __libc_* entry points; they are
 *    counted only while the timed loop runs;
 *  - network bytes: read/recv/recvmsg/readv and write/send/sendmsg/writev
 *    are defined in this executable too and forwarded as raw system calls;
 *    bytes moved on sockets (fstat S_ISSOCK, cached per descriptor) are
 *    summed while the timed loop runs;
 *  - peak RSS: VmHWM at the end (the process's whole life).
 * Exit status: 0 ok (or a scenario the library does not run: status
 * "unsupported"/"nyi"), 1 a failed verification or error.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* ---- the scenario table -------------------------------------------------- */
typedef struct scenario {
    const char *id;
    int iters;   /* timed operations at scale 1 */
    int payload; /* report net in/out */
    int stable;  /* every call returns the same checksum */
} scenario_t;

static const scenario_t scenarios[] = {
    {"connect", 400, 0, 0},
    {"simple_seq", 10000, 0, 1},
    {"simple_conc", 400, 0, 0},
    {"simple_fetch", 600, 0, 1},
    {"ext_seq", 10000, 0, 1},
    {"ext_conc", 2000, 0, 0},
    {"mixed_text", 600, 0, 1},
    {"mixed_binary", 600, 0, 1},
    {"blob_fetch", 120, 1, 1},
    {"array_fetch", 120, 1, 1},
    {"prep_seq", 300, 0, 1},
    {"prep_conc", 2000, 0, 0},
    {"unit_of_work", 2000, 0, 0},
    {"copy_text", 12, 1, 0},
    {"copy_binary", 12, 1, 0},
    {"cursor", 40, 0, 1},
    {"pool_simple", 300, 0, 0},
    {"pool_ext", 300, 0, 0},
    {"pool_simple_pgbouncer", 300, 0, 0},
    {"ceiling", 100, 0, 1},
    {"b_seq_1", 5000, 0, 1},
    {"b_seq_100", 3000, 0, 1},
    {"b_seq_500", 1500, 0, 1},
    {"b_pipe_1", 2000, 0, 1},
    {"b_pipe_100", 800, 0, 1},
    {"b_pipe_500", 300, 0, 1},
    {"c_rtt", 100, 0, 1},
    {"c_speed", 1, 0, 0},
    {"connect_tls", 400, 0, 0},
    {"connect_gss", 400, 0, 0},
    {"blob_fetch_tls", 120, 1, 1},
    {"simple_fetch_buffered", 600, 0, 1},
    {"mixed_text_buffered", 600, 0, 1},
    {"mixed_binary_buffered", 600, 0, 1},
};

static const scenario_t *find_scenario(const char *id)
{
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        if (strcmp(scenarios[i].id, id) == 0) return &scenarios[i];
    return NULL;
}

static void init_sizes(double scale)
{
    bench_sz.simple_conc = 100;
    bench_sz.fetch_rows = 1000;
    bench_sz.ext_conc = 50;
    bench_sz.blob_rows = 10;
    bench_sz.blob_bytes = 1048576;
    bench_sz.array_rows = 10;
    bench_sz.array_elems = 50000;
    bench_sz.prep_reuse = 50;
    bench_sz.uow_stmts = 20;
    bench_sz.copy_rows = (int)(200000 * scale) < 1000 ? 1000 : (int)(200000 * scale);
    bench_sz.cursor_rows = (int)(50000 * scale) < 1000 ? 1000 : (int)(50000 * scale);
    bench_sz.cursor_batch = 500;
    bench_sz.pool_conc = 1000;
    bench_sz.pool_size = 10;
    bench_sz.c_rtt = 100;
    bench_sz.ceiling = 10000;
    bench_sz.c_scale = scale;
}

/* ---- output --------------------------------------------------------------- */
static void json_str(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void emit_head(const char *lib, const char *scn, const char *status)
{
    printf("{\"lib\":");
    json_str(lib);
    printf(",\"scenario\":");
    json_str(scn);
    printf(",\"status\":");
    json_str(status);
}

static int emit_status(const char *lib, const char *scn, const char *status, const char *reason)
{
    emit_head(lib, scn, status);
    printf(",\"reason\":");
    json_str(reason);
    printf("}\n");
    fflush(stdout);
    return strcmp(status, "failed") == 0 ? 1 : 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

/* VmHWM, not ru_maxrss: Linux carries ru_maxrss across execve, so it would
 * report the runner's own peak; VmHWM belongs to this address space. */
static long peak_rss_kb(void)
{
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "VmHWM:", 6) == 0) {
                kb = atol(line + 6);
                break;
            }
        fclose(f);
    }
    if (kb < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kb = ru.ru_maxrss;
    }
    return kb;
}

/* scn without suffix into buf, or scn itself when it does not end in it. */
static const char *strip_suffix(const char *scn, const char *suffix, char *buf, size_t cap)
{
    size_t n = strlen(scn), k = strlen(suffix);
    if (n <= k || n - k >= cap || strcmp(scn + n - k, suffix) != 0) return scn;
    memcpy(buf, scn, n - k);
    buf[n - k] = '\0';
    return buf;
}

static int is_pgbouncer(const char *scn)
{
    char buf[64];
    return strip_suffix(scn, "_pgbouncer", buf, sizeof buf) != scn;
}

/* The buffered variants (simple_fetch_buffered, ...) differ from their base
 * scenario only in how libpgwire hands the rows over; libpq and the floor
 * do the same work for both, so they run the base scenario. The PgBouncer
 * variants are their base scenario for every library, against another
 * server (env->pgbouncer tells the drivers). */
static const bench_impl_t *lookup(const char *lib, const char *scn, const char **reason)
{
    char base[64], base2[64];
    scn = strip_suffix(scn, "_pgbouncer", base2, sizeof base2);
    if (strcmp(lib, "libpq") == 0 || strcmp(lib, "floor") == 0)
        scn = strip_suffix(scn, "_buffered", base, sizeof base);
    if (strcmp(lib, "libpq") == 0) return bench_libpq_lookup(scn, reason);
    if (strcmp(lib, "floor") == 0) return bench_floor_lookup(scn, reason);
    if (strcmp(lib, "libpgwire") == 0 || strcmp(lib, "libpgwire-nocache") == 0 ||
        strcmp(lib, "libpgwire-autoprep") == 0)
        return bench_pgwire_lookup(scn, reason);
    if (strcmp(lib, "libpgwire-blocking") == 0) return bench_pgwire_blocking_lookup(scn, reason);
    if (strcmp(lib, "libpgwire-single") == 0) return bench_pgwire_single_lookup(scn, reason);
    *reason = "unknown library";
    return NULL;
}

/* Point env at the PgBouncer of a *_pgbouncer scenario; 0, or -1 with
 * *reason set when there is none. */
static int use_pgbouncer(bench_env_t *env, const char **reason)
{
    const char *host = getenv("BENCH_PGBOUNCER_HOST");
    if (!host || !*host) host = getenv("PGW_PGBOUNCER_HOST");
    const char *port = getenv("PGW_PGBOUNCER_PORT");
    if (!host || !*host || !port || !*port) {
        *reason = getenv("BENCH_PGBOUNCER_SKIP");
        if (!*reason || !**reason)
            *reason = "no PgBouncer here (PGW_PGBOUNCER_HOST and PGW_PGBOUNCER_PORT unset; "
                      "bash bench/run.sh starts one with tests/pg/pgbouncer.sh)";
        return -1;
    }
    const char *user = getenv("PGW_PGBOUNCER_USER"), *db = getenv("PGW_PGBOUNCER_DB");
    const char *pw = getenv("PGW_PGBOUNCER_PASSWORD");
    env->host = host;
    env->port = port;
    if (user && *user) env->user = user;
    if (db && *db) env->db = db;
    env->password = pw && *pw ? pw : NULL;
    env->pgbouncer = 1;
    return 0;
}

/* Point env at the GSSAPI server of connect_gss; 0, or -1 with *reason
 * set when there is none. */
static int use_gss(bench_env_t *env, const char **reason)
{
    const char *host = getenv("BENCH_GSS_HOST"), *addr = getenv("BENCH_GSS_HOSTADDR");
    const char *port = getenv("BENCH_GSS_PORT"), *user = getenv("BENCH_GSS_USER");
    const char *conf = getenv("BENCH_GSS_KRB5_CONFIG"), *cc = getenv("BENCH_GSS_KRB5CCNAME");
    if (!host || !*host || !addr || !port || !user || !conf || !cc) {
        *reason = getenv("BENCH_GSS_SKIP");
        if (!*reason || !**reason)
            *reason = "no Kerberos realm here (BENCH_GSS_* unset; bash bench/run.sh starts one "
                      "with tests/pg/kdc.sh)";
        return -1;
    }
    setenv("KRB5_CONFIG", conf, 1);
    setenv("KRB5CCNAME", cc, 1);
    env->gss_host = host;
    env->gss_hostaddr = addr;
    env->gss_port = port;
    env->gss_user = user;
    return 0;
}

/* Scenario "c_speed": the 17 suite C tests once each, in order. */
static int run_suite_c(const char *lib, const bench_env_t *env)
{
    const bench_c_impl_t *impl = NULL;
    const char *reason = "unknown library";
    if (strcmp(lib, "libpq") == 0)
        impl = bench_libpq_c();
    else if (strcmp(lib, "floor") == 0)
        impl = bench_floor_c();
    else if (strcmp(lib, "libpgwire") == 0)
        impl = bench_pgwire_c(&reason);
    else if (strcmp(lib, "libpgwire-blocking") == 0)
        impl = bench_pgwire_blocking_c(&reason);
    if (!impl)
        return emit_status(lib, "c_speed", strstr(reason, "not yet") ? "nyi" : "unsupported",
                           reason);
    int ntests;
    bench_c_test_t *tests = bench_c_tests(&ntests);
    double ms[32];
    void *st = impl->setup(env);
    if (!st) return emit_status(lib, "c_speed", "failed", bench_failure());
    bench_count_start();
    for (int i = 0; i < ntests; i++) {
        uint64_t t0 = now_ns();
        if (impl->run(st, &tests[i]) != 0) {
            bench_count_stop();
            char msg[700];
            snprintf(msg, sizeof msg, "%s: %s", tests[i].name, bench_failure());
            return emit_status(lib, "c_speed", "failed", msg);
        }
        ms[i] = (double)(now_ns() - t0) / 1e6;
    }
    bench_count_stop();
    impl->teardown(st);
    emit_head(lib, "c_speed", "ok");
    printf(",\"tests\":[");
    for (int i = 0; i < ntests; i++) {
        printf("%s{\"id\":", i ? "," : "");
        json_str(tests[i].id);
        printf(",\"name\":");
        json_str(tests[i].name);
        printf(",\"ms\":%.4f}", ms[i]);
    }
    printf("],\"peak_rss_kb\":%ld}\n", peak_rss_kb());
    fflush(stdout);
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int run_scenario(const char *lib, const scenario_t *sc, const bench_env_t *env)
{
    const char *reason = "";
    const bench_impl_t *impl = lookup(lib, sc->id, &reason);
    if (!impl)
        return emit_status(lib, sc->id, strstr(reason, "not yet") ? "nyi" : "unsupported", reason);

    int iters = (int)ceil(sc->iters * env->scale);
    if (iters < 3) iters = 3;
    int warm = iters / 10;
    if (warm < 1) warm = 1;
    if (warm > 300) warm = 300;
    double cap_s = 4.0 * (env->scale < 1 ? (env->scale < 0.25 ? 0.25 : env->scale) : env->scale);
    const char *cap_env = getenv("BENCH_TIME_CAP");
    if (cap_env) cap_s = atof(cap_env);

    void *st = impl->setup(env);
    if (!st) return emit_status(lib, sc->id, "failed", bench_failure());

    uint64_t ref = 0, sum = 0;
    for (int i = 0; i < warm; i++) {
        if (impl->op(st, &sum) != 0) return emit_status(lib, sc->id, "failed", bench_failure());
        if (i == 0)
            ref = sum;
        else if (sc->stable && sum != ref)
            return emit_status(lib, sc->id, "failed", "checksum changed between calls");
    }

    uint64_t *samples = bench_xmalloc(sizeof *samples * (size_t)iters);
    int done = 0;
    uint64_t cap_ns = (uint64_t)(cap_s * 1e9);
    uint64_t start = now_ns(), cpu0 = cpu_ns();
    bench_count_start();
    for (; done < iters; done++) {
        uint64_t t0 = now_ns();
        int rc = impl->op(st, &sum);
        uint64_t t1 = now_ns();
        if (rc != 0) {
            bench_count_stop();
            return emit_status(lib, sc->id, "failed", bench_failure());
        }
        if (sc->stable && sum != ref) {
            bench_count_stop();
            return emit_status(lib, sc->id, "failed", "checksum changed between calls");
        }
        samples[done] = t1 - t0;
        if (t1 - start > cap_ns && done + 1 >= 5) {
            done++;
            break;
        }
    }
    bench_count_stop();
    uint64_t cpu = cpu_ns() - cpu0, wall = now_ns() - start;
    bench_counts_t n = bench_counts();
    uint64_t allocs = n.allocs, abytes = n.alloc_bytes, nin = n.net_in, nout = n.net_out;
    impl->teardown(st);
    /* Bulk Load: what the last load left in the table, checked once. */
    if (strncmp(sc->id, "copy_", 5) == 0 && bench_copy_verify(env) != 0)
        return emit_status(lib, sc->id, "failed", bench_failure());

    emit_head(lib, sc->id, "ok");
    printf(",\"ops\":%d,\"planned_ops\":%d,\"warmup\":%d,\"wall_ns\":%llu", done, iters, warm,
           (unsigned long long)wall);
    printf(",\"cpu_ns_per_op\":%.1f", (double)cpu / done);
    printf(",\"allocs_per_op\":%.3f,\"alloc_bytes_per_op\":%.1f", (double)allocs / done,
           (double)abytes / done);
    printf(",\"net_in_per_op\":%.1f,\"net_out_per_op\":%.1f", (double)nin / done,
           (double)nout / done);
    printf(",\"payload\":%s,\"peak_rss_kb\":%ld", sc->payload ? "true" : "false", peak_rss_kb());
    if (sc->stable) printf(",\"checksum\":\"%016llx\"", (unsigned long long)ref);
    printf(",\"note\":");
    json_str(impl->note ? impl->note : "");
    printf(",\"sizes\":{\"copy_rows\":%d,\"cursor_rows\":%d,\"ceiling\":%d}", bench_sz.copy_rows,
           bench_sz.cursor_rows, bench_sz.ceiling);
    printf(",\"samples_ns\":[");
    for (int i = 0; i < done; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)samples[i]);
    printf("]");
    /* Quick quantiles for a human reading the raw output. */
    qsort(samples, (size_t)done, sizeof *samples, cmp_u64);
    printf(",\"p50_ns\":%llu}\n", (unsigned long long)samples[done / 2]);
    fflush(stdout);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: pgw-bench-driver --lib "
                    "libpq|libpgwire|libpgwire-nocache|libpgwire-autoprep|libpgwire-blocking|"
                    "libpgwire-single|floor "
                    "--scenario ID [--scale S] | --list\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *lib = NULL, *scn = NULL;
    double scale = 1.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--lib") == 0 && i + 1 < argc)
            lib = argv[++i];
        else if (strcmp(argv[i], "--scenario") == 0 && i + 1 < argc)
            scn = argv[++i];
        else if (strcmp(argv[i], "--scale") == 0 && i + 1 < argc)
            scale = atof(argv[++i]);
        else if (strcmp(argv[i], "--list") == 0) {
            for (size_t k = 0; k < sizeof scenarios / sizeof scenarios[0]; k++)
                printf("%s\n", scenarios[k].id);
            return 0;
        } else
            usage();
    }
    if (!lib || !scn || scale <= 0) usage();
    init_sizes(scale);

    bench_env_t env = {
        .host = getenv("PGHOST"),
        .port = getenv("PGPORT"),
        .user = getenv("PGUSER"),
        .db = getenv("PGDATABASE"),
        .tcp_host = getenv("PGW_TEST_TCP_HOST"),
        .scale = scale,
    };
    if (!env.host || !env.port || !env.user || !env.db) {
        fprintf(stderr, "pgw-bench-driver: PGHOST, PGPORT, PGUSER and PGDATABASE must be set\n");
        return 2;
    }
    if (!env.tcp_host) env.tcp_host = "127.0.0.1";
    /* The async driver with stmt_cache_mode = PGW_STMT_CACHE_OFF: the
     * Extended Query rows as they ran before the statement cache. */
    if (strcmp(lib, "libpgwire-nocache") == 0) env.stmt_cache_off = 1;
    /* The async driver running Prepared Statement Reuse as plain queries:
     * what the statement cache gives without an explicit prepare. */
    if (strcmp(lib, "libpgwire-autoprep") == 0) env.prep_by_cache = 1;

    if (strcmp(scn, "c_speed") == 0) return run_suite_c(lib, &env);
    const scenario_t *sc = find_scenario(scn);
    if (!sc) {
        fprintf(stderr, "pgw-bench-driver: unknown scenario %s\n", scn);
        return 2;
    }
    const char *why = "";
    if (is_pgbouncer(scn) && use_pgbouncer(&env, &why) != 0)
        return emit_status(lib, scn, "unsupported", why);
    if (strcmp(scn, "connect_gss") == 0 && use_gss(&env, &why) != 0)
        return emit_status(lib, scn, "unsupported", why);
    return run_scenario(lib, sc, &env);
}
