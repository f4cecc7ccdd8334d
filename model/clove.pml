/*
 * clove.pml - a Promela model of clove's concurrency protocol
 * (src/share.c, src/pool.c, include/clove.h). See model/README.md for
 * what is modelled, what is abstracted and how to run it (model/check.sh).
 *
 * Processes: Task(0) is the external thread (clove_pool_run of the root
 * job, then clove_pool_destroy), Task(1..NW) are pool workers
 * (worker_main), HB is the heartbeat thread (heartbeat_main).
 *
 * Every critical section of pool->lock is one indivisible d_step (no
 * critical section in clove blocks, sleeps or runs user code), so the lock
 * itself needs no variable. Every seq_cst atomic outside the lock, every
 * futex wait and every futex wake is a step of its own.
 *
 * Configuration macros (spin -DNAME ...):
 *   NW=1|2|3        worker threads (tasks = NW + 1)
 *   SPURIOUS        futex waits may also return for no reason
 *   LONGWORK        the root job may tick forever between its forks and
 *                   joins (a run that lasts "a while"); otherwise it ticks once
 *   GRACE=n         HB_GRACE_BEATS (4 in pool.c)
 *   PROGRESS_BEAT   a heartbeat that is useful is a progress state (for the
 *                   "heartbeat thread never spins uselessly" check)
 *   LTL_LOSTKICK    adds the LTL property lostkick
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

#ifndef GRACE
#define GRACE 2
#endif

/* ---- the fork tree: root forks A and B, A forks C ------------------- */
/* job/future ids: 0 root (never a future), 1 A, 2 B, 3 C (and, with
 * TREE4, 4 D forked by B) */
#ifdef TREE4
#define NJ 5
#else
#define NJ 4
#endif

#define I_FORK 1
#define I_TICK 2             /* clove_tick; with LONGWORK: a loop of ticks */
#define I_JOIN 3
#define I_RET  4

/* program of each job: OP(j, pc), ARG(j, pc) (the future forked/joined) */
#ifdef TREE4
#define OP(j,p) ((j)==0 -> ((p)==0 -> I_FORK : ((p)==1 -> I_FORK : ((p)==2 -> I_TICK : \
                ((p)==3 -> I_JOIN : ((p)==4 -> I_JOIN : I_RET))))) : \
                (((j)==1 || (j)==2) -> ((p)==0 -> I_FORK : ((p)==1 -> I_JOIN : I_RET)) : I_RET))
#define ARG(j,p) ((j)==0 -> ((p)==0 -> 1 : ((p)==1 -> 2 : ((p)==3 -> 2 : ((p)==4 -> 1 : 0)))) : \
                 ((j)==1 -> ((p)<=1 -> 3 : 0) : ((j)==2 -> ((p)<=1 -> 4 : 0) : 0)))
#else
#define OP(j,p) ((j)==0 -> ((p)==0 -> I_FORK : ((p)==1 -> I_FORK : ((p)==2 -> I_TICK : \
                ((p)==3 -> I_JOIN : ((p)==4 -> I_JOIN : I_RET))))) : \
                ((j)==1 -> ((p)==0 -> I_FORK : ((p)==1 -> I_JOIN : I_RET)) : I_RET))
#define ARG(j,p) ((j)==0 -> ((p)==0 -> 1 : ((p)==1 -> 2 : ((p)==3 -> 2 : ((p)==4 -> 1 : 0)))) : \
                 ((j)==1 -> ((p)<=1 -> 3 : 0) : 0))
#endif

/* ---- future states (fst): the tag of future->u.state ---------------- */
#define F_NONE   0
#define F_QUEUED 1           /* in the owner's job list (prev != NULL) */
#define F_SHARED 2           /* CLOVE__TAG_SHARED: in the ring */
#define F_TAKEN  3           /* CLOVE__TAG_TAKEN */
#define F_DONE   4           /* CLOVE__TAG_DONE */
#define F_JOINED 5           /* CLOVE__STATE_JOINED */

/* ---- shared state --------------------------------------------------- */
/* guarded by pool->lock */
byte fst[NJ];                /* future states */
byte fowner[NJ];             /* ring entry's owner */
byte fslot[NJ];              /* ring slot of a SHARED future */
byte rjob[NJ];               /* ring slots: job id, 0 = hole/empty */
byte rhead, rtail;           /* ring_head, ring_tail (kept trimmed) */
byte il[NT];                 /* idle list, il[0] = idle_first (LIFO) */
byte nidle;                  /* idle_count (seq_cst stores under the lock) */
bit  idle[NT];               /* task->idle */
byte waiting_on[NT];         /* task->waiting_on (0 = NULL) */
bit  reg0;                   /* task 0 is in pool->registered */
bit  stopping;               /* pool->stopping */
/* per-task sleep word and its futex waiter */
bit  sleepw[NT];             /* task->sleep */
bit  fwt[NT];                /* the task is blocked in clove__wait(&sleep) */
bit  hbflag[NT];             /* task->heartbeat */
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
    sleepw[t] = 1;
#endif
    k = 0
}

/* Design invariant checked after every critical section: a shared job in
 * the ring never waits while a task sleeps on the idle list and no woken
 * task is on its way to look at the ring (what the relay in
 * clove__join_slow is for). */
inline check_inv() {
    assert(!(RING_NONEMPTY && nidle > 0 && PENDSUM == 0))
}

/* ---- Task micro-states ---------------------------------------------- */
#define MS_JOB        1      /* interpret the top frame's next instruction */
#define MS_HS1        2      /* clove__heartbeat_slow: hint checks */
#define MS_HS2        3      /* ... critical section: share, pick a task */
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
#define MS_DONE_RELOCK 15    /* ... relock after waking the owner */
#define MS_JRET       16     /* join_slow returns true (after the relay) */
#define MS_M1         21     /* clove_pool_run: register, run_enter */
#define MS_M3         23     /* run_leave, unregister */
#define MS_M5         25     /* clove_pool_destroy: stop_threads CS */
#define MS_STOPWAKE   26     /* wake each idle task */
#define MS_M6         27     /* hb_asleep = 0 */
#define MS_M7         28     /* wake_all(&hb_asleep) */
#define MS_M8         29     /* pthread_join(hb), pthread_join(workers) */
#define MS_W0         30     /* worker_main: lock */

/* frame modes: how a job was called, i.e. what to do when it returns */
#define M_ROOT   1           /* fn of clove_pool_run */
#define M_WORKER 2           /* run_one_locked from worker_main */
#define M_HELP   3           /* run_one_locked from clove__join_slow */
#define M_LOCAL  4           /* the owner runs a not-taken/reclaimed job */

#define SL_WORKER 1
#define SL_JOIN   2

#define DEPTH 8
#define TJ fjob[sp - 1]
#define TP fpc[sp - 1]

inline push_frame(j, m) {
    fjob[sp] = j; fpc[sp] = 0; fmode[sp] = m; facc[sp] = 0; fwk[sp] = 0;
    sp++;
    assert(sp < DEPTH)
}

/* clove__run_one_locked up to fn (lock held); sets got */
inline run_one_start(m) {
    if
    :: RING_NONEMPTY ->
        g = rjob[rhead];
        rjob[rhead] = 0;
        rhead++;
        ring_trim();
#ifndef BUG_RECLAIM_KEEPS_SLOT
        assert(fst[g] == F_SHARED);
#endif
        fst[g] = F_TAKEN;
        printf("MSC: task %d takes job %d from the ring\n", me, g);
        push_frame(g, m);
        got = 1
    :: else -> got = 0
    fi
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
/* clove__join_slow after the loop: unlock, mark the future joined,
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
    if
    :: fst[f] == F_DONE || WOKEN_MEANS_DONE ->
        /* property 3: "taken" only after the job finished */
        printf("MSC: task %d: join of job %d leaves its wait loop\n", me, f);
        assert(fst[f] == F_DONE && jdone[f]);
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
        run_one_start(M_HELP);
        if
        :: got -> ms = MS_JOB
        :: else ->
            waiting_on[me] = f;
            idle_push(me);
            slret = SL_JOIN;
            ms = MS_SL1
        fi;
        got = 0; g = 0
    fi;
    f = 0;
    check_inv()
}

proctype Task(byte me)
{
    byte ms;                          /* micro-state */
    byte sp;                          /* frames */
    byte fjob[DEPTH], fpc[DEPTH], fmode[DEPTH], facc[DEPTH];
    bit  fwk[DEPTH];                  /* join_slow's `woken` */
    byte q[3], qlen;                  /* the task's job list (owner only) */
    byte wk, wkret;                   /* wake target, continuation */
    byte kret;                        /* continuation after the kick */
    byte slret;                       /* caller of sleep_locked */
    byte dj, dmode;                   /* job just finished as a taker */
    byte wl;                          /* destroy: tasks to wake (bit set) */
    byte f, g, k, o;                  /* scratch, always reset to 0 */
    bit  got;

    if
    :: me == 0 -> ms = MS_M1
    :: else -> ms = MS_W0
    fi;

    do
    /* ================= job interpreter (owner-only code) ========== */
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_FORK ->
        /* clove_fork: append to the list, then clove_tick. The tick's
         * load and the handler's clearing store are one step here. */
        f = ARG(TJ, TP);
        q[qlen] = f; qlen++;
        fst[f] = F_QUEUED; fowner[f] = me;
        TP++;
        if
        :: hbflag[me] -> hbflag[me] = 0; ms = MS_HS1;
           printf("MSC: task %d ticks and sees its heartbeat flag\n", me)
        :: else -> skip
        fi;
        f = 0 }
#ifdef LONGWORK
    :: ms == MS_JOB && OP(TJ, TP) == I_TICK ->
progress_tick:
       d_step {
#else
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_TICK ->
        TP++;
#endif
        /* clove_tick in the root's work */
        if
        :: hbflag[me] -> hbflag[me] = 0; ms = MS_HS1;
           printf("MSC: task %d ticks and sees its heartbeat flag\n", me)
        :: else -> skip
        fi }
#ifdef LONGWORK
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_TICK -> TP++ }
#endif
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_JOIN &&
                fst[ARG(TJ, TP)] == F_QUEUED ->
        /* clove_join fast path: prev != NULL, pop; the caller runs it */
        f = ARG(TJ, TP);
        assert(qlen > 0 && q[qlen - 1] == f);
        qlen--; q[qlen] = 0;
        fst[f] = F_JOINED;
        push_frame(f, M_LOCAL);
        f = 0 }
    :: d_step { ms == MS_JOB && OP(TJ, TP) == I_JOIN &&
                fst[ARG(TJ, TP)] != F_QUEUED ->
        /* clove__join_slow: first critical section */
        f = ARG(TJ, TP);
        assert(qlen == 0);    /* LIFO: tail == &head */
        assert(fowner[f] == me);
        assert(fst[f] == F_SHARED || fst[f] == F_TAKEN || fst[f] == F_DONE);
        if
        :: fst[f] == F_SHARED ->
            /* reclaim: leave a hole, trim, run it here */
            printf("MSC: task %d reclaims job %d\n", me, f);
#ifndef BUG_RECLAIM_KEEPS_SLOT
            rjob[fslot[f]] = 0;
            ring_trim();
#endif
            fst[f] = F_JOINED;
            push_frame(f, M_LOCAL);
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
        sp--;
        fjob[sp] = 0; fpc[sp] = 0; fmode[sp] = 0; facc[sp] = 0; fwk[sp] = 0;
        if
        :: o == M_LOCAL ->
            /* back in the parent, after its clove_join returned false */
            facc[sp - 1] = facc[sp - 1] + res[f];
            TP++
        :: o == M_ROOT ->
            /* property 1: the root's result includes every job */
            assert(res[0] == NJ);
            ms = MS_M3
        :: else ->
            dj = f; dmode = o; ms = MS_DONE1
        fi;
        f = 0; o = 0 }

    /* ================= clove__heartbeat_slow ======================= */
    :: d_step { ms == MS_HS1 ->
        /* tail == &head, or the idle_count hint is 0: return */
        if
        :: qlen == 0 || nidle == 0 -> ms = MS_JOB
        :: else -> ms = MS_HS2
        fi }
    :: d_step { ms == MS_HS2 ->
        if
        :: nidle > 0 && qlen > 0 ->
            /* share the oldest queued future */
            f = q[0];
            k = 0;
            do
            :: k + 1 < qlen -> q[k] = q[k + 1]; k++
            :: else -> break
            od;
            qlen--; q[qlen] = 0;
            k = 0;
            printf("MSC: task %d shares job %d\n", me, f);
            fslot[f] = rtail;
            rjob[rtail] = f;
            rtail++;
            fst[f] = F_SHARED;
            assert(fowner[f] == me);
            f = 0;
            /* ... and wake exactly one idle task, after unlocking */
            wk = il[0];
            idle_remove(wk);
            wkret = MS_JOB;
            ms = MS_WAKE
        :: else -> ms = MS_JOB
        fi;
        check_inv() }

    /* ================= clove__wake_one(&wk->sleep) ================= */
    :: d_step { ms == MS_WAKE ->
        printf("MSC: task %d futex-wakes task %d\n", me, wk);
        fwt[wk] = 0;
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
    /* load of sleep and the futex's own compare in one step: nothing the
     * wakers do between the two can change the outcome (they store 1
     * before they wake) */
    :: d_step { ms == MS_SL2 ->
        if
        :: sleepw[me] -> ms = MS_SL4
        :: else -> fwt[me] = 1; ms = MS_SL3B;
           printf("MSC: task %d blocks in the futex\n", me)
        fi }
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
    :: d_step { ms == MS_SL4 ->
        /* clove__lock, back in the caller's critical section */
        assert(!idle[me]);
        pend[me] = 0;
        if
        :: slret == SL_WORKER -> slret = 0; wloop_body()
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
    :: d_step { ms == MS_DONE1 ->
        /* clove__lock; after this store the owner may return */
        assert(fst[dj] == F_TAKEN);
        fst[dj] = F_DONE;
        printf("MSC: task %d stores DONE for job %d\n", me, dj);
        o = fowner[dj];
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
    :: d_step { ms == MS_DONE_RELOCK ->
        if
        :: dmode == M_WORKER -> wloop_body()
        :: else -> fwk[sp - 1] = 0; jloop_body()
        fi;
        dmode = 0 }

    /* ================= join_slow returns true ======================= */
    :: d_step { ms == MS_JRET ->
        f = ARG(TJ, TP);
        jret_actions();
        f = 0 }

    /* ================= Main: clove_pool_run, clove_pool_destroy ==== */
    :: d_step { ms == MS_M1 ->
        /* clove_pool_run: register (a critical section), run_enter
         * (seq_cst fetch_add), then kick; then fn(t, arg) */
        reg0 = 1;
        rin++; rst++;
        printf("MSC: run_enter\n");
        push_frame(0, M_ROOT);
        kret = MS_JOB; ms = MS_K1 }
    :: d_step { ms == MS_M3 ->
        /* run_leave (fetch_sub), then unregister (critical section) */
        rin--; reg0 = 0; ms = MS_M5;
        printf("MSC: run_leave\n") }
    :: d_step { ms == MS_M5 ->
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
        :: k < NJ -> assert(cnt[k] == 1 && (k == 0 || fst[k] == F_JOINED)); k++
        :: else -> break
        od;
        k = 0;
        assert(!RING_NONEMPTY && nidle == 0);
        ms = 0 }

    /* ================= worker_main ================================== */
    :: d_step { ms == MS_W0 -> wloop_body() }                 /* lock */
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

/* ================= heartbeat_main ==================================== */
#ifdef PROGRESS_BEAT
#define BEAT_MARK dec = 4
#else
#define BEAT_MARK skip
#endif
#ifdef BUG_HB_NO_GRACE
#define NO_GRACE true      /* BUG: never sleeps for lack of runs */
#else
#define NO_GRACE false
#endif
active proctype HB()
{
    byte last, quiet, dec;
    bit active_;

    last = rst;                          /* last_runs = runs (relaxed) */
    do
    :: /* heartbeat_main's loop head: the acquire load of stopping, the
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
               active_ = 0
           fi
       };
       if
       :: dec == 3 -> break
       :: dec == 2 ->
           dec = 0;
           /* clove__wait(&stopping, 0, interval) returns (at any time:
            * that is the interleaving before the next step); then
            * hb_useful and heartbeat_all, which only set flags */
           d_step {
               if
               :: rin != 0 && nidle != 0 ->
                   printf("MSC: heartbeat\n");
                   BEAT_MARK;
                   if
                   :: reg0 && !idle[0] -> hbflag[0] = 1
                   :: else -> skip
                   fi;
                   if
                   :: !idle[1] -> hbflag[1] = 1
                   :: else -> skip
                   fi;
#if NW > 1
                   if
                   :: !idle[2] -> hbflag[2] = 1
                   :: else -> skip
                   fi;
#endif
#if NW > 2
                   if
                   :: !idle[3] -> hbflag[3] = 1
                   :: else -> skip
                   fi;
#endif
                   skip
               :: else -> skip
               fi
           };
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
           atomic { hb_asleep = 0; quiet = 0; last = rst }
       fi
    od;
    hbdone = 1
}

init {
    byte i;
    atomic {
        for (i : 0 .. NW) {
            sleepw[i] = 1;
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
