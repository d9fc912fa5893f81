/*
 * The multi-host plan (hostplan.h) without sockets: host order and
 * load_balance_hosts, what each failure means for the rest of the connect,
 * and target_session_attrs from a session's ParameterStatus values or the
 * probe's answer. The connections of conn.h follow the same plan against
 * real servers (integration/test_failover, test_replica_target).
 */
#include "test_session_util.h"

#include "pgwire/hostplan.h"

static pgw_conninfo_t *parse(const char *s)
{
    pgw_conninfo_t *ci = NULL;
    char err[256];
    assert_int_equal(pgw_conninfo_parse(&ci, s, NULL, err, sizeof err), 0);
    return ci;
}

static pgw_hostplan_t *plan_of(const pgw_conninfo_t *ci)
{
    pgw_hostplan_t *p = NULL;
    assert_int_equal(pgw_hostplan_new(&p, ci, NULL), 0);
    assert_non_null(p);
    return p;
}

/* A session after a startup whose ParameterStatus values are hot and ro
 * (NULL: not reported, as before PostgreSQL 14). */
static pgw_session_t *started(rec_t *r, const char *hot, const char *ro)
{
    memset(r, 0, sizeof *r);
    pgw_session_t *s = new_session(r, NULL);
    assert_int_equal(pgw_session_start(s), 0);
    pgw_buf_t w = {0}, out = {0};
    take_out(s, &out);
    pgt_msg_auth(&w, 0, NULL, 0);
    if (hot) pgt_msg_param_status(&w, "in_hot_standby", hot);
    if (ro) pgt_msg_param_status(&w, "default_transaction_read_only", ro);
    pgt_msg_ready(&w, 'I');
    feed(s, &w);
    assert_int_equal(r->startup_status, 0);
    pgw_buf_free(&w);
    pgw_buf_free(&out);
    return s;
}

/* The step pgw_hostplan_check gives target on a server reporting hot/ro,
 * with the first host current. */
static pgw_hostplan_step_t check(const char *target, const char *hot, const char *ro,
                                 const char **reason, const char **probe)
{
    char cs[128];
    snprintf(cs, sizeof cs, "host=a,b target_session_attrs=%s", target);
    pgw_conninfo_t *ci = parse(cs);
    pgw_hostplan_t *p = plan_of(ci);
    assert_int_equal(pgw_hostplan_next(p, NULL), 1);
    rec_t r;
    pgw_session_t *s = started(&r, hot, ro);
    pgw_hostplan_step_t step = pgw_hostplan_check(p, s);
    *reason = pgw_hostplan_reason(p);
    *probe = pgw_hostplan_probe_sql(p);
    pgw_session_free(s);
    pgw_hostplan_free(p);
    pgw_conninfo_free(ci);
    return step;
}

/* Hosts come in the connection string's order, each once, with its
 * position; then none. */
static void test_order(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse("host=a,b,/tmp port=1,2,3");
    pgw_hostplan_t *p = plan_of(ci);
    assert_int_equal(pgw_hostplan_index(p), (size_t)-1);
    const char *want[] = {"a", "b", "/tmp"};
    const uint16_t ports[] = {1, 2, 3};
    for (size_t i = 0; i < 3; i++) {
        pgw_host_t h;
        assert_int_equal(pgw_hostplan_next(p, &h), 1);
        assert_string_equal(h.host, want[i]);
        assert_int_equal(h.port, ports[i]);
        assert_int_equal(h.is_unix, i == 2);
        assert_int_equal(pgw_hostplan_index(p), i);
    }
    assert_int_equal(pgw_hostplan_next(p, NULL), 0);
    assert_int_equal(pgw_hostplan_next(p, NULL), 0);
    assert_int_equal(pgw_hostplan_index(p), (size_t)-1);
    pgw_hostplan_free(p);
    pgw_conninfo_free(ci);
}

/* load_balance_hosts=random: every host once per plan, in an order that
 * varies between plans; the index still names the host's place in the
 * string. */
static void test_load_balance(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse("host=h0,h1,h2,h3 load_balance_hosts=random");
    int first[4] = {0};
    for (int round = 0; round < 400; round++) {
        pgw_hostplan_t *p = plan_of(ci);
        int seen[4] = {0};
        pgw_host_t h;
        for (int i = 0; i < 4; i++) {
            assert_int_equal(pgw_hostplan_next(p, &h), 1);
            size_t at = pgw_hostplan_index(p);
            assert_true(at < 4);
            pgw_host_t named;
            assert_int_equal(pgw_conninfo_host(ci, at, &named), 0);
            assert_string_equal(h.host, named.host);
            seen[at]++;
            if (i == 0) first[at]++;
        }
        assert_int_equal(pgw_hostplan_next(p, NULL), 0);
        for (int i = 0; i < 4; i++)
            assert_int_equal(seen[i], 1);
        pgw_hostplan_free(p);
    }
    /* Each host led some plans: (3/4)^400 makes a miss vanishingly rare. */
    for (int i = 0; i < 4; i++)
        assert_true(first[i] > 0);
    pgw_conninfo_free(ci);

    ci = parse("host=h0,h1,h2,h3 load_balance_hosts=disable");
    pgw_hostplan_t *p = plan_of(ci);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(pgw_hostplan_next(p, NULL), 1);
        assert_int_equal(pgw_hostplan_index(p), i);
    }
    pgw_hostplan_free(p);
    pgw_conninfo_free(ci);
}

/* A host the options make unusable comes with its error, in its place. */
static void test_host_errors(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse("host=a,b,c port=1,0,3");
    pgw_hostplan_t *p = plan_of(ci);
    pgw_host_t h;
    assert_int_equal(pgw_hostplan_next(p, &h), 1);
    assert_null(h.error);
    assert_int_equal(pgw_hostplan_next(p, &h), 1);
    assert_string_equal(h.error, "invalid port number: \"0\"");
    assert_int_equal(h.error_ends_connect, 0);
    assert_int_equal(pgw_hostplan_next(p, &h), 1);
    assert_string_equal(h.host, "c");
    assert_null(h.error);
    pgw_hostplan_free(p);
    pgw_conninfo_free(ci);
}

/* What a failure means for the rest of the connect. */
static void test_failed(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse("host=a,b");
    pgw_hostplan_t *p = plan_of(ci);
    assert_int_equal(pgw_hostplan_next(p, NULL), 1);
    pgw_error_t starting, refused;
    memset(&starting, 0, sizeof starting);
    memset(&refused, 0, sizeof refused);
    starting.sqlstate = "57P03";
    refused.sqlstate = "28P01";
    assert_int_equal(pgw_hostplan_failed(p, -111 /* ECONNREFUSED */, NULL),
                     PGW_HOSTPLAN_NEXT_ADDRESS);
    assert_int_equal(pgw_hostplan_failed(p, PGW_ETIMEDOUT, NULL), PGW_HOSTPLAN_NEXT_ADDRESS);
    assert_int_equal(pgw_hostplan_failed(p, PGW_ECONNLOST, NULL), PGW_HOSTPLAN_NEXT_ADDRESS);
    assert_int_equal(pgw_hostplan_failed(p, PGW_ECONNINFO, NULL), PGW_HOSTPLAN_NEXT_ADDRESS);
    assert_int_equal(pgw_hostplan_failed(p, PGW_EDNS, NULL), PGW_HOSTPLAN_NEXT_HOST);
    assert_int_equal(pgw_hostplan_failed(p, PGW_ETARGET, NULL), PGW_HOSTPLAN_NEXT_HOST);
    assert_int_equal(pgw_hostplan_failed(p, PGW_ESERVER, &starting), PGW_HOSTPLAN_NEXT_HOST);
    assert_int_equal(pgw_hostplan_failed(p, PGW_ESERVER, &refused), PGW_HOSTPLAN_END);
    assert_int_equal(pgw_hostplan_failed(p, PGW_ESERVER, NULL), PGW_HOSTPLAN_END);
    assert_int_equal(pgw_hostplan_failed(p, PGW_EAUTH, NULL), PGW_HOSTPLAN_END);
    assert_int_equal(pgw_hostplan_failed(p, PGW_ETLS, NULL), PGW_HOSTPLAN_END);
    assert_int_equal(pgw_hostplan_failed(p, PGW_EPROTO, NULL), PGW_HOSTPLAN_END);
    assert_int_equal(pgw_hostplan_failed(p, PGW_ENOMEM, NULL), PGW_HOSTPLAN_END);
    assert_int_equal(pgw_hostplan_failed(NULL, PGW_ETIMEDOUT, NULL), PGW_HOSTPLAN_END);
    pgw_hostplan_free(p);
    pgw_conninfo_free(ci);
}

/* target_session_attrs decided from in_hot_standby and
 * default_transaction_read_only, with libpq's reasons. */
static void test_check_reported(void **state)
{
    (void)state;
    const char *reason, *probe;
    static const struct {
        const char *target, *hot, *ro;
        pgw_hostplan_step_t step;
        const char *reason;
    } cases[] = {
        {"any", "on", "on", PGW_HOSTPLAN_ACCEPT, NULL},
        {"read-write", "off", "off", PGW_HOSTPLAN_ACCEPT, NULL},
        {"read-write", "off", "on", PGW_HOSTPLAN_NEXT_HOST, "session is read-only"},
        {"read-write", "on", "off", PGW_HOSTPLAN_NEXT_HOST, "session is read-only"},
        {"read-only", "off", "on", PGW_HOSTPLAN_ACCEPT, NULL},
        {"read-only", "on", "off", PGW_HOSTPLAN_ACCEPT, NULL},
        {"read-only", "off", "off", PGW_HOSTPLAN_NEXT_HOST, "session is not read-only"},
        {"primary", "off", "on", PGW_HOSTPLAN_ACCEPT, NULL},
        {"primary", "on", "on", PGW_HOSTPLAN_NEXT_HOST, "server is in hot standby mode"},
        {"standby", "on", "on", PGW_HOSTPLAN_ACCEPT, NULL},
        {"standby", "off", "off", PGW_HOSTPLAN_NEXT_HOST, "server is not in hot standby mode"},
        {"prefer-standby", "on", "on", PGW_HOSTPLAN_ACCEPT, NULL},
        {"prefer-standby", "off", "off", PGW_HOSTPLAN_NEXT_HOST,
         "server is not in hot standby mode"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pgw_hostplan_step_t step =
            check(cases[i].target, cases[i].hot, cases[i].ro, &reason, &probe);
        assert_int_equal(step, cases[i].step);
        assert_null(probe);
        if (cases[i].reason)
            assert_string_equal(reason, cases[i].reason);
        else
            assert_null(reason);
    }
}

/* A server that reports neither value is asked, as libpq asks it. */
static void test_probe(void **state)
{
    (void)state;
    const char *reason, *probe;
    assert_int_equal(check("any", NULL, NULL, &reason, &probe), PGW_HOSTPLAN_ACCEPT);
    assert_null(probe);
    assert_int_equal(check("read-write", NULL, NULL, &reason, &probe), PGW_HOSTPLAN_PROBE);
    assert_string_equal(probe, "SHOW transaction_read_only");
    assert_int_equal(check("read-only", "off", NULL, &reason, &probe), PGW_HOSTPLAN_PROBE);
    assert_string_equal(probe, "SHOW transaction_read_only");
    assert_int_equal(check("standby", NULL, "off", &reason, &probe), PGW_HOSTPLAN_PROBE);
    assert_string_equal(probe, "SELECT pg_catalog.pg_is_in_recovery()");

    static const struct {
        const char *target, *answer;
        pgw_hostplan_step_t step;
    } answers[] = {
        {"read-write", "off", PGW_HOSTPLAN_ACCEPT}, {"read-write", "on", PGW_HOSTPLAN_NEXT_HOST},
        {"read-only", "on", PGW_HOSTPLAN_ACCEPT},   {"read-only", "off", PGW_HOSTPLAN_NEXT_HOST},
        {"primary", "f", PGW_HOSTPLAN_ACCEPT},      {"primary", "t", PGW_HOSTPLAN_NEXT_HOST},
        {"standby", "t", PGW_HOSTPLAN_ACCEPT},      {"standby", "f", PGW_HOSTPLAN_NEXT_HOST},
        {"standby", NULL, PGW_HOSTPLAN_NEXT_HOST},
    };
    for (size_t i = 0; i < sizeof answers / sizeof answers[0]; i++) {
        char cs[96];
        snprintf(cs, sizeof cs, "host=a target_session_attrs=%s", answers[i].target);
        pgw_conninfo_t *ci = parse(cs);
        pgw_hostplan_t *p = plan_of(ci);
        assert_int_equal(pgw_hostplan_next(p, NULL), 1);
        /* no probe asked for yet */
        assert_int_equal(pgw_hostplan_probe_answer(p, "t", 1), PGW_HOSTPLAN_END);
        rec_t r;
        pgw_session_t *s = started(&r, NULL, NULL);
        assert_int_equal(pgw_hostplan_check(p, s), PGW_HOSTPLAN_PROBE);
        const char *a = answers[i].answer;
        assert_int_equal(pgw_hostplan_probe_answer(p, a, a ? strlen(a) : 0), answers[i].step);
        assert_null(pgw_hostplan_probe_sql(p));
        if (answers[i].step == PGW_HOSTPLAN_NEXT_HOST && a) assert_non_null(pgw_hostplan_reason(p));
        pgw_session_free(s);
        pgw_hostplan_free(p);
        pgw_conninfo_free(ci);
    }
}

/* prefer-standby: with no standby among the hosts, a second pass over all
 * of them accepts any server. */
static void test_prefer_standby_second_pass(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse("host=a,b target_session_attrs=prefer-standby");
    pgw_hostplan_t *p = plan_of(ci);
    rec_t r;
    pgw_session_t *primary = started(&r, "off", "off");
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(pgw_hostplan_next(p, NULL), 1);
        assert_int_equal(pgw_hostplan_index(p), i);
        assert_int_equal(pgw_hostplan_check(p, primary), PGW_HOSTPLAN_NEXT_HOST);
    }
    pgw_host_t h;
    assert_int_equal(pgw_hostplan_next(p, &h), 1);
    assert_string_equal(h.host, "a");
    assert_int_equal(pgw_hostplan_check(p, primary), PGW_HOSTPLAN_ACCEPT);
    assert_null(pgw_hostplan_reason(p));
    assert_int_equal(pgw_hostplan_next(p, NULL), 1);
    assert_int_equal(pgw_hostplan_next(p, NULL), 0);
    pgw_session_free(primary);
    pgw_hostplan_free(p);
    pgw_conninfo_free(ci);

    /* other targets make one pass */
    ci = parse("host=a,b target_session_attrs=standby");
    p = plan_of(ci);
    assert_int_equal(pgw_hostplan_next(p, NULL), 1);
    assert_int_equal(pgw_hostplan_next(p, NULL), 1);
    assert_int_equal(pgw_hostplan_next(p, NULL), 0);
    pgw_hostplan_free(p);
    pgw_conninfo_free(ci);
}

static void test_bad_arguments_and_memory(void **state)
{
    (void)state;
    pgw_conninfo_t *ci = parse("host=a,b,c");
    pgw_hostplan_t *p = NULL;
    assert_int_equal(pgw_hostplan_new(NULL, ci, NULL), PGW_EINVAL);
    assert_int_equal(pgw_hostplan_new(&p, NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_hostplan_next(NULL, NULL), PGW_EINVAL);
    assert_int_equal(pgw_hostplan_index(NULL), (size_t)-1);
    assert_int_equal(pgw_hostplan_check(NULL, NULL), PGW_HOSTPLAN_END);
    assert_null(pgw_hostplan_probe_sql(NULL));
    assert_int_equal(pgw_hostplan_probe_answer(NULL, "t", 1), PGW_HOSTPLAN_END);
    assert_null(pgw_hostplan_reason(NULL));
    pgw_hostplan_free(NULL);

    pgt_alloc_t fa;
    pgt_alloc_init(&fa);
    int ok = 0;
    for (long n = 1; !ok; n++) {
        pgt_alloc_reset(&fa);
        fa.fail_at = n;
        int rc = pgw_hostplan_new(&p, ci, &fa.base);
        if (rc == 0) {
            ok = 1;
            assert_int_equal(pgw_hostplan_next(p, NULL), 1);
            pgw_hostplan_free(p);
        } else {
            assert_int_equal(rc, PGW_ENOMEM);
            assert_null(p);
        }
        assert_int_equal(fa.blocks, 0);
        assert_true(n < 10);
    }
    pgw_conninfo_free(ci);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_load_balance),
        cmocka_unit_test(test_host_errors),
        cmocka_unit_test(test_failed),
        cmocka_unit_test(test_check_reported),
        cmocka_unit_test(test_probe),
        cmocka_unit_test(test_prefer_standby_second_pass),
        cmocka_unit_test(test_bad_arguments_and_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
