#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Plot the scaling kit's CSV files with gnuplot (no python needed): one PNG
# per workload in RESULTS/plots/, the median ns per node/call/element (log
# scale) against threads (log scale), one line per implementation; the
# sequential references (baseline, plain, qsort, rust_baseline) as flat
# dashed lines, the hand split as its one point at 2 threads, the copies
# and parts rows (the machine's perfect parallel run) as a dashed line.
# Usage: plot.sh RESULTS   (the folder run.sh wrote; plot.py does the same
# with matplotlib)
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: plot.sh RESULTS" >&2; exit 2; }
res=$(cd "$1" && pwd)
command -v gnuplot >/dev/null 2>&1 || { echo "plot.sh: gnuplot not found" >&2; exit 1; }
mkdir -p "$res/plots"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
made=0
for csv in "$res"/*.csv; do
  [ -f "$csv" ] || continue
  stem=$(basename "$csv" .csv)
  # One data file per implementation, in the order they first appear
  # (references first), and the gnuplot commands that draw them.
  awk -F, -v tmp="$tmp" -v stem="$stem" -v png="$res/plots/$stem.png" '
    NR == 1 { if ($1 != "workload" || $3 != "threads") exit 1; next }
    $4 == "" { next }
    {
      if (!($2 in idx)) { idx[$2] = ++ni; name[ni] = $2 }
      k = idx[$2]; cnt[k]++; t[k, cnt[k]] = $3; v[k, cnt[k]] = $4
      if (lo == "" || $3 + 0 < lo) lo = $3 + 0
      if (hi == "" || $3 + 0 > hi) hi = $3 + 0
      if (index(" " ns " ", " " $7 " ") == 0) ns = ns (ns == "" ? "" : " ") $7
      unit = $10
    }
    END {
      if (!ni) exit 1
      if (lo == hi) { lo = lo / 1.5; hi = hi * 1.5 }
      sub(/^ns_per_/, "", unit)
      print "set output \"" png "\""
      print "set title \"" stem ", n = " ns " (median ns per " unit ", lower is better)\""
      print "set ylabel \"ns per " unit "\""
      print "set xrange [" lo ":" hi "]"
      style["clove"] = "lw 3 lc rgb \"#d62728\" pt 7"
      style["rayon"] = "lw 2 lc rgb \"#1f77b4\" pt 5"
      style["omp"] = "lw 2 lc rgb \"#ff7f0e\" pt 9"
      style["omp_cutoff"] = "lw 2 dt 4 lc rgb \"#ff7f0e\" pt 8"
      style["tbb"] = "lw 2 lc rgb \"#2ca02c\" pt 11"
      style["tbb_cutoff"] = "lw 2 dt 4 lc rgb \"#2ca02c\" pt 10"
      style["omp-static"] = "lw 2 lc rgb \"#ff7f0e\" pt 9"
      style["omp-dynamic"] = "lw 2 lc rgb \"#9467bd\" pt 5"
      style["omp-guided"] = "lw 2 lc rgb \"#8c564b\" pt 13"
      style["split"] = "lc rgb \"#7f7f7f\" pt 13 ps 1.5"
      style["copies"] = "lw 2 dt 2 lc rgb \"#000000\" pt 2"
      style["parts"] = style["copies"]
      cmd = "plot "
      for (pass = 0; pass < 2; pass++)
        for (k = 1; k <= ni; k++) {
          im = name[k]
          ref = im == "baseline" || im == "plain" || im == "qsort" || im == "rust_baseline"
          if (ref != (pass == 0)) continue
          f = tmp "/" stem "." k ".dat"
          if (ref && cnt[k] == 1) {
            print lo, v[k, 1] > f; print hi, v[k, 1] > f
            s = "with lines dt 2 lw 2 lc rgb \"" (im == "rust_baseline" ? "#555555" : "black") "\""
          } else {
            for (j = 1; j <= cnt[k]; j++) print t[k, j], v[k, j] > f
            s = "with linespoints " (im in style ? style[im] : "lw 2 pt 7 ps 0.8")
          }
          close(f)
          printf "%s\"%s\" using 1:2 %s title \"%s\"", (cmd == "" ? ", \\\n     " : cmd), f, s, im
          cmd = ""
        }
      print ""
    }' "$csv" >"$tmp/$stem.gp" || { echo "plot.sh: $csv: nothing to plot" >&2; continue; }
  {
    echo "set terminal pngcairo noenhanced size 800,520 font 'sans,10'"
    echo "set logscale x 2; set logscale y; set grid xtics ytics mytics"
    echo "set key outside right top; set xlabel 'threads'"
    cat "$tmp/$stem.gp"
  } >"$tmp/$stem.full.gp"
  if gnuplot "$tmp/$stem.full.gp" 2>"$tmp/err"; then
    made=$((made + 1))
  else
    # pngcairo is missing from some gnuplot builds: the plain png terminal.
    sed -i "1s/.*/set terminal png size 800,520/" "$tmp/$stem.full.gp"
    if gnuplot "$tmp/$stem.full.gp"; then made=$((made + 1)); else cat "$tmp/err" >&2; fi
  fi
done
echo "plot.sh: $made plots in $res/plots"
