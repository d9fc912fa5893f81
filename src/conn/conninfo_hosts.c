/*
 * Host, hostaddr and port lists as libpq pairs them, each host checked
 * when the list is built (its error kept for its attempt).
 */
#define _POSIX_C_SOURCE 200809L
#include "conn/conninfo_internal.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- hosts ---- */

static size_t list_count(const char *s)
{
    size_t n = 1;
    for (; *s; s++)
        n += *s == ',';
    return n;
}

/* Split a copy of s at commas; returns the copy (the i-th element is found
 * by list_item). */
static char *list_split(const pgw_allocator_t *a, const char *s)
{
    char *copy = pgw__strdup(a, s);
    if (!copy) return NULL;
    for (char *p = copy; *p; p++)
        if (*p == ',') *p = '\0';
    return copy;
}

static const char *list_item(const char *split, size_t i)
{
    while (i--)
        split += strlen(split) + 1;
    return split;
}

/* What libpq finds wrong with host h when it reaches it, in its order:
 * the port, then the address or the socket path. Writes the message into
 * msg (empty if none) and returns 1 if the whole connect ends there. */
static int host_problem(pgw_host_t *h, char *msg, size_t len)
{
    int port = PGW_DEFAULT_PORT;
    msg[0] = '\0';
    if (*h->port_text && !pgw__ci_parse_int(h->port_text, &port)) {
        snprintf(msg, len, "invalid integer value \"%s\" for connection option \"port\"",
                 h->port_text);
        return 1;
    }
    if (port < 1 || port > 65535) {
        snprintf(msg, len, "invalid port number: \"%s\"", h->port_text);
        return 0;
    }
    h->port = (uint16_t)port;
    if (h->hostaddr) {
        /* numeric only: no resolver, no DNS */
        struct addrinfo hints, *res = NULL;
        memset(&hints, 0, sizeof hints);
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICHOST;
        int rc = getaddrinfo(h->hostaddr, NULL, &hints, &res);
        if (res) freeaddrinfo(res);
        if (rc != 0 || !res)
            snprintf(msg, len, "could not parse network address \"%s\": %s", h->hostaddr,
                     gai_strerror(rc));
    } else if (h->is_unix) {
        char path[UNIX_PATH_MAX + 32 + 1];
        int n = snprintf(path, sizeof path, "%s/.s.PGSQL.%d", h->host, port);
        if (n < 0 || (size_t)n > UNIX_PATH_MAX)
            snprintf(msg, len,
                     "Unix-domain socket path \"%.200s/.s.PGSQL.%d\" is too long (maximum %d "
                     "bytes)",
                     h->host, port, (int)UNIX_PATH_MAX);
    }
    return 0;
}

static int check_host(pgw_conninfo_t *ci, size_t i)
{
    char msg[512];
    pgw_host_t *h = &ci->hosts[i];
    h->error_ends_connect = host_problem(h, msg, sizeof msg);
    if (!msg[0]) return 0;
    ci->host_error[i] = pgw__strdup(ci->alloc, msg);
    if (!ci->host_error[i]) return PGW_ENOMEM;
    h->error = ci->host_error[i];
    return 0;
}

int pgw__ci_build_hosts(pgw_conninfo_t *ci, err_out_t *e)
{
    const char *host = VAL(ci, "host"), *addr = VAL(ci, "hostaddr"), *port = VAL(ci, "port");
    bool has_host = host && *host, has_addr = addr && *addr;
    size_t nhost = has_host ? list_count(host) : 0, naddr = has_addr ? list_count(addr) : 0;
    size_t n = has_addr ? naddr : has_host ? nhost : 1;
    if (has_host && has_addr && nhost != naddr)
        return FAIL(e, "could not match %zu host names to %zu hostaddr values", nhost, naddr);
    size_t nport = port && *port ? list_count(port) : 0;
    if (nport > 1 && nport != n)
        return FAIL(e, "could not match %zu port numbers to %zu hosts", nport, n);
    ci->port_list = nport ? list_split(ci->alloc, port) : NULL;
    ci->host_list = has_host ? list_split(ci->alloc, host) : NULL;
    ci->addr_list = has_addr ? list_split(ci->alloc, addr) : NULL;
    ci->hosts = pgw__calloc(ci->alloc, n, sizeof *ci->hosts);
    ci->host_error = pgw__calloc(ci->alloc, n, sizeof *ci->host_error);
    int rc = 0;
    if ((nport && !ci->port_list) || (has_host && !ci->host_list) || (has_addr && !ci->addr_list) ||
        !ci->hosts || !ci->host_error)
        rc = PGW_ENOMEM;
    ci->nhosts = rc == 0 ? n : 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        pgw_host_t *h = &ci->hosts[i];
        h->host = has_host ? list_item(ci->host_list, i) : "";
        h->hostaddr = has_addr ? list_item(ci->addr_list, i) : NULL;
        if (h->hostaddr && !*h->hostaddr) h->hostaddr = NULL;
        if (!*h->host && !h->hostaddr) h->host = PGW_DEFAULT_SOCKET_DIR;
        h->is_unix = !h->hostaddr && (h->host[0] == '/' || h->host[0] == '@');
        h->port_text = nport ? list_item(ci->port_list, nport == 1 ? 0 : i) : "";
        if (!*h->port_text) h->port_text = "5432";
        rc = check_host(ci, i);
    }
    /* libpq reaches the first host before anything else: a port there that
     * is not an integer fails the connect before any host is contacted,
     * which is a parse error here */
    if (rc == 0 && ci->hosts[0].error_ends_connect) return FAIL(e, "%s", ci->hosts[0].error);
    return rc;
}
