/*
 * Shared by the differential programs of tests/pq/diff: each program is
 * written against libpq's libpq-fe.h alone, is built once, and is run twice
 * by run-diff.sh, once on Debian's libpq and once with the loader pointed at
 * libpgwire-pq's libpq.so.5; the two outputs must be identical.
 *
 * So everything printed here must be the same on every run of the same
 * program against the same cluster: no PIDs, OIDs of objects the program
 * creates, timings, addresses. Where such a value matters, its shape is
 * printed instead ("set" / "0").
 *
 * The server comes from the environment the driver sets from the pgcluster
 * fixture's env file (PGHOST, PGPORT, PGUSER, PGDATABASE and the
 * PGW_TEST_* roles); the connection is made with explicit keywords, so the
 * environment defaults are exercised by one program only (conninfo).
 */
#ifndef PQDIFF_H
#define PQDIFF_H

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libpq-fe.h>

/* Output is line-buffered through one stream: stdout and stderr go to the
 * same pipe in the driver, and the program never writes to stderr itself. */
static inline void pqd_init(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline const char *pqd_env(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

/* The random programs' generator: pqd_seed from the environment variable
 * name (default def), then pqd_next(n) in [0, n). The same seed gives the
 * same sequence in both runs of a program. */
static uint64_t pqd_rng;

static inline void pqd_seed(const char *name, const char *def)
{
    pqd_rng = strtoull(pqd_env(name, def), NULL, 10);
}

static inline unsigned pqd_next(unsigned n)
{
    pqd_rng = pqd_rng * 6364136223846793005u + 1442695040888963407u;
    return (unsigned)(pqd_rng >> 33) % n;
}

/* Bytes as printable text: C escapes for anything outside printable ASCII. */
static inline void pqd_print_escaped(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n')
            fputs("\\n", stdout);
        else if (c == '\t')
            fputs("\\t", stdout);
        else if (c == '\\')
            fputs("\\\\", stdout);
        else if (c < 0x20 || c >= 0x7f)
            printf("\\x%02x", c);
        else
            putchar(c);
    }
}

static inline void pqd_print_str(const char *label, const char *s)
{
    printf("%s=", label);
    if (!s) {
        fputs("(null)\n", stdout);
        return;
    }
    putchar('[');
    pqd_print_escaped(s, strlen(s));
    fputs("]\n", stdout);
}

static inline void pqd_print_hex(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        printf("%02x", (unsigned char)s[i]);
}

/* s[0..len) through the escaping functions of conn's client encoding:
 * PQescapeLiteral, PQescapeIdentifier, PQescapeStringConn (its error flag
 * too), each with PQerrorMessage when it failed, then PQmblen,
 * PQmblenBounded and PQdsplen at every byte. */
static inline void pqd_print_escapes(PGconn *conn, const char *s, size_t len)
{
    int enc = PQclientEncoding(conn);
    printf("input ");
    pqd_print_escaped(s, len);
    printf(" (len %zu)\n", len);
    char *lit = PQescapeLiteral(conn, s, len);
    pqd_print_str("  literal", lit);
    if (!lit) pqd_print_str("    error", PQerrorMessage(conn));
    PQfreemem(lit);
    char *id = PQescapeIdentifier(conn, s, len);
    pqd_print_str("  identifier", id);
    if (!id) pqd_print_str("    error", PQerrorMessage(conn));
    PQfreemem(id);
    char *buf = malloc(2 * len + 1);
    if (!buf) return;
    int error = -1;
    memset(buf, '#', 2 * len + 1);
    size_t n = PQescapeStringConn(conn, buf, s, len, &error);
    printf("  stringConn -> %zu error=%d", n, error);
    pqd_print_str(" out", buf);
    if (error) pqd_print_str("    error", PQerrorMessage(conn));
    free(buf);
    printf("  mblen:");
    for (size_t k = 0; k < len; k++)
        printf(" %d/%d/%d", PQmblen(s + k, enc), PQmblenBounded(s + k, enc), PQdsplen(s + k, enc));
    putchar('\n');
}

/* Connects with explicit keywords from the environment; extra pairs (NULL
 * terminated, key then value) override or add to them. */
/* Waits until the server's whole answer, through its ReadyForQuery, is in
 * the socket's buffer, unread: either library then reads it in one go. (The
 * server flushes an error at once, before the ReadyForQuery behind it.) */
static inline void pqd_await_whole_answer(PGconn *conn)
{
    static char buf[65536];
    for (;;) {
        ssize_t n = recv(PQsocket(conn), buf, sizeof buf, MSG_PEEK);
        if (n >= 6 && memcmp(buf + n - 6, "Z\0\0\0\5", 5) == 0) return;
        usleep(1000);
    }
}

static inline PGconn *pqd_connect_with(const char *const *extra)
{
    const char *keys[32], *vals[32];
    int n = 0;
    keys[n] = "host", vals[n++] = pqd_env("PGHOST", NULL);
    keys[n] = "port", vals[n++] = pqd_env("PGPORT", NULL);
    keys[n] = "user", vals[n++] = pqd_env("PGUSER", NULL);
    keys[n] = "dbname", vals[n++] = pqd_env("PGDATABASE", NULL);
    for (int i = 0; extra && extra[i] && n < 30; i += 2) {
        int j;
        for (j = 0; j < n && strcmp(keys[j], extra[i]) != 0; j++)
            ;
        keys[j] = extra[i], vals[j] = extra[i + 1];
        if (j == n) n++;
    }
    keys[n] = NULL, vals[n] = NULL;
    return PQconnectdbParams(keys, vals, 0);
}

/* A connection the program needs: anything else ends the program. */
static inline PGconn *pqd_connect(void)
{
    PGconn *conn = pqd_connect_with(NULL);
    if (PQstatus(conn) != CONNECTION_OK) {
        printf("connect failed: %s", PQerrorMessage(conn));
        exit(1);
    }
    return conn;
}

static const struct {
    int code;
    const char *name;
} pqd_diag_fields[] = {
    {PG_DIAG_SEVERITY, "SEVERITY"},
    {PG_DIAG_SEVERITY_NONLOCALIZED, "SEVERITY_NONLOCALIZED"},
    {PG_DIAG_SQLSTATE, "SQLSTATE"},
    {PG_DIAG_MESSAGE_PRIMARY, "MESSAGE_PRIMARY"},
    {PG_DIAG_MESSAGE_DETAIL, "MESSAGE_DETAIL"},
    {PG_DIAG_MESSAGE_HINT, "MESSAGE_HINT"},
    {PG_DIAG_STATEMENT_POSITION, "STATEMENT_POSITION"},
    {PG_DIAG_INTERNAL_POSITION, "INTERNAL_POSITION"},
    {PG_DIAG_INTERNAL_QUERY, "INTERNAL_QUERY"},
    {PG_DIAG_CONTEXT, "CONTEXT"},
    {PG_DIAG_SCHEMA_NAME, "SCHEMA_NAME"},
    {PG_DIAG_TABLE_NAME, "TABLE_NAME"},
    {PG_DIAG_COLUMN_NAME, "COLUMN_NAME"},
    {PG_DIAG_DATATYPE_NAME, "DATATYPE_NAME"},
    {PG_DIAG_CONSTRAINT_NAME, "CONSTRAINT_NAME"},
    {PG_DIAG_SOURCE_FILE, "SOURCE_FILE"},
    {PG_DIAG_SOURCE_LINE, "SOURCE_LINE"},
    {PG_DIAG_SOURCE_FUNCTION, "SOURCE_FUNCTION"},
};

/* Every PG_DIAG_* field that is set, and the error message. */
static inline void pqd_print_error_fields(const PGresult *r)
{
    pqd_print_str("  errmsg", PQresultErrorMessage(r));
    for (size_t i = 0; i < sizeof pqd_diag_fields / sizeof pqd_diag_fields[0]; i++) {
        const char *v = PQresultErrorField(r, pqd_diag_fields[i].code);
        if (v) {
            printf("  diag.%s", pqd_diag_fields[i].name);
            pqd_print_str("", v);
        }
    }
}

/* Everything a PGresult tells through its accessors. */
static inline void pqd_print_result(const char *label, const PGresult *r)
{
    if (!r) {
        printf("%s: NULL\n", label);
        return;
    }
    ExecStatusType st = PQresultStatus(r);
    int nf = PQnfields(r), nt = PQntuples(r);
    printf("%s: %s ntuples=%d nfields=%d binary=%d nparams=%d oid=%u\n", label, PQresStatus(st), nt,
           nf, PQbinaryTuples(r), PQnparams(r), PQoidValue(r));
    pqd_print_str("  cmdStatus", PQcmdStatus((PGresult *)r));
    pqd_print_str("  cmdTuples", PQcmdTuples((PGresult *)r));
    for (int p = 0; p < PQnparams(r); p++)
        printf("  param %d type=%u\n", p, PQparamtype(r, p));
    for (int f = 0; f < nf; f++) {
        const char *name = PQfname(r, f);
        printf("  field %d", f);
        pqd_print_str(" name", name);
        printf("    fnumber=%d type=%u mod=%d size=%d format=%d table=%s tablecol=%d\n",
               name ? PQfnumber(r, name) : -9, PQftype(r, f), PQfmod(r, f), PQfsize(r, f),
               PQfformat(r, f), PQftable(r, f) ? "set" : "0", PQftablecol(r, f));
    }
    for (int t = 0; t < nt; t++) {
        for (int f = 0; f < nf; f++) {
            printf("  [%d,%d] ", t, f);
            if (PQgetisnull(r, t, f)) {
                printf("NULL len=%d value=%s\n", PQgetlength(r, t, f),
                       PQgetvalue(r, t, f) && *PQgetvalue(r, t, f) == 0 ? "\"\"" : "?");
                continue;
            }
            int len = PQgetlength(r, t, f);
            const char *v = PQgetvalue(r, t, f);
            printf("len=%d ", len);
            if (PQfformat(r, f) == 1) {
                fputs("hex=", stdout);
                pqd_print_hex(v, (size_t)len);
            } else {
                putchar('[');
                pqd_print_escaped(v, (size_t)len);
                putchar(']');
                if (strlen(v) != (size_t)len) printf(" strlen=%zu", strlen(v));
            }
            putchar('\n');
        }
    }
    /* Out-of-range accessors: libpq answers with defaults. (Not on COPY
     * results: their columns have no names and libpq's PQfnumber would
     * compare with NULL.) */
    if ((nf > 0 || nt > 0) && (nf == 0 || PQfname(r, 0))) {
        printf("  oob: fname=%s ftype=%u fmod=%d getvalue=%s getlength=%d isnull=%d fnumber=%d\n",
               PQfname(r, nf) ? "set" : "(null)", PQftype(r, nf), PQfmod(r, nf),
               PQgetvalue(r, nt, 0) ? "set" : "(null)", PQgetlength(r, nt, 0),
               PQgetisnull(r, nt, 0), PQfnumber(r, "no such column"));
    }
    if (st == PGRES_FATAL_ERROR || st == PGRES_NONFATAL_ERROR || PQresultErrorMessage(r)[0])
        pqd_print_error_fields(r);
}

/* Prints the result under label and frees it. */
static inline void pqd_show(const char *label, PGresult *r)
{
    pqd_print_result(label, r);
    PQclear(r);
}

/* One line for r, then frees it: status, row count, column names, tag and
 * primary message, not the values (a replication command's positions and
 * timeline change from run to run). */
static inline void pqd_show_shape(const char *label, PGresult *r)
{
    printf("%s: %s", label, r ? PQresStatus(PQresultStatus(r)) : "NULL");
    if (r) {
        printf(" tuples %d fields", PQntuples(r));
        for (int i = 0; i < PQnfields(r); i++)
            printf(" %s", PQfname(r, i));
        printf(" cmd [%s]", PQcmdStatus(r));
        const char *e = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
        if (e) printf(" error [%s]", e);
    }
    printf("\n");
    PQclear(r);
}

/* An error result: pqd_print_result, PQresultVerboseErrorMessage at every
 * verbosity and context visibility, PQerrorMessage; clears r. */
static inline void pqd_show_error(PGconn *conn, PGresult *r)
{
    pqd_print_result("  ->", r);
    const PGVerbosity v[] = {PQERRORS_TERSE, PQERRORS_DEFAULT, PQERRORS_VERBOSE, PQERRORS_SQLSTATE};
    const PGContextVisibility c[] = {PQSHOW_CONTEXT_NEVER, PQSHOW_CONTEXT_ERRORS,
                                     PQSHOW_CONTEXT_ALWAYS};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) {
            char *m = PQresultVerboseErrorMessage(r, v[i], c[j]);
            printf("  verbose(%d,%d)", (int)v[i], (int)c[j]);
            pqd_print_str("", m);
            PQfreemem(m);
        }
    pqd_print_str("  PQerrorMessage", PQerrorMessage(conn));
    PQclear(r);
}

static inline void pqd_exec(PGconn *conn, const char *sql)
{
    printf("exec ");
    pqd_print_str("sql", sql);
    pqd_show("  ->", PQexec(conn, sql));
}

/* PQgetResult until NULL (included), printing each. */
static inline void pqd_drain(PGconn *conn, const char *label)
{
    PGresult *r;
    int i = 0;
    do {
        char l[64];
        r = PQgetResult(conn);
        snprintf(l, sizeof l, "%s#%d", label, i++);
        pqd_print_result(l, r);
        PQclear(r);
    } while (r);
}

static inline const char *pqd_txstatus(PGTransactionStatusType t)
{
    switch (t) {
    case PQTRANS_IDLE:
        return "IDLE";
    case PQTRANS_ACTIVE:
        return "ACTIVE";
    case PQTRANS_INTRANS:
        return "INTRANS";
    case PQTRANS_INERROR:
        return "INERROR";
    case PQTRANS_UNKNOWN:
        return "UNKNOWN";
    }
    return "?";
}

static inline const char *pqd_connstatus(ConnStatusType s)
{
    static char buf[32];
    switch (s) {
    case CONNECTION_OK:
        return "CONNECTION_OK";
    case CONNECTION_BAD:
        return "CONNECTION_BAD";
    default:
        snprintf(buf, sizeof buf, "CONNECTION_%d", (int)s);
        return buf;
    }
}

static inline const char *pqd_pipestatus(PGpipelineStatus s)
{
    switch (s) {
    case PQ_PIPELINE_OFF:
        return "OFF";
    case PQ_PIPELINE_ON:
        return "ON";
    case PQ_PIPELINE_ABORTED:
        return "ABORTED";
    }
    return "?";
}

/* A notice processor that prints what it is given. */
static inline void pqd_notice_printer(void *arg, const char *message)
{
    printf("notice(%s): ", arg ? (const char *)arg : "-");
    pqd_print_escaped(message, strlen(message));
    putchar('\n');
}

/* The pipeline and transaction status, labelled. */
static inline void pqd_pipeline_status(PGconn *conn, const char *when)
{
    printf("-- %s: pipeline=%s tx=%s\n", when, pqd_pipestatus(PQpipelineStatus(conn)),
           pqd_txstatus(PQtransactionStatus(conn)));
}

/* Reads and prints results until `syncs` PGRES_PIPELINE_SYNC were seen
 * (at most 100 results). */
static inline void pqd_read_until_syncs(PGconn *conn, int syncs)
{
    int n = 0;
    while (syncs > 0) {
        char label[32];
        PGresult *r = PQgetResult(conn);
        snprintf(label, sizeof label, "res#%d", n++);
        pqd_print_result(label, r);
        if (r && PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
            syncs--;
            pqd_pipeline_status(conn, "after sync");
        }
        PQclear(r);
        if (n > 100) {
            printf("too many results\n");
            return;
        }
    }
}

/* PQputCopyData, printed. */
static inline void pqd_put_copy(PGconn *conn, const char *data, size_t len)
{
    printf("putCopyData(%zu) -> %d\n", len, PQputCopyData(conn, data, (int)len));
}

/* PQexec(sql) to start a COPY FROM STDIN, data in chunks of chunk bytes,
 * PQputCopyEnd(abort_msg), the results; all printed. */
static inline void pqd_copy_in(PGconn *conn, const char *sql, const char *data, size_t chunk,
                               const char *abort_msg)
{
    printf("== %s\n", sql);
    pqd_show("start", PQexec(conn, sql));
    size_t len = strlen(data);
    for (size_t off = 0; off < len; off += chunk)
        pqd_put_copy(conn, data + off, len - off < chunk ? len - off : chunk);
    printf("putCopyEnd -> %d\n", PQputCopyEnd(conn, abort_msg));
    pqd_drain(conn, "end");
}

/* PQexec(sql) to start a COPY TO STDOUT, then PQgetCopyData (async or
 * not) to the end, each chunk printed, then the results. */
static inline void pqd_copy_out(PGconn *conn, const char *sql, int async)
{
    printf("== %s (async=%d)\n", sql, async);
    pqd_show("start", PQexec(conn, sql));
    for (;;) {
        char *buf = NULL;
        int n = PQgetCopyData(conn, &buf, async);
        if (n == 0) { /* async: wait for more */
            PQconsumeInput(conn);
            usleep(1000);
            continue;
        }
        printf("getCopyData -> %d", n);
        if (n > 0) {
            fputs(" [", stdout);
            pqd_print_escaped(buf, (size_t)n);
            fputs("] hex=", stdout);
            pqd_print_hex(buf, (size_t)n);
        }
        putchar('\n');
        PQfreemem(buf);
        if (n < 0) break;
    }
    printf("errmsg: [%s]\n", PQerrorMessage(conn));
    pqd_drain(conn, "end");
}

#endif
