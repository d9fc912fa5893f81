/*
 * GSS-API contexts for authentication and GSS encryption (gss.h), with
 * libpq's flags, names and messages (fe-gssapi-common.c, fe-auth.c,
 * fe-secure-gssapi.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "auth/gss.h"

#include "util/internal.h"

#include <stdio.h>
#include <string.h>

#ifdef PGW_HAVE_GSSAPI

#include <gssapi/gssapi.h>

struct pgw__gss {
    const pgw_allocator_t *alloc;
    gss_name_t target;
    gss_ctx_id_t ctx;
    gss_cred_id_t cred; /* for delegation: the credentials to forward */
    OM_uint32 flags;
    int established;
    gss_buffer_desc plain; /* the last unwrap's output */
};

int pgw__gss_available(void)
{
    return 1;
}

/* gss_cred_id_t is a pointer to an opaque struct: carried as ours. */
pgw__gss_cred_t *pgw__gss_cred_acquire(void)
{
    OM_uint32 minor;
    gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
    OM_uint32 major = gss_acquire_cred(&minor, GSS_C_NO_NAME, 0, GSS_C_NO_OID_SET, GSS_C_INITIATE,
                                       &cred, NULL, NULL);
    if (major != GSS_S_COMPLETE) return NULL;
    return (pgw__gss_cred_t *)cred;
}

void pgw__gss_cred_free(pgw__gss_cred_t *cred)
{
    if (!cred) return;
    OM_uint32 minor;
    gss_cred_id_t c = (gss_cred_id_t)cred;
    gss_release_cred(&minor, &c);
}

/* Append every message of one kind of status (libpq's pg_GSS_error_int),
 * each preceded by a space. */
static size_t status_text(char *buf, size_t len, size_t at, OM_uint32 status, int type)
{
    OM_uint32 more = 0, minor;
    do {
        gss_buffer_desc msg = GSS_C_EMPTY_BUFFER;
        if (gss_display_status(&minor, status, type, GSS_C_NO_OID, &more, &msg) != GSS_S_COMPLETE)
            break;
        if (at < len) {
            int n = snprintf(buf + at, len - at, " %.*s", (int)msg.length, (const char *)msg.value);
            if (n > 0) at += (size_t)n;
        }
        gss_release_buffer(&minor, &msg);
    } while (more);
    return at < len ? at : len;
}

/* libpq's pg_GSS_error: "prefix:" then the major status texts, ":" and the
 * minor (mechanism) status texts. */
static int gss_fail(int code, const char *prefix, OM_uint32 major, OM_uint32 minor, char *err,
                    size_t errlen)
{
    if (!err || !errlen) return code;
    int n = snprintf(err, errlen, "%s:", prefix);
    size_t at = n > 0 ? (size_t)n : 0;
    at = status_text(err, errlen, at < errlen ? at : errlen - 1, major, GSS_C_GSS_CODE);
    if (at + 1 < errlen) {
        err[at++] = ':';
        err[at] = '\0';
    }
    status_text(err, errlen, at < errlen ? at : errlen - 1, minor, GSS_C_MECH_CODE);
    return code;
}

int pgw__gss_new(pgw__gss_t **out, const pgw__gss_config_t *cfg, const pgw_allocator_t *alloc,
                 char *err, size_t errlen)
{
    *out = NULL;
    const char *svc = cfg->service && *cfg->service ? cfg->service : "postgres";
    char name[1024];
    int n = cfg->host && *cfg->host ? snprintf(name, sizeof name, "%s@%s", svc, cfg->host) : -1;
    if (n <= 0 || (size_t)n >= sizeof name) {
        pgw__gss_cred_free(cfg->cred);
        return pgw__fail_msg(err, errlen, PGW_EAUTH, "host name must be specified");
    }
    pgw__gss_t *g = pgw__calloc(alloc, 1, sizeof *g);
    if (!g) {
        pgw__gss_cred_free(cfg->cred);
        return pgw__fail_msg(err, errlen, PGW_ENOMEM, "out of memory");
    }
    g->alloc = alloc;
    g->ctx = GSS_C_NO_CONTEXT;
    g->cred = (gss_cred_id_t)cfg->cred;
    g->target = GSS_C_NO_NAME;
    gss_buffer_desc buf = {(size_t)n, name};
    OM_uint32 minor;
    OM_uint32 major = gss_import_name(&minor, &buf, GSS_C_NT_HOSTBASED_SERVICE, &g->target);
    if (major != GSS_S_COMPLETE) {
        pgw__gss_free(g);
        return gss_fail(PGW_EAUTH, "GSSAPI name import error", major, minor, err, errlen);
    }
    /* Authentication asks only for mutual authentication (fe-auth.c);
     * encryption needs confidentiality and tamper-proofing
     * (fe-secure-gssapi.c's GSS_REQUIRED_FLAGS). */
    g->flags = GSS_C_MUTUAL_FLAG;
    if (cfg->encrypt)
        g->flags |= GSS_C_REPLAY_FLAG | GSS_C_SEQUENCE_FLAG | GSS_C_CONF_FLAG | GSS_C_INTEG_FLAG;
    /* Delegation is asked for only with credentials to forward (whether
     * they are forwarded depends on the ticket's forwardable flag and on
     * the server). */
    if (cfg->delegate && g->cred == GSS_C_NO_CREDENTIAL)
        g->cred = (gss_cred_id_t)pgw__gss_cred_acquire();
    if (cfg->delegate && g->cred != GSS_C_NO_CREDENTIAL) g->flags |= GSS_C_DELEG_FLAG;
    *out = g;
    return 0;
}

int pgw__gss_step(pgw__gss_t *g, const uint8_t *in, size_t inlen, pgw_buf_t *out,
                  const char *errprefix, char *err, size_t errlen)
{
    if (!g || g->established) return PGW_EPROTO;
    gss_buffer_desc input = {inlen, (void *)(uintptr_t)in};
    gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor, lmin;
    OM_uint32 major = gss_init_sec_context(
        &minor, g->cred, &g->ctx, g->target, GSS_C_NO_OID, g->flags, 0, GSS_C_NO_CHANNEL_BINDINGS,
        in ? &input : GSS_C_NO_BUFFER, NULL, &output, NULL, NULL);
    int rc = 0;
    if (output.length) rc = pgw_buf_append(out, output.value, output.length);
    gss_release_buffer(&lmin, &output);
    if (GSS_ERROR(major)) return gss_fail(PGW_EAUTH, errprefix, major, minor, err, errlen);
    if (rc < 0) return pgw__fail_msg(err, errlen, PGW_ENOMEM, "out of memory");
    if (major & GSS_S_CONTINUE_NEEDED) return 1;
    g->established = 1;
    gss_release_cred(&lmin, &g->cred);
    g->cred = GSS_C_NO_CREDENTIAL;
    return 0;
}

int pgw__gss_established(const pgw__gss_t *g)
{
    return g && g->established;
}

int pgw__gss_wrap_limit(pgw__gss_t *g, size_t *max_plain, char *err, size_t errlen)
{
    OM_uint32 minor, limit = 0;
    OM_uint32 major =
        gss_wrap_size_limit(&minor, g->ctx, 1, GSS_C_QOP_DEFAULT, PGW__GSS_MAX_PACKET - 4, &limit);
    if (GSS_ERROR(major))
        return gss_fail(PGW_EAUTH, "GSSAPI size check error", major, minor, err, errlen);
    *max_plain = limit;
    return 0;
}

int pgw__gss_wrap(pgw__gss_t *g, const uint8_t *p, size_t n, pgw_buf_t *out, char *err,
                  size_t errlen)
{
    gss_buffer_desc input = {n, (void *)(uintptr_t)p};
    gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
    OM_uint32 minor, lmin;
    int conf = 0;
    OM_uint32 major = gss_wrap(&minor, g->ctx, 1, GSS_C_QOP_DEFAULT, &input, &conf, &output);
    int rc = 0;
    if (major != GSS_S_COMPLETE)
        rc = gss_fail(PGW_EPROTO, "GSSAPI wrap error", major, minor, err, errlen);
    else if (!conf)
        rc = pgw__fail_msg(err, errlen, PGW_EPROTO,
                           "outgoing GSSAPI message would not use confidentiality");
    else if (output.length > PGW__GSS_MAX_PACKET - 4)
        rc = pgw__fail_msg(err, errlen, PGW_EPROTO,
                           "client tried to send oversize GSSAPI packet (%zu > %zu)",
                           (size_t)output.length, (size_t)PGW__GSS_MAX_PACKET - 4);
    if (rc == 0 && pgw_buf_reserve(out, 4 + output.length) < 0)
        rc = pgw__fail_msg(err, errlen, PGW_ENOMEM, "out of memory");
    if (rc == 0) {
        uint8_t len[4];
        pgw__put32(len, (uint32_t)output.length);
        pgw_buf_append(out, len, 4);
        pgw_buf_append(out, output.value, output.length);
    }
    gss_release_buffer(&lmin, &output);
    return rc;
}

int pgw__gss_unwrap(pgw__gss_t *g, const uint8_t *p, size_t n, const uint8_t **plain,
                    size_t *plain_len, char *err, size_t errlen)
{
    OM_uint32 minor, lmin;
    gss_release_buffer(&lmin, &g->plain);
    gss_buffer_desc input = {n, (void *)(uintptr_t)p};
    int conf = 0;
    OM_uint32 major = gss_unwrap(&minor, g->ctx, &input, &g->plain, &conf, NULL);
    if (major != GSS_S_COMPLETE)
        return gss_fail(PGW_EPROTO, "GSSAPI unwrap error", major, minor, err, errlen);
    if (!conf)
        return pgw__fail_msg(err, errlen, PGW_EPROTO,
                             "incoming GSSAPI message did not use confidentiality");
    *plain = g->plain.value;
    *plain_len = g->plain.length;
    return 0;
}

void pgw__gss_principal(pgw__gss_t *g, char *buf, size_t len)
{
    if (len) buf[0] = '\0';
    if (!g || !g->established) return;
    gss_name_t src = GSS_C_NO_NAME;
    OM_uint32 minor;
    if (gss_inquire_context(&minor, g->ctx, &src, NULL, NULL, NULL, NULL, NULL, NULL) !=
        GSS_S_COMPLETE)
        return;
    gss_buffer_desc name = GSS_C_EMPTY_BUFFER;
    if (gss_display_name(&minor, src, &name, NULL) == GSS_S_COMPLETE && len)
        snprintf(buf, len, "%.*s", (int)name.length, (const char *)name.value);
    gss_release_buffer(&minor, &name);
    gss_release_name(&minor, &src);
}

void pgw__gss_free(pgw__gss_t *g)
{
    if (!g) return;
    OM_uint32 minor;
    gss_release_buffer(&minor, &g->plain);
    if (g->ctx != GSS_C_NO_CONTEXT) gss_delete_sec_context(&minor, &g->ctx, GSS_C_NO_BUFFER);
    if (g->cred != GSS_C_NO_CREDENTIAL) gss_release_cred(&minor, &g->cred);
    if (g->target != GSS_C_NO_NAME) gss_release_name(&minor, &g->target);
    pgw__free(g->alloc, g);
}

#else /* !PGW_HAVE_GSSAPI */

int pgw__gss_available(void)
{
    return 0;
}

pgw__gss_cred_t *pgw__gss_cred_acquire(void)
{
    return NULL;
}

void pgw__gss_cred_free(pgw__gss_cred_t *cred)
{
    PGW__UNUSED(cred);
}

int pgw__gss_new(pgw__gss_t **out, const pgw__gss_config_t *cfg, const pgw_allocator_t *alloc,
                 char *err, size_t errlen)
{
    PGW__UNUSED(cfg);
    PGW__UNUSED(alloc);
    *out = NULL;
    return pgw__fail_msg(err, errlen, PGW_ENOTSUP, "GSSAPI authentication not supported");
}

int pgw__gss_step(pgw__gss_t *g, const uint8_t *in, size_t inlen, pgw_buf_t *out,
                  const char *errprefix, char *err, size_t errlen)
{
    PGW__UNUSED(g);
    PGW__UNUSED(in);
    PGW__UNUSED(inlen);
    PGW__UNUSED(out);
    PGW__UNUSED(errprefix);
    return pgw__fail_msg(err, errlen, PGW_ENOTSUP, "GSSAPI authentication not supported");
}

int pgw__gss_established(const pgw__gss_t *g)
{
    PGW__UNUSED(g);
    return 0;
}

int pgw__gss_wrap_limit(pgw__gss_t *g, size_t *max_plain, char *err, size_t errlen)
{
    PGW__UNUSED(g);
    *max_plain = 0;
    return pgw__fail_msg(err, errlen, PGW_ENOTSUP, "GSSAPI is not supported");
}

int pgw__gss_wrap(pgw__gss_t *g, const uint8_t *p, size_t n, pgw_buf_t *out, char *err,
                  size_t errlen)
{
    PGW__UNUSED(g);
    PGW__UNUSED(p);
    PGW__UNUSED(n);
    PGW__UNUSED(out);
    return pgw__fail_msg(err, errlen, PGW_ENOTSUP, "GSSAPI is not supported");
}

int pgw__gss_unwrap(pgw__gss_t *g, const uint8_t *p, size_t n, const uint8_t **plain,
                    size_t *plain_len, char *err, size_t errlen)
{
    PGW__UNUSED(g);
    PGW__UNUSED(p);
    PGW__UNUSED(n);
    *plain = NULL;
    *plain_len = 0;
    return pgw__fail_msg(err, errlen, PGW_ENOTSUP, "GSSAPI is not supported");
}

void pgw__gss_principal(pgw__gss_t *g, char *buf, size_t len)
{
    PGW__UNUSED(g);
    if (len) buf[0] = '\0';
}

void pgw__gss_free(pgw__gss_t *g)
{
    PGW__UNUSED(g);
}

#endif
