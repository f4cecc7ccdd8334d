/* SPDX-License-Identifier: MIT */
/*
 * pin.c - does CLOVE_PIN_WORKERS help? Each worker repeatedly sums a
 * working set of its own (64 KiB, 512 KiB, 4 MiB and 64 MiB by default:
 * inside L1/L2, the size of L2, inside L3, beyond L3 on this machine),
 * with and without pinning, measured side by side.
 *
 * One sample = one clove_pool_run of clove_for over P passes (P chosen so
 * that a sample sums about --bytes bytes in all); the body of a pass sums
 * the buffer of worker clove_worker_index(t) as 64-bit words, so whichever
 * worker runs a pass, it sums its own buffer, which stays hot in its core's
 * caches unless the thread moves. Every pass's sum is checked.
 *
 * Modes, one pool each (created once, not timed), interleaved round by
 * round (one sample of every mode and size per round):
 *   unpinned     flags 0
 *   pinned       CLOVE_PIN_WORKERS: worker i (1 .. threads-1) pinned to the
 *                (i mod m)-th CPU of the creating thread's mask; worker 0,
 *                the thread calling clove_pool_run, is left alone (the
 *                library never pins the calling thread)
 *   pinned+main  the same pool, and the bench pins the calling thread to
 *                the 0-th CPU of the mask for the sample (restored after):
 *                every worker on a CPU of its own
 * Reported per mode and size: ns per byte of one pass (the median over all
 * passes of a sample, timed inside the pass; then the median over samples
 * and min-max of the sample medians), the aggregate throughput (sample wall
 * time / bytes summed by all workers), the share of passes run by worker
 * 0, and the CPU migrations of the pool's threads per second of sampling
 * (se.nr_migrations in /proc/self/task/<tid>/sched, when the kernel has it).
 *
 * Usage: pin [-t THREADS] [-s BYTES]... [--rounds R] [--bytes B] [--csv FILE]
 *            [--quick]
 */
#define _GNU_SOURCE
#include <clove.h>

#include "bench_util.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 64
#define MAX_SIZES 8
#define NMODES 3
static const char *const mode_name[NMODES] = { "unpinned", "pinned", "pinned+main" };

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}



struct worker_rec {
    pid_t tid;
    size_t passes;
    char pad[64 - sizeof(pid_t) - sizeof(size_t)];
};

struct ctx {
    uint64_t *buf[MAX_WORKERS]; /* per worker index */
    size_t words;
    uint64_t expect;
    double *pass_ns;            /* ns per pass, by pass number */
    struct worker_rec w[MAX_WORKERS];
};

__attribute__((noinline)) static uint64_t sum_words(const uint64_t *p, size_t n)
{
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += p[i];
        s1 += p[i + 1];
        s2 += p[i + 2];
        s3 += p[i + 3];
    }
    for (; i < n; i++)
        s0 += p[i];
    return s0 + s1 + s2 + s3;
}

static void body(clove_task *t, size_t lo, size_t hi, void *p)
{
    struct ctx *c = p;
    unsigned idx = clove_worker_index(t);
    if (idx >= MAX_WORKERS) {
        fputs("pin: worker index out of range\n", stderr);
        abort();
    }
    struct worker_rec *w = &c->w[idx];
    if (!w->tid)
        w->tid = (pid_t)syscall(SYS_gettid);
    const uint64_t *b = c->buf[idx];
    for (size_t i = lo; i < hi; i++) {
        uint64_t t0 = now_ns();
        uint64_t s = sum_words(b, c->words);
        uint64_t t1 = now_ns();
        if (s != c->expect) {
            fprintf(stderr, "pin: WRONG SUM %" PRIu64 ", expected %" PRIu64 "\n", s,
                    c->expect);
            abort();
        }
        c->pass_ns[i] = (double)(t1 - t0);
        w->passes++;
    }
}

struct job {
    struct ctx *c;
    size_t passes;
};

static void job_fn(clove_task *t, void *p)
{
    struct job *j = p;
    clove_for(t, 0, j->passes, body, j->c);
}

static long long migrations(pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/sched", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    long long v = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "se.nr_migrations : %lld", &v) == 1)
            break;
    fclose(f);
    return v;
}

static long long all_migrations(const struct ctx *c, unsigned threads)
{
    long long s = 0;
    for (unsigned i = 0; i < threads; i++) {
        if (!c->w[i].tid)
            continue;
        long long m = migrations(c->w[i].tid);
        if (m < 0)
            return -1;
        s += m;
    }
    return s;
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'k' || *end == 'K') v *= 1024;
    else if (*end == 'm' || *end == 'M') v *= 1024 * 1024;
    else if (*end) v = -1;
    if (!(v >= 64) || v > 1e10) {
        fprintf(stderr, "pin: bad size %s\n", s);
        exit(2);
    }
    return (size_t)v;
}

int main(int argc, char **argv)
{
    unsigned threads = 2, rounds = 15;
    size_t sizes[MAX_SIZES], nsizes = 0;
    double bytes_per_sample = 1 << 30;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-t") && i + 1 < argc)
            threads = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "-s") && i + 1 < argc && nsizes < MAX_SIZES)
            sizes[nsizes++] = parse_size(argv[++i]);
        else if (!strcmp(a, "--rounds") && i + 1 < argc)
            rounds = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(a, "--bytes") && i + 1 < argc)
            bytes_per_sample = (double)parse_size(argv[++i]);
        else if (!strcmp(a, "--csv") && i + 1 < argc)
            csv_path = argv[++i];
        else if (!strcmp(a, "--quick")) {
            rounds = 3;
            bytes_per_sample = 16 << 20;
        } else {
            fputs("usage: pin [-t THREADS] [-s BYTES]... [--rounds R] [--bytes B]"
                  " [--csv FILE] [--quick]\n", stderr);
            return 2;
        }
    }
    if (!nsizes) {
        sizes[0] = 64 << 10;
        sizes[1] = 512 << 10;
        sizes[2] = 4 << 20;
        sizes[3] = 64 << 20;
        nsizes = 4;
    }
    if (threads < 1 || threads > MAX_WORKERS || rounds < 1) {
        fputs("pin: bad arguments\n", stderr);
        return 2;
    }

    cpu_set_t mask, cpu0;
    if (sched_getaffinity(0, sizeof mask, &mask)) {
        perror("pin: sched_getaffinity");
        return 2;
    }
    CPU_ZERO(&cpu0);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mask)) {
            CPU_SET(c, &cpu0);
            break;
        }

    clove_pool *pool[2];
    for (int m = 0; m < 2; m++) {
        clove_config cc = { .threads = threads, .flags = m ? CLOVE_PIN_WORKERS : 0 };
        int rc = clove_pool_create(&pool[m], &cc);
        if (rc) {
            fprintf(stderr, "pin: clove_pool_create: %s\n", strerror(rc));
            return 2;
        }
    }

    /* Per mode, size: sample medians (ns/byte per pass), throughput, share. */
    size_t nsamp = rounds;
    double *med[NMODES][MAX_SIZES], *thr[NMODES][MAX_SIZES], w0share[NMODES][MAX_SIZES];
    long long migr[NMODES][MAX_SIZES];
    double spent[NMODES][MAX_SIZES];
    struct ctx *ctxs[NMODES][MAX_SIZES];
    size_t passes_of[MAX_SIZES];
    for (size_t s = 0; s < nsizes; s++) {
        size_t words = sizes[s] / 8;
        double p = bytes_per_sample / (double)(words * 8);
        passes_of[s] = p < threads * 4.0 ? threads * 4 : (size_t)p;
        for (int m = 0; m < NMODES; m++) {
            struct ctx *c = calloc(1, sizeof *c);
            med[m][s] = calloc(nsamp, sizeof(double));
            thr[m][s] = calloc(nsamp, sizeof(double));
            if (!c || !med[m][s] || !thr[m][s]) return 2;
            c->words = words;
            c->pass_ns = calloc(passes_of[s], sizeof(double));
            if (!c->pass_ns) return 2;
            /* Buffers are filled (first touched) on the main thread; values
             * 1..words, so every pass's sum is known. */
            for (unsigned i = 0; i < threads; i++) {
                c->buf[i] = aligned_alloc(64, (words * 8 + 63) / 64 * 64);
                if (!c->buf[i]) return 2;
                for (size_t k = 0; k < words; k++) c->buf[i][k] = k + 1;
            }
            c->expect = (uint64_t)words * (words + 1) / 2;
            ctxs[m][s] = c;
            w0share[m][s] = 0;
            migr[m][s] = 0;
            spent[m][s] = 0;
        }
    }

    printf("pin: %u threads, each worker sums its own working set; %u rounds, ~%.0f MiB"
           " summed per sample\n", threads, rounds, bytes_per_sample / (1 << 20));
    fflush(stdout);
    bool have_migr = true;
    for (unsigned r = 0; r <= rounds; r++) { /* round 0: warm-up */
        for (size_t s = 0; s < nsizes; s++) {
            for (int m = 0; m < NMODES; m++) {
                struct ctx *c = ctxs[m][s];
                for (unsigned i = 0; i < threads; i++) c->w[i].passes = 0;
                if (m == 2 && pthread_setaffinity_np(pthread_self(), sizeof cpu0, &cpu0)) {
                    fputs("pin: cannot pin the main thread\n", stderr);
                    return 2;
                }
                long long mg0 = all_migrations(c, threads);
                struct job j = { c, passes_of[s] };
                uint64_t t0 = now_ns();
                clove_pool_run(pool[m ? 1 : 0], job_fn, &j);
                uint64_t t1 = now_ns();
                long long mg1 = all_migrations(c, threads);
                if (m == 2)
                    pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);
                if (r == 0)
                    continue;
                double bytes = (double)passes_of[s] * (double)sizes[s];
                for (size_t k = 0; k < passes_of[s]; k++)
                    c->pass_ns[k] /= (double)sizes[s];
                med[m][s][r - 1] = bench_median(c->pass_ns, passes_of[s]);
                thr[m][s][r - 1] = (double)(t1 - t0) / bytes;
                w0share[m][s] += (double)c->w[0].passes / (double)passes_of[s];
                spent[m][s] += (double)(t1 - t0) / 1e9;
                if (mg0 < 0 || mg1 < 0) have_migr = false;
                else migr[m][s] += mg1 - mg0;
            }
        }
    }

    FILE *csv = NULL;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            perror(csv_path);
            return 2;
        }
        fputs("workload,bytes,mode,threads,median_ns_per_byte_per_pass,min,max,"
              "throughput_ns_per_byte,ratio_to_unpinned,samples,worker0_share,"
              "migrations_per_s\n", csv);
    }
    printf("  %-9s %-12s %11s %19s %11s %9s %8s %10s\n", "size", "mode", "ns/B pass",
           "(min - max)", "vs unpinned", "ns/B all", "w0 share", "migr/s");
    for (size_t s = 0; s < nsizes; s++) {
        double base = 0;
        for (int m = 0; m < NMODES; m++) {
            double *v = med[m][s];
            double md = bench_median(v, nsamp), th = bench_median(thr[m][s], nsamp);
            if (m == 0) base = md;
            char size[32];
            if (sizes[s] >= 1 << 20) snprintf(size, sizeof size, "%zu MiB", sizes[s] >> 20);
            else snprintf(size, sizeof size, "%zu KiB", sizes[s] >> 10);
            char mg[32] = "-";
            if (have_migr) snprintf(mg, sizeof mg, "%.1f", (double)migr[m][s] / spent[m][s]);
            printf("  %-9s %-12s %11.4f   (%.4f - %.4f) %10.3fx %9.4f %7.0f%% %10s\n", size,
                   mode_name[m], md, v[0], v[nsamp - 1], md / base, th,
                   100 * w0share[m][s] / rounds, mg);
            if (csv)
                fprintf(csv, "pin,%zu,%s,%u,%.5f,%.5f,%.5f,%.5f,%.4f,%zu,%.3f,%s\n", sizes[s],
                        mode_name[m], threads, md, v[0], v[nsamp - 1], th, md / base, nsamp,
                        w0share[m][s] / rounds, have_migr ? mg : "");
        }
    }
    if (csv && fclose(csv)) {
        perror(csv_path);
        return 2;
    }
    for (int m = 0; m < 2; m++)
        clove_pool_destroy(pool[m]);
    for (size_t s = 0; s < nsizes; s++)
        for (int m = 0; m < NMODES; m++) {
            for (unsigned i = 0; i < threads; i++) free(ctxs[m][s]->buf[i]);
            free(ctxs[m][s]->pass_ns);
            free(ctxs[m][s]);
            free(med[m][s]);
            free(thr[m][s]);
        }
    return 0;
}
