/* SPDX-License-Identifier: MIT */
/*
 * rec_harness.c - the measurement loop of the recursive benchmarks (fib,
 * uts, nqueens), in the manner of tree_sum.c, whose options, output and CSV
 * columns it follows (tree_sum.c itself is left as it is).
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
#include "bench_util.h"
#include "rec.h"
#include "tree.h" /* omp_peer_setup, tbb_peer_*: peers/omp_tree_sum.c, tbb_tree_sum.cpp */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


static const char *prog = "bench";

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(2);
}

enum impl {
    IMPL_BASELINE, IMPL_CLOVE, IMPL_TYPED, IMPL_OMP, IMPL_TBB, IMPL_OMP_CUT, IMPL_TBB_CUT, NIMPL
};
static const char *const impl_name[] = { "baseline",   "clove",     "typed",     "omp",
                                         "tbb",        "omp_cutoff", "tbb_cutoff" };

static bool is_peer(enum impl i)
{
    return i >= IMPL_OMP;
}

static bool is_clove(enum impl i)
{
    return i == IMPL_CLOVE || i == IMPL_TYPED;
}

static bool is_omp(enum impl i)
{
    return i == IMPL_OMP || i == IMPL_OMP_CUT;
}

static bool built(enum impl i)
{
    return is_omp(i) ? OMP_BUILT : TBB_BUILT;
}

struct config {
    enum impl impl;
    unsigned threads;
    clove_pool *pool; /* clove */
    void *arena;      /* tbb, tbb_cutoff */
    double *samples;  /* ns per unit */
    size_t *round;
    size_t nsamples, want;
    double est;       /* peers: time of the warm-up sample (ns) */
};


static const rec_workload *W;
static unsigned cutoff;

static rec_result run_once(const struct config *c, uint64_t n)
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

static double sample(const struct config *c, uint64_t n, rec_result expect,
                     unsigned batch)
{
#ifdef CLOVE_BENCH_OPENMP
    /* As in tree_sum: libgomp resizes its one pool to each region's team,
     * so an untimed empty region of this size keeps thread creation out. */
    if (is_omp(c->impl) && omp_peer_setup(c->threads) != c->threads) {
        fprintf(stderr, "%s: omp: a team of %u threads was not granted\n", prog,
                c->threads);
        abort();
    }
#endif
    double t0 = bench_now_ns();
    for (unsigned i = 0; i < batch; i++) {
        rec_result got = run_once(c, n);
        if (got.value != expect.value || got.aux != expect.aux) {
            fprintf(stderr,
                    "%s: WRONG RESULT: impl=%s threads=%u n=%" PRIu64 " got %" PRIu64
                    "/%" PRIu64 " expected %" PRIu64 "/%" PRIu64 "\n",
                    prog, impl_name[c->impl], c->threads, n, got.value, got.aux,
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



#define MAX_LIST 32

static unsigned long parse_ul(const char *opt, const char *s, unsigned long max)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || v < 0 || v > (double)max || v != (double)(unsigned long)v)
        die("bad value for %s", opt);
    return (unsigned long)v;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: %s [-n N]... [-t THREADS]... [--baseline] [--peers] [--cutoff]\n"
            "       [--impl IMPL]... [--only IMPL] [--cutoff-at C] [--reps R]\n"
            "       [--batch B] [--min-time S] [--peer-time S] [--peer-reps P]\n"
            "       [--warmup W] [--heartbeat US] [--csv FILE] [--raw FILE] [--quick]\n"
            "  %s\n"
            "  IMPL is baseline, clove, typed (a typed task, CLOVE_TASK: fib only),\n"
            "  omp, tbb, omp_cutoff or tbb_cutoff\n"
            "  -n N          size (repeatable; default %" PRIu64 ", --quick %" PRIu64
            ", %" PRIu64 "..%" PRIu64 ")\n"
            "  -t THREADS    clove / peer thread count (repeatable; default 1 and 2)\n"
            "  --baseline    include the sequential baseline\n"
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
            prog, W->title, W->default_n, W->quick_n, W->min_n, W->max_n,
            W->default_cutoff, W->unit, W->unit, W->quick_n);
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
    prog = w->name;
    uint64_t sizes[MAX_LIST];
    unsigned long threads[MAX_LIST];
    size_t nsizes = 0, nthreads = 0;
    bool want_baseline = false, want_typed = false, quick = false;
    int only = -1;
    bool want[NIMPL] = { false }, explicit_peer[NIMPL] = { false };
    unsigned long reps = 0, batch_opt = 0, warmup = 1, heartbeat = 0, peer_reps = 0;
    double min_time = 0.5, peer_time = 2.0;
    const char *csv_path = NULL, *raw_path = NULL;
    cutoff = w->default_cutoff;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (usage(), ""))
        if (!strcmp(a, "-n")) {
            if (nsizes == MAX_LIST) die("%s", "too many -n");
            uint64_t v = parse_ul("-n", NEXT(), (unsigned long)w->max_n);
            if (v < w->min_n) die("%s", "-n too small");
            sizes[nsizes++] = v;
        } else if (!strcmp(a, "-t")) {
            if (nthreads == MAX_LIST) die("%s", "too many -t");
            threads[nthreads] = parse_ul("-t", NEXT(), CLOVE_MAX_THREADS);
            if (threads[nthreads] == 0) die("%s", "-t must be positive");
            nthreads++;
        } else if (!strcmp(a, "--baseline")) {
            want_baseline = true;
        } else if (!strcmp(a, "--peers")) {
            want[IMPL_OMP] = want[IMPL_TBB] = true;
        } else if (!strcmp(a, "--cutoff")) {
            want[IMPL_OMP_CUT] = want[IMPL_TBB_CUT] = true;
        } else if (!strcmp(a, "--cutoff-at")) {
            cutoff = (unsigned)parse_ul("--cutoff-at", NEXT(), 1000000);
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
            else if (which == IMPL_TYPED)
                want_typed = true;
            if (is_peer((enum impl)which))
                want[which] = explicit_peer[which] = true;
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
    if (!nsizes) sizes[nsizes++] = quick ? w->quick_n : w->default_n;
    if (!nthreads) { threads[nthreads++] = 1; threads[nthreads++] = 2; }
    if (only == IMPL_BASELINE) want_baseline = true;
    if (only >= 0)
        for (int k = IMPL_OMP; k < NIMPL; k++)
            if (k != only) want[k] = false;

    if (want[IMPL_OMP] || want[IMPL_OMP_CUT])
        maybe_reexec(argv); /* before any output: it starts the program again */

    bool missing_explicit = false;
    for (int k = IMPL_OMP; k < NIMPL; k++) {
        const char *why = is_omp((enum impl)k) ? CLOVE_BENCH_OPENMP_MISSING
                                               : CLOVE_BENCH_TBB_MISSING;
        if (!want[k] || built((enum impl)k)) continue;
        printf("peer %s: not built (%s)\n", impl_name[k], why);
        if (explicit_peer[k]) {
            fprintf(stderr, "%s: peer %s: not built (%s)\n", prog, impl_name[k], why);
            missing_explicit = true;
        }
        want[k] = false;
    }
    fflush(stdout);
    if (missing_explicit) exit(2);

    struct config cfg[(NIMPL - 1) * MAX_LIST + 1];
    size_t ncfg = 0;
    if (want_baseline && (only < 0 || only == IMPL_BASELINE))
        cfg[ncfg++] = (struct config){ .impl = IMPL_BASELINE, .threads = 1 };
    if (only < 0 || only == IMPL_CLOVE)
        for (size_t k = 0; k < nthreads; k++)
            cfg[ncfg++] = (struct config){ .impl = IMPL_CLOVE,
                                           .threads = (unsigned)threads[k] };
    if (w->clove_typed && (only < 0 ? want_typed : only == IMPL_TYPED))
        for (size_t k = 0; k < nthreads; k++)
            cfg[ncfg++] = (struct config){ .impl = IMPL_TYPED,
                                           .threads = (unsigned)threads[k] };
    for (int p = IMPL_OMP; p < NIMPL; p++)
        if (want[p])
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

    for (size_t k = 0; k < ncfg; k++) {
        if (!is_clove(cfg[k].impl)) continue;
        clove_config cc = { .threads = cfg[k].threads,
                            .heartbeat_us = (unsigned)heartbeat,
                            .stack_size = w->stack_size };
        int rc = clove_pool_create(&cfg[k].pool, &cc);
        if (rc != 0) die("clove_pool_create failed: %s", strerror(rc));
    }

#ifdef CLOVE_BENCH_OPENMP
    if (want[IMPL_OMP] || want[IMPL_OMP_CUT]) {
        for (size_t k = 0; k < ncfg; k++) {
            if (!is_omp(cfg[k].impl)) continue;
            unsigned got = omp_peer_setup(cfg[k].threads);
            if (got != cfg[k].threads) {
                fprintf(stderr, "%s: omp: a team of %u threads got %u\n", prog,
                        cfg[k].threads, got);
                exit(2);
            }
        }
        printf("peer omp: %s, OMP_WAIT_POLICY=%s, OMP_STACKSIZE=%s; team sizes checked\n",
               omp_peer_version(),
               getenv("OMP_WAIT_POLICY") ? getenv("OMP_WAIT_POLICY") : "(unset)",
               getenv("OMP_STACKSIZE") ? getenv("OMP_STACKSIZE") : "(unset)");
    }
#endif
#ifdef CLOVE_BENCH_TBB
    bool any_tbb = want[IMPL_TBB] || want[IMPL_TBB_CUT];
    if (any_tbb) {
        unsigned most = 1;
        for (size_t k = 0; k < ncfg; k++)
            if (!is_omp(cfg[k].impl) && is_peer(cfg[k].impl) && cfg[k].threads > most)
                most = cfg[k].threads;
        char err[200] = "";
        if (w->stack_size && tbb_rec_stack(w->stack_size, err, sizeof err) != 0)
            die("tbb: global_control(thread_stack_size) failed: %s", err);
        if (tbb_peer_init(most, err, sizeof err) != 0)
            die("tbb: global_control failed: %s", err);
        printf("peer tbb: %s, global_control(max_allowed_parallelism, %u)%s;"
               " threads inside each arena at once:", tbb_peer_version(), most,
               w->stack_size ? ", global_control(thread_stack_size)" : "");
        for (size_t k = 0; k < ncfg; k++) {
            if (!is_peer(cfg[k].impl) || is_omp(cfg[k].impl)) continue;
            unsigned joined = 0;
            cfg[k].arena = tbb_peer_create(cfg[k].threads, &joined, err, sizeof err);
            if (!cfg[k].arena) die("tbb: task_arena failed: %s", err);
            printf(" %u/%u", joined, cfg[k].threads);
            if (joined < cfg[k].threads)
                fprintf(stderr, "%s: warning: tbb arena of %u threads: only %u were"
                        " inside it at once\n", prog, cfg[k].threads, joined);
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

    printf("%s: %s; ns per %s (lower is better)\n", w->name, w->title, w->unit);
    printf("heartbeat: %s%lu us; samples interleaved across configurations;"
           " every run's result checked", heartbeat ? "" : "library default ",
           heartbeat ? heartbeat : (unsigned long)CLOVE_DEFAULT_HEARTBEAT_US);
    if (want[IMPL_OMP_CUT] || want[IMPL_TBB_CUT])
        printf("; *_cutoff rows: cutoff %u", cutoff);
    printf("\n");

    for (size_t si = 0; si < nsizes; si++) {
        const uint64_t n = sizes[si];
        rec_result expect;
        double units = 0;
        double tp0 = bench_now_ns();
        w->prepare(n, &expect, &units);
        double tp = bench_now_ns() - tp0;

        unsigned batch = (unsigned)batch_opt;
        if (!batch)
            batch = units >= 100000 ? 1 : (unsigned)((1000000 + units - 1) / units);

        for (size_t k = 0; k < ncfg; k++) {
            cfg[k].est = 0;
            for (unsigned long i = 0; i < warmup; i++)
                cfg[k].est = sample(&cfg[k], n, expect, batch);
        }
        size_t rounds = reps;
        if (!rounds) {
            if (quick) {
                rounds = 3;
            } else if (any_plain) {
                double cal[(NIMPL - 1) * MAX_LIST + 1];
                size_t ncal = 0;
                for (size_t k = 0; k < ncfg; k++)
                    if (!is_peer(cfg[k].impl))
                        cal[ncal++] = sample(&cfg[k], n, expect, batch);
                double per = bench_median(cal, ncal);
                double r = min_time * 1e9 / (per > 0 ? per : 1e6);
                rounds = r < 5 ? 5 : r > 2000 ? 2000 : (size_t)r;
            }
        }
        size_t peer_lo = SIZE_MAX, peer_hi = 0;
        for (size_t k = 0; k < ncfg; k++) {
            if (!is_peer(cfg[k].impl)) {
                cfg[k].want = rounds;
                continue;
            }
            size_t wn;
            if (peer_reps) {
                wn = peer_reps;
            } else if (quick) {
                wn = 3;
            } else {
                if (!(cfg[k].est > 0))
                    cfg[k].est = sample(&cfg[k], n, expect, batch);
                double r = peer_time * 1e9 / (cfg[k].est > 0 ? cfg[k].est : 1e6);
                wn = r < 3 ? 3 : r > 2000 ? 2000 : (size_t)r;
            }
            if (rounds && wn > rounds) wn = rounds;
            cfg[k].want = wn;
            if (wn < peer_lo) peer_lo = wn;
            if (wn > peer_hi) peer_hi = wn;
        }
        if (!rounds)
            for (size_t k = 0; k < ncfg; k++)
                if (cfg[k].want > rounds) rounds = cfg[k].want;
        for (size_t k = 0; k < ncfg; k++)
            if (!is_peer(cfg[k].impl)) cfg[k].want = rounds;

        for (size_t k = 0; k < ncfg; k++) {
            cfg[k].samples = malloc((cfg[k].want + 1) * sizeof(double));
            cfg[k].round = malloc((cfg[k].want + 1) * sizeof(size_t));
            if (!cfg[k].samples || !cfg[k].round) die("%s", "out of memory");
            cfg[k].nsamples = 0;
        }
        double t0 = bench_now_ns();
        for (size_t r = 0; r < rounds; r++)
            for (size_t k = 0; k < ncfg; k++) {
                size_t wn = cfg[k].want;
                if ((r + 1) * wn / rounds == r * wn / rounds)
                    continue;
                cfg[k].round[cfg[k].nsamples] = r;
                cfg[k].samples[cfg[k].nsamples++] =
                    sample(&cfg[k], n, expect, batch) / (units * batch);
                if (is_peer(cfg[k].impl))
                    settle();
            }
        double total = bench_now_ns() - t0;
        if (raw)
            for (size_t r = 0; r < rounds; r++)
                for (size_t k = 0; k < ncfg; k++)
                    for (size_t i = 0; i < cfg[k].nsamples; i++)
                        if (cfg[k].round[i] == r)
                            fprintf(raw, "%" PRIu64 ",%s,%u,%zu,%.4f\n", n,
                                    impl_name[cfg[k].impl], cfg[k].threads, r,
                                    cfg[k].samples[i]);

        printf("\nn = %" PRIu64 ": result %" PRIu64, n, expect.value);
        if (expect.aux) printf(" (aux %" PRIu64 ")", expect.aux);
        printf(", %.0f %ss, sequential check run %.2f s; %zu samples per"
               " configuration, %u run%s per sample, %.1f s sampling\n",
               units, w->unit, tp / 1e9, rounds, batch, batch == 1 ? "" : "s",
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
        printf("  %-10s %7s %10s %10s %10s %12s %8s\n", "impl", "threads",
               "median", "min", "max", "vs baseline", "samples");
        double base_median = 0;
        for (size_t k = 0; k < ncfg; k++) {
            double *v = cfg[k].samples;
            size_t m = cfg[k].nsamples;
            double med = bench_median(v, m);
            if (cfg[k].impl == IMPL_BASELINE) base_median = med;
            char ratio[32] = "-";
            if (base_median > 0)
                snprintf(ratio, sizeof ratio, "%.2fx", med / base_median);
            printf("  %-10s %7u %10.3f %10.3f %10.3f %12s %8zu\n",
                   impl_name[cfg[k].impl], cfg[k].threads, med, v[0], v[m - 1],
                   ratio, m);
            if (csv) {
                fprintf(csv, "%s,%" PRIu64 ",%s,%u,%lu,%.4f,%.4f,%.4f,", w->name, n,
                        impl_name[cfg[k].impl], cfg[k].threads,
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
    }

    for (size_t k = 0; k < ncfg; k++)
        clove_pool_destroy(cfg[k].pool);
#ifdef CLOVE_BENCH_TBB
    for (size_t k = 0; k < ncfg; k++)
        if (cfg[k].arena) tbb_peer_destroy(cfg[k].arena);
    if (any_tbb) {
        tbb_peer_fini();
        tbb_rec_fini();
    }
#endif
    if (raw && fclose(raw) != 0)
        die("error writing %s", raw_path);
    if (csv && fclose(csv) != 0)
        die("error writing %s", csv_path);
    return 0;
}
