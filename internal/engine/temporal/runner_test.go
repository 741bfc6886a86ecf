package temporal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tool"
)

// newRunner is a worker's runner with its own REINS_HOME, the in-process
// mock model answering from script, and the sandbox off (the sandbox has
// its own tests; this one is about what reaches the child).
func newRunner(t *testing.T, script string, max tool.Permission) (*Runner, string) {
	t.Helper()
	home := t.TempDir()
	sp := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"REINS_MOCK_SCRIPT": sp}
	return &Runner{Options: harness.Options{Home: home, Sandbox: "off", Getenv: func(k string) string { return env[k] }}, MaxPermission: max, Roots: []string{os.TempDir()}}, home
}

// The worker runs the child with its own harness and writes the child's
// session log under a worker session that names the remote parent.
func TestRunnerRunsTheChild(t *testing.T) {
	r, home := newRunner(t, "fallback: {echo: true, text: 'mock: '}\n", "")
	cwd := t.TempDir()
	out, err := r.Run(context.Background(), Task{RunID: "run-3", Agent: "general", Prompt: "hello", ParentSession: "P-1",
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
		out, err := r.Run(context.Background(), Task{Agent: "general", Prompt: "write-it", Depth: 1, Cwd: cwd, Permission: "full-access", Model: "mock/echo"})
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
	good := Task{Agent: "general", Prompt: "p", Depth: 1, Cwd: cwd, Permission: "workspace-write", Model: "mock/echo"}
	for _, tt := range []struct {
		name string
		edit func(*Task)
		want string
	}{
		{"unknown agent", func(t *Task) { t.Agent = "nobody" }, `no agent "nobody"`},
		{"missing cwd", func(t *Task) { t.Cwd = filepath.Join(cwd, "gone") }, "not a directory"},
		{"cwd outside the worker's roots", func(t *Task) { t.Cwd = "/" }, "outside the folders"},
		{"bad permission", func(t *Task) { t.Permission = "root" }, "root"},
		{"depth 0", func(t *Task) { t.Depth = 0 }, "depth"},
		{"unknown model", func(t *Task) { t.Model = "nope/x" }, "nope"},
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

// The child's selection reaches the heartbeat (progress) as the child
// runs, through the one fold, with the worker session: what a parent
// settles from when the worker stops answering. The first version fed
// the fold from the stand-in's own observer, which never sees the
// child's events: the real-server test caught the empty beat.
func TestRunnerFeedsTheHeartbeat(t *testing.T) {
	r, _ := newRunner(t, "fallback: {echo: true, text: 'mock: '}\n", "")
	pg := newProgress(0)
	ctx := context.WithValue(context.Background(), progressKey{}, pg)
	out, err := r.Run(ctx, Task{RunID: "run-4", Agent: "general", Prompt: "hello", ParentSession: "P-1",
		Depth: 1, Cwd: t.TempDir(), Permission: "workspace-write", Model: "mock/echo"})
	if err != nil {
		t.Fatal(err)
	}
	sel, ws := pg.load()
	if llm.BlocksText(sel) != "mock: hello" || ws != out.WorkerSession || ws == "" {
		t.Errorf("heartbeat selection %q, worker session %q (outcome's %q)", llm.BlocksText(sel), ws, out.WorkerSession)
	}
	select {
	case <-pg.changed:
	default:
		t.Error("a completed message did not wake the heartbeat")
	}
}
