/*
 * Encoding of frontend messages.
 *
 * Each fixed-layout encoder computes its exact size first, in 64 bits, checks
 * it against INT32_MAX and the caller's limit, reserves once and then writes:
 * the reservation is the only step that can fail, so a failed call leaves the
 * buffer untouched and an oversized request is refused before a byte (of the
 * message or of its inputs) is read or written.
 */
#include "proto_internal.h"

#define CANCEL_REQUEST_CODE 80877102
#define SSL_REQUEST_CODE    80877103
#define GSSENC_REQUEST_CODE 80877104
#define MAX_STARTUP_PACKET  10000u /* the server refuses longer startup packets */

/* Checks a message whose body is body_len bytes: its declared length (which
 * counts the length field itself) must fit INT32_MAX and max_msg (0: no
 * limit). Callers sum at most a few values each below 2^32 (or first check a
 * caller-given size_t alone), so body_len itself never wraps. */
static int check_size(uint64_t body_len, uint32_t max_msg)
{
    if (body_len > INT32_MAX - 4) return PGW_ETOOBIG;
    uint64_t declared = body_len + 4;
    if (max_msg && declared > max_msg) return PGW_ETOOBIG;
    return 0;
}

/*
 * Starts a message whose body is body_len bytes: checks the size, reserves
 * the whole message and writes its header (the type byte unless type is 0,
 * then the length). Returns where the body goes; the caller writes exactly
 * body_len bytes there and then calls msg_done. Nothing is changed in b
 * until msg_done.
 */
static int msg_start(pgw_buf_t *b, uint8_t type, uint64_t body_len, uint32_t max_msg,
                     uint8_t **body)
{
    if (!b) return PGW_EINVAL;
    int rc = check_size(body_len, max_msg);
    if (rc < 0) return rc;
    uint32_t declared = (uint32_t)body_len + 4;
    size_t hdr = type ? 5 : 4;
    rc = pgw_buf_reserve(b, hdr + (size_t)body_len);
    if (rc < 0) return rc;
    uint8_t *p = b->data + b->len;
    if (type) *p++ = type;
    pgw__put32(p, declared);
    *body = p + 4;
    return 0;
}

static void msg_done(pgw_buf_t *b, uint8_t *body_end)
{
    b->len = (size_t)(body_end - b->data);
}

static uint8_t *put_bytes(uint8_t *p, const void *src, size_t n)
{
    if (n) memcpy(p, src, n);
    return p + n;
}

/* Writes s (of length n, already measured) and its NUL. */
static uint8_t *put_cstr(uint8_t *p, const char *s, size_t n)
{
    p = put_bytes(p, s, n);
    *p++ = 0;
    return p;
}

static uint8_t *put_i16(uint8_t *p, int16_t v)
{
    pgw__put16(p, (uint16_t)v);
    return p + 2;
}

static uint8_t *put_i32(uint8_t *p, int32_t v)
{
    pgw__put32(p, (uint32_t)v);
    return p + 4;
}

/* A message with an empty body: Sync, Flush, CopyDone, Terminate. */
static int enc_empty(pgw_buf_t *b, uint8_t type)
{
    uint8_t *p;
    int rc = msg_start(b, type, 0, 0, &p);
    if (rc < 0) return rc;
    msg_done(b, p);
    return 0;
}

/* A message whose body is one NUL-terminated string. */
static int enc_cstr_msg(pgw_buf_t *b, uint8_t type, const char *s)
{
    if (!s) return PGW_EINVAL;
    size_t n = strlen(s);
    uint8_t *p;
    int rc = msg_start(b, type, (uint64_t)n + 1, 0, &p);
    if (rc < 0) return rc;
    msg_done(b, put_cstr(p, s, n));
    return 0;
}

/* A message whose body is one int32 code (SSLRequest, GSSENCRequest). */
static int enc_code_msg(pgw_buf_t *b, int32_t code)
{
    uint8_t *p;
    int rc = msg_start(b, 0, 4, 0, &p);
    if (rc < 0) return rc;
    msg_done(b, put_i32(p, code));
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Startup and authentication                                               */
/* ------------------------------------------------------------------------ */

int pgw_enc_startup(pgw_buf_t *b, uint32_t version, const char *const *params, size_t nparams)
{
    if (version >> 16 != 3) return PGW_EINVAL;
    if (nparams && !params) return PGW_EINVAL;
    if (nparams > MAX_STARTUP_PACKET) return PGW_ETOOBIG;
    uint64_t body = 4 + 1; /* version, final NUL */
    for (size_t i = 0; i < 2 * nparams; i++) {
        /* An empty name would read as the end of the list. */
        if (!params[i] || (i % 2 == 0 && params[i][0] == 0)) return PGW_EINVAL;
        body += strlen(params[i]) + 1;
        if (body > MAX_STARTUP_PACKET) return PGW_ETOOBIG;
    }
    uint8_t *p;
    int rc = msg_start(b, 0, body, MAX_STARTUP_PACKET, &p);
    if (rc < 0) return rc;
    p = put_i32(p, (int32_t)version);
    for (size_t i = 0; i < 2 * nparams; i++)
        p = put_cstr(p, params[i], strlen(params[i]));
    *p++ = 0;
    msg_done(b, p);
    return 0;
}

int pgw_enc_ssl_request(pgw_buf_t *b)
{
    return enc_code_msg(b, SSL_REQUEST_CODE);
}

int pgw_enc_gssenc_request(pgw_buf_t *b)
{
    return enc_code_msg(b, GSSENC_REQUEST_CODE);
}

int pgw_enc_cancel_request(pgw_buf_t *b, int32_t pid, const uint8_t *key, size_t key_len)
{
    if (!key || key_len < 4 || key_len > 256) return PGW_EINVAL;
    uint8_t *p;
    int rc = msg_start(b, 0, 8 + (uint64_t)key_len, 0, &p);
    if (rc < 0) return rc;
    p = put_i32(p, CANCEL_REQUEST_CODE);
    p = put_i32(p, pid);
    msg_done(b, put_bytes(p, key, key_len));
    return 0;
}

int pgw_enc_password(pgw_buf_t *b, const char *password)
{
    return enc_cstr_msg(b, 'p', password);
}

int pgw_enc_sasl_initial(pgw_buf_t *b, const char *mechanism, const uint8_t *data, int32_t data_len)
{
    if (!mechanism || mechanism[0] == 0 || data_len < -1) return PGW_EINVAL;
    if (data_len > 0 && !data) return PGW_EINVAL;
    size_t mlen = strlen(mechanism);
    uint64_t body = (uint64_t)mlen + 1 + 4 + (data_len > 0 ? (uint64_t)data_len : 0);
    uint8_t *p;
    int rc = msg_start(b, 'p', body, 0, &p);
    if (rc < 0) return rc;
    p = put_cstr(p, mechanism, mlen);
    p = put_i32(p, data_len);
    if (data_len > 0) p = put_bytes(p, data, (size_t)data_len);
    msg_done(b, p);
    return 0;
}

int pgw_enc_sasl_response(pgw_buf_t *b, const uint8_t *data, size_t len)
{
    if (len && !data) return PGW_EINVAL;
    uint8_t *p;
    int rc = msg_start(b, 'p', len, 0, &p);
    if (rc < 0) return rc;
    msg_done(b, put_bytes(p, data, len));
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                  */
/* ------------------------------------------------------------------------ */

/* SQL text sent as a C string: the server would silently stop at a NUL.
 * Called only after the size check, so a lying length is never scanned. */
static int check_sql(const char *sql, size_t len)
{
    if (len && !sql) return PGW_EINVAL;
    if (len && memchr(sql, 0, len)) return PGW_EINVAL;
    return 0;
}

/* The Query message; scan: look for a NUL inside the SQL (its length did
 * not come from strlen). */
static int enc_query(pgw_buf_t *b, const char *sql, size_t len, uint32_t max_msg, bool scan)
{
    if (len > INT32_MAX) return PGW_ETOOBIG; /* before summing: len may be near SIZE_MAX */
    int rc = check_size((uint64_t)len + 1, max_msg);
    if (rc == 0 && scan) rc = check_sql(sql, len);
    if (rc < 0) return rc;
    uint8_t *p;
    rc = msg_start(b, 'Q', (uint64_t)len + 1, max_msg, &p);
    if (rc < 0) return rc;
    msg_done(b, put_cstr(p, sql, len));
    return 0;
}

int pgw_enc_query(pgw_buf_t *b, const char *sql, size_t len, uint32_t max_msg)
{
    return enc_query(b, sql, len, max_msg, true);
}

int pgw__enc_query_cstr(pgw_buf_t *b, const char *sql, size_t len, uint32_t max_msg)
{
    return sql ? enc_query(b, sql, len, max_msg, false) : PGW_EINVAL;
}

static int enc_parse(pgw_buf_t *b, const char *name, const char *sql, size_t sql_len,
                     const uint32_t *param_oids, size_t nparams, uint32_t max_msg, bool scan)
{
    if (!name || (nparams && !param_oids) || nparams > PGW_MAX_PARAMS) return PGW_EINVAL;
    if (sql_len > INT32_MAX) return PGW_ETOOBIG; /* before summing */
    size_t nlen = strlen(name);
    uint64_t body = (uint64_t)nlen + 1 + (uint64_t)sql_len + 1 + 2 + 4 * (uint64_t)nparams;
    int rc = check_size(body, max_msg);
    if (rc == 0 && scan) rc = check_sql(sql, sql_len);
    if (rc < 0) return rc;
    uint8_t *p;
    rc = msg_start(b, 'P', body, max_msg, &p);
    if (rc < 0) return rc;
    p = put_cstr(p, name, nlen);
    p = put_cstr(p, sql, sql_len);
    p = put_i16(p, (int16_t)(uint16_t)nparams);
    for (size_t i = 0; i < nparams; i++)
        p = put_i32(p, (int32_t)param_oids[i]);
    msg_done(b, p);
    return 0;
}

int pgw_enc_parse(pgw_buf_t *b, const char *name, const char *sql, size_t sql_len,
                  const uint32_t *param_oids, size_t nparams, uint32_t max_msg)
{
    return enc_parse(b, name, sql, sql_len, param_oids, nparams, max_msg, true);
}

int pgw__enc_parse_cstr(pgw_buf_t *b, const char *name, const char *sql, size_t sql_len,
                        const uint32_t *param_oids, size_t nparams, uint32_t max_msg)
{
    return sql ? enc_parse(b, name, sql, sql_len, param_oids, nparams, max_msg, false) : PGW_EINVAL;
}

/* A format-code list: count 0, 1 or `per` entries (per == 0: any count),
 * each 0 (text) or 1 (binary). */
static int check_formats(const int16_t *formats, size_t n, size_t per)
{
    if (n && !formats) return PGW_EINVAL;
    if (n > PGW_MAX_PARAMS || (per && n > 1 && n != per)) return PGW_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (formats[i] != 0 && formats[i] != 1) return PGW_EINVAL;
    return 0;
}

/* The bytes the parameters take: lengths only, never the bytes they point
 * at. Each is at most 4 + INT32_MAX, so 65535 of them fit easily in 64 bits. */
static int params_size(const pgw_view_t *params, size_t n, uint64_t *size)
{
    if ((n && !params) || n > PGW_MAX_PARAMS) return PGW_EINVAL;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t len = params[i].len;
        if (len < -1 || (len > 0 && !params[i].p)) return PGW_EINVAL;
        total += 4 + (len > 0 ? (uint64_t)len : 0);
    }
    *size = total;
    return 0;
}

static uint8_t *put_formats(uint8_t *p, const int16_t *formats, size_t n)
{
    p = put_i16(p, (int16_t)(uint16_t)n);
    for (size_t i = 0; i < n; i++)
        p = put_i16(p, formats[i]);
    return p;
}

int pgw_enc_bind(pgw_buf_t *b, const char *portal, const char *stmt, const int16_t *param_formats,
                 size_t nparam_formats, const pgw_view_t *params, size_t nparams,
                 const int16_t *result_formats, size_t nresult_formats, uint32_t max_msg)
{
    if (!portal || !stmt) return PGW_EINVAL;
    int rc = check_formats(param_formats, nparam_formats, nparams ? nparams : 1);
    if (rc == 0) rc = check_formats(result_formats, nresult_formats, 0);
    uint64_t psize = 0;
    if (rc == 0) rc = params_size(params, nparams, &psize);
    if (rc < 0) return rc;
    size_t plen = strlen(portal), slen = strlen(stmt);
    uint64_t body = (uint64_t)plen + 1 + (uint64_t)slen + 1 + 2 + 2 * (uint64_t)nparam_formats + 2 +
                    psize + 2 + 2 * (uint64_t)nresult_formats;
    uint8_t *p;
    rc = msg_start(b, 'B', body, max_msg, &p);
    if (rc < 0) return rc;
    p = put_cstr(p, portal, plen);
    p = put_cstr(p, stmt, slen);
    p = put_formats(p, param_formats, nparam_formats);
    p = put_i16(p, (int16_t)(uint16_t)nparams);
    for (size_t i = 0; i < nparams; i++) {
        int32_t len = params[i].len;
        p = put_i32(p, len);
        if (len > 0) p = put_bytes(p, params[i].p, (size_t)len);
    }
    p = put_formats(p, result_formats, nresult_formats);
    msg_done(b, p);
    return 0;
}

/* Describe and Close: a target byte ('S' or 'P') and a name. */
static int enc_target_msg(pgw_buf_t *b, uint8_t type, char what, const char *name)
{
    if ((what != 'S' && what != 'P') || !name) return PGW_EINVAL;
    size_t n = strlen(name);
    uint8_t *p;
    int rc = msg_start(b, type, 1 + (uint64_t)n + 1, 0, &p);
    if (rc < 0) return rc;
    *p++ = (uint8_t)what;
    msg_done(b, put_cstr(p, name, n));
    return 0;
}

int pgw_enc_describe(pgw_buf_t *b, char what, const char *name)
{
    return enc_target_msg(b, 'D', what, name);
}

int pgw_enc_close(pgw_buf_t *b, char what, const char *name)
{
    return enc_target_msg(b, 'C', what, name);
}

int pgw_enc_execute(pgw_buf_t *b, const char *portal, int32_t max_rows)
{
    if (!portal || max_rows < 0) return PGW_EINVAL;
    size_t n = strlen(portal);
    uint8_t *p;
    int rc = msg_start(b, 'E', (uint64_t)n + 1 + 4, 0, &p);
    if (rc < 0) return rc;
    p = put_cstr(p, portal, n);
    msg_done(b, put_i32(p, max_rows));
    return 0;
}

int pgw_enc_sync(pgw_buf_t *b)
{
    return enc_empty(b, 'S');
}

int pgw_enc_flush(pgw_buf_t *b)
{
    return enc_empty(b, 'H');
}

/* ------------------------------------------------------------------------ */
/* COPY and session end                                                     */
/* ------------------------------------------------------------------------ */

int pgw_enc_copy_data(pgw_buf_t *b, const void *data, size_t len, uint32_t max_msg)
{
    if (len && !data) return PGW_EINVAL;
    uint8_t *p;
    int rc = msg_start(b, 'd', len, max_msg, &p);
    if (rc < 0) return rc;
    msg_done(b, put_bytes(p, data, len));
    return 0;
}

int pgw_enc_copy_done(pgw_buf_t *b)
{
    return enc_empty(b, 'c');
}

int pgw_enc_copy_fail(pgw_buf_t *b, const char *reason)
{
    return enc_cstr_msg(b, 'f', reason);
}

int pgw_enc_terminate(pgw_buf_t *b)
{
    return enc_empty(b, 'X');
}

/* ------------------------------------------------------------------------ */
/* Incremental writer                                                       */
/* ------------------------------------------------------------------------ */

void pgw_msgw_begin(pgw_buf_t *b, uint8_t type, pgw_msgw_t *w)
{
    w->b = b;
    if (!b) {
        w->start = w->len_at = 0;
        w->err = PGW_EINVAL;
        return;
    }
    w->start = b->len;
    w->len_at = b->len + (type ? 1 : 0);
    w->err = pgw_buf_reserve(b, type ? 5 : 4);
    if (w->err) return;
    if (type) b->data[b->len++] = type;
    memset(b->data + b->len, 0, 4);
    b->len += 4;
}

uint8_t *pgw_msgw_reserve(pgw_msgw_t *w, size_t n)
{
    if (w->err) return NULL;
    pgw_buf_t *b = w->b;
    /* Refuse growth past what a message can declare before allocating. */
    if (n > INT32_MAX || (uint64_t)(b->len - w->len_at) + n > INT32_MAX) {
        w->err = PGW_ETOOBIG;
        return NULL;
    }
    int rc = pgw_buf_reserve(b, n);
    if (rc < 0) {
        w->err = rc;
        return NULL;
    }
    uint8_t *p = b->data + b->len;
    b->len += n;
    return p;
}

void pgw_msgw_u8(pgw_msgw_t *w, uint8_t v)
{
    uint8_t *p = pgw_msgw_reserve(w, 1);
    if (p) *p = v;
}

void pgw_msgw_i16(pgw_msgw_t *w, int16_t v)
{
    uint8_t *p = pgw_msgw_reserve(w, 2);
    if (p) pgw__put16(p, (uint16_t)v);
}

void pgw_msgw_i32(pgw_msgw_t *w, int32_t v)
{
    uint8_t *p = pgw_msgw_reserve(w, 4);
    if (p) pgw__put32(p, (uint32_t)v);
}

void pgw_msgw_bytes(pgw_msgw_t *w, const void *src, size_t n)
{
    if (!w->err && n && !src) {
        w->err = PGW_EINVAL;
        return;
    }
    uint8_t *p = pgw_msgw_reserve(w, n);
    if (p) put_bytes(p, src, n);
}

void pgw_msgw_cstr(pgw_msgw_t *w, const char *s)
{
    if (!w->err && !s) {
        w->err = PGW_EINVAL;
        return;
    }
    if (w->err) return;
    size_t n = strlen(s);
    uint8_t *p = pgw_msgw_reserve(w, n + 1);
    if (p) put_cstr(p, s, n);
}

size_t pgw_msgw_tell(const pgw_msgw_t *w)
{
    return w->b ? w->b->len : 0;
}

void pgw_msgw_patch32(pgw_msgw_t *w, size_t at, int32_t v)
{
    if (w->err) return;
    /* Only bytes already written inside this message may be patched. */
    if (at < w->start || at > w->b->len || w->b->len - at < 4) {
        w->err = PGW_EINVAL;
        return;
    }
    pgw__put32(w->b->data + at, (uint32_t)v);
}

void pgw_msgw_fail(pgw_msgw_t *w, int err)
{
    if (!w->err) w->err = err < 0 ? err : PGW_EINVAL;
}

int pgw_msgw_end(pgw_msgw_t *w, uint32_t max_msg)
{
    pgw_buf_t *b = w->b;
    int rc = w->err;
    if (rc == 0 && (b->len < w->len_at || b->len - w->len_at < 4)) rc = PGW_EINVAL;
    if (rc == 0) rc = check_size((uint64_t)(b->len - w->len_at) - 4, max_msg);
    if (rc < 0) {
        if (b && b->len > w->start) b->len = w->start;
        w->err = rc;
        return rc;
    }
    pgw__put32(b->data + w->len_at, (uint32_t)(b->len - w->len_at));
    return 0;
}
