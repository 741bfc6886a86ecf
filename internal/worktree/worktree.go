// Package worktree gives a writing child its own git worktree of its
// parent's repository (`isolation: worktree`, docs/subagents.md): made from
// the parent's working tree as it is (uncommitted and untracked changes
// included), committed on branch reins/<child-id> when the child ends,
// checked and merged back into the parent's working tree on demand, and
// removed when merged, dropped or idle.
//
// Where things live, all inside the repository's own git directory (the
// common one, so a linked worktree's parent shares it), so that nothing
// appears in the parent's `git status` and a crash leaves everything
// findable by `git worktree list` and `reins worktree list`:
//
//	<git-common-dir>/reins/worktrees/<id>   the child's checkout
//	refs/heads/reins/<id>                   its branch (kept until dropped)
//	refs/reins/base/<id>                    the commit it started from
//	refs/reins/merged/<id>                  set when it was merged
//
// The base commit snapshots the parent's working tree through a temporary
// index (git add -A respects .gitignore, so ignored files are not copied).
// Every git command runs confined in the session's sandbox (git.go,
// policy), so what a repository makes git run — filters, textconv,
// includes, helpers — cannot write outside the git directory; hooks and
// fsmonitor are off besides. Those on a child's worktree name the git
// directory explicitly, so a child that rewrote its worktree's .git file
// cannot point reins elsewhere.
package worktree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/reinsdev/reins/internal/sandbox"
)

// Errors callers branch on.
var (
	// ErrNoGit: git is not installed (not on PATH).
	ErrNoGit = errors.New("isolation: worktree needs git, which was not found on PATH")
	// ErrNotRepo: the directory is not inside a git repository.
	ErrNotRepo = errors.New("isolation: worktree needs a git repository, and the workspace is not inside one")
	// ErrOldGit: git is older than 2.38 (no merge-tree --write-tree).
	ErrOldGit = errors.New("isolation: worktree needs git 2.38 or later")
	// ErrNoChild: no branch reins/<id> exists.
	ErrNoChild = errors.New("no isolated child of that id in this repository")
	// ErrBadID: an id that cannot name a branch and a folder.
	ErrBadID = errors.New("a child id is letters, digits, '.', '_' and '-'")
)

// ConflictError is a merge that would conflict: the working tree was left
// unchanged. Files are the conflicted paths and Text git's CONFLICT lines;
// both are repository content (paths a child chose) and are shown escaped,
// never in a diagnostic.
type ConflictError struct {
	ID    string
	Files []string
	Text  string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s does not merge cleanly into the working tree (conflicts in %s); the working tree was left unchanged", Branch(e.ID), strings.Join(e.Files, ", "))
}

// Branch is the branch of child id.
func Branch(id string) string { return "reins/" + id }

// validID reports whether id names a child's worktree and branch: a
// letter or digit, then up to 63 letters, digits, '_' or '-'. A plain loop
// rather than a regular expression: a package-level regexp with {0,63}
// compiled at every start of reins, the sandbox's supervisor and confine
// stages included (about 1 ms each; BENCHMARKS.md, the container's cost).
func validID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// Repo is the git repository a parent works in.
type Repo struct {
	// Root is the top of the parent's working tree.
	Root string
	// CommonDir is the repository's common git directory (absolute).
	CommonDir string
	// index is the parent's own index file, which a snapshot starts from
	// so git add rehashes only what changed.
	index string
	// sb is the session's sandbox policy, which every git command of the
	// repository runs within (policy).
	sb sandbox.Policy
}

// locks serialises the operations on one repository inside this process:
// worktree add/remove and ref updates of parallel children, and merges.
var locks sync.Map // common dir -> *sync.Mutex

func (r *Repo) lock() func() {
	v, _ := locks.LoadOrStore(r.CommonDir, &sync.Mutex{})
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// Open finds the repository dir is in. It fails with ErrNoGit, ErrOldGit
// or ErrNotRepo (wrapped) before anything is changed. sb is the session's
// sandbox policy: every git command reins runs on the repository runs
// confined within it (docs/sandbox.md, "reins's own git"); with the
// sandbox off, git runs directly.
func Open(ctx context.Context, dir string, sb sandbox.Policy) (*Repo, error) {
	look := policy(sb, readRepo, dir, "", nil)
	ver, _, err := git(ctx, run{dir: dir, args: []string{"version"}, pol: look})
	if err != nil {
		if errors.Is(err, ErrNoGit) {
			return nil, ErrNoGit
		}
		return nil, err
	}
	if !versionAtLeast(ver, 2, 38) {
		return nil, fmt.Errorf("%w (found %s)", ErrOldGit, strings.TrimSpace(strings.TrimPrefix(ver, "git version ")))
	}
	out, _, err := git(ctx, run{dir: dir, pol: look, args: []string{"rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir", "--git-path", "index"}})
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNotRepo, dir)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || lines[0] == "" {
		return nil, fmt.Errorf("%w: %s", ErrNotRepo, dir) // a bare repository has no working tree
	}
	return &Repo{Root: lines[0], CommonDir: lines[1], index: lines[2], sb: sb}, nil
}

// versionAtLeast reads "git version 2.39.5 (...)".
func versionAtLeast(s string, major, minor int) bool {
	f := strings.Fields(s)
	if len(f) < 3 {
		return false
	}
	parts := strings.SplitN(f[2], ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// Dir is the folder of child id's worktree.
func (r *Repo) Dir(id string) string { return filepath.Join(r.CommonDir, "reins", "worktrees", id) }

// adminDir is the git directory of child id's worktree (git names it after
// the folder's base name; Create checks it did).
func (r *Repo) adminDir(id string) string { return filepath.Join(r.CommonDir, "worktrees", id) }

// exec runs one git command on the repository, in the sandbox its
// subcommand needs (accessOf).
func (r *Repo) exec(ctx context.Context, rn run) (string, int, error) {
	rn.pol = policy(r.sb, accessOf(rn.opName()), r.Root, r.CommonDir, rn.env)
	return git(ctx, rn)
}

func (r *Repo) git(ctx context.Context, env []string, args ...string) (string, error) {
	out, _, err := r.exec(ctx, run{dir: r.Root, env: env, args: args})
	return out, err
}

// childGit runs git on child id's worktree with its git directory named
// explicitly.
func (r *Repo) childGit(ctx context.Context, id string, env []string, args ...string) (string, error) {
	full := append(r.childPrefix(id), args...)
	out, _, err := r.exec(ctx, run{dir: r.Root, env: env, args: full})
	return out, err
}

// childPrefix names child id's git directory and worktree to git.
func (r *Repo) childPrefix(id string) []string {
	return []string{"--git-dir=" + r.adminDir(id), "--work-tree=" + r.Dir(id)}
}

func (r *Repo) revParse(ctx context.Context, ref string) (string, error) {
	out, err := r.git(ctx, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	return strings.TrimSpace(out), err
}

func checkID(id string) error {
	if !validID(id) {
		return ErrBadID
	}
	return nil
}

// Tree is a child's worktree.
type Tree struct {
	ID     string
	Branch string
	// Dir is the worktree's folder; Base the commit it started from.
	Dir  string
	Base string
}

// author is who the commits reins makes are by.
func author(name string) []string {
	const email = "reins@localhost"
	return []string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email,
		"GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + email}
}

// snapshotScript takes a snapshot in one process — one confined start
// instead of four (docs/sandbox.md, "reins's own git"): "$@" is git's
// argument prefix (the safety flags, the folder, a child's git directory)
// and every value comes in a variable, never in the script's text; the
// parents are hexadecimal ids (snapshot checks them).
const snapshotScript = `set -e
if [ -n "$REINS_START_TREE" ]; then git "$@" read-tree "$REINS_START_TREE"; fi
git "$@" add -A -- .
tree=$(git "$@" write-tree)
p=
for x in $REINS_PARENTS; do p="$p -p $x"; done
commit=$(git "$@" commit-tree "$tree" -m "$REINS_MSG" $p)
if [ -n "$REINS_REF" ]; then git "$@" update-ref "$REINS_REF" "$commit"; fi
echo "$commit $tree"
`

// snapshot commits the working tree (of the git prefix's work tree: the
// parent's, or a child's with its git directory named) as it is, ignored
// files left out, on top of parents, points ref at it when ref is not "",
// and returns the commit and its tree. start is the index to start from:
// a file to copy ("" for none) or a tree-ish to read (startTree).
func (r *Repo) snapshot(ctx context.Context, prefix []string, startIndex, startTree, msg, who, ref string, parents ...string) (commit, tree string, err error) {
	for _, p := range append([]string{startTree}, parents...) {
		if strings.Trim(p, "0123456789abcdef") != "" {
			return "", "", fmt.Errorf("snapshot: %q is not a commit id", p)
		}
	}
	tmp, err := os.MkdirTemp("", "reins-worktree-index-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	idx := filepath.Join(tmp, "index")
	if startIndex != "" {
		if err := copyIndex(startIndex, idx); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", "", err
		}
	}
	env := append(author(who), "GIT_INDEX_FILE="+idx, "REINS_START_TREE="+startTree,
		"REINS_PARENTS="+strings.Join(parents, " "), "REINS_MSG="+msg, "REINS_REF="+ref)
	out, _, err := r.exec(ctx, run{dir: r.Root, env: env, args: prefix, script: snapshotScript, op: "snapshot"})
	if err != nil {
		return "", "", err
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return "", "", &GitError{Op: "snapshot", ExitCode: 0, Err: fmt.Errorf("unexpected output of %d bytes", len(out))}
	}
	return f[0], f[1], nil
}

// copyIndex copies a git index file and keeps its modification time: git
// trusts an entry's cached stat only when the entry is older than the
// index file, so a copy stamped "now" would make an entry written in the
// index's own tick look clean, and a same-size edit in that tick would be
// missed by the snapshot (/undo then restored nothing).
func copyIndex(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chtimes(to, st.ModTime(), st.ModTime())
}

// parentSnapshot commits the parent's working tree on top of parents.
func (r *Repo) parentSnapshot(ctx context.Context, msg string, parents ...string) (string, string, error) {
	return r.snapshot(ctx, nil, r.index, "", msg, "reins", "", parents...)
}

// Create makes child id's worktree on a new branch reins/<id>, from a
// commit of the parent's working tree as it is now (on top of HEAD, or
// alone in a repository without commits). description is recorded in the
// base commit's message.
func (r *Repo) Create(ctx context.Context, id, description string) (*Tree, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	unlock := r.lock()
	defer unlock()
	if _, err := r.revParse(ctx, "refs/heads/"+Branch(id)); err == nil {
		return nil, fmt.Errorf("branch %s already exists", Branch(id))
	}
	var parents []string
	if head, err := r.revParse(ctx, "HEAD"); err == nil && head != "" {
		parents = append(parents, head)
	}
	base, _, err := r.parentSnapshot(ctx, "the parent's working tree for "+id+"\n\n"+oneLine(description), parents...)
	if err != nil {
		return nil, err
	}
	dir := r.Dir(id)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	if _, err := r.git(ctx, nil, "update-ref", "refs/reins/base/"+id, base); err != nil {
		return nil, err
	}
	if _, err := r.git(ctx, nil, "worktree", "add", "--quiet", "-b", Branch(id), dir, base); err != nil {
		r.git(ctx, nil, "update-ref", "-d", "refs/reins/base/"+id)
		return nil, err
	}
	if err := r.checkAdmin(id); err != nil {
		r.removeLocked(ctx, id)
		return nil, err
	}
	return &Tree{ID: id, Branch: Branch(id), Dir: dir, Base: base}, nil
}

// checkAdmin makes sure git named the worktree's git directory after id
// and restores the worktree's .git file, which a child may have changed.
func (r *Repo) checkAdmin(id string) error {
	b, err := os.ReadFile(filepath.Join(r.adminDir(id), "gitdir"))
	if err != nil || filepath.Clean(strings.TrimSpace(string(b))) != filepath.Join(r.Dir(id), ".git") {
		return fmt.Errorf("git did not record worktree %s under %s", id, r.adminDir(id))
	}
	return os.WriteFile(filepath.Join(r.Dir(id), ".git"), []byte("gitdir: "+r.adminDir(id)+"\n"), 0o644)
}

// Ensure gives child id its worktree again (a continuation after its idle
// removal) at its branch's tip; an existing one is kept.
func (r *Repo) Ensure(ctx context.Context, id string) (*Tree, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	unlock := r.lock()
	defer unlock()
	base, err := r.revParse(ctx, "refs/reins/base/"+id)
	if err != nil {
		return nil, ErrNoChild
	}
	if _, err := r.revParse(ctx, "refs/heads/"+Branch(id)); err != nil {
		return nil, ErrNoChild
	}
	dir := r.Dir(id)
	if _, err := os.Stat(filepath.Join(r.adminDir(id), "gitdir")); err == nil {
		if _, err := os.Stat(dir); err == nil {
			return &Tree{ID: id, Branch: Branch(id), Dir: dir, Base: base}, r.checkAdmin(id)
		}
	}
	r.git(ctx, nil, "worktree", "prune")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	if _, err := r.git(ctx, nil, "worktree", "add", "--quiet", dir, Branch(id)); err != nil {
		return nil, err
	}
	if err := r.checkAdmin(id); err != nil {
		return nil, err
	}
	return &Tree{ID: id, Branch: Branch(id), Dir: dir, Base: base}, nil
}

// Commit commits everything changed in child id's worktree (ignored files
// left out) on its branch, by "reins child <id>" with message as the
// message. It reports whether there was anything to commit. The
// worktree's own index is brought to the new commit.
func (r *Repo) Commit(ctx context.Context, id, message string) (bool, error) {
	if err := checkID(id); err != nil {
		return false, err
	}
	unlock := r.lock()
	defer unlock()
	if err := r.checkAdmin(id); err != nil {
		return false, err
	}
	tip, err := r.revParse(ctx, "refs/heads/"+Branch(id))
	if err != nil {
		return false, ErrNoChild
	}
	msg := strings.TrimSpace(message)
	if msg == "" {
		msg = "reins child " + id
	}
	commit, tree, err := r.snapshot(ctx, r.childPrefix(id), "", tip, msg, "reins child "+id, "", tip)
	if err != nil {
		return false, err
	}
	tipTree, err := r.git(ctx, nil, "rev-parse", tip+"^{tree}")
	if err != nil {
		return false, err
	}
	if strings.TrimSpace(tipTree) == tree {
		return false, nil
	}
	if _, err := r.git(ctx, nil, "update-ref", "-m", "reins: commit of child "+id, "refs/heads/"+Branch(id), commit, tip); err != nil {
		return false, err
	}
	// New work after a merge is not merged.
	if _, err := r.revParse(ctx, "refs/reins/merged/"+id); err == nil {
		if _, err := r.git(ctx, nil, "update-ref", "-d", "refs/reins/merged/"+id); err != nil {
			return true, err
		}
	}
	// The worktree's HEAD follows the branch; its index is brought along
	// (files are already as committed).
	if _, err := r.childGit(ctx, id, nil, "read-tree", commit); err != nil {
		return true, err
	}
	return true, nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "")
	}
	return s
}

// Pending reports whether child id's worktree holds changes not yet
// committed on its branch (a child stopped before reins committed its
// work: a crash, a SIGKILL); false when it has no worktree.
func (r *Repo) Pending(ctx context.Context, id string) (bool, error) {
	if err := checkID(id); err != nil {
		return false, err
	}
	if _, err := os.Stat(filepath.Join(r.adminDir(id), "gitdir")); err != nil {
		return false, nil
	}
	if _, err := os.Stat(r.Dir(id)); err != nil {
		return false, nil
	}
	if err := r.checkAdmin(id); err != nil {
		return false, err
	}
	out, err := r.childGit(ctx, id, nil, "status", "--porcelain", "--untracked-files=all")
	return strings.TrimSpace(out) != "", err
}

// Status is what a child's branch holds and whether it merges.
type Status struct {
	ID     string
	Branch string
	// Dir is the worktree's folder, "" when it was removed (the branch
	// stays).
	Dir  string
	Base string
	Tip  string
	// Files, Added and Deleted count the branch's change since its base
	// (binary files count as files only).
	Files, Added, Deleted int
	// Merged says it was merged (reins worktree merge or the worktree
	// tool).
	Merged bool
	// Clean says the change merges into the parent's working tree as it
	// is now, without conflicts; Conflict is why not.
	Clean    bool
	Conflict *ConflictError
}

// Line is the one-line summary a child's result carries.
func (s Status) Line() string {
	merge := "merges cleanly into the working tree"
	switch {
	case s.Merged:
		merge = "merged"
	case s.Conflict != nil:
		merge = "conflicts with the working tree in " + strings.Join(s.Conflict.Files, ", ")
	case !s.Clean:
		merge = "merge not checked"
	}
	files := "files"
	if s.Files == 1 {
		files = "file"
	}
	return fmt.Sprintf("worktree: branch %s; %d %s changed, +%d -%d; %s", s.Branch, s.Files, files, s.Added, s.Deleted, merge)
}

// Stat counts child id's change and checks whether it merges into the
// parent's working tree now.
func (r *Repo) Stat(ctx context.Context, id string) (Status, error) {
	s, err := r.stat(ctx, id)
	if err != nil || s.Merged {
		return s, err
	}
	_, _, conflict, err := r.mergeTree(ctx, s)
	if err != nil {
		return s, err
	}
	s.Conflict, s.Clean = conflict, conflict == nil
	return s, nil
}

// stat is Stat without the merge check.
func (r *Repo) stat(ctx context.Context, id string) (Status, error) {
	if err := checkID(id); err != nil {
		return Status{}, err
	}
	s := Status{ID: id, Branch: Branch(id)}
	var err error
	if s.Base, err = r.revParse(ctx, "refs/reins/base/"+id); err != nil {
		return s, ErrNoChild
	}
	if s.Tip, err = r.revParse(ctx, "refs/heads/"+Branch(id)); err != nil {
		return s, ErrNoChild
	}
	if m, err := r.revParse(ctx, "refs/reins/merged/"+id); err == nil && m != "" {
		s.Merged = true
	}
	if _, err := os.Stat(filepath.Join(r.adminDir(id), "gitdir")); err == nil {
		if _, err := os.Stat(r.Dir(id)); err == nil {
			s.Dir = r.Dir(id)
		}
	}
	out, err := r.git(ctx, nil, "diff", "--numstat", "--no-renames", s.Base, s.Tip)
	if err != nil {
		return s, err
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.SplitN(l, "\t", 3)
		if len(f) < 3 {
			continue
		}
		s.Files++
		a, _ := strconv.Atoi(f[0]) // "-" for a binary file
		d, _ := strconv.Atoi(f[1])
		s.Added += a
		s.Deleted += d
	}
	return s, nil
}

// mergeTree merges the child's branch with a snapshot of the parent's
// working tree whose parent is the child's base, so the merge base is
// exactly what the child started from. It returns the snapshot, the merged
// tree (when clean) and the conflict (when not).
func (r *Repo) mergeTree(ctx context.Context, s Status) (work, merged string, conflict *ConflictError, err error) {
	work, _, err = r.parentSnapshot(ctx, "the parent's working tree, to merge "+s.ID, s.Base)
	if err != nil {
		return "", "", nil, err
	}
	out, code, err := r.exec(ctx, run{dir: r.Root, okCodes: []int{1},
		args: []string{"merge-tree", "--write-tree", "--name-only", work, s.Tip}})
	if err != nil {
		return "", "", nil, err
	}
	lines := strings.Split(out, "\n")
	if code == 0 {
		return work, strings.TrimSpace(lines[0]), nil, nil
	}
	c := &ConflictError{ID: s.ID}
	i := 1
	for ; i < len(lines) && lines[i] != ""; i++ {
		if !slices.Contains(c.Files, lines[i]) {
			c.Files = append(c.Files, lines[i])
		}
	}
	var text []string
	for _, l := range lines[i:] {
		if strings.HasPrefix(l, "CONFLICT") {
			text = append(text, l)
		}
	}
	c.Text = strings.Join(text, "\n")
	return work, "", c, nil
}

// Diff is the unified diff of child id's change since its base, at most
// max bytes of it (cut on a line, with a note); 0 means no cap.
func (r *Repo) Diff(ctx context.Context, id string, max int) (string, error) {
	s, err := r.stat(ctx, id)
	if err != nil {
		return "", err
	}
	out, err := r.git(ctx, nil, "diff", "--no-color", "--no-ext-diff", "--stat", "-p", s.Base, s.Tip)
	if err != nil {
		return "", err
	}
	if max > 0 && len(out) > max {
		cut := strings.LastIndexByte(out[:max], '\n') + 1
		out = strings.ToValidUTF8(out[:cut], "") + fmt.Sprintf("[diff truncated: %d of %d bytes shown]\n", cut, len(out))
	}
	return out, nil
}

// Merge applies child id's change to the parent's working tree (not its
// index): a three-way merge against what the child started from. A
// conflict is a *ConflictError and leaves the tree unchanged; so does any
// other failure (git apply is all or nothing). A merged child's worktree
// is removed; its branch stays.
func (r *Repo) Merge(ctx context.Context, id string) (Status, error) {
	unlock := r.lock()
	defer unlock()
	s, err := r.stat(ctx, id)
	if err != nil {
		return s, err
	}
	if s.Merged {
		return s, fmt.Errorf("%s was already merged", s.Branch)
	}
	work, merged, conflict, err := r.mergeTree(ctx, s)
	if err != nil {
		return s, err
	}
	if conflict != nil {
		s.Conflict = conflict
		return s, conflict
	}
	patch, err := r.git(ctx, nil, "diff", "--binary", "--full-index", "--no-color", "--no-ext-diff", "--no-renames", work, merged)
	if err != nil {
		return s, err
	}
	if patch != "" {
		if _, _, err := r.exec(ctx, run{dir: r.Root, stdin: []byte(patch), args: []string{"apply", "--whitespace=nowarn", "-"}}); err != nil {
			return s, err
		}
	}
	if _, err := r.git(ctx, nil, "update-ref", "refs/reins/merged/"+id, s.Tip); err != nil {
		return s, err
	}
	s.Merged, s.Clean = true, true
	if s.Dir != "" {
		if err := r.removeLocked(ctx, id); err != nil {
			return s, err
		}
		s.Dir = ""
	}
	return s, nil
}

// Remove removes child id's worktree (uncommitted changes in it are lost:
// commit first) and keeps its branch.
func (r *Repo) Remove(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	unlock := r.lock()
	defer unlock()
	return r.removeLocked(ctx, id)
}

func (r *Repo) removeLocked(ctx context.Context, id string) error {
	dir := r.Dir(id)
	if _, err := os.Stat(r.adminDir(id)); err == nil {
		if _, err := r.git(ctx, nil, "worktree", "remove", "--force", "--force", dir); err == nil {
			return nil
		}
	}
	// A worktree git cannot remove (its .git file gone, a half-made one):
	// the folder goes and git forgets it.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	_, err := r.git(ctx, nil, "worktree", "prune")
	return err
}

// Drop removes child id's worktree, its branch and its refs: its work is
// discarded.
func (r *Repo) Drop(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	unlock := r.lock()
	defer unlock()
	base, err := r.revParse(ctx, "refs/reins/base/"+id)
	if err != nil {
		if _, err := r.revParse(ctx, "refs/heads/"+Branch(id)); err != nil {
			return ErrNoChild
		}
	}
	if err := r.removeLocked(ctx, id); err != nil {
		return err
	}
	if base != "" {
		// The mark that id was isolated and dropped (Dropped): a
		// continuation must not run in the shared workspace instead. It
		// holds the base, not the child's work.
		if _, err := r.git(ctx, nil, "update-ref", "refs/reins/dropped/"+id, base); err != nil {
			return err
		}
	}
	for _, ref := range []string{"refs/heads/" + Branch(id), "refs/reins/base/" + id, "refs/reins/merged/" + id} {
		if _, err := r.revParse(ctx, ref); err == nil {
			if _, err := r.git(ctx, nil, "update-ref", "-d", ref); err != nil {
				return err
			}
		}
	}
	return nil
}

// Dropped reports whether child id was isolated and then dropped.
func (r *Repo) Dropped(ctx context.Context, id string) bool {
	if checkID(id) != nil {
		return false
	}
	_, err := r.revParse(ctx, "refs/reins/dropped/"+id)
	return err == nil
}

// List returns every isolated child of the repository (a branch
// reins/<id> with its base ref), oldest id first, with its counts; the
// merge check is left out (Stat does it for one).
func (r *Repo) List(ctx context.Context) ([]Status, error) {
	out, err := r.git(ctx, nil, "for-each-ref", "--format=%(refname)", "refs/reins/base/")
	if err != nil {
		return nil, err
	}
	var list []Status
	for _, ref := range strings.Fields(out) {
		id := strings.TrimPrefix(ref, "refs/reins/base/")
		if checkID(id) != nil {
			continue
		}
		s, err := r.stat(ctx, id)
		if errors.Is(err, ErrNoChild) {
			continue
		}
		if err != nil {
			return nil, err
		}
		list = append(list, s)
	}
	slices.SortFunc(list, func(a, b Status) int { return strings.Compare(a.ID, b.ID) })
	return list, nil
}

// Resolve finds the child a unique id prefix names (SPEC §11: any unique
// prefix is accepted where an id is).
func (r *Repo) Resolve(ctx context.Context, prefix string) (string, error) {
	list, err := r.List(ctx)
	if err != nil {
		return "", err
	}
	var hits []string
	for _, s := range list {
		if s.ID == prefix {
			return s.ID, nil
		}
		if strings.HasPrefix(s.ID, prefix) {
			hits = append(hits, s.ID)
		}
	}
	switch len(hits) {
	case 0:
		return "", ErrNoChild
	case 1:
		return hits[0], nil
	}
	return "", fmt.Errorf("%q names %d isolated children (%s); give more of the id", prefix, len(hits), strings.Join(hits, ", "))
}
