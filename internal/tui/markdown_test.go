package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		noColor  bool
		want     string
	}{
		{"heading", "# Title #", false, "  Title"},
		{"heading no colour keeps its marker", "## Title", true, "  ## Title"},
		{"bullets", "- a\n* b\n  - nested", false, "  • a\n  • b\n    • nested"},
		{"numbered", "1. one\n2) two", false, "  1. one\n  2) two"},
		{"quote", "> quoted *text*", false, "  │ quoted text"},
		{"fence", "```go\nx := 1\n```\nafter", false, "    x := 1\n  after"},
		{"fence no colour keeps its markers", "```\nx\n```", true, "  ```\n    x\n  ```"},
		{"inline", "**b** and *i* and `c *not* styled`", false, "  b and i and c *not* styled"},
		{"inline no colour", "**b** and `c`", true, "  **b** and `c`"},
		{"snake case and lone stars", "snake_case_name and a * b * c", false, "  snake_case_name and a * b * c"},
		{"rule", "---", false, "  " + strings.Repeat("─", 40)},
		{"paragraph joins lines", "one\ntwo\n\n\n\nthree", false, "  one two\n\n  three"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := newMarkdown(tc.noColor)
			got := md.render(tc.in)
			if tc.noColor && got != ansi.Strip(got) {
				t.Errorf("styling with NO_COLOR: %q", got)
			}
			if s := ansi.Strip(got); s != tc.want {
				t.Errorf("render(%q) = %q, want %q", tc.in, s, tc.want)
			}
		})
	}
}

// TestMarkdownWraps: every line fits the width, prose and list items.
func TestMarkdownWraps(t *testing.T) {
	md := newMarkdown(false)
	md.setWidth(30)
	in := strings.Repeat("word ", 40) + "\n\n- " + strings.Repeat("item ", 30) + "\n\n```\n" + strings.Repeat("c", 100) + "\n```"
	for _, l := range strings.Split(md.render(in), "\n") {
		if w := ansi.StringWidth(l); w > 30 {
			t.Errorf("line of %d cells at 30: %q", w, ansi.Strip(l))
		}
	}
}
