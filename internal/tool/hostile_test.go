package tool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// finishes runs f and fails the test if it has not returned within d: a
// hang is a failure, not a stuck test binary.
func finishes(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// mkfifo makes a named pipe at name in the workspace.
func mkfifo(t *testing.T, name string) {
	t.Helper()
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
}

// TestFileToolsRefuseFIFO: a named pipe in the workspace is refused by every
// file tool rather than blocking the run on an open or read nobody answers.
func TestFileToolsRefuseFIFO(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	fifo := filepath.Join(env.Workspace, "pipe")
	mkfifo(t, fifo)
	writeFiles(t, env.Workspace, map[string]string{"a.txt": "needle\n"})
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"write", map[string]any{"path": "pipe", "content": "x"}, "not a regular file"},
		{"read", map[string]any{"path": "pipe"}, "not a regular file"},
		{"edit", map[string]any{"path": "pipe", "old_string": "a", "new_string": "b"}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			var res Result
			finishes(t, 5*time.Second, tt.tool+" on a FIFO", func() { res = call(t, env, tt.tool, tt.args) })
			wantResult(t, res, true, tt.want)
		})
	}
	t.Run("grep", func(t *testing.T) {
		var res Result
		finishes(t, 5*time.Second, "grep over a FIFO", func() {
			res = call(t, env, "grep", map[string]any{"pattern": "needle"})
		})
		wantResult(t, res, false, "a.txt:1:needle")
		res = call(t, env, "grep", map[string]any{"pattern": "needle", "path": "pipe"})
		wantResult(t, res, true, "not a regular file")
	})
	t.Run("glob and ls", func(t *testing.T) {
		finishes(t, 5*time.Second, "glob and ls", func() {
			call(t, env, "glob", map[string]any{"pattern": "**"})
			call(t, env, "ls", map[string]any{})
		})
	})
}

// TestToolsHonourCancel: a call made after the run was canceled does
// nothing and says so, whatever the tool.
func TestToolsHonourCancel(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	writeFiles(t, env.Workspace, map[string]string{"a.txt": "alpha\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"path": "a.txt"}},
		{"write", map[string]any{"path": "b.txt", "content": "x"}},
		{"edit", map[string]any{"path": "a.txt", "old_string": "alpha", "new_string": "beta"}},
		{"grep", map[string]any{"pattern": "alpha"}},
		{"glob", map[string]any{"pattern": "**"}},
		{"ls", map[string]any{}},
		{"bash", map[string]any{"command": "echo hi > c.txt"}},
	}
	for _, c := range calls {
		res := callCtx(t, ctx, env, c.tool, c.args)
		wantResult(t, res, true, "canceled")
	}
	if _, err := os.Stat(filepath.Join(env.Workspace, "b.txt")); err == nil {
		t.Error("write ran after cancellation")
	}
	if got := readFile(t, filepath.Join(env.Workspace, "a.txt")); got != "alpha\n" {
		t.Errorf("edit ran after cancellation: %q", got)
	}
}

// TestWalkBounded: a walk stops after walkMaxEntries entries and says so,
// in glob and in grep.
func TestWalkBounded(t *testing.T) {
	env := newEnv(t, ReadOnly)
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("d%d/f.txt", i)] = "x\n"
	}
	writeFiles(t, env.Workspace, files)
	old := walkMaxEntries
	walkMaxEntries = 10
	t.Cleanup(func() { walkMaxEntries = old })
	wantResult(t, call(t, env, "glob", map[string]any{"pattern": "**/nomatch"}), false, "stopped after visiting 10 entries")
	wantResult(t, call(t, env, "grep", map[string]any{"pattern": "nomatch"}), false, "stopped after visiting 10 entries")
}

// TestGlobHostilePatternOverDeepTree is the reported case end to end: ten
// "**" groups over a forty-level tree, through glob and grep's glob.
func TestGlobHostilePatternOverDeepTree(t *testing.T) {
	env := newEnv(t, ReadOnly)
	deep := strings.Repeat("x/", 40) + "z.txt"
	writeFiles(t, env.Workspace, map[string]string{deep: "needle\n"})
	pattern := strings.Repeat("**/x/", 10) + "y"
	finishes(t, 20*time.Second, "glob with a hostile pattern", func() {
		wantResult(t, call(t, env, "glob", map[string]any{"pattern": pattern}), false, "no files match")
		wantResult(t, call(t, env, "grep", map[string]any{"pattern": "needle", "glob": pattern}), false, "no matches")
		wantResult(t, call(t, env, "glob", map[string]any{"pattern": strings.Repeat("**/x/", 10) + "z.txt"}), false, deep)
	})
}
