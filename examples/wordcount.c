/* SPDX-License-Identifier: MIT */
/*
 * wordcount.c - count the words of a large text with clove_reduce.
 *
 * A word is a maximal run of bytes that are not white space (as `wc -w`
 * counts in the C locale). clove_reduce hands each body call a chunk
 * [lo, hi) of the text, and chunks are cut wherever a heartbeat happens to
 * split the range, so a word is often cut in two. The accumulator
 * therefore describes a piece of text, not just a count:
 *
 *     { bytes, words, starts_in_word, ends_in_word }
 *
 * and combining a left piece with the right piece that follows it
 * subtracts one word when the left ends inside a word and the right starts
 * inside one (the same word, counted on both sides). That combine is
 * associative but not commutative, which is what clove_reduce requires: it
 * always combines pieces left to right.
 *
 * The count is checked against a plain sequential loop.
 *
 * usage: wordcount [bytes | file [threads [heartbeat_us]]]
 *        (an argument made only of digits is a size: a text of that many
 *         bytes is generated, 50 MB by default; anything else is a file to
 *         read; threads 0 = one per CPU; a small heartbeat, such as 1,
 *         splits the text into many more pieces, as the tests do)
 */
#include <clove.h>

#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* White space in the C locale, as isspace() sees it there. */
static int is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* What is known about a piece of text. bytes == 0: the empty piece, the
 * identity of combine (the other fields are then meaningless). */
struct piece {
    uint64_t bytes;
    uint64_t words;      /* words that start or continue in it */
    bool starts_in_word; /* its first byte is not white space */
    bool ends_in_word;   /* its last byte is not white space */
};

struct text {
    const unsigned char *s;
    _Atomic uint64_t combines; /* how many times pieces were joined */
};

static void piece_init(void *acc, void *ctx)
{
    (void)ctx;
    memset(acc, 0, sizeof(struct piece));
}

/* Fold the bytes [lo, hi) into the piece that ends just before lo. */
static void piece_body(clove_task *t, size_t lo, size_t hi, void *acc, void *ctx)
{
    (void)t;
    struct piece *p = acc;
    const unsigned char *s = ((struct text *)ctx)->s;
    bool in_word = p->bytes > 0 && p->ends_in_word;
    if (p->bytes == 0 && lo < hi)
        p->starts_in_word = !is_space(s[lo]);
    uint64_t words = 0;
    for (size_t i = lo; i < hi; i++) {
        bool w = !is_space(s[i]);
        words += w && !in_word; /* a word starts here */
        in_word = w;
    }
    p->words += words;
    p->bytes += hi - lo;
    p->ends_in_word = in_word;
}

/* *left = left followed by right. */
static void piece_combine(void *left, void *right, void *ctx)
{
    struct piece *l = left;
    const struct piece *r = right;
    atomic_fetch_add_explicit(&((struct text *)ctx)->combines, 1, memory_order_relaxed);
    if (r->bytes == 0)
        return;
    if (l->bytes == 0) {
        *l = *r;
        return;
    }
    l->words += r->words - (l->ends_in_word && r->starts_in_word);
    l->bytes += r->bytes;
    l->ends_in_word = r->ends_in_word;
}

/* Heartbeats cut the text only a few times per run, so also check the
 * combine where it matters most, without threads: cut a short text with
 * words, runs of spaces and both ends in every possible way into three
 * pieces (empty ones too), and combine them in both groupings. */
static int combine_is_right(void)
{
    static const unsigned char s[] = "ab  c\td e\n\n fgh i ";
    const size_t n = sizeof s - 1;
    const uint64_t want = 6;
    struct text text = {.s = s};
    atomic_init(&text.combines, 0);
    for (size_t i = 0; i <= n; i++) {
        for (size_t j = i; j <= n; j++) {
            struct piece a = {0}, b = {0}, c = {0}, l, r;
            piece_body(NULL, 0, i, &a, &text);
            piece_body(NULL, i, j, &b, &text);
            piece_body(NULL, j, n, &c, &text);
            l = a, piece_combine(&l, &b, &text), piece_combine(&l, &c, &text);
            r = b, piece_combine(&r, &c, &text), piece_combine(&a, &r, &text);
            if (l.words != want || a.words != want || l.bytes != n || a.bytes != n)
                return 0;
        }
    }
    return 1;
}

struct job {
    struct text *text;
    size_t n;
    struct piece result;
};

static void count(clove_task *t, void *p)
{
    struct job *j = p;
    piece_init(&j->result, NULL);
    clove_reduce(t, 0, j->n, &j->result, sizeof j->result, piece_init,
                 piece_body, piece_combine, j->text);
}

/* A text of n bytes: words of 1-12 letters separated by runs of spaces,
 * tabs and newlines, from a fixed pseudo-random sequence (xorshift). */
static unsigned char *generate(size_t n)
{
    unsigned char *s = malloc(n ? n : 1);
    uint64_t x = 0x2545F4914F6CDD1Du;
    for (size_t i = 0; s != NULL && i < n;) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t len = 1 + x % 12, gap = 1 + (x >> 8) % 3;
        for (size_t k = 0; k < len && i < n; k++)
            s[i++] = (unsigned char)('a' + (x >> (16 + k)) % 26);
        for (size_t k = 0; k < gap && i < n; k++)
            s[i++] = " \t\n "[(x >> (40 + 2 * k)) % 4];
    }
    return s;
}

static unsigned char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, len = 0, got;
    unsigned char *s = malloc(cap);
    while (s != NULL && (got = fread(s + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            unsigned char *bigger = realloc(s, cap *= 2);
            if (bigger == NULL)
                free(s);
            s = bigger;
        }
    }
    fclose(f);
    *n = len;
    return s;
}

int main(int argc, char **argv)
{
    const char *arg = argc > 1 ? argv[1] : "50000000";
    unsigned threads = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    unsigned heartbeat_us = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 0;
    size_t n;
    unsigned char *s;
    if (strspn(arg, "0123456789") == strlen(arg)) {
        n = strtoull(arg, NULL, 10);
        s = generate(n);
    } else {
        s = read_file(arg, &n);
    }
    if (s == NULL)
        return perror(arg), 2;
    if (!combine_is_right())
        return printf("wordcount: combine is WRONG on the three-piece check\n"), 1;

    /* The reference: one pass, counting the starts of words. */
    uint64_t want = 0;
    for (size_t i = 0; i < n; i++)
        want += !is_space(s[i]) && (i == 0 || is_space(s[i - 1]));

    struct text text = {.s = s};
    atomic_init(&text.combines, 0);
    struct job job = {&text, n, {0}};
    clove_pool *pool;
    clove_config cfg = {.threads = threads, .heartbeat_us = heartbeat_us};
    int rc = clove_pool_create(&pool, &cfg);
    if (rc != 0)
        return fprintf(stderr, "clove_pool_create: error %d\n", rc), 2;
    clove_pool_run(pool, count, &job);

    int ok = job.result.words == want && job.result.bytes == n;
    printf("wordcount: %zu bytes, %" PRIu64 " words on %u threads, %" PRIu64
           " pieces combined; sequential %" PRIu64 " (%s)\n", n,
           job.result.words, clove_pool_threads(pool),
           atomic_load(&text.combines), want, ok ? "ok" : "WRONG");
    clove_pool_destroy(pool);
    free(s);
    return ok ? 0 : 1;
}
