/*
 * LISTEN/NOTIFY with the blocking client: one client listens, another
 * notifies, the first waits for the notifications. Exits 1 if they do not
 * arrive as sent.
 */
#include <pgwire.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    pgw_client_t *listener, *sender;
    int rc = pgw_client_connect(&listener, "", NULL);
    if (rc == 0) rc = pgw_client_connect(&sender, "", NULL);
    if (rc < 0) {
        fprintf(stderr, "connect: %s\n", pgw_strerror(rc));
        return 1;
    }
    /* The channel is quoted as an identifier: used exactly as given. */
    int ok = pgw_client_listen(listener, "Jobs") == 0;

    for (int i = 1; i <= 3; i++) {
        char payload[32];
        snprintf(payload, sizeof payload, "job %d", i);
        pgw_param_t p[] = {pgw_text("Jobs"), pgw_text(payload)};
        ok &= pgw_client_query(sender, "SELECT pg_notify($1, $2)", p, 2, NULL) == 0;
    }

    /* Notifications queue in the client during any of its calls; this
     * one waits for the next at most 5 s. */
    pgw_notification_t n;
    for (int i = 1; i <= 3; i++) {
        rc = pgw_client_wait_notification(listener, 5000, &n);
        if (rc < 0) {
            fprintf(stderr, "wait: %s\n", pgw_strerror(rc));
            ok = 0;
            break;
        }
        printf("from backend %d on \"%s\": %s\n", (int)n.pid, n.channel, n.payload);
        ok &= strcmp(n.channel, "Jobs") == 0 && n.pid == pgw_client_backend_pid(sender) &&
              n.missed == 0;
    }
    /* Nothing more: PGW_ETIMEDOUT after 100 ms. */
    ok &= pgw_client_wait_notification(listener, 100, &n) == PGW_ETIMEDOUT;

    pgw_client_close(sender);
    pgw_client_close(listener);
    return ok ? 0 : 1;
}
