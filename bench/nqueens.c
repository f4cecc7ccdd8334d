/* SPDX-License-Identifier: MIT */
/*
 * nqueens.c - count the ways to place n non-attacking queens on an n x n
 * board, with a fork at every branch.
 *
 * Row by row, with bitmasks for the occupied columns and diagonals
 * (rec_nq_seq in rec.h). The time is given per search node: every valid
 * partial placement, the empty board included, i.e. per call of the
 * recursion. Every run's count is checked against the sequential run and,
 * for n <= 14, against the known counts (n = 12: 14200, 13: 73712,
 * 14: 365596).
 *
 *   baseline  the plain recursion
 *   clove     every valid placement in a row but the last is forked, the
 *             last one recursed into, then the forks are joined newest
 *             first: a fork at every branch, no cutoff
 *   omp, tbb  (--peers) a task / task_group run at every valid placement
 *   omp_cutoff, tbb_cutoff  (--cutoff) rows >= the cutoff (--cutoff-at,
 *             default 4) run the plain recursion
 *
 * Usage: nqueens [-n N]... [-t THREADS]... [--baseline] [--peers] [--cutoff] ...
 */
#include "rec.h"

#include <stdio.h>
#include <stdlib.h>

#define NQ_MAX 20

struct nq_arg {
    uint32_t all, cols, d1, d2;
    uint64_t result;
};

static uint64_t nq_clove(clove_task *t, uint32_t all, uint32_t cols, uint32_t d1,
                         uint32_t d2);

static void nq_job(clove_task *t, void *p)
{
    struct nq_arg *a = p;
    a->result = nq_clove(t, a->all, a->cols, a->d1, a->d2);
}

static uint64_t nq_clove(clove_task *t, uint32_t all, uint32_t cols, uint32_t d1,
                         uint32_t d2)
{
    if (cols == all)
        return 1;
    uint32_t avail = all & ~(cols | d1 | d2);
    if (!avail)
        return 0;
    clove_future f[NQ_MAX];
    struct nq_arg a[NQ_MAX];
    unsigned k = 0;
    for (;;) {
        uint32_t bit = avail & (0u - avail);
        avail ^= bit;
        uint32_t c = cols | bit, l = ((d1 | bit) << 1) & all, r = (d2 | bit) >> 1;
        if (!avail) { /* the last branch: here */
            uint64_t s = nq_clove(t, all, c, l, r);
            while (k--) {
                if (!clove_join(t, &f[k]))
                    a[k].result = nq_clove(t, all, a[k].cols, a[k].d1, a[k].d2);
                s += a[k].result;
            }
            return s;
        }
        a[k] = (struct nq_arg){ all, c, l, r, 0 };
        clove_fork(t, &f[k], nq_job, &a[k]);
        k++;
    }
}

static uint32_t all_of(uint64_t n)
{
    return (uint32_t)((1ull << n) - 1);
}

__attribute__((noinline)) static rec_result run_baseline(uint64_t n)
{
    return (rec_result){ rec_nq_seq(all_of(n), 0, 0, 0), 0 };
}

__attribute__((noinline)) static rec_result run_clove(clove_pool *pool, uint64_t n)
{
    struct nq_arg a = { all_of(n), 0, 0, 0, 0 };
    if (clove_pool_run(pool, nq_job, &a) != 0) {
        fputs("nqueens: clove_pool_run failed\n", stderr);
        exit(2);
    }
    return (rec_result){ a.result, 0 };
}

/* Search nodes (calls of the recursion), untimed. */
static uint64_t nodes(uint32_t all, uint32_t cols, uint32_t d1, uint32_t d2)
{
    uint64_t s = 1;
    uint32_t avail = all & ~(cols | d1 | d2);
    if (cols == all)
        return 1;
    while (avail) {
        uint32_t bit = avail & (0u - avail);
        avail ^= bit;
        s += nodes(all, cols | bit, ((d1 | bit) << 1) & all, (d2 | bit) >> 1);
    }
    return s;
}

static void prepare(uint64_t n, rec_result *expect, double *units)
{
    static const uint64_t known[] = { 1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724,
                                      2680, 14200, 73712, 365596 };
    *expect = run_baseline(n);
    if (n < sizeof known / sizeof known[0] && expect->value != known[n]) {
        fprintf(stderr, "nqueens: WRONG RESULT: n=%llu sequential %llu, known %llu\n",
                (unsigned long long)n, (unsigned long long)expect->value,
                (unsigned long long)known[n]);
        abort();
    }
    *units = (double)nodes(all_of(n), 0, 0, 0);
}

int main(int argc, char **argv)
{
    static const rec_workload w = {
        .name = "nqueens",
        .title = "n-queens solutions by bitmask search, a fork at every valid"
                 " placement (no cutoff)",
        .unit = "node",
        .default_n = 14,
        .quick_n = 8,
        .min_n = 1,
        .max_n = NQ_MAX,
        .default_cutoff = 4,
        .stack_size = 0,
        .prepare = prepare,
        .baseline = run_baseline,
        .clove = run_clove,
#ifdef CLOVE_BENCH_OPENMP
        .omp = omp_rec_nqueens,
#endif
#ifdef CLOVE_BENCH_TBB
        .tbb = tbb_rec_nqueens,
#endif
    };
    return rec_main(&w, argc, argv);
}
