package tool

import (
	"fmt"
	"github.com/reinsdev/reins/internal/testutil"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// ignoreTree is a repository with the rule files ripgrep honours: nested
// .gitignore files with negations, .ignore files (which beat .gitignore),
// .git/info/exclude, anchored and unanchored patterns, ** and classes.
var ignoreTree = map[string]string{
	".git/HEAD":         "ref: refs/heads/main\n",
	".git/info/exclude": "excluded_dir/\n*.tmp\n",
	".gitignore":        "*.log\n/build/\ntmp*\n!tmp_keep.txt\nsub/**/gen/\n**/deep/*.txt\ndocs/*.go\n[ab]x.txt\n\\#hash.txt\ntrailing.txt   \n# a comment\n\n",
	".ignore":           "secret/\n*.bak\n",
	"a/.gitignore":      "*.md\n!README.md\n/only_here.txt\n",
	"a/.ignore":         "!keep.bak\n",
	"a/b/.gitignore":    "!important.log\n",
	"c/.gitignore":      "*\n!*.go\n!*/\n",
}

var ignoreNames = []string{
	"main.go", "x.log", "important.log", "tmp1.txt", "tmp_keep.txt", "notes.md", "README.md",
	"only_here.txt", "a.bak", "keep.bak", "ax.txt", "bx.txt", "cx.txt", "#hash.txt", "trailing.txt",
	"y.tmp", "z.txt", ".hidden.txt",
}

var ignoreDirs = []string{
	"", "a", "a/b", "a/b/deep", "deep", "build", "x/build", "sub/p/gen", "sub/gen", "gen",
	"docs", "docs/inner", "secret", "a/secret", "excluded_dir", "c", "c/d", ".hid", "tmpdir",
}

// writeIgnoreTree builds the generated tree: every name in every directory,
// plus a few random extra files.
func writeIgnoreTree(t *testing.T, ws string) {
	t.Helper()
	files := map[string]string{}
	for k, v := range ignoreTree {
		files[k] = v
	}
	r := rand.New(rand.NewPCG(35, 26))
	for _, d := range ignoreDirs {
		for _, n := range ignoreNames {
			files[filepath.ToSlash(filepath.Join(d, n))] = fmt.Sprintf("needle in %s/%s\nline two\n", d, n)
		}
		for i := range 3 {
			files[filepath.ToSlash(filepath.Join(d, fmt.Sprintf("r%d_%d.go", i, r.IntN(1000))))] = "package r\n"
		}
	}
	writeFiles(t, ws, files)
}

// rgLines runs ripgrep in dir and returns its output lines, sorted.
func rgLines(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("rg", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("rg %v: %v", args, err)
		}
	}
	return sortedLines(string(out))
}

func sortedLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" && !strings.HasPrefix(l, "[") {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

func needRG(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		testutil.MissingPeer(t, "ripgrep (rg) is not on PATH (scripts/test installs Debian's ripgrep)")
	}
}

// TestIgnoreRulesMatchRipgrep: the files glob and grep see on a generated
// repository (nested .gitignore with negation, .ignore, info/exclude,
// hidden files) are exactly the files `rg --files` lists, from the root and
// from a subdirectory.
func TestIgnoreRulesMatchRipgrep(t *testing.T) {
	needRG(t)
	env := newEnv(t, ReadOnly)
	writeIgnoreTree(t, env.Workspace)

	want := rgLines(t, env.Workspace, "--files")
	if len(want) < 50 {
		t.Fatalf("rg lists only %d files; the tree is not what the test thinks", len(want))
	}
	got := sortedLines(call(t, env, "glob", map[string]any{"pattern": "**"}).Content)
	diffLists(t, "glob **", got, want)

	gotGrep := sortedLines(call(t, env, "grep", map[string]any{"pattern": "needle", "output_mode": "files_with_matches"}).Content)
	wantGrep := rgLines(t, env.Workspace, "-l", "needle")
	diffLists(t, "grep -l", gotGrep, wantGrep)

	// From a subdirectory: the rules of the directories above still apply.
	wantSub := rgLines(t, env.Workspace, "--files", "a")
	gotSub := sortedLines(call(t, env, "glob", map[string]any{"pattern": "a/**"}).Content)
	diffLists(t, "glob a/**", gotSub, wantSub)
	gotSubGrep := sortedLines(call(t, env, "grep", map[string]any{"pattern": "needle", "path": "a", "output_mode": "files_with_matches"}).Content)
	diffLists(t, "grep -l a", gotSubGrep, rgLines(t, env.Workspace, "-l", "needle", "a"))
}

// TestIgnoreNeedsGit: like ripgrep, .gitignore counts only inside a git
// repository, while .ignore counts everywhere.
func TestIgnoreNeedsGit(t *testing.T) {
	needRG(t)
	env := newEnv(t, ReadOnly)
	writeFiles(t, env.Workspace, map[string]string{".gitignore": "*.log\n", ".ignore": "*.bak\n", "a.log": "", "a.bak": "", "a.go": ""})
	got := sortedLines(call(t, env, "glob", map[string]any{"pattern": "**"}).Content)
	diffLists(t, "no .git", got, rgLines(t, env.Workspace, "--files"))
	if strings.Join(got, ",") != "a.go,a.log" {
		t.Errorf("outside a repository: %v, want [a.go a.log]", got)
	}
}

func diffLists(t *testing.T, what string, got, want []string) {
	t.Helper()
	g := map[string]bool{}
	for _, x := range got {
		g[x] = true
	}
	w := map[string]bool{}
	for _, x := range want {
		w[x] = true
	}
	var extra, missing []string
	for x := range g {
		if !w[x] {
			extra = append(extra, x)
		}
	}
	for x := range w {
		if !g[x] {
			missing = append(missing, x)
		}
	}
	sort.Strings(extra)
	sort.Strings(missing)
	if len(extra)+len(missing) > 0 {
		t.Errorf("%s: %d files, ripgrep %d; not in ripgrep's list: %v; missing: %v", what, len(got), len(want), extra, missing)
	}
}
