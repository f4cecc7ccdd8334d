/* SPDX-License-Identifier: MIT */
/*
 * test_current.c - clove_current() and the default pool of clove_run.
 *
 *   current_tracks_task    clove_current() is NULL outside any run, the
 *                          received task in fn, in jobs taken by other
 *                          workers, in loop bodies and spawned jobs, the
 *                          inner task inside a nested run of another pool
 *                          and the outer one again after it
 *   current_tree_sum       a tree sum with no task parameter (it forks on
 *                          clove_current() at every level) on 1-16
 *                          threads, every node visited once
 *   run_default_pool       clove_run: the default pool's size follows
 *                          CLOVE_THREADS, many threads enter at once, a
 *                          clove_run inside a task runs on that task
 *   run_default_fork       fork() after the default pool ran: the child's
 *                          clove_run gets a fresh pool, the parent's stays
 *   run_default_exit       exit() while another thread is inside
 *                          clove_run, exit() from inside a job, and a
 *                          clove_run in an atexit handler that runs after
 *                          the default pool's: each process ends normally
 */
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#ifndef _WIN32
#include <sys/wait.h>
#include <unistd.h>
#endif

/* ------------------------------------------------------------------------ */
/* clove_current() follows the task                                         */
/* ------------------------------------------------------------------------ */

static _Atomic uint64_t mismatches, checks;

static void check_current(clove_task *t)
{
    atomic_fetch_add(&checks, 1);
    if (clove_current() != t)
        atomic_fetch_add(&mismatches, 1);
}

static void body_check(clove_task *t, size_t lo, size_t hi, void *ctx)
{
    (void)lo;
    (void)hi;
    (void)ctx;
    check_current(t);
}

static void spawned_check(clove_task *t, clove_scope *s, void *arg)
{
    (void)s;
    (void)arg;
    check_current(t);
}

static void scope_fn(clove_task *t, clove_scope *s, void *arg)
{
    (void)arg;
    check_current(t);
    for (int i = 0; i < 64; i++)
        clove_spawn(t, s, spawned_check, NULL);
}

/* A fork at every level down to depth 0, each job checking. */
static int64_t deep_job(clove_task *t, void *arg);

static int64_t deep(clove_task *t, uintptr_t depth)
{
    check_current(t);
    if (depth == 0) {
        for (volatile int i = 0; i < 200; i++) {
        }
        return 1;
    }
    clove_future f;
    int64_t r;
    clove_fork_value(t, &f, deep_job, (void *)(depth - 1));
    int64_t l = deep(t, depth - 1);
    if (!clove_join_value(t, &f, &r))
        r = deep(t, depth - 1);
    check_current(t);
    return l + r;
}

static int64_t deep_job(clove_task *t, void *arg)
{
    return deep(t, (uintptr_t)arg);
}

struct other_arg {
    clove_task *outer;
    int64_t leaves;
};

static void inner_fn(clove_task *t, void *arg)
{
    struct other_arg *a = arg;
    ASSERT(t != a->outer);
    ASSERT_EQ_P(clove_current(), t);
    a->leaves = deep(t, 6);
}

static void outer_fn(clove_task *t, void *arg)
{
    clove_pool *other = arg;
    ASSERT_EQ_P(clove_current(), t);
    ASSERT_EQ_I(deep(t, 10), 1024);
    clove_for(t, 0, 100000, body_check, NULL);
    clove_scope_run(t, scope_fn, NULL);
    struct other_arg oa = {t, 0};
    ASSERT_OK(clove_pool_run(other, inner_fn, &oa));
    ASSERT_EQ_I(oa.leaves, 64);
    ASSERT_EQ_P(clove_current(), t);
}

void test_current_tracks_task(void)
{
    ASSERT(clove_current() == NULL);
    static const unsigned threads[] = {1, 2, 3, 8};
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        clove_pool *p = make_pool(threads[k], 1);
        clove_pool *q = make_pool(threads[(k + 1) % 4], 1);
        for (size_t r = 0; r < scaled(20, 3); r++)
            ASSERT_OK(clove_pool_run(p, outer_fn, q));
        ASSERT(clove_current() == NULL);
        clove_pool_destroy(q);
        clove_pool_destroy(p);
    }
    ASSERT_EQ_U(atomic_load(&mismatches), 0);
    ASSERT(atomic_load(&checks) > 0);
}

/* ------------------------------------------------------------------------ */
/* A tree sum without a task parameter                                      */
/* ------------------------------------------------------------------------ */

static const struct tree *cur_tree;

static uint64_t cur_sum(const struct tnode *n);

static int64_t cur_sum_job(clove_task *t, void *n)
{
    (void)t;
    return (int64_t)cur_sum(n);
}

/* Forks through clove_current(): the signature has no task. */
static uint64_t cur_sum(const struct tnode *n)
{
    uint64_t h = 0;
    while (n) {
        atomic_fetch_add_explicit(&cur_tree->visits[n->index], 1, memory_order_relaxed);
        h += index_hash(n->value, n->index);
        if (n->left && n->right) {
            clove_task *t = clove_current();
            clove_future f;
            int64_t r;
            clove_fork_value(t, &f, cur_sum_job, (void *)n->right);
            h += cur_sum(n->left);
            if (!clove_join_value(t, &f, &r))
                r = (int64_t)cur_sum(n->right);
            return h + (uint64_t)r;
        }
        n = n->left ? n->left : n->right;
    }
    return h;
}

struct cur_arg {
    uint64_t got;
};

static void cur_sum_fn(clove_task *t, void *arg)
{
    (void)t;
    ((struct cur_arg *)arg)->got = cur_sum(cur_tree->root);
}

void test_current_tree_sum(void)
{
    static const unsigned threads[] = {1, 2, 4, 16};
    for (int shape = 0; shape < SHAPE_COUNT; shape++) {
        struct tree tr;
        tree_build(&tr, scaled(100000, 2000), (enum tree_shape)shape, 0xc0 + (uint64_t)shape);
        cur_tree = &tr;
        for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
            clove_pool *p = make_pool(threads[k], 1);
            for (size_t r = 0; r < scaled(4, 2); r++) {
                struct cur_arg a = {0};
                ASSERT_OK(clove_pool_run(p, cur_sum_fn, &a));
                tree_check(&tr, (struct sums){tr.expect.sum, a.got});
            }
            clove_pool_destroy(p);
        }
        /* And on the default pool. */
        struct cur_arg a = {0};
        ASSERT_OK(clove_run(cur_sum_fn, &a));
        tree_check(&tr, (struct sums){tr.expect.sum, a.got});
        tree_free(&tr);
    }
    test_log("taken elsewhere: %" PRIu64 "\n", tree_taken_count());
}

/* ------------------------------------------------------------------------ */
/* The default pool                                                         */
/* ------------------------------------------------------------------------ */

struct deep_arg {
    uintptr_t depth;
    int64_t got;
    clove_pool *pool;
    unsigned threads; /* the pool's, read while it exists */
};

static void deep_fn(clove_task *t, void *arg)
{
    struct deep_arg *a = arg;
    ASSERT_EQ_P(clove_current(), t);
    a->pool = t->pool;
    a->threads = clove_pool_threads(t->pool);
    a->got = deep(t, a->depth);
}

static void *entering_thread(void *arg)
{
    struct deep_arg *a = arg;
    for (int r = 0; r < 20; r++) {
        a->got = 0;
        ASSERT_OK(clove_run(deep_fn, a));
        ASSERT_EQ_I(a->got, (int64_t)1 << a->depth);
    }
    return NULL;
}

/* In an explicit pool's task, clove_run stays on that task. */
static void nested_in_explicit(clove_task *t, void *arg)
{
    (void)arg;
    struct deep_arg a = {8, 0, NULL, 0};
    ASSERT_OK(clove_run(deep_fn, &a));
    ASSERT_EQ_P(a.pool, t->pool);
    ASSERT_EQ_I(a.got, 256);
}

void test_run_default_pool(void)
{
    ASSERT_EQ_I(clove_run(NULL, NULL), EINVAL);
    /* Read at the default pool's creation, which is the first clove_run
     * that calls fn. */
    test_setenv("CLOVE_THREADS", "3");
    struct deep_arg a = {10, 0, NULL, 0};
    ASSERT_OK(clove_run(deep_fn, &a));
    ASSERT_EQ_I(a.got, 1024);
    ASSERT_EQ_U(a.threads, 3);
    clove_pool *first = a.pool;
    test_setenv("CLOVE_THREADS", NULL);

    /* Many threads at once, all on the one default pool. */
    enum { NT = 6 };
    pthread_t th[NT];
    struct deep_arg args[NT];
    for (int i = 0; i < NT; i++) {
        args[i] = (struct deep_arg){(uintptr_t)(6 + i), 0, NULL, 0};
        ASSERT_EQ_I(pthread_create(&th[i], NULL, entering_thread, &args[i]), 0);
    }
    for (int i = 0; i < NT; i++) {
        ASSERT_EQ_I(pthread_join(th[i], NULL), 0);
        ASSERT_EQ_P(args[i].pool, first);
    }

    clove_pool *p = make_pool(2, 1);
    ASSERT_OK(clove_pool_run(p, nested_in_explicit, NULL));
    clove_pool_destroy(p);
    ASSERT(clove_current() == NULL);
}

#ifdef _WIN32
/* Windows has no fork(): neither the child's fresh pool nor a child that
 * exits in the middle of work can be set up this way. */
void test_run_default_fork(void)
{
    test_skip("needs fork(), which Windows does not have");
}

void test_run_default_exit(void)
{
    test_skip("needs fork(), which Windows does not have");
}
#else
/* Run f in a child process and return its wait status. */
static int in_child(void (*f)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
        f();
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ASSERT_EQ_I(errno, EINTR);
    return status;
}

static clove_pool *parent_pool;

static void child_after_fork(void)
{
#ifdef CLOVE_TSAN
    /* ThreadSanitizer cannot start threads in the child of a
     * multi-threaded process (see process_fork): a one-thread default
     * pool starts none. */
    if (setenv("CLOVE_THREADS", "1", 1) != 0)
        _exit(4);
#endif
    struct deep_arg a = {10, 0, NULL, 0};
    if (clove_run(deep_fn, &a) != 0 || a.got != 1024 || a.pool == parent_pool)
        _exit(3);
    _exit(0);
}

void test_run_default_fork(void)
{
    /* qemu-user aborts in its own code (a failed assertion in its vCPU
     * set-up) when a multi-threaded guest forks and the child starts
     * threads. */
    const char *emu = getenv("CLOVE_TEST_EMULATOR");
    if (emu != NULL && *emu != 0)
        test_skip("qemu-user cannot start threads in the child of a multi-threaded process");
    struct deep_arg a = {10, 0, NULL, 0};
    ASSERT_OK(clove_run(deep_fn, &a));
    parent_pool = a.pool;
    for (int i = 0; i < 3; i++) {
        int status = in_child(child_after_fork);
        ASSERT(WIFEXITED(status));
        ASSERT_EQ_I(WEXITSTATUS(status), 0);
    }
    a.got = 0;
    ASSERT_OK(clove_run(deep_fn, &a));
    ASSERT_EQ_P(a.pool, parent_pool);
    ASSERT_EQ_I(a.got, 1024);
}

/* exit() while another thread runs a long job on the default pool. */
static _Atomic int long_job_started;

static void long_fn(clove_task *t, void *arg)
{
    (void)arg;
    atomic_store(&long_job_started, 1);
    for (;;) {
        (void)deep(t, 8);
        clove_tick(t);
    }
}

static void *long_thread(void *arg)
{
    (void)arg;
    (void)clove_run(long_fn, NULL);
    return NULL;
}

static void exit_while_running(void)
{
    pthread_t th;
    if (pthread_create(&th, NULL, long_thread, NULL) != 0)
        _exit(4);
    while (!atomic_load(&long_job_started))
        sleep_us(100);
    exit(0);
}

static void exit_in_job_fn(clove_task *t, void *arg)
{
    (void)arg;
    (void)deep(t, 6);
    exit(5);
}

static void exit_in_job(void)
{
    struct deep_arg a = {8, 0, NULL, 0};
    (void)clove_run(deep_fn, &a);
    (void)clove_run(exit_in_job_fn, NULL);
    _exit(6);
}

/* Registered before the default pool's handler, so it runs after it. */
static void late_handler(void)
{
    struct deep_arg a = {9, 0, NULL, 0};
    if (clove_run(deep_fn, &a) != 0 || a.got != 512 || a.threads != 1)
        _exit(7);
}

static void run_after_exit_handler(void)
{
    if (atexit(late_handler) != 0)
        _exit(8);
    struct deep_arg a = {8, 0, NULL, 0};
    if (clove_run(deep_fn, &a) != 0)
        _exit(9);
    exit(0);
}

void test_run_default_exit(void)
{
    int status = in_child(exit_while_running);
    ASSERT(WIFEXITED(status));
    ASSERT_EQ_I(WEXITSTATUS(status), 0);
    status = in_child(exit_in_job);
    ASSERT(WIFEXITED(status));
    ASSERT_EQ_I(WEXITSTATUS(status), 5);
    status = in_child(run_after_exit_handler);
    ASSERT(WIFEXITED(status));
    ASSERT_EQ_I(WEXITSTATUS(status), 0);
}
#endif
