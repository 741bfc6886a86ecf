#!/usr/bin/env bash
# Per-child overhead of each engine (BENCHMARKS.md, "Engines"): `reins
# batch` of N tasks against the in-process mock model (mock/echo: no
# network, no delay), on the local engine and on the temporal engine with
# one `reins worker` and a local `temporal server start-dev`, at
# --parallel 1 (one child after another: the latency a child adds) and
# --parallel 8. Needs the temporal CLI that scripts/test caches.
#   bench/engine.sh [N]    (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
temporal=${REINS_TEST_TEMPORAL:-${XDG_CACHE_HOME:-$HOME/.cache}/reins-test/temporal-v1.5.1/temporal}
[ -x "$temporal" ] || { echo "bench/engine.sh: no temporal CLI at $temporal (run scripts/test once)" >&2; exit 2; }
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$work/reins" ./cmd/reins
# reins worker and the temporal engine need the helper beside reins.
CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$work/reins-temporal" ./cmd/reins-temporal
# reins batch becomes the reins-extra beside reins.
CGO_ENABLED=0 go build -trimpath -ldflags=-s -o "$work/reins-extra" ./cmd/reins-extra
for i in $(seq 1 "$n"); do echo "{\"id\":\"t$i\",\"prompt\":\"task $i\"}"; done > "$work/tasks.jsonl"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$temporal" server start-dev --ip 127.0.0.1 --headless --port "$port" --http-port 0 --metrics-port 0 \
  --db-filename "$work/t.db" --log-level error >"$work/server.log" 2>&1 &
pids+=($!)
server=$!
# The dev server's CPU so far (user + system, in ms), from /proc: what one
# task costs the cluster is its growth over a batch, divided by N.
server_cpu() {
  local tck; tck=$(getconf CLK_TCK)
  awk -v t="$tck" '{ print int(($14 + $15) * 1000 / t) }' "/proc/$server/stat" 2>/dev/null || echo 0
}
for _ in $(seq 1 300); do (echo >/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
printf 'subagents:\n  engine: temporal\n  maxParallel: 8\n  temporal: {address: "127.0.0.1:%s", taskQueue: bench}\n' "$port" > "$work/temporal.yaml"
REINS_HOME="$work/worker" "$work/reins" worker --config "$work/temporal.yaml" --parallel 8 2>"$work/worker.log" &
pids+=($!)
sleep 1
run() { # engine parallel
  local cfg=() ; [ "$1" = temporal ] && cfg=(--config "$work/temporal.yaml")
  local t0 t1 c0 c1
  c0=$(server_cpu)
  t0=$(date +%s%N)
  REINS_HOME="$work/home-$1-$2" "$work/reins" batch "${cfg[@]}" -m mock/echo --parallel "$2" -o "$work/out-$1-$2.jsonl" "$work/tasks.jsonl" 2>/dev/null
  t1=$(date +%s%N)
  c1=$(server_cpu)
  local ok; ok=$(grep -c '"stopReason":"completed"' "$work/out-$1-$2.jsonl")
  awk -v e="$1" -v p="$2" -v n="$n" -v ok="$ok" -v ns=$((t1 - t0)) -v cpu=$((c1 - c0)) \
    'BEGIN { printf "%-9s --parallel %-2d  %4d/%d completed  %7.2f s  %6.1f ms per child  %6.1f tasks/s  server CPU %.1f ms per task\n", e, p, ok, n, ns/1e9, ns/1e6/n, n/(ns/1e9), cpu/n }'
}
for e in local temporal; do for p in 1 8; do run "$e" "$p"; done; done
