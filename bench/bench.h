/* The scenario harness: one (library, scenario) pair per process.
 *
 * driver.c owns main(), the timed loop and the measurement (latency samples,
 * CPU, allocations, socket bytes); each library's file (drv_libpq.c,
 * drv_floor.c, drv_pgwire.c, drv_pgwire_blocking.c) provides one
 * bench_impl_t per scenario it can run. common.c holds what every library
 * shares: the scenario table, the data every scenario sends, and the
 * decoders that make "decode every value" the same work for every library
 * that has no decoder of its own.
 */
#ifndef PGW_BENCH_H
#define PGW_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* Where the server is, from PGHOST/PGPORT/PGUSER/PGDATABASE. */
typedef struct bench_env {
    const char *host;     /* unix socket directory (or a host name) */
    const char *port;     /* port, as text */
    const char *user;     /* role; the bench needs trust auth for the floor */
    const char *db;       /* database holding the data set */
    const char *tcp_host; /* TCP address for Connect (127.0.0.1) */
    const char *password; /* NULL, or the password of user (PgBouncer's auth file) */
    int pgbouncer;        /* 1: host/port/user/db name a PgBouncer in transaction mode */
    int stmt_cache_off;   /* 1: libpgwire connections without the statement cache */
    int prep_by_cache;    /* 1: Prepared Statement Reuse through the cache, no explicit prepare */
    /* connect_gss: the server that accepts GSSAPI (tests/pg/kdc.sh's), by
     * host name (the service principal's) and address, and its role. */
    const char *gss_host, *gss_hostaddr, *gss_port, *gss_user;
    double scale; /* BENCH_SCALE */
} bench_env_t;

/* The sizes a scenario works with, derived from the scale once. */
typedef struct bench_sizes {
    int simple_conc;  /* 100 */
    int fetch_rows;   /* 1000 */
    int ext_conc;     /* 50 */
    int blob_rows;    /* 10 */
    int blob_bytes;   /* 1 MiB */
    int array_rows;   /* 10 */
    int array_elems;  /* 50000 */
    int prep_reuse;   /* 50 */
    int uow_stmts;    /* 20 */
    int copy_rows;    /* 200000 * scale */
    int cursor_rows;  /* 50000 * scale */
    int cursor_batch; /* 500 */
    int pool_conc;    /* 1000 */
    int pool_size;    /* 10 */
    int c_rtt;        /* 100 */
    int ceiling;      /* 10000: executions per batch of the Per-Connection Ceiling */
    double c_scale;   /* suite C row counts multiplier */
} bench_sizes_t;

extern bench_sizes_t bench_sz;

/* One scenario as one library runs it. setup connects and prepares outside
 * the timed loop; op is one timed operation and must verify its own answer
 * (return -1 after bench_fail on a wrong one); *checksum, when the scenario
 * has one, must come out the same on every call and for every library. */
typedef struct bench_impl {
    void *(*setup)(const bench_env_t *env);
    int (*op)(void *state, uint64_t *checksum);
    void (*teardown)(void *state);
    const char *note; /* how this library runs it, for the report */
} bench_impl_t;

/* Suite C runs 17 steps once, in order, each timed on its own. */
typedef struct bench_c_stmt {
    const char *sql;
    int expect_rows; /* -1: a command; otherwise the number of rows returned */
} bench_c_stmt_t;

typedef struct bench_c_test {
    const char *id;   /* "1", "2.1", ... */
    const char *name; /* "Test 1: 1000 INSERTs" */
    bench_c_stmt_t *stmts;
    int nstmts;
    int sync_each; /* 1: autocommit, a Sync after every statement; 0: one Sync */
} bench_c_test_t;

/* A library runs one suite C test: every statement, pipelined, with the Sync
 * policy of the test; verifies every statement's outcome. */
typedef struct bench_c_impl {
    void *(*setup)(const bench_env_t *env);
    int (*run)(void *state, const bench_c_test_t *t);
    void (*teardown)(void *state);
} bench_c_impl_t;

/* Lookup: NULL and *reason set when the library does not run the scenario. */
typedef const bench_impl_t *(*bench_lookup_fn)(const char *scenario, const char **reason);
const bench_impl_t *bench_libpq_lookup(const char *scenario, const char **reason);
const bench_impl_t *bench_floor_lookup(const char *scenario, const char **reason);
const bench_impl_t *bench_pgwire_lookup(const char *scenario, const char **reason);
const bench_impl_t *bench_pgwire_blocking_lookup(const char *scenario, const char **reason);
/* The reference row of the pool scenarios: libpgwire's best single
 * connection, every call of the operation pipelined on it. */
const bench_impl_t *bench_pgwire_single_lookup(const char *scenario, const char **reason);
/* drv_pgwire_pool.c: the pool scenarios through pgw_pool_submit;
 * drv_pgwire_blocking_pool.c: through pgw_client_pool_t from threads. NULL
 * for any other scenario. */
const bench_impl_t *bench_pgwire_pool_lookup(const char *scenario);
const bench_impl_t *bench_pgwire_blocking_pool_lookup(const char *scenario);
const bench_c_impl_t *bench_libpq_c(void);
const bench_c_impl_t *bench_floor_c(void);
const bench_c_impl_t *bench_pgwire_c(const char **reason);
const bench_c_impl_t *bench_pgwire_blocking_c(const char **reason);

/* ---- measurement (interpose.c) ------------------------------------------ */

/* What the process allocated and moved on sockets while counting was on. */
typedef struct bench_counts {
    uint64_t allocs, alloc_bytes; /* malloc & co. calls, bytes asked for */
    uint64_t net_in, net_out;     /* socket bytes read, written */
} bench_counts_t;
void bench_count_start(void); /* the timed loop begins: count from here */
void bench_count_stop(void);  /* ... and stop here (counts are kept) */
bench_counts_t bench_counts(void);

/* Failure reporting: records the first message, returns -1. */
int bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *bench_failure(void);
void *bench_xmalloc(size_t n); /* aborts on exhaustion: setup only */

/* ---- shared data and decoders (common.c) ------------------------------- */

/* The statements every library sends (same text, same parameters). */
#define SQL_SIMPLE_SEQ "select 1"
#define SQL_EXT_SEQ    "select $1::int4"
#define SQL_MIXED                                                                           \
    "select c_int2, c_int4, c_float4, c_float8, c_varchar, c_json, c_jsonb, c_ts, c_tstz, " \
    "c_bytea from bench_mixed order by id limit $1"
#define SQL_SIMPLE_FETCH                                                                    \
    "select c_int2, c_int4, c_float4, c_float8, c_varchar, c_json, c_jsonb, c_ts, c_tstz, " \
    "c_bytea from bench_mixed order by id limit 1000"
#define SQL_BLOB        "select id, b from bench_blob order by id limit $1"
#define SQL_ARRAY       "select id, a from bench_array order by id limit $1"
#define SQL_PREP        "select id, c_int4, c_float8, c_varchar from bench_mixed where id = $1"
#define SQL_CURSOR      "select i::int4, 'row ' || i, i * 0.5::float8 from generate_series(1, %d) i"
#define SQL_B_FMT       "SELECT * FROM benchmark_rows ORDER BY id LIMIT %d"
#define SQL_POOL_SIMPLE "select 1 as one"
#define SQL_POOL_EXT    "select $1::int4 as one"
/* Per-Connection Ceiling: the prepared statement and the checksum of one
 * batch, whose executions return 1..n. */
#define CEILING_STMT   "bench_ceil"
#define CEILING_SUM(n) ((uint64_t)(n) * ((uint64_t)(n) + 1) / 2)

/* The UoW statements: k = 0..19; *nparams 0 or 1 (an int4 as text). */
const char *bench_uow_sql(int k);
int bench_uow_is_read(int k);

/* Bulk load rows: materialised once, formatted inside the timed call. */
typedef struct bench_copy_row {
    int32_t i4;
    int64_t i8;
    double f8;
    char vc[41];
} bench_copy_row_t;
bench_copy_row_t *bench_copy_rows(int n);
/* CSV line for one row into dst (>= 128 bytes); returns its length. */
size_t bench_copy_csv(char *dst, const bench_copy_row_t *r);
/* Binary COPY tuple for one row into dst (>= 64 bytes); returns its length. */
size_t bench_copy_bin(uint8_t *dst, const bench_copy_row_t *r);
extern const uint8_t bench_copy_bin_header[19];
/* After a run's last load (outside the timed loop, over a libpq connection
 * of its own): bench_copy holds exactly bench_copy_rows' rows, by count(*)
 * and a server-side checksum of every value. 0, or -1 after bench_fail. */
int bench_copy_verify(const bench_env_t *env);

/* Text decoders for the libraries with none (libpq, the floor never decodes). */
int64_t bench_parse_i64(const char *s, size_t len, int *ok);
double bench_parse_f64(const char *s, int *ok);
/* "YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM]]" -> microseconds since 2000-01-01 UTC. */
int64_t bench_parse_ts(const char *s, size_t len, int *ok);
/* "\x..." -> bytes into dst (capacity cap); returns length or -1. */
long bench_unhex(const char *s, size_t len, uint8_t *dst, size_t cap);

/* Big-endian readers for binary results. */
static inline uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}
static inline void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Mixed-row checksum: every library folds the decoded values the same way.
 * Floats are folded as integers of a scaled value so that text (strtod) and
 * binary (bit copy) decodes agree. */
static inline uint64_t bench_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
}
static inline uint64_t bench_fold_f(double d)
{
    return (uint64_t)(int64_t)(d * 1000.0);
}

/* Suite C: the 17 tests, built once (sizes scaled by bench_sz.c_scale). */
bench_c_test_t *bench_c_tests(int *ntests);

#endif
