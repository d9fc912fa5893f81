/*
 * Unit tests of pgw_scram_verifier: known answers computed independently
 * (Python's hashlib.pbkdf2_hmac / hmac, not OpenSSL), SASLprep of the
 * password as the server does it, the random salt, and bad arguments.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pgwire/auth.h"

static const uint8_t salt16[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* hashlib.pbkdf2_hmac('sha256', b'IX', bytes(range(16)), 4096) and so on. */
#define IX_VERIFIER                                                                \
    "SCRAM-SHA-256$4096:AAECAwQFBgcICQoLDA0ODw==$Hvybl93RfCHqfqLiTzsBHz9FA2JH0lY8" \
    "NzX3ES+JAB0=:36RFvraaEsq6EdU8f0zs6/hpb0vgxhjNZecZXSUZKgs="

static void test_known_answer_rfc7677_salt(void **state)
{
    /* The salt of RFC 7677's example, base64 W22ZaJ0SNY7soEsUEjb6gQ==. */
    static const uint8_t salt[] = {0x5b, 0x6d, 0x99, 0x68, 0x9d, 0x12, 0x35, 0x8e,
                                   0xec, 0xa0, 0x4b, 0x14, 0x12, 0x36, 0xfa, 0x81};
    char v[PGW_SCRAM_VERIFIER_MAX];
    assert_int_equal(pgw_scram_verifier(v, sizeof v, "pencil", 0, salt, sizeof salt, NULL), 0);
    assert_string_equal(v, "SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$"
                           "WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=:"
                           "wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=");
}

static void test_saslprep_applied(void **state)
{
    char v[PGW_SCRAM_VERIFIER_MAX];
    assert_int_equal(pgw_scram_verifier(v, sizeof v, "IX", 4096, salt16, 16, NULL), 0);
    assert_string_equal(v, IX_VERIFIER);
    /* SOFT HYPHEN maps to nothing; ROMAN NUMERAL NINE normalises (NFKC) to
     * "IX": the server stores the same verifier for all three. */
    assert_int_equal(pgw_scram_verifier(v, sizeof v,
                                        "I\xC2\xAD"
                                        "X",
                                        4096, salt16, 16, NULL),
                     0);
    assert_string_equal(v, IX_VERIFIER);
    assert_int_equal(pgw_scram_verifier(v, sizeof v, "\xE2\x85\xA8", 4096, salt16, 16, NULL), 0);
    assert_string_equal(v, IX_VERIFIER);
}

static void test_invalid_utf8_used_raw(void **state)
{
    char v[PGW_SCRAM_VERIFIER_MAX];
    assert_int_equal(pgw_scram_verifier(v, sizeof v, "\xFF\xFEpw", 10, salt16, 16, NULL), 0);
    assert_string_equal(v, "SCRAM-SHA-256$10:AAECAwQFBgcICQoLDA0ODw==$"
                           "27Im8C8zAUDjfrRM/AmR51GqWqHmGe5iJviv73qDHig=:"
                           "4q+DqMJIQrq3KG/wxNQX1sSy6yRVulObWIS6uhavSUA=");
}

static void test_random_salt(void **state)
{
    char a[PGW_SCRAM_VERIFIER_MAX], b[PGW_SCRAM_VERIFIER_MAX];
    assert_int_equal(pgw_scram_verifier(a, sizeof a, "secret", 0, NULL, 0, NULL), 0);
    assert_int_equal(pgw_scram_verifier(b, sizeof b, "secret", 0, NULL, 0, NULL), 0);
    assert_string_not_equal(a, b);
    /* "SCRAM-SHA-256$4096:" + 24 base64 characters of a 16-byte salt + "$" */
    assert_int_equal(strncmp(a, "SCRAM-SHA-256$4096:", 19), 0);
    assert_int_equal(a[19 + 24], '$');
    assert_int_equal(strlen(a), 19 + 24 + 1 + 44 + 1 + 44);
}

static void test_bad_arguments(void **state)
{
    char v[PGW_SCRAM_VERIFIER_MAX];
    uint8_t big[PGW_SCRAM_SALT_LEN_MAX + 1] = {0};
    assert_int_equal(pgw_scram_verifier(NULL, 10, "pw", 0, NULL, 0, NULL), PGW_EINVAL);
    assert_int_equal(pgw_scram_verifier(v, sizeof v, NULL, 0, NULL, 0, NULL), PGW_EINVAL);
    assert_string_equal(v, "");
    assert_int_equal(pgw_scram_verifier(v, sizeof v, "pw", -1, NULL, 0, NULL), PGW_EINVAL);
    assert_int_equal(pgw_scram_verifier(v, sizeof v, "pw", 0, NULL, 4, NULL), PGW_EINVAL);
    assert_int_equal(pgw_scram_verifier(v, sizeof v, "pw", 0, salt16, 0, NULL), PGW_EINVAL);
    assert_int_equal(pgw_scram_verifier(v, sizeof v, "pw", 0, big, sizeof big, NULL), PGW_EINVAL);
    assert_int_equal(pgw_scram_verifier(v, 0, "pw", 0, NULL, 0, NULL), PGW_EINVAL);
    /* Too small a buffer: nothing partial is left behind. */
    assert_int_equal(pgw_scram_verifier(v, 40, "IX", 4096, salt16, 16, NULL), PGW_EINVAL);
    assert_string_equal(v, "");
    /* The largest salt fits PGW_SCRAM_VERIFIER_MAX. */
    assert_int_equal(pgw_scram_verifier(v, sizeof v, "pw", 1, big, PGW_SCRAM_SALT_LEN_MAX, NULL),
                     0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_answer_rfc7677_salt),
        cmocka_unit_test(test_saslprep_applied),
        cmocka_unit_test(test_invalid_utf8_used_raw),
        cmocka_unit_test(test_random_salt),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
