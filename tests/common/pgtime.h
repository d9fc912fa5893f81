/*
 * Timed assertions: what a test may say about wall-clock time.
 *
 * A test asserts what the code must do: that a deadline (a request's
 * timeout, connect_timeout, a cancel, a lost connection noticed) fired, no
 * earlier than it was due, and long before the work it cut short would
 * have ended on its own. It never asserts a tight latency: the suite must
 * pass with both cores busy (other builds, a CPU hog) and under valgrind,
 * where a timer's callback can run seconds late. Precise latencies are
 * measured in bench/.
 *
 * So "long before" has one meaning for every test: at most PGT_LATE_MS
 * after the event was due, and the work a test cuts short must last at
 * least twice that past the due time (pg_sleep(30) behind a 200 ms
 * deadline), or never end on its own (PGT_WORK_ENDLESS: a server that never
 * answers), so that "fired" and "the work ended by itself" cannot be
 * confused however loaded the machine is.
 */
#ifndef PGW_TESTS_PGTIME_H
#define PGW_TESTS_PGTIME_H

#include <stdint.h>

/* How late an event may come and still count as on time. */
#define PGT_LATE_MS 10000.0

/* The work_ms of work that never ends on its own. */
#define PGT_WORK_ENDLESS 0.0

/* A monotonic clock in nanoseconds (CLOCK_MONOTONIC, as uv_hrtime). */
uint64_t pgt_now_ns(void);

/* Milliseconds from t0_ns to t_ns (both pgt_now_ns or uv_hrtime values). */
double pgt_ms_between(uint64_t t0_ns, uint64_t t_ns);

/* Milliseconds since t0_ns. */
double pgt_ms_since(uint64_t t0_ns);

/*
 * Fail the current cmocka test, naming what, unless an event that happened
 * took_ms after its start fired in time: no earlier than earliest_ms (when
 * it was due, less any rounding the test allows) and at most PGT_LATE_MS
 * after it, long before work_ms, when the work it cut short would have
 * ended on its own (PGT_WORK_ENDLESS: never). Also fails when the test
 * leaves too little room: work_ms below earliest_ms + 2 * PGT_LATE_MS.
 * Prints took_ms, so a run's log still shows the latency.
 */
void pgt_assert_in_time(const char *what, double took_ms, double earliest_ms, double work_ms);

#endif /* PGW_TESTS_PGTIME_H */
