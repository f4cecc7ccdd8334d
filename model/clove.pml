/* SPDX-License-Identifier: MIT */
/*
 * clove.pml - a Promela model of clove's concurrency protocol
 * (src/share.c, src/pool.c, src/heartbeat.c, include/clove.h). See model/README.md for
 * what is modelled, what is abstracted and how to run it (model/check.sh).
 *
 * Processes: Task(0) is the external thread (clove_pool_run of the root
 * job, then clove_pool_destroy), Task(1..NW) are pool workers
 * (worker_main), HB is the heartbeat thread (clove__heartbeat_main).
 *
 * Every critical section of pool->lock is one indivisible d_step (no
 * critical section in clove blocks, sleeps or runs user code), except
 * heartbeat_pass's: its accesses to a task's heartbeat word and reserve race
 * with the owner's lock-free ones, so it is several steps and hbl (the
 * heartbeat thread holds the lock) keeps the other critical sections out.
 * Every seq_cst atomic outside the lock, every futex wait and every futex
 * wake is a step of its own.
 *
 * The reserve (the long-leaf protocol): task->reserve is resv[], the
 * owner's shadow task->own_reserve is the local rsh, the heartbeat word's
 * BEAT/ARM bits are hbflag[]; the owner's handler is MS_HS1..MS_HS3 and the
 * re-arm MS_ARM1/MS_ARM2, its claim at the join is the I_JOIN slow path,
 * and the heartbeat thread's steal is HB's hs 1..6. See README.md for the
 * mapping to the C functions and for the three findings that the model
 * made while the protocol was built (BUG_LOAD_STORE_CLEAR,
 * BUG_NO_HANDLER_REARM, BUG_SHARE_EMPTY_LIST reproduce them).
 *
 * Configuration macros (spin -DNAME ...):
 *   NW=1|2|3        worker threads (tasks = NW + 1)
 *   SPURIOUS        futex waits may also return for no reason
 *   LONGWORK        the root job may tick forever between its forks and
 *                   joins (a run that lasts "a while"); otherwise it ticks once
 *   LONGLEAF        the root forks A, may tick, forks B, and enters a long
 *                   leaf that never ends: no fork, no tick, ever again (the
 *                   case the reserve exists for; only the LTL check leaf
 *                   applies)
 *   LTL_LEAF        adds the LTL property leaf (with LONGLEAF)
 *   FAIRLOCK        the heartbeat thread does not take the lock while a
 *                   task waits for it (liveness runs, see HB)
 *   GRACE=n         HB_GRACE_BEATS (4 in pool.c)
 *   PROGRESS_BEAT   a heartbeat that is useful is a progress state (for the
 *                   "heartbeat thread never spins uselessly" check)
 *   LTL_LOSTKICK    adds the LTL property lostkick
 *   FAN             the root forks A, B and D in a row, ticks twice, then
 *                   joins D, B, A: with A reserved, a request answered at
 *                   its second tick shares B and D as one batch (share.c,
 *                   "Requests and batches")
 *   BUG_*           deliberate bugs, see README.md
 */

#ifndef NW
#define NW 1
#endif
#define NT (NW + 1)          /* tasks: 0 = external (Main), 1..NW workers */
#if NW == 1
#define ALL_WDONE wdone[1]
#define PENDSUM (pend[0] + pend[1])
#elif NW == 2
#define ALL_WDONE (wdone[1] && wdone[2])
#define PENDSUM (pend[0] + pend[1] + pend[2])
#else
#define ALL_WDONE (wdone[1] && wdone[2] && wdone[3])
#define PENDSUM (pend[0] + pend[1] + pend[2] + pend[3])
#endif

#ifndef YOUNG_SKIPS
#define YOUNG_SKIPS 2  /* passes that may skip a young run (hb_next) */
#endif
#ifndef GRACE
#define GRACE 2
#endif

/* ---- the fork tree: root forks A and B, A forks C ------------------- */
/* job ids: 0 root (never forked), 1 A, 2 B, 3 C (and, with
 * TREE4, 4 D forked by B; with FAN, 4 D forked by the root) */
#if defined(TREE4) || defined(FAN)
#define NJ 5
#else
#define NJ 4
#endif

#define I_FORK 1
#define I_TICK 2             /* clove_tick; with LONGWORK: a loop of ticks */
#define I_JOIN 3
#define I_RET  4
#define I_LEAF 5             /* LONGLEAF: a leaf that never ends */

/* program of each job: OP(j, pc), ARG(j, pc) (the job forked/joined) */
#ifdef TREE4
#define OP(j,p) ((j)==0 -> ((p)==0 -> I_FORK : ((p)==1 -> I_FORK : ((p)==2 -> I_TICK : \
                ((p)==3 -> I_JOIN : ((p)==4 -> I_JOIN : I_RET))))) : \
                (((j)==1 || (j)==2) -> ((p)==0 -> I_FORK : ((p)==1 -> I_JOIN : I_RET)) : I_RET))
#define ARG(j,p) ((j)==0 -> ((p)==0 -> 1 : ((p)==1 -> 2 : ((p)==3 -> 2 : ((p)==4 -> 1 : 0)))) : \
                 ((j)==1 -> ((p)<=1 -> 3 : 0) : ((j)==2 -> ((p)<=1 -> 4 : 0) : 0)))
#elif defined(FAN)
/* root: fork A, B, D; tick; tick; join D, B, A */
#define OP(j,p) ((j)==0 -> ((p)<=2 -> I_FORK : ((p)<=4 -> I_TICK : ((p)<=7 -> I_JOIN : I_RET))) : \
                ((j)==1 -> ((p)==0 -> I_FORK : ((p)==1 -> I_JOIN : I_RET)) : I_RET))
#define ARG(j,p) ((j)==0 -> ((p)==0 -> 1 : ((p)==1 -> 2 : ((p)==2 -> 4 : ((p)==5 -> 4 : \
                 ((p)==6 -> 2 : ((p)==7 -> 1 : 0)))))) : \
                 ((j)==1 -> ((p)<=1 -> 3 : 0) : 0))
#elif defined(LONGLEAF)
/* root: fork A; tick (or not); fork B; a leaf that never ends */
#define OP(j,p) ((j)==0 -> ((p)==0 -> I_FORK : ((p)==1 -> I_TICK : ((p)==2 -> I_FORK : I_LEAF))) : \
                ((j)==1 -> ((p)==0 -> I_FORK : ((p)==1 -> I_JOIN : I_RET)) : I_RET))
#define ARG(j,p) ((j)==0 -> ((p)==0 -> 1 : ((p)==2 -> 2 : 0)) : \
                 ((j)==1 -> ((p)<=1 -> 3 : 0) : 0))
#else
#define OP(j,p) ((j)==0 -> ((p)==0 -> I_FORK : ((p)==1 -> I_FORK : ((p)==2 -> I_TICK : \
                ((p)==3 -> I_JOIN : ((p)==4 -> I_JOIN : I_RET))))) : \
                ((j)==1 -> ((p)==0 -> I_FORK : ((p)==1 -> I_JOIN : I_RET)) : I_RET))
#define ARG(j,p) ((j)==0 -> ((p)==0 -> 1 : ((p)==1 -> 2 : ((p)==3 -> 2 : ((p)==4 -> 1 : 0)))) : \
                 ((j)==1 -> ((p)<=1 -> 3 : 0) : 0))
#endif

/* ---- record states (fst): the tag of struct clove__job.state -------- */
/* F_RESERVED: in task->reserve (fn == NULL, below bottom: off the queue) */
#define F_NONE   0
#define F_QUEUED 1           /* in the owner's queue: fn != NULL, [bottom, top) */
#define F_SHARED 2           /* CLOVE__TAG_SHARED: in the ring */
#define F_TAKEN  3           /* CLOVE__TAG_TAKEN */
#define F_DONE   4           /* CLOVE__TAG_DONE */
#define F_JOINED 5           /* joined: CLOVE__TAG_FREED after the slow path;
                              * the inline join marks nothing in C */
#define F_RESERVED 6         /* CLOVE__TAG_RESERVED: in task->reserve */
#define F_MEMBER 7           /* CLOVE__TAG_MEMBER: in a batch above its base
                              * fbase[], whose state is the member's fate */

/* bits of task->heartbeat */
#define BEAT 1               /* CLOVE__HB_BEAT, stored by the heartbeat thread */
#define ARM  2               /* CLOVE__HB_ARM, stored by the owner */
#define REQ  4               /* CLOVE__HB_REQ, stored with BEAT by a taker
                              * that found the ring empty after a short
                              * job (a request, answered with a batch) */
#define REQ1 8               /* CLOVE__HB_REQ_ONE: the same after a longer
                              * job (answered with one record) */

/* ---- shared state --------------------------------------------------- */
/* guarded by pool->lock */
byte fst[NJ];                /* record states */
byte fowner[NJ];             /* ring entry's owner */
byte fkd[NJ];                /* the owner's frame that forked it (its
                              * job-stack position, in frame terms) */
byte ftk[NJ];                /* TAKEN: the taker, and the frame index the */
byte fsp[NJ];                /* job runs at on it (its top when it took
                              * it, which the C code keeps in the record's
                              * arg): helping's leapfrog rule */
byte fslot[NJ];              /* ring slot of a SHARED record */
byte rjob[NJ];               /* ring slots: job id, 0 = hole/empty */
byte rmem[NJ];               /* ring slots: the member of a batch of two
                              * (the entry's n - 1 records above rjob), 0 =
                              * none; a batch here has at most two records */
byte fbase[NJ];              /* a MEMBER record's base */
byte rhead, rtail;           /* ring_head, ring_tail (kept trimmed) */
byte il[NT];                 /* idle list, il[0] = idle_first (LIFO) */
byte nidle;                  /* idle_count (seq_cst stores under the lock) */
bit  idle[NT];               /* task->idle */
byte waiting_on[NT];         /* task->waiting_on (0 = NULL) */
bit  reg0;                   /* task 0 is in pool->registered */
bit  abandoned;              /* ABANDON: task 0 left its run at a join */
byte young0;                 /* passes that may still skip task 0's run as
                              * young (the run-age gate, HB_RUN_AGE_DIV):
                              * YOUNG_SKIPS at each run start, so that the
                              * gate delays beats but cannot starve a run */
bit  stopping;               /* pool->stopping */
/* per-task sleep word and its futex waiter */
byte sleepw[NT];             /* task->sleep: 0 IDLE, 1 WOKEN, 2 PARKED */
bit  wpk[NT];                /* the waker that took the task off the idle
                              * list found it PARKED: it calls the futex
                              * wake (else the task sees WOKEN by itself) */
bit  fwt[NT];                /* the task is blocked in clove__wait(&sleep) */
byte hbflag[NT];             /* task->heartbeat: BEAT | ARM | REQ | REQ1 */
/* the reserve (lock-free, seq_cst here) */
byte resv[NT];               /* task->reserve: job id, 0 = NULL */
byte fseq[NJ];               /* the LIFO sequence number in the record's state */
bit  hbl;                    /* the heartbeat thread holds pool->lock across
                              * heartbeat_pass (the only critical section
                              * that is more than one step: see README.md) */
/* heartbeat handshake (lock-free, seq_cst) */
byte rin;                    /* runs: low 32 bits (runs in progress) */
byte rst;                    /* runs: high 32 bits (runs started) */
bit  hb_asleep;
bit  hbw;                    /* HB blocked in clove__wait(&hb_asleep, 1) */
/* bookkeeping for the properties (not in the C code) */
byte cnt[NJ];                /* how often each job body ran */
byte res[NJ];                /* each job's result: 1 + its children's */
bit  jdone[NJ];              /* job body returned (before DONE is stored) */
bit  pend[NT];               /* removed from the idle list, not yet re-locked */
bit  hbdone;                 /* HB thread exited */
bit  wdone[NT];              /* worker exited */
bit  inleaf;                 /* LONGLEAF: the root is in its long leaf */
byte leafq;                  /* ... and these jobs (bit set) were queued,
                              * reserved or stolen (stolen0) by then */
byte stolen0;                /* LONGLEAF: jobs the heartbeat thread stole
                              * from the root since its last fork or tick
                              * (the leaf really starts there) */
#ifdef LONGLEAF
#define NOTE_TICK if :: me == 0 -> stolen0 = 0 :: else -> skip fi
#define NOTE_STEAL if :: hw == 0 -> stolen0 = stolen0 | (1 << g) :: else -> skip fi
#else
#define NOTE_TICK skip
#define NOTE_STEAL skip
#endif

#ifdef FAIRLOCK
byte tms[NT];                /* the tasks' micro-states (ms), global so that
                              * the heartbeat thread's FAIRLOCK guard can
                              * read them (see HB) */
#define ms tms[me]
#endif

/* ---- lock-held helpers ---------------------------------------------- */

/* ring kept trimmed (ring_trim); empty ring canonicalised to 0/0 */
inline ring_trim() {
    do
    :: rhead != rtail && rjob[rhead] == 0 -> rhead++
    :: rhead != rtail && rjob[rtail - 1] == 0 -> rtail--
    :: else -> break
    od;
    if
    :: rhead == rtail -> rhead = 0; rtail = 0
    :: else -> skip
    fi
}

#define RING_NONEMPTY (rhead != rtail)

/* idle_push_locked */
inline idle_push(t) {
    assert(!idle[t]);
    k = nidle;
    do
    :: k > 0 -> il[k] = il[k - 1]; k--
    :: else -> break
    od;
    il[0] = t;
    printf("MSC: task %d goes idle (sleep=0)\n", t);
    nidle++;
    idle[t] = 1;
    sleepw[t] = 0;
    k = 0
}

/* clove__idle_remove_locked */
inline idle_remove(t) {
    assert(idle[t]);
    k = 0;
    do
    :: il[k] == t -> break
    :: else -> k++
    od;
    do
    :: k + 1 < nidle -> il[k] = il[k + 1]; k++
    :: else -> break
    od;
    il[nidle - 1] = 0;
    printf("MSC: task %d taken off the idle list\n", t);
    nidle--;
    idle[t] = 0;
    pend[t] = 1;
#ifndef BUG_WAKE_BEFORE_STATE
    /* the exchange to WOKEN: wake only a parked task */
    wpk[t] = (sleepw[t] == 2);
    sleepw[t] = 1;
#else
    wpk[t] = 1;
#endif
    k = 0
}

/* Design invariant checked after every critical section: a shared job in
 * the ring never waits while a task sleeps on the idle list and no woken
 * task is on its way to look at the ring (what the relay in
 * clove__join_slow is for). */
inline check_inv() {
    k = 0;
    do
    :: k < nidle && waiting_on[il[k]] != 0 -> k++
    :: else -> break
    od;
    /* with the leapfrog rule, a waiter may sleep beside a job it may not
     * take: the invariant is about tasks in their worker loop */
    assert(!(RING_NONEMPTY && k < nidle && PENDSUM == 0));
    k = 0
}

/* ---- Task micro-states ---------------------------------------------- */
#define MS_JOB        1      /* interpret the top frame's next instruction */
#define MS_HS1        2      /* clove__heartbeat_slow: exchange(heartbeat, 0) */
#define MS_HS2        3      /* heartbeat_beat's critical section: share */
#define MS_WAKE       4      /* clove__wake_one(&wk->sleep), then wkret */
#define MS_WAKE2      5      /* (BUG_WAKE_BEFORE_STATE: the late store) */
#define MS_SL1        6      /* clove__sleep_locked: load runs, maybe kick */
#define MS_SL2        7      /* ... load sleep */
#define MS_SL3        8      /* ... clove__wait: futex compare */
#define MS_SL3B       9      /* ... blocked in the futex */
#define MS_SL4        10     /* ... clove__lock, back to the caller */
#define MS_K1         11     /* clove__hb_kick: load hb_asleep */
#define MS_K2         12     /* ... exchange */
#define MS_K3         13     /* ... wake */
#define MS_DONE1      14     /* run_one_locked after fn: lock, DONE */
#define MS_DONE0      44     /* ... whether the job was shorter than an
                              * interval (may request): a choice */
#define MS_DONE_RELOCK 15    /* ... relock after waking the owner */
#define MS_JRET       16     /* join_slow returns true (after the relay) */
#define MS_M1         21     /* clove_pool_run: take the entry task */
#define MS_M3         23     /* give it back */
#define MS_M5         25     /* clove_pool_destroy: stop_threads CS */
#define MS_STOPWAKE   26     /* wake each idle task */
#define MS_M6         27     /* hb_asleep = 0 */
#define MS_M7         28     /* wake_all(&hb_asleep) */
#define MS_M8         29     /* pthread_join(hb), pthread_join(workers) */
#define MS_W0         30     /* worker_main: lock */
#define MS_HS1A       31     /* (BUG_LOAD_STORE_CLEAR: store heartbeat = 0) */
#define MS_HS1B       32     /* heartbeat_beat: refresh the shadow: load reserve */
#define MS_HS1C       33     /* ... hint: load idle_count */
#define MS_ARM1       34     /* rearm: load heartbeat ... */
#define MS_HS3        35     /* ... the end: reserve the queue's oldest or rearm */
#define MS_JSLOW      36     /* clove__join_slow -> join_shared: locked path */
#define MS_ARM2       37     /* rearm: ... store heartbeat | ARM, then aret */
#define MS_JCLR       38     /* (BUG_RESERVE_NO_CAS: the plain store) */
#define MS_LEAF       39     /* LONGLEAF: the root's leaf, forever */
#define MS_JRELOOP    40     /* join_slow after a relay: relock, look again */
#define MS_AB1        41     /* ABANDON: clove__task_abandon claims the reserve */
#define MS_AB2        42     /* ... locked: reclaim SHARED, wait for TAKEN */
#define MS_AB3        43     /* ... relocked after a relay: look again */
#define MS_SLP        45     /* BUG_PARK_STORE: the store of PARKED after its load */

/* where the re-arm (MS_ARM1, MS_ARM2) continues (aret) */
#define RA_HANDLER 1         /* heartbeat_beat's end: back to the job */
#define RA_CLAIMED 2         /* join_slow claimed its reserve: return false */
#define RA_STOLEN  3         /* join_slow's claim failed: join_shared */

/* frame modes: how a job was called, i.e. what to do when it returns */
#define M_ROOT   1           /* fn of clove_pool_run */
#define M_WORKER 2           /* run_one_locked from worker_main */
#define M_HELP   3           /* run_one_locked from clove__join_slow */
#define M_LOCAL  4           /* the owner runs a not-taken/reclaimed job */

#define SL_WORKER 1
#define SL_JOIN   2
#define SL_AB     3          /* wait_done_locked (ABANDON) */

#define DEPTH 8
#define TJ fjob[sp - 1]
#define TP fpc[sp - 1]

inline push_frame(j, m) {
    fjob[sp] = j; fpc[sp] = 0; fmode[sp] = m; facc[sp] = 0; fwk[sp] = 0;
    fnext[sp] = 0; fdn[sp] = j;
    sp++;
    assert(sp < DEPTH)
}

/* clove__run_one_locked up to fn (lock held); sets got */
inline run_one_start(m) {
    if
    :: RING_NONEMPTY ->
        g = rjob[rhead];
        k = rmem[rhead];
        rjob[rhead] = 0;
        rmem[rhead] = 0;
        rhead++;
        ring_trim();
#ifndef BUG_RECLAIM_KEEPS_SLOT
        assert(fst[g] == F_SHARED);
#endif
        fst[g] = F_TAKEN; ftk[g] = me; fsp[g] = sp;
        printf("MSC: task %d takes job %d from the ring (batch member %d)\n", me, g, k);
        push_frame(g, m);
        /* a batch: its member runs after the base (run_batch, whose
         * proxy forks are ordinary forks and not modelled); the base's
         * DONE comes after both */
        fnext[sp - 1] = k;
        k = 0;
        got = 1
    :: else -> got = 0
    fi
}

/* Helping (clove__join_slow's loop, lock held, waiting for f): run_one
 * with the leapfrog rule of share.c: only the oldest ring job that the
 * taker of w2 (f, or f's batch base) forked while running it (forked at
 * or above the frame w2 runs at on it). The cap of four nested helps
 * never binds at these sizes.
 * With HELP_ANY: any job, as before the rule (the rule is about stack
 * depth, which the model does not see: both must pass). */
inline help_one_start() {
#ifdef HELP_ANY
    run_one_start(M_HELP)
#else
    got = 0;
    o = rhead;
    do
    :: o != rtail && rjob[o] != 0 && fowner[rjob[o]] == ftk[w2] && fkd[rjob[o]] >= fsp[w2] ->
        g = rjob[o];
        k = rmem[o];
        rjob[o] = 0;
        rmem[o] = 0;
        ring_trim();
        assert(fst[g] == F_SHARED);
        fst[g] = F_TAKEN; ftk[g] = me; fsp[g] = sp;
        printf("MSC: task %d helps with job %d (inside job %d, batch member %d)\n", me, g, w2, k);
        push_frame(g, M_HELP);
        fnext[sp - 1] = k;
        k = 0;
        got = 1;
        break
    :: o != rtail && !(rjob[o] != 0 && fowner[rjob[o]] == ftk[w2] && fkd[rjob[o]] >= fsp[w2]) ->
        o++
    :: o == rtail -> break
    od;
    o = 0
#endif
}

/* worker_main's loop body, lock held on entry; the critical section ends
 * here (unlock when running a job or sleeping or exiting). */
inline wloop_body() {
    if
    :: stopping -> wdone[me] = 1; ms = 0   /* unlock, thread exits */
    :: else ->
        run_one_start(M_WORKER);
        if
        :: got -> ms = MS_JOB
        :: else -> idle_push(me); slret = SL_WORKER; ms = MS_SL1
        fi;
        got = 0; g = 0
    fi;
    check_inv()
}

/* clove__join_slow's loop, lock held, top frame is at JOIN f */
/* clove__join_slow after the loop: unlock, pop the record (FREED),
 * return true; the caller reads the job's result */
inline jret_actions() {
    printf("MSC: task %d: join of job %d returns taken\n", me, f);
    fst[f] = F_JOINED;
    facc[sp - 1] = facc[sp - 1] + res[f];
    fwk[sp - 1] = 0;
    TP++;
    ms = MS_JOB
}

#ifdef BUG_WOKEN_MEANS_DONE
#define WOKEN_MEANS_DONE fwk[sp - 1]      /* BUG: any wake-up ends the wait */
#else
#define WOKEN_MEANS_DONE false
#endif
inline jloop_body() {
    f = ARG(TJ, TP);
    /* a member waits for its batch: its base's state (share.c) */
    if
    :: fst[f] == F_MEMBER -> w2 = fbase[f]
    :: else -> w2 = f
    fi;
    if
    :: fst[w2] == F_DONE || WOKEN_MEANS_DONE ->
        /* property 3: "taken" only after the job finished */
        printf("MSC: task %d: join of job %d leaves its wait loop\n", me, f);
        if
        :: w2 != f -> assert(fst[fbase[f]] == F_DONE && jdone[f])
        :: else -> assert(fst[f] == F_DONE && jdone[f])
        fi;
        /* task->done_batch: a member's batch seen DONE (under the lock),
         * forgotten at any other such join */
        if
        :: w2 != f -> dcache = w2
        :: else -> dcache = 0
        fi;
        if
#ifndef BUG_NO_RELAY
        :: fwk[sp - 1] && RING_NONEMPTY && nidle > 0 ->
            wk = il[0];
            idle_remove(wk);
            wkret = MS_JRET;
            ms = MS_WAKE
#endif
        :: else -> jret_actions()
        fi
    :: else ->
        help_one_start();
        if
        :: got -> ms = MS_JOB
        :: else ->
            /* relay_locked(p, true): a share woke us for a job we may not
             * take: wake an idle task in its worker loop (waiting_on 0),
             * if any, then look again once re-locked */
            k = 0;
            do
            :: k < nidle && waiting_on[il[k]] != 0 -> k++
            :: else -> break
            od;
            if
            :: fwk[sp - 1] && RING_NONEMPTY && k < nidle ->
                wk = il[k]; k = 0;
                idle_remove(wk);
                wkret = MS_JRELOOP;
                ms = MS_WAKE
            :: else ->
                k = 0;
                waiting_on[me] = w2;
                idle_push(me);
                slret = SL_JOIN;
                ms = MS_SL1
            fi
        fi;
        got = 0; g = 0
    fi;
    f = 0; w2 = 0;
    check_inv()
}

proctype Task(byte me)
{
#ifndef FAIRLOCK
    byte ms;                          /* micro-state */
#endif
    byte sp;                          /* frames */
    byte fjob[DEPTH], fpc[DEPTH], fmode[DEPTH], facc[DEPTH];
    byte fnext[DEPTH];                /* a batch's member, to run when this
                                       * frame (its base's) returns */
    byte fdn[DEPTH];                  /* the record whose DONE this frame's
                                       * return stores (its own, or for a
                                       * member its base's) */
    bit  fwk[DEPTH];                  /* join_slow's `woken` */
    byte q[3], qlen;                  /* the task's queue, [bottom, top) of
                                       * its job stack, oldest first (owner
                                       * only) */
    byte wk, wkret;                   /* wake target, continuation */
    byte kret;                        /* continuation after the kick */
    byte slret;                       /* caller of sleep_locked */
    byte dj, dmode;                   /* job just finished as a taker */
    byte wl;                          /* destroy: tasks to wake (bit set) */
    byte hv;                          /* a loaded heartbeat word (v) */
    byte nsh;                         /* task->noffered (owner only) */
    byte rsh;                         /* task->own_reserve: the owner's shadow
                                       * of task->reserve (owner only) */
    byte aret;                        /* continuation after the re-arm */
    byte f, g, k, o, w2;              /* scratch, always reset to 0 */
    bit  got;
    bit  hreq;                        /* the handler's v has REQ or REQ1 (a request) */
    bit  hbat;                        /* ... REQ: answered with a batch */
    bit  rq;                          /* run_one_locked: the job was short */
    byte dcache;                      /* task->done_batch (owner only) */

    if
    :: me == 0 -> ms = MS_M1
    :: else -> ms = MS_W0
    fi;

    do
    /* ================= job interpreter (owner-only code) ========== */
#ifdef ABANDON
    /* Main's thread is cancelled (or exits) at a join of its own code:
     * pool.c's run_abandoned instead of the join. Never inside a job it
     * runs for another task (M_HELP: cancellation is disabled there). */
    :: d_step { ms == MS_JOB && me == 0 && OP(TJ, TP) == I_JOIN && !abandoned ->
        k = 0;
        do
        :: k < sp && fmode[k] != M_HELP -> k++
        :: else -> break
        od;
        if
        :: k == sp -> abandoned = 1; ms = MS_AB1;
           printf("MSC: task 0 abandons its run\n")
        :: else -> skip
        fi;
        k = 0 }
#endif
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_FORK ->
        /* clove_fork: push on the job stack (owner-only), then its tick:
         * the relaxed load of the heartbeat word; non-zero (BEAT or ARM)
         * calls clove__heartbeat_slow */
        f = ARG(TJ, TP);
        q[qlen] = f; qlen++;
        fst[f] = F_QUEUED; fowner[f] = me; fkd[f] = sp - 1;
        TP++;
        NOTE_TICK;
        if
        :: hbflag[me] != 0 -> ms = MS_HS1;
           printf("MSC: task %d forks job %d and sees its heartbeat word %d\n", me, f, hbflag[me])
        :: else ->
           printf("MSC: task %d forks job %d, heartbeat word 0\n", me, f)
        fi;
        f = 0 }
#if defined(LONGLEAF)
    /* the root may or may not tick between its two forks (clove_tick
     * tests only BEAT); two options, since a d_step is deterministic */
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_TICK -> TP++ }
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_TICK ->
        TP++;
        NOTE_TICK;
        if
        :: hbflag[me] & BEAT -> ms = MS_HS1;
           printf("MSC: task %d ticks and sees its heartbeat word %d\n", me, hbflag[me])
        :: else -> skip
        fi }
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_LEAF ->
        /* after its second fork the root enters a long leaf and never
         * forks or ticks again: what it has queued or reserved now may
         * only be run by others (property 6) */
        printf("MSC: task %d enters a long leaf (list %d, reserve %d)\n", me, qlen, resv[me]);
        k = 0;
        do
        :: k < qlen -> leafq = leafq | (1 << q[k]); k++
        :: else -> break
        od;
        k = 0;
        if
        :: resv[me] != 0 -> leafq = leafq | (1 << resv[me])
        :: else -> skip
        fi;
        leafq = leafq | stolen0;
        inleaf = 1;
        ms = MS_LEAF }
#else
#ifdef LONGWORK
    :: ms == MS_JOB && OP(TJ, TP) == I_TICK ->
progress_tick:
       d_step {
#else
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_TICK ->
        TP++;
#endif
        /* clove_tick in the root's work: it tests only BEAT (ARM is for
         * the next fork), so a loop of ticks stays on the fast path */
        if
        :: hbflag[me] & BEAT -> ms = MS_HS1;
           printf("MSC: task %d ticks and sees its heartbeat word %d\n", me, hbflag[me])
        :: else -> skip
        fi }
#ifdef LONGWORK
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_TICK -> TP++ }
#endif
#endif
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_JOIN &&
                fst[ARG(TJ, TP)] == F_QUEUED ->
        /* clove_join fast path: fn != NULL (queued), pop (top = the
         * record; C marks nothing, JOINED is for the final check); the
         * caller runs it */
        f = ARG(TJ, TP);
        assert(qlen > 0 && q[qlen - 1] == f);
        qlen--; q[qlen] = 0;
        fst[f] = F_JOINED;
        push_frame(f, M_LOCAL);
        f = 0 }
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_JOIN &&
                fst[ARG(TJ, TP)] != F_QUEUED ->
        /* clove_join: fn == NULL, so clove__join_slow. If f is the
         * task's reserve by its shadow (f == t->own_reserve, owner-local),
         * reserved = NULL and the lock-free claim CAS(reserve, f, NULL):
         * on success the caller runs f (after the re-arm); on failure the
         * heartbeat thread stole it (note_stolen), re-arm, then the locked
         * path. The shadow test is local, so it and the CAS are one step */
        f = ARG(TJ, TP);
        assert(qlen == 0);    /* LIFO: bottom == top */
        assert(fowner[f] == me);
        if
        :: rsh != f && fst[f] == F_MEMBER && fbase[f] == dcache ->
            /* a member of the batch seen DONE last (task->done_batch):
             * joined without the lock */
            printf("MSC: task %d joins member %d of a batch seen done\n", me, f);
            assert(nsh > 0 && fseq[f] == nsh - 1);
            nsh--;
            assert(fst[dcache] == F_DONE && jdone[f]);
            jret_actions()
        :: rsh == f ->
            rsh = 0;
            if
#ifdef BUG_RESERVE_NO_CAS
            :: resv[me] == f -> ms = MS_JCLR  /* BUG: load, then a plain store */
#else
            :: resv[me] == f ->
                resv[me] = 0;
                printf("MSC: task %d claims back its reserve %d (CAS)\n", me, f);
                assert(fst[f] == F_RESERVED);
                assert(nsh > 0 && fseq[f] == nsh - 1);   /* LIFO sequence */
                nsh--;
                fst[f] = F_JOINED;
                aret = RA_CLAIMED;
                ms = MS_ARM1
#endif
            :: else ->
                printf("MSC: task %d: its claim of the reserve %d fails (stolen)\n", me, f);
                aret = RA_STOLEN;
                ms = MS_ARM1
            fi
        :: else -> ms = MS_JSLOW
        fi;
#ifdef BUG_NO_REARM
        /* BUG: the join does not re-arm (neither after a claim nor after
         * a failed one) */
        if
        :: ms == MS_ARM1 && aret == RA_CLAIMED ->
            aret = 0; push_frame(f, M_LOCAL); ms = MS_JOB
        :: ms == MS_ARM1 && aret == RA_STOLEN -> aret = 0; ms = MS_JSLOW
        :: else -> skip
        fi;
#endif
        f = 0 }
#ifdef BUG_RESERVE_NO_CAS
    :: d_step { ms == MS_JCLR ->
        /* BUG: store(reserve, NULL) after the load, no CAS */
        f = ARG(TJ, TP);
        resv[me] = 0;
        printf("MSC: task %d takes back its reserve %d (plain store)\n", me, f);
        nsh--;
        fst[f] = F_JOINED;
#ifdef BUG_NO_REARM
        push_frame(f, M_LOCAL); ms = MS_JOB;
#else
        aret = RA_CLAIMED; ms = MS_ARM1;
#endif
        f = 0 }
#endif
    /* rearm (share.c): a relaxed load of the heartbeat word and a store of
     * it | ARM (a BEAT stored in between is lost, as in the C code) */
    :: d_step { ms == MS_ARM1 -> hv = hbflag[me]; ms = MS_ARM2 }
    :: d_step { ms == MS_ARM2 ->
        hbflag[me] = hv | ARM;
        hv = 0;
        printf("MSC: task %d re-arms (heartbeat = %d)\n", me, hbflag[me]);
        if
        :: aret == RA_CLAIMED ->
            /* join_slow returns false: the caller runs the job */
            f = ARG(TJ, TP);
            push_frame(f, M_LOCAL);
            ms = MS_JOB;
            f = 0
        :: aret == RA_STOLEN -> ms = MS_JSLOW
        :: else -> ms = MS_JOB
        fi;
        aret = 0 }
    :: d_step { ms == MS_JSLOW && hbl == 0 ->
        /* clove__join_slow: the first critical section */
        f = ARG(TJ, TP);
        assert(qlen == 0);
        assert(fst[f] == F_SHARED || fst[f] == F_TAKEN || fst[f] == F_DONE ||
               fst[f] == F_MEMBER);
        assert(nsh > 0 && fseq[f] == nsh - 1);       /* LIFO sequence */
        nsh--;
        if
        :: fst[f] == F_MEMBER && fst[fbase[f]] == F_SHARED ->
            /* the batch is still in the ring: it shrinks by this member,
             * the newest record in it; run it here */
            assert(rmem[fslot[fbase[f]]] == f);
            printf("MSC: task %d takes member %d back from its batch\n", me, f);
#ifndef BUG_BATCH_NO_SHRINK
            rmem[fslot[fbase[f]]] = 0;
#endif
            fst[f] = F_JOINED;
            push_frame(f, M_LOCAL);
            ms = MS_JOB;
            f = 0
        :: fst[f] == F_SHARED ->
            /* reclaim: leave a hole, trim, run it here */
            printf("MSC: task %d reclaims job %d\n", me, f);
#ifndef BUG_RECLAIM_KEEPS_SLOT
            rjob[fslot[f]] = 0;
            ring_trim();
#endif
            fst[f] = F_JOINED;
            push_frame(f, M_LOCAL);
            ms = MS_JOB;
            f = 0;
            check_inv()
        :: else ->
            f = 0;
            fwk[sp - 1] = 0;
            jloop_body()
        fi }
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_RET ->
        /* the job's fn returns */
        f = TJ;
        cnt[f]++;
        printf("MSC: task %d finished running job %d\n", me, f);
        assert(cnt[f] == 1);          /* property 1: runs at most once */
        res[f] = facc[sp - 1] + 1;
        jdone[f] = 1;
        o = fmode[sp - 1];
        k = fnext[sp - 1]; g = fdn[sp - 1];
        sp--;
        fjob[sp] = 0; fpc[sp] = 0; fmode[sp] = 0; facc[sp] = 0; fwk[sp] = 0;
        fnext[sp] = 0; fdn[sp] = 0;
        if
        :: o == M_LOCAL ->
            /* back in the parent, after its clove_join returned false */
            facc[sp - 1] = facc[sp - 1] + res[f];
            TP++
        :: o == M_ROOT ->
            /* property 1: the root's result includes every job */
            assert(res[0] == NJ);
            ms = MS_M3
        :: k != 0 ->
            /* the base of a batch returned: its member next, same mode */
            printf("MSC: task %d runs member %d of the batch of %d\n", me, k, g);
#ifdef BUG_BATCH_EARLY_DONE
            /* BUG: the base is marked DONE before the member has run */
            fst[g] = F_DONE;
#endif
            push_frame(k, o);
            fdn[sp - 1] = g
        :: else ->
            dj = g; dmode = o; ms = MS_DONE0
        fi;
        f = 0; o = 0; k = 0; g = 0 }
    /* run_one_locked: the job ran for less than an eighth of an interval
     * (a request for a batch) or not (a request for one record): the
     * model has no clock, so either. (C asks for one record only if no
     * other task is idle; the model always may: a superset.) */
    :: atomic { ms == MS_DONE0 ->
        if
        :: rq = 1
        :: rq = 0
        fi;
        ms = MS_DONE1 }

    /* ================= clove__heartbeat_slow ======================= */
    /* Step 1: v = exchange(heartbeat, 0). Then heartbeat_beat (the fast
     * path for v == ARM, no reserve, queue non-empty reserves at once,
     * which is what heartbeat_beat does too: it is not separate here).
     * hs_decide: the owner-local part of the step-2 hint (reserved != NULL
     * or the queue is not empty); the shared part is MS_HS1C */
#define HS_DECIDE \
        hreq = (hv & (REQ | REQ1)) != 0; \
        hbat = (hv & REQ) != 0; \
        if \
        :: (hv & BEAT) && (rsh != 0 || qlen > 0) -> ms = MS_HS1C \
        :: else -> ms = MS_HS3 \
        fi; \
        hv = 0
#ifndef BUG_LOAD_STORE_CLEAR
    :: d_step { ms == MS_HS1 ->
        hv = hbflag[me]; hbflag[me] = 0;
        printf("MSC: task %d handler: v = exchange(heartbeat, 0) = %d\n", me, hv);
        if
        :: rsh != 0 -> ms = MS_HS1B
        :: else -> HS_DECIDE
        fi }
#else
    /* BUG: the spec's step 1, v = load(heartbeat); store(heartbeat, 0): a
     * BEAT stored in between is erased unanswered */
    :: d_step { ms == MS_HS1 -> hv = hbflag[me]; ms = MS_HS1A;
                printf("MSC: task %d handler: v = load(heartbeat) = %d\n", me, hv) }
    :: d_step { ms == MS_HS1A ->
        hbflag[me] = 0;
        printf("MSC: task %d handler: store(heartbeat, 0)\n", me);
        if
        :: rsh != 0 -> ms = MS_HS1B
        :: else -> HS_DECIDE
        fi }
#endif
    /* heartbeat_beat: if reserved != NULL and load(reserve) == NULL, the
     * heartbeat thread took it: reserved = NULL (note_stolen) */
    :: d_step { ms == MS_HS1B ->
        if
        :: resv[me] == 0 -> rsh = 0;
           printf("MSC: task %d handler: its reserve was stolen\n", me)
        :: else -> skip
        fi;
        HS_DECIDE }
    /* step 2's shared hint: load idle_count (a request needs none) */
    :: d_step { ms == MS_HS1C ->
        if
        :: nidle != 0 || hreq -> ms = MS_HS2
        :: else -> ms = MS_HS3
        fi }
    /* step 2, the critical section */
    :: d_step { ms == MS_HS2 && hbl == 0 ->
        if
        :: nidle > 0 || hreq ->  /* idle_first != NULL or a request (the
                                  * ring is never full) */
            /* the reserve first (it is older than the queue): reserved =
             * NULL and CAS(reserve, f, NULL), which fails if the heartbeat
             * thread took it since MS_HS1B; the reserve keeps its sequence
             * number */
            f = rsh;
            if
            :: f != 0 ->
                rsh = 0;
                if
                :: resv[me] == f -> resv[me] = 0;
                    assert(fst[f] == F_RESERVED);
                    printf("MSC: task %d shares its reserve %d\n", me, f)
                :: else -> f = 0;
                    printf("MSC: task %d: CAS on its reserve fails (stolen)\n", me)
                fi
            :: else -> skip
            fi;
            /* else the queue's oldest, if the queue is not empty (gets
             * sequence noffered++) */
            if
#ifdef BUG_SHARE_EMPTY_LIST
            /* BUG: the spec's wording, "else the list's oldest", even when
             * the queue is empty (take_oldest would take the free record
             * at top) */
            :: f == 0 -> assert(qlen > 0);
#else
            :: f == 0 && qlen > 0 ->
#endif
                f = q[0];
                k = 0;
                do
                :: k + 1 < qlen -> q[k] = q[k + 1]; k++
                :: else -> break
                od;
                qlen--; q[qlen] = 0;
                k = 0;
                fseq[f] = nsh; nsh++;
                printf("MSC: task %d shares job %d\n", me, f)
            :: else -> skip
            fi;
            if
            :: f != 0 ->
                fslot[f] = rtail;
                rjob[rtail] = f;
                rmem[rtail] = 0;
                fst[f] = F_SHARED;
                assert(fowner[f] == me);
                /* a request: a batch, f and the queue's oldest above it
                 * (MEMBER, sequence noffered++), one ring entry */
                if
                :: hbat && qlen > 0 ->
                    k = q[0];
                    o = 0;
                    do
                    :: o + 1 < qlen -> q[o] = q[o + 1]; o++
                    :: else -> break
                    od;
                    qlen--; q[qlen] = 0;
                    o = 0;
                    fst[k] = F_MEMBER;
                    fbase[k] = f;
                    fseq[k] = nsh; nsh++;
                    rmem[rtail] = k;
                    printf("MSC: task %d shares jobs %d and %d as a batch\n", me, f, k);
                    k = 0
                :: else -> skip
                fi;
                rtail++;
                f = 0;
                /* ... and wake exactly one idle task, if any, after
                 * unlocking */
                if
                :: nidle > 0 ->
                    wk = il[0];
                    idle_remove(wk);
                    wkret = MS_HS3;
                    ms = MS_WAKE
                :: else -> ms = MS_HS3
                fi
            :: else -> ms = MS_HS3
            fi
        :: else -> ms = MS_HS3
        fi;
        check_inv() }
    /* heartbeat_beat's end: if reserved == NULL, then if the queue is not
     * empty, reserve_oldest: take_oldest, RESERVED with sequence noffered++,
     * reserved = f and a release store of reserve (one step: the rest is
     * owner-local); otherwise rearm */
    :: d_step { ms == MS_HS3 ->
        hreq = 0; hbat = 0;
        if
        :: rsh == 0 && qlen > 0 ->
            f = q[0];
            k = 0;
            do
            :: k + 1 < qlen -> q[k] = q[k + 1]; k++
            :: else -> break
            od;
            qlen--; q[qlen] = 0;
            k = 0;
            fst[f] = F_RESERVED;
            fseq[f] = nsh; nsh++;
            rsh = f;
            assert(resv[me] == 0);
            resv[me] = f;
            printf("MSC: task %d reserves job %d\n", me, f);
            f = 0;
            ms = MS_JOB
#ifndef BUG_NO_HANDLER_REARM
        :: rsh == 0 && qlen == 0 -> aret = RA_HANDLER; ms = MS_ARM1
#endif
        :: else -> ms = MS_JOB     /* a reserve (or BUG_NO_HANDLER_REARM) */
        fi }

    /* ================= clove__wake_one(&wk->sleep) ================= */
    :: d_step { ms == MS_WAKE ->
        if
        :: wpk[wk] -> printf("MSC: task %d futex-wakes task %d\n", me, wk);
           fwt[wk] = 0
        :: else -> skip  /* it was not parked: no call */
        fi;
#ifdef BUG_WAKE_BEFORE_STATE
        ms = MS_WAKE2
#else
        ms = wkret; wkret = 0; wk = 0
#endif
        }
#ifdef BUG_WAKE_BEFORE_STATE
    :: d_step { ms == MS_WAKE2 ->
        /* the sleep word is set only after the futex wake */
        sleepw[wk] = 1;
        ms = wkret; wkret = 0; wk = 0 }
#endif

    /* ================= clove__sleep_locked (after idle_push) ======= */
    :: d_step { ms == MS_SL1 ->
        /* seq_cst load of runs; kick only while a run is in progress */
#ifndef BUG_NO_IDLE_KICK
        if
        :: rin != 0 -> kret = MS_SL2; ms = MS_K1
        :: else -> ms = MS_SL2
        fi
#else
        ms = MS_SL2
#endif
        }
#ifdef BUG_WAKE_BEFORE_STATE
    :: d_step { ms == MS_SL2 ->
        if
        :: sleepw[me] -> ms = MS_SL4
        :: else -> ms = MS_SL3
        fi }
#else
    /* The spin before parking only loads the word (not modelled: a
     * stutter). Then the CAS IDLE -> PARKED, a step of its own; then the
     * load of sleep and the futex's own compare in one step: nothing the
     * wakers do between the two can change the outcome (they exchange in
     * WOKEN before they wake, and wake only a task they found PARKED). */
    :: d_step { ms == MS_SL2 ->
        if
        :: sleepw[me] == 1 -> ms = MS_SL4
#ifndef BUG_PARK_STORE
        :: sleepw[me] == 0 -> sleepw[me] = 2   /* the CAS; MS_SL2 again */
#else
        :: sleepw[me] == 0 -> ms = MS_SLP      /* a load, then a store */
#endif
        :: sleepw[me] == 2 -> fwt[me] = 1; ms = MS_SL3B;
           printf("MSC: task %d blocks in the futex\n", me)
        fi }
#ifdef BUG_PARK_STORE
    :: d_step { ms == MS_SLP -> sleepw[me] = 2; ms = MS_SL2 }
#endif
#endif
    :: d_step { ms == MS_SL3 ->
        /* futex: sleep only while the word still holds 0 */
        if
        :: sleepw[me] == 0 -> fwt[me] = 1; ms = MS_SL3B;
           printf("MSC: task %d blocks in the futex\n", me)
        :: else -> ms = MS_SL2
        fi }
    :: d_step { ms == MS_SL3B && fwt[me] == 0 -> ms = MS_SL2 }
#ifdef SPURIOUS
    :: d_step { ms == MS_SL3B -> fwt[me] = 0; ms = MS_SL2 }
#endif
    :: d_step { ms == MS_SL4 && hbl == 0 ->
        /* clove__lock, back in the caller's critical section */
        assert(!idle[me]);
        pend[me] = 0;
        if
        :: slret == SL_WORKER -> slret = 0; wloop_body()
        :: slret == SL_AB ->
            /* wait_done_locked: woken by DONE, or by a share: relay it */
            slret = 0;
            f = waiting_on[me];
            waiting_on[me] = 0;
            if
            :: fst[f] != F_DONE && RING_NONEMPTY && nidle > 0 ->
                wk = il[0];
                idle_remove(wk);
                wkret = MS_AB3; ms = MS_WAKE
            :: else -> ms = MS_AB2
            fi;
            f = 0
        :: else ->
            slret = 0;
            waiting_on[me] = 0;
            fwk[sp - 1] = 1;            /* woken = true */
            jloop_body()
        fi }

    /* ================= clove__hb_kick =============================== */
    :: d_step { ms == MS_K1 ->
        if
        :: hb_asleep -> ms = MS_K2
        :: else -> ms = kret; kret = 0
        fi }
    :: d_step { ms == MS_K2 ->
        if
        :: hb_asleep -> hb_asleep = 0; ms = MS_K3
        :: else -> ms = kret; kret = 0
        fi }
    :: d_step { ms == MS_K3 -> hbw = 0; ms = kret; kret = 0;
                printf("MSC: task %d kicks the heartbeat thread\n", me) }

    /* ================= run_one_locked after fn returned ============ */
    :: d_step { ms == MS_DONE1 && hbl == 0 ->
        /* clove__lock; the request if the ring is empty (the owner's word
         * is alive until it has seen DONE); after the DONE store the owner
         * may return */
        o = fowner[dj];
        if
        :: rq && !RING_NONEMPTY -> hbflag[o] = BEAT | REQ;
           printf("MSC: task %d requests more of task %d (BEAT|REQ)\n", me, o)
        :: !rq && !RING_NONEMPTY -> hbflag[o] = BEAT | REQ1;
           printf("MSC: task %d requests more of task %d (BEAT|REQ1)\n", me, o)
        :: else -> skip
        fi;
#ifndef BUG_BATCH_EARLY_DONE
        assert(fst[dj] == F_TAKEN);
#endif
        fst[dj] = F_DONE;
        rq = 0;
        printf("MSC: task %d stores DONE for job %d\n", me, dj);
        if
#ifndef BUG_DONE_NO_WAKE
        :: idle[o] && waiting_on[o] == dj ->
            idle_remove(o);
            wk = o; wkret = MS_DONE_RELOCK; ms = MS_WAKE;
            check_inv()
#endif
        :: else ->
            if
            :: dmode == M_WORKER -> wloop_body()
            :: else -> fwk[sp - 1] = 0; jloop_body()
            fi;
            dmode = 0
        fi;
        dj = 0; o = 0 }
    :: d_step { ms == MS_DONE_RELOCK && hbl == 0 ->
        if
        :: dmode == M_WORKER -> wloop_body()
        :: else -> fwk[sp - 1] = 0; jloop_body()
        fi;
        dmode = 0 }

    /* ================= clove__task_abandon (ABANDON) =============== */
    :: d_step { ms == MS_AB1 ->
        /* take the reserve back by CAS, unless the heartbeat thread
         * shared it (then it is SHARED or later: below) */
        if
        :: rsh != 0 && resv[me] == rsh ->
            resv[me] = 0; fst[rsh] = F_JOINED;
            printf("MSC: task 0 drops its reserve, job %d\n", rsh)
        :: else -> skip
        fi;
        rsh = 0;
        ms = MS_AB2 }
    :: d_step { ms == MS_AB2 && hbl == 0 ->
        /* locked: drop what nobody took, wait for what was taken */
        g = 0; k = 1;
        do
        :: k < NJ && fowner[k] == me && fst[k] == F_SHARED ->
            rjob[fslot[k]] = 0; ring_trim(); fst[k] = F_JOINED;
            printf("MSC: task 0 reclaims job %d, dropped\n", k);
            k++
        :: k < NJ && fowner[k] == me && fst[k] == F_DONE -> fst[k] = F_JOINED; k++
        :: k < NJ && fowner[k] == me && fst[k] == F_TAKEN && g == 0 -> g = k; k++
        :: k < NJ && !(fowner[k] == me && (fst[k] == F_SHARED || fst[k] == F_DONE ||
                                          (fst[k] == F_TAKEN && g == 0))) -> k++
        :: k == NJ -> break
        od;
        k = 0;
        if
#ifndef BUG_ABANDON_NO_WAIT
        :: g != 0 ->
            waiting_on[me] = g;
            idle_push(me);
            slret = SL_AB;
            ms = MS_SL1
#endif
        :: else ->
            /* queued records: dropped; the run ends as if fn returned */
            do
            :: qlen > 0 -> qlen--; fst[q[qlen]] = F_JOINED; q[qlen] = 0
            :: else -> break
            od;
            k = 1;
            do
            :: k < NJ -> assert(!(fowner[k] == me && fst[k] == F_TAKEN)); k++
            :: else -> break
            od;
            k = 0;
            sp = 0;
            ms = MS_M3
        fi;
        g = 0;
        check_inv() }
    :: d_step { ms == MS_AB3 && hbl == 0 -> ms = MS_AB2 }

    /* ================= join_slow after its relay of a wake-up ======= */
    :: d_step { ms == MS_JRELOOP && hbl == 0 ->
        fwk[sp - 1] = 0;
        jloop_body() }

    /* ================= join_slow returns true ======================= */
    :: d_step { ms == MS_JRET ->
        f = ARG(TJ, TP);
        jret_actions();
        f = 0 }

    /* ================= Main: clove_pool_run, clove_pool_destroy ==== */
    :: d_step { ms == MS_M1 ->
        /* clove_pool_run on the pool's entry task: one seq_cst
         * compare-and-swap of entry_gen to odd both registers the task
         * with the heartbeat thread and counts the run (runs_now), with
         * no lock, so it may fall in the middle of a heartbeat pass; then
         * the kick; then fn(t, arg). (A thread that finds the entry task
         * in use registers a task of its own under the lock and then
         * counts it: a subset of these interleavings.) */
        reg0 = 1; young0 = YOUNG_SKIPS;
        rin++; rst++;
        printf("MSC: run_enter\n");
        push_frame(0, M_ROOT);
        kret = MS_JOB; ms = MS_K1 }
    :: d_step { ms == MS_M3 ->
        /* the release store of the next even entry_gen: the run ends and
         * the heartbeat thread stops looking at the task, at once and
         * without the lock (mid-pass too) */
        rin--; reg0 = 0; ms = MS_M5;
        printf("MSC: run_leave\n") }
    :: d_step { ms == MS_M5 && hbl == 0 ->
        /* stop_threads: stopping = 1, take every idle task off the list */
        assert(rin == 0);
        stopping = 1;
        printf("MSC: destroy: stopping = 1\n");
        do
        :: nidle > 0 -> o = il[0]; wl = wl | (1 << o); idle_remove(o)
        :: else -> break
        od;
        o = 0;
        ms = MS_STOPWAKE }
    :: d_step { ms == MS_STOPWAKE ->
        if
        :: wl != 0 ->
            k = 0;
            do
            :: (wl & (1 << k)) == 0 -> k++
            :: else -> break
            od;
            wl = wl & ~(1 << k);
            wk = k; k = 0;
            wkret = MS_STOPWAKE; ms = MS_WAKE
        :: else -> ms = MS_M6
        fi }
    /* (clove__wake_all(&stopping) is a no-op here: the heartbeat thread's
     * timed wait is modelled as returning at any time anyway) */
    :: d_step { ms == MS_M6 -> hb_asleep = 0; ms = MS_M7 }
    :: d_step { ms == MS_M7 -> hbw = 0; ms = MS_M8 }          /* wake_all */
    :: d_step { ms == MS_M8 && hbdone && ALL_WDONE ->
        /* everything joined: final checks */
        k = 0;
        do
#ifdef ABANDON
        /* dropped jobs never ran; the others ran once, all are over */
        :: k < NJ -> assert(cnt[k] <= 1 && (abandoned || cnt[k] == 1) &&
                            (k == 0 || fst[k] == F_JOINED ||
                             (abandoned && fst[k] == F_NONE))); k++
#else
        :: k < NJ -> assert(cnt[k] == 1 && (k == 0 || fst[k] == F_JOINED)); k++
#endif
        :: else -> break
        od;
        k = 0;
        assert(!RING_NONEMPTY && nidle == 0);
        ms = 0 }

    /* ================= worker_main ================================== */
    :: d_step { ms == MS_W0 && hbl == 0 -> wloop_body() }                 /* lock */
    :: ms == 0 -> break
    od;
#ifdef PROGRESS_END
    /* for the non-progress-cycle check: a finished system is progress */
    if
    :: me == 0 -> progress_end: do :: hbdone -> skip od
    :: else -> skip
    fi
#endif
}

/* ================= clove__heartbeat_main ==================================== */
#ifdef PROGRESS_BEAT
#define BEAT_MARK dec = 4
#else
#define BEAT_MARK skip
#endif
#ifdef BUG_NO_STEAL
#define NO_STEAL true      /* BUG: heartbeat_pass never takes a reserve */
#else
#define NO_STEAL false
#endif
#ifdef BUG_HB_NO_GRACE
#define NO_GRACE true      /* BUG: never sleeps for lack of runs */
#else
#define NO_GRACE false
#endif
/* FAIRLOCK (liveness runs): the heartbeat thread does not take the lock
 * while a task waits for it. The heartbeat thread takes it once per
 * interval for a few microseconds, so in C a waiting task gets the lock
 * first; without this, weak fairness would allow the heartbeat thread to
 * starve a task at its clove__lock forever (the task's step is enabled
 * only between beats, so weak fairness does not force it). */
#define LKW(i) (tms[i] == MS_HS2 || tms[i] == MS_JSLOW || \
                tms[i] == MS_SL4 || tms[i] == MS_DONE1 || \
                tms[i] == MS_DONE_RELOCK || \
                tms[i] == MS_M5 || tms[i] == MS_W0 || \
                tms[i] == MS_JRELOOP || tms[i] == MS_AB2 || tms[i] == MS_AB3)
#ifdef FAIRLOCK
#if NW == 1
#define LOCK_FREE_FOR_HB !(LKW(0) || LKW(1))
#elif NW == 2
#define LOCK_FREE_FOR_HB !(LKW(0) || LKW(1) || LKW(2))
#else
#define LOCK_FREE_FOR_HB !(LKW(0) || LKW(1) || LKW(2) || LKW(3))
#endif
#else
#define LOCK_FREE_FOR_HB true
#endif

/* heartbeat_pass's loop: skip to the next registered, non-idle task; after
 * the last one, unlock (lock-guarded reads, part of the caller's step) */
inline hb_next() {
    do
    :: hw <= NW && (idle[hw] || (hw == 0 && !reg0)) -> hw++
    /* The run-age gate (src/pool.c HB_RUN_AGE_DIV): this pass skips the
     * run's task as not yet known for a quarter interval (gate: chosen at
     * the loop head, since a d_step cannot choose). With no clock, any of
     * a run's first YOUNG_SKIPS passes may (in C: the pass that first
     * finds it and a probe within the quarter). */
    :: hw == 0 && reg0 && !idle[0] && gate && young0 > 0 ->
       hw++; young0--; gate = 0
    :: !(hw <= NW && (idle[hw] || (hw == 0 && !reg0))) &&
       !(hw == 0 && reg0 && !idle[0] && gate && young0 > 0) -> break
    od;
    gate = 0;
    if
    :: hw > NW -> hs = 0; hw = 0; hbl = 0; check_inv()
    :: else -> hs = 1
    fi
}

active proctype HB()
{
    byte last, quiet, dec;
    bit active_;
    byte hw, hs, hf, hwl;            /* heartbeat_pass: task, step, f, to wake */
    bit gate;                        /* this pass skips a young run (hb_next) */
    byte g, o, k;                    /* scratch, always reset to 0 */

    last = rst;                          /* last_runs = runs (relaxed) */
    do
    :: /* clove__heartbeat_main's loop head: the acquire load of stopping, the
        * relaxed load of runs, the quiet count, and the relaxed load of
        * idle_count are all hints (hb_sleep re-checks everything), so
        * they are one step here */
       atomic {
           if
           :: stopping -> dec = 3
           :: else ->
               active_ = (rin != 0 || rst != last);
               last = rst;
               if
               :: active_ -> quiet = 0
               :: else -> quiet = (quiet < GRACE -> quiet + 1 : quiet)
               fi;
               if
               :: quiet >= GRACE && !NO_GRACE -> dec = 1
               :: active_ && nidle == 0 -> dec = 1
               :: else -> dec = 2
               fi;
               active_ = 0;
               /* the next pass may find the run young (hb_next) */
               if
               :: dec == 2 && young0 > 0 -> gate = 1
               :: true -> gate = 0
               fi
           fi
       };
       if
       :: dec == 3 -> break
       :: dec == 2 ->
           dec = 0;
           /* clove__wait(&stopping, 0, interval) returns (at any time:
            * that is the interleaving before the next step); then
            * hb_useful (hints, merged) and heartbeat_pass's clove__lock */
           d_step {
               LOCK_FREE_FOR_HB ->
               if
               :: rin != 0 && nidle != 0 ->
                   printf("MSC: heartbeat\n");
                   BEAT_MARK;
                   hbl = 1;
                   hw = 0;
                   hb_next()
               :: else -> skip
               fi
           };
           /* heartbeat_pass, lock held: for each task w that is registered
            * and not idle (hb_next skips the others, lock-guarded):
            * H1 load(w->heartbeat) & BEAT, and clove__steal_locked's
            * idle_first != NULL (the ring is never full); H2 load(w->reserve);
            * H3 CAS(w->reserve, f, NULL) and on success share_locked (ring
            * push, SHARED); H5 steal_locked's store of BEAT; H6 take an idle
            * task (woken after unlocking); H4 heartbeat_pass's store of BEAT.
            * Each is a step: the owner's lock-free steps (its handler's
            * exchange of heartbeat, its load and release store of reserve,
            * its re-arm, its claim at the join) interleave with them */
           do
           :: d_step { hs == 1 ->
                  if
                  :: (hbflag[hw] & BEAT) && nidle > 0 && !NO_STEAL -> hs = 2;
                     printf("MSC: heartbeat thread: task %d's word still has BEAT\n", hw)
                  :: else -> hs = 4
                  fi }
           :: d_step { hs == 2 ->
                  hf = resv[hw];
                  printf("MSC: heartbeat thread: load(task %d's reserve) = %d\n", hw, hf);
                  if
                  :: hf != 0 -> hs = 3
                  :: else -> hs = 4
                  fi }
           :: d_step { hs == 3 ->
#ifdef BUG_STEAL_NO_CAS
                  /* BUG: a plain store of NULL after the load, no CAS */
                  resv[hw] = 0;
                  g = hf;
#else
                  if
                  :: resv[hw] == hf -> resv[hw] = 0; g = hf
                  :: else -> g = 0;
                     printf("MSC: heartbeat thread's CAS on task %d's reserve fails\n", hw)
                  fi;
#endif
                  if
                  :: g != 0 ->
                      printf("MSC: heartbeat thread steals job %d, the reserve of task %d\n", g, hw);
#ifndef BUG_STEAL_NO_CAS
                      assert(fst[g] == F_RESERVED && fowner[g] == hw);
#endif
                      fslot[g] = rtail;
                      rjob[rtail] = g;
                      rtail++;
                      fst[g] = F_SHARED;        /* sequence kept */
                      NOTE_STEAL;
                      hs = 5
                  :: else -> hs = 4
                  fi;
                  g = 0; hf = 0 }
           :: d_step { hs == 5 ->
                  /* clove__steal_locked: "let the owner reserve its next
                   * oldest fork at its next tick". It must come before the
                   * idle task is taken (H6): an owner whose idle_count
                   * hint sees that, and so keeps its stale shadow, must
                   * find BEAT at its next fork (BUG_STEAL_NO_BEAT) */
#ifndef BUG_STEAL_NO_BEAT
                  hbflag[hw] = BEAT;
                  printf("MSC: heartbeat thread (steal): store(task %d's heartbeat, BEAT)\n", hw);
#endif
                  hs = 6 }
           :: d_step { hs == 6 ->
                  o = il[0];
                  idle_remove(o);
                  hwl = hwl | (1 << o);
                  o = 0;
                  hs = 4 }
           :: d_step { hs == 4 ->
                  hbflag[hw] = BEAT;          /* a plain store */
                  printf("MSC: heartbeat thread: store(task %d's heartbeat, BEAT)\n", hw);
                  hw++;
                  hb_next() }
           :: hs == 0 -> break
           od;
           /* after unlocking: wake each task taken off the idle list */
           do
           :: hwl != 0 ->
               d_step {
                   k = 0;
                   do
                   :: (hwl & (1 << k)) == 0 -> k++
                   :: else -> break
                   od;
                   hwl = hwl & ~(1 << k);
                   if
                   :: wpk[k] -> printf("MSC: heartbeat thread futex-wakes task %d\n", k);
                      fwt[k] = 0
                   :: else -> skip
                   fi;
                   k = 0 }
           :: else -> break
           od;
#ifdef PROGRESS_BEAT
           /* a useful heartbeat is progress */
           if
           :: dec == 4 ->
progress_beat:
               dec = 0
           :: else -> skip
           fi
#else
           skip
#endif
       :: dec == 1 ->
           dec = 0;
           /* hb_sleep: every load and store below is seq_cst and is a
            * step of its own */
#ifndef BUG_HB_NO_RECHECK
           hb_asleep = 1;
#endif
           do
           :: stopping -> break
           :: else ->
               if
               :: rin != 0 ->
                   if
                   :: nidle != 0 -> break
                   :: else -> skip
                   fi
               :: else -> skip
               fi;
#ifdef BUG_HB_NO_RECHECK
               /* BUG: announce the sleep only after the checks */
               hb_asleep = 1;
#endif
               /* clove__wait(&hb_asleep, 1, 0) */
               atomic {
                   if
                   :: hb_asleep == 1 -> hbw = 1;
                      printf("MSC: heartbeat thread blocks in the futex (runs=%d idle=%d)\n", rin, nidle)
                   :: else -> skip
                   fi
               };
#ifdef SPURIOUS
               if
               :: hbw == 0
               :: hbw = 0
               fi;
#else
               hbw == 0;
#endif
#ifndef BUG_HB_NO_RECHECK
               hb_asleep = 1
#else
               skip
#endif
           od;
           /* store hb_asleep = 0; quiet = 0; last_runs = runs (relaxed) */
           atomic {
               hb_asleep = 0; quiet = 0; last = rst
           }
       fi
    od;
    hbdone = 1
}

init {
    byte i;
    atomic {
        for (i : 0 .. NW) {
            sleepw[i] = 1;
#ifndef BUG_NO_ARM
            hbflag[i] = ARM;         /* a task starts armed */
#endif
            run Task(i)
        }
    }
}

#ifdef LTL_LOSTKICK
/* property 4b: no lost kick. It is never the case that from some point on
 * a run is in progress, some task is idle, and the heartbeat thread stays
 * blocked in hb_sleep forever. */
ltl lostkick { []<> !(rin > 0 && nidle > 0 && hbw == 1) }
#endif

#ifdef LTL_LEAF
/* property 6: a long leaf does not strand its owner's work. The root
 * stops forking and ticking for ever after its second fork (LONGLEAF): if
 * it had anything queued or reserved at that point (leafq: its queue and
 * reserve when it enters the leaf, plus what the heartbeat thread stole
 * from it since its last fork or tick), another task eventually runs one
 * of those jobs. */
#define LEAF_OK (inleaf && (leafq == 0 || ((leafq & 2) && jdone[1]) || \
                 ((leafq & 4) && jdone[2]) || ((leafq & 8) && jdone[3])))
ltl leaf { <> LEAF_OK }
#endif
