package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/wsfs"
)

type writeTool struct{}

var writeSpec = lazy.Value[llm.ToolSpec]{New: func() llm.ToolSpec {
	return spec("write",
		"Create or overwrite a file with the given content, creating parent directories as needed.",
		[]string{"path", "content"},
		pathProperty,
		`"content": {"type": "string", "description": "The complete new content of the file."}`)
}}

func (writeTool) Spec() llm.ToolSpec { return writeSpec.Get() }

func (writeTool) Needs() Permission { return WorkspaceWrite }

type writeArgs struct {
	Path    *string `json:"path"`
	Content *string `json:"content"`
}

func (writeTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a writeArgs
	if err := decodeArgs(raw, &a, need{"path", &a.Path}, need{"content", &a.Content}); err != nil {
		return Errorf("%v", err)
	}
	abs, err := env.Resolve(*a.Path)
	if err != nil {
		return Errorf("%v", err)
	}
	if err := env.checkProtected(*a.Path, abs); err != nil {
		return Errorf("%v", err)
	}
	fsy, err := env.files()
	if err != nil {
		return Errorf("%v", err)
	}
	defer fsy.Close()
	if fi, err := fsy.Stat(abs); err == nil && fi.IsDir() {
		return Errorf("%s is a directory", *a.Path)
	}
	if err := fsy.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return Errorf("write %s: cannot create parent directories: %v", *a.Path, osErr(err))
	}
	if ctx.Err() != nil {
		return Errorf("write %s: canceled", *a.Path)
	}
	// An existing file keeps its mode; anything but a regular file is
	// refused before a byte is written (a FIFO would block forever).
	f, _, err := fsy.OpenRegular(abs, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return Errorf("write %s: %v", *a.Path, osErr(err))
	}
	err = wsfs.ReplaceContent(f, []byte(*a.Content))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Errorf("write %s: %v", *a.Path, osErr(err))
	}
	return Result{Content: "wrote " + plural(len(*a.Content), "byte") + " to " + *a.Path}
}
