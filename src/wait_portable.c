/* SPDX-License-Identifier: MIT */
/*
 * wait_portable.c - wait.h on pthread mutexes and condition variables,
 * for systems without futexes (and tested on Linux by CI).
 *
 * Addresses hash to one of BUCKETS buckets. A waiter checks the word under
 * its bucket's mutex before sleeping on the bucket's condvar; a waker has
 * already changed the word, and then broadcasts under the same mutex, so a
 * wake cannot fall between the check and the sleep. Broadcast, because a
 * bucket is shared by unrelated words; every waiter re-checks its own.
 * The buckets are set up once per process by clove__wait_init (called by
 * clove_pool_create, which reports a failure as ENOMEM).
 */
#include "wait.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BUCKETS 64

struct bucket {
    pthread_mutex_t lock; /* protects the wait/broadcast handshake only */
    pthread_cond_t cond;
    char pad[64];
};

static struct bucket buckets[BUCKETS];
static pthread_once_t buckets_once = PTHREAD_ONCE_INIT;

/* Timed waits use CLOCK_MONOTONIC where condvars support choosing the
 * clock (POSIX clock selection), CLOCK_REALTIME elsewhere (macOS). */
#if defined(_POSIX_CLOCK_SELECTION) && _POSIX_CLOCK_SELECTION > 0
#define WAIT_CLOCK CLOCK_MONOTONIC
static int set_clock(pthread_condattr_t *attr)
{
    return pthread_condattr_setclock(attr, CLOCK_MONOTONIC);
}
#else
#define WAIT_CLOCK CLOCK_REALTIME
static int set_clock(pthread_condattr_t *attr)
{
    (void)attr;
    return 0;
}
#endif

static int bucket_init(struct bucket *b)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return ENOMEM;
    int rc = set_clock(&attr);
    if (rc == 0 && (rc = pthread_mutex_init(&b->lock, NULL)) == 0 &&
        (rc = pthread_cond_init(&b->cond, &attr)) != 0)
        pthread_mutex_destroy(&b->lock);
    pthread_condattr_destroy(&attr);
    return rc == 0 ? 0 : ENOMEM;
}

/*
 * fork(): the buckets are process-wide, so a thread of the parent may hold
 * a bucket's lock at the moment another thread forks; the child, which has
 * only the forking thread, would then deadlock on that bucket as soon as a
 * new pool hashes a word onto it. So: take every bucket lock (in index
 * order, the only order in which more than one is ever held) before the
 * fork, release them after it in the parent, and give the child fresh
 * buckets (the waiters recorded in the condvars do not exist there).
 * test/test_reliability.c:process_fork catches the deadlock without this.
 */
static void before_fork(void)
{
    for (int i = 0; i < BUCKETS; i++)
        pthread_mutex_lock(&buckets[i].lock);
}

static void after_fork_parent(void)
{
    for (int i = BUCKETS - 1; i >= 0; i--)
        pthread_mutex_unlock(&buckets[i].lock);
}

static void after_fork_child(void)
{
    for (int i = 0; i < BUCKETS; i++)
        if (bucket_init(&buckets[i]) != 0)
            abort(); /* no way to report it from a fork handler */
}

static int buckets_rc = ENOMEM; /* written once, under buckets_once */

static void buckets_init(void)
{
    int i;
    for (i = 0; i < BUCKETS; i++)
        if (bucket_init(&buckets[i]) != 0)
            break;
    if (i == BUCKETS && pthread_atfork(before_fork, after_fork_parent, after_fork_child) == 0) {
        buckets_rc = 0;
        return;
    }
    while (i-- > 0) {
        pthread_cond_destroy(&buckets[i].cond);
        pthread_mutex_destroy(&buckets[i].lock);
    }
    /* buckets_rc stays ENOMEM: every clove_pool_create will report it. */
}

/* Called by clove_pool_create before it starts any thread. The buckets are
 * set up once per process; if that failed, every create says ENOMEM. */
int clove__wait_init(void)
{
    (void)pthread_once(&buckets_once, buckets_init);
    return buckets_rc;
}

static struct bucket *bucket_of(_Atomic uint32_t *addr)
{
    uintptr_t a = (uintptr_t)addr;
    a ^= a >> 17;
    a *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return &buckets[(a >> 7) % BUCKETS];
}

/* pthread_cond_wait is a cancellation point, and the library's waits must
 * not be (a cancellation acting here would leave the task asleep on the
 * idle list and the bucket locked): cancellation is disabled around it. */
void clove__wait(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns)
{
    struct bucket *b = bucket_of(addr);
    int cancel_state;
    (void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    pthread_mutex_lock(&b->lock);
    if (atomic_load_explicit(addr, memory_order_relaxed) == expected) {
        if (timeout_ns) {
            struct timespec ts;
            clock_gettime(WAIT_CLOCK, &ts);
            uint64_t ns = (uint64_t)ts.tv_nsec + timeout_ns % 1000000000u;
            ts.tv_sec += (time_t)(timeout_ns / 1000000000u + ns / 1000000000u);
            ts.tv_nsec = (long)(ns % 1000000000u);
            (void)pthread_cond_timedwait(&b->cond, &b->lock, &ts);
        } else {
            (void)pthread_cond_wait(&b->cond, &b->lock);
        }
    }
    pthread_mutex_unlock(&b->lock);
    (void)pthread_setcancelstate(cancel_state, NULL);
}

void clove__wake_one(_Atomic uint32_t *addr)
{
    clove__wake_all(addr);
}

void clove__wake_all(_Atomic uint32_t *addr)
{
    struct bucket *b = bucket_of(addr);
    pthread_mutex_lock(&b->lock);
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->lock);
}
