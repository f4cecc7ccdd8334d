/* SPDX-License-Identifier: MIT */
/*
 * release_join.c - clove_join, clove_join_value and clove_fork as code built without
 * the debug checks calls them (CLOVE_DEBUG 0 in this file only), so that
 * test_misuse.c can check what the library's own slow path reports,
 * whatever CLOVE_DEBUG the rest of the tests use.
 */
#define CLOVE_DEBUG 0
#include "test.h"

bool release_join(clove_task *t, clove_future *f)
{
    return clove_join(t, f);
}

bool release_join_value(clove_task *t, clove_future *f, int64_t *result)
{
    return clove_join_value(t, f, result);
}

void release_fork(clove_task *t, clove_future *f, clove_fn *fn, void *arg)
{
    clove_fork(t, f, fn, arg);
}
