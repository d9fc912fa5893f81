/* The checks and folds both libpgwire drivers (drv_pgwire.c, asynchronous;
 * drv_pgwire_blocking.c, blocking) apply to a pgw_result_t, in one place so
 * that the two compute the same checksums by construction. Each takes the
 * driver's name ("libpgwire", "libpgwire blocking") for its failure message,
 * returns 0, or -1 after bench_fail, and never frees r. */
#ifndef PGW_BENCH_PGWIRE_CHECKS_H
#define PGW_BENCH_PGWIRE_CHECKS_H

#include "bench.h"

#include <pgwire/conn.h>
#include <pgwire/session.h>
#include <pgwire/types.h>
#include <stddef.h>
#include <stdint.h>

/* The conninfo of env's server at host (env->host, or env->tcp_host for
 * TCP) with sslmode, its password quoted when env has one, into out. 0, or
 * -1 after bench_fail when cap is too small. */
int bench_pgw_conninfo(char *out, size_t cap, const bench_env_t *env, const char *host,
                       const char *sslmode);

/* The conninfo of connect_gss: env's GSSAPI server over GSS encryption
 * (gssencmode=require, sslmode=disable). 0, or -1 after bench_fail. */
int bench_pgw_gss_conninfo(char *out, size_t cap, const bench_env_t *env);

/* pgw_conn_config_init, and behind PgBouncer (env->pgbouncer) unnamed
 * statements only (stmt_cache_mode = PGW_STMT_UNNAMED); for the
 * libpgwire-nocache row (env->stmt_cache_off) no statement cache. */
void bench_pgw_conn_config(pgw_conn_config_t *cfg, const bench_env_t *env);

/* One row, one int4 column equal to want. */
int bench_pgw_check_int4(const char *who, pgw_result_t *r, int64_t want);

/* Row i of SQL_MIXED / SQL_SIMPLE_FETCH (its 10 values), every value decoded
 * and folded into *h. For streamed rows. */
int bench_pgw_fold_mixed_row(const char *who, const pgw_value_t *v, size_t i, uint64_t *h);

/* Streamed rows of SQL_MIXED / SQL_SIMPLE_FETCH: bench_pgw_mixed_row (a
 * pgw_row_cb, ud a zeroed bench_pgw_mixed_t with who set) checks and folds
 * each row into h and counts it. */
typedef struct bench_pgw_mixed {
    const char *who;
    size_t rows;
    uint64_t h;
} bench_pgw_mixed_t;
int bench_pgw_mixed_row(const pgw_row_t *row, void *ud);

/* want rows of SQL_MIXED / SQL_SIMPLE_FETCH, every value decoded and folded
 * into *out (the same fold, row by row). */
int bench_pgw_fold_mixed(const char *who, pgw_result_t *r, size_t want, uint64_t *out);

/* The same through pgw_result_row: each row's values as stored, no copy
 * per cell. */
int bench_pgw_fold_mixed_rows(const char *who, pgw_result_t *r, size_t want, uint64_t *out);

/* bench_sz.blob_rows rows of SQL_BLOB, bytes spot-checked, folded into *out. */
int bench_pgw_fold_blob(const char *who, pgw_result_t *r, uint64_t *out);

/* bench_sz.array_rows rows of SQL_ARRAY, every element checked, folded into
 * *out; arr holds bench_sz.array_elems elements (scratch). */
int bench_pgw_fold_array(const char *who, pgw_result_t *r, int32_t *arr, uint64_t *out);

/* The SQL_PREP row for id want, folded into *h. */
int bench_pgw_fold_prep(const char *who, pgw_result_t *r, int64_t want, uint64_t *h);

/* A Unit of Work statement: a read (want >= 0: one int8, the counter after
 * this unit's writes) or a write (want < 0: one row affected). */
int bench_pgw_check_uow(const char *who, pgw_result_t *r, int64_t want);

/* The five counters of bench_uow (ids 1 to 5) into out. */
int bench_pgw_read_uow_base(const char *who, pgw_result_t *r, int64_t out[5]);

/* limit rows of SQL_B_FMT, each checked, added into *h. */
int bench_pgw_fold_b(const char *who, pgw_result_t *r, int limit, uint64_t *h);

/* Rows of SQL_CURSOR (i int4, 'row ' || i, i * 0.5 float8), streamed or
 * batch by batch: bench_pgw_cursor_row (a pgw_row_cb, ud a zeroed
 * bench_pgw_cursor_t with who set) checks that a row is the next one (i in
 * order from 1, its text and float agreeing with i) and adds
 * i + length(text) + bench_fold_f(float) into h, the sum every library
 * computes; bench_pgw_fold_cursor does the same for every row of a buffered
 * batch (pgw_result_row). */
typedef struct bench_pgw_cursor {
    const char *who;
    int64_t rows;
    uint64_t h;
} bench_pgw_cursor_t;
int bench_pgw_cursor_row(const pgw_row_t *row, void *ud);
int bench_pgw_fold_cursor(pgw_result_t *r, bench_pgw_cursor_t *c);

/* Suite C: want rows when want >= 0 (a command otherwise: not checked). */
int bench_pgw_check_c(const char *who, pgw_result_t *r, int64_t want);

/* Bulk Load: a COPY FROM STDIN source (pgw_copy_source_cb, ud a
 * bench_pgw_copy_t) that formats rows[0..n) through the library's row
 * encoders as the session asks for data: CSV (pgw_copy_csv_*) or binary
 * (pgw_copy_bin_*: header, rows, trailer). bench_pgw_copy_init fills in the
 * rows (the caller frees c->rows), bench_pgw_copy_reset rewinds it before
 * each COPY. */
typedef struct bench_pgw_copy {
    bench_copy_row_t *rows;
    int n;
    int binary;
    int next; /* the next row to format; -1: the binary header first */
} bench_pgw_copy_t;
void bench_pgw_copy_init(bench_pgw_copy_t *c, int binary);
void bench_pgw_copy_reset(bench_pgw_copy_t *c);
/* copy_text_setup and copy_binary_setup of a driver, from its
 * fn(env, binary). */
#define BENCH_PGW_COPY_SETUPS(fn)                          \
    static void *copy_text_setup(const bench_env_t *env)   \
    {                                                      \
        return fn(env, 0);                                 \
    }                                                      \
    static void *copy_binary_setup(const bench_env_t *env) \
    {                                                      \
        return fn(env, 1);                                 \
    }
int bench_pgw_copy_source(pgw_buf_t *out, size_t room, void *ud);
/* The COPY's result: "COPY n" with n == bench_sz.copy_rows. */
int bench_pgw_check_copy(const char *who, pgw_result_t *r);

/* Per-Connection Ceiling: bench_sz.ceiling executions of CEILING_STMT with
 * the values 1..n, each with PGW_Q_NO_RESULT and its row checked as it
 * arrives (on_row, in order) against its parameter; the values are summed.
 * bench_pgw_ceiling_init allocates and fills reqs and params,
 * bench_pgw_ceiling_free frees them; bench_pgw_ceiling_start rewinds the
 * fold before a batch, bench_pgw_ceiling_check checks its outcome. */
typedef struct bench_pgw_ceiling {
    const char *who;
    pgw_request_t *reqs;
    pgw_param_t *params;
    int32_t next; /* the value the next row must hold */
    uint64_t sum;
} bench_pgw_ceiling_t;
void bench_pgw_ceiling_init(bench_pgw_ceiling_t *f, const char *who);
void bench_pgw_ceiling_free(bench_pgw_ceiling_t *f);
void bench_pgw_ceiling_start(bench_pgw_ceiling_t *f);
int bench_pgw_ceiling_check(const bench_pgw_ceiling_t *f, int status, uint64_t *sum);

#endif
