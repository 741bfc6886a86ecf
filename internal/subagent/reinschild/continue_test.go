package reinschild_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reinsdev/reins/internal/sdkserver/sdkfake"
	"github.com/reinsdev/reins/internal/session"
	"github.com/reinsdev/reins/internal/testutil"
)

// Acceptance 1 and 4 (reins): the parent delegates to a real runtime and
// continues the child three times: on the kept runtime (the same SDK
// session), on the kept runtime again, then — after its idle teardown left
// no process behind — in a new runtime that loads the session from the
// child's log. Each time the child's request holds its earlier turns.
func TestContinueReinsChild(t *testing.T) {
	p := newParent(t, `
replies:
  - match: delegate-now
    toolCalls: [{id: p1, name: subagent, arguments: {description: ask, agent: helper, prompt: CHILD-ONE}}]
  - {match: CHILD-ONE, text: one done}
  - match: one done
    toolCalls: [{id: p2, name: subagent, arguments: {description: ask on, prompt: CHILD-TWO, continue: $CHILD}}]
  - {match: CHILD-TWO, text: two done}
  - {match: two done, text: parent one}
  - match: go-kept
    toolCalls: [{id: p3, name: subagent, arguments: {description: ask more, prompt: CHILD-THREE, continue: $CHILD}}]
  - {match: CHILD-THREE, text: three done}
  - {match: three done, text: parent two}
  - match: go-cold
    toolCalls: [{id: p4, name: subagent, arguments: {description: ask again, prompt: CHILD-FOUR, continue: $CHILD}}]
  - {match: CHILD-FOUR, text: four done}
  - {match: four done, text: parent three}
`, map[string]string{"helper": realChildAgent})
	m := p.s.Subagents
	m.Limits.IdleTimeout = time.Hour
	if res := p.s.Run(context.Background(), "delegate-now"); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn 1 %+v", res)
	}
	results := testutil.Decoded[session.ToolResult](t, p.events(t), session.TypeToolResult)
	if len(results) != 2 {
		t.Fatalf("results %+v", results)
	}
	id := results[0].Content[strings.LastIndex(results[0].Content, "child: ")+len("child: "):]
	if len(sdkfake.Leftovers(p.mark)) == 0 || m.Kept() != 1 {
		t.Fatalf("%d runtimes alive, %d kept: the idle child's runtime is kept", len(sdkfake.Leftovers(p.mark)), m.Kept())
	}
	// The next continuation parks the runtime for 1ms only.
	m.Limits.IdleTimeout = time.Millisecond
	if res := p.s.Run(context.Background(), "go-kept\nchild: "+id); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn 2 %+v", res)
	}
	deadline := time.Now().Add(30 * time.Second)
	for m.Kept() != 0 || len(sdkfake.Leftovers(p.mark)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after the idle timeout: %d kept, processes %v", m.Kept(), sdkfake.Leftovers(p.mark))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if res := p.s.Run(context.Background(), "go-cold\nchild: "+id); res.Reason != session.ReasonCompleted {
		t.Fatalf("turn 3 %+v", res)
	}
	events := p.events(t)
	results = testutil.Decoded[session.ToolResult](t, events, session.TypeToolResult)
	for i, want := range []string{"one done", "two done", "three done", "four done"} {
		if results[i].Content != want+"\nchild: "+id || results[i].IsError {
			t.Errorf("result %d = %q, want %q and the child line", i, results[i].Content, want)
		}
	}
	starts := testutil.Decoded[session.SubagentStart](t, events, session.TypeSubagentStart)
	ends := testutil.Decoded[session.SubagentEnd](t, events, session.TypeSubagentEnd)
	if len(starts) != 4 || len(ends) != 4 {
		t.Fatalf("%d starts %d ends", len(starts), len(ends))
	}
	for i := 1; i < 4; i++ {
		if starts[i].Continues != id || ends[i].Continues != id || starts[i].ChildSession != starts[0].ChildSession {
			t.Errorf("run %d: %+v %+v", i, starts[i], ends[i])
		}
	}
	var child []string
	for _, r := range p.srv.Requests() {
		if strings.Contains(string(r.Body), "You are a careful helper.") {
			child = append(child, string(r.Body))
		}
	}
	if len(child) != 4 {
		t.Fatalf("%d child requests, want 4", len(child))
	}
	for i, texts := range [][]string{
		{"CHILD-ONE", "one done", "CHILD-TWO"},
		{"CHILD-ONE", "one done", "CHILD-TWO", "two done", "CHILD-THREE"},
		{"CHILD-ONE", "one done", "CHILD-TWO", "two done", "CHILD-THREE", "three done", "CHILD-FOUR"},
	} {
		at := 0
		for _, s := range texts {
			j := strings.Index(child[i+1][at:], s)
			if j < 0 {
				t.Errorf("child request %d lacks %q in its history", i+2, s)
				break
			}
			at += j + len(s)
		}
	}
}
