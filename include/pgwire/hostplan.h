/*
 * libpgwire: which server to connect to, without I/O (SANS-IO MULTI-HOST).
 *
 * libpq's multi-host rules as a plan a driver that owns its sockets follows
 * (the session of session.h run from another event loop, a binding); the
 * connections of conn.h follow the same plan. Nothing here touches a
 * socket, a resolver or a timer.
 *
 * The rules (libpq's PQconnectPoll):
 *   - hosts are tried in the order the connection string lists them, or
 *     shuffled once with load_balance_hosts=random;
 *   - every address a host name resolves to is tried in turn;
 *   - a socket that does not connect, a connect_timeout that passes or a
 *     server that closes during startup moves on to the next address;
 *   - a name that does not resolve, a server that is starting up or
 *     shutting down (SQLSTATE 57P03) and a server that does not match
 *     target_session_attrs move on to the next host;
 *   - anything else (an authentication failure, another server error, a
 *     refused TLS request) ends the connect: no other host is tried;
 *   - target_session_attrs=prefer-standby tries every host a second time,
 *     accepting any server, when no standby was found.
 *
 * A connect with a plan:
 *
 *   pgw_hostplan_new(&p, ci, NULL);
 *   while (pgw_hostplan_next(p, &h) == 1) {
 *       if (h.error) { note h.error; if (h.error_ends_connect) break; continue; }
 *       for each address of h (pgw_host_socket_path for a Unix socket, else
 *            h.hostaddr, or h.host resolved with h.port):
 *           run the attempt (pgw_tls_new(&t, ci, pgw_hostplan_index(p), ...)
 *           for its TLS, the session's startup);
 *           on failure: step = pgw_hostplan_failed(p, err, server_error);
 *               NEXT_ADDRESS: the next address (none left: the next host);
 *               NEXT_HOST: the next host; END: the connect failed;
 *           once the session is up: step = pgw_hostplan_check(p, s);
 *               PROBE: run pgw_hostplan_probe_sql(p) as a simple query on
 *                   s, give its one value to pgw_hostplan_probe_answer,
 *                   which returns ACCEPT or NEXT_HOST;
 *               ACCEPT: connected; NEXT_HOST: close it (the reason is
 *                   pgw_hostplan_reason), the next host;
 *   }
 *   no host left: the connect failed, with every attempt's message.
 *
 * libpq words a mismatch as 'connection to server at "HOST" (ADDRESS),
 * port PORT failed: REASON' with pgw_hostplan_reason as the REASON.
 *
 * A plan is used from one thread at a time.
 */
#ifndef PGWIRE_HOSTPLAN_H
#define PGWIRE_HOSTPLAN_H

#include "pgwire/common.h"
#include "pgwire/conninfo.h"
#include "pgwire/session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A connect's progress through the hosts of one connection string. */
typedef struct pgw_hostplan pgw_hostplan_t;

/* What to do after an attempt's failure or after its startup. */
typedef enum pgw_hostplan_step {
    PGW_HOSTPLAN_ACCEPT = 0,       /* connected: this server is the one */
    PGW_HOSTPLAN_NEXT_ADDRESS = 1, /* the host's next address, else the next host */
    PGW_HOSTPLAN_NEXT_HOST = 2,    /* the next host (pgw_hostplan_next) */
    PGW_HOSTPLAN_PROBE = 3,        /* run pgw_hostplan_probe_sql, then probe_answer */
    PGW_HOSTPLAN_END = 4           /* the connect failed: no other host is tried */
} pgw_hostplan_step_t;

/*
 * Make a plan over the hosts of ci (pgw_conninfo_parse), reading
 * target_session_attrs and load_balance_hosts from it. ci must outlive the
 * plan: the hosts the plan gives point into it. alloc may be NULL (malloc).
 * Returns 0 and sets *out, or:
 *   PGW_ECONNINFO  target_session_attrs or load_balance_hosts has a value
 *                  libpq does not know;
 *   PGW_ENOMEM     out of memory;
 *   PGW_EINVAL     out or ci is NULL.
 */
PGW_EXTERN int pgw_hostplan_new(pgw_hostplan_t **out, const pgw_conninfo_t *ci,
                                const pgw_allocator_t *alloc);
/* Free the plan (NULL is a no-op). */
PGW_EXTERN void pgw_hostplan_free(pgw_hostplan_t *p);

/*
 * Move to the next host to try and copy it into *out (out may be NULL; its
 * strings are owned by the plan's conninfo). A host whose options make it
 * unusable comes with out->error set: no socket is opened for it; the
 * caller notes the message for the final error, then ends the connect if
 * out->error_ends_connect, else calls pgw_hostplan_next again (libpq's
 * rule, conninfo.h). Returns 1 (a host), 0 when every host has been tried
 * (prefer-standby's second pass included: the connect failed), or
 * PGW_EINVAL if p is NULL.
 */
PGW_EXTERN int pgw_hostplan_next(pgw_hostplan_t *p, pgw_host_t *out);
/* The position in the connection string's host list (pgw_conninfo_host's
 * i, pgw_tls_new's host) of the host pgw_hostplan_next gave last, or
 * (size_t)-1 before the first call, after it returned 0, or for NULL. */
PGW_EXTERN size_t pgw_hostplan_index(const pgw_hostplan_t *p);

/*
 * The attempt on the current host failed before it was accepted, with err:
 * a negated errno from connecting its socket (pgw_is_system_error), or a
 * library code, with server the ErrorResponse when err is PGW_ESERVER
 * (NULL otherwise). A driver that retries the same address with another
 * TLS method (pgw_tls_next_method) asks only once none is left.
 * Returns PGW_HOSTPLAN_NEXT_ADDRESS for a system error, PGW_ETIMEDOUT,
 * PGW_ECONNLOST (the server closed during startup) and PGW_ECONNINFO (a TCP
 * option: pgw_conninfo_tcp_options); PGW_HOSTPLAN_NEXT_HOST for PGW_EDNS,
 * PGW_ETARGET and a server error with SQLSTATE 57P03 (starting up, shutting
 * down); PGW_HOSTPLAN_END for anything else (and for a NULL p).
 */
PGW_EXTERN pgw_hostplan_step_t pgw_hostplan_failed(pgw_hostplan_t *p, int err,
                                                   const pgw_error_t *server);

/*
 * The session s finished its startup on the current host: does the server
 * match target_session_attrs? Decided from the ParameterStatus values
 * in_hot_standby and default_transaction_read_only when the server sent
 * them (PostgreSQL 14 and later). Returns PGW_HOSTPLAN_ACCEPT (any server
 * does, or this one matches), PGW_HOSTPLAN_NEXT_HOST (it does not:
 * pgw_hostplan_reason says why), PGW_HOSTPLAN_PROBE (an older server: the
 * question goes to it as pgw_hostplan_probe_sql), or PGW_HOSTPLAN_END for
 * a NULL p or s.
 */
PGW_EXTERN pgw_hostplan_step_t pgw_hostplan_check(pgw_hostplan_t *p, const pgw_session_t *s);
/* After PGW_HOSTPLAN_PROBE: the query to run ("SHOW transaction_read_only"
 * or "SELECT pg_catalog.pg_is_in_recovery()"), a static string; NULL
 * otherwise. */
PGW_EXTERN const char *pgw_hostplan_probe_sql(const pgw_hostplan_t *p);
/*
 * The probe's answer: its one value as text (value, len), or value NULL if
 * the query failed or returned no value. Returns PGW_HOSTPLAN_ACCEPT or
 * PGW_HOSTPLAN_NEXT_HOST (the server does not match, or did not answer),
 * or PGW_HOSTPLAN_END for a NULL p or when no probe was asked for.
 */
PGW_EXTERN pgw_hostplan_step_t pgw_hostplan_probe_answer(pgw_hostplan_t *p, const char *value,
                                                         size_t len);
/* libpq's reason for leaving the current server after a mismatch
 * ("session is read-only", "server is in hot standby mode", ...), a static
 * string; NULL when the last check or probe did not reject a server. */
PGW_EXTERN const char *pgw_hostplan_reason(const pgw_hostplan_t *p);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_HOSTPLAN_H */
