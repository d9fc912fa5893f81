/*
 * Shared by the SIGPIPE and chaos tests: SIGPIPE must be at its default
 * disposition, unblocked, so that a SIGPIPE raised by a write would kill
 * the test process, and it must still be so when a scenario ends (the
 * library never changes dispositions or masks). Include after <cmocka.h>.
 */
#ifndef PGW_TEST_CONN_SIGNALS_H
#define PGW_TEST_CONN_SIGNALS_H

#include <signal.h>

/* SIGPIPE is at SIG_DFL, not blocked and not pending. */
static inline void assert_sigpipe_default(void)
{
    struct sigaction sa;
    assert_int_equal(sigaction(SIGPIPE, NULL, &sa), 0);
    assert_true(sa.sa_handler == SIG_DFL);
    sigset_t mask;
    assert_int_equal(sigprocmask(SIG_SETMASK, NULL, &mask), 0);
    assert_int_equal(sigismember(&mask, SIGPIPE), 0);
    sigset_t pending;
    assert_int_equal(sigpending(&pending), 0);
    assert_int_equal(sigismember(&pending, SIGPIPE), 0);
}

/* cmocka setup: expose the process to SIGPIPE whatever the environment
 * (a parent that ignored it) did: the tests mean nothing otherwise. */
static inline int setup_sigpipe_default(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    return 0;
}

#endif
