/* SPDX-License-Identifier: MIT */
/*
 * share.c - the cold half of fork/join: sharing queued records at a
 * heartbeat, claiming and running shared jobs, claiming a shared record
 * back or waiting for it at its join, and sleeping when there is nothing
 * to do.
 *
 * Claims. A share puts a range of the owner's oldest records (one, or a
 * batch) into the pool's ring, or into a sleeping worker's mailbox (the
 * handoff), under the lock; from then on each record's
 * state word (internal.h) changes only by atomic operations, outside the
 * lock:
 *
 *   SHARED --(a runner's compare-and-swap)-------> TAKEN
 *   SHARED --(the owner's join, compare-and-swap)-> FREED: the join
 *                                                   returns false
 *   TAKEN  --(the owner must wait: CAS)-----------> TAKEN | WAITER
 *   TAKEN  --(the runner stored the result: exchange)-> DONE: the join
 *                                                   returns true
 *
 * Exactly one compare-and-swap wins each SHARED record, so each job runs
 * exactly once. A runner takes a range from the ring and claims its
 * records oldest first; the owner joins newest first and claims back
 * whatever nobody claimed, so it waits only for a record that is running.
 * When the runner's exchange finds the waiter bit, it takes the lock and
 * wakes the owner if the owner sleeps waiting for that record. The runner
 * touches a record only between its claim and its DONE, and the owner
 * leaves the join only after DONE or its own claim, so the record may be
 * reused at once.
 *
 * Nothing is removed from the ring when the owner claims records back: a
 * range whose first record is no longer SHARED is dead and dropped where
 * the lock holder finds it, and a runner that took a range may find its
 * records claimed back, or even forked and shared again. A claim
 * compares with a SHARED word it loaded, and a record is SHARED only
 * while its share is live (a fork never writes a SHARED tag: clove.h), so
 * a claim of a record of a later share than the range's is a valid claim.
 *
 * A record may first be RESERVED (see "The reserve" below): taken off the
 * bottom of the owner's queue by the owner's heartbeat handler, without
 * the lock, and published in task->reserve. From there either the owner
 * takes it back at its join (a compare-and-swap on task->reserve, no
 * lock), or it becomes SHARED, claimed by the same compare-and-swap under
 * the lock: by the owner's heartbeat handler, or by the heartbeat thread
 * when the owner does not answer a beat, e.g. in a long leaf
 * (clove__steal_locked).
 *
 * The claims are checked in model/claims.pml; the reserve, sleeping and
 * waking in model/clove.pml (model/README.md).
 */
#include "internal.h"
#include "wait.h"

#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* Idle list (lock held)                                                    */
/* ------------------------------------------------------------------------ */

static void idle_push_locked(clove_pool *p, clove_task *t)
{
    clove__tk(t)->idle = 1;
    clove__tk(t)->idle_prev = NULL;
    clove__tk(t)->idle_next = p->idle_first;
    if (p->idle_first)
        clove__tk(p->idle_first)->idle_prev = t;
    p->idle_first = t;
    /* seq_cst: clove__sleep_locked then reads hb_asleep (the heartbeat
     * thread's sleep handshake). */
    atomic_store(&p->idle_count,
                 atomic_load_explicit(&p->idle_count, memory_order_relaxed) + 1);
    /* Relaxed: it publishes nothing. Only the sleeper stores IDLE, under
     * the lock, so a waker's exchange to WOKEN (a release, under the same
     * lock, in clove__idle_remove_locked) comes after it; that exchange
     * and the sleeper's acquire load are the pair. */
    atomic_store_explicit(&clove__tk(t)->sleep, CLOVE__SLEEP_IDLE, memory_order_relaxed);
}

/* Take t off the idle list and mark it woken. True if it is parked (or
 * about to be), in the system's wait: then the caller must call
 * clove__wake_one on its sleep word, after unlocking; a task still
 * watching its word sees WOKEN by itself (a wake-up call then is
 * harmless). Model: idle_remove in model/clove.pml; storing sleep after
 * the wake instead of before hangs (BUG_WAKE_BEFORE_STATE), and so does
 * parking by a load and a store instead of the CAS (BUG_PARK_STORE). */
bool clove__idle_remove_locked(clove_task *t)
{
    clove_pool *p = t->pool;
    if (clove__tk(t)->idle_prev)
        clove__tk(clove__tk(t)->idle_prev)->idle_next = clove__tk(t)->idle_next;
    else
        p->idle_first = clove__tk(t)->idle_next;
    if (clove__tk(t)->idle_next)
        clove__tk(clove__tk(t)->idle_next)->idle_prev = clove__tk(t)->idle_prev;
    clove__tk(t)->idle_prev = clove__tk(t)->idle_next = NULL;
    clove__tk(t)->idle = 0;
    /* Release: an owner whose heartbeat handler sees this decrement (its
     * acquire idle_count hint) also sees a steal made before it under this
     * lock (clove__steal_locked). */
    atomic_store_explicit(&p->idle_count,
                          atomic_load_explicit(&p->idle_count, memory_order_relaxed) - 1,
                          memory_order_release);
    /* Release: everything the waker did under the lock is visible to the
     * sleeper once it sees WOKEN, even before it re-takes the lock. */
    return atomic_exchange_explicit(&clove__tk(t)->sleep, CLOVE__SLEEP_WOKEN,
                                    memory_order_release) == CLOVE__SLEEP_PARKED;
}

/* Model: MS_SL1..MS_SL4; dropping the kick loses heartbeats
 * (BUG_NO_IDLE_KICK). Returns without the lock, once t saw WOKEN. */
static void sleep_unlock(clove_task *t)
{
    clove_pool *p = t->pool;
    uint64_t t0 = clove__now_ns();
    idle_push_locked(p, t);
    clove__unlock(p);
    /* A task going idle is what makes heartbeats useful again: kick the
     * heartbeat thread. While runs are in progress, watch the word for a
     * while first: a wake-up that comes meanwhile (a share, a request
     * answered, our job done) is seen at once instead of after the
     * system's wake latency. A task that has just requested more from a
     * task, which answers at its next fork, kicks only if nothing came
     * while it watched: the kick is a system call when the heartbeat
     * thread sleeps, and wakes a thread that competes for the cores. */
    bool running = (uint32_t)clove__runs_now(p) != 0; /* seq_cst: see hb_sleep */
    bool spin = running && p->spin_ns != 0;
    bool later = spin && clove__tk(t)->asked;
    clove__tk(t)->asked = false;
    if (running && !later)
        clove__hb_kick(p);
    _Atomic uint32_t *w = &clove__tk(t)->sleep;
    if (spin) {
        uint64_t until = t0 + p->spin_ns;
        unsigned n = 0;
        while (atomic_load_explicit(w, memory_order_relaxed) == CLOVE__SLEEP_IDLE) {
            clove__cpu_relax();
            if (++n % 64 == 0 && clove__now_ns() >= until)
                break;
        }
        if (later && atomic_load_explicit(w, memory_order_relaxed) == CLOVE__SLEEP_IDLE)
            clove__hb_kick(p);
    }
    /* Then park: a waker that exchanges in WOKEN after this CAS sees
     * PARKED and calls clove__wake_one; one before it makes the CAS fail.
     * Relaxed: the acquire load below is the one that pairs with the
     * waker's release. */
    uint32_t idle = CLOVE__SLEEP_IDLE;
    (void)atomic_compare_exchange_strong_explicit(w, &idle, CLOVE__SLEEP_PARKED,
                                                  memory_order_relaxed, memory_order_relaxed);
    while (atomic_load_explicit(w, memory_order_acquire) != CLOVE__SLEEP_WOKEN)
        clove__wait(w, CLOVE__SLEEP_PARKED, 0);
    uint64_t t1 = clove__now_ns();
    clove__count(t, CLOVE__ST_SLEEPS, 1);
    clove__count(t, CLOVE__ST_SLEEP_NS, t1 - t0);
    if (CLOVE__UNLIKELY(clove__tk(t)->slot->trace != NULL))
        clove__trace_write(clove__tk(t)->slot->trace, CLOVE__EV_SLEEP, t0, t1);
}

void clove__sleep_locked(clove_task *t)
{
    sleep_unlock(t);
    clove__lock(t->pool);
}

/* ------------------------------------------------------------------------ */
/* Ring of shared jobs (lock held)                                          */
/* ------------------------------------------------------------------------ */

/* The owner's run in which a share is made (struct clove__entry's gen):
 * read while one of its records is SHARED, so within that run. */
static uint32_t run_gen_of(clove_task *owner)
{
    return atomic_load_explicit(&clove__tk(owner)->run_gen, memory_order_relaxed);
}

static uint32_t ring_push(clove_pool *p, struct clove__job *j, clove_task *owner, uint32_t gen)
{
    uint32_t slot = (uint32_t)(p->ring_tail & (p->ring_cap - 1));
    p->ring[slot] = (struct clove__entry){j, owner, 1, gen};
    p->ring_tail++;
    /* One writer (the lock): a load and a store, not a read-modify-write. */
    atomic_store_explicit(&p->ring_pushes,
                          atomic_load_explicit(&p->ring_pushes, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    return slot;
}

/* Whether an entry is a hole (taken past the head) or dead: its first
 * record is not SHARED, so its owner claimed it back, and every newer one
 * before it (or a runner holding a stale range claimed it: the others are
 * then left to their owner's joins). */
static bool entry_dead(const struct clove__entry *e)
{
    return e->job == NULL ||
           (clove__state_get(e->job) & CLOVE__TAG_MASK) != CLOVE__TAG_SHARED;
}

/* Drop holes and dead entries at the head, holes at the tail. */
static void ring_trim(clove_pool *p)
{
    while (p->ring_head != p->ring_tail &&
           entry_dead(&p->ring[p->ring_head & (p->ring_cap - 1)]))
        p->ring_head++;
    while (p->ring_head != p->ring_tail &&
           p->ring[(p->ring_tail - 1) & (p->ring_cap - 1)].job == NULL)
        p->ring_tail--;
}

static bool ring_full(clove_pool *p)
{
    if (p->ring_tail - p->ring_head < p->ring_cap)
        return false;
    ring_trim(p);
    return p->ring_tail - p->ring_head >= p->ring_cap;
}

static bool ring_empty(clove_pool *p)
{
    ring_trim(p);
    return p->ring_head == p->ring_tail;
}

static bool ring_pop(clove_pool *p, struct clove__entry *e)
{
    ring_trim(p);
    if (p->ring_head == p->ring_tail)
        return false;
    struct clove__entry *slot = &p->ring[p->ring_head & (p->ring_cap - 1)];
    *e = *slot;
    slot->job = NULL;
    p->ring_head++;
    return true;
}

/* The oldest job in the ring, or with from != NULL the oldest that lies
 * in the job stack that holds from, at from or above it: a job forked by
 * the task that owns that stack after its top was at from (helping's
 * leapfrog rule, see join_shared). A job taken past the head leaves a hole
 * (trimmed at the ends). Linear in the ring's length
 * then, on this cold path only. */
static bool ring_pop_from(clove_pool *p, struct clove__entry *e, const struct clove__job *from)
{
    if (from == NULL)
        return ring_pop(p, e);
    ring_trim(p);
    for (uint64_t i = p->ring_head; i != p->ring_tail; i++) {
        struct clove__entry *slot = &p->ring[i & (p->ring_cap - 1)];
        /* from lies in the owner's job stack exactly when it is within
         * [base, job]: the stacks are disjoint mappings. */
        if (!entry_dead(slot) && from >= slot->owner->base && from <= slot->job) {
            *e = *slot;
            slot->job = NULL;
            ring_trim(p);
            return true;
        }
    }
    return false;
}

/* A free idle task (in its worker loop: it may take any job), or NULL.
 * Lock held; linear in the idle list, on cold paths only. */
static clove_task *idle_free_locked(clove_pool *p)
{
    for (clove_task *i = p->idle_first; i != NULL; i = clove__tk(i)->idle_next)
        if (clove__tk(i)->waiting_on == NULL)
            return i;
    return NULL;
}

/* A share woke a task that then took no job: it waits for a job of its
 * own and may take none of those in the ring (a wait that runs nothing,
 * or helping's leapfrog rule, see join_shared). Pass the wake-up on to an
 * idle task, so that the job does not wait in the ring for its owner's
 * join: to one in its worker loop, which takes any job (a free one), or,
 * unless free_only, to the first idle task. Lock held; returns with it
 * held, and true if it dropped it meanwhile (the caller must look again
 * at what the lock guards). Linear in the idle list, on this cold path
 * only. */
static bool relay_locked(clove_pool *p, bool free_only)
{
    if (ring_empty(p))
        return false;
    clove_task *relay = idle_free_locked(p);
    if (relay == NULL && !free_only)
        relay = p->idle_first;
    if (relay == NULL)
        return false;
    bool call = clove__idle_remove_locked(relay);
    clove__unlock(p);
    if (call)
        clove__wake_one(&clove__tk(relay)->sleep);
    clove__lock(p);
    return true;
}

/* ------------------------------------------------------------------------ */
/* The handoff (lock held)                                                  */
/* ------------------------------------------------------------------------ */

/*
 * A share made while a pool worker sleeps in its worker loop (a free idle
 * task: it may run any job) hands the range straight to it: into the
 * worker's mailbox (task->mail), under the lock, before the wake-up takes
 * it off the idle list. The worker finds the range when it wakes and runs
 * it without taking the lock: no ring entry, and one lock fewer per share
 * (with many workers the lock is what limits wide fan-out: sim/fanout.md).
 * The records are SHARED as in the ring, so their owner may claim them
 * back before the worker claims them; the range is then dead, as a dead
 * ring entry is. Filling the mailbox after the wake-up could leave the
 * worker asleep with the range, or awake without it (model: claims.pml
 * -DHANDOFF, bug-wakebeforemail). A task idle at a join gets no mail: it
 * may run only some jobs (helping's leapfrog rule) and takes them from
 * the ring.
 */

/* Put the range [j, j + n) of owner, its records SHARED, where an idle
 * task runs it: into a free idle task's mailbox, else into the ring.
 * Returns the idle task taken off the idle list (that free one, else the
 * first idle task), or NULL if nobody is idle; the caller wakes it after
 * unlocking if *call. gen: the owner's run_gen in the run that forked
 * the records (struct clove__entry's gen; its beat below carries it).
 * Lock held; ring not full. */
static clove_task *hand_locked(clove_pool *p, struct clove__job *j, uint32_t n,
                               clove_task *owner, uint32_t gen, bool *call)
{
    clove_task *wake = idle_free_locked(p);
    bool handed = wake != NULL;
    if (handed) {
        clove__tk(wake)->mail = (struct clove__entry){j, owner, n, gen};
    } else {
        uint32_t slot = ring_push(p, j, owner, gen);
        p->ring[slot].n = n;
        wake = p->idle_first;
    }
    *call = false;
    if (wake == NULL)
        return NULL;
    /* After this the woken worker may read and clear its mailbox at any
     * moment: nothing here touches it again. */
    *call = clove__idle_remove_locked(wake);
    /* The ramp-up of a range taken from the ring (run_one_locked), made
     * here for one that skips the ring. */
    if (handed && p->idle_first != NULL) {
        atomic_store_explicit(&wake->heartbeat, CLOVE__HB_BEAT, memory_order_relaxed);
        atomic_store_explicit(&owner->heartbeat, CLOVE__HB_BEAT | clove__hb_gen(gen),
                              memory_order_relaxed);
    }
    return wake;
}

/* ------------------------------------------------------------------------ */
/* The reserve                                                              */
/* ------------------------------------------------------------------------ */

/*
 * A heartbeat is answered at the owner's next fork or tick. A long leaf (a
 * call that computes for milliseconds without either, or a loop chunk that
 * runs far longer than its pace promised) would leave the jobs queued
 * behind it unshared while other workers sleep. So each task of a pool
 * with workers keeps its oldest fork *reserved*: taken off the bottom of
 * its queue and published in t->reserve, where the heartbeat thread can
 * take it.
 *
 *   - The owner reserves in its heartbeat handler (below), without the lock:
 *     take the oldest queued record j (bottom++), j->state = RESERVED with
 *     the next LIFO sequence number, then a release store of t->reserve.
 *     It reserves whenever it has no reserve and the queue is not empty; a
 *     task starts "armed" (heartbeat = ARM) and re-arms whenever it is left
 *     without a reserve (joined, shared, stolen, or nothing to reserve), so
 *     the first fork into an empty queue reserves at once.
 *   - Because j->fn is NULL now (moved to out.run), only j's join leaves
 *     the inline fast path.
 *     It claims j back with compare-and-swap(t->reserve, j, NULL) and, if
 *     that succeeds, returns false: the caller runs j, as if nothing had
 *     happened. No lock: one CAS per reserve (about one per top-level fork
 *     or heartbeat), never on the fork/join fast path.
 *   - The heartbeat thread (clove__steal_locked, from heartbeat_pass with the
 *     lock held) claims it with the same CAS when the owner did not answer
 *     the last beat (its BEAT bit is still set: no fork and no tick since)
 *     and a task is idle, and shares it as the owner's handler would: ring
 *     entry, SHARED, wake one idle task. It looks at each beat, and also an
 *     eighth of an interval after a beat made because a task went idle
 *     (the probe, clove__heartbeat_main).
 *   - The owner's handler, sharing at a beat, also claims its reserve by CAS
 *     (under the lock) and shares it first: it is older than anything in
 *     the queue.
 * Exactly one CAS wins, and only the winner touches j's fields afterwards
 * (the loser's CAS compares t->reserve, never j): so each reserved job runs
 * exactly once, and j's memory is not touched after its join returns.
 * When the owner's claim fails, it takes the lock, where the thief's SHARED
 * state is already visible (the thief held the lock across its CAS and
 * that store), and proceeds as for any shared record.
 * Record addresses are reused: the next fork at the same depth writes the
 * same record, so a thief that loaded t->reserve before the owner claimed
 * it back and reserved a new fork there can win its CAS on the new one.
 * That is what it wants (the task's current oldest fork): it reads nothing
 * of j before its CAS, and the CAS (acquire) reads the owner's release
 * store of the new reserve, so it sees the new fork's fields.
 * Model: MS_HS1..MS_HS3 (the handler), the I_JOIN slow path (the join's
 * claim) and the heartbeat thread's steal steps (hs 1..5) in
 * model/clove.pml.
 */

/* t has no reserve: make its next fork take the slow path and reserve.
 * Invariant (owner side): a task of a pool with workers either has a
 * reserve or has a non-zero heartbeat word, so that a long leaf never
 * follows a fork that could not be taken. ARM is ignored by clove_tick and
 * by the loops' split checks, so a loop of ticks on an empty list stays on
 * the fast path. A BEAT stored between the load and the store is lost;
 * beats are hints and the next one comes an interval later. */
static inline void rearm(clove_task *t)
{
    atomic_store_explicit(&t->heartbeat,
                          atomic_load_explicit(&t->heartbeat, memory_order_relaxed) |
                              CLOVE__HB_ARM,
                          memory_order_relaxed);
}

/* The owner noticed that the heartbeat thread took its reserve. */
static void note_stolen(clove_task *t)
{
    clove__count(t, CLOVE__ST_STOLEN, 1);
    clove__tk(t)->run_shared = true;
    if (CLOVE__UNLIKELY(clove__tk(t)->slot->trace != NULL)) {
        /* reserve is still the NULL that the heartbeat thread's CAS (a
         * release, after its store of stolen_ns) wrote: only this owner
         * sets it again. Reading it with acquire makes that store visible
         * (a fence would do the same, but ThreadSanitizer does not
         * support fences). */
        (void)atomic_load_explicit(&clove__tk(t)->reserve, memory_order_acquire);
        uint64_t when = atomic_load_explicit(&clove__tk(t)->stolen_ns, memory_order_relaxed);
        clove__trace_write(clove__tk(t)->slot->trace, CLOVE__EV_STOLEN, when, when);
    }
}

/* Something is queued: [bottom, top) is not empty (owner only). */
static inline bool queued(const clove_task *t)
{
    return t->bottom != t->top;
}

/* Take the oldest queued record off t's queue (owner only; queued(t)):
 * a clove_fork_value's fn moves to out.run (a clove_fork's job is in
 * out.vfn already), and fn = NULL sends its join to the slow path. It
 * counts in noffered. Returns its state word but the tag: the kind bit
 * and its LIFO sequence number; the caller stores it with its tag. */
static inline uintptr_t seq_bits(uint32_t noffered)
{
    return ((uintptr_t)noffered & CLOVE__SEQ_MASK) << CLOVE__SEQ_SHIFT;
}

static inline struct clove__job *take_oldest(clove_task *t, uintptr_t *bits)
{
    struct clove__job *j = t->bottom++;
    clove_value_fn *run = j->fn;
    j->fn = NULL;
    uintptr_t b = seq_bits(clove__tk(t)->noffered++);
    if (run != CLOVE__VOID_JOB) {
        j->out.run = run;
        b |= CLOVE__KIND_VALUE;
    }
    *bits = b;
    return j;
}

/* reserve_oldest's publication when a TSan runtime is present: out of
 * line, so that the usual path keeps no frame for the call. */
static CLOVE__NOINLINE void publish_reserve_tsan(clove_task *t, struct clove__job *j)
{
    clove__tsan_release(j); /* everything before the fork, for the taker */
    atomic_store_explicit(&clove__tk(t)->reserve, j, memory_order_release);
}

static inline void reserve_oldest(clove_task *t)
{
    uintptr_t bits;
    struct clove__job *j = take_oldest(t, &bits);
    clove__state_set(j, bits | CLOVE__TAG_RESERVED);
    clove__tk(t)->own_reserve = j;
    /* Publishes out.run, arg and state to whoever claims j. */
    if (CLOVE__UNLIKELY(clove__tsan_present()))
        publish_reserve_tsan(t, j);
    else
        atomic_store_explicit(&clove__tk(t)->reserve, j, memory_order_release);
}

/* Make record j SHARED, its state word but the tag being bits. The
 * release store publishes fn, arg and out.run to whoever claims it, also
 * to a runner that holds a stale range and never takes the lock. Lock
 * held, or by the owner answering a direct request (no ring entry). */
static void mark_shared(struct clove__job *j, uintptr_t bits)
{
    clove__tsan_release(j); /* the fork, for a runner that takes no lock */
    atomic_store_explicit(clove__state(j), bits | CLOVE__TAG_SHARED, memory_order_release);
}

/*
 * Requests and batches. A task that finishes a shared range and finds
 * the ring empty would wait for the next beat (half an interval on
 * average) while the range's owner, which forked it, may have more
 * queued. So it *requests* more: it raises the owner's heartbeat word
 * with BEAT | REQ or BEAT | REQ_ONE (run_entry; every task's word lives
 * as long as the pool) and the owner's run generation from the range's
 * entry (CLOVE__HB_GEN_SHIFT): a request that lands after that run ended
 * is dropped by the owner's next run.
 * The owner answers at its next fork or tick (heartbeat_beat): it shares
 * even when nobody is idle yet (the requester is about to be: it looks at
 * the ring under the lock before it sleeps, so the share is either found
 * or its wake-up reaches it). A request is one share per range run
 * elsewhere, and the records shared are the owner's oldest, as at a beat.
 *
 * Wide fan-out (a loop that forks every child of a node, then joins them
 * all) leaves a queue of sibling records whose oldest is often a leaf: its
 * runner is done at once. So after a range shorter than an eighth of an
 * interval the request is REQ, answered with a *batch*: the owner's oldest
 * record (the reserve or the queue's oldest) and the next oldest queued
 * records above it, up to t->batch_n in all, as one ring entry of n
 * records, each SHARED with its own LIFO sequence number (and counting in
 * noffered). batch_n starts at 1 and doubles at each REQ answered (up to
 * CLOVE__BATCH_MAX): a batch costs its owner nothing when nobody runs it,
 * since the owner claims back every record not started. After a longer
 * job the request is REQ_ONE, answered with one record, as a beat is (a
 * job that long saw beats of its own, and long leaves would be shared in
 * doubling batches), and only while no other task is idle: then the
 * heartbeat thread is asleep, and the requester would wait for its kick,
 * its wake-up and its beat; with others idle, beats and the ramp-up's
 * flags are coming anyway, and more requests only add shares of smaller
 * pieces (sim/README.md, "Requests and batches").
 *
 * The runner of a batch claims and runs its records oldest first, as a
 * loop runs its range (run_batch): a beat between two records splits off
 * the newer half of what is left as a ring entry for an idle task
 * (whoever takes it claims its records in turn), and it takes no lock per
 * record. The batch leaves nothing in the runner's job stack, so its own
 * beats share the forks of the records' jobs, which a joiner waiting for
 * one of those records may help with. The owner joins the records newest
 * first, as any shared records.
 * Nothing of this is on the fork/join fast path.
 */

/*
 * The heartbeat thread's half (lock held): if w has a reserve and a task is
 * idle, claim the reserve and share it. gen: the run_gen of w's run that
 * left its beat unanswered; for the entry task, the odd entry_gen the
 * caller read, since that run may have ended and another begun without
 * the lock (clove_pool.entry_gen). Returns the idle task taken off the
 * idle list, which the caller wakes after unlocking, or NULL.
 */
clove_task *clove__steal_locked(clove_task *w, uint32_t gen)
{
    clove_pool *p = w->pool;
    if (p->idle_first == NULL || ring_full(p))
        return NULL;
    /* Acquire: a reserve published by a later run on the entry task
     * (reserve_oldest's release store) comes after that run's exchange of
     * entry_gen, which the load below then sees. A reserve of the run
     * gen is that run's, unless, between this load and the CAS, it took
     * the record back, ended, and the next run reserved the same record
     * (the same address: the first record of the job stack): a window of
     * a few instructions, in which the young run may lose its reserve. */
    struct clove__job *j = atomic_load_explicit(&clove__tk(w)->reserve, memory_order_acquire);
    if (j == NULL)
        return NULL;
    if (w == &p->entry.pub && atomic_load_explicit(&p->entry_gen, memory_order_relaxed) != gen)
        return NULL;
    /* The steal's time for the trace, stored before the CAS and published
     * by it (release): the owner notices the steal by reading reserve ==
     * NULL, and note_stolen's acquire load of it then shows it this time,
     * never an older one.
     * Only the heartbeat thread stores it, so a failed CAS leaves a time
     * that the next successful one overwrites before the owner looks. */
    if (CLOVE__UNLIKELY(p->trace_path != NULL))
        atomic_store_explicit(&clove__tk(w)->stolen_ns, clove__now_ns(), memory_order_relaxed);
    if (!atomic_compare_exchange_strong_explicit(&clove__tk(w)->reserve, &j, NULL, memory_order_acq_rel,
                                                 memory_order_relaxed))
        return NULL;
    clove__tsan_acquire(j);
    mark_shared(j, clove__state_get(j) & ~CLOVE__TAG_MASK);
    /* Let the owner reserve its next oldest fork at its next tick. Release,
     * and before the idle task is taken (its idle_count store, also a
     * release, is what the owner's hint may see first): an owner that sees
     * either sees the CAS, so it drops its stale reserve at its next fork
     * (model: BUG_STEAL_NO_BEAT). Tagged with gen: should the run have
     * ended meanwhile, the next one drops it (heartbeat_beat). */
    atomic_store_explicit(&w->heartbeat, CLOVE__HB_BEAT | clove__hb_gen(gen), memory_order_release);
    bool call;
    return hand_locked(p, j, 1, w, gen, &call);
}

/* Take t's oldest record (its reserve, else the queue's oldest) and, for
 * a batch, the next oldest queued records above it, up to batch_n (which
 * doubles), and make them SHARED: the records [j, j + *n). Returns j, or
 * NULL with *n = 0 if there is nothing (owner only). */
static struct clove__job *take_share(clove_task *t, bool batch, uint32_t *n)
{
    struct clove__job *j = clove__tk(t)->own_reserve;
    *n = 0;
    if (j != NULL) {
        clove__tk(t)->own_reserve = NULL;
        /* Fails if the heartbeat thread took it meanwhile: then it is
         * shared already. */
        if (!atomic_compare_exchange_strong_explicit(&clove__tk(t)->reserve, &j, NULL,
                                                     memory_order_relaxed, memory_order_relaxed)) {
            j = NULL;
            note_stolen(t);
        }
    }
    uintptr_t bits = 0;
    if (j != NULL)
        bits = clove__state_get(j) & ~CLOVE__TAG_MASK; /* RESERVED */
    else if (queued(t))
        j = take_oldest(t, &bits);
    if (j == NULL)
        return NULL;
    mark_shared(j, bits);
    *n = 1;
    if (batch) {
        uint32_t want = clove__tk(t)->batch_n * 2;
        if (want > CLOVE__BATCH_MAX)
            want = CLOVE__BATCH_MAX;
        clove__tk(t)->batch_n = want;
        /* The next oldest, contiguous with j (the reserve is the record
         * just below the queue). */
        for (; *n < want && queued(t); (*n)++) {
            struct clove__job *m = take_oldest(t, &bits);
            mark_shared(m, bits);
        }
    }
    return j;
}

/*
 * Direct requests. A pool worker in its worker loop that ran a range and
 * finds the ring empty asks for more without the lock
 * (clove__ask_locked), for up to the time an idle task spins: the
 * range's owner first, else the next task with a reserve (so something
 * queued) that nobody asks, among the pool's workers and its entry task
 * (pick_asked). To ask v it stores WAIT into its own answer word, writes
 * its request (ask_gen: v's run; ask_req), compare-and-swaps itself into
 * v's asker word (release; if another worker asks v, it looks further),
 * raises v's heartbeat word with BEAT | REQ as for any request, and
 * watches its answer word for ASK_WAIT_NS. v's next fork or tick
 * (heartbeat_beat) exchanges the asker word (acquire) and answers
 * (answer_ask): it makes its oldest records SHARED, as a request's share
 * through the ring would (a batch for REQ), writes them into the asker's
 * mailbox and stores RANGE with release; or NOTHING when it has nothing
 * or the request is from an earlier run. No lock, no ring entry, no
 * wake-up call: the asker runs the range at once, then asks again, still
 * without the lock while nothing went into the ring meanwhile (the
 * pool's ring_pushes has not moved since it saw the ring empty). After
 * NOTHING it looks further. A v in a long leaf answers nothing: after
 * ASK_WAIT_NS the asker withdraws with a compare-and-swap of v's asker
 * word back to NULL and goes to sleep, leaving the request in v's
 * heartbeat word for its next fork to answer through the ring (a share
 * that reaches the asker through its mailbox), and v's reserve to the
 * heartbeat thread. If that compare-and-swap fails, v took the request and
 * its answer is coming: the asker waits for it. Exactly one of v's
 * exchange and the withdrawal succeeds, so an answer is never lost nor
 * waited for in vain (model: claims.pml -DREQUEST).
 *
 * A task waiting at a join for a record another task runs asks too
 * (join_ask, from join_shared), once it has waited JOIN_ASK_AFTER_NS and
 * for as long as an idle task spins, between looks at the ring: it asks
 * only the runner (the task whose job stack holds the runner's top in the
 * record's TAKEN word), and only for records forked inside the awaited
 * job, since it may run no others (helping's leapfrog rule). Its request
 * names the awaited record and that top (ask_job, ask_from); the runner
 * answers NOTHING unless the record is still TAKEN (so it still runs the
 * job) and its oldest record lies at that top or above (may_answer). The
 * handshake is the one above (model: claims.pml -DJOINASK).
 *
 * An asker is off the idle list meanwhile, so no share is handed to it
 * and its mailbox has one writer at a time.
 */
#define ASK_WAIT_NS 1000u
/* A joiner asks once it has waited this long (join_ask). In the simulator
 * (--join-ask-after-us) 2 us keeps what asking at once gains on wide
 * fan-out (uts-loop 10000 at 64 workers 31.9x, against 31.2x at once and
 * 28.6x after 12.5 us). */
#define JOIN_ASK_AFTER_NS 2000u

/* Whether t may answer r's request. A joiner's (ask_job set) gets only
 * records forked inside the job it awaits (helping's leapfrog rule, see
 * join_shared): while that record is TAKEN with ask_from in its word, t,
 * which asked it, runs it, and its records at ask_from or above were forked
 * inside it; its oldest (the reserve, else the queue's bottom) must be one
 * of those, since a share takes the oldest first. Once the record is DONE
 * t may run anything there. */
static bool may_answer(const clove_task *t, const clove_task *r)
{
    const struct clove__job *aj = clove__tk(r)->ask_job;
    if (aj == NULL)
        return true;
    uintptr_t s = clove__state_get(aj);
    if ((s & CLOVE__TAG_MASK) != CLOVE__TAG_TAKEN ||
        (const struct clove__job *)(s & CLOVE__FROM_MASK) != clove__tk(r)->ask_from)
        return false;
    const struct clove__job *oldest = clove__tk(t)->own_reserve;
    if (oldest == NULL)
        oldest = t->bottom;
    return oldest >= clove__tk(r)->ask_from;
}

/* t answers the direct request of r, which it took from its asker word. */
static void answer_ask(clove_task *t, clove_task *r)
{
    uint32_t a = CLOVE__ANSWER_NOTHING, n = 0;
    uint64_t when = 0;
    /* The exchange's acquire made r's request visible. A clove_pool_run
     * answers only once it has shared by a beat or a steal, both of which
     * wait for the run-age gate: a worker that ran a range of an earlier
     * run and asks a run just begun gets NOTHING, so that a run shorter
     * than a quarter interval shares nothing (clove.short_runs_not_shared
     * and short_runs_beside_a_long_one). Pool workers run only work shared
     * from such runs. */
    if (clove__tk(r)->ask_gen == run_gen_of(t) &&
        (clove__tk(t)->run_ctx == NULL || clove__tk(t)->run_shared) && may_answer(t, r)) {
        struct clove__job *j = take_share(t, clove__tk(r)->ask_req == CLOVE__HB_REQ, &n);
        if (j != NULL) {
            clove__tk(r)->mail = (struct clove__entry){j, t, n, run_gen_of(t)};
            a = CLOVE__ANSWER_RANGE;
            if (CLOVE__UNLIKELY(clove__tk(t)->slot->trace != NULL))
                when = clove__now_ns();
        }
    }
    /* Release: the mailbox and the records' SHARED words. After this r
     * may run the range, and nothing here touches r again. */
    atomic_store_explicit(&clove__tk(r)->answer, a, memory_order_release);
    if (n) {
        clove__count(t, CLOVE__ST_SHARED, n);
        if (CLOVE__UNLIKELY(clove__tk(t)->slot->trace != NULL))
            clove__trace_share(clove__tk(t)->slot->trace, when, n);
    }
}

/* ------------------------------------------------------------------------ */
/* Heartbeat handler                                                        */
/* ------------------------------------------------------------------------ */

/*
 * Called by clove_fork when t's heartbeat word is non-zero (BEAT or ARM),
 * and by clove_tick when BEAT is set. On a heartbeat (BEAT),
 * shares t's oldest job - its reserve, else the list's oldest - if some task
 * is idle, and wakes exactly one idle task; without an idle task it takes
 * no lock. Then, on a beat or when armed, reserves the list's oldest if t
 * has no reserve.
 */
/* Model: MS_HS1..MS_HS3 in model/clove.pml. */
static CLOVE__NOINLINE void heartbeat_beat(clove_task *t, uint32_t v);

void clove__heartbeat_slow(clove_task *t)
{
    /* One exchange, not a load and a store: a BEAT stored between the two
     * would be erased unanswered after the heartbeat thread saw it set and
     * took our reserve, and then nothing would make our next fork reserve
     * (model/README.md, finding "spec-leaf"). */
    uint32_t v = atomic_exchange_explicit(&t->heartbeat, 0, memory_order_acquire);
    if (CLOVE__LIKELY(v == CLOVE__HB_ARM) && clove__tk(t)->own_reserve == NULL && queued(t)) {
        /* Only armed (clove_tick ignores ARM, so this is a fork into an
         * empty queue): reserve it, the short way. This runs once per
         * top-level fork/join pair in pools with workers. */
        reserve_oldest(t);
        return;
    }
    heartbeat_beat(t, v);
}

static CLOVE__NOINLINE void heartbeat_beat(clove_task *t, uint32_t v)
{
    clove_pool *p = t->pool;
    clove_task *wake = NULL;
    bool call = false;
    uint32_t nshared = 0; /* records shared by this beat */
    uint64_t when = 0;    /* the trace's time of this beat */
    /* Only the heartbeat thread clears t->reserve behind our back. The
     * acquire orders (memory orders in this handler: model/README.md,
     * "Atomics"): if our exchange took the BEAT the thief stored after its
     * CAS, this load sees that CAS. */
    if (clove__tk(t)->own_reserve != NULL && atomic_load_explicit(&clove__tk(t)->reserve, memory_order_acquire) == NULL) {
        clove__tk(t)->own_reserve = NULL;
        note_stolen(t);
    }
    /* A word tagged with an earlier run's generation (CLOVE__HB_GEN_SHIFT:
     * a request, or a beat stored by another thread for that run) landed
     * after that run ended: drop it, beat and all (it replaced whatever
     * the word held). */
    if ((v >> CLOVE__HB_GEN_SHIFT) != 0 &&
        (v ^ clove__hb_gen(run_gen_of(t))) >> CLOVE__HB_GEN_SHIFT != 0)
        v = 0;
    /* A clove_pool_run that has not shared yet is young (answer_ask): a
     * request in its word can only come from a worker asking it directly
     * (a request through the ring names a run that shared), and the
     * request's BEAT is no beat of the heartbeat thread's. Drop both; an
     * asker still waiting is answered NOTHING below. */
    if ((v & (CLOVE__HB_REQ | CLOVE__HB_REQ_ONE)) && clove__tk(t)->run_ctx != NULL &&
        !clove__tk(t)->run_shared)
        v &= CLOVE__HB_ARM;
    /* A worker waits for an answer (direct requests, above): answer it
     * first, then handle the beat as a plain one. */
    if (atomic_load_explicit(&clove__tk(t)->asker, memory_order_relaxed) != NULL) {
        clove_task *r = atomic_exchange_explicit(&clove__tk(t)->asker, NULL, memory_order_acquire);
        if (r != NULL) {
            answer_ask(t, r);
            v &= CLOVE__HB_BEAT | CLOVE__HB_ARM;
        }
    }
    if (v & CLOVE__HB_BEAT) {
        clove__count(t, CLOVE__ST_HEARTBEATS, 1);
        /* A request (REQ or REQ_ONE): share even with nobody idle yet;
         * for REQ, a batch (above). */
        bool req = (v & (CLOVE__HB_REQ | CLOVE__HB_REQ_ONE)) != 0;
        if ((clove__tk(t)->own_reserve != NULL || queued(t)) &&
            (req || atomic_load_explicit(&p->idle_count, memory_order_acquire) != 0)) {
            clove__lock(p);
            if ((p->idle_first != NULL || req) && !ring_full(p)) {
                struct clove__job *j = take_share(t, (v & CLOVE__HB_REQ) != 0, &nshared);
                if (j != NULL) {
                    clove__tk(t)->run_shared = true;
                    wake = hand_locked(p, j, nshared, t, run_gen_of(t), &call);
                    /* The share's time, read before the wake-up: the
                     * woken task may start the job, and this thread be
                     * preempted, before the wake-up call returns. */
                    if (CLOVE__UNLIKELY(clove__tk(t)->slot->trace != NULL))
                        when = clove__now_ns();
                }
            }
            clove__unlock(p);
            if (call) /* else it watches its word */
                clove__wake_one(&clove__tk(wake)->sleep);
            if (nshared)
                clove__count(t, CLOVE__ST_SHARED, nshared);
        }
        if (CLOVE__UNLIKELY(clove__tk(t)->slot->trace != NULL)) {
            if (nshared) {
                clove__trace_share(clove__tk(t)->slot->trace, when, nshared);
            } else {
                when = clove__now_ns();
                clove__trace_write(clove__tk(t)->slot->trace, CLOVE__EV_BEAT, when, when);
            }
        }
    }
    if (clove__tk(t)->own_reserve == NULL && p->nworkers > 0) {
        if (queued(t))
            reserve_oldest(t);
        else
            rearm(t); /* called by a clove_tick, or everything was shared */
    }
}

/* ------------------------------------------------------------------------ */
/* Running shared jobs                                                      */
/* ------------------------------------------------------------------------ */

/* Claim record m for t: true if t may run it now. The state is loaded and
 * the CAS made only on a SHARED word, compared whole: a stale range may
 * name records claimed back and forked again (a fork leaves the state
 * as it was, never SHARED) or on pages given back (they read as zeros, on Windows through the
 * commit-on-touch handler of port_win.c; a failed CAS would still fault
 * them in). The TAKEN word carries t's top, for a joiner's leapfrog rule.
 * Acquire: the owner's release store of SHARED published the job. *seen
 * gets the SHARED word. Model: the claim in model/claims.pml. */
static bool claim(clove_task *t, struct clove__job *m, uintptr_t *seen)
{
    uintptr_t s = clove__state_get(m);
    if ((s & CLOVE__TAG_MASK) != CLOVE__TAG_SHARED)
        return false;
    uintptr_t taken = (uintptr_t)t->top | (s & CLOVE__KIND_VALUE) | CLOVE__TAG_TAKEN;
    if (!atomic_compare_exchange_strong_explicit(clove__state(m), &s, taken, memory_order_acquire,
                                                 memory_order_relaxed))
        return false;
    clove__tsan_acquire(m);
    *seen = s;
    return true;
}

/* The runner of owner's record m found the waiter bit: wake the owner if
 * it sleeps waiting for m (else it is helping, or has not gone to sleep
 * yet, and looks at m's state under the lock before it does). The
 * owner's task lives as long as the pool, but it may have seen DONE,
 * left, and been taken by another thread entering clove_pool_run
 * meanwhile: its fields are read under the lock only, and at worst this
 * wakes that thread, asleep at a join of a record at the same place,
 * which looks at its record and sleeps again. */
static void wake_waiter(clove_pool *p, clove_task *owner, const struct clove__job *m)
{
    clove__lock(p);
    bool wake = clove__tk(owner)->idle && clove__tk(owner)->waiting_on == m &&
                clove__idle_remove_locked(owner);
    clove__unlock(p);
    if (wake)
        clove__wake_one(&clove__tk(owner)->sleep);
}

/* Run the job of record m, claimed by t from the SHARED word s, store its
 * result and mark it DONE (with its sequence number back). After the
 * exchange the owner may return from the join and reuse m. */
static void run_claimed(clove_task *t, struct clove__job *m, uintptr_t s, clove_task *owner)
{
    struct clove__trace *tr = clove__tk(t)->slot->trace;
    uint64_t t0 = CLOVE__UNLIKELY(tr != NULL) ? clove__now_ns() : 0;
    void *arg = m->arg;
    if (s & CLOVE__KIND_VALUE) {
        m->out.value = m->out.run(t, arg);
    } else {
        m->out.vfn(t, arg);
        m->out.value = 0;
    }
    /* Before DONE: once the owner has seen every DONE, the counters add
     * up (shared + stolen = ran + reclaimed), and the trace has every job. */
    clove__count(t, CLOVE__ST_RAN, 1);
    if (CLOVE__UNLIKELY(tr != NULL))
        clove__trace_write(tr, CLOVE__EV_JOB, t0, clove__now_ns());
    /* Release: the result and what the job wrote (for ThreadSanitizer in
     * the user's program too: internal.h). */
    clove__tsan_release(m);
    uintptr_t old = atomic_exchange_explicit(clove__state(m), (s & ~CLOVE__TAG_MASK) | CLOVE__TAG_DONE,
                                             memory_order_release);
    if (old & CLOVE__WAITER)
        wake_waiter(t->pool, owner, m);
}

/* t runs owner's batch [lo, hi) and a beat came (its heartbeat flag):
 * answer it as a fork would, then, if a task is idle in its worker loop,
 * split off the newer half of [lo, hi) as a ring entry of its own (its
 * records stay SHARED: whoever takes the entry claims them in turn) and
 * wake that task. Returns the new end of t's part. */
static struct clove__job *split_batch(clove_task *t, struct clove__job *lo,
                                      struct clove__job *hi, clove_task *owner, uint32_t gen)
{
    clove_pool *p = t->pool;
    clove__heartbeat_slow(t);
    if (atomic_load_explicit(&p->idle_count, memory_order_relaxed) == 0)
        return hi;
    struct clove__job *mid = lo + (hi - lo) / 2;
    bool call = false;
    clove_task *wake = NULL;
    clove__lock(p);
    /* mid not SHARED: its owner claimed it back, and the newer ones. */
    if (idle_free_locked(p) != NULL && !ring_full(p) &&
        (clove__state_get(mid) & CLOVE__TAG_MASK) == CLOVE__TAG_SHARED) {
        wake = hand_locked(p, mid, (uint32_t)(hi - mid), owner, gen, &call);
        hi = mid;
    }
    clove__unlock(p);
    if (call)
        clove__wake_one(&clove__tk(wake)->sleep);
    return hi;
}

/* Claim and run the records [lo, hi) of owner's batch, oldest first, as a
 * loop runs its range: before each claim, a beat splits off the newer
 * half of what is left for an idle task (split_batch). The batch leaves
 * nothing in t's job stack, so a joiner waiting for one of its records
 * may help with everything that record's job forks (the leapfrog rule),
 * and t's beats share t's own forks. The first record t fails to claim
 * ends the batch: its owner claimed it back, and every newer one first
 * (or a runner holding a stale range of an earlier share took it; then
 * the owner claims the rest back). Model: the runner in model/claims.pml. */
static void run_batch(clove_task *t, struct clove__job *lo, struct clove__job *hi,
                      clove_task *owner, uint32_t gen)
{
    for (; lo < hi; lo++) {
        if (hi - lo > 1 &&
            CLOVE__UNLIKELY(atomic_load_explicit(&t->heartbeat, memory_order_relaxed) &
                            CLOVE__HB_BEAT))
            hi = split_batch(t, lo, hi, owner, gen);
        uintptr_t s;
        if (!claim(t, lo, &s))
            return;
        run_claimed(t, lo, s, owner);
    }
}

/* A shared range that run_job_guarded is running: one claimed record
 * (seen: its SHARED word), or a batch of n records from j. */
struct running_job {
    clove_task *t;
    struct clove__job *j;
    uint32_t n;
    clove_task *owner;
    uint32_t gen; /* the owner's run (struct clove__entry's gen) */
    uintptr_t seen;
    const void *site; /* the job's code, for messages; NULL for a batch */
};

static void run_job(void *p)
{
    struct running_job *r = p;
    if (r->n > 1) {
        run_batch(r->t, r->j, r->j + r->n, r->owner, r->gen);
    } else {
        run_claimed(r->t, r->j, r->seen, r->owner);
    }
}

/* Cleanup handler of run_job_guarded: the thread left the job without
 * returning (pthread_exit in it; cancellation is disabled there). Its
 * owner would wait for it forever, so this aborts, naming the job. */
static void job_exited(void *arg)
{
    const struct running_job *r = arg;
    clove__misuse("shared job",
                  "the thread running it exited (pthread_exit) before it returned; its "
                  "owner's join would wait forever",
                  r->site);
}

/*
 * Run a shared job (or batch) on t. Another task waits for it at its
 * join, so the thread must not be stopped inside it: on a thread that
 * entered clove_pool_run (the entry task or a registered one, helping
 * while it waits at a join) cancellation is disabled for the job's
 * duration (clove__cancel_off: pthread_setcancelstate, a few atomic
 * operations on this cold path; a cancellation requested meanwhile acts
 * at the thread's next cancellation point after the job, in its own
 * work), and on any thread pthread_exit inside the job aborts with a
 * message (job_exited) instead of leaving the owner waiting. Pool workers
 * are never cancelled: the library owns them.
 */
static void run_job_guarded(struct running_job *r)
{
    clove_pool *p = r->t->pool;
    bool external = r->t->index - 1u >= p->nworkers; /* not a pool worker */
    int cancel_state = external ? clove__cancel_off() : 0;
    clove__call_with_cleanup(run_job, r, job_exited, r);
    if (external)
        clove__cancel_restore(cancel_state);
}

/* Called with the lock held; returns with it held. Takes the oldest range
 * from the ring (with from, the oldest in from's job stack at or above
 * from: helping's leapfrog rule) and runs it on t. Returns false if there
 * was none; true if it took one, even a dead one, whose records it could
 * not claim. Model: run_one_start and MS_DONE1 in model/clove.pml for the
 * lock and the wake-up; the claims in model/claims.pml. */
static void run_entry(clove_task *t, const struct clove__entry *e);

static bool run_one_locked(clove_task *t, const struct clove__job *from)
{
    clove_pool *p = t->pool;
    struct clove__entry e;
    if (!ring_pop_from(p, &e, from))
        return false;
    /* Ramp-up: if other tasks are still idle, raise our own heartbeat
     * flag and the owner's, so that at their next fork both share their
     * oldest queued fork - the biggest piece each has - at once instead
     * of a heartbeat later. Busy workers thus double about once per
     * wake-up rather than once per heartbeat, and with the owner sharing
     * too the pieces stay balanced (raising only our own flag hands out
     * ever smaller pieces along a chain of wake-ups: sim/README.md). The
     * heartbeat thread may set these flags at any time anyway, so the
     * protocol is unchanged. */
    if (p->idle_first != NULL) {
        atomic_store_explicit(&t->heartbeat, CLOVE__HB_BEAT, memory_order_relaxed);
        atomic_store_explicit(&e.owner->heartbeat, CLOVE__HB_BEAT | clove__hb_gen(e.gen),
                              memory_order_relaxed);
    }
    clove__unlock(p);
    run_entry(t, &e);
    return true;
}

/* Run the range e on t: from the ring, from t's mailbox (the handoff) or
 * as the answer to its direct request. Lock not held, nor taken. Returns
 * false if it was dead (claimed back meanwhile), else true with the
 * range's start and end times in *t0 and *t1. */
static bool run_range(clove_task *t, const struct clove__entry *ep, uint64_t *t0,
                      uint64_t *t1)
{
    struct clove__entry e = *ep;
    /* Work came: a request made before this is answered or moot. */
    clove__tk(t)->asked = false;
    clove__tk(t)->ask_to = NULL;
    struct running_job r = {t, e.job, e.n, e.owner, e.gen, 0, NULL};
    if (e.n == 1) {
        if (!claim(t, e.job, &r.seen))
            return false;
        r.site = (r.seen & CLOVE__KIND_VALUE) ? clove__code_addr(e.job->out.run)
                                              : clove__code_addr(e.job->out.vfn);
    }
    struct clove__job *saved_top = t->top;
    uint32_t saved_noffered = clove__tk(t)->noffered;
    *t0 = clove__now_ns();
    clove__tk(t)->nest++;
    run_job_guarded(&r);
    clove__tk(t)->nest--;
    *t1 = clove__now_ns();
    if (t->top != saved_top || clove__tk(t)->noffered != saved_noffered)
        clove__misuse("shared job", "the job returned with a clove_fork that was never joined",
                      r.site);
    return true;
}

/* Whether a range that ran from t0 to t1 was short: its request asks for
 * a batch (see "Requests and batches"). */
static bool range_short(const clove_pool *p, uint64_t t0, uint64_t t1)
{
    return t1 - t0 < (uint64_t)p->heartbeat_us * (1000u / CLOVE__CHUNK_DIV);
}

/* t, a pool worker in its worker loop, ran a range of owner's that ended
 * at t1 (short: range_short) and found the ring empty: it asks directly
 * (clove__ask_locked), owner first, until t1 plus the time an idle task
 * spins, with a request for a batch after a short range, else for one
 * record. pushes: the ring's push count when it was seen empty. */
static void ask_next(clove_task *t, clove_task *owner, bool is_short, uint64_t t1,
                     uint64_t pushes)
{
    clove__tk(t)->ask_to = owner;
    clove__tk(t)->ask_req = is_short ? CLOVE__HB_REQ : CLOVE__HB_REQ_ONE;
    clove__tk(t)->ask_until = t1 + t->pool->spin_ns;
    clove__tk(t)->ask_pushes = pushes;
    clove__tk(t)->ask_job = NULL;
}

/* run_range, then, under the lock, the request for more when the ring is
 * empty. Lock not held; returns with it held. */
static void run_entry(clove_task *t, const struct clove__entry *ep)
{
    clove_pool *p = t->pool;
    struct clove__entry e = *ep;
    uint64_t t0, t1;
    bool ran = run_range(t, &e, &t0, &t1);
    clove__lock(p);
    if (!ran || !ring_empty(p))
        return;
    /* Nothing more in the ring. A pool worker in its worker loop asks
     * directly, after unlocking (clove__ask_locked), for as long as an
     * idle task spins (not with more threads than CPUs, nor with
     * CLOVE_NO_SPIN). Any other task requests from the owner through its
     * heartbeat word: a batch after a range shorter than an eighth of an
     * interval, else one record if nobody else is idle (see "Requests and
     * batches"). Relaxed: the word is a hint, as the heartbeat thread's
     * stores are (and idle_count, written under the lock we hold, is
     * exact). */
    bool is_short = range_short(p, t0, t1);
    if (t->index - 1u < p->nworkers && clove__tk(t)->nest == 0 && p->spin_ns != 0) {
        ask_next(t, e.owner, is_short, t1,
                 atomic_load_explicit(&p->ring_pushes, memory_order_relaxed));
        return;
    }
    uint32_t req = 0;
    if (is_short)
        req = CLOVE__HB_BEAT | CLOVE__HB_REQ;
    else if (atomic_load_explicit(&p->idle_count, memory_order_relaxed) == 0)
        req = CLOVE__HB_BEAT | CLOVE__HB_REQ_ONE;
    if (req != 0) {
        atomic_store_explicit(&e.owner->heartbeat, req | clove__hb_gen(e.gen),
                              memory_order_relaxed);
        clove__tk(t)->asked = true;
    }
}

bool clove__run_one_locked(clove_task *t)
{
    return run_one_locked(t, NULL);
}

/* Watch t's answer word until it is not WAIT, for at most ns (0: for as
 * long as it takes); returns what it read (acquire). */
static uint32_t wait_answer(clove_task *t, uint64_t ns)
{
    uint64_t until = ns != 0 ? clove__now_ns() + ns : 0;
    unsigned n = 0;
    uint32_t a;
    while ((a = atomic_load_explicit(&clove__tk(t)->answer, memory_order_acquire)) ==
           CLOVE__ANSWER_WAIT) {
        clove__cpu_relax();
        if (until != 0 && ++n % 16 == 0 && clove__now_ns() >= until)
            break;
    }
    return a;
}

/* Whether worker t may ask v: v has a reserve (so a queued fork to
 * share) and nobody asks it. Relaxed loads: hints, the CAS decides. */
static bool askable(const clove_task *t, clove_task *v)
{
    return v != t && atomic_load_explicit(&clove__tk(v)->reserve, memory_order_relaxed) != NULL &&
           atomic_load_explicit(&clove__tk(v)->asker, memory_order_relaxed) == NULL;
}

/* The task t asks next: first (the owner of the range it ran) if it is
 * askable, else the next askable one after the last that t picked, among
 * the pool's workers and its entry task (tasks of other threads in
 * clove_pool_run are asked only as owners); NULL if none is. */
static clove_task *pick_asked(clove_task *t, clove_task *first)
{
    clove_pool *p = t->pool;
    if (first != NULL && askable(t, first))
        return first;
    unsigned n = p->nworkers + 1;
    for (unsigned k = 1; k <= n; k++) {
        unsigned i = (clove__tk(t)->ask_rr + k) % n;
        clove_task *v = i == p->nworkers ? &p->entry.pub : &p->workers[i].pub;
        if (askable(t, v)) {
            clove__tk(t)->ask_rr = i;
            return v;
        }
    }
    return NULL;
}

/* What ask returns besides an answer (CLOVE__ANSWER_RANGE or NOTHING). */
#define ASK_LOST 16u      /* another worker asks v */
#define ASK_WITHDRAWN 17u /* v did not answer in time: the request stands in
                           * its heartbeat word, for the ring */

/* t asks v (direct requests, above): returns the answer, RANGE (in t's
 * mailbox) or NOTHING, or ASK_LOST or ASK_WITHDRAWN. */
static uint32_t ask(clove_task *t, clove_task *v)
{
    uint32_t gen = run_gen_of(v);
    clove__tk(t)->ask_gen = gen;
    atomic_store_explicit(&clove__tk(t)->answer, CLOVE__ANSWER_WAIT, memory_order_relaxed);
    clove_task *none = NULL;
    /* Release: the request (ask_gen, ask_req) and the WAIT above. */
    if (!atomic_compare_exchange_strong_explicit(&clove__tk(v)->asker, &none, t,
                                                 memory_order_release, memory_order_relaxed))
        return ASK_LOST;
    /* As any request: v's next fork or tick answers. */
    atomic_store_explicit(&v->heartbeat,
                          CLOVE__HB_BEAT | clove__tk(t)->ask_req | clove__hb_gen(gen),
                          memory_order_relaxed);
    uint32_t a = wait_answer(t, ASK_WAIT_NS);
    if (a != CLOVE__ANSWER_WAIT)
        return a;
    clove_task *me = t;
    if (atomic_compare_exchange_strong_explicit(&clove__tk(v)->asker, &me, NULL,
                                                memory_order_relaxed, memory_order_relaxed))
        return ASK_WITHDRAWN;
    return wait_answer(t, 0);      /* v took it: the answer is coming */
}

/* t's request was answered with RANGE: run the range answer_ask wrote into
 * its mailbox (it did so before its release store of RANGE, which t's
 * acquire load saw). Returns the range's owner, and its start and end
 * times in *t0 and *t1, or NULL if it was claimed back meanwhile. */
static clove_task *run_answer(clove_task *t, uint64_t *t0, uint64_t *t1)
{
    struct clove__entry e = clove__tk(t)->mail;
    clove__tk(t)->mail.job = NULL;
    clove__count(t, CLOVE__ST_HANDED, 1);
    clove__count(t, CLOVE__ST_ANSWERED, 1);
    return run_range(t, &e, t0, t1) ? e.owner : NULL;
}

bool clove__ask_locked(clove_task *t)
{
    clove_task *first = clove__tk(t)->ask_to;
    if (first == NULL)
        return false;
    clove__tk(t)->ask_to = NULL;
    clove_pool *p = t->pool;
    clove__unlock(p);
    for (;;) {
        clove_task *v = pick_asked(t, first);
        first = NULL;
        if (v == NULL)
            break; /* nobody has anything to share */
        uint32_t a = ask(t, v);
        if (a == CLOVE__ANSWER_RANGE) {
            uint64_t t0, t1;
            clove_task *owner = run_answer(t, &t0, &t1);
            if (owner == NULL)
                continue; /* claimed back meanwhile: look again */
            /* A share went into the ring meanwhile: the worker loop takes
             * it under the lock. Else, without the lock, the ring is still
             * empty (only ring_push adds entries): ask again, this range's
             * owner first, as run_entry would after taking the lock. */
            if (atomic_load_explicit(&p->ring_pushes, memory_order_relaxed) !=
                clove__tk(t)->ask_pushes)
                break;
            ask_next(t, owner, range_short(p, t0, t1), t1, clove__tk(t)->ask_pushes);
            first = clove__tk(t)->ask_to;
            clove__tk(t)->ask_to = NULL;
            continue;
        }
        /* v did not answer in time: it runs a leaf, and so may the
         * others; sleep (the request stands for the ring, and the
         * heartbeat thread shares v's reserve for an idle task). */
        if (a == ASK_WITHDRAWN || clove__now_ns() >= clove__tk(t)->ask_until)
            break;
        /* v had nothing, or another worker asks it: look again. */
    }
    /* Look at the ring again before sleeping. */
    clove__lock(p);
    return true;
}

void clove__sleep_free_locked(clove_task *t)
{
    sleep_unlock(t);
    /* After the acquire load of WOKEN (sleep_unlock): the waker wrote the
     * mailbox before its release exchange. Nobody writes it again before
     * t is back on the idle list. */
    struct clove__entry e = clove__tk(t)->mail;
    if (e.job == NULL) {
        clove__lock(t->pool);
        return;
    }
    clove__tk(t)->mail.job = NULL;
    clove__count(t, CLOVE__ST_HANDED, 1);
    run_entry(t, &e);
}

/* ------------------------------------------------------------------------ */
/* Join of a record that is not queued                                      */
/* ------------------------------------------------------------------------ */

/*
 * Helping. A task that waits at a join for its record j, which another
 * worker took, runs other shared jobs meanwhile, on top of its own frames.
 * Unbounded, that nests jobs up to twice the sequential depth: a thread
 * deep in its own work would start a job forked near the root, whose
 * subtree is as deep as the whole computation, and a recursion that fits
 * its worker stacks sequentially overflows them. So:
 *   - the leapfrog rule: a waiting task runs only jobs that the thief of
 *     j forked while running j (the ring jobs in the thief's job stack at
 *     or above its top when it claimed j, which its claim put in j's
 *     TAKEN word). Those lie inside j's subtree: the sequential program runs them
 *     below j's fork frame, where this thread's stack is now (by the same
 *     rule, inductively: a job a thread took from its worker loop starts
 *     on an almost empty stack). Other jobs stay in the ring for idle
 *     workers or their owners' joins;
 *   - the nesting cap: at most HELP_NEST_MAX shared jobs run one inside
 *     the other on a thread (nest, counting a worker's own job), so that
 *     the library's frames between a join and the job it helps with
 *     (join_shared, run_one_locked, run_job_guarded) add a bounded amount.
 * A thread's stack thus never holds more than the recursion's sequential
 * depth plus HELP_NEST_MAX times those frames, plus the few frames below
 * a worker's first job (docs/api.md states the bound and its
 * measurement). A task woken by a share for a job it may not take passes
 * the wake-up on to a task in its worker loop (relay_locked).
 */
#define HELP_NEST_MAX 4

/* ------------------------------------------------------------------------ */
/* ------------------------------------------------------------------------ */

static CLOVE__NOINLINE bool join_shared(clove_task *t, struct clove__job *j, bool value,
                                        const void *site);

CLOVE__NORETURN static CLOVE__NOINLINE void lifo_misuse(const char *call, const void *site)
{
    clove__misuse(call, "joins are out of LIFO order (join the most recent fork first)", site);
}

static inline bool kind_differs(uintptr_t state, bool value)
{
    return ((state & CLOVE__KIND_VALUE) != 0) != value;
}

static inline bool seq_differs(const clove_task *t, uintptr_t state)
{
    return ((state >> CLOVE__SEQ_SHIFT) & CLOVE__SEQ_MASK) !=
           ((clove__tk(t)->noffered - 1) & CLOVE__SEQ_MASK);
}

/* The owner pops j: it must be the newest record it offered, with
 * nothing queued above it (state: j's state word with its sequence number
 * when check_seq), joined by the form that forked it. site: the join's
 * caller, for the message. */
static inline void check_own_pop(clove_task *t, const struct clove__job *j, uintptr_t state,
                                 bool check_seq, bool value, const void *site)
{
    if (clove__tk(t)->noffered == 0 || (check_seq && seq_differs(t, state)) || queued(t) ||
        j + 1 != t->bottom)
        lifo_misuse(clove__join_name(value), site);
    if (kind_differs(state, value))
        clove__kind_misuse(value, site);
}

/* The record j, reserved or shared, is popped: nothing of t is queued or
 * reserved above it any more (owner only). */
static inline void pop_to(clove_task *t, struct clove__job *j)
{
    clove__tk(t)->noffered--;
    t->top = j;
    t->bottom = j;
    /* Left FREED in every build (one store on a cold path), so that a
     * second join is named as such whatever CLOVE_DEBUG the caller or the
     * library was built with. */
    clove__state_set(j, CLOVE__TAG_FREED);
}

/* The join of a record that is not queued (fn == NULL): the task's
 * reserve (taken back here, the short way: it is the join of every
 * top-level fork) or a shared record (join_shared); anything else, such
 * as a record still queued by the fork of the other form, is a misuse.
 * value: called by clove_join_value. */
bool clove__join_slow(clove_task *t, struct clove__job *j, bool value)
{
    /* Still queued: forked by the other form. */
    if (j->fn != NULL)
        clove__kind_misuse(value, CLOVE__CALLER());
    if (j == clove__tk(t)->own_reserve) {
        /* Our reserve: take it back unless the heartbeat thread took it. */
        clove__tk(t)->own_reserve = NULL;
        struct clove__job *expected = j;
        if (CLOVE__LIKELY(atomic_compare_exchange_strong_explicit(
                &clove__tk(t)->reserve, &expected, NULL, memory_order_relaxed, memory_order_relaxed))) {
            check_own_pop(t, j, clove__state_get(j), true, value, CLOVE__CALLER());
            pop_to(t, j);
            rearm(t);
            return false;
        }
        note_stolen(t);
        rearm(t);
        /* The heartbeat thread made it SHARED under the lock, with its
         * CAS: take the lock once, so that the state is SHARED or later
         * here (model: BUG_STEAL_UNLOCKED in model/claims.pml). */
        clove__lock(t->pool);
        clove__unlock(t->pool);
    }
    return join_shared(t, j, value, CLOVE__CALLER());
}

/* Set the waiter bit of the record j, whose state was s (TAKEN, possibly
 * with the bit already): true if j is still TAKEN with the bit set, false
 * if it is DONE. *s gets the last state seen. The runner's DONE exchange
 * then sees the bit and wakes the owner (wake_waiter); a load and a store
 * could overwrite DONE (model: BUG_WAITER_STORE). */
static bool set_waiter(struct clove__job *j, uintptr_t *s)
{
    uintptr_t v = *s;
    while ((v & CLOVE__TAG_MASK) == CLOVE__TAG_TAKEN) {
        if ((v & CLOVE__WAITER) ||
            atomic_compare_exchange_weak_explicit(clove__state(j), &v, v | CLOVE__WAITER,
                                                  memory_order_acquire, memory_order_acquire)) {
            *s = v | CLOVE__WAITER;
            return true;
        }
    }
    *s = v;
    return false;
}

/* The task whose job stack holds the record position from (a runner's
 * top), among the pool's workers and its entry task; NULL if none does
 * (a task of another thread inside clove_pool_run). */
static clove_task *stack_owner(clove_pool *p, const struct clove__job *from)
{
    for (unsigned i = 0; i <= p->nworkers; i++) {
        clove_task *v = i == p->nworkers ? &p->entry.pub : &p->workers[i].pub;
        if (v->base != NULL && from >= v->base && from <= v->base + p->job_depth)
            return v;
    }
    return NULL;
}

/* A joiner's direct requests (see "Direct requests"): t waits for its
 * record j, which another task runs (state s, TAKEN), and has seen the
 * ring when its push count was pushes. Until until (t0 plus the time an
 * idle task spins) it asks that task, the runner, for records forked
 * inside j (may_answer) and runs what it is given; it watches j's state
 * and the ring's push count meanwhile. Lock not held. Returns j's last
 * state: DONE, or TAKEN (no waiter bit): a share went into the ring (the
 * push count moved: t looks at it), or t should help from the ring and
 * sleep as before (the spin ran out, or the runner did not answer in time:
 * it runs a leaf, and the request stands in its heartbeat word). */
static uintptr_t join_ask(clove_task *t, struct clove__job *j, uintptr_t s, uint64_t t0,
                          uint64_t until, uint64_t pushes)
{
    clove_pool *p = t->pool;
    const struct clove__job *from = (const struct clove__job *)(s & CLOVE__FROM_MASK);
    clove_task *v = stack_owner(p, from);
    /* t asks only once it has waited JOIN_ASK_AFTER_NS: a job that ends
     * sooner (in a short run, say) is not worth a request and an answer,
     * which would only slow its runner. After NOTHING (the runner has
     * only older records, or none) t asks again after a pause that
     * doubles, for the same reason. */
    uint64_t next = t0 + JOIN_ASK_AFTER_NS;
    uint64_t pause = ASK_WAIT_NS;
    unsigned n = 0;
    for (;;) {
        s = atomic_load_explicit(clove__state(j), memory_order_acquire);
        if ((s & CLOVE__TAG_MASK) != CLOVE__TAG_TAKEN ||
            atomic_load_explicit(&p->ring_pushes, memory_order_relaxed) != pushes)
            return s;
        uint64_t now = n % 16 == 0 ? clove__now_ns() : 0;
        if (now >= until)
            return s;
        if (now >= next && v != NULL && askable(t, v)) {
            clove__tk(t)->ask_req = CLOVE__HB_REQ;
            clove__tk(t)->ask_job = j;
            clove__tk(t)->ask_from = from;
            uint32_t a = ask(t, v);
            if (a == CLOVE__ANSWER_RANGE) {
                uint64_t r0, r1;
                run_answer(t, &r0, &r1);
                pause = ASK_WAIT_NS;
                n = 0;
                continue;
            }
            if (a == ASK_WITHDRAWN)
                return atomic_load_explicit(clove__state(j), memory_order_acquire);
            if (a == CLOVE__ANSWER_NOTHING) {
                next = clove__now_ns() + pause;
                pause *= 2;
            }
            n = 0;
            continue;
        }
        clove__cpu_relax();
        n++;
    }
}

/* t waited at a join from t0 until now: count it, and trace it. */
static void note_wait(clove_task *t, uint64_t t0)
{
    uint64_t t1 = clove__now_ns();
    clove__count(t, CLOVE__ST_WAITS, 1);
    clove__count(t, CLOVE__ST_WAIT_NS, t1 - t0);
    if (CLOVE__UNLIKELY(clove__tk(t)->slot->trace != NULL))
        clove__trace_write(clove__tk(t)->slot->trace, CLOVE__EV_WAIT, t0, t1);
}

static CLOVE__NOINLINE bool join_shared(clove_task *t, struct clove__job *j, bool value,
                                        const void *site)
{
    clove_pool *p = t->pool;
    const char *call = clove__join_name(value);
    /* Acquire: a DONE state shows the result. */
    uintptr_t s = atomic_load_explicit(clove__state(j), memory_order_acquire);
    uintptr_t tag = s & CLOVE__TAG_MASK;
    if (tag == CLOVE__TAG_RESERVED && j < t->bottom) {
        /* Our reserve, whose steal our heartbeat handler noticed: the
         * heartbeat thread makes it SHARED under the lock, after its CAS.
         * Take the lock once, as clove__join_slow does. */
        clove__lock(p);
        clove__unlock(p);
        s = atomic_load_explicit(clove__state(j), memory_order_acquire);
        tag = s & CLOVE__TAG_MASK;
    }
    /* A record joined through the slow path is left FREED at top (it is
     * the owner's alone): joining it again is the second join. */
    if (j == t->top && tag == CLOVE__TAG_FREED)
        clove__misuse(call, "this future was already joined", site);
    /* Only records in t's job stack below its top can be t's forks. */
    if (j < t->base || j >= t->top)
        clove__misuse(call, "this future was never forked (or its memory was overwritten)",
                      site);
    if (tag == CLOVE__TAG_FREED)
        clove__misuse(call, "this future was already joined", site);
    if (p->nworkers == 0 ||
        (tag != CLOVE__TAG_SHARED && tag != CLOVE__TAG_TAKEN && tag != CLOVE__TAG_DONE))
        clove__misuse(call, "this future was never forked (or its memory was overwritten)",
                      site);
    /* A TAKEN word holds the runner's top instead of the sequence number:
     * that one is checked once DONE, below. */
    check_own_pop(t, j, s, tag != CLOVE__TAG_TAKEN, value, site);

    if (tag == CLOVE__TAG_SHARED) {
        /* Nobody claimed it yet: claim it back, the caller runs it. A
         * failed CAS means a runner claimed it: s is its TAKEN word (or
         * DONE already). */
        if (atomic_compare_exchange_strong_explicit(clove__state(j), &s, CLOVE__TAG_FREED,
                                                    memory_order_acquire, memory_order_acquire)) {
            clove__count(t, CLOVE__ST_RECLAIMED, 1);
            pop_to(t, j);
            return false;
        }
        tag = s & CLOVE__TAG_MASK;
    }

    uint64_t t0 = 0;
    if (tag == CLOVE__TAG_TAKEN && p->spin_ns != 0 && clove__tk(t)->nest < HELP_NEST_MAX) {
        /* Running elsewhere: help from the ring, as below, but between
         * looks at it ask the runner (join_ask) instead of sleeping, for
         * as long as an idle task spins. */
        const struct clove__job *from = (const struct clove__job *)(s & CLOVE__FROM_MASK);
        t0 = clove__now_ns();
        uint64_t until = t0 + p->spin_ns;
        for (;;) {
            uint64_t pushes = atomic_load_explicit(&p->ring_pushes, memory_order_relaxed);
            clove__lock(p);
            bool helped = run_one_locked(t, from);
            clove__unlock(p);
            s = atomic_load_explicit(clove__state(j), memory_order_acquire);
            if ((s & CLOVE__TAG_MASK) != CLOVE__TAG_TAKEN)
                break;
            if (helped)
                continue;
            s = join_ask(t, j, s, t0, until, pushes);
            if ((s & CLOVE__TAG_MASK) != CLOVE__TAG_TAKEN ||
                atomic_load_explicit(&p->ring_pushes, memory_order_relaxed) == pushes)
                break; /* DONE, or asking is over */
        }
        tag = s & CLOVE__TAG_MASK;
        if (tag != CLOVE__TAG_TAKEN)
            note_wait(t, t0);
    }
    if (tag == CLOVE__TAG_TAKEN && set_waiter(j, &s)) {
        /* Running elsewhere: help with other shared jobs while it runs
         * (those the stack has room for: see "Helping" above), sleep when
         * there are none; its runner wakes us at DONE (the waiter bit). */
        const struct clove__job *from = (const struct clove__job *)(s & CLOVE__FROM_MASK);
        bool woken = false;
        if (t0 == 0)
            t0 = clove__now_ns();
        clove__lock(p);
        while (((s = atomic_load_explicit(clove__state(j), memory_order_acquire)) &
                CLOVE__TAG_MASK) != CLOVE__TAG_DONE) {
            if (clove__tk(t)->nest < HELP_NEST_MAX && run_one_locked(t, from)) {
                woken = false;
                continue;
            }
            /* A share woke us for a job we may not take: pass it on to a
             * task in its worker loop (never to another waiter, which
             * might pass it back). The lock was dropped meanwhile: look
             * again (j may be DONE, and its runner did not wake us: we
             * were not idle). */
            if (woken && relay_locked(p, true)) {
                woken = false;
                continue;
            }
            clove__tk(t)->waiting_on = j;
            clove__sleep_locked(t);
            clove__tk(t)->waiting_on = NULL;
            woken = true;
        }
        /* A share may have woken us (we were on the idle list) just as our
         * job finished. Pass that wake on, or the shared job would wait for
         * its owner's join (or the next share). Model: jloop_body;
         * BUG_NO_RELAY is only observable with >= 4 tasks (model/README.md). */
        clove_task *relay = NULL;
        if (woken && !ring_empty(p) && p->idle_first != NULL) {
            relay = p->idle_first;
            clove__idle_remove_locked(relay);
        }
        clove__unlock(p);
        if (relay)
            clove__wake_one(&clove__tk(relay)->sleep);
        note_wait(t, t0);
    } else if (t0 != 0 && tag == CLOVE__TAG_TAKEN) {
        note_wait(t, t0); /* DONE as join_ask gave up */
    }
    /* DONE: its sequence number is back (the runner kept it). */
    if (seq_differs(t, s))
        lifo_misuse(call, site);
    clove__tsan_acquire(j); /* the runner's release before DONE */
    pop_to(t, j);
    return true;
}

/* ------------------------------------------------------------------------ */
/* A run left without joining                                               */
/* ------------------------------------------------------------------------ */

/* Wait, asleep and running nothing, until the taken record j of t is
 * DONE. Lock held; returns with it held. */
static void wait_done_locked(clove_task *t, struct clove__job *j)
{
    clove_pool *p = t->pool;
    /* Acquire: DONE already is the runner's release exchange. */
    uintptr_t s = atomic_load_explicit(clove__state(j), memory_order_acquire);
    if (!set_waiter(j, &s))
        return;
    while ((atomic_load_explicit(clove__state(j), memory_order_acquire) & CLOVE__TAG_MASK) !=
           CLOVE__TAG_DONE) {
        clove__tk(t)->waiting_on = j;
        clove__sleep_locked(t);
        clove__tk(t)->waiting_on = NULL;
        if ((clove__state_get(j) & CLOVE__TAG_MASK) != CLOVE__TAG_DONE)
            relay_locked(p, false);
    }
}

/* Model: ABANDON in model/clove.pml. */
void clove__task_abandon(clove_task *t)
{
    clove_pool *p = t->pool;
    /* The reserve: take it back, unless the heartbeat thread shared it
     * (then it is SHARED or later, under the lock: below). */
    struct clove__job *r = clove__tk(t)->own_reserve;
    clove__tk(t)->own_reserve = NULL;
    if (r != NULL) {
        struct clove__job *expected = r;
        if (atomic_compare_exchange_strong_explicit(&clove__tk(t)->reserve, &expected, NULL,
                                                    memory_order_relaxed, memory_order_relaxed))
            clove__state_set(r, CLOVE__TAG_FREED);
    }
    /* [base, bottom) are the offered records: each is FREED (r, just
     * taken back), SHARED, TAKEN or DONE. */
    if (t->bottom != t->base) {
        clove__lock(p);
        for (struct clove__job *j = t->base; j < t->bottom; j++) {
            /* Acquire: a DONE seen here is the runner's last use of the
             * record (its release exchange), which the next fork at this
             * place must follow. */
            uintptr_t s = atomic_load_explicit(clove__state(j), memory_order_acquire);
            if ((s & CLOVE__TAG_MASK) == CLOVE__TAG_SHARED &&
                atomic_compare_exchange_strong_explicit(clove__state(j), &s, CLOVE__TAG_FREED,
                                                        memory_order_relaxed, memory_order_relaxed)) {
                /* Nobody claimed it: never run (its ring entry is dead). */
                clove__count(t, CLOVE__ST_RECLAIMED, 1);
                continue;
            }
            if ((s & CLOVE__TAG_MASK) == CLOVE__TAG_TAKEN)
                wait_done_locked(t, j);
            clove__tsan_acquire(j); /* the runner's release before DONE */
            clove__state_set(j, CLOVE__TAG_FREED);
        }
        clove__unlock(p);
    }
    t->top = t->base;
    t->bottom = t->base;
    clove__tk(t)->noffered = 0;
    if (p->nworkers > 0)
        rearm(t);
}
