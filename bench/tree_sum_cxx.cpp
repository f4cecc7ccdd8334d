/* SPDX-License-Identifier: MIT */
/*
 * tree_sum_cxx.cpp - the cost of the C++ interface (include/clove.hpp):
 * the tree sum written with t.join and lambdas against the C idiom of
 * clove.h, on the same tree (bench/tree.c: balanced, one malloc per 24-byte
 * node in pre-order, values 1..n, so every sum must be n(n+1)/2; a wrong
 * sum aborts).
 *
 * Implementations:
 *   c         tree_forms.c's value form: the C idiom, compiled as C
 *   c_in_cxx  the same C idiom (clove_fork / clove_join, an arg struct and
 *             a job function) compiled in this C++ file, so that compiler
 *             front-end differences are not charged to clove.hpp
 *   cxx       t.join with two [&] lambdas returning the subtree sums
 *   cxx_val   t.join with lambdas capturing the child pointer by value
 *   baseline  plain sequential recursion (C++), no library
 *
 * One clove_pool_run (pool.run for the C++ ones) per run. Samples are
 * interleaved (one sample of every implementation per round) and each
 * configuration reports its median ns per node.
 *
 * Usage: tree_sum_cxx [-n NODES]... [-t THREADS]... [--reps R]
 *                     [--heartbeat US] [--only IMPL] [--quick]
 * For callgrind: --only IMPL -t 1 and --toggle-collect='run_*'
 * (each implementation's timed entry is a noinline run_IMPL).
 */
#include <clove.hpp>

#include "tree.h" /* after clove.hpp: with tree.c's functions */

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

/* ---- the C idiom, compiled as C++ --------------------------------------- */

int64_t sum_c_in_cxx(clove_task *t, const node *n);

struct cx_arg {
    const node *n;
    int64_t result;
};

void cx_job(clove_task *t, void *p)
{
    auto *a = static_cast<cx_arg *>(p);
    a->result = sum_c_in_cxx(t, a->n);
}

int64_t sum_c_in_cxx(clove_task *t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        clove_future f;
        cx_arg right = {n->right, 0};
        clove_fork(t, &f, cx_job, &right);
        s += sum_c_in_cxx(t, n->left);
        if (!clove_join(t, &f))
            right.result = sum_c_in_cxx(t, n->right);
        return s + right.result;
    }
    if (n->left)
        s += sum_c_in_cxx(t, n->left);
    if (n->right)
        s += sum_c_in_cxx(t, n->right);
    return s;
}

/* ---- clove.hpp ------------------------------------------------------------ */

int64_t sum_cxx(clove::task t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        auto [l, r] = t.join([&](clove::task t2) { return sum_cxx(t2, n->left); },
                             [&](clove::task t2) { return sum_cxx(t2, n->right); });
        return s + l + r;
    }
    if (n->left)
        s += sum_cxx(t, n->left);
    if (n->right)
        s += sum_cxx(t, n->right);
    return s;
}

int64_t sum_cxx_val(clove::task t, const node *n)
{
    int64_t s = n->value;
    if (n->left && n->right) {
        auto [l, r] = t.join([c = n->left](clove::task t2) { return sum_cxx_val(t2, c); },
                             [c = n->right](clove::task t2) { return sum_cxx_val(t2, c); });
        return s + l + r;
    }
    if (n->left)
        s += sum_cxx_val(t, n->left);
    if (n->right)
        s += sum_cxx_val(t, n->right);
    return s;
}

/* ---- timed entry points (noinline, for callgrind --toggle-collect) ------- */

__attribute__((noinline)) int64_t run_c(clove::pool &p, const node *root)
{
    tree_sum_arg a = {root, 0};
    if (clove_pool_run(p.get(), tree_sum_job, &a) != 0)
        std::abort();
    return a.result;
}

void cx_root(clove_task *t, void *p)
{
    auto *a = static_cast<cx_arg *>(p);
    a->result = sum_c_in_cxx(t, a->n);
}

__attribute__((noinline)) int64_t run_c_in_cxx(clove::pool &p, const node *root)
{
    cx_arg a = {root, 0};
    if (clove_pool_run(p.get(), cx_root, &a) != 0)
        std::abort();
    return a.result;
}

__attribute__((noinline)) int64_t run_cxx(clove::pool &p, const node *root)
{
    return p.run([root](clove::task t) { return sum_cxx(t, root); });
}

__attribute__((noinline)) int64_t run_cxx_val(clove::pool &p, const node *root)
{
    return p.run([root](clove::task t) { return sum_cxx_val(t, root); });
}

__attribute__((noinline)) int64_t run_baseline(clove::pool &, const node *root)
{
    return tree_sum_seq(root);
}

struct impl {
    const char *name;
    int64_t (*run)(clove::pool &, const node *);
    bool threaded;
};
const impl impls[] = {
    {"baseline", run_baseline, false}, {"c", run_c, true},
    {"c_in_cxx", run_c_in_cxx, true},  {"cxx", run_cxx, true},
    {"cxx_val", run_cxx_val, true},
};

[[noreturn]] void usage()
{
    std::fputs("usage: tree_sum_cxx [-n NODES]... [-t THREADS]... [--reps R]\n"
               "                    [--heartbeat US] [--only IMPL] [--quick]\n"
               "  IMPL: baseline, c, c_in_cxx, cxx, cxx_val\n",
               stderr);
    std::exit(2);
}

unsigned long parse(const char *s, unsigned long max)
{
    char *end;
    double v = std::strtod(s, &end);
    if (*end || !(v >= 1) || v > double(max))
        usage();
    return static_cast<unsigned long>(v);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t k = v.size();
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

} // namespace

int main(int argc, char **argv)
{
    std::vector<unsigned long> sizes, threads;
    unsigned long reps = 0, heartbeat = 0;
    const char *only = nullptr;
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        auto next = [&]() -> const char * { return i + 1 < argc ? argv[++i] : (usage(), ""); };
        if (!std::strcmp(a, "-n"))
            sizes.push_back(parse(next(), 1ul << 40));
        else if (!std::strcmp(a, "-t"))
            threads.push_back(parse(next(), CLOVE_MAX_THREADS));
        else if (!std::strcmp(a, "--reps"))
            reps = parse(next(), 100000);
        else if (!std::strcmp(a, "--heartbeat"))
            heartbeat = parse(next(), CLOVE_MAX_HEARTBEAT_US);
        else if (!std::strcmp(a, "--only"))
            only = next();
        else if (!std::strcmp(a, "--quick"))
            quick = true;
        else
            usage();
    }
    if (sizes.empty())
        sizes.push_back(10000000);
    if (threads.empty())
        threads = {1, 2};
    if (only) {
        bool known = false;
        for (const impl &im : impls)
            known |= !std::strcmp(im.name, only);
        if (!known)
            usage();
    }

    struct config {
        const impl *im;
        unsigned threads;
        clove::pool *pool;
        std::vector<double> samples;
    };
    std::vector<std::unique_ptr<clove::pool>> pools;
    std::vector<config> cfg;
    for (unsigned long th : threads) {
        clove_config cc{};
        cc.threads = unsigned(th);
        cc.heartbeat_us = unsigned(heartbeat);
        pools.push_back(std::make_unique<clove::pool>(cc));
    }
    for (const impl &im : impls) {
        if (only && std::strcmp(only, im.name))
            continue;
        if (!im.threaded) {
            cfg.push_back({&im, 1, pools[0].get(), {}});
            continue;
        }
        for (size_t k = 0; k < threads.size(); k++)
            cfg.push_back({&im, unsigned(threads[k]), pools[k].get(), {}});
    }

    std::printf("tree_sum_cxx: clove.hpp t.join against the C idiom; ns per node,"
                " median of interleaved samples; heartbeat %lu us\n",
                heartbeat ? heartbeat : (unsigned long)CLOVE_DEFAULT_HEARTBEAT_US);
    using clk = std::chrono::steady_clock;
    for (unsigned long nn : sizes) {
        const int64_t n = int64_t(nn);
        const int64_t expect = n * (n + 1) / 2;
        node *root = tree_build(1, n);
        unsigned batch = n >= 100000 ? 1u : unsigned((1000000 + n - 1) / n);
        auto sample = [&](config &c) {
            auto t0 = clk::now();
            for (unsigned b = 0; b < batch; b++) {
                int64_t got = c.im->run(*c.pool, root);
                if (got != expect) {
                    std::fprintf(stderr, "tree_sum_cxx: WRONG SUM: %s t=%u n=%" PRId64
                                         " got %" PRId64 "\n", c.im->name, c.threads, n, got);
                    std::abort();
                }
            }
            return std::chrono::duration<double, std::nano>(clk::now() - t0).count() /
                   (double(n) * batch);
        };
        for (config &c : cfg) /* warm-up */
            sample(c);
        unsigned long rounds = reps ? reps : quick ? 3 : 0;
        if (!rounds) { /* about 0.5 s per configuration */
            double per = 0;
            for (config &c : cfg)
                per = std::max(per, sample(c) * double(n) * batch);
            rounds = std::clamp<unsigned long>(static_cast<unsigned long>(0.5e9 / per), 5, 2000);
        }
        for (config &c : cfg)
            c.samples.clear();
        for (unsigned long r = 0; r < rounds; r++)
            for (config &c : cfg)
                c.samples.push_back(sample(c));
        std::printf("\nn = %" PRId64 ", %lu samples per configuration, %u run%s per sample\n",
                    n, rounds, batch, batch == 1 ? "" : "s");
        std::printf("  %-9s %7s %10s %10s %12s\n", "impl", "threads", "median", "min",
                    "vs c (same t)");
        for (config &c : cfg) {
            double med = median(c.samples);
            double ref = 0;
            for (config &d : cfg)
                if (!std::strcmp(d.im->name, "c") && d.threads == c.threads)
                    ref = median(d.samples);
            char ratio[32] = "-";
            if (ref > 0 && c.im->threaded)
                std::snprintf(ratio, sizeof ratio, "%.3fx", med / ref);
            std::printf("  %-9s %7u %10.3f %10.3f %12s\n", c.im->name, c.threads, med,
                        *std::min_element(c.samples.begin(), c.samples.end()), ratio);
        }
        std::fflush(stdout);
        tree_destroy(root);
    }
    return 0;
}
