/*
 * Deadlines and cancel with the blocking client: a query that outlives its
 * deadline is cancelled and completes with PGW_ETIMEDOUT, the client goes
 * on; then another thread cancels a running query. Exits 1 if either does
 * not end as described.
 */
#define _POSIX_C_SOURCE 200809L
#include <pgwire.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *sqlstate(const pgw_result_t *res)
{
    const pgw_error_t *e = pgw_result_error(res);
    return e && e->sqlstate ? e->sqlstate : "";
}

/* Another thread: wait a little, then cancel whatever db runs. */
static void *canceller(void *arg)
{
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    int rc = pgw_client_cancel(arg);
    if (rc < 0) fprintf(stderr, "cancel: %s\n", pgw_strerror(rc));
    return NULL;
}

int main(void)
{
    pgw_client_t *db;
    int rc = pgw_client_connect(&db, "", NULL);
    if (rc < 0) {
        fprintf(stderr, "connect: %s\n", pgw_strerror(rc));
        return 1;
    }

    /* 1. A deadline on one request (cfg.request_timeout_ms sets one for
     * every request). */
    pgw_request_t slow = PGW_QUERY("SELECT pg_sleep(10)", NULL, 0, NULL, NULL);
    slow.timeout_ms = 200;
    pgw_result_t *res;
    rc = pgw_client_run(db, &slow, &res);
    printf("deadline: %s, SQLSTATE %s\n", pgw_err_name(rc), sqlstate(res));
    int ok = rc == PGW_ETIMEDOUT && strcmp(sqlstate(res), "57014") == 0;
    pgw_result_free(res);

    /* The server answered the cancel: the client is usable. */
    ok &= pgw_client_query(db, "SELECT 1", NULL, 0, NULL) == 0;

    /* 2. A cancel from another thread while this one waits. */
    pthread_t t;
    pthread_create(&t, NULL, canceller, db);
    rc = pgw_client_exec(db, "SELECT pg_sleep(10)", &res);
    pthread_join(t, NULL); /* the next call only once the cancel returned */
    printf("cancel: %s, SQLSTATE %s\n", pgw_err_name(rc), sqlstate(res));
    ok &= rc == PGW_ESERVER && strcmp(sqlstate(res), "57014") == 0;
    pgw_result_free(res);

    ok &= pgw_client_query(db, "SELECT 1", NULL, 0, NULL) == 0;
    pgw_client_close(db);
    return ok ? 0 : 1;
}
