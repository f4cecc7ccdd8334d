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
 * trees one sample times a batch of runs and divides (see --batch).
 *
 * Usage: tree_sum [-n NODES]... [-t THREADS]... [--baseline] [--split]
 *                 [--split-min NODES] [--forms] [--peers] [--impl IMPL]...
 *                 [--only IMPL] [--reps R]
 *                 [--batch B] [--min-time S] [--peer-time S] [--peer-reps P]
 *                 [--warmup W] [--heartbeat US] [--csv FILE] [--raw FILE]
 *                 [--quick]
 */
#define _GNU_SOURCE
#include <clove.h>

#include "tree.h"
#include "bench_util.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* Tree                                                                     */
/* ------------------------------------------------------------------------ */

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "tree_sum: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(2);
}

/* ------------------------------------------------------------------------ */
/* Sequential baseline                                                      */
/* ------------------------------------------------------------------------ */

static int64_t sum_seq(const node *n)
{
    int64_t s = n->value;
    if (n->left)
        s += sum_seq(n->left);
    if (n->right)
        s += sum_seq(n->right);
    return s;
}

/* Timed entry points are noinline so that callgrind can collect inside
 * them only (bench/callgrind.sh uses --toggle-collect=run_*). */
__attribute__((noinline)) static int64_t run_baseline(const node *root)
{
    return sum_seq(root);
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
    a->result = a->n ? sum_seq(a->n) : 0;
    return NULL;
}

__attribute__((noinline)) static int64_t run_split(const node *root)
{
    struct split_arg left = { root->left, 0 };
    pthread_t th;
    int rc = pthread_create(&th, NULL, split_thread, &left);
    if (rc != 0)
        die("pthread_create failed: %s", strerror(rc));
    int64_t s = root->value + (root->right ? sum_seq(root->right) : 0);
    rc = pthread_join(th, NULL);
    if (rc != 0)
        die("pthread_join failed: %s", strerror(rc));
    return s + left.result;
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
        die("clove_pool_run failed: %s", strerror(rc));
    return a.result;
}

/* ------------------------------------------------------------------------ */
/* Peers (optional; bench/peers/)                                           */
/* ------------------------------------------------------------------------ */


/* ------------------------------------------------------------------------ */
/* Measurement                                                              */
/* ------------------------------------------------------------------------ */

enum impl {
    IMPL_BASELINE, IMPL_SPLIT,
    IMPL_CLOVE, IMPL_ARGS, IMPL_ARGS_IN, IMPL_JOIN2, IMPL_CURRENT, IMPL_TYPED, IMPL_CLOVE_DBG,
    IMPL_ARGS_DBG, IMPL_JOIN2_DBG, IMPL_TYPED_DBG,
    IMPL_OMP, IMPL_TBB, NIMPL
};
static const char *const impl_name[] = { "baseline", "split",     "clove",    "args",
                                         "args-in",  "join2",     "current",  "typed",
                                         "clove-dbg", "args-dbg",
                                         "join2-dbg", "typed-dbg", "omp",   "tbb" };
/* The job each of clove's forms runs over the whole tree (tree_forms.c). */
static clove_fn *const impl_job[NIMPL] = {
    [IMPL_CLOVE] = tree_sum_job,         [IMPL_ARGS] = tree_sum_args_job,
    [IMPL_ARGS_IN] = tree_sum_args_in_job,
    [IMPL_JOIN2] = tree_sum_join2_job,   [IMPL_CURRENT] = tree_sum_current_job,
    [IMPL_TYPED] = tree_sum_typed_job,
    [IMPL_CLOVE_DBG] = tree_sum_job_dbg,
    [IMPL_ARGS_DBG] = tree_sum_args_job_dbg, [IMPL_JOIN2_DBG] = tree_sum_join2_job_dbg,
    [IMPL_TYPED_DBG] = tree_sum_typed_job_dbg,
};

static bool is_peer(enum impl i)
{
    return i == IMPL_OMP || i == IMPL_TBB;
}

static bool is_clove(enum impl i)
{
    return i >= IMPL_CLOVE && i <= IMPL_TYPED_DBG;
}

struct config {
    enum impl impl;
    unsigned threads;    /* clove, omp, tbb: thread count; split: 2; baseline: 1 */
    clove_pool *pool;    /* clove's forms: the pool of this thread count */
    void *arena;         /* tbb only: its task_arena */
    double *samples;     /* ns per node */
    size_t *round;       /* the round of each sample */
    size_t nsamples;
    size_t want;         /* samples to take (peers: may be fewer than rounds) */
    double est;          /* peers: time of one sample, from the warm-up (ns) */
};


static int64_t run_once(const struct config *c, const node *root)
{
    switch (c->impl) {
    case IMPL_BASELINE: return run_baseline(root);
    case IMPL_SPLIT: return run_split(root);
    case IMPL_CLOVE: case IMPL_ARGS: case IMPL_ARGS_IN: case IMPL_JOIN2: case IMPL_CURRENT:
    case IMPL_TYPED:
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
static double sample(const struct config *c, const node *root, int64_t n,
                     unsigned batch)
{
    const int64_t expect = n * (n + 1) / 2;
#ifdef CLOVE_BENCH_OPENMP
    /* libgomp keeps one thread pool per process and resizes it to each
     * parallel region's team: it ends the surplus threads when a team is
     * smaller than the last one and creates threads when it is larger. With
     * configurations of several thread counts interleaved that would put
     * thread creation into the first run of a sample; an empty region of
     * this team size first (untimed, its size checked) keeps it out. */
    if (c->impl == IMPL_OMP && omp_peer_setup(c->threads) != c->threads) {
        fprintf(stderr, "tree_sum: omp: a team of %u threads was not granted\n",
                c->threads);
        abort();
    }
#endif
    double t0 = bench_now_ns();
    for (unsigned i = 0; i < batch; i++) {
        int64_t got = run_once(c, root);
        if (got != expect) {
            fprintf(stderr,
                    "tree_sum: WRONG SUM: impl=%s threads=%u n=%" PRId64
                    " got %" PRId64 " expected %" PRId64 "\n",
                    impl_name[c->impl], c->threads, n, got, expect);
            abort();
        }
    }
    return bench_now_ns() - t0;
}



/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

#define MAX_LIST 32

static unsigned long parse_ul(const char *opt, const char *s, unsigned long max)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end); /* accepts 1e7 */
    if (errno || *end || v < 0 || v > (double)max || v != (double)(unsigned long)v)
        die("bad value for %s", opt);
    return (unsigned long)v;
}

static void usage(void)
{
    fputs("usage: tree_sum [-n NODES]... [-t THREADS]... [--baseline] [--split]\n"
          "                [--split-min NODES] [--forms] [--peers] [--impl IMPL]...\n"
          "                [--only IMPL] [--reps R]\n"
          "                [--batch B] [--min-time SECONDS] [--peer-time SECONDS]\n"
          "                [--peer-reps P] [--warmup W] [--heartbeat US]\n"
          "                [--csv FILE] [--raw FILE] [--quick]\n"
          "  IMPL is baseline, split, clove (clove_fork_value), args (clove_fork\n"
          "  with an argument block), args-in (the fallback call inside the\n"
          "  block), join2 (clove_join2), current (the value form, its task from\n"
          "  clove_current() at every level), typed (CLOVE_TASK), clove-dbg,\n"
          "  args-dbg, join2-dbg, typed-dbg (the\n"
          "  same built without NDEBUG), omp (OpenMP tasks) or tbb (oneTBB)\n"
          "  -n NODES      tree size (repeatable; default 10000000)\n"
          "  -t THREADS    clove / peer thread count (repeatable; default 1 and 2)\n"
          "  --baseline    include the sequential baseline\n"
          "  --split       include the root split by hand onto two pthreads\n"
          "  --split-min NODES  but not for trees smaller than this (there it\n"
          "                times pthread_create, ~50 us, and disturbs the\n"
          "                samples after it)\n"
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
    unsigned long sizes[MAX_LIST], threads[MAX_LIST];
    size_t nsizes = 0, nthreads = 0;
    bool want_baseline = false, want_split = false, quick = false;
    unsigned long split_min = 0; /* --split-min: no split below this size */
    int only = -1;
    bool want_peer[NIMPL] = { false }, explicit_peer[NIMPL] = { false };
    bool want_form[NIMPL] = { false }; /* clove's forms besides clove */
    unsigned long reps = 0, batch_opt = 0, warmup = 1, heartbeat = 0, peer_reps = 0;
    double min_time = 0.5, peer_time = 2.0;
    const char *csv_path = NULL, *raw_path = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (usage(), ""))
        if (!strcmp(a, "-n")) {
            if (nsizes == MAX_LIST) die("%s", "too many -n");
            sizes[nsizes] = parse_ul("-n", NEXT(), 1ul << 40);
            if (sizes[nsizes] == 0) die("%s", "-n must be positive");
            nsizes++;
        } else if (!strcmp(a, "-t")) {
            if (nthreads == MAX_LIST) die("%s", "too many -t");
            threads[nthreads] = parse_ul("-t", NEXT(), CLOVE_MAX_THREADS);
            if (threads[nthreads] == 0) die("%s", "-t must be positive");
            nthreads++;
        } else if (!strcmp(a, "--baseline")) {
            want_baseline = true;
        } else if (!strcmp(a, "--split")) {
            want_split = true;
        } else if (!strcmp(a, "--split-min")) {
            split_min = parse_ul("--split-min", NEXT(), 1ul << 40);
        } else if (!strcmp(a, "--forms")) {
            for (int k = IMPL_ARGS; k <= IMPL_TYPED_DBG; k++)
                want_form[k] = true;
        } else if (!strcmp(a, "--peers")) {
            want_peer[IMPL_OMP] = want_peer[IMPL_TBB] = true;
        } else if (!strcmp(a, "--only") || !strcmp(a, "--impl")) {
            const char *v = NEXT();
            int which = -1;
            for (int k = 0; k < NIMPL; k++)
                if (!strcmp(v, impl_name[k])) which = k;
            if (which < 0) die("unknown implementation %s", v);
            if (!strcmp(a, "--only"))
                only = which;
            else if (which == IMPL_BASELINE)
                want_baseline = true;
            else if (which == IMPL_SPLIT)
                want_split = true;
            else if (is_clove((enum impl)which))
                want_form[which] = true;
            if (is_peer((enum impl)which))
                want_peer[which] = explicit_peer[which] = true;
        } else if (!strcmp(a, "--peer-reps")) {
            peer_reps = parse_ul("--peer-reps", NEXT(), 1000000);
            if (!peer_reps) die("%s", "--peer-reps must be positive");
        } else if (!strcmp(a, "--peer-time")) {
            char *end;
            peer_time = strtod(NEXT(), &end);
            if (*end || !(peer_time >= 0)) die("%s", "bad value for --peer-time");
        } else if (!strcmp(a, "--reps")) {
            reps = parse_ul("--reps", NEXT(), 1000000);
            if (!reps) die("%s", "--reps must be positive");
        } else if (!strcmp(a, "--batch")) {
            batch_opt = parse_ul("--batch", NEXT(), 100000000);
        } else if (!strcmp(a, "--warmup")) {
            warmup = parse_ul("--warmup", NEXT(), 1000000);
        } else if (!strcmp(a, "--min-time")) {
            char *end;
            min_time = strtod(NEXT(), &end);
            if (*end || !(min_time >= 0)) die("%s", "bad value for --min-time");
        } else if (!strcmp(a, "--heartbeat")) {
            heartbeat = parse_ul("--heartbeat", NEXT(), CLOVE_MAX_HEARTBEAT_US);
        } else if (!strcmp(a, "--csv")) {
            csv_path = NEXT();
        } else if (!strcmp(a, "--raw")) {
            raw_path = NEXT();
        } else if (!strcmp(a, "--quick")) {
            quick = true;
        } else {
            usage();
        }
#undef NEXT
    }
    if (!nsizes) sizes[nsizes++] = 10000000;
    if (!nthreads) { threads[nthreads++] = 1; threads[nthreads++] = 2; }
    if (only == IMPL_BASELINE) want_baseline = true;
    if (only == IMPL_SPLIT) want_split = true;
    if (only >= 0)
        for (int k = 0; k < NIMPL; k++)
            if (k != only) want_peer[k] = false;

    /* A peer that was asked for but not built is reported, never silently
     * dropped; asked for by name (--impl, --only) it is an error. */
    bool missing_explicit = false;
    for (int k = IMPL_OMP; k <= IMPL_TBB; k++) {
        bool built = k == IMPL_OMP ? OMP_BUILT : TBB_BUILT;
        const char *why = k == IMPL_OMP ? CLOVE_BENCH_OPENMP_MISSING
                                        : CLOVE_BENCH_TBB_MISSING;
        if (!want_peer[k] || built) continue;
        printf("peer %s: not built (%s)\n", impl_name[k], why);
        if (explicit_peer[k]) {
            fprintf(stderr, "tree_sum: peer %s: not built (%s)\n", impl_name[k], why);
            missing_explicit = true;
        }
        want_peer[k] = false;
    }
    fflush(stdout);
    if (missing_explicit) exit(2);

    /* Configurations, in the order they are sampled within a round. */
    struct config cfg[(NIMPL - 2) * MAX_LIST + 2];
    size_t ncfg = 0;
    if (want_baseline && (only < 0 || only == IMPL_BASELINE))
        cfg[ncfg++] = (struct config){ .impl = IMPL_BASELINE, .threads = 1 };
    if (want_split && (only < 0 || only == IMPL_SPLIT))
        cfg[ncfg++] = (struct config){ .impl = IMPL_SPLIT, .threads = 2 };
    for (int f = IMPL_CLOVE; f <= IMPL_TYPED_DBG; f++)
        if (only < 0 ? f == IMPL_CLOVE || want_form[f] : only == f)
            for (size_t k = 0; k < nthreads; k++)
                cfg[ncfg++] = (struct config){ .impl = (enum impl)f,
                                               .threads = (unsigned)threads[k] };
    for (int p = IMPL_OMP; p <= IMPL_TBB; p++)
        if (want_peer[p])
            for (size_t k = 0; k < nthreads; k++)
                cfg[ncfg++] = (struct config){ .impl = (enum impl)p,
                                               .threads = (unsigned)threads[k] };
    bool any_peer = false, any_plain = false;
    for (size_t k = 0; k < ncfg; k++) {
        if (is_peer(cfg[k].impl))
            any_peer = true;
        else
            any_plain = true;
    }

    /* One pool per thread count, shared by clove's forms. */
    clove_pool *pools[MAX_LIST] = { NULL };
    for (size_t k = 0; k < ncfg; k++) {
        if (!is_clove(cfg[k].impl)) continue;
        size_t i = 0;
        while (threads[i] != cfg[k].threads) i++;
        if (!pools[i]) {
            clove_config cc = { .threads = cfg[k].threads,
                                .heartbeat_us = (unsigned)heartbeat };
            int rc = clove_pool_create(&pools[i], &cc);
            if (rc != 0) die("clove_pool_create failed: %s", strerror(rc));
        }
        cfg[k].pool = pools[i];
    }

    /* Peers' thread pools, once per thread count (not timed). */
#ifdef CLOVE_BENCH_OPENMP
    if (want_peer[IMPL_OMP]) {
        for (size_t k = 0; k < ncfg; k++) {
            if (cfg[k].impl != IMPL_OMP) continue;
            unsigned got = omp_peer_setup(cfg[k].threads);
            if (got != cfg[k].threads) {
                fprintf(stderr, "tree_sum: omp: a team of %u threads got %u\n",
                        cfg[k].threads, got);
                exit(2);
            }
        }
        printf("peer omp: %s, OMP_WAIT_POLICY=%s; team sizes checked\n",
               omp_peer_version(),
               getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "(unset)");
    }
#endif
#ifdef CLOVE_BENCH_TBB
    if (want_peer[IMPL_TBB]) {
        unsigned most = 1;
        for (size_t k = 0; k < ncfg; k++)
            if (cfg[k].impl == IMPL_TBB && cfg[k].threads > most)
                most = cfg[k].threads;
        char err[200] = "";
        if (tbb_peer_init(most, err, sizeof err) != 0)
            die("tbb: global_control failed: %s", err);
        printf("peer tbb: %s, global_control(max_allowed_parallelism, %u);"
               " threads inside each arena at once:", tbb_peer_version(), most);
        for (size_t k = 0; k < ncfg; k++) {
            if (cfg[k].impl != IMPL_TBB) continue;
            unsigned joined = 0;
            cfg[k].arena = tbb_peer_create(cfg[k].threads, &joined, err, sizeof err);
            if (!cfg[k].arena) die("tbb: task_arena failed: %s", err);
            printf(" %u/%u", joined, cfg[k].threads);
            if (joined < cfg[k].threads)
                fprintf(stderr, "tree_sum: warning: tbb arena of %u threads:"
                        " only %u were inside it at once\n", cfg[k].threads, joined);
        }
        printf("\n");
    }
#endif

    FILE *csv = NULL;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) die("cannot open %s", csv_path);
        fputs("workload,n,impl,threads,heartbeat_us,median_ns_per_node,min,max,"
              "ratio_to_baseline,samples\n", csv);
    }

    FILE *raw = NULL;
    if (raw_path) {
        raw = fopen(raw_path, "w");
        if (!raw) die("cannot open %s", raw_path);
        fputs("n,impl,threads,round,ns_per_node\n", raw);
    }

    printf("tree_sum: balanced tree, one malloc per 24-byte node, pre-order;"
           " ns per node (lower is better)\n");
    printf("heartbeat: %s%lu us; samples interleaved across configurations;"
           " every run's sum checked\n",
           heartbeat ? "" : "library default ",
           heartbeat ? heartbeat : (unsigned long)CLOVE_DEFAULT_HEARTBEAT_US);

    for (size_t si = 0; si < nsizes; si++) {
        const int64_t n = (int64_t)sizes[si];
        /* The split below --split-min nodes is left out: it would time
         * pthread_create, and its thread's start and exit disturb the
         * samples after it. It goes last, outside the first nc. */
        size_t nc = ncfg, split_at = ncfg;
        for (size_t k = 0; k < ncfg; k++)
            if (cfg[k].impl == IMPL_SPLIT && (unsigned long)n < split_min)
                split_at = k;
        if (split_at < ncfg) {
            struct config tmp = cfg[split_at];
            memmove(&cfg[split_at], &cfg[split_at + 1],
                    (ncfg - split_at - 1) * sizeof cfg[0]);
            cfg[ncfg - 1] = tmp;
            nc--;
        }
        double tb0 = bench_now_ns();
        node *root = tree_build(1, n);
        double tb = bench_now_ns() - tb0;

        unsigned batch = (unsigned)batch_opt;
        if (!batch)
            batch = n >= 100000 ? 1 : (unsigned)((1000000 + n - 1) / n);

        /* Warm-up (untimed). Then calibration: one more sample of every
         * configuration; the median of those sample times decides how many
         * rounds give each configuration about min_time seconds. (Not the
         * slowest one: the first pthread_create of the split, say, can be
         * a 100x outlier.) */
        /* Peers are timed in their (last) warm-up sample: that sample
         * decides how many samples they get (a second calibration sample
         * of OpenMP at 10M nodes and 32 threads would cost seconds). */
        for (size_t k = 0; k < nc; k++) {
            cfg[k].est = 0;
            for (unsigned long w = 0; w < warmup; w++)
                cfg[k].est = sample(&cfg[k], root, n, batch);
        }
        size_t rounds = reps;
        if (!rounds) {
            if (quick) {
                rounds = 3;
            } else if (any_plain) {
                double cal[3 * MAX_LIST + 2];
                size_t ncal = 0;
                for (size_t k = 0; k < nc; k++)
                    if (!is_peer(cfg[k].impl))
                        cal[ncal++] = sample(&cfg[k], root, n, batch);
                double per = bench_median(cal, ncal);
                double r = min_time * 1e9 / (per > 0 ? per : 1e6);
                rounds = r < 5 ? 5 : r > 2000 ? 2000 : (size_t)r;
            }
        }
        size_t peer_lo = SIZE_MAX, peer_hi = 0;
        for (size_t k = 0; k < nc; k++) {
            if (!is_peer(cfg[k].impl)) {
                cfg[k].want = rounds;
                continue;
            }
            size_t w;
            if (peer_reps) {
                w = peer_reps;
            } else if (quick) {
                w = 3;
            } else {
                if (!(cfg[k].est > 0))
                    cfg[k].est = sample(&cfg[k], root, n, batch);
                double r = peer_time * 1e9 / (cfg[k].est > 0 ? cfg[k].est : 1e6);
                w = r < 3 ? 3 : r > 2000 ? 2000 : (size_t)r;
            }
            if (rounds && w > rounds) w = rounds;
            cfg[k].want = w;
            if (w < peer_lo) peer_lo = w;
            if (w > peer_hi) peer_hi = w;
        }
        if (!rounds) /* peers only */
            for (size_t k = 0; k < nc; k++)
                if (cfg[k].want > rounds) rounds = cfg[k].want;
        for (size_t k = 0; k < nc; k++)
            if (!is_peer(cfg[k].impl)) cfg[k].want = rounds;

        for (size_t k = 0; k < nc; k++) {
            cfg[k].samples = malloc(cfg[k].want * sizeof(double));
            cfg[k].round = malloc(cfg[k].want * sizeof(size_t));
            if (!cfg[k].samples || !cfg[k].round) die("%s", "out of memory");
            cfg[k].nsamples = 0;
        }
        /* Every configuration has a sample in every round, except peers with
         * fewer samples: theirs are spread evenly over the rounds (one in
         * the last round of each of `want` equal stretches). */
        double t0 = bench_now_ns();
        for (size_t r = 0; r < rounds; r++)
            for (size_t k = 0; k < nc; k++) {
                size_t w = cfg[k].want;
                if ((r + 1) * w / rounds == r * w / rounds)
                    continue;
                cfg[k].round[cfg[k].nsamples] = r;
                cfg[k].samples[cfg[k].nsamples++] =
                    sample(&cfg[k], root, n, batch) / ((double)n * batch);
            }
        double total = bench_now_ns() - t0;
        if (raw)
            for (size_t r = 0; r < rounds; r++)
                for (size_t k = 0; k < nc; k++)
                    for (size_t i = 0; i < cfg[k].nsamples; i++)
                        if (cfg[k].round[i] == r)
                            fprintf(raw, "%" PRId64 ",%s,%u,%zu,%.4f\n", n,
                                    impl_name[cfg[k].impl], cfg[k].threads, r,
                                    cfg[k].samples[i]);

        printf("\nn = %" PRId64 " nodes (built in %.2f s), %zu samples per"
               " configuration, %u run%s per sample%s, %.1f s sampling\n",
               n, tb / 1e9, rounds, batch, batch == 1 ? "" : "s",
               batch == 1 ? "" : " (sample time divided by runs x nodes)",
               total / 1e9);
        if (any_peer) {
            if (peer_reps || quick)
                printf("peers: %zu samples each (%s)\n", peer_lo,
                       quick ? "--quick" : "--peer-reps");
            else
                printf("peers: %zu%s%.0zu samples each, bounded by --peer-time"
                       " %.1f s per configuration (at least 3, at most %zu),"
                       " spread over the rounds\n", peer_lo,
                       peer_hi > peer_lo ? "-" : "", peer_hi > peer_lo ? peer_hi : 0,
                       peer_time, rounds);
        }
        printf("  %-9s %7s %10s %10s %10s %12s %8s\n", "impl", "threads",
               "median", "min", "max", "vs baseline", "samples");

        double base_median = 0;
        for (size_t k = 0; k < nc; k++) {
            double *v = cfg[k].samples;
            size_t m = cfg[k].nsamples;
            double med = bench_median(v, m);
            if (cfg[k].impl == IMPL_BASELINE) base_median = med;
            char ratio[32] = "-";
            if (base_median > 0)
                snprintf(ratio, sizeof ratio, "%.2fx", med / base_median);
            printf("  %-9s %7u %10.3f %10.3f %10.3f %12s %8zu\n",
                   impl_name[cfg[k].impl], cfg[k].threads, med, v[0], v[m - 1],
                   ratio, m);
            if (csv) {
                fprintf(csv, "tree_sum,%" PRId64 ",%s,%u,%lu,%.4f,%.4f,%.4f,",
                        n, impl_name[cfg[k].impl], cfg[k].threads,
                        is_clove(cfg[k].impl)
                            ? (heartbeat ? heartbeat : CLOVE_DEFAULT_HEARTBEAT_US)
                            : 0ul,
                        med, v[0], v[m - 1]);
                if (base_median > 0)
                    fprintf(csv, "%.4f", med / base_median);
                fprintf(csv, ",%zu\n", m);
            }
            free(cfg[k].samples);
            free(cfg[k].round);
            cfg[k].samples = NULL;
            cfg[k].round = NULL;
        }
        fflush(stdout);
        tree_destroy(root);
        if (split_at < ncfg) { /* back in its place for the next size */
            struct config tmp = cfg[ncfg - 1];
            memmove(&cfg[split_at + 1], &cfg[split_at],
                    (ncfg - split_at - 1) * sizeof cfg[0]);
            cfg[split_at] = tmp;
        }
    }

    for (size_t i = 0; i < nthreads; i++)
        clove_pool_destroy(pools[i]);
#ifdef CLOVE_BENCH_TBB
    for (size_t k = 0; k < ncfg; k++)
        if (cfg[k].arena) tbb_peer_destroy(cfg[k].arena);
    if (want_peer[IMPL_TBB]) tbb_peer_fini();
#endif
    if (raw && fclose(raw) != 0)
        die("error writing %s", raw_path);
    if (csv && fclose(csv) != 0)
        die("error writing %s", csv_path);
    return 0;
}
