package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reinsdev/reins/internal/llm"
)

// globMaxResults caps how many paths glob returns.
const globMaxResults = 1000

// skipDirs are directories that searches do not descend into: they are
// large and rarely what the model is looking for.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

type globTool struct{}

func (globTool) Spec() llm.ToolSpec {
	return spec("glob",
		"Find files whose path matches a glob pattern, e.g. \"**/*.go\" or \"src/*.{ts,tsx}\". \"**\" matches any number of directories. Paths are listed sorted, relative to the workspace. .git and node_modules are skipped unless the pattern names them.",
		`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Glob pattern, relative to path."},
    "path": {"type": "string", "description": "Directory to search from (default: the workspace)."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)
}

func (globTool) Needs() Permission { return ReadOnly }

type globArgs struct {
	Pattern *string `json:"pattern"`
	Path    string  `json:"path"`
}

func (globTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a globArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	if err := required("pattern", a.Pattern); err != nil {
		return Errorf("%v", err)
	}
	pattern := filepath.ToSlash(*a.Pattern)
	if pattern == "" {
		return Errorf("pattern is empty")
	}
	dir, rest := splitGlob(pattern)
	m, err := compileGlob(rest)
	if err != nil {
		return Errorf("bad pattern %q: %v", *a.Pattern, err)
	}
	start := filepath.FromSlash(dir)
	if !filepath.IsAbs(start) {
		start = filepath.Join(a.Path, start)
	}
	root, err := env.Resolve(start)
	if err != nil {
		return Errorf("%v", err)
	}
	fsy, err := env.files()
	if err != nil {
		return Errorf("%v", err)
	}
	defer fsy.Close()
	if fi, err := fsy.Stat(root); err != nil || !fi.IsDir() {
		// A missing base directory simply has no matches.
		return Result{Content: "no files match " + *a.Pattern}
	}

	var found []string
	more := false
	errStop := errors.New("stop")
	err = walkBounded(ctx, fsy, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped
		}
		if p == root {
			return nil
		}
		if d.IsDir() {
			if skipDirs[d.Name()] && !strings.Contains(pattern, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || !m.Match(filepath.ToSlash(rel)) {
			return nil
		}
		if len(found) == globMaxResults {
			more = true
			return errStop
		}
		found = append(found, env.display(p))
		return nil
	})
	bounded := errors.Is(err, errWalkBound)
	switch {
	case ctx.Err() != nil:
		return canceled("glob " + *a.Pattern)
	case err != nil && !errors.Is(err, errStop) && !bounded:
		return Errorf("glob %s: %v", *a.Pattern, err)
	}
	if len(found) == 0 {
		if bounded {
			return Result{Content: "no files match " + *a.Pattern + "\n" + walkBoundNote()}
		}
		return Result{Content: "no files match " + *a.Pattern}
	}
	sort.Strings(found)
	var b strings.Builder
	for _, f := range found {
		b.WriteString(f)
		b.WriteByte('\n')
	}
	if more {
		fmt.Fprintf(&b, "[stopped after %d files; narrow the pattern]\n", globMaxResults)
	}
	if bounded {
		b.WriteString(walkBoundNote())
	}
	return Result{Content: b.String()}
}
