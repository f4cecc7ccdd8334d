/* SPDX-License-Identifier: MIT */
/*
 * load_main.c - clove_load: the server-style load of load.c, as long as
 * asked, for the figures in docs/reliability.md.
 *
 *   clove_load [--callers N]... [--seconds S] [--threads T]
 *              [--heartbeat-us US] [--seed X]
 *
 * Defaults: 16 and 64 callers, 60 s each, a pool of the CPUs the process
 * may run on, the default heartbeat. One line per run (load_print); a
 * wrong result ends it with status 1.
 */
#include "load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    unsigned callers[8], ncallers = 0, threads = 0, hb = 0;
    double seconds = 60;
    uint64_t seed = 0x5e7e;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--callers") == 0 && v && ncallers < 8)
            callers[ncallers++] = (unsigned)atoi(v), i++;
        else if (strcmp(a, "--seconds") == 0 && v)
            seconds = atof(v), i++;
        else if (strcmp(a, "--threads") == 0 && v)
            threads = (unsigned)atoi(v), i++;
        else if (strcmp(a, "--heartbeat-us") == 0 && v)
            hb = (unsigned)atoi(v), i++;
        else if (strcmp(a, "--seed") == 0 && v)
            seed = strtoull(v, NULL, 0), i++;
        else {
            fprintf(stderr,
                    "usage: %s [--callers N]... [--seconds S] [--threads T] "
                    "[--heartbeat-us US] [--seed X]\n",
                    argv[0]);
            return 2;
        }
    }
    if (ncallers == 0) {
        callers[ncallers++] = 16;
        callers[ncallers++] = 64;
    }
    for (unsigned k = 0; k < ncallers; k++) {
        clove_config cfg = {0};
        cfg.threads = threads;
        cfg.heartbeat_us = hb;
        clove_pool *p = NULL;
        int rc = clove_pool_create(&p, &cfg);
        if (rc != 0) {
            fprintf(stderr, "clove_pool_create: %s\n", strerror(rc));
            return 1;
        }
        struct load ld = {
            .pool = p,
            .callers = callers[k],
            .heartbeat_us = hb ? hb : CLOVE_DEFAULT_HEARTBEAT_US,
            .seconds = seconds,
            .min_calls = 1,
            .tree_nodes = 4000,
            .items = 20000,
            .seed = seed + k,
        };
        load_run(&ld);
        load_print(stdout, &ld, "clove_load");
        fflush(stdout);
        clove_pool_destroy(p);
    }
    return 0;
}
