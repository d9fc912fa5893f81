/*
 * Preloaded into a libpgwire-pq run by tests/pq/diff/run-diff.sh slowclock:
 * libuv's uv_hrtime, the clock libpgwire's connection gives its session,
 * reads 2 ms later at each call than the real monotonic clock would. Every
 * time slice of 1 or 2 ms (the COPY FROM pumps) is then over at its first
 * check, which on a loaded machine or under valgrind happens by chance.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <time.h>

#define SKEW_PER_CALL_NS (2u * 1000u * 1000u)

uint64_t uv_hrtime(void);

uint64_t uv_hrtime(void)
{
    static uint64_t skew;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    skew += SKEW_PER_CALL_NS;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + skew;
}
