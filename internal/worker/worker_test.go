package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reinsdev/reins/internal/engine/temporal"
	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
)

// newRunner is a worker's runner with its own REINS_HOME, the in-process
// mock model answering from script, and the sandbox off (the sandbox has
// its own tests; this one is about what reaches the child).
func newRunner(t *testing.T, script string, max tool.Permission) (*temporal.Runner, string) {
	r, home, _ := newRunnerHarnesses(t, script, max)
	return r, home
}

// newRunnerHarnesses is newRunner with the harnesses it keeps.
func newRunnerHarnesses(t *testing.T, script string, max tool.Permission) (*temporal.Runner, string, *Harnesses) {
	t.Helper()
	home := t.TempDir()
	sp := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"REINS_MOCK_SCRIPT": sp}
	hs := &Harnesses{Options: harness.Options{Home: home, Sandbox: "off", Getenv: func(k string) string { return env[k] }}}
	t.Cleanup(hs.Close)
	c := &Child{Harnesses: hs}
	return &temporal.Runner{Child: c.Run, MaxPermission: max, Roots: []string{os.TempDir()}}, home, hs
}

// The worker runs the child with its own harness and writes the child's
// session log under a worker session that names the remote parent.
func TestRunnerRunsTheChild(t *testing.T) {
	r, home := newRunner(t, "fallback: {echo: true, text: 'mock: '}\n", "")
	cwd := t.TempDir()
	out, err := r.Run(context.Background(), temporal.Task{RunID: "run-3", Agent: "general", Prompt: "hello", ParentSession: "P-1",
		Depth: 1, Cwd: cwd, Permission: "workspace-write", Model: "mock/echo"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Result.StopReason != outcome.StopCompleted || llm.BlocksText(out.Result.Output) != "mock: hello" || out.Result.Usage.InputTokens == 0 {
		t.Fatalf("outcome %+v", out)
	}
	ws, err := session.Load(filepath.Join(home, "sessions", out.WorkerSession, session.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if ws.Header.ParentSession != "P-1" || ws.Header.Agent != "worker" || ws.Header.Cwd != cwd {
		t.Errorf("worker session header %+v", ws.Header)
	}
	ents, _ := os.ReadDir(filepath.Join(home, "sessions"))
	if len(ents) != 2 {
		t.Errorf("%d sessions on the worker, want the stand-in and the child", len(ents))
	}
}

// A parent's mode is narrowed to the worker's --permission: a write the
// parent's full-access would allow is refused under read-only.
func TestRunnerCapsPermission(t *testing.T) {
	script := `replies:
  - match: write-it
    toolCalls:
      - {id: c1, name: write, arguments: {path: f.txt, content: x}}
fallback: {text: done}
`
	for _, tt := range []struct {
		max     tool.Permission
		written bool
	}{{"", true}, {tool.ReadOnly, false}} {
		r, _ := newRunner(t, script, tt.max)
		cwd := t.TempDir()
		out, err := r.Run(context.Background(), temporal.Task{Agent: "general", Prompt: "write-it", Depth: 1, Cwd: cwd, Permission: "full-access", Model: "mock/echo"})
		if err != nil || out.Result.StopReason != outcome.StopCompleted {
			t.Fatalf("max %q: %+v %v", tt.max, out, err)
		}
		_, statErr := os.Stat(filepath.Join(cwd, "f.txt"))
		if (statErr == nil) != tt.written {
			t.Errorf("max %q: file written %v, want %v", tt.max, statErr == nil, tt.written)
		}
	}
}

// What the worker cannot set up is an error (not retried, category
// configuration), never a child run.
func TestRunnerSetupErrors(t *testing.T) {
	r, _ := newRunner(t, "fallback: {text: x}\n", "")
	cwd := t.TempDir()
	good := temporal.Task{Agent: "general", Prompt: "p", Depth: 1, Cwd: cwd, Permission: "workspace-write", Model: "mock/echo"}
	for _, tt := range []struct {
		name string
		edit func(*temporal.Task)
		want string
	}{
		{"unknown agent", func(t *temporal.Task) { t.Agent = "nobody" }, `no agent "nobody"`},
		{"missing cwd", func(t *temporal.Task) { t.Cwd = filepath.Join(cwd, "gone") }, "not a directory"},
		{"cwd outside the worker's roots", func(t *temporal.Task) { t.Cwd = "/" }, "outside the folders"},
		{"bad permission", func(t *temporal.Task) { t.Permission = "root" }, "root"},
		{"depth 0", func(t *temporal.Task) { t.Depth = 0 }, "depth"},
		{"unknown model", func(t *temporal.Task) { t.Model = "nope/x" }, "nope"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			task := good
			tt.edit(&task)
			if _, err := r.Run(context.Background(), task); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// A worker keeps one harness per workspace (issue 49): a second task in
// the same folder reuses it, a task in another folder gets its own, and a
// change to the folder's agent files (or config, or the trust list) makes
// it again, so the next task sees the new agent. On the old runner every
// task made a harness of its own.
func TestHarnessPerWorkspace(t *testing.T) {
	r, home, hs := newRunnerHarnesses(t, "fallback: {echo: true, text: 'mock: '}\n", "")
	cwd, other := t.TempDir(), t.TempDir()
	run := func(dir, agent string) error {
		t.Helper()
		out, err := r.Run(context.Background(), temporal.Task{Agent: agent, Prompt: "hi", Depth: 1, Cwd: dir, Permission: "workspace-write", Model: "mock/echo"})
		if err == nil && out.Result.StopReason != outcome.StopCompleted {
			t.Fatalf("outcome %+v", out)
		}
		return err
	}
	made := func() int {
		hs.mu.Lock()
		defer hs.mu.Unlock()
		return hs.made
	}
	for range 3 {
		if err := run(cwd, "general"); err != nil {
			t.Fatal(err)
		}
	}
	if n := made(); n != 1 {
		t.Fatalf("3 tasks in one workspace made %d harnesses, want 1", n)
	}
	if err := run(other, "general"); err != nil {
		t.Fatal(err)
	}
	if n := made(); n != 2 {
		t.Fatalf("a second workspace: %d harnesses made, want 2", n)
	}
	// A new agent file in the user's agents folder: the harness is made
	// again and the agent is there.
	if err := run(cwd, "scout"); err == nil || !strings.Contains(err.Error(), `no agent "scout"`) {
		t.Fatalf("before the agent file: err = %v", err)
	}
	dir := filepath.Join(home, "agents")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scout.md"), []byte("---\nname: scout\ndescription: looks around\n---\nLook around.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(cwd, "scout"); err != nil {
		t.Fatalf("after the agent file: %v", err)
	}
	if n := made(); n != 3 {
		t.Fatalf("after a change: %d harnesses made, want 3", n)
	}
	if err := run(cwd, "scout"); err != nil {
		t.Fatal(err)
	}
	if n := made(); n != 3 {
		t.Fatalf("no change since: %d harnesses made, want 3", n)
	}
}

// Tasks of one workspace run at once on its one harness.
func TestHarnessSharedByParallelTasks(t *testing.T) {
	r, _, hs := newRunnerHarnesses(t, "fallback: {echo: true, text: 'mock: '}\n", "")
	cwd := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			out, err := r.Run(context.Background(), temporal.Task{Agent: "general", Prompt: fmt.Sprint("task ", i), Depth: 1, Cwd: cwd, Permission: "workspace-write", Model: "mock/echo"})
			if err == nil && llm.BlocksText(out.Result.Output) != fmt.Sprint("mock: task ", i) {
				err = fmt.Errorf("task %d: %+v", i, out)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.made != 1 {
		t.Errorf("8 tasks made %d harnesses, want 1", hs.made)
	}
}

// foldReporter is a heartbeat's Reporter that keeps what the heartbeat
// would carry: the one fold over the child's events, and the worker
// session.
type foldReporter struct {
	mu     sync.Mutex
	fold   outcome.Fold
	worker string
	events int
}

func (r *foldReporter) Push(e session.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fold.Push(e)
	r.events++
}

func (r *foldReporter) SetWorker(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.worker = id
}

// The child's selection reaches the heartbeat as the child runs, through
// the one fold, with the worker session: what a parent settles from when
// the worker stops answering. The child's events reach it through the
// harness's observer (a harness is shared by its workspace's tasks), never
// another task's, and not the stand-in's own.
func TestRunnerFeedsTheHeartbeat(t *testing.T) {
	r, _ := newRunner(t, "fallback: {echo: true, text: 'mock: '}\n", "")
	cwd := t.TempDir()
	run := func(prompt string) (*foldReporter, temporal.Outcome) {
		rep := &foldReporter{}
		out, err := r.Run(temporal.WithReporter(context.Background(), rep), temporal.Task{RunID: "run-" + prompt, Agent: "general", Prompt: prompt, ParentSession: "P-1",
			Depth: 1, Cwd: cwd, Permission: "workspace-write", Model: "mock/echo"})
		if err != nil {
			t.Fatal(err)
		}
		return rep, out
	}
	for _, p := range []string{"hello", "again"} { // the second task shares the harness
		rep, out := run(p)
		rep.mu.Lock()
		sel, ws := llm.BlocksText(rep.fold.Collect()), rep.worker
		rep.mu.Unlock()
		if sel != "mock: "+p || ws != out.WorkerSession || ws == "" {
			t.Errorf("task %s: heartbeat selection %q, worker session %q (outcome's %q)", p, sel, ws, out.WorkerSession)
		}
	}
}
