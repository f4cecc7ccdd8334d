/* SPDX-License-Identifier: MIT */
/*
 * debug_mixed.c - code built with the debug checks (CLOVE_DEBUG 1 in this
 * file, whatever the rest of the tests use) forking inside the library's
 * own forks, as a program built without -DNDEBUG does against the
 * ordinary (release) library. clove__debug_fork must not take a future
 * whose memory names a record that the library forked since (at a
 * position where an earlier debug fork went through the same future) for
 * a live fork through it.
 */
#undef CLOVE_DEBUG
#define CLOVE_DEBUG 1
#include "test.h"

#include <stdlib.h>

/* One future, forked and joined at many positions of the job stack. */
static clove_future stale;
static clove_task *current;
static bool forked_in_compar;

static void nop_fn(clove_task *t, void *arg)
{
    (void)t;
    (void)arg;
}

/* Fork through stale at this position and the next depth ones: a debug
 * fork, then a release join (which leaves stale's key), and the position
 * kept by a release fork. */
static void fork_positions(clove_task *t, int depth)
{
    clove_fork(t, &stale, nop_fn, NULL);
    ASSERT(!release_join(t, &stale));
    stale.job = NULL; /* so that the next fork through it is not suspect */
    if (depth == 0)
        return;
    clove_future keep;
    release_fork(t, &keep, nop_fn, NULL);
    fork_positions(t, depth - 1);
    ASSERT(!release_join(t, &keep));
}

static int compar(const void *a, const void *b)
{
    if (!forked_in_compar) {
        /* The future's memory names the newest record, a fork of the
         * sort's, as stale memory can. Forking through it is correct. */
        forked_in_compar = true;
        stale.job = current->top - 1;
        clove_fork(current, &stale, nop_fn, NULL);
        ASSERT(!clove_join(current, &stale));
    }
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void mixed_run(clove_task *t, void *arg)
{
    (void)arg;
    current = t;
    fork_positions(t, 64);
    size_t n = 1000;
    int *v = malloc(n * sizeof *v);
    ASSERT(v != NULL);
    for (size_t i = 0; i < n; i++)
        v[i] = (int)(mix64(i) % 100000);
    ASSERT_OK(clove_sort(t, v, n, sizeof *v, compar));
    for (size_t i = 1; i < n; i++)
        ASSERT(v[i - 1] <= v[i]);
    free(v);
    ASSERT(forked_in_compar);
}

void test_debug_fork_in_library_forks(void)
{
    clove_pool *p = make_pool(1, 100);
    ASSERT_OK(clove_pool_run(p, mixed_run, NULL));
    clove_pool_destroy(p);
}

/* A future's memory holding leftovers: the newest record's address, or
 * its neighbours', xored with stack addresses (the job's argument, other
 * locals, the frame), as an uninitialized future at -O0 often does. None
 * of them is a key, so forking through it is no second fork. */
static void leftovers_run(clove_task *t, void *arg)
{
    (void)arg;
    char block[64];
    clove_future live;
    clove_fork(t, &live, nop_fn, &block[8]);
    struct clove__job *r = live.job;
    const uintptr_t rec[] = {(uintptr_t)r, (uintptr_t)(r - 1), (uintptr_t)(r + 1), 0};
    const uintptr_t stack[] = {
        (uintptr_t)&block[8], (uintptr_t)&block[0], (uintptr_t)&live,
#if defined(__GNUC__) || defined(__clang__)
        (uintptr_t)__builtin_frame_address(0),
#endif
#if defined(__GNUC__) && !defined(__clang__)
        (uintptr_t)__builtin_dwarf_cfa(),
#endif
        0,
    };
    size_t nrec = sizeof rec / sizeof rec[0], nstack = sizeof stack / sizeof stack[0];
    long forks = 0;
    for (size_t a = 0; a < nrec; a++)
        for (size_t b = 0; b < nstack; b++)
            for (size_t c = 0; c < nstack; c++) {
                clove_future h;
                h.job = r; /* the newest record, live */
                h.key = rec[a] ^ stack[b] ^ stack[c];
                clove_fork(t, &h, nop_fn, &block[8]);
                ASSERT(h.job == r + 1);
                ASSERT(!clove_join(t, &h));
                forks++;
            }
    ASSERT(!clove_join(t, &live));
    ASSERT(forks == (long)(nrec * nstack * nstack));
}

void test_debug_fork_leftovers(void)
{
    clove_pool *p = make_pool(1, 100);
    ASSERT_OK(clove_pool_run(p, leftovers_run, NULL));
    clove_pool_destroy(p);
}
