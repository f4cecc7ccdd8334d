#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build examples/mpi (the distributed sample sort, docs/mpi.md) in its own
# build folder and run it on 2 ranks, with a time limit: once through CTest
# (example.mpi_sort) and once with a direct mpirun at a larger size.
# Needs an MPI implementation with mpicc and mpirun (scripts/deps.sh mpi).
# Usage: scripts/mpi-check.sh [BUILD_DIR]   (default build-mpi)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-mpi}
cmake -S . -B "$build" -DCLOVE_BUILD_MPI_EXAMPLE=ON -DCLOVE_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target example_mpi_sort -j2 >/dev/null
(cd "$build" && ctest -L mpi --output-on-failure --timeout 120)

# Open MPI refuses to run as root and to start more ranks than there are
# cores unless told; neither matters for a check. --bind-to none lets each
# rank's pool use every CPU rather than the one core Open MPI binds it to.
flags=()
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  flags=(--oversubscribe --bind-to none)
fi
timeout 300 mpirun "${flags[@]}" -np 2 "$build/examples/mpi/sample_sort" 2000000 2
