// Package projectdirs is the one rule for which folders' project files
// count for a workspace: the workspace and its parents up to the
// repository root. Instructions, skills and custom commands all use it.
package projectdirs

import (
	"os"
	"path/filepath"
	"slices"
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

// Folder is one folder of a kind of file (skills, custom commands) that a
// workspace reads: the user's own, or a project folder's.
type Folder struct {
	Dir     string // absolute
	Project string // the project folder it belongs to; "" for the user's own
	Rel     string // Dir relative to Project
}

// Origin is whose the folder's files are: "user" or "project" (the
// Origin values of skills and commands).
func (f Folder) Origin() string {
	if f.Project == "" {
		return "user"
	}
	return "project"
}

// Folders are the folders of one kind in precedence order: user (the
// user's own, absolute paths) first, so a repository cannot replace a
// user's file, then rels below each trusted folder of Up(cwd, userHome),
// nearest first. A project folder that is one listed before it
// (<cwd>/.reins is $REINS_HOME, or the workspace is the home: the user's
// own) is left out. A nil trusted, or no cwd, reads no project folder.
func Folders(user []string, cwd, userHome string, trusted func(dir string) bool, rels []string) []Folder {
	var out []Folder
	for _, d := range user {
		out = append(out, Folder{Dir: d})
	}
	if cwd == "" || trusted == nil {
		return out
	}
	for _, dir := range Up(cwd, userHome) {
		if !trusted(dir) {
			continue
		}
		for _, rel := range rels {
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if slices.ContainsFunc(out, func(f Folder) bool { return sameDir(f.Dir, p) }) {
				continue
			}
			out = append(out, Folder{Dir: p, Project: dir, Rel: rel})
		}
	}
	return out
}

// sameDir reports whether a and b name one directory.
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
