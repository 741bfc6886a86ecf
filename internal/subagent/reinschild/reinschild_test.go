package reinschild_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/sdkserver/sdkfake"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/subagent/reinschild"
	"github.com/reinsdev/reins/internal/tool"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	sdkfake.Dispatch()
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0") // children exit at once under -race
	}
	goleak.VerifyTestMain(m)
}

const canary = "CANARY-5e1d77-reinschild"

// hostLog collects the provider's host log.
type hostLog struct {
	mu    sync.Mutex
	lines []string
}

func (h *hostLog) logf(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, fmt.Sprintf(format, args...))
}

func (h *hostLog) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.lines, "\n")
}

// fixture is a provider with short teardown waits whose children are this
// test binary playing a fake runtime.
type fixture struct {
	prov subagent.Provider
	log  *hostLog
	mark string
	exe  string
}

func newFixture(t *testing.T, o reinschild.Options) *fixture {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := &hostLog{}
	o.Logf = log.logf
	if o.RequestTimeout == 0 {
		o.RequestTimeout = 20 * time.Second
	}
	o.ShutdownTimeout, o.CancelGrace = time.Second, 300*time.Millisecond
	o.TeardownGrace, o.TeardownTerm = 200*time.Millisecond, 200*time.Millisecond
	f := &fixture{prov: reinschild.New(o), log: log, mark: sdkfake.NewMark(t.Name()), exe: exe}
	t.Cleanup(func() { noLeftovers(t, f.mark) })
	return f
}

func noLeftovers(t *testing.T, mark string) {
	t.Helper()
	if pids := sdkfake.Leftovers(mark); len(pids) > 0 {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Errorf("processes left behind: %v", pids)
	}
}

// agent is a `provider: reins` definition whose child plays scenario.
func (f *fixture) agent(scenario string, env ...string) *config.Agent {
	e := map[string]string{
		sdkfake.EnvScenario: scenario,
		sdkfake.EnvCanary:   canary,
		sdkfake.EnvMark:     f.mark,
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		e[k] = v
	}
	return &config.Agent{Name: "child", Provider: config.ProviderReins, Command: f.exe, Env: e}
}

func request(t *testing.T, ag *config.Agent) subagent.Request {
	return subagent.Request{RunID: "run-1", Agent: ag, Prompt: "do the task " + canary, ParentSession: "parent", Depth: 1, Cwd: t.TempDir(), Permission: tool.WorkspaceWrite}
}

// seen is what the parent sees: the settled result or the start
// failure's diagnostic, as the manager would present it.
type seen struct {
	started    bool
	stopReason outcome.StopReason
	diagnostic string
	output     string
	rendered   string
}

func (f *fixture) run(t *testing.T, ctx context.Context, ag *config.Agent, during func(subagent.Run)) seen {
	t.Helper()
	r, err := f.prov.Start(ctx, request(t, ag))
	if err != nil {
		var se *subagent.StartError
		if !errors.As(err, &se) {
			t.Fatalf("start error %T %v", err, err)
		}
		res := outcome.Settle(outcome.Result{StopReason: outcome.StopError, Diagnostic: se.Diagnostic})
		return seen{stopReason: res.StopReason, diagnostic: res.Diagnostic, rendered: subagent.Render(res).Content}
	}
	if r.Session() == "" {
		t.Error("published run without a session id")
	}
	if during != nil {
		during(r)
	}
	res := outcome.Settle(r.Wait(ctx))
	if err := r.Dispose(); err != nil {
		t.Errorf("Dispose: %v", err)
	}
	if err := r.Dispose(); err != nil {
		t.Errorf("second Dispose: %v", err)
	}
	return seen{started: true, stopReason: res.StopReason, diagnostic: res.Diagnostic, output: llm.BlocksText(res.Output), rendered: subagent.Render(res).Content}
}

func line(stage, category, stop string, extra ...string) string {
	s := "Subagent failure (provider: reins; stage: " + stage + "; category: " + category + "; stop reason: " + stop
	for _, e := range extra {
		s += "; " + e
	}
	return s + ")"
}

// TestFailureDiagnostics pins the exact diagnostic of every failure the
// scripted runtime reproduces, and of every kind of child turn end.
func TestFailureDiagnostics(t *testing.T) {
	const partial = "partial answer"
	tests := []struct {
		name, scenario string
		env            []string
		started        bool
		stop           outcome.StopReason
		diag           string
		output         string
	}{
		{"exit before initialize", sdkfake.ScenarioExitBeforeInit, nil, false, "error", line("initialize", "transport", "error", "exit code: 5"), ""},
		{"malformed initialize response", sdkfake.ScenarioMalformedInit, nil, false, "error", line("initialize", "protocol", "error"), ""},
		{"initialize error response", sdkfake.ScenarioErrorInit, nil, false, "error", line("initialize", "protocol", "error"), ""},
		{"prompt error response", sdkfake.ScenarioErrorPrompt, nil, false, "error", line("session-run", "protocol", "error"), ""},
		{"crash after streaming, exit code", sdkfake.ScenarioCrashExit, nil, true, "error", line("session-run", "transport", "error", "exit code: 3"), partial},
		{"crash after streaming, grandchild holds stdout", sdkfake.ScenarioCrashExit, []string{sdkfake.EnvGrandchild + "=1"}, true, "error", line("session-run", "transport", "error", "exit code: 3"), partial},
		{"crash after streaming, signal", sdkfake.ScenarioCrashSignal, nil, true, "error", line("session-run", "transport", "error", "signal: SIGKILL"), partial},
		{"malformed frame mid-run", sdkfake.ScenarioMalformedRun, nil, true, "error", line("session-run", "protocol", "error"), partial},
		{"empty usage-only terminal message", sdkfake.ScenarioUsageOnly, nil, true, "max-tokens", "", partial},
		{"turn end completed", "turn:completed", nil, true, "completed", "", partial},
		{"turn end max-tokens", "turn:max-tokens", nil, true, "max-tokens", "", partial},
		{"turn end aborted", "turn:aborted", nil, true, "aborted", "", partial},
		{"turn end aborted by disposal", "turn:aborted-disposed", nil, true, "aborted", line("session-run", "child-disposed", "aborted"), partial},
		{"turn end refusal", "turn:refusal", nil, true, "refusal", "", partial},
		{"turn end error", "turn:error", nil, true, "error", line("session-run", "child-error", "error"), partial},
		{"turn end interrupted", "turn:interrupted", nil, true, "error", line("session-run", "child-error", "error"), partial},
		{"turn end disposed", "turn:disposed", nil, true, "error", line("session-run", "child-disposed", "error"), partial},
		{"turn end unknown", "turn:weird", nil, true, "error", line("session-run", "child-unknown", "error"), partial},
		{"turn end missing", "turn:missing", nil, true, "error", line("session-run", "missing-terminal", "error"), partial},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, reinschild.Options{})
			got := f.run(t, context.Background(), f.agent(tc.scenario, tc.env...), nil)
			if got.started != tc.started || got.stopReason != tc.stop || got.diagnostic != tc.diag || got.output != tc.output {
				t.Errorf("got started %v, %s, %q, output %q\nwant started %v, %s, %q, output %q",
					got.started, got.stopReason, got.diagnostic, got.output, tc.started, tc.stop, tc.diag, tc.output)
			}
			if strings.Contains(got.rendered, canary) || strings.Contains(got.diagnostic, canary) {
				t.Errorf("child text reached the parent: %q", got.rendered)
			}
		})
	}
}

// The raw causes of failures reach the host log, and only the host log.
func TestRawCausesGoToTheHostLog(t *testing.T) {
	for _, scenario := range []string{sdkfake.ScenarioExitBeforeInit, sdkfake.ScenarioErrorInit, sdkfake.ScenarioCrashExit, "turn:weird"} {
		t.Run(scenario, func(t *testing.T) {
			f := newFixture(t, reinschild.Options{})
			got := f.run(t, context.Background(), f.agent(scenario), nil)
			if strings.Contains(got.rendered, canary) {
				t.Errorf("tool result carries child text: %q", got.rendered)
			}
			if !strings.Contains(f.log.String(), canary) {
				t.Errorf("host log lacks the raw cause:\n%s", f.log)
			}
		})
	}
}

func TestConfigurationFailures(t *testing.T) {
	f := newFixture(t, reinschild.Options{})
	ag := f.agent("turn:completed")
	ag.Command = "/nonexistent/reins"
	got := f.run(t, context.Background(), ag, nil)
	if want := line("initialize", "configuration", "error"); got.diagnostic != want || got.started {
		t.Errorf("missing command: %+v", got)
	}

	req := request(t, f.agent("turn:completed"))
	req.Cwd = "/nonexistent/workspace"
	_, err := f.prov.Start(context.Background(), req)
	var se *subagent.StartError
	if !errors.As(err, &se) || se.Diagnostic != line("initialize", "configuration", "error") {
		t.Errorf("bad cwd: %v", err)
	}
}

// A runtime that never answers: the request timeout bounds the handshake
// and the prompt receipt.
func TestRequestTimeouts(t *testing.T) {
	// The hang-prompt bound must let the handshake through even on a slow
	// machine; it is a bound, not a measurement.
	for _, tc := range []struct {
		scenario string
		timeout  time.Duration
		diag     string
	}{
		{sdkfake.ScenarioHangInit, 300 * time.Millisecond, line("initialize", "unknown", "error")},
		{sdkfake.ScenarioHangPrompt, 5 * time.Second, line("session-run", "unknown", "error")},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			for timeout := tc.timeout; ; timeout *= 2 {
				f := newFixture(t, reinschild.Options{RequestTimeout: timeout})
				got := f.run(t, context.Background(), f.agent(tc.scenario, sdkfake.EnvStubborn+"=1", sdkfake.EnvGrandchild+"=1"), nil)
				// On a machine too slow for the handshake within the
				// hang-prompt bound, the bound is doubled and tried again.
				if slow := line("initialize", "unknown", "error"); tc.diag != slow && got.diagnostic == slow && timeout < time.Minute {
					t.Logf("request timeout %s fell in the handshake on this machine: again with %s", timeout, 2*timeout)
					continue
				}
				if got.started || got.diagnostic != tc.diag {
					t.Errorf("got %+v, want %q", got, tc.diag)
				}
				return
			}
		})
	}
}

// Cancellation: a local cancel (job_kill) and a parent cancel end the run
// aborted with no diagnostic and the partial output; the agent's timeout
// ends it aborted with a diagnostic saying so. A cancel before the run is
// published rolls the child back with no diagnostic.
func TestCancellation(t *testing.T) {
	t.Run("local cancel", func(t *testing.T) {
		f := newFixture(t, reinschild.Options{})
		got := f.run(t, context.Background(), f.agent(sdkfake.ScenarioHangRun, sdkfake.EnvStubborn+"=1", sdkfake.EnvGrandchild+"=1"), func(r subagent.Run) { r.Cancel() })
		if got.stopReason != "aborted" || got.diagnostic != "" || got.output != "partial answer" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("parent cancel", func(t *testing.T) {
		f := newFixture(t, reinschild.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		r, err := f.prov.Start(ctx, request(t, f.agent(sdkfake.ScenarioHangRun)))
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		res := outcome.Settle(r.Wait(ctx))
		if err := r.Dispose(); err != nil {
			t.Error(err)
		}
		if res.StopReason != "aborted" || res.Diagnostic != "" {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		// The timeout counts from the spawn; it must fall after the child
		// streamed its partial answer, and how long that takes is the
		// machine's business. A timeout that came first (a start that
		// timed out, or a run cut before its answer) still says timeout;
		// the run is then tried again with twice the timeout.
		f := newFixture(t, reinschild.Options{})
		for timeout := 200 * time.Millisecond; ; timeout *= 2 {
			ag := f.agent(sdkfake.ScenarioHangRun)
			ag.Timeout = timeout
			got := f.run(t, context.Background(), ag, nil)
			if got.started && got.output == "partial answer" {
				if want := line("session-run", "timeout", "aborted"); got.stopReason != "aborted" || got.diagnostic != want {
					t.Errorf("got %+v", got)
				}
				return
			}
			if !strings.Contains(got.diagnostic, "category: timeout") {
				t.Fatalf("timeout %s, before the answer: got %+v", timeout, got)
			}
			if timeout > time.Minute {
				t.Fatalf("the child never answered within its timeout, up to %s: %+v", timeout, got)
			}
			t.Logf("timeout %s fell before the child's answer on this machine: again with %s", timeout, 2*timeout)
		}
	})
	t.Run("cancel before publish", func(t *testing.T) {
		f := newFixture(t, reinschild.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(100 * time.Millisecond)
			cancel()
		}()
		_, err := f.prov.Start(ctx, request(t, f.agent(sdkfake.ScenarioHangPrompt, sdkfake.EnvStubborn+"=1")))
		var se *subagent.StartError
		if !errors.As(err, &se) || se.Diagnostic != "" {
			t.Errorf("start error %v", err)
		}
	})
}

// Two child runs at once never mix their outputs or diagnostics.
func TestConcurrentRunsStayApart(t *testing.T) {
	f := newFixture(t, reinschild.Options{})
	type want struct {
		scenario, text string
		stop           outcome.StopReason
		diag           string
	}
	wants := []want{
		{sdkfake.ScenarioCrashExit, "alpha", "error", line("session-run", "transport", "error", "exit code: 3")},
		{"turn:error", "beta", "error", line("session-run", "child-error", "error")},
		{"turn:completed", "gamma", "completed", ""},
		{sdkfake.ScenarioCrashSignal, "delta", "error", line("session-run", "transport", "error", "signal: SIGKILL")},
	}
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		got := make([]seen, len(wants))
		for i, w := range wants {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i] = f.run(t, context.Background(), f.agent(w.scenario, sdkfake.EnvText+"="+w.text), nil)
			}()
		}
		wg.Wait()
		for i, w := range wants {
			if got[i].output != w.text || got[i].stopReason != w.stop || got[i].diagnostic != w.diag {
				t.Errorf("round %d run %d: got %+v, want %+v", round, i, got[i], w)
			}
		}
	}
}

func TestDiagnosticsAreBoundedUTF8(t *testing.T) {
	long := strings.Repeat("é", outcome.MaxDiagnosticBytes)
	res := outcome.Settle(outcome.Result{StopReason: outcome.StopError, Diagnostic: line("session-run", "unknown", "error") + "\n" + long})
	if len(res.Diagnostic) > outcome.MaxDiagnosticBytes || !utf8.ValidString(res.Diagnostic) {
		t.Errorf("diagnostic of %d bytes, valid UTF-8 %v", len(res.Diagnostic), utf8.ValidString(res.Diagnostic))
	}
}

// TestCrashedChildOutputIsItsLog (issue 13, finding 5): a child killed
// after it logged text but before it streamed it hands the parent what its
// own log holds, so the parent's subagent/end and the child's log agree.
func TestCrashedChildOutputIsItsLog(t *testing.T) {
	f := newFixture(t, reinschild.Options{})
	home := t.TempDir()
	got := f.run(t, context.Background(), f.agent(sdkfake.ScenarioLogAheadCrash, "REINS_HOME="+home), nil)
	if want := "partial answer" + sdkfake.LoggedTail; got.output != want {
		t.Errorf("output %q, want the child's logged text %q", got.output, want)
	}
	if got.stopReason != outcome.StopError {
		t.Errorf("stop reason %q, want error", got.stopReason)
	}
}

// A crashed continuation reports only this run's output (issue 28): its
// log also holds the earlier run's complete answer, which on main beat
// this run's logged text.
func TestCrashedContinuationOutputIsThisRun(t *testing.T) {
	f := newFixture(t, reinschild.Options{})
	home := t.TempDir()
	earlier, err := session.Create(filepath.Join(home, "sessions"), session.Header{ID: "fake-session"}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	earlier.Append(session.TypeTurnStart, session.TurnStart{Turn: 1})
	earlier.Append(session.TypeAssistantMessage, session.AssistantMessage{Turn: 1, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{{Type: llm.BlockText, Text: "EARLIER-RUN-ANSWER"}}}})
	earlier.Append(session.TypeTurnEnd, session.TurnEnd{Turn: 1, Reason: session.ReasonCompleted})
	if err := earlier.Close(); err != nil {
		t.Fatal(err)
	}
	req := request(t, f.agent(sdkfake.ScenarioLogAheadCrash, "REINS_HOME="+home))
	req.ChildSession = "fake-session"
	r, err := f.prov.Start(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	res := outcome.Settle(r.Wait(t.Context()))
	if err := r.Dispose(); err != nil {
		t.Errorf("Dispose: %v", err)
	}
	if got, want := llm.BlocksText(res.Output), "partial answer"+sdkfake.LoggedTail; got != want {
		t.Errorf("output %q, want this run's logged text %q", got, want)
	}
}
