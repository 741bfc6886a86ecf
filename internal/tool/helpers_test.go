package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newEnv returns an env on a fresh workspace directory.
func newEnv(t *testing.T, perm Permission) *Env {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Env{Workspace: ws, Permission: perm}
}

// call runs a built-in through a registry, as the agent loop does. args is
// marshaled unless it is already a json.RawMessage.
func call(t *testing.T, env *Env, name string, args any) Result {
	t.Helper()
	return callCtx(t, context.Background(), env, name, args)
}

func callCtx(t *testing.T, ctx context.Context, env *Env, name string, args any) Result {
	t.Helper()
	raw, ok := args.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	return NewBuiltinRegistry().Run(ctx, env, name, raw)
}

// writeFiles creates files (slash paths relative to dir) with contents.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantResult checks a result's error flag and that its content holds every
// one of subs.
func wantResult(t *testing.T, res Result, isError bool, subs ...string) {
	t.Helper()
	if res.IsError != isError {
		t.Errorf("IsError = %v, want %v; content:\n%s", res.IsError, isError, res.Content)
	}
	for _, s := range subs {
		if !strings.Contains(res.Content, s) {
			t.Errorf("content lacks %q; content:\n%s", s, res.Content)
		}
	}
}

func TestPermissionMin(t *testing.T) {
	modes := []Permission{ReadOnly, WorkspaceWrite, FullAccess}
	for i, p := range modes {
		for j, q := range modes {
			want := modes[min(i, j)]
			if got := p.Min(q); got != want {
				t.Errorf("%s.Min(%s) = %s, want %s", p, q, got, want)
			}
		}
		// An unset or unknown mode never reads as something wider.
		for _, bad := range []Permission{"", "root"} {
			if got := p.Min(bad); got != ReadOnly {
				t.Errorf("%s.Min(%q) = %s, want read-only", p, bad, got)
			}
			if got := bad.Min(p); got != ReadOnly {
				t.Errorf("%q.Min(%s) = %s, want read-only", bad, p, got)
			}
		}
	}
}
