//go:build linux

package sandbox

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/gitsafe"
	"golang.org/x/sys/unix"
)

// TestNestedRepositoryBetweenCommands (issue 47): the workspace's walk for
// repositories runs in the supervisor now (walkAhead), beside the stage's
// start; a repository that one confined command creates below the root is
// still found by the next, whose walk runs after the first ended: the next
// command can neither plant its config or hooks nor move it away. Depths 1
// and 3 (the walk's deepest).
func TestNestedRepositoryBetweenCommands(t *testing.T) {
	requireLandlock(t)
	for _, rel := range []string{"made", filepath.Join("a", "b", "made")} {
		t.Run(strings.ReplaceAll(rel, "/", "-"), func(t *testing.T) {
			ws := gitWorkspace(t)
			p := Policy{Mode: WorkspaceWrite, Workspace: ws}
			out, code := runEnv(t, p, ws, nil, `mkdir -p `+rel+` && git -C `+rel+` init -q && echo created`)
			if code != 0 || !strings.Contains(out, "created") {
				t.Fatalf("the first command could not create the repository (exit %d):\n%s", code, out)
			}
			cfg := filepath.Join(ws, rel, ".git", "config")
			before, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			out, _ = runEnv(t, p, ws, nil, `
git -C `+rel+` config core.fsmonitor "touch $PWD/PWNED; false"
echo x > `+rel+`/.git/hooks/pre-commit
mv `+rel+` `+rel+`-away && mkdir `+rel+` && echo replaced
true`)
			if after, _ := os.ReadFile(cfg); !bytes.Equal(before, after) {
				t.Errorf("the second command changed the repository's config:\n%s\n%s", after, out)
			}
			if _, err := os.Lstat(filepath.Join(ws, rel, ".git", "hooks", "pre-commit")); err == nil {
				t.Errorf("the second command planted a hook:\n%s", out)
			}
			if strings.Contains(out, "replaced") {
				t.Errorf("the second command moved the repository away:\n%s", out)
			}
			os.Remove(filepath.Join(ws, "PWNED"))
			hostGit(t, filepath.Join(ws, rel), "status")
			if pwned(ws) {
				t.Errorf("git status ran a planted command:\n%s", out)
			}
		})
	}
}

// pipeWith is the read end of a pipe holding b (its writer closed), as a
// bare descriptor for walkedRepos.
func pipeWith(t *testing.T, b []byte) uintptr {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.Write(b)
		w.Close()
	}()
	fd, err := unix.Dup(int(r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	return uintptr(fd)
}

// TestWalkedRepos: the stage takes the supervisor's list only when it is
// whole and for the folder the stage protects; anything else makes the
// stage walk itself (ok false), never bind less.
func TestWalkedRepos(t *testing.T) {
	list := func(ws string) []byte {
		b, _ := json.Marshal(repoList{Workspace: ws, Repos: []gitsafe.Repo{{Entry: ".git", Dir: ws + "/.git"}}})
		return b
	}
	for _, tc := range []struct {
		name string
		in   []byte
		ws   string
		ok   bool
	}{
		{"its workspace", list("/w"), "/w", true},
		{"another workspace", list("/other"), "/w", false},
		{"no workspace", list(""), "", false},
		{"nothing: the supervisor died", nil, "/w", false},
		{"cut short", list("/w")[:20], "/w", false},
		{"not JSON", []byte("\x1b[2J.git\n"), "/w", false},
		{"too long", append(list("/w"), bytes.Repeat([]byte(" "), maxRepoList)...), "/w", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repos, ok := walkedRepos(pipeWith(t, tc.in), tc.ws)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v (repos %v)", ok, tc.ok, repos)
			}
			if ok && (len(repos) != 1 || repos[0].Entry != ".git") {
				t.Errorf("repos = %v", repos)
			}
		})
	}
}

// TestWalkAheadIsFind: the supervisor's walk finds what the stage's own
// walk found (gitsafe.Find with the same limits): the workspace's
// repository, nested ones and a submodule's gitdir file.
func TestWalkAheadIsFind(t *testing.T) {
	ws := gitWorkspace(t)
	for _, d := range []string{"x", filepath.Join("a", "b", "c")} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
		mustGit(t, filepath.Join(ws, d), "init", "-q")
	}
	os.MkdirAll(filepath.Join(ws, "sub"), 0o755)
	os.WriteFile(filepath.Join(ws, "sub", ".git"), []byte("gitdir: ../.git\n"), 0o644)
	r, err := walkAhead(ws)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Dup(int(r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	got, ok := walkedRepos(uintptr(fd), ws)
	if !ok {
		t.Fatal("the supervisor's list was refused")
	}
	want, _ := gitsafe.Find(ws, gitsafe.DefaultLimits)
	entries := func(rs []gitsafe.Repo) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Entry+" "+r.Dir+" "+r.Common)
		}
		slices.Sort(out)
		return out
	}
	if g, w := entries(got), entries(want); !slices.Equal(g, w) || len(g) != 4 {
		t.Errorf("walkAhead found\n%q\ngitsafe.Find\n%q", g, w)
	}
}

// TestWorkspaceThroughPrivateLink: a workspace named through a symbolic
// link in a folder the container makes private (/tmp/link -> the
// checkout, as `cd /tmp/link && reins` gives reins's working directory)
// keeps its walls: the stage resolves it before /tmp is its own, so .git
// stays read-only. Before, the link no longer resolved in the container
// and no .git or protected path was bound.
func TestWorkspaceThroughPrivateLink(t *testing.T) {
	requireLandlock(t)
	ws := gitWorkspace(t)
	dir, err := os.MkdirTemp("/tmp", "reins-link-test-") // /tmp itself, whatever TMPDIR says
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	link := filepath.Join(dir, "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(ws, ".git", "config")
	before, _ := os.ReadFile(cfg)
	out, _ := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: link}, ws, nil, `
echo "[core]" >> .git/config && echo 'fsmonitor = touch PWNED' >> .git/config && echo wrote
mkdir -p .git/hooks && echo x > .git/hooks/pre-commit
true`)
	if after, _ := os.ReadFile(cfg); !bytes.Equal(before, after) {
		t.Errorf(".git/config was written through the linked workspace:\n%s", out)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Errorf("a hook was planted through the linked workspace:\n%s", out)
	}
}

// TestWritableThroughPrivateLink: the same for a `writable` path named
// through a link in /tmp: the repository it holds stays read-only while
// its files are writable.
func TestWritableThroughPrivateLink(t *testing.T) {
	requireLandlock(t)
	ws := t.TempDir()
	lib := gitWorkspace(t)
	dir, err := os.MkdirTemp("/tmp", "reins-link-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	link := filepath.Join(dir, "lib")
	if err := os.Symlink(lib, link); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(lib, ".git", "config")
	before, _ := os.ReadFile(cfg)
	out, _ := runEnv(t, Policy{Mode: WorkspaceWrite, Workspace: ws, Writable: []string{link}}, ws, nil, `
git -C "`+lib+`" config core.fsmonitor "touch PWNED; false"
echo ok > "`+lib+`/file.txt" && echo wrote`)
	if after, _ := os.ReadFile(cfg); !bytes.Equal(before, after) {
		t.Errorf("the linked writable repository's config changed:\n%s\n%s", after, out)
	}
	if !strings.Contains(out, "wrote") {
		t.Errorf("the linked writable repository's files were not writable:\n%s", out)
	}
}
