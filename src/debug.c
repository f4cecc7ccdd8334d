/*
 * debug.c - misuse reports. The inline checks in clove.h call
 * clove__debug_fork/join when CLOVE_DEBUG is non-zero; the library's cold
 * paths call clove__misuse directly in every build.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

CLOVE__COLD CLOVE__NORETURN void clove__misuse(const char *call, const char *what)
{
    fprintf(stderr, "clove: misuse in %s: %s\n", call, what);
    fflush(stderr);
    abort();
}

static void check_task(const char *call, clove_task *t)
{
    if (t == NULL)
        clove__misuse(call, "the task is NULL");
    if (t != clove__current())
        clove__misuse(call, "the task is used outside the fn call that received it "
                            "(or on another thread)");
}

void clove__debug_fork(clove_task *t, clove_future *f)
{
    check_task("clove_fork", t);
    if (f == NULL)
        clove__misuse("clove_fork", "the future is NULL");
    if (f == t->tail)
        clove__misuse("clove_fork", "this future is already forked and not yet joined");
}

void clove__debug_join(clove_task *t, clove_future *f)
{
    check_task("clove_join", t);
    if (f != t->tail)
        clove__misuse("clove_join",
                      "this future is not the most recent unjoined fork of this task "
                      "(joined out of LIFO order, joined twice, or never forked)");
}
