/* SPDX-License-Identifier: MIT */
/*
 * harness.c - the measurement machinery shared by the C benchmarks
 * (bench/harness.h). Compiled into every benchmark that uses it, with that
 * benchmark's CLOVE_BENCH_OPENMP / CLOVE_BENCH_TBB, so that the peer set-up
 * below is there exactly when the peers are.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

const char *bench_prog = "bench";

/* ------------------------------------------------------------------------ */
/* Messages and option values                                               */
/* ------------------------------------------------------------------------ */

_Noreturn void bench_die(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", bench_prog);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(2);
}

void bench_on_threads(unsigned k, void *(*fn)(void *), void *args, size_t size)
{
    pthread_t *th = malloc(k * sizeof *th);
    if (th == NULL)
        bench_die("%s", "out of memory");
    for (unsigned i = 1; i < k; i++) {
        int rc = pthread_create(&th[i], NULL, fn, (char *)args + i * size);
        if (rc != 0)
            bench_die("pthread_create failed: %s", strerror(rc));
    }
    fn(args);
    for (unsigned i = 1; i < k; i++) {
        int rc = pthread_join(th[i], NULL);
        if (rc != 0)
            bench_die("pthread_join failed: %s", strerror(rc));
    }
    free(th);
}

unsigned long bench_parse_ul(const char *opt, const char *s, unsigned long max)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end); /* accepts 1e7 */
    if (errno || *end || v < 0 || v > (double)max || v != (double)(unsigned long)v)
        bench_die("bad value for %s", opt);
    return (unsigned long)v;
}

double bench_parse_seconds(const char *opt, const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end || !(v >= 0)) bench_die("bad value for %s", opt);
    return v;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

void bench_opts_init(bench_opts *o, const bench_impl *impls, int nimpl, unsigned accept)
{
    memset(o, 0, sizeof *o);
    o->impls = impls;
    o->nimpl = nimpl;
    o->accept = accept;
    o->only = -1;
    for (int k = 0; k < nimpl; k++)
        o->want[k] = impls[k].kind == BENCH_CLOVE;
    o->warmup = 1;
    o->min_time = 0.5;
    o->peer_time = 2.0;
    o->max_samples = 2000;
    o->quick_peer_samples = 3;
}

bool bench_is(const bench_args *a, const char *name)
{
    return !strcmp(a->argv[a->i], name);
}

const char *bench_value(bench_args *a)
{
    if (a->i + 1 < a->argc)
        return a->argv[++a->i];
    a->usage();
    return "";
}

unsigned long bench_list_add(bench_args *a, unsigned long *list, size_t *n, unsigned long max)
{
    const char *opt = a->argv[a->i];
    if (*n == BENCH_MAX_LIST) bench_die("too many %s", opt);
    unsigned long v = bench_parse_ul(opt, bench_value(a), max);
    list[(*n)++] = v;
    return v;
}

/* --impl NAME / --only NAME: the implementation wanted, and asked for by
 * name; --only also leaves out every other (bench_apply_only). */
static void impl_option(bench_opts *o, bench_args *a)
{
    bool is_only = bench_is(a, "--only");
    const char *v = bench_value(a);
    int which = -1;
    for (int k = 0; k < o->nimpl; k++)
        if (!strcmp(v, o->impls[k].name)) which = k;
    if (which < 0) bench_die("unknown implementation %s", v);
    if (is_only)
        o->only = which;
    o->want[which] = o->named[which] = true;
}

bool bench_option(bench_opts *o, bench_args *a)
{
    if (bench_is(a, "-t")) {
        if (!bench_list_add(a, o->threads, &o->nthreads, CLOVE_MAX_THREADS))
            bench_die("%s", "-t must be positive");
    } else if (bench_is(a, "--reps")) {
        o->reps = bench_parse_ul("--reps", bench_value(a), 1000000);
        if (!o->reps) bench_die("%s", "--reps must be positive");
    } else if (bench_is(a, "--peer-reps")) {
        o->peer_reps = bench_parse_ul("--peer-reps", bench_value(a), 1000000);
        if (!o->peer_reps) bench_die("%s", "--peer-reps must be positive");
    } else if (bench_is(a, "--min-time")) {
        o->min_time = bench_parse_seconds("--min-time", bench_value(a));
    } else if (bench_is(a, "--peer-time")) {
        o->peer_time = bench_parse_seconds("--peer-time", bench_value(a));
    } else if (bench_is(a, "--heartbeat")) {
        o->heartbeat = bench_parse_ul("--heartbeat", bench_value(a), CLOVE_MAX_HEARTBEAT_US);
    } else if (bench_is(a, "--csv")) {
        o->csv_path = bench_value(a);
    } else if (bench_is(a, "--raw")) {
        o->raw_path = bench_value(a);
    } else if (bench_is(a, "--quick")) {
        o->quick = true;
    } else if ((o->accept & BENCH_OPT_BATCH) && bench_is(a, "--batch")) {
        o->batch = bench_parse_ul("--batch", bench_value(a), 100000000);
    } else if ((o->accept & BENCH_OPT_WARMUP) && bench_is(a, "--warmup")) {
        o->warmup = bench_parse_ul("--warmup", bench_value(a), 1000000);
    } else if ((o->accept & BENCH_OPT_IMPL) && (bench_is(a, "--impl") || bench_is(a, "--only"))) {
        impl_option(o, a);
    } else {
        return false;
    }
    return true;
}

void bench_apply_only(bench_opts *o)
{
    if (o->only >= 0)
        for (int k = 0; k < o->nimpl; k++)
            o->want[k] = k == o->only;
}

void bench_drop_unbuilt(bench_opts *o)
{
    bool missing_named = false;
    for (int k = 0; k < o->nimpl; k++) {
        const bench_impl *im = &o->impls[k];
        if (!bench_is_peer(im) || !o->want[k]) continue;
        bool omp = im->kind == BENCH_OMP;
        if (omp ? OMP_BUILT : TBB_BUILT) continue;
        const char *why = omp ? CLOVE_BENCH_OPENMP_MISSING : CLOVE_BENCH_TBB_MISSING;
        printf("peer %s: not built (%s)\n", im->name, why);
        if (o->named[k]) {
            fprintf(stderr, "%s: peer %s: not built (%s)\n", bench_prog, im->name, why);
            missing_named = true;
        }
        o->want[k] = false;
    }
    fflush(stdout);
    if (missing_named) exit(2);
}

/* ------------------------------------------------------------------------ */
/* Configurations                                                           */
/* ------------------------------------------------------------------------ */

static void add_config(bench_set *s, int impl, unsigned threads)
{
    s->cfg[s->ncfg++] = (bench_config){ .impl = impl, .threads = threads };
    if (bench_is_peer(&s->impls[impl]))
        s->any_peer = true;
    else
        s->any_plain = true;
}

/* The pool of a clove configuration before cfg[k] with this thread count,
 * or NULL: one pool per thread count, shared by all of them. */
static clove_pool *pool_of(const bench_set *s, size_t k, unsigned threads)
{
    for (size_t i = 0; i < k; i++)
        if (s->cfg[i].pool && s->cfg[i].threads == threads)
            return s->cfg[i].pool;
    return NULL;
}

bench_set *bench_start(const bench_opts *o, size_t stack_size)
{
    static bench_set set;
    bench_set *s = &set;
    memset(s, 0, sizeof *s);
    s->impls = o->impls;
    for (int k = 0; k < o->nimpl; k++) {
        if (!o->want[k]) continue;
        if (o->impls[k].threads)
            add_config(s, k, o->impls[k].threads);
        else
            for (size_t t = 0; t < o->nthreads; t++)
                add_config(s, k, (unsigned)o->threads[t]);
    }
    for (size_t k = 0; k < s->ncfg; k++) {
        bench_config *c = &s->cfg[k];
        if (bench_impl_of(s, c)->kind != BENCH_CLOVE) continue;
        c->pool = pool_of(s, k, c->threads);
        if (c->pool) continue;
        clove_config cc = { .threads = c->threads,
                            .heartbeat_us = (unsigned)o->heartbeat,
                            .stack_size = stack_size };
        int rc = clove_pool_create(&c->pool, &cc);
        if (rc != 0) bench_die("clove_pool_create failed: %s", strerror(rc));
    }
    return s;
}

void bench_omp_banner(bool show_stacksize)
{
#ifdef CLOVE_BENCH_OPENMP
    const char *policy = getenv("OMP_WAIT_POLICY");
    const char *stack = getenv("OMP_STACKSIZE");
    printf("peer omp: %s, OMP_WAIT_POLICY=%s%s%s; team sizes checked\n", omp_peer_version(),
           policy ? policy : "(unset)", show_stacksize ? ", OMP_STACKSIZE=" : "",
           show_stacksize ? (stack ? stack : "(unset)") : "");
#else
    (void)show_stacksize;
#endif
}

void bench_omp_prepare(unsigned threads)
{
#ifdef CLOVE_BENCH_OPENMP
    if (omp_peer_setup(threads) != threads) {
        fprintf(stderr, "%s: omp: a team of %u threads was not granted\n", bench_prog,
                threads);
        abort();
    }
#else
    (void)threads;
#endif
}

void bench_omp_setup(const bench_set *s, bool show_stacksize)
{
#ifdef CLOVE_BENCH_OPENMP
    bool any = false;
    for (size_t k = 0; k < s->ncfg; k++) {
        if (bench_impl_of(s, &s->cfg[k])->kind != BENCH_OMP) continue;
        any = true;
        unsigned got = omp_peer_setup(s->cfg[k].threads);
        if (got != s->cfg[k].threads) {
            fprintf(stderr, "%s: omp: a team of %u threads got %u\n", bench_prog,
                    s->cfg[k].threads, got);
            exit(2);
        }
    }
    if (any)
        bench_omp_banner(show_stacksize);
#else
    (void)s;
    (void)show_stacksize;
#endif
}

void bench_tbb_setup(bench_set *s, size_t stack_size)
{
#ifdef CLOVE_BENCH_TBB
    bool any = false;
    unsigned most = 1;
    for (size_t k = 0; k < s->ncfg; k++) {
        if (bench_impl_of(s, &s->cfg[k])->kind != BENCH_TBB) continue;
        any = true;
        if (s->cfg[k].threads > most) most = s->cfg[k].threads;
    }
    if (!any) return;
    char err[200] = "";
    if (stack_size && tbb_peer_stack(stack_size, err, sizeof err) != 0)
        bench_die("tbb: global_control(thread_stack_size) failed: %s", err);
    if (tbb_peer_init(most, err, sizeof err) != 0)
        bench_die("tbb: global_control failed: %s", err);
    s->tbb_ready = true;
    printf("peer tbb: %s, global_control(max_allowed_parallelism, %u)%s;"
           " threads inside each arena at once:", tbb_peer_version(), most,
           stack_size ? ", global_control(thread_stack_size)" : "");
    for (size_t k = 0; k < s->ncfg; k++) {
        bench_config *c = &s->cfg[k];
        if (bench_impl_of(s, c)->kind != BENCH_TBB) continue;
        unsigned joined = 0;
        c->arena = tbb_peer_create(c->threads, &joined, err, sizeof err);
        if (!c->arena) bench_die("tbb: task_arena failed: %s", err);
        printf(" %u/%u", joined, c->threads);
        if (joined < c->threads)
            fprintf(stderr, "%s: warning: tbb arena of %u threads: only %u were"
                    " inside it at once\n", bench_prog, c->threads, joined);
    }
    printf("\n");
#else
    (void)s;
    (void)stack_size;
#endif
}

void bench_teardown(bench_set *s)
{
    for (size_t k = 0; k < s->ncfg; k++)
        if (s->cfg[k].pool && pool_of(s, k, s->cfg[k].threads) != s->cfg[k].pool)
            clove_pool_destroy(s->cfg[k].pool);
#ifdef CLOVE_BENCH_TBB
    for (size_t k = 0; k < s->ncfg; k++)
        if (s->cfg[k].arena) tbb_peer_destroy(s->cfg[k].arena);
    if (s->tbb_ready && tbb_peer_fini() != 0)
        fprintf(stderr, "%s: warning: tbb: its worker threads could not be waited for\n",
                bench_prog);
#endif
}

/* ------------------------------------------------------------------------ */
/* Sampling                                                                 */
/* ------------------------------------------------------------------------ */

/* r rounded down, within lo..hi. */
static size_t clamp_count(double r, size_t lo, size_t hi)
{
    return r < (double)lo ? lo : r > (double)hi ? hi : (size_t)r;
}

bench_plan bench_plan_samples(bench_set *s, size_t nc, const bench_opts *o,
                              bench_sample_fn *sample, void *ctx)
{
    bench_config *cfg = s->cfg;
    bench_plan p = { o->reps, SIZE_MAX, 0 };
    for (size_t k = 0; k < nc; k++) {
        cfg[k].est = 0;
        for (unsigned long w = 0; w < o->warmup; w++)
            cfg[k].est = sample(&cfg[k], ctx);
    }
    if (!p.rounds) {
        if (o->quick) {
            p.rounds = 3;
        } else if (s->any_plain) {
            /* The median, not the slowest: the first pthread_create of
             * the split, say, can be a 100x outlier. */
            double cal[BENCH_MAX_CFG];
            size_t ncal = 0;
            for (size_t k = 0; k < nc; k++)
                if (!bench_is_peer(bench_impl_of(s, &cfg[k])))
                    cal[ncal++] = o->calibrate_on_warmup ? cfg[k].est : sample(&cfg[k], ctx);
            double per = bench_median(cal, ncal);
            p.rounds = clamp_count(o->min_time * 1e9 / (per > 0 ? per : 1e6), 5, o->max_samples);
        }
    }
    for (size_t k = 0; k < nc; k++) {
        if (!bench_is_peer(bench_impl_of(s, &cfg[k]))) {
            cfg[k].want = p.rounds;
            continue;
        }
        size_t w;
        if (o->peer_reps) {
            w = o->peer_reps;
        } else if (o->quick) {
            w = o->quick_peer_samples ? o->quick_peer_samples : p.rounds;
        } else {
            /* The (last) warm-up sample decides: a second calibration
             * sample of OpenMP at 10M nodes and 32 threads would cost
             * seconds. */
            if (!(cfg[k].est > 0))
                cfg[k].est = sample(&cfg[k], ctx);
            double r = o->peer_time * 1e9 / (cfg[k].est > 0 ? cfg[k].est : 1e6);
            w = clamp_count(r, 3, o->max_samples);
        }
        if (p.rounds && w > p.rounds) w = p.rounds;
        cfg[k].want = w;
        if (w < p.peer_lo) p.peer_lo = w;
        if (w > p.peer_hi) p.peer_hi = w;
    }
    if (!p.rounds) /* peers only */
        for (size_t k = 0; k < nc; k++)
            if (cfg[k].want > p.rounds) p.rounds = cfg[k].want;
    for (size_t k = 0; k < nc; k++)
        if (!bench_is_peer(bench_impl_of(s, &cfg[k]))) cfg[k].want = p.rounds;
    return p;
}

double bench_rounds(bench_set *s, size_t nc, size_t rounds, double units,
                    bench_sample_fn *sample, void *ctx)
{
    bench_config *cfg = s->cfg;
    for (size_t k = 0; k < nc; k++) {
        cfg[k].samples = malloc((cfg[k].want + 1) * sizeof(double));
        cfg[k].round = malloc((cfg[k].want + 1) * sizeof(size_t));
        if (!cfg[k].samples || !cfg[k].round) bench_die("%s", "out of memory");
        cfg[k].nsamples = 0;
    }
    double t0 = bench_now_ns();
    for (size_t r = 0; r < rounds; r++)
        for (size_t k = 0; k < nc; k++) {
            size_t w = cfg[k].want;
            if ((r + 1) * w / rounds == r * w / rounds)
                continue;
            cfg[k].round[cfg[k].nsamples] = r;
            cfg[k].samples[cfg[k].nsamples++] = sample(&cfg[k], ctx) / units;
        }
    return bench_now_ns() - t0;
}

bench_stats bench_stats_of(bench_config *c)
{
    bench_stats st;
    st.n = c->nsamples;
    st.median = bench_median(c->samples, st.n);
    st.min = c->samples[0];
    st.max = c->samples[st.n - 1];
    return st;
}

void bench_free_samples(bench_set *s, size_t nc)
{
    for (size_t k = 0; k < nc; k++) {
        free(s->cfg[k].samples);
        free(s->cfg[k].round);
        s->cfg[k].samples = NULL;
        s->cfg[k].round = NULL;
    }
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

FILE *bench_csv_open(const char *path, const char *header)
{
    if (!path) return NULL;
    FILE *f = fopen(path, "w");
    if (!f) bench_die("cannot open %s", path);
    fputs(header, f);
    return f;
}

void bench_csv_close(FILE *f, const char *path)
{
    if (f && fclose(f) != 0)
        bench_die("error writing %s", path);
}

void bench_print_peers(const bench_set *s, const bench_plan *p, const bench_opts *o)
{
    if (!s->any_peer) return;
    if (o->peer_reps || o->quick)
        printf("peers: %zu samples each (%s)\n", p->peer_lo,
               o->quick ? "--quick" : "--peer-reps");
    else
        printf("peers: %zu%s%.0zu samples each, bounded by --peer-time"
               " %.1f s per configuration (at least 3, at most %zu),"
               " spread over the rounds\n", p->peer_lo,
               p->peer_hi > p->peer_lo ? "-" : "", p->peer_hi > p->peer_lo ? p->peer_hi : 0,
               o->peer_time, p->rounds);
}

void bench_write_raw(FILE *raw, const bench_set *s, size_t nc, size_t rounds, uint64_t n)
{
    if (!raw) return;
    for (size_t r = 0; r < rounds; r++)
        for (size_t k = 0; k < nc; k++) {
            const bench_config *c = &s->cfg[k];
            for (size_t i = 0; i < c->nsamples; i++)
                if (c->round[i] == r)
                    fprintf(raw, "%" PRIu64 ",%s,%u,%zu,%.4f\n", n,
                            bench_impl_of(s, c)->name, c->threads, r, c->samples[i]);
        }
}

void bench_report(bench_set *s, size_t nc, int width, FILE *csv, const char *workload,
                  uint64_t n, unsigned long heartbeat)
{
    printf("  %-*s %7s %10s %10s %10s %12s %8s\n", width, "impl", "threads",
           "median", "min", "max", "vs baseline", "samples");
    double base_median = 0;
    for (size_t k = 0; k < nc; k++) {
        bench_config *c = &s->cfg[k];
        const bench_impl *im = bench_impl_of(s, c);
        bench_stats st = bench_stats_of(c);
        if (im->kind == BENCH_BASELINE) base_median = st.median;
        char ratio[32] = "-";
        if (base_median > 0)
            snprintf(ratio, sizeof ratio, "%.2fx", st.median / base_median);
        printf("  %-*s %7u %10.3f %10.3f %10.3f %12s %8zu\n", width, im->name, c->threads,
               st.median, st.min, st.max, ratio, st.n);
        if (csv) {
            fprintf(csv, "%s,%" PRIu64 ",%s,%u,%lu,%.4f,%.4f,%.4f,", workload, n, im->name,
                    c->threads, im->kind == BENCH_CLOVE ? bench_heartbeat_us(heartbeat) : 0ul,
                    st.median, st.min, st.max);
            if (base_median > 0)
                fprintf(csv, "%.4f", st.median / base_median);
            fprintf(csv, ",%zu\n", st.n);
        }
    }
    bench_free_samples(s, nc);
}

/* ------------------------------------------------------------------------ */
/* Idle probes                                                              */
/* ------------------------------------------------------------------------ */

static long long read_switches(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1; /* the thread went away meanwhile */
    char line[256];
    long long total = 0;
    while (fgets(line, sizeof line, f)) {
        long long v;
        if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1 ||
            sscanf(line, "nonvoluntary_ctxt_switches: %lld", &v) == 1)
            total += v;
    }
    fclose(f);
    return total;
}

bench_ctxsw bench_count_switches(void)
{
    bench_ctxsw c = { 0, 0, 0 };
    pid_t self = getpid();
    DIR *d = opendir("/proc/self/task");
    if (!d) {
        fprintf(stderr, "%s: /proc/self/task: %s\n", bench_prog, strerror(errno));
        exit(2);
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        long long v = read_switches(path);
        if (v < 0)
            continue;
        c.nthreads++;
        if (atoi(e->d_name) == self)
            c.main += v;
        else
            c.others += v;
    }
    closedir(d);
    return c;
}

double bench_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

bench_window bench_idle_window(double secs)
{
    bench_ctxsw c0 = bench_count_switches();
    double cpu0 = bench_cpu_ms(), w0 = bench_now_ns();
    bench_sleep_s(secs);
    double cpu1 = bench_cpu_ms(), w1 = bench_now_ns();
    bench_ctxsw c1 = bench_count_switches();
    bench_window w = { cpu1 - cpu0, (w1 - w0) / 1e9, c1.others - c0.others,
                       c1.main - c0.main, c1.nthreads };
    return w;
}
