//go:build !linux

package wsfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Off Linux a walk holds each directory as an os.Root (nil in full-access
// mode): files in it are opened by name relative to it (one step beneath
// the workspace), not by path. tree_linux.go has the cheaper form.

// dirH is an open directory of a walk.
type dirH struct {
	root *os.Root // nil in full-access mode
	abs  string
	fsy  *FS
}

// openDir opens the directory abs (the start of a walk) beneath the
// workspace.
func (f *FS) openDir(abs string) (dirH, error) {
	if f.root == nil {
		return dirH{abs: abs, fsy: f}, nil
	}
	sub, err := inRoot(f, abs, f.root.OpenRoot)
	if err != nil {
		return dirH{}, err
	}
	return dirH{root: sub, abs: abs, fsy: f}, nil
}

func (d dirH) close() {
	if d.root != nil {
		d.root.Close()
	}
}

// sub opens the subdirectory name of d; abs is its path.
func (d dirH) sub(name, abs string) (dirH, error) {
	if d.root == nil {
		return dirH{abs: abs, fsy: d.fsy}, nil
	}
	sub, err := d.root.OpenRoot(name)
	if err != nil {
		return dirH{}, err
	}
	return dirH{root: sub, abs: abs, fsy: d.fsy}, nil
}

// list reads d's entries.
func (d dirH) list() ([]dirent, error) {
	var f *os.File
	var err error
	if d.root != nil {
		f, err = d.root.Open(".")
	} else {
		f, err = os.Open(d.abs)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	es, err := f.ReadDir(-1)
	out := make([]dirent, 0, len(es))
	for _, e := range es {
		out = append(out, dirent{name: e.Name(), typ: e.Type()})
	}
	return out, err
}

// open opens the entry name of d for reading, without blocking on a FIFO.
func (d dirH) open(name string) (*os.File, error) {
	if d.root != nil {
		return d.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	return os.OpenFile(filepath.Join(d.abs, name), os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// exists reports whether d has an entry name (a link is not followed).
func (d dirH) exists(name string) bool {
	var err error
	if d.root != nil {
		_, err = d.root.Lstat(name)
	} else {
		_, err = os.Lstat(filepath.Join(d.abs, name))
	}
	return err == nil
}

// readSmall reads the file rel below d (slash-separated) when it is a
// regular file of at most limit bytes, else nil.
func (d dirH) readSmall(rel string, limit int64) []byte {
	f, err := d.open(filepath.FromSlash(rel))
	return readSmallOpened(f, err, limit)
}

// ReadInto reads the file into buf when it is a regular file of at most
// limit bytes.
func (tf File) ReadInto(buf []byte, limit int64) ([]byte, error) {
	f, err := tf.dir.open(tf.Name)
	if err != nil {
		return buf, err // unreadable, or a link out of the workspace
	}
	defer f.Close()
	return ReadRegularInto(f, buf, limit)
}

// Mtime is the file's modification time in nanoseconds.
func (tf File) Mtime() (int64, error) {
	var fi fs.FileInfo
	var err error
	if tf.dir.root != nil {
		fi, err = tf.dir.root.Stat(tf.Name)
	} else {
		fi, err = os.Stat(tf.Abs())
	}
	if err != nil {
		return 0, err
	}
	return fi.ModTime().UnixNano(), nil
}
