/*
 * Framing of backend messages and the streaming decoder.
 *
 * The header alone decides whether a frame can be legitimate: a fixed-size
 * type must declare its exact size and a short type at most 30000 bytes, so a
 * lying length is refused before the caller buffers (or waits for) its body.
 */
#include "proto_internal.h"

#define TC_E PGW__TC_EMPTY
#define TC_1 PGW__TC_ONE
#define TC_S PGW__TC_SHORT
#define TC_L PGW__TC_LONG

/* Indexed by type byte; entries not listed are PGW__TC_UNKNOWN (0). */
static const uint8_t type_class[256] = {
    ['1'] = TC_E, ['2'] = TC_E, ['3'] = TC_E, ['n'] = TC_E, ['I'] = TC_E, ['s'] = TC_E,
    ['c'] = TC_E, ['Z'] = TC_1, ['R'] = TC_S, ['K'] = TC_S, ['C'] = TC_S, ['G'] = TC_S,
    ['H'] = TC_S, ['W'] = TC_S, ['v'] = TC_S, ['t'] = TC_S, ['S'] = TC_S, ['T'] = TC_L,
    ['D'] = TC_L, ['d'] = TC_L, ['V'] = TC_L, ['E'] = TC_L, ['N'] = TC_L, ['A'] = TC_L,
};

enum pgw__type_class pgw__type_class(uint8_t t)
{
    return (enum pgw__type_class)type_class[t];
}

/* Checks a complete header's declared length against the type's rules. */
static int check_length(uint8_t type, int32_t declared, uint32_t max_size)
{
    if (declared < 4) return PGW_EPROTO;
    uint32_t body = (uint32_t)declared - 4;
    switch (type_class[type]) {
    case PGW__TC_EMPTY:
        if (body != 0) return PGW_EPROTO;
        break;
    case PGW__TC_ONE:
        if (body != 1) return PGW_EPROTO;
        break;
    case PGW__TC_SHORT:
        if ((uint32_t)declared > PGW__SHORT_MAX) return PGW_EPROTO;
        break;
    case PGW__TC_LONG:
        break;
    default:
        return PGW_EPROTO;
    }
    if ((uint32_t)declared > max_size) return PGW_ETOOBIG;
    return 0;
}

int pgw_frame_parse(const uint8_t *buf, size_t n, uint32_t max_size, pgw_frame_t *f)
{
    if (!f) return PGW_EINVAL;
    if (n && !buf) {
        memset(f, 0, sizeof *f);
        return PGW_EINVAL;
    }
    if (max_size == 0) max_size = PGW_DEFAULT_MAX_MESSAGE;
    f->type = n ? buf[0] : 0;
    f->body = NULL;
    f->len = 0;
    f->size = 5;
    /* An unknown type byte is refused as soon as it is seen (and reported
     * as type 0, as the header documents). */
    if (n && type_class[buf[0]] == PGW__TC_UNKNOWN) {
        f->type = 0;
        return PGW_EPROTO;
    }
    if (n < 5) return PGW_EAGAIN;

    int32_t declared = (int32_t)pgw__get32(buf + 1);
    int rc = check_length(buf[0], declared, max_size);
    if (rc < 0) return rc;
    f->len = (uint32_t)declared - 4;
    f->size = 5 + (size_t)f->len;
    if (n < f->size) return PGW_EAGAIN;
    f->body = buf + 5;
    return 0;
}

void pgw_decoder_init(pgw_decoder_t *d, uint32_t max_size)
{
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->max_size = max_size;
}

int64_t pgw_decoder_next(pgw_decoder_t *d, const uint8_t *buf, size_t n, pgw_msg_t *m, size_t *need)
{
    if (!d || !m || (n && !buf)) return PGW_EINVAL;
    if (d->err) return d->err;
    pgw_frame_t f;
    int rc = pgw_frame_parse(buf, n, d->max_size, &f);
    if (rc == PGW_EAGAIN) {
        if (need) *need = f.size;
        return PGW_EAGAIN;
    }
    if (rc == 0) rc = pgw_msg_parse(&f, m);
    if (rc < 0) {
        d->err = rc;
        d->err_offset = d->offset;
        return rc;
    }
    d->offset += f.size;
    return (int64_t)f.size;
}
