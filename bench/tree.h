/* SPDX-License-Identifier: MIT */
/*
 * tree.h - the node of the tree-sum benchmark, its sequential sum, and the
 * entry points of its optional peer runtimes (bench/peers/), shared by C
 * and C++.
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

/* The sequential baseline: the plain recursion, no library (gcc inlines it
 * several levels deep). Compiled into each benchmark that times it
 * (tree_sum, fork_floor, tree_sum_cxx as C++). */
static inline int64_t tree_sum_seq(const node *n)
{
    int64_t s = n->value;
    if (n->left)
        s += tree_sum_seq(n->left);
    if (n->right)
        s += tree_sum_seq(n->right);
    return s;
}

#if !defined(__cplusplus) || defined(CLOVE_H)
#ifndef __cplusplus
#include <clove.h>
#endif

/* bench/tree.c, compiled as C; declared for C, and for C++ after clove.h
 * (bench/tree_sum_cxx.cpp includes clove.hpp first). tree_build: nodes for
 * values lo..hi (inclusive), the middle one at the root, one malloc each in
 * pre-order (the node before its subtrees); exits on out-of-memory. */
node *tree_build(int64_t lo, int64_t hi);
void tree_destroy(node *n);
/* bench/tree_forms.c, compiled as C: clove's sum with a fork at every node
 * with
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

/* The peers' team and arena set-up is in peers/peer.h. */

/* OpenMP tasks (bench/peers/omp_tree_sum.c), built with -DCLOVE_BENCH_OPENMP:
 * one parallel region of `threads` threads, one `single` thread starts the
 * recursion, a task at every node with two children. */
int64_t omp_tree_sum(const node *root, unsigned threads);

/* oneTBB task_group (bench/peers/tbb_tree_sum.cpp), built with
 * -DCLOVE_BENCH_TBB: one arena.execute over the whole tree (an arena from
 * tbb_peer_create), a task_group at every node with two children. -1 on an
 * exception (the caller's sum check then fails loudly). */
int64_t tbb_tree_sum(void *arena, const node *root);

#ifdef __cplusplus
}
#endif

#endif
