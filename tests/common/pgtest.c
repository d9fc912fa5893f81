/* Test helpers: the throwaway server's settings (see pgtest.h). */
#define _POSIX_C_SOURCE 200809L
#include "pgtest.h"
#include "pgwire/common.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <setjmp.h>
#include <cmocka.h>

#ifndef PGW_TEST_ENV_FILE
#define PGW_TEST_ENV_FILE ""
#endif
#ifndef PGW_TEST_PGBOUNCER_ENV_FILE
#define PGW_TEST_PGBOUNCER_ENV_FILE ""
#endif
#ifndef PGW_TEST_REPLICA_ENV_FILE
#define PGW_TEST_REPLICA_ENV_FILE ""
#endif
#ifndef PGW_TEST_REPLICA_DELAYED_ENV_FILE
#define PGW_TEST_REPLICA_DELAYED_ENV_FILE ""
#endif

#define MAX_KEYS 128

typedef struct env_entry {
    char *key;
    char *value;
} env_entry_t;

/* The KEY=VALUE lines of one env file. */
typedef struct env_table {
    env_entry_t entries[MAX_KEYS];
    size_t count;
} env_table_t;

static env_table_t env_main;
static int env_file_found;
static int env_prefer_process;
static const char *env_path = PGW_TEST_ENV_FILE;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static char *dup_range(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* One "KEY=VALUE" line (without its newline); blank lines and # comments
 * are ignored. A later line for the same key replaces the earlier one. */
static void env_add_line(env_table_t *t, const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == 0 || line[0] == '#') return;
    const char *eq = memchr(line, '=', len);
    if (eq == NULL || eq == line) return;
    size_t klen = (size_t)(eq - line);
    for (size_t i = 0; i < t->count; i++) {
        if (strlen(t->entries[i].key) == klen && memcmp(t->entries[i].key, line, klen) == 0) {
            free(t->entries[i].value);
            t->entries[i].value = dup_range(eq + 1, len - klen - 1);
            return;
        }
    }
    if (t->count == MAX_KEYS) return;
    t->entries[t->count].key = dup_range(line, klen);
    t->entries[t->count].value = dup_range(eq + 1, len - klen - 1);
    t->count++;
}

/* Read the file at path into t. Returns 1, or 0 if it cannot be opened. */
static int env_read_file(env_table_t *t, const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) return 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) >= 0) {
        size_t len = (size_t)n;
        if (len > 0 && line[len - 1] == '\n') len--;
        env_add_line(t, line, len);
    }
    free(line);
    fclose(f);
    return 1;
}

static void env_load(void)
{
    const char *path = getenv("PGW_TEST_ENV_FILE");
    if (path != NULL && path[0] != '\0') env_path = path;
    path = env_path;
    const char *use_env = getenv("PGW_TEST_USE_ENV");
    env_prefer_process = use_env != NULL && strcmp(use_env, "1") == 0;
    if (path[0] == '\0') return;
    env_file_found = env_read_file(&env_main, path);
}

static const char *env_table_value(const env_table_t *t, const char *key)
{
    for (size_t i = 0; i < t->count; i++) {
        if (strcmp(t->entries[i].key, key) == 0) return t->entries[i].value;
    }
    return NULL;
}

static const char *env_file_value(const char *key)
{
    return env_table_value(&env_main, key);
}

const char *pgt_env(const char *key)
{
    pthread_once(&env_once, env_load);
    const char *v;
    if (env_prefer_process || !env_file_found) {
        v = getenv(key);
        if (v != NULL && v[0] != '\0') return v;
        return env_file_value(key);
    }
    v = env_file_value(key);
    if (v != NULL) return v;
    v = getenv(key);
    return v != NULL && v[0] != '\0' ? v : NULL;
}

const char *pgt_env_required(const char *key)
{
    const char *v = pgt_env(key);
    if (v == NULL) {
        fail_msg("test setting %s is unknown: not in %s nor in the environment (is the "
                 "pgcluster fixture running? see tests/pg/pg-cluster.sh)",
                 key, env_path);
    }
    return v;
}

int pgt_env_int(const char *key, int def)
{
    const char *v = pgt_env(key);
    if (v == NULL) return def;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < -2147483647L || n > 2147483647L) return def;
    return (int)n;
}

int pgt_have_server(void)
{
    return pgt_env("PGHOST") != NULL && pgt_env("PGPORT") != NULL;
}

void pgt_require_server(void)
{
    if (!pgt_have_server()) {
        fail_msg("no PostgreSQL server configured: %s is missing and PGHOST/PGPORT are not "
                 "set (run the tests through ctest, which starts tests/pg/pg-cluster.sh)",
                 env_path);
    }
}

int pgt_server_version(void)
{
    return pgt_env_int("PGW_TEST_SERVER_VERSION", 0);
}

int pgt_conninfo_append(char *buf, size_t n, const char *key, const char *value)
{
    size_t used = strlen(buf);
    size_t need = used + (used > 0) + strlen(key) + 3; /* [space] key = ' ... ' */
    for (const char *p = value; *p; p++)
        need += (*p == '\\' || *p == '\'') ? 2 : 1;
    if (need + 1 > n) return -1;
    char *w = buf + used;
    if (used > 0) *w++ = ' ';
    w += sprintf(w, "%s='", key);
    for (const char *p = value; *p; p++) {
        if (*p == '\\' || *p == '\'') *w++ = '\\';
        *w++ = *p;
    }
    *w++ = '\'';
    *w = '\0';
    return 0;
}

static void conninfo_finish(char *buf, size_t n, const char *extra)
{
    if (extra == NULL || extra[0] == '\0') return;
    size_t used = strlen(buf);
    if (used + 1 + strlen(extra) + 1 > n) fail_msg("connection string buffer too small");
    buf[used] = ' ';
    strcpy(buf + used + 1, extra);
}

static void conninfo_add(char *buf, size_t n, const char *key, const char *value)
{
    if (value == NULL) return;
    if (pgt_conninfo_append(buf, n, key, value) != 0) {
        fail_msg("connection string buffer too small");
    }
}

char *pgt_conninfo(char *buf, size_t n, const char *extra)
{
    pgt_require_server();
    assert_true(n > 0);
    buf[0] = '\0';
    conninfo_add(buf, n, "host", pgt_env("PGHOST"));
    conninfo_add(buf, n, "port", pgt_env("PGPORT"));
    conninfo_add(buf, n, "user", pgt_env("PGUSER"));
    conninfo_add(buf, n, "dbname", pgt_env("PGDATABASE"));
    conninfo_finish(buf, n, extra);
    return buf;
}

char *pgt_conninfo_tcp(char *buf, size_t n, const char *user, const char *password,
                       const char *extra)
{
    pgt_require_server();
    assert_true(n > 0);
    buf[0] = '\0';
    conninfo_add(buf, n, "host", pgt_env_required("PGW_TEST_TCP_HOST"));
    conninfo_add(buf, n, "port", pgt_env("PGPORT"));
    conninfo_add(buf, n, "user", user);
    conninfo_add(buf, n, "password", password);
    conninfo_add(buf, n, "dbname", pgt_env("PGDATABASE"));
    conninfo_finish(buf, n, extra);
    return buf;
}

char *pgt_conninfo_at(char *buf, size_t n, const char *hosts, const char *ports, const char *extra)
{
    pgt_require_server();
    assert_true(n > 0);
    buf[0] = '\0';
    conninfo_add(buf, n, "host", hosts);
    conninfo_add(buf, n, "port", ports);
    conninfo_add(buf, n, "user", pgt_env("PGUSER"));
    conninfo_add(buf, n, "dbname", pgt_env("PGDATABASE"));
    conninfo_finish(buf, n, extra);
    return buf;
}

/* ------------------------------------------------- other fixtures' env files */

#define MAX_ENV_FILES 8

typedef struct env_file {
    char *path;
    int found;
    env_table_t table;
} env_file_t;

static env_file_t env_files[MAX_ENV_FILES];
static size_t env_nfiles;
static pthread_mutex_t env_files_lock = PTHREAD_MUTEX_INITIALIZER;

static const env_file_t *env_file_cached(const char *path)
{
    for (size_t i = 0; i < env_nfiles; i++) {
        if (strcmp(env_files[i].path, path) == 0) return &env_files[i];
    }
    if (env_nfiles == MAX_ENV_FILES) return NULL;
    env_file_t *f = &env_files[env_nfiles];
    f->path = dup_range(path, strlen(path));
    f->found = env_read_file(&f->table, path);
    env_nfiles++;
    return f;
}

const char *pgt_env_file_get(const char *path, const char *key)
{
    if (path == NULL || path[0] == '\0') return NULL;
    pthread_mutex_lock(&env_files_lock);
    const env_file_t *f = env_file_cached(path);
    const char *v = f != NULL && f->found ? env_table_value(&f->table, key) : NULL;
    pthread_mutex_unlock(&env_files_lock);
    return v;
}

/* The env file of a fixture: the environment variable var, else the
 * compiled-in path. */
static const char *fixture_env_path(const char *var, const char *compiled)
{
    const char *p = getenv(var);
    return p != NULL && p[0] != '\0' ? p : compiled;
}

const char *pgt_pgbouncer_env_path(void)
{
    return fixture_env_path("PGW_TEST_PGBOUNCER_ENV_FILE", PGW_TEST_PGBOUNCER_ENV_FILE);
}

const char *pgt_replica_env_path(void)
{
    return fixture_env_path("PGW_TEST_REPLICA_ENV_FILE", PGW_TEST_REPLICA_ENV_FILE);
}

const char *pgt_replica_delayed_env_path(void)
{
    return fixture_env_path("PGW_TEST_REPLICA_DELAYED_ENV_FILE", PGW_TEST_REPLICA_DELAYED_ENV_FILE);
}

const char *pgt_krb5_env_path(void)
{
    return fixture_env_path("PGW_TEST_KRB5_ENV_FILE", PGW_TEST_KRB5_ENV_FILE);
}

const char *pgt_krb5_env(const char *key)
{
    return pgt_env_file_get(pgt_krb5_env_path(), key);
}

const char *pgt_pgbouncer_env(const char *key)
{
    return pgt_env_file_get(pgt_pgbouncer_env_path(), key);
}

const char *pgt_replica_env(const char *key)
{
    return pgt_env_file_get(pgt_replica_env_path(), key);
}

const char *pgt_replica_delayed_env(const char *key)
{
    return pgt_env_file_get(pgt_replica_delayed_env_path(), key);
}

static void require_fixture(const char *path, const char *key, const char *what)
{
    if (pgt_env_file_get(path, key) == NULL) {
        fail_msg("no %s: %s is missing or lacks %s (run the tests through ctest, whose %s "
                 "fixture starts it)",
                 what, path[0] ? path : "(no env file compiled in)", key, what);
    }
}

void pgt_require_pgbouncer(void)
{
    require_fixture(pgt_pgbouncer_env_path(), "PGW_PGBOUNCER_PORT", "pgbouncer");
}

char *pgt_pgbouncer_conninfo(char *buf, size_t n, const char *dir, const char *dbname,
                             const char *app)
{
    static const char *const keys[][2] = {{"host", "PGW_PGBOUNCER_HOST"},
                                          {"port", "PGW_PGBOUNCER_PORT"},
                                          {"user", "PGW_PGBOUNCER_USER"},
                                          {"password", "PGW_PGBOUNCER_PASSWORD"}};
    char env[1100];
    if (dir) snprintf(env, sizeof env, "%s/env", dir);
    const char *path = dir ? env : pgt_pgbouncer_env_path();
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        assert_int_equal(
            pgt_conninfo_append(buf, n, keys[i][0], pgt_env_file_get(path, keys[i][1])), 0);
    const char *db = dbname ? dbname : pgt_env_file_get(path, "PGW_PGBOUNCER_DB");
    assert_int_equal(pgt_conninfo_append(buf, n, "dbname", db), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "sslmode", "disable"), 0);
    if (app) assert_int_equal(pgt_conninfo_append(buf, n, "application_name", app), 0);
    return buf;
}

void pgt_require_replica(void)
{
    require_fixture(pgt_replica_env_path(), "PGW_STANDBY_PORT", "pgreplica");
}

void pgt_require_replica_delayed(void)
{
    require_fixture(pgt_replica_delayed_env_path(), "PGW_STANDBY_PORT", "pgreplica_delayed");
}

void pgt_require_krb5(void)
{
    require_fixture(pgt_krb5_env_path(), "PGW_GSS_PORT", "krb5");
}

extern char **environ;

void pgt_clear_pg_env(const char *dir)
{
    for (;;) {
        char name[128] = "";
        for (char **e = environ; *e; e++) {
            if (strncmp(*e, "PG", 2) != 0 || strncmp(*e, "PGW_", 4) == 0) continue;
            size_t n = strcspn(*e, "=");
            if (n < sizeof name) {
                memcpy(name, *e, n);
                name[n] = '\0';
                break;
            }
        }
        if (!name[0]) break;
        unsetenv(name);
    }
    setenv("HOME", dir, 1);
    setenv("PGSYSCONFDIR", dir, 1);
}

int pgt_loopback_socket(unsigned *port, int listening)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    if (listening) assert_int_equal(listen(fd, 16), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

int pgt_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 3; /* ., .. and the directory's own descriptor */
}

void pgt_err_tally_add(pgt_err_tally_t *t, int code)
{
    for (int i = 0; i < t->n; i++)
        if (t->code[i] == code) {
            t->count[i]++;
            return;
        }
    if (t->n < 64) {
        t->code[t->n] = code;
        t->count[t->n++] = 1;
    }
}

void pgt_err_tally_print(const pgt_err_tally_t *t, const char *prefix)
{
    for (int i = 0; i < t->n; i++)
        print_message("%s%-12s %ld\n", prefix, pgw_err_name(t->code[i]), t->count[i]);
}
