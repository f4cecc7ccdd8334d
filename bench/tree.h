/* SPDX-License-Identifier: MIT */
/*
 * tree.h - the node of the tree-sum benchmark and the entry points of the
 * optional peer runtimes (bench/peers/), shared by C and C++.
 *
 * One malloc per node, 24 bytes: the layout every implementation walks.
 */
#ifndef CLOVE_BENCH_TREE_H
#define CLOVE_BENCH_TREE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct node {
    int64_t value;
    struct node *left, *right;
} node;

#ifdef __cplusplus
static_assert(sizeof(node) == 24, "node must be 24 bytes");
#else
_Static_assert(sizeof(node) == 24, "node must be 24 bytes");
#endif

#ifndef __cplusplus
#include <clove.h>

/* bench/tree.c (C only). tree_build: nodes for values lo..hi (inclusive),
 * the middle one at the root, one malloc each in pre-order (the node before
 * its subtrees); exits on out-of-memory. */
node *tree_build(int64_t lo, int64_t hi);
void tree_destroy(node *n);
/* bench/tree_forms.c (C only): clove's sum with a fork at every node with
 * two children, in each form of fork. Each job is a clove_fn computing
 * a->result = the sum of a->n's subtree, for clove_fork and clove_pool_run
 * alike: tree_sum_job with clove_fork_value/clove_join_value (the job that
 * returns its result), tree_sum_args_job with clove_fork/clove_join and an
 * argument block (tree_sum_args_in_job: the fallback call inside the
 * block), tree_sum_join2_job with clove_join2. The _dbg ones are
 * the same source built without NDEBUG (CLOVE_DEBUG on). tree_sum_value
 * is the value form's recursion itself. */
struct tree_sum_arg {
    const node *n;
    int64_t result;
};
int64_t tree_sum_value(clove_task *t, const node *n);
int64_t tree_sum_value_dbg(clove_task *t, const node *n);
void tree_sum_job(clove_task *t, void *arg);
void tree_sum_args_job(clove_task *t, void *arg);
void tree_sum_args_in_job(clove_task *t, void *arg);
void tree_sum_join2_job(clove_task *t, void *arg);
void tree_sum_current_job(clove_task *t, void *arg);
void tree_sum_current_job_dbg(clove_task *t, void *arg);
void tree_sum_typed_job(clove_task *t, void *arg);
void tree_sum_typed_job_dbg(clove_task *t, void *arg);
void tree_sum_job_dbg(clove_task *t, void *arg);
void tree_sum_args_job_dbg(clove_task *t, void *arg);
void tree_sum_args_in_job_dbg(clove_task *t, void *arg);
void tree_sum_join2_job_dbg(clove_task *t, void *arg);
#endif

/* OpenMP tasks (bench/peers/omp_tree_sum.c), built with -DCLOVE_BENCH_OPENMP.
 * omp_peer_setup: an empty parallel region of `threads` threads (untimed:
 * at start and before every sample, so libgomp's pool already has that
 * team size when the timing starts); returns the team size it got.
 * omp_tree_sum: one parallel region of `threads` threads, one `single`
 * thread starts the recursion, a task at every node with two children. */
unsigned omp_peer_setup(unsigned threads);
int64_t omp_tree_sum(const node *root, unsigned threads);
const char *omp_peer_version(void);

/* oneTBB task_group (bench/peers/tbb_tree_sum.cpp), built with
 * -DCLOVE_BENCH_TBB. tbb_peer_init: once, before any arena, with the
 * largest thread count (creates the tbb::global_control); tbb_peer_create:
 * one task_arena per thread count (initialized, so workers are not created
 * inside a timed run), NULL on error with a message in err; tbb_tree_sum:
 * one arena.execute over the whole tree, a task_group at every node with two
 * children. -1 on an exception (the caller's sum check then fails loudly). */
int tbb_peer_init(unsigned max_threads, char *err, unsigned errlen);
void *tbb_peer_create(unsigned threads, unsigned *joined, char *err, unsigned errlen);
int64_t tbb_tree_sum(void *arena, const node *root);
void tbb_peer_destroy(void *arena);
void tbb_peer_fini(void);
const char *tbb_peer_version(void);

#ifdef __cplusplus
}
#endif

#endif
