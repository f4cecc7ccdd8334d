/* SPDX-License-Identifier: MIT */
/*
 * harness.h - the measurement machinery of the C benchmarks with peers
 * (tree_sum.c, rec_harness.c for fib, uts and nqueens, loops.c) and the
 * idle probes of idle.c and idle_peers.c (bench/harness.c).
 *
 * A benchmark describes its implementations in a table of bench_impl (the
 * order is the order of the configurations within a round), parses its own
 * options and hands the others to bench_option, sets up its configurations
 * with bench_start (pools) and bench_omp_setup / bench_tbb_setup (peers),
 * and for every size asks bench_plan_samples how many samples each
 * configuration gets, takes them with bench_rounds (interleaved: one sample
 * of every configuration per round), and reports medians, minima and
 * maxima. Its workload, its sample function and its own output lines stay
 * in its source.
 *
 * The static inline functions here and in bench_util.h use POSIX clocks and
 * sleeps: define _GNU_SOURCE before any #include.
 */
#ifndef CLOVE_BENCH_HARNESS_H
#define CLOVE_BENCH_HARNESS_H

#include <clove.h>

#include "bench_util.h"
#include "peers/peer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Repeatable options (-n, -t) take at most this many values. */
#define BENCH_MAX_LIST 32
/* Implementations in one table; configurations in one set. */
#define BENCH_MAX_IMPL 16
#define BENCH_MAX_CFG (2 + BENCH_MAX_IMPL * BENCH_MAX_LIST)

/* ------------------------------------------------------------------------ */
/* Messages and option values                                               */
/* ------------------------------------------------------------------------ */

/* The program name that starts every message on stderr ("tree_sum"). */
extern const char *bench_prog;

/* "PROG: " fmt (with arg) on stderr, then exit(2). */
_Noreturn void bench_die(const char *fmt, const char *arg);

/* An integer 0..max (strtod: 1e7 is accepted), else bench_die("bad value
 * for OPT"). */
unsigned long bench_parse_ul(const char *opt, const char *s, unsigned long max);

/* Seconds >= 0, else bench_die("bad value for OPT"). */
double bench_parse_seconds(const char *opt, const char *s);

/* fn(args + i * size) for every i < k at once: i = 0 on the calling
 * thread, the others on k - 1 pthreads started here and joined before it
 * returns (the hand-made controls: pair, copies, parts); bench_die if a
 * thread cannot be started. */
void bench_on_threads(unsigned k, void *(*fn)(void *), void *args, size_t size);

/* ------------------------------------------------------------------------ */
/* Implementations                                                          */
/* ------------------------------------------------------------------------ */

typedef enum bench_kind {
    BENCH_BASELINE, /* the sequential reference of the ratios */
    BENCH_OTHER,    /* no runtime (the split by hand) */
    BENCH_CLOVE,    /* a clove pool per thread count */
    BENCH_OMP,      /* OpenMP peer: a team per thread count */
    BENCH_TBB       /* oneTBB peer: an arena per thread count */
} bench_kind;

typedef struct bench_impl {
    const char *name;  /* the impl column of the table and the CSV files */
    bench_kind kind;
    unsigned threads;  /* its thread count; 0: one configuration per -t */
} bench_impl;

static inline bool bench_is_peer(const bench_impl *im)
{
    return im->kind == BENCH_OMP || im->kind == BENCH_TBB;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

/* Options that only some programs take (bench_opts.accept). */
enum {
    BENCH_OPT_BATCH = 1,  /* --batch B */
    BENCH_OPT_WARMUP = 2, /* --warmup W */
    BENCH_OPT_IMPL = 4    /* --impl IMPL, --only IMPL (any implementation) */
};

typedef struct bench_opts {
    const bench_impl *impls;
    int nimpl;
    unsigned accept;                       /* BENCH_OPT_* */
    bool want[BENCH_MAX_IMPL];             /* implementations to run */
    bool named[BENCH_MAX_IMPL];            /* asked for by --impl / --only */
    int only;                              /* --only: its index, else -1 */
    unsigned long threads[BENCH_MAX_LIST]; /* -t */
    size_t nthreads;
    unsigned long reps, peer_reps, batch, warmup, heartbeat;
    double min_time, peer_time;
    const char *csv_path, *raw_path;
    bool quick;
    /* Sampling policy (set by the program, see bench_plan). */
    size_t max_samples;        /* upper bound of the sample counts */
    bool calibrate_on_warmup;  /* calibrate on the warm-up samples */
    size_t quick_peer_samples; /* peers' samples with --quick (0: all rounds) */
} bench_opts;

/* Defaults: every implementation of kind BENCH_CLOVE wanted, the others
 * not; one warm-up sample; --min-time 0.5, --peer-time 2; 2000 samples at
 * most; calibration on samples of its own; 3 peer samples with --quick. */
void bench_opts_init(bench_opts *o, const bench_impl *impls, int nimpl, unsigned accept);

/* The command line, one option at a time: argv[i] is the option looked at. */
typedef struct bench_args {
    int argc;
    char **argv;
    int i;
    void (*usage)(void); /* prints the usage and exits */
} bench_args;

/* True when the option looked at is `name`. */
bool bench_is(const bench_args *a, const char *name);

/* The option's value (steps over it); usage() when there is none. */
const char *bench_value(bench_args *a);

/* Appends the option's value (0..max) to list[*n] (at most BENCH_MAX_LIST
 * values, else bench_die("too many OPT")) and returns it. */
unsigned long bench_list_add(bench_args *a, unsigned long *list, size_t *n, unsigned long max);

/* Handles the option looked at if it is one of the common ones: -t T
 * (repeatable), --reps R, --peer-reps P, --min-time S, --peer-time S,
 * --heartbeat US, --csv FILE, --raw FILE, --quick, and those of o->accept.
 * False if it is none of them. */
bool bench_option(bench_opts *o, bench_args *a);

/* After the options: with --only, that implementation alone is wanted. */
void bench_apply_only(bench_opts *o);

/* A peer that is wanted but was not built is reported on stdout
 * ("peer NAME: not built (why)") and dropped; one asked for by name is also
 * an error on stderr, and then the program exits with 2. */
void bench_drop_unbuilt(bench_opts *o);

/* ------------------------------------------------------------------------ */
/* Configurations                                                           */
/* ------------------------------------------------------------------------ */

typedef struct bench_config {
    int impl;            /* index into the implementation table */
    unsigned threads;
    clove_pool *pool;    /* BENCH_CLOVE */
    void *arena;         /* BENCH_TBB: its task_arena */
    double *samples;     /* per sample: ns per unit */
    size_t *round;       /* per sample: its round */
    size_t nsamples;
    size_t want;         /* samples to take (peers: may be fewer than rounds) */
    double est;          /* ns of the last warm-up sample */
} bench_config;

typedef struct bench_set {
    const bench_impl *impls;
    bench_config cfg[BENCH_MAX_CFG];
    size_t ncfg;
    bool any_peer, any_plain; /* a configuration of a peer / of a non-peer */
    bool tbb_ready;           /* bench_tbb_setup made the global_control */
} bench_set;

static inline const bench_impl *bench_impl_of(const bench_set *s, const bench_config *c)
{
    return &s->impls[c->impl];
}

/* The configurations of every wanted implementation in table order: one,
 * or one per -t thread count (threads 0 in the table), and a clove pool per
 * thread count, shared by the BENCH_CLOVE ones (not timed;
 * clove_config.stack_size = stack_size).
 * Returns the program's one set. */
bench_set *bench_start(const bench_opts *o, size_t stack_size);

/* OpenMP: a team of every BENCH_OMP configuration's size, checked (exit 2
 * when one is not granted), then the "peer omp:" line. Nothing without
 * BENCH_OMP configurations or without OpenMP. */
void bench_omp_setup(const bench_set *s, bool show_stacksize);

/* The "peer omp: ..." line (OpenMP version, OMP_WAIT_POLICY and, when
 * show_stacksize, OMP_STACKSIZE). Nothing without OpenMP. */
void bench_omp_banner(bool show_stacksize);

/* Before an OpenMP sample (untimed): an empty parallel region of its team
 * size, checked (abort if not granted). libgomp keeps one thread pool per
 * process and resizes it to each parallel region's team: it ends the
 * surplus threads when a team is smaller than the last one and creates
 * threads when it is larger. With configurations of several thread counts
 * interleaved that would put thread creation into the first run of a
 * sample; this keeps it out. Nothing without OpenMP. */
void bench_omp_prepare(unsigned threads);

/* oneTBB: with BENCH_TBB configurations, a global_control for the largest
 * thread count (and for stack_size, if not 0), an arena for every such
 * configuration, and the "peer tbb:" line with how many threads were
 * inside each arena at once. */
void bench_tbb_setup(bench_set *s, size_t stack_size);

/* Destroys the pools, arenas and global_controls. */
void bench_teardown(bench_set *s);

/* ------------------------------------------------------------------------ */
/* Sampling                                                                 */
/* ------------------------------------------------------------------------ */

/* One sample of configuration c: its elapsed ns. */
typedef double bench_sample_fn(const bench_config *c, void *ctx);

typedef struct bench_plan {
    size_t rounds;           /* samples of every non-peer configuration */
    size_t peer_lo, peer_hi; /* the fewest and most samples of a peer */
} bench_plan;

/* Warm-up and the number of samples of configurations 0..nc-1:
 *   - o->warmup untimed samples of every configuration (the last one's time
 *     is its est);
 *   - rounds: --reps, or 3 with --quick, or enough for --min-time per
 *     configuration (5 to max_samples) from the median sample time of the
 *     non-peers: of one more sample of each, or of their warm-up samples
 *     (calibrate_on_warmup);
 *   - peers: --peer-reps, or quick_peer_samples (all rounds if 0) with
 *     --quick, or --peer-time / est (3 to max_samples), never more than the
 *     rounds; with peers alone the rounds are the most of them. */
bench_plan bench_plan_samples(bench_set *s, size_t nc, const bench_opts *o,
                              bench_sample_fn *sample, void *ctx);

/* The interleaved rounds: in round r every configuration 0..nc-1 takes its
 * sample, sample() / units, unless it has fewer samples than rounds (a peer)
 * and none due: those are spread evenly, one in the last round of each of
 * `want` equal stretches. Allocates the samples; returns the elapsed ns. */
double bench_rounds(bench_set *s, size_t nc, size_t rounds, double units,
                    bench_sample_fn *sample, void *ctx);

/* Median, min and max of a configuration's samples (sorts them). */
typedef struct bench_stats {
    double median, min, max;
    size_t n;
} bench_stats;

bench_stats bench_stats_of(bench_config *c);

/* Frees the samples of configurations 0..nc-1. */
void bench_free_samples(bench_set *s, size_t nc);

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

/* The heartbeat clove runs with: --heartbeat, or the library's default. */
static inline unsigned long bench_heartbeat_us(unsigned long heartbeat)
{
    return heartbeat ? heartbeat : (unsigned long)CLOVE_DEFAULT_HEARTBEAT_US;
}

/* A CSV file with its header line; NULL when path is NULL. */
FILE *bench_csv_open(const char *path, const char *header);

/* Closes a CSV file (if any); bench_die("error writing PATH") on error. */
void bench_csv_close(FILE *f, const char *path);

/* The CSV files of tree_sum and rec_harness (--csv, --raw): their header
 * lines; bench_report and bench_write_raw write the rows. */
#define BENCH_CSV_HEADER                                                      \
    "workload,n,impl,threads,heartbeat_us,median_ns_per_node,min,max,"        \
    "ratio_to_baseline,samples\n"
#define BENCH_RAW_HEADER "n,impl,threads,round,ns_per_node\n"

/* The "peers: N samples each ..." line of tree_sum and rec_harness. */
void bench_print_peers(const bench_set *s, const bench_plan *p, const bench_opts *o);

/* Every sample, round by round: "n,impl,threads,round,ns" (%.4f); nothing
 * when raw is NULL. */
void bench_write_raw(FILE *raw, const bench_set *s, size_t nc, size_t rounds, uint64_t n);

/* The table of tree_sum and rec_harness (impl column `width` wide):
 * median, min, max, ratio to the baseline's median, samples; and the CSV
 * rows "workload,n,impl,threads,heartbeat_us,median,min,max,ratio,samples".
 * Frees the samples. */
void bench_report(bench_set *s, size_t nc, int width, FILE *csv, const char *workload,
                  uint64_t n, unsigned long heartbeat);

/* ------------------------------------------------------------------------ */
/* Idle probes (idle.c, idle_peers.c)                                       */
/* ------------------------------------------------------------------------ */

/* Context switches (voluntary + nonvoluntary) from /proc/self/task. */
typedef struct bench_ctxsw {
    long long others; /* all threads but the main one */
    long long main;   /* the main thread */
    int nthreads;     /* threads seen */
} bench_ctxsw;

bench_ctxsw bench_count_switches(void);

/* CPU time of the whole process (CLOCK_PROCESS_CPUTIME_ID) in ms. */
double bench_cpu_ms(void);

/* Sleeps s seconds (the whole of them). Inline: idle_peers sleeps in its
 * wake loop. */
static inline void bench_sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* One window of secs seconds in which the calling thread only sleeps. */
typedef struct bench_window {
    double cpu_ms;       /* CPU time of the process */
    double wall_s;       /* its length */
    long long others;    /* context switches of the other threads */
    long long main;      /* and of the calling thread */
    int nthreads;        /* threads at its end */
} bench_window;

bench_window bench_idle_window(double secs);

#endif
