//go:build linux

package sandbox

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/reinsdev/reins/internal/gitsafe"
	"golang.org/x/sys/unix"
)

// The .git walls (issue 47, docs/sandbox.md). Git cannot be made half
// writable: a commit renames index.lock onto index, a new `commondir`
// cannot be refused by a bind mount over files that do not exist yet, and
// Landlock has no rules per name. So every repository control folder is
// read-only to a confined process, as Codex does: the workspace's own
// (.git, or the folder its `gitdir:` line names and that folder's
// commondir), and those of nested repositories and submodules that
// gitsafe.Find sees when the container is set up. A repository that does
// not exist yet cannot be bound: one a confined process creates at the
// workspace root is swept by the supervisor when the process ends
// (sweepNewRepo). `sandbox.git: writable` (Policy.GitWritable) turns both
// off.

// maxRepos bounds the repositories bound read-only: each costs a few
// mounts (itself, the folders above it) in the container's setup.
const maxRepos = 128

// writableRepoLimits bound the walk of each `writable` path: its own
// .git and those one folder down (~/src/lib, ~/src/*).
var writableRepoLimits = gitsafe.Limits{Depth: 1, Entries: 1000}

// repoPaths are the paths to bind read-only for repos, the repositories
// found in ws (gitsafe.Find, or the supervisor's walk: walkAhead): each `.git` entry (a folder, or the `gitdir:` file itself so it
// cannot be pointed elsewhere) and the control and common folders it names
// where they lie in a writable path (elsewhere the read-only root covers
// them). A `.git` that is a symbolic link cannot be bound (a mount
// follows it): its target is, when writable.
func repoPaths(ws string, repos []gitsafe.Repo, granted []string) []string {
	if len(repos) > maxRepos {
		repos = repos[:maxRepos]
	}
	var out []string
	for _, r := range repos {
		entry := filepath.Join(ws, r.Entry)
		fi, err := os.Lstat(entry)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if t := resolved(entry); controlFolder(t, ws, granted) {
				out = append(out, t)
			}
			continue
		}
		if !fi.IsDir() && !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, entry)
		for _, d := range []string{r.Dir, r.Common} {
			if d != entry && controlFolder(d, ws, granted) {
				out = append(out, d)
			}
		}
	}
	return out
}

// controlFolder reports whether d, a folder a `.git` file, link or
// commondir names, is to be bound read-only: it lies in a writable path
// (elsewhere the read-only root covers it), it looks like a repository's
// control folder (a HEAD file or an objects folder), and it is neither a
// granted path itself nor holds the workspace — a `gitdir: ..` planted
// in a nested folder must not turn the whole workspace read-only.
func controlFolder(d, ws string, granted []string) bool {
	if d == "" || !coveredBy(d, granted) || within(d, ws) || slices.Contains(granted, d) {
		return false
	}
	if fi, err := os.Lstat(filepath.Join(d, "HEAD")); err == nil && fi.Mode().IsRegular() {
		return true
	}
	fi, err := os.Lstat(filepath.Join(d, "objects"))
	return err == nil && fi.IsDir()
}

// bindReadOnly binds each of paths read-only (recursively) and first makes
// every folder between it and the granted path that holds it a mount point
// of its own, still writable, so that no folder above can be renamed away
// and replaced. A path inside another of paths is covered by it.
func bindReadOnly(paths, granted []string) error {
	slices.SortFunc(paths, func(a, b string) int {
		return cmp.Or(cmp.Compare(strings.Count(a, "/"), strings.Count(b, "/")), strings.Compare(a, b))
	})
	var ro []string
	for _, p := range paths {
		if !coveredBy(p, ro) {
			ro = append(ro, p)
		}
	}
	var parents []string
	seen := map[string]bool{}
	for _, p := range ro {
		top := ""
		for _, g := range granted {
			if within(g, p) && len(g) > len(top) {
				top = g
			}
		}
		if top == "" || top == p {
			continue
		}
		for dir := filepath.Dir(p); dir != top && within(top, dir); dir = filepath.Dir(dir) {
			if !seen[dir] {
				seen[dir] = true
				parents = append(parents, dir)
			}
		}
	}
	slices.SortFunc(parents, func(a, b string) int { return cmp.Compare(strings.Count(a, "/"), strings.Count(b, "/")) })
	for _, dir := range parents {
		if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("protect %s: %w", dir, err)
		}
	}
	for _, p := range ro {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // gone since it was found
			}
			return fmt.Errorf("protect %s: %w", p, err)
		}
		if err := unix.MountSetattr(-1, p, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("protect %s: %w", p, err)
		}
	}
	return nil
}

// maxSweepNames bounds the names the sweep's line lists (a planted config
// may hold thousands of variables).
const maxSweepNames = 16

// sweepNewRepo makes the workspace's .git safe when a confined process
// created it (it did not exist when the process started): a `.git` that
// is a file or a link (it points git at a folder of the process's
// choosing) is removed; a folder is sanitised (gitsafe.Sanitize: hooks,
// config beyond the allowlist, commondir, alternates, rebase and
// sequencer state, submodules' the same). It says what it removed on
// stderr in one line of reins's own words, which reaches the tool result.
func sweepNewRepo(ws string) {
	g := filepath.Join(ws, ".git")
	fi, err := os.Lstat(g)
	if err != nil {
		return
	}
	var removed []string
	if !fi.IsDir() {
		if err := os.RemoveAll(g); err != nil {
			fmt.Fprintf(os.Stderr, "reins sandbox: could not remove .git, made by a confined process: %v\n", errors.Unwrap(err))
			return
		}
		removed = []string{"the .git file or link itself"}
	} else {
		var err error
		removed, err = gitsafe.Sanitize(g)
		if err != nil {
			fmt.Fprintf(os.Stderr, "reins sandbox: the repository this command created (.git) could not be fully sanitised; check it before running git\n")
		}
	}
	if len(removed) > maxSweepNames {
		removed = append(removed[:maxSweepNames], fmt.Sprintf("and %d more", len(removed)-maxSweepNames))
	}
	if len(removed) > 0 {
		fmt.Fprintf(os.Stderr, "reins sandbox: removed from the repository this command created (.git): %s\n", strings.Join(removed, ", "))
	}
}

// safeName is a file name a confined process chose, fit for reins's own
// diagnostics: as is when it is plain (letters, digits, '.', '_', '-'),
// else quoted in ASCII, so no control character or line reaches the tool
// result as if reins had said it.
func safeName(name string) string {
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return strconv.QuoteToASCII(name)
		}
	}
	return name
}

// The workspace's walk runs in the supervisor, beside the confine stage's
// start (issue 47, acceptance 2: a confined start within +3 ms). Made by
// the stage, it was the dearest step of the container's set-up in a large
// workspace (4-5 ms of a 60,000-file tree's 20-odd; BENCHMARKS.md "Issue 47:
// a confined start"), and the supervisor did nothing meanwhile but wait.
// So the supervisor starts the walk before it starts the stage and sends
// what it found on a pipe (repoFD); the walk runs while the stage's
// process is made, its binary loaded and its view begun, and the stage
// reads the list only when it binds the repositories. It is the same walk
// of the same folder, made a few milliseconds earlier and still before
// the program starts: a repository made by an earlier command, however
// recently, is found as before. The stage walks itself whenever the list
// is not for the folder it protects or cannot be read.

// repoFD is the confine stage's descriptor of the supervisor's walk (3 is
// the report pipe, 4 the socket list, 5 the spec).
const repoFD = 6

// maxRepoList bounds the list the stage reads: maxRepos repositories of
// three paths of at most PATH_MAX each, with room to spare.
const maxRepoList = 4 << 20

// repoList is what the supervisor's walk found in Workspace.
type repoList struct {
	Workspace string         `json:"workspace"`
	Repos     []gitsafe.Repo `json:"repos"`
}

// walksAhead reports whether the stage of p binds the workspace's
// repositories read-only, so the supervisor walks it beforehand (the
// conditions of protectWorkspace's walk).
func walksAhead(p Policy) bool {
	return p.Mode == WorkspaceWrite && p.Workspace != "" && !p.GitWritable && wallGit.on()
}

// walkAhead walks ws for repositories in a goroutine and returns the
// pipe's read end, for the stage's repoFD, on which the list comes. The
// write end is closed when the list is written or the reader is gone (a
// stage that never started: EPIPE, not a signal, on a descriptor other
// than 1 and 2).
func walkAhead(ws string) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	go func() {
		defer w.Close()
		repos, _ := gitsafe.Find(ws, gitsafe.DefaultLimits)
		if len(repos) > maxRepos {
			repos = repos[:maxRepos]
		}
		_ = json.NewEncoder(w).Encode(repoList{Workspace: ws, Repos: repos})
	}()
	return r, nil
}

// walkedRepos reads and closes the list on fd (repoFD in the stage): the
// repositories the supervisor found in ws, or ok false when the list is
// not ws's, is too long or cannot be read — the caller walks then.
func walkedRepos(fd uintptr, ws string) (repos []gitsafe.Repo, ok bool) {
	f := os.NewFile(fd, "reins-repos")
	if f == nil {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRepoList+1))
	if err != nil || len(b) > maxRepoList {
		return nil, false
	}
	var l repoList
	if err := json.Unmarshal(b, &l); err != nil || l.Workspace != ws || ws == "" {
		return nil, false
	}
	return l.Repos, true
}
