/*
 * A ParameterStatus of a client_encoding libpq does not know (no
 * PostgreSQL reports one: a proxy on a thread of this program,
 * tests/common/pgproxy.c, rewrites the server's): PQclientEncoding, the
 * escaping that follows it and the escaping without a connection, which
 * libpq bases on the last encoding any connection reported; both fall back
 * to SQL_ASCII. Then a known encoding reported the same way, and the
 * connection still answering through the proxy.
 */
#include "pgproxy.h"
#include "pqdiff.h"

static void connect_reporting(pgt_proxy_t *p, const char *encoding)
{
    char ci[512];
    pgt_proxy_rewrite_parameter(p, "client_encoding", encoding);
    /* the proxy rewrites plaintext only */
    PGconn *conn = PQconnectdb(pgt_proxy_conninfo(p, ci, sizeof ci, "sslmode=disable"));
    if (PQstatus(conn) != CONNECTION_OK) {
        printf("connect failed: %s", PQerrorMessage(conn));
        exit(1);
    }
    printf("-- reported client_encoding %s\n", PQparameterStatus(conn, "client_encoding"));
    int enc = PQclientEncoding(conn);
    printf("PQclientEncoding %d (%s)\n", enc, pg_encoding_to_char(enc));
    static const char in[] = "caf\xc3\xa9 'x' \\ \x81'";
    pqd_print_escapes(conn, in, sizeof in - 1);
    char out[2 * sizeof in + 1];
    size_t n = PQescapeString(out, in, sizeof in - 1);
    printf("PQescapeString -> %zu", n);
    pqd_print_str(" out", out);
    PGresult *r = PQexec(conn, "SELECT 1");
    printf("SELECT 1: %s %s\n", PQresStatus(PQresultStatus(r)), PQgetvalue(r, 0, 0));
    PQclear(r);
    PQfinish(conn);
}

int main(void)
{
    pqd_init();
    pgt_proxy_t *p = pgt_proxy_start_server();
    connect_reporting(p, "no_such_encoding");
    connect_reporting(p, "LATIN1");
    connect_reporting(p, "");
    pgt_proxy_stop(p);
    return 0;
}
