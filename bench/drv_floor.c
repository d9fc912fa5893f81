/* The wire floor: the least a client can do and still run the scenario.
 *
 * A raw socket, its own startup (trust auth; cleartext, md5 and SCRAM-SHA-256
 * passwords for a PgBouncer's auth file), every request encoded
 * once before the timed loop, written in one go, and the answers only scanned
 * message by message (type byte and length) and counted: ReadyForQuery to
 * know the exchange is over, DataRow / CommandComplete / PortalSuspended /
 * CopyInResponse to verify the scenario, ErrorResponse to fail it. No value is
 * decoded and nothing is allocated in the timed loop. No library can beat it.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- message encoding (setup only) ---------------------------------------- */
typedef struct mbuf {
    uint8_t *p;
    size_t len, cap;
} mbuf_t;

static void mb_reserve(mbuf_t *b, size_t n)
{
    if (b->len + n <= b->cap) return;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + n)
        cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p) exit(2);
    b->cap = cap;
}
static void mb_put(mbuf_t *b, const void *d, size_t n)
{
    mb_reserve(b, n);
    memcpy(b->p + b->len, d, n);
    b->len += n;
}
static void mb_u8(mbuf_t *b, uint8_t v)
{
    mb_put(b, &v, 1);
}
static void mb_i16(mbuf_t *b, int v)
{
    uint8_t t[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    mb_put(b, t, 2);
}
static void mb_i32(mbuf_t *b, uint32_t v)
{
    uint8_t t[4];
    put32(t, v);
    mb_put(b, t, 4);
}
static void mb_str(mbuf_t *b, const char *s)
{
    mb_put(b, s, strlen(s) + 1);
}
/* Start a message; returns the offset of its length field. */
static size_t mb_begin(mbuf_t *b, char type)
{
    if (type) mb_u8(b, (uint8_t)type);
    size_t at = b->len;
    mb_i32(b, 0);
    return at;
}
static void mb_end(mbuf_t *b, size_t at)
{
    put32(b->p + at, (uint32_t)(b->len - at));
}

static void msg_query(mbuf_t *b, const char *sql)
{
    size_t at = mb_begin(b, 'Q');
    mb_str(b, sql);
    mb_end(b, at);
}
static void msg_parse(mbuf_t *b, const char *name, const char *sql, int ntypes, uint32_t type)
{
    size_t at = mb_begin(b, 'P');
    mb_str(b, name);
    mb_str(b, sql);
    mb_i16(b, ntypes);
    for (int i = 0; i < ntypes; i++)
        mb_i32(b, type);
    mb_end(b, at);
}
/* Bind with zero or one parameter (binary int4 or text), all results in fmt. */
static void msg_bind(mbuf_t *b, const char *stmt, int nparams, int param_binary, const void *val,
                     int vlen, int result_fmt)
{
    size_t at = mb_begin(b, 'B');
    mb_str(b, "");
    mb_str(b, stmt);
    mb_i16(b, 1);
    mb_i16(b, param_binary);
    mb_i16(b, nparams);
    if (nparams) {
        mb_i32(b, (uint32_t)vlen);
        mb_put(b, val, (size_t)vlen);
    }
    mb_i16(b, 1);
    mb_i16(b, result_fmt);
    mb_end(b, at);
}
static void msg_bind_int4(mbuf_t *b, const char *stmt, uint32_t v, int result_fmt)
{
    uint8_t be[4];
    put32(be, v);
    msg_bind(b, stmt, 1, 1, be, 4, result_fmt);
}
static void msg_execute(mbuf_t *b, uint32_t maxrows)
{
    size_t at = mb_begin(b, 'E');
    mb_str(b, "");
    mb_i32(b, maxrows);
    mb_end(b, at);
}
static void msg_simple(mbuf_t *b, char type)
{
    size_t at = mb_begin(b, type);
    mb_end(b, at);
}
static void msg_describe_portal(mbuf_t *b)
{
    size_t at = mb_begin(b, 'D');
    mb_u8(b, 'P');
    mb_str(b, "");
    mb_end(b, at);
}

/* ---- connection and the scanner -------------------------------------------- */
typedef struct counts {
    long z, d, c, e, s, g;
} counts_t;

typedef struct fconn {
    int fd;
    uint8_t hdr[5];
    int hdr_have;
    size_t skip;   /* body bytes of the current message still to pass over */
    char cur;      /* its type */
    char err[160]; /* first bytes of an ErrorResponse body */
    size_t err_len;
    counts_t n;
} fconn_t;

static uint8_t rbuf[1024 * 1024];

/* Count the messages in data; bodies are skipped without being looked at
 * (except an error's, kept for the failure message). */
static void scan(fconn_t *c, const uint8_t *p, size_t len)
{
    while (len) {
        if (c->skip) {
            size_t k = len < c->skip ? len : c->skip;
            if (c->cur == 'E' && c->err_len < sizeof c->err - 1) {
                size_t room = sizeof c->err - 1 - c->err_len;
                size_t m = k < room ? k : room;
                for (size_t i = 0; i < m; i++)
                    c->err[c->err_len++] = p[i] ? (char)p[i] : ' ';
            }
            c->skip -= k;
            p += k;
            len -= k;
            continue;
        }
        size_t want = 5 - (size_t)c->hdr_have;
        size_t k = len < want ? len : want;
        memcpy(c->hdr + c->hdr_have, p, k);
        c->hdr_have += (int)k;
        p += k;
        len -= k;
        if (c->hdr_have < 5) continue;
        c->hdr_have = 0;
        c->cur = (char)c->hdr[0];
        c->skip = be32(c->hdr + 1) - 4;
        switch (c->cur) {
        case 'Z':
            c->n.z++;
            break;
        case 'D':
            c->n.d++;
            break;
        case 'C':
            c->n.c++;
            break;
        case 'E':
            c->n.e++;
            break;
        case 's':
            c->n.s++;
            break;
        case 'G':
            c->n.g++;
            break;
        default:
            break;
        }
    }
}

static int connect_socket(const bench_env_t *env, int tcp)
{
    int fd;
    if (!tcp && env->host[0] == '/') {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s/.s.PGSQL.%s", env->host, env->port);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
            return bench_fail("floor: connect %s: %s", sa.sun_path, strerror(errno));
        return fd;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    const char *host = tcp ? env->tcp_host : env->host;
    if (getaddrinfo(host, env->port, &hints, &ai) != 0)
        return bench_fail("floor: cannot resolve %s", host);
    fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        freeaddrinfo(ai);
        return bench_fail("floor: connect %s: %s", host, strerror(errno));
    }
    freeaddrinfo(ai);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Write all of data, then read until the n-th ReadyForQuery; both at once
 * with poll so that neither side can block the other. Several connections
 * are served together (the pool scenarios). */
static int exchange_many(fconn_t **cs, const uint8_t **data, const size_t *len, const long *want_z,
                         int nc)
{
    size_t off[64] = {0};
    long z0[64];
    struct pollfd pf[64];
    for (int i = 0; i < nc; i++) {
        z0[i] = cs[i]->n.z;
        pf[i].fd = cs[i]->fd;
    }
    for (;;) {
        int pending = 0;
        for (int i = 0; i < nc; i++) {
            pf[i].events = 0;
            if (off[i] < len[i]) pf[i].events |= POLLOUT;
            if (cs[i]->n.z - z0[i] < want_z[i]) pf[i].events |= POLLIN;
            pending |= pf[i].events != 0;
        }
        if (!pending) return 0;
        if (poll(pf, (nfds_t)nc, 30000) <= 0) return bench_fail("floor: timeout");
        for (int i = 0; i < nc; i++) {
            if (pf[i].revents & POLLOUT) {
                ssize_t w = send(cs[i]->fd, data[i] + off[i], len[i] - off[i], MSG_DONTWAIT);
                if (w < 0 && errno != EAGAIN && errno != EINTR)
                    return bench_fail("floor: send: %s", strerror(errno));
                if (w > 0) off[i] += (size_t)w;
            }
            if (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                ssize_t r = recv(cs[i]->fd, rbuf, sizeof rbuf, MSG_DONTWAIT);
                if (r == 0) return bench_fail("floor: connection closed");
                if (r < 0 && errno != EAGAIN && errno != EINTR)
                    return bench_fail("floor: recv: %s", strerror(errno));
                if (r > 0) scan(cs[i], rbuf, (size_t)r);
            }
        }
    }
}

static int exchange(fconn_t *c, const mbuf_t *req, long want_z)
{
    const uint8_t *d = req->p;
    size_t l = req->len;
    return exchange_many(&c, &d, &l, &want_z, 1);
}

/* "md5" + hex(md5(hex(md5(password + user)) + salt)) into out (36 bytes). */
static int md5_password(char out[36], const char *pw, const char *user, const uint8_t salt[4])
{
    static const char hex[] = "0123456789abcdef";
    uint8_t d[16], in[512];
    char h[33];
    size_t lp = strlen(pw), lu = strlen(user);
    if (lp + lu > sizeof in) return -1;
    memcpy(in, pw, lp);
    memcpy(in + lp, user, lu);
    for (int round = 0; round < 2; round++) {
        if (!EVP_Digest(in, round ? 36 : lp + lu, d, NULL, EVP_md5(), NULL)) return -1;
        for (int i = 0; i < 16; i++) {
            h[2 * i] = hex[d[i] >> 4];
            h[2 * i + 1] = hex[d[i] & 15];
        }
        memcpy(in, h, 32);
        memcpy(in + 32, salt, 4);
    }
    memcpy(out, "md5", 3);
    memcpy(out + 3, h, 32);
    out[35] = '\0';
    return 0;
}

/* Send a password-family message ('p') of n bytes. */
static int send_p(fconn_t *c, const void *data, size_t n)
{
    mbuf_t b = {0};
    size_t at = mb_begin(&b, 'p');
    mb_put(&b, data, n);
    mb_end(&b, at);
    ssize_t sent = send(c->fd, b.p, b.len, 0);
    free(b.p);
    return sent == (ssize_t)b.len ? 0 : bench_fail("floor: password send");
}

/* SCRAM-SHA-256 (RFC 7677, no channel binding): the client-first message
 * (AuthenticationSASL) and the proof (AuthenticationSASLContinue). The
 * server's final signature is not checked: the floor only needs in. */
typedef struct scram {
    char first_bare[64];
    char nonce[32];
} scram_t;

static int scram_first(fconn_t *c, scram_t *sc)
{
    uint8_t raw[18];
    if (RAND_bytes(raw, sizeof raw) != 1) return bench_fail("floor: RAND_bytes");
    EVP_EncodeBlock((uint8_t *)sc->nonce, raw, sizeof raw);
    snprintf(sc->first_bare, sizeof sc->first_bare, "n=,r=%s", sc->nonce);
    mbuf_t b = {0};
    mb_str(&b, "SCRAM-SHA-256");
    mb_i32(&b, (uint32_t)(strlen(sc->first_bare) + 3));
    mb_put(&b, "n,,", 3);
    mb_put(&b, sc->first_bare, strlen(sc->first_bare));
    int rc = send_p(c, b.p, b.len);
    free(b.p);
    return rc;
}

static int scram_proof(fconn_t *c, scram_t *sc, const char *pw, const char *srv, size_t n)
{
    char server_first[512], final_bare[256], auth[1024], proof64[64], msg[512];
    uint8_t salt[128], salted[32], ckey[32], stored[32], csig[32];
    unsigned len = 32;
    if (n >= sizeof server_first) return bench_fail("floor: SCRAM message too long");
    memcpy(server_first, srv, n);
    server_first[n] = '\0';
    const char *r = strstr(server_first, "r="), *s64 = strstr(server_first, ",s="),
               *it = strstr(server_first, ",i=");
    if (!r || !s64 || !it || strncmp(r + 2, sc->nonce, strlen(sc->nonce)) != 0)
        return bench_fail("floor: bad SCRAM server-first message");
    size_t rlen = strcspn(r + 2, ","), slen = strcspn(s64 + 3, ",");
    int nsalt = slen < 160 ? EVP_DecodeBlock(salt, (const uint8_t *)s64 + 3, (int)slen) : -1;
    if (nsalt < 0) return bench_fail("floor: bad SCRAM salt");
    while (slen > 0 && s64[3 + slen - 1] == '=') { /* DecodeBlock counts the padding */
        nsalt--;
        slen--;
    }
    snprintf(final_bare, sizeof final_bare, "c=biws,r=%.*s", (int)rlen, r + 2);
    snprintf(auth, sizeof auth, "%s,%s,%s", sc->first_bare, server_first, final_bare);
    if (!PKCS5_PBKDF2_HMAC(pw, (int)strlen(pw), salt, nsalt, atoi(it + 3), EVP_sha256(), 32,
                           salted) ||
        !HMAC(EVP_sha256(), salted, 32, (const uint8_t *)"Client Key", 10, ckey, &len) ||
        !EVP_Digest(ckey, 32, stored, NULL, EVP_sha256(), NULL) ||
        !HMAC(EVP_sha256(), stored, 32, (const uint8_t *)auth, strlen(auth), csig, &len))
        return bench_fail("floor: SCRAM crypto");
    for (int i = 0; i < 32; i++)
        ckey[i] ^= csig[i];
    EVP_EncodeBlock((uint8_t *)proof64, ckey, 32);
    int m = snprintf(msg, sizeof msg, "%s,p=%s", final_bare, proof64);
    return send_p(c, msg, (size_t)m);
}

/* Answer an authentication request (code, then body_len bytes of body):
 * 0 answered or nothing to answer, -1 after bench_fail. */
static int auth_answer(fconn_t *c, const bench_env_t *env, scram_t *sc, uint32_t code,
                       const uint8_t *body, size_t body_len)
{
    char md5[36];
    const char *pw = env->password;
    if (code == 12) return 0; /* SASLFinal: AuthenticationOk follows */
    if ((code != 3 && code != 5 && code != 10 && code != 11) || !pw)
        return bench_fail("floor: needs trust, cleartext, md5 or SCRAM-SHA-256 auth with a "
                          "password (got request %u%s)",
                          code, pw ? "" : ", no password");
    if (code == 10) return scram_first(c, sc);
    if (code == 11) return scram_proof(c, sc, pw, (const char *)body, body_len);
    if (code == 5) {
        if (md5_password(md5, pw, env->user, body) != 0) return bench_fail("floor: md5");
        pw = md5;
    }
    return send_p(c, pw, strlen(pw) + 1);
}

/* Startup: AuthenticationOk (trust, or after a cleartext, md5 or SCRAM
 * password exchange) and on to ReadyForQuery. */
static int startup(fconn_t *c, const bench_env_t *env, int tcp)
{
    memset(c, 0, sizeof *c);
    c->fd = connect_socket(env, tcp);
    if (c->fd < 0) return -1;
    mbuf_t b = {0};
    size_t at = mb_begin(&b, 0);
    mb_i32(&b, 196608);
    mb_str(&b, "user");
    mb_str(&b, env->user);
    mb_str(&b, "database");
    mb_str(&b, env->db);
    mb_u8(&b, 0);
    mb_end(&b, at);
    ssize_t sent = send(c->fd, b.p, b.len, 0);
    free(b.p);
    if (sent != (ssize_t)b.len) return bench_fail("floor: startup send");
    uint8_t in[8192];
    size_t have = 0;
    scram_t sc = {{0}, {0}};
    for (;;) {
        ssize_t r = recv(c->fd, in + have, sizeof in - have, 0);
        if (r <= 0) return bench_fail("floor: startup recv");
        have += (size_t)r;
        size_t pos = 0;
        while (have - pos >= 5) {
            uint32_t len = be32(in + pos + 1);
            if (have - pos < len + 1) break;
            char t = (char)in[pos];
            if (t == 'E') return bench_fail("floor: startup refused");
            if (t == 'R' && len >= 8 && be32(in + pos + 5) != 0 &&
                auth_answer(c, env, &sc, be32(in + pos + 5), in + pos + 9, len - 8) != 0)
                return -1;
            if (t == 'Z') return 0;
            pos += len + 1;
        }
        memmove(in, in + pos, have - pos);
        have -= pos;
        if (have == sizeof in) return bench_fail("floor: startup message too large");
    }
}

static void terminate(fconn_t *c)
{
    uint8_t x[5] = {'X', 0, 0, 0, 4};
    if (send(c->fd, x, 5, MSG_NOSIGNAL) < 0) { /* the server may be gone */
    }
    close(c->fd);
}

/* ---- scenarios ---------------------------------------------------------------- */
typedef struct floor_state {
    const bench_env_t *env;
    fconn_t conn[16];
    int nconn;
    mbuf_t req;          /* the whole request of one operation */
    mbuf_t per_conn[16]; /* pool scenarios: one request per connection */
    mbuf_t *seq;         /* prep_seq: one Bind/Execute/Sync per call */
    int nseq;
    long want_z, want_d, want_c, want_s, want_g;
} floor_state_t;

static floor_state_t *fs_new(const bench_env_t *env, int nconn)
{
    floor_state_t *s = calloc(1, sizeof *s);
    s->env = env;
    s->nconn = nconn;
    for (int i = 0; i < nconn; i++)
        if (startup(&s->conn[i], env, 0) != 0) {
            free(s);
            return NULL;
        }
    return s;
}

static void fs_free(void *st)
{
    floor_state_t *s = st;
    for (int i = 0; i < s->nconn; i++)
        terminate(&s->conn[i]);
    free(s->req.p);
    for (int i = 0; i < 16; i++)
        free(s->per_conn[i].p);
    for (int i = 0; i < s->nseq; i++)
        free(s->seq[i].p);
    free(s->seq);
    free(s);
}

/* Check the counts this operation added. */
static int verify(floor_state_t *s, fconn_t *c, const counts_t *before, long z, long d, long cc,
                  long sus, long g)
{
    counts_t n = c->n;
    if (n.e != before->e) return bench_fail("floor: server error: %.150s", c->err);
    if (n.z - before->z != z || (d >= 0 && n.d - before->d != d) ||
        (cc >= 0 && n.c - before->c != cc) || (sus >= 0 && n.s - before->s != sus) ||
        (g >= 0 && n.g - before->g != g))
        return bench_fail("floor: counts Z%ld D%ld C%ld s%ld G%ld, expected Z%ld D%ld C%ld s%ld "
                          "G%ld",
                          n.z - before->z, n.d - before->d, n.c - before->c, n.s - before->s,
                          n.g - before->g, z, d, cc, sus, g);
    (void)s;
    return 0;
}

static int generic_op(void *st, uint64_t *sum)
{
    floor_state_t *s = st;
    counts_t before = s->conn[0].n;
    if (exchange(&s->conn[0], &s->req, s->want_z) != 0) return -1;
    *sum = (uint64_t)s->want_d;
    return verify(s, &s->conn[0], &before, s->want_z, s->want_d, s->want_c, s->want_s, s->want_g);
}

/* connect: the raw startup exchange over TCP, then Terminate. */
static void *connect_setup(const bench_env_t *env)
{
    floor_state_t *s = calloc(1, sizeof *s);
    s->env = env;
    return s;
}
static int connect_op(void *st, uint64_t *sum)
{
    floor_state_t *s = st;
    fconn_t c;
    if (startup(&c, s->env, 1) != 0) return -1;
    terminate(&c);
    *sum = 0;
    return 0;
}

#define SETUP(name, nconn)                     \
    static void *name(const bench_env_t *env)  \
    {                                          \
        floor_state_t *s = fs_new(env, nconn); \
        if (!s) return NULL;                   \
        name##_build(s);                       \
        return s;                              \
    }

static void simple_seq_build(floor_state_t *s)
{
    msg_query(&s->req, SQL_SIMPLE_SEQ);
    s->want_z = 1, s->want_d = 1, s->want_c = 1, s->want_s = -1, s->want_g = -1;
}
SETUP(simple_seq, 1)

static void simple_conc_build(floor_state_t *s)
{
    char sql[32];
    for (int i = 0; i < bench_sz.simple_conc; i++) {
        snprintf(sql, sizeof sql, "select %d", i + 1);
        msg_query(&s->req, sql);
    }
    s->want_z = s->want_d = s->want_c = bench_sz.simple_conc, s->want_s = -1, s->want_g = -1;
}
SETUP(simple_conc, 1)

static void simple_fetch_build(floor_state_t *s)
{
    msg_query(&s->req, SQL_SIMPLE_FETCH);
    s->want_z = 1, s->want_d = 1000, s->want_c = 1, s->want_s = -1, s->want_g = -1;
}
SETUP(simple_fetch, 1)

/* Parse/Bind/Describe/Execute/Sync of one unnamed statement with one int4. */
static void ext_call(mbuf_t *b, const char *sql, uint32_t v, int result_fmt)
{
    msg_parse(b, "", sql, 1, 23);
    msg_bind_int4(b, "", v, result_fmt);
    msg_describe_portal(b);
    msg_execute(b, 0);
    msg_simple(b, 'S');
}

static void ext_seq_build(floor_state_t *s)
{
    ext_call(&s->req, SQL_EXT_SEQ, 42, 1);
    s->want_z = 1, s->want_d = 1, s->want_c = 1, s->want_s = -1, s->want_g = -1;
}
SETUP(ext_seq, 1)

static void ext_conc_build(floor_state_t *s)
{
    for (int i = 0; i < bench_sz.ext_conc; i++)
        ext_call(&s->req, SQL_EXT_SEQ, (uint32_t)i + 1, 1);
    s->want_z = s->want_d = s->want_c = bench_sz.ext_conc, s->want_s = -1, s->want_g = -1;
}
SETUP(ext_conc, 1)

/* A one-parameter fetch: $1 as text, like a caller's literal row count. */
static void fetch_call(floor_state_t *s, const char *sql, const char *n, int fmt, long rows)
{
    msg_parse(&s->req, "", sql, 0, 0);
    msg_bind(&s->req, "", 1, 0, n, (int)strlen(n), fmt);
    msg_describe_portal(&s->req);
    msg_execute(&s->req, 0);
    msg_simple(&s->req, 'S');
    s->want_z = 1, s->want_d = rows, s->want_c = 1, s->want_s = -1, s->want_g = -1;
}
static void mixed_text_build(floor_state_t *s)
{
    fetch_call(s, SQL_MIXED, "1000", 0, 1000);
}
SETUP(mixed_text, 1)
static void mixed_binary_build(floor_state_t *s)
{
    fetch_call(s, SQL_MIXED, "1000", 1, 1000);
}
SETUP(mixed_binary, 1)
static void blob_fetch_build(floor_state_t *s)
{
    fetch_call(s, SQL_BLOB, "10", 1, 10);
}
SETUP(blob_fetch, 1)
static void array_fetch_build(floor_state_t *s)
{
    fetch_call(s, SQL_ARRAY, "10", 1, 10);
}
SETUP(array_fetch, 1)

/* Prepared reuse: Parse once in setup (named), then Bind/Execute/Sync. */
static int prepare_named(floor_state_t *s, fconn_t *c, const char *name, const char *sql,
                         int ntypes)
{
    mbuf_t b = {0};
    counts_t before = c->n;
    msg_parse(&b, name, sql, ntypes, 23);
    msg_simple(&b, 'S');
    int rc = exchange(c, &b, 1);
    free(b.p);
    return rc ? rc : verify(s, c, &before, 1, 0, 0, 0, 0);
}

static void *prep_seq_setup(const bench_env_t *env)
{
    floor_state_t *s = fs_new(env, 1);
    if (!s || prepare_named(s, &s->conn[0], "bench_prep", SQL_PREP, 1) != 0) return NULL;
    s->nseq = bench_sz.prep_reuse;
    s->seq = calloc((size_t)s->nseq, sizeof *s->seq);
    for (int i = 0; i < s->nseq; i++) {
        msg_bind_int4(&s->seq[i], "bench_prep", (uint32_t)i + 1, 1);
        msg_execute(&s->seq[i], 0);
        msg_simple(&s->seq[i], 'S');
    }
    return s;
}
static int prep_seq_op(void *st, uint64_t *sum)
{
    floor_state_t *s = st;
    for (int i = 0; i < s->nseq; i++) {
        counts_t before = s->conn[0].n;
        if (exchange(&s->conn[0], &s->seq[i], 1) != 0 ||
            verify(s, &s->conn[0], &before, 1, 1, 1, -1, -1) != 0)
            return -1;
    }
    *sum = (uint64_t)s->nseq;
    return 0;
}

static void *prep_conc_setup(const bench_env_t *env)
{
    floor_state_t *s = fs_new(env, 1);
    if (!s || prepare_named(s, &s->conn[0], "bench_prep", SQL_PREP, 1) != 0) return NULL;
    for (int i = 0; i < bench_sz.prep_reuse; i++) {
        msg_bind_int4(&s->req, "bench_prep", (uint32_t)i + 1, 1);
        msg_execute(&s->req, 0);
        msg_simple(&s->req, 'S');
    }
    s->want_z = s->want_d = s->want_c = bench_sz.prep_reuse, s->want_s = -1, s->want_g = -1;
    return s;
}

/* Per-Connection Ceiling: the batch's Bind/Execute pairs and its Sync,
 * encoded once, written at once. */
static void *ceiling_setup(const bench_env_t *env)
{
    floor_state_t *s = fs_new(env, 1);
    if (!s || prepare_named(s, &s->conn[0], CEILING_STMT, SQL_EXT_SEQ, 1) != 0) return NULL;
    for (int i = 0; i < bench_sz.ceiling; i++) {
        msg_bind_int4(&s->req, CEILING_STMT, (uint32_t)i + 1, 1);
        msg_execute(&s->req, 0);
    }
    msg_simple(&s->req, 'S');
    s->want_z = 1, s->want_d = s->want_c = bench_sz.ceiling, s->want_s = -1, s->want_g = -1;
    return s;
}

static void unit_of_work_build(floor_state_t *s)
{
    for (int k = 0; k < bench_sz.uow_stmts; k++) {
        int np = bench_uow_is_read(k) ? 0 : 1;
        msg_parse(&s->req, "", bench_uow_sql(k), 0, 0);
        msg_bind(&s->req, "", np, 0, "1", 1, 0);
        msg_describe_portal(&s->req);
        msg_execute(&s->req, 0);
    }
    msg_simple(&s->req, 'S');
    s->want_z = 1, s->want_d = 5, s->want_c = bench_sz.uow_stmts, s->want_s = -1, s->want_g = -1;
}
SETUP(unit_of_work, 1)

/* Bulk load: the rows are formatted once, here, outside the timed loop. */
static void copy_build(floor_state_t *s, int binary)
{
    bench_copy_row_t *rows = bench_copy_rows(bench_sz.copy_rows);
    msg_query(&s->req, "TRUNCATE bench_copy");
    msg_query(&s->req, binary ? "COPY bench_copy FROM STDIN (FORMAT binary)"
                              : "COPY bench_copy FROM STDIN (FORMAT csv)");
    uint8_t chunk[128];
    size_t at = mb_begin(&s->req, 'd');
    size_t in_msg = 0;
    if (binary) {
        mb_put(&s->req, bench_copy_bin_header, sizeof bench_copy_bin_header);
    }
    for (int i = 0; i < bench_sz.copy_rows; i++) {
        size_t n =
            binary ? bench_copy_bin(chunk, &rows[i]) : bench_copy_csv((char *)chunk, &rows[i]);
        mb_put(&s->req, chunk, n);
        in_msg += n;
        if (in_msg > 256 * 1024 - 128) {
            mb_end(&s->req, at);
            at = mb_begin(&s->req, 'd');
            in_msg = 0;
        }
    }
    if (binary) mb_i16(&s->req, -1);
    mb_end(&s->req, at);
    msg_simple(&s->req, 'c');
    free(rows);
    s->want_z = 2, s->want_d = 0, s->want_c = 2, s->want_s = -1, s->want_g = 1;
}
static void copy_text_build(floor_state_t *s)
{
    copy_build(s, 0);
}
SETUP(copy_text, 1)
static void copy_binary_build(floor_state_t *s)
{
    copy_build(s, 1);
}
SETUP(copy_binary, 1)

/* Cursor: one portal, Execute with a row limit of 500 until it is drained. */
static void cursor_build(floor_state_t *s)
{
    char sql[256];
    snprintf(sql, sizeof sql, SQL_CURSOR, bench_sz.cursor_rows);
    msg_parse(&s->req, "", sql, 0, 0);
    msg_bind(&s->req, "", 0, 0, NULL, 0, 1);
    int batches = bench_sz.cursor_rows / bench_sz.cursor_batch + 1;
    for (int i = 0; i < batches; i++)
        msg_execute(&s->req, (uint32_t)bench_sz.cursor_batch);
    msg_simple(&s->req, 'S');
    s->want_z = 1, s->want_d = bench_sz.cursor_rows, s->want_c = 1, s->want_s = batches - 1;
    s->want_g = -1;
}
SETUP(cursor, 1)

/* Pool: pool_size connections, the calls spread evenly, each its own Sync. */
static void pool_build(floor_state_t *s, int ext)
{
    int per = bench_sz.pool_conc / bench_sz.pool_size;
    for (int c = 0; c < s->nconn; c++)
        for (int i = 0; i < per; i++) {
            if (ext)
                ext_call(&s->per_conn[c], SQL_POOL_EXT, (uint32_t)i + 1, 1);
            else
                msg_query(&s->per_conn[c], SQL_POOL_SIMPLE);
        }
    s->want_z = per;
}
static void pool_simple_build(floor_state_t *s)
{
    pool_build(s, 0);
}
static void pool_ext_build(floor_state_t *s)
{
    pool_build(s, 1);
}
SETUP(pool_simple, 10)
SETUP(pool_ext, 10)

static int pool_op(void *st, uint64_t *sum)
{
    floor_state_t *s = st;
    fconn_t *cs[16];
    const uint8_t *d[16];
    size_t l[16];
    long z[16];
    counts_t before[16];
    for (int i = 0; i < s->nconn; i++) {
        cs[i] = &s->conn[i];
        d[i] = s->per_conn[i].p;
        l[i] = s->per_conn[i].len;
        z[i] = s->want_z;
        before[i] = s->conn[i].n;
    }
    if (exchange_many(cs, d, l, z, s->nconn) != 0) return -1;
    for (int i = 0; i < s->nconn; i++)
        if (verify(s, cs[i], &before[i], s->want_z, s->want_z, s->want_z, -1, -1) != 0) return -1;
    *sum = 0;
    return 0;
}

/* Suite B: prepared once; Bind/Execute/Sync, once or ten times. */
static void *b_setup(const bench_env_t *env, int limit, int n)
{
    char sql[128];
    snprintf(sql, sizeof sql, SQL_B_FMT, limit);
    floor_state_t *s = fs_new(env, 1);
    if (!s || prepare_named(s, &s->conn[0], "bench_b", sql, 0) != 0) return NULL;
    for (int i = 0; i < n; i++) {
        msg_bind(&s->req, "bench_b", 0, 0, NULL, 0, 1);
        msg_execute(&s->req, 0);
        msg_simple(&s->req, 'S');
    }
    s->want_z = n, s->want_d = (long)n * limit, s->want_c = n, s->want_s = -1, s->want_g = -1;
    return s;
}
#define B_SETUPS(l)                                       \
    static void *b_seq_setup_##l(const bench_env_t *env)  \
    {                                                     \
        return b_setup(env, l, 1);                        \
    }                                                     \
    static void *b_pipe_setup_##l(const bench_env_t *env) \
    {                                                     \
        return b_setup(env, l, 10);                       \
    }
B_SETUPS(1)
B_SETUPS(100)
B_SETUPS(500)

static const char NOTE[] = "pre-encoded requests, answers scanned for message types only";

static const struct {
    const char *id;
    bench_impl_t impl;
} table[] = {
    {"connect", {connect_setup, connect_op, fs_free, "raw TCP startup exchange + Terminate"}},
    {"simple_seq", {simple_seq, generic_op, fs_free, NOTE}},
    {"simple_conc",
     {simple_conc, generic_op, fs_free,
      "100 Query messages in one write (the protocol allows it)"}},
    {"simple_fetch", {simple_fetch, generic_op, fs_free, NOTE}},
    {"ext_seq", {ext_seq, generic_op, fs_free, NOTE}},
    {"ext_conc", {ext_conc, generic_op, fs_free, NOTE}},
    {"mixed_text", {mixed_text, generic_op, fs_free, NOTE}},
    {"mixed_binary", {mixed_binary, generic_op, fs_free, NOTE}},
    {"blob_fetch", {blob_fetch, generic_op, fs_free, NOTE}},
    {"array_fetch", {array_fetch, generic_op, fs_free, NOTE}},
    {"prep_seq", {prep_seq_setup, prep_seq_op, fs_free, NOTE}},
    {"prep_conc", {prep_conc_setup, generic_op, fs_free, NOTE}},
    {"unit_of_work", {unit_of_work, generic_op, fs_free, NOTE}},
    {"copy_text",
     {copy_text, generic_op, fs_free, "CSV formatted once before the timed loop, not in it"}},
    {"copy_binary", {copy_binary, generic_op, fs_free, "binary COPY encoded once before the loop"}},
    {"cursor",
     {cursor, generic_op, fs_free, "one portal, Execute(500) messages sent together, one Sync"}},
    {"pool_simple",
     {pool_simple, pool_op, fs_free,
      "10 raw connections, 100 pipelined calls each (written at once, answers scanned)"}},
    {"pool_ext",
     {pool_ext, pool_op, fs_free,
      "10 raw connections, 100 pipelined calls each (written at once, answers scanned)"}},
    {"c_rtt", {simple_seq, generic_op, fs_free, NOTE}},
    {"ceiling", {ceiling_setup, generic_op, fs_free, NOTE}},
    {"b_seq_1", {b_seq_setup_1, generic_op, fs_free, NOTE}},
    {"b_seq_100", {b_seq_setup_100, generic_op, fs_free, NOTE}},
    {"b_seq_500", {b_seq_setup_500, generic_op, fs_free, NOTE}},
    {"b_pipe_1", {b_pipe_setup_1, generic_op, fs_free, NOTE}},
    {"b_pipe_100", {b_pipe_setup_100, generic_op, fs_free, NOTE}},
    {"b_pipe_500", {b_pipe_setup_500, generic_op, fs_free, NOTE}},
};

const bench_impl_t *bench_floor_lookup(const char *scenario, const char **reason)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].id, scenario) == 0) return &table[i].impl;
    *reason = strcmp(scenario, "connect_tls") == 0 || strcmp(scenario, "blob_fetch_tls") == 0
                  ? "the wire floor speaks no TLS: compare with the plaintext row (connect, "
                    "blob_fetch) for the cost of TLS"
              : strcmp(scenario, "connect_gss") == 0
                  ? "the wire floor speaks no GSSAPI: compare with the plaintext row (connect) "
                    "for the cost of Kerberos and GSS encryption"
                  : "not in this harness";
    return NULL;
}

/* ---- suite C ------------------------------------------------------------------- */
/* Every test's request is encoded once in setup, before any test is timed. */
static void *c_setup(const bench_env_t *env)
{
    floor_state_t *s = fs_new(env, 1);
    if (!s) return NULL;
    int n;
    bench_c_test_t *tests = bench_c_tests(&n);
    s->nseq = n;
    s->seq = calloc((size_t)n, sizeof *s->seq);
    for (int k = 0; k < n; k++) {
        const bench_c_test_t *t = &tests[k];
        for (int i = 0; i < t->nstmts; i++) {
            msg_parse(&s->seq[k], "", t->stmts[i].sql, 0, 0);
            msg_bind(&s->seq[k], "", 0, 0, NULL, 0, 0);
            msg_execute(&s->seq[k], 0);
            if (t->sync_each) msg_simple(&s->seq[k], 'S');
        }
        if (!t->sync_each) msg_simple(&s->seq[k], 'S');
    }
    return s;
}

static int c_run(void *st, const bench_c_test_t *t)
{
    floor_state_t *s = st;
    int n;
    bench_c_test_t *tests = bench_c_tests(&n);
    long idx = t - tests, rows = 0;
    if (idx < 0 || idx >= s->nseq) return bench_fail("floor: unknown test");
    for (int i = 0; i < t->nstmts; i++)
        if (t->stmts[i].expect_rows > 0) rows += t->stmts[i].expect_rows;
    long z = t->sync_each ? t->nstmts : 1;
    counts_t before = s->conn[0].n;
    if (exchange(&s->conn[0], &s->seq[idx], z) != 0) return -1;
    return verify(s, &s->conn[0], &before, z, rows, t->nstmts, -1, -1);
}

static const bench_c_impl_t c_impl = {c_setup, c_run, fs_free};
const bench_c_impl_t *bench_floor_c(void)
{
    return &c_impl;
}
