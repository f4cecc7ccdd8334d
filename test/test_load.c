/* SPDX-License-Identifier: MIT */
/*
 * test_load.c - clove as a server uses it:
 *
 *   server_load   16, then 64 external threads calling clove_pool_run on
 *                 one pool at once, over and over, with mixed work (tree
 *                 sums, parallel loops, sorts, empty calls), every result
 *                 checked; every caller is served (each makes its calls:
 *                 a starved one would hang the test into its watchdog);
 *                 RSS does not grow from a first round to a second;
 *   server_churn  thousands of short-lived threads, a few at a time,
 *                 entering the pool while another thread stays inside:
 *                 the pool's mappings and the process's RSS stay bounded.
 *
 * The longer version is the tool clove_load (load_main.c), whose figures
 * are in docs/reliability.md.
 */
#include "load.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__) || defined(CLOVE_TSAN)
#define LOAD_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOAD_SANITIZED 1
#endif
#endif

static _Atomic int watchdog_done;

static void *watchdog_main(void *arg)
{
    const char *what = arg;
    double t0 = now_s();
    while (!atomic_load(&watchdog_done)) {
        if (now_s() - t0 > 100)
            test_fail(__FILE__, __LINE__, "%s: no progress for 100 s (a caller starved?)", what);
        sleep_us(10000);
    }
    return NULL;
}

void test_server_load(void)
{
    pthread_t wd;
    atomic_store(&watchdog_done, 0);
    ASSERT_OK(pthread_create(&wd, NULL, watchdog_main, "server_load"));
    static const unsigned callers[] = {16, 64};
    for (unsigned k = 0; k < 2; k++) {
        clove_pool *p = make_pool(4, 1);
        /* Three times on the same pool: nothing may accumulate from the
         * second round to the third. The first warms up what grows once
         * to its size, such as the C library's malloc arenas, which more
         * threads get the more of them collide in malloc. (The peaks
         * include each round's end, so a sampler that the machine's load
         * delays cannot make the check fail.) */
        size_t peak[3];
        for (unsigned round = 0; round < 3; round++) {
            struct load ld = {
                .pool = p,
                .callers = callers[k],
                .heartbeat_us = 1,
                .seconds = scaled_seconds(0.8, 0.3),
                .min_calls = 3,
                .tree_nodes = scaled(4000, 500),
                .items = scaled(20000, 2000),
                .seed = 0x10ad + k + round,
            };
            load_run(&ld);
            if (test_verbose())
                load_print(stdout, &ld, "server_load");
            ASSERT_LE_U(ld.min_calls, ld.min_caller);
            peak[round] = ld.rss_peak;
        }
#ifndef LOAD_SANITIZED
        test_log("server_load: %u callers: RSS peaks %.1f, %.1f, %.1f MB\n", callers[k],
                 (double)peak[0] / 1048576.0, (double)peak[1] / 1048576.0,
                 (double)peak[2] / 1048576.0);
        ASSERT_LE_U(peak[2], peak[1] + peak[1] / 4 + ((size_t)4 << 20));
#else
        (void)peak; /* the sanitizers' own memory grows as it likes */
#endif
        clove_pool_destroy(p);
    }
    atomic_store(&watchdog_done, 1);
    ASSERT_OK(pthread_join(wd, NULL));
}

/* ------------------------------------------------------------------------ */

struct churn {
    clove_pool *p;
    struct tree tr[8];
    _Atomic int release; /* the holder may leave */
    _Atomic int inside;
};

struct churn_one {
    struct churn *c;
    unsigned slot;
};

static void *churn_main(void *arg)
{
    struct churn_one *o = arg;
    run_tree_checked(o->c->p, &o->c->tr[o->slot]);
    return NULL;
}

static void hold_fn(clove_task *t, void *arg)
{
    (void)t;
    struct churn *c = arg;
    atomic_store(&c->inside, 1);
    while (!atomic_load(&c->release))
        sleep_us(1000);
}

static void *holder_main(void *arg)
{
    struct churn *c = arg;
    ASSERT_OK(clove_pool_run(c->p, hold_fn, c));
    return NULL;
}

void test_server_churn(void)
{
    pthread_t wd;
    atomic_store(&watchdog_done, 0);
    ASSERT_OK(pthread_create(&wd, NULL, watchdog_main, "server_churn"));
    struct churn c = {.p = make_pool(4, 1)};
    for (unsigned i = 0; i < 8; i++)
        tree_build(&c.tr[i], 2000, SHAPE_RANDOM, 0xc4 + i);
    pthread_t holder;
    ASSERT_OK(pthread_create(&holder, NULL, holder_main, &c));
    while (!atomic_load(&c.inside))
        sleep_us(100);
    /* A first batch, so that the spares and the C library's stack cache
     * exist before the baseline. */
    size_t threads = scaled(4000, 400);
    long maps0 = 0, jobs0 = 0;
    size_t rss0 = 0;
    for (size_t done = 0; done < threads; done += 8) {
        if (done == 64) {
            maps0 = test_map_count();
            jobs0 = job_stack_maps();
            rss0 = test_rss_bytes();
        }
        pthread_t th[8];
        struct churn_one o[8];
        for (unsigned i = 0; i < 8; i++) {
            o[i] = (struct churn_one){&c, i};
            ASSERT_OK(pthread_create(&th[i], NULL, churn_main, &o[i]));
        }
        for (unsigned i = 0; i < 8; i++)
            ASSERT_OK(pthread_join(th[i], NULL));
    }
    long maps1 = test_map_count(), jobs1 = job_stack_maps();
    size_t rss1 = test_rss_bytes();
    test_log("server_churn: %zu threads entered (8 at a time) while one stayed inside: "
             "%ld -> %ld job stacks, %ld -> %ld mappings in all, RSS %.1f -> %.1f MB\n",
             threads, jobs0, jobs1, maps0, maps1, (double)rss0 / 1048576.0,
             (double)rss1 / 1048576.0);
    /* The pool's job stacks: one per worker (3), the entry task's, and at
     * most one spare for each thread inside at the same time as others
     * (8), reused from one thread to the next. The C library's own
     * mappings (a malloc arena per thread up to its limit, its cache of
     * thread stacks) come and go within their own bounds. */
    ASSERT_LE_U((size_t)jobs1, 3 + 1 + 8);
    ASSERT_LE_U((size_t)maps1, (size_t)maps0 + 64);
#ifndef LOAD_SANITIZED
    /* Under qemu-user the RSS is the emulator's, which keeps memory for
     * every guest thread it ever ran. */
    const char *emu = getenv("CLOVE_TEST_EMULATOR");
    if (emu == NULL || *emu == 0)
        ASSERT_LE_U(rss1, rss0 + rss0 / 4 + ((size_t)2 << 20));
#endif
    atomic_store(&c.release, 1);
    ASSERT_OK(pthread_join(holder, NULL));
    for (unsigned i = 0; i < 8; i++)
        tree_free(&c.tr[i]);
    clove_pool_destroy(c.p);
    atomic_store(&watchdog_done, 1);
    ASSERT_OK(pthread_join(wd, NULL));
}
