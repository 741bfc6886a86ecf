package tool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// fuzzTree is a workspace with links of every kind beside a directory it
// must never touch:
//
//	root/ws        the workspace
//	root/outside   a secret file the tools must not read or change
//	root/ws2       a sibling whose name extends the workspace's (a bound
//	               checked by string prefix would let it in)
type fuzzTree struct {
	root, ws, outside string
}

func newFuzzTree(tb testing.TB, root string) *fuzzTree {
	tb.Helper()
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		tb.Fatal(err)
	}
	ft := &fuzzTree{root: root, ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside")}
	ft.reset(tb)
	return ft
}

// reset rebuilds the tree from scratch.
func (ft *fuzzTree) reset(tb testing.TB) {
	tb.Helper()
	for _, d := range []string{"ws", "outside", "ws2"} {
		p := filepath.Join(ft.root, d)
		_ = os.Chmod(p, 0o755)
		if err := os.RemoveAll(p); err != nil {
			tb.Fatal(err)
		}
	}
	files := map[string]string{
		"ws/file.txt":         "alpha\nbeta\ngamma beta\n",
		"ws/sub/inner.txt":    "inner text\n",
		"ws/sub/deeper/x.go":  "package x\n",
		"ws/bin.dat":          "\x00\x01\x02binary",
		"ws/empty.txt":        "",
		"ws/.git/config":      "[core]\n",
		"outside/secret.txt":  "top secret\n",
		"outside/dir/f.txt":   "f\n",
		"ws2/neighbour.txt":   "not yours\n",
		"ws/sub/deeper/y.txt": strings.Repeat("long line ", 300) + "\n",
	}
	for name, content := range files {
		p := filepath.Join(ft.root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	links := map[string]string{
		"ws/link-in":      "sub",
		"ws/link-file":    "file.txt",
		"ws/link-out":     "../outside",
		"ws/link-abs":     filepath.Join(ft.outside, "secret.txt"),
		"ws/dangling-out": "../outside/new.txt",
		"ws/dangling-in":  "sub/new.txt",
		"ws/sub/up":       "..",
		"ws/sub/upup":     "../..",
		"ws/loop":         "loop",
		"ws/chain1":       "chain2",
		"ws/chain2":       "link-out",
		"ws/abs-in":       filepath.Join(ft.ws, "sub"),
		"ws/prefix":       "../ws2",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ft.root, name)); err != nil {
			tb.Fatal(err)
		}
	}
}

// oracle resolves p (absolute and clean) to where the kernel would take
// it, independently of wsfs.RealPath: filepath.EvalSymlinks on the longest
// existing prefix, dangling links followed to their targets, a missing
// tail taken as written. ok is false for a link cycle. The tree's link
// targets hold no ".." after a link, so joining them lexically is exact.
func oracle(p string, hops int) (string, bool) {
	if hops > 64 {
		return "", false
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r, true
	}
	if p == "/" {
		return p, true
	}
	parent, ok := oracle(filepath.Dir(p), hops)
	if !ok {
		return "", false
	}
	q := filepath.Join(parent, filepath.Base(p))
	if fi, err := os.Lstat(q); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(q)
		if err != nil {
			return "", false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(parent, target)
		}
		return oracle(filepath.Clean(target), hops+1)
	}
	return q, true
}

// inside reports whether p is dir or below it, computed apart from the
// package's own within.
func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// expand replaces the placeholders @WS@, @OUT@ and @ROOT@ with the tree's
// absolute paths, so seeds (and their mutations) can name absolute paths
// inside and outside the workspace.
func (ft *fuzzTree) expand(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("@WS@"), []byte(ft.ws))
	b = bytes.ReplaceAll(b, []byte("@OUT@"), []byte(ft.outside))
	return bytes.ReplaceAll(b, []byte("@ROOT@"), []byte(ft.root))
}

var resolveSeeds = []string{
	"", ".", "file.txt", "sub/inner.txt", "new/dir/f.txt", "sub/../file.txt", "../outside/secret.txt",
	"link-in/inner.txt", "link-file", "link-out/secret.txt", "link-out/new/f", "link-abs", "dangling-out",
	"dangling-in", "sub/up/file.txt", "sub/upup/outside/secret.txt", "sub/upup/ws/file.txt", "loop/x",
	"chain1/secret.txt", "abs-in/inner.txt", "prefix/neighbour.txt", "../ws2/neighbour.txt", "file.txt/x",
	"@WS@/sub", "@OUT@/secret.txt", "@ROOT@/ws2", "/", "//etc/passwd", "sub/./deeper/../../link-out",
	"a\x00b", strings.Repeat("a/", 300),
}

// FuzzResolve checks the workspace bound against an independent oracle:
// in a bounded mode an accepted path's real location is inside the
// workspace, and a path refused as outside really is outside; full-access
// returns the path cleaned and absolute.
func FuzzResolve(f *testing.F) {
	for _, s := range resolveSeeds {
		f.Add(s, false)
	}
	f.Add("link-out/secret.txt", true)
	ft := newFuzzTree(f, f.TempDir())
	realWS := ft.ws

	f.Fuzz(func(t *testing.T, path string, full bool) {
		path = string(ft.expand([]byte(path)))
		perm := WorkspaceWrite
		if full {
			perm = FullAccess
		}
		env := &Env{Workspace: ft.ws, Permission: perm}
		got, err := env.Resolve(path)
		if err == nil && (!filepath.IsAbs(got) || filepath.Clean(got) != got) {
			t.Fatalf("Resolve(%q) = %q: not clean and absolute", path, got)
		}
		if full {
			if err != nil {
				t.Fatalf("full-access Resolve(%q): %v", path, err)
			}
			return
		}
		lexical := path
		if !filepath.IsAbs(lexical) {
			lexical = filepath.Join(ft.ws, lexical)
		}
		lexical = filepath.Clean(lexical)
		real, ok := oracle(lexical, 0)
		var oe *OutsideWorkspaceError
		switch {
		case err == nil:
			if got != lexical {
				t.Fatalf("Resolve(%q) = %q, want the lexical path %q", path, got, lexical)
			}
			if !ok {
				t.Fatalf("Resolve(%q) accepted a path the oracle cannot resolve (a link cycle)", path)
			}
			if !inside(realWS, real) {
				t.Fatalf("Resolve(%q) accepted %q, whose real location %q is outside the workspace", path, got, real)
			}
		case errors.As(err, &oe):
			if ok && inside(realWS, real) {
				t.Fatalf("Resolve(%q) refused as outside, but its real location %q is inside", path, real)
			}
			if oe.Path != path {
				t.Fatalf("refusal names %q, want the path as given %q", oe.Path, path)
			}
		}
		// Any other error (a cycle, a name too long, a NUL byte) is a
		// refusal the oracle need not agree with.
	})
}

// fuzzTools are the built-ins FuzzToolArgs drives: all but bash, whose
// arguments are a program.
func fuzzTools() []Tool {
	var out []Tool
	for _, t := range Builtins() {
		if t.Spec().Name != "bash" {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec().Name < out[j].Spec().Name })
	return out
}

// snapshot lists everything under dir: kind, mode and content of each entry.
func snapshot(tb testing.TB, dir string) string {
	tb.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v", strings.TrimPrefix(p, dir), fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			fmt.Fprintf(&b, " -> %s", t)
		case fi.Mode().IsRegular():
			c, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", c)
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

// fuzzCap is the output cap FuzzToolArgs runs with, small so cutting is
// exercised.
const fuzzCap = 2048

// FuzzToolArgs gives every built-in but bash arbitrary argument bytes in a
// workspace beside a directory it must not touch. Invariants: no panic; a
// result comes back, capped; and nothing outside the workspace changes —
// not the outside directory, not the sibling, not the tree's root.
func FuzzToolArgs(f *testing.F) {
	tools := fuzzTools()
	idx := map[string]uint8{}
	for i, t := range tools {
		idx[t.Spec().Name] = uint8(i)
	}
	for _, s := range []struct{ tool, args string }{
		{"read", `{"path":"file.txt"}`},
		{"read", `{"path":"file.txt","offset":2,"limit":1}`},
		{"read", `{"path":"bin.dat"}`},
		{"read", `{"path":"link-abs"}`},
		{"read", `{"path":"@OUT@/secret.txt"}`},
		{"read", `{"path":"sub/deeper/y.txt","offset":0}`},
		{"read", `{"path":`},
		{"write", `{"path":"new/file.txt","content":"hello"}`},
		{"write", `{"path":"dangling-out","content":"escape"}`},
		{"write", `{"path":"link-out/secret.txt","content":"overwrite"}`},
		{"write", `{"path":"@OUT@/new.txt","content":"x"}`},
		{"write", `{"path":"sub","content":"x"}`},
		{"write", `{"path":"prefix/neighbour.txt","content":"x"}`},
		{"edit", `{"path":"file.txt","old_string":"beta","new_string":"BETA","replace_all":true}`},
		{"edit", `{"path":"file.txt","old_string":"beta","new_string":"x"}`},
		{"edit", `{"path":"link-out/secret.txt","old_string":"top","new_string":"no"}`},
		{"edit", `{"path":"sub/upup/outside/secret.txt","old_string":"top","new_string":"no"}`},
		{"grep", `{"pattern":"beta"}`},
		{"grep", `{"pattern":"secret","path":"link-out"}`},
		{"grep", `{"pattern":"(?i)TEXT","glob":"**/*.txt"}`},
		{"grep", `{"pattern":"[","path":"sub"}`},
		{"glob", `{"pattern":"**/*"}`},
		{"glob", `{"pattern":"@OUT@/*"}`},
		{"glob", `{"pattern":"link-out/**"}`},
		{"glob", `{"pattern":"{a,b}{c,d}{e,f}/*.{go,txt}"}`},
		{"ls", `{}`},
		{"ls", `{"path":"link-out"}`},
		{"ls", `{"path":"sub/up"}`},
		{"ls", `{"path":"@ROOT@"}`},
		{"ls", `[]`},
	} {
		f.Add(idx[s.tool], []byte(s.args))
	}
	ft := newFuzzTree(f, f.TempDir())
	want := map[string]string{}
	guarded := []string{ft.outside, filepath.Join(ft.root, "ws2")}
	for _, d := range guarded {
		want[d] = snapshot(f, d)
	}
	rootEntries := func() string {
		es, _ := os.ReadDir(ft.root)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return strings.Join(names, " ")
	}
	wantRoot := rootEntries()
	reg := NewRegistry(tools...)

	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		tl := tools[int(which)%len(tools)]
		name := tl.Spec().Name
		if tl.Needs() != ReadOnly {
			defer ft.reset(t) // the next input starts from the same tree, even after a failure
		}
		env := &Env{Workspace: ft.ws, Permission: WorkspaceWrite, OutputCap: fuzzCap}
		res := reg.Run(context.Background(), env, name, ft.expand(args))
		if len(res.Content) > fuzzCap+len("\n[output truncated: showing 2048 of 18446744073709551615 bytes]") {
			t.Fatalf("%s result of %d bytes exceeds the cap of %d", name, len(res.Content), fuzzCap)
		}
		if res.Content == "" && res.IsError {
			t.Fatalf("%s error result with no text", name)
		}
		for _, d := range guarded {
			if got := snapshot(t, d); got != want[d] {
				t.Fatalf("%s %s changed %s outside the workspace:\nwas:\n%s\nnow:\n%s", name, args, d, want[d], got)
			}
		}
		if got := rootEntries(); got != wantRoot {
			t.Fatalf("%s %s changed the directory holding the workspace: %q, was %q", name, args, got, wantRoot)
		}
	})
}
