/* SPDX-License-Identifier: MIT */
/* fault.c - the test hooks of fault.h (test builds only). */
#include "fault.h"

#ifdef CLOVE_FAULT_INJECTION
#include <stdatomic.h>

static _Atomic unsigned long fault_seen[CLOVE__FAULT_KINDS];
static _Atomic unsigned long fault_nth[CLOVE__FAULT_KINDS];

void clove__fault_arm(int kind, unsigned long nth)
{
    atomic_store(&fault_seen[kind], 0);
    atomic_store(&fault_nth[kind], nth);
}

unsigned long clove__fault_count(int kind)
{
    return atomic_load(&fault_seen[kind]);
}

int clove__fault_hit(int kind)
{
    unsigned long n = atomic_fetch_add(&fault_seen[kind], 1) + 1;
    return n == atomic_load(&fault_nth[kind]);
}

/* The installed function and its context. A test installs and removes
 * them while no pool runs; ctx is stored first, so a hook point that
 * sees fn sees its ctx. */
static _Atomic(clove__hook_fn *) hook_fn;
static void *_Atomic hook_ctx;

void clove__hook_set(clove__hook_fn *fn, void *ctx)
{
    atomic_store(&hook_ctx, ctx);
    atomic_store(&hook_fn, fn);
}

void clove__hook(int point, unsigned long value)
{
    clove__hook_fn *fn = atomic_load(&hook_fn);
    if (fn != NULL)
        fn(atomic_load(&hook_ctx), point, value);
}
#else
/* ISO C forbids an empty translation unit. */
typedef int clove__fault_unused;
#endif
