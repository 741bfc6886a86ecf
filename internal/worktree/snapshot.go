package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Working-tree snapshots for the interactive /undo and /rewind
// (docs/interactive.md): a commit of the working tree as it is, made
// through a temporary index (the user's index, HEAD and branches are
// never touched; ignored files are left out) and kept under a ref of
// reins's own, refs/reins/undo/<session>/<turn>/start and …/end (the
// tree before and after each turn), so that files a shell command
// changed or deleted can be restored, and a file changed outside the
// turns told apart and left alone.

// Snapshot commits the working tree as it is now and points ref (under
// refs/reins/) at the commit, which it returns.
func (r *Repo) Snapshot(ctx context.Context, ref, message string) (string, error) {
	if !strings.HasPrefix(ref, "refs/reins/") {
		return "", errors.New("a snapshot ref is under refs/reins/")
	}
	unlock := r.lock()
	defer unlock()
	// One process: the commit and the ref together (snapshotScript).
	commit, _, err := r.snapshot(ctx, nil, r.index, "", message, "reins", ref)
	return commit, err
}

// Capture commits the working tree as it is now under no ref: the state
// a restore compares the snapshots with (git gc removes it in time).
func (r *Repo) Capture(ctx context.Context, message string) (string, error) {
	unlock := r.lock()
	defer unlock()
	commit, _, err := r.parentSnapshot(ctx, message)
	return commit, err
}

// Change is a path that differs between two snapshots.
type Change struct {
	// Path is relative to the folder Changed was asked about.
	Path string
	// Absent: the path is not in the first snapshot, so a restore to it
	// removes the file.
	Absent bool
}

// Changed lists the paths under dir (a folder of the working tree) that
// differ between the snapshots from and to.
func (r *Repo) Changed(ctx context.Context, from, to, dir string) ([]Change, error) {
	out, _, err := r.exec(ctx, run{dir: dir, args: []string{"diff-tree", "-r", "--no-renames", "--name-status", "-z", "--relative", from, to}})
	if err != nil {
		return nil, err
	}
	var cs []Change
	f := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		status, p := f[i], f[i+1]
		if !filepath.IsLocal(p) {
			continue
		}
		cs = append(cs, Change{Path: p, Absent: status == "A"})
	}
	return cs, nil
}

// Restore makes the paths of changes (from Changed(commit, now, dir))
// under dir what they were in commit, a Snapshot: a changed or deleted
// file gets its content and mode back, an Absent one is removed (and the
// folders it was the last entry of). Every other path, the index, HEAD and
// branches are left alone.
func (r *Repo) Restore(ctx context.Context, commit, dir string, changes []Change) error {
	unlock := r.lock()
	defer unlock()
	var restore, remove []string
	for _, c := range changes {
		switch {
		case !filepath.IsLocal(c.Path):
		case c.Absent:
			remove = append(remove, c.Path)
		default:
			restore = append(restore, c.Path)
		}
	}
	if len(remove) > 0 {
		root, err := os.OpenRoot(dir)
		if err != nil {
			return err
		}
		defer root.Close()
		for _, p := range remove {
			if err := root.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			// Folders the removed files were the last entries of go too.
			for d := filepath.Dir(p); d != "." && root.Remove(d) == nil; d = filepath.Dir(d) {
			}
		}
	}
	if len(restore) > 0 {
		tmp, err := os.MkdirTemp("", "reins-undo-index-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		idx := filepath.Join(tmp, "index")
		if err := copyIndex(r.index, idx); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		env := []string{"GIT_INDEX_FILE=" + idx, "GIT_LITERAL_PATHSPECS=1"}
		stdin := []byte(strings.Join(restore, "\x00"))
		if _, _, err := r.exec(ctx, run{dir: dir, env: env, stdin: stdin,
			args: []string{"checkout", "--quiet", "--pathspec-from-file=-", "--pathspec-file-nul", commit}}); err != nil {
			return err
		}
	}
	return nil
}

// Ignored returns which of paths (relative to dir) git ignores: those a
// Snapshot leaves out.
func (r *Repo) Ignored(ctx context.Context, dir string, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	// "./" first: check-ignore takes no literal-pathspec switch, and a
	// name starting with ':' would be read as pathspec magic.
	var in strings.Builder
	for _, p := range paths {
		in.WriteString("./" + p + "\x00")
	}
	out, _, err := r.exec(ctx, run{dir: dir, stdin: []byte(in.String()),
		args: []string{"check-ignore", "-z", "--stdin"}, okCodes: []int{1}})
	if err != nil {
		return nil, err
	}
	var ign []string
	for p := range strings.SplitSeq(out, "\x00") {
		if p != "" {
			ign = append(ign, strings.TrimPrefix(p, "./"))
		}
	}
	return ign, nil
}

// SnapshotRef is a ref of reins's own and when its commit was made.
type SnapshotRef struct {
	Name string
	Time time.Time
}

// Refs lists the refs under prefix (under refs/reins/).
func (r *Repo) Refs(ctx context.Context, prefix string) ([]SnapshotRef, error) {
	if !strings.HasPrefix(prefix, "refs/reins/") {
		return nil, errors.New("a snapshot ref is under refs/reins/")
	}
	out, err := r.git(ctx, nil, "for-each-ref", "--format=%(refname) %(committerdate:unix)", prefix)
	if err != nil {
		return nil, err
	}
	var refs []SnapshotRef
	for line := range strings.Lines(out) {
		name, secs, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(secs, 10, 64)
		if err != nil {
			n = 0 // not a commit: as old as can be
		}
		refs = append(refs, SnapshotRef{Name: name, Time: time.Unix(n, 0)})
	}
	return refs, nil
}

// DeleteRefs deletes refs (each under refs/reins/) in one transaction.
// The commits they held stay in the repository, unreachable, until git
// gc prunes them.
func (r *Repo) DeleteRefs(ctx context.Context, refs []string) error {
	if len(refs) == 0 {
		return nil
	}
	var b strings.Builder
	for _, ref := range refs {
		if !strings.HasPrefix(ref, "refs/reins/") || strings.ContainsAny(ref, "\x00\n") {
			return errors.New("a snapshot ref is under refs/reins/")
		}
		b.WriteString("delete " + ref + "\n")
	}
	unlock := r.lock()
	defer unlock()
	_, _, err := r.exec(ctx, run{dir: r.Root, stdin: []byte(b.String()), args: []string{"update-ref", "--stdin"}})
	return err
}
