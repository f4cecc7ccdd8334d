#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""kit_compare.py - the scaling kit's measured speed-ups against the
simulator's prediction for the same machine.

  kit_compare.py RESULTS [--smt-yield Y] [--contention K]
                 [--contention-ref-ns R] [--cores C --smt S] [--markdown]

RESULTS is the `results/` folder of a `bench/kit/run.sh` run: its CSV
files and machine.txt. For each workload the simulator models (the tree
sums, fib, uts-loop), clove's speed-up over its own 1-thread median at
every thread count measured, and the prediction of clove as built
(sim/README.md, "clove as built") on a machine model of that machine:

- cores and hyperthreads per core from machine.txt's lscpu lines (or
  --cores and --smt);
- what a second hyperthread adds (--smt-yield) and the memory contention
  (--contention at --contention-ref-ns) default to c4-standard-16's fit
  (sim/machines.md): a prior, not a measurement of this machine, so
  the error column measures the fit's transfer as much as the scheduler;
- the node cost is clove's own 1-thread median in the CSV, and the
  memory demand the workload's (the tree sums 1, fib and uts-loop 0).

Prints a table per workload: threads, measured (median, and the range
from the slowest to the fastest sample against the 1-thread median),
predicted, error of the prediction against the median. Where the CSV has
copies rows (the kit runs fib and uts-loop with `--copies`: the baseline
on k threads at once) or parts rows (the large tree with `--parts`: the
tree cut by hand for k threads), three more columns tell the machine
model's error from the scheduler's: the machine's ceiling at k threads as
measured (such a row at 1 thread over the same at k: what k threads
deliver with no scheduler), the model's ceiling (what machine_cost gives k
busy threads), and the error of the prediction scaled by their ratio (the
prediction on a machine model that delivers the measured ceiling). Python
3 stdlib only.
"""
import argparse
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clovesim as cs  # noqa: E402


# CSV stem -> the simulator's workload for size n (None: size from n)
WORKLOADS = {
    "tree_sum_large": lambda n: f"tree:{n}",
    "tree_sum_isolated": lambda n: f"tree:{n}",
    "fib": lambda n: f"fib:{n}",
    "uts_loop": lambda n: f"uts:{n}",
}


def read_machine(path):
    """(cores, hyperthreads per core, nproc) from machine.txt; None where
    it does not say."""
    cores = smt = sockets = nproc = None
    try:
        with open(path) as f:
            for line in f:
                m = re.match(r"\s*(Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|"
                             r"cpus \(nproc\)):\s*(\d+)", line)
                if not m:
                    continue
                key, v = m.group(1), int(m.group(2))
                if key.startswith("Thread"):
                    smt = v
                elif key.startswith("Core"):
                    cores = v
                elif key.startswith("Socket"):
                    sockets = v
                else:
                    nproc = v
    except OSError:
        pass
    if cores is not None and sockets is not None:
        cores *= sockets
    return cores, smt, nproc


def read_clove(path):
    """{threads: (median, min, max)} of the clove rows, their size n and
    unit, and {threads: the machine's ceiling} from the copies (or the
    tree's parts) rows of that size: their median at 1 thread (else the
    baseline's) over theirs at that count (empty without such rows)."""
    rows, n, unit = {}, None, "ns per node"
    base, copies = {}, {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            size = int(float(r["n"]))
            if r["impl"] == "baseline" and int(r["threads"]) == 1:
                base[size] = float(r["median"])
            elif r["impl"] in ("copies", "parts") and float(r["median"]) > 0:
                copies[(size, int(r["threads"]))] = float(r["median"])
            elif r["impl"] == "clove":
                rows[int(r["threads"])] = (float(r["median"]), float(r["min"]), float(r["max"]))
                n = size
                unit = r["unit"].replace("_", " ")
    # Against copies at 1 thread where there is that row (the same code
    # started the same way), else against the baseline.
    one = copies.get((n, 1), base.get(n))
    ceiling = {k: one / v for (size, k), v in copies.items() if size == n and one}
    return rows, n, unit, ceiling


def main(argv=None):
    fit = cs.MACHINES["c4-standard-16"]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="the results/ folder of a bench/kit/run.sh run")
    ap.add_argument("--cores", type=int, help="physical cores (default: machine.txt)")
    ap.add_argument("--smt", type=int, help="hyperthreads per core (default: machine.txt)")
    ap.add_argument("--smt-yield", type=float, default=fit["smt_yield"],
                    help="what a core's second hyperthread adds (default: c4-standard-16's fit, %(default)s)")
    ap.add_argument("--contention", type=float, default=fit["contention"],
                    help="memory contention per busy core (default: c4-standard-16's fit, %(default)s)")
    ap.add_argument("--contention-ref-ns", type=float, default=fit["contention_ref_ns"],
                    help="the node cost the contention was fitted at (default %(default)s)")
    ap.add_argument("--markdown", action="store_true", help="Markdown tables")
    a = ap.parse_args(argv)

    if not os.path.isdir(a.results):
        raise SystemExit(f"kit_compare: {a.results} is not a folder (the results/ of a kit run)")
    cores, smt, nproc = read_machine(os.path.join(a.results, "machine.txt"))
    cores = a.cores or cores or nproc
    smt = a.smt or smt or 1
    if not cores:
        raise SystemExit("kit_compare: no core count in machine.txt; give --cores and --smt")
    if cores < 1 or smt < 1 or not 0 <= a.smt_yield <= 1 or a.contention < 0 or a.contention_ref_ns <= 0:
        raise SystemExit("kit_compare: --cores and --smt >= 1, --smt-yield in [0, 1], "
                         "--contention >= 0, --contention-ref-ns > 0")
    cs.MACHINES["kit"] = dict(cores=cores, smt=smt, smt_yield=a.smt_yield, contention=a.contention,
                              contention_ref_ns=a.contention_ref_ns)
    print(f"machine: {cores} cores x {smt} hyperthreads, smt_yield {a.smt_yield:g}, contention "
          f"{a.contention:g} at {a.contention_ref_ns:g} ns; clove as built "
          f"(sim/README.md); speed-up over clove's own 1-thread median")
    found = 0
    for stem, spec in WORKLOADS.items():
        path = os.path.join(a.results, stem + ".csv")
        if not os.path.exists(path):
            continue
        rows, n, unit, ceiling = read_clove(path)
        if 1 not in rows or len(rows) < 2:
            print(f"\n{stem}: no clove rows at 1 thread and more; skipped")
            continue
        found += 1
        work = cs.make_work(spec(n))
        t1 = c1 = rows[1][0]    # the node cost, and the speed-ups' base
        sim1 = cs.simulate(work, 1, c_node=c1, machine="kit", **cs.AS_BUILT)["time_ns"]
        print(f"\n{stem} ({work.name}, clove 1 thread {c1:g} {unit}, memory demand "
              f"{cs.workload_mem_demand(work):g})")
        head = ("threads", "measured", "range", "predicted", "error")
        fmt = "  %7s %9s %17s %9s %7s"
        if ceiling:
            head += ("ceiling", "model's", "adj. error")
            fmt += " %8s %8s %10s"
        if a.markdown:
            print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        else:
            print(fmt % head)
        mem = cs.workload_mem_demand(work)
        for P in sorted(rows):
            med, lo, hi = rows[P]
            meas = t1 / med
            pred = sim1 / cs.simulate(work, P, c_node=c1, machine="kit", **cs.AS_BUILT)["time_ns"]
            err = 100 * (pred - meas) / meas
            cells = (str(P), f"{meas:.2f}x", f"{t1 / hi:.2f}-{t1 / lo:.2f}x", f"{pred:.2f}x",
                     f"{err:+.1f} %")
            if ceiling:
                cells += ("-", "-", "-")
                if P in ceiling:
                    model = P * c1 / cs.machine_cost(cs.MACHINES["kit"], c1, P, mem)
                    adj = pred * ceiling[P] / model
                    cells = cells[:5] + (f"{ceiling[P]:.2f}x", f"{model:.2f}x",
                                         f"{100 * (adj - meas) / meas:+.1f} %")
            if a.markdown:
                print("| " + " | ".join(cells) + " |")
            else:
                print(fmt % cells)
    if not found:
        raise SystemExit(f"kit_compare: no clove rows of {', '.join(WORKLOADS)} in {a.results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
