package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/llm/mock"
	"github.com/reinsdev/reins/internal/session"
)

// priceConfig prices the scripted model openai/priced: $2 input, $8
// output, $0.5 cache reads per million tokens.
const priceConfig = `
models:
  openai/priced:
    price: {input: 2, output: 8, cacheRead: 0.5}
subagents:
  stallTimeout: 1h
`

// runJSON runs reins with args against a scripted server and returns its
// exit status, --json object and stderr.
func runJSON(t *testing.T, script, config string, args ...string) (int, runResult, string, string) {
	t.Helper()
	sc, err := mock.Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	url, _, stop := mock.StartTest(sc)
	defer stop()
	home := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := reinsCmd(t, home, append([]string{"run", "--json", "--config", cfg, "--base-url", url}, args...)...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	code, stderr := exitCode(t, cmd)
	var out runResult
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("stdout is not the --json object: %v\n%s\nstderr %s", err, stdout.Bytes(), stderr)
	}
	return code, out, stderr, home
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestCostUSDHandComputed: usage.costUsd of a run with a child, checked
// against the price table by hand, in --json, in the child's subagent/end
// and in reins log's tree total.
func TestCostUSDHandComputed(t *testing.T) {
	script := `
replies:
  - match: price-me
    toolCalls:
      - {name: subagent, arguments: {description: a priced child, prompt: "CHILD-TASK"}}
    usage: {input: 1000, output: 200, cacheRead: 400}
  - match: CHILD-TASK
    text: child says hi
    usage: {input: 500, output: 100}
  - match: child says hi
    text: done
    usage: {input: 100, output: 50}
`
	code, out, stderr, home := runJSON(t, script, priceConfig, "-m", "openai/priced", "price-me")
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	// Parent, first response: 600 uncached input at $2, 400 cache reads at
	// $0.5, 200 output at $8. The child: 500 at $2, 100 at $8. The parent's
	// second response: 100 at $2, 50 at $8.
	first := (600*2 + 400*0.5 + 200*8) / 1e6
	child := (500*2 + 100*8) / 1e6
	second := (100*2 + 50*8) / 1e6
	want := first + child + second
	if out.Usage.CostUSD == nil || !near(*out.Usage.CostUSD, want) {
		t.Fatalf("usage.costUsd %v, want %v (hand computed)", out.Usage.CostUSD, want)
	}
	t.Logf("usage.costUsd %.6f = %.6f + %.6f + %.6f", *out.Usage.CostUSD, first, child, second)

	ld, err := session.Load(filepath.Join(home, "sessions", out.SessionID, session.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var end session.SubagentEnd
	for _, e := range ld.Events {
		if e.Type == session.TypeSubagentEnd {
			e.Decode(&end)
		}
	}
	if end.Usage == nil || end.Usage.CostUSD == nil || !near(*end.Usage.CostUSD, child) {
		t.Errorf("subagent/end usage %+v, want costUsd %v", end.Usage, child)
	}
	log := reinsCmd(t, home, "log", out.SessionID)
	var logOut bytes.Buffer
	log.Stdout = &logOut
	if code, stderr := exitCode(t, log); code != 0 {
		t.Fatalf("reins log: exit %d %s", code, stderr)
	}
	for _, w := range []string{"cost $0.0018", "tree total (this session and its children): tokens in 1600 out 350 cached 400  cost $0.0054"} {
		if !strings.Contains(logOut.String(), w) {
			t.Errorf("reins log lacks %q:\n%s", w, logOut.String())
		}
	}
}

// TestCostUnknownIsAbsent: a model with no price has no costUsd, and
// reins log says unknown, never $0.
func TestCostUnknownIsAbsent(t *testing.T) {
	code, out, stderr, home := runJSON(t, "fallback: {text: hello, usage: {input: 10, output: 2}}\n", "", "-m", "openai/no-price-known", "hi")
	if code != 0 || out.Usage.CostUSD != nil || out.Usage.InputTokens != 10 {
		t.Fatalf("exit %d usage %+v; stderr %s", code, out.Usage, stderr)
	}
	log := reinsCmd(t, home, "log", out.SessionID)
	var logOut bytes.Buffer
	log.Stdout = &logOut
	exitCode(t, log)
	if !strings.Contains(logOut.String(), "cost unknown") || strings.Contains(logOut.String(), "$0") {
		t.Errorf("reins log does not say the cost is unknown:\n%s", logOut.String())
	}
}

// TestBudgetUSDStopsTheRun: each response costs $0.003 at the price table;
// under --budget-usd 0.005 the second response exhausts the budget, no
// third request is made, and reins exits 1 naming the budget.
func TestBudgetUSDStopsTheRun(t *testing.T) {
	script := `
fallback:
  toolCalls:
    - {name: ls, arguments: {}}
  usage: {input: 1000, output: 125}
`
	code, out, stderr, _ := runJSON(t, script, priceConfig, "-m", "openai/priced", "--budget-usd", "0.005", "loop")
	if code != exitFailed || out.StopReason != "aborted" {
		t.Fatalf("exit %d stop %s, want 1 aborted; stderr %s", code, out.StopReason, stderr)
	}
	if out.Error == nil || out.Error.Code != "BUDGET" || !strings.Contains(out.Error.Message, "usd budget ran out") {
		t.Errorf("--json error %+v, want BUDGET naming the usd budget", out.Error)
	}
	if !strings.Contains(stderr, "the usd budget ran out (used $0.006 of $0.005)") {
		t.Errorf("stderr does not say which budget ran out: %q", stderr)
	}
	if out.Usage.CostUSD == nil || !near(*out.Usage.CostUSD, 0.006) || out.Usage.InputTokens != 2000 {
		t.Errorf("usage %+v, want two responses ($0.006)", out.Usage)
	}
	// An unknown price cannot be capped in dollars: a usage error.
	code, stderr = exitCode(t, reinsCmd(t, t.TempDir(), "run", "-m", "openai/no-price", "--base-url", "http://127.0.0.1:1", "--budget-usd", "1", "x"))
	if code != exitUsage || !strings.Contains(stderr, "price of openai/no-price is unknown") {
		t.Errorf("--budget-usd on an unpriced model: exit %d %q", code, stderr)
	}
}

// TestTimeoutStopsAStalledChild: a child whose model never answers, under
// --timeout 2s: the run ends (well within the deadline), the child's
// result is aborted with category budget, and reins exits 1 naming the
// time budget.
func TestTimeoutStopsAStalledChild(t *testing.T) {
	script := `
replies:
  - match: delegate
    toolCalls:
      - {name: subagent, arguments: {description: a stuck child, prompt: "CHILD-STALL"}}
  - match: CHILD-STALL
    fault: stall
    repeat: true
`
	t0 := time.Now()
	code, out, stderr, home := runJSON(t, script, priceConfig, "-m", "openai/priced", "--timeout", "2s", "delegate")
	took := time.Since(t0)
	t.Logf("--timeout 2s: the run ended after %s", took.Round(time.Millisecond))
	if took > 60*time.Second {
		t.Errorf("the run took %s under --timeout 2s", took)
	}
	if code != exitFailed || out.StopReason != "aborted" || !strings.Contains(stderr, "the time budget ran out") {
		t.Fatalf("exit %d stop %s; stderr %s", code, out.StopReason, stderr)
	}
	ld, err := session.Load(filepath.Join(home, "sessions", out.SessionID, session.FileName))
	if err != nil {
		t.Fatal(err)
	}
	ends := 0
	for _, e := range ld.Events {
		if e.Type == session.TypeSubagentEnd {
			var d session.SubagentEnd
			e.Decode(&d)
			ends++
			if d.StopReason != "aborted" || !strings.Contains(d.Diagnostic, "category: budget") {
				t.Errorf("subagent/end %s %q, want aborted with category budget", d.StopReason, d.Diagnostic)
			}
		}
	}
	if ends != 1 {
		t.Errorf("%d subagent/end events, want 1", ends)
	}
}

// Bad budget values are usage errors: nothing runs.
func TestBudgetFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--budget-tokens", "-5"},
		{"--budget-usd", "-1"},
		{"--timeout", "-3s"},
		{"--timeout", "soon"},
		{"--budget-tokens", "many"},
	} {
		code, stderr := exitCode(t, reinsCmd(t, t.TempDir(), append([]string{"run", "-m", "mock/echo"}, append(args, "hi")...)...))
		if code != exitUsage || !strings.Contains(stderr, args[0]) || strings.Count(stderr, "--") != 1 {
			t.Errorf("%v: exit %d, want 2 naming the flag; stderr %q", args, code, stderr)
		}
	}
}
