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
 *
 * Pages once touched stay backed until they are given back: a task that
 * nested a million forks deep keeps 32 MB. So when a run ends, and when a
 * worker is about to sleep, the pool looks at the first record past the
 * first KEEP_BYTES (a load or two: clove__jobs_touched, internal.h) and,
 * if a fork ever wrote it, gives every page from there on back to the
 * system (clove__jobs_trim: clove__vm_discard, madvise(MADV_DONTNEED) on
 * POSIX; the next fork that reaches them gets zeroed pages). The fork/join
 * path never pays for any of it.
 *
 * Given-back pages stay readable, as zeros, on every system: a worker
 * holding a stale range of shared records may load their state words at
 * any time (share.c, "Claims"; on Windows, port_win.c commits such a page
 * again when it is read).
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

/* Bytes at the start of every job stack that stay backed: 2048 records of
 * nesting, more than almost any recursion reaches. */
#define KEEP_BYTES ((size_t)64 << 10)

size_t clove__jobs_keep(size_t depth)
{
    size_t ps = clove__page_size();
    size_t keep = (KEEP_BYTES + ps - 1) / ps * ps / sizeof(struct clove__job);
    return keep < depth ? keep : depth;
}

void clove__jobs_trim(struct clove__job *base, size_t depth)
{
    size_t used;
    (void)map_bytes(depth, &used);
    size_t keep = clove__jobs_keep(depth) * sizeof(struct clove__job);
    if (keep < used)
        clove__vm_discard((char *)base + keep, used - keep);
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
