/* SPDX-License-Identifier: MIT */
/*
 * test_reduce_det.c - clove_reduce_deterministic.
 *
 *   reduce_det_bits      a floating-point sum over values of wildly
 *                        different magnitudes (so that the order of the
 *                        additions shows in the bits) gives exactly the
 *                        bits of the documented tree expression, computed
 *                        here without the library, on 1-16 threads with a
 *                        1 us heartbeat, for several grains; every index
 *                        folded once
 *   reduce_det_order     a non-commutative combine (concatenation) with an
 *                        accumulator over 64 bytes (the preallocated
 *                        slots): the result is the sequential one, and
 *                        init and combine run exactly blocks - 1 times
 *   reduce_det_errors    EINVAL, an empty range, ENOMEM when the slots
 *                        cannot be allocated (nothing called then)
 */
#include "test.h"

#include "../src/fault.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Bits of a floating-point sum                                             */
/* ------------------------------------------------------------------------ */

struct facc {
    double sum;
    uint64_t count, hash; /* every index once: count and an index hash */
};

struct fctx {
    const double *v;
    _Atomic uint32_t *hits;
};

static double fvalue(uint64_t i)
{
    uint64_t r = mix64(i * 0x9E3779B97F4A7C15ull + 7);
    double m = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
    int e = (int)(r % 61) - 30;                         /* 2^-30 .. 2^30 */
    return (r & 1024 ? -m : m) * ldexp(1.0, e);
}

static void f_init(void *acc, void *ctx)
{
    (void)ctx;
    *(struct facc *)acc = (struct facc){0, 0, 0};
}

static void f_body(clove_task *t, size_t lo, size_t hi, void *acc, void *ctx)
{
    (void)t;
    struct facc *a = acc;
    const struct fctx *c = ctx;
    for (size_t i = lo; i < hi; i++) {
        a->sum += c->v[i];
        a->count++;
        a->hash += index_hash(i, i);
        if (c->hits)
            atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
    }
}

static void f_combine(void *left, void *right, void *ctx)
{
    (void)ctx;
    struct facc *l = left;
    const struct facc *r = right;
    l->sum += r->sum;
    l->count += r->count;
    l->hash += r->hash;
}

/* The documented expression, without the library. */
static void expect_tree(const double *v, size_t begin, size_t end, size_t grain, size_t b0,
                        size_t b1, struct facc *acc)
{
    if (b1 - b0 == 1) {
        size_t lo = begin + b0 * grain;
        size_t hi = end - lo > grain ? lo + grain : end;
        struct fctx c = {v, NULL};
        f_body(NULL, lo, hi, acc, &c);
        return;
    }
    size_t m = b0 + (b1 - b0) / 2;
    expect_tree(v, begin, end, grain, b0, m, acc);
    struct facc u;
    f_init(&u, NULL);
    expect_tree(v, begin, end, grain, m, b1, &u);
    f_combine(acc, &u, NULL);
}

static struct facc expect_sum(const double *v, size_t begin, size_t end, size_t grain,
                              double start)
{
    size_t n = end - begin;
    if (grain == 0) {
        grain = (n + 4095) / 4096;
        if (grain < 2048)
            grain = 2048;
    }
    struct facc acc = {start, 0, 0};
    expect_tree(v, begin, end, grain, 0, (n + grain - 1) / grain, &acc);
    return acc;
}

struct bits_run {
    struct fctx c;
    size_t begin, end, grain;
    struct facc acc;
};

static void bits_fn(clove_task *t, void *arg)
{
    struct bits_run *r = arg;
    ASSERT_OK(clove_reduce_deterministic(t, r->begin, r->end, r->grain, &r->acc, sizeof r->acc,
                                         f_init, f_body, f_combine, &r->c));
}

void test_reduce_det_bits(void)
{
    size_t n = scaled(200000, 20000);
    double *v = malloc(n * sizeof *v);
    _Atomic uint32_t *hits = calloc(n, sizeof *hits);
    ASSERT(v != NULL && hits != NULL);
    for (size_t i = 0; i < n; i++)
        v[i] = fvalue(i);
    /* Ranges and grains: the default, a grain of 1 (a block per index),
     * odd ones, one block, a grain beyond the range. */
    const struct {
        size_t begin, end, grain;
    } cases[] = {{0, n, 0}, {3, n - 5, 0}, {0, 5000, 1}, {1, n, 7},
                 {0, n, 1000}, {0, n, n}, {0, 100, 1000}, {10, 11, 0}};
    static const unsigned threads[] = {1, 2, 3, 4, 8, 16};
    size_t differs_from_plain = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct facc want = expect_sum(v, cases[k].begin, cases[k].end, cases[k].grain, 0.25);
        ASSERT_EQ_U(want.count, cases[k].end - cases[k].begin);
        double plain = 0.25;
        for (size_t i = cases[k].begin; i < cases[k].end; i++)
            plain += v[i];
        differs_from_plain += memcmp(&plain, &want.sum, sizeof plain) != 0;
        for (size_t th = 0; th < sizeof threads / sizeof threads[0]; th++) {
            clove_pool *p = make_pool(threads[th], 1);
            for (size_t r = 0; r < scaled(4, 2); r++) {
                struct bits_run run = {{v, hits}, cases[k].begin, cases[k].end, cases[k].grain,
                                       {0.25, 0, 0}};
                ASSERT_OK(clove_pool_run(p, bits_fn, &run));
                ASSERT_MSG(memcmp(&run.acc.sum, &want.sum, sizeof want.sum) == 0,
                           "case %zu, %u threads: %a, expected %a", k, threads[th],
                           run.acc.sum, want.sum);
                ASSERT_EQ_U(run.acc.count, want.count);
                ASSERT_EQ_U(run.acc.hash, want.hash);
                for (size_t i = 0; i < n; i++) {
                    uint32_t h = atomic_load_explicit(&hits[i], memory_order_relaxed);
                    ASSERT_EQ_U(h, i >= cases[k].begin && i < cases[k].end ? 1 : 0);
                    atomic_store_explicit(&hits[i], 0, memory_order_relaxed);
                }
            }
            clove_pool_destroy(p);
        }
    }
    /* The data makes the order visible: the tree's sum is not the plain
     * loop's in most cases (else the bit comparison would prove little). */
    ASSERT(differs_from_plain >= 3);
    free(v);
    free((void *)hits);
}

/* ------------------------------------------------------------------------ */
/* Order, with accumulators in the preallocated slots                       */
/* ------------------------------------------------------------------------ */

/* A string of the indices folded, "i," each, plus padding that makes the
 * accumulator larger than 64 bytes. */
struct sacc {
    char *s;
    size_t len, cap;
    char pad[80];
};

static _Atomic uint64_t s_inits, s_combines;

static void s_append(struct sacc *a, const char *x, size_t n)
{
    if (a->len + n + 1 > a->cap) {
        size_t cap = (a->len + n + 1) * 2;
        char *s = realloc(a->s, cap);
        ASSERT(s != NULL);
        a->s = s;
        a->cap = cap;
    }
    memcpy(a->s + a->len, x, n);
    a->len += n;
    a->s[a->len] = 0;
}

static void s_init(void *acc, void *ctx)
{
    (void)ctx;
    struct sacc *a = acc;
    ASSERT((uintptr_t)a % _Alignof(max_align_t) == 0);
    memset(a, 0, sizeof *a);
    atomic_fetch_add(&s_inits, 1);
}

static void s_body(clove_task *t, size_t lo, size_t hi, void *acc, void *ctx)
{
    (void)t;
    (void)ctx;
    char buf[32];
    for (size_t i = lo; i < hi; i++) {
        int k = snprintf(buf, sizeof buf, "%zu,", i);
        s_append(acc, buf, (size_t)k);
    }
}

static void s_combine(void *left, void *right, void *ctx)
{
    (void)ctx;
    struct sacc *r = right;
    if (r->len)
        s_append(left, r->s, r->len);
    free(r->s);
    r->s = NULL;
    atomic_fetch_add(&s_combines, 1);
}

struct order_run {
    size_t begin, end, grain;
    struct sacc acc;
};

static void order_fn(clove_task *t, void *arg)
{
    struct order_run *r = arg;
    ASSERT_OK(clove_reduce_deterministic(t, r->begin, r->end, r->grain, &r->acc, sizeof r->acc,
                                         s_init, s_body, s_combine, NULL));
}

void test_reduce_det_order(void)
{
    size_t n = scaled(30000, 3000);
    struct sacc want = {0};
    s_append(&want, "start:", 6);
    s_body(NULL, 0, n, &want, NULL);
    static const size_t grains[] = {0, 1, 3, 100, 1000, 100000};
    static const unsigned threads[] = {1, 2, 4, 16};
    for (size_t g = 0; g < sizeof grains / sizeof grains[0]; g++) {
        size_t grain = grains[g] ? grains[g] : 2048; /* n <= 4096 * 2048 */
        uint64_t blocks = (n + grain - 1) / grain;
        for (size_t th = 0; th < sizeof threads / sizeof threads[0]; th++) {
            clove_pool *p = make_pool(threads[th], 1);
            struct order_run r = {0, n, grains[g], {0}};
            s_append(&r.acc, "start:", 6);
            atomic_store(&s_inits, 0);
            atomic_store(&s_combines, 0);
            ASSERT_OK(clove_pool_run(p, order_fn, &r));
            ASSERT_EQ_U(r.acc.len, want.len);
            ASSERT(strcmp(r.acc.s, want.s) == 0);
            ASSERT_EQ_U(atomic_load(&s_inits), blocks - 1);
            ASSERT_EQ_U(atomic_load(&s_combines), blocks - 1);
            free(r.acc.s);
            clove_pool_destroy(p);
        }
    }
    free(want.s);
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

static void errors_fn(clove_task *t, void *arg)
{
    (void)arg;
    struct facc a = {0, 0, 0};
    struct fctx c = {NULL, NULL};
    ASSERT_EQ_I(clove_reduce_deterministic(NULL, 0, 1, 0, &a, sizeof a, f_init, f_body,
                                           f_combine, &c), EINVAL);
    ASSERT_EQ_I(clove_reduce_deterministic(t, 0, 1, 0, NULL, sizeof a, f_init, f_body,
                                           f_combine, &c), EINVAL);
    ASSERT_EQ_I(clove_reduce_deterministic(t, 0, 1, 0, &a, 0, f_init, f_body, f_combine, &c),
                EINVAL);
    ASSERT_EQ_I(clove_reduce_deterministic(t, 0, 1, 0, &a, sizeof a, NULL, f_body, f_combine,
                                           &c), EINVAL);
    ASSERT_EQ_I(clove_reduce_deterministic(t, 0, 1, 0, &a, sizeof a, f_init, NULL, f_combine,
                                           &c), EINVAL);
    ASSERT_EQ_I(clove_reduce_deterministic(t, 0, 1, 0, &a, sizeof a, f_init, f_body, NULL, &c),
                EINVAL);
    /* Empty: nothing called (c.v is NULL: a call would crash). */
    ASSERT_OK(clove_reduce_deterministic(t, 5, 5, 0, &a, sizeof a, f_init, f_body, f_combine,
                                         &c));
    ASSERT_OK(clove_reduce_deterministic(t, 6, 5, 0, &a, sizeof a, f_init, f_body, f_combine,
                                         &c));
    /* The slots of a large accumulator cannot be allocated: ENOMEM before
     * any call, the accumulator untouched. */
    struct sacc s = {0};
    atomic_store(&s_inits, 0);
    clove__fault_arm(CLOVE__FAULT_ALLOC, 1);
    int rc = clove_reduce_deterministic(t, 0, 1000, 10, &s, sizeof s, s_init, s_body, s_combine,
                                        NULL);
    clove__fault_arm(CLOVE__FAULT_ALLOC, 0);
    ASSERT_EQ_I(rc, ENOMEM);
    ASSERT(s.s == NULL && s.len == 0);
    ASSERT_EQ_U(atomic_load(&s_inits), 0);
    /* A single block needs no slot. */
    clove__fault_arm(CLOVE__FAULT_ALLOC, 1);
    rc = clove_reduce_deterministic(t, 0, 10, 10, &s, sizeof s, s_init, s_body, s_combine, NULL);
    clove__fault_arm(CLOVE__FAULT_ALLOC, 0);
    ASSERT_OK(rc);
    ASSERT(strcmp(s.s, "0,1,2,3,4,5,6,7,8,9,") == 0);
    free(s.s);
}

void test_reduce_det_errors(void)
{
    clove_pool *p = make_pool(2, 1);
    ASSERT_OK(clove_pool_run(p, errors_fn, NULL));
    clove_pool_destroy(p);
}
