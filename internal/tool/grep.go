package tool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/reinsdev/reins/internal/llm"
)

const (
	// grepMaxMatches caps the matching lines grep reports.
	grepMaxMatches = 500
	// grepMaxLineLen cuts a reported line, so minified files stay readable.
	grepMaxLineLen = 500
	// grepMaxFileSize skips huge files (generated data, logs).
	grepMaxFileSize = 16 << 20
)

type grepTool struct{}

func (grepTool) Spec() llm.ToolSpec {
	return spec("grep",
		"Search file contents with a regular expression (Go RE2 syntax; prefix (?i) to ignore case). Prints path:line:text for each matching line. Binary files, .git and node_modules are skipped; at most 500 matches are shown.",
		`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Regular expression to search for."},
    "path": {"type": "string", "description": "File or directory to search (default: the workspace)."},
    "glob": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.go\" (matched against the file name) or \"src/**/*.ts\" (matched against the path below the searched directory)."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)
}

func (grepTool) Needs() Permission { return ReadOnly }

type grepArgs struct {
	Pattern *string `json:"pattern"`
	Path    string  `json:"path"`
	Glob    string  `json:"glob"`
}

// errEnough stops a walk once the match cap is reached.
var errEnough = errors.New("enough matches")

func (grepTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a grepArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	if err := required("pattern", a.Pattern); err != nil {
		return Errorf("%v", err)
	}
	re, err := regexp.Compile(*a.Pattern)
	if err != nil {
		return Errorf("bad regular expression: %v", err)
	}
	var filter func(rel string) bool
	if a.Glob != "" {
		g := filepath.ToSlash(a.Glob)
		m, err := compileGlob(g)
		if err != nil {
			return Errorf("bad glob %q: %v", a.Glob, err)
		}
		if strings.Contains(g, "/") {
			filter = m.Match
		} else {
			filter = func(rel string) bool { return m.Match(pathBase(rel)) }
		}
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
	s := &grepSearch{ctx: ctx, env: env, fsy: fsy, re: re}
	if !fi.IsDir() {
		err = s.file(root)
	} else {
		err = walkBounded(ctx, fsy, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable entries are skipped
			}
			if d.IsDir() {
				if p != root && skipDirs[d.Name()] {
					return filepath.SkipDir
				}
				return nil
			}
			if filter != nil {
				rel, err := filepath.Rel(root, p)
				if err != nil || !filter(filepath.ToSlash(rel)) {
					return nil
				}
			}
			if d.Type()&fs.ModeSymlink != 0 {
				// A link may point out of the workspace; follow it only
				// where the bound allows.
				if _, err := env.Resolve(p); err != nil {
					return nil
				}
			}
			return s.file(p)
		})
	}
	switch {
	case ctx.Err() != nil:
		return canceled("grep")
	case errors.Is(err, errEnough):
		fmt.Fprintf(&s.out, "[stopped after %d matches; narrow the pattern, path or glob]\n", grepMaxMatches)
	case errors.Is(err, errWalkBound):
		if s.n == 0 {
			return Result{Content: "no matches\n" + walkBoundNote()}
		}
		s.out.WriteString(walkBoundNote())
	case err != nil:
		return Errorf("grep: %v", err)
	}
	if s.n == 0 {
		return Result{Content: "no matches"}
	}
	return Result{Content: s.out.String()}
}

// grepSearch accumulates the matches of one grep call.
type grepSearch struct {
	ctx context.Context
	env *Env
	fsy *fsys
	re  *regexp.Regexp
	out strings.Builder
	n   int
}

// file searches one file; files that are unreadable, not regular, too
// large or binary are skipped.
func (s *grepSearch) file(p string) error {
	f, fi, err := openRegular(s.fsy, p, os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi.Size() > grepMaxFileSize {
		return nil
	}
	head, binary, err := sniff(f)
	if err != nil || binary {
		return nil
	}
	name := s.env.display(p)
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(head), f), 64<<10)
	for n := 1; ; n++ {
		if n%1024 == 0 && s.ctx.Err() != nil {
			return s.ctx.Err()
		}
		line, ok, err := readLineBytes(br)
		if err != nil || !ok {
			return nil
		}
		if !s.re.Match(line) {
			continue
		}
		if s.n == grepMaxMatches {
			return errEnough
		}
		s.n++
		fmt.Fprintf(&s.out, "%s:%d:%s\n", name, n, truncateLine(string(line), grepMaxLineLen))
	}
}

// readLineBytes returns the next line of br without its newline; ok is
// false at the end of input. Files are size-capped, so a whole line may be
// held.
func readLineBytes(br *bufio.Reader) (line []byte, ok bool, err error) {
	line, err = br.ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	if len(line) == 0 && err != nil {
		return nil, false, nil
	}
	return bytes.TrimSuffix(line, []byte("\n")), true, nil
}

// pathBase is the last element of a slash-separated path.
func pathBase(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}
