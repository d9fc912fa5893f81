/*
 * What the library makes of an error's SQLSTATE and severity (proto.h):
 * the one place each classification is written.
 */
#include "pgwire/proto.h"

#include <string.h>

PGW_EXTERN int pgw_sqlstate_is(const char *sqlstate, size_t n, const char *code)
{
    return sqlstate && n == 5 && memcmp(sqlstate, code, 5) == 0;
}

PGW_EXTERN int pgw_severity_ends_connection(const char *severity, size_t n)
{
    return severity && n == 5 &&
           (memcmp(severity, "FATAL", 5) == 0 || memcmp(severity, "PANIC", 5) == 0);
}

PGW_EXTERN int pgw_sqlstate_server_going_away(const char *sqlstate)
{
    if (!sqlstate) return 0;
    size_t n = strlen(sqlstate);
    return pgw_sqlstate_is(sqlstate, n, PGW_SQLSTATE_ADMIN_SHUTDOWN) ||
           pgw_sqlstate_is(sqlstate, n, PGW_SQLSTATE_CRASH_SHUTDOWN) ||
           pgw_sqlstate_is(sqlstate, n, PGW_SQLSTATE_CANNOT_CONNECT_NOW);
}
