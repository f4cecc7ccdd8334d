/*
 * for.c - clove_for: a parallel loop without a grain size.
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
 * Splitting halves the range, so the recursion is at most 64 levels deep
 * per loop, whatever the range.
 */
#include "internal.h"

#include <time.h>

struct for_loop {
    clove_range_fn *body;
    void *ctx;
    uint64_t target_ns; /* wanted duration of one chunk */
};

struct for_part {
    const struct for_loop *loop;
    size_t lo, hi;
    size_t chunk;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void for_range(clove_task *t, const struct for_loop *loop, size_t lo,
                      size_t hi, size_t chunk);

static void for_part_fn(clove_task *t, void *arg)
{
    struct for_part *part = arg;
    for_range(t, part->loop, part->lo, part->hi, part->chunk);
}

static void for_range(clove_task *t, const struct for_loop *loop, size_t lo,
                      size_t hi, size_t chunk)
{
    uint64_t t0 = now_ns();
    while (lo < hi) {
        if (atomic_load_explicit(&t->heartbeat, memory_order_relaxed) &&
            hi - lo >= 2) {
            struct for_part upper = {loop, lo + (hi - lo) / 2, hi, chunk};
            clove_future f;
            clove_fork(t, &f, for_part_fn, &upper);
            for_range(t, loop, lo, upper.lo, chunk);
            if (!clove_join(t, &f))
                for_range(t, loop, upper.lo, hi, chunk);
            return;
        }
        size_t n = hi - lo < chunk ? hi - lo : chunk;
        loop->body(t, lo, lo + n, loop->ctx);
        lo += n;
        uint64_t t1 = now_ns();
        uint64_t dt = t1 - t0;
        t0 = t1;
        if (dt < loop->target_ns / 2 && n == chunk && chunk <= SIZE_MAX / 2)
            chunk *= 2;
        else if (dt > loop->target_ns && chunk > 1)
            chunk /= 2;
    }
}

void clove_for(clove_task *t, size_t begin, size_t end, clove_range_fn *body, void *ctx)
{
    if (begin >= end)
        return;
    if (t->pool->nworkers == 0) {
        body(t, begin, end, ctx);
        return;
    }
    struct for_loop loop = {body, ctx, (uint64_t)t->pool->heartbeat_us * 1000u / 8};
    for_range(t, &loop, begin, end, 1);
}
