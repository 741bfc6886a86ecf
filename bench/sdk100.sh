#!/usr/bin/env bash
# 100 `BIN sdk` started at once, each idle on one held-open fifo; prints
# the sum of their smaps_rollup RSS and PSS after 15 s (BENCHMARKS.md).
#   bench/sdk100.sh BIN
bin=$1; d=$(mktemp -d); mkfifo $d/f
sleep 60 > $d/f & holder=$!
pids=()
for i in $(seq 100); do "$bin" sdk < $d/f > /dev/null 2>&1 & pids+=($!); done
sleep 15
rss=0; pss=0; n=0
for p in "${pids[@]}"; do
  if [ -r /proc/$p/smaps_rollup ]; then
    r=$(awk '/^Rss:/{print $2}' /proc/$p/smaps_rollup); s=$(awk '/^Pss:/{print $2}' /proc/$p/smaps_rollup)
    rss=$((rss+r)); pss=$((pss+s)); n=$((n+1))
  fi
done
kill "${pids[@]}" $holder 2>/dev/null; wait 2>/dev/null; rm -rf $d
echo "$(basename $bin): $n alive, total RSS $((rss/1024)) MiB, total PSS $((pss/1024)) MiB"
