/*
 * libpgwire listen: LISTEN/NOTIFY on a connection, and a listener that
 * survives reconnects.
 *
 * Notifications reach a connection through its notification callback
 * (pgw_conn_config_t.on_notification, or pgw_conn_set_notification_cb in
 * conn.h), whenever the loop runs, with or without requests in flight.
 * The helpers here issue LISTEN and UNLISTEN with the channel quoted as an
 * identifier (pgw_escape_identifier: the name is used exactly as given, in
 * its case, with quotes, spaces or any UTF-8 it holds; the server
 * truncates names past 63 bytes, as it does every identifier). Each helper
 * is a Simple Query request of the one request model (session.h) on the
 * connection's FIFO, like any other. The blocking client has its own
 * (pgw_client_listen and pgw_client_wait_notification, client.h).
 *
 * THREADS: as conn.h: everything here belongs to one loop and its thread.
 */
#ifndef PGWIRE_LISTEN_H
#define PGWIRE_LISTEN_H

#include "pgwire/conn.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The SQL of a LISTEN (unlisten 0) or UNLISTEN (unlisten 1) of channel,
 * quoted as an identifier: LISTEN "Mixed Case". For UNLISTEN, channel NULL
 * means every channel (UNLISTEN *). *sql is NUL-terminated, allocated with
 * alloc (NULL: default), freed with pgw_escape_free (types_container.h).
 * Returns 0, or PGW_EINVAL (sql NULL; channel NULL for a LISTEN, or ""),
 * PGW_EENCODING (channel is not valid UTF-8 without NUL bytes: nothing is
 * built) or PGW_ENOMEM; *sql is NULL on failure.
 */
PGW_EXTERN int pgw_listen_sql(const pgw_allocator_t *alloc, const char *channel, int unlisten,
                              char **sql);

/*
 * Submit LISTEN channel (pgw_conn_listen) or UNLISTEN channel
 * (pgw_conn_unlisten; channel NULL: UNLISTEN *) on conn, as a PGW_REQ_SIMPLE
 * request with the SQL of pgw_listen_sql. cb (may be NULL) completes it as
 * any request (pgw_result_cb, session.h): 0 once the server ran it, from
 * which point the channel's notifications reach the connection's
 * notification callback (LISTEN on a channel already listened on is
 * harmless). Returns 0, the codes of pgw_listen_sql (nothing is sent) or
 * those of pgw_conn_submit.
 */
PGW_EXTERN int pgw_conn_listen(pgw_conn_t *conn, const char *channel, pgw_result_cb cb, void *ud);
PGW_EXTERN int pgw_conn_unlisten(pgw_conn_t *conn, const char *channel, pgw_result_cb cb, void *ud);

/* ---------------------------------------------------------------- listener */

/*
 * A listener: a set of channels kept listened on across connection loss.
 *
 * The listener owns its connection: it connects with the connection string
 * it was given, issues a LISTEN for every channel of its set, and when the
 * connection breaks (server restart, pg_terminate_backend, network) it
 * closes it, waits (backoff: backoff_min_ms, doubled after every failed
 * attempt up to backoff_max_ms, reset once a connection is up) and
 * connects again, for as long as the listener lives: a connect that fails
 * is retried the same way, also the first one. On every new connection the
 * whole set is listened again (the LISTENs are pipelined: one write, one
 * round trip).
 *
 * Events (on_event) say where it is:
 *   PGW_LISTENER_READY  the first connection is up and every channel of the
 *                       set is listened on (status 0).
 *   PGW_LISTENER_LOST   the connection broke (status: why, as on_lost of
 *                       conn.h). Notifications sent from now on until the
 *                       gap event may be missed. Reconnecting.
 *   PGW_LISTENER_GAP    connected again and every channel listened again
 *                       (status 0): notifications sent while the listener
 *                       had no connection were missed (the server keeps
 *                       none for a listener that is gone). Exactly one gap
 *                       per loss, however many attempts the reconnect took
 *                       (a loss during the re-listen makes no second one).
 *                       The application resynchronises here (re-reads what
 *                       the notifications would have told it).
 *   PGW_LISTENER_RETRY  a connect attempt failed (status: the connect's
 *                       code, see pgw_connect_cb); the next is scheduled.
 * The gap event comes before every notification received on the new
 * connection: those that arrive while the set is being listened again are
 * held (copied) and delivered right after it.
 *
 * Notifications go to on_notification (views valid during the call), for
 * every channel the connection listens on, also a channel removed from the
 * set whose UNLISTEN has not run yet.
 *
 * pgw_listener_conn gives the current connection for other requests
 * (queries run beside the notifications); requests on it fail like any
 * request when it breaks, and they are not re-run.
 */
typedef struct pgw_listener pgw_listener_t;

/* What on_event reports (Events, above). */
typedef enum pgw_listener_event {
    PGW_LISTENER_READY = 1,
    PGW_LISTENER_LOST,
    PGW_LISTENER_GAP,
    PGW_LISTENER_RETRY
} pgw_listener_event_t;

/* A listener's options, for pgw_listener_new (which copies them). Set it
 * up with pgw_listener_config_init. */
typedef struct pgw_listener_config {
    /* sizeof(pgw_listener_config_t) as the caller's header defines it, set
     * by pgw_listener_config_init. 0 (a zeroed struct) means this header's
     * size. */
    size_t size;
    /* The connection's options (NULL: defaults). Copied. Its
     * on_notification is ignored (notifications go to on_notification
     * below) and its on_lost never fires (the listener handles the loss
     * itself, through its connection driver); its other hooks (on_notice,
     * on_trace, ...) receive each connection the listener makes, with
     * conn->ud. Its alloc is the listener's. */
    const pgw_conn_config_t *conn;
    /* The reconnect backoff, as the pool's (pool.h): 0: 50 ms, 5 s (the
     * maximum never less than the minimum). */
    unsigned backoff_min_ms;
    unsigned backoff_max_ms;
    void (*on_notification)(pgw_listener_t *l, int32_t pid, pgw_str_t channel, pgw_str_t payload,
                            void *ud);
    void (*on_event)(pgw_listener_t *l, pgw_listener_event_t event, int status, void *ud);
    void *ud; /* passed to on_notification and on_event */
} pgw_listener_config_t;

/* Zero *cfg and set its size: every option at its default. */
PGW_EXTERN void pgw_listener_config_init(pgw_listener_config_t *cfg);

/*
 * Create a listener on loop for conninfo (a libpq connection string, as
 * pgw_conn_connect; copied) and start connecting. Channels may be added
 * right away. Returns 0, PGW_EINVAL (out, loop or conninfo NULL),
 * PGW_ECONNINFO (a connection string that can never connect: refused at
 * once, not retried), PGW_ENOTSUP (options the library does not implement,
 * e.g. gssencmode=require) or PGW_ENOMEM; *out is NULL on failure, and what
 * was made is freed as the loop next runs (no callback fires). Free a
 * listener with pgw_listener_close.
 */
PGW_EXTERN int pgw_listener_new(pgw_listener_t **out, struct uv_loop_s *loop, const char *conninfo,
                                const pgw_listener_config_t *cfg);

/*
 * Done callback of pgw_listener_listen and pgw_listener_unlisten, exactly
 * once: 0 when the server ran the LISTEN (UNLISTEN) on the current
 * connection (when there is none, on the next one), PGW_ESERVER when it
 * refused it (err: the server's error, valid during the call; a refused
 * LISTEN's channel leaves the set), PGW_ECANCELED when the listener was
 * closed first, or when the channel was unlistened before its LISTEN ran.
 */
typedef void (*pgw_listener_done_cb)(pgw_listener_t *l, int status, const pgw_error_t *err,
                                     void *ud);

/*
 * Add channel (copied; used as given, quoted as an identifier) to the set
 * and LISTEN on it now if connected, else on the next connection. cb may
 * be NULL. A channel already in the set is not added twice (with cb, a
 * LISTEN is sent again and cb fires once it has run). Returns 0 (cb will
 * fire), PGW_EINVAL (l or channel NULL, channel ""), PGW_EENCODING (not
 * valid UTF-8), PGW_EBUSY (the channel's previous done callback has not
 * fired yet), PGW_ECLOSED (closing) or PGW_ENOMEM.
 */
PGW_EXTERN int pgw_listener_listen(pgw_listener_t *l, const char *channel, pgw_listener_done_cb cb,
                                   void *ud);

/*
 * Remove channel from the set and UNLISTEN it on the current connection.
 * cb (may be NULL) fires as above; when there is no connection nothing
 * needs to run and cb fires with 0 before this call returns. A done
 * callback of the channel's LISTEN still waiting fires with PGW_ECANCELED
 * before this call returns. Returns 0, PGW_EINVAL, PGW_ENOTFOUND (not in
 * the set; cb not called), PGW_ECLOSED or PGW_ENOMEM.
 */
PGW_EXTERN int pgw_listener_unlisten(pgw_listener_t *l, const char *channel,
                                     pgw_listener_done_cb cb, void *ud);

/* The number of channels in the set (0 for NULL). */
PGW_EXTERN size_t pgw_listener_nchannels(const pgw_listener_t *l);

/* 1 while connected with every channel of the set listened on. */
PGW_EXTERN int pgw_listener_is_ready(const pgw_listener_t *l);

/* Gap events reported so far (0 for NULL). */
PGW_EXTERN uint64_t pgw_listener_gaps(const pgw_listener_t *l);

/* The current connection (connected or connecting), or NULL while waiting
 * to reconnect, closing, or for NULL. Valid until the next callback of the
 * listener's loop returns; never close it (the listener does). */
PGW_EXTERN pgw_conn_t *pgw_listener_conn(pgw_listener_t *l);

/*
 * Close the listener: asynchronous, callable from inside its callbacks.
 * Pending done callbacks fire with PGW_ECANCELED, the connection is closed
 * and no event fires after this call; cb (may be NULL) fires once
 * everything is closed, then the listener is freed. Returns 0, PGW_ECLOSED
 * (already closing; cb not called) or PGW_EINVAL (l NULL).
 */
PGW_EXTERN int pgw_listener_close(pgw_listener_t *l, void (*cb)(pgw_listener_t *l, void *ud),
                                  void *ud);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_LISTEN_H */
