package gitsafe

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// maxConfig bounds the config file Sanitize reads; a larger one is
// replaced by defaultConfig.
const maxConfig = 1 << 20

// removedPaths are removed from a created repository whole: what would
// make git read config, objects or hooks from another folder
// (commondir, alternates, a worktree's own config and the linked
// worktrees' own control folders), attributes that route files to
// drivers (info/attributes), and half-done rebases and cherry-picks,
// whose todo lists hold `exec` lines a later `--continue` runs.
var removedPaths = []string{
	"hooks",
	"commondir",
	"objects/info/alternates",
	"objects/info/http-alternates",
	"config.worktree",
	"info/attributes",
	"worktrees",
	"rebase-merge",
	"rebase-apply",
	"sequencer",
}

// maxModules bounds the submodule control folders Sanitize descends
// into (.git/modules/NAME, nested NAME/modules/...): each is a repository
// of its own that `git status` in the parent runs git in.
const (
	maxModules     = 64
	maxModuleDepth = 4
)

// Sanitize makes the control folder dir of a repository that a confined
// process created safe for a trusted git: it removes the hooks, every
// symbolic link at its top, removedPaths, reduces config to the allowlist
// (allowed), and does the same for each submodule's control folder under
// modules/. It works through an os.Root of dir and never follows a
// symbolic link planted inside (a link is removed, not read).
//
// removed names what it removed, as reins's own words: fixed names
// ("hooks", "commondir", "modules/*/config core.fsmonitor") and config
// variable names validated by the parser, never a file name or value of
// the repository's.
func Sanitize(dir string) (removed []string, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	budget := maxModules
	return sanitize(root, "", 0, &budget)
}

func sanitize(root *os.Root, prefix string, depth int, budget *int) ([]string, error) {
	var removed []string
	var errs []error
	say := func(s string) { removed = append(removed, prefix+s) }

	// Symbolic links at the top lead outside (objects, refs, config).
	if f, err := root.Open("."); err == nil {
		ents, _ := f.ReadDir(256)
		f.Close()
		for _, e := range ents {
			if e.Type()&fs.ModeSymlink != 0 {
				if err := root.Remove(e.Name()); err != nil {
					errs = append(errs, err)
				}
				say("a symbolic link")
			}
		}
	}
	for _, p := range removedPaths {
		fi, err := root.Lstat(p)
		if err != nil {
			continue
		}
		if p == "hooks" && fi.IsDir() && onlySamples(root, p) {
			// `git init`'s own sample hooks never run; removed quietly.
			_ = root.RemoveAll(p)
			continue
		}
		if err := root.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		say(p)
	}
	if dropped, err := sanitizeConfig(root); err != nil {
		errs = append(errs, err)
	} else {
		for _, d := range dropped {
			say("config " + d)
		}
	}
	if depth < maxModuleDepth {
		r, err := sanitizeModules(root, "modules", prefix+"modules/*/", depth, budget)
		removed = append(removed, r...)
		errs = append(errs, err)
	}
	return dedupe(removed), errors.Join(errs...)
}

// sanitizeModules sanitizes each control folder below dir of root (a
// folder with a HEAD file; a submodule named a/b lives in modules/a/b).
func sanitizeModules(root *os.Root, dir, prefix string, depth int, budget *int) ([]string, error) {
	fi, err := root.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return nil, nil
	}
	f, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	ents, _ := f.ReadDir(256)
	f.Close()
	var removed []string
	var errs []error
	for _, e := range ents {
		if !e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		if *budget <= 0 {
			break
		}
		*budget--
		sub := path.Join(dir, e.Name())
		if _, err := root.Lstat(path.Join(sub, "HEAD")); err == nil {
			r, err := root.OpenRoot(sub)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			got, err := sanitize(r, prefix, depth+1, budget)
			r.Close()
			removed = append(removed, got...)
			errs = append(errs, err)
			continue
		}
		if depth < maxModuleDepth {
			got, err := sanitizeModules(root, sub, prefix, depth+1, budget)
			removed = append(removed, got...)
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}

// onlySamples reports whether the folder p of root holds nothing but
// regular files named *.sample.
func onlySamples(root *os.Root, p string) bool {
	f, err := root.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	ents, err := f.ReadDir(256)
	if err != nil && err != io.EOF {
		return false
	}
	if len(ents) == 256 {
		return false
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".sample") {
			return false
		}
	}
	return true
}

// sanitizeConfig reduces root's config to the allowlist and returns the
// names of what it dropped. A config that is not a regular file, is too
// large or cannot be read is replaced by defaultConfig.
func sanitizeConfig(root *os.Root) ([]string, error) {
	fi, err := root.Lstat("config")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	replace := func(why string) ([]string, error) {
		if err := root.RemoveAll("config"); err != nil {
			return nil, err
		}
		return []string{"(" + why + "; replaced by git init's)"}, root.WriteFile("config", []byte(defaultConfig), 0o644)
	}
	if !fi.Mode().IsRegular() {
		return replace("not a regular file")
	}
	if fi.Size() > maxConfig {
		return replace("too large")
	}
	f, err := root.Open("config")
	if err != nil {
		return replace("unreadable")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxConfig+1))
	f.Close()
	if err != nil || len(b) > maxConfig {
		return replace("unreadable")
	}
	entries, err := parseConfig(string(b))
	if err != nil {
		return replace("unreadable")
	}
	var kept []entry
	var dropped []string
	for _, e := range entries {
		if keep(e) {
			kept = append(kept, e)
		} else {
			dropped = append(dropped, e.name())
		}
	}
	if len(dropped) == 0 {
		return nil, nil
	}
	// A new file renamed over the old: a hard link planted as config
	// (to a file outside) is replaced, not written through.
	_ = root.RemoveAll("config.reins-tmp")
	tmp, err := root.OpenFile("config.reins-tmp", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	_, err = tmp.WriteString(formatConfig(kept))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove("config.reins-tmp")
		return nil, err
	}
	if err := root.Rename("config.reins-tmp", "config"); err != nil {
		_ = root.Remove("config.reins-tmp")
		return nil, err
	}
	return dedupe(dropped), nil
}

// dedupe keeps the first of each string, in order.
func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
