/* SPDX-License-Identifier: MIT */
/*
 * parallel_sum.c - sum an array with clove_for.
 *
 * The body receives a range [lo, hi) and sums it with a plain loop (which
 * the compiler may vectorise), then adds the partial sum to a shared
 * atomic total: one atomic add per range, not per element. There is no
 * grain size; clove_for picks chunk sizes itself and splits the remaining
 * range when a heartbeat finds an idle worker.
 *
 * The values a[i] = 3i + 1 are distinct, so a lost or repeated range would
 * change the sum; the body also counts how often it saw each index.
 *
 * usage: parallel_sum [n [threads]]   (threads 0 = one per CPU)
 */
#include <clove.h>

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct sum_ctx {
    const uint64_t *a;
    unsigned char *seen;     /* seen[i]: how many times index i was summed */
    _Atomic uint64_t total;  /* sum of all partial sums */
    _Atomic uint64_t ranges; /* how many times body was called */
};

static void body(clove_task *t, size_t lo, size_t hi, void *p)
{
    (void)t;
    struct sum_ctx *c = p;
    uint64_t s = 0;
    for (size_t i = lo; i < hi; i++)
        s += c->a[i];
    for (size_t i = lo; i < hi; i++) /* ranges are disjoint: no race here */
        c->seen[i]++;
    /* Relaxed is enough: clove_for returns only after every body call has
     * finished, and that return happens-after all of their writes. */
    atomic_fetch_add_explicit(&c->total, s, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->ranges, 1, memory_order_relaxed);
}

struct run_arg {
    struct sum_ctx *ctx;
    size_t n;
};

static void run(clove_task *t, void *p)
{
    struct run_arg *r = p;
    clove_for(t, 0, r->n, body, r->ctx);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    unsigned threads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    uint64_t *a = malloc((n ? n : 1) * sizeof *a);
    unsigned char *seen = calloc(n ? n : 1, 1);
    if (a == NULL || seen == NULL)
        return fprintf(stderr, "parallel_sum: out of memory\n"), 2;
    for (size_t i = 0; i < n; i++)
        a[i] = 3 * (uint64_t)i + 1;

    struct sum_ctx ctx = {.a = a, .seen = seen};
    atomic_init(&ctx.total, 0);
    atomic_init(&ctx.ranges, 0);
    struct run_arg r = {&ctx, n};

    clove_pool *pool;
    clove_config cfg = {.threads = threads};
    int rc = clove_pool_create(&pool, &cfg);
    if (rc != 0)
        return fprintf(stderr, "clove_pool_create: error %d\n", rc), 2;
    clove_pool_run(pool, run, &r);

    /* sum of 3i + 1 for i in [0, n) = 3 n (n - 1) / 2 + n */
    uint64_t want = 3 * ((uint64_t)n * (n ? n - 1 : 0) / 2) + n;
    uint64_t got = atomic_load(&ctx.total);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += seen[i] != 1;
    int ok = got == want && bad == 0;
    printf("parallel_sum: n = %zu, %u threads, %" PRIu64 " body calls: %" PRIu64
           " (%s)\n", n, clove_pool_threads(pool), atomic_load(&ctx.ranges), got,
           ok ? "ok" : "WRONG");
    if (bad)
        printf("  %zu indices were not summed exactly once\n", bad);
    clove_pool_destroy(pool);
    free(a);
    free(seen);
    return ok ? 0 : 1;
}
