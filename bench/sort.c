/* SPDX-License-Identifier: MIT */
/*
 * sort.c - clove_sort against the C library's qsort, side by side.
 *
 * n random 64-bit keys (xorshift, fixed seed), sorted with one compar call
 * per comparison by both. Each sample copies the same unsorted input into
 * the array (not timed) and sorts it; samples are interleaved round by
 * round: qsort, then clove_sort on each thread count. Every result is
 * compared with qsort's (a wrong one aborts). Reports ns per element:
 * median, min, max, ratio to qsort, and clove's speed-up over its own
 * 1-thread run.
 *
 * Usage: sort [-n N] [-t THREADS]... [--reps R] [--heartbeat US]
 *             [--csv FILE] [--quick]
 * Defaults: -n 10000000, threads 1 2 4 8 16 32, 5 samples.
 * The size is -n 100000000 (about 1.6 GB with the scratch buffer).
 */
#define _POSIX_C_SOURCE 200809L
#include <clove.h>

#include "bench_util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CFG 16
#define MAX_REPS 101

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}



static void die(const char *what)
{
    fprintf(stderr, "sort: %s\n", what);
    exit(2);
}

struct sort_arg {
    uint64_t *v;
    size_t n;
    int rc;
};

static void sort_job(clove_task *t, void *p)
{
    struct sort_arg *a = p;
    a->rc = clove_sort(t, a->v, a->n, sizeof *a->v, cmp_u64);
}

struct cfg {
    const char *impl; /* "qsort" or "clove" */
    unsigned threads;
    clove_pool *pool;
    double samples[MAX_REPS];
    size_t ns;
};

int main(int argc, char **argv)
{
    size_t n = 10000000;
    unsigned threads[MAX_CFG];
    size_t nthreads = 0, reps = 5;
    unsigned heartbeat = 0;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-n") && i + 1 < argc)
            n = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "-t") && i + 1 < argc) {
            if (nthreads == MAX_CFG - 1)
                die("too many -t");
            threads[nthreads++] = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--reps") && i + 1 < argc)
            reps = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--heartbeat") && i + 1 < argc)
            heartbeat = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--csv") && i + 1 < argc)
            csv_path = argv[++i];
        else if (!strcmp(a, "--quick")) {
            n = 100000;
            reps = 3;
        } else {
            fprintf(stderr, "usage: sort [-n N] [-t THREADS]... [--reps R] [--heartbeat US]"
                            " [--csv FILE] [--quick]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > MAX_REPS)
        die("--reps must be 1..101");
    if (n < 2)
        die("-n must be at least 2");
    if (nthreads == 0) {
        static const unsigned def[] = {1, 2, 4, 8, 16, 32};
        for (size_t k = 0; k < 6; k++)
            threads[nthreads++] = def[k];
    }

    uint64_t *input = malloc(n * sizeof *input), *v = malloc(n * sizeof *v),
             *want = malloc(n * sizeof *want);
    if (!input || !v || !want)
        die("out of memory");
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        input[i] = s;
    }

    struct cfg cfg[MAX_CFG];
    size_t ncfg = 0;
    cfg[ncfg++] = (struct cfg){"qsort", 1, NULL, {0}, 0};
    for (size_t k = 0; k < nthreads; k++) {
        clove_config c = {.threads = threads[k], .heartbeat_us = heartbeat};
        struct cfg *g = &cfg[ncfg++];
        *g = (struct cfg){"clove", threads[k], NULL, {0}, 0};
        int rc = clove_pool_create(&g->pool, &c);
        if (rc != 0) {
            fprintf(stderr, "sort: clove_pool_create(%u threads): %s\n", threads[k],
                    strerror(rc));
            return 1;
        }
    }

    printf("sort: %zu random 64-bit keys, compar through a pointer; %zu samples per"
           " configuration, interleaved; heartbeat %u us\n",
           n, reps, heartbeat ? heartbeat : CLOVE_DEFAULT_HEARTBEAT_US);
    memcpy(want, input, n * sizeof *input);
    qsort(want, n, sizeof *want, cmp_u64); /* warm-up and the reference */
    for (size_t r = 0; r < reps; r++) {
        for (size_t k = 0; k < ncfg; k++) {
            memcpy(v, input, n * sizeof *input);
            double t0 = bench_now_ns();
            if (cfg[k].pool == NULL) {
                qsort(v, n, sizeof *v, cmp_u64);
            } else {
                struct sort_arg a = {v, n, -1};
                clove_pool_run(cfg[k].pool, sort_job, &a);
                if (a.rc != 0) {
                    fprintf(stderr, "sort: clove_sort: %s\n", strerror(a.rc));
                    return 1;
                }
            }
            double dt = (bench_now_ns() - t0) * 1e-9;
            if (memcmp(v, want, n * sizeof *v) != 0) {
                fprintf(stderr, "sort: %s on %u threads: wrong result\n", cfg[k].impl,
                        cfg[k].threads);
                abort();
            }
            cfg[k].samples[cfg[k].ns++] = dt * 1e9 / (double)n;
        }
    }

    FILE *csv = NULL;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv)
            die("cannot open the CSV file");
        fputs("workload,n,impl,threads,heartbeat_us,median_ns_per_node,min,max,"
              "ratio_to_baseline,samples\n", csv);
    }
    printf("  %-6s %7s %10s %10s %10s %10s %12s\n", "impl", "threads", "median", "min", "max",
           "vs qsort", "vs clove 1t");
    double base = 0, one = 0;
    for (size_t k = 0; k < ncfg; k++) {
        struct cfg *g = &cfg[k];
        double med = bench_median(g->samples, g->ns);
        if (k == 0)
            base = med;
        if (g->pool && g->threads == 1)
            one = med;
        char sp[32] = "-";
        if (g->pool && one > 0)
            snprintf(sp, sizeof sp, "%.2fx", one / med);
        printf("  %-6s %7u %10.2f %10.2f %10.2f %9.2fx %12s\n", g->impl, g->threads, med,
               g->samples[0], g->samples[g->ns - 1], med / base, sp);
        if (csv)
            fprintf(csv, "sort,%zu,%s,%u,%u,%.4f,%.4f,%.4f,%.4f,%zu\n", n, g->impl, g->threads,
                    g->pool ? (heartbeat ? heartbeat : CLOVE_DEFAULT_HEARTBEAT_US) : 0, med,
                    g->samples[0], g->samples[g->ns - 1], med / base, g->ns);
    }
    printf("(ns per element; speed-up 'vs clove 1t' = clove 1-thread median / this median)\n");
    if (csv)
        fclose(csv);
    for (size_t k = 0; k < ncfg; k++)
        clove_pool_destroy(cfg[k].pool);
    free(input);
    free(v);
    free(want);
    return 0;
}
