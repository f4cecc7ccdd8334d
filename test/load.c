/* SPDX-License-Identifier: MIT */
/*
 * load.c - a server-style load on one pool: many external threads
 * ("callers") call clove_pool_run over and over, each with a mix of work
 * (tree sums, parallel loops, sorts, tiny calls), and every result is
 * checked. Reported: calls per second, the latency of a call (p50, p99,
 * max), the calls of the least and the most served caller, and RSS over
 * time.
 *
 * The test suite runs it briefly (server_load, server_churn in
 * test_load.c); the tool clove_load (load_main.c) runs it longer, on any
 * build, for the figures in docs/reliability.md:
 *
 *   clove_load --callers 16 --seconds 60 [--threads N] [--heartbeat-us US]
 */
#include "load.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------------ */
/* Latency histogram: 16 buckets per power of two of nanoseconds (error     */
/* under 1/16 of the value), merged across callers.                          */
/* ------------------------------------------------------------------------ */

static unsigned bucket_of(uint64_t ns)
{
    if (ns < 16)
        return (unsigned)ns;
    unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* >= 4 */
    unsigned sub = (unsigned)(ns >> (e - 4)) & 15u;
    unsigned b = (e - 3) * 16 + sub;
    return b < LOAD_BUCKETS ? b : LOAD_BUCKETS - 1;
}

static uint64_t bucket_value(unsigned b)
{
    if (b < 16)
        return b;
    unsigned e = b / 16 + 3, sub = b % 16;
    return ((uint64_t)(16 + sub) << (e - 4)) + ((uint64_t)1 << (e - 4)) / 2;
}

static uint64_t percentile(const uint64_t *hist, uint64_t total, double q)
{
    uint64_t want = (uint64_t)(q * (double)total), seen = 0;
    for (unsigned b = 0; b < LOAD_BUCKETS; b++) {
        seen += hist[b];
        if (seen > want)
            return bucket_value(b);
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The work of one call                                                     */
/* ------------------------------------------------------------------------ */

enum { W_TREE, W_FOR, W_SORT, W_TINY, W_KINDS };

struct caller {
    struct load *ld;
    unsigned id;
    pthread_t th;
    test_rng rng;
    struct tree tree;
    uint64_t *data;     /* index_value(seed, i), the loop's input */
    uint64_t *sortbuf;
    size_t nitems;
    uint64_t calls;
    uint64_t max_ns;
    uint64_t hist[LOAD_BUCKETS];
};

struct for_arg {
    const uint64_t *data;
    _Atomic uint64_t sum, hash;
};

static void for_body(clove_task *t, size_t lo, size_t hi, void *ctx)
{
    (void)t;
    struct for_arg *a = ctx;
    uint64_t s = 0, h = 0;
    for (size_t i = lo; i < hi; i++) {
        s += a->data[i];
        h += index_hash(a->data[i], i);
    }
    atomic_fetch_add_explicit(&a->sum, s, memory_order_relaxed);
    atomic_fetch_add_explicit(&a->hash, h, memory_order_relaxed);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

struct call {
    struct caller *c;
    int kind;
    size_t n;
    struct sums got;
    int rc;
};

static void call_fn(clove_task *t, void *arg)
{
    struct call *k = arg;
    struct caller *c = k->c;
    switch (k->kind) {
    case W_TREE:
        k->got = tree_sum(t, &c->tree, c->tree.root);
        break;
    case W_FOR: {
        struct for_arg a = {c->data, 0, 0};
        clove_for(t, 0, k->n, for_body, &a);
        k->got.sum = atomic_load(&a.sum);
        k->got.hash = atomic_load(&a.hash);
        break;
    }
    case W_SORT:
        k->rc = clove_sort(t, c->sortbuf, k->n, sizeof(uint64_t), cmp_u64);
        break;
    default:
        break;
    }
}

static void check_call(struct caller *c, struct call *k)
{
    switch (k->kind) {
    case W_TREE:
        tree_check(&c->tree, k->got);
        break;
    case W_FOR: {
        struct sums e = {0, 0};
        for (size_t i = 0; i < k->n; i++) {
            e.sum += c->data[i];
            e.hash += index_hash(c->data[i], i);
        }
        ASSERT_EQ_U(k->got.sum, e.sum);
        ASSERT_EQ_U(k->got.hash, e.hash);
        break;
    }
    case W_SORT: {
        ASSERT_OK(k->rc);
        /* Sorted, and the same values (the input was the loop's data,
         * distinct): sum and xor. */
        uint64_t s = 0, x = 0, es = 0, ex = 0;
        for (size_t i = 0; i < k->n; i++) {
            if (i > 0)
                ASSERT_LE_U(c->sortbuf[i - 1], c->sortbuf[i]);
            s += c->sortbuf[i];
            x ^= c->sortbuf[i];
            es += c->data[i];
            ex ^= c->data[i];
        }
        ASSERT_EQ_U(s, es);
        ASSERT_EQ_U(x, ex);
        break;
    }
    default:
        break;
    }
}

static void one_call(struct caller *c)
{
    struct load *ld = c->ld;
    struct call k = {c, (int)rng_below(&c->rng, W_KINDS), 0, {0, 0}, 0};
    if (k.kind == W_FOR || k.kind == W_SORT)
        k.n = 1 + (size_t)rng_below(&c->rng, c->nitems);
    if (k.kind == W_SORT)
        memcpy(c->sortbuf, c->data, k.n * sizeof *c->sortbuf);
    double t0 = now_s();
    ASSERT_OK(clove_pool_run(ld->pool, call_fn, &k));
    uint64_t ns = (uint64_t)((now_s() - t0) * 1e9);
    check_call(c, &k);
    c->hist[bucket_of(ns)]++;
    if (ns > c->max_ns)
        c->max_ns = ns;
    c->calls++;
}

static void *caller_main(void *arg)
{
    struct caller *c = arg;
    struct load *ld = c->ld;
    while (!atomic_load_explicit(&ld->stop, memory_order_relaxed) ||
           c->calls < ld->min_calls)
        one_call(c);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* A run                                                                    */
/* ------------------------------------------------------------------------ */

void load_run(struct load *ld)
{
    struct caller *c = calloc(ld->callers, sizeof *c);
    ASSERT(c != NULL);
    for (unsigned i = 0; i < ld->callers; i++) {
        c[i].ld = ld;
        c[i].id = i;
        c[i].rng.s = ld->seed ^ mix64(i + 1);
        tree_build(&c[i].tree, ld->tree_nodes / 2 + (size_t)rng_below(&c[i].rng, ld->tree_nodes),
                   (enum tree_shape)(i % SHAPE_COUNT), ld->seed + i);
        c[i].nitems = ld->items;
        c[i].data = malloc(ld->items * sizeof *c[i].data);
        c[i].sortbuf = malloc(ld->items * sizeof *c[i].sortbuf);
        ASSERT(c[i].data && c[i].sortbuf);
        for (size_t k = 0; k < ld->items; k++)
            c[i].data[k] = index_value(ld->seed + 7 * i, k);
    }
    atomic_store(&ld->stop, 0);
    ld->rss_first = test_rss_bytes();
    ld->rss_max_first_half = ld->rss_max_second_half = 0;
    double t0 = now_s();
    for (unsigned i = 0; i < ld->callers; i++)
        ASSERT_OK(pthread_create(&c[i].th, NULL, caller_main, &c[i]));
    /* Sample RSS ten times a second until the end. */
    for (;;) {
        double el = now_s() - t0;
        size_t rss = test_rss_bytes();
        if (el < ld->seconds / 2) {
            if (rss > ld->rss_max_first_half)
                ld->rss_max_first_half = rss;
        } else if (rss > ld->rss_max_second_half) {
            ld->rss_max_second_half = rss;
        }
        if (el >= ld->seconds)
            break;
        sleep_us(100000);
    }
    atomic_store(&ld->stop, 1);
    for (unsigned i = 0; i < ld->callers; i++)
        ASSERT_OK(pthread_join(c[i].th, NULL));
    ld->elapsed = now_s() - t0;
    ld->rss_end = test_rss_bytes();
    ld->rss_peak = ld->rss_end;
    if (ld->rss_max_first_half > ld->rss_peak)
        ld->rss_peak = ld->rss_max_first_half;
    if (ld->rss_max_second_half > ld->rss_peak)
        ld->rss_peak = ld->rss_max_second_half;

    uint64_t hist[LOAD_BUCKETS] = {0};
    ld->calls = 0;
    ld->max_ns = 0;
    ld->min_caller = UINT64_MAX;
    ld->max_caller = 0;
    for (unsigned i = 0; i < ld->callers; i++) {
        for (unsigned b = 0; b < LOAD_BUCKETS; b++)
            hist[b] += c[i].hist[b];
        ld->calls += c[i].calls;
        if (c[i].max_ns > ld->max_ns)
            ld->max_ns = c[i].max_ns;
        if (c[i].calls < ld->min_caller)
            ld->min_caller = c[i].calls;
        if (c[i].calls > ld->max_caller)
            ld->max_caller = c[i].calls;
        tree_free(&c[i].tree);
        free(c[i].data);
        free(c[i].sortbuf);
    }
    free(c);
    ld->p50_ns = percentile(hist, ld->calls, 0.50);
    ld->p99_ns = percentile(hist, ld->calls, 0.99);
}

void load_print(FILE *f, const struct load *ld, const char *what)
{
    fprintf(f,
            "%s: %u callers, %u threads, heartbeat %u us, %.1f s: %" PRIu64
            " calls (%.0f/s), latency p50 %.1f us, p99 %.1f us, max %.1f ms; "
            "calls per caller %" PRIu64 " .. %" PRIu64 "; RSS %.1f MB at start, "
            "max %.1f MB (first half) / %.1f MB (second half), %.1f MB at the end\n",
            what, ld->callers, clove_pool_threads(ld->pool), ld->heartbeat_us, ld->elapsed,
            ld->calls, (double)ld->calls / ld->elapsed, (double)ld->p50_ns / 1e3,
            (double)ld->p99_ns / 1e3, (double)ld->max_ns / 1e6, ld->min_caller,
            ld->max_caller, (double)ld->rss_first / 1048576.0,
            (double)ld->rss_max_first_half / 1048576.0,
            (double)ld->rss_max_second_half / 1048576.0, (double)ld->rss_end / 1048576.0);
}
