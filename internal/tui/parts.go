package tui

import (
	md "github.com/reinsdev/reins/internal/tui/markdown"
)

// The screen's parts live in packages of their own (internal/tui/…);
// these are the names the screen's files call them by.

// markdown is the answers' renderer (internal/tui/markdown).
type markdown struct{ r *md.Renderer }

func newMarkdown(noColor bool) *markdown      { return &markdown{md.New(noColor)} }
func (m *markdown) render(text string) string { return m.r.Render(text) }
func (m *markdown) setWidth(w int)            { m.r.SetWidth(w) }
