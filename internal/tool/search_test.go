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
