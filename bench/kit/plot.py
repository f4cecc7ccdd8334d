#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Plot the scaling kit's CSV files with matplotlib: one PNG per workload in
RESULTS/plots/, the median ns per node/call/element (log scale) against
threads (log scale), one line per implementation; the sequential references
(baseline, plain, qsort, rust_baseline) as flat dashed lines, the hand split
as its one point at 2 threads, the copies and parts rows (the machine's
perfect parallel run) as a dashed line. The same plots as plot.sh (gnuplot).

Usage: plot.py RESULTS   (the folder run.sh wrote)
"""
import csv
import glob
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REFS = {"baseline", "plain", "qsort", "rust_baseline"}
STYLES = {
    "clove": dict(color="#d62728", lw=3, marker="o"),
    "rayon": dict(color="#1f77b4", lw=2, marker="s"),
    "omp": dict(color="#ff7f0e", lw=2, marker="^"),
    "omp_cutoff": dict(color="#ff7f0e", lw=2, ls=":", marker="v"),
    "tbb": dict(color="#2ca02c", lw=2, marker="D"),
    "tbb_cutoff": dict(color="#2ca02c", lw=2, ls=":", marker="d"),
    "omp-static": dict(color="#ff7f0e", lw=2, marker="^"),
    "omp-dynamic": dict(color="#9467bd", lw=2, marker="<"),
    "omp-guided": dict(color="#8c564b", lw=2, marker=">"),
    "copies": dict(color="black", lw=1.5, ls="--", marker="x"),
    "parts": dict(color="black", lw=1.5, ls="--", marker="x"),
}


def plot(path, outdir):
    stem = os.path.splitext(os.path.basename(path))[0]
    series, ns, unit = {}, [], "unit"
    with open(path) as f:
        rows = csv.DictReader(f)
        if not rows.fieldnames or rows.fieldnames[:3] != ["workload", "impl", "threads"]:
            return False
        for r in rows:
            if not r["median"]:
                continue
            series.setdefault(r["impl"], []).append((int(r["threads"]), float(r["median"])))
            if r["n"] not in ns:
                ns.append(r["n"])
            unit = r["unit"].replace("ns_per_", "")
    if not series:
        return False
    ts = [t for s in series.values() for t, _ in s]
    lo, hi = min(ts), max(ts)
    if lo == hi:
        lo, hi = lo / 1.5, hi * 1.5
    fig, ax = plt.subplots(figsize=(8, 5.2))
    order = sorted(series, key=lambda i: (i not in REFS, i != "split", not i.startswith("clove")))
    for impl in order:
        pts = sorted(series[impl])
        if impl in REFS and len(pts) == 1:
            color = "#555555" if impl == "rust_baseline" else "black"
            ax.plot([lo, hi], [pts[0][1]] * 2, ls="--", lw=2, color=color, label=impl)
        elif impl == "split":
            ax.plot(*zip(*pts), ls="", marker="*", ms=10, color="#7f7f7f", label=impl)
        else:
            ax.plot(*zip(*pts), label=impl, **STYLES.get(impl, dict(lw=2, marker=".")))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("threads")
    ax.set_ylabel(f"ns per {unit}")
    ax.set_title(f"{stem}, n = {' '.join(ns)} (median ns per {unit}, lower is better)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, stem + ".png"), dpi=100)
    plt.close(fig)
    return True


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: plot.py RESULTS")
    res = sys.argv[1]
    outdir = os.path.join(res, "plots")
    os.makedirs(outdir, exist_ok=True)
    made = sum(plot(p, outdir) for p in sorted(glob.glob(os.path.join(res, "*.csv"))))
    print(f"plot.py: {made} plots in {outdir}")


if __name__ == "__main__":
    main()
