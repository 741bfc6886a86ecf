//go:build !unix

package session

import "os"

// samePath reports whether path still names the open file f.
func samePath(f *os.File, path string) (bool, error) {
	open, err := f.Stat()
	if err != nil {
		return false, err
	}
	named, err := os.Stat(path)
	if err != nil {
		return false, nil
	}
	return os.SameFile(open, named), nil
}

// fileID has nothing to give where there is no /proc/locks.
func fileID(os.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
