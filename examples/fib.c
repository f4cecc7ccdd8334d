/* SPDX-License-Identifier: MIT */
/*
 * fib.c - naive recursive Fibonacci as a typed task (CLOVE_TASK).
 *
 * Every call forks, all the way down to fib(1): there is no cutoff and no
 * grain size. A fork that nobody takes costs about as much as a function
 * call, so this is only a little slower than the sequential recursion on
 * one thread, and it spreads over idle workers when they exist. The result
 * is checked against an iterative loop.
 *
 * usage: fib [n [threads]]   (n <= 93; threads 0 = one per CPU)
 */
#include <clove.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t fib(clove_task *t, unsigned n);
CLOVE_TASK(uint64_t, fib, unsigned); /* fib can be forked */

static uint64_t fib(clove_task *t, unsigned n)
{
    if (n < 2)
        return n;
    CLOVE_FORK(t, fib, b, n - 2); /* offer fib(n-2) to other workers */
    uint64_t a = fib(t, n - 1);   /* compute fib(n-1) here */
    return a + CLOVE_JOIN(t, b);  /* fib(n-2): from the worker that ran it,
                                   * or computed here now if nobody did */
}

static uint64_t fib_iter(unsigned n)
{
    uint64_t a = 0, b = 1;
    for (unsigned i = 0; i < n; i++) {
        uint64_t next = a + b;
        a = b;
        b = next;
    }
    return a;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 32;
    unsigned threads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    if (n > 93) /* fib(94) does not fit in 64 bits */
        return fprintf(stderr, "fib: n must be at most 93\n"), 2;

    clove_pool *pool;
    clove_config cfg = {.threads = threads};
    int rc = clove_pool_create(&pool, &cfg);
    if (rc != 0)
        return fprintf(stderr, "clove_pool_create: error %d\n", rc), 2;

    /* clove_pool_run, through CLOVE_POOL_RUN: this thread becomes a worker
     * and computes fib(n) into r. */
    uint64_t r = 0;
    CLOVE_POOL_RUN(pool, fib, &r, n);

    uint64_t want = fib_iter(n);
    printf("fib(%u) = %" PRIu64 " on %u threads (%s)\n", n, r, clove_pool_threads(pool),
           r == want ? "ok" : "WRONG");
    clove_pool_destroy(pool);
    return r == want ? 0 : 1;
}
