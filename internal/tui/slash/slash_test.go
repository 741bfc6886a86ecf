package slash

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

type screen struct{ ran []string }

func (s *screen) note(arg string) tea.Cmd { s.ran = append(s.ran, arg); return nil }

var set = Set[*screen]{
	{Name: "help", Help: "this list", Run: (*screen).note},
	{Name: "model", Args: "[NAME]", Help: "switch the model", Idle: true, Run: (*screen).note},
	{Name: "mcp", Help: "servers", Run: (*screen).note},
}

// TestRun: a command runs with its trimmed argument; an idle one waits
// for the turn; an unknown name is said back escaped and cut.
func TestRun(t *testing.T) {
	var s screen
	if _, say := set.Run(&s, "/model   gpt x ", false); say != "" || !slices.Equal(s.ran, []string{"gpt x"}) {
		t.Errorf("ran %q, said %q", s.ran, say)
	}
	if _, say := set.Run(&s, "/model", true); say != "/model: a turn is running; wait for it or press Esc" || len(s.ran) != 1 {
		t.Errorf("while running: ran %q, said %q", s.ran, say)
	}
	if _, say := set.Run(&s, "/help", true); say != "" || len(s.ran) != 2 {
		t.Errorf("help while running: ran %q, said %q", s.ran, say)
	}
	if _, say := set.Run(&s, "/no\x1b[2J"+strings.Repeat("x", 80), false); !strings.HasPrefix(say, `unknown command /no\x1b[2Jxx`) ||
		!strings.HasSuffix(say, "… (see /help)") {
		t.Errorf("unknown: %q", say)
	}
}

func TestHelpAndComplete(t *testing.T) {
	if h := set.Help(); h != "  /help        this list\n  /model [NAME] switch the model\n  /mcp         servers\n" {
		t.Errorf("help:\n%q", h)
	}
	for _, tc := range []struct{ v, value, notice string }{
		{"/m", "/m", "/model  /mcp"},
		{"/mo", "/model ", ""},
		{"/x\x1b", "", `no command starts with /x\x1b`},
		{"/model gpt", "", ""},
		{"hello", "", ""},
	} {
		if value, notice := set.Tab(tc.v); value != tc.value || notice != tc.notice {
			t.Errorf("Tab(%q) = %q, %q", tc.v, value, notice)
		}
	}
}
