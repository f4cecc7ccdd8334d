/* SPDX-License-Identifier: MIT */
/*
 * wakelat.c - measure the scheduler costs the simulator needs (Linux):
 *
 *   wake   futex wake-to-run latency: a thread sleeps in FUTEX_WAIT; the
 *          other stamps t0 and calls FUTEX_WAKE; the sleeper stamps t1 as
 *          soon as it returns. Latency = t1 - t0 (CLOCK_MONOTONIC, one
 *          clock for both threads). Also the waker's own cost of the
 *          FUTEX_WAKE call (what a sharer pays).
 *   cond   the same with a pthread mutex + condition variable.
 *   timer  the real period of a 100 us (or -h US) timed futex wait with
 *          the timer slack set to a tenth of it, as clove's heartbeat
 *          thread does.
 *
 * Between rounds the waker pauses (-g US, default 300) so that the sleeper
 * really is asleep (its CPU may go idle), as an idle clove worker is.
 *
 * usage: wakelat [-n ROUNDS] [-g GAP_US] [-h HEARTBEAT_US]
 * Prints medians and percentiles in microseconds. Standalone: no clove.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)w, op, val, ts, NULL, 0);
}

static void pause_us(unsigned us)
{
    struct timespec ts = { 0, (long)us * 1000 };
    nanosleep(&ts, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    printf("%-28s n=%zu  p10=%.1f  median=%.1f  p90=%.1f  mean=%.1f us\n", what, n,
           v[n / 10] / 1e3, v[n / 2] / 1e3, v[n * 9 / 10] / 1e3,
           ({ double s = 0; for (size_t i = 0; i < n; i++) s += v[i]; s / n / 1e3; }));
}

/* ---- futex ---- */
static _Atomic uint32_t word, ack;
static _Atomic uint64_t t_woke;

static void *futex_sleeper(void *arg)
{
    size_t rounds = *(size_t *)arg;
    for (size_t i = 0; i < rounds; i++) {
        while (atomic_load(&word) == 0)
            futex(&word, FUTEX_WAIT_PRIVATE, 0, NULL);
        atomic_store(&t_woke, now_ns());
        atomic_store(&word, 0);
        atomic_store(&ack, 1);
        futex(&ack, FUTEX_WAKE_PRIVATE, 1, NULL);
    }
    return NULL;
}

/* ---- condvar ---- */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int flag;

static void *cond_sleeper(void *arg)
{
    size_t rounds = *(size_t *)arg;
    for (size_t i = 0; i < rounds; i++) {
        pthread_mutex_lock(&mu);
        while (!flag)
            pthread_cond_wait(&cv, &mu);
        atomic_store(&t_woke, now_ns());
        flag = 0;
        pthread_mutex_unlock(&mu);
        atomic_store(&ack, 1);
        futex(&ack, FUTEX_WAKE_PRIVATE, 1, NULL);
    }
    return NULL;
}

static void wait_ack(void)
{
    while (atomic_load(&ack) == 0)
        futex(&ack, FUTEX_WAIT_PRIVATE, 0, NULL);
    atomic_store(&ack, 0);
}

int main(int argc, char **argv)
{
    size_t rounds = 2000;
    unsigned gap_us = 300, hb_us = 100;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            rounds = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-g") && i + 1 < argc)
            gap_us = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-h") && i + 1 < argc)
            hb_us = (unsigned)strtoul(argv[++i], NULL, 10);
        else {
            fputs("usage: wakelat [-n ROUNDS] [-g GAP_US] [-h HEARTBEAT_US]\n", stderr);
            return 2;
        }
    }
    if (rounds < 10)
        rounds = 10;
    uint64_t *lat = calloc(rounds, sizeof *lat), *cost = calloc(rounds, sizeof *cost);
    if (!lat || !cost)
        return 1;
    pthread_t th;

    pthread_create(&th, NULL, futex_sleeper, &rounds);
    for (size_t i = 0; i < rounds; i++) {
        pause_us(gap_us);
        uint64_t t0 = now_ns();
        atomic_store(&word, 1);
        futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL);
        uint64_t t1 = now_ns();
        wait_ack();
        lat[i] = atomic_load(&t_woke) - t0;
        cost[i] = t1 - t0;
    }
    pthread_join(th, NULL);
    report("futex wake-to-run", lat, rounds);
    report("futex FUTEX_WAKE call (waker)", cost, rounds);

    pthread_create(&th, NULL, cond_sleeper, &rounds);
    for (size_t i = 0; i < rounds; i++) {
        pause_us(gap_us);
        uint64_t t0 = now_ns();
        pthread_mutex_lock(&mu);
        flag = 1;
        pthread_mutex_unlock(&mu);
        pthread_cond_signal(&cv);
        uint64_t t1 = now_ns();
        wait_ack();
        lat[i] = atomic_load(&t_woke) - t0;
        cost[i] = t1 - t0;
    }
    pthread_join(th, NULL);
    report("condvar wake-to-run", lat, rounds);
    report("condvar signal (waker)", cost, rounds);

    uint64_t interval = (uint64_t)hb_us * 1000u;
    prctl(PR_SET_TIMERSLACK, (unsigned long)(interval / 10 + 1), 0, 0, 0);
    _Atomic uint32_t never = 0;
    size_t tr = rounds < 2000 ? rounds : 2000;
    for (size_t i = 0; i < tr; i++) {
        struct timespec ts = { 0, (long)interval };
        uint64_t t0 = now_ns();
        futex(&never, FUTEX_WAIT_PRIVATE, 0, &ts);
        lat[i] = now_ns() - t0;
    }
    char name[64];
    snprintf(name, sizeof name, "timed wait %u us (period)", hb_us);
    report(name, lat, tr);
    free(lat);
    free(cost);
    return 0;
}
