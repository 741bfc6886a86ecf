// Package smallfile reads files that must be small and regular — the
// configuration layers, agent files, the trusted-folder list, mock scripts,
// wrap's META.json — and opens files that must be regular but may be large
// (session logs), which their reader then bounds line by line. A path that
// is /dev/zero, a FIFO or a multi-gigabyte file must be refused by name, not
// read until memory runs out or block forever.
package smallfile

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Limit is the size cap on a configuration, agent or trust file: far
// above any real one, far below what could hurt.
const Limit = 1 << 20

// Error says why the file Path was refused.
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string { return e.Path + ": " + e.Reason }

// Open opens the regular file path with flag (os.O_RDONLY, os.O_RDWR|
// os.O_APPEND, ...) and refuses anything else with an *Error: a symlink to
// /dev/zero, a FIFO, a directory. The open is non-blocking, so a FIFO
// without a writer cannot hang it; on a regular file O_NONBLOCK changes
// nothing. It is for files that may be large (a session log) and are read
// with their own bound; Read is for files that must be small.
func Open(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &Error{path, "not a regular file"}
	}
	return f, nil
}

// Read returns the content of the regular file path, refusing anything
// else or anything larger than max bytes. The open is non-blocking (a FIFO
// without a writer cannot hang it), the check is made on the opened file
// (so nothing can be swapped in after a stat), and the read goes through a
// limit in case the file grows after the check. Errors from opening are
// returned as they are, so fs.ErrNotExist still reads as missing.
func Read(path string, max int64) ([]byte, error) {
	f, err := Open(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, &Error{path, "larger than " + size(max)}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > max {
		return nil, &Error{path, "larger than " + size(max)}
	}
	return b, nil
}

// size writes n bytes for a message: whole MiB when it is.
func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
