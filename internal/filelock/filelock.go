// Package filelock takes an exclusive, non-blocking lock on an open file:
// flock(2) on Unix, LockFileEx on Windows. Both belong to the open file
// and are released by the system when it is closed or its process dies, so
// a crashed holder never keeps anyone out.
package filelock

import (
	"errors"
	"os"
)

// ErrLocked is TryLock's answer when another holder has the lock.
var ErrLocked = errors.New("filelock: held by another")

// TryLock takes the exclusive lock on f at once, or returns ErrLocked when
// another open file (of this process or another) holds it; any other
// error is the system's.
func TryLock(f *os.File) error { return tryLock(f) }
