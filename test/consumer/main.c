/* SPDX-License-Identifier: MIT */
/* Consumer of an installed clove: a parallel sum with clove_join2 over
 * distinct values, checked against the closed form. */
#include <clove.h>
#include <stdio.h>
#include <string.h>

struct range { uint64_t lo, hi, sum; };

static void sum_range(clove_task *t, void *arg)
{
    struct range *r = arg;
    if (r->hi - r->lo <= 1) {
        r->sum = r->hi > r->lo ? r->lo : 0;
        return;
    }
    uint64_t mid = r->lo + (r->hi - r->lo) / 2;
    struct range a = {r->lo, mid, 0}, b = {mid, r->hi, 0};
    clove_join2(t, sum_range, &a, sum_range, &b);
    r->sum = a.sum + b.sum;
}

int main(void)
{
    /* The library it runs with is the one it was built against. */
    if (clove_version() != CLOVE_VERSION ||
        strcmp(clove_version_string(), CLOVE_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: header %s, library %s\n", CLOVE_VERSION_STRING,
                clove_version_string());
        return 1;
    }
    clove_pool *pool;
    clove_config cfg = {.threads = 2, .heartbeat_us = 10};
    if (clove_pool_create(&pool, &cfg) != 0)
        return 1;
    struct range r = {0, 1000000, 0};
    clove_pool_run(pool, sum_range, &r);
    clove_pool_destroy(pool);
    uint64_t want = (uint64_t)999999 * 1000000 / 2;
    printf("consumer: %llu (%s)\n", (unsigned long long)r.sum, r.sum == want ? "ok" : "WRONG");
    return r.sum == want ? 0 : 1;
}
