/*
 * The results half of libpgwire-pq: struct pg_result and its storage.
 * Only src/pq/result*.c include it (the connection half goes through
 * pq_internal.h and the public accessors).
 *
 * Storage: a PGresult and everything it holds (column descriptions, the
 * cells, every value with its NUL, the error's fields and message) live in
 * one allocation when the result is made from a libpgwire result, whose
 * size is known in advance; later growth (PQsetvalue, PQresultAlloc ...)
 * takes blocks of its own, chained and freed with the result, as libpq's
 * PGresult_data blocks.
 */
#ifndef PGW_PQ_RESULT_INTERNAL_H
#define PGW_PQ_RESULT_INTERNAL_H

#include <stddef.h>

#include "pq/pq_internal.h"

/* libpq's CMDSTATUS_LEN: the command tag is cut to 63 bytes. */
#define PQ_CMDSTATUS_LEN 64
/* A cell's len for SQL NULL (libpq's NULL_LEN). */
#define PQ_NULL_LEN (-1)

typedef struct pq_cell {
    int len;     /* bytes, PQ_NULL_LEN for NULL */
    char *value; /* NUL-terminated; the result's "" for NULL and empty values */
} pq_cell_t;

/* A block of storage beyond the first allocation. */
typedef struct pq_block {
    struct pq_block *next;
} pq_block_t;

struct pg_result {
    ExecStatusType status;
    int ntups, nfields, nparams;
    int binary; /* every column binary */
    int client_encoding;
    PGresAttDesc *attDescs;
    pq_cell_t *cells; /* ntups * nfields, row-major */
    int cell_rows;    /* rows cells has room for */
    int cells_owned;  /* cells is a malloc of its own (grown by PQsetvalue) */
    Oid *paramTypes;
    char cmdStatus[PQ_CMDSTATUS_LEN];
    char *errMsg;   /* NULL: none */
    int has_fields; /* err holds a server error or notice (pq__result_fields) */
    char *errQuery; /* the SQL the error's position points into, or NULL */
    pq_notice_hooks_t hooks;
    pq_event_t *events; /* copies of the connection's event procedures */
    int nevents;
    char null_field[1]; /* "" */
    /* A held notice of the statement whose result follows it: 0 before
     * its rows, k after k of them, -1 after the last (it came right after
     * the statement's end). Single-row mode puts it there (exec.c). */
    long notice_rows;
    /* A chunk of streamed rows: the statement's rows up to its last. */
    long rows_through;

    /* storage */
    char *cur;          /* free space of the current block */
    size_t left;        /* its size */
    pq_block_t *blocks; /* blocks to free with the result */
    size_t memorySize;  /* PQresultMemorySize */

    /* Last, and left unset by pq__result_new (most results are not
     * errors): the error's fields, strings in the result's storage; read
     * only when has_fields. */
    pgw_error_t err;
};

/* The result holds an error's or notice's fields: res->err, cleared, for
 * the caller to fill. */
void pq__result_fields(PGresult *res);
/* size bytes of the result's storage (aligned for any type), NULL when out
 * of memory. */
void *pq__result_alloc(PGresult *res, size_t size);
/* A copy of n bytes of s followed by a NUL in the result's storage. */
char *pq__result_strndup(PGresult *res, const char *s, size_t n);
/* A new result of status whose first allocation has room for extra bytes
 * of storage; conn's notice hooks and client encoding (NULL conn: the
 * defaults). NULL when out of memory. */
PGresult *pq__result_new(const PGconn *conn, ExecStatusType status, size_t extra);
/* Sends a notice through res's notice receiver, as libpq's
 * pqInternalNotice: the printf-formatted primary message. */
void pq__result_internal_notice(const pq_notice_hooks_t *hooks, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The error message of res as libpq's pqBuildErrorMessage3 words it;
 * malloc'd, NULL when out of memory. */
char *pq__result_build_message(const PGresult *res, PGVerbosity verbosity,
                               PGContextVisibility show_context);

#endif
