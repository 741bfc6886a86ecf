//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The container's limits (config `sandbox.limits`, issue 47).
//
// Private folders: /tmp, /var/tmp, /run and /dev/shm were a tmpfs each at
// the kernel's default size, half the machine's memory each; what a
// confined process wrote there was pinned in the host's RAM. Now they are
// one tmpfs of Limits.TmpSize bytes (512 MiB by default): each folder is a
// bind of its own subfolder of it, so the four share one budget rather
// than getting a quarter each (a build that needs 400 MiB in /tmp still
// runs) and the total a process can pin is the limit, not four times it.
// Writing past it fails with ENOSPC. Its inodes are bounded too (one per
// 4 KiB of the size), or a flood of empty files would pin kernel memory.
//
// Processes: the container's init (pid 1 of its PID namespace,
// initProgram) counts the processes of the namespace in the container's
// own /proc every pidsPoll and, past Limits.MaxPids, kills them all, says
// so on stderr and ends as the program killed by SIGKILL. Not
// RLIMIT_NPROC: that counts every process of the user, outside the
// container too, and is not a cap on the container. Between two counts a
// fast fork loop can overshoot the cap for a moment; it cannot outrun the
// end: when init exits the kernel forbids new processes in the namespace
// and kills the rest. Where /proc is not the container's own (a kernel
// that refused the mount) the cap is not kept and `reins doctor` says so.
//
// Memory: no cgroup is used (this machine's are v1, without delegation;
// a cgroup v2 delegated to the user is the way to add it), so
// Limits.Memory is not enforced; `reins doctor` says so.

// pidsPoll is how often the container's init counts its processes.
const pidsPoll = 50 * time.Millisecond

// privateMounts gives the private folders that exist their shared tmpfs
// (see above). The tmpfs is mounted on the first of them (/tmp); each
// folder, that one last, is then bound from a subfolder of it, so the
// tmpfs's root with its subfolders is covered and nothing of the others
// shows in /tmp.
func privateMounts(l Limits) error {
	var dirs []string
	for _, d := range privateDirs {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	if !wallTmpLimit.on() {
		// The mutation check's: a tmpfs each, unbounded.
		for _, d := range dirs {
			if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
				return fmt.Errorf("private %s: %w", d, err)
			}
		}
		return nil
	}
	size := l.TmpSize()
	inodes := max(size/4096, 1024)
	top := dirs[0]
	opts := "mode=0700,size=" + strconv.FormatInt(size, 10) + ",nr_inodes=" + strconv.FormatInt(inodes, 10)
	if err := unix.Mount("tmpfs", top, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("private %s: %w", top, err)
	}
	sub := func(d string) string { return filepath.Join(top, strings.ReplaceAll(strings.Trim(d, "/"), "/", "-")) }
	for _, d := range dirs {
		if err := os.Mkdir(sub(d), 0o700); err != nil {
			return fmt.Errorf("private %s: %w", d, err)
		}
		if err := os.Chmod(sub(d), 0o1777); err != nil {
			return fmt.Errorf("private %s: %w", d, err)
		}
	}
	// The folder the tmpfs is mounted on last: its bind covers the rest.
	for _, d := range append(dirs[1:], top) {
		if err := unix.Mount(sub(d), d, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("private %s: %w", d, err)
		}
	}
	return nil
}

// procCounter counts the processes /proc lists, for the container's init
// that does so every pidsPoll for as long as the program runs. It holds
// /proc open and reads its entries into one buffer, so a count allocates
// nothing: os.Open and Readdirnames allocated a File, its 8 KiB directory
// buffer and the names at every poll, and that garbage grew every init's
// heap by about 110 KiB a second until the collector's first run at 4 MiB —
// for each confined child (BENCHMARKS.md, "Issue 47: the container's
// memory").
type procCounter struct {
	fd  int
	buf []byte
}

// newProcCounter opens dir (/proc, or a folder of a test).
func newProcCounter(dir string) (*procCounter, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &procCounter{fd: fd, buf: make([]byte, 8192)}, nil
}

// count is the number of entries whose name starts with a digit 1–9 (the
// processes), or -1 when the folder cannot be read.
func (c *procCounter) count() int {
	if _, err := unix.Seek(c.fd, 0, 0); err != nil {
		return -1
	}
	n := 0
	for {
		got, err := unix.Getdents(c.fd, c.buf)
		if err != nil {
			return -1
		}
		if got <= 0 {
			return n
		}
		// struct linux_dirent64: ino (8), off (8), reclen (2), type (1),
		// then the name.
		for off := 0; off+19 < got; {
			reclen := int(c.buf[off+16]) | int(c.buf[off+17])<<8
			if reclen <= 0 {
				return -1
			}
			if b := c.buf[off+19]; b >= '1' && b <= '9' {
				n++
			}
			off += reclen
		}
	}
}

// close closes the folder.
func (c *procCounter) close() { unix.Close(c.fd) }

// overCap is the line the container's init writes when it ends the
// container for having more than max processes.
func overCap(max int) string {
	return fmt.Sprintf("reins sandbox: more than %d processes in the container (sandbox.limits.pids): every process of it was killed", max)
}
