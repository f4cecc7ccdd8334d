#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check that a project can build against clove in each supported way, with
# the consumer in test/consumer (a parallel sum it checks itself):
#   1. install BUILD_DIR into a temporary prefix, then CMake find_package;
#   2. the same prefix with pkg-config --cflags --libs clove (skipped, with
#      a message, if pkg-config is not installed);
#   3. CMake add_subdirectory of this source tree;
#   4. CMake FetchContent from this source tree as a local path.
# 3 and 4 build the library from source inside the consumer, with the
# default compiler, and check that clove's tests, benchmarks and examples
# are not built there. Usage: scripts/install-check.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=${1:?usage: install-check.sh BUILD_DIR}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
run() { LD_LIBRARY_PATH="$prefix/lib:${LD_LIBRARY_PATH:-}" "$@"; }

echo "install-check: find_package(clove) from an installed prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S test/consumer -B "$prefix/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
run "$prefix/consumer/consumer"

if command -v pkg-config >/dev/null 2>&1; then
  echo "install-check: pkg-config --cflags --libs clove"
  pcdir=$(dirname "$(find "$prefix" -name clove.pc | head -n 1)")
  flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs clove)
  cc -std=c11 test/consumer/main.c $flags -o "$prefix/consumer-pc"
  run "$prefix/consumer-pc"
else
  echo "install-check: pkg-config not installed, skipping the pkg-config consumer"
fi

for mode in subdir fetch; do
  echo "install-check: $mode (source tree at $src)"
  cmake -S test/consumer -B "$prefix/consumer-$mode" -DCLOVE_CONSUMER_MODE=$mode \
    -DCLOVE_SOURCE_DIR="$src" >/dev/null
  cmake --build "$prefix/consumer-$mode" -j2 >/dev/null
  "$prefix/consumer-$mode/consumer"
done
echo "install-check: ok"
