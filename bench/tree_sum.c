/* SPDX-License-Identifier: MIT */
/*
 * tree_sum.c - the tree-sum benchmark, in the manner of Spice's example.
 *
 * A balanced binary tree of n nodes, one malloc per 24-byte node, allocated
 * in pre-order, node values 1..n (distinct), so every run's sum must be
 * n(n+1)/2; a wrong sum aborts the program.
 *
 * Implementations (all in this binary, same compiler flags):
 *   baseline  plain sequential recursion, no library at all
 *   split     the root split by hand onto two plain pthreads: the left
 *             subtree on a new pthread, the right one on the calling thread,
 *             both sequential (the practical limit for 2 threads); the
 *             pthread_create/join is inside the timed region
 *   parts     (--parts) the same for every -t count k: the tree cut by hand
 *             into at least 8k subtrees, dealt in k contiguous groups of
 *             equal count to k threads (this one and k - 1 pthreads
 *             started in the timed region), each group summed
 *             sequentially: a perfect static partition on this machine,
 *             with its memory shared as a parallel run shares it; the
 *             scaling kit's ceiling for the tree (sim/kit_compare.py)
 *   clove     fork at every node with two children with clove_fork_value /
 *             clove_join_value (tree_forms.c); one clove_pool_run over the
 *             whole tree per run, pools created once per thread count (not
 *             timed) and shared by the forms below
 *   args      the same with clove_fork / clove_join and an argument block
 *   args-in   the same, the fallback call inside the argument block's scope
 *             (tree_forms.c: the compiler cannot make it a loop)
 *   join2     the same with clove_join2 over two argument blocks
 *   current   the value form without a task parameter: every level asks
 *             clove_current() for its task
 *   typed     a typed task (CLOVE_TASK / CLOVE_FORK / CLOVE_JOIN)
 *   clove-dbg, args-dbg, join2-dbg, typed-dbg  the same source built
 *             without NDEBUG (CLOVE_DEBUG on, as in a user's default
 *             build); --forms includes every form but clove
 *   omp, tbb  optional peers (bench/peers/, --peers): the same fork at every
 *             node with OpenMP tasks (libgomp) and oneTBB task_group; built
 *             only when CMake finds OpenMP / TBBConfig.cmake. Their samples
 *             are interleaved with the others but fewer (--peer-time).
 *
 * Samples are interleaved (one sample of every configuration per round) so
 * that drift of a noisy machine hits all configurations alike. For small
 * trees one sample times a batch of runs and divides (see --batch). With
 * --gap-ms every run follows an untimed pause long enough for the pool's
 * threads and its heartbeat thread to fall asleep (isolated runs).
 *
 * Usage: tree_sum [-n NODES]... [-t THREADS]... [--baseline] [--split]
 *                 [--parts] [--split-min NODES] [--forms] [--peers] [--impl IMPL]...
 *                 [--only IMPL] [--reps R] [--gap-ms G]
 *                 [--batch B] [--min-time S] [--peer-time S] [--peer-reps P]
 *                 [--warmup W] [--heartbeat US] [--csv FILE] [--raw FILE]
 *                 [--quick]
 */
#define _GNU_SOURCE
#include <clove.h>

#include "tree.h"
#include "harness.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Sequential baseline                                                      */
/* ------------------------------------------------------------------------ */

/* Timed entry points are noinline so that callgrind can collect inside
 * them only (bench/callgrind.sh uses --toggle-collect=run_*). The
 * recursion is tree.h's tree_sum_seq. */
__attribute__((noinline)) static int64_t run_baseline(const node *root)
{
    return tree_sum_seq(root);
}

/* ------------------------------------------------------------------------ */
/* Root split by hand onto two pthreads                                     */
/* ------------------------------------------------------------------------ */

struct split_arg {
    const node *n;
    int64_t result;
};

static void *split_thread(void *p)
{
    struct split_arg *a = p;
    a->result = a->n ? tree_sum_seq(a->n) : 0;
    return NULL;
}

__attribute__((noinline)) static int64_t run_split(const node *root)
{
    struct split_arg a[2] = { { root->right, 0 }, { root->left, 0 } }; /* [1]: the new thread's */
    bench_on_threads(2, split_thread, a, sizeof a[0]);
    return root->value + a[0].result + a[1].result;
}

/* ------------------------------------------------------------------------ */
/* The tree cut by hand into parts for k pthreads                           */
/* ------------------------------------------------------------------------ */

/* Subtrees per thread, at least: equal counts of nearly equal subtrees
 * (tree_build halves ranges) make the groups equal within 1/8. */
#define PARTS_PER_THREAD 8u

struct parts_arg {
    const node *const *roots; /* a group of subtrees */
    size_t n;
    int64_t result;
};

static void *parts_thread(void *p)
{
    struct parts_arg *a = p;
    int64_t s = 0;
    for (size_t i = 0; i < a->n; i++)
        s += tree_sum_seq(a->roots[i]);
    a->result = s;
    return NULL;
}

/* The subtrees at depth d below n go to out[*m...]; returns the sum of the
 * nodes above that depth. */
static int64_t parts_collect(const node *n, unsigned d, const node **out, size_t *m)
{
    if (n == NULL)
        return 0;
    if (d == 0) {
        out[(*m)++] = n;
        return 0;
    }
    return n->value + parts_collect(n->left, d - 1, out, m) + parts_collect(n->right, d - 1, out, m);
}

__attribute__((noinline)) static int64_t run_parts(const node *root, unsigned k)
{
    unsigned d = 0;
    while ((size_t)1 << d < (size_t)PARTS_PER_THREAD * k)
        d++;
    const node **roots = malloc(((size_t)1 << d) * sizeof *roots);
    struct parts_arg *a = malloc(k * sizeof *a);
    if (roots == NULL || a == NULL)
        bench_die("%s", "parts: out of memory");
    size_t m = 0;
    int64_t s = parts_collect(root, d, roots, &m);
    for (unsigned i = 0; i < k; i++)
        a[i] = (struct parts_arg){ roots + m * i / k, m * (i + 1) / k - m * i / k, 0 };
    bench_on_threads(k, parts_thread, a, sizeof *a);
    for (unsigned i = 0; i < k; i++)
        s += a[i].result;
    free(a);
    free(roots);
    return s;
}

/* ------------------------------------------------------------------------ */
/* clove                                                                    */
/* ------------------------------------------------------------------------ */

__attribute__((noinline)) static int64_t run_clove(clove_pool *pool, clove_fn *job,
                                                   const node *root)
{
    struct tree_sum_arg a = { root, 0 };
    int rc = clove_pool_run(pool, job, &a);
    if (rc != 0)
        bench_die("clove_pool_run failed: %s", strerror(rc));
    return a.result;
}

/* ------------------------------------------------------------------------ */
/* Measurement                                                              */
/* ------------------------------------------------------------------------ */

enum impl {
    IMPL_BASELINE, IMPL_SPLIT, IMPL_PARTS,
    IMPL_CLOVE, IMPL_ARGS, IMPL_ARGS_IN, IMPL_JOIN2, IMPL_CURRENT, IMPL_TYPED, IMPL_CLOVE_DBG,
    IMPL_ARGS_DBG, IMPL_JOIN2_DBG, IMPL_TYPED_DBG,
    IMPL_OMP, IMPL_TBB, NIMPL
};
static const bench_impl impls[NIMPL] = {
    { "baseline", BENCH_BASELINE, 1 }, { "split", BENCH_OTHER, 2 },
    { "parts", BENCH_OTHER, 0 },
    { "clove", BENCH_CLOVE, 0 },       { "args", BENCH_CLOVE, 0 },
    { "args-in", BENCH_CLOVE, 0 },     { "join2", BENCH_CLOVE, 0 },
    { "current", BENCH_CLOVE, 0 },     { "typed", BENCH_CLOVE, 0 },
    { "clove-dbg", BENCH_CLOVE, 0 },   { "args-dbg", BENCH_CLOVE, 0 },
    { "join2-dbg", BENCH_CLOVE, 0 },   { "typed-dbg", BENCH_CLOVE, 0 },
    { "omp", BENCH_OMP, 0 },           { "tbb", BENCH_TBB, 0 },
};
/* The job each of clove's forms runs over the whole tree (tree_forms.c). */
static clove_fn *const impl_job[NIMPL] = {
    [IMPL_CLOVE] = tree_sum_job,         [IMPL_ARGS] = tree_sum_args_job,
    [IMPL_ARGS_IN] = tree_sum_args_in_job,
    [IMPL_JOIN2] = tree_sum_join2_job,   [IMPL_CURRENT] = tree_sum_current_job,
    [IMPL_TYPED] = tree_sum_typed_job,   [IMPL_CLOVE_DBG] = tree_sum_job_dbg,
    [IMPL_ARGS_DBG] = tree_sum_args_job_dbg, [IMPL_JOIN2_DBG] = tree_sum_join2_job_dbg,
    [IMPL_TYPED_DBG] = tree_sum_typed_job_dbg,
};

/* What a sample runs on: the tree of one size. */
struct work {
    const node *root;
    int64_t n;
    unsigned batch;
    double gap_s; /* --gap-ms: an untimed pause before each run */
};

static int64_t run_once(const bench_config *c, const node *root)
{
    switch (c->impl) {
    case IMPL_BASELINE: return run_baseline(root);
    case IMPL_SPLIT: return run_split(root);
    case IMPL_PARTS: return run_parts(root, c->threads);
    case IMPL_CLOVE: case IMPL_ARGS: case IMPL_ARGS_IN: case IMPL_JOIN2:
    case IMPL_CURRENT: case IMPL_TYPED:
    case IMPL_CLOVE_DBG: case IMPL_ARGS_DBG: case IMPL_JOIN2_DBG: case IMPL_TYPED_DBG:
        return run_clove(c->pool, impl_job[c->impl], root);
#ifdef CLOVE_BENCH_OPENMP
    case IMPL_OMP: return omp_tree_sum(root, c->threads);
#endif
#ifdef CLOVE_BENCH_TBB
    case IMPL_TBB: return tbb_tree_sum(c->arena, root);
#endif
    default: break;
    }
    return -1;
}

/* One sample: `batch` runs, each checked; returns elapsed ns. */
static double sample(const bench_config *c, void *ctx)
{
    const struct work *w = ctx;
    const node *root = w->root;
    const int64_t n = w->n;
    const unsigned batch = w->batch;
    const int64_t expect = n * (n + 1) / 2;
    if (c->impl == IMPL_OMP)
        bench_omp_prepare(c->threads);
    double t0 = bench_now_ns(), paused = 0;
    for (unsigned i = 0; i < batch; i++) {
        if (w->gap_s > 0) { /* the pause is not timed */
            double p0 = bench_now_ns();
            bench_sleep_s(w->gap_s);
            paused += bench_now_ns() - p0;
        }
        int64_t got = run_once(c, root);
        if (got != expect) {
            fprintf(stderr,
                    "tree_sum: WRONG SUM: impl=%s threads=%u n=%" PRId64
                    " got %" PRId64 " expected %" PRId64 "\n",
                    impls[c->impl].name, c->threads, n, got, expect);
            abort();
        }
    }
    return bench_now_ns() - t0 - paused;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

static void usage(void)
{
    fputs("usage: tree_sum [-n NODES]... [-t THREADS]... [--baseline] [--split]\n"
          "                [--parts] [--split-min NODES] [--forms] [--peers] [--impl IMPL]...\n"
          "                [--only IMPL] [--reps R] [--gap-ms G]\n"
          "                [--batch B] [--min-time SECONDS] [--peer-time SECONDS]\n"
          "                [--peer-reps P] [--warmup W] [--heartbeat US]\n"
          "                [--csv FILE] [--raw FILE] [--quick]\n"
          "  IMPL is baseline, split, parts, clove (clove_fork_value), args (clove_fork\n"
          "  with an argument block), args-in (the fallback call inside the\n"
          "  block), join2 (clove_join2), current (the value form, its task from\n"
          "  clove_current() at every level), typed (CLOVE_TASK), clove-dbg,\n"
          "  args-dbg, join2-dbg, typed-dbg (the same built without NDEBUG), omp\n"
          "  (OpenMP tasks) or tbb (oneTBB)\n"
          "  -n NODES      tree size (repeatable; default 10000000)\n"
          "  -t THREADS    clove / peer thread count (repeatable; default 1 and 2)\n"
          "  --baseline    include the sequential baseline\n"
          "  --split       include the root split by hand onto two pthreads\n"
          "  --parts       include the tree cut by hand into parts for THREADS\n"
          "                pthreads, for every -t (rows parts): a perfect static\n"
          "                partition on this machine\n"
          "  --split-min NODES  but neither split nor parts for trees smaller\n"
          "                than this (there they time pthread_create, ~50 us,\n"
          "                and disturb the samples after them)\n"
          "  --forms       include args, args-in, join2, current, typed and the\n"
          "                -dbg forms\n"
          "  --peers       include every peer runtime this binary was built with\n"
          "                (a peer that was not built is reported, not run)\n"
          "  --impl IMPL   include this implementation (repeatable; clove is\n"
          "                always included unless --only says otherwise); a peer\n"
          "                asked for this way that was not built is an error\n"
          "  --only IMPL   run only this implementation (for callgrind)\n"
          "  --reps R      samples per configuration (default: enough for\n"
          "                --min-time per configuration, at least 5, at most 2000)\n"
          "  --peer-time S target seconds per peer configuration (default 2):\n"
          "                peers get S / (time of their warm-up sample) samples,\n"
          "                at least 3, at most as many as the others\n"
          "  --peer-reps P samples per peer configuration (overrides --peer-time)\n"
          "  --batch B     runs per sample (default: 1 for n >= 100000, else\n"
          "                enough runs for about 1M nodes per sample)\n"
          "  --gap-ms G    pause G ms (untimed) before each run: isolated runs,\n"
          "                which find the pool's threads asleep, as an application\n"
          "                that calls clove_pool_run now and then does\n"
          "  --min-time S  target seconds per configuration (default 0.5)\n"
          "  --warmup W    untimed runs per configuration first (default 1)\n"
          "  --heartbeat US  clove heartbeat interval (default: the library's)\n"
          "  --csv FILE    also write the results as CSV\n"
          "  --raw FILE    also write every sample as CSV\n"
          "  --quick       short run (3 samples, no calibration): smoke test\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    bench_prog = "tree_sum";
    unsigned long sizes[BENCH_MAX_LIST];
    size_t nsizes = 0;
    unsigned long split_min = 0; /* --split-min: no split below this size */
    double gap_ms = 0;           /* --gap-ms: a pause before each run */
    bench_opts o;
    bench_opts_init(&o, impls, NIMPL, BENCH_OPT_BATCH | BENCH_OPT_WARMUP | BENCH_OPT_IMPL);
    for (int k = IMPL_ARGS; k <= IMPL_TYPED_DBG; k++) /* clove's other forms: --forms */
        o.want[k] = false;

    for (bench_args a = { argc, argv, 1, usage }; a.i < argc; a.i++) {
        if (bench_is(&a, "-n")) {
            if (!bench_list_add(&a, sizes, &nsizes, 1ul << 40))
                bench_die("%s", "-n must be positive");
        } else if (bench_is(&a, "--baseline")) {
            o.want[IMPL_BASELINE] = true;
        } else if (bench_is(&a, "--split")) {
            o.want[IMPL_SPLIT] = true;
        } else if (bench_is(&a, "--parts")) {
            o.want[IMPL_PARTS] = true;
        } else if (bench_is(&a, "--gap-ms")) {
            gap_ms = bench_parse_ul("--gap-ms", bench_value(&a), 10000);
        } else if (bench_is(&a, "--split-min")) {
            split_min = bench_parse_ul("--split-min", bench_value(&a), 1ul << 40);
        } else if (bench_is(&a, "--forms")) {
            for (int k = IMPL_ARGS; k <= IMPL_TYPED_DBG; k++)
                o.want[k] = true;
        } else if (bench_is(&a, "--peers")) {
            o.want[IMPL_OMP] = o.want[IMPL_TBB] = true;
        } else if (!bench_option(&o, &a)) {
            usage();
        }
    }
    if (!nsizes) sizes[nsizes++] = 10000000;
    if (!o.nthreads) { o.threads[o.nthreads++] = 1; o.threads[o.nthreads++] = 2; }
    bench_apply_only(&o);
    bench_drop_unbuilt(&o);

    /* Configurations, in the order they are sampled within a round; pools
     * and the peers' thread pools once per thread count (not timed). */
    bench_set *s = bench_start(&o, 0);
    bench_config *cfg = s->cfg;
    const size_t ncfg = s->ncfg;
    bench_omp_setup(s, false);
    bench_tbb_setup(s, 0);

    bench_config *moved = malloc(ncfg * sizeof *moved);
    size_t *perm = malloc(ncfg * sizeof *perm);
    if (moved == NULL || perm == NULL)
        bench_die("%s", "out of memory");

    FILE *csv = bench_csv_open(o.csv_path, BENCH_CSV_HEADER);
    FILE *raw = bench_csv_open(o.raw_path, BENCH_RAW_HEADER);

    printf("tree_sum: balanced tree, one malloc per 24-byte node, pre-order;"
           " ns per node (lower is better)\n");
    printf("heartbeat: %s%lu us; samples interleaved across configurations;"
           " every run's sum checked\n",
           o.heartbeat ? "" : "library default ", bench_heartbeat_us(o.heartbeat));

    for (size_t si = 0; si < nsizes; si++) {
        const int64_t n = (int64_t)sizes[si];
        /* Split and parts below --split-min nodes are left out: they
         * would time pthread_create, and their threads' start and exit
         * disturb the samples after them. They go last, outside the first
         * nc, in their order (perm: where each came from). */
        size_t nc = 0, m = 0;
        for (int pass = 0; pass < 2; pass++)
            for (size_t k = 0; k < ncfg; k++) {
                bool out = (cfg[k].impl == IMPL_SPLIT || cfg[k].impl == IMPL_PARTS) &&
                           (unsigned long)n < split_min;
                if (out != (pass == 1))
                    continue;
                nc += pass == 0;
                perm[m] = k;
                moved[m++] = cfg[k];
            }
        memcpy(cfg, moved, ncfg * sizeof cfg[0]);
        double tb0 = bench_now_ns();
        node *root = tree_build(1, n);
        double tb = bench_now_ns() - tb0;

        unsigned batch = (unsigned)o.batch;
        if (!batch)
            batch = n >= 100000 || gap_ms > 0 ? 1 : (unsigned)((1000000 + n - 1) / n);
        struct work w = { root, n, batch, gap_ms / 1e3 };

        /* Warm-up (untimed), calibration and the peers' sample counts:
         * bench_plan_samples. */
        bench_plan p = bench_plan_samples(s, nc, &o, sample, &w);
        double total = bench_rounds(s, nc, p.rounds, (double)n * batch, sample, &w);
        bench_write_raw(raw, s, nc, p.rounds, (uint64_t)n);

        printf("\nn = %" PRId64 " nodes (built in %.2f s), %zu samples per"
               " configuration, %u run%s per sample%s, %.1f s sampling\n",
               n, tb / 1e9, p.rounds, batch, batch == 1 ? "" : "s",
               batch == 1 ? "" : " (sample time divided by runs x nodes)",
               total / 1e9);
        bench_print_peers(s, &p, &o);
        bench_report(s, nc, 9, csv, "tree_sum", (uint64_t)n, o.heartbeat);
        fflush(stdout);
        tree_destroy(root);
        /* Back in their places for the next size. */
        memcpy(moved, cfg, ncfg * sizeof cfg[0]);
        for (size_t k = 0; k < ncfg; k++)
            cfg[perm[k]] = moved[k];
    }

    free(perm);
    free(moved);
    bench_teardown(s);
    bench_csv_close(raw, o.raw_path);
    bench_csv_close(csv, o.csv_path);
    return 0;
}
