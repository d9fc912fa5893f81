/*
 * Escaping in several client encodings, of valid and invalid input:
 * PQescapeLiteral, PQescapeIdentifier, PQescapeStringConn (its error flag and
 * PQerrorMessage), PQescapeByteaConn, the connectionless PQescapeString and
 * PQescapeBytea, PQunescapeBytea of the hex and escape formats and of bad
 * input; PQmblen, PQmblenBounded, PQdsplen; PQsetClientEncoding,
 * PQclientEncoding, pg_encoding_to_char, pg_char_to_encoding, PQenv2encoding;
 * standard_conforming_strings off.
 */
#include "pqdiff.h"

static const struct {
    const char *s;
    size_t len;
} inputs[] = {
    {"plain", 5},
    {"it's", 4},
    {"back\\slash", 10},
    {"both ' and \\ and \"", 18},
    {"\"quoted\"", 8},
    {"caf\xc3\xa9", 5},       /* UTF-8 é */
    {"cut \xc3", 5},          /* truncated UTF-8 */
    {"bad \xff\xfe end", 10}, /* invalid in UTF-8 */
    {"sjis \x95\x5c", 7},     /* SJIS: 0x5c as a trail byte */
    {"euc \xa4\xa2", 6},      /* EUC-JP あ */
    {"mark \x8d end", 10},    /* 0x8d 0x20: libpq's invalid-character mark */
    {"nul\0inside", 10},      /* stops at NUL */
    {"len limits", 3},        /* only "len" */
    {"", 0},
};

static void escape_all(PGconn *conn)
{
    printf("-- client_encoding=%s (%d) std_strings=%s\n",
           pg_encoding_to_char(PQclientEncoding(conn)), PQclientEncoding(conn),
           PQparameterStatus(conn, "standard_conforming_strings"));
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        const char *s = inputs[i].s;
        size_t len = inputs[i].len;
        pqd_print_escapes(conn, s, len);
        size_t blen = 0;
        unsigned char *b = PQescapeByteaConn(conn, (const unsigned char *)s, len, &blen);
        printf("  byteaConn len=%zu", blen);
        pqd_print_str(" out", (const char *)b);
        if (b) {
            size_t ulen = 0;
            unsigned char *u = PQunescapeBytea(b, &ulen);
            printf("  unescaped len=%zu same=%d\n", ulen, u && ulen == len && !memcmp(u, s, len));
            PQfreemem(u);
        }
        PQfreemem(b);
        /* Round trip through the server for the literal when it was valid. */
        char *lit = PQescapeLiteral(conn, s, len);
        if (lit) {
            char sql[256];
            snprintf(sql, sizeof sql, "SELECT %s = %s AS same, length(%s) AS len", lit, lit, lit);
            pqd_show("  server", PQexec(conn, sql));
        }
        PQfreemem(lit);
    }
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect();
    const char *encodings[] = {"UTF8",    "SQL_ASCII", "LATIN1", "SJIS", "EUC_JP",
                               "GB18030", "BIG5",      "GBK",    "UHC",  "no_such_encoding"};
    escape_all(conn);
    for (size_t i = 0; i < sizeof encodings / sizeof encodings[0]; i++) {
        int rc = PQsetClientEncoding(conn, encodings[i]);
        printf("setClientEncoding(%s) -> %d, clientEncoding %d\n", encodings[i], rc,
               PQclientEncoding(conn));
        if (PQclientEncoding(conn) >= 0 && strcmp(encodings[i], "no_such_encoding") != 0)
            escape_all(conn);
        else
            pqd_print_str("error", PQerrorMessage(conn));
    }
    /* The encoding a SET reports (ParameterStatus), not only the one asked
     * for with PQsetClientEncoding. */
    pqd_exec(conn, "SET client_encoding = 'LATIN9'");
    printf("after SET: clientEncoding %d\n", PQclientEncoding(conn));
    pqd_exec(conn, "RESET client_encoding");
    printf("after RESET: clientEncoding %d\n", PQclientEncoding(conn));
    PQsetClientEncoding(conn, "UTF8");
    pqd_exec(conn, "SET standard_conforming_strings = off");
    escape_all(conn);
    /* The connectionless functions use the last connection's settings. */
    char buf[64];
    printf("escapeString -> %zu", PQescapeString(buf, "a'b\\c", 5));
    pqd_print_str(" out", buf);
    size_t blen;
    unsigned char *b = PQescapeBytea((const unsigned char *)"\x00\x01'\\", 4, &blen);
    printf("escapeBytea len=%zu", blen);
    pqd_print_str(" out", (const char *)b);
    PQfreemem(b);
    pqd_exec(conn, "SET standard_conforming_strings = on");

    const char *escaped[] = {"\\x00ff41", "\\x00FF4", "\\xzz", "abc\\000\\101\\\\x",
                             "\\",        "a\\8",     "",      "\\x",
                             "\\\\\\",    "plain"};
    for (size_t i = 0; i < sizeof escaped / sizeof escaped[0]; i++) {
        size_t ulen = 12345;
        unsigned char *u = PQunescapeBytea((const unsigned char *)escaped[i], &ulen);
        printf("unescape(%s) -> ", escaped[i]);
        if (!u) {
            printf("NULL\n");
            continue;
        }
        printf("len=%zu hex=", ulen);
        pqd_print_hex((const char *)u, ulen);
        putchar('\n');
        PQfreemem(u);
    }
    const char *names[] = {"UTF8", "utf8", "utf-8", "LATIN1", "SQL_ASCII", "win1252", "bogus", ""};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int id = pg_char_to_encoding(names[i]);
        printf("encoding %s -> %d -> %s valid_server=%d\n", names[i], id, pg_encoding_to_char(id),
               pg_valid_server_encoding_id(id));
    }
    printf("env2encoding -> %d\n", PQenv2encoding());
    printf("isthreadsafe -> %d\n", PQisthreadsafe());
    PQfinish(conn);
    return 0;
}
