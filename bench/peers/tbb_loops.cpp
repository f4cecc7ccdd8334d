/* SPDX-License-Identifier: MIT */
/*
 * tbb_loops.cpp - the loops of bench/loops.c with oneTBB parallel_for
 * (peer runtime; built only when CMake finds TBBConfig.cmake, Debian's
 * libtbb-dev).
 *
 * tbb::parallel_for over a tbb::blocked_range<size_t>(0, n) (default grain
 * size 1) with the default partitioner, auto_partitioner; the body calls
 * the same inline range code as the sequential loop and clove
 * (bench/loops.h). One arena.execute per run, in an arena made by
 * tbb_peer_create (peers/tbb_peer.cpp: one task_arena per thread count,
 * created and initialized once, not timed).
 */
#include "../loops.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

namespace {

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
