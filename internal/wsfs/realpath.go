package wsfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds symlink hops while resolving one path, like the kernel's
// ELOOP limit, so a link cycle is an error rather than a hang.
const maxLinks = 255

// Within reports whether p is root or below it; both are clean and absolute.
func Within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

// RealPath resolves the symlinks of p (absolute and clean) component by
// component, like filepath.EvalSymlinks, except that a missing component
// ends the walk and the rest is appended as written: a path about to be
// created still has a real location to check. A dangling symlink is followed
// to where it points, since writing through it would create its target.
func RealPath(p string) (string, error) {
	sep := string(filepath.Separator)
	resolved := filepath.VolumeName(p) + sep
	rest := splitPath(p[len(filepath.VolumeName(p)):])
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case ".":
			continue
		case "..":
			// resolved holds no symlinks, so a lexical step up is exact.
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return filepath.Join(append([]string{next}, rest...)...), nil
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		links++
		if links > maxLinks {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = filepath.VolumeName(target) + sep
			target = target[len(filepath.VolumeName(target)):]
		}
		rest = append(splitPath(target), rest...)
	}
	return resolved, nil
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, string(filepath.Separator)) {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}
