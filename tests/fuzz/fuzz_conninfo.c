/*
 * Fuzz target for pgw_conninfo_parse and the accessors of what it returns.
 * The environment is cleared of PG* variables and HOME and PGSYSCONFDIR
 * point at a directory that does not exist, so only the input matters.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/conninfo.h"

extern char **environ;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e; e++) {
            if (strncmp(*e, "PG", 2) != 0) continue;
            char name[256];
            size_t n = strcspn(*e, "=");
            if (n >= sizeof name) continue;
            memcpy(name, *e, n);
            name[n] = '\0';
            unsetenv(name);
            again = 1;
            break;
        }
    }
    setenv("HOME", "/nonexistent-pgw-fuzz", 1);
    setenv("PGSYSCONFDIR", "/nonexistent-pgw-fuzz", 1);
    return 0;
}

static void exercise(const pgw_conninfo_t *ci)
{
    for (size_t i = 0; pgw_conninfo_keyword(i); i++) {
        const char *v = pgw_conninfo_get(ci, pgw_conninfo_keyword(i));
        if (v && strlen(v) > 1 << 20) abort();
    }
    size_t n = pgw_conninfo_nhosts(ci);
    if (n == 0) abort();
    for (size_t i = 0; i < n; i++) {
        pgw_host_t h;
        if (pgw_conninfo_host(ci, i, &h) != 0 || !h.host) abort();
        char path[256];
        int rc = pgw_host_socket_path(&h, path, sizeof path);
        if (h.is_unix ? rc == PGW_EINVAL : rc != PGW_EINVAL) abort();
        (void)pgw_conninfo_password(ci, &h);
    }
    const char *pairs[32];
    int np = pgw_conninfo_startup_params(ci, pairs, 16);
    if (np < 0) abort();
    for (int i = 0; i < 2 * np; i++)
        if (!pairs[i] || !pairs[i][0]) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int initialized;
    if (!initialized) {
        /* the replay driver has no LLVMFuzzerInitialize call */
        LLVMFuzzerInitialize(NULL, NULL);
        initialized = 1;
    }
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    pgw_conninfo_t *ci = NULL;
    char err[256];
    int rc = pgw_conninfo_parse(&ci, s, NULL, err, sizeof err);
    if (rc == 0)
        exercise(ci);
    else if (rc != PGW_ECONNINFO && rc != PGW_ENOMEM)
        abort();
    else if (ci || !err[0])
        abort();
    pgw_conninfo_free(ci);
    free(s);
    return 0;
}
