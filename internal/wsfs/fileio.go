package wsfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sort"
	"syscall"
)

// ErrNotRegular refuses a path that is neither a regular file nor, where a
// directory is wanted, a directory: a FIFO, socket or device can block an
// open or a read forever, or never end.
var ErrNotRegular = errors.New("not a regular file")

// OpenRegular opens name with flag (os.O_RDONLY, os.O_RDWR, with O_CREATE
// where a new file is wanted) and returns it only if it is a regular file.
// The open is non-blocking, so a FIFO without a peer cannot hang it, and the
// check is made on the opened file (Fstat), so nothing can be swapped in
// between a check and the open. O_TRUNC is refused here: truncating must
// wait until the file is known to be regular (see ReplaceContent).
func (fsy *FS) OpenRegular(name string, flag int, perm fs.FileMode) (*os.File, fs.FileInfo, error) {
	if flag&os.O_TRUNC != 0 {
		return nil, nil, errors.New("OpenRegular: O_TRUNC is not allowed")
	}
	// A quick look first: opening some devices has effects of its own.
	if fi, err := fsy.Stat(name); err == nil && !fi.Mode().IsRegular() {
		return nil, nil, ErrNotRegular
	}
	f, err := fsy.OpenFile(name, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			// A FIFO (made since the look above) with no reader.
			return nil, nil, ErrNotRegular
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
		return nil, nil, ErrNotRegular
	}
	return f, fi, nil
}

// errTooLarge skips a file above a search's size bound.
var errTooLarge = errors.New("file too large")

// ReadRegularInto reads the open file f into buf when it is a regular file
// of at most limit bytes.
func ReadRegularInto(f *os.File, buf []byte, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return buf, err
	}
	if !fi.Mode().IsRegular() {
		return buf, ErrNotRegular
	}
	if fi.Size() > limit {
		return buf, errTooLarge
	}
	if int64(cap(buf)) < fi.Size()+1 {
		buf = make([]byte, 0, fi.Size()+1)
	}
	return ReadAllInto(buf, f, limit)
}

// ReadAllInto reads f into buf (up to limit bytes).
func ReadAllInto(buf []byte, f io.Reader, limit int64) ([]byte, error) {
	for int64(len(buf)) <= limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// ReplaceContent makes data the whole content of the regular file f.
func ReplaceContent(f *os.File, data []byte) error {
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
