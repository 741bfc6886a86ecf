// Package workspace decides which folders a reins worker may run a
// submitted child in (docs/engine.md, "Workers").
package workspace

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/reinsdev/reins/internal/tool"
)

// Error refuses a child run whose workspace (cwd) a worker does
// not serve. The path is the submitter's, so the message is for the
// worker's host log; the parent sees only the configuration category.
type Error struct {
	Cwd    string
	Reason string
}

func (e *Error) Error() string { return "workspace " + e.Cwd + ": " + e.Reason }

// Check decides whether a worker may run a submitted child in
// cwd. A parent names the child's workspace, and the workspace is what
// `--permission workspace-write` (or read-only) bounds: a task with cwd
// "/" would otherwise make the whole machine the workspace. So unless the
// worker's owner allowed full-access (which lifts the workspace bound
// anyway), cwd must be an absolute path inside one of roots (the worker's
// --cwd and its --root folders), compared after symlinks are resolved,
// so a link inside a root cannot lead out of it.
func Check(cwd string, roots []string, max tool.Permission) error {
	if !filepath.IsAbs(cwd) {
		return &Error{cwd, "not an absolute path"}
	}
	if max == tool.FullAccess {
		return nil
	}
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return &Error{cwd, "not a directory on this worker"}
	}
	for _, root := range roots {
		r, err := filepath.EvalSymlinks(root)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(r, real); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return nil
		}
	}
	return &Error{cwd, fmt.Sprintf("outside the folders this worker serves (%s; reins worker --root DIR adds one)", strings.Join(roots, ", "))}
}
