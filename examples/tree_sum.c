/* SPDX-License-Identifier: MIT */
/*
 * tree_sum.c - sum the values of a balanced binary tree in parallel.
 *
 * The idiom from the top of clove.h: fork the right subtree, recurse into
 * the left one, and if nobody took the fork, sum the right subtree here.
 * The result is checked against a sequential walk and the closed form.
 *
 * usage: tree_sum [nodes [threads]]   (threads 0 = one per CPU)
 */
#include <clove.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct node {
    int64_t value;
    struct node *left, *right;
} node;

/* Build a balanced tree over nodes[lo, hi); node i holds the value i + 1. */
static node *build(node *nodes, size_t lo, size_t hi)
{
    if (lo >= hi)
        return NULL;
    size_t mid = lo + (hi - lo) / 2;
    node *n = &nodes[mid];
    n->value = (int64_t)mid + 1;
    n->left = build(nodes, lo, mid);
    n->right = build(nodes, mid + 1, hi);
    return n;
}

static int64_t sum_seq(const node *n)
{
    return n ? n->value + sum_seq(n->left) + sum_seq(n->right) : 0;
}

static int64_t sum(clove_task *t, const node *n);

/* The forked job: its argument and its result live in the parent's frame. */
struct sum_arg {
    const node *n;
    int64_t result;
};

static void sum_job(clove_task *t, void *p)
{
    struct sum_arg *a = p;
    a->result = sum(t, a->n);
}

static int64_t sum(clove_task *t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        {
            clove_future f;
            struct sum_arg right = {n->right, 0};
            clove_fork(t, &f, sum_job, &right); /* offer the right subtree */
            s += sum(t, n->left);               /* meanwhile, do the left one */
            if (clove_join(t, &f))              /* it ran elsewhere: */
                return s + right.result;        /* its sum is in right */
        }
        /* Nobody took it: compute it here. Outside the block that handed
         * out &right, the compiler can make this call a loop iteration. */
        return s + sum(t, n->right);
    }
    if (n->left)
        s += sum(t, n->left);
    if (n->right)
        s += sum(t, n->right);
    return s;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    unsigned threads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    node *nodes = n ? malloc(n * sizeof *nodes) : NULL;
    if (n == 0 || nodes == NULL)
        return fprintf(stderr, "tree_sum: need at least one node\n"), 2;
    struct sum_arg a = {build(nodes, 0, n), 0};

    clove_pool *pool;
    clove_config cfg = {.threads = threads};
    int rc = clove_pool_create(&pool, &cfg);
    if (rc != 0)
        return fprintf(stderr, "clove_pool_create: error %d\n", rc), 2;
    clove_pool_run(pool, sum_job, &a); /* a.result = sum(t, root) */

    int64_t want = sum_seq(a.n);
    int ok = a.result == want && want == (int64_t)n * ((int64_t)n + 1) / 2;
    printf("tree_sum: %zu nodes, %u threads: %" PRId64 " (%s)\n", n,
           clove_pool_threads(pool), a.result, ok ? "ok" : "WRONG");
    clove_pool_destroy(pool);
    free(nodes);
    return ok ? 0 : 1;
}
