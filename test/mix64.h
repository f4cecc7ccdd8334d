/* SPDX-License-Identifier: MIT */
/* mix64.h - the bijective 64-bit mixer of the tests and the stress
 * harness (splitmix64's finaliser): distinct in, distinct out. */
#ifndef CLOVE_TEST_MIX64_H
#define CLOVE_TEST_MIX64_H

#include <stdint.h>

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

#endif
