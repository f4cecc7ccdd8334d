/* SPDX-License-Identifier: MIT */
/* wait_futex.c - wait.h on Linux private futexes. */
#include "wait.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long futex(_Atomic uint32_t *addr, int op, uint32_t val,
                  const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

int clove__wait_init(void)
{
    return 0; /* futexes need no set-up */
}

void clove__wait(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns)
{
    struct timespec ts, *tsp = NULL;
    if (timeout_ns) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000u);
        ts.tv_nsec = (long)(timeout_ns % 1000000000u);
        tsp = &ts;
    }
    /* EAGAIN (value changed), EINTR and ETIMEDOUT are all "return early":
     * the caller re-checks. */
    (void)futex(addr, FUTEX_WAIT_PRIVATE, expected, tsp);
}

void clove__wake_one(_Atomic uint32_t *addr)
{
    (void)futex(addr, FUTEX_WAKE_PRIVATE, 1, NULL);
}

void clove__wake_all(_Atomic uint32_t *addr)
{
    (void)futex(addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
}
