package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/patch"
	"github.com/reinsdev/reins/internal/search"
	"github.com/reinsdev/reins/internal/wsfs"
)

// applyPatchMaxInput bounds a patch's text.
const applyPatchMaxInput = 4 << 20

type applyPatchTool struct{}

var applyPatchSpec = lazy.Value[llm.ToolSpec]{New: func() llm.ToolSpec {
	return spec("apply_patch",
		`Edit files with a patch in this format (Codex's apply_patch):
*** Begin Patch
*** Add File: path/new.txt
+each line of the new file, prefixed with +
*** Delete File: path/old.txt
*** Update File: path/file.py
*** Move to: path/renamed.py   (optional)
@@ def some_function():   (optional: a line to find first)
 context line (a space first)
-line to remove
+line to add
*** End Patch
Give about 3 lines of context around each change. Paths are relative to the workspace. Either every change applies or none does.`,
		[]string{"input"},
		`"input": {"type": "string", "description": "The whole patch, from *** Begin Patch to *** End Patch."}`)
}}

func (applyPatchTool) Spec() llm.ToolSpec { return applyPatchSpec.Get() }

func (applyPatchTool) Needs() Permission { return WorkspaceWrite }

// patchPlan is one file change, computed before anything is written.
type patchPlan struct {
	op      patch.FileOp
	abs     string // the file the op reads or deletes
	dest    string // where the new content goes ("" for a delete)
	content string
}

func (applyPatchTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a struct {
		Input *string `json:"input"`
	}
	if err := decodeArgs(raw, &a, need{"input", &a.Input}); err != nil {
		return Errorf("%v", err)
	}
	if len(*a.Input) > applyPatchMaxInput {
		return Errorf("the patch is %d bytes; at most %d", len(*a.Input), applyPatchMaxInput)
	}
	ops, err := patch.Parse(*a.Input)
	if err != nil {
		return Errorf("%v", err)
	}
	fsy, err := env.files()
	if err != nil {
		return Errorf("%v", err)
	}
	defer fsy.Close()

	// Every change is computed and checked first: a patch that fails
	// anywhere changes nothing.
	resolve := func(p string) (string, error) {
		abs, err := env.Resolve(p)
		if err != nil {
			return "", err
		}
		return abs, env.checkProtected(p, abs)
	}
	var plans []patchPlan
	for _, op := range ops {
		abs, err := resolve(op.Path)
		if err != nil {
			return Errorf("%v", err)
		}
		pl := patchPlan{op: op, abs: abs, dest: abs}
		switch op.Kind {
		case patch.Add:
			if fi, err := fsy.Stat(abs); err == nil && fi.IsDir() {
				return Errorf("add %s: it is a directory", op.Path)
			}
			pl.content = op.Content
		case patch.Delete:
			fi, err := fsy.Lstat(abs)
			if err != nil {
				return Errorf("delete %s: %v", op.Path, osErr(err))
			}
			if !fi.Mode().IsRegular() {
				return Errorf("delete %s: not a regular file", op.Path)
			}
			pl.dest = ""
		case patch.Update:
			old, err := readWhole(fsy, abs)
			if err != nil {
				return Errorf("update %s: %v", op.Path, osErr(err))
			}
			pl.content, err = patch.Apply(old, op.Chunks)
			if err != nil {
				return Errorf("update %s: %v", op.Path, err)
			}
			if op.MoveTo != "" {
				if pl.dest, err = resolve(op.MoveTo); err != nil {
					return Errorf("%v", err)
				}
			}
		}
		plans = append(plans, pl)
	}
	if ctx.Err() != nil {
		return canceled("apply_patch")
	}
	var done []string
	for _, pl := range plans {
		if err := applyPlan(fsy, pl); err != nil {
			msg := fmt.Sprintf("apply_patch: %s %s: %v", pl.op.Kind, pl.op.Path, osErr(err))
			if len(done) > 0 {
				msg += "\n(already applied: " + strings.Join(done, ", ") + ")"
			}
			return Errorf("%s", msg)
		}
		done = append(done, pl.op.Path)
	}
	var b strings.Builder
	b.WriteString("Success. Updated the following files:\n")
	for _, pl := range plans {
		switch {
		case pl.op.Kind == patch.Add:
			fmt.Fprintf(&b, "A %s\n", pl.op.Path)
		case pl.op.Kind == patch.Delete:
			fmt.Fprintf(&b, "D %s\n", pl.op.Path)
		case pl.op.MoveTo != "":
			fmt.Fprintf(&b, "M %s -> %s\n", pl.op.Path, pl.op.MoveTo)
		default:
			fmt.Fprintf(&b, "M %s\n", pl.op.Path)
		}
	}
	return Result{Content: b.String()}
}

// readWhole reads a regular file beneath the workspace, bounded.
func readWhole(fsy *wsfs.FS, abs string) (string, error) {
	f, fi, err := fsy.OpenRegular(abs, os.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi.Size() > search.MaxFileSize {
		return "", fmt.Errorf("file is %d bytes; apply_patch edits files up to %d", fi.Size(), search.MaxFileSize)
	}
	b, err := io.ReadAll(io.LimitReader(f, search.MaxFileSize+1))
	return string(b), err
}

// applyPlan makes one planned change, beneath the workspace root.
func applyPlan(fsy *wsfs.FS, pl patchPlan) error {
	if pl.dest == "" {
		return fsy.Remove(pl.abs)
	}
	if err := fsy.MkdirAll(filepath.Dir(pl.dest), 0o755); err != nil {
		return err
	}
	f, _, err := fsy.OpenRegular(pl.dest, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	err = wsfs.ReplaceContent(f, []byte(pl.content))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if pl.op.MoveTo != "" && pl.dest != pl.abs {
		if err := fsy.Remove(pl.abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
