//go:build !linux

package gitsafe

import (
	"os"
	"path/filepath"
)

// Find walks ws, breadth first and bounded by lim, for `.git` entries: the
// workspace's own and those of nested repositories and submodules. It
// opens every folder through an os.Root of ws, so a symbolic link (or a
// folder swapped for one while the walk runs) never leads it outside;
// symbolic links are not followed at all, and a `.git` that is a symbolic
// link is reported as a File entry with no Dir (it must not be trusted,
// and binding it would bind its target). complete is false when a bound
// stopped the walk before it had seen every folder within Depth.
func Find(ws string, lim Limits) (repos []Repo, complete bool) {
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil, true
	}
	defer root.Close()
	complete = true
	entries := 0
	level := []string{"."}
	for depth := 0; depth <= lim.Depth && len(level) > 0; depth++ {
		var next []string
		for _, dir := range level {
			f, err := root.Open(dir)
			if err != nil {
				continue
			}
			budget := lim.Entries - entries
			if budget <= 0 {
				f.Close()
				return repos, false
			}
			ents, err := f.ReadDir(budget)
			f.Close()
			entries += len(ents)
			if len(ents) == budget && err == nil {
				complete = false
			}
			for _, e := range ents {
				rel := filepath.Join(dir, e.Name())
				if e.Name() == ".git" {
					repos = append(repos, describe(ws, rel, e.Type(), func(rel string) string {
						f, err := root.Open(rel)
						if err != nil {
							return ""
						}
						defer f.Close()
						return gitdirLine(f)
					}))
					continue
				}
				if e.IsDir() && depth < lim.Depth {
					next = append(next, rel)
				}
			}
			if !complete {
				return repos, false
			}
		}
		level = next
	}
	return repos, complete
}
