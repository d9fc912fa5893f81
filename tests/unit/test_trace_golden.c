/*
 * Golden protocol traces: the main exchanges of a session with a real
 * PostgreSQL 15 server, replayed from recorded server bytes.
 *
 * For each scenario, tests/golden/<name>.server holds every byte the server
 * sent (recorded from the real server) and tests/golden/<name>.trace the
 * expected trace: every message in both directions in libpq's PQtrace
 * format (tests/common/trace.h), with a "--" line for each callback the
 * session made (startup, completions with their results, notices,
 * notifications) where it made it. The test feeds the recorded bytes to a
 * fresh session and compares the whole text with the golden file; then it
 * feeds them again split in two at every byte boundary, and in 1-byte
 * pieces, and asserts the identical text each time (the same messages, the
 * same callbacks with the same results, in the same order).
 *
 * Re-recording (after a change that alters what the session sends, or for
 * a new scenario), against the throwaway cluster of tests/pg:
 *
 *   bash tests/pg/pg-cluster.sh start /tmp/pgw-golden
 *   PGW_TEST_ENV_FILE=/tmp/pgw-golden/env PGW_GOLDEN_RECORD=1 \
 *       BUILD/unit_test_trace_golden
 *   bash tests/pg/pg-cluster.sh stop /tmp/pgw-golden
 *
 * Record mode runs each scenario over a unix socket to the server, writes
 * both files, then runs the replay checks on what it wrote. Review the
 * diff of tests/golden/ before committing it. The scenarios log in as the
 * cluster's fixed roles (pgwire with trust, pgw_scram with SCRAM) and use a
 * fixed SCRAM client nonce, so the recorded bytes replay exactly.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "pgtest.h"
#include "pgwire/session.h"
#include "session/session_internal.h"
#include "trace.h"

#define GOLDEN_DIR PGW_SOURCE_DIR "/tests/golden/"

/* The test cluster's roles (tests/pg/pg-cluster.sh). */
#define TRUST_USER     "pgwire"
#define SCRAM_USER     "pgw_scram"
#define SCRAM_PASSWORD "scram-Pw-1"
#define SCRAM_NONCE    "rOprNGfwEbeRWgbNEkqO"

/* ------------------------------------------------------------- scenarios */

typedef struct run run_t;

typedef struct scenario {
    const char *name;
    const char *user;
    const char *password; /* NULL: trust */
    /* Queues the scenario's requests (called from on_startup); returns how
     * many completions to wait for. */
    int (*submit)(pgw_session_t *s, pgw_result_cb cb, void *ud);
} scenario_t;

/* The request calls of every scenario are here, and only here. */

static int submit_simple(pgw_session_t *s, pgw_result_cb cb, void *ud)
{
    assert_int_equal(
        pgw_session_simple_query(s, "SELECT 1 AS one, 'two' AS two, NULL AS three; SELECT 'second'",
                                 cb, ud),
        0);
    return 1;
}

static int submit_scram(pgw_session_t *s, pgw_result_cb cb, void *ud)
{
    assert_int_equal(pgw_session_simple_query(s, "SELECT current_user", cb, ud), 0);
    return 1;
}

static int submit_extended(pgw_session_t *s, pgw_result_cb cb, void *ud)
{
    static const uint8_t bytes[] = {0x00, 0x01, 0xff};
    pgw_param_t p[] = {pgw_int4(41), pgw_text("hi"), pgw_float8(1.5), pgw_bytea(bytes, 3),
                       pgw_null(20)};
    assert_int_equal(pgw_session_query(s,
                                       "SELECT $1::int4 + 1 AS n, $2::text AS t, $3::float8 AS f, "
                                       "$4::bytea AS b, $5::int8 AS nul",
                                       p, 5, 0, cb, ud),
                     0);
    return 1;
}

static int submit_prepare_execute(pgw_session_t *s, pgw_result_cb cb, void *ud)
{
    static const uint32_t oids[] = {20};
    pgw_param_t a[] = {pgw_int8(21)}, b[] = {pgw_int8(-5)};
    assert_int_equal(pgw_session_prepare(s, "st", "SELECT $1::int8 * 2 AS d", oids, 1, cb, ud), 0);
    assert_int_equal(pgw_session_execute(s, "st", a, 1, 0, cb, ud), 0);
    assert_int_equal(pgw_session_execute(s, "st", b, 1, 0, cb, ud), 0);
    return 3;
}

static int submit_batch_abort(pgw_session_t *s, pgw_result_cb cb, void *ud)
{
    pgw_request_t batch[3] = {PGW_QUERY("SELECT 1::int4 AS a", NULL, 0, cb, ud),
                              PGW_QUERY("SELECT 1 / 0 AS b", NULL, 0, cb, ud),
                              PGW_QUERY("SELECT 3::int4 AS c", NULL, 0, cb, ud)};
    assert_int_equal(pgw_session_submit_batch(s, batch, 3, 0, cb, ud), 0);
    /* The session is still usable after the aborted group. */
    assert_int_equal(pgw_session_query(s, "SELECT 4::int4 AS d", NULL, 0, 0, cb, ud), 0);
    return 5;
}

static int submit_error(pgw_session_t *s, pgw_result_cb cb, void *ud)
{
    assert_int_equal(pgw_session_simple_query(s, "SELECT * FROM no_such_table", cb, ud), 0);
    pgw_param_t p[] = {pgw_int4(2)};
    assert_int_equal(
        pgw_session_query(s, "SELECT * FROM no_such_table WHERE x = $1", p, 1, 0, cb, ud), 0);
    assert_int_equal(pgw_session_query(s, "SELECT $1::int4 AS after", p, 1, 0, cb, ud), 0);
    return 3;
}

static int submit_notices(pgw_session_t *s, pgw_result_cb cb, void *ud)
{
    assert_int_equal(pgw_session_simple_query(s, "LISTEN golden_ch", cb, ud), 0);
    assert_int_equal(pgw_session_simple_query(s, "NOTIFY golden_ch, 'the payload'", cb, ud), 0);
    assert_int_equal(
        pgw_session_simple_query(
            s, "DO $$ BEGIN RAISE NOTICE 'hello from DO'; RAISE WARNING 'careful'; END $$", cb, ud),
        0);
    assert_int_equal(
        pgw_session_query(s, "SELECT pg_notify('golden_ch', 'from pg_notify')", NULL, 0, 0, cb, ud),
        0);
    return 4;
}

static const scenario_t scenarios[] = {
    {"startup_trust_simple_query", TRUST_USER, NULL, submit_simple},
    {"startup_scram", SCRAM_USER, SCRAM_PASSWORD, submit_scram},
    {"extended_query_binary", TRUST_USER, NULL, submit_extended},
    {"prepare_execute", TRUST_USER, NULL, submit_prepare_execute},
    {"batch_pipeline_aborted", TRUST_USER, NULL, submit_batch_abort},
    {"error", TRUST_USER, NULL, submit_error},
    {"notices_notifications", TRUST_USER, NULL, submit_notices},
};

/* ------------------------------------------------- one run of a scenario */

struct run {
    const scenario_t *sc;
    pgw_session_t *s;
    pgt_trace_t tr; /* messages and callback notes, in order */
    int expected;   /* completions the scenario waits for (-1: startup not done) */
    int done;
    int broken;
};

static void note(run_t *r, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pgt_trace_note(&r->tr, line);
}

static const char *status_name(int status)
{
    return status == 0 ? "OK" : pgw_err_name(status);
}

static void note_error(run_t *r, const char *what, const pgw_error_t *e)
{
    note(r, "-- %s %s %s: %s", what, e->severity_nonlocal ? e->severity_nonlocal : "?",
         e->sqlstate ? e->sqlstate : "?", e->message ? e->message : "");
}

/* One row as text: NULL, "text" or 0x<hex> for binary values. */
static void note_row(run_t *r, const pgw_result_t *res, size_t row)
{
    char line[1024];
    size_t k = (size_t)snprintf(line, sizeof line, "--     row");
    for (size_t c = 0; c < pgw_result_ncols(res) && k < sizeof line - 8; c++) {
        pgw_value_t v;
        assert_int_equal(pgw_result_value(res, row, c, &v), 0);
        int n;
        if (v.len < 0)
            n = snprintf(line + k, sizeof line - k, " NULL");
        else if (v.format == 0)
            n = snprintf(line + k, sizeof line - k, " \"%.*s\"", (int)v.len, (const char *)v.p);
        else {
            n = snprintf(line + k, sizeof line - k, " 0x");
            for (int32_t i = 0; i < v.len && k + (size_t)n + 3 < sizeof line; i++)
                n += snprintf(line + k + n, sizeof line - k - (size_t)n, "%02x", v.p[i]);
        }
        k += (size_t)n;
    }
    pgt_trace_note(&r->tr, line);
}

static void on_done(int status, pgw_result_t *res, void *ud)
{
    run_t *r = ud;
    note(r, "-- done %d: %s", r->done++, status_name(status));
    for (const pgw_result_t *x = res; x; x = pgw_result_next(x)) {
        note(r, "--   result \"%s\" cols %zu rows %zu",
             pgw_result_command_tag(x) ? pgw_result_command_tag(x) : "", pgw_result_ncols(x),
             pgw_result_nrows(x));
        const pgw_error_t *e = pgw_result_error(x);
        if (e) note_error(r, "  error", e);
        for (size_t c = 0; c < pgw_result_ncols(x); c++)
            note(r, "--     column \"%s\" type %u format %d", pgw_result_fname(x, c),
                 pgw_result_ftype(x, c), pgw_result_fformat(x, c));
        for (size_t i = 0; i < pgw_result_nrows(x); i++)
            note_row(r, x, i);
    }
    pgw_result_free(res);
}

static void on_startup(pgw_session_t *s, int status, const pgw_error_t *err, void *ud)
{
    run_t *r = ud;
    note(r, "-- startup: %s", status_name(status));
    if (err) note_error(r, "startup error", err);
    if (status == 0) r->expected = r->sc->submit(s, on_done, r);
}

static void on_broken(pgw_session_t *s, int err, void *ud)
{
    (void)s;
    run_t *r = ud;
    r->broken = 1;
    note(r, "-- broken: %s", status_name(err));
}

static void on_notice(pgw_session_t *s, const pgw_error_t *n, void *ud)
{
    (void)s;
    note_error(ud, "notice", n);
}

static void on_notification(pgw_session_t *s, int32_t pid, pgw_str_t ch, pgw_str_t pl, void *ud)
{
    (void)s, (void)pid; /* pid is in the trace line */
    note(ud, "-- notification \"%.*s\" \"%.*s\"", (int)ch.len, ch.p, (int)pl.len, pl.p);
}

static void on_trace(pgw_session_t *s, char dir, const uint8_t *msg, size_t len, void *ud)
{
    (void)s;
    pgt_trace_msg(&((run_t *)ud)->tr, dir, msg, len);
}

/* A started session for sc, its StartupMessage traced and taken. */
static void run_start(run_t *r, const scenario_t *sc)
{
    memset(r, 0, sizeof *r);
    r->sc = sc;
    r->expected = -1;
    pgt_trace_init(&r->tr);
    const char *params[] = {"user", sc->user, "database", TRUST_USER};
    pgw_session_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.startup_params = params;
    cfg.nstartup_params = 2;
    cfg.password = sc->password;
    cfg.cb.on_startup = on_startup;
    cfg.cb.on_broken = on_broken;
    cfg.cb.on_notice = on_notice;
    cfg.cb.on_notification = on_notification;
    cfg.cb.on_trace = on_trace;
    cfg.ud = r;
    assert_int_equal(pgw_session_new(&r->s, &cfg), 0);
    pgw__session_set_test_nonce(r->s, SCRAM_NONCE);
    assert_int_equal(pgw_session_start(r->s), 0);
}

static int run_finished(const run_t *r)
{
    return r->broken || (r->expected >= 0 && r->done >= r->expected);
}

/* Drop what the session wrote (the trace has it). */
static void run_discard_output(run_t *r)
{
    size_t n;
    pgw_session_pending_output(r->s, &n);
    pgw_session_consumed_output(r->s, n);
}

static void run_end(run_t *r)
{
    pgw_session_free(r->s);
    pgt_trace_free(&r->tr);
}

/* Replay server bytes in pieces of at most piece bytes, the first piece
 * ending at first (0: no special first piece); returns the text. */
static char *replay(const scenario_t *sc, const uint8_t *in, size_t n, size_t first, size_t piece)
{
    run_t r;
    run_start(&r, sc);
    run_discard_output(&r);
    size_t pos = 0;
    while (pos < n) {
        size_t k = first && pos < first ? first - pos : piece;
        if (k > n - pos) k = n - pos;
        (void)pgw_session_recv(r.s, in + pos, k);
        run_discard_output(&r);
        pos += k;
    }
    assert_true(run_finished(&r));
    char *text = strdup(pgt_trace_text(&r.tr));
    assert_non_null(text);
    run_end(&r);
    return text;
}

/* ------------------------------------------------------------ files */

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s: %s (record it: see the top of this file)", path, strerror(errno));
    size_t cap = 4096, len = 0;
    uint8_t *p = malloc(cap + 1);
    assert_non_null(p);
    size_t got;
    while ((got = fread(p + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            cap *= 2;
            p = realloc(p, cap + 1);
            assert_non_null(p);
        }
    }
    fclose(f);
    p[len] = 0;
    *n = len;
    return p;
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) fail_msg("cannot write %s: %s", path, strerror(errno));
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void golden_path(char *buf, size_t cap, const scenario_t *sc, const char *ext)
{
    snprintf(buf, cap, "%s%s.%s", GOLDEN_DIR, sc->name, ext);
}

/* ------------------------------------------------- recording (live server) */

static int connect_server(void)
{
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/.s.PGSQL.%s", pgt_env_required("PGHOST"),
             pgt_env_required("PGPORT"));
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        fail_msg("connect %s: %s", sa.sun_path, strerror(errno));
    return fd;
}

/* Write everything the session has for the server. */
static void flush_to(int fd, run_t *r)
{
    size_t n;
    const uint8_t *p = pgw_session_pending_output(r->s, &n);
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        assert_true(w > 0);
        pgw_session_consumed_output(r->s, (size_t)w);
        p = pgw_session_pending_output(r->s, &n);
    }
}

/* Run sc against the server; write <name>.server and <name>.trace. */
static void record(const scenario_t *sc)
{
    pgt_require_server();
    int fd = connect_server();
    run_t r;
    run_start(&r, sc);
    pgw_buf_t got;
    pgw_buf_init(&got, NULL);
    while (!run_finished(&r)) {
        flush_to(fd, &r);
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 30000) != 1) fail_msg("%s: the server did not answer", sc->name);
        uint8_t buf[65536];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail_msg("%s: the server closed the connection", sc->name);
        assert_int_equal(pgw_buf_append(&got, buf, (size_t)n), 0);
        (void)pgw_session_recv(r.s, buf, (size_t)n);
    }
    close(fd);
    char path[1024];
    golden_path(path, sizeof path, sc, "server");
    write_file(path, got.data, got.len);
    golden_path(path, sizeof path, sc, "trace");
    write_file(path, r.tr.text.data, r.tr.text.len);
    pgw_buf_free(&got);
    run_end(&r);
}

/* ------------------------------------------------------------------ tests */

static void check_scenario(void **state)
{
    const scenario_t *sc = *state;
    if (getenv("PGW_GOLDEN_RECORD") && strcmp(getenv("PGW_GOLDEN_RECORD"), "1") == 0) record(sc);
    char path[1024];
    size_t n, tn;
    golden_path(path, sizeof path, sc, "server");
    uint8_t *in = read_file(path, &n);
    golden_path(path, sizeof path, sc, "trace");
    char *golden = (char *)read_file(path, &tn);

    char *whole = replay(sc, in, n, 0, n);
    assert_string_equal(whole, golden);

    size_t replays = 1;
    for (size_t cut = 1; cut < n; cut++, replays++) {
        char *text = replay(sc, in, n, cut, n);
        if (strcmp(text, golden) != 0) {
            fprintf(stderr, "%s: split at byte %zu of %zu differs:\n%s", sc->name, cut, n, text);
            fail_msg("split at %zu differs from the golden trace", cut);
        }
        free(text);
    }
    char *bytewise = replay(sc, in, n, 0, 1);
    assert_string_equal(bytewise, golden);
    replays++;
    print_message(
        "%s: %zu server bytes, %zu replays (every split and 1-byte pieces) match %s.trace\n",
        sc->name, n, replays, sc->name);
    free(bytewise);
    free(whole);
    free(golden);
    free(in);
}

/* The formatter itself, on messages whose libpq trace lines are known. */
static void test_formatter(void **state)
{
    (void)state;
    pgt_trace_t t;
    pgt_trace_init(&t);
#define MSG(dir, lit)                                \
    {                                                \
        dir, (const uint8_t *)(lit), sizeof(lit) - 1 \
    }
    static const struct {
        char dir;
        const uint8_t *p;
        size_t n;
    } msgs[] = {
        MSG('F', "P\0\0\0\x15\0SELECT $1\0\0\x01\0\0\0\x17"),
        MSG('B', "Z\0\0\0\x05I"),
        MSG('B', "D\0\0\0\x14\0\x03\xff\xff\xff\xff\0\0\0\0\0\0\0\x02\x01z"),
        MSG('B', "E\0\0\0\x0fSERROR\0C1\0\0"),
        MSG('F', "S\0\0\0\x04"),
        MSG('B', "C\0\0\0\x08SEL"), /* shorter than it says */
    };
#undef MSG
    for (size_t i = 0; i < sizeof msgs / sizeof msgs[0]; i++)
        pgt_trace_msg(&t, msgs[i].dir, msgs[i].p, msgs[i].n);
    assert_string_equal(pgt_trace_text(&t), "F\t21\tParse\t \"\" \"SELECT $1\" 1 23\n"
                                            "B\t5\tReadyForQuery\t I\n"
                                            "B\t20\tDataRow\t 3 -1 0 '' 2 '\\x01z'\n"
                                            "B\t15\tErrorResponse\t S \"ERROR\" C \"1\" \\x00\n"
                                            "F\t4\tSync\n"
                                            "B\t8\tCommandComplete\t <truncated>\n");
    pgt_trace_free(&t);
}

int main(void)
{
    enum { N = sizeof scenarios / sizeof scenarios[0] };
    struct CMUnitTest tests[N + 1];
    tests[0] = (struct CMUnitTest)cmocka_unit_test(test_formatter);
    for (size_t i = 0; i < N; i++) {
        tests[i + 1] =
            (struct CMUnitTest)cmocka_unit_test_prestate(check_scenario, (void *)&scenarios[i]);
        tests[i + 1].name = scenarios[i].name;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
