#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build clove and run the benchmarks in their short versions (about two
# minutes on a 2-core machine): the tree-sum benchmark (Spice's benchmark:
# the sequential baseline, the root split by hand onto two threads, and
# clove at 1..32 threads, for 1000 and 10 million nodes), then each form of
# fork (value, argument block, clove_join2, and without NDEBUG), the idle check,
# then fib(30), uts, nqueens(11), the three parallel loops and a sort of
# 10^6 keys, each against its sequential baseline, and long leaves (pairs
# of leaves that never fork, bench/longleaf).
# Usage: scripts/bench.sh [--all] [extra tree_sum args, e.g. --csv out.csv]
# With --peers it also runs OpenMP tasks and oneTBB (installing libtbb-dev
# first if missing); that adds about 2 minutes on a 2-core machine.
# With --all it runs fib, uts, nqueens, loops and sort at their default
# sizes instead (bench/README.md), baseline and clove at 1..32 threads
# (about 4 more minutes here); with --all --peers also their peers
# and cutoff variants at the smaller peer sizes (about 3 more minutes).
# With --rayon it also builds the Rayon companion (bench/rayon, Rust, Debian's
# librust-rayon-dev with cargo --offline; installs cargo and the crate first
# if missing) into build/bench-rayon and runs its tree sum at the same sizes
# and thread counts (about 1 more minute); --peers runs it too when cargo
# and the crate are already there, and says "peer rayon: not built (why)"
# when they are not.
# With --full it runs everything, with more samples, and keeps the results:
# tree_sum (1 s per configuration), fib/uts/nqueens (default sizes; peers and
# cutoff variants at the peer sizes), loops and sort with their peers, the
# Rayon companion (tree_sum, fib, nqueens, idle, wake), idle and idle_peers
# (idle cost and wake latency of clove, OpenMP, oneTBB), pin (CLOVE_PIN_
# WORKERS), longleaf, then bench/plot.sh. CSV files, logs and PNGs go to --out DIR
# (default build/bench-out/full-YYYYmmdd-HHMMSS). About 10-15 minutes on a
# 2-core machine; installs libtbb-dev, cargo, librust-rayon-dev and gnuplot
# first if missing.
# The extra arguments go to tree_sum only.
set -euo pipefail
cd "$(dirname "$0")/.."
extras=()
all=0
peers=0
rayon=0
full=0
out=""
args=()
for a in "$@"; do
  case "$a" in
    --all) all=1 ;;
    --peers) peers=1; extras+=(tbb); args+=("$a") ;;
    --rayon) rayon=1; extras+=(rayon) ;;
    --full) full=1; extras+=(tbb rayon plot) ;;
    --out=*) out=${a#--out=} ;;
    *) args+=("$a") ;;
  esac
done
scripts/deps.sh "${extras[@]}"

# The Rayon companion (scripts/rayon.sh), built into build/bench-rayon.
# Sets rayon_bin, or prints why not and returns 1.
. scripts/rayon.sh
build_rayon() {
  if ! rayon_build "$PWD/build/bench-rayon" "peer rayon"; then
    echo "peer rayon: not built ($rayon_why)"
    return 1
  fi
}
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
threads=(-t 1 -t 2 -t 4 -t 8 -t 16 -t 32)

if ((full)); then
  out=${out:-build/bench-out/full-$(date +%Y%m%d-%H%M%S)}
  mkdir -p "$out"
  cmake --build build -j "$jobs" --target tree_sum idle idle_peers pin fib uts \
    nqueens loops sort longleaf
  log() { # log NAME CMD...: run, show and keep the output
    local name=$1
    shift
    echo
    echo "== $* (load: $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$out/$name.txt"
    "$@" 2>&1 | tee -a "$out/$name.txt"
  }
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) CPUs"
    echo "kernel: $(uname -r)"
    echo "cc: $(cc --version | head -1)"
    echo "tbb: $(dpkg-query -W -f '${Version}' libtbb-dev 2>/dev/null || echo none)"
    echo "rustc: $(rustc --version 2>/dev/null || echo none)"
    echo "rayon: $(dpkg-query -W -f '${Version}' librust-rayon-dev 2>/dev/null || echo none)"
  } | tee "$out/machine.txt"
  log tree_sum build/bench/tree_sum -n 1000 -n 10000000 "${threads[@]}" \
    --baseline --split --peers --min-time 1 --csv "$out/tree_sum.csv" "${args[@]}"
  log tree_sum_forms build/bench/tree_sum -n 1000 "${threads[@]}" --forms --baseline \
    --csv "$out/tree_sum_forms_1000.csv"
  log tree_sum_forms build/bench/tree_sum -n 10000000 -t 1 -t 2 --forms --baseline --split \
    --csv "$out/tree_sum_forms_10m.csv"
  for b in fib uts nqueens; do
    log "$b" build/bench/$b "${threads[@]}" --baseline --csv "$out/$b.csv"
  done
  for w in "fib 30" "uts 1000" "nqueens 12"; do
    set -- $w
    log "$1_peers" build/bench/$1 -n "$2" "${threads[@]}" --baseline --peers \
      --cutoff --csv "$out/$1_peers.csv"
  done
  log loops build/bench/loops "${threads[@]}" --peers --csv "$out/loops.csv"
  log sort build/bench/sort "${threads[@]}" --csv "$out/sort.csv"
  log longleaf build/bench/longleaf -t 1 -t 2 -t 4 --csv "$out/longleaf.csv"
  if build_rayon > >(tee -a "$out/rayon.txt"); then
    log rayon "$rayon_bin" tree_sum -n 1000 -n 10000000 "${threads[@]}" --baseline \
      --min-time 1 --csv "$out/rayon_tree_sum.csv"
    log rayon "$rayon_bin" fib -n 30 "${threads[@]}" --baseline --csv "$out/rayon_fib.csv"
    log rayon "$rayon_bin" nqueens -n 12 "${threads[@]}" --baseline \
      --csv "$out/rayon_nqueens.csv"
    log idle "$rayon_bin" idle -t 16
    log idle "$rayon_bin" wake -t 2 --samples 200
  fi
  log idle build/bench/idle
  log idle build/bench/idle_peers --samples 200
  log pin build/bench/pin --rounds 30 --csv "$out/pin.csv"
  csvs=()
  for f in "$out"/*.csv; do
    case $f in "$out/pin.csv" | "$out/longleaf.csv") ;; *) csvs+=("$f") ;; esac
  done
  bench/plot.sh "$out/img" "${csvs[@]}"
  echo "results in $out"
  exit 0
fi

cmake --build build -j "$jobs" --target tree_sum idle fib uts nqueens loops sort longleaf
build/bench/tree_sum -n 1000 -n 10000000 "${threads[@]}" --split-min 100000 \
  --baseline --split "${args[@]}"
# Each form of fork (bench/README.md, "Forms of fork"): the value form, the
# argument block (fallback call after its block, and inside it),
# clove_join2, and the same source built without NDEBUG.
echo
build/bench/tree_sum -n 1000 "${threads[@]}" --forms --baseline
echo
build/bench/tree_sum -n 10000000 -t 1 -t 2 --forms --baseline --split
build/bench/idle
if ! ((all)); then
  # Short versions of the other workloads (about 30 s in all here); --all
  # runs them at their default sizes, --full with the peers and plots.
  for w in "fib -n 30" "uts -n 1000" "nqueens -n 11"; do
    echo
    # shellcheck disable=SC2086
    build/bench/$w "${threads[@]}" --baseline
  done
  echo
  build/bench/loops "${threads[@]}" --min-time 0.2
  echo
  build/bench/sort -n 1000000 "${threads[@]}" --reps 5
  echo
  build/bench/longleaf -t 1 -t 2 --reps 3
fi
if ((rayon || peers)); then
  echo
  if build_rayon; then
    "$rayon_bin" tree_sum -n 1000 -n 10000000 "${threads[@]}" --baseline
  fi
fi
if ((all)); then
  for b in fib uts nqueens; do
    echo
    build/bench/$b "${threads[@]}" --baseline
  done
  echo
  build/bench/loops "${threads[@]}"
  echo
  build/bench/sort "${threads[@]}"
  if ((peers)); then
    for w in "fib -n 30" "uts -n 1000" "nqueens -n 12"; do
      echo
      # shellcheck disable=SC2086
      build/bench/$w "${threads[@]}" --baseline --peers --cutoff
    done
    if [ -n "$rayon_bin" ]; then
      for w in "fib -n 30" "nqueens -n 12"; do
        echo
        # shellcheck disable=SC2086
        "$rayon_bin" $w "${threads[@]}" --baseline
      done
    fi
  fi
fi
