package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/reinsdev/reins/internal/outcome"
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

// fitLine cuts a (possibly styled) line to width cells.
func fitLine(s string, width int) string {
	if width <= 0 || ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// wrap breaks text to width cells (words where it can), styled or not.
func wrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	return ansi.Wrap(s, width, " ")
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
