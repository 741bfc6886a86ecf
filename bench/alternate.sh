#!/usr/bin/env bash
# Start-up and the two-step task, interleaved (BENCHMARKS.md, "The ninth
# session"): bench/cmd/alternate runs `reins version` of every binary and
# a hello-world, then the two-step task of every binary with the session
# logs on the disk (/tmp) and on tmpfs (/dev/shm), one run of each per
# round, N rounds (default 300). Ratios are to the first binary (the
# baseline: wave 1's); the last serves the mock model (`mock-llm`, which
# must speak every wire the others use: the newest). Binaries should be
# static, stripped and copied with cp (see Method).
#   bench/alternate.sh [-n N] HELLO REINS...
set -euo pipefail
n=300
if [ "${1:-}" = -n ]; then n=$2; shift 2; fi
hello=$1
shift
. bench/lib.sh
go build -o "$work/alternate" ./bench/cmd/alternate
serve_two_step "${@: -1}"
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg), $n rounds"
args=(-- "$hello")
for b in "$@"; do args+=(-- "$b" version); done
echo "== reins version"
"$work/alternate" -n "$n" "${args[@]}"
for fs in /tmp /dev/shm; do
  args=()
  for b in "$@"; do args+=(-- "$b" run -m openai/mock-model --base-url "$url" --cwd "$work/ws" '[[two-step]] read notes'); done
  echo "== two-step, session logs under $fs"
  "$work/alternate" -n "$n" -home "$fs" "${args[@]}"
done
echo "end $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
