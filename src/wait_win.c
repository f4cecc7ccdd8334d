/* SPDX-License-Identifier: MIT */
/*
 * wait_win.c - wait.h on Windows: WaitOnAddress and WakeByAddressSingle/All
 * (Windows 8 or later; link with synchronization.lib). Like a futex, it
 * compares the word with the expected value inside the wait, and the
 * address is only a key, so a wake after the word's memory is gone is
 * harmless.
 */
#include "wait.h"

#include <stdbool.h>
#include <windows.h>

int clove__wait_init(void)
{
    return 0;
}

#ifndef CREATE_WAITABLE_TIMER_HIGH_RESOLUTION
#define CREATE_WAITABLE_TIMER_HIGH_RESOLUTION 0x00000002
#endif

/* Timed waits shorter than this sleep on a high-resolution waitable timer
 * (Windows 10 1803 or later) instead of WaitOnAddress, whose timeout is in
 * milliseconds and, with the default timer resolution, ends up to 15.6 ms
 * late: the heartbeat thread sleeps for an interval of 100 us by default.
 * Such a wait is not ended by a wake, only by its timeout (the contract
 * lets a wait return at any time: its callers, the heartbeat thread's
 * sleeps on the stop flag, then see the flag up to this much later). */
#define TIMER_BELOW_NS 20000000u /* 20 ms */

static bool timer_sleep(uint64_t timeout_ns)
{
    HANDLE timer = CreateWaitableTimerExW(NULL, NULL, CREATE_WAITABLE_TIMER_HIGH_RESOLUTION,
                                          TIMER_ALL_ACCESS);
    if (timer == NULL)
        return false;
    LARGE_INTEGER due;
    due.QuadPart = -(LONGLONG)((timeout_ns + 99u) / 100u); /* relative, in 100 ns */
    bool ok = SetWaitableTimer(timer, &due, 0, NULL, NULL, FALSE) &&
              WaitForSingleObject(timer, INFINITE) == WAIT_OBJECT_0;
    CloseHandle(timer);
    return ok;
}

void clove__wait(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns)
{
    DWORD ms = INFINITE;
    if (timeout_ns != 0 && timeout_ns < TIMER_BELOW_NS) {
        if (atomic_load_explicit(addr, memory_order_relaxed) != expected || timer_sleep(timeout_ns))
            return;
    }
    if (timeout_ns) {
        /* Rounded up, so that a short timeout still sleeps. */
        uint64_t m = (timeout_ns + 999999u) / 1000000u;
        ms = m >= INFINITE ? INFINITE - 1 : (DWORD)m;
    }
    /* FALSE with ERROR_TIMEOUT, or a spurious return: the caller re-checks. */
    (void)WaitOnAddress((volatile VOID *)addr, &expected, sizeof expected, ms);
}

void clove__wake_one(_Atomic uint32_t *addr)
{
    WakeByAddressSingle((PVOID)addr);
}

void clove__wake_all(_Atomic uint32_t *addr)
{
    WakeByAddressAll((PVOID)addr);
}
