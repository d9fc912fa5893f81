/*
 * Micro-benchmarks of the decoding path, without a socket in the timed loop.
 *
 *   micro_codec capture DIR      connect to the server named by PGHOST/PGPORT/
 *                                PGUSER/PGDATABASE (trust auth), run the seed's
 *                                mixed-type query for 1000 rows in binary and in
 *                                text, and save the raw backend bytes as
 *                                DIR/mixed_binary.bin and DIR/mixed_text.bin
 *   micro_codec run DIR          time, over those captured streams:
 *                                  frame: framing + DataRow field views (proto/)
 *                                  memcpy: a plain memcpy of the same bytes
 *                                  binary / text: framing + decoding every value
 *                                  into C values (types/)
 *                                and print ns/row and the ratios, measured in
 *                                the same run.
 *
 * Method: each measurement repeats the whole stream until at least 0.5 s has
 * passed, 5 times; the median of the 5 is reported. Timed with
 * CLOCK_MONOTONIC. Every pass checks the row count and a checksum of the
 * decoded values, so a shortcut that skips work fails.
 */
#define _POSIX_C_SOURCE 200809L
#include "pgwire/proto.h"
#include "pgwire/types.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define NROWS 1000

static const char *MIXED_SQL =
    "SELECT (i % 30000)::int2, i::int4, (i * 1.5)::float4, (i * 2.25)::float8, "
    "('name-' || i)::varchar, json_build_object('id', i, 'tag', 'x' || i), "
    "jsonb_build_object('id', i, 'ok', true), "
    "timestamp '2024-01-01' + i * interval '1 minute', "
    "timestamptz '2024-01-01 00:00+00' + i * interval '1 second', "
    "decode(md5(i::text), 'hex') FROM generate_series(1, $1) i";

static void die(const char *what)
{
    fprintf(stderr, "micro_codec: %s\n", what);
    exit(1);
}

/* ---------------------------------------------------------------- capture */

static int connect_server(void)
{
    const char *host = getenv("PGHOST"), *port = getenv("PGPORT");
    if (!host || host[0] != '/') die("PGHOST must name a unix socket directory");
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/.s.PGSQL.%s", host, port ? port : "5432");
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) die("cannot connect");
    return fd;
}

static void send_all(int fd, const pgw_buf_t *b)
{
    size_t off = 0;
    while (off < b->len) {
        ssize_t n = write(fd, b->data + off, b->len - off);
        if (n <= 0) die("write failed");
        off += (size_t)n;
    }
}

/* Read messages until ReadyForQuery; append every byte read to *keep when
 * keep is not NULL. */
static void read_until_ready(int fd, pgw_buf_t *keep)
{
    pgw_buf_t in = {0};
    for (;;) {
        if (pgw_buf_reserve(&in, 65536) < 0) die("oom");
        ssize_t n = read(fd, in.data + in.len, in.cap - in.len);
        if (n <= 0) die("read failed");
        if (keep && pgw_buf_append(keep, in.data + in.len, (size_t)n) < 0) die("oom");
        in.len += (size_t)n;
        size_t off = 0;
        pgw_frame_t f;
        while (pgw_frame_parse(in.data + off, in.len - off, 0, &f) == 0) {
            if (f.type == 'E') die("server error");
            off += f.size;
            if (f.type == 'Z') {
                pgw_buf_free(&in);
                return;
            }
        }
        pgw_buf_consume(&in, off);
    }
}

static void capture_one(int fd, int16_t format, const char *path)
{
    pgw_buf_t out = {0}, keep = {0};
    char nrows[16];
    snprintf(nrows, sizeof nrows, "%d", NROWS);
    pgw_view_t param = {(const uint8_t *)nrows, (int32_t)strlen(nrows)};
    if (pgw_enc_parse(&out, "", MIXED_SQL, strlen(MIXED_SQL), NULL, 0, 0) < 0 ||
        pgw_enc_bind(&out, "", "", NULL, 0, &param, 1, &format, 1, 0) < 0 ||
        pgw_enc_describe(&out, 'P', "") < 0 || pgw_enc_execute(&out, "", 0) < 0 ||
        pgw_enc_sync(&out) < 0)
        die("encode failed");
    send_all(fd, &out);
    read_until_ready(fd, &keep);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(keep.data, 1, keep.len, f) != keep.len || fclose(f) != 0) die(path);
    fprintf(stderr, "captured %zu bytes into %s\n", keep.len, path);
    pgw_buf_free(&out);
    pgw_buf_free(&keep);
}

static int capture(const char *dir)
{
    int fd = connect_server();
    const char *user = getenv("PGUSER"), *db = getenv("PGDATABASE");
    const char *params[] = {"user", user ? user : "postgres", "database", db ? db : "postgres"};
    pgw_buf_t out = {0};
    if (pgw_enc_startup(&out, PGW_PROTO_3_0, params, 2) < 0) die("encode failed");
    send_all(fd, &out);
    read_until_ready(fd, NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s/mixed_binary.bin", dir);
    capture_one(fd, PGW_FORMAT_BINARY, path);
    snprintf(path, sizeof path, "%s/mixed_text.bin", dir);
    capture_one(fd, PGW_FORMAT_TEXT, path);
    pgw_buf_free(&out);
    close(fd);
    return 0;
}

/* -------------------------------------------------------------------- run */

typedef struct stream {
    uint8_t *data;
    size_t len;
} stream_t;

static stream_t load(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) die(path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    stream_t s = {malloc((size_t)n), (size_t)n};
    if (!s.data || fread(s.data, 1, s.len, f) != s.len) die(path);
    fclose(f);
    return s;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The column types of the captured result, from its RowDescription. */
static uint32_t col_oids[16];
static int16_t col_formats[16];
static volatile uint64_t sink;

/* Framing plus field views: the codec's share of reading a result. */
static size_t pass_frame(const stream_t *s, uint64_t *check)
{
    pgw_decoder_t d;
    pgw_decoder_init(&d, 0);
    pgw_view_t fields[16];
    pgw_msg_t m;
    size_t off = 0, rows = 0;
    while (off < s->len) {
        int64_t n = pgw_decoder_next(&d, s->data + off, s->len - off, &m, NULL);
        if (n <= 0) die("decode failed");
        off += (size_t)n;
        if (m.type == 'D') {
            int nf = pgw_datarow_fields(&m, fields, 16);
            if (nf != 10) die("bad row");
            *check += (uint64_t)fields[9].len;
            rows++;
        } else if (m.type == 'T') {
            pgw_rowdesc_iter_t it;
            pgw_field_desc_t fd;
            int i = 0;
            pgw_rowdesc_iter_init(&it, &m);
            while (i < 16 && pgw_rowdesc_iter_next(&it, &fd) == 1) {
                col_oids[i] = fd.type_oid;
                col_formats[i++] = fd.format;
            }
        }
    }
    return rows;
}

static size_t pass_memcpy(const stream_t *s, uint8_t *dst, uint64_t *check)
{
    memcpy(dst, s->data, s->len);
    *check += dst[s->len - 1];
    return NROWS;
}

/* Framing, field views and every value decoded into a C value. */
static size_t pass_decode(const stream_t *s, uint64_t *check)
{
    pgw_decoder_t d;
    pgw_decoder_init(&d, 0);
    pgw_view_t fields[16];
    pgw_msg_t m;
    size_t off = 0, rows = 0;
    uint64_t acc = 0;
    while (off < s->len) {
        int64_t n = pgw_decoder_next(&d, s->data + off, s->len - off, &m, NULL);
        if (n <= 0) die("decode failed");
        off += (size_t)n;
        if (m.type != 'D') continue;
        if (pgw_datarow_fields(&m, fields, 16) != 10) die("bad row");
        pgw_value_t v[10];
        for (int i = 0; i < 10; i++)
            v[i] = (pgw_value_t){fields[i].p, fields[i].len, col_formats[i], col_oids[i]};
        int16_t i2;
        int32_t i4;
        float f4;
        double f8;
        pgw_str_t str, json, jsonb;
        int64_t ts, tstz;
        pgw_view_t bytes;
        uint8_t bytebuf[64];
        size_t bytelen = 0;
        if (pgw_get_int2(&v[0], &i2) || pgw_get_int4(&v[1], &i4) || pgw_get_float4(&v[2], &f4) ||
            pgw_get_float8(&v[3], &f8) || pgw_get_text(&v[4], &str) || pgw_get_json(&v[5], &json) ||
            pgw_get_json(&v[6], &jsonb) || pgw_get_timestamp(&v[7], &ts) ||
            pgw_get_timestamptz(&v[8], &tstz))
            die("value decode failed");
        /* bytea: a zero-copy view in binary; the text form must be unhexed. */
        if (v[9].format == PGW_FORMAT_BINARY) {
            if (pgw_get_bytea_view(&v[9], &bytes)) die("bytea decode failed");
        } else {
            if (pgw_get_bytea(&v[9], bytebuf, sizeof bytebuf, &bytelen)) die("bytea decode failed");
            bytes = (pgw_view_t){bytebuf, (int32_t)bytelen};
        }
        acc += (uint64_t)i2 + (uint64_t)i4 + (uint64_t)f4 + (uint64_t)f8 + str.len + json.len +
               jsonb.len + (uint64_t)ts + (uint64_t)tstz + (uint64_t)bytes.len + bytes.p[0];
        rows++;
    }
    *check += acc;
    return rows;
}

enum { P_FRAME, P_MEMCPY, P_DECODE };

static double measure(int kind, const stream_t *s, uint8_t *scratch, uint64_t *check_out)
{
    double best[5];
    for (int rep = 0; rep < 5; rep++) {
        uint64_t t0 = now_ns(), t, rows = 0, check = 0;
        do {
            size_t r = kind == P_FRAME    ? pass_frame(s, &check)
                       : kind == P_MEMCPY ? pass_memcpy(s, scratch, &check)
                                          : pass_decode(s, &check);
            if (r != NROWS) die("row count mismatch");
            rows += r;
            t = now_ns();
        } while (t - t0 < 500000000u);
        best[rep] = (double)(t - t0) / (double)rows;
        if (rep == 0) *check_out = check;
    }
    /* median of 5 */
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (best[j] < best[i]) {
                double tmp = best[i];
                best[i] = best[j];
                best[j] = tmp;
            }
    return best[2];
}

static int run(const char *dir)
{
    stream_t bin = load(dir, "mixed_binary.bin"), txt = load(dir, "mixed_text.bin");
    uint8_t *scratch = malloc(bin.len > txt.len ? bin.len : txt.len);
    uint64_t check;
    if (!scratch) die("oom");

    double frame = measure(P_FRAME, &bin, scratch, &check);
    double copy = measure(P_MEMCPY, &bin, scratch, &check);
    double dec_bin = measure(P_DECODE, &bin, scratch, &check);
    sink += check;
    double frame_txt = measure(P_FRAME, &txt, scratch, &check);
    double dec_txt = measure(P_DECODE, &txt, scratch, &check);
    sink += check;

    printf("# micro_codec: %d mixed-type rows (int2,int4,float4,float8,varchar,json,jsonb,\n"
           "# timestamp,timestamptz,bytea) captured from the server; median of 5 runs of >=0.5 s\n",
           NROWS);
    printf("stream bytes: binary %zu, text %zu\n", bin.len, txt.len);
    printf("binary  frame+views   %8.1f ns/row   %.2fx memcpy of the same bytes (%.1f ns/row)\n",
           frame, frame / copy, copy);
    printf("binary  full decode   %8.1f ns/row\n", dec_bin);
    printf("text    frame+views   %8.1f ns/row\n", frame_txt);
    printf("text    full decode   %8.1f ns/row\n", dec_txt);
    printf("text/binary full-decode ratio: %.2fx (binary faster when > 1)\n", dec_txt / dec_bin);
    free(scratch);
    free(bin.data);
    free(txt.data);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "capture") == 0) return capture(argv[2]);
    if (argc == 3 && strcmp(argv[1], "run") == 0) return run(argv[2]);
    fprintf(stderr, "usage: micro_codec capture DIR | run DIR\n");
    return 2;
}
