#!/usr/bin/env bash
# Start-up and the two-step task, alternating between reins binaries
# (BENCHMARKS.md, "The reins-extra helper"): for each of three rounds,
# `reins version` of every binary and a hello-world (11 runs each), then
# the two-step task of every binary (7 runs each), medians from
# bench/cmd/measure. The binaries should be static and stripped and
# copied with cp, not freshly linked (see Method). The last binary serves
# the mock model (`mock-llm`, from the reins-extra beside it, or from the
# binary itself for wave 1's), so it must speak every wire the others use:
# put the newest last. A run that exits non-zero stops the script: a
# failed run's time says nothing about the task's.
#   bench/startup.sh HELLO REINS...
set -euo pipefail
hello=$1
shift
. bench/lib.sh
measure="$work/measure"
go build -o "$measure" ./bench/cmd/measure
mkdir -p "$work/home"
serve_two_step "${@: -1}"
export REINS_HOME="$work/home"
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
for r in 1 2 3; do
  for b in "$@" "$hello"; do
    a=version
    [ "$b" = "$hello" ] && a=
    echo "version r$r $b: $("$measure" -n 11 -q -- "$b" $a 2>&1 | tail -1)"
  done
  for b in "$@"; do
    out=$("$measure" -n 7 -q -- "$b" run -m openai/mock-model --base-url "$url" --cwd "$work/ws" '[[two-step]] read notes' 2>&1)
    if grep -q 'exit [1-9]' <<<"$out"; then echo "two-step r$r $b failed:"; echo "$out"; exit 1; fi
    echo "two-step r$r $b: $(tail -1 <<<"$out")"
  done
  echo "load $(cut -d' ' -f1 /proc/loadavg)"
done
echo "end $(date -u +%H:%M:%S)"
