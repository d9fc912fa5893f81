/*
 * The session object: creation and teardown, the zero-copy input path, the
 * output buffer, breaking, and the state accessors.
 *
 * Input: the session reads into reference-counted chunks from its recycler.
 * pgw_session_input_buffer hands out the free tail of the current chunk;
 * commit frames and dispatches every complete message and keeps the partial
 * tail. When the partial frame cannot fit in what is left of the chunk, the
 * next input buffer call moves only that partial message into a chunk big
 * enough for the whole frame (its header tells the size: the buffer grows
 * once, never byte by byte). A chunk that no result references is rewound
 * and reused in place.
 *
 * Re-entrancy: every public entry point that may call back into the
 * application counts its depth; pgw_session_free from inside a callback only
 * marks the session, and the outermost entry point frees it on the way out.
 */
#include "session_internal.h"

#include "auth/auth.h"

#define DEFAULT_READ_CHUNK  (64u * 1024u)
#define DEFAULT_CHUNK_CACHE (16u * 1024u * 1024u)
#define DEFAULT_HIGH_WATER  (8u * 1024u * 1024u)

uint64_t pgw__now(pgw_session_t *s)
{
    return s->cb.now_ns ? s->cb.now_ns(s->ud) : 0;
}

uint64_t pgw__stamp(pgw_session_t *s)
{
    if (s->no_timing) return 0;
    if (s->stamp_ns) return s->stamp_ns;
    uint64_t t = pgw__now(s);
    if (s->in_input) s->stamp_ns = t;
    return t;
}

void pgw__enter(pgw_session_t *s)
{
    s->depth++;
}

static void session_destroy(pgw_session_t *s);

bool pgw__leave(pgw_session_t *s)
{
    if (--s->depth == 0 && s->free_pending && !s->freeing) {
        session_destroy(s);
        return true;
    }
    return false;
}

/* ------------------------------------------------------------- creation */

static char ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Does hay contain needle (lower case), ignoring ASCII case? */
static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && ascii_lower(hay[i]) == needle[i])
            i++;
        if (i == n) return true;
    }
    return false;
}

/* Did the application set the server setting name (lower case) itself, as
 * a startup parameter or through "options" (-c name=...)? */
static bool app_sets(const char *const *params, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        const char *k = params[2 * i];
        if (contains_nocase(k, name) && strlen(k) == strlen(name)) return true;
        if (strcmp(k, "options") == 0 && contains_nocase(params[2 * i + 1], name)) return true;
    }
    return false;
}

static int copy_startup_params(pgw_session_t *s, const pgw_session_config_t *cfg)
{
    if (cfg->nstartup_params > SIZE_MAX / 2 / sizeof(char *)) return PGW_EINVAL;
    size_t n = cfg->nstartup_params * 2;
    for (size_t i = 0; i < n; i++)
        if (!cfg->startup_params[i]) return PGW_EINVAL;
    s->startup.params = pgw__calloc(s->alloc, n ? n : 1, sizeof(char *));
    if (!s->startup.params) return PGW_ENOMEM;
    s->startup.nparams = cfg->nstartup_params;
    for (size_t i = 0; i < n; i++) {
        s->startup.params[i] = pgw__strdup(s->alloc, cfg->startup_params[i]);
        if (!s->startup.params[i]) return PGW_ENOMEM;
    }
    /* The output styles the text decoders parse are set after startup
     * (startup.c) unless the application chose its own. */
    s->startup.own_datestyle = app_sets(cfg->startup_params, cfg->nstartup_params, "datestyle");
    s->startup.own_intervalstyle =
        app_sets(cfg->startup_params, cfg->nstartup_params, "intervalstyle");
    for (size_t i = 0; i < cfg->nstartup_params; i++)
        if (strcmp(s->startup.params[2 * i], "user") == 0)
            s->startup.user = s->startup.params[2 * i + 1];
    return s->startup.user ? 0 : PGW_EINVAL;
}

static int parse_channel_binding(const char *v, uint8_t *mode)
{
    if (!v || strcmp(v, "prefer") == 0)
        *mode = PGW__CB_PREFER;
    else if (strcmp(v, "disable") == 0)
        *mode = PGW__CB_DISABLE;
    else if (strcmp(v, "require") == 0)
        *mode = PGW__CB_REQUIRE;
    else
        return PGW_EINVAL;
    return 0;
}

static int configure(pgw_session_t *s, const pgw_session_config_t *cfg)
{
    int rc = copy_startup_params(s, cfg);
    if (rc < 0) return rc;
    if (cfg->password) {
        s->startup.password = pgw__strdup(s->alloc, cfg->password);
        if (!s->startup.password) return PGW_ENOMEM;
    }
    rc = pgw__session_require_auth(s, cfg->require_auth);
    if (rc == 0) rc = pgw__session_oauth_configure(s, cfg);
    if (rc < 0) return rc;
    rc = parse_channel_binding(cfg->channel_binding, &s->startup.cb_mode);
    if (rc < 0) return rc;
    s->startup.min_protocol = cfg->min_protocol ? cfg->min_protocol : PGW_PROTO_3_0;
    s->startup.max_protocol = cfg->max_protocol ? cfg->max_protocol : PGW_PROTO_3_0;
    if ((s->startup.min_protocol != PGW_PROTO_3_0 && s->startup.min_protocol != PGW_PROTO_3_2) ||
        (s->startup.max_protocol != PGW_PROTO_3_0 && s->startup.max_protocol != PGW_PROTO_3_2) ||
        s->startup.min_protocol > s->startup.max_protocol)
        return PGW_EINVAL;
    s->server.protocol = s->startup.max_protocol;
    s->max_message = cfg->max_message_size ? cfg->max_message_size : PGW_DEFAULT_MAX_MESSAGE;
    s->output.high_water = cfg->output_high_water ? cfg->output_high_water : DEFAULT_HIGH_WATER;
    s->output.on_drain = cfg->on_drain;
    s->fifo.max_pending = cfg->max_pending ? cfg->max_pending : PGW_DEFAULT_MAX_PENDING;
    return pgw__cache_configure(s, cfg);
}

PGW_EXTERN void pgw_session_config_init(pgw_session_config_t *cfg)
{
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
}

PGW_EXTERN int pgw_session_new(pgw_session_t **out, const pgw_session_config_t *cfg)
{
    if (!out || !cfg) return PGW_EINVAL;
    pgw_session_config_t copy;
    pgw__copy_sized(&copy, sizeof copy, cfg);
    cfg = &copy;
    pgw__recycler_t *rec;
    size_t chunk = cfg->read_chunk_size ? cfg->read_chunk_size : DEFAULT_READ_CHUNK;
    if (chunk < 16) chunk = 16;
    size_t cache = cfg->chunk_cache_bytes ? cfg->chunk_cache_bytes : DEFAULT_CHUNK_CACHE;
    int rc = pgw__recycler_new(&rec, cfg->alloc, chunk, cache);
    if (rc < 0) return rc;
    pgw_session_t *s = pgw__calloc(&rec->alloc, 1, sizeof *s);
    if (!s) {
        pgw__recycler_unref(rec);
        return PGW_ENOMEM;
    }
    s->recycler = rec;
    rec->shared = cfg->results_any_thread != 0;
    rec->session = s; /* its results capture its reported settings */
    rec->registry = cfg->registry ? cfg->registry : pgw_type_registry_default();
    s->alloc = &rec->alloc;
    s->cb = cfg->cb;
    s->ud = cfg->ud;
    s->fifo.request_timeout_ms = cfg->request_timeout_ms;
    s->fifo.no_pipelining = cfg->no_pipelining != 0;
    s->no_timing = cfg->no_timing != 0;
    s->state = PGW_SESSION_NEW;
    /* The output buffers use the caller's allocator pointer (not the recycler's
     * copy): pgw_session_take_output hands their storage out, and it must
     * stay freeable after the session is gone. */
    pgw_buf_init(&s->output.buf, cfg->alloc);
    pgw_buf_init(&s->output.held, cfg->alloc);
    pgw_buf_init(&s->output.scratch, s->alloc);
    pgw_buf_init(&s->copy.held, s->alloc);
    pgw_buf_init(&s->fifo.retry, s->alloc);
    s->copy.pump_at = SIZE_MAX;
    rc = configure(s, cfg);
    if (rc < 0) {
        session_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

static void session_destroy(pgw_session_t *s)
{
    s->freeing = true;
    s->depth++;
    if (s->state != PGW_SESSION_BROKEN) s->state = PGW_SESSION_TERMINATED;
    pgw__fail_all(s, PGW_ECANCELED);
    s->depth--;
    s->recycler->session = NULL; /* no result is made after this */
    const pgw_allocator_t *a = s->alloc;
    while (s->fifo.blocks) {
        pgw__req_block_t *b = s->fifo.blocks;
        s->fifo.blocks = b->next;
        pgw__free(a, b);
    }
    s->fifo.free = NULL;
    while (s->fifo.aux_blocks) {
        pgw__aux_block_t *b = s->fifo.aux_blocks;
        s->fifo.aux_blocks = b->next;
        pgw__free(a, b);
    }
    s->fifo.aux_free = NULL;
    if (s->startup.params)
        for (size_t i = 0; i < s->startup.nparams * 2; i++)
            pgw__free(a, s->startup.params[i]);
    pgw__free(a, s->startup.params);
    pgw__free_secret(a, s->startup.password);
    pgw__session_auth_free(s);
    for (size_t i = 0; i < s->server.nparams; i++) {
        pgw__free(a, s->server.params[i].name);
        pgw__free(a, s->server.params[i].value);
    }
    pgw__free(a, s->server.params);
    pgw__idx_free(&s->server.params_idx, a);
    pgw__stmt_free_all(s);
    pgw__cache_free_all(s);
    pgw__free(s->alloc, s->submit.conv);
    pgw__free(a, s->rows.values);
    if (s->input.chunk) pgw__chunk_unref(s->input.chunk);
    pgw__wipe(s->output.buf.data, s->output.buf.len); /* may hold a password message */
    pgw_buf_free(&s->output.buf);
    pgw_buf_free(&s->output.held);
    pgw_buf_free(&s->copy.held);
    pgw_buf_free(&s->fifo.retry);
    pgw__wipe(s->output.scratch.data, s->output.scratch.cap);
    pgw_buf_free(&s->output.scratch);
    pgw__recycler_t *rec = s->recycler;
    pgw__free(a, s);
    pgw__recycler_unref(rec);
}

PGW_EXTERN void pgw_session_free(pgw_session_t *s)
{
    if (!s || s->freeing) return;
    if (s->depth > 0) {
        s->free_pending = true;
        return;
    }
    session_destroy(s);
}

/* ------------------------------------------------------------- breaking */

void pgw__session_break(pgw_session_t *s, int err)
{
    if (s->state == PGW_SESSION_BROKEN) return;
    /* Startup is over once reported: a session may be ready for requests
     * while its style settings (startup.c) still run. */
    bool in_startup = !s->startup.reported;
    s->state = PGW_SESSION_BROKEN;
    s->err = err;
    if (in_startup) pgw__startup_failed(s, err, NULL);
    /* A request's PGW_ESERVER status promises a result with the error:
     * requests failed by a server error that was not theirs see the
     * connection going away instead. */
    pgw__fail_all(s, err == PGW_ESERVER ? PGW_ECONNLOST : err);
    if (s->cb.on_broken && !s->freeing) s->cb.on_broken(s, err, s->ud);
}

PGW_EXTERN int pgw_session_auth_ok(const pgw_session_t *s)
{
    return s && s->startup.auth_done;
}

PGW_EXTERN void pgw_session_fail(pgw_session_t *s, int err)
{
    if (!s || s->state == PGW_SESSION_BROKEN || s->freeing) return;
    if (err >= 0) err = PGW_ECONNLOST;
    pgw__enter(s);
    pgw__session_break(s, err);
    pgw__leave(s);
}

/* ---------------------------------------------------------------- input */

/* Make room after the partial frame at in_pos: rewind, compact, or move the
 * partial bytes into a chunk big enough for the whole frame. */
static int ensure_input_room(pgw_session_t *s)
{
    pgw__chunk_t *c = s->input.chunk;
    size_t partial = s->input.fill - s->input.pos;
    size_t need = partial ? s->input.need : 1;
    if (need < partial + 1) need = partial + 1;
    if (c && partial == 0 && pgw__chunk_sole(c)) {
        s->input.pos = s->input.fill = 0;
        /* An oversized chunk served one big message: give it back. */
        if (c->cap > s->recycler->chunk_size) {
            pgw__chunk_unref(c);
            s->input.chunk = c = NULL;
        }
    }
    if (c && c->cap - s->input.pos >= need && s->input.fill < c->cap) return 0;
    if (c && c->cap >= need && pgw__chunk_sole(c)) {
        memmove(c->data, c->data + s->input.pos, partial);
        s->input.pos = 0;
        s->input.fill = partial;
        return 0;
    }
    pgw__chunk_t *nc = pgw__chunk_get(s->recycler, need);
    if (!nc) return PGW_ENOMEM;
    if (partial) memcpy(nc->data, c->data + s->input.pos, partial);
    if (c) pgw__chunk_unref(c);
    s->input.chunk = nc;
    s->input.pos = 0;
    s->input.fill = partial;
    return 0;
}

PGW_EXTERN int pgw_session_input_buffer(pgw_session_t *s, uint8_t **p, size_t *len)
{
    if (!s || !p || !len) return PGW_EINVAL;
    if (s->depth > 0) return PGW_ERECURSIVE;
    int rc = ensure_input_room(s);
    if (rc < 0) return rc;
    *p = s->input.chunk->data + s->input.fill;
    *len = s->input.chunk->cap - s->input.fill;
    return 0;
}

/* pgw_session_rx_counts: one more message of type t. */
static inline void count_message(pgw_rx_counts_t *rx, uint8_t t)
{
    rx->messages++;
    switch (t) {
    case PGW_B_COMMAND_COMPLETE:
    case PGW_B_EMPTY_QUERY:
    case PGW_B_ERROR:
        rx->ends++;
        rx->end_at = rx->messages;
        rx->rows_at_end = rx->rows;
        break;
    case PGW_B_NOTICE:
    case PGW_B_NOTIFICATION:
    case PGW_B_PARAM_STATUS:
        break;
    case PGW_B_DATA_ROW:
        rx->rows++;
        /* fall through */
    default:
        rx->other_at = rx->messages;
        break;
    }
}

/* Frame, parse and dispatch every complete message in the chunk, until a
 * pause: the rest then stays unparsed where it is. */
static int process_messages(pgw_session_t *s)
{
    while (!pgw__halted(s) && !s->input.paused) {
        const uint8_t *at = s->input.chunk->data + s->input.pos;
        size_t avail = s->input.fill - s->input.pos;
        pgw_frame_t f;
        int rc = pgw_frame_parse(at, avail, s->max_message, &f);
        if (rc == PGW_EAGAIN) {
            s->input.need = avail ? f.size : 0;
            return 0;
        }
        pgw_msg_t m;
        if (rc == 0) rc = pgw_msg_parse(&f, &m);
        if (rc < 0) {
            pgw__session_break(s, rc);
            return rc;
        }
        count_message(&s->rx, f.type);
        if (s->cb.on_trace && !s->trace_quiet_in) s->cb.on_trace(s, 'B', at, f.size, s->ud);
        /* Consume before dispatching: callbacks see a consistent session. The
         * bytes stay in place: input cannot be given while dispatching. */
        s->input.pos += f.size;
        s->input.need = 0;
        if (pgw__halted(s)) break;
        rc = pgw__dispatch(s, &m);
        if (rc < 0) {
            pgw__session_break(s, rc);
            return rc;
        }
    }
    return s->state == PGW_SESSION_BROKEN ? s->err : 0;
}

/* process_messages, with one reading of the timing clock for all the
 * requests it stamps (pgw__stamp). */
static int process_input(pgw_session_t *s)
{
    s->in_input = true;
    s->stamp_ns = 0;
    int rc = process_messages(s);
    s->in_input = false;
    s->stamp_ns = 0;
    return rc;
}

PGW_EXTERN int pgw_session_input_commit(pgw_session_t *s, size_t n)
{
    if (!s) return PGW_EINVAL;
    if (s->depth > 0) return PGW_ERECURSIVE;
    if (s->state == PGW_SESSION_BROKEN) return s->err;
    if (!s->input.chunk || n > s->input.chunk->cap - s->input.fill) return PGW_EINVAL;
    s->input.fill += n;
    if (s->input.paused) return 0; /* kept for pgw_session_resume_input */
    pgw__enter(s);
    int rc = process_input(s);
    if (pgw__leave(s)) return PGW_ECANCELED;
    pgw__drain_check(s); /* replies may have brought the pending count down */
    return rc;
}

PGW_EXTERN int pgw_session_pause_input(pgw_session_t *s)
{
    if (!s) return PGW_EINVAL;
    s->input.paused = true;
    return 0;
}

PGW_EXTERN int pgw_session_input_paused(const pgw_session_t *s)
{
    return s && s->input.paused;
}

PGW_EXTERN int pgw_session_in_callback(const pgw_session_t *s)
{
    return s && s->depth > 0;
}

PGW_EXTERN int pgw_session_resume_input(pgw_session_t *s)
{
    if (!s) return PGW_EINVAL;
    s->input.paused = false;
    if (s->depth > 0 || !s->input.chunk) return 0; /* the input call in progress goes on */
    if (s->state == PGW_SESSION_BROKEN) return s->err;
    pgw__enter(s);
    int rc = process_input(s);
    if (pgw__leave(s)) return PGW_ECANCELED;
    pgw__drain_check(s); /* replies may have brought the pending count down */
    return rc;
}

PGW_EXTERN int pgw_session_recv(pgw_session_t *s, const uint8_t *data, size_t n)
{
    if (!s || (n && !data)) return PGW_EINVAL;
    while (n > 0) {
        uint8_t *p;
        size_t len;
        int rc = pgw_session_input_buffer(s, &p, &len);
        if (rc < 0) {
            if (rc == PGW_ENOMEM && s->depth == 0) {
                pgw__enter(s);
                pgw__session_break(s, rc);
                if (pgw__leave(s)) return PGW_ECANCELED;
            }
            return rc;
        }
        if (len > n) len = n;
        memcpy(p, data, len);
        data += len;
        n -= len;
        rc = pgw_session_input_commit(s, len);
        if (rc < 0) return rc;
    }
    return 0;
}

/* --------------------------------------------------------------- output */

pgw_buf_t *pgw__req_buf(pgw_session_t *s)
{
    if (s->copy.tx) return &s->copy.held; /* behind a COPY: see copy.c */
    return s->state == PGW_SESSION_READY || s->state == PGW_SESSION_TERMINATED ? &s->output.buf
                                                                               : &s->output.held;
}

void pgw__trace_out(pgw_session_t *s, const pgw_buf_t *b, size_t from, bool typed)
{
    if (!s->cb.on_trace || s->trace_quiet_out) return;
    size_t pos = from;
    while (pos < b->len) {
        size_t hdr = typed ? 1 : 0;
        if (b->len - pos < hdr + 4) return;
        size_t size = hdr + pgw__get32(b->data + pos + hdr);
        if (size > b->len - pos) return;
        s->cb.on_trace(s, 'F', b->data + pos, size, s->ud);
        pos += size;
    }
}

void pgw__out_appended(pgw_session_t *s, pgw_buf_t *b, size_t from)
{
    if (b != &s->output.buf) return;
    if (from == s->output.off && s->output.buf.len > from && s->cb.on_want_write)
        s->cb.on_want_write(s, s->ud);
}

PGW_EXTERN const uint8_t *pgw_session_pending_output(pgw_session_t *s, size_t *len)
{
    if (!s) {
        if (len) *len = 0;
        return NULL;
    }
    if (!len) return NULL;
    /* A COPY source is appending a message: only what precedes it. */
    size_t end = s->copy.pump_at != SIZE_MAX ? s->copy.pump_at : s->output.buf.len;
    *len = end - s->output.off;
    return *len ? s->output.buf.data + s->output.off : NULL;
}

/* The read chunks' policy for output buffers: an empty buffer whose capacity
 * passed the cache bound (chunk_cache_bytes) after one large request gives
 * its memory back instead of pinning it for the session's life. */
void pgw__out_trim(pgw_session_t *s, pgw_buf_t *b)
{
    if (b->len == 0 && b->cap > s->recycler->big_budget) pgw_buf_free(b);
}

PGW_EXTERN void pgw_session_consumed_output(pgw_session_t *s, size_t n)
{
    if (!s) return;
    size_t end = s->copy.pump_at != SIZE_MAX ? s->copy.pump_at : s->output.buf.len;
    size_t left = end - s->output.off;
    if (n > left) n = left;
    s->output.off += n;
    if (s->output.off == s->output.buf.len) {
        s->output.off = s->output.buf.len = 0;
        pgw__out_trim(s, &s->output.buf);
    }
    pgw__drain_check(s);
}

PGW_EXTERN void pgw_session_take_output(pgw_session_t *s, pgw_buf_t *out)
{
    if (!s || !out || out->len != 0) return;
    if (s->copy.pump_at != SIZE_MAX) return; /* a COPY source is appending to it */
    if (s->output.off) {
        memmove(s->output.buf.data, s->output.buf.data + s->output.off,
                s->output.buf.len - s->output.off);
        s->output.buf.len -= s->output.off;
        s->output.off = 0;
    }
    /* Both buffers carry their allocator (the caller's config pointer, see
     * pgw_session_new), so each keeps freeing with the one that made it. */
    pgw_buf_t mine = s->output.buf;
    pgw__out_trim(s, out);
    s->output.buf = *out;
    s->output.buf.max = mine.max;
    out->data = mine.data;
    out->len = mine.len;
    out->cap = mine.cap;
    out->alloc = mine.alloc;
    pgw__drain_check(s);
}

/* ---------------------------------------------------------------- state */

PGW_EXTERN pgw_session_state_t pgw_session_state(const pgw_session_t *s)
{
    return s ? s->state : PGW_SESSION_BROKEN;
}

PGW_EXTERN char pgw_session_txn_status(const pgw_session_t *s)
{
    return s ? s->server.txn_status : 0;
}

PGW_EXTERN const char *pgw_session_parameter(const pgw_session_t *s, const char *name)
{
    if (!s || !name) return NULL;
    const pgw__param_entry_t *e = pgw__param_find(s, name, strlen(name));
    return e ? e->value : NULL;
}

PGW_EXTERN uint32_t pgw_session_protocol(const pgw_session_t *s)
{
    return s ? s->server.protocol : 0;
}

PGW_EXTERN int pgw_session_backend_key(const pgw_session_t *s, int32_t *pid, const uint8_t **key,
                                       size_t *key_len)
{
    if (!s) return PGW_EINVAL;
    if (!s->server.have_backend_key) return PGW_ENOTFOUND;
    if (pid) *pid = s->server.backend_pid;
    if (key) *key = s->server.backend_key;
    if (key_len) *key_len = s->server.backend_key_len;
    return 0;
}

PGW_EXTERN int32_t pgw_session_backend_pid(const pgw_session_t *s)
{
    return s && s->server.have_backend_key ? s->server.backend_pid : 0;
}

PGW_EXTERN size_t pgw_session_pending(const pgw_session_t *s)
{
    return s ? s->fifo.npending : 0;
}

PGW_EXTERN void pgw_session_trace_sent(pgw_session_t *s, int on)
{
    if (s) s->trace_quiet_out = !on;
}

PGW_EXTERN void pgw_session_trace_received(pgw_session_t *s, int on)
{
    if (s) s->trace_quiet_in = !on;
}

PGW_EXTERN void pgw_session_rx_counts(const pgw_session_t *s, pgw_rx_counts_t *out)
{
    if (!out) return;
    if (s)
        *out = s->rx;
    else
        memset(out, 0, sizeof *out);
}

PGW_EXTERN int pgw_session_group_open(const pgw_session_t *s)
{
    return s && s->group.open;
}

PGW_EXTERN pgw_type_registry_t *pgw_session_registry(const pgw_session_t *s)
{
    return s ? s->recycler->registry : NULL;
}

PGW_EXTERN int pgw_session_error(const pgw_session_t *s)
{
    if (!s) return PGW_EINVAL;
    return s->state == PGW_SESSION_BROKEN ? s->err : 0;
}

PGW_EXTERN const char *pgw_session_auth_method(const pgw_session_t *s)
{
    return s ? s->startup.auth_method : NULL;
}

PGW_EXTERN void *pgw_session_userdata(const pgw_session_t *s)
{
    return s ? s->ud : NULL;
}
