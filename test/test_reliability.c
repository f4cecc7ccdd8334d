/* SPDX-License-Identifier: MIT */
/*
 * test_reliability.c - clove under hostile conditions:
 *
 *   deep_recursion  a fork at every level of a 100,000-level recursion, on
 *                   big worker stacks (config.stack_size) and a caller
 *                   thread with the same big stack;
 *   process_fork    fork() of a process that has a pool, idle or in the
 *                   middle of a clove_pool_run on another thread: the child
 *                   leaves the inherited pool alone and uses a new one;
 *   signal_storm    a process-directed SIGALRM every ~100 us without
 *                   SA_RESTART, so that workers asleep in futex waits see
 *                   EINTR, while checked workloads run on pools of 2, 8 and
 *                   32 threads; afterwards the pool must go idle normally;
 *   stop_cont       SIGSTOP/SIGCONT of a child process in the middle of
 *                   parallel work; it must make progress after each SIGCONT.
 *
 * Every result is checked (distinct values, exact-once counters). Hangs
 * become failures through watchdogs (a thread that fails the test after
 * 60 s, or a waitpid loop that kills the child); pass/fail never depends on
 * timing.
 */
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#ifndef _WIN32
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define RELI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RELI_ASAN 1
#endif
#endif
#if defined(RELI_ASAN) || defined(CLOVE_TSAN)
#define RELI_SANITIZED 1
#endif

#define WATCHDOG_S 60.0

/* ------------------------------------------------------------------------ */
/* Watchdogs                                                                */
/* ------------------------------------------------------------------------ */

/* A thread that fails the test (ending the process) if the test has not
 * called watchdog_stop within `seconds`. */
struct watchdog {
    pthread_t th;
    _Atomic int done;
    double seconds;
    const char *what;
};

static void *watchdog_main(void *arg)
{
    struct watchdog *w = arg;
    double end = now_s() + w->seconds;
    while (!atomic_load(&w->done)) {
        if (now_s() >= end) {
#ifndef _WIN32
            describe_hung(getpid(), w->what);
#endif
            test_fail(__FILE__, __LINE__, "watchdog: %s did not finish within %.0f s (a hang?)",
                      w->what, w->seconds);
        }
        sleep_us(20000);
    }
    return NULL;
}

static void watchdog_start(struct watchdog *w, double seconds, const char *what)
{
    atomic_init(&w->done, 0);
    w->seconds = seconds;
    w->what = what;
    ASSERT_OK(pthread_create(&w->th, NULL, watchdog_main, w));
}

static void watchdog_stop(struct watchdog *w)
{
    atomic_store(&w->done, 1);
    ASSERT_OK(pthread_join(w->th, NULL));
}

#ifndef _WIN32
/* Wait for child pid to end; after `seconds`, SIGKILL it and fail. */
static int wait_child(pid_t pid, double seconds, const char *what)
{
    double end = now_s() + seconds;
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        ASSERT_MSG(r == 0 || (r < 0 && errno == EINTR), "waitpid(%s) failed: errno %d",
                   what, errno);
        if (now_s() >= end) {
            describe_hung(pid, what);
            (void)kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            test_fail(__FILE__, __LINE__,
                      "watchdog: %s (pid %ld) did not finish within %.0f s; killed it",
                      what, (long)pid, seconds);
        }
        sleep_us(1000);
    }
}

static void assert_child_ok(int status, const char *what)
{
    ASSERT_MSG(!WIFSIGNALED(status), "%s was killed by signal %d", what, WTERMSIG(status));
    ASSERT_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
               "%s exited with status %d (0 means every result was correct)", what,
               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    ASSERT_MSG(fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0, "fcntl failed: errno %d",
               errno);
}
#endif

/* ------------------------------------------------------------------------ */
/* Checked workloads: tree sums (a fork at every two-child node) and        */
/* clove_for with a counter per index                                       */
/* ------------------------------------------------------------------------ */

struct loop_ctx {
    uint64_t seed;
    size_t n;
    _Atomic uint8_t *hits; /* [n] */
    _Atomic uint64_t sum;
    _Atomic uint32_t bad; /* ranges outside [0, n) or empty */
};

static void loop_body(clove_task *t, size_t lo, size_t hi, void *arg)
{
    (void)t;
    struct loop_ctx *c = arg;
    if (!(lo < hi && hi <= c->n)) {
        atomic_fetch_add(&c->bad, 1);
        return;
    }
    uint64_t s = 0;
    for (size_t i = lo; i < hi; i++) {
        atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
        s += index_hash(index_value(c->seed, i), i);
    }
    atomic_fetch_add_explicit(&c->sum, s, memory_order_relaxed);
}

/* Every index ran exactly once and the checksum matches; resets. */
static void loop_check(struct loop_ctx *c)
{
    ASSERT_EQ_U(atomic_load(&c->bad), 0);
    uint64_t e = 0;
    for (size_t i = 0; i < c->n; i++) {
        unsigned h = atomic_load_explicit(&c->hits[i], memory_order_relaxed);
        ASSERT_MSG(h == 1, "loop index %zu of %zu ran %u times", i, c->n, h);
        atomic_store_explicit(&c->hits[i], 0, memory_order_relaxed);
        e += index_hash(index_value(c->seed, i), i);
    }
    ASSERT_EQ_U(atomic_load(&c->sum), e);
    atomic_store(&c->sum, 0);
}

/* A tree of each shape and a loop, used in turn by workset_run. */
struct workset {
    struct tree trees[SHAPE_COUNT];
    struct loop_ctx loop;
    uint64_t seed;
    uint64_t runs;
};

TEST_MAYBE_UNUSED static void workset_init(struct workset *w, size_t tree_n, size_t loop_n, uint64_t seed)
{
    for (int s = 0; s < SHAPE_COUNT; s++)
        tree_build(&w->trees[s], tree_n + (size_t)s * 3, (enum tree_shape)s, seed + (uint64_t)s);
    w->loop.n = loop_n;
    w->loop.hits = calloc(loop_n, sizeof *w->loop.hits);
    ASSERT(w->loop.hits != NULL);
    atomic_init(&w->loop.sum, 0);
    atomic_init(&w->loop.bad, 0);
    w->seed = seed;
    w->runs = 0;
}

TEST_MAYBE_UNUSED static void workset_free(struct workset *w)
{
    for (int s = 0; s < SHAPE_COUNT; s++)
        tree_free(&w->trees[s]);
    free((void *)w->loop.hits);
}

/* Inside a task: one tree sum and one loop, both checked. */
static void workset_step(clove_task *t, struct workset *w)
{
    const struct tree *tr = &w->trees[w->runs % SHAPE_COUNT];
    struct sums s = tree_sum(t, tr, tr->root);
    tree_check(tr, s);
    w->loop.seed = mix64(w->seed ^ (w->runs << 8));
    clove_for(t, 0, w->loop.n, loop_body, &w->loop);
    loop_check(&w->loop);
    w->runs++;
}

static void workset_fn(clove_task *t, void *arg)
{
    workset_step(t, arg);
}

TEST_MAYBE_UNUSED static void workset_run(clove_pool *p, struct workset *w)
{
    ASSERT_OK(clove_pool_run(p, workset_fn, w));
}

/* ------------------------------------------------------------------------ */
/* deep_recursion                                                           */
/* ------------------------------------------------------------------------ */

/*
 * Two chains of DEEP_DEPTH levels, each forking at every level:
 *   chain: level L forks a small job (its own), recurses into L+1, joins;
 *          the recursion stays on the caller's stack, and the oldest
 *          queued forks are the ones shared (to workers, 1 us heartbeat);
 *   cont:  level L forks the *rest* of the chain (L+1 ...), does its own
 *          small job, joins; a worker that takes the rest runs it on its
 *          own stack, and a thread waiting in a join runs other shared
 *          continuations on top of its stack (helping), so worker stacks
 *          get deep too.
 * Frame sizes are measured first on a one-thread pool (addresses of a local
 * at levels 0 and DEEP_PROBE), and the stack budget is checked against
 * them with a 4x margin for the frames of helping.
 *
 * Measured with gcc 12 -O3 (Release, x86-64; CLOVE_TEST_VERBOSE=1 prints
 * it): chain 96 bytes/level, cont 128 bytes/level, so 100,000 levels need
 * 9.2 and 12.2 MiB: more than the default 8 MiB main stack and glibc's
 * default 8 MiB thread stacks. 256 MiB leaves a wide margin for helping and
 * costs only address space (pages are touched as the recursion gets there).
 *
 * Under the sanitizers frames are bigger, so the stacks go up to 512 MiB.
 * AddressSanitizer (redzones around every address-taken local) measured
 * 256 and 320 bytes/level with gcc 12 -O2: 100,000 levels fit easily, so
 * the depth stays. ThreadSanitizer cannot go that deep whatever the stack:
 * its stack depot holds at most 65,536 frames per call stack and it dies
 * with "CHECK failed: sanitizer_stackdepot.cpp ... (1 << kStackSizeBits)"
 * (seen at 100,000 levels). cont uses up to 2 frames per level and 2 more
 * per level where a join helps (join_slow, run_one_locked), so under TSan
 * the depth goes down to 15,000 (at most ~60,000 frames).
 */
#if defined(CLOVE_TSAN)
#define DEEP_DEPTH 15000u
#define DEEP_STACK ((size_t)512 << 20)
#elif defined(RELI_SANITIZED)
#define DEEP_DEPTH 100000u
#define DEEP_STACK ((size_t)512 << 20)
#else
#define DEEP_DEPTH 100000u
#define DEEP_STACK ((size_t)256 << 20)
#endif
#define DEEP_PROBE 2048u

struct deep {
    size_t depth;
    uint64_t seed;
    _Atomic uint32_t *runs; /* [depth] how often each level's job ran */
    uint64_t *out;          /* [depth] the value each level's job wrote */
    size_t probe_level;     /* 0: no probe */
    uintptr_t probe_top, probe_bottom;
};

struct deep_job {
    struct deep *d;
    size_t level;
    uint64_t result;
};

/* Smallest stack size seen by any thread that ran a level's job. */
static _Atomic size_t deep_min_stack = SIZE_MAX;
static _Atomic uint32_t deep_threads_seen;
static _Thread_local bool deep_stack_seen;

static size_t current_stack_size(void)
{
    return test_stack_size();
}

static void deep_note_stack(void)
{
    if (deep_stack_seen)
        return;
    deep_stack_seen = true;
    size_t sz = current_stack_size();
    size_t cur = atomic_load(&deep_min_stack);
    while (sz < cur && !atomic_compare_exchange_weak(&deep_min_stack, &cur, sz)) {
    }
    atomic_fetch_add(&deep_threads_seen, 1);
}

static void deep_job_fn(clove_task *t, void *arg)
{
    (void)t;
    struct deep_job *j = arg;
    struct deep *d = j->d;
    deep_note_stack();
    uint64_t v = index_value(d->seed, j->level);
    atomic_fetch_add_explicit(&d->runs[j->level], 1, memory_order_relaxed);
    d->out[j->level] = v;
    j->result = index_hash(v, j->level);
}

/* Record the address of a local of levels 0 and probe_level. */
static void deep_probe(struct deep *d, size_t level, uintptr_t local)
{
    if (level == 0)
        d->probe_top = local;
    else if (level == d->probe_level)
        d->probe_bottom = local;
}

/* chain: fork this level's job, recurse, join. */
static uint64_t deep_chain(clove_task *t, struct deep *d, size_t level)
{
    if (level == d->depth)
        return 0;
    struct deep_job j = {d, level, 0};
    clove_future f;
    deep_probe(d, level, (uintptr_t)&f);
    clove_fork(t, &f, deep_job_fn, &j);
    uint64_t rest = deep_chain(t, d, level + 1);
    if (!clove_join(t, &f))
        deep_job_fn(t, &j);
    return rest + j.result;
}

/* cont: fork the rest of the chain, do this level's job, join. */
struct deep_rest {
    struct deep *d;
    size_t level;
    uint64_t result;
};

static uint64_t deep_cont(clove_task *t, struct deep *d, size_t level);

static void deep_rest_fn(clove_task *t, void *arg)
{
    struct deep_rest *r = arg;
    r->result = deep_cont(t, r->d, r->level);
}

static uint64_t deep_cont(clove_task *t, struct deep *d, size_t level)
{
    if (level == d->depth)
        return 0;
    struct deep_rest r = {d, level + 1, 0};
    clove_future f;
    deep_probe(d, level, (uintptr_t)&f);
    clove_fork(t, &f, deep_rest_fn, &r);
    struct deep_job j = {d, level, 0};
    deep_job_fn(t, &j);
    if (!clove_join(t, &f))
        deep_rest_fn(t, &r);
    return j.result + r.result;
}

struct deep_run {
    struct deep *d;
    bool cont;
    uint64_t result;
};

static void deep_run_fn(clove_task *t, void *arg)
{
    struct deep_run *r = arg;
    r->result = r->cont ? deep_cont(t, r->d, 0) : deep_chain(t, r->d, 0);
}

/* One checked run of a chain on pool p; returns bytes per level if probing. */
static size_t deep_round(clove_pool *p, struct deep *d, bool cont)
{
    struct deep_run r = {d, cont, 0};
    d->probe_top = d->probe_bottom = 0;
    ASSERT_OK(clove_pool_run(p, deep_run_fn, &r));
    uint64_t expect = 0;
    for (size_t i = 0; i < d->depth; i++) {
        uint32_t runs = atomic_load_explicit(&d->runs[i], memory_order_relaxed);
        uint64_t v = index_value(d->seed, i);
        ASSERT_MSG(runs == 1, "%s: level %zu of %zu: its job ran %u times",
                   cont ? "cont" : "chain", i, d->depth, runs);
        ASSERT_MSG(d->out[i] == v, "%s: level %zu wrote %" PRIu64 ", expected %" PRIu64,
                   cont ? "cont" : "chain", i, d->out[i], v);
        atomic_store_explicit(&d->runs[i], 0, memory_order_relaxed);
        d->out[i] = 0;
        expect += index_hash(v, i);
    }
    ASSERT_EQ_U(r.result, expect);
    if (d->probe_level == 0)
        return 0;
    ASSERT_MSG(d->probe_top > d->probe_bottom && d->probe_bottom != 0,
               "stack probe: level 0 at %#jx, level %zu at %#jx (does the stack grow down?)",
               (uintmax_t)d->probe_top, d->probe_level, (uintmax_t)d->probe_bottom);
    return (size_t)((d->probe_top - d->probe_bottom + d->probe_level - 1) / d->probe_level);
}

static void *deep_main(void *arg)
{
    (void)arg;
    ASSERT_GE_U(current_stack_size(), DEEP_STACK);
    struct deep d;
    d.depth = DEEP_DEPTH;
    d.seed = 0xdee9;
    d.runs = calloc(d.depth, sizeof *d.runs);
    d.out = calloc(d.depth, sizeof *d.out);
    ASSERT(d.runs && d.out);

    /* Frame sizes, on a pool that cannot share (every fork is not taken:
     * the path whose frames stay on one stack). */
    clove_pool *one = make_pool(1, 1);
    size_t depth = d.depth;
    d.depth = DEEP_PROBE + 1;
    d.probe_level = DEEP_PROBE;
    size_t chain_bytes = deep_round(one, &d, false);
    size_t cont_bytes = deep_round(one, &d, true);
    d.depth = depth;
    d.probe_level = 0;
    clove_pool_destroy(one);
    size_t per_level = chain_bytes > cont_bytes ? chain_bytes : cont_bytes;
    test_log("deep_recursion: %zu bytes/level (chain), %zu bytes/level (cont); "
             "depth %zu needs %zu KiB; stacks are %zu MiB\n",
             chain_bytes, cont_bytes, d.depth, d.depth * per_level >> 10, DEEP_STACK >> 20);
    ASSERT_MSG(d.depth * per_level * 4 <= DEEP_STACK,
               "%zu levels of %zu bytes, with a 4x margin for helping, do not fit in "
               "DEEP_STACK (%zu bytes): raise it", d.depth, per_level, DEEP_STACK);

    clove_config cfg = {.threads = 4, .heartbeat_us = 1, .stack_size = DEEP_STACK};
    clove_pool *p = NULL;
    ASSERT_OK(clove_pool_create(&p, &cfg));
    size_t rounds = scaled(20, 4);
    for (size_t r = 0; r < rounds; r++) {
        d.seed = mix64(0xdee9 + r);
        deep_round(p, &d, r % 2 == 1);
    }
    clove_pool_destroy(p);
    test_log("deep_recursion: %u threads ran level jobs; smallest stack %zu MiB\n",
             atomic_load(&deep_threads_seen), atomic_load(&deep_min_stack) >> 20);
    /* Every thread that ran a job (the caller, and workers that took one)
     * had the stack asked for. */
    ASSERT_GE_U(atomic_load(&deep_min_stack), DEEP_STACK);
    free((void *)d.runs);
    free(d.out);
    return NULL;
}

void test_deep_recursion(void)
{
    struct watchdog w;
    watchdog_start(&w, WATCHDOG_S, "deep_recursion");
    /* The caller's stack must be as big as the workers': the chain starts
     * on it. The default 8 MiB main stack is not enough. */
    pthread_attr_t attr;
    ASSERT_OK(pthread_attr_init(&attr));
    ASSERT_OK(pthread_attr_setstacksize(&attr, DEEP_STACK));
    pthread_t th;
    ASSERT_OK(pthread_create(&th, &attr, deep_main, NULL));
    pthread_attr_destroy(&attr);
    ASSERT_OK(pthread_join(th, NULL));
    watchdog_stop(&w);
}

#ifdef _WIN32
/* Windows has neither fork() nor signals (SIGALRM, SIGSTOP/SIGCONT). */
void test_process_fork(void)
{
    test_skip("needs fork(), which Windows does not have");
}

void test_signal_storm(void)
{
    test_skip("needs SIGALRM and setitimer, which Windows does not have");
}

void test_stop_cont(void)
{
    test_skip("needs SIGSTOP and SIGCONT, which Windows does not have");
}
#else
/* ------------------------------------------------------------------------ */
/* process_fork                                                             */
/* ------------------------------------------------------------------------ */

/*
 * After fork() only the forking thread exists in the child. The parent's
 * pools are copied as memory, but their worker and heartbeat threads are
 * not, and their lock may have been held by one of those threads at the
 * moment of the fork. So the child must neither use an inherited pool
 * (nothing would run the shared jobs, and the lock may never be released)
 * nor destroy it (destroy would pthread_join threads that do not exist in
 * the child). It can create and use new pools.
 */
TEST_NORETURN static void fork_child_main(struct workset *w)
{
    /* The premise of the above: the child has exactly one thread (and
     * those of the runtime it runs in). */
    ASSERT_EQ_U(thread_count(), test_start_threads);
    /* ThreadSanitizer cannot start threads after a fork of a multi-threaded
     * process: it dies (die_after_fork=1, the default), or with
     * die_after_fork=0 reports "dup thread with used id" because its
     * registry still holds the parent's threads. Neither can qemu-user (it
     * aborts: "qemu_plugin_vcpu_init_hook: assertion failed"). A one-thread
     * pool starts none, so there the child checks that much. */
#ifdef CLOVE_TSAN
    clove_pool *p = make_pool(1, 1);
#else
    clove_pool *p = make_pool(getenv("CLOVE_TEST_EMULATOR") ? 1 : 3, 1);
#endif
    for (int r = 0; r < 3; r++)
        workset_run(p, w);
    clove_pool_destroy(p);
    _exit(0);
}

static void fork_and_check(struct workset *child_ws, const char *what)
{
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_MSG(pid >= 0, "fork failed: errno %d", errno);
    if (pid == 0)
        fork_child_main(child_ws);
    assert_child_ok(wait_child(pid, WATCHDOG_S, what), what);
}

/* A thread of the parent that stays inside one clove_pool_run, doing
 * checked work, until told to stop. */
struct busy {
    clove_pool *pool;
    struct workset *w;
    _Atomic int stop;
    _Atomic uint64_t steps;
};

static void busy_fn(clove_task *t, void *arg)
{
    struct busy *b = arg;
    while (!atomic_load(&b->stop)) {
        workset_step(t, b->w);
        atomic_fetch_add(&b->steps, 1);
    }
}

static void *busy_main(void *arg)
{
    struct busy *b = arg;
    ASSERT_OK(clove_pool_run(b->pool, busy_fn, b));
    return NULL;
}

void test_process_fork(void)
{
    size_t tree_n = scaled(30000, 1000), loop_n = scaled(60000, 1000);
    struct workset mine, busy_ws, child_ws;
    workset_init(&mine, tree_n, loop_n, 0xf0c1);
    workset_init(&busy_ws, tree_n, loop_n, 0xf0c2);
    workset_init(&child_ws, tree_n, loop_n, 0xf0c3); /* used only in children */

    clove_pool *p = make_pool(4, 1);
    for (int r = 0; r < 3; r++)
        workset_run(p, &mine);

    /* 1. The pool is between runs (workers asleep, maybe the heartbeat
     *    thread still awake). */
    for (int r = 0; r < 3; r++) {
        fork_and_check(&child_ws, "child forked from a process with an idle pool");
        workset_run(p, &mine);
    }

    /* 2. Another thread is inside clove_pool_run on the pool: its workers
     *    are running jobs, sharing, taking the lock, sleeping and waking. */
    struct busy b = {p, &busy_ws, 0, 0};
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, busy_main, &b));
    size_t forks = scaled(8, 3);
    test_rng rng = {0xf0};
    for (size_t k = 0; k < forks; k++) {
        double end = now_s() + WATCHDOG_S;
        while (atomic_load(&b.steps) < k + 1) {
            ASSERT_MSG(now_s() < end, "watchdog: the busy thread made no progress");
            sleep_us(200);
        }
        sleep_us((unsigned long)rng_below(&rng, 3000));
        fork_and_check(&child_ws, "child forked during a clove_pool_run on another thread");
    }
    atomic_store(&b.stop, 1);
    ASSERT_OK(pthread_join(th, NULL));
    ASSERT_GE_U(atomic_load(&b.steps), forks);
    test_log("process_fork: %zu forks during a run of %" PRIu64 " checked steps\n", forks,
             (uint64_t)atomic_load(&b.steps));

    /* The parent's pool is unaffected. */
    for (int r = 0; r < 3; r++)
        workset_run(p, &mine);
    clove_pool_destroy(p);
    workset_free(&mine);
    workset_free(&busy_ws);
    workset_free(&child_ws);
}

/* ------------------------------------------------------------------------ */
/* signal_storm                                                             */
/* ------------------------------------------------------------------------ */

static _Atomic uint64_t storm_count;     /* every SIGALRM handled */
static _Atomic uint64_t storm_on_pool;   /* those handled on a pool's thread */
static _Thread_local bool storm_caller;  /* set on the test's own thread */

static void storm_handler(int sig)
{
    (void)sig;
    atomic_fetch_add_explicit(&storm_count, 1, memory_order_relaxed);
    if (!storm_caller)
        atomic_fetch_add_explicit(&storm_on_pool, 1, memory_order_relaxed);
}

/* After the timer is stopped: wait until no SIGALRM is pending and none
 * arrived for a while, so that restoring the default action (terminate)
 * cannot kill the process. */
static void storm_drain(void)
{
    double end = now_s() + 10;
    for (;;) {
        uint64_t c0 = atomic_load(&storm_count);
        sleep_us(20000);
        sigset_t pend;
        ASSERT(sigpending(&pend) == 0);
        if (!sigismember(&pend, SIGALRM) && atomic_load(&storm_count) == c0)
            return;
        ASSERT_MSG(now_s() < end, "SIGALRM still arriving 10 s after the timer stopped");
    }
}


/* All of the pool's threads asleep (state S) within 10 s, then no more
 * than a few context switches in 200 ms (as idle_pool_sleeps checks). */
static void check_pool_idle(const pid_t *tids, size_t n)
{
    double end = now_s() + 10;
    for (;;) {
        size_t i = 0;
        while (i < n && thread_state(tids[i]) == 'S')
            i++;
        if (i == n)
            break;
        ASSERT_MSG(now_s() < end, "pool thread %ld still in state %c 10 s after the storm",
                   (long)tids[i], thread_state(tids[i]));
        sleep_us(10000);
    }
    long long c0 = 0, c1 = 0;
    for (size_t i = 0; i < n; i++) {
        long long c = thread_ctx_switches(tids[i]);
        ASSERT_MSG(c >= 0, "pool thread %ld vanished", (long)tids[i]);
        c0 += c;
    }
    sleep_us(200000);
    for (size_t i = 0; i < n; i++)
        c1 += thread_ctx_switches(tids[i]);
    ASSERT_MSG(c1 - c0 <= 10,
               "after the storm, the idle pool's %zu threads switched context %lld times "
               "in 200 ms; they should be asleep", n, c1 - c0);
}

void test_signal_storm(void)
{
    static pid_t before[MAX_TIDS], after[MAX_TIDS], pool_tids[MAX_TIDS];
    static const struct {
        unsigned threads, hb;
    } cfgs[] = {{2, 1}, {2, 100}, {8, 1}, {8, 100}, {32, 1}, {32, 100}};
    const size_t ncfg = sizeof cfgs / sizeof cfgs[0];

    unsigned base = thread_baseline();
    struct workset w;
    workset_init(&w, scaled(20000, 1000), scaled(40000, 1000), 0x516);
    /* The watchdog thread inherits a mask that blocks SIGALRM: only this
     * thread and the pools' threads (created while it is unblocked here)
     * take part in the storm. */
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    ASSERT_OK(pthread_sigmask(SIG_BLOCK, &alrm, NULL));
    struct watchdog wd;
    watchdog_start(&wd, WATCHDOG_S, "signal_storm");
    ASSERT_OK(pthread_sigmask(SIG_UNBLOCK, &alrm, NULL));
    storm_caller = true;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = storm_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: interrupted blocking calls fail with EINTR */
    ASSERT(sigaction(SIGALRM, &sa, &old) == 0);
    atomic_store(&storm_count, 0);
    atomic_store(&storm_on_pool, 0);
    /* ITIMER_REAL's SIGALRM is process-directed: the kernel gives it to the
     * main thread if that one can take it, else to another thread that does
     * not block it, which here is one of the pool's threads, often asleep
     * in a futex wait. So every other run below blocks SIGALRM on this
     * (the calling) thread: the storm then hits the workers. */
    struct itimerval on = {{0, 100}, {0, 100}}, off = {{0, 0}, {0, 0}};
    ASSERT(setitimer(ITIMER_REAL, &on, NULL) == 0);

    double per_cfg = scaled_seconds(3.0, 0.6) / (double)ncfg;
    clove_pool *last = NULL;
    size_t npool = 0;
    for (size_t k = 0; k < ncfg; k++) {
        size_t nb = list_tids(before, MAX_TIDS);
        clove_pool *p = make_pool(cfgs[k].threads, cfgs[k].hb);
        double end = now_s() + per_cfg;
        size_t runs = 0;
        while (runs < 4 || now_s() < end) {
            ASSERT_OK(pthread_sigmask(runs % 2 ? SIG_BLOCK : SIG_UNBLOCK, &alrm, NULL));
            workset_run(p, &w);
            runs++;
        }
        ASSERT_OK(pthread_sigmask(SIG_UNBLOCK, &alrm, NULL));
        test_log("signal_storm: threads=%u hb=%u: %zu checked runs, %" PRIu64 " signals "
                 "so far, %" PRIu64 " on the pools' threads\n", cfgs[k].threads, cfgs[k].hb,
                 runs, (uint64_t)atomic_load(&storm_count), (uint64_t)atomic_load(&storm_on_pool));
        if (k + 1 < ncfg) {
            clove_pool_destroy(p); /* destroy under the storm too */
            continue;
        }
        /* Keep the last pool: it must go idle once the storm is over. */
        size_t na = list_tids(after, MAX_TIDS);
        ASSERT_LE_U(nb, MAX_TIDS);
        ASSERT_LE_U(na, MAX_TIDS);
        for (size_t i = 0; i < na; i++)
            if (!tid_in(after[i], before, nb))
                pool_tids[npool++] = after[i];
        ASSERT_EQ_U(npool, cfgs[k].threads); /* workers + the heartbeat thread */
        last = p;
    }

    ASSERT(setitimer(ITIMER_REAL, &off, NULL) == 0);
    storm_drain();
    ASSERT(sigaction(SIGALRM, &old, NULL) == 0);
    storm_caller = false;
    uint64_t nsig = atomic_load(&storm_count), npool_sig = atomic_load(&storm_on_pool);
    test_log("signal_storm: %" PRIu64 " SIGALRMs handled, %" PRIu64 " on the pools' threads\n",
             nsig, npool_sig);
    ASSERT_MSG(nsig > 100, "only %" PRIu64 " SIGALRMs arrived: there was no storm", nsig);
    ASSERT_MSG(npool_sig > 100, "only %" PRIu64 " SIGALRMs hit the pools' threads", npool_sig);

    /* The storm is over: the pool still works, then goes to sleep. */
    workset_run(last, &w);
    check_pool_idle(pool_tids, npool);
    workset_run(last, &w);
    clove_pool_destroy(last);
    watchdog_stop(&wd);
    ASSERT_EQ_U(wait_thread_count(base), base);
    workset_free(&w);
}

/* ------------------------------------------------------------------------ */
/* stop_cont                                                                */
/* ------------------------------------------------------------------------ */

/*
 * The child runs checked rounds on a pool of 8 threads (recreated every 8
 * rounds, so a stop can also land in create or destroy) and writes a byte
 * to `prog` after each round, until the parent closes `go`. It exits 0
 * only if every result was correct (a failed assertion exits 1).
 */
TEST_NORETURN static void stop_cont_child(int prog, int go)
{
    struct workset w;
    workset_init(&w, scaled(20000, 1000), scaled(40000, 1000), 0x5c0);
    clove_pool *p = NULL;
    double limit = now_s() + 2 * WATCHDOG_S; /* if the parent is stuck */
    for (uint64_t round = 0;; round++) {
        if (round % 8 == 0) {
            clove_pool_destroy(p);
            p = make_pool(8, round % 16 == 0 ? 1 : 100);
        }
        workset_run(p, &w);
        char c = 1;
        ssize_t wr = write(prog, &c, 1); /* a full pipe only loses a mark */
        (void)wr;
        ssize_t r = read(go, &c, 1);
        if (r == 0)
            break; /* the parent closed go: finish */
        ASSERT_MSG(r < 0 && (errno == EAGAIN || errno == EINTR),
                   "stop_cont child: read(go) returned %zd, errno %d", r, errno);
        ASSERT_MSG(now_s() < limit, "stop_cont child: never told to finish");
    }
    clove_pool_destroy(p);
    workset_free(&w);
    _exit(0);
}

/* Read what the child wrote to prog so far (non-blocking). */
static size_t drain_progress(int fd)
{
    char buf[256];
    size_t total = 0;
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r > 0) {
            total += (size_t)r;
            continue;
        }
        ASSERT_MSG(r == 0 || errno == EAGAIN || errno == EINTR, "read(prog): errno %d", errno);
        return total;
    }
}

/* Wait until the child finishes at least one more round. */
static void wait_progress(pid_t pid, int fd, const char *when)
{
    double end = now_s() + WATCHDOG_S;
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int n = poll(&pfd, 1, 100);
        ASSERT_MSG(n >= 0 || errno == EINTR, "poll: errno %d", errno);
        if (n > 0) {
            char c;
            ssize_t r = read(fd, &c, 1);
            if (r == 1)
                return;
            if (r == 0) { /* the child is gone: say how */
                int status = wait_child(pid, WATCHDOG_S, "the stop_cont child");
                assert_child_ok(status, "the stop_cont child");
                test_fail(__FILE__, __LINE__, "the stop_cont child exited early (%s)", when);
            }
        }
        if (now_s() >= end) {
            describe_hung(pid, "the stop_cont child");
            (void)kill(pid, SIGKILL);
            (void)wait_child(pid, WATCHDOG_S, "the stop_cont child");
            test_fail(__FILE__, __LINE__,
                      "watchdog: the stop_cont child finished no round within %.0f s %s; "
                      "killed it", WATCHDOG_S, when);
        }
    }
}

static void wait_stopped(pid_t pid)
{
    double end = now_s() + WATCHDOG_S;
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WUNTRACED | WNOHANG);
        if (r == pid) {
            if (WIFSTOPPED(status))
                return;
            assert_child_ok(status, "the stop_cont child");
            test_fail(__FILE__, __LINE__, "the stop_cont child exited while being stopped");
        }
        ASSERT_MSG(r == 0 || (r < 0 && errno == EINTR), "waitpid: errno %d", errno);
        if (now_s() >= end) {
            (void)kill(pid, SIGKILL);
            (void)wait_child(pid, WATCHDOG_S, "the stop_cont child");
            test_fail(__FILE__, __LINE__, "SIGSTOP did not stop the child within %.0f s",
                      WATCHDOG_S);
        }
        sleep_us(1000);
    }
}

void test_stop_cont(void)
{
    int prog[2], go[2];
    ASSERT_OK(pipe(prog));
    ASSERT_OK(pipe(go));
    fflush(NULL);
    pid_t pid = fork();
    ASSERT_MSG(pid >= 0, "fork failed: errno %d", errno);
    if (pid == 0) {
        close(prog[0]);
        close(go[1]);
        set_nonblock(prog[1]);
        set_nonblock(go[0]);
        stop_cont_child(prog[1], go[0]);
    }
    close(prog[1]);
    close(go[0]);
    set_nonblock(prog[0]);

    wait_progress(pid, prog[0], "after it started");
    size_t cycles = scaled(8, 4);
    test_rng rng = {0x5c};
    for (size_t k = 0; k < cycles; k++) {
        /* Land the stop at different points of a round. */
        sleep_us((unsigned long)rng_below(&rng, 20000));
        ASSERT(kill(pid, SIGSTOP) == 0);
        wait_stopped(pid);
        (void)drain_progress(prog[0]); /* rounds finished before the stop */
        sleep_us(50000);
        ASSERT(kill(pid, SIGCONT) == 0);
        wait_progress(pid, prog[0], "after SIGCONT");
    }
    close(go[1]);
    int status = wait_child(pid, WATCHDOG_S, "the stop_cont child");
    size_t more = drain_progress(prog[0]);
    close(prog[0]);
    assert_child_ok(status, "the stop_cont child");
    test_log("stop_cont: %zu stop/cont cycles; %zu rounds after the last\n", cycles, more);
}
#endif
