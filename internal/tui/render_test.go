package tui

import (
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// TestRenderingFits (issue 48 "Why" 11): in colour, a block reins says is
// styled line by line — lipgloss padded every line to the widest, so
// /help's lines wider than the terminal made each line wrap (double
// spacing in tmux); the header breaks between its parts at 80 and 120
// columns, never mid-word and never past the width; Ctrl-L repaints.
func TestRenderingFits(t *testing.T) {
	for _, width := range []int{80, 120} {
		s := newScreen(t, "", func(o *Options) { o.NoColor, o.Width = false, width })
		s.send(tea.WindowSizeMsg{Width: width, Height: 30})
		header := ansi.Strip(s.committed[0])
		for _, l := range strings.Split(header, "\n") {
			if w := ansi.StringWidth(l); w > width {
				t.Errorf("%d columns: header line %d cells wide: %q", width, w, l)
			}
		}
		if !strings.Contains(header, s.m.root) || !strings.Contains(header, "mock/echo") || !strings.HasPrefix(header, "reins · mock/echo") {
			t.Errorf("%d columns: the header breaks a word:\n%s", width, header)
		}
		if width == 120 && strings.Contains(header, "\n") {
			t.Errorf("120 columns: the header needs no second line:\n%s", header)
		}
		s.committed = nil
		s.typeText("/help")
		for _, l := range strings.Split(ansi.Strip(strings.Join(s.committed, "\n")), "\n") {
			if strings.HasSuffix(l, " ") {
				t.Errorf("%d columns: /help line padded: %q", width, l)
				break
			}
		}
		if msg := s.send(tea.KeyPressMsg{Code: 'l', Mod: tea.ModCtrl}); msg == nil || !reflect.DeepEqual(msg(), tea.ClearScreen()) {
			t.Errorf("Ctrl-L does not clear and repaint the screen")
		}
	}
}

// TestPastedPromptMarker (issue 48 "Why" 12): a prompt of several lines
// shows the › marker on its first line only.
func TestPastedPromptMarker(t *testing.T) {
	s := newScreen(t, "", nil)
	s.send(tea.PasteMsg{Content: "line one\nline two\nline three"})
	v := s.view()
	if strings.Count(v, "› ") != 1 || !strings.Contains(v, "› line one") || !strings.Contains(v, "  line two") {
		t.Errorf("editor:\n%s", v)
	}
}
