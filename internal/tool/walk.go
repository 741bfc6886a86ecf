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
func walkBounded(ctx context.Context, root string, fn fs.WalkDirFunc) error {
	n := 0
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if n++; n > walkMaxEntries {
			return errWalkBound
		}
		return fn(p, d, err)
	})
}

// walkBoundNote is the line a result ends with when its walk was cut.
func walkBoundNote() string {
	return fmt.Sprintf("[stopped after visiting %d entries; narrow the path or pattern]\n", walkMaxEntries)
}

// canceled is the result of a call whose run was canceled.
func canceled(what string) Result { return Errorf("%s: canceled", what) }
