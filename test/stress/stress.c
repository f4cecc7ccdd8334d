/* SPDX-License-Identifier: MIT */
/*
 * stress.c - clove_stress: a seed-driven randomized stress harness.
 *
 * Each program is a random fork/join computation generated from a 64-bit
 * program seed: a tree of nodes, each of which is a leaf (some work), a set
 * of clove_fork/clove_join pairs nested like parentheses (several forks
 * outstanding, joined in LIFO order), a clove_join2, a sequence of forks
 * reusing one future, a clove_for over a random range whose body may fork,
 * a nested clove_pool_run on the same pool or on another one, a short-lived
 * pool created inside a task, or a few pthreads entering clove_pool_run on
 * one pool at once, or a search that cancels itself (clove_for_cancel,
 * clove_scope_run_cancel). The shape is a pure function of the seed: a node's kind,
 * children, work and range all come from mix64 of its own seed, never from
 * what ran first, so the same program can be evaluated twice.
 *
 * Every program is evaluated sequentially (plain calls, no clove) and then
 * on the pools, and the two checksums must be equal. A node's result is
 * h(id, child results in a fixed order) with h not commutative, every job
 * counts its own executions (exactly one required), and every index of a
 * clove_for marks a counter that must end at exactly 1 and stores its
 * result in its own slot, so lost, duplicated and misplaced work all show.
 *
 * Program p of a run has seed mix64(master ^ mix64(p + 1)); on a failure
 * the harness prints the command that replays that one program.
 *
 *   clove_stress --seconds 10
 *   clove_stress --replay SEED --threads 8 --heartbeat-us 1 [--repeat 100]
 *   clove_stress --soak
 *   clove_stress --help
 */
#include <clove.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__GNUC__) || defined(__clang__)
#if defined(__MINGW32__)
#define SX_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#else
#define SX_PRINTF(f, a) __attribute__((format(printf, f, a)))
#endif
#define SX_NORETURN __attribute__((noreturn))
#else
#define SX_PRINTF(f, a)
#define SX_NORETURN
#endif

/* ------------------------------------------------------------------------ */
/* Random numbers and hashing                                               */
/* ------------------------------------------------------------------------ */

#include "../mix64.h"

static inline uint64_t rotl64(uint64_t x, unsigned r)
{
    return (x << r) | (x >> (64 - r));
}

/* Order-sensitive combination: combine(a, b) != combine(b, a) in general. */
static inline uint64_t combine(uint64_t acc, uint64_t v)
{
    return mix64(rotl64(acc, 23) ^ (v * 0xd6e8feb86659fd93ull) ^ 0x2545f4914f6cdd1dull);
}

/* The seed of child i of a node. */
static inline uint64_t child_seed(uint64_t seed, uint64_t i)
{
    return mix64(seed ^ ((i + 1) * 0x9e3779b97f4a7c15ull));
}

/* A stream of random numbers drawn from one node's seed (splitmix64). */
struct rng {
    uint64_t s;
};
static inline uint64_t rng_next(struct rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return mix64(r->s);
}
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
    return n ? rng_next(r) % n : 0;
}

/* ------------------------------------------------------------------------ */
/* Time                                                                     */
/* ------------------------------------------------------------------------ */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double now_s(void)
{
    return (double)now_ns() * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* Programs                                                                 */
/* ------------------------------------------------------------------------ */

#define NAUX 3          /* auxiliary pools alive next to the main pool */
#define NPOOLS (1 + NAUX)
#define POOL_TEMP 255   /* pool index of a pool created inside a task */
#define MAX_DEPTH 160   /* deeper nodes become leaves */
#define MAX_PLEVEL 3    /* nested clove_pool_run of other pools per path */
#define MAX_FORKS 6     /* outstanding forks in one node */
#define MAX_EXT 4       /* pthreads of one external-threads node */
#define SMALL_FOR 32    /* clove_for ranges up to this size use stack arrays */

/* What the sequential evaluation counts (the parallel one counts nothing:
 * the program is the same, so are the counts). */
struct counts {
    uint64_t nodes;
    uint64_t forks;       /* clove_fork + clove_join pairs */
    uint64_t join2;       /* clove_join2 calls */
    uint64_t fors;        /* clove_for calls */
    uint64_t for_indices; /* indices covered by them */
    uint64_t runs;        /* nested clove_pool_run calls (same or other pool) */
    uint64_t ext_threads; /* pthreads entering clove_pool_run */
    uint64_t temp_pools;  /* pools created inside a task */
    uint64_t scopes;      /* clove_scope_run calls */
    uint64_t spawns;      /* clove_spawn calls */
    uint64_t reduces;     /* clove_reduce calls */
    uint64_t cancels;     /* cancelled searches (clove_for_cancel, clove_scope_run_cancel) */
};

struct prog {
    uint64_t seed;
    bool ref;      /* sequential reference evaluation */
    unsigned shape; /* how budgets are split: 0 random, 1 balanced, 2 skewed */
    clove_pool *pools[NPOOLS];
    unsigned hb_alt; /* heartbeat of temporary pools */
    uint32_t root_budget;
    struct counts c; /* ref only */
    _Atomic uint32_t errors;
    _Atomic uint32_t msg_taken;
    char msg[512];
};

/* The pool a piece of the program runs on. */
struct ctx {
    struct prog *p;
    clove_pool *pool; /* NULL in the reference evaluation */
    unsigned pidx;    /* 0 main, 1..NAUX aux, POOL_TEMP */
};

struct node {
    uint64_t seed;   /* also the node's id */
    uint32_t budget; /* about how many nodes the subtree may have */
    uint16_t depth;
    uint8_t plevel;  /* nested clove_pool_run of other pools above it */
};

SX_PRINTF(2, 3) static void prog_error(struct prog *p, const char *fmt, ...)
{
    atomic_fetch_add(&p->errors, 1);
    if (atomic_exchange(&p->msg_taken, 1) != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
}

static uint64_t eval(clove_task *t, struct ctx *cx, struct node n);

/* --inject: deliberate harness faults in the parallel evaluation, to check
 * that the checks catch them (1 lost job, 2 duplicated job, 3 swapped
 * results, 4 lost clove_for index). Off (0) normally. */
static int inject;

/* --mix dense: most nodes with a budget of 32 or more become K_DENSE (the
 * cheapest checked fork/join), for a high fork/join rate; per mille. */
static unsigned dense_permille;
static uint32_t max_budget_opt = 262144; /* --max-budget */
static inline bool inject_at(clove_task *t, int kind, uint64_t seed)
{
    return inject == kind && t != NULL && (mix64(seed ^ 0x1234) & 15) == 0;
}

/* A node evaluated as a job. ran counts executions: exactly one expected.
 * It is a plain int on purpose: a duplicate running concurrently is a data
 * race that ThreadSanitizer reports. */
struct job {
    struct ctx *cx;
    struct node n;
    uint64_t result;
    unsigned ran;
};

static void job_fn(clove_task *t, void *arg)
{
    struct job *j = arg;
    j->ran++;
    j->result = eval(t, j->cx, j->n);
}

/* The same job for clove_fork_value: it also returns its result, which
 * the join checks against the one it wrote (the record's value slot must
 * carry exactly that). */
static int64_t job_value_fn(clove_task *t, void *arg)
{
    job_fn(t, arg);
    return (int64_t)((struct job *)arg)->result;
}

static void job_init(struct job *j, struct ctx *cx, uint64_t seed, uint32_t budget,
                     const struct node *parent)
{
    j->cx = cx;
    j->n.seed = seed;
    j->n.budget = budget;
    j->n.depth = (uint16_t)(parent->depth + 1);
    j->n.plevel = parent->plevel;
    j->result = 0;
    j->ran = 0;
}

static uint64_t job_result(struct prog *p, const struct job *j, const char *what)
{
    if (j->ran != 1)
        prog_error(p, "%s: job of node %016" PRIx64 " ran %u times", what, j->n.seed, j->ran);
    return j->result;
}

/* Split rest among k children. */
static void split(const struct prog *p, struct rng *r, uint32_t rest, unsigned k, uint32_t *out)
{
    if (k == 0)
        return;
    unsigned shape = p->shape == 0 ? (unsigned)rng_below(r, 3) : p->shape;
    for (unsigned i = 0; i + 1 < k; i++) {
        uint32_t b;
        switch (shape) {
        case 1: b = rest / (k - i); break;
        case 2: b = rng_below(r, 4) == 0 ? rest : (uint32_t)rng_below(r, 3); break;
        default: b = (uint32_t)rng_below(r, (uint64_t)rest + 1); break;
        }
        if (b > rest)
            b = rest;
        out[i] = b;
        rest -= b;
    }
    out[k - 1] = rest;
    /* Shuffle so that the big child is not always the first. */
    for (unsigned i = k; i > 1; i--) {
        unsigned j = (unsigned)rng_below(r, i);
        uint32_t x = out[i - 1];
        out[i - 1] = out[j];
        out[j] = x;
    }
}

/* Work of a node: 0 to a few thousand dependent mixes, from its seed. */
static uint64_t node_work(uint64_t seed)
{
    uint64_t h = mix64(seed ^ 0x5bd1e9955bd1e995ull);
    unsigned sel = (unsigned)(h & 1023);
    unsigned iters;
    if (sel < 870)
        iters = 0;
    else if (sel < 994)
        iters = 1 + (unsigned)((h >> 10) & 15);
    else if (sel < 1019)
        iters = 16 + (unsigned)((h >> 10) & 255);
    else
        iters = 256 + (unsigned)((h >> 10) & 4095);
    uint64_t x = h;
    for (unsigned i = 0; i < iters; i++)
        x = mix64(x + i);
    return x;
}

enum kind {
    K_LEAF,
    K_FORKS,      /* up to MAX_FORKS fork/join pairs nested like parentheses */
    K_REUSE,      /* several fork/join pairs in sequence on one future */
    K_JOIN2,
    K_FOR,
    K_RUN_SAME,   /* nested clove_pool_run on the current pool */
    K_RUN_OTHER,  /* nested clove_pool_run on another live pool */
    K_TEMP_POOL,  /* create a pool in the task, run in it, destroy it */
    K_EXT,        /* pthreads entering clove_pool_run on one pool at once */
    K_DENSE,      /* a plain binary fork/join recursion over budget leaves */
    K_SCOPE,      /* clove_scope_run with spawns, some spawning in turn */
    K_REDUCE,     /* clove_reduce with an associative, non-commutative combine */
    K_LONG,       /* a long leaf: spins 20-400 us without a fork or tick, so
                   * that the forks queued before it can only be shared by
                   * the heartbeat thread taking the reserve (src/share.c) */
    K_CANCEL,     /* a search that cancels itself: clove_for_cancel or
                   * clove_scope_run_cancel, one index or job requesting
                   * the token; children as in K_FOR and K_SCOPE */
};

static enum kind node_kind(const struct prog *p, const struct node *n, struct rng *r)
{
    if (n->budget <= 1 || n->depth >= MAX_DEPTH)
        return K_LEAF;
    /* Rare kinds that start threads: only in the few nodes near the root
     * that hold at least an eighth of the program, so that a large program
     * starts a few dozen threads at most. */
    unsigned y = (unsigned)rng_below(r, 1000);
    if (n->depth <= 3 && n->budget >= 4 && n->budget >= p->root_budget / 8) {
        if (n->budget >= 8 && y < (n->depth == 0 ? 100u : 30u))
            return K_EXT;
        if (y >= 990)
            return K_TEMP_POOL;
    }
    if (dense_permille && n->budget >= 32 && rng_below(r, 1000) < dense_permille)
        return K_DENSE;
    unsigned x = (unsigned)rng_below(r, 1000);
    if (x >= 997)
        return K_LONG;
    if (x < 20) /* entering another pool costs wake-ups: where there is work */
        return n->plevel < MAX_PLEVEL && n->budget >= 16 ? K_RUN_OTHER : K_RUN_SAME;
    if (x < 50)
        return K_RUN_SAME;
    if (x < 90)
        return K_REUSE;
    if (x < 120) {
        unsigned w = (unsigned)rng_below(r, 3);
        return w == 0 ? K_SCOPE : w == 1 ? K_REDUCE : K_CANCEL;
    }
    if (x < 240)
        return n->budget >= 32 ? K_DENSE : K_JOIN2;
    if (x < 440)
        return K_FOR;
    if (x < 700)
        return K_JOIN2;
    return K_FORKS;
}

/* ---- K_FORKS ---- */
static uint64_t eval_forks(clove_task *t, struct ctx *cx, const struct node *n, struct rng *r,
                           uint64_t acc)
{
    struct prog *p = cx->p;
    unsigned k = 1 + (unsigned)rng_below(r, MAX_FORKS);
    uint32_t budgets[MAX_FORKS + 1];
    split(p, r, n->budget - 1, k + 1, budgets); /* k jobs + work done inline */
    clove_future f[MAX_FORKS];
    struct job j[MAX_FORKS];
    bool value[MAX_FORKS]; /* forked with clove_fork_value */
    unsigned stack[MAX_FORKS], sp = 0, next = 0;
    uint64_t inline_acc = 0;
    unsigned inline_parts = 0;
    /* A random balanced sequence of forks and joins. */
    while (next < k || sp > 0) {
        bool fork = next < k && (sp == 0 || rng_below(r, 3) != 0);
        if (fork) {
            unsigned i = next++;
            job_init(&j[i], cx, child_seed(n->seed, i), budgets[i], n);
            value[i] = (mix64(j[i].n.seed ^ 0x7a1) & 1) != 0;
            if (t && value[i])
                clove_fork_value(t, &f[i], job_value_fn, &j[i]);
            else if (t)
                clove_fork(t, &f[i], job_fn, &j[i]);
            else
                p->c.forks++;
            stack[sp++] = i;
        } else {
            unsigned i = stack[--sp];
            int64_t got = 0;
            bool taken = t && (value[i] ? clove_join_value(t, &f[i], &got)
                                        : clove_join(t, &f[i]));
            if (!taken) {
                if (!inject_at(t, 1, j[i].n.seed))
                    job_fn(t, &j[i]);
            } else {
                if (value[i] && (uint64_t)got != j[i].result)
                    prog_error(p, "fork: clove_join_value returned %" PRIx64
                                  ", the job computed %" PRIx64,
                               (uint64_t)got, j[i].result);
                if (inject_at(t, 2, j[i].n.seed))
                    job_fn(t, &j[i]);
            }
        }
        /* Sometimes do some work inline between two operations. */
        if (budgets[k] > 0 && rng_below(r, 3) == 0) {
            uint32_t b = budgets[k] > 4 ? budgets[k] / 2 : budgets[k];
            budgets[k] -= b;
            struct node c = {child_seed(n->seed, 100 + inline_parts), b,
                             (uint16_t)(n->depth + 1), n->plevel};
            inline_acc = combine(inline_acc, eval(t, cx, c));
            inline_parts++;
        }
    }
    if (k >= 2 && inject_at(t, 3, n->seed)) {
        uint64_t x = j[0].result;
        j[0].result = j[1].result;
        j[1].result = x;
    }
    for (unsigned i = 0; i < k; i++)
        acc = combine(acc, job_result(p, &j[i], "fork"));
    return combine(acc, inline_acc);
}

/* ---- K_REUSE ---- */
static uint64_t eval_reuse(clove_task *t, struct ctx *cx, const struct node *n, struct rng *r,
                           uint64_t acc)
{
    struct prog *p = cx->p;
    unsigned k = 2 + (unsigned)rng_below(r, 3);
    uint32_t budgets[4];
    split(p, r, n->budget - 1, k, budgets);
    clove_future f;
    for (unsigned i = 0; i < k; i++) {
        struct job j;
        job_init(&j, cx, child_seed(n->seed, i), budgets[i], n);
        if (t)
            clove_fork(t, &f, job_fn, &j);
        else
            p->c.forks++;
        /* A little work of our own while the job may be taken. */
        acc = combine(acc, node_work(child_seed(n->seed, 50 + i)));
        if (!t || !clove_join(t, &f))
            job_fn(t, &j);
        acc = combine(acc, job_result(p, &j, "reused future"));
    }
    return acc;
}

/* ---- K_JOIN2 ---- */
static uint64_t eval_join2(clove_task *t, struct ctx *cx, const struct node *n, struct rng *r,
                           uint64_t acc)
{
    struct prog *p = cx->p;
    uint32_t budgets[2];
    split(p, r, n->budget - 1, 2, budgets);
    struct job a, b;
    job_init(&a, cx, child_seed(n->seed, 0), budgets[0], n);
    job_init(&b, cx, child_seed(n->seed, 1), budgets[1], n);
    if (t) {
        clove_join2(t, job_fn, &a, job_fn, &b);
    } else {
        p->c.join2++;
        job_fn(NULL, &a);
        job_fn(NULL, &b);
    }
    acc = combine(acc, job_result(p, &a, "join2 a"));
    return combine(acc, job_result(p, &b, "join2 b"));
}

/* ---- K_FOR ---- */
struct for_ctx {
    struct ctx *cx;
    const struct node *n;
    size_t begin, end;
    uint32_t child_budget; /* per index; 0: the index only does work */
    unsigned mode;         /* 0 per index; 1 the body splits its chunk with join2 */
    _Atomic uint8_t *hits; /* [end - begin] */
    uint64_t *res;         /* [end - begin] */
};

static uint64_t for_index(clove_task *t, struct for_ctx *fc, size_t i)
{
    size_t k = i - fc->begin;
    uint64_t s = child_seed(fc->n->seed, 1000 + (uint64_t)k);
    if (fc->child_budget == 0)
        return combine(s, node_work(s));
    struct node c = {s, fc->child_budget, (uint16_t)(fc->n->depth + 1), fc->n->plevel};
    return eval(t, fc->cx, c);
}

static void for_body(clove_task *t, size_t lo, size_t hi, void *arg);

struct for_half {
    struct for_ctx *fc;
    size_t lo, hi;
    unsigned ran;
};

static void for_half_fn(clove_task *t, void *arg)
{
    struct for_half *h = arg;
    h->ran++;
    for_body(t, h->lo, h->hi, h->fc);
}

static void for_body(clove_task *t, size_t lo, size_t hi, void *arg)
{
    struct for_ctx *fc = arg;
    struct prog *p = fc->cx->p;
    if (!(lo < hi && lo >= fc->begin && hi <= fc->end)) {
        prog_error(p, "clove_for [%zu, %zu): body called on [%zu, %zu)", fc->begin, fc->end,
                   lo, hi);
        return;
    }
    if (fc->mode == 1 && hi - lo >= 2) {
        size_t mid = lo + (hi - lo) / 2;
        struct for_half a = {fc, lo, mid, 0}, b = {fc, mid, hi, 0};
        if (t) {
            clove_join2(t, for_half_fn, &a, for_half_fn, &b);
        } else {
            p->c.join2++;
            for_half_fn(NULL, &a);
            for_half_fn(NULL, &b);
        }
        if (a.ran != 1 || b.ran != 1)
            prog_error(p, "clove_for body join2: halves ran %u and %u times", a.ran, b.ran);
        return;
    }
    for (size_t i = lo; i < hi; i++) {
        if (inject_at(t, 4, fc->n->seed + i))
            continue;
        atomic_fetch_add_explicit(&fc->hits[i - fc->begin], 1, memory_order_relaxed);
        fc->res[i - fc->begin] = for_index(t, fc, i);
    }
}

static uint64_t eval_for(clove_task *t, struct ctx *cx, const struct node *n, struct rng *r,
                         uint64_t acc)
{
    struct prog *p = cx->p;
    uint32_t rest = n->budget - 1;
    size_t count;
    unsigned sel = (unsigned)rng_below(r, 20);
    if (sel < 3)
        count = 0;
    else if (sel < 6)
        count = 1;
    else if (sel < 8)
        count = 2;
    else if (sel < 14)
        count = 1 + (size_t)rng_below(r, rest < 64 ? rest + 1 : 64);
    else
        count = 1 + (size_t)rng_below(r, rest < 4096 ? rest + 1 : 4096);
    size_t begin;
    switch (rng_below(r, 4)) {
    case 0: begin = 0; break;
    case 1: begin = SIZE_MAX - count; break;
    case 2: begin = (size_t)rng_below(r, 1000); break;
    default: begin = (size_t)(rng_next(r) >> 20); break;
    }
    struct for_ctx fc = {cx, n, begin, begin + count, 0, 0, NULL, NULL};
    if (count > 0 && rest / count > 0 && rng_below(r, 4) != 0)
        fc.child_budget = (uint32_t)(rest / count);
    fc.mode = rng_below(r, 4) == 0;
    _Atomic uint8_t hits_small[SMALL_FOR];
    uint64_t res_small[SMALL_FOR];
    if (count <= SMALL_FOR) {
        fc.hits = hits_small;
        fc.res = res_small;
        for (size_t k = 0; k < count; k++)
            atomic_init(&hits_small[k], 0);
    } else {
        fc.hits = calloc(count, sizeof *fc.hits);
        fc.res = malloc(count * sizeof *fc.res);
        if (!fc.hits || !fc.res) {
            fprintf(stderr, "clove_stress: out of memory\n");
            abort();
        }
    }
    if (t) {
        if (count == 0 && rng_below(r, 2) == 0)
            clove_for(t, begin | 1, (begin | 1) - 1, for_body, &fc); /* begin > end */
        else
            clove_for(t, begin, begin + count, for_body, &fc);
    } else {
        p->c.fors++;
        p->c.for_indices += count;
        if (count > 0)
            for_body(NULL, begin, begin + count, &fc);
        else
            (void)rng_below(r, 2);
    }
    for (size_t k = 0; k < count; k++) {
        unsigned h = atomic_load_explicit(&fc.hits[k], memory_order_relaxed);
        if (h != 1) {
            prog_error(p, "clove_for [%zu, %zu): index %zu done %u times", begin, begin + count,
                       begin + k, h);
            break;
        }
        acc = combine(acc, fc.res[k]);
    }
    acc = combine(acc, count);
    if (count > SMALL_FOR) {
        free((void *)fc.hits);
        free(fc.res);
    }
    return acc;
}

/* ---- K_RUN_SAME, K_RUN_OTHER, K_TEMP_POOL ---- */
static void run_in(struct prog *p, clove_pool *pool, struct job *j)
{
    int rc = clove_pool_run(pool, job_fn, j);
    if (rc != 0)
        prog_error(p, "clove_pool_run returned %d", rc);
}

static uint64_t eval_run(clove_task *t, struct ctx *cx, const struct node *n, struct rng *r,
                         uint64_t acc, enum kind kind)
{
    struct prog *p = cx->p;
    struct ctx sub = *cx;
    struct job j;
    job_init(&j, &sub, child_seed(n->seed, 0), n->budget - 1, n);
    clove_pool *temp = NULL;
    if (kind == K_RUN_OTHER) {
        unsigned k = 1 + (unsigned)rng_below(r, NPOOLS - 1);
        sub.pidx = cx->pidx == POOL_TEMP ? k : (cx->pidx + k) % NPOOLS;
        sub.pool = t ? p->pools[sub.pidx] : NULL;
        j.n.plevel++;
    } else if (kind == K_TEMP_POOL) {
        clove_config cfg = {.threads = 1 + (unsigned)rng_below(r, 3), .heartbeat_us = p->hb_alt};
        if (t) {
            int rc = clove_pool_create(&temp, &cfg);
            if (rc != 0) {
                prog_error(p, "clove_pool_create(%u threads) in a task returned %d",
                           cfg.threads, rc);
                return acc;
            }
        } else {
            p->c.temp_pools++;
        }
        sub.pidx = POOL_TEMP;
        sub.pool = temp;
        j.n.plevel++;
    }
    if (t) {
        run_in(p, sub.pool, &j);
    } else {
        p->c.runs++;
        job_fn(NULL, &j);
    }
    if (temp)
        clove_pool_destroy(temp);
    return combine(acc, job_result(p, &j, "nested clove_pool_run"));
}

/* ---- K_EXT ---- */
struct ext_arg {
    struct prog *p;
    clove_pool *pool;
    struct job *j;
};

static void *ext_main(void *arg)
{
    struct ext_arg *e = arg;
    run_in(e->p, e->pool, e->j);
    return NULL;
}

static uint64_t eval_ext(clove_task *t, struct ctx *cx, const struct node *n, struct rng *r,
                         uint64_t acc)
{
    struct prog *p = cx->p;
    unsigned k = 2 + (unsigned)rng_below(r, MAX_EXT - 1);
    uint32_t budgets[MAX_EXT];
    split(p, r, n->budget - 1, k, budgets);
    /* All threads enter the same pool: the main one (from the top of the
     * program, that is concurrent runs on the pool this thread is in) or
     * another one. */
    struct ctx sub = *cx;
    if (cx->pidx == POOL_TEMP || rng_below(r, 2) == 0)
        sub.pidx = 0;
    else
        sub.pidx = (unsigned)rng_below(r, NPOOLS);
    sub.pool = t ? p->pools[sub.pidx] : NULL;
    struct job j[MAX_EXT];
    struct ext_arg ea[MAX_EXT];
    pthread_t th[MAX_EXT];
    bool started[MAX_EXT] = {false};
    for (unsigned i = 0; i < k; i++) {
        job_init(&j[i], &sub, child_seed(n->seed, i), budgets[i], n);
        j[i].n.plevel++;
        ea[i] = (struct ext_arg){p, sub.pool, &j[i]};
        if (!t) {
            p->c.ext_threads++;
            p->c.runs++;
            job_fn(NULL, &j[i]);
            continue;
        }
        /* The last one runs on this thread (a nested run when sub is the
         * current pool, a temporary worker otherwise). */
        if (i + 1 == k) {
            run_in(p, sub.pool, &j[i]);
            continue;
        }
        int rc = pthread_create(&th[i], NULL, ext_main, &ea[i]);
        if (rc != 0) {
            prog_error(p, "pthread_create: %s", strerror(rc));
            run_in(p, sub.pool, &j[i]); /* keep the checksum meaningful */
        } else {
            started[i] = true;
        }
    }
    for (unsigned i = 0; i < k; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    for (unsigned i = 0; i < k; i++)
        acc = combine(acc, job_result(p, &j[i], "external thread"));
    return acc;
}

/* ---- K_DENSE ----
 * The cheapest checked fork/join: leaves [lo, hi) of a binary recursion
 * whose split point is irregular (between a quarter and three quarters, so
 * the depth stays logarithmic), each fork joined in LIFO order. Most of
 * the fork/join operations of the large programs happen here. */
struct dense {
    struct prog *p;
    uint64_t seed;
    uint32_t lo, hi;
    uint64_t result;
    unsigned ran;
};

static uint64_t dense_eval(clove_task *t, struct prog *p, uint64_t seed, uint32_t lo,
                           uint32_t hi);

static void dense_fn(clove_task *t, void *arg)
{
    struct dense *d = arg;
    d->ran++;
    d->result = dense_eval(t, d->p, d->seed, d->lo, d->hi);
}

/* The clove_fork_value form: the result comes back through the join. */
static int64_t dense_value_fn(clove_task *t, void *arg)
{
    struct dense *d = arg;
    d->ran++;
    return (int64_t)dense_eval(t, d->p, d->seed, d->lo, d->hi);
}

static uint64_t dense_eval(clove_task *t, struct prog *p, uint64_t seed, uint32_t lo,
                           uint32_t hi)
{
    uint32_t n = hi - lo;
    if (n == 1)
        return mix64(seed ^ lo);
    uint32_t q = n / 4, mid = lo + (q ? q : 1);
    if (n >= 4)
        mid += (uint32_t)(mix64(seed + lo + ((uint64_t)hi << 32)) % (n - 2 * q + 1));
    struct dense right = {p, seed, mid, hi, 0, 0};
    clove_future f;
    /* Half the forks (by the range's hash) return their result instead. */
    bool value = (mix64(seed ^ ((uint64_t)lo << 32 | hi)) & 1) != 0;
    if (t && value)
        clove_fork_value(t, &f, dense_value_fn, &right);
    else if (t)
        clove_fork(t, &f, dense_fn, &right);
    uint64_t left = dense_eval(t, p, seed, lo, mid);
    int64_t got;
    if (t && value) {
        if (clove_join_value(t, &f, &got))
            right.result = (uint64_t)got;
        else
            right.result = (uint64_t)dense_value_fn(t, &right);
    } else if (!t || !clove_join(t, &f)) {
        dense_fn(t, &right);
    }
    if (right.ran != 1)
        prog_error(p, "dense [%" PRIu32 ", %" PRIu32 "): job ran %u times", mid, hi, right.ran);
    return combine(left, right.result);
}

static uint64_t eval_dense(clove_task *t, struct ctx *cx, const struct node *n, uint64_t acc)
{
    if (!t) {
        cx->p->c.forks += n->budget - 1;
        cx->p->c.nodes += n->budget - 1;
    }
    return combine(acc, dense_eval(t, cx->p, n->seed, 0, n->budget));
}

/* ---- K_SCOPE ----
 * k child jobs (0 to 40). The scope's function spawns the first m of them;
 * spawned job i also spawns job m + i (when it exists) into its own scope,
 * so spawns nest. Every job must run exactly once; results are combined in
 * index order after clove_scope_run returns. */
#define MAX_SPAWN 40
struct scope_node {
    struct job jobs[MAX_SPAWN];
    unsigned k, m;
    struct prog *p;
};

struct spawn_arg {
    struct scope_node *sn;
    unsigned i;
};

static void spawned_fn(clove_task *t, clove_scope *s, void *arg)
{
    struct spawn_arg *a = arg;
    struct scope_node *sn = a->sn;
    job_fn(t, &sn->jobs[a->i]);
    unsigned more = sn->m + a->i;
    if (a->i < sn->m && more < sn->k)
        clove_spawn(t, s, spawned_fn, a + (more - a->i)); /* args[more] */
}

static void scope_body(clove_task *t, clove_scope *s, void *arg)
{
    struct spawn_arg *args = arg;
    struct scope_node *sn = args[0].sn;
    for (unsigned i = 0; i < sn->m; i++)
        clove_spawn(t, s, spawned_fn, &args[i]);
}

static uint64_t eval_scope(clove_task *t, struct ctx *cx, const struct node *n, struct rng *r,
                           uint64_t acc)
{
    struct prog *p = cx->p;
    unsigned k = (unsigned)rng_below(r, MAX_SPAWN + 1);
    struct scope_node *sn = malloc(sizeof *sn);
    struct spawn_arg *args = malloc((MAX_SPAWN + 1) * sizeof *args);
    if (!sn || !args) {
        fprintf(stderr, "clove_stress: out of memory\n");
        abort();
    }
    uint32_t budgets[MAX_SPAWN + 1];
    split(p, r, n->budget - 1, k + 1, budgets);
    sn->k = k;
    sn->m = (k + 1) / 2;
    sn->p = p;
    for (unsigned i = 0; i < k; i++) {
        job_init(&sn->jobs[i], cx, child_seed(n->seed, 2000 + i), budgets[i], n);
        args[i] = (struct spawn_arg){sn, i};
    }
    args[k] = (struct spawn_arg){sn, k}; /* args[0].sn valid when k == 0 */
    if (t) {
        clove_scope_run(t, scope_body, args);
    } else {
        p->c.scopes++;
        p->c.spawns += k;
        for (unsigned i = 0; i < k; i++)
            job_fn(NULL, &sn->jobs[i]);
    }
    for (unsigned i = 0; i < k; i++)
        acc = combine(acc, job_result(p, &sn->jobs[i], "spawned job"));
    acc = combine(acc, k);
    free(sn);
    free(args);
    return acc;
}

/* ---- K_REDUCE ----
 * A polynomial hash of the index results, h = h * B + v: associative with
 * the combine (h_l * B^len_r + h_r), not commutative, so pieces combined
 * out of order or twice change it. Each index also counts its visits. */
#define RED_B 0x100000001b3ull
struct red_acc {
    uint64_t h, pw, n;
};

struct red_ctx {
    struct for_ctx fc; /* reuses for_index and the hit counters */
    _Atomic uint32_t inits, combines;
};

static void red_init(void *acc, void *ctx)
{
    struct red_ctx *rc = ctx;
    atomic_fetch_add_explicit(&rc->inits, 1, memory_order_relaxed);
    *(struct red_acc *)acc = (struct red_acc){0, 1, 0};
}

static void red_body(clove_task *t, size_t lo, size_t hi, void *acc, void *ctx)
{
    struct red_ctx *rc = ctx;
    struct red_acc *a = acc;
    for (size_t i = lo; i < hi; i++) {
        atomic_fetch_add_explicit(&rc->fc.hits[i - rc->fc.begin], 1, memory_order_relaxed);
        uint64_t v = for_index(t, &rc->fc, i);
        a->h = a->h * RED_B + v;
        a->pw *= RED_B;
        a->n++;
    }
}

static void red_combine(void *left, void *right, void *ctx)
{
    struct red_ctx *rc = ctx;
    atomic_fetch_add_explicit(&rc->combines, 1, memory_order_relaxed);
    struct red_acc *l = left, *rr = right;
    l->h = l->h * rr->pw + rr->h;
    l->pw *= rr->pw;
    l->n += rr->n;
}

static uint64_t eval_reduce(clove_task *t, struct ctx *cx, const struct node *n,
                            struct rng *r, uint64_t acc)
{
    struct prog *p = cx->p;
    uint32_t rest = n->budget - 1;
    size_t count = (size_t)rng_below(r, rest < 2048 ? (uint64_t)rest + 2 : 2049);
    size_t begin = rng_below(r, 3) == 0 ? SIZE_MAX - count : (size_t)rng_below(r, 100000);
    struct red_ctx rc = {{cx, n, begin, begin + count, 0, 0, NULL, NULL}, 0, 0};
    if (count > 0 && rest / count > 0 && rng_below(r, 2) != 0)
        rc.fc.child_budget = (uint32_t)(rest / count);
    rc.fc.hits = calloc(count ? count : 1, sizeof *rc.fc.hits);
    if (!rc.fc.hits) {
        fprintf(stderr, "clove_stress: out of memory\n");
        abort();
    }
    struct red_acc a = {7, RED_B, 1}; /* a non-identity start value */
    if (t) {
        int e = clove_reduce(t, begin, begin + count, &a, sizeof a, red_init, red_body,
                             red_combine, &rc);
        if (e != 0)
            prog_error(p, "clove_reduce returned %d", e);
    } else {
        p->c.reduces++;
        p->c.for_indices += count;
        if (count > 0)
            red_body(NULL, begin, begin + count, &a, &rc);
    }
    for (size_t k = 0; k < count; k++) {
        unsigned h = atomic_load_explicit(&rc.fc.hits[k], memory_order_relaxed);
        if (h != 1) {
            prog_error(p, "clove_reduce [%zu, %zu): index %zu folded %u times", begin,
                       begin + count, begin + k, h);
            break;
        }
    }
    if (atomic_load(&rc.inits) != atomic_load(&rc.combines))
        prog_error(p, "clove_reduce: %u inits, %u combines", atomic_load(&rc.inits),
                   atomic_load(&rc.combines));
    free((void *)rc.fc.hits);
    acc = combine(acc, a.h);
    acc = combine(acc, a.pw);
    return combine(acc, a.n);
}

/* ---- K_CANCEL ----
 * Which indices or jobs run after the token is requested depends on the
 * schedule, so they add nothing to the checksum: it gets the search's
 * size and the index of its match, the same in both evaluations (the
 * reference one runs nothing). What is checked: the loop or scope returns
 * ECANCELED, the index or job that requests the token ran exactly once,
 * nothing ran twice, and a scope function that requests the token before
 * returning leaves all of its spawns unstarted. The children's own checks
 * run wherever they ran. */
struct cancel_ctx {
    struct for_ctx fc; /* for_index and the hit counters */
    clove_cancel c;
    size_t match;      /* offset of the index that requests the token */
    bool poll;         /* bodies poll the token between indices */
};

static void cancel_body(clove_task *t, size_t lo, size_t hi, void *arg)
{
    struct cancel_ctx *cc = arg;
    for (size_t i = lo; i < hi; i++) {
        if (cc->poll && clove_cancelled(&cc->c))
            return;
        size_t k = i - cc->fc.begin;
        atomic_fetch_add_explicit(&cc->fc.hits[k], 1, memory_order_relaxed);
        if (k == cc->match)
            clove_cancel_request(&cc->c);
        else
            (void)for_index(t, &cc->fc, i);
    }
}

struct cancel_scope {
    struct scope_node sn;
    clove_cancel c;
    unsigned canceller; /* the job that requests the token; k: the scope's fn */
};

struct cancel_arg {
    struct cancel_scope *cs;
    unsigned i;
};

static void cancel_spawned(clove_task *t, clove_scope *s, void *arg)
{
    (void)s;
    struct cancel_arg *a = arg;
    if (a->i == a->cs->canceller)
        clove_cancel_request(&a->cs->c);
    job_fn(t, &a->cs->sn.jobs[a->i]);
}

static void cancel_scope_fn(clove_task *t, clove_scope *s, void *arg)
{
    struct cancel_arg *args = arg;
    struct cancel_scope *cs = args[0].cs;
    for (unsigned i = 0; i < cs->sn.k; i++)
        clove_spawn(t, s, cancel_spawned, &args[i]);
    if (cs->canceller == cs->sn.k)
        clove_cancel_request(&cs->c);
}

static uint64_t eval_cancel(clove_task *t, struct ctx *cx, const struct node *n,
                            struct rng *r, uint64_t acc)
{
    struct prog *p = cx->p;
    uint32_t rest = n->budget - 1;
    if (rng_below(r, 2) == 0) {
        /* A loop: one index of 1 .. 2048 requests the token. */
        size_t count = 1 + (size_t)rng_below(r, rest < 2048 ? (uint64_t)rest + 1 : 2048);
        size_t begin = (size_t)rng_below(r, 100000);
        struct cancel_ctx *cc = calloc(1, sizeof *cc);
        if (!cc) {
            fprintf(stderr, "clove_stress: out of memory\n");
            abort();
        }
        cc->fc = (struct for_ctx){cx, n, begin, begin + count, 0, 0, NULL, NULL};
        if (rest / count > 0 && rng_below(r, 2) != 0)
            cc->fc.child_budget = (uint32_t)(rest / count);
        cc->match = (size_t)rng_below(r, count);
        cc->poll = rng_below(r, 2) != 0;
        clove_cancel_init(&cc->c);
        if (t) {
            cc->fc.hits = calloc(count, sizeof *cc->fc.hits);
            if (!cc->fc.hits) {
                fprintf(stderr, "clove_stress: out of memory\n");
                abort();
            }
            int e = clove_for_cancel(t, begin, begin + count, cancel_body, cc, &cc->c);
            if (e != ECANCELED)
                prog_error(p, "clove_for_cancel [%zu, %zu) returned %d", begin, begin + count, e);
            for (size_t k = 0; k < count; k++) {
                unsigned h = atomic_load_explicit(&cc->fc.hits[k], memory_order_relaxed);
                if (h > 1 || (k == cc->match && h != 1)) {
                    prog_error(p, "clove_for_cancel [%zu, %zu): index %zu ran %u times%s", begin,
                               begin + count, begin + k, h, k == cc->match ? " (the match)" : "");
                    break;
                }
            }
            free((void *)cc->fc.hits);
        } else {
            p->c.cancels++;
        }
        acc = combine(acc, count);
        acc = combine(acc, cc->match);
        free(cc);
        return acc;
    }
    /* A scope: k jobs, one of them (or the scope's function, after
     * spawning them all: then none may start) requests the token. */
    unsigned k = 1 + (unsigned)rng_below(r, MAX_SPAWN);
    struct cancel_scope *cs = malloc(sizeof *cs);
    struct cancel_arg *args = malloc(MAX_SPAWN * sizeof *args);
    if (!cs || !args) {
        fprintf(stderr, "clove_stress: out of memory\n");
        abort();
    }
    uint32_t budgets[MAX_SPAWN];
    split(p, r, rest, k, budgets);
    cs->sn.k = k;
    cs->sn.m = k;
    cs->sn.p = p;
    cs->canceller = (unsigned)rng_below(r, (uint64_t)k + 1);
    clove_cancel_init(&cs->c);
    for (unsigned i = 0; i < k; i++) {
        job_init(&cs->sn.jobs[i], cx, child_seed(n->seed, 3000 + i), budgets[i], n);
        args[i] = (struct cancel_arg){cs, i};
    }
    if (t) {
        int e = clove_scope_run_cancel(t, cancel_scope_fn, args, &cs->c);
        if (e != ECANCELED)
            prog_error(p, "clove_scope_run_cancel returned %d", e);
        for (unsigned i = 0; i < k; i++) {
            unsigned ran = cs->sn.jobs[i].ran;
            if (ran > 1 || (i == cs->canceller && ran != 1) ||
                (cs->canceller == k && ran != 0)) {
                prog_error(p, "clove_scope_run_cancel: job %u of %u ran %u times (canceller %u)",
                           i, k, ran, cs->canceller);
                break;
            }
        }
    } else {
        p->c.cancels++;
    }
    acc = combine(acc, k);
    acc = combine(acc, cs->canceller);
    free(cs);
    free(args);
    return acc;
}

static uint64_t eval(clove_task *t, struct ctx *cx, struct node n)
{
    struct rng r = {mix64(n.seed ^ 0x6a09e667f3bcc909ull)};
    enum kind kind = node_kind(cx->p, &n, &r);
    uint64_t acc = combine(n.seed, (uint64_t)kind);
    if (!t)
        cx->p->c.nodes++;
    switch (kind) {
    case K_LEAF: return combine(acc, node_work(n.seed));
    case K_LONG:
        if (t) { /* the reference evaluation need not wait */
            uint64_t end = now_ns() + 20000 + mix64(n.seed) % 380000;
            while (now_ns() < end)
                continue;
        }
        return combine(acc, node_work(n.seed));
    case K_FORKS: return eval_forks(t, cx, &n, &r, acc);
    case K_REUSE: return eval_reuse(t, cx, &n, &r, acc);
    case K_JOIN2: return eval_join2(t, cx, &n, &r, acc);
    case K_FOR: return eval_for(t, cx, &n, &r, acc);
    case K_EXT: return eval_ext(t, cx, &n, &r, acc);
    case K_DENSE: return eval_dense(t, cx, &n, acc);
    case K_SCOPE: return eval_scope(t, cx, &n, &r, acc);
    case K_REDUCE: return eval_reduce(t, cx, &n, &r, acc);
    case K_CANCEL: return eval_cancel(t, cx, &n, &r, acc);
    default: return eval_run(t, cx, &n, &r, acc, kind);
    }
}

/* ------------------------------------------------------------------------ */
/* Running one program                                                      */
/* ------------------------------------------------------------------------ */

/* The program's size: mostly tiny, some large. */
static uint32_t prog_budget(uint64_t seed, uint32_t max_budget)
{
    uint64_t h = mix64(seed ^ 0xb7e151628aed2a6bull);
    unsigned sel = (unsigned)(h % 1000);
    uint64_t lo, hi;
    if (sel < 600) {
        lo = 1, hi = 32;
    } else if (sel < 880) {
        lo = 32, hi = 1024;
    } else if (sel < 985) {
        lo = 1024, hi = 32768;
    } else {
        lo = 32768, hi = 262144;
    }
    if (hi > max_budget)
        hi = max_budget;
    if (lo > hi)
        lo = hi;
    return (uint32_t)(lo + (h >> 16) % (hi - lo + 1));
}

static void prog_init(struct prog *p, uint64_t seed, bool ref, uint32_t *budget,
                      uint32_t max_budget)
{
    memset(p, 0, sizeof *p);
    p->seed = seed;
    p->ref = ref;
    uint64_t h = mix64(seed ^ 0x3c6ef372fe94f82bull);
    p->shape = (unsigned)(h % 4); /* 3 = mixed, like 0 */
    if (p->shape == 3)
        p->shape = 0;
    p->hb_alt = (h >> 8) & 1 ? 1 : 50;
    atomic_init(&p->errors, 0);
    atomic_init(&p->msg_taken, 0);
    *budget = prog_budget(seed, max_budget);
    p->root_budget = *budget;
}

struct top {
    struct ctx *cx;
    struct node n;
    uint64_t result;
};

static void top_fn(clove_task *t, void *arg)
{
    struct top *tp = arg;
    tp->result = eval(t, tp->cx, tp->n);
}

struct pools {
    unsigned threads, hb;
    clove_pool *p[NPOOLS];
};

struct result {
    bool ok;
    uint64_t expect, got;
    struct counts c;
    char msg[600];
};

static void run_program(uint64_t seed, const struct pools *pl, uint32_t max_budget,
                        struct result *res)
{
    static struct prog ref, par; /* one program at a time */
    uint32_t budget;
    prog_init(&ref, seed, true, &budget, max_budget);
    struct ctx rcx = {&ref, NULL, 0};
    struct node root = {seed, budget, 0, 0};
    res->expect = eval(NULL, &rcx, root);
    res->c = ref.c;

    prog_init(&par, seed, false, &budget, max_budget);
    memcpy(par.pools, pl->p, sizeof par.pools);
    struct ctx pcx = {&par, pl->p[0], 0};
    struct top tp = {&pcx, root, 0};
    int rc = clove_pool_run(pl->p[0], top_fn, &tp);
    res->got = tp.result;
    res->ok = rc == 0 && atomic_load(&par.errors) == 0 && atomic_load(&ref.errors) == 0 &&
              res->got == res->expect;
    res->msg[0] = 0;
    if (rc != 0)
        snprintf(res->msg, sizeof res->msg, "clove_pool_run returned %d", rc);
    else if (atomic_load(&ref.errors))
        snprintf(res->msg, sizeof res->msg, "sequential evaluation: %s", ref.msg);
    else if (atomic_load(&par.errors))
        snprintf(res->msg, sizeof res->msg, "%u error(s), first: %s",
                 (unsigned)atomic_load(&par.errors), par.msg);
    else if (!res->ok)
        snprintf(res->msg, sizeof res->msg,
                 "checksum %016" PRIx64 ", sequential evaluation %016" PRIx64, res->got,
                 res->expect);
}

static uint64_t forkjoins(const struct counts *c)
{
    return c->forks + c->join2;
}

/* ------------------------------------------------------------------------ */
/* Pools                                                                    */
/* ------------------------------------------------------------------------ */

#define POOL_STACK (8u << 20)

static clove_pool *make_pool(unsigned threads, unsigned hb)
{
    clove_config cfg = {.threads = threads, .heartbeat_us = hb, .stack_size = POOL_STACK};
    clove_pool *p = NULL;
    int rc = clove_pool_create(&p, &cfg);
    if (rc != 0) {
        fprintf(stderr, "clove_stress: clove_pool_create(threads %u, heartbeat %u us): %s\n",
                threads, hb, strerror(rc));
        exit(2);
    }
    return p;
}

/* The main pool has `threads` threads; next to it live a one-thread pool,
 * a two-thread pool with the same heartbeat, and a three-thread pool with
 * the other heartbeat (1 <-> 100 us). A pure function of (threads, hb), so
 * a replay gets the same set. */
static void pools_create(struct pools *pl, unsigned threads, unsigned hb)
{
    pl->threads = threads;
    pl->hb = hb;
    pl->p[0] = make_pool(threads, hb);
    pl->p[1] = make_pool(1, hb);
    pl->p[2] = make_pool(2, hb);
    pl->p[3] = make_pool(3, hb == 1 ? 100 : 1);
}

/* What the pools' schedulers did, summed over destroyed pools (main
 * thread only): shows that the runs exercised sharing and the reserve. */
static uint64_t sched_shared, sched_stolen, sched_reclaimed, sched_handed, sched_answered;

static void pools_destroy(struct pools *pl)
{
    for (unsigned i = 0; i < NPOOLS; i++) {
        clove_stats s;
        if (clove_pool_stats(pl->p[i], &s, NULL, 0) == 0) {
            sched_shared += s.shared;
            sched_stolen += s.stolen;
            sched_reclaimed += s.reclaimed;
            sched_handed += s.handed;
            sched_answered += s.answered;
        }
        clove_pool_destroy(pl->p[i]);
    }
}

/* ------------------------------------------------------------------------ */
/* Watchdog                                                                 */
/* ------------------------------------------------------------------------ */

static _Atomic uint64_t wd_start;  /* start of the current program (ns), 0 none */
static _Atomic uint64_t wd_seed;
static _Atomic unsigned wd_threads, wd_hb;
static double wd_limit = 60;
static const char *argv0 = "clove_stress";

static void print_replay(FILE *f, uint64_t seed, unsigned threads, unsigned hb)
{
    fprintf(f, "replay: %s --replay %" PRIu64 " --threads %u --heartbeat-us %u", argv0, seed,
            threads, hb);
    if (dense_permille)
        fprintf(f, " --mix dense");
    if (max_budget_opt != 262144)
        fprintf(f, " --max-budget %" PRIu32, max_budget_opt);
    if (inject)
        fprintf(f, " --inject %d", inject);
    fprintf(f, "\n");
}

static void *watchdog_main(void *arg)
{
    (void)arg;
    for (;;) {
        sleep(1);
        uint64_t s = atomic_load(&wd_start);
        if (s != 0 && (double)(now_ns() - s) * 1e-9 > wd_limit) {
            uint64_t seed = atomic_load(&wd_seed);
            unsigned th = atomic_load(&wd_threads), hb = atomic_load(&wd_hb);
            fprintf(stderr,
                    "FAIL seed=%" PRIu64 " threads=%u heartbeat=%u: program still running "
                    "after %.0f s (deadlock or livelock?)\n",
                    seed, th, hb, wd_limit);
            print_replay(stderr, seed, th, hb);
            fflush(NULL);
            abort();
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Command line                                                             */
/* ------------------------------------------------------------------------ */

#define MAX_LIST 32

struct opts {
    uint64_t seed;
    bool seed_given;
    double seconds;
    uint64_t programs;
    bool soak;
    bool verbose;
    bool replay;
    uint64_t replay_seed;
    uint64_t repeat;
    unsigned threads[MAX_LIST], nthreads;
    unsigned hb[MAX_LIST], nhb;
    uint32_t max_budget;
    double batch_s;
};

SX_NORETURN static void usage(int code)
{
    FILE *f = code ? stderr : stdout;
    fprintf(f,
            "usage: clove_stress [options]\n"
            "  --seed N           master seed (default: from the clock; always printed)\n"
            "  --seconds S        run programs for S seconds (default 10)\n"
            "  --programs N       stop after N programs (with --seconds: whichever first)\n"
            "  --soak             run until killed, progress every 10 s\n"
            "  --threads LIST     main pool sizes to cycle through (default "
            "1,2,3,4,8,16,32,64)\n"
            "  --heartbeat-us L   heartbeat intervals to cycle through (default 1,100)\n"
            "  --max-budget N     largest program, in nodes (default 262144)\n"
            "  --mix full|dense   full: every kind of node (default); dense: mostly plain\n"
            "                     binary fork/join recursion, for a high fork/join rate\n"
            "  --batch-seconds S  time on one pool configuration (default 0.25)\n"
            "  --watchdog S       abort if one program runs longer (default 60)\n"
            "  --replay SEED      run the one program SEED (with --threads T "
            "--heartbeat-us H)\n"
            "  --repeat N         with --replay: run it N times\n"
            "  --verbose          one line per program\n"
            "  --inject K         self-test: fault the harness on purpose (1 lose a job,\n"
            "                     2 run a job twice, 3 swap two results, 4 skip a loop\n"
            "                     index); the run must then FAIL\n");
    exit(code);
}

static uint64_t parse_u64(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-') {
        fprintf(stderr, "clove_stress: bad value for %s: '%s'\n", opt, s);
        usage(2);
    }
    return (uint64_t)v;
}

static double parse_double(const char *opt, const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0)) {
        fprintf(stderr, "clove_stress: bad value for %s: '%s'\n", opt, s);
        usage(2);
    }
    return v;
}

static unsigned parse_list(const char *opt, const char *s, unsigned *out, unsigned lo,
                           unsigned hi)
{
    unsigned n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        uint64_t v = parse_u64(opt, tok);
        if (v < lo || v > hi || n == MAX_LIST) {
            fprintf(stderr, "clove_stress: %s: %s out of range [%u, %u] (or too many)\n", opt,
                    tok, lo, hi);
            usage(2);
        }
        out[n++] = (unsigned)v;
    }
    if (n == 0)
        usage(2);
    return n;
}

static void parse_args(struct opts *o, int argc, char **argv)
{
    static const unsigned def_threads[] = {1, 2, 3, 4, 8, 16, 32, 64};
    memset(o, 0, sizeof *o);
    o->seconds = -1;
    o->max_budget = 262144;
    o->batch_s = 0.25;
    o->repeat = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV                                                                 \
    do {                                                                      \
        if (!v) {                                                             \
            fprintf(stderr, "clove_stress: %s needs a value\n", a);          \
            usage(2);                                                         \
        }                                                                     \
        i++;                                                                  \
    } while (0)
        if (!strcmp(a, "--seed")) {
            NEEDV;
            o->seed = parse_u64(a, v);
            o->seed_given = true;
        } else if (!strcmp(a, "--seconds")) {
            NEEDV;
            o->seconds = parse_double(a, v);
        } else if (!strcmp(a, "--programs")) {
            NEEDV;
            o->programs = parse_u64(a, v);
        } else if (!strcmp(a, "--threads")) {
            NEEDV;
            o->nthreads = parse_list(a, v, o->threads, 1, 1024);
        } else if (!strcmp(a, "--heartbeat-us")) {
            NEEDV;
            o->nhb = parse_list(a, v, o->hb, 1, CLOVE_MAX_HEARTBEAT_US);
        } else if (!strcmp(a, "--max-budget")) {
            NEEDV;
            uint64_t b = parse_u64(a, v);
            o->max_budget = b < 1 ? 1 : b > (1u << 24) ? (1u << 24) : (uint32_t)b;
        } else if (!strcmp(a, "--batch-seconds")) {
            NEEDV;
            o->batch_s = parse_double(a, v);
        } else if (!strcmp(a, "--watchdog")) {
            NEEDV;
            wd_limit = parse_double(a, v);
        } else if (!strcmp(a, "--replay")) {
            NEEDV;
            o->replay = true;
            o->replay_seed = parse_u64(a, v);
        } else if (!strcmp(a, "--repeat")) {
            NEEDV;
            o->repeat = parse_u64(a, v);
        } else if (!strcmp(a, "--mix")) {
            NEEDV;
            if (!strcmp(v, "dense")) {
                dense_permille = 800;
            } else if (!strcmp(v, "full")) {
                dense_permille = 0;
            } else {
                fprintf(stderr, "clove_stress: --mix is full or dense\n");
                usage(2);
            }
        } else if (!strcmp(a, "--inject")) {
            NEEDV;
            inject = (int)parse_u64(a, v);
        } else if (!strcmp(a, "--soak")) {
            o->soak = true;
        } else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
            o->verbose = true;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(0);
        } else {
            fprintf(stderr, "clove_stress: unknown option '%s'\n", a);
            usage(2);
        }
#undef NEEDV
    }
    if (o->nthreads == 0) {
        o->nthreads = sizeof def_threads / sizeof def_threads[0];
        memcpy(o->threads, def_threads, sizeof def_threads);
    }
    if (o->nhb == 0) {
        o->nhb = 2;
        o->hb[0] = 1;
        o->hb[1] = 100;
    }
    max_budget_opt = o->max_budget;
    if (!o->seed_given)
        o->seed = mix64(now_ns() ^ ((uint64_t)getpid() << 32));
    if (o->seconds < 0 && o->programs == 0)
        o->seconds = 10;
}

/* ------------------------------------------------------------------------ */
/* Main loop                                                                */
/* ------------------------------------------------------------------------ */

struct totals {
    uint64_t programs;
    struct counts c;
};

static void totals_add(struct totals *t, const struct counts *c)
{
    t->programs++;
    t->c.nodes += c->nodes;
    t->c.forks += c->forks;
    t->c.join2 += c->join2;
    t->c.fors += c->fors;
    t->c.for_indices += c->for_indices;
    t->c.runs += c->runs;
    t->c.ext_threads += c->ext_threads;
    t->c.temp_pools += c->temp_pools;
    t->c.scopes += c->scopes;
    t->c.spawns += c->spawns;
    t->c.reduces += c->reduces;
    t->c.cancels += c->cancels;
}

static uint64_t program_seed(uint64_t master, uint64_t number)
{
    return mix64(master ^ mix64(number + 1));
}

static const char *build_name(void)
{
#if defined(__SANITIZE_THREAD__) || defined(CLOVE_TSAN)
    return "tsan";
#elif defined(__SANITIZE_ADDRESS__)
    return "asan";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return "asan";
#else
    return "plain";
#endif
#else
    return "plain";
#endif
}

static void print_summary(const char *what, const struct opts *o, const struct totals *tt,
                          double elapsed, uint64_t configs)
{
    const struct counts *c = &tt->c;
    printf("clove_stress %s: programs=%" PRIu64 " forkjoins=%" PRIu64 " (fork/join %" PRIu64
           ", join2 %" PRIu64 ") nodes=%" PRIu64 " for=%" PRIu64 " for_indices=%" PRIu64
           " nested_runs=%" PRIu64 " ext_threads=%" PRIu64 " temp_pools=%" PRIu64
           " scopes=%" PRIu64 " spawns=%" PRIu64 " reduces=%" PRIu64 " cancels=%" PRIu64
           " pool_configs=%" PRIu64 " shared=%" PRIu64 " stolen=%" PRIu64
           " reclaimed=%" PRIu64 " handed=%" PRIu64 " answered=%" PRIu64 " elapsed=%.1fs programs/s=%.0f forkjoins/s=%.3g"
           " build=%s mix=%s seed=%" PRIu64 "\n",
           what, tt->programs, forkjoins(c), c->forks, c->join2, c->nodes, c->fors,
           c->for_indices, c->runs, c->ext_threads, c->temp_pools, c->scopes, c->spawns,
           c->reduces, c->cancels, configs, sched_shared, sched_stolen, sched_reclaimed,
           sched_handed, sched_answered, elapsed,
           elapsed > 0 ? (double)tt->programs / elapsed : 0.0,
           elapsed > 0 ? (double)forkjoins(c) / elapsed : 0.0, build_name(),
           dense_permille ? "dense" : "full", o->seed);
    fflush(stdout);
}

static void report_fail(uint64_t pseed, const struct pools *pl, const struct result *res,
                        const char *where)
{
    fflush(stdout);
    fprintf(stderr, "FAIL seed=%" PRIu64 " threads=%u heartbeat=%u%s: %s\n", pseed, pl->threads,
            pl->hb, where, res->msg);
    print_replay(stderr, pseed, pl->threads, pl->hb);
    fflush(stderr);
}

static int do_replay(const struct opts *o)
{
    unsigned threads = o->threads[0], hb = o->hb[0];
    if (o->nthreads > 1 || o->nhb > 1)
        fprintf(stderr, "clove_stress: --replay uses the first of --threads and --heartbeat-us\n");
    printf("clove_stress: replay seed=%" PRIu64 " threads=%u heartbeat=%u repeat=%" PRIu64
           "\n", o->replay_seed, threads, hb, o->repeat);
    fflush(stdout);
    struct pools pl;
    pools_create(&pl, threads, hb);
    atomic_store(&wd_threads, threads);
    atomic_store(&wd_hb, hb);
    struct result res;
    double t0 = now_s();
    for (uint64_t i = 0; i < o->repeat; i++) {
        atomic_store(&wd_seed, o->replay_seed);
        atomic_store(&wd_start, now_ns());
        run_program(o->replay_seed, &pl, o->max_budget, &res);
        atomic_store(&wd_start, 0);
        if (!res.ok) {
            char where[64];
            snprintf(where, sizeof where, " (repetition %" PRIu64 ")", i + 1);
            report_fail(o->replay_seed, &pl, &res, where);
            return 1;
        }
    }
    pools_destroy(&pl);
    printf("clove_stress: replay OK: nodes=%" PRIu64 " forkjoins=%" PRIu64 " for=%" PRIu64
           " nested_runs=%" PRIu64 " ext_threads=%" PRIu64 " temp_pools=%" PRIu64
           " checksum=%016" PRIx64 " elapsed=%.3fs\n",
           res.c.nodes, forkjoins(&res.c), res.c.fors, res.c.runs, res.c.ext_threads,
           res.c.temp_pools, res.expect, now_s() - t0);
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    argv0 = argv[0];
    parse_args(&o, argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0);

    pthread_t wd;
    if (wd_limit > 0 && pthread_create(&wd, NULL, watchdog_main, NULL) == 0)
        pthread_detach(wd);

    if (o.replay)
        return do_replay(&o);

    printf("clove_stress: seed=%" PRIu64 " (rerun with --seed %" PRIu64 ") build=%s", o.seed,
           o.seed, build_name());
    if (o.soak)
        printf(" soak");
    else if (o.seconds >= 0)
        printf(" seconds=%g", o.seconds);
    if (o.programs)
        printf(" programs=%" PRIu64, o.programs);
    printf(" threads=");
    for (unsigned i = 0; i < o.nthreads; i++)
        printf("%s%u", i ? "," : "", o.threads[i]);
    printf(" heartbeat-us=");
    for (unsigned i = 0; i < o.nhb; i++)
        printf("%s%u", i ? "," : "", o.hb[i]);
    printf(" max-budget=%" PRIu32 " mix=%s\n", o.max_budget, dense_permille ? "dense" : "full");

    struct totals tt = {0};
    double t0 = now_s(), end = o.seconds >= 0 ? t0 + o.seconds : 0;
    double next_progress = t0 + 10;
    uint64_t number = 0, configs = 0;
    unsigned ncombo = o.nthreads * o.nhb;
    bool done = false;
    while (!done) {
        /* Threads vary fastest, then the heartbeat. */
        unsigned combo = (unsigned)(configs % ncombo);
        unsigned threads = o.threads[combo % o.nthreads], hb = o.hb[combo / o.nthreads];
        configs++;
        struct pools pl;
        pools_create(&pl, threads, hb);
        atomic_store(&wd_threads, threads);
        atomic_store(&wd_hb, hb);
        double batch_end = now_s() + o.batch_s;
        uint64_t in_batch = 0;
        for (;;) {
            uint64_t pseed = program_seed(o.seed, number);
            struct result res;
            atomic_store(&wd_seed, pseed);
            atomic_store(&wd_start, now_ns());
            double p0 = o.verbose ? now_s() : 0;
            run_program(pseed, &pl, o.max_budget, &res);
            atomic_store(&wd_start, 0);
            if (!res.ok) {
                char where[96];
                snprintf(where, sizeof where, " (program %" PRIu64 " of master seed %" PRIu64
                         ")", number, o.seed);
                report_fail(pseed, &pl, &res, where);
                print_summary("FAILED", &o, &tt, now_s() - t0, configs);
                return 1;
            }
            totals_add(&tt, &res.c);
            if (o.verbose)
                printf("program %" PRIu64 " seed=%" PRIu64 " threads=%u hb=%u nodes=%" PRIu64
                       " forkjoins=%" PRIu64 " for=%" PRIu64 " runs=%" PRIu64 " ext=%" PRIu64
                       " temp=%" PRIu64 " %.3f ms\n",
                       number, pseed, threads, hb, res.c.nodes, forkjoins(&res.c), res.c.fors,
                       res.c.runs, res.c.ext_threads, res.c.temp_pools,
                       (now_s() - p0) * 1e3);
            number++;
            in_batch++;
            double now = now_s();
            if (o.programs && number >= o.programs)
                done = true;
            if (!o.soak && o.seconds >= 0 && now >= end)
                done = true;
            if (o.soak && now >= next_progress) {
                next_progress = now + 10;
                print_summary("progress", &o, &tt, now - t0, configs);
            }
            /* A new pool configuration after batch_s (at least one
             * program), or early when --programs is small. */
            if (done || now >= batch_end ||
                (o.programs && in_batch >= (o.programs + ncombo - 1) / ncombo))
                break;
        }
        pools_destroy(&pl);
    }
    print_summary("OK", &o, &tt, now_s() - t0, configs);
    return 0;
}
