/*
 * libFuzzer target: the input is a stream of backend bytes. pgw_decoder_next
 * runs over it until it stops (incomplete tail or error), and every message
 * it returns goes through the walkers that apply to it. Invariants checked:
 * a message is never longer than the input, a shorter prefix of it is always
 * "incomplete" with the right need, and an error is sticky and positioned.
 */
#include <stddef.h>
#include <stdint.h>

#include "proto_walk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A complete frame of `size` bytes: every shorter prefix must be EAGAIN with
 * need 5 (header incomplete) or exactly `size`. */
static void check_prefixes(const uint8_t *p, size_t size)
{
    size_t cuts[] = {0, 1, 4, 5, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        size_t k = cuts[i];
        if (k >= size) continue;
        pgw_frame_t f;
        FUZZ_CHECK(pgw_frame_parse(p, k, 0, &f) == PGW_EAGAIN);
        FUZZ_CHECK(f.size == (k < 5 ? 5 : size));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pgw_decoder_t d;
    /* A small maximum, so oversized declared lengths meet ETOOBIG too. */
    pgw_decoder_init(&d, 1u << 16);
    size_t off = 0;
    for (;;) {
        pgw_msg_t m;
        size_t need = 0;
        int64_t rc = pgw_decoder_next(&d, data + off, size - off, &m, &need);
        if (rc == PGW_EAGAIN) {
            FUZZ_CHECK(need > size - off && need <= (1u << 16) + 1);
            break;
        }
        if (rc < 0) {
            FUZZ_CHECK(rc == PGW_EPROTO || rc == PGW_ETOOBIG);
            FUZZ_CHECK(d.err == rc && d.err_offset == off);
            FUZZ_CHECK(pgw_decoder_next(&d, data + off, size - off, &m, &need) == rc);
            break;
        }
        FUZZ_CHECK((size_t)rc <= size - off && rc >= 5);
        FUZZ_CHECK(m.body == data + off + 5 && m.len == (uint64_t)rc - 5);
        FUZZ_CHECK(d.offset == off + (size_t)rc);
        check_prefixes(data + off, (size_t)rc);
        fuzz_walk(&m);
        off += (size_t)rc;
    }
    return 0;
}
