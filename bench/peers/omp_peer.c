/* SPDX-License-Identifier: MIT */
/*
 * omp_peer.c - the OpenMP team set-up of every benchmark with an OpenMP
 * peer (peers/peer.h; built only when CMake finds OpenMP for C).
 *
 * OMP_WAIT_POLICY is left as the user has it (unset: libgomp spins a while,
 * then sleeps on a futex).
 */
#include "peer.h"

#include <omp.h>
#include <stdio.h>

unsigned omp_peer_setup(unsigned threads)
{
    /* The team must have exactly `threads` threads: no dynamic adjustment. */
    omp_set_dynamic(0);
    unsigned got = 0;
#pragma omp parallel num_threads((int)threads) shared(got) default(none)
#pragma omp single
    got = (unsigned)omp_get_num_threads();
    return got;
}

const char *omp_peer_version(void)
{
    static char buf[64];
    snprintf(buf, sizeof buf, "OpenMP %d (_OPENMP)", (int)_OPENMP);
    return buf;
}
