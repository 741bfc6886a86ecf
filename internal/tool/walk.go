package tool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// walkMaxEntries bounds how many entries one glob or grep walk visits, so
// a huge tree (or a model pointing a search at /) ends with a partial answer
// instead of running on. A variable so tests can lower it.
var walkMaxEntries = 200_000

// errWalkBound ends a walk that reached walkMaxEntries.
var errWalkBound = errors.New("walk bound reached")

// walkBounded is filepath.WalkDir that stops when ctx is done (returning
// ctx's error) or after walkMaxEntries entries (returning errWalkBound).
//
// Every directory is read through fsy, so in a confined mode no step of the
// walk leaves the workspace whatever is renamed meanwhile. Like WalkDir it
// does not descend into symlinked directories, but a root that is a symlink
// to a directory is walked.
func walkBounded(ctx context.Context, fsy *fsys, root string, fn fs.WalkDirFunc) error {
	n := 0
	fi, err := fsy.Stat(root)
	if err != nil {
		return fn(root, nil, err)
	}
	err = walkDir(ctx, fsy, root, fs.FileInfoToDirEntry(fi), &n, fn)
	if errors.Is(err, filepath.SkipDir) || errors.Is(err, filepath.SkipAll) {
		return nil
	}
	return err
}

func walkDir(ctx context.Context, fsy *fsys, p string, d fs.DirEntry, n *int, fn fs.WalkDirFunc) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if *n++; *n > walkMaxEntries {
		return errWalkBound
	}
	if err := fn(p, d, nil); err != nil || !d.IsDir() {
		if err != nil && d.IsDir() && errors.Is(err, filepath.SkipDir) {
			return nil
		}
		return err
	}
	entries, err := fsy.ReadDir(p)
	if err != nil {
		if err := fn(p, d, err); err != nil {
			if errors.Is(err, filepath.SkipDir) {
				return nil
			}
			return err
		}
	}
	for _, e := range entries {
		if err := walkDir(ctx, fsy, filepath.Join(p, e.Name()), e, n, fn); err != nil {
			if errors.Is(err, filepath.SkipDir) {
				// A SkipDir from a file skips the rest of its directory.
				return nil
			}
			return err
		}
	}
	return nil
}

// walkBoundNote is the line a result ends with when its walk was cut.
func walkBoundNote() string {
	return fmt.Sprintf("[stopped after visiting %d entries; narrow the path or pattern]\n", walkMaxEntries)
}

// canceled is the result of a call whose run was canceled.
func canceled(what string) Result { return Errorf("%s: canceled", what) }
