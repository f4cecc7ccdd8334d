/* SPDX-License-Identifier: MIT */
/*
 * tbb_peer.cpp - the oneTBB set-up of every benchmark with a oneTBB peer
 * (peers/peer.h; built only when CMake finds TBBConfig.cmake, Debian's
 * libtbb-dev).
 *
 * oneTBB caps the total number of worker threads at the number of CPUs
 * unless told otherwise: on a 2-core machine a task_arena(32) alone would
 * get one worker. So tbb_peer_init creates one
 * global_control(max_allowed_parallelism, largest thread count) for the
 * whole process (for that parameter the smallest active value wins, so it
 * cannot be one object per thread count), and each arena(T) then gets T-1
 * workers plus the calling thread. tbb_peer_create checks that T threads
 * really can be inside the arena at once.
 *
 * oneTBB's workers outlive the arenas: after the last one is destroyed they
 * go on looking for work (yielding) for a while, then sleep. A worker still
 * running when the process exits races with libtbb's exit-time clean-up,
 * which deletes the thread-local key and the wait table the workers use.
 * So tbb_peer_init attaches a task_scheduler_handle, and tbb_peer_fini
 * waits through it (tbb::finalize) until every worker has ended.
 */
#include "peer.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/version.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <thread>

namespace {

std::unique_ptr<tbb::global_control> control, stack_control;
tbb::task_scheduler_handle scheduler; /* attached by tbb_peer_init */

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
        scheduler = tbb::task_scheduler_handle(tbb::attach{});
        control = std::make_unique<tbb::global_control>(
            tbb::global_control::max_allowed_parallelism, max_threads);
        return 0;
    } catch (const std::exception &e) {
        set_err(err, errlen, e.what());
        return -1;
    }
}

extern "C" int tbb_peer_stack(unsigned long bytes, char *err, unsigned errlen)
{
    try {
        stack_control = std::make_unique<tbb::global_control>(
            tbb::global_control::thread_stack_size, static_cast<std::size_t>(bytes));
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

extern "C" void tbb_peer_destroy(void *arena)
{
    delete static_cast<tbb::task_arena *>(arena);
}

extern "C" int tbb_peer_fini(void)
{
    control.reset();
    stack_control.reset();
    if (scheduler && !tbb::finalize(scheduler, std::nothrow))
        return -1;
    return 0;
}

extern "C" const char *tbb_peer_version(void)
{
    static char buf[96];
    std::snprintf(buf, sizeof buf, "oneTBB %s (headers %s)", TBB_runtime_version(),
                  TBB_VERSION_STRING);
    return buf;
}
