package tool

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "d/a.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "d/e/a.go", true},
		{"**/*.go", "d/e/a.txt", false},
		{"d/**", "d/e/a.go", true},
		{"d/**", "x/a.go", false},
		{"d/**/a.go", "d/a.go", true},
		{"d/**/a.go", "d/x/y/a.go", true},
		{"d/**/**/a.go", "d/x/a.go", true},
		{"**", "anything/at/all", true},
		{"*.{ts,tsx}", "a.tsx", true},
		{"*.{ts,tsx}", "a.ts", true},
		{"*.{ts,tsx}", "a.js", false},
		{"{src,lib}/**/*.{c,h}", "lib/x/y.h", true},
		{"{src,lib}/**/*.{c,h}", "bin/y.h", false},
		{"{x}", "{x}", true},    // no comma: literal
		{"a{b", "a{b", true},    // unbalanced: literal
		{`\*.go`, "*.go", true}, // escaped meta
		{`\*.go`, "a.go", false},
		{"?.go", "ab.go", false},
		{"[ab].go", "b.go", true},
	}
	for _, tt := range tests {
		m, err := compileGlob(tt.pattern)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", tt.pattern, err)
			continue
		}
		if got := m.Match(tt.name); got != tt.want {
			t.Errorf("match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
	for _, bad := range []string{"[", "a/[b"} {
		if _, err := compileGlob(bad); err == nil {
			t.Errorf("compileGlob(%q) accepted a malformed pattern", bad)
		}
	}
	if _, err := compileGlob(strings.Repeat("{a,b}", 12)); err == nil {
		t.Error("compileGlob accepted 4096 brace expansions")
	}
}

func TestSplitGlob(t *testing.T) {
	tests := []struct{ pattern, dir, rest string }{
		{"*.go", "", "*.go"},
		{"main.go", "", "main.go"},
		{"internal/tool/*.go", "internal/tool", "*.go"},
		{"internal/**/x.go", "internal", "**/x.go"},
		{"/abs/*.go", "/abs", "*.go"},
		{"/*.go", "/", "*.go"},
	}
	for _, tt := range tests {
		dir, rest := splitGlob(tt.pattern)
		if dir != tt.dir || rest != tt.rest {
			t.Errorf("splitGlob(%q) = %q, %q; want %q, %q", tt.pattern, dir, rest, tt.dir, tt.rest)
		}
	}
}

// searchTree is a small workspace for grep and glob.
var searchTree = map[string]string{
	"main.go":                  "package main\n\nfunc main() {}\n",
	"README.md":                "# title\nfunc in prose\n",
	"internal/a/a.go":          "package a\n\nfunc A() {}\n",
	"internal/a/a_test.go":     "package a\n",
	"internal/b/b.txt":         "func text\n",
	".git/config":              "func in git\n",
	"node_modules/m/index.go":  "func in node_modules\n",
	"web/app.ts":               "function f() {}\n",
	"web/view.tsx":             "function g() {}\n",
	"bin/tool.bin":             "func\x00binary\n",
	"internal/a/deep/x/y.go":   "package y\nfunc Y() {}\n",
	"internal/a/deep/notes.md": "nothing\n",
}

func TestGrep(t *testing.T) {
	env := newEnv(t, ReadOnly)
	writeFiles(t, env.Workspace, searchTree)
	tests := []struct {
		name    string
		args    any
		isError bool
		want    string // exact content
	}{
		{name: "everything", args: map[string]any{"pattern": `^func`},
			want: "README.md:2:func in prose\ninternal/a/a.go:3:func A() {}\ninternal/a/deep/x/y.go:2:func Y() {}\ninternal/b/b.txt:1:func text\nmain.go:3:func main() {}\nweb/app.ts:1:function f() {}\nweb/view.tsx:1:function g() {}\n"},
		{name: "glob on base name", args: map[string]any{"pattern": `^func`, "glob": "*.go"},
			want: "internal/a/a.go:3:func A() {}\ninternal/a/deep/x/y.go:2:func Y() {}\nmain.go:3:func main() {}\n"},
		{name: "doublestar glob", args: map[string]any{"pattern": `^func`, "glob": "**/*.go"},
			want: "internal/a/a.go:3:func A() {}\ninternal/a/deep/x/y.go:2:func Y() {}\nmain.go:3:func main() {}\n"},
		{name: "glob with dirs", args: map[string]any{"pattern": `^func`, "glob": "internal/**/*.go"},
			want: "internal/a/a.go:3:func A() {}\ninternal/a/deep/x/y.go:2:func Y() {}\n"},
		{name: "brace glob", args: map[string]any{"pattern": `function`, "glob": "*.{ts,tsx}"},
			want: "web/app.ts:1:function f() {}\nweb/view.tsx:1:function g() {}\n"},
		{name: "sub path", args: map[string]any{"pattern": `package`, "path": "internal/a"},
			want: "internal/a/a.go:1:package a\ninternal/a/a_test.go:1:package a\ninternal/a/deep/x/y.go:1:package y\n"},
		{name: "single file", args: map[string]any{"pattern": `main`, "path": "main.go"},
			want: "main.go:1:package main\nmain.go:3:func main() {}\n"},
		{name: "case insensitive", args: map[string]any{"pattern": `(?i)TITLE`}, want: "README.md:1:# title\n"},
		{name: "no matches", args: map[string]any{"pattern": `zzz`}, want: "no matches"},
		{name: "bad regexp", args: map[string]any{"pattern": `(`}, isError: true,
			want: "bad regular expression: error parsing regexp: missing closing ): `(`"},
		{name: "bad glob", args: map[string]any{"pattern": `x`, "glob": "["}, isError: true,
			want: `bad glob "[": malformed glob pattern`},
		{name: "missing path", args: map[string]any{"pattern": `x`, "path": "nope"}, isError: true,
			want: "grep nope: no such file or directory"},
		{name: "outside", args: map[string]any{"pattern": `x`, "path": "/"}, isError: true,
			want: `path "/" is outside the workspace`},
		{name: "missing pattern", args: map[string]any{}, isError: true, want: `missing required parameter "pattern"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, env, "grep", tt.args)
			if res.IsError != tt.isError || res.Content != tt.want {
				t.Errorf("grep = {IsError:%v}\n%s\nwant {IsError:%v}\n%s", res.IsError, res.Content, tt.isError, tt.want)
			}
		})
	}
}

func TestGrepCap(t *testing.T) {
	env := newEnv(t, ReadOnly)
	var b strings.Builder
	for i := range grepMaxMatches + 50 {
		fmt.Fprintf(&b, "hit %d\n", i)
	}
	writeFiles(t, env.Workspace, map[string]string{"big.txt": b.String()})
	res := call(t, env, "grep", map[string]any{"pattern": "hit"})
	wantResult(t, res, false, fmt.Sprintf("big.txt:%d:hit %d\n", grepMaxMatches, grepMaxMatches-1), "[stopped after 500 matches")
	if n := strings.Count(res.Content, "big.txt:"); n != grepMaxMatches {
		t.Errorf("%d matches shown, want %d", n, grepMaxMatches)
	}
}

func TestGrepSkipsLinksOut(t *testing.T) {
	env := newEnv(t, ReadOnly)
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.txt": "needle outside\n"})
	writeFiles(t, env.Workspace, map[string]string{"in.txt": "needle inside\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(env.Workspace, "link.txt")); err != nil {
		t.Fatal(err)
	}
	res := call(t, env, "grep", map[string]any{"pattern": "needle"})
	if res.IsError || res.Content != "in.txt:1:needle inside\n" {
		t.Errorf("read-only grep = %+v", res)
	}
	env.Permission = FullAccess
	res = call(t, env, "grep", map[string]any{"pattern": "needle"})
	wantResult(t, res, false, "link.txt:1:needle outside")
}

func TestGlob(t *testing.T) {
	env := newEnv(t, ReadOnly)
	writeFiles(t, env.Workspace, searchTree)
	// One modification time for all, so the order is by path.
	sameTimes(t, env.Workspace, time.Unix(1_700_000_000, 0))
	tests := []struct {
		name    string
		args    any
		isError bool
		want    string
	}{
		{name: "top level", args: map[string]any{"pattern": "*.go"}, want: "main.go\n"},
		{name: "recursive", args: map[string]any{"pattern": "**/*.go"},
			want: "internal/a/a.go\ninternal/a/a_test.go\ninternal/a/deep/x/y.go\nmain.go\n"},
		{name: "under a dir", args: map[string]any{"pattern": "internal/**"},
			want: "internal/a/a.go\ninternal/a/a_test.go\ninternal/a/deep/notes.md\ninternal/a/deep/x/y.go\ninternal/b/b.txt\n"},
		{name: "with path", args: map[string]any{"pattern": "**/*.md", "path": "internal"},
			want: "internal/a/deep/notes.md\n"},
		{name: "braces", args: map[string]any{"pattern": "web/*.{ts,tsx}"}, want: "web/app.ts\nweb/view.tsx\n"},
		{name: "named skipped dir", args: map[string]any{"pattern": "node_modules/**"}, want: "node_modules/m/index.go\n"},
		{name: "absolute inside", args: map[string]any{"pattern": filepath.ToSlash(env.Workspace) + "/web/*.ts"}, want: "web/app.ts\n"},
		{name: "no match", args: map[string]any{"pattern": "**/*.rs"}, want: "no files match **/*.rs"},
		{name: "missing base", args: map[string]any{"pattern": "nope/*.go"}, want: "no files match nope/*.go"},
		{name: "bad pattern", args: map[string]any{"pattern": "[*.go"}, isError: true, want: `bad pattern "[*.go": malformed glob pattern`},
		{name: "escape", args: map[string]any{"pattern": "../*"}, isError: true, want: `path ".." is outside the workspace`},
		{name: "absolute outside", args: map[string]any{"pattern": "/etc/*"}, isError: true, want: `path "/etc" is outside the workspace`},
		{name: "missing pattern", args: json.RawMessage(`{}`), isError: true, want: `missing required parameter "pattern"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, env, "glob", tt.args)
			if res.IsError != tt.isError || res.Content != tt.want {
				t.Errorf("glob = {IsError:%v}\n%s\nwant {IsError:%v}\n%s", res.IsError, res.Content, tt.isError, tt.want)
			}
		})
	}
}

// sameTimes gives every file under dir the modification time tm.
func sameTimes(t *testing.T, dir string, tm time.Time) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, tm, tm)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGlobNewestFirst: glob lists the most recently changed files first,
// then equal times by path.
func TestGlobNewestFirst(t *testing.T) {
	env := newEnv(t, ReadOnly)
	writeFiles(t, env.Workspace, map[string]string{"a.go": "", "b.go": "", "c/d.go": "", "e.go": ""})
	base := time.Unix(1_700_000_000, 0)
	for name, age := range map[string]int{"a.go": 3, "b.go": 1, "c/d.go": 2, "e.go": 1} {
		tm := base.Add(-time.Duration(age) * time.Hour)
		if err := os.Chtimes(filepath.Join(env.Workspace, name), tm, tm); err != nil {
			t.Fatal(err)
		}
	}
	wantResult(t, call(t, env, "glob", map[string]any{"pattern": "**/*.go"}), false)
	if got := call(t, env, "glob", map[string]any{"pattern": "**/*.go"}).Content; got != "b.go\ne.go\nc/d.go\na.go\n" {
		t.Errorf("glob order:\n%s", got)
	}
}

// TestGlobQuickFormAgrees: the allocation-free test of "**/SEG" patterns
// gives the general matcher's answer on every name.
func TestGlobQuickFormAgrees(t *testing.T) {
	pats := []string{"**/*.go", "**/*", "**/x*.go", "**/?.go", "**/[ab].txt", "**/go.mod", "**/*.{go,md}", "**/.env", "**/*."}
	names := []string{"a.go", "b/a.go", "b/c/a.go", "a.go/x", "x.go", "dir/xa.go", "a.txt", "z/b.txt", "go.mod", "m/go.mod",
		".env", "a/.env", "a.md", "x/y/z.md", "a.", "b/c.", "a.gox", ".go", "q/.go", "a/b/c/d/e/f/g.go"}
	for _, p := range pats {
		m, err := compileGlob(p)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", p, err)
		}
		for i, segs := range m.alts {
			if !m.quick[i].ok {
				t.Errorf("%q: alternative %q has no quick form", p, segs)
			}
		}
		for _, n := range names {
			want := false
			for _, segs := range m.alts {
				want = want || matchSegments(segs, strings.Split(n, "/"))
			}
			if got := m.Match(n); got != want {
				t.Errorf("%q.Match(%q) = %v, the general matcher says %v", p, n, got, want)
			}
		}
	}
}
