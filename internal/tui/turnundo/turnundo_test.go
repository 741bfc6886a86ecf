package turnundo

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/undo"
)

// TestRestored: what a restore says, prompt and paths escaped.
func TestRestored(t *testing.T) {
	turn := undo.Turn{Prompt: "fix\nthe \x1b[2J build"}
	for _, tc := range []struct {
		rep  undo.Report
		err  error
		want string
	}{
		{undo.Report{Turn: turn}, nil, `files as they were before “fix the \x1b[2J build”: nothing had changed`},
		{undo.Report{Turn: turn, Restored: []string{"a\x1b.go"}}, nil, `: restored a\x1b.go`},
		{undo.Report{Turn: turn, Restored: []string{"a", "b"}, NotRestored: []string{"c"}}, errors.New("disk full"),
			": restored 2 files; 1 not restorable (too large or not a regular file); stopped: disk full"},
	} {
		if got := Restored(tc.rep, tc.err); !strings.HasSuffix(got, tc.want) && !strings.HasPrefix(got, tc.want) || strings.Contains(got, "\x1b") {
			t.Errorf("Restored = %q, want %q", got, tc.want)
		}
	}
}

// TestListAndBefore: /rewind lists the latest maxList prompts numbered
// from the first; the conversation before turn N ends at its turn/start.
func TestListAndBefore(t *testing.T) {
	var turns []undo.Turn
	for i := range maxList + 3 {
		turns = append(turns, undo.Turn{Prompt: fmt.Sprint("prompt ", i+1)})
	}
	l := List(turns)
	if strings.Count(l, "\n") != maxList || strings.Contains(l, "prompt 3\n") || !strings.Contains(l, " 4  prompt 4") || !strings.HasSuffix(l, "23  prompt 23") {
		t.Errorf("list:\n%s", l)
	}
	ev := func(typ string, data any) session.Event {
		b, _ := json.Marshal(data)
		return session.Event{Type: typ, Data: b}
	}
	events := []session.Event{
		ev(session.TypeTurnStart, session.TurnStart{Turn: 1}), ev(session.TypeUserMessage, session.UserMessage{}),
		ev(session.TypeTurnStart, session.TurnStart{Turn: 2}), ev(session.TypeUserMessage, session.UserMessage{}),
	}
	if got := Before(events, 2); len(got) != 2 {
		t.Errorf("before turn 2: %d events", len(got))
	}
	if got := Before(events, 3); len(got) != 4 {
		t.Errorf("before turn 3: %d events", len(got))
	}
}
