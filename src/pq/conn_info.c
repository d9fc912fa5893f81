/*
 * What a PGconn tells about itself: its options, the server's parameters,
 * status, TLS and GSSAPI, the client encoding.
 */
#define _GNU_SOURCE
#include "pq/conn_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sys/time.h>
#include <pwd.h>
#include <unistd.h>

#include "pgwire/conninfo.h"

/* libpq 17's time type */
typedef int64_t pg_usec_time_t;

static const char *opt(const PGconn *conn, const char *kw)
{
    return conn ? pgw_conninfo_get(conn->ci, kw) : NULL;
}

static pgw_session_t *session_of(const PGconn *conn)
{
    return conn && conn->conn && conn->status == CONNECTION_OK ? pgw_conn_session(conn->conn)
                                                               : NULL;
}

char *PQdb(const PGconn *conn)
{
    return conn ? (char *)opt(conn, "dbname") : NULL;
}

char *PQuser(const PGconn *conn)
{
    return conn ? (char *)opt(conn, "user") : NULL;
}

char *PQpass(const PGconn *conn)
{
    if (!conn) return NULL;
    const char *p = opt(conn, "password");
    if (!p && conn->ci) {
        pgw_host_t h;
        if (pgw_conninfo_host(conn->ci, 0, &h) == 0) p = pgw_conninfo_password(conn->ci, &h);
    }
    return (char *)(p ? p : "");
}

char *PQhost(const PGconn *conn)
{
    if (!conn) return NULL;
    if (conn->host_used && conn->status == CONNECTION_OK) return conn->host_used;
    if (conn->ci) {
        pgw_host_t h;
        if (pgw_conninfo_host(conn->ci, 0, &h) == 0) {
            if (h.host && *h.host) return (char *)h.host;
            if (h.hostaddr && *h.hostaddr) return (char *)h.hostaddr;
        }
    }
    return "";
}

char *PQhostaddr(const PGconn *conn)
{
    if (!conn) return NULL;
    return conn->hostaddr_used ? conn->hostaddr_used : "";
}

char *PQport(const PGconn *conn)
{
    if (!conn) return NULL;
    if (conn->port_used && conn->status == CONNECTION_OK) return conn->port_used;
    const char *p = opt(conn, "port");
    return (char *)(p ? p : "");
}

char *PQtty(const PGconn *conn)
{
    return conn ? "" : NULL;
}

char *PQoptions(const PGconn *conn)
{
    if (!conn) return NULL;
    const char *p = opt(conn, "options");
    return (char *)(p ? p : "");
}

PGTransactionStatusType PQtransactionStatus(const PGconn *conn)
{
    pgw_session_t *s = session_of(conn);
    if (!s) return PQTRANS_UNKNOWN;
    /* busy until libpq would have parsed the command's end (exec.c) */
    if ((conn->head && !pq__head_over(conn)) || conn->copy != PQ_COPY_NONE) return PQTRANS_ACTIVE;
    switch (pgw_session_txn_status(s)) {
    case 'I':
        return PQTRANS_IDLE;
    case 'T':
        return PQTRANS_INTRANS;
    case 'E':
        return PQTRANS_INERROR;
    default:
        return PQTRANS_UNKNOWN;
    }
}

const char *PQparameterStatus(const PGconn *conn, const char *paramName)
{
    if (!conn || !paramName || !conn->conn) return NULL;
    return pgw_session_parameter(pgw_conn_session(conn->conn), paramName);
}

int PQprotocolVersion(const PGconn *conn)
{
    if (!conn || conn->status == CONNECTION_BAD) return 0;
    return 3;
}

/* libpq's reading of server_version: 15.4 -> 150004, 9.6.2 -> 90602. */
int PQserverVersion(const PGconn *conn)
{
    if (!conn || conn->status == CONNECTION_BAD) return 0;
    const char *v = PQparameterStatus(conn, "server_version");
    if (!v) return 0;
    int vmaj = 0, vmin = 0, vrev = 0;
    int cnt = sscanf(v, "%d.%d.%d", &vmaj, &vmin, &vrev);
    if (cnt == 3) {
        if (vmaj >= 10) return 100 * 100 * vmaj + vmin;
        return (100 * vmaj + vmin) * 100 + vrev;
    }
    if (cnt == 2) {
        if (vmaj >= 10) return 100 * 100 * vmaj + vmin;
        return (100 * vmaj + vmin) * 100;
    }
    if (cnt == 1) return 100 * 100 * vmaj;
    return 0;
}

char *PQerrorMessage(const PGconn *conn)
{
    if (!conn) return "connection pointer is NULL\n";
    return conn->errmsg.data ? conn->errmsg.data : "";
}

int PQsocket(const PGconn *conn)
{
    if (!conn) return -1;
    if (conn->conn && conn->status == CONNECTION_OK) return conn->fd;
    if (conn->connecting) return pq__connecting_fd(conn);
    return -1;
}

int PQbackendPID(const PGconn *conn)
{
    if (!conn || conn->status != CONNECTION_OK) return 0;
    return pgw_conn_backend_pid(conn->conn);
}

int PQconnectionNeedsPassword(const PGconn *conn)
{
    if (!conn) return 0;
    const char *pw = PQpass(conn);
    return conn->password_needed && (!pw || !*pw);
}

int PQconnectionUsedPassword(const PGconn *conn)
{
    return conn ? conn->password_needed : 0;
}

int PQconnectionUsedGSSAPI(const PGconn *conn)
{
    pgw_gss_info_t g;
    if (!conn || !conn->conn || pgw_conn_gss_info(conn->conn, &g) < 0) return 0;
    return g.used;
}

int PQclientEncoding(const PGconn *conn)
{
    if (!conn || conn->status != CONNECTION_OK) return -1;
    return conn->client_encoding;
}

int PQsetClientEncoding(PGconn *conn, const char *encoding)
{
    if (!conn || conn->status != CONNECTION_OK || !encoding) return -1;
    char *qstr = NULL;
    if (!strcmp(encoding, "auto")) {
        pgw_conninfo_t *ci = NULL;
        if (pgw_conninfo_parse(&ci, "client_encoding=auto", NULL, NULL, 0) == 0) {
            const char *params[64];
            int n = pgw_conninfo_startup_params(ci, params, 32); /* pairs */
            for (int i = 0; i + 1 < n * 2 && i + 1 < 64; i += 2)
                if (!strcmp(params[i], "client_encoding")) {
                    if (asprintf(&qstr, "set client_encoding to '%s'", params[i + 1]) < 0)
                        qstr = NULL;
                }
            pgw_conninfo_free(ci);
        }
    } else if (asprintf(&qstr, "set client_encoding to '%s'", encoding) < 0) {
        qstr = NULL;
    }
    if (!qstr) return -1;
    PGresult *res = PQexec(conn, qstr);
    free(qstr);
    int status = res && PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : -1;
    PQclear(res);
    return status;
}

/* ------------------------------------------------------------ TLS, GSS */

int PQsslInUse(PGconn *conn)
{
    pgw_tls_info_t t;
    if (!conn || !conn->conn || pgw_conn_tls_info(conn->conn, &t) < 0) return 0;
    return t.in_use;
}

static const char *const ssl_attrs[] = {"library",     "key_bits", "cipher",
                                        "compression", "protocol", NULL};

const char *const *PQsslAttributeNames(PGconn *conn)
{
    (void)conn;
    return ssl_attrs;
}

const char *PQsslAttribute(PGconn *conn, const char *attribute_name)
{
    if (!attribute_name) return NULL;
    if (!conn) return !strcmp(attribute_name, "library") ? "OpenSSL" : NULL;
    pgw_tls_info_t t;
    if (!conn->conn || pgw_conn_tls_info(conn->conn, &t) < 0 || !t.in_use) return NULL;
    if (!strcmp(attribute_name, "library")) return "OpenSSL";
    if (!strcmp(attribute_name, "protocol")) return t.protocol;
    if (!strcmp(attribute_name, "cipher")) return t.cipher;
    if (!strcmp(attribute_name, "compression")) return "off";
    if (!strcmp(attribute_name, "alpn")) return t.alpn;
    if (!strcmp(attribute_name, "key_bits")) {
        snprintf(conn->key_bits, sizeof conn->key_bits, "%d", t.key_bits);
        return conn->key_bits;
    }
    return NULL;
}

void *PQgetssl(PGconn *conn)
{
    (void)conn;
    return NULL;
}

void *PQsslStruct(PGconn *conn, const char *struct_name)
{
    (void)conn;
    (void)struct_name;
    return NULL;
}

int PQgssEncInUse(PGconn *conn)
{
    pgw_gss_info_t g;
    if (!conn || !conn->conn || pgw_conn_gss_info(conn->conn, &g) < 0) return 0;
    return g.encrypted;
}

void *PQgetgssctx(PGconn *conn)
{
    (void)conn;
    return NULL;
}

/* ------------------------------------------------------------ conninfo */

/* libpq fills passfile in with ~/.pgpass when it is not given. */
static char *default_passfile(void)
{
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *pw = getpwuid(geteuid());
        home = pw ? pw->pw_dir : NULL;
    }
    char *path = NULL;
    if (home && asprintf(&path, "%s/.pgpass", home) < 0) path = NULL;
    return path;
}

PQconninfoOption *PQconninfo(PGconn *conn)
{
    if (!conn) return NULL;
    PQconninfoOption *o = PQconndefaults();
    if (!o) return NULL;
    for (PQconninfoOption *p = o; p->keyword; p++) {
        free(p->val);
        const char *v = pgw_conninfo_get(conn->ci, p->keyword);
        p->val = v ? strdup(v) : NULL;
        if (!v && !strcmp(p->keyword, "passfile") && !*PQpass(conn)) p->val = default_passfile();
    }
    return o;
}

int PQsetnonblocking(PGconn *conn, int arg)
{
    if (!conn || conn->status == CONNECTION_BAD) return -1;
    int on = arg ? 1 : 0;
    if (on == conn->nonblocking) return 0;
    /* As libpq: the message is cleared unless a command owns it, and what
     * is queued is written in the mode being left (-1 when that fails, or
     * leaves some unwritten). */
    pq__conn_clear_error(conn);
    if (PQflush(conn) != 0) return -1;
    conn->nonblocking = on;
    return 0;
}

int PQisnonblocking(const PGconn *conn)
{
    return conn ? conn->nonblocking : 0;
}

int PQisthreadsafe(void)
{
    return 1;
}

/* ------------------------------------------- libpq 16-18 additions */

/* Not in libpq 15's header: programs built against a newer one find them. */
int PQfullProtocolVersion(const PGconn *conn);
int PQsocketPoll(int sock, int forRead, int forWrite, pg_usec_time_t end_time);
pg_usec_time_t PQgetCurrentTimeUSec(void);

/* libpq 18: major * 10000 + minor. */
int PQfullProtocolVersion(const PGconn *conn)
{
    if (!conn || conn->status == CONNECTION_BAD || !conn->conn) return 0;
    return pgw_conn_protocol_version(conn->conn);
}

pg_usec_time_t PQgetCurrentTimeUSec(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (pg_usec_time_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* libpq 17: wait until sock is readable / writable or end_time (-1:
 * forever, 0: do not wait) passes, the milliseconds left cut down as
 * libpq's. 1 ready, 0 timed out, -1 error with errno: EINTR when a signal
 * came (a program's loop checks its flags then, as with libpq's), EBADF
 * for a negative sock (which libpq's poll would ignore, waiting until
 * end_time). */
int PQsocketPoll(int sock, int forRead, int forWrite, pg_usec_time_t end_time)
{
    if (!forRead && !forWrite) return 0;
    if (sock < 0) {
        errno = EBADF;
        return -1;
    }
    struct pollfd p = {sock, (short)((forRead ? POLLIN : 0) | (forWrite ? POLLOUT : 0)), 0};
    int timeout_ms = -1;
    if (end_time >= 0) {
        pg_usec_time_t left = end_time - PQgetCurrentTimeUSec();
        timeout_ms = left <= 0 ? 0 : left / 1000 > INT_MAX ? INT_MAX : (int)(left / 1000);
    }
    int rc = poll(&p, 1, timeout_ms);
    return rc < 0 ? -1 : rc > 0 ? 1 : 0;
}
