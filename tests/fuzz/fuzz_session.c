/*
 * Fuzz target for the session state machine: a session after a scripted
 * trust startup, with requests of every kind queued (plain, streamed,
 * prepared, executed, described, closed, a batch and a simple query), is fed
 * the input as server bytes in two pieces split at a point chosen by the
 * first byte. Whatever happens, every accepted callback must fire exactly
 * once by the time the session is freed. A query the statement cache
 * prepares at its first use is submitted again from its own completion
 * (twice), so replies can reach the cache's hits, refusals, retries and
 * owed Closes (a DISCARD ALL drops the cache on the way).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/session.h"

#define NREQ 17
/* The cached query and its two resubmissions. */
#define CACHED_FIRST 14

static int calls[NREQ];
static int accepted[NREQ];
static pgw_session_t *g_sess;

static void done_cb(int status, pgw_result_t *res, void *ud);

static void submit_cached(int k)
{
    pgw_param_t p = pgw_int4(7);
    pgw_request_t q = PGW_QUERY("SELECT $1::int4", &p, 1, done_cb, (void *)(uintptr_t)k);
    q.cache = PGW_CACHE_NOW;
    accepted[k] = pgw_session_submit(g_sess, &q) == 0;
}

static void done_cb(int status, pgw_result_t *res, void *ud)
{
    (void)status;
    uintptr_t k = (uintptr_t)ud;
    calls[k]++;
    if (k >= CACHED_FIRST && k + 1 < NREQ) submit_cached((int)k + 1);
    if (res) {
        /* Touch what the result offers. */
        for (pgw_result_t *r = res; r; r = pgw_result_next(r)) {
            size_t nr = pgw_result_nrows(r), nc = pgw_result_ncols(r);
            for (size_t i = 0; i < nr && i < 4; i++)
                for (size_t j = 0; j < nc && j < 4; j++) {
                    pgw_str_t t;
                    int64_t v;
                    (void)pgw_result_text(r, i, j, &t);
                    (void)pgw_result_int8(r, i, j, &v);
                }
            (void)pgw_result_command_tag(r);
            const pgw_error_t *e = pgw_result_error(r);
            if (e && e->message) (void)strlen(e->message);
        }
        pgw_result_free(res);
    }
}

static int row_cb(const pgw_row_t *row, void *ud)
{
    (void)ud;
    for (uint16_t i = 0; i < row->ncols; i++)
        if (row->values[i].len > 0) (void)row->values[i].p[row->values[i].len - 1];
    return 0;
}

/* COPY FROM data: a few rows, then the end; COPY TO data: touched. */
static int copy_left;

static int copy_source(pgw_buf_t *out, size_t room, void *ud)
{
    (void)room, (void)ud;
    if (copy_left-- <= 0) return PGW_COPY_END;
    return pgw_buf_append(out, "1\t2\n", 4) == 0 ? PGW_COPY_MORE : PGW_ENOMEM;
}

static int copy_data(const uint8_t *data, size_t len, void *ud)
{
    (void)ud;
    if (len) (void)data[len - 1];
    return 0;
}

static void notice_cb(pgw_session_t *s, const pgw_error_t *n, void *ud)
{
    (void)s, (void)ud;
    if (n->message) (void)strlen(n->message);
}

static const uint8_t startup[] = {
    'R', 0, 0, 0, 8,  0,  0, 0, 0,             /* AuthenticationOk */
    'K', 0, 0, 0, 12, 0,  0, 0, 1, 1, 2, 3, 4, /* BackendKeyData */
    'Z', 0, 0, 0, 5,  'I'                      /* ReadyForQuery */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *params[] = {"user", "fuzz"};
    pgw_session_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = 1;
    cfg.read_chunk_size = 64;
    cfg.max_message_size = 1u << 20;
    cfg.cb.on_notice = notice_cb;
    pgw_session_t *s;
    if (pgw_session_new(&s, &cfg) != 0) return 0;
    g_sess = s;
    memset(calls, 0, sizeof calls);
    memset(accepted, 0, sizeof accepted);
    pgw_session_start(s);
    pgw_session_recv(s, startup, sizeof startup);

    pgw_param_t p = pgw_int8(42);
    int k = 0;
    accepted[k] =
        pgw_session_query(s, "SELECT $1::int8", &p, 1, 0, done_cb, (void *)(uintptr_t)k) == 0,
    k++;
    accepted[k] = pgw_session_query_rows(s, "SELECT g", NULL, 0, 0, row_cb, done_cb,
                                         (void *)(uintptr_t)k) == 0,
    k++;
    accepted[k] =
        pgw_session_simple_query(s, "SELECT 1; SELECT 2", done_cb, (void *)(uintptr_t)k) == 0,
    k++;
    accepted[k] =
        pgw_session_prepare(s, "s", "SELECT $1", NULL, 1, done_cb, (void *)(uintptr_t)k) == 0,
    k++;
    accepted[k] = pgw_session_execute(s, "s", &p, 1, 0, done_cb, (void *)(uintptr_t)k) == 0, k++;
    pgw_request_t batch[2] = {PGW_DESCRIBE("s", done_cb, (void *)(uintptr_t)k),
                              PGW_CLOSE("s", done_cb, (void *)(uintptr_t)(k + 1))};
    int batch_ok =
        pgw_session_submit_batch(s, batch, 2, 0, done_cb, (void *)(uintptr_t)(k + 2)) == 0;
    accepted[k++] = batch_ok;
    accepted[k++] = batch_ok;
    accepted[k++] = batch_ok;
    accepted[k] = pgw_session_sync(s, done_cb, (void *)(uintptr_t)k) == 0, k++;
    /* COPY (either direction, as the input decides) and a portal read in
     * batches, so the fuzzer reaches their states too. */
    copy_left = 3;
    pgw_request_t copy = PGW_QUERY("COPY t FROM STDIN", NULL, 0, done_cb, (void *)(uintptr_t)k);
    copy.kind = PGW_REQ_COPY;
    copy.copy_source = copy_source;
    copy.on_copy_data = copy_data;
    accepted[k] = pgw_session_submit(s, &copy) == 0, k++;
    pgw_request_t cur = PGW_QUERY("SELECT g", NULL, 0, done_cb, (void *)(uintptr_t)k);
    cur.portal = "c";
    cur.max_rows = 2;
    accepted[k] = pgw_session_submit(s, &cur) == 0, k++;
    pgw_request_t fetch = PGW_QUERY(NULL, NULL, 0, done_cb, (void *)(uintptr_t)k);
    fetch.kind = PGW_REQ_FETCH;
    fetch.portal = "c";
    fetch.max_rows = 2;
    accepted[k] = pgw_session_submit(s, &fetch) == 0, k++;
    pgw_request_t closep = PGW_QUERY(NULL, NULL, 0, done_cb, (void *)(uintptr_t)k);
    closep.kind = PGW_REQ_CLOSE_PORTAL;
    closep.portal = "c";
    accepted[k] = pgw_session_submit(s, &closep) == 0, k++;
    accepted[k] = pgw_session_simple_query(s, "DISCARD ALL", done_cb, (void *)(uintptr_t)k) == 0,
    k++;
    submit_cached(k);
    k = NREQ;

    if (size > 0) {
        size_t split = size > 1 ? data[0] % size : 0;
        const uint8_t *in = data + 1;
        size_t n = size - 1;
        if (split > n) split = n;
        if (pgw_session_recv(s, in, split) == 0) {
            (void)pgw_session_copy_pump(s);
            pgw_session_recv(s, in + split, n - split);
        }
    }
    size_t out;
    pgw_session_pending_output(s, &out);
    pgw_session_consumed_output(s, out);
    pgw_session_free(s);
    for (int i = 0; i < k; i++)
        if (calls[i] != (accepted[i] ? 1 : 0)) abort();
    return 0;
}
