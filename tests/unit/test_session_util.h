/*
 * Helpers for the session unit tests (backend messages are built with
 * tests/common/pgmsg.h into a pgw_buf_t): create sessions whose callbacks record what happened,
 * read the frontend messages the session wrote. Header-only (static functions): each
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

#include "failalloc.h"
#include "pgmsg.h"
#include "pgwire/session.h"
#include "session/session_internal.h"

/* ------------------------------------------------------ backend messages */

/* The answer to one pgw_session_query("SELECT $1::int8") returning v, with
 * its own Sync. */
static inline void w_int8_query(pgw_buf_t *w, int64_t v, int with_ready)
{
    static const char *const names[] = {"tag"};
    static const uint32_t oids[] = {20};
    pgt_msg(w, '1', NULL, 0);
    pgt_msg(w, '2', NULL, 0);
    pgt_msg_row_desc(w, 1, names, oids, 1);
    pgt_msg_data_row_int8(w, v);
    pgt_msg_command_complete(w, "SELECT 1");
    if (with_ready) pgt_msg_ready(w, 'I');
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
    /* The scripted replies of these tests are those of unnamed statements:
     * the statement cache is off unless a test asks for it (the cache's
     * own tests, test_session_cache.c). */
    bool stmt_cache;
    uint32_t stmt_cache_size;
    size_t stmt_cache_bytes;
    /* The session's clock (NULL: none), called with the rec_t. */
    uint64_t (*now_ns)(void *ud);
    bool no_pipelining;
    /* The session's protocol trace (NULL: none), called with the rec_t. */
    void (*on_trace)(pgw_session_t *s, char direction, const uint8_t *msg, size_t len, void *ud);
} sess_opts_t;

static inline int new_session_opts(pgw_session_t **out, rec_t *rec, const sess_opts_t *o)
{
    const char *params[] = {"user", o && o->user ? o->user : "alice", "database", "db"};
    pgw_session_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = 2;
    cfg.stmt_cache_mode = o && o->stmt_cache ? PGW_STMT_CACHE_AUTO : PGW_STMT_CACHE_OFF;
    if (o) {
        cfg.stmt_cache_size = o->stmt_cache_size;
        cfg.stmt_cache_bytes = o->stmt_cache_bytes;
        cfg.password = o->password;
        cfg.require_auth = o->require_auth;
        cfg.channel_binding = o->channel_binding;
        cfg.min_protocol = o->min_protocol;
        cfg.max_protocol = o->max_protocol;
        cfg.read_chunk_size = o->read_chunk_size;
        cfg.max_message_size = o->max_message_size;
        cfg.alloc = o->alloc;
        cfg.cb.channel_binding = o->channel_binding_cb;
        cfg.cb.now_ns = o->now_ns;
        cfg.no_pipelining = o->no_pipelining;
        cfg.cb.on_trace = o->on_trace;
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

static inline void feed(pgw_session_t *s, const pgw_buf_t *w)
{
    (void)pgw_session_recv(s, w->data, w->len);
}

/* Take all pending output into dst (appended). */
static inline void take_out(pgw_session_t *s, pgw_buf_t *dst)
{
    size_t n;
    const uint8_t *p = pgw_session_pending_output(s, &n);
    if (n) pgt_msg_raw(dst, p, n);
    pgw_session_consumed_output(s, n);
}

/* The length field of the typed message at offset at of w. */
static inline uint32_t msg_len_at(const pgw_buf_t *w, size_t at)
{
    return (uint32_t)w->data[at + 1] << 24 | (uint32_t)w->data[at + 2] << 16 |
           (uint32_t)w->data[at + 3] << 8 | w->data[at + 4];
}

/* Type bytes of the typed frontend messages in w from offset at. */
static inline void msg_types(const pgw_buf_t *w, size_t at, char *out, size_t cap)
{
    size_t k = 0;
    while (at + 5 <= w->len && k + 1 < cap) {
        out[k++] = (char)w->data[at];
        at += 1 + msg_len_at(w, at);
    }
    out[k] = '\0';
}

/* The first message of type t in w from offset at, or SIZE_MAX. */
static inline size_t find_msg(const pgw_buf_t *w, size_t at, char t)
{
    for (; at + 5 <= w->len; at += 1 + msg_len_at(w, at))
        if (w->data[at] == (uint8_t)t) return at;
    return SIZE_MAX;
}

/* The output since the last call, as a string of message types (the
 * untyped StartupMessage is skipped when skip_startup). */
static inline void out_types(pgw_session_t *s, char *out, size_t cap)
{
    pgw_buf_t w = {0};
    take_out(s, &w);
    msg_types(&w, 0, out, cap);
    pgw_buf_free(&w);
}

/* Script a trust startup and check it succeeded. */
static inline void startup_trust(pgw_session_t *s, rec_t *rec)
{
    assert_int_equal(pgw_session_start(s), 0);
    pgw_buf_t out = {0};
    take_out(s, &out);
    pgw_buf_free(&out);
    pgw_buf_t w = {0};
    static const uint8_t key[4] = {1, 2, 3, 4};
    pgt_msg_auth(&w, 0, NULL, 0);
    pgt_msg_param_status(&w, "server_version", "16.1");
    pgt_msg_param_status(&w, "client_encoding", "UTF8");
    pgt_msg_backend_key(&w, 4242, key, 4);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    pgw_buf_free(&w);
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
static inline void bind_parts(const pgw_buf_t *w, size_t at, const uint8_t **params, size_t *plen,
                              int16_t *fmts, int *n)
{
    const uint8_t *p = w->data + at + 5;
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

/* An allocator counting malloc/realloc calls (g_count.calls). */
static pgt_alloc_t g_count = PGT_ALLOC_INITIALIZER(g_count);
static const pgw_allocator_t *const count_alloc = &g_count.base;

#endif
