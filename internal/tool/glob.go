package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

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
		"Find files whose path matches a glob pattern, e.g. \"**/*.go\" or \"src/*.{ts,tsx}\". \"**\" matches any number of directories. Paths are listed newest first (by modification time), relative to the workspace. Honours .gitignore, .ignore and .git/info/exclude; hidden entries, .git and node_modules are skipped unless the pattern names them.",
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

	type hit struct {
		name  string
		mtime int64
	}
	var (
		mu    sync.Mutex
		found []hit
	)
	opts := treeOpts{hidden: namesHidden(rest), keepDir: func(name string) bool { return strings.Contains(pattern, name) }}
	err = walkTree(ctx, fsy, root, opts, func(tf treeFile) error {
		if !m.Match(tf.rel) {
			return nil
		}
		var mt int64
		if fi, err := tf.dir.stat(tf.name); err == nil {
			mt = fi.ModTime().UnixNano()
		} else if tf.link {
			return nil // a link out of the workspace, or dangling
		}
		mu.Lock()
		found = append(found, hit{env.display(tf.abs), mt})
		mu.Unlock()
		return nil
	})
	bounded := errors.Is(err, errWalkBound)
	switch {
	case ctx.Err() != nil:
		return canceled("glob " + *a.Pattern)
	case err != nil && !bounded:
		return Errorf("glob %s: %v", *a.Pattern, err)
	}
	if len(found) == 0 {
		if bounded {
			return Result{Content: "no files match " + *a.Pattern + "\n" + walkBoundNote()}
		}
		return Result{Content: "no files match " + *a.Pattern}
	}
	// Newest first (what the model most likely wants is what changed
	// last); equal times by path, so the order is stable.
	sort.Slice(found, func(i, j int) bool {
		if found[i].mtime != found[j].mtime {
			return found[i].mtime > found[j].mtime
		}
		return found[i].name < found[j].name
	})
	more := len(found) > globMaxResults
	if more {
		found = found[:globMaxResults]
	}
	var b strings.Builder
	for _, f := range found {
		b.WriteString(f.name)
		b.WriteByte('\n')
	}
	if more {
		fmt.Fprintf(&b, "[stopped after %d files, the newest; narrow the pattern]\n", globMaxResults)
	}
	if bounded {
		b.WriteString(walkBoundNote())
	}
	return Result{Content: b.String()}
}
