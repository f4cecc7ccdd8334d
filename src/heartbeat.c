/* SPDX-License-Identifier: MIT */
/*
 * heartbeat.c - the heartbeat thread: once per interval, while some
 * clove_pool_run is in progress and some task is idle, it asks every busy
 * task to share (the BEAT bit of its heartbeat word) and shares the
 * reserve of a task that left the previous beat unanswered
 * (clove__steal_locked, share.c). It sleeps while a beat could do no
 * good, and clove__hb_kick wakes it.
 *
 * Lock rules: as pool.c (the pool lock is taken once per pass, only while
 * a task is idle and a run is in progress; wake-ups after unlocking).
 */
#include "fault.h"
#include "internal.h"
#include "wait.h"

#include <stdint.h>

/* After this many heartbeat intervals with no clove_pool_run in progress
 * and none started, the heartbeat thread sleeps until the next run. Short
 * back-to-back runs therefore never pay for waking it, and an idle pool
 * costs about this many wake-ups before it goes quiet. (While runs are in
 * progress but no task is idle it sleeps at once: see clove__heartbeat_main.) */
#define HB_GRACE_BEATS 4
/* The probe after a beat on a kick comes interval / HB_PROBE_DIV later:
 * the time a loop takes to answer (its chunks last that long). */
#define HB_PROBE_DIV CLOVE__CHUNK_DIV
/* A clove_pool_run is beaten only once the heartbeat thread has known it
 * for interval / HB_RUN_AGE_DIV (see heartbeat_pass). */
#define HB_RUN_AGE_DIV 4

/* Kinds of pass over the tasks (heartbeat_pass). */
enum hb_pass {
    HB_PASS_BEAT,  /* steal from the unanswered, beat everyone old enough */
    HB_PASS_PROBE, /* steal from the unanswered, no new beat */
    HB_PASS_GATE,  /* beat only the runs first seen at `seen` or since */
    HB_PASS_STAMP  /* only note the runs not seen yet */
};

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
 * HB_PASS_PROBE: a second look shortly after a beat (clove__heartbeat_main):
 * steal from the tasks that have not answered it yet, and store no new
 * BEAT. HB_PASS_GATE and HB_PASS_STAMP: see below.
 *
 * The run-age gate: a clove_pool_run's task is skipped (neither beaten
 * nor stolen from) until this thread has known it for a quarter interval,
 * so that a run shorter than that is never shared, even when such runs
 * are issued back to back (passes come once per interval whenever the
 * runs began; sharing a run of a few microseconds costs a share, a
 * wake-up and a reclaim for nothing). The first pass that finds a run
 * stamps it (run_ns = now) and skips it; if that pass was a beat,
 * clove__heartbeat_main makes a GATE pass a quarter interval later, which
 * beats the runs it stamped that are still in progress; other passes
 * treat a run stamped at least a quarter interval ago like any task. A
 * longer run therefore gets its first beat a quarter to one and a quarter
 * intervals after it began (an interval after it, when its start woke
 * this thread: clove__heartbeat_main stamps it on waking). clove_pool_run
 * reads no clock for this. A run on the entry task is new when entry_gen
 * holds an odd value this thread has not seen (entry_seen): its run_ns is
 * reset then. Workers are not gated: they are busy only with work shared
 * from a run old enough.
 *
 * Returns the pass's time if it stamped a run (for the GATE pass to come),
 * else 0. */
static uint64_t heartbeat_pass(clove_pool *p, enum hb_pass pass, uint64_t seen)
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
    struct clove__task *w = p->workers, *end = p->workers + p->nworkers;
    if (pass == HB_PASS_GATE || pass == HB_PASS_STAMP)
        w = end; /* runs only */
    /* The entry task, while a run uses it: a new run (a new odd value)
     * has not been seen yet. */
    uint32_t gen = atomic_load_explicit(&p->entry_gen, memory_order_acquire);
    clove_task *entry = (gen & 1) ? &p->entry.pub : NULL;
    if (entry != NULL && gen != p->entry_seen) {
        p->entry_seen = gen;
        clove__tk(entry)->run_ns = 0;
    }
    for (clove_task *r = p->registered;;) {
        clove_task *t;
        if (w < end) {
            t = &w++->pub;
        } else if (entry != NULL || r != NULL) {
            if (entry != NULL)
                t = entry, entry = NULL;
            else
                t = r, r = clove__tk(r)->reg_next;
            if (clove__tk(t)->run_ns == 0) {
                clove__tk(t)->run_ns = now; /* first seen: skipped this time */
                stamped = now;
                continue;
            }
            if (pass == HB_PASS_STAMP)
                continue;
            /* Seen a quarter interval ago at least; a GATE pass only
             * beats those first seen at `seen` or since (the others
             * had their beat at the pass before). */
            if (now - clove__tk(t)->run_ns < min_age || (pass == HB_PASS_GATE && clove__tk(t)->run_ns < seen))
                continue;
        } else {
            break;
        }
        if (clove__tk(t)->idle)
            continue;
        /* BEAT still set: no fork and no tick since the last beat. Share
         * its reserve for it. (A task that answers shares by itself, its
         * reserve first, and spares this thread the wake-up calls.) A GATE
         * pass only beats: its runs have not been beaten yet. */
        bool unanswered = pass != HB_PASS_GATE &&
                          (atomic_load_explicit(&t->heartbeat, memory_order_relaxed) & CLOVE__HB_BEAT);
        /* The run this pass judged: for the entry task, the one that
         * entry_gen named at the top (the run's run_gen), which may have
         * ended since, and another begun, without the lock. The steal
         * and the beat are for that run only (clove__steal_locked, and
         * heartbeat_beat drops a beat tagged with an earlier run's
         * generation). A registered task's run ends under the lock. */
        uint32_t run_gen = t == &p->entry.pub
                               ? gen
                               : atomic_load_explicit(&clove__tk(t)->run_gen, memory_order_relaxed);
        if (t == &p->entry.pub)
            clove__hook(CLOVE__HOOK_ENTRY_PASS, (unanswered ? 1u : 0u) | (pass != HB_PASS_PROBE ? 2u : 0u));
        if (unanswered) {
            clove_task *k = clove__steal_locked(t, run_gen);
            if (k != NULL) {
                wake[nwake++] = k;
                if (nwake == sizeof wake / sizeof wake[0]) {
                    clove__unlock(p);
                    for (unsigned i = 0; i < nwake; i++)
                        clove__wake_one(&clove__tk(wake[i])->sleep);
                    nwake = 0;
                    clove__lock(p);
                    /* The lists may have changed: the rest waits a beat. */
                    break;
                }
            }
        }
        if (pass != HB_PASS_PROBE)
            atomic_store_explicit(&t->heartbeat, CLOVE__HB_BEAT | clove__hb_gen(run_gen),
                                  memory_order_release);
    }
    clove__unlock(p);
    for (unsigned i = 0; i < nwake; i++)
        clove__wake_one(&clove__tk(wake[i])->sleep);
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
 * GATE pass of heartbeat_pass; runs stamped since wait for the next pass).
 * Returns the time waited, which the caller takes off its next interval,
 * so that beats keep coming once per interval. */
static uint64_t gate(clove_pool *p, uint64_t seen, uint64_t spent)
{
    const uint64_t quarter = (uint64_t)p->heartbeat_us * 1000u / HB_RUN_AGE_DIV;
    uint64_t wait = quarter > spent ? quarter - spent : 0;
    clove__wait(&p->stopping, 0, wait);
    if (hb_useful(p))
        (void)heartbeat_pass(p, HB_PASS_GATE, seen);
    return wait;
}

/* Model: HB in model/clove.pml; PROGRESS_BEAT checks it never spins
 * without a useful beat. */
void *clove__heartbeat_main(void *arg)
{
    clove_pool *p = arg;
    const uint64_t interval_ns = (uint64_t)p->heartbeat_us * 1000u;
    clove__thread_name("clove-hb");
    /* Linux's default 50 us timer slack would stretch a 100 us interval by
     * half; ask for a tenth of the interval instead. */
    clove__timer_slack(interval_ns / 10 + 1);
    uint64_t last_runs = clove__runs_now(p);
    unsigned quiet = 0;
    uint64_t last_beat = 0; /* clove__now_ns() of the last heartbeat_pass */
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
                    (void)heartbeat_pass(p, HB_PASS_STAMP, 0);
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
            uint64_t seen = heartbeat_pass(p, HB_PASS_BEAT, 0);
            last_beat = clove__now_ns();
            clove__wait(&p->stopping, 0, interval_ns / HB_PROBE_DIV);
            if (hb_useful(p)) {
                uint64_t probe_seen = heartbeat_pass(p, HB_PASS_PROBE, 0);
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
            uint64_t seen = heartbeat_pass(p, HB_PASS_BEAT, 0);
            last_beat = clove__now_ns();
            if (seen != 0)
                waited = gate(p, seen, 0);
        }
    }
    return NULL;
}
