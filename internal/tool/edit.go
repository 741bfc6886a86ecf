package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/reinsdev/reins/internal/lazy"
	"github.com/reinsdev/reins/internal/llm"
	"github.com/reinsdev/reins/internal/search"
	"github.com/reinsdev/reins/internal/wsfs"
)

type editTool struct{}

var editSpec = lazy.Value[llm.ToolSpec]{New: func() llm.ToolSpec {
	return spec("edit",
		"Replace old_string with new_string in a file. old_string must match the file's text exactly (whitespace included) and occur exactly once, unless replace_all is true, which replaces every occurrence. When it is not found, the closest line is named. The file keeps its line endings (CRLF) and byte-order mark.",
		[]string{"path", "old_string", "new_string"},
		pathProperty,
		`"old_string": {"type": "string", "description": "The exact text to replace."}`,
		`"new_string": {"type": "string", "description": "The text to put in its place; must differ from old_string."}`,
		`"replace_all": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one (default false)."}`)
}}

func (editTool) Spec() llm.ToolSpec { return editSpec.Get() }

func (editTool) Needs() Permission { return WorkspaceWrite }

type editArgs struct {
	Path       *string `json:"path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all"`
}

func (editTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a editArgs
	if err := decodeArgs(raw, &a, need{"path", &a.Path}, need{"old_string", &a.OldString}, need{"new_string", &a.NewString}); err != nil {
		return Errorf("%v", err)
	}
	e := oneEdit{Old: *a.OldString, New: *a.NewString, ReplaceAll: a.ReplaceAll}
	if err := e.check(); err != nil {
		return Errorf("%v", err)
	}
	n, res := editFile(ctx, env, *a.Path, []oneEdit{e})
	if res != nil {
		return *res
	}
	return Result{Content: "replaced " + plural(n, "occurrence") + " in " + *a.Path}
}

// oneEdit is one replacement of edit or multi_edit.
type oneEdit struct {
	Old        string `json:"old_string"`
	New        string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

func (e oneEdit) check() error {
	if e.Old == "" {
		return fmt.Errorf("old_string is empty; use write to create or replace a whole file")
	}
	if e.Old == e.New {
		return fmt.Errorf("old_string and new_string are identical; nothing to change")
	}
	return nil
}

// utf8BOM is the byte-order mark some editors put first in a file.
const utf8BOM = "\ufeff"

// editFile applies edits in order to the text of the file path, all or
// nothing: the file is written once, after every edit applied. It returns
// the number of replacements made, or the error result. The text is
// EditText's.
func editFile(ctx context.Context, env *Env, path string, edits []oneEdit) (int, *Result) {
	fail := func(format string, args ...any) (int, *Result) {
		r := Errorf(format, args...)
		return 0, &r
	}
	abs, err := env.Resolve(path)
	if err != nil {
		return fail("%v", err)
	}
	if err := env.checkProtected(path, abs); err != nil {
		return fail("%v", err)
	}
	fsy, err := env.files()
	if err != nil {
		return fail("%v", err)
	}
	defer fsy.Close()
	f, _, err := fsy.OpenRegular(abs, os.O_RDWR, 0)
	if err != nil {
		return fail("edit %s: %v", path, osErr(err))
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return fail("edit %s: %v", path, osErr(err))
	}
	text, total, err := EditText(string(data), path, edits)
	if err != nil {
		return fail("%v", err)
	}
	if ctx.Err() != nil {
		return fail("edit %s: canceled", path)
	}
	// Rewritten in place, so the file keeps its mode and identity.
	if err := wsfs.ReplaceContent(f, []byte(text)); err != nil {
		return fail("edit %s: %v", path, osErr(err))
	}
	return total, nil
}

// Edit is one replacement of edit or multi_edit, as the model gives it.
type Edit = oneEdit

// EditText applies edits in order to text, the whole content of the file
// path (named in errors), as edit and multi_edit do, and returns the new
// content and the number of replacements made. It is pure, so the
// approval preview shows what the tool will write.
//
// The file's conventions are kept: a BOM is set aside while matching and
// put back; in a file whose lines end in CRLF, the model's "\n" (models
// write LF) matches and writes "\r\n".
func EditText(text, path string, edits []Edit) (string, int, error) {
	bom := strings.HasPrefix(text, utf8BOM)
	text = strings.TrimPrefix(text, utf8BOM)
	crlf := strings.Contains(text, "\r\n") && strings.Count(text, "\r\n") == strings.Count(text, "\n")
	total := 0
	for i, e := range edits {
		oldS, newS := e.Old, e.New
		if crlf && !strings.Contains(oldS, "\r\n") {
			oldS = strings.ReplaceAll(oldS, "\n", "\r\n")
			newS = strings.ReplaceAll(strings.ReplaceAll(newS, "\r\n", "\n"), "\n", "\r\n")
		}
		which := ""
		if len(edits) > 1 {
			which = fmt.Sprintf("edit %d: ", i+1)
		}
		if err := e.check(); err != nil {
			return "", 0, fmt.Errorf("%s%v", which, err)
		}
		n := strings.Count(text, oldS)
		switch {
		case n == 0:
			return "", 0, fmt.Errorf("%sold_string not found in %s%s", which, path, closestHint(text, e.Old))
		case n > 1 && !e.ReplaceAll:
			return "", 0, fmt.Errorf("%sold_string occurs %d times in %s; add surrounding context to make it unique, or set replace_all", which, n, path)
		}
		if e.ReplaceAll {
			text = strings.ReplaceAll(text, oldS, newS)
		} else {
			text = strings.Replace(text, oldS, newS, 1)
		}
		total += n
	}
	if bom {
		text = utf8BOM + text
	}
	return text, total, nil
}

// closestMaxBytes bounds the text closestHint compares, so a huge file
// costs a bounded amount.
const closestMaxBytes = 4 << 20

// closestHint says where in text the model's old_string most likely meant:
// the line most like old_string's first non-blank line (the same text with
// other whitespace first, else the most similar by shared character
// pairs), with the file's own lines there so the model can copy them.
func closestHint(text, old string) string {
	first := ""
	for _, l := range strings.Split(old, "\n") {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(strings.TrimSuffix(l, "\r"))
			break
		}
	}
	if first == "" || len(text) > closestMaxBytes {
		return ""
	}
	lines := strings.Split(text, "\n")
	want := strings.Join(strings.Fields(first), " ")
	best, bestScore := -1, 0.0
	for i, l := range lines {
		got := strings.Join(strings.Fields(l), " ")
		if got == want {
			best, bestScore = i, 2
			break
		}
		if s := dice(want, got); s > bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 || bestScore < 0.5 {
		return " (no similar line either; read the file first)"
	}
	k := max(1, min(strings.Count(strings.TrimRight(old, "\n"), "\n")+1, 5))
	var b strings.Builder
	how := "the most similar line"
	if bestScore == 2 {
		how = "the same text with other whitespace"
	}
	fmt.Fprintf(&b, "; closest match at line %d (%s):\n", best+1, how)
	for i := best; i < len(lines) && i < best+k; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, search.TruncateLine(strings.TrimSuffix(lines[i], "\r"), readMaxLineLen))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// dice is the Sørensen–Dice coefficient of the character pairs of a and b:
// 1 for equal strings, 0 for nothing in common.
func dice(a, b string) float64 {
	if len(a) < 2 || len(b) < 2 {
		if a == b {
			return 1
		}
		return 0
	}
	if len(b) > 4*len(a)+16 {
		return 0
	}
	pairs := make(map[string]int, len(a))
	for i := 0; i+1 < len(a); i++ {
		pairs[a[i:i+2]]++
	}
	shared := 0
	for i := 0; i+1 < len(b); i++ {
		if pairs[b[i:i+2]] > 0 {
			pairs[b[i:i+2]]--
			shared++
		}
	}
	return 2 * float64(shared) / float64(len(a)-1+len(b)-1)
}

type multiEditTool struct{}

var multiEditSpec = lazy.Value[llm.ToolSpec]{New: func() llm.ToolSpec {
	return spec("multi_edit",
		"Make several replacements in one file, in order, all or nothing: each edit applies to the text the previous ones left, and if any edit fails (old_string missing or not unique) the file is not changed. Each edit works like edit's old_string/new_string/replace_all.",
		[]string{"path", "edits"},
		pathProperty,
		`"edits": {
      "type": "array",
      "minItems": 1,
      "items": `+object("      ", []string{"old_string", "new_string"},
			`"old_string": {"type": "string", "description": "The exact text to replace."}`,
			`"new_string": {"type": "string", "description": "The text to put in its place."}`,
			`"replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."}`)+`
    }`)
}}

func (multiEditTool) Spec() llm.ToolSpec { return multiEditSpec.Get() }

func (multiEditTool) Needs() Permission { return WorkspaceWrite }

// multiEditMax bounds the edits of one call.
const multiEditMax = 100

func (multiEditTool) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a struct {
		Path  *string   `json:"path"`
		Edits []oneEdit `json:"edits"`
	}
	if err := decodeArgs(raw, &a, need{"path", &a.Path}); err != nil {
		return Errorf("%v", err)
	}
	if len(a.Edits) == 0 {
		return Errorf("edits is empty")
	}
	if len(a.Edits) > multiEditMax {
		return Errorf("%d edits in one call; at most %d", len(a.Edits), multiEditMax)
	}
	for i, e := range a.Edits {
		if err := e.check(); err != nil {
			return Errorf("edit %d: %v", i+1, err)
		}
	}
	n, res := editFile(ctx, env, *a.Path, a.Edits)
	if res != nil {
		return Result{Content: res.Content + "\n(no edit was applied; the file is unchanged)", IsError: true}
	}
	return Result{Content: fmt.Sprintf("applied %s (%s) to %s", plural(len(a.Edits), "edit"), plural(n, "replacement"), *a.Path)}
}
