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
 * tasks at the single's implicit barrier.
 *
 * OMP_WAIT_POLICY is left as the user has it (unset: libgomp spins a while,
 * then sleeps on a futex).
 */
#include "../tree.h"

#include <omp.h>
#include <stdio.h>

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

unsigned omp_peer_setup(unsigned threads)
{
    /* The team must have exactly `threads` threads: no dynamic adjustment. */
    omp_set_dynamic(0);
    unsigned got = 0;
#pragma omp parallel num_threads((int)threads) shared(got) default(none)
#pragma omp single
    got = (unsigned)omp_get_num_threads();
    return got;
}

const char *omp_peer_version(void)
{
    static char buf[64];
    snprintf(buf, sizeof buf, "OpenMP %d (_OPENMP)", (int)_OPENMP);
    return buf;
}
