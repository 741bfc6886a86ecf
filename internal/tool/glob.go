package tool

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/search"
	"github.com/reinsdev/reins/internal/wsfs"
)

// globMaxResults caps how many paths glob returns.
const globMaxResults = 1000

type globTool struct{}

var globSpec = lazy.Value[llm.ToolSpec]{New: func() llm.ToolSpec {
	return spec("glob",
		"Find files whose path matches a glob pattern, e.g. \"**/*.go\" or \"src/*.{ts,tsx}\". \"**\" matches any number of directories. Paths are listed newest first (by modification time), relative to the workspace. Honours .gitignore, .ignore and .git/info/exclude; hidden entries, .git and node_modules are skipped unless the pattern names them.",
		[]string{"pattern"},
		`"pattern": {"type": "string", "description": "Glob pattern, relative to path."}`,
		`"path": {"type": "string", "description": "Directory to search from (default: the workspace)."}`)
}}

func (globTool) Spec() llm.ToolSpec { return globSpec.Get() }

func (globTool) Needs() Permission { return ReadOnly }
func (globTool) Traceless()        {}

type globArgs struct {
	Pattern *string `json:"pattern"`
	Path    string  `json:"path"`
}

func (globTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a globArgs
	if err := decodeArgs(raw, &a, need{"pattern", &a.Pattern}); err != nil {
		return Errorf("%v", err)
	}
	pattern := filepath.ToSlash(*a.Pattern)
	if pattern == "" {
		return Errorf("pattern is empty")
	}
	dir, rest := search.SplitGlob(pattern)
	m, err := search.CompileGlob(rest)
	if err != nil {
		return Errorf("bad pattern %q: %v", *a.Pattern, err)
	}
	start := filepath.FromSlash(dir)
	if !filepath.IsAbs(start) {
		start = filepath.Join(a.Path, start)
	}
	root, fsy, err := env.resolveFiles(start)
	if err != nil {
		return Errorf("%v", err)
	}
	defer fsy.Close()
	if fi, err := fsy.Stat(root); err != nil || !fi.IsDir() {
		// A missing base directory simply has no matches.
		return Result{Content: "no files match " + *a.Pattern}
	}

	// A hit keeps the walk's directory path and the name (shared strings):
	// only the paths shown are joined and made relative.
	type hit struct {
		dir, name string
		mtime     int64
	}
	var (
		mu    sync.Mutex
		found []hit
	)
	opts := wsfs.WalkOptions{Hidden: search.NamesHidden(rest), KeepDir: func(name string) bool { return strings.Contains(pattern, name) }, MaxEntries: walkMaxEntries}
	err = wsfs.Walk(ctx, fsy, root, opts, func(tf wsfs.File) error {
		if !m.Match(tf.Rel) {
			return nil
		}
		mt, err := tf.Mtime()
		if err != nil && tf.Link {
			return nil // a link out of the workspace, or dangling
		}
		mu.Lock()
		found = append(found, hit{tf.Dir(), tf.Name, mt})
		mu.Unlock()
		return nil
	})
	bounded := errors.Is(err, wsfs.ErrWalkBound)
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
	slices.SortFunc(found, func(x, y hit) int {
		if c := cmp.Compare(y.mtime, x.mtime); c != 0 {
			return c
		}
		return cmpJoined(x.dir, x.name, y.dir, y.name)
	})
	more := len(found) > globMaxResults
	if more {
		found = found[:globMaxResults]
	}
	var b strings.Builder
	for _, f := range found {
		b.WriteString(env.display(filepath.Join(f.dir, f.name)))
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

// cmpJoined compares the paths a+"/"+an and b+"/"+bn without building them.
func cmpJoined(a, an, b, bn string) int {
	la, lb := len(a)+1+len(an), len(b)+1+len(bn)
	for i := 0; i < min(la, lb); i++ {
		if c := cmp.Compare(joinedByte(a, an, i), joinedByte(b, bn, i)); c != 0 {
			return c
		}
	}
	return cmp.Compare(la, lb)
}

// joinedByte is byte i of the path dir+"/"+name.
func joinedByte(dir, name string, i int) byte {
	switch {
	case i < len(dir):
		return dir[i]
	case i == len(dir):
		return '/'
	}
	return name[i-len(dir)-1]
}
