/*
 * libpgwire-pq's encodings, numbered as libpq's pg_enc (the value of
 * PQclientEncoding): character lengths, display widths and validity per
 * encoding, as libpq's src/common/wchar.c. Only src/pq includes it.
 */
#ifndef PGW_PQ_ENCODING_H
#define PGW_PQ_ENCODING_H

#define PQ_ENC_SQL_ASCII 0
#define PQ_ENC_UTF8      6

/* Bytes of the character at s in encoding (an unknown encoding is read as
 * SQL_ASCII): libpq's pg_encoding_mblen. */
int pq__enc_mblen(int encoding, const char *s);
/* The character at s is valid and all of its len bytes (at most the
 * remaining input) are there: its length, else -1 (pg_encoding_verifymbchar). */
int pq__enc_verifychar(int encoding, const char *s, int len);
/* The length of the valid prefix of s[0..len) (pg_encoding_verifymbstr). */
int pq__enc_verifystr(int encoding, const char *s, int len);
/* Writes two bytes at dst that read as one character of length 2 but are
 * invalid (pg_encoding_set_invalid): an escaped string's bad input. */
void pq__enc_set_invalid(int encoding, char *dst);

#endif
