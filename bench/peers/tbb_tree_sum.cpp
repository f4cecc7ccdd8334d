/* SPDX-License-Identifier: MIT */
/*
 * tbb_tree_sum.cpp - the tree sum with oneTBB task_group (peer runtime for
 * bench/tree_sum.c; built only when CMake finds TBBConfig.cmake, Debian's
 * libtbb-dev).
 *
 * Same shape as the clove version: at every node with two children the
 * right child runs in a task_group, the left one is summed by the current
 * thread, then wait. No cutoff. One task_arena per thread count, created
 * and initialized once (not timed); one arena.execute per run.
 *
 * oneTBB caps the total number of worker threads at the number of CPUs
 * unless told otherwise: on a 2-core machine a task_arena(32) alone would
 * get one worker. So tbb_peer_init creates one
 * global_control(max_allowed_parallelism, largest thread count) for the
 * whole process (for that parameter the smallest active value wins, so it
 * cannot be one object per thread count), and each arena(T) then gets T-1
 * workers plus the calling thread. tbb_peer_create checks that T threads
 * really can be inside the arena at once.
 */
#include "../tree.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/version.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <thread>

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

std::unique_ptr<tbb::global_control> control;

void set_err(char *err, unsigned errlen, const char *what)
{
    if (err && errlen)
        std::snprintf(err, errlen, "%s", what);
}

/* How many threads can be inside the arena at once: T iterations that each
 * wait (up to a shared 2 s deadline) for all T to have arrived. */
unsigned count_joined(tbb::task_arena &arena, unsigned threads)
{
    std::atomic<unsigned> arrived{0}, most{0};
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    arena.execute([&] {
        tbb::parallel_for(
            tbb::blocked_range<unsigned>(0, threads, 1),
            [&](const tbb::blocked_range<unsigned> &) {
                unsigned a = arrived.fetch_add(1) + 1;
                unsigned m = most.load();
                while (a > m && !most.compare_exchange_weak(m, a)) {
                }
                while (arrived.load() < threads &&
                       std::chrono::steady_clock::now() < deadline)
                    std::this_thread::yield();
            },
            tbb::simple_partitioner());
    });
    return most.load();
}

} // namespace

extern "C" int tbb_peer_init(unsigned max_threads, char *err, unsigned errlen)
{
    try {
        control = std::make_unique<tbb::global_control>(
            tbb::global_control::max_allowed_parallelism, max_threads);
        return 0;
    } catch (const std::exception &e) {
        set_err(err, errlen, e.what());
        return -1;
    }
}

extern "C" void *tbb_peer_create(unsigned threads, unsigned *joined, char *err,
                                 unsigned errlen)
{
    try {
        auto *arena = new tbb::task_arena(static_cast<int>(threads));
        arena->initialize();
        if (joined)
            *joined = count_joined(*arena, threads);
        return arena;
    } catch (const std::exception &e) {
        set_err(err, errlen, e.what());
        return nullptr;
    }
}

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

extern "C" void tbb_peer_destroy(void *arena)
{
    delete static_cast<tbb::task_arena *>(arena);
}

extern "C" void tbb_peer_fini(void)
{
    control.reset();
}

extern "C" const char *tbb_peer_version(void)
{
    static char buf[96];
    std::snprintf(buf, sizeof buf, "oneTBB %s (headers %s)", TBB_runtime_version(),
                  TBB_VERSION_STRING);
    return buf;
}
