package batch

import (
	"errors"
	"io"
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

// ResultsError is a results file OpenResults cannot use. Usage says the
// command line is at fault (the file is the task file, is locked by
// another batch, or cannot be opened); otherwise the file system failed.
// Msg names the file as `reins batch --out` does.
type ResultsError struct {
	Usage bool
	Msg   string
}

func (e *ResultsError) Error() string { return e.Msg }

// OpenResults opens the results file: truncated for a new batch; for
// resume kept up to its last whole result line, with the tasks it already
// holds left out of todo. The file may not be the task file, and only one
// batch writes it at a time (LockResults): both are usage errors, found
// before anything is written.
func OpenResults(path, taskFile string, resume bool, tasks []Task) (f *os.File, todo []Task, err error) {
	usage := func(msg string) error { return &ResultsError{Usage: true, Msg: msg} }
	failed := func(err error) error { return &ResultsError{Msg: "--out: " + err.Error()} }
	if SameFile(path, taskFile) {
		return nil, nil, usage("--out names the task file " + path + ": the results would replace the tasks")
	}
	flag := os.O_WRONLY | os.O_CREATE
	if resume {
		flag = os.O_RDWR | os.O_CREATE
	}
	// Not O_TRUNC: the file is truncated only once it is ours.
	f, err = os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, nil, usage("--out: " + err.Error())
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, failed(err)
	}
	if !fi.Mode().IsRegular() {
		if resume {
			f.Close()
			return nil, nil, usage("--out " + path + ": --resume needs a regular file")
		}
		return f, tasks, nil // a device or pipe (-o /dev/stdout): nothing to lock or truncate
	}
	if err := LockResults(f); err != nil {
		f.Close()
		if errors.Is(err, ErrResultsInUse) {
			return nil, nil, usage("--out " + path + ": " + err.Error())
		}
		return nil, nil, failed(err)
	}
	if !resume {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, nil, failed(err)
		}
		return f, tasks, nil
	}
	done, good, err := Finished(f)
	if err == nil {
		// A line a kill cut short is dropped; its task runs again.
		err = f.Truncate(good)
	}
	if err == nil {
		_, err = f.Seek(good, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, nil, failed(err)
	}
	for _, t := range tasks {
		if !done[t.ID] {
			todo = append(todo, t)
		}
	}
	return f, todo, nil
}
