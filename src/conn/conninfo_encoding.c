/*
 * client_encoding=auto: the server encoding name of the locale's
 * codeset, as libpq's pg_get_encoding_from_locale.
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conninfo_internal.h"

#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- client_encoding=auto ---- */

/* libpq's pg_get_encoding_from_locale (src/port/chklocale.c): the codeset
 * names a C library reports, and the server's name for each. */
static const struct {
    const char *codeset, *encoding;
} codesets[] = {
    {"EUC-JP", "EUC_JP"},
    {"eucJP", "EUC_JP"},
    {"IBM-eucJP", "EUC_JP"},
    {"sdeckanji", "EUC_JP"},
    {"CP20932", "EUC_JP"},
    {"EUC-CN", "EUC_CN"},
    {"eucCN", "EUC_CN"},
    {"IBM-eucCN", "EUC_CN"},
    {"GB2312", "EUC_CN"},
    {"dechanzi", "EUC_CN"},
    {"CP20936", "EUC_CN"},
    {"EUC-KR", "EUC_KR"},
    {"eucKR", "EUC_KR"},
    {"IBM-eucKR", "EUC_KR"},
    {"deckorean", "EUC_KR"},
    {"5601", "EUC_KR"},
    {"CP51949", "EUC_KR"},
    {"EUC-TW", "EUC_TW"},
    {"eucTW", "EUC_TW"},
    {"IBM-eucTW", "EUC_TW"},
    {"cns11643", "EUC_TW"},
    {"UTF-8", "UTF8"},
    {"utf8", "UTF8"},
    {"CP65001", "UTF8"},
    {"ISO-8859-1", "LATIN1"},
    {"ISO8859-1", "LATIN1"},
    {"iso88591", "LATIN1"},
    {"CP28591", "LATIN1"},
    {"ISO-8859-2", "LATIN2"},
    {"ISO8859-2", "LATIN2"},
    {"iso88592", "LATIN2"},
    {"CP28592", "LATIN2"},
    {"ISO-8859-3", "LATIN3"},
    {"ISO8859-3", "LATIN3"},
    {"iso88593", "LATIN3"},
    {"CP28593", "LATIN3"},
    {"ISO-8859-4", "LATIN4"},
    {"ISO8859-4", "LATIN4"},
    {"iso88594", "LATIN4"},
    {"CP28594", "LATIN4"},
    {"ISO-8859-9", "LATIN5"},
    {"ISO8859-9", "LATIN5"},
    {"iso88599", "LATIN5"},
    {"CP28599", "LATIN5"},
    {"ISO-8859-10", "LATIN6"},
    {"ISO8859-10", "LATIN6"},
    {"iso885910", "LATIN6"},
    {"ISO-8859-13", "LATIN7"},
    {"ISO8859-13", "LATIN7"},
    {"iso885913", "LATIN7"},
    {"ISO-8859-14", "LATIN8"},
    {"ISO8859-14", "LATIN8"},
    {"iso885914", "LATIN8"},
    {"ISO-8859-15", "LATIN9"},
    {"ISO8859-15", "LATIN9"},
    {"iso885915", "LATIN9"},
    {"CP28605", "LATIN9"},
    {"ISO-8859-16", "LATIN10"},
    {"ISO8859-16", "LATIN10"},
    {"iso885916", "LATIN10"},
    {"CP1252", "WIN1252"},
    {"CP1250", "WIN1250"},
    {"CP1251", "WIN1251"},
    {"CP1253", "WIN1253"},
    {"CP1254", "WIN1254"},
    {"CP1255", "WIN1255"},
    {"CP1256", "WIN1256"},
    {"CP1257", "WIN1257"},
    {"CP1258", "WIN1258"},
    {"CP866", "WIN866"},
    {"ANSI-1251", "WIN1251"},
    {"CP874", "WIN874"},
    {"KOI8-R", "KOI8R"},
    {"CP20866", "KOI8R"},
    {"KOI8-U", "KOI8U"},
    {"CP21866", "KOI8U"},
    {"ISO-8859-5", "ISO_8859_5"},
    {"ISO8859-5", "ISO_8859_5"},
    {"iso88595", "ISO_8859_5"},
    {"CP28595", "ISO_8859_5"},
    {"ISO-8859-6", "ISO_8859_6"},
    {"ISO8859-6", "ISO_8859_6"},
    {"iso88596", "ISO_8859_6"},
    {"CP28596", "ISO_8859_6"},
    {"ISO-8859-7", "ISO_8859_7"},
    {"ISO8859-7", "ISO_8859_7"},
    {"iso88597", "ISO_8859_7"},
    {"CP28597", "ISO_8859_7"},
    {"ISO-8859-8", "ISO_8859_8"},
    {"ISO8859-8", "ISO_8859_8"},
    {"iso88598", "ISO_8859_8"},
    {"CP28598", "ISO_8859_8"},
    {"SJIS", "SJIS"},
    {"PCK", "SJIS"},
    {"CP932", "SJIS"},
    {"SHIFT_JIS", "SJIS"},
    {"BIG5", "BIG5"},
    {"BIG5HKSCS", "BIG5"},
    {"Big5-HKSCS", "BIG5"},
    {"CP950", "BIG5"},
    {"GBK", "GBK"},
    {"CP936", "GBK"},
    {"UHC", "UHC"},
    {"CP949", "UHC"},
    {"JOHAB", "JOHAB"},
    {"CP1361", "JOHAB"},
    {"GB18030", "GB18030"},
    {"CP54936", "GB18030"},
    {"SJIS_2004", "SHIFT_JIS_2004"},
    {"US-ASCII", "SQL_ASCII"},
};

/* The encoding of the process's LC_CTYPE locale, or "" when it has no
 * server name (libpq then sends no client_encoding). */
static const char *locale_encoding(void)
{
    const char *ctype = setlocale(LC_CTYPE, NULL);
    if (!ctype) return "";
    if (strcasecmp(ctype, "C") == 0 || strcasecmp(ctype, "POSIX") == 0) return "SQL_ASCII";
    const char *sys = nl_langinfo(CODESET);
    for (size_t i = 0; sys && i < PGW__ARRAY_LEN(codesets); i++)
        if (strcasecmp(sys, codesets[i].codeset) == 0) return codesets[i].encoding;
    return "";
}

int pgw__ci_resolve_client_encoding(pgw_conninfo_t *ci)
{
    const char *enc = VAL(ci, "client_encoding");
    if (!enc || strcmp(enc, "auto") != 0) return 0;
    ci->client_encoding = pgw__strdup(ci->alloc, locale_encoding());
    return ci->client_encoding ? 0 : PGW_ENOMEM;
}
