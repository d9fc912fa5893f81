/*
 * The rest of libpq's global functions: PQlibVersion, passwords
 * (PQencryptPassword, PQencryptPasswordConn over libpgwire's verifiers,
 * PQchangePassword), pqsignal, and what libpq keeps for compatibility only
 * (PQinitSSL, PQinitOpenSSL, PQregisterThreadLock, the OpenSSL key
 * passphrase hook).
 */
#define _POSIX_C_SOURCE 200809L
#include "auth/auth.h"
#include "pgwire/auth.h"
#include "pq/pq_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The API level this library implements: libpq 15's. */
#define PQ_LIB_VERSION 150000

int PQlibVersion(void)
{
    return PQ_LIB_VERSION;
}

/* ---------------------------------------------------------------- passwords */

char *PQencryptPassword(const char *passwd, const char *user)
{
    if (!passwd || !user) return NULL;
    char *out = malloc(36);
    if (out && pgw__md5_verifier(user, passwd, out) != 0) {
        free(out);
        out = NULL;
    }
    return out;
}

/* The longest password_encryption value libpq accepts from the server. */
#define MAX_ALGORITHM_NAME_LEN 50

/* The server's password_encryption into buf; 0 with the error on conn. */
static int server_algorithm(PGconn *conn, char buf[MAX_ALGORITHM_NAME_LEN + 1])
{
    PGresult *res = PQexec(conn, "show password_encryption");
    if (!res) return 0;
    int ok = 0;
    if (PQresultStatus(res) != PGRES_TUPLES_OK)
        ; /* PQexec set the error */
    else if (PQntuples(res) != 1 || PQnfields(res) != 1)
        pq__conn_append_error(conn, "unexpected shape of result set returned for SHOW\n");
    else if (strlen(PQgetvalue(res, 0, 0)) > MAX_ALGORITHM_NAME_LEN)
        pq__conn_append_error(conn, "password_encryption value too long\n");
    else {
        strcpy(buf, PQgetvalue(res, 0, 0));
        ok = 1;
    }
    PQclear(res);
    return ok;
}

#pragma weak pq__conn_clear_error

char *PQencryptPasswordConn(PGconn *conn, const char *passwd, const char *user,
                            const char *algorithm)
{
    char algobuf[MAX_ALGORITHM_NAME_LEN + 1];
    if (!conn) return NULL;
    if (pq__conn_clear_error) pq__conn_clear_error(conn);
    if (!algorithm) {
        if (!server_algorithm(conn, algobuf)) return NULL;
        algorithm = algobuf;
    }
    /* password_encryption was a boolean before PostgreSQL 10. */
    if (strcmp(algorithm, "on") == 0 || strcmp(algorithm, "off") == 0) algorithm = "md5";
    char *out = NULL;
    if (strcmp(algorithm, "scram-sha-256") == 0) {
        out = malloc(PGW_SCRAM_VERIFIER_MAX);
        if (out && pgw_scram_verifier(out, PGW_SCRAM_VERIFIER_MAX, passwd, 0, NULL, 0, NULL)) {
            free(out);
            out = NULL;
        }
    } else if (strcmp(algorithm, "md5") == 0) {
        out = PQencryptPassword(passwd, user);
    } else {
        pq__conn_append_error(conn, "unrecognized password encryption algorithm \"%s\"\n",
                              algorithm);
        return NULL;
    }
    if (!out) pq__conn_append_error(conn, "out of memory\n");
    return out;
}

/* libpq 17: ALTER USER user PASSWORD with passwd's verifier made here,
 * per the server's password_encryption, so the password itself never goes
 * to the server. The ALTER's result, or NULL (PQerrorMessage) when it
 * failed before sending it. */
PGresult *PQchangePassword(PGconn *conn, const char *user, const char *passwd);
PGresult *PQchangePassword(PGconn *conn, const char *user, const char *passwd)
{
    if (!conn) return NULL;
    if (!user || !passwd) {
        /* where libpq would crash */
        pq__conn_append_error(conn, "%s is a null pointer\n", user ? "password" : "user name");
        return NULL;
    }
    char *verifier = PQencryptPasswordConn(conn, passwd, user, NULL);
    if (!verifier) return NULL;
    char *literal = PQescapeLiteral(conn, verifier, strlen(verifier));
    PQfreemem(verifier);
    if (!literal) return NULL;
    char *ident = PQescapeIdentifier(conn, user, strlen(user));
    if (!ident) {
        PQfreemem(literal);
        return NULL;
    }
    PGresult *res = NULL;
    size_t n = sizeof "ALTER USER  PASSWORD " + strlen(ident) + strlen(literal);
    char *sql = malloc(n);
    if (sql) {
        snprintf(sql, n, "ALTER USER %s PASSWORD %s", ident, literal);
        res = PQexec(conn, sql);
        free(sql);
    } else {
        pq__conn_append_error(conn, "out of memory\n");
    }
    PQfreemem(ident);
    PQfreemem(literal);
    return res;
}

/* ------------------------------------------------------------ signals */

typedef void (*pqsigfunc)(int signo);
pqsigfunc pqsignal(int signo, pqsigfunc func);

/* libpq exports its pqsignal (port.h): sigaction with SA_RESTART (not for
 * SIGALRM) and SA_NOCLDSTOP for SIGCHLD; the old handler or SIG_ERR. */
pqsigfunc pqsignal(int signo, pqsigfunc func)
{
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = func;
    sigemptyset(&act.sa_mask);
    if (signo != SIGALRM) act.sa_flags |= SA_RESTART;
    if (signo == SIGCHLD) act.sa_flags |= SA_NOCLDSTOP;
    if (sigaction(signo, &act, &old) < 0) return SIG_ERR;
    return old.sa_handler;
}

/* ------------------------------------------- kept for compatibility */

/* OpenSSL 1.1+ initialises itself: nothing to do, as in libpq 15. */
void PQinitSSL(int do_init)
{
    (void)do_init;
}

void PQinitOpenSSL(int do_ssl, int do_crypto)
{
    (void)do_ssl;
    (void)do_crypto;
}

static void default_threadlock(int acquire)
{
    (void)acquire;
}

static pgthreadlock_t threadlock = default_threadlock;

/* libpq calls the lock around its Kerberos calls; libpgwire makes none
 * that need it: the handler is kept and returned, never called. */
pgthreadlock_t PQregisterThreadLock(pgthreadlock_t newhandler)
{
    pgthreadlock_t prev = threadlock;
    threadlock = newhandler ? newhandler : default_threadlock;
    return prev;
}

static PQsslKeyPassHook_OpenSSL_type key_pass_hook;

PQsslKeyPassHook_OpenSSL_type PQgetSSLKeyPassHook_OpenSSL(void)
{
    return key_pass_hook;
}

/* Kept for PQgetSSLKeyPassHook_OpenSSL; libpgwire decrypts a client key
 * with the sslpassword option and does not call it. */
void PQsetSSLKeyPassHook_OpenSSL(PQsslKeyPassHook_OpenSSL_type hook)
{
    key_pass_hook = hook;
}

/* libpq's default hook: the connection's sslpassword, cut to size bytes
 * (libpq also prints a warning then; this library prints nothing). */
int PQdefaultSSLKeyPassHook_OpenSSL(char *buf, int size, PGconn *conn)
{
    if (!buf || size <= 0) return 0;
    buf[0] = '\0';
    PQconninfoOption *opts = conn ? PQconninfo(conn) : NULL;
    for (PQconninfoOption *o = opts; o && o->keyword; o++)
        if (strcmp(o->keyword, "sslpassword") == 0 && o->val) {
            strncpy(buf, o->val, (size_t)size);
            buf[size - 1] = '\0';
        }
    PQconninfoFree(opts);
    return (int)strlen(buf);
}
