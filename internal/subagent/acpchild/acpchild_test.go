package acpchild

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/budget"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/sandbox"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/testutil"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/proc"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	mark := testutil.Mark("acpchild")
	goleak.VerifyTestMain(m, goleak.Cleanup(testutil.ExitUnlessClean(mark)))
}

// fixture runs scripted TypeScript-SDK children. Every process it starts
// carries a unique marker in its environment, so a test can prove none is
// left behind, grandchildren included.
type fixture struct {
	t      *testing.T
	sdk    string
	script string
	cwd    string
	mark   string // REINS_TEST_MARK=<this test's mark>
	canary string

	mu  sync.Mutex
	log bytes.Buffer // the host log
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	nm := testutil.Peers(t)
	f := &fixture{
		t:      t,
		sdk:    filepath.Join(nm, "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js"),
		script: filepath.Join(testutil.RepoRoot(t), "internal", "subagent", "acpchild", "testdata", "child.mjs"),
		cwd:    t.TempDir(),
		mark:   testutil.MarkChildren(t),
		canary: "SECRET" + randHex(),
	}
	return f
}

func randHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// testLadder keeps teardown quick; the order of the rungs is proc's.
var testLadder = proc.Ladder{Grace: time.Second, Term: 500 * time.Millisecond, Reap: 5 * time.Second}

// testExitWait bounds how long a closed transport waits for the child's
// exit status (Options.ExitWait). The child runs in the sandbox's
// container: after it exits, the namespace's init must reap it and exit,
// the kernel tears the namespaces down, and only then does the supervisor
// see the init end and exit itself. That takes ~0.1 s here but more than
// 2 s on a loaded machine, when a crash (crash_exit, exit code 0) was
// reported as a broken transport. A wider bound keeps the verdicts: a
// child that exits is still reported with its status, and one that only
// closes stdout (close_stdout) still waits the bound out and is reported
// as transport.
const testExitWait = 10 * time.Second

func (f *fixture) provider() subagent.Provider {
	return New(Options{
		Logf: func(format string, args ...any) {
			f.mu.Lock()
			fmt.Fprintf(&f.log, format+"\n", args...)
			f.mu.Unlock()
		},
		Ladder:      testLadder,
		CancelGrace: 300 * time.Millisecond,
		ExitWait:    testExitWait,
	})
}

func (f *fixture) hostLog() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.log.String()
}

func (f *fixture) agent(scenario, permission string, env map[string]string) *config.Agent {
	e := map[string]string{
		"ACP_SDK_PATH": f.sdk,
		"ACP_SCENARIO": scenario,
		"ACP_CANARY":   f.canary,
	}
	k, v, _ := strings.Cut(f.mark, "=")
	e[k] = v
	for k, v := range env {
		e[k] = v
	}
	return &config.Agent{
		Name: "scripted", Provider: config.ProviderACP, Command: "node", Args: []string{f.script},
		Env: e, Permission: permission,
	}
}

func (f *fixture) request(ag *config.Agent, prompt string) subagent.Request {
	return subagent.Request{RunID: "run-1", Agent: ag, Prompt: prompt, Depth: 1, Cwd: f.cwd, Permission: tool.WorkspaceWrite}
}

// run starts, waits for and disposes one run, as the manager does, and
// returns the settled result.
func (f *fixture) run(ag *config.Agent) outcome.Result {
	f.t.Helper()
	r, err := f.provider().Start(context.Background(), f.request(ag, "do the task"))
	if err != nil {
		f.t.Fatalf("Start: %v", err)
	}
	res := outcome.Settle(r.Wait(context.Background()))
	if err := r.Dispose(); err != nil {
		f.t.Errorf("Dispose: %v", err)
	}
	return res
}

// alive lists the processes of this test still alive, at once.
func (f *fixture) alive() []testutil.Proc {
	_, v, _ := strings.Cut(f.mark, "=")
	return testutil.Marked(v)
}

// leftBehind is what is still alive of the fixture's processes once the
// child was disposed of: the processes it killed get testutil.OrphanWait
// to finish dying (on a busy machine a SIGKILLed process can still be
// listed in /proc for a while), so only a process nobody killed fails.
func (f *fixture) leftBehind() []testutil.Proc {
	_, v, _ := strings.Cut(f.mark, "=")
	return testutil.LeftBehind(v, testutil.OrphanWait)
}

// killAll kills procs with SIGKILL, the sandbox supervisor among them, and
// removes at the test's end the private temporary folders of the killed
// supervisors, which they no longer can (each run of the suite left one
// in the temp folder per peer). A folder is found where the supervisor
// passes it on: in its program's TMPDIR, or (in a container, where the
// program sees another path) on the confining stage's command line.
func killAll(t *testing.T, procs []testutil.Proc) {
	t.Helper()
	var temps []string
	keep := func(dir string) {
		if filepath.Dir(dir) == filepath.Clean(os.TempDir()) &&
			strings.HasPrefix(filepath.Base(dir), sandbox.TempPrefix) && !slices.Contains(temps, dir) {
			temps = append(temps, dir)
		}
	}
	for _, pr := range procs {
		env, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pr.PID), "environ"))
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			if dir, ok := bytes.CutPrefix(kv, []byte("TMPDIR=")); ok {
				keep(string(dir))
			}
		}
		for arg := range strings.FieldsSeq(pr.Cmdline) {
			keep(arg)
		}
		syscall.Kill(pr.PID, syscall.SIGKILL)
	}
	t.Cleanup(func() {
		for _, d := range temps {
			os.RemoveAll(d)
		}
	})
}

func text(r outcome.Result) string { return llm.BlocksText(r.Output) }

func TestStopReasons(t *testing.T) {
	tests := []struct {
		scenario string
		env      map[string]string
		stop     outcome.StopReason
		output   string
		diag     string
	}{
		{"success", nil, outcome.StopCompleted, "Hello, world", ""},
		{"max_tokens", nil, outcome.StopMaxTokens, "partial answer", ""},
		{"refusal", nil, outcome.StopRefusal, "I will not", ""},
		{"remote_cancelled", nil, outcome.StopAborted, "gave up", ""},
		{"max_turn_requests", nil, outcome.StopError, "went around in circles",
			"Subagent failure (provider: acp; stage: prompt; category: remote-limit; stop reason: error)"},
		{"unknown_stop", nil, outcome.StopError, "odd ending",
			"Subagent failure (provider: acp; stage: prompt; category: unknown; stop reason: error)"},
		{"error_response", nil, outcome.StopError, "",
			"Subagent failure (provider: acp; stage: prompt; category: unknown; stop reason: error)"},
		{"crash_exit", nil, outcome.StopError, "half of it",
			"Subagent failure (provider: acp; stage: process; category: process-exit; stop reason: error; exit code: 3)"},
		{"crash_exit", map[string]string{"ACP_EXIT_CODE": "0"}, outcome.StopError, "half of it",
			"Subagent failure (provider: acp; stage: process; category: process-exit; stop reason: error; exit code: 0)"},
		{"crash_signal", nil, outcome.StopError, "half of it",
			"Subagent failure (provider: acp; stage: process; category: process-exit; stop reason: error; signal: SIGKILL)"},
		{"close_stdout", nil, outcome.StopError, "leaving",
			"Subagent failure (provider: acp; stage: prompt; category: transport; stop reason: error)"},
	}
	for _, tc := range tests {
		t.Run(tc.scenario+fmt.Sprint(tc.env), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			res := f.run(f.agent(tc.scenario, "", tc.env))
			if res.StopReason != tc.stop || text(res) != tc.output || res.Diagnostic != tc.diag {
				t.Errorf("got (%s, %q, %q)\nwant (%s, %q, %q)", res.StopReason, text(res), res.Diagnostic, tc.stop, tc.output, tc.diag)
			}
			if strings.Contains(res.Diagnostic+text(res), f.canary) {
				t.Errorf("canary leaked: %q", res.Diagnostic)
			}
		})
	}
}

func TestUsageFromPromptResponse(t *testing.T) {
	f := newFixture(t)
	res := f.run(f.agent("success", "", nil))
	if res.Usage.InputTokens != 11 || res.Usage.OutputTokens != 7 {
		t.Errorf("usage = %+v, want 11 in / 7 out", res.Usage)
	}
}

func TestAgentBodyLeadsThePrompt(t *testing.T) {
	f := newFixture(t)
	ag := f.agent("echo", "", map[string]string{"ACP_CHUNKS": "1"})
	ag.SystemPrompt = "Be brief.\n"
	r, err := f.provider().Start(context.Background(), f.request(ag, "count"))
	if err != nil {
		t.Fatal(err)
	}
	res := r.Wait(context.Background())
	r.Dispose()
	if got := text(res); got != "Be brief.\n\ncount#0;" {
		t.Errorf("the child got %q", got)
	}
}

func TestStartFailures(t *testing.T) {
	tests := []struct {
		name  string
		agent func(f *fixture) *config.Agent
		diag  string
	}{
		{"death before initialize", func(f *fixture) *config.Agent { return f.agent("die_before_init", "", nil) },
			"Subagent failure (provider: acp; stage: initialize; category: process-exit; stop reason: error; exit code: 7)"},
		{"rejected session/new", func(f *fixture) *config.Agent { return f.agent("reject_new_session", "", nil) },
			"Subagent failure (provider: acp; stage: new-session; category: protocol; stop reason: error)"},
		{"empty session id", func(f *fixture) *config.Agent { return f.agent("empty_session", "", nil) },
			"Subagent failure (provider: acp; stage: new-session; category: protocol; stop reason: error)"},
		{"unsupported protocol version", func(f *fixture) *config.Agent {
			return f.agent("success", "", map[string]string{"ACP_PROTOCOL_VERSION": "2"})
		}, "Subagent failure (provider: acp; stage: initialize; category: configuration; stop reason: error)"},
		{"no command", func(f *fixture) *config.Agent {
			ag := f.agent("success", "", nil)
			ag.Command = ""
			return ag
		}, "Subagent failure (provider: acp; stage: initialize; category: configuration; stop reason: error)"},
		{"bad policy", func(f *fixture) *config.Agent { return f.agent("success", "sometimes", nil) },
			"Subagent failure (provider: acp; stage: initialize; category: configuration; stop reason: error)"},
		{"command not found", func(f *fixture) *config.Agent {
			ag := f.agent("success", "", nil)
			ag.Command = "reins-no-such-acp-agent-" + f.canary
			return ag
		}, "Subagent failure (provider: acp; stage: process; category: process-start; stop reason: error)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			r, err := f.provider().Start(context.Background(), f.request(tc.agent(f), "x"))
			if err == nil {
				r.Dispose()
				t.Fatal("Start succeeded")
			}
			var se *subagent.StartError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not a *StartError", err)
			}
			if se.Diagnostic != tc.diag || err.Error() != tc.diag {
				t.Errorf("diagnostic = %q\nwant %q", se.Diagnostic, tc.diag)
			}
			if strings.Contains(se.Diagnostic, f.canary) {
				t.Error("canary in diagnostic")
			}
		})
	}
}

func TestWorkspaceMustBeAbsolute(t *testing.T) {
	f := newFixture(t)
	req := f.request(f.agent("success", "", nil), "x")
	req.Cwd = "relative/dir"
	_, err := f.provider().Start(context.Background(), req)
	want := "Subagent failure (provider: acp; stage: initialize; category: configuration; stop reason: error)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestPermissionPolicy(t *testing.T) {
	tests := []struct {
		name       string
		policy     string
		env        map[string]string
		permission tool.Permission
		stop       outcome.StopReason
		output     string
		diag       string
	}{
		{"allow, then completed", "allow", nil, tool.WorkspaceWrite,
			outcome.StopCompleted, "outcome=selected:allow", ""},
		{"allow, then refusal", "allow", map[string]string{"ACP_AFTER": "refusal"}, tool.WorkspaceWrite,
			outcome.StopRefusal, "outcome=selected:allow",
			"Permission decision (policy: allow; request: edit; decision: allowed)"},
		{"reject, then completed", "reject", nil, tool.WorkspaceWrite,
			outcome.StopCompleted, "outcome=selected:reject", ""},
		{"reject is the default policy", "", map[string]string{"ACP_AFTER": "max_tokens"}, tool.WorkspaceWrite,
			outcome.StopMaxTokens, "outcome=selected:reject",
			"Permission decision (policy: reject; request: edit; decision: rejected)"},
		{"reject, then remote cancel", "reject", map[string]string{"ACP_AFTER": "cancelled"}, tool.WorkspaceWrite,
			outcome.StopAborted, "outcome=selected:reject",
			"Permission decision (policy: reject; request: edit; decision: rejected)"},
		{"reject, then remote limit", "reject", map[string]string{"ACP_AFTER": "max_turn_requests"}, tool.WorkspaceWrite,
			outcome.StopError, "outcome=selected:reject",
			"Subagent failure (provider: acp; stage: prompt; category: remote-limit; stop reason: error)\n" +
				"Permission decision (policy: reject; request: edit; decision: rejected)"},
		{"request kind from the permission request", "reject", map[string]string{"ACP_PERM_KIND": "execute", "ACP_AFTER": "refusal"}, tool.WorkspaceWrite,
			outcome.StopRefusal, "outcome=selected:reject",
			"Permission decision (policy: reject; request: execute; decision: rejected)"},
		{"unknown kind is other", "allow", map[string]string{"ACP_PERM_KIND": "launch_missiles", "ACP_AFTER": "refusal"}, tool.WorkspaceWrite,
			outcome.StopRefusal, "outcome=selected:allow",
			"Permission decision (policy: allow; request: other; decision: allowed)"},
		{"allow without an allow-once option is cancelled", "allow", map[string]string{"ACP_PERM_OPTIONS": "always_only", "ACP_AFTER": "max_tokens"}, tool.WorkspaceWrite,
			outcome.StopMaxTokens, "outcome=cancelled",
			"Permission decision (policy: allow; request: edit; decision: cancelled)"},
		{"reject picks reject-always when it is the only reject", "reject", map[string]string{"ACP_PERM_OPTIONS": "always_only", "ACP_AFTER": "refusal"}, tool.WorkspaceWrite,
			outcome.StopRefusal, "outcome=selected:never",
			"Permission decision (policy: reject; request: edit; decision: rejected)"},
		{"a read-only parent holds allow to reading", "allow", map[string]string{"ACP_AFTER": "refusal"}, tool.ReadOnly,
			outcome.StopRefusal, "outcome=selected:reject",
			"Permission decision (policy: allow; request: edit; decision: rejected)"},
		{"crash after a rejection", "reject", nil, tool.WorkspaceWrite,
			outcome.StopError, "",
			"Subagent failure (provider: acp; stage: process; category: process-exit; stop reason: error; exit code: 4)\n" +
				"Permission decision (policy: reject; request: edit; decision: rejected)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			scenario := "permission"
			if strings.HasPrefix(tc.name, "crash") {
				scenario = "permission_crash"
			}
			req := f.request(f.agent(scenario, tc.policy, tc.env), "edit the file")
			req.Permission = tc.permission
			r, err := f.provider().Start(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			res := outcome.Settle(r.Wait(context.Background()))
			r.Dispose()
			if res.StopReason != tc.stop || text(res) != tc.output || res.Diagnostic != tc.diag {
				t.Errorf("got (%s, %q, %q)\nwant (%s, %q, %q)", res.StopReason, text(res), res.Diagnostic, tc.stop, tc.output, tc.diag)
			}
		})
	}
}

func TestLocalCancelCarriesNoDiagnostic(t *testing.T) {
	for _, scenario := range []string{"wait_cancel", "ignore_term"} {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			r, err := f.provider().Start(context.Background(), f.request(f.agent(scenario, "", nil), "x"))
			if err != nil {
				t.Fatal(err)
			}
			r.Cancel()
			res := outcome.Settle(r.Wait(context.Background()))
			if err := r.Dispose(); err != nil {
				t.Errorf("Dispose: %v", err)
			}
			if res.StopReason != outcome.StopAborted || res.Diagnostic != "" {
				t.Errorf("got (%s, %q), want aborted without diagnostic", res.StopReason, res.Diagnostic)
			}
		})
	}
}

func TestParentCancel(t *testing.T) {
	f := newFixture(t)
	r, err := f.provider().Start(context.Background(), f.request(f.agent("wait_cancel", "", nil), "x"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := r.Wait(ctx)
	r.Dispose()
	if res.StopReason != outcome.StopAborted || res.Diagnostic != "" {
		t.Errorf("got (%s, %q), want aborted without diagnostic", res.StopReason, res.Diagnostic)
	}
	if !strings.HasPrefix(text(res), "working") {
		t.Errorf("partial output %q, want what the child said", text(res))
	}
}

// A start the parent cancels — before it began, or while the child never
// answers initialize — fails without a diagnostic (the manager reports it
// aborted) and leaves no process.
func TestCancelledStart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
	}{{"before", 0}, {"during the handshake", 500 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			_, err := f.provider().Start(ctx, f.request(f.agent("hang_init", "", nil), "x"))
			var se *subagent.StartError
			if !errors.As(err, &se) || se.Diagnostic != "" {
				t.Fatalf("err = %v, want a StartError without diagnostic", err)
			}
			if live := f.leftBehind(); len(live) > 0 {
				t.Fatalf("Start returned with processes alive: %v", live)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	for _, scenario := range []string{"wait_cancel", "hang"} {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ag := f.agent(scenario, "", nil)
			// The timeout counts from the spawn and must fall after the
			// handshake; how long node takes to get there is the
			// machine's business. A timeout that fell during the start
			// still says timeout; it is then doubled and tried again.
			var res outcome.Result
			for ag.Timeout = 4 * time.Second; ; ag.Timeout *= 2 {
				r, err := f.provider().Start(context.Background(), f.request(ag, "do the task"))
				if err != nil {
					var se *subagent.StartError
					if !errors.As(err, &se) || !strings.Contains(se.Diagnostic, "category: timeout") || ag.Timeout > time.Minute {
						t.Fatalf("Start with timeout %s: %v", ag.Timeout, err)
					}
					t.Logf("timeout %s fell during the start on this machine: again with %s", ag.Timeout, 2*ag.Timeout)
					continue
				}
				res = outcome.Settle(r.Wait(context.Background()))
				if err := r.Dispose(); err != nil {
					t.Errorf("Dispose: %v", err)
				}
				break
			}
			want := "Subagent failure (provider: acp; stage: prompt; category: timeout; stop reason: aborted)"
			if res.StopReason != outcome.StopAborted || res.Diagnostic != want {
				t.Errorf("got (%s, %q), want aborted with %q", res.StopReason, res.Diagnostic, want)
			}
			if !strings.HasPrefix(text(res), "working") {
				t.Errorf("partial output %q", text(res))
			}
		})
	}
}

func TestDisposeWhileRunning(t *testing.T) {
	f := newFixture(t)
	r, err := f.provider().Start(context.Background(), f.request(f.agent("ignore_term", "", nil), "x"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Dispose(); err != nil {
		t.Fatal(err)
	}
	if err := r.Dispose(); err != nil { // idempotent
		t.Fatal(err)
	}
	if live := f.leftBehind(); len(live) > 0 {
		t.Fatalf("Dispose returned with processes alive: %v", live)
	}
	if res := r.Wait(context.Background()); res.StopReason != outcome.StopAborted || res.Diagnostic != "" {
		t.Errorf("got (%s, %q), want aborted without diagnostic", res.StopReason, res.Diagnostic)
	}
}

func TestGrandchildren(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		stop outcome.StopReason
		diag string
	}{
		{"outliving a completed run", nil, outcome.StopCompleted, ""},
		{"outliving a crash", map[string]string{"ACP_THEN": "crash"}, outcome.StopError,
			"Subagent failure (provider: acp; stage: process; category: process-exit; stop reason: error; exit code: 9)"},
		{"holding stdout after a crash", map[string]string{"ACP_THEN": "crash", "ACP_GC_STDIO": "inherit"}, outcome.StopError,
			"Subagent failure (provider: acp; stage: process; category: process-exit; stop reason: error; exit code: 9)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			res := f.run(f.agent("grandchild", "", tc.env))
			if res.StopReason != tc.stop || res.Diagnostic != tc.diag || text(res) != "spawned ok" {
				t.Errorf("got (%s, %q, %q)", res.StopReason, text(res), res.Diagnostic)
			}
			if live := f.leftBehind(); len(live) > 0 {
				t.Fatalf("Dispose returned with processes alive: %v", live)
			}
		})
	}
}

// Two children at once never mix outputs or diagnostics: every run's state
// is its own.
func TestConcurrentChildren(t *testing.T) {
	f := newFixture(t)
	p := f.provider()
	type job struct {
		ag     *config.Agent
		prompt string
	}
	jobs := []job{
		{f.agent("echo", "", map[string]string{"ACP_CHUNKS": "20"}), "alpha"},
		{f.agent("echo", "", map[string]string{"ACP_CHUNKS": "20"}), "beta"},
		{f.agent("crash_exit", "", map[string]string{"ACP_EXIT_CODE": "3"}), "x"},
		{f.agent("crash_exit", "", map[string]string{"ACP_EXIT_CODE": "5"}), "y"},
	}
	results := make([]outcome.Result, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := f.request(j.ag, j.prompt)
			req.RunID = fmt.Sprintf("run-%d", i)
			r, err := p.Start(context.Background(), req)
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = outcome.Settle(r.Wait(context.Background()))
			r.Dispose()
		}()
	}
	wg.Wait()
	for i, name := range []string{"alpha", "beta"} {
		var want strings.Builder
		for k := range 20 {
			fmt.Fprintf(&want, "%s#%d;", name, k)
		}
		if got := text(results[i]); got != want.String() || results[i].StopReason != outcome.StopCompleted {
			t.Errorf("%s: got (%s, %q)", name, results[i].StopReason, got)
		}
	}
	for i, code := range []int{3, 5} {
		want := fmt.Sprintf("Subagent failure (provider: acp; stage: process; category: process-exit; stop reason: error; exit code: %d)", code)
		if results[2+i].Diagnostic != want {
			t.Errorf("crash %d: diagnostic %q, want %q", code, results[2+i].Diagnostic, want)
		}
	}
}

// Canaries in the child's stderr, error messages, session id, permission
// titles, raw input, locations, option names and metadata reach neither the
// result, its diagnostic, nor the tool result a parent model reads; the raw
// causes are in the host log.
func TestNothingChildControlledLeaks(t *testing.T) {
	for _, policy := range []string{"allow", "reject"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			res := f.run(f.agent("leaky", policy, map[string]string{"ACP_PERM_KIND": "edit"}))
			decision := map[string]string{"allow": "allowed", "reject": "rejected"}[policy]
			want := "Subagent failure (provider: acp; stage: prompt; category: unknown; stop reason: error)\n" +
				"Permission decision (policy: " + policy + "; request: edit; decision: " + decision + ")"
			if res.Diagnostic != want {
				t.Errorf("diagnostic %q\nwant %q", res.Diagnostic, want)
			}
			rendered := subagent.Render(res).Content
			for what, s := range map[string]string{"output": text(res), "diagnostic": res.Diagnostic, "tool result": rendered} {
				if strings.Contains(s, f.canary) {
					t.Errorf("canary in %s: %q", what, s)
				}
			}
			if !strings.Contains(rendered, "clean answer") {
				t.Errorf("tool result lost the partial output: %q", rendered)
			}
			if !strings.Contains(f.hostLog(), f.canary) {
				t.Error("the raw causes did not reach the host log")
			}
		})
	}
}

// TestOutOfTimeSkipsTheGraces (issue 29: `--timeout 3s` took 8.1 s
// against an ACP child that ignores SIGTERM): when the tree's time budget
// is spent, or the child let a cancel go unanswered for the cancel grace,
// it is owed no further grace — SIGTERM follows at once, SIGKILL after the
// ladder's Term. The graces here are ten minutes: a teardown that waits
// one of them does not finish within the test's bound.
func TestOutOfTimeSkipsTheGraces(t *testing.T) {
	long := 10 * time.Minute
	for _, tc := range []struct {
		name        string
		cancelGrace time.Duration
		end         func(r subagent.Run) outcome.Result
	}{
		{"the tree's time budget ran out", long, func(r subagent.Run) outcome.Result {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(&budget.Exhausted{Kind: budget.Time, Limit: "3s", Used: "3s"})
			return r.Wait(ctx)
		}},
		{"a cancel the child never answered", 300 * time.Millisecond, func(r subagent.Run) outcome.Result {
			r.Cancel()
			return r.Wait(context.Background())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			p := New(Options{
				Logf:        func(string, ...any) {},
				Ladder:      proc.Ladder{Grace: long, Term: 500 * time.Millisecond, Reap: 10 * time.Second},
				CancelGrace: tc.cancelGrace,
				ExitWait:    testExitWait,
			})
			r, err := p.Start(context.Background(), f.request(f.agent("ignore_term", "", nil), "x"))
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan outcome.Result, 1)
			go func() {
				res := tc.end(r)
				if err := r.Dispose(); err != nil {
					t.Errorf("Dispose: %v", err)
				}
				done <- res
			}()
			select {
			case res := <-done:
				if res.StopReason != outcome.StopAborted {
					t.Errorf("stop reason %s, want aborted", res.StopReason)
				}
			case <-time.After(3 * time.Minute):
				t.Fatal("the teardown waited out a grace the child was not owed")
			}
			if live := f.leftBehind(); len(live) > 0 {
				t.Fatalf("processes alive after the teardown: %v", live)
			}
		})
	}
}
