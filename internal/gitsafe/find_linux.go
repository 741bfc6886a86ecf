//go:build linux

package gitsafe

import (
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// beneath resolves a path below the workspace's descriptor without
// leaving it and without following any symbolic link, so a folder swapped
// for a link while the walk runs leads nowhere (openat2, Linux 5.6; the
// container needs 5.12).
var beneath = unix.OpenHow{
	Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW,
	Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
}

// Find walks ws, breadth first and bounded by lim, for `.git` entries: the
// workspace's own and those of nested repositories and submodules. Every
// folder is opened below a descriptor of ws with openat2 and read with
// getdents (the entry types come from the directory, no stat per entry),
// and no symbolic link is followed; a `.git` that is a symbolic link is
// reported as a File entry with no Dir (it must not be trusted, and
// binding it would bind its target). complete is false when the entry
// budget stopped the walk before it had seen every folder within Depth;
// the repositories found by then are returned.
func Find(ws string, lim Limits) (repos []Repo, complete bool) {
	wsfd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, true
	}
	defer unix.Close(wsfd)
	gitdir := func(rel string) string {
		how := beneath
		fd, err := unix.Openat2(wsfd, rel, &how)
		if err != nil {
			return ""
		}
		f := os.NewFile(uintptr(fd), rel)
		defer f.Close()
		return gitdirLine(f)
	}
	buf := make([]byte, 32<<10)
	entries := 0
	level := []string{"."}
	for depth := 0; depth <= lim.Depth && len(level) > 0; depth++ {
		// First whether each folder of this level holds a `.git` (one
		// openat2 each, mostly ENOENT), then the listings that find the
		// next level: a repository at this depth is found however many
		// entries the folders beside it hold.
		for _, dir := range level {
			if r, ok := probe(wsfd, ws, filepath.Join(dir, ".git"), gitdir); ok {
				repos = append(repos, r)
			}
			entries++
		}
		if depth == lim.Depth {
			break
		}
		var next []string
		for _, dir := range level {
			if entries >= lim.Entries {
				return repos, false
			}
			how := beneath
			how.Flags |= unix.O_DIRECTORY
			fd, err := unix.Openat2(wsfd, dir, &how)
			if err != nil {
				continue
			}
			for {
				n, err := unix.Getdents(fd, buf)
				if err != nil || n <= 0 {
					break
				}
				for off := 0; off < n; {
					// struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name.
					reclen := int(buf[off+16]) | int(buf[off+17])<<8
					typ := buf[off+18]
					name := buf[off+19 : off+reclen]
					if i := bytes.IndexByte(name, 0); i >= 0 {
						name = name[:i]
					}
					off += reclen
					switch string(name) {
					case ".", "..", ".git":
						continue
					}
					entries++
					if typ == unix.DT_UNKNOWN {
						var st unix.Stat_t
						if unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
							typ = unix.DT_DIR
						}
					}
					if typ == unix.DT_DIR {
						next = append(next, filepath.Join(dir, string(name)))
					}
				}
				if entries >= lim.Entries {
					break
				}
			}
			unix.Close(fd)
		}
		// Package trees last: within the budget, the folders beside
		// node_modules are listed before its thousands of entries.
		slices.SortStableFunc(next, func(a, b string) int {
			return cmp.Compare(bulky(a), bulky(b))
		})
		level = next
	}
	return repos, true
}

// probe describes the `.git` at rel below wsfd when there is one (its
// type from the entry itself: a symbolic link is not followed).
func probe(wsfd int, ws, rel string, gitdir func(string) string) (Repo, bool) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: beneath.Resolve}
	fd, err := unix.Openat2(wsfd, rel, &how)
	if err != nil {
		return Repo{}, false
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	unix.Close(fd)
	if err != nil {
		return Repo{}, false
	}
	var mode os.FileMode
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode = os.ModeDir
	case unix.S_IFREG:
	case unix.S_IFLNK:
		mode = os.ModeSymlink
	default:
		mode = os.ModeIrregular
	}
	return describe(ws, rel, mode, gitdir), true
}

// bulky is 1 for a folder inside a package tree (node_modules), else 0.
func bulky(rel string) int {
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		if c == "node_modules" {
			return 1
		}
	}
	return 0
}
