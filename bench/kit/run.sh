#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# clove's scaling kit: run every benchmark in bin/ for clove, the sequential
# code and each peer that was built, at 1, 2, 4, ... threads up to twice the
# cores (and the core count itself), and write one CSV per workload:
#   RESULTS/<workload>.csv  workload,impl,threads,median,min,max,n,samples,
#                           heartbeat_us,unit  (ns per node/call/element)
#   RESULTS/machine.txt     CPU, cores, NUMA, memory, kernel, the kit's build
#   RESULTS/run.txt         mode, threads, every command, time taken, failures
#   RESULTS/logs/           each benchmark's own output and CSV
#   RESULTS/plots/          one PNG per workload (with gnuplot or matplotlib)
# Needs bash, awk and coreutils; no python for the CSV files. README.md
# (next to this script) describes the workloads and the columns.
# Usage: run.sh [--full | --quick | --smoke] [--out RESULTS] [--threads "1 2 4"]
#               [--dry-run] [--no-plots]
#   --full     the whole sweep (the default), sized for under 8 minutes on 16 cores
#   --quick    fewer thread counts (1, 2, cores, 2 x cores) and smaller sizes
#   --smoke    tiny sizes, 3 samples, threads 1 and 2: checks that everything runs
#   --out DIR  where the results go (default: results/ next to this script)
#   --threads  the thread counts instead of the mode's
#   --dry-run  print the plan and the estimate, run nothing
#   --no-plots  draw no PNGs
set -o pipefail
kit=$(cd "$(dirname "$0")" && pwd)
bin=$kit/bin

# What scripts/scale.sh built (kit.conf); without it, assume no extras.
peers="" rayon=0 uts_loop=0 default_mode=full
clove_version="?" clove_commit="?" built_with="?" omp_version="" tbb_version="" rayon_version=""
# shellcheck disable=SC1091
[ -f "$kit/kit.conf" ] && . "$kit/kit.conf"

mode=$default_mode out="" threads_opt="" dry=0 plots=1
while [ $# -gt 0 ]; do
  case "$1" in
    --full) mode=full ;;
    --quick) mode=quick ;;
    --smoke) mode=smoke ;;
    --out) [ $# -ge 2 ] || { echo "run.sh: --out needs a folder" >&2; exit 2; }; out=$2; shift ;;
    --out=*) out=${1#--out=} ;;
    --threads) [ $# -ge 2 ] || { echo "run.sh: --threads needs a list" >&2; exit 2; }
      threads_opt=$2; shift ;;
    --threads=*) threads_opt=${1#--threads=} ;;
    --dry-run) dry=1 ;;
    --no-plots) plots=0 ;;
    -h|--help) sed -n '3,/^set -o/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option $1 (run.sh --help)" >&2; exit 2 ;;
  esac
  shift
done
out=${out:-$kit/results}
case "$out" in /*) ;; *) out=$PWD/$out ;; esac

cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
if [ -n "$threads_opt" ]; then
  # shellcheck disable=SC2086 # split the list into words
  threads=$(printf '%s\n' ${threads_opt//,/ } | awk '/^[0-9]+$/ && $1 > 0' | sort -n -u | tr '\n' ' ')
else
  case $mode in
    smoke) list="1 2" ;;
    quick) list="1 2 $cores $((2 * cores))" ;;
    *) list=""
      t=1
      while ((t <= 2 * cores)); do list="$list $t"; t=$((t * 2)); done
      list="$list $cores $((2 * cores))" ;;
  esac
  # shellcheck disable=SC2086
  threads=$(printf '%s\n' $list | sort -n -u | tr '\n' ' ')
fi
threads=${threads% }
[ -n "$threads" ] || { echo "run.sh: no thread counts" >&2; exit 2; }
targs=()
for t in $threads; do targs+=(-t "$t"); done
nt=$(wc -w <<<"$threads")
has_peer() { case " $peers " in *" $1 "*) return 0 ;; esac; return 1; }

# ---- Sizes per mode ----------------------------------------------------------
# Full: the clove / baseline runs at sizes where 32 threads still have work
# (fib(38) = 126M calls, uts 30000 = 52M nodes, nqueens 14 = 27M nodes); the
# peers, 20-100x slower without a cutoff, at bench/README.md's peer sizes,
# with baseline and clove again at that size. The 10^8-node tree (3.1 GB)
# runs baseline, hand split and clove: a peer would take minutes there.
mem_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo 2>/dev/null)
notes=()
case $mode in
  full)
    tree_big=100000000 tree_args=(--reps 3) tree_mid=1000000 mid_args=(--reps 21)
    main=(--min-time 0.25) peer=(--peer-time 0.3 --reps 10) tree_peer=(--batch 100)
    fib=38 fib_p=30 uts=30000 uts_p=1000 nq=14 nq_p=12
    loops_n=(a "" b "" c "") loops_main=(--min-time 0.2) loops_peer=(--min-time 0.1 --peer-time 0.3)
    sort_args=(-n 2000000 --reps 5)
    rayon_args=(--min-time 0.25 --min-samples 3)
    scale=1 ;;
  quick)
    tree_big=10000000 tree_args=(--reps 3) tree_mid=1000000 mid_args=(--reps 11)
    main=(--min-time 0.1) peer=(--peer-time 0.1 --reps 5 --batch 1) tree_peer=(--batch 20)
    fib=32 fib_p=25 uts=3000 uts_p=800 nq=13 nq_p=11
    loops_n=(a 4000000 b 50000 c 100000) loops_main=(--min-time 0.08)
    loops_peer=(--min-time 0.05 --peer-time 0.1)
    sort_args=(-n 1000000 --reps 3)
    rayon_args=(--min-time 0.1 --min-samples 3)
    scale=0.2 ;;
  smoke)
    tree_big=100000 tree_args=(--quick) tree_mid=100000 mid_args=(--quick)
    main=(--quick --batch 5) peer=(--quick --batch 5) tree_peer=(--batch 5)
    fib=18 fib_p=15 uts=100 uts_p=30 nq=9 nq_p=8
    loops_n=(a "" b "" c "") loops_main=(--quick) loops_peer=(--quick)
    sort_args=(--quick)
    rayon_args=(--quick)
    scale=0.05 ;;
  *) echo "run.sh: unknown mode $mode" >&2; exit 2 ;;
esac
if [ "$mode" = full ] && [ -n "$mem_kb" ] && ((mem_kb < 8 * 1024 * 1024)); then
  tree_big=10000000
  notes+=("tree_sum_large at 10^7 nodes, not 10^8: $((mem_kb / 1024)) MiB available, the 10^8 tree needs 3.1 GiB")
fi

# ---- The plan ---------------------------------------------------------------
# plan STEM KEEP FIXED PER_THREAD UNIT BINARY ARGS...: one benchmark process;
# its --csv rows whose impl is in KEEP (comma list, or "all") go to
# STEM.csv. FIXED + PER_THREAD x (thread counts) is its time estimate in
# seconds on 16 cores at full sizes (the smaller modes scale it), guessed
# from timings on 2 cores.
P_STEM=() P_KEEP=() P_EST=() P_UNIT=() P_CMD=()
plan() {
  local est
  est=$(awk -v f="$3" -v p="$4" -v n="$nt" -v s="$scale" 'BEGIN { printf "%.1f", (f + p * n) * s }')
  P_STEM+=("$1") P_KEEP+=("$2") P_EST+=("$est") P_UNIT+=("$5")
  shift 5
  P_CMD+=("$*")
}
# rec NAME STEM N N_PEERS [ARGS]: a recursive benchmark (fib, uts, nqueens):
# baseline and clove at N; baseline, clove and each peer at N_PEERS. For
# the workloads sim/kit_compare.py predicts (fib, uts_loop), also the
# copies rows at N: the baseline on k threads at once, the machine's own
# ceiling at every thread count k.
rec() {
  local name=$1 stem=$2 n=$3 np=$4 unit=ns_per_node copies=() per=1.0
  shift 4
  [ "$name" = fib ] && unit=ns_per_call
  case $stem in fib|uts_loop) copies=(--copies) per=2.5 ;; esac
  plan "$stem" all 2 $per $unit "$name" "$@" -n "$n" --baseline "${copies[@]}" "${main[@]}"
  plan "${stem}_peers" all 1 0.4 $unit "$name" "$@" -n "$np" --baseline "${main[@]}"
  local p
  for p in omp omp_cutoff tbb tbb_cutoff; do
    has_peer "${p%_cutoff}" || continue
    plan "${stem}_peers" "$p" 0.5 0.7 $unit "$name" "$@" -n "$np" --only "$p" "${peer[@]}"
  done
}

plan tree_sum_large all 15 1.5 ns_per_node tree_sum -n "$tree_big" --baseline --split --parts "${tree_args[@]}"
plan tree_sum_small all 1 0.4 ns_per_node tree_sum -n 1000 --baseline "${main[@]}"
for p in omp tbb; do
  has_peer $p || continue
  plan tree_sum_small $p 0.5 0.8 ns_per_node tree_sum -n 1000 --only $p "${peer[@]}" "${tree_peer[@]}"
done
# A 10^6-node tree (3 ms on one core): back to back, and isolated, each
# run after an untimed 2 ms pause, so that the workers and the heartbeat
# thread sleep when it starts: the ramp-up that sim/machines.md predicts.
plan tree_sum_mid all 2 0.3 ns_per_node tree_sum -n "$tree_mid" --baseline "${mid_args[@]}"
plan tree_sum_isolated all 2 0.3 ns_per_node tree_sum -n "$tree_mid" --baseline --gap-ms 2 \
  "${mid_args[@]}"
rec fib fib "$fib" "$fib_p"
rec uts uts "$uts" "$uts_p"
((uts_loop)) && rec uts uts_loop "$uts" "$uts_p" --shape loop
rec nqueens nqueens "$nq" "$nq_p"
for ((k = 0; k < ${#loops_n[@]}; k += 2)); do
  w=${loops_n[k]} n=${loops_n[k + 1]}
  nargs=()
  [ -z "$n" ] || nargs=(-n "$n")
  plan "loops_$w" all 2 0.5 ns_per_elem loops -w "$w" "${nargs[@]}" "${loops_main[@]}"
  if has_peer omp; then
    plan "loops_$w" omp-static,omp-dynamic,omp-guided 2 1.2 ns_per_elem loops -w "$w" "${nargs[@]}" \
      --no-clove --no-split --impl omp-static --impl omp-dynamic --impl omp-guided "${loops_peer[@]}"
  fi
  if has_peer tbb; then
    plan "loops_$w" tbb 2 0.5 ns_per_elem loops -w "$w" "${nargs[@]}" --no-clove --no-split --impl tbb \
      "${loops_peer[@]}"
  fi
done
plan sort all 2 0.5 ns_per_elem sort "${sort_args[@]}"
if ((rayon)); then
  r=clove-rayon-bench
  plan tree_sum_large all 15 1.5 ns_per_node $r tree_sum -n "$tree_big" --baseline "${rayon_args[@]}"
  plan tree_sum_small all 1 0.5 ns_per_node $r tree_sum -n 1000 --baseline "${rayon_args[@]}"
  plan fib all 2 1.5 ns_per_call $r fib -n "$fib" --baseline "${rayon_args[@]}"
  plan nqueens all 2 1.5 ns_per_node $r nqueens -n "$nq" --baseline "${rayon_args[@]}"
fi

total_est=$(printf '%s\n' "${P_EST[@]}" | awk '{ t += $1 } END { printf "%.0f", t }')
mins() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
echo "clove scaling kit: clove $clove_version ($clove_commit); $cores CPUs; mode $mode"
echo "threads: $threads"
echo "peers: ${peers:-none}; Rayon: $( ((rayon)) && echo built || echo "${rayon_version:-not built}")"
for n in "${notes[@]}"; do echo "note: $n"; done
echo "${#P_CMD[@]} benchmark runs; estimate $(mins "$total_est") (sized for 16 cores from 2-core" \
  "timings; it grows with the number of thread counts, $nt here)"
if ((dry)); then
  for ((i = 0; i < ${#P_CMD[@]}; i++)); do
    printf '  %-16s %-32s ~%3ss  %s %s\n' "${P_STEM[i]}" "${P_KEEP[i]}" "${P_EST[i]}" \
      "${P_CMD[i]}" "${targs[*]}"
  done
  exit 0
fi

# ---- Machine description (no dates: results are compared across runs) -----
mkdir -p "$out/logs" || exit 1
for ((i = 0; i < ${#P_STEM[@]}; i++)); do rm -f "$out/${P_STEM[i]}.csv"; done
rm -f "$out"/logs/*.csv "$out"/logs/*.txt
{
  echo "cpu: $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)"
  echo "cpus (nproc): $cores"
  echo "kernel: $(uname -srm)"
  echo "memory: $(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)"
  echo "c library: $(getconf GNU_LIBC_VERSION 2>/dev/null || echo unknown)"
  if [ -r /sys/devices/system/cpu/smt/active ]; then
    echo "smt active: $(cat /sys/devices/system/cpu/smt/active)"
  fi
  if [ -r /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor ]; then
    echo "cpufreq governor (cpu0): $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor)"
  fi
  nodes=0
  for d in /sys/devices/system/node/node[0-9]*; do [ -d "$d" ] && nodes=$((nodes + 1)); done
  [ "$nodes" -gt 0 ] && echo "numa nodes: $nodes"
  echo "kit: clove $clove_version ($clove_commit), built with $built_with"
  echo "kit peers: ${omp_version:-no OpenMP}; ${tbb_version:-no oneTBB}; Rayon: ${rayon_version:-none}"
  echo
  if command -v lscpu >/dev/null 2>&1; then
    echo "lscpu:"
    LC_ALL=C lscpu | grep -v -i -E '^(CPU MHz|CPU\(s\) scaling MHz|BogoMIPS|Vulnerability)'
  else
    echo "/proc/cpuinfo (first CPU):"
    awk '/^$/ { exit } /^(vendor_id|cpu family|model|model name|stepping|cache size|siblings|cpu cores|flags)\t/' \
      /proc/cpuinfo 2>/dev/null
  fi
} >"$out/machine.txt"

# ---- Run ----------------------------------------------------------------------
have_timeout=0
command -v timeout >/dev/null 2>&1 && have_timeout=1
{
  echo "mode: $mode"
  echo "threads: $threads"
  echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
  env | grep -E '^(OMP_|GOMP_|KMP_|TBB_|CLOVE_|RAYON_)' | sed 's/^/env: /'
  for n in "${notes[@]}"; do echo "note: $n"; done
} >"$out/run.txt"
start=$SECONDS
failures=()
written=" "
for ((i = 0; i < ${#P_CMD[@]}; i++)); do
  stem=${P_STEM[i]} keep=${P_KEEP[i]} est=${P_EST[i]}
  read -r -a cmd <<<"${P_CMD[i]}"
  tag=$stem-$(printf '%02d' "$i")
  raw=$out/logs/$tag.csv log=$out/logs/$tag.txt
  printf '[%d/%d] %s: %s %s (~%ss)\n' $((i + 1)) ${#P_CMD[@]} "$stem" "${P_CMD[i]}" "${targs[*]}" "$est"
  echo "$tag: ${P_CMD[i]} ${targs[*]}" >>"$out/run.txt"
  limit=$(awk -v e="$est" 'BEGIN { l = int(e * 6); print l < 120 ? 120 : l }')
  wrap=()
  ((have_timeout)) && wrap=(timeout -k 10 "$limit")
  t0=$SECONDS
  "${wrap[@]}" "$bin/${cmd[0]}" "${cmd[@]:1}" "${targs[@]}" --csv "$raw" >"$log" 2>&1
  rc=$?
  took=$((SECONDS - t0))
  if ((rc != 0)); then
    why="exit status $rc"
    ((have_timeout && (rc == 124 || rc == 137))) && why="stopped after $limit s"
    echo "  FAILED ($why, ${took}s); last lines of $log:"
    tail -n 5 "$log" | sed 's/^/    /'
    failures+=("$tag (${P_CMD[i]}): $why")
    echo "  failed: $why" >>"$out/run.txt"
    continue
  fi
  if [ ! -s "$raw" ]; then
    echo "  FAILED: no CSV written"
    failures+=("$tag (${P_CMD[i]}): no CSV")
    continue
  fi
  case "$written" in
    *" $stem "*) ;;
    *) echo "workload,impl,threads,median,min,max,n,samples,heartbeat_us,unit" >"$out/$stem.csv"
       written="$written$stem " ;;
  esac
  # The benchmarks' columns: workload,n,impl,threads,heartbeat_us,median,
  # min,max,ratio_to_baseline,samples.
  rows=$(awk -F, -v OFS=, -v stem="$stem" -v keep="$keep" -v unit="${P_UNIT[i]}" \
             -v dst="$out/$stem.csv" '
    NR == 1 { if ($1 != "workload" || $2 != "n" || $3 != "impl" || $4 != "threads" || $6 !~ /^median/)
                bad = 1
              next }
    bad { exit }
    keep != "all" && index("," keep ",", "," $3 ",") == 0 { next }
    { print stem, $3, $4, $6, $7, $8, $2, $10, $5, unit >> dst; n++ }
    END { if (bad) { print "bad header"; exit 3 } print n + 0 }' "$raw")
  if [ "$rows" = "bad header" ] || [ "$rows" = 0 ]; then
    [ "$rows" = 0 ] && rows="no rows for $keep"
    echo "  FAILED: $rows in $raw"
    failures+=("$tag (${P_CMD[i]}): $rows")
    continue
  fi
  echo "  ${took}s, $rows rows -> $stem.csv"
  echo "  ${took}s" >>"$out/run.txt"
done
elapsed=$((SECONDS - start))

# ---- Plots ------------------------------------------------------------------
if ((plots)); then
  if command -v gnuplot >/dev/null 2>&1; then
    "$kit/plot.sh" "$out" || echo "run.sh: plotting with gnuplot failed"
  elif command -v python3 >/dev/null 2>&1 && python3 -c 'import matplotlib' >/dev/null 2>&1; then
    python3 "$kit/plot.py" "$out" || echo "run.sh: plotting with matplotlib failed"
  else
    echo "run.sh: no gnuplot or python3 with matplotlib: plots skipped" \
      "(copy the results and run plot.sh or plot.py elsewhere)"
  fi
fi

echo
echo "results in $out:"
for f in "$out"/*.csv; do
  [ -f "$f" ] && printf '  %-22s %3d rows\n' "$(basename "$f")" $(($(wc -l <"$f") - 1))
done
echo "elapsed $(mins "$elapsed") (estimate $(mins "$total_est"))" | tee -a "$out/run.txt"
if ((${#failures[@]})); then
  echo "${#failures[@]} benchmark run(s) failed:" | tee -a "$out/run.txt"
  printf '  %s\n' "${failures[@]}" | tee -a "$out/run.txt"
  exit 1
fi
