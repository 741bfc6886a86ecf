// Package private keeps reins's own state readable by its owner only:
// $REINS_HOME and the folders below it that reins makes are 0700, the
// files it writes there (session logs, the host log, the trust list) 0600.
// A session log holds every prompt, every file the agent read and every
// tool output, so a group- or world-readable one leaks the whole
// conversation to every account of the machine.
//
// Modes are not left to the umask: a folder or file reins creates is made
// with at most the private mode (a umask can only take bits away), and one
// that exists with more (made by an older reins, or by hand) is tightened
// when reins opens it. Tightening costs one stat at open, and a chmod only
// when something was looser; nothing is paid per write.
package private

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The modes of reins's own folders and files.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// MkdirAll makes dir, and any missing parent, with DirMode, and tightens
// dir itself to DirMode when it already exists with group or other bits.
// Parents that existed are left as they are (they may be the user's own
// folders); the caller tightens the ones that are reins's (Home).
func MkdirAll(dir string) error {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return err
	}
	return tighten(dir, DirMode)
}

// Mkdir makes dir with DirMode; an existing dir is tightened. Its parent
// must exist.
func Mkdir(dir string) error {
	if err := os.Mkdir(dir, DirMode); err == nil || !errors.Is(err, fs.ErrExist) {
		return err
	}
	return tighten(dir, DirMode)
}

// Dir tightens the existing folder dir to DirMode.
func Dir(dir string) error { return tighten(dir, DirMode) }

// Home makes $REINS_HOME (MkdirAll) — but never tightens the user's home
// folder or the root, should REINS_HOME name one of them: those are not
// reins's to change, and the folders reins makes below them are private
// anyway.
func Home(home string) error {
	if err := os.MkdirAll(home, DirMode); err != nil {
		return err
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return err
	}
	if abs == string(filepath.Separator) {
		return nil
	}
	if u, err := os.UserHomeDir(); err == nil {
		if ua, err := filepath.Abs(u); err == nil && ua == abs {
			return nil
		}
	}
	return tighten(abs, DirMode)
}

// File tightens the open file f to FileMode when its mode has any bit
// beyond it (one fstat; a fchmod only then).
func File(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&^FileMode == 0 {
		return nil
	}
	return f.Chmod(fi.Mode().Perm() & FileMode)
}

// tighten takes the bits beyond want off path (a symlink's target: a
// ~/.reins that links to another disk is still reins's home).
func tighten(path string, want fs.FileMode) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&^want == 0 {
		return nil
	}
	err = os.Chmod(path, fi.Mode().Perm()&want)
	if errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) {
		// Not reins's to change here: a reins child sees its home as
		// the sandbox's read-only mask (only its own state folders are
		// writable), and a folder another user owns keeps its mode.
		return nil
	}
	return err
}
