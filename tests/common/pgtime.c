/* Timed assertions (see pgtime.h). */
#define _POSIX_C_SOURCE 200809L
#include "pgtime.h"

#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include <setjmp.h>
#include <cmocka.h>

uint64_t pgt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double pgt_ms_between(uint64_t t0_ns, uint64_t t_ns)
{
    return t_ns >= t0_ns ? (double)(t_ns - t0_ns) / 1e6 : -(double)(t0_ns - t_ns) / 1e6;
}

double pgt_ms_since(uint64_t t0_ns)
{
    return pgt_ms_between(t0_ns, pgt_now_ns());
}

void pgt_assert_in_time(const char *what, double took_ms, double earliest_ms, double work_ms)
{
    double latest = earliest_ms + PGT_LATE_MS;
    if (work_ms != PGT_WORK_ENDLESS && work_ms < latest + PGT_LATE_MS)
        fail_msg("%s: the test's work (%.0f ms) ends too soon after its deadline (%.0f ms) to "
                 "tell the two apart on a loaded machine: make it last %.0f ms or more",
                 what, work_ms, earliest_ms, latest + PGT_LATE_MS);
    print_message("%s: after %.1f ms (due at %.0f ms)\n", what, took_ms, earliest_ms);
    if (took_ms < earliest_ms)
        fail_msg("%s: after %.1f ms, before it was due (%.0f ms)", what, took_ms, earliest_ms);
    if (took_ms > latest)
        fail_msg("%s: after %.1f ms, more than %.0f ms after it was due (%.0f ms)%s", what, took_ms,
                 PGT_LATE_MS, earliest_ms,
                 work_ms == PGT_WORK_ENDLESS ? "" : ": as if the work had not been cut short");
}
