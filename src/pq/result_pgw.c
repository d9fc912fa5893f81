/*
 * PGresults from libpgwire's results and errors, and the error accessors:
 * pq__result_from_pgw(_ex), pq__result_error, pq__result_notice,
 * PQresultErrorField, PQresultVerboseErrorMessage. Messages are worded by
 * libpgwire's pgw_error_format, which writes libpq's pqBuildErrorMessage3
 * text; this file only maps libpq's verbosity and CONTEXT settings onto it.
 */
#define _POSIX_C_SOURCE 200809L
#include "pq/result_internal.h"
#include "session/session_internal.h" /* struct pgw_result: have_desc */

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN_UP(n) (((n) + 7) & ~(size_t)7)

/* ------------------------------------------------------------- messages */

static pgw_error_verbosity_t pgw_verbosity(PGVerbosity v)
{
    switch (v) {
    case PQERRORS_TERSE:
        return PGW_ERRORS_TERSE;
    case PQERRORS_VERBOSE:
        return PGW_ERRORS_VERBOSE;
    case PQERRORS_SQLSTATE:
        return PGW_ERRORS_SQLSTATE;
    default:
        return PGW_ERRORS_DEFAULT;
    }
}

char *pq__result_build_message(const PGresult *res, PGVerbosity verbosity,
                               PGContextVisibility show_context)
{
    if (!res->has_fields)
        return strdup(res->errMsg && res->errMsg[0] ? res->errMsg : "no error message available\n");
    /* libpq decides CONTEXT by the result's status and the setting;
     * pgw_error_format shows it for an error severity: say which. */
    pgw_error_t e = res->err;
    if (show_context == PQSHOW_CONTEXT_ALWAYS ||
        (show_context == PQSHOW_CONTEXT_ERRORS && res->status == PGRES_FATAL_ERROR))
        e.severity_nonlocal = "ERROR";
    else
        e.where = NULL;
    pgw_error_verbosity_t v = pgw_verbosity(verbosity);
    int n = pgw_error_format(&e, res->errQuery, v, NULL, 0);
    if (n < 0) return NULL;
    char *msg = malloc((size_t)n + 1);
    if (!msg) return NULL;
    pgw_error_format(&e, res->errQuery, v, msg, (size_t)n + 1);
    return msg;
}

/* The fields of e copied into res; errQuery when the position points into
 * query (libpq keeps the query only then). 0 when out of memory. */
static int copy_error(PGresult *res, const pgw_error_t *e, const char *query)
{
    pq__result_fields(res);
#define PQ__COPY_FIELD(code, member, desc)                                                       \
    if (e->member && !(res->err.member = pq__result_strndup(res, e->member, strlen(e->member)))) \
        return 0;
    PGW_ERROR_FIELD_MAP(PQ__COPY_FIELD)
#undef PQ__COPY_FIELD
    if (e->position && query && !(res->errQuery = pq__result_strndup(res, query, strlen(query))))
        return 0;
    return 1;
}

static size_t error_size(const pgw_error_t *e, const char *query)
{
    size_t n = 0;
#define PQ__FIELD_SIZE(code, member, desc) \
    if (e->member) n += ALIGN_UP(strlen(e->member) + 1);
    PGW_ERROR_FIELD_MAP(PQ__FIELD_SIZE)
#undef PQ__FIELD_SIZE
    if (e->position && query) n += ALIGN_UP(strlen(query) + 1);
    return n;
}

/* The message of an error or notice result per conn's settings, into the
 * result's storage. */
static void set_message(PGresult *res, const PGconn *conn)
{
    char *msg =
        pq__result_build_message(res, pq__conn_verbosity(conn), pq__conn_show_context(conn));
    res->errMsg = msg ? pq__result_strndup(res, msg, strlen(msg)) : NULL;
    if (!res->errMsg) res->errMsg = "out of memory\n";
    free(msg);
}

static PGresult *from_error(const PGconn *conn, ExecStatusType status, const pgw_error_t *e,
                            const char *query)
{
    /* The message is about as long as the fields: room for both. */
    size_t fields = error_size(e, query);
    PGresult *res = pq__result_new(conn, status, 2 * fields + 64);
    if (!res) return NULL;
    if (!copy_error(res, e, query)) {
        PQclear(res);
        return NULL;
    }
    set_message(res, conn);
    return res;
}

PGresult *pq__result_notice(const PGconn *conn, const pgw_error_t *notice, const char *query)
{
    return notice ? from_error(conn, PGRES_NONFATAL_ERROR, notice, query) : NULL;
}

PGresult *pq__result_error(const PGconn *conn, ExecStatusType status, const char *msg)
{
    size_t n = msg ? strlen(msg) : 0;
    PGresult *res = pq__result_new(conn, status, n + 1);
    if (!res) return NULL;
    res->errMsg = pq__result_strndup(res, msg ? msg : "", n);
    return res;
}

char *PQresultErrorField(const PGresult *res, int fieldcode)
{
    if (!res || !res->has_fields || fieldcode <= 0 || fieldcode > CHAR_MAX) return NULL;
    return (char *)pgw_error_field(&res->err, (char)fieldcode);
}

char *PQresultVerboseErrorMessage(const PGresult *res, PGVerbosity verbosity,
                                  PGContextVisibility show_context)
{
    if (!res || (res->status != PGRES_FATAL_ERROR && res->status != PGRES_NONFATAL_ERROR))
        return strdup("PGresult is not an error result\n");
    char *msg = pq__result_build_message(res, verbosity, show_context);
    return msg ? msg : strdup("out of memory\n");
}

/* ------------------------------------------------------ rows and columns */

/* The storage the descriptions of ncols columns take. */
static size_t columns_size(const pgw_field_desc_t *fields, size_t ncols)
{
    size_t n = ALIGN_UP(ncols * sizeof(PGresAttDesc));
    for (size_t c = 0; c < ncols; c++)
        n += ALIGN_UP(fields[c].name.len + 1);
    return n;
}

/* The storage the columns, cells and values of r take. */
static size_t data_size(const pgw_result_t *r, size_t nrows, size_t ncols)
{
    size_t n = columns_size(ncols ? pgw_result_field(r, 0) : NULL, ncols) +
               ALIGN_UP(nrows * ncols * sizeof(pq_cell_t)) +
               ALIGN_UP(pgw_result_nparams(r) * sizeof(Oid));
    pgw_row_t row;
    for (size_t i = 0; i < nrows && pgw_result_row(r, i, &row) == 0; i++)
        for (size_t c = 0; c < ncols; c++)
            if (row.values[c].len > 0) n += ALIGN_UP((size_t)row.values[c].len + 1);
    return n;
}

static int copy_columns(PGresult *res, const pgw_field_desc_t *fields, size_t ncols)
{
    if (!ncols) return 1;
    res->attDescs = pq__result_alloc(res, ncols * sizeof(PGresAttDesc));
    if (!res->attDescs) return 0;
    res->nfields = (int)ncols;
    res->binary = 1;
    for (size_t c = 0; c < ncols; c++) {
        const pgw_field_desc_t *f = &fields[c];
        PGresAttDesc *d = &res->attDescs[c];
        d->name = pq__result_strndup(res, f->name.p, f->name.len);
        if (!d->name) return 0;
        d->tableid = f->table_oid;
        d->columnid = f->attnum;
        d->format = f->format;
        d->typid = f->type_oid;
        d->typlen = f->typlen;
        d->atttypmod = f->typmod;
        if (f->format == 0) res->binary = 0;
    }
    return 1;
}

static int copy_rows(PGresult *res, const pgw_result_t *r, size_t nrows, size_t ncols)
{
    if (!nrows || !ncols) {
        res->ntups = (int)nrows;
        return 1;
    }
    res->cells = pq__result_alloc(res, nrows * ncols * sizeof(pq_cell_t));
    if (!res->cells) return 0;
    res->cell_rows = (int)nrows;
    pgw_row_t row;
    for (size_t i = 0; i < nrows; i++) {
        if (pgw_result_row(r, i, &row) != 0) return 0;
        pq_cell_t *out = res->cells + i * ncols;
        for (size_t c = 0; c < ncols; c++) {
            const pgw_value_t *v = &row.values[c];
            out[c].len = v->p && v->len >= 0 ? v->len : PQ_NULL_LEN;
            out[c].value = out[c].len > 0
                               ? pq__result_strndup(res, (const char *)v->p, (size_t)v->len)
                               : res->null_field;
            if (!out[c].value) return 0;
        }
        res->ntups++;
    }
    return 1;
}

/* The statement's parameter types: only a describe result has them (libpq's
 * PQnparams is 0 on a statement's own result, even when the session learnt
 * the types from a ParameterDescription on the way). */
static int copy_params(PGresult *res, const pgw_result_t *r)
{
    size_t n = pgw_result_nparams(r);
    if (!n) return 1;
    res->paramTypes = pq__result_alloc(res, n * sizeof(Oid));
    if (!res->paramTypes) return 0;
    for (size_t i = 0; i < n; i++)
        res->paramTypes[i] = pgw_result_param_type(r, i);
    res->nparams = (int)n;
    return 1;
}

/* libpq's status for what the server sent: rows, or a row description
 * (even of no columns: "SELECT;") make TUPLES_OK; a command tag without
 * them (CREATE TABLE AS's "SELECT 3") COMMAND_OK; no tag at all is an
 * empty query. libpgwire marks a NoData like a description of no columns,
 * so a zero-column description counts only with a SELECT tag. */
static ExecStatusType status_of(const pgw_result_t *r, int describe)
{
    if (describe) return PGRES_COMMAND_OK;
    const char *tag = pgw_result_command_tag(r);
    if (pgw_result_ncols(r) > 0 || pgw_result_nrows(r) > 0 ||
        (r->have_desc && tag[0] == 'S' && strncmp(tag, "SELECT ", 7) == 0))
        return PGRES_TUPLES_OK;
    return tag[0] ? PGRES_COMMAND_OK : PGRES_EMPTY_QUERY;
}

PGresult *pq__result_from_pgw_ex(const PGconn *conn, const pgw_result_t *r, const char *query,
                                 int describe)
{
    if (!r) return NULL;
    const pgw_error_t *e = pgw_result_error(r);
    if (e) return from_error(conn, PGRES_FATAL_ERROR, e, query);
    size_t nrows = pgw_result_nrows(r), ncols = pgw_result_ncols(r);
    if (nrows > INT_MAX)
        return pq__result_error(conn, PGRES_FATAL_ERROR,
                                "PGresult cannot support more than INT_MAX tuples\n");
    /* A command's result (no columns, no rows: most statements) needs no
     * storage beyond its header. */
    int bare = !ncols && !nrows && !describe;
    PGresult *res =
        pq__result_new(conn, status_of(r, describe), bare ? 0 : data_size(r, nrows, ncols));
    if (!res) return NULL;
    const char *tag = pgw_result_command_tag(r);
    size_t tlen = strlen(tag);
    if (tlen >= PQ_CMDSTATUS_LEN) tlen = PQ_CMDSTATUS_LEN - 1;
    memcpy(res->cmdStatus, tag, tlen);
    res->cmdStatus[tlen] = '\0';
    if (bare) return res;
    if (!copy_columns(res, ncols ? pgw_result_field(r, 0) : NULL, ncols) ||
        !copy_rows(res, r, nrows, ncols) || (describe && !copy_params(res, r))) {
        PQclear(res);
        return NULL;
    }
    return res;
}

PGresult *pq__result_for_rows(const PGconn *conn, ExecStatusType status, const pgw_row_t *row,
                              int rows)
{
    size_t ncols = row->ncols, nrows = rows > 0 ? (size_t)rows : 1;
    size_t n = columns_size(row->fields, ncols) + ALIGN_UP(nrows * ncols * sizeof(pq_cell_t));
    for (size_t c = 0; c < ncols; c++)
        if (row->values[c].len > 0) n += ALIGN_UP((size_t)row->values[c].len + 1);
    PGresult *res = pq__result_new(conn, status, n);
    if (!res) return NULL;
    if (!copy_columns(res, row->fields, ncols)) goto fail;
    if (ncols) {
        res->cells = pq__result_alloc(res, nrows * ncols * sizeof(pq_cell_t));
        if (!res->cells) goto fail;
        res->cell_rows = (int)nrows;
    }
    return res;
fail:
    PQclear(res);
    return NULL;
}

PGresult *pq__result_from_pgw(const PGconn *conn, const pgw_result_t *r)
{
    return pq__result_from_pgw_ex(conn, r, NULL, 0);
}
