/* SPDX-License-Identifier: MIT */
/*
 * runner.c - clove_tests: run one test by name, all of them, or list them.
 *
 *   clove_tests              run every test, each in a child process (one
 *                            failure does not stop the others), and
 *                            print a summary; exit status 1 if any failed
 *   clove_tests NAME...      run the named tests in this process
 *   clove_tests --list       print the test names, one per line
 *   clove_tests --misuse N   (internal) a misuse child of misuse_aborts
 *
 * Environment: CLOVE_TEST_SCALE (size multiplier, default 1),
 * CLOVE_TEST_VERBOSE=1 (print statistics).
 */
#include "test.h"

#include <stdio.h>
#include <string.h>

struct test_entry {
    const char *name;
    void (*fn)(void);
};

static const struct test_entry tests[] = {
#define X(name) {#name, test_##name},
#include "list.h"
#undef X
};
#define NTESTS (sizeof tests / sizeof tests[0])

static int run_test(const struct test_entry *e)
{
    printf("RUN  %s\n", e->name);
    fflush(stdout);
    double t0 = now_s();
    e->fn();
    printf("PASS %s (%.2f s)\n", e->name, now_s() - t0);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    test_start_threads = thread_count();
    if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < NTESTS; i++)
            printf("%s\n", tests[i].name);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "--misuse") == 0)
        return misuse_child_main(argv[2]);
    if (argc >= 2 && argv[1][0] == '-') {
        fprintf(stderr, "usage: %s [--list | NAME...]\n", argv[0]);
        return 2;
    }

    if (argc == 1) {
        double t0 = now_s();
        size_t failed = 0, skipped = 0;
        static struct self_exec self;
        self_exec_prepare(&self, argv[0]);
        for (size_t i = 0; i < NTESTS; i++) {
            char why[128];
            int rc = run_test_process(&self, tests[i].name, why, sizeof why);
            if (rc == TEST_SKIPPED) {
                skipped++;
            } else if (rc != 0) {
                failed++;
                printf("FAIL %s (%s)\n", tests[i].name, why);
            }
        }
        printf("%zu of %zu tests passed, %zu skipped (%.2f s, scale %g)\n",
               NTESTS - failed - skipped, NTESTS, skipped, now_s() - t0, test_scale());
        return failed ? 1 : 0;
    }
    for (int a = 1; a < argc; a++) {
        size_t i = 0;
        while (i < NTESTS && strcmp(tests[i].name, argv[a]) != 0)
            i++;
        if (i == NTESTS) {
            fprintf(stderr, "unknown test: %s (see --list)\n", argv[a]);
            return 2;
        }
        run_test(&tests[i]);
    }
    return 0;
}
