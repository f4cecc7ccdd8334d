/* SPDX-License-Identifier: MIT */
/*
 * test_stats.c - clove_pool_stats and the trace timeline: the counters
 * agree with each other (every shared job is run or reclaimed) and with
 * the trace, the trace is well-formed JSON whose spans nest properly on
 * every track, and tracing to a bad path fails softly.
 */
#include "test.h"
#include "../src/fault.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* An irregular loop that keeps workers busy and waiting: shares happen. */
struct busy_ctx {
    _Atomic uint64_t sum;
};

static void busy_body(clove_task *t, size_t lo, size_t hi, void *arg)
{
    struct busy_ctx *c = arg;
    uint64_t x = 0;
    for (size_t i = lo; i < hi; i++) {
        unsigned n = i % 613 == 0 ? 4000u : 30u;
        uint64_t v = i;
        for (unsigned k = 0; k < n; k++)
            v = mix64(v + k);
        x += v;
        if (i % 4096 == 0)
            clove_tick(t);
    }
    atomic_fetch_add_explicit(&c->sum, x, memory_order_relaxed);
}

static void busy_run(clove_task *t, void *arg)
{
    clove_for(t, 0, scaled(400000, 40000), busy_body, arg);
}

static void check_consistent(const clove_stats *s)
{
    /* Every job handed over - by its owner at a heartbeat, or by the
     * heartbeat thread from a reserve - was either run elsewhere or taken
     * back by its join. */
    ASSERT_EQ_U(s->shared + s->stolen, s->ran + s->reclaimed);
    ASSERT_LE_U(s->waits, s->shared + s->stolen);
    /* Each handed range holds at least one of those jobs, and no job is
     * in two ranges. */
    ASSERT_LE_U(s->handed, s->shared + s->stolen);
    ASSERT_LE_U(s->answered, s->handed);
}

static void sum_into(clove_stats *a, const clove_stats *b)
{
    a->heartbeats += b->heartbeats;
    a->shared += b->shared;
    a->reclaimed += b->reclaimed;
    a->ran += b->ran;
    a->sleeps += b->sleeps;
    a->sleep_ns += b->sleep_ns;
    a->waits += b->waits;
    a->wait_ns += b->wait_ns;
    a->stolen += b->stolen;
    a->handed += b->handed;
    a->answered += b->answered;
}

void test_stats_counts(void)
{
    clove_stats tot, per[40];
    /* One thread: nothing to share, nobody to sleep. */
    clove_pool *p = make_pool(1, 1);
    struct busy_ctx c = {0};
    ASSERT_OK(clove_pool_run(p, busy_run, &c));
    ASSERT_OK(clove_pool_stats(p, &tot, per, 40));
    ASSERT_EQ_U(tot.heartbeats, 0);
    ASSERT_EQ_U(tot.shared, 0);
    ASSERT_EQ_U(tot.sleeps, 0);
    clove_pool_destroy(p);

    static const unsigned counts[] = {2, 4, 33};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        unsigned n = counts[k];
        p = make_pool(n, 1);
        for (int r = 0; r < 3; r++)
            ASSERT_OK(clove_pool_run(p, busy_run, &c));
        memset(per, 0xff, sizeof per);
        ASSERT_OK(clove_pool_stats(p, &tot, per, 40));
        check_consistent(&tot);
        test_log("threads=%u: heartbeats %ju shared %ju reclaimed %ju ran %ju sleeps %ju "
                 "(%.1f ms) waits %ju (%.1f ms)\n", n, (uintmax_t)tot.heartbeats,
                 (uintmax_t)tot.shared, (uintmax_t)tot.reclaimed, (uintmax_t)tot.ran,
                 (uintmax_t)tot.sleeps, (double)tot.sleep_ns / 1e6, (uintmax_t)tot.waits,
                 (double)tot.wait_ns / 1e6);
        ASSERT_GE_U(tot.heartbeats, 1);
        /* Handed over by the owner at a beat, or, when the owner was
         * descheduled (a loaded machine), by the heartbeat thread. */
        ASSERT_GE_U(tot.shared + tot.stolen, 1);
        ASSERT_GE_U(tot.ran, 1);
        /* The first share of a run finds every worker asleep in its worker
         * loop (a share waits for an idle task), so it is handed over. */
        ASSERT_GE_U(tot.handed, 1);
        /* Per-worker figures add up to the total (one caller, no overflow). */
        clove_stats sum = {0};
        for (unsigned i = 0; i < n; i++)
            sum_into(&sum, &per[i]);
        ASSERT(memcmp(&sum, &tot, sizeof sum) == 0);
        ASSERT_EQ_U(per[n].heartbeats, UINT64_MAX); /* not written past threads */
        /* Only the forking side shares, only others run: the caller
         * (index 0) shared, or its reserve was stolen when it was
         * descheduled (the owner counts the steal when it notices it),
         * and workers ran. */
        ASSERT_GE_U(per[0].shared + per[0].stolen, 1);
        /* The caller never sleeps in a worker loop: it is handed only
         * answers to its requests at joins. */
        ASSERT_EQ_U(per[0].handed, per[0].answered);
        clove_stats only0;
        ASSERT_OK(clove_pool_stats(p, NULL, &only0, 1));
        ASSERT_EQ_U(only0.shared, per[0].shared);
        clove_pool_destroy(p);
    }
    ASSERT_EQ_I(clove_pool_stats(NULL, &tot, NULL, 0), EINVAL);
    p = make_pool(2, 1);
    ASSERT_EQ_I(clove_pool_stats(p, NULL, NULL, 0), EINVAL);
    clove_pool_destroy(p);
}

/* Threads entering at once: indices >= threads count in the total. */
struct ext_arg {
    clove_pool *p;
    pthread_barrier_t *bar;
    struct busy_ctx c;
};

static void ext_run(clove_task *t, void *arg)
{
    struct ext_arg *e = arg;
    pthread_barrier_wait(e->bar);
    busy_run(t, &e->c);
}

static void *ext_main(void *arg)
{
    struct ext_arg *e = arg;
    ASSERT_OK(clove_pool_run(e->p, ext_run, e));
    return NULL;
}

void test_stats_external_threads(void)
{
    enum { EXT = 4 };
    clove_pool *p = make_pool(2, 1);
    pthread_barrier_t bar;
    ASSERT_OK(pthread_barrier_init(&bar, NULL, EXT));
    pthread_t th[EXT];
    struct ext_arg e[EXT];
    for (int i = 0; i < EXT; i++) {
        e[i] = (struct ext_arg){p, &bar, {0}};
        ASSERT_OK(pthread_create(&th[i], NULL, ext_main, &e[i]));
    }
    for (int i = 0; i < EXT; i++)
        ASSERT_OK(pthread_join(th[i], NULL));
    pthread_barrier_destroy(&bar);
    clove_stats tot, per[2];
    ASSERT_OK(clove_pool_stats(p, &tot, per, 2));
    check_consistent(&tot);
    clove_stats sum = {0};
    sum_into(&sum, &per[0]);
    sum_into(&sum, &per[1]);
    /* The overflow threads' heartbeats are in the total only. */
    ASSERT_GE_U(tot.heartbeats, sum.heartbeats);
    test_log("external: total heartbeats %ju, indices 0-1: %ju\n", (uintmax_t)tot.heartbeats,
             (uintmax_t)sum.heartbeats);
    clove_pool_destroy(p);
}

/*
 * Short runs issued back to back are not beaten: a run younger than a
 * quarter heartbeat interval is skipped by the heartbeat thread. Without
 * that gate almost every heartbeat pass lands in some run (the caller is
 * inside one most of the time) and shares a job for nothing. The check is
 * per run and needs no quiet machine: a run that shared anything (read
 * from the counters after each run) must have lasted at least a quarter
 * interval by the caller's clock, which starts before the library's and
 * stops after the share. Preempted runs may be old enough; those are
 * counted but not checked. Built without the gate, this fails at once
 * (on a quiet machine about one share per pass, in runs of 10 us). A long
 * run on the same pool must still share: the gate delays the first beat,
 * it does not stop sharing.
 */
struct repeat_arg {
    const struct tree *tr;
    double until;
    unsigned runs;
};

static void repeat_trees(clove_task *t, void *arg)
{
    struct repeat_arg *a = arg;
    do {
        tree_check(a->tr, tree_sum(t, a->tr, a->tr->root));
        a->runs++;
    } while (now_s() < a->until);
}

/* The longest a run may last and still be young to the library (the
 * run-age gate: interval / 4), a little under it, so that rounding cannot
 * count a run as young that the library saw as old. */
static double young_limit_s(unsigned hb_us)
{
    return hb_us / 4 * 0.99e-6;
}

/* A heartbeat interval (seconds) against which runs of tr are short in
 * every build: at least min_s and 32 runs (one run timed on a pool of one
 * thread; sanitizers make it 50 times slower). */
static double short_run_interval(const struct tree *tr, double min_s)
{
    clove_pool *p = make_pool(1, 0);
    double c0 = now_s();
    for (int i = 0; i < 20; i++)
        run_tree_checked(p, tr);
    double run_s = (now_s() - c0) / 20;
    clove_pool_destroy(p);
    double hb_s = run_s * 32 > min_s ? run_s * 32 : min_s;
    ASSERT(hb_s <= CLOVE_MAX_HEARTBEAT_US / 1e6);
    return hb_s;
}

void test_short_runs_not_shared(void)
{
    struct tree tr;
    tree_build(&tr, 2000, SHAPE_RANDOM, 0x5407);
    /* At least 4 ms; the test is about 75 intervals long. */
    double hb_s = short_run_interval(&tr, 0.004);
    const unsigned HB_US = (unsigned)(hb_s * 1e6);
    clove_pool *p = make_pool(2, HB_US);
    double t0 = now_s(), span = scaled_seconds(75 * hb_s, 75 * hb_s);
    const double min_age_s = young_limit_s(HB_US);
    unsigned runs = 0, young = 0;
    uint64_t young_shares = 0, old_shares = 0;
    clove_stats s = {0}, prev = {0};
    while (now_s() - t0 < span) {
        double r0 = now_s();
        run_tree_checked(p, &tr);
        double d = now_s() - r0;
        ASSERT_OK(clove_pool_stats(p, &s, NULL, 0));
        uint64_t handed = (s.shared + s.stolen) - (prev.shared + prev.stolen);
        if (d < min_age_s) {
            young++;
            young_shares += handed;
        } else {
            old_shares += handed;
        }
        prev = s;
        runs++;
    }
    double elapsed = now_s() - t0;
    check_consistent(&s);
    test_log("short runs: heartbeat %u us, %u runs in %.3f s, %u younger than %.0f us:"
             " %ju handed over in those, %ju in the older ones\n", HB_US, runs, elapsed, young,
             min_age_s * 1e6, (uintmax_t)young_shares, (uintmax_t)old_shares);
    ASSERT_GE_U(young, 100); /* the check below is about something */
    ASSERT_EQ_U(young_shares, 0);

    /* One long run of the same trees: shared as before. */
    struct repeat_arg a = {&tr, now_s() + 12 * hb_s, 0};
    ASSERT_OK(clove_pool_run(p, repeat_trees, &a));
    clove_stats s2;
    ASSERT_OK(clove_pool_stats(p, &s2, NULL, 0));
    check_consistent(&s2);
    test_log("long run: %u trees, %ju shared, %ju stolen\n", a.runs,
             (uintmax_t)(s2.shared - s.shared), (uintmax_t)(s2.stolen - s.stolen));
    ASSERT_GE_U(s2.shared + s2.stolen, s.shared + s.stolen + 1);
    tree_free(&tr);
    clove_pool_destroy(p);
}

/*
 * The same gate against direct requests. A pool worker that ran a range
 * asks busy tasks for more without the lock: the range's owner first,
 * else the pool's entry task if it has a reserve. The entry task here
 * runs short runs back to back (the caller, B); another thread (A), which
 * entered clove_pool_run while B held the entry task, runs one long run
 * of long leaves: fork a leaf of half an interval, run another, join.
 * The heartbeat thread steals A's reserve while A runs its leaf, the
 * worker runs it, finds A with nothing queued, and asks B. B's runs are
 * young, so B must answer NOTHING. B's shares are counted in its own
 * slot (index 0), read after each run. Built with young runs answering,
 * B handed 8-31 records over in each of 4 processes.
 */
struct beside {
    clove_pool *p;
    double leaf_s;
    _Atomic int in_a, in_b, stop;
    unsigned taken; /* A's leaves that another thread ran */
};

static void spin_until(double t)
{
    while (now_s() < t)
        ;
}

static int64_t leaf_job(clove_task *t, void *arg)
{
    (void)t;
    spin_until(now_s() + ((struct beside *)arg)->leaf_s);
    return 1;
}

static void long_leaves(clove_task *t, void *arg)
{
    struct beside *b = arg;
    atomic_store(&b->in_a, 1);
    while (!atomic_load(&b->stop)) {
        clove_future f;
        int64_t r;
        clove_fork_value(t, &f, leaf_job, b);
        spin_until(now_s() + b->leaf_s);
        if (clove_join_value(t, &f, &r))
            b->taken++;
        else
            r = leaf_job(t, b);
        ASSERT_EQ_I(r, 1);
    }
}

static void *beside_main(void *arg)
{
    struct beside *b = arg;
    while (!atomic_load(&b->in_b))
        ;
    ASSERT_OK(clove_pool_run(b->p, long_leaves, b));
    return NULL;
}

/* B's first run: holds the entry task until A is inside its run. */
static void hold_entry(clove_task *t, void *arg)
{
    struct beside *b = arg;
    (void)t;
    atomic_store(&b->in_b, 1);
    while (!atomic_load(&b->in_a))
        ;
}

void test_short_runs_beside_a_long_one(void)
{
    struct tree tr;
    tree_build(&tr, 2000, SHAPE_RANDOM, 0x5408);
    double hb_s = short_run_interval(&tr, 0.002);
    const unsigned HB_US = (unsigned)(hb_s * 1e6);
    clove_pool *p = make_pool(2, HB_US);
    struct beside b = {p, hb_s / 2, 0, 0, 0, 0};
    pthread_t a;
    ASSERT_OK(pthread_create(&a, NULL, beside_main, &b));
    ASSERT_OK(clove_pool_run(p, hold_entry, &b));
    const double min_age_s = young_limit_s(HB_US);
    unsigned runs = 0, young = 0;
    uint64_t young_shares = 0;
    clove_stats tot, s = {0}, prev = {0};
    ASSERT_OK(clove_pool_stats(p, NULL, &prev, 1));
    for (double t0 = now_s(), span = scaled_seconds(40 * hb_s, 40 * hb_s); now_s() - t0 < span;
         runs++) {
        double r0 = now_s();
        run_tree_checked(p, &tr);
        double d = now_s() - r0;
        ASSERT_OK(clove_pool_stats(p, NULL, &s, 1));
        if (d < min_age_s) {
            young++;
            young_shares += (s.shared + s.stolen) - (prev.shared + prev.stolen);
        }
        prev = s;
    }
    atomic_store(&b.stop, 1);
    ASSERT_OK(pthread_join(a, NULL));
    ASSERT_OK(clove_pool_stats(p, &tot, NULL, 0));
    check_consistent(&tot);
    test_log("beside a long run: heartbeat %u us, %u short runs, %u younger than %.0f us:"
             " %ju handed over by them; %u of A's leaves run elsewhere, %ju answers\n",
             HB_US, runs, young, min_age_s * 1e6, (uintmax_t)young_shares, b.taken,
             (uintmax_t)tot.answered);
    ASSERT_GE_U(young, 100);
    ASSERT_GE_U(b.taken, 1); /* the worker did run A's leaves */
    ASSERT_EQ_U(young_shares, 0);
    tree_free(&tr);
    clove_pool_destroy(p);
}

/*
 * A heartbeat pass that judged the entry task's run old acts on the entry
 * task only after that run ended and a new one began (the entry task
 * changes hands without the pool lock). The test holds the pass at that
 * point (CLOVE__HOOK_ENTRY_PASS, under the lock) until run B, on the same
 * thread, has started and forked: the pass's beat, meant for run A, must
 * not make B share, nor may the pass steal B's reserve; B is microseconds
 * old. want: the hook's value (bit 0: A's beat unanswered, so the pass
 * steals; bit 1: the pass beats).
 */
struct entry_race {
    unsigned want;
    _Atomic int a_running, fired, b_ready, released, timed_out;
    double released_s; /* now_s() as the hook let the pass go on; stored
                        * before released, read after it */
};

static void entry_race_hook(void *ctx, int point, unsigned long value)
{
    struct entry_race *r = ctx;
    if (point != CLOVE__HOOK_ENTRY_PASS || value != r->want || !atomic_load(&r->a_running) ||
        atomic_load(&r->fired))
        return;
    atomic_store(&r->a_running, 0);
    atomic_store(&r->fired, 1);
    /* Run A returns, run B starts and forks: none of it takes the lock. */
    for (double t0 = now_s(); !atomic_load(&r->b_ready); sched_yield())
        if (now_s() - t0 > 10) {
            atomic_store(&r->timed_out, 1);
            break;
        }
    r->released_s = now_s();
    atomic_store(&r->released, 1);
}

/* Run A: until the hook holds a pass on it. Ticking (want 2), its beats
 * are answered; spinning without a tick (want 3), the next pass after a
 * beat finds it unanswered. */
static void entry_race_a(clove_task *t, void *arg)
{
    struct entry_race *r = arg;
    atomic_store(&r->a_running, 1);
    for (double t0 = now_s(); !atomic_load(&r->fired); sched_yield()) {
        if (r->want == 2)
            clove_tick(t);
        if (now_s() - t0 > 20) {
            atomic_store(&r->a_running, 0);
            atomic_store(&r->timed_out, 1);
            return;
        }
    }
}

static int64_t entry_race_leaf(clove_task *t, void *arg)
{
    (void)t;
    return (int64_t)mix64((uint64_t)(uintptr_t)arg);
}

#define ENTRY_RACE_FORKS 8

struct entry_race_b {
    struct entry_race *r;
    clove_pool *p;
};

/* Run B: fork, let the pass go on, fork once more, join everything. */
static void entry_race_b(clove_task *t, void *arg)
{
    struct entry_race_b *b = arg;
    struct entry_race *r = b->r;
    clove_future f[ENTRY_RACE_FORKS + 1];
    for (uintptr_t i = 0; i < ENTRY_RACE_FORKS; i++)
        clove_fork_value(t, &f[i], entry_race_leaf, (void *)(i + 1));
    atomic_store(&r->b_ready, 1);
    while (!atomic_load(&r->released))
        sched_yield();
    /* The pass is done once the pool lock is free again (stats take it). */
    clove_stats s;
    ASSERT_OK(clove_pool_stats(b->p, &s, NULL, 0));
    if (r->want == 2) /* the pass beat B: BEAT is in its word */
        ASSERT(atomic_load_explicit(&t->heartbeat, memory_order_relaxed) & CLOVE__HB_BEAT);
    /* A fork answers the beat. */
    clove_fork_value(t, &f[ENTRY_RACE_FORKS], entry_race_leaf, (void *)(uintptr_t)(ENTRY_RACE_FORKS + 1));
    for (int i = ENTRY_RACE_FORKS; i >= 0; i--) {
        int64_t v;
        if (!clove_join_value(t, &f[i], &v))
            v = entry_race_leaf(t, (void *)(uintptr_t)(i + 1));
        ASSERT_EQ_U((uint64_t)v, mix64((uint64_t)(i + 1)));
    }
}

/* One meeting of the pass and runs A and B (above) on a fresh pool with
 * a heartbeat of hb_us. Returns false if B lasted long enough after the
 * held pass to be beaten or robbed in its own right, which proves
 * nothing: a pass after that one first finds B and stamps it, and B is
 * old a quarter interval later (the run-age gate; a loaded machine may
 * preempt B that long). Else checks that B shared nothing. */
static bool entry_race_once(unsigned want, unsigned hb_us)
{
    struct entry_race r = {.want = want};
    clove_pool *p = make_pool(2, hb_us);
    clove__hook_set(entry_race_hook, &r);
    /* Run A shares nothing (it forks nothing), and the pass holds the
     * lock from A's end to B's start: the counters before A. */
    clove_stats s0, s1;
    ASSERT_OK(clove_pool_stats(p, &s0, NULL, 0));
    ASSERT_OK(clove_pool_run(p, entry_race_a, &r));
    struct entry_race_b b = {&r, p};
    ASSERT_OK(clove_pool_run(p, entry_race_b, &b));
    double b_s = now_s() - r.released_s;
    stats_settle(p);
    ASSERT_OK(clove_pool_stats(p, &s1, NULL, 0));
    clove_pool_destroy(p);
    clove__hook_set(NULL, NULL);
    ASSERT_MSG(!atomic_load(&r.timed_out), "the heartbeat pass and the runs did not meet");
    ASSERT(atomic_load(&r.fired));
    test_log("entry race (%s): run B ended %.0f us after the pass, shared %ju, stolen %ju, ran elsewhere %ju\n",
             want == 2 ? "beat" : "steal", b_s * 1e6, (uintmax_t)(s1.shared - s0.shared),
             (uintmax_t)(s1.stolen - s0.stolen), (uintmax_t)(s1.ran - s0.ran));
    if (b_s >= young_limit_s(hb_us))
        return false;
    ASSERT_EQ_U(s1.shared - s0.shared, 0);
    ASSERT_EQ_U(s1.stolen - s0.stolen, 0);
    ASSERT_EQ_U(s1.ran - s0.ran, 0);
    return true;
}

static void entry_race(unsigned want)
{
    /* A long interval: the pass and both runs meet only through the
     * hook, and B, microseconds long, is far from old. */
    for (int i = 0; i < 5; i++)
        if (entry_race_once(want, 40000))
            return;
    test_fail(__FILE__, __LINE__,
              "run B lasted a quarter interval (10 ms) past the pass in 5 tries");
}

/* The pass beats A, which ticks; the beat lands in B. */
void test_entry_race_beat(void)
{
    entry_race(2);
}

/* The pass finds A's beat unanswered and steals: B's reserve is there. */
void test_entry_race_steal(void)
{
    entry_race(3);
}

/* ------------------------------------------------------------------------ */
/* Trace                                                                    */
/* ------------------------------------------------------------------------ */

struct span {
    double ts, dur;
};

static int span_cmp(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->dur > y->dur ? -1 : x->dur < y->dur; /* outer first */
}

struct trace_counts {
    uint64_t jobs[64], waits[64], beats[64], shares[64], sleeps[64], runs[64], stolen[64];
    uint64_t shared_jobs[64]; /* records the shares handed out */
    unsigned tracks;
};

static int double_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Parses the trace written by the library (one event per line) and checks
 * it; returns the counts per track. */
static void parse_trace(const char *path, unsigned nthreads, struct trace_counts *tc)
{
    FILE *f = fopen(path, "r");
    ASSERT_MSG(f != NULL, "no trace file %s", path);
    memset(tc, 0, sizeof *tc);
    size_t cap = 1 << 16, nspans[64] = {0};
    struct span *spans[64];
    /* Start times of shared jobs, and times of the shares and steals that
     * handed them out, on every track. */
    size_t njob = 0, ngive = 0;
    double *job_ts = malloc(cap * sizeof *job_ts), *give_ts = malloc(cap * sizeof *give_ts);
    ASSERT(job_ts != NULL && give_ts != NULL);
    int pid = (int)getpid(), epid;
    for (unsigned i = 0; i < 64; i++)
        spans[i] = NULL;
    char line[512];
    ASSERT(fgets(line, sizeof line, f) != NULL);
    ASSERT_CONTAINS(line, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    bool closed = false;
    while (fgets(line, sizeof line, f)) {
        if (strcmp(line, "]}\n") == 0) {
            closed = true;
            continue;
        }
        ASSERT_MSG(!closed, "text after the end: %s", line);
        char name[32];
        unsigned tid;
        double ts, dur;
        const char *pp = strstr(line, "\"pid\":");
        ASSERT_MSG(pp && sscanf(pp, "\"pid\":%d,", &epid) == 1 && epid == pid,
                   "pid is not the process id %d: %s", pid, line);
        if (strstr(line, "\"ph\":\"M\"")) {
            ASSERT_MSG(strstr(line, "\"name\":\"thread_name\"") ||
                       strstr(line, "\"name\":\"process_name\""), "bad metadata: %s", line);
            if (strstr(line, "thread_name")) {
                tc->tracks++;
                ASSERT_CONTAINS(line, "\"dropped\":0}");
            }
            continue;
        }
        if (sscanf(line, "{\"name\":\"%31[a-z]\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%lf,"
                         "\"dur\":%lf}", name, &epid, &tid, &ts, &dur) == 5) {
            ASSERT_LT_U(tid, nthreads);
            ASSERT_MSG(dur >= 0 && ts >= 0, "negative time: %s", line);
            if (!strcmp(name, "job")) {
                tc->jobs[tid]++;
                ASSERT_LT_U(njob, cap);
                job_ts[njob++] = ts;
            }
            else if (!strcmp(name, "wait"))
                tc->waits[tid]++;
            else if (!strcmp(name, "sleep"))
                tc->sleeps[tid]++;
            else if (!strcmp(name, "run"))
                tc->runs[tid]++;
            else
                ASSERT_MSG(0, "unknown span %s", line);
            if (spans[tid] == NULL) {
                spans[tid] = malloc(cap * sizeof *spans[tid]);
                ASSERT(spans[tid] != NULL);
            }
            ASSERT_LT_U(nspans[tid], cap);
            spans[tid][nspans[tid]++] = (struct span){ts, dur};
        } else if (sscanf(line, "{\"name\":\"%31[a-z]\",\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,"
                                "\"tid\":%u,\"ts\":%lf", name, &epid, &tid, &ts) == 4) {
            /* A share names how many records it handed out (a batch's
             * all); beats and steals have no arguments. */
            unsigned jobs = 1;
            const char *args = strstr(line, ",\"args\":{\"jobs\":");
            if (!strcmp(name, "share"))
                ASSERT_MSG(args && sscanf(args, ",\"args\":{\"jobs\":%u}}", &jobs) == 1 &&
                               jobs >= 1 && jobs <= 64,
                           "a share without its number of jobs: %s", line);
            else
                ASSERT_MSG(args == NULL, "unexpected arguments: %s", line);
            ASSERT_LT_U(tid, nthreads);
            if (!strcmp(name, "heartbeat"))
                tc->beats[tid]++;
            else if (!strcmp(name, "share")) {
                tc->shares[tid]++;
                tc->shared_jobs[tid] += jobs;
            }
            else if (!strcmp(name, "stolen"))
                tc->stolen[tid]++;
            else
                ASSERT_MSG(0, "unknown instant %s", line);
            if (!strcmp(name, "share") || !strcmp(name, "stolen")) {
                for (unsigned k = 0; k < jobs; k++) {
                    ASSERT_LT_U(ngive, cap);
                    give_ts[ngive++] = ts;
                }
            }
        } else {
            ASSERT_MSG(0, "unparsable trace line: %s", line);
        }
        ASSERT_MSG(line[strlen(line) - 1] == '\n', "line too long");
    }
    fclose(f);
    ASSERT(closed);
    ASSERT_EQ_U(tc->tracks, nthreads);
    /* Every shared job was handed out, by a share or a steal, before it
     * started: the k-th job to start has at least k+1 of those before it
     * (each job its own; a share its owner took back has none). */
    qsort(job_ts, njob, sizeof *job_ts, double_cmp);
    qsort(give_ts, ngive, sizeof *give_ts, double_cmp);
    ASSERT_LE_U(njob, ngive);
    for (size_t k = 0; k < njob; k++)
        ASSERT_MSG(give_ts[k] <= job_ts[k] + 0.0015,
                   "shared job %zu starts at %.3f us, before its share or steal: the "
                   "%zu-th of those is at %.3f us", k, job_ts[k], k + 1, give_ts[k]);
    free(job_ts);
    free(give_ts);
    /* Spans on one track nest: each lies inside the enclosing one or after
     * it (times are printed to the ns, hence the tolerance). */
    const double eps = 0.0015;
    for (unsigned tid = 0; tid < nthreads; tid++) {
        size_t m = nspans[tid];
        if (m == 0)
            continue;
        qsort(spans[tid], m, sizeof *spans[tid], span_cmp);
        double stack_end[64];
        int depth = 0;
        for (size_t k = 0; k < m; k++) {
            struct span s = spans[tid][k];
            while (depth > 0 && s.ts >= stack_end[depth - 1] - eps)
                depth--;
            if (depth > 0)
                ASSERT_MSG(s.ts + s.dur <= stack_end[depth - 1] + eps,
                           "track %u: span at %.3f+%.3f overlaps its enclosing span ending "
                           "at %.3f", tid, s.ts, s.dur, stack_end[depth - 1]);
            ASSERT_LT_U(depth, 64);
            stack_end[depth++] = s.ts + s.dur;
        }
        free(spans[tid]);
    }
}

static void temp_path(char *buf, size_t n)
{
    const char *dir = getenv("TMPDIR");
    snprintf(buf, n, "%s/clove_trace_XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(buf);
    ASSERT(fd >= 0);
    close(fd);
}

/* A long leaf: a spins, without a fork or a tick, until b has started
 * elsewhere, which only the heartbeat thread's steal of the reserve (or a
 * heartbeat pending right at the fork) can bring about. */
struct long_pair {
    _Atomic uint32_t b_started;
    bool saw;
};

static void long_a(clove_task *t, void *arg)
{
    (void)t;
    struct long_pair *lp = arg;
    double deadline = now_s() + 20;
    while (!atomic_load_explicit(&lp->b_started, memory_order_acquire))
        if (now_s() > deadline)
            return;
    lp->saw = true;
}

static void long_b(clove_task *t, void *arg)
{
    (void)t;
    atomic_store_explicit(&((struct long_pair *)arg)->b_started, 1, memory_order_release);
}

static void long_pair_run(clove_task *t, void *arg)
{
    /* Answer a pending heartbeat first (nothing is queued, so nothing is
     * shared): then b can only leave by a steal. */
    clove_tick(t);
    clove_join2(t, long_a, arg, long_b, arg);
}

void test_trace_timeline(void)
{
    char path[256];
    temp_path(path, sizeof path);
    unsigned n = 3;
    clove_config cfg = {.threads = n, .heartbeat_us = 20, .trace_path = path};
    clove_pool *p = NULL;
    ASSERT_OK(clove_pool_create(&p, &cfg));
    struct busy_ctx c = {0};
    for (int r = 0; r < 2; r++)
        ASSERT_OK(clove_pool_run(p, busy_run, &c));
    for (int r = 0; r < 3; r++) {
        struct long_pair lp = {0, false};
        ASSERT_OK(clove_pool_run(p, long_pair_run, &lp));
        ASSERT(lp.saw);
    }
    clove_stats per[3];
    stats_settle(p);
    ASSERT_OK(clove_pool_stats(p, NULL, per, 3));
    clove_pool_destroy(p);
    struct trace_counts tc;
    parse_trace(path, n, &tc);
    for (unsigned i = 0; i < n; i++) {
        test_log("track %u: %ju jobs, %ju waits, %ju sleeps, %ju beats, %ju shares "
                 "(%ju jobs), %ju stolen\n",
                 i, (uintmax_t)tc.jobs[i], (uintmax_t)tc.waits[i], (uintmax_t)tc.sleeps[i],
                 (uintmax_t)tc.beats[i], (uintmax_t)tc.shares[i], (uintmax_t)tc.shared_jobs[i],
                 (uintmax_t)tc.stolen[i]);
        /* Runs were over when the counters were read: jobs, waits and
         * heartbeats match exactly (sleeps may end later, at destroy). */
        ASSERT_EQ_U(tc.jobs[i], per[i].ran);
        ASSERT_EQ_U(tc.waits[i], per[i].waits);
        /* One share event per beat that shared, naming the jobs it
         * shared (a batch's all), as the counter counts them. */
        ASSERT_EQ_U(tc.shared_jobs[i], per[i].shared);
        ASSERT_EQ_U(tc.stolen[i], per[i].stolen);
        ASSERT_EQ_U(tc.beats[i] + tc.shares[i], per[i].heartbeats);
        ASSERT_GE_U(tc.sleeps[i], per[i].sleeps);
    }
    ASSERT_GE_U(tc.shares[0], 1);
    /* Three long-leaf runs: b reached the other worker each time; only a
     * heartbeat arriving between the tick and the fork could have let it
     * go as a share instead. */
    ASSERT_GE_U(tc.stolen[0], 1);
    ASSERT_EQ_U(tc.runs[0], 5);
    ASSERT_EQ_U(tc.runs[1] + tc.runs[2], 0);
    ASSERT_OK(unlink(path));

    /* The environment variable, and a 1-thread pool. */
    temp_path(path, sizeof path);
    test_setenv("CLOVE_TRACE", path);
    p = make_pool(1, 1);
    ASSERT_OK(clove_pool_run(p, busy_run, &c));
    clove_pool_destroy(p);
    test_setenv("CLOVE_TRACE", NULL);
    parse_trace(path, 1, &tc);
    ASSERT_EQ_U(tc.jobs[0] + tc.beats[0] + tc.sleeps[0], 0);
    ASSERT_EQ_U(tc.runs[0], 1);
    ASSERT_OK(unlink(path));

    /* The file is opened (here: created) by clove_pool_create. */
    temp_path(path, sizeof path);
    ASSERT_OK(unlink(path));
    clove_config fresh = {.threads = 2, .trace_path = path};
    ASSERT_OK(clove_pool_create(&p, &fresh));
    ASSERT_OK(access(path, W_OK));
    clove_pool_destroy(p);
    parse_trace(path, 2, &tc);
    ASSERT_OK(unlink(path));

    /* A path that cannot be written: EINVAL at create, with one line on
     * stderr naming where the path came from and the path. */
    static const char bad_path[] = "/nonexistent-dir/clove/trace.json";
    for (int env = 0; env < 2; env++) {
        clove_config bad = {.threads = 2, .heartbeat_us = 1,
                            .trace_path = env ? NULL : bad_path};
        if (env)
            test_setenv("CLOVE_TRACE", bad_path);
        p = NULL;
        stderr_capture_begin();
        int rc = clove_pool_create(&p, &bad);
        char *err = stderr_capture_end();
        if (env)
            test_setenv("CLOVE_TRACE", NULL);
        ASSERT_EQ_I(rc, EINVAL);
        ASSERT_EQ_P(p, NULL);
        ASSERT_CONTAINS(err, env ? "clove: CLOVE_TRACE=\"/nonexistent-dir/clove/trace.json\""
                                 : "clove: config.trace_path=\"/nonexistent-dir/clove/trace.json\"");
        ASSERT_CONTAINS(err, "No such file or directory");
        ASSERT_EQ_U(count_lines(err), 1);
        free(err);
    }
}

/* A create that fails after opening the trace file removes the file it
 * created, and leaves one that existed alone. */
void test_trace_create_fails(void)
{
    char path[256];
    temp_path(path, sizeof path);
    for (int existed = 0; existed < 2; existed++) {
        if (!existed)
            ASSERT_OK(unlink(path));
        clove_config cfg = {.threads = 3, .trace_path = path};
        clove_pool *p = NULL;
        clove__fault_arm(CLOVE__FAULT_THREAD, 2);
        int rc = clove_pool_create(&p, &cfg);
        clove__fault_arm(CLOVE__FAULT_THREAD, 0);
        ASSERT_EQ_I(rc, EAGAIN);
        ASSERT_EQ_P(p, NULL);
        if (existed)
            ASSERT_OK(access(path, F_OK));
        else
            ASSERT_MSG(access(path, F_OK) != 0, "create failed but left %s behind", path);
        if (!existed) {
            /* For the second round: a file that exists. */
            FILE *f = fopen(path, "w");
            ASSERT(f != NULL);
            fclose(f);
        }
    }
    ASSERT_OK(unlink(path));
}
