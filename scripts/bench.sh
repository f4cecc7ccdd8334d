#!/usr/bin/env bash
# Build clove and run the tree-sum benchmark (Spice's benchmark): the
# sequential baseline, the root split by hand onto two threads, and clove
# at 1..32 threads, for 1000 and 10 million nodes. Takes a few minutes.
# Usage: scripts/bench.sh [extra tree_sum args, e.g. --csv out.csv]
# With --peers it also runs OpenMP tasks and oneTBB (installing libtbb-dev
# first if missing); that adds about 2 minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
extras=()
for a in "$@"; do if [ "$a" = --peers ]; then extras=(tbb); fi; done
scripts/deps.sh "${extras[@]}"
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs" --target tree_sum idle
build/bench/tree_sum -n 1000 -n 10000000 -t 1 -t 2 -t 4 -t 8 -t 16 -t 32 \
  --baseline --split "$@"
build/bench/idle
