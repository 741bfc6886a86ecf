package batch

import (
	"errors"
	"os"

	"github.com/reinsdev/reins/internal/filelock"
)

// ErrResultsInUse is returned by LockResults when another batch holds the
// results file: two writers of one file interleave their lines (a batch
// and a --resume of it started a second later left corrupt lines and lost
// ids), so the second is refused before it writes anything.
var ErrResultsInUse = errors.New("in use by another reins batch")

// LockResults takes the results file f for this batch: an exclusive lock
// held until f is closed, refused at once (ErrResultsInUse) when another
// batch holds it. It must come before the file is truncated or read for
// --resume, so that nothing the other batch writes is lost.
func LockResults(f *os.File) error {
	err := filelock.TryLock(f)
	if errors.Is(err, filelock.ErrLocked) {
		return ErrResultsInUse
	}
	return err
}

// SameFile reports whether paths a and b name one existing file (the same
// path, a symlink or a hard link to it): `reins batch -o tasks.jsonl
// tasks.jsonl` would replace the tasks with their results.
func SameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
