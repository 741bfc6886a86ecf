package pichild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinsdev/reins/internal/config"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/proc"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var markN atomic.Int64

// fixture runs fake pi children: a bash script named pi, first on the
// child's PATH, and a unique marker in the child's environment so a scan of
// /proc finds anything left behind.
type fixture struct {
	prov     subagent.Provider
	sessions string
	bin      string
	out      string // a directory the fake child may write into
	mark     string
}

func newFixture(t *testing.T, body string) *fixture {
	t.Helper()
	f := &fixture{sessions: t.TempDir(), bin: t.TempDir(), out: t.TempDir()}
	f.mark = fmt.Sprintf("REINS_PICHILD_TEST_MARK=%d-%d", os.Getpid(), markN.Add(1))
	body = strings.ReplaceAll(body, "$OUT", f.out)
	if err := os.WriteFile(filepath.Join(f.bin, "pi"), []byte("#!/bin/bash\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + f.bin + ":/usr/bin:/bin", "FOO=parent", "KEEP=kept", f.mark}
	f.prov = New(Options{
		SessionsDir: f.sessions,
		Environ:     func() []string { return env },
		Grace:       50 * time.Millisecond,
		Ladder:      proc.Ladder{Grace: 100 * time.Millisecond, Term: 200 * time.Millisecond, Reap: 5 * time.Second},
	})
	t.Cleanup(func() { noLeftovers(t, f.mark) })
	return f
}

func (f *fixture) request(mutate func(*config.Agent)) subagent.Request {
	ag := &config.Agent{Name: "scout", Provider: config.ProviderPi, Command: "pi", Source: "builtin"}
	if mutate != nil {
		mutate(ag)
	}
	// The manager's request: an unrestricted parent, so the child's tools
	// are the agent file's.
	return subagent.Request{RunID: "run-1", Agent: ag, Prompt: "inspect auth", ParentSession: "parent-1", Depth: 1,
		Cwd: f.out, Permission: tool.WorkspaceWrite, Tools: subagent.ChildTools(nil, ag.Tools)}
}

// run starts, waits for and disposes one run.
func (f *fixture) run(t *testing.T, req subagent.Request) outcome.Result {
	t.Helper()
	r, err := f.prov.Start(context.Background(), req)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	res := outcome.Settle(r.Wait(context.Background()))
	if err := r.Dispose(); err != nil {
		t.Errorf("Dispose: %v", err)
	}
	return res
}

func noLeftovers(t *testing.T, marker string) {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		data, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(data, []byte{0}) {
			if string(kv) == marker {
				t.Errorf("process %s left behind", e.Name())
			}
		}
	}
}

const (
	toolUseMsg = `echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"partial"}],"stopReason":"toolUse","usage":{"input":10,"output":2,"cacheRead":5,"cacheWrite":1,"totalTokens":18}}}'`
	stopMsg    = `echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"final"}],"stopReason":"stop","usage":{"input":20,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":23}}}'`
)

func text(bs []llm.Block) string { return llm.BlocksText(bs) }

func TestCompleted(t *testing.T) {
	f := newFixture(t, `
printf '%s\n' "$@" > $OUT/args
echo "$FOO $KEEP" > $OUT/env
`+toolUseMsg+`
echo '{"type":"tool_execution_start","toolName":"read","args":{"path":"a"}}'
`+stopMsg)
	req := f.request(func(a *config.Agent) {
		a.Model = "reins-mock/mock-model"
		a.Tools = []string{"read", "glob", "subagent", "bash"}
		a.SystemPrompt = "You are a scout."
		a.Env = map[string]string{"FOO": "agent"}
		a.Args = []string{"--thinking", "off"}
	})
	res := f.run(t, req)
	if res.StopReason != outcome.StopCompleted || res.Diagnostic != "" || text(res.Output) != "final" {
		t.Fatalf("result %+v", res)
	}
	if want := (llm.Usage{InputTokens: 36, OutputTokens: 5, CacheReadTokens: 5, CacheWriteTokens: 1}); res.Usage != want {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
	dir := filepath.Join(f.sessions, "parent-1", "children", "run-1")
	args, _ := os.ReadFile(filepath.Join(f.out, "args"))
	want := strings.Join([]string{"--mode", "json", "-p", "--no-session", "--model", "reins-mock/mock-model",
		"--tools", "read,find,bash", "--append-system-prompt", filepath.Join(dir, "system-prompt.md"),
		"--thinking", "off", "inspect auth"}, "\n") + "\n"
	if d := cmp.Diff(want, string(args)); d != "" {
		t.Errorf("pi args (-want +got):\n%s", d)
	}
	if env, _ := os.ReadFile(filepath.Join(f.out, "env")); string(env) != "agent kept\n" {
		t.Errorf("child env FOO KEEP = %q, want the agent's FOO over the parent's", env)
	}
	if sp, _ := os.ReadFile(filepath.Join(dir, "system-prompt.md")); string(sp) != "You are a scout." {
		t.Errorf("system-prompt.md = %q", sp)
	}
	for _, a := range []string{"result.json", "events.jsonl", "stdout.log", "stderr.log", "transcript.log"} {
		if _, err := os.Stat(filepath.Join(dir, a)); err != nil {
			t.Errorf("artifact %s: %v", a, err)
		}
	}
}

// Each way a pi child can end, as the parent sees it: the stop reason, the
// fixed diagnostic, the partial output.
func TestEndings(t *testing.T) {
	tests := []struct {
		name   string
		script string
		stop   outcome.StopReason
		diag   string
		output string
	}{
		{
			name:   "error answer",
			script: `echo '{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"429 slow down"}}'` + "\nexit 1",
			stop:   outcome.StopError,
			diag:   "Subagent failure (provider: pi; stage: run; category: child-error; stop reason: error; exit code: 1)",
		},
		{
			name:   "exit without a terminal answer",
			script: toolUseMsg + "\nexit 1",
			stop:   outcome.StopError,
			diag:   "Subagent failure (provider: pi; stage: run; category: missing-terminal; stop reason: error; exit code: 1)",
			output: "partial",
		},
		{
			name:   "clean exit without a terminal answer",
			script: toolUseMsg,
			stop:   outcome.StopError,
			diag:   "Subagent failure (provider: pi; stage: run; category: missing-terminal; stop reason: error; exit code: 0)",
			output: "partial",
		},
		{
			name:   "killed by a signal",
			script: toolUseMsg + "\nkill -KILL $$",
			stop:   outcome.StopError,
			diag:   "Subagent failure (provider: pi; stage: process; category: process-exit; stop reason: error; signal: SIGKILL)",
			output: "partial",
		},
		{
			name:   "not JSON",
			script: "echo 'Error: no API key'\nexit 0",
			stop:   outcome.StopError,
			diag:   "Subagent failure (provider: pi; stage: run; category: protocol; stop reason: error; exit code: 0)",
		},
		{
			name:   "empty completion",
			script: `echo '{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"stop"}}'`,
			stop:   outcome.StopError,
			diag:   "Subagent failure (provider: pi; stage: run; category: child-error; stop reason: error; exit code: 0)",
		},
		{
			name:   "empty completion after a partial answer",
			script: toolUseMsg + "\n" + `echo '{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"stop"}}'`,
			stop:   outcome.StopError,
			diag:   "Subagent failure (provider: pi; stage: run; category: child-error; stop reason: error; exit code: 0)",
			output: "partial",
		},
		{
			name:   "length",
			script: `echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"cut sho"}],"stopReason":"length"}}'`,
			stop:   outcome.StopMaxTokens,
			output: "cut sho",
		},
		{
			name:   "remote abort",
			script: `echo '{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"aborted"}}'`,
			stop:   outcome.StopAborted,
		},
		{
			name:   "stop then lingering",
			script: stopMsg + "\nexec sleep 1000",
			stop:   outcome.StopCompleted,
			output: "final",
		},
		{
			name:   "reasoning-only answer is content",
			script: `echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"thinking","thinking":"pondered"}],"stopReason":"stop"}}'`,
			stop:   outcome.StopCompleted,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.script)
			res := f.run(t, f.request(nil))
			if res.StopReason != tt.stop || res.Diagnostic != tt.diag || text(res.Output) != tt.output {
				t.Errorf("got stop %q diag %q output %q\nwant stop %q diag %q output %q",
					res.StopReason, res.Diagnostic, text(res.Output), tt.stop, tt.diag, tt.output)
			}
		})
	}
}

func TestSpawnFailure(t *testing.T) {
	f := newFixture(t, "")
	_, err := f.prov.Start(context.Background(), f.request(func(a *config.Agent) { a.Command = "no-such-pi" }))
	var se *subagent.StartError
	if !errors.As(err, &se) {
		t.Fatalf("Start error %v, want *StartError", err)
	}
	if want := "Subagent failure (provider: pi; stage: process; category: process-start; stop reason: error)"; se.Diagnostic != want {
		t.Errorf("diagnostic %q, want %q", se.Diagnostic, want)
	}
	// The wrapper still wrote its failing result.json.
	if _, err := os.Stat(filepath.Join(f.sessions, "parent-1", "children", "run-1", "result.json")); err != nil {
		t.Errorf("result.json: %v", err)
	}
	// No sessions directory: a start failure too, not a panic.
	_, err = New(Options{}).Start(context.Background(), f.request(nil))
	if !errors.As(err, &se) {
		t.Errorf("no sessions dir: %v", err)
	}
}

func TestTimeout(t *testing.T) {
	f := newFixture(t, toolUseMsg+"\nexec sleep 1000")
	res := f.run(t, f.request(func(a *config.Agent) { a.Timeout = 200 * time.Millisecond }))
	want := "Subagent failure (provider: pi; stage: run; category: timeout; stop reason: aborted)"
	// The output is not checked: on a loaded machine the timeout may come
	// before the child's first line.
	if res.StopReason != outcome.StopAborted || res.Diagnostic != want {
		t.Errorf("got %q %q", res.StopReason, res.Diagnostic)
	}
}

// A local cancel (job_kill) and a parent cancel both end the run aborted,
// with no diagnostic, and leave nothing running.
func TestCancel(t *testing.T) {
	for _, how := range []string{"local", "parent"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t, toolUseMsg+"\ntouch $OUT/spoke\nexec sleep 1000")
			r, err := f.prov.Start(context.Background(), f.request(nil))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; ; i++ {
				if _, err := os.Stat(filepath.Join(f.out, "spoke")); err == nil {
					break
				}
				if i > 3000 {
					t.Fatal("the child never spoke")
				}
				time.Sleep(5 * time.Millisecond)
			}
			ctx := context.Background()
			if how == "local" {
				r.Cancel()
			} else {
				c, cancel := context.WithCancel(ctx)
				cancel()
				ctx = c
			}
			res := outcome.Settle(r.Wait(ctx))
			if res.StopReason != outcome.StopAborted || res.Diagnostic != "" {
				t.Errorf("got %q %q", res.StopReason, res.Diagnostic)
			}
			if err := r.Dispose(); err != nil {
				t.Error(err)
			}
			if err := r.Dispose(); err != nil {
				t.Error("second Dispose:", err)
			}
			noLeftovers(t, f.mark)
		})
	}
}

// Dispose without Wait tears a running child down.
func TestDisposeRunning(t *testing.T) {
	f := newFixture(t, "exec sleep 1000")
	r, err := f.prov.Start(context.Background(), f.request(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Dispose(); err != nil {
		t.Fatal(err)
	}
	noLeftovers(t, f.mark)
}

// What the child writes to stderr or says in its error messages stays in
// its artifacts: never in the result the parent sees.
func TestCanary(t *testing.T) {
	const canary = "CANARY-9d1e"
	f := newFixture(t, `
echo "secret=`+canary+`" >&2
echo '{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"`+canary+`"}}'
exit 1`)
	res := f.run(t, f.request(nil))
	if res.StopReason != outcome.StopError || res.Diagnostic == "" {
		t.Fatalf("result %+v", res)
	}
	if strings.Contains(res.Diagnostic, canary) || strings.Contains(text(res.Output), canary) {
		t.Errorf("canary reached the result: %+v", res)
	}
	rendered := subagent.Render(res).Content
	if strings.Contains(rendered, canary) {
		t.Errorf("canary in the tool result %q", rendered)
	}
	data, _ := os.ReadFile(filepath.Join(f.sessions, "parent-1", "children", "run-1", "result.json"))
	if !bytes.Contains(data, []byte(canary)) {
		t.Errorf("result.json should keep the child's error for humans: %s", data)
	}
}

// Run ids restart in a resumed session: a second run with the same id gets
// its own directory.
func TestRunDirCollision(t *testing.T) {
	f := newFixture(t, stopMsg)
	f.run(t, f.request(nil))
	f.run(t, f.request(nil))
	for _, d := range []string{"run-1", "run-1.2"} {
		if _, err := os.Stat(filepath.Join(f.sessions, "parent-1", "children", d, "result.json")); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
}

func TestPiTools(t *testing.T) {
	tests := []struct {
		tools []string
		perm  tool.Permission
		want  []string
	}{
		{nil, tool.WorkspaceWrite, nil},
		{nil, tool.FullAccess, nil},
		{nil, tool.ReadOnly, []string{"read", "grep", "find", "ls"}},
		{[]string{}, tool.WorkspaceWrite, []string{}},
		{[]string{"read", "glob", "ls", "grep"}, tool.WorkspaceWrite, []string{"read", "find", "ls", "grep"}},
		{[]string{"bash", "write", "edit", "read"}, tool.ReadOnly, []string{"read"}},
		{[]string{"subagent", "job_output", "job_kill", "job_list"}, tool.FullAccess, []string{}},
		{[]string{"read", "read"}, tool.FullAccess, []string{"read"}},
	}
	for _, tt := range tests {
		got := piTools(tt.tools, tt.perm)
		if (got == nil) != (tt.want == nil) || !cmp.Equal(got, tt.want) {
			t.Errorf("piTools(%v, %s) = %#v, want %#v", tt.tools, tt.perm, got, tt.want)
		}
	}
}

// pi's --tools is the request's tools — the intersection of the parent's
// and the agent file's — not the agent file's list: a parent limited to
// read, grep and subagent cannot hand bash or ls to a pi child.
func TestToolsAreTheRequestsIntersection(t *testing.T) {
	f := newFixture(t, `
printf '%s\n' "$@" > $OUT/args
`+stopMsg)
	req := f.request(func(a *config.Agent) { a.Tools = []string{"read", "bash", "ls"} })
	req.Tools = subagent.ChildTools([]string{"read", "grep", "subagent"}, req.Agent.Tools)
	if res := f.run(t, req); res.StopReason != outcome.StopCompleted {
		t.Fatalf("result %+v", res)
	}
	args, _ := os.ReadFile(filepath.Join(f.out, "args"))
	if !strings.Contains(string(args), "--tools\nread\n") {
		t.Errorf("pi args %q, want --tools read", args)
	}
}
