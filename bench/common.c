/* What every library's driver shares: sizes, the rows and statements every
 * scenario sends, and the text decoders for libpq (which returns text and
 * leaves decoding to its caller). */
#define _GNU_SOURCE
#include "bench.h"

#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bench_sizes_t bench_sz;

static char failure_msg[512];

int bench_fail(const char *fmt, ...)
{
    if (failure_msg[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(failure_msg, sizeof failure_msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *bench_failure(void)
{
    return failure_msg[0] ? failure_msg : "unknown failure";
}

void *bench_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "bench: out of memory\n");
        exit(2);
    }
    return p;
}

/* ---- Unit of Work ---------------------------------------------------------
 * 20 different statements: 10 writes, 5 reads, 5 writes. Every statement has
 * its own text (the row id is part of it), so none shares a parsed plan. The
 * writes bind $1 = 1 (int4, text), the reads bind nothing. */
static char uow_sql[20][128];

const char *bench_uow_sql(int k)
{
    if (uow_sql[k][0] == '\0') {
        if (k < 10)
            snprintf(uow_sql[k], sizeof uow_sql[k],
                     "update bench_uow set v = v + $1::int4 where id = %d", k + 1);
        else if (k < 15)
            snprintf(uow_sql[k], sizeof uow_sql[k], "select v from bench_uow where id = %d", k - 9);
        else
            snprintf(uow_sql[k], sizeof uow_sql[k],
                     "update bench_uow set note = 'n' || $1::int4 where id = %d", k - 4);
    }
    return uow_sql[k];
}

int bench_uow_is_read(int k)
{
    return k >= 10 && k < 15;
}

/* ---- Bulk Load rows --------------------------------------------------------
 * Values hug each type's widest text form: 10-digit int4, 19-digit int8, a
 * float8 needing 17 significant digits, a 40-character varchar. */
bench_copy_row_t *bench_copy_rows(int n)
{
    bench_copy_row_t *rows = bench_xmalloc(sizeof *rows * (size_t)(n > 0 ? n : 1));
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rows[i].i4 = (int32_t)(1000000000 + (int32_t)(x % 1147483647u));
        if (i & 1) rows[i].i4 = -rows[i].i4;
        rows[i].i8 = (int64_t)(1000000000000000000ULL + x % 8000000000000000000ULL);
        rows[i].f8 = (double)(x >> 11) / 9007199254740993.0 * 1.0e15 + 0.1234567890123;
        for (int c = 0; c < 40; c++)
            rows[i].vc[c] = (char)('a' + (x >> (c % 60)) % 26);
        rows[i].vc[40] = '\0';
    }
    return rows;
}

static size_t fmt_i64(char *dst, int64_t v)
{
    char tmp[24];
    size_t n = 0, len = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) dst[len++] = '-';
    while (n)
        dst[len++] = tmp[--n];
    return len;
}

size_t bench_copy_csv(char *dst, const bench_copy_row_t *r)
{
    size_t n = fmt_i64(dst, r->i4);
    dst[n++] = ',';
    n += fmt_i64(dst + n, r->i8);
    dst[n++] = ',';
    n += (size_t)snprintf(dst + n, 32, "%.17g", r->f8);
    dst[n++] = ',';
    memcpy(dst + n, r->vc, 40);
    n += 40;
    dst[n++] = '\n';
    return n;
}

const uint8_t bench_copy_bin_header[19] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n',
                                           0,   0,   0,   0,   0,   0,   0,    0,    0};

size_t bench_copy_bin(uint8_t *dst, const bench_copy_row_t *r)
{
    uint8_t *p = dst;
    uint64_t bits;
    *p++ = 0;
    *p++ = 4; /* 4 fields */
    put32(p, 4);
    put32(p + 4, (uint32_t)r->i4);
    p += 8;
    put32(p, 8);
    put32(p + 4, (uint32_t)((uint64_t)r->i8 >> 32));
    put32(p + 8, (uint32_t)r->i8);
    p += 12;
    memcpy(&bits, &r->f8, 8);
    put32(p, 8);
    put32(p + 4, (uint32_t)(bits >> 32));
    put32(p + 8, (uint32_t)bits);
    p += 12;
    put32(p, 40);
    memcpy(p + 4, r->vc, 40);
    p += 44;
    return (size_t)(p - dst);
}

/* ---- Bulk Load verification ------------------------------------------------
 * Once per run, after the timed loop: the table must hold exactly the rows
 * sent, bit for bit. The server folds every row into one number modulo 2^64
 * (numeric arithmetic: i4 + 3 i8 + 5 bits(f8) + 7, 11, 13, 17, 19 times the
 * five 8-byte words of vc); the same fold over the rows here must match. */
static const char COPY_CHECK_SQL[] =
    "WITH w AS (SELECT i4::numeric + 3 * i8::numeric"
    " + 5 * ('x' || encode(float8send(f8), 'hex'))::bit(64)::int8::numeric"
    " + 7 * ('x' || encode(substr(convert_to(vc, 'UTF8'), 1, 8), 'hex'))::bit(64)::int8::numeric"
    " + 11 * ('x' || encode(substr(convert_to(vc, 'UTF8'), 9, 8), 'hex'))::bit(64)::int8::numeric"
    " + 13 * ('x' || encode(substr(convert_to(vc, 'UTF8'), 17, 8), 'hex'))::bit(64)::int8::numeric"
    " + 17 * ('x' || encode(substr(convert_to(vc, 'UTF8'), 25, 8), 'hex'))::bit(64)::int8::numeric"
    " + 19 * ('x' || encode(substr(convert_to(vc, 'UTF8'), 33, 8), 'hex'))::bit(64)::int8::numeric"
    " AS v FROM bench_copy)"
    " SELECT count(*), mod(mod(coalesce(sum(v), 0), 18446744073709551616) + 18446744073709551616,"
    " 18446744073709551616)::text FROM w";

static uint64_t load_be64(const char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | (uint8_t)p[i];
    return v;
}

int bench_copy_verify(const bench_env_t *env)
{
    const char *k[] = {"host", "port", "user", "dbname", "sslmode", "gssencmode", NULL};
    const char *v[] = {env->host, env->port, env->user, env->db, "disable", "disable", NULL};
    bench_copy_row_t *rows = bench_copy_rows(bench_sz.copy_rows);
    uint64_t want = 0;
    for (int i = 0; i < bench_sz.copy_rows; i++) {
        const bench_copy_row_t *r = &rows[i];
        uint64_t bits;
        memcpy(&bits, &r->f8, 8);
        want += (uint64_t)(int64_t)r->i4 + 3 * (uint64_t)r->i8 + 5 * bits;
        static const uint64_t weight[5] = {7, 11, 13, 17, 19};
        for (int w = 0; w < 5; w++)
            want += weight[w] * load_be64(r->vc + 8 * w);
    }
    free(rows);
    char expect[32];
    snprintf(expect, sizeof expect, "%llu", (unsigned long long)want);

    int rc = 0;
    PGconn *c = PQconnectdbParams(k, v, 0);
    PGresult *res = PQstatus(c) == CONNECTION_OK ? PQexec(c, COPY_CHECK_SQL) : NULL;
    if (!res || PQresultStatus(res) != PGRES_TUPLES_OK)
        rc = bench_fail("copy check: %s", PQerrorMessage(c));
    else if (atol(PQgetvalue(res, 0, 0)) != bench_sz.copy_rows)
        rc = bench_fail("copy check: the table holds %s rows, expected %d", PQgetvalue(res, 0, 0),
                        bench_sz.copy_rows);
    else if (strcmp(PQgetvalue(res, 0, 1), expect) != 0)
        rc = bench_fail("copy check: server checksum %s, expected %s", PQgetvalue(res, 0, 1),
                        expect);
    PQclear(res);
    PQfinish(c);
    return rc;
}

/* ---- text decoders ---------------------------------------------------------- */
int64_t bench_parse_i64(const char *s, size_t len, int *ok)
{
    size_t i = 0;
    int neg = 0;
    uint64_t v = 0;
    if (len && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == len) *ok = 0;
    for (; i < len; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9) {
            *ok = 0;
            return 0;
        }
        v = v * 10 + d;
    }
    return neg ? (int64_t)(0 - v) : (int64_t)v;
}

double bench_parse_f64(const char *s, int *ok)
{
    char *end;
    double d = strtod(s, &end);
    if (end == s) *ok = 0;
    return d;
}

static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const char *s, size_t n, int *ok)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9) *ok = 0;
        v = v * 10 + (int)d;
    }
    return v;
}

int64_t bench_parse_ts(const char *s, size_t len, int *ok)
{
    if (len < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' || s[16] != ':') {
        *ok = 0;
        return 0;
    }
    int y = digits(s, 4, ok), mo = digits(s + 5, 2, ok), d = digits(s + 8, 2, ok);
    int h = digits(s + 11, 2, ok), mi = digits(s + 14, 2, ok), se = digits(s + 17, 2, ok);
    size_t i = 19;
    int64_t frac = 0;
    if (i < len && s[i] == '.') {
        int scale = 0;
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, scale++)
            frac = frac * 10 + (s[i] - '0');
        for (; scale < 6; scale++)
            frac *= 10;
    }
    int64_t off = 0;
    if (i < len && (s[i] == '+' || s[i] == '-')) {
        int sign = s[i] == '-' ? -1 : 1;
        int oh = len >= i + 3 ? digits(s + i + 1, 2, ok) : (*ok = 0);
        int om = 0, os = 0;
        i += 3;
        if (i + 3 <= len && s[i] == ':') {
            om = digits(s + i + 1, 2, ok);
            i += 3;
        }
        if (i + 3 <= len && s[i] == ':') {
            os = digits(s + i + 1, 2, ok);
            i += 3;
        }
        off = sign * (int64_t)(oh * 3600 + om * 60 + os);
    }
    int64_t days = days_from_civil(y, mo, d) - 10957; /* 2000-01-01 */
    int64_t secs = days * 86400 + h * 3600 + mi * 60 + se - off;
    return secs * 1000000 + frac;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

long bench_unhex(const char *s, size_t len, uint8_t *dst, size_t cap)
{
    if (len < 2 || s[0] != '\\' || s[1] != 'x' || (len & 1)) return -1;
    size_t n = (len - 2) / 2;
    if (n > cap) return -1;
    for (size_t i = 0; i < n; i++) {
        int hi = hexval(s[2 + 2 * i]), lo = hexval(s[3 + 2 * i]);
        if (hi < 0 || lo < 0) return -1;
        dst[i] = (uint8_t)(hi << 4 | lo);
    }
    return (long)n;
}

/* ---- suite C: the classic speed test, written from its test names ------------ */
static const char *ones[] = {"",        "one",     "two",       "three",    "four",
                             "five",    "six",     "seven",     "eight",    "nine",
                             "ten",     "eleven",  "twelve",    "thirteen", "fourteen",
                             "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
static const char *tens[] = {"",      "ten",   "twenty",  "thirty", "forty",
                             "fifty", "sixty", "seventy", "eighty", "ninety"};

static void number_name(long n, char *out, size_t cap)
{
    char buf[256] = "";
    size_t len = 0;
#define APPEND(str) \
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? " " : "", str)
    if (n >= 1000000000) {
        char sub[256];
        number_name(n / 1000000000, sub, sizeof sub);
        APPEND(sub);
        APPEND("billion");
        n %= 1000000000;
    }
    if (n >= 1000000) {
        char sub[256];
        number_name(n / 1000000, sub, sizeof sub);
        APPEND(sub);
        APPEND("million");
        n %= 1000000;
    }
    if (n >= 1000) {
        char sub[256];
        number_name(n / 1000, sub, sizeof sub);
        APPEND(sub);
        APPEND("thousand");
        n %= 1000;
    }
    if (n >= 100) {
        APPEND(ones[n / 100]);
        APPEND("hundred");
        n %= 100;
    }
    if (n >= 20) {
        APPEND(tens[n / 10]);
        n %= 10;
    }
    if (n > 0) APPEND(ones[n]);
    if (len == 0) APPEND("zero");
#undef APPEND
    snprintf(out, cap, "%s", buf);
}

typedef struct stmt_list {
    bench_c_stmt_t *v;
    int n, cap;
} stmt_list_t;

static void add_stmt(stmt_list_t *l, int expect_rows, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_stmt(stmt_list_t *l, int expect_rows, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, sizeof *l->v * (size_t)l->cap);
        if (!l->v) exit(2);
    }
    l->v[l->n].sql = strdup(tmp);
    l->v[l->n].expect_rows = expect_rows;
    l->n++;
}

static uint64_t c_rng = 1;
static long rnd(long limit)
{
    c_rng = c_rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (long)((c_rng >> 33) % (uint64_t)limit);
}

static int scaled(int n)
{
    int v = (int)(n * bench_sz.c_scale);
    return v < 10 ? 10 : v;
}

/* A multi-row INSERT of n rows in one statement, built in a growing buffer. */
static void add_multirow_insert(stmt_list_t *l, const char *table, int n)
{
    size_t cap = (size_t)n * 96 + 64, len = 0;
    char *sql = bench_xmalloc(cap);
    len += (size_t)snprintf(sql, cap, "INSERT INTO %s VALUES ", table);
    for (int i = 1; i <= n; i++) {
        char name[256];
        long r = rnd(100000);
        number_name(r, name, sizeof name);
        len +=
            (size_t)snprintf(sql + len, cap - len, "%s(%d,%ld,'%s')", i > 1 ? "," : "", i, r, name);
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, sizeof *l->v * (size_t)l->cap);
        if (!l->v) exit(2);
    }
    l->v[l->n].sql = sql;
    l->v[l->n].expect_rows = -1;
    l->n++;
}

bench_c_test_t *bench_c_tests(int *ntests)
{
    static bench_c_test_t tests[18];
    static int built;
    int n = 0;
    if (built) {
        *ntests = built;
        return tests;
    }
    c_rng = 1;
    int n1 = scaled(1000), n2 = scaled(25000), n4 = 100, n7 = scaled(5000), n8 = scaled(1000);
    int n15 = scaled(12000);
    char name[256];
    stmt_list_t l;

#define BEGIN_TEST(tid, title, each)   \
    do {                               \
        memset(&l, 0, sizeof l);       \
        tests[n].id = tid;             \
        tests[n].sync_each = each;     \
        tests[n].name = strdup(title); \
    } while (0)
#define END_TEST()             \
    do {                       \
        tests[n].stmts = l.v;  \
        tests[n].nstmts = l.n; \
        n++;                   \
    } while (0)
    char title[128];

    snprintf(title, sizeof title, "Test 1: %d INSERTs", n1);
    BEGIN_TEST("1", title, 1);
    add_stmt(&l, -1, "CREATE TABLE t1(a INTEGER, b INTEGER, c VARCHAR(100))");
    for (int i = 1; i <= n1; i++) {
        long r = rnd(100000);
        number_name(r, name, sizeof name);
        add_stmt(&l, -1, "INSERT INTO t1 VALUES(%d,%ld,'%s')", i, r, name);
    }
    END_TEST();

    snprintf(title, sizeof title, "Test 2: %d INSERTs in a transaction", n2);
    BEGIN_TEST("2", title, 0);
    add_stmt(&l, -1, "BEGIN");
    add_stmt(&l, -1, "CREATE TABLE t2(a INTEGER, b INTEGER, c VARCHAR(100))");
    for (int i = 1; i <= n2; i++) {
        long r = rnd(100000);
        number_name(r, name, sizeof name);
        add_stmt(&l, -1, "INSERT INTO t2 VALUES(%d,%ld,'%s')", i, r, name);
    }
    add_stmt(&l, -1, "COMMIT");
    END_TEST();

    snprintf(title, sizeof title, "Test 2.1: %d INSERTs in single statement", n2);
    BEGIN_TEST("2.1", title, 0);
    add_stmt(&l, -1, "CREATE TABLE t2_1(a INTEGER, b INTEGER, c VARCHAR(100))");
    add_multirow_insert(&l, "t2_1", n2);
    END_TEST();

    snprintf(title, sizeof title, "Test 3: %d INSERTs into an indexed table", n2);
    BEGIN_TEST("3", title, 0);
    add_stmt(&l, -1, "BEGIN");
    add_stmt(&l, -1, "CREATE TABLE t3(a INTEGER, b INTEGER, c VARCHAR(100))");
    add_stmt(&l, -1, "CREATE INDEX i3 ON t3(c)");
    for (int i = 1; i <= n2; i++) {
        long r = rnd(100000);
        number_name(r, name, sizeof name);
        add_stmt(&l, -1, "INSERT INTO t3 VALUES(%d,%ld,'%s')", i, r, name);
    }
    add_stmt(&l, -1, "COMMIT");
    END_TEST();

    snprintf(title, sizeof title, "Test 3.1: %d INSERTs into an indexed table in single statement",
             n2);
    BEGIN_TEST("3.1", title, 0);
    add_stmt(&l, -1, "CREATE TABLE t3_1(a INTEGER, b INTEGER, c VARCHAR(100))");
    add_stmt(&l, -1, "CREATE INDEX i3_1 ON t3_1(c)");
    add_multirow_insert(&l, "t3_1", n2);
    END_TEST();

    BEGIN_TEST("4", "Test 4: 100 SELECTs without an index", 0);
    add_stmt(&l, -1, "BEGIN");
    for (int i = 0; i < n4; i++)
        add_stmt(&l, 1, "SELECT count(*), avg(b) FROM t2 WHERE b>=%d AND b<%d", i * 100,
                 i * 100 + 1000);
    add_stmt(&l, -1, "COMMIT");
    END_TEST();

    BEGIN_TEST("5", "Test 5: 100 SELECTs on a string comparison", 0);
    add_stmt(&l, -1, "BEGIN");
    for (int i = 1; i <= n4; i++) {
        number_name(i, name, sizeof name);
        add_stmt(&l, 1, "SELECT count(*), avg(b) FROM t2 WHERE c LIKE '%%%s%%'", name);
    }
    add_stmt(&l, -1, "COMMIT");
    END_TEST();

    BEGIN_TEST("6", "Test 6: Creating indexes", 1);
    add_stmt(&l, -1, "CREATE INDEX i2a ON t2(a)");
    add_stmt(&l, -1, "CREATE INDEX i2b ON t2(b)");
    END_TEST();

    snprintf(title, sizeof title, "Test 7: %d SELECTs with an index", n7);
    BEGIN_TEST("7", title, 0);
    add_stmt(&l, -1, "BEGIN");
    for (int i = 0; i < n7; i++)
        add_stmt(&l, 1, "SELECT count(*), avg(b) FROM t2 WHERE b>=%d AND b<%d", i * 100,
                 i * 100 + 100);
    add_stmt(&l, -1, "COMMIT");
    END_TEST();

    snprintf(title, sizeof title, "Test 8: %d UPDATEs without an index", n8);
    BEGIN_TEST("8", title, 0);
    add_stmt(&l, -1, "BEGIN");
    for (int i = 0; i < n8; i++)
        add_stmt(&l, -1, "UPDATE t1 SET b=b*2 WHERE a>=%d AND a<%d", i * 10, i * 10 + 10);
    add_stmt(&l, -1, "COMMIT");
    END_TEST();

    snprintf(title, sizeof title, "Test 9: %d UPDATEs with an index", n2);
    BEGIN_TEST("9", title, 0);
    add_stmt(&l, -1, "BEGIN");
    for (int i = 1; i <= n2; i++)
        add_stmt(&l, -1, "UPDATE t2 SET b=%ld WHERE a=%d", rnd(100000), i);
    add_stmt(&l, -1, "COMMIT");
    END_TEST();

    snprintf(title, sizeof title, "Test 10: %d text UPDATEs with an index", n2);
    BEGIN_TEST("10", title, 0);
    add_stmt(&l, -1, "BEGIN");
    for (int i = 1; i <= n2; i++) {
        number_name(rnd(100000), name, sizeof name);
        add_stmt(&l, -1, "UPDATE t2 SET c='%s' WHERE a=%d", name, i);
    }
    add_stmt(&l, -1, "COMMIT");
    END_TEST();

    BEGIN_TEST("11", "Test 11: INSERTs from a SELECT", 0);
    add_stmt(&l, -1, "BEGIN");
    add_stmt(&l, -1, "INSERT INTO t1 SELECT b,a,c FROM t2");
    add_stmt(&l, -1, "INSERT INTO t2 SELECT b,a,c FROM t1");
    add_stmt(&l, -1, "COMMIT");
    END_TEST();

    BEGIN_TEST("12", "Test 12: DELETE without an index", 1);
    add_stmt(&l, -1, "DELETE FROM t2 WHERE c LIKE '%%fifty%%'");
    END_TEST();

    BEGIN_TEST("13", "Test 13: DELETE with an index", 1);
    add_stmt(&l, -1, "DELETE FROM t2 WHERE a>10 AND a<20000");
    END_TEST();

    BEGIN_TEST("14", "Test 14: A big INSERT after a big DELETE", 1);
    add_stmt(&l, -1, "INSERT INTO t2 SELECT * FROM t1");
    END_TEST();

    snprintf(title, sizeof title, "Test 15: A big DELETE followed by %d small INSERTs", n15);
    BEGIN_TEST("15", title, 0);
    add_stmt(&l, -1, "BEGIN");
    add_stmt(&l, -1, "DELETE FROM t1");
    for (int i = 1; i <= n15; i++) {
        long r = rnd(100000);
        number_name(r, name, sizeof name);
        add_stmt(&l, -1, "INSERT INTO t1 VALUES(%d,%ld,'%s')", i, r, name);
    }
    add_stmt(&l, -1, "COMMIT");
    END_TEST();

    BEGIN_TEST("16", "Test 16: DROP TABLE", 1);
    add_stmt(&l, -1, "DROP TABLE t1");
    add_stmt(&l, -1, "DROP TABLE t2");
    add_stmt(&l, -1, "DROP TABLE t2_1");
    add_stmt(&l, -1, "DROP TABLE t3");
    add_stmt(&l, -1, "DROP TABLE t3_1");
    END_TEST();
#undef BEGIN_TEST
#undef END_TEST
    built = n;
    *ntests = n;
    return tests;
}
