package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Working-tree snapshots for the interactive /undo and /rewind
// (docs/interactive.md): a commit of the working tree as it is, made
// through a temporary index (the user's index, HEAD and branches are
// never touched; ignored files are left out) and kept under a ref of
// reins's own, refs/reins/undo/<session>/<turn>, so that files a shell
// command changed or deleted can be restored.

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

// RestoreTo makes the files under dir (a folder of the working tree) what
// they were in commit, a Snapshot: a changed or deleted file gets its
// content and mode back, a file created since is removed. Ignored files
// and everything outside dir are left alone, and so are the index, HEAD
// and branches. It returns the paths it changed, relative to dir.
func (r *Repo) RestoreTo(ctx context.Context, commit, dir string) ([]string, error) {
	unlock := r.lock()
	defer unlock()
	now, _, err := r.parentSnapshot(ctx, "reins undo: the working tree before restoring")
	if err != nil {
		return nil, err
	}
	out, _, err := r.exec(ctx, run{dir: dir, args: []string{"diff-tree", "-r", "--no-renames", "--name-status", "-z", "--relative", commit, now}})
	if err != nil {
		return nil, err
	}
	var restore, remove []string
	f := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		status, p := f[i], f[i+1]
		if !filepath.IsLocal(p) {
			continue
		}
		if status == "A" {
			remove = append(remove, p)
		} else {
			restore = append(restore, p)
		}
	}
	if len(remove) > 0 {
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, err
		}
		defer root.Close()
		for _, p := range remove {
			if err := root.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			// Folders the removed files were the last entries of go too.
			for d := filepath.Dir(p); d != "." && root.Remove(d) == nil; d = filepath.Dir(d) {
			}
		}
	}
	if len(restore) > 0 {
		tmp, err := os.MkdirTemp("", "reins-undo-index-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		idx := filepath.Join(tmp, "index")
		if err := copyIndex(r.index, idx); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		env := []string{"GIT_INDEX_FILE=" + idx, "GIT_LITERAL_PATHSPECS=1"}
		stdin := []byte(strings.Join(restore, "\x00"))
		if _, _, err := r.exec(ctx, run{dir: dir, env: env, stdin: stdin,
			args: []string{"checkout", "--quiet", "--pathspec-from-file=-", "--pathspec-file-nul", commit}}); err != nil {
			return nil, err
		}
	}
	return append(restore, remove...), nil
}
