/*
 * A listener on a libuv loop: a set of channels kept listened on across
 * reconnects. Once it is ready, a NOTIFY is sent on its connection and
 * the notification comes back through on_notification; then the
 * listener is closed. Exits 1 if the notification does not arrive within
 * 10 s.
 */
#define _POSIX_C_SOURCE 200809L
#include <pgwire.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>

typedef struct app {
    pgw_listener_t *listener;
    uv_timer_t give_up;
    int received;
} app_t;

static void on_closed(pgw_listener_t *l, void *ud)
{
    (void)l;
    app_t *app = ud;
    uv_close((uv_handle_t *)&app->give_up, NULL);
}

static void finish(app_t *app)
{
    if (app->listener) pgw_listener_close(app->listener, on_closed, app);
    app->listener = NULL; /* freed once closed */
}

static void on_timeout(uv_timer_t *t)
{
    fprintf(stderr, "no notification within 10 s\n");
    finish(t->data);
}

/* The NOTIFY ran: the server delivers notifications before it reports
 * that, so ours has arrived by now. */
static void on_notified(int status, pgw_result_t *res, void *ud)
{
    if (status < 0) fprintf(stderr, "NOTIFY: %s\n", pgw_strerror(status));
    pgw_result_free(res);
    finish(ud);
}

static void on_event(pgw_listener_t *l, pgw_listener_event_t event, int status, void *ud)
{
    switch (event) {
    case PGW_LISTENER_READY: /* every channel is listened on: notify one */
        printf("ready\n");
        pgw_conn_simple_query(pgw_listener_conn(l), "NOTIFY jobs, 'hello'", on_notified, ud);
        break;
    case PGW_LISTENER_LOST: /* reconnecting; notifications may be missed */
        printf("lost: %s\n", pgw_strerror(status));
        break;
    case PGW_LISTENER_GAP: /* back: re-read what the notifications announce */
        printf("gap: listening again\n");
        break;
    case PGW_LISTENER_RETRY:
        printf("connect failed, retrying: %s\n", pgw_strerror(status));
        break;
    }
}

static void on_notification(pgw_listener_t *l, int32_t pid, pgw_str_t channel, pgw_str_t payload,
                            void *ud)
{
    (void)l;
    app_t *app = ud;
    printf("notification from %d on %.*s: %.*s\n", (int)pid, (int)channel.len, channel.p,
           (int)payload.len, payload.p);
    if (payload.len == 5 && memcmp(payload.p, "hello", 5) == 0) app->received = 1;
}

int main(void)
{
    uv_loop_t *loop = uv_default_loop();
    app_t app = {0};
    pgw_listener_config_t cfg;
    pgw_listener_config_init(&cfg);
    cfg.on_event = on_event;
    cfg.on_notification = on_notification;
    cfg.ud = &app;
    int rc = pgw_listener_new(&app.listener, loop, "", &cfg);
    if (rc == 0) rc = pgw_listener_listen(app.listener, "jobs", NULL, NULL);
    if (rc < 0) {
        fprintf(stderr, "listener: %s\n", pgw_strerror(rc));
        return 1;
    }
    uv_timer_init(loop, &app.give_up);
    app.give_up.data = &app;
    uv_timer_start(&app.give_up, on_timeout, 10000, 0);
    uv_run(loop, UV_RUN_DEFAULT); /* returns once the listener is closed */
    uv_loop_close(loop);
    return app.received ? 0 : 1;
}
