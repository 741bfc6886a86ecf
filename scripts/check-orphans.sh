#!/usr/bin/env bash
# Fail if any process started by the test suite is still alive.
#
# Every process a test starts carries REINS_TEST_MARK in its environment
# (internal/testutil: Mark in TestMain, MarkChildren per test), and children
# inherit it. Run this after `go test ./...`: a marked process that outlives
# the suite is an orphan (docs/subagents.md). Processes being torn down get a grace of
# WAIT seconds (default 5) to go; zombies have exited and do not count.
#   scripts/check-orphans.sh [WAIT]
set -euo pipefail

wait_s="${1:-5}"

scan() {
  local d pid mark
  for d in /proc/[0-9]*; do
    pid="${d#/proc/}"
    [ "$pid" = "$$" ] && continue
    [ "$pid" = "$BASHPID" ] && continue
    # Not readable (another user's, or gone): not ours.
    mark=$(tr '\0' '\n' 2>/dev/null <"$d/environ" | sed -n 's/^REINS_TEST_MARK=//p' | head -n1) || continue
    [ -n "$mark" ] || continue
    printf '  pid %s [REINS_TEST_MARK=%s] %s\n' "$pid" "$mark" "$(tr '\0' ' ' 2>/dev/null <"$d/cmdline")"
  done
}

deadline=$((SECONDS + wait_s))
while :; do
  left=$(scan)
  if [ -z "$left" ]; then
    echo "no orphaned test processes"
    exit 0
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    break
  fi
  sleep 0.2
done

echo "FAIL: processes started by the tests are still alive:"
echo "$left"
exit 1
