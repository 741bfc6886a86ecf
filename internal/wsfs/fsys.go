// Package wsfs reaches the files of a workspace without races: in the modes
// that keep tools inside the workspace every open, stat, mkdir and directory
// read goes through an os.Root of it (on Linux the search walk holds bare
// directory descriptors and opens one name at a time with O_NOFOLLOW), so no
// step of any path, whatever is renamed meanwhile, lands outside. It also
// holds the parallel, ignore-aware walk the search tools run on (Walk),
// the regular-file-only opens and reads, and the symlink resolution the
// workspace bound is checked with (RealPath).
package wsfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FS is how a file tool reaches the files of one call.
//
// tool's Env.Resolve checks a path before anything is opened, but a check followed by a
// reopen by name is a race: a process the model started (a background bash
// job, say) can swap a folder for a symlink to outside between the two, and
// reins itself runs unconfined (issue 26 item 5). So in the modes that keep
// tools inside the workspace every open, stat, mkdir and directory read goes
// through an os.Root of the workspace: the kernel resolves each component
// beneath the root (openat with O_NOFOLLOW, symlinks followed by hand and
// refused when they leave it), so no step of any path, whatever is renamed
// meanwhile, lands outside. In full-access mode root is nil and the plain
// os functions are used.
//
// Paths passed in are the lexical absolute paths Env.Resolve returns; results
// keep naming files that way.
type FS struct {
	root *os.Root
	// ws and realWS are the workspace as configured and with its own
	// symlinks resolved: an absolute path the model gave may use either.
	ws, realWS string
}

// New returns the FS of the workspace ws (absolute and clean) for one call;
// close it when the call is done. confined puts every access beneath an
// os.Root of ws; unconfined (full-access mode) uses the plain os functions.
// The error is os.OpenRoot's.
func New(ws string, confined bool) (*FS, error) {
	if !confined {
		return &FS{ws: ws, realWS: ws}, nil
	}
	r, err := os.OpenRoot(ws)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		real = ws
	}
	return &FS{root: r, ws: ws, realWS: real}, nil
}

// Close releases the workspace's os.Root.
func (f *FS) Close() {
	if f.root != nil {
		f.root.Close()
	}
}

// errOutside is returned when a path handed to an FS is lexically outside
// the workspace in a confined mode (Resolve refuses such paths first; this
// is the second wall).
var errOutside = errors.New("path escapes the workspace")

// rel turns the absolute path abs into the name to hand the root.
func (f *FS) rel(abs string) (string, error) {
	for _, base := range []string{f.ws, f.realWS} {
		r, err := filepath.Rel(base, abs)
		if err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return r, nil
		}
	}
	return "", errOutside
}

// inRoot is op(r), r being abs relative to the workspace root (f.root is
// set).
func inRoot[T any](f *FS, abs string, op func(r string) (T, error)) (T, error) {
	r, err := f.rel(abs)
	if err != nil {
		var zero T
		return zero, err
	}
	return op(r)
}

// OpenFile is os.OpenFile beneath the workspace.
func (f *FS) OpenFile(abs string, flag int, perm fs.FileMode) (*os.File, error) {
	if f.root == nil {
		return os.OpenFile(abs, flag, perm)
	}
	return inRoot(f, abs, func(r string) (*os.File, error) { return f.root.OpenFile(r, flag, perm) })
}

// Open opens abs for reading (a file or a directory).
func (f *FS) Open(abs string) (*os.File, error) { return f.OpenFile(abs, os.O_RDONLY, 0) }

// Stat is os.Stat beneath the workspace.
func (f *FS) Stat(abs string) (fs.FileInfo, error) {
	if f.root == nil {
		return os.Stat(abs)
	}
	return inRoot(f, abs, f.root.Stat)
}

// Lstat is os.Lstat beneath the workspace.
func (f *FS) Lstat(abs string) (fs.FileInfo, error) {
	if f.root == nil {
		return os.Lstat(abs)
	}
	return inRoot(f, abs, f.root.Lstat)
}

// MkdirAll is os.MkdirAll beneath the workspace.
func (f *FS) MkdirAll(abs string, perm fs.FileMode) error {
	if f.root == nil {
		return os.MkdirAll(abs, perm)
	}
	r, err := f.rel(abs)
	if err != nil {
		return err
	}
	if r == "." {
		return nil
	}
	return f.root.MkdirAll(r, perm)
}

// Remove is os.Remove beneath the workspace.
func (f *FS) Remove(abs string) error {
	if f.root == nil {
		return os.Remove(abs)
	}
	r, err := f.rel(abs)
	if err != nil {
		return err
	}
	return f.root.Remove(r)
}

// Rename is os.Rename with both ends beneath the workspace.
func (f *FS) Rename(from, to string) error {
	if f.root == nil {
		return os.Rename(from, to)
	}
	a, err := f.rel(from)
	if err != nil {
		return err
	}
	b, err := f.rel(to)
	if err != nil {
		return err
	}
	return f.root.Rename(a, b)
}

// ReadDir reads the directory abs, sorted by name.
func (f *FS) ReadDir(abs string) ([]fs.DirEntry, error) {
	d, err := f.Open(abs)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	es, err := d.ReadDir(-1)
	sortEntries(es)
	return es, err
}
