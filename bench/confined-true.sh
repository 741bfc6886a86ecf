#!/usr/bin/env bash
# Wall time of a confined /bin/true, two reins binaries alternating (issue 47
# acceptance 2; BENCHMARKS.md "Issue 47: a confined start"):
#   bench/confined-true.sh OLD_REINS NEW_REINS [MORE_REINS...]
# with stripped binaries (go build -trimpath -ldflags=-s ./cmd/reins) of the
# commits, each named by its path in the output. A binary may be given as
# VAR=VALUE,...@PATH to start its supervisor with those variables, as
# sandbox.Command does (GOMAXPROCS=1,REINS_SUPERVISOR_GOMAXPROCS=0@PATH
# since the supervisor runs with one P). Besides the wall time per
# start it prints the CPU time (user + system of the whole tree: the
# supervisor, the stage and the program, from bash's `times`), which a busy
# machine moves less. It makes two workspaces under $QB (default /tmp/qb): an empty
# one and a repository of 60,000 files with three nested repositories.
# N starts per binary, policy and round (100), R rounds (6).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_REINS NEW_REINS [MORE_REINS...]" >&2; exit 2; }
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
# cpu_us: the children's user + system time that bash's `times` prints last
# (run in this shell, not a command substitution's, whose children are not
# these), in microseconds.
tf=$(mktemp); trap 'rm -f "$tf" "$tf.0" "$tf.1"' EXIT
cpu_us() { times >"$tf"; tail -1 "$tf" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }; printf "%d", t * 1e6 }'; }
for r in $(seq $R); do
  for name in ww-empty ww-60k ro-nonet-60k; do
    for b in "$@"; do
      out=$(
        cpu_us >"$tf.0"; s=$(date +%s%N)
        vars=; bin=$b
        case $b in *@*) vars=${b%%@*}; bin=${b#*@} ;; esac
        for i in $(seq $N); do (cd "$QB/ws60k" && { [ -z "$vars" ] || export ${vars//,/ }; } && "$bin" __reins-supervise "${P[$name]}" -- /bin/true) || echo FAIL >&2; done
        e=$(date +%s%N); cpu_us >"$tf.1"
        echo "us_per_start=$(( (e-s)/N/1000 )) cpu_us_per_start=$(( ($(cat "$tf.1")-$(cat "$tf.0"))/N ))"
      )
      echo "round=$r policy=$name bin=$b $out load=$(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
