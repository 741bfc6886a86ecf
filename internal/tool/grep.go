package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/reinsdev/reins/internal/llm"
)

const (
	// grepMaxMatches caps the matching lines grep collects (after offset).
	grepMaxMatches = 500
	// grepMaxLineLen cuts a reported line, so minified files stay readable.
	grepMaxLineLen = 500
	// grepMaxFileSize skips huge files (generated data, logs).
	grepMaxFileSize = 16 << 20
	// grepMaxContext bounds -A, -B and -C.
	grepMaxContext = 50
)

// grepMode is grep's output_mode.
type grepMode string

const (
	grepContent grepMode = "content"
	grepFiles   grepMode = "files_with_matches"
	grepCount   grepMode = "count"
)

type grepTool struct{}

func (grepTool) Spec() llm.ToolSpec {
	return spec("grep",
		"Search file contents with a regular expression (Go RE2 syntax), like ripgrep. Honours .gitignore, .ignore and .git/info/exclude; hidden files, binary files, .git and node_modules are skipped unless glob names them. output_mode: content (default; path:line:text, context lines path-line-text, groups separated by --), files_with_matches (paths) or count (path:count). head_limit and offset page through the entries of the output.",
		`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Regular expression to search for."},
    "path": {"type": "string", "description": "File or directory to search (default: the workspace)."},
    "glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.go\" (matched against the file name) or \"src/**/*.ts\" (matched against the path below the searched directory); a leading ! excludes."},
    "type": {"type": "string", "description": "Only search files of this type, e.g. go, js, ts, py, rust, java, c, cpp, md, json, yaml."},
    "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "What to show (default content)."},
    "-A": {"type": "integer", "minimum": 0, "description": "Lines of context after each match (content mode)."},
    "-B": {"type": "integer", "minimum": 0, "description": "Lines of context before each match (content mode)."},
    "-C": {"type": "integer", "minimum": 0, "description": "Lines of context before and after each match (content mode)."},
    "-i": {"type": "boolean", "description": "Ignore case."},
    "-n": {"type": "boolean", "description": "Show line numbers (content mode; default true)."},
    "multiline": {"type": "boolean", "description": "Let the pattern span lines (. matches newlines too)."},
    "head_limit": {"type": "integer", "minimum": 1, "description": "Show only this many output entries (lines, paths or counts)."},
    "offset": {"type": "integer", "minimum": 0, "description": "Skip this many output entries first."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)
}

func (grepTool) Needs() Permission { return ReadOnly }

type grepArgs struct {
	Pattern    *string  `json:"pattern"`
	Path       string   `json:"path"`
	Glob       string   `json:"glob"`
	Type       string   `json:"type"`
	OutputMode grepMode `json:"output_mode"`
	After      *int     `json:"-A"`
	Before     *int     `json:"-B"`
	Context    *int     `json:"-C"`
	IgnoreCase bool     `json:"-i"`
	LineNums   *bool    `json:"-n"`
	Multiline  bool     `json:"multiline"`
	HeadLimit  *int     `json:"head_limit"`
	Offset     *int     `json:"offset"`
}

// errEnough stops a walk once the match cap is reached.
var errEnough = errors.New("enough matches")

// fileTypes are grep's type names, a small part of ripgrep's list: the
// file name globs of each.
var fileTypes = map[string][]string{
	"go": {"*.go"}, "js": {"*.js", "*.mjs", "*.cjs", "*.jsx"}, "ts": {"*.ts", "*.tsx", "*.mts", "*.cts"},
	"py": {"*.py", "*.pyi"}, "rust": {"*.rs"}, "java": {"*.java"}, "c": {"*.c", "*.h"},
	"cpp": {"*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"}, "md": {"*.md", "*.markdown"},
	"markdown": {"*.md", "*.markdown"}, "json": {"*.json"}, "yaml": {"*.yaml", "*.yml"}, "toml": {"*.toml"},
	"sh": {"*.sh", "*.bash"}, "html": {"*.html", "*.htm"}, "css": {"*.css", "*.scss", "*.sass", "*.less"},
	"ruby": {"*.rb"}, "rb": {"*.rb"}, "php": {"*.php"}, "swift": {"*.swift"}, "kotlin": {"*.kt", "*.kts"},
	"sql": {"*.sql"}, "proto": {"*.proto"}, "txt": {"*.txt"}, "csharp": {"*.cs"}, "cs": {"*.cs"},
	"scala": {"*.scala"}, "lua": {"*.lua"}, "zig": {"*.zig"}, "make": {"Makefile", "*.mk", "makefile", "GNUmakefile"},
}

// fileFilter decides from a path (slash, below the searched directory)
// whether grep searches it.
type fileFilter func(rel string) bool

func (a *grepArgs) filter() (fileFilter, bool, error) {
	var fs []fileFilter
	hidden := false
	if a.Glob != "" {
		g := filepathToSlash(a.Glob)
		neg := strings.HasPrefix(g, "!")
		g = strings.TrimPrefix(g, "!")
		m, err := compileGlob(g)
		if err != nil {
			return nil, false, fmt.Errorf("bad glob %q: %v", a.Glob, err)
		}
		hidden = namesHidden(g)
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
	if a.Type != "" {
		globs, ok := fileTypes[a.Type]
		if !ok {
			names := make([]string, 0, len(fileTypes))
			for n := range fileTypes {
				names = append(names, n)
			}
			sort.Strings(names)
			return nil, false, fmt.Errorf("unknown type %q (known: %s)", a.Type, strings.Join(names, ", "))
		}
		m, _ := compileGlob("{" + strings.Join(globs, ",") + "}")
		if len(globs) == 1 {
			m, _ = compileGlob(globs[0])
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

// namesHidden reports whether a glob names a hidden entry on purpose (a
// segment starting with a dot), which lets the walk into hidden entries.
func namesHidden(g string) bool {
	for _, seg := range strings.Split(g, "/") {
		if strings.HasPrefix(seg, ".") && seg != "." && seg != ".." {
			return true
		}
	}
	return false
}

func (grepTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a grepArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	if err := required("pattern", a.Pattern); err != nil {
		return Errorf("%v", err)
	}
	switch a.OutputMode {
	case "":
		a.OutputMode = grepContent
	case grepContent, grepFiles, grepCount:
	default:
		return Errorf("output_mode must be content, files_with_matches or count, got %q", a.OutputMode)
	}
	before, after := 0, 0
	for _, c := range []struct {
		name string
		v    *int
		dst  []*int
	}{{"-C", a.Context, []*int{&before, &after}}, {"-B", a.Before, []*int{&before}}, {"-A", a.After, []*int{&after}}} {
		if c.v == nil {
			continue
		}
		if *c.v < 0 || *c.v > grepMaxContext {
			return Errorf("%s must be between 0 and %d, got %d", c.name, grepMaxContext, *c.v)
		}
		for _, d := range c.dst {
			*d = *c.v
		}
	}
	offset, limit := 0, 0
	if a.Offset != nil {
		if *a.Offset < 0 {
			return Errorf("offset must be 0 or more, got %d", *a.Offset)
		}
		offset = *a.Offset
	}
	if a.HeadLimit != nil {
		if *a.HeadLimit < 1 {
			return Errorf("head_limit must be 1 or more, got %d", *a.HeadLimit)
		}
		limit = *a.HeadLimit
	}
	m, err := newMatcher(*a.Pattern, a.IgnoreCase, a.Multiline)
	if err != nil {
		return Errorf("bad regular expression: %v", err)
	}
	filter, hidden, err := a.filter()
	if err != nil {
		return Errorf("%v", err)
	}
	root, err := env.Resolve(a.Path)
	if err != nil {
		return Errorf("%v", err)
	}
	fsy, err := env.files()
	if err != nil {
		return Errorf("%v", err)
	}
	defer fsy.Close()
	fi, err := fsy.Stat(root)
	if err != nil {
		return Errorf("grep %s: %v", a.Path, osErr(err))
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		// Named on purpose, so say why nothing is searched (a FIFO or
		// device could block or never end).
		return Errorf("grep %s: not a regular file", a.Path)
	}

	s := &grepSearch{ctx: ctx, m: m, before: before, after: after,
		lineNums: a.LineNums == nil || *a.LineNums, mode: a.OutputMode,
		maxMatches: int64(grepMaxMatches + offset)}
	if !fi.IsDir() {
		f, _, err := openRegular(fsy, root, os.O_RDONLY, 0)
		if err != nil {
			return Errorf("grep %s: %v", a.Path, osErr(err))
		}
		err = s.file(func() string { return env.display(root) }, func(buf []byte, limit int64) ([]byte, error) {
			return readRegularInto(f, buf, limit)
		})
		f.Close()
		if err != nil && !errors.Is(err, errEnough) {
			return Errorf("grep: %v", err)
		}
	} else {
		opts := treeOpts{hidden: hidden, keepDir: func(name string) bool { return strings.Contains(a.Glob, name) }}
		err = walkTree(ctx, fsy, root, opts, func(tf treeFile) error {
			if filter != nil && !filter(tf.rel) {
				return nil
			}
			return s.file(func() string { return env.display(tf.abs()) }, tf.readInto)
		})
	}
	switch {
	case ctx.Err() != nil:
		return canceled("grep")
	case err == nil, errors.Is(err, errEnough), errors.Is(err, errWalkBound):
	default:
		return Errorf("grep: %v", err)
	}
	entries := s.entries()
	if len(entries) == 0 {
		if errors.Is(err, errWalkBound) {
			return Result{Content: "no matches\n" + walkBoundNote()}
		}
		return Result{Content: "no matches"}
	}
	var b strings.Builder
	shown := entries[min(offset, len(entries)):]
	if offset >= len(entries) {
		return Result{Content: fmt.Sprintf("offset %d is past the end of the output (%d entries)", offset, len(entries))}
	}
	more := false
	if limit > 0 && len(shown) > limit {
		shown, more = shown[:limit], true
	}
	for _, e := range shown {
		b.WriteString(e)
		b.WriteByte('\n')
	}
	switch {
	case more:
		fmt.Fprintf(&b, "[more entries follow; use offset=%d to continue]\n", offset+limit)
	case errors.Is(err, errEnough) || s.stopped.Load():
		fmt.Fprintf(&b, "[stopped after %d matches; narrow the pattern, path or glob, or page with offset]\n", s.maxMatches)
	}
	if errors.Is(err, errWalkBound) {
		b.WriteString(walkBoundNote())
	}
	return Result{Content: b.String()}
}

func filepathToSlash(s string) string { return strings.ReplaceAll(s, "\\", "/") }

// matcher finds the pattern in a file's bytes. A pattern that is a plain
// literal is searched with bytes.Index (ripgrep's literal fast path); the
// regexp confirms a hit on the line for everything else.
type matcher struct {
	re        *regexp.Regexp
	literal   []byte // set when the whole pattern is this literal
	multiline bool
}

func newMatcher(pattern string, ignoreCase, multiline bool) (*matcher, error) {
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
	m := &matcher{re: re, multiline: multiline}
	if prefix, complete := re.LiteralPrefix(); complete && prefix != "" && !ignoreCase {
		m.literal = []byte(prefix)
	}
	return m, nil
}

// grepSearch accumulates the matches of one grep call; file runs on
// several goroutines at once.
type grepSearch struct {
	ctx        context.Context
	m          *matcher
	before     int
	after      int
	lineNums   bool
	mode       grepMode
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

// bufPool holds file buffers, so the workers do not allocate per file.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// file searches one file: read fills a buffer with its content (an error
// for a file that is not regular, too large or unreadable, which is
// skipped), name gives the path shown (asked for only when it matches).
// Binary files are skipped.
func (s *grepSearch) file(name func() string, read func(buf []byte, limit int64) ([]byte, error)) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if s.matches.Load() >= s.maxMatches {
		s.stopped.Store(true)
		return errEnough
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf, err := read((*bp)[:0], grepMaxFileSize)
	*bp = buf[:0]
	if err != nil {
		return nil
	}
	if bytes.IndexByte(buf[:min(len(buf), sniffLen)], 0) >= 0 {
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
			return errEnough
		}
		lines = lines[:keep]
	}
	r := fileResult{name: name(), count: len(lines)}
	if s.mode == grepContent {
		r.lines = s.format(buf, lines, r.name)
	}
	s.mu.Lock()
	s.results = append(s.results, r)
	s.mu.Unlock()
	if n >= s.maxMatches {
		s.stopped.Store(true)
		return errEnough
	}
	return nil
}

// readAllInto reads f into buf (up to limit bytes).
func readAllInto(buf []byte, f io.Reader, limit int64) ([]byte, error) {
	for int64(len(buf)) <= limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// lineSpan is one matching line: its 0-based number and byte range
// (without the newline).
type lineSpan struct {
	n          int
	start, end int
}

// matchLines returns the lines of buf that match, in order.
func (m *matcher) matchLines(buf []byte) []lineSpan {
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
func (s *grepSearch) format(buf []byte, hits []lineSpan, name string) []string {
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

func (s *grepSearch) line(name string, n int, sep byte, text []byte) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte(sep)
	if s.lineNums {
		b.WriteString(strconv.Itoa(n + 1))
		b.WriteByte(sep)
	}
	b.WriteString(truncateLine(string(bytes.TrimSuffix(text, []byte("\r"))), grepMaxLineLen))
	return b.String()
}

// entries is the output, files in path order.
func (s *grepSearch) entries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sort.Slice(s.results, func(i, j int) bool { return s.results[i].name < s.results[j].name })
	var out []string
	for i, r := range s.results {
		switch s.mode {
		case grepFiles:
			out = append(out, r.name)
		case grepCount:
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
