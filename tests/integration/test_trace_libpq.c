/*
 * Differential protocol traces: the same exchanges run through libpq 15
 * (PQtrace with PQTRACE_SUPPRESS_TIMESTAMPS) and through libpgwire (the
 * connection's on_trace hook, formatted by tests/common/trace.h in libpq's
 * format), against the real server, and the two traces compared line by
 * line, from the startup to the last ReadyForQuery.
 *
 * Normalised, because they legitimately differ between two connections or
 * two client libraries:
 *   - the startup packet: libpq 15 does not decode it (its line says
 *     "Unknown message: length is N") and the two send different
 *     parameters: both become "F\tStartupMessage";
 *   - Authentication: libpq 15 reads the authentication requests inside
 *     PQconnectPoll, where it does not trace them (trust: the one
 *     AuthenticationOk): the line is left out of libpgwire's side;
 *   - BackendKeyData: another backend, another pid and key: "B\t12\t
 *     BackendKeyData\t PID KEY";
 *   - ParameterStatus: the block the server sends at startup is compared as
 *     a set (sorted), since its order is the server's business;
 *   - "session_authorization" and "application_name" values differ when the
 *     libraries identify themselves differently: the application name is
 *     set to the same value on both sides so none of this is needed.
 * Every other line, in both directions, must be identical.
 */
#define _POSIX_C_SOURCE 200809L
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "pgclient.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "trace.h"

#define EXTRA "sslmode=disable gssencmode=disable application_name=pgw_trace"

/* The exchanges, the same on both sides. */
#define SQL_SIMPLE   "SELECT 1 AS one, 'two' AS two, NULL AS three"
#define SQL_EXTENDED "SELECT $1::int4 + 1 AS n, $2::text AS t, $3::bytea AS b"
#define SQL_ERROR    "SELECT * FROM no_such_table"

static const uint8_t bytea_val[] = {0x00, 0x27, 0xff};

/* ------------------------------------------------------------ libpgwire */

static void on_trace(pgw_conn_t *conn, char dir, const uint8_t *msg, size_t len, void *ud)
{
    (void)conn;
    pgt_trace_msg(ud, dir, msg, len);
}

static char *pgwire_trace(void)
{
    char ci[1024];
    pgt_trace_t t;
    pgt_trace_init(&t);
    pgw_conn_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.on_trace = on_trace;
    cfg.ud = &t;
    pgw_client_t *c;
    assert_int_equal(pgw_client_connect(&c, pgt_conninfo(ci, sizeof ci, EXTRA), &cfg), 0);
    pgw_result_t *res = NULL;
    assert_int_equal(pgw_client_exec(c, SQL_SIMPLE, &res), 0);
    pgw_result_free(res);
    pgw_param_t p[] = {pgw_int4(41), pgw_text("hi"), pgw_bytea(bytea_val, 3)};
    assert_int_equal(pgw_client_query(c, SQL_EXTENDED, p, 3, &res), 0);
    pgw_result_free(res);
    assert_int_equal(pgw_client_exec(c, SQL_ERROR, &res), PGW_ESERVER);
    pgw_result_free(res);
    pgw_client_close(c);
    char *text = strdup(pgt_trace_text(&t));
    assert_non_null(text);
    pgt_trace_free(&t);
    return text;
}

/* ---------------------------------------------------------------- libpq */

static char *libpq_trace(void)
{
    char ci[1024];
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    /* Trace from the start: PQconnectStart, then poll. */
    PGconn *conn = PQconnectStart(pgt_conninfo(ci, sizeof ci, EXTRA));
    assert_non_null(conn);
    PQtrace(conn, f);
    PQsetTraceFlags(conn, PQTRACE_SUPPRESS_TIMESTAMPS);
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED) {
        struct pollfd pfd = {PQsocket(conn), st == PGRES_POLLING_READING ? POLLIN : POLLOUT, 0};
        if (poll(&pfd, 1, 30000) != 1) fail_msg("libpq: connect timed out");
        st = PQconnectPoll(conn);
    }
    if (st != PGRES_POLLING_OK) fail_msg("libpq: %s", PQerrorMessage(conn));

    PGresult *r = PQexec(conn, SQL_SIMPLE);
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    PQclear(r);
    /* As libpgwire sends them: binary parameters with their types, binary
     * results. */
    const Oid types[] = {23, 0,
                         17}; /* pgw_text is untyped, like a libpq parameter without a type */
    const uint8_t int4[] = {0, 0, 0, 41};
    const char *values[] = {(const char *)int4, "hi", (const char *)bytea_val};
    const int lengths[] = {4, 2, 3};
    const int formats[] = {1, 0, 1}; /* text goes as text */
    r = PQexecParams(conn, SQL_EXTENDED, 3, types, values, lengths, formats, 1);
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    PQclear(r);
    r = PQexec(conn, SQL_ERROR);
    assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
    PQclear(r);
    PQuntrace(conn);
    PQfinish(conn);
    fclose(f);
    return text;
}

/* ------------------------------------------------------------ normalising */

typedef struct lines {
    char **v;
    size_t n;
} lines_t;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Split text into lines, normalised as the header says; the text is
 * modified in place and the lines point into it. Lines after the last
 * ReadyForQuery (Terminate) are dropped: libpq traces it, pgw_client_close
 * may close before its trace hook sees it. */
static lines_t normalise(char *text)
{
    lines_t l = {NULL, 0};
    size_t cap = 0, last_ready = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (l.n == cap) {
            cap = cap ? cap * 2 : 64;
            l.v = realloc(l.v, cap * sizeof *l.v);
            assert_non_null(l.v);
        }
        if (strncmp(line, "B\t", 2) == 0 && strstr(line, "\tAuthentication\t")) continue;
        if (strncmp(line, "F\t", 2) == 0 &&
            (strstr(line, "\tStartupMessage\t") || strstr(line, "Unknown message: length")))
            line = "F\tStartupMessage";
        else if (strstr(line, "\tBackendKeyData\t"))
            line = "B\t12\tBackendKeyData\t PID KEY";
        l.v[l.n++] = line;
        if (strstr(line, "\tReadyForQuery\t")) last_ready = l.n;
    }
    l.n = last_ready;
    /* Sort each run of ParameterStatus lines. */
    for (size_t i = 0; i < l.n;) {
        size_t j = i;
        while (j < l.n && strstr(l.v[j], "\tParameterStatus\t"))
            j++;
        if (j > i + 1) qsort(l.v + i, j - i, sizeof *l.v, cmp_str);
        i = j > i ? j : i + 1;
    }
    return l;
}

static void test_same_trace_as_libpq(void **state)
{
    (void)state;
    pgt_require_server();
    char *ours = pgwire_trace();
    char *theirs = libpq_trace();
    lines_t a = normalise(ours), b = normalise(theirs);
    size_t n = a.n < b.n ? a.n : b.n;
    size_t queries = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(a.v[i], b.v[i]) != 0)
            fail_msg("line %zu differs:\n  libpgwire: %s\n  libpq:     %s", i + 1, a.v[i], b.v[i]);
        if (strncmp(a.v[i], "F\t", 2) == 0 &&
            (strstr(a.v[i], "\tQuery\t") || strstr(a.v[i], "\tParse\t")))
            queries++;
    }
    if (a.n != b.n)
        fail_msg("libpgwire traced %zu lines, libpq %zu; first extra: %s", a.n, b.n,
                 a.n > b.n ? a.v[n] : b.v[n]);
    assert_int_equal(queries, 3);
    print_message("%zu trace lines identical (startup, simple, extended, error)\n", a.n);
    free(a.v);
    free(b.v);
    free(ours);
    free(theirs);
}

/* ------------------------------------------- the sent messages turned off */

typedef struct counts {
    int sent, received, connected, status, done;
    char last_sent;
} counts_t;

static void count_trace(pgw_conn_t *conn, char dir, const uint8_t *msg, size_t len, void *ud)
{
    (void)conn;
    counts_t *n = ud;
    if (dir == 'F') {
        n->sent++;
        n->last_sent = len ? (char)msg[0] : 0;
    } else {
        n->received++;
    }
}

static void count_connected(pgw_conn_t *conn, int status, const pgw_error_t *err, void *ud)
{
    (void)conn, (void)err;
    counts_t *n = ud;
    n->status = status;
    n->connected++;
}

static void count_done(int status, pgw_result_t *res, void *ud)
{
    counts_t *n = ud;
    n->status = status;
    n->done++;
    pgw_result_free(res);
}

/* pgw_conn_trace_sent(conn, 0) before the connect: the hook sees what the
 * server sends and nothing the client sends, the startup packet included,
 * until it is turned on again; then the next request's messages, its Sync
 * last. */
static void test_trace_sent_switch(void **state)
{
    (void)state;
    pgt_require_server();
    assert_int_equal(pgw_conn_trace_sent(NULL, 0), PGW_EINVAL);
    counts_t n = {0};
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    pgw_conn_config_t cfg;
    pgw_conn_config_init(&cfg);
    cfg.on_trace = count_trace;
    cfg.ud = &n;
    pgw_conn_t *c;
    assert_int_equal(pgw_conn_new(&c, &loop, &cfg), 0);
    assert_int_equal(pgw_conn_trace_sent(c, 0), 0);
    char ci[1024];
    assert_int_equal(pgw_conn_connect(c, pgt_conninfo(ci, sizeof ci, EXTRA), count_connected, &n),
                     0);
    assert_true(pgt_loop_run_until(&loop, &n.connected, 1, 60000));
    assert_int_equal(n.status, 0);
    assert_int_equal(n.sent, 0);
    assert_true(n.received > 0); /* AuthenticationOk ... ReadyForQuery */

    int before = n.received;
    pgw_request_t r = PGW_QUERY(SQL_SIMPLE, NULL, 0, count_done, &n);
    assert_int_equal(pgw_conn_submit(c, &r), 0);
    assert_true(pgt_loop_run_until(&loop, &n.done, 1, 60000));
    assert_int_equal(n.status, 0);
    assert_int_equal(n.sent, 0);
    assert_true(n.received >= before + 3); /* at least RowDescription, DataRow, ReadyForQuery */

    assert_int_equal(pgw_conn_trace_sent(c, 1), 0);
    assert_int_equal(pgw_conn_submit(c, &r), 0);
    assert_true(pgt_loop_run_until(&loop, &n.done, 2, 60000));
    assert_int_equal(n.status, 0);
    assert_true(n.sent >= 3); /* at least Bind, Execute and Sync */
    assert_int_equal(n.last_sent, 'S');

    assert_int_equal(pgw_conn_close(c, NULL, NULL), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_trace_as_libpq),
        cmocka_unit_test(test_trace_sent_switch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
