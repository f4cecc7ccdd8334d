#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check that the README, the changelog, the docs and man pages, the
# headers, sources, tests, examples, benchmarks, the simulator, the model,
# scripts and build files say nothing that means nothing
# outside this repository: no issue-tracker numbers and no paths outside
# the checkout. Prints each offending line; exits 1 if there is any.
# Usage: scripts/check-refs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
pattern='tracker|issue #?[0-9]+|\.\./shared|shared/(DESIGN|ANCHORS|STYLE|seeds)|/work/|/root/|/home/'
if git grep -n -i -E "$pattern" -- README.md CHANGELOG.md docs include src test examples \
     scripts cmake CMakeLists.txt .ci bench sim model ':!scripts/check-refs.sh'; then
  echo "check-refs: the lines above refer to a tracker or to paths outside the repository" >&2
  exit 1
fi
echo "check-refs: no tracker numbers or outside paths"
