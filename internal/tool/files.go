package tool

import (
	"context"
	"errors"
	"github.com/reinsdev/reins/internal/wsfs"
	"slices"
	"sync"
)

// WorkspaceFiles lists the files of env's workspace the way the glob and
// grep tools walk it (hidden names, .git and node_modules skipped, the
// .ignore, .gitignore and .git/info/exclude rules applied, symlinked
// directories not followed), as sorted slash paths relative to the
// workspace: the terminal's @path completion offers what a search would
// find. At most limit paths are returned; cut says the walk stopped there
// (or at the walk's own bound).
func WorkspaceFiles(ctx context.Context, env *Env, limit int) (files []string, cut bool, err error) {
	fsy, err := env.files()
	if err != nil {
		return nil, false, err
	}
	defer fsy.Close()
	root, err := env.Resolve("")
	if err != nil {
		return nil, false, err
	}
	var mu sync.Mutex
	err = wsfs.Walk(ctx, fsy, root, wsfs.WalkOptions{MaxEntries: walkMaxEntries}, func(tf wsfs.File) error {
		mu.Lock()
		defer mu.Unlock()
		if len(files) >= limit {
			return errFilesLimit
		}
		files = append(files, tf.Rel)
		return nil
	})
	switch {
	case errors.Is(err, errFilesLimit), errors.Is(err, wsfs.ErrWalkBound):
		cut, err = true, nil
	case err != nil:
		return nil, false, err
	}
	slices.Sort(files)
	return files, cut, nil
}

// errFilesLimit stops WorkspaceFiles' walk at its limit.
var errFilesLimit = errors.New("file limit reached")

// UserShell runs a command the user typed (the terminal's !command) the
// way the bash tool runs the model's: `bash -c` in the workspace, under
// env's sandbox policy and permission mode, bash's default timeout, its
// teardown and env's output cap. Nothing asks and no rule applies — the
// user is the one asking — but a read-only session with the sandbox off
// refuses it, since nothing would hold the command to reading.
func UserShell(ctx context.Context, env *Env, command string) Result {
	if env.Permission.rank() < WorkspaceWrite.rank() && !env.Policy().Confined() {
		return Errorf("read-only mode with the sandbox off: a shell command is refused, nothing would hold it to reading")
	}
	dir, err := env.Resolve("")
	if err != nil {
		return Errorf("%v", err)
	}
	res := runBash(ctx, env.Policy(), dir, command, bashDefaultTimeout, env.OutputCap)
	res.Content = Cap(res.Content, env.OutputCap)
	return res
}
