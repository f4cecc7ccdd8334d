/* SPDX-License-Identifier: MIT */
/*
 * test_data.c - the data-parallel calls: clove_worker_index, clove_reduce,
 * clove_scope_run/clove_spawn and clove_sort. Every test checks each
 * element or job exactly once on distinct values against a sequential
 * answer, on 1-32 threads with a 1 us heartbeat (sharing all the time).
 */
#include "test.h"
#include "../src/fault.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static const unsigned data_threads[] = {1, 2, 3, 8, 32};
#define NDATA_THREADS (sizeof data_threads / sizeof data_threads[0])

/* ------------------------------------------------------------------------ */
/* clove_worker_index                                                       */
/* ------------------------------------------------------------------------ */

struct index_ctx {
    unsigned nthreads;
    _Atomic uint32_t *busy;      /* [nthreads + 64]: tasks using the index now */
    _Atomic uint32_t clash;      /* two tasks at once with one index */
    _Atomic uint32_t out_of_range;
    _Atomic uint64_t seen_mask;  /* indices < 64 ever seen */
};

static void index_body(clove_task *t, size_t lo, size_t hi, void *arg)
{
    struct index_ctx *c = arg;
    unsigned w = clove_worker_index(t);
    if (w >= c->nthreads) {
        atomic_fetch_add(&c->out_of_range, 1);
        return;
    }
    if (atomic_fetch_add(&c->busy[w], 1) != 0)
        atomic_fetch_add(&c->clash, 1);
    if (w < 64)
        atomic_fetch_or(&c->seen_mask, (uint64_t)1 << w);
    uint64_t x = lo;
    for (size_t i = lo; i < hi; i++)
        for (int k = 0; k < 50; k++)
            x = mix64(x + (uint64_t)k);
    if (x == 42)
        atomic_fetch_add(&c->clash, 1000); /* never: keeps x alive */
    atomic_fetch_sub(&c->busy[w], 1);
}

static void index_run(clove_task *t, void *arg)
{
    struct index_ctx *c = arg;
    ASSERT_EQ_U(clove_worker_index(t), 0); /* the only external thread */
    clove_for(t, 0, scaled(200000, 20000), index_body, c);
}

struct ext_ctx {
    clove_pool *pool;
    pthread_barrier_t *inside;
    unsigned index;
};

static void ext_run(clove_task *t, void *arg)
{
    struct ext_ctx *e = arg;
    e->index = clove_worker_index(t);
    /* Everybody is inside clove_pool_run at once. */
    pthread_barrier_wait(e->inside);
    pthread_barrier_wait(e->inside);
}

static void *ext_thread(void *arg)
{
    struct ext_ctx *e = arg;
    ASSERT_OK(clove_pool_run(e->pool, ext_run, e));
    return NULL;
}

/* A thread that stays inside clove_pool_run until released. */
struct held {
    clove_pool *pool;
    _Atomic int inside, release;
    unsigned index;
};

static void held_run(clove_task *t, void *arg)
{
    struct held *h = arg;
    h->index = clove_worker_index(t);
    atomic_store(&h->inside, 1);
    while (!atomic_load(&h->release))
        sched_yield();
}

static void *held_thread(void *arg)
{
    struct held *h = arg;
    ASSERT_OK(clove_pool_run(h->pool, held_run, h));
    return NULL;
}

struct index_out {
    unsigned index;
};

static void index_out_run(clove_task *t, void *arg)
{
    ((struct index_out *)arg)->index = clove_worker_index(t);
}

/* Index 0 is free again as soon as its thread leaves, even while a thread
 * that entered after it (index n) is still inside; that one keeps n. */
static void held_index_reuse(clove_pool *p, unsigned n)
{
    struct held h0 = {p, 0, 0, ~0u}, h1 = {p, 0, 0, ~0u};
    pthread_t t0, t1;
    ASSERT_OK(pthread_create(&t0, NULL, held_thread, &h0));
    while (!atomic_load(&h0.inside))
        sched_yield();
    ASSERT_OK(pthread_create(&t1, NULL, held_thread, &h1));
    while (!atomic_load(&h1.inside))
        sched_yield();
    ASSERT_EQ_U(h0.index, 0);
    ASSERT_EQ_U(h1.index, n);
    atomic_store(&h0.release, 1);
    ASSERT_OK(pthread_join(t0, NULL));
    struct index_out o = {~0u};
    ASSERT_OK(clove_pool_run(p, index_out_run, &o));
    ASSERT_EQ_U(o.index, 0);
    atomic_store(&h1.release, 1);
    ASSERT_OK(pthread_join(t1, NULL));
}

void test_worker_index_unique(void)
{
    for (size_t k = 0; k < NDATA_THREADS; k++) {
        unsigned n = data_threads[k];
        clove_pool *p = make_pool(n, 1);
        _Atomic uint32_t *busy = calloc(n + 64, sizeof *busy);
        ASSERT(busy != NULL);
        struct index_ctx c = {n, busy, 0, 0, 0};
        ASSERT_OK(clove_pool_run(p, index_run, &c));
        ASSERT_EQ_U(atomic_load(&c.clash), 0);
        ASSERT_EQ_U(atomic_load(&c.out_of_range), 0);
        ASSERT(atomic_load(&c.seen_mask) & 1u);
        test_log("worker_index threads=%u seen mask %#jx\n", n,
                 (uintmax_t)atomic_load(&c.seen_mask));

        /* Several external threads inside clove_pool_run at once: 0, then
         * n, n+1, ... - distinct, and 0 is reused once free. */
        enum { EXT = 4 };
        pthread_barrier_t bar;
        ASSERT_OK(pthread_barrier_init(&bar, NULL, EXT));
        pthread_t th[EXT];
        struct ext_ctx e[EXT];
        for (unsigned i = 0; i < EXT; i++) {
            e[i] = (struct ext_ctx){p, &bar, ~0u};
            ASSERT_OK(pthread_create(&th[i], NULL, ext_thread, &e[i]));
        }
        for (unsigned i = 0; i < EXT; i++)
            ASSERT_OK(pthread_join(th[i], NULL));
        pthread_barrier_destroy(&bar);
        unsigned seen = 0;
        for (unsigned i = 0; i < EXT; i++) {
            unsigned idx = e[i].index;
            unsigned slot = idx == 0 ? 0 : idx - n + 1;
            ASSERT_MSG(idx == 0 || (idx >= n && slot < EXT),
                       "external index %u with %u threads", idx, n);
            ASSERT_MSG(!(seen & (1u << slot)), "index %u given twice", idx);
            seen |= 1u << slot;
        }
        ASSERT_EQ_U(seen, (1u << EXT) - 1);
        ASSERT_OK(clove_pool_run(p, index_run, &c)); /* 0 again */
        held_index_reuse(p, n);
        free((void *)busy);
        clove_pool_destroy(p);
    }
}

/* ------------------------------------------------------------------------ */
/* clove_reduce                                                             */
/* ------------------------------------------------------------------------ */

/* Sum and an order-sensitive polynomial hash of index_value(seed, i):
 * combine is h = h_left * B^len_right + h_right, so any reordering, loss
 * or duplication of a piece changes it. Each index is also counted. */
#define POLY_B 0x100000001b3ull
struct ordacc {
    uint64_t sum;
    uint64_t h;   /* polynomial hash of the sequence, mod 2^64 */
    uint64_t pw;  /* B^len */
    uint64_t len;
};

struct red_ctx {
    uint64_t seed;
    size_t base;
    _Atomic uint8_t *hits;
    _Atomic uint32_t inits, combines;
};

static void ord_init(void *acc, void *ctx)
{
    struct red_ctx *c = ctx;
    atomic_fetch_add_explicit(&c->inits, 1, memory_order_relaxed);
    *(struct ordacc *)acc = (struct ordacc){0, 0, 1, 0};
}

static void ord_body(clove_task *t, size_t lo, size_t hi, void *acc, void *ctx)
{
    (void)t;
    struct red_ctx *c = ctx;
    struct ordacc *a = acc;
    for (size_t i = lo; i < hi; i++) {
        if (c->hits)
            atomic_fetch_add_explicit(&c->hits[i - c->base], 1, memory_order_relaxed);
        uint64_t v = index_value(c->seed, i);
        a->sum += v;
        a->h = a->h * POLY_B + v;
        a->pw *= POLY_B;
        a->len++;
    }
}

static void ord_combine(void *left, void *right, void *ctx)
{
    struct red_ctx *c = ctx;
    atomic_fetch_add_explicit(&c->combines, 1, memory_order_relaxed);
    struct ordacc *l = left, *r = right;
    l->sum += r->sum;
    l->h = l->h * r->pw + r->h;
    l->pw *= r->pw;
    l->len += r->len;
}

struct red_run {
    size_t begin, end;
    struct red_ctx *c;
    struct ordacc acc;
    int rc;
};

static void red_run_fn(clove_task *t, void *arg)
{
    struct red_run *r = arg;
    r->rc = clove_reduce(t, r->begin, r->end, &r->acc, sizeof r->acc, ord_init, ord_body,
                         ord_combine, r->c);
    ASSERT_EQ_P(t->top, t->base);
}

static void reduce_checked(clove_pool *p, size_t begin, size_t end, uint64_t seed,
                           _Atomic uint8_t *hits)
{
    struct red_ctx c = {seed, begin, hits, 0, 0};
    /* A non-identity start value: it must stay leftmost. */
    struct red_run r = {begin, end, &c, {7, 13, POLY_B, 1}, -1};
    ASSERT_OK(clove_pool_run(p, red_run_fn, &r));
    ASSERT_OK(r.rc);
    struct ordacc e = {7, 13, POLY_B, 1};
    struct red_ctx seq = {seed, begin, NULL, 0, 0};
    if (begin < end)
        ord_body(NULL, begin, end, &e, &seq);
    ASSERT_EQ_U(r.acc.len, e.len);
    ASSERT_EQ_U(r.acc.sum, e.sum);
    ASSERT_EQ_U(r.acc.h, e.h);
    ASSERT_EQ_U(r.acc.pw, e.pw);
    ASSERT_EQ_U(atomic_load(&c.inits), atomic_load(&c.combines));
    if (hits && begin < end)
        for (size_t k = 0; k < end - begin; k++) {
            uint8_t h = atomic_load_explicit(&hits[k], memory_order_relaxed);
            ASSERT_MSG(h == 1, "clove_reduce [%zu, %zu): index %zu folded %u times", begin,
                       end, begin + k, h);
            atomic_store_explicit(&hits[k], 0, memory_order_relaxed);
        }
}

void test_reduce_ordered(void)
{
    size_t big = scaled(2000000, 50000);
    _Atomic uint8_t *hits = calloc(big, 1);
    ASSERT(hits != NULL);
    for (size_t k = 0; k < NDATA_THREADS; k++) {
        clove_pool *p = make_pool(data_threads[k], 1);
        /* Empty, one element, tiny, near SIZE_MAX, large. */
        reduce_checked(p, 0, 0, 1, hits);
        reduce_checked(p, 10, 3, 2, hits);
        reduce_checked(p, 5, 6, 3, hits);
        for (size_t n = 2; n < 40; n++)
            reduce_checked(p, 100 * n, 101 * n, n, hits);
        reduce_checked(p, SIZE_MAX - 1, SIZE_MAX, 4, hits);
        reduce_checked(p, SIZE_MAX - 5000, SIZE_MAX, 5, hits);
        for (int r = 0; r < 3; r++)
            reduce_checked(p, 1000, 1000 + big, 6 + (uint64_t)r, hits);
        clove_pool_destroy(p);
    }
    free((void *)hits);
}

/* Concatenation of decimal strings: associative, not commutative, with an
 * accumulator that owns heap memory (combine frees the right one). */
struct str {
    char *s;
    size_t len, cap;
};

static void str_append(struct str *a, const char *p, size_t n)
{
    if (a->len + n + 1 > a->cap) {
        size_t cap = a->cap ? a->cap : 64;
        while (cap < a->len + n + 1)
            cap *= 2;
        a->s = realloc(a->s, cap);
        ASSERT(a->s != NULL);
        a->cap = cap;
    }
    memcpy(a->s + a->len, p, n);
    a->len += n;
    a->s[a->len] = 0;
}

static void str_init(void *acc, void *ctx)
{
    (void)ctx;
    *(struct str *)acc = (struct str){NULL, 0, 0};
}

static void str_body(clove_task *t, size_t lo, size_t hi, void *acc, void *ctx)
{
    (void)t;
    (void)ctx;
    char buf[32];
    for (size_t i = lo; i < hi; i++) {
        int n = snprintf(buf, sizeof buf, "%zu,", i * 7919 % 100003);
        str_append(acc, buf, (size_t)n);
    }
}

static void str_combine(void *left, void *right, void *ctx)
{
    (void)ctx;
    struct str *l = left, *r = right;
    if (r->len)
        str_append(l, r->s, r->len);
    free(r->s);
}

struct str_run {
    size_t n;
    struct str acc;
};

static void str_run_fn(clove_task *t, void *arg)
{
    struct str_run *r = arg;
    ASSERT_OK(clove_reduce(t, 0, r->n, &r->acc, sizeof r->acc, str_init, str_body,
                           str_combine, NULL));
}

/* 3x3 matrices mod a prime: 72 bytes, more than fits on the splitting
 * frame, so the accumulator goes through the heap path. */
#define MOD 1000000007ull
struct mat {
    uint64_t m[3][3];
};

static void mat_mul(struct mat *l, const struct mat *r)
{
    struct mat o;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            uint64_t s = 0;
            for (int k = 0; k < 3; k++)
                s = (s + l->m[i][k] * r->m[k][j]) % MOD;
            o.m[i][j] = s;
        }
    *l = o;
}

static void mat_of(struct mat *a, size_t i)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            a->m[r][c] = mix64(i * 9 + (size_t)(r * 3 + c)) % MOD;
}

static void mat_init(void *acc, void *ctx)
{
    (void)ctx;
    struct mat *a = acc;
    memset(a, 0, sizeof *a);
    for (int i = 0; i < 3; i++)
        a->m[i][i] = 1;
}

static void mat_body(clove_task *t, size_t lo, size_t hi, void *acc, void *ctx)
{
    (void)t;
    (void)ctx;
    struct mat x;
    for (size_t i = lo; i < hi; i++) {
        mat_of(&x, i);
        mat_mul(acc, &x);
    }
}

static void mat_combine(void *left, void *right, void *ctx)
{
    (void)ctx;
    mat_mul(left, right);
}

struct mat_run {
    size_t n;
    struct mat acc;
};

static void mat_run_fn(clove_task *t, void *arg)
{
    struct mat_run *r = arg;
    ASSERT_OK(clove_reduce(t, 0, r->n, &r->acc, sizeof r->acc, mat_init, mat_body,
                           mat_combine, NULL));
}

void test_reduce_noncommutative(void)
{
    size_t ns = scaled(200000, 5000), nm = scaled(300000, 10000);
    struct str want = {NULL, 0, 0};
    str_body(NULL, 0, ns, &want, NULL);
    struct mat mwant;
    mat_init(&mwant, NULL);
    mat_body(NULL, 0, nm, &mwant, NULL);
    for (size_t k = 0; k < NDATA_THREADS; k++) {
        clove_pool *p = make_pool(data_threads[k], 1);
        for (int r = 0; r < 3; r++) {
            struct str_run sr = {ns, {NULL, 0, 0}};
            ASSERT_OK(clove_pool_run(p, str_run_fn, &sr));
            ASSERT_EQ_U(sr.acc.len, want.len);
            ASSERT(memcmp(sr.acc.s, want.s, want.len) == 0);
            free(sr.acc.s);
            struct mat_run mr = {nm, {{{0}}}};
            mat_init(&mr.acc, NULL);
            ASSERT_OK(clove_pool_run(p, mat_run_fn, &mr));
            ASSERT(memcmp(&mr.acc, &mwant, sizeof mwant) == 0);
        }
        clove_pool_destroy(p);
    }
    free(want.s);
}

static void reduce_einval_fn(clove_task *t, void *arg)
{
    (void)arg;
    struct ordacc a = {0, 0, 1, 0};
    struct red_ctx c = {1, 0, NULL, 0, 0};
    ASSERT_EQ_I(clove_reduce(NULL, 0, 9, &a, sizeof a, ord_init, ord_body, ord_combine, &c), EINVAL);
    ASSERT_EQ_I(clove_reduce(t, 0, 9, NULL, sizeof a, ord_init, ord_body, ord_combine, &c), EINVAL);
    ASSERT_EQ_I(clove_reduce(t, 0, 9, &a, 0, ord_init, ord_body, ord_combine, &c), EINVAL);
    ASSERT_EQ_I(clove_reduce(t, 0, 9, &a, sizeof a, NULL, ord_body, ord_combine, &c), EINVAL);
    ASSERT_EQ_I(clove_reduce(t, 0, 9, &a, sizeof a, ord_init, NULL, ord_combine, &c), EINVAL);
    ASSERT_EQ_I(clove_reduce(t, 0, 9, &a, sizeof a, ord_init, ord_body, NULL, &c), EINVAL);
    ASSERT_EQ_U(a.len, 0); /* nothing was called */
    ASSERT_EQ_U(atomic_load(&c.inits), 0);
}

void test_reduce_errors(void)
{
    clove_pool *p = make_pool(2, 1);
    ASSERT_OK(clove_pool_run(p, reduce_einval_fn, NULL));
    /* The heap accumulator failing: that split is skipped, the answer is
     * still the sequential one. */
    size_t nm = scaled(300000, 20000);
    struct mat mwant;
    mat_init(&mwant, NULL);
    mat_body(NULL, 0, nm, &mwant, NULL);
    for (unsigned long n = 1; n <= 3; n++) {
        clove__fault_arm(CLOVE__FAULT_ALLOC, n);
        struct mat_run mr = {nm, {{{0}}}};
        mat_init(&mr.acc, NULL);
        ASSERT_OK(clove_pool_run(p, mat_run_fn, &mr));
        clove__fault_arm(CLOVE__FAULT_ALLOC, 0);
        ASSERT(memcmp(&mr.acc, &mwant, sizeof mwant) == 0);
    }
    clove_pool_destroy(p);
}

/* ------------------------------------------------------------------------ */
/* Scopes                                                                   */
/* ------------------------------------------------------------------------ */

/* A tree of spawns: job id spawns children 1..fanout(id) with ids derived
 * from it; every id is distinct (heap numbering in a k-ary tree) and
 * counted. The fanout varies from 0 to a lot, so frames grow past their
 * inline records and are split at heartbeats. */
struct spawn_ctx {
    _Atomic uint8_t *hits; /* by id */
    size_t nids;
    unsigned maxdepth;
    _Atomic uint64_t sum;
    _Atomic uint32_t bad;
};

struct spawn_arg {
    struct spawn_ctx *c;
    uint64_t id;
    unsigned depth;
};

static unsigned fanout(uint64_t id, unsigned depth, unsigned maxdepth)
{
    if (depth >= maxdepth)
        return 0;
    if (depth == 0)
        return 40;
    uint64_t h = mix64(id) % 16;
    return h < 3 ? 0 : h < 15 ? (unsigned)h : 40; /* 0, 3-14 or 40 */
}

/* Sequential count of the nodes below (and including) id. */
static uint64_t spawn_count(uint64_t id, unsigned depth, unsigned maxdepth, uint64_t *sum)
{
    *sum += mix64(id ^ 0x5bd1e995);
    uint64_t n = 1;
    unsigned f = fanout(id, depth, maxdepth);
    for (unsigned i = 0; i < f; i++)
        n += spawn_count(id * 41 + 1 + i, depth + 1, maxdepth, sum);
    return n;
}

static void spawn_job(clove_task *t, clove_scope *s, void *arg)
{
    struct spawn_arg *a = arg;
    struct spawn_ctx *c = a->c;
    atomic_fetch_add_explicit(&c->sum, mix64(a->id ^ 0x5bd1e995), memory_order_relaxed);
    unsigned f = fanout(a->id, a->depth, c->maxdepth);
    if (f == 0) {
        free(a);
        return;
    }
    for (unsigned i = 0; i < f; i++) {
        struct spawn_arg *ch = malloc(sizeof *ch);
        ASSERT(ch != NULL);
        *ch = (struct spawn_arg){c, a->id * 41 + 1 + i, a->depth + 1};
        clove_spawn(t, s, spawn_job, ch);
    }
    free(a);
}

static void spawn_root(clove_task *t, void *arg)
{
    struct spawn_arg *a = malloc(sizeof *a);
    ASSERT(a != NULL);
    *a = (struct spawn_arg){arg, 12345, 0};
    clove_scope_run(t, spawn_job, a);
    ASSERT_EQ_P(t->top, t->base);
}

void test_scope_spawn_tree(void)
{
    unsigned maxdepth = test_scale() >= 1 ? 5 : 4;
    uint64_t want_sum = 0;
    uint64_t want = spawn_count(12345, 0, maxdepth, &want_sum);
    ASSERT_GE_U(want, 1000);
    test_log("scope tree: %ju jobs\n", (uintmax_t)want);
    for (size_t k = 0; k < NDATA_THREADS; k++) {
        clove_pool *p = make_pool(data_threads[k], 1);
        for (int r = 0; r < 3; r++) {
            struct spawn_ctx c = {NULL, 0, maxdepth, 0, 0};
            ASSERT_OK(clove_pool_run(p, spawn_root, &c));
            uint64_t got = atomic_load(&c.sum);
            ASSERT_EQ_U(got, want_sum);
        }
        clove_pool_destroy(p);
    }
}

/* A flat scope with a given number of spawns, each marking its index. */
struct flat_ctx {
    size_t n;
    _Atomic uint8_t *hits;
    size_t *args;
    _Atomic uint32_t wrong_scope;
};

static void flat_job(clove_task *t, clove_scope *s, void *arg)
{
    (void)t;
    (void)s;
    size_t *i = arg;
    uint64_t x = *i;
    for (int k = 0; k < 20; k++)
        x = mix64(x);
    (void)x;
    atomic_fetch_add_explicit(&((_Atomic uint8_t *)i[1])[i[0]], 1, memory_order_relaxed);
}

static void flat_body(clove_task *t, clove_scope *s, void *arg)
{
    struct flat_ctx *c = arg;
    for (size_t i = 0; i < c->n; i++)
        clove_spawn(t, s, flat_job, &c->args[2 * i]);
}

static void flat_run(clove_task *t, void *arg)
{
    clove_scope_run(t, flat_body, arg);
}

static void flat_checked(clove_pool *p, size_t n)
{
    struct flat_ctx c = {n, calloc(n ? n : 1, 1), malloc((n ? n : 1) * 2 * sizeof(size_t)), 0};
    ASSERT(c.hits && c.args);
    for (size_t i = 0; i < n; i++) {
        c.args[2 * i] = i;
        c.args[2 * i + 1] = (size_t)(uintptr_t)c.hits;
    }
    ASSERT_OK(clove_pool_run(p, flat_run, &c));
    for (size_t i = 0; i < n; i++)
        ASSERT_MSG(atomic_load(&c.hits[i]) == 1, "spawn %zu of %zu ran %u times", i, n,
                   atomic_load(&c.hits[i]));
    free((void *)c.hits);
    free(c.args);
}

void test_scope_spawn_counts(void)
{
    size_t big = scaled(100000, 20000);
    for (size_t k = 0; k < NDATA_THREADS; k++) {
        clove_pool *p = make_pool(data_threads[k], 1);
        flat_checked(p, 0);
        flat_checked(p, 1);
        for (size_t n = 2; n <= 70; n++)
            flat_checked(p, n);
        flat_checked(p, big);
        clove_pool_destroy(p);
    }
    /* Growing the record array fails: those spawns run at once instead,
     * still exactly once. */
    clove_pool *p = make_pool(2, 1);
    for (unsigned long n = 1; n <= 4; n++) {
        clove__fault_arm(CLOVE__FAULT_ALLOC, n);
        flat_checked(p, 5000);
        clove__fault_arm(CLOVE__FAULT_ALLOC, 0);
    }
    clove_pool_destroy(p);
}

/* ------------------------------------------------------------------------ */
/* clove_sort                                                               */
/* ------------------------------------------------------------------------ */

/* 24-byte elements: the key and the original position (for stability). */
struct rec {
    uint64_t key;
    uint64_t pos;
    uint64_t check; /* mix64(key ^ pos): the element travelled intact */
};

static int rec_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct rec *)a)->key, y = ((const struct rec *)b)->key;
    return (x > y) - (x < y);
}

static int rec_cmp_full(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int u8_cmp(const void *a, const void *b)
{
    return (int)*(const uint8_t *)a - (int)*(const uint8_t *)b;
}

enum sshape { S_RANDOM, S_SORTED, S_REVERSED, S_EQUAL, S_FEW_KEYS, S_ORGAN_PIPE, S_SAWTOOTH, S_NEARLY, S_NSHAPES };
static const char *sshape_name[] = {"random", "sorted", "reversed", "all-equal", "few-keys",
                                   "organ-pipe", "sawtooth", "nearly-sorted"};

static uint64_t key_of(enum sshape sh, size_t i, size_t n, uint64_t seed)
{
    switch (sh) {
    case S_RANDOM: return mix64(seed + i);
    case S_SORTED: return i * 3;
    case S_REVERSED: return (n - i) * 3;
    case S_EQUAL: return 42;
    case S_FEW_KEYS: return mix64(seed + i) % 5;
    case S_ORGAN_PIPE: return i < n / 2 ? i : n - i;
    case S_SAWTOOTH: return i % 1000;
    case S_NEARLY: return mix64(seed + i) % 100 == 0 ? mix64(i) % (n + 1) : i;
    default: return 0;
    }
}

struct sort_run {
    void *base;
    size_t n, size;
    int (*cmp)(const void *, const void *);
    int stable;
    int rc;
};

static void sort_run_fn(clove_task *t, void *arg)
{
    struct sort_run *r = arg;
    r->rc = r->stable ? clove_sort_stable(t, r->base, r->n, r->size, r->cmp)
                      : clove_sort(t, r->base, r->n, r->size, r->cmp);
    ASSERT_EQ_P(t->top, t->base);
}

static void sort_checked(clove_pool *p, enum sshape sh, size_t n, uint64_t seed)
{
    struct rec *a = malloc((n ? n : 1) * sizeof *a), *want = malloc((n ? n : 1) * sizeof *a);
    ASSERT(a && want);
    for (size_t i = 0; i < n; i++) {
        a[i].key = key_of(sh, i, n, seed);
        a[i].pos = i;
        a[i].check = mix64(a[i].key ^ i);
    }
    memcpy(want, a, n * sizeof *a);
    /* Sorting by (key, position) gives the one stable answer. */
    qsort(want, n, sizeof *want, rec_cmp_full);
    struct sort_run r = {a, n, sizeof *a, rec_cmp, (int)(seed & 1), -1};
    ASSERT_OK(clove_pool_run(p, sort_run_fn, &r));
    ASSERT_OK(r.rc);
    for (size_t i = 0; i < n; i++) {
        ASSERT_MSG(a[i].check == mix64(a[i].key ^ a[i].pos), "%s n=%zu: element %zu damaged",
                   sshape_name[sh], n, i);
        ASSERT_MSG(a[i].key == want[i].key && a[i].pos == want[i].pos,
                   "%s n=%zu: at %zu got (%ju, pos %ju), want (%ju, pos %ju)", sshape_name[sh],
                   n, i, (uintmax_t)a[i].key, (uintmax_t)a[i].pos, (uintmax_t)want[i].key,
                   (uintmax_t)want[i].pos);
    }
    free(a);
    free(want);
}

void test_sort_shapes(void)
{
    size_t big = scaled(400000, 20000);
    for (size_t k = 0; k < NDATA_THREADS; k++) {
        clove_pool *p = make_pool(data_threads[k], 1);
        for (int sh = 0; sh < S_NSHAPES; sh++) {
            for (size_t n = 0; n <= 20; n++)
                sort_checked(p, (enum sshape)sh, n, n);
            sort_checked(p, (enum sshape)sh, 255, 1);
            sort_checked(p, (enum sshape)sh, 256, 2);
            sort_checked(p, (enum sshape)sh, 257, 3);
            sort_checked(p, (enum sshape)sh, 4099, 4);
            sort_checked(p, (enum sshape)sh, big, 5 + k);
        }
        clove_pool_destroy(p);
    }
}

void test_sort_sizes(void)
{
    size_t n = scaled(300000, 20000);
    for (size_t k = 0; k < NDATA_THREADS; k++) {
        clove_pool *p = make_pool(data_threads[k], 1);
        /* 8-byte keys: distinct values, compared with the sorted copy. */
        uint64_t *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w);
        ASSERT(v && w);
        for (size_t i = 0; i < n; i++)
            v[i] = mix64(i + 99 * k);
        memcpy(w, v, n * sizeof *v);
        qsort(w, n, sizeof *w, u64_cmp);
        struct sort_run r = {v, n, 8, u64_cmp, 0, -1};
        ASSERT_OK(clove_pool_run(p, sort_run_fn, &r));
        ASSERT_OK(r.rc);
        ASSERT(memcmp(v, w, n * sizeof *v) == 0);
        /* 1-byte elements: a counting check. */
        uint8_t *b = malloc(n);
        ASSERT(b != NULL);
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++)
            count[b[i] = (uint8_t)mix64(i * 7 + k)]++;
        struct sort_run rb = {b, n, 1, u8_cmp, 1, -1};
        ASSERT_OK(clove_pool_run(p, sort_run_fn, &rb));
        ASSERT_OK(rb.rc);
        size_t at = 0;
        for (unsigned x = 0; x < 256; x++)
            for (size_t c = 0; c < count[x]; c++, at++)
                ASSERT_EQ_U(b[at], x);
        free(b);
        free(v);
        free(w);
        clove_pool_destroy(p);
    }
}

static void sort_einval_fn(clove_task *t, void *arg)
{
    (void)arg;
    uint64_t v[4] = {4, 3, 2, 1};
    ASSERT_EQ_I(clove_sort(NULL, v, 4, 8, u64_cmp), EINVAL);
    ASSERT_EQ_I(clove_sort(t, v, 4, 8, NULL), EINVAL);
    ASSERT_EQ_I(clove_sort(t, NULL, 4, 8, u64_cmp), EINVAL);
    ASSERT_EQ_I(clove_sort(t, v, 4, 0, u64_cmp), EINVAL);
    ASSERT_EQ_I(clove_sort_stable(t, v, SIZE_MAX / 4, 8, u64_cmp), EINVAL);
    ASSERT_EQ_U(v[0], 4); /* untouched */
    ASSERT_OK(clove_sort(t, NULL, 0, 8, u64_cmp));
    ASSERT_OK(clove_sort(t, v, 1, 8, u64_cmp));
    ASSERT_OK(clove_sort(t, v, 4, 8, u64_cmp));
    ASSERT_EQ_U(v[0], 1);
    ASSERT_EQ_U(v[3], 4);
    /* No scratch buffer: ENOMEM, and the array is untouched. */
    uint64_t w[300];
    for (int i = 0; i < 300; i++)
        w[i] = (uint64_t)(300 - i);
    clove__fault_arm(CLOVE__FAULT_ALLOC, 1);
    int rc = clove_sort(t, w, 300, 8, u64_cmp);
    clove__fault_arm(CLOVE__FAULT_ALLOC, 0);
    ASSERT_EQ_I(rc, ENOMEM);
    for (int i = 0; i < 300; i++)
        ASSERT_EQ_U(w[i], (uint64_t)(300 - i));
}

void test_sort_errors(void)
{
    clove_pool *p = make_pool(2, 1);
    ASSERT_OK(clove_pool_run(p, sort_einval_fn, NULL));
    clove_pool_destroy(p);
}
