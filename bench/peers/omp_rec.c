/* SPDX-License-Identifier: MIT */
/*
 * omp_rec.c - fib, uts and nqueens with OpenMP tasks (peer runtime for
 * bench/fib.c, uts.c, nqueens.c; built only when CMake finds OpenMP for C).
 *
 * The same fork points as the clove versions, each an `omp task` followed
 * (newest first is implied) by one `taskwait`. With cutoff 0 there is a task
 * at every fork point, the headline; with cutoff c the recursion below it
 * (fib: n < c; uts, nqueens: depth >= c) is the sequential kernel of rec.h.
 * No `if`/`final` clause: the cutoff is a plain branch. One parallel region
 * per run, one `single` thread starts the recursion, as in omp_tree_sum.c
 * (the team set-up, omp_peer_setup, is omp_peer.c's).
 */
#include "../rec.h"

#include <omp.h>
#include <stdlib.h>

/* ---- fib ---------------------------------------------------------------- */

static uint64_t fib_omp(unsigned n, unsigned cutoff)
{
    if (n < 2)
        return n;
    if (n < cutoff)
        return rec_fib_seq(n);
    uint64_t b = 0;
#pragma omp task shared(b) firstprivate(n, cutoff) default(none)
    b = fib_omp(n - 2, cutoff);
    uint64_t a = fib_omp(n - 1, cutoff);
#pragma omp taskwait
    return a + b;
}

__attribute__((noinline)) rec_result omp_rec_fib(uint64_t n, unsigned threads,
                                                 unsigned cutoff)
{
    uint64_t r = 0;
#pragma omp parallel num_threads((int)threads) shared(r, n, cutoff) default(none)
#pragma omp single
    r = fib_omp((unsigned)n, cutoff);
    return (rec_result){ r, 0 };
}

/* ---- uts ---------------------------------------------------------------- */

/* Children lo .. hi-1 of parent, at depth `depth`, halves as in uts.c. */
static void uts_omp(uint64_t parent, uint64_t lo, uint64_t hi, uint32_t depth,
                    unsigned cutoff, rec_result *r)
{
    if (cutoff && depth >= cutoff) {
        for (uint64_t i = lo; i < hi; i++)
            rec_uts_seq(rec_uts_child(parent, (unsigned)i), depth, r);
        return;
    }
    if (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        rec_result b = { 0, 0 };
#pragma omp task shared(b) firstprivate(parent, mid, hi, depth, cutoff) default(none)
        uts_omp(parent, mid, hi, depth, cutoff, &b);
        uts_omp(parent, lo, mid, depth, cutoff, r);
#pragma omp taskwait
        r->value += b.value;
        if (b.aux > r->aux)
            r->aux = b.aux;
        return;
    }
    if (hi == lo)
        return;
    uint64_t id = rec_uts_child(parent, (unsigned)lo);
    r->value++;
    if (depth > r->aux)
        r->aux = depth;
    unsigned k = rec_uts_nchildren(id);
    if (k)
        uts_omp(id, 0, k, depth + 1, cutoff, r);
}

__attribute__((noinline)) rec_result omp_rec_uts(uint64_t n, unsigned threads,
                                                 unsigned cutoff)
{
    rec_result r = { 1, 0 };
#pragma omp parallel num_threads((int)threads) shared(r, n, cutoff) default(none)
#pragma omp single
    uts_omp(rec_uts_root(), 0, n, 1, cutoff, &r);
    return r;
}

/* ---- nqueens ------------------------------------------------------------ */

static uint64_t nq_omp(uint32_t all, uint32_t cols, uint32_t d1, uint32_t d2,
                       unsigned row, unsigned cutoff)
{
    if (cutoff && row >= cutoff)
        return rec_nq_seq(all, cols, d1, d2);
    if (cols == all)
        return 1;
    uint64_t res[32] = { 0 };
    unsigned k = 0;
    uint32_t avail = all & ~(cols | d1 | d2);
    while (avail) {
        uint32_t bit = avail & (0u - avail);
        avail ^= bit;
        uint32_t c = cols | bit, l = ((d1 | bit) << 1) & all, r = (d2 | bit) >> 1;
        uint64_t *slot = &res[k++];
        if (!avail) { /* the last branch: here */
            *slot = nq_omp(all, c, l, r, row + 1, cutoff);
            break;
        }
#pragma omp task firstprivate(slot, all, c, l, r, row, cutoff) default(none)
        *slot = nq_omp(all, c, l, r, row + 1, cutoff);
    }
#pragma omp taskwait
    uint64_t s = 0;
    for (unsigned i = 0; i < k; i++)
        s += res[i];
    return s;
}

__attribute__((noinline)) rec_result omp_rec_nqueens(uint64_t n, unsigned threads,
                                                     unsigned cutoff)
{
    uint64_t r = 0;
    uint32_t all = (uint32_t)((1ull << n) - 1);
#pragma omp parallel num_threads((int)threads) shared(r, all, cutoff) default(none)
#pragma omp single
    r = nq_omp(all, 0, 0, 0, 0, cutoff);
    return (rec_result){ r, 0 };
}

/* ---- uts, --shape loop ------------------------------------------------ */

/* The subtree of node id at `depth`, packed (REC_UTS_PACK): a task per
 * child, forked in a loop, then one taskwait (uts.c's loop shape). */
static int64_t uts_loop_omp(uint64_t id, uint32_t depth, unsigned cutoff)
{
    if (cutoff && depth >= cutoff) {
        rec_result r = { 0, 0 };
        rec_uts_seq(id, 0, &r);
        return REC_UTS_PACK(r.aux, r.value);
    }
    unsigned k = rec_uts_nchildren(id);
    if (!k)
        return REC_UTS_PACK(0, 1);
    int64_t res[REC_UTS_M];
    for (unsigned i = 0; i < k; i++) {
        uint64_t c = rec_uts_child(id, i);
        int64_t *slot = &res[i];
#pragma omp task firstprivate(slot, c, depth, cutoff) default(none)
        *slot = uts_loop_omp(c, depth + 1, cutoff);
    }
#pragma omp taskwait
    int64_t nodes = 1, h = 0;
    for (unsigned i = 0; i < k; i++) {
        nodes += res[i] & REC_UTS_NODES_MASK;
        if (res[i] >> REC_UTS_HEIGHT_SHIFT > h)
            h = res[i] >> REC_UTS_HEIGHT_SHIFT;
    }
    return REC_UTS_PACK(h + 1, nodes);
}

static void uts_loop_omp_root(uint64_t n, unsigned cutoff, int64_t *res, rec_result *r)
{
    uint64_t root = rec_uts_root();
    for (uint64_t i = 0; i < n; i++) {
        uint64_t c = rec_uts_child(root, (unsigned)i);
        int64_t *slot = &res[i];
#pragma omp task firstprivate(slot, c, cutoff) default(none)
        *slot = uts_loop_omp(c, 1, cutoff);
    }
#pragma omp taskwait
    for (uint64_t i = 0; i < n; i++) {
        r->value += (uint64_t)(res[i] & REC_UTS_NODES_MASK);
        if ((uint64_t)(res[i] >> REC_UTS_HEIGHT_SHIFT) + 1 > r->aux)
            r->aux = (uint64_t)(res[i] >> REC_UTS_HEIGHT_SHIFT) + 1;
    }
}

__attribute__((noinline)) rec_result omp_rec_uts_loop(uint64_t n, unsigned threads,
                                                      unsigned cutoff)
{
    rec_result r = { 1, 0 };
    int64_t *res = malloc(n * sizeof *res);
    if (res == NULL)
        return (rec_result){ UINT64_MAX, UINT64_MAX };
#pragma omp parallel num_threads((int)threads) shared(r, n, cutoff, res) default(none)
#pragma omp single
    uts_loop_omp_root(n, cutoff, res, &r);
    free(res);
    return r;
}
