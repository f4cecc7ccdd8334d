#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what building and testing clove needs on Debian, if missing:
# a C compiler, CMake and make. Nothing else is required by the library.
# Optional extras (clang for the warnings build, valgrind for instruction
# counts, oneTBB for the tree_sum peers, Open MPI for examples/mpi, groff
# and man-db to check the man pages, pkg-config for the consumer checks,
# cargo and Debian's rayon crate for the Rayon companion bench/rayon,
# gnuplot for bench/plot.sh, the aarch64 cross compilers and qemu-user, or
# mingw-w64 and Wine, for scripts/cross-check.sh) are installed only when
# asked:
# scripts/deps.sh clang valgrind tbb mpi man pkgconfig rayon plot aarch64 mingw
set -euo pipefail
need=()
command -v cc >/dev/null 2>&1 || need+=(build-essential)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v make >/dev/null 2>&1 || need+=(make)
for extra in "$@"; do
  case "$extra" in
    clang) command -v clang >/dev/null 2>&1 || need+=(clang) ;;
    valgrind) command -v valgrind >/dev/null 2>&1 || need+=(valgrind) ;;
    tbb) dpkg -s libtbb-dev >/dev/null 2>&1 || need+=(libtbb-dev) ;;
    mpi) { command -v mpicc && command -v mpirun; } >/dev/null 2>&1 ||
      need+=(libopenmpi-dev openmpi-bin) ;;
    rayon) command -v cargo >/dev/null 2>&1 || need+=(cargo)
      dpkg -s librust-rayon-dev >/dev/null 2>&1 || need+=(librust-rayon-dev) ;;
    plot) command -v gnuplot >/dev/null 2>&1 || need+=(gnuplot-nox) ;;
    aarch64) command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 ||
      need+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross)
      command -v qemu-aarch64 >/dev/null 2>&1 || need+=(qemu-user) ;;
    mingw) command -v x86_64-w64-mingw32-gcc-posix >/dev/null 2>&1 ||
      need+=(gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64)
      command -v wine >/dev/null 2>&1 || need+=(wine wine64) ;;
    pkgconfig) command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config) ;;
    man) command -v groff >/dev/null 2>&1 || need+=(groff-base)
      command -v man >/dev/null 2>&1 || need+=(man-db) ;;
    *) echo "deps.sh: unknown extra '$extra'" >&2; exit 2 ;;
  esac
done
((${#need[@]})) || exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "deps.sh: installing ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
