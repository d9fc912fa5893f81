/*
 * Connecting with the blocking client. The connection string is the first
 * argument, or "" (PGHOST, PGPORT, PGUSER, PGDATABASE, PGPASSWORD, the
 * service file and ~/.pgpass then apply, as in libpq). Shows what the
 * string resolves to, connects, prints what the server reported, then
 * shows what a failed connect reports. Exits 1 if the first connect fails
 * or the second one does not.
 */
#include <pgwire.h>
#include <stdio.h>

static const char *or_none(const char *s)
{
    return s ? s : "(none)";
}

int main(int argc, char **argv)
{
    const char *conninfo = argc > 1 ? argv[1] : "";
    char err[1024];

    /* What the string means once the environment and defaults are in. */
    pgw_conninfo_t *ci;
    if (pgw_conninfo_parse(&ci, conninfo, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "bad connection string: %s\n", err);
        return 1;
    }
    pgw_host_t host;
    pgw_conninfo_host(ci, 0, &host);
    printf("%zu host(s), first %s port %u; user %s, dbname %s, sslmode %s\n",
           pgw_conninfo_nhosts(ci), host.host, (unsigned)host.port,
           or_none(pgw_conninfo_get(ci, "user")), or_none(pgw_conninfo_get(ci, "dbname")),
           or_none(pgw_conninfo_get(ci, "sslmode")));
    pgw_conninfo_free(ci);

    /* Connect: on failure err holds libpq's PQerrorMessage text. */
    pgw_client_t *db;
    int rc = pgw_client_connect_err(&db, conninfo, NULL, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "connect failed (%s): %s\n", pgw_err_name(rc), err);
        return 1;
    }
    pgw_session_t *s = pgw_client_session(db);
    printf("connected to PostgreSQL %s as %s, backend pid %d, authentication %s\n",
           or_none(pgw_session_parameter(s, "server_version")),
           or_none(pgw_session_parameter(s, "session_authorization")),
           (int)pgw_client_backend_pid(db), or_none(pgw_session_auth_method(s)));
    pgw_client_close(db);

    /* A connect that fails: no server listens in this socket directory. */
    rc = pgw_client_connect_err(&db, "host=/nonexistent port=5432", NULL, err, sizeof err);
    printf("expected failure: %s (%s)\n  %s\n", pgw_err_name(rc), pgw_strerror(rc), err);
    return rc < 0 && db == NULL ? 0 : 1;
}
