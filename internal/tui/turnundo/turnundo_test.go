package turnundo

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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
		{undo.Report{Turn: turn}, nil, `files as they were before “fix the \x1b[2J build”: nothing restored`},
		{undo.Report{Turn: turn, Left: []string{"u\x1b.txt", "b", "c", "d", "e", "f", "g"}}, nil,
			`: nothing restored; left as they are, changed outside reins's turns: u\x1b.txt, b, c, d, e, and 2 more`},
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
		e, err := session.NewEvent(typ, 0, time.Time{}, b)
		if err != nil {
			t.Fatal(err)
		}
		return e
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

// TestPlanText: /rewind N's plan lists what it restores and leaves, each
// path escaped, each list bounded; the question counts them.
func TestPlanText(t *testing.T) {
	p := undo.Plan{Turn: undo.Turn{Prompt: "do \x1b[2J it"}, Restore: []string{"a.txt"}, Leave: []string{"u\x1b.txt"}, NotRestorable: []string{"big.bin"}}
	got := PlanText(p, 3)
	for _, want := range []string{"/rewind 3 goes back to before “do \\x1b[2J it”:", "\n  restore a.txt\n", "\n  leave   u\\x1b.txt  (changed outside reins's turns", "\n  leave   big.bin  (not restorable", "forked from before prompt 3"} {
		if !strings.Contains(got, want) {
			t.Errorf("plan lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("plan not escaped:\n%s", got)
	}
	if q := Question(p, 3); !strings.Contains(q, "restore 1 file(s), leave 2? [y/N]") {
		t.Errorf("question %q", q)
	}
	var many []string
	for i := range maxPlan + 5 {
		many = append(many, fmt.Sprint("f", i))
	}
	got = PlanText(undo.Plan{Restore: many}, 1)
	if strings.Count(got, "restore f") != maxPlan || !strings.Contains(got, "restore … and 5 more") {
		t.Errorf("a long plan:\n%s", got)
	}
	if got := PlanText(undo.Plan{}, 1); !strings.Contains(got, "no file to restore") {
		t.Errorf("an empty plan:\n%s", got)
	}
}
