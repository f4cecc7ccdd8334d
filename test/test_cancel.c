/* SPDX-License-Identifier: MIT */
/*
 * test_cancel.c - cancellation tokens: clove_for_cancel and
 * clove_scope_run_cancel.
 *
 *   cancel_for_search    a search over a range with one match: the body
 *                        that finds it requests the token; the loop
 *                        returns ECANCELED, the match ran once, no index
 *                        ran twice, and on one thread nothing after the
 *                        match's chunk ran; bodies that poll the token
 *                        and bodies that do not, 1-16 threads, 1 us
 *                        heartbeat; a token requested before the loop
 *                        runs nothing; one never requested runs all
 *   cancel_for_outside   another thread requests the token while a long
 *                        loop runs: it returns ECANCELED, each index ran
 *                        at most once
 *   cancel_scope_spawns  a scope function that spawns 10^5 jobs and then
 *                        requests the token runs none of them; a job deep
 *                        in a tree of spawns that cancels: every job ran
 *                        at most once, and at most one per worker started
 *                        after the request completed
 */
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* A search with clove_for_cancel                                           */
/* ------------------------------------------------------------------------ */

struct search {
    clove_cancel *c;
    size_t match;
    bool poll;                /* bodies poll the token between iterations */
    _Atomic uint8_t *hits;    /* per index */
    _Atomic uint64_t ran;     /* iterations run */
    _Atomic uint64_t found;   /* times the match ran */
};

static void search_body(clove_task *t, size_t lo, size_t hi, void *ctx)
{
    (void)t;
    struct search *s = ctx;
    uint64_t n = 0;
    for (size_t i = lo; i < hi; i++) {
        if (s->poll && clove_cancelled(s->c))
            break;
        atomic_fetch_add_explicit(&s->hits[i], 1, memory_order_relaxed);
        n++;
        if (i == s->match) {
            atomic_fetch_add(&s->found, 1);
            clove_cancel_request(s->c);
        }
    }
    atomic_fetch_add_explicit(&s->ran, n, memory_order_relaxed);
}

struct search_run {
    struct search *s;
    size_t n;
    int rc;
};

static void search_fn(clove_task *t, void *arg)
{
    struct search_run *r = arg;
    r->rc = clove_for_cancel(t, 0, r->n, search_body, r->s, r->s->c);
}

static void check_hits(const struct search *s, size_t n, uint64_t *ran_out)
{
    uint64_t ran = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t h = atomic_load_explicit(&s->hits[i], memory_order_relaxed);
        ASSERT_MSG(h <= 1, "index %zu ran %u times", i, (unsigned)h);
        ran += h;
        atomic_store_explicit(&s->hits[i], 0, memory_order_relaxed);
    }
    ASSERT_EQ_U(ran, atomic_load(&s->ran));
    *ran_out = ran;
}

void test_cancel_for_search(void)
{
    size_t n = scaled(2000000, 100000);
    _Atomic uint8_t *hits = calloc(n, sizeof *hits);
    ASSERT(hits != NULL);
    static const unsigned threads[] = {1, 2, 3, 4, 16};
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        uint64_t skipped_total = 0;
        for (size_t r = 0; r < scaled(8, 4); r++) {
            clove_cancel c = CLOVE_CANCEL_INIT;
            struct search s = {&c, n / 10 + r * 977, (r & 1) != 0, hits, 0, 0};
            struct search_run run = {&s, n, -1};
            ASSERT_OK(clove_pool_run(p, search_fn, &run));
            ASSERT_EQ_I(run.rc, ECANCELED);
            ASSERT_EQ_U(atomic_load(&s.found), 1);
            ASSERT_EQ_U(atomic_load_explicit(&hits[s.match], memory_order_relaxed), 1);
            uint64_t ran;
            check_hits(&s, n, &ran);
            if (threads[k] == 1) {
                /* One thread runs the range in order, in chunks: nothing
                 * after the match's chunk, which is far shorter than the
                 * 90 % of the range after it. */
                ASSERT_LT_U(ran, n / 2);
            }
            skipped_total += n - ran;
        }
        test_log("threads %u: %" PRIu64 " iterations skipped\n", threads[k], skipped_total);
        ASSERT(skipped_total > 0);

        /* Requested before the loop: no body call at all. */
        clove_cancel c = CLOVE_CANCEL_INIT;
        clove_cancel_request(&c);
        struct search s = {&c, 0, false, hits, 0, 0};
        struct search_run run = {&s, n, -1};
        ASSERT_OK(clove_pool_run(p, search_fn, &run));
        ASSERT_EQ_I(run.rc, ECANCELED);
        ASSERT_EQ_U(atomic_load(&s.ran), 0);

        /* Never requested (the match is out of range): everything, once. */
        clove_cancel_init(&c);
        struct search s2 = {&c, n, true, hits, 0, 0};
        struct search_run run2 = {&s2, n, -1};
        ASSERT_OK(clove_pool_run(p, search_fn, &run2));
        ASSERT_EQ_I(run2.rc, 0);
        uint64_t ran;
        for (size_t i = 0; i < n; i++)
            ASSERT_EQ_U(atomic_load_explicit(&hits[i], memory_order_relaxed), 1);
        check_hits(&s2, n, &ran);
        ASSERT_EQ_U(ran, n);
        clove_pool_destroy(p);
    }
    free((void *)hits);
}

/* The token from another thread. */
struct outside {
    clove_cancel *c;
    _Atomic uint64_t *ran;
};

static void *outside_main(void *arg)
{
    struct outside *o = arg;
    while (atomic_load(o->ran) == 0)
        sleep_us(50);
    sleep_us(2000);
    clove_cancel_request(o->c);
    return NULL;
}

static void slow_body(clove_task *t, size_t lo, size_t hi, void *ctx)
{
    (void)t;
    struct search *s = ctx;
    for (size_t i = lo; i < hi; i++) {
        atomic_fetch_add_explicit(&s->hits[i], 1, memory_order_relaxed);
        for (volatile int k = 0; k < 200; k++) {
        }
    }
    atomic_fetch_add_explicit(&s->ran, hi - lo, memory_order_relaxed);
}

static void slow_fn(clove_task *t, void *arg)
{
    struct search_run *r = arg;
    r->rc = clove_for_cancel(t, 0, r->n, slow_body, r->s, r->s->c);
}

void test_cancel_for_outside(void)
{
    /* Enough work that the request comes first: about a second of it. */
    size_t n = scaled(4000000, 400000);
    _Atomic uint8_t *hits = calloc(n, sizeof *hits);
    ASSERT(hits != NULL);
    static const unsigned threads[] = {1, 2, 8};
    for (size_t k = 0; k < 3; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        clove_cancel c = CLOVE_CANCEL_INIT;
        struct search s = {&c, n, false, hits, 0, 0};
        struct outside o = {&c, &s.ran};
        pthread_t th;
        ASSERT_EQ_I(pthread_create(&th, NULL, outside_main, &o), 0);
        struct search_run run = {&s, n, -1};
        ASSERT_OK(clove_pool_run(p, slow_fn, &run));
        ASSERT_EQ_I(pthread_join(th, NULL), 0);
        ASSERT_EQ_I(run.rc, ECANCELED);
        uint64_t ran;
        check_hits(&s, n, &ran);
        test_log("threads %u: ran %" PRIu64 " of %zu\n", threads[k], ran, n);
        clove_pool_destroy(p);
    }
    free((void *)hits);
}

/* ------------------------------------------------------------------------ */
/* Scopes                                                                   */
/* ------------------------------------------------------------------------ */

struct spawns {
    clove_cancel *c;
    size_t n;
    _Atomic uint8_t *hits;
    _Atomic uint64_t started, after; /* jobs started; of those, after the request */
    _Atomic uint64_t clock;          /* orders starts and the request */
    _Atomic uint64_t requested_at;   /* clock value of the request, or max */
    uint64_t cancel_id;              /* the job that cancels */
};

static void count_start(struct spawns *sp, uint64_t id)
{
    uint64_t now = atomic_fetch_add(&sp->clock, 1);
    atomic_fetch_add_explicit(&sp->hits[id], 1, memory_order_relaxed);
    atomic_fetch_add(&sp->started, 1);
    if (now > atomic_load(&sp->requested_at))
        atomic_fetch_add(&sp->after, 1);
}

static void request(struct spawns *sp)
{
    clove_cancel_request(sp->c);
    atomic_store(&sp->requested_at, atomic_fetch_add(&sp->clock, 1));
}

/* Spawns n jobs, then cancels before returning: none may start. */
static struct spawns *flat_sp;

static void flat_job(clove_task *t, clove_scope *s, void *arg)
{
    (void)t;
    (void)s;
    count_start(flat_sp, (uint64_t)(uintptr_t)arg);
}

static void flat_fn(clove_task *t, clove_scope *s, void *arg)
{
    struct spawns *sp = arg;
    for (size_t i = 0; i < sp->n; i++)
        clove_spawn(t, s, flat_job, (void *)(uintptr_t)i);
    request(sp);
    /* Spawned after the request: dropped at once. */
    for (size_t i = 0; i < 100; i++)
        clove_spawn(t, s, flat_job, (void *)(uintptr_t)i);
}

/* A tree: job id spawns ids 4id+1 .. 4id+4 below n; the job cancel_id
 * requests the token. */
static void tree_job(clove_task *t, clove_scope *s, void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg;
    count_start(flat_sp, id);
    if (id == flat_sp->cancel_id)
        request(flat_sp);
    for (uint64_t k = 1; k <= 4; k++)
        if (4 * id + k < flat_sp->n)
            clove_spawn(t, s, tree_job, (void *)(uintptr_t)(4 * id + k));
    for (volatile int k = 0; k < 300; k++) {
    }
}

struct scope_run {
    clove_scope_fn *fn;
    void *arg;
    clove_cancel *c;
    int rc;
};

static void scope_run_fn(clove_task *t, void *arg)
{
    struct scope_run *r = arg;
    r->rc = clove_scope_run_cancel(t, r->fn, r->arg, r->c);
}

static void reset(struct spawns *sp, clove_cancel *c, size_t n, uint64_t cancel_id)
{
    sp->c = c;
    sp->n = n;
    atomic_store(&sp->started, 0);
    atomic_store(&sp->after, 0);
    atomic_store(&sp->clock, 0);
    atomic_store(&sp->requested_at, UINT64_MAX);
    sp->cancel_id = cancel_id;
    for (size_t i = 0; i < n; i++)
        atomic_store_explicit(&sp->hits[i], 0, memory_order_relaxed);
}

void test_cancel_scope_spawns(void)
{
    size_t n = 100000;
    struct spawns sp;
    sp.hits = calloc(n, sizeof *sp.hits);
    ASSERT(sp.hits != NULL);
    flat_sp = &sp;
    static const unsigned threads[] = {1, 2, 4, 16};
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        for (size_t r = 0; r < scaled(3, 1); r++) {
            /* 10^5 spawns, then the request, before any can start. */
            clove_cancel c = CLOVE_CANCEL_INIT;
            reset(&sp, &c, n, UINT64_MAX);
            struct scope_run run = {flat_fn, &sp, &c, -1};
            ASSERT_OK(clove_pool_run(p, scope_run_fn, &run));
            ASSERT_EQ_I(run.rc, ECANCELED);
            ASSERT_EQ_U(atomic_load(&sp.started), 0);

            /* A tree of spawns; one job somewhere in it cancels. */
            size_t tn = scaled(20000, 2000) < n ? scaled(20000, 2000) : n;
            clove_cancel_init(&c);
            reset(&sp, &c, tn, (uint64_t)(tn / 3 + r));
            struct scope_run run2 = {tree_job, (void *)(uintptr_t)0, &c, -1};
            ASSERT_OK(clove_pool_run(p, scope_run_fn, &run2));
            ASSERT_EQ_I(run2.rc, ECANCELED);
            ASSERT_EQ_U(atomic_load_explicit(&sp.hits[sp.cancel_id], memory_order_relaxed), 1);
            uint64_t started = 0;
            for (size_t i = 0; i < tn; i++) {
                uint8_t h = atomic_load_explicit(&sp.hits[i], memory_order_relaxed);
                ASSERT_MSG(h <= 1, "job %zu ran %u times", i, (unsigned)h);
                started += h;
            }
            ASSERT_EQ_U(started, atomic_load(&sp.started));
            /* One thread runs the tree depth first: the subtrees of the
             * root's later children come after the cancelling job. */
            if (threads[k] == 1)
                ASSERT_LT_U(started, tn);
            /* A worker may have checked the token just before the
             * request and started its job just after: at most one each. */
            ASSERT_LE_U(atomic_load(&sp.after), threads[k]);
        }
        /* Never requested: every job runs, once. */
        clove_cancel c = CLOVE_CANCEL_INIT;
        size_t tn = scaled(20000, 2000) < n ? scaled(20000, 2000) : n;
        reset(&sp, &c, tn, UINT64_MAX);
        struct scope_run run3 = {tree_job, (void *)(uintptr_t)0, &c, -1};
        ASSERT_OK(clove_pool_run(p, scope_run_fn, &run3));
        ASSERT_EQ_I(run3.rc, 0);
        for (size_t i = 0; i < tn; i++)
            ASSERT_EQ_U(atomic_load_explicit(&sp.hits[i], memory_order_relaxed), 1);
        clove_pool_destroy(p);
    }
    free((void *)sp.hits);
}
