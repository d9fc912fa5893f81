/*
 * Fuzz target for the SCRAM client's parsing of server messages and for
 * SASLprep. Input layout: byte 0 selects the mode, the rest is split at the
 * first 0x00 byte into server-first and server-final (SCRAM modes), or is the
 * password (SASLprep mode). The iteration count a fuzzer can reach is bounded
 * by the library's own limit, so inputs asking for millions of rounds are
 * rewritten to a small count to keep the fuzzer fast.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NONCE "rOprNGfwEbeRWgbNEkqO"

static void fuzz_saslprep(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    if (!in) return;
    memcpy(in, data, size);
    in[size] = '\0';
    char *out = NULL;
    if (pgw__saslprep(NULL, in, &out) == 0) {
        /* Its own output prepared again is unchanged (NFKC and the mappings
         * are idempotent) or refused: the checks look at the mapped input,
         * as PostgreSQL's do, and NFKC can break the bidi rule (U+FB1D ends
         * in a combining mark once decomposed). */
        char *again = NULL;
        int rc = pgw__saslprep(NULL, out, &again);
        if (rc == 0 ? strcmp(out, again) != 0 : rc != PGW_EINVAL) abort();
        free(again);
    }
    free(out);
    free(in);
}

/* Cap i=<digits> at 4 digits so no input costs more than ~10k PBKDF2 rounds. */
static void cap_iterations(uint8_t *msg, size_t len)
{
    for (size_t i = 0; i + 2 < len; i++) {
        if (msg[i] != 'i' || msg[i + 1] != '=' || (i > 0 && msg[i - 1] != ',')) continue;
        size_t digits = 0;
        while (i + 2 + digits < len && msg[i + 2 + digits] >= '0' && msg[i + 2 + digits] <= '9')
            digits++;
        if (digits > 4) memset(msg + i + 2, '9', digits), msg[i + 2] = 'x';
    }
}

static void fuzz_exchange(int mode, const uint8_t *data, size_t size)
{
    static const uint8_t cb[32] = {1, 2, 3};
    const uint8_t *sep = memchr(data, 0, size);
    size_t first_len = sep ? (size_t)(sep - data) : size;
    const uint8_t *final = sep ? sep + 1 : data + size;
    size_t final_len = size - first_len - (sep ? 1 : 0);

    uint8_t *first = malloc(first_len + 1);
    if (!first) return;
    memcpy(first, data, first_len);
    cap_iterations(first, first_len);

    pgw__scram_t *s = NULL;
    const char *mech = mode & 1 ? "SCRAM-SHA-256-PLUS" : "SCRAM-SHA-256";
    if (pgw__scram_new(&s, NULL, "pencil", mech, cb, sizeof cb, mode & 2) != 0) abort();
    if (pgw__scram_set_nonce(s, FUZZ_NONCE) != 0) abort();
    pgw_buf_t out;
    pgw_buf_init(&out, NULL);
    if (pgw__scram_client_first(s, &out) != 0) abort();
    pgw_buf_reset(&out);
    int rc = pgw__scram_client_final(s, first, first_len, &out);
    if (rc != 0 && rc != PGW_EAUTH) abort();
    if (rc == PGW_EAUTH && out.len != 0) abort();
    rc = pgw__scram_verify_final(s, final, final_len);
    if (rc != 0 && rc != PGW_EAUTH) abort();
    pgw__scram_free(s);
    pgw_buf_free(&out);
    free(first);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    int mode = data[0] & 7;
    if (mode >= 4)
        fuzz_saslprep(data + 1, size - 1);
    else
        fuzz_exchange(mode, data + 1, size - 1);
    return 0;
}
