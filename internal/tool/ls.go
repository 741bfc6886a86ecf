package tool

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/wsfs"
)

type lsTool struct{}

var lsSpec = lazy.Value[llm.ToolSpec]{New: func() llm.ToolSpec {
	return spec("ls",
		"List the entries of a directory (default: the workspace), sorted by name; directories end in \"/\".",
		nil,
		`"path": {"type": "string", "description": "Directory path, relative to the workspace or absolute (default: the workspace)."}`)
}}

func (lsTool) Spec() llm.ToolSpec { return lsSpec.Get() }

func (lsTool) Needs() Permission { return ReadOnly }
func (lsTool) Traceless()        {}

type lsArgs struct {
	Path string `json:"path"`
}

func (lsTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a lsArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	name := a.Path
	if name == "" {
		name = "."
	}
	abs, fsy, err := env.resolveFiles(a.Path)
	if err != nil {
		return Errorf("%v", err)
	}
	defer fsy.Close()
	fi, err := fsy.Stat(abs)
	if err != nil {
		return Errorf("ls %s: %v", name, osErr(err))
	}
	if !fi.IsDir() {
		return Errorf("%s is not a directory", name)
	}
	entries, err := fsy.ReadDir(abs) // sorted by name
	if err != nil {
		return Errorf("ls %s: %v", name, osErr(err))
	}
	if len(entries) == 0 {
		return Result{Content: name + " is empty"}
	}
	var b strings.Builder
	for _, e := range entries {
		if ctx.Err() != nil {
			return canceled("ls " + name)
		}
		b.WriteString(e.Name())
		if e.IsDir() || isDirLink(fsy, filepath.Join(abs, e.Name()), e) {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	return Result{Content: b.String()}
}

// isDirLink reports whether e is a symlink to a directory, which lists as
// a directory since that is how it is used.
func isDirLink(fsy *wsfs.FS, p string, e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := fsy.Stat(p)
	return err == nil && fi.IsDir()
}
