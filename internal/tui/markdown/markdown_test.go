package markdown

import (
	"fmt"
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
		{"paragraph keeps its lines", "one\ntwo\n\n\n\nthree", false, "  one\n  two\n\n  three"},
		{"hard breaks lose their markers", "one  \ntwo\\\nthree", false, "  one\n  two\n  three"},
		{"table", "| a | bb |\n|---|---:|\n| 1 | 2 |\n| long cell | 3 |", false,
			"  a         │ bb\n  ──────────┼───\n  1         │  2\n  long cell │  3"},
		{"table no colour", "a | b\n--|--\nx | `y|z`", true, "  a | b\n  - | -----\n  x | `y|z`"},
		{"not a table", "a | b\nnext line", false, "  a | b\n  next line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := New(tc.noColor)
			got := md.Render(tc.in)
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
	md := New(false)
	md.SetWidth(30)
	in := strings.Repeat("word ", 40) + "\n\n- " + strings.Repeat("item ", 30) + "\n\n```\n" + strings.Repeat("c", 100) + "\n```"
	for _, l := range strings.Split(md.Render(in), "\n") {
		if w := ansi.StringWidth(l); w > 30 {
			t.Errorf("line of %d cells at 30: %q", w, ansi.Strip(l))
		}
	}
}

// TestMarkdownTable (issue 30 item 5): a GFM table keeps its columns lined
// up at 40, 80 and 200 columns: every row has its separators at the same
// cells, no line passes the width, and every cell's words are there.
func TestMarkdownTable(t *testing.T) {
	in := "Here:\n\n| tool | what it does | needs |\n|:---|:---|:---:|\n" +
		"| `read` | reads a file, with line numbers and an offset for long files | read-only |\n" +
		"| **bash** | runs a command in the sandbox, confined to the workspace | workspace-write |\n" +
		"| webfetch | fetches a URL as text | network |\n\nThat is all."
	for _, width := range []int{40, 80, 200} {
		md := New(false)
		md.SetWidth(width)
		out := ansi.Strip(md.Render(in))
		var cols []int
		rows := 0
		for _, l := range strings.Split(out, "\n") {
			if ansi.StringWidth(l) > width {
				t.Errorf("width %d: line of %d cells: %q", width, ansi.StringWidth(l), l)
			}
			if !strings.Contains(l, "│") && !strings.Contains(l, "┼") {
				continue
			}
			rows++
			var at []int
			for i, r := range []rune(l) {
				if r == '│' || r == '┼' {
					at = append(at, i)
				}
			}
			if cols == nil {
				cols = at
			} else if fmt.Sprint(at) != fmt.Sprint(cols) {
				t.Errorf("width %d: separators at %v, the header's at %v:\n%s", width, at, cols, out)
			}
		}
		if len(cols) != 2 || rows < 5 {
			t.Errorf("width %d: %d table lines, separators %v:\n%s", width, rows, cols, out)
		}
		flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ", "─", " ", "┼", " ").Replace(out)), " ")
		for _, w := range []string{"workspace", "offset", "confined", "That is all."} {
			if !strings.Contains(flat, w) {
				t.Errorf("width %d: %q missing:\n%s", width, w, out)
			}
		}
		if width == 200 && strings.Count(out, "\n") != 8 {
			t.Errorf("width 200: the table should need no wrapping:\n%s", out)
		}
	}
}
