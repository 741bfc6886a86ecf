package trust

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Gate is the one check every loader of project files makes: it holds
// the trust list as it was when reins started (one read, so every file of
// a start is judged by the same list) and answers, for each project file
// read in a trusted folder, whether its content is the content the user
// approved. Files it refuses are collected; Err reports them, and the
// caller stops instead of running without them (a missing project config
// must not fall back silently to another provider).
type Gate struct {
	cwd     string
	folders []Folder

	mu      sync.Mutex
	refused []Refused
}

// Refused is one project file the Gate did not honour.
type Refused struct {
	// Path is the file as the loader named it (absolute).
	Path string
	// Folder is the trusted folder whose pins were asked (canonical):
	// `reins trust Folder` approves the file.
	Folder string
	State  State
	// Key is the file's pin name in Folder's pins, Digest the digest of
	// the bytes the loader read (Store.PinFiles approves exactly them).
	Key, Digest string
}

// Gate returns the gate of one reins start in cwd, reading the list once.
func (s *Store) Gate(cwd string) (*Gate, error) {
	f, err := s.read()
	if err != nil {
		return nil, err
	}
	return &Gate{cwd: cwd, folders: f.Folders}, nil
}

// Trusted reports whether dir is trusted in the gate's list.
func (g *Gate) Trusted(dir string) bool {
	canon, err := Canonical(dir)
	if err != nil {
		return false
	}
	_, ok := nearest(g.folders, canon)
	return ok
}

// Honour reports whether the project file rel (a path relative to the
// project folder dir, as the loader joined them), whose content the loader
// read, may take effect: dir lies in a trusted folder whose pins hold
// exactly this content for this file. content must be the bytes the loader
// goes on to use, not a second read. A file refused is remembered for Err.
//
// dir is judged by its canonical path, rel as written (a symbolic link
// inside the project folder, say .claude -> ../shared, is pinned by the
// name it is read through, and its content is what counts), which is how
// Scan names the files it pins.
func (g *Gate) Honour(dir, rel string, content []byte) bool {
	p := filepath.Join(dir, rel)
	canon, err := Canonical(dir)
	if err != nil {
		g.refuse(Refused{Path: p, State: StateNew})
		return false
	}
	e, ok := nearest(g.folders, canon)
	if !ok {
		g.refuse(Refused{Path: p, State: StateNew})
		return false
	}
	r := Refused{Path: p, Folder: e.Path}
	sub, err := filepath.Rel(e.Path, canon)
	if err != nil {
		r.State = StateNew
		g.refuse(r)
		return false
	}
	key := path.Join(worktreeHome(filepath.ToSlash(sub)), filepath.ToSlash(rel))
	r.Key, r.Digest = key, Digest(content)
	pin, ok := e.Pins[key]
	switch {
	case e.Pins == nil:
		r.State = StateUnpinned
	case !ok:
		r.State = StateNew
	case pin != r.Digest:
		r.State = StateChanged
	default:
		return true
	}
	g.refuse(r)
	return false
}

func (g *Gate) refuse(r Refused) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !slices.ContainsFunc(g.refused, func(x Refused) bool { return x.Path == r.Path }) {
		g.refused = append(g.refused, r)
	}
}

// Err is an *UnpinnedError naming every file Honour refused, or nil.
func (g *Gate) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.refused) == 0 {
		return nil
	}
	return &UnpinnedError{Cwd: g.cwd, Files: slices.Clone(g.refused)}
}

// UnpinnedError stops a reins start in a trusted folder whose project
// files are not all approved: reins neither uses them nor runs without
// them.
type UnpinnedError struct {
	Cwd   string
	Files []Refused
}

// maxNamed is how many files the message names.
const maxNamed = 5

func (e *UnpinnedError) Error() string {
	var names []string
	for i, f := range e.Files {
		if i == maxNamed {
			names = append(names, fmt.Sprintf("and %d more", len(e.Files)-maxNamed))
			break
		}
		shown := f.Path
		if r, err := filepath.Rel(e.Cwd, f.Path); err == nil {
			shown = r
		}
		names = append(names, Quote(shown)+" ("+string(f.State)+")")
	}
	folder := e.approveIn()
	what := "project files changed since you trusted " + Quote(folder)
	if slices.ContainsFunc(e.Files, func(f Refused) bool { return f.State == StateUnpinned }) {
		what = Quote(folder) + " was trusted before reins pinned project files; its files are not approved"
	}
	return fmt.Sprintf("%s: %s; reins uses them only once you approve them: review them (reins trust --show %s), then run: reins trust %s",
		what, strings.Join(names, ", "), ShellArg(folder), ShellArg(folder))
}

// approveIn is the folder whose `reins trust` approves the files: the
// trusted folder of the first one, unless it lies in a folder a scan does
// not search (node_modules, .git) — then the workspace itself, trusted on
// its own.
func (e *UnpinnedError) approveIn() string {
	f := e.Files[0]
	if f.Folder == "" {
		return e.Cwd
	}
	if rel, err := filepath.Rel(f.Folder, f.Path); err == nil {
		for _, part := range strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/") {
			if slices.Contains(skippedDirs, part) {
				if c, err := Canonical(e.Cwd); err == nil {
					return c
				}
				return e.Cwd
			}
		}
	}
	return f.Folder
}

// worktreeHome maps a folder inside a child's worktree (isolation:
// worktree keeps it at <repo>/.git/reins/worktrees/<id>, a snapshot of the
// repository's working tree) to the same folder of the repository, whose
// pins then judge its files: a reins child there honours exactly the
// content the user approved, and a file the child changed is refused.
func worktreeHome(sub string) string {
	const mark = ".git/reins/worktrees/"
	i := -1
	switch {
	case strings.HasPrefix(sub, mark):
		i = 0
	default:
		if j := strings.Index(sub, "/"+mark); j >= 0 {
			i = j + 1
		}
	}
	if i < 0 {
		return sub
	}
	rest := sub[i+len(mark):] // <id>[/more]
	id, more, _ := strings.Cut(rest, "/")
	if id == "" {
		return sub
	}
	if home := path.Join(sub[:i], more); home != "" {
		return home
	}
	return "."
}
