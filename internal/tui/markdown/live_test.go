package markdown

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestLive: the finished paragraphs show as Markdown, the one being
// written as it is; a long answer shows its tail, from a paragraph.
func TestLive(t *testing.T) {
	r := New(false)
	var l Live
	got := ansi.Strip(l.Render(r, "# Head\n\n- item\n\nstill **writ", 10, 80))
	if got != "  Head\n\n  • item\n  still **writ" {
		t.Errorf("live:\n%q", got)
	}
	long := strings.Repeat("old paragraph\n\n", 2000) + "LAST\n\nnow"
	got = ansi.Strip(l.Render(r, long, 3, 40))
	if len(got) > 8000 || !strings.HasSuffix(got, "  LAST\n  now") {
		t.Errorf("long answer: %d bytes, ends %q", len(got), got[max(len(got)-40, 0):])
	}
}
