/*
 * Escaping of random input in many client encodings: PQescapeLiteral,
 * PQescapeIdentifier, PQescapeStringConn (with its error flag and
 * PQerrorMessage), PQmblen, PQmblenBounded and PQdsplen at every byte, of
 * byte strings drawn (from a fixed seed) from what the escaping functions
 * treat differently: quotes, backslashes, NUL, ASCII, and high bytes that
 * form valid, truncated or invalid multibyte characters in one encoding or
 * another (a 0x5c trail byte in SJIS, BIG5 and GBK among them). escape.c
 * has the named cases; this one looks for the cases nobody named.
 * PQDIFF_ESCAPE_SEED (default 20261204) picks the inputs.
 */
#include "pqdiff.h"

#include <stdint.h>

#define INPUTS  300
#define MAX_LEN 12

static uint64_t rng;

static unsigned next(unsigned n)
{
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (unsigned)(rng >> 33) % n;
}

/* One byte, biased toward the bytes the escaping looks at. */
static char random_byte(void)
{
    static const char special[] = {'\'', '\\', '"', 'a', ' ', '\0', 0x5c, 0x7f};
    switch (next(4)) {
    case 0:
        return special[next(sizeof special)];
    case 1:
        return (char)(0x20 + next(0x5f));
    case 2:
        return (char)(0x80 + next(0x40)); /* continuation / lead in the legacy sets */
    default:
        return (char)(0xc0 + next(0x40)); /* leads */
    }
}

static void escape_random(PGconn *conn)
{
    printf("-- client_encoding=%s\n", pg_encoding_to_char(PQclientEncoding(conn)));
    for (int i = 0; i < INPUTS; i++) {
        char s[MAX_LEN + 1];
        size_t len = next(MAX_LEN + 1);
        for (size_t k = 0; k < len; k++)
            s[k] = random_byte();
        s[len] = '\0';
        pqd_print_escapes(conn, s, len);
    }
}

int main(void)
{
    pqd_init();
    rng = strtoull(pqd_env("PQDIFF_ESCAPE_SEED", "20261204"), NULL, 10);
    PGconn *conn = pqd_connect();
    const char *encodings[] = {"UTF8",    "SQL_ASCII", "LATIN1",  "SJIS",  "EUC_JP",
                               "GB18030", "BIG5",      "GBK",     "UHC",   "EUC_KR",
                               "JOHAB",   "EUC_TW",    "WIN1252", "KOI8R", "EUC_CN"};
    for (size_t i = 0; i < sizeof encodings / sizeof encodings[0]; i++) {
        int rc = PQsetClientEncoding(conn, encodings[i]);
        printf("setClientEncoding(%s) -> %d\n", encodings[i], rc);
        if (rc == 0)
            escape_random(conn);
        else
            pqd_print_str("error", PQerrorMessage(conn));
    }
    PQfinish(conn);
    return 0;
}
