/* SPDX-License-Identifier: MIT */
/*
 * share.c - the cold half of fork/join: sharing a queued record at a
 * heartbeat, taking and running shared jobs, reclaiming or waiting for a
 * shared record at its join, and sleeping when there is nothing to do.
 *
 * Life of a shared record j (all transitions under pool->lock):
 *
 *   queued --(owner's heartbeat handler)--> SHARED (in the ring)
 *   SHARED --(owner joins first)----------> reclaimed: join returns false
 *   SHARED --(an idle task takes it)------> TAKEN
 *   TAKEN  --(the taker finishes fn)------> DONE: join returns true
 *
 * The owner never leaves clove_join before seeing DONE (or reclaiming), so
 * the taker may touch j until it stores DONE under the lock, and never
 * after. The owner's task may likewise vanish once it has seen DONE, which
 * is why the taker wakes it only after unlocking and only by address.
 *
 * A record may first be RESERVED (see "The reserve" below): taken off the
 * bottom of the owner's queue by the owner's heartbeat handler, without the lock, and
 * published in task->reserve. From there either the owner takes it back at
 * its join (a compare-and-swap on task->reserve, no lock), or it becomes
 * SHARED, claimed by the same compare-and-swap under the lock: by the
 * owner's heartbeat handler, or by the heartbeat thread when the owner
 * does not answer a beat, e.g. in a long leaf (clove__steal_locked).
 *
 * Checked in model/clove.pml (properties and bug variants: model/README.md).
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
    /* Relaxed: it publishes nothing. Only the sleeper stores 0, under the
     * lock, so a waker's store of 1 (a release, under the same lock, in
     * clove__idle_remove_locked) comes after it; that store and the
     * sleeper's acquire load are the pair. */
    atomic_store_explicit(&clove__tk(t)->sleep, 0, memory_order_relaxed);
}

/* Model: idle_remove in model/clove.pml; storing sleep after the wake
 * instead of before hangs (BUG_WAKE_BEFORE_STATE). */
void clove__idle_remove_locked(clove_task *t)
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
     * sleeper once it sees 1, even before it re-takes the lock. */
    atomic_store_explicit(&clove__tk(t)->sleep, 1, memory_order_release);
}

/* Model: MS_SL1..MS_SL4; dropping the kick loses heartbeats
 * (BUG_NO_IDLE_KICK). */
void clove__sleep_locked(clove_task *t)
{
    clove_pool *p = t->pool;
    uint64_t t0 = clove__now_ns();
    idle_push_locked(p, t);
    clove__unlock(p);
    /* A task going idle is what makes heartbeats useful again. */
    if ((uint32_t)clove__runs_now(p) != 0) /* seq_cst: see hb_sleep */
        clove__hb_kick(p);
    /* Pairs with the release store in clove__idle_remove_locked. */
    while (atomic_load_explicit(&clove__tk(t)->sleep, memory_order_acquire) == 0)
        clove__wait(&clove__tk(t)->sleep, 0, 0);
    uint64_t t1 = clove__now_ns();
    clove__count(t, CLOVE__ST_SLEEPS, 1);
    clove__count(t, CLOVE__ST_SLEEP_NS, t1 - t0);
    if (CLOVE__UNLIKELY(clove__tk(t)->slot->trace != NULL))
        clove__trace_write(clove__tk(t)->slot->trace, CLOVE__EV_SLEEP, t0, t1);
    clove__lock(p);
}

/* ------------------------------------------------------------------------ */
/* Ring of shared jobs (lock held)                                          */
/* ------------------------------------------------------------------------ */

static bool ring_full(const clove_pool *p)
{
    return p->ring_tail - p->ring_head >= p->ring_cap;
}

static uint32_t ring_push(clove_pool *p, struct clove__job *j, clove_task *owner)
{
    uint32_t slot = (uint32_t)(p->ring_tail & (p->ring_cap - 1));
    p->ring[slot].job = j;
    p->ring[slot].owner = owner;
    p->ring[slot].n = 1;
    p->ring_tail++;
    return slot;
}

/* Drop holes left by reclaimed jobs at both ends. */
static void ring_trim(clove_pool *p)
{
    while (p->ring_head != p->ring_tail &&
           p->ring[p->ring_head & (p->ring_cap - 1)].job == NULL)
        p->ring_head++;
    while (p->ring_head != p->ring_tail &&
           p->ring[(p->ring_tail - 1) & (p->ring_cap - 1)].job == NULL)
        p->ring_tail--;
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
 * (trimmed at the ends, as a reclaim's). Linear in the ring's length
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
        if (slot->job != NULL && from >= slot->owner->base && from <= slot->job) {
            *e = *slot;
            slot->job = NULL;
            ring_trim(p);
            return true;
        }
    }
    return false;
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
    clove_task *relay = NULL;
    for (clove_task *i = p->idle_first; i != NULL; i = clove__tk(i)->idle_next)
        if (clove__tk(i)->waiting_on == NULL) {
            relay = i;
            break;
        }
    if (relay == NULL && !free_only)
        relay = p->idle_first;
    if (relay == NULL)
        return false;
    clove__idle_remove_locked(relay);
    clove__unlock(p);
    clove__wake_one(&clove__tk(relay)->sleep);
    clove__lock(p);
    return true;
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
 * out.vfn already), and fn = NULL sends its join to the slow path. Its
 * state gets the kind bit; the caller adds the rest. */
static inline struct clove__job *take_oldest(clove_task *t)
{
    struct clove__job *j = t->bottom++;
    clove_value_fn *run = j->fn;
    j->fn = NULL;
    if (run == CLOVE__VOID_JOB) {
        j->state = 0;
    } else {
        j->out.run = run;
        j->state = CLOVE__KIND_VALUE;
    }
    return j;
}

static inline uintptr_t seq_bits(uint32_t noffered)
{
    return ((uintptr_t)noffered & CLOVE__SEQ_MASK) << CLOVE__SEQ_SHIFT;
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
    clove__tk(t)->own_stamp = t->bottom->state;
    struct clove__job *j = take_oldest(t);
    j->state |= CLOVE__TAG_RESERVED | seq_bits(clove__tk(t)->noffered);
    clove__tk(t)->noffered++;
    clove__tk(t)->own_reserve = j;
    /* Publishes out.run, arg and state to whoever claims j. */
    if (CLOVE__UNLIKELY(clove__tsan_present()))
        publish_reserve_tsan(t, j);
    else
        atomic_store_explicit(&clove__tk(t)->reserve, j, memory_order_release);
}

/* Share the claimed record j of owner into the ring as SHARED, keeping its
 * kind and sequence number; returns its slot. Lock held, ring not full. */
static uint32_t share_locked(clove_pool *p, struct clove__job *j, clove_task *owner)
{
    uint32_t slot = ring_push(p, j, owner);
    j->state = CLOVE__TAG_SHARED | ((uintptr_t)slot << CLOVE__SLOT_SHIFT) |
               (j->state & ((CLOVE__SEQ_MASK << CLOVE__SEQ_SHIFT) | CLOVE__KIND_VALUE));
    return slot;
}

/*
 * Requests and batches. A task that finishes a shared job and finds the
 * ring empty would wait for the next beat (half an interval on average)
 * while its job's owner, which forked that job, may have more queued. So
 * it *requests* more: before it marks its job DONE it raises the owner's
 * heartbeat word with BEAT | REQ or BEAT | REQ_ONE (run_one_locked; the
 * owner cannot have left the join of that job yet, so the word is alive).
 * The owner answers at its next fork or tick (heartbeat_beat): it shares
 * even when nobody is idle yet (the requester is about to be: it looks at
 * the ring under the lock before it sleeps, so the share is either found
 * or its wake-up reaches it). A request is one share per job run
 * elsewhere, and the record shared is the owner's oldest, as at a beat.
 *
 * Wide fan-out (a loop that forks every child of a node, then joins them
 * all) leaves a queue of sibling records whose oldest is often a leaf: its
 * taker is done at once. So after a job shorter than an eighth of an
 * interval the request is REQ, answered with a *batch*: the owner's oldest
 * record (the reserve or the queue's oldest, the base, SHARED as a single
 * share is) and the next oldest queued records above it, up to
 * t->batch_n in all, as one ring entry of n records. Each of those others
 * is marked MEMBER (with its offset from the base and its own LIFO
 * sequence number) and counts in noffered, so its join leaves the inline
 * path. batch_n starts at 1, doubles at each REQ answered (up to
 * CLOVE__BATCH_MAX) and halves when the owner has to wait for one of its
 * batches. After a longer job the request is REQ_ONE, answered with one
 * record, as a beat is (a job that long saw beats of its own, and long
 * leaves would be shared in doubling batches that nobody can hand back),
 * and only while no other task is idle: then the heartbeat thread is
 * asleep, and the requester would wait for its kick, its wake-up and its
 * beat; with others idle, beats and the ramp-up's flags are coming
 * anyway, and more requests only add shares of smaller pieces
 * (sim/README.md, "Requests and batches").
 *
 *   - The taker pops the entry (base TAKEN) and runs the n jobs, oldest
 *     first, as a divide and conquer over the range that forks its upper
 *     half (run_batch): so its own heartbeats hand out halves of what is
 *     left, and it takes no lock per record. It marks the base DONE when
 *     all n have run, and only then: a member's result is in its out.value
 *     by then.
 *   - The owner joins the members first (they are newer than the base).
 *     Under the lock it looks at the base: SHARED (still in the ring) ->
 *     the member is the entry's last record; the entry shrinks by one and
 *     the join returns false. TAKEN -> wait for DONE (help, sleep on the
 *     base like any join). DONE -> the member's result is there. The
 *     base's own join is that of a single share (the entry is down to 1).
 * Nothing of this is on the fork/join fast path.
 * Model: the BATCH steps in model/clove.pml (model/README.md).
 */

/*
 * The heartbeat thread's half (lock held): if w has a reserve and a task is
 * idle, claim the reserve and share it. Returns the idle task taken off the
 * idle list, which the caller wakes after unlocking, or NULL.
 */
clove_task *clove__steal_locked(clove_task *w)
{
    clove_pool *p = w->pool;
    if (p->idle_first == NULL || ring_full(p))
        return NULL;
    struct clove__job *j = atomic_load_explicit(&clove__tk(w)->reserve, memory_order_relaxed);
    if (j == NULL)
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
    share_locked(p, j, w);
    /* Let the owner reserve its next oldest fork at its next tick. Release,
     * and before the idle task is taken (its idle_count store, also a
     * release, is what the owner's hint may see first): an owner that sees
     * either sees the CAS, so it drops its stale reserve at its next fork
     * (model: BUG_STEAL_NO_BEAT). */
    atomic_store_explicit(&w->heartbeat, CLOVE__HB_BEAT, memory_order_release);
    clove_task *wake = p->idle_first;
    clove__idle_remove_locked(wake);
    return wake;
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
    bool shared = false;
    uint64_t when = 0; /* the trace's time of this beat */
    /* Only the heartbeat thread clears t->reserve behind our back. The
     * acquire orders (memory orders in this handler: model/README.md,
     * "Atomics"): if our exchange took the BEAT the thief stored after its
     * CAS, this load sees that CAS. */
    if (clove__tk(t)->own_reserve != NULL && atomic_load_explicit(&clove__tk(t)->reserve, memory_order_acquire) == NULL) {
        clove__tk(t)->own_reserve = NULL;
        note_stolen(t);
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
                struct clove__job *j = clove__tk(t)->own_reserve;
                if (j != NULL) {
                    clove__tk(t)->own_reserve = NULL;
                    /* Fails if the heartbeat thread took it meanwhile: then
                     * it is shared already. */
                    if (!atomic_compare_exchange_strong_explicit(&clove__tk(t)->reserve, &j, NULL,
                                                                 memory_order_relaxed,
                                                                 memory_order_relaxed)) {
                        j = NULL;
                        note_stolen(t);
                    }
                }
                if (j == NULL && queued(t)) {
                    j = take_oldest(t);
                    j->state |= seq_bits(clove__tk(t)->noffered);
                    clove__tk(t)->noffered++;
                }
                if (j != NULL) {
                    shared = true;
                    uint32_t slot = share_locked(p, j, t);
                    if (v & CLOVE__HB_REQ) {
                        uint32_t want = clove__tk(t)->batch_n * 2;
                        if (want > CLOVE__BATCH_MAX)
                            want = CLOVE__BATCH_MAX;
                        clove__tk(t)->batch_n = want;
                        uint32_t n = 1;
                        for (; n < want && queued(t); n++) {
                            struct clove__job *m = take_oldest(t);
                            m->state |= CLOVE__TAG_MEMBER | ((uintptr_t)n << CLOVE__SLOT_SHIFT) |
                                        seq_bits(clove__tk(t)->noffered);
                            clove__tk(t)->noffered++;
                        }
                        p->ring[slot].n = n;
                    }
                    wake = p->idle_first;
                    if (wake != NULL)
                        clove__idle_remove_locked(wake);
                    /* The share's time, read before the wake-up: the
                     * woken task may start the job, and this thread be
                     * preempted, before the wake-up call returns. */
                    if (CLOVE__UNLIKELY(clove__tk(t)->slot->trace != NULL))
                        when = clove__now_ns();
                }
            }
            clove__unlock(p);
            if (wake)
                clove__wake_one(&clove__tk(wake)->sleep);
            if (shared)
                clove__count(t, CLOVE__ST_SHARED, 1);
        }
        if (CLOVE__UNLIKELY(clove__tk(t)->slot->trace != NULL)) {
            if (!shared)
                when = clove__now_ns();
            clove__trace_write(clove__tk(t)->slot->trace, shared ? CLOVE__EV_SHARE : CLOVE__EV_BEAT, when,
                               when);
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

/* Run the job of record m (one of a batch; its argument is arg: the
 * batch's base has its taker's top in its arg field by now, see
 * run_one_locked) and store its result. */
static void run_member(clove_task *t, struct clove__job *m, void *arg)
{
    if (m->state & CLOVE__KIND_VALUE) {
        m->out.value = m->out.run(t, arg);
    } else {
        m->out.vfn(t, arg);
        m->out.value = 0;
    }
}

struct batch_range {
    struct clove__job *lo, *hi;
    struct clove__job *base; /* the batch's first record, whose argument */
    void *base_arg;          /* is here */
};

static void run_batch(clove_task *t, const struct batch_range *r);

static void batch_range_job(clove_task *t, void *arg)
{
    run_batch(t, arg);
}

/* Run the jobs of the records [lo, hi) of a batch, oldest first: fork the
 * upper half (an ordinary fork of t, which t's heartbeats may share),
 * run the lower half, then the upper half if nobody took it. */
static void run_batch(clove_task *t, const struct batch_range *r)
{
    struct clove__job *lo = r->lo, *hi = r->hi;
    while (hi - lo > 1) {
        struct clove__job *mid = lo + (hi - lo) / 2;
        clove_future f;
        struct batch_range upper = {mid, hi, r->base, r->base_arg};
        clove_fork(t, &f, batch_range_job, &upper);
        struct batch_range lower = {lo, mid, r->base, r->base_arg};
        run_batch(t, &lower);
        if (clove_join(t, &f))
            return;
        lo = mid;
    }
    run_member(t, lo, lo == r->base ? r->base_arg : lo->arg);
}

/* A shared job that run_job_guarded is running: one record's job, or a
 * batch of n records from j (see "Requests and batches"). */
struct running_job {
    clove_task *t;
    clove_value_fn *run; /* a clove_fork_value job, or NULL */
    clove_fn *vfn;       /* a clove_fork job, or NULL */
    void *arg;
    struct clove__job *j;
    uint32_t n;
};

static void run_job(void *p)
{
    struct running_job *r = p;
    if (r->n > 1) {
        struct batch_range all = {r->j, r->j + r->n, r->j, r->arg};
        run_batch(r->t, &all);
    } else if (r->run) {
        r->j->out.value = r->run(r->t, r->arg);
    } else {
        r->vfn(r->t, r->arg);
        r->j->out.value = 0;
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
                  r->run ? clove__code_addr(r->run) : clove__code_addr(r->vfn));
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

/* Model: run_one_start, MS_DONE1, MS_DONE_RELOCK (BUG_DONE_NO_WAKE). */
static bool run_one_locked(clove_task *t, const struct clove__job *from)
{
    clove_pool *p = t->pool;
    struct clove__entry e;
    if (!ring_pop_from(p, &e, from))
        return false;
    struct clove__job *j = e.job;
    void *arg = j->arg;
    bool value = (j->state & CLOVE__KIND_VALUE) != 0;
    clove_value_fn *run = value ? j->out.run : NULL;
    clove_fn *vfn = value ? NULL : j->out.vfn;
    j->state = (j->state & ~(CLOVE__TAG_MASK | (CLOVE__SLOT_MASK << CLOVE__SLOT_SHIFT))) |
               CLOVE__TAG_TAKEN;
    /* Where this job's forks will begin on t's job stack, for a task that
     * waits for j at its join (join_shared). */
    j->arg = t->top;
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
        atomic_store_explicit(&e.owner->heartbeat, CLOVE__HB_BEAT, memory_order_relaxed);
    }
    clove__unlock(p);

    struct clove__job *saved_top = t->top;
    uint32_t saved_nshared = clove__tk(t)->noffered;
    struct clove__trace *tr = clove__tk(t)->slot->trace;
    uint64_t t0 = clove__now_ns();
    clove__tk(t)->nest++;
    /* What the job wrote (a clove_fork job: through its argument block,
     * in the owner's frame until the join) and its result are published
     * by the DONE store below. */
    struct running_job r = {t, run, vfn, arg, j, e.n};
    run_job_guarded(&r);
    clove__tk(t)->nest--;
    uint64_t t1 = clove__now_ns();
    if (CLOVE__UNLIKELY(tr != NULL))
        clove__trace_write(tr, CLOVE__EV_JOB, t0, t1);
    clove__count(t, CLOVE__ST_RAN, 1);
    if (t->top != saved_top || clove__tk(t)->noffered != saved_nshared)
        clove__misuse("shared job", "the job returned with a clove_fork that was never joined",
                      value ? clove__code_addr(run) : clove__code_addr(vfn));

    clove__lock(p);
    clove_task *owner = e.owner;
    /* The owner, asleep at the join of j: this DONE wakes it. */
    bool wake_owner = clove__tk(owner)->idle && clove__tk(owner)->waiting_on == j;
    /* Nothing more in the ring: request more from the owner, a batch
     * after a job shorter than an eighth of an interval, else one record
     * if nobody else is idle (the owner woken here aside; see "Requests
     * and batches"). Its task is alive until it has seen DONE. Relaxed:
     * the word is a hint, as the heartbeat thread's stores are (and
     * idle_count, written under the lock we hold, is exact). */
    if (ring_empty(p)) {
        if (t1 - t0 < (uint64_t)p->heartbeat_us * (1000u / CLOVE__CHUNK_DIV))
            atomic_store_explicit(&owner->heartbeat, CLOVE__HB_BEAT | CLOVE__HB_REQ,
                                  memory_order_relaxed);
        else if (atomic_load_explicit(&p->idle_count, memory_order_relaxed) == (uint32_t)wake_owner)
            atomic_store_explicit(&owner->heartbeat, CLOVE__HB_BEAT | CLOVE__HB_REQ_ONE,
                                  memory_order_relaxed);
    }
    /* After this store the owner may return from clove_join and reuse j
     * (and, for a batch, the records above it). */
    j->state = (j->state & ~CLOVE__TAG_MASK) | CLOVE__TAG_DONE;
    if (wake_owner) {
        clove__idle_remove_locked(owner);
        clove__unlock(p);
        clove__wake_one(&clove__tk(owner)->sleep);
        clove__lock(p);
    }
    return true;
}

bool clove__run_one_locked(clove_task *t)
{
    return run_one_locked(t, NULL);
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
 *     or above its top when it took j, which run_one_locked keeps in j's
 *     arg). Those lie inside j's subtree: the sequential program runs them
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

static inline bool kind_differs(const struct clove__job *j, bool value)
{
    return ((j->state & CLOVE__KIND_VALUE) != 0) != value;
}

/* The owner pops j without the lock: it must be the newest record it
 * offered, with nothing queued above it, joined by the form that forked
 * it. site: the join's caller, for the message. */
static inline void check_own_pop(clove_task *t, const struct clove__job *j, bool value,
                                 const void *site)
{
    if (((j->state >> CLOVE__SEQ_SHIFT) & CLOVE__SEQ_MASK) !=
            ((clove__tk(t)->noffered - 1) & CLOVE__SEQ_MASK) ||
        queued(t) || j + 1 != t->bottom)
        lifo_misuse(clove__join_name(value), site);
    if (kind_differs(j, value))
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
    j->state = CLOVE__TAG_FREED;
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
            check_own_pop(t, j, value, CLOVE__CALLER());
            pop_to(t, j);
            rearm(t);
            return false;
        }
        note_stolen(t);
        rearm(t);
    }
    /* A member of the batch whose DONE this task saw last (see "Requests
     * and batches"), below the member that saw it: its result is there,
     * and the lock that showed DONE made it visible. No lock. (Its state
     * is the owner's: no other task writes a member's state.) */
    if (j > clove__tk(t)->done_batch && j < clove__tk(t)->done_end && j < t->top) {
        check_own_pop(t, j, value, CLOVE__CALLER());
        /* Forks made from here on lie at j and above: out of the range. */
        clove__tk(t)->done_end = j;
        pop_to(t, j);
        return true;
    }
    return join_shared(t, j, value, CLOVE__CALLER());
}

static CLOVE__NOINLINE bool join_shared(clove_task *t, struct clove__job *j, bool value,
                                        const void *site)
{
    clove_pool *p = t->pool;
    const char *call = clove__join_name(value);
    /* A record joined through the slow path is left FREED at top (it is
     * the owner's alone): joining it again is the second join. */
    if (j == t->top && (j->state & CLOVE__TAG_MASK) == CLOVE__TAG_FREED)
        clove__misuse(call, "this future was already joined", site);
    /* Only records in t's job stack below its top can be t's forks. */
    if (j < t->base || j >= t->top)
        clove__misuse(call, "this future was never forked (or its memory was overwritten)",
                      site);
    /* A shared record (possibly our reserve, shared by the heartbeat
     * thread: it made that CAS and the SHARED store under the lock). Its
     * state is guarded by the lock (a taker may be writing it right now). */
    clove__lock(p);
    uintptr_t state = j->state;
    uintptr_t tag = state & CLOVE__TAG_MASK;
    if (tag == CLOVE__TAG_FREED)
        clove__misuse(call, "this future was already joined", site);
    if (p->nworkers == 0 || (tag != CLOVE__TAG_SHARED && tag != CLOVE__TAG_TAKEN &&
                             tag != CLOVE__TAG_DONE && tag != CLOVE__TAG_MEMBER))
        clove__misuse(call, "this future was never forked (or its memory was overwritten)",
                      site);
    if (((state >> CLOVE__SEQ_SHIFT) & CLOVE__SEQ_MASK) != ((clove__tk(t)->noffered - 1) & CLOVE__SEQ_MASK) ||
        clove__tk(t)->noffered == 0 || queued(t) || j + 1 != t->bottom)
        lifo_misuse(call, site);
    if (kind_differs(j, value))
        clove__kind_misuse(value, site);

    /* A member of a batch: what happened to it is its base's state (see
     * "Requests and batches"); the member is the newest record of the
     * batch left. */
    struct clove__job *w = j;
    if (tag == CLOVE__TAG_MEMBER) {
        w = j - ((state >> CLOVE__SLOT_SHIFT) & CLOVE__SLOT_MASK);
        state = w->state;
        tag = state & CLOVE__TAG_MASK;
        if (tag == CLOVE__TAG_SHARED) {
            /* The batch is still in the ring: it shrinks by this record. */
            struct clove__entry *e =
                &p->ring[(state >> CLOVE__SLOT_SHIFT) & CLOVE__SLOT_MASK];
            if (e->job != w || w + e->n != j + 1)
                clove__misuse(call, "this future's batch is corrupt (its memory was overwritten)",
                              site);
            e->n--;
            clove__unlock(p);
            /* (Not counted: the batch counts as one share, reclaimed
             * when its base is.) */
            pop_to(t, j);
            return false;
        }
        /* It was too big to wait for: the next one is half as big. */
        if (tag == CLOVE__TAG_TAKEN && clove__tk(t)->batch_n > 1)
            clove__tk(t)->batch_n /= 2;
    } else if (tag == CLOVE__TAG_SHARED) {
        /* Nobody took it yet: reclaim it, the caller runs it. (A batch's
         * members were joined first: it is down to its base.) */
        uint32_t slot = (uint32_t)((state >> CLOVE__SLOT_SHIFT) & CLOVE__SLOT_MASK);
        if (p->ring[slot].job != j || p->ring[slot].n != 1)
            clove__misuse(call, "this future's batch is corrupt (its memory was overwritten)",
                          site);
        p->ring[slot].job = NULL;
        ring_trim(p);
        clove__unlock(p);
        clove__count(t, CLOVE__ST_RECLAIMED, 1);
        pop_to(t, j);
        return false;
    }

    /* Taken (j, or the batch of the member j, whose base is w): help with
     * other shared jobs while it runs (those the stack has room for: see
     * "Helping" above; w's arg holds its taker's top when it took w),
     * sleep when there are none; the taker wakes us when it is done. */
    bool woken = false;
    uint64_t t0 = clove__now_ns();
    while ((w->state & CLOVE__TAG_MASK) != CLOVE__TAG_DONE) {
        if (clove__tk(t)->nest < HELP_NEST_MAX && run_one_locked(t, w->arg)) {
            woken = false;
            continue;
        }
        /* A share woke us for a job we may not take: pass it on to a
         * task in its worker loop (never to another waiter, which might
         * pass it back). The lock was dropped meanwhile: look again (w
         * may be DONE, and its taker did not wake us: we were not idle). */
        if (woken && relay_locked(p, true)) {
            woken = false;
            continue;
        }
        clove__tk(t)->waiting_on = w;
        clove__sleep_locked(t);
        clove__tk(t)->waiting_on = NULL;
        woken = true;
    }
    /* A share may have woken us (we were on the idle list) just as our
     * job finished. Pass that wake on, or the shared job would wait for
     * its owner's join (or the next share). Model: jloop_body; BUG_NO_RELAY
     * is only observable with >= 4 tasks (model/README.md). */
    clove_task *relay = NULL;
    if (woken && !ring_empty(p) && p->idle_first != NULL) {
        relay = p->idle_first;
        clove__idle_remove_locked(relay);
    }
    clove__unlock(p);
    if (relay)
        clove__wake_one(&clove__tk(relay)->sleep);
    /* A member's batch is done: the joins of the members below it need
     * no lock (clove__join_slow). Any other such join forgets it. */
    clove__tk(t)->done_batch = w != j ? w : NULL;
    clove__tk(t)->done_end = w != j ? j : NULL;
    uint64_t t1 = clove__now_ns();
    /* Counted when the job was still running at the first look (so a
     * batch, whose records' joins all look at its base, counts at most
     * one). */
    if (tag == CLOVE__TAG_TAKEN) {
        clove__count(t, CLOVE__ST_WAITS, 1);
        clove__count(t, CLOVE__ST_WAIT_NS, t1 - t0);
        if (CLOVE__UNLIKELY(clove__tk(t)->slot->trace != NULL))
            clove__trace_write(clove__tk(t)->slot->trace, CLOVE__EV_WAIT, t0, t1);
    }
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
    while ((j->state & CLOVE__TAG_MASK) != CLOVE__TAG_DONE) {
        clove__tk(t)->waiting_on = j;
        clove__sleep_locked(t);
        clove__tk(t)->waiting_on = NULL;
        if ((j->state & CLOVE__TAG_MASK) != CLOVE__TAG_DONE)
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
            r->state = CLOVE__TAG_FREED;
    }
    /* [base, bottom) are the offered records: each is RESERVED (r, just
     * taken back), SHARED, TAKEN or DONE. */
    if (t->bottom != t->base) {
        clove__lock(p);
        for (struct clove__job *j = t->base; j < t->bottom; j++) {
            uintptr_t tag = j->state & CLOVE__TAG_MASK;
            if (tag == CLOVE__TAG_SHARED) {
                /* Nobody took it: out of the ring, never run. */
                uint32_t slot = (uint32_t)((j->state >> CLOVE__SLOT_SHIFT) & CLOVE__SLOT_MASK);
                p->ring[slot].job = NULL;
                ring_trim(p);
                clove__count(t, CLOVE__ST_RECLAIMED, 1);
            } else if (tag == CLOVE__TAG_TAKEN) {
                wait_done_locked(t, j);
            }
            j->state = CLOVE__TAG_FREED;
        }
        clove__unlock(p);
    }
    t->top = t->base;
    t->bottom = t->base;
    clove__tk(t)->noffered = 0;
    clove__tk(t)->done_batch = NULL; /* no batch of these records is joined */
    clove__tk(t)->done_end = NULL;
    if (p->nworkers > 0)
        rearm(t);
}
