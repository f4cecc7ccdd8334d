/* SPDX-License-Identifier: MIT */
/* test_tree.c - recursive sums over random tree shapes, heartbeat 1 us, with
 * both fork forms (clove_fork and clove_fork_value). */
#include "test.h"

#include <stdio.h>

void test_tree_random_shapes(void)
{
    static const unsigned threads[] = {1, 2, 3, 8, 32};
    struct {
        enum tree_shape shape;
        size_t n;
    } cases[] = {
        {SHAPE_RANDOM, scaled(200000, 2000)},
        {SHAPE_RANDOM, 1},
        {SHAPE_RANDOM, 2},
        {SHAPE_RANDOM, 3},
        {SHAPE_UNBALANCED, scaled(100000, 2000)},
        {SHAPE_CHAIN, scaled(6000, 1000)}, /* depth ~ 2/3 n: stack-bound */
        {SHAPE_COMPLETE, scaled(262143, 4095)},
    };
    const size_t ncases = sizeof cases / sizeof cases[0];
    struct tree trees[sizeof cases / sizeof cases[0]];
    for (size_t c = 0; c < ncases; c++)
        tree_build(&trees[c], cases[c].n, cases[c].shape, 0x7ee0000 + c);

    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        uint64_t before = tree_taken_count();
        for (size_t round = 0; round < scaled(8, 2); round++)
            for (size_t c = 0; c < ncases; c++) {
                run_tree_checked(p, &trees[c]);
                run_tree_value_checked(p, &trees[c]);
            }
        uint64_t taken = tree_taken_count() - before;
        if (threads[k] == 1)
            ASSERT_EQ_U(taken, 0);
        test_log("trees threads=%u: %" PRIu64 " subtrees ran elsewhere\n", threads[k],
                 taken);
        clove_pool_destroy(p);
    }

    /* Fresh random trees of every shape, a different one per round. */
    clove_pool *p = make_pool(3, 1);
    size_t rounds = scaled(300, 30);
    for (size_t i = 0; i < rounds; i++) {
        struct tree tr;
        enum tree_shape shape = (enum tree_shape)(i % SHAPE_COUNT);
        size_t n = 1 + (size_t)mix64(i) % scaled(20000, 500);
        tree_build(&tr, n, shape, 0xf00d + i);
        if (i % 2)
            run_tree_value_checked(p, &tr);
        else
            run_tree_checked(p, &tr);
        tree_free(&tr);
    }
    clove_pool_destroy(p);

    for (size_t c = 0; c < ncases; c++)
        tree_free(&trees[c]);
}
