/*
 * Connection options as libpq lists them: PQconninfoParse, PQconndefaults,
 * PQconninfoFree, over libpgwire's conninfo parser (src/conn/conninfo*.c).
 *
 * The arrays list libpq 15's options in libpq 15's order, with its labels,
 * display characters and sizes; an option of a later libpq that libpgwire
 * also reads (require_auth, load_balance_hosts ...) follows them only when
 * it has a value, so a PQconninfo -> PQconnectdbParams round trip keeps it
 * while the list a libpq 15 program expects stays the same.
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
    int since; /* the libpq major version that added it (15: in libpq 15) */
} option_t;

static const option_t options[] = {
    {"service", "PGSERVICE", NULL, "Database-Service", "", 20, 15},
    {"user", "PGUSER", NULL, "Database-User", "", 20, 15},
    {"password", "PGPASSWORD", NULL, "Database-Password", "*", 20, 15},
    {"passfile", "PGPASSFILE", NULL, "Database-Password-File", "", 64, 15},
    {"channel_binding", "PGCHANNELBINDING", "prefer", "Channel-Binding", "", 8, 15},
    {"connect_timeout", "PGCONNECT_TIMEOUT", NULL, "Connect-timeout", "", 10, 15},
    {"dbname", "PGDATABASE", NULL, "Database-Name", "", 20, 15},
    {"host", "PGHOST", NULL, "Database-Host", "", 40, 15},
    {"hostaddr", "PGHOSTADDR", NULL, "Database-Host-IP-Address", "", 45, 15},
    {"port", "PGPORT", "5432", "Database-Port", "", 6, 15},
    {"client_encoding", "PGCLIENTENCODING", NULL, "Client-Encoding", "", 10, 15},
    {"options", "PGOPTIONS", "", "Backend-Options", "", 40, 15},
    {"application_name", "PGAPPNAME", NULL, "Application-Name", "", 64, 15},
    {"fallback_application_name", NULL, NULL, "Fallback-Application-Name", "", 64, 15},
    {"keepalives", NULL, NULL, "TCP-Keepalives", "", 1, 15},
    {"keepalives_idle", NULL, NULL, "TCP-Keepalives-Idle", "", 10, 15},
    {"keepalives_interval", NULL, NULL, "TCP-Keepalives-Interval", "", 10, 15},
    {"keepalives_count", NULL, NULL, "TCP-Keepalives-Count", "", 10, 15},
    {"tcp_user_timeout", NULL, NULL, "TCP-User-Timeout", "", 10, 15},
    {"sslmode", "PGSSLMODE", "prefer", "SSL-Mode", "", 12, 15},
    {"sslcompression", "PGSSLCOMPRESSION", "0", "SSL-Compression", "", 1, 15},
    {"sslcert", "PGSSLCERT", NULL, "SSL-Client-Cert", "", 64, 15},
    {"sslkey", "PGSSLKEY", NULL, "SSL-Client-Key", "", 64, 15},
    {"sslpassword", NULL, NULL, "SSL-Client-Key-Password", "*", 20, 15},
    {"sslrootcert", "PGSSLROOTCERT", NULL, "SSL-Root-Certificate", "", 64, 15},
    {"sslcrl", "PGSSLCRL", NULL, "SSL-Revocation-List", "", 64, 15},
    {"sslcrldir", "PGSSLCRLDIR", NULL, "SSL-Revocation-List-Dir", "", 64, 15},
    {"sslsni", "PGSSLSNI", "1", "SSL-SNI", "", 1, 15},
    {"requirepeer", "PGREQUIREPEER", NULL, "Require-Peer", "", 10, 15},
    {"ssl_min_protocol_version", "PGSSLMINPROTOCOLVERSION", "TLSv1.2",
     "SSL-Minimum-Protocol-Version", "", 8, 15},
    {"ssl_max_protocol_version", "PGSSLMAXPROTOCOLVERSION", NULL, "SSL-Maximum-Protocol-Version",
     "", 8, 15},
    {"gssencmode", "PGGSSENCMODE", "prefer", "GSSENC-Mode", "", 8, 15},
    {"krbsrvname", "PGKRBSRVNAME", "postgres", "Kerberos-service-name", "", 20, 15},
    {"gsslib", "PGGSSLIB", NULL, "GSS-library", "", 7, 15},
    {"replication", NULL, NULL, "Replication", "D", 5, 15},
    {"target_session_attrs", "PGTARGETSESSIONATTRS", "any", "Target-Session-Attrs", "", 15, 15},
    /* Later libpq versions' options: listed only with a value. */
    {"require_auth", "PGREQUIREAUTH", NULL, "Require-Auth", "", 14, 16},
    {"sslcertmode", "PGSSLCERTMODE", "allow", "SSL-Client-Cert-Mode", "", 8, 16},
    {"load_balance_hosts", "PGLOADBALANCEHOSTS", "disable", "Load-Balance", "", 8, 16},
    {"gssdelegation", "PGGSSDELEGATION", "0", "GSS-delegation", "", 1, 16},
    {"sslnegotiation", "PGSSLNEGOTIATION", "postgres", "SSL-Negotiation", "", 9, 17},
    {"servicefile", "PGSERVICEFILE", NULL, "Database-Service-File", "", 64, 18},
    {"min_protocol_version", "PGMINPROTOCOLVERSION", NULL, "Min-Protocol-Version", "", 6, 18},
    {"max_protocol_version", "PGMAXPROTOCOLVERSION", NULL, "Max-Protocol-Version", "", 6, 18},
    {"oauth_issuer", NULL, NULL, "OAuth-Issuer", "", 40, 18},
    {"oauth_client_id", NULL, NULL, "OAuth-Client-ID", "", 40, 18},
    {"oauth_client_secret", NULL, NULL, "OAuth-Client-Secret", "*", 40, 18},
    {"oauth_scope", NULL, NULL, "OAuth-Scope", "", 15, 18},
    {"sslkeylogfile", NULL, NULL, "SSL-Key-Log-File", "D", 64, 18},
};

#define NOPTIONS (sizeof options / sizeof options[0])

/* The array for vals (one per options[] entry, NULL: unset; taken over,
 * freed here on failure), in libpq's layout: libpq 15's options always,
 * later ones when set, then the terminator. NULL when out of memory. */
static PQconninfoOption *make_array(char **vals)
{
    PQconninfoOption *out = calloc(NOPTIONS + 1, sizeof *out);
    size_t n = 0;
    for (size_t i = 0; i < NOPTIONS; i++) {
        if (!out || (options[i].since > 15 && !vals[i])) {
            free(vals[i]);
            continue;
        }
        PQconninfoOption *o = &out[n++];
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
    if (!v && o->since == 15) v = o->compiled;
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
