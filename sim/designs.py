#!/usr/bin/env python3
"""designs.py - the validation and design tables of sim/README.md.

  designs.py validate   predicted vs measured time at 1 and 2 threads
  designs.py scaling    the current design at 1..256 workers, every workload
  designs.py compare    16/64/256 workers under each design variant
  designs.py all        all three (default)

Measured figures are those of sim/README.md (section 3); re-measure and
edit MEASURED to re-validate on another machine. Python 3 stdlib only.
"""
import sys

import clovesim as cs

# tree_sum medians over the "quiet" rounds (hand split < 0.75x baseline) of
# 8 processes, ns per node (sim/README.md, section 3)
MEASURED = {
    1000000: dict(base=1.838, split=1.092, clove1=2.917, clove2=1.894),
    10000000: dict(base=2.457, split=1.467, clove1=3.007, clove2=1.662),
}
PS = [1, 2, 4, 16, 64, 256]


def validate():
    print("| tree | measured 1 thr | sim 1 thr | measured 2 thr | sim 2 thr (bandwidth-free) | error | "
          "sim 2 thr (+ split contention) | error |")
    print("|---|---|---|---|---|---|---|---|")
    for n, m in MEASURED.items():
        w = cs.TreeSum(n)
        t1m = m["clove1"] * n
        t2m = m["clove2"] * n
        s1 = cs.simulate(w, 1, c_node=m["clove1"])["time_ns"]
        s2 = cs.simulate(w, 2, c_node=m["clove1"])["time_ns"]
        extra = 2 * m["split"] - m["base"]
        s2c = cs.simulate(w, 2, c_node=m["clove1"], contention_ns=extra)["time_ns"]
        print(f"| 1e{len(str(n)) - 1} | {cs.fmt_time(t1m)} | {cs.fmt_time(s1)} | {cs.fmt_time(t2m)} | "
              f"{cs.fmt_time(s2)} | {100 * (s2 - t2m) / t2m:+.1f} % | {cs.fmt_time(s2c)} "
              f"(+{extra:.3f} ns/node) | {100 * (s2c - t2m) / t2m:+.1f} % |")


def scaling():
    for spec in ["tree:1e3", "tree:1e6", "tree:1e7", "tree:1e8", "fib:32", "fib:40"]:
        w = cs.make_work(spec)
        print(f"\n{w.name} (current design: cascade, k = 1, heartbeat 100 us, wake 10 us)\n")
        cs.table(w, PS, {}, markdown=True)


VARIANTS = [
    ("current: cascade (taker shares at once)", {}),
    ("no cascade (Spice)", dict(cascade=False)),
    ("cascade, k = 2", dict(k=2)),
    ("cascade, k = 4", dict(k=4)),
    ("no cascade, k = 2", dict(cascade=False, k=2)),
    ("cascade + owner re-shares", dict(cascade_owner=True)),
    ("cascade + owner, k = 2", dict(cascade_owner=True, k=2)),
    ("cascade, heartbeat 50 us", dict(heartbeat_us=50)),
    ("cascade, heartbeat 200 us", dict(heartbeat_us=200)),
    ("no cascade, heartbeat 50 us", dict(cascade=False, heartbeat_us=50)),
    ("cascade + owner, heartbeat 50 us", dict(cascade_owner=True, heartbeat_us=50)),
    ("cascade + owner, heartbeat 200 us", dict(cascade_owner=True, heartbeat_us=200)),
    ("cascade, wake 5 us", dict(wake_us=5)),
    ("cascade, wake 30 us", dict(wake_us=30)),
    ("cascade, wake 100 us", dict(wake_us=100)),
    ("no cascade, wake 30 us", dict(cascade=False, wake_us=30)),
    ("no cascade, wake 100 us", dict(cascade=False, wake_us=100)),
    ("cascade + owner, wake 5 us", dict(cascade_owner=True, wake_us=5)),
    ("cascade + owner, wake 30 us", dict(cascade_owner=True, wake_us=30)),
    ("cascade + owner, wake 100 us", dict(cascade_owner=True, wake_us=100)),
    ("cascade + beat on kick", dict(beat_on_kick=True)),
    ("cascade + owner + beat on kick", dict(cascade_owner=True, beat_on_kick=True)),
    ("no cascade + idle request", dict(cascade=False, idle_request=True)),
]


def compare(spec="tree:1e7", ps=(16, 64, 256)):
    w = cs.make_work(spec)
    print(f"\n{w.name}: speed-up over 1 worker / idle while work exists / all busy after "
          f"(heartbeat intervals; '-' never; the first beat comes at 1.37)\n")
    head = " | ".join(f"{p} workers" for p in ps)
    print(f"| design | {head} |")
    print("|---|" + "---|" * len(ps))
    for name, kw in VARIANTS:
        base = cs.simulate(w, 1, **kw)["time_ns"]
        cells = []
        for p in ps:
            r = cs.simulate(w, p, **kw)
            ab = "-" if r["all_busy_hb"] is None else f"{r['all_busy_hb']:.2f}"
            cells.append(f"{base / r['time_ns']:.1f}x / {100 * r['idle_work_frac']:.0f} % / {ab}")
        print(f"| {name} | " + " | ".join(cells) + " |")


def main(argv):
    what = argv[1] if len(argv) > 1 else "all"
    if what in ("validate", "all"):
        validate()
    if what in ("scaling", "all"):
        scaling()
    if what in ("compare", "all"):
        compare("tree:1e7")
        compare("tree:1e8")
        compare("fib:40")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
