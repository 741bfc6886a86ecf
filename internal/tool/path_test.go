package tool

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	ws := env.Workspace
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, ws, map[string]string{"sub/a.txt": "a"})
	writeFiles(t, outside, map[string]string{"secret.txt": "s"})
	links := map[string]string{
		"out":      outside,                              // dir link leaving the workspace
		"outfile":  filepath.Join(outside, "secret.txt"), // file link leaving it
		"dangling": filepath.Join(outside, "new.txt"),    // dangling link leaving it
		"relout":   "../" + filepath.Base(outside),       // relative link, resolves outside only if siblings
		"in":       "sub",                                // link staying inside
		"loop":     "loop",                               // a cycle
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name    string
		path    string
		want    string // for accepted paths
		outside bool   // refused as outside the workspace
		fail    bool   // refused for another reason
	}{
		{name: "empty is workspace", path: "", want: ws},
		{name: "dot", path: ".", want: ws},
		{name: "relative", path: "sub/a.txt", want: filepath.Join(ws, "sub/a.txt")},
		{name: "missing inside", path: "new/dir/f.txt", want: filepath.Join(ws, "new/dir/f.txt")},
		{name: "dotdot staying inside", path: "sub/../sub/a.txt", want: filepath.Join(ws, "sub/a.txt")},
		{name: "absolute inside", path: filepath.Join(ws, "sub"), want: filepath.Join(ws, "sub")},
		{name: "link inside", path: "in/a.txt", want: filepath.Join(ws, "in/a.txt")},
		{name: "dotdot escape", path: "../x", outside: true},
		{name: "deep dotdot escape", path: "sub/../../x", outside: true},
		{name: "absolute outside", path: filepath.Join(outside, "secret.txt"), outside: true},
		{name: "root", path: "/", outside: true},
		{name: "dir symlink escape", path: "out/secret.txt", outside: true},
		{name: "dir symlink escape to missing file", path: "out/new/f.txt", outside: true},
		{name: "file symlink escape", path: "outfile", outside: true},
		{name: "dangling symlink escape", path: "dangling", outside: true},
		{name: "symlink loop", path: "loop/x", fail: true},
	}
	if filepath.Dir(outside) == filepath.Dir(ws) {
		tests = append(tests, struct {
			name    string
			path    string
			want    string
			outside bool
			fail    bool
		}{name: "relative symlink escape", path: "relout/secret.txt", outside: true})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := env.Resolve(tt.path)
			var oe *OutsideWorkspaceError
			switch {
			case tt.outside:
				if !errors.As(err, &oe) {
					t.Fatalf("Resolve(%q) = %q, %v; want an OutsideWorkspaceError", tt.path, got, err)
				}
				if oe.Path != tt.path {
					t.Errorf("error names %q, want %q", oe.Path, tt.path)
				}
			case tt.fail:
				if err == nil || errors.As(err, &oe) {
					t.Fatalf("Resolve(%q) = %q, %v; want a resolution error", tt.path, got, err)
				}
			default:
				if err != nil || got != tt.want {
					t.Fatalf("Resolve(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
				}
			}
		})
	}

	// full-access lifts the bound for every path the bounded modes refuse.
	full := &Env{Workspace: ws, Permission: FullAccess}
	for _, p := range []string{"../x", filepath.Join(outside, "secret.txt"), "out/secret.txt", "dangling"} {
		if _, err := full.Resolve(p); err != nil {
			t.Errorf("full-access Resolve(%q): %v", p, err)
		}
	}
	// read-only is bounded like workspace-write.
	ro := &Env{Workspace: ws, Permission: ReadOnly}
	if _, err := ro.Resolve("../x"); err == nil {
		t.Error("read-only Resolve(\"../x\") accepted")
	}
}

func TestResolveMessage(t *testing.T) {
	env := newEnv(t, ReadOnly)
	_, err := env.Resolve("../x")
	if err == nil || err.Error() != `path "../x" is outside the workspace` {
		t.Fatalf("err = %v", err)
	}
}

func TestResolveNoWorkspace(t *testing.T) {
	if _, err := (&Env{Permission: ReadOnly}).Resolve("x"); err == nil {
		t.Fatal("Resolve with no workspace succeeded")
	}
}
