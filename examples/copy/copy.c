/*
 * COPY with the blocking client: rows sent with COPY FROM STDIN in text,
 * CSV and binary format, read back with COPY TO STDOUT as CSV and as
 * binary (decoded into typed values). Exits 1 if a count or value is
 * wrong.
 */
#include <pgwire.h>
#include <stdio.h>
#include <string.h>

#define ROWS 1000

enum { TEXT, CSV, BINARY };

typedef struct source {
    int format;
    int next; /* the next row to send */
} source_t;

/* Called whenever the connection can take data: append some rows, say
 * whether more follow. The encoders quote and escape for each format. */
static int rows_source(pgw_buf_t *out, size_t room, void *ud)
{
    source_t *src = ud;
    if (src->format == BINARY && src->next == 0) pgw_copy_bin_begin(out);
    size_t start = out->len;
    while (src->next < ROWS && out->len - start < room) {
        int id = src->next++;
        char name[32];
        int len = snprintf(name, sizeof name, "item %d, \"quoted\"", id);
        int rc = 0;
        if (src->format == TEXT) {
            rc |= pgw_copy_text_int4(out, id);
            rc |= pgw_copy_text_field(out, name, (size_t)len);
            rc |= id % 10 ? pgw_copy_text_float8(out, id / 4.0) : pgw_copy_text_null(out);
            rc |= pgw_copy_text_row_end(out);
        } else if (src->format == CSV) {
            rc |= pgw_copy_csv_int4(out, id);
            rc |= pgw_copy_csv_field(out, name, (size_t)len);
            rc |= id % 10 ? pgw_copy_csv_float8(out, id / 4.0) : pgw_copy_csv_null(out);
            rc |= pgw_copy_csv_row_end(out);
        } else {
            rc |= pgw_copy_bin_row_begin(out, 3);
            rc |= pgw_copy_bin_int4(out, id);
            rc |= pgw_copy_bin_text(out, name, (size_t)len);
            rc |= id % 10 ? pgw_copy_bin_float8(out, id / 4.0) : pgw_copy_bin_null(out);
        }
        if (rc != 0) return PGW_ENOMEM; /* abandons the COPY: CopyFail is sent */
    }
    if (src->next < ROWS) return PGW_COPY_MORE;
    if (src->format == BINARY) pgw_copy_bin_end(out);
    return PGW_COPY_END;
}

/* COPY TO STDOUT as CSV: one row per call, a view valid during the call. */
static int count_lines(const uint8_t *data, size_t len, void *ud)
{
    (void)data;
    (void)len;
    ++*(int *)ud;
    return 0;
}

/* Binary COPY TO STDOUT: keep the bytes, decode them afterwards. */
static int keep_bytes(const uint8_t *data, size_t len, void *ud)
{
    return pgw_buf_append(ud, data, len);
}

int main(void)
{
    pgw_client_t *db;
    int rc = pgw_client_connect(&db, "", NULL);
    if (rc < 0) {
        fprintf(stderr, "connect: %s\n", pgw_strerror(rc));
        return 1;
    }
    int ok =
        pgw_client_exec(db, "CREATE TEMP TABLE item (id int4, name text, score float8)", NULL) == 0;

    const char *in[] = {"COPY item FROM STDIN", "COPY item FROM STDIN (FORMAT csv)",
                        "COPY item FROM STDIN (FORMAT binary)"};
    for (int f = TEXT; f <= BINARY; f++) {
        source_t src = {f, 0};
        pgw_result_t *res;
        rc = pgw_client_copy_in(db, in[f], rows_source, &src, &res);
        const pgw_error_t *e = pgw_result_error(res);
        printf("%s: %s %s\n", in[f], rc == 0 ? pgw_result_command_tag(res) : pgw_err_name(rc),
               e ? e->message : "");
        ok &= rc == 0 && pgw_result_rows_affected(res) == ROWS;
        pgw_result_free(res);
    }

    int lines = 0;
    pgw_result_t *res;
    rc = pgw_client_copy_out(db, "COPY item TO STDOUT (FORMAT csv)", count_lines, &lines, &res);
    printf("CSV out: %d lines, %s\n", lines, pgw_result_command_tag(res));
    ok &= rc == 0 && lines == 3 * ROWS;
    pgw_result_free(res);

    pgw_buf_t bytes;
    pgw_buf_init(&bytes, NULL);
    rc = pgw_client_copy_out(
        db, "COPY (SELECT id, score FROM item WHERE id < 10) TO STDOUT (FORMAT binary)", keep_bytes,
        &bytes, &res);
    pgw_result_free(res);
    ok &= rc == 0;

    /* Each call decodes one row; the column types make the values readable
     * with the pgw_get_* decoders. */
    const uint32_t oids[] = {PGW_OID_INT4, PGW_OID_FLOAT8};
    pgw_copy_bin_decoder_t dec = PGW_COPY_BIN_DECODER_INIT;
    dec.oids = oids;
    dec.noids = 2;
    size_t pos = 0, used, nfields;
    pgw_value_t v[2];
    int64_t id_sum = 0, nulls = 0;
    while ((rc = pgw_copy_bin_next(&dec, bytes.data + pos, bytes.len - pos, &used, v, 2,
                                   &nfields)) == 1) {
        int32_t id;
        pos += used;
        if (pgw_get_int4(&v[0], &id) == 0) id_sum += id;
        nulls += pgw_value_is_null(&v[1]);
    }
    printf("binary out: %llu rows, ids sum to %lld, %lld NULL scores\n",
           (unsigned long long)pgw_copy_bin_rows(&dec), (long long)id_sum, (long long)nulls);
    ok &= rc == 0 && pgw_copy_bin_rows(&dec) == 30 && id_sum == 3 * 45 && nulls == 3;
    pgw_buf_free(&bytes);

    pgw_client_close(db);
    return ok ? 0 : 1;
}
