/*
 * What a connection reports: PQparameterStatus of the parameters the server
 * reports (and after SET), PQtransactionStatus through BEGIN / an error /
 * ROLLBACK / COMMIT / a savepoint, PQserverVersion, PQprotocolVersion, PQdb,
 * PQuser, PQpass, PQhost, PQhostaddr, PQport, PQoptions, PQstatus,
 * PQsslInUse, PQsslAttribute(Names), PQgssEncInUse, PQbackendPID (shape),
 * PQsocket (shape), PQclientEncoding, PQisBusy, PQisnonblocking,
 * PQsetnonblocking, PQreset; and the same accessors on a NULL connection.
 */
#include "pqdiff.h"

static const char *const params[] = {
    "server_version",
    "server_encoding",
    "client_encoding",
    "application_name",
    "DateStyle",
    "IntervalStyle",
    "TimeZone",
    "integer_datetimes",
    "standard_conforming_strings",
    "is_superuser",
    "session_authorization",
    "default_transaction_read_only",
    "in_hot_standby",
    "no_such_parameter",
    "",
};

static void show_params(PGconn *conn)
{
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        printf("  param %s", params[i]);
        pqd_print_str("", PQparameterStatus(conn, params[i]));
    }
}

static void tx(PGconn *conn, const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    printf("%-40s -> %-16s tx=%s\n", sql, PQresStatus(PQresultStatus(r)),
           pqd_txstatus(PQtransactionStatus(conn)));
    PQclear(r);
}

static void accessors(PGconn *conn)
{
    pqd_print_str("  db", PQdb(conn));
    pqd_print_str("  user", PQuser(conn));
    pqd_print_str("  pass", PQpass(conn));
    pqd_print_str("  host", PQhost(conn));
    pqd_print_str("  hostaddr", PQhostaddr(conn));
    pqd_print_str("  port", PQport(conn));
    pqd_print_str("  tty", PQtty(conn));
    pqd_print_str("  options", PQoptions(conn));
    printf("  status=%s tx=%s server=%d protocol=%d pid=%s socket=%s\n",
           pqd_connstatus(PQstatus(conn)), pqd_txstatus(PQtransactionStatus(conn)),
           PQserverVersion(conn), PQprotocolVersion(conn), PQbackendPID(conn) > 0 ? "set" : "0",
           PQsocket(conn) >= 0 ? "set" : "-1");
    printf("  ssl=%d gss=%d usedPassword=%d needsPassword=%d busy=%d nonblocking=%d enc=%d"
           " pipeline=%s\n",
           PQsslInUse(conn), PQgssEncInUse(conn), PQconnectionUsedPassword(conn),
           PQconnectionNeedsPassword(conn), PQisBusy(conn), PQisnonblocking(conn),
           PQclientEncoding(conn), pqd_pipestatus(PQpipelineStatus(conn)));
    const char *const *names = PQsslAttributeNames(conn);
    for (; names && *names; names++) {
        printf("  sslattr %s", *names);
        pqd_print_str("", PQsslAttribute(conn, *names));
    }
    pqd_print_str("  sslattr library", PQsslAttribute(conn, "library"));
    printf("  getssl=%s\n", PQgetssl(conn) ? "set" : "NULL");
    pqd_print_str("  errmsg", PQerrorMessage(conn));
}

int main(void)
{
    pqd_init();
    PGconn *conn = pqd_connect_with((const char *[]){"application_name", "diff-session", NULL});
    accessors(conn);
    show_params(conn);
    tx(conn, "SET application_name = 'renamed'");
    tx(conn, "SET DateStyle = 'SQL, DMY'");
    tx(conn, "SET TimeZone = 'Europe/Paris'");
    tx(conn, "SET IntervalStyle = 'iso_8601'");
    tx(conn, "SET client_encoding = 'LATIN1'");
    printf("  clientEncoding=%d\n", PQclientEncoding(conn));
    show_params(conn);
    tx(conn, "RESET ALL");
    show_params(conn);

    tx(conn, "BEGIN");
    tx(conn, "SELECT 1");
    tx(conn, "SAVEPOINT s1");
    tx(conn, "SELECT 1/0");
    tx(conn, "SELECT 1");
    tx(conn, "ROLLBACK TO s1");
    tx(conn, "SELECT 1");
    tx(conn, "COMMIT");
    tx(conn, "BEGIN");
    tx(conn, "SELECT nope");
    tx(conn, "COMMIT");
    tx(conn, "ROLLBACK");
    tx(conn, "START TRANSACTION ISOLATION LEVEL SERIALIZABLE READ ONLY");
    tx(conn, "CREATE TEMP TABLE ro(a int)");
    tx(conn, "ROLLBACK");
    tx(conn, "ROLLBACK");
    tx(conn, "COMMIT");

    printf("send -> %d tx=%s busy=%d\n", PQsendQuery(conn, "SELECT pg_sleep(0.05)"),
           pqd_txstatus(PQtransactionStatus(conn)), PQisBusy(conn));
    pqd_drain(conn, "r");
    printf("setnonblocking -> %d nonblocking=%d\n", PQsetnonblocking(conn, 1),
           PQisnonblocking(conn));
    printf("flush -> %d\n", PQflush(conn));
    printf("setnonblocking -> %d nonblocking=%d\n", PQsetnonblocking(conn, 0),
           PQisnonblocking(conn));

    tx(conn, "SET application_name = 'before reset'");
    PQreset(conn);
    printf("after reset:\n");
    accessors(conn);
    show_params(conn);
    PQfinish(conn);

    printf("NULL connection:\n");
    accessors(NULL);
    show_params(NULL);
    printf("libVersion=%d\n", PQlibVersion());
    return 0;
}
