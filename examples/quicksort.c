/* SPDX-License-Identifier: MIT */
/*
 * quicksort.c - parallel quicksort of random 64-bit keys.
 *
 * Partition, fork the upper part, sort the lower part, join. Every
 * recursive call forks, down to single elements; the heartbeat decides
 * which forks actually run elsewhere. The result is compared element by
 * element with qsort() on a copy: sorted and the same multiset.
 * usage: quicksort [n [threads]]   (threads 0 = one per CPU)
 */
#include <clove.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sort(clove_task *t, uint64_t *a, size_t n);
CLOVE_VOID_TASK(sort, uint64_t *, size_t); /* sort can be forked */

/* Hoare partition around the value of the middle element. Returns m with
 * 0 < m < n such that every key in a[0, m) <= every key in a[m, n). */
static size_t partition(uint64_t *a, size_t n)
{
    uint64_t pivot = a[(n - 1) / 2];
    size_t i = 0, j = n - 1;
    for (;;) {
        while (a[i] < pivot)
            i++;
        while (a[j] > pivot)
            j--;
        if (i >= j)
            return j + 1;
        uint64_t tmp = a[i];
        a[i++] = a[j];
        a[j--] = tmp;
    }
}

static void sort(clove_task *t, uint64_t *a, size_t n)
{
    if (n < 2)
        return;
    size_t m = partition(a, n);
    CLOVE_FORK(t, sort, upper, a + m, n - m); /* offer the upper part */
    sort(t, a, m);                            /* sort the lower part here */
    CLOVE_JOIN(t, upper); /* sorted elsewhere, or here now if nobody took it */
}

static int cmp_u64(const void *x, const void *y) /* for qsort */
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* splitmix64: a small, well-mixed pseudo-random sequence. */
static uint64_t next_key(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    unsigned threads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    uint64_t *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
    if (a == NULL || b == NULL)
        return fprintf(stderr, "quicksort: out of memory\n"), 2;
    uint64_t seed = 42;
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] = next_key(&seed);

    clove_pool *pool;
    clove_config cfg = {.threads = threads};
    int rc = clove_pool_create(&pool, &cfg);
    if (rc != 0)
        return fprintf(stderr, "clove_pool_create: error %d\n", rc), 2;
    CLOVE_POOL_RUN(pool, sort, a, n);

    qsort(b, n, sizeof *b, cmp_u64);
    int ok = n == 0 || memcmp(a, b, n * sizeof *a) == 0;
    printf("quicksort: %zu keys on %u threads (%s)\n", n, clove_pool_threads(pool),
           ok ? "ok" : "WRONG");
    clove_pool_destroy(pool);
    free(a), free(b);
    return ok ? 0 : 1;
}
