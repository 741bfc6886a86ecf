#!/usr/bin/env bash
# bench/search.sh — reins's grep and glob tools against ripgrep on a tree of
# at least 1 GB and 50,000 files built from the Go module cache (BENCHMARKS.md,
# "Search"). Runs alternate (reins, rg, rg, reins, …) so drift hits both.
#
#   bench/search.sh [RUNS]     # default 5 runs of each, warm and cold
#
# Cold runs drop the page cache first (echo 3 > /proc/sys/vm/drop_caches; needs
# root, skipped otherwise). Needs rg (Debian ripgrep) and Go.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
tree=${REINS_BENCH_TREE:-/tmp/reins-search-tree}
command -v rg >/dev/null || { echo "bench/search.sh: rg not found (apt-get install ripgrep)" >&2; exit 2; }

if [ ! -d "$tree" ]; then
  src=$(go env GOMODCACHE)
  echo "== building $tree from $src"
  mkdir -p "$tree"
  cp -r "$src"/. "$tree"/
  chmod -R u+w "$tree"
fi
echo "== tree: $(du -sh "$tree" | cut -f1), $(find "$tree" -type f | wc -l) files"

bin=$(mktemp -d)/toolbench
go build -o "$bin" ./bench/cmd/toolbench
pat=ZZQX_NO_SUCH_TEXT_4711
lit=Sprintf

# timeit NAME CMD...: runs CMD, prints "NAME WALL CPU LOAD1" (CPU = user+sys
# seconds, which load moves less than wall; LOAD1 the 1-minute load average
# when the run ended: the machine is shared).
timeit() {
  local name=$1; shift
  local tf; tf=$(mktemp)
  /usr/bin/time -o "$tf" -f "%e %U %S" "$@" >/dev/null 2>&1 || true
  read -r w u s < <(tail -n 1 "$tf"); rm -f "$tf"
  echo "$name $w $(echo "$u + $s" | bc) $(cut -d' ' -f1 /proc/loadavg)"
}
cold() { if [ -w /proc/sys/vm/drop_caches ]; then sync; echo 3 >/proc/sys/vm/drop_caches; fi; }

declare -A cmds
cmds[reins-grep-nomatch]="$bin -C $tree grep {\"pattern\":\"$pat\",\"output_mode\":\"files_with_matches\"}"
cmds[rg-grep-nomatch]="rg -l $pat $tree"
cmds[reins-grep-literal]="$bin -C $tree grep {\"pattern\":\"$lit\",\"output_mode\":\"count\"}"
cmds[rg-grep-literal]="rg -c $lit $tree"
cmds[reins-glob-go]="$bin -C $tree glob {\"pattern\":\"**/*.go\"}"
cmds[rg-glob-go]="rg --files -g *.go $tree"

pairs="grep-nomatch grep-literal glob-go"
out=$(mktemp)
for mode in warm cold; do
  for p in $pairs; do
    # one unmeasured warm-up of each
    [ $mode = warm ] && { ${cmds[reins-$p]} >/dev/null 2>&1 || true; ${cmds[rg-$p]} >/dev/null 2>&1 || true; }
    for i in $(seq 1 "$runs"); do
      if [ $((i % 2)) = 1 ]; then order="reins rg"; else order="rg reins"; fi
      for who in $order; do
        [ $mode = cold ] && cold
        timeit "$mode $p $who" ${cmds[$who-$p]} >>"$out"
      done
    done
  done
done
echo "== sample outputs"
for p in $pairs; do echo "reins $p: $(${cmds[reins-$p]} 2>&1 | head -1)"; echo "rg $p: $(${cmds[rg-$p]} 2>/dev/null | wc -l) lines"; done
echo "== every run (mode workload who wall cpu load1)"
cat "$out"
med() { awk -v k="$1" -v c="$2" '$1" "$2" "$3==k {print $c}' "$out" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "== medians (runs=$runs): wall and CPU (user+sys) seconds, load average range"
printf "%-5s %-14s %8s %8s %6s %8s %8s %6s %s\n" mode workload wall-reins wall-rg ratio cpu-reins cpu-rg ratio load
for mode in warm cold; do
  for p in $pairs; do
    r=$(med "$mode $p reins" 4); g=$(med "$mode $p rg" 4)
    rc=$(med "$mode $p reins" 5); gc=$(med "$mode $p rg" 5)
    ld=$(awk -v m="$mode" -v p="$p" '$1==m && $2==p {print $6}' "$out" | sort -n | sed -n '1p;$p' | paste -sd-)
    printf "%-5s %-14s %8.2f %8.2f %6.2f %8.2f %8.2f %6.2f %s\n" "$mode" "$p" "$r" "$g" "$(echo "$r / $g" | bc -l)" "$rc" "$gc" "$(echo "$rc / $gc" | bc -l)" "$ld"
  done
done
