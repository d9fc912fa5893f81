/* Fixture scripts from a test (pgpair.h). */
#define _POSIX_C_SOURCE 200809L /* uv.h: pthread_rwlock_t */
#include "pgpair.h"

#include "pgtest.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static uint64_t now_ms(void)
{
    return uv_hrtime() / 1000000;
}

static void on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
    pgt_child_t *c = p->data;
    c->exited = 1;
    c->status = sig ? -sig : status;
    c->ended_ms = now_ms();
    uv_close((uv_handle_t *)p, NULL);
}

/* uv_spawn's status (0 or a libuv error). */
static int spawn(uv_loop_t *loop, pgt_child_t *c, const char *name, const char *cmd,
                 const char *dir, const char *arg)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s/tests/pg/%s", PGW_SOURCE_DIR, name);
    char *argv[] = {"env",   "-u",        "PGHOST",    "-u",        "PGPORT", "bash",
                    c->path, (char *)cmd, (char *)dir, (char *)arg, NULL};
    uv_stdio_container_t stdio[3] = {
        {.flags = UV_IGNORE}, {.flags = UV_IGNORE}, {.flags = UV_INHERIT_FD, .data.fd = 2}};
    uv_process_options_t o;
    memset(&o, 0, sizeof o);
    o.file = argv[0];
    o.args = argv;
    o.exit_cb = on_exit_cb;
    o.stdio = stdio;
    o.stdio_count = 3;
    c->proc.data = c;
    c->started_ms = now_ms();
    return uv_spawn(loop, &c->proc, &o);
}

void pgt_script_spawn(uv_loop_t *loop, pgt_child_t *c, const char *name, const char *cmd,
                      const char *dir, const char *arg)
{
    assert_int_equal(spawn(loop, c, name, cmd, dir, arg), 0);
}

int pgt_script_exit(const char *name, const char *cmd, const char *dir, const char *arg)
{
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) return -1;
    pgt_child_t c;
    int rc = spawn(&loop, &c, name, cmd, dir, arg);
    if (rc == 0) uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    return rc == 0 ? (int)c.status : -1;
}

void pgt_script_run(const char *name, const char *cmd, const char *dir, const char *arg)
{
    int st = pgt_script_exit(name, cmd, dir, arg);
    if (st != 0) fail_msg("%s %s %s: exit %d", name, cmd, dir, st);
}

const char *pgt_dir_env(const char *dir, const char *key)
{
    char path[256];
    snprintf(path, sizeof path, "%s/env", dir);
    const char *v = pgt_env_file_get(path, key);
    if (v == NULL) fail_msg("%s has no %s", path, key);
    return v;
}

void pgt_cluster_start(char dir[64], const char *tag, char *ci, size_t cilen)
{
    snprintf(dir, 64, "/tmp/pgw-%s.XXXXXX", tag);
    assert_non_null(mkdtemp(dir));
    if (pgt_script_exit("pg-cluster.sh", "start", dir, NULL) != 0) {
        pgt_script_exit("pg-cluster.sh", "stop", dir, NULL);
        fail_msg("could not start a private cluster in %s", dir);
    }
    snprintf(ci, cilen, "host='%s' port=%s user=%s dbname=%s connect_timeout=5",
             pgt_dir_env(dir, "PGHOST"), pgt_dir_env(dir, "PGPORT"), pgt_dir_env(dir, "PGUSER"),
             pgt_dir_env(dir, "PGDATABASE"));
}

void pgt_cluster_stop(const char *dir)
{
    pgt_script_exit("pg-cluster.sh", "stop", dir, NULL);
    rmdir(dir);
}

void pgt_pair_start(pgt_pair_t *p, const char *tag)
{
    snprintf(p->tmpdir, sizeof p->tmpdir, "/tmp/pgw-%s.XXXXXX", tag);
    assert_non_null(mkdtemp(p->tmpdir));
    snprintf(p->primary, sizeof p->primary, "%s/primary", p->tmpdir);
    snprintf(p->standby, sizeof p->standby, "%s/standby", p->tmpdir);
    pgt_script_run("pg-cluster.sh", "start", p->primary, NULL);
    char env[256];
    snprintf(env, sizeof env, "%s/env", p->primary);
    pgt_script_run("pg-replica.sh", "start", p->standby, env);
}

void pgt_pair_stop(pgt_pair_t *p)
{
    pgt_script_run("pg-replica.sh", "stop", p->standby, NULL);
    pgt_script_run("pg-cluster.sh", "stop", p->primary, NULL);
    rmdir(p->tmpdir);
}

void pgt_pair_conninfo(const pgt_pair_t *p, char *buf, size_t n, const char *port1,
                       const char *port2)
{
    char hosts[64], ports[32];
    snprintf(hosts, sizeof hosts, "127.0.0.1%s", port2 ? ",127.0.0.1" : "");
    snprintf(ports, sizeof ports, "%s%s%s", port1, port2 ? "," : "", port2 ? port2 : "");
    buf[0] = '\0';
    assert_int_equal(pgt_conninfo_append(buf, n, "host", hosts), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "port", ports), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "user", pgt_dir_env(p->primary, "PGUSER")), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "dbname", pgt_dir_env(p->primary, "PGDATABASE")),
                     0);
    assert_int_equal(pgt_conninfo_append(buf, n, "sslmode", "disable"), 0);
    assert_int_equal(pgt_conninfo_append(buf, n, "connect_timeout", "5"), 0);
}
