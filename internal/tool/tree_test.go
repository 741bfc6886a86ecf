package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWalkStoppedEarlyClosesDirs: a grep cut short by its match cap leaves
// no directory open (the walk keeps parents open for their children).
func TestWalkStoppedEarlyClosesDirs(t *testing.T) {
	env := newEnv(t, ReadOnly)
	files := map[string]string{}
	for i := range 40 {
		for j := range 20 {
			files[fmt.Sprintf("d%d/e%d/f%d.txt", i, j%4, j)] = "hit\nhit\n"
		}
	}
	writeFiles(t, env.Workspace, files)
	before := openFDs(t)
	for range 5 {
		wantResult(t, call(t, env, "grep", map[string]any{"pattern": "hit"}), false, "[stopped after 500 matches")
	}
	if after := openFDs(t); after > before {
		t.Errorf("%d file descriptors open after the walks, %d before", after, before)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("reading /proc/self/fd: %v", err)
	}
	return len(es)
}

// TestWalkLinksAndNesting: the descriptor walk finds files at depth, does
// not descend into a symlinked directory (inside or outside the
// workspace), searches a symlinked file whose target stays inside (opened
// through the workspace root, even when the link climbs out of its own
// directory), and reads info/exclude through a .git that is a symlink to
// a directory inside.
func TestWalkLinksAndNesting(t *testing.T) {
	env := newEnv(t, ReadOnly)
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"o/secret.go": "needle outside\n"})
	writeFiles(t, env.Workspace, map[string]string{
		"a/b/c/d/deep.go":     "needle deep\n",
		"a/top.go":            "needle top\n",
		"gitdir/info/exclude": "excluded.go\n",
		"a/excluded.go":       "needle excluded\n",
		"gitdir/x.go":         "nothing\n",
	})
	for link, target := range map[string]string{
		"a/b/up.go": "../top.go",                           // a file inside, via ..
		"dirlink":   "a",                                   // a directory inside
		"outdir":    filepath.Join(outside, "o"),           // a directory outside
		"out.go":    filepath.Join(outside, "o/secret.go"), // a file outside
		".git":      "gitdir",                              // .git as a link
	} {
		if err := os.Symlink(target, filepath.Join(env.Workspace, link)); err != nil {
			t.Fatal(err)
		}
	}
	res := call(t, env, "grep", map[string]any{"pattern": "needle", "output_mode": "files_with_matches"})
	want := "a/b/c/d/deep.go\na/b/up.go\na/top.go\n"
	if res.IsError || res.Content != want {
		t.Errorf("grep:\n%s\nwant:\n%s", res.Content, want)
	}
	res = call(t, env, "glob", map[string]any{"pattern": "**/*.go"})
	for _, w := range []string{"a/b/c/d/deep.go", "a/b/up.go", "a/top.go"} {
		if !strings.Contains(res.Content, w+"\n") {
			t.Errorf("glob lacks %s:\n%s", w, res.Content)
		}
	}
	for _, bad := range []string{"dirlink/", "outdir/", "out.go", "excluded.go"} {
		if strings.Contains(res.Content, bad) {
			t.Errorf("glob has %s:\n%s", bad, res.Content)
		}
	}
}

// TestWorkspaceFiles: the terminal's @path list is what a search walks
// (hidden names, .git, node_modules and ignored files left out), sorted;
// a limit cuts it and says so, and so does the walk's entry bound.
func TestWorkspaceFiles(t *testing.T) {
	env := newEnv(t, ReadOnly)
	writeFiles(t, env.Workspace, map[string]string{
		"b.go": "", "a/c.go": "", "a/d.log": "", ".env": "", ".git/HEAD": "",
		".gitignore": "*.log\n", "node_modules/m/i.js": "",
	})
	files, cut, err := WorkspaceFiles(t.Context(), env, 10)
	if err != nil || cut || strings.Join(files, " ") != "a/c.go b.go" {
		t.Errorf("WorkspaceFiles = %q, cut %v, %v; want [a/c.go b.go], not cut", files, cut, err)
	}
	files, cut, err = WorkspaceFiles(t.Context(), env, 1)
	if err != nil || !cut || len(files) != 1 {
		t.Errorf("WorkspaceFiles with limit 1 = %q, cut %v, %v; want one file, cut", files, cut, err)
	}
	old := walkMaxEntries
	walkMaxEntries = 2
	t.Cleanup(func() { walkMaxEntries = old })
	if _, cut, err = WorkspaceFiles(t.Context(), env, 10); err != nil || !cut {
		t.Errorf("WorkspaceFiles past the walk bound: cut %v, %v; want cut", cut, err)
	}
}
