/* SPDX-License-Identifier: MIT */
/*
 * loops.h - the three loop bodies of bench/loops.c and the entry points of
 * its optional peers (bench/peers/omp_loops.c, bench/peers/tbb_loops.cpp),
 * shared by C and C++ so that every implementation runs the very same
 * per-iteration code, inlined and compiled with the same flags (-O3).
 *
 *   (a) cheap, vectorisable: a[i] = b[i] * 2 + 1 over floats
 *   (b) uniform, compute-heavy: LOOPS_B_STEPS dependent multiply/xor-shift
 *       steps per iteration (a few hundred ns), the result stored per index
 *   (c) irregular: 4 or 4000 of the same steps per iteration (1000x),
 *       heavy iterations in clustered runs whose density rises along the
 *       range (see loops_c_steps)
 */
#ifndef CLOVE_BENCH_LOOPS_H
#define CLOVE_BENCH_LOOPS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Dependent steps per iteration of (b); light and heavy steps of (c). */
#define LOOPS_B_STEPS 200u
#define LOOPS_C_LIGHT 4u
#define LOOPS_C_HEAVY 4000u
/* (c): iterations per block; a hot block is heavy throughout. */
#define LOOPS_C_BLOCK 64u

/* (a) one iteration. b and a never overlap. */
static inline void loops_a_elem(float *__restrict a, const float *__restrict b, size_t i)
{
    a[i] = b[i] * 2.0f + 1.0f;
}

static inline void loops_a_range(float *__restrict a, const float *__restrict b,
                                 size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++)
        loops_a_elem(a, b, i);
}

/* One step: an odd multiply and an xor-shift, both bijections on 64 bits,
 * so `steps` of them map distinct inputs to distinct outputs. Each step
 * depends on the previous one (a multiply and a shift/xor: ~5 cycles). */
static inline uint64_t loops_chain(uint64_t x, unsigned steps)
{
    for (unsigned k = 0; k < steps; k++) {
        x *= 0x9E3779B97F4A7C15ull;
        x ^= x >> 31;
    }
    return x;
}

/* (b) one iteration: distinct i give distinct results. */
static inline void loops_b_elem(uint64_t *out, size_t i)
{
    out[i] = loops_chain((uint64_t)i, LOOPS_B_STEPS);
}

static inline void loops_b_range(uint64_t *out, size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++)
        loops_b_elem(out, i);
}

/* A fixed 64-bit mixer (three xor-shift-multiply rounds) for the hot-block
 * choice of (c). Deterministic: the same n gives the same hot blocks in
 * every run, process and implementation. */
static inline uint64_t loops_hash(uint64_t x)
{
    x += 0x2545F4914F6CDD1Dull;
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 29;
    x *= 0xC4CEB9FE1A85EC53ull;
    x ^= x >> 32;
    return x;
}

/* (c) the cost of iteration i of n, in steps. Iterations come in blocks of
 * LOOPS_C_BLOCK; block k of nb is hot when hash(k) mod (32 * nb) < k, so
 * the chance of a hot block rises linearly from 0 at the start of the range
 * to 1/32 at its end (1/64 of all blocks on average, and the upper half of
 * the range holds 3/4 of them). Every iteration of a hot block costs
 * LOOPS_C_HEAVY steps, every other one LOOPS_C_LIGHT: 1000x apart, and the
 * heavy iterations are ~94% of the work. Clustered (runs of 64 heavy
 * iterations) and skewed (a static split in two halves is 1:3 in heavy
 * work), as in a triangular loop nest or a mesh with a refined region. */
static inline unsigned loops_c_steps(size_t i, size_t n)
{
    uint64_t nb = ((uint64_t)n + LOOPS_C_BLOCK - 1) / LOOPS_C_BLOCK;
    uint64_t k = (uint64_t)i / LOOPS_C_BLOCK;
    return loops_hash(k) % (32 * nb) < k ? LOOPS_C_HEAVY : LOOPS_C_LIGHT;
}

/* (c) one iteration. The index in the upper 32 bits makes every element
 * distinct (n < 2^32), the low 32 bits carry the computed value. */
static inline void loops_c_elem(uint64_t *out, size_t n, size_t i)
{
    uint64_t h = loops_chain((uint64_t)i, loops_c_steps(i, n));
    out[i] = ((uint64_t)i << 32) | (h & 0xFFFFFFFFull);
}

static inline void loops_c_range(uint64_t *out, size_t n, size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++)
        loops_c_elem(out, n, i);
}

/* OpenMP (bench/peers/omp_loops.c, built with -DCLOVE_BENCH_OPENMP).
 * sched: 0 schedule(static), 1 schedule(dynamic), 2 schedule(guided), each
 * with the default chunk. One `parallel for num_threads(threads)` per call.
 * The teams are set up by omp_peer_setup (peers/peer.h). */
void omp_loops_a(int sched, unsigned threads, float *a, const float *b, size_t n);
void omp_loops_b(int sched, unsigned threads, uint64_t *out, size_t n);
void omp_loops_c(int sched, unsigned threads, uint64_t *out, size_t n);

/* oneTBB (bench/peers/tbb_loops.cpp, built with -DCLOVE_BENCH_TBB):
 * tbb::parallel_for over a blocked_range (default grain 1) with the default
 * partitioner (auto_partitioner), inside one task_arena per thread count
 * (tbb_peer_create, peers/peer.h). The loop calls return 0, or -1 on an
 * exception. */
int tbb_loops_a(void *arena, float *a, const float *b, size_t n);
int tbb_loops_b(void *arena, uint64_t *out, size_t n);
int tbb_loops_c(void *arena, uint64_t *out, size_t n);

#ifdef __cplusplus
}
#endif

#endif
