#!/usr/bin/env bash
# Install a configured clove build into a temporary prefix and build the
# consumer in test/consumer against it twice: with CMake's find_package and
# with pkg-config. Usage: scripts/install-check.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: install-check.sh BUILD_DIR}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S test/consumer -B "$prefix/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/consumer" >/dev/null
LD_LIBRARY_PATH="$prefix/lib:${LD_LIBRARY_PATH:-}" "$prefix/consumer/consumer"
if command -v pkg-config >/dev/null 2>&1; then
  pcdir=$(dirname "$(find "$prefix" -name clove.pc | head -n 1)")
  flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs clove)
  cc -std=c11 test/consumer/main.c $flags -o "$prefix/consumer-pc"
  LD_LIBRARY_PATH="$prefix/lib:${LD_LIBRARY_PATH:-}" "$prefix/consumer-pc"
else
  echo "install-check: pkg-config not installed, skipping the pkg-config consumer"
fi
echo "install-check: ok"
