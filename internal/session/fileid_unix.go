//go:build unix

package session

import (
	"os"
	"syscall"
)

// samePath reports whether path still names the open file f. It is
// os.SameFile on raw stat(2) results: two system calls and no allocation.
// err is f's own stat failing; a path that cannot be stated is not f.
func samePath(f *os.File, path string) (bool, error) {
	var open, named syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &open); err != nil {
		return false, err
	}
	if err := syscall.Stat(path, &named); err != nil {
		return false, nil
	}
	return open.Dev == named.Dev && open.Ino == named.Ino, nil
}

// fileID is fi's device and inode, as /proc/locks names files.
func fileID(fi os.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), uint64(st.Ino), true
}
