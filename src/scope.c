/* SPDX-License-Identifier: MIT */
/*
 * scope.c - clove_scope_run and clove_spawn: a dynamic number of jobs that
 * all finish before the scope ends (Rayon's scope), without a heap
 * allocation per spawn.
 *
 * A clove_scope is a frame: the record of what one function (the scope's
 * own fn, or one spawned job) spawned. clove_spawn only appends a record
 * {job, arg} to the frame: the first SCOPE_INLINE records live in the
 * frame itself (on the stack), later ones in a heap array that grows 4x at
 * a time. When the function returns, the frame is closed and its records
 * are run like the iterations of clove_for: in order, reading the
 * heartbeat flag between records, and on a heartbeat the remaining records
 * are split in half and the upper half is forked as an ordinary future.
 * Each record runs with a fresh frame of its own, which is run the same
 * way when the job returns, so spawns nest to any depth and everything is
 * finished, depth first, before clove_scope_run returns.
 *
 * clove_scope_run_cancel gives every frame of the scope its token: no
 * record starts once it is requested, and clove_spawn drops new ones.
 *
 * The records of a closed frame never change, so the parts of it that
 * other workers run need no lock: the fork/join publication is enough.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SCOPE_INLINE 16

struct spawn_rec {
    clove_scope_fn *fn;
    void *arg;
};

struct clove_scope {
    clove_task *owner;       /* the task that received this frame */
    const clove_cancel *cancel; /* the scope's token (clove_scope_run_cancel),
                                 * or NULL: once requested, no record starts
                                 * and clove_spawn drops new ones */
    struct spawn_rec *recs;  /* inline_recs, or a heap array */
    size_t n, cap;
    int closed;              /* the receiving function has returned */
    struct spawn_rec inline_recs[SCOPE_INLINE];
};

static void frame_init(clove_scope *s, clove_task *t, const clove_cancel *c)
{
    s->owner = t;
    s->cancel = c;
    s->recs = s->inline_recs;
    s->n = 0;
    s->cap = SCOPE_INLINE;
    s->closed = 0;
}

static void run_records(clove_task *t, const struct spawn_rec *recs, size_t lo, size_t hi,
                        const clove_cancel *c);

struct recs_part {
    const struct spawn_rec *recs;
    size_t lo, hi;
    const clove_cancel *cancel;
};

static void recs_part_fn(clove_task *t, void *arg)
{
    struct recs_part *part = arg;
    run_records(t, part->recs, part->lo, part->hi, part->cancel);
}

/* Call fn with a fresh frame, then run what it spawned. */
static void run_frame(clove_task *t, clove_scope_fn *fn, void *arg, const clove_cancel *c)
{
    clove_scope s;
    frame_init(&s, t, c);
    fn(t, &s, arg);
    s.closed = 1;
    if (s.n > 0)
        run_records(t, s.recs, 0, s.n, c);
    if (s.recs != s.inline_recs)
        free(s.recs);
}

static void run_records(clove_task *t, const struct spawn_rec *recs, size_t lo, size_t hi,
                        const clove_cancel *c)
{
    while (lo < hi) {
        /* Cancelled: no record starts any more, here or in a split. */
        if (c && clove_cancelled(c))
            return;
        if (clove__beat_pending(t) && hi - lo >= 2) {
            struct recs_part upper = {recs, lo + (hi - lo) / 2, hi, c};
            clove_future f;
            clove_fork(t, &f, recs_part_fn, &upper);
            run_records(t, recs, lo, upper.lo, c);
            if (!clove_join(t, &f))
                run_records(t, recs, upper.lo, hi, c);
            return;
        }
        run_frame(t, recs[lo].fn, recs[lo].arg, c);
        lo++;
    }
}

void clove_scope_run(clove_task *t, clove_scope_fn *fn, void *arg)
{
    if (t == NULL || fn == NULL)
        clove__misuse("clove_scope_run", "the task or fn is NULL", CLOVE__CALLER());
    run_frame(t, fn, arg, NULL);
}

int clove_scope_run_cancel(clove_task *t, clove_scope_fn *fn, void *arg, clove_cancel *c)
{
    if (t == NULL || fn == NULL)
        return EINVAL;
    if (c == NULL) {
        run_frame(t, fn, arg, NULL);
        return 0;
    }
    if (!clove_cancelled(c))
        run_frame(t, fn, arg, c);
    /* Every part this scope forked has been joined: a request made in
     * any job happens-before this load. */
    return clove_cancelled(c) ? ECANCELED : 0;
}

void clove_spawn(clove_task *t, clove_scope *s, clove_scope_fn *job, void *arg)
{
    if (s == NULL || job == NULL)
        clove__misuse("clove_spawn", "the scope or job is NULL", CLOVE__CALLER());
    if (s->closed)
        clove__misuse("clove_spawn", "the function that received this scope has returned",
                      CLOVE__CALLER());
    if (s->owner != t)
        clove__misuse("clove_spawn", "the task is not the one that received this scope",
                      CLOVE__CALLER());
    if (s->cancel && clove_cancelled(s->cancel))
        return; /* it would never start: drop it */
    if (s->n == s->cap) {
        struct spawn_rec *grown = NULL;
        if (s->cap <= SIZE_MAX / 4 / sizeof *grown)
            grown = clove__malloc(s->cap * 4 * sizeof *grown);
        if (grown == NULL) {
            /* Cannot record it: run it now, which still satisfies the
             * contract (exactly once, finished before the scope ends). */
            run_frame(t, job, arg, s->cancel);
            return;
        }
        memcpy(grown, s->recs, s->n * sizeof *grown);
        if (s->recs != s->inline_recs)
            free(s->recs);
        s->recs = grown;
        s->cap *= 4;
    }
    s->recs[s->n].fn = job;
    s->recs[s->n].arg = arg;
    s->n++;
    clove_tick(t);
}
