package pichild_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/harness"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/subagent"
	"github.com/reinsdev/reins/internal/testutil"
)

// Acceptance 1 (pi): the parent delegates to the real pi, reads
// child: <id> and continues the child twice; pi runs on its own session
// file (--session), so each follow-up request holds the earlier turns.
func TestRealPiContinue(t *testing.T) {
	h, m, srv, home := piFixture(t, `
replies:
  - match: delegate-cont
    toolCalls: [{id: p1, name: subagent, arguments: {description: count, prompt: PI-ONE, agent: piscout}}]
  - {match: PI-ONE, text: pi one done}
  - match: pi one done
    toolCalls: [{id: p2, name: subagent, arguments: {description: count on, prompt: PI-TWO, continue: $CHILD}}]
  - {match: PI-TWO, text: pi two done}
  - match: pi two done
    toolCalls: [{id: p3, name: subagent, arguments: {description: count more, prompt: PI-THREE, continue: $CHILD}}]
  - {match: PI-THREE, text: pi three done}
  - {match: pi three done, text: parent done}
`)
	s, err := h.NewSession(harness.SessionOptions{Model: m, System: "parent system prompt"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if res := s.Run(ctx, "delegate-cont"); res.Reason != session.ReasonCompleted {
		s.Log.Flush()
		for _, r := range testutil.Decoded[session.ToolResult](t, loadEvents(t, s.Log.Path()), session.TypeToolResult) {
			t.Logf("tool result %q", r.Content)
		}
		t.Fatalf("parent turn %+v %+v", res, res.Failure)
	}
	s.Log.Flush()
	events := loadEvents(t, s.Log.Path())
	results := testutil.Decoded[session.ToolResult](t, events, session.TypeToolResult)
	if len(results) != 3 {
		t.Fatalf("results %+v", results)
	}
	id := results[0].Content[strings.LastIndex(results[0].Content, "child: ")+len("child: "):]
	if id != subagent.ChildID(s.Log.Header().ID, "run-1") {
		t.Fatalf("child id %q", id)
	}
	for i, want := range []string{"pi one done", "pi two done", "pi three done"} {
		if results[i].Content != want+"\nchild: "+id || results[i].IsError {
			t.Errorf("result %d = %q, want %q and the child line", i, results[i].Content, want)
		}
	}
	ends := testutil.Decoded[session.SubagentEnd](t, events, session.TypeSubagentEnd)
	if len(ends) != 3 || ends[0].Continues != "" || ends[1].Continues != id || ends[2].Continues != id {
		t.Errorf("subagent/end %+v", ends)
	}
	var child []string
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Body), "PI-SYSTEM-MARK") {
			child = append(child, string(r.Body))
		}
	}
	if len(child) != 3 {
		t.Fatalf("%d pi requests, want 3", len(child))
	}
	for i, texts := range [][]string{{"PI-ONE", "pi one done", "PI-TWO"}, {"PI-ONE", "pi one done", "PI-TWO", "pi two done", "PI-THREE"}} {
		at := 0
		for _, x := range texts {
			j := strings.Index(child[i+1][at:], x)
			if j < 0 {
				t.Errorf("pi request %d lacks %q in its history", i+2, x)
				break
			}
			at += j + len(x)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "sessions", s.Log.Header().ID, "children", "pi-"+id, "session.jsonl")); err != nil {
		t.Errorf("pi's session file: %v", err)
	}
}

func loadEvents(t *testing.T, path string) []session.Event {
	t.Helper()
	ld, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return ld.Events
}
