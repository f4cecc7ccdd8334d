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
# default compiler and no build type, and check that clove's tests,
# benchmarks, examples and test library are not built there, that the
# parent's (empty) build type is left alone, and that the parent's
# `cmake --install` installs nothing of clove unless it sets CLOVE_INSTALL.
# Also: clove at top level with -DCLOVE_BUILD_TESTS=OFF defines no test
# library, and a shared library's SONAME is libclove.so.MAJOR.
# Usage: scripts/install-check.sh BUILD_DIR
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

major=$(sed -n 's/^#define CLOVE_VERSION_MAJOR \([0-9]*\)$/\1/p' include/clove.h)
so=$(find "$prefix" -name 'libclove.so.*.*' | head -n 1)
if [ -n "$so" ]; then
  soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
  echo "install-check: shared library $(basename "$so"), SONAME $soname"
  [ "$soname" = "libclove.so.$major" ] ||
    { echo "install-check: SONAME $soname, expected libclove.so.$major" >&2; exit 1; }
fi

for mode in subdir fetch; do
  echo "install-check: $mode (source tree at $src)"
  cmake -S test/consumer -B "$prefix/consumer-$mode" -DCLOVE_CONSUMER_MODE=$mode \
    -DCLOVE_SOURCE_DIR="$src" >/dev/null
  cmake --build "$prefix/consumer-$mode" -j2 >/dev/null
  "$prefix/consumer-$mode/consumer"
  # The parent's install installs nothing of clove.
  cmake --install "$prefix/consumer-$mode" --prefix "$prefix/parent-$mode" >/dev/null
  if [ -n "$(find "$prefix/parent-$mode" -type f 2>/dev/null)" ]; then
    echo "install-check: the parent's install installed clove files:" >&2
    find "$prefix/parent-$mode" -type f >&2
    exit 1
  fi
done

echo "install-check: subdir with CLOVE_INSTALL=ON installs clove"
cmake -S test/consumer -B "$prefix/consumer-inst" -DCLOVE_CONSUMER_MODE=subdir \
  -DCLOVE_SOURCE_DIR="$src" -DCLOVE_INSTALL=ON >/dev/null
cmake --build "$prefix/consumer-inst" -j2 >/dev/null
cmake --install "$prefix/consumer-inst" --prefix "$prefix/parent-inst" >/dev/null
for f in include/clove.h include/clove.hpp; do
  [ -f "$prefix/parent-inst/$f" ] ||
    { echo "install-check: CLOVE_INSTALL=ON did not install $f" >&2; exit 1; }
done

echo "install-check: top level with -DCLOVE_BUILD_TESTS=OFF defines no test library"
cmake -S . -B "$prefix/notests" -DCLOVE_BUILD_TESTS=OFF -DCLOVE_BUILD_BENCH=OFF \
  -DCLOVE_BUILD_EXAMPLES=OFF >/dev/null
if cmake --build "$prefix/notests" --target help | grep -q clove_testlib; then
  echo "install-check: clove_testlib is defined with CLOVE_BUILD_TESTS=OFF" >&2
  exit 1
fi
grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$prefix/notests/CMakeCache.txt" ||
  { echo "install-check: top level without a build type did not default to Release" >&2; exit 1; }
echo "install-check: ok"
