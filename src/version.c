/* SPDX-License-Identifier: MIT */
/* version.c - the library's version (clove_version, clove_version_string). */
#include "internal.h"

int clove_version(void)
{
    return CLOVE_VERSION;
}

const char *clove_version_string(void)
{
    return CLOVE_VERSION_STRING;
}
