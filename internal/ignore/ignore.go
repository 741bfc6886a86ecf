// Package ignore matches paths against gitignore-format rule files
// (.gitignore, .ignore, .git/info/exclude) the way ripgrep does, so that the
// grep and glob tools skip what the repository says is not source.
//
// It is its own small matcher rather than a library's because the tools
// must read every rule file through an os.Root of the workspace (no path
// step outside it, issue 26 item 5): the Go gitignore libraries open files
// by name as they walk. This package never touches the file system; the
// walker hands it the bytes.
//
// Semantics (gitignore(5), as ripgrep applies them): blank lines and lines
// starting with # are skipped; a leading ! negates; a trailing / matches
// directories only; a pattern with a / other than at its end is anchored to
// the directory of its file, else it matches a name at any depth; * and ?
// do not cross /; ** as a whole segment crosses any number of them; the last
// matching line of a file wins. Across files the deepest directory's file
// wins, and .ignore beats .gitignore beats info/exclude (ripgrep's order).
package ignore

import (
	"bytes"
	"regexp"
	"strings"
)

// Kind is which sort of rule file a Rules came from; it sets precedence.
type Kind int

const (
	// Exclude is .git/info/exclude: lowest precedence.
	Exclude Kind = iota
	// Gitignore is a .gitignore file.
	Gitignore
	// Dotignore is an .ignore file: highest precedence.
	Dotignore
)

// Rules are the patterns of one rule file.
type Rules struct {
	// Dir is the slash path, relative to the walk's root ("" for the root),
	// of the directory the file applies to.
	Dir  string
	Kind Kind
	pats []pattern
}

type matchHow int

const (
	byBase matchHow = iota
	bySuffix
	byRegexp
)

type pattern struct {
	negate  bool
	dirOnly bool
	// how says which matcher applies: base (a literal name at any depth),
	// suffix (a "*.ext" name at any depth, "*" being the empty suffix) or
	// re.
	how    matchHow
	base   string
	suffix string
	re     *regexp.Regexp
}

// Parse reads the rule file data that applies to the directory dir (a
// slash path relative to the walk's root, "" for the root).
func Parse(data []byte, dir string, kind Kind) *Rules {
	r := &Rules{Dir: dir, Kind: kind}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if p, ok := parseLine(string(bytes.TrimSuffix(line, []byte("\r")))); ok {
			r.pats = append(r.pats, p)
		}
	}
	return r
}

// Len is the number of patterns (0 for an empty or all-comment file).
func (r *Rules) Len() int { return len(r.pats) }

func parseLine(s string) (pattern, bool) {
	if s == "" || s[0] == '#' {
		return pattern{}, false
	}
	s = trimTrailingSpace(s)
	var p pattern
	if s[0] == '!' {
		p.negate = true
		s = s[1:]
	} else if strings.HasPrefix(s, `\!`) || strings.HasPrefix(s, `\#`) {
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") {
		p.dirOnly = true
		s = strings.TrimRight(s, "/")
	}
	if s == "" {
		return pattern{}, false
	}
	anchored := strings.Contains(s, "/")
	s = strings.TrimPrefix(s, "/")
	if !anchored {
		if !strings.ContainsAny(s, `*?[\`) {
			p.base = s
			return p, true
		}
		if rest, ok := strings.CutPrefix(s, "*"); ok && !strings.ContainsAny(rest, `*?[\`) {
			p.how, p.suffix = bySuffix, rest
			return p, true
		}
	}
	expr := translate(s)
	if anchored {
		expr = "^" + expr + "$"
	} else {
		expr = "^(?:.*/)?" + expr + "$"
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return pattern{}, false // a malformed class: git ignores the line too
	}
	p.how, p.re = byRegexp, re
	return p, true
}

// trimTrailingSpace drops trailing spaces that are not escaped by \.
func trimTrailingSpace(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	return s
}

// translate turns a glob into a regular expression body.
func translate(g string) string {
	var b strings.Builder
	segs := strings.Split(g, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		if seg == "**" {
			switch {
			case last && i == 0:
				b.WriteString(".*")
			case last:
				b.WriteString(".*") // "a/**": everything below a
			default:
				b.WriteString("(?:.*/)?") // zero or more whole segments
			}
			continue
		}
		globSegment(&b, seg)
		if !last {
			b.WriteByte('/')
		}
	}
	return b.String()
}

func globSegment(b *strings.Builder, seg string) {
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch c {
		case '*':
			for i+1 < len(seg) && seg[i+1] == '*' {
				i++
			}
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '\\':
			if i+1 < len(seg) {
				i++
				b.WriteString(regexp.QuoteMeta(seg[i : i+1]))
			}
		case '[':
			end := strings.IndexByte(seg[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			if end == 0 { // "[]...]": a ] first is literal
				if e2 := strings.IndexByte(seg[i+2:], ']'); e2 >= 0 {
					end = e2 + 1
				}
			}
			class := seg[i+1 : i+1+end]
			i += end + 1
			b.WriteByte('[')
			if strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^") {
				b.WriteByte('^')
				class = class[1:]
			}
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(class, `\`, `\\`), "[", `\[`))
			b.WriteByte(']')
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
}

// Decision is a rule file's verdict on a path.
type Decision int

const (
	// None: no pattern matched.
	None Decision = iota
	// Ignore: the last matching pattern ignores the path.
	Ignore
	// Include: the last matching pattern was a negation (!pattern).
	Include
)

// Match is r's verdict on path (slash-separated, relative to the walk's
// root, inside r.Dir).
func (r *Rules) Match(path string, isDir bool) Decision {
	rel := path
	if r.Dir != "" {
		var ok bool
		rel, ok = strings.CutPrefix(path, r.Dir+"/")
		if !ok {
			return None
		}
	}
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	for i := len(r.pats) - 1; i >= 0; i-- {
		p := &r.pats[i]
		if p.dirOnly && !isDir {
			continue
		}
		var hit bool
		switch p.how {
		case byRegexp:
			hit = p.re.MatchString(rel)
		case bySuffix:
			hit = strings.HasSuffix(base, p.suffix)
		default:
			hit = base == p.base
		}
		if hit {
			if p.negate {
				return Include
			}
			return Ignore
		}
	}
	return None
}

// Stack is the rule files that apply to one directory of a walk: its
// ancestors' and its own. A Stack is immutable; Push returns a new one, so
// the walkers of sibling directories share their parent's.
type Stack struct {
	parent *Stack
	rules  *Rules
}

// Push returns s with r added (deeper than everything in s). A nil or
// empty r returns s.
func (s *Stack) Push(r *Rules) *Stack {
	if r == nil || r.Len() == 0 {
		return s
	}
	return &Stack{parent: s, rules: r}
}

// Ignored reports whether path (relative to the walk's root) is ignored:
// for each kind, the deepest file with a verdict decides; .ignore's verdict
// comes before .gitignore's, before info/exclude's.
func (s *Stack) Ignored(path string, isDir bool) bool {
	var byKind [3]Decision
	for n := s; n != nil; n = n.parent {
		k := n.rules.Kind
		if byKind[k] != None {
			continue
		}
		byKind[k] = n.rules.Match(path, isDir)
	}
	for k := Dotignore; k >= Exclude; k-- {
		switch byKind[k] {
		case Ignore:
			return true
		case Include:
			return false
		}
	}
	return false
}
