/*
 * Differential test of connection options against libpq 15, the reference a
 * libpq user expects: generated keyword/value strings and URIs, environments,
 * service files and password files are given to libpq (PQconnectdb) and to
 * libpgwire (pgw_client_connect_err), each connecting to a capture listener
 * of this test (Unix sockets in a temporary directory and 127.0.0.1 ports).
 * The listener answers SSLRequest/GSSENCRequest with 'N' (so sslmode
 * require and stronger, given or reached through requiressl=1 or
 * PGREQUIRESSL=1, fail over TCP in both libraries and connect in plaintext over a Unix
 * socket, where TLS is never requested), records the
 * StartupMessage, asks for a cleartext password, records it and ends with an
 * ErrorResponse, so each library contacts at most one host per case. The two
 * records (which listener, the parameters in order, the password) and the
 * resolved option values must agree.
 *
 * Documented exceptions (never generated, or filtered as stated):
 *   - options newer than libpq 15: require_auth (16), load_balance_hosts
 *     (16), sslcertmode (16), gssdelegation (16), sslnegotiation (17),
 *     min_protocol_version / max_protocol_version (18), servicefile (18):
 *     libpq 15 rejects them as unknown keywords; libpgwire follows the
 *     release that added them;
 *   - the "host", "client_encoding" and "passfile" option values: libpgwire
 *     reports the default socket directory, "auto" and an unset passfile
 *     as given, libpq reports what it resolved them to (the hosts tried,
 *     the encoding sent and the password sent are compared instead).
 *
 * Cases whose agreement depends on the connect code calling into conninfo
 * (per-host errors, TCP options, requirepeer) are labelled "[connect.c
 * wiring]" in failure reports.
 *
 * Deterministic: PGW_CONNINFO_DIFF_SEED (default 20250101) and
 * PGW_CONNINFO_DIFF_CASES (default 1500; 120 under valgrind) are printed on
 * failure with each differing case.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>
#include <valgrind/valgrind.h>

#include "conn/peercred.h"
#include "pgtest.h"
#include "pgwire/client.h"
#include "pgwire/conninfo.h"

/* ------------------------------------------------------------ listener */

#define MAX_LISTENERS 16
#define MAX_RECORDS   4

typedef struct record {
    char where[160];
    char params[2048]; /* "name=value\n" in the order sent */
    char password[256];
} record_t;

static struct {
    int fd[MAX_LISTENERS];
    char name[MAX_LISTENERS][160];
    int n;
    int stop[2];
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int busy;
    record_t rec[MAX_RECORDS];
    int nrec;
} L = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static char tmpdir[128];
static int port_a, port_b, port_closed;

static int read_exact(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* One length-prefixed packet without a type byte; returns its length. */
static int read_packet(int fd, uint8_t *buf, size_t cap)
{
    uint8_t h[4];
    if (read_exact(fd, h, 4) != 0) return -1;
    uint32_t len = be32(h);
    if (len < 8 || len - 4 > cap) return -1;
    if (read_exact(fd, buf, len - 4) != 0) return -1;
    return (int)(len - 4);
}

static void write_all(int fd, const void *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL); /* the client may be gone */
        if (w <= 0) return;
        p = (const uint8_t *)p + w;
        n -= (size_t)w;
    }
}

static void serve(int fd, const char *where)
{
    struct timeval tv = {3, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    uint8_t buf[10000];
    int n;
    for (;;) {
        n = read_packet(fd, buf, sizeof buf - 1);
        if (n < 4) return;
        uint32_t code = be32(buf);
        if (code != 80877103 && code != 80877104) break; /* SSLRequest, GSSENCRequest */
        write_all(fd, "N", 1);
    }
    if (be32(buf) != 196608) return;
    record_t r;
    memset(&r, 0, sizeof r);
    snprintf(r.where, sizeof r.where, "%s", where);
    buf[n] = '\0';
    for (int i = 4; i < n && buf[i];) {
        const char *k = (const char *)buf + i;
        i += (int)strlen(k) + 1;
        const char *v = i < n ? (const char *)buf + i : "";
        i += (int)strlen(v) + 1;
        size_t used = strlen(r.params);
        snprintf(r.params + used, sizeof r.params - used, "%s=%s\n", k, v);
    }
    static const uint8_t auth[] = {'R', 0, 0, 0, 8, 0, 0, 0, 3};
    write_all(fd, auth, sizeof auth);
    uint8_t t;
    snprintf(r.password, sizeof r.password, "<none>");
    if (read_exact(fd, &t, 1) == 0 && t == 'p') {
        n = read_packet(fd, buf, sizeof buf - 1);
        if (n >= 0) {
            buf[n] = '\0';
            snprintf(r.password, sizeof r.password, "%.200s", (char *)buf);
        }
    }
    pthread_mutex_lock(&L.mu);
    if (L.nrec < MAX_RECORDS) L.rec[L.nrec++] = r;
    pthread_mutex_unlock(&L.mu);
    static const char err[] = "SFATAL\0C28P01\0Mcapture listener\0\0";
    uint8_t e[64] = {'E'};
    uint32_t len = 4 + sizeof err - 1;
    e[1] = (uint8_t)(len >> 24), e[2] = (uint8_t)(len >> 16), e[3] = (uint8_t)(len >> 8);
    e[4] = (uint8_t)len;
    memcpy(e + 5, err, sizeof err - 1);
    write_all(fd, e, 5 + sizeof err - 1);
}

static void *listener_main(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd p[MAX_LISTENERS + 1];
        for (int i = 0; i < L.n; i++)
            p[i] = (struct pollfd){L.fd[i], POLLIN, 0};
        p[L.n] = (struct pollfd){L.stop[0], POLLIN, 0};
        if (poll(p, (nfds_t)L.n + 1, -1) < 0 && errno != EINTR) return NULL;
        if (p[L.n].revents) return NULL;
        for (int i = 0; i < L.n; i++) {
            if (!p[i].revents) continue;
            pthread_mutex_lock(&L.mu);
            L.busy++;
            pthread_mutex_unlock(&L.mu);
            int c = accept(L.fd[i], NULL, NULL);
            if (c >= 0) {
                serve(c, L.name[i]);
                close(c);
            }
            pthread_mutex_lock(&L.mu);
            L.busy--;
            pthread_cond_broadcast(&L.cv);
            pthread_mutex_unlock(&L.mu);
        }
    }
}

static void add_listener(int fd, const char *fmt, ...)
{
    assert_true(L.n < MAX_LISTENERS);
    assert_int_equal(listen(fd, 16), 0);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L.name[L.n], sizeof L.name[0], fmt, ap);
    va_end(ap);
    L.fd[L.n++] = fd;
}

static int tcp_bind(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static int bound_port(int fd)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    return ntohs(a.sin_port);
}

static void unix_listener(const char *dir, int port)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int n = snprintf(a.sun_path, sizeof a.sun_path, "%s/.s.PGSQL.%d", dir, port);
    assert_true(n > 0 && (size_t)n < sizeof a.sun_path);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    add_listener(fd, "unix:%s", a.sun_path);
}

static char dir_s0[200], dir_s1[200], dir_long[200];

static void start_listeners(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/pgw-cidiff-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    snprintf(dir_s0, sizeof dir_s0, "%s/s0", tmpdir);
    snprintf(dir_s1, sizeof dir_s1, "%s/s1", tmpdir);
    assert_int_equal(mkdir(dir_s0, 0700), 0);
    assert_int_equal(mkdir(dir_s1, 0700), 0);
    /* a directory name that makes the socket path 108 bytes */
    snprintf(dir_long, sizeof dir_long, "%s/", tmpdir);
    while (strlen(dir_long) < 108 - strlen("/.s.PGSQL.5432"))
        strcat(dir_long, "l");
    int a = tcp_bind(0), b = tcp_bind(0), c = tcp_bind(0);
    port_a = bound_port(a);
    port_b = bound_port(b);
    port_closed = bound_port(c);
    close(c);
    add_listener(a, "tcp:127.0.0.1:%d", port_a);
    add_listener(b, "tcp:127.0.0.1:%d", port_b);
    const int ports[] = {port_a, port_b, 5432};
    for (int i = 0; i < 3; i++) {
        unix_listener(dir_s0, ports[i]);
        unix_listener(dir_s1, ports[i]);
    }
    assert_int_equal(pipe(L.stop), 0);
    assert_int_equal(pthread_create(&L.thread, NULL, listener_main, NULL), 0);
}

static void stop_listeners(void)
{
    if (write(L.stop[1], "x", 1) != 1) fail_msg("could not stop the listener");
    pthread_join(L.thread, NULL);
    for (int i = 0; i < L.n; i++)
        close(L.fd[i]);
    close(L.stop[0]);
    close(L.stop[1]);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* Wait until the listener is idle; return the first record (or none). */
static void take_record(record_t *out)
{
    pthread_mutex_lock(&L.mu);
    while (L.busy)
        pthread_cond_wait(&L.cv, &L.mu);
    memset(out, 0, sizeof *out);
    if (L.nrec)
        *out = L.rec[0];
    else
        snprintf(out->where, sizeof out->where, "<no host reached>");
    L.nrec = 0;
    pthread_mutex_unlock(&L.mu);
}

/* ---------------------------------------------------------- generator */

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

#define PICK(arr) (arr)[rnd((uint32_t)(sizeof(arr) / sizeof((arr)[0])))]

typedef struct kv {
    char key[40];
    char val[300];
} kv_t;

typedef struct gencase {
    kv_t opt[24];
    int nopt;
    int uri;
    kv_t env[12];
    int nenv;
    char service[2048];  /* service file text, or "" */
    int service_missing; /* PGSERVICEFILE names a file that does not exist */
    char pgpass[1024];   /* password file text, or "" */
    int wiring;          /* depends on connect.c calling into conninfo */
} gencase_t;

static const char *os_user(void)
{
    struct passwd *pw = getpwuid(geteuid());
    return pw ? pw->pw_name : "root";
}

static void add(kv_t *arr, int *n, int cap, const char *k, const char *fmt, ...)
{
    if (*n >= cap) return;
    kv_t *e = &arr[(*n)++];
    snprintf(e->key, sizeof e->key, "%s", k);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->val, sizeof e->val, fmt, ap);
    va_end(ap);
}

static void gen_port(char *out, size_t n)
{
    switch (rnd(10)) {
    case 0:
        snprintf(out, n, "0");
        break;
    case 1:
        snprintf(out, n, "abc");
        break;
    case 2:
        snprintf(out, n, "%d", port_closed);
        break;
    case 3:
        snprintf(out, n, " %d ", port_b);
        break;
    case 4:
        snprintf(out, n, "70000");
        break;
    case 5:
        snprintf(out, n, "%d", port_b);
        break;
    default:
        snprintf(out, n, "%d", port_a);
        break;
    }
}

static const char *gen_host(void)
{
    switch (rnd(8)) {
    case 0:
        return dir_s1;
    case 1:
        return "127.0.0.1";
    case 2:
        return "localhost";
    case 3:
        return dir_long;
    case 4:
        return "/nonexistent-pgw";
    default:
        return dir_s0;
    }
}

/* host, port and hostaddr lists, into *arr */
static void gen_hosts(kv_t *arr, int *n, int cap, int with_addr)
{
    int nh = 1 + (int)rnd(3);
    char hosts[800] = "", ports[200] = "", addrs[200] = "";
    int per_host_ports = rnd(2), any_port = rnd(5) != 0;
    for (int i = 0; i < nh; i++) {
        char p[32];
        gen_port(p, sizeof p);
        snprintf(hosts + strlen(hosts), sizeof hosts - strlen(hosts), "%s%s", i ? "," : "",
                 gen_host());
        if (per_host_ports || i == 0)
            snprintf(ports + strlen(ports), sizeof ports - strlen(ports), "%s%s", i ? "," : "", p);
        static const char *const addr[] = {"127.0.0.1", "127.1", "bogus", "", "::1"};
        snprintf(addrs + strlen(addrs), sizeof addrs - strlen(addrs), "%s%s", i ? "," : "",
                 PICK(addr));
    }
    if (rnd(12) == 0) snprintf(ports + strlen(ports), sizeof ports - strlen(ports), ",%d", port_a);
    add(arr, n, cap, "host", "%s", hosts);
    if (any_port) add(arr, n, cap, "port", "%s", ports);
    if (with_addr) add(arr, n, cap, "hostaddr", "%s", addrs);
}

typedef struct choice {
    const char *key;
    const char *vals[8];
} choice_t;

static const choice_t choices[] = {
    {"user", {"u1", "", "us er", "u2"}},
    {"dbname", {"d1", "d2", "", "my db", "d\\'q"}},
    {"password", {"pw", "", "p w"}},
    {"options", {"-c geqo=off", ""}},
    {"application_name", {"app", "", "ap p"}},
    {"fallback_application_name", {"fb", ""}},
    {"client_encoding", {"UTF8", "auto", "LATIN1", ""}},
    {"replication", {"TRUE", "database", "on", "", "0"}},
    {"connect_timeout", {"", "5", "3000000000", "abc", " 7 ", "0x1", "-1"}},
    {"keepalives", {"abc", "0", "1", "", "2"}},
    {"keepalives_idle", {"", "x", "10", "-3"}},
    {"keepalives_count", {"3", "x"}},
    {"tcp_user_timeout", {"", "100", "y"}},
    {"sslmode", {"disable", "allow", "prefer", "require", "verify-full", "bogus", ""}},
    {"ssl_min_protocol_version", {"tlsv1.2", "TLSv1", "TLSv1.3", "bogus", ""}},
    {"ssl_max_protocol_version", {"TLSv1", "tlsv1.3", "", "TLSv1.1"}},
    {"gssencmode", {"disable", "prefer", "bogus"}},
    {"target_session_attrs", {"any", "bogus"}},
    {"channel_binding", {"prefer", "disable", "bogus"}},
    {"requiressl", {"1", "0"}},
    {"requirepeer", {"<self>", "nobody-pgw"}},
    {"krbsrvname", {"svc"}},
    {"sslcompression", {"1"}},
};

static const choice_t env_choices[] = {
    {"PGTZ", {"", "UTC", "default"}},
    {"PGDATESTYLE", {"", "ISO", "DEFAULT"}},
    {"PGGEQO", {"", "on"}},
    {"PGREQUIRESSL", {"1", "0"}},
    {"PGAPPNAME", {"envapp", ""}},
    {"PGCLIENTENCODING", {"auto", "UTF8", ""}},
    {"PGSSLMODE", {"disable", "prefer", ""}},
    {"PGUSER", {"envu", ""}},
    {"PGDATABASE", {"envd", "d1"}},
    {"PGPASSWORD", {"envpw", ""}},
    {"PGOPTIONS", {"-c x=y"}},
    {"PGCONNECT_TIMEOUT", {"abc", "4"}},
};

static int nvals(const choice_t *c)
{
    int n = 0;
    while (n < 8 && c->vals[n])
        n++;
    return n;
}

static void add_choice(kv_t *arr, int *n, int cap, const choice_t *c)
{
    const char *v = c->vals[rnd((uint32_t)nvals(c))];
    if (strcmp(v, "<self>") == 0) v = os_user();
    add(arr, n, cap, c->key, "%s", v);
}

static void gen_case(gencase_t *g)
{
    memset(g, 0, sizeof *g);
    g->uri = rnd(4) == 0;
    int src = (int)rnd(6); /* where the hosts come from */
    if (src <= 3)
        gen_hosts(g->opt, &g->nopt, 24, rnd(6) == 0);
    else if (src == 4) {
        kv_t tmp[3];
        int nt = 0;
        gen_hosts(tmp, &nt, 3, 0);
        for (int i = 0; i < nt; i++)
            add(g->env, &g->nenv, 12, strcmp(tmp[i].key, "host") == 0 ? "PGHOST" : "PGPORT", "%s",
                tmp[i].val);
    }
    int nextra = (int)rnd(5);
    for (int i = 0; i < nextra; i++)
        add_choice(g->opt, &g->nopt, 24, &PICK(choices));
    int nenv = (int)rnd(4);
    for (int i = 0; i < nenv; i++)
        add_choice(g->env, &g->nenv, 12, &PICK(env_choices));
    if (src == 5 || rnd(8) == 0) {
        /* a service file; hosts in it when src == 5 */
        kv_t sv[8];
        int ns = 0;
        if (src == 5) gen_hosts(sv, &ns, 8, 0);
        for (int i = 0, k = (int)rnd(3); i < k; i++)
            add_choice(sv, &ns, 8, &PICK(choices));
        const char *name = rnd(5) == 0 ? "" : rnd(6) == 0 ? "nosuch" : "svc";
        char *w = g->service;
        size_t cap = sizeof g->service;
        snprintf(w, cap, "# generated\n[other]\nhost=/wrong\n[%s]\n", rnd(4) == 0 ? "" : "svc");
        for (int i = 0; i < ns; i++)
            if (strcmp(sv[i].key, "requiressl") != 0) /* not a keyword in files */
                snprintf(w + strlen(w), cap - strlen(w), "%s=%s\n", sv[i].key, sv[i].val);
        if (rnd(20) == 0) snprintf(w + strlen(w), cap - strlen(w), "bogus line\n");
        g->service_missing = rnd(15) == 0;
        if (rnd(2))
            add(g->opt, &g->nopt, 24, "service", "%s", name);
        else
            add(g->env, &g->nenv, 12, "PGSERVICE", "%s", name);
    }
    if (rnd(3) == 0) {
        snprintf(g->pgpass, sizeof g->pgpass,
                 "# generated\n*:%d:d1:*:p:w0\n%s:*:*:*:x\\:y\\\\z\nlocalhost:*:*:*:lh\n"
                 "127.0.0.1:%d:*:*:tcp\n*:0%d:*:*:zero\n%s",
                 port_a, dir_s1, port_b, port_a, rnd(2) ? "*:*:*:*:any\n" : "");
    }
}

static void append_kv_quoted(char *buf, size_t cap, const char *k, const char *v)
{
    size_t n = strlen(buf);
    n += (size_t)snprintf(buf + n, cap - n, "%s%s='", n ? " " : "", k);
    for (; *v && n + 3 < cap; v++) {
        if (*v == '\'' || *v == '\\') buf[n++] = '\\';
        buf[n++] = *v;
    }
    snprintf(buf + n, cap - n, "'");
}

static void pct(char *buf, size_t cap, const char *v)
{
    size_t n = strlen(buf);
    for (; *v && n + 4 < cap; v++) {
        unsigned char c = (unsigned char)*v;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '.' || c == '-' || c == '_')
            buf[n++] = (char)c;
        else
            n += (size_t)snprintf(buf + n, cap - n, "%%%02X", c);
    }
    buf[n] = '\0';
}

static void build_string(const gencase_t *g, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (!g->uri) {
        for (int i = 0; i < g->nopt; i++)
            append_kv_quoted(buf, cap, g->opt[i].key, g->opt[i].val);
        /* sometimes an unquoted value with a trailing backslash */
        if (rng % 17 == 0) snprintf(buf + strlen(buf), cap - strlen(buf), " dbname=d1\\");
        return;
    }
    snprintf(buf, cap, "postgresql:///");
    for (int i = 0; i < g->nopt; i++) {
        size_t n = strlen(buf);
        snprintf(buf + n, cap - n, "%c%s=", i ? '&' : '?', g->opt[i].key);
        pct(buf, cap, g->opt[i].val);
    }
}

/* ------------------------------------------------------------ running */

static void clean_env(void)
{
    pgt_clear_pg_env(tmpdir);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, 0600);
}

static void setup_case(const gencase_t *g)
{
    clean_env();
    char path[300];
    snprintf(path, sizeof path, "%s/.pgpass", tmpdir);
    unlink(path);
    if (g->pgpass[0]) write_text(path, g->pgpass);
    snprintf(path, sizeof path, "%s/svc.conf", tmpdir);
    unlink(path);
    if (g->service[0]) {
        if (!g->service_missing) write_text(path, g->service);
        setenv("PGSERVICEFILE", path, 1);
    }
    for (int i = 0; i < g->nenv; i++)
        setenv(g->env[i].key, g->env[i].val, 1);
}

typedef struct outcome {
    record_t rec;
    char opts[2048];
} outcome_t;

/* Option values compared between PQconninfo and pgw_conninfo_get. */
static const char *const compared[] = {
    "user",
    "dbname",
    "options",
    "application_name",
    "fallback_application_name",
    "replication",
    "sslmode",
    "gssencmode",
    "channel_binding",
    "target_session_attrs",
    "requirepeer",
    "krbsrvname",
    "sslcompression",
    "keepalives",
    "keepalives_idle",
    "sslsni",
    "hostaddr",
    "connect_timeout",
    "tcp_user_timeout",
    "ssl_min_protocol_version",
    "port",
    "password",
    "ssl_max_protocol_version",
};

static void run_libpq(const char *s, outcome_t *o)
{
    PGconn *c = PQconnectdb(s);
    PQconninfoOption *opts = c ? PQconninfo(c) : NULL;
    PQfinish(c); /* closes the socket the listener may be reading */
    take_record(&o->rec);
    o->opts[0] = '\0';
    if (opts && o->rec.params[0]) {
        for (size_t k = 0; k < sizeof compared / sizeof compared[0]; k++)
            for (PQconninfoOption *p = opts; p->keyword; p++)
                if (strcmp(p->keyword, compared[k]) == 0)
                    snprintf(o->opts + strlen(o->opts), sizeof o->opts - strlen(o->opts), "%s=%s\n",
                             p->keyword, p->val ? p->val : "<unset>");
    }
    PQconninfoFree(opts);
}

static void run_pgw(const char *s, outcome_t *o)
{
    pgw_client_t *c = NULL;
    char err[512];
    pgw_client_connect_err(&c, s, NULL, err, sizeof err);
    if (c) pgw_client_close(c);
    take_record(&o->rec);
    o->opts[0] = '\0';
    pgw_conninfo_t *ci = NULL;
    if (o->rec.params[0] && pgw_conninfo_parse(&ci, s, NULL, NULL, 0) == 0) {
        for (size_t k = 0; k < sizeof compared / sizeof compared[0]; k++) {
            const char *v = pgw_conninfo_get(ci, compared[k]);
            snprintf(o->opts + strlen(o->opts), sizeof o->opts - strlen(o->opts), "%s=%s\n",
                     compared[k], v ? v : "<unset>");
        }
    }
    pgw_conninfo_free(ci);
}

/* Does the case depend on the connect code calling into conninfo? */
static int needs_wiring(const char *s)
{
    pgw_conninfo_t *ci = NULL;
    if (pgw_conninfo_parse(&ci, s, NULL, NULL, 0) != 0) return 0;
    int w = 0;
    const char *rp = pgw_conninfo_get(ci, "requirepeer");
    if (rp && *rp) w = 1;
    pgw_tcp_options_t t;
    /* an invalid value, or one the kernel may refuse (libpq then moves on) */
    int tcp_bad = pgw_conninfo_tcp_options(ci, &t, NULL, 0) != 0 || t.keepalives_idle >= 0 ||
                  t.keepalives_interval >= 0 || t.keepalives_count >= 0 || t.tcp_user_timeout >= 0;
    for (size_t i = 0; i < pgw_conninfo_nhosts(ci); i++) {
        pgw_host_t h;
        pgw_conninfo_host(ci, i, &h);
        if (h.error || (tcp_bad && !h.is_unix)) w = 1;
    }
    pgw_conninfo_free(ci);
    return w;
}

static void print_case(const gencase_t *g, const char *s)
{
    fprintf(stderr, "  string: %s\n", s);
    for (int i = 0; i < g->nenv; i++)
        fprintf(stderr, "  env %s='%s'\n", g->env[i].key, g->env[i].val);
    if (g->service[0])
        fprintf(stderr, "  service file%s:\n%s", g->service_missing ? " (missing)" : "",
                g->service);
    if (g->pgpass[0]) fprintf(stderr, "  .pgpass:\n%s", g->pgpass);
}

static void print_side(const char *who, const outcome_t *o)
{
    fprintf(stderr, "  %s: reached %s, password %s\n%s", who, o->rec.where,
            o->rec.password[0] ? o->rec.password : "-", o->rec.params);
    if (o->opts[0]) fprintf(stderr, "  %s options:\n%s", who, o->opts);
}

static void test_differential(void **state)
{
    (void)state;
    const char *e = getenv("PGW_CONNINFO_DIFF_SEED");
    uint64_t seed = e ? strtoull(e, NULL, 10) : 20250101;
    e = getenv("PGW_CONNINFO_DIFF_CASES");
    int ncases = e ? atoi(e) : RUNNING_ON_VALGRIND ? 120 : 1500;
    rng = seed * 2654435761u + 1;
    char saved_home[512];
    snprintf(saved_home, sizeof saved_home, "%s", getenv("HOME") ? getenv("HOME") : "/");
    start_listeners();
    int bad = 0, bad_wiring = 0, reached = 0;
    for (int i = 0; i < ncases; i++) {
        gencase_t g;
        gen_case(&g);
        char s[4096];
        build_string(&g, s, sizeof s);
        setup_case(&g);
        outcome_t a, b;
        struct timeval t0, t1, t2;
        gettimeofday(&t0, NULL);
        run_libpq(s, &a);
        gettimeofday(&t1, NULL);
        run_pgw(s, &b);
        gettimeofday(&t2, NULL);
        if (getenv("PGW_CONNINFO_DIFF_TIMES"))
            fprintf(stderr, "case %d: libpq %ld ms, libpgwire %ld ms: %s\n", i,
                    (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000,
                    (t2.tv_sec - t1.tv_sec) * 1000 + (t2.tv_usec - t1.tv_usec) / 1000, s);
        if (a.rec.params[0]) reached++;
        if (strcmp(a.rec.where, b.rec.where) == 0 && strcmp(a.rec.params, b.rec.params) == 0 &&
            strcmp(a.rec.password, b.rec.password) == 0 && strcmp(a.opts, b.opts) == 0)
            continue;
        int w = needs_wiring(s);
        w ? bad_wiring++ : bad++;
        if (bad + bad_wiring <= 25) {
            fprintf(stderr, "DIFFERENT (seed %llu, case %d)%s:\n", (unsigned long long)seed, i,
                    w ? " [connect.c wiring]" : "");
            print_case(&g, s);
            print_side("libpq", &a);
            print_side("libpgwire", &b);
        }
    }
    stop_listeners();
    clean_env();
    setenv("HOME", saved_home, 1);
    fprintf(stderr,
            "conninfo differential: seed %llu, %d cases, %d reached a listener, %d differ, %d "
            "more differ until connect.c calls into conninfo\n",
            (unsigned long long)seed, ncases, reached, bad, bad_wiring);
    assert_true(reached > ncases / 10); /* the generator exercises the capture */
    assert_int_equal(bad + bad_wiring, 0);
}

/* requirepeer against the real server's socket: the server runs as its own
 * OS user. */
static void test_peercred_real_server(void **state)
{
    (void)state;
    pgt_require_server();
    const char *dir = pgt_env_required("PGHOST");
    const char *port = pgt_env_required("PGPORT");
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s/.s.PGSQL.%s", dir, port);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    struct stat st;
    assert_int_equal(stat(a.sun_path, &st), 0); /* the server creates its socket */
    struct passwd *pw = getpwuid(st.st_uid);
    assert_non_null(pw);
    char owner[128], err[256];
    snprintf(owner, sizeof owner, "%s", pw->pw_name);
    assert_int_equal(pgw__peercred_check(fd, owner, err, sizeof err), 0);
    assert_int_equal(pgw__peercred_check(fd, "nobody-pgw", err, sizeof err), PGW_EAUTHPOLICY);
    char want[300];
    snprintf(want, sizeof want,
             "requirepeer specifies \"nobody-pgw\", but actual peer user name is \"%s\"", owner);
    assert_string_equal(err, want);
    close(fd);

    /* libpq says the same */
    char s[600];
    snprintf(s, sizeof s, "host='%s' port=%s requirepeer=nobody-pgw dbname=postgres", dir, port);
    PGconn *c = PQconnectdb(s);
    assert_int_equal(PQstatus(c), CONNECTION_BAD);
    assert_non_null(strstr(PQerrorMessage(c), want));
    PQfinish(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peercred_real_server),
        cmocka_unit_test(test_differential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
