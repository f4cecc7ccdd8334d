/* SPDX-License-Identifier: MIT */
/*
 * reduce_det.c - clove_reduce_deterministic: a reduction whose result
 * depends on the range and the grain only, never on the thread count or
 * the timing.
 *
 * clove_reduce splits where heartbeats happen to fall, so the expression
 * it evaluates (which pieces are folded from a fresh accumulator and
 * combined) changes from run to run; with a floating-point sum the result
 * does too. Here the expression is fixed in advance: [begin, end) is cut
 * into blocks of `grain` iterations (the last one shorter), the blocks are
 * the leaves of a binary tree obtained by halving the list of blocks
 * (the lower half gets the smaller part), and each internal node combines
 * its halves, left then right:
 *
 *     R(acc, blocks [b0, b1)):
 *         one block:  body(t, lo, hi, acc, ctx)
 *         else:       R(acc, [b0, m));  u = init();  R(u, [m, b1));
 *                     combine(acc, u)                 m = b0 + (b1 - b0) / 2
 *
 * Whether the upper half u ran on another worker or here changes nothing
 * in that expression: u is always a fresh accumulator, init-ed, and always
 * combined. The scheduling is clove's as everywhere: the upper half is an
 * ordinary fork, shared at a heartbeat if some worker is idle; and after
 * the first block, if a worker is idle and the rest looks like more than
 * an interval of work, the task answers as if a beat had come (as
 * clove_for does after its first chunk), which changes where blocks run,
 * never the expression.
 *
 * Accumulators. Up to 64 bytes they live in the splitting frame, and the
 * call allocates nothing. Larger ones come from one array allocated before
 * anything runs, one slot per internal node: each split point m (1 .. the
 * number of blocks - 1) is the split point of exactly one node, so slot m
 * - 1 is that node's upper accumulator whichever worker runs it. An
 * allocation failure is ENOMEM before any call, never a different
 * expression.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

/* The default grain: blocks of at least this many iterations ... */
#define DET_MIN_GRAIN 2048u
/* ... and at most this many blocks. */
#define DET_MAX_BLOCKS 4096u
/* Accumulators up to this size live in the frame. */
#define DET_SMALL_ACC 64

union det_small {
    max_align_t align;
    unsigned char bytes[DET_SMALL_ACC];
};

struct det_loop {
    clove_reduce_fn *body;
    clove_init_fn *init;
    clove_combine_fn *combine;
    size_t acc_size;
    void *ctx;
    size_t begin, end, grain;
    size_t nblocks;
    unsigned char *slots; /* NULL when acc_size <= DET_SMALL_ACC */
    size_t stride;        /* bytes between slots: acc_size rounded up to
                           * max_align_t's alignment */
};

/* The upper half of a split: blocks [b0, b1) into the fresh acc. */
struct det_part {
    const struct det_loop *loop;
    size_t b0, b1;
    void *acc;
};

static void det_range(clove_task *t, const struct det_loop *loop, size_t b0, size_t b1,
                      void *acc);

static void det_part_fn(clove_task *t, void *arg)
{
    struct det_part *part = arg;
    part->loop->init(part->acc, part->loop->ctx);
    det_range(t, part->loop, part->b0, part->b1, part->acc);
}

static void det_range(clove_task *t, const struct det_loop *loop, size_t b0, size_t b1,
                      void *acc)
{
    if (b1 - b0 == 1) {
        size_t lo = loop->begin + b0 * loop->grain;
        size_t hi = loop->end - lo > loop->grain ? lo + loop->grain : loop->end;
        if (b0 != 0 || loop->nblocks < 2 || t->pool->nworkers == 0) {
            loop->body(t, lo, hi, acc, loop->ctx);
            return;
        }
        /* The first block: if workers are idle and the other blocks look
         * like more than a heartbeat interval of work at its pace, do not
         * wait for the heartbeat thread: answer as if a beat had come, so
         * that the next fork shares the oldest part at once (as clove_for
         * does after its first chunk). */
        uint64_t t0 = clove__now_ns();
        loop->body(t, lo, hi, acc, loop->ctx);
        uint64_t dt = clove__now_ns() - t0;
        if (atomic_load_explicit(&t->pool->idle_count, memory_order_relaxed) != 0 &&
            (double)dt * (double)(loop->nblocks - 1) > (double)t->pool->heartbeat_us * 1000.0)
            atomic_store_explicit(&t->heartbeat, CLOVE__HB_BEAT, memory_order_relaxed);
        return;
    }
    size_t m = b0 + (b1 - b0) / 2;
    union det_small small;
    struct det_part upper = {loop, m, b1,
                             loop->slots ? loop->slots + (m - 1) * loop->stride
                                         : (void *)&small};
    clove_future f;
    clove_fork(t, &f, det_part_fn, &upper);
    det_range(t, loop, b0, m, acc);
    if (!clove_join(t, &f))
        det_part_fn(t, &upper);
    loop->combine(acc, upper.acc, loop->ctx);
}

/* The grain that grain 0 stands for: a function of n alone. */
static size_t default_grain(size_t n)
{
    size_t g = n / DET_MAX_BLOCKS + (n % DET_MAX_BLOCKS != 0);
    return g < DET_MIN_GRAIN ? DET_MIN_GRAIN : g;
}

int clove_reduce_deterministic(clove_task *t, size_t begin, size_t end, size_t grain, void *acc,
                               size_t acc_size, clove_init_fn *init, clove_reduce_fn *body,
                               clove_combine_fn *combine, void *ctx)
{
    if (t == NULL || acc == NULL || acc_size == 0 || init == NULL || body == NULL ||
        combine == NULL)
        return EINVAL;
    if (begin >= end)
        return 0;
    size_t n = end - begin;
    if (grain == 0)
        grain = default_grain(n);
    size_t blocks = n / grain + (n % grain != 0);
    struct det_loop loop = {body, init, combine, acc_size, ctx, begin, end, grain, blocks,
                            NULL, 0};
    if (acc_size > DET_SMALL_ACC && blocks > 1) {
        size_t align = _Alignof(max_align_t);
        if (acc_size > SIZE_MAX - align)
            return ENOMEM;
        loop.stride = (acc_size + align - 1) / align * align;
        if (blocks - 1 > SIZE_MAX / loop.stride)
            return ENOMEM;
        /* malloc's memory is aligned for max_align_t, and so is every
         * slot. */
        loop.slots = clove__malloc((blocks - 1) * loop.stride);
        if (loop.slots == NULL)
            return ENOMEM;
    }
    det_range(t, &loop, 0, blocks, acc);
    free(loop.slots);
    return 0;
}
