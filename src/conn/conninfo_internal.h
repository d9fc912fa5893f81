/*
 * Internals shared by the files of the connection options (conninfo.c: the
 * option table, the sources' order, validation and the public API;
 * conninfo_syntax.c: keyword/value strings and URIs; conninfo_files.c: the
 * service and password files; conninfo_hosts.c: host, hostaddr and port
 * lists; conninfo_encoding.c: client_encoding=auto). Not installed.
 */
#ifndef PGW_CONNINFO_INTERNAL_H
#define PGW_CONNINFO_INTERNAL_H

#include "pgwire/conninfo.h"
#include "util/internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#define DEFAULT_SYSCONFDIR "/etc/postgresql-common" /* Debian's libpq */
#define MAX_FILE_SIZE      (1024 * 1024)            /* service and password files */

/* The longest Unix socket path libpq accepts: sun_path less its NUL. */
#define UNIX_PATH_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

/* How many options and environment startup parameters conninfo.c's tables
 * hold (checked there at compile time). */
#define PGW__CI_NOPTS       44
#define PGW__CI_NENV_PARAMS 3

/* errbuf and errlen travel together through the parser. */
typedef struct err_out {
    char *buf;
    size_t len;
} err_out_t;

#define FAIL(e, ...) pgw__fail_msg((e)->buf, (e)->len, PGW_ECONNINFO, __VA_ARGS__)

/* One usable line of the password file, fields unescaped; NULL = '*'. */
typedef struct pgpass_entry {
    const char *field[4]; /* host, port, database, user */
    const char *password;
} pgpass_entry_t;

struct pgw_conninfo {
    const pgw_allocator_t *alloc;
    char *val[PGW__CI_NOPTS];
    char *env_param[PGW__CI_NENV_PARAMS];
    size_t nhosts;
    pgw_host_t *hosts;
    char *host_list, *addr_list, *port_list; /* split copies the hosts point into */
    char **host_error;                       /* per host, NULL or owned message */
    char *client_encoding;                   /* "auto" resolved, or NULL */
    char *pgpass_text;                       /* the file's text, split in place */
    pgpass_entry_t *pgpass;
    size_t npgpass;
    char *passfile_warning;
};

/* conninfo.c: the table and the stores. */
int pgw__ci_option_index(const char *keyword);
/* The index of a keyword of the table (only called with the table's). */
int pgw__ci_opt(const char *keyword);
#define VAL(ci, kw) ((ci)->val[pgw__ci_opt(kw)])
int pgw__ci_store(pgw_conninfo_t *ci, int i, const char *value, bool replace);
int pgw__ci_store_param(pgw_conninfo_t *ci, const char *kw, const char *value);
int pgw__ci_store_keyword(pgw_conninfo_t *ci, const char *kw, const char *value, err_out_t *e);
bool pgw__ci_is_blank(char c);
bool pgw__ci_parse_int(const char *s, int *out);

/* conninfo_syntax.c */
int pgw__ci_parse_keyword_value(pgw_conninfo_t *ci, const char *s, err_out_t *e);
/* The length of a postgresql:// or postgres:// prefix of s, 0 if none. */
size_t pgw__ci_uri_prefix_len(const char *s);
int pgw__ci_parse_uri(pgw_conninfo_t *ci, const char *uri, size_t prefix, err_out_t *e);

/* conninfo_files.c */
int pgw__ci_apply_service(pgw_conninfo_t *ci, err_out_t *e);
int pgw__ci_load_pgpass(pgw_conninfo_t *ci);

/* conninfo_hosts.c */
int pgw__ci_build_hosts(pgw_conninfo_t *ci, err_out_t *e);

/* conninfo_encoding.c */
int pgw__ci_resolve_client_encoding(pgw_conninfo_t *ci);

#endif
