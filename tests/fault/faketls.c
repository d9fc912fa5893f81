/* faketls: see faketls.h. */
#define _POSIX_C_SOURCE 200809L
#include "faketls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define WAIT_MS 10000

typedef struct conn {
    faketls_t *f;
    int fd;
    int index;
    pthread_t thread;
} conn_t;

struct faketls {
    faketls_script_t s;
    SSL_CTX *ctx;
    int lfd;
    uint16_t port;
    pthread_t thread;
    pthread_mutex_t mu;
    int stopping;
    int naccepts;
    int nhandshakes;
    conn_t conns[FAKETLS_MAX_CONNS];
    uint8_t first[FAKETLS_MAX_CONNS][8];
    size_t first_len[FAKETLS_MAX_CONNS];
};

static int wait_fd(int fd, short ev)
{
    struct pollfd p = {fd, ev, 0};
    return poll(&p, 1, WAIT_MS) == 1 ? 0 : -1;
}

static int read_full(int fd, uint8_t *p, size_t n)
{
    while (n) {
        if (wait_fd(fd, POLLIN) < 0) return -1;
        ssize_t r = recv(fd, p, n, 0);
        if (r <= 0) return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *data, size_t n)
{
    const uint8_t *p = data;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int backend_open_tcp(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return fd;
    if (fd >= 0) close(fd);
    return -1;
}

static int backend_open(const faketls_t *f)
{
    if (!f->s.backend) return f->s.backend_port ? backend_open_tcp(f->s.backend_port) : -1;
    const char *path = f->s.backend;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un un;
    memset(&un, 0, sizeof un);
    un.sun_family = AF_UNIX;
    snprintf(un.sun_path, sizeof un.sun_path, "%s", path);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&un, sizeof un) == 0) return fd;
    if (fd >= 0) close(fd);
    return -1;
}

/* A FATAL ErrorResponse like pg_hba.conf's refusal. */
static const uint8_t *fatal_msg(size_t *len)
{
    static uint8_t m[128];
    static const char body[] = "SFATAL\0C28000\0Mno pg_hba.conf entry (faketls)\0";
    size_t b = sizeof body; /* includes the final terminator */
    m[0] = 'E';
    uint32_t l = (uint32_t)(4 + b);
    m[1] = (uint8_t)(l >> 24);
    m[2] = (uint8_t)(l >> 16);
    m[3] = (uint8_t)(l >> 8);
    m[4] = (uint8_t)l;
    memcpy(m + 5, body, b);
    *len = 5 + b;
    return m;
}

/* Read the startup packet (already peeked or not) and refuse it. */
static void refuse_startup_plain(int fd)
{
    uint8_t hdr[4], buf[1024];
    if (read_full(fd, hdr, 4) < 0) return;
    uint32_t l = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
    if (l < 8 || l - 4 > sizeof buf || read_full(fd, buf, l - 4) < 0) return;
    size_t n;
    const uint8_t *m = fatal_msg(&n);
    write_full(fd, m, n);
}

/* Relay fd <-> backend in plaintext. */
static void relay_plain(int fd, int be)
{
    uint8_t buf[16384];
    for (;;) {
        struct pollfd p[2] = {{fd, POLLIN, 0}, {be, POLLIN, 0}};
        if (poll(p, 2, WAIT_MS * 3) <= 0) return;
        for (int i = 0; i < 2; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t r = recv(p[i].fd, buf, sizeof buf, 0);
            if (r <= 0 || write_full(p[1 - i].fd, buf, (size_t)r) < 0) return;
        }
    }
}

static int ssl_write_full(SSL *ssl, const uint8_t *p, size_t n)
{
    while (n) {
        int w = SSL_write(ssl, p, (int)n);
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void relay_tls(SSL *ssl, int fd, int be)
{
    uint8_t buf[16384];
    for (;;) {
        int pending = SSL_pending(ssl) > 0;
        struct pollfd p[2] = {{fd, POLLIN, 0}, {be, POLLIN, 0}};
        if (!pending && poll(p, 2, WAIT_MS * 3) <= 0) return;
        if (pending || (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            int r = SSL_read(ssl, buf, sizeof buf);
            if (r <= 0 || write_full(be, buf, (size_t)r) < 0) return;
        }
        if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = recv(be, buf, sizeof buf, 0);
            if (r <= 0 || ssl_write_full(ssl, buf, (size_t)r) < 0) return;
        }
    }
}

static void serve_tls(faketls_t *f, int fd, int index)
{
    SSL *ssl = SSL_new(f->ctx);
    if (!ssl) return;
    /* the connections after the first: their own certificate, if given */
    if (index > 0 && f->s.later_cert &&
        (SSL_use_certificate_chain_file(ssl, f->s.later_cert) != 1 ||
         SSL_use_PrivateKey_file(ssl, f->s.later_key, SSL_FILETYPE_PEM) != 1)) {
        SSL_free(ssl);
        return;
    }
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) == 1) {
        pthread_mutex_lock(&f->mu);
        f->nhandshakes++;
        pthread_mutex_unlock(&f->mu);
        if (f->s.reject_tls) {
            uint8_t hdr[4], buf[1024];
            int r = SSL_read(ssl, hdr, 4);
            uint32_t l = r == 4 ? (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 |
                                      (uint32_t)hdr[2] << 8 | hdr[3]
                                : 0;
            if (l >= 8 && l - 4 <= sizeof buf && SSL_read(ssl, buf, (int)(l - 4)) > 0) {
                size_t n;
                const uint8_t *m = fatal_msg(&n);
                ssl_write_full(ssl, m, n);
            }
        } else {
            int be = backend_open(f);
            if (be >= 0) {
                relay_tls(ssl, fd, be);
                close(be);
            }
        }
        SSL_shutdown(ssl);
    }
    SSL_free(ssl);
    ERR_clear_error();
}

static void *conn_main(void *arg)
{
    /* A write to a client that went away fails with EPIPE in this thread
     * instead of killing the test process (OpenSSL's socket BIO writes
     * with write()). Only the helper's own threads are affected. */
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);
    conn_t *c = arg;
    faketls_t *f = c->f;
    int fd = c->fd;
    uint8_t first[8];
    ssize_t n = 0;
    /* Peek: a TLS record (direct), an SSLRequest or a startup packet. */
    for (int tries = 0; tries < 100 && n < 8; tries++) {
        if (wait_fd(fd, POLLIN) < 0) break;
        n = recv(fd, first, sizeof first, MSG_PEEK);
        if (n <= 0) break;
        if (n < 8) nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    if (n > 0) {
        pthread_mutex_lock(&f->mu);
        memcpy(f->first[c->index], first, (size_t)n);
        f->first_len[c->index] = (size_t)n;
        pthread_mutex_unlock(&f->mu);
    }
    static const uint8_t sslreq[8] = {0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f};
    if (n >= 1 && first[0] == 0x16) {
        serve_tls(f, fd, c->index);
    } else if (n == 8 && memcmp(first, sslreq, 8) == 0) {
        uint8_t skip[8];
        read_full(fd, skip, 8);
        const void *ans = f->s.answer ? f->s.answer : "S";
        size_t alen = f->s.answer ? f->s.answer_len : 1;
        write_full(fd, ans, alen);
        if (((const char *)ans)[0] == 'S') {
            if (f->s.garbage) {
                /* after the ClientHello, so that it is the handshake that
                 * breaks (not the check of bytes behind the 'S') */
                uint8_t hello[4096];
                if (wait_fd(fd, POLLIN) == 0 && recv(fd, hello, sizeof hello, 0) > 0)
                    write_full(fd, f->s.garbage, f->s.garbage_len);
            } else
                serve_tls(f, fd, c->index);
        } else if (((const char *)ans)[0] == 'N') {
            int be = backend_open(f);
            if (be >= 0) {
                relay_plain(fd, be);
                close(be);
            }
        }
    } else if (n > 0 && f->s.reject_plain) {
        refuse_startup_plain(fd);
    } else if (n > 0) {
        int be = backend_open(f);
        if (be >= 0) {
            relay_plain(fd, be);
            close(be);
        }
    }
    /* linger briefly so the client reads what was sent before the close */
    shutdown(fd, SHUT_WR);
    wait_fd(fd, POLLIN);
    return NULL;
}

static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)ssl;
    const char *want = arg;
    size_t wl = strlen(want);
    for (unsigned int i = 0; i < inlen; i += 1u + in[i]) {
        if (in[i] == wl && i + 1 + wl <= inlen && memcmp(in + i + 1, want, wl) == 0) {
            *out = in + i + 1;
            *outlen = in[i];
            return SSL_TLSEXT_ERR_OK;
        }
    }
    return SSL_TLSEXT_ERR_NOACK;
}

static void *accept_main(void *arg)
{
    faketls_t *f = arg;
    for (;;) {
        int fd = accept(f->lfd, NULL, NULL);
        if (fd < 0) return NULL;
        pthread_mutex_lock(&f->mu);
        if (f->stopping || f->naccepts >= FAKETLS_MAX_CONNS) {
            pthread_mutex_unlock(&f->mu);
            close(fd);
            if (f->stopping) return NULL;
            continue;
        }
        conn_t *c = &f->conns[f->naccepts];
        c->f = f;
        c->fd = fd;
        c->index = f->naccepts++;
        pthread_mutex_unlock(&f->mu);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (pthread_create(&c->thread, NULL, conn_main, c) != 0) {
            close(fd);
            c->fd = -1;
        }
    }
}

faketls_t *faketls_start(const faketls_script_t *s)
{
    faketls_t *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->s = *s;
    pthread_mutex_init(&f->mu, NULL);
    f->ctx = SSL_CTX_new(TLS_server_method());
    if (!f->ctx) goto fail;
    if (s->cert && (SSL_CTX_use_certificate_chain_file(f->ctx, s->cert) != 1 ||
                    SSL_CTX_use_PrivateKey_file(f->ctx, s->key, SSL_FILETYPE_PEM) != 1))
        goto fail;
    if (s->alpn) SSL_CTX_set_alpn_select_cb(f->ctx, select_alpn, (void *)s->alpn);
    f->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(f->lfd, 16) != 0 || getsockname(f->lfd, (struct sockaddr *)&a, &alen) != 0)
        goto fail;
    f->port = ntohs(a.sin_port);
    if (pthread_create(&f->thread, NULL, accept_main, f) != 0) goto fail;
    return f;
fail:
    if (f->lfd > 0) close(f->lfd);
    SSL_CTX_free(f->ctx);
    ERR_clear_error();
    pthread_mutex_destroy(&f->mu);
    free(f);
    return NULL;
}

uint16_t faketls_port(const faketls_t *f)
{
    return f->port;
}

int faketls_accepts(faketls_t *f)
{
    pthread_mutex_lock(&f->mu);
    int n = f->naccepts;
    pthread_mutex_unlock(&f->mu);
    return n;
}

int faketls_handshakes(faketls_t *f)
{
    pthread_mutex_lock(&f->mu);
    int n = f->nhandshakes;
    pthread_mutex_unlock(&f->mu);
    return n;
}

size_t faketls_first_bytes(faketls_t *f, int i, uint8_t out[8])
{
    if (i < 0 || i >= FAKETLS_MAX_CONNS) return 0;
    pthread_mutex_lock(&f->mu);
    size_t n = f->first_len[i];
    memcpy(out, f->first[i], n);
    pthread_mutex_unlock(&f->mu);
    return n;
}

void faketls_stop(faketls_t *f)
{
    if (!f) return;
    pthread_mutex_lock(&f->mu);
    f->stopping = 1;
    int n = f->naccepts;
    pthread_mutex_unlock(&f->mu);
    shutdown(f->lfd, SHUT_RDWR);
    pthread_join(f->thread, NULL);
    close(f->lfd);
    for (int i = 0; i < n; i++) {
        if (f->conns[i].fd < 0) continue;
        shutdown(f->conns[i].fd, SHUT_RDWR);
        pthread_join(f->conns[i].thread, NULL);
        close(f->conns[i].fd);
    }
    SSL_CTX_free(f->ctx);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

int faketls_make_cert(const char *dir, const char *name)
{
    char path[512];
    int rc = -1;
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    X509_EXTENSION *ext = NULL;
    if (!key || !x) goto out;
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400L * 30);
    X509_set_pubkey(x, key);
    X509_NAME *nm = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(nm, "CN", MBSTRING_ASC, (const unsigned char *)"localhost", -1, -1,
                               0);
    X509_set_issuer_name(x, nm);
    ext = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
    if (!ext || !X509_add_ext(x, ext, -1) || !X509_sign(x, key, EVP_sha256())) goto out;
    snprintf(path, sizeof path, "%s/%s.crt", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) goto out;
    int ok = PEM_write_X509(f, x);
    fclose(f);
    snprintf(path, sizeof path, "%s/%s.key", dir, name);
    f = ok ? fopen(path, "w") : NULL;
    if (!f) goto out;
    ok = PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    fclose(f);
    rc = ok ? 0 : -1;
out:
    X509_EXTENSION_free(ext);
    X509_free(x);
    EVP_PKEY_free(key);
    ERR_clear_error();
    return rc;
}
