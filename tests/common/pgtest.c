/* Test helpers: the throwaway server's settings (see pgtest.h). */
#define _POSIX_C_SOURCE 200809L
#include "pgtest.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#ifndef PGW_TEST_ENV_FILE
#define PGW_TEST_ENV_FILE ""
#endif

#define MAX_KEYS 128

typedef struct env_entry {
    char *key;
    char *value;
} env_entry_t;

static env_entry_t env_entries[MAX_KEYS];
static size_t env_count;
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
static void env_add_line(const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == 0 || line[0] == '#') return;
    const char *eq = memchr(line, '=', len);
    if (eq == NULL || eq == line) return;
    size_t klen = (size_t)(eq - line);
    for (size_t i = 0; i < env_count; i++) {
        if (strlen(env_entries[i].key) == klen && memcmp(env_entries[i].key, line, klen) == 0) {
            free(env_entries[i].value);
            env_entries[i].value = dup_range(eq + 1, len - klen - 1);
            return;
        }
    }
    if (env_count == MAX_KEYS) return;
    env_entries[env_count].key = dup_range(line, klen);
    env_entries[env_count].value = dup_range(eq + 1, len - klen - 1);
    env_count++;
}

static void env_load(void)
{
    const char *path = getenv("PGW_TEST_ENV_FILE");
    if (path != NULL && path[0] != '\0') env_path = path;
    path = env_path;
    const char *use_env = getenv("PGW_TEST_USE_ENV");
    env_prefer_process = use_env != NULL && strcmp(use_env, "1") == 0;
    if (path[0] == '\0') return;
    FILE *f = fopen(path, "r");
    if (f == NULL) return;
    env_file_found = 1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) >= 0) {
        size_t len = (size_t)n;
        if (len > 0 && line[len - 1] == '\n') len--;
        env_add_line(line, len);
    }
    free(line);
    fclose(f);
}

static const char *env_file_value(const char *key)
{
    for (size_t i = 0; i < env_count; i++) {
        if (strcmp(env_entries[i].key, key) == 0) return env_entries[i].value;
    }
    return NULL;
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
