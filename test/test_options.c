/* SPDX-License-Identifier: MIT */
/*
 * test_options.c - pool options: thread names, start/exit hooks, pinning
 * and the CLOVE_THREADS environment variable.
 */
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

/* The comm (thread name) of every thread of the process, concatenated
 * with '|' separators. */
static void all_names(char *out, size_t cap)
{
    pid_t tids[MAX_TIDS];
    size_t n = list_tids(tids, MAX_TIDS);
    out[0] = 0;
    size_t at = 0;
    for (size_t i = 0; i < n && i < MAX_TIDS; i++) {
        char path[64], name[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tids[i]);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* gone meanwhile */
        if (fgets(name, sizeof name, f)) {
            name[strcspn(name, "\n")] = 0;
            at += (size_t)snprintf(out + at, at < cap ? cap - at : 0, "|%s", name);
        }
        fclose(f);
    }
    if (at < cap)
        snprintf(out + at, cap - at, "|");
}

void test_options_thread_names(void)
{
    if (strcmp(CLOVE_TEST_PORT, "linux") != 0)
        test_skip("reads thread names from /proc; the library names its threads on Linux and "
                  "Windows (this build's system layer: %s)", CLOVE_TEST_PORT);
    clove_pool *p = make_pool(4, 100);
    char names[MAX_TIDS * 20];
    /* Each thread names itself as it starts: give them a moment. */
    for (int i = 0; i < 5000; i++) {
        all_names(names, sizeof names);
        if (strstr(names, "|clove-1|") && strstr(names, "|clove-2|") &&
            strstr(names, "|clove-3|") && strstr(names, "|clove-hb|"))
            break;
        sleep_us(1000);
    }
    test_log("threads: %s\n", names);
    ASSERT_CONTAINS(names, "|clove-1|");
    ASSERT_CONTAINS(names, "|clove-2|");
    ASSERT_CONTAINS(names, "|clove-3|");
    ASSERT_CONTAINS(names, "|clove-hb|");
    ASSERT(strstr(names, "|clove-4|") == NULL);
    clove_pool_destroy(p);
}

/* ------------------------------------------------------------------------ */

#define HOOK_MAX 64
struct hooks {
    _Atomic uint32_t started[HOOK_MAX], exited[HOOK_MAX];
    _Atomic uint32_t bad_index;
    _Atomic uint32_t job_before_start; /* a job ran on a worker whose hook had not */
    _Atomic uint32_t pinned_cpu[HOOK_MAX]; /* CPU + 1 if pinned to exactly one */
    int pin_check;
};

static _Thread_local unsigned hook_tls = ~0u; /* what the start hook set up */

static void on_start(unsigned index, void *arg)
{
    struct hooks *h = arg;
    if (index == 0 || index >= HOOK_MAX) {
        atomic_fetch_add(&h->bad_index, 1);
        return;
    }
    hook_tls = index;
#ifdef __linux__
    if (h->pin_check) {
        cpu_set_t set;
        CPU_ZERO(&set);
        if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0 && CPU_COUNT(&set) == 1)
            for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &set))
                    atomic_store(&h->pinned_cpu[index], (uint32_t)c + 1);
    }
#endif
    atomic_fetch_add(&h->started[index], 1);
}

static void on_exit_hook(unsigned index, void *arg)
{
    struct hooks *h = arg;
    if (index == 0 || index >= HOOK_MAX || hook_tls != index) {
        atomic_fetch_add(&h->bad_index, 1);
        return;
    }
    atomic_fetch_add(&h->exited[index], 1);
}

static void hook_body(clove_task *t, size_t lo, size_t hi, void *arg)
{
    struct hooks *h = arg;
    unsigned w = clove_worker_index(t);
    /* On a pool thread the start hook ran first, on this very thread. */
    if (w != 0 && (hook_tls != w || atomic_load(&h->started[w]) != 1))
        atomic_fetch_add(&h->job_before_start, 1);
    uint64_t x = lo;
    for (size_t i = lo; i < hi; i++)
        for (int k = 0; k < 40; k++)
            x = mix64(x + (uint64_t)k);
    if (x == 7)
        atomic_fetch_add(&h->bad_index, 1000);
}

static void hook_run(clove_task *t, void *arg)
{
    clove_for(t, 0, scaled(300000, 30000), hook_body, arg);
}

void test_options_hooks(void)
{
    static const unsigned counts[] = {1, 2, 5, 33};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        unsigned n = counts[k];
        struct hooks *h = calloc(1, sizeof *h);
        ASSERT(h != NULL);
        clove_config cfg = {.threads = n, .heartbeat_us = 1, .on_thread_start = on_start,
                            .on_thread_exit = on_exit_hook, .hook_arg = h};
        clove_pool *p = NULL;
        ASSERT_OK(clove_pool_create(&p, &cfg));
        ASSERT_OK(clove_pool_run(p, hook_run, h));
        clove_pool_destroy(p);
        ASSERT_EQ_U(atomic_load(&h->bad_index), 0);
        ASSERT_EQ_U(atomic_load(&h->job_before_start), 0);
        for (unsigned i = 0; i < HOOK_MAX; i++) {
            unsigned want = i >= 1 && i < n ? 1 : 0;
            ASSERT_MSG(atomic_load(&h->started[i]) == want && atomic_load(&h->exited[i]) == want,
                       "threads=%u worker %u: started %u, exited %u times", n, i,
                       atomic_load(&h->started[i]), atomic_load(&h->exited[i]));
        }
        free(h);
    }
}

void test_options_pinning(void)
{
#ifdef __linux__
    if (strcmp(CLOVE_TEST_PORT, "linux") != 0)
#endif
        test_skip("CLOVE_PIN_WORKERS pins on Linux and Windows, and this test checks Linux "
                  "affinity masks (this build's system layer: %s)", CLOVE_TEST_PORT);
#ifdef __linux__
    cpu_set_t mine;
    CPU_ZERO(&mine);
    ASSERT_OK(pthread_getaffinity_np(pthread_self(), sizeof mine, &mine));
    int m = CPU_COUNT(&mine);
    int cpus[CPU_SETSIZE], nc = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mine))
            cpus[nc++] = c;
    ASSERT_EQ_I(nc, m);
    unsigned n = (unsigned)m + 3; /* wraps around the mask */
    if (n > HOOK_MAX)
        n = HOOK_MAX;
    struct hooks *h = calloc(1, sizeof *h);
    ASSERT(h != NULL);
    h->pin_check = 1;
    clove_config cfg = {.threads = n, .heartbeat_us = 1, .flags = CLOVE_PIN_WORKERS,
                        .on_thread_start = on_start, .on_thread_exit = on_exit_hook,
                        .hook_arg = h};
    clove_pool *p = NULL;
    ASSERT_OK(clove_pool_create(&p, &cfg));
    ASSERT_OK(clove_pool_run(p, hook_run, h));
    clove_pool_destroy(p);
    for (unsigned i = 1; i < n; i++) {
        uint32_t got = atomic_load(&h->pinned_cpu[i]);
        ASSERT_MSG(got == (uint32_t)cpus[i % (unsigned)m] + 1,
                   "worker %u pinned to %d, expected CPU %d", i, (int)got - 1,
                   cpus[i % (unsigned)m]);
    }
    /* The calling thread is not pinned. */
    cpu_set_t after;
    ASSERT_OK(pthread_getaffinity_np(pthread_self(), sizeof after, &after));
    ASSERT(CPU_EQUAL(&after, &mine));
    /* Without the flag nobody is pinned (when there is more than one CPU). */
    memset(h, 0, sizeof *h);
    h->pin_check = 1;
    cfg.flags = 0;
    ASSERT_OK(clove_pool_create(&p, &cfg));
    ASSERT_OK(clove_pool_run(p, hook_run, h));
    clove_pool_destroy(p);
    if (m > 1)
        for (unsigned i = 1; i < n; i++)
            ASSERT_EQ_U(atomic_load(&h->pinned_cpu[i]), 0);
    free(h);
#endif
}

void test_options_env_threads(void)
{
    clove_pool *p = NULL;
    test_setenv("CLOVE_THREADS", "3");
    clove_config dflt = {0};
    ASSERT_OK(clove_pool_create(&p, &dflt));
    ASSERT_EQ_U(clove_pool_threads(p), 3);
    clove_pool_destroy(p);
    ASSERT_OK(clove_pool_create(&p, NULL));
    ASSERT_EQ_U(clove_pool_threads(p), 3);
    clove_pool_destroy(p);
    /* An explicit count wins over the environment. */
    clove_config two = {.threads = 2};
    ASSERT_OK(clove_pool_create(&p, &two));
    ASSERT_EQ_U(clove_pool_threads(p), 2);
    clove_pool_destroy(p);
    static const char *bad[] = {
#ifndef _WIN32
        "", /* Windows cannot hold an empty variable: setting it to "" removes it */
#endif
        "0", "-1", "abc", "3x", " 3", "4097", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        test_setenv("CLOVE_THREADS", bad[i]);
        clove_pool *q = NULL;
        stderr_capture_begin();
        int rc = clove_pool_create(&q, NULL);
        char *err = stderr_capture_end();
        ASSERT_MSG(rc == EINVAL, "CLOVE_THREADS=\"%s\": create returned %d", bad[i], rc);
        ASSERT_EQ_P(q, NULL);
        /* One line naming the variable and the value refused. */
        char want[64];
        snprintf(want, sizeof want, "clove: CLOVE_THREADS=\"%s\" refused", bad[i]);
        ASSERT_CONTAINS(err, want);
        ASSERT_MSG(count_lines(err) == 1, "CLOVE_THREADS=\"%s\": stderr was:\n%s", bad[i], err);
        free(err);
        stderr_capture_begin();
        ASSERT_OK(clove_pool_create(&q, &two)); /* ignored when threads is given */
        err = stderr_capture_end();
        ASSERT_MSG(err[0] == 0, "CLOVE_THREADS ignored, yet stderr was:\n%s", err);
        free(err);
        clove_pool_destroy(q);
    }
    test_setenv("CLOVE_THREADS", "40");
    clove_config one_hb = {0};
    ASSERT_OK(clove_pool_create(&p, &one_hb));
    ASSERT_EQ_U(clove_pool_threads(p), 40);
    clove_pool_destroy(p);
    test_setenv("CLOVE_THREADS", NULL);
    /* Unknown flag bits. */
    static const unsigned bad_flags[] = {4, 8, 0x80000000u, CLOVE_PIN_WORKERS | 4};
    for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
        clove_config flags = {.threads = 2, .flags = bad_flags[i]};
        clove_pool *q = NULL;
        ASSERT_EQ_I(clove_pool_create(&q, &flags), EINVAL);
        ASSERT_EQ_P(q, NULL);
    }
}

/* Idle tasks watch for work before they sleep, unless CLOVE_NO_SPIN: in
 * both modes every job of many short fan-outs runs exactly once and the
 * sums are the sequential ones. With a 20 us heartbeat the watch is 20
 * us, shorter than many of the idle gaps here, so tasks both catch work
 * while watching and park and are woken (a lost wake-up hangs: the
 * watchdog); 8 threads on fewer CPUs never watch. */
struct spin_ctx;
static const struct spin_ctx *spin_ctx_g;
struct spin_ctx {
    size_t n;
    uint64_t seed;
    _Atomic uint32_t *seen;
    uint64_t sum;
};

static int64_t spin_leaf(clove_task *t, void *arg)
{
    (void)t;
    const struct spin_ctx *c = spin_ctx_g;
    size_t i = (size_t)(uintptr_t)arg;
    atomic_fetch_add_explicit(&c->seen[i], 1, memory_order_relaxed);
    uint64_t v = index_value(c->seed, i);
    /* Uneven work: a few leaves are much longer than the rest. */
    for (unsigned k = 0; k < (v % 16 == 0 ? 20000u : 1000u); k++)
        v = mix64(v);
    return (int64_t)(v >> 20); /* 256 of them add up without overflow */
}

/* The leaves [lo, hi): the upper half forked, the lower half recursed. */
struct spin_range {
    size_t lo, hi;
    int64_t sum;
};

static void spin_range_job(clove_task *t, void *arg)
{
    struct spin_range *r = arg;
    if (r->hi - r->lo == 1) {
        r->sum = spin_leaf(t, (void *)(uintptr_t)r->lo);
        return;
    }
    size_t mid = r->lo + (r->hi - r->lo) / 2;
    struct spin_range up = {mid, r->hi, 0}, down = {r->lo, mid, 0};
    clove_future f;
    clove_fork(t, &f, spin_range_job, &up);
    spin_range_job(t, &down);
    if (!clove_join(t, &f))
        spin_range_job(t, &up);
    r->sum = down.sum + up.sum;
}

static void spin_run(clove_task *t, void *arg)
{
    struct spin_ctx *c = arg;
    struct spin_range all = {0, c->n, 0};
    spin_range_job(t, &all);
    c->sum = (uint64_t)all.sum;
}

void test_options_no_spin(void)
{
    test_watchdog(120);
    enum { N = 256 };
    _Atomic uint32_t seen[N];
    struct spin_ctx c = {N, 0x5b17, seen, 0};
    spin_ctx_g = &c;
    uint64_t want = 0;
    for (size_t i = 0; i < N; i++) {
        uint64_t v = index_value(c.seed, i);
        for (unsigned k = 0; k < (v % 16 == 0 ? 20000u : 1000u); k++)
            v = mix64(v);
        want += v >> 20;
    }
    static const unsigned flags[] = {0, CLOVE_NO_SPIN};
    static const unsigned threads[] = {2, 8};
    for (size_t m = 0; m < 4; m++) {
        clove_config cfg = {.threads = threads[m / 2], .heartbeat_us = 20,
                            .flags = flags[m % 2]};
        clove_pool *p = NULL;
        ASSERT_OK(clove_pool_create(&p, &cfg));
        for (unsigned round = 0; round < (unsigned)scaled(300, 60); round++) {
            for (size_t i = 0; i < N; i++)
                atomic_store_explicit(&seen[i], 0, memory_order_relaxed);
            ASSERT_OK(clove_pool_run(p, spin_run, &c));
            for (size_t i = 0; i < N; i++)
                ASSERT_EQ_U(atomic_load_explicit(&seen[i], memory_order_relaxed), 1);
            ASSERT_EQ_U(c.sum, want);
        }
        clove_stats st;
        stats_settle(p);
        ASSERT_OK(clove_pool_stats(p, &st, NULL, 0));
        test_log("threads %u, flags %u: %ju shared, %ju sleeps\n", cfg.threads, cfg.flags,
                 (uintmax_t)st.shared, (uintmax_t)st.sleeps);
        ASSERT_EQ_U(st.shared + st.stolen, st.ran + st.reclaimed);
        clove_pool_destroy(p);
    }
    spin_ctx_g = NULL;
}

void test_options_version(void)
{
    ASSERT_EQ_I(clove_version(), CLOVE_VERSION);
    ASSERT_EQ_I(CLOVE_VERSION,
                CLOVE_VERSION_MAJOR * 10000 + CLOVE_VERSION_MINOR * 100 + CLOVE_VERSION_PATCH);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", CLOVE_VERSION_MAJOR, CLOVE_VERSION_MINOR,
             CLOVE_VERSION_PATCH);
    ASSERT_MSG(strcmp(clove_version_string(), want) == 0, "clove_version_string() = %s",
               clove_version_string());
    ASSERT_MSG(strcmp(CLOVE_VERSION_STRING, want) == 0, "CLOVE_VERSION_STRING = %s",
               CLOVE_VERSION_STRING);
}

/* clove_config as a later header might declare it: today's fields, then
 * one more. */
struct config_next {
    clove_config base;
    uint64_t newer;
};

void test_options_config_size(void)
{
    clove_pool *p = NULL;
    clove_config cfg = {.threads = 2, .heartbeat_us = 7};
    /* The function (not the macro): the 0.1 layout. */
    ASSERT_OK((clove_pool_create)(&p, &cfg));
    ASSERT_EQ_U(clove_pool_threads(p), 2);
    clove_pool_destroy(p);
    ASSERT_OK((clove_pool_create)(&p, NULL));
    clove_pool_destroy(p);
    /* The macro passes sizeof(clove_config). */
    ASSERT_OK(clove_pool_create_sized(&p, &cfg, sizeof cfg));
    ASSERT_EQ_U(clove_pool_threads(p), 2);
    clove_pool_destroy(p);
    /* A program built against a newer header: its new field zero is taken
     * as the default; non-zero is refused with one line on stderr. */
    struct config_next next = {.base = cfg, .newer = 0};
    ASSERT_OK(clove_pool_create_sized(&p, &next.base, sizeof next));
    ASSERT_EQ_U(clove_pool_threads(p), 2);
    clove_pool_destroy(p);
    next.newer = 1;
    p = NULL;
    stderr_capture_begin();
    int rc = clove_pool_create_sized(&p, &next.base, sizeof next);
    char *err = stderr_capture_end();
    ASSERT_EQ_I(rc, EINVAL);
    ASSERT_EQ_P(p, NULL);
    ASSERT_CONTAINS(err, "does not know");
    ASSERT_CONTAINS(err, clove_version_string());
    ASSERT_EQ_U(count_lines(err), 1);
    free(err);
    /* Smaller than any clove_config ever was. */
    ASSERT_EQ_I(clove_pool_create_sized(&p, &cfg, offsetof(clove_config, trace_path)), EINVAL);
    ASSERT_EQ_P(p, NULL);
    /* NULL config: the size does not matter. */
    ASSERT_OK(clove_pool_create_sized(&p, NULL, 0));
    clove_pool_destroy(p);
}

static void stats_run(clove_task *t, void *arg)
{
    (void)t;
    (void)arg;
}

/* clove_stats as a later header might declare it. */
struct stats_next {
    clove_stats base;
    uint64_t newer;
};

void test_options_stats_size(void)
{
    clove_pool *p = make_pool(3, 1);
    ASSERT_OK(clove_pool_run(p, stats_run, NULL));
    clove_stats want[3], total;
    ASSERT_OK(clove_pool_stats(p, &total, want, 3));
    /* A larger stride: each element gets today's counters and a zero. */
    struct stats_next next[3], next_total;
    memset(next, 0xa5, sizeof next);
    memset(&next_total, 0xa5, sizeof next_total);
    ASSERT_OK(clove_pool_stats_sized(p, &next_total.base, &next[0].base, 3, sizeof next[0]));
    for (int i = 0; i < 3; i++) {
        /* Sleeps may have been counted between the two calls. */
        ASSERT_EQ_U(next[i].base.ran, want[i].ran);
        ASSERT_EQ_U(next[i].base.heartbeats, want[i].heartbeats);
        ASSERT_GE_U(next[i].base.sleeps, want[i].sleeps);
        ASSERT_EQ_U(next[i].newer, 0);
    }
    ASSERT_EQ_U(next_total.base.ran, total.ran);
    ASSERT_EQ_U(next_total.newer, 0);
    /* The function: the 0.1 layout. */
    clove_stats one;
    ASSERT_OK((clove_pool_stats)(p, &one, NULL, 0));
    ASSERT_EQ_U(one.ran, total.ran);
    /* A program built with the 0.1 header: up to stolen, nothing after. */
    memset(&one, 0xa5, sizeof one);
    ASSERT_OK(clove_pool_stats_sized(p, &one, NULL, 0, offsetof(clove_stats, handed)));
    ASSERT_EQ_U(one.ran, total.ran);
    ASSERT_EQ_U(one.handed, UINT64_C(0xa5a5a5a5a5a5a5a5));
    ASSERT_EQ_U(one.answered, UINT64_C(0xa5a5a5a5a5a5a5a5));
    /* Smaller than 0.1's. */
    ASSERT_EQ_I(clove_pool_stats_sized(p, &one, NULL, 0, offsetof(clove_stats, stolen)), EINVAL);
    clove_pool_destroy(p);
}
