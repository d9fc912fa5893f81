/*
 * libpgwire-pq's internal interface between its two halves: the
 * connection (PGconn: connect, queries, pipeline, COPY, cancel,
 * notifications; src/pq/conn*.c, exec*.c ...) and the results (PGresult
 * and its accessors, escaping, encodings, PQExpBuffer, conninfo
 * functions; src/pq/result*.c ...). Only src/pq includes it.
 */
#ifndef PGW_PQ_INTERNAL_H
#define PGW_PQ_INTERNAL_H

#include "libpq-events.h"
#include "libpq-fe.h"
#include "pgwire/result.h"

/* The notice hooks of a connection, copied into each result it makes
 * (libpq's PGNoticeHooks: PQmakeEmptyPGresult copies them; a result's
 * notice processor is its connection's at the time it was made). */
typedef struct pq_notice_hooks {
    PQnoticeReceiver receiver;
    void *receiver_arg;
    PQnoticeProcessor processor;
    void *processor_arg;
} pq_notice_hooks_t;

/* An event procedure (libpq-events.h) registered on a connection, and its
 * copy in each result the connection makes (the instance data starts NULL
 * in each). */
typedef struct pq_event {
    PGEventProc proc;
    void *pass;      /* the pass-through pointer, for the life of the connection */
    void *data;      /* PQinstanceData / PQresultInstanceData */
    int initialized; /* a result's RESULTCREATE (or RESULTCOPY) succeeded:
                      * RESULTDESTROY is owed */
} pq_event_t;

/* ---- provided by the connection half ---- */

/* The connection's notice hooks (NULL conn: libpq's defaults, which print
 * to stderr). */
const pq_notice_hooks_t *pq__conn_notice_hooks(const PGconn *conn);
/* How error messages of results made for conn are worded
 * (PQsetErrorVerbosity, PQsetErrorContextVisibility; NULL conn: libpq's
 * defaults, PQERRORS_DEFAULT and PQSHOW_CONTEXT_ERRORS). */
PGVerbosity pq__conn_verbosity(const PGconn *conn);
PGContextVisibility pq__conn_show_context(const PGconn *conn);

/* Appends the printf-formatted text to conn's PQerrorMessage (escaping,
 * large objects and PQencryptPasswordConn report their errors there). */
void pq__conn_append_error(PGconn *conn, const char *fmt, ...);
/* Empties conn's PQerrorMessage unless commands are in flight (libpq's
 * pqClearConnErrorState at the start of PQescapeLiteral and friends). */
void pq__conn_clear_error(PGconn *conn);

/* ---- provided by the results half ---- */

/* A result of one statement from libpgwire's result r (one element of a
 * chain, pgw_result_next is not followed): rows and columns copied (every
 * value NUL-terminated, as libpq's), the command tag, the OID, or the
 * server's error as PGRES_FATAL_ERROR with every field and the message
 * worded per conn's verbosity. NULL when out of memory. */
PGresult *pq__result_from_pgw(const PGconn *conn, const pgw_result_t *r);
/* A result of status with the message msg (a client-side error, worded as
 * libpq words it, ending in a newline). NULL when out of memory. */
PGresult *pq__result_error(const PGconn *conn, ExecStatusType status, const char *msg);
/* A notice (PGRES_NONFATAL_ERROR) from the server's NoticeResponse, as the
 * notice receiver gets it; query (NULL: none) is the text of the command
 * the server is running, where a position is shown (LINE n: and a caret).
 * NULL when out of memory. */
PGresult *pq__result_notice(const PGconn *conn, const pgw_error_t *notice, const char *query);

/* pq__result_from_pgw with what libpq keeps beside: query is the SQL the
 * command sent (PQexec's, PQsendQueryParams', PQprepare's: libpq's
 * cmd_queue_head->query), shown with a caret under an error's position
 * ("LINE 1: ..."; NULL: " at character N" instead); describe != 0 makes
 * the PGRES_COMMAND_OK result of PQprepare / PQdescribePrepared /
 * PQdescribePortal, with the columns and parameter types r describes. */
PGresult *pq__result_from_pgw_ex(const PGconn *conn, const pgw_result_t *r, const char *query,
                                 int describe);
/* An empty result of status with the columns of row (a row streamed by
 * the session) and room for rows rows (at least one) without a further
 * allocation; the rows go in with pq__result_add_row. NULL when out of
 * memory. */
PGresult *pq__result_for_rows(const PGconn *conn, ExecStatusType status, const pgw_row_t *row,
                              int rows);
/* Appends a row of values (one per column of res, views that are copied)
 * to res. 1, or 0 when out of memory (res unchanged). */
int pq__result_add_row(PGresult *res, const pgw_value_t *values);
/* The PGRES_COPY_IN / PGRES_COPY_OUT result of a COPY that began (status),
 * with ncols columns of the formats formats (NULL: all of format format);
 * its columns have no names (PQfname NULL), as libpq's. NULL when out of
 * memory. */
PGresult *pq__result_copy_start(PGconn *conn, ExecStatusType status, int ncols,
                                const int16_t *formats, int format);
/* The notice hooks res carries (a copy of its connection's when it was
 * made). libpq's default notice receiver prints through the processor of
 * the notice it receives, not through a connection, which may be gone
 * when a result's accessor reports an out-of-range number. */
const pq_notice_hooks_t *pq__result_notice_hooks(const PGresult *res);
/* A ParameterStatus the server reported (any connection): PQescapeString
 * and PQescapeBytea, which have no connection, use the last
 * client_encoding and standard_conforming_strings reported, as libpq. */
void pq__note_parameter(const char *name, const char *value);

/* The encoding id (libpq's pg_enc numbering, PQclientEncoding's value) of
 * the client_encoding a server reported: SQL_ASCII for a name libpq does
 * not know, as libpq's pqSaveParameterStatus. */
int pq__encoding_id(const char *name);

/* ---- events (events.c), between the two halves ---- */

/* Gives res a copy of conn's event procedures (none for a NULL conn), as
 * libpq's PQmakeEmptyPGresult does. 0, or -1 when out of memory. */
int pq__result_inherit_events(PGresult *res, const PGconn *conn);
/* PQcopyResult's PG_COPYRES_EVENTS: dest gets src's procedures and a
 * PGEVT_RESULTCOPY for each src initialized. 0, or -1 when out of memory. */
int pq__result_copy_events(PGresult *dest, const PGresult *src);
/* PQclear's part: PGEVT_RESULTDESTROY for each initialized procedure, then
 * the copies are freed. */
void pq__result_events_free(PGresult *res);
/* PGEVT_CONNRESET to every procedure, after a successful PQreset or the
 * PQresetPoll that returns PGRES_POLLING_OK (what they return is
 * ignored, as libpq 15 does). */
void pq__conn_fire_reset(PGconn *conn);
/* PQfinish's part: PGEVT_CONNDESTROY to every procedure, then the
 * registrations are freed. */
void pq__conn_events_free(PGconn *conn);

#endif
