/* SPDX-License-Identifier: MIT */
/*
 * test_typed.c - typed tasks (CLOVE_TASK, CLOVE_VOID_TASK, CLOVE_FORK,
 * CLOVE_JOIN, CLOVE_RUN, CLOVE_POOL_RUN).
 *
 *   typed_tree_sum   a typed task over random trees on 1-16 threads with a
 *                    1 us heartbeat: every node visited once, both sums
 *   typed_shapes     every argument count (1 .. 6) and every way a result
 *                    or an argument travels: packed in the record (an int,
 *                    a pointer, an 8-byte struct), in the handle (several
 *                    arguments, a 16-byte argument), results of 1, 8 and
 *                    32 bytes, a double, void; each a recursion that forks
 *                    at every level, checked against its sequential value
 *   typed_long_leaves  the forked half waits behind a long leaf, so the
 *                    heartbeat thread steals the task's reserve: every
 *                    result still arrives once (the steals are counted for
 *                    information only)
 */
#include "test.h"

#include <errno.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* Tree sum                                                                 */
/* ------------------------------------------------------------------------ */

static const struct tree *typed_tree;

static struct sums tsum(clove_task *t, const struct tnode *n);
CLOVE_TASK(struct sums, tsum, const struct tnode *);

static uint64_t thash(clove_task *t, const struct tnode *n);
CLOVE_TASK(uint64_t, thash, const struct tnode *);

/* 16-byte result: lives in the handle (clove_fork underneath). */
static struct sums tsum(clove_task *t, const struct tnode *n)
{
    struct sums s = {0, 0};
    while (n) {
        atomic_fetch_add_explicit(&typed_tree->visits[n->index], 1, memory_order_relaxed);
        s.sum += n->value;
        s.hash += index_hash(n->value, n->index);
        if (n->left && n->right) {
            CLOVE_FORK(t, tsum, right, n->right);
            sums_add(&s, tsum(t, n->left));
            sums_add(&s, CLOVE_JOIN(t, right));
            return s;
        }
        n = n->left ? n->left : n->right;
    }
    return s;
}

/* 8-byte result and one pointer argument: the value form's record. */
static uint64_t thash(clove_task *t, const struct tnode *n)
{
    uint64_t h = 0;
    while (n) {
        atomic_fetch_add_explicit(&typed_tree->visits[n->index], 1, memory_order_relaxed);
        h += index_hash(n->value, n->index);
        if (n->left && n->right) {
            CLOVE_FORK(t, thash, right, n->right);
            h += thash(t, n->left);
            return h + CLOVE_JOIN(t, right);
        }
        n = n->left ? n->left : n->right;
    }
    return h;
}

void test_typed_tree_sum(void)
{
    static const unsigned threads[] = {1, 2, 4, 16};
    for (int shape = 0; shape < SHAPE_COUNT; shape++) {
        struct tree tr;
        tree_build(&tr, scaled(60000, 2000), (enum tree_shape)shape, 0x7e + (uint64_t)shape);
        typed_tree = &tr;
        for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
            clove_pool *p = make_pool(threads[k], 1);
            for (size_t r = 0; r < scaled(3, 2); r++) {
                struct sums got = {0, 0};
                ASSERT_OK(CLOVE_POOL_RUN(p, tsum, &got, tr.root));
                tree_check(&tr, got);
                uint64_t h = 0;
                ASSERT_OK(CLOVE_POOL_RUN(p, thash, &h, tr.root));
                tree_check(&tr, (struct sums){tr.expect.sum, h});
            }
            clove_pool_destroy(p);
        }
        uint64_t h = 0;
        ASSERT_OK(CLOVE_RUN(thash, &h, tr.root));
        tree_check(&tr, (struct sums){tr.expect.sum, h});
        ASSERT_EQ_I(CLOVE_POOL_RUN(NULL, thash, &h, tr.root), EINVAL);
        tree_free(&tr);
    }
}

/* ------------------------------------------------------------------------ */
/* Every shape of task                                                      */
/* ------------------------------------------------------------------------ */

/* Each task below computes, for a range [lo, hi) of indices, a function
 * of index_value(seed, i) over the range, forking its upper half at every
 * level until the range has one index. The sequential answer is computed
 * with a plain loop. */
#define SEED 0x5eedull

struct pair8 {
    uint32_t lo, hi; /* an 8-byte argument: packed in the record */
};
struct range16 {
    uint64_t lo, hi; /* a 16-byte argument: in the handle */
};
struct big32 {
    uint64_t sum, xor_, min, count; /* a 32-byte result: in the handle */
};

static uint64_t val(uint64_t i)
{
    return index_value(SEED, i);
}

/* 1 argument (8-byte struct, packed), 8-byte result. */
static uint64_t s1(clove_task *t, struct pair8 r);
CLOVE_TASK(uint64_t, s1, struct pair8);
static uint64_t s1(clove_task *t, struct pair8 r)
{
    if (r.hi - r.lo == 1)
        return val(r.lo);
    uint32_t mid = r.lo + (r.hi - r.lo) / 2;
    CLOVE_FORK(t, s1, up, (struct pair8){mid, r.hi});
    uint64_t a = s1(t, (struct pair8){r.lo, mid});
    return a + CLOVE_JOIN(t, up);
}

/* 1 argument (16 bytes, not packed), 32-byte result. */
static struct big32 s2(clove_task *t, struct range16 r);
CLOVE_TASK(struct big32, s2, struct range16);
static struct big32 s2(clove_task *t, struct range16 r)
{
    if (r.hi - r.lo == 1) {
        uint64_t v = val(r.lo);
        return (struct big32){v, v, v, 1};
    }
    uint64_t mid = r.lo + (r.hi - r.lo) / 2;
    CLOVE_FORK(t, s2, up, (struct range16){mid, r.hi});
    struct big32 a = s2(t, (struct range16){r.lo, mid});
    struct big32 b = CLOVE_JOIN(t, up);
    return (struct big32){a.sum + b.sum, a.xor_ ^ b.xor_, a.min < b.min ? a.min : b.min,
                          a.count + b.count};
}

/* 2 arguments, a 1-byte result (the parity of the sum). */
static unsigned char s3(clove_task *t, uint64_t lo, uint64_t hi);
CLOVE_TASK(unsigned char, s3, uint64_t, uint64_t);
static unsigned char s3(clove_task *t, uint64_t lo, uint64_t hi)
{
    if (hi - lo == 1)
        return (unsigned char)(val(lo) & 1);
    uint64_t mid = lo + (hi - lo) / 2;
    CLOVE_FORK(t, s3, up, mid, hi);
    unsigned char a = s3(t, lo, mid);
    return (unsigned char)(a ^ CLOVE_JOIN(t, up));
}

/* 3 arguments, a double result. */
static double s4(clove_task *t, uint64_t lo, uint64_t hi, double scale);
CLOVE_TASK(double, s4, uint64_t, uint64_t, double);
static double s4(clove_task *t, uint64_t lo, uint64_t hi, double scale)
{
    if (hi - lo == 1)
        return (double)(val(lo) >> 40) * scale;
    uint64_t mid = lo + (hi - lo) / 2;
    CLOVE_FORK(t, s4, up, mid, hi, scale);
    double a = s4(t, lo, mid, scale);
    return a + CLOVE_JOIN(t, up);
}

/* 4 arguments, void: writes each index's value into out[i]. */
static void s5(clove_task *t, uint64_t *out, uint64_t lo, uint64_t hi, _Atomic uint32_t *hits);
CLOVE_VOID_TASK(s5, uint64_t *, uint64_t, uint64_t, _Atomic uint32_t *);
static void s5(clove_task *t, uint64_t *out, uint64_t lo, uint64_t hi, _Atomic uint32_t *hits)
{
    if (hi - lo == 1) {
        out[lo] = val(lo);
        atomic_fetch_add_explicit(&hits[lo], 1, memory_order_relaxed);
        return;
    }
    uint64_t mid = lo + (hi - lo) / 2;
    CLOVE_FORK(t, s5, up, out, mid, hi, hits);
    s5(t, out, lo, mid, hits);
    CLOVE_JOIN(t, up);
}

/* 1 argument, void, packed (a pointer to the range's bounds is not
 * needed: the index range is encoded in one 64-bit word). */
static _Atomic uint32_t *s6_hits;
static void s6(clove_task *t, uint64_t lohi);
CLOVE_VOID_TASK(s6, uint64_t);
static void s6(clove_task *t, uint64_t lohi)
{
    uint64_t lo = lohi >> 32, hi = lohi & 0xffffffffu;
    if (hi - lo == 1) {
        atomic_fetch_add_explicit(&s6_hits[lo], 1, memory_order_relaxed);
        return;
    }
    uint64_t mid = lo + (hi - lo) / 2;
    CLOVE_FORK(t, s6, up, mid << 32 | hi);
    s6(t, lo << 32 | mid);
    CLOVE_JOIN(t, up);
}

/* 6 arguments, a pointer result: the address of the largest value's slot
 * (the first one on ties) among out[lo..hi). */
static const uint64_t *s7(clove_task *t, const uint64_t *out, uint64_t lo, uint64_t hi,
                          int a4, char a5, short a6);
CLOVE_TASK(const uint64_t *, s7, const uint64_t *, uint64_t, uint64_t, int, char, short);
static const uint64_t *s7(clove_task *t, const uint64_t *out, uint64_t lo, uint64_t hi,
                          int a4, char a5, short a6)
{
    ASSERT(a4 == -4 && a5 == 'x' && a6 == 666);
    if (hi - lo == 1)
        return &out[lo];
    uint64_t mid = lo + (hi - lo) / 2;
    CLOVE_FORK(t, s7, up, out, mid, hi, a4, a5, a6);
    const uint64_t *a = s7(t, out, lo, mid, a4, a5, a6);
    const uint64_t *b = CLOVE_JOIN(t, up);
    return *b > *a ? b : a;
}

struct shapes_arg {
    uint64_t n;
    uint64_t *out;
    _Atomic uint32_t *hits;
};

static void shapes_fn(clove_task *t, void *p)
{
    struct shapes_arg *a = p;
    uint64_t n = a->n;
    uint64_t sum = 0, xor_ = 0, min = UINT64_MAX, best = 0;
    double dsum = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = val(i);
        sum += v;
        xor_ ^= v;
        if (v < min)
            min = v;
        if (v > val(best))
            best = i;
        dsum += (double)(v >> 40) * 0.5;
    }
    ASSERT_EQ_U(s1(t, (struct pair8){0, (uint32_t)n}), sum);
    struct big32 b = s2(t, (struct range16){0, n});
    ASSERT_EQ_U(b.sum, sum);
    ASSERT_EQ_U(b.xor_, xor_);
    ASSERT_EQ_U(b.min, min);
    ASSERT_EQ_U(b.count, n);
    ASSERT_EQ_U(s3(t, 0, n), sum & 1);
    /* Sums of halves of integers below 2^24, exact in a double. */
    ASSERT(s4(t, 0, n, 0.5) == dsum);
    s5(t, a->out, 0, n, a->hits);
    for (uint64_t i = 0; i < n; i++) {
        ASSERT_EQ_U(a->out[i], val(i));
        ASSERT_EQ_U(atomic_load_explicit(&a->hits[i], memory_order_relaxed), 1);
        atomic_store_explicit(&a->hits[i], 0, memory_order_relaxed);
    }
    s6_hits = a->hits;
    s6(t, n);
    for (uint64_t i = 0; i < n; i++) {
        ASSERT_EQ_U(atomic_load_explicit(&a->hits[i], memory_order_relaxed), 1);
        atomic_store_explicit(&a->hits[i], 0, memory_order_relaxed);
    }
    ASSERT_EQ_P(s7(t, a->out, 0, n, -4, 'x', 666), &a->out[best]);
}

void test_typed_shapes(void)
{
    uint64_t n = scaled(20000, 500);
    struct shapes_arg a = {n, calloc(n, sizeof(uint64_t)), calloc(n, sizeof(_Atomic uint32_t))};
    ASSERT(a.out != NULL && a.hits != NULL);
    static const unsigned threads[] = {1, 2, 3, 8};
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        for (size_t r = 0; r < scaled(3, 1); r++)
            ASSERT_OK(clove_pool_run(p, shapes_fn, &a));
        clove_pool_destroy(p);
    }
    free(a.out);
    free((void *)a.hits);
}

/* ------------------------------------------------------------------------ */
/* Long leaves                                                              */
/* ------------------------------------------------------------------------ */

/* A leaf that neither forks nor ticks for about `us` microseconds. */
static uint64_t long_leaf(uint64_t i, unsigned us)
{
    double end = now_s() + us * 1e-6;
    uint64_t x = val(i);
    while (now_s() < end)
        x = mix64(x);
    (void)x;
    return val(i);
}

static _Atomic uint32_t *leaf_hits;

static uint64_t leaves(clove_task *t, uint64_t lo, uint64_t hi);
CLOVE_TASK(uint64_t, leaves, uint64_t, uint64_t);
static uint64_t leaves(clove_task *t, uint64_t lo, uint64_t hi)
{
    if (hi - lo == 1) {
        atomic_fetch_add_explicit(&leaf_hits[lo], 1, memory_order_relaxed);
        return long_leaf(lo, 300);
    }
    uint64_t mid = lo + (hi - lo) / 2;
    CLOVE_FORK(t, leaves, up, mid, hi);
    uint64_t a = leaves(t, lo, mid);
    return a + CLOVE_JOIN(t, up);
}

struct leaves_arg {
    uint64_t n, got;
};

static void leaves_fn(clove_task *t, void *p)
{
    struct leaves_arg *a = p;
    a->got = leaves(t, 0, a->n);
}

void test_typed_long_leaves(void)
{
    uint64_t n = scaled(64, 16);
    leaf_hits = calloc(n, sizeof *leaf_hits);
    ASSERT(leaf_hits != NULL);
    uint64_t expect = 0;
    for (uint64_t i = 0; i < n; i++)
        expect += val(i);
    static const unsigned threads[] = {2, 3};
    for (size_t k = 0; k < 2; k++) {
        /* A 50 us heartbeat: the 300 us leaves leave beats unanswered. */
        clove_pool *p = make_pool(threads[k], 50);
        for (size_t r = 0; r < 3; r++) {
            struct leaves_arg a = {n, 0};
            ASSERT_OK(clove_pool_run(p, leaves_fn, &a));
            ASSERT_EQ_U(a.got, expect);
            for (uint64_t i = 0; i < n; i++) {
                ASSERT_EQ_U(atomic_load(&leaf_hits[i]), 1);
                atomic_store(&leaf_hits[i], 0);
            }
        }
        clove_stats st;
        ASSERT_OK(clove_pool_stats(p, &st, NULL, 0));
        test_log("threads %u: stolen %" PRIu64 " shared %" PRIu64 "\n", threads[k], st.stolen,
                 st.shared);
        clove_pool_destroy(p);
    }
    free((void *)leaf_hits);
}
