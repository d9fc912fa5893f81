/*
 * The binary COPY decoder (types_container.h): header, then one row per
 * call, fields as views into the caller's bytes. Every length is checked
 * against what is there before it is used; a failure is sticky.
 */
#include "types/types_internal.h"

#include "pgwire/types_container.h"

enum { ST_HEADER = 0, ST_SKIP, ST_ROWS, ST_END, ST_FAILED };

#define HEADER_LEN 19 /* signature 11, flags 4, extension length 4 */

static const uint8_t signature[11] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0};

static int fail(pgw_copy_bin_decoder_t *d, size_t at)
{
    d->state_ = ST_FAILED;
    d->err_ = PGW_EFORMAT;
    d->pos_ += at;
    return PGW_EFORMAT;
}

/* Header and extension; returns 0 when the rows begin, else a code. */
static int header(pgw_copy_bin_decoder_t *d, const uint8_t *p, size_t len, size_t *used)
{
    if (d->state_ == ST_HEADER) {
        size_t n = len < sizeof signature ? len : sizeof signature;
        if (n && memcmp(p, signature, n) != 0) return fail(d, 0);
        if (len < HEADER_LEN) return PGW_EAGAIN;
        /* No flag is known to this decoder: OIDs (bit 16) are not supported,
         * the others are reserved. */
        if (pgw__get32(p + 11) != 0) return fail(d, 11);
        d->skip_ = pgw__get32(p + 15);
        d->state_ = ST_SKIP;
        *used = HEADER_LEN;
    }
    size_t left = len - *used;
    size_t k = left < d->skip_ ? left : d->skip_;
    *used += k;
    d->skip_ -= (uint32_t)k;
    if (d->skip_) return PGW_EAGAIN;
    d->state_ = ST_ROWS;
    return 0;
}

/* One row at p[0..len). */
static int row(pgw_copy_bin_decoder_t *d, const uint8_t *p, size_t len, size_t *used,
               pgw_value_t *values, size_t cap, size_t *nfields)
{
    if (len < 2) return PGW_EAGAIN;
    int16_t count = (int16_t)pgw__get16(p);
    if (count == -1) {
        *used = 2;
        d->state_ = ST_END;
        return 0;
    }
    if (count < 0) return fail(d, 0);
    *nfields = (size_t)count;
    if ((size_t)count > cap) return PGW_ERANGE;
    size_t at = 2;
    for (int16_t i = 0; i < count; i++) {
        if (len - at < 4) return PGW_EAGAIN;
        int32_t flen = (int32_t)pgw__get32(p + at);
        if (flen < -1) return fail(d, at);
        at += 4;
        const uint8_t *fp = NULL;
        if (flen >= 0) {
            if (len - at < (size_t)flen) return PGW_EAGAIN;
            fp = p + at;
            at += (size_t)flen;
        }
        values[i].p = fp;
        values[i].len = flen;
        values[i].format = PGW_FORMAT_BINARY;
        values[i].oid = d->oids && (size_t)i < d->noids ? d->oids[i] : 0;
    }
    *used = at;
    d->nrows_++;
    return 1;
}

PGW_EXTERN int pgw_copy_bin_next(pgw_copy_bin_decoder_t *d, const uint8_t *p, size_t len,
                                 size_t *consumed, pgw_value_t *values, size_t cap, size_t *nfields)
{
    if (consumed) *consumed = 0;
    if (nfields) *nfields = 0;
    if (!d || !consumed || !nfields || (!values && cap) || (!p && len)) return PGW_EINVAL;
    if (d->state_ == ST_FAILED) return d->err_;
    if (d->state_ == ST_END) return len ? fail(d, 0) : 0;
    size_t used = 0;
    int rc = 0;
    if (d->state_ != ST_ROWS) rc = header(d, p, len, &used);
    if (rc == 0) {
        size_t n = 0;
        rc = row(d, p + used, len - used, &n, values, cap, nfields);
        if (rc == PGW_EFORMAT) {
            d->pos_ += used;
            return rc;
        }
        used += n;
    }
    if (rc == PGW_EFORMAT) return rc;
    *consumed = used;
    d->pos_ += used;
    return rc;
}

PGW_EXTERN uint64_t pgw_copy_bin_error_pos(const pgw_copy_bin_decoder_t *d)
{
    return d ? d->pos_ : 0;
}

PGW_EXTERN uint64_t pgw_copy_bin_rows(const pgw_copy_bin_decoder_t *d)
{
    return d ? d->nrows_ : 0;
}
