/* SPDX-License-Identifier: MIT */
/*
 * longleaf.c - long leaves: a fork/join pair
 * whose halves compute for milliseconds without a fork or a tick.
 *
 * Spice and Chili act on a heartbeat only at the next fork or join, so in
 * clove_join2(a, b) with a leaf a of 50 ms, b waits in the queue until a
 * is done: 100 ms on any number of threads. clove's reserve lets the
 * heartbeat thread hand b to an idle worker while a runs (src/share.c).
 *
 * Workloads (each leaf spins on the clock, calling nothing of clove's):
 *   pair    clove_join2 of two leaves of --leaf-ms each (default 50 ms):
 *           sequential 2 x leaf, ideal on 2 threads 1 x leaf;
 *   rounds  --rounds such pairs one after another inside one run, with
 *           leaves of leaf/rounds ms: the reserve is joined and taken
 *           again every round.
 * Printed per thread count: median, min and max wall time of --reps runs
 * (each a separate clove_pool_run), the ratio to the sequential time, and
 * how the second halves travelled (stolen by the heartbeat thread, or
 * shared by their owner at a fork).
 *
 *   longleaf [-t THREADS ...] [--leaf-ms MS] [--rounds N] [--reps N] [--csv FILE]
 */
#define _POSIX_C_SOURCE 200809L
#include <clove.h>

#include "bench_util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compute for ns nanoseconds (by the clock), without forking or ticking. */
static void leaf(double ns)
{
    double end = bench_now_ns() + ns;
    volatile uint64_t x = 1;
    while (bench_now_ns() < end)
        for (int i = 0; i < 200; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
}

struct job {
    double leaf_ns;
    unsigned rounds;
    _Atomic unsigned done; /* leaves run: each exactly once */
};

static void leaf_fn(clove_task *t, void *arg)
{
    (void)t;
    struct job *j = arg;
    leaf(j->leaf_ns);
    atomic_fetch_add_explicit(&j->done, 1, memory_order_relaxed);
}

static void pairs_fn(clove_task *t, void *arg)
{
    struct job *j = arg;
    for (unsigned r = 0; r < j->rounds; r++)
        clove_join2(t, leaf_fn, j, leaf_fn, j);
}

static void usage(void)
{
    fprintf(stderr, "usage: longleaf [-t THREADS ...] [--leaf-ms MS] [--rounds N] "
                    "[--reps N] [--csv FILE]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    unsigned threads[16];
    size_t nthreads = 0;
    double leaf_ms = 50;
    unsigned rounds = 10, reps = 7;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "-t") || !strcmp(a, "--threads")) && i + 1 < argc) {
            if (nthreads == sizeof threads / sizeof threads[0])
                usage();
            threads[nthreads++] = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--leaf-ms") && i + 1 < argc) {
            leaf_ms = strtod(argv[++i], NULL);
        } else if (!strcmp(a, "--rounds") && i + 1 < argc) {
            rounds = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--reps") && i + 1 < argc) {
            reps = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (!strcmp(a, "--csv") && i + 1 < argc) {
            csv_path = argv[++i];
        } else {
            usage();
        }
    }
    if (nthreads == 0) {
        threads[nthreads++] = 1;
        threads[nthreads++] = 2;
        threads[nthreads++] = 4;
    }
    if (leaf_ms <= 0 || rounds == 0 || reps == 0)
        usage();
    FILE *csv = NULL;
    if (csv_path && !(csv = fopen(csv_path, "w"))) {
        perror(csv_path);
        return 1;
    }
    if (csv)
        fprintf(csv, "workload,threads,leaf_ms,pairs,median_ms,min_ms,max_ms,ratio_to_seq,"
                     "stolen,shared\n");

    printf("long leaves: clove_join2 of two leaves that never fork or tick, %u runs each\n",
           reps);
    printf("%-7s %7s %9s %6s %11s %9s %9s %8s %7s %7s\n", "work", "threads", "leaf_ms",
           "pairs", "median_ms", "min_ms", "max_ms", "vs_seq", "stolen", "shared");
    double *ms = calloc(reps, sizeof *ms);
    if (!ms)
        return 1;
    for (int w = 0; w < 2; w++) {
        const char *name = w == 0 ? "pair" : "rounds";
        unsigned pairs = w == 0 ? 1 : rounds;
        double lms = w == 0 ? leaf_ms : leaf_ms / rounds;
        for (size_t k = 0; k < nthreads; k++) {
            clove_pool *pool;
            clove_config cfg = {.threads = threads[k]};
            int rc = clove_pool_create(&pool, &cfg);
            if (rc) {
                fprintf(stderr, "clove_pool_create: %s\n", strerror(rc));
                return 1;
            }
            for (unsigned r = 0; r < reps; r++) {
                struct job j = {lms * 1e6, pairs, 0};
                double t0 = bench_now_ns();
                clove_pool_run(pool, pairs_fn, &j);
                ms[r] = (bench_now_ns() - t0) / 1e6;
                if (atomic_load(&j.done) != 2 * pairs) {
                    fprintf(stderr, "longleaf: %u leaves ran, expected %u\n",
                            atomic_load(&j.done), 2 * pairs);
                    return 1;
                }
            }
            clove_stats s;
            clove_pool_stats(pool, &s, NULL, 0);
            clove_pool_destroy(pool);
            double med = bench_median(ms, reps);
            double seq = 2.0 * lms * pairs;
            printf("%-7s %7u %9.2f %6u %11.2f %9.2f %9.2f %7.3fx %7llu %7llu\n", name, threads[k],
                   lms, pairs, med, ms[0], ms[reps - 1], med / seq, (unsigned long long)s.stolen,
                   (unsigned long long)s.shared);
            if (csv)
                fprintf(csv, "%s,%u,%.3f,%u,%.3f,%.3f,%.3f,%.4f,%llu,%llu\n", name, threads[k],
                        lms, pairs, med, ms[0], ms[reps - 1], med / seq,
                        (unsigned long long)s.stolen, (unsigned long long)s.shared);
        }
    }
    free(ms);
    if (csv)
        fclose(csv);
    return 0;
}
