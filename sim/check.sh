#!/bin/sh
# SPDX-License-Identifier: MIT
# sim/check.sh - smoke test of the scheduler simulator (a few seconds).
# Asserts: 1 worker takes exactly the sequential sum of the node costs;
# no speed-up exceeds the worker count; the busy worker-time covers all the
# work; fractions lie in [0, 1]; the calibrated 2-thread prediction of the
# 1e7-node tree stays within 10 % of the measured time (sim/README.md).
# Long leaves: the same invariants; with the reserve 2 workers run pair:50
# in <= 60 ms (measured 50.3), without it in 100 ms; the reserve changes
# nothing on tree and fib, and no probe ever steals there; one reserve per
# task (fan:4:10 = 30 ms). Beat on kick and probe: beats are never closer
# than one interval (the beat on kick's limit); pair:50 gets no beat on
# kick (nobody goes idle during the run), so it takes as long as with
# --no-beat-on-kick --probe-div 0, and the rejected --steal-every-beat
# steals at the first beat (<= 50.2 ms); the probe steals on map 256 x 1 ms
# (16 workers). The run-age gate delays the first beat by a quarter
# interval. Wide fan-out (uts-loop 1000): the invariants, and requests
# with batches lift 2 workers from no speed-up to more than 1.25x; the
# variants of sim/fanout.md keep the invariants and lift 16 workers; with
# claims, a runner still asks for one record after a long range. Machine
# model: Spice's c4-standard-16 speed-ups within 15 %; its memory contention
# applies to the tree sum, not to fib or uts-loop. kit_compare.py reads a
# kit run's machine.txt and CSV, and the machine's ceiling from its copies
# rows. Lace's policy (--policy lace): the same
# invariants, and a balanced tree balances.
# Usage: sim/check.sh [PYTHON]   (default python3). Exit 0 on success.
set -eu
PY=${1:-python3}
cd "$(dirname "$0")"
exec "$PY" - <<'PYEOF'
import sys
import clovesim as cs
import designs

H_NS = 100e3   # the default heartbeat interval
fail = 0
def gap_ok(r):
    g = r["min_beat_gap_ns"]
    return g is None or g >= H_NS * (1 - 1e-12)

def check(ok, what):
    global fail
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        fail += 1

probes = 0
for spec, c in [("tree:1000000", 2.917), ("tree:1000", 2.83), ("fib:27", 1.755)]:
    w = cs.make_work(spec)
    seq = w.size(w.root) * c
    r1 = cs.simulate(w, 1, c_node=c)
    check(abs(r1["time_ns"] - seq) <= 1e-9 * seq, f"{w.name}: 1 worker = sequential sum ({r1['time_ns']:.1f} ns)")
    for P in (2, 4, 16, 64):
        for kw in ({}, dict(cascade=False), dict(k=2), designs.OLD, designs.SEC6, designs.REJECTED):
            sim = cs.Sim(w, P, c, **kw)
            r = sim.run()
            sp = r1["time_ns"] / r["time_ns"]
            busy = P * r["time_ns"] * (1 - r["idle_frac"])
            ok = (sp <= P * (1 + 1e-9) and busy >= seq * (1 - 1e-9)
                  and 0 <= r["idle_frac"] <= 1 and 0 <= r["idle_work_frac"] <= 1
                  and r["stats"]["shares"] + r["stats"]["steals"] <= r["stats"]["wakes"] + 1
                  and gap_ok(r) and r["stats"]["probe_steals"] == 0)
            probes += r["stats"]["probes"]
            check(ok, f"{w.name}: P={P} {kw or 'default'}: speed-up {sp:.2f} <= {P}, busy covers the work")
check(probes > 0, f"tree and fib: {probes} probe passes, none of them stole (every task answers "
      f"within 2 nodes)")

# long leaves: invariants, with and without the reserve
for spec in ("pair:50", "rounds:10:5", "map:64:1", "imap:64:1:3", "fan:4:10"):
    w = cs.make_work(spec)
    seq = w.size(w.root)
    r1 = cs.simulate(w, 1)
    check(abs(r1["time_ns"] - seq) <= 1e-9 * seq, f"{w.name}: 1 worker = sequential sum ({r1['time_ns'] / 1e6:.3f} ms)")
    for P in (2, 16):
        for kw in ({}, dict(reserve=False), dict(reserves=4), dict(cascade=False), designs.SEC6,
                   dict(probe_div=0), designs.REJECTED, dict(designs.REJECTED, share_after_steal=False)):
            r = cs.simulate(w, P, **kw)
            sp = r1["time_ns"] / r["time_ns"]
            busy = P * r["time_ns"] * (1 - r["idle_frac"])
            ok = (sp <= P * (1 + 1e-9) and busy >= seq * (1 - 1e-9)
                  and 0 <= r["idle_frac"] <= 1 and 0 <= r["idle_work_frac"] <= 1
                  and r["stats"]["shares"] + r["stats"]["steals"] <= r["stats"]["wakes"] + 1
                  and (r["stats"]["steals"] == 0 or kw.get("reserve", True)) and gap_ok(r))
            check(ok, f"{w.name}: P={P} {kw or 'default'}: speed-up {sp:.2f} <= {P}, busy covers the work")

pair = cs.make_work("pair:50")
t_res = cs.simulate(pair, 2)["time_ns"] / 1e6
t_nores = cs.simulate(pair, 2, reserve=False)["time_ns"] / 1e6
check(t_res <= 60.0, f"pair 50 ms, 2 workers, reserve: {t_res:.3f} ms <= 60 ms (measured 50.3)")
check(abs(t_nores - 100.0) < 1e-3, f"pair 50 ms, 2 workers, no reserve: {t_nores:.3f} ms = 100 ms")
t_old = cs.simulate(pair, 2, **designs.SEC6)["time_ns"] / 1e6
t_every = cs.simulate(pair, 2, **designs.REJECTED)["time_ns"] / 1e6
check(t_res == t_old and t_every <= 50.2, f"pair 50 ms, 2 workers: no beat on kick, as with "
      f"--no-beat-on-kick --probe-div 0 ({t_res:.3f} ms "
      f"= {t_old:.3f} ms); rejected steal at every beat: at the first beat ({t_every:.3f} ms <= 50.2 ms)")
rounds = cs.make_work("rounds:10:5")
t_res = cs.simulate(rounds, 2)["time_ns"] / 1e6
check(t_res <= 60.0, f"rounds 10 x 5 ms, 2 workers, reserve: {t_res:.3f} ms <= 60 ms (measured 51.9)")
fan = cs.make_work("fan:4:10")
t_fan = cs.simulate(fan, 16)["time_ns"] / 1e6
check(abs(t_fan - 30.0) < 0.5, f"fan 4 x 10 ms, 16 workers: {t_fan:.3f} ms = 30 ms (one reserve per task)")
mp = cs.make_work("map:256:1")
a, b = (cs.simulate(mp, 16, reserve=r)["time_ns"] for r in (False, True))
check(b < a, f"map 256 x 1 ms, 16 workers: reserve {b / 1e6:.3f} ms < no reserve {a / 1e6:.3f} ms")
st, st0 = (cs.simulate(mp, 16, **kw)["stats"] for kw in ({}, dict(probe_div=0)))
check(st["probe_steals"] > 0 and st["probes"] <= st["kick_beats"] and st0["probes"] == 0,
      f"map 256 x 1 ms, 16 workers: {st['probe_steals']} steals at {st['probes']} probes after "
      f"{st['kick_beats']} beats on kick; none with --probe-div 0")
for spec, c, P in (("tree:1000000", 2.917, 16), ("fib:27", 1.755, 64)):
    w = cs.make_work(spec)
    for kw, tag in (({}, "defaults"), (designs.SEC6, "--no-beat-on-kick --probe-div 0")):
        a = cs.simulate(w, P, c_node=c, reserve=False, **kw)
        b = cs.simulate(w, P, c_node=c, **kw)
        check(a["time_ns"] == b["time_ns"] and b["stats"]["steals"] == 0,
              f"{w.name}, {P} workers, {tag}: the reserve changes nothing "
              f"({b['stats']['steals']} steals, {b['stats']['probes']} probes)")
# The run-age gate (src/heartbeat.c HB_RUN_AGE_DIV): with the heartbeat thread
# awake, the pass that first finds the run skips it, and a gate pass a
# quarter interval later beats it: the first steal comes a quarter
# interval later than without the gate, whatever the phase.
pair = cs.make_work("pair:50")
def first_steal_ms(**kw):
    return cs.simulate(pair, 2, **kw)["time_ns"] / 1e6
g10, n10 = first_steal_ms(hb_phase_us=10), first_steal_ms(hb_phase_us=10, run_age_div=0)
g50, n50 = first_steal_ms(hb_phase_us=50), first_steal_ms(hb_phase_us=50, run_age_div=0)
check(abs(g10 - n10 - 0.025) < 0.005 and abs(g50 - n50 - 0.025) < 0.005,
      f"pair 50 ms, 2 workers, heartbeat thread awake: phase 10 us {g10:.3f} ms gated vs "
      f"{n10:.3f} ms not; phase 50 us {g50:.3f} vs {n50:.3f} ms")

# Wide fan-out (uts-loop, the loop-of-forks shape): the invariants, and the
# request with its batches: at 2 workers without requests the second worker
# gets one leaf a beat (no speed-up); with them it runs batches.
w = cs.make_work("uts:1000")
seq = w.size(w.root) * 5.0
for P in (2, 16):
    for kw in ({}, dict(request=False), dict(adaptive=False, batch=4)):
        r = cs.simulate(w, P, c_node=5.0, **kw)
        busy = P * r["time_ns"] * (1 - r["idle_frac"])
        check(seq / r["time_ns"] <= P * (1 + 1e-9) and busy >= seq * (1 - 1e-9)
              and r["stats"]["shares"] + r["stats"]["steals"] <= r["stats"]["wakes"] + 1
              and (r["stats"]["batches"] == 0) == (not kw.get("request", True)),
              f"{w.name}: P={P} {kw or 'default'}: speed-up {seq / r['time_ns']:.2f}, "
              f"{r['stats']['batches']} batches, busy covers the work")
a, b = (seq / cs.simulate(w, 2, c_node=5.0, request=q)["time_ns"] for q in (False, True))
check(a < 1.05 and b > 1.25, f"{w.name}, 2 workers: {a:.2f}x without requests, {b:.2f}x with")

# Wide fan-out designs (sim/fanout.md): per-member claims, spinning idle
# tasks, direct requests (also only by free workers, and without the
# handoff) and self-help keep the invariants, every reserve
# steal included, on uts-loop, trees and long leaves; together they lift
# uts-loop 1000 on 16 workers well above the defaults; pair 50 ms is
# unchanged.
D = dict(claims=True, spin_us=100, direct=True, self_help=True)
for spec, c in (("uts:1000", 5.0), ("tree:1000000", 2.917), ("fib:27", 1.755), ("map:64:1", 1.0)):
    w = cs.make_work(spec)
    seq = w.size(w.root) * c
    for P in (2, 16):
        for kw in (dict(claims=True), dict(claims=True, spin_us=100), D,
                   dict(claims=True, spin_us=100, direct=True, direct_joiners=False),
                   dict(claims=True, spin_us=100, direct=True, direct_joiners=False,
                        handoff=False)):
            r = cs.simulate(w, P, c_node=c, **kw)
            busy = P * r["time_ns"] * (1 - r["idle_frac"])
            check(seq / r["time_ns"] <= P * (1 + 1e-9) and busy >= seq * (1 - 1e-9)
                  and 0 <= r["idle_work_frac"] <= 1 and gap_ok(r),
                  f"{w.name}: P={P} {kw}: speed-up {seq / r['time_ns']:.2f}, busy covers the work")
w = cs.make_work("uts:1000")
a, b = (5.0 * w.size(w.root) / cs.simulate(w, 16, c_node=5.0, **kw)["time_ns"] for kw in ({}, D))
check(b > 1.5 * a, f"{w.name}, 16 workers: {a:.2f}x with the defaults, {b:.2f}x with claims, "
      f"spin, direct requests and self-help")
# src/ as built (claims and the watch): a runner that finished a long range
# asks its owner for one record when nobody else is idle (--request-one),
# as after a single share: more requests and less idle than without.
r1, r0 = (cs.simulate(w, 2, c_node=5.0, claims=True, spin_us=100, request_one=q) for q in (True, False))
check(r1["stats"]["requests"] > r0["stats"]["requests"] and r1["idle_frac"] < r0["idle_frac"],
      f"{w.name}, 2 workers, claims and spin: {r1['stats']['requests']} requests and "
      f"{100 * r1['idle_frac']:.1f} % idle with --request-one, {r0['stats']['requests']} and "
      f"{100 * r0['idle_frac']:.1f} % without")
t_d = cs.simulate(cs.make_work("pair:50"), 2, **D)["time_ns"] / 1e6
t_0 = cs.simulate(cs.make_work("pair:50"), 2)["time_ns"] / 1e6
check(abs(t_d - t_0) < 1e-6 * t_0, f"pair 50 ms, 2 workers: {t_d:.3f} ms with the fan-out designs = {t_0:.3f} ms")

# Machine model (README, "Machines and policies"): Spice's published speed-ups
# on c4-standard-16, tree 1e8, within 15 %.
w = cs.make_work("tree:1e8")
spice = dict(c_node=3.93, machine="c4-standard-16", policy="spice")
t1 = cs.simulate(w, 1, **spice)["time_ns"]
for P, pub in ((2, 1.96), (4, 3.64), (8, 6.55), (16, 10.9)):
    sp = t1 / cs.simulate(w, P, **spice)["time_ns"]
    check(abs(sp - pub) <= 0.15 * pub, f"spice on c4-standard-16, tree 1e8, {P} threads: "
          f"{sp:.2f}x vs published {pub}x ({100 * (sp - pub) / pub:+.1f} %)")

# The machine's memory contention scales with the workload's demand: none
# for fib and uts-loop (hyperthreads alone: 8 cores + 0.68 x 8 at 16
# threads), the fitted one for the tree sum.
m = cs.MACHINES["c4-standard-16"]
c16 = cs.machine_cost(m, 5.0, 16, 0.0)
check(abs(5.0 * 16 / c16 - (8 + 0.68 * 8)) < 1e-9, f"c4-standard-16, no memory demand: 16 threads "
      f"give {5.0 * 16 / c16:.2f} cores' worth (8 + 0.68 x 8)")
check(cs.machine_cost(m, 5.0, 16, 1.0) > c16, "c4-standard-16: the tree's contention slows a node")
check(cs.workload_mem_demand(cs.make_work("uts:10")) == 0.0 and
      cs.workload_mem_demand(cs.make_work("fib:10")) == 0.0 and
      cs.workload_mem_demand(cs.make_work("tree:1000")) == 1.0,
      "memory demand: uts-loop and fib 0, the tree sum 1")

# kit_compare.py reads a kit run: the machine from machine.txt's lscpu
# lines, clove's rows of a CSV; 1 thread is 1.00x both ways, and a
# measured 2-thread median of half the 1-thread one is 2.00x.
import contextlib, io, os, tempfile
import kit_compare

def compare(folder, rows):
    """Append rows to folder's fib.csv, run kit_compare on folder: (rc, output)."""
    with open(os.path.join(folder, "fib.csv"), "a") as f:
        f.write(rows)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = kit_compare.main([folder])
    return rc, out.getvalue()

with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "machine.txt"), "w") as f:
        f.write("cpus (nproc): 32\nlscpu:\nThread(s) per core:   2\nCore(s) per socket:   8\nSocket(s):   2\n")
    rc, text = compare(d, "workload,impl,threads,median,min,max,n,samples,heartbeat_us,unit\n"
                          "fib,baseline,1,0.4,0.4,0.4,22,5,0,ns_per_call\n"
                          "fib,clove,1,1.8,1.7,1.9,22,5,100,ns_per_call\n"
                          "fib,clove,2,0.9,0.85,0.95,22,5,100,ns_per_call\n")
    ok = (rc == 0 and "16 cores x 2 hyperthreads" in text and "fib 22" in text and
          "ns per call" in text and "  1     1.00x" in text and "  2     2.00x" in text)
    check(ok and "ceiling" not in text,
          "kit_compare: a 2-socket machine.txt and fib.csv read back" + ("" if ok else "\n" + text))
    # copies rows (the baseline on k threads at once): the measured ceiling
    # is copies at 1 over copies at k; the model's, for fib (no memory
    # demand) on 16 cores x 2, is 16 at 16 threads and 16 + 0.68 x 16 at
    # 32; a clove row without copies at its count gets dashes.
    rc, text = compare(d, "fib,copies,1,0.42,0.4,0.5,22,5,0,ns_per_call\n"
                          "fib,copies,16,0.03,0.03,0.03,22,5,0,ns_per_call\n"
                          "fib,copies,32,0.021,0.02,0.03,22,5,0,ns_per_call\n"
                          "fib,clove,16,0.15,0.14,0.16,22,5,100,ns_per_call\n"
                          "fib,clove,32,0.12,0.11,0.13,22,5,100,ns_per_call\n")
    rows = {ln.split()[0]: ln.split() for ln in text.splitlines() if ln[:9].strip().isdigit()}
    # the columns split at blanks: threads, measured, range, predicted,
    # error and its %, ceiling, model's, adj. error and its %
    ok = (rc == 0 and rows.get("16", [])[6:8] == ["14.00x", "16.00x"] and
          rows.get("32", [])[6:8] == ["20.00x", "26.88x"] and rows.get("2", [])[6:9] == ["-"] * 3)
    if ok:  # adj. error: the prediction scaled by ceiling / model, against the measured
        pred, meas = float(rows["16"][3][:-1]), float(rows["16"][1][:-1])
        ok = abs(float(rows["16"][8]) - 100 * (pred * 14 / 16 - meas) / meas) < 0.2
    check(ok, "kit_compare: copies rows give the measured and the model's ceiling" +
          ("" if ok else "\n" + text))
    # the large tree's parts rows are read as its ceiling the same way
    with open(os.path.join(d, "tree_sum_large.csv"), "w") as f:
        f.write("workload,impl,threads,median,min,max,n,samples,heartbeat_us,unit\n"
                "tree_sum,baseline,1,3.0,3.0,3.0,100000,5,0,ns_per_node\n"
                "tree_sum,parts,1,3.0,3.0,3.0,100000,5,0,ns_per_node\n"
                "tree_sum,parts,2,1.6,1.6,1.6,100000,5,0,ns_per_node\n"
                "tree_sum,clove,1,3.3,3.3,3.3,100000,5,100,ns_per_node\n"
                "tree_sum,clove,2,1.8,1.8,1.8,100000,5,100,ns_per_node\n")
    rc, text = compare(d, "")
    tree = text[text.index("tree_sum_large"):text.index("fib (")] if "tree_sum_large" in text else ""
    ok = rc == 0 and "    1.88x" in tree and "ceiling" in tree
    check(ok, "kit_compare: the tree's parts rows give its ceiling" + ("" if ok else "\n" + text))

# --policy lace (sim/lacesim.py): work stealing, node by node. 1 worker is
# the sequential sum; no speed-up exceeds the worker count and the busy
# worker-time covers the work; thieves steal; a balanced tree balances.
for spec, c in [("tree:100000", 2.917), ("fib:22", 1.755), ("uts:300", 5.0)]:
    w = cs.make_work(spec)
    seq = w.size(w.root) * c
    r1 = cs.simulate(w, 1, c_node=c, policy="lace")
    check(abs(r1["time_ns"] - seq) <= 1e-9 * seq,
          f"lace, {w.name}: 1 worker = sequential sum ({r1['time_ns']:.1f} ns)")
    for P in (2, 16, 64):
        for kw in ({}, dict(leap_random=False)):
            r = cs.simulate(w, P, c_node=c, policy="lace", **kw)
            sp = r1["time_ns"] / r["time_ns"]
            busy = P * r["time_ns"] * (1 - r["idle_frac"])
            check(sp <= P * (1 + 1e-9) and busy >= seq * (1 - 1e-9) and 0 <= r["idle_frac"] <= 1
                  and r["stats"]["steals"] > 0,
                  f"lace, {w.name}: P={P} {kw or 'default'}: speed-up {sp:.2f} <= {P}, busy "
                  f"covers the work, {r['stats']['steals']} steals")
w = cs.make_work("tree:1000000")
sp = cs.simulate(w, 1, c_node=2.917, policy="lace")["time_ns"] / \
    cs.simulate(w, 16, c_node=2.917, policy="lace")["time_ns"]
check(sp >= 12, f"lace, tree 1e6, 16 workers: {sp:.2f}x >= 12x")

m = designs.MEASURED[10000000]
w = cs.TreeSum(10000000)
t2 = cs.simulate(w, 2, c_node=m["clove1"])["time_ns"]
err = (t2 - m["clove2"] * 1e7) / (m["clove2"] * 1e7)
check(abs(err) <= 0.10, f"tree 1e7, 2 threads: predicted {t2 / 1e6:.3f} ms vs measured "
      f"{m['clove2'] * 10:.3f} ms ({100 * err:+.1f} %)")
print("sim/check.sh:", "FAILED" if fail else "passed")
sys.exit(1 if fail else 0)
PYEOF
