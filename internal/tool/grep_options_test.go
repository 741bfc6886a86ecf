package tool

import (
	"os/exec"
	"strings"
	"testing"
)

var grepOptTree = map[string]string{
	".git/HEAD":   "x\n",
	"a.go":        "package a\n\nfunc One() {\n\treturn\n}\n\nfunc Two() {}\n// TODO later\n",
	"b.txt":       "alpha\nBeta\ngamma\nALPHA beta\ndelta\nepsilon\nzeta\nalpha\n",
	"c/d.go":      "package d\nfunc Three() {\n}\n",
	"c/e.md":      "# todo\nnothing here\n",
	"crlf.txt":    "one\r\ntwo alpha\r\nthree\r\n",
	"ignored.log": "alpha\n",
	".gitignore":  "*.log\n",
}

// TestGrepOptionsMatchRipgrep: each grep option gives ripgrep's output
// (--no-heading, sorted by path) for the same search.
func TestGrepOptionsMatchRipgrep(t *testing.T) {
	needRG(t)
	env := newEnv(t, ReadOnly)
	writeFiles(t, env.Workspace, grepOptTree)
	tests := []struct {
		name string
		args map[string]any
		rg   []string
	}{
		{"plain", map[string]any{"pattern": "alpha"}, []string{"alpha"}},
		{"-i", map[string]any{"pattern": "alpha", "-i": true}, []string{"-i", "alpha"}},
		{"regexp", map[string]any{"pattern": `^func \w+`}, []string{`^func \w+`}},
		{"-A", map[string]any{"pattern": "func", "-A": 1}, []string{"-A", "1", "func"}},
		{"-B", map[string]any{"pattern": "gamma|zeta", "-B": 1}, []string{"-B", "1", "gamma|zeta"}},
		{"-C", map[string]any{"pattern": "delta", "-C": 2}, []string{"-C", "2", "delta"}},
		{"-C overlapping", map[string]any{"pattern": "alpha|gamma", "-C": 1, "path": "b.txt"}, []string{"-C", "1", "alpha|gamma", "b.txt"}},
		{"-n false", map[string]any{"pattern": "Beta", "-n": false}, []string{"-N", "Beta"}},
		{"type", map[string]any{"pattern": "func", "type": "go"}, []string{"-t", "go", "func"}},
		{"glob", map[string]any{"pattern": "o", "glob": "*.md"}, []string{"-g", "*.md", "o"}},
		{"files_with_matches", map[string]any{"pattern": "(?i)todo", "output_mode": "files_with_matches"}, []string{"-l", "(?i)todo"}},
		{"count", map[string]any{"pattern": "a", "output_mode": "count"}, []string{"-c", "a"}},
		{"multiline", map[string]any{"pattern": `One\(\) \{\n.return`, "multiline": true}, []string{"-U", "--multiline-dotall", `One\(\) \{\n.return`}},
		{"literal", map[string]any{"pattern": "two alpha"}, []string{"two alpha"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"-H", "--no-heading", "--sort", "path", "--color", "never"}, tt.rg...)
			if !contains(tt.rg, "-N") && !contains(tt.rg, "-l") && !contains(tt.rg, "-c") {
				args = append([]string{"-n"}, args...)
			}
			cmd := exec.Command("rg", args...)
			cmd.Dir = env.Workspace
			out, _ := cmd.Output()
			want := strings.ReplaceAll(string(out), "\r", "")
			res := call(t, env, "grep", tt.args)
			if res.IsError || res.Content != want {
				t.Errorf("grep %v =\n%s\nrg %v =\n%s", tt.args, res.Content, tt.rg, want)
			}
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestGrepPaging: head_limit and offset page through the output entries,
// and say where to continue.
func TestGrepPaging(t *testing.T) {
	env := newEnv(t, ReadOnly)
	writeFiles(t, env.Workspace, map[string]string{"a.txt": "x1\nx2\nx3\n", "b.txt": "x4\nx5\n"})
	wantResult(t, call(t, env, "grep", map[string]any{"pattern": "x", "head_limit": 2}), false)
	if got := call(t, env, "grep", map[string]any{"pattern": "x", "head_limit": 2}).Content; got != "a.txt:1:x1\na.txt:2:x2\n[more entries follow; use offset=2 to continue]\n" {
		t.Errorf("head_limit 2:\n%s", got)
	}
	if got := call(t, env, "grep", map[string]any{"pattern": "x", "head_limit": 2, "offset": 2}).Content; got != "a.txt:3:x3\nb.txt:1:x4\n[more entries follow; use offset=4 to continue]\n" {
		t.Errorf("offset 2:\n%s", got)
	}
	if got := call(t, env, "grep", map[string]any{"pattern": "x", "offset": 4}).Content; got != "b.txt:2:x5\n" {
		t.Errorf("offset 4:\n%s", got)
	}
	if got := call(t, env, "grep", map[string]any{"pattern": "x", "output_mode": "files_with_matches", "offset": 1}).Content; got != "b.txt\n" {
		t.Errorf("files offset 1:\n%s", got)
	}
	wantResult(t, call(t, env, "grep", map[string]any{"pattern": "x", "offset": 9}), false, "past the end")
	wantResult(t, call(t, env, "grep", map[string]any{"pattern": "x", "output_mode": "lines"}), true, "output_mode must be")
	wantResult(t, call(t, env, "grep", map[string]any{"pattern": "x", "type": "nosuch"}), true, `unknown type "nosuch"`)
	wantResult(t, call(t, env, "grep", map[string]any{"pattern": "x", "-C": 1000}), true, "-C must be between 0 and 50")
}
