#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-round paired ratios from tree_sum --raw files (one or more processes).

Usage: bench/paired_ratios.py RAW1.csv RAW2.csv ...

tree_sum samples every configuration once per round, so samples of one
round were taken within a fraction of a second of each other. Dividing each
sample by the baseline (and by the split) sample *of the same round* and
taking the median over rounds cancels most of a shared machine's drift.
On a 2-core machine that others also use, the second core is sometimes
busy: a round whose split/baseline ratio is >= 0.75 (the hand split got
less than ~1.33x) is counted as disturbed, and the "quiet rounds" columns
leave those rounds out. Both are printed; say which one you quote.
"""
import csv, sys, statistics as st
from collections import defaultdict
# per (file, n, round): {cfg: value}
res = defaultdict(list); resq = defaultdict(list); nr = defaultdict(int); nq = defaultdict(int)
for path in sys.argv[1:]:
    rounds = defaultdict(dict)
    for r in csv.DictReader(open(path)):
        rounds[(int(r['n']), int(r['round']))][(r['impl'], int(r['threads']))] = float(r['ns_per_node'])
    for (n, rd), d in rounds.items():
        b = d[('baseline', 1)]; s = d.get(('split', 2))
        quiet = s is not None and s / b < 0.75
        nr[n] += 1; nq[n] += quiet
        for k, v in d.items():
            res[(n,)+k].append(v / b)
            if quiet: resq[(n,)+k].append((v / b, v / s))
for n in sorted(nr):
    print(f"n={n}: {nr[n]} rounds, {nq[n]} with split/baseline < 0.75 (second core free)")
    for k in res:
        if k[0] != n: continue
        a = st.median(res[k]); q = resq.get(k, [])
        qb = st.median(x for x, _ in q) if q else float('nan'); qs = st.median(y for _, y in q) if q else float('nan')
        print(f"  {k[1]:<9}{k[2]:>3}  all rounds: /base {a:.2f}   quiet rounds: /base {qb:.2f}  /split {qs:.2f}")
