package callpreview

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reinsdev/reins/internal/patch"
	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tool"
	"github.com/reinsdev/reins/internal/tui/linediff"
)

// The preview of multi_edit and apply_patch: like write and edit
// (callpreview.go), the diff of what the call will write, computed in
// memory against the files as they are, with the tools' own rules
// (tool.EditText, patch.Parse and patch.Apply). A call that will fail
// says why in the note, and still shows what it asked for, so the user
// sees the change the model meant.

// FileHead is a header line inside a preview's diff: which file the lines
// after it belong to and what happens to it (an apply_patch of several
// files), or which edit (a multi_edit that will fail). Its text is
// escaped where it is shown, like every diff line.
const FileHead linediff.Kind = '@'

// patchPreview is the preview of a multi_edit or apply_patch call, or nil
// for any other tool or arguments that do not decode (makePreview then
// shows the arguments whole).
func patchPreview(cwd, name string, args json.RawMessage) *Preview {
	switch name {
	case "multi_edit":
		return multiEditPreview(cwd, args)
	case "apply_patch":
		return applyPatchPreview(cwd, args)
	}
	return nil
}

// multiEditPreview: the diff of the file before and after every edit; a
// call that will fail says which edit and why, and shows each edit's
// old and new text.
func multiEditPreview(cwd string, args json.RawMessage) *Preview {
	var a struct {
		Path  *string     `json:"path"`
		Edits []tool.Edit `json:"edits"`
	}
	if json.Unmarshal(args, &a) != nil || a.Path == nil || len(a.Edits) == 0 {
		return nil
	}
	p := &Preview{Path: *a.Path}
	cur, exists, err := readCurrent(cwd, *a.Path)
	var after string
	switch {
	case err != nil:
		// Too large or not a regular file: the tool decides.
		p.Note = "the file is not previewed: " + err.Error()
	case !exists:
		p.Note = "no such file; multi_edit will fail"
	default:
		var n int
		if after, n, err = tool.EditText(cur, *a.Path, a.Edits); err != nil {
			p.Note = firstLine(err.Error()) + "; multi_edit will fail"
		} else {
			p.Note = tool.Plural(len(a.Edits), "edit") + ", " + tool.Plural(n, "replacement")
			p.Diff = linediff.Lines(cur, after, Context)
			return p
		}
	}
	for i, e := range a.Edits {
		p.Diff = append(p.Diff, linediff.Line{Kind: FileHead, Text: fmt.Sprintf("edit %d of %d", i+1, len(a.Edits))})
		p.Diff = append(p.Diff, linediff.Lines(e.Old, e.New, Context)...)
	}
	return p
}

// applyPatchPreview: one diff per file the patch touches, under a header
// saying what happens to it (update, add, delete, move); the first file
// that will make the patch fail is named in the note. A patch that does
// not parse shows its text whole and the parse error.
func applyPatchPreview(cwd string, args json.RawMessage) *Preview {
	var a struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal(args, &a) != nil || a.Input == nil {
		return nil
	}
	ops, err := patch.Parse(*a.Input)
	if err != nil {
		return &Preview{Note: firstLine(err.Error()) + "; apply_patch will fail", Fields: []Field{{"input", *a.Input}}}
	}
	p := &Preview{}
	var failed, unread, what string
	for _, op := range ops {
		cur, exists, rerr := readCurrent(cwd, op.Path)
		what = string(op.Kind)
		var d []linediff.Line
		var err error
		switch op.Kind {
		case patch.Add:
			if exists {
				what += ", replacing the file there"
			}
			d = linediff.Lines(cur, op.Content, Context)
		case patch.Delete:
			if rerr == nil && !exists {
				err = errors.New("no such file")
			}
			d = linediff.Lines(cur, "", Context)
		case patch.Update:
			if op.MoveTo != "" {
				what += ", moving it to " + op.MoveTo
			}
			after := ""
			switch {
			case rerr != nil:
			case !exists:
				err = errors.New("no such file")
			default:
				after, err = patch.Apply(cur, op.Chunks)
			}
			if err == nil && rerr == nil {
				d = linediff.Lines(cur, after, Context)
				break
			}
			// What the chunks asked for, since the file's result is unknown.
			for _, c := range op.Chunks {
				d = append(d, linediff.Lines(strings.Join(c.Old, "\n"), strings.Join(c.New, "\n"), Context)...)
			}
		}
		if rerr != nil && unread == "" {
			// Too large or not a regular file: the tool decides.
			unread = termsafe.EscapeLine(op.Path) + " is not previewed: " + rerr.Error()
		}
		if err != nil && failed == "" {
			failed = string(op.Kind) + " " + termsafe.EscapeLine(op.Path) + ": " + firstLine(err.Error()) + "; apply_patch will fail"
		}
		if len(ops) > 1 {
			p.Diff = append(p.Diff, linediff.Line{Kind: FileHead, Text: op.Path + ": " + what})
		}
		p.Diff = append(p.Diff, d...)
	}
	switch {
	case failed != "":
		p.Note = failed
	case unread != "":
		p.Note = unread
	case len(ops) == 1:
		p.Note = termsafe.EscapeLine(what)
	default:
		p.Note = fmt.Sprintf("%d files", len(ops))
	}
	if len(ops) == 1 {
		p.Path = ops[0].Path
	}
	return p
}

// firstLine is the first line of an error message, escaped for the
// question's head line (an edit error goes on with the file's lines).
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return termsafe.EscapeLine(s)
}
