/*
 * Connect rules where libpq defines the behaviour, libpq 15 (linked here)
 * beside libpgwire on the same connection strings:
 *   - sslmode=prefer (and allow, disable) against a server that answers 'N'
 *     to SSLRequest (a private cluster with ssl=off): a wrong password is
 *     tried as often as libpq tries it, counted in the server's log;
 *   - host=@name, an abstract unix socket the private cluster listens on;
 *   - a keepalive value the kernel refuses fails the attempt before any TCP
 *     connection is opened (a listener that never accepts counts them);
 *   - a non-ASCII host name goes to getaddrinfo as written, not as
 *     punycode, and one that is not UTF-8 is not refused (this program's
 *     getaddrinfo records what each library asks the resolver);
 *   - a connection option error says what libpq says (port=abc).
 * Options libpq 15 lacks, tested against libpgwire alone with libpq 16 and
 * 18's rules and messages (fe-connect.c, fe-auth.c): sslcertmode=require
 * when the server asked for a certificate and none was sent (the shared
 * cluster asks every TLS client for one: it has ssl_ca_file), require_auth
 * '', oauth, !oauth (also PGREQUIREAUTH= empty), the refusals' messages,
 * min_protocol_version=3.2 alone, sslrootcert=system with a weak sslmode.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include "pgpair.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/conn.h"
#include "pgwire/conninfo.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

/* ------------------------------------------------------ the resolver's view */

/* Names containing this go nowhere: recorded, and answered EAI_NONAME. */
#define MARK "pgwtest-nohost"

static pthread_mutex_t asked_lock = PTHREAD_MUTEX_INITIALIZER;
static char asked[256];

/* Both libraries (libpq.so, libuv.so and this program's static libpgwire)
 * call this getaddrinfo: the program's own definition interposes. */
int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
                struct addrinfo **res)
{
    if (node && strstr(node, MARK)) {
        pthread_mutex_lock(&asked_lock);
        snprintf(asked, sizeof asked, "%s", node);
        pthread_mutex_unlock(&asked_lock);
        return EAI_NONAME;
    }
    int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
    void *sym = dlsym(RTLD_NEXT, "getaddrinfo");
    memcpy(&real, &sym, sizeof real); /* POSIX: a function's address as void * */
    return real(node, service, hints, res);
}

static void take_asked(char *out, size_t n)
{
    pthread_mutex_lock(&asked_lock);
    snprintf(out, n, "%s", asked);
    asked[0] = '\0';
    pthread_mutex_unlock(&asked_lock);
}

/* ------------------------------------------------------------ both libraries */

/* libpq's connect: 1 if connected; its message without the final newline. */
static int libpq_connect(const char *ci, char *msg, size_t n)
{
    PGconn *pq = PQconnectdb(ci);
    assert_non_null(pq);
    int ok = PQstatus(pq) == CONNECTION_OK;
    snprintf(msg, n, "%s", PQerrorMessage(pq));
    size_t len = strlen(msg);
    if (len && msg[len - 1] == '\n') msg[len - 1] = '\0';
    PQfinish(pq);
    return ok;
}

/* libpgwire's blocking connect: its status, and its message in msg. */
static int pgw_connect(const char *ci, char *msg, size_t n)
{
    pgw_client_t *c = NULL;
    msg[0] = '\0';
    int rc = pgw_client_connect_err(&c, ci, NULL, msg, n);
    if (rc == 0) {
        pgw_result_t *res = NULL;
        assert_int_equal(pgw_client_exec(c, "SELECT 1", &res), 0);
        pgw_result_free(res);
        pgw_client_close(c);
    }
    return rc;
}

/* Both fail with the same message; returns libpgwire's status. */
static int both_fail(const char *ci)
{
    char pq[4096], pg[4096];
    assert_false(libpq_connect(ci, pq, sizeof pq));
    int rc = pgw_connect(ci, pg, sizeof pg);
    print_message("conninfo:  %s\nlibpq:     %s\nlibpgwire: %s (%s)\n\n", ci, pq, pg,
                  pgw_err_name(rc));
    assert_int_not_equal(rc, 0);
    if (strcmp(pq, pg) != 0) fail_msg("messages differ\n  libpq:     %s\n  libpgwire: %s", pq, pg);
    return rc;
}

/* --------------------------------------------------- the private cluster */

/* A cluster of this test's own: ssl=off (it answers 'N' to SSLRequest) and
 * an extra unix socket in the abstract namespace. */
static char tmpdir[64], cluster[128], abstract_name[64];

static const char *pv(const char *key)
{
    return pgt_dir_env(cluster, key);
}

static int group_setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/pgw-rules.XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    snprintf(cluster, sizeof cluster, "%s/cluster", tmpdir);
    if (pgt_script_exit("pg-cluster.sh", "start", cluster, NULL) != 0) return -1;
    snprintf(abstract_name, sizeof abstract_name, "@pgw-rules-%d", (int)getpid());
    char conf[512];
    snprintf(conf, sizeof conf, "%s/pgwire.conf", pgt_dir_env(cluster, "PGW_TEST_DATADIR"));
    FILE *f = fopen(conf, "a");
    if (!f) return -1;
    fprintf(f, "ssl = off\nunix_socket_directories = '%s, %s'\nlog_connections = on\n",
            pgt_dir_env(cluster, "PGHOST"), abstract_name);
    fclose(f);
    return pgt_script_exit("pg-cluster.sh", "restart", cluster, NULL) == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    pgt_script_exit("pg-cluster.sh", "stop", cluster, NULL);
    rmdir(tmpdir);
    return 0;
}

/* Lines of the private server's log containing needle, from offset on. */
static long log_size(void)
{
    struct stat st;
    return stat(pv("PGW_TEST_SERVER_LOG"), &st) == 0 ? (long)st.st_size : 0;
}

static int log_count(long from, const char *needle)
{
    FILE *f = fopen(pv("PGW_TEST_SERVER_LOG"), "r");
    assert_non_null(f);
    fseek(f, from, SEEK_SET);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

/* ------------------------------------------------------------------ tests */

#define AUTH_FAILED "password authentication failed for user"

/* libpq retries a failed login in plaintext only when the first try used
 * TLS: against a server that said 'N', the login is sent once. */
static void test_wrong_password_nossl_server(void **state)
{
    static const char *const modes[] = {"", "sslmode=prefer", "sslmode=allow", "sslmode=disable"};
    for (size_t i = 0; i < sizeof modes / sizeof *modes; i++) {
        char ci[512];
        snprintf(ci, sizeof ci, "host=127.0.0.1 port=%s user=%s password=wrong dbname=%s %s",
                 pv("PGPORT"), pv("PGW_TEST_SCRAM_USER"), pv("PGDATABASE"), modes[i]);
        char pq[4096], pg[4096];
        long at = log_size();
        assert_false(libpq_connect(ci, pq, sizeof pq));
        int by_libpq = log_count(at, AUTH_FAILED);
        at = log_size();
        int rc = pgw_connect(ci, pg, sizeof pg);
        int by_pgw = log_count(at, AUTH_FAILED);
        print_message("%-16s libpq %d login(s), libpgwire %d\n  libpq:     %s\n  libpgwire: %s\n",
                      *modes[i] ? modes[i] : "(default)", by_libpq, by_pgw, pq, pg);
        assert_int_equal(rc, PGW_ESERVER);
        assert_int_equal(by_pgw, by_libpq);
        assert_string_equal(pg, pq);
        /* allow retries with TLS, which this server refuses: twice in both */
        assert_int_equal(by_pgw, strstr(modes[i], "allow") ? 2 : 1);
    }
}

/* host=@name: the abstract socket the private server listens on. */
static void test_abstract_socket(void **state)
{
    char ci[512], pq[4096], pg[4096];
    snprintf(ci, sizeof ci, "host=%s port=%s user=%s dbname=%s", abstract_name, pv("PGPORT"),
             pv("PGUSER"), pv("PGDATABASE"));
    assert_true(libpq_connect(ci, pq, sizeof pq));
    int rc = pgw_connect(ci, pg, sizeof pg);
    if (rc != 0) fail_msg("libpgwire: %s (%s)", pg, pgw_err_name(rc));
    /* a name nothing listens on: the same report as libpq's */
    snprintf(ci, sizeof ci, "host=@pgw-nothing-%d port=%s user=%s dbname=%s", (int)getpid(),
             pv("PGPORT"), pv("PGUSER"), pv("PGDATABASE"));
    assert_int_equal(both_fail(ci), UV_ECONNREFUSED);
}

/* The connections that reached the listener (accepted and closed). */
static int drain(int fd)
{
    int n = 0, c;
    fcntl(fd, F_SETFL, O_NONBLOCK);
    while ((c = accept(fd, NULL, NULL)) >= 0) {
        close(c);
        n++;
    }
    return n;
}

/* libpq sets the keepalive options before connect(): a value the kernel
 * refuses (TCP_KEEPIDLE above 32767, TCP_KEEPCNT above 127) fails the
 * attempt without a connection. */
static void test_keepalive_refused_before_connect(void **state)
{
    static const char *const opts[] = {"keepalives_idle=40000", "keepalives_count=1000",
                                       "keepalives_interval=40000"};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
        unsigned port;
        int fd = pgt_loopback_socket(&port, 1); /* never accepts: connects queue */
        char ci[512];
        snprintf(ci, sizeof ci, "host=127.0.0.1 port=%u user=x dbname=x connect_timeout=5 %s", port,
                 opts[i]);
        char pq[4096];
        assert_false(libpq_connect(ci, pq, sizeof pq));
        int by_libpq = drain(fd);
        pgw_client_t *c = NULL;
        char pg[4096];
        int rc = pgw_client_connect_err(&c, ci, NULL, pg, sizeof pg);
        int by_pgw = drain(fd);
        close(fd);
        print_message("%s: libpq %d connection(s), libpgwire %d (%s)\n  libpq:     %s\n  "
                      "libpgwire: %s\n",
                      opts[i], by_libpq, by_pgw, pgw_err_name(rc), pq, pg);
        assert_int_equal(rc, -EINVAL);
        assert_int_equal(by_libpq, 0);
        assert_int_equal(by_pgw, 0);
        assert_string_equal(pg, pq);
    }
}

/* The bytes of the host name reach getaddrinfo unchanged, valid UTF-8 or
 * not, and the failure reads as libpq's. */
static void test_host_name_bytes(void **state)
{
    static const char *const names[] = {"h\xc3\xa9llo." MARK ".invalid",
                                        "\xff\xfe." MARK ".invalid", "\xe6\x97\xa5." MARK};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char ci[512], by_libpq[256], by_pgw[256];
        snprintf(ci, sizeof ci, "host=%s port=5432 user=x dbname=x", names[i]);
        char pq[4096];
        assert_false(libpq_connect(ci, pq, sizeof pq));
        take_asked(by_libpq, sizeof by_libpq);
        char pg[4096];
        int rc = pgw_connect(ci, pg, sizeof pg);
        take_asked(by_pgw, sizeof by_pgw);
        print_message("libpq asked \"%s\", libpgwire \"%s\"\n  libpq:     %s\n  libpgwire: %s\n",
                      by_libpq, by_pgw, pq, pg);
        assert_string_equal(by_libpq, names[i]);
        assert_string_equal(by_pgw, by_libpq);
        assert_int_equal(rc, PGW_EDNS);
        assert_string_equal(pg, pq);
    }
}

/* A bad option reaches the user in libpq's words, not as a bare code. */
static void test_option_error_text(void **state)
{
    static const char *const bad[] = {"port=abc", "sslmode=bogus", "nosuchoption=1",
                                      "host='unterminated", "postgresql://h/d?port=x y"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char pq[4096], pg[4096];
        assert_false(libpq_connect(bad[i], pq, sizeof pq));
        assert_int_equal(pgw_connect(bad[i], pg, sizeof pg), PGW_ECONNINFO);
        print_message("%s\n  libpq:     %s\n  libpgwire: %s\n", bad[i], pq, pg);
        assert_string_equal(pg, pq);
    }
}

/* ------------------------------------- libpq 16/18 rules, libpgwire alone */

/* Connect to the shared cluster; status, and the message in msg. */
static int shared(const char *extra, char *msg, size_t n)
{
    char ci[2048];
    pgt_conninfo(ci, sizeof ci, extra);
    return pgw_connect(ci, msg, n);
}

static int shared_tcp(const char *user, const char *password, const char *extra, char *msg,
                      size_t n)
{
    char ci[2048];
    pgt_conninfo_tcp(ci, sizeof ci, user, password, extra);
    return pgw_connect(ci, msg, n);
}

/* libpq 16: sslcertmode=require needs a certificate that was sent, not
 * only asked for ("server accepted connection without a valid SSL
 * certificate"). */
static void test_sslcertmode_require(void **state)
{
    pgt_require_server();
    char msg[4096], extra[1024];
    int rc = shared_tcp(pgt_env_required("PGUSER"), NULL,
                        "sslmode=require sslcertmode=require sslcert=/nonexistent/client.crt", msg,
                        sizeof msg);
    print_message("no certificate: %s (%s)\n", msg, pgw_err_name(rc));
    assert_int_equal(rc, PGW_ETLS);
    assert_non_null(strstr(msg, "failed: server accepted connection without a valid SSL "
                                "certificate"));
    snprintf(extra, sizeof extra, "sslmode=require sslcertmode=require sslcert=%s sslkey=%s",
             pgt_env_required("PGW_TEST_SSL_CLIENT_CERT"),
             pgt_env_required("PGW_TEST_SSL_CLIENT_KEY"));
    rc = shared_tcp(pgt_env_required("PGUSER"), NULL, extra, msg, sizeof msg);
    if (rc != 0) fail_msg("with a certificate: %s (%s)", msg, pgw_err_name(rc));
    /* sslcertmode=allow (the default) needs neither */
    rc = shared_tcp(pgt_env_required("PGUSER"), NULL,
                    "sslmode=require sslcert=/nonexistent/client.crt", msg, sizeof msg);
    assert_int_equal(rc, 0);
}

/* libpq 18: '' allows every method, oauth allows only OAUTHBEARER (and so
 * refuses trust), !oauth everything else. */
static void test_require_auth_values(void **state)
{
    pgt_require_server();
    char msg[4096];
    assert_int_equal(shared("require_auth=''", msg, sizeof msg), 0);
    assert_int_equal(shared("require_auth=!oauth", msg, sizeof msg), 0);
    assert_int_equal(shared("require_auth=none,oauth", msg, sizeof msg), 0);
    assert_int_equal(shared("require_auth=oauth", msg, sizeof msg), PGW_EAUTHPOLICY);
    assert_non_null(strstr(msg, "failed: authentication method requirement \"oauth\" failed: "
                                "server did not complete authentication"));
    /* PGREQUIREAUTH= set but empty, as a shell leaves it */
    setenv("PGREQUIREAUTH", "", 1);
    int rc = shared(NULL, msg, sizeof msg);
    unsetenv("PGREQUIREAUTH");
    if (rc != 0) fail_msg("PGREQUIREAUTH='': %s (%s)", msg, pgw_err_name(rc));
    rc = shared_tcp(pgt_env_required("PGW_TEST_SCRAM_USER"),
                    pgt_env_required("PGW_TEST_SCRAM_PASSWORD"), "require_auth=!oauth,!md5", msg,
                    sizeof msg);
    assert_int_equal(rc, 0);
}

/* Each refusal says which method the server asked for and which rule
 * refused it, in libpq 18's words. */
static void test_refusal_messages(void **state)
{
    pgt_require_server();
    static const struct {
        const char *who, *extra, *says;
    } cases[] = {
        {"SCRAM", "require_auth=md5",
         "authentication method requirement \"md5\" failed: server requested SASL authentication"},
        {"SCRAM", "sslmode=disable require_auth=oauth",
         "authentication method requirement \"oauth\" failed: server requested SCRAM-SHA-256 "
         "authentication"},
        {"SCRAM", "require_auth=!scram-sha-256",
         "authentication method requirement \"!scram-sha-256\" failed: server requested "
         "SCRAM-SHA-256-PLUS authentication"},
        {"MD5", "require_auth=scram-sha-256",
         "authentication method requirement \"scram-sha-256\" failed: server requested a hashed "
         "password"},
        {"CLEAR", "require_auth=md5,scram-sha-256",
         "authentication method requirement \"md5,scram-sha-256\" failed: server requested a "
         "cleartext password"},
        {"TRUST", "require_auth=password",
         "authentication method requirement \"password\" failed: server did not complete "
         "authentication"},
        {"MD5", "sslmode=require channel_binding=require",
         "channel binding required but not supported by server's authentication request"},
        {"SCRAM", "sslmode=disable channel_binding=require",
         "channel binding required, but SSL not in use"},
        {"TRUST", "sslmode=require channel_binding=require",
         "channel binding required, but server authenticated client without channel binding"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char user[64], password[64], msg[4096];
        int trust = strcmp(cases[i].who, "TRUST") == 0;
        snprintf(user, sizeof user, "PGW_TEST_%s_USER", cases[i].who);
        snprintf(password, sizeof password, "PGW_TEST_%s_PASSWORD", cases[i].who);
        int rc =
            shared_tcp(trust ? pgt_env_required("PGUSER") : pgt_env_required(user),
                       trust ? NULL : pgt_env_required(password), cases[i].extra, msg, sizeof msg);
        print_message("%s %s: %s\n", cases[i].who, cases[i].extra, msg);
        assert_int_equal(rc, PGW_EAUTHPOLICY);
        const char *colon = strstr(msg, "failed: ");
        assert_non_null(colon);
        assert_string_equal(colon + strlen("failed: "), cases[i].says);
    }
}

/* libpq 18's parse rules: require_auth, min/max_protocol_version,
 * sslrootcert=system. */
static void test_option_rules(void **state)
{
    static const struct {
        const char *ci, *says; /* says NULL: accepted */
    } cases[] = {
        {"require_auth=", NULL},
        {"require_auth=oauth", NULL},
        {"require_auth=!oauth", NULL},
        {"require_auth=scram-sha-256,oauth,none", NULL},
        {"require_auth=md5,!password",
         "negative require_auth method \"!password\" cannot be mixed with non-negative methods"},
        {"require_auth=!md5,password",
         "require_auth method \"password\" cannot be mixed with negative methods"},
        {"require_auth=!md5,!md5", "require_auth method \"!md5\" is specified more than once"},
        {"require_auth=md5,kerberos", "invalid require_auth value: \"kerberos\""},
        {"require_auth=!bogus", "invalid require_auth value: \"bogus\""},
        {"require_auth=md5,", "invalid require_auth value: \"\""},
        {"min_protocol_version=3.2", NULL},
        {"min_protocol_version=latest", NULL},
        {"min_protocol_version=3.2 max_protocol_version=3.0",
         "\"min_protocol_version\" is greater than \"max_protocol_version\""},
        {"sslrootcert=system", NULL},
        {"sslrootcert=system sslmode=verify-full", NULL},
        {"sslrootcert=system sslmode=require",
         "weak sslmode \"require\" may not be used with sslrootcert=system (use \"verify-full\")"},
        {"sslrootcert=system sslmode=verify-ca",
         "weak sslmode \"verify-ca\" may not be used with sslrootcert=system (use "
         "\"verify-full\")"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pgw_conninfo_t *ci = NULL;
        char err[512] = "";
        int rc = pgw_conninfo_parse(&ci, cases[i].ci, NULL, err, sizeof err);
        print_message("%s: %d %s\n", cases[i].ci, rc, err);
        if (!cases[i].says) {
            if (rc != 0) fail_msg("%s refused: %s", cases[i].ci, err);
        } else {
            assert_int_equal(rc, PGW_ECONNINFO);
            assert_string_equal(err, cases[i].says);
        }
        if (rc == 0 && strstr(cases[i].ci, "min_protocol_version=3.2"))
            assert_string_equal(pgw_conninfo_get(ci, "max_protocol_version"), "latest");
        if (rc == 0 && strcmp(cases[i].ci, "require_auth=") == 0)
            assert_string_equal(pgw_conninfo_get(ci, "max_protocol_version"), "3.0");
        pgw_conninfo_free(ci);
    }
    /* min_protocol_version=3.2 alone asks for 3.2; the server (15) offers
     * 3.0, which the minimum refuses */
    char msg[4096];
    int rc = shared("min_protocol_version=3.2", msg, sizeof msg);
    print_message("min_protocol_version=3.2: %s (%s)\n", msg, pgw_err_name(rc));
    assert_int_equal(rc, PGW_ENOTSUP);
    assert_non_null(strstr(msg, "server does not support protocol 3.2"));
}

int main(void)
{
    const struct CMUnitTest private[] = {
        cmocka_unit_test(test_wrong_password_nossl_server),
        cmocka_unit_test(test_abstract_socket),
    };
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keepalive_refused_before_connect),
        cmocka_unit_test(test_host_name_bytes),
        cmocka_unit_test(test_option_error_text),
        cmocka_unit_test(test_sslcertmode_require),
        cmocka_unit_test(test_require_auth_values),
        cmocka_unit_test(test_refusal_messages),
        cmocka_unit_test(test_option_rules),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    return failed + cmocka_run_group_tests(private, group_setup, group_teardown);
}
