/*
 * Parsing of backend message bodies into pgw_msg_t, and the walkers over
 * their variable parts (DataRow fields, RowDescription descriptors, error
 * fields, SASL mechanisms, unrecognised protocol options).
 *
 * Every parser reads through a bounds-checked pgw__rd_t and ends with
 * pgw__rd_finish, so a body must be consumed exactly by its declared length.
 * Messages whose parts are walked later (RowDescription, ErrorResponse,
 * SASL lists, NegotiateProtocolVersion) are validated completely here, so a
 * walker over a parsed message cannot fail; DataRow is the exception, its
 * fields are checked once, by the walker, because it is the hot path.
 */
#include "proto_internal.h"

/* ------------------------------------------------------------------------ */
/* Authentication                                                           */
/* ------------------------------------------------------------------------ */

/* A SASL mechanism list: non-empty NUL-terminated names, then one NUL. */
static int check_sasl_list(const uint8_t *p, size_t n)
{
    pgw__rd_t r;
    pgw__rd_init(&r, p, n);
    for (;;) {
        pgw_str_t mech = pgw__rd_cstr(&r);
        if (r.err) return r.err;
        if (mech.len == 0) break;
    }
    return pgw__rd_finish(&r);
}

static int parse_auth(pgw__rd_t *r, pgw_msg_t *m)
{
    m->u.auth.code = (int32_t)pgw__rd_u32(r);
    if (r->err) return r->err;
    size_t rest = pgw__rd_left(r);
    switch (m->u.auth.code) {
    case PGW_AUTH_OK:
    case PGW_AUTH_KERBEROS_V5:
    case PGW_AUTH_CLEARTEXT:
    case PGW_AUTH_GSS:
    case PGW_AUTH_SSPI:
        rest = 0; /* no data: anything more is trailing garbage */
        break;
    case PGW_AUTH_MD5:
        rest = 4; /* the salt */
        break;
    case PGW_AUTH_SASL:
        if (check_sasl_list(r->p, rest) < 0) return PGW_EPROTO;
        break;
    default:
        /* GSS/SASL continue and final data, and codes this codec does not
         * know: the payload is opaque here; the session decides. */
        break;
    }
    m->u.auth.data = pgw__rd_take(r, rest);
    m->u.auth.data_len = (uint32_t)rest;
    return pgw__rd_finish(r);
}

/* ------------------------------------------------------------------------ */
/* CommandComplete                                                          */
/* ------------------------------------------------------------------------ */

/* Parses s[0..n) as a non-empty decimal uint64; returns 0 or -1. */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
    if (n == 0) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9) return -1;
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* Whether a tag's command word, cmd[0..n), is followed by a row count. */
static int command_has_count(const char *cmd, size_t n)
{
    static const char words[][7] = {"UPDATE", "DELETE", "SELECT", "MOVE", "FETCH", "COPY", "MERGE"};
    if (n < 4 || n > 6) return 0;
    for (size_t i = 0; i < PGW__ARRAY_LEN(words); i++)
        if (words[i][n] == '\0' && memcmp(cmd, words[i], n) == 0) return 1;
    return 0;
}

/* Finds the row count of a tag: "INSERT oid rows" or "<CMD> rows". A tag
 * without one (CREATE TABLE, BEGIN...) or with a malformed one is not an
 * error: has_rows is just 0, as PQcmdTuples returns "" for it. */
static void parse_tag_rows(pgw_str_t tag, uint64_t *rows, int *has_rows)
{
    *rows = 0;
    *has_rows = 0;
    /* The count follows the last space: a few bytes from the end. */
    const char *last = NULL;
    for (size_t i = tag.len; i-- > 0;)
        if (tag.p[i] == ' ') {
            last = tag.p + i;
            break;
        }
    if (!last) return;
    size_t head = (size_t)(last - tag.p);
    uint64_t count, oid;
    if (parse_u64(last + 1, tag.len - head - 1, &count) < 0) return;
    if (head > 7 && memcmp(tag.p, "INSERT ", 7) == 0) {
        if (parse_u64(tag.p + 7, head - 7, &oid) < 0) return;
    } else if (!command_has_count(tag.p, head)) {
        return;
    }
    *rows = count;
    *has_rows = 1;
}

static int parse_command_complete(pgw__rd_t *r, pgw_msg_t *m)
{
    pgw_str_t tag = pgw__rd_cstr(r);
    m->u.command_complete.tag = tag;
    if (!r->err) parse_tag_rows(tag, &m->u.command_complete.rows, &m->u.command_complete.has_rows);
    return pgw__rd_finish(r);
}

/* ------------------------------------------------------------------------ */
/* Other messages                                                           */
/* ------------------------------------------------------------------------ */

static int parse_backend_key(pgw__rd_t *r, pgw_msg_t *m)
{
    m->u.backend_key.pid = (int32_t)pgw__rd_u32(r);
    size_t key_len = pgw__rd_left(r);
    if (r->err || key_len < 4 || key_len > 256) return PGW_EPROTO;
    m->u.backend_key.key = pgw__rd_take(r, key_len);
    m->u.backend_key.key_len = (uint32_t)key_len;
    return pgw__rd_finish(r);
}

/* CopyIn/Out/BothResponse: formats are 0 (text) or 1 (binary). */
static int parse_copy_response(pgw__rd_t *r, pgw_msg_t *m)
{
    m->u.copy_response.format = pgw__rd_u8(r);
    uint16_t ncols = pgw__rd_u16(r);
    m->u.copy_response.ncols = ncols;
    const uint8_t *formats = pgw__rd_take(r, (size_t)ncols * 2);
    m->u.copy_response.formats = formats;
    if (r->err || m->u.copy_response.format > 1) return PGW_EPROTO;
    for (uint16_t i = 0; i < ncols; i++)
        if (pgw__get16(formats + 2 * (size_t)i) > 1) return PGW_EPROTO;
    return pgw__rd_finish(r);
}

static int parse_data_row(pgw__rd_t *r, pgw_msg_t *m)
{
    m->u.data_row.ncols = pgw__rd_u16(r);
    m->u.data_row.fields = r->p;
    if (r->err) return r->err;
    r->p = r->end; /* the fields are checked by the walkers */
    return 0;
}

/* ErrorResponse/NoticeResponse: the field list, checked by the one walker
 * pgw_error_fields_parse uses (pgw__error_fields_walk). */
static int parse_error(pgw__rd_t *r, pgw_msg_t *m)
{
    m->u.error.fields = r->p;
    m->u.error.len = (uint32_t)pgw__rd_left(r);
    return pgw__error_fields_walk(m->u.error.fields, m->u.error.len, NULL);
}

static int parse_function_result(pgw__rd_t *r, pgw_msg_t *m)
{
    int32_t len = (int32_t)pgw__rd_u32(r);
    m->u.data.p = NULL;
    m->u.data.len = -1;
    if (r->err || len < -1) return PGW_EPROTO;
    if (len >= 0) {
        m->u.data.p = pgw__rd_take(r, (size_t)len);
        m->u.data.len = len;
    }
    return pgw__rd_finish(r);
}

/* The protocol documents the first field as the newest minor version, but
 * servers (PostgreSQL 9.3 to 18) send the whole version, 3 << 16 | minor,
 * as libpq 18 reads it. Both forms give the minor; any other major is a
 * violation. */
static int negotiate_minor(uint32_t v, int32_t *minor)
{
    uint32_t major = v >> 16;
    if (major != 0 && major != 3) return PGW_EPROTO;
    *minor = (int32_t)(v & 0xffffu);
    return 0;
}

static int parse_negotiate(pgw__rd_t *r, pgw_msg_t *m)
{
    uint32_t version = pgw__rd_u32(r);
    int32_t noptions = (int32_t)pgw__rd_u32(r);
    if (r->err || noptions < 0) return PGW_EPROTO;
    if (negotiate_minor(version, &m->u.negotiate.newest_minor) < 0) return PGW_EPROTO;
    m->u.negotiate.noptions = (uint32_t)noptions;
    m->u.negotiate.options = r->p;
    m->u.negotiate.options_len = (uint32_t)pgw__rd_left(r);
    /* Each option takes at least its NUL, so a lying count ends quickly. */
    for (int32_t i = 0; i < noptions && !r->err; i++)
        (void)pgw__rd_cstr(r);
    return pgw__rd_finish(r);
}

static int parse_notification(pgw__rd_t *r, pgw_msg_t *m)
{
    m->u.notification.pid = (int32_t)pgw__rd_u32(r);
    m->u.notification.channel = pgw__rd_cstr(r);
    m->u.notification.payload = pgw__rd_cstr(r);
    return pgw__rd_finish(r);
}

static int parse_param_desc(pgw__rd_t *r, pgw_msg_t *m)
{
    uint16_t n = pgw__rd_u16(r);
    m->u.param_desc.nparams = n;
    m->u.param_desc.oids = pgw__rd_take(r, (size_t)n * 4);
    return pgw__rd_finish(r);
}

static int parse_param_status(pgw__rd_t *r, pgw_msg_t *m)
{
    m->u.param_status.name = pgw__rd_cstr(r);
    m->u.param_status.value = pgw__rd_cstr(r);
    return pgw__rd_finish(r);
}

static int parse_ready(pgw__rd_t *r, pgw_msg_t *m)
{
    uint8_t st = pgw__rd_u8(r);
    m->u.ready.status = (char)st;
    if (st != 'I' && st != 'T' && st != 'E') return PGW_EPROTO;
    return pgw__rd_finish(r);
}

/* Reads one field descriptor; the caller checks r->err. */
static void read_field_desc(pgw__rd_t *r, pgw_field_desc_t *fd)
{
    fd->name = pgw__rd_cstr(r);
    const uint8_t *p = pgw__rd_take(r, 18);
    if (!p) return;
    fd->table_oid = pgw__get32(p);
    fd->attnum = (int16_t)pgw__get16(p + 4);
    fd->type_oid = pgw__get32(p + 6);
    fd->typlen = (int16_t)pgw__get16(p + 10);
    fd->typmod = (int32_t)pgw__get32(p + 12);
    fd->format = (int16_t)pgw__get16(p + 16);
    if (fd->format != 0 && fd->format != 1) r->err = PGW_EPROTO;
}

static int parse_row_desc(pgw__rd_t *r, pgw_msg_t *m)
{
    uint16_t n = pgw__rd_u16(r);
    m->u.row_desc.nfields = n;
    m->u.row_desc.fields = r->p;
    pgw_field_desc_t fd;
    for (uint16_t i = 0; i < n && !r->err; i++)
        read_field_desc(r, &fd);
    return pgw__rd_finish(r);
}

int pgw_msg_parse(const pgw_frame_t *f, pgw_msg_t *m)
{
    if (!f || !m) return PGW_EINVAL;
    /* A frame from pgw_frame_parse always passes; a hand-made one might
     * not, and every view length below must fit an int32. */
    int bad_frame = f->len > INT32_MAX - 4 || (!f->body && f->len);
    /* DataRow is most of the traffic: it skips the clearing of m. */
    if (f->type == PGW_B_DATA_ROW && !bad_frame && f->len >= 2) {
        m->type = f->type;
        m->body = f->body;
        m->len = f->len;
        m->u.data_row.ncols = pgw__get16(f->body);
        m->u.data_row.fields = f->body + 2;
        return 0;
    }
    memset(m, 0, sizeof *m);
    m->type = f->type;
    m->body = f->body;
    m->len = f->len;
    if (bad_frame) return PGW_EPROTO;
    pgw__rd_t r;
    pgw__rd_init(&r, f->body, f->len);
    switch (f->type) {
    case PGW_B_AUTH:
        return parse_auth(&r, m);
    case PGW_B_BACKEND_KEY:
        return parse_backend_key(&r, m);
    case PGW_B_COMMAND_COMPLETE:
        return parse_command_complete(&r, m);
    case PGW_B_COPY_DATA:
        m->u.data.p = f->body;
        m->u.data.len = (int32_t)f->len;
        return 0;
    case PGW_B_COPY_IN:
    case PGW_B_COPY_OUT:
    case PGW_B_COPY_BOTH:
        return parse_copy_response(&r, m);
    case PGW_B_DATA_ROW:
        return parse_data_row(&r, m);
    case PGW_B_ERROR:
    case PGW_B_NOTICE:
        return parse_error(&r, m);
    case PGW_B_FUNCTION_RESULT:
        return parse_function_result(&r, m);
    case PGW_B_NEGOTIATE_VERSION:
        return parse_negotiate(&r, m);
    case PGW_B_NOTIFICATION:
        return parse_notification(&r, m);
    case PGW_B_PARAM_DESC:
        return parse_param_desc(&r, m);
    case PGW_B_PARAM_STATUS:
        return parse_param_status(&r, m);
    case PGW_B_READY:
        return parse_ready(&r, m);
    case PGW_B_ROW_DESC:
        return parse_row_desc(&r, m);
    case PGW_B_PARSE_COMPLETE:
    case PGW_B_BIND_COMPLETE:
    case PGW_B_CLOSE_COMPLETE:
    case PGW_B_NO_DATA:
    case PGW_B_EMPTY_QUERY:
    case PGW_B_PORTAL_SUSPENDED:
    case PGW_B_COPY_DONE:
        return pgw__rd_finish(&r);
    default:
        return PGW_EPROTO;
    }
}

/* ------------------------------------------------------------------------ */
/* DataRow: the hot path                                                    */
/* ------------------------------------------------------------------------ */

int pgw_datarow_fields(const pgw_msg_t *m, pgw_view_t *out, size_t n)
{
    if (!m || m->type != PGW_B_DATA_ROW || (n && !out)) return PGW_EINVAL;
    uint16_t ncols = m->u.data_row.ncols;
    if (n < ncols) return PGW_EINVAL;
    const uint8_t *p = m->u.data_row.fields;
    const uint8_t *end = m->body + m->len;
    for (uint16_t i = 0; i < ncols; i++) {
        if (end - p < 4) return PGW_EPROTO;
        int32_t len = (int32_t)pgw__get32(p);
        p += 4;
        if (len < 0) {
            if (len != -1) return PGW_EPROTO;
            out[i].p = NULL;
            out[i].len = -1;
            continue;
        }
        if (end - p < len) return PGW_EPROTO;
        out[i].p = p;
        out[i].len = len;
        p += len;
    }
    return p == end ? (int)ncols : PGW_EPROTO;
}

void pgw_row_iter_init(pgw_row_iter_t *it, const pgw_msg_t *m)
{
    if (!it) return;
    if (!m || m->type != PGW_B_DATA_ROW) {
        /* Not a row: an iteration that fails at once. */
        it->p = it->end = NULL;
        it->left = 1;
        return;
    }
    it->p = m->u.data_row.fields;
    it->end = m->body + m->len;
    it->left = m->u.data_row.ncols;
}

int pgw_row_iter_next(pgw_row_iter_t *it, pgw_view_t *out)
{
    if (!it || !out) return PGW_EINVAL;
    if (it->left == 0) return it->p == it->end ? 0 : PGW_EPROTO;
    const uint8_t *p = it->p;
    if (it->end - p < 4) goto bad;
    int32_t len = (int32_t)pgw__get32(p);
    p += 4;
    if (len < 0) {
        if (len != -1) goto bad;
        out->p = NULL;
    } else {
        if (it->end - p < len) goto bad;
        out->p = p;
        p += len;
    }
    out->len = len;
    it->p = p;
    it->left--;
    return 1;
bad:
    /* Sticky: p == end with columns left fails on every later call. */
    it->p = it->end;
    it->left = 1;
    return PGW_EPROTO;
}

/* ------------------------------------------------------------------------ */
/* Walkers over validated messages                                          */
/* ------------------------------------------------------------------------ */

void pgw_rowdesc_iter_init(pgw_rowdesc_iter_t *it, const pgw_msg_t *m)
{
    if (!it) return;
    if (!m || m->type != PGW_B_ROW_DESC) {
        it->p = it->end = NULL;
        it->left = 1;
        return;
    }
    it->p = m->u.row_desc.fields;
    it->end = m->body + m->len;
    it->left = m->u.row_desc.nfields;
}

int pgw_rowdesc_iter_next(pgw_rowdesc_iter_t *it, pgw_field_desc_t *out)
{
    if (!it || !out) return PGW_EINVAL;
    if (it->left == 0) return it->p == it->end ? 0 : PGW_EPROTO;
    pgw__rd_t r = {it->p, it->end, 0};
    read_field_desc(&r, out);
    if (r.err) {
        it->p = it->end;
        it->left = 1;
        return PGW_EPROTO;
    }
    it->p = r.p;
    it->left--;
    return 1;
}

uint32_t pgw_param_desc_oid(const pgw_msg_t *m, size_t i)
{
    if (!m || m->type != PGW_B_PARAM_DESC || i >= m->u.param_desc.nparams) return 0;
    return pgw__get32(m->u.param_desc.oids + 4 * (size_t)i);
}

int16_t pgw_copy_format(const pgw_msg_t *m, size_t i)
{
    if (!m) return -1;
    if (m->type != PGW_B_COPY_IN && m->type != PGW_B_COPY_OUT && m->type != PGW_B_COPY_BOTH)
        return -1;
    if (i >= m->u.copy_response.ncols) return -1;
    return (int16_t)pgw__get16(m->u.copy_response.formats + 2 * (size_t)i);
}

/* ------------------------------------------------------------------------ */
/* ErrorResponse / NoticeResponse fields                                    */
/* ------------------------------------------------------------------------ */

static void error_fields_clear(pgw_error_fields_t *e)
{
#define PGW__CLEAR(code, member, desc) e->member = (pgw_view_t){NULL, -1};
    PGW_ERROR_FIELD_MAP(PGW__CLEAR)
#undef PGW__CLEAR
}

/* Where field code c goes, or NULL to skip it. */
static pgw_view_t *error_field_slot(pgw_error_fields_t *e, uint8_t c)
{
    switch (c) {
#define PGW__SLOT(code, member, desc) \
    case code:                        \
        return &e->member;
        PGW_ERROR_FIELD_MAP(PGW__SLOT)
#undef PGW__SLOT
    default:
        return NULL;
    }
}

int pgw__error_fields_walk(const uint8_t *list, size_t n, pgw_error_fields_t *out)
{
    if (out) error_fields_clear(out);
    pgw__rd_t r;
    pgw__rd_init(&r, list, n);
    uint8_t code;
    while ((code = pgw__rd_u8(&r)) != 0) {
        pgw_str_t s = pgw__rd_cstr(&r);
        pgw_view_t *slot = out && !r.err ? error_field_slot(out, code) : NULL;
        if (slot) {
            slot->p = (const uint8_t *)s.p;
            slot->len = (int32_t)s.len;
        }
    }
    int rc = pgw__rd_finish(&r);
    if (rc < 0 && out) error_fields_clear(out);
    return rc;
}

int pgw_error_fields_parse(const pgw_msg_t *m, pgw_error_fields_t *out)
{
    if (out) error_fields_clear(out);
    if (!m || !out || (m->type != PGW_B_ERROR && m->type != PGW_B_NOTICE)) return PGW_EINVAL;
    return pgw__error_fields_walk(m->u.error.fields, m->u.error.len, out);
}

/* Next NUL-terminated string of list[0..n) at *pos: 1 with *s set, 0 when
 * *pos is at the end (or at an empty string, when stop_at_empty), or
 * PGW_EPROTO when the string has no NUL. */
static int next_cstr(const uint8_t *list, size_t n, size_t *pos, pgw_str_t *s, int stop_at_empty)
{
    if (*pos > n) return PGW_EPROTO;
    if (*pos == n) return stop_at_empty ? PGW_EPROTO : 0;
    pgw__rd_t r;
    pgw__rd_init(&r, list + *pos, n - *pos);
    pgw_str_t v = pgw__rd_cstr(&r);
    if (r.err) return r.err;
    if (v.len == 0 && stop_at_empty) return 0;
    *s = v;
    *pos = (size_t)(r.p - list);
    return 1;
}

int pgw_sasl_mech_next(const pgw_msg_t *m, size_t *pos, pgw_str_t *mech)
{
    if (!m || !pos || !mech) return PGW_EINVAL;
    if (m->type != PGW_B_AUTH || m->u.auth.code != PGW_AUTH_SASL) return PGW_EINVAL;
    return next_cstr(m->u.auth.data, m->u.auth.data_len, pos, mech, 1);
}

int pgw_negotiate_option_next(const pgw_msg_t *m, size_t *pos, pgw_str_t *opt)
{
    if (!m || !pos || !opt) return PGW_EINVAL;
    if (m->type != PGW_B_NEGOTIATE_VERSION) return PGW_EINVAL;
    return next_cstr(m->u.negotiate.options, m->u.negotiate.options_len, pos, opt, 0);
}
