/* SPDX-License-Identifier: MIT */
/*
 * for.c - clove_for and clove_reduce: parallel loops without a grain size.
 *
 * The loop runs its range in chunks, calling body once per chunk, and
 * reads the task's heartbeat flag between chunks. When a heartbeat has
 * arrived, it splits the *remaining* iterations in half, forks the upper
 * half as an ordinary future (so the heartbeat handler, run by that fork's
 * tick, can share it - or an older, bigger job of this task, which is
 * better still), and continues with the lower half. If nobody took the
 * upper half, the join says so and this worker runs it too.
 *
 * Chunk size adapts so that one chunk takes about an eighth of a heartbeat
 * interval: a cheap body runs long vectorisable chunks and pays for one
 * indirect call and one clock read per chunk, an expensive body is polled
 * after every iteration. The heartbeat can thus be answered within about
 * interval/8 plus one iteration. A pool with one thread never splits, so
 * the loop is a single call of body.
 *
 * A long loop also splits without a heartbeat, before each chunk once the
 * chunk has its size, so that its task always has its remaining upper
 * half forked - and so reserved, where the heartbeat thread can share it
 * even while a chunk runs far longer than its pace promised (for_range).
 *
 * Splitting halves the range, so the recursion is at most 64 levels deep
 * per loop, whatever the range.
 *
 * clove_for_cancel checks a cancellation token before every chunk, so
 * once it is requested no chunk starts, here or in the parts other workers
 * took; on one thread it too runs in chunks.
 *
 * clove_reduce is the same loop carrying an accumulator: the lower half of
 * a split folds on into the caller's accumulator, the upper half into a
 * fresh one that only a worker that took it initialises, and the join
 * combines the two, left then right, so the result is the sequential one
 * for any associative operation.
 */
#include "internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

struct for_loop {
    clove_range_fn *body;     /* clove_for: body(t, lo, hi, ctx) */
    clove_reduce_fn *rbody;   /* clove_reduce: rbody(t, lo, hi, acc, ctx) */
    clove_init_fn *init;      /* clove_reduce only */
    clove_combine_fn *combine;
    size_t acc_size;
    void *ctx;
    uint64_t target_ns; /* wanted duration of one chunk */
    bool eager;         /* keep the rest of a long range forked (for_range) */
    const clove_cancel *cancel; /* clove_for_cancel: no chunk starts once
                                 * it is requested; NULL otherwise */
};

/* Room for a small accumulator in the splitting frame. */
#define SMALL_ACC 64
union small_acc {
    max_align_t align;
    unsigned char bytes[SMALL_ACC];
};

/* The upper half of a split range, offered as a job. acc is its own
 * accumulator (clove_reduce), initialised by whoever takes the job. */
struct for_part {
    const struct for_loop *loop;
    size_t lo, hi;
    size_t chunk;
    void *acc;
};

static void for_range(clove_task *t, const struct for_loop *loop, size_t lo,
                      size_t hi, size_t chunk, void *acc, bool ramp);

/* At the pace of the last chunk (n iterations in dt ns), would the rest
 * take more than a heartbeat interval? */
static bool rest_exceeds_interval(const struct for_loop *loop, uint64_t dt, size_t n, size_t rest)
{
    return (double)dt / (double)n * (double)rest >
           (double)CLOVE__CHUNK_DIV * (double)loop->target_ns;
}

static void for_part_fn(clove_task *t, void *arg)
{
    struct for_part *part = arg;
    if (part->acc)
        part->loop->init(part->acc, part->loop->ctx);
    for_range(t, part->loop, part->lo, part->hi, part->chunk, part->acc, true);
}

/* Split [lo, hi) at a heartbeat: fork the upper half, run the lower half,
 * then join. If nobody took the upper half, run it here, folding on into
 * the same accumulator (so init and combine are paid only for a split
 * that really ran elsewhere). */
static void for_split(clove_task *t, const struct for_loop *loop, size_t lo,
                      size_t hi, size_t chunk, void *acc)
{
    union small_acc small;
    struct for_part upper = {loop, lo + (hi - lo) / 2, hi, chunk, NULL};
    if (acc) {
        upper.acc = loop->acc_size <= SMALL_ACC ? (void *)&small : clove__malloc(loop->acc_size);
        if (upper.acc == NULL) {
            /* No room for a second accumulator: go on sequentially. */
            for_range(t, loop, lo, hi, chunk, acc, false);
            return;
        }
    }
    clove_future f;
    clove_fork(t, &f, for_part_fn, &upper);
    for_range(t, loop, lo, upper.lo, chunk, acc, true);
    if (clove_join(t, &f)) {
        if (acc)
            loop->combine(acc, upper.acc, loop->ctx);
    } else {
        /* Nobody took it, though a worker may have been idle (it did not
         * get a CPU in time): no ramp-up split at its first chunk, or
         * every half run here would split again, and a loop of a cheap
         * body would make of the order of sqrt(hi - lo) calls. */
        for_range(t, loop, upper.lo, hi, chunk, acc, false);
    }
    if (upper.acc != NULL && upper.acc != (void *)&small)
        free(upper.acc);
}

/* Run [lo, hi) in chunks of chunk iterations to start with. ramp: after
 * the first chunk, split at once if the rest is long and a worker is idle
 * (below). */
static void for_range(clove_task *t, const struct for_loop *loop, size_t lo,
                      size_t hi, size_t chunk, void *acc, bool ramp)
{
    uint64_t t0 = clove__now_ns();
    bool first = ramp;
    bool split_now = false;
    while (lo < hi) {
        /* Cancelled: start nothing more, here or in a split. One relaxed
         * load per chunk, only for clove_for_cancel. */
        if (loop->cancel && clove_cancelled(loop->cancel))
            return;
        if ((split_now || clove__beat_pending(t)) && hi - lo >= 2) {
            for_split(t, loop, lo, hi, chunk, acc);
            return;
        }
        size_t n = hi - lo < chunk ? hi - lo : chunk;
        if (acc)
            loop->rbody(t, lo, lo + n, acc, loop->ctx);
        else
            loop->body(t, lo, lo + n, loop->ctx);
        lo += n;
        uint64_t t1 = clove__now_ns();
        uint64_t dt = t1 - t0;
        t0 = t1;
        if (dt < loop->target_ns / 2 && n == chunk && chunk <= SIZE_MAX / 2) {
            chunk *= 2;
        } else if (dt > loop->target_ns && chunk > 1) {
            /* Shrink in proportion at once: a chunk that ran into an
             * expensive stretch would otherwise keep the heartbeat waiting
             * for several more too-long chunks. */
            uint64_t c = (uint64_t)((double)chunk * (double)loop->target_ns / (double)dt);
            chunk = c > 1 ? (size_t)c : 1;
        }
        /* Keep the rest forked while it is long: once the chunk has its
         * size (it took at least half its target) and what is left looks
         * like more than a heartbeat interval of work at its pace, split
         * before the next chunk, heartbeat or not. Nobody is woken by
         * that (the fork is only queued, or reserved: the reserve in
         * share.c), but a chunk can take far longer than its pace
         * promised (a body whose cost jumps by 1000x), and while it runs
         * the heartbeat thread can share nothing but this task's reserve:
         * without a fork there would be none, and an idle worker would
         * wait for the chunk to end. Cost: a fork and join per split; as
         * splits stop once the rest is under an interval of work, about
         * one per interval of work. Not while the chunk still grows (a
         * body that is not linear in its range, e.g. O(1), would split
         * forever), and not for a reduction whose accumulator does not fit
         * in the frame (each split would allocate one). */
        if (loop->eager && lo < hi && dt >= loop->target_ns / 2 &&
            rest_exceeds_interval(loop, dt, n, hi - lo))
            split_now = true;
        /* A loop, unlike a recursion, knows how much is left. If the rest
         * looks like more than a heartbeat interval of work at the pace of
         * this first chunk and some worker is idle, do not wait for the
         * heartbeat: split now, as if it had arrived. Small loops never
         * get here with enough left, so they wake nobody. */
        if (first) {
            first = false;
            if (lo < hi && atomic_load_explicit(&t->pool->idle_count, memory_order_relaxed) != 0 &&
                rest_exceeds_interval(loop, dt, n, hi - lo))
                atomic_store_explicit(&t->heartbeat, CLOVE__HB_BEAT, memory_order_relaxed);
        }
    }
}

static uint64_t chunk_target_ns(const clove_pool *p)
{
    return (uint64_t)p->heartbeat_us * 1000u / CLOVE__CHUNK_DIV;
}

void clove_for(clove_task *t, size_t begin, size_t end, clove_range_fn *body, void *ctx)
{
    if (begin >= end)
        return;
    if (t->pool->nworkers == 0) {
        body(t, begin, end, ctx);
        return;
    }
    struct for_loop loop = {body, NULL, NULL, NULL, 0, ctx, chunk_target_ns(t->pool), true, NULL};
    for_range(t, &loop, begin, end, 1, NULL, true);
}

int clove_for_cancel(clove_task *t, size_t begin, size_t end, clove_range_fn *body, void *ctx,
                     clove_cancel *c)
{
    if (t == NULL || body == NULL)
        return EINVAL;
    if (c == NULL) {
        clove_for(t, begin, end, body, ctx);
        return 0;
    }
    if (begin < end) {
        /* Chunks even on one thread, so that the check happens between
         * them; no eager splits there (nobody to hand them to). */
        struct for_loop loop = {body, NULL, NULL, NULL, 0, ctx, chunk_target_ns(t->pool),
                                t->pool->nworkers > 0, c};
        for_range(t, &loop, begin, end, 1, NULL, true);
    }
    /* Every part this loop forked has been joined, so a request made in
     * any body happens-before this load. */
    return clove_cancelled(c) ? ECANCELED : 0;
}

int clove_reduce(clove_task *t, size_t begin, size_t end, void *acc, size_t acc_size,
                 clove_init_fn *init, clove_reduce_fn *body, clove_combine_fn *combine,
                 void *ctx)
{
    if (t == NULL || acc == NULL || acc_size == 0 || init == NULL || body == NULL ||
        combine == NULL)
        return EINVAL;
    if (begin >= end)
        return 0;
    if (t->pool->nworkers == 0) {
        body(t, begin, end, acc, ctx);
        return 0;
    }
    struct for_loop loop = {NULL, body, init, combine, acc_size, ctx, chunk_target_ns(t->pool),
                            acc_size <= SMALL_ACC, NULL};
    for_range(t, &loop, begin, end, 1, acc, true);
    return 0;
}
