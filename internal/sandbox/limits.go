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

// countProcs is the number of processes /proc lists, or -1 when it cannot
// be read.
func countProcs() int {
	d, err := os.Open("/proc")
	if err != nil {
		return -1
	}
	defer d.Close()
	n := 0
	for {
		names, err := d.Readdirnames(256)
		for _, name := range names {
			if name != "" && name[0] >= '1' && name[0] <= '9' {
				n++
			}
		}
		if err != nil {
			break
		}
	}
	return n
}

// overCap is the line the container's init writes when it ends the
// container for having more than max processes.
func overCap(max int) string {
	return fmt.Sprintf("reins sandbox: more than %d processes in the container (sandbox.limits.pids): every process of it was killed", max)
}
