/*
 * The shared client context: everything libpq's initialize_SSL decides
 * before a connection exists (protocol range, root store and CRLs, client
 * certificate and key), built once and reference-counted.
 */
#define _POSIX_C_SOURCE 200809L

#include "tls/tls_internal.h"
#include "util/internal.h"

#include <openssl/err.h>
#include <openssl/x509_vfy.h>

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ROOT_CERT_FILE ".postgresql/root.crt"
#define ROOT_CRL_FILE  ".postgresql/root.crl"
#define USER_CERT_FILE ".postgresql/postgresql.crt"
#define USER_KEY_FILE  ".postgresql/postgresql.key"

#define HOME_BUF 4096
#define PATH_BUF (HOME_BUF + 64)

#define VERIFY_HINT                                                                        \
    "Either provide the file, use the system's trusted roots with sslrootcert=system, or " \
    "change sslmode to disable server certificate verification."

const char *pgw__tls_ssl_errstr(unsigned long e, char *buf, size_t n)
{
    if (e == 0) return "no SSL error reported";
    const char *reason = ERR_reason_error_string(e);
    if (reason) return reason;
    if (ERR_SYSTEM_ERROR(e)) return strerror(ERR_GET_REASON(e));
    snprintf(buf, n, "SSL error code %lu", e);
    return buf;
}

/* The last OpenSSL error as text, and the queue cleared. */
static const char *last_ssl_error(char *buf, size_t n)
{
    unsigned long e = ERR_get_error();
    const char *s = pgw__tls_ssl_errstr(e, buf, n);
    if (s != buf) {
        snprintf(buf, n, "%s", s);
        s = buf;
    }
    ERR_clear_error();
    return s;
}

static bool set(const char *s)
{
    return s && *s;
}

/* $HOME, else the password database's entry for the effective user (as
 * libpq's pqGetHomeDirectory). Writes into buf; returns false if neither. */
static bool home_dir(char *buf, size_t n)
{
    const char *home = getenv("HOME");
    if (home && *home) return (size_t)snprintf(buf, n, "%s", home) < n;
    struct passwd pw, *res = NULL;
    char tmp[4096];
    if (getpwuid_r(geteuid(), &pw, tmp, sizeof tmp, &res) != 0 || !res) return false;
    return (size_t)snprintf(buf, n, "%s", res->pw_dir) < n;
}

/* The option's value, or home/default_name, or "" (no home directory).
 * Returns false if the name does not fit. */
static bool file_path(char path[PATH_BUF], const char *value, const char *home,
                      const char *default_name)
{
    int n;
    if (set(value))
        n = snprintf(path, PATH_BUF, "%s", value);
    else if (home)
        n = snprintf(path, PATH_BUF, "%s/%s", home, default_name);
    else
        n = 0;
    if (n < 0 || n >= PATH_BUF) return false;
    path[n] = '\0';
    return true;
}

static int too_long(char *err, size_t errlen, const char *what)
{
    return pgw__fail_msg(err, errlen, PGW_EINVAL, "%s file name too long", what);
}

/* ---- protocol range ---- */

/* "TLSv1".."TLSv1.3" to OpenSSL's constant; 0 for unset; -1 if unknown. */
static int protocol_version(const char *s)
{
    if (!set(s)) return 0;
    if (strcmp(s, "TLSv1") == 0) return TLS1_VERSION;
    if (strcmp(s, "TLSv1.1") == 0) return TLS1_1_VERSION;
    if (strcmp(s, "TLSv1.2") == 0) return TLS1_2_VERSION;
    if (strcmp(s, "TLSv1.3") == 0) return TLS1_3_VERSION;
    return -1;
}

static int set_protocol_range(SSL_CTX *ctx, const char *min_s, const char *max_s, char *err,
                              size_t errlen)
{
    if (!min_s) min_s = "TLSv1.2"; /* libpq's default; "" means no bound */
    int min = protocol_version(min_s), max = protocol_version(max_s);
    if (min < 0)
        return pgw__fail_msg(err, errlen, PGW_EINVAL,
                             "invalid value \"%s\" for minimum SSL protocol version", min_s);
    if (max < 0)
        return pgw__fail_msg(err, errlen, PGW_EINVAL,
                             "invalid value \"%s\" for maximum SSL protocol version", max_s);
    if (min && max && min > max)
        return pgw__fail_msg(err, errlen, PGW_EINVAL, "invalid SSL protocol version range");
    char buf[256];
    if (min && !SSL_CTX_set_min_proto_version(ctx, min))
        return pgw__fail_msg(err, errlen, PGW_ETLS,
                             "could not set minimum SSL protocol version: %s",
                             last_ssl_error(buf, sizeof buf));
    if (max && !SSL_CTX_set_max_proto_version(ctx, max))
        return pgw__fail_msg(err, errlen, PGW_ETLS,
                             "could not set maximum SSL protocol version: %s",
                             last_ssl_error(buf, sizeof buf));
    return 0;
}

/* ---- server verification ---- */

/* libpq: a CRL is optional; one that cannot be loaded is silently ignored. */
static void load_crls(SSL_CTX *ctx, const pgw__tls_config_t *cfg, const char *home)
{
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    char path[PATH_BUF];
    const char *file = set(cfg->sslcrl) ? cfg->sslcrl : NULL;
    const char *dir = set(cfg->sslcrldir) ? cfg->sslcrldir : NULL;
    if (!file && !dir && home) {
        if (file_path(path, NULL, home, ROOT_CRL_FILE)) file = path;
    }
    if (store && (file || dir) && X509_STORE_load_locations(store, file, dir) == 1)
        X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
    ERR_clear_error();
}

static int load_roots(SSL_CTX *ctx, const pgw__tls_config_t *cfg, pgw__sslmode_t mode,
                      const char *home, char *err, size_t errlen)
{
    char path[PATH_BUF], buf[256];
    struct stat st;
    if (!file_path(path, cfg->sslrootcert, home, ROOT_CERT_FILE))
        return too_long(err, errlen, "root certificate");
    if (strcmp(path, "system") == 0) {
        if (SSL_CTX_set_default_verify_paths(ctx) != 1)
            return pgw__fail_msg(err, errlen, PGW_ETLS,
                                 "could not load system root certificate paths: %s",
                                 last_ssl_error(buf, sizeof buf));
    } else if (path[0] && stat(path, &st) == 0) {
        if (SSL_CTX_load_verify_locations(ctx, path, NULL) != 1)
            return pgw__fail_msg(err, errlen, PGW_ETLS,
                                 "could not read root certificate file \"%s\": %s", path,
                                 last_ssl_error(buf, sizeof buf));
        load_crls(ctx, cfg, home);
    } else {
        if (mode < PGW__SSLMODE_VERIFY_CA) return 0; /* no root: the chain is not checked */
        if (!path[0])
            return pgw__fail_msg(err, errlen, PGW_ETLS,
                                 "could not get home directory to locate root certificate "
                                 "file\n" VERIFY_HINT);
        return pgw__fail_msg(err, errlen, PGW_ETLS,
                             "root certificate file \"%s\" does not exist\n" VERIFY_HINT, path);
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return 0;
}

/* ---- client certificate ---- */

typedef struct key_password {
    const char *password;
} key_password_t;

/* libpq never prompts: without sslpassword the key is tried with "". */
static int password_cb(char *buf, int size, int rwflag, void *ud)
{
    const key_password_t *kp = ud;
    const char *pw = kp && kp->password ? kp->password : "";
    size_t len = strlen(pw);
    if (size <= 0 || len >= (size_t)size) return -1;
    memcpy(buf, pw, len + 1);
    return (int)len;
}

/* libpq's rule: a regular file, and no group or world access (root-owned
 * files may be group-readable, for system-wide keys). */
static int check_key_file(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return pgw__fail_msg(err, errlen, PGW_ETLS,
                                 "certificate present, but not private key file \"%s\"", path);
        return pgw__fail_msg(err, errlen, PGW_ETLS, "could not stat private key file \"%s\": %s",
                             path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        return pgw__fail_msg(err, errlen, PGW_ETLS, "private key file \"%s\" is not a regular file",
                             path);
    mode_t forbidden = st.st_uid == 0 ? (S_IWGRP | S_IXGRP | S_IRWXO) : (S_IRWXG | S_IRWXO);
    if (st.st_mode & forbidden)
        return pgw__fail_msg(err, errlen, PGW_ETLS,
                             "private key file \"%s\" has group or world access; file must have "
                             "permissions u=rw (0600) or less if owned by the current user, or "
                             "permissions u=rw,g=r (0640) or less if owned by root",
                             path);
    return 0;
}

static int load_key(SSL_CTX *ctx, const char *path, const char *password, char *err, size_t errlen)
{
    char buf[256];
    int rc = check_key_file(path, err, errlen);
    if (rc != 0) return rc;
    key_password_t kp = {password};
    SSL_CTX_set_default_passwd_cb(ctx, password_cb);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, &kp);
    if (SSL_CTX_use_PrivateKey_file(ctx, path, SSL_FILETYPE_PEM) != 1) {
        /* As libpq: try DER, and report the PEM error if that fails too. */
        unsigned long pem_error = ERR_get_error();
        ERR_clear_error();
        if (SSL_CTX_use_PrivateKey_file(ctx, path, SSL_FILETYPE_ASN1) != 1)
            rc = pgw__fail_msg(err, errlen, PGW_ETLS, "could not load private key file \"%s\": %s",
                               path, pgw__tls_ssl_errstr(pem_error, buf, sizeof buf));
        ERR_clear_error();
    }
    SSL_CTX_set_default_passwd_cb(ctx, NULL);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL); /* kp dies here */
    if (rc == 0 && SSL_CTX_check_private_key(ctx) != 1)
        rc = pgw__fail_msg(err, errlen, PGW_ETLS,
                           "certificate does not match private key file \"%s\": %s", path,
                           last_ssl_error(buf, sizeof buf));
    return rc;
}

static int load_client_cert(SSL_CTX *ctx, const pgw__tls_config_t *cfg, const char *home, char *err,
                            size_t errlen)
{
    char path[PATH_BUF], buf[256];
    struct stat st;
    if (set(cfg->sslcertmode) && strcmp(cfg->sslcertmode, "disable") == 0) return 0;
    if (!file_path(path, cfg->sslcert, home, USER_CERT_FILE))
        return too_long(err, errlen, "certificate");
    if (!path[0]) return 0;
    if (stat(path, &st) != 0) {
        /* No certificate: go on without one; the server may not want one. */
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        return pgw__fail_msg(err, errlen, PGW_ETLS, "could not open certificate file \"%s\": %s",
                             path, strerror(errno));
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, path) != 1)
        return pgw__fail_msg(err, errlen, PGW_ETLS, "could not read certificate file \"%s\": %s",
                             path, last_ssl_error(buf, sizeof buf));
    if (!file_path(path, cfg->sslkey, home, USER_KEY_FILE))
        return too_long(err, errlen, "private key");
    if (!path[0]) return 0; /* as libpq: OpenSSL then fails the handshake if asked */
    return load_key(ctx, path, cfg->sslpassword, err, errlen);
}

/* ---- the context object ---- */

static const char *config_value(const pgw__tls_config_t *cfg, int i)
{
    const char *v[PGW__TLS_SET_COUNT] = {
        cfg->sslmode,      cfg->sslrootcert,  cfg->sslcrl,      cfg->sslcrldir,
        cfg->sslcert,      cfg->sslkey,       cfg->sslpassword, cfg->sslcertmode,
        cfg->min_protocol, cfg->max_protocol, cfg->keylogfile,
    };
    return v[i];
}

static void free_ctx(pgw__tls_ctx_t *c)
{
    const pgw_allocator_t *alloc = c->alloc;
    SSL_CTX_free(c->ssl_ctx);
    for (int i = 0; i < PGW__TLS_SET_COUNT; i++) {
        if (!c->settings[i]) continue;
        if (i == PGW__TLS_SET_PASSWORD) OPENSSL_cleanse(c->settings[i], strlen(c->settings[i]));
        pgw__free(alloc, c->settings[i]);
    }
    pgw__free(alloc, c);
}

static int copy_settings(pgw__tls_ctx_t *c, const pgw__tls_config_t *cfg)
{
    for (int i = 0; i < PGW__TLS_SET_COUNT; i++) {
        const char *v = config_value(cfg, i);
        /* The minimum's default is explicit so that NULL and "TLSv1.2" match. */
        if (i == PGW__TLS_SET_MIN_PROTO && !v) v = "TLSv1.2";
        if (!set(v)) continue;
        c->settings[i] = pgw__strdup(c->alloc, v);
        if (!c->settings[i]) return PGW_ENOMEM;
    }
    return 0;
}

static int check_mode(const pgw__tls_config_t *cfg, pgw__sslmode_t *mode, char *err, size_t errlen)
{
    if (pgw__sslmode_parse(cfg->sslmode, mode) != 0)
        return pgw__fail_msg(err, errlen, PGW_EINVAL, "invalid sslmode value: \"%s\"",
                             cfg->sslmode);
    bool system_roots = set(cfg->sslrootcert) && strcmp(cfg->sslrootcert, "system") == 0;
    /* libpq 16: with the system's roots, an unset sslmode means verify-full. */
    if (system_roots && !set(cfg->sslmode)) *mode = PGW__SSLMODE_VERIFY_FULL;
    if (*mode == PGW__SSLMODE_DISABLE)
        return pgw__fail_msg(err, errlen, PGW_EINVAL, "sslmode \"disable\" does not use TLS");
    if (system_roots && *mode != PGW__SSLMODE_VERIFY_FULL)
        return pgw__fail_msg(err, errlen, PGW_EINVAL,
                             "weak sslmode \"%s\" may not be used with sslrootcert=system (use "
                             "\"verify-full\")",
                             cfg->sslmode);
    if (set(cfg->sslcertmode) && strcmp(cfg->sslcertmode, "disable") != 0 &&
        strcmp(cfg->sslcertmode, "allow") != 0 && strcmp(cfg->sslcertmode, "require") != 0)
        return pgw__fail_msg(err, errlen, PGW_EINVAL, "invalid sslcertmode value: \"%s\"",
                             cfg->sslcertmode);
    return 0;
}

/* A hash of the files a context built from settings reads (their resolved
 * paths, and whether each exists, its inode, size and modification time),
 * so that a cached context is rebuilt once a file changes on disk. */
static void stamp_add(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        *h = (*h ^ b[i]) * 1099511628211ull; /* FNV-1a */
}

static uint64_t files_stamp(char *const settings[PGW__TLS_SET_COUNT])
{
    static const struct {
        int setting;
        const char *default_name;
    } files[] = {{PGW__TLS_SET_ROOTCERT, ROOT_CERT_FILE},
                 {PGW__TLS_SET_CRL, ROOT_CRL_FILE},
                 {PGW__TLS_SET_CRLDIR, NULL},
                 {PGW__TLS_SET_CERT, USER_CERT_FILE},
                 {PGW__TLS_SET_KEY, USER_KEY_FILE}};
    char homebuf[HOME_BUF], path[PATH_BUF];
    const char *home = home_dir(homebuf, sizeof homebuf) ? homebuf : NULL;
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        const char *v = settings[files[i].setting];
        if (!files[i].default_name && !v) continue;
        if (!file_path(path, v, files[i].default_name ? home : NULL,
                       files[i].default_name ? files[i].default_name : ""))
            continue;
        struct stat st;
        memset(&st, 0, sizeof st);
        int exists = path[0] && stat(path, &st) == 0;
        long long f[5] = {exists, (long long)st.st_ino, (long long)st.st_size,
                          (long long)st.st_mtim.tv_sec, (long long)st.st_mtim.tv_nsec};
        stamp_add(&h, path, strlen(path) + 1);
        stamp_add(&h, f, sizeof f);
    }
    return h;
}

int pgw__tls_ctx_fresh(const pgw__tls_ctx_t *ctx)
{
    return ctx && files_stamp(ctx->settings) == ctx->files_stamp;
}

static int configure(pgw__tls_ctx_t *c, const pgw__tls_config_t *cfg, char *err, size_t errlen)
{
    c->files_stamp = files_stamp(c->settings);
    char homebuf[HOME_BUF];
    const char *home = home_dir(homebuf, sizeof homebuf) ? homebuf : NULL;
    int rc = set_protocol_range(c->ssl_ctx, cfg->min_protocol, cfg->max_protocol, err, errlen);
    if (rc == 0) rc = load_roots(c->ssl_ctx, cfg, c->mode, home, err, errlen);
    if (rc == 0) rc = load_client_cert(c->ssl_ctx, cfg, home, err, errlen);
    return rc;
}

int pgw__tls_ctx_new(pgw__tls_ctx_t **out, const pgw__tls_config_t *cfg,
                     const pgw_allocator_t *alloc, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!out) return PGW_EINVAL;
    *out = NULL;
    if (!cfg) return pgw__fail_msg(err, errlen, PGW_EINVAL, "no TLS configuration");
    pgw__sslmode_t mode;
    int rc = check_mode(cfg, &mode, err, errlen);
    if (rc != 0) return rc;

    pgw__tls_ctx_t *c = pgw__calloc(alloc, 1, sizeof *c);
    if (!c) return pgw__fail_msg(err, errlen, PGW_ENOMEM, "out of memory");
    c->alloc = alloc;
    c->mode = mode;
    atomic_init(&c->refs, 1);
    ERR_clear_error();
    c->ssl_ctx = SSL_CTX_new(TLS_client_method());
    if (!c->ssl_ctx || copy_settings(c, cfg) != 0) {
        free_ctx(c);
        ERR_clear_error();
        return pgw__fail_msg(err, errlen, PGW_ENOMEM, "out of memory");
    }
    /* libpq's choices: no renegotiation, no compression, writes may be
     * retried from a moved buffer (the session's output buffer grows).
     * SSL_MODE_RELEASE_BUFFERS is deliberately not set: it would free and
     * reallocate OpenSSL's record buffers on every idle/busy cycle. */
    SSL_CTX_set_options(c->ssl_ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_mode(c->ssl_ctx,
                     SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
    /* The key log callback finds the file name in its context. */
    SSL_CTX_set_app_data(c->ssl_ctx, c);
    if (c->settings[PGW__TLS_SET_KEYLOG]) SSL_CTX_set_keylog_callback(c->ssl_ctx, pgw__tls_keylog);
    rc = configure(c, cfg, err, errlen);
    if (rc != 0) {
        free_ctx(c);
        ERR_clear_error();
        return rc;
    }
    *out = c;
    return 0;
}

pgw__tls_ctx_t *pgw__tls_ctx_ref(pgw__tls_ctx_t *ctx)
{
    if (ctx) atomic_fetch_add_explicit(&ctx->refs, 1, memory_order_relaxed);
    return ctx;
}

void pgw__tls_ctx_unref(pgw__tls_ctx_t *ctx)
{
    if (!ctx) return;
    if (atomic_fetch_sub_explicit(&ctx->refs, 1, memory_order_acq_rel) == 1) free_ctx(ctx);
}

int pgw__tls_ctx_matches(const pgw__tls_ctx_t *ctx, const pgw__tls_config_t *cfg)
{
    if (!ctx || !cfg) return 0;
    for (int i = 0; i < PGW__TLS_SET_COUNT; i++) {
        const char *v = config_value(cfg, i), *have = ctx->settings[i];
        if (i == PGW__TLS_SET_MIN_PROTO && !v) v = "TLSv1.2";
        if (!set(v) != !have) return 0;
        if (have && strcmp(have, v) != 0) return 0;
    }
    return 1;
}

/* libpq 18's SSL_CTX_keylog_cb: one open per line, O_APPEND, created
 * 0600 (a file that exists keeps its mode, as with libpq). */
void pgw__tls_keylog(const SSL *ssl, const char *line)
{
    const pgw__tls_ctx_t *c = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
    const char *path = c ? c->settings[PGW__TLS_SET_KEYLOG] : NULL;
    if (!path) return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        pgw__tls_warn(ssl, "could not open SSL key logging file \"%s\": %s", path, errno);
        return;
    }
    size_t n = strlen(line);
    if (write(fd, line, n) != (ssize_t)n || write(fd, "\n", 1) != 1)
        pgw__tls_warn(ssl, "could not write to SSL key logging file \"%s\": %s", path, errno);
    close(fd);
}

pgw__sslmode_t pgw__tls_ctx_sslmode(const pgw__tls_ctx_t *ctx)
{
    return ctx ? ctx->mode : PGW__SSLMODE_DISABLE;
}
