/* SPDX-License-Identifier: MIT */
/*
 * nqueens.c - count the solutions of the n-queens problem, forking at
 * every branch of the search.
 *
 * A board is three bitmasks of attacked columns (by column, and by the two
 * diagonals) for the next row. The free squares of that row are the
 * branches. Instead of a loop over them with one future per square, the
 * set of branches is split in two: the lowest free square is explored
 * here and the set of all the others is forked, a typed task (CLOVE_TASK)
 * of the five masks. So every branch of the search tree is a fork, with
 * one future per stack frame, and the heartbeat decides which of them
 * actually run elsewhere: no cutoff depth.
 *
 * The counts for every board size from 1 to n are checked against the
 * known values (OEIS A000170).
 *
 * usage: nqueens [n [threads]]   (1 <= n <= 17; threads 0 = one per CPU)
 */
#include <clove.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const uint64_t known[] = {
    0, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596,
    2279184, 14772512, 95815104,
};
#define MAX_N (sizeof known / sizeof known[0] - 1)

/* Solutions reachable through the squares in `branches` of the next
 * row, below queens that occupy the columns `cols` and attack `left` and
 * `right` in that row through the two diagonals (all: n one-bits, the
 * columns of the board). */
static uint64_t explore(clove_task *t, uint32_t all, uint32_t cols, uint32_t left,
                        uint32_t right, uint32_t branches);
CLOVE_TASK(uint64_t, explore, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t);

static uint64_t explore(clove_task *t, uint32_t all, uint32_t cols, uint32_t left,
                        uint32_t right, uint32_t branches)
{
    if (cols == all) /* a queen on every row: one solution */
        return 1;
    if (branches == 0)
        return 0;
    uint32_t bit = branches & -branches; /* lowest free square */
    /* Fork: every other square of this row. */
    CLOVE_FORK(t, explore, rest, all, cols, left, right, branches & ~bit);
    /* Here: put a queen on `bit` and go one row down. */
    uint32_t c = cols | bit, l = ((left | bit) << 1) & all, r = (right | bit) >> 1;
    uint64_t count = explore(t, all, c, l, r, ~(c | l | r) & all);
    return count + CLOVE_JOIN(t, rest); /* the other squares' count */
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 12;
    unsigned threads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    if (n < 1 || n > MAX_N)
        return fprintf(stderr, "nqueens: n must be 1 .. %zu\n", MAX_N), 2;

    clove_pool *pool;
    clove_config cfg = {.threads = threads};
    int rc = clove_pool_create(&pool, &cfg);
    if (rc != 0)
        return fprintf(stderr, "clove_pool_create: error %d\n", rc), 2;

    int ok = 1;
    for (unsigned size = 1; size <= n; size++) {
        uint32_t all = (uint32_t)((1u << size) - 1);
        uint64_t count = 0; /* this thread joins in: */
        CLOVE_POOL_RUN(pool, explore, &count, all, 0, 0, 0, all);
        int good = count == known[size];
        ok &= good;
        if (!good || size == n)
            printf("nqueens(%u) = %" PRIu64 " on %u threads (%s)\n", size, count,
                   clove_pool_threads(pool), good ? "ok" : "WRONG");
    }
    if (ok && n > 1)
        printf("nqueens: sizes 1 .. %u all match the known counts\n", n);
    clove_pool_destroy(pool);
    return ok ? 0 : 1;
}
