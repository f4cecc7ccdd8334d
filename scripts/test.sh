#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build clove (Release, warnings as errors) and run the whole test suite.
# Usage: scripts/test.sh [build-dir] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
dir=${1:-build}
shift || true
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCLOVE_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j "$jobs"
(cd "$dir" && ctest -j "$jobs" --output-on-failure --timeout 300)
