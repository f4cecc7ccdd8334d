/* SPDX-License-Identifier: MIT */
/*
 * test_longleaf.c - long leaves: a job queued behind a call that never
 * forks or ticks must still reach an idle worker (the reserve, src/share.c).
 *
 * Each test makes that the only way to finish: the long leaf spins, without
 * a fork or a tick, until the job queued behind it has started on another
 * task. Without the reserve the leaf would spin until its deadline (20 s)
 * and the test fails; the result never depends on how fast it happens.
 */
#include "test.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Spin without ticking until *flag != 0 or the deadline; true if seen. */
static bool spin_until(_Atomic uint32_t *flag, double seconds)
{
    double deadline = now_s() + seconds;
    unsigned n = 0;
    while (atomic_load_explicit(flag, memory_order_acquire) == 0) {
        /* Yield now and then, so that with more threads than cores the
         * task we wait for gets a CPU; this is no clove call. */
        if (++n % 1024 == 0) {
            sched_yield();
            if (now_s() > deadline)
                return false;
        }
    }
    return true;
}

#define LEAF_DEADLINE_S 20.0

/* ------------------------------------------------------------------------ */
/* join2(a, b) at the top of a run                                          */
/* ------------------------------------------------------------------------ */

struct pair {
    uint64_t round;
    _Atomic uint32_t b_started;
    _Atomic uint32_t a_runs, b_runs;
    bool a_saw_b;
    unsigned a_index, b_index;
    uint64_t a_out, b_out;
};

static void pair_a(clove_task *t, void *arg)
{
    struct pair *p = arg;
    atomic_fetch_add(&p->a_runs, 1);
    p->a_index = clove_worker_index(t);
    p->a_saw_b = spin_until(&p->b_started, LEAF_DEADLINE_S);
    p->a_out = mix64(p->round * 2);
}

static void pair_b(clove_task *t, void *arg)
{
    struct pair *p = arg;
    atomic_fetch_add(&p->b_runs, 1);
    p->b_index = clove_worker_index(t);
    p->b_out = mix64(p->round * 2 + 1);
    atomic_store_explicit(&p->b_started, 1, memory_order_release);
}

static void pair_run(clove_task *t, void *arg)
{
    /* Answer a pending heartbeat (nothing is queued, so nothing is
     * shared): b then leaves by a steal, unless a heartbeat arrives in the
     * few instructions before the fork. */
    clove_tick(t);
    clove_join2(t, pair_a, arg, pair_b, arg);
}

static void check_pair(const struct pair *p)
{
    ASSERT(p->a_saw_b);
    ASSERT_EQ_U(atomic_load(&p->a_runs), 1);
    ASSERT_EQ_U(atomic_load(&p->b_runs), 1);
    ASSERT(p->a_index != p->b_index);
    ASSERT_EQ_U(p->a_out, mix64(p->round * 2));
    ASSERT_EQ_U(p->b_out, mix64(p->round * 2 + 1));
}

void test_longleaf_join2(void)
{
    /* 2 threads (the target case), more threads than cores, and a short
     * and the default heartbeat. 20 rounds per pool, each a fresh run:
     * the first fork of every run must be reserved again. */
    static const unsigned threads[] = {2, 3, 8};
    static const unsigned hbs[] = {20, 100};
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        for (size_t h = 0; h < sizeof hbs / sizeof hbs[0]; h++) {
            clove_pool *pool = make_pool(threads[i], hbs[h]);
            for (uint64_t r = 0; r < 20; r++) {
                struct pair p = {.round = r};
                ASSERT_EQ_I(clove_pool_run(pool, pair_run, &p), 0);
                check_pair(&p);
            }
            clove_stats s;
            stats_settle(pool);
            ASSERT_EQ_I(clove_pool_stats(pool, &s, NULL, 0), 0);
            /* b can reach the other worker in two ways: shared by its
             * owner, if a heartbeat arrived between pair_run's tick and the
             * fork, or stolen by the heartbeat thread while a spins. */
            test_log("threads %u hb %u: shared %llu stolen %llu", threads[i], hbs[h],
                     (unsigned long long)s.shared, (unsigned long long)s.stolen);
            ASSERT_LE_U(20, s.shared + s.stolen);
            ASSERT_LE_U(1, s.stolen);
            ASSERT_EQ_U(s.shared + s.stolen, s.ran + s.reclaimed);
            clove_pool_destroy(pool);
        }
    }
}

/* The same pair, run many times inside one run: the reserve is joined and
 * re-armed every round, and a round may start right after the previous
 * one, before any new heartbeat. */
struct rounds {
    unsigned n;
    struct pair *p;
};

static void rounds_run(clove_task *t, void *arg)
{
    struct rounds *r = arg;
    for (unsigned i = 0; i < r->n; i++) {
        r->p[i].round = i;
        clove_join2(t, pair_a, &r->p[i], pair_b, &r->p[i]);
    }
}

void test_longleaf_rounds(void)
{
    clove_pool *pool = make_pool(2, 50);
    struct rounds r = {(unsigned)scaled(200, 20), NULL};
    r.p = calloc(r.n, sizeof *r.p);
    ASSERT(r.p != NULL);
    ASSERT_EQ_I(clove_pool_run(pool, rounds_run, &r), 0);
    for (unsigned i = 0; i < r.n; i++)
        check_pair(&r.p[i]);
    free(r.p);
    clove_pool_destroy(pool);
}

/* ------------------------------------------------------------------------ */
/* A long leaf deep in a recursion                                          */
/* ------------------------------------------------------------------------ */

/* deep(level): fork right(level) (marks it run and records where), then
 * recurse; at the bottom, spin until the oldest fork (level 0, the biggest
 * piece) has started elsewhere. Every right(level) must run exactly once. */
#define DEEP_LEVELS 6

struct deep {
    _Atomic uint32_t runs[DEEP_LEVELS];
    _Atomic uint32_t top_started;
    unsigned index[DEEP_LEVELS];
    uint64_t out[DEEP_LEVELS];
    bool saw;
    unsigned leaf_index;
};

struct deep_arg {
    struct deep *d;
    unsigned level;
};

static void deep_right(clove_task *t, void *arg)
{
    struct deep_arg *a = arg;
    atomic_fetch_add(&a->d->runs[a->level], 1);
    a->d->index[a->level] = clove_worker_index(t);
    a->d->out[a->level] = mix64(a->level + 1000);
    if (a->level == 0)
        atomic_store_explicit(&a->d->top_started, 1, memory_order_release);
}

static void deep_left(clove_task *t, struct deep *d, unsigned level)
{
    if (level == DEEP_LEVELS) {
        d->leaf_index = clove_worker_index(t);
        d->saw = spin_until(&d->top_started, LEAF_DEADLINE_S);
        return;
    }
    struct deep_arg ra = {d, level};
    clove_future f;
    clove_fork(t, &f, deep_right, &ra);
    deep_left(t, d, level + 1);
    if (!clove_join(t, &f))
        deep_right(t, &ra);
}

static void deep_run(clove_task *t, void *arg)
{
    deep_left(t, arg, 0);
}

void test_longleaf_deep(void)
{
    static const unsigned threads[] = {2, 4};
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        clove_pool *pool = make_pool(threads[i], 50);
        for (int r = 0; r < 10; r++) {
            struct deep d;
            memset(&d, 0, sizeof d);
            ASSERT_EQ_I(clove_pool_run(pool, deep_run, &d), 0);
            ASSERT(d.saw);
            ASSERT(d.index[0] != d.leaf_index);
            for (unsigned l = 0; l < DEEP_LEVELS; l++) {
                ASSERT_EQ_U(atomic_load(&d.runs[l]), 1);
                ASSERT_EQ_U(d.out[l], mix64(l + 1000));
            }
        }
        clove_pool_destroy(pool);
    }
}

/* ------------------------------------------------------------------------ */
/* A long leaf on a pool worker, while the external task waits              */
/* ------------------------------------------------------------------------ */

/* The external task runs join2(a, b): a spins until b has started (on the
 * worker); b itself is join2(c, d), where c spins until d has started.
 * With two threads, d can only run on the external task, helping inside
 * its join of b, after it left worker 1 - by a steal of the worker's
 * reserve, or a share at the fork if a beat was pending just then. */
struct chain {
    _Atomic uint32_t b_started, d_started;
    _Atomic uint32_t runs[4]; /* a, b, c, d */
    bool a_saw, c_saw;
    unsigned idx[4];
};

/* Every side counts its run and records where it ran: k = 0..3 for a..d. */
static struct chain *chain_enter(clove_task *t, void *arg, int k)
{
    struct chain *c = arg;
    atomic_fetch_add(&c->runs[k], 1);
    c->idx[k] = clove_worker_index(t);
    return c;
}

static void chain_d(clove_task *t, void *arg)
{
    atomic_store_explicit(&chain_enter(t, arg, 3)->d_started, 1, memory_order_release);
}

static void chain_c(clove_task *t, void *arg)
{
    struct chain *c = chain_enter(t, arg, 2);
    c->c_saw = spin_until(&c->d_started, LEAF_DEADLINE_S);
}

static void chain_b(clove_task *t, void *arg)
{
    struct chain *c = chain_enter(t, arg, 1);
    atomic_store_explicit(&c->b_started, 1, memory_order_release);
    clove_join2(t, chain_c, c, chain_d, c);
}

static void chain_a(clove_task *t, void *arg)
{
    struct chain *c = chain_enter(t, arg, 0);
    c->a_saw = spin_until(&c->b_started, LEAF_DEADLINE_S);
}

static void chain_run(clove_task *t, void *arg)
{
    clove_join2(t, chain_a, arg, chain_b, arg);
}

void test_longleaf_worker(void)
{
    clove_pool *pool = make_pool(2, 50);
    for (int r = 0; r < 10; r++) {
        struct chain c;
        memset(&c, 0, sizeof c);
        ASSERT_EQ_I(clove_pool_run(pool, chain_run, &c), 0);
        ASSERT(c.a_saw);
        ASSERT(c.c_saw);
        for (int k = 0; k < 4; k++)
            ASSERT_EQ_U(atomic_load(&c.runs[k]), 1);
        ASSERT(c.idx[0] != c.idx[1]);
        ASSERT(c.idx[2] != c.idx[3]);
    }
    clove_stats per[2];
    ASSERT_EQ_I(clove_pool_stats(pool, NULL, per, 2), 0);
    /* Each round, d left worker 1 (index 1) while it spun in c: counted in
     * its stolen or, when a beat was pending at d's fork, shared. */
    ASSERT_LE_U(10, per[1].stolen + per[1].shared);
    clove_pool_destroy(pool);
}

/* ------------------------------------------------------------------------ */
/* A long chunk in clove_for                                                */
/* ------------------------------------------------------------------------ */

/* The run is join2(side, loop). side is taken by the other worker (shared
 * or stolen while loop's caller ticks, waiting for it to start), so from
 * then on every task is busy and no heartbeat comes. loop is clove_for
 * over [0, n) with iterations of about a microsecond, except iteration
 * LONGFOR_STUCK, which spins inside its chunk (no fork, no tick) until an
 * iteration of the loop has started on another task; side spins until
 * then too, so the other worker can only get loop work from the spinning
 * task - and that task's list was never touched by a heartbeat. Only the
 * loop keeping the rest of a long range forked (src/for.c), its oldest
 * piece reserved where the heartbeat thread can take it (src/share.c),
 * lets the test finish. Every index must be run exactly once, with its
 * own value. */
#define LONGFOR_STUCK 256

struct longfor {
    size_t n;
    _Atomic uint32_t *runs;
    uint64_t *out;
    _Atomic uint32_t side_started, side_runs;
    _Atomic uint32_t stuck;          /* the spinning iteration began */
    _Atomic uint32_t loop_elsewhere; /* an iteration ran on another task */
    _Atomic unsigned loop_index;     /* the task that ran the loop */
    unsigned side_index, stuck_index;
    bool side_saw, loop_saw;
};

static void spin_us(double us)
{
    double until = now_s() + us * 1e-6;
    while (now_s() < until) {
    }
}

static void longfor_body(clove_task *t, size_t lo, size_t hi, void *ctx)
{
    struct longfor *c = ctx;
    unsigned self = clove_worker_index(t);
    if (self != atomic_load_explicit(&c->loop_index, memory_order_relaxed))
        atomic_store_explicit(&c->loop_elsewhere, 1, memory_order_release);
    for (size_t i = lo; i < hi; i++) {
        atomic_fetch_add_explicit(&c->runs[i], 1, memory_order_relaxed);
        c->out[i] = mix64(i);
        if (i == LONGFOR_STUCK) {
            c->stuck_index = self;
            atomic_store_explicit(&c->stuck, 1, memory_order_release);
            c->loop_saw = spin_until(&c->loop_elsewhere, LEAF_DEADLINE_S);
        } else {
            spin_us(1.0);
        }
    }
}

static void longfor_side(clove_task *t, void *arg)
{
    struct longfor *c = arg;
    atomic_fetch_add(&c->side_runs, 1);
    c->side_index = clove_worker_index(t);
    atomic_store_explicit(&c->side_started, 1, memory_order_release);
    /* Keep this worker busy until the loop is stuck (if the loop's task
     * runs this itself, the loop is over: nothing to wait for). */
    if (c->side_index != atomic_load_explicit(&c->loop_index, memory_order_relaxed))
        c->side_saw = spin_until(&c->stuck, LEAF_DEADLINE_S);
}

static void longfor_loop(clove_task *t, void *arg)
{
    struct longfor *c = arg;
    /* Ticks answer heartbeats: side leaves by a share or a steal. */
    while (atomic_load_explicit(&c->side_started, memory_order_acquire) == 0)
        clove_tick(t);
    clove_for(t, 0, c->n, longfor_body, c);
}

static void longfor_run(clove_task *t, void *arg)
{
    struct longfor *c = arg;
    atomic_store_explicit(&c->loop_index, clove_worker_index(t), memory_order_relaxed);
    clove_join2(t, longfor_loop, c, longfor_side, c);
}

void test_longleaf_for(void)
{
    static const unsigned hbs[] = {20, 100};
    struct longfor c;
    c.n = 4096;
    c.runs = malloc(c.n * sizeof *c.runs);
    c.out = malloc(c.n * sizeof *c.out);
    ASSERT(c.runs != NULL && c.out != NULL);
    for (size_t h = 0; h < sizeof hbs / sizeof hbs[0]; h++) {
        clove_pool *pool = make_pool(2, hbs[h]);
        for (int r = 0; r < 5; r++) {
            for (size_t k = 0; k < c.n; k++)
                atomic_init(&c.runs[k], 0);
            memset(c.out, 0, c.n * sizeof *c.out);
            atomic_init(&c.side_started, 0);
            atomic_init(&c.side_runs, 0);
            atomic_init(&c.stuck, 0);
            atomic_init(&c.loop_elsewhere, 0);
            c.side_saw = c.loop_saw = false;
            ASSERT_EQ_I(clove_pool_run(pool, longfor_run, &c), 0);
            ASSERT_EQ_U(atomic_load(&c.side_runs), 1);
            ASSERT(c.side_index != atomic_load(&c.loop_index));
            ASSERT(c.side_saw);
            ASSERT_EQ_U(c.stuck_index, atomic_load(&c.loop_index));
            ASSERT_MSG(c.loop_saw,
                       "hb %u: iteration %d spun until its deadline: the rest of its "
                       "range never left its task",
                       hbs[h], LONGFOR_STUCK);
            for (size_t k = 0; k < c.n; k++) {
                ASSERT_EQ_U(atomic_load(&c.runs[k]), 1);
                ASSERT_EQ_U(c.out[k], mix64(k));
            }
        }
        clove_stats s;
        ASSERT_EQ_I(clove_pool_stats(pool, &s, NULL, 0), 0);
        test_log("hb %u: shared %llu stolen %llu", hbs[h], (unsigned long long)s.shared,
                 (unsigned long long)s.stolen);
        clove_pool_destroy(pool);
    }
    free(c.runs);
    free(c.out);
}
