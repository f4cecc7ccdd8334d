/* SPDX-License-Identifier: MIT */
/*
 * test_pool.c - pools: concurrent and nested clove_pool_run, create and
 * destroy cycles, argument checking, and sleeping when idle.
 *
 * Built with CLOVE_DEBUG on, so that every fork/join here also checks that
 * the task is the calling thread's current one (e.g. after a nested run
 * on another pool returned).
 */
#undef CLOVE_DEBUG
#define CLOVE_DEBUG 1
#include "test.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* Several external threads in clove_pool_run on one pool                   */
/* ------------------------------------------------------------------------ */

#define NEXT 4

struct ext_shared {
    clove_pool *pool;
    size_t rounds;
    pthread_barrier_t barrier;
};

struct ext_thread {
    struct ext_shared *sh;
    unsigned id;
    struct tree tr;
    size_t nfor;
    _Atomic uint8_t *hits;
    clove_task *seen_task;
};

struct ext_for {
    uint64_t seed;
    size_t n;
    _Atomic uint8_t *hits;
    _Atomic uint64_t sum;
};

static void ext_for_body(clove_task *t, size_t lo, size_t hi, void *arg)
{
    (void)t;
    struct ext_for *c = arg;
    ASSERT(lo < hi && hi <= c->n);
    uint64_t s = 0;
    for (size_t i = lo; i < hi; i++) {
        atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
        s += index_hash(index_value(c->seed, i), i);
    }
    atomic_fetch_add_explicit(&c->sum, s, memory_order_relaxed);
}

struct ext_run {
    struct ext_thread *th;
    struct ext_for loop;
    struct sums got;
};

static void ext_run_fn(clove_task *t, void *arg)
{
    struct ext_run *r = arg;
    r->th->seen_task = t;
    ASSERT_EQ_P(t->pool, r->th->sh->pool);
    r->got = tree_sum(t, &r->th->tr, r->th->tr.root);
    clove_for(t, 0, r->loop.n, ext_for_body, &r->loop);
}

static void *ext_main(void *arg)
{
    struct ext_thread *th = arg;
    for (size_t round = 0; round < th->sh->rounds; round++) {
        int rc = pthread_barrier_wait(&th->sh->barrier);
        ASSERT(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
        struct ext_run r = {th, {mix64(th->id * 1000 + round), th->nfor, th->hits, 0},
                            {0, 0}};
        ASSERT_OK(clove_pool_run(th->sh->pool, ext_run_fn, &r));
        tree_check(&th->tr, r.got);
        uint64_t e = 0;
        for (size_t i = 0; i < th->nfor; i++) {
            ASSERT_MSG(atomic_load(&th->hits[i]) == 1, "thread %u index %zu hit %u times",
                       th->id, i, atomic_load(&th->hits[i]));
            atomic_store(&th->hits[i], 0);
            e += index_hash(index_value(r.loop.seed, i), i);
        }
        ASSERT_EQ_U(atomic_load(&r.loop.sum), e);
        ASSERT_NE_P(th->seen_task, NULL);
    }
    return NULL;
}

static void external_threads_on(clove_pool *p, size_t rounds)
{
    struct ext_shared sh;
    sh.pool = p;
    sh.rounds = rounds;
    ASSERT_OK(pthread_barrier_init(&sh.barrier, NULL, NEXT));
    struct ext_thread th[NEXT];
    pthread_t tid[NEXT];
    for (unsigned i = 0; i < NEXT; i++) {
        th[i].sh = &sh;
        th[i].id = i;
        tree_build(&th[i].tr, scaled(30000, 1000) + i * 7, (enum tree_shape)(i % SHAPE_COUNT),
                   0xe0 + i);
        th[i].nfor = scaled(50000, 1000) + i * 13;
        th[i].hits = calloc(th[i].nfor, sizeof *th[i].hits);
        ASSERT(th[i].hits);
        th[i].seen_task = NULL;
    }
    for (unsigned i = 0; i < NEXT; i++)
        ASSERT_OK(pthread_create(&tid[i], NULL, ext_main, &th[i]));
    for (unsigned i = 0; i < NEXT; i++)
        ASSERT_OK(pthread_join(tid[i], NULL));
    for (unsigned i = 0; i < NEXT; i++) {
        tree_free(&th[i].tr);
        free((void *)th[i].hits);
    }
    pthread_barrier_destroy(&sh.barrier);
}

void test_external_threads_run(void)
{
    size_t rounds = scaled(100, 8);
    static const struct {
        unsigned threads, hb;
    } cfgs[] = {{3, 1}, {2, 0}, {1, 1}, {8, 1}};
    long maps = job_stack_maps();
    for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
        clove_pool *p = make_pool(cfgs[k].threads, cfgs[k].hb);
        external_threads_on(p, rounds);
        /* Threads inside at once mapped more job stacks: kept as spares,
         * at most one per thread that was ever inside at once. */
        long during = job_stack_maps();
        if (maps >= 0)
            ASSERT(during - maps <= (long)(cfgs[k].threads - 1 + NEXT + 1));
        clove_pool_destroy(p);
        ASSERT_EQ_U(job_stack_maps(), maps);
    }
}

/* ------------------------------------------------------------------------ */
/* Nested clove_pool_run                                                    */
/* ------------------------------------------------------------------------ */

struct nest_arg {
    clove_pool *pool;   /* the pool to nest into */
    clove_pool *other;  /* another pool (for A -> B -> A) */
    clove_task *expect; /* the task the nested call must get, or NULL */
    clove_task *got;
    const struct tree *tr;
    unsigned depth;
};

static void same_inner(clove_task *t, void *arg)
{
    struct nest_arg *a = arg;
    a->got = t;
    ASSERT_EQ_P(t, a->expect);
    struct sums s = tree_sum(t, a->tr, a->tr->root);
    tree_check(a->tr, s);
    if (a->depth > 0) {
        struct nest_arg b = *a;
        b.depth--;
        b.got = NULL;
        ASSERT_OK(clove_pool_run(a->pool, same_inner, &b));
        ASSERT_EQ_P(b.got, t);
    }
}

/* A tree of forks whose leaves each make a nested call: on whichever task
 * (a pool-owned worker or the external one) runs the leaf. */
struct leaf_arg {
    clove_pool *pool;
    const struct tree *trees; /* [nleaves], one per leaf */
    size_t lo, hi;
    void (*leaf)(clove_task *t, clove_pool *pool, const struct tree *tr);
};

static void leaves_fn(clove_task *t, void *arg)
{
    struct leaf_arg *a = arg;
    if (a->hi - a->lo == 1) {
        a->leaf(t, a->pool, &a->trees[a->lo]);
        return;
    }
    size_t mid = a->lo + (a->hi - a->lo) / 2;
    struct leaf_arg l = *a, r = *a;
    l.hi = mid;
    r.lo = mid;
    clove_join2(t, leaves_fn, &l, leaves_fn, &r);
}

static void same_leaf(clove_task *t, clove_pool *pool, const struct tree *tr)
{
    struct nest_arg b = {pool, NULL, t, NULL, tr, 1};
    ASSERT_OK(clove_pool_run(pool, same_inner, &b));
    ASSERT_EQ_P(b.got, t);
}

#define NLEAVES 24

static void make_leaf_trees(struct tree *trees, uint64_t seed)
{
    for (size_t i = 0; i < NLEAVES; i++)
        tree_build(&trees[i], scaled(3000, 200) + i, (enum tree_shape)(i % SHAPE_COUNT),
                   seed + i);
}

static void free_leaf_trees(struct tree *trees)
{
    for (size_t i = 0; i < NLEAVES; i++)
        tree_free(&trees[i]);
}

static void same_outer(clove_task *t, void *arg)
{
    struct nest_arg *a = arg;
    struct nest_arg b = *a;
    b.expect = t;
    ASSERT_OK(clove_pool_run(a->pool, same_inner, &b));
    ASSERT_EQ_P(b.got, t);
    ASSERT_EQ_P(t->top, t->base);
}

static void leaves_outer(clove_task *t, void *arg)
{
    leaves_fn(t, arg);
}

void test_nested_run_same_pool(void)
{
    static const unsigned threads[] = {1, 3, 8};
    struct tree tr;
    tree_build(&tr, scaled(20000, 1000), SHAPE_RANDOM, 0x5a3e);
    struct tree leaves[NLEAVES];
    make_leaf_trees(leaves, 0x1eaf);
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        for (size_t r = 0; r < scaled(10, 2); r++) {
            struct nest_arg a = {p, NULL, NULL, NULL, &tr, 3};
            ASSERT_OK(clove_pool_run(p, same_outer, &a));
            struct leaf_arg la = {p, leaves, 0, NLEAVES, same_leaf};
            ASSERT_OK(clove_pool_run(p, leaves_outer, &la));
        }
        clove_pool_destroy(p);
    }
    free_leaf_trees(leaves);
    tree_free(&tr);
}

/* In another pool's task: a temporary worker of that pool. */
struct other_arg {
    clove_pool *pool;        /* pool being entered */
    clove_pool *back;        /* if set, enter this one again from inside */
    clove_task *outer;       /* the caller's task, of another pool */
    const struct tree *tr;
    clove_task *got;
};

static void other_inner(clove_task *t, void *arg)
{
    struct other_arg *a = arg;
    a->got = t;
    ASSERT_NE_P(t, a->outer);
    ASSERT_EQ_P(t->pool, a->pool);
    ASSERT_EQ_P(t->top, t->base);
    struct sums s = tree_sum(t, a->tr, a->tr->root);
    tree_check(a->tr, s);
    if (a->back) {
        /* A -> B -> A: a new temporary task of A on this thread. */
        struct other_arg c = {a->back, NULL, t, a->tr, NULL};
        ASSERT_OK(clove_pool_run(a->back, other_inner, &c));
        ASSERT_NE_P(c.got, t);
        ASSERT_NE_P(c.got, a->outer);
    }
    /* The task still works after the nested call returned. */
    s = tree_sum(t, a->tr, a->tr->root);
    tree_check(a->tr, s);
}

static void other_leaf(clove_task *t, clove_pool *pool, const struct tree *tr)
{
    struct other_arg b = {pool, NULL, t, tr, NULL};
    ASSERT_OK(clove_pool_run(pool, other_inner, &b));
    ASSERT_NE_P(b.got, NULL);
    /* Back on t: fork/join on it again (debug checks it is current). */
    struct sums s = tree_sum(t, tr, tr->root);
    tree_check(tr, s);
}

struct other_outer_arg {
    clove_pool *a, *b;
    const struct tree *tr;
    struct tree *leaves;
};

static void other_outer(clove_task *t, void *arg)
{
    struct other_outer_arg *o = arg;
    ASSERT_EQ_P(t->pool, o->a);
    struct other_arg b = {o->b, o->a, t, o->tr, NULL};
    ASSERT_OK(clove_pool_run(o->b, other_inner, &b));
    ASSERT_NE_P(b.got, NULL);
    ASSERT_EQ_P(t->top, t->base);
    struct sums s = tree_sum(t, o->tr, o->tr->root);
    tree_check(o->tr, s);
    /* Leaves of a forked tree in A enter B, from pool-owned workers too. */
    struct leaf_arg la = {o->b, o->leaves, 0, NLEAVES, other_leaf};
    leaves_fn(t, &la);
}

void test_nested_run_other_pool(void)
{
    struct tree tr;
    tree_build(&tr, scaled(20000, 1000), SHAPE_UNBALANCED, 0x07e);
    struct tree leaves[NLEAVES];
    make_leaf_trees(leaves, 0x1eaf2);
    static const struct {
        unsigned a, b;
    } cfgs[] = {{3, 2}, {2, 3}, {1, 3}, {3, 1}, {8, 8}};
    for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
        clove_pool *a = make_pool(cfgs[k].a, 1);
        clove_pool *b = make_pool(cfgs[k].b, 1);
        for (size_t r = 0; r < scaled(10, 2); r++) {
            struct other_outer_arg o = {a, b, &tr, leaves};
            ASSERT_OK(clove_pool_run(a, other_outer, &o));
            /* And the other way round. */
            struct other_outer_arg o2 = {b, a, &tr, leaves};
            ASSERT_OK(clove_pool_run(b, other_outer, &o2));
        }
        clove_pool_destroy(b);
        clove_pool_destroy(a);
    }
    free_leaf_trees(leaves);
    tree_free(&tr);
}

/* ------------------------------------------------------------------------ */
/* Create and destroy                                                       */
/* ------------------------------------------------------------------------ */

void test_create_destroy_cycles(void)
{
    unsigned base = thread_baseline();
    long maps = job_stack_maps();
    size_t cycles = scaled(1000, 100);
    struct tree tr;
    tree_build(&tr, 500, SHAPE_RANDOM, 0xcc);
    static const unsigned hbs[] = {1, 0, 1000, CLOVE_MAX_HEARTBEAT_US};
    for (size_t i = 0; i < cycles; i++) {
        unsigned threads = 2 + (unsigned)(i % 3);
        clove_config cfg = {.threads = threads, .heartbeat_us = hbs[i / 3 % 4],
                            .stack_size = (i % 5 == 0) ? (size_t)256 << 10 : 0};
        clove_pool *p = NULL;
        ASSERT_OK(clove_pool_create(&p, &cfg));
        ASSERT_EQ_U(clove_pool_threads(p), threads);
        if (i % 100 == 0) {
            /* The workers (and the heartbeat thread) exist now. */
            ASSERT_GE_U(thread_count(), base + threads - 1);
        }
        if (i % 7 == 0)
            run_tree_checked(p, &tr);
        clove_pool_destroy(p);
    }
    ASSERT_EQ_U(wait_thread_count(base), base);
    ASSERT_EQ_U(job_stack_maps(), maps); /* every job stack unmapped */
    tree_free(&tr);
}

static void small_work_fn(clove_task *t, void *arg)
{
    const struct tree *tr = arg;
    struct sums s = tree_sum(t, tr, tr->root);
    tree_check(tr, s);
}

void test_single_thread_pool_no_threads(void)
{
    struct tree tr;
    tree_build(&tr, 5000, SHAPE_RANDOM, 0x51);
    unsigned base = thread_baseline();
    static const unsigned hbs[] = {0, 1, CLOVE_MAX_HEARTBEAT_US};
    for (size_t k = 0; k < 3; k++) {
        clove_config cfg = {.threads = 1, .heartbeat_us = hbs[k],
                            .stack_size = k == 1 ? (size_t)1 << 20 : 0};
        clove_pool *p = NULL;
        ASSERT_OK(clove_pool_create(&p, &cfg));
        ASSERT_EQ_U(clove_pool_threads(p), 1);
        ASSERT_EQ_U(thread_count(), base);
        ASSERT_OK(clove_pool_run(p, small_work_fn, &tr));
        sleep_us(10000);
        ASSERT_EQ_U(thread_count(), base);
        clove_pool_destroy(p);
        ASSERT_EQ_U(thread_count(), base);
    }

    /* threads = 0: the CPUs in the affinity mask. */
    unsigned ncpu = test_cpu_count();
    clove_pool *p = NULL;
    ASSERT_OK(clove_pool_create(&p, NULL));
    ASSERT_EQ_U(clove_pool_threads(p), ncpu);
    ASSERT_OK(clove_pool_run(p, small_work_fn, &tr));
    clove_pool_destroy(p);
    clove_config zero = {0};
    ASSERT_OK(clove_pool_create(&p, &zero));
    ASSERT_EQ_U(clove_pool_threads(p), ncpu);
    clove_pool_destroy(p);
    ASSERT_EQ_U(wait_thread_count(base), base);
    tree_free(&tr);
}

/* ------------------------------------------------------------------------ */
/* EINVAL                                                                   */
/* ------------------------------------------------------------------------ */

static _Atomic int einval_calls;

static void count_call_fn(clove_task *t, void *arg)
{
    (void)t;
    (void)arg;
    atomic_fetch_add(&einval_calls, 1);
}

static char sentinel_obj;
#define SENTINEL ((clove_pool *)(void *)&sentinel_obj)

static void expect_create(int expect_rc, unsigned threads, unsigned hb, size_t stack)
{
    clove_config cfg = {.threads = threads, .heartbeat_us = hb, .stack_size = stack};
    clove_pool *p = SENTINEL;
    int rc = clove_pool_create(&p, &cfg);
    ASSERT_MSG(rc == expect_rc,
               "clove_pool_create(threads=%u, heartbeat_us=%u, stack_size=%zu) = %d, "
               "expected %d", threads, hb, stack, rc, expect_rc);
    if (expect_rc != 0) {
        ASSERT_EQ_P(p, SENTINEL);
        return;
    }
    ASSERT_NE_P(p, SENTINEL);
    ASSERT_NE_P(p, NULL);
    atomic_store(&einval_calls, 0);
    ASSERT_OK(clove_pool_run(p, count_call_fn, NULL));
    ASSERT_EQ_I(atomic_load(&einval_calls), 1);
    clove_pool_destroy(p);
}

void test_einval_paths(void)
{
    unsigned base = thread_baseline();
    clove_config ok = {.threads = 2, .heartbeat_us = 1};
    ASSERT_EQ_I(clove_pool_create(NULL, NULL), EINVAL);
    ASSERT_EQ_I(clove_pool_create(NULL, &ok), EINVAL);

    expect_create(EINVAL, CLOVE_MAX_THREADS + 1, 0, 0);
    expect_create(EINVAL, UINT_MAX, 0, 0);
    expect_create(EINVAL, 2, CLOVE_MAX_HEARTBEAT_US + 1, 0);
    expect_create(EINVAL, 2, UINT_MAX, 0);
    expect_create(EINVAL, 1, UINT_MAX, 0);
    expect_create(EINVAL, 2, 0, 1);
    expect_create(EINVAL, 2, 0, 4096);
    expect_create(EINVAL, 2, 0, 65535);
    expect_create(EINVAL, 1, 0, 65535); /* checked even with no thread to start */
    expect_create(EINVAL, 4, 1, 100);
    /* Every field out of range at once. */
    expect_create(EINVAL, UINT_MAX, UINT_MAX, 1);
    /* The bounds themselves are accepted. */
    expect_create(0, 2, CLOVE_MAX_HEARTBEAT_US, 0);
    expect_create(0, 2, 0, 65536);
    expect_create(0, 1, CLOVE_MAX_HEARTBEAT_US, 65536);
    ASSERT_EQ_U(wait_thread_count(base), base);

    /* clove_pool_run: EINVAL without calling fn. */
    clove_pool *p = make_pool(2, 1);
    atomic_store(&einval_calls, 0);
    ASSERT_EQ_I(clove_pool_run(NULL, count_call_fn, NULL), EINVAL);
    ASSERT_EQ_I(clove_pool_run(p, NULL, NULL), EINVAL);
    ASSERT_EQ_I(clove_pool_run(NULL, NULL, NULL), EINVAL);
    ASSERT_EQ_I(atomic_load(&einval_calls), 0);
    ASSERT_OK(clove_pool_run(p, count_call_fn, NULL));
    ASSERT_EQ_I(atomic_load(&einval_calls), 1);
    clove_pool_destroy(p);

    clove_pool *p1 = make_pool(1, 0);
    ASSERT_EQ_I(clove_pool_run(p1, NULL, NULL), EINVAL);
    clove_pool_destroy(p1);

    clove_pool_destroy(NULL); /* no-op */
    ASSERT_EQ_U(wait_thread_count(base), base);
}

/* ------------------------------------------------------------------------ */
/* Idle pools sleep                                                         */
/* ------------------------------------------------------------------------ */


static void idle_check(unsigned threads, unsigned hb, const struct tree *tr)
{
    static pid_t before[MAX_TIDS], after[MAX_TIDS], mine[MAX_TIDS];
    size_t nb = list_tids(before, MAX_TIDS);
    ASSERT_LE_U(nb, MAX_TIDS);
    clove_pool *p = make_pool(threads, hb);
    size_t na = list_tids(after, MAX_TIDS);
    ASSERT_LE_U(na, MAX_TIDS);
    size_t nm = 0;
    for (size_t i = 0; i < na; i++)
        if (!tid_in(after[i], before, nb))
            mine[nm++] = after[i];
    ASSERT_GE_U(nm, threads - 1);

    for (int round = 0; round < 2; round++) {
        for (int r = 0; r < 3; r++)
            ASSERT_OK(clove_pool_run(p, small_work_fn, (void *)tr));
        sleep_us(300000);
        long long c0 = 0, c1 = 0;
        for (size_t i = 0; i < nm; i++) {
            long long c = thread_ctx_switches(mine[i]);
            ASSERT_MSG(c >= 0, "pool thread %ld vanished", (long)mine[i]);
            c0 += c;
        }
        sleep_us(200000);
        for (size_t i = 0; i < nm; i++) {
            c1 += thread_ctx_switches(mine[i]);
            char st = thread_state(mine[i]);
            ASSERT_MSG(st == 'S', "idle pool thread %ld is in state %c, expected S",
                       (long)mine[i], st);
        }
        test_log("idle threads=%u hb=%u: %lld context switches in 200 ms over %zu "
                 "threads\n", threads, hb, c1 - c0, nm);
        ASSERT_MSG(c1 - c0 <= 10,
                   "idle pool (threads=%u, heartbeat_us=%u): its %zu threads switched "
                   "context %lld times in 200 ms; they should be asleep",
                   threads, hb, nm, c1 - c0);
    }
    clove_pool_destroy(p);
}

void test_idle_pool_sleeps(void)
{
    if (strcmp(CLOVE_TEST_PORT, "win") == 0)
        test_skip("counts each thread's context switches and reads its run state from "
                  "/proc, which Windows does not show");
    struct tree tr;
    tree_build(&tr, 20000, SHAPE_RANDOM, 0x1d1e);
    idle_check(4, 0, &tr);
    idle_check(3, 1, &tr);
    idle_check(8, 100, &tr);
    tree_free(&tr);
}
