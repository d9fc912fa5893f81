/*
 * libFuzzer target: the CopyBoth framing of a replication stream
 * (replication.h, session/copyboth.c, repl/stream.c). A session after a
 * scripted trust startup runs a stream's START_REPLICATION; the server
 * answers CopyBothResponse, then the input drives it.
 *
 * Input: steps, each an op byte, a 2-byte big-endian length and that many
 * bytes (a length past the end takes the rest). The bytes are fed to the
 * session as server bytes; before them, op % 5 does: 0 nothing, 1 confirm
 * an LSN (from the op byte) and send a status update, 2 send one asking
 * for a reply, 3 stop the stream, 4 feed the bytes one at a time.
 * Checked: every XLogData's payload lies inside what was fed and its
 * header fields are the message's; what the client writes after its
 * query is only CopyData status updates (34 bytes, 'r', flush never above
 * the confirmed LSN) and at most one CopyDone, nothing after it; on_end
 * fires exactly once by the time the session is freed, and the stream is
 * inactive once it has.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/replication.h"

#define CHECK(cond)           \
    do {                      \
        if (!(cond)) abort(); \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct state {
    pgw_session_t *s;
    pgw_repl_stream_t *st;
    int ends;
    int copy_dones;
    bool query_seen;
    uint64_t confirmed;
} state_t;

static const uint8_t startup[] = {
    'R', 0, 0, 0, 8,  0,  0, 0, 0,             /* AuthenticationOk */
    'K', 0, 0, 0, 12, 0,  0, 0, 1, 1, 2, 3, 4, /* BackendKeyData */
    'Z', 0, 0, 0, 5,  'I'                      /* ReadyForQuery */
};
static const uint8_t copy_both[] = {'W', 0, 0, 0, 7, 0, 0, 0};

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static int on_xlog(const pgw_repl_xlog_t *x, void *ud)
{
    (void)ud;
    /* the payload is the message's tail: its header precedes it */
    const uint8_t *h = x->data - 25;
    CHECK(h[0] == 'w');
    CHECK(get64(h + 1) == x->wal_start && get64(h + 9) == x->wal_end);
    CHECK((uint64_t)x->send_time == get64(h + 17));
    volatile uint8_t sum = 0;
    for (size_t i = 0; i < x->len; i++)
        sum ^= x->data[i];
    (void)sum;
    return x->len == 13 ? PGW_ECANCELED : 0; /* the abandon path too */
}

static void on_keepalive(const pgw_repl_keepalive_t *k, void *ud)
{
    (void)k, (void)ud;
}

static void on_end(int status, pgw_result_t *res, void *ud)
{
    state_t *g = ud;
    (void)status;
    g->ends++;
    CHECK(g->ends == 1);
    CHECK(!pgw_repl_stream_active(g->st));
    pgw_result_free(res);
}

/* The client's output since the last call: the query once, then only
 * status updates and one CopyDone. */
static void drain_output(state_t *g)
{
    size_t n;
    const uint8_t *p = pgw_session_pending_output(g->s, &n);
    size_t at = 0;
    while (at < n) {
        CHECK(n - at >= 5);
        uint32_t len = (uint32_t)p[at + 1] << 24 | (uint32_t)p[at + 2] << 16 |
                       (uint32_t)p[at + 3] << 8 | p[at + 4];
        CHECK(len >= 4 && n - at - 1 >= len);
        uint8_t type = p[at];
        if (!g->query_seen) {
            CHECK(type == 'Q');
            g->query_seen = true;
        } else if (type == 'd') {
            CHECK(g->copy_dones == 0 && len == 4 + 34 && p[at + 5] == 'r');
            CHECK(get64(p + at + 5 + 9) <= g->confirmed);
        } else {
            CHECK(type == 'c');
            g->copy_dones++;
            CHECK(g->copy_dones == 1);
        }
        at += 1 + len;
    }
    pgw_session_consumed_output(g->s, n);
}

static void feed(state_t *g, const uint8_t *p, size_t n, bool bytewise)
{
    if (!bytewise) {
        (void)pgw_session_recv(g->s, p, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (pgw_session_recv(g->s, p + i, 1) != 0) return;
}

static void step(state_t *g, uint8_t op, const uint8_t *p, size_t n)
{
    switch (op % 5) {
    case 1:
        (void)pgw_repl_stream_confirm(g->st, (uint64_t)op << 20);
        if (((uint64_t)op << 20) > g->confirmed) g->confirmed = (uint64_t)op << 20;
        (void)pgw_repl_stream_send_status(g->st, false);
        break;
    case 2:
        (void)pgw_repl_stream_send_status(g->st, true);
        break;
    case 3:
        (void)pgw_repl_stream_stop(g->st);
        break;
    default:
        break;
    }
    drain_output(g);
    feed(g, p, n, op % 5 == 4);
    drain_output(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *params[] = {"user", "fuzz", "replication", "database"};
    pgw_session_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = 2;
    cfg.read_chunk_size = 64;
    cfg.max_message_size = 1u << 20;
    state_t g = {0};
    if (pgw_session_new(&g.s, &cfg) != 0) return 0;
    pgw_session_start(g.s);
    size_t n;
    pgw_session_pending_output(g.s, &n);
    pgw_session_consumed_output(g.s, n);
    pgw_session_recv(g.s, startup, sizeof startup);

    pgw_repl_stream_config_t scfg;
    pgw_repl_stream_config_init(&scfg);
    scfg.on_xlog = on_xlog;
    scfg.on_keepalive = on_keepalive;
    scfg.on_end = on_end;
    scfg.ud = &g;
    if (pgw_repl_stream_new(&scfg, &g.st) != 0) {
        pgw_session_free(g.s);
        return 0;
    }
    pgw_request_t req;
    CHECK(pgw_repl_stream_request(g.st, g.s, "START_REPLICATION SLOT s LOGICAL 0/0", &req) == 0);
    bool accepted = pgw_session_submit(g.s, &req) == 0;
    drain_output(&g);
    pgw_session_recv(g.s, copy_both, sizeof copy_both);
    drain_output(&g);

    size_t at = 0;
    while (at + 3 <= size) {
        uint8_t op = data[at];
        size_t len = (size_t)data[at + 1] << 8 | data[at + 2];
        at += 3;
        if (len > size - at) len = size - at;
        step(&g, op, data + at, len);
        at += len;
    }
    pgw_session_free(g.s);
    CHECK(g.ends == (accepted ? 1 : 0));
    pgw_repl_stream_free(g.st);
    return 0;
}
