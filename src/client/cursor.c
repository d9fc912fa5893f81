/*
 * Cursors of the blocking client: a portal read in batches (FETCH), two
 * fetches ahead of the caller once the portal has shown it has more rows
 * (so the server always has the next Execute queued while the caller reads
 * a batch and the one after it travels), closed when exhausted or
 * abandoned. Written
 * against the public request model: the open, the fetches and the close are
 * descriptors submitted to the client's connection (the caller's on_row and
 * ud on the open and the fetches, the cursor hearing each completion
 * through the driver hook, session.h "Driver completions"), and the
 * client's loop runs until the one the caller waits for has completed.
 */
#define _POSIX_C_SOURCE 200809L
#include "client/client_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

struct pgw_client_cursor;

/* One request in flight and what came back. */
typedef struct slot {
    struct pgw_client_cursor *cur;
    int busy; /* submitted, callback not fired yet */
    int status;
    pgw_result_t *res;
} slot_t;

struct pgw_client_cursor {
    pgw_client_t *c;
    char portal[40];
    uint32_t batch_rows;
    pgw_row_cb row_cb; /* the caller's, NULL: buffered batches */
    void *row_ud;
    /* The open, then the fetches: a ring of at most AHEAD outstanding
     * requests (in flight or completed, not yet handed out), oldest at
     * head. */
    slot_t batch[2];
    unsigned head, nbatch;
    slot_t close;
    slot_t *waiting_for; /* the slot a call of this cursor waits for */
    int closing;         /* the close was submitted */
    int end;             /* 0, or what every later next returns */
};

/* A cursor streaming to the caller's on_row hands out each batch's rows
 * during the next call that waits for that batch, never earlier: the
 * connection reads only while a call waits (see wait_slot), and stops
 * dispatching at the end of the batch waited for. */
static int streaming(const pgw_client_cursor_t *cur)
{
    return cur->row_cb != NULL;
}

static pgw_conn_t *conn_of(pgw_client_cursor_t *cur)
{
    return pgw_client_conn(cur->c);
}

/* The cursor takes the completion of each of its requests (the driver
 * hook): on_result is not called. */
static int take_slot(void *ctx, size_t index, int status, pgw_result_t **res)
{
    (void)index;
    slot_t *x = ctx;
    x->busy = 0;
    x->status = status;
    x->res = *res;
    /* The rows after the batch waited for stay unread until the next wait
     * (a batch completing during another call of the client does not
     * pause: that call waits for its own request). */
    if (streaming(x->cur) && x == x->cur->waiting_for) pgw_conn_pause_reading(conn_of(x->cur));
    return PGW_DRIVER_TAKEN;
}

/* Run the loop until x completed (or nothing can complete it). A streaming
 * cursor's reading, paused at the end of the batch before (or by the
 * caller's on_row: a blocking call waits anyway, so the rows go on),
 * resumes (in the loop's next turn) for it, and is left to resume in the
 * turn after: the next call on this client, whatever it is, reads on. */
static void wait_slot(pgw_client_cursor_t *cur, slot_t *x)
{
    cur->waiting_for = x;
    while (x->busy) {
        if (pgw_conn_reading_paused(conn_of(cur))) pgw_conn_resume_reading(conn_of(cur));
        if (pgw__client_turn(cur->c, UV_RUN_ONCE) == 0 && x->busy) {
            x->busy = 0;
            x->status = PGW_ECONNLOST;
        }
    }
    cur->waiting_for = NULL;
    if (streaming(cur)) pgw_conn_resume_reading(conn_of(cur));
}

/* Submit r into x, and write it now: the caller works on the previous batch
 * while this one travels. A streaming cursor does not read meanwhile. */
static int submit_slot(pgw_client_cursor_t *cur, slot_t *x, pgw_request_t *r)
{
    memset(x, 0, sizeof *x);
    x->cur = cur;
    x->busy = 1;
    int rc = pgw_conn_submit_driven(conn_of(cur), r, take_slot, x);
    if (rc < 0) {
        x->busy = 0;
        return rc;
    }
    if (streaming(cur)) pgw_conn_pause_reading(conn_of(cur));
    pgw__client_turn(cur->c, UV_RUN_NOWAIT);
    if (streaming(cur)) pgw_conn_resume_reading(conn_of(cur));
    return 0;
}

static int submit_close(pgw_client_cursor_t *cur)
{
    if (cur->closing) return 0;
    pgw_request_t r = PGW_CLOSE_PORTAL(cur->portal, NULL, NULL);
    int rc = submit_slot(cur, &cur->close, &r);
    if (rc == 0) cur->closing = 1;
    return rc;
}

#define AHEAD 2u

/* Submit r into the next free slot of the ring. */
static int submit_batch_slot(pgw_client_cursor_t *cur, pgw_request_t *r)
{
    int rc = submit_slot(cur, &cur->batch[(cur->head + cur->nbatch) % AHEAD], r);
    if (rc == 0) cur->nbatch++;
    return rc;
}

/* Keep AHEAD fetches outstanding. Only after a batch came back suspended:
 * a portal that completed on its first Execute (not a SELECT) must not be
 * executed again, while a SELECT portal past its end just answers an
 * empty batch. */
static int fill_fetches(pgw_client_cursor_t *cur)
{
    while (cur->nbatch < AHEAD) {
        pgw_request_t r = PGW_FETCH(cur->portal, cur->batch_rows, NULL, cur->row_ud);
        r.on_row = cur->row_cb;
        int rc = submit_batch_slot(cur, &r);
        if (rc < 0) return rc;
    }
    return 0;
}

/* Wait for every outstanding batch request and drop its result. */
static void drain_batches(pgw_client_cursor_t *cur)
{
    for (; cur->nbatch; cur->nbatch--, cur->head = (cur->head + 1) % AHEAD) {
        slot_t *x = &cur->batch[cur->head];
        wait_slot(cur, x);
        pgw_result_free(x->res);
        x->res = NULL;
    }
}

static int cursor_open(pgw_client_t *c, const pgw_request_t *desc, uint32_t batch_rows,
                       pgw_client_cursor_t **out)
{
    if (out) *out = NULL;
    if (!c || !desc || !out || batch_rows == 0) return PGW_EINVAL;
    pgw_request_t r;
    int rc = pgw_request_copy(&r, desc);
    if (rc < 0) return rc;
    if (r.kind != PGW_REQ_QUERY && r.kind != PGW_REQ_EXECUTE) return PGW_EINVAL;
    const pgw_allocator_t *a = pgw__client_alloc(c);
    pgw_client_cursor_t *cur = a->malloc(sizeof *cur, a->ud);
    if (!cur) return PGW_ENOMEM;
    memset(cur, 0, sizeof *cur);
    static atomic_ulong seq;
    snprintf(cur->portal, sizeof cur->portal, "pgw_cursor_%lu", atomic_fetch_add(&seq, 1) + 1);
    cur->c = c;
    cur->batch_rows = batch_rows;
    cur->row_cb = r.on_row;
    cur->row_ud = r.ud;
    /* What to run changes (its portal, its batch size); who hears it does
     * not: the caller's on_row and ud stay. */
    r.portal = cur->portal;
    r.max_rows = batch_rows;
    rc = submit_batch_slot(cur, &r);
    if (rc < 0) {
        a->free(cur, a->ud);
        return rc;
    }
    *out = cur;
    return 0;
}

/* The rows are exhausted: the close (already submitted) says how the
 * portal's transaction ended. */
static int finish(pgw_client_cursor_t *cur, pgw_result_t **res)
{
    int rc = submit_close(cur);
    if (rc == 0) {
        wait_slot(cur, &cur->close);
        rc = cur->close.status;
    }
    if (rc == PGW_ESERVER && res) {
        *res = cur->close.res;
        cur->close.res = NULL;
    }
    pgw_result_free(cur->close.res);
    cur->close.res = NULL;
    cur->end = rc < 0 ? rc : PGW_EDONE;
    return cur->end;
}

static int cursor_next(pgw_client_cursor_t *cur, pgw_result_t **res)
{
    for (;;) {
        if (cur->end) return cur->end;
        if (!cur->nbatch) return finish(cur, res);
        slot_t *x = &cur->batch[cur->head];
        wait_slot(cur, x);
        cur->head = (cur->head + 1) % AHEAD;
        cur->nbatch--;
        pgw_result_t *b = x->res;
        int status = x->status;
        uint64_t rows = cur->row_cb ? pgw_result_nstreamed(b) : pgw_result_nrows(b);
        x->res = NULL;
        if (status < 0) {
            cur->end = status;
            drain_batches(cur);      /* a fetch behind it was aborted */
            (void)submit_close(cur); /* the portal may survive in a block */
            *res = b;                /* the server's error, or NULL */
            return status;
        }
        int rc = pgw_result_suspended(b) ? fill_fetches(cur) : submit_close(cur);
        if (rc < 0) {
            pgw_result_free(b);
            cur->end = rc;
            return rc;
        }
        if (rows == 0) {
            pgw_result_free(b);
            continue;
        }
        *res = b;
        return 0;
    }
}

static int cursor_close(pgw_client_cursor_t *cur)
{
    drain_batches(cur);
    int rc = 0;
    if (!cur->closing) rc = submit_close(cur);
    if (rc == 0 && cur->closing) {
        wait_slot(cur, &cur->close);
        rc = cur->close.status;
        pgw_result_free(cur->close.res);
    }
    if (cur->end == rc) rc = 0; /* already reported by next */
    return rc;
}

/* The calls hold the client's loop while they run (client_internal.h). */
int pgw_client_cursor_open(pgw_client_t *c, const pgw_request_t *desc, uint32_t batch_rows,
                           pgw_client_cursor_t **out)
{
    pgw__client_enter(c);
    int rc = cursor_open(c, desc, batch_rows, out);
    pgw__client_leave(c);
    return rc;
}

int pgw_client_cursor_next(pgw_client_cursor_t *cur, pgw_result_t **res)
{
    if (res) *res = NULL;
    if (!cur || !res) return PGW_EINVAL;
    pgw__client_enter(cur->c);
    int rc = cursor_next(cur, res);
    pgw__client_leave(cur->c);
    return rc;
}

int pgw_client_cursor_close(pgw_client_cursor_t *cur)
{
    if (!cur) return PGW_EINVAL;
    pgw_client_t *c = cur->c;
    pgw__client_enter(c);
    int rc = cursor_close(cur);
    pgw__client_leave(c);
    const pgw_allocator_t *a = pgw__client_alloc(c);
    a->free(cur, a->ud);
    return rc;
}

const char *pgw_client_cursor_portal(const pgw_client_cursor_t *cur)
{
    return cur ? cur->portal : "";
}
