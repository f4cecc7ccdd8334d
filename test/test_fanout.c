/* SPDX-License-Identifier: MIT */
/*
 * test_fanout.c - wide fan-out: every node forks all its children in a
 * loop and joins them newest first, as Lace's and Cilk's UTS do. The
 * records such a node leaves queued are the ones a request is answered
 * with (src/share.c, "Requests and batches"): a batch after a shared job
 * shorter than an eighth of an interval, one record after a longer one.
 * Heartbeats of 1 us (nearly every job is a longer one) and 40 us (leaves
 * and small subtrees are short), more threads than cores, both fork forms
 * mixed within one node's children; every node must run exactly once and
 * the sum must be the sequential one. A batch's records are claimed one by
 * one (src/share.c, "Claims"), and runners holding stale ranges load the
 * states of records forked again since. No fork writes the state word;
 * half of these forks take integer arguments of every residue modulo 8,
 * so a (debug) fork that stored anything derived from its argument there
 * with the SHARED tag's bits would have its job claimed and run twice
 * here.
 */
#include "test.h"

#include <stdlib.h>

/* A random fan-out tree, numbered breadth first: node i has kids[i]
 * children, first[i] .. first[i] + kids[i] - 1. */
struct fan_tree {
    size_t n;
    uint32_t *first, *kids;
    uint64_t seed;
    _Atomic uint32_t *seen;
};

static void fan_build(struct fan_tree *ft, size_t root_kids, size_t max_nodes, uint64_t seed)
{
    ft->first = calloc(max_nodes, sizeof *ft->first);
    ft->kids = calloc(max_nodes, sizeof *ft->kids);
    ft->seen = calloc(max_nodes, sizeof *ft->seen);
    ASSERT(ft->first && ft->kids && ft->seen);
    ft->seed = seed;
    test_rng r = {seed};
    size_t n = 1;
    for (size_t i = 0; i < n; i++) {
        /* Most nodes are leaves (as in UTS); the others fan out wide. */
        size_t k = i == 0 ? root_kids : rng_below(&r, 8) < 5 ? 0 : 1 + rng_below(&r, 24);
        if (k > max_nodes - n)
            k = max_nodes - n;
        ft->first[i] = (uint32_t)n;
        ft->kids[i] = (uint32_t)k;
        n += k;
    }
    ft->n = n;
}

static void fan_free(struct fan_tree *ft)
{
    free(ft->first);
    free(ft->kids);
    free((void *)ft->seen);
}

static const struct fan_tree *fan_g; /* the tree the value-form jobs walk */

static uint64_t fan_node(clove_task *t, uint32_t i);

static int64_t fan_value_job(clove_task *t, void *i)
{
    return (int64_t)fan_node(t, (uint32_t)(uintptr_t)i);
}

struct fan_arg {
    uint32_t i;
    uint64_t sum;
};

static void fan_void_job(clove_task *t, void *p)
{
    struct fan_arg *a = p;
    a->sum = fan_node(t, a->i);
}

/* The subtree sum of node i: its children forked in a loop (the even
 * ones with clove_fork_value, the odd ones with clove_fork), then joined
 * newest first. */
static uint64_t fan_node(clove_task *t, uint32_t i)
{
    const struct fan_tree *ft = fan_g;
    atomic_fetch_add_explicit(&ft->seen[i], 1, memory_order_relaxed);
    uint64_t s = index_value(ft->seed, i);
    uint32_t k = ft->kids[i], c0 = ft->first[i];
    if (k == 0)
        return s;
    clove_future stack_f[24];
    struct fan_arg stack_a[24];
    clove_future *f = k <= 24 ? stack_f : malloc(k * sizeof *f);
    struct fan_arg *a = k <= 24 ? stack_a : malloc(k * sizeof *a);
    ASSERT(f && a);
    for (uint32_t c = 0; c < k; c++) {
        if (c % 2 == 0) {
            clove_fork_value(t, &f[c], fan_value_job, (void *)(uintptr_t)(c0 + c));
        } else {
            a[c] = (struct fan_arg){c0 + c, 0};
            clove_fork(t, &f[c], fan_void_job, &a[c]);
        }
    }
    for (uint32_t c = k; c-- > 0;) {
        if (c % 2 == 0) {
            int64_t r;
            if (!clove_join_value(t, &f[c], &r))
                r = (int64_t)fan_node(t, c0 + c);
            s += (uint64_t)r;
        } else {
            if (!clove_join(t, &f[c]))
                a[c].sum = fan_node(t, c0 + c);
            s += a[c].sum;
        }
    }
    if (k > 24) {
        free(f);
        free(a);
    }
    return s;
}

struct fan_run {
    uint64_t sum;
};

static void fan_root(clove_task *t, void *p)
{
    struct fan_run *r = p;
    r->sum = fan_node(t, 0);
}

void test_fanout_wide(void)
{
    static const unsigned threads[] = {2, 8, 32};
    static const unsigned heartbeats[] = {1, 40};
    struct fan_tree ft;
    fan_build(&ft, scaled(3000, 300), scaled(200000, 20000), 0xfa40);
    fan_g = &ft;
    uint64_t want = 0;
    for (size_t i = 0; i < ft.n; i++)
        want += index_value(ft.seed, i);
    test_log("fan-out tree: %zu nodes, %u at the root\n", ft.n, ft.kids[0]);
    for (size_t hk = 0; hk < 2 * (sizeof threads / sizeof threads[0]); hk++) {
        size_t h = hk / (sizeof threads / sizeof threads[0]);
        size_t k = hk % (sizeof threads / sizeof threads[0]);
        clove_pool *p = make_pool(threads[k], heartbeats[h]);
        for (size_t round = 0; round < scaled(6, 2); round++) {
            for (size_t i = 0; i < ft.n; i++)
                atomic_store_explicit(&ft.seen[i], 0, memory_order_relaxed);
            struct fan_run r = {0};
            ASSERT_OK(clove_pool_run(p, fan_root, &r));
            for (size_t i = 0; i < ft.n; i++) {
                uint32_t seen = atomic_load_explicit(&ft.seen[i], memory_order_relaxed);
                ASSERT_EQ_U(seen, 1);
            }
            ASSERT_EQ_U(r.sum, want);
        }
        clove_stats s;
        stats_settle(p);
        ASSERT_OK(clove_pool_stats(p, &s, NULL, 0));
        test_log("heartbeat %u us, threads %u: %ju shared, %ju reclaimed, %ju ran\n",
                 heartbeats[h], threads[k], (uintmax_t)s.shared, (uintmax_t)s.reclaimed,
                 (uintmax_t)s.ran);
        ASSERT_EQ_U(s.shared + s.stolen, s.ran + s.reclaimed);
        clove_pool_destroy(p);
    }
    fan_g = NULL;
    fan_free(&ft);
}
