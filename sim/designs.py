#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""designs.py - the validation and design tables of sim/README.md.

  designs.py validate   predicted vs measured time at 1 and 2 threads
  designs.py scaling    the taker-only cascade at 1..256 workers, every workload
  designs.py compare    16/64/256 workers under each design variant
  designs.py longleaf   long leaves and the reserve: validation, predictions,
                        the reserve on tree/fib, what-if variants
                        ("Validation", "What it predicts")
  designs.py rules      (i) --no-beat-on-kick --probe-div 0, (ii) the defaults
                        (beat on kick + probe), (iii) the rejected
                        --steal-every-beat --probe-div 0 ("What it predicts")
  designs.py rejected   the evidence against (iii): its full tables
                        ("Decisions")
  designs.py all        all six (default)
  designs.py fanout     wide fan-out (uts-loop 10000) under the sharing designs
                        of sim/fanout.md, their effect on the other workloads,
                        and where the worker-time goes (a few minutes; not in
                        all)
  designs.py sizes      uts-loop by tree size (b0 10000 to 100000), clove as
                        built and Lace's policy (to b0 30000), 2 to 256 workers
                        (sim/fanout.md, "By tree size"; about 25 minutes; not
                        in all)

Quoted section names are those of sim/README.md. Measured figures are
those of its "Calibration"; re-measure and edit MEASURED to re-validate on
another machine. Python 3 stdlib only.
"""
import sys

import clovesim as cs

# tree_sum medians over the "quiet" rounds (hand split < 0.75x baseline) of
# 8 processes, ns per node (sim/README.md, "Calibration"), measured with the
# code before f1f2033: the taker-only cascade and no reserve (OLD below)
MEASURED = {
    1000000: dict(base=1.838, split=1.092, clove1=2.917, clove2=1.894),
    10000000: dict(base=2.457, split=1.467, clove1=3.007, clove2=1.662),
}
PS = [1, 2, 4, 16, 64, 256]

# OLD, the rules of the tree-sum validation and of the scaling and compare
# tables: the taker-only cascade and no reserve (--no-cascade-owner
# --no-reserve), no beat on kick and no probe (--no-beat-on-kick
# --probe-div 0). OLD, SEC6 and REJECTED also leave out the run-age gate
# (--run-age-div 0), which changes only runs started with the heartbeat
# thread awake (--hb-phase-us, warm_mean) at a phase under interval/4.
OLD = dict(cascade_owner=False, reserve=False, beat_on_kick=False, probe_div=0, run_age_div=0,
           request=False, batch=1)
# SEC6, the rules of the code of 3063e81, for the long-leaf tables and
# column (i) of the rules and rejected tables: the reserve stolen only from
# a task that left a whole interval unanswered (the default rule), no beat
# on kick, no probe (--no-beat-on-kick --probe-div 0 --run-age-div 0). The
# "unlimited beat on kick" rows add beat_on_kick="now": a beat on kick with
# no one-interval limit, without a probe.
SEC6 = dict(beat_on_kick=False, probe_div=0, run_age_div=0, request=False, batch=1)
# REJECTED, the rejected alternative (--steal-every-beat --probe-div 0
# --run-age-div 0): every beat steals every busy task's reserve; beat on
# kick, no probe.
REJECTED = dict(steal_every_beat=True, probe_div=0, run_age_div=0, request=False, batch=1)


def old(kw=None):
    return {**OLD, **(kw or {})}


def validate():
    print("| tree | measured 1 thr | sim 1 thr | measured 2 thr | sim 2 thr (bandwidth-free) | error | "
          "sim 2 thr (+ split contention) | error |")
    print("|---|---|---|---|---|---|---|---|")
    for n, m in MEASURED.items():
        w = cs.TreeSum(n)
        t1m = m["clove1"] * n
        t2m = m["clove2"] * n
        s1 = cs.simulate(w, 1, c_node=m["clove1"], **OLD)["time_ns"]
        s2 = cs.simulate(w, 2, c_node=m["clove1"], **OLD)["time_ns"]
        extra = 2 * m["split"] - m["base"]
        s2c = cs.simulate(w, 2, c_node=m["clove1"], contention_ns=extra, **OLD)["time_ns"]
        print(f"| 1e{len(str(n)) - 1} | {cs.fmt_time(t1m)} | {cs.fmt_time(s1)} | {cs.fmt_time(t2m)} | "
              f"{cs.fmt_time(s2)} | {100 * (s2 - t2m) / t2m:+.1f} % | {cs.fmt_time(s2c)} "
              f"(+{extra:.3f} ns/node) | {100 * (s2c - t2m) / t2m:+.1f} % |")


def scaling():
    for spec in ["tree:1e3", "tree:1e6", "tree:1e7", "tree:1e8", "fib:32", "fib:40"]:
        w = cs.make_work(spec)
        print(f"\n{w.name} (taker-only cascade, no reserve; k = 1, heartbeat 100 us, wake 10 us)\n")
        cs.table(w, PS, old(), markdown=True)


VARIANTS = [
    ("taker-only cascade (--no-cascade-owner)", {}),
    ("no cascade (Spice)", dict(cascade=False)),
    ("cascade, k = 2", dict(k=2)),
    ("cascade, k = 4", dict(k=4)),
    ("no cascade, k = 2", dict(cascade=False, k=2)),
    ("cascade + owner re-shares (--cascade-owner)", dict(cascade_owner=True)),
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
    ("cascade + unlimited beat on kick", dict(beat_on_kick="now")),
    ("cascade + owner + unlimited beat on kick", dict(cascade_owner=True, beat_on_kick="now")),
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
        kw = old(kw)
        base = cs.simulate(w, 1, **kw)["time_ns"]
        cells = []
        for p in ps:
            r = cs.simulate(w, p, **kw)
            ab = "-" if r["all_busy_hb"] is None else f"{r['all_busy_hb']:.2f}"
            cells.append(f"{base / r['time_ns']:.1f}x / {100 * r['idle_work_frac']:.0f} % / {ab}")
        print(f"| {name} | " + " | ".join(cells) + " |")


# --------------------------------------------------------------------------
# Long leaves and the reserve ("Validation" and "What it predicts" in
# sim/README.md), under SEC6: cascade with owner re-share and the reserve,
# no beat on kick, no probe
# --------------------------------------------------------------------------

# bench/longleaf, medians in ms. "commit": the figures quoted when the
# reserve was committed (quiet machine). "3063e81": this page's runs of the
# committed tree (git archive HEAD, Release build), 10 batches taken only
# while no other CPU-heavy process ran; each batch is one longleaf process
# (-t 1 -t 2, 7 runs each, 21 for the 1 ms pair); the figure is the median
# of the 10 batch medians; stolen / shared are per run (clove_pool_stats).
LONGLEAF_MEASURED = [
    # (workload, source, 1 thread, 2 threads, stolen per run, shared per run)
    ("pair:50", "commit", 100.0, 50.3, None, None),
    ("rounds:10:5", "commit", 100.0, 52.0, None, None),
    ("pair:50", "3063e81", 100.002, 50.311, 1.00, 0.00),
    ("pair:10", "3063e81", 20.001, 10.304, 1.00, 0.00),
    ("pair:1", "3063e81", 2.000, 1.284, 0.88, 0.00),
    ("rounds:10:5", "3063e81", 100.005, 51.878, 5.20, 4.80),
    ("rounds:20:0.5", "3063e81", 20.009, 13.726, 10.53, 9.44),
    ("rounds:10:0.1", "3063e81", 2.004, 1.841, 0.00, 5.77),
]
PHASES = [i * 127.0 / 8 + 127.0 / 16 for i in range(8)]   # heartbeat thread awake: first beat phases


def warm_mean(w, P, **kw):
    """Mean time over first-beat phases when the heartbeat thread is still
    awake from the previous run (back-to-back runs in one pool)."""
    return sum(cs.simulate(w, P, hb_phase_us=ph, **kw)["time_ns"] for ph in PHASES) / len(PHASES)


def longleaf_validate():
    print("| workload | measured | 1 thr: measured / sim | 2 thr: measured | sim, heartbeat thread asleep "
          "at start | error | sim, awake (mean over phase) | error | stolen + shared per run: measured "
          "/ sim | sim, no reserve |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for spec, src, m1, m2, stolen, shared in LONGLEAF_MEASURED:
        w = cs.make_work(spec)
        s1 = cs.simulate(w, 1, **SEC6)["time_ns"] / 1e6
        r2 = cs.simulate(w, 2, **SEC6)
        s2 = r2["time_ns"] / 1e6
        s2w = warm_mean(w, 2, **SEC6) / 1e6
        s2n = cs.simulate(w, 2, reserve=False, **SEC6)["time_ns"] / 1e6
        counts = "-" if stolen is None else f"{stolen:.2f} + {shared:.2f}"
        counts += f" / {r2['stats']['steals']} + {r2['stats']['shares']}"
        print(f"| {w.name} | {src} | {m1:.3f} / {s1:.3f} ms | {m2:g} ms | "
              f"{s2:.3f} ms | {100 * (s2 - m2) / m2:+.1f} % | {s2w:.3f} ms | {100 * (s2w - m2) / m2:+.1f} % | "
              f"{counts} | {s2n:.3f} ms |")


SEEDS = 5   # the irregular map: each figure is a mean over seeds 1..SEEDS
LL_WORK = ["pair:50", "rounds:10:5", "map:256:1", "imap:256:1", "tmap:256:1", "map:1024:250us",
           "fan:4:10"]


def specs_of(spec):
    if spec.startswith("imap:") and spec.count(":") == 2:
        return [f"{spec}:{k}" for k in range(1, SEEDS + 1)]
    return [spec]


def run_mean(spec, p, **kw):
    """(time, speed-up, idle while work exists, steals), means over the
    seeds of an irregular map, else of the one workload."""
    rows = []
    for sp in specs_of(spec):
        w = cs.make_work(sp)
        seq = cs.simulate(w, 1)["time_ns"]
        r = cs.simulate(w, p, **kw)
        rows.append((r["time_ns"], seq / r["time_ns"], r["idle_work_frac"], r["stats"]["steals"],
                     r["stats"]["shares"]))
    n = len(rows)
    return tuple(sum(x[i] for x in rows) / n for i in range(5))


def ll_name(spec):
    name = cs.make_work(specs_of(spec)[0]).name
    if len(specs_of(spec)) > 1:
        name = name.replace("seed 1", f"mean of seeds 1-{SEEDS}")
    return name


def longleaf_predict(ps=(2, 16, 64)):
    print("| workload | workers | no reserve: time / speed-up / idle while work exists "
          "| reserve: time / speed-up / idle while work exists | steals | reserve gain |")
    print("|---|---|---|---|---|---|")
    for spec in LL_WORK:
        name = ll_name(spec)
        for p in ps:
            a = run_mean(spec, p, reserve=False, **SEC6)
            b = run_mean(spec, p, **SEC6)
            cell = lambda r: f"{cs.fmt_time(r[0])} / {r[1]:.2f}x / {100 * r[2]:.0f} %"
            print(f"| {name} | {p} | {cell(a)} | {cell(b)} | {b[3]:.0f} | {a[0] / b[0]:.2f}x |")


def reserve_neutral(specs=("tree:1e6", "tree:1e7", "tree:1e8", "fib:32", "fib:40"),
                    ps=(2, 4, 16, 64, 256)):
    print("| workload | " + " | ".join(f"{p} workers" for p in ps) + " |")
    print("|---|" + "---|" * len(ps))
    for spec in specs:
        w = cs.make_work(spec)
        base = cs.simulate(w, 1)["time_ns"]
        cells = []
        for p in ps:
            a = cs.simulate(w, p, reserve=False, **SEC6)
            b = cs.simulate(w, p, **SEC6)
            same = "same" if a["time_ns"] == b["time_ns"] else f"{100 * (b['time_ns'] / a['time_ns'] - 1):+.2f} %"
            cells.append(f"{base / b['time_ns']:.1f}x, {same}, {b['stats']['steals']} steals")
        print(f"| {w.name} | " + " | ".join(cells) + " |")


LL_VARIANTS = [
    ("no reserve", dict(reserve=False)),
    ("reserve (src/)", {}),
    ("reserve, no owner re-share", dict(cascade_owner=False)),
    ("reserve, heartbeat 50 us", dict(heartbeat_us=50)),
    ("reserve, wake 30 us", dict(wake_us=30)),
    ("reserve, no limit of 16 wakes per beat", dict(hb_wake_batch=10 ** 6)),
    ("reserve + unlimited beat on kick, no probe", dict(beat_on_kick="now")),
    ("what-if: clove_join ticks", dict(join_ticks=True)),
    ("what-if: 2 reserves per task", dict(reserves=2)),
    ("what-if: 2 reserves + join ticks", dict(reserves=2, join_ticks=True)),
    ("what-if: 4 reserves per task", dict(reserves=4)),
    ("what-if: unlimited reserves", dict(reserves=10 ** 6)),
]


def longleaf_variants(specs=("map:256:1", "imap:256:1", "map:1024:250us", "fan:4:10", "fan:16:10"),
                      ps=(2, 16, 64)):
    for spec in specs:
        print(f"\n{ll_name(spec)}: speed-up / idle while work exists\n")
        print("| design | " + " | ".join(f"{p} workers" for p in ps) + " |")
        print("|---|" + "---|" * len(ps))
        for name, kw in LL_VARIANTS:
            cells = []
            for p in ps:
                r = run_mean(spec, p, **{**SEC6, **kw})
                cells.append(f"{r[1]:.2f}x / {100 * r[2]:.0f} %")
            print(f"| {name} | " + " | ".join(cells) + " |")


def longleaf():
    print("\n### Validation (1 and 2 threads)\n")
    longleaf_validate()
    print("\n### Predictions\n")
    longleaf_predict()
    print("\n### The reserve on tree and fib (speed-up with the reserve; change against no reserve)\n")
    reserve_neutral()
    print("\n### Variants\n")
    longleaf_variants()


# --------------------------------------------------------------------------
# The defaults against the alternatives ("What it predicts" in
# sim/README.md): (i) SEC6, --no-beat-on-kick --probe-div 0; (ii) the
# defaults: steal only from the unanswered, beat on kick, probe at
# interval/8; (iii) REJECTED, --steal-every-beat --probe-div 0
# --------------------------------------------------------------------------
RULES = [("(i) --no-beat-on-kick --probe-div 0", SEC6), ("(ii) defaults", {}),
         ("(iii) --steal-every-beat --probe-div 0", REJECTED)]
RULES_WORK = [("tree:1e7", (2, 16, 64)), ("fib:40", (64,)), ("pair:50", (2, 16)),
              ("rounds:10:5", (2, 16)), ("map:256:1", (16, 64))]


def rules_validate():
    print("| tree, 2 threads | measured | " + " | ".join(f"sim {n}" for n, _ in RULES) + " |")
    print("|---|---|" + "---|" * len(RULES))
    m = MEASURED[10000000]
    w = cs.TreeSum(10000000)
    t2m = m["clove2"] * 1e7
    extra = 2 * m["split"] - m["base"]
    for cont, tag in ((0.0, ""), (extra, f" + contention {extra:.3f} ns/node")):
        cells = []
        for _, kw in RULES:
            t = cs.simulate(w, 2, c_node=m["clove1"], contention_ns=cont, **kw)["time_ns"]
            cells.append(f"{cs.fmt_time(t)} ({100 * (t - t2m) / t2m:+.1f} %)")
        print(f"| {w.name}{tag} | {cs.fmt_time(t2m)} | " + " | ".join(cells) + " |")


def rules_predict(probe_col=True):
    cols = RULES + ([("(ii) --probe-div 0", dict(probe_div=0))] if probe_col else [])
    print("| workload | workers | " + " | ".join(n for n, _ in cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for spec, ps in RULES_WORK:
        w = cs.make_work(spec)
        seq = cs.simulate(w, 1)["time_ns"]
        for p in ps:
            cells = []
            for _, kw in cols:
                r = cs.simulate(w, p, **kw)
                st = r["stats"]
                probe = f" ({st['probe_steals']} at a probe)" if st["probe_steals"] else ""
                cells.append(f"{cs.fmt_time(r['time_ns'])} / {seq / r['time_ns']:.2f}x / "
                             f"{st['steals']}{probe} + {st['shares']}")
            print(f"| {w.name} | {p} | " + " | ".join(cells) + " |")


def rules():
    print("\n### Validation (2 threads; measured 16.620 ms with the code before f1f2033: "
          "no owner re-share, no reserve)\n")
    rules_validate()
    print("\n### Predictions: time / speed-up / steals + shares\n")
    rules_predict()


# The evidence against (iii) ("Decisions" in sim/README.md): (iii) against
# (i), with what-if variants of (iii).
REJ_STEAL_ONLY = dict(REJECTED, beat_on_kick=False)      # its steal rule without the beat on kick
REJ_WHATIF = dict(REJECTED, share_after_steal=False)     # what-if: a steal does not make the owner share too
REJ_WORK = [("tree:1e7", (2, 16, 64, 256)), ("tree:1e8", (16, 64)), ("fib:40", (16, 64)),
            ("pair:50", (2, 16, 64)), ("rounds:10:5", (2, 16, 64)), ("map:256:1", (2, 16, 64)),
            ("imap:256:1", (2, 16, 64)), ("tmap:256:1", (16, 64)), ("map:1024:250us", (16, 64)),
            ("fan:4:10", (2, 16))]
REJ_WHATIFS = [
    ("(i) --no-beat-on-kick --probe-div 0", SEC6),
    ("(iii) --steal-every-beat --probe-div 0", REJECTED),
    ("(iii), what-if: no share after a steal", REJ_WHATIF),
    ("(iii), what-if: no limit of 16 steals per beat", dict(REJECTED, hb_wake_batch=10 ** 6)),
    ("(iii), what-if: both", dict(REJ_WHATIF, hb_wake_batch=10 ** 6)),
]


def rejected_validate():
    print("| workload, 2 threads | measured | sim, (i) | error | sim, (iii) | error |")
    print("|---|---|---|---|---|---|")
    for n, m in MEASURED.items():
        w = cs.TreeSum(n)
        t2m = m["clove2"] * n
        extra = 2 * m["split"] - m["base"]
        for cont, tag in ((0.0, ""), (extra, f" + contention {extra:.3f} ns/node")):
            a = cs.simulate(w, 2, c_node=m["clove1"], contention_ns=cont, **SEC6)["time_ns"]
            b = cs.simulate(w, 2, c_node=m["clove1"], contention_ns=cont, **REJECTED)["time_ns"]
            print(f"| {w.name}{tag} | {cs.fmt_time(t2m)} | {cs.fmt_time(a)} | {100 * (a - t2m) / t2m:+.1f} % | "
                  f"{cs.fmt_time(b)} | {100 * (b - t2m) / t2m:+.1f} % |")
    for spec, src, m1, m2, stolen, shared in LONGLEAF_MEASURED:
        if src == "commit":
            continue
        w = cs.make_work(spec)
        a, b = (cs.simulate(w, 2, **kw) for kw in (SEC6, REJECTED))
        cnt = lambda r: f"{r['stats']['steals']} + {r['stats']['shares']}"
        print(f"| {w.name} (stolen + shared: {stolen:.2f} + {shared:.2f}) | {m2:g} ms | "
              f"{a['time_ns'] / 1e6:.3f} ms ({cnt(a)}) | {100 * (a['time_ns'] / 1e6 - m2) / m2:+.1f} % | "
              f"{b['time_ns'] / 1e6:.3f} ms ({cnt(b)}) | {100 * (b['time_ns'] / 1e6 - m2) / m2:+.1f} % |")


def rejected_predict():
    print("| workload | workers | (i) --no-beat-on-kick --probe-div 0 | (iii) --steal-every-beat "
          "--probe-div 0 | (iii) / (i) time | (iii) --no-beat-on-kick | (iii), what-if: "
          "--no-share-after-steal |")
    print("|---|---|---|---|---|---|---|")
    cell = lambda r: f"{cs.fmt_time(r[0])} / {r[1]:.2f}x / {r[3]:.0f} + {r[4]:.0f}"
    for spec, ps in REJ_WORK:
        name = ll_name(spec)
        for p in ps:
            a = run_mean(spec, p, **SEC6)
            b = run_mean(spec, p, **REJECTED)
            c = run_mean(spec, p, **REJ_STEAL_ONLY)
            d = run_mean(spec, p, **REJ_WHATIF)
            print(f"| {name} | {p} | {cell(a)} | {cell(b)} | {b[0] / a[0]:.3f} | {cell(c)} | {cell(d)} |")


def rejected_whatif(specs=("tree:1e7", "tree:1e8", "fib:40"), ps=(16, 64, 256)):
    print("| design | " + " | ".join(f"{ll_name(sp)}, {p}" for sp in specs for p in ps) + " |")
    print("|---|" + "---|" * (len(specs) * len(ps)))
    for name, kw in REJ_WHATIFS:
        cells = [f"{run_mean(sp, p, **kw)[1]:.1f}x" for sp in specs for p in ps]
        print(f"| {name} | " + " | ".join(cells) + " |")


def rejected():
    print("\n### The rejected design: validation (2 threads; trees measured with the code before "
          "f1f2033, long leaves with the code of 3063e81)\n")
    rejected_validate()
    print("\n### The rejected design: predictions: time / speed-up / steals + shares\n")
    rejected_predict()
    print("\n### The rejected design: speed-up on tree and fib, what-if variants\n")
    rejected_whatif()


# The wide fan-out designs of sim/fanout.md, each adding to the one above
# it, then variants of D (the recommended design).
D = dict(claims=True, spin_us=100, direct=True, self_help=True)
FANOUT = [
    ("defaults", {}),
    ("`--claims`", dict(claims=True)),
    ("+ `--spin-us 100`", dict(claims=True, spin_us=100)),
    ("+ `--request-to pending`", dict(claims=True, spin_us=100, request_to="pending")),
    ("`--claims --spin-us 100 --direct --no-direct-joiners`",
     dict(claims=True, spin_us=100, direct=True, direct_joiners=False)),
    ("the same, `--no-handoff`",
     dict(claims=True, spin_us=100, direct=True, direct_joiners=False, handoff=False)),
    ("`--claims --spin-us 100 --direct`", dict(claims=True, spin_us=100, direct=True)),
    ("D: + `--self-help`", D),
    ("D, `--spin-us 20`", {**D, "spin_us": 20}),
    ("D, `--spin-us 200`", {**D, "spin_us": 200}),
    ("D, atomics 0.01 / 0.005 us", {**D, "claim_us": 0.01, "local_us": 0.005}),
    ("D, atomics 0.05 / 0.02 / 0.02 us", {**D, "claim_us": 0.05, "local_us": 0.02, "done_us": 0.02}),
    ("D + `--join-desc` (what-if)", {**D, "join_desc": True}),
]
# every scheduler cost of D set to zero: the atomics, the scans, the
# spinning task's latency, the lock and the flag-to-fork gap
ZERO = dict(claim_us=0, local_us=0, done_us=0, scan_us=0, look_us=0, spin_lat_us=0,
            spin_wake_us=0, lock_us=0, tick_gap_nodes=0)


def fanout_uts(ps=(2, 16, 64, 256)):
    w = cs.make_work("uts:10000")
    t1 = cs.simulate(w, 1)["time_ns"]
    print("| design | " + " | ".join(f"{p} workers" for p in ps) + " |")
    print("|---|" + "---|" * len(ps))
    for name, kw in FANOUT:
        cells = []
        for p in ps:
            r = cs.simulate(w, p, **kw)
            st = r["stats"]
            cells.append(f"{t1 / r['time_ns']:.2f}x, {100 * r['idle_work_frac']:.0f} %, "
                         f"{st['wakes']} / {st['empty_wakes']}, {100 * r['lock_frac']:.0f} %")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


# How long a worker out of work waits before it sleeps: D's spin, down to
# the microsecond it waits for a direct request's answer, and none at all.
SPIN_ROWS = [
    ("`--claims --request-to pending`, no wait", dict(claims=True, request_to="pending")),
    ("D without the wait (`--spin-us 0`)", {**D, "spin_us": 0}),
] + [(f"D, `--spin-us {s}`", {**D, "spin_us": s}) for s in (1, 2, 5, 10, 20, 50, 100)]


def fanout_spin(ps=(2, 16, 64, 256)):
    w = cs.make_work("uts:10000")
    t1 = cs.simulate(w, 1)["time_ns"]
    print("| design | " + " | ".join(f"{p} workers" for p in ps) + " |")
    print("|---|" + "---|" * len(ps))
    for name, kw in SPIN_ROWS:
        cells = []
        for p in ps:
            r = cs.simulate(w, p, breakdown=True, **kw)
            spun = r["breakdown"].get("free spinning", 0.0)
            cells.append(f"{t1 / r['time_ns']:.2f}x, {spun / 1e6:.2f}")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


def fanout_breakdown(ps=(16, 64)):
    w = cs.make_work("uts:10000")
    t1 = cs.simulate(w, 1)["time_ns"]
    keys = ["free asleep", "waking", "joiner requesting", "free spinning", "free requesting"]
    print("| design | workers | speed-up | in all | overhead | " + " | ".join(keys) + " | other |")
    print("|---|---|---|---|---|" + "---|" * (len(keys) + 1))
    for name, kw in (("D", D), ("D, every cost 0, `--join-desc`", {**D, **ZERO, "join_desc": True})):
        for p in ps:
            r = cs.simulate(w, p, breakdown=True, **kw)
            bd = r["breakdown"]
            total = p * r["time_ns"]
            cells = [f"{bd.get(k, 0.0) / 1e6:.2f}" for k in keys]
            other = total - bd.get("busy", 0.0) - sum(bd.get(k, 0.0) for k in keys)
            print(f"| {name} | {p} | {t1 / r['time_ns']:.2f}x | {total / 1e6:.2f} | "
                  f"{(bd.get('busy', 0.0) - t1) / 1e6:.2f} | " + " | ".join(cells) +
                  f" | {other / 1e6:.2f} |", flush=True)


def fanout_others():
    rows = [("tree:1e6", (2, 16, 64, 256)), ("tree:1e7", (2, 16, 64, 256)), ("fib:32", (2, 16, 64, 256)),
            ("fib:40", (2, 16, 64, 256)), ("pair:50", (2, 16)), ("rounds:10:5", (2, 16)),
            ("map:256:1", (16, 64))]
    print("| workload | design | speed-up by workers (change) |")
    print("|---|---|---|")
    for spec, ps in rows:
        w = cs.make_work(spec)
        t1 = cs.simulate(w, 1)["time_ns"]
        base = {p: t1 / cs.simulate(w, p)["time_ns"] for p in ps}
        print(f"| {w.name} | defaults | " + ", ".join(f"{p}: {base[p]:.2f}x" for p in ps) + " |")
        for name, kw in (("D", D), ("D + `--join-desc`", {**D, "join_desc": True})):
            sp = {p: t1 / cs.simulate(w, p, **kw)["time_ns"] for p in ps}
            print(f"| | {name} | " + ", ".join(f"{p}: {sp[p]:.2f}x ({100 * (sp[p] / base[p] - 1):+.0f} %)"
                                                for p in ps) + " |", flush=True)


def fanout_longleaf(ps=(16, 64)):
    """D against the defaults over 20 long-leaf maps: exponential item
    lengths (12 seeds) and equal items (8 sizes): the geometric mean of
    the speed-up ratio and its extremes."""
    specs = [f"imap:256:1:{k}" for k in range(1, 13)] + \
        [f"map:{n}:1" for n in (96, 128, 160, 192, 224, 256, 320, 384)]
    print("| workers | maps | geometric mean | lowest | highest |")
    print("|---|---|---|---|---|")
    for p in ps:
        rel = []
        for spec in specs:
            w = cs.make_work(spec)
            rel.append(cs.simulate(w, p)["time_ns"] / cs.simulate(w, p, **D)["time_ns"])
        g = 1.0
        for x in rel:
            g *= x
        g **= 1 / len(rel)
        print(f"| {p} | {len(rel)} | {100 * (g - 1):+.1f} % | {100 * (min(rel) - 1):+.0f} % | "
              f"{100 * (max(rel) - 1):+.0f} % |", flush=True)


def fanout_robust(ps=(16, 64)):
    """D on uts-loop 10000 with one constant changed at a time: the model
    is deterministic and chaotic, so a single figure can mislead."""
    w = cs.make_work("uts:10000")
    t1 = cs.simulate(w, 1)["time_ns"]
    perts = [("as calibrated", {}), ("wake 9 us", dict(wake_us=9)), ("wake 11 us", dict(wake_us=11)),
             ("c 4.9 ns", dict(c_node=4.9)), ("c 5.1 ns", dict(c_node=5.1)),
             ("flag to fork 1.5 nodes", dict(tick_gap_nodes=1.5)),
             ("flag to fork 3 nodes", dict(tick_gap_nodes=3)), ("lock 0.2 us", dict(lock_us=0.2)),
             ("wake call 6 us", dict(wake_call_us=6))]
    print("| workers | " + " | ".join(n for n, _ in perts) + " | mean | lowest |")
    print("|---|" + "---|" * (len(perts) + 2))
    for p in ps:
        sp = []
        for _, kw in perts:
            c = kw.get("c_node", 5.0)
            r = cs.simulate(w, p, **{**D, **kw, "c_node": c})
            sp.append(t1 * c / 5.0 / r["time_ns"])
        print(f"| {p} | " + " | ".join(f"{x:.2f}x" for x in sp) +
              f" | {sum(sp) / len(sp):.2f}x | {min(sp):.2f}x |", flush=True)


# The root's fan-out b0 of uts-loop: the 2-core benchmark's tree, larger
# ones (a tree of b0 begins with that of every smaller b0), the scaling
# kit's tree on 16 cores (30000) and bench/uts's default (100000).
SIZES = (10000, 15000, 20000, 30000, 100000)


def sizes(ps=(2, 16, 64, 256), b0s=SIZES, lace_max=30000):
    """uts-loop by tree size: clove as built and --policy lace, speed-up
    over one worker of the same policy (clove's lock share at 256). Lace
    only up to b0 = lace_max: its simulator goes node by node, and the
    149M nodes of b0 = 100000 would take it hours at 256 workers."""
    print("| tree | nodes | 1 worker | " + " | ".join(f"{p} workers" for p in ps) + " |")
    print("|---|---|---|" + "---|" * len(ps))
    for b0 in b0s:
        w = cs.make_work(f"uts:{b0}")
        t1 = cs.simulate(w, 1)["time_ns"]
        cells = []
        for p in ps:
            r = cs.simulate(w, p, **cs.AS_BUILT)
            lock = f" (lock {100 * r['lock_frac']:.0f} %)" if p >= 256 else ""
            if b0 <= lace_max:
                lace = cs.simulate(w, p, policy="lace")
                cells.append(f"{t1 / r['time_ns']:.2f}x{lock} / {t1 / lace['time_ns']:.2f}x")
            else:
                cells.append(f"{t1 / r['time_ns']:.2f}x{lock} / -")
        print(f"| uts-loop {b0} | {w.nodes / 1e6:.1f}M | {t1 / 1e6:.1f} ms | " +
              " | ".join(cells) + " |", flush=True)


def fanout():
    print("\n### uts-loop 10000: speed-up, idle while work exists, wakes / empty, lock held\n")
    fanout_uts()
    print("\n### How long to wait before sleeping: speed-up, worker-ms spun\n")
    fanout_spin()
    print("\n### Where the worker-time goes (worker-ms)\n")
    fanout_breakdown()
    print("\n### D with one constant changed\n")
    fanout_robust()
    print("\n### The other workloads: defaults, D\n")
    fanout_others()
    print("\n### Long-leaf maps, D against the defaults\n")
    fanout_longleaf()


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
    if what in ("longleaf", "all"):
        longleaf()
    if what in ("rules", "all"):
        rules()
    if what in ("rejected", "all"):
        rejected()
    if what == "fanout":
        fanout()
    if what == "sizes":
        print("\n### uts-loop by tree size: clove as built / lace\n")
        sizes()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
