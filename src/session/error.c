/*
 * Server errors and notices as pgw_error_t.
 *
 * The session parses an ErrorResponse or NoticeResponse once, in
 * pgw__dispatch (pgw_error_fields_parse), and every site that needs the
 * error reads those fields: the FATAL check, the retry rules, a notice
 * callback, a failed startup, a request's result. Both conversions below
 * are generated from PGW_ERROR_FIELD_MAP, member for member.
 */
#include "session_internal.h"

static const char *view_cstr(pgw_view_t v)
{
    return v.len < 0 ? NULL : (const char *)v.p;
}

void pgw__error_from_fields(const pgw_error_fields_t *f, pgw_error_t *e)
{
#define PGW__POINT(code, member, desc) e->member = view_cstr(f->member);
    PGW_ERROR_FIELD_MAP(PGW__POINT)
#undef PGW__POINT
}

/* Copy view v with its NUL (it has one on the wire) to *at; the copy, or
 * NULL for an absent field. */
static const char *copy_field(pgw_view_t v, char **at)
{
    if (v.len < 0) return NULL;
    char *s = *at;
    memcpy(s, v.p, (size_t)v.len);
    s[v.len] = '\0';
    *at += (size_t)v.len + 1;
    return s;
}

int pgw__result_set_error(pgw_result_t *r, const pgw_error_fields_t *f)
{
    /* One block of the arena for every field sent; each length is part of
     * one message in memory, so the sum cannot overflow. */
    size_t total = 0;
#define PGW__SIZE(code, member, desc) \
    if (f->member.len >= 0) total += (size_t)f->member.len + 1;
    PGW_ERROR_FIELD_MAP(PGW__SIZE)
#undef PGW__SIZE
    char *at = pgw__result_alloc(r, total);
    if (!at) return PGW_ENOMEM;
#define PGW__COPY(code, member, desc) r->error.member = copy_field(f->member, &at);
    PGW_ERROR_FIELD_MAP(PGW__COPY)
#undef PGW__COPY
    r->has_error = true;
    r->complete = true;
    return 0;
}

PGW_EXTERN const char *pgw_error_field(const pgw_error_t *err, char code)
{
    if (!err) return NULL;
    switch (code) {
#define PGW__FIELD_CASE(c, member, desc) \
    case c:                              \
        return err->member;
        PGW_ERROR_FIELD_MAP(PGW__FIELD_CASE)
#undef PGW__FIELD_CASE
    default:
        return NULL;
    }
}
