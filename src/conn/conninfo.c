/*
 * Connection options with libpq's syntax, sources and rules: keyword/value
 * strings and postgresql:// URIs, the service file, PG* environment
 * variables, built-in defaults, host/hostaddr/port lists and the password
 * file. See include/pgwire/conninfo.h for the order of precedence.
 *
 * Error messages use libpq's wording so that users recognise them.
 */
#define _POSIX_C_SOURCE 200809L
#include "pgwire/conninfo.h"
#include "session/session_internal.h" /* pgw__parse_require_auth */
#include "util/internal.h"

#include <ctype.h>
#include <errno.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <netdb.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define DEFAULT_SYSCONFDIR "/etc/postgresql-common" /* Debian's libpq */
#define MAX_FILE_SIZE      (1024 * 1024)            /* service and password files */

/* The longest Unix socket path libpq accepts: sun_path less its NUL. */
#define UNIX_PATH_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

/* How a value is checked once every source has been applied. Options that
 * libpq checks only later (the TCP options, per-host ports and addresses)
 * are CHECK_NONE here; see pgw_conninfo_tcp_options and pgw_host_t.error. */
enum opt_check { CHECK_NONE, CHECK_INT, CHECK_ENUM, CHECK_TLS };

typedef struct option_def {
    const char *keyword;
    const char *envvar;
    const char *fallback;
    enum opt_check check;
    const char *const *allowed; /* CHECK_ENUM: NULL-terminated */
} option_def_t;

static const char *const sslmodes[] = {"disable",   "allow",       "prefer", "require",
                                       "verify-ca", "verify-full", NULL};
static const char *const cb_modes[] = {"disable", "prefer", "require", NULL};
static const char *const gss_modes[] = {"disable", "prefer", "require", NULL};
static const char *const ssl_negotiations[] = {"postgres", "direct", NULL};
static const char *const sslcert_modes[] = {"disable", "allow", "require", NULL};
static const char *const session_attrs[] = {"any",     "read-write",     "read-only", "primary",
                                            "standby", "prefer-standby", NULL};
static const char *const lb_modes[] = {"disable", "random", NULL};
static const char *const proto_versions[] = {"3.0", "3.2", "latest", NULL};
/* Compared without regard to case, as libpq does; "" means unset. */
static const char *const tls_versions[] = {"TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3", NULL};

/* libpq's keywords, environment variables and compiled-in defaults. */
static const option_def_t options[] = {
    {"service", "PGSERVICE", NULL, CHECK_NONE, NULL},
    {"servicefile", "PGSERVICEFILE", NULL, CHECK_NONE, NULL},
    {"user", "PGUSER", NULL, CHECK_NONE, NULL},
    {"password", "PGPASSWORD", NULL, CHECK_NONE, NULL},
    {"passfile", "PGPASSFILE", NULL, CHECK_NONE, NULL},
    {"require_auth", "PGREQUIREAUTH", NULL, CHECK_NONE, NULL},
    {"channel_binding", "PGCHANNELBINDING", "prefer", CHECK_ENUM, cb_modes},
    {"connect_timeout", "PGCONNECT_TIMEOUT", NULL, CHECK_INT, NULL},
    {"dbname", "PGDATABASE", NULL, CHECK_NONE, NULL},
    {"host", "PGHOST", NULL, CHECK_NONE, NULL},
    {"hostaddr", "PGHOSTADDR", NULL, CHECK_NONE, NULL},
    {"port", "PGPORT", "5432", CHECK_NONE, NULL},
    {"client_encoding", "PGCLIENTENCODING", NULL, CHECK_NONE, NULL},
    {"options", "PGOPTIONS", "", CHECK_NONE, NULL}, /* libpq: DefaultOption */
    {"application_name", "PGAPPNAME", NULL, CHECK_NONE, NULL},
    {"fallback_application_name", NULL, NULL, CHECK_NONE, NULL},
    {"keepalives", NULL, NULL, CHECK_NONE, NULL},
    {"keepalives_idle", NULL, NULL, CHECK_NONE, NULL},
    {"keepalives_interval", NULL, NULL, CHECK_NONE, NULL},
    {"keepalives_count", NULL, NULL, CHECK_NONE, NULL},
    {"tcp_user_timeout", NULL, NULL, CHECK_NONE, NULL},
    {"sslmode", "PGSSLMODE", "prefer", CHECK_ENUM, sslmodes},
    {"sslnegotiation", "PGSSLNEGOTIATION", "postgres", CHECK_ENUM, ssl_negotiations},
    {"sslcompression", "PGSSLCOMPRESSION", "0", CHECK_NONE, NULL},
    {"sslcert", "PGSSLCERT", NULL, CHECK_NONE, NULL},
    {"sslkey", "PGSSLKEY", NULL, CHECK_NONE, NULL},
    {"sslcertmode", "PGSSLCERTMODE", "allow", CHECK_ENUM, sslcert_modes},
    {"sslpassword", NULL, NULL, CHECK_NONE, NULL},
    {"sslrootcert", "PGSSLROOTCERT", NULL, CHECK_NONE, NULL},
    {"sslcrl", "PGSSLCRL", NULL, CHECK_NONE, NULL},
    {"sslcrldir", "PGSSLCRLDIR", NULL, CHECK_NONE, NULL},
    {"sslsni", "PGSSLSNI", "1", CHECK_NONE, NULL},
    {"requirepeer", "PGREQUIREPEER", NULL, CHECK_NONE, NULL},
    {"ssl_min_protocol_version", "PGSSLMINPROTOCOLVERSION", "TLSv1.2", CHECK_TLS, NULL},
    {"ssl_max_protocol_version", "PGSSLMAXPROTOCOLVERSION", NULL, CHECK_TLS, NULL},
    {"gssencmode", "PGGSSENCMODE", "prefer", CHECK_ENUM, gss_modes},
    {"krbsrvname", "PGKRBSRVNAME", "postgres", CHECK_NONE, NULL},
    {"gsslib", "PGGSSLIB", NULL, CHECK_NONE, NULL},
    {"gssdelegation", "PGGSSDELEGATION", "0", CHECK_NONE, NULL},
    {"replication", NULL, NULL, CHECK_NONE, NULL}, /* the server checks it */
    {"target_session_attrs", "PGTARGETSESSIONATTRS", "any", CHECK_ENUM, session_attrs},
    {"load_balance_hosts", "PGLOADBALANCEHOSTS", "disable", CHECK_ENUM, lb_modes},
    /* an unset maximum follows the minimum (apply_defaults) */
    {"min_protocol_version", "PGMINPROTOCOLVERSION", "3.0", CHECK_ENUM, proto_versions},
    {"max_protocol_version", "PGMAXPROTOCOLVERSION", NULL, CHECK_ENUM, proto_versions},
};

#define NOPTS PGW__ARRAY_LEN(options)

/* Environment variables libpq sends as startup parameters, under libpq's
 * names (a value "default", in any case, means "do not send"; an empty value
 * is sent). */
static const struct {
    const char *envvar, *param;
} env_params[] = {{"PGDATESTYLE", "datestyle"}, {"PGTZ", "timezone"}, {"PGGEQO", "geqo"}};

#define NENV_PARAMS PGW__ARRAY_LEN(env_params)

/* One usable line of the password file, fields unescaped; NULL = '*'. */
typedef struct pgpass_entry {
    const char *field[4]; /* host, port, database, user */
    const char *password;
} pgpass_entry_t;

struct pgw_conninfo {
    const pgw_allocator_t *alloc;
    char *val[NOPTS];
    char *env_param[NENV_PARAMS];
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

/* ---- small helpers ---- */

/* errbuf and errlen travel together through the parser. */
typedef struct err_out {
    char *buf;
    size_t len;
} err_out_t;

#define FAIL(e, ...) pgw__fail_msg((e)->buf, (e)->len, PGW_ECONNINFO, __VA_ARGS__)

static int option_index(const char *keyword)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (strcmp(options[i].keyword, keyword) == 0) return (int)i;
    return -1;
}

static int opt(const char *keyword)
{
    int i = option_index(keyword);
    return i < 0 ? 0 : i; /* only called with names from the table */
}

#define VAL(ci, kw) ((ci)->val[opt(kw)])

/* Set keyword to value (copied). replace: overwrite an earlier value. */
static int store(pgw_conninfo_t *ci, int i, const char *value, bool replace)
{
    if (ci->val[i] && !replace) return 0;
    char *copy = pgw__strdup(ci->alloc, value);
    if (!copy) return PGW_ENOMEM;
    pgw__free(ci->alloc, ci->val[i]);
    ci->val[i] = copy;
    return 0;
}

/* Store a keyword of the string or URI. Returns 1 if kw is not a keyword.
 * As in libpq, requiressl=1 means sslmode=require and any other requiressl
 * sslmode=prefer. */
static int store_param(pgw_conninfo_t *ci, const char *kw, const char *value)
{
    if (strcmp(kw, "requiressl") == 0) {
        kw = "sslmode";
        value = value[0] == '1' ? "require" : "prefer";
    }
    int i = option_index(kw);
    return i < 0 ? 1 : store(ci, i, value, true);
}

static int store_keyword(pgw_conninfo_t *ci, const char *kw, const char *value, err_out_t *e)
{
    int rc = store_param(ci, kw, value);
    return rc == 1 ? FAIL(e, "invalid connection option \"%s\"", kw) : rc;
}

static bool is_blank(char c)
{
    return isspace((unsigned char)c) != 0;
}

/* ---- keyword/value strings ---- */

/* Read one value at *pp into out (room for strlen(*pp) + 1): quoted with
 * '...' or bare up to whitespace; backslash escapes the next character. */
static int read_value(const char **pp, char *out, err_out_t *e)
{
    const char *p = *pp;
    if (*p == '\'') {
        p++;
        for (;;) {
            if (*p == '\0') return FAIL(e, "unterminated quoted string in connection info string");
            if (*p == '\\' && p[1] != '\0') {
                p++;
            } else if (*p == '\'') {
                p++;
                break;
            }
            *out++ = *p++;
        }
    } else {
        /* a trailing backslash escapes nothing and is dropped, as in libpq */
        while (*p && !is_blank(*p)) {
            if (*p == '\\' && *++p == '\0') break;
            *out++ = *p++;
        }
    }
    *out = '\0';
    *pp = p;
    return 0;
}

static int parse_keyword_value(pgw_conninfo_t *ci, const char *s, err_out_t *e)
{
    size_t n = strlen(s);
    char *kw = pgw__malloc(ci->alloc, n + 1), *val = pgw__malloc(ci->alloc, n + 1);
    int rc = kw && val ? 0 : PGW_ENOMEM;
    const char *p = s;
    while (rc == 0) {
        while (is_blank(*p))
            p++;
        if (*p == '\0') break;
        const char *start = p;
        while (*p && !is_blank(*p) && *p != '=')
            p++;
        memcpy(kw, start, (size_t)(p - start));
        kw[p - start] = '\0';
        while (is_blank(*p))
            p++;
        if (*p != '=') {
            rc = FAIL(e, "missing \"=\" after \"%s\" in connection info string", kw);
            break;
        }
        p++;
        while (is_blank(*p))
            p++;
        rc = read_value(&p, val, e);
        if (rc == 0) rc = store_keyword(ci, kw, val, e);
    }
    pgw__free(ci->alloc, kw);
    pgw__free(ci->alloc, val);
    return rc;
}

/* ---- URIs ---- */

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decode s in place. */
static int uri_decode(char *s, err_out_t *e)
{
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (*r != '%') {
            *w++ = *r;
            continue;
        }
        int hi = r[1] ? hex_value(r[1]) : -1, lo = hi >= 0 && r[2] ? hex_value(r[2]) : -1;
        if (hi < 0 || lo < 0) return FAIL(e, "invalid percent-encoded token: \"%s\"", s);
        if (hi == 0 && lo == 0)
            return FAIL(e, "forbidden value %%00 in percent-encoded value: \"%s\"", s);
        *w++ = (char)(hi << 4 | lo);
        r += 2;
    }
    *w = '\0';
    return 0;
}

static int store_decoded(pgw_conninfo_t *ci, const char *kw, char *value, err_out_t *e)
{
    int rc = uri_decode(value, e);
    return rc ? rc : store_keyword(ci, kw, value, e);
}

/* "?key=value&...": libpq's names, plus ssl=true meaning sslmode=require. */
static int parse_uri_params(pgw_conninfo_t *ci, char *p, err_out_t *e)
{
    while (*p) {
        char *key = p, *eq = NULL;
        while (*p && *p != '&') {
            if (*p == '=') {
                if (eq)
                    return FAIL(e, "extra key/value separator \"=\" in URI query parameter: \"%s\"",
                                key);
                eq = p;
            }
            p++;
        }
        if (*p == '&') *p++ = '\0';
        if (!eq)
            return FAIL(e, "missing key/value separator \"=\" in URI query parameter: \"%s\"", key);
        *eq = '\0';
        char *value = eq + 1;
        int rc = uri_decode(key, e);
        if (rc == 0) rc = uri_decode(value, e);
        if (rc != 0) return rc;
        if (strcmp(key, "ssl") == 0 && strcmp(value, "true") == 0) {
            key = "sslmode";
            value = "require";
        }
        rc = store_param(ci, key, value);
        if (rc == 1) return FAIL(e, "invalid URI query parameter: \"%s\"", key);
        if (rc != 0) return rc;
    }
    return 0;
}

/* "user[:password]@" if an '@' comes before the first '/'. */
static int parse_uri_credentials(pgw_conninfo_t *ci, char **pp, err_out_t *e)
{
    char *start = *pp, *p = start;
    while (*p && *p != '@' && *p != '/')
        p++;
    if (*p != '@') return 0;
    *p = '\0';
    *pp = p + 1;
    char *colon = strchr(start, ':');
    if (colon) *colon = '\0';
    int rc = 0;
    if (*start) rc = store_decoded(ci, "user", start, e);
    if (rc == 0 && colon && colon[1]) rc = store_decoded(ci, "password", colon + 1, e);
    return rc;
}

static int buf_add(pgw_buf_t *b, const char *s, size_t n)
{
    return pgw_buf_append(b, s, n) == 0 ? 0 : PGW_ENOMEM;
}

/* host[:port] entries separated by ',', IPv6 literals in brackets. Leaves
 * *pp at the character that ended the list ('\0', '/' or '?'), which it
 * returns in *end. */
static int parse_uri_hosts(char **pp, pgw_buf_t *hosts, pgw_buf_t *ports, char *end,
                           const char *uri, err_out_t *e)
{
    char *p = *pp, stop = '\0';
    do {
        if (stop == ',') p++; /* past the separator, now a NUL */
        char *host = p;
        if (*p == '[') {
            host = ++p;
            while (*p && *p != ']')
                p++;
            if (*p == '\0')
                return FAIL(e,
                            "end of string reached when looking for matching \"]\" in IPv6 host "
                            "address in URI: \"%s\"",
                            uri);
            if (p == host) return FAIL(e, "IPv6 host address may not be empty in URI: \"%s\"", uri);
            *p++ = '\0';
            if (*p && *p != ':' && *p != '/' && *p != '?' && *p != ',')
                return FAIL(e,
                            "unexpected character \"%c\" at position %d in URI (expected \":\" "
                            "or \"/\"): \"%s\"",
                            *p, (int)(p - *pp) + 1, uri);
        } else {
            while (*p && *p != ':' && *p != '/' && *p != '?' && *p != ',')
                p++;
        }
        stop = *p;
        *p = '\0';
        if (buf_add(hosts, host, strlen(host)) || buf_add(hosts, ",", 1)) return PGW_ENOMEM;
        if (stop == ':') {
            char *port = ++p;
            while (*p && *p != '/' && *p != '?' && *p != ',')
                p++;
            stop = *p;
            *p = '\0';
            if (buf_add(ports, port, strlen(port))) return PGW_ENOMEM;
        }
        if (buf_add(ports, ",", 1)) return PGW_ENOMEM;
    } while (stop == ',');
    *pp = p;
    *end = stop;
    return 0;
}

/* Store a comma list built by parse_uri_hosts (trailing ',' dropped) unless
 * it is empty. */
static int store_list(pgw_conninfo_t *ci, const char *kw, pgw_buf_t *b, err_out_t *e)
{
    if (buf_add(b, "", 1)) return PGW_ENOMEM;
    char *s = (char *)b->data;
    size_t n = strlen(s);
    if (n && s[n - 1] == ',') s[n - 1] = '\0';
    return s[0] ? store_decoded(ci, kw, s, e) : 0;
}

static size_t uri_prefix_len(const char *s)
{
    if (strncmp(s, "postgresql://", 13) == 0) return 13;
    if (strncmp(s, "postgres://", 11) == 0) return 11;
    return 0;
}

static int parse_uri(pgw_conninfo_t *ci, const char *uri, size_t prefix, err_out_t *e)
{
    char *copy = pgw__strdup(ci->alloc, uri);
    if (!copy) return PGW_ENOMEM;
    pgw_buf_t hosts, ports;
    pgw_buf_init(&hosts, ci->alloc);
    pgw_buf_init(&ports, ci->alloc);
    char *p = copy + prefix, stop = '\0';
    int rc = parse_uri_credentials(ci, &p, e);
    if (rc == 0) rc = parse_uri_hosts(&p, &hosts, &ports, &stop, uri, e);
    if (rc == 0) rc = store_list(ci, "host", &hosts, e);
    if (rc == 0) rc = store_list(ci, "port", &ports, e);
    if (rc == 0 && stop == '/') {
        char *db = ++p;
        while (*p && *p != '?')
            p++;
        stop = *p;
        *p = '\0';
        if (*db) rc = store_decoded(ci, "dbname", db, e);
    }
    if (rc == 0 && stop == '?') rc = parse_uri_params(ci, p + 1, e);
    pgw_buf_free(&hosts);
    pgw_buf_free(&ports);
    pgw__free(ci->alloc, copy);
    return rc;
}

/* ---- files ---- */

/* Read a whole small file. Returns 0 (with *out NUL-terminated, owned),
 * 1 if it does not exist or cannot be read, or PGW_ENOMEM. */
static int read_file(const pgw_allocator_t *a, const char *path, char **out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 1;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return 1;
    }
    /* Sized from the file, capped: a larger file is read up to the cap. */
    size_t cap = st.st_size > MAX_FILE_SIZE ? MAX_FILE_SIZE : (size_t)st.st_size;
    char *text = pgw__malloc(a, cap + 1);
    if (!text) {
        fclose(f);
        return PGW_ENOMEM;
    }
    size_t n = cap ? fread(text, 1, cap, f) : 0;
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad) {
        pgw__free(a, text);
        return 1;
    }
    text[n] = '\0';
    *out = text;
    return 0;
}

/* The next line of *pp (NUL-terminated in place, trailing CR/LF removed).
 * *raw_len (if not NULL) receives its length with the newline. */
static char *next_line(char **pp, size_t *raw_len)
{
    char *line = *pp;
    if (*line == '\0') return NULL;
    char *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *pp = nl + 1;
    } else {
        *pp = line + strlen(line);
    }
    if (raw_len) *raw_len = (size_t)(*pp - line);
    size_t n = strlen(line);
    while (n && line[n - 1] == '\r')
        line[--n] = '\0';
    return line;
}

static const char *home_dir(void)
{
    const char *home = getenv("HOME");
    if (home && *home) return home;
    struct passwd *pw = getpwuid(geteuid());
    return pw ? pw->pw_dir : NULL;
}

/* ---- the service file ---- */

/* libpq reads a service file line into 1024 bytes and refuses a line that
 * fills them. */
#define SERVICE_LINE_MAX 1022

/* Apply the lines of section [service] in text to unset options. Returns 1
 * if the section was found, 0 if not, or an error. */
static int apply_service_text(pgw_conninfo_t *ci, char *text, const char *path, const char *service,
                              err_out_t *e)
{
    bool in_group = false, found = false;
    size_t service_len = strlen(service);
    char *cursor = text, *line;
    size_t raw;
    for (int lineno = 1; (line = next_line(&cursor, &raw)) != NULL; lineno++) {
        if (raw > SERVICE_LINE_MAX)
            return FAIL(e, "line %d too long in service file \"%s\"", lineno, path);
        size_t n = strlen(line);
        while (n && is_blank(line[n - 1]))
            line[--n] = '\0';
        while (is_blank(*line))
            line++;
        if (*line == '\0' || *line == '#') continue;
        if (*line == '[') {
            if (found) break; /* the section ended */
            in_group = strncmp(line + 1, service, service_len) == 0 && line[service_len + 1] == ']';
            found = in_group;
            continue;
        }
        if (!in_group) continue;
        char *eq = strchr(line, '=');
        if (!eq) return FAIL(e, "syntax error in service file \"%s\", line %d", path, lineno);
        *eq = '\0';
        if (strcmp(line, "service") == 0 || strcmp(line, "servicefile") == 0)
            return FAIL(e,
                        "nested \"%s\" specifications not supported in service file \"%s\", "
                        "line %d",
                        line, path, lineno);
        int i = option_index(line);
        if (i < 0) return FAIL(e, "syntax error in service file \"%s\", line %d", path, lineno);
        int rc = store(ci, i, eq + 1, false);
        if (rc != 0) return rc;
    }
    return found ? 1 : 0;
}

/* Returns 1 if the section was found, 0 if not, or an error; a file that
 * cannot be read is an error (libpq's "service file ... not found"). */
static int apply_service_file(pgw_conninfo_t *ci, const char *path, const char *service,
                              err_out_t *e)
{
    char *text = NULL;
    int rc = read_file(ci->alloc, path, &text);
    if (rc == 1) return FAIL(e, "service file \"%s\" not found", path);
    if (rc != 0) return rc;
    rc = apply_service_text(ci, text, path, service, e);
    pgw__free(ci->alloc, text);
    return rc;
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* libpq's parseServiceInfo: an explicit service file must exist; the
 * per-user and system files are read when they exist. An empty service name
 * is a name (section "[]"). */
static int apply_service(pgw_conninfo_t *ci, err_out_t *e)
{
    const char *service = VAL(ci, "service") ? VAL(ci, "service") : getenv("PGSERVICE");
    if (!service) return 0;
    char path[4096];
    const char *file = VAL(ci, "servicefile") ? VAL(ci, "servicefile") : getenv("PGSERVICEFILE");
    const char *home = file ? NULL : home_dir();
    int rc = 0;
    if (file)
        snprintf(path, sizeof path, "%s", file);
    else if (home)
        snprintf(path, sizeof path, "%s/.pg_service.conf", home);
    if (file || (home && file_exists(path))) rc = apply_service_file(ci, path, service, e);
    if (rc != 0) return rc < 0 ? rc : 0;
    const char *sysconf = getenv("PGSYSCONFDIR");
    snprintf(path, sizeof path, "%s/pg_service.conf", sysconf ? sysconf : DEFAULT_SYSCONFDIR);
    if (file_exists(path)) rc = apply_service_file(ci, path, service, e);
    if (rc < 0) return rc;
    if (rc == 0) return FAIL(e, "definition of service \"%s\" not found", service);
    return 0;
}

/* ---- environment and defaults ---- */

/* Case-insensitive "default", the value that means "do not send". */
static bool is_default_word(const char *v)
{
    const char *d = "default";
    for (; *v && *d; v++, d++)
        if (tolower((unsigned char)*v) != *d) return false;
    return *v == '\0' && *d == '\0';
}

static int apply_environment(pgw_conninfo_t *ci)
{
    for (size_t i = 0; i < NOPTS; i++) {
        const char *v = options[i].envvar ? getenv(options[i].envvar) : NULL;
        if (v && store(ci, (int)i, v, false) != 0) return PGW_ENOMEM;
    }
    /* The deprecated PGREQUIRESSL: a value starting with '1' means
     * sslmode=require, below PGSSLMODE (libpq since 9.3). */
    const char *req = getenv("PGREQUIRESSL");
    if (req && req[0] == '1' && store(ci, opt("sslmode"), "require", false) != 0) return PGW_ENOMEM;
    for (size_t i = 0; i < NENV_PARAMS; i++) {
        const char *v = getenv(env_params[i].envvar);
        if (!v || is_default_word(v)) continue;
        ci->env_param[i] = pgw__strdup(ci->alloc, v);
        if (!ci->env_param[i]) return PGW_ENOMEM;
    }
    return 0;
}

static int apply_defaults(pgw_conninfo_t *ci, err_out_t *e)
{
    /* libpq 16: with sslrootcert=system and no sslmode given, the default
     * sslmode is verify-full instead of prefer. */
    int sslmode = opt("sslmode");
    const char *root = VAL(ci, "sslrootcert");
    if (!ci->val[sslmode] && root && strcmp(root, "system") == 0 &&
        store(ci, sslmode, "verify-full", false) != 0)
        return PGW_ENOMEM;
    for (size_t i = 0; i < NOPTS; i++)
        if (options[i].fallback && store(ci, (int)i, options[i].fallback, false) != 0)
            return PGW_ENOMEM;
    /* libpq 18: the maximum protocol is 3.0, or the latest when the
     * minimum asks for more. An invalid minimum is refused later. */
    const char *minv = VAL(ci, "min_protocol_version");
    if (store(ci, opt("max_protocol_version"), strcmp(minv, "3.0") == 0 ? "3.0" : "latest",
              false) != 0)
        return PGW_ENOMEM;
    int user = opt("user"), db = opt("dbname"), host = opt("host");
    if (!ci->val[user] || !ci->val[user][0]) {
        struct passwd *pw = getpwuid(geteuid());
        if (!pw) return FAIL(e, "could not look up local user ID %ld", (long)geteuid());
        if (store(ci, user, pw->pw_name, true) != 0) return PGW_ENOMEM;
    }
    if (!ci->val[db] || !ci->val[db][0])
        if (store(ci, db, ci->val[user], true) != 0) return PGW_ENOMEM;
    const char *addr = VAL(ci, "hostaddr");
    if ((!ci->val[host] || !ci->val[host][0]) && (!addr || !addr[0]))
        if (store(ci, host, PGW_DEFAULT_SOCKET_DIR, true) != 0) return PGW_ENOMEM;
    return 0;
}

/* ---- validation ---- */

/* libpq's parse_int_param: an int in decimal, blanks allowed around it. */
static bool parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno != 0 || v < INT_MIN || v > INT_MAX) return false;
    while (is_blank(*end))
        end++;
    if (*end) return false;
    *out = (int)v;
    return true;
}

static int invalid_integer(err_out_t *e, const char *value, const char *keyword)
{
    return FAIL(e, "invalid integer value \"%s\" for connection option \"%s\"", value, keyword);
}

/* libpq's sslVerifyProtocolVersion and sslVerifyProtocolRange. */
static bool tls_version_ok(const char *v)
{
    for (const char *const *t = tls_versions; *t; t++)
        if (strcasecmp(v, *t) == 0) return true;
    return !*v;
}

static bool tls_range_ok(const char *minv, const char *maxv)
{
    if (!minv || !maxv || !*minv || !*maxv || strcasecmp(minv, "TLSv1") == 0) return true;
    if (strcasecmp(maxv, "TLSv1") == 0) return false;
    return strcasecmp(minv, maxv) <= 0;
}

static bool in_list(const char *v, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(v, *list) == 0) return true;
    return false;
}

/* The session's parser, libpq 18's rules and words. */
static int check_require_auth(const char *v, err_out_t *e)
{
    unsigned allowed;
    int rc = pgw__parse_require_auth(v, &allowed, e->buf, e->len);
    return rc < 0 ? PGW_ECONNINFO : 0;
}

/* 0 for 3.0 (also unset), 2 for 3.2 and latest. */
static int proto_version_rank(const char *v)
{
    return !v || strcmp(v, "3.0") == 0 ? 0 : 2;
}

static int validate(pgw_conninfo_t *ci, err_out_t *e)
{
    for (size_t i = 0; i < NOPTS; i++) {
        const char *v = ci->val[i];
        if (!v) continue;
        int n;
        if (options[i].check == CHECK_INT && !parse_int(v, &n))
            return invalid_integer(e, v, options[i].keyword);
        if ((options[i].check == CHECK_ENUM && !in_list(v, options[i].allowed)) ||
            (options[i].check == CHECK_TLS && !tls_version_ok(v)))
            return FAIL(e, "invalid %s value: \"%s\"", options[i].keyword, v);
    }
    if (!tls_range_ok(VAL(ci, "ssl_min_protocol_version"), VAL(ci, "ssl_max_protocol_version")))
        return FAIL(e, "invalid SSL protocol version range");
    /* libpq 17: direct TLS has no plaintext fallback to negotiate. */
    const char *mode = VAL(ci, "sslmode"), *neg = VAL(ci, "sslnegotiation");
    if (neg && strcmp(neg, "direct") == 0 && mode &&
        (strcmp(mode, "disable") == 0 || strcmp(mode, "allow") == 0 || strcmp(mode, "prefer") == 0))
        return FAIL(e,
                    "weak sslmode \"%s\" may not be used with sslnegotiation=direct (use "
                    "\"require\", \"verify-ca\", or \"verify-full\")",
                    mode);
    const char *ra = VAL(ci, "require_auth");
    if (ra && *ra) {
        int rc = check_require_auth(ra, e);
        if (rc != 0) return rc;
    }
    /* libpq 18 refuses before connecting what would fail later: the
     * system's roots prove nothing without the host name check. */
    const char *root = VAL(ci, "sslrootcert");
    if (root && strcmp(root, "system") == 0 && strcmp(mode, "verify-full") != 0)
        return FAIL(e,
                    "weak sslmode \"%s\" may not be used with sslrootcert=system (use "
                    "\"verify-full\")",
                    mode);
    if (proto_version_rank(VAL(ci, "min_protocol_version")) >
        proto_version_rank(VAL(ci, "max_protocol_version")))
        return FAIL(e, "\"%s\" is greater than \"%s\"", "min_protocol_version",
                    "max_protocol_version");
    return 0;
}

/* ---- hosts ---- */

static size_t list_count(const char *s)
{
    size_t n = 1;
    for (; *s; s++)
        n += *s == ',';
    return n;
}

/* Split a copy of s at commas; returns the copy (the i-th element is found
 * by list_item). */
static char *list_split(const pgw_allocator_t *a, const char *s)
{
    char *copy = pgw__strdup(a, s);
    if (!copy) return NULL;
    for (char *p = copy; *p; p++)
        if (*p == ',') *p = '\0';
    return copy;
}

static const char *list_item(const char *split, size_t i)
{
    while (i--)
        split += strlen(split) + 1;
    return split;
}

/* What libpq finds wrong with host h when it reaches it, in its order:
 * the port, then the address or the socket path. Writes the message into
 * msg (empty if none) and returns 1 if the whole connect ends there. */
static int host_problem(pgw_host_t *h, char *msg, size_t len)
{
    int port = PGW_DEFAULT_PORT;
    msg[0] = '\0';
    if (*h->port_text && !parse_int(h->port_text, &port)) {
        snprintf(msg, len, "invalid integer value \"%s\" for connection option \"port\"",
                 h->port_text);
        return 1;
    }
    if (port < 1 || port > 65535) {
        snprintf(msg, len, "invalid port number: \"%s\"", h->port_text);
        return 0;
    }
    h->port = (uint16_t)port;
    if (h->hostaddr) {
        /* numeric only: no resolver, no DNS */
        struct addrinfo hints, *res = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICHOST;
        int rc = getaddrinfo(h->hostaddr, NULL, &hints, &res);
        if (res) freeaddrinfo(res);
        if (rc != 0 || !res)
            snprintf(msg, len, "could not parse network address \"%s\": %s", h->hostaddr,
                     gai_strerror(rc));
    } else if (h->is_unix) {
        char path[UNIX_PATH_MAX + 32 + 1];
        int n = snprintf(path, sizeof path, "%s/.s.PGSQL.%d", h->host, port);
        if (n < 0 || (size_t)n > UNIX_PATH_MAX)
            snprintf(msg, len,
                     "Unix-domain socket path \"%.200s/.s.PGSQL.%d\" is too long (maximum %d "
                     "bytes)",
                     h->host, port, (int)UNIX_PATH_MAX);
    }
    return 0;
}

static int check_host(pgw_conninfo_t *ci, size_t i)
{
    char msg[512];
    pgw_host_t *h = &ci->hosts[i];
    h->error_ends_connect = host_problem(h, msg, sizeof msg);
    if (!msg[0]) return 0;
    ci->host_error[i] = pgw__strdup(ci->alloc, msg);
    if (!ci->host_error[i]) return PGW_ENOMEM;
    h->error = ci->host_error[i];
    return 0;
}

static int build_hosts(pgw_conninfo_t *ci, err_out_t *e)
{
    const char *host = VAL(ci, "host"), *addr = VAL(ci, "hostaddr"), *port = VAL(ci, "port");
    bool has_host = host && *host, has_addr = addr && *addr;
    size_t nhost = has_host ? list_count(host) : 0, naddr = has_addr ? list_count(addr) : 0;
    size_t n = has_addr ? naddr : has_host ? nhost : 1;
    if (has_host && has_addr && nhost != naddr)
        return FAIL(e, "could not match %zu host names to %zu hostaddr values", nhost, naddr);
    size_t nport = port && *port ? list_count(port) : 0;
    if (nport > 1 && nport != n)
        return FAIL(e, "could not match %zu port numbers to %zu hosts", nport, n);
    ci->port_list = nport ? list_split(ci->alloc, port) : NULL;
    ci->host_list = has_host ? list_split(ci->alloc, host) : NULL;
    ci->addr_list = has_addr ? list_split(ci->alloc, addr) : NULL;
    ci->hosts = pgw__calloc(ci->alloc, n, sizeof *ci->hosts);
    ci->host_error = pgw__calloc(ci->alloc, n, sizeof *ci->host_error);
    int rc = 0;
    if ((nport && !ci->port_list) || (has_host && !ci->host_list) || (has_addr && !ci->addr_list) ||
        !ci->hosts || !ci->host_error)
        rc = PGW_ENOMEM;
    ci->nhosts = rc == 0 ? n : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        pgw_host_t *h = &ci->hosts[i];
        h->host = has_host ? list_item(ci->host_list, i) : "";
        h->hostaddr = has_addr ? list_item(ci->addr_list, i) : NULL;
        if (h->hostaddr && !*h->hostaddr) h->hostaddr = NULL;
        if (!*h->host && !h->hostaddr) h->host = PGW_DEFAULT_SOCKET_DIR;
        h->is_unix = !h->hostaddr && (h->host[0] == '/' || h->host[0] == '@');
        h->port_text = nport ? list_item(ci->port_list, nport == 1 ? 0 : i) : "";
        if (!*h->port_text) h->port_text = "5432";
        rc = check_host(ci, i);
    }
    /* libpq reaches the first host before anything else: a port there that
     * is not an integer fails the connect before any host is contacted,
     * which is a parse error here */
    if (rc == 0 && ci->hosts[0].error_ends_connect) return FAIL(e, "%s", ci->hosts[0].error);
    return rc;
}

/* ---- the password file ---- */

/* Cut one field at *pp up to an unescaped ':', unescaping in place. Returns
 * NULL if the line ends first. *wild is set if the field is exactly "*". */
static char *cut_field(char **pp, bool *wild)
{
    char *start = *pp, *r = start, *w = start;
    *wild = r[0] == '*' && r[1] == ':';
    while (*r && *r != ':') {
        if (*r == '\\' && r[1]) r++;
        *w++ = *r++;
    }
    if (*r != ':') return NULL;
    *w = '\0';
    *pp = r + 1;
    return start;
}

/* The password field: up to the first unescaped ':' (libpq's rule). */
static void unescape_password(char *s)
{
    char *w = s;
    for (char *r = s; *r && *r != ':'; r++) {
        if (*r == '\\' && r[1]) r++;
        *w++ = *r;
    }
    *w = '\0';
}

static int parse_pgpass(pgw_conninfo_t *ci, char *text)
{
    size_t lines = 1;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    ci->pgpass = pgw__calloc(ci->alloc, lines, sizeof *ci->pgpass);
    if (!ci->pgpass) return PGW_ENOMEM;
    char *cursor = text, *line;
    while ((line = next_line(&cursor, NULL)) != NULL) {
        if (*line == '\0' || *line == '#') continue;
        pgpass_entry_t *en = &ci->pgpass[ci->npgpass];
        char *p = line;
        bool ok = true;
        for (int f = 0; f < 4 && ok; f++) {
            bool wild;
            char *field = cut_field(&p, &wild);
            ok = field != NULL;
            en->field[f] = wild ? NULL : field;
        }
        if (!ok) continue;
        unescape_password(p);
        en->password = p;
        ci->npgpass++;
    }
    return 0;
}

static int set_warning(pgw_conninfo_t *ci, const char *fmt, const char *path)
{
    char msg[4200];
    snprintf(msg, sizeof msg, fmt, path);
    ci->passfile_warning = pgw__strdup(ci->alloc, msg);
    return ci->passfile_warning ? 0 : PGW_ENOMEM;
}

static int load_pgpass(pgw_conninfo_t *ci)
{
    const char *pw = VAL(ci, "password");
    if (pw && *pw) return 0;
    char path[4096];
    const char *file = VAL(ci, "passfile");
    if (file && *file) {
        snprintf(path, sizeof path, "%s", file);
    } else {
        const char *home = home_dir();
        if (!home) return 0;
        snprintf(path, sizeof path, "%s/.pgpass", home);
    }
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    if (!S_ISREG(st.st_mode))
        return set_warning(ci, "password file \"%s\" is not a plain file", path);
    if (st.st_mode & (S_IRWXG | S_IRWXO))
        return set_warning(ci,
                           "password file \"%s\" has group or world access; permissions should "
                           "be u=rw (0600) or less",
                           path);
    int rc = read_file(ci->alloc, path, &ci->pgpass_text);
    if (rc != 0) return rc == 1 ? 0 : rc;
    return parse_pgpass(ci, ci->pgpass_text);
}

/* ---- client_encoding=auto ---- */

/* libpq's pg_get_encoding_from_locale (src/port/chklocale.c): the codeset
 * names a C library reports, and the server's name for each. */
static const struct {
    const char *codeset, *encoding;
} codesets[] = {
    {"EUC-JP", "EUC_JP"},
    {"eucJP", "EUC_JP"},
    {"IBM-eucJP", "EUC_JP"},
    {"sdeckanji", "EUC_JP"},
    {"CP20932", "EUC_JP"},
    {"EUC-CN", "EUC_CN"},
    {"eucCN", "EUC_CN"},
    {"IBM-eucCN", "EUC_CN"},
    {"GB2312", "EUC_CN"},
    {"dechanzi", "EUC_CN"},
    {"CP20936", "EUC_CN"},
    {"EUC-KR", "EUC_KR"},
    {"eucKR", "EUC_KR"},
    {"IBM-eucKR", "EUC_KR"},
    {"deckorean", "EUC_KR"},
    {"5601", "EUC_KR"},
    {"CP51949", "EUC_KR"},
    {"EUC-TW", "EUC_TW"},
    {"eucTW", "EUC_TW"},
    {"IBM-eucTW", "EUC_TW"},
    {"cns11643", "EUC_TW"},
    {"UTF-8", "UTF8"},
    {"utf8", "UTF8"},
    {"CP65001", "UTF8"},
    {"ISO-8859-1", "LATIN1"},
    {"ISO8859-1", "LATIN1"},
    {"iso88591", "LATIN1"},
    {"CP28591", "LATIN1"},
    {"ISO-8859-2", "LATIN2"},
    {"ISO8859-2", "LATIN2"},
    {"iso88592", "LATIN2"},
    {"CP28592", "LATIN2"},
    {"ISO-8859-3", "LATIN3"},
    {"ISO8859-3", "LATIN3"},
    {"iso88593", "LATIN3"},
    {"CP28593", "LATIN3"},
    {"ISO-8859-4", "LATIN4"},
    {"ISO8859-4", "LATIN4"},
    {"iso88594", "LATIN4"},
    {"CP28594", "LATIN4"},
    {"ISO-8859-9", "LATIN5"},
    {"ISO8859-9", "LATIN5"},
    {"iso88599", "LATIN5"},
    {"CP28599", "LATIN5"},
    {"ISO-8859-10", "LATIN6"},
    {"ISO8859-10", "LATIN6"},
    {"iso885910", "LATIN6"},
    {"ISO-8859-13", "LATIN7"},
    {"ISO8859-13", "LATIN7"},
    {"iso885913", "LATIN7"},
    {"ISO-8859-14", "LATIN8"},
    {"ISO8859-14", "LATIN8"},
    {"iso885914", "LATIN8"},
    {"ISO-8859-15", "LATIN9"},
    {"ISO8859-15", "LATIN9"},
    {"iso885915", "LATIN9"},
    {"CP28605", "LATIN9"},
    {"ISO-8859-16", "LATIN10"},
    {"ISO8859-16", "LATIN10"},
    {"iso885916", "LATIN10"},
    {"CP1252", "WIN1252"},
    {"CP1250", "WIN1250"},
    {"CP1251", "WIN1251"},
    {"CP1253", "WIN1253"},
    {"CP1254", "WIN1254"},
    {"CP1255", "WIN1255"},
    {"CP1256", "WIN1256"},
    {"CP1257", "WIN1257"},
    {"CP1258", "WIN1258"},
    {"CP866", "WIN866"},
    {"ANSI-1251", "WIN1251"},
    {"CP874", "WIN874"},
    {"KOI8-R", "KOI8R"},
    {"CP20866", "KOI8R"},
    {"KOI8-U", "KOI8U"},
    {"CP21866", "KOI8U"},
    {"ISO-8859-5", "ISO_8859_5"},
    {"ISO8859-5", "ISO_8859_5"},
    {"iso88595", "ISO_8859_5"},
    {"CP28595", "ISO_8859_5"},
    {"ISO-8859-6", "ISO_8859_6"},
    {"ISO8859-6", "ISO_8859_6"},
    {"iso88596", "ISO_8859_6"},
    {"CP28596", "ISO_8859_6"},
    {"ISO-8859-7", "ISO_8859_7"},
    {"ISO8859-7", "ISO_8859_7"},
    {"iso88597", "ISO_8859_7"},
    {"CP28597", "ISO_8859_7"},
    {"ISO-8859-8", "ISO_8859_8"},
    {"ISO8859-8", "ISO_8859_8"},
    {"iso88598", "ISO_8859_8"},
    {"CP28598", "ISO_8859_8"},
    {"SJIS", "SJIS"},
    {"PCK", "SJIS"},
    {"CP932", "SJIS"},
    {"SHIFT_JIS", "SJIS"},
    {"BIG5", "BIG5"},
    {"BIG5HKSCS", "BIG5"},
    {"Big5-HKSCS", "BIG5"},
    {"CP950", "BIG5"},
    {"GBK", "GBK"},
    {"CP936", "GBK"},
    {"UHC", "UHC"},
    {"CP949", "UHC"},
    {"JOHAB", "JOHAB"},
    {"CP1361", "JOHAB"},
    {"GB18030", "GB18030"},
    {"CP54936", "GB18030"},
    {"SJIS_2004", "SHIFT_JIS_2004"},
    {"US-ASCII", "SQL_ASCII"},
};

/* The encoding of the process's LC_CTYPE locale, or "" when it has no
 * server name (libpq then sends no client_encoding). */
static const char *locale_encoding(void)
{
    const char *ctype = setlocale(LC_CTYPE, NULL);
    if (!ctype) return "";
    if (strcasecmp(ctype, "C") == 0 || strcasecmp(ctype, "POSIX") == 0) return "SQL_ASCII";
    const char *sys = nl_langinfo(CODESET);
    for (size_t i = 0; sys && i < PGW__ARRAY_LEN(codesets); i++)
        if (strcasecmp(sys, codesets[i].codeset) == 0) return codesets[i].encoding;
    return "";
}

static int resolve_client_encoding(pgw_conninfo_t *ci)
{
    const char *enc = VAL(ci, "client_encoding");
    if (!enc || strcmp(enc, "auto") != 0) return 0;
    ci->client_encoding = pgw__strdup(ci->alloc, locale_encoding());
    return ci->client_encoding ? 0 : PGW_ENOMEM;
}

/* ---- TCP options ---- */

/* One of the integer TCP options: -1 if unset, else its value with
 * negatives raised to 0 (libpq's setKeepalivesIdle and friends). */
static int tcp_int(const pgw_conninfo_t *ci, const char *kw, int *out, err_out_t *e)
{
    const char *v = VAL(ci, kw);
    int n;
    *out = -1;
    if (!v) return 0;
    if (!parse_int(v, &n)) return invalid_integer(e, v, kw);
    *out = n < 0 ? 0 : n;
    return 0;
}

int pgw_conninfo_tcp_options(const pgw_conninfo_t *ci, pgw_tcp_options_t *out, char *errbuf,
                             size_t errlen)
{
    if (errbuf && errlen) errbuf[0] = '\0';
    if (!ci || !out) return PGW_EINVAL;
    err_out_t e = {errbuf, errlen};
    out->keepalives = 1;
    out->keepalives_idle = out->keepalives_interval = out->keepalives_count = -1;
    out->tcp_user_timeout = -1;
    const char *v = VAL(ci, "keepalives");
    int n;
    if (v) {
        if (!parse_int(v, &n)) {
            /* libpq reports both lines */
            char first[200];
            err_out_t tmp = {first, sizeof first};
            invalid_integer(&tmp, v, "keepalives");
            return FAIL(&e, "%s\nkeepalives parameter must be an integer", first);
        }
        out->keepalives = n != 0;
    }
    /* with keepalives off, libpq looks at none of the others */
    if (!out->keepalives) return 0;
    int rc = tcp_int(ci, "keepalives_idle", &out->keepalives_idle, &e);
    if (rc == 0) rc = tcp_int(ci, "keepalives_interval", &out->keepalives_interval, &e);
    if (rc == 0) rc = tcp_int(ci, "keepalives_count", &out->keepalives_count, &e);
    if (rc == 0) rc = tcp_int(ci, "tcp_user_timeout", &out->tcp_user_timeout, &e);
    return rc;
}

/* ---- public API ---- */

int pgw_conninfo_parse(pgw_conninfo_t **out, const char *conninfo, const pgw_allocator_t *alloc,
                       char *errbuf, size_t errlen)
{
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (errbuf && errlen) errbuf[0] = '\0';
    err_out_t e = {errbuf, errlen};
    pgw_conninfo_t *ci = pgw__calloc(alloc, 1, sizeof *ci);
    if (!ci) return PGW_ENOMEM;
    ci->alloc = alloc;
    if (!conninfo) conninfo = "";
    size_t prefix = uri_prefix_len(conninfo);
    int rc = prefix ? parse_uri(ci, conninfo, prefix, &e) : parse_keyword_value(ci, conninfo, &e);
    if (rc == 0) rc = apply_service(ci, &e);
    if (rc == 0) rc = apply_environment(ci);
    if (rc == 0) rc = apply_defaults(ci, &e);
    if (rc == 0) rc = validate(ci, &e);
    if (rc == 0) rc = build_hosts(ci, &e);
    if (rc == 0) rc = resolve_client_encoding(ci);
    if (rc == 0) rc = load_pgpass(ci);
    if (rc != 0) {
        if (rc == PGW_ENOMEM) (void)pgw__fail_msg(errbuf, errlen, rc, "out of memory");
        pgw_conninfo_free(ci);
        return rc;
    }
    *out = ci;
    return 0;
}

static void free_secret(const pgw_allocator_t *a, char *s)
{
    if (!s) return;
    /* volatile keeps the wipe from being optimised away */
    for (volatile char *p = s; *p; p++)
        *p = 0;
    pgw__free(a, s);
}

void pgw_conninfo_free(pgw_conninfo_t *ci)
{
    if (!ci) return;
    const pgw_allocator_t *a = ci->alloc;
    for (size_t i = 0; i < NOPTS; i++) {
        if (i == (size_t)opt("password") || i == (size_t)opt("sslpassword"))
            free_secret(a, ci->val[i]);
        else
            pgw__free(a, ci->val[i]);
    }
    for (size_t i = 0; i < NENV_PARAMS; i++)
        pgw__free(a, ci->env_param[i]);
    for (size_t i = 0; ci->host_error && i < ci->nhosts; i++)
        pgw__free(a, ci->host_error[i]);
    pgw__free(a, ci->host_error);
    pgw__free(a, ci->client_encoding);
    pgw__free(a, ci->hosts);
    pgw__free(a, ci->host_list);
    pgw__free(a, ci->addr_list);
    pgw__free(a, ci->port_list);
    if (ci->pgpass_text) memset(ci->pgpass_text, 0, strlen(ci->pgpass_text));
    pgw__free(a, ci->pgpass_text);
    pgw__free(a, ci->pgpass);
    pgw__free(a, ci->passfile_warning);
    pgw__free(a, ci);
}

const char *pgw_conninfo_get(const pgw_conninfo_t *ci, const char *keyword)
{
    if (!ci || !keyword) return NULL;
    int i = option_index(keyword);
    return i < 0 ? NULL : ci->val[i];
}

const char *pgw_conninfo_keyword(size_t i)
{
    return i < NOPTS ? options[i].keyword : NULL;
}

const char *pgw_conninfo_keyword_envvar(const char *keyword)
{
    if (!keyword) return NULL;
    int i = option_index(keyword);
    return i < 0 ? NULL : options[i].envvar;
}

size_t pgw_conninfo_nhosts(const pgw_conninfo_t *ci)
{
    return ci ? ci->nhosts : 0;
}

int pgw_conninfo_host(const pgw_conninfo_t *ci, size_t i, pgw_host_t *out)
{
    if (!ci || !out) return PGW_EINVAL;
    if (i >= ci->nhosts) return PGW_EINDEX;
    *out = ci->hosts[i];
    return 0;
}

int pgw_host_socket_path(const pgw_host_t *h, char *buf, size_t len)
{
    if (!h || !h->is_unix || !h->host || (!buf && len)) return PGW_EINVAL;
    int n = snprintf(buf, len, "%s/.s.PGSQL.%u", h->host, (unsigned)h->port);
    if (n < 0 || (size_t)n >= len || (size_t)n > UNIX_PATH_MAX) return PGW_ERANGE;
    return n;
}

static bool field_matches(const char *field, const char *value)
{
    return field == NULL || strcmp(field, value) == 0;
}

const char *pgw_conninfo_password(const pgw_conninfo_t *ci, const pgw_host_t *h)
{
    if (!ci || !h) return NULL;
    const char *pw = VAL(ci, "password");
    if (pw && *pw) return pw;
    /* libpq matches a socket in the default directory, or no host, as
     * "localhost"; with only hostaddr it matches the address. */
    const char *host = h->host && *h->host ? h->host : h->hostaddr;
    if (!host || !*host || strcmp(host, PGW_DEFAULT_SOCKET_DIR) == 0) host = "localhost";
    /* the port as written: "05432" does not match a line for 5432 */
    const char *port = h->port_text && *h->port_text ? h->port_text : "5432";
    const char *db = VAL(ci, "dbname"), *user = VAL(ci, "user");
    for (size_t i = 0; i < ci->npgpass; i++) {
        const pgpass_entry_t *en = &ci->pgpass[i];
        if (field_matches(en->field[0], host) && field_matches(en->field[1], port) &&
            field_matches(en->field[2], db) && field_matches(en->field[3], user))
            return en->password;
    }
    return NULL;
}

const char *pgw_conninfo_passfile_warning(const pgw_conninfo_t *ci)
{
    return ci ? ci->passfile_warning : NULL;
}

int pgw_conninfo_startup_params(const pgw_conninfo_t *ci, const char **out, size_t cap)
{
    if (!ci || (!out && cap)) return PGW_EINVAL;
    /* libpq: an application_name that is set, even empty, hides the
     * fallback */
    const char *app = VAL(ci, "application_name");
    if (!app) app = VAL(ci, "fallback_application_name");
    const char *enc = ci->client_encoding ? ci->client_encoding : VAL(ci, "client_encoding");
    const char *pairs[][2] = {
        {"user", VAL(ci, "user")},
        {"database", VAL(ci, "dbname")},
        {"replication", VAL(ci, "replication")},
        {"options", VAL(ci, "options")},
        {"application_name", app},
        {"client_encoding", enc},
        /* last: see from_env below */
        {env_params[0].param, ci->env_param[0]},
        {env_params[1].param, ci->env_param[1]},
        {env_params[2].param, ci->env_param[2]},
    };
    size_t n = 0;
    for (size_t i = 0; i < PGW__ARRAY_LEN(pairs); i++) {
        /* the environment's parameters are sent even when empty */
        bool from_env = i >= PGW__ARRAY_LEN(pairs) - NENV_PARAMS;
        if (!pairs[i][1] || (!pairs[i][1][0] && !from_env)) continue;
        if (n >= cap) return PGW_ERANGE;
        out[2 * n] = pairs[i][0];
        out[2 * n + 1] = pairs[i][1];
        n++;
    }
    return (int)n;
}
