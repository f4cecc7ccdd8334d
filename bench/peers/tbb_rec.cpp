/* SPDX-License-Identifier: MIT */
/*
 * tbb_rec.cpp - fib, uts and nqueens with oneTBB task_group (peer runtime
 * for bench/fib.c, uts.c, nqueens.c; built only when CMake finds
 * TBBConfig.cmake, Debian's libtbb-dev).
 *
 * The same fork points as the clove versions: a task_group per forking
 * call, g.run() for every forked branch, the last branch in place, then
 * g.wait(). With cutoff 0 that happens at every fork point, the headline;
 * with cutoff c the recursion below it (fib: n < c; uts, nqueens: depth
 * >= c) is the sequential kernel of rec.h. One arena.execute per run, in
 * an arena made by tbb_peer_create (peers/tbb_peer.cpp), which also holds
 * the process's global_controls (max_allowed_parallelism, and the worker
 * stack size: uts is deep).
 */
#include "../rec.h"

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

namespace {

constexpr rec_result failed{UINT64_MAX, UINT64_MAX};

uint64_t fib_tbb(unsigned n, unsigned cutoff)
{
    if (n < 2)
        return n;
    if (n < cutoff)
        return rec_fib_seq(n);
    uint64_t b = 0;
    tbb::task_group g;
    g.run([&b, n, cutoff] { b = fib_tbb(n - 2, cutoff); });
    uint64_t a = fib_tbb(n - 1, cutoff);
    g.wait();
    return a + b;
}

void uts_tbb(uint64_t parent, uint64_t lo, uint64_t hi, uint32_t depth, unsigned cutoff,
             rec_result *r)
{
    if (cutoff && depth >= cutoff) {
        for (uint64_t i = lo; i < hi; i++)
            rec_uts_seq(rec_uts_child(parent, static_cast<unsigned>(i)), depth, r);
        return;
    }
    if (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        rec_result b{0, 0};
        tbb::task_group g;
        g.run([&b, parent, mid, hi, depth, cutoff] {
            uts_tbb(parent, mid, hi, depth, cutoff, &b);
        });
        uts_tbb(parent, lo, mid, depth, cutoff, r);
        g.wait();
        r->value += b.value;
        if (b.aux > r->aux)
            r->aux = b.aux;
        return;
    }
    if (hi == lo)
        return;
    uint64_t id = rec_uts_child(parent, static_cast<unsigned>(lo));
    r->value++;
    if (depth > r->aux)
        r->aux = depth;
    unsigned k = rec_uts_nchildren(id);
    if (k)
        uts_tbb(id, 0, k, depth + 1, cutoff, r);
}

// The subtree of node id at `depth`, packed (REC_UTS_PACK): a task_group
// run per child, forked in a loop, then one wait (uts.c's loop shape).
int64_t uts_loop_tbb(uint64_t id, uint32_t depth, unsigned cutoff)
{
    if (cutoff && depth >= cutoff) {
        rec_result r{0, 0};
        rec_uts_seq(id, 0, &r);
        return REC_UTS_PACK(r.aux, r.value);
    }
    unsigned k = rec_uts_nchildren(id);
    if (!k)
        return REC_UTS_PACK(0, 1);
    int64_t res[REC_UTS_M];
    tbb::task_group g;
    for (unsigned i = 0; i < k; i++) {
        uint64_t c = rec_uts_child(id, i);
        int64_t *slot = &res[i];
        g.run([slot, c, depth, cutoff] { *slot = uts_loop_tbb(c, depth + 1, cutoff); });
    }
    g.wait();
    int64_t nodes = 1, h = 0;
    for (unsigned i = 0; i < k; i++) {
        nodes += res[i] & REC_UTS_NODES_MASK;
        if (res[i] >> REC_UTS_HEIGHT_SHIFT > h)
            h = res[i] >> REC_UTS_HEIGHT_SHIFT;
    }
    return REC_UTS_PACK(h + 1, nodes);
}

uint64_t nq_tbb(uint32_t all, uint32_t cols, uint32_t d1, uint32_t d2, unsigned row,
                unsigned cutoff)
{
    if (cutoff && row >= cutoff)
        return rec_nq_seq(all, cols, d1, d2);
    if (cols == all)
        return 1;
    uint64_t res[32] = {0};
    unsigned k = 0;
    uint32_t avail = all & ~(cols | d1 | d2);
    if (!avail)
        return 0;
    tbb::task_group g;
    while (avail) {
        uint32_t bit = avail & (0u - avail);
        avail ^= bit;
        uint32_t c = cols | bit, l = ((d1 | bit) << 1) & all, r = (d2 | bit) >> 1;
        uint64_t *slot = &res[k++];
        if (!avail) { // the last branch: here
            *slot = nq_tbb(all, c, l, r, row + 1, cutoff);
            break;
        }
        g.run([=] { *slot = nq_tbb(all, c, l, r, row + 1, cutoff); });
    }
    g.wait();
    uint64_t s = 0;
    for (unsigned i = 0; i < k; i++)
        s += res[i];
    return s;
}

} // namespace

extern "C" __attribute__((noinline)) rec_result tbb_rec_fib(void *arena, uint64_t n,
                                                             unsigned cutoff)
{
    try {
        rec_result r{0, 0};
        static_cast<tbb::task_arena *>(arena)->execute(
            [&r, n, cutoff] { r.value = fib_tbb(static_cast<unsigned>(n), cutoff); });
        return r;
    } catch (...) {
        return failed;
    }
}

extern "C" __attribute__((noinline)) rec_result tbb_rec_uts(void *arena, uint64_t n,
                                                             unsigned cutoff)
{
    try {
        rec_result r{1, 0};
        static_cast<tbb::task_arena *>(arena)->execute(
            [&r, n, cutoff] { uts_tbb(rec_uts_root(), 0, n, 1, cutoff, &r); });
        return r;
    } catch (...) {
        return failed;
    }
}

extern "C" __attribute__((noinline)) rec_result tbb_rec_nqueens(void *arena, uint64_t n,
                                                                 unsigned cutoff)
{
    try {
        rec_result r{0, 0};
        uint32_t all = static_cast<uint32_t>((1ull << n) - 1);
        static_cast<tbb::task_arena *>(arena)->execute(
            [&r, all, cutoff] { r.value = nq_tbb(all, 0, 0, 0, 0, cutoff); });
        return r;
    } catch (...) {
        return failed;
    }
}

extern "C" __attribute__((noinline)) rec_result tbb_rec_uts_loop(void *arena, uint64_t n,
                                                                  unsigned cutoff)
{
    try {
        rec_result r{1, 0};
        std::unique_ptr<int64_t[]> res(new int64_t[n]);
        int64_t *out = res.get();
        static_cast<tbb::task_arena *>(arena)->execute([&r, n, cutoff, out] {
            uint64_t root = rec_uts_root();
            tbb::task_group g;
            for (uint64_t i = 0; i < n; i++) {
                uint64_t c = rec_uts_child(root, static_cast<unsigned>(i));
                int64_t *slot = &out[i];
                g.run([slot, c, cutoff] { *slot = uts_loop_tbb(c, 1, cutoff); });
            }
            g.wait();
            for (uint64_t i = 0; i < n; i++) {
                r.value += static_cast<uint64_t>(out[i] & REC_UTS_NODES_MASK);
                uint64_t d = static_cast<uint64_t>(out[i] >> REC_UTS_HEIGHT_SHIFT) + 1;
                if (d > r.aux)
                    r.aux = d;
            }
        });
        return r;
    } catch (...) {
        return failed;
    }
}
