/* SPDX-License-Identifier: MIT */
/*
 * fault.h - test hooks: make the n-th allocation, thread creation or
 * synchronisation-object initialisation inside the library fail; call a
 * test's function at a named point of the heartbeat thread, to hold it
 * there while the test sets up a race.
 *
 * Compiled in only when the library is built with CLOVE_FAULT_INJECTION
 * (CMake target clove_testlib); in the shipped library the checks below
 * are constant 0 and vanish. The counters are process-global and atomic,
 * which is acceptable for a test-only hook and nothing else.
 */
#ifndef CLOVE_FAULT_H
#define CLOVE_FAULT_H

enum clove__fault_kind {
    CLOVE__FAULT_ALLOC = 0,  /* malloc/calloc/aligned allocation -> ENOMEM */
    CLOVE__FAULT_THREAD = 1, /* pthread_create -> EAGAIN */
    CLOVE__FAULT_SYNC = 2,   /* pthread_mutex_init and friends -> ENOMEM */
    CLOVE__FAULT_KINDS = 3
};

/* Points at which clove__hook calls the test's function. */
enum clove__hook_point {
    /* heartbeat_pass, the pool lock held, about to act on the entry
     * task's run. value: bit 0 if it found the run's BEAT unanswered (it
     * steals the reserve, if any, next), bit 1 if it beats the run after
     * that. */
    CLOVE__HOOK_ENTRY_PASS = 0
};
typedef void clove__hook_fn(void *ctx, int point, unsigned long value);

#ifdef CLOVE_FAULT_INJECTION
#include "clove.h"
/* Install fn (NULL: none), called with ctx at every hook point. */
CLOVE_API void clove__hook_set(clove__hook_fn *fn, void *ctx);
/* Internal: call the installed function, if any. */
void clove__hook(int point, unsigned long value);
/* Arm: the nth (1-based) operation of that kind from now on fails; 0
 * disarms. Also resets the kind's counter. */
CLOVE_API void clove__fault_arm(int kind, unsigned long nth);
/* Operations of that kind seen since the last arm. */
CLOVE_API unsigned long clove__fault_count(int kind);
/* Internal: count one operation; nonzero means "fail this one". */
int clove__fault_hit(int kind);
#else
#define clove__fault_hit(kind) 0
#define clove__hook(point, value) ((void)0)
#endif

#endif
