/*
 * pgproxy: an in-process TCP fault proxy for tests (asyncpg's model), on
 * libuv, on a thread and loop of its own, so that blocking clients, pools
 * and connections on the test's own loop can all go through it.
 *
 * It listens on 127.0.0.1 (a free port) and relays every connection it
 * accepts to the target. It knows the protocol's framing in both
 * directions (the startup family, typed messages, the one-byte answer to
 * SSLRequest, then TLS records once TLS is negotiated, or at once with
 * sslnegotiation=direct), so faults can land exactly at a message boundary
 * or inside a message, under TLS too (TLS records are its messages then).
 *
 * Faults:
 *   - blackhole: nothing moves and nothing is closed, as in a network
 *     partition: the relay stops reading both sides of every connection
 *     and stops accepting (new connects complete into the backlog, or hang
 *     once it is full); restoring lets everything held go on, in order.
 *     (The local kernel still acknowledges what the client writes: a test
 *     of TCP_USER_TIMEOUT and keepalives needs a real partition, see
 *     test_deadline_partition.c.)
 *   - reset / close of every connection now: a TCP RST to the client
 *     (SO_LINGER 0), or an orderly close.
 *   - latency: every chunk is delayed by that many milliseconds.
 *   - split: bytes to the client are written one at a time, 1 ms apart.
 *   - a planned cut: on connections accepted from now on, forward `units`
 *     whole messages in one direction, then `bytes` bytes of the next one
 *     (0: cut at the boundary; a message shorter than that is cut before
 *     its last byte), then reset or close both sides.
 *   - random cuts: each connection accepted from now on gets, with the
 *     given probability, a cut at a random message (below max_units) in a
 *     random direction, at its boundary or inside it, by RST or close,
 *     drawn from the seed.
 *
 * Rewriting (plaintext only): a hidden parameter's ParameterStatus
 * messages are dropped on their way to the client, so a current server
 * looks like an older one that never reports it (in_hot_standby before
 * PostgreSQL 14), or sent with another value (a client_encoding no
 * PostgreSQL reports).
 *
 * Every call may come from any thread; the setting calls return once the
 * proxy's loop applied them. Failures fail the current cmocka test.
 */
#ifndef PGW_TESTS_PGPROXY_H
#define PGW_TESTS_PGPROXY_H

#include <stddef.h>
#include <stdint.h>

typedef struct pgt_proxy pgt_proxy_t;

/* Directions of a cut. */
enum { PGT_TO_SERVER = 0, PGT_TO_CLIENT = 1 };

typedef struct pgt_proxy_cut {
    int dir;        /* PGT_TO_SERVER or PGT_TO_CLIENT */
    uint64_t units; /* whole messages forwarded first in that direction */
    uint64_t bytes; /* then bytes of the next one (0: at the boundary) */
    int rst;        /* 1: RST to the client; 0: an orderly close */
} pgt_proxy_cut_t;

typedef struct pgt_proxy_stats {
    uint64_t accepted;             /* connections accepted */
    uint64_t active;               /* connections open now */
    uint64_t cuts;                 /* planned or random cuts done */
    uint64_t resets;               /* connections closed by RST (cuts and reset_all) */
    uint64_t to_server, to_client; /* bytes relayed */
    uint64_t last_cut_ns;          /* uv_hrtime of the last cut or reset (0: none) */
} pgt_proxy_stats_t;

/* Start relaying 127.0.0.1:<a free port> to host:port (numeric IPv4). */
pgt_proxy_t *pgt_proxy_start(const char *host, unsigned port);
/* Start a proxy in front of the test server's TCP address (pgtest.h:
 * PGW_TEST_TCP_HOST and PGPORT). */
pgt_proxy_t *pgt_proxy_start_server(void);
/* The port it listens on. */
unsigned pgt_proxy_port(const pgt_proxy_t *p);
/* Close every connection, stop the thread, free p (NULL: nothing). */
void pgt_proxy_stop(pgt_proxy_t *p);

/* A keyword/value connection string to the test server through the proxy
 * as the trust user (pgtest.h's pgt_conninfo with host and port of the
 * proxy), then " " and extra when not NULL. Returns buf. */
char *pgt_proxy_conninfo(const pgt_proxy_t *p, char *buf, size_t n, const char *extra);

void pgt_proxy_blackhole(pgt_proxy_t *p, int on);
void pgt_proxy_reset_all(pgt_proxy_t *p);
void pgt_proxy_close_all(pgt_proxy_t *p);
void pgt_proxy_latency(pgt_proxy_t *p, unsigned ms);
void pgt_proxy_split(pgt_proxy_t *p, int on);
/* cut NULL: no planned cut. */
void pgt_proxy_plan_cut(pgt_proxy_t *p, const pgt_proxy_cut_t *cut);
/* probability 0: no random cuts. */
void pgt_proxy_random_cuts(pgt_proxy_t *p, uint64_t seed, double probability, uint64_t max_units);

void pgt_proxy_stats(pgt_proxy_t *p, pgt_proxy_stats_t *out);

/* Drop every ParameterStatus of name (at most 63 bytes) sent to the
 * clients of connections accepted from now on; NULL: drop none. */
void pgt_proxy_hide_parameter(pgt_proxy_t *p, const char *name);
/* Send every ParameterStatus of name with value instead of the server's
 * (each at most 63 bytes) to the clients of connections accepted from now
 * on. It replaces a hidden parameter; pgt_proxy_hide_parameter(p, NULL)
 * ends it. */
void pgt_proxy_rewrite_parameter(pgt_proxy_t *p, const char *name, const char *value);

#endif /* PGW_TESTS_PGPROXY_H */
