/* SPDX-License-Identifier: MIT */
/*
 * pool.c - pool lifecycle, worker threads, the heartbeat thread, and
 * clove_pool_run.
 *
 * Lock rules (the only lock is pool->lock; see internal.h for what it
 * guards):
 * - No user code runs under it and nothing sleeps while holding it.
 * - Wake-ups are issued after unlocking; they never dereference the woken
 *   task, so the task may already be gone (see wait.h).
 * - The heartbeat thread takes it once per interval, and only while some
 *   task is idle and some clove_pool_run is in progress (it sleeps
 *   otherwise, see heartbeat_main).
 */
#include "internal.h"
#include "wait.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

/* After this many heartbeat intervals with no clove_pool_run in progress
 * and none started, the heartbeat thread sleeps until the next run. Short
 * back-to-back runs therefore never pay for waking it, and an idle pool
 * costs about this many wake-ups before it goes quiet. (While runs are in
 * progress but no task is idle it sleeps at once: see heartbeat_main.) */
#define HB_GRACE_BEATS 4
/* The probe after a beat on a kick comes interval / HB_PROBE_DIV later:
 * the time a loop takes to answer (its chunks last interval/8). */
#define HB_PROBE_DIV 8
/* A clove_pool_run is beaten only once the heartbeat thread has known it
 * for interval / HB_RUN_AGE_DIV (see heartbeat_all). */
#define HB_RUN_AGE_DIV 4

/* Kinds of pass over the tasks (heartbeat_all). */
enum hb_pass {
    HB_PASS_BEAT,  /* steal from the unanswered, beat everyone old enough */
    HB_PASS_PROBE, /* steal from the unanswered, no new beat */
    HB_PASS_GATE,  /* beat only the runs first seen at `seen` or since */
    HB_PASS_STAMP  /* only note the runs not seen yet */
};

static _Thread_local clove_task *tls_current;

clove_task *clove__current(void) { return tls_current; }
void clove__set_current(clove_task *t) { tls_current = t; }

void clove__lock(clove_pool *p)
{
    if (pthread_mutex_lock(&p->lock) != 0)
        clove__misuse("pool lock", "pthread_mutex_lock failed (pool destroyed or corrupt?)",
                      NULL);
}

void clove__unlock(clove_pool *p)
{
    if (pthread_mutex_unlock(&p->lock) != 0)
        clove__misuse("pool lock", "pthread_mutex_unlock failed (pool destroyed or corrupt?)",
                      NULL);
}

/* ------------------------------------------------------------------------ */
/* Allocation wrappers (the fault hook sits here)                           */
/* ------------------------------------------------------------------------ */

static void *xcalloc(size_t n, size_t size)
{
    if (clove__fault_hit(CLOVE__FAULT_ALLOC))
        return NULL;
    return calloc(n, size);
}

static void *xaligned(size_t size)
{
    void *mem = NULL;
    if (clove__fault_hit(CLOVE__FAULT_ALLOC))
        return NULL;
    if (posix_memalign(&mem, CLOVE__CACHE_LINE, size) != 0)
        return NULL;
    memset(mem, 0, size);
    return mem;
}

/* ------------------------------------------------------------------------ */
/* Worker threads                                                           */
/* ------------------------------------------------------------------------ */

/* Name the calling thread (Linux: 15 characters at most). */
static void name_thread(const char *name)
{
#ifdef __linux__
    (void)pthread_setname_np(pthread_self(), name);
#else
    (void)name;
#endif
}

/* CLOVE_PIN_WORKERS: worker `index` to the (index mod m)-th of the m CPUs
 * of the creator's mask. Best effort. */
static void pin_worker(const clove_pool *p, unsigned index)
{
#ifdef CPU_COUNT
    int m = CPU_COUNT(&p->cpus);
    if (m <= 0)
        return;
    int want = (int)(index % (unsigned)m), seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &p->cpus))
            continue;
        if (seen++ == want) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            (void)pthread_setaffinity_np(pthread_self(), sizeof one, &one);
            return;
        }
    }
#else
    (void)p;
    (void)index;
#endif
}

static void *worker_main(void *arg)
{
    clove_task *t = arg;
    clove_pool *p = t->pool;
    char name[16];
    snprintf(name, sizeof name, "clove-%u", t->index);
    name_thread(name);
    if (p->flags & CLOVE_PIN_WORKERS)
        pin_worker(p, t->index);
    if (p->on_start)
        p->on_start(t->index, p->hook_arg);
    clove__set_current(t);
    clove__lock(p);
    for (;;) {
        if (atomic_load_explicit(&p->stopping, memory_order_relaxed))
            break;
        if (clove__run_one_locked(t))
            continue;
        clove__sleep_locked(t);
    }
    clove__unlock(p);
    clove__set_current(NULL);
    if (p->on_exit)
        p->on_exit(t->index, p->hook_arg);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Heartbeat thread                                                         */
/* ------------------------------------------------------------------------ */

/* Set the BEAT bit of every busy task, and share the reserve of each task
 * that left the previous beat unanswered (clove__steal_locked): its BEAT
 * bit is still set, no fork and no tick since (a long leaf, or a loop
 * chunk that overran). Only called when some task is idle: with nobody to
 * take a job, a heartbeat is pure cost. The BEAT stores are releases only
 * for the reserve's sake (a steal before them must be visible to an owner
 * that sees them, share.c); the flag itself carries no data.
 *
 * HB_PASS_PROBE: a second look shortly after a beat (heartbeat_main):
 * steal from the tasks that have not answered it yet, and store no new
 * BEAT. HB_PASS_GATE and HB_PASS_STAMP: see below.
 *
 * A clove_pool_run's task is skipped (neither beaten nor stolen from)
 * until this thread has known it for a quarter interval. Passes come once
 * per interval while runs go on, whenever the runs began, so without this
 * a pass landed in whichever short run was in progress: short runs issued
 * back to back (each a few microseconds) paid one share, one wake-up and
 * one reclaim per interval for nothing, 7 % on the 1000-node tree at 2
 * threads (bench/README.md). The first pass that finds a run stamps it
 * (run_ns = now) and skips it; if that pass was a beat, heartbeat_main
 * makes a GATE pass a quarter interval later, which beats the runs it
 * stamped that are still in progress; other passes treat a run stamped at
 * least a quarter interval ago like any task. So a run shorter than a
 * quarter interval is never shared, and a longer one gets its first beat
 * a quarter to one and a quarter intervals after it began (an interval
 * after it, when its start woke this thread: heartbeat_main stamps it on
 * waking). clove_pool_run reads no clock for this (a clock read cost each
 * run 35 ns here, 1.7 % of a 1000-node run). A run on the entry task is
 * new when entry_gen holds an odd value this thread has not seen
 * (entry_seen): its run_ns is reset then. Workers are not gated: they
 * are busy only with work shared from a run old enough.
 *
 * Returns the pass's time if it stamped a run (for the GATE pass to come),
 * else 0. */
static uint64_t heartbeat_all(clove_pool *p, enum hb_pass pass, uint64_t seen)
{
    /* Never 0: run_ns == 0 means "not seen yet". */
    const uint64_t now = clove__now_ns() | 1;
    const uint64_t min_age = (uint64_t)p->heartbeat_us * 1000u / HB_RUN_AGE_DIV;
    uint64_t stamped = 0;
    /* Tasks taken off the idle list to run a reserve shared here; woken
     * after unlocking. At most one per idle task, so bounded by threads
     * plus the registered tasks; a small batch, flushed when full. */
    clove_task *wake[16];
    unsigned nwake = 0;
    clove__lock(p);
    clove_task *w = p->workers, *end = p->workers + p->nworkers;
    if (pass == HB_PASS_GATE || pass == HB_PASS_STAMP)
        w = end; /* runs only */
    /* The entry task, while a run uses it: a new run (a new odd value)
     * has not been seen yet. */
    uint32_t gen = atomic_load_explicit(&p->entry_gen, memory_order_acquire);
    clove_task *entry = (gen & 1) ? &p->entry : NULL;
    if (entry != NULL && gen != p->entry_seen) {
        p->entry_seen = gen;
        entry->run_ns = 0;
    }
    for (clove_task *r = p->registered;;) {
        clove_task *t;
        if (w < end) {
            t = w++;
        } else if (entry != NULL || r != NULL) {
            if (entry != NULL)
                t = entry, entry = NULL;
            else
                t = r, r = r->reg_next;
            if (t->run_ns == 0) {
                t->run_ns = now; /* first seen: skipped this time */
                stamped = now;
                continue;
            }
            if (pass == HB_PASS_STAMP)
                continue;
            /* Seen a quarter interval ago at least; a GATE pass only
             * beats those first seen at `seen` or since (the others
             * had their beat at the pass before). */
            if (now - t->run_ns < min_age || (pass == HB_PASS_GATE && t->run_ns < seen))
                continue;
        } else {
            break;
        }
        if (t->idle)
            continue;
        /* BEAT still set: no fork and no tick since the last beat. Share
         * its reserve for it. (A task that answers shares by itself, its
         * reserve first, and spares this thread the wake-up calls.) A GATE
         * pass only beats: its runs have not been beaten yet. */
        if (pass != HB_PASS_GATE &&
            (atomic_load_explicit(&t->heartbeat, memory_order_relaxed) & CLOVE__HB_BEAT)) {
            clove_task *k = clove__steal_locked(t);
            if (k != NULL) {
                wake[nwake++] = k;
                if (nwake == sizeof wake / sizeof wake[0]) {
                    clove__unlock(p);
                    for (unsigned i = 0; i < nwake; i++)
                        clove__wake_one(&wake[i]->sleep);
                    nwake = 0;
                    clove__lock(p);
                    /* The lists may have changed: the rest waits a beat. */
                    break;
                }
            }
        }
        if (pass != HB_PASS_PROBE)
            atomic_store_explicit(&t->heartbeat, CLOVE__HB_BEAT, memory_order_release);
    }
    clove__unlock(p);
    for (unsigned i = 0; i < nwake; i++)
        clove__wake_one(&wake[i]->sleep);
    return stamped;
}

/* Whether a heartbeat can do any good: some clove_pool_run is in progress
 * (so some task may have queued work) and some task is idle (so a shared
 * job has a taker). */
static bool hb_useful(clove_pool *p)
{
    return (uint32_t)clove__runs_now(p) != 0 && atomic_load(&p->idle_count) != 0;
}

/*
 * Sleep until a heartbeat may be useful again or the pool stops.
 * Dekker handshake with clove__hb_kick: we store hb_asleep = 1, then read
 * the runs (clove__runs_now: runs and entry_gen) and idle_count; a kicker
 * first changes one of those (run_enter, clove_pool_run's compare-and-swap
 * of entry_gen, idle_push_locked), then reads hb_asleep. All these
 * accesses are seq_cst, so at least one side
 * sees the other's write: either we stay up, or the kicker wakes us.
 * Model: HB in model/clove.pml, LTL lostkick; BUG_HB_NO_RECHECK is the race
 * this handshake prevents.
 */
static void hb_sleep(clove_pool *p)
{
    atomic_store(&p->hb_asleep, 1);
    while (!atomic_load(&p->stopping) && !hb_useful(p)) {
        clove__wait(&p->hb_asleep, 1, 0);
        atomic_store(&p->hb_asleep, 1);
    }
    atomic_store(&p->hb_asleep, 0);
}

void clove__hb_kick(clove_pool *p)
{
    if (atomic_load(&p->hb_asleep) && atomic_exchange(&p->hb_asleep, 0))
        clove__wake_one(&p->hb_asleep);
}

/* A pass stamped runs it saw for the first time at `seen`, `spent` ns
 * ago: beat those still in progress a quarter interval after `seen` (the
 * GATE pass of heartbeat_all; runs stamped since wait for the next pass).
 * Returns the time waited, which the caller takes off its next interval,
 * so that beats keep coming once per interval. */
static uint64_t gate(clove_pool *p, uint64_t seen, uint64_t spent)
{
    const uint64_t quarter = (uint64_t)p->heartbeat_us * 1000u / HB_RUN_AGE_DIV;
    uint64_t wait = quarter > spent ? quarter - spent : 0;
    clove__wait(&p->stopping, 0, wait);
    if (hb_useful(p))
        (void)heartbeat_all(p, HB_PASS_GATE, seen);
    return wait;
}

/* Model: HB in model/clove.pml; PROGRESS_BEAT checks it never spins
 * without a useful beat. */
static void *heartbeat_main(void *arg)
{
    clove_pool *p = arg;
    const uint64_t interval_ns = (uint64_t)p->heartbeat_us * 1000u;
    name_thread("clove-hb");
#if defined(__linux__) && defined(PR_SET_TIMERSLACK)
    /* The default 50 us timer slack would stretch a 100 us interval by half;
     * ask for a tenth of the interval instead. */
    (void)prctl(PR_SET_TIMERSLACK, (unsigned long)(interval_ns / 10 + 1), 0, 0, 0);
#endif
    uint64_t last_runs = clove__runs_now(p);
    unsigned quiet = 0;
    uint64_t last_beat = 0; /* clove__now_ns() of the last heartbeat_all */
    uint64_t waited = 0;    /* of the next interval, already spent on a gate */
    while (!atomic_load_explicit(&p->stopping, memory_order_acquire)) {
        uint64_t runs = clove__runs_now(p);
        bool active = (uint32_t)runs != 0 || runs != last_runs;
        last_runs = runs;
        quiet = active ? 0 : quiet + 1;
        /* Two reasons to sleep: no run for a few intervals (an idle pool
         * costs no wake-ups), or runs but no idle task (every worker busy:
         * a heartbeat would be pure cost). The first task to go idle, or
         * the next run, kicks us awake. */
        bool busy = active && atomic_load_explicit(&p->idle_count, memory_order_relaxed) == 0;
        if (quiet >= HB_GRACE_BEATS || busy) {
            hb_sleep(p);
            quiet = 0;
            uint64_t now_runs = clove__runs_now(p);
            bool began = (now_runs >> 32) != (last_runs >> 32);
            last_runs = now_runs;
            /* A run began: its first beat an interval from now (so a run
             * shorter than an interval wakes nobody). Stamp it now, so
             * that the pass an interval from now finds it old enough. */
            if (!busy || began) {
                if (began)
                    (void)heartbeat_all(p, HB_PASS_STAMP, 0);
                waited = 0;
                continue;
            }
            /* Every task was busy and one went idle during the run: it
             * waits for work that only a beat can hand out. Beat now, not
             * an interval from now - but never sooner than an interval
             * after the previous beat (beats stay at most one per
             * interval) - and look again an eighth of an interval later:
             * a task that has not answered by then (no fork, no tick: a
             * long leaf, or a loop chunk that overran) has its reserve
             * shared for it then, not a whole interval later. */
            uint64_t since = clove__now_ns() - last_beat;
            if (since < interval_ns)
                clove__wait(&p->stopping, 0, interval_ns - since);
            waited = 0;
            if (!hb_useful(p))
                continue;
            uint64_t seen = heartbeat_all(p, HB_PASS_BEAT, 0);
            last_beat = clove__now_ns();
            clove__wait(&p->stopping, 0, interval_ns / HB_PROBE_DIV);
            if (hb_useful(p)) {
                uint64_t probe_seen = heartbeat_all(p, HB_PASS_PROBE, 0);
                if (seen == 0)
                    seen = probe_seen;
            }
            if (seen != 0)
                waited = gate(p, seen, interval_ns / HB_PROBE_DIV);
            continue;
        }
        /* Sleep one interval (less what a gate took of it); destroy wakes
         * us early through stopping. */
        clove__wait(&p->stopping, 0, interval_ns - waited);
        waited = 0;
        if (hb_useful(p)) {
            uint64_t seen = heartbeat_all(p, HB_PASS_BEAT, 0);
            last_beat = clove__now_ns();
            if (seen != 0)
                waited = gate(p, seen, 0);
        }
    }
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
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return (unsigned)n;
    }
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    if (n > (long)CLOVE_MAX_THREADS)
        return CLOVE_MAX_THREADS;
    return (unsigned)n;
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
        t->idle_next = woken; /* reuse the link to remember whom to wake */
        woken = t;
    }
    clove__unlock(p);
    while (woken) {
        clove_task *next = woken->idle_next;
        woken->idle_next = NULL;
        clove__wake_one(&woken->sleep);
        woken = next;
    }
    if (hb_started) {
        clove__wake_all(&p->stopping);
        atomic_store(&p->hb_asleep, 0);
        clove__wake_all(&p->hb_asleep);
        pthread_join(p->hb_thread, NULL);
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(p->threads[i], NULL);
}

/* Job stacks: workers own one each (their task's base), and so does the
 * entry task; a thread entering clove_pool_run while the entry task is in
 * use takes one from p->spare_jobs (lock held) or maps one. */
static struct clove__job *spare_pop_locked(clove_pool *p)
{
    struct clove__job *j = p->spare_jobs;
    if (j != NULL)
        p->spare_jobs = j->arg;
    return j;
}

static void spare_push_locked(clove_pool *p, struct clove__job *j)
{
    j->arg = p->spare_jobs;
    p->spare_jobs = j;
}

static void free_pool(clove_pool *p)
{
    struct clove__job *j;
    while ((j = spare_pop_locked(p)) != NULL)
        clove__jobs_unmap(j, p->job_depth);
    if (p->entry.base)
        clove__jobs_unmap(p->entry.base, p->job_depth);
    if (p->workers)
        for (unsigned i = 0; i < p->nworkers; i++)
            clove__jobs_unmap(p->workers[i].base, p->job_depth);
    clove__stats_fini(p, false);
    free(p->ring);
    free(p->threads);
    free(p->workers);
    free(p);
}

static int start_thread(pthread_t *th, const pthread_attr_t *attr,
                        void *(*fn)(void *), void *arg)
{
    if (clove__fault_hit(CLOVE__FAULT_THREAD))
        return EAGAIN;
    int rc = pthread_create(th, attr, fn, arg);
    return rc == 0 ? 0 : (rc == EPERM || rc == EINVAL ? EAGAIN : rc);
}

/* clove_pool_create failed after initialising the lock: undo everything
 * (threads are stopped by the caller) and return rc. */
static int create_failed(clove_pool *p, int rc)
{
    pthread_mutex_destroy(&p->lock);
    free_pool(p);
    return rc;
}

/* sizeof(clove_config) in version 0.1: the smallest config_size taken,
 * and the layout that the function clove_pool_create (not the macro)
 * reads. Fields added later go after trace_path. */
#define CONFIG_SIZE_0_1 (offsetof(clove_config, trace_path) + sizeof(const char *))
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
        (config->flags & ~CLOVE_PIN_WORKERS) != 0)
        return EINVAL;
    long env = config->threads ? 0 : env_threads();
    if (env < 0)
        return EINVAL;

    if (clove__wait_init() != 0)
        return ENOMEM;
    unsigned nthreads = config->threads ? config->threads
                        : env ? (unsigned)env : default_threads();
    unsigned hb = config->heartbeat_us ? config->heartbeat_us : CLOVE_DEFAULT_HEARTBEAT_US;

    clove_pool *p = xaligned(sizeof *p);
    if (p == NULL)
        return ENOMEM;
    p->nthreads = nthreads;
    p->heartbeat_us = hb;
    p->nworkers = nthreads - 1;
    p->flags = config->flags;
    p->on_start = config->on_thread_start;
    p->on_exit = config->on_thread_exit;
    p->hook_arg = config->hook_arg;
    p->job_depth = CLOVE_JOB_STACK_DEPTH;
    if (config->stack_size / sizeof(struct clove__job) > p->job_depth)
        p->job_depth = config->stack_size / sizeof(struct clove__job);
#ifdef CPU_COUNT
    CPU_ZERO(&p->cpus);
    if ((p->flags & CLOVE_PIN_WORKERS) &&
        pthread_getaffinity_np(pthread_self(), sizeof p->cpus, &p->cpus) != 0)
        CPU_ZERO(&p->cpus);
#endif
    if (clove__fault_hit(CLOVE__FAULT_SYNC) || pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        return ENOMEM;
    }
    const char *trace = config->trace_path ? config->trace_path : getenv("CLOVE_TRACE");
    int src = clove__stats_init(p, trace, config->trace_path ? "config.trace_path" : "CLOVE_TRACE");
    if (src != 0) {
        pthread_mutex_destroy(&p->lock);
        free(p);
        return src;
    }
    /* The entry task's job stack, so that a pool used by one thread at a
     * time never maps one after creation. */
    struct clove__job *entry_jobs = clove__jobs_map(p->job_depth);
    if (entry_jobs == NULL)
        return create_failed(p, ENOMEM);
    clove__task_init(&p->entry, p, 0, entry_jobs);
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
    p->ring = xcalloc(cap, sizeof *p->ring);
    p->threads = xcalloc(p->nworkers, sizeof *p->threads);
    p->workers = xaligned((size_t)p->nworkers * sizeof *p->workers);
    if (!p->ring || !p->threads || !p->workers)
        return create_failed(p, ENOMEM);
    for (unsigned i = 0; i < p->nworkers; i++) {
        struct clove__job *jobs = clove__jobs_map(p->job_depth);
        if (jobs == NULL)
            return create_failed(p, ENOMEM);
        clove__task_init(&p->workers[i], p, i + 1, jobs);
    }

    pthread_attr_t attr, *attrp = NULL;
    int rc = 0;
    if (config->stack_size) {
        if (clove__fault_hit(CLOVE__FAULT_SYNC) || pthread_attr_init(&attr) != 0)
            return create_failed(p, ENOMEM);
        attrp = &attr;
        if (pthread_attr_setstacksize(&attr, config->stack_size) != 0)
            rc = EINVAL;
    }

    unsigned started = 0;
    bool hb_started = false;
    if (rc == 0)
        rc = start_thread(&p->hb_thread, NULL, heartbeat_main, p);
    if (rc == 0) {
        hb_started = true;
        for (; started < p->nworkers; started++) {
            rc = start_thread(&p->threads[started], attrp, worker_main,
                              &p->workers[started]);
            if (rc != 0)
                break;
        }
    }
    if (attrp)
        pthread_attr_destroy(attrp);
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
    if ((uint32_t)clove__runs_now(p) != 0)
        clove__misuse("clove_pool_destroy", "the pool is still running a clove_pool_run",
                      CLOVE__CALLER());
    if (p->nworkers > 0)
        stop_threads(p, p->nworkers, true);
    pthread_mutex_destroy(&p->lock);
    clove__stats_fini(p, true);
    free_pool(p);
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
        for (const clove_task *r = p->registered; r; r = r->reg_next)
            if (r->index == want) {
                used = true;
                break;
            }
        if (!used)
            return want;
        want++;
    }
}

/* Run fn(t, arg) on t, the calling thread's task for this run. */
static void run_on(clove_task *t, clove_fn *fn, void *arg, clove_task *outer)
{
    clove__set_current(t);
    uint64_t t0 = t->slot->trace ? clove__now_ns() : 0;
    fn(t, arg);
    if (t->slot->trace)
        clove__trace_write(t->slot->trace, CLOVE__EV_RUN, t0, clove__now_ns());
    if (t->top != t->base || t->nshared != 0)
        clove__misuse("clove_pool_run", "fn returned with a clove_fork that was never joined",
                      clove__code_addr(fn));
    clove__set_current(outer);
}

/* clove_pool_run on a task of its own, registered under the lock: when
 * another thread is inside on the entry task. */
static int run_registered(clove_pool *p, clove_fn *fn, void *arg, clove_task *outer)
{
    clove_task t;
    struct clove__slot own; /* counters when the index is >= nthreads */
    clove__lock(p);
    struct clove__job *jobs = spare_pop_locked(p);
    if (jobs == NULL) {
        /* No spare: map one (not under the lock), which stays with the
         * pool's spares afterwards. */
        clove__unlock(p);
        jobs = clove__jobs_map(p->job_depth);
        if (jobs == NULL)
            return ENOMEM;
        clove__lock(p);
    }
    clove__task_init(&t, p, external_index_locked(p), jobs);
    if (t.slot == NULL) {
        for (int k = 0; k < CLOVE__NSTATS; k++)
            atomic_init(&own.c[k], 0);
        own.trace = NULL;
        t.slot = &own;
    }
    t.reg_next = p->registered;
    if (p->registered)
        p->registered->reg_prev = &t;
    p->registered = &t;
    clove__unlock(p);

    if (p->nworkers > 0)
        run_enter(p);
    run_on(&t, fn, arg, outer);
    if (p->nworkers > 0)
        run_leave(p);

    clove__lock(p);
    if (t.slot == &own)
        for (int k = 0; k < CLOVE__NSTATS; k++)
            p->overflow[k] += atomic_load_explicit(&own.c[k], memory_order_relaxed);
    if (t.reg_prev)
        t.reg_prev->reg_next = t.reg_next;
    else
        p->registered = t.reg_next;
    if (t.reg_next)
        t.reg_next->reg_prev = t.reg_prev;
    spare_push_locked(p, t.base);
    clove__unlock(p);
    return 0;
}

int clove_pool_run(clove_pool *p, clove_fn *fn, void *arg)
{
    if (p == NULL || fn == NULL)
        return EINVAL;

    clove_task *outer = clove__current();
    if (outer != NULL && outer->pool == p) {
        /* Already a worker of this pool: a nested call on the same task. */
        fn(outer, arg);
        return 0;
    }

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
        clove_task *t = &p->entry;
        clove__tsan_acquire(t);
        if (p->nworkers > 0) {
            atomic_store_explicit(&t->heartbeat, CLOVE__HB_ARM, memory_order_relaxed);
            clove__hb_kick(p);
        }
        run_on(t, fn, arg, outer);
        clove__tsan_release(t);
        atomic_store_explicit(&p->entry_gen, gen + 2, memory_order_release);
        return 0;
    }
    return run_registered(p, fn, arg, outer);
}
