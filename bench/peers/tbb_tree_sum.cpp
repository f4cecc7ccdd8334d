/* SPDX-License-Identifier: MIT */
/*
 * tbb_tree_sum.cpp - the tree sum with oneTBB task_group (peer runtime for
 * bench/tree_sum.c; built only when CMake finds TBBConfig.cmake, Debian's
 * libtbb-dev).
 *
 * Same shape as the clove version: at every node with two children the
 * right child runs in a task_group, the left one is summed by the current
 * thread, then wait. No cutoff. One arena.execute per run, in an arena
 * made by tbb_peer_create (peers/tbb_peer.cpp: one task_arena per thread
 * count, created and initialized once, not timed).
 */
#include "../tree.h"

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

namespace {

int64_t sum_tbb(const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        int64_t r = 0;
        const node *right = n->right;
        tbb::task_group g;
        g.run([&r, right] { r = sum_tbb(right); });
        s += sum_tbb(n->left);
        g.wait();
        return s + r;
    }
    if (n->left)
        s += sum_tbb(n->left);
    if (n->right)
        s += sum_tbb(n->right);
    return s;
}

} // namespace

extern "C" __attribute__((noinline)) int64_t tbb_tree_sum(void *arena, const node *root)
{
    try {
        int64_t result = 0;
        static_cast<tbb::task_arena *>(arena)->execute(
            [&result, root] { result = sum_tbb(root); });
        return result;
    } catch (...) {
        return -1;
    }
}
