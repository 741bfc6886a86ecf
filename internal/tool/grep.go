package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/search"
	"github.com/reinsdev/reins/internal/wsfs"
)

const (
	// grepMaxMatches caps the matching lines grep collects (after offset).
	grepMaxMatches = 500
	// grepMaxContext bounds -A, -B and -C.
	grepMaxContext = 50
)

type grepTool struct{}

var grepSpec = lazy.Value[llm.ToolSpec]{New: func() llm.ToolSpec {
	return spec("grep",
		"Search file contents with a regular expression (Go RE2 syntax), like ripgrep. Honours .gitignore, .ignore and .git/info/exclude; hidden files, binary files, .git and node_modules are skipped unless glob names them. output_mode: content (default; path:line:text, context lines path-line-text, groups separated by --), files_with_matches (paths) or count (path:count). head_limit and offset page through the entries of the output.",
		[]string{"pattern"},
		`"pattern": {"type": "string", "description": "Regular expression to search for."}`,
		`"path": {"type": "string", "description": "File or directory to search (default: the workspace)."}`,
		`"glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.go\" (matched against the file name) or \"src/**/*.ts\" (matched against the path below the searched directory); a leading ! excludes."}`,
		`"type": {"type": "string", "description": "Only search files of this type, e.g. go, js, ts, py, rust, java, c, cpp, md, json, yaml."}`,
		`"output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "What to show (default content)."}`,
		`"-A": {"type": "integer", "minimum": 0, "description": "Lines of context after each match (content mode)."}`,
		`"-B": {"type": "integer", "minimum": 0, "description": "Lines of context before each match (content mode)."}`,
		`"-C": {"type": "integer", "minimum": 0, "description": "Lines of context before and after each match (content mode)."}`,
		`"-i": {"type": "boolean", "description": "Ignore case."}`,
		`"-n": {"type": "boolean", "description": "Show line numbers (content mode; default true)."}`,
		`"multiline": {"type": "boolean", "description": "Let the pattern span lines (. matches newlines too)."}`,
		`"head_limit": {"type": "integer", "minimum": 1, "description": "Show only this many output entries (lines, paths or counts)."}`,
		`"offset": {"type": "integer", "minimum": 0, "description": "Skip this many output entries first."}`)
}}

func (grepTool) Spec() llm.ToolSpec { return grepSpec.Get() }

func (grepTool) Needs() Permission { return ReadOnly }
func (grepTool) Traceless()        {}

type grepArgs struct {
	Pattern    *string     `json:"pattern"`
	Path       string      `json:"path"`
	Glob       string      `json:"glob"`
	Type       string      `json:"type"`
	OutputMode search.Mode `json:"output_mode"`
	After      *int        `json:"-A"`
	Before     *int        `json:"-B"`
	Context    *int        `json:"-C"`
	IgnoreCase bool        `json:"-i"`
	LineNums   *bool       `json:"-n"`
	Multiline  bool        `json:"multiline"`
	HeadLimit  *int        `json:"head_limit"`
	Offset     *int        `json:"offset"`
}

func (grepTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a grepArgs
	if err := decodeArgs(raw, &a, need{"pattern", &a.Pattern}); err != nil {
		return Errorf("%v", err)
	}
	switch a.OutputMode {
	case "":
		a.OutputMode = search.Content
	case search.Content, search.FilesWithMatches, search.Count:
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
	m, err := search.NewMatcher(*a.Pattern, a.IgnoreCase, a.Multiline)
	if err != nil {
		return Errorf("bad regular expression: %v", err)
	}
	filter, hidden, err := search.NewFilter(a.Glob, a.Type)
	if err != nil {
		return Errorf("%v", err)
	}
	root, fsy, err := env.resolveFiles(a.Path)
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

	maxMatches := int64(grepMaxMatches + offset)
	s := search.NewGrep(ctx, m, search.Options{Before: before, After: after,
		LineNumbers: a.LineNums == nil || *a.LineNums, Mode: a.OutputMode,
		MaxMatches: maxMatches})
	if !fi.IsDir() {
		f, _, err := fsy.OpenRegular(root, os.O_RDONLY, 0)
		if err != nil {
			return Errorf("grep %s: %v", a.Path, osErr(err))
		}
		err = s.File(func() string { return env.display(root) }, func(buf []byte, limit int64) ([]byte, error) {
			return wsfs.ReadRegularInto(f, buf, limit)
		})
		f.Close()
		if err != nil && !errors.Is(err, search.ErrEnough) {
			return Errorf("grep: %v", err)
		}
	} else {
		opts := wsfs.WalkOptions{Hidden: hidden, KeepDir: func(name string) bool { return strings.Contains(a.Glob, name) }, MaxEntries: walkMaxEntries}
		err = wsfs.Walk(ctx, fsy, root, opts, func(tf wsfs.File) error {
			if filter != nil && !filter(tf.Rel) {
				return nil
			}
			return s.File(func() string { return env.display(tf.Abs()) }, tf.ReadInto)
		})
	}
	switch {
	case ctx.Err() != nil:
		return canceled("grep")
	case err == nil, errors.Is(err, search.ErrEnough), errors.Is(err, wsfs.ErrWalkBound):
	default:
		return Errorf("grep: %v", err)
	}
	entries := s.Entries()
	if len(entries) == 0 {
		if errors.Is(err, wsfs.ErrWalkBound) {
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
	case errors.Is(err, search.ErrEnough) || s.Stopped():
		fmt.Fprintf(&b, "[stopped after %d matches; narrow the pattern, path or glob, or page with offset]\n", maxMatches)
	}
	if errors.Is(err, wsfs.ErrWalkBound) {
		b.WriteString(walkBoundNote())
	}
	return Result{Content: b.String()}
}
