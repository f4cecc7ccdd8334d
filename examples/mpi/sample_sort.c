/* SPDX-License-Identifier: MIT */
/*
 * sample_sort.c - a distributed sort: MPI between processes, clove inside
 * each one.
 *
 * Every rank owns n random 64-bit keys and one clove pool. The ranks
 *   1. sort their keys locally with clove_sort (in parallel, in the pool);
 *   2. take 32 regularly spaced samples each, gather all samples on every
 *      rank (MPI_Allgather) and pick p - 1 splitters from them;
 *   3. cut their sorted keys at the splitters (binary search) and send
 *      bucket i to rank i (MPI_Alltoall for the counts, MPI_Alltoallv for
 *      the keys);
 *   4. sort what they received with clove_sort again.
 * Afterwards rank i holds a sorted run and every key on rank i is <= every
 * key on rank i + 1. That is checked, together with the number of keys and
 * two order-independent checksums (sum and xor) of all keys before and
 * after (MPI_Allreduce).
 *
 * Threads: only the main thread calls MPI, and never while clove's workers
 * run its jobs, so MPI_THREAD_FUNNELED is enough. It is requested, and the
 * program stops with a message if the MPI library provides less.
 *
 * usage: mpirun -np P sample_sort [keys_per_rank [threads]]
 *        (default 2000000 keys; threads 0 = one per CPU this rank may use)
 */
#include <clove.h>
#include <mpi.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLES 32 /* per rank */

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* splitmix64 */
static uint64_t next_key(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

struct sort_arg {
    uint64_t *keys;
    size_t n;
    int rc;
};

static void sort_job(clove_task *t, void *p)
{
    struct sort_arg *a = p;
    a->rc = clove_sort(t, a->keys, a->n, sizeof *a->keys, cmp_u64);
}

/* Sort keys[0 .. n) in the pool; exits on failure (ENOMEM). */
static void pool_sort(clove_pool *pool, uint64_t *keys, size_t n)
{
    struct sort_arg a = {keys, n, 0};
    clove_pool_run(pool, sort_job, &a); /* this thread joins in */
    if (a.rc != 0) {
        fprintf(stderr, "sample_sort: clove_sort failed: %d\n", a.rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* Index of the first key > v in sorted keys[0 .. n). */
static size_t upper_bound(const uint64_t *keys, size_t n, uint64_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid] <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "sample_sort: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (provided < MPI_THREAD_FUNNELED) {
        if (rank == 0)
            fprintf(stderr, "sample_sort: the MPI library provides thread level %d, "
                    "below MPI_THREAD_FUNNELED (%d), which clove's worker threads "
                    "need; use an MPI built with thread support\n",
                    provided, MPI_THREAD_FUNNELED);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }

    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
    unsigned threads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    if (n > 100000000) { /* MPI counts are ints; keep every bucket below that */
        if (rank == 0)
            fprintf(stderr, "sample_sort: at most 100000000 keys per rank\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* One pool per rank, created after MPI_Init_thread. */
    clove_pool *pool;
    clove_config cfg = {.threads = threads};
    int rc = clove_pool_create(&pool, &cfg);
    if (rc != 0) {
        fprintf(stderr, "sample_sort: clove_pool_create: error %d\n", rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* Keys, different on every rank, and their checksums. */
    uint64_t *keys = xmalloc(n * sizeof *keys);
    uint64_t state = 0x1234567u + (uint64_t)rank * 0x9E3779B97F4A7C15u;
    uint64_t before[3] = {n, 0, 0}; /* count, sum, xor */
    for (size_t i = 0; i < n; i++) {
        keys[i] = next_key(&state);
        before[1] += keys[i];
        before[2] ^= keys[i];
    }
    double t0 = MPI_Wtime();

    /* 1. Local sort. */
    pool_sort(pool, keys, n);

    /* 2. Samples from everyone, then p - 1 splitters. A rank without keys
     *    contributes UINT64_MAX, which only makes the last bucket bigger. */
    uint64_t sample[SAMPLES];
    for (size_t i = 0; i < SAMPLES; i++)
        sample[i] = n ? keys[(2 * i + 1) * n / (2 * SAMPLES)] : UINT64_MAX;
    uint64_t *all = xmalloc((size_t)p * SAMPLES * sizeof *all);
    MPI_Allgather(sample, SAMPLES, MPI_UINT64_T, all, SAMPLES, MPI_UINT64_T,
                  MPI_COMM_WORLD);
    qsort(all, (size_t)p * SAMPLES, sizeof *all, cmp_u64); /* small */

    /* 3. Bucket i: keys in (splitter[i-1], splitter[i]], to rank i. */
    int *send_n = xmalloc((size_t)p * sizeof *send_n);
    int *send_at = xmalloc((size_t)p * sizeof *send_at);
    int *recv_n = xmalloc((size_t)p * sizeof *recv_n);
    int *recv_at = xmalloc((size_t)p * sizeof *recv_at);
    size_t from = 0;
    for (int i = 0; i < p; i++) {
        size_t to = i == p - 1 ? n : upper_bound(keys, n, all[(size_t)(i + 1) * SAMPLES]);
        if (to < from)
            to = from;
        send_at[i] = (int)from;
        send_n[i] = (int)(to - from);
        from = to;
    }
    MPI_Alltoall(send_n, 1, MPI_INT, recv_n, 1, MPI_INT, MPI_COMM_WORLD);
    size_t m = 0;
    for (int i = 0; i < p; i++) {
        if (m + (size_t)recv_n[i] > 0x7fffffff) {
            fprintf(stderr, "sample_sort: rank %d would receive too many keys\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        recv_at[i] = (int)m;
        m += (size_t)recv_n[i];
    }
    uint64_t *mine = xmalloc(m * sizeof *mine);
    MPI_Alltoallv(keys, send_n, send_at, MPI_UINT64_T, mine, recv_n, recv_at,
                  MPI_UINT64_T, MPI_COMM_WORLD);

    /* 4. p sorted runs arrived: sort them into one. */
    pool_sort(pool, mine, m);
    double seconds = MPI_Wtime() - t0;

    /* Check: sorted here, in order across ranks, nothing lost or added. */
    int ok = 1;
    uint64_t after[3] = {m, 0, 0};
    for (size_t i = 0; i < m; i++) {
        ok &= i == 0 || mine[i - 1] <= mine[i];
        after[1] += mine[i];
        after[2] ^= mine[i];
    }
    /* (has keys, first, last) of every rank, to check the boundaries. */
    uint64_t ends[3] = {m > 0, m ? mine[0] : 0, m ? mine[m - 1] : 0};
    uint64_t *every = xmalloc((size_t)p * 3 * sizeof *every);
    MPI_Allgather(ends, 3, MPI_UINT64_T, every, 3, MPI_UINT64_T, MPI_COMM_WORLD);
    int have_last = 0;
    uint64_t last = 0;
    for (int i = 0; i < p; i++) {
        if (!every[3 * i])
            continue;
        ok &= !have_last || last <= every[3 * i + 1];
        have_last = 1;
        last = every[3 * i + 2];
    }
    uint64_t tb[3], ta[3]; /* over all ranks: counts and sums added, xors xor-ed */
    MPI_Allreduce(before, tb, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(after, ta, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(before + 2, tb + 2, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
    MPI_Allreduce(after + 2, ta + 2, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
    ok &= memcmp(tb, ta, sizeof tb) == 0;
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

    printf("sample_sort: rank %d of %d: %u threads, %zu keys in, %zu keys out, "
           "%.3f s\n", rank, p, clove_pool_threads(pool), n, m, seconds);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("sample_sort: %" PRIu64 " keys on %d ranks, sorted across ranks (%s)\n",
               tb[0], p, all_ok ? "ok" : "WRONG");

    clove_pool_destroy(pool);
    free(keys);
    free(all);
    free(send_n);
    free(send_at);
    free(recv_n);
    free(recv_at);
    free(mine);
    free(every);
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
