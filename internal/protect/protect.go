// Package protect names the paths inside a workspace that no confined
// process and no file tool may change: the places where code planted by a
// hostile model would run later, outside any sandbox (git hooks and git
// config, reins's and Claude Code's project folders, an MCP server list).
//
// It is a leaf: the sandbox makes these read-only for every process it
// starts, and the write and edit tools refuse them, from this one list.
package protect

import (
	"path/filepath"
	"strings"
)

// Builtin are the protected paths every workspace has, relative to the
// workspace root (SPEC §12). Config sandbox.protect adds to them.
var Builtin = []string{
	".git/hooks",
	".git/config",
	".reins",
	".claude",
	".mcp.json",
}

// List is a workspace's protected paths: the built-in ones and the extra
// ones the config names, each relative to the workspace and cleaned.
func List(extra []string) []string {
	out := make([]string, 0, len(Builtin)+len(extra))
	out = append(out, Builtin...)
	for _, e := range extra {
		e = filepath.Clean(filepath.FromSlash(e))
		if e == "." || e == "" || filepath.IsAbs(e) || e == ".." || strings.HasPrefix(e, ".."+string(filepath.Separator)) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Match reports which protected path covers rel, a path relative to the
// workspace root (cleaned, not leaving it), or "" when none does. A
// protected path covers itself and everything below it. The comparison
// ignores case on the first component's ".git" so that a case-insensitive
// file system cannot be used to get around it.
func Match(rel string, list []string) string {
	rel = filepath.Clean(filepath.FromSlash(rel))
	for _, p := range list {
		if within(p, rel) {
			return p
		}
	}
	return ""
}

func within(root, p string) bool {
	root, p = strings.ToLower(root), strings.ToLower(p)
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}
