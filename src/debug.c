/* SPDX-License-Identifier: MIT */
/*
 * debug.c - misuse reports. When CLOVE_DEBUG is non-zero, the inline
 * checks in clove.h call clove__debug_fork/join for anything that may be
 * a misuse, and these check it exactly; the library's cold paths call
 * clove__misuse directly in every build. Every report names the misused
 * call, the misuse, and the call site in the user's code.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Name a code address as object+offset, which `addr2line -f -i -e object
 * offset` turns into a function and a line (with debug information; -i
 * also names the functions inlined there, such as clove_fork), and by its
 * symbol when the dynamic symbol table has one. */
static void print_site(const void *site)
{
    if (site == NULL)
        return;
    char file[4096];
    uintptr_t off = 0, sym_off = 0;
    const char *sym = NULL;
    if (clove__code_location(site, file, sizeof file, &off, &sym, &sym_off)) {
        fprintf(stderr, "clove:   call site: %s+0x%" PRIxPTR, file, off);
        if (sym)
            fprintf(stderr, " (%s+0x%" PRIxPTR ")", sym, sym_off);
        fprintf(stderr, "; addr2line -f -i -e %s 0x%" PRIxPTR "\n", file, off);
        return;
    }
    fprintf(stderr, "clove:   call site: %p\n", site);
}

CLOVE__COLD CLOVE__NORETURN void clove__misuse(const char *call, const char *what,
                                               const void *site)
{
    fprintf(stderr, "clove: misuse in %s: %s\n", call, what);
    print_site(site);
    fflush(stderr);
    abort();
}

static void check_task(const char *call, clove_task *t, const void *site)
{
    if (t == NULL)
        clove__misuse(call, "the task is NULL", site);
    if (t != clove__current())
        clove__misuse(call, "the task is used outside the fn call that received it "
                            "(or on another thread)", site);
}

/* Called by clove.h's inline check when a fork through a future whose
 * fields were job and key may be a misuse (null_future: there is no
 * future): returns if it is none. */
void clove__debug_fork(clove_task *t, bool null_future, struct clove__job *job, uintptr_t key)
{
    const void *site = CLOVE__CALLER();
    check_task("clove_fork", t, site);
    if (null_future)
        clove__misuse("clove_fork", "the future is NULL", site);
    /* Does the future still name an unjoined record of t that was forked
     * through it? The newest, while queued, or the reserve. A debug fork's
     * key is the mix of the record's address and the job's argument
     * (CLOVE__DEBUG_MIX) xor the forking frame's address; key here is the
     * future's, xored with the frame of this fork (CLOVE__DEBUG_KEY), so
     * it is the mix of the record and the argument that record holds
     * exactly when this frame forked it through this future (arg does not
     * change while the record is the owner's or taken off: clove.h, struct
     * clove__job). A debug join sets the future's job to CLOVE__JOINED,
     * which is no record; so a future that was never forked, or whose fork
     * was joined, does not match, nor does memory that happens to point at
     * such a record unless it also holds that fork's key (a copy of the
     * unjoined future, or one left behind by code built without the
     * checks). */
    bool live = job != NULL && (job == clove__tk(t)->own_reserve ||
                                (t->top != t->base && job == t->top - 1 && job->fn != NULL));
    if (live && CLOVE__DEBUG_MIX(job, job->arg) == key)
        clove__misuse("clove_fork", "this future is already forked and not yet joined", site);
    if (t->top == t->limit)
        clove__misuse("clove_fork",
                      "forks nest deeper than the task's job stack (CLOVE_JOB_STACK_DEPTH, "
                      "or clove_config.stack_size / 32 if more)",
                      site);
}

CLOVE__COLD CLOVE__NORETURN void clove__kind_misuse(bool value, const void *site)
{
    clove__misuse(clove__join_name(value),
                  value ? "this future was forked with clove_fork (join it with clove_join)"
                        : "this future was forked with clove_fork_value (join it with "
                          "clove_join_value)",
                  site);
}

/* Called by clove.h's inline check when a join of a future whose job
 * field was job may be a misuse (null_future: there is no future):
 * returns if it is none. */
void clove__debug_join(clove_task *t, bool null_future, struct clove__job *job, bool value)
{
    const char *call = clove__join_name(value);
    const void *site = CLOVE__CALLER();
    check_task(call, t, site);
    if (null_future)
        clove__misuse(call, "the future is NULL", site);
    if (job == CLOVE__JOINED)
        clove__misuse(call, "this future was already joined", site);
    if (job == NULL)
        clove__misuse(call, "this future was never forked", site);
    if (t->top == t->base || job != t->top - 1)
        clove__misuse(call,
                      "this future is not the most recent unjoined fork of this task "
                      "(joined out of LIFO order, joined twice, or never forked)", site);
}

