package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/reinsdev/reins/internal/testutil"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/sdkserver/sdkfake"
	"github.com/reinsdev/reins/internal/view"
)

// accountingScript: the first turn's request fails with HTTP 500, then
// with an overloaded error after the stream began (its 700 input tokens
// are billed and counted), then delegates to an in-process and a reins
// child; the resumed second turn answers at once.
const accountingScript = `
replies:
  - match: ACCOUNT-ME
    status: 500
    body: '{"type":"error","error":{"type":"api_error","message":"boom"}}'
  - match: ACCOUNT-ME
    fault: overloaded
    text: "half an answ"
    usage: {input: 700, output: 3}
  - match: ACCOUNT-ME
    toolCalls:
      - {id: p1, name: subagent, arguments: {description: in process, prompt: "INPROC-TASK"}}
      - {id: p2, name: subagent, arguments: {description: reins child, agent: helper, prompt: "REINS-TASK"}}
    usage: {input: 1000, output: 200, cacheRead: 400}
  - match: INPROC-TASK
    text: INPROC CHILD-DONE
    usage: {input: 300, output: 30}
  - match: REINS-TASK
    text: REINS CHILD-DONE
    usage: {input: 500, output: 50}
  - match: CHILD-DONE
    text: first answer
    usage: {input: 100, output: 20}
  - match: SECOND-TURN
    text: second answer
    usage: {input: 2000, output: 40}
`

const accountingConfig = `providers:
  anthropic:
    retry: {maxRetries: 3, initialDelay: 1ms, maxDelay: 1ms, jitter: 0}
models:
  anthropic/priced:
    price: {input: 2, output: 8, cacheRead: 0.5}
subagents:
  stallTimeout: 1h
`

// figures is what one surface says of a session: tokens, cost and the
// time spent in turns.
type figures struct {
	in, out, cached int
	cost            string // budget.Dollars
	turns           int
	ms              int64
}

func usageFigures(u llm.Usage, turns int, ms int64) figures {
	f := figures{in: u.InputTokens, out: u.OutputTokens, cached: u.CacheReadTokens, turns: turns, ms: ms, cost: "unknown"}
	if u.CostUSD != nil {
		f.cost = budget.Dollars(*u.CostUSD)
	}
	return f
}

func parseMs(t *testing.T, s string) int64 {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("duration %q: %v", s, err)
	}
	return d.Milliseconds()
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOneAccountingRule (issue 28, acceptance 3): one session with
// retries, an in-process and a reins child, and a resume; reins log, reins
// view, the terminal's /cost and the --json objects of its two runs say
// the same tokens, cost and durations (docs/events.md#usage-and-duration).
func TestOneAccountingRule(t *testing.T) {
	url, srv := startMock(t, accountingScript)
	mark := sdkfake.NewMark(t.Name())
	cwd, home := sdkWorkspace(t, mark, map[string]string{"helper": "---\nname: helper\ndescription: a reins child\nprovider: reins\n---\nYou help.\n"})
	if err := os.WriteFile(filepath.Join(cwd, ".reins", "config.yaml"), []byte(accountingConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.Trust(t, home, cwd) // approves the config written after the workspace was trusted
	run := func(args ...string) runResult {
		t.Helper()
		cmd := reinsIn(t, cwd, home, mark, append([]string{"run", "--json", "-m", "anthropic/priced", "--base-url", url}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var res runResult
		if err != nil || json.Unmarshal(out, &res) != nil || res.StopReason != "completed" {
			t.Fatalf("reins run %v: %v\n%s\nstderr %s", args, err, out, stderr.String())
		}
		return res
	}
	first := run("ACCOUNT-ME")
	second := run("--resume", first.SessionID, "SECOND-TURN")
	id := first.SessionID
	if second.SessionID != id {
		t.Fatalf("the resume ran session %s, not %s", second.SessionID, id)
	}
	if n := srv.Count(); n != 7 {
		t.Fatalf("the model saw %d requests, want 7 (two failed attempts, 3 of the parent's, 2 children's)", n)
	}

	// --json: each run's turns; the session is their sum.
	jsonUsage := first.Usage.Add(second.Usage)
	fromJSON := usageFigures(jsonUsage, 2, first.DurationMs+second.DurationMs)
	// The hand-computed truth: every request that reported usage, the
	// overloaded attempt's included (its message_start: 700 input tokens,
	// 1 output token). On the Anthropic wire input counts cache reads.
	want := figures{in: 700 + 1000 + 400 + 300 + 500 + 100 + 2000, out: 1 + 200 + 30 + 50 + 20 + 40, cached: 400, turns: 2}
	wantCost := ((700+1000+300+500+100+2000)*2 + 400*0.5 + (1+200+30+50+20+40)*8) / 1e6
	want.cost, want.ms = budget.Dollars(wantCost), fromJSON.ms
	if fromJSON != want {
		t.Errorf("--json: %+v, want %+v", fromJSON, want)
	}
	if first.DurationMs <= 0 || second.DurationMs <= 0 {
		t.Errorf("--json durationMs %d and %d, want > 0", first.DurationMs, second.DurationMs)
	}

	// reins log: each turn's line and the total line.
	cmd := reinsIn(t, cwd, home, mark, "log", id)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reins log: %v", err)
	}
	logText := string(out)
	turnRe := regexp.MustCompile(`(?m)^└ completed  .*  in (\S+)$`)
	var turnMs []int64
	for _, m := range turnRe.FindAllStringSubmatch(logText, -1) {
		turnMs = append(turnMs, parseMs(t, m[1]))
	}
	if len(turnMs) != 2 || turnMs[0] != first.DurationMs || turnMs[1] != second.DurationMs {
		t.Errorf("reins log's turn times %v ms, --json's %d and %d", turnMs, first.DurationMs, second.DurationMs)
	}
	totalRe := regexp.MustCompile(`(?m)^tree total \(this session and its children\): tokens in (\d+) out (\d+) cached (\d+)  cost (\$[0-9.]+)  (\d+) turn\(s\) in (\S+)$`)
	m := totalRe.FindStringSubmatch(logText)
	if m == nil {
		t.Fatalf("reins log has no total line:\n%s", logText)
	}
	fromLog := figures{in: atoi(t, m[1]), out: atoi(t, m[2]), cached: atoi(t, m[3]), cost: m[4], turns: atoi(t, m[5]), ms: parseMs(t, m[6])}
	if fromLog != want {
		t.Errorf("reins log: %+v, want %+v\n%s", fromLog, want, logText)
	}

	// reins view: the tree's root.
	tree, err := view.NewReader(filepath.Join(home, "sessions")).Tree(id)
	if err != nil {
		t.Fatal(err)
	}
	root := tree.Root
	if root.Usage == nil {
		t.Fatal("reins view: the root has no usage")
	}
	fromView := usageFigures(*root.Usage, root.Turns, root.DurationMs)
	if fromView != want {
		t.Errorf("reins view: %+v, want %+v", fromView, want)
	}
	if fmt.Sprint(root.TurnMs) != fmt.Sprint(turnMs) {
		t.Errorf("reins view's turn times %v ms, reins log's %v", root.TurnMs, turnMs)
	}

	// The terminal's /cost, on the resumed session.
	tm, wait := startTerm(t, home, []string{"NO_COLOR=1", "TERM=xterm-256color", sdkfake.EnvMark + "=" + mark},
		"--cwd", cwd, "-m", "anthropic/priced", "--base-url", url, "--resume", id)
	tm.waitFor("resumed session " + id)
	tm.typeKeys("/cost\r")
	tm.waitFor("turn(s) in ")
	costRe := regexp.MustCompile(`session \S+: (\d+) input tokens \((\d+) cached\), (\d+) output tokens; cost (\$[0-9.]+); (\d+) turn\(s\) in (\S+?s)\b`)
	var fromTUI figures
	for deadline := time.Now().Add(60 * time.Second); ; {
		if m := costRe.FindStringSubmatch(strings.ReplaceAll(tm.text(), "\r\n", "\n")); m != nil {
			fromTUI = figures{in: atoi(t, m[1]), cached: atoi(t, m[2]), out: atoi(t, m[3]), cost: m[4], turns: atoi(t, m[5]), ms: parseMs(t, m[6])}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/cost said no figures:\n%s", tm.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.typeKeys("\x04")
	if err := wait(); err != nil {
		t.Fatalf("reins --resume exited with %v", err)
	}
	if fromTUI != want {
		t.Errorf("/cost: %+v, want %+v", fromTUI, want)
	}
	t.Logf("every surface: %d in (%d cached), %d out, %s, %d turns in %d ms (turns %v ms)",
		want.in, want.cached, want.out, want.cost, want.turns, want.ms, turnMs)
	checkNoLeftovers(t, mark)
}
