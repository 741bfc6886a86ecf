package tool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/reinsdev/reins/internal/protect"
)

// OutsideWorkspaceError is the refusal of a path that leaves the workspace
// in a mode that keeps tools inside it.
type OutsideWorkspaceError struct {
	// Path is the path as the model gave it.
	Path string
}

func (e *OutsideWorkspaceError) Error() string {
	return fmt.Sprintf("path %q is outside the workspace", e.Path)
}

// maxLinks bounds symlink hops while resolving one path, like the kernel's
// ELOOP limit, so a link cycle is an error rather than a hang.
const maxLinks = 255

// Resolve turns a model-given path into an absolute, cleaned path: relative
// paths are relative to the workspace, and "" is the workspace itself.
//
// In read-only and workspace-write modes the path must stay inside the
// workspace. The check is made on the real location, with the symlinks of
// every existing component resolved (a missing tail is taken as written), so
// neither "../", an absolute path, nor a symlink inside the workspace that
// points out of it (dangling or not) gets past it. full-access lifts the
// bound.
//
// The returned path is the lexical one, not the resolved one, so results
// can name files relative to the workspace as the model knows it.
func (env *Env) Resolve(path string) (string, error) {
	if env.Workspace == "" {
		return "", errors.New("no workspace directory is set")
	}
	ws := filepath.Clean(env.Workspace)
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(ws, abs)
	}
	abs = filepath.Clean(abs)
	if env.Permission == FullAccess {
		return abs, nil
	}
	realWS, err := realPath(ws)
	if err != nil {
		return "", fmt.Errorf("cannot resolve the workspace: %w", err)
	}
	real, err := realPath(abs)
	if err != nil {
		return "", fmt.Errorf("cannot resolve path %q: %w", path, err)
	}
	if !within(realWS, real) {
		return "", &OutsideWorkspaceError{Path: path}
	}
	return abs, nil
}

// within reports whether p is root or below it; both are clean and absolute.
func within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

// realPath resolves the symlinks of p (absolute and clean) component by
// component, like filepath.EvalSymlinks, except that a missing component
// ends the walk and the rest is appended as written: a path about to be
// created still has a real location to check. A dangling symlink is followed
// to where it points, since writing through it would create its target.
func realPath(p string) (string, error) {
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

// display names abs for the model: relative to the workspace (with forward
// slashes) when inside it, absolute otherwise.
func (env *Env) display(abs string) string {
	rel, err := filepath.Rel(filepath.Clean(env.Workspace), abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return filepath.ToSlash(rel)
}

// ProtectedPathError is the refusal by write and edit of a path that the
// protected list covers (.git/hooks, .git/config, .reins, .claude,
// .mcp.json and config sandbox.protect): code planted there would run
// later, outside any sandbox.
type ProtectedPathError struct {
	// Path is the path as the model gave it; Protected the list entry that
	// covers it.
	Path, Protected string
}

func (e *ProtectedPathError) Error() string {
	return fmt.Sprintf("path %q is protected (%s is on the protected list; change it yourself outside reins)", e.Path, filepath.ToSlash(e.Protected))
}

// checkProtected refuses abs (the lexical path Resolve returned for the
// model's path) when a protected path covers it, as written or with its
// symlinks resolved (a link in the workspace to .git/hooks is no way
// around it). full-access is not confined and is not checked.
func (env *Env) checkProtected(path, abs string) error {
	if env.Permission == FullAccess {
		return nil
	}
	list := protect.List(env.Protect)
	ws := filepath.Clean(env.Workspace)
	cands := []string{}
	if rel, err := filepath.Rel(ws, abs); err == nil {
		cands = append(cands, rel)
	}
	if realWS, err := realPath(ws); err == nil {
		if real, err := realPath(abs); err == nil {
			if rel, err := filepath.Rel(realWS, real); err == nil {
				cands = append(cands, rel)
			}
		}
	}
	for _, rel := range cands {
		if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if p := protect.Match(rel, list); p != "" {
			return &ProtectedPathError{Path: path, Protected: p}
		}
	}
	return nil
}
