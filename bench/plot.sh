#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Plot benchmark CSV files (the --csv output of tree_sum, fib, uts, nqueens,
# loops, sort and the Rayon companion bench/rayon; all share the columns
# workload,n,impl,threads,heartbeat_us,median,...) as PNGs: one plot per
# workload and size, ns per node/call/element (median, log scale) against
# threads (log scale), one line per implementation. Sequential references
# (baseline, rust_baseline, plain, qsort) are drawn as flat dashed lines, the
# hand split as one point at 2 threads. When several files hold the same
# (workload, n, impl, threads), the median of their medians is plotted.
#
# Usage: bench/plot.sh OUTDIR FILE.csv...
# Needs gnuplot (scripts/deps.sh plot) and python3.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: bench/plot.sh OUTDIR FILE.csv..." >&2
  exit 2
fi
command -v gnuplot >/dev/null 2>&1 ||
  { echo "plot.sh: gnuplot not found; scripts/deps.sh plot installs it" >&2; exit 1; }
out=$1
shift
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" "$out" "$@" <<'EOF'
import csv, os, statistics, sys
from collections import defaultdict
tmp, out, files = sys.argv[1], sys.argv[2], sys.argv[3:]
vals = defaultdict(list)          # (workload, n, impl, threads) -> medians
col = None
for path in files:
    with open(path) as f:
        rd = csv.reader(f)
        head = next(rd, None)
        if not head or head[:4] != ["workload", "n", "impl", "threads"]:
            print(f"plot.sh: {path}: not a benchmark CSV, skipped", file=sys.stderr)
            continue
        unit = head[5].replace("median_ns_per_", "") if len(head) > 5 else "unit"
        for r in rd:
            if len(r) < 6 or not r[5]:
                continue
            w = r[0]
            if unit == "elem" and w != "sort":   # loops names its workloads a, b, c
                w = "loops_" + w
            vals[(w, int(r[1]), r[2], int(r[3]))].append((float(r[5]), unit))
flat = {"baseline", "rust_baseline", "plain", "qsort", "seq"}
units = {"tree_sum": "node", "fib": "call", "uts": "node", "nqueens": "node",
         "sort": "element"}
plots = defaultdict(lambda: defaultdict(dict))
for (w, n, impl, t), v in vals.items():
    plots[(w, n)][impl][t] = statistics.median(x for x, _ in v)
# impl order: references first, then clove, then peers alphabetically
def key(i):
    return (0 if i in flat else 1 if i == "split" else 2 if i.startswith("clove") else 3, i)
styles = {"clove": "lw 3 lc rgb '#d62728' pt 7",
          "rayon": "lw 2 lc rgb '#1f77b4' pt 5",
          "omp": "lw 2 lc rgb '#ff7f0e' pt 9", "omp_cutoff": "lw 2 dt 4 lc rgb '#ff7f0e' pt 8",
          "tbb": "lw 2 lc rgb '#2ca02c' pt 11", "tbb_cutoff": "lw 2 dt 4 lc rgb '#2ca02c' pt 10",
          "split": "lc rgb '#7f7f7f' pt 13 ps 1.5"}
script = ["set terminal pngcairo noenhanced size 800,520 font 'sans,10'",
          "set logscale x 2", "set logscale y", "set grid xtics ytics mytics",
          "set key outside right top", "set xlabel 'threads'"]
made = []
for (w, n), impls in sorted(plots.items()):
    ts = sorted({t for d in impls.values() for t in d})
    if not ts:
        continue
    lo, hi = min(ts), max(ts)
    if lo == hi:
        lo, hi = lo / 1.5, hi * 1.5
    unit = units.get(w, "element")
    name = f"{w}_{n}"
    cmds = []
    for k, impl in enumerate(sorted(impls, key=key)):
        d = impls[impl]
        data = os.path.join(tmp, f"{name}.{k}.dat")
        with open(data, "w") as f:
            if impl in flat and len(d) == 1:
                v = next(iter(d.values()))
                f.write(f"{lo} {v}\n{hi} {v}\n")
                style = "with lines dt 2 lw 2 lc rgb 'black'" if impl in ("baseline", "plain", "qsort") \
                    else "with lines dt 3 lw 2 lc rgb '#555555'"
            else:
                for t in sorted(d):
                    f.write(f"{t} {d[t]}\n")
                style = "with linespoints " + styles.get(impl, "lw 2 pt 7 ps 0.8")
            cmds.append(f"'{data}' using 1:2 {style} title '{impl}'")
    script += [f"set output '{os.path.join(out, name + '.png')}'",
               f"set title '{w}, n = {n:,} (median ns per {unit}, lower is better)'",
               f"set ylabel 'ns per {unit}'",
               f"set xrange [{lo}:{hi}]",
               "plot " + ", \\\n     ".join(cmds)]
    made.append(os.path.join(out, name + ".png"))
with open(os.path.join(tmp, "plot.gp"), "w") as f:
    f.write("\n".join(script) + "\n")
with open(os.path.join(tmp, "made"), "w") as f:
    f.write("\n".join(made) + "\n")
EOF
gnuplot "$tmp/plot.gp"
sed 's/^/plot.sh: wrote /' "$tmp/made"
