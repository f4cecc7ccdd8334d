/* SPDX-License-Identifier: MIT */
/*
 * clove.h - fine-grained fork/join parallelism with heartbeat scheduling.
 *
 * Overview
 * --------
 * A clove_pool owns worker threads. clove_pool_run() makes the calling thread
 * a worker and runs fn(t, arg); the clove_task *t it receives is that worker's
 * context and must be passed down explicitly to everything that forks.
 *
 * clove_fork() does not start anything: it records, on the task's job
 * stack, that fn(t, arg) *could* run on another worker, and leaves a handle
 * (a clove_future) in the caller's frame. clove_join() then asks whether
 * anyone took it. If nobody did (the common case), the caller runs the
 * work itself as an ordinary call:
 *
 *     struct sum_arg { const node *n; int64_t result; };
 *
 *     static void sum_job(clove_task *t, void *p)
 *     {
 *         struct sum_arg *a = p;
 *         a->result = sum(t, a->n);
 *     }
 *
 *     int64_t sum(clove_task *t, const node *n)
 *     {
 *         int64_t s = n->value;
 *         if (n->left && n->right) {
 *             {
 *                 clove_future f;
 *                 struct sum_arg right = { n->right, 0 };
 *                 clove_fork(t, &f, sum_job, &right);
 *                 s += sum(t, n->left);
 *                 if (clove_join(t, &f))          // it ran elsewhere:
 *                     return s + right.result;    // its result is in right
 *             }
 *             return s + sum(t, n->right);        // nobody took it: run it here
 *         }
 *         ...
 *     }
 *
 * (The argument block's scope ends before that call, so that the compiler
 * can make it a loop iteration, as it does in the plain recursion; with
 * the call inside the block, where the block's handed-out address is
 * still live, each fork costs one call frame more. Using the join's
 * result is required: the compiler warns when it is ignored.)
 *
 * When the work returns one integer (a sum, a count, a pointer),
 * clove_fork_value()/clove_join_value() do the same without the argument
 * block, which is the fastest form (see Cost):
 *
 *     static int64_t sum_job(clove_task *t, void *n) { return sum(t, n); }
 *
 *     int64_t sum(clove_task *t, const node *n)
 *     {
 *         int64_t s = n->value, r;
 *         if (n->left && n->right) {
 *             clove_future f;
 *             clove_fork_value(t, &f, sum_job, (void *)n->right);
 *             s += sum(t, n->left);
 *             if (!clove_join_value(t, &f, &r))    // nobody took it:
 *                 r = sum(t, n->right);            // compute it here
 *             return s + r;
 *         }
 *         ...
 *     }
 *
 * About every heartbeat_us microseconds each busy worker is asked (a flag it
 * reads at its next clove_fork) to hand its *oldest* queued fork to a worker
 * that is idle, and to wake exactly one. Small work therefore never wakes
 * anybody, and there is no grain size to choose: fork everywhere.
 *
 * Cost
 * ----
 * The not-taken path (fork, then a join that finds the job untouched) is
 * inline below: two stores into the next record of the task's job stack
 * (three for clove_fork), a relaxed load of the heartbeat flag, and at the
 * join one load and compare. No atomic read-modify-write, no lock, no
 * allocation, no indirect call, no capacity check. See the comment above
 * clove_fork(). With CLOVE_DEBUG the checks below add inline loads and
 * compares (about 1.5x on a tree sum of 1000 nodes, 1.3x at 10M).
 *
 * Depth
 * -----
 * Each task's job stack holds CLOVE_JOB_STACK_DEPTH unjoined forks (or
 * clove_config.stack_size / 32, if that is more): more than the C stack
 * can nest with default thread stacks, since every nested fork is also a
 * nested call. It is reserved address space (mmap), of which only the
 * touched pages take memory, and those beyond the first 64 KiB are given
 * back when the run (or a worker's job) that touched them ends. Nesting deeper aborts with a message when
 * CLOVE_DEBUG is non-zero; otherwise it faults on a guard page, like a C
 * stack overflow.
 *
 * Errors
 * ------
 * Functions that can fail return 0 or a positive errno value and leave their
 * outputs untouched on failure. Misuse of fork/join (a join out of LIFO
 * order, a future joined twice or never forked, a future forked twice
 * before its join, forks nested deeper than the job stack, a task that is
 * not the calling thread's current one) aborts with a message naming the
 * misuse and its call site when CLOVE_DEBUG is non-zero. CLOVE_DEBUG
 * defaults to 1 unless NDEBUG is defined; define it to 0 or 1 before
 * including this header to choose. In every build, a join of the wrong
 * form, a fork left unjoined, and a few misuses that reach the library's
 * cold paths abort.
 *
 * Threads and memory ordering
 * ---------------------------
 * - clove_pool_create/destroy: not concurrent with any other call on the
 *   same pool. Destroying a pool while clove_pool_run() is in progress on it
 *   is undefined (aborts in the library if detected).
 * - clove_pool_run: any number of threads, concurrently, on the same pool.
 * - A clove_task belongs to the thread that received it and is valid only
 *   during the fn call that received it and calls nested in it, except
 *   inside a nested clove_pool_run of another pool: that fn receives its
 *   own task, and only that one may be used until it returns.
 * - When clove_join() returns true, everything the job wrote happens-before
 *   the return (the job's completion is published under the pool lock that
 *   the joiner acquires). Everything the forking thread wrote before
 *   clove_fork() happens-before the job starts on another worker.
 */
#ifndef CLOVE_H
#define CLOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
#include <atomic>
#define CLOVE__ATOMIC_U32 std::atomic<uint32_t>
#define CLOVE__ATOMIC_PTR(T) std::atomic<T *>
#define CLOVE__ATOMIC_U64 std::atomic<uint64_t>
#define clove__load_relaxed(p) ((p)->load(std::memory_order_relaxed))
extern "C" {
#else
#include <stdatomic.h>
#define CLOVE__ATOMIC_U32 _Atomic uint32_t
#define CLOVE__ATOMIC_PTR(T) _Atomic(T *)
#define CLOVE__ATOMIC_U64 _Atomic uint64_t
#define clove__load_relaxed(p) atomic_load_explicit((p), memory_order_relaxed)
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CLOVE_API __attribute__((visibility("default")))
#else
#define CLOVE_API
#endif

/* The version of this header. clove_version() is the library's, which can
 * differ from the header's when a program runs against another build of a
 * shared libclove. Releases with the same major version are
 * binary-compatible (the shared library's SONAME is libclove.so.MAJOR). */
#define CLOVE_VERSION_MAJOR 0
#define CLOVE_VERSION_MINOR 1
#define CLOVE_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, for #if CLOVE_VERSION >= 100. */
#define CLOVE_VERSION \
    (CLOVE_VERSION_MAJOR * 10000 + CLOVE_VERSION_MINOR * 100 + CLOVE_VERSION_PATCH)
#define CLOVE__STR(x) #x
#define CLOVE__XSTR(x) CLOVE__STR(x)
/* "MAJOR.MINOR.PATCH" */
#define CLOVE_VERSION_STRING                                                  \
    CLOVE__XSTR(CLOVE_VERSION_MAJOR) "." CLOVE__XSTR(CLOVE_VERSION_MINOR) "." \
        CLOVE__XSTR(CLOVE_VERSION_PATCH)

/* Upper bounds accepted by clove_pool_create(); larger values are EINVAL. */
#define CLOVE_MAX_THREADS 4096u
#define CLOVE_MAX_HEARTBEAT_US 1000000u /* one second */
#define CLOVE_DEFAULT_HEARTBEAT_US 100u
/* Unjoined forks a task can nest (the job stack: see Depth above). */
#define CLOVE_JOB_STACK_DEPTH ((size_t)1 << (sizeof(void *) >= 8 ? 20 : 16))

#ifndef CLOVE_DEBUG
#ifdef NDEBUG
#define CLOVE_DEBUG 0
#else
#define CLOVE_DEBUG 1
#endif
#endif

typedef struct clove_pool clove_pool;     /* opaque */
typedef struct clove_task clove_task;     /* per-worker context, passed down */
typedef struct clove_future clove_future; /* a handle in the forking frame */
struct clove__job;                        /* private: a record in a job stack */
typedef void clove_fn(clove_task *t, void *arg);
typedef int64_t clove_value_fn(clove_task *t, void *arg);
typedef void clove_range_fn(clove_task *t, size_t lo, size_t hi, void *ctx);

typedef struct clove_config {
    /* Workers including the calling thread; 0 = the CLOVE_THREADS
     * environment variable if set (a decimal 1 .. CLOVE_MAX_THREADS, else
     * EINVAL), otherwise the CPUs this process may run on (its affinity
     * mask). 1 starts no thread at all. At most CLOVE_MAX_THREADS.
     * Pool-owned threads are named clove-1, clove-2, ... and clove-hb (the
     * heartbeat), as top -H and gdb show them. */
    unsigned threads;
    /* Heartbeat interval in microseconds; 0 = CLOVE_DEFAULT_HEARTBEAT_US.
     * At most CLOVE_MAX_HEARTBEAT_US. */
    unsigned heartbeat_us;
    /* Stack size of each worker thread in bytes; 0 = the system default.
     * Must be at least 64 KiB when given; raised to the system's minimum
     * (PTHREAD_STACK_MIN) and rounded up to whole pages. Also sets the depth of every
     * task's job stack to max(CLOVE_JOB_STACK_DEPTH, stack_size / 32). */
    size_t stack_size;
    /* CLOVE_PIN_WORKERS, CLOVE_NO_SPIN, both or 0. Other bits are
     * EINVAL. */
    unsigned flags;
    /* Called on each pool-owned worker thread (index 1 .. threads-1, as
     * clove_worker_index) when it starts, before it runs any job, and when
     * it exits (during clove_pool_destroy), for thread-local set-up and
     * tear-down. NULL = none. They must not use this pool. */
    void (*on_thread_start)(unsigned index, void *hook_arg);
    void (*on_thread_exit)(unsigned index, void *hook_arg);
    void *hook_arg;
    /* Write a Chrome trace-event JSON timeline of the pool to this file when
     * it is destroyed (Perfetto, chrome://tracing). NULL = the CLOVE_TRACE
     * environment variable if set, else no trace. See docs/api.md. */
    const char *trace_path;
} clove_config;

/* config.flags: pin worker i (i = 1 .. threads-1) to the (i mod m)-th CPU
 * of the m CPUs in the affinity mask of the thread calling
 * clove_pool_create, so that with threads <= m they are distinct CPUs.
 * The threads calling clove_pool_run are never pinned. Best effort: a CPU
 * that refuses leaves that worker unpinned. Off by default. */
#define CLOVE_PIN_WORKERS 1u
/* config.flags: a worker or a join with nothing to do sleeps at once.
 * By default, while a clove_pool_run is in progress and the pool's
 * threads do not outnumber the CPUs this process may run on, it first
 * watches for work for one heartbeat interval (at most 100 us), so that
 * work handed to it then starts without the system's wake-up latency. */
#define CLOVE_NO_SPIN 2u

/* The library's version, as CLOVE_VERSION and CLOVE_VERSION_STRING give
 * the header's. */
CLOVE_API int clove_version(void);
CLOVE_API const char *clove_version_string(void);

/* Create a pool. config == NULL means all defaults. Returns 0 and sets
 * *pool, or returns EINVAL (pool == NULL, a field out of range, a refused
 * CLOVE_THREADS or trace file: those two also print one line on stderr
 * naming the variable or path and the reason), ENOMEM or EAGAIN (memory or
 * threads unavailable). On failure nothing is left behind: every thread
 * already started is joined and everything is freed.
 *
 * clove_config may gain fields in later minor versions, at its end. The
 * macro below passes the size of the clove_config this program was
 * compiled with, so that a newer library reads the fields this program
 * knows and takes the rest as zero (their defaults), and an older library
 * refuses (EINVAL, with a line on stderr) a config whose newer fields are
 * non-zero instead of ignoring them. (clove_pool_create)(pool, config),
 * or the function's address, takes the layout of version 0.1. */
CLOVE_API int clove_pool_create_sized(clove_pool **pool, const clove_config *config,
                                      size_t config_size);
CLOVE_API int clove_pool_create(clove_pool **pool, const clove_config *config);
#define clove_pool_create(pool, config) \
    clove_pool_create_sized((pool), (config), sizeof(clove_config))

/* Stop and join every thread and free the pool. NULL is a no-op. Must not
 * be called while any clove_pool_run() on this pool is in progress. */
CLOVE_API void clove_pool_destroy(clove_pool *pool);

/* Run fn(t, arg) on the calling thread, which acts as a worker of pool until
 * fn returns; every job it forked is finished by then. Any number of threads
 * may call it concurrently. Called from inside a task of the same pool, it
 * simply calls fn on the current task (a nested call: its forks may be
 * shared as usual). Called from inside a task of another pool, the thread
 * becomes a temporary worker of this pool until fn returns.
 * A thread that finds no other inside runs on the pool's own entry task
 * (one compare-and-swap, no lock); others get a task of their own.
 * Returns 0, or without calling fn: EINVAL (pool or fn NULL), ENOMEM (no
 * job stack could be mapped for a thread entering while others are inside;
 * the entry task's is mapped by clove_pool_create).
 * pthread_cancel (at a cancellation point in fn or in a fork the thread
 * runs itself) and pthread_exit inside fn are safe: forks that other
 * workers took are waited for, the others dropped, and the run ends as if
 * fn had returned. Jobs the thread runs for other tasks while it waits at
 * a join are not cancellable. longjmp out of fn is not supported (the
 * thread's next clove_pool_run aborts with a message). See docs/api.md. */
CLOVE_API int clove_pool_run(clove_pool *pool, clove_fn *fn, void *arg);

/* The calling thread's task while it runs inside clove_pool_run or
 * clove_run (in fn, a job, a loop body, a spawned job: whatever pool),
 * else NULL. Inside a nested clove_pool_run of another pool it is that
 * run's task until the run returns. One thread-local load (inline below),
 * cheap enough for every level of a recursion, so that code without a task
 * parameter (a callback whose signature is not yours) can fork:
 *     clove_task *t = clove_current();  ... clove_fork_value(t, ...)
 * A task obtained this way has the lifetime and rules of a received one. */
static inline clove_task *clove_current(void);

/* Run fn(t, arg) on the process's default pool, created on first use
 * (clove_pool_create with all defaults: threads from CLOVE_THREADS, else
 * the CPUs of the affinity mask; thread-safe) and destroyed at exit.
 * Called while the thread already runs a task (clove_current() is not
 * NULL), of any pool, it calls fn on that task, as a nested
 * clove_pool_run does: the work stays on the pool it is part of. Any
 * number of threads may call it at once. Returns 0 after fn returned, or
 * without calling fn: EINVAL (fn NULL, or a refused CLOVE_THREADS),
 * ENOMEM or EAGAIN (the pool could not be created; the next call tries
 * again), or clove_pool_run's errors. After fork() the child gets a fresh
 * default pool at its first clove_run; once exit() has begun, a clove_run
 * runs fn on a one-thread pool of its own (see docs/api.md). */
CLOVE_API int clove_run(clove_fn *fn, void *arg);

/* Workers of the pool including the calling thread (config.threads after
 * defaults were applied). */
CLOVE_API unsigned clove_pool_threads(const clove_pool *pool);

/* Counters of what the scheduler did, since the pool was created. Only the
 * cold paths count (a heartbeat answered, a share, a shared job run, a
 * sleep, a join that waits): the fork/join fast path is untouched. */
typedef struct clove_stats {
    uint64_t heartbeats; /* heartbeat flags answered (clove_tick slow path) */
    uint64_t shared;     /* jobs handed to other workers at a heartbeat or
                          * at a request (each job of a batch counts) */
    uint64_t reclaimed;  /* of those, taken back untouched by their joins */
    uint64_t ran;        /* shared jobs run, for the worker that forked them */
    uint64_t sleeps;     /* times the worker went to sleep, idle */
    uint64_t sleep_ns;   /* time asleep */
    uint64_t waits;      /* joins that waited for a job running elsewhere */
    uint64_t wait_ns;    /* time in those joins (helping and sleeping included) */
    uint64_t stolen;     /* jobs of this worker that the heartbeat thread
                          * shared because the worker left a beat unanswered
                          * (no fork or tick since: a long leaf, or a loop
                          * chunk that overran); counted when the worker
                          * notices (its next heartbeat or the join), not in
                          * shared; reclaimed counts those nobody took in
                          * time */
    uint64_t handed;     /* shared ranges (a job, or a batch) this worker
                          * received straight from their sharer, into its
                          * mailbox instead of through the pool's queue:
                          * while it slept (the handoff), or in answer to
                          * its request */
    uint64_t answered;   /* of those, the answers to its direct requests:
                          * having run out of work, or waiting at a join
                          * for a job another worker runs, it asked a busy
                          * task, whose next fork or tick answered */
} clove_stats;

/* Snapshot of the pool's counters: *total (if not NULL) sums every task
 * that ever ran on the pool; per_worker[i] (if not NULL) gets those of
 * worker index i for i < min(n, threads) (see clove_worker_index; index 0
 * accumulates every thread that entered clove_pool_run with index 0).
 * Threads that entered with an index >= threads count in the total only.
 * May be called at any time, from any thread, also during runs: each
 * counter is read atomically, not all of them at one instant. Once every
 * worker is idle, shared + stolen == ran + reclaimed in the total; just
 * after clove_pool_run returns, a worker may still be finishing one half
 * of a batch whose jobs their owner took back, and count it a little
 * later.
 * Returns 0, or EINVAL (pool NULL, or both outputs NULL).
 * Like clove_config, clove_stats may gain counters at its end: the macro
 * passes the size this program was compiled with, per_worker's stride;
 * a newer library writes only that much of each, an older one zeroes what
 * it does not know. (clove_pool_stats)(...) takes the layout of 0.1. */
CLOVE_API int clove_pool_stats_sized(const clove_pool *pool, clove_stats *total,
                                     clove_stats *per_worker, size_t n, size_t stats_size);
CLOVE_API int clove_pool_stats(const clove_pool *pool, clove_stats *total,
                               clove_stats *per_worker, size_t n);
#define clove_pool_stats(pool, total, per_worker, n) \
    clove_pool_stats_sized((pool), (total), (per_worker), (n), sizeof(clove_stats))

/* Parallel loop: body(t, lo, hi, ctx) is called on disjoint ranges that
 * cover [begin, end) exactly once, in no particular order across workers
 * (in increasing order within one worker's sequential run). There is no
 * grain size: the loop runs chunks sequentially and, when a heartbeat
 * arrives, splits the remaining iterations and offers the upper half as a
 * job. Nests freely (in a body, in forked jobs). begin >= end does nothing. */
CLOVE_API void clove_for(clove_task *t, size_t begin, size_t end,
                         clove_range_fn *body, void *ctx);

/* Worker index of task t: pool-owned workers are 1 .. threads-1, the first
 * thread inside clove_pool_run gets 0, and any other thread that enters
 * clove_pool_run while that one is still inside gets the lowest index not
 * in use from threads, threads+1, ... So with one entering thread at a
 * time the indices are exactly 0 .. clove_pool_threads(pool)-1, and in
 * every case no two tasks of a pool that exist at the same time share an
 * index: per-worker scratch space indexed by it needs no lock. Inline
 * (one load) further down. */
static inline unsigned clove_worker_index(const clove_task *t);

/* ------------------------------------------------------------------------ */
/* Reductions                                                               */
/* ------------------------------------------------------------------------ */

typedef void clove_reduce_fn(clove_task *t, size_t lo, size_t hi, void *acc, void *ctx);
typedef void clove_init_fn(void *acc, void *ctx);
typedef void clove_combine_fn(void *left, void *right, void *ctx);

/* Parallel reduction over [begin, end) in index order, without a grain
 * size (split like clove_for). acc points to acc_size bytes holding the
 * starting value; on return it holds the result.
 *   body(t, lo, hi, acc, ctx)  folds iterations lo .. hi-1, in increasing
 *                              order, into *acc;
 *   init(acc, ctx)             sets a fresh accumulator to the identity;
 *   combine(left, right, ctx)  sets *left to left (+) right and releases
 *                              whatever *right owns (it is discarded).
 * When a heartbeat splits the range, the upper part gets a fresh
 * accumulator (on the splitting worker's stack when acc_size <= 64 bytes,
 * else on the heap) which is init-ed and combined only if another worker
 * actually took that part; otherwise the same worker simply folds on into
 * *acc. Pieces are always combined left to right, so the operation need
 * only be associative (string concatenation, matrix product), not
 * commutative. On one thread this is one call body(t, begin, end, acc,
 * ctx). Accumulators are suitably aligned for any type (max_align_t).
 * Returns 0, or EINVAL (t, acc, body, init or combine NULL, or acc_size 0)
 * without calling anything. Never fails for lack of memory: if a large
 * accumulator cannot be allocated, that split is simply not made. */
CLOVE_API int clove_reduce(clove_task *t, size_t begin, size_t end, void *acc,
                           size_t acc_size, clove_init_fn *init,
                           clove_reduce_fn *body, clove_combine_fn *combine,
                           void *ctx);

/* The same reduction with a result that depends only on begin, end, grain
 * and the starting *acc, never on the thread count or the timing (a
 * floating-point sum gives the same bits every run; oneTBB's
 * parallel_deterministic_reduce). [begin, end) is cut into blocks of grain
 * iterations (the last one shorter; grain 0 = max(2048, ceil(n / 4096)) for
 * n = end - begin, at most 4096 blocks). Each block is folded by one body
 * call; the blocks are combined in a fixed binary tree (halving the list of
 * blocks, the lower half the smaller), left then right: the first block
 * folds into *acc, every other subtree into a fresh accumulator (init),
 * then combined. So init and combine run once per block but the first,
 * wherever the work ran; the blocks run in parallel when heartbeats find
 * idle workers. Accumulators up to 64 bytes live on the stack; larger ones
 * in one array of (blocks - 1) accumulators allocated before any call,
 * each aligned for max_align_t. Returns 0, EINVAL (as clove_reduce), or
 * ENOMEM (that array could not be allocated; nothing was called). */
CLOVE_API int clove_reduce_deterministic(clove_task *t, size_t begin, size_t end, size_t grain,
                                         void *acc, size_t acc_size, clove_init_fn *init,
                                         clove_reduce_fn *body, clove_combine_fn *combine,
                                         void *ctx);

/* ------------------------------------------------------------------------ */
/* Scopes                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct clove_scope clove_scope; /* opaque; lives on the stack */
typedef void clove_scope_fn(clove_task *t, clove_scope *s, void *arg);

/* Run fn(t, s, arg); inside it, clove_spawn(t, s, job, arg) may be called
 * any number of times. Every spawned job runs exactly once, as
 * job(t', s', arg) on some worker with a scope s' of its own (so spawned
 * jobs spawn in turn), and all of them, transitively, have finished when
 * clove_scope_run returns. Spawned jobs start only after the function that
 * spawned them has returned, in no guaranteed order (on one worker: spawn
 * order); the spawned jobs of one function are split between workers at
 * heartbeats like the iterations of clove_for, so a million spawns cost a
 * million calls, not a million shares. No heap allocation for the first 16
 * spawns of each function; beyond that, the record array grows
 * geometrically (4x). If that allocation fails, the job runs at once
 * instead, still exactly once and before the scope ends. */
CLOVE_API void clove_scope_run(clove_task *t, clove_scope_fn *fn, void *arg);

/* Spawn job(t', s', arg) into scope s. t must be the task that received s,
 * and only during the call that received it (checked when CLOVE_DEBUG,
 * and the "after return" case always). */
CLOVE_API void clove_spawn(clove_task *t, clove_scope *s, clove_scope_fn *job, void *arg);

/* ------------------------------------------------------------------------ */
/* Cancellation                                                             */
/* ------------------------------------------------------------------------ */

/* A cancellation token: one flag, shared by everything that works on one
 * question (a search, a branch-and-bound), however it is split into loops,
 * scopes and forks. Initialise with CLOVE_CANCEL_INIT or
 * clove_cancel_init; request with clove_cancel_request from any thread;
 * poll with clove_cancelled (one relaxed load: cheap enough for an inner
 * loop). Cancelling is one way: a token stays requested until it is
 * initialised again, which must not happen while anything uses it. */
typedef struct clove_cancel {
    CLOVE__ATOMIC_U32 requested; /* private: 0, or 1 once requested */
} clove_cancel;
#define CLOVE_CANCEL_INIT {0}

static inline void clove_cancel_init(clove_cancel *c);
/* Request: everything checking c from now on sees it (a store that
 * releases what the caller wrote before, such as the answer found, to a
 * thread that sees the request). */
static inline void clove_cancel_request(clove_cancel *c);
/* Whether c was requested (relaxed: a request may become visible a
 * little later on another thread; the library's own checks and the
 * joins that follow them order everything that matters). */
static inline bool clove_cancelled(const clove_cancel *c);

/* clove_for with a token: before each chunk (and each range a split
 * handed to another worker) the loop checks c and, once it is requested,
 * starts no more iterations; a running body may poll clove_cancelled(c)
 * itself to stop early. Unlike clove_for, a pool of one thread also runs
 * the range in chunks (paced like the split loop's, about an eighth of a
 * heartbeat interval each) so that the check happens. Returns 0 when c was
 * not requested by the time every started chunk finished (every iteration
 * ran), ECANCELED when it was (some may not have run; each ran at most
 * once), EINVAL when t or body is NULL (c NULL: the plain clove_for,
 * never ECANCELED). */
CLOVE_API int clove_for_cancel(clove_task *t, size_t begin, size_t end, clove_range_fn *body,
                               void *ctx, clove_cancel *c);

/* clove_scope_run with a token: a spawned job that has not started when c
 * is requested never starts (clove_spawn still accepts it, and drops it),
 * so cancelling from fn before it returns runs none of its spawns. fn is
 * not called at all if c is already requested. Returns 0 or ECANCELED as
 * clove_for_cancel (EINVAL: t or fn NULL; c NULL: clove_scope_run). */
CLOVE_API int clove_scope_run_cancel(clove_task *t, clove_scope_fn *fn, void *arg,
                                     clove_cancel *c);

/* ------------------------------------------------------------------------ */
/* Sorting                                                                  */
/* ------------------------------------------------------------------------ */

/* Sort nmemb elements of size bytes at base in ascending order of compar,
 * with qsort's contract for compar (a consistent total preorder, negative /
 * zero / positive; it may be called from several threads at once). A
 * parallel mergesort: halves are forked at every level, and merges are
 * split at heartbeats (middle of the longer run, binary search in the
 * other), so no size or cutoff is tuned to the machine. It is stable
 * (equal elements keep their order), so clove_sort_stable is the same
 * call under the name that promises it. Uses a scratch buffer of nmemb *
 * size bytes. Returns 0; EINVAL (t or compar NULL, base NULL with nmemb >
 * 0, size 0 with nmemb > 1, or nmemb * size overflowing); ENOMEM (no
 * scratch buffer; the array is untouched). */
CLOVE_API int clove_sort(clove_task *t, void *base, size_t nmemb, size_t size,
                         int (*compar)(const void *, const void *));
CLOVE_API int clove_sort_stable(clove_task *t, void *base, size_t nmemb, size_t size,
                                int (*compar)(const void *, const void *));

/* ------------------------------------------------------------------------ */
/* Below this line: not API. Layouts are here only because fork/join are    */
/* inline. They never depend on build options (CLOVE_DEBUG only changes     */
/* code, never a layout).                                                   */
/* ------------------------------------------------------------------------ */

/*
 * A job record, in its owner's job stack (an array: the task's forks in
 * nesting order, oldest at the bottom). fn says where it is:
 *   queued:   fn != NULL. Owner only: it lies in [bottom, top). A
 *             clove_fork_value writes fn and arg; a clove_fork writes
 *             fn = CLOVE__VOID_JOB, arg, and its clove_fn in out.vfn.
 *             No fork writes state: it holds what the library last
 *             stored there, never SHARED (below).
 *   reserved or shared: fn == NULL. The owner's heartbeat handler took it
 *             (it was the oldest queued), moved a clove_fork_value's fn
 *             to out.run (a clove_fork's stays in out.vfn) and set state:
 *             RESERVED (published in task->reserve, so that the heartbeat
 *             thread can share it while the owner runs a long leaf; state
 *             belongs to whoever holds that claim) or SHARED, TAKEN, DONE
 *             (changed by atomic operations of the runner and the owner;
 *             src/internal.h has the bits, the kind among them). These
 *             records lie below bottom.
 * Whoever runs a taken record stores the job's result (0 for a clove_fork
 * job) in out.value before marking it DONE. A runner holding a stale
 * range may look at any record's state; a record is SHARED only while its
 * share is live, and since forks leave state alone, a queued one never
 * reads SHARED. Nothing changes arg while the record is the owner's or
 * taken off (a debug build's check reads it: clove__debug_fork).
 * Records are 32 bytes (aligned so on 32-bit targets): a record address
 * leaves five low bits free in a state word.
 */
#if UINTPTR_MAX <= 0xFFFFFFFFu
#ifdef __cplusplus
#define CLOVE__JOB_ALIGN alignas(32)
#else
#define CLOVE__JOB_ALIGN _Alignas(32)
#endif
#else
#define CLOVE__JOB_ALIGN
#endif
struct clove__job {
    CLOVE__JOB_ALIGN clove_value_fn *fn;
    void *arg;
    uintptr_t state;
    union {
        clove_fn *vfn;       /* clove_fork's job */
        clove_value_fn *run; /* reserved or shared: clove_fork_value's job */
        int64_t value;       /* DONE: what it returned */
    } out;
};

/* A queued clove_fork record's fn: never called, never a function's
 * address (it lies in the first page, which is never mapped). */
#define CLOVE__VOID_JOB ((clove_value_fn *)(uintptr_t)1)

/* The handle of one fork: its record, and when CLOVE_DEBUG the fork's
 * key (CLOVE__DEBUG_FORK). A local of the forking function, usually kept
 * in registers. */
struct clove_future {
    struct clove__job *job;
    uintptr_t key;
};

/*
 * Per-worker context: only what the inline fork/join, clove_tick and
 * clove_worker_index read, and what the library's handler of the
 * heartbeat word reads with them (one cache line). The library keeps its
 * bookkeeping for the task in a larger struct that begins with this one
 * (src/internal.h), so this layout does not change with it.
 */
struct clove_task {
    struct clove__job *top;      /* owner only: the next free record */
    CLOVE__ATOMIC_U32 heartbeat; /* CLOVE__HB_BEAT: set by the heartbeat
                                  * thread; CLOVE__HB_ARM: set by the owner;
                                  * taken (exchange with 0) by the owner's
                                  * handler, which fork calls on non-zero,
                                  * tick on BEAT */
    uint32_t index;              /* constant: clove_worker_index() */
    clove_pool *pool;            /* constant while the task exists */
    struct clove__job *bottom;   /* owner only: the oldest queued record;
                                  * [bottom, top) are queued */
    struct clove__job *base;     /* constant: the job stack's first record */
    struct clove__job *limit;    /* constant: one past its last (a guard
                                  * page follows) */
    void *thread;                /* the thread pointer (CLOVE__THREAD_POINTER)
                                  * of the thread whose current task this
                                  * is, else NULL: written by that thread,
                                  * read by the debug checks (by another
                                  * thread only in a misuse) */
};

static inline unsigned clove_worker_index(const clove_task *t)
{
    return t->index;
}

/* The calling thread's current task (clove_current), as clove_pool_run
 * sets it. Exported from the library as a thread-local, so that
 * clove_current() is one load: in an executable (PIE or not) the compiler
 * reaches it through the initial-exec model, at a fixed offset from the
 * thread pointer, which a static link resolves to a constant and a
 * dynamic one to a GOT entry filled at load time (libclove.so is then
 * loaded at start-up, where its TLS block is static); from a shared
 * object it uses the general-dynamic model (__tls_get_addr), which also
 * works when libclove.so is loaded with dlopen. Compilers without
 * __thread or C11 _Thread_local call the library instead. */
#if defined(__GNUC__) || defined(__clang__)
#define CLOVE__THREAD_LOCAL __thread
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define CLOVE__THREAD_LOCAL _Thread_local
#endif
#ifdef CLOVE__THREAD_LOCAL
extern CLOVE_API CLOVE__THREAD_LOCAL clove_task *clove__current_task;
#endif


/* Cold, out-of-line parts called by the inline code below. */
CLOVE_API void clove__heartbeat_slow(clove_task *t);
CLOVE_API bool clove__join_slow(clove_task *t, struct clove__job *j, bool value);
CLOVE_API void clove__debug_fork(clove_task *t, bool null_future, struct clove__job *job,
                                 uintptr_t key);
CLOVE_API void clove__debug_join(clove_task *t, bool null_future, struct clove__job *job,
                                 bool value);
CLOVE_API clove_task *clove__current(void);

static inline clove_task *clove_current(void)
{
#ifdef CLOVE__THREAD_LOCAL
    return clove__current_task;
#else
    return clove__current();
#endif
}

#ifdef __cplusplus
#define clove__store_release(p, v) ((p)->store((v), std::memory_order_release))
#else
#define clove__store_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#endif

static inline void clove_cancel_init(clove_cancel *c)
{
    clove__store_release(&c->requested, 0u);
}

static inline void clove_cancel_request(clove_cancel *c)
{
    clove__store_release(&c->requested, 1u);
}

static inline bool clove_cancelled(const clove_cancel *c)
{
    return clove__load_relaxed(&c->requested) != 0;
}

#if defined(__GNUC__) || defined(__clang__)
/* Inlined even at -O0, so that debug builds report the user's call site
 * and pay no call for the fast path. */
#define CLOVE__INLINE static inline __attribute__((always_inline))
#define CLOVE__LIKELY(x) __builtin_expect(!!(x), 1)
#define CLOVE__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define CLOVE__INLINE static inline
#define CLOVE__LIKELY(x) (x)
#define CLOVE__UNLIKELY(x) (x)
#endif

/* A result that must not be ignored: a join's false means "run it
 * yourself". */
#if defined(__cplusplus) && __cplusplus >= 201703L
#define CLOVE__NODISCARD [[nodiscard]]
#elif defined(__GNUC__) || defined(__clang__)
#define CLOVE__NODISCARD __attribute__((warn_unused_result))
#else
#define CLOVE__NODISCARD
#endif

/* The calling thread's thread pointer, one register read, where the
 * compiler offers it: what clove_task.thread holds. Elsewhere the debug
 * checks call clove__current() instead. On x86-64 ELF systems it is the
 * load __builtin_thread_pointer() makes (the thread control block starts
 * with its own address), but volatile: a debug fork and its join each
 * read it, where the builtin's one value would be kept across the calls
 * between them, a spill and a reload. Not at -O0, where nothing is kept
 * and the function's local would take stack space in every forking
 * frame. */
#if defined(__x86_64__) && defined(__ELF__) && defined(__OPTIMIZE__) && \
    (defined(__GNUC__) || defined(__clang__))
CLOVE__INLINE void *clove__thread_pointer(void)
{
    void *tp;
    __asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
    return tp;
}
#define CLOVE__THREAD_POINTER() clove__thread_pointer()
#elif defined(__has_builtin) && (defined(__x86_64__) || defined(__aarch64__) || defined(__riscv))
#if __has_builtin(__builtin_thread_pointer)
#define CLOVE__THREAD_POINTER() __builtin_thread_pointer()
#endif
#endif

/* Bits of clove_task.heartbeat. BEAT: a heartbeat arrived (the heartbeat
 * thread sets it every interval on busy tasks; loops split on it). ARM:
 * the owner's next fork should reserve (set, in pools with more than one
 * thread, when a task starts and whenever it is left without a reserve). */
#define CLOVE__HB_BEAT 1u
#define CLOVE__HB_ARM 2u

/* Debug builds point a joined future here, so that a second join is
 * caught. Never dereferenced. */
#define CLOVE__JOINED ((struct clove__job *)(uintptr_t)0x10E0)

/* The record part of a debug fork's key (CLOVE__DEBUG_FORK): a record's
 * address and its argument, mixed. */
#define CLOVE__DEBUG_MIX(job, arg)                                                        \
    (((uintptr_t)(job) ^ (uintptr_t)(arg)) * (uintptr_t)0x9E3779B97F4A7C15ull)

/* ------------------------------------------------------------------------ */
/* Inline fast path                                                          */
/* ------------------------------------------------------------------------ */

/*
 * clove_tick: answer a pending heartbeat, if any. clove_fork ticks; call it
 * yourself in a long loop that does not fork, so that the work queued
 * behind it can still be shared. One relaxed load and a predictable branch.
 */
CLOVE__INLINE void clove_tick(clove_task *t)
{
    if (CLOVE__UNLIKELY(clove__load_relaxed(&t->heartbeat) & CLOVE__HB_BEAT))
        clove__heartbeat_slow(t);
}

#if CLOVE_DEBUG
/*
 * The debug checks. Inline: loads and compares that let every correct
 * call through; anything that may be a misuse goes to the out-of-line
 * clove__debug_fork/join, which checks it exactly and names it (or
 * returns, when it was none). They never take the future's address, so
 * that it stays in registers and the compiler optimizes the forking
 * function as in a release build; and they are macros over the fork's own
 * parameters, since at -O0 every parameter and local of an inlined
 * function takes stack space in the forking frame.
 *
 * They read the future before its fork, when it may be indeterminate (it
 * is only compared then). GCC is told not to warn about that (up to the
 * end of the inline fast path); it treats such a value as any value, and
 * where it knows the value (CLOVE__JOINED, after a join in the same
 * function) it folds the check. Clang gets each value through an empty
 * asm statement (CLOVE__DEBUG_LAUNDER), so that it never branches on an
 * undefined value.
 */
#if defined(__clang__)
#define CLOVE__DEBUG_LAUNDER(v) __asm__("" : "+r"(v))
#else
#define CLOVE__DEBUG_LAUNDER(v) ((void)0)
#endif
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* CLOVE__UNLIKELY, defined here, so that GCC's warnings about a value
 * used through it are located inside the pragma above. */
#if defined(__GNUC__) || defined(__clang__)
#define CLOVE__DEBUG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define CLOVE__DEBUG_UNLIKELY(x) (x)
#endif

/* t is the calling thread's current task (it may not be, when false). */
#ifdef CLOVE__THREAD_POINTER
#define CLOVE__DEBUG_MINE(t) ((t)->thread == CLOVE__THREAD_POINTER())
#else
#define CLOVE__DEBUG_MINE(t) ((t) == clove__current())
#endif

/*
 * In clove_fork and clove_fork_value, before the record is written.
 * Caught here: a NULL task or future, a task that is not the thread's
 * current one, a fork beyond the job stack's depth, and a future that may
 * name an unjoined record of t forked through it (its job points into t's
 * job stack below top). Then the fork's key goes into the future: the
 * record's address xor the job's argument, multiplied by an odd constant
 * (CLOVE__DEBUG_MIX), xor the forking frame's address. Nothing is written
 * into the record beyond what a release fork writes, and the key is dead
 * unless something reads the future again before its join (which sets it
 * to 0), so a correct program computes it only where the compiler cannot
 * tell. clove__debug_fork gets the future's key xored with the frame of
 * the fork that suspects it (CLOVE__DEBUG_KEY) and compares that with the
 * mix of the record's address and the argument it holds: equal when the
 * same frame forked that record through this future. The multiplication
 * keeps leftovers from matching by chance: an uninitialized future's
 * memory often holds record and stack addresses, and xors of nearby
 * addresses collide. The frame tells a future forked in this frame from
 * one that only holds the same values: an uninitialized future in a
 * function that its caller called right after a fork can hold the
 * caller's live future, left in registers (clang does that), and must
 * not be taken for it.
 * GCC's frame is its canonical frame address, a constant offset from the
 * stack pointer; clang's __builtin_frame_address, which keeps a frame
 * pointer.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define CLOVE__DEBUG_FRAME() ((uintptr_t)__builtin_dwarf_cfa())
#elif defined(__clang__)
#define CLOVE__DEBUG_FRAME() ((uintptr_t)__builtin_frame_address(0))
#else
#define CLOVE__DEBUG_FRAME() ((uintptr_t)0)
#endif
/* What clove__debug_fork compares with a record: a future's key k as seen
 * from this frame. */
#define CLOVE__DEBUG_KEY(k) ((k) ^ CLOVE__DEBUG_FRAME())
#define CLOVE__DEBUG_FORK(t, f, arg)                                                      \
    do {                                                                                  \
        if (CLOVE__DEBUG_UNLIKELY((f) == NULL))                                           \
            clove__debug_fork((t), true, NULL, 0);                                        \
        struct clove__job *clove__old = (f)->job;                                         \
        uintptr_t clove__old_key = (f)->key;                                              \
        CLOVE__DEBUG_LAUNDER(clove__old);                                                 \
        CLOVE__DEBUG_LAUNDER(clove__old_key);                                             \
        /* Usually the future's job is below base (CLOVE__JOINED, or NULL): one           \
         * compare. One call for every suspicion, which checks them all. */                \
        if (CLOVE__DEBUG_UNLIKELY((t) == NULL || !CLOVE__DEBUG_MINE(t) ||                 \
                                  (t)->top == (t)->limit ||                               \
                                  ((uintptr_t)clove__old >= (uintptr_t)(t)->base &&       \
                                   (uintptr_t)clove__old < (uintptr_t)(t)->top)))         \
            clove__debug_fork((t), false, clove__old, CLOVE__DEBUG_KEY(clove__old_key));      \
        (f)->key = CLOVE__DEBUG_MIX((t)->top, (arg)) ^ CLOVE__DEBUG_FRAME();              \
    } while (0)

/* In clove__pop, for its j: f's record. Caught here: a NULL task or
 * future, a task that is not the thread's current one, and a future that
 * is not t's most recent unjoined fork (never forked, joined already, or
 * out of LIFO order). Then f is marked joined. */
#define CLOVE__DEBUG_JOIN(t, f, value, j)                                                 \
    do {                                                                                  \
        if (CLOVE__DEBUG_UNLIKELY((f) == NULL))                                           \
            clove__debug_join((t), true, NULL, (value));                                  \
        (j) = (f)->job;                                                                   \
        CLOVE__DEBUG_LAUNDER(j);                                                          \
        if (CLOVE__DEBUG_UNLIKELY((t) == NULL || !CLOVE__DEBUG_MINE(t) ||                 \
                                  (uintptr_t)(j) + sizeof(struct clove__job) !=           \
                                      (uintptr_t)(t)->top))                               \
            clove__debug_join((t), false, (j), (value));                                  \
        (f)->job = CLOVE__JOINED; /* a second join is caught */                           \
        (f)->key = 0;                                                                     \
    } while (0)
#endif

/* Push a record (owner only; the fork's half shared by both forms). */
CLOVE__INLINE void clove__push(clove_task *t, clove_future *f, clove_value_fn *fn, void *arg)
{
    struct clove__job *j = t->top;
    j->fn = fn;
    j->arg = arg;
    t->top = j + 1;
    f->job = j;
    /* clove_tick, but also answering ARM (the first fork after the
     * task's reserve was joined or shared reserves it): the same one load
     * and branch. */
    if (CLOVE__UNLIKELY(clove__load_relaxed(&t->heartbeat) != 0))
        clove__heartbeat_slow(t);
}

/* Pop f's record (owner only; the join's half shared by both forms):
 * NULL when nobody took the job, else the record, whose job ran elsewhere
 * (out.value holds its result; the record is the owner's again). */
CLOVE__INLINE struct clove__job *clove__pop(clove_task *t, clove_future *f, bool value)
{
    struct clove__job *j;
#if CLOVE_DEBUG
    CLOVE__DEBUG_JOIN(t, f, value, j);
#else
    j = f->job;
#endif
    /* Queued by the fork of this form: the fast path. Anything else (fn
     * NULL: taken; or queued by the other form, a misuse caught there in
     * every build) goes to the slow path. */
    if (CLOVE__LIKELY(value ? (uintptr_t)j->fn > (uintptr_t)CLOVE__VOID_JOB
                            : j->fn == CLOVE__VOID_JOB)) {
        t->top = j;
        return NULL;
    }
    return clove__join_slow(t, j, value) ? j : NULL;
}

/*
 * The not-taken path, after inlining (figures: bench/README.md, "How low a
 * fork can go"):
 *   clove_fork_value: 1 load of t->top, 2 stores into the record (fn,
 *         arg), 1 store of t->top, 1 relaxed load of t->heartbeat + branch;
 *   clove_fork: the same and a third store (out.vfn);
 *   clove_join_value, clove_join: 1 load of the record's fn + compare and
 *         branch (it also tells the form that forked it), 1 store of
 *         t->top.
 * The record's address is the future: it stays in a register, and nothing
 * in the forking frame has its address taken, so the compiler can compile
 * the recursion much as it does the plain one. There is no capacity check
 * (the job stack ends in a guard page; debug builds check) and no state
 * word written per fork (the join tests fn, which the owner clears when
 * it takes a record).
 *
 * clove_fork: make fn(t, arg) available to other workers. Forks and joins
 * on one task nest like parentheses: join the most recent unjoined fork
 * first.
 */
CLOVE__INLINE void clove_fork(clove_task *t, clove_future *f, clove_fn *fn,
                              void *arg)
{
#if CLOVE_DEBUG
    CLOVE__DEBUG_FORK(t, f, arg);
#endif
    /* Before the push, whose heartbeat check may hand the record out. */
    t->top->out.vfn = fn;
    clove__push(t, f, CLOVE__VOID_JOB, arg);
}

/*
 * clove_join: true when the job already ran on another worker (its writes
 * are visible to the caller now); false when nobody took it and the caller
 * must run fn(t, arg) itself. Waiting for a job that is still running
 * elsewhere helps with other shared work, then sleeps.
 */
CLOVE__NODISCARD CLOVE__INLINE bool clove_join(clove_task *t, clove_future *f)
{
    return clove__pop(t, f, false) != NULL;
}

/*
 * clove_fork_value / clove_join_value: the same for a job that returns
 * its result, the fastest form. When clove_join_value returns true, the
 * job ran elsewhere and *result holds what it returned; when it returns
 * false, *result is untouched and the caller must run fn(t, arg) itself.
 * A future forked with one pair must be joined with the same pair
 * (checked in every build).
 */
CLOVE__INLINE void clove_fork_value(clove_task *t, clove_future *f, clove_value_fn *fn,
                                    void *arg)
{
#if CLOVE_DEBUG
    CLOVE__DEBUG_FORK(t, f, arg);
#endif
    clove__push(t, f, fn, arg);
}

CLOVE__NODISCARD CLOVE__INLINE bool clove_join_value(clove_task *t, clove_future *f,
                                                     int64_t *result)
{
    struct clove__job *j = clove__pop(t, f, true);
    if (j == NULL)
        return false;
    *result = j->out.value;
    return true;
}

/* clove_join2: run a(t, a_arg) and b(t, b_arg), possibly in parallel, and
 * return when both are done (Rayon's join). */
CLOVE__INLINE void clove_join2(clove_task *t, clove_fn *a, void *a_arg,
                               clove_fn *b, void *b_arg)
{
    clove_future f;
    clove_fork(t, &f, b, b_arg);
    a(t, a_arg);
    if (!clove_join(t, &f))
        b(t, b_arg);
}

#if CLOVE_DEBUG && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* ------------------------------------------------------------------------ */
/* Typed tasks                                                               */
/* ------------------------------------------------------------------------ */

/*
 * A typed task is an ordinary function whose first parameter is the task,
 * followed by 1 to 6 typed arguments, declared as a task in one line:
 *
 *     static int64_t fib(clove_task *t, int n);
 *     CLOVE_TASK(int64_t, fib, int);
 *
 *     static int64_t fib(clove_task *t, int n)
 *     {
 *         if (n < 2)
 *             return n;
 *         CLOVE_FORK(t, fib, b, n - 2);    // b: fib(t, n - 2), maybe elsewhere
 *         int64_t a = fib(t, n - 1);      // the other half, here
 *         return a + CLOVE_JOIN(t, b);    // b's result, computed here if
 *     }                                   // nobody took it
 *
 * CLOVE_TASK(R, name, T1, ..., Tk) declares the task `name` of a function
 *     R name(clove_task *, T1, ..., Tk) declared before it (k = 1 .. 6; R
 *     any complete object type: CLOVE_VOID_TASK(name, T1, ..., Tk) for one
 *     that returns void). It defines, with internal linkage, the job that
 *     runs it elsewhere and the inline fork and join; at file scope, once
 *     per task.
 * CLOVE_FORK(t, name, var, a1, ..., ak) forks name(t, a1, ..., ak) and
 *     declares var, its handle, in the enclosing block (a declaration: it
 *     cannot be the body of an if or a loop). The arguments are evaluated
 *     once, here, and converted to T1 .. Tk.
 * CLOVE_JOIN(t, var) joins it: an expression of type R, the result, from
 *     the worker that ran it or, when nobody took it, from the call
 *     name(t, a1, ..., ak) that the join makes itself. So the fallback
 *     cannot be forgotten, and a CLOVE_FORK without its CLOVE_JOIN leaves
 *     a variable unused (a warning with -Wall) besides the unjoined fork
 *     that clove_pool_run reports. Forks and joins nest like parentheses,
 *     as with clove_fork (checked when CLOVE_DEBUG).
 * CLOVE_RUN(name, [&result,] a1, ..., ak) runs name(t, a1, ..., ak) with
 *     clove_run (the default pool), CLOVE_POOL_RUN(pool, name, [&result,]
 *     a1, ..., ak) with clove_pool_run: the result is stored through the
 *     pointer given after the name (not for a void task; it may be NULL).
 *     They return what clove_run / clove_pool_run return.
 *
 * How it compiles. A result of at most 8 bytes (and void) goes through the
 * record, as with clove_fork_value; a larger one is written by the job
 * into var, as with clove_fork. A single argument of at most a pointer's
 * size travels in the record's arg itself, so nothing in the forking frame
 * has its address taken: this is the value form's code, and its cost
 * (tree sum and fib: bench/README.md). Several or larger arguments are
 * stored in var, whose address the record holds until the join; var is
 * in scope at the join's call, which then cannot become a loop (the cost
 * of clove_fork with the call inside the argument block).
 */
#define CLOVE_TASK(R, name, ...) \
    CLOVE__TASK_GEN(R, name, CLOVE__TNARG(__VA_ARGS__), __VA_ARGS__)
#define CLOVE_VOID_TASK(name, ...) \
    CLOVE__VOID_TASK_GEN(name, CLOVE__TNARG(__VA_ARGS__), __VA_ARGS__)
#define CLOVE_FORK(t, name, var, ...) CLOVE__FORK(t, name, var, __VA_ARGS__)
#define CLOVE_JOIN(t, var) clove__tjoin_of_##var((t), &var)
#define CLOVE_RUN(name, ...) CLOVE__TRUN(name, NULL, true, __VA_ARGS__)
#define CLOVE_POOL_RUN(pool, name, ...) CLOVE__TRUN(name, (pool), false, __VA_ARGS__)

/* Their parts. The public macros pass name on once, so that a name that
 * is itself a macro call is expanded before it is pasted. */
#define CLOVE__FORK(t, name, var, ...)                                                      \
    struct clove__task_##name var;                                                          \
    static clove__tjoin_t_##name *const clove__tjoin_of_##var = clove__tjoin_##name;        \
    clove__tfork_##name((t), &var, __VA_ARGS__)
#define CLOVE__TRUN(name, ...) clove__trun_##name(__VA_ARGS__)
/* N is the number of arguments (1 .. 6). */
#define CLOVE__TNARG(...) CLOVE__TNARG_(__VA_ARGS__, 6, 5, 4, 3, 2, 1, 0)
#define CLOVE__TNARG_(a1, a2, a3, a4, a5, a6, n, ...) n
/* The argument block's fields, the fork's parameters, the call's
 * arguments read through the prefix x (such as `v->a.`), and the stores
 * into the block. */
#define CLOVE__TFIELDS_1(T1) T1 a1;
#define CLOVE__TFIELDS_2(T1, T2) T1 a1; T2 a2;
#define CLOVE__TFIELDS_3(T1, T2, T3) T1 a1; T2 a2; T3 a3;
#define CLOVE__TFIELDS_4(T1, T2, T3, T4) T1 a1; T2 a2; T3 a3; T4 a4;
#define CLOVE__TFIELDS_5(T1, T2, T3, T4, T5) T1 a1; T2 a2; T3 a3; T4 a4; T5 a5;
#define CLOVE__TFIELDS_6(T1, T2, T3, T4, T5, T6) T1 a1; T2 a2; T3 a3; T4 a4; T5 a5; T6 a6;
#define CLOVE__TPARAMS_1(T1) T1 a1
#define CLOVE__TPARAMS_2(T1, T2) T1 a1, T2 a2
#define CLOVE__TPARAMS_3(T1, T2, T3) T1 a1, T2 a2, T3 a3
#define CLOVE__TPARAMS_4(T1, T2, T3, T4) T1 a1, T2 a2, T3 a3, T4 a4
#define CLOVE__TPARAMS_5(T1, T2, T3, T4, T5) T1 a1, T2 a2, T3 a3, T4 a4, T5 a5
#define CLOVE__TPARAMS_6(T1, T2, T3, T4, T5, T6) T1 a1, T2 a2, T3 a3, T4 a4, T5 a5, T6 a6
#define CLOVE__TGET_1(x) x a1
#define CLOVE__TGET_2(x) x a1, x a2
#define CLOVE__TGET_3(x) x a1, x a2, x a3
#define CLOVE__TGET_4(x) x a1, x a2, x a3, x a4
#define CLOVE__TGET_5(x) x a1, x a2, x a3, x a4, x a5
#define CLOVE__TGET_6(x) x a1, x a2, x a3, x a4, x a5, x a6
#define CLOVE__TSET_1(x) x a1 = a1;
#define CLOVE__TSET_2(x) x a1 = a1; x a2 = a2;
#define CLOVE__TSET_3(x) x a1 = a1; x a2 = a2; x a3 = a3;
#define CLOVE__TSET_4(x) x a1 = a1; x a2 = a2; x a3 = a3; x a4 = a4;
#define CLOVE__TSET_5(x) x a1 = a1; x a2 = a2; x a3 = a3; x a4 = a4; x a5 = a5;
#define CLOVE__TSET_6(x) x a1 = a1; x a2 = a2; x a3 = a3; x a4 = a4; x a5 = a5; x a6 = a6;
/* Whether the arguments travel in the record's arg: one, that fits. */
#define CLOVE__TPACK_1(T1) (sizeof(T1) <= sizeof(void *))
#define CLOVE__TPACK_2(...) 0
#define CLOVE__TPACK_3(...) 0
#define CLOVE__TPACK_4(...) 0
#define CLOVE__TPACK_5(...) 0
#define CLOVE__TPACK_6(...) 0

#if defined(__GNUC__) || defined(__clang__)
#define CLOVE__TUNUSED __attribute__((unused))
#else
#define CLOVE__TUNUSED
#endif

/* Bytes of an argument or result in and out of a record's arg or result
 * word (memcpy of a constant size: register moves once inlined). */
CLOVE__INLINE void *clove__tpack_arg(const void *a, size_t size)
{
    uintptr_t u = 0;
    memcpy(&u, a, size < sizeof u ? size : sizeof u);
    return (void *)u;
}
CLOVE__INLINE void clove__tunpack_arg(void *a, size_t size, void *p)
{
    uintptr_t u = (uintptr_t)p;
    memcpy(a, &u, size < sizeof u ? size : sizeof u);
}
CLOVE__INLINE int64_t clove__tpack_result(const void *r, size_t size)
{
    int64_t v = 0;
    memcpy(&v, r, size < sizeof v ? size : sizeof v);
    return v;
}
CLOVE__INLINE void clove__tunpack_result(void *r, size_t size, int64_t v)
{
    memcpy(r, &v, size < sizeof v ? size : sizeof v);
}

/* After a join that returned false (nobody ran the job): the arg of the
 * fork it joined. Every such join leaves t->top at the record, whose arg
 * only a fork writes; in a release build the future still names the
 * record too, and it is already in a register. Read from there rather
 * than kept from the fork, the argument needs no register across the
 * call between fork and join (what the value form's reload of its
 * argument expression costs). */
CLOVE__INLINE void *clove__tjoined_arg(clove_task *t, const clove_future *f)
{
#if CLOVE_DEBUG
    (void)f;
    return t->top->arg;
#else
    (void)t;
    return f->job->arg;
#endif
}

/* Parts shared by both kinds of task: the argument block's type, and x,
 * a local copy of the arguments, from a record's arg p (the argument
 * itself, packed, or the address of the block). */
#define CLOVE__TARGS_STRUCT(name, N, ...)                                                   \
    struct clove__targs_##name {                                                            \
        CLOVE__TFIELDS_##N(__VA_ARGS__)                                                     \
    }
#define CLOVE__TARGS_LOAD(name, N, x, p, ...)                                               \
    struct clove__targs_##name x;                                                           \
    if (CLOVE__TPACK_##N(__VA_ARGS__))                                                      \
        clove__tunpack_arg(&x, sizeof x, (p));                                              \
    else                                                                                    \
        x = *(struct clove__targs_##name *)(p)

#define CLOVE__TASK_GEN(R, name, N, ...) CLOVE__TASK_GEN_(R, name, N, __VA_ARGS__)
#define CLOVE__TASK_GEN_(R, name, N, ...)                                                   \
    CLOVE__TARGS_STRUCT(name, N, __VA_ARGS__);                                              \
    struct clove__task_##name {                                                             \
        clove_future f;                                                                     \
        struct clove__targs_##name a;                                                       \
        R r; /* the result: from the record, or written by the job */                       \
    };                                                                                      \
    /* The job, when R fits the record: the arguments from arg. */                          \
    CLOVE__TUNUSED static int64_t clove__tjob_##name(clove_task *t, void *p)                \
    {                                                                                       \
        CLOVE__TARGS_LOAD(name, N, x, p, __VA_ARGS__);                                      \
        R r = name(t, CLOVE__TGET_##N(x.));                                                 \
        return clove__tpack_result(&r, sizeof r);                                           \
    }                                                                                       \
    /* The job when it does not, and CLOVE_RUN's: the result into the handle. */            \
    CLOVE__TUNUSED static void clove__tjob_big_##name(clove_task *t, void *p)               \
    {                                                                                       \
        struct clove__task_##name *v = (struct clove__task_##name *)p;                      \
        v->r = name(t, CLOVE__TGET_##N(v->a.));                                             \
    }                                                                                       \
    CLOVE__TUNUSED CLOVE__INLINE void clove__tfork_##name(clove_task *t, struct clove__task_##name *v,     \
                                           CLOVE__TPARAMS_##N(__VA_ARGS__))                 \
    {                                                                                       \
        CLOVE__TSET_##N(v->a.)                                                              \
        if (sizeof(R) <= sizeof(int64_t))                                                   \
            clove_fork_value(t, &v->f, clove__tjob_##name,                                  \
                             CLOVE__TPACK_##N(__VA_ARGS__)                                  \
                                 ? clove__tpack_arg(&v->a, sizeof v->a)                     \
                                 : (void *)&v->a);                                          \
        else                                                                                \
            clove_fork(t, &v->f, clove__tjob_big_##name, v);                                \
    }                                                                                       \
    CLOVE__TUNUSED CLOVE__INLINE R clove__tjoin_##name(clove_task *t, struct clove__task_##name *v)        \
    {                                                                                       \
        if (sizeof(R) <= sizeof(int64_t)) {                                                 \
            int64_t x;                                                                      \
            if (clove_join_value(t, &v->f, &x)) {                                           \
                clove__tunpack_result(&v->r, sizeof v->r, x);                               \
                return v->r;                                                                \
            }                                                                               \
        } else if (clove_join(t, &v->f)) {                                                  \
            return v->r;                                                                    \
        }                                                                                   \
        if (CLOVE__TPACK_##N(__VA_ARGS__) && sizeof(R) <= sizeof(int64_t)) {                \
            struct clove__targs_##name x;                                                   \
            clove__tunpack_arg(&x, sizeof x, clove__tjoined_arg(t, &v->f));                 \
            return name(t, CLOVE__TGET_##N(x.));                                            \
        }                                                                                   \
        return name(t, CLOVE__TGET_##N(v->a.));                                             \
    }                                                                                       \
    CLOVE__TUNUSED static inline int clove__trun_##name(clove_pool *pool, bool dflt, R *out,               \
                                         CLOVE__TPARAMS_##N(__VA_ARGS__))                   \
    {                                                                                       \
        struct clove__task_##name v;                                                        \
        CLOVE__TSET_##N(v.a.)                                                               \
        int rc = dflt ? clove_run(clove__tjob_big_##name, &v)                               \
                      : clove_pool_run(pool, clove__tjob_big_##name, &v);                   \
        if (rc == 0 && out != NULL)                                                         \
            *out = v.r;                                                                     \
        return rc;                                                                          \
    }                                                                                       \
    typedef R clove__tjoin_t_##name(clove_task *, struct clove__task_##name *)

#define CLOVE__VOID_TASK_GEN(name, N, ...) CLOVE__VOID_TASK_GEN_(name, N, __VA_ARGS__)
#define CLOVE__VOID_TASK_GEN_(name, N, ...)                                                 \
    CLOVE__TARGS_STRUCT(name, N, __VA_ARGS__);                                              \
    struct clove__task_##name {                                                             \
        clove_future f;                                                                     \
        struct clove__targs_##name a;                                                       \
    };                                                                                      \
    CLOVE__TUNUSED static int64_t clove__tjob_##name(clove_task *t, void *p)                \
    {                                                                                       \
        CLOVE__TARGS_LOAD(name, N, x, p, __VA_ARGS__);                                      \
        name(t, CLOVE__TGET_##N(x.));                                                       \
        return 0;                                                                           \
    }                                                                                       \
    CLOVE__TUNUSED static void clove__tentry_##name(clove_task *t, void *p)                 \
    {                                                                                       \
        struct clove__targs_##name *x = (struct clove__targs_##name *)p;                    \
        name(t, CLOVE__TGET_##N(x->));                                                      \
    }                                                                                       \
    CLOVE__TUNUSED CLOVE__INLINE void clove__tfork_##name(clove_task *t, struct clove__task_##name *v,     \
                                           CLOVE__TPARAMS_##N(__VA_ARGS__))                 \
    {                                                                                       \
        CLOVE__TSET_##N(v->a.)                                                              \
        clove_fork_value(t, &v->f, clove__tjob_##name,                                      \
                         CLOVE__TPACK_##N(__VA_ARGS__) ? clove__tpack_arg(&v->a, sizeof v->a) \
                                                       : (void *)&v->a);                    \
    }                                                                                       \
    CLOVE__TUNUSED CLOVE__INLINE void clove__tjoin_##name(clove_task *t, struct clove__task_##name *v)     \
    {                                                                                       \
        int64_t r;                                                                          \
        if (clove_join_value(t, &v->f, &r))                                                 \
            return;                                                                         \
        if (CLOVE__TPACK_##N(__VA_ARGS__)) {                                                \
            struct clove__targs_##name x;                                                   \
            clove__tunpack_arg(&x, sizeof x, clove__tjoined_arg(t, &v->f));                 \
            name(t, CLOVE__TGET_##N(x.));                                                   \
        } else {                                                                            \
            name(t, CLOVE__TGET_##N(v->a.));                                                \
        }                                                                                   \
    }                                                                                       \
    CLOVE__TUNUSED static inline int clove__trun_##name(clove_pool *pool, bool dflt,                       \
                                         CLOVE__TPARAMS_##N(__VA_ARGS__))                   \
    {                                                                                       \
        struct clove__targs_##name x;                                                       \
        CLOVE__TSET_##N(x.)                                                                 \
        return dflt ? clove_run(clove__tentry_##name, &x)                                   \
                    : clove_pool_run(pool, clove__tentry_##name, &x);                       \
    }                                                                                       \
    typedef void clove__tjoin_t_##name(clove_task *, struct clove__task_##name *)

#ifdef __cplusplus
}
#endif

#endif /* CLOVE_H */
