#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""trace_stats.py - scheduler timings from a clove trace (CLOVE_TRACE=FILE).

Reads the Chrome-trace JSON that clove writes at clove_pool_destroy and
prints, over every "run" span of the caller (tid 0):
  - run duration,
  - delay from the start of a run to its first "share",
  - share -> job start latency: from a "share" instant to the start of the
    next "job" span on another thread (the woken worker's wake-up, lock and
    ring pop; the simulator's wake latency + take cost),
  - idle periods: the "sleep" spans of the pool's workers (a task with
    nothing to run: watching its sleep word, then asleep) and the "wait"
    spans (a join waiting for a job that runs elsewhere),
  - per run: shares, and the share of the run each thread spent in sleep
    or wait spans (the simulator's "idle" and "shares" columns).

Usage: trace_stats.py TRACE.json [--skip K]   (skip the first K runs: warm-up)
Python 3 standard library only.
"""
import json
import statistics
import sys


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def show(name, v):
    if not v:
        print(f"  {name:34s} (none)")
        return
    print(f"  {name:34s} n={len(v):4d}  p10={pct(v, .1):8.1f}  median={statistics.median(v):8.1f}"
          f"  p90={pct(v, .9):8.1f} us")


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    skip = int(argv[argv.index("--skip") + 1]) if "--skip" in argv else 0
    with open(argv[1]) as f:
        data = json.load(f)
    dropped = sum(e.get("args", {}).get("dropped", 0) for e in data["traceEvents"]
                  if e.get("ph") == "M")
    if dropped:
        print(f"{argv[1]}: WARNING: {dropped} events dropped (a thread's trace buffer was "
              "full): the later runs miss spans; trace fewer runs")
    ev = sorted((e for e in data["traceEvents"] if e.get("ph") != "M"), key=lambda e: e["ts"])
    runs = [e for e in ev if e["name"] == "run" and e["tid"] == 0][skip:]
    nthreads = len({e["tid"] for e in ev})  # the threads seen in the trace
    spans = [e for e in ev if e["name"] in ("sleep", "wait")]
    durs, first, lat, sleeps, waits, nshares, idle = [], [], [], [], [], [], []
    for r in runs:
        t0, t1 = r["ts"], r["ts"] + r["dur"]
        inside = [e for e in ev if t0 <= e["ts"] <= t1 and e["name"] != "run"]
        durs.append(r["dur"])
        shares = [e for e in inside if e["name"] == "share"]
        jobs = [e for e in inside if e["name"] == "job"]
        if shares:
            first.append(shares[0]["ts"] - t0)
        used = set()
        for s in shares:
            cand = [j for j in jobs if j["ts"] >= s["ts"] and j["tid"] != s["tid"] and id(j) not in used]
            if cand:
                used.add(id(cand[0]))
                lat.append(cand[0]["ts"] - s["ts"])
        nshares.append(len(shares))
        for e in inside:
            if e["name"] == "sleep" and e["tid"] != 0:
                sleeps.append(e["dur"])
            elif e["name"] == "wait":
                waits.append(e["dur"])
        # idle time inside the run, also of spans begun before it
        spent = sum(min(e["ts"] + e["dur"], t1) - max(e["ts"], t0)
                    for e in spans if e["ts"] < t1 and e["ts"] + e["dur"] > t0)
        idle.append(100.0 * spent / (r["dur"] * nthreads))
    print(f"{argv[1]}: {len(runs)} runs")
    show("run duration", durs)
    show("run start -> first share", first)
    show("share -> job start (wake+take)", lat)
    show("worker sleep span", sleeps)
    show("join wait span", waits)
    if runs:
        print(f"  {'shares per run':34s} median={statistics.median(nshares):8.1f}  "
              f"min={min(nshares)}  max={max(nshares)}")
        print(f"  {'idle (sleep + wait) per run':34s} median={statistics.median(idle):8.1f} %"
              f"  min={min(idle):.1f} %  max={max(idle):.1f} % of the threads' time")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
