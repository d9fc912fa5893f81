/*
 * Connection options as libpq lists them: PQconninfoParse, PQconndefaults,
 * PQconninfoFree, over libpgwire's conninfo parser (src/conn/conninfo*.c).
 *
 * The arrays list libpq 15's options in libpq 15's order, with its labels,
 * display characters and sizes. An option of a later libpq that libpgwire
 * also reads (require_auth, load_balance_hosts ...) is refused by
 * PQconninfoParse as libpq 15 refuses it, and is never listed.
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conninfo_internal.h"
#include "pq/pq_internal.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct option {
    const char *keyword, *envvar, *compiled, *label, *dispchar;
    int dispsize;
} option_t;

static const option_t options[] = {
    {"service", "PGSERVICE", NULL, "Database-Service", "", 20},
    {"user", "PGUSER", NULL, "Database-User", "", 20},
    {"password", "PGPASSWORD", NULL, "Database-Password", "*", 20},
    {"passfile", "PGPASSFILE", NULL, "Database-Password-File", "", 64},
    {"channel_binding", "PGCHANNELBINDING", "prefer", "Channel-Binding", "", 8},
    {"connect_timeout", "PGCONNECT_TIMEOUT", NULL, "Connect-timeout", "", 10},
    {"dbname", "PGDATABASE", NULL, "Database-Name", "", 20},
    {"host", "PGHOST", NULL, "Database-Host", "", 40},
    {"hostaddr", "PGHOSTADDR", NULL, "Database-Host-IP-Address", "", 45},
    {"port", "PGPORT", "5432", "Database-Port", "", 6},
    {"client_encoding", "PGCLIENTENCODING", NULL, "Client-Encoding", "", 10},
    {"options", "PGOPTIONS", "", "Backend-Options", "", 40},
    {"application_name", "PGAPPNAME", NULL, "Application-Name", "", 64},
    {"fallback_application_name", NULL, NULL, "Fallback-Application-Name", "", 64},
    {"keepalives", NULL, NULL, "TCP-Keepalives", "", 1},
    {"keepalives_idle", NULL, NULL, "TCP-Keepalives-Idle", "", 10},
    {"keepalives_interval", NULL, NULL, "TCP-Keepalives-Interval", "", 10},
    {"keepalives_count", NULL, NULL, "TCP-Keepalives-Count", "", 10},
    {"tcp_user_timeout", NULL, NULL, "TCP-User-Timeout", "", 10},
    {"sslmode", "PGSSLMODE", "prefer", "SSL-Mode", "", 12},
    {"sslcompression", "PGSSLCOMPRESSION", "0", "SSL-Compression", "", 1},
    {"sslcert", "PGSSLCERT", NULL, "SSL-Client-Cert", "", 64},
    {"sslkey", "PGSSLKEY", NULL, "SSL-Client-Key", "", 64},
    {"sslpassword", NULL, NULL, "SSL-Client-Key-Password", "*", 20},
    {"sslrootcert", "PGSSLROOTCERT", NULL, "SSL-Root-Certificate", "", 64},
    {"sslcrl", "PGSSLCRL", NULL, "SSL-Revocation-List", "", 64},
    {"sslcrldir", "PGSSLCRLDIR", NULL, "SSL-Revocation-List-Dir", "", 64},
    {"sslsni", "PGSSLSNI", "1", "SSL-SNI", "", 1},
    {"requirepeer", "PGREQUIREPEER", NULL, "Require-Peer", "", 10},
    {"ssl_min_protocol_version", "PGSSLMINPROTOCOLVERSION", "TLSv1.2",
     "SSL-Minimum-Protocol-Version", "", 8},
    {"ssl_max_protocol_version", "PGSSLMAXPROTOCOLVERSION", NULL, "SSL-Maximum-Protocol-Version",
     "", 8},
    {"gssencmode", "PGGSSENCMODE", "prefer", "GSSENC-Mode", "", 8},
    {"krbsrvname", "PGKRBSRVNAME", "postgres", "Kerberos-service-name", "", 20},
    {"gsslib", "PGGSSLIB", NULL, "GSS-library", "", 7},
    {"replication", NULL, NULL, "Replication", "D", 5},
    {"target_session_attrs", "PGTARGETSESSIONATTRS", "any", "Target-Session-Attrs", "", 15},
};

#define NOPTIONS (sizeof options / sizeof options[0])

/* The array for vals (one per options[] entry, NULL: unset; taken over,
 * freed here on failure), in libpq's layout, ending with a NULL keyword.
 * NULL when out of memory. */
static PQconninfoOption *make_array(char **vals)
{
    PQconninfoOption *out = calloc(NOPTIONS + 1, sizeof *out);
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (!out) {
            free(vals[i]);
            continue;
        }
        PQconninfoOption *o = &out[i];
        o->keyword = (char *)options[i].keyword;
        o->envvar = (char *)options[i].envvar;
        o->compiled = (char *)options[i].compiled;
        o->label = (char *)options[i].label;
        o->dispchar = (char *)options[i].dispchar;
        o->dispsize = options[i].dispsize;
        o->val = vals[i];
    }
    return out;
}

/* The first option libpgwire read from the string that libpq 15 does not
 * know, in libpq 15's words; "" when there is none. */
static void refuse_later_options(const pgw_conninfo_t *ci, int uri, char *err, size_t len)
{
    for (size_t k = 0; pgw_conninfo_keyword(k); k++) {
        const char *kw = pgw_conninfo_keyword(k);
        int known = 0;
        for (size_t i = 0; i < NOPTIONS && !known; i++)
            known = strcmp(kw, options[i].keyword) == 0;
        if (!known && pgw_conninfo_get(ci, kw)) {
            snprintf(err, len,
                     uri ? "invalid URI query parameter: \"%s\""
                         : "invalid connection option \"%s\"",
                     kw);
            return;
        }
    }
    err[0] = '\0';
}

/* A malloc'd copy of v (NULL stays NULL); *oom set when the copy fails. */
static char *dup_or_null(const char *v, int *oom)
{
    if (!v) return NULL;
    char *d = strdup(v);
    if (!d) *oom = 1;
    return d;
}

void PQconninfoFree(PQconninfoOption *connOptions)
{
    if (!connOptions) return;
    for (PQconninfoOption *o = connOptions; o->keyword; o++)
        free(o->val);
    free(connOptions);
}

/* A message for *errmsg, libpq's way: the text and a newline, malloc'd. */
static void set_errmsg(char **errmsg, const char *text)
{
    if (!errmsg) return;
    size_t n = strlen(text);
    *errmsg = malloc(n + 2);
    if (*errmsg) snprintf(*errmsg, n + 2, "%s\n", text);
}

PQconninfoOption *PQconninfoParse(const char *conninfo, char **errmsg)
{
    if (errmsg) *errmsg = NULL;
    char err[1024] = "";
    err_out_t e = {err, sizeof err};
    pgw_conninfo_t *ci = pgw__calloc(NULL, 1, sizeof *ci);
    if (!ci) {
        set_errmsg(errmsg, "out of memory");
        return NULL;
    }
    if (!conninfo) conninfo = "";
    /* Only what the string says: no service file, environment or
     * defaults (libpq's parse_connection_string without use_defaults). */
    size_t prefix = pgw__ci_uri_prefix_len(conninfo);
    int rc = prefix ? pgw__ci_parse_uri(ci, conninfo, prefix, &e)
                    : pgw__ci_parse_keyword_value(ci, conninfo, &e);
    if (rc == 0) {
        refuse_later_options(ci, prefix > 0, err, sizeof err);
        if (err[0]) rc = PGW_ECONNINFO;
    }
    if (rc != 0) {
        set_errmsg(errmsg, rc == PGW_ENOMEM || !err[0] ? "out of memory" : err);
        pgw_conninfo_free(ci);
        return NULL;
    }
    char *vals[NOPTIONS];
    int oom = 0;
    for (size_t i = 0; i < NOPTIONS; i++)
        vals[i] = dup_or_null(pgw_conninfo_get(ci, options[i].keyword), &oom);
    pgw_conninfo_free(ci);
    PQconninfoOption *out = oom ? NULL : make_array(vals);
    if (oom)
        for (size_t i = 0; i < NOPTIONS; i++)
            free(vals[i]);
    if (!out) set_errmsg(errmsg, "out of memory");
    return out;
}

/* libpq's conninfo_add_defaults for an empty string: the service named by
 * PGSERVICE, then each option's environment variable (PGREQUIRESSL for
 * sslmode), its built-in default, and the operating system user. */
static int default_value(const pgw_conninfo_t *service, size_t i, char **out)
{
    const option_t *o = &options[i];
    const char *v = pgw_conninfo_get(service, o->keyword);
    if (!v && o->envvar) v = getenv(o->envvar);
    if (!v && strcmp(o->keyword, "sslmode") == 0) {
        const char *req = getenv("PGREQUIRESSL");
        if (req && req[0] == '1') v = "require";
    }
    if (!v) v = o->compiled;
    if (!v && strcmp(o->keyword, "user") == 0) {
        struct passwd *pw = getpwuid(geteuid());
        if (pw) v = pw->pw_name;
    }
    int oom = 0;
    *out = dup_or_null(v, &oom);
    return oom ? -1 : 0;
}

PQconninfoOption *PQconndefaults(void)
{
    err_out_t e = {NULL, 0};
    pgw_conninfo_t *service = pgw__calloc(NULL, 1, sizeof *service);
    if (!service) return NULL;
    /* A service that cannot be read fails the whole call, as in libpq. */
    if (pgw__ci_apply_service(service, &e) != 0) {
        pgw_conninfo_free(service);
        return NULL;
    }
    char *vals[NOPTIONS];
    int failed = 0;
    for (size_t i = 0; i < NOPTIONS; i++)
        if (default_value(service, i, &vals[i]) != 0) failed = 1;
    pgw_conninfo_free(service);
    if (failed) {
        for (size_t i = 0; i < NOPTIONS; i++)
            free(vals[i]);
        return NULL;
    }
    return make_array(vals);
}
