# Sourced by bench/startup.sh and bench/alternate.sh: a scratch folder,
# work, removed on exit with the mock model it serves.
work=$(mktemp -d)
mock=
cleanup() { [ -n "$mock" ] && kill "$mock" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# serve_two_step REINS: puts the two-step task's note in $work/ws and
# starts REINS's mock model (`mock-llm`, from the reins-extra beside it)
# on the two-step script; sets url to its /v1 base.
serve_two_step() {
  mkdir -p "$work/ws"
  printf '[[notes-content]] hello\n' >"$work/ws/notes.txt"
  "$1" mock-llm --addr 127.0.0.1:0 --script bench/scripts/two-step.reins.yaml >"$work/mock.out" &
  mock=$!
  for _ in $(seq 100); do grep -q http "$work/mock.out" 2>/dev/null && break; sleep 0.1; done
  url=$(grep -o 'http://[^ ]*' "$work/mock.out")/v1
}
