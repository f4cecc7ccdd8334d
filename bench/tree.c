/* SPDX-License-Identifier: MIT */
/*
 * tree.c - the tree shared by the C benchmarks (tree_sum, idle): building
 * it and freeing it. clove's sums over it are in tree_forms.c.
 */
#include "tree.h"

#include <stdio.h>
#include <stdlib.h>

node *tree_build(int64_t lo, int64_t hi)
{
    if (lo > hi)
        return NULL;
    int64_t mid = lo + (hi - lo) / 2;
    node *n = malloc(sizeof *n);
    if (!n) {
        fputs("bench: out of memory building the tree\n", stderr);
        exit(2);
    }
    n->value = mid;
    n->left = tree_build(lo, mid - 1);
    n->right = tree_build(mid + 1, hi);
    return n;
}

void tree_destroy(node *n)
{
    while (n) {
        tree_destroy(n->left);
        node *r = n->right;
        free(n);
        n = r;
    }
}
