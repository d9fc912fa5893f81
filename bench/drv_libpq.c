/* libpq's drivers: each scenario through libpq's fastest convention.
 *  - one-at-a-time calls: PQexec / PQexecParams / PQexecPrepared;
 *  - calls in flight together: pipeline mode, non-blocking flush, one
 *    PQpipelineSync per call (per unit for Unit of Work and suite C's
 *    transactions);
 *  - binary results wherever the scenario allows them, decoded here (libpq
 *    hands back bytes; the caller does the decoding, so this file does it);
 *  - COPY through PQputCopyData with 256 KiB buffers;
 *  - streaming: single-row mode or a DECLARE/FETCH cursor, whichever is faster
 *    in a calibration before the timed loop (the note says which). */
#define _GNU_SOURCE
#include "bench.h"

#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lpq {
    PGconn *c;
    const bench_env_t *env;
    int counter;
    uint8_t *scratch; /* text bytea decode, array decode */
    size_t scratch_cap;
    bench_copy_row_t *rows;
    char *copybuf;
    int64_t uow_expect[5];
    int cursor_variant; /* 0 single-row, 1 DECLARE/FETCH */
    char sql[256];
    char note[256];
    int limit;
} lpq_t;

static const int BINARY = 1, TEXT = 0;
static lpq_t *new_state_tls(const bench_env_t *env, int tls);
static lpq_t *new_state(const bench_env_t *env)
{
    return new_state_tls(env, 0);
}

/* The unix socket, or (tls) TCP with sslmode=require. */
static PGconn *connect_to(const bench_env_t *env, int tls)
{
    const char *k[] = {"host", "port", "user", "dbname", "sslmode", "gssencmode", "password", NULL};
    const char *v[] = {tls ? env->tcp_host : env->host, env->port, env->user,     env->db,
                       tls ? "require" : "disable",     "disable", env->password, NULL};
    if (!env->password) k[6] = NULL; /* libpq's own lookup (PGPASSWORD, .pgpass) */
    PGconn *c = PQconnectdbParams(k, v, 0);
    if (PQstatus(c) != CONNECTION_OK || PQsslInUse(c) != tls) {
        bench_fail("libpq connect: %s", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    return c;
}

static lpq_t *new_state_tls(const bench_env_t *env, int tls)
{
    lpq_t *s = calloc(1, sizeof *s);
    s->env = env;
    s->c = connect_to(env, tls);
    if (!s->c) {
        free(s);
        return NULL;
    }
    s->scratch_cap = 2u << 20;
    s->scratch = bench_xmalloc(s->scratch_cap);
    return s;
}

static void teardown(void *st)
{
    lpq_t *s = st;
    if (s->c) PQfinish(s->c);
    free(s->scratch);
    free(s->rows);
    free(s->copybuf);
    free(s);
}

static int check_res(PGresult *r, ExecStatusType want, const char *what)
{
    if (!r) return bench_fail("%s: no result", what);
    if (PQresultStatus(r) != want) {
        bench_fail("%s: %s %s", what, PQresStatus(PQresultStatus(r)), PQresultErrorMessage(r));
        PQclear(r);
        return -1;
    }
    return 0;
}

static int check_rows(PGresult *r, int n, const char *what)
{
    if (PQntuples(r) != n) {
        bench_fail("%s: %d rows, expected %d", what, PQntuples(r), n);
        PQclear(r);
        return -1;
    }
    return 0;
}

/* Non-blocking flush: write what libpq holds, reading meanwhile so that a
 * server blocked on its own output cannot deadlock us. */
static int flush_all(PGconn *c)
{
    for (;;) {
        int r = PQflush(c);
        if (r == 0) return 0;
        if (r < 0) return bench_fail("PQflush: %s", PQerrorMessage(c));
        struct pollfd p = {.fd = PQsocket(c), .events = POLLIN | POLLOUT};
        poll(&p, 1, -1);
        if ((p.revents & POLLIN) && !PQconsumeInput(c))
            return bench_fail("PQconsumeInput: %s", PQerrorMessage(c));
    }
}

static int enter_pipeline(PGconn *c)
{
    if (PQsetnonblocking(c, 1) != 0 || PQenterPipelineMode(c) != 1)
        return bench_fail("pipeline mode: %s", PQerrorMessage(c));
    return 0;
}

/* In pipeline mode every query's results end with a NULL; every Sync with a
 * PGRES_PIPELINE_SYNC result. */
static int expect_null(PGconn *c)
{
    PGresult *r = PQgetResult(c);
    if (r) {
        PQclear(r);
        return bench_fail("pipeline: more results than expected");
    }
    return 0;
}

static int expect_sync(PGconn *c)
{
    PGresult *r = PQgetResult(c);
    if (check_res(r, PGRES_PIPELINE_SYNC, "pipeline sync") != 0) return -1;
    PQclear(r);
    return 0;
}

/* ---- Connect --------------------------------------------------------------- */
typedef struct conn_state {
    const char *k[8], *v[8];
    int tls;
    int gss;
} conn_state_t;

static void *connect_setup_mode(const bench_env_t *env, const char *sslmode)
{
    conn_state_t *s = calloc(1, sizeof *s);
    const char *k[] = {"host", "port", "user", "dbname", "sslmode", "gssencmode", NULL};
    const char *v[] = {env->tcp_host, env->port, env->user, env->db, sslmode, "disable", NULL};
    memcpy(s->k, k, sizeof k);
    memcpy(s->v, v, sizeof v);
    s->tls = strcmp(sslmode, "disable") != 0;
    return s;
}

static void *connect_setup(const bench_env_t *env)
{
    return connect_setup_mode(env, "disable");
}

static void *connect_tls_setup(const bench_env_t *env)
{
    return connect_setup_mode(env, "require");
}

/* GSS encryption to the Kerberos realm's server (gssencmode=require). */
static void *connect_gss_setup(const bench_env_t *env)
{
    conn_state_t *s = calloc(1, sizeof *s);
    const char *k[] = {"host", "hostaddr", "port", "user", "dbname", "sslmode", "gssencmode", NULL};
    const char *v[] = {env->gss_host, env->gss_hostaddr, env->gss_port, env->gss_user,
                       "postgres",    "disable",         "require",     NULL};
    memcpy(s->k, k, sizeof k);
    memcpy(s->v, v, sizeof v);
    s->gss = 1;
    return s;
}

static int connect_op(void *st, uint64_t *sum)
{
    conn_state_t *s = st;
    PGconn *c = PQconnectdbParams(s->k, s->v, 0);
    if (PQstatus(c) != CONNECTION_OK || PQsslInUse(c) != s->tls || PQgssEncInUse(c) != s->gss) {
        bench_fail("connect: %s", PQerrorMessage(c));
        PQfinish(c);
        return -1;
    }
    PQfinish(c);
    *sum = 0;
    return 0;
}

static void connect_teardown(void *st)
{
    free(st);
}

/* ---- Simple Query ------------------------------------------------------------ */
static void *plain_setup(const bench_env_t *env)
{
    return new_state(env);
}

/* TCP with sslmode=require, for the TLS rows. */
static void *tls_setup(const bench_env_t *env)
{
    return new_state_tls(env, 1);
}

static int simple_seq_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    PGresult *r = PQexec(s->c, SQL_SIMPLE_SEQ);
    if (check_res(r, PGRES_TUPLES_OK, "select 1") != 0) return -1;
    int ok = PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "1") == 0;
    PQclear(r);
    *sum = 1;
    return ok ? 0 : bench_fail("select 1: wrong answer");
}

/* Simple Query cannot be pipelined in libpq: each call waits for the last. */
static int simple_conc_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    char sql[32];
    for (int i = 0; i < bench_sz.simple_conc; i++) {
        int want = ++s->counter;
        snprintf(sql, sizeof sql, "select %d", want);
        PGresult *r = PQexec(s->c, sql);
        if (check_res(r, PGRES_TUPLES_OK, sql) != 0) return -1;
        if (check_rows(r, 1, sql) != 0) return -1;
        int ok = 1;
        int64_t got = bench_parse_i64(PQgetvalue(r, 0, 0), (size_t)PQgetlength(r, 0, 0), &ok);
        PQclear(r);
        if (!ok || got != want)
            return bench_fail("simple concurrent: got %lld for %d", (long long)got, want);
    }
    *sum = 0;
    return 0;
}

/* One mixed row, text format: every column decoded. */
static int decode_mixed_text(lpq_t *s, PGresult *r, int row, uint64_t *h)
{
    int ok = 1;
    int64_t i2 = bench_parse_i64(PQgetvalue(r, row, 0), (size_t)PQgetlength(r, row, 0), &ok);
    int64_t i4 = bench_parse_i64(PQgetvalue(r, row, 1), (size_t)PQgetlength(r, row, 1), &ok);
    float f4 = strtof(PQgetvalue(r, row, 2), NULL);
    double f8 = bench_parse_f64(PQgetvalue(r, row, 3), &ok);
    size_t vc = (size_t)PQgetlength(r, row, 4);
    size_t js = (size_t)PQgetlength(r, row, 5);
    size_t jb = (size_t)PQgetlength(r, row, 6);
    int64_t ts = bench_parse_ts(PQgetvalue(r, row, 7), (size_t)PQgetlength(r, row, 7), &ok);
    int64_t tz = bench_parse_ts(PQgetvalue(r, row, 8), (size_t)PQgetlength(r, row, 8), &ok);
    long bl = bench_unhex(PQgetvalue(r, row, 9), (size_t)PQgetlength(r, row, 9), s->scratch,
                          s->scratch_cap);
    if (!ok || bl <= 0 || PQgetvalue(r, row, 5)[0] != '{' || PQgetvalue(r, row, 6)[0] != '{')
        return bench_fail("mixed row %d: bad text value", row);
    *h = bench_mix(*h, (uint64_t)i2);
    *h = bench_mix(*h, (uint64_t)i4);
    *h = bench_mix(*h, bench_fold_f(f4));
    *h = bench_mix(*h, bench_fold_f(f8));
    *h = bench_mix(*h, vc + js * 1000 + jb * 1000000);
    *h = bench_mix(*h, (uint64_t)ts);
    *h = bench_mix(*h, (uint64_t)tz);
    *h = bench_mix(*h, (uint64_t)bl * 65536 + s->scratch[0] * 256 + s->scratch[bl - 1]);
    return 0;
}

static int decode_mixed_binary(PGresult *r, int row, uint64_t *h)
{
    static const int want_len[] = {2, 4, 4, 8, -1, -1, -1, 8, 8, -1};
    for (int col = 0; col < 10; col++)
        if (want_len[col] > 0 && PQgetlength(r, row, col) != want_len[col])
            return bench_fail("mixed row %d col %d: bad binary length", row, col);
    const uint8_t *jb = (const uint8_t *)PQgetvalue(r, row, 6);
    if (PQgetlength(r, row, 6) < 2 || jb[0] != 1 || PQgetvalue(r, row, 5)[0] != '{')
        return bench_fail("mixed row %d: bad json/jsonb", row);
    int16_t i2 = (int16_t)be16((const uint8_t *)PQgetvalue(r, row, 0));
    int32_t i4 = (int32_t)be32((const uint8_t *)PQgetvalue(r, row, 1));
    uint32_t f4b = be32((const uint8_t *)PQgetvalue(r, row, 2));
    uint64_t f8b = be64((const uint8_t *)PQgetvalue(r, row, 3));
    float f4;
    double f8;
    memcpy(&f4, &f4b, 4);
    memcpy(&f8, &f8b, 8);
    size_t vc = (size_t)PQgetlength(r, row, 4);
    size_t js = (size_t)PQgetlength(r, row, 5);
    size_t jbl = (size_t)PQgetlength(r, row, 6) - 1;
    int64_t ts = (int64_t)be64((const uint8_t *)PQgetvalue(r, row, 7));
    int64_t tz = (int64_t)be64((const uint8_t *)PQgetvalue(r, row, 8));
    const uint8_t *b = (const uint8_t *)PQgetvalue(r, row, 9);
    long bl = PQgetlength(r, row, 9);
    if (bl <= 0) return bench_fail("mixed row %d: empty bytea", row);
    *h = bench_mix(*h, (uint64_t)(int64_t)i2);
    *h = bench_mix(*h, (uint64_t)(int64_t)i4);
    *h = bench_mix(*h, bench_fold_f(f4));
    *h = bench_mix(*h, bench_fold_f(f8));
    *h = bench_mix(*h, vc + js * 1000 + jbl * 1000000);
    *h = bench_mix(*h, (uint64_t)ts);
    *h = bench_mix(*h, (uint64_t)tz);
    *h = bench_mix(*h, (uint64_t)bl * 65536 + b[0] * 256 + b[bl - 1]);
    return 0;
}

static int simple_fetch_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    PGresult *r = PQexec(s->c, SQL_SIMPLE_FETCH);
    if (check_res(r, PGRES_TUPLES_OK, "simple fetch") || check_rows(r, 1000, "simple fetch"))
        return -1;
    uint64_t h = 0;
    for (int i = 0; i < 1000; i++)
        if (decode_mixed_text(s, r, i, &h) != 0) {
            PQclear(r);
            return -1;
        }
    PQclear(r);
    *sum = h;
    return 0;
}

/* ---- Extended Query ---------------------------------------------------------- */
static const Oid INT4OID = 23;

static int ext_seq_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    uint32_t want = (uint32_t)++s->counter, be;
    put32((uint8_t *)&be, want);
    const char *vals[] = {(const char *)&be};
    int lens[] = {4}, fmts[] = {1};
    PGresult *r = PQexecParams(s->c, SQL_EXT_SEQ, 1, &INT4OID, vals, lens, fmts, BINARY);
    if (check_res(r, PGRES_TUPLES_OK, SQL_EXT_SEQ) || check_rows(r, 1, SQL_EXT_SEQ)) return -1;
    uint32_t got = PQgetlength(r, 0, 0) == 4 ? be32((const uint8_t *)PQgetvalue(r, 0, 0)) : 0;
    PQclear(r);
    *sum = 0;
    return got == want ? 0 : bench_fail("ext seq: got %u, sent %u", got, want);
}

static void *pipeline_setup(const bench_env_t *env)
{
    lpq_t *s = new_state(env);
    if (s && enter_pipeline(s->c) != 0) {
        teardown(s);
        return NULL;
    }
    return s;
}

/* Read n single-row int4 answers (binary), each followed by NULL and a Sync. */
static int read_int4_answers(lpq_t *s, int n, int first, int stride_mod)
{
    for (int i = 0; i < n; i++) {
        PGresult *r = PQgetResult(s->c);
        if (check_res(r, PGRES_TUPLES_OK, "pipelined call") || check_rows(r, 1, "pipelined call"))
            return -1;
        uint32_t got = be32((const uint8_t *)PQgetvalue(r, 0, 0));
        PQclear(r);
        uint32_t want =
            stride_mod ? (uint32_t)((first + i) % stride_mod + 1) : (uint32_t)(first + i);
        if (got != want) return bench_fail("pipelined call %d: got %u, expected %u", i, got, want);
        if (expect_null(s->c) || expect_sync(s->c)) return -1;
    }
    return 0;
}

static int ext_conc_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    int n = bench_sz.ext_conc, first = s->counter + 1;
    for (int i = 0; i < n; i++) {
        uint32_t be;
        put32((uint8_t *)&be, (uint32_t)++s->counter);
        const char *vals[] = {(const char *)&be};
        int lens[] = {4}, fmts[] = {1};
        if (!PQsendQueryParams(s->c, SQL_EXT_SEQ, 1, &INT4OID, vals, lens, fmts, BINARY) ||
            !PQpipelineSync(s->c))
            return bench_fail("send: %s", PQerrorMessage(s->c));
    }
    if (flush_all(s->c) != 0) return -1;
    *sum = 0;
    return read_int4_answers(s, n, first, 0);
}

static int mixed_op(lpq_t *s, int format, uint64_t *sum)
{
    const char *vals[] = {"1000"};
    PGresult *r = PQexecParams(s->c, SQL_MIXED, 1, NULL, vals, NULL, NULL, format);
    if (check_res(r, PGRES_TUPLES_OK, "mixed") || check_rows(r, 1000, "mixed")) return -1;
    uint64_t h = 0;
    for (int i = 0; i < 1000; i++) {
        int rc = format == BINARY ? decode_mixed_binary(r, i, &h) : decode_mixed_text(s, r, i, &h);
        if (rc != 0) {
            PQclear(r);
            return -1;
        }
    }
    PQclear(r);
    *sum = h;
    return 0;
}

static int mixed_text_op(void *st, uint64_t *sum)
{
    return mixed_op(st, TEXT, sum);
}
static int mixed_binary_op(void *st, uint64_t *sum)
{
    return mixed_op(st, BINARY, sum);
}

/* Blob: binary bytea is the bytes themselves; verify the 16-byte pattern at
 * sampled offsets and fold a sample into the checksum. */
static int blob_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    const char *vals[] = {"10"};
    PGresult *r = PQexecParams(s->c, SQL_BLOB, 1, NULL, vals, NULL, NULL, BINARY);
    if (check_res(r, PGRES_TUPLES_OK, "blob") || check_rows(r, bench_sz.blob_rows, "blob"))
        return -1;
    uint64_t h = 0;
    for (int i = 0; i < PQntuples(r); i++) {
        const uint8_t *b = (const uint8_t *)PQgetvalue(r, i, 1);
        int len = PQgetlength(r, i, 1);
        if (len != bench_sz.blob_bytes) {
            PQclear(r);
            return bench_fail("blob row %d: %d bytes", i, len);
        }
        for (int k = 0; k < len; k += 4093)
            if (b[k] != b[k % 16]) {
                PQclear(r);
                return bench_fail("blob row %d: wrong byte at %d", i, k);
            }
        h = bench_mix(h, (uint64_t)len + b[0] + b[len - 1] * 256u);
    }
    PQclear(r);
    *sum = h;
    return 0;
}

/* Array: decode every element of the binary int4[] and check it. */
static int decode_int4_array(const uint8_t *p, int len, int32_t id, int32_t *out, int cap,
                             uint64_t *h)
{
    if (len < 20 || be32(p) != 1 || be32(p + 8) != INT4OID) return bench_fail("array: bad header");
    int n = (int)be32(p + 12);
    if (n > cap || len != 20 + n * 8) return bench_fail("array: %d elements in %d bytes", n, len);
    const uint8_t *e = p + 20;
    int64_t acc = 0;
    for (int j = 0; j < n; j++, e += 8) {
        if (be32(e) != 4) return bench_fail("array: element %d length", j);
        out[j] = (int32_t)be32(e + 4);
    }
    for (int j = 0; j < n; j++) {
        int32_t want = j % 2 == 0 ? 2147483647 - j - id : -2147483647 + j + id;
        if (out[j] != want)
            return bench_fail("array row %d element %d: %d, expected %d", id, j, out[j], want);
        acc += out[j];
    }
    *h = bench_mix(*h, (uint64_t)acc + (uint64_t)n);
    return 0;
}

static int array_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    const char *vals[] = {"10"};
    PGresult *r = PQexecParams(s->c, SQL_ARRAY, 1, NULL, vals, NULL, NULL, BINARY);
    if (check_res(r, PGRES_TUPLES_OK, "array") || check_rows(r, bench_sz.array_rows, "array"))
        return -1;
    uint64_t h = 0;
    for (int i = 0; i < PQntuples(r); i++) {
        int32_t id = (int32_t)be32((const uint8_t *)PQgetvalue(r, i, 0));
        if (decode_int4_array((const uint8_t *)PQgetvalue(r, i, 1), PQgetlength(r, i, 1), id,
                              (int32_t *)s->scratch, (int)(s->scratch_cap / 4), &h) != 0) {
            PQclear(r);
            return -1;
        }
    }
    PQclear(r);
    *sum = h;
    return 0;
}

/* ---- Prepared Statement Reuse --------------------------------------------------- */
static void *prep_setup_mode(const bench_env_t *env, int pipeline)
{
    lpq_t *s = new_state(env);
    if (!s) return NULL;
    PGresult *r = PQprepare(s->c, "bench_prep", SQL_PREP, 1, &INT4OID);
    if (check_res(r, PGRES_COMMAND_OK, "prepare") != 0 || (pipeline && enter_pipeline(s->c))) {
        teardown(s);
        return NULL;
    }
    PQclear(r);
    return s;
}
static void *prep_setup(const bench_env_t *env)
{
    return prep_setup_mode(env, 0);
}
static void *prep_pipe_setup(const bench_env_t *env)
{
    return prep_setup_mode(env, 1);
}

static int prep_row(PGresult *r, uint32_t want, uint64_t *h)
{
    if (PQntuples(r) != 1 || be32((const uint8_t *)PQgetvalue(r, 0, 0)) != want)
        return bench_fail("prepared: wrong row for id %u", want);
    int32_t i4 = (int32_t)be32((const uint8_t *)PQgetvalue(r, 0, 1));
    uint64_t f8b = be64((const uint8_t *)PQgetvalue(r, 0, 2));
    double f8;
    memcpy(&f8, &f8b, 8);
    *h = bench_mix(*h, (uint64_t)(int64_t)i4 + bench_fold_f(f8) + (uint64_t)PQgetlength(r, 0, 3));
    return 0;
}

static int prep_seq_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    uint64_t h = 0;
    for (int i = 0; i < bench_sz.prep_reuse; i++) {
        uint32_t id = (uint32_t)(i + 1), be;
        put32((uint8_t *)&be, id);
        const char *vals[] = {(const char *)&be};
        int lens[] = {4}, fmts[] = {1};
        PGresult *r = PQexecPrepared(s->c, "bench_prep", 1, vals, lens, fmts, BINARY);
        if (check_res(r, PGRES_TUPLES_OK, "execute prepared") != 0) return -1;
        int rc = prep_row(r, id, &h);
        PQclear(r);
        if (rc) return -1;
    }
    *sum = h;
    return 0;
}

static int prep_conc_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    int n = bench_sz.prep_reuse, first = s->counter;
    for (int i = 0; i < n; i++) {
        uint32_t id = (uint32_t)((first + i) % 1000 + 1), be;
        put32((uint8_t *)&be, id);
        const char *vals[] = {(const char *)&be};
        int lens[] = {4}, fmts[] = {1};
        if (!PQsendQueryPrepared(s->c, "bench_prep", 1, vals, lens, fmts, BINARY) ||
            !PQpipelineSync(s->c))
            return bench_fail("send: %s", PQerrorMessage(s->c));
    }
    s->counter += n;
    if (flush_all(s->c) != 0) return -1;
    uint64_t h = 0;
    for (int i = 0; i < n; i++) {
        PGresult *r = PQgetResult(s->c);
        if (check_res(r, PGRES_TUPLES_OK, "pipelined prepared") != 0) return -1;
        int rc = prep_row(r, (uint32_t)((first + i) % 1000 + 1), &h);
        PQclear(r);
        if (rc || expect_null(s->c) || expect_sync(s->c)) return -1;
    }
    *sum = 0;
    return 0;
}

/* ---- Per-Connection Ceiling ------------------------------------------------------ */
static void *ceiling_setup(const bench_env_t *env)
{
    lpq_t *s = new_state(env);
    if (!s) return NULL;
    PGresult *r = PQprepare(s->c, CEILING_STMT, SQL_EXT_SEQ, 1, &INT4OID);
    if (check_res(r, PGRES_COMMAND_OK, "prepare") != 0 || enter_pipeline(s->c)) {
        teardown(s);
        return NULL;
    }
    PQclear(r);
    return s;
}

/* bench_sz.ceiling PQsendQueryPrepared, one PQpipelineSync; libpq flushes
 * as its output buffer fills. Every answer is checked against its value. */
static int ceiling_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    int n = bench_sz.ceiling;
    for (int i = 0; i < n; i++) {
        uint32_t be;
        put32((uint8_t *)&be, (uint32_t)i + 1);
        const char *vals[] = {(const char *)&be};
        int lens[] = {4}, fmts[] = {1};
        if (!PQsendQueryPrepared(s->c, CEILING_STMT, 1, vals, lens, fmts, BINARY))
            return bench_fail("send: %s", PQerrorMessage(s->c));
    }
    if (!PQpipelineSync(s->c) || flush_all(s->c) != 0)
        return bench_fail("sync: %s", PQerrorMessage(s->c));
    uint64_t h = 0;
    for (int i = 0; i < n; i++) {
        PGresult *r = PQgetResult(s->c);
        if (check_res(r, PGRES_TUPLES_OK, "ceiling") != 0) return -1;
        uint32_t v = PQntuples(r) == 1 && PQgetlength(r, 0, 0) == 4
                         ? be32((const uint8_t *)PQgetvalue(r, 0, 0))
                         : 0;
        PQclear(r);
        if (v != (uint32_t)i + 1) return bench_fail("ceiling %d: got %u", i, v);
        h += v;
        if (expect_null(s->c)) return -1;
    }
    if (expect_sync(s->c)) return -1;
    *sum = h;
    return 0;
}

/* ---- Unit of Work ---------------------------------------------------------------- */
static void *uow_setup(const bench_env_t *env)
{
    lpq_t *s = new_state(env);
    if (!s) return NULL;
    PGresult *r = PQexec(s->c, "select v from bench_uow where id between 1 and 5 order by id");
    if (check_res(r, PGRES_TUPLES_OK, "uow setup") || check_rows(r, 5, "uow setup")) {
        teardown(s);
        return NULL;
    }
    for (int i = 0; i < 5; i++)
        s->uow_expect[i] = atoll(PQgetvalue(r, i, 0));
    PQclear(r);
    if (enter_pipeline(s->c) != 0) {
        teardown(s);
        return NULL;
    }
    return s;
}

static int uow_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    const char *one[] = {"1"};
    for (int k = 0; k < bench_sz.uow_stmts; k++) {
        int np = bench_uow_is_read(k) ? 0 : 1;
        if (!PQsendQueryParams(s->c, bench_uow_sql(k), np, NULL, np ? one : NULL, NULL, NULL, TEXT))
            return bench_fail("send: %s", PQerrorMessage(s->c));
    }
    if (!PQpipelineSync(s->c) || flush_all(s->c) != 0)
        return bench_fail("sync: %s", PQerrorMessage(s->c));
    for (int i = 0; i < 5; i++)
        s->uow_expect[i]++;
    for (int k = 0; k < bench_sz.uow_stmts; k++) {
        PGresult *r = PQgetResult(s->c);
        if (bench_uow_is_read(k)) {
            if (check_res(r, PGRES_TUPLES_OK, "uow read") || check_rows(r, 1, "uow read"))
                return -1;
            int ok = 1;
            int64_t v = bench_parse_i64(PQgetvalue(r, 0, 0), (size_t)PQgetlength(r, 0, 0), &ok);
            PQclear(r);
            if (!ok || v != s->uow_expect[k - 10])
                return bench_fail("uow read %d: %lld, expected %lld", k, (long long)v,
                                  (long long)s->uow_expect[k - 10]);
        } else {
            if (check_res(r, PGRES_COMMAND_OK, "uow write") != 0) return -1;
            int ok = strcmp(PQcmdTuples(r), "1") == 0;
            PQclear(r);
            if (!ok) return bench_fail("uow write %d: not one row", k);
        }
        if (expect_null(s->c)) return -1;
    }
    *sum = 0;
    return expect_sync(s->c);
}

/* ---- Bulk Load ---------------------------------------------------------------- */
#define COPY_BUF (256 * 1024)

static void *copy_setup(const bench_env_t *env)
{
    lpq_t *s = new_state(env);
    if (!s) return NULL;
    s->rows = bench_copy_rows(bench_sz.copy_rows);
    s->copybuf = bench_xmalloc(COPY_BUF);
    return s;
}

/* One COPY FROM STDIN of every row, each formatted (CSV) or encoded by hand
 * (binary: the PGCOPY header, bench_copy_bin's rows, the -1 trailer) into
 * 256 KiB chunks inside the timed call, each chunk one PQputCopyData. */
static int copy_in(lpq_t *s, int binary)
{
    PGresult *r = PQexec(s->c, "TRUNCATE bench_copy");
    if (check_res(r, PGRES_COMMAND_OK, "truncate") != 0) return -1;
    PQclear(r);
    r = PQexec(s->c, binary ? "COPY bench_copy FROM STDIN (FORMAT binary)"
                            : "COPY bench_copy FROM STDIN (FORMAT csv)");
    if (check_res(r, PGRES_COPY_IN, "copy") != 0) return -1;
    PQclear(r);
    uint8_t *buf = (uint8_t *)s->copybuf;
    size_t len = 0;
    if (binary) {
        memcpy(buf, bench_copy_bin_header, sizeof bench_copy_bin_header);
        len = sizeof bench_copy_bin_header;
    }
    for (int i = 0; i < bench_sz.copy_rows; i++) {
        if (len > COPY_BUF - 256) {
            if (PQputCopyData(s->c, s->copybuf, (int)len) != 1)
                return bench_fail("PQputCopyData: %s", PQerrorMessage(s->c));
            len = 0;
        }
        len += binary ? bench_copy_bin(buf + len, &s->rows[i])
                      : bench_copy_csv(s->copybuf + len, &s->rows[i]);
    }
    if (binary) {
        buf[len++] = 0xff; /* the trailer: a field count of -1 */
        buf[len++] = 0xff;
    }
    if ((len && PQputCopyData(s->c, s->copybuf, (int)len) != 1) || PQputCopyEnd(s->c, NULL) != 1)
        return bench_fail("copy end: %s", PQerrorMessage(s->c));
    r = PQgetResult(s->c);
    if (check_res(r, PGRES_COMMAND_OK, "copy result") != 0) return -1;
    long n = atol(PQcmdTuples(r));
    PQclear(r);
    if (expect_null(s->c) != 0) return -1;
    return n == bench_sz.copy_rows ? 0 : bench_fail("copy: %ld rows loaded", n);
}

static int copy_text_op(void *st, uint64_t *sum)
{
    *sum = 0;
    return copy_in(st, 0);
}

static int copy_binary_op(void *st, uint64_t *sum)
{
    *sum = 0;
    return copy_in(st, 1);
}

/* ---- Cursor Streaming -------------------------------------------------------------- */
static void fold_stream_row(PGresult *r, int row, uint64_t *h)
{
    int32_t i = (int32_t)be32((const uint8_t *)PQgetvalue(r, row, 0));
    uint64_t f8b = be64((const uint8_t *)PQgetvalue(r, row, 2));
    double f8;
    memcpy(&f8, &f8b, 8);
    *h += (uint64_t)(int64_t)i + (uint64_t)PQgetlength(r, row, 1) + bench_fold_f(f8);
}

static int cursor_single_row(lpq_t *s, uint64_t *sum)
{
    if (!PQsendQueryParams(s->c, s->sql, 0, NULL, NULL, NULL, NULL, BINARY) ||
        !PQsetSingleRowMode(s->c))
        return bench_fail("single-row: %s", PQerrorMessage(s->c));
    uint64_t h = 0;
    int rows = 0;
    PGresult *r;
    while ((r = PQgetResult(s->c)) != NULL) {
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_SINGLE_TUPLE) {
            fold_stream_row(r, 0, &h);
            rows++;
        } else if (st != PGRES_TUPLES_OK) {
            bench_fail("single-row: %s", PQresultErrorMessage(r));
            PQclear(r);
            return -1;
        }
        PQclear(r);
    }
    *sum = h;
    return rows == bench_sz.cursor_rows ? 0 : bench_fail("cursor: %d rows", rows);
}

static int exec_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    if (check_res(r, PGRES_COMMAND_OK, sql) != 0) return -1;
    PQclear(r);
    return 0;
}

static int cursor_fetch(lpq_t *s, uint64_t *sum)
{
    char decl[320], fetch[64];
    snprintf(decl, sizeof decl, "BEGIN; DECLARE bench_cur BINARY NO SCROLL CURSOR FOR %s", s->sql);
    snprintf(fetch, sizeof fetch, "FETCH %d FROM bench_cur", bench_sz.cursor_batch);
    if (exec_ok(s->c, decl) != 0) return -1;
    uint64_t h = 0;
    int rows = 0;
    for (;;) {
        PGresult *r = PQexec(s->c, fetch);
        if (check_res(r, PGRES_TUPLES_OK, "fetch") != 0) return -1;
        int n = PQntuples(r);
        for (int i = 0; i < n; i++)
            fold_stream_row(r, i, &h);
        rows += n;
        PQclear(r);
        if (n < bench_sz.cursor_batch) break;
    }
    if (exec_ok(s->c, "CLOSE bench_cur; COMMIT") != 0) return -1;
    *sum = h;
    return rows == bench_sz.cursor_rows ? 0 : bench_fail("cursor: %d rows", rows);
}

static int cursor_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    return s->cursor_variant ? cursor_fetch(s, sum) : cursor_single_row(s, sum);
}

#include <time.h>
static double time_variant(lpq_t *s, int v)
{
    struct timespec a, b;
    uint64_t sum;
    s->cursor_variant = v;
    if (cursor_op(s, &sum) != 0) /* warm-up */
        return -1;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < 3; i++)
        if (cursor_op(s, &sum) != 0) return -1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return ((double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6) / 3;
}

static bench_impl_t cursor_impl;

static void *cursor_setup(const bench_env_t *env)
{
    lpq_t *s = new_state(env);
    if (!s) return NULL;
    snprintf(s->sql, sizeof s->sql, SQL_CURSOR, bench_sz.cursor_rows);
    double single = time_variant(s, 0), fetch = time_variant(s, 1);
    if (single < 0 || fetch < 0) {
        teardown(s);
        return NULL;
    }
    s->cursor_variant = fetch < single;
    snprintf(s->note, sizeof s->note,
             "%s (calibration before the timed loop: single-row mode %.2f ms, DECLARE/FETCH %d "
             "%.2f ms per op)",
             s->cursor_variant ? "DECLARE/FETCH cursor" : "single-row mode", single,
             bench_sz.cursor_batch, fetch);
    cursor_impl.note = s->note;
    return s;
}

/* ---- Suite B ------------------------------------------------------------------- */
static void *b_setup(const bench_env_t *env, int limit, int pipeline)
{
    lpq_t *s = new_state(env);
    if (!s) return NULL;
    s->limit = limit;
    snprintf(s->sql, sizeof s->sql, SQL_B_FMT, limit);
    PGresult *r = PQprepare(s->c, "bench_b", s->sql, 0, NULL);
    if (check_res(r, PGRES_COMMAND_OK, "prepare") != 0 || (pipeline && enter_pipeline(s->c))) {
        teardown(s);
        return NULL;
    }
    PQclear(r);
    return s;
}

static int b_rows(lpq_t *s, PGresult *r, uint64_t *h)
{
    if (PQntuples(r) != s->limit || PQnfields(r) != 5)
        return bench_fail("suite B: %d rows", PQntuples(r));
    for (int i = 0; i < s->limit; i++) {
        int32_t id = (int32_t)be32((const uint8_t *)PQgetvalue(r, i, 0));
        int32_t iv = (int32_t)be32((const uint8_t *)PQgetvalue(r, i, 1));
        int sl = PQgetlength(r, i, 2);
        int isnull = PQgetisnull(r, i, 3);
        int bv = PQgetvalue(r, i, 4)[0];
        if (id != i + 1 || iv != 1337 || sl != 3 || !isnull || bv != 0)
            return bench_fail("suite B: wrong row %d", i);
        *h += (uint64_t)(id + iv + sl);
    }
    return 0;
}

static int b_seq_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    PGresult *r = PQexecPrepared(s->c, "bench_b", 0, NULL, NULL, NULL, BINARY);
    if (check_res(r, PGRES_TUPLES_OK, "suite B") != 0) return -1;
    uint64_t h = 0;
    int rc = b_rows(s, r, &h);
    PQclear(r);
    *sum = h;
    return rc;
}

static int b_pipe_op(void *st, uint64_t *sum)
{
    lpq_t *s = st;
    for (int i = 0; i < 10; i++)
        if (!PQsendQueryPrepared(s->c, "bench_b", 0, NULL, NULL, NULL, BINARY) ||
            !PQpipelineSync(s->c))
            return bench_fail("send: %s", PQerrorMessage(s->c));
    if (flush_all(s->c) != 0) return -1;
    uint64_t h = 0;
    for (int i = 0; i < 10; i++) {
        PGresult *r = PQgetResult(s->c);
        if (check_res(r, PGRES_TUPLES_OK, "suite B pipelined") != 0) return -1;
        int rc = b_rows(s, r, &h);
        PQclear(r);
        if (rc || expect_null(s->c) || expect_sync(s->c)) return -1;
    }
    *sum = h;
    return 0;
}

#define B_SETUPS(n)                                       \
    static void *b_seq_setup_##n(const bench_env_t *env)  \
    {                                                     \
        return b_setup(env, n, 0);                        \
    }                                                     \
    static void *b_pipe_setup_##n(const bench_env_t *env) \
    {                                                     \
        return b_setup(env, n, 1);                        \
    }
B_SETUPS(1)
B_SETUPS(100)
B_SETUPS(500)

/* ---- Connection Pooling ----------------------------------------------------------- */
/* libpq has no pool: its fastest form of "1000 concurrent calls through 10
 * connections" is 10 PGconn, non-blocking, served together with poll().
 * Extended Query: each connection in pipeline mode with its share of the
 * calls sent at once (PQpipelineSync after each). Simple Query cannot be
 * pipelined in libpq, so each connection runs its share one call at a time
 * (PQsendQuery, the next one sent as soon as the last one's results end),
 * the 10 connections in parallel. */
typedef struct lpq_pool {
    PGconn *c[16];
    int n;
    int ext;
    int counter;
} lpq_pool_t;

typedef struct pool_conn_state {
    int sent, done; /* calls sent / answered */
    int phase;      /* ext: 0 a row, 1 the query's NULL, 2 its Sync */
    uint32_t first; /* ext: the value of this connection's first call */
} pool_cs_t;

static void pool_teardown(void *st)
{
    lpq_pool_t *p = st;
    for (int i = 0; i < p->n; i++)
        PQfinish(p->c[i]);
    free(p);
}

static void *pool_setup_mode(const bench_env_t *env, int ext)
{
    lpq_pool_t *p = calloc(1, sizeof *p);
    p->ext = ext;
    for (int i = 0; i < bench_sz.pool_size && i < 16; i++) {
        p->c[i] = connect_to(env, 0);
        if (!p->c[i] || PQsetnonblocking(p->c[i], 1) != 0 ||
            (ext && PQenterPipelineMode(p->c[i]) != 1)) {
            if (p->c[i]) bench_fail("libpq pool: %s", PQerrorMessage(p->c[i]));
            pool_teardown(p);
            return NULL;
        }
        p->n = i + 1;
    }
    return p;
}
static void *pool_simple_setup(const bench_env_t *env)
{
    return pool_setup_mode(env, 0);
}
static void *pool_ext_setup(const bench_env_t *env)
{
    return pool_setup_mode(env, 1);
}

/* Consume what one connection has read; 0, or -1 after bench_fail. */
static int pool_read(lpq_pool_t *p, PGconn *c, pool_cs_t *cs, int per)
{
    while (cs->done < per) {
        if (cs->phase != 1 && PQisBusy(c)) return 0;
        PGresult *r = PQgetResult(c);
        if (!p->ext) {
            if (!r) { /* the call's results ended: the next one may go */
                cs->done++;
                if (cs->sent < per) {
                    if (!PQsendQuery(c, SQL_POOL_SIMPLE))
                        return bench_fail("libpq pool: %s", PQerrorMessage(c));
                    cs->sent++;
                }
                continue;
            }
            if (check_res(r, PGRES_TUPLES_OK, SQL_POOL_SIMPLE) || check_rows(r, 1, SQL_POOL_SIMPLE))
                return -1;
            int ok = strcmp(PQgetvalue(r, 0, 0), "1") == 0;
            PQclear(r);
            if (!ok) return bench_fail("libpq pool: wrong answer to %s", SQL_POOL_SIMPLE);
            continue;
        }
        if (cs->phase == 0) {
            if (check_res(r, PGRES_TUPLES_OK, SQL_POOL_EXT) || check_rows(r, 1, SQL_POOL_EXT))
                return -1;
            uint32_t got =
                PQgetlength(r, 0, 0) == 4 ? be32((const uint8_t *)PQgetvalue(r, 0, 0)) : 0;
            PQclear(r);
            uint32_t want = cs->first + (uint32_t)cs->done;
            if (got != want) return bench_fail("libpq pool: got %u, sent %u", got, want);
            cs->phase = 1;
        } else if (cs->phase == 1) {
            if (r) {
                PQclear(r);
                return bench_fail("libpq pool: more results than expected");
            }
            cs->phase = 2;
        } else {
            if (check_res(r, PGRES_PIPELINE_SYNC, "pipeline sync")) return -1;
            PQclear(r);
            cs->phase = 0;
            cs->done++;
        }
    }
    return 0;
}

static int pool_op(void *st, uint64_t *sum)
{
    lpq_pool_t *p = st;
    pool_cs_t cs[16] = {{0}};
    struct pollfd pf[16];
    int per = bench_sz.pool_conc / p->n, left = p->n;
    for (int i = 0; i < p->n; i++) {
        PGconn *c = p->c[i];
        if (!p->ext) {
            if (!PQsendQuery(c, SQL_POOL_SIMPLE))
                return bench_fail("libpq pool: %s", PQerrorMessage(c));
            cs[i].sent = 1;
            continue;
        }
        cs[i].first = (uint32_t)p->counter + 1;
        for (int k = 0; k < per; k++) {
            uint32_t be;
            put32((uint8_t *)&be, (uint32_t)++p->counter);
            const char *vals[] = {(const char *)&be};
            int lens[] = {4}, fmts[] = {1};
            if (!PQsendQueryParams(c, SQL_POOL_EXT, 1, &INT4OID, vals, lens, fmts, BINARY) ||
                !PQpipelineSync(c))
                return bench_fail("libpq pool: send: %s", PQerrorMessage(c));
        }
        cs[i].sent = per;
    }
    while (left > 0) {
        for (int i = 0; i < p->n; i++) {
            pf[i].fd = PQsocket(p->c[i]);
            pf[i].events = 0;
            if (cs[i].done == per) continue;
            int f = PQflush(p->c[i]);
            if (f < 0) return bench_fail("libpq pool: PQflush: %s", PQerrorMessage(p->c[i]));
            pf[i].events = (short)(POLLIN | (f ? POLLOUT : 0));
        }
        if (poll(pf, (nfds_t)p->n, 30000) <= 0) return bench_fail("libpq pool: timeout");
        for (int i = 0; i < p->n; i++) {
            if (!pf[i].events || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            if (!PQconsumeInput(p->c[i]))
                return bench_fail("libpq pool: %s", PQerrorMessage(p->c[i]));
            if (pool_read(p, p->c[i], &cs[i], per) != 0) return -1;
            if (cs[i].done == per) left--;
        }
    }
    *sum = 0;
    return 0;
}

/* ---- the table -------------------------------------------------------------------- */
static const char NOTE_PIPE[] =
    "pipeline mode, non-blocking flush, PQpipelineSync after every call (libpq 15 has no "
    "PQsendPipelineSync, so each Sync also writes)";

static bench_impl_t impls[] = {
    {connect_setup, connect_op, connect_teardown, "PQconnectdbParams over TCP + PQfinish"},
    {plain_setup, simple_seq_op, teardown, "PQexec"},
    {plain_setup, simple_conc_op, teardown,
     "PQexec one at a time: libpq cannot pipeline Simple Query (PQsendQuery is refused in "
     "pipeline mode, and a second PQsendQuery must wait for the first's results)"},
    {plain_setup, simple_fetch_op, teardown, "PQexec, text decoded by the harness"},
    {plain_setup, ext_seq_op, teardown, "PQexecParams, binary parameter and result"},
    {pipeline_setup, ext_conc_op, teardown, NOTE_PIPE},
    {plain_setup, mixed_text_op, teardown, "PQexecParams, text result decoded by the harness"},
    {plain_setup, mixed_binary_op, teardown, "PQexecParams, binary result decoded by the harness"},
    {plain_setup, blob_op, teardown, "PQexecParams, binary result"},
    {plain_setup, array_op, teardown, "PQexecParams, binary int4[] decoded by the harness"},
    {prep_setup, prep_seq_op, teardown, "PQprepare once, PQexecPrepared (binary)"},
    {prep_pipe_setup, prep_conc_op, teardown, NOTE_PIPE},
    {uow_setup, uow_op, teardown, "pipeline mode, 20 PQsendQueryParams, one PQpipelineSync"},
    {copy_setup, copy_text_op, teardown,
     "PQexec TRUNCATE, PQputCopyData of 256 KiB CSV chunks formatted in the timed call"},
    {copy_setup, copy_binary_op, teardown,
     "PQexec TRUNCATE, PQputCopyData of 256 KiB binary COPY chunks encoded by hand (the PGCOPY "
     "format, the harness's own row encoder) in the timed call"},
    {cursor_setup, cursor_op, teardown, NULL},
    {plain_setup, simple_seq_op, teardown, "PQexec"},
    {connect_tls_setup, connect_op, connect_teardown,
     "PQconnectdbParams over TCP, sslmode=require + PQfinish"},
    {tls_setup, blob_op, teardown, "PQexecParams, binary result, TCP with sslmode=require"},
    {b_seq_setup_1, b_seq_op, teardown, "PQexecPrepared, binary"},
    {b_seq_setup_100, b_seq_op, teardown, "PQexecPrepared, binary"},
    {b_seq_setup_500, b_seq_op, teardown, "PQexecPrepared, binary"},
    {b_pipe_setup_1, b_pipe_op, teardown, NOTE_PIPE},
    {b_pipe_setup_100, b_pipe_op, teardown, NOTE_PIPE},
    {b_pipe_setup_500, b_pipe_op, teardown, NOTE_PIPE},
    {pool_simple_setup, pool_op, pool_teardown,
     "10 PGconn, non-blocking, served together with poll(); each runs its 100 calls one at a "
     "time (PQsendQuery: libpq cannot pipeline Simple Query)"},
    {pool_ext_setup, pool_op, pool_teardown,
     "10 PGconn in pipeline mode, served together with poll(); each sends its 100 calls at "
     "once, PQpipelineSync after every call"},
    {connect_gss_setup, connect_op, connect_teardown,
     "PQconnectdbParams over TCP, gssencmode=require + PQfinish"},
    {ceiling_setup, ceiling_op, teardown,
     "pipeline mode, non-blocking: PQsendQueryPrepared for each execution (libpq flushes as "
     "its buffer fills), one PQpipelineSync"},
};

static const char *ids[] = {
    "connect",        "simple_seq",   "simple_conc", "simple_fetch", "ext_seq",  "ext_conc",
    "mixed_text",     "mixed_binary", "blob_fetch",  "array_fetch",  "prep_seq", "prep_conc",
    "unit_of_work",   "copy_text",    "copy_binary", "cursor",       "c_rtt",    "connect_tls",
    "blob_fetch_tls", "b_seq_1",      "b_seq_100",   "b_seq_500",    "b_pipe_1", "b_pipe_100",
    "b_pipe_500",     "pool_simple",  "pool_ext",    "connect_gss",  "ceiling",
};
_Static_assert(sizeof ids / sizeof ids[0] == sizeof impls / sizeof impls[0],
               "one scenario id for each implementation");

const bench_impl_t *bench_libpq_lookup(const char *scenario, const char **reason)
{
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        if (strcmp(ids[i], scenario) != 0) continue;
        if (strcmp(scenario, "cursor") != 0) return &impls[i];
        cursor_impl = impls[i]; /* its note is the run's own */
        return &cursor_impl;
    }
    *reason = "not in this harness";
    return NULL;
}

/* ---- suite C -------------------------------------------------------------------------- */
static void *c_setup(const bench_env_t *env)
{
    return pipeline_setup(env);
}

static int c_run(void *st, const bench_c_test_t *t)
{
    lpq_t *s = st;
    for (int i = 0; i < t->nstmts; i++) {
        if (!PQsendQueryParams(s->c, t->stmts[i].sql, 0, NULL, NULL, NULL, NULL, TEXT))
            return bench_fail("send: %s", PQerrorMessage(s->c));
        if (t->sync_each && !PQpipelineSync(s->c))
            return bench_fail("sync: %s", PQerrorMessage(s->c));
    }
    if ((!t->sync_each && !PQpipelineSync(s->c)) || flush_all(s->c) != 0)
        return bench_fail("sync: %s", PQerrorMessage(s->c));
    for (int i = 0; i < t->nstmts; i++) {
        PGresult *r = PQgetResult(s->c);
        int want = t->stmts[i].expect_rows;
        if (check_res(r, want < 0 ? PGRES_COMMAND_OK : PGRES_TUPLES_OK, t->stmts[i].sql) != 0)
            return -1;
        if (want >= 0) {
            int ok = 1;
            if (PQntuples(r) != want) ok = 0;
            for (int row = 0; ok && row < PQntuples(r); row++)
                bench_parse_i64(PQgetvalue(r, row, 0), (size_t)PQgetlength(r, row, 0), &ok);
            if (!ok) {
                PQclear(r);
                return bench_fail("%s: wrong rows", t->stmts[i].sql);
            }
        }
        PQclear(r);
        if (expect_null(s->c) || (t->sync_each && expect_sync(s->c))) return -1;
    }
    return t->sync_each ? 0 : expect_sync(s->c);
}

static const bench_c_impl_t c_impl = {c_setup, c_run, teardown};
const bench_c_impl_t *bench_libpq_c(void)
{
    return &c_impl;
}
