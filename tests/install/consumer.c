/* A program built against libpgwire as a user builds it (installed, or
 * through add_subdirectory): it must compile with the umbrella header
 * alone, under the user's warnings, and link with what the package says. */
#include <pgwire.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    if (strcmp(pgw_version(), PGW_VERSION_STRING) != 0) return 1;
    if (strcmp(pgw_err_name(PGW_EPROTO), "EPROTO") != 0) return 1;
    pgw_param_t p = pgw_int4(42);
    pgw_pool_config_t pool; /* pgwire/pool.h, through the umbrella header */
    pgw_pool_config_init(&pool);
    if (pool.size != sizeof pool) return 1;
    printf("libpgwire %s, param oid %u\n", pgw_version(), (unsigned)p.oid);
    return 0;
}
