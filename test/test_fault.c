/* SPDX-License-Identifier: MIT */
/*
 * test_fault.c - ENOMEM and EAGAIN from clove_pool_create, by making the
 * n-th allocation, thread creation or sync-object initialisation fail
 * (src/fault.h), for n = 1, 2, ... until create no longer reaches it.
 * LeakSanitizer (ASan builds) checks at exit that nothing leaked.
 */
#include "test.h"
#include "../src/fault.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>

static char sentinel_obj;
#define SENTINEL ((clove_pool *)(void *)&sentinel_obj)

static const char *kind_name(int kind)
{
    switch (kind) {
    case CLOVE__FAULT_ALLOC: return "alloc";
    case CLOVE__FAULT_THREAD: return "thread";
    case CLOVE__FAULT_SYNC: return "sync";
    default: return "?";
    }
}

/* Returns how many points of this kind made create fail. */
static unsigned long walk(int kind, const clove_config *cfg, unsigned base,
                          const struct tree *tr)
{
    int expect_rc = kind == CLOVE__FAULT_THREAD ? EAGAIN : ENOMEM;
    unsigned long n;
    for (n = 1; n < 1000; n++) {
        clove_pool *p = SENTINEL;
        clove__fault_arm(kind, n);
        int rc = clove_pool_create(&p, cfg);
        unsigned long seen = clove__fault_count(kind);
        clove__fault_arm(kind, 0);
        if (rc == 0) {
            /* Create got through without reaching the armed point. */
            ASSERT_MSG(seen < n, "%s point %lu was reached (%lu seen) but create "
                       "succeeded", kind_name(kind), n, seen);
            ASSERT_NE_P(p, SENTINEL);
            run_tree_checked(p, tr);
            clove_pool_destroy(p);
            break;
        }
        ASSERT_MSG(rc == expect_rc, "failing %s point %lu (threads=%u, stack_size=%zu): "
                   "create returned %d, expected %d", kind_name(kind), n, cfg->threads,
                   cfg->stack_size, rc, expect_rc);
        ASSERT_MSG(seen >= n, "create failed with %d but %s point %lu was never reached",
                   rc, kind_name(kind), n);
        ASSERT_EQ_P(p, SENTINEL);
        unsigned now = wait_thread_count(base);
        ASSERT_MSG(now == base, "after failing %s point %lu: %u threads, expected %u",
                   kind_name(kind), n, now, base);
    }
    ASSERT_LT_U(n, 1000);
    test_log("fault %s threads=%u stack=%zu: %lu failure points\n", kind_name(kind),
             cfg->threads, cfg->stack_size, n - 1);
    return n - 1;
}

void test_fault_injection_walk(void)
{
    struct tree tr;
    tree_build(&tr, 3000, SHAPE_RANDOM, 0xfa);
    unsigned base = thread_baseline();
    static const clove_config cfgs[] = {
        {.threads = 4},
        {.threads = 4, .heartbeat_us = 1, .stack_size = (size_t)512 << 10},
        {.threads = 2, .heartbeat_us = 1, .stack_size = 65536 * 2, .flags = CLOVE_PIN_WORKERS},
        {.threads = 1},
        {.threads = 1, .stack_size = (size_t)1 << 20},
        /* Tracing allocates a ring per worker index (written to /dev/null). */
        {.threads = 3, .heartbeat_us = 1, .trace_path = "/dev/null"},
        {.threads = 1, .trace_path = "/dev/null"},
    };
    for (int rep = 0; rep < 2; rep++) {
        for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
            const clove_config *cfg = &cfgs[c];
            unsigned long a = walk(CLOVE__FAULT_ALLOC, cfg, base, &tr);
            unsigned long s = walk(CLOVE__FAULT_SYNC, cfg, base, &tr);
            unsigned long t = walk(CLOVE__FAULT_THREAD, cfg, base, &tr);
            /* At least the pool itself, its lock, and every worker. */
            ASSERT_GE_U(a, 1);
            ASSERT_GE_U(s, 1);
            ASSERT_GE_U(t, cfg->threads - 1);
        }
    }
    /* Everything works normally afterwards. */
    clove_pool *p = make_pool(4, 1);
    for (int r = 0; r < 3; r++)
        run_tree_checked(p, &tr);
    clove_pool_destroy(p);
    ASSERT_EQ_U(wait_thread_count(base), base);
    tree_free(&tr);
}

/* A real failure, not an injected one: worker stacks that cannot be
 * mapped. pthread_create fails after the heartbeat thread (and possibly
 * other workers) started; create must undo everything. */
void test_create_huge_stack_fails(void)
{
    struct tree tr;
    tree_build(&tr, 2000, SHAPE_RANDOM, 0xb19);
    unsigned base = thread_baseline();
    static const size_t sizes[] = {(size_t)1 << 60, SIZE_MAX / 2, SIZE_MAX - 65535};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (unsigned threads = 2; threads <= 4; threads++) {
            clove_config cfg = {.threads = threads, .heartbeat_us = 1, .stack_size = sizes[k]};
            clove_pool *p = SENTINEL;
            int rc = clove_pool_create(&p, &cfg);
            ASSERT_MSG(rc == EAGAIN || rc == ENOMEM || rc == EINVAL,
                       "create with stack_size=%zu returned %d", sizes[k], rc);
            test_log("stack_size=%zu threads=%u: %d\n", sizes[k], threads, rc);
            ASSERT_EQ_P(p, SENTINEL);
            ASSERT_EQ_U(wait_thread_count(base), base);
        }
    }
    clove_pool *p = make_pool(3, 1);
    run_tree_checked(p, &tr);
    clove_pool_destroy(p);
    ASSERT_EQ_U(wait_thread_count(base), base);
    tree_free(&tr);
}

/*
 * clove_pool_run's ENOMEM: the pool keeps one job stack ready, so a second
 * thread inside at the same time maps one, and that mapping can fail. The
 * run must then return ENOMEM without calling fn, leave the pool working
 * (the first run finishes, a later run succeeds and maps it), and leak
 * nothing (job_stack_maps after destroy).
 */
struct holder {
    clove_pool *pool;
    _Atomic int inside, release;
};

static void hold_fn(clove_task *t, void *arg)
{
    (void)t;
    struct holder *h = arg;
    atomic_store(&h->inside, 1);
    double end = now_s() + 20;
    while (!atomic_load(&h->release)) {
        ASSERT_MSG(now_s() < end, "watchdog: never released");
        sleep_us(100);
    }
}

static void *hold_main(void *arg)
{
    struct holder *h = arg;
    ASSERT_OK(clove_pool_run(h->pool, hold_fn, h));
    return NULL;
}

static void must_not_run(clove_task *t, void *arg)
{
    (void)t;
    (void)arg;
    ASSERT_MSG(0, "clove_pool_run called fn after failing");
}

void test_run_enomem_job_stack(void)
{
    long maps = job_stack_maps();
    static const unsigned threads[] = {1, 3};
    for (size_t k = 0; k < 2; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        struct holder h = {p, 0, 0};
        pthread_t th;
        ASSERT_OK(pthread_create(&th, NULL, hold_main, &h));
        while (!atomic_load(&h.inside))
            sleep_us(100);
        clove__fault_arm(CLOVE__FAULT_ALLOC, 1);
        int rc = clove_pool_run(p, must_not_run, NULL);
        unsigned long seen = clove__fault_count(CLOVE__FAULT_ALLOC);
        clove__fault_arm(CLOVE__FAULT_ALLOC, 0);
        ASSERT_EQ_U(rc, ENOMEM);
        ASSERT_GE_U(seen, 1);
        /* Now it maps one and works, while the first run is still inside. */
        struct tree tr;
        tree_build(&tr, 2000, SHAPE_RANDOM, 0xe0 + k);
        run_tree_checked(p, &tr);
        atomic_store(&h.release, 1);
        ASSERT_OK(pthread_join(th, NULL));
        run_tree_value_checked(p, &tr);
        tree_free(&tr);
        clove_pool_destroy(p);
        ASSERT_EQ_U(job_stack_maps(), maps);
    }
}

/*
 * A pool entered by one thread at a time runs on its entry task: no run
 * allocates or maps anything after clove_pool_create, whichever thread
 * enters, so ENOMEM is impossible there (docs/api.md, clove_pool_run).
 */
struct seq_arg {
    clove_pool *pool;
    const struct tree *tr;
};

static void *seq_run_main(void *arg)
{
    struct seq_arg *a = arg;
    run_tree_checked(a->pool, a->tr);
    return NULL;
}

void test_run_one_thread_maps_nothing(void)
{
    static const unsigned threads[] = {1, 3};
    for (size_t k = 0; k < 2; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        struct tree tr;
        tree_build(&tr, 3000, SHAPE_RANDOM, 0xf0 + k);
        long maps = job_stack_maps();
        clove__fault_arm(CLOVE__FAULT_ALLOC, 1);
        for (int r = 0; r < 5; r++) {
            run_tree_checked(p, &tr);
            run_tree_value_checked(p, &tr);
            /* Another thread, after this one has left. */
            struct seq_arg a = {p, &tr};
            pthread_t th;
            ASSERT_OK(pthread_create(&th, NULL, seq_run_main, &a));
            ASSERT_OK(pthread_join(th, NULL));
        }
        unsigned long seen = clove__fault_count(CLOVE__FAULT_ALLOC);
        clove__fault_arm(CLOVE__FAULT_ALLOC, 0);
        ASSERT_EQ_U(seen, 0);
        if (maps >= 0)
            ASSERT_EQ_U(job_stack_maps(), maps);
        tree_free(&tr);
        clove_pool_destroy(p);
    }
}
