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
 *      (PGREQUIRESSL=1, deprecated, means sslmode=require below PGSSLMODE);
 *   4. the built-in defaults: host = the Unix socket directory
 *      /var/run/postgresql (Debian's libpq default; upstream libpq uses
 *      /tmp), port 5432, user = the operating system user, dbname = user,
 *      sslmode prefer, gssencmode prefer (disable in a library built
 *      without GSSAPI, as libpq), krbsrvname postgres, channel_binding prefer,
 *      ssl_min_protocol_version TLSv1.2, target_session_attrs any,
 *      load_balance_hosts disable, min_protocol_version 3.0,
 *      max_protocol_version 3.0, or latest when min_protocol_version is
 *      above 3.0 (libpq 18).
 * Then the password file (passfile= / PGPASSFILE / ~/.pgpass) is read, if no
 * password was given, for pgw_conninfo_password.
 *
 * What is checked when, as in libpq 15: pgw_conninfo_parse rejects what
 * libpq rejects before it contacts any host (syntax, unknown keywords,
 * enumerated values, connect_timeout, list lengths, service files). A
 * problem of one host (its port, hostaddr or socket path) is recorded in
 * that host's pgw_host_t.error, for the connect code to skip it or stop
 * there as libpq does. The TCP options (keepalives*, tcp_user_timeout) are
 * checked by pgw_conninfo_tcp_options, which the connect code calls when it
 * opens a TCP socket, so a bad value does not affect a Unix-socket
 * connection. Options newer than libpq 15 (require_auth, sslnegotiation,
 * sslcertmode, load_balance_hosts, servicefile, gssdelegation,
 * min/max_protocol_version, and libpq 18's oauth_issuer, oauth_client_id,
 * oauth_client_secret, oauth_scope and sslkeylogfile, which have no
 * environment variable) follow the libpq release that added them, with
 * libpq 18's checks: require_auth is a comma-separated list of password,
 * md5, gss, sspi, scram-sha-256, oauth and none, all plain (the allowed
 * set) or all negated with '!' (everything but them), each at most once;
 * an empty value allows every method; min_protocol_version may not exceed
 * max_protocol_version; sslrootcert=system needs sslmode verify-full.
 *
 * The environment (getenv) and the LC_CTYPE locale (for
 * client_encoding=auto) are read only inside pgw_conninfo_parse; every other
 * function is pure and works on the parsed object. Pure C, no sockets. A
 * parsed object is immutable, so it may be shared between threads.
 *
 * NULL handles: every accessor given a NULL object never crashes: int
 * status functions return PGW_EINVAL, counts return 0, pointers NULL, and
 * pgw_conninfo_free(NULL) is a no-op.
 */
#ifndef PGWIRE_CONNINFO_H
#define PGWIRE_CONNINFO_H

#include "pgwire/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parsed connection options (a conninfo string or URI with the environment
 * and service file applied): pgw_conninfo_parse makes one,
 * pgw_conninfo_free frees it. */
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
 *                  value of an enumerated option (sslmode, gssencmode,
 *                  channel_binding, target_session_attrs,
 *                  ssl_min/max_protocol_version and their range,
 *                  require_auth, min/max_protocol_version,
 *                  sslrootcert=system with a weaker sslmode, ...), a
 *                  connect_timeout that is not an int, a first host whose
 *                  port is not an int (libpq fails there before contacting
 *                  any host; later hosts get pgw_host_t.error), host/hostaddr/port
 *                  lists that do not pair up, a service that is not found,
 *                  a service file that is missing (when named by
 *                  servicefile= or PGSERVICEFILE) or has a syntax error or a
 *                  line longer than 1022 characters;
 *   PGW_ENOMEM     allocation failed;
 *   PGW_EINVAL     out is NULL.
 * A password file that cannot be used is not an error; see
 * pgw_conninfo_passfile_warning.
 */
PGW_EXTERN int pgw_conninfo_parse(pgw_conninfo_t **out, const char *conninfo,
                                  const pgw_allocator_t *alloc, char *errbuf, size_t errlen);

/* Free ci and everything it owns (secrets are wiped). NULL is a no-op. */
PGW_EXTERN void pgw_conninfo_free(pgw_conninfo_t *ci);

/*
 * The effective value of keyword (libpq's names: "host", "port", "dbname",
 * "user", "sslmode", ...) after service file, environment and defaults, or
 * NULL if it is unset or not a keyword (or ci or keyword is NULL). The
 * string is owned by ci and valid until pgw_conninfo_free. Values are as
 * given: "client_encoding" may be "auto" (pgw_conninfo_startup_params sends
 * the resolved name), ssl_*_protocol_version keep their case. "password"
 * returns only an explicit password (from the string, service file or
 * PGPASSWORD), never the password file's. requiressl=1 / requiressl=0 in a
 * string or URI are stored as sslmode=require / sslmode=prefer.
 */
PGW_EXTERN const char *pgw_conninfo_get(const pgw_conninfo_t *ci, const char *keyword);

/* The i-th keyword this library knows (i from 0), or NULL past the last:
 * for listing options the way PQconndefaults does. Static strings. */
PGW_EXTERN const char *pgw_conninfo_keyword(size_t i);
/* The environment variable that supplies keyword, or NULL if none (or
 * keyword is NULL). */
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
    uint16_t port; /* 1..65535; 0 when error is set because of the port */
    int is_unix;   /* 1: connect to the Unix socket pgw_host_socket_path gives */
    /* The port as written for this host ("5432" when none was given): the
     * password file matches this text, so "05432" does not match 5432. */
    const char *port_text;
    /* NULL, or why this host cannot be tried, in libpq's words:
     *   'invalid integer value "x" for connection option "port"'
     *       (error_ends_connect = 1),
     *   'invalid port number: "0"' (a port outside 1..65535),
     *   'could not parse network address "h": <getaddrinfo's reason>',
     *   'Unix-domain socket path "p" is too long (maximum 107 bytes)'
     *       (error_ends_connect = 0 for these three).
     * The connect code must not open a socket for such a host. When
     * error_ends_connect is 0 it moves on to the next host (remembering the
     * message for the final error, as libpq does); when it is 1, reaching
     * this host ends the connect with this message. Hosts before it are
     * tried normally. */
    const char *error;
    int error_ends_connect; /* 1: reaching this host ends the connect (above) */
} pgw_host_t;

/* The number of hosts (at least 1 for a parsed object; 0 for NULL). */
PGW_EXTERN size_t pgw_conninfo_nhosts(const pgw_conninfo_t *ci);
/* The i-th host, with libpq's pairing of host, hostaddr and port lists (one
 * port applies to all hosts; an empty port is 5432). Returns 0, PGW_EINDEX
 * if i >= pgw_conninfo_nhosts(ci), or PGW_EINVAL if ci or out is NULL. */
PGW_EXTERN int pgw_conninfo_host(const pgw_conninfo_t *ci, size_t i, pgw_host_t *out);
/* Write the socket path "DIR/.s.PGSQL.PORT" of a Unix-socket host into buf
 * (NUL-terminated; an abstract socket keeps its leading '@', which the
 * caller turns into the leading NUL byte). Returns the length, PGW_EINVAL if
 * h is NULL or not a Unix socket (or buf is NULL with len > 0), or
 * PGW_ERANGE if len is too small or the path is longer than a socket address
 * holds (107 bytes; such a host also has pgw_host_t.error set). */
PGW_EXTERN int pgw_host_socket_path(const pgw_host_t *h, char *buf, size_t len);

/*
 * The password to use for host h: the explicit password if one was given
 * (non-empty), else the first matching line of the password file read by
 * pgw_conninfo_parse (libpq's rules: fields host:port:database:user:password,
 * '*' matches anything, '\' escapes ':' and '\', the password ends at the
 * first unescaped ':', the port is matched as written (h->port_text), a Unix
 * socket in the default directory or an empty host matches "localhost", a
 * host given only by hostaddr matches the address), else NULL (also when ci
 * or h is NULL). Owned by ci.
 */
PGW_EXTERN const char *pgw_conninfo_password(const pgw_conninfo_t *ci, const pgw_host_t *h);
/* Why the password file was ignored (e.g. it is group or world readable),
 * or NULL if it was used or absent (or ci is NULL). libpq prints this as a
 * warning; here the caller decides. Owned by ci. */
PGW_EXTERN const char *pgw_conninfo_passfile_warning(const pgw_conninfo_t *ci);

/*
 * The StartupMessage parameters, as libpq 15's build_startup_packet writes
 * them, in its order: out[2k] is a name and out[2k+1] its value, for user,
 * database, replication and options (each when not empty),
 * application_name (application_name when set, even to "", which then sends
 * nothing; else fallback_application_name; not sent when empty),
 * client_encoding (when not empty; "auto" is replaced by the encoding of the
 * LC_CTYPE locale at parse time: SQL_ASCII for C/POSIX, e.g. UTF8 for a
 * UTF-8 locale, nothing for a codeset libpq does not know), then datestyle,
 * timezone and geqo (libpq's lower-case names) from PGDATESTYLE, PGTZ and
 * PGGEQO as read at parse time: sent when set, even empty, unless the value
 * is "default" in any case. cap is the number of pairs out has room for; 16
 * is always enough. Returns the number of pairs, PGW_ERANGE if cap is too
 * small, or PGW_EINVAL if ci is NULL (or out is NULL with cap > 0). The
 * strings are owned by ci.
 */
PGW_EXTERN int pgw_conninfo_startup_params(const pgw_conninfo_t *ci, const char **out, size_t cap);

/* The TCP socket options, as libpq applies them. -1: not given; a
 * connection then applies the DEAD PEERS defaults of conn.h, or leaves the
 * kernel's value as libpq does (pgw_conn_config_t.kernel_tcp_defaults). */
typedef struct pgw_tcp_options {
    int keepalives;          /* 1: set SO_KEEPALIVE (the default), 0: leave it off */
    int keepalives_idle;     /* TCP_KEEPIDLE seconds, or -1 */
    int keepalives_interval; /* TCP_KEEPINTVL seconds, or -1 */
    int keepalives_count;    /* TCP_KEEPCNT probes, or -1 */
    int tcp_user_timeout;    /* TCP_USER_TIMEOUT milliseconds, or -1 */
} pgw_tcp_options_t;

/*
 * Check and convert keepalives, keepalives_idle, keepalives_interval,
 * keepalives_count and tcp_user_timeout, as libpq does each time it opens a
 * TCP socket (never for a Unix socket). Each must be an int (blanks around
 * it allowed, not empty); a negative value becomes 0. With keepalives=0 the
 * other four are not looked at (libpq sets none of them) and are -1.
 * The connect code calls this before connecting each TCP socket; on
 * PGW_ECONNINFO it does not connect that address, remembers the message and
 * moves on to the next address or host, as libpq does.
 * errbuf (if not NULL) receives a NUL-terminated message in libpq's words
 * ('invalid integer value "x" for connection option "keepalives_idle"'; for
 * keepalives, that line, a newline and "keepalives parameter must be an
 * integer"); it is empty on success.
 * Returns 0 and fills *out, or:
 *   PGW_ECONNINFO  one of the values is not an int (*out partly filled);
 *   PGW_EINVAL     ci or out is NULL.
 */
PGW_EXTERN int pgw_conninfo_tcp_options(const pgw_conninfo_t *ci, pgw_tcp_options_t *out,
                                        char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_CONNINFO_H */
