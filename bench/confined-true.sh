#!/usr/bin/env bash
# Wall time of a confined /bin/true, two reins binaries alternating (issue 47
# acceptance 2; BENCHMARKS.md "Issue 47: a confined start"):
#   bench/confined-true.sh OLD_REINS NEW_REINS
# with stripped binaries (go build -trimpath -ldflags=-s ./cmd/reins) of the
# two commits. It makes two workspaces under $QB (default /tmp/qb): an empty
# one and a repository of 60,000 files with three nested repositories.
# N starts per binary, policy and round (100), R rounds (6).
set -euo pipefail
old=$1 new=$2
QB=${QB:-/tmp/qb}
N=${N:-100}; R=${R:-6}
if [ ! -d "$QB/ws60k/.git" ]; then
  mkdir -p "$QB/ws60k" && git -C "$QB/ws60k" init -q
  for a in $(seq 0 59); do for b in $(seq 0 9); do
    d="$QB/ws60k/pkg$a/mod$b"; mkdir -p "$d"
    for c in $(seq 0 99); do printf x >"$d/f$c.txt"; done
  done; done
  for r in pkg3 pkg17/mod2 pkg40; do git -C "$QB/ws60k/$r" init -q; done
fi
pol() { printf '{"mode":"%s","workspace":"%s"%s}' "$1" "$2" "$3"; }
declare -A P
P[ww-empty]=$(pol workspace-write $QB/wsempty "")
P[ww-60k]=$(pol workspace-write $QB/ws60k "")
P[ro-nonet-60k]=$(pol read-only $QB/ws60k ',"denyNetwork":true')
mkdir -p "$QB/wsempty"
declare -A bins=([old]=$old [new]=$new)
for r in $(seq $R); do
  for name in ww-empty ww-60k ro-nonet-60k; do
    for b in old new; do
      s=$(date +%s%N)
      for i in $(seq $N); do (cd "$QB/ws60k" && "${bins[$b]}" __reins-supervise "${P[$name]}" -- /bin/true) || echo FAIL; done
      e=$(date +%s%N)
      echo "round=$r policy=$name bin=$b us_per_start=$(( (e-s)/N/1000 )) load=$(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
