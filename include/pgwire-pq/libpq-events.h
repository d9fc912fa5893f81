/*
 * libpgwire-pq: libpq's event procedures (libpq-events.h) over libpgwire,
 * ABI-identical to libpq 15's header.
 *
 * An application registers a procedure on a connection; it hears the
 * connection's registration, reset and destruction, and the creation, copy
 * and destruction of every result the connection makes, and can keep data
 * of its own (instance data) with the connection and with each result:
 *
 *   PGEVT_REGISTER       from PQregisterEventProc; returning 0 undoes the
 *                        registration.
 *   PGEVT_CONNRESET      after PQreset (or the PQresetPoll returning
 *                        PGRES_POLLING_OK) reconnected; the return value is
 *                        ignored.
 *   PGEVT_CONNDESTROY    from PQfinish, after the connection is closed.
 *   PGEVT_RESULTCREATE   before PQgetResult (and so PQexec and friends)
 *                        hands out a result, and from
 *                        PQfireResultCreateEvents. A procedure that returns
 *                        0 gets no PGEVT_RESULTDESTROY for that result; the
 *                        result is handed out unchanged.
 *   PGEVT_RESULTCOPY     from PQcopyResult with PG_COPYRES_EVENTS, for each
 *                        procedure whose RESULTCREATE succeeded on the
 *                        source; 0 means no RESULTDESTROY for the copy.
 *   PGEVT_RESULTDESTROY  from PQclear, for each procedure whose
 *                        RESULTCREATE or RESULTCOPY succeeded.
 *
 * A result gets the procedures registered on its connection when it is
 * made (PQmakeEmptyPGresult with a connection included), with instance
 * data NULL: the connection's instance data is not inherited. The library
 * never frees instance data or the pass-through pointer: the procedure
 * does, at PGEVT_RESULTDESTROY and PGEVT_CONNDESTROY.
 */
#ifndef LIBPQ_EVENTS_H
#define LIBPQ_EVENTS_H

#include "libpq-fe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The events, in libpq's order. */
typedef enum {
    PGEVT_REGISTER,
    PGEVT_CONNRESET,
    PGEVT_CONNDESTROY,
    PGEVT_RESULTCREATE,
    PGEVT_RESULTCOPY,
    PGEVT_RESULTDESTROY
} PGEventId;

/* What each event's evtInfo points to. */
typedef struct {
    PGconn *conn;
} PGEventRegister;

typedef struct {
    PGconn *conn;
} PGEventConnReset;

typedef struct {
    PGconn *conn;
} PGEventConnDestroy;

typedef struct {
    PGconn *conn; /* NULL when PQfireResultCreateEvents was given none */
    PGresult *result;
} PGEventResultCreate;

typedef struct {
    const PGresult *src;
    PGresult *dest;
} PGEventResultCopy;

typedef struct {
    PGresult *result;
} PGEventResultDestroy;

/* An event procedure: evtInfo points to the event's struct above,
 * passThrough is what PQregisterEventProc was given. Nonzero for success. */
typedef int (*PGEventProc)(PGEventId evtId, void *evtInfo, void *passThrough);

/* Registers proc on conn with a name (required, non-empty; kept for
 * nothing but libpq's signature) and a pass-through pointer, then sends it
 * PGEVT_REGISTER. 1 on success; 0 for a NULL conn or proc, a NULL or empty
 * name, a proc already registered on conn, no memory, or a proc that
 * refused PGEVT_REGISTER (then it is not registered). */
extern int PQregisterEventProc(PGconn *conn, PGEventProc proc, const char *name, void *passThrough);
/* Sets conn's instance data for proc: 1, or 0 when proc is not registered
 * on conn (or either is NULL). */
extern int PQsetInstanceData(PGconn *conn, PGEventProc proc, void *data);
/* conn's instance data for proc, NULL when none or proc is not registered. */
extern void *PQinstanceData(const PGconn *conn, PGEventProc proc);
/* Sets result's instance data for proc: 1, or 0 when result has no copy of
 * proc (or either is NULL). */
extern int PQresultSetInstanceData(PGresult *result, PGEventProc proc, void *data);
/* result's instance data for proc, NULL when none. */
extern void *PQresultInstanceData(const PGresult *result, PGEventProc proc);
/* Sends PGEVT_RESULTCREATE (with conn, which may be NULL) to each of res's
 * procedures that has not had it successfully, as an application does for
 * a result it made with PQmakeEmptyPGresult. 1 when all succeeded; 0 for a
 * NULL res or at the first procedure that fails (the later ones are not
 * called). */
extern int PQfireResultCreateEvents(PGconn *conn, PGresult *res);

#ifdef __cplusplus
}
#endif

#endif /* LIBPQ_EVENTS_H */
