/*
 * Helpers for the session unit tests: build backend messages into a byte
 * buffer, create sessions whose callbacks record what happened, read the
 * frontend messages the session wrote. Header-only (static functions): each
 * test_session_*.c is its own executable.
 */
#ifndef PGW_TEST_SESSION_UTIL_H
#define PGW_TEST_SESSION_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pgwire/session.h"
#include "session/session_internal.h"

/* ------------------------------------------------------ backend messages */

typedef struct wire {
    uint8_t *p;
    size_t n, cap;
} wire_t;

static inline void w_bytes(wire_t *w, const void *p, size_t n)
{
    if (w->n + n > w->cap) {
        w->cap = (w->n + n) * 2 + 64;
        w->p = realloc(w->p, w->cap);
        assert_non_null(w->p);
    }
    memcpy(w->p + w->n, p, n);
    w->n += n;
}

static inline void w_u8(wire_t *w, uint8_t v)
{
    w_bytes(w, &v, 1);
}

static inline void w_i16(wire_t *w, int16_t v)
{
    uint8_t b[2] = {(uint8_t)((uint16_t)v >> 8), (uint8_t)v};
    w_bytes(w, b, 2);
}

static inline void w_i32(wire_t *w, int32_t v)
{
    uint8_t b[4] = {(uint8_t)((uint32_t)v >> 24), (uint8_t)((uint32_t)v >> 16),
                    (uint8_t)((uint32_t)v >> 8), (uint8_t)v};
    w_bytes(w, b, 4);
}

static inline void w_cstr(wire_t *w, const char *s)
{
    w_bytes(w, s, strlen(s) + 1);
}

/* Begin a message; returns the offset of its length slot for w_end. */
static size_t w_begin(wire_t *w, char type)
{
    w_u8(w, (uint8_t)type);
    size_t at = w->n;
    w_i32(w, 0);
    return at;
}

static inline void w_end(wire_t *w, size_t at)
{
    uint32_t len = (uint32_t)(w->n - at);
    w->p[at] = (uint8_t)(len >> 24);
    w->p[at + 1] = (uint8_t)(len >> 16);
    w->p[at + 2] = (uint8_t)(len >> 8);
    w->p[at + 3] = (uint8_t)len;
}

static inline void w_empty(wire_t *w, char type)
{
    w_end(w, w_begin(w, type));
}

static inline void w_auth(wire_t *w, int32_t code, const void *data, size_t n)
{
    size_t at = w_begin(w, 'R');
    w_i32(w, code);
    if (n) w_bytes(w, data, n);
    w_end(w, at);
}

static inline void w_ready(wire_t *w, char st)
{
    size_t at = w_begin(w, 'Z');
    w_u8(w, (uint8_t)st);
    w_end(w, at);
}

static inline void w_param_status(wire_t *w, const char *name, const char *value)
{
    size_t at = w_begin(w, 'S');
    w_cstr(w, name);
    w_cstr(w, value);
    w_end(w, at);
}

static inline void w_backend_key(wire_t *w, int32_t pid, const uint8_t *key, size_t n)
{
    size_t at = w_begin(w, 'K');
    w_i32(w, pid);
    w_bytes(w, key, n);
    w_end(w, at);
}

/* RowDescription: n columns, names[i], oids[i], format fmt for all. */
static inline void w_rowdesc(wire_t *w, int n, const char *const *names, const uint32_t *oids,
                             int16_t fmt)
{
    size_t at = w_begin(w, 'T');
    w_i16(w, (int16_t)n);
    for (int i = 0; i < n; i++) {
        w_cstr(w, names[i]);
        w_i32(w, 0);
        w_i16(w, 0);
        w_i32(w, (int32_t)oids[i]);
        w_i16(w, -1);
        w_i32(w, -1);
        w_i16(w, fmt);
    }
    w_end(w, at);
}

/* DataRow of n text values (NULL pointer: SQL NULL). */
static inline void w_datarow(wire_t *w, int n, const char *const *vals)
{
    size_t at = w_begin(w, 'D');
    w_i16(w, (int16_t)n);
    for (int i = 0; i < n; i++) {
        if (!vals[i]) {
            w_i32(w, -1);
            continue;
        }
        w_i32(w, (int32_t)strlen(vals[i]));
        w_bytes(w, vals[i], strlen(vals[i]));
    }
    w_end(w, at);
}

/* DataRow with one binary int8. */
static inline void w_datarow_int8(wire_t *w, int64_t v)
{
    size_t at = w_begin(w, 'D');
    w_i16(w, 1);
    w_i32(w, 8);
    w_i32(w, (int32_t)((uint64_t)v >> 32));
    w_i32(w, (int32_t)(uint32_t)v);
    w_end(w, at);
}

static inline void w_cmd(wire_t *w, const char *tag)
{
    size_t at = w_begin(w, 'C');
    w_cstr(w, tag);
    w_end(w, at);
}

static inline void w_fields(wire_t *w, const char *sev, const char *code, const char *msg)
{
    w_u8(w, 'S');
    w_cstr(w, sev);
    w_u8(w, 'V');
    w_cstr(w, sev);
    w_u8(w, 'C');
    w_cstr(w, code);
    w_u8(w, 'M');
    w_cstr(w, msg);
    w_u8(w, 0);
}

static inline void w_error(wire_t *w, const char *sev, const char *code, const char *msg)
{
    size_t at = w_begin(w, 'E');
    w_fields(w, sev, code, msg);
    w_end(w, at);
}

static inline void w_notice(wire_t *w, const char *msg)
{
    size_t at = w_begin(w, 'N');
    w_fields(w, "NOTICE", "00000", msg);
    w_end(w, at);
}

static inline void w_notify(wire_t *w, int32_t pid, const char *chan, const char *payload)
{
    size_t at = w_begin(w, 'A');
    w_i32(w, pid);
    w_cstr(w, chan);
    w_cstr(w, payload);
    w_end(w, at);
}

static inline void w_param_desc(wire_t *w, int n, const uint32_t *oids)
{
    size_t at = w_begin(w, 't');
    w_i16(w, (int16_t)n);
    for (int i = 0; i < n; i++)
        w_i32(w, (int32_t)oids[i]);
    w_end(w, at);
}

/* The answer to one pgw_session_query("SELECT $1::int8") returning v, with
 * its own Sync. */
static inline void w_int8_query(wire_t *w, int64_t v, int with_ready)
{
    static const char *const names[] = {"tag"};
    static const uint32_t oids[] = {20};
    w_empty(w, '1');
    w_empty(w, '2');
    w_rowdesc(w, 1, names, oids, 1);
    w_datarow_int8(w, v);
    w_cmd(w, "SELECT 1");
    if (with_ready) w_ready(w, 'I');
}

static inline void w_free(wire_t *w)
{
    free(w->p);
    memset(w, 0, sizeof *w);
}

/* ------------------------------------------------------------- recording */

#define REC_MAX 4096

typedef struct rec_done {
    int calls;
    int status;
    int64_t value; /* first column of row 0 as int8, when there is one */
    int has_value;
    char sqlstate[8];
    char tag[32];
    int order; /* global completion order */
} rec_done_t;

typedef struct rec {
    int startup_calls, startup_status;
    char startup_sqlstate[8];
    char startup_message[160];
    int broken_calls, broken_err;
    int notices;
    char last_notice[64];
    int notifies;
    char last_channel[64], last_payload[64];
    int32_t last_pid;
    int params;
    int want_write;
    int completions;
    rec_done_t done[REC_MAX];
    pgw_result_t *keep[REC_MAX]; /* results kept by keep_cb */
} rec_t;

static rec_t *g_rec;

static inline void on_startup(pgw_session_t *s, int status, const pgw_error_t *err, void *ud)
{
    rec_t *r = ud;
    (void)s;
    r->startup_calls++;
    r->startup_status = status;
    if (err && err->sqlstate) snprintf(r->startup_sqlstate, 8, "%s", err->sqlstate);
    if (err && err->message)
        snprintf(r->startup_message, sizeof r->startup_message, "%s", err->message);
}

static inline void on_broken(pgw_session_t *s, int err, void *ud)
{
    rec_t *r = ud;
    (void)s;
    r->broken_calls++;
    r->broken_err = err;
}

static inline void on_notice(pgw_session_t *s, const pgw_error_t *n, void *ud)
{
    rec_t *r = ud;
    (void)s;
    r->notices++;
    snprintf(r->last_notice, sizeof r->last_notice, "%s", n->message ? n->message : "");
}

static inline void on_notification(pgw_session_t *s, int32_t pid, pgw_str_t ch, pgw_str_t pl,
                                   void *ud)
{
    rec_t *r = ud;
    (void)s;
    r->notifies++;
    r->last_pid = pid;
    snprintf(r->last_channel, sizeof r->last_channel, "%.*s", (int)ch.len, ch.p);
    snprintf(r->last_payload, sizeof r->last_payload, "%.*s", (int)pl.len, pl.p);
}

static inline void on_parameter(pgw_session_t *s, pgw_str_t n, pgw_str_t v, void *ud)
{
    (void)s, (void)n, (void)v;
    ((rec_t *)ud)->params++;
}

static inline void on_want_write(pgw_session_t *s, void *ud)
{
    (void)s;
    ((rec_t *)ud)->want_write++;
}

/* Request callback: ud is the index into g_rec->done. Records and frees. */
static inline void rec_cb(int status, pgw_result_t *res, void *ud)
{
    size_t i = (size_t)(uintptr_t)ud;
    rec_done_t *d = &g_rec->done[i];
    d->calls++;
    d->status = status;
    d->order = g_rec->completions++;
    if (res) {
        snprintf(d->tag, sizeof d->tag, "%s", pgw_result_command_tag(res));
        const pgw_error_t *e = pgw_result_error(res);
        if (e && e->sqlstate) snprintf(d->sqlstate, sizeof d->sqlstate, "%s", e->sqlstate);
        if (pgw_result_nrows(res) > 0 && pgw_result_ncols(res) > 0) {
            int64_t v;
            if (pgw_result_int8(res, 0, 0, &v) == 0) {
                d->value = v;
                d->has_value = 1;
            }
        }
        pgw_result_free(res);
    }
}

/* Like rec_cb but keeps the result in g_rec->keep[i] for the test. */
static inline void keep_cb(int status, pgw_result_t *res, void *ud)
{
    size_t i = (size_t)(uintptr_t)ud;
    g_rec->done[i].calls++;
    g_rec->done[i].status = status;
    g_rec->done[i].order = g_rec->completions++;
    g_rec->keep[i] = res;
}

#define UD(i) ((void *)(uintptr_t)(i))

/* -------------------------------------------------------------- sessions */

typedef struct sess_opts {
    const char *user;
    const char *password;
    const char *require_auth;
    const char *channel_binding;
    uint32_t min_protocol, max_protocol;
    size_t read_chunk_size;
    uint32_t max_message_size;
    const pgw_allocator_t *alloc;
    int (*channel_binding_cb)(pgw_session_t *, const uint8_t **, size_t *, void *);
} sess_opts_t;

static inline int new_session_opts(pgw_session_t **out, rec_t *rec, const sess_opts_t *o)
{
    const char *params[] = {"user", o && o->user ? o->user : "alice", "database", "db"};
    pgw_session_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = 2;
    if (o) {
        cfg.password = o->password;
        cfg.require_auth = o->require_auth;
        cfg.channel_binding = o->channel_binding;
        cfg.min_protocol = o->min_protocol;
        cfg.max_protocol = o->max_protocol;
        cfg.read_chunk_size = o->read_chunk_size;
        cfg.max_message_size = o->max_message_size;
        cfg.alloc = o->alloc;
        cfg.cb.channel_binding = o->channel_binding_cb;
    }
    cfg.cb.on_startup = on_startup;
    cfg.cb.on_broken = on_broken;
    cfg.cb.on_notice = on_notice;
    cfg.cb.on_notification = on_notification;
    cfg.cb.on_parameter = on_parameter;
    cfg.cb.on_want_write = on_want_write;
    cfg.ud = rec;
    return pgw_session_new(out, &cfg);
}

static inline pgw_session_t *new_session(rec_t *rec, const sess_opts_t *o)
{
    pgw_session_t *s = NULL;
    assert_int_equal(new_session_opts(&s, rec, o), 0);
    return s;
}

static inline void feed(pgw_session_t *s, const wire_t *w)
{
    (void)pgw_session_recv(s, w->p, w->n);
}

/* Take all pending output into dst (appended). */
static inline void take_out(pgw_session_t *s, wire_t *dst)
{
    size_t n;
    const uint8_t *p = pgw_session_pending_output(s, &n);
    if (n) w_bytes(dst, p, n);
    pgw_session_consumed_output(s, n);
}

/* Type bytes of the typed frontend messages in w from offset at. */
static inline void msg_types(const wire_t *w, size_t at, char *out, size_t cap)
{
    size_t k = 0;
    while (at + 5 <= w->n && k + 1 < cap) {
        out[k++] = (char)w->p[at];
        uint32_t len = (uint32_t)w->p[at + 1] << 24 | (uint32_t)w->p[at + 2] << 16 |
                       (uint32_t)w->p[at + 3] << 8 | w->p[at + 4];
        at += 1 + len;
    }
    out[k] = '\0';
}

/* The output since the last call, as a string of message types (the
 * untyped StartupMessage is skipped when skip_startup). */
static inline void out_types(pgw_session_t *s, char *out, size_t cap)
{
    wire_t w = {0};
    take_out(s, &w);
    msg_types(&w, 0, out, cap);
    w_free(&w);
}

/* Script a trust startup and check it succeeded. */
static inline void startup_trust(pgw_session_t *s, rec_t *rec)
{
    assert_int_equal(pgw_session_start(s), 0);
    wire_t out = {0};
    take_out(s, &out);
    w_free(&out);
    wire_t w = {0};
    static const uint8_t key[4] = {1, 2, 3, 4};
    w_auth(&w, 0, NULL, 0);
    w_param_status(&w, "server_version", "16.1");
    w_param_status(&w, "client_encoding", "UTF8");
    w_backend_key(&w, 4242, key, 4);
    w_ready(&w, 'I');
    feed(s, &w);
    w_free(&w);
    assert_int_equal(rec->startup_calls, 1);
    assert_int_equal(rec->startup_status, 0);
    assert_int_equal(pgw_session_state(s), PGW_SESSION_READY);
}

static inline pgw_session_t *ready_session(rec_t *rec, const sess_opts_t *o)
{
    memset(rec, 0, sizeof *rec);
    g_rec = rec;
    pgw_session_t *s = new_session(rec, o);
    startup_trust(s, rec);
    return s;
}

/* ------------------------------------------------------- frontend messages */

/* The parameter section of the Bind at offset at (after the statement
 * name, before the result formats) and its result formats. */
static inline void bind_parts(const wire_t *w, size_t at, const uint8_t **params, size_t *plen,
                              int16_t *fmts, int *n)
{
    const uint8_t *p = w->p + at + 5;
    p += strlen((const char *)p) + 1; /* portal */
    p += strlen((const char *)p) + 1; /* statement */
    *params = p;
    int npf = p[0] << 8 | p[1];
    p += 2 + 2 * npf;
    int np = p[0] << 8 | p[1];
    p += 2;
    for (int i = 0; i < np; i++) {
        int32_t len = (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | p[2] << 8 | p[3]);
        p += 4 + (len > 0 ? len : 0);
    }
    *plen = (size_t)(p - *params);
    *n = p[0] << 8 | p[1];
    p += 2;
    for (int i = 0; i < *n; i++)
        fmts[i] = (int16_t)(p[2 * i] << 8 | p[2 * i + 1]);
}

/* ---------------------------------------------------- counting allocator */

/* An allocator counting malloc/realloc calls in g_allocs. */
static size_t g_allocs;

static inline void *count_malloc(size_t n, void *ud)
{
    (void)ud;
    g_allocs++;
    return malloc(n);
}

static inline void *count_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    g_allocs++;
    return realloc(p, n);
}

static inline void count_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

static const pgw_allocator_t count_alloc = {NULL, count_malloc, count_realloc, count_free};

#endif
