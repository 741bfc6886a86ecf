#!/usr/bin/env bash
# Start-up and the two-step task, interleaved (BENCHMARKS.md, "The ninth
# session"): bench/cmd/alternate runs `reins version` of every binary and
# a hello-world, then the two-step task of every binary with the session
# logs on the disk (/tmp) and on tmpfs (/dev/shm), one run of each per
# round, N rounds (default 300). Ratios are to the first binary (the
# baseline: wave 1's); the last serves the mock model (`mock-llm`, which
# must speak every wire the others use: the newest). The two-step runs
# twice per file system: as `openai/` (the Responses wire since wave 3, the
# chat wire in wave 1) and as `deepseek/` (the chat wire in every wave), so
# that a wire's cost, much of it the mock's, is told apart from reins'.
# Binaries should be static and stripped. They are copied into the scratch
# folder first, all at once: two copies of the same bytes made hours apart
# differed by 0.3-0.6 ms a run here (BENCHMARKS.md, "The tenth session").
#   bench/alternate.sh [-n N] HELLO REINS...
set -euo pipefail
n=300
if [ "${1:-}" = -n ]; then n=$2; shift 2; fi
hello=$1
shift
. bench/lib.sh
go build -o "$work/alternate" ./bench/cmd/alternate
# fresh copies, each with its reins-extra when it has one beside it
bins=()
i=0
for b in "$hello" "$@"; do
  mkdir "$work/b$i"
  cp "$b" "$work/b$i/"
  x=$(dirname "$b")/reins-extra
  if [ "$b" != "$hello" ] && [ -e "$x" ]; then cp "$x" "$work/b$i/"; fi
  echo "b$i = $b"
  bins+=("$work/b$i/$(basename "$b")")
  i=$((i + 1))
done
sync
hello=${bins[0]}
set -- "${bins[@]:1}"
serve_two_step "${@: -1}"
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg), $n rounds"
args=(-- "$hello")
for b in "$@"; do args+=(-- "$b" version); done
echo "== reins version"
"$work/alternate" -n "$n" "${args[@]}"
for model in openai/mock-model deepseek/mock-model; do
  for fs in /tmp /dev/shm; do
    args=()
    for b in "$@"; do args+=(-- "$b" run -m "$model" --base-url "$url" --cwd "$work/ws" '[[two-step]] read notes'); done
    echo "== two-step as $model, session logs under $fs"
    "$work/alternate" -n "$n" -home "$fs" "${args[@]}"
  done
done
echo "end $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
