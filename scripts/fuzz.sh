#!/usr/bin/env bash
# Run every fuzz target in the repository for DURATION (default 10s), one
# after another:
#   scripts/fuzz.sh [DURATION] [NAME-REGEX]
# DURATION is a Go duration (30s, 2m) or an exec count (5000x); NAME-REGEX
# keeps only the targets whose name matches (e.g. 'FuzzRead|FuzzStream').
# Targets are found by their `func FuzzXxx(f *testing.F)` in *_test.go, so a
# new one is picked up without editing this script.
# FUZZ_MINIMIZE (default 10s) bounds the minimisation of each new input, so
# a short run fuzzes rather than minimises (go test's default is 60s).
# A failing input is written to the package's testdata/fuzz/<Target>/; keep
# it there as a regression seed once the bug is fixed (plain `go test`
# replays it).
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-10s}"
only="${2:-.}"
minimize="${FUZZ_MINIMIZE:-10s}"

# "./pkg/dir FuzzName" per target, sorted.
mapfile -t targets < <(
  grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' \
      --exclude-dir=node_modules --exclude-dir=testdata . |
    sed -E 's|^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' |
    awk -v re="$only" '$2 ~ re' | sort
)
if ((${#targets[@]} == 0)); then
  echo "no fuzz targets match ${only}" >&2
  exit 2
fi

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
echo "all ${#targets[@]} fuzz targets passed"
