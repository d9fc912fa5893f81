/*
 * Connection options with libpq's syntax, sources and rules (see
 * include/pgwire/conninfo.h for the order of precedence): the table of
 * libpq's keywords, the environment and the built-in defaults, validation,
 * the TCP options and the public API. The syntaxes, the files, the host
 * lists and client_encoding=auto have files of their own
 * (conninfo_internal.h).
 *
 * Error messages use libpq's wording so that users recognise them.
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conninfo_internal.h"
#include "auth/gss.h"                 /* pgw__gss_available */
#include "session/session_internal.h" /* pgw__parse_require_auth */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

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
    /* libpq 18: OAuth (SASL OAUTHBEARER) and the TLS key log. */
    {"oauth_issuer", NULL, NULL, CHECK_NONE, NULL},
    {"oauth_client_id", NULL, NULL, CHECK_NONE, NULL},
    {"oauth_client_secret", NULL, NULL, CHECK_NONE, NULL},
    {"oauth_scope", NULL, NULL, CHECK_NONE, NULL},
    {"sslkeylogfile", NULL, NULL, CHECK_NONE, NULL},
    {"replication", NULL, NULL, CHECK_NONE, NULL}, /* the server checks it */
    {"target_session_attrs", "PGTARGETSESSIONATTRS", "any", CHECK_ENUM, session_attrs},
    {"load_balance_hosts", "PGLOADBALANCEHOSTS", "disable", CHECK_ENUM, lb_modes},
    /* an unset maximum follows the minimum (apply_defaults) */
    {"min_protocol_version", "PGMINPROTOCOLVERSION", "3.0", CHECK_ENUM, proto_versions},
    {"max_protocol_version", "PGMAXPROTOCOLVERSION", NULL, CHECK_ENUM, proto_versions},
};

_Static_assert(PGW__ARRAY_LEN(options) == PGW__CI_NOPTS, "PGW__CI_NOPTS counts the options");
#define NOPTS PGW__CI_NOPTS

/* Environment variables libpq sends as startup parameters, under libpq's
 * names (a value "default", in any case, means "do not send"; an empty value
 * is sent). */
static const struct {
    const char *envvar, *param;
} env_params[] = {{"PGDATESTYLE", "datestyle"}, {"PGTZ", "timezone"}, {"PGGEQO", "geqo"}};

_Static_assert(PGW__ARRAY_LEN(env_params) == PGW__CI_NENV_PARAMS,
               "PGW__CI_NENV_PARAMS counts them");
#define NENV_PARAMS PGW__CI_NENV_PARAMS

/* ---- small helpers ---- */

/* Every option lookup by name (about forty per connect) goes through
 * here: the first letters are compared before a call to strcmp. */
int pgw__ci_option_index(const char *keyword)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (options[i].keyword[0] == keyword[0] && strcmp(options[i].keyword, keyword) == 0)
            return (int)i;
    return -1;
}

int pgw__ci_opt(const char *keyword)
{
    int i = pgw__ci_option_index(keyword);
    return i < 0 ? 0 : i; /* only called with names from the table */
}

/* Set keyword to value (copied). replace: overwrite an earlier value. */
int pgw__ci_store(pgw_conninfo_t *ci, int i, const char *value, bool replace)
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
int pgw__ci_store_param(pgw_conninfo_t *ci, const char *kw, const char *value)
{
    if (strcmp(kw, "requiressl") == 0) {
        kw = "sslmode";
        value = value[0] == '1' ? "require" : "prefer";
    }
    int i = pgw__ci_option_index(kw);
    return i < 0 ? 1 : pgw__ci_store(ci, i, value, true);
}

int pgw__ci_store_keyword(pgw_conninfo_t *ci, const char *kw, const char *value, err_out_t *e)
{
    int rc = pgw__ci_store_param(ci, kw, value);
    return rc == 1 ? FAIL(e, "invalid connection option \"%s\"", kw) : rc;
}

bool pgw__ci_is_blank(char c)
{
    return isspace((unsigned char)c) != 0;
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

extern char **environ;

/* Where the value of the environment variable name[0..n) goes: an
 * option's, PGREQUIRESSL's or a startup parameter's slot; NULL for a
 * variable libpq does not read. */
static const char **env_slot(const char *name, size_t n, const char **opt, const char **param,
                             const char **requiressl)
{
    for (size_t i = 0; i < NOPTS; i++) {
        const char *v = options[i].envvar;
        if (v && v[2] == name[2] && strncmp(v, name, n) == 0 && v[n] == '\0') return &opt[i];
    }
    for (size_t i = 0; i < NENV_PARAMS; i++) {
        const char *v = env_params[i].envvar;
        if (strncmp(v, name, n) == 0 && v[n] == '\0') return &param[i];
    }
    static const char req[] = "PGREQUIRESSL";
    return n == sizeof req - 1 && memcmp(name, req, n) == 0 ? requiressl : NULL;
}

/* A bit per character 64..127 that may follow "PG" in a variable env_slot
 * knows; a character outside that range is never ruled out. */
static uint64_t third_letter_bit(unsigned char c)
{
    return c >= 64 && c < 128 ? (uint64_t)1 << (c - 64) : 0;
}

static int may_be_known(uint64_t third_letters, unsigned char c)
{
    return c < 64 || c >= 128 || (third_letters & third_letter_bit(c));
}

/* The environment's values, read in one pass over it (a getenv per
 * variable would scan it some fifty times per connect): every variable
 * starting with PG is looked up in the table, and the first entry of a
 * name wins, as with getenv. A variable whose third letter starts no
 * name libpq reads (a test suite's PGW_..., an application's own) is
 * passed over with a bit test instead of a walk of the tables. */
static int apply_environment(pgw_conninfo_t *ci)
{
    const char *opt[NOPTS] = {0}, *param[NENV_PARAMS] = {0}, *req = NULL;
    uint64_t third = third_letter_bit('R'); /* PGREQUIRESSL */
    for (size_t i = 0; i < NOPTS; i++)
        if (options[i].envvar) third |= third_letter_bit((unsigned char)options[i].envvar[2]);
    for (size_t i = 0; i < NENV_PARAMS; i++)
        third |= third_letter_bit((unsigned char)env_params[i].envvar[2]);
    for (char **e = environ; e && *e; e++) {
        const char *name = *e;
        if (name[0] != 'P' || name[1] != 'G' || !name[2]) continue;
        if (!may_be_known(third, (unsigned char)name[2])) continue;
        const char *eq = strchr(name, '=');
        if (!eq) continue;
        const char **slot = env_slot(name, (size_t)(eq - name), opt, param, &req);
        if (slot && !*slot) *slot = eq + 1;
    }
    for (size_t i = 0; i < NOPTS; i++)
        if (opt[i] && pgw__ci_store(ci, (int)i, opt[i], false) != 0) return PGW_ENOMEM;
    /* The deprecated PGREQUIRESSL: a value starting with '1' means
     * sslmode=require, below PGSSLMODE (libpq since 9.3). */
    if (req && req[0] == '1' && pgw__ci_store(ci, pgw__ci_opt("sslmode"), "require", false) != 0)
        return PGW_ENOMEM;
    for (size_t i = 0; i < NENV_PARAMS; i++) {
        const char *v = param[i];
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
    int sslmode = pgw__ci_opt("sslmode");
    const char *root = VAL(ci, "sslrootcert");
    if (!ci->val[sslmode] && root && strcmp(root, "system") == 0 &&
        pgw__ci_store(ci, sslmode, "verify-full", false) != 0)
        return PGW_ENOMEM;
    /* libpq built without GSSAPI defaults to gssencmode=disable. */
    if (!pgw__gss_available() &&
        pgw__ci_store(ci, pgw__ci_opt("gssencmode"), "disable", false) != 0)
        return PGW_ENOMEM;
    for (size_t i = 0; i < NOPTS; i++)
        if (options[i].fallback && pgw__ci_store(ci, (int)i, options[i].fallback, false) != 0)
            return PGW_ENOMEM;
    /* libpq 18: the maximum protocol is 3.0, or the latest when the
     * minimum asks for more. An invalid minimum is refused later. */
    const char *minv = VAL(ci, "min_protocol_version");
    if (pgw__ci_store(ci, pgw__ci_opt("max_protocol_version"),
                      strcmp(minv, "3.0") == 0 ? "3.0" : "latest", false) != 0)
        return PGW_ENOMEM;
    int user = pgw__ci_opt("user"), db = pgw__ci_opt("dbname"), host = pgw__ci_opt("host");
    if (!ci->val[user] || !ci->val[user][0]) {
        struct passwd *pw = getpwuid(geteuid());
        if (!pw) return FAIL(e, "could not look up local user ID %ld", (long)geteuid());
        if (pgw__ci_store(ci, user, pw->pw_name, true) != 0) return PGW_ENOMEM;
    }
    if (!ci->val[db] || !ci->val[db][0])
        if (pgw__ci_store(ci, db, ci->val[user], true) != 0) return PGW_ENOMEM;
    const char *addr = VAL(ci, "hostaddr");
    if ((!ci->val[host] || !ci->val[host][0]) && (!addr || !addr[0]))
        if (pgw__ci_store(ci, host, PGW_DEFAULT_SOCKET_DIR, true) != 0) return PGW_ENOMEM;
    return 0;
}

/* ---- validation ---- */

/* libpq's parse_int_param: an int in decimal, blanks allowed around it. */
bool pgw__ci_parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno != 0 || v < INT_MIN || v > INT_MAX) return false;
    while (pgw__ci_is_blank(*end))
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
        if (options[i].check == CHECK_INT && !pgw__ci_parse_int(v, &n))
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

/* ---- TCP options ---- */

/* One of the integer TCP options: -1 if unset, else its value with
 * negatives raised to 0 (libpq's setKeepalivesIdle and friends). */
static int tcp_int(const pgw_conninfo_t *ci, const char *kw, int *out, err_out_t *e)
{
    const char *v = VAL(ci, kw);
    int n;
    *out = -1;
    if (!v) return 0;
    if (!pgw__ci_parse_int(v, &n)) return invalid_integer(e, v, kw);
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
        if (!pgw__ci_parse_int(v, &n)) {
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
    size_t prefix = pgw__ci_uri_prefix_len(conninfo);
    int rc = prefix ? pgw__ci_parse_uri(ci, conninfo, prefix, &e)
                    : pgw__ci_parse_keyword_value(ci, conninfo, &e);
    if (rc == 0) rc = pgw__ci_apply_service(ci, &e);
    if (rc == 0) rc = apply_environment(ci);
    if (rc == 0) rc = apply_defaults(ci, &e);
    if (rc == 0) rc = validate(ci, &e);
    if (rc == 0) rc = pgw__ci_build_hosts(ci, &e);
    if (rc == 0) rc = pgw__ci_resolve_client_encoding(ci);
    if (rc == 0) rc = pgw__ci_load_pgpass(ci);
    if (rc != 0) {
        if (rc == PGW_ENOMEM) (void)pgw__fail_msg(errbuf, errlen, rc, "out of memory");
        pgw_conninfo_free(ci);
        return rc;
    }
    *out = ci;
    return 0;
}

void pgw_conninfo_free(pgw_conninfo_t *ci)
{
    if (!ci) return;
    const pgw_allocator_t *a = ci->alloc;
    const int pw = pgw__ci_opt("password"), sslpw = pgw__ci_opt("sslpassword"),
              oauth = pgw__ci_opt("oauth_client_secret");
    for (int i = 0; i < (int)NOPTS; i++) {
        if (i == pw || i == sslpw || i == oauth)
            pgw__free_secret(a, ci->val[i]);
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
    int i = pgw__ci_option_index(keyword);
    return i < 0 ? NULL : ci->val[i];
}

const char *pgw_conninfo_keyword(size_t i)
{
    return i < NOPTS ? options[i].keyword : NULL;
}

const char *pgw_conninfo_keyword_envvar(const char *keyword)
{
    if (!keyword) return NULL;
    int i = pgw__ci_option_index(keyword);
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
