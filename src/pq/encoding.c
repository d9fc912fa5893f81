/*
 * Encodings as libpq numbers and measures them: pg_char_to_encoding,
 * pg_encoding_to_char, pg_valid_server_encoding(_id), PQmblen,
 * PQmblenBounded, PQdsplen, PQenv2encoding, pg_utf_mblen, and the
 * per-encoding character checks escape.c needs (libpq's encnames.c and
 * wchar.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "pq/encoding.h"
#include "pq/pq_internal.h"
#include "session/wcwidth.h"

#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HIGHBIT(c)   (((unsigned char)(c)) & 0x80)
#define SS2          0x8e
#define SS3          0x8f
#define EUC_RANGE(c) ((c) >= 0xa1 && (c) <= 0xfe)

/* ------------------------------------------------------ lengths per family */

typedef const unsigned char *ustr;

static int single_mblen(ustr s)
{
    (void)s;
    return 1;
}

static int utf8_mblen(ustr s)
{
    return (*s & 0x80) == 0      ? 1
           : (*s & 0xe0) == 0xc0 ? 2
           : (*s & 0xf0) == 0xe0 ? 3
           : (*s & 0xf8) == 0xf0 ? 4
                                 : 1;
}

static int euc_mblen(ustr s) /* EUC_KR, JOHAB, EUC_JP */
{
    return *s == SS2 ? 2 : *s == SS3 ? 3 : HIGHBIT(*s) ? 2 : 1;
}

static int euctw_mblen(ustr s)
{
    return *s == SS2 ? 4 : *s == SS3 ? 3 : HIGHBIT(*s) ? 2 : 1;
}

static int double_mblen(ustr s) /* BIG5, GBK, UHC */
{
    return HIGHBIT(*s) ? 2 : 1;
}

static int euccn_mblen(ustr s) /* libpq reads SS2 and SS3 as 3-byte leads */
{
    return *s == SS2 || *s == SS3 ? 3 : HIGHBIT(*s) ? 2 : 1;
}

static int mule_mblen(ustr s)
{
    if (*s >= 0x81 && *s <= 0x8d) return 2; /* LC1 */
    if (*s == 0x9a || *s == 0x9b) return 3; /* LCPRV1 */
    if (*s >= 0x90 && *s <= 0x99) return 3; /* LC2 */
    if (*s == 0x9c || *s == 0x9d) return 4; /* LCPRV2 */
    return 1;
}

static int sjis_mblen(ustr s)
{
    if (*s >= 0xa1 && *s <= 0xdf) return 1; /* half-width katakana */
    return HIGHBIT(*s) ? 2 : 1;
}

static int gb18030_mblen(ustr s)
{
    if (!HIGHBIT(*s)) return 1;
    return s[1] >= 0x30 && s[1] <= 0x39 ? 4 : 2;
}

/* ------------------------------------------------------ widths per family */

static int ascii_dsplen(ustr s)
{
    if (*s == '\0') return 0;
    if (*s < 0x20 || *s == 0x7f) return -1;
    return 1;
}

/* libpq's utf8_to_unicode: 0xffffffff for a byte that starts nothing. */
static uint32_t utf8_code_point(ustr c)
{
    if ((*c & 0x80) == 0) return c[0];
    if ((*c & 0xe0) == 0xc0) return (uint32_t)(c[0] & 0x1f) << 6 | (c[1] & 0x3f);
    if ((*c & 0xf0) == 0xe0)
        return (uint32_t)(c[0] & 0x0f) << 12 | (uint32_t)(c[1] & 0x3f) << 6 | (c[2] & 0x3f);
    if ((*c & 0xf8) == 0xf0)
        return (uint32_t)(c[0] & 0x07) << 18 | (uint32_t)(c[1] & 0x3f) << 12 |
               (uint32_t)(c[2] & 0x3f) << 6 | (c[3] & 0x3f);
    return 0xffffffff;
}

/* libpq 15's ucs_wcwidth: combining characters are 0 columns, East Asian
 * wide and full-width ones 2 (libpgwire's Unicode 14 table, libpq 15's). */
static int utf8_dsplen(ustr s)
{
    uint32_t ucs = utf8_code_point(s);
    if (ucs == 0) return 0;
    if (ucs < 0x20 || (ucs >= 0x7f && ucs < 0xa0) || ucs > 0x10ffff) return -1;
    if (pgw__unicode_combining(ucs)) return 0;
    return pgw__unicode_wide(ucs) ? 2 : 1;
}

static int eucjp_dsplen(ustr s)
{
    return *s == SS2 ? 1 : *s == SS3 || HIGHBIT(*s) ? 2 : ascii_dsplen(s);
}

static int double_dsplen(ustr s) /* EUC_KR, EUC_CN, EUC_TW, BIG5, GBK, UHC, GB18030, JOHAB */
{
    return HIGHBIT(*s) ? 2 : ascii_dsplen(s);
}

static int mule_dsplen(ustr s)
{
    if ((*s >= 0x90 && *s <= 0x99) || *s == 0x9c || *s == 0x9d) return 2; /* LC2, LCPRV2 */
    return 1;
}

static int sjis_dsplen(ustr s)
{
    if (*s >= 0xa1 && *s <= 0xdf) return 1;
    return HIGHBIT(*s) ? 2 : ascii_dsplen(s);
}

/* ------------------------------------------------- validity per family */

static int single_verify(ustr s, int len)
{
    (void)s;
    (void)len;
    return 1;
}

/* libpq's pg_utf8_islegal. */
static int utf8_legal(ustr s, int length)
{
    unsigned char a;
    switch (length) {
    default:
        return 0;
    case 4:
        if (s[3] < 0x80 || s[3] > 0xbf) return 0;
        /* fall through */
    case 3:
        if (s[2] < 0x80 || s[2] > 0xbf) return 0;
        /* fall through */
    case 2:
        a = s[1];
        switch (*s) {
        case 0xe0:
            if (a < 0xa0 || a > 0xbf) return 0;
            break;
        case 0xed:
            if (a < 0x80 || a > 0x9f) return 0;
            break;
        case 0xf0:
            if (a < 0x90 || a > 0xbf) return 0;
            break;
        case 0xf4:
            if (a < 0x80 || a > 0x8f) return 0;
            break;
        default:
            if (a < 0x80 || a > 0xbf) return 0;
            break;
        }
        /* fall through */
    case 1:
        if ((*s >= 0x80 && *s < 0xc2) || *s > 0xf4) return 0;
    }
    return 1;
}

static int utf8_verify(ustr s, int len)
{
    int l = utf8_mblen(s);
    return len < l || !utf8_legal(s, l) ? -1 : l;
}

static int eucjp_verify(ustr s, int len)
{
    if (*s == SS2) return len < 2 || s[1] < 0xa1 || s[1] > 0xdf ? -1 : 2;
    if (*s == SS3) return len < 3 || !EUC_RANGE(s[1]) || !EUC_RANGE(s[2]) ? -1 : 3;
    if (!HIGHBIT(*s)) return 1;
    return len < 2 || !EUC_RANGE(s[0]) || !EUC_RANGE(s[1]) ? -1 : 2;
}

static int euckr_verify(ustr s, int len) /* EUC_KR, EUC_CN */
{
    if (!HIGHBIT(*s)) return 1;
    return len < 2 || !EUC_RANGE(s[0]) || !EUC_RANGE(s[1]) ? -1 : 2;
}

static int euctw_verify(ustr s, int len)
{
    if (*s == SS2)
        return len < 4 || s[1] < 0xa1 || s[1] > 0xa7 || !EUC_RANGE(s[2]) || !EUC_RANGE(s[3]) ? -1
                                                                                             : 4;
    if (*s == SS3) return -1; /* unused in EUC_TW */
    if (!HIGHBIT(*s)) return 1;
    return len < 2 || !EUC_RANGE(s[1]) ? -1 : 2;
}

static int mule_verify(ustr s, int len)
{
    int l = mule_mblen(s);
    if (len < l) return -1;
    for (int i = 1; i < l; i++)
        if (!HIGHBIT(s[i])) return -1;
    return l;
}

static int sjis_verify(ustr s, int len)
{
    int l = sjis_mblen(s);
    if (len < l) return -1;
    if (l == 1) return 1;
    int head = (s[0] >= 0x81 && s[0] <= 0x9f) || (s[0] >= 0xe0 && s[0] <= 0xfc);
    int tail = (s[1] >= 0x40 && s[1] <= 0x7e) || (s[1] >= 0x80 && s[1] <= 0xfc);
    return head && tail ? 2 : -1;
}

/* BIG5, GBK, UHC: no NUL inside, and not 0x8d 0x20, the pair libpq writes
 * in place of an invalid character (so it is never valid itself). */
static int nonul_verify(ustr s, int len)
{
    int l = double_mblen(s);
    if (len < l) return -1;
    if (l == 2 && s[0] == 0x8d && s[1] == ' ') return -1;
    for (int i = 1; i < l; i++)
        if (s[i] == '\0') return -1;
    return l;
}

static int gb18030_verify(ustr s, int len)
{
    if (!HIGHBIT(*s)) return 1;
    if (len >= 4 && s[1] >= 0x30 && s[1] <= 0x39)
        return s[0] >= 0x81 && s[0] <= 0xfe && s[2] >= 0x81 && s[2] <= 0xfe && s[3] >= 0x30 &&
                       s[3] <= 0x39
                   ? 4
                   : -1;
    if (len >= 2 && s[0] >= 0x81 && s[0] <= 0xfe)
        return (s[1] >= 0x40 && s[1] <= 0x7e) || (s[1] >= 0x80 && s[1] <= 0xfe) ? 2 : -1;
    return -1;
}

static int johab_verify(ustr s, int len)
{
    int l = euc_mblen(s);
    if (len < l) return -1;
    if (!HIGHBIT(*s)) return l;
    for (int i = 1; i < l; i++)
        if (!EUC_RANGE(s[i])) return -1;
    return l;
}

/* ------------------------------------------------------------ the table */

typedef struct encoding {
    const char *name; /* pg_encoding_to_char's */
    int (*mblen)(ustr);
    int (*dsplen)(ustr);
    int (*verify)(ustr, int);
} encoding_t;

#define SINGLE(name)                                    \
    {                                                   \
        name, single_mblen, ascii_dsplen, single_verify \
    }

/* In pg_enc order: the index is the id. */
static const encoding_t encodings[] = {
    {"SQL_ASCII", single_mblen, ascii_dsplen, single_verify},
    {"EUC_JP", euc_mblen, eucjp_dsplen, eucjp_verify},
    {"EUC_CN", euccn_mblen, double_dsplen, euckr_verify},
    {"EUC_KR", euc_mblen, double_dsplen, euckr_verify},
    {"EUC_TW", euctw_mblen, double_dsplen, euctw_verify},
    {"EUC_JIS_2004", euc_mblen, eucjp_dsplen, eucjp_verify},
    {"UTF8", utf8_mblen, utf8_dsplen, utf8_verify},
    {"MULE_INTERNAL", mule_mblen, mule_dsplen, mule_verify},
    SINGLE("LATIN1"),
    SINGLE("LATIN2"),
    SINGLE("LATIN3"),
    SINGLE("LATIN4"),
    SINGLE("LATIN5"),
    SINGLE("LATIN6"),
    SINGLE("LATIN7"),
    SINGLE("LATIN8"),
    SINGLE("LATIN9"),
    SINGLE("LATIN10"),
    SINGLE("WIN1256"),
    SINGLE("WIN1258"),
    SINGLE("WIN866"),
    SINGLE("WIN874"),
    SINGLE("KOI8R"),
    SINGLE("WIN1251"),
    SINGLE("WIN1252"),
    SINGLE("ISO_8859_5"),
    SINGLE("ISO_8859_6"),
    SINGLE("ISO_8859_7"),
    SINGLE("ISO_8859_8"),
    SINGLE("WIN1250"),
    SINGLE("WIN1253"),
    SINGLE("WIN1254"),
    SINGLE("WIN1255"),
    SINGLE("WIN1257"),
    SINGLE("KOI8U"),
    {"SJIS", sjis_mblen, sjis_dsplen, sjis_verify},
    {"BIG5", double_mblen, double_dsplen, nonul_verify},
    {"GBK", double_mblen, double_dsplen, nonul_verify},
    {"UHC", double_mblen, double_dsplen, nonul_verify},
    {"GB18030", gb18030_mblen, double_dsplen, gb18030_verify},
    {"JOHAB", euc_mblen, double_dsplen, johab_verify},
    {"SHIFT_JIS_2004", sjis_mblen, sjis_dsplen, sjis_verify},
};

#define NENCODINGS ((int)(sizeof encodings / sizeof encodings[0]))
/* The last encoding a server may use (KOI8U); client-only ones follow. */
#define LAST_SERVER_ENCODING 34

/* Every name pg_char_to_encoding accepts, cleaned (lower case letters and
 * digits only), sorted. */
static const struct {
    const char *name;
    int id;
} aliases[] = {
    {"abc", 19},         {"alt", 20},          {"big5", 36},        {"euccn", 2},
    {"eucjis2004", 5},   {"eucjp", 1},         {"euckr", 3},        {"euctw", 4},
    {"gb18030", 39},     {"gbk", 37},          {"iso88591", 8},     {"iso885910", 13},
    {"iso885913", 14},   {"iso885914", 15},    {"iso885915", 16},   {"iso885916", 17},
    {"iso88592", 9},     {"iso88593", 10},     {"iso88594", 11},    {"iso88595", 25},
    {"iso88596", 26},    {"iso88597", 27},     {"iso88598", 28},    {"iso88599", 12},
    {"johab", 40},       {"koi8", 22},         {"koi8r", 22},       {"koi8u", 34},
    {"latin1", 8},       {"latin10", 17},      {"latin2", 9},       {"latin3", 10},
    {"latin4", 11},      {"latin5", 12},       {"latin6", 13},      {"latin7", 14},
    {"latin8", 15},      {"latin9", 16},       {"mskanji", 35},     {"muleinternal", 7},
    {"shiftjis", 35},    {"shiftjis2004", 41}, {"sjis", 35},        {"sqlascii", 0},
    {"tcvn", 19},        {"tcvn5712", 19},     {"uhc", 38},         {"unicode", 6},
    {"utf8", 6},         {"vscii", 19},        {"win", 23},         {"win1250", 29},
    {"win1251", 23},     {"win1252", 24},      {"win1253", 30},     {"win1254", 31},
    {"win1255", 32},     {"win1256", 18},      {"win1257", 33},     {"win1258", 19},
    {"win866", 20},      {"win874", 21},       {"win932", 35},      {"win936", 37},
    {"win949", 38},      {"win950", 36},       {"windows1250", 29}, {"windows1251", 23},
    {"windows1252", 24}, {"windows1253", 30},  {"windows1254", 31}, {"windows1255", 32},
    {"windows1256", 18}, {"windows1257", 33},  {"windows1258", 19}, {"windows866", 20},
    {"windows874", 21},  {"windows932", 35},   {"windows936", 37},  {"windows949", 38},
    {"windows950", 36},
};

static const encoding_t *lookup(int encoding)
{
    return &encodings[encoding >= 0 && encoding < NENCODINGS ? encoding : PQ_ENC_SQL_ASCII];
}

/* --------------------------------------------------------------- names */

int pg_char_to_encoding(const char *name)
{
    /* libpq compares at most NAMEDATALEN - 1 bytes of name. */
    char key[64];
    if (!name || !*name || strlen(name) >= sizeof key) return -1;
    size_t n = 0;
    for (const char *p = name; *p; p++)
        if (isalnum((unsigned char)*p)) key[n++] = (char)tolower((unsigned char)*p);
    key[n] = '\0';
    size_t lo = 0, hi = sizeof aliases / sizeof aliases[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(key, aliases[mid].name);
        if (c == 0) return aliases[mid].id;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

int pq__encoding_id(const char *name)
{
    int enc = pg_char_to_encoding(name);
    return enc < 0 ? PQ_ENC_SQL_ASCII : enc;
}

const char *pg_encoding_to_char(int encoding)
{
    return encoding >= 0 && encoding < NENCODINGS ? encodings[encoding].name : "";
}

int pg_valid_server_encoding_id(int encoding)
{
    return encoding >= 0 && encoding <= LAST_SERVER_ENCODING;
}

/* libpq exports it without declaring it in libpq-fe.h. */
int pg_valid_server_encoding(const char *name);
int pg_valid_server_encoding(const char *name)
{
    int enc = pg_char_to_encoding(name);
    return enc >= 0 && pg_valid_server_encoding_id(enc) ? enc : -1;
}

int PQenv2encoding(void)
{
    const char *s = getenv("PGCLIENTENCODING");
    int enc = s && *s ? pg_char_to_encoding(s) : PQ_ENC_SQL_ASCII;
    return enc < 0 ? PQ_ENC_SQL_ASCII : enc;
}

/* ---------------------------------------------------------- characters */

int pq__enc_mblen(int encoding, const char *s)
{
    return lookup(encoding)->mblen((ustr)s);
}

int pq__enc_verifychar(int encoding, const char *s, int len)
{
    return lookup(encoding)->verify((ustr)s, len);
}

int pq__enc_verifystr(int encoding, const char *s, int len)
{
    const encoding_t *e = lookup(encoding);
    int done = 0;
    while (done < len) {
        if (!HIGHBIT(s[done])) {
            if (s[done] == '\0') break;
            done++;
            continue;
        }
        int l = e->verify((ustr)s + done, len - done);
        if (l < 0) break;
        done += l;
    }
    return done;
}

void pq__enc_set_invalid(int encoding, char *dst)
{
    dst[0] = (char)(encoding == PQ_ENC_UTF8 ? 0xc0 : 0x8d);
    dst[1] = ' ';
}

int PQmblen(const char *s, int encoding)
{
    return pq__enc_mblen(encoding, s);
}

int PQmblenBounded(const char *s, int encoding)
{
    return (int)strnlen(s, (size_t)pq__enc_mblen(encoding, s));
}

int PQdsplen(const char *s, int encoding)
{
    return lookup(encoding)->dsplen((ustr)s);
}

/* libpq exports it (psql's older builds call it). */
int pg_utf_mblen(const unsigned char *s);
int pg_utf_mblen(const unsigned char *s)
{
    return utf8_mblen(s);
}
