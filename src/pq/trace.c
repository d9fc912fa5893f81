/*
 * Protocol trace (PQtrace, PQsetTraceFlags, PQuntrace): every message of the
 * connection written to the caller's stream as libpq 15 writes it, each
 * line libpgwire's trace formatter in libpq's form (src/proto/trace.c),
 * after libpq's wall-clock timestamp unless PQTRACE_SUPPRESS_TIMESTAMPS.
 *
 * The messages come from the session's trace hook (conn.c's on_trace), at
 * the points where libpq 15 traces them: a frontend message when it is
 * complete in the output buffer, a backend message when it is parsed. The
 * stream is written with stdio and flushed only by PQuntrace, as libpq's.
 *
 * What libpq 15 leaves out, left out here too: SSLRequest and
 * GSSENCRequest (written past its trace), every server message up to and
 * including AuthenticationOk (read by the connect state machine, which
 * does not trace), and the server's CopyData (handed to PQgetCopyData
 * without tracing; the client's CopyData is traced, by its length). The StartupMessage and password
 * messages it does trace, with no layout for them ("Unknown message").
 */
#define _GNU_SOURCE
#include "pq/conn_internal.h"

#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include "proto/trace_internal.h"
#include "util/internal.h"

void PQtrace(PGconn *conn, FILE *debug_port)
{
    if (!conn) return;
    PQuntrace(conn);
    if (!debug_port) return;
    conn->trace_file = debug_port;
    conn->trace_flags = 0;
    pgw_conn_trace_sent(conn->conn, 1);
    pgw_conn_trace_received(conn->conn, 1);
}

void PQuntrace(PGconn *conn)
{
    if (!conn) return;
    if (conn->trace_file) {
        fflush(conn->trace_file);
        conn->trace_file = NULL;
    }
    conn->trace_flags = 0;
    pgw_conn_trace_sent(conn->conn, 0);
    /* until AuthenticationOk came, the tracer still watches for it */
    pgw_conn_trace_received(conn->conn, !conn->trace_backend);
}

void PQsetTraceFlags(PGconn *conn, int flags)
{
    /* libpq: only for a trace PQtrace started */
    if (!conn || !conn->trace_file) return;
    conn->trace_flags = flags;
}

/* libpq's timestamp: local wall-clock time with microseconds, then a tab. */
static void put_timestamp(FILE *f)
{
    struct timeval tv;
    struct tm tm;
    char when[64];
    gettimeofday(&tv, NULL);
    time_t now = tv.tv_sec;
    if (!localtime_r(&now, &tm) || !strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm))
        when[0] = '\0';
    fprintf(f, "%s.%06u\t", when, (unsigned)tv.tv_usec);
}

/* Whether libpq 15 traces this message (see the top of this file). */
static int libpq_traces(PGconn *conn, char direction, const uint8_t *msg, size_t len)
{
    if (direction == 'F') return !(len == 8 && msg[0] == 0); /* SSL/GSSENCRequest */
    if (conn->trace_backend) return msg[0] != 'd';
    if (len >= 9 && msg[0] == 'R' && pgw__get32(msg + 5) == 0) conn->trace_backend = 1;
    return 0;
}

void pq__trace_message(PGconn *conn, char direction, const uint8_t *msg, size_t len)
{
    if (!libpq_traces(conn, direction, msg, len) || !conn->trace_file) return;
    pgw__trace_t fmt;
    pgw__trace_init(&fmt, conn->trace_flags & PQTRACE_REGRESS_MODE ? PGW__TRACE_REGRESS : 0);
    pgw_buf_t line;
    pgw_buf_init(&line, NULL);
    /* Out of memory: the line is missing, as nothing here may fail a call. */
    if (pgw__trace_format(&fmt, &line, direction, msg, len) == 0) {
        if (!(conn->trace_flags & PQTRACE_SUPPRESS_TIMESTAMPS)) put_timestamp(conn->trace_file);
        fwrite(line.data, 1, line.len, conn->trace_file);
    }
    pgw_buf_free(&line);
}
