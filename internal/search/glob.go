// Package search is the matching behind the grep and glob tools: a
// doublestar glob matcher that cannot be made exponential, and the grep
// engine (a regexp with ripgrep's literal fast path, per-file line
// matching, context and ripgrep's output form, the match cap) that the
// tools run over the files internal/wsfs walks.
package search

import (
	"errors"
	"path"
	"strings"
)

// A small doublestar matcher for glob and grep. Patterns and names use
// forward slashes. Within a segment the syntax is path.Match's (*, ?,
// [class], \ escapes); a segment that is exactly "**" matches zero or more
// whole segments; {a,b} alternatives are expanded first.

// maxBraceExpansions bounds {a,b} expansion so a hostile pattern cannot
// blow up.
const maxBraceExpansions = 1024

// errBadPattern is a malformed glob pattern.
var errBadPattern = errors.New("malformed glob pattern")

// Glob is a compiled pattern: its brace alternatives, split into
// segments, and for each the cheap form it has, if any.
type Glob struct {
	alts  [][]string
	quick []quickGlob
}

// quickGlob is the cheap test of an alternative of the commonest shape,
// "**/SEG": a name at any depth whose last segment matches SEG, where SEG
// is "*" followed by literal text (a suffix test) or any other segment
// pattern (one path.Match of the last segment). A walk tries it on every
// file, so it must not allocate.
type quickGlob struct {
	ok     bool
	suffix string // SEG is "*"+suffix, suffix free of glob syntax
	useSuf bool
	seg    string
}

func quickOf(segs []string) quickGlob {
	if len(segs) != 2 || segs[0] != "**" || segs[1] == "**" {
		return quickGlob{}
	}
	q := quickGlob{ok: true, seg: segs[1]}
	if rest, ok := strings.CutPrefix(segs[1], "*"); ok && !hasMeta(rest) {
		q.useSuf, q.suffix = true, rest
	}
	return q
}

func (q quickGlob) match(name string) bool {
	base := name[strings.LastIndexByte(name, '/')+1:]
	if q.useSuf {
		return strings.HasSuffix(base, q.suffix)
	}
	ok, _ := path.Match(q.seg, base)
	return ok
}

// CompileGlob checks pattern and prepares it for matching.
func CompileGlob(pattern string) (*Glob, error) {
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	m := &Glob{}
	for _, alt := range alts {
		segs := strings.Split(alt, "/")
		for _, s := range segs {
			if _, err := path.Match(s, ""); err != nil {
				return nil, errBadPattern
			}
		}
		m.alts = append(m.alts, segs)
		m.quick = append(m.quick, quickOf(segs))
	}
	return m, nil
}

// Match reports whether the slash-separated name matches the pattern.
func (m *Glob) Match(name string) bool {
	var n []string
	for i, p := range m.alts {
		if q := m.quick[i]; q.ok {
			if q.match(name) {
				return true
			}
			continue
		}
		if n == nil {
			n = strings.Split(name, "/")
		}
		if matchSegments(p, n) {
			return true
		}
	}
	return false
}

// matchSegments reports whether the name segments n match the pattern
// segments p. It runs the pattern as a nondeterministic automaton over the
// name, one segment at a time: state i means "p[:i] has matched so far", and
// a "**" state may stay put on a segment or be skipped without one. That is
// O(len(p)·len(n)) segment matches, where backtracking over the ways to
// split n among several "**" was exponential in their number.
func matchSegments(p, n []string) bool {
	cur := make([]bool, len(p)+1)
	next := make([]bool, len(p)+1)
	cur[0] = true
	skipStars(p, cur)
	for _, seg := range n {
		clear(next)
		alive := false
		for i, on := range cur[:len(p)] {
			if !on {
				continue
			}
			if p[i] == "**" {
				next[i] = true
				alive = true
			} else if ok, _ := path.Match(p[i], seg); ok {
				next[i+1] = true
				alive = true
			}
		}
		if !alive {
			return false
		}
		skipStars(p, next)
		cur, next = next, cur
	}
	return cur[len(p)]
}

// skipStars adds to the state set on every state reachable from it by
// letting "**" segments match nothing. States only move forward, so one
// pass in order is enough.
func skipStars(p []string, on []bool) {
	for i := range p {
		if on[i] && p[i] == "**" {
			on[i+1] = true
		}
	}
}

// expandBraces expands the first top-level {a,b,...} group of pattern and
// recurses on the results. A "{" without a matching "}" is literal text, as
// is a group without a comma.
func expandBraces(pattern string) ([]string, error) {
	open, close, parts := findBraces(pattern)
	if open < 0 {
		return []string{pattern}, nil
	}
	var out []string
	for _, part := range parts {
		sub, err := expandBraces(pattern[:open] + part + pattern[close+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
		if len(out) > maxBraceExpansions {
			return nil, errors.New("glob pattern has too many {} alternatives")
		}
	}
	return out, nil
}

// findBraces finds the first brace group with a top-level comma and
// returns its bounds and alternatives; open is -1 when there is none.
func findBraces(s string) (open, close int, parts []string) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			close, parts := braceGroup(s, i)
			if close < 0 {
				return -1, -1, nil // unbalanced: all literal
			}
			if len(parts) > 1 {
				return i, close, parts
			}
			// {x} without a comma stays literal; look further in.
		}
	}
	return -1, -1, nil
}

// braceGroup scans the group opening at s[open] and returns the index of
// its closing brace (-1 if none) and its top-level alternatives.
func braceGroup(s string, open int) (close int, parts []string) {
	depth, start := 0, open+1
	for j := open; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j, append(parts, s[start:j])
			}
		case ',':
			if depth == 1 {
				parts = append(parts, s[start:j])
				start = j + 1
			}
		}
	}
	return -1, nil
}

// hasMeta reports whether a pattern segment has glob syntax.
func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[{\`) }

// SplitGlob splits pattern into a leading directory part without glob
// syntax and the rest, which keeps at least the last segment: walking can
// start at the directory instead of the workspace root.
func SplitGlob(pattern string) (dir, rest string) {
	segs := strings.Split(pattern, "/")
	i := 0
	for i < len(segs)-1 && !hasMeta(segs[i]) {
		i++
	}
	dir = strings.Join(segs[:i], "/")
	rest = strings.Join(segs[i:], "/")
	if dir == "" && strings.HasPrefix(pattern, "/") {
		dir = "/"
	}
	return dir, rest
}
