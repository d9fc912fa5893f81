/*
 * Unit tests of src/auth: the MD5 response, SCRAM-SHA-256(-PLUS) against the
 * RFC 7677 vector and vectors computed independently (Python hashlib/hmac)
 * for PostgreSQL's empty user name, strict parsing of server messages, and
 * SASLprep (RFC 4013 examples).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/auth.h"
#include "failalloc.h"

/* ---- MD5 ---- */

static void test_md5_known_vector(void **state)
{
    (void)state;
    /* printf 'postgrespostgres' | md5sum -> 3175bce1d3201d16594cebf9d7eb3f9d;
     * then that hex followed by bytes 01 02 03 04, through md5sum. */
    const uint8_t salt[4] = {1, 2, 3, 4};
    char out[36];
    assert_int_equal(pgw__md5_password("postgres", "postgres", salt, out), 0);
    assert_string_equal(out, "md568be9ed08db75f318087ab337aaea044");

    const uint8_t other_salt[4] = {1, 2, 3, 5};
    assert_int_equal(pgw__md5_password("postgres", "postgres", other_salt, out), 0);
    assert_string_not_equal(out, "md568be9ed08db75f318087ab337aaea044");
}

/* ---- SCRAM ---- */

#define RFC_NONCE        "rOprNGfwEbeRWgbNEkqO"
#define RFC_SERVER_NONCE RFC_NONCE "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
#define RFC_SERVER_FIRST "r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"

static void buf_expect(const pgw_buf_t *b, const char *want)
{
    assert_int_equal(b->len, strlen(want));
    assert_memory_equal(b->data, want, b->len);
}

static pgw__scram_t *scram_start(const pgw_allocator_t *a, const char *password, const char *mech,
                                 const uint8_t *cb, size_t cb_len, int supports_cb)
{
    pgw__scram_t *s = NULL;
    assert_int_equal(pgw__scram_new(&s, a, password, mech, cb, cb_len, supports_cb), 0);
    assert_non_null(s);
    assert_int_equal(pgw__scram_set_nonce(s, RFC_NONCE), 0);
    return s;
}

static int run_final(pgw__scram_t *s, const char *server_first, pgw_buf_t *out)
{
    pgw_buf_reset(out);
    return pgw__scram_client_final(s, (const uint8_t *)server_first, strlen(server_first), out);
}

static int verify(pgw__scram_t *s, const char *server_final)
{
    return pgw__scram_verify_final(s, (const uint8_t *)server_final, strlen(server_final));
}

static void test_scram_rfc7677_vector(void **state)
{
    (void)state;
    pgt_alloc_t c;
    pgw_allocator_t a = *pgt_alloc_init(&c);
    pgw_buf_t out;
    pgw_buf_init(&out, &a);
    pgw__scram_t *s = scram_start(&a, "pencil", "SCRAM-SHA-256", NULL, 0, 0);
    assert_int_equal(pgw__scram_set_user(s, "user"), 0);
    assert_int_equal(pgw__scram_client_first(s, &out), 0);
    buf_expect(&out, "n,,n=user,r=" RFC_NONCE);
    assert_int_equal(run_final(s, RFC_SERVER_FIRST, &out), 0);
    buf_expect(&out,
               "c=biws,r=" RFC_SERVER_NONCE ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
    assert_int_equal(verify(s, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="), 0);
    pgw__scram_free(s);
    pgw_buf_free(&out);
    assert_int_equal(c.blocks, 0);
}

static void test_scram_postgres_empty_user(void **state)
{
    (void)state;
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    pgw__scram_t *s = scram_start(NULL, "pencil", "SCRAM-SHA-256", NULL, 0, 0);
    assert_int_equal(pgw__scram_client_first(s, &out), 0);
    buf_expect(&out, "n,,n=,r=" RFC_NONCE);
    assert_int_equal(run_final(s, RFC_SERVER_FIRST, &out), 0);
    buf_expect(&out,
               "c=biws,r=" RFC_SERVER_NONCE ",p=qvT2SWdEH5Q06albL+hjSYuUhCG7VndFyzIb7CK4n9k=");
    assert_int_equal(verify(s, "v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg="), 0);
    pgw__scram_free(s);
    pgw_buf_free(&out);
}

static void test_scram_plus_and_y_flag(void **state)
{
    (void)state;
    uint8_t cb[32];
    for (int i = 0; i < 32; i++)
        cb[i] = (uint8_t)i;
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);

    pgw__scram_t *s = scram_start(NULL, "pencil", "SCRAM-SHA-256-PLUS", cb, sizeof cb, 1);
    assert_int_equal(pgw__scram_client_first(s, &out), 0);
    buf_expect(&out, "p=tls-server-end-point,,n=,r=" RFC_NONCE);
    assert_int_equal(run_final(s, RFC_SERVER_FIRST, &out), 0);
    buf_expect(&out,
               "c=cD10bHMtc2VydmVyLWVuZC1wb2ludCwsAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=,"
               "r=" RFC_SERVER_NONCE ",p=Q8h71kjaoMzNI7dPksDrhRE/5mTUObF0fUHVIgBOWQg=");
    assert_int_equal(verify(s, "v=ykwoqH8mLqO5AQCeuwwf6lsj9f8zyJZT/CcvAbN4Ssc="), 0);
    pgw__scram_free(s);

    s = scram_start(NULL, "pencil", "SCRAM-SHA-256", NULL, 0, 1);
    pgw_buf_reset(&out);
    assert_int_equal(pgw__scram_client_first(s, &out), 0);
    buf_expect(&out, "y,,n=,r=" RFC_NONCE);
    assert_int_equal(run_final(s, RFC_SERVER_FIRST, &out), 0);
    buf_expect(&out,
               "c=eSws,r=" RFC_SERVER_NONCE ",p=VpuC5DGQa5ro9tXE9MnKs69NH1nxnuregZZcclqIGfM=");
    assert_int_equal(verify(s, "v=FOmOj9BpTGwvnzwBtWQjBaPmVxT9I8IeHBOhcIPu3us="), 0);
    pgw__scram_free(s);
    pgw_buf_free(&out);
}

static void test_scram_saslprep_password(void **state)
{
    (void)state;
    /* U+2168 ROMAN NUMERAL NINE is prepared to "IX": same proof as "IX". */
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    const char *passwords[] = {"\xE2\x85\xA8", "IX", "I\xC2\xADX"};
    for (size_t i = 0; i < 3; i++) {
        pgw__scram_t *s = scram_start(NULL, passwords[i], "SCRAM-SHA-256", NULL, 0, 0);
        pgw_buf_reset(&out);
        assert_int_equal(pgw__scram_client_first(s, &out), 0);
        assert_int_equal(run_final(s, RFC_SERVER_FIRST, &out), 0);
        buf_expect(&out,
                   "c=biws,r=" RFC_SERVER_NONCE ",p=2b5mOdeOFNUaOWSdK05u8Z+vtErTpXDPfs6KR0NuxVw=");
        assert_int_equal(verify(s, "v=vHUKdVFO/k6ajWxZtBGhPiGnonJjlEa/nZSoSrrpsFI="), 0);
        pgw__scram_free(s);
    }
    pgw_buf_free(&out);
}

static void test_scram_random_nonce(void **state)
{
    (void)state;
    pgw_buf_t a, b;
    pgw_buf_init(&a, NULL);
    pgw_buf_init(&b, NULL);
    pgw__scram_t *s1, *s2;
    assert_int_equal(pgw__scram_new(&s1, NULL, "x", "SCRAM-SHA-256", NULL, 0, 0), 0);
    assert_int_equal(pgw__scram_new(&s2, NULL, "x", "SCRAM-SHA-256", NULL, 0, 0), 0);
    assert_int_equal(pgw__scram_client_first(s1, &a), 0);
    assert_int_equal(pgw__scram_client_first(s2, &b), 0);
    /* "n,,n=,r=" + base64 of 18 bytes = 24 characters */
    assert_int_equal(a.len, 8 + 24);
    assert_int_equal(b.len, 8 + 24);
    assert_memory_not_equal(a.data, b.data, a.len);
    /* a second client-first is a usage error */
    assert_int_equal(pgw__scram_client_first(s1, &a), PGW_EINVAL);
    pgw__scram_free(s1);
    pgw__scram_free(s2);
    pgw_buf_free(&a);
    pgw_buf_free(&b);
}

static void test_scram_bad_arguments(void **state)
{
    (void)state;
    pgw__scram_t *s = (pgw__scram_t *)1;
    assert_int_equal(pgw__scram_new(&s, NULL, "x", "SCRAM-SHA-1", NULL, 0, 0), PGW_EINVAL);
    assert_null(s);
    assert_int_equal(pgw__scram_new(&s, NULL, "x", "SCRAM-SHA-256-PLUS", NULL, 0, 1), PGW_EINVAL);
    assert_int_equal(pgw__scram_new(&s, NULL, "x", "SCRAM-SHA-256", NULL, 0, 0), 0);
    assert_int_equal(pgw__scram_set_nonce(s, "a,b"), PGW_EINVAL);
    assert_int_equal(pgw__scram_set_nonce(s, ""), PGW_EINVAL);
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    /* final before first */
    assert_int_equal(run_final(s, RFC_SERVER_FIRST, &out), PGW_EINVAL);
    /* verify before final */
    assert_int_equal(verify(s, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="), PGW_EAUTH);
    pgw__scram_free(s);
    pgw__scram_free(NULL);
    pgw_buf_free(&out);
}

static void test_scram_malformed_server_first(void **state)
{
    (void)state;
    static const char *bad[] = {
        "",
        "r=",
        /* nonce does not start with ours, or adds nothing to it */
        "r=XOprNGfwEbeRWgbNEkqO%hvY,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        "r=" RFC_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        "r=rOprNGfwEbeRW,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        /* missing or empty salt, bad base64 */
        "r=" RFC_SERVER_NONCE ",i=4096",
        "r=" RFC_SERVER_NONCE ",s=,i=4096",
        "r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ=,i=4096",
        "r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7s*EsUEjb6gQ==,i=4096",
        "r=" RFC_SERVER_NONCE ",s=W2==ZaJ0,i=4096",
        /* iteration count: zero, huge, not a number, missing */
        "r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=0",
        "r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=10000001",
        "r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=99999999999999999999",
        "r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=-1",
        "r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=40x",
        "r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=",
        "r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==",
        /* a mandatory extension, trailing data, attributes out of order */
        "m=ext,r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        "r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,",
        "r=" RFC_SERVER_NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,x=1",
        "s=W22ZaJ0SNY7soEsUEjb6gQ==,r=" RFC_SERVER_NONCE ",i=4096",
        "e=other-error",
    };
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pgw__scram_t *s = scram_start(NULL, "pencil", "SCRAM-SHA-256", NULL, 0, 0);
        assert_int_equal(pgw__scram_client_first(s, &out), 0);
        pgw_buf_reset(&out);
        int rc = run_final(s, bad[i], &out);
        if (rc != PGW_EAUTH) fail_msg("accepted server-first #%zu: %s", i, bad[i]);
        assert_int_equal(out.len, 0);
        /* and the exchange cannot go on */
        assert_int_equal(verify(s, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="), PGW_EAUTH);
        pgw__scram_free(s);
    }
    /* an embedded NUL */
    pgw__scram_t *s = scram_start(NULL, "pencil", "SCRAM-SHA-256", NULL, 0, 0);
    assert_int_equal(pgw__scram_client_first(s, &out), 0);
    const char nul[] = "r=" RFC_SERVER_NONCE "\0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
    assert_int_equal(pgw__scram_client_final(s, (const uint8_t *)nul, sizeof nul - 1, &out),
                     PGW_EAUTH);
    pgw__scram_free(s);
    pgw_buf_free(&out);
}

static void test_scram_bad_server_final(void **state)
{
    (void)state;
    static const char *bad[] = {
        "",
        "e=invalid-proof",
        "v=",
        /* one bit off */
        "v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOh=",
        "v=4HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=",
        /* the RFC user's signature, not ours */
        "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
        /* truncated, trailing data, not base64 */
        "v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSO",
        "v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=,x",
        "v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBt*Og=",
        "x=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=",
    };
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pgw__scram_t *s = scram_start(NULL, "pencil", "SCRAM-SHA-256", NULL, 0, 0);
        assert_int_equal(pgw__scram_client_first(s, &out), 0);
        assert_int_equal(run_final(s, RFC_SERVER_FIRST, &out), 0);
        int rc = verify(s, bad[i]);
        if (rc != PGW_EAUTH) fail_msg("accepted server-final #%zu: %s", i, bad[i]);
        /* a failed verification is final: the right signature is refused too */
        assert_int_equal(verify(s, "v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg="), PGW_EAUTH);
        pgw__scram_free(s);
    }
    pgw_buf_free(&out);
}

static void test_scram_out_of_memory(void **state)
{
    (void)state;
    /* Fail each allocation in turn: every failure is PGW_ENOMEM, nothing leaks. */
    for (long n = 1; n < 40; n++) {
        pgt_alloc_t c;
        pgw_allocator_t a = *pgt_alloc_init(&c);
        c.fail_at = n;
        pgw_buf_t out;
        pgw_buf_init(&out, &a);
        pgw__scram_t *s = NULL;
        int rc = pgw__scram_new(&s, &a, "\xE2\x85\xA8", "SCRAM-SHA-256", NULL, 0, 0);
        if (rc == 0) rc = pgw__scram_set_nonce(s, RFC_NONCE);
        if (rc == 0) rc = pgw__scram_client_first(s, &out);
        if (rc == 0) rc = run_final(s, RFC_SERVER_FIRST, &out);
        if (rc == 0) rc = verify(s, "v=vHUKdVFO/k6ajWxZtBGhPiGnonJjlEa/nZSoSrrpsFI=");
        assert_true(rc == 0 || rc == PGW_ENOMEM);
        pgw__scram_free(s);
        pgw_buf_free(&out);
        assert_int_equal(c.blocks, 0);
    }
}

/* ---- SASLprep ---- */

static void expect_prep(const char *in, const char *want)
{
    char *out = NULL;
    assert_int_equal(pgw__saslprep(NULL, in, &out), 0);
    assert_string_equal(out, want);
    free(out);
}

static void expect_prep_error(const char *in, int code)
{
    char *out = (char *)1;
    assert_int_equal(pgw__saslprep(NULL, in, &out), code);
    assert_null(out);
}

static void test_saslprep_rfc4013_examples(void **state)
{
    (void)state;
    expect_prep("I\xC2\xADX", "IX");       /* SOFT HYPHEN mapped to nothing */
    expect_prep("user", "user");           /* no transformation */
    expect_prep("USER", "USER");           /* case preserved */
    expect_prep("\xC2\xAA", "a");          /* FEMININE ORDINAL INDICATOR */
    expect_prep("\xE2\x85\xA8", "IX");     /* ROMAN NUMERAL NINE */
    expect_prep_error("\x07", PGW_EINVAL); /* prohibited character */
    expect_prep_error("\xD8\xA7"
                      "1",
                      PGW_EINVAL); /* bidi: RandALCat first, not last */
}

static void test_saslprep_more(void **state)
{
    (void)state;
    expect_prep("\xE2\x85\xA8NFKC", "IXNFKC");
    expect_prep("", "");
    expect_prep("pass word", "pass word"); /* ASCII space kept */
    expect_prep("a\xC2\xA0"
                "b",
                "a b"); /* NO-BREAK SPACE */
    expect_prep("a\xE3\x80\x80"
                "b",
                "a b");                                     /* IDEOGRAPHIC SPACE */
    expect_prep("e\xCC\x81t\xC3\xA9", "\xC3\xA9t\xC3\xA9"); /* composed to U+00E9 */
    expect_prep("\xEF\xBC\xB0\xEF\xBD\x81\xEF\xBD\x93\xEF\xBD\x93", "Pass"); /* fullwidth */
    expect_prep("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", "\xEA\xB0\x81");     /* Hangul LVT */
    expect_prep("\xEA\xB0\x81", "\xEA\xB0\x81");
    expect_prep("\xEF\xAC\x81", "fi"); /* ligature */
    expect_prep("\xE2\x84\xAA", "K");  /* KELVIN SIGN */
    /* U+200B ZERO WIDTH SPACE is both a non-ASCII space (C.1.2) and mapped
     * to nothing (B.1): the server maps it to SPACE. The BOM is removed. */
    expect_prep("\xE2\x80\x8B"
                "a\xEF\xBB\xBF",
                " a");
    /* q + dot below + dot above: reordered, nothing composes with q */
    expect_prep("q\xCC\x87\xCC\xA3", "q\xCC\xA3\xCC\x87");
    /* a whole right-to-left password is allowed */
    expect_prep("\xD8\xA7\xD8\xA8", "\xD8\xA7\xD8\xA8");
    expect_prep("\xD8\xA7"
                "1\xD8\xA8",
                "\xD8\xA7"
                "1\xD8\xA8");
    /* mixing R/AL with L is not */
    expect_prep_error("\xD8\xA7"
                      "a\xD8\xA8",
                      PGW_EINVAL);
    /* nothing left once mapped: an empty password, prohibited (libpq) */
    expect_prep_error("\xC2\xAD", PGW_EINVAL);
    expect_prep_error("\xE2\x81\xA0\xEF\xBB\xBF", PGW_EINVAL); /* WORD JOINER, BOM */
    expect_prep("\xE2\x80\x8B\xEF\xBB\xBF", " ");
    /* prohibited output */
    expect_prep_error("a\x7F", PGW_EINVAL);            /* ASCII control */
    expect_prep_error("a\xC2\x80", PGW_EINVAL);        /* C1 control */
    expect_prep_error("\xEE\x80\x80", PGW_EINVAL);     /* private use U+E000 */
    expect_prep_error("\xEF\xBF\xBE", PGW_EINVAL);     /* non-character U+FFFE */
    expect_prep_error("a\xE2\x80\x8E", PGW_EINVAL);    /* LRM, C.8 */
    expect_prep_error("\xF0\x9F\x98\x80", PGW_EINVAL); /* unassigned in Unicode 3.2 */
    /* invalid UTF-8 */
    expect_prep_error("\xC3", PGW_EENCODING);
    expect_prep_error("\xC0\xAF", PGW_EENCODING);         /* overlong '/' */
    expect_prep_error("\xED\xA0\x80", PGW_EENCODING);     /* surrogate */
    expect_prep_error("\xF4\x90\x80\x80", PGW_EENCODING); /* above U+10FFFF */
    expect_prep_error("\xFF", PGW_EENCODING);
}

/* n times U+FDFA, which NFKC turns into 18 code points (33 bytes). */
static char *ligatures(size_t n)
{
    char *s = malloc(n * 3 + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        memcpy(s + i * 3, "\xEF\xB7\xBA", 3);
    s[n * 3] = '\0';
    return s;
}

/* NFKC can lengthen a password: SASLprep returns the longer output and, as
 * libpq and the server, prepares a password of any length: its own long
 * output again, unchanged, and a long input that NFKC shortens. */
static void test_saslprep_output_bound(void **state)
{
    (void)state;
    char *in = ligatures(125), *out = NULL, *again = NULL;
    assert_int_equal(pgw__saslprep(NULL, in, &out), 0);
    assert_int_equal(strlen(out), 125 * 33); /* 4,125 bytes */
    assert_int_equal(pgw__saslprep(NULL, out, &again), 0);
    assert_string_equal(out, again);
    free(again);
    free(out);
    free(in);
    /* 1,400 x U+2168 ROMAN NUMERAL NINE: 4,200 bytes, prepared to "IX" x 1,400. */
    size_t n = 1400;
    in = malloc(n * 3 + 1);
    char *want = malloc(n * 2 + 1);
    assert_non_null(in);
    assert_non_null(want);
    for (size_t i = 0; i < n; i++) {
        memcpy(in + i * 3, "\xE2\x85\xA8", 3);
        memcpy(want + i * 2, "IX", 2);
    }
    in[n * 3] = want[n * 2] = '\0';
    expect_prep(in, want);
    free(want);
    free(in);
}

/* PostgreSQL's pg_saslprep, which the server applies to a password before
 * storing its SCRAM secret and libpq before proving it, checks prohibited
 * characters and the bidi rule on the mapped input, not on the NFKC output
 * as RFC 3454 says: a password must be prepared as they prepare it, or it
 * does not log in (tests/integration/test_auth_verifier.c logs in with these
 * against the server). */
static void test_saslprep_checks_mapped_input(void **state)
{
    (void)state;
    /* U+FB1D HEBREW LETTER YOD WITH HIRIQ: RandALCat, first and last, so
     * allowed; NFKC gives U+05D9 U+05B4, which ends in a combining mark. */
    expect_prep("\xEF\xAC\x9D", "\xD7\x99\xD6\xB4");
    /* ... and that output, as an input, breaks the bidi rule. */
    expect_prep_error("\xD7\x99\xD6\xB4", PGW_EINVAL);
    /* U+0340 COMBINING GRAVE TONE MARK is prohibited (C.8) though NFKC
     * turns "a" U+0340 into U+00E0, which is not. */
    expect_prep_error("a\xCD\x80", PGW_EINVAL);
    expect_prep("a\xCC\x80", "\xC3\xA0");
}

static void test_scram_raw_password_when_prep_fails(void **state)
{
    (void)state;
    /* Invalid UTF-8 is used raw: the exchange still completes. */
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    pgw__scram_t *s = scram_start(NULL, "\xFF\xFE", "SCRAM-SHA-256", NULL, 0, 0);
    assert_int_equal(pgw__scram_client_first(s, &out), 0);
    assert_int_equal(run_final(s, RFC_SERVER_FIRST, &out), 0);
    pgw__scram_free(s);
    pgw_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_md5_known_vector),
        cmocka_unit_test(test_scram_rfc7677_vector),
        cmocka_unit_test(test_scram_postgres_empty_user),
        cmocka_unit_test(test_scram_plus_and_y_flag),
        cmocka_unit_test(test_scram_saslprep_password),
        cmocka_unit_test(test_scram_random_nonce),
        cmocka_unit_test(test_scram_bad_arguments),
        cmocka_unit_test(test_scram_malformed_server_first),
        cmocka_unit_test(test_scram_bad_server_final),
        cmocka_unit_test(test_scram_out_of_memory),
        cmocka_unit_test(test_saslprep_rfc4013_examples),
        cmocka_unit_test(test_saslprep_more),
        cmocka_unit_test(test_saslprep_output_bound),
        cmocka_unit_test(test_saslprep_checks_mapped_input),
        cmocka_unit_test(test_scram_raw_password_when_prep_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
