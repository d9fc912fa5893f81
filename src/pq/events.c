/*
 * libpq's event procedures (libpq-events.h): registered on a PGconn, copied
 * into each PGresult it makes, told of the connection's registration,
 * reset and end and of each result's creation, copy and end. What a
 * procedure returns counts only at registration; a failed RESULTCREATE or
 * RESULTCOPY just owes it no RESULTDESTROY, as libpq 15 has it.
 */
#define _GNU_SOURCE
#include "pq/conn_internal.h"

#include <stdlib.h>

#include "pq/result_internal.h"

static pq_event_t *find(pq_event_t *ev, int n, PGEventProc proc)
{
    for (int i = 0; proc && i < n; i++)
        if (ev[i].proc == proc) return &ev[i];
    return NULL;
}

/* The instance data of proc among ev: set (1, or 0 when proc is not
 * there), or read (NULL when not there). */
static int set_data(pq_event_t *ev, int n, PGEventProc proc, void *data)
{
    pq_event_t *e = find(ev, n, proc);
    if (e) e->data = data;
    return e != NULL;
}

static void *get_data(pq_event_t *ev, int n, PGEventProc proc)
{
    pq_event_t *e = find(ev, n, proc);
    return e ? e->data : NULL;
}

/* A copy of n registrations with no instance data, none initialized. */
static pq_event_t *dup_events(const pq_event_t *ev, int n)
{
    pq_event_t *copy = malloc((size_t)n * sizeof *copy);
    if (!copy) return NULL;
    for (int i = 0; i < n; i++)
        copy[i] = (pq_event_t){.proc = ev[i].proc, .pass = ev[i].pass};
    return copy;
}

/* ------------------------------------------------------------ connection */

int PQregisterEventProc(PGconn *conn, PGEventProc proc, const char *name, void *passThrough)
{
    if (!conn || !proc || !name || !*name) return 0;
    if (find(conn->events, conn->nevents, proc)) return 0;
    if (conn->nevents == conn->events_cap) {
        int cap = conn->events_cap ? 2 * conn->events_cap : 8;
        pq_event_t *ev = realloc(conn->events, (size_t)cap * sizeof *ev);
        if (!ev) return 0;
        conn->events = ev;
        conn->events_cap = cap;
    }
    conn->events[conn->nevents++] = (pq_event_t){.proc = proc, .pass = passThrough};
    PGEventRegister evt = {conn};
    if (!proc(PGEVT_REGISTER, &evt, passThrough)) {
        conn->nevents--;
        return 0;
    }
    return 1;
}

int PQsetInstanceData(PGconn *conn, PGEventProc proc, void *data)
{
    return conn ? set_data(conn->events, conn->nevents, proc, data) : 0;
}

void *PQinstanceData(const PGconn *conn, PGEventProc proc)
{
    return conn ? get_data(conn->events, conn->nevents, proc) : NULL;
}

void pq__conn_fire_reset(PGconn *conn)
{
    for (int i = 0; i < conn->nevents; i++) {
        PGEventConnReset evt = {conn};
        (void)conn->events[i].proc(PGEVT_CONNRESET, &evt, conn->events[i].pass);
    }
}

void pq__conn_events_free(PGconn *conn)
{
    for (int i = 0; i < conn->nevents; i++) {
        PGEventConnDestroy evt = {conn};
        (void)conn->events[i].proc(PGEVT_CONNDESTROY, &evt, conn->events[i].pass);
    }
    free(conn->events);
    conn->events = NULL;
    conn->nevents = conn->events_cap = 0;
}

/* ---------------------------------------------------------------- results */

int PQresultSetInstanceData(PGresult *result, PGEventProc proc, void *data)
{
    return result ? set_data(result->events, result->nevents, proc, data) : 0;
}

void *PQresultInstanceData(const PGresult *result, PGEventProc proc)
{
    return result ? get_data(result->events, result->nevents, proc) : NULL;
}

int PQfireResultCreateEvents(PGconn *conn, PGresult *res)
{
    if (!res) return 0;
    int ok = 1;
    for (int i = 0; i < res->nevents; i++) {
        pq_event_t *e = &res->events[i];
        if (e->initialized) continue;
        PGEventResultCreate evt = {conn, res};
        if (e->proc(PGEVT_RESULTCREATE, &evt, e->pass))
            e->initialized = 1;
        else
            ok = 0;
    }
    return ok;
}

int pq__result_inherit_events(PGresult *res, const PGconn *conn)
{
    if (!conn || !conn->nevents) return 0;
    res->events = dup_events(conn->events, conn->nevents);
    if (!res->events) return -1;
    res->nevents = conn->nevents;
    return 0;
}

int pq__result_copy_events(PGresult *dest, const PGresult *src)
{
    if (!src->nevents) return 0;
    dest->events = dup_events(src->events, src->nevents);
    if (!dest->events) return -1;
    dest->nevents = src->nevents;
    for (int i = 0; i < dest->nevents; i++) {
        if (!src->events[i].initialized) continue;
        PGEventResultCopy evt = {src, dest};
        if (dest->events[i].proc(PGEVT_RESULTCOPY, &evt, dest->events[i].pass))
            dest->events[i].initialized = 1;
    }
    return 0;
}

void pq__result_events_free(PGresult *res)
{
    for (int i = 0; i < res->nevents; i++) {
        if (!res->events[i].initialized) continue;
        PGEventResultDestroy evt = {res};
        (void)res->events[i].proc(PGEVT_RESULTDESTROY, &evt, res->events[i].pass);
    }
    free(res->events);
    res->events = NULL;
    res->nevents = 0;
}
