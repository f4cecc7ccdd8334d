/* SPDX-License-Identifier: MIT */
/*
 * test_misuse.c - misuse of fork/join aborts with a message naming it.
 *
 * Each case runs in a child process: the parent starts
 * "clove_tests --misuse NAME" (a fresh single-threaded process, so this also
 * works under the sanitizers and when the parent already has threads),
 * captures its stderr, and checks that it died of abort() after printing
 * the expected message. CLOVE_DEBUG is forced on here, so the inline
 * checks exist in Release builds too.
 */
#undef CLOVE_DEBUG
#define CLOVE_DEBUG 1
#include "test.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

/* The result of a join that must abort (clove_join's result must not be
 * ignored, and GCC does not accept a cast to void for that). */
static void not_reached(bool joined)
{
    (void)joined;
    ASSERT_MSG(false, "the misused join returned");
}

static void nop_fn(clove_task *t, void *arg)
{
    (void)t;
    (void)arg;
}

static _Atomic uint32_t job_started;

static void started_fn(clove_task *t, void *arg)
{
    (void)t;
    (void)arg;
    atomic_store(&job_started, 1);
}

/* Tick until f was reserved or shared (left the owner's queue). */
static void tick_until_shared(clove_task *t, clove_future *f)
{
    double end = now_s() + 20;
    while (f->job >= t->bottom) {
        ASSERT_MSG(now_s() < end, "watchdog: never shared");
        clove_tick(t);
        sched_yield();
    }
}

static void tick_until_started(clove_task *t)
{
    double end = now_s() + 20;
    while (!atomic_load(&job_started)) {
        ASSERT_MSG(now_s() < end, "watchdog: never taken");
        clove_tick(t);
        sched_yield();
    }
}

/* ------------------------------------------------------------------------ */
/* The misuses (each runs inside clove_pool_run)                             */
/* ------------------------------------------------------------------------ */

static void m_join_zero(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f = {0};
    not_reached(clove_join(t, &f));
}

static void m_join_garbage(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    memset(&f, 0xA5, sizeof f);
    not_reached(clove_join(t, &f));
}

/* A clove_fork joined with clove_join_value, and the converse. */
static void m_join_value_of_fork(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    int64_t r;
    clove_fork(t, &f, nop_fn, NULL);
    not_reached(clove_join_value(t, &f, &r));
}

static int64_t value_job(clove_task *t, void *arg)
{
    (void)t;
    return (int64_t)(intptr_t)arg;
}

static void m_join_of_fork_value(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    clove_fork_value(t, &f, value_job, NULL);
    not_reached(clove_join(t, &f));
}

/* Forks that are never joined, one after another, until the job stack
 * is full: debug builds stop at its end instead of faulting on the guard
 * page. Each through its own future (the same one twice is a misuse of
 * its own). */
static void m_fork_too_deep(clove_task *t, void *arg)
{
    (void)arg;
    size_t n = CLOVE_JOB_STACK_DEPTH + 1;
    clove_future *fs = malloc(n * sizeof *fs);
    ASSERT(fs != NULL);
    for (size_t i = 0; i < n; i++)
        clove_fork(t, &fs[i], nop_fn, NULL);
    free(fs);
}

static void m_join_twice(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    clove_fork(t, &f, nop_fn, NULL);
    if (!clove_join(t, &f))
        nop_fn(t, NULL);
    not_reached(clove_join(t, &f));
}

static void m_join_twice_taken(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    clove_fork(t, &f, started_fn, NULL);
    tick_until_started(t);
    ASSERT(clove_join(t, &f));
    not_reached(clove_join(t, &f));
}

/* The same, joined by code built without the debug checks: the second
 * join is caught by the library's slow path (the first left the record
 * FREED), in every build. */
static void m_join_twice_taken_release(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    clove_fork(t, &f, started_fn, NULL);
    tick_until_started(t);
    ASSERT(release_join(t, &f));
    (void)release_join(t, &f);
}

static int64_t started_value_fn(clove_task *t, void *arg)
{
    started_fn(t, arg);
    return 7;
}

/* A clove_fork_value job taken elsewhere, joined with the wrong form by
 * code built without the debug checks. */
static void m_join_of_fork_value_taken_release(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    clove_fork_value(t, &f, started_value_fn, NULL);
    tick_until_started(t);
    (void)release_join(t, &f);
}

static void m_join_out_of_order(clove_task *t, void *arg)
{
    (void)arg;
    clove_future a, b;
    clove_fork(t, &a, nop_fn, NULL);
    clove_fork(t, &b, nop_fn, NULL);
    not_reached(clove_join(t, &a));
}

static void m_join_out_of_order_shared(clove_task *t, void *arg)
{
    (void)arg;
    clove_future a, b;
    clove_fork(t, &a, nop_fn, NULL);
    tick_until_shared(t, &a);
    clove_fork(t, &b, nop_fn, NULL);
    not_reached(clove_join(t, &a));
}

static void *other_thread_fork(void *arg)
{
    clove_task *t = arg;
    clove_future f;
    clove_fork(t, &f, nop_fn, NULL);
    not_reached(clove_join(t, &f));
    return NULL;
}

static void m_task_other_thread(clove_task *t, void *arg)
{
    (void)arg;
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, other_thread_fork, t));
    ASSERT_OK(pthread_join(th, NULL));
}

struct other_join {
    clove_task *t;
    clove_future *f;
};

static void *other_thread_tick_join(void *arg)
{
    struct other_join *o = arg;
    /* A future of another task, joined from another thread. */
    not_reached(clove_join(o->t, o->f));
    return NULL;
}

static void m_join_other_thread(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    clove_fork(t, &f, nop_fn, t);
    struct other_join o = {t, &f};
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, other_thread_tick_join, &o));
    ASSERT_OK(pthread_join(th, NULL));
}

static void m_unjoined(clove_task *t, void *arg)
{
    (void)arg;
    static clove_future f; /* outlives the call: only the missing join is wrong */
    clove_fork(t, &f, nop_fn, NULL);
}

static void m_unjoined_nested(clove_task *t, void *arg)
{
    (void)t;
    clove_pool *other = arg;
    ASSERT_OK(clove_pool_run(other, m_unjoined, NULL));
}

static void unjoining_job(clove_task *t, void *arg)
{
    (void)arg;
    static clove_future f;
    clove_fork(t, &f, nop_fn, NULL);
    atomic_store(&job_started, 1);
}

static void m_unjoined_in_shared_job(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    clove_fork(t, &f, unjoining_job, NULL);
    tick_until_started(t);
    /* The worker aborts when the job returns; wait for it. */
    sleep_us(20 * 1000 * 1000);
    not_reached(clove_join(t, &f));
}

static void m_fork_null_future(clove_task *t, void *arg)
{
    (void)arg;
    clove_future *volatile none = NULL;
    clove_fork(t, none, nop_fn, NULL);
}

static void m_fork_null_task(clove_task *t, void *arg)
{
    (void)t;
    (void)arg;
    clove_future f;
    clove_task *volatile none = NULL; /* hidden from the optimiser's warnings */
    clove_fork(none, &f, nop_fn, NULL);
}

static void m_fork_twice(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    clove_fork(t, &f, nop_fn, NULL);
    clove_fork(t, &f, nop_fn, NULL);
}

/* The same with clove_fork_value, and in a loop (a different argument
 * each time, as a loop over work items forks them). */
static void m_fork_twice_value(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    clove_fork_value(t, &f, value_job, (void *)1);
    clove_fork_value(t, &f, value_job, (void *)2);
}

static void m_fork_in_loop(clove_task *t, void *arg)
{
    (void)arg;
    static int items[8];
    clove_future f;
    for (int i = 0; i < 8; i++)
        clove_fork(t, &f, nop_fn, &items[i]);
}

/* The first fork is reserved (pools with workers), and another fork is
 * queued above it before the future is forked again. */
static void m_fork_twice_reserved(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f, g;
    clove_fork(t, &f, nop_fn, NULL);
    clove_fork(t, &g, nop_fn, NULL);
    clove_fork(t, &f, nop_fn, NULL);
}

/* Queued records tell the fork's form in every build: code built without
 * the debug checks joining a clove_fork with clove_join_value (and the
 * converse) is caught by the library's slow path. */
static void m_join_value_of_fork_release(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    int64_t r;
    clove_fork(t, &f, nop_fn, NULL);
    (void)release_join_value(t, &f, &r);
}

static void m_join_of_fork_value_release(clove_task *t, void *arg)
{
    (void)arg;
    clove_future f;
    clove_fork_value(t, &f, value_job, NULL);
    (void)release_join(t, &f);
}

static void m_destroy_while_running(clove_task *t, void *arg)
{
    (void)t;
    clove_pool_destroy(arg);
}

static void scope_nop(clove_task *t, clove_scope *s, void *arg)
{
    (void)t;
    (void)s;
    (void)arg;
}

/* A spawned job spawns into its parent's scope, whose function returned. */
static void spawn_into_parent(clove_task *t, clove_scope *s, void *arg)
{
    (void)s;
    clove_spawn(t, arg, scope_nop, NULL);
}

static void spawn_parent(clove_task *t, clove_scope *s, void *arg)
{
    (void)arg;
    clove_spawn(t, s, spawn_into_parent, s);
}

static void m_spawn_after_return(clove_task *t, void *arg)
{
    (void)arg;
    clove_scope_run(t, spawn_parent, NULL);
}

/* The scope is used with the task of a nested run of another pool. */
static void spawn_other_task_inner(clove_task *t, void *arg)
{
    clove_spawn(t, arg, scope_nop, NULL);
}

static void spawn_other_task_body(clove_task *t, clove_scope *s, void *arg)
{
    (void)t;
    clove_pool_run(arg, spawn_other_task_inner, s);
}

static void m_spawn_other_task(clove_task *t, void *arg)
{
    clove_scope_run(t, spawn_other_task_body, arg);
}

static void m_scope_null_fn(clove_task *t, void *arg)
{
    (void)arg;
    clove_scope_fn *volatile none = NULL;
    clove_scope_run(t, none, NULL);
}

/* Typed tasks: the join is CLOVE_JOIN's, on the value form's record. */
static int64_t tnop(clove_task *t, int x);
CLOVE_TASK(int64_t, tnop, int);

static int64_t tnop(clove_task *t, int x)
{
    (void)t;
    return x;
}

static void m_typed_join_twice(clove_task *t, void *arg)
{
    (void)arg;
    CLOVE_FORK(t, tnop, a, 1);
    ASSERT_EQ_I(CLOVE_JOIN(t, a), 1);
    ASSERT_MSG(CLOVE_JOIN(t, a) == -1, "the misused join returned");
}

static void m_typed_join_out_of_order(clove_task *t, void *arg)
{
    (void)arg;
    CLOVE_FORK(t, tnop, a, 1);
    CLOVE_FORK(t, tnop, b, 2);
    ASSERT_MSG(CLOVE_JOIN(t, a) == -1, "the misused join returned");
    ASSERT_MSG(CLOVE_JOIN(t, b) == -1, "the misused join returned");
}

/* ------------------------------------------------------------------------ */
/* Table                                                                    */
/* ------------------------------------------------------------------------ */

struct misuse_case {
    const char *name;
    clove_fn *fn;
    unsigned threads;
    const char *expect; /* substring of stderr; '|' separates alternatives */
    int arg_kind;       /* 0: NULL, 1: the pool, 2: another 1-thread pool */
    unsigned heartbeat_us; /* 0: 1 us, so that sharing happens constantly */
};

static const struct misuse_case cases[] = {
    {"join_zero_1", m_join_zero, 1, "clove_join: this future was never forked", 0, 0},
    {"join_zero_2", m_join_zero, 2, "clove_join: this future was never forked", 0, 0},
    {"join_garbage_1", m_join_garbage, 1,
     "clove_join: this future is not the most recent unjoined fork", 0, 0},
    {"join_garbage_2", m_join_garbage, 2,
     "clove_join: this future is not the most recent unjoined fork", 0, 0},
    {"join_value_of_fork_1", m_join_value_of_fork, 1,
     "clove_join_value: this future was forked with clove_fork (join it with clove_join)", 0, 0},
    /* With workers the fork is reserved: the slow path names it too. */
    {"join_value_of_fork_2", m_join_value_of_fork, 2,
     "clove_join_value: this future was forked with clove_fork (join it with clove_join)", 0, 0},
    {"join_of_fork_value_1", m_join_of_fork_value, 1,
     "clove_join: this future was forked with clove_fork_value (join it with clove_join_value)",
     0, 0},
    {"join_of_fork_value_2", m_join_of_fork_value, 2,
     "clove_join: this future was forked with clove_fork_value (join it with clove_join_value)",
     0, 0},
    {"fork_too_deep", m_fork_too_deep, 1,
     "clove_fork: forks nest deeper than the task's job stack", 0, 0},
    {"join_twice_1", m_join_twice, 1, "clove_join: this future was already joined", 0, 0},
    /* With heartbeats the first join may take the slow path (shared, then
     * taken or reclaimed): see misuse_join_twice_taken_message. */
    {"join_twice_3", m_join_twice, 3, "clove: misuse in clove_join: ", 0, 0},
    /* Aborts in every build; the exact message is checked separately by
     * misuse_join_twice_taken_message (see there). */
    {"join_twice_taken", m_join_twice_taken, 2, "clove: misuse in clove_join: ", 0, 0},
    {"join_twice_taken_release", m_join_twice_taken_release, 2,
     "clove_join: this future was already joined", 0, 0},
    {"join_of_fork_value_taken_release", m_join_of_fork_value_taken_release, 2,
     "clove_join: this future was forked with clove_fork_value (join it with clove_join_value)",
     0, 0},
    {"join_out_of_order_1", m_join_out_of_order, 1,
     "clove_join: this future is not the most recent unjoined fork", 0, 0},
    /* Here a heartbeat may share the older future first: either check
     * (inline or in the slow path) names the misuse. */
    {"join_out_of_order_2", m_join_out_of_order, 2,
     "clove_join: this future is not the most recent unjoined fork"
     "|clove_join: joins are out of LIFO order", 0, 0},
    /* The inline debug check or, against a release build of the caller,
     * the library's slow path. */
    {"join_out_of_order_shared", m_join_out_of_order_shared, 2,
     "clove_join: this future is not the most recent unjoined fork"
     "|clove_join: joins are out of LIFO order", 0, 0},
    {"task_other_thread_1", m_task_other_thread, 1,
     "clove_fork: the task is used outside the fn call", 0, 0},
    {"task_other_thread_2", m_task_other_thread, 2,
     "clove_fork: the task is used outside the fn call", 0, 0},
    {"join_other_thread", m_join_other_thread, 1,
     "clove_join: the task is used outside the fn call", 0, 0},
    {"unjoined_1", m_unjoined, 1,
     "clove_pool_run: fn returned with a clove_fork that was never joined", 0, 0},
    {"unjoined_2", m_unjoined, 2,
     "clove_pool_run: fn returned with a clove_fork that was never joined", 0, 0},
    {"unjoined_nested_other_pool", m_unjoined_nested, 2,
     "clove_pool_run: fn returned with a clove_fork that was never joined", 2, 0},
    {"unjoined_in_shared_job", m_unjoined_in_shared_job, 2,
     "shared job: the job returned with a clove_fork that was never joined", 0, 0},
    {"typed_join_twice", m_typed_join_twice, 1,
     "clove_join_value: this future was already joined", 0, 0},
    {"typed_join_out_of_order", m_typed_join_out_of_order, 1,
     "clove_join_value: this future is not the most recent unjoined fork", 0, 0},
    {"fork_null_future", m_fork_null_future, 1, "clove_fork: the future is NULL", 0, 0},
    {"fork_null_task", m_fork_null_task, 1, "clove_fork: the task is NULL", 0, 0},
    {"fork_twice", m_fork_twice, 1,
     "clove_fork: this future is already forked and not yet joined", 0, 0},
    /* With workers, the first fork into an empty list is reserved (taken
     * out of the list): the check must know that too. A long heartbeat:
     * a future already handed to another worker is not recognised (the
     * check would have to read its lock-guarded state), and at 1 us a
     * beat may share it before the second fork. */
    {"fork_twice_2", m_fork_twice, 2,
     "clove_fork: this future is already forked and not yet joined", 0, 1000000},
    {"fork_twice_value", m_fork_twice_value, 1,
     "clove_fork: this future is already forked and not yet joined", 0, 0},
    {"fork_in_loop", m_fork_in_loop, 1,
     "clove_fork: this future is already forked and not yet joined", 0, 0},
    {"fork_twice_reserved", m_fork_twice_reserved, 2,
     "clove_fork: this future is already forked and not yet joined", 0, 1000000},
    {"join_value_of_fork_release", m_join_value_of_fork_release, 1,
     "clove_join_value: this future was forked with clove_fork (join it with clove_join)", 0,
     0},
    {"join_of_fork_value_release", m_join_of_fork_value_release, 1,
     "clove_join: this future was forked with clove_fork_value (join it with "
     "clove_join_value)",
     0, 0},
    {"spawn_after_return", m_spawn_after_return, 2,
     "clove_spawn: the function that received this scope has returned", 0, 0},
    {"spawn_other_task", m_spawn_other_task, 2,
     "clove_spawn: the task is not the one that received this scope", 2, 0},
    {"scope_null_fn", m_scope_null_fn, 1, "clove_scope_run: the task or fn is NULL", 0, 0},
    {"destroy_while_running", m_destroy_while_running, 2,
     "clove_pool_destroy: the pool is still running a clove_pool_run", 1, 0},
    /* A 1-thread pool counts its runs too (on the entry task). */
    {"destroy_while_running_1", m_destroy_while_running, 1,
     "clove_pool_destroy: the pool is still running a clove_pool_run", 1, 0},
    /* A thread that ran another task's job (helping, in a join wait)
     * left it by pthread_exit: that task's join would wait forever. */
#ifndef _WIN32 /* no pthread_exit there (test_robust.c) */
    {"exit_in_helped_job", robust_exit_in_helped_job, 2,
     "shared job: the thread running it exited (pthread_exit) before it returned", 1, 0},
#endif
};
#define NCASES (sizeof cases / sizeof cases[0])

int misuse_child_main(const char *name)
{
    test_watchdog(60); /* a misuse that is not caught must not hang the suite */
    for (size_t i = 0; i < NCASES; i++) {
        if (strcmp(cases[i].name, name) != 0)
            continue;
        const struct misuse_case *c = &cases[i];
        clove_pool *p = make_pool(c->threads, c->heartbeat_us ? c->heartbeat_us : 1);
        clove_pool *other = NULL;
        void *arg = NULL;
        if (c->arg_kind == 1)
            arg = p;
        if (c->arg_kind == 2) {
            other = make_pool(1, 1);
            arg = other;
        }
        int rc = clove_pool_run(p, c->fn, arg);
        fprintf(stderr, "misuse %s not detected: clove_pool_run returned %d\n", name, rc);
        return 3;
    }
    fprintf(stderr, "unknown misuse case %s\n", name);
    return 4;
}

static bool contains_any(const char *hay, const char *alternatives)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", alternatives);
    for (char *save = NULL, *alt = strtok_r(buf, "|", &save); alt;
         alt = strtok_r(NULL, "|", &save))
        if (strstr(hay, alt))
            return true;
    return false;
}

/* For a few cases whose call site is not a tail call, ask addr2line (when
 * installed) which function the reported site is in: it must be the test
 * function that made the misused call (or the job that misbehaved). */
static void check_site_function(const char *name, const char *err)
{
    static const struct {
        const char *name, *function;
    } sites[] = {
        {"join_zero_1", "m_join_zero"},
        {"fork_twice", "m_fork_twice"},
        {"unjoined_1", "m_unjoined"},
        {"unjoined_in_shared_job", "unjoining_job"},
    };
    const char *fn = NULL;
    for (size_t i = 0; i < sizeof sites / sizeof sites[0]; i++)
        if (strcmp(sites[i].name, name) == 0)
            fn = sites[i].function;
    if (fn == NULL || system("command -v addr2line >/dev/null 2>&1") != 0)
        return;
    const char *cmd = strstr(err, "addr2line -f -i -e ");
    ASSERT_MSG(cmd != NULL, "misuse %s: no addr2line hint in:\n%s", name, err);
    char line[600];
    size_t n = strcspn(cmd, "\n");
    ASSERT_LT_U(n, sizeof line - 40);
    memcpy(line, cmd, n);
    snprintf(line + n, sizeof line - n, " 2>/dev/null");
    FILE *f = popen(line, "r");
    ASSERT(f != NULL);
    /* Function and file lines alternate, innermost inline frame first
     * (clove_fork itself in a build with debug information). */
    char got[256], all[1024] = "";
    bool found = false;
    for (int k = 0; fgets(got, sizeof got, f); k++) {
        got[strcspn(got, "\n")] = 0;
        if (k % 2 == 0) {
            found = found || strcmp(got, fn) == 0;
            snprintf(all + strlen(all), sizeof all - strlen(all), "%s ", got);
        }
    }
    pclose(f);
    test_log("misuse %s: call site in %s\n", name, all);
    ASSERT_MSG(found, "misuse %s: call site resolves to \"%s\", expected %s", name, all, fn);
}

void test_misuse_aborts(void)
{
    for (size_t i = 0; i < NCASES; i++) {
        char *err = NULL;
        double t0 = now_s();
        int status = run_self_child(cases[i].name, &err);
        test_log("misuse %s: status 0x%x, %.2f s\n", cases[i].name, status, now_s() - t0);
        char how[64];
        child_describe(status, how, sizeof how);
        ASSERT_MSG(child_aborted(status), "misuse %s: child %s, expected an abort; its stderr:\n%s",
                   cases[i].name, how, err);
        ASSERT_CONTAINS(err, "clove: misuse in ");
        ASSERT_MSG(contains_any(err, cases[i].expect),
                   "misuse %s: expected \"%s\" in:\n---\n%s---", cases[i].name,
                   cases[i].expect, err);
        /* Every report names a call site in this executable. */
        ASSERT_CONTAINS(err, "clove:   call site: ");
#ifdef _WIN32
        ASSERT_CONTAINS(err, "clove_tests.exe+0x");
#else
        ASSERT_CONTAINS(err, "clove_tests+0x");
#endif
        check_site_function(cases[i].name, err);
        free(err);
    }
}

/*
 * A future that was taken by another worker and joined (clove_join returned
 * true), then joined again. The debug join names it (the first join left
 * the future pointing at CLOVE__JOINED), and so does the library's slow
 * path in every build (the record was left FREED): the message must say
 * "already joined", not something vaguer.
 */
void test_misuse_join_twice_taken_message(void)
{
    char *err = NULL;
    int status = run_self_child("join_twice_taken", &err);
    char how[64];
    child_describe(status, how, sizeof how);
    ASSERT_MSG(child_aborted(status), "child %s, expected an abort; its stderr:\n%s", how, err);
    ASSERT_CONTAINS(err, "clove: misuse in clove_join: this future was already joined");
    free(err);
}
