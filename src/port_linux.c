/* SPDX-License-Identifier: MIT */
/*
 * port_linux.c - the Linux half of port.h beside port_posix.c: the CPUs of
 * the affinity mask, pinning, thread names and timer slack.
 */
#include "port.h"

#include <sys/prctl.h>
#include <unistd.h>

unsigned clove__cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0)
            return (unsigned)n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

void clove__cpus_get(clove__cpus *cpus)
{
    CPU_ZERO(cpus);
    if (pthread_getaffinity_np(pthread_self(), sizeof *cpus, cpus) != 0)
        CPU_ZERO(cpus);
}

void clove__cpus_pin(const clove__cpus *cpus, unsigned index)
{
    int m = CPU_COUNT(cpus);
    if (m <= 0)
        return;
    int want = (int)(index % (unsigned)m), seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, cpus))
            continue;
        if (seen++ == want) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            (void)pthread_setaffinity_np(pthread_self(), sizeof one, &one);
            return;
        }
    }
}

void clove__thread_name(const char *name)
{
    (void)pthread_setname_np(pthread_self(), name);
}

void clove__timer_slack(uint64_t ns)
{
    (void)prctl(PR_SET_TIMERSLACK, (unsigned long)ns, 0, 0, 0);
}
