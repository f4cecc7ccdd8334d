#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-round paired ratios from --raw files of tree_sum, fib, uts or
nqueens (one or more processes).

Usage: bench/paired_ratios.py RAW1.csv RAW2.csv ...

The benchmarks sample every configuration once per round, so samples of
one round were taken within a fraction of a second of each other. Dividing
each sample by the baseline sample *of the same round* (and by the
control's) and taking the median over rounds cancels most of a shared
machine's drift. On a 2-core machine that others also use, the second
core is sometimes busy. A control row tells those rounds apart:
  - split (tree_sum --split, the root split by hand onto two threads): a
    round whose split/baseline ratio is >= 0.75 (the hand split got less
    than ~1.33x) is counted as disturbed;
  - pair (fib/uts/nqueens --pair, the baseline on two threads at once):
    a round whose pair/baseline ratio is >= 1.10 is counted as disturbed.
The "quiet rounds" columns leave disturbed rounds out (with split, they
also give the ratio to the split). Both are printed; say which one you
quote.
"""
import csv, sys, statistics as st
from collections import defaultdict


def quiet_round(d, b):
    """(quiet, the control's value or None, the control's name)."""
    s = d.get(('split', 2))
    if s is not None:
        return s / b < 0.75, s, 'split'
    p = d.get(('pair', 2))
    if p is not None:
        return p / b < 1.10, None, 'pair'
    return False, None, None


# per (n, impl, threads): ratios over rounds, and over the quiet rounds
res = defaultdict(list); resq = defaultdict(list); nr = defaultdict(int); nq = defaultdict(int)
control = {}
for path in sys.argv[1:]:
    rounds = defaultdict(dict)
    for r in csv.DictReader(open(path)):
        rounds[(int(r['n']), int(r['round']))][(r['impl'], int(r['threads']))] = float(r['ns_per_node'])
    for (n, rd), d in rounds.items():
        b = d[('baseline', 1)]
        quiet, s, name = quiet_round(d, b)
        if name:
            control[n] = name
        nr[n] += 1; nq[n] += quiet
        for k, v in d.items():
            res[(n,)+k].append(v / b)
            if quiet: resq[(n,)+k].append((v / b, v / s if s else float('nan')))
for n in sorted(nr):
    c = control.get(n)
    if c == 'split':
        print(f"n={n}: {nr[n]} rounds, {nq[n]} with split/baseline < 0.75 (second core free)")
    elif c == 'pair':
        print(f"n={n}: {nr[n]} rounds, {nq[n]} with pair/baseline < 1.10 (second core free)")
    else:
        print(f"n={n}: {nr[n]} rounds (no split or pair row: no quiet rounds)")
    for k in res:
        if k[0] != n: continue
        a = st.median(res[k]); q = resq.get(k, [])
        qb = st.median(x for x, _ in q) if q else float('nan'); qs = st.median(y for _, y in q) if q else float('nan')
        extra = f"  /split {qs:.2f}" if c == 'split' else ""
        print(f"  {k[1]:<9}{k[2]:>3}  all rounds: /base {a:.2f}   quiet rounds: /base {qb:.2f}{extra}")
