package wsfs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a walk leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tree writes files (slash path -> content) below dir.
func tree(t *testing.T, dir string, files map[string]string) {
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

// walk returns the sorted Rel paths a walk of start passes.
func walk(t *testing.T, fsy *FS, start string, opts WalkOptions) ([]string, error) {
	t.Helper()
	var mu sync.Mutex
	var out []string
	err := Walk(t.Context(), fsy, start, opts, func(f File) error {
		mu.Lock()
		defer mu.Unlock()
		out = append(out, f.Rel)
		return nil
	})
	slices.Sort(out)
	return out, err
}

func newFS(t *testing.T, ws string, confined bool) *FS {
	t.Helper()
	fsy, err := New(ws, confined)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fsy.Close)
	return fsy
}

// TestWalkRules: the walk skips hidden names, .git and node_modules unless
// told otherwise, applies .gitignore only inside a repository and .ignore
// everywhere, honours the rules of the directories above a start below
// the workspace, and does not descend into a symlink to a directory (it is
// passed as a file with Link set, which the tools' reads then refuse).
func TestWalkRules(t *testing.T) {
	ws := t.TempDir()
	tree(t, ws, map[string]string{
		"a.go":                "",
		".hidden":             "",
		".git/config":         "",
		"node_modules/m/i.js": "",
		".gitignore":          "*.log\n",
		".ignore":             "skip/\n",
		"x.log":               "",
		"skip/s.go":           "",
		"sub/b.go":            "",
		"sub/c.log":           "",
		"other/.gitignore":    "*.go\n",
		"other/o.go":          "",
	})
	if err := os.Symlink(filepath.Join(ws, "sub"), filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	fsy := newFS(t, ws, true)
	got, err := walk(t, fsy, ws, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.go", "link", "sub/b.go"}; !slices.Equal(got, want) {
		t.Errorf("walk = %q, want %q", got, want)
	}
	var (
		mu    sync.Mutex
		links []string
	)
	err = Walk(t.Context(), fsy, ws, WalkOptions{}, func(f File) error {
		if f.Link {
			mu.Lock()
			links = append(links, f.Rel)
			mu.Unlock()
		}
		return nil
	})
	if err != nil || !slices.Equal(links, []string{"link"}) {
		t.Errorf("links passed = %q, %v; want [link]", links, err)
	}
	got, _ = walk(t, fsy, filepath.Join(ws, "sub"), WalkOptions{})
	if want := []string{"b.go"}; !slices.Equal(got, want) {
		t.Errorf("walk of sub = %q, want %q (the workspace's .gitignore applies)", got, want)
	}
	got, _ = walk(t, fsy, ws, WalkOptions{Hidden: true, NoIgnore: true, KeepDir: func(n string) bool { return n == "node_modules" }})
	want := []string{".gitignore", ".hidden", ".ignore", "a.go", "link", "node_modules/m/i.js", "other/.gitignore", "other/o.go", "skip/s.go", "sub/b.go", "sub/c.log", "x.log"}
	if !slices.Equal(got, want) {
		t.Errorf("walk with everything = %q, want %q", got, want)
	}
}

// TestWalkBoundAndCancel: a walk past MaxEntries ends with ErrWalkBound; a
// canceled one with the context's error; an error from fn stops it.
func TestWalkBoundAndCancel(t *testing.T) {
	ws := t.TempDir()
	files := map[string]string{}
	for _, d := range []string{"a", "b", "c", "d", "e"} {
		files[d+"/f"] = ""
	}
	tree(t, ws, files)
	fsy := newFS(t, ws, true)
	if _, err := walk(t, fsy, ws, WalkOptions{MaxEntries: 3}); !errors.Is(err, ErrWalkBound) {
		t.Errorf("bounded walk: %v, want ErrWalkBound", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Walk(ctx, fsy, ws, WalkOptions{}, func(File) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled walk: %v", err)
	}
	stop := errors.New("stop")
	if err := Walk(t.Context(), fsy, ws, WalkOptions{}, func(File) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("walk stopped by fn: %v", err)
	}
}

// TestConfinedStaysInside: a confined FS refuses a path outside the
// workspace and a symlink out of it; an unconfined one follows both.
func TestConfinedStaysInside(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	tree(t, outside, map[string]string{"secret": "s"})
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	fsy := newFS(t, ws, true)
	if _, err := fsy.Stat(filepath.Join(outside, "secret")); !errors.Is(err, errOutside) {
		t.Errorf("Stat outside: %v, want errOutside", err)
	}
	if f, err := fsy.Open(filepath.Join(ws, "out")); err == nil {
		f.Close()
		t.Error("a symlink out of the workspace was opened")
	}
	free := newFS(t, ws, false)
	f, err := free.Open(filepath.Join(ws, "out"))
	if err != nil {
		t.Fatalf("unconfined open through a link: %v", err)
	}
	f.Close()
}

// TestOpenRegularRefusesFIFO: a named pipe is refused, not opened (an open
// of a FIFO without a writer would block).
func TestOpenRegularRefusesFIFO(t *testing.T) {
	ws := t.TempDir()
	p := filepath.Join(ws, "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	fsy := newFS(t, ws, true)
	if _, _, err := fsy.OpenRegular(p, os.O_RDONLY, 0); !errors.Is(err, ErrNotRegular) {
		t.Errorf("OpenRegular(FIFO): %v, want ErrNotRegular", err)
	}
	if _, _, err := fsy.OpenRegular(filepath.Join(ws, "new"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err == nil {
		t.Error("OpenRegular accepted O_TRUNC")
	}
}

// TestRealPath: links are resolved component by component, a dangling one
// is followed to where it points, and a missing tail is kept as written.
func TestRealPath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tree(t, dir, map[string]string{"real/f": ""})
	for link, target := range map[string]string{"l": "real", "dangling": "gone/x", "loop": "loop"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for in, want := range map[string]string{
		"l/f":            "real/f",
		"l/new/deeper":   "real/new/deeper",
		"dangling":       "gone/x",
		"real/../l/./f":  "real/f",
		"missing/l/tail": "missing/l/tail",
	} {
		got, err := RealPath(filepath.Join(dir, in))
		if err != nil || got != filepath.Join(dir, want) {
			t.Errorf("RealPath(%s) = %q, %v; want %q", in, got, err, filepath.Join(dir, want))
		}
	}
	if _, err := RealPath(filepath.Join(dir, "loop")); err == nil {
		t.Error("RealPath of a link cycle gave no error")
	}
	if !Within(dir, filepath.Join(dir, "a")) || Within(dir, dir+"2") {
		t.Error("Within is wrong about a sibling with the same prefix")
	}
}
