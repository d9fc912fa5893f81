/*
 * libFuzzer target: input[0] is a backend type byte and the rest the body of
 * a frame, whatever its size (no framing rule applies here). pgw_msg_parse
 * runs on it, and the walkers that apply run over what it accepts.
 */
#include <stddef.h>
#include <stdint.h>

#include "proto_walk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size - 1 > INT32_MAX - 4) return 0;
    pgw_frame_t f = {data[0], data + 1, (uint32_t)(size - 1), size + 4};
    pgw_msg_t m;
    int rc = pgw_msg_parse(&f, &m);
    FUZZ_CHECK(rc == 0 || rc == PGW_EPROTO);
    if (rc == 0) {
        FUZZ_CHECK(m.type == data[0] && m.body == data + 1 && m.len == size - 1);
        fuzz_walk(&m);
    }
    return 0;
}
