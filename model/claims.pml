/* SPDX-License-Identifier: MIT */
/*
 * claims.pml - a Promela model of per-member claims on shared records:
 * the first step of design D in sim/fanout.md ("Recommendation for the
 * C runtime"), which src/share.c follows ("Claims" there; the
 * differences: model/README.md, "The claims model"). Checked by
 * model/check.sh.
 *
 * One owner task forks records into its job stack and joins them newest
 * first; at any fork it may share a range [lo, hi) of its oldest queued
 * records (one record, or a batch) into the ring. Workers take ranges
 * from the ring and walk them oldest first. A shared record's state word
 * leaves the pool lock: every change is an atomic operation on it.
 *
 *   SHARED -> TAKEN      a runner's claim (compare-and-swap)
 *   SHARED -> RECLAIMED  the owner's claim back at its join (CAS); the
 *                        owner then runs the job itself
 *   TAKEN -> TAKEN_W     the owner's CAS when it has to wait (the waiter
 *                        bit); if it fails the member is DONE
 *   TAKEN(_W) -> DONE    the runner's exchange after the job returned and
 *                        its result was stored; the old value says whether
 *                        to wake the owner (under the lock, as today)
 *
 * A runner stops at the first member it fails to claim (the owner took
 * that one and every newer one back, or another runner holds it). A
 * runner answering a heartbeat hands out the upper half of its unclaimed
 * members as a new range. Nothing is removed from the ring when the
 * owner claims members back: a dead entry is dropped by its taker at the
 * first failed claim. The records are reused: the owner forks again at
 * the same positions, and a runner holding a stale range, or a stale
 * entry left in the ring, may then claim a member of a later share. The
 * model checks that this is harmless: a record is SHARED only while its
 * share is live (between the share and the owner's join), and a claim
 * of a live member is a claim like any other.
 *
 * The owner may also reserve its oldest queued record (fn cleared, the
 * reserve word set), which the heartbeat thread may steal by CAS and
 * share as a range of one; the owner's join takes it back by CAS or,
 * when stolen, joins it as any shared record.
 *
 * Not modelled here (clove.pml has them): when beats come and when the
 * heartbeat thread steals (here: at any time), the idle list and
 * the sleep of workers (a worker here blocks until the ring is not
 * empty), the heartbeat word's requests (-DREQUEST models direct
 * ones), the leapfrog rule, memory orders (Spin interleaves
 * sequentially consistent steps; the C needs the share to publish fn,
 * arg and SHARED with release and the claims to acquire, DONE to release
 * the result and the owner's loads to acquire it). What the C record
 * adds (forks that leave the state word alone, the leapfrog pointer,
 * atomic accesses to the state): sim/fanout.md, "Claims in C".
 *
 * Properties (assertions and end states, pan -DSAFETY):
 *   - every incarnation of a record runs exactly once;
 *   - a job runs only while its record is live and claimed by its runner;
 *   - a join returns only with its job's result;
 *   - no lost wake-up: nobody is blocked at the end (invalid end state).
 *
 * Bug variants (model/check.sh runs each and requires it to be caught):
 *   BUG_CLAIM_LOAD_STORE    the runner's claim as a load and a store
 *   BUG_RECLAIM_LOAD_STORE  the owner's claim back as a load and a store
 *   BUG_WAITER_STORE        the waiter bit set by a load and a store
 *   BUG_DONE_NO_WAKE        DONE stored without reading the waiter bit
 *   BUG_DONE_BEFORE_RESULT  DONE before the result is stored
 *   BUG_SHARE_KEEPS_FN      a share that leaves fn set (the owner's inline
 *                           join then pops it as queued)
 *   BUG_STEAL_UNLOCKED      the owner whose CAS on its reserve failed looks
 *                           at the record without taking the lock, before the
 *                           heartbeat thread has made it SHARED
 * and CHECK_STALE_REACHED must fail too: a runner does claim a member of
 * a later share than its range's, so the search covers that case.
 *
 * With -DREQUEST, direct requests (design D's third step): an idle worker
 * CASes its index into the owner's request word, then waits on its
 * mailbox; the owner's handler (at a fork) exchanges the word and answers
 * at once with a range or with "nothing"; a requester left unanswered
 * withdraws by CAS, and if that fails the answer is coming and it waits
 * for it. Checked: no answer is left in a mailbox (a lost range), and
 * nobody waits for an answer that never comes. Bug variants:
 *   BUG_WITHDRAW_STORE      the withdrawal as a load and a store
 *   BUG_NO_EMPTY_ANSWER     a taken request with nothing to share left
 *                           unanswered
 * CHECK_ANSWER_REACHED must fail: a member from an answer is run.
 *
 * With -DHANDOFF (and -DREQUEST), the handoff of design D's third step: a
 * worker with nothing to take goes on the idle list (under the lock) and
 * sleeps; the owner's share, when a worker is idle, may take it off the
 * list and put the range into its mailbox instead of the ring, in one
 * step under the lock, before waking it. The woken worker runs what its
 * mailbox holds, or looks at the ring again. Checked in addition: a
 * handoff never overwrites a mailbox (an answer not yet taken), and no
 * range is left in one. Bug variant:
 *   BUG_WAKE_BEFORE_MAIL    the worker taken off the list and woken in
 *                           one step, its mailbox written in a later one
 * CHECK_HANDOFF_REACHED must fail: a member from a handoff is run.
 *
 * With -DJOINASK, a joiner's direct requests (share.c, join_ask and
 * may_answer): the worker's claimed job forks NIN records of its own
 * (its job stack: wst, wfn, ...) and joins them newest first, as the
 * owner does; at each of those forks its handler takes a request from its
 * asker word. The owner, waiting at its join for a record the worker
 * runs (TAKEN, before the waiter bit), may ask it: it writes the awaited
 * record and the runner's top from its TAKEN word (ajob, afrom), CASes
 * itself into the worker's asker word, waits for its mailbox or
 * withdraws as above, and claims and runs the members of a range it is
 * answered. The worker answers a range of its oldest queued records only
 * if ajob is still TAKEN with afrom and its oldest queued record lies at
 * afrom or above (may_answer), else nothing. A worker that takes a range
 * may first have a queued record of its own below it (wouter: as when
 * it takes the range while waiting at a join of its own). Checked in
 * addition: the owner runs only records forked inside the very job it
 * awaits (helping's leapfrog rule: wxk, wxi), each of the worker's
 * records runs once and its join returns after it ran, no answer is left
 * in a mailbox and no request in the asker word. Bug variants:
 *   BUG_ANSWER_ANY_JOB      the runner answers without looking at the
 *                           awaited record (a request left from a job it
 *                           finished is answered from the next one)
 *   BUG_ANSWER_BELOW_FROM   the runner does not compare its oldest record
 *                           with afrom (it hands out a record of its own
 *                           forked before the job)
 * CHECK_JOINASK_REACHED must fail: the owner runs a member from such an
 * answer.
 *
 * With -DSPINPARK, the owner's wait at a join spins, then parks on a
 * sleep word (design D's second step): it stores SPINNING, looks at the
 * record, spins (looks again) for a while, then CASes SPINNING ->
 * PARKED and futex-waits while the word is PARKED; the runner whose DONE
 * found the waiter bit exchanges in WOKEN and calls the futex wake only
 * if it took PARKED. Checked: no lost wake-up (an owner asleep for ever
 * is an invalid end state). Bug variants:
 *   BUG_PARK_STORE          parking by a plain store instead of the CAS
 *   BUG_CHECK_BEFORE_SPIN   the record looked at before SPINNING is
 *                           stored, not after
 *
 * With -DSTAMP, every fork also writes the state word, as a fork that
 * stamps its record would: with tag bits that no offered
 * state uses (S_FREE here). BUG_STAMP_SHARED writes a stamp whose tag
 * bits read SHARED, as a stamp of the fork's address xor its argument
 * can: a stale runner then claims a queued record, which the owner also
 * pops inline (sim/fanout.md, "Claims in C"). The C forks write no
 * state at all.
 */

#ifndef NREC
#define NREC 2          /* records in the owner's job stack */
#endif
#ifndef NROUND
#define NROUND 2        /* times the owner forks and joins them all */
#endif
#ifndef NWORK
#define NWORK 2         /* workers */
#endif
#ifndef RING
#define RING 3          /* ring entries */
#endif

#define S_FREE      0   /* never shared (the owner's) */
#define S_SHARED    1
#define S_TAKEN     2
#define S_TAKEN_W   3
#define S_DONE      4
#define S_RECLAIMED 5
#define S_RESERVED  6   /* the owner's reserve (take_oldest: fn cleared) */

#define NONE 255

/* The records. st: the state word (atomic; a fork does not write it, so a
 * reused record keeps the last state of its previous share until it is
 * shared again). fn: set by a fork, cleared by a share (owner only).
 * inc, runs, res: for the checks (the incarnation now at the position,
 * how often it ran, the incarnation whose job stored the result). */
byte st[NREC];
bool fn[NREC];
byte inc[NREC];
byte runs[NREC];
byte res[NREC];

/* The owner's wake-up: set under the lock by a runner whose DONE found
 * the waiter bit, consumed by the owner's sleep (an event: a wake that
 * comes before the sleep is not lost; a stale one only makes the owner
 * look at the state again). */
bool woken;

/* The ring, guarded by the pool lock (each access one atomic step). */
byte rlo[RING];
byte rhi[RING];
byte rinc[RING];    /* the owner's fork count at the share (the checks) */
byte rhead;
byte rcount;

bool ownerdone;

/* A mailbox: empty, a range, or "nothing" (direct requests). */
#define M_EMPTY 0
#define M_RANGE 1
#define M_NONE  2
#ifdef REQUEST
/* Direct requests: the owner's request word (atomic: a requesting
 * worker's index, or NONE) and each worker's mailbox, where the owner's
 * handler leaves its answer: a range, or "nothing" (M_NONE). */
byte req = NONE;
byte mbox[NWORK];
byte mlo[NWORK];
byte mhi[NWORK];
byte minc[NWORK];
#endif
#ifdef HANDOFF
#ifndef REQUEST
#error "HANDOFF needs REQUEST (the mailboxes)"
#endif
/* The idle list (guarded by the pool lock): a worker on it sleeps until a
 * waker takes it off. */
bool idle[NWORK];

/* A handoff's mailbox: worker w gets the owner's range [bottom, end). */
inline hand(w)
{
    mlo[w] = bottom; mhi[w] = end; minc[w] = ninc;
    mbox[w] = M_RANGE;
    printf("MSC: owner hands [%d, %d) to worker %d\n", bottom, end, w)
}
#endif

#ifdef JOINASK
#ifndef NIN
#define NIN 2           /* records the worker's job forks */
#endif
#define WREC (NIN + 1)  /* the worker's job stack: an outer record + NIN */
#define OWNER 1
/* The worker's records (the same states as the owner's), each one's
 * runs, and the owner record and incarnation of the job it was forked
 * inside (wxk NONE: forked outside any). tfrom: the worker's top when it
 * claimed each owner record (the TAKEN word's runner top). */
byte wst[WREC];
bool wfn[WREC];
byte wruns[WREC];
byte wxk[WREC];
byte wxi[WREC];
byte tfrom[NREC];
/* The worker's asker word (atomic: OWNER or NONE), the request the
 * owner writes before its CAS (ajob, afrom), the owner's mailbox, and
 * the worker's wake-up (set by the owner's DONE that found its waiter
 * bit, as woken for the owner). */
byte wreq = NONE;
byte ajob, afrom;
byte ombox;
byte omlo, omhi;
bool wwoken;
#endif

/* The owner's reserve word (atomic): its oldest queued record, taken out
 * of the queue, that the heartbeat thread may steal by CAS to NONE. */
byte resv = NONE;

#ifdef SPINPARK
/* The owner's sleep word (atomic) and whether it sleeps in the futex:
 * futex_wait(&sw, PARKED) sleeps only if sw is still PARKED, atomically;
 * a futex wake ends that sleep. */
#define SW_SPINNING 0
#define SW_PARKED   1
#define SW_WOKEN    2
byte sw = SW_WOKEN;
bool fsleep;
#endif

inline ring_push(lo, hi, when)
{
    rlo[(rhead + rcount) % RING] = lo;
    rhi[(rhead + rcount) % RING] = hi;
    rinc[(rhead + rcount) % RING] = when;
    rcount++
}

/* Run the job of record k (its incarnation is fixed while it is claimed
 * or being run inline). */
inline run_job(k)
{
    assert(runs[k] == 0);
    runs[k] = 1
}

#ifdef JOINASK
/* The worker's fork at its position m, inside the job of owner record k
 * (or outside any, k NONE). */
inline wfork(m, k)
{
    wruns[m] = 0;
    wfn[m] = true;
    wxk[m] = k;
    if
    :: k != NONE -> wxi[m] = inc[k]
    :: else -> wxi[m] = 0
    fi;
    wtop = m + 1
}

/* The worker's handler at a fork inside the job of owner record k: it
 * takes a request from its asker word (an exchange) and answers it at
 * once, with a range of its oldest queued records (one, or all) if
 * may_answer allows, else with nothing. */
inline wanswer()
{
    atomic { rq = wreq; wreq = NONE }
    if
    :: rq != NONE ->
        /* may_answer: the awaited record still TAKEN with afrom (so this
         * worker still runs that job), the oldest queued record at afrom
         * or above. */
#ifdef BUG_ANSWER_ANY_JOB
        ok = true;
#else
        ok = ((st[ajob] == S_TAKEN || st[ajob] == S_TAKEN_W) && tfrom[ajob] == afrom);
#endif
#ifndef BUG_ANSWER_BELOW_FROM
        ok = ok && wbottom >= afrom;
#endif
        if
        :: ok && wbottom < wtop ->
            if
            :: wend = wbottom + 1
            :: wend = wtop
            fi;
            m = wbottom;
            do
            :: m < wend -> wfn[m] = false; wst[m] = S_SHARED; m++
            :: else -> break
            od;
            omlo = wbottom; omhi = wend;
            ombox = M_RANGE;
            printf("MSC: worker answers the owner with [%d, %d)\n", wbottom, wend);
            wbottom = wend
        :: else ->
            ombox = M_NONE
        fi
    :: else -> skip
    fi
}

/* The worker's join of its record m (the newest it has not joined). */
inline wjoin(m)
{
    if
    :: wfn[m] ->
        wfn[m] = false;
        assert(wruns[m] == 0);
        wruns[m] = 1
    :: else ->
        atomic {
            if
            :: wst[m] == S_SHARED -> wst[m] = S_RECLAIMED; got = true
            :: else -> got = false
            fi
        }
        if
        :: got ->
            assert(wruns[m] == 0);
            wruns[m] = 1
        :: else ->
            atomic {
                if
                :: wst[m] == S_TAKEN -> wst[m] = S_TAKEN_W; wait = true
                :: else -> wait = false
                fi
            }
            if
            :: wait ->
                do
                :: wst[m] == S_DONE -> break
                :: else -> atomic { wwoken -> wwoken = false }
                od
            :: else -> skip
            fi;
            assert(wst[m] == S_DONE)
        fi
    fi;
    assert(wruns[m] == 1);
    wtop = m;
    if
    :: wbottom > m -> wbottom = m
    :: else -> skip
    fi
}

/* The job of owner record k on the worker: NIN forks, each followed by
 * the handler, then their joins. */
inline wjob(k)
{
    j = wtop;
    do
    :: j < wtop0 + NIN -> wfork(j, k); wanswer(); j++
    :: else -> break
    od;
    do
    :: j > wtop0 -> j--; wjoin(j)
    :: else -> break
    od
}
#endif

proctype Worker(byte me)
{
    byte lo, hi, k, mid, old, when;
    bool claimed, withdrawn, answered;
    bool handed;    /* the range came by a handoff (CHECK_HANDOFF_REACHED) */
#ifdef SPINPARK
    byte oldsw;
#endif
#ifdef JOINASK
    byte wtop, wtop0, wbottom, wend, rq, m, j;
    bool ok, got, wait, wouter;
#endif


    do
    :: if
       :: atomic {
              rcount > 0 ->
              lo = rlo[rhead];
              hi = rhi[rhead];
              when = rinc[rhead];
              rhead = (rhead + 1) % RING;
              rcount--
          }
          printf("MSC: worker %d takes [%d, %d)\n", me, lo, hi);
          answered = false;
          handed = false
#ifdef REQUEST
       :: atomic {
              req == NONE && !ownerdone ->
              /* The request: a CAS of the owner's request word from
               * NONE to our index (then BEAT | REQ into its heartbeat
               * word, not modelled: the owner looks at every fork). */
              req = me;
              assert(mbox[me] == M_EMPTY)
          }
          printf("MSC: worker %d asks the owner\n", me);
          do
          :: mbox[me] != M_EMPTY -> break
          :: /* Unanswered for a while: withdraw. */
#ifdef BUG_WITHDRAW_STORE
             withdrawn = (req == me);
             if
             :: withdrawn -> req = NONE
             :: else -> skip
             fi;
#else
             atomic {
                 if
                 :: req == me -> req = NONE; withdrawn = true
                 :: else -> withdrawn = false
                 fi
             }
#endif
             if
             :: withdrawn -> break
             :: else -> mbox[me] != M_EMPTY; break /* the answer is coming */
             fi
          od;
          if
          :: mbox[me] == M_RANGE ->
              lo = mlo[me]; hi = mhi[me]; when = minc[me];
              mbox[me] = M_EMPTY;
              answered = true;
              printf("MSC: worker %d is answered [%d, %d)\n", me, lo, hi)
          :: mbox[me] == M_NONE -> mbox[me] = M_EMPTY; lo = 0; hi = 0
          :: mbox[me] == M_EMPTY -> lo = 0; hi = 0
          fi;
          handed = false
#endif
#ifdef HANDOFF
       :: atomic {
              /* Nothing in the ring: onto the idle list, asleep. */
              rcount == 0 && !ownerdone ->
              assert(mbox[me] == M_EMPTY);
              idle[me] = true
          }
          printf("MSC: worker %d sleeps\n", me);
          /* Woken: taken off the list by a waker, which filled the
           * mailbox first when it handed over a range. */
          !idle[me];
          if
          :: mbox[me] == M_RANGE ->
              lo = mlo[me]; hi = mhi[me]; when = minc[me];
              mbox[me] = M_EMPTY;
              handed = true;
              printf("MSC: worker %d is handed [%d, %d)\n", me, lo, hi)
          :: else -> lo = 0; hi = 0; handed = false
          fi;
          answered = false
#endif
       :: atomic { rcount == 0 && ownerdone } -> break
       fi;
#ifdef JOINASK
       /* Perhaps a queued record of its own below the range's jobs. */
       if
       :: wfork(0, NONE); wouter = true
       :: wouter = false
       fi;
#endif
       k = lo;
       do
       :: k < hi ->
           /* Answering a heartbeat: the upper half of the unclaimed
            * members [k, hi) becomes a range of its own. */
           if
           :: hi - k >= 2 ->
               atomic {
                   if
                   :: rcount < RING ->
                       mid = (k + hi) / 2;
                       ring_push(mid, hi, when);
                       printf("MSC: worker %d splits off [%d, %d)\n", me, mid, hi);
                       hi = mid
                   :: else -> skip
                   fi
               }
           :: true -> skip
           fi;
           /* The claim. */
#ifdef BUG_CLAIM_LOAD_STORE
           claimed = (st[k] == S_SHARED);
           if
           :: claimed -> st[k] = S_TAKEN
           :: else -> skip
           fi;
#else
           atomic {
               if
               :: st[k] == S_SHARED -> st[k] = S_TAKEN; claimed = true
#ifdef JOINASK
                   ; tfrom[k] = wtop
#endif
               :: else -> claimed = false
               fi
           }
#endif
           if
           :: !claimed ->
               printf("MSC: worker %d fails to claim %d: stops\n", me, k);
               break
           :: else -> skip
           fi;
           printf("MSC: worker %d runs %d (incarnation %d)\n", me, k, inc[k]);
           assert(!fn[k] && (st[k] == S_TAKEN || st[k] == S_TAKEN_W));
#ifdef CHECK_ANSWER_REACHED
           /* Fails if a runner runs a member it got from an answer. */
           assert(!answered);
#endif
#ifdef CHECK_HANDOFF_REACHED
           /* Fails if a runner runs a member handed over to it. */
           assert(!handed);
#endif
#ifdef CHECK_STALE_REACHED
           /* Fails if a runner can claim a member of a later share than
            * its range's: the check that the model reaches that case. */
           assert(inc[k] <= when);
#endif
           run_job(k);
#ifdef JOINASK
           wtop0 = wtop;
           wjob(k);
#endif
#ifndef BUG_DONE_BEFORE_RESULT
           res[k] = inc[k];
#endif
           /* DONE: the old value says whether the owner waits. */
#ifdef BUG_DONE_NO_WAKE
           st[k] = S_DONE;
           old = S_TAKEN;
#else
           atomic { old = st[k]; st[k] = S_DONE }
#endif
#ifdef BUG_DONE_BEFORE_RESULT
           res[k] = inc[k];
#endif
           if
           :: old == S_TAKEN_W ->
#ifdef SPINPARK
               /* Exchange in WOKEN; the futex wake only if it was
                * PARKED (no lock). */
               atomic { oldsw = sw; sw = SW_WOKEN }
               if
               :: oldsw == SW_PARKED -> fsleep = false
               :: else -> skip
               fi;
#else
               woken = true;   /* lock, wake the owner, unlock */
#endif
               printf("MSC: worker %d wakes the owner\n", me)
           :: else -> skip
           fi;
           k++
       :: else -> break
       od;
#ifdef JOINASK
       if
       :: wouter -> wjoin(0)
       :: else -> skip
       fi
#endif
    od;
#ifdef REQUEST
    /* No answer is left behind (a late one would be a lost range). */
    assert(mbox[me] == M_EMPTY);
#endif
    skip
}

/* The heartbeat thread's steal of a reserve, made while the owner does
 * not answer its beats: a CAS of the reserve word to NONE, then, under
 * the lock, the record SHARED as a range of one. One atomic step here:
 * the owner whose CAS on its reserve failed takes the lock before it
 * looks at the record, so it never sees the record between the two. */
proctype Heartbeat()
{
    byte k;

    do
    :: atomic {
           resv != NONE && rcount < RING ->
           k = resv;
           resv = NONE;
#ifdef BUG_STEAL_UNLOCKED
       }
       atomic {
#endif
           assert(st[k] == S_RESERVED && !fn[k]);
           st[k] = S_SHARED;
           ring_push(k, k + 1, inc[k]);
           printf("MSC: heartbeat steals the reserve %d\n", k)
       }
    :: ownerdone -> break
    od
}

/* The owner's fork at position k: the fast path writes fn (and arg) and
 * moves top; the state word is left as it was. */
inline fork(k)
{
    ninc++;
    inc[k] = ninc;
    runs[k] = 0;
    fn[k] = true;
#ifdef STAMP
    st[k] = S_FREE;     /* a debug fork's stamp: tag bits of no offered state */
#endif
#ifdef BUG_STAMP_SHARED
    st[k] = S_SHARED;   /* a stamp whose tag bits read SHARED */
#endif
    top = k + 1
}

/* At a fork, the owner may share its oldest queued records: one, or all
 * of them (a batch). Each member's fn is cleared and its state set
 * SHARED; then the range goes into the ring under the lock. */
inline maybe_share()
{
    if
    :: bottom < top && ownres == NONE ->
        /* Reserve the oldest queued record (the first fork of a task
         * with nothing reserved, in pools with workers). */
        ownres = bottom;
        fn[bottom] = false;
        st[bottom] = S_RESERVED;
        resv = bottom;
        printf("MSC: owner reserves %d\n", bottom);
        bottom++
    :: bottom < top && rcount < RING ->
        if
        :: end = bottom + 1
        :: end = top
        fi;
        k = bottom;
        do
        :: k < end ->
#ifndef BUG_SHARE_KEEPS_FN
            fn[k] = false;
#endif
            st[k] = S_SHARED;
            k++
        :: else -> break
        od;
#ifdef HANDOFF
        /* Under the lock: to an idle worker's mailbox, if one is idle
         * (the mailbox filled, the worker taken off the list, then
         * woken), else into the ring. */
        atomic {
            w = 0;
            do
            :: w < NWORK && idle[w] -> break
            :: w < NWORK && !idle[w] -> w++
            :: w == NWORK -> break
            od;
            if
            :: w < NWORK ->
                assert(mbox[w] == M_EMPTY);
#ifndef BUG_WAKE_BEFORE_MAIL
                hand(w);
#endif
                idle[w] = false
            :: else ->
                ring_push(bottom, end, ninc);
                printf("MSC: owner shares [%d, %d)\n", bottom, end);
                w = NONE
            fi
        }
#ifdef BUG_WAKE_BEFORE_MAIL
        if
        :: w != NONE -> hand(w)
        :: else -> skip
        fi;
#endif
#else
        atomic { ring_push(bottom, end, ninc) }
        printf("MSC: owner shares [%d, %d)\n", bottom, end);
#endif
        bottom = end
    :: true -> skip
    fi;
#ifdef REQUEST
    /* Then the handler takes a request (an exchange of the request word)
     * and answers it at once: its oldest queued record (or all of them),
     * or nothing (when all it has is its reserve). */
    atomic { rq = req; req = NONE }
    if
    :: rq != NONE && bottom < top ->
        if
        :: end = bottom + 1
        :: end = top
        fi;
        k = bottom;
        do
        :: k < end -> fn[k] = false; st[k] = S_SHARED; k++
        :: else -> break
        od;
        mlo[rq] = bottom; mhi[rq] = end; minc[rq] = ninc;
        mbox[rq] = M_RANGE;
        printf("MSC: owner answers worker %d with [%d, %d)\n", rq, bottom, end);
        bottom = end
    :: rq != NONE && bottom >= top ->
#ifndef BUG_NO_EMPTY_ANSWER
        mbox[rq] = M_NONE
#else
        skip
#endif
    :: else -> skip
    fi;
#endif
    skip
}

#ifdef JOINASK
/* The owner waits for record k, which the worker runs (TAKEN, no waiter
 * bit yet): it may ask the worker for records forked inside k's job
 * (join_ask), for as long as it likes, and runs what it is answered. */
inline join_ask(k)
{
    do
    :: st[k] == S_DONE -> break
    :: true -> break    /* asking is over: the waiter bit and the sleep */
    :: atomic {
           /* The TAKEN word: the runner's top (join_shared's load) ... */
           (st[k] == S_TAKEN) -> afr = tfrom[k]
       }
       /* ... then the request, and the CAS into the asker word. */
       ajob = k; afrom = afr;
       atomic {
           if
           :: wreq == NONE -> wreq = OWNER; asked = true
           :: else -> asked = false
           fi
       }
       if
       :: asked ->
           printf("MSC: owner asks the worker (awaits %d)\n", k);
           do
           :: ombox != M_EMPTY -> break
           :: atomic {
                  if
                  :: wreq == OWNER -> wreq = NONE; withdrawn = true
                  :: else -> withdrawn = false
                  fi
              }
              if
              :: withdrawn -> break
              :: else -> ombox != M_EMPTY; break /* the answer is coming */
              fi
           od;
           if
           :: ombox == M_RANGE ->
               /* Claim and run the members oldest first; stop at the
                * first that fails (the worker took it back). */
               m2 = omlo;
               do
               :: m2 < omhi ->
                   atomic {
                       if
                       :: wst[m2] == S_SHARED -> wst[m2] = S_TAKEN; claimed2 = true
                       :: else -> claimed2 = false
                       fi
                   }
                   if
                   :: !claimed2 -> break
                   :: else -> skip
                   fi;
#ifdef CHECK_JOINASK_REACHED
                   assert(false);
#endif
                   /* Helping's leapfrog rule: only a record forked
                    * inside the job awaited, this incarnation of it. */
                   assert(wxk[m2] == k && wxi[m2] == inc[k]);
                   assert(wruns[m2] == 0);
                   wruns[m2] = 1;
                   atomic { old2 = wst[m2]; wst[m2] = S_DONE }
                   if
                   :: old2 == S_TAKEN_W -> wwoken = true
                   :: else -> skip
                   fi;
                   m2++
               :: else -> break
               od
           :: else -> skip
           fi;
           ombox = M_EMPTY
       :: else -> skip
       fi
    od
}
#endif

/* The join of a shared record (or a stolen reserve): claim it back, or
 * wait for its runner. */
inline claim_or_wait(k)
{
#ifdef BUG_RECLAIM_LOAD_STORE
    got = (st[k] == S_SHARED);
    if
    :: got -> st[k] = S_RECLAIMED
    :: else -> skip
    fi;
#else
    atomic {
        if
        :: st[k] == S_SHARED -> st[k] = S_RECLAIMED; got = true
        :: else -> got = false
        fi
    }
#endif
    if
    :: got ->
        printf("MSC: owner claims %d back\n", k);
        run_job(k);
        res[k] = inc[k]
    :: else ->
#ifdef JOINASK
        join_ask(k);
#endif
#ifdef BUG_WAITER_STORE
        wait = (st[k] == S_TAKEN);
        if
        :: wait -> st[k] = S_TAKEN_W
        :: else -> skip
        fi;
#else
        atomic {
            if
            :: st[k] == S_TAKEN -> st[k] = S_TAKEN_W; wait = true
            :: else -> wait = false
            fi
        }
#endif
        if
        :: wait ->
            printf("MSC: owner waits for %d\n", k);
#ifdef SPINPARK
            do
            :: skip ->
#ifndef BUG_CHECK_BEFORE_SPIN
                sw = SW_SPINNING;
#endif
                if
                :: st[k] == S_DONE -> break
                :: else -> skip
                fi;
#ifdef BUG_CHECK_BEFORE_SPIN
                sw = SW_SPINNING;
#endif
                /* The spin: it sees DONE, or runs out. */
                if
                :: st[k] == S_DONE -> break
                :: true -> skip
                fi;
#ifdef BUG_PARK_STORE
                sw = SW_PARKED;
                parked = true;
#else
                atomic {
                    if
                    :: sw == SW_SPINNING -> sw = SW_PARKED; parked = true
                    :: else -> parked = false
                    fi
                }
#endif
                if
                :: parked ->
                    atomic {
                        if
                        :: sw == SW_PARKED -> fsleep = true
                        :: else -> skip
                        fi
                    }
                    !fsleep
                :: else -> skip
                fi
            od
#else
            do
            :: st[k] == S_DONE -> break
            :: else -> atomic { woken -> woken = false }
            od
#endif
        :: else -> skip
        fi;
        assert(st[k] == S_DONE)
    fi
}

/* The owner's join of record k (the newest it has not joined). */
inline join(k)
{
    if
    :: fn[k] ->
        /* Queued: the inline pop. */
        fn[k] = false;
        run_job(k);
        res[k] = inc[k]
    :: !fn[k] && ownres == k ->
        /* The reserve: take it back by CAS, unless the heartbeat thread
         * stole it; then it is a shared record like any other. */
        ownres = NONE;
        atomic {
            if
            :: resv == k -> resv = NONE; got = true
            :: else -> got = false
            fi
        }
        if
        :: got ->
            run_job(k);
            res[k] = inc[k]
        :: else ->
            claim_or_wait(k)
        fi
    :: !fn[k] && ownres != k ->
        claim_or_wait(k)
    fi;
    /* The join returns with the job's result. */
    assert(runs[k] == 1 && res[k] == inc[k]);
    top = k;
    if
    :: bottom > k -> bottom = k
    :: else -> skip
    fi
}

active proctype Owner()
{
    byte r, k, end, top, bottom, ninc, j;
    byte ownres = NONE;   /* the reserve the owner made, until its join */
    byte rq, w;
    bool got, wait, parked;
#ifdef JOINASK
    byte afr, m2, old2;
    bool asked, withdrawn, claimed2;
#endif

    r = 0;
    do
    :: r < NROUND ->
        j = 0;
        do
        :: j < NREC -> fork(j); maybe_share(); j++
        :: else -> break
        od;
        j = NREC;
        do
        :: j > 0 -> j--; join(j)
        :: else -> break
        od;
        r++
    :: else -> break
    od;
#ifdef HANDOFF
    /* The run ends: the pool's stop wakes every idle worker. */
    atomic {
        ownerdone = true;
        w = 0;
        do
        :: w < NWORK -> idle[w] = false; w++
        :: else -> break
        od
    }
#else
    ownerdone = true
#endif
#ifdef JOINASK
    /* No request is left in the asker word, no answer in the mailbox. */
    assert(wreq == NONE && ombox == M_EMPTY)
#endif
}

init
{
    byte i;
    atomic {
        i = 0;
        do
        :: i < NWORK -> run Worker(i); i++
        :: else -> break
        od;
        run Heartbeat()
    }
}
