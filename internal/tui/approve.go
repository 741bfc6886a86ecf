package tui

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

	tea "charm.land/bubbletea/v2"

	"github.com/reinsdev/reins/internal/termsafe"
	"github.com/reinsdev/reins/internal/tui/linediff"
	"github.com/reinsdev/reins/internal/tui/termtext"
	"github.com/reinsdev/reins/internal/tui/toolsummary"
)

// An approval question shows everything the call will do before it is
// answered (issue 26 item 6): every argument whole (wrapped, never cut,
// control characters written as escapes), and for write and edit the
// diff against the file as it is now, removed lines included. A question
// too tall for the screen is printed whole to the scrollback and the
// live screen says so.
//
// Only keys the user typed after the question was drawn answer it: when
// a question comes to the front the terminal's pending input is flushed
// (Options.FlushInput) and the question is armed by a message queued
// behind every key already read, so keys typed (or planted with TIOCSTI)
// before it appeared are dropped, never taken as an answer. The answer
// keys are shown only once the question is armed.

// maxPreviewFile bounds what a question reads of the current file.
const maxPreviewFile = 1 << 20

// diffContext is the unchanged lines shown around each change.
const diffContext = 2

// preview is what a question shows of a call, computed when the call
// asks (off the screen's goroutine), so the diff is against the file at
// that moment.
type preview struct {
	path   string          // write/edit: the path as the model gave it
	note   string          // reins's own words about the change ("new file", …)
	fields []argField      // every other argument, whole
	diff   []linediff.Line // write/edit
	// host: a domain question's host (approve_domain.go); gone closes
	// when its connection stops waiting.
	host string
	gone <-chan struct{}
}

type argField struct{ key, value string }

// armMsg arms the question a: keys after it answer it.
type armMsg struct{ a *approval }

// makePreview computes the preview of a call of tool name with args, in
// the workspace cwd.
func makePreview(cwd, name string, args json.RawMessage) *preview {
	if p := patchPreview(cwd, name, args); p != nil { // multi_edit, apply_patch
		return p
	}
	p := &preview{}
	var obj map[string]json.RawMessage
	if json.Unmarshal(args, &obj) != nil {
		p.fields = []argField{{"arguments", string(args)}}
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
			p.path = path
			skip["path"] = true
			cur, exists, err := readCurrent(cwd, path)
			switch name {
			case "write":
				if content, ok := str("content"); ok {
					skip["content"] = true
					switch {
					case err != nil:
						p.note = "the current file cannot be read (" + err.Error() + "); the write replaces it"
						p.diff = linediff.Lines("", content, diffContext)
					case !exists:
						p.note = fmt.Sprintf("new file, %s", termtext.Bytes(len(content)))
						p.diff = linediff.Lines("", content, diffContext)
					default:
						p.note = fmt.Sprintf("overwrites %s with %s", termtext.Bytes(len(cur)), termtext.Bytes(len(content)))
						p.diff = linediff.Lines(cur, content, diffContext)
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
						p.note = "the file cannot be read now; the edit will fail"
						p.diff = linediff.Lines(oldS, newS, diffContext)
					case oldS == "" || n == 0:
						p.note = "old_string is not in the file; the edit will fail"
						p.diff = linediff.Lines(oldS, newS, diffContext)
					case n > 1 && !all:
						p.note = fmt.Sprintf("old_string occurs %d times; the edit will fail", n)
						p.diff = linediff.Lines(oldS, newS, diffContext)
					default:
						after := strings.Replace(cur, oldS, newS, 1)
						if all {
							after = strings.ReplaceAll(cur, oldS, newS)
							p.note = fmt.Sprintf("replaces %d occurrences", n)
						}
						p.diff = linediff.Lines(cur, after, diffContext)
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
		p.fields = append(p.fields, argField{k, v})
	}
	return p
}

// readCurrent reads the file a write or edit names as it is now: at most
// maxPreviewFile bytes of a regular file (a FIFO or device is not opened
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
	if st.Size() > maxPreviewFile {
		return "", true, fmt.Errorf("%s, too large to compare", termtext.Bytes(int(st.Size())))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPreviewFile))
	if err != nil {
		return "", true, errors.New("cannot read it")
	}
	return string(b), true, nil
}

// question is the whole question for a, wrapped to width: every line,
// never cut.
func (m *Model) question(a *approval, width int) []string {
	if isDomain(a) {
		return m.domainQuestion(a, width)
	}
	w := max(width, 20)
	head := "? allow " + termsafe.EscapeLine(a.name)
	if a.preview == nil { // asked other than through the feed
		a.preview = makePreview(m.h.Cwd, a.name, a.args)
	}
	p := a.preview
	if p.path != "" {
		head += " " + termsafe.EscapeLine(p.path)
	}
	head += childOf(a)
	if p.note != "" {
		head += " (" + p.note + ")"
	}
	out := hang(m.st.warn.Render(head), "", "  ", w)
	for _, f := range p.fields {
		lines := strings.Split(f.value, "\n")
		if len(lines) == 1 {
			out = append(out, hang(termsafe.EscapeLine(f.key)+": "+termsafe.EscapeLine(f.value), "  ", "    ", w)...)
			continue
		}
		out = append(out, "  "+termsafe.EscapeLine(f.key)+":")
		for _, l := range lines {
			out = append(out, hang(termsafe.EscapeLine(l), "  │ ", "  │ ", w)...)
		}
	}
	for _, d := range p.diff {
		switch d.Kind {
		case linediff.Gap:
			out = append(out, m.st.dim.Render(fmt.Sprintf("    ⋯ %d unchanged lines", d.N)))
		case diffFile:
			out = append(out, hangStyled("  ", termsafe.EscapeLine(d.Text), w, m.st.warn.Render)...)
		case linediff.Del:
			out = append(out, hangStyled("    - ", termsafe.EscapeLine(d.Text), w, m.st.bad.Render)...)
		case linediff.Add:
			out = append(out, hangStyled("    + ", termsafe.EscapeLine(d.Text), w, m.st.ok.Render)...)
		default:
			out = append(out, hangStyled("      ", termsafe.EscapeLine(d.Text), w, m.st.dim.Render)...)
		}
	}
	return out
}

// hang wraps s to width with first before its first line and rest
// before the others.
func hang(s, first, rest string, width int) []string {
	lines := strings.Split(termtext.Wrap(s, max(width-len(rest), 10)), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return lines
}

func hangStyled(prefix, s string, width int, st func(...string) string) []string {
	lines := hang(s, prefix, strings.Repeat(" ", len(prefix)), width)
	for i := range lines {
		lines[i] = st(lines[i])
	}
	return lines
}

// questionRoom is how many lines of a question fit on the live screen.
func (m *Model) questionRoom() int { return max(6, m.height-8) }

// questionView is the live screen's part of the head question.
func (m *Model) questionView() []string {
	a := m.approvals[0]
	q := m.question(a, m.width)
	if room := m.questionRoom(); len(q) > room {
		q = append(q[:room-1], m.st.dim.Render(fmt.Sprintf("  … %d more lines: the whole question is printed above", len(q)-room+1)))
	}
	if !a.armed {
		return append(q, m.st.dim.Render("  …"))
	}
	if isDomain(a) {
		return append(q, termtext.Fit(domainHint, m.width))
	}
	return append(q, termtext.Fit(m.answerHint(a), m.width))
}

// front makes the head question current: it flushes the input the
// terminal holds and arms the question behind the keys already read.
// Nothing to do when the head is armed already or arming.
func (m *Model) front() tea.Cmd {
	if len(m.approvals) == 0 {
		return nil
	}
	a := m.approvals[0]
	if a.armed || a.arming {
		return nil
	}
	a.arming = true
	if q := m.question(a, m.width); len(q) > m.questionRoom() {
		m.commit(strings.Join(q, "\n"))
	}
	flush := m.opts.FlushInput
	return func() tea.Msg {
		if flush != nil {
			flush()
		}
		return armMsg{a}
	}
}

// arm arms a when it is still the head question.
func (m *Model) arm(a *approval) {
	if len(m.approvals) > 0 && m.approvals[0] == a {
		a.armed = true
	}
}
