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
work=$(mktemp -d)
mock=
cleanup() { [ -n "$mock" ] && kill "$mock" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
go build -o "$work/alternate" ./bench/cmd/alternate
mkdir -p "$work/ws"
printf '[[notes-content]] hello\n' >"$work/ws/notes.txt"
"${@: -1}" mock-llm --addr 127.0.0.1:0 --script bench/scripts/two-step.reins.yaml >"$work/mock.out" &
mock=$!
for _ in $(seq 100); do grep -q http "$work/mock.out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$work/mock.out")/v1
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
