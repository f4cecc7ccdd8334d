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
#include "tree.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */

struct ctxsw {
    long long others;  /* all threads but the main one */
    long long main;    /* the main thread */
    int nthreads;      /* threads seen */
};

static long long read_switches(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1; /* the thread went away meanwhile */
    char line[256];
    long long total = 0;
    while (fgets(line, sizeof line, f)) {
        long long v;
        if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 ||
            sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1)
            total += v;
    }
    fclose(f);
    return total;
}

static struct ctxsw count_switches(void)
{
    struct ctxsw c = { 0, 0, 0 };
    pid_t self = getpid();
    DIR *d = opendir("/proc/self/task");
    if (!d) {
        perror("idle: /proc/self/task");
        exit(2);
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        long long v = read_switches(path);
        if (v < 0)
            continue;
        c.nthreads++;
        if (atoi(e->d_name) == self)
            c.main += v;
        else
            c.others += v;
    }
    closedir(d);
    return c;
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Measure one window of `secs` seconds of sleeping. */
static void window(const char *label, double secs, unsigned threads,
                   int *fail)
{
    struct ctxsw c0 = count_switches();
    double cpu0 = cpu_ms(), w0 = wall_s();
    sleep_s(secs);
    double cpu1 = cpu_ms(), w1 = wall_s();
    struct ctxsw c1 = count_switches();
    long long others = c1.others - c0.others;
    double cpu = cpu1 - cpu0;
    /* Targets scale with the window: 20 switches and 5 ms per 2 s. */
    double scale = secs / 2.0;
    int ok = others <= 20 * scale && cpu <= 5 * scale;
    if (!ok) *fail = 1;
    printf("  %-6s %3u threads (%d in process): %.2f s window: CPU %.3f ms,"
           " context switches %lld (other threads) + %lld (main thread,"
           " its own sleep)  %s\n",
           label, threads, c1.nthreads, w1 - w0, cpu, others,
           c1.main - c0.main, ok ? "[within target]" : "[OVER TARGET]");
}

int main(int argc, char **argv)
{
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
    sleep_s(0.1);
    window("fresh", secs, threads, &fail);
    clove_pool_destroy(pool);

    /* A pool after one parallel job. */
    node *root = tree_build(1, nodes);
    rc = clove_pool_create(&pool, &cc);
    if (rc) {
        fprintf(stderr, "idle: clove_pool_create: %s\n", strerror(rc));
        return 2;
    }
    sleep_s(0.1);
    struct tree_sum_arg a = { root, 0 };
    double cpu0 = cpu_ms(), w0 = wall_s();
    struct ctxsw c0 = count_switches();
    clove_pool_run(pool, tree_sum_job, &a);
    struct ctxsw c1 = count_switches();
    double cpu1 = cpu_ms(), w1 = wall_s();
    int64_t expect = (int64_t)nodes * (nodes + 1) / 2;
    if (a.result != expect) {
        fprintf(stderr, "idle: WRONG SUM %" PRId64 ", expected %" PRId64 "\n",
                a.result, expect);
        abort();
    }
    printf("  job: tree sum of %ld nodes, %.2f ms wall, %.2f ms CPU, %lld"
           " context switches (other threads), sum checked\n",
           nodes, (w1 - w0) * 1e3, cpu1 - cpu0, c1.others - c0.others);
    window("after", secs, threads, &fail);
    clove_pool_destroy(pool);
    tree_destroy(root);
    return fail;
}
