/*
 * The SQL words that change how the session sends a statement
 * (pgw__sql_words, session/stmt.c): whole words in any case, by ASCII
 * rules, inside literals and comments too; and the words that begin
 * statements (pgw__sql_may_copy).
 */
#include "session/session_internal.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static unsigned words(const char *sql)
{
    return pgw__sql_words(sql, strlen(sql));
}

static void test_words_found(void **state)
{
    (void)state;
    assert_int_equal(words("COPY t FROM STDIN"), PGW__SQL_COPY);
    assert_int_equal(words("select 1;copy t to stdout"), PGW__SQL_COPY);
    assert_int_equal(words("START_REPLICATION SLOT s LOGICAL 0/0"), PGW__SQL_COPY);
    assert_int_equal(words("PREPARE p AS SELECT 1"), PGW__SQL_REPLACES);
    assert_int_equal(words("DeAllocate ALL"), PGW__SQL_REPLACES);
    assert_int_equal(words("discard all"), PGW__SQL_REPLACES);
    assert_int_equal(words("prepare p as select 1; copy t from stdin"),
                     PGW__SQL_REPLACES | PGW__SQL_COPY);
    /* an over-approximation: a literal or a comment counts */
    assert_int_equal(words("SELECT 'copy'"), PGW__SQL_COPY);
    assert_int_equal(words("SELECT 1 -- discard"), PGW__SQL_REPLACES);
    /* the SQL's length bounds the scan, not its NUL */
    assert_int_equal(pgw__sql_words("copy", 3), 0);
    assert_int_equal(pgw__sql_words("copying", 4), PGW__SQL_COPY);
}

static bool may_copy(const char *sql, bool one)
{
    return pgw__sql_may_copy(sql, strlen(sql), one);
}

/* One statement of a Parse: COPY only as its first word. */
static void test_may_copy_one(void **state)
{
    (void)state;
    assert_true(may_copy("COPY t FROM STDIN", true));
    assert_true(may_copy(" \t\r\n\f\vcopy t from stdin", true));
    assert_true(may_copy("CoPy(t)", true));
    assert_true(may_copy("copy", true));
    assert_true(may_copy("START_REPLICATION 0/0", true));
    assert_false(may_copy("", true));
    assert_false(may_copy("   ", true));
    assert_false(may_copy("cop", true));
    assert_false(may_copy("copying", true));
    assert_false(may_copy("copy_t", true));
    assert_false(may_copy("SELECT copy FROM t", true));
    assert_false(may_copy("SELECT 'COPY t FROM STDIN'", true));
    assert_false(may_copy("(copy)", true));
    assert_false(may_copy("SELECT 1; COPY t FROM STDIN", true)); /* one statement */
    /* a leading comment: the whole text decides */
    assert_true(may_copy("-- load\nCOPY t FROM STDIN", true));
    assert_true(may_copy("/* a /* nested */ one */ copy t from stdin", true));
    assert_false(may_copy("-- nothing\nSELECT 1", true));
    assert_false(may_copy("-", true));
    assert_false(may_copy("/", true));
    assert_false(may_copy("- copy", true)); /* not a comment: "-" is the first token */
    /* the length bounds the SQL, not its NUL */
    assert_false(pgw__sql_may_copy("copy", 3, true));
    assert_false(pgw__sql_may_copy("-- x\ncopy", 2, true));
}

/* A simple query's list: COPY as the first word of any statement. */
static void test_may_copy_list(void **state)
{
    (void)state;
    assert_true(may_copy("COPY t FROM STDIN", false));
    assert_true(may_copy("SELECT 1;COPY t FROM STDIN", false));
    assert_true(may_copy("SELECT 1; \n copy t to stdout; SELECT 2", false));
    assert_true(may_copy("BEGIN; SELECT 1; START_REPLICATION 0/0", false));
    assert_true(may_copy("SELECT 1; -- then\nCOPY t FROM STDIN", false));
    assert_true(may_copy("SELECT 1; /* then */ COPY t FROM STDIN", false));
    /* a ';' inside a literal or comment does not hide the real one */
    assert_true(may_copy("SELECT ';' ; COPY t FROM STDIN", false));
    assert_true(may_copy("SELECT 1 /* ; */ ; COPY t FROM STDIN", false));
    assert_true(may_copy("SELECT $$;$$;COPY t FROM STDIN", false));
    /* and one after it counts: an over-approximation */
    assert_true(may_copy("SELECT ';copy'", false));
    assert_false(may_copy("SELECT copy FROM t", false));
    assert_false(may_copy("SELECT 1; SELECT copy FROM t;", false));
    assert_false(may_copy("UPDATE t SET copy = 1; DELETE FROM copy", false));
    assert_false(may_copy(";;;", false));
    assert_false(pgw__sql_may_copy("SELECT 1;copy", 10, false));
}

static void test_words_whole_only(void **state)
{
    (void)state;
    assert_int_equal(words(""), 0);
    assert_int_equal(words("SELECT 1"), 0);
    assert_int_equal(words("SELECT copy_id, xcopy, copy2, copy$, _copy FROM t"), 0);
    assert_int_equal(words("SELECT prepared, discarded, deallocated"), 0);
    assert_int_equal(words("SELECT start_replication_x"), 0);
    /* bytes from 0x80 are word characters (an identifier in UTF-8) */
    assert_int_equal(words("SELECT \303\251copy"), 0); /* octal: \xa9c would be one escape */
    assert_int_equal(words("SELECT copy\xc3\xa9"), 0);
    /* every other ASCII byte separates words */
    assert_int_equal(words("(copy)"), PGW__SQL_COPY);
    assert_int_equal(words("\"copy\""), PGW__SQL_COPY);
    assert_int_equal(words("x.copy.y"), PGW__SQL_COPY);
    assert_int_equal(words("\tcopy\n"), PGW__SQL_COPY);
    assert_int_equal(words("@copy`"), PGW__SQL_COPY);
    assert_int_equal(words("[copy]{discard}"), PGW__SQL_COPY | PGW__SQL_REPLACES);
}

/* The rule written plainly, to check the scan against: words are the
 * longest runs of a-z, A-Z, 0-9, _, $ and bytes from 0x80; a word that is
 * a keyword, in any case, sets its bit. */
static int word_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c >= 0x80;
}

static unsigned char tolower_ascii(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + ('a' - 'A')) : c;
}

static unsigned reference(const unsigned char *sql, size_t len)
{
    static const struct {
        const char *word;
        unsigned bit;
    } keywords[] = {{"copy", PGW__SQL_COPY},
                    {"start_replication", PGW__SQL_COPY},
                    {"prepare", PGW__SQL_REPLACES},
                    {"discard", PGW__SQL_REPLACES},
                    {"deallocate", PGW__SQL_REPLACES}};
    unsigned words = 0;
    for (size_t i = 0; i < len;) {
        if (!word_byte(sql[i])) {
            i++;
            continue;
        }
        size_t n = 0;
        while (i + n < len && word_byte(sql[i + n]))
            n++;
        for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++) {
            const char *w = keywords[k].word;
            size_t j = 0;
            while (j < n && w[j] && tolower_ascii(sql[i + j]) == (unsigned char)w[j])
                j++;
            if (j == n && !w[j]) words |= keywords[k].bit;
        }
        i += n;
    }
    return words;
}

/* The scan of exactly len bytes copied into an allocation of their own
 * (under ASan a read past the end is an error). */
static unsigned scanned(const unsigned char *sql, size_t len)
{
    unsigned char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    if (len) memcpy(copy, sql, len);
    unsigned words = pgw__sql_words((const char *)copy, len);
    free(copy);
    return words;
}

/* Each keyword, in three cases, at every offset within 8 bytes, with every
 * byte value before and after it: found exactly when both are separators,
 * or the keyword begins or ends the SQL. */
static void test_words_every_neighbour(void **state)
{
    (void)state;
    static const char *const spelled[] = {
        "copy",    "COPY",       "CoPy",       "prepare",           "PREPARE",          "discard",
        "DisCard", "deallocate", "DEALLOCATE", "start_replication", "START_REPLICATION"};
    unsigned char buf[64];
    for (size_t k = 0; k < sizeof spelled / sizeof *spelled; k++) {
        size_t n = strlen(spelled[k]);
        unsigned bit = reference((const unsigned char *)spelled[k], n);
        assert_int_not_equal(bit, 0);
        for (size_t off = 0; off < 9; off++) {
            for (unsigned b = 0; b < 256; b++) {
                /* b before the keyword */
                memset(buf, ' ', off);
                if (off) buf[off - 1] = (unsigned char)b;
                memcpy(buf + off, spelled[k], n);
                unsigned want = off && word_byte((unsigned char)b) ? 0 : bit;
                assert_int_equal(scanned(buf, off + n), want);
                assert_int_equal(scanned(buf, off + n), reference(buf, off + n));
                /* b after it, then the end or more bytes */
                buf[off + n] = (unsigned char)b;
                memset(buf + off + n + 1, ' ', 8);
                if (off) buf[off - 1] = ' ';
                want = word_byte((unsigned char)b) ? 0 : bit;
                assert_int_equal(scanned(buf, off + n + 1), want);
                assert_int_equal(scanned(buf, off + n + 1 + off), want);
                /* cut short: not the keyword */
                assert_int_equal(scanned(buf, off + n - 1), 0);
            }
        }
    }
}

/* Each keyword at every offset of the first three 16-byte chunks (the
 * scan's steps): found whether it ends the SQL or spaces follow it, so a
 * keyword whose first letter ends a chunk is not missed. */
static void test_words_every_offset(void **state)
{
    (void)state;
    static const char *const spelled[] = {"copy", "Deallocate", "dIscard", "PRepare",
                                          "start_REPLICATION"};
    unsigned char buf[96];
    for (size_t k = 0; k < sizeof spelled / sizeof *spelled; k++) {
        size_t n = strlen(spelled[k]);
        unsigned bit = reference((const unsigned char *)spelled[k], n);
        for (size_t off = 0; off < 48; off++) {
            memset(buf, ' ', sizeof buf);
            memcpy(buf + off, spelled[k], n);
            assert_int_equal(scanned(buf, off + n), bit);
            assert_int_equal(scanned(buf, off + n + 7), bit);
            /* its first letter alone is no keyword */
            assert_int_equal(scanned(buf, off + 1), 0);
        }
    }
}

/* SQL made of pieces that meet in every way (keywords, their prefixes and
 * extensions, separators, word bytes of every class, high bytes), scanned
 * whole and cut at every length: the same words as the plain rule. */
static void test_words_random(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        "copy",    "COPY",        "Copy",       "cop",     "opy",
        "prepare", "prepar",      "PREPARE",    "discard", "discar",
        "DISCARD", "deallocate",  "DEALLOCATE", "dealloc", "start_replication",
        "START_",  "replication", "c",          "d",       "p",
        "s",       "C",           "D",          "P",       "S",
        "e",       "b",           "r",          "t",       "_",
        "$",       "0",           "9",          " ",       "\t",
        ";",       "'",           "\"",         "(",       ")",
        ".",       "@",           "`",          "[",       "\x7f",
        "\x80",    "\xc3\xa9",    "\xff",       "\x03",    "\x01",
        "\x02",    "\x43",        "\x63"};
    uint64_t seed = UINT64_C(0x9e3779b97f4a7c15);
    unsigned char sql[200];
    unsigned found = 0;
    for (int iter = 0; iter < 20000; iter++) {
        size_t len = 0;
        seed = seed * UINT64_C(6364136223846793005) + 1442695040888963407u;
        size_t npieces = (size_t)(seed >> 59);
        for (size_t i = 0; i < npieces; i++) {
            seed = seed * UINT64_C(6364136223846793005) + 1442695040888963407u;
            const char *piece = pieces[(seed >> 33) % (sizeof pieces / sizeof *pieces)];
            size_t n = strlen(piece);
            if (len + n > sizeof sql) break;
            memcpy(sql + len, piece, n);
            len += n;
        }
        for (size_t cut = 0; cut <= len; cut++) {
            unsigned want = reference(sql, cut);
            assert_int_equal(scanned(sql, cut), want);
            found |= want;
        }
    }
    /* the pieces did make both kinds of word */
    assert_int_equal(found, PGW__SQL_COPY | PGW__SQL_REPLACES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_words_found),           cmocka_unit_test(test_words_whole_only),
        cmocka_unit_test(test_words_every_neighbour), cmocka_unit_test(test_words_every_offset),
        cmocka_unit_test(test_words_random),          cmocka_unit_test(test_may_copy_one),
        cmocka_unit_test(test_may_copy_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
