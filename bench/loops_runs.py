#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Combine the output of several `loops` processes.

Usage: bench/loops_runs.py RUN1.csv RUN2.csv ...        (--csv files)
       bench/loops_runs.py --raw [--quiet R] RAW1.csv ...  (--raw files)

--csv files: for each (workload, impl, threads) the median over processes
of each process's median ns/element, the spread of those medians, and the
ratio to the plain loop's (same workload); then `best`, the fastest sample
of all processes, and its ratio to the plain loop's fastest (the least
disturbed runs of a noisy machine); then the loop targets
(bench/README.md) checked on the medians.

--raw files: paired ratios. For every round, the ratio of each sample to
the plain loop's sample of the same round and process; then the median of
those ratios over all rounds of all processes (peers have samples in fewer
rounds). With --quiet R (e.g. 0.7) only rounds whose hand split onto two
pthreads ran at <= R x the plain loop, and whose plain sample is within
10 % of that process's fastest plain sample, count: rounds in which the
machine's second core (or the first) was taken by something else say
nothing about 2 threads. For workload c, whose split is unbalanced by
design (at best ~0.74x), the split's limit is R x 1.48.
"""
import csv
import statistics
import sys
from collections import defaultdict

ORDER = ["plain", "split", "clove", "omp-static", "omp-dynamic", "omp-guided", "tbb"]


def key_order(k):
    w, impl, t = k
    return (w, ORDER.index(impl) if impl in ORDER else 99, t)


def targets(get):
    """get(w, impl, t) -> ratio to plain or None. Prints PASS/MISS lines."""
    rows = [
        ("(a) clove 1 thread <= 1.10x plain", get("a", "clove", 1), 1.10),
        ("(a) clove 2 threads <= 1.00x plain", get("a", "clove", 2), 1.00),
        ("(b) clove 2 threads <= 0.55x plain", get("b", "clove", 2), 0.55),
        ("(c) clove 2 threads <= 0.60x plain", get("c", "clove", 2), 0.60),
    ]
    print("\ntargets:")
    for what, x, lim in rows:
        if x is None:
            print(f"  {what:<48} not measured")
        else:
            print(f"  {what:<48} {x:5.2f}x  {'PASS' if x <= lim else 'MISS'}")
    c2 = get("c", "clove", 2)
    for peer in ("omp-static", "omp-dynamic", "tbb"):
        p = get("c", peer, 2)
        what = f"(c) clove 2 threads faster than {peer} 2"
        if c2 is None or p is None:
            print(f"  {what:<48} not measured")
        else:
            print(f"  {what:<48} {c2 / p:5.2f}x  {'PASS' if c2 < p else 'MISS'}")


def from_csv(paths):
    rows = defaultdict(list)
    mins = defaultdict(list)
    for path in paths:
        with open(path) as f:
            for r in csv.DictReader(f):
                k = (r["workload"], r["impl"], int(r["threads"]))
                rows[k].append(float(r["median_ns_per_elem"]))
                mins[k].append(float(r["min"]))
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"{len(paths)} processes; median of per-process medians, ns/element")
    last = None
    for k in sorted(rows, key=key_order):
        w, impl, t = k
        if w != last:
            print(f"\nworkload {w}")
            print(f"  {'impl':<12}{'threads':>8}{'median':>10}{'spread':>22}{'vs plain':>10}"
                  f"{'best':>10}{'vs best plain':>15}")
            last = w
        v = rows[k]
        base = med.get((w, "plain", 1))
        ratio = f"{med[k] / base:.3f}x" if base else "-"
        best = min(mins[k])
        pbest = min(mins.get((w, "plain", 1), [0])) or None
        bratio = f"{best / pbest:.3f}x" if pbest else "-"
        print(f"  {impl:<12}{t:>8}{med[k]:>10.3f}{min(v):>10.3f} - {max(v):<9.3f}{ratio:>10}"
              f"{best:>10.3f}{bratio:>15}")

    def get(w, impl, t):
        base = med.get((w, "plain", 1))
        x = med.get((w, impl, t))
        return x / base if x is not None and base else None
    targets(get)


def from_raw(paths, quiet):
    # (file, workload, round) -> {(impl, threads): ns}
    rounds = defaultdict(dict)
    for i, path in enumerate(paths):
        with open(path) as f:
            for r in csv.DictReader(f):
                rounds[(i, r["workload"], int(r["round"]))][(r["impl"], int(r["threads"]))] = \
                    float(r["ns_per_elem"])
    # The fastest plain sample of each process and workload: a round whose
    # plain sample is more than 10 % slower was disturbed.
    best = {}
    for (i, w, rd), s in rounds.items():
        p = s.get(("plain", 1))
        if p and (p < best.get((i, w), float("inf"))):
            best[(i, w)] = p
    ratios = defaultdict(list)
    used = defaultdict(int)
    total = defaultdict(int)
    for (i, w, rd), s in rounds.items():
        plain = s.get(("plain", 1))
        if not plain:
            continue
        total[w] += 1
        if quiet is not None:
            split = s.get(("split", 2))
            if split is None:
                continue
            # c's split is unbalanced by design (3/4 of the heavy work in the
            # upper half): its best is ~0.74x, so scale the threshold.
            lim = quiet * (0.74 / 0.5 if w == "c" else 1.0)
            if split / plain > lim or plain > 1.1 * best[(i, w)]:
                continue
        used[w] += 1
        for k, v in s.items():
            ratios[(w,) + k].append(v / plain)
    print(f"{len(paths)} processes; per-round ratio to the plain loop's sample of the same"
          f" round, median over rounds" + (f"; quiet rounds only (split <= {quiet}x"
                                            " plain, c: <= {:.2f}x; plain within 10 % of"
                                            " its fastest)".format(quiet * 1.48)
                                            if quiet is not None else ""))
    last = None
    for k in sorted(ratios, key=key_order):
        w, impl, t = k
        if w != last:
            print(f"\nworkload {w}: {used[w]} of {total[w]} rounds")
            print(f"  {'impl':<12}{'threads':>8}{'median ratio':>14}{'min':>8}{'max':>8}{'n':>6}")
            last = w
        v = ratios[k]
        print(f"  {impl:<12}{t:>8}{statistics.median(v):>13.3f}x{min(v):>8.3f}{max(v):>8.3f}"
              f"{len(v):>6}")

    def get(w, impl, t):
        v = ratios.get((w, impl, t))
        return statistics.median(v) if v else None
    targets(get)


def main(argv):
    raw = False
    quiet = None
    paths = []
    it = iter(argv)
    for a in it:
        if a == "--raw":
            raw = True
        elif a == "--quiet":
            quiet = float(next(it))
        else:
            paths.append(a)
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    (from_raw(paths, quiet) if raw else from_csv(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
