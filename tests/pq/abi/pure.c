/*
 * The functions of libpgwire-pq's results half that need no server, run
 * against libpq: encodings (names, PQmblen, PQmblenBounded, PQdsplen on
 * every lead byte of every encoding and on every Unicode code point),
 * PQescapeString, PQescapeBytea, PQunescapeBytea, PQencryptPassword,
 * PQExpBuffer (broken buffers included) and PGresults built by hand
 * (PQmakeEmptyPGresult, PQsetResultAttrs, PQsetvalue, PQcopyResult,
 * PQfnumber and every accessor). Built against libpq's headers and linked
 * with libpq; run-diff.sh runs it on libpq and on libpgwire-pq and compares
 * what it prints.
 */
#include <libpq-fe.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef pg_attribute_printf
#define pg_attribute_printf(f, a) __attribute__((format(printf, f, a)))
#endif
#include <pqexpbuffer.h>

/* Exported by libpq, declared in none of its public headers. */
extern int pg_valid_server_encoding(const char *name);
extern int pg_utf_mblen(const unsigned char *s);

static void print_bytes(const char *label, const unsigned char *p, size_t n)
{
    printf("%s[", label);
    for (size_t i = 0; i < n; i++)
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
            putchar(p[i]);
        else
            printf("\\x%02x", p[i]);
    printf("] len=%zu\n", n);
}

/* ------------------------------------------------------------ encodings */

static void encodings(void)
{
    static const char *names[] = {
        "UTF8",
        "utf-8",
        "Unicode",
        "LATIN1",
        "iso_8859-1",
        "ISO-8859-15",
        "win1252",
        "Windows-1251",
        "SJIS",
        "Shift_JIS",
        "shiftjis2004",
        "EUC_JP",
        "euc-jis-2004",
        "GB18030",
        "gbk",
        "BIG5",
        "UHC",
        "JOHAB",
        "MULE_INTERNAL",
        "SQL_ASCII",
        "sqlascii",
        "koi8",
        "KOI8-U",
        "tcvn5712",
        "abc",
        "vscii",
        "alt",
        "win",
        "mskanji",
        "latin10",
        "",
        "nonsense",
        "utf",
        "utf88",
        "-u-t-f-8-",
        "UTF8UTF8UTF8UTF8UTF8UTF8UTF8UTF8UTF8UTF8UTF8UTF8UTF8UTF8",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        printf("name [%s] -> %d server=%d\n", names[i], pg_char_to_encoding(names[i]),
               pg_valid_server_encoding(names[i]));
    printf("name NULL -> %d\n", pg_char_to_encoding(NULL));
    for (int e = -2; e <= 45; e++)
        printf("id %d -> [%s] server=%d\n", e, pg_encoding_to_char(e),
               pg_valid_server_encoding_id(e));
    /* Every lead byte, with several next bytes, in every encoding. */
    static const unsigned char next[] = {0x00, 0x30, 0x41, 0x81, 0xa1, 0xff};
    for (int e = -1; e <= 42; e++)
        for (size_t k = 0; k < sizeof next; k++) {
            printf("enc %d next %02x mblen/bounded/dsplen:", e, next[k]);
            for (int b = 0; b < 256; b++) {
                char s[6] = {(char)b, (char)next[k], (char)0x81, (char)0x30, (char)0xa1, 0};
                printf(" %d/%d/%d", PQmblen(s, e), PQmblenBounded(s, e), PQdsplen(s, e));
            }
            printf("\n");
        }
    for (int b = 0; b < 256; b++) {
        unsigned char s[2] = {(unsigned char)b, 0};
        printf("%d", pg_utf_mblen(s));
    }
    printf(" <- pg_utf_mblen\n");
    /* UTF-8 widths of every code point: a digest and the counts. */
    uint64_t hash = 14695981039346656037u;
    long count[4] = {0};
    for (uint32_t cp = 1; cp < 0x110000; cp++) {
        if (cp >= 0xd800 && cp < 0xe000) continue;
        unsigned char s[5] = {0};
        if (cp < 0x80) {
            s[0] = (unsigned char)cp;
        } else if (cp < 0x800) {
            s[0] = (unsigned char)(0xc0 | cp >> 6);
            s[1] = (unsigned char)(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            s[0] = (unsigned char)(0xe0 | cp >> 12);
            s[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
            s[2] = (unsigned char)(0x80 | (cp & 0x3f));
        } else {
            s[0] = (unsigned char)(0xf0 | cp >> 18);
            s[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
            s[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
            s[3] = (unsigned char)(0x80 | (cp & 0x3f));
        }
        int w = PQdsplen((const char *)s, 6);
        count[w + 1]++;
        hash = (hash ^ (uint64_t)(w + 1)) * 1099511628211u;
    }
    printf("utf8 dsplen: -1:%ld 0:%ld 1:%ld 2:%ld digest %016llx\n", count[0], count[1], count[2],
           count[3], (unsigned long long)hash);
}

/* -------------------------------------------------------------- escaping */

static void escaping(void)
{
    static const char *inputs[] = {
        "plain",    "it's",         "back\\slash", "", "\xc3\xa9t\xc3\xa9",
        "\xff\xfe", "quote''twice", "nul\0hidden"};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        size_t n = strlen(inputs[i]) + (i == 7 ? 7 : 0);
        char out[64];
        size_t len = PQescapeString(out, inputs[i], n);
        print_bytes("escapeString ", (const unsigned char *)out, len);
        size_t blen = 0;
        unsigned char *b = PQescapeBytea((const unsigned char *)inputs[i], n, &blen);
        print_bytes("escapeBytea ", b, blen ? blen - 1 : 0);
        size_t ulen = 0;
        unsigned char *u = PQunescapeBytea(b, &ulen);
        print_bytes("  unescaped ", u, ulen);
        PQfreemem(b);
        PQfreemem(u);
    }
    static const char *bytea[] = {"\\x",   "\\x41424", "\\x4 1 42",  "\\xZZ41",
                                  "\\X41", "a\\\\b",   "\\101\\102", "\\400",
                                  "\\1",   "tail\\",   "\\xAbCd",    "x\\q"};
    for (size_t i = 0; i < sizeof bytea / sizeof bytea[0]; i++) {
        size_t ulen = 0;
        unsigned char *u = PQunescapeBytea((const unsigned char *)bytea[i], &ulen);
        printf("unescape [%s] ", bytea[i]);
        print_bytes("-> ", u, ulen);
        PQfreemem(u);
    }
    printf("unescape NULL -> %p\n", (void *)PQunescapeBytea(NULL, NULL));
    char *md5 = PQencryptPassword("secret", "alice");
    printf("md5 [%s]\n", md5);
    PQfreemem(md5);
}

/* ------------------------------------------------------------ PQExpBuffer */

static void show(const char *what, PQExpBuffer b)
{
    printf("%s: broken=%d len=%zu data=[%s]\n", what, PQExpBufferBroken(b), b->len, b->data);
}

static void expbuffers(void)
{
    PQExpBuffer b = createPQExpBuffer();
    printf("initial maxlen=%zu\n", b->maxlen);
    appendPQExpBufferStr(b, "abc");
    appendPQExpBufferChar(b, '-');
    appendBinaryPQExpBuffer(b, "x\0y", 3);
    printf("binary len=%zu byte4=%d\n", b->len, b->data[5]);
    printfPQExpBuffer(b, "%d %s %5.2f|", 42, "str", 3.14159);
    show("printf", b);
    for (int i = 0; i < 100; i++)
        appendPQExpBuffer(b, "<%03d>", i);
    printf("grown len=%zu maxlen=%zu\n", b->len, b->maxlen);
    resetPQExpBuffer(b);
    show("reset", b);
    printf("enlarge small=%d maxlen=%zu\n", enlargePQExpBuffer(b, 1000), b->maxlen);
    printf("enlarge huge=%d\n", enlargePQExpBuffer(b, (size_t)1 << 40));
    show("after huge", b);
    appendPQExpBufferStr(b, "ignored");
    printfPQExpBuffer(b, "ignored %d", 1);
    show("broken appends", b);
    resetPQExpBuffer(b);
    show("reset repairs", b);
    appendPQExpBufferStr(b, "ok");
    show("usable", b);
    destroyPQExpBuffer(b);
    destroyPQExpBuffer(NULL);
    PQExpBufferData d;
    initPQExpBuffer(&d);
    appendPQExpBuffer(&d, "%s", "stack");
    printf("data broken=%d [%s]\n", PQExpBufferDataBroken(d), d.data);
    termPQExpBuffer(&d);
    printf("after term broken=%d [%s]\n", PQExpBufferDataBroken(d), d.data);
}

/* ---------------------------------------------------------------- results */

static void dump(const char *what, const PGresult *r)
{
    printf("%s: status=%s ntuples=%d nfields=%d binary=%d nparams=%d err=[%s]\n", what,
           PQresStatus(PQresultStatus(r)), PQntuples(r), PQnfields(r), PQbinaryTuples(r),
           PQnparams(r), PQresultErrorMessage(r));
    for (int f = 0; f < PQnfields(r); f++)
        printf("  col %d name=[%s] table=%u col=%d format=%d type=%u size=%d mod=%d\n", f,
               PQfname(r, f), PQftable(r, f), PQftablecol(r, f), PQfformat(r, f), PQftype(r, f),
               PQfsize(r, f), PQfmod(r, f));
    for (int t = 0; t < PQntuples(r); t++)
        for (int f = 0; f < PQnfields(r); f++)
            printf("  [%d,%d] null=%d len=%d value=[%s]\n", t, f, PQgetisnull(r, t, f),
                   PQgetlength(r, t, f), PQgetvalue(r, t, f));
}

static void results(void)
{
    for (int s = -1; s <= 13; s++) {
        PGresult *r = PQmakeEmptyPGresult(NULL, (ExecStatusType)s);
        printf("status %d: [%s] cmd=[%s] tuples=[%s] oid=%u oidstatus=[%s]\n", s,
               PQresStatus((ExecStatusType)s), PQcmdStatus(r), PQcmdTuples(r), PQoidValue(r),
               PQoidStatus(r));
        char *v = PQresultVerboseErrorMessage(r, PQERRORS_VERBOSE, PQSHOW_CONTEXT_ALWAYS);
        printf("  verbose [%s] field=%p\n", v, (void *)PQresultErrorField(r, 'M'));
        PQfreemem(v);
        PQclear(r);
    }
    PGresAttDesc cols[] = {
        {"id", 16384, 1, 0, 23, 4, -1},
        {"Mixed Case", 0, 0, 1, 17, -1, -1},
        {"quo\"te", 0, 0, 0, 25, -1, 36},
        {NULL, 0, 0, 0, 25, -1, -1},
    };
    PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    printf("setattrs=%d again=%d\n", PQsetResultAttrs(r, 4, cols), PQsetResultAttrs(r, 1, cols));
    printf("setvalue %d %d %d %d %d %d\n", PQsetvalue(r, 0, 0, "1", 1),
           PQsetvalue(r, 0, 1, "b\0in", 4), PQsetvalue(r, 1, 2, "x", -1),
           PQsetvalue(r, 1, 0, "", 0), PQsetvalue(r, 3, 0, "gap", 3),
           PQsetvalue(r, 1, 9, "bad", 3));
    for (int i = 2; i < 300; i++)
        PQsetvalue(r, i, 3, "many", 4);
    printf("rows after many: %d last=[%s]\n", PQntuples(r), PQgetvalue(r, 299, 3));
    char *alloc = PQresultAlloc(r, 10);
    printf("resultAlloc %s\n", alloc ? "ok" : "NULL");
    static const char *lookups[] = {
        "id",      "ID", "\"ID\"", "Mixed Case", "\"Mixed Case\"", "mixed case", "\"quo\"\"te\"",
        "quo\"te", "",   "\"\"",   "nope"};
    for (size_t i = 0; i < sizeof lookups / sizeof lookups[0]; i++)
        printf("fnumber [%s] -> %d\n", lookups[i], PQfnumber(r, lookups[i]));
    printf("fnumber NULL -> %d\n", PQfnumber(r, NULL));
    printf("out of range: value=%p len=%d null=%d name=%p type=%u param=%u\n",
           (void *)PQgetvalue(r, 400, 0), PQgetlength(r, 0, 9), PQgetisnull(r, -1, 0),
           (void *)PQfname(r, 7), PQftype(r, -1), PQparamtype(r, 0));
    PGresult *shallow = PQcopyResult(r, 0);
    PGresult *attrs = PQcopyResult(r, PG_COPYRES_ATTRS);
    PGresult *deep = PQcopyResult(r, PG_COPYRES_TUPLES | PG_COPYRES_NOTICEHOOKS);
    dump("shallow", shallow);
    dump("attrs", attrs);
    printf("deep rows=%d [%s] len=%d\n", PQntuples(deep), PQgetvalue(deep, 0, 1),
           PQgetlength(deep, 0, 1));
    PQclear(shallow);
    PQclear(attrs);
    PQclear(deep);
    PQclear(r);
    dump("NULL", NULL);
    PQclear(NULL);
    printf("copy NULL=%p status NULL=%s\n", (void *)PQcopyResult(NULL, 0),
           PQresStatus(PQresultStatus(NULL)));
}

int main(void)
{
    encodings();
    escaping();
    expbuffers();
    results();
    return 0;
}
