#!/usr/bin/env bash
# bench/run.sh — the side-by-side benchmarks of BENCHMARKS.md in one command.
#
#   bench/run.sh            # every workload, 7 measured runs each, then the Go microbenchmarks
#   bench/run.sh --quick    # 3 measured runs each, no microbenchmarks (a few minutes)
#   bench/run.sh --quick -harness reins,pi -only two-step   # extra flags go to benchrun (-h lists them)
#
# It builds reins as a release would (static: CGO_ENABLED=0 -trimpath -ldflags=-s) into bench/bin,
# installs the peer harnesses into bench/peers/node_modules when they are
# missing (npm, with --legacy-peer-deps --ignore-scripts: see
# bench/peers/package.json), runs bench/cmd/benchrun, which serves every
# workload from `reins mock-llm` on loopback and measures wall time and peak
# RSS with its own helper (no GNU time needed), and prints the table.
# Nothing leaves the machine: the mock binds 127.0.0.1 and no real key is used.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
micro=1
args=()
for a in "$@"; do
	case "$a" in
	--quick) quick=1; micro=0 ;;
	--no-micro) micro=0 ;;
	--micro) micro=1 ;;
	*) args+=("$a") ;;
	esac
done

command -v go >/dev/null || { echo "bench/run.sh: needs Go (go.mod's version)" >&2; exit 2; }

echo "building reins (CGO_ENABLED=0 -trimpath -ldflags=-s: the static release binary) and benchrun..." >&2
mkdir -p bench/bin
# The binary is copied into place rather than measured where the linker wrote
# it: the linker writes its output through mmap, and on this Linux (ext4, 6.18)
# an executable whose page cache was filled that way starts about 1.3 ms
# slower, every run, than the very same bytes written by cp, a download or a
# package manager (see BENCHMARKS.md, Method). A freshly linked file is not
# what users run.
# reins-extra beside reins serves the workloads (reins mock-llm).
for b in reins reins-extra; do
  CGO_ENABLED=0 go build -trimpath -ldflags=-s -o bench/bin/$b.linked ./cmd/$b
  cp bench/bin/$b.linked bench/bin/$b
  rm bench/bin/$b.linked
done
go build -o bench/bin/benchrun ./bench/cmd/benchrun

if command -v npm >/dev/null; then
	peers=bench/peers/node_modules
	if [ ! -e "$peers/.bin/pi" ] || [ ! -e "$peers/opencode-linux-x64/bin/opencode" ] || [ ! -e "$peers/.bin/dsh" ]; then
		echo "installing the peer harnesses into bench/peers (npm)..." >&2
		(cd bench/peers && npm install --legacy-peer-deps --ignore-scripts --no-audit --no-fund >&2) ||
			echo "bench/run.sh: npm install failed; the missing peers are reported as not installed" >&2
	fi
else
	echo "bench/run.sh: npm not found; only reins is measured (install Node.js and npm for the peers)" >&2
fi

run=(bench/bin/benchrun -reins bench/bin/reins -peers bench/peers -scripts bench/scripts)
if [ "$quick" = 1 ]; then
	run+=(-quick)
else
	run+=(-runs 7)
fi
"${run[@]}" "${args[@]+"${args[@]}"}"

if [ "$micro" = 1 ]; then
	echo
	echo "Go microbenchmarks (go test -bench, -benchmem):"
	go test -run '^$' -benchmem -benchtime 1s \
		-bench 'Framing|Translate|Stream|Append|History|Load|Fold|TwoStep' \
		./internal/llm/sse/ ./internal/llm/openai/ ./internal/llm/anthropic/ \
		./internal/session/ ./internal/subagent/ ./bench/ |
		grep -E '^(Benchmark|ok|FAIL)'
fi
