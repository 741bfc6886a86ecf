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
	// The host's /dev, still reachable through this descriptor once the
	// tmpfs covers it: each node is cloned from it when it is needed (a
	// clone never attached is costly to drop, a wait for RCU — so the
	// host's pts is cloned only if a devpts of our own is refused).
	host, err := unix.Open("/dev", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("/dev: %w", err)
	}
	defer unix.Close(host)
	// bind clones the host's /dev/name onto path (an empty file made
	// there first when file): false when the host has no such node.
	bind := func(name, path string, file, recursive bool) (bool, error) {
		flags := uint(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC)
		if recursive {
			flags |= unix.AT_RECURSIVE
		}
		fd, err := unix.OpenTree(host, name, flags)
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("/dev: open_tree %s: %w", name, err)
		}
		defer unix.Close(fd)
		if file {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				return false, fmt.Errorf("/dev: %w", err)
			}
		}
		if err := unix.MoveMount(fd, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return false, fmt.Errorf("/dev: move_mount %s: %w", path, err)
		}
		return true, nil
	}

	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64"); err != nil {
		return false, fmt.Errorf("/dev: %w", err)
	}
	for _, n := range devNodes {
		path := "/dev/" + n
		ok, err := bind(n, path, true, false)
		if err != nil {
			return false, err
		}
		// A node keeps the flags of the host's /dev mount it was cloned
		// from, read-only and nosuid as / already is (buildView): the mode
		// and times of the host's /dev/null stay the host's.
		_ = ok // a host without it: the container has none either
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
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err == nil {
		newPTS = true
		if err := os.Symlink("pts/ptmx", "/dev/ptmx"); err != nil {
			return false, fmt.Errorf("/dev: %w", err)
		}
	} else {
		// The host's, as before (a kernel that refuses devpts in a user
		// namespace).
		if _, err := bind("pts", "/dev/pts", false, true); err != nil {
			return false, err
		}
		if _, err := bind("ptmx", "/dev/ptmx", true, false); err != nil {
			return false, err
		}
	}
	// Nothing more is made in /dev itself; /dev/shm gets its tmpfs next.
	if err := unix.MountSetattr(-1, "/dev", 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return false, fmt.Errorf("/dev: read-only: %w", err)
	}
	return newPTS, nil
}
