package tui

import (
	"strings"

	"charm.land/glamour/v2"
)

// markdown renders finished answers; the renderer is rebuilt when the
// width changes. Its input is escaped first (termsafe), so every escape
// sequence in its output is glamour's own styling.
type markdown struct {
	noColor bool
	width   int
	r       *glamour.TermRenderer
}

func newMarkdown(noColor bool) *markdown { return &markdown{noColor: noColor, width: 80} }

func (md *markdown) setWidth(w int) {
	if w != md.width {
		md.width, md.r = w, nil
	}
}

// render is text as Markdown, or text itself if it cannot be rendered.
func (md *markdown) render(text string) string {
	if md.r == nil {
		style := "dark"
		if md.noColor {
			style = "notty"
		}
		r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(style), glamour.WithWordWrap(max(md.width-4, 20)))
		if err != nil {
			return text
		}
		md.r = r
	}
	out, err := md.r.Render(text)
	if err != nil {
		return text
	}
	return strings.Trim(out, "\n")
}
