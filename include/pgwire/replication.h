/*
 * libpgwire logical replication: a decoder of the pgoutput protocol.
 *
 * pgoutput is the output plugin of PostgreSQL's built-in logical
 * replication. Each message it writes is handed to pgw_pgoutput_decode,
 * which parses it in place: no I/O, no copy of the tuple data, no
 * allocation per change. Where the bytes come from is the caller's
 * business: on a START_REPLICATION ... LOGICAL stream, one message is the
 * data of one XLogData ('w') CopyData message, after its 24 bytes of WAL
 * start, WAL end and send time (the views then live as long as that
 * CopyData's bytes); through SQL, one message is the data column of one
 * row of pg_logical_slot_get_binary_changes / _peek_binary_changes. Protocol versions 1 to 4 (the
 * proto_version option of START_REPLICATION: 1 plain, 2 streamed
 * transactions, 3 two-phase commit, 4 the parallel-apply fields of Stream
 * Abort) are understood, following "Logical Replication Message Formats" of
 * the PostgreSQL documentation and the server's
 * src/backend/replication/logical/proto.c.
 *
 * State: the decoder keeps what the stream says before the changes that
 * depend on it. A Relation message describes a table (its columns, their
 * types) once, before the first change of it that the stream carries, and
 * again whenever it changes: the decoder caches it by OID, a new one for
 * the same OID replacing the old. An Insert, Update or Delete of a
 * relation the decoder has no Relation message for is PGW_ENOTFOUND. The
 * decoder also tracks whether it is inside a streamed transaction (between
 * Stream Start and Stream Stop), where the changes carry their
 * transaction's xid. A decoder serves one stream: a new connection's
 * stream starts with pgw_pgoutput_reset (the server sends every Relation
 * again to a new walsender).
 *
 * MEMORY: only the relation cache allocates (when a Relation message
 * arrives, to keep it, and to grow the per-column arrays that changes are
 * decoded into to the widest relation seen). Decoding any other message
 * allocates nothing.
 *
 * Tuple values: a tuple is a pgw_row_t (result.h), so that the pgw_get_*
 * decoders of types.h and types_container.h (the ones the typed result
 * accessors use) read its columns as they read a query result's: each
 * value views the caller's message bytes, with the column's format (text,
 * or binary for a slot started with binary 'true') and its type OID as the
 * decoder's registry resolves it (a domain as its base type, an enum as
 * text: what the result accessors do). SQL NULL and an unchanged TOASTed
 * value (the server did not send it: the column was not updated, its old
 * value stands) are both a value of len -1; kinds[] tells them apart.
 *
 * THREADS: a decoder is used by one thread at a time. Several decoders are
 * independent.
 *
 * NULL handles: as common.h says (PGW_EINVAL, NULL, 0, no-op).
 */
#ifndef PGWIRE_REPLICATION_H
#define PGWIRE_REPLICATION_H

#include <stdbool.h>

#include "pgwire/common.h"
#include "pgwire/result.h"
#include "pgwire/session.h"
#include "pgwire/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The pgoutput protocol versions this decoder understands. */
#define PGW_PGOUTPUT_VERSION_MIN 1
#define PGW_PGOUTPUT_VERSION_MAX 4

/* A pgoutput decoder: its relation cache and stream state. Created by
 * pgw_pgoutput_new, freed by pgw_pgoutput_free. */
typedef struct pgw_pgoutput pgw_pgoutput_t;

/* The message kinds: the message's first byte, as the server writes it. */
typedef enum pgw_pgoutput_kind {
    PGW_PGOUTPUT_BEGIN = 'B',             /* a transaction starts */
    PGW_PGOUTPUT_COMMIT = 'C',            /* it committed */
    PGW_PGOUTPUT_ORIGIN = 'O',            /* the transaction came from another origin */
    PGW_PGOUTPUT_RELATION = 'R',          /* a table's description (cached) */
    PGW_PGOUTPUT_TYPE = 'Y',              /* a user type's name */
    PGW_PGOUTPUT_INSERT = 'I',            /* a row inserted */
    PGW_PGOUTPUT_UPDATE = 'U',            /* a row updated */
    PGW_PGOUTPUT_DELETE = 'D',            /* a row deleted */
    PGW_PGOUTPUT_TRUNCATE = 'T',          /* tables truncated */
    PGW_PGOUTPUT_MESSAGE = 'M',           /* pg_logical_emit_message (option messages) */
    PGW_PGOUTPUT_STREAM_START = 'S',      /* v2: a block of a streamed transaction */
    PGW_PGOUTPUT_STREAM_STOP = 'E',       /* v2: the end of that block */
    PGW_PGOUTPUT_STREAM_COMMIT = 'c',     /* v2: a streamed transaction committed */
    PGW_PGOUTPUT_STREAM_ABORT = 'A',      /* v2: a streamed (sub)transaction aborted */
    PGW_PGOUTPUT_BEGIN_PREPARE = 'b',     /* v3: a two-phase transaction starts */
    PGW_PGOUTPUT_PREPARE = 'P',           /* v3: it was prepared */
    PGW_PGOUTPUT_COMMIT_PREPARED = 'K',   /* v3: COMMIT PREPARED */
    PGW_PGOUTPUT_ROLLBACK_PREPARED = 'r', /* v3: ROLLBACK PREPARED */
    PGW_PGOUTPUT_STREAM_PREPARE = 'p'     /* v3: a streamed transaction was prepared */
} pgw_pgoutput_kind_t;

/* How a tuple column arrived (TupleData's per-column byte). */
typedef enum pgw_pgoutput_col {
    PGW_PGOUTPUT_COL_NULL = 'n',      /* SQL NULL (value len -1) */
    PGW_PGOUTPUT_COL_UNCHANGED = 'u', /* unchanged TOASTed value, not sent (value len -1) */
    PGW_PGOUTPUT_COL_TEXT = 't',      /* text format */
    PGW_PGOUTPUT_COL_BINARY = 'b'     /* binary format (slot option binary 'true') */
} pgw_pgoutput_col_t;

/* Relation flag of a column: part of the replica identity (the key an
 * Update's 'K' tuple and a Delete carry). */
#define PGW_PGOUTPUT_COL_KEY 1

/* A table as its latest Relation message described it. columns[i]
 * describes tuple column i: name (NUL-terminated, name.len without the
 * NUL), table_oid (the relation's OID), type_oid and typmod as the server
 * sent them (pg_attribute.atttypid, atttypmod), attnum i + 1 (the position
 * in the stream: dropped and generated columns are not sent), typlen 0
 * (not sent) and format 0 (each value carries its own). */
typedef struct pgw_pgoutput_relation {
    uint32_t oid;        /* the relation's OID */
    const char *nspname; /* its schema ("" for pg_catalog, as sent) */
    const char *relname; /* its name */
    char replident;      /* relreplident: 'd' default, 'n' nothing, 'f' full, 'i' index */
    uint16_t ncols;      /* columns the stream sends */
    const pgw_field_desc_t *columns; /* the columns, in stream order */
    const uint8_t *col_flags;        /* per column: PGW_PGOUTPUT_COL_KEY or 0 */
    const uint32_t *value_oids;      /* per column: type_oid resolved through the registry */
} pgw_pgoutput_relation_t;

/* A tuple of an Insert, Update or Delete: row.ncols is the relation's
 * column count, row.values[i] column i (views into the message: p/len,
 * format PGW_FORMAT_TEXT or PGW_FORMAT_BINARY, oid the column's type
 * resolved through the decoder's registry), row.fields the relation's
 * columns, row.index 0. kinds[i] is a pgw_pgoutput_col_t: check it before
 * reading a value of len -1 (NULL or unchanged). For a 'K' old tuple only
 * the key columns carry values: the others arrive as NULL. */
typedef struct pgw_pgoutput_tuple {
    pgw_row_t row;        /* the columns, readable with pgw_get_* */
    const uint8_t *kinds; /* per column: how it arrived (pgw_pgoutput_col_t) */
} pgw_pgoutput_tuple_t;

/* 0 if a transaction's commit flags etc. carry nothing. LSNs are the
 * server's 64-bit WAL positions; times are microseconds since
 * 2000-01-01 00:00 UTC (pgw_timestamp_to_unix converts). */
typedef struct pgw_pgoutput_msg {
    uint8_t kind; /* a pgw_pgoutput_kind_t */
    /* The transaction: Begin's, Begin Prepare's, Prepare's, Commit/Rollback
     * Prepared's, every Stream message's (Stream Stop: the block's), and
     * inside a streamed transaction a change's, Relation's, Type's,
     * Truncate's and Message's. 0 where the message carries none. */
    uint32_t xid;
    /* The member named after kind. */
    union {
        /* Begin: final_lsn, the commit's LSN; commit_time, its time. */
        struct {
            uint64_t final_lsn;
            int64_t commit_time;
        } begin;
        /* Commit and Stream Commit: flags (0, unused), commit_lsn (the
         * commit record's LSN), end_lsn (the end of the transaction's WAL),
         * commit_time. */
        struct {
            uint8_t flags;
            uint64_t commit_lsn;
            uint64_t end_lsn;
            int64_t commit_time;
        } commit;
        /* Origin: the commit's LSN on the origin server, the origin's name. */
        struct {
            uint64_t commit_lsn;
            pgw_str_t name;
        } origin;
        /* Relation: the cached description, valid until the next Relation
         * for the same OID, pgw_pgoutput_reset or pgw_pgoutput_free. */
        const pgw_pgoutput_relation_t *relation;
        /* Type: the type's OID, its schema ("" for pg_catalog), its name. */
        struct {
            uint32_t oid;
            pgw_str_t nspname;
            pgw_str_t name;
        } type;
        /* Insert (new_tuple only), Update (old_kind 0, 'K' key or 'O' whole
         * row with old_tuple, then new_tuple), Delete (old_tuple only,
         * old_kind 'K' or 'O'). relation lives as the relation member
         * above. */
        struct {
            const pgw_pgoutput_relation_t *relation;
            uint8_t old_kind;
            pgw_pgoutput_tuple_t old_tuple;
            pgw_pgoutput_tuple_t new_tuple;
        } change;
        /* Truncate: nrelids tables, options (1 CASCADE, 2 RESTART
         * IDENTITY); read the OIDs with pgw_pgoutput_truncate_relid
         * (_relids is private). */
        struct {
            uint32_t nrelids;
            uint8_t options;
            const uint8_t *_relids;
        } truncate;
        /* Message: flags (1: transactional), the message's LSN, the prefix
         * and content given to pg_logical_emit_message. */
        struct {
            uint8_t flags;
            uint64_t lsn;
            pgw_str_t prefix;
            pgw_view_t content;
        } message;
        /* Stream Start: first_segment 1 for the transaction's first block. */
        struct {
            uint8_t first_segment;
        } stream_start;
        /* Stream Abort: the aborted subtransaction (xid for the top level);
         * has_abort_info when v4 sent the abort's LSN and time (streaming
         * parallel), then abort_lsn and abort_time. */
        struct {
            uint32_t subxid;
            bool has_abort_info;
            uint64_t abort_lsn;
            int64_t abort_time;
        } stream_abort;
        /* Begin Prepare, Prepare, Stream Prepare and Commit Prepared: flags
         * (0, unused; Begin Prepare has none), lsn and time (the
         * prepare's; Commit Prepared: the commit's), end_lsn (the end of
         * the transaction's WAL), gid (the global transaction identifier). */
        struct {
            uint8_t flags;
            uint64_t lsn;
            uint64_t end_lsn;
            int64_t time;
            pgw_str_t gid;
        } prepare;
        /* Rollback Prepared: flags (0, unused), the ends of the prepared
         * transaction and of the rollback, their times, gid. */
        struct {
            uint8_t flags;
            uint64_t prepare_end_lsn;
            uint64_t rollback_end_lsn;
            int64_t prepare_time;
            int64_t rollback_time;
            pgw_str_t gid;
        } rollback_prepared;
    } u;
} pgw_pgoutput_msg_t;

/* A decoder's configuration: set it up with pgw_pgoutput_config_init. */
typedef struct pgw_pgoutput_config {
    size_t size; /* sizeof(pgw_pgoutput_config_t), as common.h says */
    /* The proto_version the stream was started with (1..4): messages of a
     * later version are PGW_EPROTO. Default PGW_PGOUTPUT_VERSION_MAX. */
    uint32_t proto_version;
    /* Resolves the columns' user types (domains, enums) when a Relation
     * arrives; NULL: the default registry. Not owned: it must outlive the
     * decoder, and a type loaded into it later applies to the Relation
     * messages decoded after. */
    const pgw_type_registry_t *registry;
    /* The allocator of the relation cache (NULL: the default). */
    const pgw_allocator_t *alloc;
} pgw_pgoutput_config_t;

/* Fill *cfg with the defaults (size set, proto_version 4, no registry, the
 * default allocator). NULL is a no-op. */
PGW_EXTERN void pgw_pgoutput_config_init(pgw_pgoutput_config_t *cfg);

/* Create a decoder from cfg (NULL: the defaults; copied, cfg may go).
 * Returns 0 and *out (free it with pgw_pgoutput_free), PGW_EINVAL (out
 * NULL, or proto_version outside 1..4) or PGW_ENOMEM. */
PGW_EXTERN int pgw_pgoutput_new(const pgw_pgoutput_config_t *cfg, pgw_pgoutput_t **out);

/* Free the decoder and its relation cache. NULL is a no-op. Every
 * relation pointer it handed out dies with it. */
PGW_EXTERN void pgw_pgoutput_free(pgw_pgoutput_t *d);

/* Forget the relation cache and the streamed-transaction state, for a new
 * stream (a reconnect). Keeps the memory it has. NULL is a no-op. */
PGW_EXTERN void pgw_pgoutput_reset(pgw_pgoutput_t *d);

/*
 * Decode one pgoutput message, data[0..len) (exactly one: trailing bytes
 * are an error), into *out. A Relation message is copied into the cache;
 * everything else in *out views data.
 * LIFETIME: the views of *out (strings, message content, tuple values)
 * point into data and live as long as it does, unchanged; the tuples'
 * values and kinds arrays belong to the decoder and are overwritten by the
 * next pgw_pgoutput_decode; relation pointers live until a Relation for
 * the same OID is decoded, pgw_pgoutput_reset or pgw_pgoutput_free.
 * A message that is rejected leaves the decoder as it was (cache, stream
 * state) and *out unspecified.
 * Returns 0 or:
 *   PGW_EPROTO    the message is malformed: empty, truncated, an unknown
 *                 kind byte, a kind of a later protocol version than
 *                 configured (or a stream message out of place: a Stream
 *                 Start inside a stream, a Stream Stop outside one), a
 *                 length or count past the end, an unknown tuple column
 *                 byte or tuple marker, a tuple whose column count is not
 *                 the relation's, a string without its NUL, trailing
 *                 bytes, a relation with more than 1664 columns;
 *                 pgw_pgoutput_error says which. The stream it came from
 *                 cannot be trusted any more (pgw_is_fatal);
 *   PGW_ENOTFOUND an Insert, Update or Delete of a relation no Relation
 *                 message described (pgw_pgoutput_error names the OID);
 *   PGW_ENOMEM    caching a Relation (the cache is as before);
 *   PGW_EINVAL    d, out NULL, or data NULL with len > 0.
 */
PGW_EXTERN int pgw_pgoutput_decode(pgw_pgoutput_t *d, const uint8_t *data, size_t len,
                                   pgw_pgoutput_msg_t *out);

/* What the last failed pgw_pgoutput_decode rejected, as one line of text
 * ("" after a success; "" for NULL). Lives until the next call on d. */
PGW_EXTERN const char *pgw_pgoutput_error(const pgw_pgoutput_t *d);

/* The cached relation with OID oid, or NULL. Lives as a relation pointer
 * of pgw_pgoutput_decode does. */
PGW_EXTERN const pgw_pgoutput_relation_t *pgw_pgoutput_relation(const pgw_pgoutput_t *d,
                                                                uint32_t oid);

/* 1 while inside a streamed transaction (after Stream Start, before
 * Stream Stop), 0 otherwise and for NULL. */
PGW_EXTERN int pgw_pgoutput_in_stream(const pgw_pgoutput_t *d);

/* The i-th relation OID of a Truncate message m (0 if m is NULL, not a
 * Truncate, or i >= m->u.truncate.nrelids). Reads the message's bytes:
 * valid as long as they are. */
PGW_EXTERN uint32_t pgw_pgoutput_truncate_relid(const pgw_pgoutput_msg_t *m, uint32_t i);

/*
 * ------------------------------------------------------------------------
 * The replication stream: START_REPLICATION's CopyBoth.
 *
 * A connection opened with replication=database (logical) or
 * replication=true (physical) runs the replication commands as simple
 * queries (PGW_REQ_SIMPLE): IDENTIFY_SYSTEM, CREATE_REPLICATION_SLOT ...
 * LOGICAL pgoutput [TEMPORARY] / PHYSICAL, DROP_REPLICATION_SLOT,
 * TIMELINE_HISTORY answer with an ordinary result. START_REPLICATION
 * answers with CopyBoth: run it through a pgw_repl_stream_t.
 *
 * In: each XLogData ('w') goes to on_xlog: wal_start (the WAL position of
 * the data), wal_end (the server's end of WAL), send_time, and the payload
 * as a view into the session's read chunk, valid during the call only
 * (logical: one pgoutput message, for pgw_pgoutput_decode; physical: raw
 * WAL bytes). Each primary keepalive ('k') goes to on_keepalive; when it
 * asks for a reply the stream answers at once with a status update.
 *
 * Out: a standby status update ('r') says write = the highest wal_start
 * received, flush = apply = the LSN the caller confirmed with
 * pgw_repl_stream_confirm (0, "invalid", which the server ignores, before
 * any confirmation), the client's clock, and whether a reply is wanted.
 * Only a confirmed LSN is ever reported flushed: for a logical slot the
 * server moves its confirmed_flush_lsn to exactly that LSN. A hot standby
 * feedback ('h') goes out only when the caller sends one
 * (pgw_repl_stream_send_feedback).
 *
 * RESUME CONTRACT (at-least-once): the server never sends again a
 * transaction whose commit end_lsn (pgoutput Commit's end_lsn) is at or
 * below the slot's confirmed_flush_lsn, and sends every other one again on
 * the next START_REPLICATION of the slot (start LSN 0/0, or the last
 * confirmed LSN: the server starts from the larger of it and
 * confirmed_flush_lsn). So: confirm a transaction's Commit end_lsn once it
 * is durably processed; after a lost connection (the server only learns of
 * a confirmation from a status update that reached it: what was confirmed
 * but not yet sent may come again too), reconnect, start again, and drop
 * each transaction whose Commit end_lsn is at or below the last LSN you
 * processed durably. Nothing is lost; the duplicates are exactly the
 * transactions after the last confirmation the server received.
 *
 * One logical stream per connection: PostgreSQL's walsender (15 at least)
 * ends a second logical START_REPLICATION on the same connection at once
 * (its stream completes with no data); a physical one may be started again.
 *
 * The stream is sans-IO: it writes into the session's output and keeps no
 * timer. pgw_conn_repl_start (below) sends status updates on a timer.
 * THREADS: a stream is used on its session's thread.
 * ------------------------------------------------------------------------
 */

/* An XLogData message, for pgw_repl_xlog_cb. */
typedef struct pgw_repl_xlog {
    uint64_t wal_start;  /* the WAL position of data */
    uint64_t wal_end;    /* the server's current end of WAL */
    int64_t send_time;   /* the server's clock at sending (pg microseconds) */
    const uint8_t *data; /* the payload: a view valid during the call */
    size_t len;          /* its length */
} pgw_repl_xlog_t;

/* A primary keepalive message, for pgw_repl_keepalive_cb. */
typedef struct pgw_repl_keepalive {
    uint64_t wal_end;     /* the server's end of WAL */
    int64_t send_time;    /* the server's clock at sending */
    bool reply_requested; /* the server asked for a reply (sent already) */
} pgw_repl_keepalive_t;

/* XLogData arrived. Return 0 to go on; a negative value ends the stream
 * (CopyDone is sent, the rest is discarded) and becomes on_end's status. */
typedef int (*pgw_repl_xlog_cb)(const pgw_repl_xlog_t *x, void *ud);
/* A keepalive arrived (after the stream answered it if it asked). */
typedef void (*pgw_repl_keepalive_cb)(const pgw_repl_keepalive_t *k, void *ud);

/* A replication stream. Created by pgw_repl_stream_new, freed by
 * pgw_repl_stream_free. */
typedef struct pgw_repl_stream pgw_repl_stream_t;

/* A stream's configuration: set it up with pgw_repl_stream_config_init. */
typedef struct pgw_repl_stream_config {
    size_t size;                        /* sizeof(pgw_repl_stream_config_t) */
    pgw_repl_xlog_cb on_xlog;           /* required */
    pgw_repl_keepalive_cb on_keepalive; /* optional */
    /* The START_REPLICATION request completed, once: status 0 when the
     * stream ended normally (CommandComplete after CopyDone), PGW_ESERVER
     * with the server's error in res, on_xlog's negative code, or the
     * connection's error. res as pgw_result_cb says. Optional. */
    pgw_result_cb on_end;
    void *ud; /* passed to every callback */
    /* pgw_conn_repl_start: a status update every status_interval_ms while
     * streaming (pg_recvlogical's --status-interval, default 10000);
     * 0: none but the keepalive replies and pgw_repl_stream_send_status. */
    uint32_t status_interval_ms;
    /* The client clock for status updates, in pg microseconds (since
     * 2000-01-01 UTC); NULL: the system's real-time clock. */
    int64_t (*now)(void *ud);
    const pgw_allocator_t *alloc; /* NULL: the default */
} pgw_repl_stream_config_t;

/* Fill *cfg with the defaults (status_interval_ms 10000). NULL: no-op. */
PGW_EXTERN void pgw_repl_stream_config_init(pgw_repl_stream_config_t *cfg);

/* Create a stream from cfg (copied). Returns 0 and *out, PGW_EINVAL (out
 * or cfg NULL, no on_xlog) or PGW_ENOMEM. */
PGW_EXTERN int pgw_repl_stream_new(const pgw_repl_stream_config_t *cfg, pgw_repl_stream_t **out);

/* Free the stream. Do not free it while its request is pending (end it
 * and wait for on_end, or free the session/connection first). NULL:
 * no-op. */
PGW_EXTERN void pgw_repl_stream_free(pgw_repl_stream_t *st);

/*
 * Fill *req (initialised by the call) with a PGW_REQ_SIMPLE running sql
 * (a START_REPLICATION command, not copied: it must live until the
 * submit) whose CopyBoth goes to st, on session s (status updates are
 * written there). Submit it with pgw_session_submit (or use
 * pgw_conn_repl_start). Resets the stream's LSNs for a new run: the
 * confirmed LSN is kept. Returns 0, PGW_EINVAL or PGW_EBUSY (st is
 * streaming).
 */
PGW_EXTERN int pgw_repl_stream_request(pgw_repl_stream_t *st, pgw_session_t *s, const char *sql,
                                       pgw_request_t *req);

/* The caller has durably processed everything up to lsn: later status
 * updates report it as flushed (the highest confirmed LSN; a lower one is
 * ignored). Sends nothing by itself. PGW_EINVAL for NULL. */
PGW_EXTERN int pgw_repl_stream_confirm(pgw_repl_stream_t *st, uint64_t lsn);

/* The highest LSN confirmed (0 if none, or for NULL). */
PGW_EXTERN uint64_t pgw_repl_stream_confirmed(const pgw_repl_stream_t *st);
/* The highest XLogData wal_start received in this run (0: none). */
PGW_EXTERN uint64_t pgw_repl_stream_written(const pgw_repl_stream_t *st);

/* 1 while the stream is in CopyBoth and may send, 0 otherwise. */
PGW_EXTERN int pgw_repl_stream_active(const pgw_repl_stream_t *st);

/* Write a standby status update now (reply_requested: ask the server to
 * answer with a keepalive). Returns 0, PGW_EBUSY when not streaming,
 * PGW_ENOMEM, or the session's fatal error. */
PGW_EXTERN int pgw_repl_stream_send_status(pgw_repl_stream_t *st, bool reply_requested);

/*
 * Write a hot standby feedback message now, as a physical standby with
 * hot_standby_feedback on sends one: xmin is the oldest transaction whose
 * row versions the client's readers may still see, catalog_xmin the same
 * for the system catalogs, each a full transaction id (the epoch in the
 * high 32 bits, as pg_current_xact_id() and txid_current() give it; 0:
 * none). The server keeps VACUUM from removing what they can see: on the
 * stream's replication slot when START_REPLICATION named one
 * (pg_replication_slots.xmin and catalog_xmin, kept across connections
 * until changed), else on the walsender's own process
 * (pg_stat_replication.backend_xmin, the older of the two) until the
 * connection ends. Both 0 releases what an earlier message held. The
 * server ignores the whole message when an id given is not in its recent
 * past (more than 2^31 transactions old, or not yet assigned). Meant for
 * physical streams; sends nothing else. Returns 0, PGW_EINVAL (st NULL),
 * PGW_EBUSY when not streaming, PGW_ENOMEM, or the session's fatal error.
 */
PGW_EXTERN int pgw_repl_stream_send_feedback(pgw_repl_stream_t *st, uint64_t xmin,
                                             uint64_t catalog_xmin);

/* End the stream: a final status update, then CopyDone. The server ends
 * its side, and on_end fires with 0 when the command completes. Returns
 * 0, PGW_EBUSY (not streaming, or already ending), PGW_ENOMEM. */
PGW_EXTERN int pgw_repl_stream_stop(pgw_repl_stream_t *st);

/* The session side of CopyBoth, used by the stream: 1 while a request
 * carrying a CopyBoth (a PGW_REQ_SIMPLE with on_copy_data) may send in
 * it; send one CopyData with data[0..len) (PGW_EBUSY when none,
 * PGW_ETOOBIG past max_message_size); end our side with CopyDone
 * (PGW_EBUSY when none). The server's CopyDone is answered with ours. */
PGW_EXTERN int pgw_session_copy_both_active(const pgw_session_t *s);
/* See pgw_session_copy_both_active. */
PGW_EXTERN int pgw_session_copy_both_send(pgw_session_t *s, const void *data, size_t len);
/* See pgw_session_copy_both_active. */
PGW_EXTERN int pgw_session_copy_both_end(pgw_session_t *s);

/* A connection (conn.h) of the stream. */
struct pgw_conn;
/* Submit st's START_REPLICATION sql on conn (opened with a replication
 * option) and send status updates every cfg.status_interval_ms while it
 * streams (a timer on the connection's loop, stopped when on_end fires).
 * The stream ends with the server's CopyDone or error, the connection's
 * loss, or pgw_repl_stream_stop. Returns 0 or pgw_conn_submit's errors. */
PGW_EXTERN int pgw_conn_repl_start(struct pgw_conn *conn, pgw_repl_stream_t *st, const char *sql);

/* ------------------------------------------------------------------------
 * The blocking form, on a client (client.h) connected with a replication
 * option: start, take the XLogData messages one by one, confirm, stop.
 * Keepalives are answered inside. A client runs one stream at a time and
 * no other request while it streams.
 */
struct pgw_client;
/* A blocking replication stream. */
typedef struct pgw_client_repl pgw_client_repl_t;

/* Run sql (START_REPLICATION ...) on c and stream: status updates every
 * status_interval_ms (0: only on confirm and keepalive replies). Returns
 * 0 and *out (free with pgw_client_repl_free), PGW_EINVAL, PGW_ENOMEM or
 * a submit error. The server's refusal arrives from pgw_client_repl_next. */
PGW_EXTERN int pgw_client_repl_start(struct pgw_client *c, const char *sql,
                                     uint32_t status_interval_ms, pgw_client_repl_t **out);

/* The next XLogData into *out, waiting up to timeout_ms (< 0: no limit, 0:
 * none). out->data views the stream's queue: valid until the next call on
 * r. Returns 0, PGW_ETIMEDOUT (nothing yet), PGW_EDONE (the stream ended
 * normally: the server's CopyDone), the stream's error (PGW_ESERVER: see
 * pgw_client_repl_result; PGW_ECONNLOST ...; every message received before
 * it was handed out first), PGW_ENOMEM or PGW_EINVAL. Messages are queued
 * as they arrive; past 8 MiB queued the connection stops reading until the
 * caller catches up. */
PGW_EXTERN int pgw_client_repl_next(pgw_client_repl_t *r, int timeout_ms, pgw_repl_xlog_t *out);

/* Confirm lsn as durably processed (pgw_repl_stream_confirm) and send a
 * status update at once when streaming. Returns 0, PGW_EINVAL, or a send
 * error. */
PGW_EXTERN int pgw_client_repl_confirm(pgw_client_repl_t *r, uint64_t lsn);

/* Send a hot standby feedback message at once
 * (pgw_repl_stream_send_feedback: xmin and catalog_xmin full transaction
 * ids, 0: none), first waiting until the server has begun streaming when
 * it has not yet (what arrives meanwhile is queued for
 * pgw_client_repl_next). Returns 0, PGW_EINVAL (r NULL), PGW_EBUSY when
 * the stream has ended or is stopping, or a send error. */
PGW_EXTERN int pgw_client_repl_feedback(pgw_client_repl_t *r, uint64_t xmin, uint64_t catalog_xmin);

/* The highest LSN confirmed on r (0: none, or r NULL). */
PGW_EXTERN uint64_t pgw_client_repl_confirmed(const pgw_client_repl_t *r);

/* Stop: a final status update, CopyDone, then wait for the server to end
 * the command (what it still sends is dropped). Returns the stream's
 * status: 0 when it ended normally, PGW_ESERVER, PGW_ECONNLOST... */
PGW_EXTERN int pgw_client_repl_stop(pgw_client_repl_t *r);

/* The START_REPLICATION command's result once the stream ended (its error
 * for PGW_ESERVER), else NULL. Lives as long as r. */
PGW_EXTERN const pgw_result_t *pgw_client_repl_result(const pgw_client_repl_t *r);

/* Free r, stopping the stream first if it still runs. NULL: no-op. */
PGW_EXTERN void pgw_client_repl_free(pgw_client_repl_t *r);

#ifdef __cplusplus
}
#endif
#endif /* PGWIRE_REPLICATION_H */
