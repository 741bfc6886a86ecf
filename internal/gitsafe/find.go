package gitsafe

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Repo is one repository control folder found in a workspace.
type Repo struct {
	// Entry is the `.git` entry, relative to the workspace ("." joined:
	// ".git", "sub/.git").
	Entry string `json:"entry"`
	// File is true when Entry is a `gitdir:` file rather than a folder.
	File bool `json:"file,omitempty"`
	// Dir is the control folder, absolute and resolved: the Entry folder
	// itself, or the target of a `gitdir:` file.
	Dir string `json:"dir,omitempty"`
	// Common is the folder Dir's `commondir` names, absolute and resolved
	// ("" when it names none): git reads the config and hooks there.
	Common string `json:"common,omitempty"`
}

// Limits bound Find's walk.
type Limits struct {
	// Depth is how many folders deep below the workspace a `.git` is
	// looked for: 0 is the workspace's own `.git` only.
	Depth int
	// Entries is how many directory entries the walk reads at most.
	Entries int
}

// DefaultLimits are what the sandbox walks with on every confined call
// (internal/sandbox: the supervisor walks while the container's init
// starts, walkAhead). Measured on the 2-core machine of
// issue 47 while seven other builds ran (load average 20-40), in CPU time
// (BenchmarkFind's cpu-ns/op), on a workspace of 62,000 files in 1,700
// folders (a node_modules of 300 packages, 120 source folders of 100 files
// each, nested repositories at depths 2 and 4): these limits cost 1-3 ms
// a walk and find every `.git` up to 3 folders deep unless more than 2,000
// entries must be read first (node_modules last); the same walk unbounded
// within depth 3 costs 12-16 ms, and the whole tree 45-60 ms. A confined
// /bin/true in that workspace cost +2.2 and +2.9 ms of CPU (median of
// 40 and 60 alternating runs) over adfed3d, against the +3 ms issue 47
// allows; with 4,000 entries it cost +5.7 ms. A repository deeper or past
// the budget is not bound read-only: sandbox.protect can name it
// (docs/sandbox.md).
var DefaultLimits = Limits{Depth: 3, Entries: 2000}

// maxGitFile bounds the `gitdir:` and `commondir` files Find reads.
const maxGitFile = 4096

// describe makes the Repo of the `.git` entry rel of ws, whose type the
// walk read; gitdir reads the entry's `gitdir:` line without following
// symbolic links.
func describe(ws, rel string, typ os.FileMode, gitdir func(rel string) string) Repo {
	r := Repo{Entry: rel}
	abs := filepath.Join(ws, rel)
	switch {
	case typ.IsDir():
		r.Dir = abs
	case typ.IsRegular():
		r.File = true
		target := gitdir(rel)
		if target == "" {
			return r
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(abs), target)
		}
		r.Dir = resolved(target)
	default:
		r.File = true // a symbolic link or anything else: no Dir
		return r
	}
	if r.Dir == "" {
		return r
	}
	if c := readFile(filepath.Join(r.Dir, "commondir")); c != "" {
		if !filepath.IsAbs(c) {
			c = filepath.Join(r.Dir, c)
		}
		if c = resolved(c); c != r.Dir {
			r.Common = c
		}
	}
	return r
}

// gitdirLine is the value of the `gitdir:` line that begins r.
func gitdirLine(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, maxGitFile))
	line, _, _ := bytes.Cut(b, []byte("\n"))
	v, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "gitdir:")
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

// readFile is the first line of the file at path (a control folder's
// `commondir`), or "".
func readFile(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, maxGitFile))
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strings.TrimSpace(string(line))
}

// resolved is path absolute with its symbolic links resolved, or "" when
// it does not exist.
func resolved(path string) string {
	r, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	r, err = filepath.Abs(r)
	if err != nil {
		return ""
	}
	return r
}
