/* SPDX-License-Identifier: MIT */
/*
 * wait.h - sleep and wake on a 32-bit word (the only blocking primitive the
 * runtime uses besides the pool mutex).
 *
 * Contract (as Concurrency Kit's ck_ec): clove__wait() sleeps while
 * *addr == expected, and may return early for any reason (a wake meant for
 * another word, a signal, the timeout), so callers re-check in a loop.
 * Memory ordering comes from the atomics on the word, never from the
 * sleep itself: a waker changes the word with a release store (or under a
 * lock) *before* calling clove__wake_*, and the waiter re-reads it with an
 * acquire load after waking. This keeps ThreadSanitizer able to see every
 * happens-before edge.
 *
 * clove__wake_* never dereferences addr, so it may be called after the
 * word's memory has been released by a waiter that already saw the new
 * value (private futexes and the hashed buckets below both only use the
 * address as a key).
 *
 * Backends: wait_futex.c (Linux futex) and wait_portable.c (hashed
 * mutex/condvar buckets), chosen by CMake's CLOVE_WAIT.
 */
#ifndef CLOVE_WAIT_H
#define CLOVE_WAIT_H

#include <stdatomic.h>
#include <stdint.h>

/* Once per pool, before any thread starts: 0, or ENOMEM if the backend
 * could not set itself up (the portable one, once per process). */
int clove__wait_init(void);

/* timeout_ns == 0 means no timeout. */
void clove__wait(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns);
void clove__wake_one(_Atomic uint32_t *addr);
void clove__wake_all(_Atomic uint32_t *addr);

#endif
