package tool

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/reinsdev/reins/internal/llm"
)

type editTool struct{}

func (editTool) Spec() llm.ToolSpec {
	return spec("edit",
		"Replace old_string with new_string in a file. old_string must match the file's text exactly (whitespace included) and occur exactly once, unless replace_all is true, which replaces every occurrence.",
		`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path, relative to the workspace or absolute."},
    "old_string": {"type": "string", "description": "The exact text to replace."},
    "new_string": {"type": "string", "description": "The text to put in its place; must differ from old_string."},
    "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one (default false)."}
  },
  "required": ["path", "old_string", "new_string"],
  "additionalProperties": false
}`)
}

func (editTool) Needs() Permission { return WorkspaceWrite }

type editArgs struct {
	Path       *string `json:"path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all"`
}

func (editTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a editArgs
	if err := decodeArgs(raw, &a); err != nil {
		return Errorf("%v", err)
	}
	for _, r := range []struct {
		name string
		v    *string
	}{{"path", a.Path}, {"old_string", a.OldString}, {"new_string", a.NewString}} {
		if err := required(r.name, r.v); err != nil {
			return Errorf("%v", err)
		}
	}
	oldS, newS := *a.OldString, *a.NewString
	if oldS == "" {
		return Errorf("old_string is empty; use write to create or replace a whole file")
	}
	if oldS == newS {
		return Errorf("old_string and new_string are identical; nothing to change")
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
	f, _, err := openRegular(fsy, abs, os.O_RDWR, 0)
	if err != nil {
		return Errorf("edit %s: %v", *a.Path, osErr(err))
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return Errorf("edit %s: %v", *a.Path, osErr(err))
	}
	text := string(data)
	n := strings.Count(text, oldS)
	switch {
	case n == 0:
		return Errorf("old_string not found in %s", *a.Path)
	case n > 1 && !a.ReplaceAll:
		return Errorf("old_string occurs %d times in %s; add surrounding context to make it unique, or set replace_all", n, *a.Path)
	}
	if a.ReplaceAll {
		text = strings.ReplaceAll(text, oldS, newS)
	} else {
		text = strings.Replace(text, oldS, newS, 1)
	}
	if ctx.Err() != nil {
		return Errorf("edit %s: canceled", *a.Path)
	}
	// Rewritten in place, so the file keeps its mode and identity.
	if err := replaceContent(f, []byte(text)); err != nil {
		return Errorf("edit %s: %v", *a.Path, osErr(err))
	}
	return Result{Content: "replaced " + plural(n, "occurrence") + " in " + *a.Path}
}
