#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check that every tracked source, header, script and build file carries an
# "SPDX-License-Identifier: MIT" line among its first three lines (a shebang
# comes first where there is one), and that LICENSE is the MIT licence.
# Prints each file that lacks it and exits 1 if any does.
# Usage: scripts/check-spdx.sh
set -euo pipefail
cd "$(dirname "$0")/.."
missing=0
if ! grep -q '^MIT License$' LICENSE 2>/dev/null; then
  echo "check-spdx: LICENSE is missing or is not the MIT licence" >&2
  missing=1
fi
while IFS= read -r f; do
  case "$f" in
    *.c|*.h|*.cpp|*.hpp|*.rs|*.pml|*.py|*.sh|*.cmake|*.in|*.toml|*.3|\
    CMakeLists.txt|*/CMakeLists.txt|.ci/run) ;;
    *) continue ;;
  esac
  if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT'; then
    echo "check-spdx: $f has no SPDX-License-Identifier: MIT line" >&2
    missing=1
  fi
done < <(git ls-files)
[ "$missing" -eq 0 ] || exit 1
echo "check-spdx: every source, header, script and build file is MIT"
