#!/bin/sh
# SPDX-License-Identifier: MIT
# callgrind.sh - instructions per node of the tree sum: sequential baseline
# vs clove with a 1-thread pool (the not-taken fork/join path only).
#
# Usage: bench/callgrind.sh [BUILD_DIR] [NODES]
#   BUILD_DIR  a CMake build directory of this repository (default: build/
#              next to this script's parent; configured and built if absent)
#   NODES      tree size (default 1000000)
#
# Each implementation gets its own valgrind run of tree_sum --only IMPL with
# one timed run, no warm-up and no calibration. Collection is switched on
# only inside the timed entry point (--toggle-collect=run_baseline* or
# run_clove*), so building the tree, creating the pool and the setup of the
# process are not counted. clove's figure includes one clove_pool_run.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
n=${2:-1000000}

command -v valgrind >/dev/null 2>&1 || { echo "callgrind.sh: valgrind not installed" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "callgrind.sh: python3 needed for the arithmetic" >&2; exit 1; }

if [ ! -x "$build/bench/tree_sum" ]; then
    cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" --target tree_sum -j2 >/dev/null
fi
exe=$build/bench/tree_sum
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

irs() { # impl -> total Ir collected
    valgrind --tool=callgrind --callgrind-out-file="$tmp/$1.out" \
        --toggle-collect="run_$1*" \
        "$exe" --only "$1" -n "$n" -t 1 --reps 1 --warmup 0 --batch 1 \
        >"$tmp/$1.stdout" 2>"$tmp/$1.stderr" || {
        cat "$tmp/$1.stderr" >&2; exit 1; }
    # The out file ends with "totals: <Ir>" (older valgrind: "summary:").
    awk '/^(totals|summary):/ { v = $2 } END { if (v == "") exit 1; print v }' "$tmp/$1.out"
}

base=$(irs baseline)
clove=$(irs clove)

python3 - "$n" "$base" "$clove" <<'PY'
import sys
from functools import lru_cache
n, base, clove = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])

@lru_cache(maxsize=None)
def pairs(k):
    """Nodes with two children in tree_sum's balanced tree of k nodes
    (one fork/join pair each)."""
    if k <= 0:
        return 0
    left = (k - 1) // 2
    right = k - 1 - left
    return (1 if left and right else 0) + pairs(left) + pairs(right)

p = pairs(n)
print(f"tree_sum under callgrind, n = {n} nodes, {p} fork/join pairs, 1 thread")
print(f"  {'impl':<10}{'Ir total':>14}{'Ir/node':>10}")
print(f"  {'baseline':<10}{base:>14}{base / n:>10.2f}")
print(f"  {'clove':<10}{clove:>14}{clove / n:>10.2f}")
print(f"  clove - baseline: {(clove - base) / n:.2f} Ir per node, "
      f"{(clove - base) / p:.2f} Ir per fork/join pair")
PY
