/* SPDX-License-Identifier: MIT */
/*
 * rec_harness.c - the measurement loop of the recursive benchmarks (fib,
 * uts, nqueens) on the harness of bench/harness.h, with tree_sum's
 * options, output and CSV columns.
 *
 * The optional "pair" row (--pair) is a control for the second core: the
 * baseline run on two threads at once, each the whole problem, timed from
 * the start of both (a pthread_create) to the end of both. About 1.00x of
 * the baseline when the second core is free and a run takes milliseconds;
 * a round where it is much more had the machine busy elsewhere
 * (bench/paired_ratios.py counts those rounds apart).
 *
 * The optional "copies" rows (--copies) generalize it to every -t count k:
 * the baseline run on k threads at once, each the whole problem, timed
 * from the start of the first thread to the end of the last, per work
 * unit of all k copies (the wall time divided by k times one copy's
 * units). That is the time a perfect parallel run on k threads of this
 * machine would take, with no scheduler at all: the baseline's time over
 * k where k cores run as fast as one, more where hyperthreads share a
 * core, the clock drops with every core busy, or caches and memory are
 * shared. Copies at 1 thread (or the baseline) over copies at k is the
 * machine's ceiling for a speed-up at k threads (sim/kit_compare.py reads
 * it so).
 *
 * Per size: the sequential kernel runs once, untimed, for the expected
 * result and the number of work units (calls, nodes); then every
 * configuration is warmed up, the others calibrated, and samples are taken
 * interleaved (one sample of every configuration per round; peers get fewer,
 * spread over the rounds, bounded by --peer-time; each peer sample is
 * followed by a 20 ms untimed pause, see settle()). Every run's result is
 * compared with the sequential one and a mismatch aborts.
 */
#define _GNU_SOURCE
#include "harness.h"
#include "rec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum impl {
    IMPL_BASELINE, IMPL_PAIR, IMPL_COPIES, IMPL_CLOVE, IMPL_TYPED, IMPL_OMP, IMPL_TBB, IMPL_OMP_CUT,
    IMPL_TBB_CUT, NIMPL
};
static const bench_impl impls[NIMPL] = {
    { "baseline", BENCH_BASELINE, 1 }, { "pair", BENCH_OTHER, 2 }, { "copies", BENCH_OTHER, 0 },
    { "clove", BENCH_CLOVE, 0 },
    { "typed", BENCH_CLOVE, 0 },
    { "omp", BENCH_OMP, 0 },           { "tbb", BENCH_TBB, 0 },
    { "omp_cutoff", BENCH_OMP, 0 },    { "tbb_cutoff", BENCH_TBB, 0 },
};

static const rec_workload *W;
static unsigned cutoff;

/* What a sample runs on: one size. */
struct work {
    uint64_t n;
    rec_result expect;
    unsigned batch;
};

/* One thread of the "pair" and "copies" rows: runs baseline runs, each
 * checked. */
struct copy_arg {
    uint64_t n;
    unsigned runs;
    rec_result expect;
    bool wrong;
};

static void *copy_thread(void *p)
{
    struct copy_arg *a = p;
    for (unsigned i = 0; i < a->runs; i++) {
        rec_result r = W->baseline(a->n);
        if (r.value != a->expect.value || r.aux != a->expect.aux)
            a->wrong = true;
    }
    return NULL;
}

/* The baseline on k threads at once, runs times on each; false if a
 * run's result was wrong. */
static bool run_copies(uint64_t n, unsigned k, unsigned runs, rec_result expect)
{
    struct copy_arg *a = malloc(k * sizeof *a);
    if (a == NULL)
        bench_die("%s", "copies: out of memory");
    for (unsigned i = 0; i < k; i++)
        a[i] = (struct copy_arg){ n, runs, expect, false };
    bench_on_threads(k, copy_thread, a, sizeof *a);
    bool ok = true;
    for (unsigned i = 0; i < k; i++)
        ok = ok && !a[i].wrong;
    free(a);
    return ok;
}

static rec_result run_once(const bench_config *c, uint64_t n)
{
    switch (c->impl) {
    case IMPL_BASELINE: return W->baseline(n);
    case IMPL_CLOVE: return W->clove(c->pool, n);
    case IMPL_TYPED: return W->clove_typed(c->pool, n);
#ifdef CLOVE_BENCH_OPENMP
    case IMPL_OMP: return W->omp(n, c->threads, 0);
    case IMPL_OMP_CUT: return W->omp(n, c->threads, cutoff);
#endif
#ifdef CLOVE_BENCH_TBB
    case IMPL_TBB: return W->tbb(c->arena, n, 0);
    case IMPL_TBB_CUT: return W->tbb(c->arena, n, cutoff);
#endif
    default: break;
    }
    return (rec_result){ UINT64_MAX, UINT64_MAX };
}

static double sample(const bench_config *c, void *ctx)
{
    const struct work *w = ctx;
    const uint64_t n = w->n;
    const rec_result expect = w->expect;
    const unsigned batch = w->batch;
    if (impls[c->impl].kind == BENCH_OMP)
        bench_omp_prepare(c->threads);
    double t0 = bench_now_ns();
    if (c->impl == IMPL_PAIR || c->impl == IMPL_COPIES) {
        /* The batch on every thread, started once. pair: per unit of one
         * copy (the time of each); copies: per unit of all k copies. */
        if (!run_copies(n, c->threads, batch, expect)) {
            fprintf(stderr, "%s: WRONG RESULT: impl=%s threads=%u n=%" PRIu64 "\n",
                    bench_prog, impls[c->impl].name, c->threads, n);
            abort();
        }
        double ns = bench_now_ns() - t0;
        return c->impl == IMPL_COPIES ? ns / c->threads : ns;
    }
    for (unsigned i = 0; i < batch; i++) {
        rec_result got = run_once(c, n);
        if (got.value != expect.value || got.aux != expect.aux) {
            fprintf(stderr,
                    "%s: WRONG RESULT: impl=%s threads=%u n=%" PRIu64 " got %" PRIu64
                    "/%" PRIu64 " expected %" PRIu64 "/%" PRIu64 "\n",
                    bench_prog, impls[c->impl].name, c->threads, n, got.value, got.aux,
                    expect.value, expect.aux);
            abort();
        }
    }
    return bench_now_ns() - t0;
}

/* After a peer's sample, 20 ms untimed: libgomp's and oneTBB's idle
 * workers spin for a while after a run before they sleep, and on a 2-core
 * machine that spinning would be charged to whichever sample comes next
 * (the baseline's, at the start of the next round, after tbb_cutoff). */
static void settle(void)
{
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* A sample of the rounds: a peer's is followed by settle(). */
static double sample_settled(const bench_config *c, void *ctx)
{
    double ns = sample(c, ctx);
    if (bench_is_peer(&impls[c->impl]))
        settle();
    return ns;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: %s [-n N]... [-t THREADS]... [--baseline] [--pair] [--copies] [--peers]\n"
            "       [--cutoff] [--impl IMPL]... [--only IMPL] [--cutoff-at C] [--reps R]\n"
            "       [--batch B] [--min-time S] [--peer-time S] [--peer-reps P]\n"
            "       [--warmup W] [--heartbeat US] [--csv FILE] [--raw FILE] [--quick]\n"
            "  %s\n"
            "  IMPL is baseline, pair, copies, clove, typed (a typed task, CLOVE_TASK:\n"
            "  fib only),\n"
            "  omp, tbb, omp_cutoff or tbb_cutoff\n"
            "  -n N          size (repeatable; default %" PRIu64 ", --quick %" PRIu64
            ", %" PRIu64 "..%" PRIu64 ")\n"
            "  -t THREADS    clove / peer thread count (repeatable; default 1 and 2)\n"
            "  --baseline    include the sequential baseline\n"
            "  --pair        include the baseline run on two threads at once (row\n"
            "                pair; the thread start included): about 1.00x when\n"
            "                the second core is free and a run takes milliseconds\n"
            "  --copies      include the baseline run on THREADS threads at once, for\n"
            "                every -t (rows copies; the ns per unit of all the\n"
            "                copies' work): a perfect parallel run on this machine\n"
            "  --peers       include OpenMP tasks and oneTBB, forking at every fork\n"
            "                point like clove (those not built are reported)\n"
            "  --cutoff      also the peers with a sequential cutoff (rows\n"
            "                omp_cutoff, tbb_cutoff; see --cutoff-at)\n"
            "  --cutoff-at C the cutoff (default %u): fib forks only while n >= C,\n"
            "                uts and nqueens only at depth < C\n"
            "  --impl IMPL   include this implementation (repeatable); a peer asked\n"
            "                for this way that was not built is an error\n"
            "  --only IMPL   run only this implementation\n"
            "  --reps R      samples per configuration (default: enough for\n"
            "                --min-time, at least 5, at most 2000)\n"
            "  --peer-time S target seconds per peer configuration (default 2),\n"
            "                at least 3 samples, at most as many as the others\n"
            "  --peer-reps P samples per peer configuration\n"
            "  --batch B     runs per sample (default: 1 when a run has >= 100000\n"
            "                %ss, else enough runs for about 1M)\n"
            "  --min-time S  target seconds per configuration (default 0.5)\n"
            "  --warmup W    untimed samples per configuration first (default 1)\n"
            "  --heartbeat US  clove heartbeat interval (default: the library's)\n"
            "  --csv FILE    results as CSV (tree_sum's columns; the ns are per %s)\n"
            "  --raw FILE    every sample as CSV\n"
            "  --quick       smoke test: 3 samples, default size %" PRIu64 "\n",
            bench_prog, W->title, W->default_n, W->quick_n, W->min_n, W->max_n,
            W->default_cutoff, W->unit, W->unit, W->quick_n);
    if (W->options)
        fputs(W->options, stderr);
    exit(2);
}

/* Deep recursion (uts): OpenMP worker stacks come from OMP_STACKSIZE, read
 * by libgomp when the program starts; so set it and start again. */
static void maybe_reexec(char **argv)
{
#ifdef CLOVE_BENCH_OPENMP
    if (!W->stack_size || getenv("OMP_STACKSIZE"))
        return;
    char v[32];
    snprintf(v, sizeof v, "%zuK", W->stack_size / 1024);
    if (setenv("OMP_STACKSIZE", v, 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    /* If that failed, carry on with the default stacks. */
    unsetenv("OMP_STACKSIZE");
#else
    (void)argv;
#endif
}

int rec_main(const rec_workload *w, int argc, char **argv)
{
    W = w;
    bench_prog = w->name;
    unsigned long sizes[BENCH_MAX_LIST];
    size_t nsizes = 0;
    bench_opts o;
    bench_opts_init(&o, impls, NIMPL, BENCH_OPT_BATCH | BENCH_OPT_WARMUP | BENCH_OPT_IMPL);
    o.want[IMPL_TYPED] = false; /* only when asked for: --impl typed */
    cutoff = w->default_cutoff;

    for (bench_args a = { argc, argv, 1, usage }; a.i < argc; a.i++) {
        if (bench_is(&a, "-n")) {
            if (bench_list_add(&a, sizes, &nsizes, (unsigned long)w->max_n) < w->min_n)
                bench_die("%s", "-n too small");
        } else if (bench_is(&a, "--baseline")) {
            o.want[IMPL_BASELINE] = true;
        } else if (bench_is(&a, "--pair")) {
            o.want[IMPL_PAIR] = true;
        } else if (bench_is(&a, "--copies")) {
            o.want[IMPL_COPIES] = true;
        } else if (bench_is(&a, "--peers")) {
            o.want[IMPL_OMP] = o.want[IMPL_TBB] = true;
        } else if (bench_is(&a, "--cutoff")) {
            o.want[IMPL_OMP_CUT] = o.want[IMPL_TBB_CUT] = true;
        } else if (bench_is(&a, "--cutoff-at")) {
            cutoff = (unsigned)bench_parse_ul("--cutoff-at", bench_value(&a), 1000000);
        } else if (!bench_option(&o, &a)) {
            usage();
        }
    }
    if (!nsizes) sizes[nsizes++] = o.quick ? w->quick_n : w->default_n;
    if (!o.nthreads) { o.threads[o.nthreads++] = 1; o.threads[o.nthreads++] = 2; }
    bench_apply_only(&o);
    if (!w->clove_typed && o.want[IMPL_TYPED]) {
        if (o.named[IMPL_TYPED])
            bench_die("%s", "typed: this workload has no typed-task form");
        o.want[IMPL_TYPED] = false;
    }

    if (o.want[IMPL_OMP] || o.want[IMPL_OMP_CUT])
        maybe_reexec(argv); /* before any output: it starts the program again */

    bench_drop_unbuilt(&o);

    bench_set *s = bench_start(&o, w->stack_size);
    bench_omp_setup(s, true);
    bench_tbb_setup(s, w->stack_size);

    FILE *csv = bench_csv_open(o.csv_path, BENCH_CSV_HEADER);
    FILE *raw = bench_csv_open(o.raw_path, BENCH_RAW_HEADER);

    printf("%s: %s; ns per %s (lower is better)\n", w->name, w->title, w->unit);
    printf("heartbeat: %s%lu us; samples interleaved across configurations;"
           " every run's result checked", o.heartbeat ? "" : "library default ",
           bench_heartbeat_us(o.heartbeat));
    if (o.want[IMPL_OMP_CUT] || o.want[IMPL_TBB_CUT])
        printf("; *_cutoff rows: cutoff %u", cutoff);
    printf("\n");

    for (size_t si = 0; si < nsizes; si++) {
        const uint64_t n = sizes[si];
        struct work wk = { n, { 0, 0 }, 0 };
        double units = 0;
        double tp0 = bench_now_ns();
        w->prepare(n, &wk.expect, &units);
        double tp = bench_now_ns() - tp0;

        unsigned batch = (unsigned)o.batch;
        if (!batch)
            batch = units >= 100000 ? 1 : (unsigned)((1000000 + units - 1) / units);
        wk.batch = batch;

        bench_plan p = bench_plan_samples(s, s->ncfg, &o, sample, &wk);
        double total = bench_rounds(s, s->ncfg, p.rounds, units * batch, sample_settled, &wk);
        bench_write_raw(raw, s, s->ncfg, p.rounds, n);

        printf("\nn = %" PRIu64 ": result %" PRIu64, n, wk.expect.value);
        if (wk.expect.aux) printf(" (aux %" PRIu64 ")", wk.expect.aux);
        printf(", %.0f %ss, sequential check run %.2f s; %zu samples per"
               " configuration, %u run%s per sample, %.1f s sampling\n",
               units, w->unit, tp / 1e9, p.rounds, batch, batch == 1 ? "" : "s",
               total / 1e9);
        bench_print_peers(s, &p, &o);
        bench_report(s, s->ncfg, 10, csv, w->name, n, o.heartbeat);
        fflush(stdout);
    }

    bench_teardown(s);
    bench_csv_close(raw, o.raw_path);
    bench_csv_close(csv, o.csv_path);
    return 0;
}
