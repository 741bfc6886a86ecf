package tool

import (
	"errors"
	"io/fs"
	"os"
	"sort"
	"syscall"
)

// errNotRegular refuses a path that is neither a regular file nor, where a
// directory is wanted, a directory: a FIFO, socket or device can block an
// open or a read forever, or never end.
var errNotRegular = errors.New("not a regular file")

// openRegular opens name with flag (os.O_RDONLY, os.O_RDWR, with O_CREATE
// where a new file is wanted) and returns it only if it is a regular file.
// The open is non-blocking, so a FIFO without a peer cannot hang it, and the
// check is made on the opened file (Fstat), so nothing can be swapped in
// between a check and the open. O_TRUNC is refused here: truncating must
// wait until the file is known to be regular (see truncate).
func openRegular(fsy *fsys, name string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	if flag&os.O_TRUNC != 0 {
		return nil, nil, errors.New("openRegular: O_TRUNC is not allowed")
	}
	// A quick look first: opening some devices has effects of its own.
	if fi, err := fsy.Stat(name); err == nil && !fi.Mode().IsRegular() {
		return nil, nil, errNotRegular
	}
	f, err := fsy.OpenFile(name, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			// A FIFO (made since the look above) with no reader.
			return nil, nil, errNotRegular
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, errNotRegular
	}
	return f, fi, nil
}

// replaceContent makes data the whole content of the regular file f.
func replaceContent(f *os.File, data []byte) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt(data, 0)
	return err
}

// sortEntries sorts directory entries by name, as os.ReadDir does.
func sortEntries(es []fs.DirEntry) {
	sort.Slice(es, func(i, j int) bool { return es[i].Name() < es[j].Name() })
}
