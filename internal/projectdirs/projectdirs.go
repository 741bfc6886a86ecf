// Package projectdirs is the one rule for which folders' project files
// count for a workspace: the workspace and its parents up to the
// repository root. Instructions, skills and custom commands all use it.
package projectdirs

import (
	"os"
	"path/filepath"
)

// Up returns the workspace cwd and its parents up to the repository root
// (the nearest folder holding .git), nearest first. Without a repository
// above the workspace only the workspace counts. The walk never goes above
// userHome nor past the file system root.
func Up(cwd, userHome string) []string {
	var walk []string
	for dir := cwd; ; {
		walk = append(walk, dir)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return walk
		}
		parent := filepath.Dir(dir)
		if parent == dir || dir == userHome {
			return walk[:1] // no repository root up to the home or file system root
		}
		dir = parent
	}
}
