#!/usr/bin/env bash
# Run every fuzz target for DURATION (default 10s) one after another:
#   scripts/fuzz.sh [DURATION]
# DURATION is a Go duration (30s, 2m) or an exec count (5000x).
# FUZZ_MINIMIZE (default 10s) bounds the minimisation of each new input, so
# a short run fuzzes rather than minimises (go test's default is 60s). A failing
# input is written to the package's testdata/fuzz/<Target>/; keep it there
# as a regression seed once the bug is fixed (plain `go test` replays it).
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-10s}"
minimize="${FUZZ_MINIMIZE:-10s}"
targets=(
  "./internal/session FuzzRead"
  "./internal/llm/openai FuzzStream"
  "./internal/llm/anthropic FuzzStream"
  "./internal/llm/mock FuzzParse"
  "./internal/tool FuzzResolve"
  "./internal/tool FuzzToolArgs"
)

failed=()
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  echo "== $name ($pkg, $duration)"
  if ! go test -run='^$' -fuzz="^${name}\$" -fuzztime="$duration" -fuzzminimizetime="$minimize" "$pkg"; then
    failed+=("$pkg $name")
  fi
done

if ((${#failed[@]})); then
  echo "fuzz targets that failed:"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "all fuzz targets passed"
