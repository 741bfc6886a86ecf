//go:build linux

package wsfs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// On Linux a walk holds each directory as a bare descriptor and does every
// step from it with one openat/fstatat of a single name with O_NOFOLLOW:
// a name from a directory listing has no "/" and is never "." or "..", so
// with symlinks refused no step can leave the directory, and the walk stays
// beneath the workspace as the os.Root walk does (FS). It is that walk
// made cheap: a directory read through an os.Root stats every entry (the
// listing's own type is not trusted for a Root's file), and reopening each
// directory as a Root took two opens where one is enough. Symlinked files
// are the exception: they are opened through the workspace's os.Root by
// path, which follows links only while they stay inside.

// dirH is an open directory of a walk.
type dirH struct {
	fd  int
	abs string
	fsy *FS
}

// openDir opens the directory abs (the start of a walk) beneath the
// workspace.
func (f *FS) openDir(abs string) (dirH, error) {
	if f.root == nil {
		fd, err := openat(unix.AT_FDCWD, abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
		if err != nil {
			return dirH{}, &fs.PathError{Op: "open", Path: abs, Err: err}
		}
		return dirH{fd: fd, abs: abs, fsy: f}, nil
	}
	rf, err := inRoot(f, abs, f.root.Open)
	if err != nil {
		return dirH{}, err
	}
	defer rf.Close()
	// A descriptor of its own: an os.Root's file would not be read
	// cheaply (see above), and rf is closed here.
	fd, err := openat(int(rf.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return dirH{}, &fs.PathError{Op: "open", Path: abs, Err: err}
	}
	return dirH{fd: fd, abs: abs, fsy: f}, nil
}

func (d dirH) close() { unix.Close(d.fd) }

// sub opens the subdirectory name of d; abs is its path.
func (d dirH) sub(name, abs string) (dirH, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return dirH{}, err
	}
	return dirH{fd: fd, abs: abs, fsy: d.fsy}, nil
}

// openat is unix.Openat, tried again when a signal interrupted it.
func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// direntBufs are getdents buffers, one per walking goroutine at a time.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// errBadDirent is a directory listing the kernel returned malformed.
var errBadDirent = errors.New("malformed directory entry")

// list reads d's entries with getdents64, taking each entry's type from
// the listing (an fstatat only where the file system does not say).
func (d dirH) list() ([]dirent, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []dirent
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		// struct linux_dirent64 { u64 ino; s64 off; u16 reclen; u8 type; char name[]; }
		for off := 0; off < n; {
			if off+19 > n {
				return out, errBadDirent
			}
			reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
			if reclen < 19 || off+reclen > n {
				return out, errBadDirent
			}
			typ := buf[off+18]
			nb := buf[off+19 : off+reclen]
			if i := bytes.IndexByte(nb, 0); i >= 0 {
				nb = nb[:i]
			}
			off += reclen
			if len(nb) == 0 || string(nb) == "." || string(nb) == ".." {
				continue
			}
			name := string(nb)
			mode, known := dtMode(typ)
			if !known {
				var st unix.Stat_t
				if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					continue // gone since the listing
				}
				mode = statMode(st.Mode)
			}
			out = append(out, dirent{name: name, typ: mode})
		}
	}
}

// dtMode is the type bits of a d_type; known is false for DT_UNKNOWN.
func dtMode(t uint8) (mode fs.FileMode, known bool) {
	switch t {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// statMode is the type bits of a stat st_mode.
func statMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	}
	return fs.ModeDevice
}

// exists reports whether d has an entry name (a link is not followed).
func (d dirH) exists(name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// readSmall reads the file rel below d (slash-separated: ".gitignore",
// ".git/info/exclude") when it is a regular file of at most limit bytes,
// else nil. Each step is one name with O_NOFOLLOW; where a step is a
// symlink the file is opened by path through the workspace's root, which
// follows links only while they stay inside.
func (d dirH) readSmall(rel string, limit int64) []byte {
	fd, err := openBeneath(d.fd, rel)
	if err == unix.ELOOP || err == unix.ENOTDIR {
		f, err := d.fsy.OpenFile(filepath.Join(d.abs, filepath.FromSlash(rel)), os.O_RDONLY|unix.O_NONBLOCK, 0)
		return readSmallOpened(f, err, limit)
	}
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	b, err := readFD(fd, nil, limit)
	if err != nil {
		return nil
	}
	return b
}

// openBeneath opens the slash path rel below the directory dirfd for
// reading, one name at a time, refusing symlinks at every step.
func openBeneath(dirfd int, rel string) (int, error) {
	parts := strings.Split(rel, "/")
	fd := dirfd
	for i, p := range parts {
		if p == "" || p == "." || p == ".." {
			if fd != dirfd {
				unix.Close(fd)
			}
			return -1, unix.EINVAL
		}
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i < len(parts)-1 {
			flags |= unix.O_DIRECTORY
		} else {
			flags |= unix.O_NONBLOCK // a FIFO cannot hang the open
		}
		next, err := openat(fd, p, flags)
		if fd != dirfd {
			unix.Close(fd)
		}
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// readFD reads the open descriptor fd into buf when it is a regular file
// of at most limit bytes.
func readFD(fd int, buf []byte, limit int64) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return buf, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return buf, ErrNotRegular
	}
	if st.Size > limit {
		return buf, errTooLarge
	}
	if int64(cap(buf)) < st.Size+1 {
		buf = make([]byte, 0, st.Size+1)
	}
	for int64(len(buf)) <= limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, err
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
	return buf, errTooLarge
}

// ReadInto reads the file into buf when it is a regular file of at most
// limit bytes.
func (tf File) ReadInto(buf []byte, limit int64) ([]byte, error) {
	if tf.Link {
		f, err := tf.dir.fsy.OpenFile(tf.Abs(), os.O_RDONLY|unix.O_NONBLOCK, 0)
		if err != nil {
			return buf, err // a link out of the workspace, or dangling
		}
		defer f.Close()
		return ReadRegularInto(f, buf, limit)
	}
	fd, err := openat(tf.dir.fd, tf.Name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC)
	if err != nil {
		return buf, err
	}
	defer unix.Close(fd)
	return readFD(fd, buf, limit)
}

// Mtime is the file's modification time in nanoseconds (a link's target's,
// when it stays inside the workspace; an error otherwise).
func (tf File) Mtime() (int64, error) {
	if tf.Link {
		fi, err := tf.dir.fsy.Stat(tf.Abs())
		if err != nil {
			return 0, err
		}
		return fi.ModTime().UnixNano(), nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(tf.dir.fd, tf.Name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	return st.Mtim.Nano(), nil
}
