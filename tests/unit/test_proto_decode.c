/*
 * Unit tests of the backend-message decoder: framing rules, every backend
 * message type parsed from hand-built bytes (valid and malformed), the
 * walkers, the sticky streaming decoder, and the hostile-server framing cases
 * of RELIABILITY.md case 2 at the codec level.
 *
 * Every body is parsed from an exact-size heap copy, so a read one byte past
 * the message is caught by ASan/valgrind.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pgwire/proto.h"
#include "pgwire/result.h"

/* Body literals: sizeof - 1 drops the literal's own NUL, so every NUL the
 * protocol needs is written explicitly as \0 (or \000 before a digit). */
#define LIT(s) (const uint8_t *)(s), (sizeof(s) - 1)

/* Exact-size heap copies, freed after each test. */
static void *copies[256];
static size_t ncopies;

static const uint8_t *heap_copy(const void *p, size_t n)
{
    assert_true(ncopies < 256);
    uint8_t *c = malloc(n ? n : 1);
    assert_non_null(c);
    if (n) memcpy(c, p, n);
    copies[ncopies++] = c;
    return c;
}

static int free_copies(void **state)
{
    (void)state;
    for (size_t i = 0; i < ncopies; i++)
        free(copies[i]);
    ncopies = 0;
    return 0;
}

/* Parses body (len bytes) as a message of the given type, as if framed. */
static int parse_body(uint8_t type, const uint8_t *body, size_t len, pgw_msg_t *m)
{
    pgw_frame_t f = {type, heap_copy(body, len), (uint32_t)len, 5 + len};
    return pgw_msg_parse(&f, m);
}

/* Builds a whole frame (type, length, body) as an exact-size heap copy. */
static const uint8_t *frame_bytes(uint8_t type, uint32_t declared, const uint8_t *body, size_t len,
                                  size_t *n)
{
    uint8_t tmp[512];
    assert_true(len + 5 <= sizeof tmp);
    tmp[0] = type;
    tmp[1] = (uint8_t)(declared >> 24);
    tmp[2] = (uint8_t)(declared >> 16);
    tmp[3] = (uint8_t)(declared >> 8);
    tmp[4] = (uint8_t)declared;
    if (len) memcpy(tmp + 5, body, len);
    *n = 5 + len;
    return heap_copy(tmp, *n);
}

static int frame_header(uint8_t type, uint32_t declared, uint32_t max_size, pgw_frame_t *f)
{
    size_t n;
    const uint8_t *b = frame_bytes(type, declared, NULL, 0, &n);
    return pgw_frame_parse(b, n, max_size, f);
}

static void assert_str(pgw_str_t s, const char *want)
{
    assert_int_equal(s.len, strlen(want));
    assert_memory_equal(s.p, want, s.len);
}

static void assert_view(pgw_view_t v, const char *want)
{
    assert_non_null(v.p);
    assert_int_equal(v.len, (int32_t)strlen(want));
    assert_memory_equal(v.p, want, (size_t)v.len);
}

/* ------------------------------------------------------------------------ */
/* Framing                                                                  */
/* ------------------------------------------------------------------------ */

static void test_frame_complete(void **state)
{
    (void)state;
    size_t n;
    const uint8_t *b = frame_bytes('C', 13, LIT("SELECT 1\0"), &n);
    pgw_frame_t f;
    assert_int_equal(pgw_frame_parse(b, n, 0, &f), 0);
    assert_int_equal(f.type, 'C');
    assert_ptr_equal(f.body, b + 5);
    assert_int_equal(f.len, 9);
    assert_int_equal(f.size, 14);
}

static void test_frame_byte_by_byte(void **state)
{
    (void)state;
    size_t n;
    const uint8_t *b = frame_bytes('C', 13, LIT("SELECT 1\0"), &n);
    pgw_frame_t f;
    for (size_t k = 0; k < n; k++) {
        const uint8_t *prefix = heap_copy(b, k);
        assert_int_equal(pgw_frame_parse(prefix, k, 0, &f), PGW_EAGAIN);
        assert_int_equal(f.size, k < 5 ? 5 : 14);
    }
    assert_int_equal(pgw_frame_parse(b, n, 0, &f), 0);
}

static void test_frame_length_below_4(void **state)
{
    (void)state;
    pgw_frame_t f;
    const uint32_t lens[] = {0, 1, 3, 0x80000000u, 0xFFFFFFFFu};
    const uint8_t types[] = {'D', 'C', 'Z', 'E', '1'};
    for (size_t t = 0; t < sizeof types; t++)
        for (size_t i = 0; i < 5; i++) {
            assert_int_equal(frame_header(types[t], lens[i], 0, &f), PGW_EPROTO);
            assert_int_equal(f.type, types[t]);
        }
}

static void test_frame_fixed_sizes(void **state)
{
    (void)state;
    pgw_frame_t f;
    const char empty[] = "123nIsc";
    for (const char *t = empty; *t; t++) {
        assert_int_equal(frame_header((uint8_t)*t, 4, 0, &f), 0);
        assert_int_equal(f.size, 5);
        assert_int_equal(frame_header((uint8_t)*t, 5, 0, &f), PGW_EPROTO);
        assert_int_equal(frame_header((uint8_t)*t, 40000, 0, &f), PGW_EPROTO);
    }
    assert_int_equal(frame_header('Z', 5, 0, &f), PGW_EAGAIN);
    assert_int_equal(f.size, 6);
    assert_int_equal(frame_header('Z', 4, 0, &f), PGW_EPROTO);
    assert_int_equal(frame_header('Z', 6, 0, &f), PGW_EPROTO);
}

/* Hostile: a length above 30000 for the always-short types is refused at the
 * header, before the caller would wait for or buffer the body. */
static void test_frame_short_cap(void **state)
{
    (void)state;
    pgw_frame_t f;
    const char shorts[] = "RKCGHWvtS";
    for (const char *t = shorts; *t; t++) {
        assert_int_equal(frame_header((uint8_t)*t, 30000, 0, &f), PGW_EAGAIN);
        assert_int_equal(f.size, 30001);
        assert_int_equal(frame_header((uint8_t)*t, 30001, 0, &f), PGW_EPROTO);
        assert_int_equal(frame_header((uint8_t)*t, 0x7FFFFFFF, 0, &f), PGW_EPROTO);
    }
    const char fixed[] = "Z12";
    for (const char *t = fixed; *t; t++)
        assert_int_equal(frame_header((uint8_t)*t, 30001, 0, &f), PGW_EPROTO);
    const char longs[] = "TDdVENA";
    for (const char *t = longs; *t; t++) {
        assert_int_equal(frame_header((uint8_t)*t, 30001, 0, &f), PGW_EAGAIN);
        assert_int_equal(f.size, 30002);
    }
}

/* Hostile: 'D' declaring 0x7FFFFFFF is refused under a small max_size before
 * anything is buffered: the codec never allocates, and need is never set to
 * the lying size. */
static void test_frame_huge_datarow(void **state)
{
    (void)state;
    pgw_frame_t f;
    assert_int_equal(frame_header('D', 0x7FFFFFFF, 1u << 20, &f), PGW_ETOOBIG);
    assert_int_equal(f.type, 'D');
    /* The default maximum (1 GiB - 1) is below 0x7FFFFFFF too. */
    assert_int_equal(frame_header('D', 0x7FFFFFFF, 0, &f), PGW_ETOOBIG);
    /* Exactly at the limit is accepted. */
    assert_int_equal(frame_header('D', 1000, 1000, &f), PGW_EAGAIN);
    assert_int_equal(f.size, 1001);
    assert_int_equal(frame_header('D', 1001, 1000, &f), PGW_ETOOBIG);
    /* With no practical limit the need is reported exactly. */
    assert_int_equal(frame_header('D', 0x7FFFFFFF, UINT32_MAX, &f), PGW_EAGAIN);
    assert_int_equal(f.size, (size_t)0x7FFFFFFF + 1);

    pgw_decoder_t d;
    pgw_decoder_init(&d, 1u << 20);
    size_t n;
    const uint8_t *b = frame_bytes('D', 0x7FFFFFFF, LIT("\000\001"), &n);
    pgw_msg_t m;
    size_t need = 0;
    assert_int_equal(pgw_decoder_next(&d, b, n, &m, &need), PGW_ETOOBIG);
    assert_int_equal(need, 0);
    assert_int_equal(d.err, PGW_ETOOBIG);
}

static void test_frame_unknown_type(void **state)
{
    (void)state;
    pgw_frame_t f;
    const uint8_t bad[] = {'x', 0, 'Q', 'P', 0xFF, 'B'};
    for (size_t i = 0; i < sizeof bad; i++) {
        const uint8_t *b = heap_copy(&bad[i], 1);
        assert_int_equal(pgw_frame_parse(b, 1, 0, &f), PGW_EPROTO);
        assert_int_equal(f.type, 0);
    }
    pgw_msg_t m;
    assert_int_equal(parse_body('x', LIT(""), &m), PGW_EPROTO);
    assert_int_equal(parse_body('Q', LIT("x\0"), &m), PGW_EPROTO);
}

/* ------------------------------------------------------------------------ */
/* Authentication                                                           */
/* ------------------------------------------------------------------------ */

static void test_auth_simple(void **state)
{
    (void)state;
    pgw_msg_t m;
    assert_int_equal(parse_body('R', LIT("\0\0\0\0"), &m), 0);
    assert_int_equal(m.type, 'R');
    assert_int_equal(m.u.auth.code, PGW_AUTH_OK);
    assert_int_equal(m.u.auth.data_len, 0);
    assert_int_equal(parse_body('R', LIT("\0\0\0\3"), &m), 0);
    assert_int_equal(m.u.auth.code, PGW_AUTH_CLEARTEXT);
    assert_int_equal(parse_body('R', LIT("\0\0\0\5\1\2\3\4"), &m), 0);
    assert_int_equal(m.u.auth.code, PGW_AUTH_MD5);
    assert_int_equal(m.u.auth.data_len, 4);
    assert_memory_equal(m.u.auth.data, "\1\2\3\4", 4);
    assert_int_equal(parse_body('R', LIT("\0\0\0\7"), &m), 0);
    assert_int_equal(m.u.auth.code, PGW_AUTH_GSS);
    assert_int_equal(parse_body('R', LIT("\0\0\0\10tok"), &m), 0);
    assert_int_equal(m.u.auth.code, PGW_AUTH_GSS_CONTINUE);
    assert_int_equal(m.u.auth.data_len, 3);
}

static void test_auth_malformed(void **state)
{
    (void)state;
    pgw_msg_t m;
    assert_int_equal(parse_body('R', LIT(""), &m), PGW_EPROTO);
    assert_int_equal(parse_body('R', LIT("\0\0\0"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('R', LIT("\0\0\0\0x"), &m), PGW_EPROTO);      /* trailing */
    assert_int_equal(parse_body('R', LIT("\0\0\0\3\0"), &m), PGW_EPROTO);     /* trailing */
    assert_int_equal(parse_body('R', LIT("\0\0\0\5\1\2\3"), &m), PGW_EPROTO); /* short salt */
    assert_int_equal(parse_body('R', LIT("\0\0\0\5\1\2\3\4\5"), &m), PGW_EPROTO);
}

static void test_auth_sasl(void **state)
{
    (void)state;
    pgw_msg_t m;
    assert_int_equal(parse_body('R', LIT("\0\0\0\12SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0"), &m), 0);
    assert_int_equal(m.u.auth.code, PGW_AUTH_SASL);
    size_t pos = 0;
    pgw_str_t mech;
    assert_int_equal(pgw_sasl_mech_next(&m, &pos, &mech), 1);
    assert_str(mech, "SCRAM-SHA-256-PLUS");
    assert_int_equal(pgw_sasl_mech_next(&m, &pos, &mech), 1);
    assert_str(mech, "SCRAM-SHA-256");
    assert_int_equal(pgw_sasl_mech_next(&m, &pos, &mech), 0);
    assert_int_equal(pgw_sasl_mech_next(&m, &pos, &mech), 0);

    /* An empty list is well formed; it simply offers nothing. */
    assert_int_equal(parse_body('R', LIT("\0\0\0\12\0"), &m), 0);
    pos = 0;
    assert_int_equal(pgw_sasl_mech_next(&m, &pos, &mech), 0);

    /* No final terminator, no NUL at all, trailing bytes, empty list. */
    assert_int_equal(parse_body('R', LIT("\0\0\0\12SCRAM-SHA-256\0"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('R', LIT("\0\0\0\12SCRAM-SHA-256"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('R', LIT("\0\0\0\12SCRAM-SHA-256\0\0x"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('R', LIT("\0\0\0\12"), &m), PGW_EPROTO);

    /* The walker refuses a message that is not a SASL request. */
    assert_int_equal(parse_body('R', LIT("\0\0\0\0"), &m), 0);
    pos = 0;
    assert_int_equal(pgw_sasl_mech_next(&m, &pos, &mech), PGW_EINVAL);
}

static void test_auth_sasl_continue_final(void **state)
{
    (void)state;
    pgw_msg_t m;
    assert_int_equal(parse_body('R', LIT("\0\0\0\13r=abc,s=c2FsdA==,i=4096"), &m), 0);
    assert_int_equal(m.u.auth.code, PGW_AUTH_SASL_CONTINUE);
    assert_int_equal(m.u.auth.data_len, 23);
    assert_memory_equal(m.u.auth.data, "r=abc,s=c2FsdA==,i=4096", 23);
    assert_int_equal(parse_body('R', LIT("\0\0\0\14v=c2ln"), &m), 0);
    assert_int_equal(m.u.auth.code, PGW_AUTH_SASL_FINAL);
    assert_int_equal(m.u.auth.data_len, 6);
    assert_memory_equal(m.u.auth.data, "v=c2ln", 6);
    /* Empty continue data is passed through: the SCRAM layer judges it. */
    assert_int_equal(parse_body('R', LIT("\0\0\0\13"), &m), 0);
    assert_int_equal(m.u.auth.data_len, 0);
}

/* ------------------------------------------------------------------------ */
/* BackendKeyData, CommandComplete                                          */
/* ------------------------------------------------------------------------ */

static void test_backend_key(void **state)
{
    (void)state;
    pgw_msg_t m;
    assert_int_equal(parse_body('K', LIT("\0\0\060\071\xde\xad\xbe\xef"), &m), 0);
    assert_int_equal(m.u.backend_key.pid, 12345);
    assert_int_equal(m.u.backend_key.key_len, 4);
    assert_memory_equal(m.u.backend_key.key, "\xde\xad\xbe\xef", 4);

    uint8_t body[4 + 257];
    memset(body, 0xAB, sizeof body);
    body[0] = 0x7F;
    body[1] = body[2] = body[3] = 0xFF;
    assert_int_equal(parse_body('K', body, 4 + 32, &m), 0); /* 3.2 key */
    assert_int_equal(m.u.backend_key.pid, INT32_MAX);
    assert_int_equal(m.u.backend_key.key_len, 32);
    assert_int_equal(parse_body('K', body, 4 + 256, &m), 0);
    assert_int_equal(m.u.backend_key.key_len, 256);
    assert_int_equal(parse_body('K', body, 4 + 257, &m), PGW_EPROTO);
    assert_int_equal(parse_body('K', body, 4 + 3, &m), PGW_EPROTO);
    assert_int_equal(parse_body('K', body, 4, &m), PGW_EPROTO);
    assert_int_equal(parse_body('K', body, 2, &m), PGW_EPROTO);
}

static void check_tag(const char *tag, int has_rows, uint64_t rows)
{
    uint8_t body[128];
    size_t n = strlen(tag) + 1;
    memcpy(body, tag, n);
    pgw_msg_t m;
    assert_int_equal(parse_body('C', body, n, &m), 0);
    assert_str(m.u.command_complete.tag, tag);
    assert_int_equal(m.u.command_complete.has_rows, has_rows);
    assert_int_equal(m.u.command_complete.rows, rows);
}

static void test_command_complete(void **state)
{
    (void)state;
    check_tag("INSERT 0 5", 1, 5);
    check_tag("INSERT 16384 1", 1, 1);
    check_tag("UPDATE 42", 1, 42);
    check_tag("DELETE 0", 1, 0);
    check_tag("SELECT 1", 1, 1);
    check_tag("SELECT 18446744073709551615", 1, UINT64_MAX);
    check_tag("MOVE 3", 1, 3);
    check_tag("FETCH 100", 1, 100);
    check_tag("COPY 1000000", 1, 1000000);
    check_tag("MERGE 7", 1, 7);
    check_tag("CREATE TABLE", 0, 0);
    check_tag("BEGIN", 0, 0);
    check_tag("", 0, 0);
    check_tag("INSERT 5", 0, 0); /* INSERT needs an oid */
    check_tag("INSERT x 5", 0, 0);
    check_tag("SELECT", 0, 0);
    check_tag("SELECT ", 0, 0);
    check_tag("SELECT 1x", 0, 0);
    check_tag("SELECT 18446744073709551616", 0, 0); /* overflows uint64 */
    check_tag("CREATE TABLE 5", 0, 0);
    /* The command word whole, no more, no less, before the last space. */
    check_tag("SELEC 3", 0, 0);
    check_tag("SELECTS 3", 0, 0);
    check_tag("MOV 3", 0, 0);
    check_tag(" 3", 0, 0);
    check_tag("3", 0, 0);
    check_tag("SELECT 1 2", 0, 0);
    check_tag("UPDATE  4", 0, 0);
    check_tag("INSERT 0 1 2", 0, 0);

    pgw_msg_t m;
    assert_int_equal(parse_body('C', LIT("SELECT 1"), &m), PGW_EPROTO);     /* no NUL */
    assert_int_equal(parse_body('C', LIT("SELECT 1\0x"), &m), PGW_EPROTO);  /* trailing */
    assert_int_equal(parse_body('C', LIT("SELECT 1\0\0"), &m), PGW_EPROTO); /* trailing */
    assert_int_equal(parse_body('C', LIT(""), &m), PGW_EPROTO);
}

/* ------------------------------------------------------------------------ */
/* COPY responses and data                                                  */
/* ------------------------------------------------------------------------ */

static void test_copy_responses(void **state)
{
    (void)state;
    pgw_msg_t m;
    const char types[] = "GHW";
    for (const char *t = types; *t; t++) {
        assert_int_equal(parse_body((uint8_t)*t, LIT("\1\0\3\0\1\0\1\0\0"), &m), 0);
        assert_int_equal(m.type, *t);
        assert_int_equal(m.u.copy_response.format, 1);
        assert_int_equal(m.u.copy_response.ncols, 3);
        assert_int_equal(pgw_copy_format(&m, 0), 1);
        assert_int_equal(pgw_copy_format(&m, 1), 1);
        assert_int_equal(pgw_copy_format(&m, 2), 0);
        assert_int_equal(pgw_copy_format(&m, 3), -1);

        assert_int_equal(parse_body((uint8_t)*t, LIT("\0\0\0"), &m), 0);
        assert_int_equal(m.u.copy_response.ncols, 0);
        /* Count overruns, trailing byte, bad formats, short header. */
        assert_int_equal(parse_body((uint8_t)*t, LIT("\0\0\2\0\0"), &m), PGW_EPROTO);
        assert_int_equal(parse_body((uint8_t)*t, LIT("\0\0\1\0\0\0"), &m), PGW_EPROTO);
        assert_int_equal(parse_body((uint8_t)*t, LIT("\2\0\0"), &m), PGW_EPROTO);
        assert_int_equal(parse_body((uint8_t)*t, LIT("\0\0\1\0\2"), &m), PGW_EPROTO);
        assert_int_equal(parse_body((uint8_t)*t, LIT("\0\0"), &m), PGW_EPROTO);
    }
}

static void test_copy_data_done(void **state)
{
    (void)state;
    pgw_msg_t m;
    assert_int_equal(parse_body('d', LIT("1\tone\n"), &m), 0);
    assert_view(m.u.data, "1\tone\n");
    assert_int_equal(parse_body('d', LIT(""), &m), 0);
    assert_int_equal(m.u.data.len, 0);
    assert_int_equal(parse_body('c', LIT(""), &m), 0);
    assert_int_equal(m.type, 'c');
    assert_int_equal(parse_body('c', LIT("x"), &m), PGW_EPROTO);
}

/* ------------------------------------------------------------------------ */
/* DataRow                                                                  */
/* ------------------------------------------------------------------------ */

static void test_datarow_valid(void **state)
{
    (void)state;
    pgw_msg_t m;
    /* 4 columns: "42", NULL, "" (empty, not NULL), "hello". */
    assert_int_equal(parse_body('D',
                                LIT("\0\4"
                                    "\0\0\0\00242"
                                    "\xff\xff\xff\xff"
                                    "\0\0\0\0"
                                    "\0\0\0\5hello"),
                                &m),
                     0);
    assert_int_equal(m.u.data_row.ncols, 4);
    pgw_view_t v[8];
    assert_int_equal(pgw_datarow_fields(&m, v, 8), 4);
    assert_view(v[0], "42");
    assert_null(v[1].p);
    assert_int_equal(v[1].len, -1);
    assert_non_null(v[2].p);
    assert_int_equal(v[2].len, 0);
    assert_view(v[3], "hello");
    assert_int_equal(pgw_datarow_fields(&m, v, 3), PGW_EINVAL);

    pgw_row_iter_t it;
    pgw_row_iter_init(&it, &m);
    pgw_view_t f;
    assert_int_equal(pgw_row_iter_next(&it, &f), 1);
    assert_view(f, "42");
    assert_int_equal(pgw_row_iter_next(&it, &f), 1);
    assert_int_equal(f.len, -1);
    assert_null(f.p);
    assert_int_equal(pgw_row_iter_next(&it, &f), 1);
    assert_int_equal(f.len, 0);
    assert_int_equal(pgw_row_iter_next(&it, &f), 1);
    assert_view(f, "hello");
    assert_int_equal(pgw_row_iter_next(&it, &f), 0);
    assert_int_equal(pgw_row_iter_next(&it, &f), 0);

    /* Zero columns. */
    assert_int_equal(parse_body('D', LIT("\0\0"), &m), 0);
    assert_int_equal(pgw_datarow_fields(&m, NULL, 0), 0);
    pgw_row_iter_init(&it, &m);
    assert_int_equal(pgw_row_iter_next(&it, &f), 0);
}

/* Runs both walkers over a DataRow body that must fail with PGW_EPROTO,
 * after yielding `good` fields through the iterator. */
static void check_bad_row(const uint8_t *body, size_t len, int good)
{
    pgw_msg_t m;
    assert_int_equal(parse_body('D', body, len, &m), 0); /* only ncols is read */
    pgw_view_t v[8];
    assert_int_equal(pgw_datarow_fields(&m, v, 8), PGW_EPROTO);
    pgw_row_iter_t it;
    pgw_row_iter_init(&it, &m);
    pgw_view_t f;
    for (int i = 0; i < good; i++)
        assert_int_equal(pgw_row_iter_next(&it, &f), 1);
    assert_int_equal(pgw_row_iter_next(&it, &f), PGW_EPROTO);
    assert_int_equal(pgw_row_iter_next(&it, &f), PGW_EPROTO); /* sticky */
}

static void test_datarow_malformed(void **state)
{
    (void)state;
    /* Hostile: field length -2, and INT32_MIN. */
    check_bad_row(LIT("\0\1\xff\xff\xff\xfe"), 0);
    check_bad_row(LIT("\0\2\0\0\0\1a\x80\0\0\0"), 1);
    /* Hostile: a field longer than the bytes remaining (by one, and huge). */
    check_bad_row(LIT("\0\1\0\0\0\6hello"), 0);
    check_bad_row(LIT("\0\1\x7f\xff\xff\xffhello"), 0);
    /* More columns declared than present; a truncated length word. */
    check_bad_row(LIT("\0\2\0\0\0\1a"), 1);
    check_bad_row(LIT("\0\2\0\0\0\1a\0\0"), 1);
    /* Trailing garbage after the last field. */
    check_bad_row(LIT("\0\1\0\0\0\1ax"), 1);
    check_bad_row(LIT("\0\0x"), 0);

    pgw_msg_t m;
    assert_int_equal(parse_body('D', LIT("\0"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('D', LIT(""), &m), PGW_EPROTO);

    /* The walkers refuse a message that is not a DataRow. */
    assert_int_equal(parse_body('C', LIT("SELECT 1\0"), &m), 0);
    pgw_view_t v;
    assert_int_equal(pgw_datarow_fields(&m, &v, 1), PGW_EINVAL);
    pgw_row_iter_t it;
    pgw_row_iter_init(&it, &m);
    assert_int_equal(pgw_row_iter_next(&it, &v), PGW_EPROTO);
}

/* ------------------------------------------------------------------------ */
/* ErrorResponse / NoticeResponse                                           */
/* ------------------------------------------------------------------------ */

static void test_error_fields(void **state)
{
    (void)state;
    pgw_msg_t m;
    const char types[] = "EN";
    for (const char *t = types; *t; t++) {
        assert_int_equal(parse_body((uint8_t)*t,
                                    LIT("SERROR\0VERROR\0C23505\0Mduplicate key\0"
                                        "Ddetail\0Hhint\0P12\0p3\0qselect x\0Wwhere\0"
                                        "spublic\0tusers\0cid\0dint4\0nusers_pkey\0"
                                        "Fnbtinsert.c\0L666\0R_bt_check_unique\0"
                                        "Zunknown code\0\0"),
                                    &m),
                         0);
        pgw_error_fields_t e;
        assert_int_equal(pgw_error_fields_parse(&m, &e), 0);
        assert_view(e.severity, "ERROR");
        assert_view(e.severity_nonlocal, "ERROR");
        assert_view(e.sqlstate, "23505");
        assert_view(e.message, "duplicate key");
        assert_view(e.detail, "detail");
        assert_view(e.hint, "hint");
        assert_view(e.position, "12");
        assert_view(e.internal_position, "3");
        assert_view(e.internal_query, "select x");
        assert_view(e.where, "where");
        assert_view(e.schema, "public");
        assert_view(e.table, "users");
        assert_view(e.column, "id");
        assert_view(e.datatype, "int4");
        assert_view(e.constraint, "users_pkey");
        assert_view(e.file, "nbtinsert.c");
        assert_view(e.line, "666");
        assert_view(e.routine, "_bt_check_unique");
    }

    /* Fields not sent stay absent. */
    assert_int_equal(parse_body('N', LIT("SNOTICE\0Mhi\0\0"), &m), 0);
    pgw_error_fields_t e;
    assert_int_equal(pgw_error_fields_parse(&m, &e), 0);
    assert_view(e.message, "hi");
    assert_null(e.sqlstate.p);
    assert_int_equal(e.sqlstate.len, -1);
    assert_int_equal(e.detail.len, -1);
    /* An empty field list is just the terminator. */
    assert_int_equal(parse_body('E', LIT("\0"), &m), 0);
    assert_int_equal(pgw_error_fields_parse(&m, &e), 0);
    assert_int_equal(e.message.len, -1);

    assert_int_equal(parse_body('Z', LIT("I"), &m), 0);
    assert_int_equal(pgw_error_fields_parse(&m, &e), PGW_EINVAL);
}

static void test_error_malformed(void **state)
{
    (void)state;
    pgw_msg_t m;
    const char types[] = "EN";
    for (const char *t = types; *t; t++) {
        uint8_t ty = (uint8_t)*t;
        /* Hostile: a field with no NUL terminator. */
        assert_int_equal(parse_body(ty, LIT("SERROR\0Mno terminator"), &m), PGW_EPROTO);
        /* Fields fine but the final zero is missing. */
        assert_int_equal(parse_body(ty, LIT("SERROR\0Mmsg\0"), &m), PGW_EPROTO);
        assert_int_equal(parse_body(ty, LIT("S"), &m), PGW_EPROTO);
        assert_int_equal(parse_body(ty, LIT(""), &m), PGW_EPROTO);
        /* Trailing bytes after the terminator. */
        assert_int_equal(parse_body(ty, LIT("SERROR\0\0x"), &m), PGW_EPROTO);
        assert_int_equal(parse_body(ty, LIT("\0\0"), &m), PGW_EPROTO);
    }
}

/* PGW_ERROR_FIELD_MAP as data, so the tests below cover every field the
 * table has, whatever it grows to. */
typedef struct field_entry {
    uint8_t code;
    size_t offset; /* of its view in pgw_error_fields_t */
    const char *member;
} field_entry_t;

static const field_entry_t field_table[] = {
#define FIELD_ENTRY(code, member, desc) {code, offsetof(pgw_error_fields_t, member), #member},
    PGW_ERROR_FIELD_MAP(FIELD_ENTRY)
#undef FIELD_ENTRY
};
#define NFIELDS (sizeof field_table / sizeof field_table[0])

static const pgw_view_t *field_view(const pgw_error_fields_t *e, size_t i)
{
    return (const pgw_view_t *)(const void *)((const char *)e + field_table[i].offset);
}

/* Index of field code c in the table, or -1. */
static int field_index(uint8_t c)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (field_table[i].code == c) return (int)i;
    return -1;
}

static void assert_all_absent(const pgw_error_fields_t *e)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        assert_null(field_view(e, i)->p);
        assert_int_equal(field_view(e, i)->len, -1);
    }
}

/* Appends field (code, value) to buf at *n. */
static void put_field(uint8_t *buf, size_t cap, size_t *n, uint8_t code, const char *value)
{
    size_t len = strlen(value);
    assert_true(*n + len + 2 <= cap);
    buf[(*n)++] = code;
    memcpy(buf + *n, value, len + 1);
    *n += len + 1;
}

/* A hand-made message over bytes that pgw_msg_parse never saw. */
static pgw_msg_t raw_error_msg(uint8_t type, const uint8_t *fields, size_t len)
{
    pgw_msg_t m;
    memset(&m, 0, sizeof m);
    m.type = type;
    m.body = fields;
    m.len = (uint32_t)len;
    m.u.error.fields = fields;
    m.u.error.len = (uint32_t)len;
    return m;
}

static void test_error_field_table(void **state)
{
    (void)state;
    /* The table is the struct: one view per entry, codes distinct. */
    assert_int_equal(sizeof(pgw_error_fields_t), NFIELDS * sizeof(pgw_view_t));
    assert_int_equal(sizeof(pgw_error_t), NFIELDS * sizeof(const char *));
    for (size_t i = 0; i < NFIELDS; i++) {
        assert_int_equal(field_table[i].offset, i * sizeof(pgw_view_t));
        assert_int_not_equal(field_table[i].code, 0);
        assert_int_equal(field_index(field_table[i].code), (int)i);
    }

    /* Each code alone, between unknown fields, lands in its member only. */
    for (size_t i = 0; i < NFIELDS; i++) {
        uint8_t body[256];
        size_t n = 0;
        put_field(body, sizeof body, &n, 'Z', "unknown before");
        put_field(body, sizeof body, &n, field_table[i].code, field_table[i].member);
        put_field(body, sizeof body, &n, 0x01, "unknown after");
        body[n++] = 0;
        pgw_msg_t m;
        assert_int_equal(parse_body(i % 2 ? 'N' : 'E', body, n, &m), 0);
        pgw_error_fields_t e;
        assert_int_equal(pgw_error_fields_parse(&m, &e), 0);
        for (size_t j = 0; j < NFIELDS; j++) {
            const pgw_view_t *v = field_view(&e, j);
            if (j == i) {
                assert_view(*v, field_table[i].member);
                assert_int_equal(v->p[v->len], 0); /* a C string in place */
            } else {
                assert_int_equal(v->len, -1);
                assert_null(v->p);
            }
        }
    }

    /* All of them at once, in reverse order; a field sent twice keeps its
     * last value. */
    uint8_t body[1024];
    size_t n = 0;
    put_field(body, sizeof body, &n, 'M', "first message");
    for (size_t i = NFIELDS; i-- > 0;)
        put_field(body, sizeof body, &n, field_table[i].code, field_table[i].member);
    body[n++] = 0;
    pgw_msg_t m;
    assert_int_equal(parse_body('E', body, n, &m), 0);
    pgw_error_fields_t e;
    assert_int_equal(pgw_error_fields_parse(&m, &e), 0);
    for (size_t i = 0; i < NFIELDS; i++)
        assert_view(*field_view(&e, i), field_table[i].member);
}

/* Every code byte the table does not name is skipped, as the protocol
 * requires of a client. */
static void test_error_unknown_codes(void **state)
{
    (void)state;
    for (unsigned c = 1; c < 256; c++) {
        if (field_index((uint8_t)c) >= 0) continue;
        uint8_t body[64];
        size_t n = 0;
        put_field(body, sizeof body, &n, (uint8_t)c, "ignored");
        put_field(body, sizeof body, &n, 'M', "kept");
        put_field(body, sizeof body, &n, (uint8_t)c, "");
        body[n++] = 0;
        pgw_msg_t m;
        assert_int_equal(parse_body('N', body, n, &m), 0);
        pgw_error_fields_t e;
        assert_int_equal(pgw_error_fields_parse(&m, &e), 0);
        for (size_t i = 0; i < NFIELDS; i++) {
            if (field_table[i].code == 'M')
                assert_view(*field_view(&e, i), "kept");
            else
                assert_int_equal(field_view(&e, i)->len, -1);
        }
    }
}

/* pgw_error_fields_parse on its own (a message pgw_msg_parse never
 * checked): a missing terminator or an unterminated field is PGW_EPROTO,
 * and a failed parse leaves every field absent. */
static void test_error_fields_parse_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t len;
    } bad[] = {
        {"SERROR\0Mno NUL", 14},     /* unterminated field */
        {"SERROR\0Mmsg\0", 12},      /* no terminating zero */
        {"S", 1},                    /* a code and nothing else */
        {"", 0},                     /* empty */
        {"SERROR\0\0x", 9},          /* bytes after the terminator */
        {"\0\0", 2},                 /* two terminators */
        {"CXX000\0MM\0\0\0", 12},    /* bytes after a valid list */
        {"M\0S", 3},                 /* code, empty value, code at the end */
        {"Mmsg\0Dno terminator", 19} /* the last field unterminated */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const uint8_t *b = heap_copy(bad[i].bytes, bad[i].len);
        pgw_msg_t m = raw_error_msg('E', b, bad[i].len);
        pgw_error_fields_t e;
        memset(&e, 0x5a, sizeof e);
        assert_int_equal(pgw_error_fields_parse(&m, &e), PGW_EPROTO);
        assert_all_absent(&e);
        /* pgw_msg_parse refuses the same bytes. */
        pgw_msg_t pm;
        assert_int_equal(parse_body('N', (const uint8_t *)bad[i].bytes, bad[i].len, &pm),
                         PGW_EPROTO);
    }
    /* A NULL list of length 0 is an empty body: no terminator. */
    pgw_msg_t m = raw_error_msg('E', NULL, 0);
    pgw_error_fields_t e;
    assert_int_equal(pgw_error_fields_parse(&m, &e), PGW_EPROTO);
    assert_all_absent(&e);
    /* NULL arguments and other message types are PGW_EINVAL. */
    const uint8_t *ok = heap_copy("Mhi\0\0", 5);
    m = raw_error_msg('E', ok, 5);
    assert_int_equal(pgw_error_fields_parse(&m, NULL), PGW_EINVAL);
    memset(&e, 0x5a, sizeof e);
    assert_int_equal(pgw_error_fields_parse(NULL, &e), PGW_EINVAL);
    assert_all_absent(&e);
    m.type = 'C';
    assert_int_equal(pgw_error_fields_parse(&m, &e), PGW_EINVAL);
    assert_all_absent(&e);
    m.type = 'N';
    assert_int_equal(pgw_error_fields_parse(&m, &e), 0);

    /* Every proper prefix of a valid list is malformed. */
    uint8_t body[512];
    size_t n = 0;
    for (size_t i = 0; i < NFIELDS; i++)
        put_field(body, sizeof body, &n, field_table[i].code, "v");
    body[n++] = 0;
    for (size_t cut = 0; cut < n; cut++) {
        pgw_msg_t pm;
        assert_int_equal(parse_body('E', body, cut, &pm), PGW_EPROTO);
        const uint8_t *b = heap_copy(body, cut);
        m = raw_error_msg('E', b, cut);
        assert_int_equal(pgw_error_fields_parse(&m, &e), PGW_EPROTO);
        free_copies(NULL);
    }
}

/* A reference reading of a field list, written independently of the codec:
 * fills want[i] with the last value of field_table[i] (len -1 if absent) and
 * returns whether the list is well formed. */
static bool model_fields(const uint8_t *b, size_t n, pgw_view_t want[NFIELDS])
{
    for (size_t i = 0; i < NFIELDS; i++)
        want[i] = (pgw_view_t){NULL, -1};
    size_t pos = 0;
    for (;;) {
        if (pos == n) return false; /* no terminator */
        uint8_t code = b[pos++];
        if (code == 0) return pos == n;
        const uint8_t *nul = memchr(b + pos, 0, n - pos);
        if (!nul) return false;
        int i = field_index(code);
        if (i >= 0) want[i] = (pgw_view_t){b + pos, (int32_t)(nul - (b + pos))};
        pos = (size_t)(nul - b) + 1;
    }
}

static uint32_t prng_next(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

/* Fuzz-style property over random field lists, most of them well formed
 * and some damaged (a byte changed, cut short, extended): pgw_msg_parse and
 * pgw_error_fields_parse accept exactly what the reference reading accepts,
 * and find the same value for every field, in place. Each list is an
 * exact-size heap copy, so a read past it is caught under ASan. */
static void test_error_fields_property(void **state)
{
    (void)state;
    static const uint8_t alphabet[] = {'S', 'M', 'C', 'V', 'x', 'Z', 0, 0, 1, 0xff, 'a', ' '};
    uint32_t seed = 0x9e3779b9u;
    int accepted = 0, refused = 0;
    for (int iter = 0; iter < 20000; iter++) {
        uint8_t tmp[600];
        size_t n = 0;
        unsigned nfields = prng_next(&seed) % 8;
        for (unsigned k = 0; k < nfields; k++) {
            uint32_t pick = prng_next(&seed);
            tmp[n++] = pick % 4 ? field_table[pick % NFIELDS].code : (uint8_t)(pick >> 8 | 1);
            unsigned len = prng_next(&seed) % 24;
            for (unsigned j = 0; j < len; j++) {
                uint8_t c = (uint8_t)('a' + prng_next(&seed) % 26);
                tmp[n++] = c;
            }
            tmp[n++] = 0;
        }
        tmp[n++] = 0;
        switch (prng_next(&seed) % 4) {
        case 0: /* a byte anywhere becomes something structural */
            tmp[prng_next(&seed) % n] = alphabet[prng_next(&seed) % sizeof alphabet];
            break;
        case 1: /* cut short */
            n = prng_next(&seed) % (n + 1);
            break;
        case 2: /* extended */
            tmp[n++] = alphabet[prng_next(&seed) % sizeof alphabet];
            break;
        default: /* left as built */
            break;
        }
        uint8_t *b = malloc(n ? n : 1);
        assert_non_null(b);
        if (n) memcpy(b, tmp, n);

        pgw_view_t want[NFIELDS];
        bool ok = model_fields(b, n, want);
        if (!ok) /* a refused list leaves every field absent */
            for (size_t i = 0; i < NFIELDS; i++)
                want[i] = (pgw_view_t){NULL, -1};
        pgw_frame_t f = {'E', b, (uint32_t)n, 5 + n};
        pgw_msg_t m;
        assert_int_equal(pgw_msg_parse(&f, &m), ok ? 0 : PGW_EPROTO);
        pgw_msg_t raw = raw_error_msg('N', b, n);
        pgw_error_fields_t e;
        assert_int_equal(pgw_error_fields_parse(&raw, &e), ok ? 0 : PGW_EPROTO);
        for (size_t i = 0; i < NFIELDS; i++) {
            const pgw_view_t *v = field_view(&e, i);
            assert_int_equal(v->len, want[i].len);
            assert_ptr_equal(v->p, want[i].p);
        }
        if (ok) {
            pgw_error_fields_t e2;
            assert_int_equal(pgw_error_fields_parse(&m, &e2), 0);
            for (size_t i = 0; i < NFIELDS; i++) {
                assert_ptr_equal(field_view(&e2, i)->p, want[i].p);
                assert_int_equal(field_view(&e2, i)->len, want[i].len);
            }
        }
        ok ? accepted++ : refused++;
        free(b);
    }
    /* Both sides of the property were exercised. */
    assert_true(accepted > 1000);
    assert_true(refused > 1000);
}

/* ------------------------------------------------------------------------ */
/* Other backend messages                                                   */
/* ------------------------------------------------------------------------ */

static void test_function_result(void **state)
{
    (void)state;
    pgw_msg_t m;
    assert_int_equal(parse_body('V', LIT("\0\0\0\3abc"), &m), 0);
    assert_view(m.u.data, "abc");
    assert_int_equal(parse_body('V', LIT("\xff\xff\xff\xff"), &m), 0);
    assert_int_equal(m.u.data.len, -1);
    assert_null(m.u.data.p);
    assert_int_equal(parse_body('V', LIT("\0\0\0\0"), &m), 0);
    assert_int_equal(m.u.data.len, 0);
    assert_int_equal(parse_body('V', LIT("\xff\xff\xff\xfe"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('V', LIT("\0\0\0\4abc"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('V', LIT("\0\0\0\2abc"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('V',
                                LIT("\xff\xff\xff\xff"
                                    "x"),
                                &m),
                     PGW_EPROTO);
    assert_int_equal(parse_body('V', LIT("\0\0"), &m), PGW_EPROTO);
}

static void test_negotiate(void **state)
{
    (void)state;
    pgw_msg_t m;
    assert_int_equal(parse_body('v', LIT("\0\0\0\0\0\0\0\2_pq_.a\0_pq_.bb\0"), &m), 0);
    assert_int_equal(m.u.negotiate.newest_minor, 0);
    assert_int_equal(m.u.negotiate.noptions, 2);
    size_t pos = 0;
    pgw_str_t opt;
    assert_int_equal(pgw_negotiate_option_next(&m, &pos, &opt), 1);
    assert_str(opt, "_pq_.a");
    assert_int_equal(pgw_negotiate_option_next(&m, &pos, &opt), 1);
    assert_str(opt, "_pq_.bb");
    assert_int_equal(pgw_negotiate_option_next(&m, &pos, &opt), 0);

    assert_int_equal(parse_body('v', LIT("\0\0\0\2\0\0\0\0"), &m), 0);
    assert_int_equal(m.u.negotiate.newest_minor, 2);
    /* What servers actually send: the whole version, 3 << 16 | minor. */
    assert_int_equal(parse_body('v', LIT("\0\3\0\0\0\0\0\0"), &m), 0);
    assert_int_equal(m.u.negotiate.newest_minor, 0);
    assert_int_equal(parse_body('v', LIT("\0\3\0\2\0\0\0\0"), &m), 0);
    assert_int_equal(m.u.negotiate.newest_minor, 2);
    assert_int_equal(parse_body('v', LIT("\0\2\0\0\0\0\0\0"), &m), PGW_EPROTO);
    pos = 0;
    assert_int_equal(pgw_negotiate_option_next(&m, &pos, &opt), 0);

    /* Count overruns, trailing string, missing NUL, negative count, short. */
    assert_int_equal(parse_body('v', LIT("\0\0\0\0\0\0\0\3_pq_.a\0_pq_.b\0"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('v', LIT("\0\0\0\0\0\0\0\1_pq_.a\0_pq_.b\0"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('v', LIT("\0\0\0\0\0\0\0\1_pq_.a"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('v', LIT("\0\0\0\0\xff\xff\xff\xff"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('v', LIT("\0\0\0\0\0\0"), &m), PGW_EPROTO);
}

static void test_notification(void **state)
{
    (void)state;
    pgw_msg_t m;
    assert_int_equal(parse_body('A', LIT("\0\0\1\0chan\0payload\0"), &m), 0);
    assert_int_equal(m.u.notification.pid, 256);
    assert_str(m.u.notification.channel, "chan");
    assert_str(m.u.notification.payload, "payload");
    assert_int_equal(parse_body('A', LIT("\0\0\1\0chan\0\0"), &m), 0);
    assert_str(m.u.notification.payload, "");
    assert_int_equal(parse_body('A', LIT("\0\0\1\0chan\0payload"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('A', LIT("\0\0\1\0chan\0"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('A', LIT("\0\0\1\0chan\0p\0x"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('A', LIT("\0\0\1"), &m), PGW_EPROTO);
}

static void test_param_desc(void **state)
{
    (void)state;
    pgw_msg_t m;
    assert_int_equal(parse_body('t', LIT("\0\2\0\0\0\027\0\0\0\031"), &m), 0);
    assert_int_equal(m.u.param_desc.nparams, 2);
    assert_int_equal(pgw_param_desc_oid(&m, 0), 23);
    assert_int_equal(pgw_param_desc_oid(&m, 1), 25);
    assert_int_equal(pgw_param_desc_oid(&m, 2), 0);
    assert_int_equal(parse_body('t', LIT("\0\0"), &m), 0);
    assert_int_equal(parse_body('t', LIT("\0\3\0\0\0\027\0\0\0\031"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('t', LIT("\0\1\0\0\0\027\0\0\0\031"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('t', LIT("\0"), &m), PGW_EPROTO);
}

static void test_param_status(void **state)
{
    (void)state;
    pgw_msg_t m;
    assert_int_equal(parse_body('S', LIT("client_encoding\0UTF8\0"), &m), 0);
    assert_str(m.u.param_status.name, "client_encoding");
    assert_str(m.u.param_status.value, "UTF8");
    assert_int_equal(parse_body('S', LIT("application_name\0\0"), &m), 0);
    assert_str(m.u.param_status.value, "");
    assert_int_equal(parse_body('S', LIT("client_encoding\0UTF8"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('S', LIT("client_encoding\0"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('S', LIT("a\0b\0c\0"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('S', LIT(""), &m), PGW_EPROTO);
}

static void test_ready(void **state)
{
    (void)state;
    pgw_msg_t m;
    const char ok[] = "ITE";
    for (const char *s = ok; *s; s++) {
        assert_int_equal(parse_body('Z', (const uint8_t *)s, 1, &m), 0);
        assert_int_equal(m.u.ready.status, *s);
    }
    assert_int_equal(parse_body('Z', LIT("X"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('Z', LIT("\0"), &m), PGW_EPROTO);
    assert_int_equal(parse_body('Z', LIT(""), &m), PGW_EPROTO);
    assert_int_equal(parse_body('Z', LIT("II"), &m), PGW_EPROTO);
}

/* Two columns: id int4 (table 16384, attnum 1, text) and name text binary. */
#define ROWDESC_BODY                                       \
    "\0\2"                                                 \
    "id\0\0\0\100\0\0\1\0\0\0\027\0\4\xff\xff\xff\xff\0\0" \
    "name\0\0\0\0\0\0\0\0\0\0\031\xff\xff\xff\xff\xff\xff\0\1"

static void test_row_desc(void **state)
{
    (void)state;
    pgw_msg_t m;
    assert_int_equal(parse_body('T', LIT(ROWDESC_BODY), &m), 0);
    assert_int_equal(m.u.row_desc.nfields, 2);
    pgw_rowdesc_iter_t it;
    pgw_rowdesc_iter_init(&it, &m);
    pgw_field_desc_t fd;
    assert_int_equal(pgw_rowdesc_iter_next(&it, &fd), 1);
    assert_str(fd.name, "id");
    assert_int_equal(fd.table_oid, 16384);
    assert_int_equal(fd.attnum, 1);
    assert_int_equal(fd.type_oid, 23);
    assert_int_equal(fd.typlen, 4);
    assert_int_equal(fd.typmod, -1);
    assert_int_equal(fd.format, 0);
    assert_int_equal(pgw_rowdesc_iter_next(&it, &fd), 1);
    assert_str(fd.name, "name");
    assert_int_equal(fd.table_oid, 0);
    assert_int_equal(fd.attnum, 0);
    assert_int_equal(fd.type_oid, 25);
    assert_int_equal(fd.typlen, -1);
    assert_int_equal(fd.typmod, -1);
    assert_int_equal(fd.format, 1);
    assert_int_equal(pgw_rowdesc_iter_next(&it, &fd), 0);

    assert_int_equal(parse_body('T', LIT("\0\0"), &m), 0);
    pgw_rowdesc_iter_init(&it, &m);
    assert_int_equal(pgw_rowdesc_iter_next(&it, &fd), 0);
}

static void test_row_desc_malformed(void **state)
{
    (void)state;
    pgw_msg_t m;
    const uint8_t full[] = ROWDESC_BODY;
    size_t n = sizeof full - 1;
    /* Every truncation of a valid body is refused, as is trailing garbage. */
    for (size_t k = 0; k < n; k++)
        assert_int_equal(parse_body('T', full, k, &m), PGW_EPROTO);
    uint8_t more[sizeof full];
    memcpy(more, full, n);
    more[n] = 0;
    assert_int_equal(parse_body('T', more, n + 1, &m), PGW_EPROTO);
    /* A count that overruns the descriptors. */
    memcpy(more, full, n);
    more[1] = 3;
    assert_int_equal(parse_body('T', more, n, &m), PGW_EPROTO);
    /* A format other than text or binary. */
    memcpy(more, full, n);
    more[n - 1] = 2;
    assert_int_equal(parse_body('T', more, n, &m), PGW_EPROTO);
    /* A name with no NUL. */
    assert_int_equal(parse_body('T', LIT("\0\1name"), &m), PGW_EPROTO);
}

static void test_empty_messages(void **state)
{
    (void)state;
    const char types[] = "123nIsc";
    pgw_msg_t m;
    for (const char *t = types; *t; t++) {
        assert_int_equal(parse_body((uint8_t)*t, LIT(""), &m), 0);
        assert_int_equal(m.type, *t);
        assert_int_equal(m.len, 0);
        assert_int_equal(parse_body((uint8_t)*t, LIT("\0"), &m), PGW_EPROTO);
    }
}

/* ------------------------------------------------------------------------ */
/* Streaming decoder                                                        */
/* ------------------------------------------------------------------------ */

static void test_decoder_sticky_error(void **state)
{
    (void)state;
    /* Z, then a CommandComplete without its NUL, then a valid Z. */
    static const uint8_t wire[] = {'Z', 0,   0,   0,   5, 'I', 'C', 0, 0,  0,
                                   6,   'a', 'b', 'Z', 0, 0,   0,   5, 'I'};
    const uint8_t *b = heap_copy(wire, sizeof wire);
    pgw_decoder_t d;
    pgw_decoder_init(&d, 0);
    pgw_msg_t m;
    size_t need = 0;
    assert_int_equal(pgw_decoder_next(&d, b, sizeof wire, &m, &need), 6);
    assert_int_equal(m.type, 'Z');
    assert_int_equal(d.offset, 6);
    assert_int_equal(pgw_decoder_next(&d, b + 6, sizeof wire - 6, &m, &need), PGW_EPROTO);
    assert_int_equal(d.err, PGW_EPROTO);
    assert_int_equal(d.err_offset, 6);
    /* Sticky: even a valid message is refused now. */
    assert_int_equal(pgw_decoder_next(&d, b + 13, 6, &m, &need), PGW_EPROTO);
    assert_int_equal(pgw_decoder_next(&d, b, 6, &m, NULL), PGW_EPROTO);
    assert_int_equal(d.err_offset, 6);

    /* EAGAIN is not an error: it reports the need and is not sticky. */
    pgw_decoder_init(&d, 0);
    assert_int_equal(pgw_decoder_next(&d, b, 3, &m, &need), PGW_EAGAIN);
    assert_int_equal(need, 5);
    assert_int_equal(pgw_decoder_next(&d, b, 5, &m, &need), PGW_EAGAIN);
    assert_int_equal(need, 6);
    assert_int_equal(pgw_decoder_next(&d, b, 5, &m, NULL), PGW_EAGAIN);
    assert_int_equal(d.err, 0);
    assert_int_equal(pgw_decoder_next(&d, b, 6, &m, &need), 6);
}

static void test_decoder_hostile_stream(void **state)
{
    (void)state;
    pgw_decoder_t d;
    pgw_msg_t m;
    size_t need;
    /* After two good messages, a length below 4. */
    static const uint8_t w1[] = {'1', 0, 0, 0, 4, '2', 0, 0, 0, 4, 'C', 0, 0, 0, 3};
    const uint8_t *b = heap_copy(w1, sizeof w1);
    pgw_decoder_init(&d, 0);
    size_t off = 0;
    int64_t rc;
    while ((rc = pgw_decoder_next(&d, b + off, sizeof w1 - off, &m, &need)) > 0)
        off += (size_t)rc;
    assert_int_equal(rc, PGW_EPROTO);
    assert_int_equal(d.err_offset, 10);
    /* An unknown type byte after one good message. */
    static const uint8_t w2[] = {'n', 0, 0, 0, 4, '!', 0, 0, 0, 4};
    b = heap_copy(w2, sizeof w2);
    pgw_decoder_init(&d, 0);
    assert_int_equal(pgw_decoder_next(&d, b, sizeof w2, &m, &need), 5);
    assert_int_equal(pgw_decoder_next(&d, b + 5, 1, &m, &need), PGW_EPROTO);
    assert_int_equal(d.err_offset, 5);
    /* ReadyForQuery declaring 30001 bytes: refused from its header alone. */
    static const uint8_t w3[] = {'Z', 0, 0, 0x75, 0x31};
    b = heap_copy(w3, sizeof w3);
    pgw_decoder_init(&d, 0);
    assert_int_equal(pgw_decoder_next(&d, b, sizeof w3, &m, &need), PGW_EPROTO);
    assert_int_equal(d.err_offset, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_frame_complete, free_copies),
        cmocka_unit_test_teardown(test_frame_byte_by_byte, free_copies),
        cmocka_unit_test_teardown(test_frame_length_below_4, free_copies),
        cmocka_unit_test_teardown(test_frame_fixed_sizes, free_copies),
        cmocka_unit_test_teardown(test_frame_short_cap, free_copies),
        cmocka_unit_test_teardown(test_frame_huge_datarow, free_copies),
        cmocka_unit_test_teardown(test_frame_unknown_type, free_copies),
        cmocka_unit_test_teardown(test_auth_simple, free_copies),
        cmocka_unit_test_teardown(test_auth_malformed, free_copies),
        cmocka_unit_test_teardown(test_auth_sasl, free_copies),
        cmocka_unit_test_teardown(test_auth_sasl_continue_final, free_copies),
        cmocka_unit_test_teardown(test_backend_key, free_copies),
        cmocka_unit_test_teardown(test_command_complete, free_copies),
        cmocka_unit_test_teardown(test_copy_responses, free_copies),
        cmocka_unit_test_teardown(test_copy_data_done, free_copies),
        cmocka_unit_test_teardown(test_datarow_valid, free_copies),
        cmocka_unit_test_teardown(test_datarow_malformed, free_copies),
        cmocka_unit_test_teardown(test_error_fields, free_copies),
        cmocka_unit_test_teardown(test_error_malformed, free_copies),
        cmocka_unit_test_teardown(test_error_field_table, free_copies),
        cmocka_unit_test_teardown(test_error_unknown_codes, free_copies),
        cmocka_unit_test_teardown(test_error_fields_parse_malformed, free_copies),
        cmocka_unit_test_teardown(test_error_fields_property, free_copies),
        cmocka_unit_test_teardown(test_function_result, free_copies),
        cmocka_unit_test_teardown(test_negotiate, free_copies),
        cmocka_unit_test_teardown(test_notification, free_copies),
        cmocka_unit_test_teardown(test_param_desc, free_copies),
        cmocka_unit_test_teardown(test_param_status, free_copies),
        cmocka_unit_test_teardown(test_ready, free_copies),
        cmocka_unit_test_teardown(test_row_desc, free_copies),
        cmocka_unit_test_teardown(test_row_desc_malformed, free_copies),
        cmocka_unit_test_teardown(test_empty_messages, free_copies),
        cmocka_unit_test_teardown(test_decoder_sticky_error, free_copies),
        cmocka_unit_test_teardown(test_decoder_hostile_stream, free_copies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
