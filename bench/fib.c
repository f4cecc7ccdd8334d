/* SPDX-License-Identifier: MIT */
/*
 * fib.c - naive recursive Fibonacci with a fork at every call.
 *
 * fib(n) = fib(n-1) + fib(n-2), fib(0) = 0, fib(1) = 1, computed with
 * 2 fib(n+1) - 1 calls; the time is given per call. The work per call is an
 * add: this measures nothing but the cost of a fork point.
 *
 *   baseline  the plain recursion (gcc -O3 unrolls and inlines it several
 *             levels deep, which no forking version can do)
 *   clove     clove_fork_value(fib(n-2)), fib(n-1) in place,
 *             clove_join_value at every call with n >= 2: no cutoff
 *   typed     (--impl typed) the same as a typed task: CLOVE_TASK,
 *             CLOVE_FORK, CLOVE_JOIN
 *   omp, tbb  (--peers) an OpenMP task / oneTBB task_group run for fib(n-2)
 *             at every call with n >= 2: no cutoff either
 *   omp_cutoff, tbb_cutoff  (--cutoff) the same, but calls with n below the
 *             cutoff (--cutoff-at, default 20) run the plain recursion
 *
 * Usage: fib [-n N]... [-t THREADS]... [--baseline] [--peers] [--cutoff] ...
 *        (fib --help for all options; they are tree_sum's)
 */
#include "rec.h"

#include <stdio.h>
#include <stdlib.h>

struct fib_arg {
    unsigned n;
    uint64_t result;
};

static uint64_t fib_clove(clove_task *t, unsigned n);

/* The forked job returns its result (clove_fork_value): n travels in the
 * argument pointer itself, so nothing in the forking frame is in memory. */
static int64_t fib_value_job(clove_task *t, void *n)
{
    return (int64_t)fib_clove(t, (unsigned)(uintptr_t)n);
}

static void fib_job(clove_task *t, void *p)
{
    struct fib_arg *a = p;
    a->result = fib_clove(t, a->n);
}

static uint64_t fib_clove(clove_task *t, unsigned n)
{
    if (n < 2)
        return n;
    clove_future f;
    int64_t b;
    clove_fork_value(t, &f, fib_value_job, (void *)(uintptr_t)(n - 2));
    uint64_t a = fib_clove(t, n - 1);
    if (!clove_join_value(t, &f, &b))
        b = (int64_t)fib_clove(t, n - 2);
    return a + (uint64_t)b;
}

/* The same as a typed task. */
static uint64_t fib_typed(clove_task *t, unsigned n);
CLOVE_TASK(uint64_t, fib_typed, unsigned);

static uint64_t fib_typed(clove_task *t, unsigned n)
{
    if (n < 2)
        return n;
    CLOVE_FORK(t, fib_typed, b, n - 2);
    uint64_t a = fib_typed(t, n - 1);
    return a + CLOVE_JOIN(t, b);
}

/* Timed entry points are noinline (as in tree_sum, for callgrind). */
__attribute__((noinline)) static rec_result run_baseline(uint64_t n)
{
    return (rec_result){ rec_fib_seq((unsigned)n), 0 };
}

__attribute__((noinline)) static rec_result run_clove(clove_pool *pool, uint64_t n)
{
    struct fib_arg a = { (unsigned)n, 0 };
    if (clove_pool_run(pool, fib_job, &a) != 0) {
        fputs("fib: clove_pool_run failed\n", stderr);
        exit(2);
    }
    return (rec_result){ a.result, 0 };
}

__attribute__((noinline)) static rec_result run_typed(clove_pool *pool, uint64_t n)
{
    uint64_t r = 0;
    if (CLOVE_POOL_RUN(pool, fib_typed, &r, (unsigned)n) != 0) {
        fputs("fib: clove_pool_run failed\n", stderr);
        exit(2);
    }
    return (rec_result){ r, 0 };
}

static void prepare(uint64_t n, rec_result *expect, double *units)
{
    *expect = run_baseline(n);
    /* calls = 2 fib(n+1) - 1; fib(n+1) = fib(n) + fib(n-1) */
    uint64_t a = 0, b = 1; /* fib(0), fib(1) */
    for (uint64_t i = 0; i < n; i++) {
        uint64_t c = a + b;
        a = b;
        b = c;
    }
    if (a != expect->value) { /* the closed loop agrees with the recursion */
        fprintf(stderr, "fib: WRONG RESULT: fib(%llu) = %llu by iteration\n",
                (unsigned long long)n, (unsigned long long)a);
        abort();
    }
    *units = 2.0 * (double)b - 1;
}

int main(int argc, char **argv)
{
    static const rec_workload w = {
        .name = "fib",
        .title = "naive recursive Fibonacci, a fork at every call (no cutoff)",
        .unit = "call",
        .default_n = 40,
        .quick_n = 20,
        .min_n = 2,
        .max_n = 50,
        .default_cutoff = 20,
        .stack_size = 0,
        .prepare = prepare,
        .baseline = run_baseline,
        .clove = run_clove,
        .clove_typed = run_typed,
#ifdef CLOVE_BENCH_OPENMP
        .omp = omp_rec_fib,
#endif
#ifdef CLOVE_BENCH_TBB
        .tbb = tbb_rec_fib,
#endif
    };
    return rec_main(&w, argc, argv);
}
