/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the pool's layout, its invariants and its lock rules.
 *
 * The overall design (see docs/design.md for the long version):
 * - Each task (a worker thread's, or that of a thread inside
 *   clove_pool_run) keeps its forks in a job stack: an array of records
 *   (struct clove__job, clove.h) in nesting order, the oldest at the
 *   bottom. Only the owner moves through it: fork writes the record at top
 *   and advances top, join moves top back, and the owner's own heartbeat
 *   handler takes the oldest queued record (bottom) to reserve or share
 *   it, advancing bottom. [base, bottom) are reserved or shared,
 *   [bottom, top) queued. A record never moves, so another worker can run
 *   a shared one in place and write its result there.
 * - A job stack is one mapping of pool->job_depth records between two
 *   guard pages (jobstack.c): the fork checks no capacity. Workers and the
 *   pool's entry task (clove_pool_run's, see struct clove_pool) own theirs
 *   for the pool's life; a thread entering while the entry task is in use
 *   takes one from the pool's spares, mapped only while several threads
 *   are inside at once, and gives it back.
 * - A shared record goes into the pool's ring of shared jobs together
 *   with its owner, alone or with the next ones as a range. Idle tasks
 *   take ranges from the ring in FIFO order and claim, run and mark done
 *   each record with atomic operations on its state word; the owner's join
 *   claims back a record nobody claimed (share.c, "Claims").
 * - One mutex, pool->lock, guards all bookkeeping: the ring, the idle
 *   list, the registered list and the cold fields of every task (not the
 *   records' states: above). Only constant-time work runs under it (the
 *   heartbeat thread's walk over registered tasks is linear in their
 *   number), never user code, and nothing sleeps while holding it. Wake-ups
 *   (futex syscalls) are issued after unlocking.
 * - Sleeping is per task: a task that has nothing to do puts itself on the
 *   idle list with task->sleep = IDLE, watches that word for a while and
 *   parks on it; whoever gives it something to do (a share, the completion
 *   of the job it waits for, pool destruction) removes it from the idle
 *   list, sets sleep = WOKEN under the lock and, if it had parked, wakes it
 *   after unlocking. So every wake-up has a reason and wakes exactly one
 *   task.
 * - The heartbeat thread sets the flag of every registered, non-idle task
 *   once per interval, but only while some task is idle and some
 *   clove_pool_run is in progress. Otherwise there is nobody to share with,
 *   or nothing to share, and a heartbeat would be pure cost: it sleeps until
 *   a task goes idle or a run starts.
 * - Long leaves (a stretch with no fork and no tick) would leave the owner's
 *   queue unshared. So in pools with workers each task keeps its oldest
 *   fork *reserved*: taken out of the list by its own heartbeat handler and
 *   published in task->reserve. The heartbeat thread, finding a task that
 *   has not answered the previous heartbeat, claims the reserve with a
 *   compare-and-swap under the lock and shares it as the owner would have;
 *   the owner claims it back at its join with the same compare-and-swap,
 *   without the lock. The reserved record's fn is NULL (moved to out.run),
 *   so only its join takes the slow path: fork/join stay plain loads and
 *   stores (share.c).
 * - Requests: a taker that finishes a shared job and finds the ring empty
 *   raises the job owner's heartbeat word with a request, which the owner
 *   answers at its next fork instead of the next beat. After a short job
 *   (wide fan-out: a loop of forks leaves many small sibling records) the
 *   answer is a batch of its oldest records, one ring entry, which the
 *   taker runs as a splittable range (share.c, "Requests and batches").
 * The protocol is model-checked with spin: see model/README.md, which maps
 * each part of model/clove.pml to the functions here.
 */
#ifndef CLOVE_INTERNAL_H
#define CLOVE_INTERNAL_H

#include "clove.h"
#include "fault.h"
#include "port.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define CLOVE__COLD __attribute__((cold, noinline))
#define CLOVE__NOINLINE __attribute__((noinline))
#define CLOVE__NORETURN __attribute__((noreturn))
#else
#define CLOVE__COLD
#define CLOVE__NOINLINE
#define CLOVE__NORETURN
#endif

#define CLOVE__CACHE_LINE 64

/* A loop chunk (clove_for, clove_reduce) aims at interval / CHUNK_DIV, so
 * that a beat is answered within an eighth of an interval; the heartbeat
 * thread's probe after a beat comes that long after it (heartbeat.c). */
#define CLOVE__CHUNK_DIV 8

/*
 * ThreadSanitizer in the user's program. The library is normally built
 * without it, so a program compiled with -fsanitize=thread sees neither
 * the library's atomics nor the happens-before edges they make between its
 * own code on two threads, and reports races on correct code. Where an
 * atomic (not the pool lock, which TSan intercepts) carries such an edge,
 * the library tells the TSan runtime, if the process has one:
 *   - a record published as a reserve (release) and claimed by the
 *     heartbeat thread's CAS: the fork's writes reach the job's taker;
 *   - a record made SHARED (release) and claimed by a runner's CAS, which
 *     may take no lock (share.c, "Claims"): the fork's writes reach the
 *     runner;
 *   - a record made DONE by its runner's exchange (release) and seen DONE
 *     at its join: the job's writes reach the owner;
 *   - the entry task handed from one clove_pool_run to the next
 *     (entry_gen): the job stack and task fields that the inline fork/join
 *     writes on one thread reach the next thread to enter.
 * The runtime's functions are weak references, NULL without it: the
 * ordinary library pays one predictable branch on those paths (none of
 * them is the fork/join fast path). A library built with the sanitizer
 * itself (CLOVE_TSAN, or the compiler's own macros) sees its atomics and
 * needs none, so there the calls are left out.
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CLOVE__SELF_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || (defined(CLOVE_TSAN) && CLOVE_TSAN)
#undef CLOVE__SELF_TSAN
#define CLOVE__SELF_TSAN 1
#endif
#if (defined(__GNUC__) || defined(__clang__)) && defined(__ELF__) && !defined(CLOVE__SELF_TSAN)
extern void __tsan_acquire(void *addr) __attribute__((weak));
extern void __tsan_release(void *addr) __attribute__((weak));
/* Whether the process has a TSan runtime. */
#define clove__tsan_present() (__tsan_release != NULL)
/* What this thread did so far happens-before a later clove__tsan_acquire
 * of addr on another thread. */
static inline void clove__tsan_release(void *addr)
{
    if (__tsan_release)
        __tsan_release(addr);
}
static inline void clove__tsan_acquire(void *addr)
{
    if (__tsan_acquire)
        __tsan_acquire(addr);
}
#else
#define clove__tsan_present() 0
#define clove__tsan_release(addr) ((void)(addr))
#define clove__tsan_acquire(addr) ((void)(addr))
#endif

/*
 * Record states (struct clove__job.state), meaningful only once the owner
 * took the record off its queue (fn == NULL). Bits 0..2 are the tag; bit 3
 * is set when the record is a clove_fork_value one (its job is out.run,
 * not out.vfn), so that the runner calls the right one and the join can
 * tell a join of the wrong form even after the job was replaced by the
 * result. No fork writes the state: a queued record's is left as the
 * library last set it, never SHARED (a record is SHARED only while its
 * share is live).
 *
 * The word is accessed atomically (clove__state): once shared, a record's
 * state leaves the pool lock, and a runner holding a stale range (share.c,
 * "Claims") may load it at any time. RESERVED belongs to whoever holds the
 * claim on task->reserve. From SHARED (the record is in a ring entry,
 * fn, arg and out.run published by a release store of the state):
 *   SHARED -> TAKEN   a runner's claim (compare-and-swap);
 *   SHARED -> FREED   its owner's claim back at the join (compare-and-swap);
 *   TAKEN -> TAKEN | WAITER  the owner's compare-and-swap when it must wait;
 *   TAKEN -> DONE     the runner's exchange after it stored the result.
 * RESERVED, SHARED and DONE carry, from bit 20 up, the owner's noffered
 * count when it reserved or shared the record (modulo 2^12 on 32-bit
 * targets, 2^44 on 64-bit), which lets the cold join path check LIFO order.
 * TAKEN carries instead, in the bits above 4, the runner's top when it
 * claimed the record (a record address: records are 32-byte aligned), for
 * helping's leapfrog rule; the runner puts the sequence number back with
 * DONE. A record joined through the slow path is left FREED, so that a
 * second join of it is caught in every build.
 */
#define CLOVE__TAG_MASK ((uintptr_t)0x7)
#define CLOVE__KIND_VALUE ((uintptr_t)0x8)   /* a clove_fork_value record */
#define CLOVE__TAG_FREED ((uintptr_t)0x2)    /* joined through the slow path */
#define CLOVE__TAG_RESERVED ((uintptr_t)0x4) /* in task->reserve (share.c) */
#define CLOVE__TAG_SHARED ((uintptr_t)0x5)   /* in a ring entry, not claimed */
#define CLOVE__TAG_TAKEN ((uintptr_t)0x6)    /* claimed by a runner */
#define CLOVE__TAG_DONE ((uintptr_t)0x7)     /* finished; result published */
#define CLOVE__WAITER ((uintptr_t)0x10)      /* TAKEN: the owner waits for DONE */
#define CLOVE__FROM_MASK (~(uintptr_t)0x1F)  /* TAKEN: the runner's top */
#define CLOVE__SEQ_SHIFT 20
#define CLOVE__SEQ_MASK (UINTPTR_MAX >> CLOVE__SEQ_SHIFT)

_Static_assert(sizeof(struct clove__job) % 32 == 0,
               "records must be 32-byte multiples: TAKEN keeps a record address above bit 4");

/* The state word of j as an atomic object (its field is a plain uintptr_t
 * in clove.h, which C++ reads too; the header's own stores to it are
 * relaxed atomic stores). */
static inline _Atomic uintptr_t *clove__state(const struct clove__job *j)
{
    return (_Atomic uintptr_t *)(void *)(uintptr_t)&j->state;
}

static inline uintptr_t clove__state_get(const struct clove__job *j)
{
    return atomic_load_explicit(clove__state(j), memory_order_relaxed);
}

static inline void clove__state_set(struct clove__job *j, uintptr_t v)
{
    atomic_store_explicit(clove__state(j), v, memory_order_relaxed);
}

/* Scheduler counters of one worker index (clove_pool_stats). Each slot
 * has one writer at a time: the task that has that index (worker indices
 * are unique among live tasks, and a slot passes from one external thread
 * to the next through the pool lock). The writer updates with relaxed
 * load + store, readers load relaxed: no read-modify-write anywhere. */
enum {
    CLOVE__ST_HEARTBEATS,
    CLOVE__ST_SHARED,
    CLOVE__ST_RECLAIMED,
    CLOVE__ST_RAN,
    CLOVE__ST_SLEEPS,
    CLOVE__ST_SLEEP_NS,
    CLOVE__ST_WAITS,
    CLOVE__ST_WAIT_NS,
    CLOVE__ST_STOLEN,
    CLOVE__ST_HANDED,
    CLOVE__ST_ANSWERED,
    CLOVE__NSTATS
};

/* Trace: a ring of the last `cap` events of one slot (see stats.c). */
enum {
    CLOVE__EV_JOB,
    CLOVE__EV_WAIT,
    CLOVE__EV_SLEEP,
    CLOVE__EV_BEAT,
    CLOVE__EV_SHARE,
    CLOVE__EV_RUN,
    CLOVE__EV_STOLEN
};
struct clove__event {
    uint64_t t0, t1; /* CLOCK_MONOTONIC ns; t1 == t0 for instants */
    uint32_t kind;
    uint32_t n; /* CLOVE__EV_SHARE: the records handed out (a batch's
                 * all); 0 for the other kinds */
};
struct clove__trace {
    size_t cap;
    uint64_t n; /* events ever recorded; the last min(n, cap) are kept */
    struct clove__event ev[];
};

struct clove__slot {
    _Alignas(CLOVE__CACHE_LINE) _Atomic uint64_t c[CLOVE__NSTATS];
    struct clove__trace *trace; /* NULL when not tracing */
};

/* One shared range, in the ring or in a worker's mailbox (share.c, "The
 * handoff"): the records job .. job + n - 1 of owner's job stack, a batch
 * when n > 1. Made under the lock by the owner's share, or by a batch's
 * runner splitting off records it has not claimed (split_batch), which
 * stay SHARED and owner's. An entry whose first record is
 * no longer SHARED is dead (its owner claimed it back, and every newer one
 * first) and is dropped when found. */
struct clove__entry {
    struct clove__job *job;
    clove_task *owner;
    uint32_t n;
    uint32_t gen; /* owner's run_gen when shared: its runner's request
                   * and beats name it (CLOVE__HB_GEN_SHIFT) */
};

/*
 * A task as the library sees it: the public struct clove_task (clove.h:
 * what the inline code reads) first, then the scheduler's bookkeeping.
 * Every clove_task of the library is the pub member of one of these, so
 * clove__tk(t) converts. Trailing comments say who may touch a field.
 */
/* Values of a task's sleep word (share.c, clove__sleep_locked): idle,
 * awake and watching the word (or about to); parked in the system's wait
 * (or about to be), so a waker must call clove__wake_one; woken. Model:
 * sleepw in model/clove.pml. */
#define CLOVE__SLEEP_IDLE 0u
#define CLOVE__SLEEP_WOKEN 1u
#define CLOVE__SLEEP_PARKED 2u

struct clove__task {
    struct clove_task pub;
    clove_task *reg_prev, *reg_next;   /* lock: registered tasks (pool->registered) */
    clove_task *idle_prev, *idle_next; /* lock: idle list (pool->idle_first) */
    struct clove__job *waiting_on;     /* lock: the shared record this task waits for */
    struct clove__entry mail;          /* the handoff (share.c): a range handed to
                                        * this task while it is idle in its
                                        * worker loop, job NULL when none.
                                        * Written under the lock, while the task
                                        * is on the idle list, just before the
                                        * waker's release exchange of its sleep
                                        * word; read and cleared by the task
                                        * after its acquire load of WOKEN, and not
                                        * written again before it is idle again */
    _Atomic uint32_t sleep;            /* atomic: CLOVE__SLEEP_*; the sleeper
                                        * stores IDLE under the lock and may
                                        * CAS it to PARKED; the waker exchanges
                                        * in WOKEN (release) under the lock, the
                                        * sleeper loads it (acquire) */
    uint32_t idle;                     /* lock: 1 while in the idle list */
    uint32_t noffered;                 /* owner: reserved or shared, not yet joined
                                        * (they are the records [base, bottom)) */
    uint32_t batch_n;                  /* owner: records in the batch that answers
                                        * the next request (1 .. CLOVE__BATCH_MAX) */
    /* Direct requests (share.c): a pool worker in its worker loop asks
     * the owner of the range it ran for more, and the owner answers into
     * the worker's mailbox at its next fork, without the lock. */
    _Atomic(clove_task *) asker;       /* atomic: the worker asking this task,
                                        * or NULL: set by the asker's CAS from
                                        * NULL (release), taken by this task's
                                        * exchange (acquire), or withdrawn by
                                        * the asker's CAS back to NULL */
    _Atomic uint32_t answer;           /* atomic: CLOVE__ANSWER_* of this
                                        * task's request: the asker stores
                                        * WAIT before asking, the answerer
                                        * RANGE (mail written) or NOTHING with
                                        * release, the asker loads it acquire */
    uint32_t ask_gen, ask_req;         /* asker: the owner's run_gen and the
                                        * request's kind (CLOVE__HB_REQ or
                                        * REQ_ONE); written before its CAS of
                                        * asker, read by the task that took
                                        * it */
    const struct clove__job *ask_job;  /* asker, as ask_gen: a joiner's
                                        * awaited record, whose runner it
                                        * asks; NULL for a free worker */
    const struct clove__job *ask_from; /* asker, as ask_gen: that record's
                                        * runner's top when it took it */
    clove_task *ask_to;                /* owner: whom this worker asks first
                                        * when it asks (run_entry: the owner of
                                        * the range it ran), NULL when it does
                                        * not */
    uint64_t ask_until;                /* owner: it asks until then (ns) */
    uint64_t ask_pushes;               /* owner: the pool's ring_pushes when
                                        * it last saw the ring empty */
    unsigned ask_rr;                   /* owner: the worker index (nworkers:
                                        * the entry task) it last picked */
    bool asked;                        /* owner: it requested more from a task
                                        * (run_one_locked) and has neither slept
                                        * nor taken a ring entry since */
    struct clove__slot *slot;          /* owner: counters and trace; constant */
    /* The reserved record (see clove__job) or NULL. atomic: set non-NULL
     * only by the owner (release store, no lock); cleared by whoever
     * claims it with a compare-and-swap: the owner at the join (no lock),
     * the owner's heartbeat handler or the heartbeat thread (both under the
     * lock; the heartbeat thread's CAS is acq_rel). */
    _Atomic(struct clove__job *) reserve;
    struct clove__job *own_reserve;    /* owner: what it last reserved, until
                                        * joined or shared */
    _Atomic uint64_t stolen_ns;        /* atomic: relaxed store by the heartbeat
                                        * thread before its CAS of reserve, read
                                        * by the owner after seeing that CAS */
    uint32_t nest;                     /* owner: shared jobs running on this
                                        * thread, one inside the other (share.c,
                                        * "Helping") */
    const void *run_ctx;               /* owner: the clove_pool_run in progress on
                                        * this task (pool.c's struct run_ctx, in
                                        * its frame); NULL between runs and for
                                        * pool workers */
    bool run_shared;                   /* owner: the clove_pool_run in progress
                                        * on this task has shared through a
                                        * beat or had its reserve stolen, so it
                                        * is old enough to answer a direct
                                        * request (share.c, answer_ask); reset
                                        * when a run starts */
    _Atomic uint32_t run_gen;          /* atomic: the generation of the
                                        * clove_pool_run in progress on this
                                        * task, always odd (wraps; constant
                                        * for pool workers): a registered
                                        * task's goes up by two per run
                                        * (clove__task_init, lock held), the
                                        * entry task's is the run's entry_gen
                                        * (stored relaxed by its owner);
                                        * sharers read it while the owner has
                                        * a record SHARED, so within that run */
    uint64_t run_ns;                   /* lock: clove_pool_run's task, when the
                                        * heartbeat thread first saw the run (0
                                        * until then, and for workers); reset at
                                        * registration (the entry task's: by
                                        * heartbeat_pass at a new run), set and
                                        * read by its age gate */
};

#define clove__tk(t) ((struct clove__task *)(t))

/* The task of a thread that enters clove_pool_run while the entry task is
 * in use (pool.c), with counters of its own for an index >= nthreads.
 * Allocated by the pool and kept in its spares between runs. */
struct clove__extern {
    struct clove__task task;          /* first: its pub is the clove_task */
    struct clove__extern *next_spare; /* lock: p->spare_tasks */
    struct clove__slot own;
};

/* The most records in one batch (share.c): the owner shares them under the
 * lock, so this bounds that critical section. */
#define CLOVE__BATCH_MAX 64u

/* Bits of clove_task.heartbeat besides BEAT and ARM (clove.h), always
 * stored with BEAT: a task that ran one of this task's shared jobs found
 * nothing else to do (a request, share.c). REQ: the job was short, answer
 * with a batch; REQ_ONE: it was not, answer with one record. */
#define CLOVE__HB_REQ 4u
#define CLOVE__HB_REQ_ONE 8u
/* A word stored by another thread for one run of the owner carries, in
 * its bits from this one up, the low bits of that run's run_gen (odd, so
 * the tag is never 0): a request (the run whose range its requester ran),
 * the heartbeat thread's beat, the ramp-up's beat. One that lands after
 * that run ended (the owner returned and entered clove_pool_run again
 * before it was stored: the entry task changes runs without the lock) is
 * dropped, not answered by a share in a run that may be far too short for
 * one (heartbeat_beat). Words the owner stores itself, and beats of
 * workers (whose run never ends), carry no tag. */
#define CLOVE__HB_GEN_SHIFT 8u
/* Values of a task's answer word (share.c, "Direct requests"). */
#define CLOVE__ANSWER_WAIT 0u
#define CLOVE__ANSWER_RANGE 1u
#define CLOVE__ANSWER_NOTHING 2u
static inline uint32_t clove__hb_gen(uint32_t run_gen)
{
    return run_gen << CLOVE__HB_GEN_SHIFT;
}

struct clove_pool {
    /* -- Constant after clove_pool_create. ------------------------------ */
    unsigned nthreads;      /* workers including the calling thread */
    unsigned heartbeat_us;  /* interval between heartbeats */
    uint64_t spin_ns;       /* how long a task that goes idle watches for
                             * a wake-up before it sleeps (share.c,
                             * clove__sleep_locked); 0: it sleeps at once */
    unsigned nworkers;      /* pool-owned threads: nthreads - 1 */
    unsigned ring_cap;      /* power of two */
    size_t job_depth;       /* records in every job stack of the pool */
    size_t jobs_keep;       /* of those, the first ones whose pages are
                             * never given back (clove__jobs_keep) */
    struct clove__task *workers; /* [nworkers] tasks of the pool-owned threads */
    clove__thread *threads; /* [nworkers] */
    clove__thread hb_thread; /* valid when nworkers > 0 */
    struct clove__slot *slots; /* [nthreads], by worker index */
    char *trace_path;          /* NULL when not tracing */
    int trace_fd;              /* the trace file, open from create to destroy */
    bool trace_created;        /* clove_pool_create created that file */
    uint64_t t_origin;         /* trace time 0 (ns) */
    unsigned flags;         /* config.flags */
    void (*on_start)(unsigned, void *); /* config.on_thread_start */
    void (*on_exit)(unsigned, void *);  /* config.on_thread_exit */
    void *hook_arg;
    clove__cpus cpus;       /* the creator's CPUs (CLOVE_PIN_WORKERS) */

    /* -- pool->lock protects: the ring (ring, ring_head, ring_tail), the
     *    idle list (idle_first, and every task's idle_prev/idle_next/idle),
     *    the registered list (registered, every task's reg_prev/reg_next
     *    and run_ns; external worker indices are handed out from it, see
     *    external_index_locked), entry_seen (not the entry task itself:
     *    entry_gen below), overflow, spare_tasks, every task's
     *    waiting_on and sleep stores, and stopping's transition to 1.
     *    The heartbeat thread's claim on a task's reserve is made under
     *    it (the owner's claim is lock-free: share.c). Not under it: the
     *    state words of shared records (atomic, share.c "Claims"), and
     *    the slots' counters (one writer per slot at a time, struct
     *    clove__slot). -------------------------------------------------- */
    clove__mutex lock;
    struct clove__entry *ring; /* [ring_cap] FIFO of shared jobs; a NULL
                                * job is a reclaimed slot (a hole) */
    uint64_t ring_head;        /* next slot to take */
    uint64_t ring_tail;        /* next slot to fill; tail - head <= ring_cap */
    _Atomic uint64_t ring_pushes; /* atomic: entries ring_push added, stored
                                   * under the lock, loaded without it by a
                                   * worker asking directly: while it has
                                   * not moved since the ring was seen
                                   * empty, the ring is empty
                                   * (clove__ask_locked) */
    clove_task *idle_first;    /* idle list, most recently idle first */
    clove_task *registered;    /* external tasks inside clove_pool_run */
    uint64_t overflow[CLOVE__NSTATS]; /* counters of finished external tasks
                                       * whose index was >= nthreads */
    struct clove__extern *spare_tasks; /* tasks for clove_pool_run, with their
                                        * job stacks, not in use (the lock,
                                        * as above) */

    /* Tasks in the idle list. Written under the lock: the increment
     * (idle_push_locked) is a seq_cst store, half of the heartbeat
     * thread's sleep handshake (hb_sleep, heartbeat.c); the decrement
     * (clove__idle_remove_locked) a release store, so that an owner whose
     * acquire hint sees it also sees a steal made before it. Read without
     * the lock as a hint: the heartbeat handler skips the lock when nobody
     * is idle. A stale read only delays or wastes one heartbeat. */
    _Atomic uint32_t idle_count;

    /* -- Heartbeat thread handshake (lock-free, see heartbeat.c). ---- */
    /* Low 32 bits: clove_pool_run calls in progress on registered tasks
     * (the entry task's are counted by entry_gen; clove__runs_now adds
     * both). High 32 bits: how many have started (wraps), so the heartbeat
     * thread can tell "idle for a while" from "between two short runs". */
    _Alignas(CLOVE__CACHE_LINE) _Atomic uint64_t runs;
    _Atomic uint32_t hb_asleep; /* 1 while the heartbeat thread sleeps
                                 * until a heartbeat may be useful (seq_cst;
                                 * see hb_sleep and clove__hb_kick) */
    _Atomic uint32_t stopping;  /* 1 once destroy began; also the word the
                                 * heartbeat thread's timed sleep waits on */
    /* Who uses entry (below), lock-free: even while nobody does, odd while
     * a clove_pool_run does. That run took it with a compare-and-swap
     * from even to odd (seq_cst: it also counts the run, half of hb_sleep's
     * handshake; acquire: it sees the last run's writes to entry) and
     * gives it back with a release store of the next even value, so every
     * run on entry has an odd value of its own, by which the heartbeat
     * thread tells a new run from the last one; it is also the run's
     * run_gen. The heartbeat thread reads it once per pass, so a pass may
     * still act on entry just after the run it judged ended and the next
     * began: its beat carries that run's generation, which the next run
     * drops (CLOVE__HB_GEN_SHIFT), and it steals a reserve only when it
     * reads entry_gen unchanged after loading the reserve
     * (clove__steal_locked). */
    _Atomic uint32_t entry_gen;

    /* -- The entry task. ------------------------------------------------ */
    /* The task of a clove_pool_run that finds entry_gen even: the usual
     * case of one thread at a time entering again and again costs one
     * compare-and-swap instead of taking the lock twice to register a task
     * of its own (threads entering while it is in use do that). Worker
     * index 0, the pool's first job stack. Its fields are its run's, as a
     * task's are its owner's, with the same locking; between runs nothing
     * is queued, reserved or shared on it. The heartbeat thread looks at
     * it only while entry_gen is odd; entry_seen (the odd value it last
     * saw) and entry.run_ns are its own, under the lock. On cache lines of
     * its own: its run writes its first fields at every fork. */
    _Alignas(CLOVE__CACHE_LINE) struct clove__task entry;
    uint32_t entry_seen;
};

/* clove_pool_run calls in progress (low 32 bits) and begun (high 32 bits,
 * wrapping), in the layout of p->runs: the registered ones count in
 * p->runs (run_enter, run_leave), the entry task's in p->entry_gen (odd
 * while in progress, two more per run). Both loads seq_cst: half of the
 * heartbeat thread's sleep handshake (hb_sleep in heartbeat.c). */
static inline uint64_t clove__runs_now(clove_pool *p)
{
    uint64_t r = atomic_load(&p->runs);
    uint32_t g = atomic_load(&p->entry_gen);
    return r + ((uint64_t)((g >> 1) + (g & 1)) << 32) + (g & 1);
}

/* Whether a fork ever wrote the first record past the kept part of t's
 * job stack (jobstack.c): every record a fork wrote has a non-zero fn (a
 * job, or CLOVE__VOID_JOB) or, once offered, a non-zero state, and a page
 * never written, or given back, reads as zeros (the first read of one
 * maps the shared zero page: no memory). Nothing queued or offered. */
static inline bool clove__jobs_touched(const clove_task *t)
{
    const clove_pool *p = t->pool;
    if (p->jobs_keep == p->job_depth)
        return false;
    const struct clove__job *j = t->base + p->jobs_keep;
    return j->fn != NULL || clove__state_get(j) != 0;
}

/* Locking helpers: a pthread mutex cannot fail to lock or unlock unless
 * the pool is corrupt, so failures abort. */
void clove__lock(clove_pool *p);
void clove__unlock(clove_pool *p);

/* The library's allocators: each fails on demand under the
 * fault-injection hook (fault.h), as one CLOVE__FAULT_ALLOC point. */
static inline void *clove__malloc(size_t size)
{
    return clove__fault_hit(CLOVE__FAULT_ALLOC) ? NULL : malloc(size);
}

static inline void *clove__calloc(size_t n, size_t size)
{
    return clove__fault_hit(CLOVE__FAULT_ALLOC) ? NULL : calloc(n, size);
}

/* Zeroed, cache-line aligned; released with clove__aligned_free(). */
static inline void *clove__aligned_zalloc(size_t size)
{
    void *mem = clove__fault_hit(CLOVE__FAULT_ALLOC) ? NULL
                                                     : clove__aligned_alloc(CLOVE__CACHE_LINE, size);
    if (mem != NULL)
        memset(mem, 0, size);
    return mem;
}

/* stats.c */
/* Counters, and the trace if trace_path is not NULL or empty: its file is
 * opened (created if need be) here, so that a path that cannot be written
 * is EINVAL, with one line on stderr naming it and `from` (where the path
 * came from). Returns 0, ENOMEM or EINVAL. */
int clove__stats_init(clove_pool *p, const char *trace_path, const char *from);
/* Frees the counters and trace buffers; writes the trace first if write. */
void clove__stats_fini(clove_pool *p, bool write);
void clove__trace_write(struct clove__trace *tr, uint32_t kind, uint64_t t0, uint64_t t1);
/* A share of n records at time t. */
void clove__trace_share(struct clove__trace *tr, uint64_t t, uint32_t n);

/* A heartbeat is pending for t (owner only): its loops, scopes and merges
 * split on it. ARM alone is not a beat. */
static inline bool clove__beat_pending(const clove_task *t)
{
    return (atomic_load_explicit(&t->heartbeat, memory_order_relaxed) & CLOVE__HB_BEAT) != 0;
}

static inline void clove__count(clove_task *t, int which, uint64_t v)
{
    _Atomic uint64_t *c = &clove__tk(t)->slot->c[which];
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

/* jobstack.c: map a job stack of depth records between two guard pages
 * (NULL when out of memory, or under the fault hook's ALLOC), unmap one. */
struct clove__job *clove__jobs_map(size_t depth);
void clove__jobs_unmap(struct clove__job *base, size_t depth);
/* The records at the start of every job stack of that depth whose pages
 * stay backed (the first 64 KiB, or all of them), and giving the pages
 * of the others back (madvise). Only on a job stack of a task with
 * nothing queued or offered (its run ended, or its worker is idle). */
size_t clove__jobs_keep(size_t depth);
void clove__jobs_trim(struct clove__job *base, size_t depth);

/* share.c */
void clove__task_init(clove_task *t, clove_pool *p, uint32_t index, struct clove__job *jobs);
/* Called with the lock held; returns with it held. Takes the oldest job
 * from the ring if there is one, runs it on t (unlocking around the call)
 * and marks it done. Returns false if the ring was empty. */
bool clove__run_one_locked(clove_task *t);
/* Called with the lock held: put t to sleep on the idle list until someone
 * sets t->sleep (a share, the job t waits for finishing, destroy). Returns
 * with the lock held and t removed from the idle list. */
void clove__sleep_locked(clove_task *t);
/* The same for a pool worker in its worker loop (waiting_on NULL), which
 * may be handed a range while it sleeps: it runs that range first, then
 * returns with the lock held, as clove__run_one_locked does. */
void clove__sleep_free_locked(clove_task *t);
/* A pool worker in its worker loop that just ran a range and found the
 * ring empty (ask_to set) asks other tasks directly for more, and runs
 * what it is given. Lock held; returns with it held: false if it did not
 * ask, true if it did (then it looks at the ring again before sleeping). */
bool clove__ask_locked(clove_task *t);
/* t's owner leaves its clove_pool_run without joining its forks (the
 * thread is cancelled or exits inside fn: pool.c's run_abandoned): drop
 * what nobody took, wait until what others took is done, and leave t with
 * nothing queued or offered. Lock not held. */
void clove__task_abandon(clove_task *t);
/* Remove t from the idle list and mark it woken; if this returns true
 * (t had parked), the caller must call clove__wake_one(&t->sleep) after
 * unlocking. Lock held. */
bool clove__idle_remove_locked(clove_task *t);

/* The heartbeat thread's claim on w's reserve (lock held): if w has one and
 * a task is idle, share it and return the idle task taken off the idle
 * list, to be woken after unlocking; else NULL. */
clove_task *clove__steal_locked(clove_task *w, uint32_t gen);

/* heartbeat.c: the heartbeat thread's function; clove__hb_kick wakes it
 * if it sleeps (call after making runs or idle_count non-zero, without
 * holding the lock). */
void *clove__heartbeat_main(void *pool);
void clove__hb_kick(clove_pool *p);
/* pool.c: make t (NULL: none) the calling thread's current task, as
 * clove__current() (clove.h) returns it, in place of the one it had. */
void clove__set_current(clove_task *t);

/* debug.c */
/* Report a misuse and abort. site is a code address in the user's code
 * that the report names (the caller of the misused call, or the job or fn
 * that misbehaved); NULL for none. */
CLOVE__COLD CLOVE__NORETURN void clove__misuse(const char *call, const char *what,
                                               const void *site);
/* The code address this function will return to: in the user's code for
 * the entry points, and for the inline fork/join, whose debug and slow
 * paths are called straight from the caller's frame. */
#if defined(__GNUC__) || defined(__clang__)
#define CLOVE__CALLER() __builtin_return_address(0)
/* The calling function's frame address (NULL where unknown). */
#define CLOVE__FRAME() __builtin_frame_address(0)
#else
#define CLOVE__CALLER() NULL
#define CLOVE__FRAME() NULL
#endif
/* A function pointer (any type; an lvalue) as a code address, for
 * clove__misuse. */
#define clove__code_addr(fn) clove__fn_bytes(&(fn), sizeof(fn))
static inline const void *clove__fn_bytes(const void *fn, size_t size)
{
    const void *a = NULL;
    if (size == sizeof a)
        memcpy(&a, fn, sizeof a);
    return a;
}
/* The public name of a join: clove_join_value when value, else clove_join. */
static inline const char *clove__join_name(bool value)
{
    return value ? "clove_join_value" : "clove_join";
}
/* A future joined by the join of the other form (debug.c). */
CLOVE__COLD CLOVE__NORETURN void clove__kind_misuse(bool value, const void *site);

#endif
