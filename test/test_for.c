/* SPDX-License-Identifier: MIT */
/*
 * test_for.c - clove_for covers [begin, end) exactly once: empty ranges,
 * tiny and large ones, ranges ending at SIZE_MAX, three-deep nesting,
 * loops inside forked jobs and an irregular-cost body.
 */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>

static const unsigned for_threads[] = {1, 2, 8, 32};
#define NFOR_THREADS (sizeof for_threads / sizeof for_threads[0])

enum cost { COST_NONE, COST_IRREGULAR };

struct for_ctx {
    size_t begin, end; /* the loop's bounds */
    size_t base;       /* hits[i - base] */
    uint64_t seed;
    enum cost cost;
    _Atomic uint8_t *hits;
    _Atomic uint64_t sum, hash, calls, sink;
    _Atomic uint32_t bad; /* a call with an empty or out-of-bounds range */
    size_t bad_lo, bad_hi;
};

static uint64_t burn(size_t i)
{
    /* Most indices are cheap, a few are 1000x dearer, in clumps. */
    unsigned n = (i % 997 == 0) ? 20000u : (i / 4096 % 7 == 0 ? 200u : (unsigned)(i % 5));
    uint64_t x = i;
    for (unsigned k = 0; k < n; k++)
        x = mix64(x + k);
    return x;
}

static void for_body(clove_task *t, size_t lo, size_t hi, void *arg)
{
    (void)t;
    struct for_ctx *c = arg;
    if (!(lo < hi && lo >= c->begin && hi <= c->end)) {
        if (atomic_fetch_add(&c->bad, 1) == 0) {
            c->bad_lo = lo;
            c->bad_hi = hi;
        }
        return;
    }
    uint64_t s = 0, h = 0, sink = 0;
    for (size_t i = lo; i < hi; i++) {
        atomic_fetch_add_explicit(&c->hits[i - c->base], 1, memory_order_relaxed);
        uint64_t v = index_value(c->seed, i);
        s += v;
        h += index_hash(v, i);
        if (c->cost == COST_IRREGULAR)
            sink += burn(i);
    }
    atomic_fetch_add_explicit(&c->sum, s, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->hash, h, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->sink, sink, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
}

static void for_run_fn(clove_task *t, void *arg)
{
    struct for_ctx *c = arg;
    clove_for(t, c->begin, c->end, for_body, c);
    ASSERT_EQ_P(t->top, t->base);
}

/* Checks that every index of [begin, begin + n) was covered exactly once
 * (hits[i - c->base]) and that the sums over the indices' distinct values
 * match; leaves the counters zero again. */
static void check_covered(struct for_ctx *c, size_t begin, size_t n)
{
    struct sums e = {0, 0};
    for (size_t k = 0; k < n; k++) {
        size_t i = begin + k;
        uint8_t h = atomic_load_explicit(&c->hits[i - c->base], memory_order_relaxed);
        ASSERT_MSG(h == 1, "clove_for [%zu, %zu): index %zu covered %u times", c->begin,
                   c->end, i, h);
        atomic_store_explicit(&c->hits[i - c->base], 0, memory_order_relaxed);
        uint64_t v = index_value(c->seed, i);
        e.sum += v;
        e.hash += index_hash(v, i);
    }
    ASSERT_EQ_U(atomic_load(&c->sum), e.sum);
    ASSERT_EQ_U(atomic_load(&c->hash), e.hash);
}

/* Runs clove_for over [begin, end) on pool and checks every index once.
 * hits must have room for end - begin counters (all zero); they are left
 * zero again. Returns the number of body calls. */
static uint64_t for_checked(clove_pool *p, size_t begin, size_t end, uint64_t seed,
                            enum cost cost, _Atomic uint8_t *hits)
{
    struct for_ctx c = {begin, end, begin, seed, cost, hits, 0, 0, 0, 0, 0, 0, 0};
    ASSERT_OK(clove_pool_run(p, for_run_fn, &c));
    ASSERT_MSG(atomic_load(&c.bad) == 0,
               "clove_for [%zu, %zu): %u body calls with a bad range, first [%zu, %zu)",
               begin, end, atomic_load(&c.bad), c.bad_lo, c.bad_hi);
    if (begin >= end) {
        ASSERT_EQ_U(atomic_load(&c.calls), 0);
        return 0;
    }
    size_t n = end - begin;
    check_covered(&c, begin, n);
    ASSERT_LE_U(atomic_load(&c.calls), n);
    ASSERT_GE_U(atomic_load(&c.calls), 1);
    return atomic_load(&c.calls);
}

static _Atomic uint8_t *alloc_hits(size_t n)
{
    _Atomic uint8_t *h = calloc(n ? n : 1, sizeof *h);
    ASSERT(h != NULL);
    return h;
}

void test_for_edge_ranges(void)
{
    _Atomic uint8_t *hits = alloc_hits(64);
    for (size_t k = 0; k < NFOR_THREADS; k++) {
        clove_pool *p = make_pool(for_threads[k], 1);
        /* Empty: begin == end, begin > end. */
        for_checked(p, 0, 0, 1, COST_NONE, hits);
        for_checked(p, 12345, 12345, 2, COST_NONE, hits);
        for_checked(p, SIZE_MAX, SIZE_MAX, 3, COST_NONE, hits);
        for_checked(p, 10, 3, 4, COST_NONE, hits);
        for_checked(p, SIZE_MAX, 0, 5, COST_NONE, hits);
        for_checked(p, 1, 0, 6, COST_NONE, hits);
        /* Size 1 gets exactly one call. */
        ASSERT_EQ_U(for_checked(p, 0, 1, 7, COST_NONE, hits), 1);
        ASSERT_EQ_U(for_checked(p, 777, 778, 8, COST_NONE, hits), 1);
        ASSERT_EQ_U(for_checked(p, SIZE_MAX - 1, SIZE_MAX, 9, COST_NONE, hits), 1);
        /* Small sizes, many times. */
        for (size_t n = 2; n <= 64; n++)
            for (int r = 0; r < 20; r++)
                for_checked(p, 1000 * n, 1000 * n + n, n * 100 + (size_t)r, COST_NONE, hits);
        clove_pool_destroy(p);
    }
    free((void *)hits);
}

void test_for_large(void)
{
    /* 10^7 indices with the default heartbeat (chunks grow large)... */
    size_t big = scaled(10000000, 100000);
    _Atomic uint8_t *hits = alloc_hits(big);
    {
        clove_pool *p = make_pool(2, 0);
        for_checked(p, 0, big, 0xb16, COST_NONE, hits);
        clove_pool_destroy(p);
    }
    /* ...and 10^6 with a 1 us heartbeat, which splits all the time. */
    size_t n = scaled(1000000, 20000);
    for (size_t k = 0; k < NFOR_THREADS; k++) {
        clove_pool *p = make_pool(for_threads[k], 1);
        uint64_t calls = for_checked(p, 5, 5 + n, 0x1a + k, COST_NONE, hits);
        if (for_threads[k] == 1)
            ASSERT_EQ_U(calls, 1); /* nobody to split for */
        test_log("for_large threads=%u: %" PRIu64 " body calls for %zu indices\n",
                 for_threads[k], calls, n);
        clove_pool_destroy(p);
    }
    free((void *)hits);
}

void test_for_near_size_max(void)
{
    size_t wide = scaled((size_t)1 << 20, 4096);
    _Atomic uint8_t *hits = alloc_hits(wide);
    for (size_t k = 0; k < NFOR_THREADS; k++) {
        clove_pool *p = make_pool(for_threads[k], 1);
        for (int r = 0; r < 5; r++) {
            for_checked(p, SIZE_MAX - 1000, SIZE_MAX, 0x51 + (uint64_t)r, COST_NONE, hits);
            for_checked(p, SIZE_MAX - 2, SIZE_MAX, 0x52, COST_NONE, hits);
            for_checked(p, SIZE_MAX - 1001, SIZE_MAX - 1, 0x53, COST_NONE, hits);
        }
        for_checked(p, SIZE_MAX - wide, SIZE_MAX, 0x54, COST_NONE, hits);
        for_checked(p, SIZE_MAX / 2 - wide / 2, SIZE_MAX / 2 + wide / 2, 0x55, COST_NONE,
                    hits);
        clove_pool_destroy(p);
    }
    free((void *)hits);
}

/* ------------------------------------------------------------------------ */
/* Three-deep nesting                                                       */
/* ------------------------------------------------------------------------ */

struct nest3 {
    size_t ni, nj, nk;
    uint64_t seed;
    _Atomic uint8_t *hits; /* [ni][nj][nk] */
    _Atomic uint64_t sum, hash;
    _Atomic uint32_t bad;
};

struct nest_level {
    struct nest3 *n;
    size_t i, j;
};

static void body_k(clove_task *t, size_t lo, size_t hi, void *arg)
{
    (void)t;
    struct nest_level *l = arg;
    struct nest3 *n = l->n;
    if (!(lo < hi && hi <= n->nk)) {
        atomic_fetch_add(&n->bad, 1);
        return;
    }
    uint64_t s = 0, h = 0;
    for (size_t k = lo; k < hi; k++) {
        size_t idx = (l->i * n->nj + l->j) * n->nk + k;
        atomic_fetch_add_explicit(&n->hits[idx], 1, memory_order_relaxed);
        uint64_t v = index_value(n->seed, idx);
        s += v;
        h += index_hash(v, idx);
    }
    atomic_fetch_add_explicit(&n->sum, s, memory_order_relaxed);
    atomic_fetch_add_explicit(&n->hash, h, memory_order_relaxed);
}

static void body_j(clove_task *t, size_t lo, size_t hi, void *arg)
{
    const struct nest_level *up = arg;
    struct nest3 *n = up->n;
    if (!(lo < hi && hi <= n->nj)) {
        atomic_fetch_add(&n->bad, 1);
        return;
    }
    for (size_t j = lo; j < hi; j++) {
        struct nest_level l = {n, up->i, j};
        clove_for(t, 0, n->nk, body_k, &l);
    }
}

static void body_i(clove_task *t, size_t lo, size_t hi, void *arg)
{
    struct nest3 *n = arg;
    if (!(lo < hi && hi <= n->ni)) {
        atomic_fetch_add(&n->bad, 1);
        return;
    }
    for (size_t i = lo; i < hi; i++) {
        struct nest_level l = {n, i, 0};
        clove_for(t, 0, n->nj, body_j, &l);
    }
}

static void nest3_fn(clove_task *t, void *arg)
{
    struct nest3 *n = arg;
    clove_for(t, 0, n->ni, body_i, n);
}

void test_for_nested_three_deep(void)
{
    size_t side = scaled(48, 12);
    struct nest3 n = {side, side + 3, side + 7, 0, NULL, 0, 0, 0};
    size_t total = n.ni * n.nj * n.nk;
    n.hits = alloc_hits(total);
    for (size_t k = 0; k < NFOR_THREADS; k++) {
        clove_pool *p = make_pool(for_threads[k], 1);
        for (size_t r = 0; r < scaled(6, 2); r++) {
            n.seed = 0x3d + k * 100 + (uint64_t)r;
            atomic_store(&n.sum, 0);
            atomic_store(&n.hash, 0);
            ASSERT_OK(clove_pool_run(p, nest3_fn, &n));
            ASSERT_EQ_U(atomic_load(&n.bad), 0);
            struct sums e = {0, 0};
            for (size_t idx = 0; idx < total; idx++) {
                uint8_t h = atomic_load(&n.hits[idx]);
                ASSERT_MSG(h == 1, "(i,j,k) = (%zu,%zu,%zu) covered %u times",
                           idx / (n.nj * n.nk), idx / n.nk % n.nj, idx % n.nk, h);
                atomic_store(&n.hits[idx], 0);
                uint64_t v = index_value(n.seed, idx);
                e.sum += v;
                e.hash += index_hash(v, idx);
            }
            ASSERT_EQ_U(atomic_load(&n.sum), e.sum);
            ASSERT_EQ_U(atomic_load(&n.hash), e.hash);
        }
        clove_pool_destroy(p);
    }
    free((void *)n.hits);
}

/* ------------------------------------------------------------------------ */
/* clove_for inside forked jobs                                             */
/* ------------------------------------------------------------------------ */

struct seg_ctx {
    size_t nseg, seglen;
    struct for_ctx *loop; /* shared counters, bounds [0, nseg * seglen) */
};

struct seg_arg {
    const struct seg_ctx *c;
    size_t lo, hi; /* segments */
};

static void seg_fn(clove_task *t, void *arg)
{
    struct seg_arg *a = arg;
    if (a->hi - a->lo == 1) {
        const struct seg_ctx *c = a->c;
        clove_for(t, a->lo * c->seglen, (a->lo + 1) * c->seglen, for_body, c->loop);
        return;
    }
    size_t mid = a->lo + (a->hi - a->lo) / 2;
    struct seg_arg l = {a->c, a->lo, mid}, r = {a->c, mid, a->hi};
    clove_future f;
    clove_fork(t, &f, seg_fn, &r);
    /* A loop between the fork and the join, on the same task. */
    seg_fn(t, &l);
    if (!clove_join(t, &f))
        seg_fn(t, &r);
}

void test_for_in_forked_jobs(void)
{
    size_t nseg = 61, seglen = scaled(5000, 200);
    size_t total = nseg * seglen;
    _Atomic uint8_t *hits = alloc_hits(total);
    for (size_t k = 0; k < NFOR_THREADS; k++) {
        clove_pool *p = make_pool(for_threads[k], 1);
        for (size_t r = 0; r < scaled(10, 2); r++) {
            struct for_ctx loop = {0, total, 0, 0x5e9 + k * 100 + (uint64_t)r, COST_NONE,
                                   hits, 0, 0, 0, 0, 0, 0, 0};
            struct seg_ctx c = {nseg, seglen, &loop};
            struct seg_arg a = {&c, 0, nseg};
            ASSERT_OK(clove_pool_run(p, seg_fn, &a));
            ASSERT_EQ_U(atomic_load(&loop.bad), 0);
            check_covered(&loop, 0, total);
        }
        clove_pool_destroy(p);
    }
    free((void *)hits);
}

void test_for_irregular_cost(void)
{
    size_t n = scaled(200000, 5000);
    _Atomic uint8_t *hits = alloc_hits(n);
    uint64_t expect_sink = 0;
    for (size_t i = 0; i < n; i++)
        expect_sink += burn(i);
    for (size_t k = 0; k < NFOR_THREADS; k++) {
        static const unsigned hbs[] = {1, 0};
        for (size_t h = 0; h < 2; h++) {
            clove_pool *p = make_pool(for_threads[k], hbs[h]);
            struct for_ctx c = {0, n, 0, 0x1c + k, COST_IRREGULAR, hits,
                                0, 0, 0, 0, 0, 0, 0};
            ASSERT_OK(clove_pool_run(p, for_run_fn, &c));
            ASSERT_EQ_U(atomic_load(&c.bad), 0);
            check_covered(&c, 0, n);
            ASSERT_EQ_U(atomic_load(&c.sink), expect_sink);
            clove_pool_destroy(p);
        }
    }
    free((void *)hits);
}

/* ------------------------------------------------------------------------ */
/* Whole size_t ranges, tiled exactly                                       */
/* ------------------------------------------------------------------------ */

/* The body is O(1), so chunks grow to cover 2^64 indices in a few hundred
 * calls; the recorded ranges, sorted, must tile [begin, end) exactly. A
 * chunk preempted on an oversubscribed machine shrinks, so the number of
 * calls has no small bound: each call is kept in a node of its own, and
 * only a runaway (chunks that never grow) fails on the count. */
#define TILE_MAX_CALLS ((size_t)1 << 24)

struct tile_range {
    size_t lo, hi;
    struct tile_range *next;
};

struct tile_ctx {
    size_t begin, end;
    _Atomic size_t n;
    _Atomic(struct tile_range *) head;
};

static void tile_body(clove_task *t, size_t lo, size_t hi, void *arg)
{
    (void)t;
    struct tile_ctx *c = arg;
    size_t i = atomic_fetch_add(&c->n, 1);
    ASSERT_MSG(i < TILE_MAX_CALLS, "clove_for [%zu, %zu): more than %zu body calls", c->begin,
               c->end, TILE_MAX_CALLS);
    struct tile_range *r = malloc(sizeof *r);
    ASSERT(r);
    r->lo = lo;
    r->hi = hi;
    r->next = atomic_load(&c->head);
    while (!atomic_compare_exchange_weak(&c->head, &r->next, r))
        ;
}

static void tile_fn(clove_task *t, void *arg)
{
    struct tile_ctx *c = arg;
    clove_for(t, c->begin, c->end, tile_body, c);
}

static int tile_cmp(const void *a, const void *b)
{
    const struct tile_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void test_for_full_size_range(void)
{
    static const struct {
        size_t begin, end;
    } ranges[] = {
        {0, SIZE_MAX},
        {1, SIZE_MAX},
        {SIZE_MAX / 3, SIZE_MAX - 5},
        {SIZE_MAX / 2 - 7, SIZE_MAX / 2 + ((size_t)1 << 62)},
    };
    struct tile_ctx c;
    for (size_t k = 0; k < 3; k++) {
        /* The default heartbeat: chunks of a trivial body double quickly. */
        clove_pool *p = make_pool(for_threads[k], 0);
        for (size_t g = 0; g < sizeof ranges / sizeof ranges[0]; g++) {
            c.begin = ranges[g].begin;
            c.end = ranges[g].end;
            atomic_store(&c.n, 0);
            atomic_store(&c.head, NULL);
            ASSERT_OK(clove_pool_run(p, tile_fn, &c));
            size_t n = atomic_load(&c.n);
            ASSERT_GE_U(n, 1);
            struct tile_range *r = malloc(n * sizeof *r);
            ASSERT(r);
            size_t m = 0;
            for (struct tile_range *q = atomic_load(&c.head), *next; q != NULL; q = next) {
                next = q->next;
                ASSERT(m < n);
                r[m++] = *q;
                free(q);
            }
            ASSERT_EQ_U(m, n);
            qsort(r, n, sizeof *r, tile_cmp);
            size_t at = c.begin;
            for (size_t i = 0; i < n; i++) {
                ASSERT_MSG(r[i].lo == at && r[i].lo < r[i].hi,
                           "clove_for [%zu, %zu): call %zu of %zu got [%zu, %zu), expected "
                           "it to start at %zu", c.begin, c.end, i, n, r[i].lo, r[i].hi,
                           at);
                at = r[i].hi;
            }
            ASSERT_EQ_U(at, c.end);
            free(r);
            test_log("full range [%zu, %zu) threads=%u: %zu body calls\n", c.begin, c.end,
                     for_threads[k], n);
        }
        clove_pool_destroy(p);
    }
}

/* ------------------------------------------------------------------------ */
/* Forks inside a clove_for body                                            */
/* ------------------------------------------------------------------------ */

#define NBODY_TREES 40

struct tree_loop {
    struct tree *trees;
    _Atomic uint32_t bad;
};

static void tree_loop_body(clove_task *t, size_t lo, size_t hi, void *arg)
{
    struct tree_loop *c = arg;
    if (!(lo < hi && hi <= NBODY_TREES)) {
        atomic_fetch_add(&c->bad, 1);
        return;
    }
    for (size_t i = lo; i < hi; i++) {
        const struct tree *tr = &c->trees[i];
        tree_check(tr, tree_sum(t, tr, tr->root));
    }
}

static void tree_loop_fn(clove_task *t, void *arg)
{
    clove_for(t, 0, NBODY_TREES, tree_loop_body, arg);
    ASSERT_EQ_P(t->top, t->base);
}

void test_for_body_forks(void)
{
    struct tree trees[NBODY_TREES];
    for (size_t i = 0; i < NBODY_TREES; i++)
        tree_build(&trees[i], 1 + (size_t)mix64(i + 99) % scaled(20000, 1000),
                   (enum tree_shape)(i % SHAPE_COUNT), 0xb0d + i);
    for (size_t k = 0; k < NFOR_THREADS; k++) {
        clove_pool *p = make_pool(for_threads[k], 1);
        for (size_t r = 0; r < scaled(5, 2); r++) {
            struct tree_loop c = {trees, 0};
            ASSERT_OK(clove_pool_run(p, tree_loop_fn, &c));
            ASSERT_EQ_U(atomic_load(&c.bad), 0);
        }
        clove_pool_destroy(p);
    }
    for (size_t i = 0; i < NBODY_TREES; i++)
        tree_free(&trees[i]);
}
