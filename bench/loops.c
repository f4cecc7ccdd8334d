/* SPDX-License-Identifier: MIT */
/*
 * loops.c - parallel loops: clove_for against the plain sequential loop and
 * (optionally) OpenMP `parallel for` and oneTBB `parallel_for`.
 *
 * Three workloads (bodies in bench/loops.h, shared with the peers so that
 * every implementation runs the same inlined per-iteration code):
 *   a  cheap, vectorisable: a[i] = b[i] * 2 + 1 over floats (default 4e7).
 *      b[i] is the float whose bit pattern is 0x4B800000 + i (2^24 upward,
 *      all distinct); for |b| >= 2^24, b * 2 + 1 rounds to 2b, so the
 *      outputs are distinct as well.
 *   b  uniform, compute-heavy: LOOPS_B_STEPS dependent multiply/xor-shift
 *      steps per iteration (a few hundred ns), out[i] a bijection of i
 *      (default 5e5 iterations).
 *   c  irregular: 4 or 4000 steps per iteration (1000x); heavy iterations
 *      in runs of 64 (hot blocks chosen by a hash) whose density rises
 *      linearly along the range, so the upper half holds 3/4 of the heavy
 *      work; out[i] carries i in its upper half (default 1e6 iterations).
 *
 * Implementations (same binary, same flags, -O3):
 *   plain        the sequential loop (the baseline of every ratio)
 *   split        the range cut in two halves by hand, the lower half on a
 *                new pthread, the upper one on the calling thread, both the
 *                plain loop; pthread_create/join inside the timed region.
 *                The control: on this 2-core machine a split that does not
 *                reach ~0.5x (a, b) means the second core was busy
 *   clove        clove_for over [0, n), body = the same range loop; one
 *                clove_pool_run per run; a pool per thread count, created
 *                once (not timed)
 *   omp-static, omp-dynamic, omp-guided
 *                OpenMP `parallel for` with that schedule and its default
 *                chunk (optional peer, --peers)
 *   tbb          tbb::parallel_for, blocked_range, default partitioner
 *                (auto_partitioner) (optional peer, --peers)
 *
 * Every run's output is compared, element by element, with the sequential
 * loop's (computed once, untimed); before every run the output is filled
 * with a poison pattern (untimed), so a skipped element cannot pass. A
 * wrong element aborts the program. Samples (one run each) are interleaved
 * across configurations, round by round; the table shows the median, min
 * and max ns per element and the ratio of the median to the plain loop's.
 * The loop targets (bench/README.md, "Targets and findings") are then
 * checked against the medians and printed as PASS / MISS lines:
 * informational, the exit status does not depend on them.
 *
 * Usage: loops [-w a|b|c]... [-n N] [-t THREADS]... [--peers] [--impl IMPL]...
 *              [--no-clove] [--no-split] [--reps R] [--min-time S] [--peer-time S] [--peer-reps P]
 *              [--heartbeat US] [--csv FILE] [--raw FILE] [--quick]
 */
#define _GNU_SOURCE
#include <clove.h>

#include "loops.h"
#include "harness.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Implementations                                                          */
/* ------------------------------------------------------------------------ */

enum impl { IMPL_PLAIN, IMPL_SPLIT, IMPL_CLOVE, IMPL_OMP_STATIC, IMPL_OMP_DYNAMIC, IMPL_OMP_GUIDED,
            IMPL_TBB, NIMPL };
static const bench_impl impls[NIMPL] = {
    { "plain", BENCH_BASELINE, 1 },  { "split", BENCH_OTHER, 2 },
    { "clove", BENCH_CLOVE, 0 },     { "omp-static", BENCH_OMP, 0 },
    { "omp-dynamic", BENCH_OMP, 0 }, { "omp-guided", BENCH_OMP, 0 },
    { "tbb", BENCH_TBB, 0 },
};

/* ------------------------------------------------------------------------ */
/* Workloads                                                                */
/* ------------------------------------------------------------------------ */

enum { W_A, W_B, W_C, NWORK };
static const char *const work_name[] = { "a", "b", "c" };
static const char *const work_desc[] = {
    "a[i] = b[i]*2 + 1 over floats (cheap, vectorisable)",
    "200 dependent mul/xor-shift steps per iteration (uniform, compute-heavy)",
    "4 or 4000 steps per iteration, clustered and skewed (irregular, 1000x)",
};
static const unsigned long work_default_n[] = { 40000000ul, 500000ul, 1000000ul };
static const unsigned long work_quick_n[] = { 100000ul, 2000ul, 20000ul };

struct work {
    int kind;
    size_t n;
    float *a;       /* a: output */
    float *b;       /* a: input */
    uint64_t *out;  /* b, c: output */
    void *ref;      /* the sequential loop's output */
    size_t bytes;   /* of the output */
};

static void *alloc_bytes(size_t bytes)
{
    size_t rounded = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (!p) bench_die("%s", "out of memory");
    return p;
}

static void *output_of(const struct work *w)
{
    return w->kind == W_A ? (void *)w->a : (void *)w->out;
}

/* The plain loops. noinline: one call per run, as for everybody else. */
__attribute__((noinline)) static void plain_a(float *a, const float *b, size_t n)
{
    loops_a_range(a, b, 0, n);
}

__attribute__((noinline)) static void plain_b(uint64_t *out, size_t n)
{
    loops_b_range(out, 0, n);
}

__attribute__((noinline)) static void plain_c(uint64_t *out, size_t n)
{
    loops_c_range(out, n, 0, n);
}

static void plain_range(const struct work *w, size_t lo, size_t hi)
{
    switch (w->kind) {
    case W_A: loops_a_range(w->a, w->b, lo, hi); break;
    case W_B: loops_b_range(w->out, lo, hi); break;
    default: loops_c_range(w->out, w->n, lo, hi); break;
    }
}

static void run_plain(const struct work *w)
{
    switch (w->kind) {
    case W_A: plain_a(w->a, w->b, w->n); break;
    case W_B: plain_b(w->out, w->n); break;
    default: plain_c(w->out, w->n); break;
    }
}

/* split: [0, n/2) on a new pthread, [n/2, n) here. */
static void *split_lower(void *arg)
{
    const struct work *w = arg;
    plain_range(w, 0, w->n / 2);
    return NULL;
}

__attribute__((noinline)) static void run_split(const struct work *w)
{
    pthread_t th;
    int rc = pthread_create(&th, NULL, split_lower, (void *)w);
    if (rc != 0) bench_die("pthread_create failed: %s", strerror(rc));
    plain_range(w, w->n / 2, w->n);
    rc = pthread_join(th, NULL);
    if (rc != 0) bench_die("pthread_join failed: %s", strerror(rc));
}

/* clove: the body of clove_for receives [lo, hi) and runs the same range
 * loop as the plain one. */
static void body_a(clove_task *t, size_t lo, size_t hi, void *ctx)
{
    (void)t;
    const struct work *w = ctx;
    loops_a_range(w->a, w->b, lo, hi);
}

static void body_b(clove_task *t, size_t lo, size_t hi, void *ctx)
{
    (void)t;
    const struct work *w = ctx;
    loops_b_range(w->out, lo, hi);
}

static void body_c(clove_task *t, size_t lo, size_t hi, void *ctx)
{
    (void)t;
    const struct work *w = ctx;
    loops_c_range(w->out, w->n, lo, hi);
}

static void clove_job(clove_task *t, void *arg)
{
    const struct work *w = arg;
    clove_range_fn *body = w->kind == W_A ? body_a : w->kind == W_B ? body_b : body_c;
    clove_for(t, 0, w->n, body, (void *)w);
}

__attribute__((noinline)) static void run_clove(clove_pool *pool, const struct work *w)
{
    int rc = clove_pool_run(pool, clove_job, (void *)w);
    if (rc != 0)
        bench_die("clove_pool_run failed: %s", strerror(rc));
}

static struct work make_work(int kind, size_t n)
{
    struct work w = { .kind = kind, .n = n };
    if (kind == W_A) {
        if (n > 0x30000000u) bench_die("%s", "-n too large for workload a");
        w.bytes = n * sizeof(float);
        w.a = alloc_bytes(w.bytes);
        w.b = alloc_bytes(w.bytes);
        for (size_t i = 0; i < n; i++) {
            uint32_t bits = 0x4B800000u + (uint32_t)i;
            memcpy(&w.b[i], &bits, sizeof bits);
        }
    } else {
        if (kind == W_C && n >= 0xFFFFFFFFu) bench_die("%s", "-n too large for workload c");
        w.bytes = n * sizeof(uint64_t);
        w.out = alloc_bytes(w.bytes);
    }
    w.ref = alloc_bytes(w.bytes);
    /* The reference: the sequential loop, written into the output buffer
     * and copied (so that page faults of the output happen here). */
    memset(output_of(&w), 0xFF, w.bytes);
    run_plain(&w);
    memcpy(w.ref, output_of(&w), w.bytes);
    return w;
}

static void free_work(struct work *w)
{
    free(w->a);
    free(w->b);
    free(w->out);
    free(w->ref);
}

/* ------------------------------------------------------------------------ */
/* Samples                                                                  */
/* ------------------------------------------------------------------------ */

static void run_impl(const bench_config *c, const struct work *w)
{
    switch (c->impl) {
    case IMPL_PLAIN: run_plain(w); return;
    case IMPL_SPLIT: run_split(w); return;
    case IMPL_CLOVE: run_clove(c->pool, w); return;
#ifdef CLOVE_BENCH_OPENMP
    case IMPL_OMP_STATIC:
    case IMPL_OMP_DYNAMIC:
    case IMPL_OMP_GUIDED: {
        int sched = (int)(c->impl - IMPL_OMP_STATIC);
        if (w->kind == W_A) omp_loops_a(sched, c->threads, w->a, w->b, w->n);
        else if (w->kind == W_B) omp_loops_b(sched, c->threads, w->out, w->n);
        else omp_loops_c(sched, c->threads, w->out, w->n);
        return;
    }
#endif
#ifdef CLOVE_BENCH_TBB
    case IMPL_TBB: {
        int rc = w->kind == W_A ? tbb_loops_a(c->arena, w->a, w->b, w->n)
               : w->kind == W_B ? tbb_loops_b(c->arena, w->out, w->n)
                                : tbb_loops_c(c->arena, w->out, w->n);
        if (rc != 0) {
            fprintf(stderr, "loops: tbb: parallel_for threw an exception\n");
            abort();
        }
        return;
    }
#endif
    default: break;
    }
    fprintf(stderr, "loops: implementation %s not built\n",
            (unsigned)c->impl < NIMPL ? impls[c->impl].name : "?");
    abort();
}

/* One sample: poison the output, run once (timed), check every element
 * against the sequential loop's output. Returns the run's ns. */
static double sample(const bench_config *c, void *ctx)
{
    const struct work *w = ctx;
    if (impls[c->impl].kind == BENCH_OMP)
        bench_omp_prepare(c->threads);
    void *out = output_of(w);
    memset(out, 0xFF, w->bytes);
    double t0 = bench_now_ns();
    run_impl(c, w);
    double dt = bench_now_ns() - t0;
    if (memcmp(out, w->ref, w->bytes) != 0) {
        size_t esz = w->kind == W_A ? sizeof(float) : sizeof(uint64_t);
        size_t i = 0, bad = 0;
        while (i < w->n && memcmp((char *)out + i * esz, (char *)w->ref + i * esz, esz) == 0)
            i++;
        for (size_t j = i; j < w->n; j++)
            bad += memcmp((char *)out + j * esz, (char *)w->ref + j * esz, esz) != 0;
        uint64_t got = 0, want = 0;
        memcpy(&got, (char *)out + i * esz, esz);
        memcpy(&want, (char *)w->ref + i * esz, esz);
        fprintf(stderr,
                "loops: WRONG RESULT: workload %s impl=%s threads=%u n=%zu: %zu wrong"
                " elements, the first at %zu: got bits 0x%" PRIx64 ", expected 0x%" PRIx64
                "\n", work_name[w->kind], impls[c->impl].name, c->threads, w->n, bad, i,
                got, want);
        abort();
    }
    return dt;
}



/* ------------------------------------------------------------------------ */
/* Targets (bench/README.md, "Targets and findings")                         */
/* ------------------------------------------------------------------------ */

struct result {
    enum impl impl;
    unsigned threads;
    double median;
};

static double find(const struct result *r, size_t nr, enum impl impl, unsigned threads)
{
    for (size_t k = 0; k < nr; k++)
        if (r[k].impl == impl && r[k].threads == threads) return r[k].median;
    return -1;
}

static int targets_met, targets_missed, targets_unchecked;

static void target_ratio(const char *what, double x, double base, double limit)
{
    if (x < 0 || base <= 0) {
        printf("  target %-44s not measured\n", what);
        targets_unchecked++;
        return;
    }
    bool ok = x / base <= limit;
    printf("  target %-44s %5.2fx  %s\n", what, x / base, ok ? "PASS" : "MISS");
    ok ? targets_met++ : targets_missed++;
}

static void target_faster(const char *what, double x, double peer)
{
    if (x < 0 || peer < 0) {
        printf("  target %-44s not measured\n", what);
        targets_unchecked++;
        return;
    }
    bool ok = x < peer;
    printf("  target %-44s %5.2fx  %s\n", what, x / peer, ok ? "PASS" : "MISS");
    ok ? targets_met++ : targets_missed++;
}

static void check_targets(int kind, const struct result *r, size_t nr)
{
    double plain = find(r, nr, IMPL_PLAIN, 1);
    double c1 = find(r, nr, IMPL_CLOVE, 1), c2 = find(r, nr, IMPL_CLOVE, 2);
    double split = find(r, nr, IMPL_SPLIT, 2);
    printf("targets (informational; from the medians above):\n");
    if (split > 0 && plain > 0)
        printf("  control: split (2 pthreads, halves) %.2fx plain%s\n", split / plain,
               kind == W_C ? " (unbalanced by design: ~0.74x at best)"
               : split / plain > 0.7 ? " - not ~0.5x: the second core was busy (or the"
                                       " run is too short for a thread start)" : "");
    if (kind == W_A) {
        target_ratio("(a) clove 1 thread <= 1.10x plain", c1, plain, 1.10);
        target_ratio("(a) clove 2 threads <= 1.00x plain", c2, plain, 1.00);
    } else if (kind == W_B) {
        target_ratio("(b) clove 2 threads <= 0.55x plain", c2, plain, 0.55);
        /* Within 10 % of the best OpenMP schedule on uniform work. */
        double best = -1;
        for (int i = IMPL_OMP_STATIC; i <= IMPL_OMP_GUIDED; i++) {
            double v = find(r, nr, (enum impl)i, 2);
            if (v > 0 && (best < 0 || v < best))
                best = v;
        }
        target_ratio("(b) clove 2 threads <= 1.10x best omp 2", c2, best, 1.10);
    } else {
        target_ratio("(c) clove 2 threads <= 0.60x plain", c2, plain, 0.60);
        target_faster("(c) clove 2 threads faster than omp-static 2",
                      c2, find(r, nr, IMPL_OMP_STATIC, 2));
        target_faster("(c) clove 2 threads faster than omp-dynamic 2",
                      c2, find(r, nr, IMPL_OMP_DYNAMIC, 2));
        target_faster("(c) clove 2 threads faster than omp-guided 2",
                      c2, find(r, nr, IMPL_OMP_GUIDED, 2));
        target_faster("(c) clove 2 threads faster than tbb 2",
                      c2, find(r, nr, IMPL_TBB, 2));
    }
}

/* ------------------------------------------------------------------------ */
/* Options and main                                                         */
/* ------------------------------------------------------------------------ */

static void usage(void)
{
    fputs("usage: loops [-w a|b|c]... [-n N] [-t THREADS]... [--peers] [--impl IMPL]...\n"
          "             [--no-clove] [--no-split] [--reps R] [--min-time S] [--peer-time S] [--peer-reps P]\n"
          "             [--heartbeat US] [--csv FILE] [--raw FILE] [--quick]\n"
          "  -w W          workload a, b or c (repeatable; default all three)\n"
          "  -n N          iterations for every workload run (default a 4e7,\n"
          "                b 5e5, c 1e6; with --quick 1e5, 2000, 20000)\n"
          "  -t THREADS    thread count of clove and the peers (repeatable;\n"
          "                default 1 2 4 8 16 32)\n"
          "  --peers       also run every peer this binary was built with:\n"
          "                omp-static, omp-dynamic, omp-guided, tbb (a peer that\n"
          "                was not built is reported, not run)\n"
          "  --impl IMPL   also run this peer (an error if it was not built)\n"
          "  --no-clove    leave clove out (peers only, with the plain loop)\n"
          "  --no-split    leave out the hand split onto two pthreads\n"
          "  --reps R      samples per configuration (default: about --min-time\n"
          "                per configuration, at least 5, at most 200)\n"
          "  --min-time S  default 0.3\n"
          "  --peer-time S seconds per peer configuration (default 1.5): peers\n"
          "                get S / (warm-up run time) samples, at least 3, at\n"
          "                most as many as the others, spread over the rounds\n"
          "  --peer-reps P samples per peer configuration\n"
          "  --heartbeat US  clove heartbeat interval (default: the library's)\n"
          "  --csv FILE    also write the table as CSV\n"
          "  --raw FILE    also write every sample as CSV\n"
          "  --quick       small sizes, 3 samples each: smoke test\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    bench_prog = "loops";
    bool want_work[NWORK] = { false }, any_work = false;
    unsigned long n_opt = 0;
    bench_opts o;
    bench_opts_init(&o, impls, NIMPL, 0);
    o.min_time = 0.3;
    o.peer_time = 1.5;
    o.max_samples = 200;
    o.calibrate_on_warmup = true;
    o.quick_peer_samples = 0;
    o.want[IMPL_PLAIN] = o.want[IMPL_SPLIT] = true;

    for (bench_args a = { argc, argv, 1, usage }; a.i < argc; a.i++) {
        if (bench_is(&a, "-w")) {
            const char *v = bench_value(&a);
            int k = 0;
            while (k < NWORK && strcmp(v, work_name[k])) k++;
            if (k == NWORK) bench_die("unknown workload %s (a, b or c)", v);
            want_work[k] = any_work = true;
        } else if (bench_is(&a, "-n")) {
            n_opt = bench_parse_ul("-n", bench_value(&a), 1ul << 40);
            if (!n_opt) bench_die("%s", "-n must be positive");
        } else if (bench_is(&a, "--peers")) {
            for (int k = 0; k < NIMPL; k++)
                if (bench_is_peer(&impls[k])) o.want[k] = true;
        } else if (bench_is(&a, "--impl")) {
            const char *v = bench_value(&a);
            int k = 0;
            while (k < NIMPL && strcmp(v, impls[k].name)) k++;
            if (k == NIMPL || !bench_is_peer(&impls[k]))
                bench_die("unknown peer %s (omp-static, omp-dynamic, omp-guided, tbb)", v);
            o.want[k] = o.named[k] = true;
        } else if (bench_is(&a, "--no-clove")) {
            o.want[IMPL_CLOVE] = false;
        } else if (bench_is(&a, "--no-split")) {
            o.want[IMPL_SPLIT] = false;
        } else if (!bench_option(&o, &a)) {
            usage();
        }
    }
    if (!any_work)
        for (int k = 0; k < NWORK; k++) want_work[k] = true;
    if (!o.nthreads) {
        static const unsigned long def[] = { 1, 2, 4, 8, 16, 32 };
        for (size_t k = 0; k < 6; k++) o.threads[o.nthreads++] = def[k];
    }

    /* A peer asked for but not built is reported; by name it is an error. */
    bench_drop_unbuilt(&o);

    /* Configurations in the order they are sampled within a round. */
    bench_set *s = bench_start(&o, 0);
    bench_config *cfg = s->cfg;
    const size_t ncfg = s->ncfg;
#ifdef CLOVE_BENCH_OPENMP
    if (o.want[IMPL_OMP_STATIC] || o.want[IMPL_OMP_DYNAMIC] || o.want[IMPL_OMP_GUIDED]) {
        for (size_t k = 0; k < o.nthreads; k++)
            if (omp_peer_setup((unsigned)o.threads[k]) != o.threads[k]) {
                fprintf(stderr, "loops: omp: a team of %lu threads was not granted\n",
                        o.threads[k]);
                exit(2);
            }
        bench_omp_banner(false);
    }
#endif
    bench_tbb_setup(s, 0);

    FILE *csv = bench_csv_open(o.csv_path,
                               "workload,n,impl,threads,heartbeat_us,median_ns_per_elem,min,max,"
                               "ratio_to_plain,samples\n");
    FILE *raw = bench_csv_open(o.raw_path, "workload,n,impl,threads,round,ns_per_elem\n");

    unsigned hb = (unsigned)bench_heartbeat_us(o.heartbeat);
    printf("loops: ns per element (lower is better); clove heartbeat %s%u us;"
           " samples interleaved; every run's output checked element by element\n",
           o.heartbeat ? "" : "library default ", hb);

    for (int kind = 0; kind < NWORK; kind++) {
        if (!want_work[kind]) continue;
        size_t n = n_opt ? n_opt : o.quick ? work_quick_n[kind] : work_default_n[kind];
        double tb0 = bench_now_ns();
        struct work w = make_work(kind, n);
        double tb = bench_now_ns() - tb0;

        /* Warm-up run of every configuration (checked, timed as an
         * estimate), then the number of rounds: about min_time per
         * configuration, from the median warm-up of the non-peers. */
        bench_plan p = bench_plan_samples(s, ncfg, &o, sample, &w);
        size_t rounds = p.rounds;
        double total = bench_rounds(s, ncfg, rounds, (double)n, sample, &w);
        if (raw)
            for (size_t k = 0; k < ncfg; k++)
                for (size_t i = 0; i < cfg[k].nsamples; i++)
                    fprintf(raw, "%s,%zu,%s,%u,%zu,%.5f\n", work_name[kind], n,
                            impls[cfg[k].impl].name, cfg[k].threads, cfg[k].round[i],
                            cfg[k].samples[i]);

        printf("\nworkload %s: %s\nn = %zu (set up in %.2f s), %zu samples per"
               " configuration, one run each, %.1f s sampling\n",
               work_name[kind], work_desc[kind], n, tb / 1e9, rounds, total / 1e9);
        if (p.peer_hi > 0)
            printf("peers: %zu%s%.0zu samples each (at most --peer-time %.1f s per"
                   " configuration), spread over the rounds\n", p.peer_lo,
                   p.peer_hi > p.peer_lo ? "-" : "", p.peer_hi > p.peer_lo ? p.peer_hi : 0,
                   o.peer_time);
        printf("  %-12s %7s %10s %10s %10s %10s %8s\n", "impl", "threads", "median",
               "min", "max", "vs plain", "samples");

        struct result res[BENCH_MAX_CFG];
        double plain = 0;
        for (size_t k = 0; k < ncfg; k++) {
            bench_stats st = bench_stats_of(&cfg[k]);
            if (cfg[k].impl == IMPL_PLAIN) plain = st.median;
            res[k] = (struct result){ (enum impl)cfg[k].impl, cfg[k].threads, st.median };
            printf("  %-12s %7u %10.3f %10.3f %10.3f %9.3fx %8zu\n", impls[cfg[k].impl].name,
                   cfg[k].threads, st.median, st.min, st.max, st.median / plain, st.n);
            if (csv)
                fprintf(csv, "%s,%zu,%s,%u,%u,%.5f,%.5f,%.5f,%.5f,%zu\n", work_name[kind], n,
                        impls[cfg[k].impl].name, cfg[k].threads,
                        cfg[k].impl == IMPL_CLOVE ? hb : 0u, st.median, st.min, st.max,
                        st.median / plain, st.n);
        }
        bench_free_samples(s, ncfg);
        check_targets(kind, res, ncfg);
        fflush(stdout);
        free_work(&w);
    }

    printf("\ntargets: %d met, %d missed, %d not measured (informational)\n",
           targets_met, targets_missed, targets_unchecked);

    bench_teardown(s);
    bench_csv_close(raw, o.raw_path);
    bench_csv_close(csv, o.csv_path);
    return 0;
}
