package tui

import (
	"github.com/reinsdev/reins/internal/tui/linediff"
	md "github.com/reinsdev/reins/internal/tui/markdown"
)

// The screen's parts live in packages of their own (internal/tui/…);
// these are the names the screen's files call them by.

// markdown is the answers' renderer (internal/tui/markdown).
type markdown struct{ r *md.Renderer }

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
