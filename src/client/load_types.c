/*
 * pgw_client_load_types: the catalog query of types_container.h run on a
 * blocking client, its rows fed to the registry in place.
 */
#include "pgwire/client.h"

int pgw_client_load_types(pgw_client_t *c, const char *const *names, size_t n,
                          pgw_type_registry_t *reg)
{
    if (!c || (!names && n > 0)) return PGW_EINVAL;
    if (!reg) reg = pgw_session_registry(pgw_client_session(c));
    pgw_array_enc_t ctx;
    pgw_param_t p = pgw_type_load_param(&ctx, names, n);
    pgw_result_t *res;
    int rc = pgw_client_query(c, pgw_type_load_sql(), &p, 1, &res);
    if (rc < 0) {
        pgw_result_free(res);
        return rc;
    }
    if (pgw_result_ncols(res) != PGW_TYPE_LOAD_NFIELDS) rc = PGW_EFORMAT;
    for (size_t r = 0; rc == 0 && r < pgw_result_nrows(res); r++) {
        pgw_view_t f[PGW_TYPE_LOAD_NFIELDS];
        for (size_t i = 0; rc == 0 && i < PGW_TYPE_LOAD_NFIELDS; i++) {
            pgw_value_t v;
            rc = pgw_result_value(res, r, i, &v);
            f[i].p = v.p;
            f[i].len = v.len;
        }
        if (rc == 0) rc = pgw_type_registry_load_row(reg, f, PGW_TYPE_LOAD_NFIELDS);
    }
    pgw_result_free(res);
    uint32_t oid;
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (pgw_type_lookup_name(reg, names[i], &oid) == PGW_ENOTFOUND) rc = PGW_ENOTFOUND;
    return rc;
}
