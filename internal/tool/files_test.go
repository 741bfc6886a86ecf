package tool

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	env := newEnv(t, ReadOnly)
	var many strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&many, "l%d\n", i)
	}
	writeFiles(t, env.Workspace, map[string]string{
		"a.txt":     "alpha\nbeta\ngamma\ndelta\n",
		"nonl.txt":  "one\ntwo",
		"empty.txt": "",
		"bin.dat":   "ELF\x00\x01\x02text",
		"many.txt":  many.String(),
		"long.txt":  strings.Repeat("x", 5000) + "\nshort\n",
		"d/x.txt":   "x",
	})
	tests := []struct {
		name    string
		args    any
		isError bool
		want    []string
		notWant []string
	}{
		{name: "whole file", args: map[string]any{"path": "a.txt"},
			want: []string{"     1\talpha\n     2\tbeta\n     3\tgamma\n     4\tdelta\n"}},
		{name: "offset and limit", args: map[string]any{"path": "a.txt", "offset": 2, "limit": 2},
			want: []string{"     2\tbeta\n     3\tgamma\n", "use offset=4"}, notWant: []string{"alpha", "delta"}},
		{name: "no final newline", args: map[string]any{"path": "nonl.txt"},
			want: []string{"     1\tone\n     2\ttwo\n"}},
		{name: "absolute inside", args: map[string]any{"path": filepath.Join(env.Workspace, "a.txt")},
			want: []string{"alpha"}},
		{name: "default limit", args: map[string]any{"path": "many.txt"},
			want: []string{"  2000\tl2000\n", "use offset=2001"}, notWant: []string{"l2001\n"}},
		{name: "long line cut", args: map[string]any{"path": "long.txt"},
			want: []string{"[line truncated]", "     2\tshort"}, notWant: []string{strings.Repeat("x", 2001)}},
		{name: "empty file", args: map[string]any{"path": "empty.txt"}, want: []string{"empty"}},
		{name: "binary", args: map[string]any{"path": "bin.dat"}, isError: true,
			want: []string{"bin.dat is a binary file"}, notWant: []string{"ELF"}},
		{name: "directory", args: map[string]any{"path": "d"}, isError: true, want: []string{"is a directory"}},
		{name: "missing", args: map[string]any{"path": "nope.txt"}, isError: true, want: []string{"no such file"}},
		{name: "offset past end", args: map[string]any{"path": "a.txt", "offset": 10}, isError: true,
			want: []string{"past the end", "4 lines"}},
		{name: "bad offset", args: map[string]any{"path": "a.txt", "offset": 0}, isError: true, want: []string{"offset"}},
		{name: "bad limit", args: map[string]any{"path": "a.txt", "limit": -1}, isError: true, want: []string{"limit"}},
		{name: "outside", args: map[string]any{"path": "../x"}, isError: true, want: []string{"outside the workspace"}},
		{name: "missing path", args: map[string]any{}, isError: true, want: []string{`missing required parameter "path"`}},
		{name: "wrong type", args: map[string]any{"path": 3}, isError: true, want: []string{"invalid arguments"}},
		{name: "invalid JSON", args: json.RawMessage(`{"path":`), isError: true, want: []string{"invalid arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, env, "read", tt.args)
			wantResult(t, res, tt.isError, tt.want...)
			for _, s := range tt.notWant {
				if strings.Contains(res.Content, s) {
					t.Errorf("content holds %q:\n%s", s, res.Content)
				}
			}
		})
	}
}

func TestWrite(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	writeFiles(t, env.Workspace, map[string]string{"old.txt": "old content", "dir/keep": ""})
	tests := []struct {
		name    string
		args    any
		isError bool
		want    []string
		file    string // checked when not an error
		content string
	}{
		{name: "new file with parents", args: map[string]any{"path": "a/b/c.txt", "content": "hello\n"},
			want: []string{"wrote 6 bytes to a/b/c.txt"}, file: "a/b/c.txt", content: "hello\n"},
		{name: "overwrite", args: map[string]any{"path": "old.txt", "content": "new"},
			want: []string{"wrote 3 bytes"}, file: "old.txt", content: "new"},
		{name: "empty content", args: map[string]any{"path": "e.txt", "content": ""},
			want: []string{"wrote 0 bytes"}, file: "e.txt", content: ""},
		{name: "one byte", args: map[string]any{"path": "one.txt", "content": "x"},
			want: []string{"wrote 1 byte to"}, file: "one.txt", content: "x"},
		{name: "directory", args: map[string]any{"path": "dir", "content": "x"}, isError: true, want: []string{"is a directory"}},
		{name: "missing content", args: map[string]any{"path": "x.txt"}, isError: true, want: []string{`"content"`}},
		{name: "missing path", args: map[string]any{"content": "x"}, isError: true, want: []string{`"path"`}},
		{name: "outside", args: map[string]any{"path": "../escape.txt", "content": "x"}, isError: true, want: []string{"outside the workspace"}},
		{name: "invalid JSON", args: json.RawMessage(`not json`), isError: true, want: []string{"invalid arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, env, "write", tt.args)
			wantResult(t, res, tt.isError, tt.want...)
			if tt.file != "" {
				if got := readFile(t, filepath.Join(env.Workspace, tt.file)); got != tt.content {
					t.Errorf("file holds %q, want %q", got, tt.content)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(env.Workspace), "escape.txt")); err == nil {
		t.Error("refused write created the file anyway")
	}
}

func TestEdit(t *testing.T) {
	const orig = "foo bar\nfoo baz\nqux\n"
	tests := []struct {
		name    string
		args    map[string]any
		isError bool
		want    []string
		after   string // file content afterwards
	}{
		{name: "unique", args: map[string]any{"old_string": "qux", "new_string": "QUX"},
			want: []string{"replaced 1 occurrence in f.txt"}, after: "foo bar\nfoo baz\nQUX\n"},
		{name: "unique with context", args: map[string]any{"old_string": "foo baz", "new_string": "zap"},
			after: "foo bar\nzap\nqux\n"},
		{name: "replace all", args: map[string]any{"old_string": "foo", "new_string": "F", "replace_all": true},
			want: []string{"replaced 2 occurrences"}, after: "F bar\nF baz\nqux\n"},
		{name: "delete", args: map[string]any{"old_string": "qux\n", "new_string": ""},
			after: "foo bar\nfoo baz\n"},
		{name: "ambiguous", args: map[string]any{"old_string": "foo", "new_string": "F"}, isError: true,
			want: []string{"occurs 2 times"}, after: orig},
		{name: "not found", args: map[string]any{"old_string": "nope", "new_string": "x"}, isError: true,
			want: []string{"not found"}, after: orig},
		{name: "identical", args: map[string]any{"old_string": "qux", "new_string": "qux"}, isError: true,
			want: []string{"identical"}, after: orig},
		{name: "empty old", args: map[string]any{"old_string": "", "new_string": "x"}, isError: true,
			want: []string{"old_string is empty"}, after: orig},
		{name: "missing new", args: map[string]any{"old_string": "qux"}, isError: true,
			want: []string{`"new_string"`}, after: orig},
		{name: "missing file", args: map[string]any{"path": "nope.txt", "old_string": "a", "new_string": "b"}, isError: true,
			want: []string{"no such file"}, after: orig},
		{name: "outside", args: map[string]any{"path": "/etc/hostname", "old_string": "a", "new_string": "b"}, isError: true,
			want: []string{"outside the workspace"}, after: orig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t, WorkspaceWrite)
			writeFiles(t, env.Workspace, map[string]string{"f.txt": orig})
			if _, ok := tt.args["path"]; !ok {
				tt.args["path"] = "f.txt"
			}
			res := call(t, env, "edit", tt.args)
			wantResult(t, res, tt.isError, tt.want...)
			if got := readFile(t, filepath.Join(env.Workspace, "f.txt")); got != tt.after {
				t.Errorf("file = %q, want %q", got, tt.after)
			}
		})
	}
}

func TestEditKeepsMode(t *testing.T) {
	env := newEnv(t, WorkspaceWrite)
	p := filepath.Join(env.Workspace, "run.sh")
	if err := os.WriteFile(p, []byte("echo a\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantResult(t, call(t, env, "edit", map[string]any{"path": "run.sh", "old_string": "a", "new_string": "b"}), false)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode = %v, want 0755", fi.Mode().Perm())
	}
}

func TestLs(t *testing.T) {
	env := newEnv(t, ReadOnly)
	writeFiles(t, env.Workspace, map[string]string{"b.txt": "", "a/x": "", ".hidden": "", "emptydir/.keep": ""})
	if err := os.Remove(filepath.Join(env.Workspace, "emptydir/.keep")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a", filepath.Join(env.Workspace, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    any
		isError bool
		want    string
	}{
		{name: "workspace", args: map[string]any{}, want: ".hidden\na/\nb.txt\nemptydir/\nlink/\n"},
		{name: "no arguments at all", args: json.RawMessage(``), want: ".hidden\na/\nb.txt\nemptydir/\nlink/\n"},
		{name: "subdir", args: map[string]any{"path": "a"}, want: "x\n"},
		{name: "empty dir", args: map[string]any{"path": "emptydir"}, want: "emptydir is empty"},
		{name: "file", args: map[string]any{"path": "b.txt"}, isError: true, want: "b.txt is not a directory"},
		{name: "missing", args: map[string]any{"path": "nope"}, isError: true, want: "ls nope: no such file or directory"},
		{name: "outside", args: map[string]any{"path": ".."}, isError: true, want: `path ".." is outside the workspace`},
		{name: "invalid JSON", args: json.RawMessage(`[`), isError: true, want: "invalid arguments: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, env, "ls", tt.args)
			if res.IsError != tt.isError || res.Content != tt.want {
				t.Errorf("ls = %+v, want {%q %v}", res, tt.want, tt.isError)
			}
		})
	}
}
