package tui

import (
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/tui/childtree"
	"github.com/reinsdev/reins/internal/tui/toolsummary"
)

// styles are the screen's few colours; with NO_COLOR every one renders
// its text unchanged.
type styles struct {
	dim, bold, running, ok, bad, warn, user lineStyle
}

// lineStyle styles text line by line. lipgloss's own Render pads every
// line of a block to its widest, so a block with one line wider than the
// terminal had every line wrap — /help and /model came out double-spaced
// (issue 48) — and the renderer's count of lines went wrong.
type lineStyle struct{ lipgloss.Style }

// Render styles each line of strs (joined by spaces, as lipgloss does)
// on its own, unpadded.
func (s lineStyle) Render(strs ...string) string {
	lines := strings.Split(strings.Join(strs, " "), "\n")
	for i, l := range lines {
		lines[i] = s.Style.Render(l)
	}
	return strings.Join(lines, "\n")
}

func newStyles(noColor bool) styles {
	if noColor {
		p := lineStyle{lipgloss.NewStyle()}
		return styles{p, p, p, p, p, p, p}
	}
	st := func(s lipgloss.Style) lineStyle { return lineStyle{s} }
	return styles{
		dim:     st(lipgloss.NewStyle().Faint(true)),
		bold:    st(lipgloss.NewStyle().Bold(true)),
		running: st(lipgloss.NewStyle().Foreground(lipgloss.Color("4"))),
		ok:      st(lipgloss.NewStyle().Foreground(lipgloss.Color("2"))),
		bad:     st(lipgloss.NewStyle().Foreground(lipgloss.Color("1"))),
		warn:    st(lipgloss.NewStyle().Foreground(lipgloss.Color("3"))),
		user:    st(lipgloss.NewStyle().Foreground(lipgloss.Color("6")).Bold(true)),
	}
}

// stop colours a stop reason: green completed, red error, yellow others.
func (st styles) stop(reason string) string {
	switch outcome.StopReason(reason) {
	case outcome.StopCompleted:
		return st.ok.Render(reason)
	case outcome.StopError:
		return st.bad.Render(reason)
	}
	return st.warn.Render(reason)
}

// tree is what the tree of children draws with.
func (st styles) tree() childtree.Styles {
	return childtree.Styles{Dim: st.dim.Style, Running: st.running.Style, Stop: st.stop}
}

// ToolSummary is toolsummary.Of; `reins run`'s progress lines use it too.
func ToolSummary(args string) string { return toolsummary.Of(args) }

// MaxSummary bounds a tool summary (toolsummary.Max).
const MaxSummary = toolsummary.Max
