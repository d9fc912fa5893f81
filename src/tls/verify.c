/*
 * verify-full's host name check, with libpq's rules (fe-secure-common.c and
 * fe-secure-openssl.c): SAN entries first, the CN only when no SAN of the
 * host's kind exists, a leading "*." wildcard matching one label, and a
 * certificate name with an embedded NUL treated as an attack.
 */
#define _DEFAULT_SOURCE /* inet_aton */

#include "tls/tls_internal.h"

#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#define NAME_BUF 256 /* a certificate name as shown in messages (truncated) */

int pgw__tls_is_ip_literal(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    return host && (inet_aton(host, &a4) || inet_pton(AF_INET6, host, &a6) == 1);
}

static bool equal_nocase(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i])) return false;
    return true;
}

/* libpq's wildcard_certificate_match, on counted strings. */
static bool wildcard_matches(const char *pattern, size_t lenpat, const char *host)
{
    size_t lenstr = strlen(host);
    if (lenpat < 3 || pattern[0] != '*' || pattern[1] != '.') return false;
    if (lenpat > lenstr) return false;
    /* host must end with the pattern minus its '*'... */
    size_t tail = lenstr - lenpat + 1;
    if (!equal_nocase(pattern + 1, host + tail, lenpat - 1)) return false;
    /* ...and have no '.' before where the wildcard's label would start. */
    const char *dot = strchr(host, '.');
    return !(dot && (size_t)(dot - host) < lenstr - lenpat);
}

int pgw__tls_name_matches(const char *name, size_t namelen, const char *host, char *err,
                          size_t errlen)
{
    if (memchr(name, '\0', namelen)) /* CVE-2009-4034 */
        return pgw__fail_msg(err, errlen, -1, "SSL certificate's name contains embedded null");
    if (namelen == strlen(host) && equal_nocase(name, host, namelen)) return 1;
    return wildcard_matches(name, namelen, host) ? 1 : 0;
}

/* Remember the first name examined, for the mismatch message. */
static void note_name(char *first, const char *name, size_t len)
{
    if (first[0]) return;
    if (len >= NAME_BUF) len = NAME_BUF - 1;
    memcpy(first, name, len);
    first[len] = '\0';
}

static int match_dns(const ASN1_STRING *s, const char *host, char *first, char *err, size_t errlen)
{
    if (!s) return pgw__fail_msg(err, errlen, -1, "SSL certificate's name entry is missing");
    const char *name = (const char *)ASN1_STRING_get0_data(s);
    size_t len = (size_t)ASN1_STRING_length(s);
    int rc = pgw__tls_name_matches(name, len, host, err, errlen);
    if (rc >= 0) note_name(first, name, len);
    return rc;
}

/* An iPAddress SAN against host, byte for byte in network order. A host
 * that does not parse as an address of the SAN's family is a mismatch. */
static int match_ip(const ASN1_OCTET_STRING *s, const char *host, char *first, char *err,
                    size_t errlen)
{
    const unsigned char *ip = ASN1_STRING_get0_data(s);
    size_t len = (size_t)ASN1_STRING_length(s);
    int match = 0, family;
    if (len == 4) {
        struct in_addr a;
        family = AF_INET;
        if (inet_aton(host, &a) && memcmp(ip, &a.s_addr, 4) == 0) match = 1;
    } else if (len == 16) {
        struct in6_addr a;
        family = AF_INET6;
        if (inet_pton(AF_INET6, host, &a) == 1 && memcmp(ip, a.s6_addr, 16) == 0) match = 1;
    } else {
        return pgw__fail_msg(err, errlen, -1,
                             "certificate contains IP address with invalid length %zu", len);
    }
    char text[INET6_ADDRSTRLEN];
    if (!inet_ntop(family, ip, text, sizeof text))
        return pgw__fail_msg(err, errlen, -1,
                             "could not convert certificate's IP address to string");
    note_name(first, text, strlen(text));
    return match;
}

/* The SANs: returns 1, 0 or -1; *cn_allowed is cleared when a SAN of the
 * host's kind exists or a SAN decided the outcome. */
static int check_sans(X509 *peer, const char *host, bool *cn_allowed, int *examined, char *first,
                      char *err, size_t errlen)
{
    GENERAL_NAMES *sans = X509_get_ext_d2i(peer, NID_subject_alt_name, NULL, NULL);
    if (!sans) return 0;
    int host_type = pgw__tls_is_ip_literal(host) ? GEN_IPADD : GEN_DNS, rc = 0;
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); i++) {
        const GENERAL_NAME *gn = sk_GENERAL_NAME_value(sans, i);
        if (gn->type == host_type) *cn_allowed = false;
        if (gn->type == GEN_DNS) {
            (*examined)++;
            rc = match_dns(gn->d.dNSName, host, first, err, errlen);
        } else if (gn->type == GEN_IPADD) {
            (*examined)++;
            rc = match_ip(gn->d.iPAddress, host, first, err, errlen);
        }
        if (rc != 0) { /* a match or an error: the CN is not consulted */
            *cn_allowed = false;
            break;
        }
    }
    GENERAL_NAMES_free(sans);
    return rc;
}

static int check_cn(X509 *peer, const char *host, int *examined, char *first, char *err,
                    size_t errlen)
{
    X509_NAME *subject = X509_get_subject_name(peer);
    int idx = subject ? X509_NAME_get_index_by_NID(subject, NID_commonName, -1) : -1;
    if (idx < 0) return 0;
    (*examined)++;
    return match_dns(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, idx)), host, first, err,
                     errlen);
}

int pgw__tls_check_host(X509 *peer, const char *host, char *err, size_t errlen)
{
    if (!host || !*host)
        return pgw__fail_msg(err, errlen, -1,
                             "host name must be specified for a verified SSL connection");
    char first[NAME_BUF] = "";
    int examined = 0;
    bool cn_allowed = true;
    int rc = check_sans(peer, host, &cn_allowed, &examined, first, err, errlen);
    if (rc == 0 && cn_allowed) rc = check_cn(peer, host, &examined, first, err, errlen);
    if (rc != 0) return rc;
    if (examined > 1)
        return pgw__fail_msg(err, errlen, 0,
                             "server certificate for \"%s\" (and %d other name%s) does not "
                             "match host name \"%s\"",
                             first, examined - 1, examined == 2 ? "" : "s", host);
    if (examined == 1)
        return pgw__fail_msg(err, errlen, 0,
                             "server certificate for \"%s\" does not match host name \"%s\"", first,
                             host);
    return pgw__fail_msg(err, errlen, 0,
                         "could not get server's host name from server certificate");
}
