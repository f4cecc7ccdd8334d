#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check that a program built with -fsanitize=thread against the ordinary,
# uninstrumented clove package gets no ThreadSanitizer report on correct
# code (the library tells the TSan runtime about the happens-before edges
# its atomics make; src/internal.h, "ThreadSanitizer in the user's
# program"). For each BUILD_DIR (a configured and built clove, static or
# shared):
#   1. install it into a temporary prefix;
#   2. build the random fork/join programs (test/stress/stress.c) with
#      -fsanitize=thread and the debug checks on, through pkg-config, and
#      run them for SECONDS with TSan halting on the first report;
#   3. build test/consumer through find_package with -fsanitize=thread and
#      run it.
# Then a negative control: the same library with the annotations compiled
# out (-DCLOVE_TSAN=1 without the sanitizer) must make TSan report a race,
# or this check could not fail. Needs gcc or clang with libtsan and
# pkg-config. Usage: scripts/tsan-consumer-check.sh SECONDS BUILD_DIR...
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: tsan-consumer-check.sh SECONDS BUILD_DIR...}
shift
[ "$#" -ge 1 ] || { echo "usage: tsan-consumer-check.sh SECONDS BUILD_DIR..." >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
cc=${CC:-cc}

# install_and_build DIR PREFIX: install DIR into PREFIX, build the stress
# programs against it (pkg-config) as PREFIX/stress.
install_and_build() {
  cmake --install "$1" --prefix "$2" >/dev/null
  local pc
  pc=$(dirname "$(find "$2" -name clove.pc | head -n 1)")
  # shellcheck disable=SC2046
  "$cc" -std=c11 -O1 -g -fsanitize=thread -D_GNU_SOURCE test/stress/stress.c \
    $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs clove) -Wl,-rpath,"$2/lib" \
    -o "$2/stress"
}

i=0
for build in "$@"; do
  i=$((i + 1))
  prefix="$work/prefix$i"
  echo "tsan-consumer-check: $build, stress programs for ${seconds}s under -fsanitize=thread"
  install_and_build "$build" "$prefix"
  "$prefix/stress" --seconds "$seconds" | tail -n 1
  echo "tsan-consumer-check: $build, find_package consumer under -fsanitize=thread"
  cmake -S test/consumer -B "$work/consumer$i" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_FLAGS="-fsanitize=thread -g" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
    -DCMAKE_BUILD_RPATH="$prefix/lib" >/dev/null
  cmake --build "$work/consumer$i" >/dev/null
  "$work/consumer$i/consumer"
done

echo "tsan-consumer-check: negative control (annotations compiled out) must report"
cmake -S . -B "$work/noann" -DCMAKE_BUILD_TYPE=Release -DCLOVE_BUILD_TESTS=OFF \
  -DCLOVE_BUILD_BENCH=OFF -DCLOVE_BUILD_EXAMPLES=OFF -DCMAKE_C_FLAGS=-DCLOVE_TSAN=1 >/dev/null
cmake --build "$work/noann" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
install_and_build "$work/noann" "$work/prefix-noann"
rc=0
"$work/prefix-noann/stress" --seconds "$seconds" >"$work/noann.log" 2>&1 || rc=$?
if [ "$rc" -ne 66 ] || ! grep -q "WARNING: ThreadSanitizer" "$work/noann.log"; then
  echo "tsan-consumer-check: without the annotations TSan did not report (exit $rc):" \
       "this check cannot tell them apart" >&2
  tail -n 5 "$work/noann.log" >&2
  exit 1
fi
echo "tsan-consumer-check: negative control reported as expected: $(grep -m1 '^SUMMARY' "$work/noann.log")"
echo "tsan-consumer-check: ok"
