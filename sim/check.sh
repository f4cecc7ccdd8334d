#!/bin/sh
# sim/check.sh - smoke test of the scheduler simulator (a few seconds).
# Asserts: 1 worker takes exactly the sequential sum of the node costs;
# no speed-up exceeds the worker count; the busy worker-time covers all the
# work; fractions lie in [0, 1]; the calibrated 2-thread prediction of the
# 1e7-node tree stays within 10 % of the measured time (sim/README.md).
# Usage: sim/check.sh [PYTHON]   (default python3). Exit 0 on success.
set -eu
PY=${1:-python3}
cd "$(dirname "$0")"
exec "$PY" - <<'PYEOF'
import sys
import clovesim as cs
import designs

fail = 0
def check(ok, what):
    global fail
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fail += 1

for spec, c in [("tree:1000000", 2.917), ("tree:1000", 2.83), ("fib:27", 1.755)]:
    w = cs.make_work(spec)
    seq = w.size(w.root) * c
    r1 = cs.simulate(w, 1, c_node=c)
    check(abs(r1["time_ns"] - seq) <= 1e-9 * seq, f"{w.name}: 1 worker = sequential sum ({r1['time_ns']:.1f} ns)")
    for P in (2, 4, 16, 64):
        for kw in ({}, dict(cascade=False), dict(k=2), dict(cascade_owner=True)):
            sim = cs.Sim(w, P, c, **kw)
            r = sim.run()
            sp = r1["time_ns"] / r["time_ns"]
            busy = P * r["time_ns"] * (1 - r["idle_frac"])
            ok = (sp <= P * (1 + 1e-9) and busy >= seq * (1 - 1e-9)
                  and 0 <= r["idle_frac"] <= 1 and 0 <= r["idle_work_frac"] <= 1
                  and r["stats"]["shares"] <= r["stats"]["wakes"] + 1)
            check(ok, f"{w.name}: P={P} {kw or 'default'}: speed-up {sp:.2f} <= {P}, busy covers the work")

m = designs.MEASURED[10000000]
w = cs.TreeSum(10000000)
t2 = cs.simulate(w, 2, c_node=m["clove1"])["time_ns"]
err = (t2 - m["clove2"] * 1e7) / (m["clove2"] * 1e7)
check(abs(err) <= 0.10, f"tree 1e7, 2 threads: predicted {t2 / 1e6:.3f} ms vs measured "
      f"{m['clove2'] * 10:.3f} ms ({100 * err:+.1f} %)")
print("sim/check.sh:", "FAILED" if fail else "passed")
sys.exit(1 if fail else 0)
PYEOF
