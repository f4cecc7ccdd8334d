/* SPDX-License-Identifier: MIT */
/*
 * idle_peers.c - what an idle pool costs and how long a sleeping worker
 * takes to start work, for clove and (when built) its peers: OpenMP tasks
 * (libgomp, with the default OMP_WAIT_POLICY and with passive) and oneTBB.
 * The Rayon figures come from the Rust companion (bench/rayon: `idle`,
 * `wake`), which prints the same IDLE/WAKE lines.
 *
 * Every runtime is measured in a process of its own (this program runs
 * itself once per runtime with --only; OMP_WAIT_POLICY is set for that
 * process only), so that no runtime's threads sit in another's window.
 *
 * Idle (as bench/idle.c): two windows of --sleep seconds (default 2) in
 * which the main thread only sleeps: "fresh", after the pool/team/arena was
 * set up (one empty run), and "after", right after one tree sum of --nodes
 * nodes (forking at every node, checked). Reported: CPU time of the whole
 * process (CLOCK_PROCESS_CPUTIME_ID) and the context switches of every
 * thread but the main one (/proc/self/task/<tid>/status).
 *
 * Wake latency (--wake-threads threads, default 2; --samples samples after
 * a --gap-ms pause each, default 100 x 20 ms):
 *   clove  a heartbeat share to the shared job starting on the sleeping
 *          worker. Inside clove_pool_run, after the gap, worker 0 forks the
 *          probe job J, then loops: t_b = now; fork + join an empty job;
 *          read clove_pool_stats. The heartbeat makes one of those forks
 *          hand its oldest queued fork (J) to the idle worker and wake it;
 *          the first iteration whose stats show the share gives t_share =
 *          its t_b, i.e. a timestamp taken just before the fork that shared
 *          (an upper bound on the latency by at most one empty fork/join
 *          and one stats call, ~0.1 us). Latency = J's start (its first
 *          statement, on the other worker) - t_share. Also reported: fork of
 *          J to its start, which adds the wait for the heartbeat (0 to
 *          heartbeat_us, plus the heartbeat thread's own wake-up).
 *   omp, tbb  spawn a task while the other threads sleep -> the task's
 *          start on another thread (idle_peers.h).
 * Output: a human line per measurement, and machine-readable lines
 *   IDLE,impl,window,threads,cpu_ms,switches,wall_s
 *   WAKE,impl,threads,median_us,min_us,p90_us,max_us,samples
 *
 * Usage: idle_peers [-t THREADS] [--sleep S] [--nodes N] [--wake-threads T]
 *                   [--samples K] [--gap-ms G] [--only IMPL]... [--no-idle]
 *                   [--no-wake]
 *        IMPL: clove, omp-default, omp-passive, tbb (default: all built)
 */
#define _GNU_SOURCE
#include "harness.h"
#include "idle_peers.h"
#include "tree.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void window(const char *impl, const char *label, double secs, unsigned threads)
{
    bench_window w = bench_idle_window(secs);
    printf("  %-11s %-6s %3u threads (%d in process): %.2f s window: CPU %.3f ms,"
           " context switches %lld (other threads) + %lld (main thread)\n",
           impl, label, threads, w.nthreads, w.wall_s, w.cpu_ms, w.others, w.main);
    printf("IDLE,%s,%s,%u,%.3f,%lld,%.2f\n", impl, label, threads, w.cpu_ms, w.others,
           w.wall_s);
    fflush(stdout);
}


static void report_wake(const char *impl, const char *what, unsigned threads,
                        double *lat, unsigned k, unsigned not_taken)
{
    if (k == 0) {
        printf("  %-11s wake %u threads: no sample ran on another thread (%u not taken)\n",
               impl, threads, not_taken);
        return;
    }
    double med = bench_median(lat, k);
    double p90 = lat[(k * 9 / 10 < k) ? k * 9 / 10 : k - 1];
    printf("  %-11s wake %u threads, %s: median %.1f us, min %.1f, p90 %.1f,"
           " max %.1f (%u samples, %u not taken within 100 ms)\n",
           impl, threads, what, med, lat[0], p90, lat[k - 1], k, not_taken);
    printf("WAKE,%s,%u,%.2f,%.2f,%.2f,%.2f,%u\n", impl, threads, med, lat[0], p90,
           lat[k - 1], k);
    fflush(stdout);
}

static void check_sum(const char *impl, int64_t got, long nodes)
{
    int64_t expect = (int64_t)nodes * (nodes + 1) / 2;
    if (got != expect) {
        fprintf(stderr, "idle_peers: %s: WRONG SUM %" PRId64 ", expected %" PRId64 "\n",
                impl, got, expect);
        abort();
    }
}

/* ------------------------------------------------------------------------ */
/* clove                                                                    */
/* ------------------------------------------------------------------------ */

struct probe {
    atomic_int started;
    uint64_t t_start;
    unsigned worker;
};

static void probe_job(clove_task *t, void *p)
{
    struct probe *pr = p;
    pr->t_start = idle_now_ns();
    pr->worker = clove_worker_index(t);
    atomic_store_explicit(&pr->started, 1, memory_order_release);
}

static void empty_job(clove_task *t, void *p)
{
    (void)t;
    (void)p;
}

struct clove_wake {
    clove_pool *pool;
    unsigned samples, gap_ms;
    double *share_us, *fork_us;
    unsigned got, not_taken, no_share;
};

static void clove_wake_run(clove_task *t, void *p)
{
    struct clove_wake *w = p;
    unsigned me = clove_worker_index(t);
    for (unsigned i = 0; i <= w->samples; i++) {
        bench_sleep_s(w->gap_ms / 1e3);
        clove_stats s0, s1;
        clove_pool_stats(w->pool, &s0, NULL, 0);
        struct probe pr = { 0, 0, 0 };
        clove_future f;
        uint64_t t_fork = idle_now_ns(), t_share = 0;
        clove_fork(t, &f, probe_job, &pr);
        /* A heartbeat flag raised during the gap is answered by this fork. */
        clove_pool_stats(w->pool, &s1, NULL, 0);
        if (s1.shared != s0.shared)
            t_share = t_fork;
        uint64_t limit = t_fork + 100000000u;
        while (!atomic_load_explicit(&pr.started, memory_order_acquire)) {
            uint64_t t_b = idle_now_ns();
            if (t_b > limit)
                break;
            clove_future g;
            clove_fork(t, &g, empty_job, NULL);
            if (!clove_join(t, &g))
                empty_job(t, NULL);
            if (!t_share) {
                clove_pool_stats(w->pool, &s1, NULL, 0);
                if (s1.shared != s0.shared)
                    t_share = t_b;
            }
        }
        if (!clove_join(t, &f))
            probe_job(t, &pr);
        if (i == 0)
            continue;
        if (pr.worker == me) {
            w->not_taken++;
        } else if (!t_share) {
            w->no_share++; /* cannot happen unless the stats lag: not counted */
        } else {
            w->share_us[w->got] = (double)(pr.t_start - t_share) / 1e3;
            w->fork_us[w->got] = (double)(pr.t_start - t_fork) / 1e3;
            w->got++;
        }
    }
}

/* A pool of `threads` threads; exits if there is none. */
static clove_pool *new_pool(unsigned threads)
{
    clove_config cc = { .threads = threads };
    clove_pool *pool;
    if (clove_pool_create(&pool, &cc)) {
        fputs("idle_peers: clove_pool_create failed\n", stderr);
        exit(2);
    }
    return pool;
}

static void run_clove(unsigned threads, double secs, long nodes, bool idle,
                      bool wake, unsigned wthreads, unsigned samples, unsigned gap_ms)
{
    if (idle) {
        clove_pool *pool = new_pool(threads);
        bench_sleep_s(0.1);
        window("clove", "fresh", secs, threads);
        node *root = tree_build(1, nodes);
        struct tree_sum_arg a = { root, 0 };
        clove_pool_run(pool, tree_sum_job, &a);
        check_sum("clove", a.result, nodes);
        window("clove", "after", secs, threads);
        clove_pool_destroy(pool);
        tree_destroy(root);
    }
    if (wake) {
        clove_pool *pool = new_pool(wthreads);
        struct clove_wake w = { pool, samples, gap_ms, calloc(samples, sizeof(double)),
                                calloc(samples, sizeof(double)), 0, 0, 0 };
        if (!w.share_us || !w.fork_us) {
            fputs("idle_peers: out of memory\n", stderr);
            exit(2);
        }
        clove_stats st0, st1;
        clove_pool_stats(pool, &st0, NULL, 0);
        clove_pool_run(pool, clove_wake_run, &w);
        clove_pool_stats(pool, &st1, NULL, 0);
        report_wake("clove", "heartbeat share -> job start", wthreads, w.share_us,
                    w.got, w.not_taken);
        if (w.no_share)
            printf("  clove       (%u samples ran elsewhere with no share seen: dropped)\n",
                   w.no_share);
        double *fork_us = w.fork_us;
        unsigned k = w.got;
        if (k) {
            double med = bench_median(fork_us, k);
            printf("  %-11s (fork -> job start, heartbeat wait included: median %.1f us,"
                   " min %.1f, max %.1f; worker sleeps during the run: %" PRIu64
                   ", shares %" PRIu64 ")\n", "clove", med,
                   fork_us[0], fork_us[k - 1], st1.sleeps - st0.sleeps,
                   st1.shared - st0.shared);
            printf("WAKE,clove_fork,%u,%.2f,%.2f,,%.2f,%u\n", wthreads, med,
                   fork_us[0], fork_us[k - 1], k);
        }
        free(w.share_us);
        free(w.fork_us);
        clove_pool_destroy(pool);
    }
}

/* ------------------------------------------------------------------------ */
/* Peers                                                                    */
/* ------------------------------------------------------------------------ */

static void run_omp(const char *impl, unsigned threads, double secs, long nodes,
                    bool idle, bool wake, unsigned wthreads, unsigned samples,
                    unsigned gap_ms)
{
#ifdef CLOVE_BENCH_OPENMP
    if (idle) {
        omp_peer_setup(threads);
        bench_sleep_s(0.1);
        window(impl, "fresh", secs, threads);
        node *root = tree_build(1, nodes);
        check_sum(impl, omp_tree_sum(root, threads), nodes);
        window(impl, "after", secs, threads);
        tree_destroy(root);
    }
    if (wake) {
        double *lat = calloc(samples, sizeof(double));
        unsigned missed = 0;
        if (!lat) exit(2);
        unsigned k = omp_wake(wthreads, samples, gap_ms, lat, &missed);
        report_wake(impl, "task spawn -> start", wthreads, lat, k, missed);
        free(lat);
    }
#else
    (void)threads; (void)secs; (void)nodes; (void)idle; (void)wake;
    (void)wthreads; (void)samples; (void)gap_ms;
    printf("peer %s: not built (%s)\n", impl, CLOVE_BENCH_OPENMP_MISSING);
#endif
}

#ifdef CLOVE_BENCH_TBB
/* An arena of `threads` threads, or NULL (reported). */
static void *new_arena(unsigned threads, char *err, unsigned errlen)
{
    unsigned joined = 0;
    void *arena = tbb_peer_create(threads, &joined, err, errlen);
    if (!arena)
        printf("peer tbb: task_arena failed: %s\n", err);
    return arena;
}
#endif

static void run_tbb(unsigned threads, double secs, long nodes, bool idle,
                    bool wake, unsigned wthreads, unsigned samples, unsigned gap_ms)
{
#ifdef CLOVE_BENCH_TBB
    char err[256] = "";
    unsigned most = threads > wthreads ? threads : wthreads;
    if (tbb_peer_init(most, err, sizeof err)) {
        printf("peer tbb: global_control failed: %s\n", err);
        return;
    }
    if (idle) {
        void *arena = new_arena(threads, err, sizeof err);
        if (!arena)
            return;
        bench_sleep_s(0.1);
        window("tbb", "fresh", secs, threads);
        node *root = tree_build(1, nodes);
        check_sum("tbb", tbb_tree_sum(arena, root), nodes);
        window("tbb", "after", secs, threads);
        tree_destroy(root);
        tbb_peer_destroy(arena);
    }
    if (wake) {
        void *arena = new_arena(wthreads, err, sizeof err);
        if (!arena)
            return;
        double *lat = calloc(samples, sizeof(double));
        unsigned missed = 0;
        if (!lat) exit(2);
        unsigned k = tbb_wake(arena, samples, gap_ms, lat, &missed);
        report_wake("tbb", "task_group.run -> start", wthreads, lat, k, missed);
        free(lat);
        tbb_peer_destroy(arena);
    }
    if (tbb_peer_fini() != 0)
        fprintf(stderr, "idle_peers: warning: tbb: its worker threads could not be waited for\n");
#else
    (void)threads; (void)secs; (void)nodes; (void)idle; (void)wake;
    (void)wthreads; (void)samples; (void)gap_ms;
    printf("peer tbb: not built (%s)\n", CLOVE_BENCH_TBB_MISSING);
#endif
}

/* ------------------------------------------------------------------------ */

static const char *const impls[] = { "clove", "omp-default", "omp-passive", "tbb" };
#define NIMPLS (sizeof impls / sizeof impls[0])

static void usage(void)
{
    fputs("usage: idle_peers [-t THREADS] [--sleep S] [--nodes N] [--wake-threads T]\n"
          "                  [--samples K] [--gap-ms G] [--only IMPL]... [--no-idle]\n"
          "                  [--no-wake]\n"
          "       IMPL: clove, omp-default, omp-passive, tbb\n", stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    bench_prog = "idle_peers";
    unsigned threads = 16, wthreads = 2, samples = 100, gap_ms = 20;
    double secs = 2.0;
    long nodes = 1000000;
    bool idle = true, wake = true, only[NIMPLS] = { false };
    int nonly = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-t") && i + 1 < argc)
            threads = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--sleep") && i + 1 < argc)
            secs = strtod(argv[++i], NULL);
        else if (!strcmp(a, "--nodes") && i + 1 < argc)
            nodes = (long)strtod(argv[++i], NULL);
        else if (!strcmp(a, "--wake-threads") && i + 1 < argc)
            wthreads = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--samples") && i + 1 < argc)
            samples = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--gap-ms") && i + 1 < argc)
            gap_ms = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--no-idle"))
            idle = false;
        else if (!strcmp(a, "--no-wake"))
            wake = false;
        else if (!strcmp(a, "--only") && i + 1 < argc) {
            const char *w = argv[++i];
            size_t k = 0;
            while (k < NIMPLS && strcmp(w, impls[k])) k++;
            if (k == NIMPLS) usage();
            only[k] = true;
            nonly++;
        } else
            usage();
    }
    if (threads == 0 || threads > CLOVE_MAX_THREADS || wthreads < 2 ||
        wthreads > CLOVE_MAX_THREADS || !(secs > 0) || nodes < 1 || samples < 1 ||
        samples > 100000 || gap_ms > 10000)
        usage();

    if (nonly != 1) {
        /* One process per runtime: run this program again with --only. */
        printf("idle_peers: idle %u-thread pools, %.1f s windows; wake latency with %u"
               " threads, %u samples after %u ms gaps\n", threads, secs, wthreads,
               samples, gap_ms);
        fflush(stdout);
        for (size_t k = 0; k < NIMPLS; k++) {
            if (nonly && !only[k])
                continue;
            pid_t pid = fork();
            if (pid < 0) {
                perror("idle_peers: fork");
                return 2;
            }
            if (pid == 0) {
                if (!strcmp(impls[k], "omp-passive"))
                    setenv("OMP_WAIT_POLICY", "passive", 1);
                else
                    unsetenv("OMP_WAIT_POLICY");
                char **av = calloc((size_t)argc + 3, sizeof *av);
                if (!av) _exit(2);
                int j = 0;
                av[j++] = argv[0];
                for (int i = 1; i < argc; i++) {
                    if (!strcmp(argv[i], "--only")) { i++; continue; }
                    av[j++] = argv[i];
                }
                av[j++] = "--only";
                av[j++] = (char *)impls[k];
                execv("/proc/self/exe", av);
                perror("idle_peers: execv");
                _exit(2);
            }
            int st;
            if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
                fprintf(stderr, "idle_peers: %s failed\n", impls[k]);
                return 1;
            }
        }
        return 0;
    }

    if (only[0])
        run_clove(threads, secs, nodes, idle, wake, wthreads, samples, gap_ms);
    if (only[1])
        run_omp("omp-default", threads, secs, nodes, idle, wake, wthreads, samples, gap_ms);
    if (only[2])
        run_omp("omp-passive", threads, secs, nodes, idle, wake, wthreads, samples, gap_ms);
    if (only[3])
        run_tbb(threads, secs, nodes, idle, wake, wthreads, samples, gap_ms);
    return 0;
}
