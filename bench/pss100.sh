#!/usr/bin/env bash
# The container's memory (BENCHMARKS.md, "Issue 47: the container's memory"):
# 100 concurrent `reins run` started at once, each on the mock model's
# `hold` script (one bash call, `sleep 40`), so each holds one child
# alive — confined under the default sandbox, or not with --sandbox=off.
# Once every child runs, the PSS (/proc/PID/smaps_rollup) of every process
# of the 100 trees is summed, five samples 1 s apart; printed: the peak sum
# and, at that sample, the sum and the mean per process of each role
# (reins, supervisor, confine-stage init, the program).
#   bench/pss100.sh MOCK REINS [FLAGS...]
# MOCK serves the mock model (a reins whose reins-extra is beside it).
set -euo pipefail
mockbin=$1 bin=$2
shift 2
. bench/lib.sh
mkdir -p "$work/ws" "$work/home"
"$mockbin" mock-llm --addr 127.0.0.1:0 --script bench/pss100.yaml >"$work/mock.out" &
mock=$!
for _ in $(seq 100); do grep -q http "$work/mock.out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$work/mock.out")/v1
export REINS_HOME="$work/home"
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg) $bin $*"
pids=()
for i in $(seq 100); do
  "$bin" run -m openai/mock-model --base-url "$url" --cwd "$work/ws" "$@" '[[hold]] wait' >/dev/null 2>&1 &
  pids+=($!)
done
roots=" ${pids[*]} "
# sample: the PSS of every descendant of the roots (the roots included),
# by role; prints "total reins n sup n init n prog n" in KiB.
sample() {
  ps -e -o pid=,ppid=,args= | awk -v roots="$roots" '
    { pid[NR]=$1; pp[$1]=$2; a=$0; sub(/^ *[0-9]+ +[0-9]+ +/, "", a); args[$1]=a }
    END {
      for (i = 1; i <= NR; i++) {
        p = pid[i]; q = p; ok = 0
        for (d = 0; d < 20 && q > 1; d++) { if (index(roots, " " q " ")) { ok = 1; break }; q = pp[q] }
        if (!ok) continue
        role = "other"
        if (args[p] == "sleep 40") role = "prog"
        if (args[p] ~ /__reins-supervise|__reins-watch/) role = "sup"
        else if (args[p] ~ /__reins-confine/) role = "init"
        else if (args[p] ~ / run -m openai\/mock-model/) role = "reins"
        print p, role
      }
    }' | while read -r p role; do
    s=$(awk '/^Pss:/{print $2}' /proc/$p/smaps_rollup 2>/dev/null || true)
    [ -n "$s" ] && echo "$role $s"
  done | awk '{ s[$1]+=$2; n[$1]++; t+=$2 }
    END { printf "%d %d %d %d %d %d %d %d %d %d %d\n", t, s["reins"], n["reins"], s["sup"], n["sup"], s["init"], n["init"], s["prog"], n["prog"], s["other"], n["other"] }'
}
# Wait until 100 programs run (sleep 40), at most 60 s, then 2 s more
# for the set-up's transients (a stage's fork before its exec) to end.
for _ in $(seq 120); do
  set -- $(sample); [ "${9:-0}" -ge 100 ] && break
  sleep 0.5
done
sleep 2
best=
for _ in 1 2 3 4 5; do
  cur=$(sample)
  if [ -z "$best" ] || [ "${cur%% *}" -gt "${best%% *}" ]; then best=$cur; fi
  sleep 1
done
kill "${pids[@]}" 2>/dev/null || true
wait "${pids[@]}" 2>/dev/null || true
set -- $best
mean() { [ "$2" -gt 0 ] && awk -v s="$1" -v n="$2" 'BEGIN{printf "%.2f", s/n/1024}' || echo -; }
printf 'peak PSS %.1f MiB | reins %d × %s MiB | supervisor %d × %s | init %d × %s | program %d × %s | other %d × %s\n' \
  "$(awk -v t="$1" 'BEGIN{print t/1024}')" "$3" "$(mean "$2" "$3")" "$5" "$(mean "$4" "$5")" "$7" "$(mean "$6" "$7")" "$9" "$(mean "$8" "$9")" "${11}" "$(mean "${10}" "${11}")"
echo "end $(date -u +%H:%M:%S) load $(cut -d' ' -f1 /proc/loadavg)"
