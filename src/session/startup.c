/*
 * Startup and authentication: StartupMessage, NegotiateProtocolVersion,
 * the authentication exchange (cleartext, MD5, SCRAM-SHA-256 and -PLUS,
 * GSSAPI through the driver's gss_step hook, OAUTHBEARER with the
 * driver's oauth_token hook), BackendKeyData, and the first ReadyForQuery.
 *
 * Policy first: every authentication request is checked against
 * require_auth and channel_binding before anything derived from the password
 * is computed or sent, so a downgrading server gets nothing. A refusal
 * fails with PGW_EAUTHPOLICY and libpq 18's message, which says which
 * method the server asked for and which rule refused it.
 *
 * Unsupported methods (Kerberos V5, unknown codes; GSSAPI and SSPI without
 * a gss_step hook) fail with PGW_ENOTSUP and a message naming the method
 * (or PGW_EAUTHPOLICY when require_auth refuses them anyway). A protocol
 * downgrade below min_protocol fails with PGW_ENOTSUP and a message saying
 * which version the server lacks.
 *
 * Requests queued before startup completes are encoded at once into a held
 * buffer and moved to the output when the first ReadyForQuery arrives.
 */
#include "session_internal.h"

#include "auth/auth.h"
#include "auth/oauth.h"

#include <stdarg.h>
#include <stdio.h>

#define OAUTH_KVSEP "\x01"

enum pgw__oauth_step { OAUTH_INIT = 0, OAUTH_BEARER_SENT, OAUTH_SERVER_ERROR };

struct pgw__oauth {
    char *issuer, *client_id, *client_secret, *scope, *token; /* the settings */
    char *issuer_id;     /* the issuer identifier (oauth_issuer, or its discovery URI's) */
    char *discovery_uri; /* from oauth_issuer or the server */
    uint8_t step;        /* enum pgw__oauth_step */
    bool token_sent;     /* the bearer token went out: the client's part is done */
    bool hook_pending;   /* the hook gives the token later */
    bool retry;          /* pgw_session_oauth_retry */
};

/* ------------------------------------------------------------ require_auth */

static int method_bit(const char *m, size_t n, unsigned *bit)
{
    static const struct {
        const char *name;
        unsigned bit;
    } methods[] = {{"password", PGW__AUTH_PASSWORD},
                   {"md5", PGW__AUTH_MD5},
                   {"gss", PGW__AUTH_GSS},
                   {"sspi", PGW__AUTH_SSPI},
                   {"scram-sha-256", PGW__AUTH_SCRAM},
                   {"oauth", PGW__AUTH_OAUTH},
                   {"none", PGW__AUTH_NONE}};
    for (size_t i = 0; i < PGW__ARRAY_LEN(methods); i++) {
        if (strlen(methods[i].name) == n && memcmp(methods[i].name, m, n) == 0) {
            *bit = methods[i].bit;
            return 0;
        }
    }
    return PGW_EINVAL;
}

/* libpq 18's rules (pqConnectOptions2): a comma-separated list of methods,
 * either all plain (the allowed set, "none" allowing a server that asks for
 * no authentication) or all negated with '!' (everything but them); no
 * method twice; elements are not trimmed. The messages name the element. */
int pgw__parse_require_auth(const char *spec, unsigned *allowed, char *errbuf, size_t errlen)
{
    if (errbuf && errlen) errbuf[0] = '\0';
    if (!spec || !*spec) {
        *allowed = PGW__AUTH_ALL;
        return 0;
    }
    bool negated = spec[0] == '!';
    unsigned set = negated ? PGW__AUTH_ALL : 0;
    for (const char *p = spec;;) {
        const char *end = strchr(p, ',');
        int n = (int)(end ? (size_t)(end - p) : strlen(p));
        bool neg = n > 0 && p[0] == '!';
        if (neg && !negated)
            return pgw__fail_msg(errbuf, errlen, PGW_EINVAL,
                                 "negative require_auth method \"%.*s\" cannot be mixed with "
                                 "non-negative methods",
                                 n, p);
        if (!neg && negated)
            return pgw__fail_msg(errbuf, errlen, PGW_EINVAL,
                                 "require_auth method \"%.*s\" cannot be mixed with negative "
                                 "methods",
                                 n, p);
        unsigned bit;
        if (method_bit(p + neg, (size_t)(n - neg), &bit) < 0)
            return pgw__fail_msg(errbuf, errlen, PGW_EINVAL, "invalid require_auth value: \"%.*s\"",
                                 n - neg, p + neg);
        /* negated: the method must still be in the set; plain: not yet */
        if (((set & bit) != 0) != negated)
            return pgw__fail_msg(errbuf, errlen, PGW_EINVAL,
                                 "require_auth method \"%.*s\" is specified more than once", n, p);
        set ^= bit;
        if (!end) break;
        p = end + 1;
    }
    *allowed = set;
    return 0;
}

int pgw__session_require_auth(pgw_session_t *s, const char *spec)
{
    s->startup.auth_allowed = PGW__AUTH_ALL;
    s->startup.auth_policy = spec != NULL;
    if (!spec) return 0;
    int rc = pgw__parse_require_auth(spec, &s->startup.auth_allowed, NULL, 0);
    if (rc < 0) return rc;
    /* a valid spec names each method at most once: it always fits */
    snprintf(s->startup.require_auth, sizeof s->startup.require_auth, "%s", spec);
    return 0;
}

/* -------------------------------------------------------------------- start */

PGW_EXTERN int pgw_session_start(pgw_session_t *s)
{
    if (!s) return PGW_EINVAL;
    if (s->state != PGW_SESSION_NEW) return PGW_EBUSY;
    size_t from = s->output.buf.len;
    int rc = pgw_enc_startup(&s->output.buf, s->startup.max_protocol,
                             (const char *const *)s->startup.params, s->startup.nparams);
    if (rc < 0) return rc;
    s->state = PGW_SESSION_STARTUP;
    pgw__enter(s);
    pgw__trace_out(s, &s->output.buf, from, false);
    pgw__out_appended(s, &s->output.buf, from);
    pgw__leave(s);
    return 0;
}

void pgw__startup_failed(pgw_session_t *s, int err, const pgw_error_t *e)
{
    if (s->startup.reported) return;
    s->startup.reported = true;
    if (s->cb.on_startup && !s->freeing) s->cb.on_startup(s, err, e, s->ud);
}

/* Append an authentication message built by enc and tell the driver. */
static int send_auth(pgw_session_t *s, size_t from, int rc)
{
    if (rc < 0) return rc;
    pgw__trace_out(s, &s->output.buf, from, true);
    pgw__out_appended(s, &s->output.buf, from);
    return 0;
}

/* ------------------------------------------------------------------ methods */

/* Fail the startup with code and a message of the library's own (no
 * server error fields); returns code. */
static int fail_with(pgw_session_t *s, int code, const char *msg)
{
    pgw_error_t e;
    memset(&e, 0, sizeof e);
    e.message = msg;
    pgw__startup_failed(s, code, &e);
    return code;
}

/* The server asked for a password and there is none: libpq's words
 * (PQnoPasswordSupplied), which also tell libpq programs to prompt. */
static int no_password(pgw_session_t *s)
{
    return fail_with(s, PGW_EAUTH, "fe_sendauth: no password supplied");
}

/* Fail the startup with PGW_EAUTHPOLICY and libpq's message for it. */
static int refuse(pgw_session_t *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int refuse(pgw_session_t *s, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fail_with(s, PGW_EAUTHPOLICY, msg);
}

/* require_auth refused the request; what: libpq's description of it. */
static int refuse_method(pgw_session_t *s, const char *what)
{
    return refuse(s, "authentication method requirement \"%s\" failed: %s", s->startup.require_auth,
                  what);
}

/* libpq's check_expected_areq for a request of method bit (PGW__AUTH_SASL
 * for SASL), described as what: require_auth first, then
 * channel_binding=require, which answers nothing but SASL. */
static int check_method(pgw_session_t *s, unsigned bit, const char *what)
{
    /* bit 0: a method require_auth cannot name, refused by any policy */
    if (bit ? !(s->startup.auth_allowed & bit) : s->startup.auth_policy)
        return refuse_method(s, what);
    if (s->startup.cb_mode == PGW__CB_REQUIRE && !(bit & PGW__AUTH_SASL))
        return refuse(s, "channel binding required but not supported by server's authentication "
                         "request");
    s->startup.auth_requested = true;
    return 0;
}

static int auth_cleartext(pgw_session_t *s)
{
    int rc = check_method(s, PGW__AUTH_PASSWORD, "server requested a cleartext password");
    if (rc < 0) return rc;
    if (!s->startup.password) return no_password(s);
    s->startup.auth_method = "password";
    size_t from = s->output.buf.len;
    return send_auth(s, from, pgw_enc_password(&s->output.buf, s->startup.password));
}

static int auth_md5(pgw_session_t *s, const pgw_msg_t *m)
{
    int rc = check_method(s, PGW__AUTH_MD5, "server requested a hashed password");
    if (rc < 0) return rc;
    if (m->u.auth.data_len != 4) return PGW_EPROTO;
    if (!s->startup.password) return no_password(s);
    s->startup.auth_method = "md5";
    char hash[36];
    rc = pgw__md5_password(s->startup.user, s->startup.password, m->u.auth.data, hash);
    if (rc < 0) return rc;
    size_t from = s->output.buf.len;
    rc = send_auth(s, from, pgw_enc_password(&s->output.buf, hash));
    memset(hash, 0, sizeof hash);
    return rc;
}

static int channel_binding_data(pgw_session_t *s, const uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (!s->cb.channel_binding) return -1;
    if (s->cb.channel_binding(s, data, len, s->ud) < 0 || !*data || !*len) return -1;
    return 0;
}

static int scram_start(pgw_session_t *s, const char *mech, const uint8_t *cbd, size_t cbl,
                       int client_cb)
{
    int rc =
        pgw__scram_new(&s->startup.scram, s->alloc, s->startup.password, mech, cbd, cbl, client_cb);
    if (rc < 0) return rc;
    if (s->startup.test_nonce) {
        rc = pgw__scram_set_nonce(s->startup.scram, s->startup.test_nonce);
        if (rc == 0) rc = pgw__scram_set_user(s->startup.scram, s->startup.user);
        if (rc < 0) return rc;
    }
    s->output.scratch.len = 0;
    rc = pgw__scram_client_first(s->startup.scram, &s->output.scratch);
    if (rc < 0) return rc;
    if (s->output.scratch.len > INT32_MAX) return PGW_ETOOBIG;
    s->startup.auth_method = mech;
    size_t from = s->output.buf.len;
    rc = pgw_enc_sasl_initial(&s->output.buf, mech, s->output.scratch.data,
                              (int32_t)s->output.scratch.len);
    return send_auth(s, from, rc);
}

static int oauth_start(pgw_session_t *s);

static int auth_sasl(pgw_session_t *s, const pgw_msg_t *m)
{
    int rc = check_method(s, PGW__AUTH_SASL, "server requested SASL authentication");
    if (rc < 0) return rc;
    if (s->startup.scram || (s->startup.oauth && s->startup.oauth->step)) return PGW_EPROTO;
    /* libpq 18's choice: -PLUS when it can bind; else the first the
     * server lists of SCRAM-SHA-256 and OAUTHBEARER. */
    const char *first = NULL;
    bool plus = false;
    size_t pos = 0;
    pgw_str_t mech;
    while ((rc = pgw_sasl_mech_next(m, &pos, &mech)) == 1) {
        if (!first && mech.len == 13 && memcmp(mech.p, "SCRAM-SHA-256", 13) == 0)
            first = "SCRAM-SHA-256";
        if (!first && mech.len == 11 && memcmp(mech.p, "OAUTHBEARER", 11) == 0)
            first = "OAUTHBEARER";
        if (mech.len == 18 && memcmp(mech.p, "SCRAM-SHA-256-PLUS", 18) == 0) plus = true;
    }
    if (rc < 0) return PGW_EPROTO;
    const uint8_t *cbd;
    size_t cbl;
    bool can_bind =
        s->startup.cb_mode != PGW__CB_DISABLE && channel_binding_data(s, &cbd, &cbl) == 0;
    if (s->startup.cb_mode == PGW__CB_REQUIRE && !can_bind)
        return refuse(s, "channel binding required, but SSL not in use");
    bool use_plus = plus && can_bind;
    const char *chosen = use_plus ? "SCRAM-SHA-256-PLUS" : first;
    if (!chosen)
        return fail_with(s, PGW_EAUTH,
                         "none of the server's SASL authentication mechanisms are supported");
    bool oauth = strcmp(chosen, "OAUTHBEARER") == 0;
    if (!(s->startup.auth_allowed & (oauth ? PGW__AUTH_OAUTH : PGW__AUTH_SCRAM)))
        return refuse(s,
                      "authentication method requirement \"%s\" failed: server requested %s "
                      "authentication",
                      s->startup.require_auth, chosen);
    if (s->startup.cb_mode == PGW__CB_REQUIRE && !use_plus)
        return refuse(s, "channel binding is required, but server did not offer an authentication "
                         "method that supports channel binding");
    if (oauth) return oauth_start(s);
    if (!s->startup.password) return no_password(s);
    if (use_plus) return scram_start(s, chosen, cbd, cbl, 0);
    return scram_start(s, chosen, NULL, 0, can_bind ? 1 : 0);
}

static int oauth_continue(pgw_session_t *s, const pgw_msg_t *m);

static int auth_sasl_continue(pgw_session_t *s, const pgw_msg_t *m)
{
    if (s->startup.oauth && s->startup.oauth->step) return oauth_continue(s, m);
    if (!s->startup.scram || s->startup.scram_step != 0) return PGW_EPROTO;
    s->startup.scram_step = 1;
    s->output.scratch.len = 0;
    int rc = pgw__scram_client_final(s->startup.scram, m->u.auth.data, m->u.auth.data_len,
                                     &s->output.scratch);
    if (rc < 0) return rc == PGW_EINVAL ? PGW_EAUTH : rc;
    size_t from = s->output.buf.len;
    rc = pgw_enc_sasl_response(&s->output.buf, s->output.scratch.data, s->output.scratch.len);
    return send_auth(s, from, rc);
}

static int auth_sasl_final(pgw_session_t *s, const pgw_msg_t *m)
{
    /* OAUTHBEARER has no additional data on success (libpq: "server sent
     * unexpected additional OAuth data"). */
    if (s->startup.oauth && s->startup.oauth->step)
        return fail_with(s, PGW_EAUTH, "server sent unexpected additional OAuth data");
    if (!s->startup.scram || s->startup.scram_step != 1) return PGW_EPROTO;
    s->startup.scram_step = 2;
    /* A wrong server signature always fails, whatever the policy. */
    if (pgw__scram_verify_final(s->startup.scram, m->u.auth.data, m->u.auth.data_len) < 0)
        return PGW_EAUTH;
    s->startup.scram_final_ok = true;
    return 0;
}

/* ---------------------------------------------------------------- GSSAPI */

/* One step of the driver's GSS-API context; its token goes out as a
 * GSSResponse (a 'p' message carrying the token, as SASLResponse). */
static int gss_continue(pgw_session_t *s, const uint8_t *in, size_t inlen, const char *name)
{
    if (!s->cb.gss_step) {
        char msg[64];
        snprintf(msg, sizeof msg, "%s authentication not supported", name);
        return fail_with(s, PGW_ENOTSUP, msg);
    }
    const uint8_t *out = NULL;
    size_t outlen = 0;
    char msg[512] = "";
    int rc = s->cb.gss_step(s, in, inlen, &out, &outlen, msg, sizeof msg, s->ud);
    if (rc < 0) return fail_with(s, rc, msg[0] ? msg : "GSSAPI continuation error");
    s->startup.auth_method = "gss";
    s->startup.gss_step = rc == 0 ? 2 : 1;
    if (!outlen) return 0;
    size_t from = s->output.buf.len;
    return send_auth(s, from, pgw_enc_sasl_response(&s->output.buf, out, outlen));
}

/* AuthenticationGSS, or SSPI (which a client without SSPI answers with
 * GSSAPI, as libpq does on Unix). */
static int auth_gss(pgw_session_t *s, unsigned bit, const char *what, const char *name)
{
    int rc = check_method(s, bit, what);
    if (rc < 0) return rc;
    if (s->startup.gss_step)
        return fail_with(s, PGW_EPROTO, "duplicate GSS authentication request");
    return gss_continue(s, NULL, 0, name);
}

/* GSSContinue: allowed by require_auth's gss and sspi alike. */
static int auth_gss_continue(pgw_session_t *s, const pgw_msg_t *m)
{
    int rc =
        check_method(s, PGW__AUTH_GSS | PGW__AUTH_SSPI, "server requested GSSAPI authentication");
    if (rc < 0) return rc;
    if (s->startup.gss_step != 1) return PGW_EPROTO;
    return gss_continue(s, m->u.auth.data, m->u.auth.data_len, "GSSAPI");
}

/* ----------------------------------------------------------- OAUTHBEARER */

static int dup_setting(pgw_session_t *s, char **dst, const char *v)
{
    if (!v) return 0;
    *dst = pgw__strdup(s->alloc, v);
    return *dst ? 0 : PGW_ENOMEM;
}

int pgw__session_oauth_configure(pgw_session_t *s, const pgw_session_config_t *cfg)
{
    if (!cfg->oauth_issuer && !cfg->oauth_client_id && !cfg->oauth_client_secret &&
        !cfg->oauth_scope && !cfg->oauth_token)
        return 0;
    pgw__oauth_t *o = pgw__calloc(s->alloc, 1, sizeof *o);
    if (!o) return PGW_ENOMEM;
    s->startup.oauth = o;
    int rc = dup_setting(s, &o->issuer, cfg->oauth_issuer);
    if (rc == 0) rc = dup_setting(s, &o->client_id, cfg->oauth_client_id);
    if (rc == 0) rc = dup_setting(s, &o->client_secret, cfg->oauth_client_secret);
    if (rc == 0) rc = dup_setting(s, &o->scope, cfg->oauth_scope);
    if (rc == 0) rc = dup_setting(s, &o->token, cfg->oauth_token);
    return rc;
}

void pgw__session_auth_free(pgw_session_t *s)
{
    pgw__scram_free(s->startup.scram);
    s->startup.scram = NULL;
    pgw__oauth_t *o = s->startup.oauth;
    if (!o) return;
    const pgw_allocator_t *a = s->alloc;
    pgw__free(a, o->issuer);
    pgw__free(a, o->client_id);
    pgw__free_secret(a, o->client_secret);
    pgw__free(a, o->scope);
    pgw__free_secret(a, o->token);
    pgw__free(a, o->issuer_id);
    pgw__free(a, o->discovery_uri);
    pgw__free(a, o);
    s->startup.oauth = NULL;
}

PGW_EXTERN int pgw_session_oauth_retry(const pgw_session_t *s)
{
    return s && s->startup.oauth && s->startup.oauth->retry;
}

PGW_EXTERN int pgw_session_set_oauth_token(pgw_session_t *s, const char *token)
{
    if (!s || !token) return PGW_EINVAL;
    if (s->state != PGW_SESSION_NEW) return PGW_EBUSY;
    if (!s->startup.oauth) {
        s->startup.oauth = pgw__calloc(s->alloc, 1, sizeof *s->startup.oauth);
        if (!s->startup.oauth) return PGW_ENOMEM;
    }
    char *copy = pgw__strdup(s->alloc, token);
    if (!copy) return PGW_ENOMEM;
    pgw__free_secret(s->alloc, s->startup.oauth->token);
    s->startup.oauth->token = copy;
    return 0;
}

/* The client initial response: the bearer token, or (token NULL) the
 * empty discovery request. */
static int oauth_send_initial(pgw_session_t *s, const char *token)
{
    s->output.scratch.len = 0;
    int rc = pgw__oauth_initial_response(&s->output.scratch, token);
    if (rc == PGW_EAUTH)
        return fail_with(s, rc, "the OAuth bearer token is not a valid b64token (RFC 6750)");
    if (rc < 0) return rc;
    if (s->output.scratch.len > INT32_MAX) return PGW_ETOOBIG;
    s->startup.auth_method = "OAUTHBEARER";
    size_t from = s->output.buf.len;
    rc = pgw_enc_sasl_initial(&s->output.buf, "OAUTHBEARER", s->output.scratch.data,
                              (int32_t)s->output.scratch.len);
    memset(s->output.scratch.data, 0, s->output.scratch.len); /* held the token */
    return send_auth(s, from, rc);
}

/* Ask the driver's hook for the token (once). Returns 1 (s->startup.oauth->token
 * set), 0 (it comes later), or the startup's failure. */
static int oauth_request_token(pgw_session_t *s)
{
    pgw__oauth_t *o = s->startup.oauth;
    if (o->hook_pending) return 0;
    if (!s->cb.oauth_token)
        return fail_with(s, PGW_EAUTH,
                         "no OAuth flows are available (set an OAuth token callback)");
    pgw_oauth_request_t req = {o->issuer_id, o->discovery_uri, o->scope, o->client_id,
                               o->client_secret};
    pgw_buf_t tok;
    pgw_buf_init(&tok, s->alloc);
    char msg[256] = "";
    int rc = s->cb.oauth_token(s, &req, &tok, msg, sizeof msg, s->ud);
    if (rc > 0 && tok.len) o->token = pgw__strndup(s->alloc, (const char *)tok.data, tok.len);
    if (tok.data) memset(tok.data, 0, tok.len);
    pgw_buf_free(&tok);
    if (rc < 0) {
        char m[320];
        snprintf(m, sizeof m, "user-defined OAuth flow failed%s%s", msg[0] ? ": " : "", msg);
        return fail_with(s, PGW_EAUTH, m);
    }
    if (rc == 0) {
        o->hook_pending = true;
        return 0;
    }
    if (!o->token)
        return tok.len ? PGW_ENOMEM
                       : fail_with(s, PGW_EAUTH, "user-defined OAuth flow did not provide a token");
    return 1;
}

/* libpq's setup_oauth_parameters: the issuer identifier, and the
 * discovery URI when oauth_issuer is one. */
static int oauth_parameters(pgw_session_t *s)
{
    pgw__oauth_t *o = s->startup.oauth;
    if (!o || !o->issuer || !*o->issuer || !o->client_id || !*o->client_id)
        return fail_with(s, PGW_EAUTH,
                         "server requires OAuth authentication, but oauth_issuer and "
                         "oauth_client_id are not both set");
    if (!pgw__oauth_is_discovery_uri(o->issuer)) return dup_setting(s, &o->issuer_id, o->issuer);
    char err[512];
    int rc = pgw__oauth_issuer_from_uri(s->alloc, o->issuer, &o->issuer_id, err, sizeof err);
    if (rc < 0) return fail_with(s, rc, err);
    return dup_setting(s, &o->discovery_uri, o->issuer);
}

static int oauth_start(pgw_session_t *s)
{
    int rc = oauth_parameters(s);
    if (rc < 0) return rc;
    pgw__oauth_t *o = s->startup.oauth;
    o->step = OAUTH_BEARER_SENT;
    /* With the discovery document known, the token can be asked for at
     * once; without one, the server names it in its error result. */
    if (!o->token && o->discovery_uri) {
        rc = oauth_request_token(s);
        if (rc < 0) return rc;
    }
    rc = oauth_send_initial(s, o->token);
    if (rc == 0 && o->token) o->token_sent = true;
    return rc;
}

/* libpq's handle_oauth_sasl_error, on the parsed result. */
static int oauth_take_error(pgw_session_t *s, pgw__oauth_error_t *e, char *err, size_t errlen)
{
    pgw__oauth_t *o = s->startup.oauth;
    if (e->discovery_uri) {
        char *issuer = NULL;
        int rc = pgw__oauth_issuer_from_uri(s->alloc, e->discovery_uri, &issuer, err, errlen);
        if (rc < 0) return rc;
        if (strcmp(issuer, o->issuer_id) != 0)
            rc = pgw__fail_msg(err, errlen, PGW_EAUTH,
                               "server's discovery document at %s (issuer \"%s\") is "
                               "incompatible with oauth_issuer (%s)",
                               e->discovery_uri, issuer, o->issuer_id);
        pgw__free(s->alloc, issuer);
        if (rc < 0) return rc;
        if (o->discovery_uri && strcmp(o->discovery_uri, e->discovery_uri) != 0)
            return pgw__fail_msg(err, errlen, PGW_EAUTH,
                                 "server's discovery document has moved to %s (previous "
                                 "location was %s)",
                                 e->discovery_uri, o->discovery_uri);
        if (!o->discovery_uri) {
            o->discovery_uri = e->discovery_uri;
            e->discovery_uri = NULL;
        }
    }
    /* The server may not override oauth_scope. */
    if (e->scope && !o->scope) {
        o->scope = e->scope;
        e->scope = NULL;
    }
    if (!e->status)
        return pgw__fail_msg(err, errlen, PGW_EAUTH, "server sent error response without a status");
    if (strcmp(e->status, "invalid_token") != 0)
        return pgw__fail_msg(err, errlen, PGW_EAUTH, "server rejected OAuth bearer token: %s",
                             e->status);
    return 0;
}

/* The server's error result (a SASLContinue): answered with the dummy
 * response of RFC 7628 3.2.3. After a token, the server's ErrorResponse
 * follows; after discovery, this connection has done its part: the token
 * (now, or once the hook gives it) goes to a new one. */
static int oauth_continue(pgw_session_t *s, const pgw_msg_t *m)
{
    pgw__oauth_t *o = s->startup.oauth;
    if (o->step == OAUTH_SERVER_ERROR)
        return fail_with(s, PGW_EAUTH, "server sent additional OAuth data after error");
    size_t from = s->output.buf.len;
    int rc =
        send_auth(s, from, pgw_enc_sasl_response(&s->output.buf, (const uint8_t *)OAUTH_KVSEP, 1));
    if (rc < 0) return rc;
    pgw__oauth_error_t e;
    char err[512];
    rc = pgw__oauth_parse_error(s->alloc, m->u.auth.data, m->u.auth.data_len, &e, err, sizeof err);
    if (rc == 0) rc = oauth_take_error(s, &e, err, sizeof err);
    pgw__oauth_error_free(s->alloc, &e);
    if (rc < 0) return fail_with(s, rc, err);
    if (o->token_sent) {
        o->step = OAUTH_SERVER_ERROR;
        return 0;
    }
    if (!o->hook_pending) {
        if (!o->discovery_uri)
            return fail_with(s, PGW_EAUTH,
                             "server requires OAuth authentication, but no discovery metadata "
                             "was provided");
        rc = oauth_request_token(s);
        if (rc < 0) return rc;
    }
    o->retry = true;
    return fail_with(s, PGW_EAUTH, "retrying connection with new bearer token");
}

/* ------------------------------------------------------- AuthenticationOk */

/* The client has not finished its part of an exchange the server began
 * (libpq's client_finished_auth, for GSSAPI and OAUTHBEARER). */
static bool client_unfinished(const pgw_session_t *s)
{
    return !s->startup.auth_requested || s->startup.gss_step == 1 ||
           (s->startup.oauth && s->startup.oauth->step && !s->startup.oauth->token_sent);
}

static int auth_ok(pgw_session_t *s)
{
    if (s->cb.on_auth_ok) {
        char msg[256] = "";
        int rc = s->cb.on_auth_ok(s, msg, sizeof msg, s->ud);
        if (rc < 0) return fail_with(s, rc, msg);
    }
    /* A server that skips SASLFinal has not proven it knows the password. */
    if (s->startup.scram && !s->startup.scram_final_ok) return PGW_EAUTH;
    /* libpq 18: a policy without "none" wants a finished exchange, or a
     * GSS-encrypted transport when it allows gss. */
    if (!(s->startup.auth_allowed & PGW__AUTH_NONE) && client_unfinished(s)) {
        bool gss_enc = s->cb.gss_encrypted && s->cb.gss_encrypted(s, s->ud) == 1;
        if (!gss_enc || !(s->startup.auth_allowed & PGW__AUTH_GSS))
            return refuse_method(s, "server did not complete authentication");
    }
    if (!s->startup.auth_requested) s->startup.auth_method = "trust";
    if (s->startup.cb_mode == PGW__CB_REQUIRE &&
        !(s->startup.scram && s->startup.scram_final_ok &&
          strcmp(s->startup.auth_method, "SCRAM-SHA-256-PLUS") == 0))
        return refuse(s, "channel binding required, but server authenticated client without "
                         "channel binding");
    s->startup.auth_done = true;
    pgw__scram_free(s->startup.scram);
    s->startup.scram = NULL;
    return 0;
}

/* A method libpgwire does not implement (bit 0: one require_auth cannot
 * name): refused by the policy as libpq refuses it, or reported as not
 * supported, by name. */
static int unsupported_method(pgw_session_t *s, unsigned bit, const char *what)
{
    char desc[96];
    snprintf(desc, sizeof desc, "server requested %s",
             bit ? what : "an unknown authentication type");
    int rc = check_method(s, bit, desc);
    if (rc < 0) return rc;
    char msg[96];
    snprintf(msg, sizeof msg, "server requested %s, which libpgwire does not support", what);
    return fail_with(s, PGW_ENOTSUP, msg);
}

static int handle_auth(pgw_session_t *s, const pgw_msg_t *m)
{
    if (s->startup.auth_done) return PGW_EPROTO;
    switch (m->u.auth.code) {
    case PGW_AUTH_OK:
        return auth_ok(s);
    case PGW_AUTH_CLEARTEXT:
        return auth_cleartext(s);
    case PGW_AUTH_MD5:
        return auth_md5(s, m);
    case PGW_AUTH_SASL:
        return auth_sasl(s, m);
    case PGW_AUTH_SASL_CONTINUE:
        return auth_sasl_continue(s, m);
    case PGW_AUTH_SASL_FINAL:
        return auth_sasl_final(s, m);
    case PGW_AUTH_GSS:
        return auth_gss(s, PGW__AUTH_GSS, "server requested GSSAPI authentication", "GSSAPI");
    case PGW_AUTH_GSS_CONTINUE:
        return auth_gss_continue(s, m);
    case PGW_AUTH_SSPI:
        return auth_gss(s, PGW__AUTH_SSPI, "server requested SSPI authentication", "SSPI");
    case PGW_AUTH_KERBEROS_V5:
        return unsupported_method(s, 0, "Kerberos 5 authentication");
    default:
        return unsupported_method(s, 0, "an unknown authentication method");
    }
}

/* ---------------------------------------------------------- other messages */

/* The server offers only an older minor version (PostgreSQL 15 to 17 answer
 * a 3.2 request with 3.0): downgrade as libpq 18 does, unless min_protocol
 * forbids it. That refusal is reported to on_startup with an error whose
 * message names the versions, then breaks the session with PGW_ENOTSUP. */
static int handle_negotiate(pgw_session_t *s, const pgw_msg_t *m)
{
    if (s->startup.auth_requested || s->startup.auth_done) return PGW_EPROTO;
    int32_t minor = m->u.negotiate.newest_minor;
    /* An "offer" at or above what we asked for is not a downgrade. */
    if (minor < 0 || (uint32_t)minor >= (s->startup.max_protocol & 0xffffu)) return PGW_EPROTO;
    uint32_t version = (3u << 16) | (uint32_t)minor;
    if (version < s->startup.min_protocol) {
        char msg[128];
        snprintf(msg, sizeof msg,
                 "server does not support protocol 3.%u (it offers 3.%u; "
                 "min_protocol_version requires 3.%u)",
                 (unsigned)(s->startup.max_protocol & 0xffffu), (unsigned)minor,
                 (unsigned)(s->startup.min_protocol & 0xffffu));
        return fail_with(s, PGW_ENOTSUP, msg);
    }
    /* 3.1 exists only as a number: it behaves as 3.0. */
    s->server.protocol = version >= PGW_PROTO_3_2 ? PGW_PROTO_3_2 : PGW_PROTO_3_0;
    return 0;
}

static int handle_backend_key(pgw_session_t *s, const pgw_msg_t *m)
{
    uint32_t n = m->u.backend_key.key_len;
    if (n > sizeof s->server.backend_key || (s->server.protocol == PGW_PROTO_3_0 && n != 4))
        return PGW_EPROTO;
    s->server.backend_pid = m->u.backend_key.pid;
    memcpy(s->server.backend_key, m->u.backend_key.key, n);
    s->server.backend_key_len = n;
    s->server.have_backend_key = true;
    return 0;
}

static void report_ready(pgw_session_t *s)
{
    s->startup.reported = true;
    if (s->cb.on_startup) s->cb.on_startup(s, 0, NULL, s->ud);
}

/* The style settings ran: the connection is ready as the application will
 * see it. A failure that broke the session was reported as the startup's
 * failure already; a server error (not expected for these settings) leaves
 * the server's styles, which only text results of dates and intervals
 * notice. */
static void on_styles_set(int status, pgw_result_t *res, void *ud)
{
    pgw_session_t *s = ud;
    PGW__UNUSED(status);
    pgw_result_free(res);
    if (!s->startup.reported) report_ready(s);
}

/* The DMY/MDY/YMD field order of a reported DateStyle ("SQL, DMY"), or
 * NULL. */
static const char *datestyle_order(const char *v)
{
    static const char *const orders[] = {"DMY", "MDY", "YMD"};
    const char *comma = v ? strchr(v, ',') : NULL;
    if (!comma) return NULL;
    comma++;
    while (*comma == ' ')
        comma++;
    for (size_t i = 0; i < PGW__ARRAY_LEN(orders); i++)
        if (strcmp(comma, orders[i]) == 0) return orders[i];
    return NULL;
}

/*
 * The text decoders read ISO dates and postgres intervals (types.h). When
 * the server reported other styles at startup (a database's or role's
 * default) and the application did not choose them itself, write into sql
 * the settings that make them so, keeping the server's DMY/MDY input
 * order, and return true. Most servers need nothing: their defaults are
 * ISO and postgres, and nothing is sent.
 */
static bool styles_sql(const pgw_session_t *s, char *sql, size_t n)
{
    const char *ds = s->startup.own_datestyle ? NULL : pgw_session_parameter(s, "DateStyle");
    const char *is =
        s->startup.own_intervalstyle ? NULL : pgw_session_parameter(s, "IntervalStyle");
    bool fix_ds = ds && strncmp(ds, "ISO,", 4) != 0 && strcmp(ds, "ISO") != 0;
    bool fix_is = is && strcmp(is, "postgres") != 0;
    if (!fix_ds && !fix_is) return false;
    const char *order = fix_ds ? datestyle_order(ds) : NULL;
    snprintf(sql, n, "%s%s%s%s%s", fix_ds ? "SET DateStyle = 'ISO" : "",
             fix_ds && order ? ", " : "", fix_ds && order ? order : "", fix_ds ? "'; " : "",
             fix_is ? "SET IntervalStyle = 'postgres'" : "");
    return true;
}

static int handle_ready(pgw_session_t *s, const pgw_msg_t *m)
{
    if (!s->startup.auth_done) return PGW_EPROTO;
    s->server.txn_status = m->u.ready.status;
    size_t from = s->output.buf.len;
    char sql[96];
    bool set_styles = styles_sql(s, sql, sizeof sql);
    if (set_styles) {
        int rc = pgw__req_simple_first(s, &s->output.buf, sql, on_styles_set, s);
        if (rc < 0) return rc;
    }
    if (s->output.held.len) {
        int rc = pgw_buf_append(&s->output.buf, s->output.held.data, s->output.held.len);
        if (rc < 0) return rc;
        s->output.held.len = 0;
        pgw__out_trim(s, &s->output.held);
    }
    s->state = PGW_SESSION_READY;
    pgw__out_appended(s, &s->output.buf, from);
    if (!set_styles) report_ready(s);
    return 0;
}

static int handle_startup_error(pgw_session_t *s, const pgw_error_fields_t *f)
{
    pgw_error_t e;
    pgw__error_from_fields(f, &e);
    pgw__startup_failed(s, PGW_ESERVER, &e);
    return PGW_ESERVER;
}

int pgw__startup_dispatch(pgw_session_t *s, const pgw_msg_t *m, const pgw_error_fields_t *ef)
{
    switch (m->type) {
    case PGW_B_AUTH:
        return handle_auth(s, m);
    case PGW_B_NEGOTIATE_VERSION:
        return handle_negotiate(s, m);
    case PGW_B_BACKEND_KEY:
        return s->startup.auth_done ? handle_backend_key(s, m) : PGW_EPROTO;
    case PGW_B_ERROR:
        return handle_startup_error(s, ef);
    case PGW_B_READY:
        return handle_ready(s, m);
    default:
        return PGW_EPROTO;
    }
}

void pgw__session_set_test_nonce(pgw_session_t *s, const char *nonce)
{
    s->startup.test_nonce = nonce;
}
