/* SPDX-License-Identifier: MIT */
/*
 * fib.c - naive recursive Fibonacci with clove_join2.
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

/* Argument and result of one call, kept in the caller's frame. */
struct fib_arg {
    unsigned n;
    uint64_t result;
};

static void fib_job(clove_task *t, void *p);

static uint64_t fib(clove_task *t, unsigned n)
{
    if (n < 2)
        return n;
    struct fib_arg a = {n - 1, 0}, b = {n - 2, 0};
    /* Runs fib(n-1) here and offers fib(n-2) to other workers; returns when
     * both are done, wherever they ran. */
    clove_join2(t, fib_job, &a, fib_job, &b);
    return a.result + b.result;
}

static void fib_job(clove_task *t, void *p)
{
    struct fib_arg *a = p;
    a->result = fib(t, a->n);
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

    /* clove_pool_run makes this thread a worker and calls fib_job on it. */
    struct fib_arg top = {n, 0};
    clove_pool_run(pool, fib_job, &top);

    uint64_t want = fib_iter(n);
    printf("fib(%u) = %" PRIu64 " on %u threads (%s)\n", n, top.result,
           clove_pool_threads(pool), top.result == want ? "ok" : "WRONG");
    clove_pool_destroy(pool);
    return top.result == want ? 0 : 1;
}
