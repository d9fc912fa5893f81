/*
 * libpgwire: connection options, compatible with libpq.
 *
 * pgw_conninfo_parse reads a connection string in either of libpq's forms,
 *   keyword/value:  "host=localhost port=5432 dbname='my db' user=app"
 *   URI:            "postgresql://app:secret@host1:5432,host2/mydb?sslmode=require"
 * and completes it the way libpq does, each source filling only what the
 * earlier ones left unset:
 *   1. the string itself (a later duplicate keyword wins);
 *   2. the service named by service= or PGSERVICE, looked up in
 *      servicefile= / PGSERVICEFILE / ~/.pg_service.conf, then in
 *      PGSYSCONFDIR/pg_service.conf (PGSYSCONFDIR defaults to
 *      /etc/postgresql-common, Debian's libpq setting). As in libpq, the
 *      service file takes precedence over the environment;
 *   3. the PG* environment variables (PGHOST, PGPORT, PGUSER, ...);
 *   4. the built-in defaults: host = the Unix socket directory
 *      /var/run/postgresql (Debian's libpq default; upstream libpq uses
 *      /tmp), port 5432, user = the operating system user, dbname = user,
 *      sslmode prefer, channel_binding prefer, target_session_attrs any,
 *      load_balance_hosts disable, min/max_protocol_version 3.0.
 * Then the password file (passfile= / PGPASSFILE / ~/.pgpass) is read, if no
 * password was given, for pgw_conninfo_password.
 *
 * The environment (getenv) is read only inside pgw_conninfo_parse; every
 * other function is pure and works on the parsed object. Pure C, no sockets.
 * A parsed object is immutable, so it may be shared between threads.
 */
#ifndef PGWIRE_CONNINFO_H
#define PGWIRE_CONNINFO_H

#include "pgwire/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pgw_conninfo pgw_conninfo_t;

/* The Unix socket directory used when no host is given. */
#define PGW_DEFAULT_SOCKET_DIR "/var/run/postgresql"
#define PGW_DEFAULT_PORT       5432

/*
 * Parse conninfo (keyword/value or postgresql:// / postgres:// URI; NULL or
 * "" means "defaults only") into a new object, complete it from the service
 * file, environment and defaults, validate it and read the password file.
 * alloc may be NULL (malloc). On failure, errbuf (if not NULL) receives a
 * NUL-terminated message in libpq's words, e.g.
 * 'invalid connection option "foo"'.
 * Returns 0 and sets *out (free it with pgw_conninfo_free), or:
 *   PGW_ECONNINFO  syntax error, unknown keyword or URI parameter, invalid
 *                  value of an enumerated or numeric option, host/hostaddr/
 *                  port lists that do not pair up, unknown service;
 *   PGW_ENOMEM     allocation failed.
 * A password file that cannot be used is not an error; see
 * pgw_conninfo_passfile_warning.
 */
PGW_EXTERN int pgw_conninfo_parse(pgw_conninfo_t **out, const char *conninfo,
                                  const pgw_allocator_t *alloc, char *errbuf, size_t errlen);

/* Free ci and everything it owns. NULL is a no-op. */
PGW_EXTERN void pgw_conninfo_free(pgw_conninfo_t *ci);

/*
 * The effective value of keyword (libpq's names: "host", "port", "dbname",
 * "user", "sslmode", ...) after service file, environment and defaults, or
 * NULL if it is unset or not a keyword. The string is owned by ci and valid
 * until pgw_conninfo_free. "password" returns only an explicit password (from
 * the string, service file or PGPASSWORD), never the password file's.
 */
PGW_EXTERN const char *pgw_conninfo_get(const pgw_conninfo_t *ci, const char *keyword);

/* The i-th keyword this library knows (i from 0), or NULL past the last:
 * for listing options the way PQconndefaults does. Static strings. */
PGW_EXTERN const char *pgw_conninfo_keyword(size_t i);
/* The environment variable that supplies keyword, or NULL if none. */
PGW_EXTERN const char *pgw_conninfo_keyword_envvar(const char *keyword);

/* One server to try, in order. Strings are owned by the pgw_conninfo_t it
 * came from and valid until pgw_conninfo_free. */
typedef struct pgw_host {
    /* Host name, IP address, or Unix socket directory (starting with '/')
     * or abstract socket name (starting with '@'). Never NULL: an empty
     * entry becomes PGW_DEFAULT_SOCKET_DIR, unless hostaddr is set, in which
     * case host is "" and hostaddr is used. */
    const char *host;
    /* Numeric IPv4/IPv6 address to connect to instead of resolving host,
     * or NULL. When set, host (if not empty) is used only for TLS checks and
     * the password file. */
    const char *hostaddr;
    uint16_t port;
    int is_unix; /* 1: connect to the Unix socket pgw_host_socket_path gives */
} pgw_host_t;

/* The number of hosts (at least 1 for a parsed object). */
PGW_EXTERN size_t pgw_conninfo_nhosts(const pgw_conninfo_t *ci);
/* The i-th host, with libpq's pairing of host, hostaddr and port lists (one
 * port applies to all hosts; an empty port is 5432). Returns 0 or PGW_EINDEX. */
PGW_EXTERN int pgw_conninfo_host(const pgw_conninfo_t *ci, size_t i, pgw_host_t *out);
/* Write the socket path "DIR/.s.PGSQL.PORT" of a Unix-socket host into buf
 * (NUL-terminated; an abstract socket keeps its leading '@', which the
 * caller turns into the leading NUL byte). Returns the length, PGW_EINVAL if
 * h is not a Unix socket, or PGW_ERANGE if len is too small. */
PGW_EXTERN int pgw_host_socket_path(const pgw_host_t *h, char *buf, size_t len);

/*
 * The password to use for host h: the explicit password if one was given
 * (non-empty), else the first matching line of the password file read by
 * pgw_conninfo_parse (libpq's rules: fields host:port:database:user:password,
 * '*' matches anything, '\' escapes ':' and '\', a Unix socket in the
 * default directory matches "localhost"), else NULL. Owned by ci.
 */
PGW_EXTERN const char *pgw_conninfo_password(const pgw_conninfo_t *ci, const pgw_host_t *h);
/* Why the password file was ignored (e.g. it is group or world readable),
 * or NULL if it was used or absent. libpq prints this as a warning; here the
 * caller decides. Owned by ci. */
PGW_EXTERN const char *pgw_conninfo_passfile_warning(const pgw_conninfo_t *ci);

/*
 * The StartupMessage parameters, as libpq sends them: out[2k] is a name and
 * out[2k+1] its value, for user, database, replication (if set), options,
 * application_name (or fallback_application_name), client_encoding (unless
 * "auto", which this library cannot resolve from a locale and so omits), and
 * DateStyle, TimeZone and geqo from PGDATESTYLE, PGTZ and PGGEQO (read at
 * parse time; a value "default" is not sent). cap is the number of pairs out
 * has room for; 16 is always enough. Returns the number of pairs, or
 * PGW_ERANGE if cap is too small. The strings are owned by ci.
 */
PGW_EXTERN int pgw_conninfo_startup_params(const pgw_conninfo_t *ci, const char **out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_CONNINFO_H */
