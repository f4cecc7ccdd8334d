/* SPDX-License-Identifier: MIT */
/*
 * pool.c - pool lifecycle, worker threads, and clove_pool_run (the
 * heartbeat thread is heartbeat.c).
 *
 * Lock rules (the only lock is pool->lock; see internal.h for what it
 * guards):
 * - No user code runs under it and nothing sleeps while holding it.
 * - Wake-ups are issued after unlocking; they never dereference the woken
 *   task, so the task may already be gone (see wait.h).
 * - The heartbeat thread takes it once per interval, and only while some
 *   task is idle and some clove_pool_run is in progress (it sleeps
 *   otherwise, see heartbeat.c).
 */
#include "internal.h"
#include "wait.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define CLOVE__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CLOVE__ASAN 1
#endif
#endif
#ifdef CLOVE__ASAN
#include <sanitizer/asan_interface.h>
#endif

/* clove_current()'s thread-local (clove.h), exported; written only by
 * clove__set_current on its own thread. */
CLOVE__THREAD_LOCAL clove_task *clove__current_task;

clove_task *clove__current(void) { return clove__current_task; }

/* The thread pointer that clove.h's debug checks compare with
 * clove_task.thread; NULL where clove.h has none (they then call
 * clove__current()). */
static void *thread_pointer(void)
{
#ifdef CLOVE__THREAD_POINTER
    return CLOVE__THREAD_POINTER();
#else
    return NULL;
#endif
}

/* Invariant: t->thread is the thread pointer of thread X exactly while t
 * is X's current task, so that a debug check that finds it equal to its
 * own thread's knows t == clove__current() (a nested run of another pool
 * suspends the outer task: its thread is NULL until the run returns). */
void clove__set_current(clove_task *t)
{
    if (clove__current_task)
        clove__current_task->thread = NULL;
    clove__current_task = t;
    if (t)
        t->thread = thread_pointer();
}

void clove__lock(clove_pool *p)
{
    if (clove__mutex_lock(&p->lock) != 0)
        clove__misuse("pool lock", "locking it failed (pool destroyed or corrupt?)", NULL);
}

void clove__unlock(clove_pool *p)
{
    if (clove__mutex_unlock(&p->lock) != 0)
        clove__misuse("pool lock", "unlocking it failed (pool destroyed or corrupt?)", NULL);
}

/* ------------------------------------------------------------------------ */
/* Worker threads                                                           */
/* ------------------------------------------------------------------------ */

static void *worker_main(void *arg)
{
    clove_task *t = arg;
    clove_pool *p = t->pool;
    char name[16];
    snprintf(name, sizeof name, "clove-%u", t->index);
    clove__thread_name(name);
    /* CLOVE_PIN_WORKERS: worker i to the (i mod m)-th of the creator's m
     * CPUs (best effort). */
    if (p->flags & CLOVE_PIN_WORKERS)
        clove__cpus_pin(&p->cpus, t->index);
    if (p->on_start)
        p->on_start(t->index, p->hook_arg);
    clove__set_current(t);
    clove__lock(p);
    for (;;) {
        if (atomic_load_explicit(&p->stopping, memory_order_relaxed))
            break;
        if (clove__run_one_locked(t))
            continue;
        /* Ask the owner of the range it ran for more, without the lock. */
        if (clove__ask_locked(t))
            continue;
        /* Nothing to do: give back the job-stack pages that deep jobs
         * touched (not under the lock), then look again before sleeping. */
        if (clove__jobs_touched(t)) {
            clove__unlock(p);
            clove__jobs_trim(t->base, p->job_depth);
            clove__lock(p);
            continue;
        }
        /* Asleep, it may be handed a range, which it runs first. */
        clove__sleep_free_locked(t);
    }
    clove__unlock(p);
    clove__set_current(NULL);
    if (p->on_exit)
        p->on_exit(t->index, p->hook_arg);
    return NULL;
}

/* A clove_pool_run begins: count it (seq_cst: half of hb_sleep's
 * handshake), and kick the heartbeat thread if it sleeps. */
static void run_enter(clove_pool *p)
{
    atomic_fetch_add(&p->runs, ((uint64_t)1 << 32) + 1);
    clove__hb_kick(p);
}

static void run_leave(clove_pool *p)
{
    atomic_fetch_sub_explicit(&p->runs, 1, memory_order_relaxed);
}

/* ------------------------------------------------------------------------ */
/* Create and destroy                                                       */
/* ------------------------------------------------------------------------ */

/* CLOVE_THREADS, when set: 0 = not set, else the value; -1 (EINVAL)
 * when set to anything but a decimal 1 .. CLOVE_MAX_THREADS, after one
 * line on stderr that names the variable and the value refused. */
static long env_threads(void)
{
    const char *s = getenv("CLOVE_THREADS");
    if (s == NULL)
        return 0;
    long v = 0;
    const char *c = s;
    for (; *c; c++) {
        if (*c < '0' || *c > '9' || v > (long)CLOVE_MAX_THREADS)
            break;
        v = v * 10 + (*c - '0');
    }
    if (*s != 0 && *c == 0 && v >= 1 && v <= (long)CLOVE_MAX_THREADS)
        return v;
    fprintf(stderr,
            "clove: CLOVE_THREADS=\"%.64s\" refused: it must be a whole number from 1 to %u "
            "(clove_pool_create returns EINVAL)\n",
            s, CLOVE_MAX_THREADS);
    return -1;
}

static unsigned default_threads(void)
{
    unsigned n = clove__cpu_count();
    return n > CLOVE_MAX_THREADS ? CLOVE_MAX_THREADS : n;
}

/* Stop and join the first `started` workers and, if hb_started, the
 * heartbeat thread. Used by destroy and by create's unwinding. */
/* Model: MS_M5..MS_M8 in model/clove.pml. */
static void stop_threads(clove_pool *p, unsigned started, bool hb_started)
{
    clove__lock(p);
    /* seq_cst: hb_sleep reads it after its seq_cst store of hb_asleep. */
    atomic_store(&p->stopping, 1);
    clove_task *woken = NULL;
    while (p->idle_first) {
        clove_task *t = p->idle_first;
        clove__idle_remove_locked(t);
        clove__tk(t)->idle_next = woken; /* reuse the link to remember whom to wake */
        woken = t;
    }
    clove__unlock(p);
    while (woken) {
        clove_task *next = clove__tk(woken)->idle_next;
        clove__tk(woken)->idle_next = NULL;
        clove__wake_one(&clove__tk(woken)->sleep);
        woken = next;
    }
    if (hb_started) {
        clove__wake_all(&p->stopping);
        atomic_store(&p->hb_asleep, 0);
        clove__wake_all(&p->hb_asleep);
        clove__thread_join(p->hb_thread);
    }
    for (unsigned i = 0; i < started; i++)
        clove__thread_join(p->threads[i]);
}

/* A task of pool p with worker index `index` and job stack `jobs`:
 * nothing queued, reserved or shared, awake, not registered. */
void clove__task_init(clove_task *t, clove_pool *p, uint32_t index, struct clove__job *jobs)
{
    t->top = jobs;
    atomic_init(&t->heartbeat, 0);
    t->pool = p;
    t->bottom = jobs;
    t->base = jobs;
    t->limit = jobs + p->job_depth;
    clove__tk(t)->reg_prev = clove__tk(t)->reg_next = NULL;
    clove__tk(t)->idle_prev = clove__tk(t)->idle_next = NULL;
    clove__tk(t)->waiting_on = NULL;
    clove__tk(t)->mail = (struct clove__entry){NULL, NULL, 0, 0};
    /* Not asker and answer: a worker may still be asking this task from
     * an earlier run (share.c, "Direct requests"); they start zeroed. */
    clove__tk(t)->ask_to = NULL;
    atomic_init(&clove__tk(t)->sleep, CLOVE__SLEEP_WOKEN);
    clove__tk(t)->idle = 0;
    clove__tk(t)->noffered = 0;
    clove__tk(t)->batch_n = 1;
    t->index = index;
    atomic_init(&clove__tk(t)->reserve, NULL);
    atomic_init(&clove__tk(t)->stolen_ns, 0);
    clove__tk(t)->run_ns = 0;
    clove__tk(t)->own_reserve = NULL;
    clove__tk(t)->run_ctx = NULL;
    clove__tk(t)->run_shared = false;
    clove__tk(t)->nest = 0;
    t->thread = NULL;
    /* Armed: the first fork reserves (pools with workers only; without,
     * there is nobody to share with and nothing of this happens). */
    if (p->nworkers > 0)
        atomic_store_explicit(&t->heartbeat, CLOVE__HB_ARM, memory_order_relaxed);
    /* A new run on t (its memory starts zeroed; a task's struct is
     * initialised again for each run it serves, never for a worker). Odd,
     * as the entry task's (entry_gen), so that every tag made of it is
     * nonzero (CLOVE__HB_GEN_SHIFT). */
    atomic_store_explicit(&clove__tk(t)->run_gen,
                          (atomic_load_explicit(&clove__tk(t)->run_gen, memory_order_relaxed) | 1u) + 2u,
                          memory_order_relaxed);
    /* Threads entering clove_pool_run with an index >= nthreads get a
     * slot of their own from clove_pool_run. */
    clove__tk(t)->slot = index < p->nthreads ? &p->slots[index] : NULL;
}

/* Tasks of threads entering clove_pool_run while the entry task is in
 * use: each with its job stack, taken from p->spare_tasks (lock held) or
 * allocated, and given back there when the run ends. They live in the
 * pool's memory, never on the entering thread's stack, so that a thread
 * that never comes back (longjmp out of fn) leaves nothing on a stack that
 * the pool would read after the stack is reused. */
static struct clove__extern *spare_pop_locked(clove_pool *p)
{
    struct clove__extern *x = p->spare_tasks;
    if (x != NULL)
        p->spare_tasks = x->next_spare;
    return x;
}

static void spare_push_locked(clove_pool *p, struct clove__extern *x)
{
    x->next_spare = p->spare_tasks;
    p->spare_tasks = x;
}

static void free_pool(clove_pool *p)
{
    struct clove__extern *x;
    while ((x = spare_pop_locked(p)) != NULL) {
        clove__jobs_unmap(x->task.pub.base, p->job_depth);
        free(x);
    }
    if (p->entry.pub.base)
        clove__jobs_unmap(p->entry.pub.base, p->job_depth);
    if (p->workers)
        for (unsigned i = 0; i < p->nworkers; i++)
            clove__jobs_unmap(p->workers[i].pub.base, p->job_depth);
    clove__stats_fini(p, false);
    free(p->ring);
    free(p->threads);
    clove__aligned_free(p->workers);
    clove__aligned_free(p);
}

static int start_thread(clove__thread *th, size_t stack_size, void *(*fn)(void *), void *arg)
{
    if (clove__fault_hit(CLOVE__FAULT_THREAD))
        return EAGAIN;
    return clove__thread_start(th, stack_size, fn, arg);
}

/* clove_pool_create failed after initialising the lock: undo everything
 * (threads are stopped by the caller) and return rc. */
static int create_failed(clove_pool *p, int rc)
{
    clove__mutex_destroy(&p->lock);
    free_pool(p);
    return rc;
}

/* sizeof(clove_config) in version 0.1: the smallest config_size taken,
 * and the layout that the function clove_pool_create (not the macro)
 * reads. Fields added later go after trace_path. */
#define CONFIG_SIZE_0_1 (offsetof(clove_config, trace_path) + sizeof(const char *))

/* The longest an idle task watches for work before it sleeps (share.c,
 * clove__sleep_locked): a heartbeat interval, but no more than this. */
#define SPIN_MAX_US 100u
_Static_assert(sizeof(clove_config) >= CONFIG_SIZE_0_1, "clove_config only grows");

int (clove_pool_create)(clove_pool **out, const clove_config *config)
{
    return clove_pool_create_sized(out, config, CONFIG_SIZE_0_1);
}

int clove_pool_create_sized(clove_pool **out, const clove_config *user, size_t size)
{
    /* The caller's config in this library's layout: what it lacks is 0. */
    clove_config cfg = {0};
    const clove_config *config = &cfg;
    if (out == NULL)
        return EINVAL;
    if (user != NULL) {
        if (size < CONFIG_SIZE_0_1)
            return EINVAL;
        memcpy(&cfg, user, size < sizeof cfg ? size : sizeof cfg);
        for (size_t i = sizeof cfg; i < size; i++)
            if (((const unsigned char *)user)[i] != 0) {
                fprintf(stderr,
                        "clove: clove_pool_create: the config sets fields that this "
                        "library (clove %s) does not know; the program was built "
                        "against a newer clove.h (returns EINVAL)\n",
                        clove_version_string());
                return EINVAL;
            }
    }
    if (config->threads > CLOVE_MAX_THREADS ||
        config->heartbeat_us > CLOVE_MAX_HEARTBEAT_US ||
        (config->stack_size != 0 && config->stack_size < 65536) ||
        (config->flags & ~(CLOVE_PIN_WORKERS | CLOVE_NO_SPIN)) != 0)
        return EINVAL;
    long env = config->threads ? 0 : env_threads();
    if (env < 0)
        return EINVAL;

    if (clove__wait_init() != 0)
        return ENOMEM;
    unsigned nthreads = config->threads ? config->threads
                        : env ? (unsigned)env : default_threads();
    unsigned hb = config->heartbeat_us ? config->heartbeat_us : CLOVE_DEFAULT_HEARTBEAT_US;

    clove_pool *p = clove__aligned_zalloc(sizeof *p);
    if (p == NULL)
        return ENOMEM;
    p->nthreads = nthreads;
    p->heartbeat_us = hb;
    /* An idle task watches for work for one interval (at most SPIN_MAX_US)
     * before it sleeps, unless told not to or the pool's threads outnumber
     * the CPUs: a spinning thread would then hold a CPU that a thread
     * with work waits for. */
    p->spin_ns = (config->flags & CLOVE_NO_SPIN) || nthreads > clove__cpu_count()
                     ? 0
                     : (uint64_t)(hb < SPIN_MAX_US ? hb : SPIN_MAX_US) * 1000u;
    p->nworkers = nthreads - 1;
    p->flags = config->flags;
    p->on_start = config->on_thread_start;
    p->on_exit = config->on_thread_exit;
    p->hook_arg = config->hook_arg;
    p->job_depth = CLOVE_JOB_STACK_DEPTH;
    if (config->stack_size / sizeof(struct clove__job) > p->job_depth)
        p->job_depth = config->stack_size / sizeof(struct clove__job);
    p->jobs_keep = clove__jobs_keep(p->job_depth);
    if (p->flags & CLOVE_PIN_WORKERS)
        clove__cpus_get(&p->cpus);
    if (clove__fault_hit(CLOVE__FAULT_SYNC) || clove__mutex_init(&p->lock) != 0) {
        clove__aligned_free(p);
        return ENOMEM;
    }
    const char *trace = config->trace_path ? config->trace_path : getenv("CLOVE_TRACE");
    int src = clove__stats_init(p, trace, config->trace_path ? "config.trace_path" : "CLOVE_TRACE");
    if (src != 0) {
        clove__mutex_destroy(&p->lock);
        clove__aligned_free(p);
        return src;
    }
    /* The entry task's job stack, so that a pool used by one thread at a
     * time never maps one after creation. */
    struct clove__job *entry_jobs = clove__jobs_map(p->job_depth);
    if (entry_jobs == NULL)
        return create_failed(p, ENOMEM);
    clove__task_init(&p->entry.pub, p, 0, entry_jobs);
    if (p->nworkers == 0) {
        *out = p;
        return 0;
    }

    /* Room for a few shared jobs per task at once; external tasks share
     * the slack. A full ring only means a heartbeat shares nothing. */
    unsigned cap = 8;
    while (cap < 4 * nthreads)
        cap *= 2;
    p->ring_cap = cap;
    p->ring = clove__calloc(cap, sizeof *p->ring);
    p->threads = clove__calloc(p->nworkers, sizeof *p->threads);
    p->workers = clove__aligned_zalloc((size_t)p->nworkers * sizeof *p->workers);
    if (!p->ring || !p->threads || !p->workers)
        return create_failed(p, ENOMEM);
    for (unsigned i = 0; i < p->nworkers; i++) {
        struct clove__job *jobs = clove__jobs_map(p->job_depth);
        if (jobs == NULL)
            return create_failed(p, ENOMEM);
        clove__task_init(&p->workers[i].pub, p, i + 1, jobs);
    }

    unsigned started = 0;
    bool hb_started = false;
    int rc = start_thread(&p->hb_thread, 0, clove__heartbeat_main, p);
    if (rc == 0) {
        hb_started = true;
        for (; started < p->nworkers; started++) {
            rc = start_thread(&p->threads[started], config->stack_size, worker_main,
                              &p->workers[started].pub);
            if (rc != 0)
                break;
        }
    }
    if (rc != 0) {
        stop_threads(p, started, hb_started);
        return create_failed(p, rc);
    }
    *out = p;
    return 0;
}

void clove_pool_destroy(clove_pool *p)
{
    if (p == NULL)
        return;
    /* A run left by longjmp stays in progress (registered, or on the
     * entry task) and is reported here too. */
    if ((uint32_t)clove__runs_now(p) != 0 || p->registered != NULL)
        clove__misuse("clove_pool_destroy", "the pool is still running a clove_pool_run",
                      CLOVE__CALLER());
    /* Joining the threads is no cancellation point: a cancellation
     * pending on the caller acts after the pool is gone. */
    int cancel_state = clove__cancel_off();
    if (p->nworkers > 0)
        stop_threads(p, p->nworkers, true);
    clove__mutex_destroy(&p->lock);
    clove__stats_fini(p, true);
    free_pool(p);
    clove__cancel_restore(cancel_state);
}

unsigned clove_pool_threads(const clove_pool *p)
{
    return p->nthreads;
}

/* ------------------------------------------------------------------------ */
/* Entering the pool                                                        */
/* ------------------------------------------------------------------------ */

/* The worker index of a thread entering clove_pool_run on a task of its
 * own (see clove_worker_index in clove.h): the lowest of nthreads,
 * nthreads + 1, ... that no registered task has (0 is the entry task's).
 * Linear in the number of threads inside clove_pool_run at once, squared
 * at worst: they are few, and entering is the cold path. Lock held. */
static uint32_t external_index_locked(const clove_pool *p)
{
    uint32_t want = p->nthreads;
    for (;;) {
        bool used = false;
        for (const clove_task *r = p->registered; r; r = clove__tk(r)->reg_next)
            if (r->index == want) {
                used = true;
                break;
            }
        if (!used)
            return want;
        want++;
    }
}

/*
 * A clove_pool_run in progress, in its frame: what it needs to end, also
 * when it ends without returning (run_abandoned). Its task points to it
 * (run_ctx), which is how the next entry on the thread tells a run still
 * in progress from one that was left by longjmp (check_not_left).
 */
#define RUN_MAGIC ((uintptr_t)0xC10E5EA7u)
struct run_ctx {
    uintptr_t magic; /* RUN_MAGIC while the run is in progress */
    clove_pool *pool;
    clove_task *task;  /* this run's */
    clove_task *outer; /* the thread's current task before it */
    uint32_t gen;      /* the entry task's odd entry_gen (registered: 0) */
    struct clove__slot *own; /* a registered task's counters when its
                              * index is >= nthreads, else NULL */
    clove_fn *fn;            /* the run's function and argument */
    void *arg;
};

/* The next entry on a thread whose current task is `outer` (non-NULL),
 * from a clove_pool_run whose frame is at `frame` (NULL: unknown): outer's
 * run must still be in progress, with this call nested in it. A run left
 * by longjmp (or by anything else that skips its end) leaves its task
 * current: the thread is then no longer below that run's frame (stacks
 * grow down on every target this supports), or the frame no longer holds
 * the run. Costs a few loads, only when runs nest. */
static void check_not_left(clove_task *outer, const void *frame, const void *site)
{
    const struct run_ctx *c = clove__tk(outer)->run_ctx;
    if (c == NULL) /* a pool worker's task: always current on its thread */
        return;
    if ((frame != NULL && (uintptr_t)frame >= (uintptr_t)c) || c->magic != RUN_MAGIC ||
        c->task != outer)
        clove__misuse("clove_pool_run",
                      "an earlier clove_pool_run on this thread was left without returning "
                      "(longjmp out of fn or a job?): its task is still the thread's current one",
                      site);
}

/* Stack room that run_abandoned may use for its own frames (see there). */
#define ABANDON_ROOM 4096

/*
 * Run fn(t, arg) on c->task, the calling thread's current task for this
 * run, and check that it left nothing unjoined. Not inlined: its frame lies between
 * clove_pool_run's and fn's and holds ABANDON_ROOM bytes, so that
 * run_abandoned, which runs in clove_pool_run's frame when the thread is
 * cancelled inside fn, can call what it needs without writing over fn's
 * frame (where argument blocks of jobs still running elsewhere lie) while
 * it waits for those jobs.
 */
#if defined(CLOVE__SELF_TSAN) || defined(CLOVE__ASAN)
/* The sanitizers' instrumentation would give this frame a landing pad
 * (ThreadSanitizer's function exit, AddressSanitizer's unpoisoning), and
 * the unwinder resumes from a landing pad on the stack below its frame:
 * over fn's frames, while jobs that fn forked may still use them. Left
 * uninstrumented, it has none, as in the plain build. */
__attribute__((no_sanitize("thread", "address")))
#endif
static CLOVE__NOINLINE void run_on(void *ctx)
{
    struct run_ctx *c = ctx;
    clove_fn *fn = c->fn;
    void *arg = c->arg;
#if defined(__GNUC__) || defined(__clang__)
    char room[ABANDON_ROOM];
    __asm__ __volatile__("" : : "r"(room) : "memory"); /* keeps it in the frame */
#else
    volatile char room[ABANDON_ROOM];
    room[0] = 0;
    (void)room[0];
#endif
    clove_task *t = c->task;
    uint64_t t0 = clove__tk(t)->slot->trace ? clove__now_ns() : 0;
    fn(t, arg);
    if (clove__tk(t)->slot->trace)
        clove__trace_write(clove__tk(t)->slot->trace, CLOVE__EV_RUN, t0, clove__now_ns());
    if (t->top != t->base || clove__tk(t)->noffered != 0)
        clove__misuse("clove_pool_run", "fn returned with a clove_fork that was never joined",
                      clove__code_addr(fn));
}

/* A task of its own for this run, registered under the lock: when
 * another thread is inside on the entry task. Returns 0 or ENOMEM. */
static int run_register(clove_pool *p, struct run_ctx *c)
{
    clove__lock(p);
    struct clove__extern *x = spare_pop_locked(p);
    if (x == NULL) {
        /* No spare: allocate one (not under the lock), which stays with
         * the pool's spares afterwards. */
        clove__unlock(p);
        x = clove__aligned_zalloc(sizeof *x);
        struct clove__job *jobs = x ? clove__jobs_map(p->job_depth) : NULL;
        if (jobs == NULL) {
            free(x);
            return ENOMEM;
        }
        x->task.pub.base = jobs;
        clove__lock(p);
    }
    clove_task *t = &x->task.pub;
    clove__task_init(t, p, external_index_locked(p), t->base);
    if (clove__tk(t)->slot == NULL) {
        for (int k = 0; k < CLOVE__NSTATS; k++)
            atomic_init(&x->own.c[k], 0);
        x->own.trace = NULL;
        clove__tk(t)->slot = &x->own;
        c->own = &x->own;
    }
    clove__tk(t)->reg_next = p->registered;
    if (p->registered)
        clove__tk(p->registered)->reg_prev = t;
    p->registered = t;
    clove__unlock(p);
    c->task = t;
    if (p->nworkers > 0)
        run_enter(p);
    return 0;
}

/* The end of c's run, returned or abandoned: give its task back. */
static void run_end(struct run_ctx *c)
{
    clove_pool *p = c->pool;
    clove_task *t = c->task;
    c->magic = 0;
    clove__tk(t)->run_ctx = NULL;
    /* Nothing is queued or offered: give back what a deep run touched. */
    if (clove__jobs_touched(t))
        clove__jobs_trim(t->base, p->job_depth);
    if (t == &p->entry.pub) {
        clove__tsan_release(t);
        atomic_store_explicit(&p->entry_gen, c->gen + 1, memory_order_release);
        return;
    }
    if (p->nworkers > 0)
        run_leave(p);
    clove__lock(p);
    if (c->own != NULL)
        for (int k = 0; k < CLOVE__NSTATS; k++)
            p->overflow[k] += atomic_load_explicit(&c->own->c[k], memory_order_relaxed);
    if (clove__tk(t)->reg_prev)
        clove__tk(clove__tk(t)->reg_prev)->reg_next = clove__tk(t)->reg_next;
    else
        p->registered = clove__tk(t)->reg_next;
    if (clove__tk(t)->reg_next)
        clove__tk(clove__tk(t)->reg_next)->reg_prev = clove__tk(t)->reg_prev;
    spare_push_locked(p, (struct clove__extern *)(void *)t);
    clove__unlock(p);
}

/*
 * The thread leaves clove_pool_run without fn returning: pthread_cancel
 * acted at a cancellation point in fn (or in a fork that it ran itself),
 * or fn called pthread_exit. This is the cleanup handler of
 * clove_pool_run, run as the C library unwinds the thread: fn's frames
 * are left, but other workers may still be running jobs that fn forked,
 * writing into argument blocks in those frames. clove__task_abandon waits
 * for them (asleep: it runs no other job here) and drops the forks nobody
 * took; then the run ends as if fn had returned. Until then this stays
 * within the ABANDON_ROOM bytes of run_on's frame (a lock, a futex wait
 * or the portable backend's condition variable), above fn's. Jobs of
 * other tasks that the thread runs while it waits at a join are not
 * cancellable (clove__run_one_locked), so a cancellation acts only in the
 * thread's own work, where it leaves its own forks behind.
 */
static void run_abandoned(void *arg)
{
    struct run_ctx *c = arg;
#ifdef CLOVE__ASAN
    /* The unwinding left AddressSanitizer's shadow of the frames it left
     * (run_on's, fn's) as it was, red zones included, and the frames
     * called from here reuse that memory: clear it, as its interceptors
     * of longjmp and __cxa_throw do. */
    char *frame = CLOVE__FRAME();
    __asan_unpoison_memory_region(frame - 2 * ABANDON_ROOM, 2 * ABANDON_ROOM);
#endif
    clove__task_abandon(c->task);
    clove__set_current(c->outer);
    run_end(c);
}

int clove_pool_run(clove_pool *p, clove_fn *fn, void *arg)
{
    if (p == NULL || fn == NULL)
        return EINVAL;

    clove_task *outer = clove__current();
    if (outer != NULL) {
        check_not_left(outer, CLOVE__FRAME(), CLOVE__CALLER());
        if (outer->pool == p) {
            /* Already a worker of this pool: a nested call on the same task. */
            fn(outer, arg);
            return 0;
        }
    }

    struct run_ctx c = {RUN_MAGIC, p, NULL, outer, 0, NULL, fn, arg};
    /* The entry task, if nobody uses it (p->entry_gen). The last run on
     * it left nothing queued, reserved or shared (run_on checks), so only
     * the heartbeat word needs setting: armed, as clove__task_init does.
     * A BEAT the heartbeat thread stores over it is as good (the handler
     * reserves on either). */
    uint32_t gen = atomic_load_explicit(&p->entry_gen, memory_order_relaxed);
    if ((gen & 1) == 0 &&
        atomic_compare_exchange_strong_explicit(&p->entry_gen, &gen, gen + 1,
                                                memory_order_seq_cst, memory_order_relaxed)) {
        /* Counted as a run by that (runs_now): the seq_cst exchange and
         * the kick's load are run_enter's half of hb_sleep's handshake. */
        clove_task *t = &p->entry.pub;
        c.task = t;
        c.gen = gen + 1;
        clove__tsan_acquire(t);
        if (p->nworkers > 0) {
            atomic_store_explicit(&t->heartbeat, CLOVE__HB_ARM, memory_order_relaxed);
            clove__tk(t)->batch_n = 1;
            clove__tk(t)->run_shared = false;
            /* The run's generation is its entry_gen: the heartbeat thread
             * reads that one, without the lock, and tags with it what it
             * stores for the run (clove__steal_locked). */
            atomic_store_explicit(&clove__tk(t)->run_gen, c.gen, memory_order_relaxed);
            clove__hb_kick(p);
        }
    } else if (run_register(p, &c) != 0) {
        return ENOMEM;
    }
    clove__tk(c.task)->run_ctx = &c;
    clove__set_current(c.task);
    /* run_abandoned, if the thread leaves fn without returning. */
    clove__call_with_cleanup(run_on, &c, run_abandoned, &c);
    clove__set_current(outer);
    run_end(&c);
    return 0;
}
