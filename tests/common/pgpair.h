/*
 * The fixture scripts of tests/pg run from a test: a private cluster, or a
 * private primary with its streaming standby, for tests that stop,
 * restart or promote a server (never the shared fixtures: CI runs test
 * programs in parallel). Failures fail the current cmocka test.
 */
#ifndef PGW_TESTS_PGPAIR_H
#define PGW_TESTS_PGPAIR_H

#include <stdint.h>
#include <uv.h> /* its includer defines _POSIX_C_SOURCE 200809L first */

/* A script running on a loop (pgt_script_spawn). */
typedef struct pgt_child {
    uv_process_t proc;
    int exited;
    int64_t status;                /* exit code, or -signal */
    uint64_t started_ms, ended_ms; /* uv_hrtime in ms */
    char path[1024];
} pgt_child_t;

/* Start `bash tests/pg/NAME CMD DIR [ARG]` on loop, with PGHOST and PGPORT
 * unset (pg-cluster.sh would take them for a server of its own to use) and
 * its stdout discarded; c->exited becomes 1 when it ends. */
void pgt_script_spawn(uv_loop_t *loop, pgt_child_t *c, const char *name, const char *cmd,
                      const char *dir, const char *arg);
/* Run it to its end on a loop of its own; fail the test unless it exits 0. */
void pgt_script_run(const char *name, const char *cmd, const char *dir, const char *arg);
/* The same, returning its exit status (-1: not started, -signal), without
 * touching the test's state: usable from another thread. */
int pgt_script_exit(const char *name, const char *cmd, const char *dir, const char *arg);

/* KEY of DIR/env as the scripts write it; fails the test when absent. The
 * string lives as long as the process (pgt_env_file_get). */
const char *pgt_dir_env(const char *dir, const char *key);

/* A private cluster (pg-cluster.sh) in a new directory /tmp/pgw-TAG.XXXXXX,
 * for a test that restarts or stops its server: its directory in dir (64
 * bytes), its connection string in ci (host, port, user, dbname,
 * connect_timeout=5). Fails the test when it cannot start. */
void pgt_cluster_start(char dir[64], const char *tag, char *ci, size_t cilen);
/* Stop it and remove its directory. */
void pgt_cluster_stop(const char *dir);

/* A private primary (pg-cluster.sh) and its standby (pg-replica.sh) in a
 * new directory /tmp/pgw-TAG.XXXXXX. */
typedef struct pgt_pair {
    char tmpdir[64], primary[128], standby[128];
} pgt_pair_t;
void pgt_pair_start(pgt_pair_t *p, const char *tag);
/* Stop both and delete the directory. */
void pgt_pair_stop(pgt_pair_t *p);
/* A conninfo into buf for the pair's servers over TCP: host=127.0.0.1 for
 * port1 (and for port2 when not NULL: a host list), the primary's user and
 * database, sslmode=disable, connect_timeout=5. The ports are the pair's
 * (pgt_dir_env(p->primary, "PGPORT"), pgt_dir_env(p->standby,
 * "PGW_STANDBY_PORT")) in the order the test wants. Fails the test when
 * buf is too small. */
void pgt_pair_conninfo(const pgt_pair_t *p, char *buf, size_t n, const char *port1,
                       const char *port2);

#endif
