#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Cross-build clove for another architecture, run the whole test suite
# under an emulator, then random fork/join programs (clove_stress).
# Usage: scripts/cross-check.sh aarch64 [build-dir] [stress-seconds]
# aarch64: Debian's gcc-aarch64-linux-gnu and qemu-user (installed by
# scripts/deps.sh aarch64); the toolchain file is cmake/aarch64-linux-gnu.cmake.
# Emulation runs the code but shows nothing of Arm's weaker memory
# ordering: docs/design.md, "Memory orders", has the audit for that.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/cross-check.sh aarch64 [build-dir] [stress-seconds]}
case "$target" in
  aarch64) toolchain=cmake/aarch64-linux-gnu.cmake
    emulator=(qemu-aarch64 -L /usr/aarch64-linux-gnu) ;;
  *) echo "cross-check.sh: unknown target '$target' (known: aarch64)" >&2; exit 2 ;;
esac
dir=${2:-build-$target}
seconds=${3:-60}
scripts/deps.sh "$target"
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=Release \
  -DCLOVE_WERROR=ON -DCLOVE_BUILD_BENCH=OFF >/dev/null
cmake --build "$dir" -j "$jobs"
# About 20x slower than native; the suite's own timeouts allow for it.
(cd "$dir" && ctest -j "$jobs" --output-on-failure --timeout 600)
seed=${CLOVE_STRESS_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
"${emulator[@]}" "$dir/test/clove_stress" --seed "$seed" --seconds "$seconds"
