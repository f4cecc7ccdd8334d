/* SPDX-License-Identifier: MIT */
/*
 * jobstack.c - the memory of a task's job stack.
 *
 * A job stack is an array of records (struct clove__job) that the inline
 * fork writes without checking its capacity: the array is one reservation
 * of address space (port.h) between two inaccessible guard pages, so
 * running off its end faults at once instead of overwriting memory (debug
 * builds check first and abort with a message: clove__debug_fork). Only
 * the pages a task's nesting actually reaches are ever backed by memory,
 * so the depth can be generous (CLOVE_JOB_STACK_DEPTH: 32 MiB of address space on 64-bit
 * targets).
 */
#include "internal.h"

/* A guard page, the records rounded up to whole pages, a guard page. The
 * lower guard also keeps the records' mapping from merging with a
 * neighbouring one (a thread stack, say), so that it stays one mapping of
 * its own, as /proc/self/maps shows it. */
static size_t map_bytes(size_t depth, size_t *used)
{
    size_t ps = clove__page_size();
    *used = (depth * sizeof(struct clove__job) + ps - 1) / ps * ps;
    return ps + *used + ps;
}

struct clove__job *clove__jobs_map(size_t depth)
{
    if (clove__fault_hit(CLOVE__FAULT_ALLOC))
        return NULL;
    size_t used, ps = clove__page_size();
    size_t bytes = map_bytes(depth, &used);
    char *m = clove__vm_reserve(bytes);
    if (m == NULL)
        return NULL;
    if (!clove__vm_commit(m + ps, used)) {
        clove__vm_release(m, bytes);
        return NULL;
    }
    return (struct clove__job *)(void *)(m + ps);
}

void clove__jobs_unmap(struct clove__job *base, size_t depth)
{
    if (base == NULL)
        return;
    size_t used;
    size_t bytes = map_bytes(depth, &used);
    clove__vm_release((char *)base - clove__page_size(), bytes);
}
