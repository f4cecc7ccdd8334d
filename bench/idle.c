/* SPDX-License-Identifier: MIT */
/*
 * idle.c - what an idle pool costs.
 *
 * Two windows of --sleep seconds (default 2) during which the main thread
 * only sleeps:
 *   fresh  a pool that was created and never ran anything;
 *   after  a pool that has just run one job doing real parallel work (a
 *          tree sum over --nodes nodes, forking at every node, checked),
 *          the window starting the moment clove_pool_run returns.
 * Each window reports
 *   - the CPU time of the whole process (CLOCK_PROCESS_CPUTIME_ID, end minus
 *     start: every thread, user + system);
 *   - the context switches of every thread but the main one (voluntary +
 *     nonvoluntary, summed over /proc/self/task/<tid>/status, end minus
 *     start); the main thread's own count, which includes its sleep, is
 *     printed separately.
 * Targets: <= 20 context switches and <= 5 ms CPU per 2 s, 16 threads.
 *
 * Usage: idle [-t THREADS] [--sleep SECONDS] [--nodes N] [--heartbeat US]
 */
#define _GNU_SOURCE
#include "harness.h"
#include "tree.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Measure one window of `secs` seconds of sleeping. */
static void window(const char *label, double secs, unsigned threads,
                   int *fail)
{
    bench_window w = bench_idle_window(secs);
    long long others = w.others;
    double cpu = w.cpu_ms;
    /* Targets scale with the window: 20 switches and 5 ms per 2 s. */
    double scale = secs / 2.0;
    int ok = others <= 20 * scale && cpu <= 5 * scale;
    if (!ok) *fail = 1;
    printf("  %-6s %3u threads (%d in process): %.2f s window: CPU %.3f ms,"
           " context switches %lld (other threads) + %lld (main thread,"
           " its own sleep)  %s\n",
           label, threads, w.nthreads, w.wall_s, cpu, others,
           w.main, ok ? "[within target]" : "[OVER TARGET]");
}

int main(int argc, char **argv)
{
    bench_prog = "idle";
    unsigned threads = 16, heartbeat = 0;
    double secs = 2.0;
    long nodes = 1000000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-t") && i + 1 < argc)
            threads = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--sleep") && i + 1 < argc)
            secs = strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            nodes = (long)strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--heartbeat") && i + 1 < argc)
            heartbeat = (unsigned)strtoul(argv[++i], NULL, 10);
        else {
            fputs("usage: idle [-t THREADS] [--sleep SECONDS] [--nodes N]"
                  " [--heartbeat US]\n", stderr);
            return 2;
        }
    }
    if (threads == 0 || !(secs > 0) || nodes < 1) {
        fputs("idle: bad arguments\n", stderr);
        return 2;
    }

    printf("idle: CPU time of the whole process and context switches of the"
           " pool's threads\nwhile the main thread sleeps (targets for 2 s,"
           " 16 threads: <= 20 switches, <= 5 ms CPU)\n");
    int fail = 0;
    clove_config cc = { .threads = threads, .heartbeat_us = heartbeat };

    /* A fresh pool: nothing ever ran. Give the threads a moment to start
     * and go to sleep first (they are created inside clove_pool_create). */
    clove_pool *pool;
    int rc = clove_pool_create(&pool, &cc);
    if (rc) {
        fprintf(stderr, "idle: clove_pool_create: %s\n", strerror(rc));
        return 2;
    }
    bench_sleep_s(0.1);
    window("fresh", secs, threads, &fail);
    clove_pool_destroy(pool);

    /* A pool after one parallel job. */
    node *root = tree_build(1, nodes);
    rc = clove_pool_create(&pool, &cc);
    if (rc) {
        fprintf(stderr, "idle: clove_pool_create: %s\n", strerror(rc));
        return 2;
    }
    bench_sleep_s(0.1);
    struct tree_sum_arg a = { root, 0 };
    double cpu0 = bench_cpu_ms(), w0 = bench_now_ns();
    bench_ctxsw c0 = bench_count_switches();
    clove_pool_run(pool, tree_sum_job, &a);
    bench_ctxsw c1 = bench_count_switches();
    double cpu1 = bench_cpu_ms(), w1 = bench_now_ns();
    int64_t expect = (int64_t)nodes * (nodes + 1) / 2;
    if (a.result != expect) {
        fprintf(stderr, "idle: WRONG SUM %" PRId64 ", expected %" PRId64 "\n",
                a.result, expect);
        abort();
    }
    printf("  job: tree sum of %ld nodes, %.2f ms wall, %.2f ms CPU, %lld"
           " context switches (other threads), sum checked\n",
           nodes, (w1 - w0) / 1e6, cpu1 - cpu0, c1.others - c0.others);
    window("after", secs, threads, &fail);
    clove_pool_destroy(pool);
    tree_destroy(root);
    return fail;
}
