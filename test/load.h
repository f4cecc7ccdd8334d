/* SPDX-License-Identifier: MIT */
/* load.h - the server-style load of load.c (the test suite's server_load
 * and the tool clove_load). */
#ifndef CLOVE_TEST_LOAD_H
#define CLOVE_TEST_LOAD_H

#include "test.h"

#include <stdatomic.h>
#include <stdio.h>

#define LOAD_BUCKETS (61 * 16)

struct load {
    /* In: */
    clove_pool *pool;
    unsigned callers;
    unsigned heartbeat_us; /* the pool's, for the report */
    double seconds;
    uint64_t min_calls;    /* each caller makes at least this many calls */
    size_t tree_nodes;     /* each caller's tree: nodes/2 .. 3*nodes/2 */
    size_t items;          /* loop and sort sizes: 1 .. items */
    uint64_t seed;
    /* Out: */
    _Atomic int stop;
    double elapsed;
    uint64_t calls, p50_ns, p99_ns, max_ns;
    uint64_t min_caller, max_caller; /* calls of the least / most served caller */
    size_t rss_first, rss_max_first_half, rss_max_second_half, rss_end;
    size_t rss_peak; /* the largest RSS seen, the end included */
};

/* Run the load; every call's result is checked (a failure ends the
 * process through test_fail). */
void load_run(struct load *ld);
void load_print(FILE *f, const struct load *ld, const char *what);

#endif
