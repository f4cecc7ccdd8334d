/* SPDX-License-Identifier: MIT */
/*
 * cancel.c - how soon clove_for_cancel stops after the match of a search.
 *
 * A search over n items (default 10^8) for the one whose hash equals a
 * target, placed at 10 % of the range (--at). The body hashes each index
 * (a few ns); the one that matches reads the clock and requests the token.
 * Measured per run: the time from that clock read to the return of
 * clove_for_cancel (the stop delay), and the iterations run in all, of
 * which those after the match are "extra" (run minus the match's index
 * plus one, on one thread exactly the work after the match). Bodies that
 * poll the token at every iteration (poll) and bodies that leave the
 * checking to the loop, between chunks (nopoll). Without cancellation the
 * loop would run the remaining 90 %.
 *
 * One clove_pool_run per run on a pool per thread count (created once, not
 * timed); medians and maxima over the runs, and the heartbeat interval
 * they are compared with. Every run checks that the match ran once and the
 * loop returned ECANCELED; a failure aborts.
 *
 * Usage: cancel [-n N] [--at FRACTION] [-t THREADS]... [--reps R]
 *               [--heartbeat US] [--quick]
 */
#define _GNU_SOURCE
#include <clove.h>

#include "bench_util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct search {
    clove_cancel c;
    uint64_t target;
    bool poll;
    _Atomic uint64_t ran;
    _Atomic uint64_t found;
    double t_match; /* ns, written by the matching body */
};

static void body(clove_task *t, size_t lo, size_t hi, void *ctx)
{
    (void)t;
    struct search *s = ctx;
    uint64_t n = 0;
    for (size_t i = lo; i < hi; i++) {
        if (s->poll && clove_cancelled(&s->c))
            break;
        n++;
        if (mix(i) == s->target) {
            s->t_match = bench_now_ns();
            atomic_fetch_add(&s->found, 1);
            clove_cancel_request(&s->c);
        }
    }
    atomic_fetch_add_explicit(&s->ran, n, memory_order_relaxed);
}

struct run {
    struct search *s;
    size_t n;
    int rc;
    double t_end;
};

static void run_fn(clove_task *t, void *arg)
{
    struct run *r = arg;
    r->rc = clove_for_cancel(t, 0, r->n, body, r->s, &r->s->c);
    r->t_end = bench_now_ns();
}

int main(int argc, char **argv)
{
    size_t n = 100000000, reps = 21;
    double at = 0.1;
    unsigned threads[16], heartbeat = 0;
    size_t nthreads = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = (size_t)strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--at") && i + 1 < argc)
            at = strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc && nthreads < 16)
            threads[nthreads++] = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = (size_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--heartbeat") && i + 1 < argc)
            heartbeat = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--quick"))
            n = 1000000, reps = 3;
        else {
            fputs("usage: cancel [-n N] [--at FRACTION] [-t THREADS]... [--reps R] "
                  "[--heartbeat US] [--quick]\n",
                  stderr);
            return 2;
        }
    }
    if (nthreads == 0) {
        threads[nthreads++] = 1;
        threads[nthreads++] = 2;
    }
    if (n < 10 || reps == 0 || !(at >= 0 && at < 1))
        return 2;
    size_t match = (size_t)((double)n * at);
    uint64_t target = mix(match);
    double *delay = malloc(reps * sizeof *delay), *extra = malloc(reps * sizeof *extra);
    double *total = malloc(reps * sizeof *total);
    if (!delay || !extra || !total)
        return 2;
    printf("cancel: search of n = %zu items, the match at %zu (%.0f %%); %zu runs each\n", n,
           match, at * 100, reps);
    printf("  %-7s %7s %12s %12s %14s %14s %12s\n", "body", "threads", "delay us",
           "max us", "extra items", "max extra", "run ms");
    for (size_t k = 0; k < nthreads; k++) {
        clove_config cc = {.threads = threads[k], .heartbeat_us = heartbeat};
        clove_pool *p;
        if (clove_pool_create(&p, &cc) != 0)
            return 2;
        for (int poll = 0; poll < 2; poll++) {
            for (size_t r = 0; r < reps + 1; r++) { /* run 0 warms up */
                struct search s;
                clove_cancel_init(&s.c);
                s.target = target;
                s.poll = poll != 0;
                atomic_init(&s.ran, 0);
                atomic_init(&s.found, 0);
                s.t_match = 0;
                struct run run = {&s, n, -1, 0};
                double t0 = bench_now_ns();
                if (clove_pool_run(p, run_fn, &run) != 0)
                    return 2;
                if (run.rc != ECANCELED || atomic_load(&s.found) != 1) {
                    fprintf(stderr, "cancel: rc %d, match ran %llu times\n", run.rc,
                            (unsigned long long)atomic_load(&s.found));
                    abort();
                }
                if (r == 0)
                    continue;
                delay[r - 1] = (run.t_end - s.t_match) / 1e3;
                extra[r - 1] = (double)atomic_load(&s.ran) - (double)(match + 1);
                total[r - 1] = (run.t_end - t0) / 1e6;
            }
            double dmed = bench_median(delay, reps), dmax = delay[reps - 1];
            double emed = bench_median(extra, reps), emax = extra[reps - 1];
            double tmed = bench_median(total, reps);
            printf("  %-7s %7u %12.1f %12.1f %14.0f %14.0f %12.2f\n", poll ? "poll" : "nopoll",
                   threads[k], dmed, dmax, emed, emax, tmed);
        }
        clove_pool_destroy(p);
    }
    printf("  (heartbeat interval: %u us; delay: from the match to clove_for_cancel's return)\n",
           heartbeat ? heartbeat : CLOVE_DEFAULT_HEARTBEAT_US);
    return 0;
}
