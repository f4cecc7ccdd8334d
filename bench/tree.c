/* SPDX-License-Identifier: MIT */
/*
 * tree.c - the tree shared by the C benchmarks (tree_sum, idle): building
 * it, freeing it, and clove's sum over it (the idiom from clove.h).
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

void tree_sum_job(clove_task *t, void *p)
{
    struct tree_sum_arg *a = p;
    a->result = tree_sum_clove(t, a->n);
}

static int64_t tree_sum_value_job(clove_task *t, void *n)
{
    return tree_sum_clove(t, n);
}

int64_t tree_sum_clove(clove_task *t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        clove_future f;
        int64_t r;
        clove_fork_value(t, &f, tree_sum_value_job, (void *)n->right);
        s += tree_sum_clove(t, n->left);
        if (!clove_join_value(t, &f, &r))
            r = tree_sum_clove(t, n->right);
        return s + r;
    }
    if (n->left)
        s += tree_sum_clove(t, n->left);
    if (n->right)
        s += tree_sum_clove(t, n->right);
    return s;
}
