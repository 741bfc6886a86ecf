package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/sandbox"
)

// gitT runs git in dir for a test and returns its output.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const tenLines = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"

// newRepo is a repository with one commit of f.txt (ten lines) and a
// .gitignore that ignores *.log.
func newRepo(t *testing.T) (string, *Repo) {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q")
	write(t, dir, "f.txt", tenLines)
	write(t, dir, ".gitignore", "*.log\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "init")
	r, err := Open(context.Background(), dir, sandbox.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, r
}

func replaceLine(s string, n int, with string) string {
	lines := strings.Split(s, "\n")
	lines[n-1] = with
	return strings.Join(lines, "\n")
}

func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, t.TempDir(), sandbox.Policy{}); !errors.Is(err, ErrNotRepo) {
		t.Errorf("outside a repository: %v, want ErrNotRepo", err)
	}
	dir, _ := newRepo(t)
	t.Setenv("PATH", t.TempDir()) // no git on it
	if _, err := Open(ctx, dir, sandbox.Policy{}); !errors.Is(err, ErrNoGit) {
		t.Errorf("without git: %v, want ErrNoGit", err)
	}
}

// The child starts from the parent's working tree as it is: uncommitted
// and untracked changes included, ignored files left out; the parent's
// status is untouched.
func TestCreateFromWorkingTree(t *testing.T) {
	ctx := context.Background()
	dir, r := newRepo(t)
	write(t, dir, "f.txt", replaceLine(tenLines, 2, "two (uncommitted)"))
	write(t, dir, "new/untracked.txt", "u\n")
	write(t, dir, "debug.log", "ignored\n")
	gitT(t, dir, "add", "f.txt") // a staged change too
	before := gitT(t, dir, "status", "--porcelain")
	tree, err := r.Create(ctx, "child-0001", "fix the thing")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, tree.Dir, "f.txt"); got != replaceLine(tenLines, 2, "two (uncommitted)") {
		t.Errorf("child's f.txt %q", got)
	}
	if got := read(t, tree.Dir, "new/untracked.txt"); got != "u\n" {
		t.Errorf("untracked file %q", got)
	}
	if _, err := os.Stat(filepath.Join(tree.Dir, "debug.log")); !os.IsNotExist(err) {
		t.Errorf("an ignored file was copied: %v", err)
	}
	if after := gitT(t, dir, "status", "--porcelain"); after != before {
		t.Errorf("parent status changed:\n%s\nwant\n%s", after, before)
	}
	if !strings.Contains(gitT(t, dir, "worktree", "list"), tree.Dir) {
		t.Errorf("git worktree list does not show %s", tree.Dir)
	}
	if tree.Branch != "reins/child-0001" {
		t.Errorf("branch %s", tree.Branch)
	}
	if _, err := r.Create(ctx, "child-0001", "again"); err == nil {
		t.Error("a second Create of one id succeeded")
	}
	if _, err := r.Create(ctx, "../x", "bad"); !errors.Is(err, ErrBadID) {
		t.Errorf("bad id: %v", err)
	}
}

func TestCreateInRepoWithoutCommits(t *testing.T) {
	dir := t.TempDir()
	gitT(t, dir, "init", "-q")
	write(t, dir, "a.txt", "a\n")
	r, err := Open(context.Background(), dir, sandbox.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := r.Create(context.Background(), "c1", "d")
	if err != nil {
		t.Fatal(err)
	}
	if read(t, tree.Dir, "a.txt") != "a\n" {
		t.Error("file missing in the worktree")
	}
}

// Commit, Stat and Merge over the cases a parent meets.
func TestCommitStatMerge(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// child and parent change their trees after Create.
		child, parent   func(t *testing.T, dir string)
		files, add, del int
		conflict        bool
		want            map[string]string // the parent's files after the merge ("" : absent)
	}{
		{
			name:   "different places",
			child:  func(t *testing.T, d string) { write(t, d, "f.txt", replaceLine(tenLines, 2, "child")) },
			parent: func(t *testing.T, d string) { write(t, d, "f.txt", replaceLine(tenLines, 9, "parent")) },
			files:  1, add: 1, del: 1,
			want: map[string]string{"f.txt": replaceLine(replaceLine(tenLines, 2, "child"), 9, "parent")},
		},
		{
			name:   "same line",
			child:  func(t *testing.T, d string) { write(t, d, "f.txt", replaceLine(tenLines, 5, "child")) },
			parent: func(t *testing.T, d string) { write(t, d, "f.txt", replaceLine(tenLines, 5, "parent")) },
			files:  1, add: 1, del: 1, conflict: true,
			want: map[string]string{"f.txt": replaceLine(tenLines, 5, "parent")},
		},
		{
			name: "new and deleted files",
			child: func(t *testing.T, d string) {
				write(t, d, "sub/new.txt", "n1\nn2\n")
				os.Remove(filepath.Join(d, ".gitignore"))
			},
			parent: func(t *testing.T, d string) { write(t, d, "other.txt", "o\n") },
			files:  2, add: 2, del: 1,
			want: map[string]string{"sub/new.txt": "n1\nn2\n", ".gitignore": "", "other.txt": "o\n", "f.txt": tenLines},
		},
		{
			name:   "no change",
			child:  func(t *testing.T, d string) { write(t, d, "x.log", "ignored output\n") },
			parent: func(t *testing.T, d string) {},
			want:   map[string]string{"f.txt": tenLines, "x.log": ""},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, r := newRepo(t)
			tree, err := r.Create(ctx, "c1", "the task")
			if err != nil {
				t.Fatal(err)
			}
			tc.child(t, tree.Dir)
			tc.parent(t, dir)
			committed, err := r.Commit(ctx, "c1", "the task")
			if err != nil {
				t.Fatal(err)
			}
			if committed != (tc.files > 0) {
				t.Errorf("committed %v", committed)
			}
			if committed {
				log := gitT(t, dir, "log", "-1", "--format=%an|%s", Branch("c1"))
				if log != "reins child c1|the task\n" {
					t.Errorf("commit %q", log)
				}
				if st := gitT(t, tree.Dir, "status", "--porcelain"); st != "" {
					t.Errorf("worktree not clean after the commit:\n%s", st)
				}
			}
			s, err := r.Stat(ctx, "c1")
			if err != nil {
				t.Fatal(err)
			}
			if s.Files != tc.files || s.Added != tc.add || s.Deleted != tc.del {
				t.Errorf("stat %d files +%d -%d, want %d +%d -%d", s.Files, s.Added, s.Deleted, tc.files, tc.add, tc.del)
			}
			if s.Clean == tc.conflict || (s.Conflict != nil) != tc.conflict {
				t.Errorf("clean %v conflict %+v", s.Clean, s.Conflict)
			}
			before := gitT(t, dir, "status", "--porcelain")
			_, err = r.Merge(ctx, "c1")
			var ce *ConflictError
			if tc.conflict {
				if !errors.As(err, &ce) || len(ce.Files) != 1 || ce.Files[0] != "f.txt" || !strings.Contains(ce.Text, "CONFLICT") {
					t.Fatalf("merge: %v (%+v), want a conflict in f.txt", err, ce)
				}
				if after := gitT(t, dir, "status", "--porcelain"); after != before {
					t.Errorf("a conflicted merge changed the tree:\n%s", after)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			for name, want := range tc.want {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if want == "" {
					if err == nil {
						t.Errorf("%s exists after the merge", name)
					}
					continue
				}
				if string(b) != want {
					t.Errorf("%s = %q, want %q", name, b, want)
				}
			}
			if !tc.conflict {
				if wl := gitT(t, dir, "worktree", "list"); strings.Contains(wl, "worktrees/c1") || strings.Contains(wl, "reins/c1") {
					t.Errorf("a merged child's worktree is still listed:\n%s", wl)
				}
				if _, err := r.Merge(ctx, "c1"); err == nil {
					t.Error("a second merge succeeded")
				}
			}
		})
	}
}

// The scenario at the package level: four children edit one file,
// two of them the same line. Three merge; the fourth conflicts and the
// tree stays as the three left it; each child's commit is in the log.
func TestFourChildrenOneFile(t *testing.T) {
	ctx := context.Background()
	dir, r := newRepo(t)
	edits := map[string]int{"a": 1, "b": 4, "c": 8, "d": 1}
	for _, id := range []string{"a", "b", "c", "d"} {
		tree, err := r.Create(ctx, id, "edit "+id)
		if err != nil {
			t.Fatal(err)
		}
		write(t, tree.Dir, "f.txt", replaceLine(tenLines, edits[id], "by "+id))
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		if _, err := r.Commit(ctx, id, "edit "+id); err != nil {
			t.Fatal(err)
		}
	}
	if read(t, dir, "f.txt") != tenLines {
		t.Fatal("the parent's tree changed before any merge")
	}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := r.Merge(ctx, id); err != nil {
			t.Fatalf("merge %s: %v", id, err)
		}
	}
	want := replaceLine(replaceLine(replaceLine(tenLines, 1, "by a"), 4, "by b"), 8, "by c")
	if got := read(t, dir, "f.txt"); got != want {
		t.Fatalf("after three merges %q", got)
	}
	var ce *ConflictError
	if _, err := r.Merge(ctx, "d"); !errors.As(err, &ce) {
		t.Fatalf("merge d: %v, want a conflict", err)
	}
	if got := read(t, dir, "f.txt"); got != want {
		t.Errorf("the conflicted merge changed f.txt: %q", got)
	}
	log := gitT(t, dir, "log", "--all", "--format=%an %s")
	for _, id := range []string{"a", "b", "c", "d"} {
		if !strings.Contains(log, "reins child "+id+" edit "+id) {
			t.Errorf("git log has no commit of %s:\n%s", id, log)
		}
	}
	list, err := r.List(ctx)
	if err != nil || len(list) != 4 {
		t.Fatalf("list %+v %v", list, err)
	}
	if list[3].ID != "d" || list[3].Merged || list[3].Dir == "" || !list[0].Merged || list[0].Dir != "" {
		t.Errorf("list %+v", list)
	}
	if err := r.Drop(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if wl := gitT(t, dir, "worktree", "list", "--porcelain"); strings.Count(wl, "worktree ") != 1 {
		t.Errorf("worktrees left after merging or dropping all:\n%s", wl)
	}
	if strings.Contains(gitT(t, dir, "branch", "--list", "reins/*"), "reins/d") {
		t.Error("a dropped child's branch is still there")
	}
	if _, err := r.Stat(ctx, "d"); !errors.Is(err, ErrNoChild) {
		t.Errorf("stat of a dropped child: %v", err)
	}
	if !r.Dropped(ctx, "d") || r.Dropped(ctx, "a") {
		t.Error("Dropped does not tell the dropped child")
	}
}

// Remove keeps the branch; Ensure brings the worktree back at its tip (a
// continuation after the idle timeout).
func TestRemoveEnsure(t *testing.T) {
	ctx := context.Background()
	dir, r := newRepo(t)
	tree, err := r.Create(ctx, "c1", "d")
	if err != nil {
		t.Fatal(err)
	}
	write(t, tree.Dir, "f.txt", "changed\n")
	if _, err := r.Commit(ctx, "c1", "first run"); err != nil {
		t.Fatal(err)
	}
	if err := r.Remove(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tree.Dir); !os.IsNotExist(err) {
		t.Fatal("worktree folder still there")
	}
	if strings.Contains(gitT(t, dir, "worktree", "list"), "c1") {
		t.Fatal("removed worktree still listed")
	}
	again, err := r.Ensure(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if read(t, again.Dir, "f.txt") != "changed\n" {
		t.Error("the worktree came back without the child's work")
	}
	write(t, again.Dir, "g.txt", "second\n")
	if ok, err := r.Commit(ctx, "c1", "second run"); err != nil || !ok {
		t.Fatalf("commit %v %v", ok, err)
	}
	if n := strings.Count(gitT(t, dir, "log", "--format=%an", Branch("c1")), "reins child c1"); n != 2 {
		t.Errorf("%d child commits, want 2", n)
	}
	if _, err := r.Ensure(ctx, "nope"); !errors.Is(err, ErrNoChild) {
		t.Errorf("Ensure of an unknown child: %v", err)
	}
}

// A child that rewrites its worktree's .git file cannot point reins at
// another repository: Commit restores it and commits where it should.
func TestCommitIgnoresRewrittenGitFile(t *testing.T) {
	ctx := context.Background()
	dir, r := newRepo(t)
	evil := t.TempDir()
	gitT(t, evil, "init", "-q")
	tree, err := r.Create(ctx, "c1", "d")
	if err != nil {
		t.Fatal(err)
	}
	write(t, tree.Dir, ".git", "gitdir: "+filepath.Join(evil, ".git")+"\n")
	write(t, tree.Dir, "f.txt", "mine\n")
	if ok, err := r.Commit(ctx, "c1", "d"); err != nil || !ok {
		t.Fatalf("commit %v %v", ok, err)
	}
	if got := gitT(t, dir, "show", Branch("c1")+":f.txt"); got != "mine\n" {
		t.Errorf("branch has %q", got)
	}
	if strings.Contains(read(t, tree.Dir, ".git"), evil) {
		t.Error(".git file not restored")
	}
}

func TestResolveAndDiff(t *testing.T) {
	ctx := context.Background()
	_, r := newRepo(t)
	for _, id := range []string{"child-aa11", "child-aa22", "child-bb33"} {
		tree, err := r.Create(ctx, id, "d")
		if err != nil {
			t.Fatal(err)
		}
		write(t, tree.Dir, "f.txt", replaceLine(tenLines, 3, id))
		if _, err := r.Commit(ctx, id, "d"); err != nil {
			t.Fatal(err)
		}
	}
	if id, err := r.Resolve(ctx, "child-b"); err != nil || id != "child-bb33" {
		t.Errorf("resolve %q %v", id, err)
	}
	if _, err := r.Resolve(ctx, "child-a"); err == nil || !strings.Contains(err.Error(), "2 isolated children") {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := r.Resolve(ctx, "zzz"); !errors.Is(err, ErrNoChild) {
		t.Errorf("unknown: %v", err)
	}
	d, err := r.Diff(ctx, "child-aa11", 0)
	if err != nil || !strings.Contains(d, "+child-aa11") || !strings.Contains(d, "-3") {
		t.Errorf("diff %q %v", d, err)
	}
	if d, _ := r.Diff(ctx, "child-aa11", 40); !strings.Contains(d, "[diff truncated") || len(d) > 100 {
		t.Errorf("capped diff %q", d)
	}
}
