/*
 * Test helpers: where the throwaway PostgreSQL server is, and how to reach it.
 *
 * tests/pg/pg-cluster.sh (run by ctest as the pgcluster fixture) writes
 * KEY=VALUE lines to an env file whose path is compiled in as
 * PGW_TEST_ENV_FILE (the environment variable of the same name overrides
 * it). Keys written there:
 *   PGHOST PGPORT PGUSER PGDATABASE     the unix socket dir, port, trust user
 *                                       (a superuser) and its database
 *   PGW_TEST_TCP_HOST                   127.0.0.1, same port
 *   PGW_TEST_{SCRAM,MD5,CLEAR}_{USER,PASSWORD}
 *                                       roles for scram-sha-256, md5 and
 *                                       password auth (unix socket and TCP)
 *   PGW_TEST_SCRAM_PREP_{USER,PASSWORD} a scram-sha-256 role whose password
 *                                       SASLprep maps to nothing (a soft
 *                                       hyphen), stored as given
 *   PGW_TEST_CERT_USER                  role for cert auth (hostssl only)
 *   PGW_TEST_NOSSL_USER                 trust role allowed only without TLS
 *                                       (hostnossl): sslmode=prefer retries
 *                                       in plaintext
 *   PGW_TEST_SSLONLY_USER               trust role allowed only over TLS
 *                                       (hostssl): sslmode=allow retries
 *                                       with TLS
 *   PGW_TEST_SSL_ROOTCERT               the CA that signed the server cert
 *                                       (CN/SAN localhost and 127.0.0.1)
 *   PGW_TEST_SSL_CLIENT_CERT/_KEY       client cert for PGW_TEST_CERT_USER
 *   PGW_TEST_TLS_DIR                    also holds wronghost.{crt,key} (CA
 *                                       signed, wrong name), selfsigned.* and
 *                                       expired.* (CA signed, expired 2020),
 *                                       ca.key, for tests' own TLS listeners
 *   PGW_TEST_SERVER_VERSION             server_version_num, e.g. 150008
 *   PGW_TEST_SERVER_VERSION_STRING      e.g. 15.8
 *   PGW_TEST_DATADIR PGW_TEST_SERVER_LOG PGW_TEST_PGBIN
 *   PGW_TEST_CLUSTER_DIR PGW_TEST_CLUSTER_SCRIPT
 *                                       `bash $SCRIPT restart $DIR` restarts
 *                                       the server (same port and files)
 * With an existing server (PGHOST and PGPORT set when the fixture started),
 * only PG* and whatever PGW_TEST_* the environment had are written.
 *
 * Everything here may be called from any thread.
 */
#ifndef PGW_TESTS_PGTEST_H
#define PGW_TESTS_PGTEST_H

#include <stddef.h>

/*
 * The value of key, or NULL if unknown. The env file is read once. Its
 * values win over the process environment, unless PGW_TEST_USE_ENV=1 is set
 * or the file does not exist; a key missing from the file is looked up in
 * the environment. The string lives until the process exits.
 */
const char *pgt_env(const char *key);

/* Like pgt_env, but fails the current cmocka test with a message naming the
 * key when it is unknown. Never returns NULL. */
const char *pgt_env_required(const char *key);

/* pgt_env(key) as an int, or def if unknown or not a number. */
int pgt_env_int(const char *key, int def);
/* The file descriptors the process has open now (-1: /proc unreadable), for
 * tests that check nothing leaks. */
int pgt_open_fds(void);
/* Failures counted by error code (the first 64 codes seen), for a test's
 * figures. Zero it to start. */
typedef struct pgt_err_tally {
    int n;
    int code[64];
    long count[64];
} pgt_err_tally_t;
void pgt_err_tally_add(pgt_err_tally_t *t, int code);
/* One line per code: prefix, the code's name, its count. */
void pgt_err_tally_print(const pgt_err_tally_t *t, const char *prefix);

/* 1 if a server is configured (PGHOST and PGPORT are known), else 0. */
int pgt_have_server(void);

/* Fails the current test unless a server is configured. Integration tests
 * call it first: a missing server is a failure, never a silent skip. */
void pgt_require_server(void);

/* server_version_num of the test server (e.g. 150008), 0 if unknown. */
int pgt_server_version(void);

/*
 * Write a libpq-style keyword/value connection string into buf:
 * host, port, user and dbname from the env (PGHOST, PGPORT, PGUSER,
 * PGDATABASE), each value quoted as libpq requires, then " " and extra when
 * extra is not NULL (e.g. "sslmode=require"). Fails the test if buf is too
 * small or no server is configured. Returns buf.
 */
char *pgt_conninfo(char *buf, size_t n, const char *extra);

/* Same, but for TCP on PGW_TEST_TCP_HOST as user with password (NULL: none). */
char *pgt_conninfo_tcp(char *buf, size_t n, const char *user, const char *password,
                       const char *extra);

/* Same, for other servers of the cluster's user and database (a standby, a
 * host list): host=hosts port=ports, then extra. */
char *pgt_conninfo_at(char *buf, size_t n, const char *hosts, const char *ports, const char *extra);

/* A TCP socket bound to a free port of 127.0.0.1 (its number in *port),
 * listening with a backlog of 16 when listening is 1: connects to it then
 * complete into the backlog, and nothing answers unless the test accepts.
 * Fails the test on error. Close it with close(). */
int pgt_loopback_socket(unsigned *port, int listening);

/* Append "key='value'" (libpq quoting: \ and ' escaped) to the string in buf.
 * Returns 0, or -1 if it does not fit (buf is then unchanged). */
int pgt_conninfo_append(char *buf, size_t n, const char *key, const char *value);

/* Give libpq's option lookups a clean slate, as the conninfo tests need:
 * unset every PG* environment variable but the tests' own PGW_* ones, and
 * point HOME (~/.pgpass, ~/.pg_service.conf, ~/.postgresql/) and
 * PGSYSCONFDIR at dir. Not thread-safe (setenv). */
void pgt_clear_pg_env(const char *dir);

/*
 * Other fixtures' env files (KEY=VALUE lines like the cluster's):
 *   pgbouncer  tests/pg/pgbouncer.sh in front of the cluster, its env file
 *              compiled in as PGW_TEST_PGBOUNCER_ENV_FILE
 *              (${PGW_TEST_CLUSTER_DIR}-pgbouncer/env): PGW_PGBOUNCER_HOST,
 *              _PORT, _USER, _PASSWORD, _DB, _SOCKET_DIR, _POOL_SIZE,
 *              _POOL_MODE, _AUTH, _VERSION, _LOG
 *   pgreplica  tests/pg/pg-replica.sh, a streaming standby of the cluster,
 *              PGW_TEST_REPLICA_ENV_FILE (${PGW_TEST_CLUSTER_DIR}-replica/env):
 *              PGW_STANDBY_HOST (127.0.0.1), _PORT, _SOCKET_DIR, _DATADIR,
 *              _LOG, _PRIMARY_PORT
 *   pgreplica_delayed  a second standby of the cluster that applies each
 *              commit an hour late (recovery_min_apply_delay; nothing lifts
 *              it), PGW_TEST_REPLICA_DELAYED_ENV_FILE
 *              (${PGW_TEST_CLUSTER_DIR}-replica-delayed/env): the same keys
 *   krb5       tests/pg/kdc.sh, a Kerberos realm and a cluster of its own
 *              that accepts GSSAPI, PGW_TEST_KRB5_ENV_FILE
 *              (${PGW_TEST_CLUSTER_DIR}-krb5/env): PGW_KRB5_CONFIG,
 *              PGW_KRB_PRINCIPAL, _KEYTAB, _PASSWORD, PGW_GSS_HOST,
 *              _HOSTADDR, _PORT, _USER, _ENC_USER, _NOENC_USER, ... (kdc.sh
 *              lists them)
 * The environment variable of the same name as the compiled-in path
 * overrides it.
 */

/* The value of key in the env file at path, or NULL when the file cannot be
 * read or has no such key. Each file is read once (at its first lookup) and
 * kept until the process exits, as are the strings. */
const char *pgt_env_file_get(const char *path, const char *key);

/* The paths of the pgbouncer, pgreplica and pgreplica_delayed fixtures' env
 * files ("" when none is compiled in). */
const char *pgt_pgbouncer_env_path(void);
const char *pgt_replica_env_path(void);
const char *pgt_replica_delayed_env_path(void);

/* pgt_env_file_get on the pgbouncer / pgreplica / pgreplica_delayed / krb5
 * fixture's env file. */
const char *pgt_pgbouncer_env(const char *key);
const char *pgt_replica_env(const char *key);
const char *pgt_replica_delayed_env(const char *key);
const char *pgt_krb5_env_path(void);
const char *pgt_krb5_env(const char *key);

/* Fail the current test, naming the env file and the fixture, unless the
 * pgbouncer / pgreplica / pgreplica_delayed / krb5 fixture is running (a missing fixture is a
 * failure, never a silent skip: ctest only registers the tests that need
 * one when its programs are installed). */
void pgt_require_pgbouncer(void);
void pgt_require_replica(void);
void pgt_require_replica_delayed(void);
void pgt_require_krb5(void);

/* A conninfo for a PgBouncer of tests/pg/pgbouncer.sh over TCP
 * (sslmode=disable): the one whose directory is dir (NULL: the pgbouncer
 * fixture), its host, port, user and password, dbname (NULL: its
 * database; "pgbouncer": its admin console) and application_name (NULL:
 * none) into buf. Fails the current test when buf is too small. Returns
 * buf. */
char *pgt_pgbouncer_conninfo(char *buf, size_t n, const char *dir, const char *dbname,
                             const char *app);

#endif /* PGW_TESTS_PGTEST_H */
