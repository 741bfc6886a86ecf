//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The container's /dev (issue 47). The host's /dev is a devtmpfs holding
// every device the kernel knows: disks (/dev/vda, /dev/loop0 — the disk
// under the hidden credential files and $REINS_HOME), /dev/mem, /dev/kmsg,
// /dev/fuse, consoles. Bound read-only it was still a door: a device
// node's mode is its owner's business, and root inside — or a user in the
// disk group — reads a raw disk around every mask of the view.
//
// So the container gets a /dev of its own: a small tmpfs (nosuid, nodev,
// noexec; read-only once built) holding only
//   - the character devices every program expects — null, zero, full,
//     random, urandom and tty — each the host's node bound on an empty
//     file (a bind mount of one device is not affected by the tmpfs's
//     nodev: it is a mount of its own, the host's device mount's);
//   - pts/, a new devpts instance (the container's own pseudo-terminals:
//     `script`, python's pty, expect work, and no terminal of the host is
//     there), with ptmx a link to pts/ptmx; where the kernel refuses a new
//     instance, the host's /dev/pts and /dev/ptmx are bound instead;
//   - shm/, the private tmpfs (privateDirs);
//   - the links fd, stdin, stdout and stderr into /proc/self/fd.
//
// Nothing else of the host's devtmpfs is there: a path to a disk is
// ENOENT.

// devNodes are the host's character devices the container's /dev shows.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// devLinks are the symbolic links of the container's /dev.
var devLinks = [][2]string{
	{"fd", "/proc/self/fd"},
	{"stdin", "/proc/self/fd/0"},
	{"stdout", "/proc/self/fd/1"},
	{"stderr", "/proc/self/fd/2"},
}

// freshDev replaces /dev with the container's own (see above). It runs in
// buildView after / is read-only and before the private folders, one of
// which (/dev/shm) it makes the mount point of. newPTS reports whether
// pts/ is a new devpts instance (the container's own terminals, which
// Landlock may then let it open read-write).
func freshDev() (newPTS bool, err error) {
	// Copies of the host's nodes, taken before the tmpfs hides them.
	var nodes []detached
	defer func() {
		for _, d := range nodes {
			if d.fd >= 0 {
				unix.Close(d.fd)
			}
		}
	}()
	for _, n := range devNodes {
		d, err := detach("/dev/"+n, false)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // a host without it: the container has none either
			}
			return false, err
		}
		nodes = append(nodes, d)
	}
	// The host's terminals, used only when a new devpts instance is refused.
	hostPTS, ptsErr := detach("/dev/pts", false)
	if ptsErr == nil {
		defer unix.Close(hostPTS.fd)
	}
	hostPTMX, ptmxErr := detach("/dev/ptmx", false)
	if ptmxErr == nil {
		defer unix.Close(hostPTMX.fd)
	}

	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64"); err != nil {
		return false, fmt.Errorf("/dev: %w", err)
	}
	for i := range nodes {
		d := &nodes[i]
		if err := os.WriteFile(d.path, nil, 0o600); err != nil {
			return false, fmt.Errorf("/dev: %w", err)
		}
		if err := unix.MoveMount(d.fd, "", unix.AT_FDCWD, d.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return false, fmt.Errorf("/dev: move_mount %s: %w", d.path, err)
		}
		unix.Close(d.fd)
		d.fd = -1
		// Each node keeps its own mount's flags, read-only as / is: the
		// mode and times of the host's /dev/null stay the host's.
		if err := unix.MountSetattr(-1, d.path, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC}); err != nil {
			return false, fmt.Errorf("/dev: %s: %w", d.path, err)
		}
	}
	for _, dir := range []string{"/dev/pts", "/dev/shm"} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return false, fmt.Errorf("/dev: %w", err)
		}
	}
	for _, l := range devLinks {
		if err := os.Symlink(l[1], filepath.Join("/dev", l[0])); err != nil {
			return false, fmt.Errorf("/dev: %w", err)
		}
	}
	// Its own terminals: a new devpts instance, whose ptmx is pts/ptmx.
	err = unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
	if err == nil {
		newPTS = true
		if err := os.Symlink("pts/ptmx", "/dev/ptmx"); err != nil {
			return false, fmt.Errorf("/dev: %w", err)
		}
	} else if ptsErr == nil && ptmxErr == nil {
		// The host's, as before (a kernel that refuses devpts in a user
		// namespace).
		hostPTS.path = "/dev/pts"
		if err := unix.MoveMount(hostPTS.fd, "", unix.AT_FDCWD, "/dev/pts", unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return false, fmt.Errorf("/dev: move_mount /dev/pts: %w", err)
		}
		if err := os.WriteFile("/dev/ptmx", nil, 0o600); err != nil {
			return false, fmt.Errorf("/dev: %w", err)
		}
		if err := unix.MoveMount(hostPTMX.fd, "", unix.AT_FDCWD, "/dev/ptmx", unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return false, fmt.Errorf("/dev: move_mount /dev/ptmx: %w", err)
		}
	}
	// Nothing more is made in /dev itself; /dev/shm gets its tmpfs next.
	if err := unix.MountSetattr(-1, "/dev", 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return false, fmt.Errorf("/dev: read-only: %w", err)
	}
	return newPTS, nil
}
