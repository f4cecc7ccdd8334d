/* SPDX-License-Identifier: MIT */
/*
 * bench_util.h - what the C benchmarks share: which peers CMake built (and
 * why not), the clock, and medians. Header-only (static functions) so that
 * every benchmark target picks it up without a library of its own.
 */
#ifndef CLOVE_BENCH_UTIL_H
#define CLOVE_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

/* Why a peer is missing, from CMake (bench/CMakeLists.txt). */
#ifndef CLOVE_BENCH_OPENMP_MISSING
#define CLOVE_BENCH_OPENMP_MISSING "not configured"
#endif
#ifndef CLOVE_BENCH_TBB_MISSING
#define CLOVE_BENCH_TBB_MISSING "not configured"
#endif
#ifdef CLOVE_BENCH_OPENMP
#define OMP_BUILT true
#else
#define OMP_BUILT false
#endif
#ifdef CLOVE_BENCH_TBB
#define TBB_BUILT true
#else
#define TBB_BUILT false
#endif

/* CLOCK_MONOTONIC in nanoseconds. */
static inline double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..k) (k > 0); sorts v, so v[0] and v[k-1] are then the min
 * and max. */
static inline double bench_median(double *v, size_t k)
{
    qsort(v, k, sizeof *v, bench_cmp_double);
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

#endif
