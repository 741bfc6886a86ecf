//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The Unix sockets of servers outside the sandbox (tmux, screen, an
// ssh-agent, dbus, docker, an editor's server) are doors out of it: a
// server acts for whoever connects, outside any confinement, and what it
// starts outlives reins (`tmux -L x new-window CMD`). Connecting to a
// pathname socket needs only a path to it: the read-only view does not
// stop connect(2) (the kernel checks write permission on the socket inode,
// not on the mount), Landlock before ABI 9 does not control it, and a
// network namespace only separates abstract sockets.
//
// So the walls are:
//   - the private /tmp, /var/tmp, /dev/shm and /run (container.go), where
//     most such sockets live;
//   - every other named socket the host has when the process starts —
//     listed by the kernel in the supervisor's /proc/net/unix — covered in
//     the container's view by /dev/null, so connect(2) finds no socket
//     there (ECONNREFUSED). That covers sockets in the home folder, the
//     workspace (a git fsmonitor daemon's) or anywhere else, without a walk
//     of the disk;
//   - on Landlock ABI 9 (LANDLOCK_ACCESS_FS_RESOLVE_UNIX), connect(2) and
//     sendmsg(2) to any pathname socket made outside the process's own
//     domain are refused, servers started later included; only the private
//     TMPDIR (the domain proxy's socket) is granted;
//   - abstract sockets: the network namespace and Landlock's scope (ABI 6).
//
// The list is taken when the process starts: a socket a server outside
// binds later, outside the private folders, is covered only by Landlock
// ABI 9 (docs/sandbox.md, Limits).

// maxSocketList bounds how much of /proc/net/unix is read.
const maxSocketList = 16 << 20

// socketListFD is the confine stage's descriptor of the supervisor's
// /proc/net/unix (fd 3 is the report pipe).
const socketListFD = 4

// hostSockets returns the absolute paths of the named sockets in r, the
// text of /proc/net/unix ("Num RefCount Protocol Flags Type St Inode
// Path"; abstract names start with '@', unnamed sockets have no path).
func hostSockets(r io.Reader) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(r, maxSocketList))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	first := true
	for sc.Scan() {
		if first { // the header
			first = false
			continue
		}
		line := sc.Text()
		// Skip the seven fixed fields; the path is the rest (it may hold
		// spaces).
		rest := strings.TrimLeft(line, " ")
		for range 7 {
			i := strings.IndexByte(rest, ' ')
			if i < 0 {
				rest = ""
				break
			}
			rest = strings.TrimLeft(rest[i:], " ")
		}
		if !strings.HasPrefix(rest, "/") {
			continue // unnamed, abstract, or bound by a relative name
		}
		p := filepath.Clean(rest)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out, sc.Err()
}

// maskSockets covers, in the container's view, every path of paths that
// still shows a socket, except those in the private TMPDIR tmp (the domain
// proxy's). It runs last in buildView, so sockets already hidden by a
// private folder or a mask are not found and cost nothing.
func maskSockets(paths []string, tmp string) error {
	tmp = resolved(tmp)
	for _, p := range paths {
		if tmp != "" && within(tmp, p) {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode().Type() != os.ModeSocket {
			continue
		}
		if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				// Removed since the Lstat (a server that ended): no door
				// left to cover. Seen on a shared machine, where another
				// program's socket came and went: the start failed.
				continue
			}
			return fmt.Errorf("mask the socket %s: %w", p, err)
		}
	}
	return nil
}

// openSocketList opens the supervisor's /proc/net/unix for the confine
// stage: read there, from inside a new network namespace, the file would
// list the new namespace's sockets, not the host's.
func openSocketList() (*os.File, error) {
	f, err := os.Open("/proc/self/net/unix")
	if err != nil {
		return nil, fmt.Errorf("cannot list the host's Unix sockets: %w", err)
	}
	return f, nil
}

// readSocketList reads and closes the list the supervisor passed on
// socketListFD.
func readSocketList() ([]string, error) {
	f := os.NewFile(socketListFD, "unix-sockets")
	if f == nil {
		return nil, errors.New("no socket list")
	}
	defer f.Close()
	return hostSockets(f)
}
