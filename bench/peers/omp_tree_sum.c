/* SPDX-License-Identifier: MIT */
/*
 * omp_tree_sum.c - the tree sum with OpenMP tasks (peer runtime for
 * bench/tree_sum.c; built only when CMake finds OpenMP for C).
 *
 * Same shape as the clove version: at every node with two children the
 * right child becomes a task, the left one is summed by the current thread,
 * then taskwait. No cutoff, no `final`/`if` clause: the point is the cost of
 * a fork at every node. One parallel region per run; its team is the run's
 * thread count; one thread (`single`) starts the recursion, the others take
 * tasks at the single's implicit barrier. The team set-up is omp_peer.c's.
 */
#include "../tree.h"

#include <omp.h>

static int64_t sum_omp(const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        int64_t r = 0;
        const node *right = n->right;
#pragma omp task shared(r) firstprivate(right) default(none)
        r = sum_omp(right);
        s += sum_omp(n->left);
#pragma omp taskwait
        return s + r;
    }
    if (n->left)
        s += sum_omp(n->left);
    if (n->right)
        s += sum_omp(n->right);
    return s;
}

__attribute__((noinline)) int64_t omp_tree_sum(const node *root, unsigned threads)
{
    int64_t result = 0;
#pragma omp parallel num_threads((int)threads) shared(result, root) default(none)
#pragma omp single
    result = sum_omp(root);
    return result;
}
