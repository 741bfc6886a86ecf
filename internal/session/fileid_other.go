//go:build !unix

package session

import "os"

// fileKey identifies an open file by its os.FileInfo, taken once when the
// log is opened.
type fileKey struct{ fi os.FileInfo }

// keyOf returns f's key.
func keyOf(f *os.File) (fileKey, error) {
	fi, err := f.Stat()
	return fileKey{fi}, err
}

// named reports whether path names the file k identifies.
func (k fileKey) named(path string) bool {
	named, err := os.Stat(path)
	return err == nil && os.SameFile(k.fi, named)
}

// fileID has nothing to give where there is no /proc/locks.
func fileID(os.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
