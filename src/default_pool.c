/* SPDX-License-Identifier: MIT */
/*
 * default_pool.c - the process-wide default pool behind clove_run.
 *
 * Created by the first clove_run that needs it (clove_pool_create with all
 * defaults), destroyed by an atexit handler, replaced in a fork()ed child.
 *
 * Who guards what:
 * - dp_lock (a plain mutex, not any pool's lock) serialises creation,
 *   the exit handler and fork(): dp_closed and dp_hooks are under it,
 *   and so is every store to dp_pool.
 * - dp_pool is read without the lock by clove_run (the fast path: one
 *   load after counting itself in dp_users).
 * - dp_users counts the clove_run calls between their increment and
 *   their decrement, that is every call that may be using dp_pool.
 *   The exit handler may destroy the pool only when it is 0. The handshake
 *   is the store-load pair of two threads, all seq_cst: clove_run
 *   increments dp_users, then loads dp_pool; the exit handler stores NULL
 *   into dp_pool, then loads dp_users. In the single total order of these
 *   four operations, either the handler sees the increment (and leaves the
 *   pool alone), or clove_run sees NULL (and never touches the pool).
 */
#include "internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

static clove__mutex dp_lock = CLOVE__MUTEX_INITIALIZER;
static _Atomic(clove_pool *) dp_pool; /* see above: stores under dp_lock */
static _Atomic uint32_t dp_users;     /* see above */
static bool dp_closed;                /* dp_lock: the exit handler ran */
static bool dp_hooks;                 /* dp_lock: atexit and the fork hooks done */

/* atexit: destroy the pool unless a clove_run may still use it (work
 * running on another thread, or exit() called from inside a job): then it
 * is left to the end of the process, as are its threads. From here on,
 * clove_run never uses a default pool again (dp_closed). */
static void dp_exit(void)
{
    (void)clove__mutex_lock(&dp_lock);
    dp_closed = true;
    clove_pool *p = atomic_exchange(&dp_pool, NULL);
    bool busy = atomic_load(&dp_users) != 0;
    (void)clove__mutex_unlock(&dp_lock);
    if (p != NULL && !busy)
        clove_pool_destroy(p);
}

/* fork(): dp_lock is held across it, so that the child's copy is
 * consistent. The child has none of the pool's threads: it forgets the
 * inherited pool (leaked, as docs/api.md says inherited pools must be)
 * and creates a fresh one at its first clove_run. */
static void dp_prepare(void)
{
    (void)clove__mutex_lock(&dp_lock);
}

static void dp_parent(void)
{
    (void)clove__mutex_unlock(&dp_lock);
}

static void dp_child(void)
{
    atomic_store(&dp_pool, NULL);
    atomic_store(&dp_users, 0);
    (void)clove__mutex_unlock(&dp_lock);
}

/* The default pool, created if need be (dp_lock taken here). Returns 0
 * and sets *out (NULL once the exit handler ran), or the error of
 * clove_pool_create (nothing is kept: the next call tries again). */
static int dp_get(clove_pool **out)
{
    int rc = 0;
    (void)clove__mutex_lock(&dp_lock);
    clove_pool *p = atomic_load(&dp_pool);
    if (p == NULL && !dp_closed) {
        rc = clove_pool_create(&p, NULL);
        if (rc == 0) {
            if (!dp_hooks) {
                /* Either failing only costs the clean-up it would do. */
                (void)atexit(dp_exit);
                clove__at_fork(dp_prepare, dp_parent, dp_child);
                dp_hooks = true;
            }
            atomic_store(&dp_pool, p);
        }
    }
    (void)clove__mutex_unlock(&dp_lock);
    *out = p;
    return rc;
}

/* After exit() began: fn on a one-thread pool of its own (no threads are
 * started; one job stack is mapped). */
static int run_alone(clove_fn *fn, void *arg)
{
    clove_config cfg = {0};
    cfg.threads = 1;
    clove_pool *p;
    int rc = clove_pool_create(&p, &cfg);
    if (rc == 0) {
        rc = clove_pool_run(p, fn, arg);
        clove_pool_destroy(p);
    }
    return rc;
}

int clove_run(clove_fn *fn, void *arg)
{
    if (fn == NULL)
        return EINVAL;
    clove_task *t = clove_current();
    if (t != NULL) {
        /* Inside a task (of any pool): a nested call on it. */
        fn(t, arg);
        return 0;
    }
    atomic_fetch_add(&dp_users, 1);
    clove_pool *p = atomic_load(&dp_pool);
    int rc = 0;
    if (p == NULL)
        rc = dp_get(&p);
    if (rc == 0)
        rc = p != NULL ? clove_pool_run(p, fn, arg) : run_alone(fn, arg);
    atomic_fetch_sub(&dp_users, 1);
    return rc;
}
