/*
 * Escaping of random input in many client encodings: PQescapeLiteral,
 * PQescapeIdentifier, PQescapeStringConn (with its error flag and
 * PQerrorMessage), PQmblen, PQmblenBounded and PQdsplen at every byte, of
 * byte strings drawn (from a fixed seed) from what the escaping functions
 * treat differently: quotes, backslashes, NUL, ASCII, and high bytes that
 * form valid, truncated or invalid multibyte characters in one encoding or
 * another (a 0x5c trail byte in SJIS, BIG5 and GBK among them). escape.c
 * has the named cases; this one looks for the cases nobody named. Then
 * PQunescapeBytea of random strings of backslashes, "x", digits and hex
 * letters (both formats, well and badly formed), and PQescapeByteaConn of
 * random bytes with standard_conforming_strings on and off.
 * PQDIFF_ESCAPE_SEED (default 20261204) picks the inputs.
 */
#include "pqdiff.h"

#define INPUTS  300
#define MAX_LEN 12

/* One byte, biased toward the bytes the escaping looks at. */
static char random_byte(void)
{
    static const char special[] = {'\'', '\\', '"', 'a', ' ', '\0', 0x5c, 0x7f};
    switch (pqd_next(4)) {
    case 0:
        return special[pqd_next(sizeof special)];
    case 1:
        return (char)(0x20 + pqd_next(0x5f));
    case 2:
        return (char)(0x80 + pqd_next(0x40)); /* continuation / lead in the legacy sets */
    default:
        return (char)(0xc0 + pqd_next(0x40)); /* leads */
    }
}

static void escape_random(PGconn *conn)
{
    printf("-- client_encoding=%s\n", pg_encoding_to_char(PQclientEncoding(conn)));
    for (int i = 0; i < INPUTS; i++) {
        /* PQmblen and PQdsplen read a whole character at every byte, as
         * libpq's do, past the NUL at the end: zeros there, in the buffer */
        char s[MAX_LEN + 4];
        memset(s, 0, sizeof s);
        size_t len = pqd_next(MAX_LEN + 1);
        for (size_t k = 0; k < len; k++)
            s[k] = random_byte();
        pqd_print_escapes(conn, s, len);
    }
}

static void bytea_random(PGconn *conn)
{
    static const char alphabet[] = "\\\\x0178aAfFg' ";
    for (int i = 0; i < INPUTS; i++) {
        char s[MAX_LEN + 1];
        size_t len = pqd_next(MAX_LEN + 1), k = 0;
        if (len >= 2 && pqd_next(3) == 0) { /* the hex format's prefix */
            s[k++] = '\\';
            s[k++] = 'x';
        }
        for (; k < len; k++)
            s[k] = alphabet[pqd_next(sizeof alphabet - 1)];
        s[len] = '\0';
        size_t ulen = 12345;
        unsigned char *u = PQunescapeBytea((const unsigned char *)s, &ulen);
        printf("unescape ");
        pqd_print_escaped(s, len);
        if (u) {
            printf(" -> len=%zu hex=", ulen);
            pqd_print_hex((const char *)u, ulen);
            putchar('\n');
        } else {
            printf(" -> NULL\n");
        }
        PQfreemem(u);
    }
    const char *std[] = {"on", "off"};
    for (size_t m = 0; m < 2; m++) {
        char set[64];
        snprintf(set, sizeof set, "SET standard_conforming_strings = %s", std[m]);
        pqd_exec(conn, set);
        for (int i = 0; i < INPUTS / 3; i++) {
            unsigned char b[MAX_LEN];
            size_t len = pqd_next(MAX_LEN + 1);
            for (size_t k = 0; k < len; k++)
                b[k] = (unsigned char)random_byte();
            size_t elen = 0;
            unsigned char *e = PQescapeByteaConn(conn, b, len, &elen);
            printf("escapeBytea std=%s ", std[m]);
            pqd_print_hex((const char *)b, len);
            printf(" -> len=%zu", elen);
            pqd_print_str(" out", (const char *)e);
            PQfreemem(e);
        }
    }
}

int main(void)
{
    pqd_init();
    pqd_seed("PQDIFF_ESCAPE_SEED", "20261204");
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
    bytea_random(conn);
    PQfinish(conn);
    return 0;
}
