/* SPDX-License-Identifier: MIT */
/*
 * test.h - the clove test suite's assertions and shared helpers.
 *
 * An assertion that fails prints file:line, the expression and the values,
 * and ends the process with status 1 (from any thread): every test runs in
 * a process of its own under CTest, so nothing else needs unwinding.
 */
#ifndef CLOVE_TEST_H
#define CLOVE_TEST_H

#include <clove.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#if defined(__MINGW32__)
/* mingw-w64's own C99 printf (__USE_MINGW_ANSI_STDIO, set by CMake), with
 * %zu and %jd, not msvcrt's. */
#define TEST_NORETURN __attribute__((noreturn))
#define TEST_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
#define TEST_MAYBE_UNUSED __attribute__((unused))
#elif defined(__GNUC__) || defined(__clang__)
#define TEST_NORETURN __attribute__((noreturn))
#define TEST_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TEST_MAYBE_UNUSED __attribute__((unused))
#else
#define TEST_NORETURN
#define TEST_PRINTF(f, a)
#define TEST_MAYBE_UNUSED
#endif

/* ------------------------------------------------------------------------ */
/* Assertions                                                               */
/* ------------------------------------------------------------------------ */

TEST_NORETURN TEST_PRINTF(3, 4) void test_fail(const char *file, int line, const char *fmt, ...);
/* The test cannot run in this build or on this system: print why and exit
 * with TEST_SKIPPED, which CTest reports as skipped (SKIP_RETURN_CODE). */
#define TEST_SKIPPED 77
TEST_NORETURN TEST_PRINTF(1, 2) void test_skip(const char *fmt, ...);
/* The system layer the library was built with (CMake's CLOVE_PORT):
 * "linux", "unix" or "win". */
#ifndef CLOVE_TEST_PORT
#define CLOVE_TEST_PORT "linux"
#endif

#define ASSERT(c)                                                             \
    do {                                                                      \
        if (!(c))                                                             \
            test_fail(__FILE__, __LINE__, "ASSERT(%s)", #c);                  \
    } while (0)

#define ASSERT_MSG(c, ...)                                                    \
    do {                                                                      \
        if (!(c))                                                             \
            test_fail(__FILE__, __LINE__, __VA_ARGS__);                       \
    } while (0)

#define TEST__CMP_U(a, op, b)                                                 \
    do {                                                                      \
        uintmax_t test_a_ = (uintmax_t)(a), test_b_ = (uintmax_t)(b);         \
        if (!(test_a_ op test_b_))                                            \
            test_fail(__FILE__, __LINE__, "ASSERT(%s " #op " %s): %ju vs %ju" \
                      " (0x%jx vs 0x%jx)", #a, #b, test_a_, test_b_,          \
                      test_a_, test_b_);                                      \
    } while (0)

#define TEST__CMP_I(a, op, b)                                                 \
    do {                                                                      \
        intmax_t test_a_ = (intmax_t)(a), test_b_ = (intmax_t)(b);            \
        if (!(test_a_ op test_b_))                                            \
            test_fail(__FILE__, __LINE__, "ASSERT(%s " #op " %s): %jd vs %jd",\
                      #a, #b, test_a_, test_b_);                              \
    } while (0)

#define TEST__CMP_P(a, op, b)                                                 \
    do {                                                                      \
        const void *test_a_ = (const void *)(a), *test_b_ = (const void *)(b);\
        if (!(test_a_ op test_b_))                                            \
            test_fail(__FILE__, __LINE__, "ASSERT(%s " #op " %s): %p vs %p",  \
                      #a, #b, test_a_, test_b_);                              \
    } while (0)

/* Unsigned (uintmax_t), signed (intmax_t) and pointer comparisons. */
#define ASSERT_EQ_U(a, b) TEST__CMP_U(a, ==, b)
#define ASSERT_NE_U(a, b) TEST__CMP_U(a, !=, b)
#define ASSERT_LE_U(a, b) TEST__CMP_U(a, <=, b)
#define ASSERT_LT_U(a, b) TEST__CMP_U(a, <, b)
#define ASSERT_GE_U(a, b) TEST__CMP_U(a, >=, b)
#define ASSERT_EQ_I(a, b) TEST__CMP_I(a, ==, b)
#define ASSERT_NE_I(a, b) TEST__CMP_I(a, !=, b)
#define ASSERT_EQ_P(a, b) TEST__CMP_P(a, ==, b)
#define ASSERT_NE_P(a, b) TEST__CMP_P(a, !=, b)
#define ASSERT_TRUE(c) ASSERT(c)
#define ASSERT_FALSE(c) ASSERT(!(c))

/* A call returning 0 or an errno value. */
#define ASSERT_OK(call)                                                       \
    do {                                                                      \
        int test_rc_ = (call);                                                \
        if (test_rc_ != 0)                                                    \
            test_fail(__FILE__, __LINE__, "%s returned %d, expected 0",       \
                      #call, test_rc_);                                       \
    } while (0)

#define ASSERT_CONTAINS(hay, needle)                                          \
    do {                                                                      \
        const char *test_h_ = (hay), *test_n_ = (needle);                     \
        if (test_h_ == NULL || strstr(test_h_, test_n_) == NULL)              \
            test_fail(__FILE__, __LINE__, "expected \"%s\" in:\n---\n%s---",  \
                      test_n_, test_h_ ? test_h_ : "(null)");                 \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Test list                                                                */
/* ------------------------------------------------------------------------ */

#define X(name) void test_##name(void);
#include "list.h"
#undef X

/* Child processes of misuse_aborts (clove_tests --misuse NAME). */
int misuse_child_main(const char *name);
/* test_robust.c: a misuse child's fn (arg: a pool of two threads). */
void robust_exit_in_helped_job(clove_task *t, void *arg);

/* ------------------------------------------------------------------------ */
/* Helpers (util.c)                                                         */
/* ------------------------------------------------------------------------ */

/* Size/iteration multiplier: CLOVE_TEST_SCALE (default 1) times a build
 * factor (1/4 under ThreadSanitizer, 1/2 under AddressSanitizer). */
double test_scale(void);
/* n * test_scale(), at least lo. */
size_t scaled(size_t n, size_t lo);
/* Seconds scaled likewise, at least lo. */
double scaled_seconds(double s, double lo);
bool test_verbose(void);
TEST_PRINTF(1, 2) void test_log(const char *fmt, ...);

#include "mix64.h"

typedef struct test_rng {
    uint64_t s;
} test_rng;
static inline uint64_t rng_next(test_rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return mix64(r->s);
}
/* Uniform enough in [0, n) for tests; n > 0. */
static inline uint64_t rng_below(test_rng *r, uint64_t n)
{
    return rng_next(r) % n;
}

double now_s(void);
void sleep_us(unsigned long us);

/* Wait until p's counters add up (shared + stolen == ran + reclaimed), at
 * most 10 s: when clove_pool_run returns, a worker may still be winding
 * down a batch whose records the owner took back (src/share.c, "Claims"),
 * and count the halves it ran a little later. */
void stats_settle(clove_pool *p);

/* Pool helpers: create with the given config or fail the test. */
clove_pool *make_pool(unsigned threads, unsigned heartbeat_us);

/* Running this executable again in a child process: prepare before the
 * fork (it reads /proc/self/exe and CLOVE_TEST_EMULATOR, the command that
 * runs an emulated binary, when set), then self_exec(x, arg1, arg2 or
 * NULL) in the child, which returns only if the exec failed. */
#define EMULATOR_WORDS 16
struct self_exec {
    char path[4096];
    char words[1024];
    char *argv[EMULATOR_WORDS + 4];
    int argc; /* argv[0 .. argc) come before the arguments */
};
void self_exec_prepare(struct self_exec *x, const char *argv0);
void self_exec(struct self_exec *x, const char *arg1, const char *arg2);
/* Run this executable again as "NAME" (one test, as the all-tests runner
 * does) and wait: 0 when it passed, TEST_SKIPPED, or 1 with why filled. */
int run_test_process(struct self_exec *self, const char *name, char *why, size_t n);
/* A child's status (run_self_child): whether it died of abort() (SIGABRT;
 * exit code 3 on Windows), and in words. */
bool child_aborted(int status);
void child_describe(int status, char *buf, size_t n);
/* Bytes of [addr, addr + len) that take memory: resident pages
 * (mincore) on POSIX, committed pages on Windows. */
size_t test_resident(const void *addr, size_t len);
/* The process's resident memory in bytes (0 if unknown), and its count
 * of memory mappings (regions on Windows; -1 if unknown). */
size_t test_rss_bytes(void);
long test_map_count(void);
/* Memory straight from the system (mmap, VirtualAlloc), given back whole by
 * test_unmap: so that freeing it lowers the RSS at once. */
void *test_map(size_t bytes);
void test_unmap(void *p, size_t bytes);
/* The highest address of the calling thread's stack. */
uintptr_t test_stack_top(void);
/* The calling thread's stack size in bytes. */
size_t test_stack_size(void);
/* The CPUs this process may run on (its affinity mask). */
unsigned test_cpu_count(void);
/* Kill this process in `seconds` (SIGALRM, or a thread on Windows). */
void test_watchdog(unsigned seconds);
/* buf (of *cap bytes, len used; NULL at first) with room for at least
 * 1 KiB more, grown as needed; fails the test when out of memory. */
char *room_for_more(char *buf, size_t *cap, size_t len);
/* Set (value non-NULL) or remove an environment variable, or fail. */
void test_setenv(const char *name, const char *value);

/* /proc/self/task helpers (Linux). */
unsigned thread_count(void);
/* thread_count() when main started: 1, plus any thread of the runtime the
 * tests run in (qemu-user keeps one of its own in every process, also in
 * a fork child). */
extern unsigned test_start_threads;
/* Job stacks of the default depth in /proc/self/maps (-1 where it cannot
 * be read): read-write mappings of exactly that size between two guard
 * pages. Pools of the default depth must give back every job stack they
 * mapped. */
long job_stack_maps(void);
/* release_join.c: the joins and clove_fork as compiled with CLOVE_DEBUG 0. */
bool release_join(clove_task *t, clove_future *f);
bool release_join_value(clove_task *t, clove_future *f, int64_t *result);
void release_fork(clove_task *t, clove_future *f, clove_fn *fn, void *arg);
/* The thread count to come back to: starts (and joins) one plain thread
 * first, so that helper threads a sanitizer runtime starts with the first
 * pthread_create (ThreadSanitizer's background thread) are counted in. */
unsigned thread_baseline(void);
/* Wait up to ~5 s for thread_count() to equal n (threads that were joined
 * can linger in /proc for a moment); returns the last count seen. */
unsigned wait_thread_count(unsigned n);
/* Thread ids: room for MAX_TIDS of them; tid_in says whether tid is in
 * set[0..n). */
#define MAX_TIDS 512
bool tid_in(pid_t tid, const pid_t *set, size_t n);
/* Fills tids (up to max) and returns how many threads there are. */
size_t list_tids(pid_t *tids, size_t max);
/* voluntary + nonvoluntary context switches of one thread; -1 if gone. */
long long thread_ctx_switches(pid_t tid);
/* One-letter state from /proc/self/task/TID/stat, or '?' if gone. */
char thread_state(pid_t tid);

/* Before a test kills a process that did not finish in time (POSIX):
 * print to stderr each of its threads' name, state and system call, then,
 * where gdb is installed, their stacks, so that a hang in CI says where it
 * is. pid may be the caller's own. */
void describe_hung(pid_t pid, const char *what);

/* Run "clove_tests --misuse NAME" as a child process with stderr captured.
 * Returns the wait status; *err gets the captured stderr (malloc'd). */
int run_self_child(const char *name, char **err);

/* Send this process's stderr (fd 2) to a temporary file until
 * stderr_capture_end(), which restores it and returns what was written
 * (malloc'd, NUL-terminated). Not nestable. */
void stderr_capture_begin(void);
char *stderr_capture_end(void);
/* Lines (newline-terminated) in s. */
unsigned count_lines(const char *s);

/* Sum of values over a contiguous index range, for cross-checking. */
struct sums {
    uint64_t sum;  /* sum of values */
    uint64_t hash; /* sum of mix64(value ^ index * K): a second checksum */
};
static inline uint64_t index_value(uint64_t seed, uint64_t i)
{
    return mix64(seed ^ mix64(i));
}
static inline uint64_t index_hash(uint64_t value, uint64_t i)
{
    return mix64(value ^ (i * 0xd6e8feb86659fd93ull)) + i;
}
static inline void sums_add(struct sums *a, struct sums b)
{
    a->sum += b.sum;
    a->hash += b.hash;
}

/* ------------------------------------------------------------------------ */
/* Random trees (tree.c)                                                    */
/* ------------------------------------------------------------------------ */

enum tree_shape {
    SHAPE_RANDOM,     /* left size uniform in [0, n-1] */
    SHAPE_UNBALANCED, /* mostly a heavy left side and a tiny right one */
    SHAPE_CHAIN,      /* a long left spine with single-leaf right children */
    SHAPE_COMPLETE,   /* balanced */
    SHAPE_COUNT
};

struct tnode {
    struct tnode *left, *right;
    uint64_t value; /* distinct across the tree */
    size_t index;   /* position in tree.nodes */
};

struct tree {
    size_t n;
    struct tnode *nodes;
    struct tnode *root;
    _Atomic uint32_t *visits; /* per node, incremented by the parallel sum */
    struct sums expect;       /* the sequential answer */
};

const char *shape_name(enum tree_shape s);
void tree_build(struct tree *tr, size_t n, enum tree_shape shape, uint64_t seed);
void tree_free(struct tree *tr);
/* Parallel sum: forks the right child at every node that has two. */
struct sums tree_sum(clove_task *t, const struct tree *tr, const struct tnode *n);
/* Checks every node was visited exactly once and the sums match; resets
 * the visit counters. */
void tree_check(const struct tree *tr, struct sums got);
/* How many forked subtree jobs ran on a task other than the forking one
 * (information only: never a pass/fail criterion). */
uint64_t tree_taken_count(void);

/* A tree sum inside clove_pool_run, checked. */
void run_tree_checked(clove_pool *pool, const struct tree *tr);
/* The same with clove_fork_value/clove_join_value: a walk that returns the
 * hash sum (index_hash of every node), checked with the visit counts. */
uint64_t tree_hash_value(clove_task *t, const struct tree *tr, const struct tnode *n);
void run_tree_value_checked(clove_pool *pool, const struct tree *tr);

#endif
