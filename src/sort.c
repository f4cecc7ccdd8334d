/* SPDX-License-Identifier: MIT */
/*
 * sort.c - clove_sort: a stable parallel mergesort with qsort's contract.
 *
 * msort sorts a span and leaves the result either where it is or in the
 * scratch buffer's matching span ("to_dst"), so each level moves every
 * element once: the two halves are sorted into the opposite array and
 * merged back into the wanted one. The upper half is forked at every level
 * above SEQ_SORT elements (a fork that nobody takes costs a few
 * instructions); below, the recursion is plain calls, down to insertion
 * sorts of at most LEAF elements.
 *
 * A merge is the long sequential part of a mergesort (the last one touches
 * every element), so merges are split too, the heartbeat way: the merge
 * loop reads the heartbeat flag every MERGE_CHUNK outputs, and when one
 * has arrived it splits what remains of the merge in two independent
 * merges - the middle element of the longer run, and its rank in the
 * other run by binary search - and forks the upper one. Ties go to the
 * left run in both the merge loop and the split (lower bound when splitting
 * the left run, upper bound when splitting the right one), which keeps the
 * sort stable.
 *
 * Nothing here depends on the machine: SEQ_SORT, LEAF and MERGE_CHUNK only
 * bound how long the code goes without reading the heartbeat flag (a few
 * microseconds at worst with a cheap compar).
 */
#include "internal.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define LEAF 4
#define SEQ_SORT 256
#define MERGE_CHUNK 256
#define MERGE_MIN_SPLIT 64
#define MERGE_CHECK_MIN 64

typedef int sort_cmp(const void *, const void *);

struct sort_ctx {
    size_t size;
    sort_cmp *cmp;
};

/* One element; the constant sizes become plain moves. */
static inline void copy1(char *d, const char *s, size_t size)
{
    if (size == 8)
        memcpy(d, s, 8);
    else if (size == 4)
        memcpy(d, s, 4);
    else
        memcpy(d, s, size);
}

/* Stable insertion sort of src[0..n) into dst[0..n) (disjoint). */
static void insert_into(const struct sort_ctx *c, const char *src, char *dst, size_t n)
{
    size_t size = c->size;
    for (size_t i = 0; i < n; i++) {
        const char *x = src + i * size;
        size_t j = i;
        while (j > 0 && c->cmp(dst + (j - 1) * size, x) > 0) {
            copy1(dst + j * size, dst + (j - 1) * size, size);
            j--;
        }
        copy1(dst + j * size, x, size);
    }
}

/* The merge loop: stably merge *a[0..*na) and *b[0..*nb) into *d for at
 * most max outputs or until one side is used up, advancing the pointers
 * and counting the lengths down. */
static inline void merge_some(const struct sort_ctx *c, const char **a, size_t *na,
                              const char **b, size_t *nb, char **d, size_t max)
{
    size_t size = c->size;
    for (size_t k = 0; k < max && *na > 0 && *nb > 0; k++) {
        if (c->cmp(*b, *a) < 0) {
            copy1(*d, *b, size);
            *b += size;
            (*nb)--;
        } else {
            copy1(*d, *a, size);
            *a += size;
            (*na)--;
        }
        *d += size;
    }
}

/* Sequential stable merge of a[0..na) and b[0..nb) into d. */
static void merge_seq(const struct sort_ctx *c, const char *a, size_t na, const char *b,
                      size_t nb, char *d)
{
    merge_some(c, &a, &na, &b, &nb, &d, SIZE_MAX);
    memcpy(d, a, na * c->size);
    memcpy(d + na * c->size, b, nb * c->size);
}

/* First index j in b[0..n) with b[j] >= x (lower bound). */
static size_t lower_bound(const struct sort_ctx *c, const char *b, size_t n, const char *x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->cmp(b + mid * c->size, x) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* First index i in a[0..n) with a[i] > y (upper bound). */
static size_t upper_bound(const struct sort_ctx *c, const char *a, size_t n, const char *y)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->cmp(a + mid * c->size, y) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct merge_job {
    const struct sort_ctx *c;
    const char *a, *b;
    size_t na, nb;
    char *d;
};

static void merge_par(clove_task *t, const struct sort_ctx *c, const char *a, size_t na,
                      const char *b, size_t nb, char *d);

static void merge_job_fn(clove_task *t, void *arg)
{
    struct merge_job *j = arg;
    merge_par(t, j->c, j->a, j->na, j->b, j->nb, j->d);
}

/* Stable merge that splits what remains at a heartbeat. */
static void merge_par(clove_task *t, const struct sort_ctx *c, const char *a, size_t na,
                      const char *b, size_t nb, char *d)
{
    size_t size = c->size;
    for (;;) {
        if (na == 0 || nb == 0)
            break;
        if (clove__beat_pending(t) && na + nb >= MERGE_MIN_SPLIT) {
            size_t i, j;
            if (na >= nb) {
                i = na / 2;
                j = lower_bound(c, b, nb, a + i * size);
            } else {
                j = nb / 2;
                i = upper_bound(c, a, na, b + j * size);
            }
            struct merge_job upper = {c, a + i * size, b + j * size, na - i, nb - j,
                                      d + (i + j) * size};
            clove_future f;
            clove_fork(t, &f, merge_job_fn, &upper);
            merge_par(t, c, a, i, b, j, d);
            if (!clove_join(t, &f))
                merge_par(t, c, upper.a, upper.na, upper.b, upper.nb, upper.d);
            return;
        }
        /* Up to MERGE_CHUNK outputs, then look at the heartbeat again. */
        merge_some(c, &a, &na, &b, &nb, &d, MERGE_CHUNK);
    }
    merge_seq(c, a, na, b, nb, d); /* the rest of the side left over */
}

/* Merge the sorted halves s[0..n1) and s[n1..n) into d, cheaply when they
 * are already in order (sorted or reversed input). */
static void merge_halves(clove_task *t, const struct sort_ctx *c, const char *s, size_t n1,
                         size_t n, char *d, int par)
{
    size_t size = c->size;
    const char *a = s, *b = s + n1 * size;
    size_t nb = n - n1;
    /* The in-order checks cost up to two compar calls per merge: only
     * where that is small against the merge itself. */
    if (n < MERGE_CHECK_MIN) {
        merge_seq(c, a, n1, b, nb, d);
    } else if (c->cmp(a + (n1 - 1) * size, b) <= 0) {
        memcpy(d, s, n * size);
    } else if (c->cmp(b + (nb - 1) * size, a) < 0) {
        memcpy(d, b, nb * size);
        memcpy(d + nb * size, a, n1 * size);
    } else if (par) {
        merge_par(t, c, a, n1, b, nb, d);
    } else {
        merge_seq(c, a, n1, b, nb, d);
    }
}

/* Sort src[0..n); the result ends in dst[0..n) if to_dst, else in src.
 * The other array's span is scratch. No forks. */
static void msort_seq(const struct sort_ctx *c, char *src, char *dst, size_t n, int to_dst)
{
    if (n <= LEAF) {
        insert_into(c, src, dst, n);
        if (!to_dst)
            memcpy(src, dst, n * c->size);
        return;
    }
    size_t n1 = n / 2, off = n1 * c->size;
    msort_seq(c, src, dst, n1, !to_dst);
    msort_seq(c, src + off, dst + off, n - n1, !to_dst);
    if (to_dst)
        merge_halves(NULL, c, src, n1, n, dst, 0);
    else
        merge_halves(NULL, c, dst, n1, n, src, 0);
}

struct sort_job {
    const struct sort_ctx *c;
    char *src, *dst;
    size_t n;
    int to_dst;
};

static void msort(clove_task *t, const struct sort_ctx *c, char *src, char *dst, size_t n,
                  int to_dst);

static void sort_job_fn(clove_task *t, void *arg)
{
    struct sort_job *j = arg;
    msort(t, j->c, j->src, j->dst, j->n, j->to_dst);
}

static void msort(clove_task *t, const struct sort_ctx *c, char *src, char *dst, size_t n,
                  int to_dst)
{
    if (n <= SEQ_SORT) {
        msort_seq(c, src, dst, n, to_dst);
        clove_tick(t);
        return;
    }
    size_t n1 = n / 2, off = n1 * c->size;
    struct sort_job upper = {c, src + off, dst + off, n - n1, !to_dst};
    clove_future f;
    clove_fork(t, &f, sort_job_fn, &upper);
    msort(t, c, src, dst, n1, !to_dst);
    if (!clove_join(t, &f))
        msort(t, c, upper.src, upper.dst, upper.n, upper.to_dst);
    if (to_dst)
        merge_halves(t, c, src, n1, n, dst, 1);
    else
        merge_halves(t, c, dst, n1, n, src, 1);
}

int clove_sort_stable(clove_task *t, void *base, size_t nmemb, size_t size, sort_cmp *compar)
{
    if (t == NULL || compar == NULL || (base == NULL && nmemb > 0) ||
        (size == 0 && nmemb > 1) || (size != 0 && nmemb > SIZE_MAX / size))
        return EINVAL;
    if (nmemb <= 1)
        return 0;
    char *scratch = clove__malloc(nmemb * size);
    if (scratch == NULL)
        return ENOMEM;
    struct sort_ctx c = {size, compar};
    msort(t, &c, base, scratch, nmemb, 0);
    free(scratch);
    return 0;
}

int clove_sort(clove_task *t, void *base, size_t nmemb, size_t size, sort_cmp *compar)
{
    return clove_sort_stable(t, base, nmemb, size, compar);
}
