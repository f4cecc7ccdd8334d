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
    uint64_t want; /* the sum of the nodes' distinct values */
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
    ft->want = 0;
    for (size_t i = 0; i < n; i++)
        ft->want += index_value(seed, i);
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

/* One run of the tree on p: every node visited exactly once, the sum of
 * their distinct values the sequential one. */
static void fan_run_checked(clove_pool *p, struct fan_tree *ft)
{
    for (size_t i = 0; i < ft->n; i++)
        atomic_store_explicit(&ft->seen[i], 0, memory_order_relaxed);
    struct fan_run r = {0};
    ASSERT_OK(clove_pool_run(p, fan_root, &r));
    for (size_t i = 0; i < ft->n; i++)
        ASSERT_EQ_U(atomic_load_explicit(&ft->seen[i], memory_order_relaxed), 1);
    ASSERT_EQ_U(r.sum, ft->want);
}

void test_fanout_wide(void)
{
    static const unsigned threads[] = {2, 8, 32};
    static const unsigned heartbeats[] = {1, 40};
    struct fan_tree ft;
    fan_build(&ft, scaled(3000, 300), scaled(200000, 20000), 0xfa40);
    fan_g = &ft;
    test_log("fan-out tree: %zu nodes, %u at the root\n", ft.n, ft.kids[0]);
    for (size_t hk = 0; hk < 2 * (sizeof threads / sizeof threads[0]); hk++) {
        size_t h = hk / (sizeof threads / sizeof threads[0]);
        size_t k = hk % (sizeof threads / sizeof threads[0]);
        clove_pool *p = make_pool(threads[k], heartbeats[h]);
        for (size_t round = 0; round < scaled(6, 2); round++)
            fan_run_checked(p, &ft);
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

/*
 * Direct requests: a worker that ran out of work asks a busy task, whose
 * next fork answers into the worker's mailbox; a task waiting at a join
 * for a job another worker runs asks that worker for part of it (share.c).
 * On a wide fan-out with two threads the worker runs out after every
 * range while the caller forks, and the caller often joins a child the
 * worker still runs, so both kinds of answer come within the first runs;
 * the test runs until each has come (a budget of seconds, for slow builds
 * and emulators) and checks every run's result meanwhile. Only where an
 * idle task spins (spin is off when the threads outnumber the CPUs),
 * since a task asks only for as long as it would spin. An answer needs
 * both threads on a CPU at once, so ctest runs this test alone
 * (RUN_SERIAL): beside busy tests on two cores that can fail to happen
 * for a minute.
 */
void test_fanout_direct_requests(void)
{
    if (test_cpu_count() < 2)
        test_skip("needs 2 CPUs: with fewer, idle tasks do not spin, and workers do not ask");
    struct fan_tree ft;
    fan_build(&ft, scaled(3000, 300), scaled(200000, 20000), 0xd1ec);
    fan_g = &ft;
    clove_pool *p = make_pool(2, 40);
    clove_stats s = {0}, per[2];
    unsigned rounds = 0;
    double t0 = now_s();
    do {
        fan_run_checked(p, &ft);
        rounds++;
        ASSERT_OK(clove_pool_stats(p, &s, per, 2));
    } while ((per[0].answered == 0 || per[1].answered == 0) && now_s() - t0 < 60);
    stats_settle(p);
    ASSERT_OK(clove_pool_stats(p, &s, per, 2));
    test_log("%u runs: %ju shared, %ju handed, %ju answered (%ju of them at the caller's "
             "joins), %ju sleeps\n", rounds, (uintmax_t)s.shared, (uintmax_t)s.handed,
             (uintmax_t)s.answered, (uintmax_t)per[0].answered, (uintmax_t)s.sleeps);
    /* The worker, out of work in its worker loop; the caller, at a join. */
    ASSERT_MSG(per[1].answered >= 1 && per[0].answered >= 1,
               "after %u runs in %.0f s, answers to the worker %ju, to the caller %ju "
               "(%ju shared, %ju handed, %ju sleeps)", rounds, now_s() - t0,
               (uintmax_t)per[1].answered, (uintmax_t)per[0].answered, (uintmax_t)s.shared,
               (uintmax_t)s.handed, (uintmax_t)s.sleeps);
    /* The caller never sleeps in a worker loop, so all it is handed is
     * answers. */
    ASSERT_EQ_U(per[0].handed, per[0].answered);
    ASSERT_LE_U(s.answered, s.handed);
    ASSERT_EQ_U(s.shared + s.stolen, s.ran + s.reclaimed);
    clove_pool_destroy(p);
    fan_g = NULL;
    fan_free(&ft);
}
