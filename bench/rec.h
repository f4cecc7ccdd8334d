/* SPDX-License-Identifier: MIT */
/*
 * rec.h - the recursive benchmarks fib, uts and nqueens (bench/fib.c,
 * bench/uts.c, bench/nqueens.c): their sequential kernels, the entry points
 * of the optional peer runtimes (bench/peers/omp_rec.c, tbb_rec.cpp), and the
 * measurement harness they share (bench/rec_harness.c). Shared by C and C++.
 *
 * The kernels are static inline here so that the baseline, the peers'
 * cutoff variants and the result check all run the very same code.
 */
#ifndef CLOVE_BENCH_REC_H
#define CLOVE_BENCH_REC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What one run returns; every run's result is compared with the sequential
 * one. fib: value = fib(n). uts: value = nodes, aux = max depth. nqueens:
 * value = solutions. */
typedef struct rec_result {
    uint64_t value, aux;
} rec_result;

/* ------------------------------------------------------------------------ */
/* fib                                                                      */
/* ------------------------------------------------------------------------ */

static inline uint64_t rec_fib_seq(unsigned n)
{
    return n < 2 ? n : rec_fib_seq(n - 1) + rec_fib_seq(n - 2);
}

/* ------------------------------------------------------------------------ */
/* uts: binomial unbalanced tree, generated from a hash of the parent id    */
/* ------------------------------------------------------------------------ */

/* The root has n children (n = the -n option, "b0"); every other node has
 * REC_UTS_M children with probability REC_UTS_Q, else none. q * m = 0.9996:
 * the expected subtree below one root child has 1 / (1 - q m) = 2500 nodes,
 * but its size is extremely variable (a near-critical Galton-Watson tree).
 * Child i of a node with id p has the id mix(p + (i + 1) * golden); a node
 * has children iff its id < q * 2^64. The root's id is mix(REC_UTS_SEED).
 * Child i of the root does not depend on n, so the tree for a larger n
 * contains the one for a smaller n. With seed 3: n = 100 gives 11,685 nodes
 * (max depth 157), 1000: 1,526,617 (2165), 10,000: 9,181,309 (2353),
 * 100,000 (the default): 149,207,185 nodes (4751). */
#define REC_UTS_M 4u
#define REC_UTS_Q 0.2499
#define REC_UTS_SEED 3u
#define REC_UTS_GOLDEN 0x9E3779B97F4A7C15ull
/* q * 2^64, rounded: 0.2499 * 18446744073709551616 */
#define REC_UTS_THRESHOLD ((uint64_t)(REC_UTS_Q * 18446744073709551616.0))

static inline uint64_t rec_uts_mix(uint64_t z) /* splitmix64's finalizer */
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t rec_uts_child(uint64_t parent, unsigned i)
{
    return rec_uts_mix(parent + (uint64_t)(i + 1) * REC_UTS_GOLDEN);
}

static inline unsigned rec_uts_nchildren(uint64_t id)
{
    return id < REC_UTS_THRESHOLD ? REC_UTS_M : 0u;
}

static inline uint64_t rec_uts_root(void)
{
    return rec_uts_mix(REC_UTS_SEED);
}

/* Sequential: the subtree of node id at depth `depth`; adds its nodes to
 * r->value and raises r->aux to its deepest depth. */
static inline void rec_uts_seq(uint64_t id, uint32_t depth, rec_result *r)
{
    r->value++;
    if (depth > r->aux)
        r->aux = depth;
    unsigned k = rec_uts_nchildren(id);
    for (unsigned i = 0; i < k; i++)
        rec_uts_seq(rec_uts_child(id, i), depth + 1, r);
}

/* uts-loop's jobs return a subtree's node count and height (a leaf's is
 * 0) in one int64_t: the height of the whole tree is its max depth. */
#define REC_UTS_HEIGHT_SHIFT 40
#define REC_UTS_NODES_MASK ((INT64_C(1) << REC_UTS_HEIGHT_SHIFT) - 1)
#define REC_UTS_PACK(h, nodes) ((int64_t)(h) << REC_UTS_HEIGHT_SHIFT | (int64_t)(nodes))

/* The whole tree for root fan-out b0: the root is at depth 0. */
static inline rec_result rec_uts_seq_tree(uint64_t b0)
{
    rec_result r = { 1, 0 };
    uint64_t root = rec_uts_root();
    for (uint64_t i = 0; i < b0; i++)
        rec_uts_seq(rec_uts_child(root, (unsigned)i), 1, &r);
    return r;
}

/* ------------------------------------------------------------------------ */
/* nqueens: bitmask search                                                  */
/* ------------------------------------------------------------------------ */

/* Solutions below a partial placement: cols = occupied columns, d1 / d2 =
 * squares of the next row attacked along the two diagonals, all = n ones. */
static inline uint64_t rec_nq_seq(uint32_t all, uint32_t cols, uint32_t d1, uint32_t d2)
{
    if (cols == all)
        return 1;
    uint64_t s = 0;
    uint32_t avail = all & ~(cols | d1 | d2);
    while (avail) {
        uint32_t bit = avail & (0u - avail);
        avail ^= bit;
        s += rec_nq_seq(all, cols | bit, ((d1 | bit) << 1) & all, (d2 | bit) >> 1);
    }
    return s;
}

/* ------------------------------------------------------------------------ */
/* Peers (optional). cutoff 0: a task at every fork point, the headline.    */
/* cutoff c > 0 (the *_cutoff rows): fib forks only while n >= c; uts and   */
/* nqueens only at depth < c (below, the sequential kernel above).           */
/* ------------------------------------------------------------------------ */

/* bench/peers/omp_rec.c: one parallel region of `threads` threads per run,
 * one `single` thread starts the recursion, `omp task` + `taskwait`.
 * (The team and arena set-up is in peers/peer.h.) */
rec_result omp_rec_fib(uint64_t n, unsigned threads, unsigned cutoff);
rec_result omp_rec_uts(uint64_t n, unsigned threads, unsigned cutoff);
rec_result omp_rec_uts_loop(uint64_t n, unsigned threads, unsigned cutoff);
rec_result omp_rec_nqueens(uint64_t n, unsigned threads, unsigned cutoff);

/* bench/peers/tbb_rec.cpp: one arena.execute per run (arenas from
 * tbb_peer_create, worker stacks from tbb_peer_stack: uts is deep), a
 * tbb::task_group at every fork point. Entry points return
 * {UINT64_MAX, UINT64_MAX} on an exception (the caller's check then fails). */
rec_result tbb_rec_fib(void *arena, uint64_t n, unsigned cutoff);
rec_result tbb_rec_uts(void *arena, uint64_t n, unsigned cutoff);
rec_result tbb_rec_uts_loop(void *arena, uint64_t n, unsigned cutoff);
rec_result tbb_rec_nqueens(void *arena, uint64_t n, unsigned cutoff);

#ifndef __cplusplus
#include <clove.h>
#include <stdbool.h>
#include <stddef.h>

/* ------------------------------------------------------------------------ */
/* Harness (bench/rec_harness.c, C only)                                    */
/* ------------------------------------------------------------------------ */

typedef struct rec_workload {
    const char *name;      /* "fib": program name, CSV workload column */
    const char *title;     /* one-line description for the output header */
    const char *unit;      /* what the time is divided by: "call", "node" */
    const char *options;   /* the workload's own options for --help: lines
                            * ending in "\n", or NULL */
    uint64_t default_n, quick_n, min_n, max_n;
    unsigned default_cutoff; /* for the omp_cutoff / tbb_cutoff rows */
    size_t stack_size;     /* clove / TBB worker stacks (0: default); when
                            * nonzero and OpenMP runs, OMP_STACKSIZE is set
                            * to it (re-exec) unless the user set it */
    /* Untimed, once per size: the expected result (sequential) and the
     * work units (calls, nodes) the time is divided by. Exits on a bad n. */
    void (*prepare)(uint64_t n, rec_result *expect, double *units);
    rec_result (*baseline)(uint64_t n);
    rec_result (*clove)(clove_pool *pool, uint64_t n);
    /* The same written as a typed task (CLOVE_TASK); NULL: none. */
    rec_result (*clove_typed)(clove_pool *pool, uint64_t n);
    rec_result (*omp)(uint64_t n, unsigned threads, unsigned cutoff);
    rec_result (*tbb)(void *arena, uint64_t n, unsigned cutoff);
} rec_workload;

int rec_main(const rec_workload *w, int argc, char **argv);
#endif

#ifdef __cplusplus
}
#endif

#endif
