package tui

import (
	"charm.land/lipgloss/v2"

	"github.com/reinsdev/reins/internal/outcome"
	"github.com/reinsdev/reins/internal/tui/childtree"
	"github.com/reinsdev/reins/internal/tui/toolsummary"
)

// styles are the screen's few colours; with NO_COLOR every one renders
// its text unchanged.
type styles struct {
	dim, bold, running, ok, bad, warn, user lipgloss.Style
}

func newStyles(noColor bool) styles {
	if noColor {
		p := lipgloss.NewStyle()
		return styles{p, p, p, p, p, p, p}
	}
	return styles{
		dim:     lipgloss.NewStyle().Faint(true),
		bold:    lipgloss.NewStyle().Bold(true),
		running: lipgloss.NewStyle().Foreground(lipgloss.Color("4")),
		ok:      lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		bad:     lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		warn:    lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		user:    lipgloss.NewStyle().Foreground(lipgloss.Color("6")).Bold(true),
	}
}

// stop colours a stop reason: green completed, red error, yellow others.
func (st styles) stop(reason string) string {
	switch reason {
	case outcome.StopCompleted:
		return st.ok.Render(reason)
	case outcome.StopError:
		return st.bad.Render(reason)
	}
	return st.warn.Render(reason)
}

// tree is what the tree of children draws with.
func (st styles) tree() childtree.Styles {
	return childtree.Styles{Dim: st.dim, Running: st.running, Stop: st.stop}
}

// ToolSummary is toolsummary.Of; `reins run`'s progress lines use it too.
func ToolSummary(args string) string { return toolsummary.Of(args) }

// MaxSummary bounds a tool summary (toolsummary.Max).
const MaxSummary = toolsummary.Max
