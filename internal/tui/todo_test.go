package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/todo"
)

// todoCall feeds a settled todo call of session id with list l.
func (s *screen) todoCall(id, callID string, l todo.List, isError bool) {
	b, _ := json.Marshal(map[string]any{"items": l})
	s.feedItems(
		s.ev(id, session.TypeToolCall, session.ToolCall{CallID: callID, Name: todo.Name, Arguments: string(b)}),
		s.ev(id, session.TypeToolResult, session.ToolResult{CallID: callID, Content: "ok", IsError: isError}),
	)
}

func list(n, done int) todo.List {
	var l todo.List
	for i := range n {
		st := todo.Pending
		switch {
		case i < done:
			st = todo.Done
		case i == done:
			st = todo.InProgress
		}
		l = append(l, todo.Item{Text: fmt.Sprintf("item %d", i+1), State: st})
	}
	return l
}

// TestTodoPinned: the latest accepted list shows above the prompt,
// escaped and bounded; a refused call, another session's call and a
// failed one change nothing.
func TestTodoPinned(t *testing.T) {
	s := newScreen(t, "", nil)
	root := s.m.root
	if v := s.view(); strings.Contains(v, "todo ") {
		t.Fatalf("a list before any call:\n%s", v)
	}
	l := list(3, 1)
	l[2].Text = "evil \x1b[2J text"
	s.todoCall(root, "c1", l, false)
	v := s.view()
	for _, want := range []string{"todo 1/3 done", "✓ item 1", "◐ item 2", `○ evil \x1b[2J text`} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(s.m.View().Content, "\x1b[2J") {
		t.Error("an item's control sequence reached the terminal")
	}
	// Long lists: a window from one before the first unfinished item.
	s.todoCall(root, "c2", list(20, 10), false)
	v = s.view()
	if !strings.Contains(v, "todo 10/20 done") || !strings.Contains(v, "✓ item 10") || !strings.Contains(v, "◐ item 11") || strings.Contains(v, "item 9\n") || !strings.Contains(v, "… 14 more") {
		t.Errorf("window of a long list:\n%s", v)
	}
	if n := strings.Count(v, "item "); n != 6 {
		t.Errorf("%d item lines, want 6:\n%s", n, v)
	}
	s.todoCall(root, "c3", list(20, 20), false)
	if v = s.view(); !strings.Contains(v, "✓ item 20") || !strings.Contains(v, "todo 20/20 done") {
		t.Errorf("all done shows the last ones:\n%s", v)
	}
	// A failed call, a malformed list and another session's list are not pinned.
	s.todoCall(root, "c4", list(1, 0), true)
	s.todoCall("other-session", "c5", list(1, 0), false)
	s.feedItems(
		s.ev(root, session.TypeToolCall, session.ToolCall{CallID: "c6", Name: todo.Name, Arguments: `{"items":[{"text":"x","state":"bogus"}]}`}),
		s.ev(root, session.TypeToolResult, session.ToolResult{CallID: "c6", Content: "ok"}),
	)
	if v = s.view(); !strings.Contains(v, "todo 20/20 done") {
		t.Errorf("the list changed:\n%s", v)
	}
}
