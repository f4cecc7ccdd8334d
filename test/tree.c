/* SPDX-License-Identifier: MIT */
/* tree.c - random trees with distinct values and a checked parallel sum. */
#include "test.h"

#include <stdlib.h>

static _Atomic uint64_t taken_count;

const char *shape_name(enum tree_shape s)
{
    switch (s) {
    case SHAPE_RANDOM: return "random";
    case SHAPE_UNBALANCED: return "unbalanced";
    case SHAPE_CHAIN: return "chain";
    case SHAPE_COMPLETE: return "complete";
    default: return "?";
    }
}

/* Size of the left subtree of a node whose subtrees hold m nodes. */
static size_t left_size(test_rng *r, enum tree_shape shape, size_t m)
{
    switch (shape) {
    case SHAPE_RANDOM:
        return (size_t)rng_below(r, (uint64_t)m + 1);
    case SHAPE_UNBALANCED:
        if (rng_below(r, 8) != 0) {
            size_t right = (size_t)rng_below(r, 3);
            return right > m ? 0 : m - right;
        }
        return (size_t)rng_below(r, (uint64_t)m + 1);
    case SHAPE_CHAIN:
        return (m >= 2 && rng_below(r, 2)) ? m - 1 : m;
    case SHAPE_COMPLETE:
    default:
        return m / 2;
    }
}

void tree_build(struct tree *tr, size_t n, enum tree_shape shape, uint64_t seed)
{
    ASSERT(n >= 1);
    tr->n = n;
    tr->nodes = calloc(n, sizeof *tr->nodes);
    tr->visits = calloc(n, sizeof *tr->visits);
    ASSERT(tr->nodes != NULL && tr->visits != NULL);

    /* Iterative preorder construction: a stack of (link to fill, size). */
    struct pending {
        struct tnode **link;
        size_t size;
    };
    struct pending *stack = malloc(n * sizeof *stack);
    ASSERT(stack != NULL);
    size_t sp = 0, next = 0;
    test_rng r = {seed};
    tr->root = NULL;
    stack[sp++] = (struct pending){&tr->root, n};
    while (sp > 0) {
        struct pending pd = stack[--sp];
        if (pd.size == 0)
            continue;
        struct tnode *nd = &tr->nodes[next];
        nd->index = next;
        nd->value = index_value(seed, next);
        next++;
        *pd.link = nd;
        size_t m = pd.size - 1;
        size_t l = left_size(&r, shape, m);
        /* Push right first so that the left subtree is numbered first. */
        if (m - l)
            stack[sp++] = (struct pending){&nd->right, m - l};
        if (l)
            stack[sp++] = (struct pending){&nd->left, l};
    }
    free(stack);
    ASSERT_EQ_U(next, n);

    tr->expect.sum = tr->expect.hash = 0;
    for (size_t i = 0; i < n; i++) {
        tr->expect.sum += tr->nodes[i].value;
        tr->expect.hash += index_hash(tr->nodes[i].value, i);
    }
}

void tree_free(struct tree *tr)
{
    free(tr->nodes);
    free((void *)tr->visits);
    tr->nodes = NULL;
    tr->visits = NULL;
}

struct sum_job {
    const struct tree *tr;
    const struct tnode *n;
    clove_task *forker;
    struct sums result;
};

static void sum_job_fn(clove_task *t, void *arg)
{
    struct sum_job *j = arg;
    if (t != j->forker)
        atomic_fetch_add_explicit(&taken_count, 1, memory_order_relaxed);
    j->result = tree_sum(t, j->tr, j->n);
}

struct sums tree_sum(clove_task *t, const struct tree *tr, const struct tnode *n)
{
    struct sums s = {0, 0};
    /* Walk single-child spines iteratively; recurse (and fork) only where a
     * node has two children. */
    while (n) {
        atomic_fetch_add_explicit(&tr->visits[n->index], 1, memory_order_relaxed);
        s.sum += n->value;
        s.hash += index_hash(n->value, n->index);
        if (n->left && n->right) {
            struct sum_job j = {tr, n->right, t, {0, 0}};
            clove_future f;
            clove_fork(t, &f, sum_job_fn, &j);
            sums_add(&s, tree_sum(t, tr, n->left));
            if (!clove_join(t, &f))
                j.result = tree_sum(t, tr, n->right);
            sums_add(&s, j.result);
            return s;
        }
        n = n->left ? n->left : n->right;
    }
    return s;
}

/* The same walk with clove_fork_value: the forked subtree's hash sum comes
 * back through clove_join_value (the value a taken job returned). */
static int64_t hash_job_fn(clove_task *t, void *arg);

struct hash_arg {
    const struct tree *tr;
    const struct tnode *n;
    clove_task *forker;
};

uint64_t tree_hash_value(clove_task *t, const struct tree *tr, const struct tnode *n)
{
    uint64_t h = 0;
    while (n) {
        atomic_fetch_add_explicit(&tr->visits[n->index], 1, memory_order_relaxed);
        h += index_hash(n->value, n->index);
        if (n->left && n->right) {
            /* The argument must outlive a job that runs elsewhere until
             * the join: it lives in this frame, which does. */
            struct hash_arg a = {tr, n->right, t};
            clove_future f;
            int64_t r;
            clove_fork_value(t, &f, hash_job_fn, &a);
            h += tree_hash_value(t, tr, n->left);
            if (!clove_join_value(t, &f, &r))
                r = (int64_t)tree_hash_value(t, tr, n->right);
            return h + (uint64_t)r;
        }
        n = n->left ? n->left : n->right;
    }
    return h;
}

static int64_t hash_job_fn(clove_task *t, void *arg)
{
    struct hash_arg *a = arg;
    if (t != a->forker)
        atomic_fetch_add_explicit(&taken_count, 1, memory_order_relaxed);
    return (int64_t)tree_hash_value(t, a->tr, a->n);
}

void tree_check(const struct tree *tr, struct sums got)
{
    for (size_t i = 0; i < tr->n; i++) {
        uint32_t v = atomic_load_explicit(&tr->visits[i], memory_order_relaxed);
        ASSERT_MSG(v == 1, "tree node %zu of %zu visited %u times", i, tr->n, v);
        atomic_store_explicit(&tr->visits[i], 0, memory_order_relaxed);
    }
    ASSERT_EQ_U(got.sum, tr->expect.sum);
    ASSERT_EQ_U(got.hash, tr->expect.hash);
}

uint64_t tree_taken_count(void)
{
    return atomic_load(&taken_count);
}

struct run_tree_arg {
    const struct tree *tr;
    struct sums got;
};

static void run_tree_fn(clove_task *t, void *arg)
{
    struct run_tree_arg *a = arg;
    a->got = tree_sum(t, a->tr, a->tr->root);
}

void run_tree_checked(clove_pool *pool, const struct tree *tr)
{
    struct run_tree_arg a = {tr, {0, 0}};
    ASSERT_OK(clove_pool_run(pool, run_tree_fn, &a));
    tree_check(tr, a.got);
}

static void run_hash_fn(clove_task *t, void *arg)
{
    struct run_tree_arg *a = arg;
    a->got.hash = tree_hash_value(t, a->tr, a->tr->root);
    a->got.sum = a->tr->expect.sum; /* not computed by this walk */
}

void run_tree_value_checked(clove_pool *pool, const struct tree *tr)
{
    struct run_tree_arg a = {tr, {0, 0}};
    ASSERT_OK(clove_pool_run(pool, run_hash_fn, &a));
    tree_check(tr, a.got);
}
