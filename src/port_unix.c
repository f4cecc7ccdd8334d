/* SPDX-License-Identifier: MIT */
/*
 * port_unix.c - the half of port.h beside port_posix.c for POSIX systems
 * other than Linux (macOS, the BSDs), with portable calls only: the online
 * CPUs, no pinning, no thread names, no timer slack. CI builds it on Linux
 * (CLOVE_PORT=unix) to keep it compiling.
 */
#include "port.h"

#include <string.h>
#include <unistd.h>

unsigned clove__cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

void clove__cpus_get(clove__cpus *cpus)
{
    memset(cpus, 0, sizeof *cpus);
}

void clove__cpus_pin(const clove__cpus *cpus, unsigned index)
{
    (void)cpus;
    (void)index;
}

void clove__thread_name(const char *name)
{
    (void)name;
}

void clove__timer_slack(uint64_t ns)
{
    (void)ns;
}
