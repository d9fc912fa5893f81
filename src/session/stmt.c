/*
 * The per-session table of prepared statements: name -> the server's
 * description of the statement (parameter types, columns) and the result
 * formats to ask in Bind (binary for every type the server sends in binary,
 * pgw__column_format), or a pending entry while no description can be
 * trusted. An array indexed by name and by token (index.c: O(1) per
 * lookup, however many statements a program prepares). Each entry is one
 * allocation.
 *
 * Why tokens (session_internal.h): replies arrive long after their requests
 * were queued, and the table must describe the statement as the next
 * execution queued will find it. So the table changes at queue time
 * (prepare: pending; close: gone; SQL that may replace statements: all
 * pending) and a reply only fills in the entry it was queued against.
 */
#include "session_internal.h"

#include <string.h>

int16_t pgw__column_format(uint32_t oid)
{
    return pgw_type_binary_output(oid) ? PGW_FORMAT_BINARY : PGW_FORMAT_TEXT;
}

static uint32_t name_hash(const char *name)
{
    return pgw__hash_bytes(name, strlen(name));
}

static uint32_t token_hash(uint64_t token)
{
    return (uint32_t)((token * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}

typedef struct key {
    const pgw_session_t *s;
    const char *name;
    uint64_t token;
} stmt_key_t;

static bool name_is(const void *ctx, size_t i)
{
    const stmt_key_t *k = ctx;
    return strcmp(k->s->stmts.list[i].name, k->name) == 0;
}

static bool token_is(const void *ctx, size_t i)
{
    const stmt_key_t *k = ctx;
    return k->s->stmts.list[i].token == k->token;
}

static size_t find_index(const pgw_session_t *s, const char *name, uint32_t h)
{
    stmt_key_t k = {s, name, 0};
    return pgw__idx_find(&s->stmts.by_name, h, name_is, &k);
}

static size_t find_token(const pgw_session_t *s, uint64_t token)
{
    stmt_key_t k = {s, NULL, token};
    return token ? pgw__idx_find(&s->stmts.by_token, token_hash(token), token_is, &k) : SIZE_MAX;
}

const pgw__stmt_t *pgw__stmt_find(pgw_session_t *s, const char *name)
{
    size_t i = find_index(s, name, name_hash(name));
    return i != SIZE_MAX ? &s->stmts.list[i] : NULL;
}

/* The entry at i goes; the last one takes its place. */
void pgw__desc_unref(pgw_session_t *s, pgw__desc_t *d)
{
    if (d && --d->refs == 0) pgw__free(s->alloc, d);
}

pgw__desc_t *pgw__desc_ref(const pgw__stmt_t *st)
{
    if (!st->described) return NULL;
    pgw__desc_t *d = st->block;
    d->refs++;
    return d;
}

void pgw__stmt_block_free(pgw_session_t *s, pgw__stmt_t *st)
{
    if (st->described)
        pgw__desc_unref(s, st->block);
    else
        pgw__free(s->alloc, st->block);
    st->block = NULL;
    st->described = false;
}

static void remove_at(pgw_session_t *s, size_t i)
{
    pgw__stmt_t *st = &s->stmts.list[i];
    pgw__idx_del(&s->stmts.by_name, st->hash, i);
    pgw__idx_del(&s->stmts.by_token, token_hash(st->token), i);
    pgw__stmt_block_free(s, st);
    size_t last = --s->stmts.n;
    if (i == last) return;
    s->stmts.list[i] = s->stmts.list[last];
    pgw__idx_move(&s->stmts.by_name, s->stmts.list[i].hash, last, i);
    pgw__idx_move(&s->stmts.by_token, token_hash(s->stmts.list[i].token), last, i);
}

void pgw__stmt_forget(pgw_session_t *s, const char *name)
{
    if (!s->stmts.n) return; /* an unnamed query's usual case: nothing to hash */
    size_t i = find_index(s, name, name_hash(name));
    if (i != SIZE_MAX) remove_at(s, i);
}

/* The entry's description can no longer be trusted; replies queued before
 * now are dropped. Its block keeps the name. */
static void make_unsure(pgw_session_t *s, size_t i)
{
    pgw__stmt_t *st = &s->stmts.list[i];
    pgw__idx_del(&s->stmts.by_token, token_hash(st->token), i);
    st->known = false;
    st->token = ++s->stmts.seq;
    pgw__idx_put(&s->stmts.by_token, token_hash(st->token), i);
}

void pgw__stmt_unsure_all(pgw_session_t *s)
{
    for (size_t i = 0; i < s->stmts.n; i++)
        make_unsure(s, i);
}

void pgw__stmt_refused(pgw_session_t *s, uint64_t token)
{
    size_t i = find_token(s, token);
    if (i == SIZE_MAX) return;
    if (s->stmts.list[i].vouched)
        make_unsure(s, i);
    else
        remove_at(s, i);
}

void pgw__stmt_free_all(pgw_session_t *s)
{
    while (s->stmts.n)
        remove_at(s, s->stmts.n - 1);
    pgw__free(s->alloc, s->stmts.list);
    s->stmts.list = NULL;
    s->stmts.cap = 0;
    pgw__idx_free(&s->stmts.by_name, s->alloc);
    pgw__idx_free(&s->stmts.by_token, s->alloc);
}

/* A new pending entry for name (not in the table). Returns its token or 0. */
static uint64_t add_pending(pgw_session_t *s, const char *name, uint32_t h, bool vouched,
                            bool may_copy)
{
    if (s->stmts.n == s->stmts.cap) {
        size_t cap = s->stmts.cap ? s->stmts.cap * 2 : 8;
        pgw__stmt_t *a = pgw__realloc(s->alloc, s->stmts.list, cap * sizeof *a);
        if (!a) return 0;
        s->stmts.list = a;
        s->stmts.cap = cap;
    }
    if (pgw__idx_reserve(&s->stmts.by_name, s->alloc, s->stmts.n + 1) < 0 ||
        pgw__idx_reserve(&s->stmts.by_token, s->alloc, s->stmts.n + 1) < 0)
        return 0;
    char *copy = pgw__strdup(s->alloc, name);
    if (!copy) return 0;
    size_t i = s->stmts.n++;
    pgw__stmt_t *st = &s->stmts.list[i];
    memset(st, 0, sizeof *st);
    st->block = copy;
    st->name = copy;
    st->hash = h;
    st->token = ++s->stmts.seq;
    st->vouched = vouched;
    st->may_copy = may_copy;
    pgw__idx_put(&s->stmts.by_name, h, i);
    pgw__idx_put(&s->stmts.by_token, token_hash(st->token), i);
    return st->token;
}

uint64_t pgw__stmt_replaced(pgw_session_t *s, const char *name, bool may_copy)
{
    pgw__stmt_forget(s, name);
    return add_pending(s, name, name_hash(name), true, may_copy);
}

void pgw__stmt_unprepared(pgw_session_t *s, uint64_t token)
{
    size_t i = find_token(s, token);
    if (i != SIZE_MAX) remove_at(s, i);
}

/* A name the session never saw prepared was prepared as SQL (PREPARE, which
 * takes no COPY) or by another client of a pooled server connection: it is
 * not taken for a COPY. */
uint64_t pgw__stmt_token(pgw_session_t *s, const char *name)
{
    uint32_t h = name_hash(name);
    size_t i = find_index(s, name, h);
    return i != SIZE_MAX ? s->stmts.list[i].token : add_pending(s, name, h, false, false);
}

/* One block: its pgw__desc_t | fields | param oids | formats | column names |
 * statement name. */
int pgw__stmt_fill(pgw_session_t *s, pgw__stmt_t *st, const pgw_result_t *d, const uint32_t *oids,
                   uint16_t noids)
{
    const char *name = st->name;
    size_t names = 0;
    for (uint16_t i = 0; i < d->ncols; i++)
        names += d->fields[i].name.len + 1;
    size_t nlen = strlen(name) + 1;
    size_t size = sizeof(pgw__desc_t) + sizeof(uint32_t) * noids +
                  sizeof(pgw_field_desc_t) * d->ncols + sizeof(int16_t) * d->ncols + nlen + names;
    uint8_t *blk = pgw__malloc(s->alloc, size);
    if (!blk) return PGW_ENOMEM;
    pgw__stmt_t n = *st;
    n.fields = (pgw_field_desc_t *)(blk + sizeof(pgw__desc_t));
    n.param_oids = (uint32_t *)((uint8_t *)n.fields + sizeof(pgw_field_desc_t) * d->ncols);
    n.formats = (int16_t *)((uint8_t *)n.param_oids + sizeof(uint32_t) * noids);
    char *str = (char *)(n.formats + d->ncols);
    n.nparams = noids;
    n.ncols = d->ncols;
    if (noids) memcpy(n.param_oids, oids, sizeof(uint32_t) * noids);
    for (uint16_t i = 0; i < d->ncols; i++) {
        n.fields[i] = d->fields[i];
        memcpy(str, d->fields[i].name.p, d->fields[i].name.len);
        str[d->fields[i].name.len] = '\0';
        n.fields[i].name.p = str;
        str += d->fields[i].name.len + 1;
        n.formats[i] = pgw__column_format(d->fields[i].type_oid);
        n.fields[i].format = n.formats[i];
    }
    memcpy(str, name, nlen);
    pgw__stmt_block_free(s, st);
    *(pgw__desc_t *)blk = (pgw__desc_t){1, n.fields, n.formats, n.ncols};
    n.described = true;
    n.block = blk;
    n.block_size = size;
    n.name = str;
    n.known = true;
    n.vouched = true; /* it ran: it exists */
    *st = n;
    return 0;
}

void pgw__stmt_store(pgw_session_t *s, uint64_t token, const pgw_result_t *d)
{
    size_t at = find_token(s, token);
    if (at == SIZE_MAX) return; /* closed or replaced since it was queued */
    pgw__stmt_fill(s, &s->stmts.list[at], d, d->param_oids, d->nparams);
}

/* ------------------------------------------------------------ SQL scan */

/* The bytes that make up a word: a-z, A-Z, 0-9, _, $ and every byte from
 * 0x80 (ASCII rules, whatever the process locale); 2 for those a keyword
 * below begins with (c, d, p, s in either case), 1 for the others, 0 for
 * the rest. */
static const unsigned char word_class[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
    0, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1,
    0, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

static unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

/* Whether the word at w (room bytes left in the SQL) is kw, of n bytes:
 * the first byte was matched by the caller, the rest in any case, and the
 * word ends there. */
static bool keyword_at(const unsigned char *w, size_t room, const char *kw, size_t n)
{
    if (room < n || (room > n && word_class[w[n]])) return false;
    for (size_t i = 1; i < n; i++)
        if (lower(w[i]) != (unsigned char)kw[i]) return false;
    return true;
}

/* The keyword that begins at sql[at], if a word begins there. */
static unsigned word_at(const unsigned char *sql, size_t at, size_t len)
{
    if (at && word_class[sql[at - 1]]) return 0; /* inside a word */
    const unsigned char *w = sql + at;
    size_t room = len - at;
    switch (w[0] | 0x20) {
    case 'c':
        return keyword_at(w, room, "copy", 4) ? PGW__SQL_COPY : 0;
    case 'd':
        return keyword_at(w, room, "discard", 7) || keyword_at(w, room, "deallocate", 10)
                   ? PGW__SQL_REPLACES
                   : 0;
    case 'p':
        return keyword_at(w, room, "prepare", 7) ? PGW__SQL_REPLACES : 0;
    case 's':
        return keyword_at(w, room, "start_replication", 17) ? PGW__SQL_COPY : 0;
    default:
        return 0;
    }
}

/* 1 when the statement that begins at sql[at] (after white space) starts
 * with COPY or START_REPLICATION, 0 when not, -1 when a comment comes
 * first. */
static int starts_copy(const unsigned char *sql, size_t at, size_t len)
{
    while (at < len && (sql[at] == ' ' || (sql[at] >= '\t' && sql[at] <= '\r')))
        at++;
    if (len - at >= 2 &&
        ((sql[at] == '-' && sql[at + 1] == '-') || (sql[at] == '/' && sql[at + 1] == '*')))
        return -1;
    return at < len && (word_at(sql, at, len) & PGW__SQL_COPY);
}

bool pgw__sql_may_copy(const char *sql, size_t len, bool one)
{
    const unsigned char *p = (const unsigned char *)sql;
    for (size_t at = 0;;) {
        int c = starts_copy(p, at, len);
        if (c < 0) return pgw__sql_words(sql, len) & PGW__SQL_COPY;
        if (c || one) return c;
        const unsigned char *semi = memchr(p + at, ';', len - at);
        if (!semi) return false;
        at = (size_t)(semi - p) + 1;
    }
}

/* A cheap over-approximation: a keyword inside a string literal or comment
 * also counts, which only costs a Describe on the next executions, or a
 * round trip before what is queued after a statement mentioning COPY.
 * With SSE2, the bytes that may begin a keyword are found sixteen at a
 * time, else the words are walked one byte at a time. */
#if defined(__SSE2__)
#include <emmintrin.h>

enum { CHUNK = 16 };

/* Bit i: sql[i] may begin a keyword. Every keyword begins with co, de,
 * di, pr or st, which OR 0x20 folds to lower case (and no other byte onto
 * those letters); whether a word begins there is left to word_at. sql has
 * CHUNK + 1 bytes to read (the byte after the chunk: a keyword's second
 * letter). */
static unsigned chunk_starts(const unsigned char *sql)
{
    const __m128i fold = _mm_set1_epi8(0x20);
    __m128i l = _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)sql), fold);
    __m128i n = _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(sql + 1)), fold);
#define PGW__IS(v, c) _mm_cmpeq_epi8(v, _mm_set1_epi8(c))
    __m128i co = _mm_and_si128(PGW__IS(l, 'c'), PGW__IS(n, 'o'));
    __m128i de_di = _mm_and_si128(PGW__IS(l, 'd'), _mm_or_si128(PGW__IS(n, 'e'), PGW__IS(n, 'i')));
    __m128i pr = _mm_and_si128(PGW__IS(l, 'p'), PGW__IS(n, 'r'));
    __m128i st = _mm_and_si128(PGW__IS(l, 's'), PGW__IS(n, 't'));
#undef PGW__IS
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(co, de_di), _mm_or_si128(pr, st)));
}

static unsigned lowest_bit(unsigned m)
{
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctz(m);
#else
    unsigned n = 0;
    while (!(m & 1)) {
        m >>= 1;
        n++;
    }
    return n;
#endif
}

unsigned pgw__sql_words(const char *sql, size_t len)
{
    const unsigned char *p = (const unsigned char *)sql;
    unsigned words = 0;
    for (size_t at = 0; at < len; at += CHUNK) {
        const unsigned char *chunk = p + at;
        unsigned char last[CHUNK + 1];
        if (len - at <= CHUNK) { /* to the end: zero bytes after it, no letter */
            memset(last, 0, sizeof last);
            memcpy(last, chunk, len - at);
            chunk = last;
        }
        /* The zero bytes past the end begin no keyword: every bit is a
         * byte of sql. */
        for (unsigned m = chunk_starts(chunk); m; m &= m - 1)
            words |= word_at(p, at + (size_t)lowest_bit(m), len);
    }
    return words;
}
#else
unsigned pgw__sql_words(const char *sql, size_t len)
{
    const unsigned char *p = (const unsigned char *)sql;
    unsigned words = 0;
    for (size_t i = 0; i < len;) {
        if (!word_class[p[i]]) {
            i++;
            continue;
        }
        if (word_class[p[i]] == 2) words |= word_at(p, i, len);
        while (i < len && word_class[p[i]])
            i++;
    }
    return words;
}
#endif
