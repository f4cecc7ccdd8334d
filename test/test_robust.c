/* SPDX-License-Identifier: MIT */
/*
 * test_robust.c - clove in long-running programs:
 *
 *   cancel_entry_task       a thread inside clove_pool_run on the pool's
 *                           entry task is cancelled (pthread_cancel at a
 *                           cancellation point) or calls pthread_exit
 *                           while some of its forks run on other workers:
 *                           those finish before the thread is gone, and
 *                           the pool stays usable and destroyable; also
 *                           from inside a nested run of another pool and
 *                           of the same pool;
 *   cancel_registered_task  the same on a task of its own (another thread
 *                           is inside at the same time), then a new
 *                           thread, likely on the dead one's stack, enters;
 *   cancel_while_helping    a thread waiting at a join runs another task's
 *                           job (helping) when it is cancelled: that job
 *                           finishes, its owner gets its result, and the
 *                           cancellation acts after the join;
 *   help_depth_bound        helping never nests a job on a stack that
 *                           lacks the room for it: a recursion whose
 *                           sequential depth is about 800 KB runs on
 *                           1 MiB worker stacks at 16 threads;
 *   jobstack_rss_returned   job-stack pages are given back when a run
 *                           ends: RSS returns near its value before work.
 *
 * Every result is checked; hangs fail through a watchdog.
 */
#include "load.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifndef _WIN32
#include <unistd.h>
#endif

#define WATCHDOG_S 60.0

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static _Atomic int watchdog_done;
static const char *watchdog_what;

static void *watchdog_main(void *arg)
{
    (void)arg;
    double t0 = now_s();
    while (!atomic_load(&watchdog_done)) {
        if (now_s() - t0 > WATCHDOG_S)
            test_fail(__FILE__, __LINE__, "%s: no progress for %.0f s (hang)", watchdog_what,
                      WATCHDOG_S);
        sleep_us(10000);
    }
    return NULL;
}

static pthread_t watchdog_start(const char *what)
{
    pthread_t th;
    watchdog_what = what;
    atomic_store(&watchdog_done, 0);
    ASSERT_OK(pthread_create(&th, NULL, watchdog_main, NULL));
    return th;
}

static void watchdog_stop(pthread_t th)
{
    atomic_store(&watchdog_done, 1);
    ASSERT_OK(pthread_join(th, NULL));
}

static pthread_t spawn(void *(*fn)(void *), void *arg, size_t stack)
{
    pthread_attr_t attr;
    pthread_t th;
    ASSERT_OK(pthread_attr_init(&attr));
    if (stack)
        ASSERT_OK(pthread_attr_setstacksize(&attr, stack));
    ASSERT_OK(pthread_create(&th, &attr, fn, arg));
    pthread_attr_destroy(&attr);
    return th;
}

/* Compute for about us microseconds (no cancellation point). */
static uint64_t spin_us(double us)
{
    double end = now_s() + us * 1e-6;
    uint64_t x = 1;
    while (now_s() < end)
        for (int i = 0; i < 64; i++)
            x = mix64(x);
    return x;
}

static clove_pool *pool_with_heartbeat(unsigned threads, size_t stack, unsigned heartbeat_us)
{
    clove_config c = {0};
    c.threads = threads;
    c.heartbeat_us = heartbeat_us;
    c.stack_size = stack;
    clove_pool *p = NULL;
    ASSERT_OK(clove_pool_create(&p, &c));
    return p;
}

/* A 1 us heartbeat: sharing all the time. */
static clove_pool *pool_with(unsigned threads, size_t stack)
{
    return pool_with_heartbeat(threads, stack, 1);
}

/* Checked tree sums on p from `callers` threads at once (each its own
 * tree), so that the entry task and registered tasks are both used. */
struct sum_caller {
    clove_pool *p;
    struct tree tr;
    unsigned rounds;
};

static void *sum_caller_main(void *arg)
{
    struct sum_caller *c = arg;
    for (unsigned r = 0; r < c->rounds; r++)
        run_tree_checked(c->p, &c->tr);
    return NULL;
}

static void pool_still_works(clove_pool *p, unsigned callers)
{
    struct sum_caller c[4];
    pthread_t th[4];
    ASSERT_LE_U(callers, 4);
    for (unsigned i = 0; i < callers; i++) {
        c[i].p = p;
        c[i].rounds = 5;
        tree_build(&c[i].tr, scaled(20000, 2000), SHAPE_RANDOM, 0xab0 + i);
        th[i] = spawn(sum_caller_main, &c[i], 0);
    }
    for (unsigned i = 0; i < callers; i++) {
        ASSERT_OK(pthread_join(th[i], NULL));
        tree_free(&c[i].tr);
    }
}

#ifdef _WIN32
/* Windows has no thread cancellation, and a thread that ends itself
 * (ExitThread) runs no clean-up: the library cannot finish such a run. */
void test_cancel_entry_task(void)
{
    test_skip("needs pthread_cancel and pthread_exit; Windows threads have neither");
}

void test_cancel_registered_task(void)
{
    test_skip("needs pthread_cancel and pthread_exit; Windows threads have neither");
}

void test_cancel_while_helping(void)
{
    test_skip("needs pthread_cancel; Windows threads have none");
}
#else
/* ------------------------------------------------------------------------ */
/* Abandoned runs: pthread_cancel and pthread_exit inside clove_pool_run     */
/* ------------------------------------------------------------------------ */

enum leave_how { LEAVE_CANCEL, LEAVE_EXIT };

/* ThreadSanitizer's runtime loses track of a thread that is cancelled
 * inside one of its intercepted blocking calls (usleep here): the mutexes
 * the thread takes afterwards, in clove_pool_run's cleanup, are not
 * recorded, and it reports races under the pool lock. So its builds leave
 * runs by pthread_exit only, which unwinds the same way. */
#ifdef CLOVE_TSAN
#define CANCEL_TESTABLE 0
#else
#define CANCEL_TESTABLE 1
#endif

/* Round r's way out: both, alternating, where the build allows. */
static enum leave_how leave_how_of(unsigned r)
{
    return CANCEL_TESTABLE && r % 2 == 0 ? LEAVE_CANCEL : LEAVE_EXIT;
}

#define AB_FORKS 8

struct ab_ctx {
    clove_pool *p;
    struct ab_ctx *nested;    /* enter this run from inside, and leave there */
    enum leave_how how;
    _Atomic unsigned started; /* forked jobs begun (on any worker) */
    _Atomic unsigned done;    /* ... and finished */
    _Atomic int inside;       /* the thread is about to leave */
    _Atomic uint64_t wrote;   /* sum of what the jobs wrote */
};

struct ab_arg {
    struct ab_ctx *c;
    uint64_t in, out;
    volatile char more[512]; /* written by the job: in the forking frame */
};

static void ab_job(clove_task *t, void *arg)
{
    (void)t;
    struct ab_arg *a = arg;
    atomic_fetch_add(&a->c->started, 1);
    uint64_t x = spin_us(3000);
    /* Writes into the forking frame, which the cancelled thread has left
     * by now: its run must not be gone before this is done. */
    for (size_t i = 0; i < sizeof a->more; i++)
        a->more[i] = (char)(x + i);
    a->out = mix64(a->in);
    atomic_fetch_add(&a->c->wrote, a->out);
    atomic_fetch_add(&a->c->done, 1);
}

static void ab_fn(clove_task *t, void *arg)
{
    struct ab_ctx *c = arg;
    struct ab_arg a[AB_FORKS];
    clove_future f[AB_FORKS];
    for (unsigned i = 0; i < AB_FORKS; i++) {
        a[i].c = c;
        a[i].in = i + 1;
        a[i].out = 0;
        clove_fork(t, &f[i], ab_job, &a[i]);
    }
    /* Answer beats until at least one job runs elsewhere (a pool of one
     * thread has nobody to take them). */
    double t0 = now_s();
    while (clove_pool_threads(c->p) > 1 && atomic_load(&c->started) == 0) {
        clove_tick(t);
        ASSERT_MSG(now_s() - t0 < 60, "no fork was taken");
    }
    if (c->nested) {
        int rc = clove_pool_run(c->nested->p, ab_fn, c->nested);
        test_fail(__FILE__, __LINE__, "the nested clove_pool_run returned %d", rc);
    }
    atomic_store(&c->inside, 1);
    if (c->how == LEAVE_EXIT)
        pthread_exit(NULL);
    for (;;)
        usleep(100); /* a cancellation point */
}

static void *ab_main(void *arg)
{
    struct ab_ctx *c = arg;
    int rc = clove_pool_run(c->p, ab_fn, c);
    test_fail(__FILE__, __LINE__, "clove_pool_run returned %d: the thread was not stopped", rc);
}

/* Forks that were never taken are dropped, the others finished before
 * the thread was gone. */
static void ab_check(struct ab_ctx *c)
{
    unsigned started = atomic_load(&c->started), done = atomic_load(&c->done);
    ASSERT_LE_U(clove_pool_threads(c->p) > 1 ? 1 : 0, started);
    ASSERT_LE_U(started, AB_FORKS);
    ASSERT_MSG(done == started, "%u of %u forks that began are done (%s%s, pool of %u)", done,
               started, c->how == LEAVE_CANCEL ? "pthread_cancel" : "pthread_exit",
               c->nested ? ", outer run" : "", clove_pool_threads(c->p));
    test_log("abandoned run (%s%s): %u of %d forks had run elsewhere\n",
             c->how == LEAVE_CANCEL ? "pthread_cancel" : "pthread_exit",
             c->nested ? ", outer run" : "", started, AB_FORKS);
}

/* One thread enters p (on whatever task it gets), forks, and leaves by
 * `how`, there or, with `inner`, inside a nested run of `inner` (another
 * pool, or p itself); returns once it is gone, after checking the forks
 * of every run it left. */
static void abandon_nested(clove_pool *p, clove_pool *inner, enum leave_how how)
{
    struct ab_ctx c2 = {.p = inner, .how = how};
    struct ab_ctx c = {.p = p, .nested = inner ? &c2 : NULL, .how = how};
    struct ab_ctx *last = inner ? &c2 : &c;
    pthread_t th = spawn(ab_main, &c, 0);
    while (!atomic_load(&last->inside))
        sleep_us(50);
    if (how == LEAVE_CANCEL)
        ASSERT_OK(pthread_cancel(th));
    void *ret = NULL;
    ASSERT_OK(pthread_join(th, &ret));
    ASSERT_EQ_P(ret, how == LEAVE_CANCEL ? PTHREAD_CANCELED : NULL);
    ab_check(&c);
    if (inner)
        ab_check(&c2);
}

static void abandon_once(clove_pool *p, enum leave_how how)
{
    abandon_nested(p, NULL, how);
}

void test_cancel_entry_task(void)
{
    pthread_t wd = watchdog_start("cancel_entry_task");
    unsigned rounds = (unsigned)scaled(6, 2);
    for (unsigned r = 0; r < rounds; r++) {
        clove_pool *p = pool_with(4, 0);
        abandon_once(p, leave_how_of(r));
        pool_still_works(p, r % 2 ? 1 : 3);
        abandon_once(p, leave_how_of(r + 1));
        /* Left inside a nested run: of another pool (both runs end), and
         * of the same pool (a nested call on the same task). */
        clove_pool *q = pool_with(3, 0);
        abandon_nested(p, q, leave_how_of(r));
        abandon_nested(p, p, leave_how_of(r + 1));
        pool_still_works(q, 2);
        pool_still_works(p, 2);
        clove_pool_destroy(q);
        clove_pool_destroy(p);
    }
    watchdog_stop(wd);
}

/* The main thread holds the entry task while others enter, leave
 * abnormally, and enter again (a new thread likely gets the dead one's
 * stack from the C library's cache). */
struct hold_ctx {
    clove_pool *p;
    unsigned rounds;
};

static void hold_fn(clove_task *t, void *arg)
{
    (void)t;
    struct hold_ctx *h = arg;
    for (unsigned r = 0; r < h->rounds; r++) {
        abandon_once(h->p, leave_how_of(r));
        pool_still_works(h->p, 1 + r % 3);
    }
}

void test_cancel_registered_task(void)
{
    pthread_t wd = watchdog_start("cancel_registered_task");
    for (unsigned k = 0; k < 2; k++) {
        clove_pool *p = pool_with(k ? 1 : 4, 0);
        struct hold_ctx h = {p, (unsigned)scaled(6, 2)};
        ASSERT_OK(clove_pool_run(p, hold_fn, &h));
        pool_still_works(p, 2);
        clove_pool_destroy(p);
    }
    watchdog_stop(wd);
}

/* ------------------------------------------------------------------------ */
/* Cancelled while helping                                                  */
/* ------------------------------------------------------------------------ */

/*
 * Pool of two threads: T (a thread of its own) and one worker W; M (this
 * thread) only watches. T forks A, which W takes; T waits at A's join.
 * A, on W, forks B, which only T can take (W is busy in A), and which T
 * may take while it waits for A (it lies inside A). M cancels T while B
 * runs on T, and B sits at cancellation points: it must still finish,
 * with A's join getting its result, and T's cancellation acts after its
 * join of A, at its next cancellation point.
 */
struct help_ctx {
    clove_pool *p;
    pthread_t t_thread;
    int exit_in_b;             /* pthread_exit in B (a misuse child) */
    _Atomic int a_started;     /* A runs on W */
    _Atomic int b_on_t;        /* B began, on T */
    _Atomic int b_runs;        /* times B ran */
    _Atomic int cancel_sent;
    _Atomic int t_joined;      /* T's join of A returned */
};

struct help_arg {
    struct help_ctx *c;
    uint64_t in, out;
};

/* Set by T itself before it enters the pool. M's copy of T's pthread_t is
 * written only after pthread_create returns, which on a loaded machine can
 * be after B already ran on T. */
static _Thread_local int help_on_t;

static void help_b(clove_task *t, void *arg)
{
    struct help_arg *a = arg;
    struct help_ctx *c = a->c;
    (void)t;
    if (help_on_t)
        atomic_store(&c->b_on_t, 1);
    atomic_fetch_add(&c->b_runs, 1);
    if (c->exit_in_b)
        pthread_exit(NULL);
    while (!atomic_load(&c->cancel_sent))
        usleep(100);
    for (int i = 0; i < 20; i++)
        usleep(100); /* cancellation points, with a cancellation pending */
    a->out = mix64(a->in);
}

static void help_a(clove_task *t, void *arg)
{
    struct help_arg *a = arg;
    struct help_ctx *c = a->c;
    atomic_store(&c->a_started, 1);
    struct help_arg b = {c, 11, 0};
    clove_future f;
    clove_fork(t, &f, help_b, &b);
    double t0 = now_s();
    while (!atomic_load(&c->b_runs)) {
        clove_tick(t);
        ASSERT_MSG(now_s() - t0 < 60, "B was not taken");
    }
    if (!clove_join(t, &f))
        test_fail(__FILE__, __LINE__, "B ran on its owner");
    ASSERT_EQ_U(b.out, mix64(11));
    ASSERT_EQ_I(atomic_load(&c->b_runs), 1);
    a->out = mix64(a->in) + b.out;
}

static void help_t_fn(clove_task *t, void *arg)
{
    struct help_ctx *c = arg;
    struct help_arg a = {c, 7, 0};
    clove_future f;
    clove_fork(t, &f, help_a, &a);
    double t0 = now_s();
    while (!atomic_load(&c->a_started)) {
        clove_tick(t);
        ASSERT_MSG(now_s() - t0 < 60, "A was not taken");
    }
    if (!clove_join(t, &f))
        test_fail(__FILE__, __LINE__, "A ran on its owner");
    ASSERT_EQ_U(a.out, mix64(7) + mix64(11));
    atomic_store(&c->t_joined, 1);
    for (;;)
        usleep(100); /* the pending cancellation acts here */
}

static void *help_t_main(void *arg)
{
    struct help_ctx *c = arg;
    help_on_t = 1;
    int rc = clove_pool_run(c->p, help_t_fn, c);
    test_fail(__FILE__, __LINE__, "clove_pool_run returned %d: T was not cancelled", rc);
}

static void help_watch(struct help_ctx *c)
{
    c->t_thread = spawn(help_t_main, c, 0);
    double t0 = now_s();
    while (!atomic_load(&c->b_runs)) {
        sleep_us(50);
        ASSERT_MSG(now_s() - t0 < 60, "B was not taken");
    }
    ASSERT_MSG(atomic_load(&c->b_on_t), "B did not run on T");
    ASSERT_OK(pthread_cancel(c->t_thread));
    atomic_store(&c->cancel_sent, 1);
    void *ret = NULL;
    ASSERT_OK(pthread_join(c->t_thread, &ret));
    ASSERT_EQ_P(ret, PTHREAD_CANCELED);
    ASSERT_EQ_I(atomic_load(&c->t_joined), 1);
    ASSERT_EQ_I(atomic_load(&c->b_runs), 1);
}

void test_cancel_while_helping(void)
{
    if (!CANCEL_TESTABLE) {
        test_log("cancel_while_helping: not under ThreadSanitizer (see CANCEL_TESTABLE)\n");
        return;
    }
    pthread_t wd = watchdog_start("cancel_while_helping");
    unsigned rounds = (unsigned)scaled(5, 2);
    for (unsigned r = 0; r < rounds; r++) {
        clove_pool *p = pool_with(2, 0);
        struct help_ctx c = {.p = p};
        help_watch(&c);
        pool_still_works(p, 2);
        clove_pool_destroy(p);
    }
    watchdog_stop(wd);
}

/* The misuse child "exit_in_helped_job": pthread_exit in B (run by T for
 * W's task, inside A) would leave A's join waiting forever: the library
 * aborts, naming it. */
void robust_exit_in_helped_job(clove_task *t, void *arg)
{
    (void)t;
    struct help_ctx c = {.p = arg, .exit_in_b = 1};
    help_watch(&c);
}

#endif

/* ------------------------------------------------------------------------ */
/* Helping depth                                                            */
/* ------------------------------------------------------------------------ */

#define HD_FRAME 1024

static _Thread_local uintptr_t hd_stack_top; /* this thread's stack's highest address */
static _Atomic size_t hd_max_depth;           /* deepest use seen, bytes below the top */

static uintptr_t stack_top(void)
{
    if (hd_stack_top == 0)
        hd_stack_top = test_stack_top();
    return hd_stack_top;
}

/* Called through a volatile pointer with a frame's padding, so that the
 * compiler cannot see that only two of its bytes are used and shrink it
 * (clang does, for a volatile array whose address does not escape). */
static void hd_touch_pad(volatile char *pad, unsigned level)
{
    pad[0] = (char)level;
    pad[HD_FRAME - 1] = (char)level;
}
static void (*volatile hd_touch)(volatile char *, unsigned) = hd_touch_pad;

static void hd_note(void)
{
    char here;
    size_t d = stack_top() - (uintptr_t)&here;
    size_t m = atomic_load_explicit(&hd_max_depth, memory_order_relaxed);
    while (d > m && !atomic_compare_exchange_weak(&hd_max_depth, &m, d))
        ;
}

struct hd {
    bool tree;        /* the wide tree (hd_tree), else chains (hd_wide) */
    unsigned depth;   /* levels of each chain, or of the tree */
    unsigned chains;  /* chains of the wide top */
    double leaf_us;   /* a leaf job's time */
    _Atomic uint64_t leaves;
    uint64_t answered; /* ranges answered to direct requests in the last run */
};

struct hd_leaf {
    struct hd *h;
    unsigned level, chain;
    uint64_t out;
};

static void hd_leaf(clove_task *t, void *arg)
{
    (void)t;
    struct hd_leaf *l = arg;
    hd_note();
    /* Chains progress at different paces (1x to 5x), so that a thread deep
     * in a fast one finds the rest of a slow one, still shallow, to help
     * with. */
    if (l->h->leaf_us > 0)
        spin_us(l->h->leaf_us * (double)(1 + (l->chain * 7u) % 5u));
    l->out = mix64(l->level + 1);
    atomic_fetch_add_explicit(&l->h->leaves, 1, memory_order_relaxed);
}

/* A chain: at each level a frame of HD_FRAME bytes, a fork of the rest of
 * the chain, and a leaf of this level's own work while the rest may run
 * elsewhere. Every job shared is a deep one (the rest of a chain), so a
 * thread that waits at a deep join and helps with a shallow one nests
 * its whole depth on top of its own. */
struct hd_rest {
    struct hd *h;
    unsigned level, chain;
    uint64_t out;
};

static uint64_t hd_chain(clove_task *t, struct hd *h, unsigned level, unsigned chain);

static void hd_rest_job(clove_task *t, void *arg)
{
    struct hd_rest *r = arg;
    r->out = hd_chain(t, r->h, r->level, r->chain);
}

static uint64_t hd_chain(clove_task *t, struct hd *h, unsigned level, unsigned chain)
{
    volatile char pad[HD_FRAME];
    hd_touch(pad, level);
    hd_note();
    if (level == h->depth)
        return (uint64_t)pad[0] & 0;
    struct hd_rest rest = {h, level + 1, chain, 0};
    clove_future f;
    clove_fork(t, &f, hd_rest_job, &rest);
    struct hd_leaf l = {h, level, chain, 0};
    hd_leaf(t, &l);
    if (!clove_join(t, &f))
        hd_rest_job(t, &rest);
    return rest.out + l.out + ((uint64_t)pad[HD_FRAME - 1] & 0);
}

struct hd_range {
    struct hd *h;
    unsigned lo, hi;
    uint64_t out;
};

static uint64_t hd_wide(clove_task *t, struct hd *h, unsigned lo, unsigned hi);

static void hd_wide_job(clove_task *t, void *arg)
{
    struct hd_range *r = arg;
    r->out = hd_wide(t, r->h, r->lo, r->hi);
}

static uint64_t hd_wide(clove_task *t, struct hd *h, unsigned lo, unsigned hi)
{
    if (hi - lo == 1)
        return hd_chain(t, h, 0, lo);
    unsigned mid = lo + (hi - lo) / 2;
    struct hd_range right = {h, mid, hi, 0};
    clove_future f;
    clove_fork(t, &f, hd_wide_job, &right);
    uint64_t s = hd_wide(t, h, lo, mid);
    if (!clove_join(t, &f))
        hd_wide_job(t, &right);
    return s + right.out;
}

/* The wide tree: every node forks HD_FAN - 1 children one after the other
 * and calls the first itself, down to `depth` levels; leaves compute. */
#define HD_FAN 8

struct hd_node {
    struct hd *h;
    unsigned level;
    uint64_t index, out;
};

static uint64_t hd_tree(clove_task *t, struct hd *h, unsigned level, uint64_t index);

static void hd_node_job(clove_task *t, void *arg)
{
    struct hd_node *n = arg;
    n->out = hd_tree(t, n->h, n->level, n->index);
}

static uint64_t hd_tree(clove_task *t, struct hd *h, unsigned level, uint64_t index)
{
    volatile char pad[HD_FRAME];
    hd_touch(pad, level);
    hd_note();
    if (level == h->depth) {
        struct hd_leaf l = {h, level, (unsigned)index, 0};
        hd_leaf(t, &l);
        return l.out + ((uint64_t)pad[0] & 0);
    }
    struct hd_node kids[HD_FAN - 1];
    clove_future f[HD_FAN - 1];
    for (unsigned i = 0; i < HD_FAN - 1; i++) {
        kids[i] = (struct hd_node){h, level + 1, index * HD_FAN + i + 1, 0};
        clove_fork(t, &f[i], hd_node_job, &kids[i]);
    }
    uint64_t s = hd_tree(t, h, level + 1, index * HD_FAN);
    for (unsigned i = HD_FAN - 1; i-- > 0;) {
        if (!clove_join(t, &f[i]))
            hd_node_job(t, &kids[i]);
        s += kids[i].out;
    }
    return s + ((uint64_t)pad[HD_FRAME - 1] & 0);
}

struct hd_run {
    clove_pool *p;
    struct hd *h;
    uint64_t out;
};

static void hd_fn(clove_task *t, void *arg)
{
    struct hd_run *r = arg;
    if (r->h->tree)
        r->out = hd_tree(t, r->h, 0, 0);
    else
        r->out = hd_wide(t, r->h, 0, r->h->chains);
}

static void *hd_main(void *arg)
{
    struct hd_run *r = arg;
    (void)stack_top();
    ASSERT_OK(clove_pool_run(r->p, hd_fn, r));
    return NULL;
}

static uint64_t hd_leaves(const struct hd *h)
{
    if (!h->tree)
        return (uint64_t)h->depth * h->chains;
    uint64_t n = 1;
    for (unsigned i = 0; i < h->depth; i++)
        n *= HD_FAN;
    return n;
}

static uint64_t hd_expect(const struct hd *h)
{
    uint64_t s = 0;
    if (h->tree) {
        for (uint64_t i = 0; i < hd_leaves(h); i++)
            s += mix64(h->depth + 1);
        return s;
    }
    for (unsigned i = 0; i < h->depth; i++)
        s += mix64(i + 1);
    return s * h->chains;
}

/* Deepest stack (bytes below the calling thread's top) of h on a pool of
 * `threads` threads with worker stacks of `stack` bytes and a heartbeat
 * of heartbeat_us, the caller on a thread with a big stack. */
size_t robust_help_depth(struct hd *h, unsigned threads, size_t stack, unsigned heartbeat_us);
size_t robust_help_depth(struct hd *h, unsigned threads, size_t stack, unsigned heartbeat_us)
{
    clove_pool *p = pool_with_heartbeat(threads, stack, heartbeat_us);
    struct hd_run r = {p, h, 0};
    atomic_store(&hd_max_depth, 0);
    atomic_store(&h->leaves, 0);
    pthread_t th = spawn(hd_main, &r, (size_t)64 << 20);
    ASSERT_OK(pthread_join(th, NULL));
    clove_stats s;
    stats_settle(p);
    ASSERT_OK(clove_pool_stats(p, &s, NULL, 0));
    h->answered = s.answered;
    clove_pool_destroy(p);
    ASSERT_EQ_U(r.out, hd_expect(h));
    ASSERT_EQ_U(atomic_load(&h->leaves), hd_leaves(h));
    return atomic_load(&hd_max_depth);
}

/* Stack in use at the start of a new thread, below its stack's top (the
 * C library's thread descriptor and static TLS live there too). */
static void *base_depth_main(void *arg)
{
    char here;
    *(size_t *)arg = stack_top() - (uintptr_t)&here;
    return NULL;
}

static size_t thread_base_depth(void)
{
    size_t d = 0;
    pthread_t th = spawn(base_depth_main, &d, (size_t)1 << 20);
    ASSERT_OK(pthread_join(th, NULL));
    return d;
}

/* What helping may add to the sequential depth: the library's frames of
 * up to four nested helps (join_shared, run_one_locked, run_job_guarded:
 * well under 1 KiB each) and a worker's frames below its first job. */
#define HD_MARGIN ((size_t)8 << 10)

/* The deepest stack over the sequential one, at 8, 16 and 64 threads on
 * default stacks with a 1 us heartbeat, and at 2 threads with a 20 us one,
 * for the chains and the wide tree: at most 1.1x plus HD_MARGIN (the
 * bound holds by construction, whatever the timing). With more threads
 * than CPUs, idle tasks do not spin, and only the ring's helping runs
 * jobs at a join. With 2 threads on 2 CPUs or more they spin for an
 * interval, long enough that a task waiting at a join asks the runner of
 * its job for records (join_ask, after 2 us) and runs them there. */
static void hd_measure(struct hd *h, const char *what)
{
    double leaf = h->leaf_us;
    h->leaf_us = 0;
    size_t seq = robust_help_depth(h, 1, 0, 1);
    static const struct {
        unsigned threads, heartbeat_us;
        bool leaves;     /* leaves take leaf_us, else no time */
        unsigned rounds; /* runs (before scaling) */
    } pools[] = {{2, 20, false, 8}, {2, 20, true, 2}, {8, 1, true, 1}, {16, 1, true, 1},
                 {64, 1, true, 1}};
    for (unsigned k = 0; k < sizeof pools / sizeof pools[0]; k++) {
        h->leaf_us = pools[k].leaves ? leaf : 0;
        size_t rounds = pools[k].rounds > 1 ? scaled(pools[k].rounds, 2) : 1, got = 0;
        uint64_t answered = 0;
        for (size_t r = 0; r < rounds; r++) {
            size_t d = robust_help_depth(h, pools[k].threads, 0, pools[k].heartbeat_us);
            got = d > got ? d : got;
            answered += h->answered;
        }
        test_log("help_depth_bound: %s: sequential %zu KB, %u threads (heartbeat %u us, leaves "
                 "%s) %zu KB (%.3fx), %ju ranges answered in %zu runs\n", what, seq >> 10,
                 pools[k].threads, pools[k].heartbeat_us, pools[k].leaves ? "timed" : "empty",
                 got >> 10, (double)got / (double)seq, (uintmax_t)answered, rounds);
        ASSERT_LE_U(got, seq + seq / 10 + HD_MARGIN);
    }
    h->leaf_us = leaf;
}

void test_help_depth_bound(void)
{
    pthread_t wd = watchdog_start("help_depth_bound");
    /* Bytes per level, from a short sequential chain. */
    struct hd cal = {.depth = 200, .chains = 1, .leaf_us = 0};
    size_t d200 = robust_help_depth(&cal, 1, 0, 1);
    cal.depth = 400;
    size_t d400 = robust_help_depth(&cal, 1, 0, 1);
    size_t per_level = (d400 - d200) / 200;
    ASSERT_LE_U(HD_FRAME, per_level);
    /* A sequential depth of about 800 KB, on 1 MiB worker stacks: without
     * the bound, a worker deep in one chain helps with the rest of
     * another and overflows. (Where a thread's stack also holds a large
     * static TLS block, as with ThreadSanitizer's runtime, the stacks get
     * that much more.) */
    size_t worker_stack = (size_t)1 << 20;
    size_t tls = thread_base_depth();
    if (tls > ((size_t)16 << 10))
        worker_stack += (tls + 0xFFFF) & ~(size_t)0xFFFF;
    struct hd h = {.depth = (unsigned)((800u << 10) / per_level), .chains = 64};
    size_t seq = robust_help_depth(&h, 1, 0, 1);
    h.leaf_us = 1;
    unsigned rounds = (unsigned)scaled(6, 3);
    for (unsigned r = 0; r < rounds; r++) {
        size_t got = robust_help_depth(&h, 16, worker_stack, 1);
        test_log("help_depth_bound: %zu bytes/level, %u levels: sequential %zu KB, "
                 "16 threads on %zu KiB stacks %zu KB (%.3fx)\n",
                 per_level, h.depth, seq >> 10, worker_stack >> 10, got >> 10,
                 (double)got / (double)seq);
        ASSERT_LE_U(got, seq + seq / 10 + HD_MARGIN);
    }
    /* Shallower chains, and the wide tree. */
    struct hd chains = {.depth = 100, .chains = 64, .leaf_us = 1};
    hd_measure(&chains, "chains of 100 levels");
    struct hd tree = {.tree = true, .depth = (unsigned)scaled(5, 4), .leaf_us = 1};
    hd_measure(&tree, "wide tree");
    watchdog_stop(wd);
}

/* ------------------------------------------------------------------------ */
/* Job-stack memory given back                                              */
/* ------------------------------------------------------------------------ */

struct rss_ctx {
    clove_pool *p;
    size_t forks;
    uint64_t sum;
};

static int64_t rss_job(clove_task *t, void *arg)
{
    (void)t;
    return (int64_t)mix64((uint64_t)(uintptr_t)arg);
}

static void rss_fn(clove_task *t, void *arg)
{
    struct rss_ctx *c = arg;
    size_t bytes = c->forks * sizeof(clove_future);
    clove_future *f = test_map(bytes);
    for (size_t i = 0; i < c->forks; i++)
        clove_fork_value(t, &f[i], rss_job, (void *)(uintptr_t)i);
    uint64_t s = 0;
    for (size_t i = c->forks; i-- > 0;) {
        int64_t r;
        if (!clove_join_value(t, &f[i], &r))
            r = rss_job(t, (void *)(uintptr_t)i);
        s += (uint64_t)r;
    }
    test_unmap(f, bytes);
    c->sum = s;
}

static void *rss_main(void *arg)
{
    struct rss_ctx *c = arg;
    ASSERT_OK(clove_pool_run(c->p, rss_fn, c));
    return NULL;
}

/* Phase two: the deep nesting happens in jobs that pool workers take. */
#define RSS_JOBS 16

static void rss_jobs_fn(clove_task *t, void *arg)
{
    struct rss_ctx *c = arg;
    clove_future f[RSS_JOBS];
    for (unsigned i = 0; i < RSS_JOBS; i++)
        clove_fork(t, &f[i], rss_fn, &c[i]);
    for (unsigned i = RSS_JOBS; i-- > 0;)
        if (!clove_join(t, &f[i]))
            rss_fn(t, &c[i]);
}

static uint64_t rss_expect(size_t forks)
{
    uint64_t expect = 0;
    for (size_t i = 0; i < forks; i++)
        expect += mix64(i);
    return expect;
}

/* RSS must come back within 2x of `before` within a second. */
static void rss_check(size_t before, const char *what)
{
    double t0 = now_s();
    size_t after = test_rss_bytes();
    while (after > 2 * before && now_s() - t0 < 1.0) {
        sleep_us(10000);
        after = test_rss_bytes();
    }
    test_log("jobstack_rss_returned: %s: RSS %zu KB before, %zu KB %.3f s after the work\n",
             what, before >> 10, after >> 10, now_s() - t0);
#ifdef CLOVE_TSAN
    /* ThreadSanitizer's shadow of the pages the forks wrote (several
     * times their size) stays when the pages themselves are given back. */
    (void)before;
#else
    ASSERT_LE_U(after, 2 * before);
#endif
}

void test_jobstack_rss_returned(void)
{
    pthread_t wd = watchdog_start("jobstack_rss_returned");
    clove_pool *p = pool_with(8, 0);
    pool_still_works(p, 1);
    size_t before = test_rss_bytes();
    /* Eight threads at once, each nesting a million forks before it joins
     * (the entry task and seven registered ones). */
    enum { CALLERS = 8 };
    struct rss_ctx c[CALLERS];
    pthread_t th[CALLERS];
    size_t forks = scaled(1000000, 100000);
    for (unsigned i = 0; i < CALLERS; i++) {
        c[i] = (struct rss_ctx){p, forks, 0};
        th[i] = spawn(rss_main, &c[i], 0);
    }
    for (unsigned i = 0; i < CALLERS; i++)
        ASSERT_OK(pthread_join(th[i], NULL));
    uint64_t expect = rss_expect(forks);
    for (unsigned i = 0; i < CALLERS; i++)
        ASSERT_EQ_U(c[i].sum, expect);
    rss_check(before, "8 callers");
    /* Jobs that the workers take nest deep in turn. */
    struct rss_ctx jobs[RSS_JOBS];
    size_t job_forks = scaled(200000, 20000);
    for (unsigned i = 0; i < RSS_JOBS; i++)
        jobs[i] = (struct rss_ctx){p, job_forks, 0};
    ASSERT_OK(clove_pool_run(p, rss_jobs_fn, jobs));
    expect = rss_expect(job_forks);
    for (unsigned i = 0; i < RSS_JOBS; i++)
        ASSERT_EQ_U(jobs[i].sum, expect);
    rss_check(before, "deep jobs on workers");
    clove_pool_destroy(p);
    watchdog_stop(wd);
}
