package tool

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
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

// TestGlobMatchPolynomial: ten "**" groups against a forty-segment name
// that does not match took the backtracking matcher C(40,10) steps.
func TestGlobMatchPolynomial(t *testing.T) {
	pattern := strings.Repeat("**/x/", 10) + "y"
	name := strings.Repeat("x/", 40) + "z"
	m, err := compileGlob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	finishes(t, 10*time.Second, "matching a hostile pattern", func() {
		if m.Match(name) {
			t.Error("matched")
		}
		if !m.Match(strings.Repeat("x/", 40) + "y") {
			t.Error("did not match")
		}
	})
}

// backtrackMatch is the old recursive matcher, kept as the oracle the
// polynomial one must agree with on small inputs.
func backtrackMatch(p, n []string) bool {
	for len(p) > 0 {
		if p[0] == "**" {
			for len(p) > 0 && p[0] == "**" {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := range len(n) + 1 {
				if backtrackMatch(p, n[i:]) {
					return true
				}
			}
			return false
		}
		if len(n) == 0 {
			return false
		}
		if ok, _ := path.Match(p[0], n[0]); !ok {
			return false
		}
		p, n = p[1:], n[1:]
	}
	return len(n) == 0
}

// TestGlobMatchAgreesWithBacktracking compares the matcher with the old
// one on every small random pattern and name over a tiny alphabet.
func TestGlobMatchAgreesWithBacktracking(t *testing.T) {
	pick := func(r *rand.Rand, xs []string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = xs[r.IntN(len(xs))]
		}
		return out
	}
	pats := []string{"**", "*", "a", "b", "a*", "?", "[ab]", ""}
	names := []string{"a", "b", "ab", "", "ba"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		p := pick(r, pats, 1+r.IntN(6))
		n := pick(r, names, 1+r.IntN(6))
		pattern, name := strings.Join(p, "/"), strings.Join(n, "/")
		m, err := compileGlob(pattern)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", pattern, err)
		}
		want := backtrackMatch(strings.Split(pattern, "/"), strings.Split(name, "/"))
		if got := m.Match(name); got != want {
			t.Fatalf("Match(%q, %q) = %v, backtracking says %v", pattern, name, got, want)
		}
	}
}

// FuzzGlobMatch checks the matcher against the backtracking oracle.
func FuzzGlobMatch(f *testing.F) {
	f.Add("**/a/**/b", "a/x/b")
	f.Add("a/*/**", "a/b")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if strings.Count(pattern, "/") > 8 || strings.Count(name, "/") > 8 || strings.ContainsAny(pattern, "{}") {
			return
		}
		m, err := compileGlob(pattern)
		if err != nil {
			return
		}
		want := backtrackMatch(strings.Split(pattern, "/"), strings.Split(name, "/"))
		if got := m.Match(name); got != want {
			t.Fatalf("Match(%q, %q) = %v, backtracking says %v", pattern, name, got, want)
		}
	})
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
