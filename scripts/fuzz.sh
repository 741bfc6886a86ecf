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

# corpus lists the failing inputs go test has written for a target.
corpus() { ls "$1/testdata/fuzz/$2" 2>/dev/null || true; }

failed=()
for t in "${targets[@]}"; do
  read -r pkg name <<<"$t"
  echo "== $name ($pkg, $duration)"
  before="$(corpus "$pkg" "$name")"
  log="$(mktemp)"
  if go test -run='^$' -fuzz="^${name}\$" -fuzztime="$duration" -fuzzminimizetime="$minimize" "$pkg" 2>&1 | tee "$log"; then
    rm -f "$log"
    continue
  fi
  # Go 1.26's fuzz coordinator can end a duration-bounded run with a bare
  # "context deadline exceeded" when the deadline races a busy worker
  # (go.dev/issue/75804, fixed in Go 1.27): no input failed and none was
  # written. Only that exact case is run again, with an exec-count budget,
  # which has no deadline to race; any other failure, or a written input,
  # fails at once.
  if [[ "$(corpus "$pkg" "$name")" == "$before" ]] && grep -qx '    context deadline exceeded' "$log" &&
    ! grep -q -e '--- FAIL: .*/' -e 'Failing input written' -e 'panic:' "$log"; then
    echo "== $name: the fuzz deadline race of go.dev/issue/75804 (no failing input); again with ${RETRY_EXECS:-3000}x"
    if go test -run='^$' -fuzz="^${name}\$" -fuzztime="${RETRY_EXECS:-3000}x" -fuzzminimizetime="$minimize" "$pkg"; then
      rm -f "$log"
      continue
    fi
  fi
  rm -f "$log"
  failed+=("$pkg $name")
done

if ((${#failed[@]})); then
  echo "fuzz targets that failed:"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "all ${#targets[@]} fuzz targets passed"
