/*
 * Unit tests of the frontend-message encoders: every message compared byte
 * for byte with its expected wire form, the all-or-nothing rule on every
 * kind of failure, size limits checked before any input byte is read (inputs
 * placed on an inaccessible page prove it), and the incremental writer.
 */
#define _DEFAULT_SOURCE /* mmap MAP_ANONYMOUS, sysconf */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "failalloc.h"
#include "pgwire/proto.h"

#define LIT(s) (const uint8_t *)(s), (sizeof(s) - 1)

/* Encoders append: every test starts with a prefix in the buffer, so a
 * write at the wrong offset or a truncation past the start shows up. */
#define PREFIX "prefix"

static pgw_buf_t fresh(void)
{
    pgw_buf_t b;
    pgw_buf_init(&b, NULL);
    assert_int_equal(pgw_buf_append(&b, PREFIX, 6), 0);
    return b;
}

/* Checks that b holds PREFIX followed by exactly want, then frees b. */
static void expect(pgw_buf_t *b, const uint8_t *want, size_t n)
{
    assert_int_equal(b->len, 6 + n);
    assert_memory_equal(b->data, PREFIX, 6);
    assert_memory_equal(b->data + 6, want, n);
    pgw_buf_free(b);
}

/* Checks that b still holds only PREFIX, then frees b. */
static void expect_unchanged(pgw_buf_t *b)
{
    assert_int_equal(b->len, 6);
    assert_memory_equal(b->data, PREFIX, 6);
    pgw_buf_free(b);
}

/* A page that faults on any access: inputs placed there prove that an
 * encoder refused them without reading them. */
static uint8_t *noaccess_page(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(p != MAP_FAILED);
    return p;
}

static void free_page(uint8_t *p)
{
    munmap(p, (size_t)sysconf(_SC_PAGESIZE));
}

/* ------------------------------------------------------------------------ */
/* Startup family                                                           */
/* ------------------------------------------------------------------------ */

static void test_startup(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    const char *params[] = {"user", "postgres", "database", "app"};
    assert_int_equal(pgw_enc_startup(&b, PGW_PROTO_3_0, params, 2), 0);
    expect(&b, LIT("\0\0\0\044\0\3\0\0user\0postgres\0database\0app\0\0"));

    b = fresh();
    assert_int_equal(pgw_enc_startup(&b, PGW_PROTO_3_2, params, 1), 0);
    expect(&b, LIT("\0\0\0\027\0\3\0\2user\0postgres\0\0"));

    b = fresh();
    assert_int_equal(pgw_enc_startup(&b, PGW_PROTO_3_0, NULL, 0), 0);
    expect(&b, LIT("\0\0\0\011\0\3\0\0\0"));
}

static void test_startup_invalid(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    const char *empty_name[] = {"", "x"};
    assert_int_equal(pgw_enc_startup(&b, PGW_PROTO_3_0, empty_name, 1), PGW_EINVAL);
    const char *null_value[] = {"user", NULL};
    assert_int_equal(pgw_enc_startup(&b, PGW_PROTO_3_0, null_value, 1), PGW_EINVAL);
    const char *ok[] = {"user", "u"};
    assert_int_equal(pgw_enc_startup(&b, 1234, ok, 1), PGW_EINVAL);
    assert_int_equal(pgw_enc_startup(&b, PGW_PROTO_3_0, NULL, 1), PGW_EINVAL);
    /* The server refuses startup packets over 10000 bytes: so do we. */
    char *big = malloc(10001);
    assert_non_null(big);
    memset(big, 'v', 10000);
    big[10000] = 0;
    const char *huge[] = {"options", big};
    assert_int_equal(pgw_enc_startup(&b, PGW_PROTO_3_0, huge, 1), PGW_ETOOBIG);
    free(big);
    expect_unchanged(&b);
}

static void test_ssl_gss_cancel(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    assert_int_equal(pgw_enc_ssl_request(&b), 0);
    expect(&b, LIT("\0\0\0\010\x04\xd2\x16\x2f"));
    b = fresh();
    assert_int_equal(pgw_enc_gssenc_request(&b), 0);
    expect(&b, LIT("\0\0\0\010\x04\xd2\x16\x30"));

    b = fresh();
    assert_int_equal(pgw_enc_cancel_request(&b, 12345, (const uint8_t *)"\xde\xad\xbe\xef", 4), 0);
    expect(&b, LIT("\0\0\0\020\x04\xd2\x16\x2e\0\0\060\071\xde\xad\xbe\xef"));

    /* A 3.2 key of 32 bytes: length 12 + 32. */
    uint8_t key[257];
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)i;
    b = fresh();
    assert_int_equal(pgw_enc_cancel_request(&b, 7, key, 32), 0);
    assert_int_equal(b.len, 6 + 44);
    assert_memory_equal(b.data + 6, "\0\0\0\054\x04\xd2\x16\x2e\0\0\0\7", 12);
    assert_memory_equal(b.data + 18, key, 32);
    pgw_buf_free(&b);

    b = fresh();
    assert_int_equal(pgw_enc_cancel_request(&b, 7, key, 256), 0);
    assert_int_equal(b.len, 6 + 268);
    pgw_buf_free(&b);

    b = fresh();
    assert_int_equal(pgw_enc_cancel_request(&b, 7, key, 3), PGW_EINVAL);
    assert_int_equal(pgw_enc_cancel_request(&b, 7, key, 257), PGW_EINVAL);
    assert_int_equal(pgw_enc_cancel_request(&b, 7, NULL, 4), PGW_EINVAL);
    expect_unchanged(&b);
}

/* ------------------------------------------------------------------------ */
/* Authentication responses                                                 */
/* ------------------------------------------------------------------------ */

static void test_password(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    assert_int_equal(pgw_enc_password(&b, "secret"), 0);
    expect(&b, LIT("p\0\0\0\013secret\0"));
    b = fresh();
    assert_int_equal(pgw_enc_password(&b, NULL), PGW_EINVAL);
    expect_unchanged(&b);
}

static void test_sasl(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    assert_int_equal(pgw_enc_sasl_initial(&b, "SCRAM-SHA-256", (const uint8_t *)"n,,n=,r=abc", 11),
                     0);
    expect(&b, LIT("p\0\0\0\041SCRAM-SHA-256\0\0\0\0\013n,,n=,r=abc"));

    b = fresh();
    assert_int_equal(pgw_enc_sasl_initial(&b, "X", NULL, -1), 0);
    expect(&b, LIT("p\0\0\0\012X\0\xff\xff\xff\xff"));

    b = fresh();
    assert_int_equal(pgw_enc_sasl_initial(&b, "X", NULL, 0), 0);
    expect(&b, LIT("p\0\0\0\012X\0\0\0\0\0"));

    b = fresh();
    assert_int_equal(pgw_enc_sasl_initial(&b, "X", NULL, -2), PGW_EINVAL);
    assert_int_equal(pgw_enc_sasl_initial(&b, "X", NULL, 3), PGW_EINVAL);
    assert_int_equal(pgw_enc_sasl_initial(&b, NULL, NULL, -1), PGW_EINVAL);
    assert_int_equal(pgw_enc_sasl_initial(&b, "", NULL, -1), PGW_EINVAL);
    expect_unchanged(&b);

    b = fresh();
    assert_int_equal(pgw_enc_sasl_response(&b, (const uint8_t *)"c=biws,r=x,p=y", 14), 0);
    expect(&b, LIT("p\0\0\0\022c=biws,r=x,p=y"));
    b = fresh();
    assert_int_equal(pgw_enc_sasl_response(&b, NULL, 0), 0);
    expect(&b, LIT("p\0\0\0\4"));
}

/* ------------------------------------------------------------------------ */
/* Simple and extended query                                                */
/* ------------------------------------------------------------------------ */

static void test_query(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    /* Only len bytes are sent, NUL-terminated on the wire. */
    assert_int_equal(pgw_enc_query(&b, "select 1; trailing", 8, 0), 0);
    expect(&b, LIT("Q\0\0\0\015select 1\0"));

    b = fresh();
    assert_int_equal(pgw_enc_query(&b, "", 0, 0), 0);
    expect(&b, LIT("Q\0\0\0\5\0"));

    /* A NUL inside the SQL would make the server run a truncated query. */
    b = fresh();
    assert_int_equal(pgw_enc_query(&b, "select 1\0; drop table t", 23, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_query(&b, NULL, 3, 0), PGW_EINVAL);
    expect_unchanged(&b);
}

static void test_query_limits(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    /* Declared length 4 + 8 + 1 = 13: at the limit, then one past it. */
    assert_int_equal(pgw_enc_query(&b, "select 1", 8, 13), 0);
    assert_int_equal(b.len, 6 + 14);
    pgw_buf_free(&b);
    b = fresh();
    assert_int_equal(pgw_enc_query(&b, "select 1", 8, 12), PGW_ETOOBIG);
    expect_unchanged(&b);

    /* Oversized SQL on an inaccessible page: refused without a read. */
    uint8_t *page = noaccess_page();
    b = fresh();
    assert_int_equal(pgw_enc_query(&b, (const char *)page, 1000, 100), PGW_ETOOBIG);
    assert_int_equal(pgw_enc_query(&b, (const char *)page, (size_t)INT32_MAX, 0), PGW_ETOOBIG);
    assert_int_equal(pgw_enc_query(&b, (const char *)page, SIZE_MAX - 2, 0), PGW_ETOOBIG);
    expect_unchanged(&b);
    free_page(page);
}

static void test_parse(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    const uint32_t oids[] = {23, 0};
    assert_int_equal(pgw_enc_parse(&b, "s1", "select $1, $2", 13, oids, 2, 0), 0);
    expect(&b, LIT("P\0\0\0\037s1\0select $1, $2\0\0\2\0\0\0\027\0\0\0\0"));

    b = fresh();
    assert_int_equal(pgw_enc_parse(&b, "", "select 1", 8, NULL, 0, 0), 0);
    expect(&b, LIT("P\0\0\0\020\0select 1\0\0\0"));

    b = fresh();
    assert_int_equal(pgw_enc_parse(&b, "", "select\0 1", 9, NULL, 0, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_parse(&b, NULL, "select 1", 8, NULL, 0, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_parse(&b, "", "select 1", 8, NULL, 1, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_parse(&b, "", "select 1", 8, NULL, 0, 15), PGW_ETOOBIG);
    expect_unchanged(&b);

    uint8_t *page = noaccess_page();
    b = fresh();
    assert_int_equal(pgw_enc_parse(&b, "", (const char *)page, (size_t)INT32_MAX, NULL, 0, 0),
                     PGW_ETOOBIG);
    expect_unchanged(&b);
    free_page(page);
}

static void test_bind(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    const int16_t pf[] = {1};
    const pgw_view_t params[] = {
        {(const uint8_t *)"\0\0\0\052", 4},
        {NULL, -1},
        {(const uint8_t *)"", 0},
    };
    const int16_t rf[] = {1, 0};
    assert_int_equal(pgw_enc_bind(&b, "p", "s", pf, 1, params, 3, rf, 2, 0), 0);
    expect(&b, LIT("B\0\0\0\044p\0s\0\0\1\0\1\0\3\0\0\0\4\0\0\0\052\xff\xff\xff\xff\0\0\0\0"
                   "\0\2\0\1\0\0"));

    /* Unnamed portal and statement, no parameters, no formats. */
    b = fresh();
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, NULL, 0, NULL, 0, 0), 0);
    expect(&b, LIT("B\0\0\0\014\0\0\0\0\0\0\0\0"));

    /* One format per parameter. */
    b = fresh();
    const int16_t pf2[] = {0, 1};
    const pgw_view_t two[] = {{(const uint8_t *)"1", 1}, {(const uint8_t *)"\1", 1}};
    assert_int_equal(pgw_enc_bind(&b, "", "", pf2, 2, two, 2, NULL, 0, 0), 0);
    expect(&b, LIT("B\0\0\0\032\0\0\0\2\0\0\0\1\0\2\0\0\0\0011\0\0\0\1\1\0\0"));
}

static void test_bind_invalid(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    const int16_t pf[] = {0, 1, 0};
    const int16_t bad_fmt[] = {2};
    const pgw_view_t two[] = {{(const uint8_t *)"1", 1}, {(const uint8_t *)"2", 1}};
    const pgw_view_t neg[] = {{NULL, -2}};
    const pgw_view_t nullp[] = {{NULL, 5}};
    /* Format counts must be 0, 1 or one per parameter. */
    assert_int_equal(pgw_enc_bind(&b, "", "", pf, 3, two, 2, NULL, 0, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_bind(&b, "", "", bad_fmt, 1, two, 2, NULL, 0, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 1, two, 2, NULL, 0, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, two, 2, bad_fmt, 1, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, two, 2, NULL, 2, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, neg, 1, NULL, 0, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, nullp, 1, NULL, 0, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, NULL, 1, NULL, 0, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_bind(&b, NULL, "", NULL, 0, NULL, 0, NULL, 0, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_bind(&b, "", NULL, NULL, 0, NULL, 0, NULL, 0, 0), PGW_EINVAL);
    expect_unchanged(&b);
}

/* RELIABILITY case 3: parameters whose total passes INT32_MAX, or the
 * configured limit, are refused before anything is written, and their bytes
 * (on an inaccessible page here) are never read. */
static void test_bind_too_big(void **state)
{
    (void)state;
    uint8_t *page = noaccess_page();
    pgw_buf_t b = fresh();

    pgw_view_t huge[2] = {{page, INT32_MAX}, {page, INT32_MAX}};
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, huge, 2, NULL, 0, 0), PGW_ETOOBIG);
    /* One parameter of INT32_MAX bytes alone already passes INT32_MAX. */
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, huge, 1, NULL, 0, 0), PGW_ETOOBIG);
    /* 65535 parameters of 1 MiB each: about 64 GiB in total. */
    pgw_view_t *many = malloc(65535 * sizeof *many);
    assert_non_null(many);
    for (size_t i = 0; i < 65535; i++) {
        many[i].p = page;
        many[i].len = 1 << 20;
    }
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, many, 65535, NULL, 0, 0), PGW_ETOOBIG);
    free(many);
    /* Under the configured limit. */
    pgw_view_t small[1] = {{page, 1000}};
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, small, 1, NULL, 0, 500), PGW_ETOOBIG);
    expect_unchanged(&b);
    free_page(page);

    /* The limit counts the declared length: 4 + 2 + 2 + 2 + 4 + 3 + 2 = 19. */
    const pgw_view_t three[] = {{(const uint8_t *)"abc", 3}};
    b = fresh();
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, three, 1, NULL, 0, 19), 0);
    assert_int_equal(b.len, 6 + 20);
    pgw_buf_free(&b);
    b = fresh();
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, three, 1, NULL, 0, 18), PGW_ETOOBIG);
    expect_unchanged(&b);
}

static void test_describe_close_execute(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    assert_int_equal(pgw_enc_describe(&b, 'S', "s1"), 0);
    expect(&b, LIT("D\0\0\0\010Ss1\0"));
    b = fresh();
    assert_int_equal(pgw_enc_describe(&b, 'P', ""), 0);
    expect(&b, LIT("D\0\0\0\6P\0"));
    b = fresh();
    assert_int_equal(pgw_enc_close(&b, 'S', "s1"), 0);
    expect(&b, LIT("C\0\0\0\010Ss1\0"));
    b = fresh();
    assert_int_equal(pgw_enc_close(&b, 'P', "p"), 0);
    expect(&b, LIT("C\0\0\0\7Pp\0"));
    b = fresh();
    assert_int_equal(pgw_enc_execute(&b, "", 0), 0);
    expect(&b, LIT("E\0\0\0\011\0\0\0\0\0"));
    b = fresh();
    assert_int_equal(pgw_enc_execute(&b, "p", 100), 0);
    expect(&b, LIT("E\0\0\0\012p\0\0\0\0\144"));

    b = fresh();
    assert_int_equal(pgw_enc_describe(&b, 'X', ""), PGW_EINVAL);
    assert_int_equal(pgw_enc_close(&b, 's', ""), PGW_EINVAL);
    assert_int_equal(pgw_enc_describe(&b, 'S', NULL), PGW_EINVAL);
    assert_int_equal(pgw_enc_execute(&b, "", -1), PGW_EINVAL);
    assert_int_equal(pgw_enc_execute(&b, NULL, 0), PGW_EINVAL);
    expect_unchanged(&b);
}

static void test_empty_messages(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    assert_int_equal(pgw_enc_sync(&b), 0);
    expect(&b, LIT("S\0\0\0\4"));
    b = fresh();
    assert_int_equal(pgw_enc_flush(&b), 0);
    expect(&b, LIT("H\0\0\0\4"));
    b = fresh();
    assert_int_equal(pgw_enc_copy_done(&b), 0);
    expect(&b, LIT("c\0\0\0\4"));
    b = fresh();
    assert_int_equal(pgw_enc_terminate(&b), 0);
    expect(&b, LIT("X\0\0\0\4"));
}

static void test_copy(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    assert_int_equal(pgw_enc_copy_data(&b, "1\tone\n", 6, 0), 0);
    expect(&b, LIT("d\0\0\0\0121\tone\n"));
    b = fresh();
    assert_int_equal(pgw_enc_copy_fail(&b, "bad row"), 0);
    expect(&b, LIT("f\0\0\0\014bad row\0"));

    b = fresh();
    assert_int_equal(pgw_enc_copy_data(&b, "abc", 3, 7), 0);
    assert_int_equal(b.len, 6 + 8);
    pgw_buf_free(&b);
    b = fresh();
    assert_int_equal(pgw_enc_copy_data(&b, "abc", 3, 6), PGW_ETOOBIG);
    assert_int_equal(pgw_enc_copy_data(&b, NULL, 3, 0), PGW_EINVAL);
    assert_int_equal(pgw_enc_copy_fail(&b, NULL), PGW_EINVAL);
    uint8_t *page = noaccess_page();
    assert_int_equal(pgw_enc_copy_data(&b, page, (size_t)INT32_MAX - 3, 0), PGW_ETOOBIG);
    expect_unchanged(&b);
    free_page(page);
}

/* ------------------------------------------------------------------------ */
/* All-or-nothing under allocation failure and buffer limits                */
/* ------------------------------------------------------------------------ */

static void test_no_partial_writes(void **state)
{
    (void)state;
    /* An empty buffer whose allocator always fails. */
    pgt_alloc_t failing;
    pgt_alloc_init(&failing);
    failing.fail_at = 1;
    failing.fail_rest = 1;
    pgw_buf_t b;
    pgw_buf_init(&b, &failing.base);
    const pgw_view_t params[] = {{(const uint8_t *)"1", 1}};
    const char *sp[] = {"user", "u"};
    assert_int_equal(pgw_enc_query(&b, "select 1", 8, 0), PGW_ENOMEM);
    assert_int_equal(pgw_enc_bind(&b, "", "", NULL, 0, params, 1, NULL, 0, 0), PGW_ENOMEM);
    assert_int_equal(pgw_enc_sync(&b), PGW_ENOMEM);
    assert_int_equal(pgw_enc_startup(&b, PGW_PROTO_3_0, sp, 1), PGW_ENOMEM);
    assert_int_equal(b.len, 0);
    assert_null(b.data);

    /* A buffer with a hard maximum: a message that does not fit entirely is
     * not written at all, and what fits still goes in afterwards. */
    pgw_buf_init(&b, NULL);
    b.max = 16;
    assert_int_equal(pgw_buf_append(&b, "0123456789", 10), 0);
    assert_int_equal(pgw_enc_query(&b, "select 1", 8, 0), PGW_ETOOBIG);
    assert_int_equal(pgw_enc_parse(&b, "", "x", 1, NULL, 0, 0), PGW_ETOOBIG);
    assert_int_equal(b.len, 10);
    assert_int_equal(pgw_enc_sync(&b), 0);
    assert_int_equal(b.len, 15);
    assert_memory_equal(b.data, "0123456789S\0\0\0\4", 15);
    pgw_msgw_t w;
    pgw_msgw_begin(&b, 'd', &w);
    pgw_msgw_bytes(&w, "abcdef", 6);
    assert_int_equal(pgw_msgw_end(&w, 0), PGW_ETOOBIG);
    assert_int_equal(b.len, 15);
    pgw_buf_free(&b);
}

/* ------------------------------------------------------------------------ */
/* Incremental writer                                                       */
/* ------------------------------------------------------------------------ */

static void test_msgw_matches_bind(void **state)
{
    (void)state;
    /* Build the same Bind twice: with pgw_enc_bind and piece by piece. */
    pgw_buf_t want = fresh();
    const pgw_view_t params[] = {{(const uint8_t *)"\0\0\0\052", 4}, {NULL, -1}};
    const int16_t pf[] = {1};
    assert_int_equal(pgw_enc_bind(&want, "", "s", pf, 1, params, 2, pf, 1, 0), 0);

    pgw_buf_t b = fresh();
    pgw_msgw_t w;
    pgw_msgw_begin(&b, 'B', &w);
    pgw_msgw_cstr(&w, "");
    pgw_msgw_cstr(&w, "s");
    pgw_msgw_i16(&w, 1);
    pgw_msgw_i16(&w, 1);
    pgw_msgw_i16(&w, 2);
    /* A length slot patched once the value is written, as value encoders do. */
    size_t slot = pgw_msgw_tell(&w);
    pgw_msgw_i32(&w, 0);
    uint8_t *v = pgw_msgw_reserve(&w, 4);
    assert_non_null(v);
    memcpy(v, "\0\0\0\052", 4);
    pgw_msgw_patch32(&w, slot, 4);
    pgw_msgw_i32(&w, -1);
    pgw_msgw_i16(&w, 1);
    pgw_msgw_u8(&w, 0);
    pgw_msgw_u8(&w, 1);
    assert_int_equal(pgw_msgw_end(&w, 0), 0);

    assert_int_equal(b.len, want.len);
    assert_memory_equal(b.data, want.data, want.len);
    pgw_buf_free(&b);
    pgw_buf_free(&want);
}

static void test_msgw_startup_family(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    pgw_msgw_t w;
    pgw_msgw_begin(&b, 0, &w);
    pgw_msgw_i32(&w, 80877103);
    assert_int_equal(pgw_msgw_end(&w, 0), 0);
    expect(&b, LIT("\0\0\0\010\x04\xd2\x16\x2f"));
}

static void test_msgw_failures(void **state)
{
    (void)state;
    pgw_buf_t b = fresh();
    pgw_msgw_t w;

    /* A recorded failure removes the message; later parts do nothing. */
    pgw_msgw_begin(&b, 'd', &w);
    pgw_msgw_bytes(&w, "abc", 3);
    pgw_msgw_fail(&w, PGW_ERANGE);
    pgw_msgw_bytes(&w, "def", 3);
    assert_null(pgw_msgw_reserve(&w, 1));
    pgw_msgw_fail(&w, PGW_EFORMAT); /* the first failure wins */
    assert_int_equal(pgw_msgw_end(&w, 0), PGW_ERANGE);
    assert_int_equal(b.len, 6);

    /* A NULL string. */
    pgw_msgw_begin(&b, 'Q', &w);
    pgw_msgw_cstr(&w, NULL);
    assert_int_equal(pgw_msgw_end(&w, 0), PGW_EINVAL);
    assert_int_equal(b.len, 6);

    /* The limit is checked at the end against the declared length. */
    pgw_msgw_begin(&b, 'd', &w);
    pgw_msgw_bytes(&w, "abcd", 4);
    assert_int_equal(pgw_msgw_end(&w, 7), PGW_ETOOBIG);
    assert_int_equal(b.len, 6);
    pgw_msgw_begin(&b, 'd', &w);
    pgw_msgw_bytes(&w, "abcd", 4);
    assert_int_equal(pgw_msgw_end(&w, 8), 0);
    assert_int_equal(b.len, 6 + 9);
    b.len = 6;

    /* Growth past INT32_MAX is refused before anything is allocated. */
    pgw_msgw_begin(&b, 'd', &w);
    assert_null(pgw_msgw_reserve(&w, (size_t)INT32_MAX));
    assert_int_equal(pgw_msgw_end(&w, 0), PGW_ETOOBIG);
    assert_int_equal(b.len, 6);
    assert_true(b.cap < 4096);

    /* Patching outside the message is refused. */
    pgw_msgw_begin(&b, 'd', &w);
    pgw_msgw_i32(&w, 0);
    pgw_msgw_patch32(&w, 0, 1);
    assert_int_equal(pgw_msgw_end(&w, 0), PGW_EINVAL);
    pgw_msgw_begin(&b, 'd', &w);
    pgw_msgw_i32(&w, 0);
    pgw_msgw_patch32(&w, pgw_msgw_tell(&w) - 3, 1);
    assert_int_equal(pgw_msgw_end(&w, 0), PGW_EINVAL);
    expect_unchanged(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_startup),
        cmocka_unit_test(test_startup_invalid),
        cmocka_unit_test(test_ssl_gss_cancel),
        cmocka_unit_test(test_password),
        cmocka_unit_test(test_sasl),
        cmocka_unit_test(test_query),
        cmocka_unit_test(test_query_limits),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_bind),
        cmocka_unit_test(test_bind_invalid),
        cmocka_unit_test(test_bind_too_big),
        cmocka_unit_test(test_describe_close_execute),
        cmocka_unit_test(test_empty_messages),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_no_partial_writes),
        cmocka_unit_test(test_msgw_matches_bind),
        cmocka_unit_test(test_msgw_startup_family),
        cmocka_unit_test(test_msgw_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
