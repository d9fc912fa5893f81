/*
 * Internal helpers of the protocol codec: the per-type framing rules and a
 * bounds-checked reader over a message body. Not installed.
 */
#ifndef PGW_PROTO_INTERNAL_H
#define PGW_PROTO_INTERNAL_H

#include "pgwire/proto.h"
#include "util/internal.h"

/* How the framing layer treats a backend type byte. */
enum pgw__type_class {
    PGW__TC_UNKNOWN = 0, /* not a backend message type */
    PGW__TC_EMPTY,       /* body must be empty */
    PGW__TC_ONE,         /* body must be exactly one byte (ReadyForQuery) */
    PGW__TC_SHORT,       /* declared length at most PGW__SHORT_MAX */
    PGW__TC_LONG         /* bounded only by the decoder's max_size */
};

/* libpq's bound on messages that are never legitimately long: a larger
 * declared length means the stream is out of sync or hostile. */
#define PGW__SHORT_MAX 30000u

/* The class of backend type byte t. */
enum pgw__type_class pgw__type_class(uint8_t t);

/* pgw_enc_query and pgw_enc_parse for SQL whose length came from strlen
 * (sql[len] is its first NUL): the SQL is not scanned for one. */
int pgw__enc_query_cstr(pgw_buf_t *b, const char *sql, size_t len, uint32_t max_msg);
int pgw__enc_parse_cstr(pgw_buf_t *b, const char *name, const char *sql, size_t sql_len,
                        const uint32_t *param_oids, size_t nparams, uint32_t max_msg);

/*
 * A bounds-checked reader over [p, end). The first failure is remembered in
 * err and makes every later read a no-op that returns zeros, so a parser can
 * read a whole layout and check err once.
 */
typedef struct pgw__rd {
    const uint8_t *p, *end;
    int err;
} pgw__rd_t;

static inline void pgw__rd_init(pgw__rd_t *r, const uint8_t *p, size_t n)
{
    r->p = p;
    r->end = n ? p + n : p; /* no arithmetic on a NULL empty body */
    r->err = 0;
}

static inline size_t pgw__rd_left(const pgw__rd_t *r)
{
    return (size_t)(r->end - r->p);
}

/* Claim n bytes: returns where they start, or NULL (and sets err). */
static inline const uint8_t *pgw__rd_take(pgw__rd_t *r, size_t n)
{
    if (r->err || pgw__rd_left(r) < n) {
        r->err = PGW_EPROTO;
        return NULL;
    }
    const uint8_t *at = r->p;
    r->p += n;
    return at;
}

static inline uint8_t pgw__rd_u8(pgw__rd_t *r)
{
    const uint8_t *at = pgw__rd_take(r, 1);
    return at ? at[0] : 0;
}

static inline uint16_t pgw__rd_u16(pgw__rd_t *r)
{
    const uint8_t *at = pgw__rd_take(r, 2);
    return at ? pgw__get16(at) : 0;
}

static inline uint32_t pgw__rd_u32(pgw__rd_t *r)
{
    const uint8_t *at = pgw__rd_take(r, 4);
    return at ? pgw__get32(at) : 0;
}

/* A NUL-terminated string: the view excludes the NUL, which is consumed. */
static inline pgw_str_t pgw__rd_cstr(pgw__rd_t *r)
{
    pgw_str_t s = {NULL, 0};
    if (r->err) return s;
    size_t left = pgw__rd_left(r);
    const uint8_t *nul = left ? memchr(r->p, 0, left) : NULL;
    if (!nul) {
        r->err = PGW_EPROTO;
        return s;
    }
    s.p = (const char *)r->p;
    s.len = (size_t)(nul - r->p);
    r->p = nul + 1;
    return s;
}

/* Succeeds only if every byte was consumed: returns 0 or PGW_EPROTO. */
static inline int pgw__rd_finish(const pgw__rd_t *r)
{
    if (r->err) return r->err;
    return r->p == r->end ? 0 : PGW_EPROTO;
}

/*
 * The one walk over an ErrorResponse/NoticeResponse field list list[0..n):
 * (code byte, NUL-terminated string) pairs ended by a zero code byte, which
 * must be the last byte. pgw_msg_parse checks a message with it (out NULL)
 * and pgw_error_fields_parse fills out with it (every view absent first,
 * and again on failure). Returns 0 or PGW_EPROTO.
 */
int pgw__error_fields_walk(const uint8_t *list, size_t n, pgw_error_fields_t *out);

#endif
