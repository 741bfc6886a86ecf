package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNotFound is returned by Resolve when no session id starts with the
// prefix.
var ErrNotFound = errors.New("no such session")

// AmbiguousError is returned by Resolve when several session ids start with
// the prefix.
type AmbiguousError struct {
	Prefix     string
	Candidates []string // sorted; at most maxCandidates
	More       int      // how many more matched
}

const maxCandidates = 10

func (e *AmbiguousError) Error() string {
	s := fmt.Sprintf("session id prefix %q is ambiguous: %s", e.Prefix, strings.Join(e.Candidates, ", "))
	if e.More > 0 {
		s += fmt.Sprintf(" and %d more", e.More)
	}
	return s
}

// Resolve finds the session of dir (a sessions directory) whose id is
// prefix or, failing that, the only one that starts with prefix.
func Resolve(dir, prefix string) (string, error) {
	if prefix == "" || strings.ContainsAny(prefix, `/\`) || prefix == "." || prefix == ".." {
		return "", ErrNotFound
	}
	if fi, err := os.Stat(filepath.Join(dir, prefix, FileName)); err == nil && fi.Mode().IsRegular() {
		return prefix, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", ErrNotFound
		}
		return "", err
	}
	var match []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), FileName)); err == nil {
				match = append(match, e.Name())
			}
		}
	}
	return onlyMatch(prefix, match, maxCandidates)
}

// onlyMatch is the one of match that prefix names: ErrNotFound for none,
// an *AmbiguousError naming at most most of them (sorted; every one when
// most is 0) for more.
func onlyMatch(prefix string, match []string, most int) (string, error) {
	switch len(match) {
	case 0:
		return "", ErrNotFound
	case 1:
		return match[0], nil
	}
	sort.Strings(match)
	ae := &AmbiguousError{Prefix: prefix, Candidates: match}
	if most > 0 && len(match) > most {
		ae.Candidates, ae.More = match[:most], len(match)-most
	}
	return "", ae
}
