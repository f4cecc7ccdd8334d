/* SPDX-License-Identifier: MIT */
/*
 * mergesort.c - a parallel merge sort of strings written with a typed
 * task, the version docs/guide.md counts against OpenMP tasks.
 *
 * sort_strings() below is the guide's code. main() sorts n distinct
 * random strings on the default pool (clove_run), with CLOVE_THREADS
 * threads if set, and compares the result with qsort() on a copy.
 *
 * usage: mergesort [n]
 */
#include <clove.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void merge(char **a, char **tmp, size_t h, size_t n)
{
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = strcmp(a[j], a[i]) < 0 ? a[j++] : a[i++];
    while (i < h)
        tmp[k++] = a[i++];
    memcpy(a, tmp, k * sizeof *a);
}

static void msort(clove_task *t, char **a, char **tmp, size_t n);
CLOVE_VOID_TASK(msort, char **, char **, size_t);
static void msort(clove_task *t, char **a, char **tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    CLOVE_FORK(t, msort, left, a, tmp, h);
    msort(t, a + h, tmp + h, n - h);
    CLOVE_JOIN(t, left);
    merge(a, tmp, h, n);
}

int sort_strings(char **a, size_t n);
int sort_strings(char **a, size_t n)
{
    char **tmp = malloc(n * sizeof *tmp);
    if (tmp == NULL)
        return ENOMEM;
    int rc = CLOVE_RUN(msort, a, tmp, n);
    free(tmp);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The check                                                                */
/* ------------------------------------------------------------------------ */

#include <stdint.h>
#include <stdio.h>

static int cmp_str(const void *x, const void *y) /* for qsort */
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    char **a = malloc((n ? n : 1) * sizeof *a), **b = malloc((n ? n : 1) * sizeof *b);
    char *text = malloc((n ? n : 1) * 20);
    if (a == NULL || b == NULL || text == NULL)
        return fprintf(stderr, "mergesort: out of memory\n"), 2;
    /* Distinct strings: the index, scrambled by an invertible mix. */
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (uint64_t)i * 0x9E3779B97F4A7C15u;
        z ^= z >> 29;
        a[i] = b[i] = text + i * 20;
        snprintf(a[i], 20, "%llx", (unsigned long long)z);
    }
    int rc = sort_strings(a, n);
    if (rc != 0)
        return fprintf(stderr, "sort_strings: %s\n", strerror(rc)), 2;
    qsort(b, n, sizeof *b, cmp_str);
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= a[i] == b[i];
    printf("mergesort: %zu strings (%s)\n", n, ok ? "ok" : "WRONG");
    free(text), free(a), free(b);
    return ok ? 0 : 1;
}
