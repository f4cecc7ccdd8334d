/* SPDX-License-Identifier: MIT */
/*
 * test_jobstack.c - the owner's job list (fork/join on one task), join2,
 * and the three fates of a fork: not taken, taken, shared then reclaimed.
 *
 * These tests look at the public layout of clove_task/clove_future (top,
 * bottom, base, the records of the job stack): clove.h puts it there for
 * the inline fast path.
 */
#include "test.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define WATCHDOG_S 20.0

/* ------------------------------------------------------------------------ */
/* Deep fork/join on a task without heartbeats                              */
/* ------------------------------------------------------------------------ */

struct slot_job {
    uint64_t *out;     /* where to write */
    uint64_t value;    /* what to write */
    _Atomic uint32_t *runs;
};

static void slot_job_fn(clove_task *t, void *arg)
{
    (void)t;
    struct slot_job *j = arg;
    *j->out = j->value;
    atomic_fetch_add_explicit(j->runs, 1, memory_order_relaxed);
}

struct deep_ctx {
    size_t depth;
    uint64_t *out;
    _Atomic uint32_t *runs;
    uint64_t seed;
};

static void deep_rec(clove_task *t, struct deep_ctx *c, size_t level)
{
    if (level == c->depth)
        return;
    struct clove__job *before = t->top;
    ASSERT_EQ_P(before, t->base + level);
    struct slot_job j = {&c->out[level], index_value(c->seed, level), &c->runs[level]};
    clove_future f;
    clove_fork(t, &f, slot_job_fn, &j);
    ASSERT_EQ_P(f.job, before);
    ASSERT_EQ_P(t->top, before + 1);
    /* clove_fork's record holds the job and its argument block itself,
     * marked as a clove_fork one. */
    ASSERT(f.job->fn == CLOVE__VOID_JOB);
    ASSERT(f.job->out.vfn == slot_job_fn);
    ASSERT_EQ_P(f.job->arg, &j);
    deep_rec(t, c, level + 1);
    ASSERT_EQ_P(t->top, before + 1);
    ASSERT_EQ_P(t->bottom, t->base); /* no heartbeats: nothing taken */
    bool taken = clove_join(t, &f);
    ASSERT_FALSE(taken); /* one thread: nobody can take it */
    ASSERT_EQ_P(t->top, before);
    slot_job_fn(t, &j);
}

struct deep_arg {
    size_t depth, flat;
    uint64_t seed;
};

static void deep_fn(clove_task *t, void *arg)
{
    struct deep_arg *a = arg;
    ASSERT_EQ_P(t->top, t->base);
    ASSERT_EQ_U(atomic_load(&t->heartbeat), 0);

    /* Recursive: one fork per level. */
    struct deep_ctx c = {a->depth, calloc(a->depth, sizeof(uint64_t)),
                         calloc(a->depth, sizeof(_Atomic uint32_t)), a->seed};
    ASSERT(c.out && c.runs);
    deep_rec(t, &c, 0);
    ASSERT_EQ_P(t->top, t->base);
    for (size_t i = 0; i < a->depth; i++) {
        ASSERT_EQ_U(atomic_load(&c.runs[i]), 1);
        ASSERT_EQ_U(c.out[i], index_value(a->seed, i));
    }
    free(c.out);
    free((void *)c.runs);

    /* Flat: many futures queued at once (in a heap array, which is allowed:
     * they only have to outlive their join), then joined newest first. */
    size_t n = a->flat;
    clove_future *fs = malloc(n * sizeof *fs);
    struct slot_job *js = malloc(n * sizeof *js);
    uint64_t *out = calloc(n, sizeof *out);
    _Atomic uint32_t *runs = calloc(n, sizeof *runs);
    ASSERT(fs && js && out && runs);
    for (size_t i = 0; i < n; i++) {
        js[i] = (struct slot_job){&out[i], index_value(a->seed + 1, i), &runs[i]};
        clove_fork(t, &fs[i], slot_job_fn, &js[i]);
    }
    /* The whole queue, oldest to newest: consecutive records. */
    ASSERT_EQ_P(t->bottom, t->base);
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ_P(fs[i].job, t->base + i);
        ASSERT(fs[i].job->fn == CLOVE__VOID_JOB);
        ASSERT(fs[i].job->out.vfn == slot_job_fn);
        ASSERT_EQ_P(fs[i].job->arg, &js[i]);
    }
    ASSERT_EQ_P(t->top, t->base + n);
    for (size_t i = n; i-- > 0;) {
        ASSERT_EQ_P(t->top, fs[i].job + 1);
        ASSERT_FALSE(clove_join(t, &fs[i]));
        slot_job_fn(t, &js[i]);
    }
    ASSERT_EQ_P(t->top, t->base);
    uint64_t sum = 0, expect = 0;
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ_U(atomic_load(&runs[i]), 1);
        ASSERT_EQ_U(out[i], index_value(a->seed + 1, i));
        sum += out[i] * (i + 1);
        expect += index_value(a->seed + 1, i) * (i + 1);
    }
    ASSERT_EQ_U(sum, expect);
    free(fs);
    free(js);
    free(out);
    free((void *)runs);
}

/* A job stack takes memory only as deep as forks reach: a fresh pool's
 * entry task has next to nothing of its 32 MiB in memory, and N forks
 * outstanding bring in their N records (on Windows, where committed
 * memory counts against the system's commit limit, it is committed as it
 * is touched: port_win.c). */
static int64_t touch_job(clove_task *t, void *arg)
{
    (void)t;
    return (int64_t)(uintptr_t)arg * 3;
}

static void touch_fn(clove_task *t, void *arg)
{
    size_t n = *(size_t *)arg;
    size_t span = (size_t)((char *)t->limit - (char *)t->base);
    size_t before = test_resident(t->base, span);
    test_log("job stack: %zu of %zu bytes in memory before forking\n", before, span);
    ASSERT_LE_U(before, (size_t)256 << 10);
    clove_future *fs = malloc(n * sizeof *fs);
    ASSERT(fs != NULL);
    for (size_t i = 0; i < n; i++)
        clove_fork_value(t, &fs[i], touch_job, (void *)(uintptr_t)i);
    size_t during = test_resident(t->base, span);
    test_log("job stack: %zu bytes in memory with %zu forks outstanding\n", during, n);
    ASSERT_GE_U(during, n * sizeof(struct clove__job));
    ASSERT_LE_U(during, n * sizeof(struct clove__job) + ((size_t)256 << 10));
    uint64_t sum = 0;
    for (size_t i = n; i-- > 0;) {
        int64_t r;
        if (!clove_join_value(t, &fs[i], &r))
            r = touch_job(t, (void *)(uintptr_t)i);
        ASSERT_EQ_I(r, (int64_t)i * 3);
        sum += (uint64_t)r;
    }
    ASSERT_EQ_U(sum, (uint64_t)3 * n * (n - 1) / 2);
    free(fs);
}

void test_jobstack_grows_on_touch(void)
{
    clove_pool *p = make_pool(1, 1);
    size_t n = 120000; /* 3.75 MiB of records */
    ASSERT_OK(clove_pool_run(p, touch_fn, &n));
    clove_pool_destroy(p);
}

/* Memory that a run's end gave back stays readable, as zeros: a worker
 * holding a stale range of shared records loads the state words of
 * records that may lie there (src/share.c, "Claims"), and on Windows,
 * where discarded pages are decommitted, that load must not fault
 * (port_win.c). Read the trimmed records as such a worker would, then
 * fork as deep again: the pages those reads brought back must not stop
 * the stack from growing. */
struct trim_ctx {
    size_t n;
    struct clove__job *base;
};

static void trim_fn(clove_task *t, void *arg)
{
    struct trim_ctx *c = arg;
    c->base = t->base;
    clove_future *fs = malloc(c->n * sizeof *fs);
    ASSERT(fs != NULL);
    for (size_t i = 0; i < c->n; i++)
        clove_fork_value(t, &fs[i], touch_job, (void *)(uintptr_t)i);
    for (size_t i = c->n; i-- > 0;) {
        int64_t r;
        if (!clove_join_value(t, &fs[i], &r))
            r = touch_job(t, (void *)(uintptr_t)i);
        ASSERT_EQ_I(r, (int64_t)i * 3);
    }
    free(fs);
}

void test_jobstack_read_after_trim(void)
{
    clove_pool *p = make_pool(1, 1);
    struct trim_ctx c = {120000, NULL}; /* 3.75 MiB of records */
    for (int round = 0; round < 3; round++) {
        ASSERT_OK(clove_pool_run(p, trim_fn, &c));
        /* The run ended: everything past the first 64 KiB was given
         * back. Look at every record's state word, newest first, as
         * stale claims do. */
        size_t keep = ((size_t)64 << 10) / sizeof(struct clove__job), nonzero = 0;
        for (size_t i = c.n; i-- > keep;) {
            /* fn, which every fork wrote, shows that the page was given
             * back; state is what a claim looks at. */
            const volatile struct clove__job *j = &c.base[i];
            nonzero += j->fn != NULL || j->state != 0;
        }
        test_log("round %d: %zu of %zu given-back records read non-zero\n", round, nonzero,
                 c.n - keep);
        ASSERT_EQ_U(nonzero, 0);
    }
    clove_pool_destroy(p);
}

void test_jobstack_deep_no_heartbeat(void)
{
    clove_pool *p = make_pool(1, 1);
    struct deep_arg a = {scaled(4000, 500), scaled(200000, 1000), 0x5eed};
    for (int round = 0; round < 3; round++) {
        a.seed += 17;
        ASSERT_OK(clove_pool_run(p, deep_fn, &a));
    }
    clove_pool_destroy(p);
}

/* ------------------------------------------------------------------------ */
/* Random LIFO sequences against a model stack                              */
/* ------------------------------------------------------------------------ */

struct lifo_arg {
    size_t ops;
    uint64_t seed;
    bool sharing; /* pool may share: check a suffix invariant only */
    uint64_t taken;
};

/* The records of the model stack's futures are consecutive from the job
 * stack's base. Queued ones are always a suffix (the heartbeat handler
 * takes the oldest first): [bottom, top). The rest, below bottom, are
 * reserved or shared; their state is not read here (a taker may be
 * writing it under the pool lock). */
static void check_list(clove_task *t, clove_future **stack, size_t sp, bool sharing)
{
    ASSERT_EQ_P(t->top, t->base + sp);
    size_t first_queued = (size_t)(t->bottom - t->base);
    ASSERT(first_queued <= sp);
    if (!sharing)
        ASSERT_EQ_U(first_queued, 0);
    for (size_t i = 0; i < sp; i++) {
        ASSERT_EQ_P(stack[i]->job, t->base + i);
        if (i >= first_queued)
            ASSERT(stack[i]->job->fn == CLOVE__VOID_JOB);
    }
}

static void lifo_fn(clove_task *t, void *arg)
{
    struct lifo_arg *a = arg;
    enum { MAXD = 64 };
    clove_future fs[MAXD], *stack[MAXD];
    struct slot_job js[MAXD];
    size_t ids[MAXD];
    size_t n = a->ops;
    uint64_t *out = calloc(n, sizeof *out);
    _Atomic uint32_t *runs = calloc(n, sizeof *runs);
    ASSERT(out && runs);
    test_rng r = {a->seed};
    size_t sp = 0, next_id = 0;
    while (next_id < n || sp > 0) {
        bool push = next_id < n && sp < MAXD && (sp == 0 || rng_below(&r, 100) < 55);
        if (push) {
            size_t id = next_id++;
            js[sp] = (struct slot_job){&out[id], index_value(a->seed, id), &runs[id]};
            ids[sp] = id;
            stack[sp] = &fs[sp];
            clove_fork(t, &fs[sp], slot_job_fn, &js[sp]);
            sp++;
        } else {
            sp--;
            if (clove_join(t, &fs[sp]))
                a->taken++;
            else
                slot_job_fn(t, &js[sp]);
            ASSERT_EQ_U(atomic_load(&runs[ids[sp]]), 1);
            if (rng_below(&r, 4) == 0)
                sched_yield(); /* let heartbeats arrive mid-sequence */
        }
        check_list(t, stack, sp, a->sharing);
    }
    ASSERT_EQ_P(t->top, t->base);
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ_U(atomic_load(&runs[i]), 1);
        ASSERT_EQ_U(out[i], index_value(a->seed, i));
    }
    free(out);
    free((void *)runs);
}

void test_jobstack_lifo_sequences(void)
{
    static const unsigned threads[] = {1, 2, 4};
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        struct lifo_arg a = {scaled(100000, 2000), 1000 + k, threads[k] > 1, 0};
        for (int round = 0; round < 4; round++) {
            a.seed = a.seed * 31 + (uint64_t)round;
            ASSERT_OK(clove_pool_run(p, lifo_fn, &a));
        }
        if (threads[k] == 1)
            ASSERT_EQ_U(a.taken, 0);
        test_log("lifo threads=%u taken=%" PRIu64 "\n", threads[k], a.taken);
        clove_pool_destroy(p);
    }
}

/* ------------------------------------------------------------------------ */
/* Many queued forks on a sharing pool                                      */
/* ------------------------------------------------------------------------ */

struct many_arg {
    size_t n;
    uint64_t seed;
    uint64_t taken;
};

static void spin_work(uint64_t *sink, unsigned n)
{
    uint64_t x = *sink;
    for (unsigned i = 0; i < n; i++)
        x = mix64(x + i);
    *sink = x;
}

static void many_fn(clove_task *t, void *arg)
{
    struct many_arg *a = arg;
    size_t n = a->n;
    clove_future *fs = malloc(n * sizeof *fs);
    struct slot_job *js = malloc(n * sizeof *js);
    uint64_t *out = calloc(n, sizeof *out);
    _Atomic uint32_t *runs = calloc(n, sizeof *runs);
    ASSERT(fs && js && out && runs);
    uint64_t sink = 1;
    for (size_t i = 0; i < n; i++) {
        js[i] = (struct slot_job){&out[i], index_value(a->seed, i), &runs[i]};
        clove_fork(t, &fs[i], slot_job_fn, &js[i]);
        spin_work(&sink, 20);
    }
    for (size_t i = n; i-- > 0;) {
        if (clove_join(t, &fs[i]))
            a->taken++;
        else
            slot_job_fn(t, &js[i]);
    }
    ASSERT_EQ_P(t->top, t->base);
    ASSERT_NE_U(sink, 0);
    uint64_t s1 = 0, s2 = 0, e1 = 0, e2 = 0;
    for (size_t i = 0; i < n; i++) {
        ASSERT_MSG(atomic_load(&runs[i]) == 1, "job %zu ran %u times", i,
                   atomic_load(&runs[i]));
        s1 += out[i];
        s2 += index_hash(out[i], i);
        e1 += index_value(a->seed, i);
        e2 += index_hash(index_value(a->seed, i), i);
    }
    ASSERT_EQ_U(s1, e1);
    ASSERT_EQ_U(s2, e2);
    free(fs);
    free(js);
    free(out);
    free((void *)runs);
}

void test_jobstack_many_forks_sharing(void)
{
    static const unsigned threads[] = {2, 3, 8};
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        struct many_arg a = {scaled(100000, 2000), 77 + k, 0};
        for (int round = 0; round < 3; round++) {
            a.seed += 1000;
            ASSERT_OK(clove_pool_run(p, many_fn, &a));
        }
        test_log("many threads=%u taken=%" PRIu64 "\n", threads[k], a.taken);
        clove_pool_destroy(p);
    }
}

/* ------------------------------------------------------------------------ */
/* clove_join2                                                              */
/* ------------------------------------------------------------------------ */

struct j2_ctx {
    uint64_t seed;
    _Atomic uint32_t *hits;
};

struct j2_arg {
    const struct j2_ctx *c;
    size_t lo, hi;
    struct sums s;
};

static void j2_fn(clove_task *t, void *arg)
{
    struct j2_arg *a = arg;
    a->s.sum = a->s.hash = 0;
    if (a->hi - a->lo == 1) {
        atomic_fetch_add_explicit(&a->c->hits[a->lo], 1, memory_order_relaxed);
        uint64_t v = index_value(a->c->seed, a->lo);
        a->s.sum = v;
        a->s.hash = index_hash(v, a->lo);
        return;
    }
    /* Uneven split, so the two halves differ. */
    size_t mid = a->lo + (a->hi - a->lo) / 3;
    if (mid == a->lo)
        mid++;
    struct j2_arg l = {a->c, a->lo, mid, {0, 0}}, r = {a->c, mid, a->hi, {0, 0}};
    clove_join2(t, j2_fn, &l, j2_fn, &r);
    a->s = l.s;
    sums_add(&a->s, r.s);
}

void test_join2_basic(void)
{
    static const unsigned threads[] = {1, 2, 3, 8};
    size_t n = scaled(300000, 1000);
    _Atomic uint32_t *hits = calloc(n, sizeof *hits);
    ASSERT(hits);
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        for (int round = 0; round < 3; round++) {
            struct j2_ctx c = {0xabc + k * 10 + (uint64_t)round, hits};
            struct j2_arg a = {&c, 0, n, {0, 0}};
            ASSERT_OK(clove_pool_run(p, j2_fn, &a));
            struct sums e = {0, 0};
            for (size_t i = 0; i < n; i++) {
                ASSERT_MSG(atomic_load(&hits[i]) == 1, "index %zu hit %u times", i,
                           atomic_load(&hits[i]));
                atomic_store(&hits[i], 0);
                uint64_t v = index_value(c.seed, i);
                e.sum += v;
                e.hash += index_hash(v, i);
            }
            ASSERT_EQ_U(a.s.sum, e.sum);
            ASSERT_EQ_U(a.s.hash, e.hash);
        }
        clove_pool_destroy(p);
    }
    free((void *)hits);
}

/* ------------------------------------------------------------------------ */
/* Not taken                                                                */
/* ------------------------------------------------------------------------ */

struct flag_job {
    _Atomic uint32_t ran;
    clove_task *ran_on;
    uint64_t value;
};

static void flag_job_fn(clove_task *t, void *arg)
{
    struct flag_job *j = arg;
    j->ran_on = t;
    j->value = mix64((uint64_t)(uintptr_t)j);
    atomic_fetch_add_explicit(&j->ran, 1, memory_order_relaxed);
}

static void not_taken_fn(clove_task *t, void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        struct flag_job j = {0, NULL, 0};
        clove_future f;
        clove_fork(t, &f, flag_job_fn, &j);
        /* Ticks and a pause: a one-thread pool has no heartbeat thread. */
        for (int k = 0; k < 100; k++)
            clove_tick(t);
        if (i % 10 == 0)
            sleep_us(2000);
        ASSERT_EQ_U(atomic_load(&t->heartbeat), 0);
        ASSERT_EQ_P(t->top, f.job + 1);
        ASSERT_EQ_U(atomic_load(&j.ran), 0);
        ASSERT_FALSE(clove_join(t, &f));
        ASSERT_EQ_P(t->top, t->base);
        ASSERT_EQ_U(atomic_load(&j.ran), 0); /* the join never runs it */
        flag_job_fn(t, &j);
        ASSERT_EQ_U(atomic_load(&j.ran), 1);
        ASSERT_EQ_P(j.ran_on, t);
    }
}

void test_fork_not_taken(void)
{
    clove_pool *p = make_pool(1, 1);
    ASSERT_OK(clove_pool_run(p, not_taken_fn, NULL));
    clove_pool_destroy(p);
}

/* ------------------------------------------------------------------------ */
/* Taken, deterministically                                                 */
/* ------------------------------------------------------------------------ */

#define TAKEN_WORDS 1024

struct taken_job {
    const uint64_t *input; /* written by the forker before clove_fork */
    uint64_t input_sum;    /* what the job saw */
    uint64_t *output;      /* written by the job, read after the join */
    uint64_t seed;
    clove_task *ran_on;
    clove_pool *ran_pool;
    bool hold;                /* wait for go after starting */
    _Atomic uint32_t started; /* relaxed: carries no data */
    _Atomic uint32_t go;
    _Atomic uint32_t runs;
};

static void taken_job_fn(clove_task *t, void *arg)
{
    struct taken_job *j = arg;
    atomic_fetch_add_explicit(&j->runs, 1, memory_order_relaxed);
    j->ran_on = t;
    j->ran_pool = t->pool;
    uint64_t s = 0;
    for (size_t i = 0; i < TAKEN_WORDS; i++)
        s += j->input[i] * (i + 1);
    j->input_sum = s;
    atomic_store_explicit(&j->started, 1, memory_order_relaxed);
    if (j->hold) {
        double end = now_s() + WATCHDOG_S;
        while (!atomic_load_explicit(&j->go, memory_order_relaxed)) {
            ASSERT_MSG(now_s() < end, "watchdog: go never came");
            sched_yield();
        }
        sleep_us(1000); /* the owner is very likely inside clove_join now */
    }
    for (size_t i = 0; i < TAKEN_WORDS; i++)
        j->output[i] = index_value(j->seed, i);
}

struct taken_arg {
    unsigned rounds;
    uint64_t seed;
};

/* Spin on clove_tick until the job has started; the owner cannot run it
 * itself before its join, so it can only have been taken by another worker.
 * A watchdog turns "never taken" into a failure instead of a hang. */
static void tick_until_started(clove_task *t, struct taken_job *j)
{
    double end = now_s() + WATCHDOG_S;
    unsigned spins = 0;
    while (!atomic_load_explicit(&j->started, memory_order_relaxed)) {
        ASSERT_MSG(now_s() < end, "watchdog: the forked job was never taken "
                                  "by another worker within %.0f s", WATCHDOG_S);
        clove_tick(t);
        if (++spins % 16 == 0)
            sleep_us(5);
        else
            sched_yield();
    }
}

static void taken_fn(clove_task *t, void *arg)
{
    struct taken_arg *a = arg;
    uint64_t *input = malloc(TAKEN_WORDS * sizeof *input);
    uint64_t *output = malloc(TAKEN_WORDS * sizeof *output);
    ASSERT(input && output);
    for (unsigned round = 0; round < a->rounds; round++) {
        uint64_t seed = a->seed + round;
        uint64_t expect_in = 0;
        for (size_t i = 0; i < TAKEN_WORDS; i++) {
            input[i] = index_value(~seed, i);
            expect_in += input[i] * (i + 1);
            output[i] = 0;
        }
        struct taken_job j = {input, 0, output, seed, NULL, NULL, round % 2 == 1,
                              0, 0, 0};
        clove_future f;
        clove_fork(t, &f, taken_job_fn, &j);
        tick_until_started(t, &j);
        ASSERT_EQ_P(t->bottom, t->top); /* it left the owner's queue: shared */
        ASSERT_EQ_P(t->top, f.job + 1);
        if (j.hold)
            atomic_store_explicit(&j.go, 1, memory_order_relaxed);
        bool taken = clove_join(t, &f);
        ASSERT_TRUE(taken);
        ASSERT_EQ_P(t->top, t->base);
        ASSERT_EQ_U(atomic_load(&j.runs), 1);
        ASSERT_NE_P(j.ran_on, NULL);
        ASSERT_NE_P(j.ran_on, t);
        ASSERT_EQ_P(j.ran_pool, t->pool);
        ASSERT_EQ_U(j.input_sum, expect_in);
        for (size_t i = 0; i < TAKEN_WORDS; i++)
            ASSERT_EQ_U(output[i], index_value(seed, i));
    }
    free(input);
    free(output);
}

void test_fork_taken(void)
{
    static const unsigned threads[] = {2, 4};
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        struct taken_arg a = {(unsigned)scaled(100, 10), 0x7a4e + k};
        ASSERT_OK(clove_pool_run(p, taken_fn, &a));
        /* Again after the pool went quiet (heartbeat thread asleep). */
        sleep_us(50000);
        ASSERT_OK(clove_pool_run(p, taken_fn, &a));
        clove_pool_destroy(p);
    }
    /* Default heartbeat too. */
    clove_pool *p = make_pool(2, 0);
    struct taken_arg a = {4, 0x1234};
    ASSERT_OK(clove_pool_run(p, taken_fn, &a));
    clove_pool_destroy(p);
}

/* ------------------------------------------------------------------------ */
/* Shared, then joined at once: taken or reclaimed, both must be right      */
/* ------------------------------------------------------------------------ */

struct shared_arg {
    unsigned rounds;
    unsigned reclaimed, taken;
};

static void shared_fn(clove_task *t, void *arg)
{
    struct shared_arg *a = arg;
    for (unsigned round = 0; round < a->rounds; round++) {
        struct flag_job j = {0, NULL, 0};
        clove_future f;
        clove_fork(t, &f, flag_job_fn, &j);
        double end = now_s() + WATCHDOG_S;
        while (f.job >= t->bottom) { /* queued */
            ASSERT_MSG(now_s() < end, "watchdog: never shared");
            clove_tick(t);
        }
        if (clove_join(t, &f)) {
            a->taken++;
            ASSERT_NE_P(j.ran_on, t);
        } else {
            a->reclaimed++;
            ASSERT_EQ_U(atomic_load(&j.ran), 0);
            flag_job_fn(t, &j);
            ASSERT_EQ_P(j.ran_on, t);
        }
        ASSERT_EQ_U(atomic_load(&j.ran), 1);
        ASSERT_EQ_U(j.value, mix64((uint64_t)(uintptr_t)&j));
        ASSERT_EQ_P(t->top, t->base);
    }
}

void test_fork_shared_then_joined(void)
{
    static const unsigned threads[] = {2, 3};
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        struct shared_arg a = {(unsigned)scaled(2000, 100), 0, 0};
        ASSERT_OK(clove_pool_run(p, shared_fn, &a));
        test_log("shared threads=%u: reclaimed %u, taken %u\n", threads[k],
                 a.reclaimed, a.taken);
        clove_pool_destroy(p);
    }
}

/* ------------------------------------------------------------------------ */
/* clove_fork_value / clove_join_value                                      */
/* ------------------------------------------------------------------------ */

struct vjob {
    uint64_t seed;
    clove_task *forker;
    clove_task *ran_on;
    bool wait_started;        /* the job spins until started is seen */
    _Atomic uint32_t started; /* relaxed: carries no data */
    _Atomic uint32_t runs;
};

/* Returns a value that depends on the job (mix64 of its seed), so that a
 * wrong record's value, or a stale one, is caught. */
static int64_t vjob_fn(clove_task *t, void *arg)
{
    struct vjob *j = arg;
    atomic_fetch_add_explicit(&j->runs, 1, memory_order_relaxed);
    j->ran_on = t;
    atomic_store_explicit(&j->started, 1, memory_order_relaxed);
    return (int64_t)mix64(j->seed);
}

/* Deep recursion on one thread: the records are consecutive, the future
 * names its record, the join pops it and leaves *result alone. */
static uint64_t value_rec(clove_task *t, uint64_t seed, size_t level, size_t depth)
{
    if (level == depth)
        return 0;
    struct clove__job *before = t->top;
    ASSERT_EQ_P(before, t->base + level);
    struct vjob j = {seed + level, t, NULL, false, 0, 0};
    clove_future f;
    clove_fork_value(t, &f, vjob_fn, &j);
    ASSERT_EQ_P(f.job, before);
    ASSERT_EQ_P(t->top, before + 1);
    ASSERT(f.job->fn == vjob_fn);
    ASSERT_EQ_P(f.job->arg, &j);
    uint64_t below = value_rec(t, seed, level + 1, depth);
    int64_t r = 0x5a5a;
    ASSERT_FALSE(clove_join_value(t, &f, &r));
    ASSERT_EQ_U((uint64_t)r, 0x5a5a); /* untouched when not taken */
    ASSERT_EQ_P(t->top, before);
    ASSERT_EQ_U(atomic_load(&j.runs), 0);
    r = vjob_fn(t, &j);
    return below + (uint64_t)r;
}

static void value_not_taken_fn(clove_task *t, void *arg)
{
    size_t depth = *(size_t *)arg;
    uint64_t expect = 0;
    for (size_t i = 0; i < depth; i++)
        expect += mix64(0xfeed + i);
    ASSERT_EQ_U(value_rec(t, 0xfeed, 0, depth), expect);
    ASSERT_EQ_P(t->top, t->base);
}

void test_value_not_taken(void)
{
    clove_pool *p = make_pool(1, 1);
    size_t depth = scaled(20000, 1000);
    ASSERT_OK(clove_pool_run(p, value_not_taken_fn, &depth));
    clove_pool_destroy(p);
}

/* Taken by another worker: the join returns true and the job's return
 * value, exactly, round after round (each round a different value). The
 * forks alternate between the top level (the reserve, stolen by the
 * heartbeat thread or shared by the owner's handler) and under a queued
 * fork of its own (shared from the queue). */
static void value_taken_fn(clove_task *t, void *arg)
{
    unsigned rounds = *(unsigned *)arg;
    for (unsigned round = 0; round < rounds; round++) {
        struct vjob outer = {0x0be7 + round, t, NULL, false, 0, 0};
        clove_future fo = {NULL, 0}; /* forked only when nested */
        bool nested = round % 2 == 1;
        if (nested)
            clove_fork_value(t, &fo, vjob_fn, &outer);
        struct vjob j = {0xabcd00 + round, t, NULL, false, 0, 0};
        clove_future f;
        clove_fork_value(t, &f, vjob_fn, &j);
        double end = now_s() + WATCHDOG_S;
        while (!atomic_load_explicit(&j.started, memory_order_relaxed) &&
               !(nested && atomic_load_explicit(&outer.started, memory_order_relaxed))) {
            ASSERT_MSG(now_s() < end, "watchdog: no forked job was taken");
            clove_tick(t);
            sched_yield();
        }
        int64_t r = 0x5a5a;
        if (clove_join_value(t, &f, &r)) {
            ASSERT_NE_P(j.ran_on, t);
            ASSERT_EQ_U((uint64_t)r, mix64(j.seed));
        } else {
            ASSERT_EQ_U((uint64_t)r, 0x5a5a);
            r = vjob_fn(t, &j);
        }
        ASSERT_EQ_U(atomic_load(&j.runs), 1);
        if (nested) {
            int64_t ro = 0x5a5a;
            if (clove_join_value(t, &fo, &ro)) {
                ASSERT_NE_P(outer.ran_on, t);
                ASSERT_EQ_U((uint64_t)ro, mix64(outer.seed));
            } else {
                ASSERT_EQ_U((uint64_t)ro, 0x5a5a);
                (void)vjob_fn(t, &outer);
            }
            ASSERT_EQ_U(atomic_load(&outer.runs), 1);
        }
        ASSERT_EQ_P(t->top, t->base);
        ASSERT_EQ_P(t->bottom, t->base);
    }
}

void test_value_taken(void)
{
    static const unsigned threads[] = {2, 4};
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        unsigned rounds = (unsigned)scaled(400, 40);
        ASSERT_OK(clove_pool_run(p, value_taken_fn, &rounds));
        clove_stats st;
        ASSERT_OK(clove_pool_stats(p, &st, NULL, 0));
        test_log("value_taken threads=%u: ran %" PRIu64 " shared jobs, reclaimed %" PRIu64
                 "\n", threads[k], st.ran, st.reclaimed);
        ASSERT(st.ran > 0);
        clove_pool_destroy(p);
    }
}

/* Both forms mixed in one task, nested: each join pops its own record. */
static int64_t mixed_value_fn(clove_task *t, void *arg)
{
    (void)t;
    return (int64_t)mix64((uint64_t)(uintptr_t)arg);
}

static void mixed_fn(clove_task *t, void *arg)
{
    (void)arg;
    for (unsigned round = 0; round < 200; round++) {
        struct slot_job sj;
        uint64_t out = 0;
        _Atomic uint32_t runs = 0;
        sj = (struct slot_job){&out, index_value(round, 7), &runs};
        clove_future a, b, c;
        clove_fork(t, &a, slot_job_fn, &sj);
        clove_fork_value(t, &b, mixed_value_fn, (void *)(uintptr_t)(round + 1));
        clove_fork_value(t, &c, mixed_value_fn, (void *)(uintptr_t)(round + 1000));
        int64_t rc = 0, rb = 0;
        if (!clove_join_value(t, &c, &rc))
            rc = mixed_value_fn(t, (void *)(uintptr_t)(round + 1000));
        if (!clove_join_value(t, &b, &rb))
            rb = mixed_value_fn(t, (void *)(uintptr_t)(round + 1));
        if (!clove_join(t, &a))
            slot_job_fn(t, &sj);
        ASSERT_EQ_U((uint64_t)rc, mix64(round + 1000));
        ASSERT_EQ_U((uint64_t)rb, mix64(round + 1));
        ASSERT_EQ_U(out, index_value(round, 7));
        ASSERT_EQ_U(atomic_load(&runs), 1);
        ASSERT_EQ_P(t->top, t->base);
    }
}

void test_value_mixed_forms(void)
{
    static const unsigned threads[] = {1, 3};
    for (size_t k = 0; k < 2; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        ASSERT_OK(clove_pool_run(p, mixed_fn, NULL));
        clove_pool_destroy(p);
    }
}

/* A pool whose stack_size asks for more than CLOVE_JOB_STACK_DEPTH records
 * gets job stacks that deep: more unjoined forks than the default depth
 * (flat, from one frame: a heap array of futures) all fit. */
static void beyond_default_depth_fn(clove_task *t, void *arg)
{
    size_t n = *(size_t *)arg;
    ASSERT_GE_U((uint64_t)(t->limit - t->base), n);
    clove_future *fs = malloc(n * sizeof *fs);
    ASSERT(fs != NULL);
    for (size_t i = 0; i < n; i++)
        clove_fork_value(t, &fs[i], mixed_value_fn, (void *)(uintptr_t)i);
    ASSERT_EQ_P(t->top, t->base + n);
    uint64_t sum = 0, expect = 0;
    for (size_t i = n; i-- > 0;) {
        int64_t r;
        if (!clove_join_value(t, &fs[i], &r))
            r = mixed_value_fn(t, (void *)(uintptr_t)i);
        sum += (uint64_t)r;
        expect += mix64(i);
    }
    ASSERT_EQ_U(sum, expect);
    ASSERT_EQ_P(t->top, t->base);
    free(fs);
}

void test_jobstack_depth_from_stack_size(void)
{
    clove_config cfg = {.threads = 1, .stack_size = 2 * CLOVE_JOB_STACK_DEPTH * 32};
    clove_pool *p = NULL;
    ASSERT_OK(clove_pool_create(&p, &cfg));
    size_t n = CLOVE_JOB_STACK_DEPTH + CLOVE_JOB_STACK_DEPTH / 2;
    ASSERT_OK(clove_pool_run(p, beyond_default_depth_fn, &n));
    clove_pool_destroy(p);
}
