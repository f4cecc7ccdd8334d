/* SPDX-License-Identifier: MIT */
/*
 * nqueens.c - count the solutions of the n-queens problem, forking at
 * every branch of the search.
 *
 * A board is three bitmasks of attacked columns (by column, and by the two
 * diagonals) for the next row. The free squares of that row are the
 * branches. Instead of a loop over them with one future per square, the
 * set of branches is split in two: the lowest free square is explored
 * here and the set of all the others is forked. So every branch of the
 * search tree is a fork, with one future per stack frame, and the
 * heartbeat decides which of them actually run elsewhere: no cutoff depth.
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

/* One node of the search: queens already placed and what they attack in
 * the next row, plus the squares of that row still to try (branches). */
struct node {
    uint32_t all;      /* n one-bits: the columns of the board */
    uint32_t cols;     /* columns taken */
    uint32_t left;     /* attacked through a down-left diagonal */
    uint32_t right;    /* attacked through a down-right diagonal */
    uint32_t branches; /* free squares of this row not yet explored */
    uint64_t count;    /* result: solutions below these branches */
};

static void branches_job(clove_task *t, void *p);

/* Solutions reachable through the squares in nd->branches. */
static uint64_t explore(clove_task *t, const struct node *nd)
{
    if (nd->cols == nd->all) /* a queen on every row: one solution */
        return 1;
    if (nd->branches == 0)
        return 0;
    uint32_t bit = nd->branches & -nd->branches; /* lowest free square */

    /* Fork: every other square of this row. */
    struct node rest = *nd;
    rest.branches &= ~bit;
    rest.count = 0;
    clove_future f;
    clove_fork(t, &f, branches_job, &rest);

    /* Here: put a queen on `bit` and go one row down. */
    struct node child = {
        .all = nd->all,
        .cols = nd->cols | bit,
        .left = ((nd->left | bit) << 1) & nd->all,
        .right = (nd->right | bit) >> 1,
    };
    child.branches = ~(child.cols | child.left | child.right) & nd->all;
    uint64_t count = explore(t, &child);

    if (!clove_join(t, &f)) /* nobody took the other squares */
        rest.count = explore(t, &rest);
    return count + rest.count;
}

static void branches_job(clove_task *t, void *p)
{
    struct node *nd = p;
    nd->count = explore(t, nd);
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
        struct node root = {.all = all, .branches = all};
        clove_pool_run(pool, branches_job, &root); /* this thread joins in */
        int good = root.count == known[size];
        ok &= good;
        if (!good || size == n)
            printf("nqueens(%u) = %" PRIu64 " on %u threads (%s)\n", size,
                   root.count, clove_pool_threads(pool),
                   good ? "ok" : "WRONG");
    }
    if (ok && n > 1)
        printf("nqueens: sizes 1 .. %u all match the known counts\n", n);
    clove_pool_destroy(pool);
    return ok ? 0 : 1;
}
