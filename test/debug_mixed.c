/* SPDX-License-Identifier: MIT */
/*
 * debug_mixed.c - code built with the debug checks (CLOVE_DEBUG 1 in this
 * file, whatever the rest of the tests use) forking inside the library's
 * own forks, as a program built without -DNDEBUG does against the
 * ordinary (release) library. clove__debug_fork must not take a stamp
 * that an earlier debug fork left at a record position for a live fork
 * through the same future.
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

/* Leave the stamp &stale at this position and the next depth ones: a
 * debug fork through stale, then a release join (which does not clear
 * it), and the position kept by a release fork (which writes no stamp). */
static void stamp_positions(clove_task *t, int depth)
{
    clove_fork(t, &stale, nop_fn, NULL);
    ASSERT(!release_join(t, &stale));
    stale.job = NULL; /* so that the next fork through it is not suspect */
    if (depth == 0)
        return;
    clove_future keep;
    release_fork(t, &keep, nop_fn, NULL);
    stamp_positions(t, depth - 1);
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
    stamp_positions(t, 64);
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
