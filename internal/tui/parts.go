package tui

import (
	"time"

	"charm.land/bubbles/v2/textarea"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/tui/childtree"
	"github.com/reinsdev/reins/internal/tui/editor"
	"github.com/reinsdev/reins/internal/tui/linediff"
	md "github.com/reinsdev/reins/internal/tui/markdown"
	"github.com/reinsdev/reins/internal/tui/todopin"
)

// The screen's parts live in packages of their own (internal/tui/…);
// these are the names the screen's files call them by.

// newEditor is the prompt editor (internal/tui/editor).
func newEditor(noColor bool) textarea.Model { return editor.New(noColor, maxPrompt) }

// markdown is the answers' renderer (internal/tui/markdown).
type markdown struct{ r *md.Renderer }

// liveMarkdown is the streaming answer's (liveAnswer).
type liveMarkdown = md.Live

func newMarkdown(noColor bool) *markdown      { return &markdown{md.New(noColor)} }
func (m *markdown) render(text string) string { return m.r.Render(text) }
func (m *markdown) setWidth(w int)            { m.r.SetWidth(w) }

// A diff of a question's preview (internal/tui/linediff); diffFile
// (approve_patch.go) heads each file's lines.
type diffKind = linediff.Kind

const (
	diffSame = linediff.Same
	diffDel  = linediff.Del
	diffAdd  = linediff.Add
	diffGap  = linediff.Gap
)

// diffLine is a linediff.Line, or a diffFile header.
type diffLine struct {
	kind diffKind
	text string
	n    int
}

func lineDiff(before, after string, ctx int) []diffLine {
	d := linediff.Lines(before, after, ctx)
	out := make([]diffLine, len(d))
	for i, l := range d {
		out[i] = diffLine{kind: l.Kind, text: l.Text, n: l.N}
	}
	return out
}

// tree is the live tree of children (internal/tui/childtree).
type tree struct{ *childtree.Tree }

type node = childtree.Node

func newTree() *tree                                      { return &tree{childtree.New()} }
func (t *tree) known(hd session.Header, root string) bool { return t.Known(hd, root) }
func (t *tree) event(hd session.Header, e session.Event)  { t.Event(hd, e) }
func (t *tree) running() bool                             { return t.Running() }
func (t *tree) empty() bool                               { return t.Empty() }
func (t *tree) jobs() []*node                             { return t.Jobs() }
func (t *tree) render(root string, now time.Time, width int, st styles) []string {
	return t.Render(root, now, width, st.tree())
}

// pinnedTodo is the todo list above the prompt (internal/tui/todopin).
type pinnedTodo = todopin.Pin

func (m *Model) todoResult(c *call, r session.ToolResult) {
	m.todo.Take(m.root, c.name, c.args, r.IsError)
}
