// Package callpreview is what a call of a file tool (write, edit,
// multi_edit, apply_patch) will change, computed in memory against the
// files as they are: the diff an approval question shows, and the diff a
// settled call shows in every mode (the terminal's scrollback with or
// without a question, `reins run`'s progress), removed lines included —
// one rule, so no mode shows only the added lines. For any other tool it
// is the call's arguments, whole.
package callpreview

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/reinsdev/reins/internal/textcut"
	"github.com/reinsdev/reins/internal/tui/linediff"
	"github.com/reinsdev/reins/internal/tui/toolsummary"
)

// MaxFile bounds what a preview reads of the current file.
const MaxFile = 1 << 20

// Context is the unchanged lines shown around each change.
const Context = 2

// Preview is what a call of a file tool will do, or for any other tool
// its arguments whole.
type Preview struct {
	Path   string  // write/edit/multi_edit: the path as the model gave it
	Note   string  // reins's own words about the change ("new file", …), escaped
	Fields []Field // every other argument, whole
	Diff   []linediff.Line
}

// Field is one argument of a call.
type Field struct{ Key, Value string }

// Of is the preview of a call of tool name with args, in the workspace
// cwd, against the files as they are now.
func Of(cwd, name string, args json.RawMessage) *Preview {
	if p := patchPreview(cwd, name, args); p != nil { // multi_edit, apply_patch
		return p
	}
	p := &Preview{}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		p.Fields = []Field{{"arguments", string(args)}}
		return p
	}
	str := func(k string) (string, bool) {
		var s string
		if raw, ok := obj[k]; ok && json.Unmarshal(raw, &s) == nil {
			return s, true
		}
		return "", false
	}
	skip := map[string]bool{}
	if name == "write" || name == "edit" {
		if path, ok := str("path"); ok {
			p.Path = path
			skip["path"] = true
			cur, exists, err := readCurrent(cwd, path)
			switch name {
			case "write":
				if content, ok := str("content"); ok {
					skip["content"] = true
					switch {
					case err != nil:
						p.Note = "the current file cannot be read (" + err.Error() + "); the write replaces it"
						p.Diff = linediff.Lines("", content, Context)
					case !exists:
						p.Note = fmt.Sprintf("new file, %s", textcut.Bytes(len(content)))
						p.Diff = linediff.Lines("", content, Context)
					default:
						p.Note = fmt.Sprintf("overwrites %s with %s", textcut.Bytes(len(cur)), textcut.Bytes(len(content)))
						p.Diff = linediff.Lines(cur, content, Context)
					}
				}
			case "edit":
				oldS, ok1 := str("old_string")
				newS, ok2 := str("new_string")
				var all bool
				if raw, ok := obj["replace_all"]; ok {
					json.Unmarshal(raw, &all)
				}
				if ok1 && ok2 {
					skip["old_string"], skip["new_string"], skip["replace_all"] = true, true, true
					n := strings.Count(cur, oldS)
					switch {
					case err != nil || !exists:
						p.Note = "the file cannot be read now; the edit will fail"
						p.Diff = linediff.Lines(oldS, newS, Context)
					case oldS == "" || n == 0:
						p.Note = "old_string is not in the file; the edit will fail"
						p.Diff = linediff.Lines(oldS, newS, Context)
					case n > 1 && !all:
						p.Note = fmt.Sprintf("old_string occurs %d times; the edit will fail", n)
						p.Diff = linediff.Lines(oldS, newS, Context)
					default:
						after := strings.Replace(cur, oldS, newS, 1)
						if all {
							after = strings.ReplaceAll(cur, oldS, newS)
							p.Note = fmt.Sprintf("replaces %d occurrences", n)
						}
						p.Diff = linediff.Lines(cur, after, Context)
					}
				}
			}
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := toolsummary.Rank(keys[i]), toolsummary.Rank(keys[j])
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		v := string(obj[k])
		var s string
		if json.Unmarshal(obj[k], &s) == nil {
			v = s
		}
		p.Fields = append(p.Fields, Field{k, v})
	}
	return p
}

// readCurrent reads the file a write or edit names as it is now: at most
// MaxFile bytes of a regular file (a FIFO or device is not opened
// for reading). A relative path is the workspace's, read through an
// os.Root so that a symlink cannot take the read outside it.
func readCurrent(cwd, path string) (string, bool, error) {
	var f *os.File
	var err error
	if filepath.IsAbs(path) {
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	} else {
		var root *os.Root
		root, err = os.OpenRoot(cwd)
		if err != nil {
			return "", false, err
		}
		defer root.Close()
		f, err = root.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, errors.New("cannot open it")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return "", true, errors.New("not a regular file")
	}
	if st.Size() > MaxFile {
		return "", true, fmt.Errorf("%s, too large to compare", textcut.Bytes(int(st.Size())))
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFile))
	if err != nil {
		return "", true, errors.New("cannot read it")
	}
	return string(b), true, nil
}

// MaxSettled is the most lines of a settled call's diff shown on screen;
// Capped says how many more there are.
const MaxSettled = 12

// Capped is the first max lines of d and how many lines it leaves out
// (shown as "… N more lines").
func Capped(d []linediff.Line, max int) ([]linediff.Line, int) {
	if len(d) <= max {
		return d, 0
	}
	return d[:max], len(d) - max
}

// FileTool reports whether tool name is one that changes files: its
// calls show a diff, and the terminal's auto-edit mode lets it run.
func FileTool(name string) bool {
	switch name {
	case "write", "edit", "multi_edit", "apply_patch":
		return true
	}
	return false
}
