/* SPDX-License-Identifier: MIT */
/*
 * omp_loops.c - the loops of bench/loops.c with OpenMP `parallel for`
 * (peer runtime; built only when CMake finds OpenMP for C).
 *
 * One `#pragma omp parallel for num_threads(T)` per run, with
 * schedule(static), schedule(dynamic) or schedule(guided), each with the
 * default chunk (static: one contiguous block per thread; dynamic and
 * guided: chunks of at least 1 iteration). The loop body is the same inline
 * per-iteration code as the sequential loop's and clove's (bench/loops.h),
 * so with schedule(static) gcc vectorises (a) as it does the plain loop.
 * The team set-up is omp_peer.c's.
 */
#include "../loops.h"

#include <omp.h>

/* One function per (workload, schedule): the schedule clause must be
 * literal for gcc to inline static scheduling (schedule(runtime) would go
 * through libgomp's dispatcher for every chunk). */
#define OMP_PRAGMA(x) _Pragma(#x)
#define OMP_LOOP(name, sched, params, body)                                  \
    static void name params                                                  \
    {                                                                        \
        OMP_PRAGMA(omp parallel for num_threads((int)threads) schedule(sched)) \
        for (size_t i = 0; i < n; i++)                                       \
            body;                                                            \
    }

OMP_LOOP(a_static, static, (unsigned threads, float *a, const float *b, size_t n),
         loops_a_elem(a, b, i))
OMP_LOOP(a_dynamic, dynamic, (unsigned threads, float *a, const float *b, size_t n),
         loops_a_elem(a, b, i))
OMP_LOOP(a_guided, guided, (unsigned threads, float *a, const float *b, size_t n),
         loops_a_elem(a, b, i))
OMP_LOOP(b_static, static, (unsigned threads, uint64_t *out, size_t n),
         loops_b_elem(out, i))
OMP_LOOP(b_dynamic, dynamic, (unsigned threads, uint64_t *out, size_t n),
         loops_b_elem(out, i))
OMP_LOOP(b_guided, guided, (unsigned threads, uint64_t *out, size_t n),
         loops_b_elem(out, i))
OMP_LOOP(c_static, static, (unsigned threads, uint64_t *out, size_t n),
         loops_c_elem(out, n, i))
OMP_LOOP(c_dynamic, dynamic, (unsigned threads, uint64_t *out, size_t n),
         loops_c_elem(out, n, i))
OMP_LOOP(c_guided, guided, (unsigned threads, uint64_t *out, size_t n),
         loops_c_elem(out, n, i))

void omp_loops_a(int sched, unsigned threads, float *a, const float *b, size_t n)
{
    switch (sched) {
    case 0: a_static(threads, a, b, n); break;
    case 1: a_dynamic(threads, a, b, n); break;
    default: a_guided(threads, a, b, n); break;
    }
}

void omp_loops_b(int sched, unsigned threads, uint64_t *out, size_t n)
{
    switch (sched) {
    case 0: b_static(threads, out, n); break;
    case 1: b_dynamic(threads, out, n); break;
    default: b_guided(threads, out, n); break;
    }
}

void omp_loops_c(int sched, unsigned threads, uint64_t *out, size_t n)
{
    switch (sched) {
    case 0: c_static(threads, out, n); break;
    case 1: c_dynamic(threads, out, n); break;
    default: c_guided(threads, out, n); break;
    }
}
