/* SPDX-License-Identifier: MIT */
/*
 * peer.h - setting up the peer runtimes, for every benchmark with peers
 * (tree_sum, fib, uts, nqueens, loops, idle_peers): OpenMP teams
 * (peers/omp_peer.c, built with -DCLOVE_BENCH_OPENMP) and oneTBB arenas
 * (peers/tbb_peer.cpp, -DCLOVE_BENCH_TBB). Shared by C and C++.
 */
#ifndef CLOVE_BENCH_PEER_H
#define CLOVE_BENCH_PEER_H

#ifdef __cplusplus
extern "C" {
#endif

/* omp_peer_setup: an empty parallel region of `threads` threads (untimed:
 * at start and before every sample, so libgomp's pool already has that
 * team size when the timing starts); returns the team size it got. */
unsigned omp_peer_setup(unsigned threads);
const char *omp_peer_version(void);

/* tbb_peer_init: once, before any arena, with the largest thread count
 * (creates the tbb::global_control(max_allowed_parallelism));
 * tbb_peer_stack: before tbb_peer_init, a global_control(thread_stack_size)
 * for the whole process (deep recursions); tbb_peer_create: one task_arena
 * per thread count (initialized, so workers are not created inside a timed
 * run) and how many threads were inside it at once (*joined), NULL on
 * error; tbb_peer_fini: after the last tbb_peer_destroy, ends both
 * global_controls and waits until oneTBB's worker threads have ended (none
 * may run while the process exits: tbb_peer.cpp), -1 if they could not be
 * waited for. On error the functions leave a message in err. */
int tbb_peer_init(unsigned max_threads, char *err, unsigned errlen);
int tbb_peer_stack(unsigned long bytes, char *err, unsigned errlen);
void *tbb_peer_create(unsigned threads, unsigned *joined, char *err, unsigned errlen);
void tbb_peer_destroy(void *arena);
int tbb_peer_fini(void);
const char *tbb_peer_version(void);

#ifdef __cplusplus
}
#endif

#endif
