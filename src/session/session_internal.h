/*
 * Internals of the sans-IO session: the recycler (the memory a session and
 * its results reuse), reference-counted read chunks, result arenas, the request
 * FIFO and the prepared-statement table. Not installed.
 *
 * Memory picture:
 *
 *   recycler (refcounted: the session + every live result)
 *     |- allocator copy (results may outlive the session's config)
 *     |- free list of read chunks of the default size (4, more within
 *     |  chunk_cache_bytes: a buffered result spanning many chunks reuses them)
 *     |- free list of larger chunks (within chunk_cache_bytes)
 *     `- free list of recycled results (their arenas and cell arrays kept)
 *
 *   chunk (refcounted: the session while it reads into it + every result
 *          holding DataRows in it). DataRow fields of a buffered result are
 *          views into chunks, never copies.
 */
#ifndef PGW_SESSION_INTERNAL_H
#define PGW_SESSION_INTERNAL_H

#include "pgwire/session.h"
#include "util/internal.h"

#include <stdatomic.h>
#include <stdbool.h>

/* ------------------------------------------------- recycler, chunks */

typedef struct pgw__chunk {
    struct pgw__chunk *next; /* free-list link */
    struct pgw__recycler *recycler;
    uint32_t refs;
    size_t cap;
    uint8_t *data; /* cap bytes, allocated with the header */
} pgw__chunk_t;

/* Default-size chunks always kept for reuse (more within the budget). */
#define PGW__RECYCLE_MAX_FREE_CHUNKS 4
/* Recycled results always kept; past these, more are kept while their
 * storage together stays within PGW__RECYCLE_FREE_RESULT_BYTES, so the
 * results of a deep pipeline (1000 requests in flight) are reused too. */
#define PGW__RECYCLE_MAX_FREE_RESULTS  64
#define PGW__RECYCLE_FREE_RESULT_BYTES (4u * 1024u * 1024u)
/* A recycled result keeps at most this many bytes of cells / of arena, so
 * one huge result does not pin its memory forever. */
#define PGW__RESULT_KEEP_CELL_BYTES (1024u * 1024u)
#define PGW__RESULT_KEEP_ARENA      (64u * 1024u)

/* At most this many oversized chunks wait for reuse (bounds the best-fit scan). */
#define PGW__RECYCLE_MAX_FREE_BIG 32

/* The session's output settings that the server's text of a value depends
 * on, as last reported (result_text.c): shared, reference-counted, by the
 * results created while they held. The strings follow the struct. */
typedef struct pgw__text_settings {
    size_t refs;
    const char *timezone, *datestyle, *intervalstyle; /* NULL: not reported */
    struct pgw_tz *tz;                                /* loaded at first use */
    int tz_state;                                     /* 0: not tried, 1: loaded, <0: failed */
} pgw__text_settings_t;

/* The ParameterStatus names those settings come from, in this order. */
#define PGW__TEXT_NPARAMS 3

typedef struct pgw__recycler {
    pgw_allocator_t alloc;
    /* results_any_thread: every access to what follows (and to the chunks'
     * and text settings' reference counts) holds lock. */
    bool shared;
    atomic_flag lock;
    size_t refs;
    size_t chunk_size;
    pgw__chunk_t *free_chunks; /* default-size chunks */
    unsigned nfree_chunks;
    pgw__chunk_t *free_big; /* larger chunks */
    unsigned nfree_big;
    /* Bytes of every kept chunk; past the first PGW__RECYCLE_MAX_FREE_CHUNKS
     * default-size ones, chunks are kept only within big_budget. */
    size_t free_bytes, big_budget;
    struct pgw_result *free_results;
    unsigned nfree_results;
    size_t free_result_bytes; /* storage of the free results */
    /* The session while it lives (pgw_session_new / free), whose reported
     * settings each new result captures, and the current capture
     * (result_text.c). */
    struct pgw_session *session;
    pgw__text_settings_t *text_settings;
    uint64_t text_settings_at; /* the session's params_changes when checked */
    /* The registry the results decode user types through (the session's). */
    pgw_type_registry_t *registry;
} pgw__recycler_t;

int pgw__recycler_new(pgw__recycler_t **out, const pgw_allocator_t *alloc, size_t chunk_size,
                      size_t big_budget);
/* The recycler's lock, when it is shared between threads (a spin lock:
 * held for a few instructions, or once per output settings for loading a
 * time zone). */
void pgw__recycler_lock(pgw__recycler_t *p);
void pgw__recycler_unlock(pgw__recycler_t *p);
/* 1 when c's only reference is its holder's (the session may reuse it). */
bool pgw__chunk_sole(pgw__chunk_t *c);
void pgw__recycler_ref(pgw__recycler_t *p);
void pgw__recycler_unref(pgw__recycler_t *p);
/* A chunk of at least cap bytes with one reference, or NULL. */
pgw__chunk_t *pgw__chunk_get(pgw__recycler_t *p, size_t cap);
void pgw__chunk_ref(pgw__chunk_t *c);
void pgw__chunk_unref(pgw__chunk_t *c);

/* ------------------------------------------------------------------ result */

typedef struct pgw__arena_block {
    struct pgw__arena_block *next;
    size_t size, used;
    /* data follows, 8-byte aligned */
} pgw__arena_block_t;

struct pgw_result {
    pgw__recycler_t *recycler;
    struct pgw_result *next; /* chain of a simple query; free-list link */
    pgw__arena_block_t *arena;

    pgw_field_desc_t *fields; /* in the arena; names NUL-terminated */
    uint16_t ncols;
    bool have_desc; /* a RowDescription / NoData (or stored one) was seen */
    bool complete;  /* CommandComplete (or equivalent) seen */
    bool suspended; /* a portal's batch ended with PortalSuspended */
    uint32_t *param_oids;
    uint16_t nparams;

    pgw_value_t *cells; /* nrows * ncols values (views into chunks) */
    size_t cells_cap;
    size_t nrows;
    uint64_t nstreamed;    /* rows handed to a row callback instead */
    pgw__chunk_t **chunks; /* chunks referenced by the cells */
    size_t nchunks, chunks_cap;

    const char *tag; /* in the arena; "" if none */
    int64_t rows_affected;
    bool has_error;
    pgw_error_t error; /* strings in the arena */

    uint64_t t_queued, t_first, t_done;

    /* COPY (copy.c): direction once begun (PGW_COPY_IN/OUT, 0 before),
     * formats from the CopyIn/OutResponse, payload bytes moved. */
    bool is_copy;
    uint8_t copy_dir;
    int16_t copy_format;
    uint16_t copy_ncols;
    int16_t *copy_formats; /* in the arena */
    uint64_t copy_bytes;

    /* The server's text of values (result_text.c): the session's settings
     * when the result was created (a reference), and per cell the text
     * made so far (nrows * ncols entries in the arena, NULL until the
     * first call; each entry NULL or a pgw__cell_text_t). */
    pgw__text_settings_t *text_settings;
    struct pgw__cell_text **cell_texts;
};

pgw_result_t *pgw__result_new(pgw__recycler_t *rec);
/* recycler.c: r (one result, not its chain) goes back to its recycler's
 * free list, its storage kept within the bounds, or is freed. */
void pgw__result_recycle(pgw_result_t *r);
/* The session's current text settings, with a reference for a new result
 * (NULL without a session or memory). The caller holds rec's lock (both
 * functions). (result_text.c) */
pgw__text_settings_t *pgw__text_settings_capture(pgw__recycler_t *rec);
/* Drop a reference to s (NULL: nothing). (result_text.c) */
void pgw__text_settings_unref(pgw__recycler_t *rec, pgw__text_settings_t *s);
/* Bump allocation in the result's arena (8-byte aligned), or NULL. */
void *pgw__result_alloc(pgw_result_t *r, size_t n);
char *pgw__result_strdup(pgw_result_t *r, const char *p, size_t n);
/* Copy a RowDescription into r (names copied, formats as sent). */
int pgw__result_set_desc_msg(pgw_result_t *r, const pgw_msg_t *m);
/* Copy ncols field descriptors (names copied), with formats overridden by
 * formats (one per column, one for all, or none). */
int pgw__result_set_desc(pgw_result_t *r, const pgw_field_desc_t *fields, uint16_t ncols,
                         const int16_t *formats, uint16_t nformats);
int pgw__result_set_params(pgw_result_t *r, const uint32_t *oids, uint16_t n);
int pgw__result_set_params_msg(pgw_result_t *r, const pgw_msg_t *m);
/* Append DataRow m, whose bytes live in chunk c. Returns 0, PGW_EPROTO or
 * PGW_ENOMEM. */
int pgw__result_add_row(pgw_result_t *r, const pgw_msg_t *m, pgw__chunk_t *c);
/* The n values of DataRow m into out, each with the format and type of its
 * column in fields: what a row callback and a buffered result hand out.
 * Returns 0 or PGW_EPROTO (not n columns, or lengths that do not add up). */
int pgw__row_values(const pgw_msg_t *m, const pgw_field_desc_t *fields, uint16_t n,
                    pgw_value_t *out);
int pgw__result_set_tag(pgw_result_t *r, const pgw_msg_t *m);
/* error.c: make f, an ErrorResponse's parsed fields, r's error: the fields
 * are copied into r's arena. Returns 0 or PGW_ENOMEM. */
int pgw__result_set_error(pgw_result_t *r, const pgw_error_fields_t *f);
/* Fill e from f; the strings point into the message f was parsed from. */
void pgw__error_from_fields(const pgw_error_fields_t *f, pgw_error_t *e);

/* --------------------------------------------------------------- requests */

/* Each public request kind (pgw_request_kind_t, without its PGW_REQ_ prefix)
 * and the FIFO entry kind it runs as: requests.c's names and map. */
/* One kind per line, so a new kind is a one-line change. */
/* clang-format off */
#define PGW__REQUEST_KINDS(X)  \
    X(QUERY, EXTENDED)         \
    X(SIMPLE, SIMPLE)          \
    X(PREPARE, PREPARE)        \
    X(EXECUTE, EXTENDED)       \
    X(DESCRIBE, DESCRIBE)      \
    X(CLOSE, CLOSE)            \
    X(SYNC, SYNC)              \
    X(COPY, COPY)              \
    X(FLUSH, FLUSH)            \
    X(FETCH, EXTENDED)         \
    X(CLOSE_PORTAL, CLOSE)     \
    X(DESCRIBE_PORTAL, DESCRIBE)  \
    X(FUNCTION_CALL, SIMPLE)
/* clang-format on */

enum pgw__req_kind {
    PGW__REQ_SIMPLE = 1, /* 'Q' (or 'F'): completes at ReadyForQuery */
    PGW__REQ_EXTENDED,   /* query / execute: [1] 2 [T|n] D* C|I|s */
    PGW__REQ_PREPARE,    /* 1 t T|n */
    PGW__REQ_DESCRIBE,   /* t T|n */
    PGW__REQ_CLOSE,      /* 3 */
    PGW__REQ_SYNC,       /* Z (internal, pgw_session_sync or batch end) */
    PGW__REQ_COPY,       /* 1 2 n, then G (d* from us) C | H d* c C (copy.c) */
    PGW__REQ_FLUSH = 8   /* nothing: completes once every entry before it has */
};

/* Expected responses of an extended-protocol request, in order. */
enum pgw__exp {
    PGW__EXP_PARSE = 1, /* '1' */
    PGW__EXP_BIND,      /* '2' */
    PGW__EXP_PDESC,     /* 't' */
    PGW__EXP_RDESC,     /* 'T' or 'n' */
    PGW__EXP_ROWS,      /* 'D'* then 'C' | 'I' | 's' */
    PGW__EXP_CLOSE,     /* '3' */
    PGW__EXP_COPY,      /* 'G' | 'H', then the COPY's data and 'C' (copy.c) */
    PGW__EXP_SDESC      /* a statement's 'T' or 'n', not kept (its portal's follows) */
};

enum pgw__req_flag {
    PGW__RF_USER = 1u << 0,          /* counts in pgw_session_pending (has a callback slot) */
    PGW__RF_IN_BATCH = 1u << 1,      /* feeds the batch status */
    PGW__RF_BATCH_END = 1u << 2,     /* the Sync that closes a submitted batch */
    PGW__RF_STREAM = 1u << 3,        /* rows go to row_cb */
    PGW__RF_STORE = 1u << 4,         /* store the description in the statement table */
    PGW__RF_OWN_SYNC = 1u << 5,      /* followed by its own internal Sync entry (see SYNC_HERE) */
    PGW__RF_VOUCHED = 1u << 6,       /* executes a statement the table vouches for (ESTMTINVALID) */
    PGW__RF_CACHE_HIT = 1u << 7,     /* executes its cached statement by name (stmt_cache.c) */
    PGW__RF_CACHE_CLOSE = 1u << 8,   /* closes an evicted cached statement (stmt_token: its id) */
    PGW__RF_TEXT = 1u << 9,          /* asked text for every column (PGW_Q_TEXT) */
    PGW__RF_COPY_REFUSED = 1u << 10, /* the server began a COPY it cannot carry: PGW_ECOPY */
    PGW__RF_COPY_CARRY =
        1u << 11, /* has the caller's COPY callbacks (COPY, or SIMPLE given them) */
    /* An execution of a described statement (a cache hit, or a named
     * statement) bound with its statement's formats (or text for all,
     * PGW__RF_TEXT): its result is made when the answer begins, with the
     * description of r->cached or r->desc (which the entry holds a
     * reference to), so that a pending request holds no result. */
    PGW__RF_DESC_LATER = 1u << 12,
    PGW__RF_NO_RESULT = 1u << 13, /* PGW_Q_NO_RESULT: no result handed out on success */
    /* Its own Sync follows its messages, and this entry stands for it: once
     * its own replies are in, it becomes the Sync's entry (dispatch.c,
     * hand_to_sync), so a pending request costs one entry. (OWN_SYNC: a
     * Sync entry apart follows it instead.) */
    PGW__RF_SYNC_HERE = 1u << 14
};

/* A one-shot query whose result has a column type without binary output
 * (the server's 42883 at Execute) can be bound again with text for that
 * column. It keeps a copy of its Bind parameter section for that, up to
 * this many bytes (a larger one is not retried), in the retry log. */
#define PGW__RETRY_MAX_PARAMS 4096

enum pgw__retry {
    PGW__RETRY_NONE = 0, /* no copy kept: not retried */
    PGW__RETRY_ARMED,    /* the retry log holds its Bind parameter section */
    PGW__RETRY_WAIT,     /* got 42883; the ReadyForQuery decides */
    PGW__RETRY_DONE      /* bound again once; never again */
};

/* The driver that submitted an entry on a caller's behalf (session.h,
 * "Driver completions"): its hook hears the completion first. */
typedef struct pgw__driver {
    pgw_driver_hook fn;
    void *ctx;
    size_t index; /* in its batch; PGW_DRIVER_BATCH for a batch's end */
} pgw__driver_t;

/* An entry's driver_index for PGW_DRIVER_BATCH (a batch's end): the
 * requests of a batch are counted in 32 bits (pgw_session_submit_batch
 * refuses more). */
#define PGW__DRIVER_INDEX_BATCH UINT32_MAX

/* The head of a described statement's block: executions of the
 * statement whose answer has not begun hold a reference, so that their
 * result takes the description when the answer begins (PGW__RF_DESC_LATER)
 * even if the statement was closed or replaced meanwhile. */
typedef struct pgw__desc {
    size_t refs; /* the table's (or the cache entry's) and the executions' */
    const pgw_field_desc_t *fields;
    const int16_t *formats;
    uint16_t ncols;
} pgw__desc_t;

/* A FIFO entry. The small fields come first, packed: a pipeline of
 * 100,000 requests holds 100,000 of these. What only some requests use
 * is in their pgw__req_aux_t instead; when a request's answer began is
 * the session's (fifo.head_t_first), as only the head's answer arrives. */
typedef struct pgw__req {
    struct pgw__req *next;
    uint8_t kind;
    uint8_t nexp, step;
    uint8_t retry;      /* enum pgw__retry */
    uint8_t dl;         /* PGW__DL_* bits (deadline.c) */
    uint8_t copy_state; /* enum pgw__copy_state (copy.c) */
    uint16_t flags;
    uint8_t exp[5];
    bool retry_prepare; /* the retry prepares the cached statement again (else rebinds) */
    bool reprepared;    /* ... which was done once: never again */
    /* A FUNCTION_CALL (a SIMPLE entry answered by 'V'), and the format it
     * asked for the value. */
    bool is_call;
    int16_t fn_format;
    /* The bytes of its Bind parameter section kept in the session's retry
     * log (fifo.retry; 0: none). */
    uint16_t retry_len;
    /* Deadlines (deadline.c): the request's effective timeout; ticket below
     * is the ticket of the submit the entry belongs to (0: the session's
     * own entries and a batch's closing Sync). */
    uint32_t timeout_ms;
    int status; /* first failure (SYNC entries: ESERVER at the Sync) */
    int row_status;
    uint32_t group; /* sync group (pgw__group_next); only compared for equality */
    /* The driver (pgw__req_driver): its hook (NULL: none) and context, and
     * the request's index in its batch (PGW__DRIVER_INDEX_BATCH: the
     * batch's end). */
    uint32_t driver_index;
    uint64_t ticket;
    pgw_result_cb cb;
    void *ud; /* the caller's, for every callback of the request */
    /* What only some requests use (pgw__req_aux); NULL for the others. */
    struct pgw__req_aux *aux;
    pgw_driver_hook driver_fn;
    void *driver_ctx;
    pgw_result_t *res; /* first result (or the only one) */
    uint64_t t_queued;
    /* The statement-table token this request's reply is checked against
     * (prepare, describe, named execute); 0: none. */
    uint64_t stmt_token;
    /* The cached statement the request executes or prepares (a reference,
     * dropped when the entry is released), or NULL. */
    struct pgw__cached *cached;
    /* The description of the named statement the request executes, when
     * its result is made as the answer begins (PGW__RF_DESC_LATER without
     * cached): a reference, dropped then or when the entry is released. */
    pgw__desc_t *desc;
} pgw__req_t;

/* r's driver, as the completion hands it to pgw__notify. */
static inline pgw__driver_t pgw__req_driver(const pgw__req_t *r)
{
    size_t index = r->driver_index == PGW__DRIVER_INDEX_BATCH ? PGW_DRIVER_BATCH : r->driver_index;
    return (pgw__driver_t){r->driver_fn, r->driver_ctx, index};
}

/* The sync group of the session's own queries at the head of the FIFO
 * (pgw__req_simple_first): never a user group, so an error in either never
 * aborts the other. */
#define PGW__GROUP_INTERNAL UINT32_MAX

/* The sync group after g: numbers wrap (they are only compared for
 * equality, among the entries of one FIFO), never to PGW__GROUP_INTERNAL. */
static inline uint32_t pgw__group_next(uint32_t g)
{
    return g + 1 == PGW__GROUP_INTERNAL ? 0 : g + 1;
}

/* What only some requests use, kept apart from their FIFO entry so that a
 * pipeline of plain requests does not carry it: the row callback
 * (PGW__RF_STREAM with on_row), the COPY callbacks (PGW__RF_COPY_CARRY),
 * where held output begins (a COPY, or a submit with a deadline), and a
 * simple query's chain of results. Allocated in blocks as the entries
 * are, attached to an entry by pgw__req_aux and back on the session's free
 * list when the entry is released. */
typedef struct pgw__req_aux {
    struct pgw__req_aux *next; /* on the free list */
    pgw_row_cb row_cb;
    uint64_t nrows_streamed;
    pgw_copy_source_cb copy_source;
    pgw_copy_data_cb copy_data_cb;
    pgw_copy_start_cb copy_start_cb;
    pgw_copy_end_cb copy_end_cb;
    /* While a COPY (copy.c), or the end of a submit with a deadline
     * (PGW__DL_HOLDS), holds the output: where the bytes queued after it
     * begin in the held buffer. */
    size_t copy_end;
    /* A simple query's (or function call's) last result: the tail of the
     * chain that begins at the entry's res. */
    pgw_result_t *last;
} pgw__req_aux_t;

typedef struct pgw__aux_block {
    struct pgw__aux_block *next;
    pgw__req_aux_t aux[];
} pgw__aux_block_t;

/* Nothing: what pgw__aux_of reads for an entry without a block. */
extern const pgw__req_aux_t pgw__no_aux;

/* r's aux block, to read (all NULL and 0 when it has none). */
static inline const pgw__req_aux_t *pgw__aux_of(const pgw__req_t *r)
{
    return r->aux ? r->aux : &pgw__no_aux;
}

/* A block of FIFO entries (session.fifo.blocks). */
typedef struct pgw__req_block {
    struct pgw__req_block *next;
    pgw__req_t req[];
} pgw__req_block_t;
#define PGW__REQ_BLOCK_MIN 8
#define PGW__REQ_BLOCK_MAX 4096

/* ------------------------------------------------------- statement table */

/*
 * An entry is either known (the server's description of the statement as it
 * is now) or pending (a prepare or describe is in flight, or an execute of a
 * statement never described here). Each entry has a token, unique for the
 * session's life, given when it is created: a reply stores its description
 * only into the entry whose token the request was given when it was queued,
 * so a late reply to a statement closed or replaced since cannot bring back
 * an old description.
 */
typedef struct pgw__stmt {
    void *block; /* the one allocation holding everything below */
    size_t block_size;
    char *name;
    uint64_t token;
    bool known; /* fields/formats valid; else pending (only name is set) */
    /* The session believes the statement exists: it prepared it, or saw it
     * run, and did not close it. Its 26000 / 0A000 is PGW_ESTMTINVALID; a
     * name it never saw or closed itself gets PGW_ESERVER (a caller's
     * mistake, not a change behind its back). */
    bool vouched;
    /* Executing it may start a COPY (the session prepared it from SQL that
     * names COPY): what is queued after an execution waits until the
     * server has answered it. */
    bool may_copy;
    /* block begins with a pgw__desc_t (a described statement); else it
     * holds the name only */
    bool described;
    uint32_t hash;
    uint16_t nparams;
    uint16_t ncols;
    uint32_t *param_oids;
    pgw_field_desc_t *fields; /* names point into the same block */
    int16_t *formats;         /* per-column result format for Bind */
} pgw__stmt_t;

/* ------------------------------------------------------- statement cache */

/* pgw_<16 hex digits of the session's nonce>_<id in hex> */
#define PGW__CACHE_NAME_MAX 40

/*
 * A cached statement (stmt_cache.c): the key is a hash of the SQL and the
 * parameter types the query declared, verified against the copies kept
 * here. The entry is created when its first execution is queued (a Parse
 * under its name); st becomes known when that execution's description
 * arrives, and from then on executions bind it by name. Requests that
 * execute or prepare it hold a reference, so an entry evicted or
 * invalidated while they are in flight lives until the last one is done.
 */
typedef struct pgw__cached {
    struct pgw__cached *hnext;         /* bucket chain */
    struct pgw__cached *newer, *older; /* LRU list */
    uint64_t key;
    uint64_t id;
    uint32_t refs;
    bool in_cache;
    uint16_t noids;
    size_t sql_len;
    size_t bytes; /* counted in the cache's byte bound */
    const char *sql;
    const uint32_t *oids;
    pgw__stmt_t st; /* st.name: the statement's name */
    char name[PGW__CACHE_NAME_MAX];
} pgw__cached_t;

/* ------------------------------------------------------------------ index */

/* index.c: an open-addressing index of an array's entries by hash (O(1)
 * amortised find, insert, delete), the array kept by its owner. */
typedef struct pgw__idx {
    uint32_t *slot; /* entry number + 1, 0: empty */
    uint32_t *hash; /* the hash of each slot's entry */
    size_t mask;    /* slots - 1 (a power of two) */
    size_t n;
} pgw__idx_t;

/* Room for n entries. Returns 0 or PGW_ENOMEM (the index unchanged). */
int pgw__idx_reserve(pgw__idx_t *x, const pgw_allocator_t *a, size_t n);
/* The entry with hash h for which eq(ctx, entry) is true, or SIZE_MAX. */
size_t pgw__idx_find(const pgw__idx_t *x, uint32_t h, bool (*eq)(const void *ctx, size_t i),
                     const void *ctx);
/* Add entry i (room reserved). */
void pgw__idx_put(pgw__idx_t *x, uint32_t h, size_t i);
/* Remove entry i, which has hash h. */
void pgw__idx_del(pgw__idx_t *x, uint32_t h, size_t i);
/* Entry from (hash h) now lives at to. */
void pgw__idx_move(pgw__idx_t *x, uint32_t h, size_t from, size_t to);
void pgw__idx_free(pgw__idx_t *x, const pgw_allocator_t *a);
/* FNV-1a of n bytes. */
uint32_t pgw__hash_bytes(const void *p, size_t n);

/* ------------------------------------------------------------------ session */

typedef struct pgw__param_entry {
    char *name;
    size_t name_len;
    uint32_t hash;
    char *value;
    size_t value_cap;
} pgw__param_entry_t;

/* Distinct ParameterStatus names a session keeps (a server reports about
 * twenty): one more breaks the session with PGW_EPROTO. */
#define PGW__MAX_SERVER_PARAMS 1024

enum pgw__auth_bits {
    PGW__AUTH_PASSWORD = 1u << 0,
    PGW__AUTH_MD5 = 1u << 1,
    PGW__AUTH_GSS = 1u << 2,
    PGW__AUTH_SSPI = 1u << 3,
    PGW__AUTH_SCRAM = 1u << 4,
    PGW__AUTH_NONE = 1u << 5, /* no authentication exchange (trust, cert) */
    PGW__AUTH_OAUTH = 1u << 6,
    PGW__AUTH_ALL = 0x7f
};
/* The SASL mechanisms: a SASL request is allowed when one of them is. */
#define PGW__AUTH_SASL (PGW__AUTH_SCRAM | PGW__AUTH_OAUTH)
/* The longest require_auth value the parser accepts: every method once,
 * each negated ("!password,!md5,...,!oauth"). */
#define PGW__REQUIRE_AUTH_MAX 64

enum pgw__cb_mode { PGW__CB_DISABLE = 0, PGW__CB_PREFER, PGW__CB_REQUIRE };

struct pgw__scram;
typedef struct pgw__oauth pgw__oauth_t;

/*
 * The session: what it was configured with and what the startup made of it
 * (startup), what the server reported (server), the read and write sides
 * (input, output), the request FIFO and its sync groups (fifo, group), the
 * statement table and cache (stmts, cache), the COPY in progress (copy),
 * and the scratch of submits and streamed rows (submit, rows).
 */
struct pgw_session {
    pgw__recycler_t *recycler;
    const pgw_allocator_t *alloc; /* &recycler->alloc */
    pgw_session_callbacks_t cb;
    void *ud;
    bool trace_quiet_out; /* on_trace sees received messages only */
    bool trace_quiet_in;  /* on_trace sees sent messages only */
    pgw_rx_counts_t rx;   /* pgw_session_rx_counts */
    pgw_session_state_t state;
    int err;
    uint32_t max_message;

    /* configuration, and the startup and authentication steps (startup.c) */
    struct {
        char **params; /* (name, value) pairs */
        size_t nparams;
        const char *user; /* points into params */
        char *password;
        unsigned auth_allowed; /* PGW__AUTH_* mask */
        bool auth_policy;      /* require_auth was given (even empty, as libpq) */
        char require_auth[PGW__REQUIRE_AUTH_MAX]; /* as given, for the refusals' messages */
        uint8_t cb_mode;
        uint32_t min_protocol, max_protocol;
        struct pgw__scram *scram;
        uint8_t scram_step; /* 0: first sent, 1: final sent, 2: verified or failed */
        bool scram_final_ok;
        uint8_t gss_step;         /* GSSAPI authentication: 0 none, 1 exchanging, 2 established */
        struct pgw__oauth *oauth; /* OAUTHBEARER settings and exchange; NULL: none */
        bool auth_done;           /* AuthenticationOk accepted */
        bool reported;            /* on_startup already called */
        bool own_datestyle;       /* the application set DateStyle: left alone */
        bool own_intervalstyle;   /* the application set IntervalStyle: left alone */
        const char *test_nonce;   /* tests only: fixed SCRAM nonce */
        bool auth_requested;      /* the server asked for some authentication */
        const char *auth_method;
    } startup;

    /* what the server reported */
    struct {
        uint32_t protocol;
        int32_t backend_pid;
        uint8_t backend_key[256];
        size_t backend_key_len;
        bool have_backend_key;
        pgw__param_entry_t *params; /* ParameterStatus */
        size_t nparams, params_cap;
        pgw__idx_t params_idx; /* params by name */
        /* Counts the ParameterStatus messages applied: what depends on a
         * parameter's value looks again only when it moved. */
        uint64_t params_changes;
        char txn_status;
    } server;

    /* input: the read chunk, the parse position, the end of the data, the
     * bytes the partial frame at pos needs (0: none); read backpressure
     * (input processing stops after the current message) */
    struct {
        pgw__chunk_t *chunk;
        size_t pos, fill, need;
        bool paused;
    } input;

    /* output: buf's first off bytes already consumed by the driver; held:
     * requests encoded before startup completed; write backpressure */
    struct {
        pgw_buf_t buf;
        size_t off;
        pgw_buf_t held;
        pgw_buf_t scratch;
        size_t high_water;
        bool congested; /* a submit was refused: on_drain is owed */
        void (*on_drain)(pgw_session_t *s, void *ud);
    } output;

    /* the request FIFO, its sync groups and tickets (deadline.c) */
    struct {
        pgw__req_t *head, *tail;
        pgw__req_t *free; /* recycled entries */
        unsigned nfree;
        /* Entries are allocated in blocks (each twice the entries before
         * it, at most PGW__REQ_BLOCK_MAX), kept until the session is freed:
         * no allocation or allocator header per request. */
        struct pgw__req_block *blocks;
        size_t nentries;
        /* The entries' aux blocks (pgw__req_aux), the same way. */
        pgw__req_aux_t *aux_free;
        struct pgw__aux_block *aux_blocks;
        size_t naux;
        size_t npending;
        size_t max_pending; /* at it, submits are refused (PGW_ECONGESTED) */
        uint32_t tx_group;  /* of the next entry (pgw__group_next) */
        int rx_batch_status;
        bool rx_aborting;
        uint32_t rx_abort_group;
        /* When the head entry's answer began (pgw__stamp; 0: not yet, or
         * no clock): replies come in FIFO order, so only the head's can
         * have begun. */
        uint64_t head_t_first;
        /* The retry log: the Bind parameter sections the retryable
         * requests keep (requests.c, keep_bind_params), in FIFO order, so
         * the head's begins at retry_off; each entry knows its length. */
        pgw_buf_t retry;
        size_t retry_off;
        uint64_t ticket_seq;         /* last ticket given */
        uint32_t request_timeout_ms; /* for timeout_ms 0 (only with cb.on_deadline) */
        bool no_pipelining;          /* a submit is written once the ones before completed */
    } fifo;

    /* portals (portal.c): the current sync group has no Sync queued yet,
     * and how many portals were opened in it and not closed */
    struct {
        bool open;
        uint32_t nportals;
    } group;

    /* submits: parameters converted to a statement's declared types
     * (requests.c), and why the last submit was refused
     * (pgw_session_refusal; "" if accepted) */
    struct {
        pgw_param_t *conv;
        size_t conv_cap;
        char refusal[160];
        size_t accepted; /* of the last batch (pgw_session_batch_accepted) */
        /* PGW_BATCH_STREAM's parts (pgw_session_set_stream): none when
         * ready is NULL */
        size_t part_bytes;
        pgw_stream_ready_fn ready;
        void *ready_ctx;
    } submit;

    /* the values of a streamed row */
    struct {
        pgw_value_t *values;
        size_t cap;
    } rows;

    /* the statement table (stmt.c) */
    struct {
        pgw__stmt_t *list;
        size_t n, cap;
        pgw__idx_t by_name, by_token;
        uint64_t seq; /* last token given */
    } stmts;

    /* the statement cache (stmt_cache.c) */
    struct {
        uint8_t mode; /* PGW_STMT_* */
        uint32_t max;
        size_t max_bytes;
        pgw__cached_t **buckets;
        size_t nbuckets; /* a power of two (0 before first use) */
        pgw__cached_t *newest, *oldest;
        uint64_t *seen; /* keys seen once, direct-mapped */
        size_t seen_mask;
        uint64_t seq;
        char nonce[17];
        uint64_t *closes; /* ids of evicted statements whose Close is owed */
        size_t ncloses, closes_cap;
        pgw_stmt_cache_stats_t stats;
        /* Cached statements found gone (26000) since the session last saw
         * SQL that deallocates: from the second on, no retry (a pooler). */
        uint32_t vanished;
    } cache;

    /* COPY (copy.c). tx: the oldest COPY whose data end the server does not
     * know yet; everything encoded after it waits in held. in: the COPY
     * FROM STDIN being pumped (the head request). pump_at: while the source
     * appends, where its CopyData message begins in the output (SIZE_MAX
     * otherwise); output past it is not handed to the driver. */
    struct {
        pgw__req_t *tx;
        pgw_buf_t held;
        pgw__req_t *in;
        size_t pump_at;
    } copy;

    /* re-entrancy */
    unsigned depth;
    bool free_pending;
    bool freeing;

    /* pgw__stamp: no timing at all (config), an input chunk is being
     * processed, and the clock's reading taken for it (0: none yet). */
    bool no_timing;
    bool in_input;
    uint64_t stamp_ns;
};

/* session.c */
/* Nothing more may happen on the session but its teardown: it broke, or it
 * is being freed (from a callback: free_pending; or now: freeing). Checked
 * after every callback. */
static inline bool pgw__halted(const pgw_session_t *s)
{
    return s->state == PGW_SESSION_BROKEN || s->free_pending || s->freeing;
}
uint64_t pgw__now(pgw_session_t *s);
/* The time a request is stamped with (queued, first reply, done): now, but
 * read once for all the requests stamped while one input chunk is
 * processed (their replies came in one read; requests queued from its
 * callbacks take that time too). */
uint64_t pgw__stamp(pgw_session_t *s);
void pgw__session_break(pgw_session_t *s, int err);
void pgw__trace_out(pgw_session_t *s, const pgw_buf_t *b, size_t from, bool typed);
/* The buffer requests are encoded into (out when ready, held before). */
pgw_buf_t *pgw__req_buf(pgw_session_t *s);
/* After appending to the output: fire on_want_write if it was empty. */
void pgw__out_appended(pgw_session_t *s, pgw_buf_t *b, size_t from);
/* Release an empty output buffer whose capacity passed the cache bound. */
void pgw__out_trim(pgw_session_t *s, pgw_buf_t *b);
void pgw__enter(pgw_session_t *s);
/* Returns true if the session was freed. */
bool pgw__leave(pgw_session_t *s);

/* startup.c */
/* libpq 18's require_auth: the one parser, used by the session and by the
 * connection options' validation (conninfo.c). spec NULL or "" allows
 * everything. Returns 0 and sets *allowed (PGW__AUTH_* mask), or
 * PGW_EINVAL with libpq's message in errbuf (may be NULL). */
int pgw__parse_require_auth(const char *spec, unsigned *allowed, char *errbuf, size_t errlen);
/* Apply cfg's require_auth to s (session.c's configure). Returns 0 or
 * PGW_EINVAL. */
int pgw__session_require_auth(pgw_session_t *s, const char *spec);
/* Copy cfg's OAuth settings (s->oauth stays NULL without any). Returns 0
 * or PGW_ENOMEM. */
int pgw__session_oauth_configure(pgw_session_t *s, const pgw_session_config_t *cfg);
/* Free the authentication state (SCRAM, OAuth), secrets wiped. */
void pgw__session_auth_free(pgw_session_t *s);
/* ef: the fields of m when it is an ErrorResponse, parsed by pgw__dispatch;
 * else NULL. */
int pgw__startup_dispatch(pgw_session_t *s, const pgw_msg_t *m, const pgw_error_fields_t *ef);
void pgw__startup_failed(pgw_session_t *s, int err, const pgw_error_t *e);
/* Tests only: use a fixed SCRAM client nonce and put the user name in the
 * client-first-message (as in the RFC 7677 example), so server messages can
 * be scripted. nonce must outlive the exchange. */
void pgw__session_set_test_nonce(pgw_session_t *s, const char *nonce);

/* dispatch.c */
int pgw__dispatch(pgw_session_t *s, const pgw_msg_t *m);
/* Tell whoever hears r's completion (its driver's hook, then its
 * callback) that it finished with status and res (the result, given away;
 * may be NULL). r has left the FIFO or stays only to read replies. */
void pgw__notify(const pgw_result_cb cb, void *ud, const pgw__driver_t *d, int status,
                 pgw_result_t *res);
/* The head request r got one expected response: completes it after the last. */
int pgw__req_step(pgw_session_t *s, pgw__req_t *r);
void pgw__fail_all(pgw_session_t *s, int err);
void pgw__req_release(pgw_session_t *s, pgw__req_t *r);
/* r's aux block, attached (all NULL and 0) if it has none yet, to set
 * what it holds; NULL when out of memory (PGW_ENOMEM). */
pgw__req_aux_t *pgw__req_aux(pgw_session_t *s, pgw__req_t *r);
/* The head entry r no longer needs what it kept in the retry log. */
void pgw__retry_drop(pgw_session_t *s, pgw__req_t *r);
/* Set a session parameter (ParameterStatus). Returns 0, PGW_ENOMEM or
 * PGW_EPROTO (past PGW__MAX_SERVER_PARAMS names). */
int pgw__param_set(pgw_session_t *s, pgw_str_t name, pgw_str_t value);
/* The parameter named name[0..len), or NULL. */
pgw__param_entry_t *pgw__param_find(const pgw_session_t *s, const char *name, size_t len);
/* NoticeResponse (ef its parsed fields, else NULL), NotificationResponse and
 * ParameterStatus, at any time. */
void pgw__handle_async(pgw_session_t *s, const pgw_msg_t *m, const pgw_error_fields_t *ef,
                       int *handled, int *rc);

/* requests.c */
/* An error arrived in the open group: queue its Sync now (an internal
 * entry, no callback), so the server stops skipping and the group's later
 * requests can be aborted. Returns 0, PGW_ENOMEM or PGW_ETOOBIG. */
int pgw__group_end_now(pgw_session_t *s);
/* Bind the query at the head again, with the parameter section it kept and
 * per-column formats from its RowDescription, plus Describe, Execute and
 * Sync; the request starts over at its Bind. Returns 0, PGW_ENOMEM or
 * PGW_ETOOBIG (nothing queued then). */
int pgw__req_rebind(pgw_session_t *s, pgw__req_t *r);
/* The cached statement the query at the head executed is gone or changed
 * (26000 / 0A000 at Bind): prepare it again under a new name and run it
 * with the parameter section it kept (Parse, Bind, Describe, Execute,
 * Sync); the request starts over at its Parse. Returns 0, PGW_ENOMEM or
 * PGW_ETOOBIG (nothing queued then). */
int pgw__req_reprepare(pgw_session_t *s, pgw__req_t *r);
/* Queue a simple query of the session's own ahead of every queued request:
 * encoded at the end of out, linked at the head of the FIFO in a sync
 * group of its own; cb (may be NULL) gets its result. Returns 0,
 * PGW_ENOMEM or PGW_ETOOBIG. */
int pgw__req_simple_first(pgw_session_t *s, pgw_buf_t *out, const char *sql, pgw_result_cb cb,
                          void *ud);

/* copy.c */
enum pgw__copy_state {
    PGW__COPY_NONE = 0,    /* not a COPY */
    PGW__COPY_QUEUED,      /* encoded; the server has not begun it */
    PGW__COPY_PUMP,        /* COPY FROM: pulling the source */
    PGW__COPY_PAUSED,      /* COPY FROM: the source paused */
    PGW__COPY_SENT,        /* COPY FROM: CopyDone or CopyFail written */
    PGW__COPY_OUT,         /* COPY TO: receiving data */
    PGW__COPY_FAILED,      /* the caller abandoned it: status in row_status */
    PGW__COPY_BOTH,        /* CopyBoth carried: both sides send (copyboth.c) */
    PGW__COPY_BOTH_ENDING, /* CopyBoth: our CopyDone written, the server's to come */
    PGW__COPY_OUT_DONE     /* COPY TO: the server's CopyDone read, its end to come */
};
/* copyboth.c: the server began a CopyBoth that r carries. */
int pgw__copy_both_begin(pgw_session_t *s, pgw__req_t *r);
/* copyboth.c: the server's CopyDone of r's CopyBoth (answered with ours). */
int pgw__copy_both_server_done(pgw_session_t *s, pgw__req_t *r);
/* copyboth.c: write CopyDone to the output (PGW_ENOMEM). */
int pgw__copy_both_write_done(pgw_session_t *s);
/* Take rq's COPY callbacks into r: a PGW_REQ_COPY, or a PGW_REQ_SIMPLE
 * given any (it then carries the COPYs among its statements). Returns 0,
 * or PGW_ENOMEM. */
int pgw__copy_carry(pgw_session_t *s, pgw__req_t *r, const pgw_request_t *rq);
/* Encode a PGW_REQ_COPY (Parse, Bind, Describe portal, Execute, Flush)
 * into b. */
int pgw__enc_copy(pgw_session_t *s, pgw_buf_t *b, pgw__req_t *r, const pgw_request_t *rq);
/* r, just encoded into b, may start a COPY: an extended request gets a
 * Flush, and what is queued after it is held until the server has
 * answered it. Returns 0, the encoder's error or PGW_ENOMEM. */
int pgw__copy_may_start(pgw_session_t *s, pgw_buf_t *b, pgw__req_t *r);
/* 1 for the messages of a COPY (CopyIn/Out/BothResponse, CopyData, CopyDone). */
bool pgw__copy_message(uint8_t type);
/* A simple query's statement ended (CommandComplete or an error), res its
 * result (tag or error set): a COPY in it is over (its on_copy_end fires),
 * the next statement may start another. */
void pgw__copy_statement_ended(pgw_session_t *s, pgw__req_t *r, pgw_result_t *res);
/* A submit whose entries start at first was encoded into b: if it holds a
 * COPY and no COPY holds the output yet, move what follows that COPY's
 * Execute into the held buffer. Returns 0 or PGW_ENOMEM (nothing moved). */
int pgw__copy_split(pgw_session_t *s, pgw_buf_t *b, pgw__req_t *first);
/* The head request r leaves the FIFO: if it holds the output, write what
 * waits behind it. */
void pgw__copy_leaving(pgw_session_t *s, pgw__req_t *r);
/* Backend messages of a COPY for the request r at the head (after Parse,
 * Bind and the portal's description), res the result they go to (a simple
 * query's current one). */
int pgw__copy_dispatch(pgw_session_t *s, pgw__req_t *r, pgw_result_t *res, const pgw_msg_t *m);
/* r's deadline passed: if it is the COPY FROM being pumped, its source is
 * called no more and CopyFail is sent (the server then fails it at once,
 * whatever the source was waiting for). */
void pgw__copy_expired(pgw_session_t *s, pgw__req_t *r);
/* Before Terminate: a COPY FROM in progress gets its CopyFail. */
void pgw__copy_terminating(pgw_session_t *s);
/* Unwritten output the high-water mark counts. */
size_t pgw__out_backlog(const pgw_session_t *s);
/* After output was consumed: fire on_drain if owed. */
void pgw__drain_check(pgw_session_t *s);
/* portal.c */
/* The portal a QUERY / EXECUTE / FETCH / CLOSE_PORTAL / DESCRIBE_PORTAL
 * names ("" unnamed). */
const char *pgw__portal_name(const pgw_request_t *rq);
/* 1 if the QUERY or EXECUTE rq opens a portal (portal or max_rows set). */
bool pgw__opens_portal(const pgw_request_t *rq);
/* max_rows as Execute takes it. */
int32_t pgw__portal_max_rows(const pgw_request_t *rq);
/* Encode a FETCH (Describe portal, Execute) or a CLOSE_PORTAL into b and
 * set what r expects. Returns 0 or an encoder's error. */
int pgw__enc_fetch(pgw_session_t *s, pgw_buf_t *b, pgw__req_t *r, const pgw_request_t *rq);
int pgw__enc_close_portal(pgw_session_t *s, pgw_buf_t *b, pgw__req_t *r, const pgw_request_t *rq);
/* Encode a DESCRIBE_PORTAL (Describe 'P') into b and set what r expects. */
int pgw__enc_describe_portal(pgw_buf_t *b, pgw__req_t *r, const pgw_request_t *rq);
/* deadline.c */
enum pgw__dl_bits {
    PGW__DL_EXPIRED = 1u << 0,  /* completes with PGW_ETIMEDOUT */
    PGW__DL_REPORTED = 1u << 1, /* its callback already fired: the entry only eats replies */
    PGW__DL_HOLDS = 1u << 2     /* the last entry of a submit with a deadline: see deadline.c */
};
/* The timeout request rq gets (0: none), or PGW_ENOTSUP as a negative value
 * when it asks one and the driver takes none. */
int64_t pgw__dl_effective(const pgw_session_t *s, const pgw_request_t *rq);
/* The status an entry completes with (status as dispatched). */
static inline int pgw__dl_status(const pgw__req_t *r, int status)
{
    return (r->dl & PGW__DL_EXPIRED) ? PGW_ETIMEDOUT : status;
}
/* Before a commit of a submit with a deadline (r its last entry, b the
 * buffer it was encoded into): what is queued after it waits. Returns 0
 * or PGW_ENOMEM (no aux block for r). */
int pgw__dl_hold(pgw_session_t *s, pgw__req_t *r, const pgw_buf_t *b);
/* After a commit: tell the driver the deadline of each request of it. */
void pgw__dl_announce(pgw_session_t *s, const pgw__req_t *first);

/* stmt.c */
/* The Bind result format for a column of type oid when the caller asks
 * none: binary unless the server has no binary output for the type
 * (pgw_type_binary_output). Whatever the types layer decodes: a column's
 * format depends only on its type, on every run of every path. */
int16_t pgw__column_format(uint32_t oid);
/* The entry for name (known or pending), or NULL. */
const pgw__stmt_t *pgw__stmt_find(pgw_session_t *s, const char *name);
/* A statement's block, freed once nothing refers to it (stmt.c); and a
 * reference to a described statement's description (NULL when it has none). */
void pgw__stmt_block_free(pgw_session_t *s, pgw__stmt_t *st);
pgw__desc_t *pgw__desc_ref(const pgw__stmt_t *st);
void pgw__desc_unref(pgw_session_t *s, pgw__desc_t *d);
/* A prepare of name was queued: drop what is known and start a pending
 * entry (may_copy: its SQL names COPY). Returns its token, or 0 without
 * memory (the name is then absent: still safe). */
uint64_t pgw__stmt_replaced(pgw_session_t *s, const char *name, bool may_copy);
/* A prepare of name never ran (skipped after an earlier error, or refused):
 * the entry it made (token) goes, so the name is one the session never
 * prepared. */
void pgw__stmt_unprepared(pgw_session_t *s, uint64_t token);
/* The token of name's entry, made pending (not vouched) if there is none
 * (0 without memory). */
uint64_t pgw__stmt_token(pgw_session_t *s, const char *name);
/* Store desc's columns in the entry with token, if it still exists (a reply
 * to a closed or replaced statement is dropped). Without memory the entry
 * stays pending, which is safe. */
void pgw__stmt_store(pgw_session_t *s, uint64_t token, const pgw_result_t *desc);
/* Make *st known from desc's columns, with the parameter types oids[0..noids)
 * (st->name is kept; its block is replaced). Returns 0 or PGW_ENOMEM (st
 * unchanged). */
int pgw__stmt_fill(pgw_session_t *s, pgw__stmt_t *st, const pgw_result_t *desc,
                   const uint32_t *oids, uint16_t noids);
/* The server refused to bind the statement of the entry with token: a
 * vouched entry becomes pending (the session still holds the name: it is
 * prepared again or closed by the caller), another one is removed. */
void pgw__stmt_refused(pgw_session_t *s, uint64_t token);
void pgw__stmt_forget(pgw_session_t *s, const char *name);
/* Every statement may have been replaced (DEALLOCATE, PREPARE, DISCARD
 * run as SQL): every entry becomes pending, with a new token. */
void pgw__stmt_unsure_all(pgw_session_t *s);
/* The words of a statement's SQL that change how the session sends it,
 * each as a whole word in any case (a word inside a literal or comment
 * counts too: an over-approximation that costs only a round trip). */
enum pgw__sql_words {
    /* DEALLOCATE, PREPARE or DISCARD: named statements may be replaced. */
    PGW__SQL_REPLACES = 1u << 0,
    /* COPY or START_REPLICATION: the server may read what follows as COPY
     * data (COPY FROM STDIN, CopyBoth). */
    PGW__SQL_COPY = 1u << 1
};
unsigned pgw__sql_words(const char *sql, size_t len);
/* Whether sql (len bytes) may start a COPY the server reads client data
 * during: COPY or START_REPLICATION as the first word of a statement. A
 * COPY to or from the client and a replication command are statements of
 * their own (functions and DO blocks cannot run them), so only the words
 * that begin statements are read: the first, after white space, and with
 * one false (a simple query's list) each after a ';' (one inside a literal
 * or comment too: an over-approximation). A statement that begins with a
 * comment leaves the answer to pgw__sql_words. */
bool pgw__sql_may_copy(const char *sql, size_t len, bool one);
void pgw__stmt_free_all(pgw_session_t *s);

/* stmt_cache.c */
/* Read the cache settings of cfg. Returns 0 or PGW_EINVAL. */
int pgw__cache_configure(pgw_session_t *s, const pgw_session_config_t *cfg);
/* Whether QUERY rq may use the cache. */
bool pgw__cache_applies(const pgw_session_t *s, const pgw_request_t *rq);
uint64_t pgw__cache_key(const char *sql, size_t len, const pgw_param_t *params, size_t n);
/* The cached statement for key (same SQL and parameter types), made the
 * most recent, or NULL. */
pgw__cached_t *pgw__cache_find(pgw_session_t *s, uint64_t key, const char *sql, size_t len,
                               const pgw_param_t *params, size_t n);
/* A new entry to prepare now, if key was seen before or now is set (else
 * the key is remembered and NULL returned); evicts what the bounds need
 * (their Close is owed). NULL without memory too: the query then runs
 * unnamed, which is always safe. */
pgw__cached_t *pgw__cache_admit(pgw_session_t *s, uint64_t key, const char *sql, size_t len,
                                const pgw_param_t *params, size_t n, bool now);
/* A new entry for the same SQL and parameter types as old (which has been
 * dropped), for a retry; NULL without memory. */
pgw__cached_t *pgw__cache_readmit(pgw_session_t *s, const pgw__cached_t *old);
/* The server described the entry's first execution: bind it by name from
 * now on. */
void pgw__cache_learned(pgw_session_t *s, pgw__cached_t *ce, const pgw_result_t *desc);
/* Take the entry out of the cache (its key stays seen: the next execution
 * prepares again); with close, its Close is owed. */
void pgw__cache_drop(pgw_session_t *s, pgw__cached_t *ce, bool close);
/* A submit that admitted ce failed: nothing of it was sent. */
void pgw__cache_cancel(pgw_session_t *s, pgw__cached_t *ce);
/* Every entry dropped, their Closes owed (SQL that may deallocate). */
void pgw__cache_flush(pgw_session_t *s);
void pgw__cache_unref(pgw_session_t *s, pgw__cached_t *ce);
/* Owed Closes: the next id (returns false when none), one given back. */
bool pgw__cache_next_close(pgw_session_t *s, uint64_t *id);
void pgw__cache_close_owed(pgw_session_t *s, uint64_t id);
/* The statement name of id into out (PGW__CACHE_NAME_MAX bytes). */
void pgw__cache_name(const pgw_session_t *s, uint64_t id, char *out);
void pgw__cache_free_all(pgw_session_t *s);

#endif
