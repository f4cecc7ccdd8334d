/* SPDX-License-Identifier: MIT */
/*
 * tbb_loops.cpp - the loops of bench/loops.c with oneTBB parallel_for
 * (peer runtime; built only when CMake finds TBBConfig.cmake, Debian's
 * libtbb-dev).
 *
 * tbb::parallel_for over a tbb::blocked_range<size_t>(0, n) (default grain
 * size 1) with the default partitioner, auto_partitioner; the body calls
 * the same inline range code as the sequential loop and clove
 * (bench/loops.h). One task_arena per thread count, created and
 * initialized once (not timed); one arena.execute per run.
 *
 * oneTBB caps its workers at the number of CPUs unless told otherwise, so
 * tbb_loops_init creates one global_control(max_allowed_parallelism,
 * largest thread count) for the whole process (for that parameter the
 * smallest live value wins, so there cannot be one per thread count);
 * tbb_loops_arena then reports how many threads were inside the arena at
 * once.
 */
#include "../loops.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/version.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <thread>

namespace {

std::unique_ptr<tbb::global_control> limit;

void put_err(char *err, unsigned errlen, const char *what)
{
    if (err && errlen)
        std::snprintf(err, errlen, "%s", what);
}

/* The largest number of threads seen inside the arena at once: `threads`
 * one-iteration tasks, each waiting (until a common 2 s deadline) for all
 * of them to have started. */
unsigned inside_at_once(tbb::task_arena &arena, unsigned threads)
{
    std::atomic<unsigned> started{0}, best{0};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    arena.execute([&] {
        tbb::parallel_for(
            tbb::blocked_range<unsigned>(0, threads, 1),
            [&](const tbb::blocked_range<unsigned> &) {
                unsigned now = started.fetch_add(1) + 1;
                unsigned b = best.load();
                while (now > b && !best.compare_exchange_weak(b, now)) {
                }
                while (started.load() < threads &&
                       std::chrono::steady_clock::now() < deadline)
                    std::this_thread::yield();
            },
            tbb::simple_partitioner());
    });
    return best.load();
}

template <class F> int in_arena(void *arena, size_t n, F range)
{
    try {
        static_cast<tbb::task_arena *>(arena)->execute([&] {
            tbb::parallel_for(tbb::blocked_range<size_t>(0, n),
                              [&](const tbb::blocked_range<size_t> &r) {
                                  range(r.begin(), r.end());
                              });
        });
        return 0;
    } catch (...) {
        return -1;
    }
}

} // namespace

extern "C" int tbb_loops_init(unsigned max_threads, char *err, unsigned errlen)
{
    try {
        limit = std::make_unique<tbb::global_control>(
            tbb::global_control::max_allowed_parallelism, max_threads);
        return 0;
    } catch (const std::exception &e) {
        put_err(err, errlen, e.what());
        return -1;
    }
}

extern "C" void *tbb_loops_arena(unsigned threads, unsigned *joined, char *err,
                                 unsigned errlen)
{
    try {
        auto *arena = new tbb::task_arena(static_cast<int>(threads));
        arena->initialize();
        if (joined)
            *joined = inside_at_once(*arena, threads);
        return arena;
    } catch (const std::exception &e) {
        put_err(err, errlen, e.what());
        return nullptr;
    }
}

extern "C" int tbb_loops_a(void *arena, float *a, const float *b, size_t n)
{
    return in_arena(arena, n, [a, b](size_t lo, size_t hi) { loops_a_range(a, b, lo, hi); });
}

extern "C" int tbb_loops_b(void *arena, uint64_t *out, size_t n)
{
    return in_arena(arena, n, [out](size_t lo, size_t hi) { loops_b_range(out, lo, hi); });
}

extern "C" int tbb_loops_c(void *arena, uint64_t *out, size_t n)
{
    return in_arena(arena, n,
                    [out, n](size_t lo, size_t hi) { loops_c_range(out, n, lo, hi); });
}

extern "C" void tbb_loops_arena_free(void *arena)
{
    delete static_cast<tbb::task_arena *>(arena);
}

extern "C" void tbb_loops_fini(void)
{
    limit.reset();
}

extern "C" const char *tbb_loops_version(void)
{
    static char buf[96];
    std::snprintf(buf, sizeof buf, "oneTBB %s (headers %s)", TBB_runtime_version(),
                  TBB_VERSION_STRING);
    return buf;
}
