/* SPDX-License-Identifier: MIT */
// clove.h must compile and work from C++ (it uses std::atomic there in
// place of _Atomic): a join2 of two leaves on a pool with two threads.
#include <clove.h>
#include <cstdio>
static void leaf(clove_task *, void *p) { *static_cast<int *>(p) += 1; }
static void root(clove_task *t, void *p) {
    int a = 0, b = 0;
    clove_join2(t, leaf, &a, leaf, &b);
    *static_cast<int *>(p) = a + b;
}
int main() {
    clove_pool *pool;
    clove_config cfg{};
    cfg.threads = 2;
    cfg.heartbeat_us = 1;
    if (clove_pool_create(&pool, &cfg)) return 1;
    int r = 0;
    clove_pool_run(pool, root, &r);
    clove_pool_destroy(pool);
    std::printf("%d\n", r);
    return r == 2 ? 0 : 1;
}
