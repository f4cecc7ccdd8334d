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
 * --shape loop (workload "uts-loop"): the shape of Lace's and Cilk's UTS.
 * A node forks every child in a loop (clove_fork_value, the child's id as
 * the argument; the job returns its subtree's node count and height
 * packed in one int64_t), then joins them newest first, running each child
 * nobody took; the root does the same over its b0 children. The baseline
 * is the same code without the forks and joins. The peers fork every
 * child the same way (omp task / task_group::run per child), then wait
 * for all. --shape halves (the default) is the shape above.
 *
 * The tree reaches depths of several thousand: clove and oneTBB workers get
 * 64 MiB stacks, and OMP_STACKSIZE is set to that (by starting again) unless
 * it is set already.
 *
 * Usage: uts [--shape halves|loop] [-n B0]... [-t THREADS]... [--baseline]
 *            [--peers] [--cutoff] ...
 */
#define _GNU_SOURCE /* setenv */
#include "rec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- --shape loop ------------------------------------------------------- */

_Static_assert(sizeof(void *) >= sizeof(uint64_t), "uts-loop passes a node id as a job argument");

static int64_t uts_node(clove_task *t, uint64_t id);

static int64_t uts_node_job(clove_task *t, void *id)
{
    return uts_node(t, (uint64_t)(uintptr_t)id);
}

/* Adds a child's packed result r (REC_UTS_PACK) to the node count *nodes
 * and the greatest height *h. */
static inline void uts_add(int64_t r, int64_t *nodes, int64_t *h)
{
    *nodes += r & REC_UTS_NODES_MASK;
    if (r >> REC_UTS_HEIGHT_SHIFT > *h)
        *h = r >> REC_UTS_HEIGHT_SHIFT;
}

/* The subtree of node id, packed: REC_UTS_PACK(height, nodes). A node has
 * REC_UTS_M children or none: the loops have a constant count, unrolled
 * (so that the futures and ids stay in registers, as a hand-written
 * fan-out of four would keep them). */
static int64_t uts_node(clove_task *t, uint64_t id)
{
    if (!rec_uts_nchildren(id))
        return REC_UTS_PACK(0, 1);
    clove_future f[REC_UTS_M];
    uint64_t c[REC_UTS_M];
#pragma GCC unroll 4
    for (unsigned i = 0; i < REC_UTS_M; i++) {
        c[i] = rec_uts_child(id, i);
        clove_fork_value(t, &f[i], uts_node_job, (void *)(uintptr_t)c[i]);
    }
    int64_t nodes = 1, h = 0;
#pragma GCC unroll 4
    for (unsigned i = REC_UTS_M; i-- > 0;) {
        int64_t r;
        if (!clove_join_value(t, &f[i], &r))
            r = uts_node(t, c[i]);
        uts_add(r, &nodes, &h);
    }
    return REC_UTS_PACK(h + 1, nodes);
}

/* The sequential elision of uts_node: the same code without the forks
 * and joins (uts-loop's baseline). Not inlined into itself, as uts_node
 * is not (gcc would otherwise inline the four unrolled calls recursively,
 * for minutes and gigabytes). */
__attribute__((noinline)) static int64_t uts_node_seq(uint64_t id)
{
    if (!rec_uts_nchildren(id))
        return REC_UTS_PACK(0, 1);
    uint64_t c[REC_UTS_M];
#pragma GCC unroll 4
    for (unsigned i = 0; i < REC_UTS_M; i++)
        c[i] = rec_uts_child(id, i);
    int64_t nodes = 1, h = 0;
#pragma GCC unroll 4
    for (unsigned i = REC_UTS_M; i-- > 0;)
        uts_add(uts_node_seq(c[i]), &nodes, &h);
    return REC_UTS_PACK(h + 1, nodes);
}

__attribute__((noinline)) static rec_result run_baseline_loop(uint64_t n)
{
    uint64_t root = rec_uts_root();
    int64_t nodes = 1, h = 0;
    for (uint64_t i = n; i-- > 0;)
        uts_add(uts_node_seq(rec_uts_child(root, (unsigned)i)), &nodes, &h);
    return (rec_result){ (uint64_t)nodes, (uint64_t)(n ? h + 1 : 0) };
}

static void uts_loop_root_job(clove_task *t, void *p)
{
    struct root_arg *a = p;
    uint64_t root = rec_uts_root(), b0 = a->b0;
    clove_future *f = malloc(b0 * sizeof *f);
    if (f == NULL) {
        fputs("uts: out of memory\n", stderr);
        exit(2);
    }
    for (uint64_t i = 0; i < b0; i++)
        clove_fork_value(t, &f[i], uts_node_job, (void *)(uintptr_t)rec_uts_child(root, (unsigned)i));
    int64_t nodes = 1, h = 0;
    for (uint64_t i = b0; i-- > 0;) {
        int64_t r;
        if (!clove_join_value(t, &f[i], &r))
            r = uts_node(t, rec_uts_child(root, (unsigned)i));
        uts_add(r, &nodes, &h);
    }
    free(f);
    a->r = (rec_result){ (uint64_t)nodes, (uint64_t)(b0 ? h + 1 : 0) };
}

__attribute__((noinline)) static rec_result run_clove_loop(clove_pool *pool, uint64_t n)
{
    struct root_arg a = { n, { 0, 0 } };
    if (clove_pool_run(pool, uts_loop_root_job, &a) != 0) {
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
    /* --shape: taken out of argv here, the rest is the harness's. It is
     * also kept in the environment, for the harness's restart with
     * OMP_STACKSIZE set (which gets the argv without it). */
    const char *env = getenv("CLOVE_BENCH_UTS_SHAPE");
    bool loop = env != NULL && !strcmp(env, "loop");
    int out = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "loop") && strcmp(argv[i], "halves")) {
                fprintf(stderr, "uts: --shape is halves or loop\n");
                return 2;
            }
            loop = !strcmp(argv[i], "loop");
            if (setenv("CLOVE_BENCH_UTS_SHAPE", argv[i], 1) != 0)
                return 2;
            continue;
        }
        argv[out++] = argv[i];
    }
    argv[out] = NULL;
    argc = out;
    static rec_workload w = {
        .name = "uts",
        .title = "binomial unbalanced tree (root b0 = n children, then 4 children"
                 " with q = 0.2499), a fork per child (no cutoff); result ="
                 " nodes, aux = max depth",
        .unit = "node",
        .options = "  --shape S     halves (default): a node's children are a range split in\n"
                   "                halves, the upper half forked; loop: every child\n"
                   "                forked in a loop, joined newest first (workload uts-loop)\n",
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
    if (loop) {
        w.name = "uts-loop";
        w.title = "binomial unbalanced tree (root b0 = n children, then 4 children"
                  " with q = 0.2499), every child forked in a loop (clove_fork_value),"
                  " joined newest first (no cutoff); result = nodes, aux = max depth";
        /* The root's b0 forks are unjoined at once: within the job stack
         * (stack_size / 32 records). */
        w.max_n = 1000000;
        w.baseline = run_baseline_loop;
        w.clove = run_clove_loop;
#ifdef CLOVE_BENCH_OPENMP
        w.omp = omp_rec_uts_loop;
#endif
#ifdef CLOVE_BENCH_TBB
        w.tbb = tbb_rec_uts_loop;
#endif
    }
    return rec_main(&w, argc, argv);
}
