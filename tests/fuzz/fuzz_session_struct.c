/*
 * Structure-aware fuzz target for the session: the input is a script of
 * records, and a custom mutator (LLVMFuzzerCustomMutator) edits it as
 * records, so most inputs are well-framed backend message sequences with
 * mutated fields rather than framing errors, and fuzzing reaches the deep
 * states: portals and open groups, COPY in both directions, the statement
 * cache's prepare, hit, eviction and retry after 26000 / 0A000, the 42883
 * rebind in text, deadlines, paused input.
 *
 * A record is a type byte, a big-endian u16 length and that many bytes:
 *   a backend message type ('1', 'D', 'Z', ...): the message with that
 *     body, framed by the harness (its length always right) and appended
 *     to the bytes waiting for the session;
 *   ACT_RAW: bytes appended as they are (framing errors stay reachable);
 *   ACT_SUBMIT: submit request kind body[0] (table reqs below), body[1]
 *     its variant bits;
 *   ACT_DELIVER: hand the waiting bytes to the session now (its input
 *     split there);
 *   ACT_OUTPUT: take the output and pump a COPY FROM;
 *   ACT_EXPIRE: expire the oldest pending request (+ body[0] % 4), with
 *     PGW_EXPIRE_NOW when body[1] is odd;
 *   ACT_PAUSE / ACT_RESUME: pause / resume the input;
 *   ACT_FAIL: the transport failed (pgw_session_fail);
 *   ACT_TERMINATE: queue Terminate.
 * The session starts with a scripted trust startup unless the first record
 * is an 'R'; an input without ACT_SUBMIT gets a default set of requests.
 *
 * Whatever happens, every accepted request's callback fires exactly once
 * by the time the session is freed, and every row and value handed out is
 * readable to its last byte.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/session.h"

#ifdef PGW_LIBFUZZER
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                                 uint8_t *out, size_t max_out, unsigned int seed);
#endif
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
    ACT_SUBMIT = 0x01,
    ACT_DELIVER = 0x02,
    ACT_OUTPUT = 0x03,
    ACT_EXPIRE = 0x04,
    ACT_PAUSE = 0x05,
    ACT_RESUME = 0x06,
    ACT_FAIL = 0x07,
    ACT_TERMINATE = 0x08,
    ACT_RAW = 0x0F
};

/* ------------------------------------------------------------ the harness */

#define MAX_REQS 96

static pgw_session_t *g_sess;
static int g_calls[MAX_REQS], g_accepted[MAX_REQS], g_nreqs;
static int g_copy_rows;

static void on_done(int status, pgw_result_t *res, void *ud);

static void touch_value(const uint8_t *p, int32_t len)
{
    if (len > 0) {
        volatile uint8_t x = p[0];
        x = p[len - 1];
        (void)x;
    }
}

static int on_row(const pgw_row_t *row, void *ud)
{
    for (uint16_t i = 0; i < row->ncols; i++)
        touch_value(row->values[i].p, row->values[i].len);
    return ((uintptr_t)ud & 0x100) && row->index == 1 ? PGW_ROW_PAUSE : 0;
}

static int copy_source(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room, (void)ud;
    if (g_copy_rows-- <= 0) return PGW_COPY_END;
    return pgw_buf_append(out, "1\t2\n", 4) == 0 ? PGW_COPY_MORE : PGW_ENOMEM;
}

static int copy_data(const uint8_t *data, size_t len, void *ud)
{
    (void)ud;
    if (len) touch_value(data, (int32_t)(len > INT32_MAX ? INT32_MAX : len));
    return 0;
}

static void on_deadline(pgw_session_t *s, uint64_t ticket, uint32_t ms, void *ud)
{
    (void)s, (void)ticket, (void)ms, (void)ud;
}

/* The id of the next request, or -1 when the table is full. */
static int next_id(void)
{
    return g_nreqs < MAX_REQS ? g_nreqs++ : -1;
}

#define UD(id, variant) ((void *)(uintptr_t)((unsigned)(id) | ((unsigned)(variant) << 8)))

static void submit_one(pgw_request_t *r, int id)
{
    g_accepted[id] = pgw_session_submit(g_sess, r) == 0;
}

/* Submit request kind k with variant bits v. */
static void submit_kind(unsigned k, unsigned v)
{
    int id = next_id();
    if (id < 0) return;
    static pgw_param_t p8, p4, pt;
    p8 = pgw_int8(42);
    p4 = pgw_int4(7);
    pt = pgw_text("x");
    void *ud = UD(id, v);
    pgw_request_t r;
    switch (k % 22) {
    case 0:
        r = PGW_QUERY("SELECT $1::int8", &p8, 1, on_done, ud);
        break;
    case 1:
        r = PGW_QUERY("SELECT $1::int4", &p4, 1, on_done, ud);
        r.cache = PGW_CACHE_NOW;
        break;
    case 2:
        r = PGW_QUERY("SELECT $1::int8, 'a'", &p8, 1, on_done, ud);
        r.flags = PGW_Q_TEXT;
        break;
    case 3:
        r = PGW_QUERY("SELECT g FROM t", NULL, 0, on_done, ud);
        r.on_row = on_row;
        break;
    case 4:
        r = PGW_SIMPLE("SELECT 1; SELECT 2", on_done, ud);
        break;
    case 5:
        r = PGW_SIMPLE("SELECT g FROM t", on_done, ud);
        r.on_row = on_row;
        break;
    case 6:
        r = PGW_PREPARE("s1", "SELECT $1", NULL, 0, on_done, ud);
        break;
    case 7:
        r = PGW_EXECUTE("s1", &p4, 1, on_done, ud);
        break;
    case 8:
        r = PGW_DESCRIBE("s1", on_done, ud);
        break;
    case 9:
        r = PGW_CLOSE("s1", on_done, ud);
        break;
    case 10:
        r = PGW_SYNC(on_done, ud);
        break;
    case 11:
        g_copy_rows = 3;
        r = PGW_COPY_IN_REQ("COPY t FROM STDIN", copy_source, on_done, ud);
        break;
    case 12:
        r = PGW_COPY_OUT_REQ("COPY t TO STDOUT", copy_data, on_done, ud);
        break;
    case 13:
        r = PGW_QUERY("SELECT g FROM t", NULL, 0, on_done, ud);
        r.portal = "c";
        r.max_rows = 2;
        break;
    case 14:
        r = PGW_FETCH("c", 2, on_done, ud);
        break;
    case 15:
        r = PGW_CLOSE_PORTAL("c", on_done, ud);
        break;
    case 16:
    case 17: {
        /* A batch: a query, an execution, and a query or a Flush. */
        int a = next_id(), b = next_id();
        if (a < 0 || b < 0) return;
        pgw_request_t batch[3] = {PGW_QUERY("SELECT $1::int8", &p8, 1, on_done, UD(a, v)),
                                  PGW_EXECUTE("s1", &p4, 1, on_done, UD(b, v)),
                                  k % 22 == 16 ? PGW_QUERY("SELECT 1/0", NULL, 0, on_done, ud)
                                               : PGW_FLUSH(on_done, ud)};
        if (v & 1) batch[0].flags = PGW_Q_SYNC;
        int done = next_id();
        if (done < 0) return;
        int ok = pgw_session_submit_batch(g_sess, batch, 3, 0, on_done, UD(done, 0)) == 0;
        g_accepted[a] = g_accepted[b] = g_accepted[id] = g_accepted[done] = ok;
        return;
    }
    case 18:
        r = PGW_SIMPLE("DISCARD ALL", on_done, ud);
        break;
    case 19:
        r = PGW_QUERY("SELECT $1::int8", &p8, 1, on_done, ud);
        r.timeout_ms = 100;
        break;
    case 20:
        r = PGW_QUERY("SELECT $1::text", &pt, 1, on_done, ud);
        break;
    default:
        r = PGW_QUERY("SELECT $1::int4", &p4, 1, on_done, ud);
        r.cache = PGW_CACHE_SKIP;
        r.flags = PGW_Q_SYNC;
        break;
    }
    submit_one(&r, id);
}

static void touch_result(pgw_result_t *res)
{
    for (pgw_result_t *r = res; r; r = pgw_result_next(r)) {
        size_t nr = pgw_result_nrows(r), nc = pgw_result_ncols(r);
        for (size_t i = 0; i < nr && i < 4; i++)
            for (size_t j = 0; j < nc && j < 4; j++) {
                pgw_str_t t;
                int64_t v;
                if (pgw_result_text(r, i, j, &t) == 0 && t.len)
                    touch_value((const uint8_t *)t.p, 1);
                (void)pgw_result_int8(r, i, j, &v);
            }
        (void)pgw_result_command_tag(r);
        (void)pgw_result_suspended(r);
        const pgw_error_t *e = pgw_result_error(r);
        if (e && e->message) (void)strlen(e->message);
    }
}

static void on_done(int status, pgw_result_t *res, void *ud)
{
    (void)status;
    unsigned id = (unsigned)(uintptr_t)ud & 0xff, v = (unsigned)(uintptr_t)ud >> 8;
    g_calls[id]++;
    if (res) {
        touch_result(res);
        pgw_result_free(res);
    }
    /* A cached query submitted again from its own completion, as a caller
     * retrying would: the cache's hit, refusal and retry paths. */
    if (v & 2) submit_kind(1, v & ~2u);
}

static const uint8_t trust_startup[] = {
    'R', 0, 0, 0, 8,  0,  0, 0, 0,             /* AuthenticationOk */
    'K', 0, 0, 0, 12, 0,  0, 0, 1, 1, 2, 3, 4, /* BackendKeyData */
    'Z', 0, 0, 0, 5,  'I'                      /* ReadyForQuery */
};

/* The bytes waiting to be handed to the session. */
static uint8_t g_wait[1 << 16];
static size_t g_wait_len;

static void wait_append(const uint8_t *p, size_t n)
{
    if (n > sizeof g_wait - g_wait_len) n = sizeof g_wait - g_wait_len;
    memcpy(g_wait + g_wait_len, p, n);
    g_wait_len += n;
}

static void deliver(void)
{
    if (g_wait_len) pgw_session_recv(g_sess, g_wait, g_wait_len);
    g_wait_len = 0;
}

static void take_output(void)
{
    size_t n;
    pgw_session_pending_output(g_sess, &n);
    pgw_session_consumed_output(g_sess, n);
    (void)pgw_session_copy_pump(g_sess);
}

/* Walk the records of data: fn(type, body, len) for each complete one. */
typedef void (*record_fn)(uint8_t type, const uint8_t *body, size_t len, void *ud);

static size_t walk_records(const uint8_t *data, size_t size, record_fn fn, void *ud)
{
    size_t off = 0, n = 0;
    while (size - off >= 3) {
        size_t len = (size_t)data[off + 1] << 8 | data[off + 2];
        if (len > size - off - 3) break;
        if (fn) fn(data[off], data + off + 3, len, ud);
        off += 3 + len;
        n++;
    }
    return n;
}

static void count_submits(uint8_t type, const uint8_t *body, size_t len, void *ud)
{
    (void)body, (void)len;
    if (type == ACT_SUBMIT) ++*(int *)ud;
}

static void play(uint8_t type, const uint8_t *body, size_t len, void *ud)
{
    (void)ud;
    uint8_t b0 = len > 0 ? body[0] : 0, b1 = len > 1 ? body[1] : 0;
    switch (type) {
    case ACT_SUBMIT:
        submit_kind(b0, b1);
        return;
    case ACT_DELIVER:
        deliver();
        return;
    case ACT_OUTPUT:
        take_output();
        return;
    case ACT_EXPIRE:
        (void)pgw_session_expire(g_sess, pgw_session_oldest_ticket(g_sess) + b0 % 4,
                                 b1 & 1 ? PGW_EXPIRE_NOW : 0);
        return;
    case ACT_PAUSE:
        (void)pgw_session_pause_input(g_sess);
        return;
    case ACT_RESUME:
        (void)pgw_session_resume_input(g_sess);
        return;
    case ACT_FAIL:
        pgw_session_fail(g_sess, PGW_ECONNLOST);
        return;
    case ACT_TERMINATE:
        (void)pgw_session_terminate(g_sess);
        return;
    case ACT_RAW:
        wait_append(body, len);
        return;
    default:
        if (type < 0x20) return; /* unused action codes */
        uint8_t hdr[5] = {type, (uint8_t)((len + 4) >> 24), (uint8_t)((len + 4) >> 16),
                          (uint8_t)((len + 4) >> 8), (uint8_t)(len + 4)};
        wait_append(hdr, 5);
        wait_append(body, len);
    }
}

static void first_record(uint8_t type, const uint8_t *body, size_t len, void *ud)
{
    (void)body, (void)len;
    int *first = ud;
    if (*first == 0) *first = type;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *params[] = {"user", "fuzz"};
    pgw_session_config_t cfg;
    pgw_session_config_init(&cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = 1;
    cfg.password = "pw";
    cfg.read_chunk_size = 64;
    cfg.max_message_size = 1u << 16;
    cfg.stmt_cache_size = 2; /* evictions within a short input */
    cfg.cb.on_deadline = on_deadline;
    if (pgw_session_new(&g_sess, &cfg) != 0) return 0;
    memset(g_calls, 0, sizeof g_calls);
    memset(g_accepted, 0, sizeof g_accepted);
    g_nreqs = 0;
    g_wait_len = 0;
    pgw_session_start(g_sess);
    int first = 0, submits = 0;
    walk_records(data, size, first_record, &first);
    if (first != 'R') pgw_session_recv(g_sess, trust_startup, sizeof trust_startup);
    walk_records(data, size, count_submits, &submits);
    if (submits == 0) {
        static const uint8_t defaults[] = {0, 1, 4, 6, 7, 11, 13, 14, 15, 1, 3};
        for (size_t i = 0; i < sizeof defaults; i++)
            submit_kind(defaults[i], i == 1 ? 2 : 0);
    }
    walk_records(data, size, play, NULL);
    deliver();
    take_output();
    (void)pgw_session_resume_input(g_sess);
    pgw_session_free(g_sess);
    for (int i = 0; i < g_nreqs; i++)
        if (g_calls[i] != (g_accepted[i] ? 1 : 0)) abort();
    return 0;
}

/* ------------------------------------------------------------ the mutator */

/* Only with libFuzzer (PGW_LIBFUZZER): the replay driver of ordinary builds
 * runs the inputs alone. */
#ifdef PGW_LIBFUZZER

typedef struct rng {
    uint64_t s;
} rng_t;

static uint32_t rnd(rng_t *r, uint32_t n)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return n ? (uint32_t)(r->s % n) : 0;
}

typedef struct out {
    uint8_t *p;
    size_t len, cap;
    int full;
} out_t;

static void put(out_t *o, const void *p, size_t n)
{
    if (o->full || n > o->cap - o->len) {
        o->full = 1;
        return;
    }
    memcpy(o->p + o->len, p, n);
    o->len += n;
}
static void put_u8(out_t *o, uint8_t v)
{
    put(o, &v, 1);
}
static void put_u16(out_t *o, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    put(o, b, 2);
}
static void put_i32(out_t *o, int32_t v)
{
    uint32_t u = (uint32_t)v;
    uint8_t b[4] = {(uint8_t)(u >> 24), (uint8_t)(u >> 16), (uint8_t)(u >> 8), (uint8_t)u};
    put(o, b, 4);
}
static void put_str(out_t *o, const char *s)
{
    put(o, s, strlen(s) + 1);
}

/* A record: its header, then the body written by the caller, then
 * end_record fixes the length. */
static size_t begin_record(out_t *o, uint8_t type)
{
    put_u8(o, type);
    size_t at = o->len;
    put_u16(o, 0);
    return at;
}
static void end_record(out_t *o, size_t at)
{
    if (o->full) return;
    size_t n = o->len - at - 2;
    o->p[at] = (uint8_t)(n >> 8);
    o->p[at + 1] = (uint8_t)n;
}

static const uint32_t interesting_oids[] = {20,   23,  25, 16,   17,   1700,
                                            1184, 705, 0,  3802, 1007, 2249};
static const char *const sqlstates[] = {"26000", "0A000", "42883", "57014", "42P05", "08P01",
                                        "25P02", "22P02", "42P01", "40001", "57P01", "XX000"};
static const char *const severities[] = {"ERROR", "FATAL", "PANIC", "WARNING", "NOTICE"};
static const char *const tags[] = {"SELECT 1",       "INSERT 0 1", "COPY 3",      "BEGIN",
                                   "COMMIT",         "ROLLBACK",   "DISCARD ALL", "FETCH 2",
                                   "DEALLOCATE ALL", "",           "SELECT 0",    "UPDATE 2"};
static const char *const param_names[] = {"client_encoding",
                                          "server_version",
                                          "TimeZone",
                                          "DateStyle",
                                          "IntervalStyle",
                                          "integer_datetimes",
                                          "standard_conforming_strings"};
static const char *const param_values[] = {
    "UTF8", "15.4",     "UTC",    "ISO, MDY", "postgres",
    "on",   "SQL, DMY", "LATIN1", "off",      "America/Chicago"};
#define PICK(r, a) (a)[rnd(r, sizeof(a) / sizeof((a)[0]))]

static void msg_row_desc(out_t *o, rng_t *r, int ncols, uint32_t oid, int16_t fmt)
{
    size_t at = begin_record(o, 'T');
    put_u16(o, (uint16_t)ncols);
    for (int i = 0; i < ncols; i++) {
        put_str(o, i ? "b" : "a");
        put_i32(o, 0);
        put_u16(o, 0);
        put_i32(o, (int32_t)(oid ? oid : PICK(r, interesting_oids)));
        put_u16(o, (uint16_t)(oid == 20 ? 8 : 0xffff));
        put_i32(o, -1);
        put_u16(o, (uint16_t)fmt);
    }
    end_record(o, at);
}

static void msg_data_row(out_t *o, rng_t *r, int ncols)
{
    size_t at = begin_record(o, 'D');
    put_u16(o, (uint16_t)ncols);
    for (int i = 0; i < ncols; i++) {
        switch (rnd(r, 4)) {
        case 0:
            put_i32(o, -1);
            break;
        case 1:
            put_i32(o, 4);
            put_i32(o, (int32_t)rnd(r, 1000));
            break;
        case 2:
            put_i32(o, 2);
            put(o, "42", 2);
            break;
        default:
            put_i32(o, 8);
            put_i32(o, 0);
            put_i32(o, 42);
        }
    }
    end_record(o, at);
}

static void msg_empty(out_t *o, uint8_t type)
{
    end_record(o, begin_record(o, type));
}

static void msg_ready(out_t *o, rng_t *r)
{
    size_t at = begin_record(o, 'Z');
    static const char st[] = "IIITEX";
    put_u8(o, (uint8_t)st[rnd(r, 6)]);
    end_record(o, at);
}

static void msg_complete(out_t *o, rng_t *r)
{
    size_t at = begin_record(o, 'C');
    put_str(o, PICK(r, tags));
    end_record(o, at);
}

static void msg_error(out_t *o, rng_t *r, uint8_t type)
{
    size_t at = begin_record(o, type);
    const char *sev = type == 'N' ? "NOTICE" : rnd(r, 4) ? "ERROR" : PICK(r, severities);
    put_u8(o, 'S');
    put_str(o, sev);
    put_u8(o, 'V');
    put_str(o, sev);
    put_u8(o, 'C');
    put_str(o, PICK(r, sqlstates));
    put_u8(o, 'M');
    put_str(o, "fuzz");
    if (rnd(r, 2)) {
        put_u8(o, 'P');
        put_str(o, "3");
    }
    if (rnd(r, 2)) {
        put_u8(o, 'H');
        put_str(o, "hint");
    }
    put_u8(o, 0);
    end_record(o, at);
}

static void msg_copy_response(out_t *o, rng_t *r, uint8_t type)
{
    size_t at = begin_record(o, type);
    int fmt = (int)rnd(r, 2), n = (int)rnd(r, 3);
    put_u8(o, (uint8_t)fmt);
    put_u16(o, (uint16_t)n);
    for (int i = 0; i < n; i++)
        put_u16(o, (uint16_t)fmt);
    end_record(o, at);
}

static void msg_copy_data(out_t *o, rng_t *r)
{
    size_t at = begin_record(o, 'd');
    put(o, "1\t2\n", rnd(r, 5));
    end_record(o, at);
}

static void msg_param_desc(out_t *o, rng_t *r)
{
    size_t at = begin_record(o, 't');
    int n = (int)rnd(r, 3);
    put_u16(o, (uint16_t)n);
    for (int i = 0; i < n; i++)
        put_i32(o, (int32_t)PICK(r, interesting_oids));
    end_record(o, at);
}

static void msg_param_status(out_t *o, rng_t *r)
{
    size_t at = begin_record(o, 'S');
    put_str(o, PICK(r, param_names));
    put_str(o, PICK(r, param_values));
    end_record(o, at);
}

static void msg_notification(out_t *o, rng_t *r)
{
    size_t at = begin_record(o, 'A');
    put_i32(o, (int32_t)rnd(r, 100));
    put_str(o, "chan");
    put_str(o, rnd(r, 2) ? "payload" : "");
    end_record(o, at);
}

static void action(out_t *o, uint8_t type, uint8_t b0, uint8_t b1)
{
    size_t at = begin_record(o, type);
    put_u8(o, b0);
    put_u8(o, b1);
    end_record(o, at);
}

/* One random message, with fields drawn from what the session reacts to. */
static void gen_message(out_t *o, rng_t *r)
{
    switch (rnd(r, 18)) {
    case 0:
        msg_empty(o, '1');
        break;
    case 1:
        msg_empty(o, '2');
        break;
    case 2:
        msg_empty(o, (uint8_t) "3nsI"[rnd(r, 4)]);
        break;
    case 3:
        msg_row_desc(o, r, (int)rnd(r, 3), 0, (int16_t)rnd(r, 2));
        break;
    case 4:
        msg_data_row(o, r, (int)rnd(r, 3));
        break;
    case 5:
        msg_complete(o, r);
        break;
    case 6:
        msg_ready(o, r);
        break;
    case 7:
        msg_error(o, r, 'E');
        break;
    case 8:
        msg_error(o, r, 'N');
        break;
    case 9:
        msg_copy_response(o, r, (uint8_t) "GHW"[rnd(r, 3)]);
        break;
    case 10:
        msg_copy_data(o, r);
        break;
    case 11:
        msg_empty(o, 'c');
        break;
    case 12:
        msg_param_desc(o, r);
        break;
    case 13:
        msg_param_status(o, r);
        break;
    case 14:
        msg_notification(o, r);
        break;
    case 15:
        action(o, ACT_SUBMIT, (uint8_t)rnd(r, 22), (uint8_t)rnd(r, 4));
        break;
    case 16:
        action(o, (uint8_t)(ACT_DELIVER + rnd(r, 7)), (uint8_t)rnd(r, 4), (uint8_t)rnd(r, 2));
        break;
    default:
        msg_empty(o, 'n');
    }
}

/* A well-formed answer to one request: what a server sends for it. */
static void gen_block(out_t *o, rng_t *r)
{
    switch (rnd(r, 7)) {
    case 0: /* an extended query, rows, its Sync */
        msg_empty(o, '1');
        msg_empty(o, '2');
        msg_row_desc(o, r, 1, 20, 1);
        for (uint32_t i = rnd(r, 3); i > 0; i--)
            msg_data_row(o, r, 1);
        msg_complete(o, r);
        msg_ready(o, r);
        break;
    case 1: /* the cache's prepare: Parse, Describe S, Bind, Execute */
        msg_empty(o, '1');
        msg_param_desc(o, r);
        msg_row_desc(o, r, 1, 0, 0);
        msg_empty(o, '2');
        msg_data_row(o, r, 1);
        msg_complete(o, r);
        msg_ready(o, r);
        break;
    case 2: /* an error and its ReadyForQuery */
        msg_error(o, r, 'E');
        msg_ready(o, r);
        break;
    case 3: /* COPY FROM STDIN */
        msg_empty(o, '1');
        msg_empty(o, '2');
        msg_copy_response(o, r, 'G');
        action(o, ACT_OUTPUT, 0, 0);
        msg_complete(o, r);
        msg_ready(o, r);
        break;
    case 4: /* COPY TO STDOUT */
        msg_empty(o, '1');
        msg_empty(o, '2');
        msg_copy_response(o, r, 'H');
        msg_copy_data(o, r);
        msg_copy_data(o, r);
        msg_empty(o, 'c');
        msg_complete(o, r);
        msg_ready(o, r);
        break;
    case 5: /* a portal's first batch, suspended */
        msg_empty(o, '1');
        msg_empty(o, '2');
        msg_row_desc(o, r, 1, 23, 1);
        msg_data_row(o, r, 1);
        msg_data_row(o, r, 1);
        msg_empty(o, 's');
        break;
    default: /* a simple query of two statements */
        msg_row_desc(o, r, 1, 23, 0);
        msg_data_row(o, r, 1);
        msg_complete(o, r);
        msg_row_desc(o, r, 1, 23, 0);
        msg_complete(o, r);
        msg_ready(o, r);
    }
}

typedef struct rec {
    const uint8_t *p; /* the whole record, header included */
    size_t n;
} rec_t;

#define MAX_RECS 512

typedef struct recs {
    rec_t r[MAX_RECS];
    size_t n;
} recs_t;

static void collect(uint8_t type, const uint8_t *body, size_t len, void *ud)
{
    (void)type;
    recs_t *rs = ud;
    if (rs->n < MAX_RECS) rs->r[rs->n++] = (rec_t){body - 3, len + 3};
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    static recs_t rs;
    static uint8_t copy[1 << 16], buf[1 << 16];
    rng_t r = {((uint64_t)seed << 32) ^ 0x9E3779B97F4A7C15ull ^ size};
    rnd(&r, 1);
    if (size > sizeof copy || max_size > sizeof buf || rnd(&r, 16) == 0)
        return LLVMFuzzerMutate(data, size, max_size);
    memcpy(copy, data, size);
    rs.n = 0;
    walk_records(copy, size, collect, &rs);
    out_t o = {buf, 0, max_size, 0};
    size_t at = rs.n ? rnd(&r, (uint32_t)rs.n + 1) : 0;
    uint32_t op = rnd(&r, 8);
    size_t other = rs.n ? rnd(&r, (uint32_t)rs.n) : 0;
    for (size_t i = 0; i <= rs.n; i++) {
        if (i == at) {
            if (op <= 2)
                gen_message(&o, &r);
            else if (op == 3)
                gen_block(&o, &r);
            else if (op == 4 && rs.n)
                put(&o, rs.r[other].p, rs.r[other].n); /* duplicate */
        }
        if (i == rs.n) break;
        if (i == at && op == 5) continue; /* delete */
        if (i == at && op >= 6) {
            /* mutate the body (op 6) or the type (op 7) of this record */
            uint8_t body[1024];
            size_t n = rs.r[i].n - 3 < sizeof body ? rs.r[i].n - 3 : sizeof body;
            memcpy(body, rs.r[i].p + 3, n);
            uint8_t type = rs.r[i].p[0];
            if (op == 6)
                n = LLVMFuzzerMutate(body, n, n + 16 < sizeof body ? n + 16 : sizeof body);
            else
                type = (uint8_t) "123nsITDCZENGHdcAStKR"[rnd(&r, 21)];
            size_t h = begin_record(&o, type);
            put(&o, body, n);
            end_record(&o, h);
            continue;
        }
        put(&o, rs.r[i].p, rs.r[i].n);
    }
    if (o.full || o.len == 0) return LLVMFuzzerMutate(data, size, max_size);
    memcpy(data, buf, o.len);
    return o.len;
}

/* Records of the first input up to a point, then of the second from one. */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                                 uint8_t *out, size_t max_out, unsigned int seed)
{
    static recs_t a, b;
    rng_t r = {((uint64_t)seed << 32) ^ 0xD1B54A32D192ED03ull};
    rnd(&r, 1);
    a.n = b.n = 0;
    walk_records(d1, s1, collect, &a);
    walk_records(d2, s2, collect, &b);
    out_t o = {out, 0, max_out, 0};
    size_t cut1 = rnd(&r, (uint32_t)a.n + 1), cut2 = rnd(&r, (uint32_t)b.n + 1);
    for (size_t i = 0; i < cut1; i++)
        put(&o, a.r[i].p, a.r[i].n);
    for (size_t i = cut2; i < b.n && !o.full; i++)
        put(&o, b.r[i].p, b.r[i].n);
    if (o.full) o.len = 0;
    return o.len;
}
#endif /* PGW_LIBFUZZER */
