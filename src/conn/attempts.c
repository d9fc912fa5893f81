/*
 * The connect's phases and the record of its attempts.
 *
 * Every attempt (one socket to one address, or a host that was never
 * reached) gets a record: host, address, port, the phase it reached, its
 * code and libpq's message for it. libpq writes "connection to server at
 * "h" (addr), port p failed: " as soon as it picks an address and appends
 * each reason the attempt fails for; the record does the same, except that
 * the prefix is written only with the first reason, so that an attempt that
 * connected has no message. pgw_conn_error_message is the records'
 * messages joined with newlines: libpq's PQerrorMessage without its final
 * newline.
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conn_internal.h"

#include <stdio.h>
#include <string.h>

static const char *const phase_names[] = {
#define PHASE_NAME(name, str, meaning) [PGW_PHASE_##name] = str,
    PGW_CONN_PHASE_MAP(PHASE_NAME)
#undef PHASE_NAME
};

const char *pgw_conn_phase_name(int phase)
{
    if (phase < 0 || (size_t)phase >= PGW__ARRAY_LEN(phase_names)) return "unknown";
    return phase_names[phase];
}

int pgw__connect_phase_now(const pgw_conn_t *c)
{
    int phase = c->cx.phase;
    if (phase != PGW_PHASE_STARTUP || !c->s) return phase;
    if (pgw_session_auth_ok(c->s)) return PGW_PHASE_SETUP;
    return pgw_session_auth_method(c->s) ? PGW_PHASE_AUTHENTICATING : PGW_PHASE_STARTUP;
}

int pgw_conn_phase(const pgw_conn_t *c)
{
    return c ? pgw__connect_phase_now(c) : PGW_PHASE_NEW;
}

const pgw_conn_attempt_t *pgw_conn_attempts(const pgw_conn_t *c, size_t *n)
{
    size_t count = c && c->cx.pub ? c->cx.natt : 0;
    if (n) *n = count;
    return count ? c->cx.pub : NULL;
}

/* ---------------------------------------------------------------- records */

/* Point pub[i]'s strings into rec[i] (again, after rec moved or grew). */
static void sync_one(pgw__connect_t *cx, size_t i)
{
    pgw__attempt_t *r = &cx->rec[i];
    pgw_conn_attempt_t *p = &cx->pub[i];
    p->host = r->host;
    p->address = r->address;
    p->sqlstate = r->sqlstate;
    p->message = r->text.len ? (const char *)r->text.data : "";
}

static int grow(pgw_conn_t *c)
{
    pgw__connect_t *cx = &c->cx;
    if (cx->natt < cx->catt) return 0;
    size_t cap = cx->catt ? cx->catt * 2 : 4;
    pgw_conn_attempt_t *pub = pgw__realloc(c->alloc, cx->pub, cap * sizeof(*pub));
    if (!pub) return PGW_ENOMEM;
    cx->pub = pub;
    pgw__attempt_t *rec = pgw__realloc(c->alloc, cx->rec, cap * sizeof(*rec));
    if (!rec) return PGW_ENOMEM;
    cx->rec = rec;
    cx->catt = cap;
    for (size_t i = 0; i < cx->natt; i++)
        sync_one(cx, i);
    return 0;
}

static pgw__attempt_t *current(pgw_conn_t *c)
{
    pgw__connect_t *cx = &c->cx;
    if (cx->cur < 0 || (size_t)cx->cur >= cx->natt) return NULL;
    pgw__attempt_t *r = &cx->rec[cx->cur];
    return r->ended ? NULL : r;
}

/* Append text to r's message, keeping it NUL-terminated (best effort:
 * a failed allocation leaves the message shorter). */
static void text_add(pgw__attempt_t *r, const char *s)
{
    size_t n = strlen(s);
    if (pgw_buf_reserve(&r->text, n + 1) < 0) return;
    memcpy(r->text.data + r->text.len, s, n);
    r->text.len += n;
    r->text.data[r->text.len] = '\0';
}

int pgw__attempt_begin(pgw_conn_t *c, const pgw__host_t *h, const char *address, int enc)
{
    pgw__connect_t *cx = &c->cx;
    if (current(c)) pgw__attempt_end(c, PGW_ECONNECT, NULL);
    int rc = grow(c);
    if (rc < 0) return rc;
    size_t i = cx->natt++;
    pgw__attempt_t *r = &cx->rec[i];
    memset(r, 0, sizeof(*r));
    pgw_buf_init(&r->text, c->alloc);
    const char *host = h->h.host && h->h.host[0] ? h->h.host : h->h.hostaddr;
    snprintf(r->host, sizeof(r->host), "%s", host ? host : "");
    snprintf(r->address, sizeof(r->address), "%s", address ? address : "");
    snprintf(r->port, sizeof(r->port), "%s",
             h->h.port_text && h->h.port_text[0] ? h->h.port_text : h->port);
    r->by_hostaddr = h->h.hostaddr != NULL;
    r->is_unix = h->h.is_unix;
    pgw_conn_attempt_t *p = &cx->pub[i];
    memset(p, 0, sizeof(*p));
    p->port = h->h.port;
    p->tls = enc == PGW__ENC_TLS;
    p->gss = enc == PGW__ENC_GSS;
    p->phase = cx->phase;
    sync_one(cx, i);
    cx->cur = (long)i;
    return 0;
}

/* libpq's emitHostIdentityInfo. */
static void add_prefix(pgw__attempt_t *r)
{
    char buf[512];
    if (r->is_unix) {
        snprintf(buf, sizeof(buf), "connection to server on socket \"%s\" failed: ", r->address);
    } else {
        /* the address is shown when it is not what the user wrote */
        const char *shown = r->by_hostaddr ? r->address : r->host;
        if (!r->by_hostaddr && r->address[0] && strcmp(r->host, r->address) != 0)
            snprintf(buf, sizeof(buf),
                     "connection to server at \"%s\" (%s), port %s failed: ", shown, r->address,
                     r->port);
        else
            snprintf(buf, sizeof(buf), "connection to server at \"%s\", port %s failed: ", shown,
                     r->port);
    }
    text_add(r, buf);
}

void pgw__attempt_reason(pgw_conn_t *c, const char *msg)
{
    pgw__attempt_t *r = current(c);
    if (!r || !msg || !*msg) return;
    if (r->text.len == 0)
        add_prefix(r);
    else
        text_add(r, "\n");
    text_add(r, msg);
    sync_one(&c->cx, (size_t)c->cx.cur);
}

/* The server's error as libpq shows it (default verbosity). */
static void server_reason(pgw_conn_t *c, const pgw_error_t *e)
{
    char buf[2048];
    size_t n = (size_t)snprintf(buf, sizeof(buf), "%s:  %s", e->severity ? e->severity : "FATAL",
                                e->message ? e->message : "");
    if (e->detail && n < sizeof(buf))
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\nDETAIL:  %s", e->detail);
    if (e->hint && n < sizeof(buf)) snprintf(buf + n, sizeof(buf) - n, "\nHINT:  %s", e->hint);
    pgw__attempt_reason(c, buf);
}

/* libpq's words for a failure that brought no message of its own. */
static void default_reason(pgw_conn_t *c, pgw__attempt_t *r, int status)
{
    char buf[512];
    if (status == PGW_ECONNLOST) {
        pgw__attempt_reason(c, PGW__MSG_SERVER_CLOSED);
    } else if (status == PGW_ETIMEDOUT) {
        pgw__attempt_reason(c, "timeout expired");
    } else if (pgw_is_system_error(status)) {
        /* connect()'s errno, with libpq's connectFailureMessage hint */
        snprintf(buf, sizeof(buf), "%s\n\t%s", pgw_strerror(status),
                 r->is_unix ? "Is the server running locally and accepting connections on that "
                              "socket?"
                            : "Is the server running on that host and accepting TCP/IP "
                              "connections?");
        pgw__attempt_reason(c, buf);
    } else {
        pgw__attempt_reason(c, pgw_strerror(status));
    }
}

void pgw__attempt_end(pgw_conn_t *c, int status, const pgw_error_t *err)
{
    pgw__attempt_t *r = current(c);
    if (!r) return;
    size_t i = (size_t)c->cx.cur;
    pgw_conn_attempt_t *p = &c->cx.pub[i];
    p->phase = status == 0 ? PGW_PHASE_READY : pgw__connect_phase_now(c);
    p->status = status;
    if (status < 0) {
        if (err && err->sqlstate) snprintf(r->sqlstate, sizeof(r->sqlstate), "%s", err->sqlstate);
        if (status == PGW_ESERVER && err)
            server_reason(c, err);
        else if (err && err->message)
            pgw__attempt_reason(c, err->message);
        if (r->text.len == 0) default_reason(c, r, status);
    }
    r->ended = 1;
    sync_one(&c->cx, i);
    c->cx.cur = -1;
    pgw__attempts_message(c);
}

void pgw__attempt_unreached(pgw_conn_t *c, const pgw__host_t *h, int status, int phase,
                            const char *msg)
{
    if (pgw__attempt_begin(c, h, NULL, 0) < 0) return;
    size_t i = (size_t)c->cx.cur;
    pgw__attempt_t *r = &c->cx.rec[i];
    text_add(r, msg && *msg ? msg : pgw_strerror(status));
    c->cx.pub[i].phase = phase;
    c->cx.pub[i].status = status;
    r->ended = 1;
    sync_one(&c->cx, i);
    c->cx.cur = -1;
    pgw__attempts_message(c);
}

int pgw__attempts_status(const pgw_conn_t *c)
{
    const pgw__connect_t *cx = &c->cx;
    int first = 0, same = 1, target = 0;
    for (size_t i = 0; i < cx->natt; i++) {
        int st = cx->pub[i].status;
        if (st >= 0) continue;
        if (!first) first = st;
        same &= st == first;
        target |= st == PGW_ETARGET;
    }
    if (!first) return PGW_ECONNECT;
    if (same) return first;
    return target ? PGW_ETARGET : PGW_ECONNECT;
}

void pgw__attempts_message(pgw_conn_t *c)
{
    pgw_buf_reset(&c->errmsg);
    for (size_t i = 0; i < c->cx.natt; i++) {
        const char *m = c->cx.pub[i].message;
        if (!*m) continue;
        if (c->errmsg.len) pgw_buf_append(&c->errmsg, "\n", 1);
        pgw_buf_append(&c->errmsg, m, strlen(m));
    }
    if (pgw_buf_reserve(&c->errmsg, 1) == 0) c->errmsg.data[c->errmsg.len] = '\0';
}

void pgw__attempts_free(pgw_conn_t *c)
{
    pgw__connect_t *cx = &c->cx;
    for (size_t i = 0; i < cx->natt; i++)
        pgw_buf_free(&cx->rec[i].text);
    pgw__free(c->alloc, cx->rec);
    pgw__free(c->alloc, cx->pub);
    cx->rec = NULL;
    cx->pub = NULL;
    cx->natt = cx->catt = 0;
    cx->cur = -1;
}
