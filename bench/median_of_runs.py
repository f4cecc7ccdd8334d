#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Combine tree_sum CSV files from several processes.

Usage: bench/median_of_runs.py RUN1.csv RUN2.csv ...

For each (n, impl, threads) prints the median over processes of each
process's median ns/node, the spread of those medians (min-max), and the
ratio of that median to the baseline's (same n), plus ratios used by the
targets: clove 2 threads vs split, clove 32 threads vs clove 1 thread;
for the peers (omp, tbb) the ratio to clove at the same thread count.
"""
import csv
import statistics
import sys
from collections import defaultdict

rows = defaultdict(list)
order = []
for path in sys.argv[1:]:
    with open(path) as f:
        for r in csv.DictReader(f):
            key = (int(r["n"]), r["impl"], int(r["threads"]))
            if key not in rows:
                order.append(key)
            rows[key].append(float(r["median_ns_per_node"]))

med = {k: statistics.median(v) for k, v in rows.items()}
print(f"{len(sys.argv) - 1} processes; median of per-process medians, ns/node")
last_n = None
for key in sorted(order, key=lambda k: (k[0], order.index(k))):
    n, impl, t = key
    if n != last_n:
        print(f"\nn = {n}")
        print(f"  {'impl':<9}{'threads':>8}{'median':>9}{'spread':>17}"
              f"{'vs base':>9}{'vs split':>10}{'vs clove1':>11}"
              f"{'vs clove same t':>17}")
        last_n = n
    v = rows[key]
    m = med[key]
    base = med.get((n, "baseline", 1))
    split = med.get((n, "split", 2))
    c1 = med.get((n, "clove", 1))
    ct = med.get((n, "clove", t))
    peer = impl in ("omp", "tbb")
    fmt = lambda x: f"{m / x:.2f}x" if x else "-"
    print(f"  {impl:<9}{t:>8}{m:>9.3f}{min(v):>8.3f} - {max(v):<6.3f}"
          f"{fmt(base):>9}{fmt(split) if impl == 'clove' else '-':>10}"
          f"{fmt(c1) if impl == 'clove' else '-':>11}"
          f"{fmt(ct) if peer else '-':>17}")
