/*
 * Connecting over TLS: the connection string (first argument) says how
 * the server is verified and how the client authenticates. Prints what
 * TLS negotiated and how the server authenticated the client, then shows
 * a verification failure with the same string and a root certificate
 * that cannot be read. Exits 1 unless the first connect succeeds over TLS
 * and the second fails.
 *
 *   ./example_tls_connect "host=db.example.com sslmode=verify-full sslrootcert=ca.crt"
 */
#include <pgwire.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    const char *conninfo = argc > 1 ? argv[1] : "";
    char err[1024];
    pgw_client_t *db;
    int rc = pgw_client_connect_err(&db, conninfo, NULL, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "connect failed (%s): %s\n", pgw_err_name(rc), err);
        return 1;
    }
    pgw_tls_info_t tls;
    pgw_client_tls_info(db, &tls);
    const char *auth = pgw_session_auth_method(pgw_client_session(db));
    if (tls.in_use)
        printf("TLS %s, %s (%d bits), server certificate %s; authentication %s\n", tls.protocol,
               tls.cipher, tls.key_bits, tls.peer_subject ? tls.peer_subject : "(none)",
               auth ? auth : "?");
    else
        printf("not encrypted; authentication %s\n", auth ? auth : "?");
    int encrypted = tls.in_use;
    pgw_client_close(db); /* tls's strings pointed into db: not used past here */

    /* A later keyword wins: the same string with a root certificate file
     * that does not exist. */
    char bad[2048];
    snprintf(bad, sizeof bad, "%s sslmode=verify-full sslrootcert=/nonexistent/root.crt", conninfo);
    rc = pgw_client_connect_err(&db, bad, NULL, err, sizeof err);
    printf("expected failure: %s: %s\n", pgw_err_name(rc), err);
    return encrypted && rc < 0 ? 0 : 1;
}
