/*
 * wait_portable.c - wait.h on pthread mutexes and condition variables,
 * for systems without futexes (and tested on Linux by CI).
 *
 * Addresses hash to one of BUCKETS buckets. A waiter checks the word under
 * its bucket's mutex before sleeping on the bucket's condvar; a waker has
 * already changed the word, and then broadcasts under the same mutex, so a
 * wake cannot fall between the check and the sleep. Broadcast, because a
 * bucket is shared by unrelated words; every waiter re-checks its own.
 * The buckets are statically initialised: no set-up, nothing to fail.
 */
#include "wait.h"

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

static void buckets_init(void)
{
    for (int i = 0; i < BUCKETS; i++) {
        pthread_condattr_t attr;
        if (pthread_mutex_init(&buckets[i].lock, NULL) != 0 ||
            pthread_condattr_init(&attr) != 0 ||
            set_clock(&attr) != 0 ||
            pthread_cond_init(&buckets[i].cond, &attr) != 0)
            abort(); /* cannot fail on any supported system */
        pthread_condattr_destroy(&attr);
    }
}

static struct bucket *bucket_of(_Atomic uint32_t *addr)
{
    uintptr_t a = (uintptr_t)addr;
    a ^= a >> 17;
    a *= (uintptr_t)0x9E3779B97F4A7C15ull;
    (void)pthread_once(&buckets_once, buckets_init);
    return &buckets[(a >> 7) % BUCKETS];
}

void clove__wait(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns)
{
    struct bucket *b = bucket_of(addr);
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
