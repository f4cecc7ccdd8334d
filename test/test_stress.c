/* SPDX-License-Identifier: MIT */
/*
 * test_stress.c - a random mix of tree sums, join2 recursion, clove_for
 * (flat, nested, near SIZE_MAX) and flat fork arrays, on a 32-thread pool
 * with a 1 us heartbeat, from three external threads at once, for a
 * bounded time. Every result is checked.
 */
#include "test.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NSTRESS 3
#define NTREES 6
#define MAXN 40000

struct stress_thread {
    clove_pool *pool;
    unsigned id;
    double end;
    struct tree trees[NTREES];
    _Atomic uint8_t *hits; /* [MAXN] */
    uint64_t ops[5];
};

/* ---- join2 over a range ---- */
struct sj2 {
    _Atomic uint8_t *hits;
    uint64_t seed;
    size_t lo, hi;
    struct sums s;
};

static void sj2_fn(clove_task *t, void *arg)
{
    struct sj2 *a = arg;
    a->s.sum = a->s.hash = 0;
    if (a->hi - a->lo <= 2) {
        for (size_t i = a->lo; i < a->hi; i++) {
            atomic_fetch_add_explicit(&a->hits[i], 1, memory_order_relaxed);
            uint64_t v = index_value(a->seed, i);
            a->s.sum += v;
            a->s.hash += index_hash(v, i);
        }
        return;
    }
    size_t mid = a->lo + (size_t)(mix64(a->seed ^ a->lo ^ (a->hi << 20)) % (a->hi - a->lo - 1)) + 1;
    struct sj2 l = {a->hits, a->seed, a->lo, mid, {0, 0}}, r = {a->hits, a->seed, mid, a->hi, {0, 0}};
    clove_join2(t, sj2_fn, &l, sj2_fn, &r);
    a->s = l.s;
    sums_add(&a->s, r.s);
}

/* ---- clove_for ---- */
struct sfor {
    _Atomic uint8_t *hits;
    uint64_t seed;
    size_t begin, end;
    size_t inner; /* 0: flat; else each index runs an inner loop of this size */
    _Atomic uint64_t sum, hash;
    _Atomic uint32_t bad;
};

struct sfor_inner {
    struct sfor *c;
    size_t outer;
};

/* Counts a visit of elements klo..khi-1 and adds their values and hashes. */
static void sfor_visit(struct sfor *c, size_t klo, size_t khi)
{
    uint64_t s = 0, h = 0;
    for (size_t k = klo; k < khi; k++) {
        atomic_fetch_add_explicit(&c->hits[k], 1, memory_order_relaxed);
        uint64_t v = index_value(c->seed, k);
        s += v;
        h += index_hash(v, k);
    }
    atomic_fetch_add_explicit(&c->sum, s, memory_order_relaxed);
    atomic_fetch_add_explicit(&c->hash, h, memory_order_relaxed);
}

static void sfor_inner_body(clove_task *t, size_t lo, size_t hi, void *arg)
{
    (void)t;
    struct sfor_inner *in = arg;
    struct sfor *c = in->c;
    if (!(lo < hi && hi <= c->inner)) {
        atomic_fetch_add(&c->bad, 1);
        return;
    }
    size_t base = (in->outer - c->begin) * c->inner;
    sfor_visit(c, base + lo, base + hi);
}

static void sfor_body(clove_task *t, size_t lo, size_t hi, void *arg)
{
    struct sfor *c = arg;
    if (!(lo < hi && lo >= c->begin && hi <= c->end)) {
        atomic_fetch_add(&c->bad, 1);
        return;
    }
    if (c->inner) {
        for (size_t i = lo; i < hi; i++) {
            struct sfor_inner in = {c, i};
            clove_for(t, 0, c->inner, sfor_inner_body, &in);
        }
        return;
    }
    sfor_visit(c, lo - c->begin, hi - c->begin);
}

/* ---- flat fork arrays ---- */
struct sflat_job {
    _Atomic uint8_t *hit;
    uint64_t *out;
    uint64_t v;
};

static void sflat_fn(clove_task *t, void *arg)
{
    (void)t;
    struct sflat_job *j = arg;
    atomic_fetch_add_explicit(j->hit, 1, memory_order_relaxed);
    *j->out = j->v;
}

/* Check hits[0..n) == 1 and the sums against index_value(seed, k). */
static void check_range(const char *what, _Atomic uint8_t *hits, size_t n, uint64_t seed,
                        struct sums got)
{
    struct sums e = {0, 0};
    for (size_t k = 0; k < n; k++) {
        uint8_t h = atomic_load_explicit(&hits[k], memory_order_relaxed);
        ASSERT_MSG(h == 1, "stress %s: element %zu of %zu done %u times", what, k, n, h);
        atomic_store_explicit(&hits[k], 0, memory_order_relaxed);
        uint64_t v = index_value(seed, k);
        e.sum += v;
        e.hash += index_hash(v, k);
    }
    ASSERT_EQ_U(got.sum, e.sum);
    ASSERT_EQ_U(got.hash, e.hash);
}

struct stress_run {
    struct stress_thread *st;
    test_rng rng;
};

static void stress_fn(clove_task *t, void *arg)
{
    struct stress_run *r = arg;
    struct stress_thread *st = r->st;
    for (int step = 0; step < 8; step++) {
        unsigned op = (unsigned)rng_below(&r->rng, 5);
        uint64_t seed = rng_next(&r->rng);
        st->ops[op]++;
        switch (op) {
        case 0: {
            const struct tree *tr = &st->trees[rng_below(&r->rng, NTREES)];
            tree_check(tr, tree_sum(t, tr, tr->root));
            break;
        }
        case 1: {
            size_t n = 1 + (size_t)rng_below(&r->rng, MAXN);
            struct sj2 a = {st->hits, seed, 0, n, {0, 0}};
            sj2_fn(t, &a);
            check_range("join2", st->hits, n, seed, a.s);
            break;
        }
        case 2:
        case 3: {
            size_t n = (size_t)rng_below(&r->rng, MAXN + 1);
            size_t inner = 0;
            if (op == 3) {
                inner = 1 + (size_t)rng_below(&r->rng, 200);
                n = n / inner;
            }
            size_t begin;
            switch (rng_below(&r->rng, 3)) {
            case 0: begin = 0; break;
            case 1: begin = SIZE_MAX - n; break;
            default: begin = (size_t)rng_below(&r->rng, (uint64_t)1 << 40); break;
            }
            struct sfor c = {st->hits, seed, begin, begin + n, inner, 0, 0, 0};
            clove_for(t, c.begin, c.end, sfor_body, &c);
            ASSERT_EQ_U(atomic_load(&c.bad), 0);
            struct sums got = {atomic_load(&c.sum), atomic_load(&c.hash)};
            check_range(op == 2 ? "for" : "nested for", st->hits, n * (inner ? inner : 1),
                        seed, got);
            break;
        }
        default: {
            size_t n = 1 + (size_t)rng_below(&r->rng, 2000);
            clove_future *fs = malloc(n * sizeof *fs);
            struct sflat_job *js = malloc(n * sizeof *js);
            uint64_t *out = calloc(n, sizeof *out);
            ASSERT(fs && js && out);
            for (size_t i = 0; i < n; i++) {
                js[i] = (struct sflat_job){&st->hits[i], &out[i], index_value(seed, i)};
                clove_fork(t, &fs[i], sflat_fn, &js[i]);
            }
            for (size_t i = n; i-- > 0;)
                if (!clove_join(t, &fs[i]))
                    sflat_fn(t, &js[i]);
            struct sums got = {0, 0};
            for (size_t i = 0; i < n; i++) {
                got.sum += out[i];
                got.hash += index_hash(out[i], i);
            }
            check_range("fork array", st->hits, n, seed, got);
            free(fs);
            free(js);
            free(out);
            break;
        }
        }
        ASSERT_EQ_P(t->top, t->base);
    }
}

static void *stress_main(void *arg)
{
    struct stress_thread *st = arg;
    struct stress_run r = {st, {0x57e55 + st->id}};
    size_t runs = 0;
    while (now_s() < st->end || runs < 3) {
        ASSERT_OK(clove_pool_run(st->pool, stress_fn, &r));
        runs++;
    }
    return NULL;
}

void test_stress_mix(void)
{
    clove_pool *p = make_pool(32, 1);
    double end = now_s() + scaled_seconds(5.0, 1.0);
    static struct stress_thread st[NSTRESS];
    pthread_t th[NSTRESS];
    for (unsigned i = 0; i < NSTRESS; i++) {
        st[i].pool = p;
        st[i].id = i;
        st[i].end = end;
        for (unsigned k = 0; k < NTREES; k++)
            tree_build(&st[i].trees[k], 1 + (size_t)mix64(i * 100 + k) % 20000,
                       (enum tree_shape)(k % SHAPE_COUNT), 0x7000 + i * 100 + k);
        st[i].hits = calloc(MAXN + 1, sizeof *st[i].hits);
        ASSERT(st[i].hits);
    }
    for (unsigned i = 1; i < NSTRESS; i++)
        ASSERT_OK(pthread_create(&th[i], NULL, stress_main, &st[i]));
    stress_main(&st[0]);
    for (unsigned i = 1; i < NSTRESS; i++)
        ASSERT_OK(pthread_join(th[i], NULL));
    for (unsigned i = 0; i < NSTRESS; i++) {
        test_log("stress thread %u: ops tree %" PRIu64 " join2 %" PRIu64 " for %" PRIu64
                 " nested %" PRIu64 " forks %" PRIu64 "\n", i, st[i].ops[0], st[i].ops[1],
                 st[i].ops[2], st[i].ops[3], st[i].ops[4]);
        for (unsigned k = 0; k < NTREES; k++)
            tree_free(&st[i].trees[k]);
        free((void *)st[i].hits);
    }
    clove_pool_destroy(p);
}
