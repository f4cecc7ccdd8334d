/* SPDX-License-Identifier: MIT */
/*
 * fault.h - test hook: make the n-th allocation, thread creation or
 * synchronisation-object initialisation inside the library fail.
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

#ifdef CLOVE_FAULT_INJECTION
#include "clove.h"
/* Arm: the nth (1-based) operation of that kind from now on fails; 0
 * disarms. Also resets the kind's counter. */
CLOVE_API void clove__fault_arm(int kind, unsigned long nth);
/* Operations of that kind seen since the last arm. */
CLOVE_API unsigned long clove__fault_count(int kind);
/* Internal: count one operation; nonzero means "fail this one". */
int clove__fault_hit(int kind);
#else
#define clove__fault_hit(kind) 0
#endif

#endif
