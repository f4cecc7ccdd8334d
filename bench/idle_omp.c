/* SPDX-License-Identifier: MIT */
/*
 * idle_omp.c - wake latency of OpenMP tasks (libgomp), for idle_peers.c;
 * see idle_peers.h for what a sample is. One parallel region of `threads`
 * threads; one `single` thread sleeps, spawns the task and spins, the
 * others wait at the end of the single construct (libgomp's team barrier,
 * which runs queued tasks: with the default OMP_WAIT_POLICY they spin for
 * a while and then sleep on a futex, with passive they sleep at once).
 */
#define _GNU_SOURCE
#include "idle_peers.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

unsigned omp_wake(unsigned threads, unsigned samples, unsigned gap_ms,
                  double *lat_us, unsigned *not_taken)
{
    unsigned got = 0, missed = 0;
    omp_set_dynamic(0);
#pragma omp parallel num_threads((int)threads)
#pragma omp single
    {
        int me = omp_get_thread_num();
        for (unsigned i = 0; i <= samples; i++) {
            struct timespec gap = { (time_t)(gap_ms / 1000), (long)(gap_ms % 1000) * 1000000L };
            nanosleep(&gap, NULL);
            atomic_int started = 0;
            uint64_t t_start = 0;
            int who = -1;
            uint64_t t0 = idle_now_ns();
#pragma omp task shared(started, t_start, who)
            {
                t_start = idle_now_ns();
                who = omp_get_thread_num();
                atomic_store_explicit(&started, 1, memory_order_release);
            }
            uint64_t limit = t0 + 100000000u;
            while (!atomic_load_explicit(&started, memory_order_acquire) && idle_now_ns() < limit)
                ;
#pragma omp taskwait
            if (i == 0)
                continue;
            if (who != me)
                lat_us[got++] = (double)(t_start - t0) / 1e3;
            else
                missed++;
        }
    }
    *not_taken = missed;
    return got;
}
