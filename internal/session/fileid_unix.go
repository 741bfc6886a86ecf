//go:build unix

package session

import (
	"os"
	"syscall"
)

// fileKey identifies an open file: its device and inode, taken once when
// the log is opened (they cannot change while it is open), so the check
// before each write (Log.checkLocked) is a single stat(2) of the path.
type fileKey struct{ dev, ino uint64 }

// keyOf returns f's key.
func keyOf(f *os.File) (fileKey, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return fileKey{}, err
	}
	return fileKey{uint64(st.Dev), uint64(st.Ino)}, nil
}

// named reports whether path names the file k identifies; a path that
// cannot be stated does not.
func (k fileKey) named(path string) bool {
	var st syscall.Stat_t
	return syscall.Stat(path, &st) == nil && uint64(st.Dev) == k.dev && uint64(st.Ino) == k.ino
}

// fileID is fi's device and inode, as /proc/locks names files.
func fileID(fi os.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), true
}
