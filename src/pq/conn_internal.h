/*
 * The connection half of libpgwire-pq: struct pg_conn, a pgw_conn_t on a
 * private uv loop, and the queue of commands whose results PQgetResult
 * hands out. Only src/pq/conn*.c, exec*.c, pipeline.c, copy.c, cancel.c and
 * notify.c include it.
 */
#ifndef PGW_PQ_CONN_INTERNAL_H
#define PGW_PQ_CONN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "pgwire/conn.h"
#include "pq/pq_internal.h"

/* A growable byte string (the error message, COPY buffers). */
typedef struct pq_str {
    char *data;
    size_t len, cap;
} pq_str_t;

int pq__str_append(pq_str_t *s, const char *p, size_t n);
int pq__str_appendf(pq_str_t *s, const char *fmt, ...);
void pq__str_reset(pq_str_t *s);
void pq__str_free(pq_str_t *s);

/* What a command of the queue is (one libpq "query" and its results). */
typedef enum pq_cmd_kind {
    PQ_CMD_QUERY = 0, /* any request: results, then NULL */
    PQ_CMD_SYNC       /* a pipeline sync: PGRES_PIPELINE_SYNC, no NULL after */
} pq_cmd_kind_t;

/* What a command's successful results are. */
typedef enum pq_describe {
    PQ_DESCRIBE_ROWS = 0,   /* a statement's result */
    PQ_DESCRIBE_NONE = 1,   /* PQprepare, close: COMMAND_OK, nothing more */
    PQ_DESCRIBE_COLUMNS = 2 /* PQdescribePrepared: COMMAND_OK with columns, params */
} pq_describe_t;

/* A notice held for its place among a command's results. */
typedef struct pq_held_notice {
    PGresult *res;
    unsigned after; /* statements of the command completed before it */
    int at_end;     /* it came right after statement `after`'s end */
    unsigned rows;  /* else: rows of statement `after` that came before it */
} pq_held_notice_t;

/* The SQL a command keeps without an allocation of its own (NUL included). */
#define PQ_QUERY_INLINE 128
/* The freed commands a connection keeps for reuse. */
#define PQ_SPARE_CMDS 16

/* One command: submitted to the session, its results queued for
 * PQgetResult in order. Freed once its results (and the NULL that follows
 * them) were handed out and the session completed it. */
typedef struct pq_cmd {
    struct pq_cmd *next;
    PGconn *conn;
    pq_cmd_kind_t kind;
    int done;                  /* the session completed it (or it never went out) */
    int simple;                /* sent as a simple query ('Q') */
    int end_parsed;            /* done, its results taken, and a call that parses
                                * libpq's input came after: pq__input_parsed */
    int status;                /* the completion's status */
    unsigned seg;              /* pipeline segment (PQpipelineSync count) */
    int describe;              /* what its successful results are (pq_describe_t) */
    pq_held_notice_t *notices; /* notices not yet placed among res */
    size_t nnotices, notices_out, notices_cap;
    size_t partial_at; /* 1 + index of the rows before an error, 0: none */
    int chunk_rows;    /* rows per result (PQsetSingleRowMode: 1), 0: all */
    size_t lost_at;    /* the connection broke: bad once this many results are out */
    char *query;       /* the SQL it sent (for an error's caret): query_inline,
                        * allocated, or NULL */
    PGresult **res;    /* results ready to hand out: res_inline, or allocated */
    size_t nres, pos, cap;
    PGresult *res_inline[2]; /* most commands have one result or two */
    /* COPY */
    int copy_began;  /* the server started the COPY */
    size_t copy_idx; /* the index of its PGRES_COPY_* result */
    size_t taken;    /* results of the session's chain already collected */
    /* While res[pos]'s rows go out chunk_rows at a time, one chunk per
     * PQgetResult: the rows handed out so far, the held notices right
     * behind res[pos] that came among its rows, and the result without
     * rows that follows the last chunk (NULL: none, rows before an error). */
    int splitting;
    int split_rows;
    size_t split_notices;
    PGresult *split_end;
    /* Or the session streams its rows as they arrive (set on its request
     * in a pipeline's pending batch, else pgw_session_stream_driven): they
     * fill `chunk`, queued as a result once it holds chunk_rows of them
     * (the last at the statement's end), after the notices that came among
     * its rows (chunk_notices). stream_rows counts the rows, stream_failed
     * an allocation that failed (the rest of the rows are dropped and an
     * error ends them). */
    int streaming;
    int stream_failed;
    long stream_rows;
    size_t kept_rows; /* rows the session kept before the stream began */
    PGresult *chunk;
    PGresult **chunk_notices;
    size_t nchunk_notices, chunk_notices_cap;
    /* The submit that carries it, as the session names it (the driver's
     * ctx and index): NULL until it went out. */
    void *driven_ctx;
    size_t driven_index;
    /* Last, not cleared when the command is reused: a short SQL's copy. */
    char query_inline[PQ_QUERY_INLINE];
} pq_cmd_t;

/* A COPY TO STDOUT row waiting for PQgetCopyData. */
typedef struct pq_copy_chunk {
    struct pq_copy_chunk *next;
    int len;
    char *data; /* malloc'd, NUL-terminated: handed to the caller as is */
    /* or, with data NULL, a notice that came between the rows: to the
     * receiver when the reader gets past the rows before it */
    PGresult *notice;
} pq_copy_chunk_t;

typedef enum pq_copy_state {
    PQ_COPY_NONE = 0,
    PQ_COPY_IN,  /* PGRES_COPY_IN handed out, PQputCopyEnd not called */
    PQ_COPY_OUT, /* PGRES_COPY_OUT handed out, end not yet seen */
    /* PGRES_COPY_BOTH handed out (a replication stream): both sides send
     * until PQputCopyEnd (then PQ_COPY_OUT) or the server's end (then
     * PQ_COPY_BOTH_IN) */
    PQ_COPY_BOTH,
    /* the server ended its side of a COPY BOTH: PQputCopyEnd ends ours
     * (the session has answered the server's CopyDone already) */
    PQ_COPY_BOTH_IN
} pq_copy_state_t;

struct pg_conn {
    uv_loop_t *loop; /* pgw__loop_take's */
    pgw_conn_t *conn;
    ConnStatusType status;
    /* PQsocket of the open connection, -1 from its loss on: kept here, as
     * programs ask for it at every turn of their poll loop. */
    int fd;
    int connecting;   /* connect in progress */
    int connect_done; /* the connect callback ran */
    /* Inside PQconnectStart: the server's answers to an attempt wait in
     * the socket for PQconnectPoll, as libpq reads none before it. */
    int hold_input;
    int connect_status;
    int closed; /* the close callback ran */

    char *conninfo;          /* the string connected with (PQreset) */
    struct pgw_conninfo *ci; /* its options, completed (PQconninfo, PQdb ...) */
    char *host_used;         /* PQhost of the connection */
    char *port_used;
    char *hostaddr_used;

    /* PQclientEncoding: the encoding id of the client_encoding the server
     * last reported (SQL_ASCII for a name libpq does not know), -1 while
     * none is (kept as each ParameterStatus comes: every result made asks
     * for it) */
    int client_encoding;

    pq_str_t errmsg;   /* PQerrorMessage */
    char key_bits[16]; /* PQsslAttribute("key_bits") */

    pq_notice_hooks_t hooks;
    pq_event_t *events; /* PQregisterEventProc's, in registration order */
    int nevents, events_cap;
    PGVerbosity verbosity;
    PGContextVisibility show_context;
    int nonblocking;
    pgw_cancel_token_t *cancel; /* PQrequestCancel */

    /* commands in order */
    pq_cmd_t *head, *tail;
    /* Freed commands kept for the next (chained by next, at most
     * PQ_SPARE_CMDS): a pipeline's commands cost no allocation once warm. */
    pq_cmd_t *spare_cmds;
    unsigned nspare_cmds;
    /* pipeline */
    PGpipelineStatus pipeline;
    unsigned seg;         /* current segment */
    unsigned aborted_seg; /* segment whose error aborts it (0: none) */
    /* Where the running command's answer began among the messages of
     * session rx_session (pgw_session_rx_counts), to place its notices:
     * ends and rows count from here, other messages from messages. */
    pgw_rx_counts_t rx_base;
    const pgw_session_t *rx_session;
    int broken;        /* the transport broke (PQstatus follows once reported) */
    int io_now;        /* callbacks run from direct I/O, outside a loop turn */
    int shown_aborted; /* an error of the pipeline was handed out, its sync not yet */
    int password_needed;

    /* pipelined requests not yet submitted (pipeline.c): their descriptors
     * (one slot more, for a batch's FLUSH), commands, and the copies of
     * what the descriptors point to */
    pgw_request_t *pend_reqs;
    pq_cmd_t **pend_cmds;
    size_t npend, pend_cap;
    struct pq_chunk *pend_mem;

    /* COPY */
    pq_copy_state_t copy;
    pq_cmd_t *copy_cmd;
    pq_str_t copy_in;     /* PQputCopyData's bytes not yet pulled */
    int copy_in_end;      /* PQputCopyEnd called */
    char *copy_in_errmsg; /* its errormsg (CopyFail) */
    int copy_in_paused;   /* the source returned PGW_COPY_PAUSE */
    int copy_ended;       /* a simple query's COPY statement ended (its data all came) */
    /* the session's message count at the COPY's response or its last row:
     * a notice right after one of them is read among the rows */
    uint64_t copy_last_at;
    pq_copy_chunk_t *copy_out_head, *copy_out_tail;
    size_t copy_out_bytes;
    size_t copy_line_off; /* PQgetline: bytes of the head row consumed */

    /* notifications (PQnotifies) */
    PGnotify *notify_head, *notify_tail;

    /* PQtrace */
    FILE *trace_file;  /* the caller's stream, NULL: not tracing */
    int trace_flags;   /* PQTRACE_* */
    int trace_backend; /* server messages are traced: AuthenticationOk came */
};

/* conn.c */
/* Run the loop once (mode), resuming reading when paused; UV_RUN_NOWAIT
 * reads and writes on the socket at once instead, with a turn only when
 * the loop has work due. Returns what uv_run returned (1 while the loop is
 * alive). */
int pq__conn_turn(PGconn *conn, uv_run_mode mode);
/* 1 while output waits to be written (the session's or the socket's). */
int pq__output_pending(PGconn *conn);
/* Write the output: all of it in blocking mode; what the socket takes in
 * non-blocking mode, then 1 if some is left. */
int pq__conn_flush(PGconn *conn);
/* Run the loop without waiting until nothing is pending but socket events. */
int pq__conn_run_ready(PGconn *conn);
/* Ends the loop turn a blocking call waits in, so that it looks at what a
 * callback changed (none outside a turn). */
void pq__conn_wake(PGconn *conn);
/* The running command's answer begins here, for the placement of its
 * notices: its ended statements and rows count from now, and with
 * messages, the other messages too (rx_base). */
void pq__notice_mark(PGconn *conn, int messages);
/* The socket of a connect in progress, or -1. */
int pq__connecting_fd(const PGconn *conn);
/* Mark the connection bad after it broke. */
void pq__conn_broken(PGconn *conn);
/* Replace / append to the connection's error message. */
void pq__conn_set_error(PGconn *conn, const char *fmt, ...);
void pq__conn_append_error(PGconn *conn, const char *fmt, ...);

/* trace.c */
/* One message of the connection, from the session's trace hook (direction
 * 'F' or 'B', whole): written to the PQtrace stream as libpq writes it. */
void pq__trace_message(PGconn *conn, char direction, const uint8_t *msg, size_t len);

/* exec.c */
pq_cmd_t *pq__cmd_new(PGconn *conn, pq_cmd_kind_t kind);
/* A COPY began in cmd: its results before it (the chain results but the
 * last, the COPY's own) are queued first. */
void pq__cmd_collect_before_copy(pq_cmd_t *cmd, const pgw_result_t *results);
/* A simple query's COPY statement ended: its result (res) is queued. */
void pq__cmd_collect_copy_end(pq_cmd_t *cmd, const pgw_result_t *res);
void pq__cmd_push(pq_cmd_t *cmd, PGresult *res);
void pq__cmd_free(pq_cmd_t *cmd);
/* Hold notice (arrived after `after` statements of cmd completed; at_end:
 * right after the end of statement `after`; else after `rows` of its
 * rows) until cmd's results are queued. 1, or 0 when it could not be
 * held. */
int pq__cmd_hold_notice(pq_cmd_t *cmd, PGresult *notice, unsigned after, int at_end, unsigned rows);
PGresult *pq__empty_result(PGconn *conn, ExecStatusType status);
void pq__cmds_free_all(PGconn *conn);
/* A call that parses libpq's input (PQisBusy, PQnotifies) was made: the
 * head command, done and its results taken, is then over (exec.c). */
void pq__input_parsed(PGconn *conn);
/* The head command is over as libpq sees it: its results taken and the
 * ReadyForQuery after them parsed (pq__input_parsed). */
int pq__head_over(const PGconn *conn);
int pq__cmd_hook(void *ctx, size_t index, int status, pgw_result_t **res);
/* A notice that came after `rows` rows of cmd's streamed statement, put
 * where libpq hands it to the receiver: before the queued chunk holding
 * that row, else (that chunk went out, or no row came yet) before the
 * chunk being filled. 1 when placed (cmd owns it), 0 when out of memory. */
int pq__cmd_stream_notice(pq_cmd_t *cmd, PGresult *notice, long rows);
/* The results of cmd's statements before statement stmt (0-based), which
 * ended, queued now if they were not yet: a streamed simple query hands
 * each statement's result out before the next statement's rows and
 * notices. */
void pq__cmd_stream_catch_up(pq_cmd_t *cmd, unsigned stmt);
/* The statements of the running command that ended so far (the session's
 * count since pq__notice_mark). */
unsigned pq__statements_ended(PGconn *conn);
/* 1 when the connection can take a new command (libpq's
 * PQsendQueryStart), else 0 with the error message set. */
int pq__send_start(PGconn *conn);
/* Queue cmd at the tail. */
void pq__cmd_enqueue(PGconn *conn, pq_cmd_t *cmd);
/* A request's on_result for an answer no one reads: frees res. */
void pq__ignore_result(int status, pgw_result_t *res, void *ud);
/* Submit req for cmd (a batch with a FLUSH in pipeline mode). Returns 1 or
 * 0 with the error message set (cmd freed). */
int pq__submit(PGconn *conn, pq_cmd_t *cmd, pgw_request_t *req);
/* libpq's message for a connection failure code. */
const char *pq__failure_text(int status);

/* pipeline.c */
/* Pipelined requests are held until this many wait, the sync or a flush. */
#define PQ_PIPELINE_BATCH 1024
/* Hold req (copied) for cmd; 1, or 0 with the error message set. */
int pq__pipeline_defer(PGconn *conn, pq_cmd_t *cmd, const pgw_request_t *req);
/* Submit the held requests as one batch ending with sync's Sync (sync
 * queued after them) or, sync NULL, leaving the group open: with a protocol
 * Flush when flush_message is set (PQsendFlushRequest), else with none, so
 * that the server answers them at the Sync. 1, or 0 when refused (the held
 * commands then carry the error). */
int pq__pipeline_push(PGconn *conn, pq_cmd_t *sync, int flush_message);
/* cmd's request, when it is held, gets on_row: 1, else 0 (not held). */
int pq__pipeline_stream(PGconn *conn, pq_cmd_t *cmd, pgw_row_cb on_row);
void pq__pipeline_drop(PGconn *conn);

/* copy.c */
int pq__copy_source(pgw_buf_t *out, size_t room, void *ud);
int pq__copy_data(const uint8_t *data, size_t len, void *ud);
int pq__copy_start(const pgw_copy_info_t *info, void *ud);
void pq__copy_end(const pgw_result_t *res, void *ud);
void pq__copy_reset(PGconn *conn);

/* Queue a notice the server sent during the COPY TO of cmd after the rows
 * queued so far (handed to the receiver by PQgetCopyData or, before the
 * first row, with PGRES_COPY_OUT), as libpq parses it; takes notice. 0 when
 * no COPY TO of cmd is reading (the caller then holds the notice). */
int pq__copy_out_notice(PGconn *conn, pq_cmd_t *cmd, PGresult *notice);
/* Hand the notices at the head of the COPY TO queue to the receiver. */
void pq__copy_out_notices(PGconn *conn);
/* 1 when a notice the server sent now goes to the receiver at once: cmd's
 * COPY FROM has begun and not ended, the caller has every result before
 * PGRES_COPY_IN and no notice of cmd is held. libpq's parser hands a
 * notice out in any state as soon as it reads it (a BEFORE STATEMENT
 * trigger's, raised right after CopyInResponse, before PQgetResult returns
 * PGRES_COPY_IN or in a later read), not at the COPY's end. */
int pq__copy_in_notice_now(const PGconn *conn, const pq_cmd_t *cmd);

/* notify.c */
void pq__on_notification(pgw_conn_t *c, int32_t pid, pgw_str_t channel, pgw_str_t payload,
                         void *ud);
void pq__notifies_free(PGconn *conn);

#endif
