#!/bin/sh
# SPDX-License-Identifier: MIT
# callgrind.sh - instructions per node of the tree sum: sequential baseline
# vs each of clove's forms of fork with a 1-thread pool (the not-taken
# fork/join path only).
#
# Usage: bench/callgrind.sh [BUILD_DIR] [NODES] [IMPL...]
#   BUILD_DIR  a CMake build directory of this repository (default: build/
#              next to this script's parent; configured and built if absent)
#   NODES      tree size (default 1000000)
#   IMPL       tree_sum's clove forms to count (default: clove args join2
#              clove-dbg args-dbg join2-dbg; the -dbg ones are built without
#              NDEBUG)
#
# Each implementation gets its own valgrind run of tree_sum --only IMPL with
# one timed run, no warm-up and no calibration. Collection is switched on
# only inside the timed entry point (--toggle-collect=run_baseline* or
# run_clove*), so building the tree, creating the pool and the setup of the
# process are not counted. clove's figures include one clove_pool_run.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
n=${2:-1000000}
[ $# -gt 2 ] && shift 2 || set -- clove args join2 clove-dbg args-dbg join2-dbg

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
    entry=run_clove
    [ "$1" = baseline ] && entry=run_baseline
    valgrind --tool=callgrind --callgrind-out-file="$tmp/$1.out" \
        --toggle-collect="$entry*" \
        "$exe" --only "$1" -n "$n" -t 1 --reps 1 --warmup 0 --batch 1 \
        >"$tmp/$1.stdout" 2>"$tmp/$1.stderr" || {
        cat "$tmp/$1.stderr" >&2; exit 1; }
    # The out file ends with "totals: <Ir>" (older valgrind: "summary:").
    awk '/^(totals|summary):/ { v = $2 } END { if (v == "") exit 1; print v }' "$tmp/$1.out"
}

counts="baseline=$(irs baseline)"
for impl in "$@"; do
    counts="$counts $impl=$(irs "$impl")"
done

python3 - "$n" $counts <<'PY'
import sys
from functools import lru_cache
n = int(sys.argv[1])
ir = [(a.split('=')[0], int(a.split('=')[1])) for a in sys.argv[2:]]
base = ir[0][1]

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
print(f"  {'impl':<10}{'Ir total':>14}{'Ir/node':>10}{'- baseline':>12}{'per pair':>10}")
for name, v in ir:
    extra = f"{(v - base) / n:>12.2f}{(v - base) / p:>10.2f}" if name != 'baseline' else ''
    print(f"  {name:<10}{v:>14}{v / n:>10.2f}{extra}")
print("  (- baseline: the extra Ir per node; per pair: per fork/join pair)")
PY
