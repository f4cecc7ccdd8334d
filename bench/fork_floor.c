/* SPDX-License-Identifier: MIT */
/*
 * fork_floor.c - how low can a fork/join go on the 1000-node tree sum?
 * A what-if benchmark for the design, not a measurement of clove alone.
 *
 * The target for 1000 nodes is 2.5x gcc's -O3 baseline, which gcc turns
 * into a loop over the right child and inlines several levels deep; a
 * future in the forking frame (Spice's design) measured about 3.2x here.
 * This program times, in one process and interleaved, the same tree walk
 * written seven ways, on one thread:
 *
 *   baseline      the plain recursion (what gcc inlines)
 *   clove         the clove.h idiom for a job that returns its result
 *                 (clove_fork_value/clove_join_value), as bench/tree_sum
 *                 runs it (a pool of one thread: the not-taken path only)
 *   clove-call    the clove_fork/clove_join idiom: the job writes its
 *                 result through an argument block in the forking frame
 *   frame-record  no runtime at all: the fork stores fn, arg and a link in
 *                 a future in the caller's frame (with a compiler barrier,
 *                 so that the stores happen) and the join tests one word.
 *                 The floor of any design whose future lives in the
 *                 forking frame, as Spice's and clove's before 0.1 did
 *   clove-array   clove_fork/clove_join (1-thread pool), with the
 *                 argument block in a stack owned by the caller instead
 *                 of its frame (a stand-in array here)
 *   array-record  no runtime at all: a record {fn, arg, result} pushed on
 *                 an array owned by the task (Lace and Wool keep their
 *                 task stacks this way) and popped at the join, which
 *                 tests fn. Nothing in the caller's frame has its address
 *                 taken, so gcc can still turn the right child into a loop
 *   array-hb      array-record plus the heartbeat check clove_fork makes
 *                 (a relaxed load of a per-task word and a branch to an
 *                 out-of-line handler, never taken here)
 *
 * The no-runtime variants (frame-record, array-record, array-hb) never
 * share anything: they show what the caller
 * pays for where the fork record lives, which decides how gcc compiles the
 * recursion. clove_fork_value on clove's job stack is array-hb: the
 * same two stores (fn, arg) and the same test of fn at the join, which
 * the owner clears when it reserves or shares the record. Each variant is checked against n(n+1)/2. For instruction
 * counts, run it under callgrind with --toggle-collect='run_*' and divide
 * each run_* function's inclusive count by runs x nodes (bench/README.md,
 * "How low a fork can go").
 *
 * Usage: fork_floor [-n NODES] [--rounds R]    (defaults 1000, 41)
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"
#include "tree.h"

#include <clove.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- frame-record: the least a fork can store in the caller's frame ---- */

struct frame_fut {
    void (*fn)(void);
    const void *arg;
    void *link;
};

static void frame_job(void) {}

static int64_t sum_frame(void *t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        struct frame_fut f;
        struct tree_sum_arg right = {n->right, 0};
        f.fn = frame_job;
        f.arg = &right;
        f.link = t;
        __asm__ volatile("" : : "r"(&f) : "memory"); /* published */
        s += sum_frame(t, n->left);
        __asm__ volatile("" : : "r"(&f) : "memory"); /* a thief may have run */
        if (f.link != NULL)
            right.result = sum_frame(t, n->right);
        return s + right.result;
    }
    if (n->left)
        s += sum_frame(t, n->left);
    if (n->right)
        s += sum_frame(t, n->right);
    return s;
}

/* ---- array-record and array-hb: a record on a task-owned array --------- */

struct arec {
    void (*fn)(void);
    const node *arg;
    int64_t result;
};

/* heartbeat: array-hb's fork loads it (relaxed) and branches to an
 * out-of-line handler when it is set, as clove_fork does; never set here. */
struct astack {
    struct arec *top;
    _Atomic unsigned heartbeat;
};

__attribute__((noinline, cold)) static void astack_beat(struct astack *d)
{
    atomic_store_explicit(&d->heartbeat, 0, memory_order_relaxed);
}

#define NO_BEAT_CHECK(d) ((void)0)
#define BEAT_CHECK(d)                                                                   \
    do {                                                                                \
        if (__builtin_expect(atomic_load_explicit(&(d)->heartbeat, memory_order_relaxed) \
                             != 0, 0))                                                  \
            astack_beat(d);                                                             \
    } while (0)

/* The two variants differ only in CHECK, right after the push. Nothing in
 * the caller's frame has its address taken. The join pops the record and
 * tests fn, which a thief would have cleared. */
#define DEFINE_SUM_ARRAY(name, CHECK)                                                   \
    static int64_t name(struct astack *d, const node *n)                                \
    {                                                                                   \
        int64_t s = n->value;                                                           \
        if (n->left && n->right) {                                                      \
            struct arec *r = d->top;                                                    \
            r->fn = frame_job;                                                          \
            r->arg = n->right;                                                          \
            d->top = r + 1;                                                             \
            CHECK(d);                                                                   \
            s += name(d, n->left);                                                      \
            d->top = r;                                                                 \
            if (r->fn != NULL)                                                          \
                return s + name(d, n->right);                                           \
            return s + r->result;                                                       \
        }                                                                               \
        if (n->left)                                                                    \
            s += name(d, n->left);                                                      \
        if (n->right)                                                                   \
            s += name(d, n->right);                                                     \
        return s;                                                                       \
    }

DEFINE_SUM_ARRAY(sum_array, NO_BEAT_CHECK)
DEFINE_SUM_ARRAY(sum_array_hb, BEAT_CHECK)

/* ---- clove-call: clove_fork/clove_join, the argument block in the frame  */

static int64_t sum_clove_call(clove_task *t, const node *n);

static void clove_call_job(clove_task *t, void *p)
{
    struct tree_sum_arg *a = p;
    a->result = sum_clove_call(t, a->n);
}

static int64_t sum_clove_call(clove_task *t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        clove_future f;
        struct tree_sum_arg right = {n->right, 0};
        clove_fork(t, &f, clove_call_job, &right);
        s += sum_clove_call(t, n->left);
        if (!clove_join(t, &f))
            right.result = sum_clove_call(t, n->right);
        return s + right.result;
    }
    if (n->left)
        s += sum_clove_call(t, n->left);
    if (n->right)
        s += sum_clove_call(t, n->right);
    return s;
}

/* ---- clove-array: clove_fork/clove_join, the argument outside the frame  */

struct crec {
    clove_future f;
    struct tree_sum_arg a;
};

struct cstack {
    struct crec *top;
};

static struct cstack *cstack_of_run; /* the one run in progress */

static int64_t sum_clove_array(clove_task *t, const node *n);

static void clove_array_job(clove_task *t, void *p)
{
    struct tree_sum_arg *a = p;
    a->result = sum_clove_array(t, a->n);
}

static int64_t sum_clove_array(clove_task *t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        struct cstack *d = cstack_of_run;
        struct crec *r = d->top++;
        r->a.n = n->right;
        clove_fork(t, &r->f, clove_array_job, &r->a);
        s += sum_clove_array(t, n->left);
        d->top = r;
        if (!clove_join(t, &r->f))
            return s + sum_clove_array(t, n->right);
        return s + r->a.result;
    }
    if (n->left)
        s += sum_clove_array(t, n->left);
    if (n->right)
        s += sum_clove_array(t, n->right);
    return s;
}

/* ---- timed entry points (noinline: callgrind's --toggle-collect) -------- */

static const node *g_root;
static clove_pool *g_pool;
static struct arec *g_arecs;
static struct crec *g_crecs;

__attribute__((noinline)) static int64_t run_baseline(void)
{
    return tree_sum_seq(g_root); /* the baseline (tree.h) */
}

__attribute__((noinline)) static int64_t run_clove(void)
{
    struct tree_sum_arg a = {g_root, 0};
    int rc = clove_pool_run(g_pool, tree_sum_job, &a);
    if (rc != 0)
        exit(2);
    return a.result;
}

__attribute__((noinline)) static int64_t run_clove_call(void)
{
    struct tree_sum_arg a = {g_root, 0};
    int rc = clove_pool_run(g_pool, clove_call_job, &a);
    if (rc != 0)
        exit(2);
    return a.result;
}

__attribute__((noinline)) static int64_t run_frame_record(void)
{
    int anchor;
    return sum_frame(&anchor, g_root);
}

static void clove_array_top(clove_task *t, void *p)
{
    struct tree_sum_arg *a = p;
    a->result = sum_clove_array(t, a->n);
}

__attribute__((noinline)) static int64_t run_clove_array(void)
{
    struct cstack d = {g_crecs};
    cstack_of_run = &d;
    struct tree_sum_arg a = {g_root, 0};
    int rc = clove_pool_run(g_pool, clove_array_top, &a);
    if (rc != 0)
        exit(2);
    return a.result;
}

__attribute__((noinline)) static int64_t run_array_record(void)
{
    struct astack d = {g_arecs, 0};
    return sum_array(&d, g_root);
}

__attribute__((noinline)) static int64_t run_array_heartbeat(void)
{
    struct astack d = {g_arecs, 0};
    return sum_array_hb(&d, g_root);
}

static const struct {
    const char *name;
    int64_t (*run)(void);
} variants[] = {
    {"baseline", run_baseline},
    {"clove", run_clove},
    {"clove-call", run_clove_call},
    {"frame-record", run_frame_record},
    {"clove-array", run_clove_array},
    {"array-record", run_array_record},
    {"array-hb", run_array_heartbeat},
};
enum { NV = sizeof variants / sizeof variants[0] };

static unsigned long parse_arg(const char *opt, const char *s, unsigned long max)
{
    char *end;
    unsigned long v = s ? strtoul(s, &end, 10) : 0;
    if (!s || *end || v == 0 || v > max) {
        fprintf(stderr, "fork_floor: %s needs a number in 1..%lu\n", opt, max);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    unsigned long n = 1000, rounds = 41;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n"))
            n = parse_arg("-n", i + 1 < argc ? argv[++i] : NULL, 100000);
        else if (!strcmp(argv[i], "--rounds"))
            rounds = parse_arg("--rounds", i + 1 < argc ? argv[++i] : NULL, 100000);
        else {
            fprintf(stderr, "usage: fork_floor [-n NODES] [--rounds R]\n");
            return 2;
        }
    }
    node *root = tree_build(1, (int64_t)n);
    g_root = root;
    /* The recursion is at most n deep: n records are always enough. */
    g_arecs = calloc(n, sizeof *g_arecs);
    g_crecs = calloc(n, sizeof *g_crecs);
    clove_config cfg = {.threads = 1};
    if (!g_arecs || !g_crecs || clove_pool_create(&g_pool, &cfg) != 0) {
        fprintf(stderr, "fork_floor: out of memory\n");
        return 2;
    }
    const int64_t expect = (int64_t)n * ((int64_t)n + 1) / 2;
    const unsigned batch = (unsigned)((1000000 + n - 1) / n);
    double *ns = calloc(NV * rounds, sizeof *ns);
    if (!ns)
        return 2;
    for (unsigned long r = 0; r <= rounds; r++) { /* round 0: warm-up */
        for (unsigned v = 0; v < NV; v++) {
            double t0 = bench_now_ns();
            for (unsigned b = 0; b < batch; b++) {
                if (variants[v].run() != expect) {
                    fprintf(stderr, "fork_floor: WRONG SUM in %s\n", variants[v].name);
                    return 1;
                }
            }
            if (r > 0)
                ns[v * rounds + r - 1] = (bench_now_ns() - t0) / ((double)batch * (double)n);
        }
    }
    printf("fork_floor: tree sum of %lu nodes on one thread, %lu rounds of %u runs"
           " per variant, interleaved; ns per node (what-if variants: see the source)\n",
           n, rounds, batch);
    printf("  %-13s %8s %8s %8s %12s\n", "variant", "median", "min", "max", "vs baseline");
    double base = 0;
    for (unsigned v = 0; v < NV; v++) {
        double *x = ns + v * rounds;
        qsort(x, rounds, sizeof *x, bench_cmp_double);
        double med = x[rounds / 2];
        if (v == 0)
            base = med;
        printf("  %-13s %8.3f %8.3f %8.3f %11.2fx\n", variants[v].name, med, x[0],
               x[rounds - 1], med / base);
    }
    clove_pool_destroy(g_pool);
    free(ns);
    free(g_arecs);
    free(g_crecs);
    tree_destroy(root);
    return 0;
}
