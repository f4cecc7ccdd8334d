/* SPDX-License-Identifier: MIT */
/*
 * idle_tbb.cpp - wake latency of oneTBB task_group, for idle_peers.c; see
 * idle_peers.h for what a sample is. Everything runs inside one
 * arena.execute of the arena from tbb_peer_create (peers/peer.h); between samples
 * the arena has no work, so its workers leave it and sleep.
 */
#include "idle_peers.h"

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <cstdint>
#include <ctime>

extern "C" unsigned tbb_wake(void *arena, unsigned samples, unsigned gap_ms,
                             double *lat_us, unsigned *not_taken)
{
    unsigned got = 0, missed = 0;
    try {
        static_cast<tbb::task_arena *>(arena)->execute([&] {
            int me = tbb::this_task_arena::current_thread_index();
            for (unsigned i = 0; i <= samples; i++) {
                timespec gap = { static_cast<time_t>(gap_ms / 1000),
                                 static_cast<long>(gap_ms % 1000) * 1000000L };
                nanosleep(&gap, nullptr);
                std::atomic<bool> started{false};
                uint64_t t_start = 0;
                int who = -1;
                tbb::task_group tg;
                uint64_t t0 = idle_now_ns();
                tg.run([&] {
                    t_start = idle_now_ns();
                    who = tbb::this_task_arena::current_thread_index();
                    started.store(true, std::memory_order_release);
                });
                uint64_t limit = t0 + 100000000u;
                while (!started.load(std::memory_order_acquire) && idle_now_ns() < limit) {
                }
                tg.wait();
                if (i == 0)
                    continue;
                if (who != me)
                    lat_us[got++] = static_cast<double>(t_start - t0) / 1e3;
                else
                    missed++;
            }
        });
    } catch (...) {
        *not_taken = missed;
        return got;
    }
    *not_taken = missed;
    return got;
}
