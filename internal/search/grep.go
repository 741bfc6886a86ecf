package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/reinsdev/reins/internal/lazy"
)

// maxLineLen cuts a reported line, so minified files stay readable.
const maxLineLen = 500

// MaxFileSize is the largest file grep searches: huge files (generated
// data, logs) are skipped. apply_patch edits files up to it.
const MaxFileSize = 16 << 20

// Mode is grep's output_mode: what the entries of its output are.
type Mode string

const (
	// Content is the matching lines (and context), ripgrep's form.
	Content Mode = "content"
	// FilesWithMatches is the paths of the files that match.
	FilesWithMatches Mode = "files_with_matches"
	// Count is "path:count" per file that matches.
	Count Mode = "count"
)

// ErrEnough stops a walk once the match cap is reached.
var ErrEnough = errors.New("enough matches")

// fileTypes are grep's type names, a small part of ripgrep's list: the
// file name globs of each.
var fileTypes = lazy.Value[map[string][]string]{New: func() map[string][]string {
	return map[string][]string{
		"go": {"*.go"}, "js": {"*.js", "*.mjs", "*.cjs", "*.jsx"}, "ts": {"*.ts", "*.tsx", "*.mts", "*.cts"},
		"py": {"*.py", "*.pyi"}, "rust": {"*.rs"}, "java": {"*.java"}, "c": {"*.c", "*.h"},
		"cpp": {"*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"}, "md": {"*.md", "*.markdown"},
		"markdown": {"*.md", "*.markdown"}, "json": {"*.json"}, "yaml": {"*.yaml", "*.yml"}, "toml": {"*.toml"},
		"sh": {"*.sh", "*.bash"}, "html": {"*.html", "*.htm"}, "css": {"*.css", "*.scss", "*.sass", "*.less"},
		"ruby": {"*.rb"}, "rb": {"*.rb"}, "php": {"*.php"}, "swift": {"*.swift"}, "kotlin": {"*.kt", "*.kts"},
		"sql": {"*.sql"}, "proto": {"*.proto"}, "txt": {"*.txt"}, "csharp": {"*.cs"}, "cs": {"*.cs"},
		"scala": {"*.scala"}, "lua": {"*.lua"}, "zig": {"*.zig"}, "make": {"Makefile", "*.mk", "makefile", "GNUmakefile"},
	}
}}

// Filter decides from a path (slash, below the searched directory)
// whether grep searches it.
type Filter func(rel string) bool

// NewFilter is the filter of grep's glob and type arguments (nil when both
// are empty: every file is searched), and whether the glob names a hidden
// entry, which lets the walk into hidden entries.
func NewFilter(glob, typ string) (Filter, bool, error) {
	var fs []Filter
	hidden := false
	if glob != "" {
		g := filepathToSlash(glob)
		neg := strings.HasPrefix(g, "!")
		g = strings.TrimPrefix(g, "!")
		m, err := CompileGlob(g)
		if err != nil {
			return nil, false, fmt.Errorf("bad glob %q: %v", glob, err)
		}
		hidden = NamesHidden(g)
		f := m.Match
		if !strings.Contains(g, "/") {
			f = func(rel string) bool { return m.Match(pathBase(rel)) }
		}
		if neg {
			fs = append(fs, func(rel string) bool { return !f(rel) })
		} else {
			fs = append(fs, f)
		}
	}
	if typ != "" {
		globs, ok := fileTypes.Get()[typ]
		if !ok {
			names := make([]string, 0, len(fileTypes.Get()))
			for n := range fileTypes.Get() {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, false, fmt.Errorf("unknown type %q (known: %s)", typ, strings.Join(names, ", "))
		}
		m, _ := CompileGlob("{" + strings.Join(globs, ",") + "}")
		if len(globs) == 1 {
			m, _ = CompileGlob(globs[0])
		}
		fs = append(fs, func(rel string) bool { return m.Match(pathBase(rel)) })
	}
	if len(fs) == 0 {
		return nil, hidden, nil
	}
	return func(rel string) bool {
		for _, f := range fs {
			if !f(rel) {
				return false
			}
		}
		return true
	}, hidden, nil
}

// NamesHidden reports whether a glob names a hidden entry on purpose (a
// segment starting with a dot), which lets the walk into hidden entries.
func NamesHidden(g string) bool {
	for _, seg := range strings.Split(g, "/") {
		if strings.HasPrefix(seg, ".") && seg != "." && seg != ".." {
			return true
		}
	}
	return false
}

func filepathToSlash(s string) string { return strings.ReplaceAll(s, "\\", "/") }

// Matcher finds the pattern in a file's bytes. A pattern that is a plain
// literal is searched with bytes.Index (ripgrep's literal fast path); the
// regexp confirms a hit on the line for everything else.
type Matcher struct {
	re        *regexp.Regexp
	literal   []byte // set when the whole pattern is this literal
	multiline bool
}

// NewMatcher compiles grep's pattern; the error is the pattern's own.
func NewMatcher(pattern string, ignoreCase, multiline bool) (*Matcher, error) {
	// Files are searched whole, so ^ and $ must mean a line's ends.
	flags := "m"
	if ignoreCase {
		flags += "i"
	}
	if multiline {
		flags += "s"
	}
	expr := "(?" + flags + ")" + pattern
	re, err := regexp.Compile(expr)
	if err != nil {
		// Report the model's own pattern, not our prefixed one.
		if _, err2 := regexp.Compile(pattern); err2 != nil {
			return nil, err2
		}
		return nil, err
	}
	m := &Matcher{re: re, multiline: multiline}
	if prefix, complete := re.LiteralPrefix(); complete && prefix != "" && !ignoreCase {
		m.literal = []byte(prefix)
	}
	return m, nil
}

// Options are what one grep call shows and how many matches it keeps.
type Options struct {
	// Before and After are the context lines around a match (Content).
	Before, After int
	// LineNumbers shows each line's number (Content).
	LineNumbers bool
	Mode        Mode
	// MaxMatches caps the matching lines collected: past it the search
	// stops (ErrEnough) and Stopped says so.
	MaxMatches int64
}

// Grep accumulates the matches of one grep call; File runs on several
// goroutines at once.
type Grep struct {
	ctx        context.Context
	m          *Matcher
	before     int
	after      int
	lineNums   bool
	mode       Mode
	maxMatches int64

	matches atomic.Int64
	stopped atomic.Bool

	mu      sync.Mutex
	results []fileResult
}

// fileResult is what one file gave: its output lines and match count.
type fileResult struct {
	name  string
	lines []string
	count int
}

// NewGrep returns the search of m over the files given to File; ctx ends it.
func NewGrep(ctx context.Context, m *Matcher, o Options) *Grep {
	return &Grep{ctx: ctx, m: m, before: o.Before, after: o.After,
		lineNums: o.LineNumbers, mode: o.Mode, maxMatches: o.MaxMatches}
}

// Stopped reports whether the match cap cut the search.
func (s *Grep) Stopped() bool { return s.stopped.Load() }

// bufPool holds file buffers, so the workers do not allocate per file.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// File searches one file: read fills a buffer with its content (an error
// for a file that is not regular, too large or unreadable, which is
// skipped), name gives the path shown (asked for only when it matches).
// Binary files are skipped.
func (s *Grep) File(name func() string, read func(buf []byte, limit int64) ([]byte, error)) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if s.matches.Load() >= s.maxMatches {
		s.stopped.Store(true)
		return ErrEnough
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf, err := read((*bp)[:0], MaxFileSize)
	*bp = buf[:0]
	if err != nil {
		return nil
	}
	if Binary(buf) {
		return nil
	}
	lines := s.m.matchLines(buf)
	if len(lines) == 0 {
		return nil
	}
	n := s.matches.Add(int64(len(lines)))
	if over := n - s.maxMatches; over > 0 {
		keep := len(lines) - int(over)
		if keep <= 0 {
			s.stopped.Store(true)
			return ErrEnough
		}
		lines = lines[:keep]
	}
	r := fileResult{name: name(), count: len(lines)}
	if s.mode == Content {
		r.lines = s.format(buf, lines, r.name)
	}
	s.mu.Lock()
	s.results = append(s.results, r)
	s.mu.Unlock()
	if n >= s.maxMatches {
		s.stopped.Store(true)
		return ErrEnough
	}
	return nil
}

// lineSpan is one matching line: its 0-based number and byte range
// (without the newline).
type lineSpan struct {
	n          int
	start, end int
}

// matchLines returns the lines of buf that match, in order.
func (m *Matcher) matchLines(buf []byte) []lineSpan {
	var out []lineSpan
	if m.multiline {
		line, lineStart := 0, 0 // line number at lineStart
		last := -1
		for _, loc := range m.re.FindAllIndex(buf, -1) {
			end := loc[1]
			if end > loc[0] && buf[end-1] == '\n' {
				end--
			}
			for p := loc[0]; ; {
				ls := bytes.LastIndexByte(buf[:p], '\n') + 1
				le := bytes.IndexByte(buf[p:], '\n')
				if le < 0 {
					le = len(buf)
				} else {
					le += p
				}
				line += bytes.Count(buf[lineStart:ls], []byte{'\n'})
				lineStart = ls
				if line != last {
					out = append(out, lineSpan{n: line, start: ls, end: le})
					last = line
				}
				if le >= end || le >= len(buf) {
					break
				}
				p = le + 1
			}
		}
		return out
	}
	pos, line, lineStart := 0, 0, 0
	for pos <= len(buf) {
		var at int
		if m.literal != nil {
			at = bytes.Index(buf[pos:], m.literal)
		} else {
			loc := m.re.FindIndex(buf[pos:])
			at = -1
			if loc != nil {
				at = loc[0]
			}
		}
		if at < 0 {
			break
		}
		at += pos
		ls := bytes.LastIndexByte(buf[pos:at], '\n') + 1 + pos
		le := bytes.IndexByte(buf[at:], '\n')
		if le < 0 {
			le = len(buf)
		} else {
			le += at
		}
		// A regexp hit may span lines ([^x] and \s match a newline):
		// the line must match on its own.
		if m.literal != nil || m.re.Match(buf[ls:le]) {
			line += bytes.Count(buf[lineStart:ls], []byte{'\n'})
			lineStart = ls
			out = append(out, lineSpan{n: line, start: ls, end: le})
		}
		pos = le + 1
	}
	return out
}

// format renders a file's matching lines with their context, ripgrep's
// way: "name:N:text" for a match, "name-N-text" for context, "--" between
// groups that do not touch.
func (s *Grep) format(buf []byte, hits []lineSpan, name string) []string {
	if s.before == 0 && s.after == 0 {
		out := make([]string, 0, len(hits))
		for _, h := range hits {
			out = append(out, s.line(name, h.n, ':', buf[h.start:h.end]))
		}
		return out
	}
	// Line starts of the whole file, for the context lines.
	starts := []int{0}
	for i, c := range buf {
		if c == '\n' && i+1 < len(buf) {
			starts = append(starts, i+1)
		}
	}
	lineAt := func(n int) []byte {
		end := len(buf)
		if n+1 < len(starts) {
			end = starts[n+1] - 1
		}
		return bytes.TrimSuffix(buf[starts[n]:end], []byte("\n"))
	}
	isHit := make(map[int]bool, len(hits))
	for _, h := range hits {
		isHit[h.n] = true
	}
	var out []string
	next := 0 // first line not yet printed
	for i, h := range hits {
		from := max(h.n-s.before, next)
		if i > 0 && from > next {
			out = append(out, "--")
		}
		to := min(h.n+s.after, len(starts)-1)
		for n := from; n <= to; n++ {
			sep := byte('-')
			if isHit[n] {
				sep = ':'
			}
			out = append(out, s.line(name, n, sep, lineAt(n)))
		}
		next = to + 1
	}
	return out
}

func (s *Grep) line(name string, n int, sep byte, text []byte) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte(sep)
	if s.lineNums {
		b.WriteString(strconv.Itoa(n + 1))
		b.WriteByte(sep)
	}
	b.WriteString(TruncateLine(string(bytes.TrimSuffix(text, []byte("\r"))), maxLineLen))
	return b.String()
}

// Entries is the output, files in path order.
func (s *Grep) Entries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sort.Slice(s.results, func(i, j int) bool { return s.results[i].name < s.results[j].name })
	var out []string
	for i, r := range s.results {
		switch s.mode {
		case FilesWithMatches:
			out = append(out, r.name)
		case Count:
			out = append(out, r.name+":"+strconv.Itoa(r.count))
		default:
			if i > 0 && (s.before > 0 || s.after > 0) {
				out = append(out, "--")
			}
			out = append(out, r.lines...)
		}
	}
	return out
}

// pathBase is the last element of a slash-separated path.
func pathBase(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// SniffLen is how much of a file is looked at to tell text from binary.
const SniffLen = 8 << 10

// Binary reports whether the first SniffLen bytes of b hold a NUL byte, the
// mark of a binary file (grep skips it, read refuses it).
func Binary(b []byte) bool { return bytes.IndexByte(b[:min(len(b), SniffLen)], 0) >= 0 }

// TruncateLine cuts s to at most n bytes on a UTF-8 boundary, marking the
// cut: a line shown to the model (grep's, read's) stays readable however
// long it is.
func TruncateLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " … [line truncated]"
}
