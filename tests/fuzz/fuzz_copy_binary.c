/*
 * Fuzz target: the binary COPY decoder. The first byte sets the chunk size
 * the stream is fed in (1..128 bytes, as CopyData payloads would split it)
 * and the field capacity; the rest is the stream. Bytes are accumulated as
 * a caller would, every field of every row is decoded with the typed
 * getters, and every view must lie inside the accumulated bytes. The same
 * stream fed whole must give the same rows and outcome.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgwire/types.h"
#include "pgwire/types_container.h"

#define MAX_FIELDS 64

typedef struct outcome {
    int last;
    uint64_t rows;
    uint64_t sum; /* of field lengths, to compare the two feeds */
} outcome_t;

static void touch(const pgw_value_t *v, const uint8_t *lo, const uint8_t *hi, outcome_t *o)
{
    if (v->len < 0) {
        if (v->p) abort();
        return;
    }
    if (v->p < lo || v->p + v->len > hi) abort();
    o->sum += (uint64_t)v->len;
    int32_t i4;
    int64_t i8;
    double f8;
    pgw_str_t t;
    pgw_value_t x = *v;
    x.oid = 23;
    (void)pgw_get_int4(&x, &i4);
    x.oid = 20;
    (void)pgw_get_int8(&x, &i8);
    x.oid = 701;
    (void)pgw_get_float8(&x, &f8);
    x.oid = 25;
    (void)pgw_get_text(&x, &t);
}

/* Feed data in pieces of step bytes (0: whole). */
static outcome_t run(const uint8_t *data, size_t n, size_t step, size_t cap)
{
    outcome_t o = {0, 0, 0};
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf) abort();
    size_t have = 0, fed = 0;
    pgw_copy_bin_decoder_t d = PGW_COPY_BIN_DECODER_INIT;
    pgw_value_t vals[MAX_FIELDS];
    for (;;) {
        size_t used = 0, nf = 0;
        int rc = pgw_copy_bin_next(&d, buf, have, &used, vals, cap, &nf);
        if (used > have) abort();
        if (rc == 1) {
            if (nf > cap) abort();
            for (size_t i = 0; i < nf; i++)
                touch(&vals[i], buf, buf + have, &o);
            o.rows++;
        }
        memmove(buf, buf + used, have - used);
        have -= used;
        if (rc == 1) continue;
        if (rc == PGW_EAGAIN || (rc == 0 && have == 0)) {
            if (fed == n) {
                o.last = rc;
                break;
            }
            size_t k = step && n - fed > step ? step : n - fed;
            memcpy(buf + have, data + fed, k);
            have += k;
            fed += k;
            continue;
        }
        o.last = rc; /* ERANGE, EFORMAT, or 0 with bytes after the trailer next time */
        if (rc == 0) continue;
        break;
    }
    if (pgw_copy_bin_rows(&d) != o.rows) abort();
    free(buf);
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    size_t step = (size_t)(data[0] & 0x7f) + 1;
    size_t cap = (data[0] & 0x80) ? MAX_FIELDS : (data[0] & 7);
    outcome_t a = run(data + 1, size - 1, step, cap);
    outcome_t b = run(data + 1, size - 1, 0, cap);
    if (a.last != b.last || a.rows != b.rows || a.sum != b.sum) abort();
    return 0;
}
