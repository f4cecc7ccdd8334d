/* SPDX-License-Identifier: MIT */
/*
 * uts.c - unbalanced tree search: count the nodes (and the deepest depth)
 * of a random tree that is generated on the fly, never stored.
 *
 * A binomial tree (rec.h has the parameters): the root has b0 = n children
 * (-n), every other node has m = 4 children with probability q = 0.2499
 * (else none), decided by a hash (splitmix64's finalizer) of its id; a
 * child's id is a hash of its parent's id and its index. With q m = 0.9996
 * the tree is finite but its subtrees are wildly different in size and
 * depth, so no static split balances it. The time is given per node; the
 * work per node is one hash.
 *
 *   baseline  the plain recursion (rec_uts_seq in rec.h)
 *   clove     the children of a node are a range [0, m) that is split in
 *             halves, the upper half forked, the lower one recursed into
 *             (m - 1 forks per inner node; the root's b0 children the same
 *             way): no cutoff
 *   omp, tbb  (--peers) the same shape with OpenMP tasks / oneTBB task_group
 *   omp_cutoff, tbb_cutoff  (--cutoff) nodes at depth >= the cutoff
 *             (--cutoff-at, default 12) run the plain recursion
 *
 * The tree reaches depths of several thousand: clove and oneTBB workers get
 * 64 MiB stacks, and OMP_STACKSIZE is set to that (by starting again) unless
 * it is set already.
 *
 * Usage: uts [-n B0]... [-t THREADS]... [--baseline] [--peers] [--cutoff] ...
 */
#include "rec.h"

#include <stdio.h>
#include <stdlib.h>

struct uts_arg {
    uint64_t parent, lo, hi;
    uint32_t depth;
    rec_result r;
};

static void uts_range(clove_task *t, uint64_t parent, uint64_t lo, uint64_t hi,
                      uint32_t depth, rec_result *r);

static void uts_job(clove_task *t, void *p)
{
    struct uts_arg *a = p;
    uts_range(t, a->parent, a->lo, a->hi, a->depth, &a->r);
}

/* Children lo .. hi-1 of `parent`, each at `depth`: adds their subtrees. */
static void uts_range(clove_task *t, uint64_t parent, uint64_t lo, uint64_t hi,
                      uint32_t depth, rec_result *r)
{
    if (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        clove_future f;
        struct uts_arg b = { parent, mid, hi, depth, { 0, 0 } };
        clove_fork(t, &f, uts_job, &b);
        uts_range(t, parent, lo, mid, depth, r);
        if (!clove_join(t, &f)) {
            uts_range(t, parent, mid, hi, depth, r);
            return;
        }
        r->value += b.r.value;
        if (b.r.aux > r->aux)
            r->aux = b.r.aux;
        return;
    }
    if (hi == lo)
        return;
    uint64_t id = rec_uts_child(parent, (unsigned)lo);
    r->value++;
    if (depth > r->aux)
        r->aux = depth;
    unsigned k = rec_uts_nchildren(id);
    if (k)
        uts_range(t, id, 0, k, depth + 1, r);
}

struct root_arg {
    uint64_t b0;
    rec_result r;
};

static void uts_root_job(clove_task *t, void *p)
{
    struct root_arg *a = p;
    a->r = (rec_result){ 1, 0 };
    uts_range(t, rec_uts_root(), 0, a->b0, 1, &a->r);
}

__attribute__((noinline)) static rec_result run_baseline(uint64_t n)
{
    return rec_uts_seq_tree(n);
}

__attribute__((noinline)) static rec_result run_clove(clove_pool *pool, uint64_t n)
{
    struct root_arg a = { n, { 0, 0 } };
    if (clove_pool_run(pool, uts_root_job, &a) != 0) {
        fputs("uts: clove_pool_run failed\n", stderr);
        exit(2);
    }
    return a.r;
}

static void prepare(uint64_t n, rec_result *expect, double *units)
{
    *expect = run_baseline(n);
    *units = (double)expect->value;
}

int main(int argc, char **argv)
{
    static const rec_workload w = {
        .name = "uts",
        .title = "binomial unbalanced tree (root b0 = n children, then 4 children"
                 " with q = 0.2499), a fork per child (no cutoff); result ="
                 " nodes, aux = max depth",
        .unit = "node",
        .default_n = 100000,
        .quick_n = 100,
        .min_n = 1,
        .max_n = 100000000,
        .default_cutoff = 12,
        .stack_size = 64u << 20,
        .prepare = prepare,
        .baseline = run_baseline,
        .clove = run_clove,
#ifdef CLOVE_BENCH_OPENMP
        .omp = omp_rec_uts,
#endif
#ifdef CLOVE_BENCH_TBB
        .tbb = tbb_rec_uts,
#endif
    };
    return rec_main(&w, argc, argv);
}
