/* SPDX-License-Identifier: MIT */
/*
 * idle_peers.h - the peer halves of bench/idle_peers.c: wake latency with
 * OpenMP tasks (idle_omp.c, built with -DCLOVE_BENCH_OPENMP) and oneTBB
 * task_group (idle_tbb.cpp, -DCLOVE_BENCH_TBB). The idle windows of the
 * peers use the tree-sum peers of tree.h (omp_tree_sum, tbb_tree_sum).
 *
 * A wake sample: inside the runtime, after gap_ms milliseconds in which it
 * had no work (so that its other threads have gone to sleep), the thread
 * takes t0 and spawns one task that records the time it starts and the
 * thread it runs on; the spawning thread then spins (up to 100 ms) until
 * the task has started, so it cannot run the task itself. Latency = start
 * minus t0, in microseconds, CLOCK_MONOTONIC on both sides. A task that ran
 * on the spawning thread after all (after the 100 ms) counts as not taken.
 * The first sample is a warm-up and is dropped. Returns the number of
 * latencies written to lat_us (at most samples).
 */
#ifndef CLOVE_BENCH_IDLE_PEERS_H
#define CLOVE_BENCH_IDLE_PEERS_H

#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The timestamps of the wake samples: CLOCK_MONOTONIC in ns. */
static inline uint64_t idle_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

unsigned omp_wake(unsigned threads, unsigned samples, unsigned gap_ms,
                  double *lat_us, unsigned *not_taken);
unsigned tbb_wake(void *arena, unsigned samples, unsigned gap_ms,
                  double *lat_us, unsigned *not_taken);

#ifdef __cplusplus
}
#endif

#endif
