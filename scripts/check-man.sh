#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Check that the man page docs/clove.3 renders without a single warning:
# groff with all warnings on (-ww), then man(1) with --warnings as a user
# would see it. Any output on stderr fails. Needs groff and man-db
# (scripts/deps.sh man). Usage: scripts/check-man.sh [page]
set -euo pipefail
cd "$(dirname "$0")/.."
page=${1:-docs/clove.3}
fail=0
for tool in groff man; do
  if [ "$tool" = groff ]; then
    warnings=$(groff -man -ww -z "$page" 2>&1 >/dev/null) || fail=1
  else
    warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null) || fail=1
  fi
  if [ -n "$warnings" ]; then
    printf 'check-man: %s warns about %s:\n%s\n' "$tool" "$page" "$warnings" >&2
    fail=1
  fi
done
[ "$fail" -eq 0 ] || exit 1
echo "check-man: $page renders without warnings"
