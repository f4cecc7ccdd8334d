/* SPDX-License-Identifier: MIT */
/*
 * reduce.c - clove_reduce_deterministic against clove_reduce: a sum of n
 * doubles of very different magnitudes, so that the order of the
 * additions shows in the result's bits.
 *
 *   plain  the sequential loop (the baseline of every ratio)
 *   reduce clove_reduce: splits where heartbeats fall
 *   det    clove_reduce_deterministic, grain 0 (at most 4096 blocks of at
 *          least 2048 elements)
 *   det-G  the same with grain G (--grain G, repeatable)
 *
 * One clove_pool_run per run on a pool per thread count (created once, not
 * timed). Samples are interleaved round by round; the table gives the
 * median ns per element, the ratio of medians to plain, the median of the
 * per-round ratio to reduce with the same thread count, and how many
 * distinct results (bit patterns) the samples of that row produced: det's
 * must be one, and the same on every thread count (checked: a second
 * pattern aborts).
 *
 * Usage: reduce [-n N] [-t THREADS]... [--grain G]... [--reps R] [--quick]
 */
#define _GNU_SOURCE
#include <clove.h>

#include "bench_util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double *data;

static void sum_init(void *acc, void *ctx)
{
    (void)ctx;
    *(double *)acc = 0;
}

static void sum_body(clove_task *t, size_t lo, size_t hi, void *acc, void *ctx)
{
    (void)t;
    (void)ctx;
    double s = *(double *)acc;
    for (size_t i = lo; i < hi; i++)
        s += data[i];
    *(double *)acc = s;
}

static void sum_combine(void *l, void *r, void *ctx)
{
    (void)ctx;
    *(double *)l += *(double *)r;
}

/* The plain loop, as the reductions' bodies run it (not inlined into the
 * timing loop, so that it is the same code). */
__attribute__((noinline)) static double plain_sum(size_t n)
{
    double s = 0;
    sum_body(NULL, 0, n, &s, NULL);
    return s;
}

struct run {
    size_t n, grain;
    bool det;
    double result;
};

static void run_fn(clove_task *t, void *arg)
{
    struct run *r = arg;
    r->result = 0;
    int rc = r->det ? clove_reduce_deterministic(t, 0, r->n, r->grain, &r->result,
                                                 sizeof r->result, sum_init, sum_body,
                                                 sum_combine, NULL)
                    : clove_reduce(t, 0, r->n, &r->result, sizeof r->result, sum_init,
                                   sum_body, sum_combine, NULL);
    if (rc != 0) {
        fprintf(stderr, "reduce: error %d\n", rc);
        exit(2);
    }
}

#define MAXCFG 64
#define MAXPAT 8

struct cfg {
    const char *name;
    unsigned threads;
    clove_pool *pool;
    bool det, plain;
    size_t grain;
    double *ns;
    uint64_t pat[MAXPAT];
    size_t npat;
    bool more;
};

int main(int argc, char **argv)
{
    size_t n = 10000000, reps = 21;
    unsigned threads[16];
    size_t nthreads = 0, grains[8], ngrains = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = (size_t)strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc && nthreads < 16)
            threads[nthreads++] = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--grain") && i + 1 < argc && ngrains < 8)
            grains[ngrains++] = (size_t)strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = (size_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--quick"))
            n = 100000, reps = 3;
        else {
            fputs("usage: reduce [-n N] [-t THREADS]... [--grain G]... [--reps R] [--quick]\n",
                  stderr);
            return 2;
        }
    }
    if (nthreads == 0) {
        threads[nthreads++] = 1;
        threads[nthreads++] = 2;
    }
    if (n == 0 || reps == 0)
        return 2;
    double *v = malloc(n * sizeof *v);
    if (v == NULL)
        return 2;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15u;
        z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9u;
        z ^= z >> 29;
        v[i] = ldexp((double)(z >> 11) / 9007199254740992.0, (int)(z % 41) - 20);
    }
    data = v;

    struct cfg cfg[MAXCFG];
    size_t ncfg = 0;
    cfg[ncfg++] = (struct cfg){.name = "plain", .threads = 1, .plain = true};
    for (size_t k = 0; k < nthreads; k++) {
        clove_config cc = {.threads = threads[k]};
        clove_pool *p;
        if (clove_pool_create(&p, &cc) != 0)
            return 2;
        cfg[ncfg++] = (struct cfg){.name = "reduce", .threads = threads[k], .pool = p};
        cfg[ncfg++] = (struct cfg){.name = "det", .threads = threads[k], .pool = p, .det = true};
        for (size_t g = 0; g < ngrains && ncfg < MAXCFG; g++) {
            char *name = malloc(32);
            snprintf(name, 32, "det-%zu", grains[g]);
            cfg[ncfg++] = (struct cfg){.name = name, .threads = threads[k], .pool = p,
                                       .det = true, .grain = grains[g]};
        }
    }
    for (size_t c = 0; c < ncfg; c++)
        cfg[c].ns = malloc(reps * sizeof(double));

    for (size_t r = 0; r < reps + 1; r++) { /* round 0 warms up */
        for (size_t c = 0; c < ncfg; c++) {
            struct run run = {n, cfg[c].grain, cfg[c].det, 0};
            double t0 = bench_now_ns();
            if (cfg[c].plain) {
                run.result = plain_sum(n);
            } else if (clove_pool_run(cfg[c].pool, run_fn, &run) != 0) {
                return 2;
            }
            double dt = bench_now_ns() - t0;
            if (r > 0)
                cfg[c].ns[r - 1] = dt / (double)n;
            uint64_t bits;
            memcpy(&bits, &run.result, sizeof bits);
            size_t p = 0;
            while (p < cfg[c].npat && cfg[c].pat[p] != bits)
                p++;
            if (p == cfg[c].npat) {
                if (p < MAXPAT)
                    cfg[c].pat[cfg[c].npat++] = bits;
                else
                    cfg[c].more = true;
            }
        }
    }
    printf("reduce: sum of n = %zu doubles, %zu samples per row; ns per element\n", n, reps);
    printf("  %-10s %7s %8s %8s %10s %10s\n", "impl", "threads", "median", "/plain", "/reduce",
           "results");
    double plain_med = 0;
    for (size_t c = 0; c < ncfg; c++) {
        /* The per-round ratio to reduce with the same thread count. */
        char rel[16] = "-";
        if (cfg[c].det) {
            size_t base = c;
            while (strcmp(cfg[base].name, "reduce") != 0)
                base--;
            double *q = malloc(reps * sizeof *q);
            for (size_t r = 0; r < reps; r++)
                q[r] = cfg[c].ns[r] / cfg[base].ns[r];
            snprintf(rel, sizeof rel, "%.3f", bench_median(q, reps));
            free(q);
        }
        double med = bench_median(cfg[c].ns, reps);
        if (cfg[c].plain)
            plain_med = med;
        printf("  %-10s %7u %8.3f %8.2f %10s %9zu%s\n", cfg[c].name, cfg[c].threads, med,
               med / plain_med, rel, cfg[c].npat, cfg[c].more ? "+" : "");
    }
    /* det with the default grain: one result, the same on every thread count. */
    uint64_t det_bits = 0;
    bool seen = false;
    for (size_t c = 0; c < ncfg; c++) {
        if (!cfg[c].det || cfg[c].grain != 0)
            continue;
        if (cfg[c].npat != 1 || (seen && cfg[c].pat[0] != det_bits)) {
            fprintf(stderr, "reduce: det gave %zu results on %u threads\n", cfg[c].npat,
                    cfg[c].threads);
            abort();
        }
        det_bits = cfg[c].pat[0];
        seen = true;
    }
    for (size_t c = 0; c < ncfg; c++)
        if (cfg[c].pool && (c == 0 || cfg[c - 1].pool != cfg[c].pool))
            clove_pool_destroy(cfg[c].pool);
    return 0;
}
